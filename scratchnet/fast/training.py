r"""The fast path's training loop: one model's steps, or all members' at once, watched.

:func:`train` is :func:`scratchnet.train`'s loop for the fast path's models, a
:class:`~scratchnet.fast.MLP` or an :class:`~scratchnet.fast.Ensemble`: at every
step one batch (stacked, for an ensemble), one fused forward and backward pass into
a gradient vector allocated once (the model's ``loss_and_grads_into``), one update,
and the checks that stop a diverging run before it spoils the parameters
(:func:`check_finite_gradients`: one dot product per step, the parameter, and for
an ensemble the members, named when it fails).  ``train_ensemble`` is its earlier
name, kept for code written before it drove a ``fast.MLP``.
"""

from __future__ import annotations

import math
import sys
import time
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from .._validation import check_positive_int
from ..objectives import get_loss
from ..optim import Optimizer
from .ensemble import Ensemble
from .mlp import MLP
from .params import FlatParams, StackedParams

__all__ = ["check_finite_gradients", "train", "train_ensemble"]

#: Steps between two checks that every recorded loss is finite (the gradients
#: are checked at every step).
_LOSS_CHECK_EVERY = 256


def check_finite_gradients(grads: FlatParams, step: int) -> None:
    r"""Raise FloatingPointError, naming the parameter (and for stacked gradients the
    members), if any gradient is not finite.

    One pass over the vector: :math:`g \cdot g` is finite exactly when every
    entry is (unless the squares overflow, which the entries are then
    checked for one by one).

    Parameters
    ----------
    grads : FlatParams or StackedParams
        One network's gradients, or an ensemble's.
    step : int
        Named in the message (1-based).

    Returns
    -------
    None

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> ens = sn.fast.Ensemble([1, 2, 2], rngs=[0, 1])
    >>> grads = sn.fast.StackedParams(np.zeros_like(ens.params.flat), ens.layout)
    >>> grads["b2"][1, 0] = np.nan
    >>> sn.fast.training.check_finite_gradients(grads, 7)
    Traceback (most recent call last):
    ...
    FloatingPointError: the gradient of b2 is not finite at step 7 (member 1: 1 ...
    """
    _check_finite(grads, step)


def _finite(vector: np.ndarray) -> bool:
    r"""Whether every entry of ``vector`` is finite, in one dot product.

    :math:`v \cdot v` is finite exactly when every entry is, unless the
    squares overflow (entries beyond :math:`10^{154}` in float64,
    :math:`10^{19}` in float32), which sends the caller to the entries, one
    by one.  ``np.vdot`` (BLAS) raises no floating-point warnings, so this
    check, the fast path's own, warns of nothing and costs no ``np.errstate``
    at every step; the model's operations keep theirs
    (``tests/test_fast_edges.py::test_the_engines_finite_check_raises_no_warning``).
    """
    return math.isfinite(np.vdot(vector, vector))


def _check_finite(grads: FlatParams, step: int) -> None:
    """:func:`check_finite_gradients` (it checks the entries without warnings)."""
    if _finite(grads.flat):
        return
    stacked = isinstance(grads, StackedParams)
    for name, g in grads.items():
        bad = ~np.isfinite(g.reshape(len(g) if stacked else 1, -1))
        if bad.any():
            where = (", ".join(f"member {s}: {bad[s].sum()} entries"
                               for s in np.flatnonzero(bad.any(axis=1))[:5])
                     if stacked else f"{bad.sum()} of {bad.size} entries")
            raise FloatingPointError(
                f"the gradient of {name} is not finite at step {step} ({where}): the "
                "updates diverged, or the inputs are not finite; try a smaller "
                "learning rate")


def train(model: MLP | Ensemble, batches: Iterator, *, steps: int, optimizer: Any,
          lr: Callable[[int], float] | None = None,
          snapshot_steps: Sequence[int] = (),
          on_snapshot: Callable[[int, Any], Any] | None = None,
          progress: bool = False, loss: Any = None) -> np.ndarray:
    """Train a ``fast.MLP``, or every member of a ``fast.Ensemble`` at once, recorded.

    The loop of ``train_step`` calls, with the model's ``check_batch`` and
    ``loss_and_grads_into`` (the same two methods on both kinds of model).
    ``train_ensemble`` is this function under its earlier name.

    Parameters
    ----------
    model : fast.MLP or fast.Ensemble
    batches : iterator of (x, targets)
        For a ``fast.MLP``, ``x`` (B, d) (or (B,) when d = 1) and ``targets``
        as its loss takes them (class indices (B,), distributions (B, M), ...),
        e.g. :func:`scratchnet.train.epochs`; for an ensemble, stacked
        ``x`` (S, B, d) and class indices (S, B), e.g. :func:`stack_batches`.
    steps : int
    optimizer : Optimizer
        Built on ``model.params`` (for an ensemble one update for every
        member), e.g. :class:`scratchnet.Adam`.
    lr : callable, optional
        A schedule ``lr(step)`` (0-based), set before each update.
    snapshot_steps : sequence of int, optional
        After these steps, ``on_snapshot(step, model)`` is called.
    on_snapshot : callable, optional
    progress : bool, default False
        A progress line on stderr.
    loss : str or Loss, optional
        As in the model's ``loss_and_grads``; when given, recorded as
        ``model.loss`` (its predictions then read the outputs through it);
        default ``model.loss``.

    Returns
    -------
    ndarray of float64, shape (steps,) for a ``fast.MLP``, (steps, S) for an ensemble
        The loss (every member's) at every step, before its update.

    Raises
    ------
    TypeError
        When ``model`` is neither a ``fast.MLP`` nor a ``fast.Ensemble``.
    FloatingPointError
        When a gradient is not finite (checked before the update it would
        spoil, by ``fast.training.check_finite_gradients``, which names the
        parameter, and the members of an ensemble), or a loss (checked in bulk
        every 256 steps, at every snapshot and at the end; the message names
        the first step whose loss is not finite).

    Notes
    -----
    Every batch is checked (the model's ``check_batch``: shapes, dtype,
    class indices), a few microseconds of a step of a hundred or more.

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> from scratchnet.train import epochs
    >>> task = sn.tasks.separated()
    >>> data = [task.sample(256, np.random.default_rng(s)) for s in range(3)]
    >>> its = [epochs(x, c, 64, np.random.default_rng(s))
    ...        for s, (x, c) in enumerate(data)]
    >>> ens = sn.fast.Ensemble([1, 16, 2], rngs=[0, 1, 2])
    >>> losses = sn.fast.train(ens, sn.fast.stack_batches(its), steps=50,
    ...                        optimizer=sn.Adam(ens.params, lr=1e-2))
    >>> losses.shape, bool(losses[-10:].mean() < losses[:10].mean())
    ((50, 3), True)
    >>> model = sn.fast.MLP([1, 16, 2], rng=0)
    >>> losses = sn.fast.train(model, epochs(*data[0], 64, np.random.default_rng(0)),
    ...                        steps=50, optimizer=sn.Adam(model.params, lr=1e-2))
    >>> losses.shape
    (50,)
    """
    steps = check_positive_int(steps, "steps")
    stacked = isinstance(model, Ensemble)  # a member axis: (S, B, d) batches
    if not (stacked or isinstance(model, MLP)):
        raise TypeError("model must be a scratchnet.fast.MLP or a scratchnet.fast."
                        f"Ensemble (the chapter's models train with sn.train); got "
                        f"{type(model).__module__}.{type(model).__qualname__}")
    snaps = set(snapshot_steps)
    if loss is not None:  # the model reads its outputs through its loss
        model.loss = get_loss(loss, outputs=model.sizes[-1])
    loss = model.loss
    losses = np.empty((steps, model.members if stacked else 1))
    kind = StackedParams if stacked else FlatParams
    grads = kind(np.empty_like(model.params.flat), model.layout)
    vector = grads.flat
    who = f"  {model.members} members" if stacked else ""
    ours = isinstance(optimizer, Optimizer)  # takes check_finite (checked here)
    start = last = time.perf_counter()
    done = 0  # steps whose losses are known to be finite
    for step in range(1, steps + 1):  # the model's own warnings are the user's
        if lr is not None:
            optimizer.lr = lr(step - 1)
        x, t = model.check_batch(*next(batches))
        model.loss_and_grads_into(x, t, loss, vector, losses[step - 1])
        if not _finite(vector):  # before the update it would spoil
            _check_finite(grads, step)
        if ours:
            optimizer.step(grads, check_finite=False)
        else:
            optimizer.step(grads)
        if step in snaps or step - done >= _LOSS_CHECK_EVERY or step == steps:
            done = _check_losses(losses, done, step, stacked)
            if step in snaps and on_snapshot is not None:
                on_snapshot(step, model)
        if progress and time.perf_counter() - last > 0.2:
            last = time.perf_counter()
            rate = step / (last - start)
            print(f"\rstep {step:,}/{steps:,}{who}  {rate:,.0f} steps/s  "
                  f"{(steps - step) / rate:.0f} s left",
                  end="", file=sys.stderr, flush=True)
    if progress:
        elapsed = time.perf_counter() - start
        print(f"\rstep {steps:,}/{steps:,}  {elapsed:.1f} s" + " " * 30,
              file=sys.stderr, flush=True)
    return losses if stacked else losses[:, 0]


#: :func:`train` under its earlier name (when it drove only ``fast.Ensemble``),
#: the same function, kept for code written before.
train_ensemble = train


def _check_losses(losses: np.ndarray, done: int, step: int, members: bool) -> int:
    """Raise FloatingPointError at the first non-finite loss of steps
    ``done + 1 .. step`` (of an ensemble's ``members`` when true); return
    ``step``.  (In bulk: the gradients are checked at every step, and a loss
    that is not finite while its gradient is, e.g. a squared error that
    overflows, spoils no parameter.)"""
    recent = losses[done:step]
    if not np.isfinite(recent).all():
        first = int(np.flatnonzero(~np.isfinite(recent).all(axis=1))[0])
        which, value = (("a member's", recent[first]) if members
                        else ("the", recent[first, 0]))
        raise FloatingPointError(f"{which} loss became non-finite at step "
                                 f"{done + first + 1}: {value}")
    return step
