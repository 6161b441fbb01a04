"""Time and memory of scratchnet's softmax/cross-entropy primitives against SciPy.

Run from the repository root::

    python benchmarks/bench_primitives.py            # (4096, 1000) float64 logits
    python benchmarks/bench_primitives.py --repeat 9 --n 1024 --m 100

The chapter's ``sn.log_softmax`` is timed (the formula written out: shift,
exponentiate, sum, subtract; the engine's cache-blocked copy ran at 1.00 to
1.04x SciPy's time and was removed in issue 23), and beside it the
cross-entropy, its gradient and both together.

Each function is timed timeit-style: the best of ``--repeat`` rounds, each of
enough calls to last about 0.2 s, with the rounds of all the functions
interleaved.  Its peak extra memory is measured with ``tracemalloc`` (NumPy
reports its array allocations to it), in multiples of the input's size; the
result array counts.  The SciPy references are
``scipy.special.log_softmax(x, axis=-1)`` (for both log-softmaxes) and the
cross-entropy and gradient built on it.  The script prints a Markdown table
and checks the targets, which concern the losses (the log-softmax is
written to be read, and its ratio is reported without a target):

* ``cross_entropy`` no slower than SciPy (ratio <= 1.0);
* ``cross_entropy_grad`` at most 1.5 times the time of ``sn.log_softmax``;
* at most two temporaries of the input's size (peak <= 2x, plus a few
  per-row vectors; on inputs smaller than a few MiB NumPy's fixed 64 KiB
  iteration buffer also shows).

BLAS is not involved (the kernels are elementwise), so settings such as
``OPENBLAS_CORETYPE`` do not matter here.
"""

from __future__ import annotations

import argparse
import gc
import platform
import sys
import timeit
import tracemalloc
from typing import Callable

import numpy as np

import scratchnet as sn

try:
    from scipy import special
except ImportError:  # pragma: no cover - depends on the machine
    special = None


#: How each function is named in the table.
LABELS = {"log_softmax": "sn.log_softmax"}


def best_times(funcs: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """Seconds per call of each function: the best of ``repeat`` rounds (timeit).

    The rounds of the different functions are interleaved, so that a burst of
    load on a shared machine slows all of them alike instead of one.
    """
    timers = {name: timeit.Timer(func) for name, func in funcs.items()}
    # Calls per round, so that a round lasts at least 0.2 s.
    numbers = {name: timer.autorange()[0] for name, timer in timers.items()}
    best = dict.fromkeys(funcs, float("inf"))
    for _ in range(repeat):
        for name, timer in timers.items():
            seconds = timer.timeit(numbers[name]) / numbers[name]
            best[name] = min(best[name], seconds)
    return best


def peak_memory(func: Callable[[], object]) -> int:
    """Peak bytes allocated while ``func`` runs, including its result."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        start, _ = tracemalloc.get_traced_memory()
        result = func()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del result
    return peak - start


def scipy_references(x: np.ndarray, t: np.ndarray) -> dict[str, Callable[[], object]]:
    """The same computations built on scipy.special (log_)softmax."""
    n = x.shape[0]
    rows = np.arange(n)

    def log_softmax():
        return special.log_softmax(x, axis=-1)

    def cross_entropy():
        return -special.log_softmax(x, axis=-1)[rows, t].mean()

    def cross_entropy_grad():
        grad = special.softmax(x, axis=-1)
        grad[rows, t] -= 1.0
        grad /= n
        return grad

    def cross_entropy_and_grad():
        log_probs = special.log_softmax(x, axis=-1)
        loss = -log_probs[rows, t].mean()
        grad = np.exp(log_probs, out=log_probs)
        grad[rows, t] -= 1.0
        grad /= n
        return loss, grad

    return {
        "log_softmax": log_softmax,
        "cross_entropy": cross_entropy,
        "cross_entropy_grad": cross_entropy_grad,
        "cross_entropy_and_grad": cross_entropy_and_grad,
    }


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the table; return 1 if a target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="rounds (best is kept)")
    parser.add_argument("--n", type=int, default=4096, help="samples (rows)")
    parser.add_argument("--m", type=int, default=1000, help="classes (columns)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    rng = np.random.default_rng(args.seed)
    x = rng.normal(scale=3.0, size=(args.n, args.m))
    t = rng.integers(0, args.m, size=args.n)
    ours = {
        "log_softmax": lambda: sn.log_softmax(x),
        "cross_entropy": lambda: sn.cross_entropy(x, t),
        "cross_entropy_grad": lambda: sn.cross_entropy_grad(x, t),
        "cross_entropy_and_grad": lambda: sn.cross_entropy_and_grad(x, t),
    }
    refs = scipy_references(x, t) if special is not None else {}

    # The SciPy references must compute the same thing, or the timing is moot.
    if refs:
        np.testing.assert_allclose(ours["log_softmax"](), refs["log_softmax"](),
                                   atol=1e-12)
        loss, grad = ours["cross_entropy_and_grad"]()
        ref_loss, ref_grad = refs["cross_entropy_and_grad"]()
        np.testing.assert_allclose(loss, ref_loss, rtol=1e-12)
        np.testing.assert_allclose(grad, ref_grad, atol=1e-15)

    print(f"scratchnet {sn.__version__}, NumPy {np.__version__}, "
          + (f"SciPy {sys.modules['scipy'].__version__}" if refs else "SciPy missing")
          + f", Python {platform.python_version()} on {platform.machine()}")
    print(f"float64 logits ({args.n}, {args.m}) = {x.nbytes / 2**20:.1f} MiB, "
          f"best of {args.repeat} rounds\n")
    if not refs:
        print("SciPy is not installed: printing scratchnet's figures alone.\n")

    distinct = refs
    every = {**{("sn", k): f for k, f in ours.items()},
             **{("scipy", k): f for k, f in distinct.items()}}
    timed = best_times(every, args.repeat)
    times = {name: timed["sn", name] for name in ours}
    ref_times = {name: timed["scipy", name] for name in distinct}
    ref_memory = {name: peak_memory(f) / x.nbytes for name, f in distinct.items()}
    memory = {name: peak_memory(f) / x.nbytes for name, f in ours.items()}

    header = "| function | scratchnet (ms) | peak memory (x input) |"
    rule = "|---|---:|---:|"
    if refs:
        header += " SciPy (ms) | SciPy peak (x input) | ratio to SciPy |"
        rule += "---:|---:|---:|"
    print(header)
    print(rule)
    for name in ours:
        label = LABELS.get(name, name)
        line = f"| `{label}` | {1e3 * times[name]:.2f} | {memory[name]:.2f} |"
        if refs:
            line += (f" {1e3 * ref_times[name]:.2f} | {ref_memory[name]:.2f} |"
                     f" {times[name] / ref_times[name]:.2f} |")
        print(line)

    grad_ratio = times["cross_entropy_grad"] / times["log_softmax"]
    # The targets concern the losses; the chapter's log-softmax (three arrays
    # of the input's size, written to be read) is only reported.
    engine = [name for name in ours if name != "log_softmax"]
    # Per-row vectors (maxima, sums: N numbers) come on top of the input-sized
    # arrays, hence the 0.05 of slack in the memory target.
    checks = [
        ("cross_entropy_grad / sn.log_softmax time", grad_ratio, 1.5),
        ("largest peak memory of the losses (x input)",
         max(memory[name] for name in engine), 2.05),
    ]
    if refs:
        checks[:0] = [
            (f"{LABELS.get(name, name)} / SciPy time",
             times[name] / ref_times[name], 1.0)
            for name in ("cross_entropy",)
        ]
    print()
    missed = 0
    for label, value, limit in checks:
        ok = value <= limit
        missed += not ok
        print(f"- {label}: {value:.2f} (target <= {limit}) {'ok' if ok else 'MISSED'}")
    chapter = times["log_softmax"]
    line = f"- sn.log_softmax (the chapter, no target): {1e3 * chapter:.2f} ms"
    if refs:
        line += f", {chapter / ref_times['log_softmax']:.2f}x SciPy"
    line += f", peak {memory['log_softmax']:.2f}x input"
    print(line)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
