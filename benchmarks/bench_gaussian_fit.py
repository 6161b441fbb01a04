"""``GaussianClasses.fit`` against the per-class products it must cost.

Usage::

    python benchmarks/bench_gaussian_fit.py
    python benchmarks/bench_gaussian_fit.py --n 20000 --dim 120 --classes 10 --repeat 5

Draws ``--n`` inputs of ``--dim`` features in ``--classes`` balanced classes
and times, best of ``--repeat`` rounds taken in turn:

* ``GaussianClasses.fit`` (the maximum-likelihood fit, checks and the
  model's construction included);
* the reference, the per-class products alone: for each class, its rows'
  residuals ``R_c`` and ``R_c.T @ R_c`` (a loop over the classes, as a user
  would write it);
* the one-hot weighted sum that the fit used before issue 29,
  ``np.einsum("jc,jd,je->cde", Y, R, R)``, which does M times the work.

and prints each time and its ratio to the reference, on one BLAS thread (set
``OPENBLAS_NUM_THREADS`` to change it: on a shared machine more threads mostly
add noise).  Target: the fit within 3x the reference (it also checks the
inputs, forms the means and the residuals, symmetrises, checks definiteness
with an eigendecomposition per class and builds the model's Cholesky factors).
"""

from __future__ import annotations

import argparse
import os
import platform
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

import scratchnet as sn  # noqa: E402

TARGET = 3.0


def best_of(func, repeat: int) -> float:
    """The least wall-clock time of ``repeat`` calls, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--dim", type=int, default=120)
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-einsum", action="store_true",
                        help="skip the old one-hot sum (seconds at the defaults)")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    c = rng.integers(0, args.classes, args.n)
    x = rng.standard_normal((args.n, args.dim)) + c[:, None]
    onehot = np.eye(args.classes)[c]
    means = (onehot.T @ x) / onehot.sum(axis=0)[:, None]
    r = x - means[c]

    def per_class_products():
        return [r[c == k].T @ r[c == k] for k in range(args.classes)]

    contenders = {
        "per-class products (reference)": per_class_products,
        "GaussianClasses.fit": lambda: sn.GaussianClasses.fit(x, c),
    }
    if not args.no_einsum:
        contenders["one-hot einsum (before issue 29)"] = lambda: np.einsum(
            "jc,jd,je->cde", onehot, r, r, optimize=True)
    times = {name: [] for name in contenders}
    for _ in range(args.repeat):                 # rounds taken in turn
        for name, func in contenders.items():
            times[name].append(best_of(func, 1))
    reference = min(times["per-class products (reference)"])
    print(f"n = {args.n}, D = {args.dim}, M = {args.classes}; best of {args.repeat}; "
          f"{platform.processor() or platform.machine()}, numpy {np.__version__}")
    print("| what | seconds | ratio to the reference |")
    print("|---|---|---|")
    for name, ts in times.items():
        print(f"| {name} | {min(ts):.4f} | {min(ts) / reference:.2f} |")
    ratio = min(times["GaussianClasses.fit"]) / reference
    verdict = "met" if ratio <= TARGET else "MISSED"
    print(f"target: GaussianClasses.fit <= {TARGET:g}x the reference: {verdict} "
          f"({ratio:.2f}x)")


if __name__ == "__main__":
    main()
