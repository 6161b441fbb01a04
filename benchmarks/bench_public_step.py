"""The public training step, as the README teaches it, against PyTorch and the engine.

Usage::

    python benchmarks/bench_public_step.py                 # 1-64-2, float32, Adam
    python benchmarks/bench_public_step.py --optimizer sgd --dtype float64  # README's
    python benchmarks/bench_public_step.py --rounds 9 --steps 2000

A student writes a step from the README as two calls::

    loss, grads = model.loss_and_grads(xb, cb)   # forward, loss, backward
    optimizer.step(grads)                        # update

This script times that step on ``sn.fast.MLP([1, 64, 2])`` (batch 64, Adam
lr 1e-3, float32 as the study trains, PyTorch's initialisation; or the
README's SGD lr 0.1, ``--optimizer sgd``, in float64), the same
step in PyTorch (``zero_grad``, forward, ``CrossEntropyLoss``, ``backward``,
``step`` and ``loss.item()``, one thread), and the engine's own loop,
``sn.fast.train``, on the same pre-generated batches.  Each is timed in
process CPU time (the machine may be shared: CPU time counts only this
process's work), ``--rounds`` times, the three taking turns so that they
share any background load; the best round of each is kept.  It prints the
microseconds per step, the public step's speed over PyTorch's (target: at
least 3x) and its time over the engine loop's (target: at most 1.1, the
step the README teaches as fast as the engine's own).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # tiny matrices: one BLAS thread

import numpy as np  # noqa: E402

import scratchnet as sn  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_seed_study import load, machine  # noqa: E402

try:
    import torch
except ImportError:  # the comparison is optional
    torch = None

SIZES = [1, 64, 2]
OPTIMIZERS = {"adam": sn.Adam, "sgd": sn.SGD}
LEARNING_RATES = {"adam": 1e-3, "sgd": 0.1}  # the study's Adam, the README's SGD
TARGET_TORCH = 3.0  # the public step at least 3x PyTorch's
TARGET_ENGINE = 1.1  # ... and within 10% of the engine's own loop


def batches(steps: int, batch: int, dtype: type) -> tuple[list, list]:
    """``steps`` batches of the separated task, made once for every contender."""
    task, rng = sn.tasks.separated(), np.random.default_rng(0)
    pairs = [task.sample(batch, rng) for _ in range(steps)]
    return [x.astype(dtype) for x, _ in pairs], [c for _, c in pairs]


def public_step(xs: list, cs: list, dtype: type, rule: str, lr: float):
    """The README's step: ``model.loss_and_grads`` then ``optimizer.step``."""
    def run() -> float:
        model = sn.fast.MLP(SIZES, rng=0, dtype=dtype, init="torch")
        optimizer = OPTIMIZERS[rule](model.params, lr)
        start = time.process_time()
        for x, c in zip(xs, cs):
            _, grads = model.loss_and_grads(x, c)  # forward, loss, backward
            optimizer.step(grads)  # update
        return time.process_time() - start
    return run


def engine_loop(xs: list, cs: list, dtype: type, rule: str, lr: float):
    """``sn.fast.train``: the engine's own loop on the same batches."""
    def run() -> float:
        model = sn.fast.MLP(SIZES, rng=0, dtype=dtype, init="torch")
        optimizer = OPTIMIZERS[rule](model.params, lr)
        start = time.process_time()
        sn.fast.train(model, zip(xs, cs), steps=len(xs), optimizer=optimizer)
        return time.process_time() - start
    return run


def torch_step(xs: list, cs: list, dtype: type, rule: str, lr: float):
    """The same step in PyTorch (one thread), ``loss.item()`` read every step."""
    xt = [torch.from_numpy(x) for x in xs]
    ct = [torch.from_numpy(c) for c in cs]

    def run() -> float:
        torch.manual_seed(0)
        net = torch.nn.Sequential(torch.nn.Linear(SIZES[0], SIZES[1]), torch.nn.ReLU(),
                                  torch.nn.Linear(SIZES[1], SIZES[2])).to(
                                      getattr(torch, np.dtype(dtype).name))
        optimizer = getattr(torch.optim, OPTIMIZERS[rule].__name__)(net.parameters(),
                                                                    lr=lr)
        loss_fn = torch.nn.CrossEntropyLoss()
        start = time.process_time()
        for x, c in zip(xt, ct):
            optimizer.zero_grad(set_to_none=True)
            loss = loss_fn(net(x), c)
            loss.backward()
            optimizer.step()
            loss.item()
        return time.process_time() - start
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=3000, help="steps per round")
    parser.add_argument("--rounds", type=int, default=7, help="timed rounds")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    parser.add_argument("--optimizer", choices=tuple(OPTIMIZERS), default="adam",
                        help="Adam lr 1e-3 (the study's) or SGD lr 0.1 (the README's)")
    args = parser.parse_args()
    dtype = np.dtype(args.dtype).type
    runs = {"public step": public_step, "engine loop (fast.train)": engine_loop}
    if torch is None:
        print("PyTorch is not installed (ImportError): scratchnet's figures only.")
    else:
        torch.set_num_threads(1)
        runs["PyTorch"] = torch_step
    print(machine())
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}"
          + (f", torch {torch.__version__}" if torch else "")
          + f"; load average {load()} before")
    rule, lr = args.optimizer, LEARNING_RATES[args.optimizer]
    print(f"MLP {SIZES}, {args.dtype}, {OPTIMIZERS[rule].__name__} lr {lr:g}, batch "
          f"{args.batch}: best of "
          f"{args.rounds} interleaved rounds of {args.steps:,} steps, process CPU "
          "time\n")
    xs, cs = batches(args.steps, args.batch, dtype)
    timers = {name: make(xs, cs, dtype, rule, lr) for name, make in runs.items()}
    for timer in timers.values():
        timer()  # warm-up: buffers, caches, lazy initialisation
    best = dict.fromkeys(timers, float("inf"))
    for _ in range(args.rounds):
        for name, timer in timers.items():
            best[name] = min(best[name], timer())
    micro = {name: seconds / args.steps * 1e6 for name, seconds in best.items()}
    print("| step | µs per step | steps/s |")
    print("|---|---:|---:|")
    for name, us in micro.items():
        print(f"| {name} | {us:.1f} | {1e6 / us:,.0f} |")
    public, engine = micro["public step"], micro["engine loop (fast.train)"]
    ratio = public / engine
    verdict = "met" if ratio <= TARGET_ENGINE else "missed"
    print(f"\nthe public step takes {ratio:.2f} times the engine loop's time "
          f"(target: at most {TARGET_ENGINE}: {verdict})")
    if torch is not None:
        speed = micro["PyTorch"] / public
        print(f"the public step runs at {speed:.2f}x PyTorch's step (target: at least "
              f"{TARGET_TORCH:g}x: {'met' if speed >= TARGET_TORCH else 'missed'}); "
              f"the engine loop at {micro['PyTorch'] / engine:.2f}x")
    print(f"load average {load()} after")


if __name__ == "__main__":
    main()
