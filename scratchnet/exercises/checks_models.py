"""Checks for the network, the optimisers and the training step, up to the posterior.

The forward and backward passes are compared with the chapter's
:class:`~scratchnet.mlp.TwoLayerMLP` holding the same parameters, and the
gradients with central finite differences; an update rule is compared with the
library's over a few steps (and recognised when it climbs the loss or leaves
the parameters as they were).  Then the student's code trains a network, in
the child, on the ``unequal-variance`` task of :mod:`scratchnet.tasks`, whose
posterior logit is a parabola in x (a network without its activation is
linear in x and cannot follow it), from the chapter's initial parameters;
the child returns the trained parameters, as arrays, and the grader computes
the network's outputs with the chapter's forward and their expected KL
divergence to the exact posterior, which must be below :data:`KL_THRESHOLD`.
No check calls a method of an object that lives in the child to judge it.
The checks see the student's side through the
interface of :class:`~scratchnet.exercises.sides.Objects`: ``s.new``,
``s.method``, ``s.function``, ``s.get``, ``s.assign``.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import tasks
from ..mlp import TwoLayerMLP
from ..optim import SGD, Adam
from ..softmax import softmax
from ..train import train_step
from .diagnoses import missing_activation, step_hint, update_hint
from .probes import (
    Failed,
    expect_close,
    expect_each,
    fd_gradient,
    show,
    unchanged,
)

__all__ = ["CHECKS", "CHECKS_USE", "KL_THRESHOLD", "TRAIN_STEPS",
           "train_to_posterior"]

# nats: over seeds 0 to 11 the reference reaches at most 0.0040, a backward that
# skips the ReLU at least 0.0118; a network linear in x at best 0.080 (logistic
# regression on 100,000 samples); an untrained one 0.44
KL_THRESHOLD = 0.008
TRAIN_STEPS = 2000    # batches of 64 from tasks.unequal_variance(), SGD with lr 0.3

#: What an exercise's checks build with besides its ``uses``: the child gets
#: these references too (training a network needs a step and an update rule).
CHECKS_USE = {"TwoLayerMLP.backward": ("train_step", "SGD.update", "cross_entropy",
                                       "cross_entropy_grad"),
              "train_step": ("TwoLayerMLP.forward", "TwoLayerMLP.backward",
                             "SGD.update", "Adam.update", "cross_entropy",
                             "cross_entropy_grad")}


def _run(step: Any, each: list) -> list:
    """The calls ``step(*args)`` for each argument list: one request in the child."""
    return step.loop(each) if hasattr(step, "loop") else [step(*a) for a in each]


def train_to_posterior(s: Any = None, model: Any = None, step: Any = None,
                       seed: int = 0) -> float:
    """Train a 1-16-2 network on ``tasks.unequal_variance()``; its expected KL.

    Parameters
    ----------
    s : Objects or Local, optional
        The student's side (default: the library, in this process).
    model : object, optional
        A network built by ``s`` (default the chapter's, ``rng=seed``).
    step : callable, optional
        ``step(model, optimizer, x, targets)`` (default the chapter's
        :func:`~scratchnet.train.train_step`), called :data:`TRAIN_STEPS`
        times on fresh batches of 64, with ``SGD(model.params, lr=0.3)``.
    seed : int, default 0

    Returns
    -------
    float
        The expected KL divergence from the exact posterior, in nats,
        computed here from the network's logits on the points the
        integration rule asks for.

    Examples
    --------
    >>> train_to_posterior(seed=0) < KL_THRESHOLD
    True
    """
    return _training(s, model, step, seed)[0]


def _training(s: Any, model: Any, step: Any, seed: int) -> tuple:
    """:func:`train_to_posterior`'s KL, and what was wrong with the first step ("")."""
    from .sides import Local

    s = s or Local(TwoLayerMLP)
    task = tasks.unequal_variance()
    rng = np.random.default_rng(seed + 1000)
    if model is None:
        model = s.new(1, 16, 2, rng=seed, library="mlp.TwoLayerMLP")
    _set_params(s, model, TwoLayerMLP(1, 16, 2, rng=seed))   # the chapter's start
    optimizer = s.new(s.params_of(model), lr=0.3, library="optim.SGD")
    step = step or s.function("train.train_step", library=True)
    batches = [task.sample(64, rng) for _ in range(TRAIN_STEPS)]
    _run(step, [[model, optimizer, *batches[0]]])
    first = _first_step(s, model, seed, batches[0])
    _run(step, [[model, optimizer, *batch] for batch in batches[1:]])
    trained = _trained(s, model, TwoLayerMLP(1, 16, 2, rng=seed))
    return float(task.expected_kl(lambda x: softmax(trained.forward(x)))), first


def _first_step(s: Any, model: Any, seed: int, batch: tuple) -> str:
    """How the parameters after the first step differ from the chapter's ("": not).

    So that the KL judges training by the gradients: parameters written in by
    hand (a network trained elsewhere, put in place by ``backward`` or
    ``train_step``) reach the posterior without a first step that follows the
    gradients.
    """
    ref = TwoLayerMLP(1, 16, 2, rng=seed)
    train_step(ref, SGD(ref.params, lr=0.3), *batch)
    got = _trained(s, model, TwoLayerMLP(1, 16, 2, rng=seed))
    for name, want in ref.params.items():
        if not np.allclose(got.params[name], want, rtol=1e-4, atol=1e-7):
            return (f"after the first of {TRAIN_STEPS} training steps from the "
                    f"chapter's initial parameters, params[{name!r}] is "
                    f"{show(got.params[name])}; the chapter's step gives {show(want)}")
    return ""


def _set_params(s: Any, model: Any, ref: TwoLayerMLP) -> None:
    """Write the chapter network's parameters into the student's side's network."""
    for name, value in ref.params.items():
        s.assign(model, ["params", name], value)


def _trained(s: Any, model: Any, into: TwoLayerMLP) -> TwoLayerMLP:
    """The chapter's network holding the parameters the student's side trained.

    Only arrays come back from the child: the outputs are computed here, with
    the chapter's forward, never by a method of the child's object.
    """
    for name, value in into.params.items():
        got = s.get(model, "params", name)
        try:
            array = np.asarray(got, dtype=value.dtype)
        except (TypeError, ValueError):
            array = None
        if array is None or array.shape != value.shape:
            raise Failed(f"after training, params[{name!r}] is {show(got)}; expected "
                         f"an array of shape {value.shape}")
        value[...] = array
    return into


def _posterior_check(s: Any, model: Any = None, step: Callable | None = None) -> None:
    kl, first = _training(s, model, step, 0)
    if not kl < KL_THRESHOLD:
        raise Failed(f"after {TRAIN_STEPS} steps of SGD on tasks.unequal_variance() "
                     f"(seed 0) the expected KL to the posterior is {kl:.4g} nats; it "
                     f"must be below {KL_THRESHOLD} (the reference reaches 0.002; a "
                     "backward that skips the activation 0.012; a network linear in "
                     "x at best 0.08)")
    if first:   # the posterior reached, but not by the gradients' steps
        raise Failed(f"the expected KL is {kl:.4g} nats, but {first}",
                     "training is judged by its steps too: each must be the one the "
                     "gradients give, from the chapter's initial parameters")


def _models(s, sizes, activation="relu", seed=0, dtype=np.float64):
    """The student's network and the chapter's, with the same random parameters
    (biases too: they start at 0, where a missing bias would pass unseen)."""
    ref = TwoLayerMLP(*sizes, activation=activation, rng=seed, dtype=dtype)
    model = s.new(*sizes, activation=activation, rng=seed, dtype=np.dtype(dtype).name)
    rng = np.random.default_rng(seed + 100)
    for name, value in ref.params.items():
        value[...] = 0.5 * rng.standard_normal(value.shape)
        s.assign(model, ["params", name], value)
    return model, ref


def _batch(sizes, n=4, seed=1):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, sizes[0])), rng.standard_normal((n, sizes[2]))


def _forward_checks():
    def compare(cls, sizes, label, activation="relu", dtype=None, n=4):
        model, ref = _models(cls, sizes, activation, dtype=dtype or np.float64)
        x, _ = _batch(sizes, n)
        x = x.astype(dtype or np.float64)
        got = cls.method(model, "forward", names=["x"])(x.copy())
        expect_close(got, ref.forward(x), f"forward(x) of a {label} network, "
                     f"x = {show(x)}", rtol=1e-5, atol=1e-6, dtype=dtype)

    def kept(cls):
        model, _ = _models(cls, (3, 5, 2))
        x, _ = _batch((3, 5, 2))
        given = x.copy()
        cls.method(model, "forward", names=["x"])(given)
        unchanged([given], [x], ["x"], "forward(x)")

    return [("values", lambda c: compare(c, (3, 5, 2), "3-5-2 ReLU")),
            ("tanh", lambda c: compare(c, (3, 5, 2), "3-5-2 tanh", "tanh")),
            ("batch of one", lambda c: compare(c, (3, 5, 2), "3-5-2", n=1)),
            ("float32 kept",
             lambda c: compare(c, (3, 5, 2), "float32", dtype=np.float32)),
            ("inputs unchanged", kept)]


def _backward_checks():
    def grads_of(cls, sizes, activation="relu"):
        model, ref = _models(cls, sizes, activation)
        x, dlogits = _batch(sizes)
        cls.method(model, "forward", names=["x"])(x.copy())
        got = cls.method(model, "backward", names=["dlogits"])(dlogits.copy())
        if not isinstance(got, dict) or set(got) != {"W1", "b1", "W2", "b2"}:
            raise Failed(f"backward returned {show(got)}", "return a dict with the "
                         "keys 'W1', 'b1', 'W2', 'b2'")
        return got, ref, x, dlogits

    def compare(cls, sizes, label, activation="relu"):
        got, ref, x, dlogits = grads_of(cls, sizes, activation)
        ref.forward(x)
        hint = missing_activation(got, ref, x, dlogits)
        expect_each([(name, lambda name=name, want=want: expect_close(
            got[name], want, f"grads[{name!r}] of a {label} network, x = {show(x)}, "
            f"dlogits = {show(dlogits)}", n=len(x), hint=hint))
            for name, want in ref.backward(dlogits).items()])

    def finite_differences(cls):
        got, ref, x, dlogits = grads_of(cls, (2, 3, 2))
        for name in ("W1", "b1"):
            numeric = fd_gradient(lambda: float((ref.forward(x) * dlogits).sum()),
                                  ref.params[name])
            expect_close(got[name], numeric, f"grads[{name!r}] against central "
                         "differences of sum(logits * dlogits)", rtol=1e-5, atol=1e-7)

    def kept(cls):
        model, _ = _models(cls, (3, 5, 2))
        x, dlogits = _batch((3, 5, 2))
        cls.method(model, "forward", names=["x"])(x.copy())
        given = dlogits.copy()
        cls.method(model, "backward", names=["dlogits"])(given)
        unchanged([given], [dlogits], ["dlogits"], "backward(dlogits)")

    return [("values", lambda c: compare(c, (3, 5, 2), "3-5-2 ReLU")),
            ("square weights", lambda c: compare(c, (4, 4, 4), "4-4-4 (square W)")),
            ("tanh", lambda c: compare(c, (3, 5, 2), "3-5-2 tanh", "tanh")),
            ("finite differences", finite_differences),
            ("trains to the posterior", lambda c: _posterior_check(
                c, model=c.new(1, 16, 2, rng=0))),
            ("inputs unchanged", kept)]


def _optimizer_checks(name, ref_class, options):
    def run(s, steps, dtype=np.float64, scale=1.0):
        rng = np.random.default_rng(3)
        w0 = rng.standard_normal(5).astype(dtype)
        grads = [(scale * rng.standard_normal(5)).astype(dtype) for _ in range(steps)]
        theirs = {"w": w0.copy()}
        opt, ref = s.new({"w": w0.copy()}, **options), ref_class(theirs, **options)
        step = s.method(opt, "step", names=["grads"])
        for t, g in enumerate(grads, 1):
            before, start = np.array(s.get(opt, "params", "w")), theirs["w"].copy()
            step({"w": g.copy()})
            ref.step({"w": g.copy()})
            mine = {"w": np.asarray(s.get(opt, "params", "w"))}
            what = (f"the parameter after step {t} of {name} with {options}, w0 = "
                    f"{show(w0)}, grads = {show(grads[:t])}")
            hint = update_hint(before, mine["w"], theirs["w"])
            expect_close(mine["w"], theirs["w"], what, rtol=1e-5, atol=1e-7,
                         dtype=dtype, hint=hint)
            if scale < 1:   # the step itself: a step of 1e-7 hides in the parameter
                expect_close(mine["w"] - before, theirs["w"] - start,
                             f"the step taken ({what})", rtol=1e-5,
                             atol=1e-7 * scale, hint=hint)

    def descends(s):
        target = np.array([1.0, -2.0, 0.5])
        opt = s.new({"w": np.zeros(3)}, **options)
        step = s.method(opt, "step", names=["grads"])
        losses = []
        for _ in range(5):
            w = np.asarray(s.get(opt, "params", "w"))
            losses.append(0.5 * float(((w - target) ** 2).sum()))
            step({"w": w - target})
        if not losses[-1] < losses[0]:
            raise Failed(f"five steps of {name} on 0.5 ||w - a||^2 from w = 0 took the "
                         f"loss from {losses[0]:.4g} to {losses[-1]:.4g}",
                         "the update climbs the loss: a step goes against the gradient")

    def kept(s):
        grad = np.array([0.5, -1.0, 2.0])
        given = {"w": grad.copy()}
        s.method(s.new({"w": np.zeros(3)}, **options), "step", names=["grads"])(given)
        unchanged([given["w"]], [grad], ["grad"], f"{name}(param, grad, state)")

    return [("one step", lambda c: run(c, 1)), ("five steps", lambda c: run(c, 5)),
            ("small gradients", lambda c: run(c, 3, scale=1e-6)),
            ("descends a loss", descends),
            ("float32 kept", lambda c: run(c, 2, np.float32)),
            ("inputs unchanged", kept)]


def _train_step_checks():
    def one_step(s, optimizer=SGD, options=None):
        options = options or {"lr": 0.1}
        ref = TwoLayerMLP(1, 8, 2, rng=0)
        model = s.new(1, 8, 2, rng=0, library="mlp.TwoLayerMLP")
        _set_params(s, model, ref)
        x, c = np.array([[0.0], [3.0], [1.0]]), np.array([0, 1, 1])
        before = ref.params["W1"].copy()
        opt = s.new(s.params_of(model), library=f"optim.{optimizer.__name__}",
                    **options)
        f = s.function("train_step", names=["model", "optimizer", "x", "targets"],
                       mutable=[0, 1])
        got = f(model, opt, x.copy(), c.copy())
        want = train_step(ref, optimizer(ref.params, **options), x, c)
        expect_close(got, want, f"the loss train_step returns for x = {show(x)}, "
                     f"targets = {c} (before the update)")
        params = {name: s.get(model, "params", name) for name in ref.params}
        for name in ref.params:
            expect_close(params[name], ref.params[name], f"params[{name!r}] "
                         f"after one train_step with {optimizer.__name__}({options})",
                         hint=step_hint(before, params["W1"], ref.params["W1"])
                         if name == "W1" else "")

    def kept(s):
        model = s.new(1, 8, 2, rng=0, library="mlp.TwoLayerMLP")
        _set_params(s, model, TwoLayerMLP(1, 8, 2, rng=0))
        x, c = np.array([[0.0], [3.0], [1.0]]), np.array([0, 1, 1])
        given = [x.copy(), c.copy()]
        opt = s.new(s.params_of(model), library="optim.SGD", lr=0.1)
        s.function("train_step", mutable=[0, 1])(model, opt, *given)
        unchanged(given, [x, c], ["x", "targets"], "train_step(model, optimizer, ...)")

    return [("one step", one_step),
            ("Adam", lambda f: one_step(f, Adam, {"lr": 0.01})),
            ("trains to the posterior", lambda s: _posterior_check(
                s, step=s.function("train_step", mutable=[0, 1]))),
            ("inputs unchanged", kept)]


CHECKS = {
    "TwoLayerMLP.forward": _forward_checks(),
    "TwoLayerMLP.backward": _backward_checks(),
    "SGD.update": _optimizer_checks("SGD.update", SGD, {"lr": 0.1}),
    "Adam.update": _optimizer_checks("Adam.update", Adam,
                                     {"lr": 0.01, "betas": (0.9, 0.99), "eps": 1e-8}),
    "train_step": _train_step_checks(),
}
