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

__all__ = ["Report"]


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
            if r.get("copied"):
                lines.append("  note: this exercise's code is the chapter's own body "
                             "(copying the library's source is plagiarism)")
        lines.append(f"total: {self.score:g}/{self.max_score:g} points")
        if self.mode == "self-check":
            lines.append("(a self-check: the exercises graded are those your package "
                         "lists; your instructor grades with the assignment)")
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
                              "output": output or "passed",
                              "visibility": c.get("visibility", "visible")})
        return {"score": self.score, "execution_time": round(self.seconds, 3),
                "output": "\n".join([f"{self.score:g}/{self.max_score:g} points",
                                     *self.notes]), "tests": tests,
                "extra_data": {"isolation": self.isolation}}

    def write_gradescope(self, path: Any) -> None:
        """Write :meth:`gradescope` as Gradescope's ``results.json`` at ``path``.

        Parameters
        ----------
        path : str or Path

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
        Path(path).write_text(json.dumps(self.gradescope(), indent=2) + "\n")

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
