"""Training speed: the engine, the reference chapters and PyTorch (CPU), in one run.

Usage::

    python benchmarks/bench_training.py [--threads 1] [--quick]
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/bench_training.py

Both libraries get the same number of threads (NumPy's OpenBLAS through
``OPENBLAS_NUM_THREADS``, set here before NumPy is imported; PyTorch through
``torch.set_num_threads``), the same architecture, optimiser, batch size and
number of steps, and the same pre-generated batches (made outside the timed
loops).  A step is: forward, mean cross-entropy, backward, optimiser step,
and the loss read back as a Python float -- ``sn.train_step`` for scratchnet,
on the engine ``sn.fast.MLP`` and on the reference chapters
(``sn.TwoLayerMLP`` / ``sn.MLP``, the code a student reads), so the table
shows what the engineering buys.  After a warm-up each setting is
timed ``--repeats`` times, the libraries taking turns so that they share any
background load, and the best time of each is kept.

Like is compared with like: every setting is timed in float64
(scratchnet's default) for both libraries, and in float32 (PyTorch's
default) for both, scratchnet's model built with ``dtype=np.float32`` and
given float32 batches.  The ratio is scratchnet's steps/s over PyTorch's in
the same dtype; the targets (for the engine) are at least 3x on the small
networks (a) and at least 1.0x on the MNIST-sized network (b).  Finally the script
times 50,000 steps of the experiments' network through ``sn.train`` with a
fresh batch drawn from the task at every step (what
``scratchnet.experiments`` does).
"""

import argparse
import os
import sys
import time

ARGS = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ARGS.add_argument("--threads", type=int, default=1, help="threads for both libraries")
ARGS.add_argument("--repeats", type=int, default=5, help="timed runs per setting")
ARGS.add_argument("--quick", action="store_true", help="skip the 50,000-step run")
OPTIONS = ARGS.parse_args()
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = str(OPTIONS.threads)  # read by BLAS when it loads

import numpy as np  # noqa: E402

import scratchnet as sn  # noqa: E402

try:
    import torch
except ImportError:  # the comparison is optional
    torch = None

# (label, sizes, optimizer, lr, batch, steps, target ratio)
SETTINGS = [
    ("(a) MLP [1, 64, 64, 2], Adam lr 1e-3, batch 64",
     [1, 64, 64, 2], "adam", 1e-3, 64, 3000, 3.0),
    ("(a) TwoLayerMLP 1-64-2, SGD lr 0.1, batch 64",
     [1, 64, 2], "sgd", 0.1, 64, 3000, 3.0),
    ("(b) TwoLayerMLP 784-256-10, SGD lr 0.01, batch 128",
     [784, 256, 10], "sgd", 0.01, 128, 200, 1.0),
]
DTYPES = ("float64", "float32")


def blas_threads():
    """OpenBLAS's thread count as NumPy sees it (best effort, via ctypes)."""
    import ctypes
    import glob

    here = os.path.dirname(np.__file__)
    patterns = [os.path.join(here, "..", "numpy.libs", "*openblas*"),
                os.path.join(here, "..", "scipy_openblas64", "lib", "*openblas*.so*")]
    for path in (p for pattern in patterns for p in glob.glob(pattern)):
        lib = ctypes.CDLL(path)
        for name in ("scipy_openblas_get_num_threads64_", "openblas_get_num_threads64_",
                     "openblas_get_num_threads"):
            if hasattr(lib, name):
                return int(getattr(lib, name)())
    return None


def make_batches(sizes, batch, steps, rng):
    """The same data for both libraries: task samples in 1-D, noise otherwise."""
    if sizes[0] == 1:
        task = sn.tasks.separated()
        pairs = [task.sample(batch, rng) for _ in range(steps)]
        return [p[0] for p in pairs], [p[1] for p in pairs]
    xs = [rng.standard_normal((batch, sizes[0])) for _ in range(steps)]
    cs = [rng.integers(0, sizes[-1], batch) for _ in range(steps)]
    return xs, cs


def best_times(runs, repeats):
    """Best wall time of each run, the runs interleaved so they share the load."""
    for run in runs:
        run()  # warm-up (allocations, caches, lazy initialisation)
    best = [float("inf")] * len(runs)
    for _ in range(repeats):
        for i, run in enumerate(runs):
            start = time.perf_counter()
            run()
            best[i] = min(best[i], time.perf_counter() - start)
    return best


def reference_model(sizes, dtype):
    """The chapters' network: TwoLayerMLP for three sizes, else MLP."""
    if len(sizes) == 3:
        return sn.TwoLayerMLP(*sizes, rng=0, dtype=dtype)
    return sn.MLP(sizes, rng=0, dtype=dtype)


def scratchnet_run(make, sizes, optimizer, lr, xs, cs, dtype):
    xs = [x.astype(dtype) for x in xs]  # the batches in the model's dtype

    def run():
        model = make(sizes, dtype)
        opt = (sn.Adam(model.params, lr) if optimizer == "adam"
               else sn.SGD(model.params, lr))
        for x, c in zip(xs, cs):
            sn.train_step(model, opt, x, c)  # what sn.train calls
    return run


def torch_run(sizes, optimizer, lr, xs, cs, dtype):
    xt = [torch.from_numpy(x).to(dtype) for x in xs]
    ct = [torch.from_numpy(c) for c in cs]

    def run():
        torch.manual_seed(0)
        layers = []
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
            layers += [torch.nn.Linear(fan_in, fan_out, dtype=dtype), torch.nn.ReLU()]
        net = torch.nn.Sequential(*layers[:-1])
        opt = (torch.optim.Adam(net.parameters(), lr=lr) if optimizer == "adam"
               else torch.optim.SGD(net.parameters(), lr=lr))
        loss_fn = torch.nn.CrossEntropyLoss()
        for x, c in zip(xt, ct):
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(net(x), c)
            loss.backward()
            opt.step()
            loss.item()
    return run


def main():
    print(f"numpy {np.__version__}, OpenBLAS threads: {blas_threads()} "
          f"(OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}); "
          f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}, "
          f"OPENBLAS_L2_SIZE={os.environ.get('OPENBLAS_L2_SIZE', '(unset)')}")
    if torch is None:
        print("PyTorch is not installed (ImportError): scratchnet's figures only.")
    else:
        torch.set_num_threads(OPTIONS.threads)
        print(f"torch {torch.__version__}, threads: {torch.get_num_threads()}")
    print(f"python {sys.version.split()[0]}; best of {OPTIONS.repeats} runs\n")

    header = "| setting | dtype | steps | engine steps/s | reference steps/s |"
    rule = "|---|---|---:|---:|---:|"
    if torch is not None:
        header += " torch steps/s | engine / torch | reference / torch | target |"
        rule += "---:|---:|---:|---|"
    print(header)
    print(rule)
    rng = np.random.default_rng(0)
    for label, sizes, optimizer, lr, batch, steps, target in SETTINGS:
        xs, cs = make_batches(sizes, batch, steps, rng)
        runs = []  # per dtype: engine, reference, then torch; all interleaved
        for dtype in DTYPES:
            runs.append(scratchnet_run(lambda s, d: sn.fast.MLP(s, rng=0, dtype=d),
                                       sizes, optimizer, lr, xs, cs, dtype))
            runs.append(scratchnet_run(reference_model, sizes, optimizer, lr, xs, cs,
                                       dtype))
            if torch is not None:
                runs.append(torch_run(sizes, optimizer, lr, xs, cs,
                                      getattr(torch, dtype)))
        rates = [steps / t for t in best_times(runs, OPTIONS.repeats)]
        per_dtype = len(rates) // len(DTYPES)
        for i, dtype in enumerate(DTYPES):
            ours, reference, *theirs = rates[i * per_dtype:(i + 1) * per_dtype]
            row = f"| {label} | {dtype} | {steps} | {ours:,.0f} | {reference:,.0f} |"
            for rate in theirs:
                ratio = ours / rate
                verdict = "met" if ratio >= target else "missed"
                row += (f" {rate:,.0f} | {ratio:.2f}x | {reference / rate:.2f}x |"
                        f" >= {target:g}x: {verdict} |")
            print(row, flush=True)

    if not OPTIONS.quick:
        task = sn.tasks.separated()
        model = sn.fast.MLP([1, 64, 64, 2], rng=0)
        history = sn.train(model, task, steps=50_000, batch_size=64, lr=1e-3,
                           optimizer="adam", rng=0)
        print(f"\n50,000 steps of fast.MLP [1, 64, 64, 2], Adam lr 1e-3, batch 64, "
              f"fresh task samples every step, through sn.train: "
              f"{history.elapsed:.2f} s "
              f"({history.steps / history.elapsed:,.0f} steps/s)")


if __name__ == "__main__":
    main()
