"""A course's grading: any upload graded by its assignment, a class to CSV, Gradescope.

The instructor's assignment file (:mod:`scratchnet.exercises.protocol` gives
its schema) says which exercises are graded and for how many points.  Here:

- :func:`submission_package`: whatever a student uploaded (the package's
  files, one folder holding them, or a notebook) as a package to grade; a
  notebook's code cells, in order, are its module;
- :func:`grade`: one submission by the assignment: exactly its exercises (one
  the submission lacks scores 0, "missing"), its points, and Gradescope's
  ``results.json`` written even when nothing could be graded;
- :func:`grade_class`: many submissions into one CSV table, a row each;
- :func:`autograder_zip`: Gradescope's autograder, ``setup.sh`` (installs
  this version of scratchnet from a wheel inside the zip) and
  ``run_autograder`` (grades ``$AUTOGRADER_ROOT/submission``, default
  ``/autograder``, into ``$AUTOGRADER_ROOT/results/results.json``).
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any, Dict, List, Sequence

from .catalogue import CHAPTER_ORDER, select
from .grader import Report, UsageError, check
from .notebook import notebook_code

__all__ = ["autograder_zip", "grade", "grade_class", "read_assignment",
           "submission_package"]

SETUP_SH = """\
#!/usr/bin/env bash
# Gradescope runs this once, from the autograder's folder (/autograder/source),
# to build the image: it installs the scratchnet the assignment was made with,
# from the wheel beside it (its dependencies, NumPy and Matplotlib, come from
# the package index; nothing else is downloaded).
set -euo pipefail
cd "$(dirname "$0")"
python3 -m pip install --no-cache-dir ./{wheel}
"""

RUN_AUTOGRADER = """\
#!/usr/bin/env bash
# Gradescope runs this for each submission.  It grades the upload in
# $AUTOGRADER_ROOT/submission (the package's files, a folder holding them, or
# a notebook) by the assignment, and writes
# $AUTOGRADER_ROOT/results/results.json.  AUTOGRADER_ROOT is /autograder
# unless set (to try the autograder anywhere).
set -uo pipefail
root="${{AUTOGRADER_ROOT:-/autograder}}"
mkdir -p "$root/results"
python3 -m scratchnet exercises check "$root/submission" \\
    --assignment "$root/source/{assignment}" --json "$root/results/results.json"
exit 0   # points lost are in results.json, not an autograder failure
"""


def read_assignment(path: Any) -> Dict[str, Any]:
    """The assignment file, checked: its exercises exist, their points are numbers.

    Parameters
    ----------
    path : str or Path
        JSON: ``{"exercises": [{"id": ..., "points": ...}, ...], ...}``.

    Returns
    -------
    dict

    Raises
    ------
    UsageError
        No such file, not JSON, no exercises, an unknown id.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "a.json"
    ...     _ = path.write_text('{"exercises": [{"id": "softmax", "points": 4}]}')
    ...     [e["id"] for e in read_assignment(path)["exercises"]]
    ['softmax']
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise UsageError(f"no such assignment file: {path}") from None
    except ValueError as err:
        raise UsageError(f"{path} is not JSON: {err}") from None
    exercises = data.get("exercises") if isinstance(data, dict) else None
    if not exercises or not all(isinstance(e, dict) and "id" in e for e in exercises):
        raise UsageError(f"{path} must hold {{\"exercises\": [{{\"id\": ..., "
                         f"\"points\": ...}}, ...]}}")
    try:
        known = {ex.id: ex for ex in select([e["id"] for e in exercises])}
    except KeyError as err:
        raise UsageError(f"{path}: {err.args[0]}") from None
    for entry in exercises:
        points = entry.setdefault("points", known[entry["id"]].points)
        if not isinstance(points, (int, float)) or points < 0:
            raise UsageError(f"{path}: the points of {entry['id']} must be a "
                             f"non-negative number; got {points!r}")
    return data


def _has_modules(folder: Path) -> bool:
    return any((folder / f"{chapter}.py").exists() for chapter in CHAPTER_ORDER)


def submission_package(upload: Any, workdir: Any, ids: Sequence[str]) -> Path:
    """What a student uploaded, as a package of the assignment's exercises.

    Parameters
    ----------
    upload : str or Path
        The package's files (``softmax.py``, ...), a folder somewhere inside
        holding them, or a notebook (an ``.ipynb`` file, or a folder with one).
    workdir : str or Path
        Where the package is written (``workdir / "submission"``).
    ids : sequence of str
        The assignment's exercises: the package's ``EXERCISES``.

    Returns
    -------
    Path

    Raises
    ------
    UsageError
        If the upload holds no chapter module and no notebook.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     up = pathlib.Path(tmp) / "upload" / "hw1"
    ...     up.mkdir(parents=True)
    ...     _ = (up / "softmax.py").write_text("def softmax(x): return x")
    ...     pkg = submission_package(up.parent, pathlib.Path(tmp) / "w", ["softmax"])
    ...     sorted(p.name for p in pkg.iterdir())
    ['__init__.py', 'softmax.py']
    """
    upload, package = Path(upload), Path(workdir) / "submission"
    if not upload.exists():
        raise UsageError(f"no such submission: {upload}")
    if package.exists():
        shutil.rmtree(package)
    package.mkdir(parents=True)
    if upload.is_dir():
        inside = [upload, *sorted(p for p in upload.rglob("*") if p.is_dir())]
        with_modules = [f for f in inside if _has_modules(f)]
        notebooks = sorted(p for p in upload.rglob("*.ipynb")
                           if ".ipynb_checkpoints" not in p.parts)
    else:
        with_modules, notebooks = [], [upload] if upload.suffix == ".ipynb" else []
    if with_modules:
        for path in with_modules[0].glob("*.py"):
            shutil.copy(path, package / path.name)
    elif notebooks:
        (package / "notebook.py").write_text(notebook_code(notebooks[0]))
        for chapter in {ex.chapter for ex in select(list(ids))}:
            (package / f"{chapter}.py").write_text(
                f'"""The notebook\'s code, as the chapter module {chapter}."""\n\n'
                "from .notebook import *  # noqa: F403\n")
    else:
        raise UsageError(f"no exercises in {upload}: expected modules named as the "
                         f"chapters (softmax.py, layers.py, ...) or a notebook")
    (package / "__init__.py").write_text(
        f'"""The submission, graded by the assignment."""\n\nEXERCISES = '
        f"{tuple(ids)!r}\n")
    return package


def _by_points(report: Report, points: Dict[str, float]) -> Report:
    """The report with each exercise's points (and its checks') scaled to ``points``."""
    for result in report.results:
        scale = points[result["id"]] / result["max_points"] if result["max_points"] \
            else 0.0
        for c in result["checks"]:
            c["points"], c["max_points"] = c["points"] * scale, c["max_points"] * scale
        result["points"] = round(result["points"] * scale, 6)
        result["max_points"] = points[result["id"]]
    return report


def grade(upload: Any, assignment: Any, *, json_path: Any = None,
          limit: float | None = None, memory_mb: int | None = None) -> Report:
    """Grade one upload by the assignment (see the module's docstring).

    Parameters
    ----------
    upload : str or Path
    assignment : str or Path
        The assignment file.
    json_path : str or Path, optional
        Write Gradescope's ``results.json`` there (also when nothing could be
        graded: score 0 and the reason).
    limit, memory_mb : optional
        Seconds per check and the child's memory (default: the assignment's,
        else 10 s and 2048 MB).

    Returns
    -------
    Report

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from scratchnet.exercises import make
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = make(["relu_backward"], tmp + "/key", solutions=True)
    ...     path = pathlib.Path(tmp) / "a.json"
    ...     _ = path.write_text('{"exercises": [{"id": "relu_backward", "points": 2},'
    ...                         ' {"id": "softmax", "points": 3}]}')
    ...     report = grade(tmp + "/key", path)
    >>> [(r["id"], r["points"], r["max_points"]) for r in report.results]
    [('softmax', 0.0, 3), ('relu_backward', 2.0, 2)]
    """
    spec = read_assignment(assignment)
    ids = [e["id"] for e in spec["exercises"]]
    with tempfile.TemporaryDirectory(prefix="scratchnet-upload-") as tmp:
        try:
            package = submission_package(upload, tmp, ids)
        except UsageError as err:
            if json_path is not None:
                Path(json_path).write_text(json.dumps(
                    {"score": 0.0, "output": str(err), "tests": []}, indent=2) + "\n")
            raise
        report = check(package, limit=limit or spec.get("time_limit", 10.0),
                       memory_mb=memory_mb or spec.get("memory_mb", 2048))
    report = _by_points(report, {e["id"]: e["points"] for e in spec["exercises"]})
    if json_path is not None:
        Path(json_path).write_text(json.dumps(report.gradescope(), indent=2) + "\n")
    return report


def grade_class(uploads: Sequence[Any], assignment: Any, csv_path: Any, *,
                progress: Any = None) -> List[Dict[str, Any]]:
    """Grade many uploads into one CSV: a row each, a column per exercise, the total.

    Parameters
    ----------
    uploads : sequence of str or Path
        One per student (the submission's name is its file or folder name).
    assignment : str or Path
    csv_path : str or Path
        Written with the columns ``submission``, one per exercise id, ``total``
        and ``error`` (why a submission could not be graded).
    progress : callable, optional
        Called with a line per submission graded.

    Returns
    -------
    list of dict
        The rows.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from scratchnet.exercises import make
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = make(["relu_backward"], tmp + "/ada", solutions=True)
    ...     _ = make(["relu_backward"], tmp + "/bob")
    ...     path = pathlib.Path(tmp) / "a.json"
    ...     _ = path.write_text('{"exercises": [{"id": "relu_backward", "points": 5}]}')
    ...     _ = grade_class([tmp + "/ada", tmp + "/bob"], path, tmp + "/grades.csv")
    ...     print(pathlib.Path(tmp, "grades.csv").read_text().strip())
    submission,relu_backward,total,error
    ada,5,5,
    bob,0,0,
    """
    spec = read_assignment(assignment)
    ids = [e["id"] for e in spec["exercises"]]
    rows = []
    for upload in uploads:
        row: Dict[str, Any] = {"submission": Path(upload).name}
        try:
            report = grade(upload, assignment)
            row.update({r["id"]: f"{r['points']:g}" for r in report.results})
            row.update(total=f"{report.score:g}", error="")
        except UsageError as err:
            row.update({i: "0" for i in ids}, total="0", error=str(err))
        rows.append(row)
        if progress:
            progress(f"{row['submission']}: {row['total']}/"
                     f"{sum(e['points'] for e in spec['exercises']):g}")
    with open(csv_path, "w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=["submission", *ids, "total", "error"])
        writer.writeheader()
        writer.writerows(rows)
    return rows


def _wheel(folder: Path) -> Path:
    """Build this scratchnet's wheel into ``folder`` from a copy of its source.

    The copy (the package and its build files) keeps the build's outputs out
    of the checkout; ``--no-build-isolation`` builds with the setuptools
    installed here, so nothing is downloaded, else pip's isolated build is
    tried.
    """
    root = Path(__file__).resolve().parents[2]
    files = [n for n in ("setup.cfg", "pyproject.toml", "setup.py", "README.md",
                         "LICENSE") if (root / n).exists()]
    if "setup.cfg" not in files and "pyproject.toml" not in files:
        raise UsageError(f"scratchnet is installed without its source ({root}): "
                         f"build its wheel and pass it with --wheel")
    source = folder / "source"
    shutil.copytree(root / "scratchnet", source / "scratchnet",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in files:
        shutil.copy(root / name, source / name)
    for isolation in (["--no-build-isolation"], []):
        done = subprocess.run([sys.executable, "-m", "pip", "wheel", str(source),
                               "--no-deps", "--quiet", "-w", str(folder), *isolation],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True)
        if done.returncode == 0:
            return next(folder.glob("scratchnet-*.whl"))
    raise UsageError(f"could not build scratchnet's wheel: {done.stderr[-500:]}")


def autograder_zip(assignment: Any, out: Any, *, wheel: Any = None) -> Path:
    """Write Gradescope's autograder zip for the assignment.

    Parameters
    ----------
    assignment : str or Path
    out : str or Path
        The zip to write.
    wheel : str or Path, optional
        scratchnet's wheel (default: built from this checkout's source).

    Returns
    -------
    Path
        ``out``, holding ``setup.sh``, ``run_autograder``, the assignment and
        the wheel.
    """
    assignment = Path(assignment)
    read_assignment(assignment)
    out = Path(out)
    with tempfile.TemporaryDirectory(prefix="scratchnet-wheel-") as tmp:
        built = Path(wheel) if wheel else _wheel(Path(tmp))
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
            for name, text in [("setup.sh", SETUP_SH.format(wheel=built.name)),
                               ("run_autograder", RUN_AUTOGRADER.format(
                                   assignment="assignment.json"))]:
                info = zipfile.ZipInfo(name)
                info.external_attr = 0o755 << 16   # executable
                zf.writestr(info, text)
            zf.write(assignment, "assignment.json")
            zf.write(built, built.name)
    return out
