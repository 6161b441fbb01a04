"""The homework kit's command line: ``python -m scratchnet exercises COMMAND``.

``list`` prints the catalogue; ``make`` writes the student edition (or with
``--solutions`` the answer key) of exercises, chapters or any chapter
function, as a package or ``--notebook``; ``check`` grades a submission (by
``--assignment``, or as a student's self-check) and exits 0 at full marks, 1
otherwise and 2 for a usage error (no such folder, no exercises in it, an
unknown id), or grades a class into ``--csv``; ``autograder`` writes
Gradescope's zip.
"""

from __future__ import annotations

import argparse
import sys
import zipfile
from pathlib import Path
from typing import Sequence

from .assignment import write_assignment
from .catalogue import catalogue_text, select
from .course import autograder_zip, grade, grade_class
from .grader import UsageError
from .handout import make
from .own import load_exercises
from .selfcheck import self_check

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m scratchnet exercises",
        description="Hand out scratchnet's chapters as exercises and grade them.")
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("list", help="print the catalogue of exercises")
    show.add_argument("names", nargs="*", metavar="ID_OR_CHAPTER")
    show.add_argument("--exercises", metavar="FILE",
                      help="an exercises file of your own (listed too)")
    write = sub.add_parser("make", help="write the student edition as a package")
    write.add_argument("names", nargs="*", metavar="ID_OR_CHAPTER",
                       help="exercise ids or chapters (default: all)")
    write.add_argument("--out", required=True, metavar="DIR")
    write.add_argument("--exercises", metavar="FILE",
                       help="an exercises file of your own (scratchnet.exercises.own)")
    write.add_argument("--solutions", action="store_true",
                       help="the answer key: the bodies in place of the stubs")
    write.add_argument("--assignment", metavar="FILE",
                       help="also write the assignment (JSON), outside the hand-out")
    write.add_argument("--stub-hints", choices=("pointer", "none", "formula"),
                       default="pointer",
                       help="what a stub says: what to compute (default), nothing, "
                            "or the formula")
    write.add_argument("--notebook", action="store_true",
                       help="write a notebook (homework.ipynb) instead of a package")
    grade = sub.add_parser("check", help="grade a student's package (or a class)")
    grade.add_argument("directory", nargs="+", metavar="SUBMISSION",
                       help="a package, a folder holding one, or a notebook "
                            "(several with --csv)")
    grade.add_argument("--assignment", metavar="FILE",
                       help="grade exactly the exercises and points it lists")
    grade.add_argument("--exercises", metavar="FILE",
                       help="an exercises file of your own (or named in the "
                            "assignment)")
    grade.add_argument("--csv", metavar="FILE",
                       help="grade every SUBMISSION into one table (with "
                            "--assignment)")
    grade.add_argument("--only", nargs="+", default=[], metavar="ID",
                       help="grade only these exercise ids or chapters (of the "
                            "assignment, or of the package)")
    grade.add_argument("--json", metavar="FILE", help="Gradescope's results.json")
    grade.add_argument("--time-limit", type=float, default=None, metavar="SECONDS",
                       help="per check (default: the assignment's, else 10)")
    grade.add_argument("--memory-mb", type=int, default=None, metavar="MB",
                       help="address space of the child process (default: the "
                            "assignment's, else 2048)")
    grade.add_argument("--jobs", type=int, default=1, metavar="N",
                       help="with --csv: grade N submissions at once (default 1)")
    grade.add_argument("--no-sandbox", action="store_true",
                       help="where no sandbox can run (no bubblewrap, not root), "
                            "run the submissions as you, with your files: only for "
                            "code you trust")
    zipped = sub.add_parser("autograder", help="write Gradescope's autograder zip")
    zipped.add_argument("--assignment", required=True, metavar="FILE")
    zipped.add_argument("--out", required=True, metavar="ZIP")
    zipped.add_argument("--exercises", metavar="FILE",
                        help="an exercises file of your own (or named in the "
                             "assignment)")
    zipped.add_argument("--wheel", metavar="FILE",
                        help="scratchnet's wheel (default: built from this source)")
    return parser


def _check(args) -> int:
    """``check``: one submission, or a class into CSV; the exit status."""
    if args.csv:
        if not args.assignment:
            raise UsageError("--csv grades a class by an assignment: give "
                             "--assignment FILE")
        rows = grade_class(args.directory, args.assignment, args.csv, progress=print,
                           exercises=args.exercises, jobs=args.jobs,
                           no_sandbox=args.no_sandbox, only=args.only)
        print(f"wrote {len(rows)} rows to {args.csv}")
        return 0
    if len(args.directory) > 1:
        raise UsageError("several submissions are graded into a table: give --csv")
    if args.assignment:
        report = grade(args.directory[0], args.assignment, json_path=args.json,
                       limit=args.time_limit, memory_mb=args.memory_mb,
                       exercises=args.exercises, no_sandbox=args.no_sandbox,
                       only=args.only)
    else:
        report = self_check(args.directory[0], only=args.only,
                            limit=args.time_limit or 10.0,
                            memory_mb=args.memory_mb or 2048,
                            exercises=args.exercises, no_sandbox=args.no_sandbox)
        if args.json:
            report.write_gradescope(args.json)
    print(report.text())
    if report.mode == "assignment":   # about the grading (the sandbox), to who grades
        for note in report.notes:
            print(f"note: {note}", file=sys.stderr)
    return 0 if report.passed else 1


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``list``, ``make``, ``check`` or ``autograder``; return the exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after ``exercises`` (default ``sys.argv[1:]``).

    Returns
    -------
    int
        0 on success (``check``: full marks), 1 when ``check`` finds points
        lost, 2 for a usage error.

    Examples
    --------
    >>> main(["list", "relu_backward"])  # doctest: +NORMALIZE_WHITESPACE
    id             chapter  points  exercise
    relu_backward  layers        5  relu_backward(dout, cache)
        teaches: the ReLU passes the gradient where its input was > 0
        given:   relu_forward
    0
    >>> main(["check", "no/such/folder"])  # "error: no such submission: ..." on stderr
    2
    """
    try:
        args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as stop:
        return int(stop.code or 0)
    try:
        if args.command == "list":
            own = [e.id for e in load_exercises(args.exercises)] if args.exercises \
                else []
            print(catalogue_text(select(args.names or [*(e.id for e in select([])),
                                                       *own])))
            return 0
        if args.command == "make":
            if args.assignment and Path(args.assignment).resolve().is_relative_to(
                    Path(args.out).resolve()):
                raise UsageError("the assignment must be written outside the "
                                 "hand-out's folder")
            files = make(args.names, args.out, solutions=args.solutions,
                         stub_hints=args.stub_hints, notebook=args.notebook,
                         exercises=args.exercises)
            print(f"wrote {len(files)} files to {args.out}: "
                  f"{', '.join(f.name for f in files)}")
            if args.assignment:
                write_assignment(args.names, args.assignment,
                                 exercises_file=args.exercises)
                print(f"wrote the assignment to {args.assignment}")
            return 0
        if args.command == "autograder":
            path = autograder_zip(args.assignment, args.out, wheel=args.wheel,
                                  exercises=args.exercises)
            names = ", ".join(zipfile.ZipFile(path).namelist())
            print(f"wrote {path} ({names}): upload it as the autograder")
            return 0
        return _check(args)
    except (UsageError, KeyError) as err:
        print(f"error: {err.args[0]}", file=sys.stderr)
        return 2
