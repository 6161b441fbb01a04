r"""Running a sweep: its units of work, here or on a Dask cluster, into one table.

:func:`sweep` lays out a :class:`~scratchnet.experiments.Grid` of the
two-Gaussian family, splits it into units (networks of one shape trained
together on the ensemble engine) and runs them:

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

The result, a :class:`Sweep`, holds the tidy table (one row per point, loss,
width, seed and budget, the columns of
:data:`~scratchnet.experiments.SWEEP_COLUMNS`), its summary over seeds
(median, min and max of each metric of :data:`SWEEP_METRICS`) and writes both
as CSV.  :mod:`scratchnet.experiments.phase` draws them.
"""

from __future__ import annotations

import contextlib
import csv
import sys
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Union

import numpy as np

from .grids import STUDY_TASKS, SWEEP_COLUMNS, Grid, Unit, run_unit
from .pool import cpu_count, single_threaded_blas, worker_context

__all__ = ["DEFAULT_SWEEP", "SUMMARY_COLUMNS", "SWEEP_METRICS", "Sweep", "sweep"]

#: The default sweep (``python -m scratchnet sweep``): an 8 x 8 grid that holds
#: the study's three tasks, 3 seeds, two budgets, the cross-entropy.
DEFAULT_SWEEP = {"mu2": "0.5:4:8", "sigma1": "1:2.75:8", "prior1": (0.5,),
                 "recipes": ("textbook",), "losses": ("cross_entropy",),
                 "steps": (1000, 10_000), "seeds": 3}
#: The metrics summarised over seeds (median, min and max).
SWEEP_METRICS = ("max_abs_error", "expected_kl", "accuracy", "loss_gap")
_KEYS = ("recipe", "loss", "width", "prior1", "sigma1", "mu2")
_EXPLAINED = ("bayes_accuracy", "crossings", "tail_crossing", "tail_mass")
#: The columns of the summary over seeds.
SUMMARY_COLUMNS = (*_KEYS, "step", "seeds",
                   *[f"{m}{k}" for m in SWEEP_METRICS for k in ("", "_min", "_max")],
                   *_EXPLAINED)


@dataclass
class Sweep:
    r"""A finished sweep: its grid, its tidy table and how it ran.

    Parameters
    ----------
    grid : Grid
    rows : list of dict
        Keys :data:`~scratchnet.experiments.SWEEP_COLUMNS`, one per point,
        recipe, loss, width, seed and budget, in the grid's order.
    elapsed : float
        Seconds, start to end.
    where : str
        ``"in-process"``, ``"N local processes"`` or the Dask scheduler.

    Examples
    --------
    >>> import scratchnet as sn
    >>> result = sn.experiments.sweep("1,3", "1", steps=(20, 40), seeds=2, jobs=1)
    >>> len(result.rows), len(result.summary())   # 2 points x 2 seeds x 2 budgets
    (8, 4)
    """

    grid: Grid
    rows: list = field(default_factory=list)
    elapsed: float = 0.0
    where: str = "in-process"

    def summary(self) -> list[dict[str, Any]]:
        """The table over seeds: median, min and max of each metric.

        Returns
        -------
        list of dict
            Keys :data:`SUMMARY_COLUMNS`: one row per point, recipe, loss,
            width and budget.

        Examples
        --------
        >>> import scratchnet as sn
        >>> result = sn.experiments.sweep("3", "2", steps=(30,), seeds=3, jobs=1)
        >>> row = result.summary()[0]
        >>> row["seeds"], row["max_abs_error_min"] <= row["max_abs_error"]
        (3, True)
        """
        groups: dict[tuple, list] = {}
        for row in self.rows:
            groups.setdefault((*(row[k] for k in _KEYS), row["step"]), []).append(row)
        out = []
        for key, group in groups.items():
            row = {**dict(zip((*_KEYS, "step"), key)), "seeds": len(group)}
            for metric in SWEEP_METRICS:
                values = np.array([r[metric] for r in group])
                row.update({metric: float(np.median(values)),
                            f"{metric}_min": float(values.min()),
                            f"{metric}_max": float(values.max())})
            row.update({k: group[0][k] for k in _EXPLAINED})
            out.append(row)
        return out

    def matrix(self, metric: str = "max_abs_error", *, step: Optional[int] = None,
               recipe: Optional[str] = None, loss: Optional[str] = None,
               width: Optional[int] = None, prior1: Optional[float] = None
               ) -> np.ndarray:
        r"""The median over seeds of ``metric`` on the grid, sigma1 by mu2.

        Parameters
        ----------
        metric : str, default "max_abs_error"
            One of :data:`SWEEP_METRICS`, or ``"tail_mass"``.
        step, recipe, loss, width, prior1 : optional
            Which slice (default: the last budget and the first value of
            every other axis).

        Returns
        -------
        ndarray, shape (len(grid.sigma1), len(grid.mu2))
            Row ``i`` is ``sigma1[i]``, column ``j`` is ``mu2[j]``.

        Examples
        --------
        >>> import scratchnet as sn
        >>> result = sn.experiments.sweep("1,2,3", "1,2", steps=(20,), seeds=1, jobs=1)
        >>> result.matrix().shape
        (2, 3)
        """
        chosen = self._slice(step, recipe, loss, width, prior1)
        grid = self.grid
        values = np.full((len(grid.sigma1), len(grid.mu2)), np.nan)
        for row in self.summary():
            if all(row[k] == v for k, v in chosen.items()):
                values[grid.sigma1.index(row["sigma1"]), grid.mu2.index(row["mu2"])] = (
                    row[metric])
        return values

    def _slice(self, step: Any, recipe: Any, loss: Any, width: Any, prior1: Any
               ) -> dict[str, Any]:
        """One value per axis but mu2 and sigma1, checked against the grid."""
        grid = self.grid
        chosen = {"step": grid.steps[-1] if step is None else step,
                  "recipe": recipe or grid.recipes[0], "loss": loss or grid.losses[0],
                  "width": width or grid.widths[0],
                  "prior1": grid.prior1[0] if prior1 is None else prior1}
        for name, axis in (("step", grid.steps), ("recipe", grid.recipes),
                           ("loss", grid.losses), ("width", grid.widths),
                           ("prior1", grid.prior1)):
            if chosen[name] not in axis:
                raise ValueError(f"{name} must be one of the sweep's {axis}; got "
                                 f"{chosen[name]!r}")
        return chosen

    def overview(self, threshold: float = 0.05) -> str:
        """A Markdown table: per slice and budget, the grid's median error, the
        share of points below ``threshold``, and the study's three tasks.

        Parameters
        ----------
        threshold : float, default 0.05
            A point counts as having learned the posterior where its median
            ``max_abs_error`` is below this.

        Returns
        -------
        str
            One line per recipe, loss, width and budget (the first prior).

        Examples
        --------
        >>> import scratchnet as sn
        >>> result = sn.experiments.sweep("1,3", "1,2", steps=(20,), seeds=1, jobs=1)
        >>> print(result.overview().splitlines()[0])  # doctest: +NORMALIZE_WHITESPACE
        | recipe | loss | width | steps | grid median max abs(q-P) | points below
        0.05 | separated | unequal-variance | sparse-tail |
        """
        grid, summary = self.grid, self.summary()
        study = {name: (*point, 0.5) for name, point in STUDY_TASKS.items()
                 if point[0] in grid.mu2 and point[1] in grid.sigma1
                 and 0.5 in grid.prior1}
        lines = ["| recipe | loss | width | steps | grid median max abs(q-P) | "
                 f"points below {threshold:g} | " + " | ".join(study) + " |",
                 "|---|---|--:|--:|--:|--:|" + "--:|" * len(study)]
        for key in [(r, loss, w, s) for r in grid.recipes for loss in grid.losses
                    for w in grid.widths for s in grid.steps]:
            rows = {(r["mu2"], r["sigma1"], r["prior1"]): r["max_abs_error"]
                    for r in summary if (r["recipe"], r["loss"], r["width"],
                                         r["step"], r["prior1"])
                    == (*key, grid.prior1[0])}
            errors = np.array(list(rows.values()))
            cells = [f"{rows[point]:.3f}" for point in study.values()]
            lines.append(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]:,} | "
                         f"{np.median(errors):.3f} | {np.mean(errors < threshold):.0%}"
                         " | " + " | ".join(cells) + " |")
        return "\n".join(lines)

    def write(self, out: Union[str, Path]) -> list[Path]:
        """Write ``sweep.csv`` (every row) and ``sweep_summary.csv`` (over seeds).

        Parameters
        ----------
        out : str or Path
            A folder (created if needed).

        Returns
        -------
        list of Path
            The two files, full precision.

        Examples
        --------
        >>> import scratchnet as sn, tempfile
        >>> result = sn.experiments.sweep("3", "2", steps=(20,), seeds=1, jobs=1)
        >>> [p.name for p in result.write(tempfile.mkdtemp())]
        ['sweep.csv', 'sweep_summary.csv']
        """
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        paths = [out / "sweep.csv", out / "sweep_summary.csv"]
        for path, rows, columns in ((paths[0], self.rows, SWEEP_COLUMNS),
                                    (paths[1], self.summary(), SUMMARY_COLUMNS)):
            with open(path, "w", newline="") as f:
                writer = csv.DictWriter(f, fieldnames=columns)
                writer.writeheader()
                writer.writerows(rows)
        return paths


    @classmethod
    def read(cls, path: Union[str, Path]) -> Sweep:
        """A sweep back from its ``sweep.csv`` (to draw it again, elsewhere).

        Parameters
        ----------
        path : str or Path
            ``sweep.csv``, or the folder that holds it.

        Returns
        -------
        Sweep
            The grid is read off the rows (axes in order of appearance);
            ``elapsed`` is 0 and ``where`` the file.

        Examples
        --------
        >>> import scratchnet as sn, tempfile
        >>> result = sn.experiments.sweep("1,3", "2", steps=(20,), seeds=1, jobs=1)
        >>> folder = tempfile.mkdtemp()
        >>> _ = result.write(folder)
        >>> sn.experiments.Sweep.read(folder).rows == result.rows
        True
        """
        path = Path(path)
        path = path / "sweep.csv" if path.is_dir() else path
        kinds = {"recipe": str, "loss": str, "crossings": str, "width": int,
                 "seed": int, "step": int}
        with open(path, newline="") as f:
            rows = [{k: kinds.get(k, float)(v) for k, v in row.items()}
                    for row in csv.DictReader(f)]
        axes = {name: tuple(dict.fromkeys(r[key] for r in rows)) for name, key in (
            ("mu2", "mu2"), ("sigma1", "sigma1"), ("prior1", "prior1"),
            ("recipes", "recipe"), ("losses", "loss"), ("widths", "width"),
            ("steps", "step"), ("seeds", "seed"))}
        return cls(Grid(**axes), rows, 0.0, str(path))


def _names(value: Union[str, Sequence[str]]) -> tuple:
    """``"a,b"`` or a sequence of names, as a tuple."""
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip())
    return tuple(value)


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
        Report each finished unit (runs done, runs per second, time left) on
        stderr, or to this callable.

    Returns
    -------
    Sweep

    Examples
    --------
    >>> import scratchnet as sn
    >>> result = sn.experiments.sweep("1,3", "1,2", steps="50,100", seeds=2, jobs=1)
    >>> result.grid.runs, len(result.rows)   # 4 points x 2 seeds, 2 budgets each
    (8, 16)
    >>> sorted(result.rows[0])[:4]
    ['accuracy', 'bayes_accuracy', 'crossings', 'expected_kl']
    """
    if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
        if seeds < 1:
            raise ValueError(f"seeds must be a positive count or a sequence; got "
                             f"{seeds}")
        if (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))
                or seed < 0):
            raise ValueError(f"seed must be a non-negative integer; got {seed!r}")
        seeds = tuple(range(seed, seed + seeds))
    elif isinstance(seeds, (str, bytes)) or not isinstance(seeds, Sequence):
        raise TypeError(f"seeds must be a count or a sequence of seeds; got {seeds!r}")
    grid = Grid(mu2, sigma1, prior1, _names(recipes), _names(losses),
                widths if isinstance(widths, str) else tuple(np.atleast_1d(widths)),
                steps, tuple(seeds))
    say = progress if callable(progress) else _stderr if progress else None
    start = time.perf_counter()
    with _executor(jobs, scheduler) as (workers, where, run_all):
        units = grid.units(parts or 4 * workers)
        results: list = [None] * len(units)
        tracker = _Progress(grid.runs, start, say)
        for index, rows in run_all(units):
            results[index] = rows
            tracker.update(len(units[index].members))
    rows = sorted((row for rows in results for row in rows), key=_order(grid))
    return Sweep(grid, rows, time.perf_counter() - start, where)


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

    def update(self, runs: int) -> None:
        self.done += runs
        if self.say is None:
            return
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
    if jobs is None:
        jobs = cpu_count()
    if isinstance(jobs, bool) or not isinstance(jobs, (int, np.integer)) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer; got {jobs!r}")
    if jobs == 1:
        yield 1, "in-process", lambda units: ((i, run_unit(u))
                                              for i, u in enumerate(units))
        return
    with single_threaded_blas(), ProcessPoolExecutor(
            jobs, mp_context=worker_context()) as pool:
        def run_all(units: list[Unit]) -> Iterator[tuple]:
            futures = {pool.submit(run_unit, unit): i for i, unit in enumerate(units)}
            for future in as_completed(futures):
                yield futures[future], future.result()
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
        yield index[future.key], future.result()
