"""The public step on the engine (``loss_and_grads`` then ``optimizer.step``), as the
README teaches it: the engine's own loop's numbers, each call's gradients its own.

Its speed is measured by ``benchmarks/bench_public_step.py``, not asserted here; these
tests pin what the shortcuts of that path must keep."""

import numpy as np
import pytest

import scratchnet as sn
from scratchnet.fast import FlatParams


def _batches(steps, dtype):
    task, rng = sn.tasks.separated(), np.random.default_rng(5)
    return [tuple(np.asarray(a) for a in task.sample(64, rng)) for _ in range(steps)]


def test_each_call_returns_gradients_of_its_own():
    """The engine writes into a buffer of its own, then hands out a new vector:
    a later call never changes gradients returned earlier."""
    model = sn.fast.MLP([1, 8, 2], rng=0)
    reference = sn.MLP([1, 8, 2], rng=0)
    (x1, c1), (x2, c2) = _batches(2, np.float64)
    _, first = model.loss_and_grads(x1, c1)
    kept = {name: first[name].copy() for name in first}
    _, second = model.loss_and_grads(x2, c2)
    assert not np.shares_memory(first.flat, second.flat)
    assert not np.shares_memory(first.flat, model.params.flat)
    _, expected = reference.loss_and_grads(x1, c1)  # the chapter, independently
    for name in expected:
        np.testing.assert_array_equal(first[name], kept[name])
        np.testing.assert_allclose(first[name], expected[name], rtol=1e-12, atol=1e-15)
        assert np.shares_memory(first[name], first.flat)  # views, made when asked


def test_flat_params_views_made_on_first_use_are_views_of_flat():
    flat = np.arange(7.0)
    params = FlatParams(flat, (("W", (2, 3)), ("b", (1,))))
    flat[6] = 9.0  # before any view is made
    assert params["b"][0] == 9.0
    params["W"] = np.ones((2, 3))
    np.testing.assert_array_equal(flat, [1, 1, 1, 1, 1, 1, 9])
    assert list(params) == ["W", "b"] and len(params) == 2


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_public_step_ends_where_the_engine_loop_ends_to_the_last_bit(dtype):
    """300 steps of Adam written as the README's two calls, and the same batches
    through ``sn.fast.train``: the same parameters and losses, bit for bit."""
    batches = [(x.astype(dtype), c) for x, c in _batches(300, dtype)]
    public = sn.fast.MLP([1, 64, 2], rng=0, dtype=dtype, init="torch")
    engine = sn.fast.MLP([1, 64, 2], rng=0, dtype=dtype, init="torch")
    optimizer = sn.Adam(public.params, 1e-2)
    losses = []
    for x, c in batches:
        loss, grads = public.loss_and_grads(x, c)
        optimizer.step(grads)
        losses.append(loss)
    recorded = sn.fast.train(engine, iter(batches), steps=len(batches),
                             optimizer=sn.Adam(engine.params, 1e-2))
    np.testing.assert_array_equal(public.params.flat, engine.params.flat)
    np.testing.assert_array_equal(losses, recorded)
    assert np.mean(losses[-50:]) < np.mean(losses[:50])  # it did train
