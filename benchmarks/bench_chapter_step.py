"""CPU per training step of the chapter networks, against the fast path in the same run.

Usage::

    python benchmarks/bench_chapter_step.py [--steps 2000] [--repeats 5]

A step is ``sn.train_step``: forward, mean cross-entropy and its gradient,
backward, SGD update, on batches of 64 drawn from ``sn.tasks.separated()``
beforehand (the same batches for every network).  The chapter networks
(``sn.TwoLayerMLP(1, 64, 2)``, ``sn.MLP([1, 32, 2])``) check every argument
of every layer and loss at every step; the fast path (``sn.fast.MLP`` of the
same sizes) checks once per step.  So the ratio chapter / fast path is mostly the cost
of the chapters' validation and of their separate, readable passes.  The
chapter losses are also timed alone on a (64, 2) batch.

CPU time (``time.process_time``), not wall time: the figures hold on a
machine shared with other work.  The settings take turns within each repeat,
and the best time of each is kept.  Nothing here is asserted: the figures
are read, and compared run to run by their ratios.
"""

import argparse
import os
import time

ARGS = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ARGS.add_argument("--steps", type=int, default=2000, help="training steps per timing")
ARGS.add_argument("--repeats", type=int, default=5, help="timed runs per setting")
OPTIONS = ARGS.parse_args()
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # read by BLAS when it loads

import numpy as np  # noqa: E402

import scratchnet as sn  # noqa: E402

NETWORKS = {
    "chapter TwoLayerMLP(1, 64, 2)": lambda: sn.TwoLayerMLP(1, 64, 2, rng=0),
    "fast    fast.MLP([1, 64, 2])": lambda: sn.fast.MLP([1, 64, 2], rng=0),
    "chapter MLP([1, 32, 2])": lambda: sn.MLP([1, 32, 2], rng=0),
    "fast    fast.MLP([1, 32, 2])": lambda: sn.fast.MLP([1, 32, 2], rng=0),
}


def training(make, batches):
    """A run of ``train_step`` over the batches, from a fresh network."""
    def run():
        model = make()
        opt = sn.SGD(model.params, 0.1)
        for x, c in batches:
            sn.train_step(model, opt, x, c)
    return run


def calls(f, *args, number=2000):
    """``number`` calls of ``f(*args)``."""
    def run():
        for _ in range(number):
            f(*args)
    return run


def best_cpu(runs, repeats):
    """Best CPU seconds of each run, the runs interleaved so they share the load."""
    for run in runs.values():
        run()  # warm-up
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(repeats):
        for name, run in runs.items():
            start = time.process_time()
            run()
            best[name] = min(best[name], time.process_time() - start)
    return best


def main():
    rng = np.random.default_rng(1)
    task = sn.tasks.separated()
    batches = [task.sample(64, rng) for _ in range(OPTIONS.steps)]
    logits = rng.normal(size=(64, 2))
    targets = rng.integers(0, 2, 64)
    runs = {name: training(make, batches) for name, make in NETWORKS.items()}
    losses = {
        "sn.cross_entropy": sn.cross_entropy,
        "sn.cross_entropy_grad": sn.cross_entropy_grad,
        "sn.functional.cross_entropy": sn.functional.cross_entropy,
        "sn.functional.cross_entropy_grad": sn.functional.cross_entropy_grad,
    }
    runs.update({name: calls(f, logits, targets, number=OPTIONS.steps)
                 for name, f in losses.items()})
    best = best_cpu(runs, OPTIONS.repeats)
    per = {name: best[name] / OPTIONS.steps * 1e6 for name in runs}
    print(f"CPU per step (best of {OPTIONS.repeats} runs of {OPTIONS.steps} steps), "
          f"batch 64, OpenBLAS threads {os.environ['OPENBLAS_NUM_THREADS']}")
    names = list(NETWORKS)
    for chapter, fast in zip(names[::2], names[1::2]):
        print(f"  {chapter:32s} {per[chapter]:7.1f} us/step   "
              f"{per[chapter] / per[fast]:5.2f}x the fast path")
        print(f"  {fast:32s} {per[fast]:7.1f} us/step")
    print("The chapter losses alone on (64, 2) logits:")
    for name in losses:
        print(f"  {name:32s} {per[name]:7.1f} us/call")


if __name__ == "__main__":
    main()
