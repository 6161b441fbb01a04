"""The ensemble engine's step: its cost against the number of members.

Usage::

    python benchmarks/bench_ensemble_step.py
    python benchmarks/bench_ensemble_step.py --members 1 2 18 --steps 800

Trains ``sn.fast.Ensemble`` on the ``original`` recipe's setting (1-64-64-2,
float32, PyTorch's initialisation, Adam 1e-3, batch 64, epochs of a fixed
sample of 100,000 per member, through ``sn.fast.train``, one BLAS
thread) for ``--steps`` steps at each member count, ``--rounds`` times, the
counts taking turns so that they share any background load, and prints the
median process CPU time per step, per member-step, and the least-squares
line fixed + per-member cost.  A seed study of S networks on one core costs
about steps x (fixed + S x per member).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # tiny matrices: one BLAS thread per process

import numpy as np  # noqa: E402

import scratchnet as sn  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_seed_study import machine  # noqa: E402


def seconds_per_step(members: int, steps: int) -> float:
    """Process CPU seconds per step of ``members`` networks (after a warm-up)."""
    task = sn.tasks.separated()
    rngs = [np.random.default_rng(s) for s in range(members)]
    ens = sn.fast.Ensemble([1, 64, 64, 2], rngs, init="torch", dtype=np.float32)
    data = [task.sample(100_000, np.random.default_rng(100 + s))
            for s in range(members)]
    batches = sn.fast.stacked_epochs([(x.astype(np.float32), c) for x, c in data], 64,
                                     rngs)
    opt = sn.fast.Adam(ens.params, 1e-3)
    sn.fast.train(ens, batches, steps=50, optimizer=opt)  # warm-up
    start = time.process_time()
    sn.fast.train(ens, batches, steps=steps, optimizer=opt)
    return (time.process_time() - start) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--members", type=int, nargs="+",
                        default=[1, 2, 3, 6, 12, 18, 36])
    parser.add_argument("--steps", type=int, default=1600)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(machine())
    print(f"numpy {np.__version__}; {args.rounds} rounds of {args.steps:,} steps; "
          f"load average {load:.2f} before", flush=True)
    times: dict = {s: [] for s in args.members}
    for _ in range(args.rounds):
        for s in args.members:
            times[s].append(seconds_per_step(s, args.steps))
    median = {s: statistics.median(t) for s, t in times.items()}
    print("| members | µs per step | µs per member-step |")
    print("|---:|---:|---:|")
    for s in args.members:
        print(f"| {s} | {median[s] * 1e6:,.0f} | {median[s] * 1e6 / s:,.0f} |")
    if len(args.members) > 1:
        line = np.polyfit(args.members, [median[s] for s in args.members], 1)
        print(f"least squares: {line[1] * 1e6:.0f} µs + {line[0] * 1e6:.0f} µs per "
              "member")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average {load:.2f} after")


if __name__ == "__main__":
    main()
