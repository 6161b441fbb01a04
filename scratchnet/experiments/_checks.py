"""Argument checks the experiments share: each names the argument, what it
expects and what it got (``TypeError`` for the wrong kind of value,
``ValueError`` for a value out of range)."""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._validation import check_choice, check_positive_int, check_scalar, describe

__all__ = ["budgets", "choice", "finite", "integers", "names", "text"]


def text(value: Any, name: str) -> str:
    """``value`` if it is a string (not bytes, an array or a list), else TypeError.

    Parameters
    ----------
    value : Any
    name : str
        The argument's name, for the message.

    Returns
    -------
    str

    Examples
    --------
    >>> from scratchnet.experiments._checks import text
    >>> text(["a"], "recipe")
    Traceback (most recent call last):
    ...
    TypeError: recipe must be a string; got ['a'] (list)
    """
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string; got {describe(value)}")
    return value


def choice(value: Any, name: str, valid: Sequence[str]) -> str:
    """``value`` if it is one of the names ``valid``.

    Parameters
    ----------
    value : Any
    name : str
    valid : sequence of str

    Returns
    -------
    str

    Examples
    --------
    >>> from scratchnet.experiments._checks import choice
    >>> choice("sgd", "optimizer", ("adam", "sgd"))
    'sgd'
    """
    return check_choice(value, name, tuple(valid))


def finite(value: Any, name: str, *, low: float | None = None,
           high: float | None = None, low_inclusive: bool = True) -> float:
    """A finite real number in ``[low, high]`` (``(low, high]`` if not inclusive).

    Parameters
    ----------
    value : Any
    name : str
    low, high : float, optional
    low_inclusive : bool, default True

    Returns
    -------
    float

    Examples
    --------
    >>> from scratchnet.experiments._checks import finite
    >>> finite(float("inf"), "lr", low=0.0, low_inclusive=False)
    Traceback (most recent call last):
    ...
    ValueError: lr must be a finite number; got inf
    """
    value = check_scalar(value, name)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be a finite number; got {value}")
    return check_scalar(value, name, low=low, high=high, low_inclusive=low_inclusive)


def integers(values: Any, name: str, *, minimum: int = 1,
             allow_empty: bool = False) -> tuple[int, ...]:
    """A sequence of integers >= ``minimum`` (not a string or a single number).

    Parameters
    ----------
    values : Any
    name : str
    minimum : int, default 1
    allow_empty : bool, default False

    Returns
    -------
    tuple of int

    Examples
    --------
    >>> from scratchnet.experiments._checks import integers
    >>> integers([10, 20], "snapshot_steps")
    (10, 20)
    >>> integers(10, "snapshot_steps")
    Traceback (most recent call last):
    ...
    TypeError: snapshot_steps must be a sequence of integers; got 10 (int)
    """
    if isinstance(values, (str, bytes, numbers.Number)) or not isinstance(
            values, (Sequence, np.ndarray)):
        raise TypeError(f"{name} must be a sequence of integers; got "
                        f"{describe(values)}")
    found = tuple(check_positive_int(v, f"{name} entries", minimum=minimum)
                  for v in values)
    if not found and not allow_empty:
        raise ValueError(f"{name} must hold at least one integer; got none")
    return found


def names(values: Any, name: str, valid: Sequence[str]) -> tuple[str, ...]:
    """Distinct names of ``valid``: a sequence of them, or ``"a,b"`` in one string.

    Parameters
    ----------
    values : str or sequence of str
    name : str
    valid : sequence of str

    Returns
    -------
    tuple of str

    Examples
    --------
    >>> from scratchnet.experiments._checks import names
    >>> names("mse, hinge", "losses", ("cross_entropy", "mse", "hinge"))
    ('mse', 'hinge')
    """
    if isinstance(values, str):
        found = tuple(v.strip() for v in values.split(",") if v.strip())
    elif isinstance(values, (Sequence, np.ndarray)) and not isinstance(values, bytes):
        found = tuple(values)
        for v in found:
            if not isinstance(v, str):
                raise TypeError(f"{name} must be names (strings) from "
                                f"{', '.join(valid)}; got {describe(v)} among them")
    else:
        raise TypeError(f"{name} must be a name or a sequence of names from "
                        f"{', '.join(valid)}; got {describe(values)}")
    bad = [v for v in found if v not in valid]
    if bad or not found or len(set(found)) != len(found):
        raise ValueError(f"{name} must be distinct names from {', '.join(valid)}; got "
                         f"{found!r}")
    return found


def budgets(steps: Any, known: tuple) -> tuple:
    """The budgets a figure draws: all ``known`` ones (None), one, or a sequence.

    Parameters
    ----------
    steps : None, int or sequence of int
    known : tuple of int
        The sweep's budgets (whether each one drawn is among them is checked
        where the slice is taken).

    Returns
    -------
    tuple

    Examples
    --------
    >>> from scratchnet.experiments._checks import budgets
    >>> budgets(None, (10, 20)), budgets(20, (10, 20))
    ((10, 20), (20,))
    >>> budgets([], (10, 20))
    Traceback (most recent call last):
    ...
    ValueError: steps must name at least one of the sweep's budgets (10, 20)
    """
    if steps is None:
        return known
    if isinstance(steps, numbers.Integral) and not isinstance(steps, (bool, np.bool_)):
        return (int(steps),)
    if isinstance(steps, (str, bytes)) or not isinstance(steps, (Sequence, np.ndarray)):
        raise TypeError(f"steps must be a budget of the sweep or a sequence of them; "
                        f"got {describe(steps)}")
    if not len(steps):
        raise ValueError(f"steps must name at least one of the sweep's budgets {known}")
    return tuple(np.asarray(steps).tolist())
