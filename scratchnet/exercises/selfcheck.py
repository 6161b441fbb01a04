"""A student's self-check: what the package lists, graded without the assignment.

A student has the hand-out, not the instructor's assignment file.
:func:`self_check` grades what the assignment grades, as far as the student's
copy can tell: the exercises the package lists (``EXERCISES`` in its
``__init__.py``, written by ``make``), never the code the hand-out gives; an
exercise of the instructor's own, whose reference, checks and points are in a
file the student does not have, is listed as "graded by your instructor", with
the examples of the student's docstring run in the sandbox, and adds no
points to the total.
"""

from __future__ import annotations

import ast
import tempfile
from pathlib import Path
from typing import Any, List, Sequence, Tuple

from .analysis import find_package
from .catalogue import OWN, select
from .course import in_notebook_terms, submission_package
from .grader import UsageError, check
from .own import REGISTRY, load_own
from .report import INSTRUCTOR, Report
from .sandbox import stage

__all__ = ["self_check"]


def self_check(upload: Any, *, only: Sequence[str] = (), limit: float = 10.0,
               memory_mb: int = 2048, exercises: Any = None,
               no_sandbox: bool = False) -> Report:
    """A student's self-check: what the package lists, graded without the assignment.

    The exercises graded are those the package's ``__init__.py`` lists
    (``EXERCISES``, written by ``make``): the code the hand-out gives is not
    graded (the instructor does not grade it either).  An exercise of the
    instructor's own (:mod:`scratchnet.exercises.own`), whose reference,
    checks and points are in a file the student does not have, is listed as
    graded by the instructor: its one check here runs the examples of the
    student's docstring, in the sandbox, and it adds no points to the total,
    so a package is never told "all passed" for work only the instructor can
    grade.  A package without ``EXERCISES`` (written by hand) is graded for
    every catalogue object its modules define.

    Parameters
    ----------
    upload : str or Path
        A package, a folder holding one, or a notebook.
    only : sequence of str, optional
        Exercise ids (or chapters) to grade among those.
    limit : float, default 10
        Seconds per check.
    memory_mb : int, default 2048
    exercises : str or Path, optional
        The instructor's exercises file, where the student has it: its
        exercises are then graded in full.
    no_sandbox : bool, default False

    Returns
    -------
    Report
        ``mode`` ``"self-check"``; an exercise graded by the instructor has
        ``graded_by`` ``"instructor"`` and 0 points of 0.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from scratchnet.exercises import make
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = make(["cross_entropy"], tmp + "/key", solutions=True)
    ...     report = self_check(tmp + "/key")
    >>> [r["id"] for r in report.results]   # log_softmax is given: not graded
    ['cross_entropy']
    """
    load_own(exercises)
    with tempfile.TemporaryDirectory(prefix="scratchnet-upload-") as tmp:
        staged = stage(submission_package(upload, tmp), Path(tmp) / "staged")
        package = find_package(staged)
        listed = _listed(package)
        if listed is None:   # written by hand: what its modules define
            return in_notebook_terms(check(
                package, only=only, limit=limit, memory_mb=memory_mb,
                exercises=exercises, no_sandbox=no_sandbox), upload)
        found = {name: _defined(package, name) for name in listed
                 if _instructors(name, exercises)}
        declared = Path(tmp) / "instructors_exercises.py"
        stubs = [f"@examples_only(module={where[0]!r})\n"
                 f"def {name}({', '.join(where[1])}):\n"
                 f"    raise NotImplementedError('graded by your instructor')\n"
                 for name, where in found.items() if where is not None]
        declared.write_text("\n\n".join([
            '"""The instructor\'s exercises this self-check knows by name only."""\n'
            "from scratchnet.exercises.own import examples_only, load_exercises\n"
            + (f"load_exercises({str(Path(exercises).resolve())!r})\n"
               if exercises else ""), *stubs]))
        wanted = set(listed)
        if only:
            wanted = set()
            for name in only:   # an id or a chapter, the instructor's modules too
                theirs = {n for n, where in found.items()
                          if n == name or (where and where[0] == name)}
                wanted |= theirs
                try:
                    wanted |= {e.id for e in select([name])}
                except KeyError as err:
                    if not theirs:
                        raise UsageError(err.args[0]) from None
        graded = [i for i in listed if i in wanted and found.get(i, True)]
        kept = {name: (REGISTRY.get(name), OWN.get(name)) for name in found}
        try:
            report = in_notebook_terms(check(
                package, only=graded, limit=limit, memory_mb=memory_mb,
                exercises=declared if found else exercises, no_sandbox=no_sandbox),
                upload) if graded else Report([], 0.0, "self-check")
        finally:   # this process's registry as it was (the declared stubs dropped)
            for name, (own, entry) in kept.items():
                for registry, value in ((REGISTRY, own), (OWN, entry)):
                    registry.pop(name, None)
                    if value is not None:
                        registry[name] = value
    for result in report.results:
        if result["id"] in found:
            result.update(graded_by=INSTRUCTOR, points=0.0, max_points=0)
            for c in result["checks"]:
                c.update(points=0.0, max_points=0.0)
    report.results += [{"id": name, "status": "missing", "graded_by": INSTRUCTOR,
                        "points": 0.0, "max_points": 0, "checks": [],
                        "message": "missing: no module of your package defines it"}
                       for name, where in found.items()
                       if where is None and name in wanted]
    return report


def _instructors(name: str, exercises: Any) -> bool:
    """Whether ``name`` is an exercise of the instructor's that this self-check
    has no file for (neither the catalogue's, a chapter's, nor in ``exercises``)."""
    own = REGISTRY.get(name)
    if own is not None and not own.examples_only:
        return exercises is None or \
            Path(own.file).resolve() != Path(exercises).resolve()
    try:
        select([name])
        return own is not None
    except KeyError:
        return True


def _listed(package: Path) -> List[str] | None:
    """The ids a package's ``__init__.py`` lists in ``EXERCISES`` (read, not run)."""
    init = package / "__init__.py"
    try:
        body = ast.parse(init.read_text()).body if init.is_file() else []
    except (SyntaxError, ValueError):
        return None
    for node in body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == \
                "EXERCISES":
            try:
                ids = ast.literal_eval(node.value)
            except ValueError:
                return None
            return [i for i in ids if isinstance(i, str)] \
                if isinstance(ids, (tuple, list)) else None
    return None


def _defined(package: Path, name: str) -> Tuple[str, List[str]] | None:
    """The module of the package that defines the function ``name`` at its top
    level, and its arguments (read, not run); None if none does."""
    for path in sorted(package.glob("*.py")):
        try:
            body = ast.parse(path.read_text()).body
        except (SyntaxError, ValueError):
            continue
        for node in body:
            if isinstance(node, ast.FunctionDef) and node.name == name and \
                    path.stem.isidentifier():
                args = node.args
                return path.stem, [a.arg for a in [*args.posonlyargs, *args.args,
                                                   *args.kwonlyargs]]
    return None
