"""Checks for the network, the optimisers and the training step, up to the posterior.

The forward and backward passes are compared with the chapter's
:class:`~scratchnet.mlp.TwoLayerMLP` holding the same parameters, and the
gradients with central finite differences; an update rule is compared with the
library's over a few steps (and recognised when it climbs the loss or leaves
the parameters as they were).  Then the student's code trains a network on the
``separated`` task of :mod:`scratchnet.tasks`, and the check passes when its
expected KL divergence to the exact posterior is below :data:`KL_THRESHOLD`.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import tasks
from ..mlp import TwoLayerMLP
from ..optim import SGD, Adam
from ..train import train_step
from .probes import Failed, expect_close, fd_gradient, show, unchanged

__all__ = ["CHECKS", "KL_THRESHOLD", "TRAIN_STEPS", "train_to_posterior"]

KL_THRESHOLD = 0.02   # nats: the reference reaches at most 0.0041 over 12 seeds
TRAIN_STEPS = 300     # batches of 64 from tasks.separated(), SGD with lr 0.3


def train_to_posterior(model_class: Any = TwoLayerMLP, step: Callable = train_step,
                       seed: int = 0) -> float:
    """Train a 1-16-2 network on ``tasks.separated()`` and measure its expected KL.

    Parameters
    ----------
    model_class : class, default :class:`scratchnet.TwoLayerMLP`
        Built as ``model_class(1, 16, 2, rng=rng)``.
    step : callable, default :func:`scratchnet.train_step`
        ``step(model, optimizer, x, targets)``, called :data:`TRAIN_STEPS` times
        on fresh batches of 64, with ``SGD(model.params, lr=0.3)``.
    seed : int, default 0

    Returns
    -------
    float
        The expected KL divergence from the exact posterior, in nats.

    Examples
    --------
    >>> train_to_posterior(seed=0) < KL_THRESHOLD
    True
    """
    task = tasks.separated()
    rng = np.random.default_rng(seed)
    model = model_class(1, 16, 2, rng=rng)
    optimizer = SGD(model.params, lr=0.3)
    for _ in range(TRAIN_STEPS):
        x, c = task.sample(64, rng)
        step(model, optimizer, x, c)
    return float(task.expected_kl(model))


def _posterior_check(model_class: Any = TwoLayerMLP,
                     step: Callable = train_step) -> None:
    kl = train_to_posterior(model_class, step)
    if not kl < KL_THRESHOLD:
        raise Failed(f"after {TRAIN_STEPS} steps of SGD on tasks.separated() (seed 0) "
                     f"the expected KL to the posterior is {kl:.4g} nats; it must be "
                     f"below {KL_THRESHOLD} (the reference reaches 0.001)",
                     "the network does not learn the posterior: check the gradients "
                     "first (they are what training follows)")


def _models(cls, sizes, activation="relu", seed=0, dtype=np.float64):
    """The student's network and the chapter's, with the same random parameters
    (biases too: they start at 0, where a missing bias would pass unseen)."""
    ref = TwoLayerMLP(*sizes, activation=activation, rng=seed, dtype=dtype)
    model = cls(*sizes, activation=activation, rng=seed, dtype=dtype)
    rng = np.random.default_rng(seed + 100)
    for name, value in ref.params.items():
        value[...] = 0.5 * rng.standard_normal(value.shape)
        model.params[name][...] = value
    return model, ref


def _batch(sizes, n=4, seed=1):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, sizes[0])), rng.standard_normal((n, sizes[2]))


def _forward_checks():
    def compare(cls, sizes, label, activation="relu", dtype=None, n=4):
        model, ref = _models(cls, sizes, activation, dtype=dtype or np.float64)
        x, _ = _batch(sizes, n)
        x = x.astype(dtype or np.float64)
        copy = x.copy()
        got = model.forward(x)
        unchanged([x], [copy], ["x"], "forward(x)")
        expect_close(got, ref.forward(x), f"forward(x) of a {label} network, "
                     f"x = {show(x)}", rtol=1e-5, atol=1e-6, dtype=dtype)

    return [("values", lambda c: compare(c, (3, 5, 2), "3-5-2 ReLU")),
            ("tanh", lambda c: compare(c, (3, 5, 2), "3-5-2 tanh", "tanh")),
            ("batch of one", lambda c: compare(c, (3, 5, 2), "3-5-2", n=1)),
            ("float32 kept",
             lambda c: compare(c, (3, 5, 2), "float32", dtype=np.float32))]


def _backward_checks():
    def grads_of(cls, sizes, activation="relu"):
        model, ref = _models(cls, sizes, activation)
        x, dlogits = _batch(sizes)
        model.forward(x)
        copy = dlogits.copy()
        got = model.backward(dlogits)
        unchanged([dlogits], [copy], ["dlogits"], "backward(dlogits)")
        if not isinstance(got, dict) or set(got) != {"W1", "b1", "W2", "b2"}:
            raise Failed(f"backward returned {show(got)}", "return a dict with the "
                         "keys 'W1', 'b1', 'W2', 'b2'")
        return got, ref, x, dlogits

    def compare(cls, sizes, label, activation="relu"):
        got, ref, x, dlogits = grads_of(cls, sizes, activation)
        ref.forward(x)
        for name, want in ref.backward(dlogits).items():
            expect_close(got[name], want, f"grads[{name!r}] of a {label} network, "
                         f"x = {show(x)}, dlogits = {show(dlogits)}", n=len(x))

    def finite_differences(cls):
        got, ref, x, dlogits = grads_of(cls, (2, 3, 2))
        for name in ("W1", "b1"):
            numeric = fd_gradient(lambda: float((ref.forward(x) * dlogits).sum()),
                                  ref.params[name])
            expect_close(got[name], numeric, f"grads[{name!r}] against central "
                         "differences of sum(logits * dlogits)", rtol=1e-5, atol=1e-7)

    return [("values", lambda c: compare(c, (3, 5, 2), "3-5-2 ReLU")),
            ("square weights", lambda c: compare(c, (4, 4, 4), "4-4-4 (square W)")),
            ("tanh", lambda c: compare(c, (3, 5, 2), "3-5-2 tanh", "tanh")),
            ("finite differences", finite_differences),
            ("trains to the posterior", lambda c: _posterior_check(model_class=c))]


def _update_hint(before, got, want):
    if np.allclose(got, before):
        return ("the parameter did not change: update it in place (param -= ..., "
                "param[...] = ...); param = param - ... makes a new array")
    if np.allclose(got - before, -(want - before), rtol=1e-4):
        return ("the update climbs the loss: a step goes against the gradient, "
                "param -= lr * (...)")
    return ""


def _optimizer_checks(name, ref_class, options):
    def run(cls, steps, dtype=np.float64):
        rng = np.random.default_rng(3)
        w0 = rng.standard_normal(5).astype(dtype)
        grads = [rng.standard_normal(5).astype(dtype) for _ in range(steps)]
        mine, theirs = {"w": w0.copy()}, {"w": w0.copy()}
        opt, ref = cls(mine, **options), ref_class(theirs, **options)
        for t, g in enumerate(grads, 1):
            copy, before = g.copy(), mine["w"].copy()
            opt.step({"w": g})
            ref.step({"w": g.copy()})
            unchanged([g], [copy], ["grad"], f"{name}(param, grad, state)")
            expect_close(mine["w"], theirs["w"], f"the parameter after step {t} of "
                         f"{name} with {options}, w0 = {show(w0)}, grads = "
                         f"{show(grads[:t])}", rtol=1e-5, atol=1e-7, dtype=dtype,
                         hint=_update_hint(before, mine["w"], theirs["w"]))

    def descends(cls):
        target = np.array([1.0, -2.0, 0.5])
        params = {"w": np.zeros(3)}
        opt = cls(params, **options)
        losses = []
        for _ in range(5):
            losses.append(0.5 * float(((params["w"] - target) ** 2).sum()))
            opt.step({"w": params["w"] - target})
        if not losses[-1] < losses[0]:
            raise Failed(f"five steps of {name} on 0.5 ||w - a||^2 from w = 0 took the "
                         f"loss from {losses[0]:.4g} to {losses[-1]:.4g}",
                         "the update climbs the loss: a step goes against the gradient")

    return [("one step", lambda c: run(c, 1)), ("five steps", lambda c: run(c, 5)),
            ("descends a loss", descends),
            ("float32 kept", lambda c: run(c, 2, np.float32))]


def _train_step_checks():
    def one_step(f, optimizer=SGD, options=None):
        options = options or {"lr": 0.1}
        model, ref = _models(TwoLayerMLP, (1, 8, 2))
        x, c = np.array([[0.0], [3.0], [1.0]]), np.array([0, 1, 1])
        before = ref.params["W1"].copy()
        got = f(model, optimizer(model.params, **options), x, c)
        want = train_step(ref, optimizer(ref.params, **options), x, c)
        expect_close(got, want, f"the loss train_step returns for x = {show(x)}, "
                     f"targets = {c} (before the update)")
        for name in ref.params:
            expect_close(model.params[name], ref.params[name], f"params[{name!r}] "
                         f"after one train_step with {optimizer.__name__}({options})",
                         hint=_update_hint(before, model.params["W1"], ref.params["W1"])
                         if name == "W1" else "")

    return [("one step", one_step),
            ("Adam", lambda f: one_step(f, Adam, {"lr": 0.01})),
            ("trains to the posterior", lambda f: _posterior_check(step=f))]


CHECKS = {
    "TwoLayerMLP.forward": _forward_checks(),
    "TwoLayerMLP.backward": _backward_checks(),
    "SGD.update": _optimizer_checks("SGD.update", SGD, {"lr": 0.1}),
    "Adam.update": _optimizer_checks("Adam.update", Adam,
                                     {"lr": 0.01, "betas": (0.9, 0.99), "eps": 1e-8}),
    "train_step": _train_step_checks(),
}
