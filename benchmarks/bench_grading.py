"""How long the grader takes over a full submission: the number the docs quote.

Run from the repository root::

    python benchmarks/bench_grading.py              # 3 runs of each submission
    python benchmarks/bench_grading.py --runs 5

Two submissions of all 17 exercises of the catalogue are graded, alternately,
``--runs`` times each: the answer key (``make --solutions``) and the minimal
NumPy submission of the tests (``tests/_minimal_submission.py``).  A grading
is what ``python -m scratchnet exercises check DIR`` does: the reading of the
package, the start of the grading and child processes, every check (the
networks' two trainings to the posterior included) and the end of the
children.  The reference, measured in the same run, is the same checks run
in this process (``assert_passes``'s way: no child, no limits), so the ratio
is what grading in a separate, limited process costs.

The script prints each run, then the line the docs quote: the range over all
runs and the machine's load average.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _in_process(directory: Path) -> float:
    """Seconds to run every check of every exercise here, on the package's code."""
    import importlib

    from scratchnet.exercises import CATALOGUE
    from scratchnet.exercises.checking import run_checks
    from scratchnet.exercises.sides import Local

    sys.path.insert(0, str(directory.parent))
    try:
        start = time.perf_counter()
        for ex in CATALOGUE:
            module = importlib.import_module(f"{directory.name}.{ex.chapter}")
            run_checks(ex, Local(getattr(module, ex.id.split(".")[0])))
        return time.perf_counter() - start
    finally:
        sys.path.remove(str(directory.parent))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3,
                        help="gradings of each submission")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT / "tests"))
    from _minimal_submission import write

    from scratchnet.exercises import check, make

    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory(prefix="bench-grading-") as tmp:
        subs = {"answer key": Path(tmp) / "key", "minimal": Path(tmp) / "minimal"}
        make([], subs["answer key"], solutions=True)
        write(subs["minimal"], {})
        graded, here = [], []
        for run in range(args.runs):
            for name, path in subs.items():
                start = time.perf_counter()
                report = check(path)
                seconds = time.perf_counter() - start
                assert report.score == report.max_score, report.text()
                local = _in_process(path)
                graded.append(seconds)
                here.append(local)
                print(f"run {run + 1}, {name}: graded in {seconds:.2f} s, the same "
                      f"checks in this process {local:.2f} s "
                      f"(ratio {seconds / local:.2f})", flush=True)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"\nA full submission of all 17 exercises is graded in {min(graded):.1f} to "
          f"{max(graded):.1f} s (median {statistics.median(graded):.1f} s; "
          f"{statistics.median(g / h for g, h in zip(graded, here)):.2f} times the "
          f"checks run in-process) on {os.cpu_count()} cores, load average "
          f"{load:.1f}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
