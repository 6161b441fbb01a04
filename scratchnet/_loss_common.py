r"""What every loss shares: the checks of a batch, its targets and weights, reductions.

The losses of :mod:`scratchnet.losses` and :mod:`scratchnet.scoring` take a
batch of N samples (rows), compute one loss per sample (or per element) and
reduce them as ``torch.nn.functional`` does.  The pieces they share live here,
so that every loss follows the conventions set out in :mod:`scratchnet.functional`
in the same way and says the same thing about the same mistake:

* ``as_batch``, ``row_class_indices``, ``as_class_weight``: a float batch with at
  least one sample, one class index per row, one non-negative weight per class;
* ``safe_multiply``: a product with the convention :math:`0 \cdot \infty = 0`;
* ``reduce_loss``, ``reduction_scale``: ``"mean"``, ``"sum"`` or ``"none"``,
  and :math:`\partial\,\text{reduced} / \partial \ell_j` (:math:`1/D` for a
  mean over :math:`D`, else 1) for the gradients.

This module is private: its names may change.
"""

from __future__ import annotations

from typing import Any, Union

import numpy as np

from ._validation import (
    as_class_indices,
    as_float_array,
    as_number_array,
    at_index,
    check_same_shape,
)

__all__ = ["check_binary_targets"]

#: A reduced loss is a NumPy scalar (``"mean"``, ``"sum"``); ``"none"`` gives an array.
Loss = Union[np.floating, np.ndarray]


def as_batch(x: Any, name: str, *, two_d: bool, allow_inf: bool = True,
              check_nan: bool = True) -> np.ndarray:
    """``x`` as a float array with at least one sample; (N, M) if ``two_d``."""
    x = as_float_array(x, name, allow_inf=allow_inf, check_nan=check_nan)
    if x.ndim == 0:
        raise ValueError(f"{name} must be an array with a batch axis, shape (N, ...); "
                         "got a scalar")
    if two_d and x.ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D array of shape (N, M), one row of M class "
            f"scores per sample; got shape {x.shape}"
        )
    if x.size == 0:
        raise ValueError(
            f"{name} must hold at least one sample with at least one class "
            f"(an empty batch has no loss); got shape {x.shape}"
        )
    return x


def row_class_indices(targets: Any, x: np.ndarray, name: str) -> np.ndarray:
    """Class indices of shape (N,), one per row of the (N, M) ``x``."""
    t = as_number_array(targets, "targets", "class indices (integers)")
    n, m = x.shape
    if t.shape != (n,):
        transposed = t.shape == (m,) and n >= 2  # (M, N) given for (N, M)?
        raise ValueError(
            f"targets must hold one class index per row of {name}, shape ({n},); "
            f"got shape {t.shape}" + (f" (if {name} is (M, N), transposed, pass "
                                      f"{name}.T: classes are axis 1)" * transposed)
        )
    return as_class_indices(t, m)


def check_binary_targets(logits: Any, targets: Any, options: dict,
                         caller: str) -> tuple:
    """``(logits, targets)`` of a chapter's binary loss: same shape, targets in [0, 1].

    The options must be empty (``pos_weight`` and ``reduction`` are
    :mod:`scratchnet.functional`'s); nothing is transformed but the targets'
    float type, which follows the logits'.
    """
    if options:
        raise TypeError(
            f"{caller}() got {', '.join(map(repr, sorted(options)))}: the chapter "
            f"function is the formula alone (the mean); pos_weight and reduction "
            f"live in scratchnet.functional.{caller}, with torch.nn.functional's "
            "signature")
    s = as_batch(logits, "logits", two_d=False)
    y = as_float_array(targets, "targets").astype(s.dtype, copy=False)
    check_same_shape(s, y, "logits", "targets")
    outside = (y < 0) | (y > 1)
    if outside.any():
        raise ValueError(f"targets must be probabilities in [0, 1]; got "
                         f"{y[outside][0]:g}{at_index(outside)}")
    return s, y


def as_class_weight(weight: Any, num_classes: int,
                    dtype: np.dtype) -> np.ndarray | None:
    """Per-class weights of shape (M,), finite and non-negative, or None."""
    if weight is None:
        return None
    w = as_float_array(weight, "weight", allow_inf=False)
    if w.shape != (num_classes,):
        raise ValueError(
            f"weight must hold one number per class, shape ({num_classes},); "
            f"got shape {w.shape}"
        )
    negative = w < 0
    if negative.any():
        raise ValueError(f"weight must be non-negative; got {w[negative][0]:g}"
                         f"{at_index(negative)}")
    return w.astype(dtype, copy=False)


def safe_multiply(c: Any, v: np.ndarray) -> np.ndarray:
    """``c * v`` with the convention 0 * inf = 0 (a weight of 0 silences a term).

    Neither factor holds NaN, so a NaN in the product can only be 0 * inf.
    """
    with np.errstate(invalid="ignore", over="ignore"):
        out = np.multiply(c, v)
    if np.isnan(np.min(out)):  # the min propagates NaN: no boolean temporary
        out[np.isnan(out)] = 0
    return out


def reduce_loss(losses: np.ndarray, reduction: str, denominator: Any) -> Loss:
    """Apply ``reduction`` to per-sample (or per-element) losses.

    A sum beyond the largest float is ``inf``, rightly and without a warning;
    a mean of finite losses is finite even where their sum overflows (two
    losses of 1e308 average 1e308).
    """
    if reduction == "none":
        return losses
    with np.errstate(over="ignore"):
        total = losses.sum()
        if reduction == "mean":
            if np.isinf(total) and np.isfinite(losses).all():  # the sum overflowed
                total = (losses / denominator).sum()
            else:
                total = total / denominator
    return np.asarray(total, dtype=losses.dtype)[()]


def reduction_scale(reduction: str, denominator: Any) -> float:
    """d(reduced loss) / d(each per-sample loss): 1/denominator for a mean, else 1."""
    return 1.0 / denominator if reduction == "mean" else 1.0
