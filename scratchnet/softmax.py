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
* An axis of length 0 is an empty sum: ``logsumexp`` gives ``-inf`` there,
  ``softmax`` and ``log_softmax`` an empty array of the same shape (as
  SciPy and PyTorch do).
* float32 input gives float32 output; integer input is computed in float64;
  float16 is rejected (too coarse: ``exp`` overflows past 11).

**The dominant term.**  When one logit leads the others by 40, the sum
:math:`\sum_j e^{x_j - m} = 1 + 4.2 \cdot 10^{-18}` rounds to 1 and its log
to 0, although :math:`\log(1 + 4.2 \cdot 10^{-18}) = 4.2 \cdot 10^{-18}` is
a perfectly representable loss.  So the largest term, :math:`e^0 = 1`, is
kept out of the sum, and the log of the total is ``log1p`` of the sum of the
*others* (the fix of SciPy's issue gh-18295): every result here keeps its
relative precision however confident the prediction.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._scores import check_one_hot, check_scores
from ._validation import as_float_array, at_index, unwrap

__all__ = ["log_sigmoid", "log_softmax", "logit", "logsumexp", "one_hot", "sigmoid",
           "softmax"]


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
    :math:`e^0 = 1`; it is kept out of the sum, which is taken as
    :math:`m + \operatorname{log1p}(\sum_{j \ne j^*} e^{x_j - m})`, so that
    ``logsumexp([0, -40])`` is :math:`4.248 \cdot 10^{-18}`, not 0 (SciPy
    gh-18295).  A slice of only ``-inf``, or an axis of length 0, gives
    ``-inf`` (the log of an empty sum); a ``+inf`` entry gives ``+inf``.
    Matches ``scipy.special.logsumexp`` and ``torch.logsumexp`` on such
    input, except that NaN is rejected.

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> sn.logsumexp([1000.0, 1000.0]) - 1000.0   # log 2, no overflow
    0.6931471805599...
    >>> sn.logsumexp([[0.0, -np.inf], [-np.inf, -np.inf]])
    array([  0., -inf])
    >>> sn.logsumexp([0.0, -40.0])   # log(1 + e^-40): the sum would round to 1
    4.248354255291589e-18
    >>> sn.logsumexp([])
    -inf
    """
    x = check_scores(x, "x", axis, keepdims=keepdims, allow_posinf=True)
    # log sum e^x = m + log sum e^(x - m), m the maximum: no exponent above 0, and
    # the log of the shifted sum is log1p of all but its top term (SciPy gh-18295)
    m, log_sum = _max_and_log_sum(x, axis)
    out = m + log_sum
    return unwrap(out if keepdims else np.squeeze(out, axis=axis))


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
    Computed as ``(x - m) - log1p(rest)``, with :math:`m` the maximum of each
    slice and ``rest`` the sum of :math:`e^{x_j - m}` over all but the
    largest entry (see :func:`logsumexp`): finite wherever the logit is
    finite, even when the probability itself underflows (``log(softmax(x))``
    would give ``-inf`` there), never above 0, and exact to rounding for the
    leading class (``log_softmax([0, -20, -20])[0]`` is
    :math:`-4.12 \cdot 10^{-9}`).  A slice of only ``-inf`` and any ``+inf``
    or NaN are rejected with ``ValueError``; an axis of length 0 gives an
    empty array.  :func:`scratchnet.fast.log_softmax` is this function,
    under its old fast-path name.

    Examples
    --------
    >>> import scratchnet as sn
    >>> sn.log_softmax([0.0, 0.0])
    array([-0.69314718, -0.69314718])
    >>> sn.log_softmax([0.0, -1e4])   # log(softmax) would give -inf
    array([     0., -10000.])
    """
    x = check_scores(x, "x", axis)
    # log q = x - logsumexp(x) = (x - m) - log sum e^(x - m): finite where q underflows
    m, log_sum = _max_and_log_sum(x, axis)
    with np.errstate(over="ignore"):  # x - m below -1.8e308 is -inf: log q = -inf
        return (x - m) - log_sum


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
    rejected with ``ValueError``; an axis of length 0 gives an empty array
    (as ``torch.softmax``).

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> sn.softmax([[1.0, 2.0, 3.0, 4.0], [3.0, 0.0, 0.0, 0.0]]).round(4)
    array([[0.0321, 0.0871, 0.2369, 0.6439],
           [0.87  , 0.0433, 0.0433, 0.0433]])
    >>> sn.softmax([1e300, 0.0, -np.inf])
    array([1., 0., 0.])
    """
    x = check_scores(x, "x", axis)
    # e^(x - m) / sum e^(x - m), m the largest logit: no exponent above 0, no overflow
    with np.errstate(over="ignore"):  # x - m below -1.8e308 is -inf: q = 0
        e = np.exp(x - np.max(x, axis=axis, keepdims=True, initial=-np.inf))
    return e / e.sum(axis=axis, keepdims=True)


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
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> sn.sigmoid([0.0, 1e300, -np.inf])
    array([0.5, 1. , 0. ])
    """
    x = as_float_array(x, "x")
    e = np.exp(-np.abs(x))  # at most 1, whatever the sign of x: no overflow
    return unwrap(np.where(x >= 0, 1, e) / (1 + e))


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


def logit(p: Any) -> np.ndarray:
    r"""The inverse of the sigmoid: :math:`\operatorname{logit}(p) = \log(p / (1 - p))`.

    Parameters
    ----------
    p : array_like
        Probabilities in :math:`[0, 1]`, any shape.

    Returns
    -------
    ndarray (or scalar for scalar input)
        The log-odds, same shape as ``p``: ``-inf`` at 0, ``+inf`` at 1;
        float32 stays float32.

    Notes
    -----
    :math:`\sigma(\operatorname{logit}(p)) = p`: the score a binary
    classifier must output for the probability :math:`p`.  Computed as
    :math:`\log p - \operatorname{log1p}(-p)`, and near :math:`p = 1/2`,
    where that difference cancels, as :math:`\operatorname{log1p}(s) -
    \operatorname{log1p}(-s)` with :math:`s = 2p - 1` (exact), so every result
    keeps its relative precision (as ``scipy.special.logit``).  Values
    outside :math:`[0, 1]` and NaN raise ``ValueError`` (SciPy returns NaN).

    Examples
    --------
    >>> import scratchnet as sn
    >>> sn.logit([0.0, 0.5, 0.75, 1.0])
    array([      -inf, 0.        , 1.09861229,        inf])
    >>> float(sn.sigmoid(sn.logit(0.3)))
    0.3
    """
    p = as_float_array(p, "p")
    outside = (p < 0) | (p > 1)
    if outside.any():
        raise ValueError(f"p must be probabilities in [0, 1]; got "
                         f"{p[outside].flat[0]:g}{at_index(outside)}")
    s = 2 * p - 1  # exact for p in [1/4, 1]
    with np.errstate(divide="ignore"):
        far = np.log(p) - np.log1p(-p)
        near = np.log1p(s) - np.log1p(-s)
    return unwrap(np.where(np.abs(s) < 0.5, near, far))



def one_hot(targets: Any, num_classes: int | None = None) -> np.ndarray:
    r"""Encode class indices as one-hot rows: ``out[..., c] = 1``, 0 elsewhere.

    Parameters
    ----------
    targets : array_like of int, shape (...)
        Class indices in ``[0, num_classes)``.
    num_classes : int, optional
        :math:`M`, the number of classes (at least 1).  By default one more
        than the largest target, as ``torch.nn.functional.one_hot`` does
        (which cannot know about classes above it: pass ``num_classes``
        when the batch may miss the last class).

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
    >>> sn.one_hot([1, 0])   # two classes, inferred
    array([[0., 1.],
           [1., 0.]])
    """
    targets, num_classes = check_one_hot(targets, num_classes)
    return (targets[..., None] == np.arange(num_classes)).astype(np.float64)


def _max_and_log_sum(x: np.ndarray, axis: int) -> tuple:
    r"""The largest score :math:`m` of each slice, and :math:`\log \sum_j e^{x_j - m}`.

    Both keepdims.  The largest terms are :math:`e^0 = 1` exactly, so the
    sum is 1 plus the others (and any ties), and its log is ``log1p`` of
    them: ``log(1 + 4.2e-18)`` rounds to 0, ``log1p(4.2e-18)`` does not
    (SciPy gh-18295).  For a slice of only ``-inf`` (or an empty one) :math:`m
    = -\infty`, for one holding ``+inf`` :math:`m = +\infty`, and
    ``m + log_sum`` is that :math:`m`: the ``inf - inf`` of their shift lands
    only on the top terms, which are left out.
    """
    m = np.max(x, axis=axis, keepdims=True, initial=-np.inf)  # -inf: an empty axis
    top = x == m  # the largest terms: e^(x - m) = 1 each
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        others = np.where(top, 0, np.exp(x - m)).sum(axis=axis, keepdims=True)
        ties = top.sum(axis=axis, keepdims=True, dtype=x.dtype) - 1
        return m, np.log1p(others + ties)
