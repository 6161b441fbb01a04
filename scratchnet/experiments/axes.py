"""The axes of a sweep's grid, as written on the command line.

An axis is ``start:stop:count`` (``count`` evenly spaced values, both ends
included) or a comma-separated list; :func:`parse_axis` reads either (or a
sequence of numbers) and checks every value against the axis's bounds in
:data:`AXES`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Union

import numpy as np

__all__ = ["AXES", "parse_axis"]

#: The numeric axes, ``name -> (kind, low, high)``: ``sigma1`` > 0, ``prior1`` in
#: (0, 1), ``widths`` and ``steps`` integers >= 1 (None: unbounded).
AXES = {"mu2": ("number", None, None), "sigma1": ("number", 0.0, None),
        "prior1": ("number", 0.0, 1.0), "widths": ("integer", 1, None),
        "steps": ("integer", 1, None)}


def real_number(value: Any, name: str) -> float:
    """``value`` as a float if it is a real number (not a bool), else TypeError.

    Parameters
    ----------
    value : Any
    name : str

    Returns
    -------
    float

    Examples
    --------
    >>> from scratchnet.experiments.axes import real_number
    >>> real_number(3, "mu2")
    3.0
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer,
                                                         np.floating)):
        raise TypeError(f"{name} must be a real number; got {value!r}")
    return float(value)


def check_axis_value(value: float, name: str) -> None:
    """A value of axis ``name`` within its bounds (ValueError naming them).

    Parameters
    ----------
    value : float
    name : str
        A key of :data:`AXES`.

    Returns
    -------
    None

    Examples
    --------
    >>> from scratchnet.experiments.axes import check_axis_value
    >>> check_axis_value(0.0, "sigma1")
    Traceback (most recent call last):
    ...
    ValueError: sigma1 values must be positive; got 0
    """
    kind, low, high = AXES[name]
    bad = (not math.isfinite(value) or (low is not None and (
        value < low or (value == low and kind == "number")))
        or (high is not None and value >= high))
    if bad:
        bounds = {"mu2": "a finite number", "sigma1": "positive",
                  "prior1": "in (0, 1)", "widths": "a positive integer",
                  "steps": "a positive integer"}[name]
        raise ValueError(f"{name} values must be {bounds}; got {value:g}")


def parse_axis(spec: Union[str, Sequence[float], float], name: str) -> tuple:
    """The values of a grid axis from its command-line spelling (or a sequence).

    Parameters
    ----------
    spec : str or sequence of numbers or number
        ``"start:stop:count"``: ``count`` evenly spaced values from ``start``
        to ``stop``, both included (``count`` 1 needs ``start == stop``);
        ``"a,b,c"``: those values; a sequence or a single number: itself.
    name : {"mu2", "sigma1", "prior1", "widths", "steps"}
        The axis (:data:`AXES`), which sets what a value may be: ``sigma1``
        positive, ``prior1`` in (0, 1), ``widths`` and ``steps`` positive
        integers.

    Returns
    -------
    tuple of float (of int for ``widths`` and ``steps``)
        Distinct values, in the given order.

    Examples
    --------
    >>> import scratchnet as sn
    >>> sn.experiments.parse_axis("0.5:2:4", "mu2")
    (0.5, 1.0, 1.5, 2.0)
    >>> sn.experiments.parse_axis("1000,10000", "steps")
    (1000, 10000)
    >>> sn.experiments.parse_axis("1:3:x", "sigma1")
    Traceback (most recent call last):
    ...
    ValueError: sigma1 must be start:stop:count (count a positive integer) or a \
comma-separated list of numbers; got '1:3:x'
    """
    if not isinstance(name, str) or name not in AXES:
        raise ValueError(f"name must be one of {', '.join(AXES)}; got {name!r}")
    integer = AXES[name][0] == "integer"
    if isinstance(spec, str):
        values = _parse_text(spec, name)
    elif isinstance(spec, (int, float, np.integer, np.floating)) and not isinstance(
            spec, bool):
        values = [float(spec)]
    elif isinstance(spec, Sequence) or isinstance(spec, np.ndarray):
        values = [real_number(v, f"{name} entries") for v in spec]
    else:
        raise TypeError(f"{name} must be a string like '1:3:5' or '1,2', or a "
                        f"sequence of numbers; got {type(spec).__name__}")
    if not values:
        raise ValueError(f"{name} must hold at least one value; got {spec!r}")
    for value in values:
        check_axis_value(value, name)
        if integer and value != int(value):
            raise ValueError(f"{name} values must be positive integers; got {value:g}")
    if len(set(values)) != len(values):
        raise ValueError(f"{name} values must be distinct; got {spec!r}")
    return tuple(int(v) for v in values) if integer else tuple(values)


def _parse_text(text: str, name: str) -> list:
    usage = (f"{name} must be start:stop:count (count a positive integer) or a "
             f"comma-separated list of numbers; got {text!r}")
    try:
        if ":" in text:
            start, stop, count = text.split(":")
            count = int(count)
            start, stop = float(start), float(stop)
            if count < 1:
                raise ValueError
        else:
            return [float(v) for v in text.split(",")]
    except ValueError:
        raise ValueError(usage) from None
    if count == 1 and start != stop:
        raise ValueError(f"{name}: a count of 1 needs start == stop; got {text!r}")
    if not (math.isfinite(start) and math.isfinite(stop)):
        raise ValueError(usage)
    return [float(v) for v in np.linspace(start, stop, count)]
