r"""What a training run records: the loss of every step and the snapshots.

A run of :func:`scratchnet.train` leaves a :class:`History`: the mini-batch
loss of every step (a noisy estimate of the population loss, which sits
above the Bayes loss :math:`H(C \mid X)` by the expected KL divergence) and,
at chosen steps, the model's probabilities on fixed inputs and its expected
KL from the Bayes posterior.  It converts to and from plain JSON.

On a fixed sample the training loss keeps falling long after the model has
stopped getting closer to the posterior: it starts fitting the sample
itself, and its loss on new data rises.  :class:`EarlyStopping` measures
the negative log-likelihood on a held-out *validation* set
:math:`(x_j, c_j)_{j=1}^{n}` as training goes,

.. math::

    \mathrm{NLL}_{\mathrm{val}}(\theta_t) = -\frac1n \sum_{j=1}^{n}
    \log q_{\theta_t}(c_j \mid x_j),

keeps a copy of the parameters where it was lowest, stops the run after
``patience`` measurements in a row without a new lowest value, and puts the
best parameters back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Dict

import numpy as np

from ._validation import (
    as_float_array,
    as_number_array,
    check_bool,
    check_positive_int,
    check_scalar,
    describe,
)
from .losses import nll_loss

__all__ = ["EarlyStopping", "History"]


def _check_ndim(arr: np.ndarray, name: str, ndim: int | None) -> np.ndarray:
    """``arr`` if it has ``ndim`` dimensions (any number if None)."""
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be an array with {ndim} dimension(s); got "
                         f"shape {arr.shape}")
    return arr


def _float_array(value: Any, name: str, ndim: int | None = None) -> Any:
    """None, or ``value`` as a floating array of ``ndim`` dimensions (NaN allowed)."""
    if value is None:
        return None
    return _check_ndim(as_float_array(value, name, check_nan=False), name, ndim)


@dataclass
class History:
    r"""What a training run recorded: the loss curve and the snapshots.

    Parameters
    ----------
    losses : ndarray of float64, shape (T,)
        The mini-batch loss of every step, in nats (``losses[t]`` was
        computed before update ``t + 1``).  ``T`` is the number of steps
        done (fewer than asked if a callback stopped the run).
    snapshot_steps : ndarray of int, shape (K,)
        The step counts (number of updates made) at which snapshots were
        taken.
    snapshot_probs : ndarray of the model's dtype, shape (K, n_eval, M), or None
        ``model.predict_proba(eval_x)`` at each snapshot (None without
        ``eval_x``).
    snapshot_kl : ndarray of float64, shape (K,), or None
        ``task.expected_kl(model)`` at each snapshot (through the model's
        log-probabilities when it has ``predict_log_proba``), in nats
        (None without a task).
    eval_x : ndarray or None
        The inputs of ``snapshot_probs``.
    elapsed : float
        Wall-clock seconds spent in the loop (snapshots included).
    stopped_early : bool
        True if the callback or early stopping ended the run.
    validation_steps : ndarray of int, shape (V,)
        The steps at which the validation NLL was measured (empty without a
        validation set).
    validation_nll : ndarray of float64, shape (V,), or None
        :math:`-\frac1n \sum_j \log q(c_j \mid x_j)` on the validation set
        at those steps, in nats (None without one).
    best_step : int or None
        The step whose parameters the model holds at the end when early
        stopping restored them (the lowest validation NLL); None otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> h = sn.History(losses=np.array([0.7, 0.5]), snapshot_steps=np.array([2]),
    ...                snapshot_probs=None, snapshot_kl=np.array([0.01]),
    ...                eval_x=None, elapsed=0.001)
    >>> h.steps, h.to_dict()["snapshot_kl"]
    (2, [0.01])
    """

    losses: np.ndarray
    snapshot_steps: np.ndarray
    snapshot_probs: np.ndarray | None
    snapshot_kl: np.ndarray | None
    eval_x: np.ndarray | None
    elapsed: float
    stopped_early: bool = False
    validation_steps: np.ndarray | None = None
    validation_nll: np.ndarray | None = None
    best_step: int | None = None

    def __post_init__(self) -> None:
        """Check every field's kind; lists become arrays (from :meth:`from_dict`)."""
        self.losses = _float_array(self.losses, "losses", ndim=1)
        steps = as_number_array(self.snapshot_steps, "snapshot_steps",
                                "the step counts of the snapshots (integers)")
        if steps.size and steps.dtype.kind not in "iu":
            raise TypeError("snapshot_steps must be the step counts of the snapshots "
                            f"(integers); got {describe(steps)}")
        self.snapshot_steps = _check_ndim(steps.astype(np.int64, copy=False),
                                          "snapshot_steps", 1)
        self.snapshot_probs = _float_array(self.snapshot_probs, "snapshot_probs", 3)
        self.snapshot_kl = _float_array(self.snapshot_kl, "snapshot_kl", ndim=1)
        self.eval_x = _float_array(self.eval_x, "eval_x")
        self.elapsed = check_scalar(self.elapsed, "elapsed", low=0.0)
        self.stopped_early = check_bool(self.stopped_early, "stopped_early")
        steps = np.zeros(0, np.int64) if self.validation_steps is None else np.asarray(
            self.validation_steps, dtype=np.int64)
        self.validation_steps = _check_ndim(steps, "validation_steps", 1)
        self.validation_nll = _float_array(self.validation_nll, "validation_nll", 1)
        if self.best_step is not None:
            self.best_step = check_positive_int(self.best_step, "best_step")

    @property
    def steps(self) -> int:
        """The number of steps done, ``len(losses)``."""
        return len(self.losses)

    def to_dict(self) -> Dict[str, Any]:
        """The record as plain lists, floats and None (JSON-serialisable).

        Returns
        -------
        dict
            Keys as the fields, plus ``"steps"``; arrays become nested lists.

        Examples
        --------
        >>> import json
        >>> import scratchnet as sn
        >>> model = sn.TwoLayerMLP(1, 8, 2, rng=0)
        >>> history = sn.train(model, sn.tasks.separated(), steps=5, batch_size=16,
        ...                    lr=0.1, rng=0)
        >>> record = history.to_dict()
        >>> record["steps"], len(record["losses"])
        (5, 5)
        >>> sn.History.from_dict(json.loads(json.dumps(record))).steps
        5
        """

        def plain(a: np.ndarray | None) -> Any:
            return None if a is None else np.asarray(a).tolist()

        return {
            "steps": self.steps,
            "losses": plain(self.losses),
            "snapshot_steps": plain(self.snapshot_steps),
            "snapshot_probs": plain(self.snapshot_probs),
            "snapshot_kl": plain(self.snapshot_kl),
            "eval_x": plain(self.eval_x),
            "elapsed": float(self.elapsed),
            "stopped_early": bool(self.stopped_early),
            "validation_steps": plain(self.validation_steps),
            "validation_nll": plain(self.validation_nll),
            "best_step": self.best_step,
        }

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> History:
        """Rebuild a History from :meth:`to_dict`'s output (e.g. read from JSON).

        Parameters
        ----------
        d : dict
            As returned by :meth:`to_dict`.

        Returns
        -------
        History

        Examples
        --------
        >>> import scratchnet as sn
        >>> sn.History.from_dict({"losses": [0.7, 0.5], "elapsed": 0.1}).steps
        2
        """
        if not isinstance(d, Mapping):
            raise TypeError(f"d must be a dict like to_dict()'s; got {d!r}")
        missing = [k for k in ("losses", "elapsed") if k not in d]
        if missing:
            raise ValueError(f"d must have the keys 'losses' and 'elapsed' (as "
                             f"to_dict() writes them); missing {', '.join(missing)}")

        steps = d.get("snapshot_steps")
        return cls(losses=d["losses"],
                   snapshot_steps=np.zeros(0, np.int64) if steps is None else steps,
                   snapshot_probs=d.get("snapshot_probs"),
                   snapshot_kl=d.get("snapshot_kl"), eval_x=d.get("eval_x"),
                   elapsed=d["elapsed"],
                   stopped_early=d.get("stopped_early", False),
                   validation_steps=d.get("validation_steps"),
                   validation_nll=d.get("validation_nll"),
                   best_step=d.get("best_step"))


class EarlyStopping:
    r"""Watch the validation NLL while training; keep the best parameters.

    Parameters
    ----------
    x : ndarray, shape (n, D)
        Validation inputs (held out from training).
    c : array_like of int, shape (n,)
        Their classes.
    every : int
        Measure after every ``every`` steps (and after the last step).
    patience : int or None
        Stop after this many measurements in a row without a lower NLL than
        the lowest so far, and restore the parameters of the lowest; None
        records the NLL only (no stopping, no restoring).

    Attributes
    ----------
    steps, nll : list
        The steps measured and the validation NLL at each.
    best_step, best_nll : int or None, float
        The step of the lowest NLL so far, and that NLL.

    Notes
    -----
    The NLL is the mean of :math:`-\log q(c_j \mid x_j)` through the model's
    ``predict_log_proba`` (:func:`scratchnet.nll_loss`): the same number
    whatever loss trains the model.  The best parameters are copied when
    measured and written back in place (:meth:`restore`), so an optimiser
    built on ``model.params`` still holds them.

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> model = sn.MLP([1, 8, 2], rng=0)
    >>> watch = sn.history.EarlyStopping(np.array([[0.0], [3.0]]), [0, 1], every=1,
    ...                                  patience=2)
    >>> watch.update(1, model), watch.best_step
    (False, 1)
    """

    def __init__(self, x: np.ndarray, c: Any, *, every: int,
                 patience: int | None) -> None:
        self.x, self.c = x, np.asarray(c)
        self.every = check_positive_int(every, "validation_every")
        self.patience = None if patience is None else check_positive_int(
            patience, "patience")
        self.steps: list = []
        self.nll: list = []
        self.best_step: int | None = None
        self.best_nll = np.inf
        self.best_params: dict | None = None
        self.waited = 0

    def update(self, step: int, model: Any, *, last: bool = False) -> bool:
        """Measure the validation NLL at ``step`` if it is due; say whether to stop.

        Parameters
        ----------
        step : int
            Updates made so far.
        model : MLP or any model
            With ``predict_log_proba`` and ``params``.
        last : bool, default False
            The last step of the run: measured whether due or not.

        Returns
        -------
        bool
            True when ``patience`` measurements in a row found no new lowest
            NLL.

        Examples
        --------
        >>> import numpy as np
        >>> import scratchnet as sn
        >>> watch = sn.history.EarlyStopping(np.zeros((1, 1)), [0], every=5,
        ...                                  patience=1)
        >>> watch.update(3, sn.MLP([1, 4, 2], rng=0)), watch.steps
        (False, [])
        """
        step = check_positive_int(step, "step")
        if not hasattr(model, "predict_log_proba"):
            raise TypeError("model must have .predict_log_proba (see sn.MLP); got "
                            f"{type(model).__name__}")
        if step % self.every and not last:
            return False
        nll = float(nll_loss(model.predict_log_proba(self.x), self.c))
        self.steps.append(step)
        self.nll.append(nll)
        if self.best_step is None or nll < self.best_nll:
            self.best_step, self.best_nll, self.waited = step, nll, 0
            self.best_params = {k: np.array(p, copy=True)
                                for k, p in model.params.items()}
        else:
            self.waited += 1
        return self.patience is not None and self.waited >= self.patience

    def restore(self, model: Any) -> int | None:
        """Write the best parameters back into ``model.params``, in place.

        Parameters
        ----------
        model : MLP or any model
            The model that was measured.

        Returns
        -------
        int or None
            The step of the parameters restored; None when nothing is
            restored (no ``patience``, or nothing measured yet).

        Examples
        --------
        >>> import numpy as np
        >>> import scratchnet as sn
        >>> model = sn.MLP([1, 4, 2], rng=0)
        >>> watch = sn.history.EarlyStopping(np.zeros((1, 1)), [0], every=1,
        ...                                  patience=1)
        >>> first = model.params["b1"].copy()
        >>> _ = watch.update(1, model)
        >>> model.params["b1"] += 1.0
        >>> watch.restore(model), bool(np.all(model.params["b1"] == first))
        (1, True)
        """
        if not isinstance(getattr(model, "params", None), Mapping):
            raise TypeError("model must have .params, a dict of arrays (see sn.MLP); "
                            f"got {type(model).__name__}")
        if self.patience is None or self.best_params is None:
            return None
        for name, best in self.best_params.items():
            model.params[name][...] = best
        return self.best_step

