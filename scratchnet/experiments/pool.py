r"""Worker processes for many small runs: how many, and one BLAS thread each.

The networks of the experiments are small (matrices of a few hundred
entries), so a run gains nothing from BLAS threads; when several runs go to
worker processes at once, threads only compete for the same cores.  The
command line and :func:`scratchnet.experiments.sweep` therefore set up their
local process pools the same way: one worker per core this process may use
(:func:`cpu_count`), each started with one BLAS thread
(:func:`single_threaded_blas`), on Linux forked from a server process that
has imported the library once (:func:`worker_context`).

How the command line splits its networks into ensembles for those workers
(:func:`plan_ensembles`) rests on a cost model of the engine's step
(:func:`ensemble_seconds`): a fixed part per step of an ensemble, whatever
its size, and a part per member proportional to its matrix products.  Two
small ensembles pay the fixed part twice; one big one may leave a core
idle: the split whose busiest worker finishes first wins.  Each worker then
takes its shorter ensembles first, so the ones still training at the end,
whose figures are drawn last, are few.
"""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from multiprocessing.context import BaseContext
from typing import Any, Optional

import numpy as np

from .._validation import check_positive_int
from ._checks import finite
from .recipes import Recipe, get_recipe

__all__ = ["BLAS_THREAD_VARIABLES", "MAC_SECONDS", "STEP_SECONDS", "cpu_count",
           "ensemble_seconds", "makespan", "plan_ensembles", "single_threaded_blas",
           "worker_context"]

#: The cost model of a training step on the engine, measured on a 2-core
#: x86-64 machine (1-64-64-2 networks, batch 64, Adam): about 100 µs per step
#: of an ensemble, plus per member about 0.3 ns per multiply-add of its matrix
#: products in float32 (90 µs for that network) and 0.7 ns in float64.
STEP_SECONDS = 100e-6
MAC_SECONDS = {"float32": 0.3e-9, "float64": 0.7e-9}

#: The environment variables that set the BLAS thread count of a new process.
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def cpu_count() -> int:
    """The number of cores this process may run on.

    Returns
    -------
    int
        The size of the process's CPU affinity set where the system reports
        one (Linux: a container or ``taskset`` limit counts), else
        ``os.cpu_count()``, and 1 when even that is unknown.  At least 1.

    Examples
    --------
    >>> import scratchnet as sn
    >>> sn.experiments.cpu_count() >= 1
    True
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def worker_context() -> BaseContext:
    """How worker processes start: forked from a server that imported the library.

    On Linux, the ``"forkserver"`` start method with
    :mod:`scratchnet.experiments` preloaded: the server process imports NumPy
    and the library once (about 0.4 s of a core) and each worker is a fork
    of it, a few milliseconds.  Elsewhere ``"spawn"``, where each worker
    imports them itself (on macOS, system libraries such as Accelerate are
    not safe to use in a forked child: Python's own default there is
    ``"spawn"``).  Both start from a fresh interpreter, so no thread or lock
    of this process is inherited.  The server is started by the first pool
    that needs a worker and keeps the environment of that moment (the BLAS
    thread count of :func:`single_threaded_blas`).

    Returns
    -------
    multiprocessing.context.BaseContext
        For ``ProcessPoolExecutor(mp_context=...)``.

    Examples
    --------
    >>> import sys
    >>> import scratchnet as sn
    >>> method = sn.experiments.worker_context().get_start_method()
    >>> method == ("forkserver" if sys.platform.startswith("linux") else "spawn")
    True
    """
    if not sys.platform.startswith("linux"):
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["scratchnet.experiments"])
    return context


@contextlib.contextmanager
def single_threaded_blas() -> Iterator[None]:
    """Within the block, processes started get one BLAS thread each.

    Sets each of :data:`BLAS_THREAD_VARIABLES` to ``"1"`` unless the user set
    it already (a value given is kept), and restores the environment on
    leaving.  It acts on worker processes started inside the block, not on
    this process, whose BLAS has already read its settings.

    Yields
    ------
    None

    Examples
    --------
    >>> import os
    >>> import scratchnet as sn
    >>> before = dict(os.environ)
    >>> with sn.experiments.single_threaded_blas():
    ...     all(name in os.environ for name in sn.experiments.BLAS_THREAD_VARIABLES)
    True
    >>> dict(os.environ) == before
    True
    """
    saved = {name: os.environ.get(name) for name in BLAS_THREAD_VARIABLES}
    for name in BLAS_THREAD_VARIABLES:
        os.environ.setdefault(name, "1")
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def ensemble_seconds(recipe: Recipe, steps: int, members: int) -> float:
    r"""The cost model's time to train an ensemble of ``members`` networks.

    .. math::

        T = \text{steps} \times (t_\text{step} + \text{members} \times
            B \textstyle\sum_l (d_{l-1} + 1) d_l \times t_\text{MAC})

    with :data:`STEP_SECONDS` and :data:`MAC_SECONDS` (the ``+ 1`` is the
    bias row of each layer's matrix).

    Parameters
    ----------
    recipe : Recipe
    steps : int
    members : int

    Returns
    -------
    float
        Seconds (of one core of the machine the constants were measured on).

    Examples
    --------
    >>> from scratchnet.experiments import ORIGINAL, ensemble_seconds
    >>> round(ensemble_seconds(ORIGINAL, 50_000, 1), 1)  # 1-64-64-2, float32
    9.2
    """
    recipe = get_recipe(recipe)
    steps = check_positive_int(steps, "steps")
    members = check_positive_int(members, "members")
    macs = recipe.batch_size * sum((a + 1) * b for a, b in zip(recipe.sizes,
                                                                recipe.sizes[1:]))
    return steps * (STEP_SECONDS + members * macs * MAC_SECONDS[recipe.dtype])


def makespan(costs: Sequence[float], jobs: int, *, in_order: bool = False) -> float:
    """When the busiest of ``jobs`` workers ends.

    Each cost goes to the worker that is free first: what a process pool
    does with work in the order it was submitted.

    Parameters
    ----------
    costs : sequence of float
    jobs : int
    in_order : bool, default False
        Take the costs in the order given; by default, longest first.

    Returns
    -------
    float

    Examples
    --------
    >>> from scratchnet.experiments import makespan
    >>> makespan([1.0, 2.0, 3.0, 2.0], jobs=2)   # 3 + 1 beside 2 + 2
    4.0
    >>> makespan([1.0, 1.0, 4.0], jobs=2, in_order=True)  # 1 + 4 beside 1
    5.0
    """
    if isinstance(costs, (str, bytes)) or not isinstance(costs, (Sequence, np.ndarray)):
        raise TypeError(f"costs must be a sequence of seconds; got {costs!r:.40}")
    costs = [finite(c, "costs entries", low=0.0) for c in costs]
    jobs = check_positive_int(jobs, "jobs")
    return max(_schedule(costs if in_order else sorted(costs, reverse=True), jobs)[1])


def _schedule(costs: Sequence[float], jobs: int) -> tuple[list[int], list[float]]:
    """The worker each cost goes to, in order, and when each worker ends."""
    free, workers = [0.0] * jobs, []
    for cost in costs:
        worker = free.index(min(free))
        workers.append(worker)
        free[worker] += cost
    return workers, free


def plan_ensembles(groups: Mapping[str, Sequence[Any]], jobs: int, *,
                   steps: Optional[int] = None) -> list[tuple[str, list]]:
    """Split each recipe's members into ensembles for ``jobs`` workers.

    Every split of each recipe into 1 to ``jobs`` ensembles (members dealt
    round-robin) is tried; the one whose busiest worker ends first under
    :func:`ensemble_seconds` and :func:`makespan` wins, and on a tie the one
    with fewer ensembles (each pays the fixed part of a step).

    Parameters
    ----------
    groups : mapping of str to sequence
        Recipe name -> its members (e.g. ``(task, seed)`` pairs).
    jobs : int
    steps : int, optional
        Every run's steps (default: each recipe's own).

    Returns
    -------
    list of (recipe name, list of members)
        The ensembles in the order to submit them in: dealt longest first to
        the worker free first, then each worker's shortest first, where that
        ends as early under :func:`makespan` (the ensembles still training at
        the end are then the long ones, started first: fewer figures left to
        draw when the last one ends).

    Examples
    --------
    The default run on 2 cores: ``original``'s three networks as 2 + 1, and
    ``covering``'s three (10,000 steps each) in one ensemble, before the one:

    >>> from scratchnet.experiments import plan_ensembles
    >>> plan = plan_ensembles({"original": ["a", "b", "c"],
    ...                        "covering": ["a", "b", "c"]}, jobs=2)
    >>> [(recipe, members) for recipe, members in plan]
    [('original', ['a', 'c']), ('covering', ['a', 'b', 'c']), ('original', ['b'])]
    """
    if not isinstance(groups, Mapping):
        raise TypeError("groups must map recipe names to their members; got "
                        f"{type(groups).__name__}")
    jobs = check_positive_int(jobs, "jobs")
    if steps is not None:
        steps = check_positive_int(steps, "steps")
    recipes = {name: get_recipe(name) for name in groups}

    def cost(unit: tuple[str, list]) -> float:
        recipe = recipes[unit[0]]
        return ensemble_seconds(recipe, steps or recipe.steps, len(unit[1]))

    best: tuple = ()
    for parts in itertools.product(*(range(1, min(jobs, len(m)) + 1)
                                     for m in groups.values())):
        units = [(name, list(groups[name][i::k]))
                 for name, k in zip(groups, parts) for i in range(k)]
        key = (round(makespan([cost(u) for u in units], jobs), 6), len(units))
        if not best or key < best[0]:
            best = (key, units)
    units = sorted(best[1], key=cost, reverse=True)
    costs = [cost(u) for u in units]
    workers, _ = _schedule(costs, jobs)
    # each worker's queue, shortest first; submitted in the order of their starts
    starts, queues = [], [sorted((i for i, w in enumerate(workers) if w == k),
                                 key=lambda i: costs[i]) for k in range(jobs)]
    for queue in queues:
        start = 0.0
        for i in queue:
            starts.append((start, len(starts), i))
            start += costs[i]
    order = [i for _, _, i in sorted(starts)]
    if makespan([costs[i] for i in order], jobs, in_order=True) <= best[0][0]:
        return [units[i] for i in order]
    return units
