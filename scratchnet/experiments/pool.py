r"""Worker processes for many small runs: how many, one BLAS thread each, what first.

The networks of the experiments are small (matrices of a few hundred
entries), so a run gains nothing from BLAS threads; when several runs go to
worker processes at once, threads only compete for the same cores.  The
command line and :func:`scratchnet.experiments.sweep` therefore set up their
local process pools the same way: one worker per core this process may use
(:func:`cpu_count`), each started with one BLAS thread
(:func:`single_threaded_blas`), on Linux forked from a server process that
has imported the library once (:func:`worker_context`).

The command line splits each recipe's members into at most one ensemble per
worker, as few as balance the workers (:func:`plan_ensembles`), given to the
workers longest first by what the work is (:func:`ensemble_work`: steps x
members x multiply-adds, never seconds measured on one machine), and submits
them to a plain process pool so that each worker runs its own shortest
first: the main process draws a figure as soon as its networks are trained,
and what it draws after the last ensemble ends is the run's tail.
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

__all__ = ["BLAS_THREAD_VARIABLES", "cpu_count", "ensemble_work", "makespan",
           "plan_ensembles", "single_threaded_blas", "worker_context"]

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


def ensemble_work(recipe: Recipe, steps: int, members: int) -> int:
    r"""What training an ensemble is: its multiply-adds, steps x members x per step.

    .. math::

        W = \text{steps} \times \text{members} \times
            B \textstyle\sum_l (d_{l-1} + 1) d_l

    (the ``+ 1`` is the bias row of each layer's matrix): the forward pass's
    multiply-adds of one step of one network; its backward pass and update
    are proportional to it.  A count, the same on every machine.

    Parameters
    ----------
    recipe : Recipe or str
    steps : int
    members : int

    Returns
    -------
    int

    Examples
    --------
    >>> from scratchnet.experiments import ORIGINAL, ensemble_work
    >>> ensemble_work(ORIGINAL, 50_000, 2)   # 1-64-64-2, batch 64
    28275200000
    """
    recipe = get_recipe(recipe)
    steps = check_positive_int(steps, "steps")
    members = check_positive_int(members, "members")
    macs = recipe.batch_size * sum((a + 1) * b for a, b in zip(recipe.sizes,
                                                                recipe.sizes[1:]))
    return steps * members * macs


def makespan(costs: Sequence[float], jobs: int, *, in_order: bool = False) -> float:
    """When the busiest of ``jobs`` workers ends, in the costs' own unit.

    Each cost goes to the worker that is free first: what a process pool
    does with work in the order it was submitted.

    Parameters
    ----------
    costs : sequence of float
        E.g. :func:`ensemble_work` of each job.
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
        raise TypeError(f"costs must be a sequence of numbers; got {costs!r:.40}")
    costs = [finite(c, "costs entries", low=0.0) for c in costs]
    jobs = check_positive_int(jobs, "jobs")
    return max(sum(costs[i] for i in queue) for queue in _assign(costs, jobs, in_order))


def _assign(costs: Sequence[float], jobs: int, in_order: bool) -> list[list[int]]:
    """Each worker's jobs (indices into ``costs``): each to the worker free first."""
    free, queues = [0.0] * jobs, [[] for _ in range(jobs)]
    order = range(len(costs)) if in_order else sorted(range(len(costs)),
                                                      key=lambda i: -costs[i])
    for i in order:
        worker = free.index(min(free))  # the worker free first
        queues[worker].append(i)
        free[worker] += costs[i]
    return queues


def plan_ensembles(groups: Mapping[str, Sequence[Any]], jobs: int, *,
                   steps: Optional[int] = None) -> list[tuple[str, list]]:
    """Split each recipe's members into ensembles, and order them for a pool.

    Every split of each recipe into 1 to ``jobs`` ensembles (members dealt
    round-robin) is tried; the one whose busiest worker has the least work
    wins (:func:`makespan` of :func:`ensemble_work`, the ensembles given to
    the workers longest first), and on a tie the one with fewer ensembles,
    since each ensemble pays a step's fixed costs once for all its members.
    Measured on the default run (2 cores, interleaved with one ensemble per
    recipe and worker): splitting ``covering`` too made the run about 10%
    longer.

    The ensembles are then ordered so that a pool, which hands the next one
    to the worker free first, gives each worker the same ensembles, its own
    shortest first (by when each would start).  The main process draws each
    (task, recipe)'s figure when its networks are trained: shortest first,
    ``covering``'s figures are drawn while ``original`` still trains, and
    fewer are left after the last ensemble (measured on the default run, 8
    runs each, interleaved: 4.79 against 4.91 s).

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
        The order to submit them to a process pool in.

    Examples
    --------
    The default run on 2 cores: ``original``'s three networks as 2 + 1, and
    ``covering``'s (10,000 steps each) as one ensemble, trained before the
    single ``original`` network on the same worker:

    >>> from scratchnet.experiments import plan_ensembles
    >>> plan_ensembles({"original": ["a", "b", "c"],
    ...                 "covering": ["a", "b", "c"]}, jobs=2)
    [('original', ['a', 'c']), ('covering', ['a', 'b', 'c']), ('original', ['b'])]
    """
    if not isinstance(groups, Mapping):
        raise TypeError("groups must map recipe names to their members; got "
                        f"{type(groups).__name__}")
    jobs = check_positive_int(jobs, "jobs")
    if steps is not None:
        steps = check_positive_int(steps, "steps")

    def work(unit: tuple[str, list]) -> int:
        recipe = get_recipe(unit[0])
        return ensemble_work(recipe, steps or recipe.steps, max(1, len(unit[1])))

    best: tuple = ()
    for parts in itertools.product(*(range(1, max(1, min(jobs, len(m))) + 1)
                                     for m in groups.values())):
        units = [(name, list(groups[name][i::k]))
                 for name, k in zip(groups, parts) for i in range(k)]
        key = (makespan([work(u) for u in units], jobs), len(units))
        if not best or key < best[0]:
            best = (key, units)
    units = best[1]
    costs = [work(unit) for unit in units]
    starts = []  # (when it starts, its worker, the unit) on each worker, shortest first
    for worker, queue in enumerate(_assign(costs, jobs, in_order=False)):
        start = 0
        for i in sorted(queue, key=lambda i: costs[i]):
            starts.append((start, worker, i))
            start += costs[i]
    return [units[i] for _, _, i in sorted(starts)]
