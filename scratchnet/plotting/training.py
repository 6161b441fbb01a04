r"""Training as it happens: the loss per step and the distance to the posterior.

The mean loss of a mini-batch is a noisy estimate of the population loss,
whose floor is the Bayes loss :math:`H(C \mid X)`: the gap between them is
the expected KL divergence from the posterior.  :func:`plot_training_curve`
draws the loss against that floor; :func:`plot_convergence` draws the
metrics of :func:`scratchnet.experiments.run` against the number of steps,
one line per task and recipe.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Optional

import numpy as np
from matplotlib.axes import Axes

from .._validation import as_float_array
from ..metrics import moving_average
from .style import _LINESTYLES, CLASS_COLORS, METRIC_LABELS, _new_axes

__all__ = ["plot_convergence", "plot_training_curve"]


def plot_convergence(
    rows: Iterable[Mapping[str, Any]],
    metric: str = "max_abs_error",
    *,
    reference: Optional[Mapping[str, tuple[float, float]]] = None,
    reference_step: int = 10_000,
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
    ax : matplotlib Axes, optional

    Returns
    -------
    Axes
        One line per (task, recipe), colour by task and line style by recipe,
        then one per reference bar and an empty one for the legend.

    Notes
    -----
    Non-positive values cannot be shown on a log axis and are left out.

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
    curves: dict[tuple[str, str], list[tuple[float, ...]]] = {}
    for row in rows:
        low, high = row.get(metric + "_min", row[metric]), row.get(metric + "_max",
                                                                   row[metric])
        curves.setdefault((row["task"], row["recipe"]), []).append(
            (float(row["step"]), float(row[metric]), float(low), float(high)))
    tasks = list(dict.fromkeys(task for task, _ in curves))
    recipes = list(dict.fromkeys(recipe for _, recipe in curves))
    ax = _new_axes(ax)
    for (task, recipe), points in curves.items():
        steps, values, lows, highs = np.array(sorted(points)).T
        keep = values > 0
        color = CLASS_COLORS[tasks.index(task) % len(CLASS_COLORS)]
        ax.plot(steps[keep], values[keep], marker="o", ms=3, color=color,
                ls=_LINESTYLES[recipes.index(recipe) % len(_LINESTYLES)],
                label=f"{task}, {recipe}")
        if np.any(lows != highs):
            shown = keep & (lows > 0)
            ax.fill_between(steps[shown], lows[shown], highs[shown], color=color,
                            alpha=0.15, lw=0, label="_")
    style = {"lw": 5, "alpha": 0.45, "marker": "D", "ms": 5, "solid_capstyle": "butt"}
    for task, (low, high) in (reference or {}).items():
        color = (CLASS_COLORS[tasks.index(task) % len(CLASS_COLORS)] if task in tasks
                 else "black")
        ax.plot([reference_step] * 2, [low, high], color=color, label="_", **style)
    if reference:  # one legend entry, in grey, for the bars in the tasks' colours
        ax.plot([], [], color="0.5", label=f"original study, {reference_step:,} steps",
                **style)
    ax.set(xscale="log", yscale="log", xlabel="training steps (mini-batches)",
           ylabel=METRIC_LABELS.get(metric, metric))
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize="x-small", framealpha=0.9)
    return ax


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
    losses = as_float_array(losses, "losses").reshape(-1)
    window = max(1, losses.size // 50) if window is None else window
    steps = np.arange(1, losses.size + 1)
    ax = _new_axes(ax)
    ax.plot(steps, losses, color=CLASS_COLORS[5], lw=0.5, alpha=0.5, label="_")
    ax.plot(steps, moving_average(losses, window), color=CLASS_COLORS[0], lw=2,
            label=f"{label} (mean of {window} steps)")
    if bayes_loss is not None:
        ax.plot(steps[[0, -1]], [bayes_loss, bayes_loss], color="black", ls="--",
                label=rf"Bayes loss $H(C\mid X)$ = {bayes_loss:.3f}")
    ax.set(xscale="log", xlabel="training step", ylabel="cross-entropy (nats)")
    ax.legend(fontsize="small")
    return ax
