"""The report: per exercise its checks, points and messages; Gradescope's JSON.

Built by the grader from its own verdicts (never from anything the
student's process wrote), sent from the grading process as JSON
(:meth:`~scratchnet.exercises.Report.to_json`), and shown as text or as Gradescope's
``results.json``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Dict, List

__all__ = ["INSTRUCTOR", "VISIBILITIES", "Report", "not_run"]

#: An exercise's ``graded_by`` in a self-check when only the instructor can grade
#: it (an exercise of the instructor's own: its checks are in their file).
INSTRUCTOR = "instructor"

#: Gradescope's visibilities, from the least to the most restrictive: ``visible``
#: always, ``after_due_date`` once the due date has passed, ``after_published``
#: once the grades are published, ``hidden`` never (to the student).
VISIBILITIES = ("visible", "after_due_date", "after_published", "hidden")


def not_run(result: Dict[str, Any], check: Dict[str, Any]) -> str:
    """Why a check of an exercise did not run, or "" when it ran.

    A check runs only in a graded exercise (one not implemented yet, missing,
    broken or not loaded runs none), and not after a time-out or a child lost
    twice ended its exercise (the grader then says ``"not run: why"``).

    Parameters
    ----------
    result : dict
        The exercise's result (``status``, ``message``).
    check : dict
        One of its checks (``message``).

    Returns
    -------
    str

    Examples
    --------
    >>> not_run({"status": "todo", "message": "not implemented yet"}, {"message": ""})
    'not implemented yet'
    >>> not_run({"status": "graded"}, {"message": "not run: the check 'values' ran "
    ...                                "past the time limit"})
    "the check 'values' ran past the time limit"
    >>> not_run({"status": "graded"}, {"message": "expected 1, got 2"})
    ''
    """
    if result.get("status", "graded") != "graded":
        return result.get("message") or result.get("status", "")
    message = check.get("message") or ""
    return message[len("not run: "):] if message.startswith("not run: ") else ""


@dataclass
class Report:
    """The graded exercises: per exercise its checks, points and messages.

    Attributes
    ----------
    results : list of dict
        Per exercise: ``id``, ``status``, ``points``, ``max_points`` and
        ``checks`` (``name``, ``status``, ``message``, ``hint``, ``points``,
        ``max_points``); in a self-check, ``graded_by`` ``"instructor"`` for
        an exercise only the instructor can grade (0 points of 0: its
        docstring examples only are run here).
    seconds : float
        How long the grading took.
    mode : str
        ``"assignment"`` (graded against the instructor's file) or
        ``"self-check"`` (the graded set read from the student's package).
    notes : list of str
        What the grader says about the grading itself (the sandbox): in
        Gradescope's ``output``, not in :meth:`text` (the student's).
    isolation : str
        The sandbox the submission ran in
        (:data:`~scratchnet.exercises.sandbox.KINDS`); in Gradescope's
        ``extra_data``.

    Examples
    --------
    >>> Report([], 0.0).score
    0.0
    """

    results: List[Dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    mode: str = "assignment"
    notes: List[str] = field(default_factory=list)
    isolation: str = ""

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

    @property
    def passed(self) -> bool:
        """Whether nothing was found wrong: full marks, and every exercise the
        instructor grades ran its docstring examples without a failure.

        Returns
        -------
        bool

        Examples
        --------
        >>> Report([{"points": 5.0, "max_points": 5}], 1.0).passed
        True
        >>> Report([{"points": 0.0, "max_points": 0, "status": "todo",
        ...          "graded_by": "instructor", "checks": []}], 1.0).passed
        False
        """
        return self.score >= self.max_score and all(
            r.get("status") == "graded" and all(
                c["status"] in ("pass", "carried") for c in r["checks"])
            for r in self.results if r.get("graded_by") == INSTRUCTOR)

    def text(self) -> str:
        """The report a student reads: per exercise its score, per check PASS or FAIL.

        A check that did not run (after a time-out) says NOT RUN and why; an
        exercise that ran none (not implemented yet, missing) says so once.

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
            if r.get("graded_by") == INSTRUCTOR:
                lines += _instructors(r)
                continue
            lines.append(f"{r['id']}: {r['points']:g}/{r['max_points']:g} points"
                         + (f" - {r['message']}" if r.get("message") else ""))
            if r["status"] != "graded":
                continue  # not implemented, missing, the library's: said above
            carried = ""
            for c in r["checks"]:
                why = not_run(r, c)
                if why:
                    lines.append(f"  NOT RUN {c['name']}: {why}")
                    continue
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
            if r.get("copied"):
                lines.append("  note: this exercise's code is the chapter's own body "
                             "(copying the library's source is plagiarism)")
        theirs = [r["id"] for r in self.results if r.get("graded_by") == INSTRUCTOR]
        lines.append(f"total: {self.score:g}/{self.max_score:g} points"
                     + (f" (not counted: {', '.join(theirs)}, graded by your "
                        f"instructor)" if theirs else ""))
        if self.mode == "self-check":
            lines.append("(a self-check: the exercises graded are those your package "
                         "lists, not the code it gives, with the catalogue's points; "
                         "your instructor grades with the assignment)")
        return "\n".join(lines)

    def gradescope(self, visibility: str | None = None,
                   stdout_visibility: str = "hidden") -> Dict[str, Any]:
        """Gradescope's autograder results: the total, and one test per check.

        Each test has Gradescope's ``status``: ``"passed"`` when the check
        earned all its points, else ``"failed"``; a check that did not run
        scores 0 and says ``"not run: why"``, never "passed".

        Parameters
        ----------
        visibility : str, optional
            The top-level ``visibility``: who sees the total.  Default: the
            most restrictive of the tests' (``VISIBILITIES``), so that the
            total never shows a hidden test's points before the test itself.
        stdout_visibility : str, default "hidden"
            Who sees what ``run_autograder`` printed (the text report names
            every check, the hidden ones too).

        Returns
        -------
        dict
            ``{"score", "execution_time", "output", "visibility",
            "stdout_visibility", "tests": [{"name", "score", "max_score",
            "status", "output", "visibility"}, ...], "extra_data"}``; each
            test's name starts with its exercise id.

        Examples
        --------
        >>> out = Report([{"id": "relu_backward", "status": "todo", "points": 0.0,
        ...                "max_points": 5, "message": "not implemented yet",
        ...                "checks": [{"name": n, "points": 0.0, "max_points": 2.5,
        ...                            "message": "", "hint": "",
        ...                            "visibility": v} for n, v in
        ...                           [("values", "visible"), ("shapes", "hidden")]]
        ...                }], 0.0).gradescope()
        >>> for t in out["tests"]:
        ...     print(t["name"], t["score"], t["status"], t["output"], sep=" | ")
        relu_backward: values | 0.0 | failed | not run: not implemented yet
        relu_backward: shapes | 0.0 | failed | not run: not implemented yet
        >>> out["visibility"], out["stdout_visibility"]
        ('hidden', 'hidden')
        """
        tests = []
        for r in self.results:
            if not r["checks"]:
                tests.append({"name": f"{r['id']}", "score": 0.0,
                              "max_score": float(r["max_points"]), "status": "failed",
                              "output": r.get("message", ""), "visibility": "visible"})
            for c in r["checks"]:
                why = not_run(r, c)
                output = f"not run: {why}" if why else "\n".join(
                    s for s in (c["message"], c["hint"] and f"hint: {c['hint']}") if s)
                score, top = round(c["points"], 6), round(c["max_points"], 6)
                passed = not why and c.get("status") in ("pass", "carried") \
                    and score >= top
                tests.append({"name": f"{r['id']}: {c['name']}", "score": score,
                              "max_score": top,
                              "status": "passed" if passed else "failed",
                              "output": output or ("passed" if passed else "failed"),
                              "visibility": c.get("visibility", "visible")})
        shown = [t["visibility"] for t in tests] or ["visible"]
        return {"score": self.score, "execution_time": round(self.seconds, 3),
                "output": "\n".join([f"{self.score:g}/{self.max_score:g} points",
                                     *self.notes]),
                "visibility": visibility or max(shown, key=VISIBILITIES.index),
                "stdout_visibility": stdout_visibility, "tests": tests,
                "extra_data": {"isolation": self.isolation}}

    def write_gradescope(self, path: Any, **visibilities: Any) -> None:
        """Write :meth:`gradescope` as Gradescope's ``results.json`` at ``path``.

        Parameters
        ----------
        path : str or Path
        **visibilities
            ``visibility`` and ``stdout_visibility``, as :meth:`gradescope`
            takes them.

        Returns
        -------
        None

        Examples
        --------
        >>> import tempfile, pathlib
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     Report([], 0.0).write_gradescope(pathlib.Path(tmp) / "r.json")
        ...     json.loads((pathlib.Path(tmp) / "r.json").read_text())["score"]
        0.0
        """
        Path(path).write_text(json.dumps(self.gradescope(**visibilities), indent=2)
                              + "\n")

    def to_json(self) -> str:
        """The report as JSON (how the grading process hands it back).

        Returns
        -------
        str

        Examples
        --------
        >>> Report.from_json(Report([], 1.5).to_json()).seconds
        1.5
        """
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Report:
        """The report :meth:`to_json` wrote.

        Parameters
        ----------
        text : str

        Returns
        -------
        Report

        Examples
        --------
        >>> Report.from_json('{"results": [], "seconds": 0.0}').mode
        'assignment'
        """
        return cls(**json.loads(text))


def _instructors(result: Dict[str, Any]) -> List[str]:
    """A self-check's lines for an exercise only the instructor can grade."""
    head = f"{result['id']}: graded by your instructor (its checks and points are " \
        f"in the instructor's file)"
    if result.get("status") != "graded":
        return [f"{head} - {result.get('message') or result.get('status')}"]
    lines = [head]
    for c in result["checks"]:
        if c["status"] in ("pass", "carried"):
            lines.append(f"  PASS {c['name']} (your docstring's examples print what "
                         f"they show)")
        elif c["message"].startswith("no examples"):
            lines.append(f"  NOT RUN {c['name']}: {c['message']}")
        else:
            lines.append(f"  FAIL {c['name']}: {c['message']}")
    return lines
