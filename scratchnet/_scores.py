"""The checks of class scores and class indices, before softmax and the losses.

:func:`check_scores` and :func:`check_one_hot` are the one validation call at
the top of :mod:`scratchnet.softmax`'s functions: they return the checked
arguments and transform nothing, so the chapter's body is its formula.  This
module is private.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._validation import (
    as_class_indices,
    as_float_array,
    at_index,
    check_bool,
    check_no_nan,
    check_positive_int,
    normalize_axis,
    screened_finite,
)

__all__ = ["check_one_hot", "check_scores"]


def check_scores(x: Any, name: str = "x", axis: Any = -1, *, keepdims: Any = False,
                 allow_posinf: bool = False) -> np.ndarray:
    """``x`` as a float array of scores along ``axis``, checked; nothing transformed.

    Rejected: NaN, ``axis`` out of range, a ``keepdims`` that is not a bool,
    and (unless ``allow_posinf``, for ``logsumexp``) ``+inf`` and a slice whose
    every entry is ``-inf`` (every probability 0: no softmax).  An axis of
    length 0 passes (an empty sum).

    The common case, every score finite, is proved in one pass by
    ``screened_finite`` (``scratchnet._validation``), and the exact checks,
    which say where a bad entry is, run only when the screen fails: on the
    inputs they reject, and on infinities (which may be allowed).
    """
    x = as_float_array(x, name, check_nan=False)
    axis = normalize_axis(axis, x.ndim, array=name)
    check_bool(keepdims, "keepdims")
    if x.shape[axis] == 0 or screened_finite(x):
        return x
    m = np.max(x, axis=axis)  # NaN propagates through the max: one pass over x
    if np.isnan(m).any():
        check_no_nan(x, name)
    if allow_posinf:
        return x
    if np.isposinf(m).any():
        raise ValueError(f"{name} must not contain +inf (an infinite score has no "
                         f"softmax); got +inf{at_index(np.isposinf(x))}")
    if (m == -np.inf).any():
        raise ValueError(f"{name} has a slice along axis {axis} where every entry is "
                         "-inf (every probability 0), so it cannot be normalised")
    return x


def check_one_hot(targets: Any, num_classes: Any) -> tuple:
    """``(targets, num_classes)`` checked: integer indices in ``[0, num_classes)``.

    ``num_classes=None`` is one more than the largest target (the targets
    must then be non-empty and non-negative).
    """
    if num_classes is None:
        t = np.asarray(targets)
        if t.dtype.kind not in "iu":
            raise TypeError(f"targets must be integer class indices; got dtype "
                            f"{t.dtype}")
        if t.size == 0:
            raise ValueError("targets is empty, so the number of classes cannot be "
                             "inferred; pass num_classes")
        negative = t < 0
        if negative.any():
            raise ValueError(f"targets must be class indices >= 0; got "
                             f"{t[negative].flat[0]}{at_index(negative)}")
        num_classes = int(t.max()) + 1
    num_classes = check_positive_int(num_classes, "num_classes")
    return as_class_indices(targets, num_classes), num_classes
