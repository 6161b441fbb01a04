r"""Temperature scaling: one number that repairs a network's confidence.

A network trained long enough on a fixed sample keeps lowering its training
loss by making its logits larger, and on new data it becomes *overconfident*:
among the answers it gives with probability 0.99, fewer than 99 in 100 are
right, while its accuracy may still improve (Guo et al., "On Calibration of
Modern Neural Networks", ICML 2017, https://arxiv.org/abs/1706.04599).  The
simplest repair divides every logit vector :math:`z` by one temperature
:math:`T > 0`, fitted on held-out data:

.. math::

    \begin{aligned}
    q_T(c \mid x) &= \operatorname{softmax}(z(x) / T)_c, \\
    T^\ast &= \arg\min_{T > 0}\; \mathrm{NLL}(T)
           = \arg\min_{T > 0}\; -\frac1n \sum_{j=1}^{n} \log q_T(c_j \mid x_j) .
    \end{aligned}

:math:`T > 1` softens the outputs, :math:`T < 1` sharpens them, and dividing
by a positive number keeps the order of the logits: the arg-max, hence the
accuracy, is unchanged.  Written in :math:`\beta = 1/T`,

.. math::

    \begin{aligned}
    \mathrm{NLL}(\beta) &= \frac1n \sum_j \Big(\operatorname{logsumexp}_c
        \beta z_{jc} - \beta z_{j c_j}\Big), \\
    \mathrm{NLL}'(\beta) &= \frac1n \sum_j
        \big(\mathbb{E}_{q_\beta}[z_j] - z_{j c_j}\big), \\
    \mathrm{NLL}''(\beta) &= \frac1n \sum_j \operatorname{Var}_{q_\beta}[z_j] \ge 0,
    \end{aligned}

a convex function of one variable: :func:`fit_temperature` finds its minimum
with Newton's method, kept inside a bracket of the sign change of
:math:`\mathrm{NLL}'`.  Since :math:`\log T = -\log \beta` is monotone, the
same point minimises the NLL in :math:`\log T`.
"""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple

import numpy as np

from ._validation import as_class_indices, as_float_array, check_scalar
from .exceptions import ScratchnetWarning  # its home before; importable from here
from .losses import nll_loss
from .softmax import log_softmax, softmax

__all__ = ["TemperatureChoice", "choose_temperature", "fit_temperature",
           "temperature_nll", "temperature_scale"]


def _logits(logits: Any) -> np.ndarray:
    """``logits`` as a finite float64 array of shape (n, M), M >= 2."""
    z = as_float_array(logits, "logits", allow_inf=False).astype(np.float64, copy=False)
    if z.ndim != 2 or z.shape[1] < 2:
        raise ValueError(f"logits must have shape (n, M) with M >= 2 classes; got "
                         f"shape {z.shape}")
    return z


def _check_targets(targets: Any, z: np.ndarray) -> np.ndarray:
    """Class indices in [0, M), one per row of the logits."""
    t = as_class_indices(targets, z.shape[1])
    if t.shape != (z.shape[0],) or t.size == 0:
        raise ValueError(f"targets must have shape ({z.shape[0]},), one class per row "
                         f"of logits, at least one; got shape {t.shape}")
    return t


def _temperature(temperature: Any) -> float:
    return check_scalar(temperature, "temperature", low=0.0, low_inclusive=False,
                        high=np.inf, high_inclusive=False)


def temperature_scale(logits: Any, temperature: float) -> np.ndarray:
    r"""The temperature-scaled probabilities :math:`\operatorname{softmax}(z / T)`.

    Parameters
    ----------
    logits : array_like, shape (n, M)
        Finite logits :math:`z` (or log-probabilities: any scores whose
        softmax is the model's answer).
    temperature : float
        :math:`T > 0`, finite.

    Returns
    -------
    ndarray of float64, shape (n, M)
        Each row a distribution with the same arg-max as ``logits``.

    Examples
    --------
    >>> import scratchnet as sn
    >>> z = [[2.0, 0.0]]
    >>> sn.temperature.temperature_scale(z, 1.0).round(4)
    array([[0.8808, 0.1192]])
    >>> sn.temperature.temperature_scale(z, 2.0).round(4)   # softer
    array([[0.7311, 0.2689]])
    """
    return softmax(_logits(logits) / _temperature(temperature), axis=1)


def temperature_nll(logits: Any, targets: Any, temperature: float) -> float:
    r"""The mean negative log-likelihood of the labels at temperature :math:`T`.

    Parameters
    ----------
    logits : array_like, shape (n, M)
    targets : array_like of int, shape (n,)
        Classes in ``[0, M)``.
    temperature : float
        :math:`T > 0`.

    Returns
    -------
    float
        :math:`-\frac1n \sum_j \log \operatorname{softmax}(z_j / T)_{c_j}`,
        in nats: :func:`scratchnet.nll_loss` of :func:`scratchnet.log_softmax`
        (exact for large logits).

    Examples
    --------
    >>> import scratchnet as sn
    >>> z = [[2.0, 0.0], [2.0, 0.0]]
    >>> print(f"{sn.temperature.temperature_nll(z, [0, 1], 1.0):.4f}")
    1.1269
    >>> print(f"{sn.temperature.temperature_nll(z, [0, 1], 1e6):.4f}")  # ~ log 2
    0.6931
    """
    z = _logits(logits)
    t = _check_targets(targets, z)
    log_q = log_softmax(z / _temperature(temperature), axis=1)
    return float(nll_loss(log_q, t))                # -mean_j log q(c_j | x_j)


def fit_temperature(logits: Any, targets: Any, *,
                    bounds: tuple[float, float] = (1e-2, 1e2)) -> float:
    r"""The temperature that minimises the held-out negative log-likelihood.

    Parameters
    ----------
    logits : array_like, shape (n, M)
        Finite logits of held-out data (a validation split), or a model's
        log-posteriors.
    targets : array_like of int, shape (n,)
        Their classes, in ``[0, M)``.
    bounds : (float, float), default (0.01, 100)
        :math:`0 < T_{\min} < T_{\max}`: the search interval.

    Returns
    -------
    float
        :math:`T^\ast`, the minimiser of
        :func:`~scratchnet.temperature.temperature_nll` on ``[T_min, T_max]``:
        a bound when the minimum lies beyond it (logits
        that separate every class perfectly keep lowering the NLL as
        :math:`T \to 0`; logits no better than chance, as :math:`T \to \infty`),
        with a :class:`~scratchnet.ScratchnetWarning` that says which.

    Notes
    -----
    Newton's method on :math:`\beta = 1/T` (see the module's docstring),
    starting from :math:`\beta = 1` (or the nearest bound) inside a bracket
    :math:`[\beta_{lo}, \beta_{hi}]` where :math:`\mathrm{NLL}'` changes
    sign; a step that leaves the bracket is replaced by bisection (in
    :math:`\log \beta`), and a Newton step under :math:`10^{-13} \beta` ends
    the search.  The derivative is exact, so the result is the minimiser to
    rounding (:math:`|\Delta\beta| \le 10^{-13} \beta`), in a few
    iterations where Newton's method converges (at most 200).

    Examples
    --------
    Two inputs with the same logits and different labels: the best
    prediction is 1/2 each, i.e. :math:`T \to \infty` (the upper bound).
    With three of four right, the softmax of :math:`(2/T, 0)` should be
    :math:`(3/4, 1/4)`: :math:`2/T = \log 3`.

    >>> import numpy as np
    >>> import scratchnet as sn
    >>> z = [[2.0, 0.0]] * 4
    >>> T = sn.temperature.fit_temperature(z, [0, 0, 0, 1])
    >>> print(f"{T:.6f} {2 / np.log(3):.6f}")
    1.820478 1.820478
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     T = sn.temperature.fit_temperature(z[:2], [0, 1])
    >>> T, caught[0].category.__name__
    (100.0, 'ScratchnetWarning')
    """
    z = _logits(logits)
    t = _check_targets(targets, z)
    temperature, at_bound = _minimise(z, t, *_bounds(bounds))
    if at_bound:
        advice = ("" if at_bound.startswith("the NLL is least") else "; the minimum "
                  "lies beyond it (use more held-out data, or widen bounds)")
        warnings.warn(f"fit_temperature returned its bound {temperature:g}: "
                      f"{at_bound}{advice}", ScratchnetWarning, stacklevel=2)
    return temperature


def _slope_and_curvature(z: np.ndarray, z_true: np.ndarray, beta: float) -> tuple:
    """Per-row :math:`\\mathrm{NLL}'(\\beta)` terms and the mean curvature."""
    q = softmax(beta * z, axis=1)
    mean_z = (q * z).sum(axis=1)                                # E_q[z_j]
    var_z = (q * (z - mean_z[:, None]) ** 2).sum(axis=1)        # Var_q[z_j]
    return mean_z - z_true, float(var_z.mean())


#: the sharpest and softest temperatures that data can ask for and still be
#: read as a calibration: beyond them a fit says the held-out logits separate
#: the classes (T -> 0) or rank them no better than chance (T -> infinity)
SHARPEST, SOFTEST = 0.25, 1e2


def _cut_off(minimum: float, side: str, bound: float) -> str:
    """Why a fit stopped at a bound the caller narrowed: the minimum lies past it."""
    return (f"the NLL is least at T = {minimum:.3g}, {side} = {bound:g}: the bounds "
            "given cut the minimum off (widen them to reach it)")


def _minimise(z: np.ndarray, t: np.ndarray, low: float, high: float) -> tuple:
    """(T*, why it is a bound or "") by Newton's method in beta = 1/T.

    At a bound the reason says whether the data's own minimum lies past it
    (bounds narrower than :data:`SHARPEST` .. :data:`SOFTEST`, cutting it
    off) or the NLL keeps falling toward a separation or a coin toss.
    """
    z_true = z[np.arange(len(t)), t]

    def slope_and_curvature(beta: float) -> tuple:
        rows, curvature = _slope_and_curvature(z, z_true, beta)
        return float(rows.mean()), curvature

    b_lo, b_hi = 1.0 / high, 1.0 / low
    if slope_and_curvature(b_lo)[0] >= 0:       # rising already: T -> infinity
        if high < SOFTEST and slope_and_curvature(1.0 / SOFTEST)[0] < 0:
            return high, _cut_off(_minimise(z, t, high, SOFTEST)[0], "above T_max",
                                  high)
        return high, (f"the NLL still falls as T grows past T_max = {high:g} (the "
                      "logits rank the right class no better than chance)")
    if slope_and_curvature(b_hi)[0] <= 0:       # still falling: T -> 0
        if low > SHARPEST and slope_and_curvature(1.0 / SHARPEST)[0] > 0:
            return low, _cut_off(_minimise(z, t, SHARPEST, low)[0], "below T_min",
                                 low)
        return low, (f"the NLL still falls as T drops below T_min = {low:g} (the "
                     "logits separate every class of these data, or nearly: the few "
                     "errors they make cost less than the sharpening gains)")
    beta = min(max(1.0, b_lo), b_hi)
    for _ in range(200):
        slope, curvature = slope_and_curvature(beta)
        if slope == 0:                          # the minimum, exactly
            break
        if slope > 0:
            b_hi = beta
        else:
            b_lo = beta
        step = slope / curvature if curvature > 0 else np.inf
        if abs(step) <= 1e-13 * beta:           # converged (to rounding)
            beta -= step
            break
        new = beta - step
        if not b_lo < new < b_hi:               # out of the bracket: bisect
            new = float(np.sqrt(b_lo * b_hi))
        beta = new
        if b_hi - b_lo <= 1e-15 * b_hi:         # the bracket has closed
            break
    return 1.0 / beta, ""


class TemperatureChoice(NamedTuple):
    r"""The temperature to apply, the one fitted, and why they differ.

    Returned by :func:`choose_temperature`.

    Parameters
    ----------
    temperature : float
        What to divide the logits by: ``fitted``, or 1 where ``kept`` says why.
    fitted : float
        The minimiser of the held-out NLL on the search interval.
    kept : str
        Empty when the fit is applied; otherwise the reason :math:`T = 1`
        is kept, a sentence for a table or a warning.

    Examples
    --------
    >>> from scratchnet.temperature import TemperatureChoice
    >>> TemperatureChoice(1.0, 0.01, "at its bound").kept
    'at its bound'
    """

    temperature: float
    fitted: float
    kept: str


def choose_temperature(logits: Any, targets: Any, *,
                       bounds: tuple[float, float] = (0.25, 1e2),
                       z: float = 2.0) -> TemperatureChoice:
    r"""Temperature scaling's one policy: apply the fit only where the data can tell.

    :func:`fit_temperature` returns the minimiser of the held-out NLL; this
    function decides whether to *use* it.  It keeps :math:`T = 1` where

    * the fit ended at a bound of its search (a validation set that the
      network separates perfectly drives :math:`T \to 0`), or
    * the held-out set is too small to tell the fitted :math:`T` from 1:
      :math:`|1/T^\ast - 1|` is at most ``z`` standard errors of
      :math:`\beta^\ast = 1/T^\ast`, or the temperatures fitted on each
      half of the set (alternate rows) do not lower the other half's summed
      NLL (two-fold cross-validation of the fit itself).

    Parameters
    ----------
    logits : array_like, shape (n, M)
        Finite held-out logits (or log-probabilities).
    targets : array_like of int, shape (n,)
        Their classes, in ``[0, M)``.
    bounds : (float, float), default (0.25, 100)
        The search interval of :func:`fit_temperature`.  Sharpening is
        bounded at four times by default: a fit that wants more says that
        the held-out set holds almost no errors, and so cannot say how
        confident the network should be on the errors it makes elsewhere (a
        network on breast_cancer right on all but one of 115 validation
        samples fits :math:`T = 0.041`; sharpened 24 times, its test NLL
        rose from 0.19 to 3.85).
    z : float, default 2.0
        Standard errors the fitted :math:`1/T` must lie from 1 (about a
        two-sided 5 % test); 0 applies every fit inside the bounds (and
        skips the check on halves).

    Returns
    -------
    TemperatureChoice
        ``(temperature, fitted, kept)``.

    Notes
    -----
    :math:`\beta^\ast` solves :math:`\frac1n \sum_j g_j(\beta) = 0` with
    :math:`g_j(\beta) = \mathbb{E}_{q_\beta}[z_j] - z_{j c_j}`, the derivative
    of sample :math:`j`'s loss; as for any such M-estimator its standard
    error is the robust ("sandwich") one,

    .. math::

        \operatorname{se}(\beta^\ast) = \frac{\sqrt{\frac1n \sum_j g_j^2 / n}}
            {\frac1n \sum_j \operatorname{Var}_{q_\beta}[z_j]} ,

    which stays honest when a few misclassified samples carry the fit: a
    network with one error on 145 validation digits
    (``NetworkClassifier(random_state=1)``) fits :math:`T = 0.44`,
    :math:`1/T = 2.3 \pm 0.9`, which applied would raise its test NLL from
    0.110 to 0.162.  The standard error itself comes from the few samples
    that carry such a fit, so the check on halves backs it.

    Examples
    --------
    Forty rows with the same logits, thirty right: the softmax of
    :math:`(2 / T, 0)` should give 3/4, so :math:`T^\ast = 2 / \log 3`, well
    away from 1 for forty samples.  Four rows cannot say as much:

    >>> import scratchnet as sn
    >>> z = [[2.0, 0.0]] * 40
    >>> choice = sn.temperature.choose_temperature(z, [0] * 30 + [1] * 10)
    >>> print(f"{choice.temperature:.4f}", choice.kept == "")
    1.8205 True
    >>> choice = sn.temperature.choose_temperature(z[:4], [0, 0, 0, 1])
    >>> print(f"{choice.temperature:g} {choice.fitted:.4f}"); print(choice.kept)
    1 1.8205
    the 4 held-out samples cannot tell T = 1.82 from 1 (1/T = 0.55 +- 0.58)
    """
    logits_ = _logits(logits)
    t = _check_targets(targets, logits_)
    z = check_scalar(z, "z", low=0.0, high=np.inf, high_inclusive=False)
    fitted, at_bound = _minimise(logits_, t, *_bounds(bounds))
    if at_bound:
        return TemperatureChoice(1.0, fitted, f"the fit ended at its bound "
                                 f"T = {fitted:g}: {at_bound}")
    beta = 1.0 / fitted
    rows, curvature = _slope_and_curvature(
        logits_, logits_[np.arange(len(t)), t], beta)
    se = float(np.sqrt(np.mean(rows**2) / len(t)) / curvature)
    if abs(beta - 1.0) <= z * se:
        return TemperatureChoice(1.0, fitted, f"the {len(t)} held-out samples cannot "
                                 f"tell T = {fitted:.3g} from 1 (1/T = {beta:.2f} "
                                 f"+- {se:.2f})")
    halves = (np.arange(len(t)) % 2 == 0, np.arange(len(t)) % 2 == 1)
    if z > 0 and len(t) >= 2:
        gain = 0.0                      # summed NLL, T = 1 minus T of the other half
        for fit_on, test_on in (halves, halves[::-1]):
            half = _minimise(logits_[fit_on], t[fit_on], *_bounds(bounds))[0]
            gain += test_on.sum() * (
                temperature_nll(logits_[test_on], t[test_on], 1.0)
                - temperature_nll(logits_[test_on], t[test_on], half))
        if not gain > 0:
            return TemperatureChoice(1.0, fitted, f"fitted on either half of the "
                                     f"{len(t)} held-out samples, T does not lower "
                                     f"the other half's NLL ({-gain:+.3g} nats in "
                                     "all: a fit carried by a few samples)")
    return TemperatureChoice(fitted, fitted, "")


def _bounds(bounds: Any) -> tuple[float, float]:
    """``(T_min, T_max)`` with 0 < T_min < T_max < inf."""
    if not isinstance(bounds, (tuple, list)) or len(bounds) != 2:
        raise TypeError(f"bounds must be a pair (T_min, T_max); got {bounds!r}")
    low = check_scalar(bounds[0], "bounds[0]", low=0.0, low_inclusive=False)
    high = check_scalar(bounds[1], "bounds[1]", low=low, low_inclusive=False,
                        high=np.inf, high_inclusive=False)
    return low, high
