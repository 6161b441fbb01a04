r"""Worker processes for many small runs: how many, and one BLAS thread each.

The networks of the experiments are small (matrices of a few hundred
entries), so a run gains nothing from BLAS threads; when several runs go to
worker processes at once, threads only compete for the same cores.  The
command line and :func:`scratchnet.experiments.sweep` therefore set up their
local process pools the same way: one worker per core this process may use
(:func:`cpu_count`), each started with one BLAS thread
(:func:`single_threaded_blas`).

How the command line splits its networks into ensembles for those workers
(:func:`plan_ensembles`) rests on a cost model of the engine's step
(:func:`ensemble_seconds`): a fixed part per step of an ensemble, whatever
its size, and a part per member proportional to its matrix products.  Two
small ensembles pay the fixed part twice; one big one may leave a core
idle: the split whose busiest worker finishes first wins.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Optional

from .recipes import Recipe, get_recipe

__all__ = ["BLAS_THREAD_VARIABLES", "MAC_SECONDS", "STEP_SECONDS", "cpu_count",
           "ensemble_seconds", "makespan", "plan_ensembles", "single_threaded_blas"]

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
    macs = recipe.batch_size * sum((a + 1) * b for a, b in zip(recipe.sizes,
                                                                recipe.sizes[1:]))
    return steps * (STEP_SECONDS + members * macs * MAC_SECONDS[recipe.dtype])


def makespan(costs: Sequence[float], jobs: int) -> float:
    """When the busiest of ``jobs`` workers ends, given the costs in any order.

    The costs go, longest first, to the worker that is free first: what a
    process pool does with work submitted longest first.

    Parameters
    ----------
    costs : sequence of float
    jobs : int

    Returns
    -------
    float

    Examples
    --------
    >>> from scratchnet.experiments import makespan
    >>> makespan([3.0, 2.0, 2.0, 1.0], jobs=2)   # 3 + 1 beside 2 + 2
    4.0
    """
    free = [0.0] * jobs
    for cost in sorted(costs, reverse=True):
        free[free.index(min(free))] += cost
    return max(free)


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
        The ensembles, the longest first (the order to submit them in).

    Examples
    --------
    The default run on 2 cores: ``original``'s three networks as 2 + 1, and
    ``covering``'s three (10,000 steps each) in one ensemble beside the one:

    >>> from scratchnet.experiments import plan_ensembles
    >>> plan = plan_ensembles({"original": ["a", "b", "c"],
    ...                        "covering": ["a", "b", "c"]}, jobs=2)
    >>> [(recipe, members) for recipe, members in plan]
    [('original', ['a', 'c']), ('original', ['b']), ('covering', ['a', 'b', 'c'])]
    """
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
    return sorted(best[1], key=cost, reverse=True)
