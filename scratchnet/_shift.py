r"""The shift by the maximum: how softmax, log-sum-exp and the losses stay finite.

:math:`\log \sum_i e^{x_i} = m + \log \sum_i e^{x_i - m}` with :math:`m =
\max_i x_i`: every exponential is then at most 1, so nothing overflows, and
the largest one is exactly :math:`e^0 = 1`.  Keeping that top term out of the
sum, :math:`\log(1 + \text{rest})` is ``log1p(rest)``, which keeps a rest of
:math:`10^{-18}` that ``log(1 + rest)`` would round away: the dominant
entry's log-probability, :math:`-\log(1 + \text{rest})`, keeps its relative
precision.  :mod:`scratchnet.softmax` teaches the idea; ``row_max`` and
``top_and_rest`` (with the checks ``check_has_entries``, ``check_finite_max``
and ``check_some_finite``) are shared by it, the losses and the engine.
"""

from __future__ import annotations

import numpy as np

from ._validation import at_index, check_no_nan

__all__ = ["check_finite_max", "check_has_entries", "check_some_finite", "row_max",
           "top_and_rest"]


def row_max(x: np.ndarray, axis: int, name: str, *, allow_posinf: bool) -> np.ndarray:
    """The largest entry of each slice along ``axis`` (keepdims), made a safe shift.

    A slice whose maximum is ``-inf`` (every entry ``-inf``) gets the shift 0
    so that ``x - m`` stays ``-inf`` instead of becoming NaN.  NaN and ``+inf``
    (unless allowed) are rejected by :func:`check_finite_max`.
    """
    check_has_entries(x, axis, name)
    m = np.max(x, axis=axis, keepdims=True)
    if not np.isfinite(m).all():
        check_finite_max(x, m, name, allow_posinf=allow_posinf)
        m = np.where(np.isfinite(m), m, 0).astype(x.dtype, copy=False)
    return m


def check_has_entries(x: np.ndarray, axis: int, name: str) -> None:
    """Reject an empty ``axis``: it has no maximum."""
    if x.shape[axis] == 0:
        raise ValueError(
            f"{name} must have at least one entry along axis {axis}; "
            f"got shape {x.shape}"
        )


def check_finite_max(x: np.ndarray, m: np.ndarray, name: str, *,
                     allow_posinf: bool) -> None:
    """Reject NaN in ``x`` (and ``+inf`` unless allowed), seen in its maxima ``m``.

    NaN propagates through ``max``, so the small array of maxima tells whether
    ``x`` holds a NaN without a second pass over ``x``.
    """
    if np.isnan(m).any():
        check_no_nan(x, name)
    if not allow_posinf and np.isposinf(m).any():
        raise ValueError(
            f"{name} must not contain +inf (an infinite score has no softmax); "
            f"got +inf{at_index(np.isposinf(x))}"
        )


def top_and_rest(e: np.ndarray, i: np.ndarray, axis: int) -> tuple:
    r"""The sum of ``e`` along ``axis`` in two parts: its top term and the rest.

    ``e = exp(x - m)`` and ``i`` (keepdims) indexes the largest ``x`` of each
    slice, so the top term ``e[i]`` is :math:`e^0 = 1` (0 for a slice of only
    ``-inf``, ``inf`` where ``x`` holds ``+inf``) and the log of the sum is
    ``log1p(rest)``, which keeps :math:`\log(1 + 10^{-18})`.  Returns
    ``(top, rest)``, keepdims; ``e`` is left as it was.
    """
    top = np.take_along_axis(e, i, axis=axis)
    np.put_along_axis(e, i, 0.0, axis=axis)  # the top term out of the sum ...
    rest = e.sum(axis=axis, keepdims=True)
    np.put_along_axis(e, i, top, axis=axis)  # ... and back
    return top, rest


def check_some_finite(total_is_zero: np.ndarray, name: str, axis: int) -> None:
    """Reject slices whose softmax normaliser is 0 (every logit -inf)."""
    if total_is_zero.any():
        raise ValueError(
            f"{name} has a slice along axis {axis} where every entry is -inf "
            "(every probability 0), so it cannot be normalised"
        )
