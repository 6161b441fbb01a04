"""The estimators at scikit-learn's scale: time and memory against scikit-learn.

Usage::

    python benchmarks/bench_estimators.py              # both parts
    python benchmarks/bench_estimators.py --part gaussian --repeat 5
    python benchmarks/bench_estimators.py --part network

``--part gaussian``: ``GaussianClassifier().predict_proba`` against
``QuadraticDiscriminantAnalysis().predict_proba`` (both fitted to the same
three Gaussian classes) at n = 300,000, d = 50 and at n = 20,000, d = 500:
the best of ``--repeat`` rounds taken in turn, and the peak memory that
``tracemalloc`` sees during one call (NumPy reports its arrays to it), as a
multiple of ``X.nbytes``.  Targets: time within 1.5x QDA's, memory within 2x
X's.

``--part network``: ``NetworkClassifier(random_state=s)`` against
``MLPClassifier(random_state=s)``, both with their defaults, on iris, wine and
breast_cancer (standardised on a stratified 75 / 25 split, seed 0), seeds
0..``--seeds``-1: the fit time summed over the seeds (taken in turn) and the
mean test accuracy.  Target: time within 2x at equal accuracy.

``--part large``: the same two at n = 40,000 training rows
(``make_classification(50_000, 20, n_informative=10, n_classes=3,
random_state=0)``, standardised, 10,000 test rows), where a fixed budget of
2,000 steps was 3 epochs (accuracy 0.898, against 0.939 after 20,000 steps):
``max_epochs``/``tol`` stop it as ``MLPClassifier``'s ``max_iter``/``tol`` do.
One seed; the epochs each ran are printed.  Minutes, not seconds: on a shared
2-core machine (load average 6 to 8) NetworkClassifier ran all 200 epochs
(125,000 steps, tol never met) in 411 s to accuracy 0.970, and MLPClassifier
had not finished 190 s later.

One BLAS thread (set ``OPENBLAS_NUM_THREADS`` to change it): ratios, not
seconds, are what carry over between machines.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
import tracemalloc
import warnings

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
from sklearn.datasets import load_breast_cancer, load_iris, load_wine  # noqa: E402
from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.neural_network import MLPClassifier  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from scratchnet.estimators import GaussianClassifier, NetworkClassifier  # noqa: E402

SHAPES = ((300_000, 50), (20_000, 500))


def gaussian_data(n: int, d: int, seed: int = 0) -> tuple:
    """Three classes with random means and correlated covariances."""
    rng = np.random.default_rng(seed)
    c = rng.integers(0, 3, n)
    mixing = np.eye(d) + 0.3 * rng.normal(size=(3, d, d)) / np.sqrt(d)
    means = rng.normal(0, 0.5, (3, d))
    x = np.empty((n, d))
    for k in range(3):
        rows = c == k
        x[rows] = rng.normal(size=(int(rows.sum()), d)) @ mixing[k].T + means[k]
    return x, c


def peak_bytes(call: object) -> int:
    """The peak traced memory of one call, above what was traced before it."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    call()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak - base


def gaussian_part(repeat: int) -> None:
    print("GaussianClassifier.predict_proba against QDA's (best of "
          f"{repeat}, in turn)")
    print(f"{'n':>8} {'d':>4} | {'ours s':>7} {'QDA s':>7} {'ratio':>6} | "
          f"{'ours/X mem':>10} {'QDA/X mem':>9} | max |diff|")
    for n, d in SHAPES:
        x, c = gaussian_data(n, d)
        ours = GaussianClassifier().fit(x, c)
        qda = QuadraticDiscriminantAnalysis().fit(x, c)
        times: dict = {"ours": [], "qda": []}
        for _ in range(repeat):
            for name, model in (("ours", ours), ("qda", qda)):
                start = time.perf_counter()
                model.predict_proba(x)
                times[name].append(time.perf_counter() - start)
        memory = {name: peak_bytes(lambda m=model, x=x: m.predict_proba(x)) / x.nbytes
                  for name, model in (("ours", ours), ("qda", qda))}
        diff = np.abs(ours.predict_proba(x[:2000]) - qda.predict_proba(x[:2000])).max()
        t_ours, t_qda = min(times["ours"]), min(times["qda"])
        print(f"{n:>8,} {d:>4} | {t_ours:>7.2f} {t_qda:>7.2f} {t_ours / t_qda:>6.2f} | "
              f"{memory['ours']:>10.2f} {memory['qda']:>9.2f} | {diff:.1e}")
    print("targets: time ratio <= 1.5, ours/X memory <= 2")


def network_part(seeds: int) -> None:
    print(f"\nNetworkClassifier against MLPClassifier, defaults, seeds 0..{seeds - 1}")
    print(f"{'data':>14} | {'ours s':>7} {'MLP s':>7} {'ratio':>6} | "
          f"{'ours acc':>8} {'MLP acc':>8}")
    for load in (load_iris, load_wine, load_breast_cancer):
        x, y = load(return_X_y=True)
        x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=0.25, stratify=y,
                                                  random_state=0)
        scaler = StandardScaler().fit(x_tr)
        x_tr, x_te = scaler.transform(x_tr), scaler.transform(x_te)
        spent = {"ours": 0.0, "mlp": 0.0}
        accuracy: dict = {"ours": [], "mlp": []}
        for s in range(seeds):
            for name, model in (("ours", NetworkClassifier(random_state=s)),
                                ("mlp", MLPClassifier(random_state=s))):
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    model.fit(x_tr, y_tr)
                spent[name] += time.perf_counter() - start
                accuracy[name].append(model.score(x_te, y_te))
        name = load.__name__.removeprefix("load_")
        print(f"{name:>14} | {spent['ours']:>7.2f} {spent['mlp']:>7.2f} "
              f"{spent['ours'] / spent['mlp']:>6.2f} | "
              f"{np.mean(accuracy['ours']):>8.3f} {np.mean(accuracy['mlp']):>8.3f}")
    print("target: time ratio <= 2 at equal accuracy")


def large_part() -> None:
    from sklearn.datasets import make_classification

    x, y = make_classification(50_000, 20, n_informative=10, n_classes=3,
                               random_state=0)
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=10_000, stratify=y,
                                              random_state=0)
    scaler = StandardScaler().fit(x_tr)
    x_tr, x_te = scaler.transform(x_tr), scaler.transform(x_te)
    print(f"\nn = {len(y_tr):,} training rows, defaults, seed 0")
    print(f"{'model':>18} | {'s':>7} {'epochs':>7} | {'accuracy':>8}")
    for name, model in (("NetworkClassifier", NetworkClassifier(random_state=0)),
                        ("MLPClassifier", MLPClassifier(random_state=0))):
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(x_tr, y_tr)
        spent = time.perf_counter() - start
        epochs = getattr(model, "n_epochs_", getattr(model, "n_iter_", 0))
        accuracy = model.score(x_te, y_te)
        print(f"{name:>18} | {spent:>7.2f} {epochs:>7.1f} | {accuracy:>8.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=("gaussian", "network", "large", "both"),
                        default="both")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    print(f"{platform.processor() or platform.machine()}, numpy {np.__version__}, "
          f"OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}")
    if args.part in ("gaussian", "both"):
        gaussian_part(args.repeat)
    if args.part in ("network", "both"):
        network_part(args.seeds)
    if args.part == "large":
        large_part()


if __name__ == "__main__":
    main()
