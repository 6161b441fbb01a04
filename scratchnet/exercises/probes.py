"""What a check is made of: failures that explain, comparisons that diagnose.

A check is a plain function that calls the student's code on one input and
compares what comes back with the reference, the library's own function.
When they differ it raises :class:`Failed` with the input, what was
expected, what came back and, when the difference has the shape of a classic
mistake (N times too large, the opposite sign, a transposed matrix), a hint
the student can act on.  Finite differences give gradients that do not
depend on any backward pass, the library's included.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence, Tuple

import numpy as np

from ..gradcheck import numerical_gradient

__all__ = ["Failed", "expect_close", "expect_each", "fd_gradient", "mistake_hint",
           "show", "unchanged"]


class Failed(AssertionError):
    """A check that did not pass: what went wrong, and what to change.

    Parameters
    ----------
    message : str
        Which input, what was expected, what came back.
    hint : str, optional
        What to change, when the mistake is recognised.
    credit : float, optional
        The share of the check's points earned all the same (the right arrays
        of an exercise that returns several, see :func:`expect_each`).

    Examples
    --------
    >>> err = Failed("softmax(x): expected [0.5 0.5], got [nan nan]", "shift")
    >>> err.message, err.hint, err.credit
    ('softmax(x): expected [0.5 0.5], got [nan nan]', 'shift', 0.0)
    """

    def __init__(self, message: str, hint: str = "", credit: float = 0.0) -> None:
        super().__init__(message if not hint else f"{message}\nhint: {hint}")
        self.message, self.hint, self.credit = message, hint, credit


def show(value: Any) -> str:
    """A short one-line text of an array (or anything) for a message.

    Parameters
    ----------
    value : array_like or object

    Returns
    -------
    str

    Examples
    --------
    >>> import numpy as np
    >>> show(np.array([[1.0, 2.0], [3.0, 4.0]]))
    '[[1. 2.] [3. 4.]] (float64, shape (2, 2))'
    """
    if isinstance(value, (np.ndarray, np.generic)):
        text = np.array2string(np.asarray(value), precision=6, threshold=12,
                               max_line_width=10**6).replace("\n", "")
        return f"{' '.join(text.split())} ({value.dtype}, shape {np.shape(value)})"
    if isinstance(value, (list, tuple)) and value and all(
            isinstance(v, np.ndarray) for v in value):
        return "(" + ", ".join(show(v) for v in value) + ")"
    text = repr(value)
    return text if len(text) < 200 else text[:200] + "..."


def _close(a: Any, b: Any, rtol: float, atol: float) -> bool:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=rtol, atol=atol,
                                                   equal_nan=True))


def mistake_hint(got: Any, expected: Any, *, n: int = 0, rtol: float = 1e-6,
                 atol: float = 1e-9) -> str:
    """Recognise a classic mistake in a wrong result: N times, the sign, the transpose.

    Parameters
    ----------
    got, expected : array_like
        What came back and what should have.
    n : int, optional
        The batch size, to recognise a missing (or doubled) 1/N.
    rtol, atol : float
        Tolerances of the comparisons.

    Returns
    -------
    str
        The hint, or "" when none fits.

    Examples
    --------
    >>> import numpy as np
    >>> mistake_hint(np.array([2.0, -4.0]), np.array([1.0, -2.0]), n=2)
    'the result is N = 2 times too large: a mean over the batch divides by N'
    >>> a = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> print(mistake_hint(a.T, a)[:48])
    the result is the transpose of the expected matr
    """
    got = np.asarray(got, dtype=float) if not isinstance(got, (dict, tuple)) else got
    expected = np.asarray(expected, dtype=float)
    if not isinstance(got, np.ndarray) or not np.isfinite(expected).all():
        return ""
    if not np.any(expected):
        return ""
    if n > 1 and _close(got, n * expected, rtol, atol):
        return (f"the result is N = {n} times too large: a mean over the batch "
                "divides by N")
    if n > 1 and _close(got * n, expected, rtol, atol):
        return f"the result is N = {n} times too small: divide by N once, not twice"
    if _close(got, -expected, rtol, atol):
        return "the sign is wrong: the result is minus the expected one"
    if expected.ndim == 2 and expected.shape[0] != 1 and expected.shape[1] != 1 and \
            _close(got, expected.T, rtol, atol):
        return ("the result is the transpose of the expected matrix: check the order "
                "of the factors (dW = x.T @ dout has the shape of W)")
    return ""


def expect_close(got: Any, expected: Any, what: str, *, rtol: float = 1e-6,
                 atol: float = 1e-9, n: int = 0, hint: str = "",
                 dtype: Any = None, diagnoses: Sequence[Callable] = ()) -> None:
    """Raise :class:`Failed` unless ``got`` matches ``expected`` (shape, values, dtype).

    Parameters
    ----------
    got, expected : array_like
        What the student's code returned and what the reference gives.
    what : str
        The call and its input, for the message (``"softmax(x) for x = ..."``).
    rtol, atol : float
        Tolerances; NaN matches NaN and infinities must agree.
    n : int, optional
        The batch size, for :func:`mistake_hint`.
    hint : str, optional
        A hint that holds for any wrong result of this check (rarely: most
        hints are ``diagnoses``).
    dtype : dtype, optional
        The dtype the result must keep (``np.float32``).
    diagnoses : sequence of callable
        Each ``diagnosis(got) -> str`` gives its hint only when its mistake,
        recomputed, is what came back (:mod:`scratchnet.exercises.diagnoses`).

    Returns
    -------
    None

    Examples
    --------
    >>> import numpy as np
    >>> expect_close(np.array([0.5, 0.5]), np.array([0.5, 0.5]), "softmax(x)")
    >>> try:
    ...     expect_close(np.array([1.0]), np.array([-1.0]), "f(x)")
    ... except Failed as err:
    ...     print(err.hint)
    the sign is wrong: the result is minus the expected one
    """
    try:
        arr = np.asarray(got, dtype=float)
    except (TypeError, ValueError):
        raise Failed(f"{what}: expected {show(expected)}, got {show(got)}, "
                     "which is not an array of numbers") from None
    message = f"{what}: expected {show(np.asarray(expected))}, got {show(got)}"

    def evidence() -> str:
        return next((h for h in (d(got) for d in diagnoses) if h), "")

    if arr.shape != np.shape(expected):
        raise Failed(message, evidence() or mistake_hint(arr, expected, n=n) or hint
                     or f"the shape should be {np.shape(expected)}")
    if not _close(arr, expected, rtol, atol):
        raise Failed(message + _where_differs(arr, expected, rtol, atol),
                     evidence() or mistake_hint(arr, expected, n=n, rtol=rtol,
                                                atol=atol) or hint)
    if dtype is not None and np.asarray(got).dtype != dtype:
        raise Failed(f"{what}: expected dtype {np.dtype(dtype)}, got "
                     f"{np.asarray(got).dtype}", "keep the input's dtype: float32 in, "
                     "float32 out (no dtype=float, no np.float64(...))")


def _where_differs(got: np.ndarray, expected: Any, rtol: float, atol: float) -> str:
    """Where the values differ, added to any wrong values' message: "; differs ..."."""
    e = np.asarray(expected, dtype=float)
    with np.errstate(all="ignore"):
        bad = ~np.isclose(got, e, rtol=rtol, atol=atol, equal_nan=True)
    if got.ndim == 0 or not bad.any():
        return ""
    where = [tuple(int(i) for i in idx) for idx in np.argwhere(bad)[:3]]
    return f"; differs at {np.count_nonzero(bad)} of {bad.size} entries, first at " + \
        ", ".join(str(w[0] if len(w) == 1 else w) for w in where)


def fd_gradient(f: Callable[[], float], x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """:func:`scratchnet.numerical_gradient` of ``f()``, a function that reads ``x``.

    The checks' losses read their arrays (a layer's inputs, a network's
    parameters) where they are; this sets ``x`` to each point
    ``numerical_gradient`` asks for and restores it at the end.

    Parameters
    ----------
    f : callable
        No arguments; reads ``x``.
    x : ndarray of float64
        Changed in place during the call, restored after it.
    eps : float, default 1e-6

    Returns
    -------
    ndarray, shape of ``x``

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([1.0, 2.0])
    >>> fd_gradient(lambda: float((x ** 2).sum()), x).round(6)
    array([2., 4.])
    """
    original = x.copy()

    def at(point: np.ndarray) -> float:
        x[...] = point
        return f()

    try:
        return numerical_gradient(at, original, eps)
    finally:
        x[...] = original


def unchanged(arrays: Sequence[np.ndarray], copies: Sequence[np.ndarray],
              names: Sequence[str], what: str) -> None:
    """Raise :class:`Failed` if a call changed an array it was given.

    Parameters
    ----------
    arrays, copies : sequence of ndarray
        The arrays passed, and copies taken before the call.
    names : sequence of str
        Their names.
    what : str
        The call, for the message.

    Returns
    -------
    None

    Examples
    --------
    >>> import numpy as np
    >>> a = np.ones(2)
    >>> unchanged([a], [a.copy()], ["dout"], "relu_backward(dout, cache)")
    """
    for arr, copy, name in zip(arrays, copies, names):
        if not np.array_equal(arr, copy, equal_nan=True):
            raise Failed(f"{what} changed its argument {name}: it was {show(copy)}, "
                         f"it is now {show(arr)}",
                         f"{what.split('(')[0]} must not write into {name}: "
                         "compute a new array (or copy it first); this check alone "
                         "charges it")


def expect_each(parts: Sequence[Tuple[str, Callable[[], None]]]) -> None:
    """Compare each returned array on its own; partial credit for the right ones.

    An exercise that returns several arrays (``dx, dW, db``; a network's
    gradients) earns, in a check, the share of its arrays that are right.

    Parameters
    ----------
    parts : sequence of (str, callable)
        Each array's name and a comparison that raises :class:`Failed`.

    Returns
    -------
    None

    Raises
    ------
    Failed
        The first wrong array's message and hint; ``credit`` the share right.

    Examples
    --------
    >>> def wrong():
    ...     raise Failed("db: expected [1.], got [2.]", "sum over the batch")
    >>> try:
    ...     expect_each([("dx", lambda: None), ("dW", lambda: None), ("db", wrong)])
    ... except Failed as err:
    ...     print(round(err.credit, 3), err.message)
    0.667 db: expected [1.], got [2.] (dx and dW are right: 2/3 of this check's points)
    """
    failures, right = [], []
    for name, compare in parts:
        try:
            compare()
            right.append(name)
        except Failed as err:
            failures.append(err)
    if failures:
        share = len(right) / len(parts)
        note = f" ({' and '.join(right)} {'is' if len(right) == 1 else 'are'} right: " \
            f"{len(right)}/{len(parts)} of this check's points)" if right else ""
        raise Failed(failures[0].message + note, failures[0].hint, share)
