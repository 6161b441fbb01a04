r"""Entropy, cross-entropy and KL divergence: why the loss minimiser is P(C|x).

For two distributions :math:`p` and :math:`q` over the same :math:`M` outcomes,

.. math::

    \begin{aligned}
    H(p) &= -\sum_i p_i \log p_i, \qquad
    H(p, q) = -\sum_i p_i \log q_i, \\
    \mathrm{KL}(p \,\|\, q) &= \sum_i p_i \log \frac{p_i}{q_i} = H(p, q) - H(p).
    \end{aligned}

With the natural log the unit is the *nat*, with :math:`\log_2` the *bit*;
the next chapter, :mod:`scratchnet.units`, converts between them and reads
:math:`H(p, q)` and :math:`\mathrm{KL}(p \| q)` as code lengths.

**Gibbs' inequality.**  :math:`H(p, q) \ge H(p)`, i.e.
:math:`\mathrm{KL}(p \| q) \ge 0`, with equality only for :math:`q = p`.
Jensen's inequality on the convex :math:`-\log` gives it in one line:
:math:`\mathrm{KL}(p \| q) = \mathbb{E}_p[-\log(q/p)]
\ge -\log \mathbb{E}_p[q/p] = -\log \sum_{p_i > 0} q_i \ge 0`.

**Why a classifier learns the posterior** (the canonical sketch; the proof,
step by step, is ``docs/derivation.md``, and :mod:`scratchnet.bayes` and
:mod:`scratchnet.scoring` use this one).  Let the model's softmax output be
:math:`q(C \mid x)` and the truth :math:`P(C \mid x)`.  Averaging the KL over
inputs splits it into a model term and a constant,

.. math::

    \begin{aligned}
    \mathbb{E}_{x}\, \mathrm{KL}\big(P(C \mid x) \,\|\, q(C \mid x)\big)
    &= \underbrace{\mathbb{E}_{x}\Big[-\sum_i P(i \mid x) \log q(i \mid x)\Big]}
        _{= \ \mathbb{E}_{(x, c)}[-\log q(c \mid x)]} \\
    &\quad - \underbrace{\mathbb{E}_{x}\, H(P(C \mid x))}_{= \ H(C \mid X)} .
    \end{aligned}

The first term is the population cross-entropy loss: sampling the label
:math:`c` replaces the unknown weights :math:`P(i \mid x)`, so the training
loss :math:`L = -\frac{1}{N}\sum_j \log q(c_j \mid x_j)` estimates it without
bias.  The second does not depend on the model, so minimising the loss
minimises the expected KL.  By Gibbs the loss is at least :math:`H(C \mid X)`,
reached exactly when :math:`q(C \mid x) = P(C \mid x)` wherever
:math:`P(x) > 0`.  :func:`expected_kl` computes the left-hand side.

**KL is not symmetric.**  Minimising :math:`\mathrm{KL}(P \| Q)` over
:math:`Q` (what cross-entropy training does) is *mode covering*: :math:`Q`
must be positive wherever :math:`P` is, or the divergence is infinite.
Minimising :math:`\mathrm{KL}(Q \| P)` is *mode seeking*: a restricted
:math:`Q` may sit on one mode of :math:`P` and ignore the others.

Conventions shared by every function here:

* Distributions lie along ``axis`` (default -1); other axes broadcast.
* :math:`0 \log 0 = 0`, and a term with :math:`p_i = 0` contributes 0 whatever
  :math:`q_i` is (even 0); :math:`p_i > 0 = q_i` gives ``+inf``, with no
  warning and no NaN.
* Inputs must be distributions (non-negative, summing to 1 within 1e-6) or a
  ``ValueError`` says which is wrong; nothing is silently renormalised (unlike
  ``scipy.stats.entropy``).
* ``base=None`` gives nats, ``base=2`` bits.  float32 stays float32; 1-D input
  gives a NumPy scalar, more dimensions an array.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ._validation import (
    as_float_array,
    at_index,
    broadcast_outcome_axis,
    check_distribution,
    check_same_shape,
    check_scalar,
    own_frame,
    pad_dims,
    unwrap,
)
from .softmax import logsumexp

__all__ = [
    "GibbsResult", "cross_entropy", "entropy", "expected_kl", "gibbs_inequality",
    "kl_divergence",
]

_ATOL = 1e-6  # how far a distribution's total may stray from 1


def entropy(p: Any, *, base: float | None = None, axis: int = -1) -> Any:
    r"""Shannon entropy :math:`H(p) = -\sum_i p_i \log p_i` along ``axis``.

    Parameters
    ----------
    p : array_like, shape (..., M, ...)
        Probability distributions along ``axis``.
    base : float, optional
        Base of the logarithm: None for nats, 2 for bits.
    axis : int, default -1
        The outcome axis.

    Returns
    -------
    float or ndarray, shape of ``p`` without ``axis``
        :math:`0 \le H(p) \le \log M`: 0 for a one-hot ``p``, :math:`\log M`
        for the uniform one.  A NumPy scalar for 1-D ``p``.

    Notes
    -----
    :math:`0 \log 0 = 0`, the limit of :math:`t \log t`: zero entries are
    skipped, adding nothing and raising no warning.

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> print(f"{sn.entropy(np.full(256, 1 / 256), base=2):.4f}")  # one byte
    8.0000
    >>> print(f"{sn.entropy([1.0, 0.0, 0.0]):.4f}")  # certainty
    0.0000
    """
    p, log_base = _check_entropy(p, base, axis)
    log_p = np.log(p, out=np.zeros_like(p), where=p > 0)  # 0 log 0 = 0
    h = -np.sum(p * log_p, axis=axis) / log_base
    return unwrap(h + 0.0)  # + 0.0: a certain outcome has H = 0, not -0


def cross_entropy(p: Any, q: Any = None, *, log_q: Any = None,
                  base: float | None = None, axis: int = -1) -> Any:
    r"""Cross-entropy of distributions, :math:`H(p, q) = -\sum_i p_i \log q_i`.

    Not the loss on logits: that is ``scratchnet.cross_entropy`` (from
    :mod:`scratchnet.losses`); this one is ``scratchnet.information.cross_entropy``.

    Parameters
    ----------
    p : array_like, shape (..., M, ...)
        The true distributions along ``axis``.
    q : array_like, shape (..., M, ...), optional
        The model's distributions; broadcasts against ``p`` over the other axes.
    log_q : array_like, shape (..., M, ...), optional
        :math:`\log q` instead of ``q`` (e.g. ``sn.log_softmax(logits)``);
        ``-inf`` allowed.  Give exactly one of ``q`` and ``log_q``.
    base : float, optional
        None for nats, 2 for bits.
    axis : int, default -1
        The outcome axis.

    Returns
    -------
    float or ndarray, broadcast shape without ``axis``
        :math:`H(p, q) \ge H(p)`, ``+inf`` if some :math:`p_i > 0 = q_i`.

    Notes
    -----
    ``q`` must sum to 1 within 1e-6, ``log_q`` have ``logsumexp`` 0 within
    1e-6.  ``log_q`` keeps full precision where :math:`q_i` would underflow to 0.

    Examples
    --------
    >>> from scratchnet.information import cross_entropy
    >>> print(f"{cross_entropy([0.5, 0.5], [0.9, 0.1], base=2):.4f}")
    1.7370
    >>> print(f"{cross_entropy([0.5, 0.5], log_q=[0.0, -800.0]):.4f}")  # q = e^-800
    400.0000
    """
    p, q, log_q, axis, log_base = _check_pair(p, q, log_q, axis, base)
    log_q = _log(q) if log_q is None else log_q
    return _finish(np.subtract(0, _sum_over_support(p, log_q, axis)), axis, log_base)


def kl_divergence(p: Any, q: Any = None, *, log_q: Any = None,
                  base: float | None = None, axis: int = -1) -> Any:
    r"""KL divergence :math:`\mathrm{KL}(p \| q) = \sum_i p_i \log(p_i / q_i)`.

    Arguments in the order of the notation: ``kl_divergence(p, q)`` is
    KL(p || q) (``torch.nn.functional.kl_div(input, target)`` computes
    KL(target || exp(input))).

    Parameters
    ----------
    p, q, log_q, base, axis
        As in :func:`cross_entropy`: ``p`` the true distributions, ``q`` (or
        ``log_q``) the approximating ones.

    Returns
    -------
    float or ndarray, broadcast shape without ``axis``
        :math:`\mathrm{KL}(p \| q) \ge 0`, 0 iff :math:`q = p`; may be ``+inf``.

    Notes
    -----
    Computed term by term as :math:`\sum_i \bigl(p_i \log(p_i / q_i) - p_i +
    q_i\bigr)`, each term :math:`\ge 0` even after rounding (the added
    :math:`q_i - p_i` sum to 0), so the result is never negative, exactly 0
    for :math:`q = p`, and accurate to about :math:`\epsilon`; entries as
    small as 1e-300, or subnormal, keep their exact logs (a ratio
    :math:`p_i / q_i` could overflow).  For inputs that sum to 1 only within
    the tolerance, this is the divergence of the measures as given.

    Examples
    --------
    >>> import scratchnet as sn
    >>> print(f"{sn.kl_divergence([0.5, 0.5], [0.9, 0.1]):.4f}")
    0.5108
    >>> print(f"{sn.kl_divergence([0.9, 0.1], [0.5, 0.5]):.4f}")  # not symmetric
    0.3681
    >>> sn.kl_divergence([0.5, 0.5], [1.0, 0.0])  # q misses part of p's support
    inf
    """
    p, q, log_q, axis, log_base = _check_pair(p, q, log_q, axis, base)
    if log_q is None:
        log_q = np.log(q, out=np.full_like(q, -np.inf), where=q > 0)  # log 0 = -inf
    log_p = np.log(p, out=np.zeros_like(p), where=p > 0)  # 0 log 0 = 0
    kl = _kl_terms(p, log_p, log_q).sum(axis=axis)  # sum_i p_i log(p_i / q_i)
    return unwrap(kl / log_base)


class GibbsResult(NamedTuple):
    r"""Both sides of Gibbs' inequality :math:`H(p, q) \ge H(p)` and their gap.

    Attributes
    ----------
    cross_entropy : float or ndarray
        :math:`H(p, q)`.
    entropy : float or ndarray
        :math:`H(p)`.
    gap : float or ndarray
        :math:`H(p, q) - H(p) = \mathrm{KL}(p \| q) \ge 0`.

    Examples
    --------
    >>> import scratchnet as sn
    >>> h_pq, h_p, gap = sn.gibbs_inequality([0.25, 0.75], [0.5, 0.5], base=2)
    >>> print(f"{h_pq:.4f} >= {h_p:.4f}, gap {gap:.4f}")
    1.0000 >= 0.8113, gap 0.1887
    """

    cross_entropy: Any
    entropy: Any
    gap: Any

    @property
    def holds(self) -> bool:
        """Whether every gap is >= 0 up to rounding (64 eps relative to H(p, q)).

        With a base below 1 the logarithm decreases, every quantity changes
        sign, and a positive divergence shows as a negative gap (False).
        """
        gap = np.asarray(self.gap)
        eps = np.finfo(np.result_type(gap.dtype, np.float32)).eps
        tol = 64 * eps * (1 + np.abs(self.cross_entropy))
        return bool(np.all(gap >= -tol))

    def __repr__(self) -> str:
        return (f"GibbsResult(cross_entropy={_format(self.cross_entropy)}, "
                f"entropy={_format(self.entropy)}, gap={_format(self.gap)})")


def gibbs_inequality(p: Any, q: Any = None, *, log_q: Any = None,
                     base: float | None = None, axis: int = -1) -> GibbsResult:
    r"""Both sides of Gibbs' inequality :math:`H(p, q) \ge H(p)`, and the gap.

    Parameters
    ----------
    p, q, log_q, base, axis
        As in :func:`cross_entropy`.

    Returns
    -------
    GibbsResult
        Named tuple ``(cross_entropy, entropy, gap)``, each a scalar for 1-D
        input or an array of the broadcast shape without ``axis``; ``.holds``
        tells whether every gap is non-negative up to rounding.

    Notes
    -----
    .. math::

        H(p, q) - H(p) = \mathrm{KL}(p \,\|\, q)
            = \mathbb{E}_p\!\left[-\log \tfrac{q}{p}\right]
            \ge -\log \mathbb{E}_p\!\left[\tfrac{q}{p}\right] \ge 0

    by Jensen's inequality, with equality iff :math:`q = p`.  The gap is computed
    term by term as in :func:`kl_divergence`, so it is exactly
    ``kl_divergence(p, q)``, equals ``cross_entropy - entropy`` up to rounding
    and is exactly 0 for :math:`q = p`.

    Examples
    --------
    >>> import scratchnet as sn
    >>> sn.gibbs_inequality([0.5, 0.5], [0.9, 0.1], base=2)
    GibbsResult(cross_entropy=1.73697, entropy=1, gap=0.736966)
    >>> sn.gibbs_inequality([0.5, 0.5], [0.9, 0.1]).holds
    True
    """
    p, q, log_q, axis, log_base = _check_pair(p, q, log_q, axis, base)
    log_q = _log(q) if log_q is None else log_q
    log_p = _log(p)
    h_pq = np.subtract(0, _sum_over_support(p, log_q, axis))
    h_p = np.subtract(0, _sum_over_support(p, log_p, axis))
    gap = _kl_terms(p, log_p, log_q).sum(axis=axis, keepdims=True)
    h_p = np.broadcast_to(h_p, gap.shape)  # H(p) may have fewer dims than q
    return GibbsResult(*(_finish(x, axis, log_base) for x in (h_pq, h_p, gap)))


def expected_kl(p_cond: Any, q_cond: Any = None, weights: Any = None, *,
                log_q: Any = None, base: float | None = None) -> Any:
    r"""Expected KL, :math:`\sum_x w(x) \mathrm{KL}(p(\cdot|x) \| q(\cdot|x))`.

    With :math:`w(x) = P(x)`, ``p_cond`` the true posterior and ``q_cond``
    the model's softmax, this is the quantity the cross-entropy loss
    minimises (up to the model-independent :math:`H(C \mid X)`).

    Parameters
    ----------
    p_cond : array_like, shape (n, M)
        One conditional distribution :math:`p(\cdot \mid x)` per row.
    q_cond, log_q : array_like, shape (n, M)
        The approximating conditionals or (exactly one of the two, as in
        :func:`kl_divergence`) their logs: ``-inf`` allowed, exact where q underflows.
    weights : array_like, shape (n,)
        :math:`w(x) \ge 0` summing to 1 within 1e-6 (required).  A row with
        weight 0 counts 0 even if its KL is ``+inf`` (:math:`P(x) = 0`).
    base : float, optional
        None for nats, 2 for bits.

    Returns
    -------
    float
        A NumPy scalar :math:`\ge 0`, possibly ``+inf``.

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> p = [[0.5, 0.5], [1.0, 0.0]]
    >>> q = [[0.9, 0.1], [0.0, 1.0]]   # row 2 misses p's mass, but w = 0 there
    >>> print(f"{sn.expected_kl(p, q, [1.0, 0.0]):.4f}")
    0.5108
    >>> log_q = [[np.log(0.9), np.log(0.1)], [-np.inf, 0.0]]
    >>> print(f"{sn.expected_kl(p, log_q=log_q, weights=[1.0, 0.0]):.4f}")
    0.5108
    """
    _check_base(base)
    p_arr = as_float_array(p_cond, "p_cond", check_nan=False)
    if p_arr.ndim != 2:
        raise ValueError("p_cond must have shape (n, M), one conditional "
                         f"distribution per row; got shape {p_arr.shape}")
    if weights is None or (q_cond is None) == (log_q is None):
        raise TypeError("give weights and exactly one of q_cond and log_q; got q_cond="
                        f"{type(q_cond).__name__}, log_q={type(log_q).__name__}, "
                        f"weights={type(weights).__name__}")
    q_name = "q_cond" if log_q is None else "log_q"
    q_arr = as_float_array(q_cond if log_q is None else log_q, q_name, check_nan=False)
    check_same_shape(p_arr, q_arr, "p_cond", q_name)
    w = as_float_array(weights, "weights", check_nan=False)
    if w.shape != p_arr.shape[:1]:
        raise ValueError(f"weights must have shape (n,) = {p_arr.shape[:1]}, one "
                         f"weight per row of p_cond; got shape {w.shape}")
    check_distribution(w, "weights", 0, atol=_ATOL)
    qs = (q_arr, None) if log_q is None else (None, q_arr)
    p, q, log_q, _, log_base = _check_pair(p_arr, *qs, -1, base, "p_cond",
                                           q_name.removeprefix("log_"))
    log_q = _log(q) if log_q is None else log_q
    kl = _kl_terms(p, _log(p), log_q).sum(axis=1, keepdims=True)  # (n, 1), each >= 0
    total = _sum_over_support(w[:, None], kl, 0)  # w = 0 rows skipped: no 0 * inf
    return _finish(total[0], 0, log_base)


# ---- Private helpers: the checks, the masked log and sum, the KL's terms ----


def _check_base(base: Any) -> float:
    """``ln(base)``, the divisor that turns nats into the unit of ``base`` (None: 1)."""
    if base is None:
        return 1.0
    value = check_scalar(base, "base")  # a real number, not NaN, not a bool
    if not 0 < value < np.inf or value == 1:
        raise ValueError("base must be a positive real number other than 1 (None "
                         f"for nats, 2 for bits); got {value:g}")
    return float(np.log(value))


def _finish(total: np.ndarray, axis: int, log_base: float) -> Any:
    """Convert nats to the unit of the base, then drop the summed ``axis``."""
    return unwrap(np.squeeze(total / log_base, axis=axis))  # float32 stays float32


def _log(x: np.ndarray) -> np.ndarray:
    """Natural log with :math:`\\log 0 = -\\infty`, without a divide warning."""
    out = np.full(x.shape, -np.inf, dtype=x.dtype)
    np.log(x, out=out, where=x > 0)
    return out


def _sum_over_support(p: np.ndarray, values: np.ndarray, axis: int) -> np.ndarray:
    r""":math:`\sum_{i: p_i > 0} p_i \, v_i` along ``axis`` (keepdims).

    Terms with :math:`p_i = 0` are never evaluated, so :math:`0 \cdot (-\infty)`
    never happens: this one mask is the :math:`0 \log 0 = 0` convention.
    """
    shape = np.broadcast_shapes(p.shape, values.shape)
    terms = np.zeros(shape, dtype=np.result_type(p, values))
    np.multiply(p, values, out=terms, where=p > 0)
    return terms.sum(axis=axis, keepdims=True)


def _kl_terms(p: np.ndarray, log_p: np.ndarray, log_q: np.ndarray) -> np.ndarray:
    r"""The terms :math:`p_i \log(p_i / q_i) - p_i + q_i` of the KL, each :math:`\ge 0`.

    They sum to :math:`\mathrm{KL}(p \| q)` (the :math:`q_i - p_i` sum to 0).
    With :math:`\delta = \log(q_i / p_i)` a term is :math:`p_i (e^\delta - 1 -
    \delta)`, and ``expm1(d) - d`` cannot round below 0: the KL is never
    negative, even for :math:`q` within rounding of :math:`p`.  For
    :math:`\delta > 1` the plain form neither cancels nor overflows.
    """
    q = np.exp(log_q)
    delta = np.zeros(np.broadcast_shapes(p.shape, log_q.shape), dtype=q.dtype)
    np.subtract(log_q, log_p, out=delta, where=p > 0)  # 0 where p_i = 0
    near = np.minimum(delta, 1.0)
    terms = np.where(delta > 1, q - p * (1 + delta), p * (np.expm1(near) - near))
    return np.where(p > 0, terms, q)


def _check_distribution(x: np.ndarray, name: str, axis: int, ndim: int) -> None:
    """Check ``x`` holds distributions along ``axis`` (indices in its own shape)."""
    own, own_axis = own_frame(x, axis, ndim)
    check_distribution(own, name, own_axis, atol=_ATOL)


def _check_log_distribution(log_q: np.ndarray, name: str, axis: int, ndim: int) -> None:
    """Check ``exp(log_q)`` sums to 1 along ``axis``: logsumexp ~ 0 within 1e-6."""
    own, own_axis = own_frame(log_q, axis, ndim)
    totals = np.asarray(logsumexp(own, axis=own_axis))
    off = ~(np.abs(totals) <= _ATOL)
    if off.any():
        raise ValueError(f"{name} must be log-probabilities whose logsumexp along "
                         f"axis {own_axis} is 0 (within {_ATOL:g}); got "
                         f"{totals[off].flat[0]:.10g}{at_index(off)}")


def _check_pair(p: Any, q: Any, log_q: Any, axis: Any, base: Any, p_name: str = "p",
                q_name: str = "q") -> tuple:
    """Check ``p``, exactly one of ``q`` and ``log_q``, the axis and the base.

    Returns ``(p, q, log_q, axis, ln(base))``: the arrays viewed with the
    broadcast number of dimensions (the one not given is None), the outcome
    axis as a non-negative int, and the divisor of the unit (1 for nats).
    """
    log_base = _check_base(base)
    lq_name = f"log_{q_name}"
    if (q is None) == (log_q is None):
        got = "both" if q is not None else "neither"
        raise TypeError(f"give exactly one of {q_name} and {lq_name}; got {got}")
    other_name = q_name if log_q is None else lq_name
    p = as_float_array(p, p_name, check_nan=False)
    other = as_float_array(q if log_q is None else log_q, other_name,
                           check_nan=log_q is not None)
    shapes = {p_name: p.shape, other_name: other.shape}
    ndim, axis = broadcast_outcome_axis(shapes, axis)
    _check_distribution(p, p_name, axis, ndim)
    if log_q is None:
        _check_distribution(other, other_name, axis, ndim)
        return pad_dims(p, ndim), pad_dims(other, ndim), None, axis, log_base
    _check_log_distribution(other, other_name, axis, ndim)
    return pad_dims(p, ndim), None, pad_dims(other, ndim), axis, log_base


def _check_entropy(p: Any, base: Any, axis: Any) -> tuple:
    """``(p, ln(base))``, checked: distributions along ``axis``, a valid base."""
    log_base = _check_base(base)
    p = as_float_array(p, "p", check_nan=False)
    ndim, axis = broadcast_outcome_axis({"p": p.shape}, axis)
    _check_distribution(p, "p", axis, ndim)
    return p, log_base


def _format(value: Any) -> str:
    """A short, NumPy-version-independent rendering of a scalar or array."""
    arr = np.asarray(value)
    if arr.ndim == 0:
        return f"{float(arr):.6g}"
    return np.array2string(arr, precision=6, separator=", ")
