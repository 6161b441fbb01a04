r"""Running a sweep: its units of work, here or on a Dask cluster, into one table.

:func:`sweep` lays out a :class:`~scratchnet.experiments.Grid` of the
two-Gaussian family, splits it into units (networks of one shape trained
together on the fast path's ensemble) and runs them:

* in this process (``jobs=1``);
* in a local pool of worker processes (by default one per core);
* or, with ``scheduler=ADDRESS``, on an existing Dask distributed cluster
  (``dask scheduler`` on one machine, ``dask worker ADDRESS`` on each of the
  others; Dask is the optional extra ``scratchnet[distributed]``).

Every network is seeded on its own and no unit shares anything with another,
so where a unit runs changes nothing: the table is the same, to the last bit,
in-process, in a pool and on a cluster (a test checks it on a
``dask.distributed.LocalCluster``).  While it runs, a progress line reports
the runs done, the runs per second and the time left.

The result, a :class:`~scratchnet.experiments.Sweep`, holds the tidy table
(one row per point, loss, width, seed and budget, the columns of
:data:`~scratchnet.experiments.SWEEP_COLUMNS`), its summary over seeds and
writes both as CSV (:mod:`scratchnet.experiments.tables`);
:mod:`scratchnet.experiments.phase` draws them.

A sweep never loses work: a cell that fails (a task the fast path cannot
train, a worker that dies) is reported with its error, in the progress
lines, in its rows (NaN metrics, the ``error`` column) and in the overview,
and the others go on; with ``out``, the rows of every finished unit are
written to ``sweep.csv`` as they arrive, so an interrupted sweep keeps them.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Callable, Optional, Union

import numpy as np

from .._validation import check_positive_int
from ._checks import names
from .grids import Grid, Unit, failed_rows, run_unit
from .pool import cpu_count, single_threaded_blas, worker_context
from .recipes import LOSSES, RECIPES
from .tables import Sweep, SweepWriter

__all__ = ["DEFAULT_SWEEP", "sweep"]

#: The default sweep (``python -m scratchnet sweep``): an 8 x 8 grid that holds
#: the study's three tasks, 3 seeds, two budgets, the cross-entropy.
DEFAULT_SWEEP = {"mu2": "0.5:4:8", "sigma1": "1:2.75:8", "prior1": (0.5,),
                 "recipes": ("textbook",), "losses": ("cross_entropy",),
                 "steps": (1000, 10_000), "seeds": 3}
def sweep(
    mu2: Union[str, Sequence[float]] = DEFAULT_SWEEP["mu2"],
    sigma1: Union[str, Sequence[float]] = DEFAULT_SWEEP["sigma1"],
    *,
    prior1: Union[str, Sequence[float], float] = 0.5,
    recipes: Union[str, Sequence[str]] = "textbook",
    losses: Union[str, Sequence[str]] = "cross_entropy",
    widths: Union[str, Sequence[int], int] = (),
    steps: Union[str, Sequence[int], int] = DEFAULT_SWEEP["steps"],
    seeds: Union[int, Sequence[int]] = DEFAULT_SWEEP["seeds"],
    seed: int = 0,
    jobs: Optional[int] = None,
    scheduler: Any = None,
    parts: Optional[int] = None,
    progress: Union[bool, Callable[[str], Any]] = False,
    out: Union[str, Path, None] = None,
) -> Sweep:
    r"""Train networks across the two-Gaussian family and measure each one.

    Parameters
    ----------
    mu2, sigma1 : str or sequence of float
        The family's axes, ``"start:stop:count"`` or ``"a,b,c"``
        (:func:`~scratchnet.experiments.parse_axis`); default the 8 x 8 grid
        of :data:`DEFAULT_SWEEP`, which holds the study's three tasks.
    prior1 : float, str or sequence of float, default 0.5
        :math:`P(c_1)`.
    recipes, losses : str or sequence of str
        Names (a comma-separated string is split): recipes of
        :data:`~scratchnet.experiments.RECIPES` (default ``"textbook"``),
        losses of :data:`~scratchnet.experiments.LOSSES` (default
        ``"cross_entropy"``).
    widths : int, str or sequence of int, optional
        Hidden widths (default: the first recipe's).
    steps : int, str or sequence of int, default (1000, 10000)
        The budgets: each network is trained to the largest and measured at
        every one.
    seeds : int or sequence of int, default 3
        A count (seeds ``seed .. seed + seeds - 1``) or the seeds.
    seed : int, default 0
    jobs : int, optional
        Local worker processes (default: one per core; 1 runs in-process).
        Ignored with ``scheduler``.
    scheduler : str or dask.distributed.Client, optional
        Run the units on this Dask cluster (its address, e.g.
        ``"tcp://10.0.0.1:8786"``, or a client).
    parts : int, optional
        Units of work to split into (default: four per worker).
    progress : bool or callable, default False
        Report each finished unit (runs done, runs per second, time left)
        and each failed cell (with its error) on stderr, or to this callable.
    out : str or Path, optional
        A folder: the rows of each unit are appended to ``out/sweep.csv``
        as soon as it finishes (the whole table, in order, is written by
        :meth:`Sweep.write` at the end).

    Returns
    -------
    Sweep
        Every cell, the failed ones with NaN metrics and their ``error``
        (``Sweep.failed`` lists them).

    Raises
    ------
    TypeError, ValueError
        For an argument of the wrong kind or out of range, naming it.

    Examples
    --------
    >>> import scratchnet as sn
    >>> result = sn.experiments.sweep("1,3", "1,2", steps="50,100", seeds=2, jobs=1)
    >>> result.grid.runs, len(result.rows)   # 4 points x 2 seeds, 2 budgets each
    (8, 16)
    >>> sorted(result.rows[0])[:4]
    ['accuracy', 'bayes_accuracy', 'crossings', 'error']
    """
    grid = Grid(mu2, sigma1, prior1, names(recipes, "recipes", tuple(RECIPES)),
                names(losses, "losses", LOSSES), _widths(widths), steps,
                _seeds(seeds, seed))
    if parts is not None:
        parts = check_positive_int(parts, "parts")
    if not (callable(progress) or isinstance(progress, (bool, np.bool_))):
        raise TypeError("progress must be True, False or a callable taking a line; "
                        f"got {type(progress).__name__}")
    if out is not None and not isinstance(out, (str, os.PathLike)):
        raise TypeError(f"out must be a folder path (str or Path); got {out!r:.40}")
    say = progress if callable(progress) else _stderr if progress else None
    start = time.perf_counter()
    writer = SweepWriter(out) if out is not None else None
    try:
        with _executor(jobs, scheduler) as (workers, where, run_all):
            units = grid.units(parts or 4 * workers)
            results: list = [None] * len(units)
            tracker = _Progress(grid.runs, start, say)
            for index, rows in run_all(units):
                results[index] = rows
                if writer is not None:
                    writer.add(rows)
                tracker.update(len(units[index].members), rows)
    finally:
        if writer is not None:
            writer.close()
    rows = sorted((row for rows in results for row in rows), key=_order(grid))
    return Sweep(grid, rows, time.perf_counter() - start, where)


def _widths(widths: Any) -> Any:
    """The widths as parse_axis takes them: text, or a sequence (one number: itself)."""
    if isinstance(widths, (str, Sequence, np.ndarray)):
        return widths
    return (widths,)


def _seeds(seeds: Any, seed: Any) -> tuple[int, ...]:
    """The seeds: ``seed .. seed + seeds - 1`` for a count, or the sequence given."""
    seed = check_positive_int(seed, "seed", minimum=0)
    if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, (bool, np.bool_)):
        return tuple(range(seed, seed + check_positive_int(seeds, "seeds")))
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, (Sequence, np.ndarray)):
        raise TypeError(f"seeds must be a count or a sequence of seeds; got {seeds!r}")
    return tuple(seeds)


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _order(grid: Grid) -> Callable[[dict], tuple]:
    """The sort key of the tidy table: the grid's order, budget last."""
    axes = {"recipe": grid.recipes, "loss": grid.losses, "width": grid.widths,
            "prior1": grid.prior1, "sigma1": grid.sigma1, "mu2": grid.mu2,
            "seed": grid.seeds, "step": grid.steps}
    return lambda row: tuple(axis.index(row[name]) for name, axis in axes.items())


class _Progress:
    """Runs done, runs per second and the time left, one line per unit."""

    def __init__(self, total: int, start: float, say: Optional[Callable]) -> None:
        self.total, self.start, self.say, self.done = total, start, say, 0

    def update(self, runs: int, rows: list[dict[str, Any]]) -> None:
        self.done += runs
        if self.say is None:
            return
        failed = {}
        for row in rows:
            if row["error"]:
                failed[row["mu2"], row["sigma1"], row["prior1"], row["recipe"],
                       row["loss"], row["width"], row["seed"]] = row["error"]
        for (mu2, sigma1, prior1, recipe, loss, width, seed), error in failed.items():
            self.say(f"sweep: failed cell mu2={mu2:g}, sigma1={sigma1:g}, "
                     f"prior1={prior1:g}, {recipe}, {loss}, width {width}, seed "
                     f"{seed}: {error}")
        elapsed = time.perf_counter() - self.start
        rate = self.done / max(elapsed, 1e-9)
        left = (self.total - self.done) / rate
        self.say(f"sweep: {self.done:,}/{self.total:,} runs done, {rate:.2f} runs/s, "
                 + (f"about {left:.0f} s left" if self.done < self.total
                    else f"{elapsed:.1f} s in all"))


@contextlib.contextmanager
def _executor(jobs: Optional[int], scheduler: Any) -> Iterator[tuple]:
    """``(workers, where, run_all)``: ``run_all(units)`` yields ``(index, rows)``
    as units finish, in-process, in local processes or on a Dask cluster."""
    if scheduler is not None:
        with _dask(scheduler) as client:
            workers = max(1, sum(client.nthreads().values()))
            yield workers, f"Dask scheduler {client.scheduler.address}", (
                lambda units: _on_dask(client, units))
        return
    jobs = cpu_count() if jobs is None else check_positive_int(jobs, "jobs")
    if jobs == 1:
        yield 1, "in-process", lambda units: ((i, _rows(functools.partial(
            run_unit, u), u)) for i, u in enumerate(units))
        return
    with single_threaded_blas(), ProcessPoolExecutor(
            jobs, mp_context=worker_context()) as pool:
        def run_all(units: list[Unit]) -> Iterator[tuple]:
            futures = {pool.submit(run_unit, unit): i for i, unit in enumerate(units)}
            for future in as_completed(futures):
                unit = units[futures[future]]
                yield futures[future], _rows(future.result, unit)
        yield jobs, f"{jobs} local processes", run_all


@contextlib.contextmanager
def _dask(scheduler: Any) -> Iterator[Any]:
    """A client of the cluster at ``scheduler`` (closed after), or the client given."""
    try:
        from dask.distributed import Client
    except ImportError:
        raise ImportError("scheduler needs Dask's distributed scheduler: "
                          "python -m pip install 'scratchnet[distributed]'") from None
    if isinstance(scheduler, Client):
        yield scheduler
        return
    if not isinstance(scheduler, str):
        raise TypeError(f"scheduler must be an address like 'tcp://host:8786' or a "
                        f"dask.distributed.Client; got {type(scheduler).__name__}")
    with Client(scheduler, timeout="20s") as client:
        yield client


def _on_dask(client: Any, units: list[Unit]) -> Iterator[tuple]:
    """Each unit as one Dask task (``pure=False``: equal units still both run)."""
    from dask.distributed import as_completed as completed

    futures = client.map(run_unit, units, pure=False)
    index = {future.key: i for i, future in enumerate(futures)}
    for future in completed(futures):
        yield index[future.key], _rows(future.result, units[index[future.key]])


def _rows(result: Callable[[], list], unit: Unit) -> list[dict[str, Any]]:
    """A unit's rows, or (a worker died, the unit could not be sent) every one of
    its cells as failed, with the error."""
    try:
        return result()
    except Exception as exc:
        return failed_rows(unit, unit.members, exc)
