r"""Training as it happens: the loss per step and the distance to the posterior.

The mean loss of a mini-batch is a noisy estimate of the population loss,
whose floor is the Bayes loss :math:`H(C \mid X)`: the gap between them is
the expected KL divergence from the posterior.  :func:`plot_training_curve`
draws the loss against that floor; :func:`plot_convergence` draws the
metrics of :func:`scratchnet.experiments.run` against the number of steps,
one line per task and recipe.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping
from typing import Any, Optional

import numpy as np
from matplotlib.axes import Axes
from matplotlib.lines import Line2D

from .._validation import as_float_array, check_positive_int, check_scalar
from ..metrics import moving_average
from ._shared import check_ax, new_axes
from .style import CLASS_COLORS, LINESTYLES, METRIC_LABELS

__all__ = ["plot_convergence", "plot_training_curve"]


def plot_convergence(
    rows: Iterable[Mapping[str, Any]],
    metric: str = "max_abs_error",
    *,
    reference: Optional[Mapping[str, tuple[float, float]]] = None,
    reference_step: int = 10_000,
    reference_label: str = "original study",
    ax: Optional[Axes] = None,
) -> Axes:
    r"""A metric against training steps (log-log), one line per task and recipe.

    Parameters
    ----------
    rows : iterable of mappings
        Each with keys ``"task"``, ``"recipe"``, ``"step"`` and ``metric``
        (the rows of :func:`scratchnet.experiments.summarize`).  Rows
        summarised over seeds (``over_seeds=True``: the median, with keys
        ``metric + "_min"`` and ``metric + "_max"``) are drawn with the range
        over seeds shaded.
    metric : str, default "max_abs_error"
        The key plotted, e.g. ``"expected_kl"``.
    reference : mapping task name -> (low, high), optional
        A range reported elsewhere at ``reference_step``, drawn as a bar in
        the task's colour (the original study's figures); the legend has one
        grey entry for them.
    reference_step : int, default 10000
    reference_label : str, default "original study"
        The legend text of the reference bars (followed by the step).
    ax : matplotlib Axes, optional

    Returns
    -------
    Axes
        One line per (task, recipe), colour by task and line style by recipe,
        then one per reference bar and an empty one for the legend.  The
        legend tells both apart: one entry per task (its colour, solid) and
        one per recipe (its line style, in black); it stands outside the
        axes, on the right, where it covers no point.

    Notes
    -----
    Non-positive and infinite values (the expected KL of a one-hot readout)
    cannot be shown on a log axis and are left out.

    Examples
    --------
    >>> import scratchnet as sn
    >>> rows = [{"task": "a", "recipe": "r", "step": s, "expected_kl": 1 / s}
    ...         for s in (10, 100, 1000)]
    >>> ax = sn.plotting.plot_convergence(rows, "expected_kl")
    >>> ax.get_lines()[0].get_ydata().tolist()
    [0.1, 0.01, 0.001]
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    curves = _curves(rows, metric)
    reference = _references(reference)
    reference_step = check_positive_int(reference_step, "reference_step")
    if not isinstance(reference_label, str):
        raise TypeError(f"reference_label must be a string; got {reference_label!r}")
    tasks = list(dict.fromkeys(task for task, _ in curves))
    recipes = list(dict.fromkeys(recipe for _, recipe in curves))
    ax = new_axes(ax)
    drawn = bool(reference)
    for (task, recipe), points in curves.items():
        steps, values, lows, highs = np.array(sorted(points)).T
        keep = np.isfinite(values) & (values > 0)   # what a log axis can show
        drawn = drawn or bool(keep.any())
        color = CLASS_COLORS[tasks.index(task) % len(CLASS_COLORS)]
        ax.plot(steps[keep], values[keep], marker="o", ms=3, color=color,
                ls=LINESTYLES[recipes.index(recipe) % len(LINESTYLES)],
                label=f"{task}, {recipe}")  # the legend is built below
        if np.any(lows != highs):
            shown = keep & (lows > 0) & np.isfinite(highs)
            ax.fill_between(steps[shown], lows[shown], highs[shown], color=color,
                            alpha=0.15, lw=0, label="_")
    style = {"lw": 5, "alpha": 0.45, "marker": "D", "ms": 5, "solid_capstyle": "butt"}
    for task, (low, high) in reference.items():
        color = (CLASS_COLORS[tasks.index(task) % len(CLASS_COLORS)] if task in tasks
                 else "black")
        ax.plot([reference_step] * 2, [low, high], color=color, label="_", **style)
    handles = [Line2D([], [], color=CLASS_COLORS[i % len(CLASS_COLORS)], lw=2,
                      label=f"task {task}") for i, task in enumerate(tasks)]
    handles += [Line2D([], [], color="black", lw=1.5,
                       ls=LINESTYLES[i % len(LINESTYLES)], label=f"recipe {recipe}")
                for i, recipe in enumerate(recipes)]
    if reference:  # one legend entry, in grey, for the bars in the tasks' colours
        handles += ax.plot([], [], color="0.5", **style,
                           label=f"{reference_label}, {reference_step:,} steps")
    ax.set(xscale="log", xlabel="training steps (mini-batches)",
           ylabel=METRIC_LABELS.get(metric, metric))
    if drawn:
        ax.set_yscale("log")
    else:  # e.g. the expected KL of a one-hot readout: infinite everywhere
        ax.text(0.5, 0.5, f"no finite positive {metric} to draw", ha="center",
                va="center", transform=ax.transAxes, color="0.3")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(handles=handles, fontsize="x-small", loc="upper left",
              bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, frameon=False)
    return ax


def _curves(rows: Any, metric: Any) -> dict[tuple[str, str], list[tuple[float, ...]]]:
    """The points (step, value, low, high) of each (task, recipe), checked."""
    if not isinstance(metric, str):
        raise TypeError(f"metric must be a string like 'expected_kl'; got {metric!r}")
    if isinstance(rows, (str, bytes, Mapping)) or not isinstance(rows, Iterable):
        raise TypeError(f"rows must be an iterable of mappings (the rows of "
                        f"summarize); got {type(rows).__name__}")
    curves: dict[tuple[str, str], list[tuple[float, ...]]] = {}
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise TypeError(f"rows must hold mappings; got {type(row).__name__} at "
                            f"index {i}")
        missing = [k for k in ("task", "recipe", "step", metric) if k not in row]
        if missing:
            raise ValueError(f"rows[{i}] must have the keys 'task', 'recipe', 'step' "
                             f"and {metric!r}; missing {', '.join(map(repr, missing))}")
        point = [row["step"], row[metric], row.get(metric + "_min", row[metric]),
                 row.get(metric + "_max", row[metric])]
        if not all(isinstance(v, numbers.Real) for v in point):
            raise TypeError(f"rows[{i}]['step'] and [{metric!r}] (and its _min, _max) "
                            f"must be numbers; got {point!r}")
        curves.setdefault((row["task"], row["recipe"]), []).append(
            tuple(float(v) for v in point))
    if not curves:
        raise ValueError("rows must not be empty: there is nothing to draw")
    return curves


def _references(reference: Any) -> dict[str, tuple[float, float]]:
    """``{task: (low, high)}``, with 0 < low <= high (drawn on a log axis)."""
    if reference is None:
        return {}
    if not isinstance(reference, Mapping):
        raise TypeError(f"reference must map task names to (low, high); got "
                        f"{type(reference).__name__}")
    for task, pair in reference.items():
        ok = (isinstance(pair, (tuple, list)) and len(pair) == 2
              and all(isinstance(v, numbers.Real) for v in pair))
        if not ok or not 0 < pair[0] <= pair[1] < np.inf:
            raise ValueError(f"reference[{task!r}] must be (low, high) with 0 < low "
                             f"<= high; got {pair!r}")
    return dict(reference)


def plot_training_curve(
    losses: Any,
    *,
    bayes_loss: Optional[float] = None,
    window: Optional[int] = None,
    label: str = "training loss",
    ax: Optional[Axes] = None,
) -> Axes:
    r"""The mini-batch loss per step, smoothed, above the Bayes loss.

    Parameters
    ----------
    losses : array_like, shape (steps,)
        The loss of each training step (``History.losses``).
    bayes_loss : float, optional
        :math:`H(C \mid X)`, drawn as a horizontal floor: no model's expected
        loss is below it.
    window : int, optional
        Width of the trailing moving average; default ``max(1, steps // 50)``.
    label : str, default "training loss"
    ax : matplotlib Axes, optional

    Returns
    -------
    Axes
        Lines: the raw losses (faint), the moving average, then the floor.

    Examples
    --------
    >>> import scratchnet as sn
    >>> ax = sn.plotting.plot_training_curve([0.9, 0.5, 0.4, 0.3], bayes_loss=0.2)
    >>> ax.get_lines()[-1].get_ydata().tolist()
    [0.2, 0.2]
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    losses = as_float_array(losses, "losses", allow_inf=False, allow_empty=False)
    if losses.ndim > 1:
        raise ValueError(f"losses must be one-dimensional; got shape {losses.shape}")
    losses = losses.reshape(-1)
    window = (max(1, losses.size // 50) if window is None
              else check_positive_int(window, "window"))
    if bayes_loss is not None:
        bayes_loss = check_scalar(bayes_loss, "bayes_loss", low=0.0, high=np.inf,
                                  high_inclusive=False)
    if not isinstance(label, str):
        raise TypeError(f"label must be a string; got {label!r}")
    check_ax(ax)
    steps = np.arange(1, losses.size + 1)
    ax = new_axes(ax)
    ax.plot(steps, losses, color=CLASS_COLORS[5], lw=0.5, alpha=0.5, label="_")
    ax.plot(steps, moving_average(losses, window), color=CLASS_COLORS[0], lw=2,
            label=f"{label} (mean of {window} steps)")
    if bayes_loss is not None:
        ax.plot(steps[[0, -1]], [bayes_loss, bayes_loss], color="black", ls="--",
                label=rf"Bayes loss $H(C\mid X)$ = {bayes_loss:.3f}")
    ax.set(xscale="log", xlabel="training step", ylabel="cross-entropy (nats)")
    ax.legend(fontsize="small")
    return ax
