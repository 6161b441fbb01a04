r"""The training loop of an ensemble: every member's step at once, watched.

:func:`train_ensemble` is :func:`scratchnet.train`'s loop for an
:class:`~scratchnet.fast.Ensemble`: at every step one stacked batch, one
fused forward and backward pass into a gradient vector allocated once, one
update of every member, and the checks that stop a diverging run before it
spoils the parameters (:func:`check_finite_gradients`: one dot product per
step, named parameter and members when it fails).
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
from .mlp import StackedParams

__all__ = ["check_finite_gradients", "train_ensemble"]

#: Steps between two checks that every recorded loss is finite (the gradients
#: are checked at every step).
_LOSS_CHECK_EVERY = 256


def check_finite_gradients(grads: StackedParams, step: int) -> None:
    r"""Raise FloatingPointError, naming the parameter and the members, if any
    gradient is not finite.

    One pass over the vector: :math:`g \cdot g` is finite exactly when every
    entry is (unless the squares overflow, which the entries are then
    checked for one by one).

    Parameters
    ----------
    grads : StackedParams
    step : int
        Named in the message (1-based).

    Returns
    -------
    None

    Examples
    --------
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
    check, the engine's own, warns of nothing and costs no ``np.errstate``
    at every step; the model's operations keep theirs
    (``tests/test_fast_edges.py::test_the_engines_finite_check_raises_no_warning``).
    """
    return math.isfinite(np.vdot(vector, vector))


def _check_finite(grads: StackedParams, step: int) -> None:
    """:func:`check_finite_gradients` (it checks the entries without warnings)."""
    if _finite(grads.flat):
        return
    for name, g in grads.items():
        bad = ~np.isfinite(g.reshape(len(g), -1))
        if bad.any():
            members = np.flatnonzero(bad.any(axis=1))
            where = ", ".join(f"member {s}: {bad[s].sum()} entries"
                              for s in members[:5])
            raise FloatingPointError(
                f"the gradient of {name} is not finite at step {step} ({where}): the "
                "updates diverged, or the inputs are not finite; try a smaller "
                "learning rate")


def train_ensemble(ensemble: Ensemble, batches: Iterator, *, steps: int, optimizer: Any,
                   lr: Callable[[int], float] | None = None,
                   snapshot_steps: Sequence[int] = (),
                   on_snapshot: Callable[[int, Ensemble], Any] | None = None,
                   progress: bool = False, loss: Any = None) -> np.ndarray:
    """Train every member at once: ``train_step`` on the stacked batches, recorded.

    Parameters
    ----------
    ensemble : Ensemble
    batches : iterator of (x (S, B, d), c (S, B))
        E.g. :func:`stack_batches`.
    steps : int
    optimizer : Optimizer
        Built on ``ensemble.params`` (one update for every member), e.g.
        :class:`scratchnet.Adam`.
    lr : callable, optional
        A schedule ``lr(step)`` (0-based), set before each update.
    snapshot_steps : sequence of int, optional
        After these steps, ``on_snapshot(step, ensemble)`` is called.
    on_snapshot : callable, optional
    progress : bool, default False
        A progress line on stderr.
    loss : str or Loss, optional
        As in :meth:`Ensemble.loss_and_grads`; when given, recorded as
        ``ensemble.loss`` (its predictions then read the outputs through
        it); default ``ensemble.loss``.

    Returns
    -------
    ndarray of float64, shape (steps, S)
        Every member's loss at every step.

    Raises
    ------
    FloatingPointError
        When a gradient is not finite (checked before the update it would
        spoil, by ``fast.training.check_finite_gradients``, which names the
        parameter and the members), or a loss (checked in bulk every 256
        steps, at every snapshot and at the end; the message names the first
        step whose loss is not finite).

    Notes
    -----
    Every batch is checked (:meth:`Ensemble.check_batch`: shapes, dtype,
    class indices), a few microseconds of a step of a hundred or more.

    Examples
    --------
    >>> import scratchnet as sn
    >>> from scratchnet.train import epochs
    >>> task = sn.tasks.separated()
    >>> data = [task.sample(256, np.random.default_rng(s)) for s in range(3)]
    >>> its = [epochs(x, c, 64, np.random.default_rng(s))
    ...        for s, (x, c) in enumerate(data)]
    >>> ens = sn.fast.Ensemble([1, 16, 2], rngs=[0, 1, 2])
    >>> losses = sn.fast.train_ensemble(ens, sn.fast.stack_batches(its), steps=50,
    ...                                 optimizer=sn.Adam(ens.params, lr=1e-2))
    >>> losses.shape, bool(losses[-10:].mean() < losses[:10].mean())
    ((50, 3), True)
    """
    steps = check_positive_int(steps, "steps")
    snaps = set(snapshot_steps)
    if loss is not None:  # the ensemble reads its outputs through its loss
        ensemble.loss = get_loss(loss, outputs=ensemble.sizes[-1])
    loss = ensemble.loss
    losses = np.empty((steps, ensemble.members))
    grads = StackedParams(np.empty_like(ensemble.params.flat), ensemble.layout)
    vector = grads.flat
    ours = isinstance(optimizer, Optimizer)  # takes check_finite (checked here)
    start = last = time.perf_counter()
    done = 0  # steps whose losses are known to be finite
    for step in range(1, steps + 1):  # the model's own warnings are the user's
        if lr is not None:
            optimizer.lr = lr(step - 1)
        x, c = ensemble.check_batch(*next(batches))
        ensemble.loss_and_grads_into(x, c, loss, vector, losses[step - 1])
        if not _finite(vector):  # before the update it would spoil
            _check_finite(grads, step)
        if ours:
            optimizer.step(grads, check_finite=False)
        else:
            optimizer.step(grads)
        if step in snaps or step - done >= _LOSS_CHECK_EVERY or step == steps:
            done = _check_losses(losses, done, step)
            if step in snaps and on_snapshot is not None:
                on_snapshot(step, ensemble)
        if progress and time.perf_counter() - last > 0.2:
            last = time.perf_counter()
            rate = step / (last - start)
            print(f"\rstep {step:,}/{steps:,}  {ensemble.members} members  "
                  f"{rate:,.0f} steps/s  {(steps - step) / rate:.0f} s left",
                  end="", file=sys.stderr, flush=True)
    if progress:
        elapsed = time.perf_counter() - start
        print(f"\rstep {steps:,}/{steps:,}  {elapsed:.1f} s" + " " * 30,
              file=sys.stderr, flush=True)
    return losses


def _check_losses(losses: np.ndarray, done: int, step: int) -> int:
    """Raise FloatingPointError at the first non-finite loss of steps
    ``done + 1 .. step``; return ``step``.  (In bulk: the gradients are
    checked at every step, and a loss that is not finite while its gradient
    is, e.g. a squared error that overflows, spoils no parameter.)"""
    recent = losses[done:step]
    if not np.isfinite(recent).all():
        first = int(np.flatnonzero(~np.isfinite(recent).all(axis=1))[0])
        raise FloatingPointError(f"a member's loss became non-finite at step "
                                 f"{done + first + 1}: {recent[first]}")
    return step
