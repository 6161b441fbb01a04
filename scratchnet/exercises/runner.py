"""The grader's child process: the student's code under limits, reported line by line.

The grader (:mod:`scratchnet.exercises.grader`) starts ``python -m
scratchnet.exercises.runner CONFIG`` so that the student's code runs apart from
it.  Here, with an address-space limit (``resource.RLIMIT_AS``, Linux) and a
timer per check (``SIGALRM``, POSIX), each check runs, and a line of JSON is
appended to the results file when an exercise or a check starts and when an
exercise ends: if the process dies (a hard hang, a crash), the grader knows
where, charges that check, and starts a new process for the rest.

Before the student's package is imported, each exercise's own library
function is wrapped by a spy that notices calls from the student's files: an
exercise that hands back the library's function, by importing it or calling
it, gets no points.  A check that fails while an exercise it uses failed too
is run again with the library's function in place of that one (carry-forward):
if it passes then, it keeps its points and names the exercise to fix.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import inspect
import json
import os
import signal
import sys
import traceback
import types
import warnings
from pathlib import Path
from typing import Any, Callable, Dict, List, Sequence

from .catalogue import Exercise, select
from .checks_layers import CHECKS as LAYER_CHECKS
from .checks_models import CHECKS as MODEL_CHECKS
from .checks_scores import CHECKS as SCORE_CHECKS
from .probes import Failed

__all__ = ["CHECKS", "CheckTimeout", "checks_for", "run_checks"]

CHECKS: Dict[str, List] = {**SCORE_CHECKS, **LAYER_CHECKS, **MODEL_CHECKS}


def checks_for(ex_id: str) -> List:
    """An exercise's checks: the catalogue's, or a chapter function's generic ones.

    Examples
    --------
    >>> [name for name, _ in checks_for("relu_backward")][:2]
    ['values', 'finite differences']
    """
    from .generic import generic_checks

    return CHECKS[ex_id] if ex_id in CHECKS else generic_checks(ex_id)
PACKAGE = "submission"


class CheckTimeout(BaseException):
    """Raised in the student's code when a check runs past its time limit.

    A ``BaseException``, so that ``except Exception`` in the student's code
    does not swallow it.

    Attributes
    ----------
    args : tuple
        The limit in seconds.

    Examples
    --------
    >>> isinstance(CheckTimeout(10), Exception)
    False
    """


def _on_alarm(signum, frame):
    raise CheckTimeout()


def _where(exc: BaseException, root: str) -> str:
    """The student's file and line where ``exc`` was raised ("" if not in it)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if root and os.path.realpath(f.filename).startswith(root)]
    if not frames:
        return ""
    f = frames[-1]
    return f" at {Path(f.filename).name} line {f.lineno}: {(f.line or '').strip()}"


def _one(check: Callable, obj: Any, limit: float, root: str) -> Dict[str, str]:
    """Run one check: {"status": pass/fail/todo/error, "message", "hint"}."""
    timed = limit and hasattr(signal, "setitimer")
    if timed:
        signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        with warnings.catch_warnings():  # the same in pytest (warnings as errors)
            warnings.simplefilter("ignore")
            check(obj)
        return {"status": "pass", "message": "", "hint": ""}
    except Failed as err:
        return {"status": "fail", "message": err.message, "hint": err.hint}
    except NotImplementedError as err:
        if _where(err, root) or not root:
            return {"status": "todo", "message": "not implemented yet", "hint": ""}
        return {"status": "error", "message": f"NotImplementedError: {err}", "hint": ""}
    except CheckTimeout:
        return {"status": "error", "message": f"ran past the time limit of {limit:g} s",
                "hint": "look for a loop that never ends (or a very slow one)"}
    except SystemExit as err:
        return {"status": "error", "hint": "return a value; never exit the program",
                "message": f"called sys.exit({err.code!r}){_where(err, root)}"}
    except MemoryError as err:
        return {"status": "error", "message": f"ran out of memory{_where(err, root)}",
                "hint": "an array far larger than the inputs: check the shapes"}
    except Exception as err:  # the student's code may raise anything
        return {"status": "error", "hint": "",
                "message": f"raised {type(err).__name__}: {err}{_where(err, root)}"}
    finally:
        if timed:
            signal.setitimer(signal.ITIMER_REAL, 0)


def run_checks(ex: Exercise, obj: Any, *, limit: float = 10.0, root: str = "",
               only: Sequence[str] = (), before: Callable | None = None,
               after: Callable | None = None) -> List[Dict[str, str]]:
    """Run an exercise's checks on the student's function (or class).

    Parameters
    ----------
    ex : Exercise
    obj : callable or class
        The student's function; for a method exercise, the student's class.
    limit : float, default 10
        Seconds per check (0: none; only where ``signal.setitimer`` exists).
    root : str, optional
        The student's folder: exceptions are located in its files, and only a
        ``NotImplementedError`` raised there counts as "not implemented yet".
    only : sequence of str, optional
        Names of the checks to run (default all).
    before, after : callable, optional
        Called with the check's name before and after each check.

    Returns
    -------
    list of dict
        Per check: ``name``, ``status`` (pass, fail, todo, error), ``message``,
        ``hint``.

    Examples
    --------
    >>> import numpy as np
    >>> from scratchnet.exercises import select
    >>> relu = select(["relu_backward"])[0]
    >>> results = run_checks(relu, lambda dout, x: dout * (x > 0))
    >>> sorted({r["status"] for r in results})
    ['pass']
    """
    out = []
    for name, check in checks_for(ex.id):
        if only and name not in only:
            continue
        if before:
            before(name)
        out.append({"name": name, **_one(check, obj, limit, root)})
        if after:
            after(name)
    return out


def _limit_memory(megabytes: int) -> None:
    try:
        import resource
    except ImportError:  # not POSIX: only the grader's time limit applies
        return
    limit = megabytes * 2**20
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ValueError, OSError):  # macOS: no RLIMIT_AS, so no memory limit there
        pass


def _load(directory: Path):
    """The student's folder as the package ``submission``, with or without __init__."""
    if not (directory / "__init__.py").exists():
        package = types.ModuleType(PACKAGE)
        package.__path__ = [str(directory)]
        sys.modules[PACKAGE] = package
        return package
    spec = importlib.util.spec_from_file_location(
        PACKAGE, directory / "__init__.py", submodule_search_locations=[str(directory)])
    package = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = package
    spec.loader.exec_module(package)
    return package


def _library_object(ex_id: str):
    chapter = importlib.import_module(f"scratchnet.{select([ex_id])[0].chapter}")
    cls_name, _, method = ex_id.partition(".")
    owner = getattr(chapter, cls_name) if method else chapter
    return owner, method or cls_name


def _install_spies(ids: Sequence[str], root: str, calls: set) -> Dict[str, Any]:
    """Wrap each exercise's library function so calls from the student's files show."""
    originals = {}
    for ex_id in ids:
        owner, attr = _library_object(ex_id)
        original = inspect.getattr_static(owner, attr)
        originals[ex_id] = getattr(owner, attr)

        def spy(*args, _ex_id=ex_id, _original=originals[ex_id], **kwargs):
            caller = inspect.currentframe().f_back
            if caller and os.path.realpath(caller.f_code.co_filename).startswith(root):
                calls.add(_ex_id)
            return _original(*args, **kwargs)

        functools.update_wrapper(spy, original)
        setattr(owner, attr, spy)
        package = sys.modules["scratchnet"]
        if "." not in ex_id and getattr(package, attr, None) is originals[ex_id]:
            setattr(package, attr, spy)
    return originals


def _student_object(package, ex: Exercise):
    """The student's function (or class, for a method); None when it is missing."""
    try:
        module = importlib.import_module(f"{PACKAGE}.{ex.chapter}")
    except Exception as err:  # a syntax error in the student's module
        where = _where(err, "") if not isinstance(err, SyntaxError) else \
            f" at {Path(err.filename or '').name} line {err.lineno}"
        raise ImportError(f"{ex.chapter}.py could not be imported: "
                          f"{type(err).__name__}: {err}{where}") from None
    cls_name, _, method = ex.id.partition(".")
    obj = getattr(module, cls_name, None)
    if method and obj is not None and method not in vars(obj):
        return None
    return obj


def _with_references(uses: Sequence[str], originals: Dict[str, Any]) -> Callable:
    """Put the library's objects in place of the student's ``uses``; return an undo."""
    undo = []
    for use in uses:
        cls_name, _, method = use.partition(".")
        home = sys.modules.get(f"{PACKAGE}.{select([use])[0].chapter}")
        student = getattr(home, cls_name, None)
        if student is None:
            continue
        if method:
            undo.append((student, method, vars(student).get(method)))
            setattr(student, method, originals[use])
            continue
        for name, module in list(sys.modules.items()):
            mine = name.startswith(PACKAGE + ".")
            if mine and getattr(module, cls_name, None) is student:
                undo.append((module, cls_name, student))
                setattr(module, cls_name, originals[use])

    def restore():
        for owner, attr, value in reversed(undo):
            if value is None:
                delattr(owner, attr)
            else:
                setattr(owner, attr, value)
    return restore


def grade_exercise(ex: Exercise, package, *, failed: set, originals, calls: set,
                   limit: float, root: str, log: Callable) -> Dict[str, Any]:
    """Grade one exercise in this process: its checks, library use, carry-forward.

    Parameters
    ----------
    ex : Exercise
    package : module
        The student's package, imported.
    failed : set of str
        Exercises graded before that did not pass (carry-forward), updated.
    originals : dict
        The library's objects, by exercise id, before the spies.
    calls : set of str
        Filled by the spies with the ids whose library object the student called.
    limit : float
        Seconds per check.
    root : str
        The student's folder.
    log : callable
        ``log(record)`` writes a progress record.

    Returns
    -------
    dict
        ``id``, ``status`` and ``checks`` (each with ``name``, ``status``,
        ``message``, ``hint``).

    Examples
    --------
    >>> callable(grade_exercise)
    True
    """
    result = {"id": ex.id, "status": "graded", "checks": []}
    try:
        obj = _student_object(package, ex)
    except ImportError as err:
        failed.add(ex.id)
        return {**result, "status": "error", "message": str(err)}
    if obj is None:
        failed.add(ex.id)
        return {**result, "status": "missing",
                "message": f"{ex.id} is not defined in {ex.chapter}.py"}
    _, attr = _library_object(ex.id)
    own = vars(obj).get(attr) if "." in ex.id else obj
    library = originals[ex.id]
    if own is library or getattr(own, "__wrapped__", None) is library:
        failed.add(ex.id)
        return {**result, "status": "library"}
    calls.discard(ex.id)
    checks = run_checks(ex, obj, limit=limit, root=root,
                        before=lambda name: log({"check": ex.id, "name": name}))
    if ex.id in calls:
        failed.add(ex.id)
        return {**result, "status": "library"}
    if any(c["status"] == "todo" for c in checks):
        failed.add(ex.id)
        return {**result, "status": "todo"}
    wrong = [c["name"] for c in checks if c["status"] != "pass"]
    suspects = [use for use in ex.uses if use in failed]
    if wrong and suspects:
        restore = _with_references(suspects, originals)
        try:
            again = {c["name"]: c for c in run_checks(ex, obj, limit=limit, root=root,
                                                      only=wrong)}
        finally:
            restore()
        for c in checks:
            if again.get(c["name"], {}).get("status") == "pass":
                c.update(status="carried", message="", hint=(
                    f"passes with the library's {' and '.join(suspects)} in place of "
                    f"yours: fix {' and '.join(suspects)} (graded there)"))
    if any(c["status"] in ("fail", "error") for c in checks):
        failed.add(ex.id)
    return {**result, "checks": checks}


def main(argv: Sequence[str]) -> int:
    """Grade in this process, as the grader's child: ``runner CONFIG.json``.

    Parameters
    ----------
    argv : sequence of str
        One path: a JSON file with ``dir``, ``ids``, ``failed``, ``limit``
        (seconds per check), ``memory_mb`` and ``results`` (the file the
        records are appended to).

    Returns
    -------
    int
        0 once every exercise is graded, 2 for a wrong invocation.

    Examples
    --------
    >>> main([])
    2
    """
    if len(argv) != 1:
        return 2
    config = json.loads(Path(argv[0]).read_text())
    _limit_memory(config["memory_mb"])
    out = open(config["results"], "a")

    def log(record):
        out.write(json.dumps(record) + "\n")
        out.flush()

    root = os.path.realpath(config["dir"])
    calls: set = set()
    watched = dict.fromkeys(ex.id for ex in select([]) + select(config["ids"]))
    originals = _install_spies(list(watched), root, calls)
    failed = set(config["failed"])
    try:
        package = _load(Path(config["dir"]))
    except Exception as err:  # the package's __init__ failed
        for ex_id in config["ids"]:
            log({"result": {"id": ex_id, "status": "error", "checks": [], "message":
                            f"the package could not be imported: {err}"}})
        return 0
    sys.stdout = sys.stderr  # the student's prints go to the grader's stderr
    for ex in select(config["ids"]):
        log({"start": ex.id})
        log({"result": grade_exercise(ex, package, failed=failed, originals=originals,
                                      calls=calls, limit=config["limit"], root=root,
                                      log=log)})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
