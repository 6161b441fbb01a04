"""Write the result tables of the docs from a run of the seed study.

The tables of ``docs/experiments.md`` (median [min, max] over
12 seeds of the expected KL, the largest gap max |q - P| on [-4, 7] and the
accuracy) are not typed by hand: they are rendered from
``docs/results/seed_study.json``, the per-seed rows of one run of::

    python -m scratchnet --seeds 12 --out scratchnet-results

and written between marker comments, ``<!-- table:NAME -->`` and
``<!-- end table:NAME -->``, each with a line saying which machine measured it:
the JSON records the CPU, its cores, the OpenBLAS kernels NumPy ran on
(``OPENBLAS_CORETYPE`` forces others), NumPy's and Python's versions and the
date, taken when the summary is read, so run this on the machine and in the
environment that ran the study, right after it.  Usage::

    python scripts/make_tables.py scratchnet-results/summary.csv  # run -> JSON, tables
    python scripts/make_tables.py                    # JSON -> tables
    python scripts/make_tables.py --check            # exit 1 where they differ

``tests/test_docs.py`` checks that the tables say what the JSON says, and that
the JSON says what the code computes for its cheap rows (the 12 seeds of every
task's ``original`` run at step 100, trained afresh), at a tolerance that holds
on any CPU.  Later rows are not checked: training amplifies the last bits in
which CPUs' matrix products differ, and by 1,000 steps some seeds' numbers
differ by up to 10% between OpenBLAS kernels (by 10,000 steps, by tens of
percent), well inside the spread over seeds that the tables show.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import platform
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results" / "seed_study.json"
COMMAND = "python -m scratchnet --seeds 12"
TASKS = ("separated", "unequal-variance", "sparse-tail")
METRICS = ("expected_kl", "max_abs_error", "accuracy")

# Which (task, recipe, step) each table shows.
SUMMARY_ROWS = [
    (task, recipe, step)
    for task in TASKS
    for recipe, steps in (
        ("original", (1_000 if task == "sparse-tail" else 100, 10_000, 50_000)),
        ("covering", (10_000,)),
    )
    for step in steps
]
DOCS_ROWS = [
    (task, recipe, step)
    for task in TASKS
    for recipe, steps in (
        ("original", (100, 1_000, 10_000, 50_000)),
        ("covering", (100, 1_000, 10_000)),
    )
    for step in steps
]
STEPS = sorted({step for *_, step in DOCS_ROWS + SUMMARY_ROWS})


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _openblas_core() -> str:
    """The kernels OpenBLAS picks here (it prints them when OPENBLAS_VERBOSE=2)."""
    probe = "import numpy as np; np.ones((4, 4)) @ np.ones((4, 4))"
    out = subprocess.run(
        [sys.executable, "-c", probe],
        env={**os.environ, "OPENBLAS_VERBOSE": "2"},
        capture_output=True,
        text=True,
    )
    found = re.search(r"Core: (\S+)", out.stdout + out.stderr)
    return found.group(1) if found else "unknown"


def this_machine() -> dict[str, Any]:
    """The CPU, cores, OpenBLAS kernels, NumPy and Python of this machine, today."""
    blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "blas": f"{blas.get('name', 'BLAS')} {blas.get('version', '')}".strip(),
        "openblas_core": _openblas_core(),
        "numpy": np.__version__,
        "python": platform.python_version(),
        "date": datetime.date.today().isoformat(),
    }


def measured_on(machine: dict[str, Any]) -> str:
    """The line under a table naming the machine that measured it."""
    return (
        f"Measured on {machine['date']}: {machine['cpu']}, {machine['cores']} cores, "
        f"{machine['blas']} with its {machine['openblas_core']} kernels, "
        f"NumPy {machine['numpy']}, Python {machine['python']}."
    )


def read_run(path: Path) -> list[dict[str, Any]]:
    """The per-seed rows of a run's ``summary.csv`` at the steps the tables show."""
    rows = []
    with open(path, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if int(row["step"]) not in STEPS:
                continue
            rows.append(
                {
                    "task": row["task"],
                    "recipe": row["recipe"],
                    "seed": int(row["seed"]),
                    "step": int(row["step"]),
                    **{m: float(row[m]) for m in (*METRICS, "bayes_accuracy")},
                }
            )
    return rows


def _spread(rows: list[dict[str, Any]], task: str, recipe: str, step: int) -> dict:
    """Median, min and max over the seeds of each metric at one snapshot."""
    chosen = [
        r for r in rows if (r["task"], r["recipe"], r["step"]) == (task, recipe, step)
    ]
    if not chosen:
        raise ValueError(f"the run has no rows for {task}/{recipe} at step {step}")
    out = {"bayes_accuracy": chosen[0]["bayes_accuracy"], "seeds": len(chosen)}
    for m in METRICS:
        values = np.array([r[m] for r in chosen])
        out[m] = (float(np.median(values)), float(values.min()), float(values.max()))
    return out


def _fixed(t: tuple) -> str:
    return f"{t[0]:.3f} [{t[1]:.3f}, {t[2]:.3f}]"


def _sci(t: tuple) -> str:
    return f"{t[0]:.1e} [{t[1]:.1e}, {t[2]:.1e}]"


def summary_table(rows: list[dict[str, Any]]) -> str:
    """The summary table: max |q - P| and the expected KL at selected steps."""
    lines = [
        "| task | recipe | step | max abs(q - P) on [-4, 7] | E KL (nats) |",
        "|---|---|--:|--:|--:|",
    ]
    for task, recipe, step in SUMMARY_ROWS:
        s = _spread(rows, task, recipe, step)
        lines.append(
            f"| {task} | {recipe} | {step:,} | {_fixed(s['max_abs_error'])} "
            f"| {_sci(s['expected_kl'])} |"
        )
    return "\n".join(lines)


def docs_table(rows: list[dict[str, Any]]) -> str:
    """The docs' table: every recipe at 100, 1,000, 10,000 (and 50,000) steps."""
    lines = [
        "| task | recipe | step | E KL (nats) | max \\|q \u2212 P\\| on [\u22124, 7] "
        "| accuracy (Bayes) |",
        "|---|---|--:|--:|--:|--:|",
    ]
    for task, recipe, step in DOCS_ROWS:
        s = _spread(rows, task, recipe, step)
        accuracy = f"{s['accuracy'][0]:.2%} ({s['bayes_accuracy']:.2%})"
        lines.append(
            f"| {task} | {recipe} | {step:,} | {_sci(s['expected_kl'])} "
            f"| {_fixed(s['max_abs_error'])} | {accuracy} |"
        )
    return "\n".join(lines)


TABLES = {
    ROOT / "docs" / "experiments.md": {"seed-study": docs_table,
                                       "seed-study-summary": summary_table},
}


def _block(name: str) -> re.Pattern:
    return re.compile(
        rf"(<!-- table:{re.escape(name)} [^>]*-->\n)(.*?)(\n<!-- end table:"
        rf"{re.escape(name)} -->)",
        flags=re.S,
    )


def render(
    text: str, tables: dict, rows: list[dict[str, Any]], machine: dict[str, Any]
) -> str:
    """``text`` with every marked table replaced by its rendering from ``rows``,
    followed by the line naming the ``machine`` that measured them."""
    for name, make in tables.items():
        pattern = _block(name)
        if not pattern.search(text):
            raise ValueError(f"no <!-- table:{name} ... --> block in the text")
        table = f"{make(rows)}\n\n{measured_on(machine)}"
        text = pattern.sub(lambda m, t=table: m.group(1) + t + m.group(3), text)
    return text


def load() -> list[dict[str, Any]]:
    """The per-seed rows of the committed run."""
    return json.loads(RESULTS.read_text(encoding="utf-8"))["rows"]


def machine() -> dict[str, Any]:
    """The machine that measured the committed run."""
    return json.loads(RESULTS.read_text(encoding="utf-8"))["machine"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "summary", nargs="?", type=Path, help=f"summary.csv of a run of `{COMMAND}`"
    )
    parser.add_argument(
        "--check", action="store_true", help="only check; exit 1 where they differ"
    )
    args = parser.parse_args(argv)
    if args.summary is not None:
        rows = read_run(args.summary)
        RESULTS.parent.mkdir(exist_ok=True)
        RESULTS.write_text(
            json.dumps(
                {"command": COMMAND, "machine": this_machine(), "rows": rows}, indent=1
            )
            + "\n",
            encoding="utf-8",
        )
        print(f"wrote {RESULTS.relative_to(ROOT)} ({len(rows)} rows)")
    rows, measured = load(), machine()
    stale = []
    for path, tables in TABLES.items():
        text = path.read_text(encoding="utf-8")
        new = render(text, tables, rows, measured)
        if new != text:
            stale.append(path.relative_to(ROOT))
            if not args.check:
                path.write_text(new, encoding="utf-8")
    verb = "differ from" if args.check else "rewritten from"
    for path in stale:
        print(f"{path}: tables {verb} {RESULTS.relative_to(ROOT)}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
