"""One check in a student's own pytest file: ``assert_passes("softmax", softmax)``.

The same checks as the grader's, run in the test's own process (no child, no
limits), so a student can keep the exercise and its check side by side while
working: the assertion's message is the grader's, the input, what was
expected, what came back, and the hint.
"""

from __future__ import annotations

from typing import Any

from .catalogue import select
from .checking import checks_of, run_checks
from .sides import Local

__all__ = ["assert_passes"]


def assert_passes(exercise: str, obj: Any, *checks: str) -> None:
    """Assert that ``obj`` passes the checks of ``exercise`` (all, or those named).

    Parameters
    ----------
    exercise : str
        An exercise id, e.g. ``"softmax"`` or ``"SGD.update"``.
    obj : callable or class
        The student's function; for a method exercise, the student's class.
    *checks : str
        Names of checks to run (``"large logits"``); default all of them.

    Returns
    -------
    None

    Raises
    ------
    AssertionError
        Listing every check that did not pass, with its message and hint.
    KeyError
        For an unknown exercise or check name.

    Examples
    --------
    >>> import numpy as np
    >>> def softmax(x):
    ...     e = np.exp(x - x.max(axis=-1, keepdims=True))
    ...     return e / e.sum(axis=-1, keepdims=True)
    >>> assert_passes("softmax", softmax)
    >>> assert_passes("softmax", lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True),
    ...               "large logits")
    Traceback (most recent call last):
    ...
    AssertionError: softmax: large logits: softmax(x) for large logits ...
    """
    ex = select([exercise])[0]
    names = [c.name for c in checks_of(ex.id)]
    unknown = [c for c in checks if c not in names]
    if unknown:
        raise KeyError(f"{ex.id} has no check {unknown[0]!r}; its checks: "
                       f"{', '.join(names)}")
    results = run_checks(ex, Local(obj), only=checks)
    bad = [r for r in results if r["status"] != "pass"]
    if bad:
        raise AssertionError("\n".join(
            f"{ex.id}: {r['name']}: {r['message']}" + (f"\n  hint: {r['hint']}"
                                                       if r["hint"] else "")
            for r in bad))
