r"""The numbers behind the figures: measuring a model without drawing it.

A claim such as "the network has learned the posterior" is checked with
numbers, and every figure of :mod:`scratchnet.plotting` is a picture of
numbers computed here, with NumPy only (this module never imports
matplotlib), so tests, notebooks and scripts can check them directly:

* **Calibration.**  A model whose outputs are the Bayes posterior is
  *calibrated*: among the inputs where it says "class :math:`c` with
  probability 0.8", the answer is :math:`c` four times in five.
  :func:`calibration_bins` groups predictions by confidence and
  :func:`expected_calibration_error` averages the gap,

  .. math::

      \mathrm{ECE} = \sum_b \frac{n_b}{n}
          \bigl|\operatorname{acc}_b - \operatorname{conf}_b\bigr| .

* **The asymmetry of KL.**  :func:`fit_gaussian_by_kl` fits one Gaussian
  :math:`Q` to a density :math:`P` by minimising :math:`KL(P \,\|\, Q)`
  (the cross-entropy's direction: it covers every mode) or
  :math:`KL(Q \,\|\, P)` (it picks one mode).
* **Loss surfaces.**  :func:`loss_landscape` is the loss of one two-class
  sample as a function of its two activations, for the cross-entropy and
  for the squared error.
* **Noisy curves.**  :func:`moving_average` smooths the per-step loss.
"""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple

import numpy as np

from ._estimator_parts import label_text
from ._validation import (
    as_class_indices,
    as_float_array,
    broadcast_named,
    check_choice,
    check_distribution,
    check_positive_int,
)
from .information import kl_divergence
from .softmax import log_softmax
from .temperature import ScratchnetWarning, fit_temperature

__all__ = [
    "CalibrationBins",
    "GaussianFit",
    "calibration_bins",
    "ece_scorer",
    "expected_calibration_error",
    "fit_gaussian_by_kl",
    "fit_temperature",
    "loss_landscape",
    "moving_average",
    "nll_scorer",
]


def moving_average(values: Any, window: int) -> np.ndarray:
    r"""Trailing mean of the last ``window`` values at every position.

    Parameters
    ----------
    values : array_like, shape (n,)
        A sequence, e.g. the training loss of each step.
    window : int
        Number of values averaged (at least 1).

    Returns
    -------
    ndarray, shape (n,)
        ``out[i] = mean(values[max(0, i + 1 - window) : i + 1])``: the first
        ``window - 1`` entries average the shorter prefix.

    Notes
    -----
    Computed from one cumulative sum, :math:`(S_{i+1} - S_{i+1-w}) / w`, so it
    costs :math:`O(n)` whatever the window.

    Examples
    --------
    >>> import scratchnet as sn
    >>> sn.metrics.moving_average([1.0, 2.0, 3.0, 4.0], window=2)
    array([1. , 1.5, 2.5, 3.5])
    """
    values = as_float_array(values, "values")
    if values.ndim != 1:
        raise ValueError(f"values must be one-dimensional, shape (n,); got shape "
                         f"{values.shape}")
    values, window = values.reshape(-1), check_positive_int(window, "window")
    cumsum = np.concatenate(([0.0], np.cumsum(values, dtype=np.float64)))
    end = np.arange(1, values.size + 1)
    start = np.maximum(end - window, 0)
    return (cumsum[end] - cumsum[start]) / (end - start)


class CalibrationBins(NamedTuple):
    r"""Predictions grouped by confidence: how many, how sure, how often right.

    Returned by :func:`calibration_bins`; bin :math:`b` of :math:`B` holds the
    confidences in :math:`(b/B, (b+1)/B]` (the first also holds 0).

    Parameters
    ----------
    counts : ndarray of int, shape (B,)
        :math:`n_b`, the number of predictions in each bin.
    confidence : ndarray, shape (B,)
        :math:`\operatorname{conf}_b`, the mean confidence (largest
        probability of a row) in each bin; 0 for an empty bin.
    accuracy : ndarray, shape (B,)
        :math:`\operatorname{acc}_b`, the fraction of correct argmax
        predictions in each bin; 0 for an empty bin.

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> bins = sn.metrics.CalibrationBins(np.array([0, 2]), np.array([0.0, 0.8]),
    ...                                   np.array([0.0, 0.5]))
    >>> bins.counts.tolist()
    [0, 2]
    """

    counts: np.ndarray
    confidence: np.ndarray
    accuracy: np.ndarray


def _as_rows(probs: Any) -> np.ndarray:
    """Probabilities (n, M), each row a distribution; a vector (n,) is P(class 1)."""
    probs = as_float_array(probs, "probs")
    if probs.ndim == 1:                      # binary: q(1 | x_j) for each sample
        if not np.all((probs >= 0) & (probs <= 1)):
            raise ValueError("probs of shape (n,) must be probabilities of class 1 "
                             f"in [0, 1]; got {probs[(probs < 0) | (probs > 1)][0]}")
        probs = np.stack([1.0 - probs, probs], axis=1)
    if probs.ndim != 2:
        raise ValueError(f"probs must have shape (n, M), or (n,) for the probability "
                         f"of class 1 of two; got {probs.shape}")
    check_distribution(probs, "probs")
    return probs


def calibration_bins(probs: Any, targets: Any, n_bins: int = 10) -> CalibrationBins:
    r"""Count, mean confidence and accuracy of the predictions in each bin.

    Parameters
    ----------
    probs : array_like, shape (n, M) or (n,)
        Predicted class probabilities, each row a distribution; or, for two
        classes, the probability :math:`q(1 \mid x_j)` of class 1 of each
        sample (scikit-learn's ``predict_proba(X)[:, 1]``).
    targets : array_like of int, shape (n,)
        True classes in ``[0, M)``.
    n_bins : int, default 10
        Equal-width bins of the confidence on :math:`[0, 1]`.

    Returns
    -------
    CalibrationBins
        ``(counts, confidence, accuracy)``, each of shape (n_bins,); empty
        bins have mean confidence and accuracy 0.

    Notes
    -----
    The confidence of a prediction is :math:`\max_c q(c \mid x)`, the
    probability of the predicted class :math:`\hat c = \arg\max_c q(c \mid x)`.
    Bin :math:`b` is :math:`(b/B, (b+1)/B]`, closed on the right, as in
    Guo et al. (2017); a confidence of 0.3 falls in :math:`(0.2, 0.3]`
    although ``0.3 * 10`` is ``3.0000000000000004`` in floating point,
    because the bin is found by comparing with the edges, not by scaling.

    Examples
    --------
    >>> import scratchnet as sn
    >>> probs = [[0.9, 0.1], [0.9, 0.1], [0.6, 0.4], [0.3, 0.7]]
    >>> bins = sn.metrics.calibration_bins(probs, [0, 1, 0, 1], n_bins=5)
    >>> bins.counts.tolist(), bins.accuracy.tolist()
    ([0, 0, 1, 1, 2], [0.0, 0.0, 1.0, 1.0, 0.5])
    """
    probs = _as_rows(probs)
    targets = as_class_indices(targets, probs.shape[1])
    if targets.shape != probs.shape[:1]:
        raise ValueError(f"targets must have shape ({probs.shape[0]},); "
                         f"got {targets.shape}")
    n_bins = check_positive_int(n_bins, "n_bins")
    confidence = probs.max(axis=1)
    correct = (probs.argmax(axis=1) == targets).astype(float)
    # Bin b holds the confidences in (b / n_bins, (b + 1) / n_bins]; 0 goes to bin 0.
    bins = np.searchsorted(np.linspace(0.0, 1.0, n_bins + 1)[1:-1], confidence)
    counts = np.bincount(bins, minlength=n_bins)
    filled = counts > 0

    def mean_per_bin(weights: np.ndarray) -> np.ndarray:
        sums = np.bincount(bins, weights=weights, minlength=n_bins)
        return np.divide(sums, counts, out=np.zeros(n_bins), where=filled)

    return CalibrationBins(counts, mean_per_bin(confidence), mean_per_bin(correct))


def expected_calibration_error(probs: Any, targets: Any, n_bins: int = 10) -> float:
    r"""Expected calibration error: the gap between confidence and accuracy.

    Parameters
    ----------
    probs : array_like, shape (n, M) or (n,)
        Predicted class probabilities, each row a distribution; or, for two
        classes, the probability :math:`q(1 \mid x_j)` of class 1 of each
        sample (scikit-learn's ``predict_proba(X)[:, 1]``).
    targets : array_like of int, shape (n,)
        True classes in ``[0, M)``.
    n_bins : int, default 10
        Equal-width bins of the confidence on :math:`[0, 1]`.

    Returns
    -------
    float
        .. math::

            \mathrm{ECE} = \sum_b \frac{n_b}{n}
                \bigl|\operatorname{acc}_b - \operatorname{conf}_b\bigr| ,

        with :math:`\operatorname{conf}_b` the mean confidence (largest
        probability of a row) and :math:`\operatorname{acc}_b` the fraction
        of correct argmax predictions among the :math:`n_b` samples of bin
        :math:`b` (:func:`calibration_bins`).

    Notes
    -----
    Bin :math:`b` is the interval :math:`(b/B, (b+1)/B]` (the first also
    holds 0), as in Guo et al. (2017).  A model that outputs the Bayes
    posterior is calibrated: its ECE tends to 0 as :math:`n` grows.

    Examples
    --------
    >>> import scratchnet as sn
    >>> probs = [[0.9, 0.1], [0.9, 0.1], [0.6, 0.4], [0.3, 0.7]]
    >>> print(f"{sn.metrics.expected_calibration_error(probs, [0, 1, 0, 1]):.4f}")
    0.3750
    >>> p1 = [0.1, 0.1, 0.4, 0.7]          # the same, as P(class 1)
    >>> print(f"{sn.metrics.expected_calibration_error(p1, [0, 1, 0, 1]):.4f}")
    0.3750
    """
    counts, confidence, accuracy = calibration_bins(probs, targets, n_bins)
    return float(counts @ np.abs(accuracy - confidence) / max(counts.sum(), 1))


def loss_landscape(kind: str, correct: Any, other: Any) -> np.ndarray:
    r"""The loss of one two-class sample as a function of its two activations.

    Parameters
    ----------
    kind : {"mse", "cross_entropy"}
    correct, other : array_like (broadcastable)
        Activation :math:`x` of the correct unit and :math:`y` of the other.

    Returns
    -------
    ndarray, the broadcast shape
        ``"mse"``: :math:`(x - 1)^2 + (y + 1)^2`, squared error against the
        targets :math:`\pm 1`; ``"cross_entropy"``:
        :math:`-\log \frac{e^x}{e^x + e^y} = \log(1 + e^{y - x})`.

    Notes
    -----
    MSE is a bowl with its one minimum at :math:`(1, -1)`: it punishes an
    output that is "too right".  Cross-entropy depends on :math:`x - y` only
    and tends to 0 wherever :math:`x \gg y`.  It is computed with
    :func:`scratchnet.log_softmax`, exact for any activations.

    Examples
    --------
    >>> import scratchnet as sn
    >>> sn.metrics.loss_landscape("mse", [1.0, 3.0], [-1.0, -3.0])
    array([0., 8.])
    >>> sn.metrics.loss_landscape("cross_entropy", [0.0, 30.0], [0.0, 0.0]).round(6)
    array([0.693147, 0.      ])
    """
    kind = check_choice(kind, "kind", ("mse", "cross_entropy"))
    correct, other = as_float_array(correct, "correct"), as_float_array(other, "other")
    shape = broadcast_named({"correct": correct.shape, "other": other.shape})
    correct, other = np.broadcast_to(correct, shape), np.broadcast_to(other, shape)
    if kind == "mse":
        return (correct - 1.0) ** 2 + (other + 1.0) ** 2
    return -log_softmax(np.stack([correct, other], axis=-1))[..., 0]


class GaussianFit(NamedTuple):
    r"""A Gaussian :math:`N(\mu, \sigma^2)` fitted to a density, and the KL reached.

    Returned by :func:`fit_gaussian_by_kl`.

    Parameters
    ----------
    mu, sigma : float
        The mean and standard deviation of the fitted Gaussian.
    kl : float
        The divergence the fit minimised, in nats.

    Examples
    --------
    >>> import scratchnet as sn
    >>> fit = sn.metrics.GaussianFit(mu=0.0, sigma=1.0, kl=0.25)
    >>> fit.sigma
    1.0
    """

    mu: float
    sigma: float
    kl: float


def _gaussian_masses(grid: np.ndarray, widths: np.ndarray, mu: Any, sigma: Any
                     ) -> np.ndarray:
    """Discretised N(mu, sigma^2) on ``grid``, rows normalised to sum to 1."""
    z = (grid - np.asarray(mu)[..., None]) / np.asarray(sigma)[..., None]
    masses = np.exp(-0.5 * z * z) * widths
    return masses / masses.sum(axis=-1, keepdims=True)


def fit_gaussian_by_kl(p: Any, grid: Any, direction: str = "forward") -> GaussianFit:
    r"""Fit one Gaussian to a density on a grid by minimising KL in one direction.

    Parameters
    ----------
    p : array_like, shape (n,)
        Density values (need not be normalised) at the points of ``grid``.
    grid : array_like, shape (n,)
        Increasing points; each is the centre of a cell of width
        ``np.gradient(grid)``.
    direction : {"forward", "reverse"}, default "forward"
        ``"forward"`` minimises :math:`KL(P \,\|\, Q)` (mode covering),
        ``"reverse"`` minimises :math:`KL(Q \,\|\, P)` (mode seeking).

    Returns
    -------
    GaussianFit
        ``(mu, sigma, kl)``, with ``kl`` the divergence reached, from
        :func:`scratchnet.kl_divergence` on the discretised densities.

    Notes
    -----
    :math:`KL(P \,\|\, Q) = H(P, Q) - H(P)`, and for Gaussian :math:`Q` the
    cross-entropy is minimised by matching moments, :math:`\mu = E_P[x]`,
    :math:`\sigma^2 = \operatorname{Var}_P[x]` (the forward fit, in closed
    form on the grid).  The reverse fit has no closed form: it is a grid
    search over :math:`(\mu, \sigma)`: 81 x 41 candidates spanning the grid,
    then 81 x 41 again within one step of the best (steps 40 times finer in
    :math:`\mu`, 20 times in :math:`\sigma`).  For
    a mixture of separated modes it lands on one of them; exact ties go to
    the leftmost mode.

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> grid = np.linspace(-8, 8, 801)
    >>> p = np.exp(-0.5 * (grid - 3) ** 2) + np.exp(-0.5 * (grid + 3) ** 2)
    >>> fit = sn.metrics.fit_gaussian_by_kl(p, grid, "forward")
    >>> print(f"{fit.mu:.3f} {fit.sigma:.3f}")   # sigma^2 = 1 + 3^2
    0.000 3.162
    >>> fit = sn.metrics.fit_gaussian_by_kl(p, grid, "reverse")
    >>> print(f"{fit.mu:.2f} {fit.sigma:.2f}")   # about one mode, N(-3, 1)
    -2.98 1.03
    """
    direction = check_choice(direction, "direction", ("forward", "reverse"))
    grid = as_float_array(grid, "grid", allow_inf=False).reshape(-1)
    p = as_float_array(p, "p", allow_inf=False).reshape(-1)
    if grid.size < 3 or p.shape != grid.shape or np.any(np.diff(grid) <= 0):
        raise ValueError("grid must be at least 3 increasing points and p the same "
                         f"shape; got grid {grid.shape}, p {p.shape}")
    if np.any(p < 0) or not p.sum() > 0:
        raise ValueError("p must be non-negative density values, not all 0")
    widths = np.gradient(grid)
    masses = p * widths / np.sum(p * widths)
    if direction == "forward":
        mu = float(masses @ grid)
        sigma = float(np.sqrt(masses @ (grid - mu) ** 2))
        return GaussianFit(mu, sigma, float(kl_divergence(
            masses, _gaussian_masses(grid, widths, mu, sigma))))
    mu_lo, mu_hi = grid[0], grid[-1]
    sigma_lo, sigma_hi = 2 * widths.min(), (grid[-1] - grid[0]) / 2
    for _ in range(2):  # coarse search, then a finer one around the best
        mus, sigmas = np.meshgrid(np.linspace(mu_lo, mu_hi, 81),
                                  np.linspace(sigma_lo, sigma_hi, 41), indexing="ij")
        q = _gaussian_masses(grid, widths, mus.ravel(), sigmas.ravel())
        kls = kl_divergence(q, np.broadcast_to(masses, q.shape), axis=-1)
        best = int(np.argmin(kls))
        mu_step, sigma_step = (mu_hi - mu_lo) / 80, (sigma_hi - sigma_lo) / 40
        mu, sigma = mus.flat[best], sigmas.flat[best]
        mu_lo, mu_hi = mu - mu_step, mu + mu_step
        sigma_lo, sigma_hi = max(sigma - sigma_step, sigma_lo), sigma + sigma_step
    return GaussianFit(float(mu), float(sigma), float(kls[best]))


def nll_scorer(estimator: Any, X: Any, y: Any) -> float:
    r"""Minus the exact mean negative log-likelihood: a scorer for ``GridSearchCV``.

    ``scoring=nll_scorer`` in any scikit-learn model selection tool (greater
    is better, so it returns :math:`-\mathrm{NLL}`).  Unlike scikit-learn's
    ``"neg_log_loss"``, which clips probabilities to :math:`[\epsilon, 1 -
    \epsilon]`, it reads the estimator's ``predict_log_proba`` (or the log of
    ``predict_proba``): a class given probability 0 costs :math:`\infty`,
    with a :class:`~scratchnet.ScratchnetWarning` naming the first such row
    (only the labels of ``y`` count: a 0 for another class costs nothing).

    Parameters
    ----------
    estimator : fitted classifier
        With ``classes_`` and ``predict_log_proba`` or ``predict_proba``.
    X : array_like, shape (n, D)
    y : array_like, shape (n,)
        Labels of any kind, each in ``estimator.classes_``.

    Returns
    -------
    float
        :math:`\frac1n \sum_j \log q(y_j \mid x_j)`, in nats (at most 0).

    Examples
    --------
    >>> import numpy as np
    >>> from scratchnet.estimators import GaussianClassifier
    >>> from scratchnet.metrics import nll_scorer
    >>> X = np.array([[0.0], [0.5], [3.0], [3.5]])
    >>> clf = GaussianClassifier().fit(X, ["a", "a", "b", "b"])
    >>> print(f"{nll_scorer(clf, [[1.75]], ['a']):.4f}")    # log 1/2
    -0.6931
    """
    log_q, codes = _log_proba_and_codes(estimator, X, y)
    log_q_y = log_q[np.arange(len(codes)), codes]
    lost = np.flatnonzero(log_q_y == -np.inf)
    if lost.size:                       # only the given labels' probabilities count
        warnings.warn(f"{type(estimator).__name__} gives probability 0 to the label "
                      f"of {lost.size} of {len(codes)} row(s) of y (first: row "
                      f"{lost[0]}, {label_text(np.asarray(y)[lost[0]])}): their NLL "
                      "is infinite, and so is the mean", ScratchnetWarning,
                      stacklevel=2)
    return float(log_q_y.mean())


def ece_scorer(estimator: Any, X: Any, y: Any) -> float:
    r"""Minus the expected calibration error on labels: a scorer for ``GridSearchCV``.

    :func:`expected_calibration_error` (10 equal-width
    bins of the top-class confidence) of ``predict_proba(X)`` against the
    labels ``y`` of any kind, negated so that greater is better.

    Parameters
    ----------
    estimator : fitted classifier
    X : array_like, shape (n, D)
    y : array_like, shape (n,)

    Returns
    -------
    float
        :math:`-\mathrm{ECE}`, in :math:`[-1, 0]`.

    Examples
    --------
    >>> import numpy as np
    >>> from scratchnet.estimators import GaussianClassifier
    >>> from scratchnet.metrics import ece_scorer
    >>> X = np.array([[0.0], [0.5], [3.0], [3.5]])
    >>> clf = GaussianClassifier().fit(X, ["a", "a", "b", "b"])
    >>> print(f"{ece_scorer(clf, [[1.75], [1.75]], ['a', 'b']):.4f}")  # 1/2 right
    0.0000
    """
    log_q, codes = _log_proba_and_codes(estimator, X, y)
    return -expected_calibration_error(np.exp(log_q), codes)


def _log_proba_and_codes(estimator: Any, X: Any, y: Any) -> tuple:
    """The estimator's log-probabilities of X and y as indices into classes_."""
    predicts = hasattr(estimator, "predict_proba") or hasattr(estimator,
                                                              "predict_log_proba")
    if not (hasattr(estimator, "classes_") and predicts):
        raise TypeError("estimator must be a fitted classifier (with classes_ and "
                        f"predict_proba); got {type(estimator).__name__}")
    classes = np.asarray(estimator.classes_)
    labels = np.asarray(y)
    codes = np.searchsorted(classes, labels)
    codes = np.clip(codes, 0, len(classes) - 1)
    unknown = classes[codes] != labels
    if unknown.any():
        raise ValueError(f"y has a label that is not a class of the estimator: "
                         f"{label_text(labels[np.argmax(unknown)])} (its classes are "
                         f"{', '.join(label_text(c) for c in classes)})")
    if hasattr(estimator, "predict_log_proba"):
        log_q = np.asarray(estimator.predict_log_proba(X), dtype=np.float64)
    else:
        with np.errstate(divide="ignore"):
            log_q = np.log(np.asarray(estimator.predict_proba(X), dtype=np.float64))
    return log_q, codes
