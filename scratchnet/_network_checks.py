"""Checks of a network's shape and floating type, shared by the chapter's MLP and
the fast path's (the argument checks every other module shares are in
``_validation``)."""

from __future__ import annotations

from typing import Any, Tuple

import numpy as np

from ._validation import as_float_array, check_positive_int

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


def check_inputs(x: Any, in_features: int, dtype: np.dtype) -> np.ndarray:
    """A network's inputs as ``dtype``, shape (N, d_0); (N,) is accepted when d_0 = 1.

    Shared by the chapters' ``MLP.forward`` and ``TwoLayerMLP.forward`` and the fast
    path's ``fast.MLP`` (and the homework kit's reference solutions, derived from them).
    """
    x = as_float_array(x, "x", allow_inf=False).astype(dtype, copy=False)
    d = in_features
    if x.ndim == 1 and d == 1:
        x = x.reshape(-1, 1)
    if x.ndim != 2 or x.shape[1] != d:
        one_d = " (or (N,), since there is one feature)" if d == 1 else ""
        raise ValueError(f"x must have shape (N, {d}){one_d} for a network with "
                         f"{d} input feature{'s' * (d != 1)}; got shape {x.shape}")
    return x


def check_dlogits(dlogits: Any, logits_shape: Any, dtype: np.dtype) -> np.ndarray:
    """``dlogits`` as ``dtype``, of the last forward's logits' shape (None: no forward).

    Shared by the chapters' ``backward`` methods and the fast path's.
    """
    if logits_shape is None:
        raise RuntimeError("backward() needs the cache of a forward() pass; "
                           "call forward(x) first")
    dlogits = as_float_array(dlogits, "dlogits").astype(dtype, copy=False)
    if dlogits.shape != logits_shape:
        raise ValueError(f"dlogits must have the shape of the last forward's "
                         f"logits {logits_shape}; got {dlogits.shape}")
    return dlogits
