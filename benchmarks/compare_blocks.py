"""Calibrate the faithfulness criterion with more seeds, and with blocks of 12.

Usage::

    python benchmarks/original_torch.py --tasks separated --seeds 48 --steps 5000 \\
        --jobs 2 --out benchmarks/results/torch_separated_48.json
    python -m scratchnet --tasks separated --recipes original --seeds 48 \\
        --steps 5000 --out benchmarks/results/separated_48 --quiet
    python benchmarks/compare_blocks.py --tasks separated \\
        --torch benchmarks/results/torch_separated_48.json \\
        --scratchnet benchmarks/results/separated_48/summary.csv

The criterion of ``bench_seed_study.py`` (medians within a factor 1.5 and a
two-sided Mann-Whitney p > 0.05, at every snapshot) compares 12 seeds with
12.  This script reads many seeds of both codes (JSON files written by
``original_torch.py`` and ``summary.csv`` files of ``python -m scratchnet``,
the seeds of several files merged) and prints, for each task and snapshot
that both cover:

* both codes over all their seeds, the ratio of medians and the rank test
  (more seeds, more power to see a real difference);
* how many pairs of disjoint 12-seed blocks fail the criterion, PyTorch block
  against PyTorch block, scratchnet against scratchnet, and PyTorch against
  scratchnet: two blocks of one code are two samples of one distribution,
  so their failures are the criterion's false alarms.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
from pathlib import Path

import numpy as np
from scipy.stats import mannwhitneyu


def fails(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether the criterion rejects: medians beyond 1.5x, or p <= 0.05."""
    ratio = np.median(b) / np.median(a)
    return not (1 / 1.5 <= ratio <= 1.5) or mannwhitneyu(a, b).pvalue <= 0.05


def blocks(values: dict, size: int = 12) -> list[np.ndarray]:
    seeds = sorted(values)
    return [np.array([values[s] for s in seeds[i:i + size]])
            for i in range(0, len(seeds) - size + 1, size)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--torch", type=Path, nargs="+", required=True,
                        metavar="JSON", help="written by original_torch.py --out")
    parser.add_argument("--scratchnet", type=Path, nargs="+", required=True,
                        metavar="CSV", help="summary.csv of python -m scratchnet")
    parser.add_argument("--tasks", default="separated,unequal-variance,sparse-tail")
    args = parser.parse_args()
    tasks = args.tasks.split(",")
    theirs: dict = {}
    for path in args.torch:  # the seeds of every file, merged
        for task, runs in json.loads(path.read_text())["errors"].items():
            if task in tasks:
                theirs.setdefault(task, {}).update({
                    int(s): {int(k): v for k, v in e.items()} for s, e in runs.items()})
    ours: dict = {}
    for path in args.scratchnet:
        with open(path) as f:
            for row in csv.DictReader(f):
                if row["recipe"] == "original" and row["task"] in theirs:
                    ours.setdefault(row["task"], {}).setdefault(int(row["seed"]), {})[
                        int(row["step"])] = float(row["max_abs_error"])
    print("| task | step | PyTorch, all seeds | scratchnet, all seeds | ratio | p | "
          "12-seed blocks failing: PyTorch/PyTorch, scratchnet/scratchnet, "
          "PyTorch/scratchnet |")
    print("|---|--:|---|---|--:|--:|---|")
    for task in theirs:
        steps = sorted(set.intersection(*(set(e) for e in theirs[task].values()),
                                        *(set(e) for e in ours[task].values())))
        for step in steps:
            a = {s: e[step] for s, e in theirs[task].items()}
            b = {s: e[step] for s, e in ours[task].items()}
            va, vb = np.array(list(a.values())), np.array(list(b.values()))
            p = mannwhitneyu(va, vb).pvalue
            ba, bb = blocks(a), blocks(b)
            tt = [fails(x, y) for x, y in itertools.combinations(ba, 2)]
            ss = [fails(x, y) for x, y in itertools.combinations(bb, 2)]
            ts = [fails(x, y) for x in ba for y in bb]
            ratio = np.median(vb) / np.median(va)
            print(f"| {task} | {step:,} | {np.median(va):.3f} ({len(va)}) | "
                  f"{np.median(vb):.3f} ({len(vb)}) | {ratio:.2f} | {p:.2f} | "
                  f"{sum(tt)}/{len(tt)}, {sum(ss)}/{len(ss)}, {sum(ts)}/{len(ts)} |")


if __name__ == "__main__":
    main()
