"""The assignment: the instructor's list of what is graded, kept outside the hand-out.

``exercises make IDS... --out DIR --assignment FILE`` writes it beside the
hand-out (never inside it), and ``exercises check SUBMISSION --assignment
FILE`` grades exactly what it lists.  The format is described in
:mod:`scratchnet.exercises.protocol`; this module writes, reads and checks it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, Sequence

from .catalogue import select
from .checking import checks_of
from .protocol import FORMAT
from .report import VISIBILITIES

__all__ = ["read_assignment", "write_assignment"]


def write_assignment(names: Sequence[str], path: Any, *, title: str = "",
                     exercises_file: Any = None) -> Dict:
    """Write the assignment of these exercises (catalogue points) to ``path``.

    Parameters
    ----------
    names : sequence of str
        Exercise ids or chapters, as for ``make``.
    path : str or Path
        The JSON file.
    title : str, optional
    exercises_file : str or Path, optional
        An instructor's exercises file (:mod:`scratchnet.exercises.own`),
        named in the assignment relative to its folder.

    Returns
    -------
    dict
        What was written.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     a = write_assignment(["relu_backward"], tmp + "/a.json")
    ...     read_assignment(tmp + "/a.json")["exercises"]
    [{'id': 'relu_backward', 'points': 5}]
    """
    exercises = select(list(names))
    data = {"format": FORMAT, "version": 1,
            "title": title or "scratchnet exercises: " + ", ".join(
                e.id for e in exercises),
            "exercises": [{"id": e.id, "points": e.points} for e in exercises],
            "allow": []}
    if exercises_file is not None:
        data["exercises_file"] = os.path.relpath(exercises_file, Path(path).parent)
    Path(path).write_text(json.dumps(data, indent=2) + "\n")
    return data


def read_assignment(path: Any) -> Dict[str, Any]:
    """Read and check an assignment file.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    dict
        The assignment, with ``allow`` defaulted to [].

    Raises
    ------
    ValueError
        Naming what is wrong: not JSON, not an assignment, an unknown id,
        points that are not a positive number, a check the exercise does not
        have (with those it has), a visibility not known.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = Path(tmp, "a.json").write_text('{"exercises": [{"id": "nope"}]}')
    ...     read_assignment(tmp + "/a.json")
    Traceback (most recent call last):
    ...
    ValueError: assignment a.json: exercise 1: no exercise 'nope' in the catalogue
    """
    path = Path(path)
    where = f"assignment {path.name}"
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as err:
        raise ValueError(f"{where}: cannot be read as JSON: {err}") from None
    if not isinstance(data, dict) or not isinstance(data.get("exercises"), list) \
            or not data["exercises"]:
        raise ValueError(f"{where}: expected an object with a non-empty list "
                         f"'exercises'")
    known = {e.id: e for e in select([])}
    shown = ", ".join(VISIBILITIES)
    seen = set()
    for i, entry in enumerate(data["exercises"], 1):
        if isinstance(entry, dict) and isinstance(entry.get("id"), str) and \
                entry["id"] not in known:   # any chapter function (issue 31)
            try:
                known.update({e.id: e for e in select([entry["id"]])})
            except KeyError:
                pass
        if not isinstance(entry, dict) or entry.get("id") not in known:
            got = entry.get("id") if isinstance(entry, dict) else entry
            raise ValueError(f"{where}: exercise {i}: no exercise {got!r} in the "
                             f"catalogue")
        if entry["id"] in seen:
            raise ValueError(f"{where}: exercise {entry['id']!r} is listed twice")
        seen.add(entry["id"])
        entry.setdefault("points", known[entry["id"]].points)
        points = entry["points"]
        if isinstance(points, bool) or not isinstance(points, (int, float)) or \
                not points > 0:
            raise ValueError(f"{where}: exercise {entry['id']!r}: points must be a "
                             f"positive number; got {points!r}")
        names = [c.name for c in checks_of(entry["id"])]
        for name, spec in (entry.get("checks") or {}).items():
            if name not in names:
                raise ValueError(f"{where}: {entry['id']!r} has no check {name!r}; "
                                 f"its checks: {', '.join(map(repr, names))}")
            if not isinstance(spec, dict):
                raise ValueError(f"{where}: {entry['id']!r} check {name!r}: expected "
                                 f"an object with 'weight' or 'visibility'; got "
                                 f"{spec!r}")
            weight = spec.get("weight", 1)
            if isinstance(weight, bool) or not isinstance(weight, (int, float)) or \
                    weight < 0:
                raise ValueError(f"{where}: {entry['id']!r} check {name!r}: weight "
                                 f"must be a number >= 0; got {weight!r}")
            if spec.get("visibility", "visible") not in VISIBILITIES:
                raise ValueError(f"{where}: {entry['id']!r} check {name!r}: "
                                 f"visibility must be one of {shown}; "
                                 f"got {spec['visibility']!r}")
    for key in ("visibility", "stdout_visibility"):
        if key in data and data[key] not in VISIBILITIES:
            raise ValueError(f"{where}: {key} must be one of {shown}; "
                             f"got {data[key]!r}")
    data.setdefault("allow", [])
    return data
