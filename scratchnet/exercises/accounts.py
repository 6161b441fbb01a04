"""What the child reports of the student's code: exceptions, carry-forward's evidence.

The answering shim (:mod:`scratchnet.exercises.shim`) loads this file from
beside it, in the sandbox: like the shim, it imports only the standard library.
:func:`account` says what an exception was and where, in the student's files,
it was raised, and in which of the student's functions (so that a stub's
``NotImplementedError`` raised inside another exercise is that exercise's).
:func:`recording` wraps a carried reference so that it keeps copies of the
first inputs it is given; :func:`rerun` runs the student's own function on
them, beside the reference; :func:`examples` runs the examples of a student's
docstring (an instructor's exercise a self-check knows by name only).  The
grader compares what comes back
(:func:`scratchnet.exercises.grading.differs`): nothing here decides.
"""

from __future__ import annotations

import copy
import faulthandler
import os
import traceback
from typing import Any, Callable, Dict, List

__all__ = ["MAX_RECORDED", "account", "examples", "recording", "rerun"]

#: The inputs a carried reference keeps (per check): its first calls.
MAX_RECORDED = 3


def _inside(path: str, root: str) -> bool:
    return bool(root) and os.path.realpath(path).startswith(root + os.sep)


def account(err: BaseException, root: str) -> Dict[str, Any]:
    """An answer's ``error``: type, message, where in the student's files, and in
    which of the student's functions.

    Parameters
    ----------
    err : BaseException
    root : str
        The folder of the student's files (real path).

    Returns
    -------
    dict
        ``type``, ``message``, ``location`` (``file``, ``line``, ``text``, or
        empty), ``todo`` (a ``NotImplementedError`` raised in the student's
        files) and ``function`` (the innermost student's function it went
        through, by qualified name, or "").

    Examples
    --------
    >>> try:
    ...     raise NotImplementedError("to write")
    ... except NotImplementedError as err:
    ...     a = account(err, "/nowhere")
    >>> a["type"], a["todo"], a["function"]
    ('NotImplementedError', False, '')
    """
    frames = [f for f in traceback.extract_tb(err.__traceback__)
              if _inside(f.filename, root)]
    if isinstance(err, SyntaxError) and err.filename and _inside(err.filename, root):
        location = {"file": os.path.basename(err.filename), "line": err.lineno or 0,
                    "text": (err.text or "").strip()}
    elif frames:
        location = {"file": os.path.basename(frames[-1].filename),
                    "line": frames[-1].lineno or 0,
                    "text": (frames[-1].line or "").strip()}
    else:
        location = {}
    function, tb = "", err.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if _inside(code.co_filename, root):
            function = getattr(code, "co_qualname", code.co_name)
        tb = tb.tb_next
    try:
        message = str(err)[:500]
    except Exception:   # an exception of the student's whose __str__ raises
        message = "?"
    return {"type": type(err).__name__[:100], "message": message,
            "location": location,
            "todo": isinstance(err, NotImplementedError) and bool(location),
            "function": function[:200]}


def recording(reference: Callable, calls: List[tuple]) -> Callable:
    """The carried reference, keeping copies of its first :data:`MAX_RECORDED` inputs.

    Parameters
    ----------
    reference : callable
    calls : list
        Where ``(args, kwargs)`` copies are appended.

    Returns
    -------
    callable

    Examples
    --------
    >>> calls = []
    >>> double = recording(lambda x: 2 * x, calls)
    >>> double(3), calls
    (6, [((3,), {})])
    """
    def carried(*args, **kwargs):
        if len(calls) < MAX_RECORDED:
            try:
                calls.append(copy.deepcopy((args, kwargs)))
            except Exception:   # an argument that does not copy: not recorded
                pass
        return reference(*args, **kwargs)
    return carried


def rerun(calls: List[tuple], reference: Callable, student: Callable[[tuple], Callable],
          method: bool, report: Callable[[BaseException], Dict[str, Any]],
          count: bool = False) -> List[Dict[str, Any]]:
    """The reference and the student's own function on each recorded input.

    Parameters
    ----------
    calls : list of (args, kwargs)
        What the carried reference was given.
    reference : callable
    student : callable
        ``student(args)``: the student's function for these arguments (a
        method: its class's, of ``args[0]``).
    method : bool
        Whether ``args[0]`` is ``self`` (then not sent back).
    report : callable
        ``report(err)``: an exception's account (:func:`account`).
    count : bool, default False
        Only how many inputs there were (empty entries).

    Returns
    -------
    list of dict
        Per input ``args`` and ``kwargs``, and for ``reference`` and
        ``student`` each ``value`` and ``args`` after the call, or ``error``.

    Examples
    --------
    >>> out = rerun([((2,), {})], lambda x: 2 * x, lambda args: lambda x: x + x,
    ...             False, repr)
    >>> out[0]["reference"]["value"], out[0]["student"]["value"]
    (4, 4)
    """
    out: List[Dict[str, Any]] = []
    for args, kwargs in calls:
        entry: Dict[str, Any] = {} if count else {
            "args": [] if method else list(args), "kwargs": {} if method else kwargs}
        for side, func in (("reference", reference), ("student", None)):
            if count:
                break
            mine = copy.deepcopy((args, kwargs))
            try:
                value = (func or student(mine[0]))(*mine[0], **mine[1])
                entry[side] = {"value": value,
                               "args": list(mine[0][1:] if method else mine[0])}
            except BaseException as err:  # the student's may raise anything
                entry[side] = {"error": report(err)}
        out.append(entry)
    return out


def examples(func: Callable, limit: float) -> Dict[str, Any]:
    """Run the examples of ``func``'s docstring in its module's namespace, for at
    most ``limit`` seconds before the stack is dumped (the grader's time limit
    ends the child).

    Parameters
    ----------
    func : callable
        The student's function.
    limit : float
        Seconds.

    Returns
    -------
    dict
        ``examples`` (how many) and ``failed`` (the first failure's report, or
        ""). A stub's ``NotImplementedError`` is raised, not reported.

    Examples
    --------
    >>> def double(x):
    ...     '''
    ...     >>> double(2)
    ...     4
    ...     >>> double(3)
    ...     7
    ...     '''
    ...     return 2 * x
    >>> result = examples(double, 10.0)
    >>> result["examples"], "Expected:" in result["failed"]
    (2, True)
    """
    # imported here: only a self-check's examples need it, not every child
    import doctest

    class Examples(doctest.DocTestRunner):
        """A doctest runner that lets a stub's ``NotImplementedError`` through."""

        def report_unexpected_exception(self, out, test, example, exc_info):
            if issubclass(exc_info[0], NotImplementedError):
                raise exc_info[1]
            super().report_unexpected_exception(out, test, example, exc_info)

    globs = dict(getattr(func, "__globals__", {}))
    test = doctest.DocTestParser().get_doctest(
        getattr(func, "__doc__", None) or "", globs,
        getattr(func, "__name__", "examples"), None, 0)
    report: List[str] = []
    runner = Examples(optionflags=doctest.ELLIPSIS)
    faulthandler.dump_traceback_later(limit, exit=False)
    try:
        runner.run(test, out=report.append, clear_globs=False)
    finally:
        faulthandler.cancel_dump_traceback_later()
    return {"examples": len(test.examples),
            "failed": report[0].lstrip("*\n")[-600:] if runner.failures else ""}

