"""A course's grading: any upload graded by its assignment, a class to CSV, Gradescope.

The instructor's assignment file (:mod:`scratchnet.exercises.protocol` gives
its schema) says which exercises are graded and for how many points.  Here:

- :func:`submission_package`: whatever a student uploaded (the package's
  files, one folder holding them, or a notebook) as a package to grade; a
  notebook's code cells, in order, are its module;
- :func:`grade`: one submission by the assignment: exactly its exercises (one
  the submission lacks scores 0, "missing"), its points, and Gradescope's
  ``results.json`` written even when nothing could be graded;
- :func:`grade_class`: many submissions into one CSV table, a row each,
  written as it is graded: each submission in a grading process of its own
  (``jobs`` at once), a submission that crashes its grading process is its
  row's "grader error", never the table's end;
- :func:`autograder_zip`: Gradescope's autograder, ``setup.sh`` (installs
  this version of scratchnet from a wheel inside the zip into a virtual
  environment, ``$AUTOGRADER_ROOT/venv``, default ``/autograder``) and
  ``run_autograder`` (grades ``$AUTOGRADER_ROOT/submission`` with it, into
  ``$AUTOGRADER_ROOT/results/results.json``).
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Dict, List, Sequence, Tuple

from .assignment import read_assignment
from .catalogue import CHAPTER_ORDER, select
from .grader import UsageError, check
from .notebook import cell_lines, in_cells, notebook_modules
from .own import load_own
from .report import Report, not_run
from .sandbox import SandboxRefused, choose, describe, stage

__all__ = ["autograder_zip", "checks_not_run", "grade", "grade_class",
           "in_notebook_terms", "submission_package"]

SETUP_SH = """\
#!/usr/bin/env bash
# Gradescope runs this once, from the autograder's folder (/autograder/source),
# to build the image.  It makes a virtual environment, $AUTOGRADER_ROOT/venv
# (AUTOGRADER_ROOT is /autograder unless set), and installs into it the
# scratchnet the assignment was made with, from the wheel beside this file (its
# dependencies, NumPy and Matplotlib, come from the package index): never into
# the system's Python, which an externally managed one refuses (PEP 668:
# Debian 12, Ubuntu 23.04 and later).  Where the image has apt-get and this
# runs as root, apt-get adds what is missing: venv's own package where Python
# comes without it, and bubblewrap, the sandbox the submissions run in
# (without it they run as a dedicated uid).
set -euo pipefail
cd "$(dirname "$0")"
venv="${{AUTOGRADER_ROOT:-/autograder}}/venv"
apt_install() {{
    command -v apt-get >/dev/null && [ "$(id -u)" = 0 ] || return 1
    (apt-get update -qq \\
        && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@") >/dev/null
}}
if ! python3 -m venv "$venv"; then
    rm -rf "$venv"
    version="$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
    apt_install python3-venv "python$version-venv" || apt_install python3-venv
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --no-cache-dir --disable-pip-version-check \\
    ./{wheel}
if ! command -v bwrap >/dev/null; then
    apt_install bubblewrap \\
        || echo "no bubblewrap: submissions will run as a dedicated uid" >&2
fi
"""

RUN_AUTOGRADER = """\
#!/usr/bin/env bash
# Gradescope runs this for each submission.  It grades the upload in
# $AUTOGRADER_ROOT/submission (the package's files, a folder holding them, or
# a notebook) by the assignment, with the scratchnet setup.sh installed in
# $AUTOGRADER_ROOT/venv, and writes $AUTOGRADER_ROOT/results/results.json.
# AUTOGRADER_ROOT is /autograder unless set (to try the autograder anywhere;
# without the venv, the python3 on the PATH grades, with its scratchnet).
set -uo pipefail
root="${{AUTOGRADER_ROOT:-/autograder}}"
python="$root/venv/bin/python"
[ -x "$python" ] || python=python3
mkdir -p "$root/results"
"$python" -m scratchnet exercises check "$root/submission" \\
    --assignment "$root/source/{assignment}" --json "$root/results/results.json"
exit 0   # points lost are in results.json, not an autograder failure
"""


def _assignment(path: Any, exercises: Any = None) -> Tuple[Dict[str, Any], List[str]]:
    """The assignment read, and the instructor's exercises files loaded."""
    try:
        own = load_own(exercises, path)
        return read_assignment(path), own
    except (ValueError, KeyError) as err:
        raise UsageError(str(err.args[0])) from None


def _notebook_in(upload: Path) -> Path | None:
    """The notebook an upload is (or holds, with no chapter module beside it)."""
    if upload.suffix == ".ipynb":
        return upload
    if not upload.is_dir() or any(next(upload.rglob(f"{c}.py"), None)
                                  for c in CHAPTER_ORDER):
        return None
    found = sorted(p for p in upload.rglob("*.ipynb")
                   if ".ipynb_checkpoints" not in p.parts)
    return found[0] if found else None


def submission_package(upload: Any, workdir: Any) -> Path:
    """What a student uploaded, as a folder the grader reads.

    Parameters
    ----------
    upload : str or Path
        The package's files (``softmax.py``, ...), a folder somewhere inside
        holding them (given back as it is: the grader finds it), or a notebook
        (an ``.ipynb`` file, or a folder with one), written out as a package by
        :func:`~scratchnet.exercises.notebook.notebook_modules`.
    workdir : str or Path
        Where a notebook's package is written (``workdir / "submission"``).

    Returns
    -------
    Path

    Raises
    ------
    UsageError
        If there is no such file or folder.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from scratchnet.exercises import make
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     nb = make(["relu_backward"], tmp, notebook=True)[0]
    ...     pkg = submission_package(nb, tmp)
    ...     sorted(p.name for p in pkg.iterdir())
    ['__init__.py', 'layers.py']
    """
    upload = Path(upload)
    if not upload.exists():
        raise UsageError(f"no such submission: {upload}")
    notebook = _notebook_in(upload)
    if notebook is None:
        return upload
    package = Path(workdir) / "submission"
    if package.exists():
        shutil.rmtree(package)
    package.mkdir(parents=True)
    for module, text in notebook_modules(notebook).items():
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,63}", module):   # a path: refused
            raise UsageError(f"a cell of {notebook.name} names the module {module!r}: "
                             f"not a module name")
        (package / f"{module}.py").write_text(text)
    meta = json.loads(notebook.read_text()).get("metadata", {}).get("scratchnet", {})
    (package / "__init__.py").write_text(   # the exercises it was made with
        f'"""A notebook, as a package."""\n\nEXERCISES = '
        f'{tuple(meta.get("exercises", ()))!r}\n')
    return package


def in_notebook_terms(report: Report, upload: Any) -> Report:
    """A notebook's report with each "softmax.py line 68" said as its cell and line.

    The grader reads a notebook as a package (:func:`submission_package`), so
    its messages name the package's files, which a notebook student never
    sees; this names the cell and the line in it
    (:func:`~scratchnet.exercises.notebook.in_cells`).  Any other upload's
    report is returned as it is.

    Parameters
    ----------
    report : Report
        The grader's report of ``upload`` (changed in place).
    upload : str or Path
        The upload the report grades: a notebook, or a folder holding one.

    Returns
    -------
    Report

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     in_notebook_terms(Report([], 0.0), tmp).results
    []
    """
    notebook = _notebook_in(Path(upload))
    if notebook is not None:
        lines = cell_lines(notebook)
        for result in report.results:
            for item in (result, *result.get("checks", ())):
                for key in ("message", "hint"):
                    if isinstance(item.get(key), str):
                        item[key] = in_cells(item[key], lines)
    return report


def grade(upload: Any, assignment: Any, *, json_path: Any = None,
          limit: float | None = None, memory_mb: int | None = None,
          exercises: Any = None, no_sandbox: bool = False,
          isolation: str | None = None, only: Sequence[str] = ()) -> Report:
    """Grade one upload by the assignment (see the module's docstring).

    Parameters
    ----------
    upload : str or Path
    assignment : str or Path
        The assignment file (:mod:`scratchnet.exercises.assignment`).
    json_path : str or Path, optional
        Write Gradescope's ``results.json`` there (also when nothing could be
        graded: score 0 and the reason), with the assignment's ``visibility``
        and ``stdout_visibility`` (:meth:`~scratchnet.exercises.Report.gradescope`).
    limit, memory_mb : optional
        Seconds per check and the child's memory (default: the assignment's,
        else 10 s and 2048 MB).
    exercises : str or Path, optional
        An instructor's exercises file (or named in the assignment).
    no_sandbox : bool, default False
        Run it without a sandbox where none can run (accepting the risk).
    isolation : str, optional
        The sandbox already chosen (:func:`~scratchnet.exercises.sandbox.choose`).
    only : sequence of str, optional
        Exercise ids (or chapters) of the assignment to grade, the others left
        out of the report.

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
    spec, _ = _assignment(assignment, exercises)
    shown = {k: spec[k] for k in ("visibility", "stdout_visibility") if k in spec}
    with tempfile.TemporaryDirectory(prefix="scratchnet-upload-") as tmp:
        try:
            if not Path(upload).exists():
                raise UsageError(f"no such submission: {upload}")
            copy = stage(upload, Path(tmp) / "upload")   # plain files: no links
            package = submission_package(copy, tmp)
            report = in_notebook_terms(check(
                package, assignment=assignment, exercises=exercises,
                no_sandbox=no_sandbox, isolation=isolation, only=only,
                **({"limit": limit} if limit else {}),
                **({"memory_mb": memory_mb} if memory_mb else {})), copy)
            if json_path is not None:
                report.write_gradescope(json_path, **shown)
            return report
        except UsageError as err:
            if json_path is not None:
                Path(json_path).write_text(json.dumps(
                    {"score": 0.0, "output": str(err), "tests": [],
                     "visibility": shown.get("visibility", "visible"),
                     "stdout_visibility": shown.get("stdout_visibility", "hidden")},
                    indent=2) + "\n")
            raise


def grade_class(uploads: Sequence[Any], assignment: Any, csv_path: Any, *,
                progress: Callable[[str], Any] | None = None, exercises: Any = None,
                jobs: int = 1, no_sandbox: bool = False,
                only: Sequence[str] = ()) -> List[Dict[str, Any]]:
    """Grade many uploads into one CSV: a row each, a column per exercise, the total.

    Each submission is graded in a grading process of its own, ``jobs`` at
    once; each row is written (and flushed) as soon as it and those before
    it are graded, so a table interrupted keeps what was finished.  A
    submission that could not be graded (a bad upload, or one that crashed
    its grading process) scores 0 with the reason in ``error``.

    Parameters
    ----------
    uploads : sequence of str or Path
        One per student (the submission's name is its file or folder name).
    assignment : str or Path
    csv_path : str or Path
        Written with the columns ``submission``, one per exercise id, ``total``,
        ``error`` (why a submission could not be graded) and ``not_run`` (the
        exercises stopped part-way by a time-out, :func:`checks_not_run`).
    progress : callable, optional
        Called with the isolation note once, then a line per submission.
    exercises : str or Path, optional
        An instructor's exercises file (or named in the assignment).
    jobs : int, default 1
        Submissions graded at once.
    no_sandbox : bool, default False
        Grade without a sandbox where none can run (accepting the risk).
    only : sequence of str, optional
        Exercise ids (or chapters) of the assignment: the table's columns.

    Returns
    -------
    list of dict
        The rows.

    Raises
    ------
    UsageError
        A bad assignment, or no sandbox here (with the options).

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
    submission,relu_backward,total,error,not_run
    ada,5,5,,
    bob,0,0,,
    """
    spec, _ = _assignment(assignment, exercises)
    if only:
        try:
            wanted = {e.id for e in select(list(only))}
        except KeyError as err:
            raise UsageError(err.args[0]) from None
        spec["exercises"] = [e for e in spec["exercises"] if e["id"] in wanted]
        if not spec["exercises"]:
            raise UsageError(f"none of {', '.join(only)} is in the assignment")
    ids = [e["id"] for e in spec["exercises"]]
    total = sum(e["points"] for e in spec["exercises"])
    try:
        kind = choose(no_sandbox)
    except SandboxRefused as err:
        raise UsageError(str(err)) from None
    if progress:
        progress(describe(kind))

    def one(upload: Any) -> Dict[str, Any]:
        row: Dict[str, Any] = {"submission": Path(upload).name}
        try:
            report = grade(upload, assignment, exercises=exercises, isolation=kind,
                           only=only)
            row.update({r["id"]: f"{r['points']:g}" for r in report.results})
            row.update(total=f"{report.score:g}", error="",
                       not_run=checks_not_run(report))
        except UsageError as err:
            row.update({i: "0" for i in ids}, total="0", error=str(err), not_run="")
        except Exception as err:   # the grading process crashed: this row only
            text = " ".join(str(err).split())[-300:]
            row.update({i: "0" for i in ids}, total="0", not_run="",
                       error=f"grader error: {type(err).__name__}: {text}")
        return row

    rows = []
    with open(csv_path, "w", newline="") as out, \
            ThreadPoolExecutor(max_workers=max(1, int(jobs))) as pool:
        writer = csv.DictWriter(out, fieldnames=["submission", *ids, "total", "error",
                                                 "not_run"])
        writer.writeheader()
        out.flush()
        for row in pool.map(one, uploads):
            writer.writerow(row)
            out.flush()
            rows.append(row)
            if progress:
                progress(f"{row['submission']}: {row['total']}/{total:g}"
                         + (f" ({row['error'][:120]})" if row["error"] else "")
                         + (f" - {row['not_run'][:200]}" if row["not_run"] else ""))
    return rows


def checks_not_run(report: Report) -> str:
    """The exercises of a report stopped part-way, and why (a CSV cell).

    After a time-out (or a child lost twice) an exercise's remaining checks are
    not run: they score 0, and this says how many and why.  An exercise that
    ran no check at all (not implemented yet, missing) shows its 0 and its
    reason in the report itself.

    Parameters
    ----------
    report : Report

    Returns
    -------
    str
        ``"id: k of n checks not run (why)"`` per exercise stopped part-way,
        ``"; "`` between them; "" when every check ran.

    Examples
    --------
    >>> checks_not_run(Report([{"id": "relu_backward", "status": "graded",
    ...     "checks": [{"message": ""}, {"message": "not run: the check 'values' "
    ...                                  "ran past the time limit"}]}], 0.0))
    "relu_backward: 1 of 2 checks not run (the check 'values' ran past the time limit)"
    """
    cells = []
    for r in report.results:
        why = [w for w in (not_run(r, c) for c in r.get("checks", ())) if w]
        if why and r["status"] == "graded":
            cells.append(f"{r['id']}: {len(why)} of {len(r['checks'])} checks not run "
                         f"({why[0]})")
    return "; ".join(cells)


def _wheel(folder: Path) -> Path:
    """Build this scratchnet's wheel into ``folder`` from a copy of its source.

    The copy (the package and its build files) keeps the build's outputs out
    of the checkout.  The build backend ``pyproject.toml`` names is called
    directly, in one process, with the setuptools installed here (what pip's
    ``--no-build-isolation`` does, without pip's own start and its three
    hook processes), so nothing is downloaded; where that backend is not
    installed, pip's isolated build is tried.
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
    pyproject = source / "pyproject.toml"
    named = re.search(r'^build-backend\s*=\s*"([\w.:]+)"',
                      pyproject.read_text() if pyproject.exists() else "", re.M)
    backend = named.group(1) if named else "setuptools.build_meta:__legacy__"
    module, _, attr = backend.partition(":")
    hook = (f"import sys, importlib; backend = importlib.import_module({module!r})"
            + (f".{attr}" if attr else "") + "; backend.build_wheel(sys.argv[1])")
    for command in ([sys.executable, "-c", hook, str(folder)],
                    [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps",
                     "--quiet", "-w", str(folder)]):
        done = subprocess.run(command, cwd=source, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
        built = sorted(folder.glob("scratchnet-*.whl"))
        if done.returncode == 0 and built:
            return built[0]
    raise UsageError(f"could not build scratchnet's wheel: {done.stderr[-500:]}")


def autograder_zip(assignment: Any, out: Any, *, wheel: Any = None,
                   exercises: Any = None) -> Path:
    """Write Gradescope's autograder zip for the assignment.

    Parameters
    ----------
    assignment : str or Path
    out : str or Path
        The zip to write.
    wheel : str or Path, optional
        scratchnet's wheel (default: built from this checkout's source).
    exercises : str or Path, optional
        An instructor's exercises file (or the one the assignment names): put
        in the zip, the assignment naming it.

    Returns
    -------
    Path
        ``out``, holding ``setup.sh``, ``run_autograder``, the assignment and
        the wheel.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from scratchnet.exercises.assignment import write_assignment
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = write_assignment(["relu_backward"], tmp + "/a.json")
    ...     wheel = pathlib.Path(tmp, "scratchnet-0.1.0-py3-none-any.whl")
    ...     _ = wheel.write_bytes(b"")   # a stand-in: the real one is built
    ...     path = autograder_zip(tmp + "/a.json", tmp + "/ag.zip", wheel=wheel)
    ...     names = sorted(zipfile.ZipFile(path).namelist())
    >>> names[:2], names[3:]
    (['assignment.json', 'run_autograder'], ['setup.sh'])
    """
    assignment = Path(assignment)
    _, own = _assignment(assignment, exercises)
    spec = json.loads(assignment.read_text())
    if own:
        spec["exercises_file"] = Path(own[0]).name
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
            zf.writestr("assignment.json", json.dumps(spec, indent=2) + "\n")
            if own:
                zf.write(own[0], Path(own[0]).name)
            zf.write(built, built.name)
    return out
