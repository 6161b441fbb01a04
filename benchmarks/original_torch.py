"""A PyTorch transcription of the original study's training loop, for comparison.

Written here from the study's description (Yudi Xie, "How do we interpret the
outputs of a neural network trained on classification?", 2024,
https://yudixie.github.io/blog/2024/interpret-classification/), not copied
from its code:

* the network ``Linear(1, 64) - ReLU - Linear(64, 64) - ReLU - Linear(64, 2)``
  with PyTorch's default initialisation, in float32;
* one sample of 100,000 points drawn once (the class uniform over the two,
  then x from its Gaussian), cast to float32;
* batches of 64, reshuffled every epoch, the last partial batch kept (what
  ``DataLoader(batch_size=64, shuffle=True)`` does: a new ``randperm`` of the
  sample every epoch, taken in order; by default the indices are sliced here
  instead of collated one sample at a time, which changes the speed, not the
  batches: ``batching="dataloader"`` (``--batching dataloader``) feeds the
  same orders through a ``DataLoader``, about 1.4 times slower per step, and
  ``batching="study"`` does all the work the study's code does at a step: a
  map-style dataset of NumPy arrays read item by item (one float64 input and
  one int64 label per index) and collated by the ``DataLoader``, the batch
  cast with ``.float().unsqueeze(1)``, a running loss read with
  ``loss.item()`` after every step, and at each snapshot the test accuracy
  on a second sample of 10,000 points in batches of 64: the cost of the
  study's loop as it runs, the original code's "about 60 s per run" that
  the project's time targets are set against);
* the mean cross-entropy and Adam with its defaults (lr 1e-3, betas
  (0.9, 0.999), eps 1e-8), 50,000 batches;
* at each snapshot, the softmax on 100 evenly spaced points of [-4, 7],
  compared with the Bayes posterior: the study's max |q - P|.

The study sets no seed; here ``seed`` seeds PyTorch (initialisation and
shuffling) and the NumPy generator that draws the sample, so a study over
seeds is reproducible.  Needs only NumPy and PyTorch.

``draws="scratchnet"`` (``--draws scratchnet``) keeps the loop and takes its
random numbers from scratchnet instead: the initial weights, the sample and
every epoch's order that scratchnet's ``original`` recipe draws for the same
seed (``run("task", "original", seed=s)``).  Seed ``s`` of the two codes then
starts from the same network and sees the same batches, so what differs
between them is the arithmetic alone (PyTorch's float32 kernels against
NumPy's): a paired comparison ("common random numbers"), where the default
``draws="torch"`` compares two independent samples of seeds.
"""

from __future__ import annotations

import math

import numpy as np

#: How batches are made: see the module's docstring.
BATCHINGS = ("slices", "dataloader", "study")
SNAPSHOTS = (10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000)
EVAL_X = np.linspace(-4.0, 7.0, 100)
#: (mu1, sigma1, mu2, sigma2) of the study's three settings.
TASKS = {"separated": (0.0, 1.0, 3.0, 1.0), "unequal-variance": (0.0, 2.0, 1.0, 1.0),
         "sparse-tail": (0.0, 2.0, 3.0, 1.0)}


def posterior(task: str, x: np.ndarray) -> np.ndarray:
    """P(c | x) of two equally likely Gaussian classes, (N, 2), by Bayes' rule."""
    mu1, s1, mu2, s2 = TASKS[task]
    log_p = np.stack([-0.5 * ((x - mu1) / s1) ** 2 - math.log(s1),
                      -0.5 * ((x - mu2) / s2) ** 2 - math.log(s2)], axis=1)
    log_p -= log_p.max(axis=1, keepdims=True)
    p = np.exp(log_p)
    return p / p.sum(axis=1, keepdims=True)


def scratchnet_draws(task: str, seed: int, n: int = 100_000) -> tuple:
    """What scratchnet's ``original`` recipe draws for ``seed``: its initial
    parameters (``W1``, ``b1``, ... as NumPy float32 arrays), its sample
    ``(x, c)`` of ``n`` points and the generator of its epochs' orders
    (``permutation(n)`` once per epoch), from the three streams that
    ``scratchnet.experiments.run`` spawns from the seed."""
    import scratchnet as sn

    recipe = sn.experiments.ORIGINAL
    init, data, batches = (np.random.default_rng(s)
                           for s in np.random.SeedSequence(seed).spawn(3))
    params = sn.MLP(recipe.sizes, rng=init, init=recipe.init, dtype=recipe.dtype).params
    x, c = sn.tasks.get_task(task).sample(n, data)
    return dict(params), x[:, 0], c, batches


def run(task: str, seed: int, steps: int = 50_000, n: int = 100_000,
        snapshots: tuple = SNAPSHOTS, draws: str = "torch",
        batching: str = "slices") -> dict:
    """Train one network; return ``{step: max |q - P| on EVAL_X}``.

    ``draws``: "torch" (PyTorch's generator seeded with ``seed``, NumPy's for
    the sample) or "scratchnet" (:func:`scratchnet_draws`).  ``batching``:
    "slices" (each batch indexed out of the sample at once), "dataloader"
    (a ``DataLoader`` collating sample by sample, in each epoch's order from
    the same source: with ``draws="scratchnet"`` the same batches, more
    slowly; with PyTorch's draws the loader also takes a seed from PyTorch's
    generator each epoch, so the orders differ, not their distribution) or
    "study" (the study's whole step, see the module's docstring: the same
    batches as "dataloader", with its extra work)."""
    import torch

    if draws not in ("torch", "scratchnet"):
        raise ValueError(f"draws must be 'torch' or 'scratchnet'; got {draws!r}")
    if batching not in BATCHINGS:
        raise ValueError(f"batching must be one of {BATCHINGS}; got {batching!r}")
    torch.manual_seed(seed)
    net = _network()
    if draws == "torch":
        rng = np.random.default_rng(seed)
        mu1, s1, mu2, s2 = TASKS[task]
        c = rng.integers(0, 2, n)
        x = np.where(c == 0, rng.normal(mu1, s1, n), rng.normal(mu2, s2, n))

        def new_order() -> torch.Tensor:
            return torch.randperm(n)
    else:
        params, x, c, batch_rng = scratchnet_draws(task, seed, n)
        with torch.no_grad():  # a Linear layer keeps W transposed: (out, in)
            for i, layer in enumerate(net[::2], start=1):
                layer.weight.copy_(torch.from_numpy(params[f"W{i}"].T.copy()))
                layer.bias.copy_(torch.from_numpy(params[f"b{i}"]))

        def new_order() -> torch.Tensor:
            return torch.from_numpy(batch_rng.permutation(n))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    loss_fn = torch.nn.CrossEntropyLoss()
    eval_x = torch.tensor(EVAL_X, dtype=torch.float32).reshape(-1, 1)
    truth = posterior(task, EVAL_X)
    study = batching == "study"
    test = _test_loader(task, seed) if study else None
    errors, running_loss = {}, 10.0
    batches = _batches(x, c, new_order, batching)
    for step in range(1, steps + 1):
        xb, cb = next(batches)
        opt.zero_grad()
        loss = loss_fn(net(xb), cb)
        loss.backward()
        opt.step()
        if study:  # the study's running loss, read at every step
            running_loss = loss.item() * 0.1 + running_loss * 0.9
        if step in snapshots:
            errors[step] = _snapshot(net, eval_x, truth, test)
    return errors


def _network():
    """The study's network, PyTorch's default initialisation, float32."""
    import torch

    return torch.nn.Sequential(torch.nn.Linear(1, 64), torch.nn.ReLU(),
                               torch.nn.Linear(64, 64), torch.nn.ReLU(),
                               torch.nn.Linear(64, 2))


def _snapshot(net, eval_x, truth: np.ndarray, test=None) -> float:
    """max |q - P| on EVAL_X; with ``test`` (the study's loop) its test
    accuracy pass first, over 10,000 points in batches of 64."""
    import torch

    with torch.inference_mode():
        if test is not None:
            correct = 0
            for xb, cb in test:
                correct += (net(xb.float().unsqueeze(1)).argmax(1) == cb).sum().item()
        q = torch.softmax(net(eval_x), dim=1).double().numpy()
    return float(np.abs(q - truth).max())


def _test_loader(task: str, seed: int):
    """The study's second sample, 10,000 points, in batches of 64 (in order)."""
    import torch

    rng = np.random.default_rng([seed, 1])
    mu1, s1, mu2, s2 = TASKS[task]
    c = rng.integers(0, 2, 10_000)
    x = np.where(c == 0, rng.normal(mu1, s1, c.size), rng.normal(mu2, s2, c.size))
    return torch.utils.data.DataLoader(_ItemByItem(x, c), batch_size=64)


def snapshot_seconds(batching: str = "slices", repeats: int = 5) -> float:
    """Seconds of one snapshot's evaluation (the median of ``repeats``), to
    add to a run timed without snapshots."""
    import statistics
    import time

    import torch

    net = _network()
    eval_x = torch.tensor(EVAL_X, dtype=torch.float32).reshape(-1, 1)
    truth = posterior("sparse-tail", EVAL_X)
    test = _test_loader("sparse-tail", 0) if batching == "study" else None
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        _snapshot(net, eval_x, truth, test)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


class _ItemByItem:
    """A map-style dataset over NumPy arrays, as the study's: item ``i`` is
    ``(x[i], c[i])``, a float64 and an int64, collated by the DataLoader."""

    def __init__(self, x: np.ndarray, c: np.ndarray) -> None:
        self.x, self.c = np.asarray(x, np.float64), np.asarray(c, np.int64)

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, i: int) -> tuple:
        return self.x[i], self.c[i]


def _batches(x: np.ndarray, c: np.ndarray, new_order, batching: str):
    """Endless batches of 64 in each epoch's order ``new_order()``, the last
    partial batch of an epoch kept: (float32 inputs (B, 1), int64 labels)."""
    import torch

    n = len(x)
    if batching == "slices":
        xs = torch.tensor(x, dtype=torch.float32).reshape(-1, 1)
        cs = torch.tensor(c, dtype=torch.long)
        while True:
            order = new_order()
            for start in range(0, n, 64):
                batch = order[start:start + 64]
                yield xs[batch], cs[batch]

    class Orders(torch.utils.data.Sampler):
        """Each epoch's order, as ``RandomSampler`` gives ``randperm``'s."""

        def __iter__(self):
            return iter(new_order().tolist())

        def __len__(self) -> int:
            return n

    if batching == "dataloader":
        loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(
            torch.tensor(x, dtype=torch.float32).reshape(-1, 1),
            torch.tensor(c, dtype=torch.long)), batch_size=64, sampler=Orders())
        while True:
            yield from loader
    loader = torch.utils.data.DataLoader(_ItemByItem(x, c), batch_size=64,
                                         sampler=Orders())
    while True:  # the study's batches: float64 items, cast after collation
        for xb, cb in loader:
            yield xb.float().unsqueeze(1), cb


def study(tasks, seeds, steps: int = 50_000, jobs: int = 1, draws: str = "torch",
          batching: str = "slices") -> dict:
    """``{task: {seed: {step: error}}}``, every task and seed, ``jobs`` processes."""
    from concurrent.futures import ProcessPoolExecutor

    pairs = [(task, seed) for task in tasks for seed in seeds]
    with ProcessPoolExecutor(jobs, initializer=_one_thread) as pool:
        results = list(pool.map(_run_pair, pairs, [steps] * len(pairs),
                                [draws] * len(pairs), [batching] * len(pairs)))
    out: dict = {task: {} for task in tasks}
    for (task, seed), errors in zip(pairs, results):
        out[task][seed] = errors
    return out


def _one_thread() -> None:
    import torch

    torch.set_num_threads(1)


def _run_pair(pair: tuple, steps: int, draws: str, batching: str) -> dict:
    return run(*pair, steps=steps, draws=draws, batching=batching)


if __name__ == "__main__":
    import argparse
    import json
    import time

    parser = argparse.ArgumentParser(description="The original study's loop in "
                                     "PyTorch, over seeds; writes JSON.")
    parser.add_argument("--seeds", type=int, default=12)
    parser.add_argument("--first-seed", type=int, default=0,
                        help="seeds FIRST_SEED .. FIRST_SEED + SEEDS - 1 (default 0)")
    parser.add_argument("--steps", type=int, default=50_000)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--tasks", default=",".join(TASKS),
                        help="comma-separated, from: " + ", ".join(TASKS))
    parser.add_argument("--draws", choices=("torch", "scratchnet"), default="torch",
                        help="the random numbers: PyTorch's (default), or the "
                        "initial weights, sample and batch orders scratchnet's "
                        "original recipe draws for the same seed (paired)")
    parser.add_argument("--batching", choices=BATCHINGS,
                        default="slices", help="index each batch out of the sample "
                        "(default), collate it in a DataLoader, or do all the "
                        "study's code does at a step (its item-by-item dataset, "
                        "loss.item(), a test pass at each snapshot): the same "
                        "batches' distribution, slower")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    tasks = args.tasks.split(",")
    start = time.perf_counter()
    results = study(tasks, range(args.first_seed, args.first_seed + args.seeds),
                    args.steps, args.jobs, args.draws, args.batching)
    elapsed = time.perf_counter() - start
    with open(args.out, "w") as f:
        json.dump({"seeds": args.seeds, "steps": args.steps, "seconds": elapsed,
                   "jobs": args.jobs, "draws": args.draws, "batching": args.batching,
                   "errors": results}, f)
    print(f"{len(tasks) * args.seeds} runs in {elapsed:.0f} s -> {args.out}")
