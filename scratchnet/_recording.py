"""What a training run records and reports while it runs: snapshots, a progress line.

Two collaborators of :func:`scratchnet.train`'s loop, named so that the loop
reads as itself: :class:`Snapshots` records the model's probabilities and its
expected KL at chosen steps, :class:`ProgressLine` writes one line on stderr.
(The third, early stopping, is :class:`scratchnet.history.EarlyStopping`.)
This module is private.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Sequence

import numpy as np

__all__ = ["PROGRESS_EVERY", "ProgressLine", "Snapshots"]


#: Seconds between two updates of the progress line.
PROGRESS_EVERY = 0.2


class Snapshots:
    """What :func:`scratchnet.train` records at its snapshot steps.

    Parameters
    ----------
    steps : sequence of int
        The steps after which to record, sorted.
    eval_x : ndarray, shape (n_eval, D), or None
        The inputs of the recorded probabilities.
    task : task or None
        Whose ``expected_kl`` of the model is recorded.
    model : model
        The model trained (its ``predict_proba``, or ``predict_log_proba``).

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> from scratchnet._recording import Snapshots
    >>> model, task = sn.MLP([1, 4, 2], rng=0), sn.tasks.separated()
    >>> snaps = Snapshots([1], np.zeros((3, 1)), task, model)
    >>> snaps.record(1, model)
    >>> snaps.fields()["snapshot_probs"].shape
    (1, 3, 2)
    """

    def __init__(self, steps: Sequence[int], eval_x: Any, task: Any,
                 model: Any) -> None:
        self.steps, self.eval_x, self.task, self.model = steps, eval_x, task, model
        self.probs: list = []
        self.kls: list = []
        # the expected KL goes through log q where the model gives it
        self.measured = model if hasattr(model, "predict_log_proba") else \
            model.predict_proba

    def record(self, step: int, model: Any) -> None:
        """After ``step``: the model's probabilities on ``eval_x``, its expected KL.

        Parameters
        ----------
        step : int
            The step just taken (nothing is recorded unless it is a snapshot step).
        model : model

        Examples
        --------
        >>> import scratchnet as sn
        >>> from scratchnet._recording import Snapshots
        >>> model, task = sn.MLP([1, 4, 2], rng=0), sn.tasks.separated()
        >>> snaps = Snapshots([2], None, task, model)
        >>> snaps.record(1, model), len(snaps.kls)
        (None, 0)
        """
        if step not in self.steps:
            return
        if self.eval_x is not None:
            self.probs.append(model.predict_proba(self.eval_x))
        if self.task is not None:
            self.kls.append(self.task.expected_kl(self.measured))

    def fields(self) -> dict:
        """The snapshot fields of a :class:`~scratchnet.history.History`.

        Returns
        -------
        dict
            ``snapshot_steps``, ``snapshot_probs``, ``snapshot_kl``, ``eval_x``.

        Examples
        --------
        >>> import scratchnet as sn
        >>> from scratchnet._recording import Snapshots
        >>> model = sn.MLP([1, 4, 2], rng=0)
        >>> sorted(Snapshots([], None, None, model).fields())
        ['eval_x', 'snapshot_kl', 'snapshot_probs', 'snapshot_steps']
        """
        probs, kls = self.probs, self.kls
        empty = None if self.eval_x is None else \
            self.model.predict_proba(self.eval_x)[None][:0]
        return {
            "snapshot_steps": np.asarray(self.steps[:len(kls or probs)], np.int64),
            "snapshot_probs": np.stack(probs) if probs else empty,
            "snapshot_kl": None if self.task is None else np.asarray(kls, np.float64),
            "eval_x": self.eval_x,
        }


class ProgressLine:
    """A one-line progress report on stderr, rewritten in place, for a training run.

    Parameters
    ----------
    steps : int
        The run's number of steps.
    enabled : bool
        Whether to write; disabled, it only keeps the time.

    Examples
    --------
    >>> from scratchnet._recording import ProgressLine
    >>> line = ProgressLine(10, enabled=False)
    >>> line.update(5, 0.7)
    >>> line.close(10, 0.6) >= 0
    True
    """

    def __init__(self, steps: int, enabled: bool) -> None:
        self.steps, self.enabled = steps, enabled
        self.start = self.last = time.perf_counter()

    def update(self, step: int, loss: float) -> None:
        """Rewrite the line (steps, loss, rate, time left), at most every 0.2 s.

        Parameters
        ----------
        step : int
        loss : float

        Examples
        --------
        >>> from scratchnet._recording import ProgressLine
        >>> ProgressLine(10, enabled=False).update(1, 0.7)
        """
        now = time.perf_counter()
        if self.enabled and now - self.last >= PROGRESS_EVERY:
            self.last, rate = now, step / (now - self.start)
            left = (self.steps - step) / rate
            print(f"\rstep {step:,}/{self.steps:,}  loss {loss:.4f}  {rate:,.0f} "
                  f"steps/s  {left:.0f} s left", end="", file=sys.stderr, flush=True)

    def close(self, step: int, loss: float) -> float:
        """Write the last line; return the seconds since the start.

        Parameters
        ----------
        step : int
        loss : float

        Returns
        -------
        float

        Examples
        --------
        >>> from scratchnet._recording import ProgressLine
        >>> ProgressLine(10, enabled=False).close(10, 0.6) >= 0
        True
        """
        elapsed = time.perf_counter() - self.start
        if self.enabled:
            print(f"\rstep {step:,}/{self.steps:,}  loss {loss:.4f}  {elapsed:.2f} s"
                  + " " * 20, file=sys.stderr, flush=True)
        return elapsed
