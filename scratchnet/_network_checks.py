"""Checks of a network's shape and floating type, shared by the chapter's MLP and
the engine's (the argument checks every other module shares are in
``_validation``)."""

from __future__ import annotations

from typing import Any, Tuple

import numpy as np

from ._validation import check_positive_int

FLOAT_DTYPES = "np.float32 or np.float64 (or 'float32', 'float64')"


def check_layer_sizes(sizes: Any) -> Tuple[int, ...]:
    """The layer widths of a network, ``[d_0, ..., d_L]``, as positive ints."""
    if isinstance(sizes, (str, bytes)) or not hasattr(sizes, "__len__"):
        raise TypeError(f"sizes must be a sequence of layer widths like [1, 64, 2]; "
                        f"got {sizes!r}")
    if len(sizes) < 2:
        raise ValueError("sizes must list at least the input and output widths "
                         f"(like [1, 64, 2]); got {list(sizes)}")
    return tuple(check_positive_int(s, f"sizes[{i}]") for i, s in enumerate(sizes))


def check_float_dtype(dtype: Any) -> np.dtype:
    """``dtype`` as ``np.float32`` or ``np.float64``, the types networks compute in."""
    try:  # None (which NumPy reads as float64) and bools are not dtypes here
        resolved = None if dtype is None or isinstance(dtype, bool) else np.dtype(dtype)
    except (TypeError, ValueError):
        resolved = None
    if resolved is None:
        raise TypeError(f"dtype must be {FLOAT_DTYPES}; got {dtype!r}")
    if resolved not in (np.float32, np.float64):
        raise ValueError(f"dtype must be {FLOAT_DTYPES}; got {resolved}")
    return resolved
