r"""From scores to probabilities: logsumexp, softmax, log-softmax and sigmoid.

A classifier with :math:`M` outputs ("logits") :math:`f_1(x), \dots, f_M(x)`
turns them into a probability distribution over the classes with the softmax

.. math::

    q(C = i \mid x) = \frac{e^{f_i(x)}}{\sum_{j=1}^{M} e^{f_j(x)}} .

Adding the same constant to every logit does not change the softmax, and that
is the whole trick behind a stable implementation: subtract the largest logit
of each row before exponentiating, so the largest exponent is :math:`e^0 = 1`
and nothing overflows.  The logarithm of the normaliser is the *log-sum-exp*

.. math::

    \operatorname{logsumexp}(f) = \log \sum_j e^{f_j}
        = m + \log \sum_j e^{f_j - m}, \qquad m = \max_j f_j ,

and the log-probabilities that every loss needs are
:math:`\log q_i = f_i - \operatorname{logsumexp}(f)`, computed without ever
forming :math:`\log` of a number that underflowed to 0.

With two classes the softmax of :math:`(s, 0)` is the logistic sigmoid
:math:`\sigma(s) = 1 / (1 + e^{-s})`, the output of a binary classifier.

Conventions shared by every function here:

* ``axis=-1`` by default: each *row* is one distribution (SciPy's softmax
  normalises over the whole array unless told otherwise; we do not).
* A logit of ``-inf`` means probability exactly 0; ``+inf`` and NaN are
  rejected with a ``ValueError`` (``logsumexp`` alone returns ``+inf``).
* float32 input gives float32 output; integer input is computed in float64.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._validation import (
    _where,
    as_class_indices,
    as_float_array,
    check_no_nan,
    check_positive_int,
    normalize_axis,
    unwrap,
)

__all__ = ["log_sigmoid", "log_softmax", "logsumexp", "one_hot", "sigmoid", "softmax"]


def _row_max(x: np.ndarray, axis: int, name: str, *, allow_posinf: bool) -> np.ndarray:
    """The largest entry of each slice along ``axis`` (keepdims), made a safe shift.

    NaN propagates through ``max``, so the small array of maxima tells whether
    ``x`` holds a NaN without a second pass over ``x``.  A slice whose maximum
    is ``-inf`` (every entry ``-inf``) gets the shift 0 so that ``x - m`` stays
    ``-inf`` instead of becoming NaN.
    """
    if x.shape[axis] == 0:
        raise ValueError(
            f"{name} must have at least one entry along axis {axis}; "
            f"got shape {x.shape}"
        )
    m = np.max(x, axis=axis, keepdims=True)
    if not np.isfinite(m).all():
        if np.isnan(m).any():
            check_no_nan(x, name)
        if not allow_posinf and np.isposinf(m).any():
            raise ValueError(
                f"{name} must not contain +inf (an infinite score has no softmax); "
                f"got +inf{_where(np.isposinf(x))}"
            )
        m = np.where(np.isfinite(m), m, 0).astype(x.dtype, copy=False)
    return m


def _check_some_finite(total_is_zero: np.ndarray, name: str, axis: int) -> None:
    """Reject slices whose softmax normaliser is 0 (every logit -inf)."""
    if total_is_zero.any():
        raise ValueError(
            f"{name} has a slice along axis {axis} where every entry is -inf "
            "(every probability 0), so it cannot be normalised"
        )


def logsumexp(x: Any, axis: int = -1, keepdims: bool = False) -> np.ndarray:
    r"""Log of the sum of exponentials along ``axis``, without overflow.

    .. math::

        \operatorname{logsumexp}(x) = \log \sum_j e^{x_j}
            = m + \log \sum_j e^{x_j - m}, \qquad m = \max_j x_j .

    Parameters
    ----------
    x : array_like, shape (..., M, ...)
        Real scores.  ``-inf`` entries contribute :math:`e^{-\infty} = 0`.
    axis : int, default -1
        The axis to reduce.
    keepdims : bool, default False
        Keep the reduced axis with length 1, so the result broadcasts
        against ``x``.

    Returns
    -------
    ndarray
        ``x``'s shape without ``axis`` (or with length 1 there if
        ``keepdims``); float32 stays float32, integers give float64.

    Notes
    -----
    The shift by the per-slice maximum :math:`m` makes the largest term
    :math:`e^0 = 1`, so the sum lies in :math:`[1, M]` and its log is exact to
    rounding.  A slice of only ``-inf`` gives ``-inf`` (the log of an empty
    sum); a ``+inf`` entry gives ``+inf``.  Matches
    ``scipy.special.logsumexp`` and ``torch.logsumexp`` on such input, except
    that NaN is rejected.

    Examples
    --------
    >>> import scratchnet as sn
    >>> sn.logsumexp([1000.0, 1000.0]) - 1000.0   # log 2, no overflow
    0.6931471805599...
    >>> sn.logsumexp([[0.0, -np.inf], [-np.inf, -np.inf]])
    array([  0., -inf])
    """
    x = as_float_array(x, "x", check_nan=False)
    axis = normalize_axis(axis, x.ndim)
    m = _row_max(x, axis, "x", allow_posinf=True)
    # Where m was not finite the shift is 0: a +inf entry then gives
    # exp(+inf) = +inf and the answer +inf, a slice of -inf gives log(0) = -inf.
    with np.errstate(over="ignore", divide="ignore"):
        shifted = np.subtract(x, m)
        np.exp(shifted, out=shifted)
        out = np.log(shifted.sum(axis=axis, keepdims=True))
    out += m
    if not keepdims:
        out = np.squeeze(out, axis=axis)
    return unwrap(out)


def log_softmax(x: Any, axis: int = -1) -> np.ndarray:
    r"""Log-probabilities along ``axis``: :math:`x_i - \operatorname{logsumexp}(x)`.

    Parameters
    ----------
    x : array_like, shape (..., M, ...)
        Logits.  ``-inf`` means probability 0 (log-probability ``-inf``).
    axis : int, default -1
        The class axis.

    Returns
    -------
    ndarray, same shape as ``x``
        Log-probabilities; each slice along ``axis`` has
        ``logsumexp == 0``.  float32 stays float32.

    Notes
    -----
    Computed as ``(x - m) - log(sum(exp(x - m)))`` with :math:`m` the maximum
    of each slice, so it is finite wherever the logit is finite, even when
    the probability itself underflows (``log(softmax(x))`` would give
    ``-inf`` there).  A slice of only ``-inf`` and any ``+inf`` or NaN are
    rejected with ``ValueError``.  :func:`scratchnet.fast.log_softmax`
    computes the same numbers in cache-sized blocks, with less memory.

    Examples
    --------
    >>> import scratchnet as sn
    >>> sn.log_softmax([0.0, 0.0])
    array([-0.69314718, -0.69314718])
    >>> sn.log_softmax([0.0, -1e4])   # log(softmax) would give -inf
    array([     0., -10000.])
    """
    x = as_float_array(x, "x", check_nan=False)
    axis = normalize_axis(axis, x.ndim)
    m = _row_max(x, axis, "x", allow_posinf=False)
    with np.errstate(over="ignore"):
        shifted = np.subtract(x, m)  # the largest logit of each slice is now 0
    total = np.exp(shifted).sum(axis=axis, keepdims=True)  # in [1, M]
    _check_some_finite(total == 0, "x", axis)
    return shifted - np.log(total)


def softmax(x: Any, axis: int = -1) -> np.ndarray:
    r"""Softmax along ``axis``: :math:`q_i = e^{x_i} / \sum_j e^{x_j}`.

    Parameters
    ----------
    x : array_like, shape (..., M, ...)
        Logits.  ``-inf`` gives probability exactly 0.
    axis : int, default -1
        The class axis (SciPy's default ``axis=None`` normalises the whole
        array; ours normalises each row).

    Returns
    -------
    ndarray, same shape as ``x``
        Probabilities in :math:`[0, 1]` summing to 1 along ``axis``.

    Notes
    -----
    Invariant to adding a constant to every logit of a slice, which is how
    it is computed: :math:`e^{x_i - m} / \sum_j e^{x_j - m}` with :math:`m`
    the slice maximum, so logits of magnitude 1e300 are fine.  One temporary
    of ``x``'s size.  A slice of only ``-inf`` and any ``+inf`` or NaN are
    rejected with ``ValueError``.

    Examples
    --------
    >>> import scratchnet as sn
    >>> sn.softmax([[1.0, 2.0, 3.0, 4.0], [3.0, 0.0, 0.0, 0.0]]).round(4)
    array([[0.0321, 0.0871, 0.2369, 0.6439],
           [0.87  , 0.0433, 0.0433, 0.0433]])
    >>> sn.softmax([1e300, 0.0, -np.inf])
    array([1., 0., 0.])
    """
    x = as_float_array(x, "x", check_nan=False)
    axis = normalize_axis(axis, x.ndim)
    m = _row_max(x, axis, "x", allow_posinf=False)
    with np.errstate(over="ignore"):
        e = np.subtract(x, m)
    np.exp(e, out=e)
    total = e.sum(axis=axis, keepdims=True)
    _check_some_finite(total == 0, "x", axis)
    e /= total
    return e


def sigmoid(x: Any) -> np.ndarray:
    r"""The logistic sigmoid :math:`\sigma(x) = 1 / (1 + e^{-x})`, elementwise.

    Parameters
    ----------
    x : array_like
        Real scores of any shape; ``+-inf`` allowed.

    Returns
    -------
    ndarray (or scalar for scalar input)
        Values in :math:`[0, 1]`, same shape as ``x``.

    Notes
    -----
    :math:`\sigma(x)` is the softmax of the two logits :math:`(x, 0)`.  It is
    evaluated as :math:`1 / (1 + e^{-|x|})` for :math:`x \ge 0` and
    :math:`e^{-|x|} / (1 + e^{-|x|})` for :math:`x < 0`, so the exponential
    never overflows and small probabilities keep full relative precision
    (``sigmoid(-800)`` is about ``3.7e-348``, which underflows to 0, while
    ``sigmoid(-700)`` is exact).  Also :math:`1 - \sigma(x) = \sigma(-x)`.

    Examples
    --------
    >>> import scratchnet as sn
    >>> sn.sigmoid([0.0, 1e300, -np.inf])
    array([0.5, 1. , 0. ])
    """
    x = as_float_array(x, "x")
    e = np.exp(-np.abs(x))
    out = np.where(x >= 0, 1.0, e)
    e += 1.0
    out /= e
    return unwrap(out)


def log_sigmoid(x: Any) -> np.ndarray:
    r"""Log of the sigmoid, :math:`\log \sigma(x) = -\log(1 + e^{-x})`, elementwise.

    Parameters
    ----------
    x : array_like
        Real scores of any shape; ``+-inf`` allowed.

    Returns
    -------
    ndarray (or scalar for scalar input)
        Values in :math:`[-\infty, 0]`, same shape as ``x``.

    Notes
    -----
    Evaluated as :math:`\min(x, 0) - \log(1 + e^{-|x|})` (``log1p``), exact
    for large positive :math:`x` (where :math:`\log \sigma(x) \approx
    -e^{-x}`) and for large negative :math:`x` (where it is :math:`\approx
    x`).  :math:`\log(1 - \sigma(x)) = \log \sigma(-x)`.

    Examples
    --------
    >>> import scratchnet as sn
    >>> sn.log_sigmoid([0.0, -1000.0, 40.0])
    array([-6.93147181e-01, -1.00000000e+03, -4.24835426e-18])
    """
    x = as_float_array(x, "x")
    out = np.minimum(x, 0.0)
    out -= np.log1p(np.exp(-np.abs(x)))
    return unwrap(out)


def one_hot(targets: Any, num_classes: int) -> np.ndarray:
    r"""Encode class indices as one-hot rows: ``out[..., c] = 1``, 0 elsewhere.

    Parameters
    ----------
    targets : array_like of int, shape (...)
        Class indices in ``[0, num_classes)``.
    num_classes : int
        :math:`M`, the number of classes (at least 1).

    Returns
    -------
    ndarray of float64, shape (..., num_classes)
        Each row is the distribution that puts all its mass on the target
        class.  (``torch.nn.functional.one_hot`` returns integers; we return
        floats because one-hot rows are used as target distributions.)

    Examples
    --------
    >>> import scratchnet as sn
    >>> sn.one_hot([0, 2], num_classes=3)
    array([[1., 0., 0.],
           [0., 0., 1.]])
    """
    num_classes = check_positive_int(num_classes, "num_classes")
    targets = as_class_indices(targets, num_classes)
    out = np.zeros((*targets.shape, num_classes))
    np.put_along_axis(out, targets[..., None], 1.0, axis=-1)
    return out
