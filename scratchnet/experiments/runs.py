r"""One run: train a network by a recipe, then measure it against P(C|x).

:func:`run` trains a network on a one-dimensional task and takes snapshots
of its outputs :math:`q(c \mid x)` at chosen steps.  Because the task's
posterior :math:`P(c \mid x)` is known exactly, each snapshot can be
measured against it; the metrics of a snapshot at step :math:`t` (the
columns of :data:`COLUMNS`) are:

* ``expected_kl``: :math:`\mathbb{E}_{x \sim P(X)} KL(P \,\|\, q)` in nats,
  ``task.expected_kl`` (Gauss-Legendre quadrature over :math:`P(X)`);
* ``max_abs_error``: :math:`\max_{x, c} |q(c \mid x) - P(c \mid x)|` over the
  100 points of :data:`EVAL_X` on :math:`[-4, 7]`, the original study's measure;
* ``loss_gap``: the mean mini-batch loss of the last :math:`\min(t, 500)` steps
  up to :math:`t`, minus the Bayes loss of the *training* inputs (the task's
  :math:`H(C \mid X)`; for ``covering``, :math:`\mathbb{E}_{x \sim
  P_\mathrm{train}} H(P(C \mid x))`), a noisy estimate of the expected KL
  under the training inputs (negative values are noise, or over-fitting of
  a fixed sample);
* ``accuracy``: the population accuracy of the network's argmax,
  :math:`\int P(x)\, P(\hat c(x) \mid x)\, dx` (trapezoid rule on 4001
  points covering all but :math:`10^{-9}` of :math:`P(X)`), beside
  ``bayes_accuracy``, :math:`\int \max_c P(x, c)\, dx`.

A run on a sampled dataset also counts its training inputs past the task's
last crossing of :math:`P(c_1 \mid x) = 1/2`, where the posterior is hardest
to learn when :math:`P(x)` is small there (:func:`tail_mass`).

A recipe may train with another loss (``recipe.loss``).  The loss says how
the network's outputs become :math:`q(c \mid x)`: every metric reads them
through the loss object's readout, ``get_loss(recipe.loss).predict_proba``
and ``predict_log_proba`` (:mod:`scratchnet.readouts`), the readout a model
trained with that loss uses.  With the cross-entropy that is the softmax;
with squared error on one-hot targets (``"mse"``) the outputs *themselves*
estimate :math:`P(c \mid x)`, clipped to :math:`[10^{-4}, 1]`
(:data:`scratchnet.readouts.MSE_FLOOR`) and renormalised; the hinge loss
estimates only the Bayes decision, so its :math:`q` is the one-hot row of
the arg-max, and its expected KL is infinite.  ``loss_gap`` is then the
loss minus its own Bayes floor, :math:`\mathbb{E}_x \tfrac1M \sum_c P_c
(1 - P_c)` for the squared error and :math:`\mathbb{E}_x \min_c P(c \mid
x)` for the two-class hinge.

A task without a decision boundary (equal classes, or equal means and
scales) runs like any other; its ``last_crossing`` and ``tail_mass`` are
NaN and no training input lies past a crossing.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Optional, Union

import numpy as np

from .. import fast
from .._validation import check_positive_int, check_scalar
from ..fast import Adam, Ensemble, stacked_epochs, stacked_stream
from ..gaussian import GaussianClasses
from ..history import History
from ..information import entropy
from ..metrics import moving_average
from ..objectives import get_loss
from ..optim import SGD
from ..tasks import get_task
from .recipes import LOSSES, Recipe, get_recipe

__all__ = ["COLUMNS", "EVAL_X", "LOSS_WINDOW", "ExperimentResult", "run", "run_group",
           "tail_mass"]

#: The 100 inputs on :math:`[-4, 7]` where outputs are compared with the posterior.
EVAL_X = np.linspace(-4.0, 7.0, 100)
#: Steps averaged for the ``loss_gap`` metric (fewer early on).
LOSS_WINDOW = 500
#: The metric rows' keys, in table order.
COLUMNS = ("task", "recipe", "seed", "step", "expected_kl", "max_abs_error",
           "loss_gap", "accuracy", "bayes_accuracy")

_QUADRATURE_NODES = 4001


def _check_loss(loss: str) -> str:
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {', '.join(map(repr, LOSSES))}; "
                         f"got {loss!r}")
    return loss


def _pointwise_floor(loss: str, posterior: np.ndarray) -> np.ndarray:
    """The smallest expected loss at x, given P(c|x) (rows): the loss's Bayes floor."""
    if loss == "cross_entropy":
        return entropy(posterior)
    if loss == "mse":
        return (posterior * (1.0 - posterior)).sum(axis=-1) / posterior.shape[-1]
    if posterior.shape[-1] == 2:  # hinge, margin 1: d = +-1, costs min_c P(c|x)
        return posterior.min(axis=-1)
    return np.full(posterior.shape[:-1], np.nan)


def tail_mass(task: GaussianClasses, x0: float) -> float:
    r"""The probability :math:`P(X > x_0)` of a one-dimensional task.

    Parameters
    ----------
    task : GaussianClasses
        One-dimensional.
    x0 : float
        Not NaN; :math:`\pm\infty` give 0 and 1.

    Returns
    -------
    float
        :math:`\sum_c P(c)\, \tfrac12 \operatorname{erfc}\bigl((x_0 - \mu_c) /
        (\sigma_c \sqrt 2)\bigr)`.

    Examples
    --------
    >>> import scratchnet as sn
    >>> print(f"{sn.experiments.tail_mass(sn.tasks.sparse_tail(), 6.418):.2e}")
    4.91e-04
    """
    if not isinstance(task, GaussianClasses):
        raise TypeError("task must be a GaussianClasses (e.g. "
                        f"sn.tasks.get_task(name)); got {task!r}")
    if task.dim != 1:
        raise ValueError(f"task must be one-dimensional; got dim {task.dim}")
    x0 = check_scalar(x0, "x0")
    mu = np.asarray(task.means, dtype=float).reshape(-1)
    scales = np.asarray(task.scales, dtype=float)
    # standard deviations (M,), or 1 x 1 covariance matrices (M, 1, 1)
    sd = scales if scales.ndim == 1 else np.sqrt(scales.reshape(-1))
    return float(sum(p * 0.5 * math.erfc((x0 - m) / (s * math.sqrt(2)))
                     for p, m, s in zip(task.priors, mu, sd)))


@dataclass
class ExperimentResult:
    r"""One run of a recipe on a task: its history and measured snapshots.

    Parameters
    ----------
    task, recipe : str
        Their names.
    seed : int
    history : History
        Of :func:`scratchnet.train`, with ``snapshot_probs`` of shape
        (K, 100, M) on ``eval_x``.
    eval_x : ndarray, shape (100,)
        :data:`EVAL_X`.
    posterior : ndarray, shape (100, M)
        The task's :math:`P(c \mid x)` on ``eval_x``.
    rows : list of dict
        The metrics of each snapshot, keys :data:`COLUMNS`.
    model : MLP
        The network after the last step.
    extra : dict
        ``elapsed`` (seconds of training); for sampled datasets ``n_train``
        and ``n_tail``, the training inputs past the task's last crossing
        ``last_crossing``, whose probability is ``tail_mass``.
    generative_model : GaussianClasses
        The task itself (the figures draw its posterior and densities).

    Examples
    --------
    >>> import scratchnet as sn
    >>> result = sn.experiments.run("separated", "textbook", steps=100)
    >>> result.history.snapshot_probs.shape, result.rows[-1]["step"]
    ((4, 100, 2), 100)
    """

    task: str
    recipe: str
    seed: int
    history: History
    eval_x: np.ndarray
    posterior: np.ndarray
    rows: list[dict[str, Any]]
    model: Any = None
    extra: dict[str, Any] = field(default_factory=dict)
    generative_model: Optional[GaussianClasses] = None

    def __post_init__(self) -> None:
        for name in ("task", "recipe"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"{name} must be a name (str); got "
                                f"{getattr(self, name)!r}")
        check_positive_int(self.seed, "seed", minimum=0)
        if not isinstance(self.rows, list):
            raise TypeError("rows must be a list of dicts; got "
                            f"{type(self.rows).__name__}")
        if not isinstance(self.extra, dict):
            raise TypeError(f"extra must be a dict; got {type(self.extra).__name__}")
        model = self.generative_model
        if model is not None and not isinstance(model, GaussianClasses):
            raise TypeError("generative_model must be a GaussianClasses or None; got "
                            f"{type(model).__name__}")


def _trapezoid_weights(grid: np.ndarray) -> np.ndarray:
    """Weights of the trapezoid rule on an evenly spaced grid."""
    weights = np.full(grid.size, grid[1] - grid[0])
    weights[[0, -1]] *= 0.5
    return weights


def _bayes_floor(task: GaussianClasses, loss: str) -> float:
    """The loss's Bayes floor under P(X): H(C|X) for the cross-entropy."""
    if loss == "cross_entropy":
        return task.bayes_loss()
    grid = np.linspace(*task.support(1.0 - 1e-9), _QUADRATURE_NODES)
    return float(_trapezoid_weights(grid) @ (
        task.density(grid) * _pointwise_floor(loss, task.posterior(grid))))


def _training_data(task: GaussianClasses, recipe: Recipe, steps: int,
                   rng: np.random.Generator) -> tuple[Any, float]:
    """The ``data`` argument of ``train`` and the Bayes loss of its inputs."""
    if recipe.data == "stream":
        return task, _bayes_floor(task, recipe.loss)
    if recipe.data == "fixed":
        return task.sample(recipe.dataset_size, rng), _bayes_floor(task, recipe.loss)
    if recipe.data != "covering":
        raise ValueError(f"recipe.data must be 'fixed', 'stream' or 'covering'; "
                         f"got {recipe.data!r}")
    n = steps * recipe.batch_size
    n_task = int(rng.binomial(n, recipe.mix))
    x_task, c_task = task.sample(n_task, rng)
    low, high = recipe.input_range
    x_uniform = rng.uniform(low, high, size=(n - n_task, 1))
    x = np.concatenate([x_task, x_uniform])
    c = np.concatenate([c_task, task.sample_labels(x_uniform, rng)])
    grid = np.linspace(low, high, _QUADRATURE_NODES)
    uniform_floor = _trapezoid_weights(grid) @ _pointwise_floor(
        recipe.loss, task.posterior(grid)) / (high - low)
    return (x, c), (recipe.mix * _bayes_floor(task, recipe.loss)
                    + (1 - recipe.mix) * uniform_floor)


def _build_ensemble(recipe: Recipe, rngs: Sequence[np.random.Generator]) -> Ensemble:
    """The recipe's network, one member per seed: the one place runs build it."""
    return Ensemble(recipe.sizes, rngs, init=recipe.init, dtype=recipe.dtype)


def _task(task: Any) -> GaussianClasses:
    """A one-dimensional task from its name or itself; TypeError for anything else."""
    if isinstance(task, str):
        task = get_task(task)
    if not isinstance(task, GaussianClasses):
        raise TypeError("task must be a task name (a str, e.g. 'separated') or a "
                        f"GaussianClasses; got {type(task).__name__} {task!r:.40}")
    if task.dim != 1:
        raise ValueError(f"task must be one-dimensional; got dim {task.dim}")
    return task


def _check_fits(recipe: Recipe, task: GaussianClasses) -> None:
    """The recipe's network takes the task's inputs and gives one output per class
    (or one output, class 1's, for two classes)."""
    inputs, outputs = recipe.sizes[0], recipe.sizes[-1]
    m = task.num_classes
    if inputs != task.dim or outputs not in ((m, 1) if m == 2 else (m,)):
        name = repr(task.name) if task.name else repr(task)
        raise ValueError(
            f"recipe {recipe.name!r} has sizes={recipe.sizes}, a network of {inputs} "
            f"input(s) and {outputs} output(s), but task {name} has {task.dim} "
            f"input dimension(s) and {m} classes: give the recipe sizes "
            f"({task.dim}, ..., {m})")


def _progress(progress: Any) -> bool:
    if progress is not None and not isinstance(progress, (bool, np.bool_)):
        raise TypeError(f"progress must be True, False or None; got {progress!r}")
    return bool(progress)


def _seed_list(seeds: Union[int, Sequence[int]]) -> list[int]:
    if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
        return list(range(check_positive_int(seeds, "seeds")))
    if isinstance(seeds, (str, bytes)) or not hasattr(seeds, "__iter__"):
        raise TypeError(f"seeds must be a count or a sequence of seeds; got {seeds!r}")
    listed = [check_positive_int(s, "seeds entries", minimum=0) for s in seeds]
    if not listed or len(set(listed)) != len(listed):
        raise ValueError(f"seeds must be distinct and at least one; got {listed}")
    return listed


def run(
    task: Union[str, GaussianClasses],
    recipe: Union[str, Recipe],
    *,
    steps: Optional[int] = None,
    seed: int = 0,
    seeds: Union[int, Sequence[int], None] = None,
    progress: Optional[bool] = None,
) -> Union[ExperimentResult, list[ExperimentResult]]:
    r"""Train networks on ``task`` by ``recipe`` and measure every snapshot.

    Parameters
    ----------
    task : str or GaussianClasses
        A name of ``scratchnet.tasks.TASKS`` or a one-dimensional task.
    recipe : str or Recipe
        A name of :data:`RECIPES` or a :class:`Recipe`.
    steps : int, optional
        Number of updates; default ``recipe.steps``.  A cosine schedule is
        stretched over the run.
    seed : int, default 0
        One seed for everything: it spawns independent streams for the
        initial weights, the data (the fixed sample) and the batches.
    seeds : int or sequence of int, optional
        A seed study: ``n`` (seeds ``0 .. n-1``) or the seeds themselves.
        All are trained at once on :class:`scratchnet.fast.Ensemble`; seed
        ``s`` gives exactly what ``run(..., seed=s)`` gives.
    progress : bool, optional
        A progress line on stderr.

    Returns
    -------
    ExperimentResult, or list of ExperimentResult with ``seeds``
        With one row of metrics (module docstring) per snapshot.

    Examples
    --------
    >>> import scratchnet as sn
    >>> result = sn.experiments.run("separated", "textbook", steps=200, seed=0)
    >>> [row["step"] for row in result.rows]
    [10, 20, 50, 100, 200]
    >>> bool(result.rows[-1]["max_abs_error"] < 0.2)
    True
    >>> study = sn.experiments.run("separated", "textbook", steps=200, seeds=3)
    >>> [r.seed for r in study], study[0].rows == result.rows
    ([0, 1, 2], True)
    """
    task = _task(task)
    seed_list = [check_positive_int(seed, "seed", minimum=0)] if seeds is None \
        else _seed_list(seeds)
    results = run_group([(task, s) for s in seed_list], recipe, steps=steps,
                        progress=progress)
    return results[0] if seeds is None else results


def run_group(
    members: Sequence[tuple[Union[str, GaussianClasses], int]],
    recipe: Union[str, Recipe],
    *,
    steps: Optional[int] = None,
    progress: Optional[bool] = None,
) -> list[ExperimentResult]:
    r"""Train any (task, seed) pairs of one recipe at once, as one ensemble.

    The runs share nothing but the fast path's batched matrix products: each
    member is exactly ``run(task, recipe, seed=seed)``.  The command line
    groups a recipe's tasks and seeds this way, a few worker processes each.

    Parameters
    ----------
    members : sequence of (task, seed)
        Tasks by name or as one-dimensional
        :class:`~scratchnet.gaussian.GaussianClasses`.
    recipe : str or Recipe
    steps : int, optional
    progress : bool, optional

    Returns
    -------
    list of ExperimentResult
        One per member, in order.

    Examples
    --------
    >>> import scratchnet as sn
    >>> group = sn.experiments.run_group([("separated", 0), ("sparse-tail", 0)],
    ...                                  "textbook", steps=50)
    >>> [(r.task, r.seed) for r in group]
    [('separated', 0), ('sparse-tail', 0)]
    >>> group[1].rows == sn.experiments.run("sparse-tail", "textbook", steps=50).rows
    True
    """
    recipe = get_recipe(recipe)
    loss = _check_loss(recipe.loss)
    steps = recipe.steps if steps is None else check_positive_int(steps, "steps")
    progress = _progress(progress)
    if isinstance(members, (str, bytes)) or not isinstance(members, Sequence):
        raise TypeError("members must be a sequence of (task, seed) pairs; got "
                        f"{type(members).__name__}")
    if not members:
        raise ValueError("members must name at least one (task, seed) pair")
    for member in members:
        if isinstance(member, (str, bytes)) or not isinstance(member, Sequence) \
                or len(member) != 2:
            raise TypeError(f"members must hold (task, seed) pairs; got {member!r:.60}")
    tasks = [_task(t) for t, _ in members]
    for task in tasks:
        _check_fits(recipe, task)
    for _, seed in members:
        check_positive_int(seed, "seed of a member", minimum=0)
    snapshots = sorted({s for s in recipe.snapshot_steps if s < steps} | {steps})
    streams = [[np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(3)]
               for _, seed in members]  # per member: initial weights, data, batches
    ensemble = _build_ensemble(recipe, [init for init, _, _ in streams])
    datasets, floors = [], []
    for task, (_, data_rng, _) in zip(tasks, streams):
        data, floor = _training_data(task, recipe, steps, data_rng)
        datasets.append(data)
        floors.append(floor)
    batch_rngs = [batch_rng for _, _, batch_rng in streams]
    if recipe.data == "stream":  # what task.sample(batch_size, rng) draws, per member
        batches = stacked_stream(tasks, recipe.batch_size, batch_rngs)
    else:  # fixed samples of one size: every member's batch in one gather
        batches = stacked_epochs([(x.astype(ensemble.dtype), c) for x, c in datasets],
                                 recipe.batch_size, batch_rngs)
    grids = {}  # per distinct task: EVAL_X and the accuracy's quadrature grid
    for task in tasks:
        if id(task) not in grids:
            quad_x = np.linspace(*task.support(1.0 - 1e-9), _QUADRATURE_NODES)
            grids[id(task)] = quad_x, np.concatenate([EVAL_X, quad_x])
    probs: list[list[np.ndarray]] = [[] for _ in members]
    kls: list[list[float]] = [[] for _ in members]

    readout = get_loss(loss)  # the loss says how outputs become probabilities
    # one network measured as each member in turn: its buffers, one per grid
    # size, are made at the first snapshot and reused (a new network at every
    # snapshot cost a third of the measurement, in fresh memory)
    model = ensemble.member(0)

    def snapshot(step: int, ens: Ensemble) -> None:
        rows = ens.params.flat.reshape(len(tasks), -1)  # member after member
        for s, task in enumerate(tasks):  # member by member: (n, 64) at a time
            model.params.flat[...] = rows[s]
            probs[s].append(readout.predict_proba(model.forward(grids[id(task)][1])))
            kls[s].append(task.expected_kl(
                lambda x: readout.predict_log_proba(model.forward(x)), log_probs=True))

    lr = recipe.learning_rate(steps)
    first = lr(0) if callable(lr) else lr
    optimizer = (Adam(ensemble.params, first) if recipe.optimizer == "adam"
                 else SGD(ensemble.params, first, momentum=recipe.momentum))
    start = time.perf_counter()
    losses = fast.train(ensemble, batches, steps=steps,
                        optimizer=optimizer, lr=lr if callable(lr) else None,
                        snapshot_steps=snapshots, on_snapshot=snapshot,
                        progress=progress, loss=loss)
    elapsed = time.perf_counter() - start
    return [_measure(task, recipe, seed, ensemble.member(s), losses[:, s], snapshots,
                     np.stack(probs[s]), np.asarray(kls[s]), grids[id(task)][0],
                     floors[s], datasets[s], elapsed)
            for s, (task, (_, seed)) in enumerate(zip(tasks, members))]


def _measure(task: GaussianClasses, recipe: Recipe, seed: int, model: Any,
             losses: np.ndarray, snapshots: Sequence[int], probs: np.ndarray,
             kls: np.ndarray, quad_x: np.ndarray, loss_floor: float, data: Any,
             elapsed: float) -> ExperimentResult:
    """One seed's result: its history and the metrics of each snapshot."""
    probs, quad_probs = np.split(probs, [EVAL_X.size], axis=1)
    history = History(losses=losses.copy(), snapshot_steps=np.asarray(snapshots),
                      snapshot_probs=probs, snapshot_kl=kls, eval_x=EVAL_X.copy(),
                      elapsed=elapsed)
    posterior = task.posterior(EVAL_X)
    # accuracy = integral of P(x) P(argmax_c q(c|x) | x) dx
    quad_posterior = task.posterior(quad_x)
    right = np.take_along_axis(quad_posterior[None], quad_probs.argmax(-1)[..., None],
                               axis=-1)[..., 0]
    accuracy = right @ (task.density(quad_x) * _trapezoid_weights(quad_x))
    loss_means = moving_average(history.losses, LOSS_WINDOW)
    bayes_accuracy = task.bayes_accuracy()
    name = task.name or "task"
    rows = [{"task": name, "recipe": recipe.name, "seed": seed, "step": int(step),
             "expected_kl": float(kl),
             "max_abs_error": float(np.abs(p - posterior).max()),
             "loss_gap": float(loss_means[step - 1] - loss_floor),
             "accuracy": float(acc), "bayes_accuracy": float(bayes_accuracy)}
            for step, kl, p, acc in zip(history.snapshot_steps, history.snapshot_kl,
                                        probs, accuracy)]
    extra: dict[str, Any] = {"elapsed": elapsed}
    if isinstance(data, tuple) and task.num_classes == 2:
        crossings = task.decision_boundaries()
        if crossings.size:
            last = float(crossings[-1])
            extra.update(last_crossing=last, tail_mass=tail_mass(task, last),
                         n_tail=int(np.sum(data[0] > last)))
        else:  # equal classes: no crossing, no tail past it
            extra.update(last_crossing=math.nan, tail_mass=math.nan, n_tail=0)
        extra["n_train"] = len(data[0])
    return ExperimentResult(name, recipe.name, seed, history, EVAL_X.copy(),
                            posterior, rows, model, extra, generative_model=task)
