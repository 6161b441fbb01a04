"""The grader: the submission answers in a sandbox, the grader decides.

:func:`~scratchnet.exercises.check` copies the submission (plain files only,
:func:`~scratchnet.exercises.confine.stage`), chooses the sandbox
(:func:`~scratchnet.exercises.sandbox.choose`: refused without one unless
the code is the student's own or ``no_sandbox``), and starts a dedicated
grading process in a private folder (a fork of a clean ``python -I -S`` that
has imported the grader and does nothing else:
:mod:`~scratchnet.exercises.forkserver`), sending it the job on its stdin
(never in its argv, where any process could read it).  That
process reads the submission's source first (missing, broken, a library
import: messages), then grades each exercise in a fresh sandboxed child
(:mod:`scratchnet.exercises.remote`) that holds NumPy, the submission, the
answering shim and the reference source of the exercise's dependencies,
nothing else.  Every expected value, comparison, diagnosis, carry-forward
decision and point is decided in the grading process.  When the child dies,
the check it was in is charged and a new child answers the rest; when it
runs past the time limit, the exercise's remaining checks are skipped.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Sequence

from .analysis import find_package, handout_names, read_exercise
from .assignment import read_assignment
from .catalogue import CATALOGUE, Exercise, select
from .checking import checks_of, scored
from .confine import kill_uid, uid_for
from .forkserver import not_dumpable, start
from .grading import Children, exercise_budget, grade_exercise
from .own import load_own
from .report import Report
from .sandbox import Sandbox, SandboxRefused, choose, describe, stage

__all__ = ["Report", "UsageError", "check", "exercises_in", "grade", "main",
           "owned_by_me", "time_budget"]

#: The largest job the grading process reads from its stdin.
MAX_JOB_BYTES = 2**20


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


def grade(job: Dict[str, Any]) -> Report:
    """Grade in this process (the dedicated grading process): the report.

    Parameters
    ----------
    job : dict
        ``dir`` (the staged package folder), ``exercises`` (the
        assignment's entries), ``allow``, ``limit`` (seconds per check),
        ``memory_mb``, ``mode``, ``own`` (the instructor's exercises files),
        ``isolation`` (one of :data:`~scratchnet.exercises.sandbox.KINDS`) and
        optionally ``given`` (what the hand-out imports from scratchnet,
        :func:`~scratchnet.exercises.analysis.handout_names`; computed here
        when absent).

    Returns
    -------
    Report

    Examples
    --------
    >>> callable(grade)
    True
    """
    start = time.perf_counter()
    not_dumpable()
    load_own(*job.get("own", []))   # the instructor's exercises files
    workdir = Path(tempfile.mkdtemp(prefix="scratchnet-grading-"))
    try:
        box = Sandbox(job["isolation"], Path(job["dir"]), workdir,
                      memory_mb=job["memory_mb"], allow=job["allow"],
                      cpu_seconds=int(max(60, 40 * job["limit"])))
        entries = {e["id"]: e for e in job["exercises"]}
        exercises = select(list(entries))
        given = frozenset(job["given"]) if "given" in job else \
            handout_names(tuple(ex.id for ex in exercises))
        findings = {ex.id: read_exercise(box.package, ex.chapter, ex.id, given=given,
                                         allow=[*job["allow"],
                                                *entries[ex.id].get("allow", [])])
                    for ex in exercises}
        modules: Dict[str, bool] = {}
        for ex in exercises:
            if findings[ex.id]["status"] == "ok":
                modules[ex.chapter] = modules.get(ex.chapter, False) or \
                    findings[ex.id]["broken_module"]
        modules = dict(sorted(modules.items(), key=lambda item: not item[1]))
        dead: Dict[str, str] = {}
        done: Dict[str, Dict[str, Any]] = {}
        failed: set = set()
        for ex in exercises:
            done[ex.id] = grade_exercise(ex, findings[ex.id], failed,
                                     Children(ex, box, job, modules, dead))
            if done[ex.id]["status"] != "graded" or any(
                    c["status"] in ("fail", "error") for c in done[ex.id]["checks"]):
                failed.add(ex.id)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return Report([scored(done[ex.id], ex, entries[ex.id]) for ex in exercises],
                  time.perf_counter() - start, job.get("mode", "assignment"),
                  [describe(job["isolation"])], job["isolation"])


def check(directory: Any, *, assignment: Any = None, only: Sequence[str] = (),
          json_path: Any = None, limit: float = 10.0, memory_mb: int = 2048,
          exercises: Any = None, no_sandbox: bool = False,
          isolation: str | None = None) -> Report:
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
        Address space of the child process.
    no_sandbox : bool, default False
        Run the submission without a sandbox, as this user, where none can
        run (accepting the risk: only for code you trust).  A self-check
        (no assignment: the student's own code) runs without one where
        there is none.
    isolation : str, optional
        The sandbox already chosen (:func:`~scratchnet.exercises.sandbox.choose`),
        for a class graded with one choice.

    Returns
    -------
    Report

    Raises
    ------
    UsageError
        No such folder, no exercises, a bad assignment, an id in ``only``
        not graded, or no sandbox here (with the options).

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
    try:
        kind = isolation or choose(no_sandbox, own_code=assignment is None
                                   and owned_by_me(directory))
    except SandboxRefused as err:
        raise UsageError(str(err)) from None
    with tempfile.TemporaryDirectory(prefix="scratchnet-check-") as tmp:
        package = find_package(stage(directory, Path(tmp) / "upload"))
        job: Dict[str, Any] = {"dir": str(package), "limit": limit,
                               "memory_mb": memory_mb, "allow": [],
                               "own": load_own(exercises, assignment),
                               "isolation": kind}
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
        if not job["own"]:   # the catalogue's alone: the same names in any process,
            # so a class graded in one process writes its hand-outs once
            job["given"] = sorted(handout_names(tuple(
                ex.id for ex in select([e["id"] for e in job["exercises"]]))))
        report = _grading_process(job, Path(tmp))
    report.seconds = time.perf_counter() - start
    if json_path is not None:
        report.write_gradescope(json_path)
    return report


def owned_by_me(directory: Any) -> bool:
    """Whether every file and folder of ``directory`` belongs to this process's user.

    A self-check runs without a sandbox where none can run only on code that
    is one's own: a folder with anyone else's file in it is someone else's.

    Parameters
    ----------
    directory : str or Path

    Returns
    -------
    bool

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     owned_by_me(tmp)
    True
    """
    me = os.geteuid()
    for folder, dirs, files in os.walk(directory):
        if any(os.lstat(os.path.join(folder, n)).st_uid != me for n in [*dirs, *files]):
            return False
    return os.lstat(directory).st_uid == me


def _grading_process(job: Dict[str, Any], tmp: Path) -> Report:
    """Run :func:`main` in a grading process of its own, in a private folder, job
    on stdin: a fork of a clean ``python -I -S``
    (:mod:`~scratchnet.exercises.forkserver`)."""
    home = tmp / "grader"
    home.mkdir()
    # this scratchnet first, then this process's own path (its package folders and
    # what their .pth files added), never the working folder; -S: no sitecustomize
    # or .pth file runs in the grading process
    here = os.path.realpath(os.getcwd())
    path = [str(Path(__file__).resolve().parents[2]),
            *[p for p in sys.path if os.path.isabs(p) and os.path.realpath(p) != here]]
    budget = time_budget(job)
    proc = start(path, "scratchnet.exercises.grader", "main", str(home))
    try:
        out, err = proc.communicate(json.dumps(job).encode(), timeout=budget)
    except subprocess.TimeoutExpired:   # the grader's own clock, around everything
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        if os.geteuid() == 0:   # what its children left, as their uids
            for serial in range(256):
                kill_uid(uid_for(proc.pid, serial))
        raise RuntimeError(f"the grading process ran past its time budget of "
                           f"{budget:.0f} s and was stopped") from None
    text = out.decode(errors="replace").strip()
    if proc.returncode != 0 or not text:
        raise RuntimeError(f"the grading process failed (exit status "
                           f"{proc.returncode}): "
                           f"{err.decode(errors='replace')[-1500:]}")
    return Report.from_json(text)


def time_budget(job: Dict[str, Any]) -> float:
    """The wall-clock seconds a grading process may take: every check at its limit.

    Parameters
    ----------
    job : dict
        ``exercises`` and ``limit`` (seconds per call).

    Returns
    -------
    float
        Per exercise, its checks and a module load each at the limit, plus a
        minute for the sandbox and the rest.

    Examples
    --------
    >>> time_budget({"exercises": [{"id": "relu_backward"}], "limit": 10.0})
    180.0
    """
    ids = [e["id"] for e in job["exercises"]]
    return 60.0 + sum(exercise_budget(len(checks_of(i)), job["limit"]) for i in ids)


def main(argv: Sequence[str]) -> int:
    """The grading process: reads one JSON job (see :func:`grade`) on its stdin.

    Parameters
    ----------
    argv : sequence of str
        None: the job is never in the argv.

    Returns
    -------
    int
        0 when the report was printed, 2 for a wrong invocation.

    Examples
    --------
    >>> main(["job"])
    2
    """
    if argv:
        return 2
    text = sys.stdin.buffer.read(MAX_JOB_BYTES + 1)
    if len(text) > MAX_JOB_BYTES:
        return 2
    report = grade(json.loads(text))
    sys.stdout.write(report.to_json() + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
