r"""Reports of finished runs: tables and figures.

:func:`summarize` collects the metric rows of runs (all snapshots, or a
few), :func:`format_table` and :func:`write_table` print and save them,
:func:`posterior_figure` and :func:`convergence_figure` draw them with
:mod:`scratchnet.plotting`, beside the original study's reported figures
(:data:`ORIGINAL_REPORTED`, from Yudi Xie, "How do we interpret the outputs
of a neural network trained on classification?", 2024, cited in the figures as
:data:`~scratchnet.experiments.recipes.ORIGINAL_STUDY`), and
:func:`run_and_plot` trains and draws in one call.  Every function checks
its arguments before NumPy or matplotlib sees them.
"""

from __future__ import annotations

import csv
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Union

import numpy as np

from .recipes import ORIGINAL_STUDY
from .runs import COLUMNS, ExperimentResult, run

if TYPE_CHECKING:  # matplotlib is imported when a figure is drawn: the training
    from matplotlib.figure import Figure  # workers of the command line start without it

__all__ = [
    "LOSS_GAP_NOTE",
    "METRICS",
    "ORIGINAL_REPORTED",
    "ORIGINAL_REPORTED_STEP",
    "convergence_figure",
    "format_table",
    "posterior_figure",
    "run_and_plot",
    "save_posterior_figure",
    "summarize",
    "write_table",
]

#: The original study's max error on [-4, 7] at 10,000 batches, (low, high) by task.
ORIGINAL_REPORTED = {"separated": (0.05, 0.05), "unequal-variance": (0.04, 0.08),
                     "sparse-tail": (0.17, 0.25)}
#: The step of :data:`ORIGINAL_REPORTED`.
ORIGINAL_REPORTED_STEP = 10_000

_FIGURE_STEPS = (100, 1000, 10_000)
#: The footnote of a printed table: what a negative ``loss - Bayes loss`` means.
LOSS_GAP_NOTE = (
    "loss - Bayes loss: the mean mini-batch loss of the last 500 steps minus the Bayes "
    "loss H(C|X). A negative value is a finite-sample estimate below the population "
    "floor (sampling noise of the estimate, and on a fixed training sample the fit to "
    "that sample), not a model better than the Bayes posterior.")
_CITATION = "Original study: " + ORIGINAL_STUDY


def _results(results: Any, name: str) -> list[ExperimentResult]:
    """One or more :class:`ExperimentResult`, as a non-empty list."""
    if isinstance(results, ExperimentResult):
        return [results]
    if isinstance(results, (str, bytes, Mapping)) or not isinstance(results, Iterable):
        raise TypeError(f"{name} must be an ExperimentResult or a sequence of them; "
                        f"got {type(results).__name__}")
    results = list(results)
    for i, r in enumerate(results):
        if not isinstance(r, ExperimentResult):
            raise TypeError(f"{name} must hold ExperimentResult objects; got "
                            f"{type(r).__name__} at index {i}")
    if not results:
        raise ValueError(f"{name} must hold at least one ExperimentResult; got none")
    return results


def _table_rows(rows: Any) -> list[dict[str, Any]]:
    """Rows of :data:`COLUMNS` (or summarised over seeds), checked."""
    if isinstance(rows, (str, bytes, Mapping)) or not isinstance(rows, Iterable):
        raise TypeError(f"rows must be a sequence of dicts (from summarize); got "
                        f"{type(rows).__name__}")
    rows = list(rows)
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise TypeError(f"rows must hold dicts; got {type(row).__name__} at "
                            f"index {i}")
        need = [("seeds" if c == "seed" and "seeds" in row else c) for c in COLUMNS]
        missing = [c for c in need if c not in row]
        if missing:
            raise ValueError(f"rows[{i}] must have the keys {', '.join(need)}; "
                             f"missing {', '.join(missing)}")
    return rows


def _path(path: Any, name: str, *, figure: bool = False) -> Path:
    """A file path to write (not a directory); for a figure, a known format."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{name} must be a str or Path; got {type(path).__name__}")
    path = Path(path)
    if not str(path).strip() or path.is_dir():
        raise ValueError(f"{name} must be a file path; got {str(path)!r}, a directory")
    if not figure:
        return path
    from matplotlib.figure import Figure

    formats = Figure().canvas.get_supported_filetypes()
    if path.suffix.lstrip(".").lower() not in formats:
        raise ValueError(f"{name} must end in an image format ({', '.join(formats)}); "
                         f"got {path.name!r}")
    return path


#: The metrics summarised over seeds (median, min, max).
METRICS = ("expected_kl", "max_abs_error", "loss_gap", "accuracy")


def summarize(
    results: Union[ExperimentResult, Iterable[ExperimentResult]],
    steps: Optional[Sequence[int]] = None,
    *,
    final: bool = True,
    over_seeds: bool = False,
) -> list[dict[str, Any]]:
    """The metric rows of one or more runs, optionally at some steps only.

    Parameters
    ----------
    results : ExperimentResult or iterable of them
    steps : sequence of int, optional
        Keep only these steps (default: every snapshot).
    final : bool, default True
        With ``steps``, also keep each run's last step.
    over_seeds : bool, default False
        One row per task, recipe and step instead of one per seed: each
        metric of :data:`METRICS` is the median over the seeds, with its
        ``<metric>_min`` and ``<metric>_max``, and ``seeds`` counts them.

    Returns
    -------
    list of dict
        Keys :data:`COLUMNS` (module docstring), runs in the given order;
        with ``over_seeds``, ``seeds`` in place of ``seed`` and the spreads.

    Examples
    --------
    >>> import scratchnet as sn
    >>> result = sn.experiments.run("separated", "textbook", steps=200)
    >>> [row["step"] for row in sn.experiments.summarize(result, steps=[50])]
    [50, 200]
    >>> study = sn.experiments.run("separated", "textbook", steps=200, seeds=3)
    >>> row = sn.experiments.summarize(study, over_seeds=True)[-1]
    >>> row["seeds"], row["max_abs_error_min"] <= row["max_abs_error"]
    (3, True)
    """
    results = _results(results, "results")
    if steps is not None and (isinstance(steps, (str, bytes, Mapping))
                              or not isinstance(steps, Iterable) or not all(
            isinstance(s, (int, np.integer)) for s in steps)):
        raise TypeError(f"steps must be a sequence of step counts; got {steps!r}")
    for flag, value in (("final", final), ("over_seeds", over_seeds)):
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{flag} must be True or False; got {value!r}")
    rows = []
    for result in results:
        last = result.rows[-1]["step"] if result.rows else None
        rows += [row for row in result.rows if steps is None or row["step"] in steps
                 or (final and row["step"] == last)]
    return _over_seeds(rows) if over_seeds else rows


def _over_seeds(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows grouped by (task, recipe, step): median, min and max of each metric."""
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["task"], row["recipe"], row["step"]), []).append(row)
    out = []
    for (task, recipe, step), group in groups.items():
        row = {"task": task, "recipe": recipe, "seeds": len(group), "step": step,
               "bayes_accuracy": group[0]["bayes_accuracy"]}
        for metric in METRICS:
            values = np.array([r[metric] for r in group])
            row.update({metric: float(np.median(values)),
                        f"{metric}_min": float(values.min()),
                        f"{metric}_max": float(values.max())})
        out.append(row)
    return out


_HEADERS = {"task": "task", "recipe": "recipe", "seed": "seed", "step": "step",
            "expected_kl": "E KL (nats)", "max_abs_error": "max abs(q-P) on [-4,7]",
            "loss_gap": "loss - Bayes loss", "accuracy": "accuracy",
            "bayes_accuracy": "Bayes accuracy"}
_FORMATS = {"expected_kl": "{:.2e}", "max_abs_error": "{:.3f}",
            "loss_gap": "{:+.4f}", "accuracy": "{:.2%}", "bayes_accuracy": "{:.2%}"}


def format_table(rows: Iterable[dict[str, Any]]) -> str:
    """The rows as a Markdown table, numbers rounded for reading.

    Parameters
    ----------
    rows : iterable of dict
        With keys :data:`COLUMNS`, or summarised over seeds
        (``summarize(..., over_seeds=True)``): then each metric over several
        seeds reads ``median [min, max]`` (over one seed, the value itself).

    Returns
    -------
    str
        A header, a rule and one line per row, without a final newline.

    Examples
    --------
    >>> import scratchnet as sn
    >>> row = {"task": "t", "recipe": "r", "seed": 0, "step": 10,
    ...        "expected_kl": 0.00123, "max_abs_error": 0.25, "loss_gap": 0.01,
    ...        "accuracy": 0.9, "bayes_accuracy": 0.9332}
    >>> print(sn.experiments.format_table([row]).splitlines()[-1])
    | t | r | 0 | 10 | 1.23e-03 | 0.250 | +0.0100 | 90.00% | 93.32% |
    """
    rows = _table_rows(rows)
    summarised = bool(rows) and "seeds" in rows[0]
    columns = [("seeds" if c == "seed" and summarised else c) for c in COLUMNS]
    # "median [min, max]" only over several seeds; one seed's value is itself
    spread = summarised and any(row["seeds"] > 1 for row in rows)

    def cell(row: dict[str, Any], c: str) -> str:
        text = _FORMATS.get(c, "{}").format(row[c])
        if spread and c in METRICS and row["seeds"] > 1:
            low, high = (_FORMATS[c].format(row[f"{c}_{k}"]) for k in ("min", "max"))
            text += f" [{low}, {high}]"
        return text

    header = [_HEADERS.get(c, c) + (" median [min, max]" if spread and c in METRICS
                                    else "") for c in columns]
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" if c in ("task", "recipe") else "--:"
                            for c in columns) + "|"]
    lines += ["| " + " | ".join(cell(row, c) for c in columns) + " |" for row in rows]
    return "\n".join(lines)


def write_table(rows: Sequence[dict[str, Any]], path_csv: Union[str, Path],
                path_md: Union[str, Path]) -> None:
    """Write the rows as CSV (full precision) and as a Markdown table.

    Parameters
    ----------
    rows : sequence of dict
        With keys :data:`COLUMNS` (others are ignored).
    path_csv, path_md : str or Path
        The files to (over)write.

    Returns
    -------
    None

    Examples
    --------
    >>> import scratchnet as sn, tempfile, pathlib
    >>> rows = sn.experiments.run("separated", "textbook", steps=20).rows
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> sn.experiments.write_table(rows, folder / "t.csv", folder / "t.md")
    >>> (folder / "t.csv").read_text().splitlines()[0]
    'task,recipe,seed,step,expected_kl,max_abs_error,loss_gap,accuracy,bayes_accuracy'
    """
    rows = _table_rows(rows)
    path_csv, path_md = _path(path_csv, "path_csv"), _path(path_md, "path_md")
    with open(path_csv, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    Path(path_md).write_text(format_table(rows) + "\n")


def posterior_figure(result: Union[ExperimentResult, Sequence[ExperimentResult]]
                     ) -> Figure:
    r"""The posterior (solid) and the network after 100, 1000, 10000 and all steps.

    Parameters
    ----------
    result : ExperimentResult, or a sequence of them (seeds of one task and recipe)
        With several seeds, the dashed lines are the median of
        :math:`q(c \mid x)` over seeds and the shaded bands its range.

    Returns
    -------
    matplotlib.figure.Figure
        One axes drawn by :func:`scratchnet.plotting.plot_posterior_fit`, with
        the class densities shaded.  Not managed by pyplot: save it with
        ``fig.savefig``, or show it as the last expression of a notebook cell.

    Examples
    --------
    >>> import scratchnet as sn
    >>> fig = sn.experiments.posterior_figure(
    ...     sn.experiments.run("separated", "textbook", steps=100))
    >>> len(fig.axes[0].get_lines())   # 2 posteriors, 1 snapshot x 2 classes, x = 1.5
    5
    """
    results = _results(result, "result")
    first = results[0]
    if any((r.task, r.recipe) != (first.task, first.recipe) for r in results):
        raise ValueError("result must be the seeds of one task and recipe; got "
                         f"{sorted({(r.task, r.recipe) for r in results})}")
    task = first.generative_model
    steps = list(first.history.snapshot_steps)
    keep = [i for i, s in enumerate(steps) if s in _FIGURE_STEPS or i == len(steps) - 1]
    probs = np.stack([r.history.snapshot_probs[keep] for r in results])  # (S, k, n, M)
    band = None if len(results) == 1 else np.stack(
        [probs.min(axis=0), probs.max(axis=0)], axis=1)
    from matplotlib.figure import Figure

    from ..plotting import plot_posterior_fit

    fig = Figure(figsize=(10.5, 4.6))  # the legend stands on the right, outside
    fig.subplots_adjust(left=0.07, right=0.63, bottom=0.11, top=0.93)
    ax = plot_posterior_fit(task, first.eval_x, np.median(probs, axis=0), band=band,
                            labels=[f"{steps[i]:,} steps" for i in keep],
                            ax=fig.subplots())
    classes = " vs ".join(f"N({m:g}, {s:g}²)" for m, s in zip(task.means, task.scales))
    seeds = (f"seed {first.seed}" if len(results) == 1 else
             f"median and range over {len(results)} seeds")
    ax.set_title(f"{first.task}: {classes}; recipe {first.recipe}, {seeds}",
                 fontsize="medium")
    if first.recipe == "original":  # the study's own setting: cite it
        fig.subplots_adjust(bottom=0.17)
        title, link = ORIGINAL_STUDY.rsplit(", ", 1)
        fig.text(0.01, 0.01, f"recipe original: the setting of {title},\n{link}",
                 fontsize="x-small", color="0.3")
    return fig


def convergence_figure(results: Iterable[ExperimentResult]) -> Figure:
    r"""Expected KL and the max error on [-4, 7] against steps, over seeds.

    Parameters
    ----------
    results : iterable of ExperimentResult

    Returns
    -------
    matplotlib.figure.Figure
        Two axes drawn by :func:`scratchnet.plotting.plot_convergence`; the
        right one marks :data:`ORIGINAL_REPORTED` at 10,000 steps.

    Examples
    --------
    >>> import scratchnet as sn
    >>> fig = sn.experiments.convergence_figure(
    ...     [sn.experiments.run("separated", "textbook", steps=100)])
    >>> [ax.get_yscale() for ax in fig.axes]
    ['log', 'log']
    """
    results = _results(results, "results")
    rows = summarize(results, over_seeds=True)
    from matplotlib.figure import Figure

    from ..plotting import plot_convergence

    fig = Figure(figsize=(13.5, 5.6))  # one legend under both axes
    fig.subplots_adjust(left=0.06, right=0.98, bottom=0.27, top=0.91, wspace=0.18)
    ax_kl, ax_max = fig.subplots(1, 2)
    plot_convergence(rows, "expected_kl", ax=ax_kl)
    plot_convergence(rows, "max_abs_error", ax=ax_max, reference=ORIGINAL_REPORTED,
                     reference_step=ORIGINAL_REPORTED_STEP,
                     reference_label="original study (Xie, 2024), right panel")
    legend = ax_max.get_legend()
    fig.legend(legend.legend_handles, [t.get_text() for t in legend.get_texts()],
               loc="lower center", bbox_to_anchor=(0.5, 0.06), ncol=6,
               fontsize="small", frameon=False)
    ax_kl.get_legend().remove()
    legend.remove()
    seeds = {(r.task, r.recipe): set() for r in results}
    for r in results:
        seeds[(r.task, r.recipe)].add(r.seed)
    counts = sorted({len(s) for s in seeds.values()})
    first = sorted({r.seed for r in results})
    shown = ("one seed (" + ", ".join(map(str, first)) + ") per curve" if counts == [1]
             else f"median and range over {counts[0]} seeds" if len(counts) == 1
             else f"median and range over {counts[0]} to {counts[-1]} seeds")
    fig.suptitle(r"convergence of $q(c\mid x)$ to the Bayes posterior $P(c\mid x)$: "
                 + shown)
    fig.text(0.01, 0.01, _CITATION, fontsize="x-small", color="0.3")
    return fig


def save_posterior_figure(results: Union[ExperimentResult, Sequence[ExperimentResult]],
                          path: Union[str, Path]) -> float:
    """Save :func:`posterior_figure` of ``results`` to ``path``; return the seconds.

    The command line calls it for each task and recipe as soon as all its
    seeds are trained.

    Parameters
    ----------
    results : ExperimentResult or sequence of them (seeds of one task and recipe)
    path : str or Path
        The image file; its suffix picks the format.

    Returns
    -------
    float
        Seconds spent drawing and writing.

    Examples
    --------
    >>> import scratchnet as sn, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "fit.svg"
    >>> seconds = sn.experiments.save_posterior_figure(
    ...     sn.experiments.run("separated", "textbook", steps=20), path)
    >>> path.exists()
    True
    """
    path = _path(path, "path", figure=True)
    start = time.perf_counter()
    posterior_figure(results).savefig(path, dpi=120)
    return time.perf_counter() - start


def run_and_plot(task: str, recipe: str, path: Union[str, Path], *,
                 steps: Optional[int] = None, seed: int = 0,
                 seeds: Union[int, Sequence[int], None] = None
                 ) -> Union[ExperimentResult, list[ExperimentResult]]:
    """:func:`run`, then save its :func:`posterior_figure` to ``path``.

    Parameters
    ----------
    task, recipe : str
        Names, as for :func:`run`.
    path : str or Path
        The image file; its suffix picks the format.
    steps : int, optional
    seed : int, default 0
    seeds : int or sequence of int, optional
        A seed study (then a list of results, one figure with bands).

    Returns
    -------
    ExperimentResult or list of ExperimentResult
        With ``extra["drawing"]``, the seconds spent on the figure.

    Examples
    --------
    >>> import scratchnet as sn, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "fit.png"
    >>> _ = sn.experiments.run_and_plot("separated", "textbook", path, steps=20)
    >>> path.exists()
    True
    """
    path = _path(path, "path", figure=True)
    result = run(task, recipe, steps=steps, seed=seed, seeds=seeds)
    drawing = save_posterior_figure(result, path)
    for r in [result] if isinstance(result, ExperimentResult) else result:
        r.extra["drawing"] = drawing
    return result
