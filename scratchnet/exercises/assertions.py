"""One check in a student's own pytest file: ``assert_passes("softmax", softmax)``.

The same checks as the grader's, run in the test's own process (no child, no
limits), so a student can keep the exercise and its check side by side while
working: the assertion's message is the grader's, the input, what was
expected, what came back, and the hint; a pass says which checks passed, and
carry-forward is the grader's.
"""

from __future__ import annotations

import inspect
from typing import Any, Dict, List, Sequence, Tuple

from .catalogue import select
from .checking import checks_of, run_checks
from .sides import Local
from .source import chapter_module

__all__ = ["assert_passes"]


def _with_library(obj: Any, uses: Sequence[str]) -> Dict[str, Any]:
    """The functions of ``uses`` that ``obj``'s code reads from its globals, and the
    library's own in their place (a method exercise: its class's functions)."""
    funcs = [obj] if inspect.isfunction(obj) else \
        [f for f in vars(obj).values() if inspect.isfunction(f)] if \
        inspect.isclass(obj) else []
    found = {}
    for use in uses:
        for f in funcs:
            if use in f.__globals__ and use in f.__code__.co_names:
                found[use] = (f.__globals__, select([use])[0])
    return found


def _carried(ex: Any, obj: Any, wrong: Sequence[str]) -> Tuple[List[str], set]:
    """Carry-forward as the grader does it: the exercises of ``ex.uses`` that fail
    their own checks, and the checks of ``wrong`` that pass with the library's
    functions in their place."""
    swaps = {use: (space, used) for use, (space, used) in
             _with_library(obj, ex.uses).items()
             if any(r["status"] != "pass" for r in run_checks(used, Local(space[use])))}
    saved = {use: space[use] for use, (space, _) in swaps.items()}
    try:
        for use, (space, used) in swaps.items():
            space[use] = getattr(chapter_module(used.chapter), use)
        again = run_checks(ex, Local(obj), only=wrong) if swaps else []
    finally:
        for use, (space, _) in swaps.items():
            space[use] = saved[use]
    return sorted(swaps), {r["name"] for r in again if r["status"] == "pass"}


def assert_passes(exercise: str, obj: Any, *checks: str) -> None:
    """Assert that ``obj`` passes the checks of ``exercise`` (all, or those named).

    It says what passed.  As in the grader, a check that fails only because a
    function it calls (an exercise of its ``uses``, ``softmax`` for
    ``cross_entropy_grad``) is wrong is *carried forward*: it passes with the
    library's function in place of that one, the note names the exercise to
    fix, and the assertion holds.

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
    >>> assert_passes("softmax", softmax, "values", "large logits")
    softmax: passed values, large logits
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
    wrong = [r["name"] for r in results if r["status"] != "pass"]
    fix, carried = _carried(ex, obj, wrong) if wrong and ex.uses else ([], set())
    bad = [r for r in results if r["name"] in wrong and r["name"] not in carried]
    if bad:
        raise AssertionError("\n".join(
            f"{ex.id}: {r['name']}: {r['message']}" + (f"\n  hint: {r['hint']}"
                                                       if r["hint"] else "")
            for r in bad))
    passed = [r["name"] for r in results if r["name"] not in wrong]
    print(f"{ex.id}: passed {', '.join(passed) or 'nothing else'}" + (
        f"; carried forward: {', '.join(sorted(carried))} pass with the library's "
        f"{' and '.join(fix)} in place of yours: fix {' and '.join(fix)}"
        if carried else ""))
