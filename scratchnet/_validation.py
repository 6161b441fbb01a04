"""Input checks shared by every module, written as plain sentences.

Every public function validates its arguments here, so that bad input fails
early with a message that names the argument, says what was expected and shows
what was received, for example::

    ValueError: targets must be integers in [0, 3); got 3 at index 7

The checks are cheap (one pass over small arrays, or a look at the result of a
reduction the caller computes anyway) so that validation never dominates the
cost of the mathematics it protects.  This module is private: its names may
change, the messages it produces are part of the public contract.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Optional

import numpy as np

REDUCTIONS = ("mean", "sum", "none")

#: The float types an array is kept in (everything else real becomes float64).
FLOAT_TYPES = (np.dtype(np.float64), np.dtype(np.float32), np.dtype(np.longdouble))


def at_index(mask: np.ndarray) -> str:
    """Describe the first True entry of ``mask`` as ``'at index i'``."""
    index = np.unravel_index(int(np.argmax(mask)), mask.shape)
    if len(index) == 0:
        return ""
    if len(index) == 1:
        return f" at index {int(index[0])}"
    return f" at index {tuple(int(i) for i in index)}"


def as_float_array(
    x: Any,
    name: str,
    *,
    allow_inf: bool = True,
    allow_empty: bool = True,
    check_nan: bool = True,
) -> np.ndarray:
    """Convert ``x`` to a floating array, rejecting what is not a real number.

    float32 and float64 are kept as they are; integers and booleans become
    float64.  Complex, string and object input raise ``TypeError``, and so
    does float16: its 3 significant digits and its largest value, 65504
    (``exp`` overflows past 11), are too coarse for a softmax or a loss, and
    returning float32 for it would be a silent change of type.  NaN raises
    ``ValueError`` (it is never a valid score or probability).  Callers that
    find NaN more cheaply themselves (a max propagates it) pass
    ``check_nan=False`` and call :func:`check_no_nan` when they see one.

    The fast path, what layers and losses pass each other at every step: a
    plain ndarray (no subclass) of a float type is returned as it is, with no
    conversion and no type check (it passes them all), and its values are
    screened by :func:`screened_finite` in one pass; the exact checks run only
    when the screen fails, so they fire, with the same messages in the same
    order, on the same inputs.
    """
    fast = type(x) is np.ndarray and x.dtype in FLOAT_TYPES  # passes every type check
    arr = x if fast else _as_real_array(x, name)
    if not allow_empty and arr.size == 0:
        raise ValueError(f"{name} must not be empty; got shape {arr.shape}")
    if (not check_nan and allow_inf) or screened_finite(arr):
        return arr  # nothing to check, or the common case: no NaN, no infinity
    if check_nan:
        check_no_nan(arr, name)
    if not allow_inf:
        bad = np.isinf(arr)
        if bad.any():
            raise ValueError(f"{name} must be finite; got {arr[bad].flat[0]}"
                             f"{at_index(bad)}")
    return arr


def _as_real_array(x: Any, name: str) -> np.ndarray:
    """``x`` as an array of one of the ``FLOAT_TYPES``, refusing what is not real."""
    if isinstance(x, np.ndarray) and x.dtype.kind == "f":
        arr = x
    else:
        try:
            arr = np.asarray(x)
        except ValueError as exc:  # ragged nested lists
            raise ValueError(f"{name} must be a rectangular array of real numbers; "
                             f"got {exc}") from None
    if arr.dtype.kind not in "fiub":
        raise TypeError(f"{name} must be an array of real numbers; got dtype "
                        f"{arr.dtype}")
    if arr.dtype == np.float16:
        raise TypeError(
            f"{name} must be float32 or float64; got float16 (3 significant digits, "
            f"exp overflows past 11): convert it with {name}.astype(np.float32)"
        )
    return arr.astype(arr.dtype if arr.dtype in FLOAT_TYPES else np.float64, copy=False)


def screened_finite(arr: np.ndarray) -> bool:
    """True if one pass over ``arr`` proves every entry finite: no NaN, no infinity.

    The screen of the common case, before the exact checks that say where a
    bad entry is.  It is the dot product ``arr . arr`` (``np.vdot``, one BLAS
    pass with no temporary and no warning): the squares are non-negative, so
    the sum is NaN if ``arr`` holds a NaN and ``+inf`` if it holds an infinity,
    else finite, unless it overflows.  False therefore means "look closer",
    not "bad": an overflow, or an infinity the caller allows, is then judged by
    the caller's exact checks.  Only a plain ndarray (no subclass, whose
    products may differ) of a float type with at least one entry is screened.
    """
    plain = type(arr) is np.ndarray and arr.dtype in FLOAT_TYPES and arr.size > 0
    return plain and math.isfinite(np.vdot(arr, arr))


def check_no_nan(arr: np.ndarray, name: str) -> None:
    """Raise ``ValueError`` if ``arr`` holds a NaN, saying where."""
    bad = np.isnan(arr)
    if bad.any():
        raise ValueError(f"{name} must not contain NaN; got NaN{at_index(bad)}")


def check_bool(value: Any, name: str) -> bool:
    """Return ``value`` as a bool; ``TypeError`` unless it is True or False."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False; got {describe(value)}")
    return bool(value)


def check_optional_string(value: Any, name: str) -> Any:
    """Return ``value`` if it is a string or None; else ``TypeError`` naming it."""
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{name} must be a string or None; got {value!r} "
                        f"({type(value).__name__})")
    return value


def normalize_axis(axis: Any, ndim: int, name: str = "axis", array: str = "x") -> int:
    """Return ``axis`` as a non-negative integer for an array of ``ndim`` dims.

    ``array`` names the input the axis belongs to: a scalar input is its fault,
    not the axis's.
    """
    axis = check_integer(axis, name)
    if ndim == 0:
        raise ValueError(f"{array} must have at least one dimension (the function "
                         f"works along {name}={axis}); got a scalar (0-d array)")
    if not -ndim <= axis < ndim:
        raise ValueError(
            f"{name} must be in [{-ndim}, {ndim}) for an array with {ndim} "
            f"dimension{'s' if ndim != 1 else ''}; got {axis}"
        )
    return axis % ndim


def describe(value: Any) -> str:
    """A short account of a received value for a message: its repr and its type.

    Arrays are described by dtype and shape (their repr may be long), other
    values by a repr cut at 60 characters and the name of their type, e.g.
    ``['mean'] (list)``.
    """
    if isinstance(value, np.ndarray):
        return f"an array of dtype {value.dtype} and shape {value.shape}"
    text = " ".join(repr(value).split())  # one line, even for nested arrays
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} ({type(value).__name__})"


def check_choice(value: Any, name: str, choices: tuple) -> str:
    """Return ``value`` if it is one of the strings ``choices``.

    ``TypeError`` if it is not a string at all (a list, an array, None),
    ``ValueError`` if it is a string not among ``choices``.
    """
    if type(value) is str and value in choices:
        return value  # the common case, before the message is built
    listed = ", ".join(repr(c) for c in choices)
    if not isinstance(value, str):
        raise TypeError(f"{name} must be one of {listed} (a string); got "
                        f"{describe(value)}")
    if value not in choices:
        raise ValueError(f"{name} must be one of {listed}; got {value!r}")
    return value


def check_reduction(reduction: Any) -> str:
    """Return ``reduction`` if it is one of ``'mean'``, ``'sum'``, ``'none'``."""
    return check_choice(reduction, "reduction", REDUCTIONS)


def check_callable(value: Any, name: str, expected: str) -> Any:
    """Return ``value`` if it is callable; ``TypeError`` saying what was expected."""
    if not callable(value):
        raise TypeError(f"{name} must be {expected}; got {describe(value)}")
    return value


def as_number_array(value: Any, name: str, expected: str) -> np.ndarray:
    """``np.asarray(value)`` after checking it holds real numbers (or booleans).

    Strings, None and other objects raise ``TypeError`` naming ``name`` and
    saying what was ``expected`` (e.g. "class indices or probabilities"),
    before any shape check reports a confusing "got shape ()".
    """
    try:
        arr = np.asarray(value)
    except ValueError:  # ragged nested lists
        raise ValueError(f"{name} must be a rectangular array of {expected}; got "
                         f"{describe(value)}") from None
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be {expected}; got {describe(value)}")
    return arr


def check_scalar(
    value: Any,
    name: str,
    *,
    low: Optional[float] = None,
    high: Optional[float] = None,
    low_inclusive: bool = True,
    high_inclusive: bool = True,
) -> float:
    """Return ``value`` as a float after checking it is a real number in range."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number; got {value!r}")
    value = float(value)
    if value != value:
        raise ValueError(f"{name} must not be NaN; got nan")
    too_low = low is not None and (value < low if low_inclusive else value <= low)
    too_high = high is not None and (value > high if high_inclusive else value >= high)
    if too_low or too_high:
        left = "[" if low_inclusive else "("
        right = "]" if high_inclusive else ")"
        lo = "-inf" if low is None else f"{low:g}"
        hi = "inf" if high is None else f"{high:g}"
        raise ValueError(f"{name} must be in {left}{lo}, {hi}{right}; got {value:g}")
    return value


def check_integer(value: Any, name: str) -> int:
    """Return ``value`` as an int after checking it is an integer (not a bool).

    A plain ``int``, the common case, is let through before the slower checks.
    """
    if type(value) is not int and (isinstance(value, (bool, np.bool_))
                                   or not isinstance(value, numbers.Integral)):
        raise TypeError(f"{name} must be an integer; got {value!r}")
    return int(value)


def check_positive_int(value: Any, name: str, *, minimum: int = 1) -> int:
    """Return ``value`` as an int after checking it is an integer >= ``minimum``."""
    value = check_integer(value, name)
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value}")
    return value


def as_class_indices(
    targets: Any, num_classes: int, name: str = "targets"
) -> np.ndarray:
    """Return integer class indices, each in ``[0, num_classes)``, as int64/intp.

    Floating arrays are rejected even when their values are whole numbers:
    PyTorch does the same, and it catches probability targets passed by
    mistake in the wrong layout.  The smallest and largest index check the
    range; only when one is out of it is the mask that says where built.
    """
    arr = np.asarray(targets)
    if arr.dtype.kind not in "iu":
        raise TypeError(
            f"{name} must be integer class indices in [0, {num_classes}); "
            f"got dtype {arr.dtype}"
        )
    if arr.size and not 0 <= arr.min() <= arr.max() < num_classes:
        bad = (arr < 0) | (arr >= num_classes)
        raise ValueError(f"{name} must be integers in [0, {num_classes}); "
                         f"got {arr[bad].flat[0]}{at_index(bad)}")
    return arr.astype(np.intp, copy=False)


def check_distribution(
    p: np.ndarray, name: str, axis: int = -1, *, atol: float = 1e-6
) -> None:
    """Check that ``p`` holds probability distributions along ``axis``.

    Entries must be non-negative (and not NaN) and each slice along ``axis``
    must sum to 1 within ``atol``.
    """
    check_no_nan(p, name)
    negative = p < 0
    if negative.any():
        raise ValueError(
            f"{name} must be non-negative probabilities; "
            f"got {p[negative].flat[0]:g}{at_index(negative)}"
        )
    if p.size == 0:
        return
    totals = p.sum(axis=axis)
    off = ~(np.abs(totals - 1.0) <= atol)
    if np.any(off):
        raise ValueError(
            f"{name} must sum to 1 along axis {axis} (within {atol:g}); "
            f"got a sum of {np.asarray(totals)[off].flat[0]:.10g}{at_index(off)}"
        )


def broadcast_named(shapes: dict) -> tuple:
    """The shape the named shapes broadcast to; else ``ValueError`` naming them."""
    try:
        return np.broadcast_shapes(*shapes.values())
    except ValueError:
        got = " and ".join(str(s) for s in shapes.values())
        raise ValueError(f"{' and '.join(shapes)} must have broadcastable shapes; got "
                         f"shapes {got}") from None


def broadcast_outcome_axis(shapes: dict, axis: Any) -> tuple[int, int]:
    """Broadcast the named shapes; return (ndim, axis) after checking the axis.

    The non-outcome axes broadcast as in NumPy; along ``axis`` every array
    must have the same number of outcomes M >= 1.
    """
    names = " and ".join(shapes)
    got = " and ".join(str(s) for s in shapes.values())
    shape = broadcast_named(shapes)
    axis = normalize_axis(axis, len(shape), array=names)
    for s in shapes.values():
        if ((1,) * (len(shape) - len(s)) + tuple(s))[axis] != shape[axis]:
            raise ValueError(f"{names} must have the same number of outcomes "
                             f"along axis {axis}; got shapes {got}")
    if shape[axis] == 0:
        raise ValueError(f"{names} must have at least one outcome along axis "
                         f"{axis}; got shapes {got}")
    return len(shape), axis


def pad_dims(x: np.ndarray, ndim: int) -> np.ndarray:
    """View ``x`` with leading length-1 axes up to ``ndim``, as broadcasting does."""
    return x.reshape((1,) * (ndim - x.ndim) + x.shape)


def own_frame(x: np.ndarray, axis: int, ndim: int) -> tuple[np.ndarray, int]:
    """``x`` and the index in it of the outcome ``axis`` of the ``ndim``-dim broadcast.

    Error messages then give indices in ``x``'s own shape.
    """
    own = axis - (ndim - x.ndim)
    if own < 0:  # x lacks the outcome axis: view it with length 1 there
        return pad_dims(x, ndim), axis
    return x, own


def check_same_shape(a: np.ndarray, b: np.ndarray, name_a: str, name_b: str) -> None:
    """Raise ``ValueError`` unless ``a`` and ``b`` have the same shape."""
    if a.shape != b.shape:
        raise ValueError(
            f"{name_b} must have the same shape as {name_a} {a.shape}; got {b.shape}"
        )


def check_parameter(param: Any, name: str = "param") -> np.ndarray:
    """Return ``param`` if it is a floating ndarray (an optimiser's parameter)."""
    if not isinstance(param, np.ndarray) or param.dtype.kind != "f":
        raise TypeError(f"{name} must be a floating ndarray (it is updated in "
                        f"place); got {describe(param)}")
    return param


def check_finite_gradient(grad: np.ndarray, name: str) -> None:
    """Raise ``FloatingPointError`` naming ``grads[name]`` unless it is all finite."""
    if screened_finite(grad) or np.isfinite(grad).all():
        return
    where = tuple(int(i) for i in np.argwhere(~np.isfinite(grad))[0])
    raise FloatingPointError(
        f"grads[{name!r}] must be finite to take a step; got {grad[where]} at index "
        f"{where}: the loss or its gradient overflowed (try a smaller learning rate, "
        "or check the inputs)")


def check_update(param: Any, grad: Any, state: Any) -> None:
    """Check the arguments of an optimiser's ``update(param, grad, state)``."""
    check_parameter(param)
    if not isinstance(grad, np.ndarray) or grad.dtype.kind not in "fiu":
        raise TypeError(f"grad must be a real ndarray; got {describe(grad)}")
    if grad.shape != param.shape:
        raise ValueError(f"grad must have the shape of param {param.shape}; got "
                         f"{grad.shape}")
    if not isinstance(state, dict):
        raise TypeError("state must be the dict of this parameter's running "
                        f"quantities (opt.state[name]); got {describe(state)}")


def as_generator(rng: Any, name: str = "rng") -> np.random.Generator:
    """Return a ``numpy.random.Generator`` from a Generator, a seed or None.

    ``None`` gives a freshly seeded generator (non-reproducible, as in NumPy);
    an integer or a ``SeedSequence`` gives a reproducible one.  The legacy
    ``RandomState`` and the global ``np.random`` state are never used.
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, (numbers.Integral, np.random.SeedSequence)):
        if isinstance(rng, (bool, np.bool_)):
            raise TypeError(f"{name} must be a numpy.random.Generator or a seed; "
                            f"got {rng!r}")
        if rng is not None and not isinstance(rng, np.random.SeedSequence) and rng < 0:
            raise ValueError(f"{name} must be a non-negative seed; got {rng}")
        return np.random.default_rng(rng)
    raise TypeError(
        f"{name} must be a numpy.random.Generator, an integer seed or None; "
        f"got {type(rng).__name__}"
    )


def unwrap(out: np.ndarray) -> Any:
    """A 0-d result becomes a NumPy scalar; arrays are returned as they are."""
    return out[()] if out.ndim == 0 else out

