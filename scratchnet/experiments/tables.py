r"""A sweep's results: the tidy table, its summary over seeds, CSV in and out.

A :class:`Sweep` holds the rows of a finished (or interrupted) sweep, one
per grid point, recipe, loss, width, seed and budget (the columns of
:data:`~scratchnet.experiments.SWEEP_COLUMNS`), summarises them over seeds
(median, min and max of each metric of :data:`SWEEP_METRICS`; with one seed
the value itself) and writes both as CSV.  A cell that failed keeps its
row: its metrics are NaN and its ``error`` column says why; the summary
counts it in ``failed``.  :class:`SweepWriter` appends the rows of each
finished unit to ``sweep.csv`` as they arrive, so a sweep that stops
half-way keeps what it finished.
"""

from __future__ import annotations

import csv
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np

from ._checks import choice, finite
from .grids import STUDY_TASKS, SWEEP_COLUMNS, Grid

__all__ = ["SUMMARY_COLUMNS", "SWEEP_METRICS", "Sweep", "SweepWriter"]

#: The metrics summarised over seeds (median, min and max).
SWEEP_METRICS = ("max_abs_error", "expected_kl", "accuracy", "loss_gap")
_KEYS = ("recipe", "loss", "width", "prior1", "sigma1", "mu2")
_EXPLAINED = ("bayes_accuracy", "crossings", "tail_crossing", "tail_mass")
#: The columns of the summary over seeds: ``seeds`` counts the seeds that
#: finished, ``failed`` those that did not (``error``: the first one's error).
SUMMARY_COLUMNS = (*_KEYS, "step", "seeds", "failed",
                   *[f"{m}{k}" for m in SWEEP_METRICS for k in ("", "_min", "_max")],
                   *_EXPLAINED, "error")


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
            done = [r for r in group if not r.get("error")]
            errors = [r["error"] for r in group if r.get("error")]
            row = {**dict(zip((*_KEYS, "step"), key)), "seeds": len(done),
                   "failed": len(errors)}
            for metric in SWEEP_METRICS:
                values = np.array([r[metric] for r in done], dtype=float)
                row.update(_spread(metric, values))
            row.update({k: group[0][k] for k in _EXPLAINED})
            row["error"] = errors[0] if errors else ""
            out.append(row)
        return out

    @property
    def failed(self) -> list[dict[str, Any]]:
        """The cells that failed, one row each (the last budget's), with ``error``.

        Examples
        --------
        >>> import scratchnet as sn
        >>> sn.experiments.sweep("3", "2", steps=(20,), seeds=1, jobs=1).failed
        []
        """
        last = self.grid.steps[-1]
        return [row for row in self.rows if row.get("error") and row["step"] == last]

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
        choice(metric, "metric", (*SWEEP_METRICS, "tail_mass"))
        chosen = self.choose_slice(step, recipe, loss, width, prior1)
        grid = self.grid
        values = np.full((len(grid.sigma1), len(grid.mu2)), np.nan)
        for row in self.summary():
            if all(row[k] == v for k, v in chosen.items()):
                values[grid.sigma1.index(row["sigma1"]), grid.mu2.index(row["mu2"])] = (
                    row[metric])
        return values

    def choose_slice(self, step: Any, recipe: Any, loss: Any, width: Any, prior1: Any
               ) -> dict[str, Any]:
        """The slice of the grid to show: one value per axis but mu2 and sigma1.

        Parameters
        ----------
        step, recipe, loss, width, prior1 : optional
            A value of each axis; None (or empty) picks the default: the last
            budget and the first value of every other axis.

        Returns
        -------
        dict
            Keys ``step``, ``recipe``, ``loss``, ``width`` and ``prior1``, each
            checked against the grid: :meth:`matrix` and the phase diagrams
            (``scratchnet.experiments.phase``) select their rows by it.

        Examples
        --------
        >>> import scratchnet as sn
        >>> result = sn.experiments.sweep("1,2,3", "1,2", steps=(20,), seeds=1, jobs=1)
        >>> result.choose_slice(None, None, None, None, None)["step"]
        20
        """
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
            One line per recipe, loss, width and budget (the first prior),
            then one line per failed cell, with its error.  The share of
            points below ``threshold`` is over the points that finished.

        Examples
        --------
        >>> import scratchnet as sn
        >>> result = sn.experiments.sweep("1,3", "1,2", steps=(20,), seeds=1, jobs=1)
        >>> print(result.overview().splitlines()[0])  # doctest: +NORMALIZE_WHITESPACE
        | recipe | loss | width | steps | grid median max abs(q-P) | points below
        0.05 | separated | unequal-variance | sparse-tail |
        """
        threshold = finite(threshold, "threshold", low=0.0)
        grid, summary = self.grid, self.summary()
        study = {name: (*point, 0.5) for name, point in STUDY_TASKS.items()
                 if point[0] in grid.mu2 and point[1] in grid.sigma1
                 and 0.5 in grid.prior1}
        lines = ["| recipe | loss | width | steps | grid median max abs(q-P) | "
                 f"points below {threshold:g} |" + "".join(f" {t} |" for t in study),
                 "|---|---|--:|--:|--:|--:|" + "--:|" * len(study)]
        for key in [(r, loss, w, s) for r in grid.recipes for loss in grid.losses
                    for w in grid.widths for s in grid.steps]:
            rows = {(r["mu2"], r["sigma1"], r["prior1"]): r["max_abs_error"]
                    for r in summary if (r["recipe"], r["loss"], r["width"],
                                         r["step"], r["prior1"])
                    == (*key, grid.prior1[0])}
            errors = np.array(list(rows.values()))
            finished = errors[~np.isnan(errors)]
            median = f"{np.median(finished):.3f}" if finished.size else "failed"
            below = np.mean(finished < threshold) if finished.size else 0.0
            cells = "".join(f" {_cell(rows[point])} |" for point in study.values())
            lines.append(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]:,} | "
                         f"{median} | {below:.0%} |{cells}")
        failed = [r for r in summary if r["failed"]]
        if failed:
            lines.append("")
            lines += [f"failed: {_where(r)}: {r['failed']} of "
                      f"{r['failed'] + r['seeds']} seeds ({r['error']})"
                      for r in failed if r["step"] == grid.steps[-1]]
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
        out = _folder(out, "out")
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
        path = _folder(path, "path")
        path = path / "sweep.csv" if path.is_dir() else path
        kinds = {"recipe": str, "loss": str, "crossings": str, "width": int,
                 "seed": int, "step": int, "error": str}
        with open(path, newline="") as f:
            rows = [{k: kinds.get(k, float)(v) for k, v in row.items()}
                    for row in csv.DictReader(f)]
        axes = {name: tuple(dict.fromkeys(r[key] for r in rows)) for name, key in (
            ("mu2", "mu2"), ("sigma1", "sigma1"), ("prior1", "prior1"),
            ("recipes", "recipe"), ("losses", "loss"), ("widths", "width"),
            ("steps", "step"), ("seeds", "seed"))}
        return cls(Grid(**axes), rows, 0.0, str(path))


def _folder(path: Any, name: str) -> Path:
    """A path (str or Path), else TypeError naming the argument."""
    if not isinstance(path, (str, os.PathLike)) or not str(path).strip():
        raise TypeError(f"{name} must be a folder or file path (str or Path); got "
                        f"{path!r:.40}")
    return Path(path)


def _spread(metric: str, values: np.ndarray) -> dict[str, float]:
    """Median, min and max of a metric over the seeds that finished (NaN if none)."""
    if not values.size:
        return {metric: math.nan, f"{metric}_min": math.nan, f"{metric}_max": math.nan}
    return {metric: float(np.median(values)), f"{metric}_min": float(values.min()),
            f"{metric}_max": float(values.max())}


def _cell(value: float) -> str:
    """A table cell: the error to 3 decimals, or "failed" where no seed finished."""
    return "failed" if math.isnan(value) else f"{value:.3f}"


def _where(row: dict[str, Any]) -> str:
    """A cell of the grid in words, e.g. ``mu2=0, sigma1=1, textbook, hinge, w64``."""
    return (f"mu2={row['mu2']:g}, sigma1={row['sigma1']:g}, prior1={row['prior1']:g}, "
            f"{row['recipe']}, {row['loss']}, width {row['width']}")


class SweepWriter:
    """Appends the rows of each finished unit to ``sweep.csv``, flushed at once.

    Parameters
    ----------
    out : str or Path
        The folder (created if needed).

    Examples
    --------
    >>> import scratchnet as sn, tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> with sn.experiments.SweepWriter(folder) as writer:
    ...     writer.add([])
    >>> (folder / "sweep.csv").read_text().startswith("mu2,sigma1,prior1")
    True
    """

    def __init__(self, out: Union[str, Path]) -> None:
        self.path = _folder(out, "out") / "sweep.csv"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(self.path, "w", newline="")
        self._writer = csv.DictWriter(self._file, fieldnames=SWEEP_COLUMNS)
        self._writer.writeheader()
        self._file.flush()

    def add(self, rows: list[dict[str, Any]]) -> None:
        """Write ``rows`` (keys :data:`SWEEP_COLUMNS`) and flush them to disk.

        Parameters
        ----------
        rows : list of dict

        Returns
        -------
        None

        Examples
        --------
        >>> import scratchnet as sn, tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> writer = sn.experiments.SweepWriter(folder)
        >>> row = dict.fromkeys(sn.experiments.SWEEP_COLUMNS, 0)
        >>> writer.add([row])   # on disk at once, before close
        >>> len((folder / "sweep.csv").read_text().splitlines())
        2
        >>> writer.close()
        """
        self._writer.writerows(rows)
        self._file.flush()

    def close(self) -> None:
        """Close the file.

        Returns
        -------
        None

        Examples
        --------
        >>> import scratchnet as sn, tempfile
        >>> writer = sn.experiments.SweepWriter(tempfile.mkdtemp())
        >>> writer.close()
        >>> writer.path.name
        'sweep.csv'
        """
        self._file.close()

    def __enter__(self) -> SweepWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
