"""The grader: the submission answers, the grader decides, and nothing outlives grading.

:func:`~scratchnet.exercises.check` reads the assignment (or, for a
student's self-check, the list in the package), then starts a dedicated
grading process (``python -m scratchnet.exercises.grader JOB``) and reads
its report.  That process reads
the submission's source first (:mod:`scratchnet.exercises.analysis`:
missing, broken, forbidden), becomes a child subreaper (Linux), starts the
child that imports the submission (:mod:`scratchnet.exercises.remote`), and
runs each check with its own copy of the checks: every expected value,
comparison, diagnosis, carry-forward decision and point is decided here.
When the child dies or hangs, the check it was in is charged and a new child
answers the rest.  Before the report goes out, the child's process group and
every descendant that escaped it are killed.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Sequence

from .analysis import NUMERICAL, find_package, handout_names, read_exercise
from .assignment import read_assignment
from .catalogue import CATALOGUE, Exercise, select
from .checking import checks_of, run_checks, scored
from .own import child_homes, load_own
from .privileges import child_environment, isolate
from .reaper import become_reaper, reap
from .remote import Child, ChildLost, LibraryUsed
from .report import Report
from .sides import Objects

__all__ = ["Report", "UsageError", "check", "exercises_in", "grade", "main"]


class UsageError(ValueError):
    """A wrong request to the grader: no such folder, no exercises in it, an unknown id.

    Parameters
    ----------
    message : str

    Examples
    --------
    >>> str(UsageError("no such directory: hw"))
    'no such directory: hw'
    """


def exercises_in(directory: Any) -> List[Exercise]:
    """The exercises a package holds: its ``EXERCISES``, else what its modules define.

    Parameters
    ----------
    directory : str or Path
        A package written by ``make`` (its ``__init__.py`` lists ``EXERCISES``)
        or by hand (then every catalogue object its chapter modules define).
        Read without running it.

    Returns
    -------
    list of Exercise

    Raises
    ------
    UsageError
        If the folder does not exist or holds none.

    Examples
    --------
    >>> import tempfile
    >>> from scratchnet.exercises import make
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = make(["softmax"], tmp + "/hw")
    ...     [ex.id for ex in exercises_in(tmp + "/hw")]
    ['softmax']
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise UsageError(f"no such directory: {directory}")
    init = directory / "__init__.py"
    try:
        listed = ast.parse(init.read_text()).body if init.exists() else []
    except SyntaxError:   # an __init__ that does not parse: read the modules
        listed = []
    for node in listed:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == \
                "EXERCISES":
            try:
                return select(list(ast.literal_eval(node.value)))
            except (KeyError, ValueError):
                break
    found = []
    for ex in CATALOGUE:
        path = directory / f"{ex.chapter}.py"
        if not path.exists():
            continue
        cls, _, method = ex.id.partition(".")
        try:
            tree = ast.parse(path.read_text())
        except SyntaxError:  # graded all the same: its checks say where the error is
            text = path.read_text()
            if re.search(rf"^(def|class) {cls}\b", text, re.M) and (
                    not method or re.search(rf"^\s+def {method}\b", text, re.M)):
                found.append(ex)
            continue
        for node in tree.body:
            imported = [a.asname or a.name for a in getattr(node, "names", [])
                        if isinstance(node, ast.ImportFrom)]
            if not method and cls in imported:   # the library's, to be told so
                found.append(ex)
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == cls:
                names = [getattr(m, "name", "") for m in node.body]
                if not method or method in names:
                    found.append(ex)
    if not found:
        raise UsageError(f"no exercises in {directory}: expected modules named as the "
                         f"chapters (softmax.py, layers.py, ...) defining catalogue "
                         f"objects, or a package written by 'exercises make'")
    return found


class _Children:
    """The current child, started (and its modules loaded) when a check needs one."""

    def __init__(self, directory: Path, modules: Dict[str, bool], job: Dict) -> None:
        self.directory, self.modules, self.job = directory, modules, job
        self.current: Child | None = None
        self.dead: Dict[str, str] = {}
        self.broken: Dict[str, str] = {}

    def get(self) -> Child:
        while self.current is None:
            child = Child(self.directory, child_homes(self.job["exercises"]),
                          [m for m in NUMERICAL if m not in self.job["allow"]],
                          limit=self.job["limit"], memory_mb=self.job["memory_mb"],
                          account=self.job["account"])
            try:
                for module, by_function in self.modules.items():
                    if module in self.dead:
                        continue
                    at = module
                    answer = child.request({"op": "load", "module": module,
                                            "by_function": by_function})
                    found = (answer.get("value") or {}).get("broken", {})
                    self.broken.update({f"{module}.{n}": w for n, w in found.items()})
                self.current = child
            except ChildLost as err:
                self.dead[at] = str(err)
        return self.current

    def lost(self) -> None:
        self.current = None

    def stop(self) -> None:
        if self.current is not None:
            self.current.stop()
            self.current = None


def _run(ex: Exercise, children: _Children, replace: Sequence[str],
         only: Sequence[str] = ()) -> List[Dict[str, Any]]:
    """The checks, one at a time: a lost child costs the check it was in."""
    out = []
    for name in [c.name for c in checks_of(ex.id)]:
        if only and name not in only:
            continue
        try:
            out += run_checks(ex, Objects(children.get(), ex.id, replace), only=[name])
        except ChildLost as err:
            children.lost()
            out.append({"name": name, "status": "error", "hint": "",
                        "message": str(err)})
    return out


def grade(job: Dict[str, Any]) -> Report:
    """Grade in this process (the dedicated grading process): the report.

    Parameters
    ----------
    job : dict
        ``dir`` (the package folder), ``exercises`` (the assignment's
        entries), ``allow``, ``limit`` (seconds per check), ``memory_mb``,
        ``mode``, ``own`` (the instructor's exercises files).

    Returns
    -------
    Report

    Examples
    --------
    >>> callable(grade)
    True
    """
    start = time.perf_counter()
    become_reaper()
    load_own(*job.get("own", []))   # the instructor's exercises files
    # as root: a copy nobody may only read, and a child started as nobody
    directory, account, notes = isolate(Path(job["dir"]))
    entries = {e["id"]: e for e in job["exercises"]}
    exercises = select(list(entries))
    given = handout_names(tuple(ex.id for ex in exercises))
    findings = {ex.id: read_exercise(directory, ex.chapter, ex.id, given=given,
                                     allow=[*job["allow"],
                                            *entries[ex.id].get("allow", [])])
                for ex in exercises}
    modules: Dict[str, bool] = {}
    for ex in exercises:
        if findings[ex.id]["status"] == "ok":
            modules[ex.chapter] = modules.get(ex.chapter, False) or \
                findings[ex.id]["broken_module"]
    # modules built definition by definition first: the others import them
    modules = dict(sorted(modules.items(), key=lambda item: not item[1]))
    done: Dict[str, Dict[str, Any]] = {}
    failed: set = set()
    children = _Children(directory, modules, {**job, "account": account})
    try:
        for ex in exercises:
            done[ex.id] = _grade_one(ex, findings[ex.id], children, failed)
            if done[ex.id]["status"] != "graded" or any(
                    c["status"] in ("fail", "error") for c in done[ex.id]["checks"]):
                failed.add(ex.id)
    finally:
        children.stop()
        reap()
    return Report([scored(done[ex.id], ex, entries[ex.id]) for ex in exercises],
                  time.perf_counter() - start, job.get("mode", "assignment"), notes)


def _grade_one(ex: Exercise, finding: Dict[str, Any], children: _Children,
               failed: set) -> Dict[str, Any]:
    result = {"id": ex.id, "status": "graded", "checks": [],
              "copied": finding["copied"]}
    if finding["status"] != "ok":
        return {**result, "status": finding["status"], "message": finding["message"]}
    children.get()
    key = f"{ex.chapter}.{ex.id.split('.')[0]}"
    if ex.chapter in children.dead or key in children.broken:
        why = children.broken.get(key) or children.dead[ex.chapter]
        return {**result, "status": "error", "message": f"{ex.chapter}.py: {why}"}
    try:
        checks = _run(ex, children, [])
    except LibraryUsed:
        return {**result, "status": "library"}
    if any(c["status"] == "todo" for c in checks):
        return {**result, "status": "todo"}
    wrong = [c["name"] for c in checks if c["status"] != "pass"]
    suspects = [use for use in ex.uses if use in failed]
    if wrong and suspects:
        try:
            again = {c["name"]: c for c in _run(ex, children, suspects, wrong)}
        except LibraryUsed:
            again = {}
        for c in checks:
            if again.get(c["name"], {}).get("status") == "pass":
                c.update(status="carried", message="", credit=1.0, hint=(
                    f"passes with the library's {' and '.join(suspects)} in place of "
                    f"yours: fix {' and '.join(suspects)} (graded there)"))
    return {**result, "checks": checks}


def check(directory: Any, *, assignment: Any = None, only: Sequence[str] = (),
          json_path: Any = None, limit: float = 10.0, memory_mb: int = 2048,
          exercises: Any = None) -> Report:
    """Grade a submission: the assignment's exercises, in a grading process of its own.

    Parameters
    ----------
    directory : str or Path
        The submission: the package's folder, or a folder holding its files
        (a flat upload), or a folder holding that one folder.
    exercises : str or Path, optional
        An instructor's exercises file (:mod:`scratchnet.exercises.own`); an
        assignment may name one too (``"exercises_file"``).
    assignment : str or Path, optional
        The instructor's assignment (JSON): exactly its exercises are graded,
        for its points.  Without it, a self-check: the exercises the package
        lists (or defines), and the report says so.
    only : sequence of str, optional
        Exercise ids (or chapters) to grade among those.
    json_path : str or Path, optional
        Also write Gradescope's ``results.json`` there.
    limit : float, default 10
        Seconds per check.
    memory_mb : int, default 2048
        Address space of the child process (Linux; not enforced on macOS).

    Returns
    -------
    Report

    Raises
    ------
    UsageError
        No such folder, no exercises, a bad assignment or an id in ``only``
        not graded.

    Examples
    --------
    >>> import tempfile
    >>> from scratchnet.exercises import make
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = make(["relu_backward"], tmp + "/key", solutions=True)
    ...     report = check(tmp + "/key")
    >>> report.score == report.max_score == 5
    True
    """
    start = time.perf_counter()
    if not Path(directory).is_dir():
        raise UsageError(f"no such directory: {directory}")
    package = find_package(directory).resolve()
    job: Dict[str, Any] = {"dir": str(package), "limit": limit, "memory_mb": memory_mb,
                           "allow": [], "own": load_own(exercises, assignment)}
    if assignment is not None:
        try:
            data = read_assignment(assignment)
        except ValueError as err:
            raise UsageError(str(err)) from None
        job.update(exercises=data["exercises"], allow=data["allow"])
        job["limit"] = float(data.get("time_limit", limit))
        job["memory_mb"] = int(data.get("memory_mb", memory_mb))
    else:
        job.update(mode="self-check", exercises=[
            {"id": e.id, "points": e.points} for e in exercises_in(package)])
    if only:
        try:
            wanted = {ex.id for ex in select(list(only))}
        except KeyError as err:
            raise UsageError(err.args[0]) from None
        job["exercises"] = [e for e in job["exercises"] if e["id"] in wanted]
        if not job["exercises"]:
            raise UsageError(f"none of {', '.join(only)} is graded in {directory}")
    env = {**os.environ, "PYTHONPATH": child_environment()["PYTHONPATH"]}
    proc = subprocess.run([sys.executable, "-m", "scratchnet.exercises.grader",
                           json.dumps(job)], capture_output=True, env=env,
                          stdin=subprocess.DEVNULL)
    lines = proc.stdout.decode(errors="replace").strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"the grading process failed (exit status "
                           f"{proc.returncode}): "
                           f"{proc.stderr.decode(errors='replace')[-1500:]}")
    report = Report.from_json(lines[-1])
    report.seconds = time.perf_counter() - start
    if json_path is not None:
        Path(json_path).write_text(json.dumps(report.gradescope(), indent=2) + "\n")
    return report


def main(argv: Sequence[str]) -> int:
    """The grading process: ``python -m scratchnet.exercises.grader JOB``.

    Parameters
    ----------
    argv : sequence of str
        One JSON job (see :func:`grade`).

    Returns
    -------
    int
        0 when the report was printed, 2 for a wrong invocation.

    Examples
    --------
    >>> main([])
    2
    """
    if len(argv) != 1:
        return 2
    report = grade(json.loads(argv[0]))
    sys.stdout.write(report.to_json() + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
