r"""Choices made after training, on held-out data: a network's step, a shrinkage.

The real-data study (:mod:`scratchnet.experiments.digits`) trains every
network to its step budget and measures it on validation data once an epoch
(:func:`epoch_ends`); :class:`EarlyStop` keeps each member's parameters at its
lowest validation NLL (:func:`member_nll`), or all members' at their lowest
mean where they share one validation set, and restores them at the end, so
that the study reports a network at the step a practitioner would have kept,
beside the last.  :func:`describe_shrinkage` says which covariance shrinkage
the validation split chose, and whether it is the edge of the grid.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from .. import fast

__all__ = ["EarlyStop", "components", "describe_shrinkage", "epoch_ends",
           "member_nll"]


def epoch_ends(n: int, batch_size: int, steps: int, most: int = 300) -> set:
    """The steps that end an epoch of ``n`` samples (at most ``most``), and the last.

    Every epoch, or every k-th epoch where there would be more than ``most``
    of them (small data sets: an epoch of 2 steps), so that measuring costs a
    bounded share of the training.

    Parameters
    ----------
    n, batch_size, steps : int
    most : int, default 300

    Returns
    -------
    set of int

    Examples
    --------
    >>> from scratchnet.experiments.selection import epoch_ends
    >>> sorted(epoch_ends(100, 64, 7)), sorted(epoch_ends(100, 64, 12, most=3))
    ([2, 4, 6, 7], [4, 8, 12])
    """
    epoch = -(-n // min(batch_size, n))
    every = epoch * max(1, -(-steps // (most * epoch)))
    return set(range(every, steps + 1, every)) | {steps}


def member_nll(log_q: np.ndarray, c: np.ndarray) -> np.ndarray:
    r"""Each member's mean negative log-likelihood of the classes ``c``.

    :math:`-\frac1N \sum_j \log q_s(c_j \mid x_j)` for every member :math:`s`.

    Parameters
    ----------
    log_q : ndarray, shape (S, N, M)
        Every member's log-probabilities.
    c : ndarray of int, shape (N,) or (S, N)
        The classes, shared or one row per member.

    Returns
    -------
    ndarray, shape (S,)

    Examples
    --------
    >>> import numpy as np
    >>> from scratchnet.experiments.selection import member_nll
    >>> log_q = np.log([[[0.5, 0.5]], [[0.25, 0.75]]])
    >>> member_nll(log_q, np.array([1])).round(4)
    array([0.6931, 0.2877])
    """
    c = np.broadcast_to(c, log_q.shape[:2])
    return -np.take_along_axis(log_q, c[..., None], axis=-1)[..., 0].mean(axis=-1)


class EarlyStop:
    """Each member's lowest validation NLL so far, the step and the parameters.

    Early stopping for an ensemble trained to its step budget: after the
    training, :meth:`restore` gives every member the parameters of its own
    lowest validation NLL (as :func:`scratchnet.train` with ``patience`` does
    for one network), or, ``together``, every member the parameters of the
    step where the members' *mean* validation NLL is lowest.

    Members that share one small validation set should stop together.  The
    minimum of one network's validation curve over hundreds of measurements
    is a noisy choice: on 115 samples of breast_cancer (split 0) one network
    of three classified every hard validation sample right, kept sharpening
    to its last step (validation NLL 0.017) and scored a test NLL of 0.81,
    above the constant prediction's 0.66, while the other two stopped near
    step 150.  The number of steps is then a setting of the recipe chosen on
    validation (as a grid search over ``max_iter`` would), with three times
    the evidence: the mean of the three curves is lowest at step 168, where
    that network's test NLL is 0.14.

    Parameters
    ----------
    ensemble : scratchnet.fast.Ensemble
    together : bool, default False
        One step for every member: the lowest mean validation NLL.

    Attributes
    ----------
    steps : list of int
        The steps measured.
    nll : list of ndarray (S,)
        The validation NLL of every member at each of them.
    best_step : ndarray of int, shape (S,)

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> from scratchnet.experiments.selection import EarlyStop
    >>> ens = sn.fast.Ensemble([1, 4, 2], rngs=[0, 1])
    >>> stop = EarlyStop(ens)
    >>> stop.update(10, np.array([0.5, 0.4])); stop.update(20, np.array([0.3, 0.6]))
    >>> stop.best_step.tolist()
    [20, 10]
    >>> both = EarlyStop(ens, together=True)
    >>> both.update(10, np.array([0.5, 0.4])); both.update(20, np.array([0.3, 0.7]))
    >>> both.best_step.tolist()      # mean 0.45 at step 10, 0.5 at step 20
    [10, 10]
    """

    def __init__(self, ensemble: fast.Ensemble, *, together: bool = False) -> None:
        self._flat = ensemble.params.flat.reshape(ensemble.members, -1)  # a view
        self._best = self._flat.copy()
        self._lowest = np.full(ensemble.members, np.inf)
        self.together = together
        self.best_step = np.zeros(ensemble.members, dtype=np.int64)
        self.steps: list = []
        self.nll: list = []

    def update(self, step: int, nll: np.ndarray) -> None:
        """Record the validation NLL after ``step``; keep each best (or the mean's).

        Parameters
        ----------
        step : int
        nll : ndarray, shape (S,)

        Returns
        -------
        None

        Examples
        --------
        >>> import numpy as np
        >>> import scratchnet as sn
        >>> from scratchnet.experiments.selection import EarlyStop
        >>> stop = EarlyStop(sn.fast.Ensemble([1, 2, 2], rngs=[0]))
        >>> stop.update(5, np.array([0.3])); stop.steps, stop.best_step.tolist()
        ([5], [5])
        """
        score = np.full_like(self._lowest, nll.mean()) if self.together else nll
        better = score < self._lowest
        self._best[better] = self._flat[better]
        self._lowest[better], self.best_step[better] = score[better], step
        self.steps.append(step)
        self.nll.append(nll)

    def restore(self) -> None:
        """Every member back to the parameters of its lowest validation NLL.

        Returns
        -------
        None

        Examples
        --------
        >>> import numpy as np
        >>> import scratchnet as sn
        >>> from scratchnet.experiments.selection import EarlyStop
        >>> ens = sn.fast.Ensemble([1, 2, 2], rngs=[0])
        >>> stop, first = EarlyStop(ens), ens.params.flat.copy()
        >>> stop.update(1, np.array([0.3])); ens.params.flat[:] += 1.0
        >>> stop.restore(); bool(np.array_equal(ens.params.flat, first))
        True
        """
        self._flat[...] = self._best


def components(dim: int, features: int) -> str:
    """How many principal components of how many features, in words.

    Parameters
    ----------
    dim, features : int

    Returns
    -------
    str

    Examples
    --------
    >>> from scratchnet.experiments.selection import components
    >>> components(16, 30)
    '16 principal components of the 30 features'
    """
    if dim == features:
        return f"all {features} features (rotated to their principal components)"
    return f"{dim} principal components of the {features} features"


def describe_shrinkage(fitted: Any, given: Optional[float]) -> str:
    """A sentence on the shrinkage: given, or chosen, and whether at the grid's edge.

    Parameters
    ----------
    fitted : FittedModel
        Of :func:`scratchnet.experiments.digits.fit_generative`.
    given : float or None
        The shrinkage asked for (None: chosen on validation).

    Returns
    -------
    str

    Examples
    --------
    >>> from scratchnet.experiments.digits import FittedModel
    >>> from scratchnet.experiments.selection import describe_shrinkage
    >>> model = FittedModel(None, None, 0.6, {0.01: 2.0, 0.6: 1.0})
    >>> print(describe_shrinkage(model, None))  # doctest: +NORMALIZE_WHITESPACE
    shrinkage 0.6 chosen on validation (NLL 1.000), the largest on the grid
    0.01..0.6: a larger one might fit better
    """
    if given is not None:
        return f"shrinkage {fitted.shrinkage:g} (given)"
    grid = sorted(fitted.validation_nll)
    text = (f"shrinkage {fitted.shrinkage:g} chosen on validation (NLL "
            f"{fitted.validation_nll[fitted.shrinkage]:.3f})")
    if len(grid) > 1 and fitted.shrinkage in (grid[0], grid[-1]):
        edge = "largest" if fitted.shrinkage == grid[-1] else "smallest"
        other = "larger" if edge == "largest" else "smaller"
        text += (f", the {edge} on the grid {grid[0]:g}..{grid[-1]:g}: a {other} one "
                 "might fit better")
    return text
