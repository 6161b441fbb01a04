"""Sweeps, timed: the default sweep, and a large one on a local Dask cluster.

Usage::

    python benchmarks/bench_sweep.py default                # python -m scratchnet sweep
    python benchmarks/bench_sweep.py dask --workers 2       # 20 x 20 x 5 seeds on Dask
    python benchmarks/bench_sweep.py dask --mu2 1,3 --sigma1 1,2 --seeds 1 --steps 100
    python benchmarks/bench_sweep.py losses                 # the three losses, 8 x 8
    python benchmarks/bench_sweep.py replot benchmarks/results/sweep_dask/sweep.pickle

``default`` runs the command line's default sweep (an 8 x 8 grid of the
two-Gaussian family holding the study's three tasks, 3 seeds, budgets 1,000
and 10,000, the ``textbook`` recipe, the cross-entropy) and prints its wall
time with the load average before and after.  ``dask`` starts a
``dask.distributed.LocalCluster`` of ``--workers`` single-threaded worker
processes and runs a sweep through it (``scheduler=client``), by default the
20 x 20 grid ``--mu2 0.25:5:20 --sigma1 0.625:3:20`` with 5 seeds and budgets
1,000, 3,000 and 10,000.  ``losses`` compares the cross-entropy, the squared
error and the hinge loss on the default grid at budgets 300 to 10,000, and
prints the table of ``docs/sweeps.md`` (:func:`loss_table`); beside the usual
figures it draws each loss's phase diagram at 1,000 and 10,000 steps
(``phase_<loss>_1000_10000.png``: ``docs/_static/sweeps/phase_hinge.png`` and
``phase_mse.png`` are those of the hinge and the squared error).  Each writes
its tables, figures and a pickle of the result (for ``replot``) to
``benchmarks/results/sweep_<kind>/``, or ``--out``.
"""

from __future__ import annotations

import argparse
import math
import os
import pickle
import sys
import time
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # tiny matrices: one BLAS thread per process

import numpy as np  # noqa: E402

import scratchnet as sn  # noqa: E402

HERE = Path(__file__).resolve().parent


def _load() -> str:
    try:
        return " ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "unknown"


def _finish(result: sn.experiments.Sweep, out: Path, label: str, before: str,
            dpi: int) -> None:
    after = _load()
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "sweep.pickle", "wb") as f:
        pickle.dump(result, f)
    result.write(out)
    paths = sn.experiments.save_sweep_figures(result, out, dpi=dpi)
    if len(result.grid.losses) > 1:
        paths += _docs_phase(result, out, dpi)
        print(loss_table(result))
    print(result.overview())
    print(f"{label}: {result.grid.runs:,} networks x {result.grid.steps[-1]:,} steps "
          f"on {result.where} in {result.elapsed:.1f} s "
          f"({result.grid.runs / result.elapsed:.2f} runs/s); load average "
          f"before {before}, after {after}")
    print("wrote", ", ".join(p.name for p in paths), "to", out)


_LOSS_NAMES = {"cross_entropy": "cross-entropy", "mse": "squared error",
               "hinge": "hinge"}


def _median(values: list[float]) -> float:
    return float(np.median(values)) if values else math.nan


def _kl(value: float) -> str:
    """The expected KL as the docs write it: $a \\cdot 10^{b}$, or infinite."""
    if math.isinf(value):
        return "$\\infty$"
    mantissa, exponent = f"{value:.1e}".split("e")
    return f"${mantissa} \\cdot 10^{{{int(exponent)}}}$"


def loss_table(result: sn.experiments.Sweep) -> str:
    """The loss comparison of docs/sweeps.md: per loss, the grid's median error at
    1,000 / 10,000 steps, the share within 0.05 and the medians of the expected KL
    and of the accuracy gap at 10,000 (medians over seeds, then over the grid)."""
    lines = ["| loss | grid median error, 1,000 / 10,000 steps | tasks within 0.05 at "
             "10,000 | median expected KL at 10,000 | median accuracy gap at 10,000 |",
             "|---|---|--:|--:|--:|"]
    summary = result.summary()
    for loss in result.grid.losses:
        at = {step: [r for r in summary if r["loss"] == loss and r["step"] == step]
              for step in (1000, 10_000)}
        errors = {step: [r["max_abs_error"] for r in rows] for step, rows in at.items()}
        within = np.mean(np.array(errors[10_000]) < 0.05)
        kl = _median([r["expected_kl"] for r in at[10_000]])
        gap = _median([r["bayes_accuracy"] - r["accuracy"] for r in at[10_000]])
        lines.append(f"| {_LOSS_NAMES[loss]} | {_median(errors[1000]):.3f} / "
                     f"{_median(errors[10_000]):.3f} | {within:.0%} | {_kl(kl)} | "
                     f"{gap:.4f} |")
    return "\n".join(lines)


def _docs_phase(result: sn.experiments.Sweep, out: Path, dpi: int) -> list[Path]:
    """Each loss's phase diagram at 1,000 and 10,000 steps (the docs' figures)."""
    if not {1000, 10_000} <= set(result.grid.steps):
        return []
    paths = []
    for loss in result.grid.losses:
        path = out / f"phase_{loss}_1000_10000.png"
        sn.experiments.phase_diagram(result, loss=loss, steps=(1000, 10_000)).savefig(
            path, dpi=dpi)
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=("default", "dask", "losses", "replot"))
    parser.add_argument("pickle", nargs="?", type=Path,
                        help="for replot: a sweep.pickle written before")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--mu2", default="0.25:5:20")
    parser.add_argument("--sigma1", default="0.625:3:20")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--steps", default="1000,3000,10000")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--dpi", type=int, default=90)
    args = parser.parse_args(argv)
    out = args.out or HERE / "results" / f"sweep_{args.kind}"
    before = _load()
    if args.kind == "replot":
        with open(args.pickle, "rb") as f:
            result = pickle.load(f)
        paths = sn.experiments.save_sweep_figures(result, out, dpi=args.dpi)
        if len(result.grid.losses) > 1:
            paths += _docs_phase(result, out, args.dpi)
            print(loss_table(result))
        print(result.overview())
        print("wrote", ", ".join(p.name for p in paths), "to", out)
        return 0
    if args.kind == "default":
        result = sn.experiments.sweep(progress=True)
        _finish(result, out, "default sweep", before, args.dpi)
        return 0
    if args.kind == "losses":
        result = sn.experiments.sweep(losses="cross_entropy,mse,hinge",
                                      steps="300,1000,3000,10000", progress=True)
        _finish(result, out, "loss sweep", before, args.dpi)
        return 0
    from dask.distributed import Client, LocalCluster

    start = time.perf_counter()
    with LocalCluster(n_workers=args.workers, threads_per_worker=1,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        print(f"LocalCluster of {args.workers} workers up in "
              f"{time.perf_counter() - start:.1f} s", file=sys.stderr)
        result = sn.experiments.sweep(args.mu2, args.sigma1, steps=args.steps,
                                      seeds=args.seeds, scheduler=client,
                                      progress=True)
    _finish(result, out, "Dask sweep", before, args.dpi)
    return 0


if __name__ == "__main__":
    sys.exit(main())
