"""Time and memory of scratchnet's softmax/cross-entropy primitives against SciPy.

Run from the repository root::

    python benchmarks/bench_primitives.py            # (4096, 1000) float64 logits
    python benchmarks/bench_primitives.py --repeat 9 --n 1024 --m 100

The chapter's ``sn.log_softmax`` is timed (the formula written out: shift,
exponentiate, sum, subtract, each step a new array; the engine's cache-blocked
copy ran at 1.00 to 1.04x SciPy's time and was removed in issue 23).  Beside
it the chapter's
cross-entropy, its gradient and both together (the formula: the log-softmax
or softmax, then the targets' share, each step a new array), and the
engine's fused ``fast.kernels.cross_entropy_and_grad_inplace``, the loss and
its gradient from one softmax formed in place of a copy of the logits (as
the training step's buffer would be; the copy is timed).

Each function is timed timeit-style: the best of ``--repeat`` rounds, each of
enough calls to last about 0.2 s, with the rounds of all the functions
interleaved.  Its peak extra memory is measured with ``tracemalloc`` (NumPy
reports its array allocations to it), in multiples of the input's size; the
result array counts.  The SciPy references are
``scipy.special.log_softmax(x, axis=-1)`` (for both log-softmaxes) and the
cross-entropy and gradient built on it.  The script prints a Markdown table
and checks the targets, which concern the engine (the chapters are written
to be read; their ratios are reported without a target):

* the fused loss and gradient no slower than SciPy (ratio <= 1.0);
* at most two temporaries of the input's size in the engine (peak <= 2x,
  plus a few per-row vectors; on inputs smaller than a few MiB NumPy's fixed
  64 KiB iteration buffer also shows).

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
LABELS = {"log_softmax": "sn.log_softmax",
          "fused": "fast.kernels.cross_entropy_and_grad_inplace"}

#: The engine's functions; the targets concern them (the rest are chapters).
ENGINE = ("fused",)


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
        "fused": cross_entropy_and_grad,  # the same reference for the engine's
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
    buffer = np.empty_like(x)[None]  # one member: (S, B, M) with S = 1
    scratch = sn.fast.kernels.CrossEntropyScratch(buffer.shape, buffer.dtype)

    def fused():
        np.copyto(buffer[0], x)  # the training step's logits buffer, overwritten
        loss = sn.fast.kernels.cross_entropy_and_grad_inplace(buffer, t[None], scratch)
        return loss[0], buffer[0]

    ours = {
        "log_softmax": lambda: sn.log_softmax(x),
        "cross_entropy": lambda: sn.cross_entropy(x, t),
        "cross_entropy_grad": lambda: sn.cross_entropy_grad(x, t),
        "cross_entropy_and_grad": lambda: sn.cross_entropy_and_grad(x, t),
        "fused": fused,
    }
    refs = scipy_references(x, t) if special is not None else {}

    # The SciPy references must compute the same thing, or the timing is moot.
    # The engine's blocked log-softmax must equal the chapter's, to the bit.
    if refs:
        np.testing.assert_allclose(ours["log_softmax"](), refs["log_softmax"](),
                                   atol=1e-12)
        loss, grad = ours["cross_entropy_and_grad"]()
        ref_loss, ref_grad = refs["cross_entropy_and_grad"]()
        np.testing.assert_allclose(loss, ref_loss, rtol=1e-12)
        np.testing.assert_allclose(grad, ref_grad, atol=1e-15)
        fused_loss, fused_grad = fused()
        np.testing.assert_allclose(fused_loss, ref_loss, rtol=1e-12)
        np.testing.assert_allclose(fused_grad, ref_grad, atol=1e-15)

    print(f"scratchnet {sn.__version__}, NumPy {np.__version__}, "
          + (f"SciPy {sys.modules['scipy'].__version__}" if refs else "SciPy missing")
          + f", Python {platform.python_version()} on {platform.machine()}")
    print(f"float64 logits ({args.n}, {args.m}) = {x.nbytes / 2**20:.1f} MiB, "
          f"best of {args.repeat} rounds\n")
    if not refs:
        print("SciPy is not installed: printing scratchnet's figures alone.\n")

    # SciPy's log_softmax is timed once and shown beside both log-softmaxes.
    shared = {"fused": "cross_entropy_and_grad"}
    distinct = {k: f for k, f in refs.items() if k not in shared}
    every = {**{("sn", k): f for k, f in ours.items()},
             **{("scipy", k): f for k, f in distinct.items()}}
    timed = best_times(every, args.repeat)
    times = {name: timed["sn", name] for name in ours}
    ref_times = {name: timed["scipy", name] for name in distinct}
    ref_memory = {name: peak_memory(f) / x.nbytes for name, f in distinct.items()}
    if refs:
        for engine_name, chapter_name in shared.items():
            ref_times[engine_name] = ref_times[chapter_name]
            ref_memory[engine_name] = ref_memory[chapter_name]
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

    # The targets concern the engine; per-row vectors (maxima, sums: N numbers)
    # come on top of the input-sized arrays, hence the 0.05 of slack.
    checks = [("largest peak memory of the engine (x input)",
               max(memory[name] for name in ENGINE), 2.05)]
    if refs:
        checks[:0] = [(f"{LABELS[name]} / SciPy time", times[name] / ref_times[name],
                       1.0) for name in ENGINE]
    print()
    missed = 0
    for label, value, limit in checks:
        ok = value <= limit
        missed += not ok
        print(f"- {label}: {value:.2f} (target <= {limit}) {'ok' if ok else 'MISSED'}")
    for name in ours:
        if name in ENGINE:
            continue
        line = f"- {LABELS.get(name, name)} (a chapter, no target): "
        line += f"{1e3 * times[name]:.2f} ms"
        if refs:
            line += f", {times[name] / ref_times[name]:.2f}x SciPy"
        print(line + f", peak {memory[name]:.2f}x input")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
