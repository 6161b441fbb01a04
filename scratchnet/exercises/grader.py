"""The grader: a student's package run apart, every check scored, a report and its JSON.

The student's code never runs in the grader's own process: a child
(:mod:`scratchnet.exercises.runner`) imports it with a memory limit and runs
each check under a time limit, writing a line per step to a file.  When the
child dies or hangs past a check's limit, the grader charges the check it was
in and starts a new child for the exercises left, so an infinite loop or a
huge allocation costs that check only.  Points: an exercise's points are shared
equally by its checks; a check passed with carry-forward keeps its share.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Sequence

from .catalogue import CATALOGUE, Exercise, select
from .runner import checks_for

__all__ = ["Report", "UsageError", "check", "exercises_in"]

_STATUS_TEXT = {
    "todo": "not implemented yet",
    "library": "hands back scratchnet's own {id} (imports it or calls it): no "
               "points; write it with NumPy, the library's function is what it is "
               "checked against",
}


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
    if init.exists():
        for node in ast.parse(init.read_text()).body:
            if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == \
                    "EXERCISES":
                return select(list(ast.literal_eval(node.value)))
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


@dataclass
class Report:
    """The graded exercises: per exercise its checks, points and messages.

    Attributes
    ----------
    results : list of dict
        Per exercise: ``id``, ``status``, ``points``, ``max_points`` and
        ``checks`` (``name``, ``status``, ``message``, ``hint``, ``points``,
        ``max_points``).
    seconds : float
        How long the grading took.

    Examples
    --------
    >>> Report([], 0.0).score
    0.0
    """

    results: List[Dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def score(self) -> float:
        """The total of the points scored.

        Returns
        -------
        float

        Examples
        --------
        >>> Report([{"points": 2.5, "max_points": 5}], 1.0).score
        2.5
        """
        return float(round(sum(r["points"] for r in self.results), 6))

    @property
    def max_score(self) -> float:
        """The total of the points there are.

        Returns
        -------
        float

        Examples
        --------
        >>> Report([{"points": 2.5, "max_points": 5}], 1.0).max_score
        5.0
        """
        return float(sum(r["max_points"] for r in self.results))

    def text(self) -> str:
        """The report a student reads: per exercise its score, per check PASS or FAIL.

        Returns
        -------
        str

        Examples
        --------
        >>> print(Report([], 0.0).text())
        total: 0/0 points
        """
        lines = []
        for r in self.results:
            lines.append(f"{r['id']}: {r['points']:g}/{r['max_points']:g} points"
                         + (f" - {r['message']}" if r.get("message") else ""))
            if r["status"] != "graded":
                continue  # not implemented, missing, the library's: said above
            carried = ""
            for c in r["checks"]:
                mark = "PASS" if c["status"] in ("pass", "carried") else "FAIL"
                lines.append(f"  {mark} {c['name']}" + (f": {c['message']}"
                                                        if c["message"] else ""))
                if c["status"] == "carried":
                    lines[-1] += " (carried forward)"
                    carried = c["hint"]
                elif c["hint"]:
                    lines.append(f"       hint: {c['hint']}")
            if carried:
                lines.append(f"  note: {carried}")
        lines.append(f"total: {self.score:g}/{self.max_score:g} points")
        return "\n".join(lines)

    def gradescope(self) -> Dict[str, Any]:
        """Gradescope's autograder results: ``score`` and one test per check.

        Returns
        -------
        dict
            ``{"score", "execution_time", "output", "tests": [{"name",
            "score", "max_score", "output"}, ...]}``; each test's name starts
            with its exercise id.

        Examples
        --------
        >>> Report([], 0.0).gradescope()["tests"]
        []
        """
        tests = []
        for r in self.results:
            if not r["checks"]:
                tests.append({"name": f"{r['id']}", "score": 0.0,
                              "max_score": float(r["max_points"]),
                              "output": r.get("message", "")})
            for c in r["checks"]:
                output = "\n".join(s for s in (c["message"], c["hint"] and
                                               f"hint: {c['hint']}") if s)
                tests.append({"name": f"{r['id']}: {c['name']}",
                              "score": round(c["points"], 6),
                              "max_score": round(c["max_points"], 6),
                              "output": output or "passed"})
        return {"score": self.score, "execution_time": round(self.seconds, 3),
                "output": f"{self.score:g}/{self.max_score:g} points", "tests": tests}


def _scored(result: Dict[str, Any], ex: Exercise) -> Dict[str, Any]:
    """Points for each check; one message when the whole exercise is out."""
    status = result["status"]
    names = [name for name, _ in checks_for(ex.id)]
    share = ex.points / len(names)
    whole = status in ("missing", "error") and not result["checks"]
    if status in _STATUS_TEXT or whole:
        message = result.get("message") or _STATUS_TEXT[status].format(id=ex.id)
        checks = [{"name": n, "status": status, "message": message if i == 0 else "",
                   "hint": ""} for i, n in enumerate(names)]
        result = {**result, "checks": checks, "message": message}
    for c in result["checks"]:
        c["max_points"] = share
        c["points"] = share if c["status"] in ("pass", "carried") else 0.0
    return {**result, "points": round(sum(c["points"] for c in result["checks"]), 6),
            "max_points": ex.points}


def _child(directory: Path, ids: List[str], failed: List[str], limit: float,
           memory_mb: int, results: Path) -> List[Dict[str, Any]]:
    """One child process; its records (it may stop early)."""
    config = results.with_suffix(".config.json")
    config.write_text(json.dumps({"dir": str(directory), "ids": ids, "failed": failed,
                                  "limit": limit, "memory_mb": memory_mb,
                                  "results": str(results)}))
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2]),
                                          os.environ.get("PYTHONPATH", "")])}
    log = results.with_suffix(".stderr")
    with open(log, "wb") as stderr:
        proc = subprocess.Popen([sys.executable, "-m", "scratchnet.exercises.runner",
                                 str(config)], env=env, cwd=results.parent,
                                stdout=subprocess.DEVNULL, stderr=stderr)
    seen, last = 0, time.monotonic()
    while proc.poll() is None:
        time.sleep(0.02)
        lines = results.read_text().splitlines() if results.exists() else []
        if len(lines) > seen:
            seen, last = len(lines), time.monotonic()
        elif time.monotonic() - last > limit + 5:
            proc.kill()
    proc.wait()
    stderr = log.read_text(errors="replace")[-2000:]
    records = [json.loads(line) for line in results.read_text().splitlines()] \
        if results.exists() else []
    results.unlink(missing_ok=True)
    records.append({"exit": proc.returncode, "stderr": stderr})
    return records


def check(directory: Any, *, only: Sequence[str] = (), json_path: Any = None,
          limit: float = 10.0, memory_mb: int = 2048) -> Report:
    """Grade a student's package: every exercise it holds, in a child process.

    Parameters
    ----------
    directory : str or Path
        The package (a folder written by ``make``, or one like it).
    only : sequence of str, optional
        Exercise ids (or chapters) to grade; default all it holds.
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
        No such folder, no exercises in it, or an id in ``only`` it lacks.

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
    present = exercises_in(directory)
    directory = Path(directory).resolve()
    if only:
        try:
            wanted = {ex.id for ex in select(list(only))}
        except KeyError as err:
            raise UsageError(err.args[0]) from None
        present = [ex for ex in present if ex.id in wanted]
        if not present:
            raise UsageError(f"none of {', '.join(only)} is in {directory}")
    by_id = {ex.id: ex for ex in present}
    done: Dict[str, Dict[str, Any]] = {}
    failed: List[str] = []
    with tempfile.TemporaryDirectory(prefix="scratchnet-grade-") as tmp:
        while len(done) < len(present):
            todo = [ex.id for ex in present if ex.id not in done]
            records = _child(directory, todo, failed, limit, memory_mb,
                             Path(tmp) / f"results{len(done)}.jsonl")
            current, check_name = None, None
            for record in records:
                if "start" in record:
                    current, check_name = record["start"], None
                elif "check" in record:
                    check_name = record["name"]
                elif "result" in record:
                    done[record["result"]["id"]] = record["result"]
                    current = None
            if current is None:
                current = next((i for i in todo if i not in done), None)
            if current is not None and current not in done:
                end = records[-1]
                why = (f"the grader's child process died (exit status {end['exit']}) "
                       f"in check {check_name!r}: a hang past the time limit, a crash "
                       f"or memory. {end['stderr'].strip()[-300:]}")
                done[current] = {"id": current, "status": "error", "checks": [],
                                 "message": why}
            failed = [i for i, r in done.items() if r["status"] != "graded" or any(
                c["status"] in ("fail", "error") for c in r["checks"])]
    report = Report([_scored(done[ex.id], by_id[ex.id]) for ex in present],
                    time.perf_counter() - start)
    if json_path is not None:
        Path(json_path).write_text(json.dumps(report.gradescope(), indent=2) + "\n")
    return report
