r"""The sweep's figures: the phase diagram, the tail-mass test and the losses.

Three pictures answer "where, and with which loss, does a network learn the
posterior?":

* :func:`phase_diagram`: the median over seeds of
  :math:`\max_{x \in [-4, 7]} |q(c \mid x) - P(c \mid x)|` on the
  :math:`\mu_2 \times \sigma_1` grid, one cell per grid point, one panel per
  budget, with the study's three tasks marked and the contours of the input
  mass past the last crossing, :math:`P(X > x_\mathrm{last})` (for
  :math:`\sigma_1 < 1`, before the first:
  :func:`~scratchnet.experiments.tail_crossing`);
* :func:`tail_mass_figure`: that error (and the expected KL) against that
  mass for every grid point, the study's "sparse data" explanation tested on
  the whole grid instead of one task;
* :func:`loss_figure`: for each loss, the error, the expected KL and the
  accuracy below the Bayes accuracy against the budget, the median over the
  grid with its quartiles: which losses reach the posterior, and how fast.

:func:`save_sweep_figures` writes them all, as the command line does.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Union

import numpy as np

from .._validation import check_positive_int
from ._checks import budgets
from .grids import STUDY_TASKS, family_task, tail_crossing
from .runs import EVAL_X
from .tables import Sweep

if TYPE_CHECKING:  # matplotlib is imported when a figure is drawn: the training
    from matplotlib.figure import Figure  # workers of the command line start without it

__all__ = ["loss_figure", "phase_diagram", "save_sweep_figures", "tail_mass_figure"]

_LABELS = {"max_abs_error": r"$\max_{x\in[-4,7]}|q(c\mid x)-P(c\mid x)|$",
           "expected_kl": r"$E_x\,KL(P\,\|\,q)$ (nats)",
           "accuracy": "accuracy", "loss_gap": "loss - Bayes floor"}
#: How the study's tasks are marked in the phase diagram (a legend names them).
_MARKERS = {"separated": "o", "unequal-variance": "s", "sparse-tail": "D"}
_SMALLEST_MASS = 1e-8  # the tail-mass axis starts here
_LOSS_NAMES = {"cross_entropy": "cross-entropy", "mse": "squared error",
               "hinge": "hinge"}


def _check_sweep(result: Any) -> Sweep:
    """``result`` if it is a Sweep, else ``TypeError`` saying where one comes from."""
    if not isinstance(result, Sweep):
        raise TypeError("result must be a Sweep (from experiments.sweep or "
                        f"Sweep.read); got {type(result).__name__}")
    return result


def _label(metric: str, seeds: int) -> str:
    """An axis label: the metric, "median" in front only over several seeds."""
    label = _LABELS.get(metric, metric)
    return f"median {label}" if seeds > 1 else label


def _quartiles(values: np.ndarray) -> np.ndarray:
    """The 25th, 50th and 75th percentiles of the cells that finished (NaN: failed).

    Linear between neighbours as usual; with infinite values (the hinge
    loss's expected KL) the nearest order statistic, so that no inf - inf
    is formed."""
    values = values[~np.isnan(values)]
    if not values.size:
        return np.full(3, np.nan)
    method = "linear" if np.all(np.isfinite(values)) else "nearest"
    return np.percentile(values, [25, 50, 75], method=method)


def _edges(values: tuple) -> np.ndarray:
    """Cell edges around the (sorted) values: midpoints, half a step beyond."""
    v = np.sort(np.asarray(values, dtype=float))
    if v.size == 1:
        return np.array([v[0] - 0.25, v[0] + 0.25])
    mid = (v[1:] + v[:-1]) / 2
    return np.concatenate([[2 * v[0] - mid[0]], mid, [2 * v[-1] - mid[-1]]])


def _sorted_matrix(result: Sweep, values: np.ndarray) -> np.ndarray:
    """``values`` (sigma1 x mu2, in the grid's order) with both axes sorted."""
    rows, cols = np.argsort(result.grid.sigma1), np.argsort(result.grid.mu2)
    return values[np.ix_(rows, cols)]


@functools.lru_cache(maxsize=8)
def _tail_mesh(mu2: tuple, sigma1: tuple, prior1: float) -> tuple:
    """:func:`tail_crossing` of every task of a mesh (NaN where none)."""
    pairs = [[tail_crossing(family_task(m, s, prior1)) for m in mu2] for s in sigma1]
    return (np.array([[p[0] for p in row] for row in pairs]),
            np.array([[p[1] for p in row] for row in pairs]))


def _outside(crossing: np.ndarray) -> np.ndarray:
    """How far a crossing lies outside the plotted range (negative: inside)."""
    return np.maximum(crossing - EVAL_X[-1], EVAL_X[0] - crossing)


#: The tail-mass contours: level (log10 of the mass) -> line width.
_CONTOUR_WIDTHS = {-4: 2.0, -3: 1.3, -2: 0.7}


def _tail_contours(ax: Any, mu2_edges: np.ndarray, sigma1_edges: np.ndarray,
                   prior1: float) -> list:
    """Dashed contours of log10 of the tail mass where its crossing lies on the
    plotted range (thicker for less mass), and a dotted line where the crossing
    leaves the range.  No text on the map: the handles returned name them in the
    figure's legend, below the panels."""
    from matplotlib.lines import Line2D

    mu2 = np.linspace(mu2_edges[0], mu2_edges[-1], 40)
    sigma1 = np.linspace(max(sigma1_edges[0], 1e-3), sigma1_edges[-1], 40)
    crossing, mass = _tail_mesh(tuple(mu2), tuple(sigma1), prior1)
    outside = _outside(crossing)
    shown = (outside <= 0) & (mass > 0)  # NaN (no crossing) compares False
    logs = np.full(mass.shape, np.nan)
    logs[shown] = np.log10(mass[shown])
    low, high = np.nanmin(logs, initial=np.inf), np.nanmax(logs, initial=-np.inf)
    levels = [level for level in sorted(_CONTOUR_WIDTHS) if low < level < high]
    handles = []
    if levels:
        ax.contour(mu2, sigma1, logs, levels=levels, colors="white",
                   linewidths=[_CONTOUR_WIDTHS[v] for v in levels], linestyles="--")
        handles += [Line2D([], [], color="0.35", ls="--", lw=_CONTOUR_WIDTHS[v],
                           label=f"tail mass $10^{{{v}}}$") for v in levels]
    if np.nanmin(outside, initial=np.inf) < 0 < np.nanmax(outside, initial=-np.inf):
        ax.contour(mu2, sigma1, outside, levels=[0.0], colors="white",
                   linewidths=1.2, linestyles=":")
        handles.append(Line2D([], [], color="0.35", ls=":", lw=1.2,
                              label="tail crossing at the edge of [-4, 7]"))
    return handles


def _mark_study_tasks(ax: Any, mu2_edges: np.ndarray, sigma1_edges: np.ndarray,
                      grid: Any = None) -> list:
    """The study's three tasks, where they lie inside the grid: a marker (named
    in the figure's legend, outside the axes), and with ``grid`` (the cells
    carry their numbers) an outline of the cell and the marker in its corner,
    clear of the number."""
    handles = []
    for name, (m, s) in STUDY_TASKS.items():
        if not (mu2_edges[0] <= m <= mu2_edges[-1]
                and sigma1_edges[0] <= s <= sigma1_edges[-1]):
            continue
        x, y = m, s
        if grid is not None and m in grid.mu2 and s in grid.sigma1:
            j = int(np.searchsorted(np.sort(grid.mu2), m))
            i = int(np.searchsorted(np.sort(grid.sigma1), s))
            left, right = mu2_edges[j], mu2_edges[j + 1]
            low, high = sigma1_edges[i], sigma1_edges[i + 1]
            ax.plot([left, right, right, left, left], [low, low, high, high, low],
                    color="white", lw=2.2, solid_joinstyle="miter")
            ax.plot([left, right, right, left, left], [low, low, high, high, low],
                    color="black", lw=0.8, solid_joinstyle="miter")
            x, y = left + 0.16 * (right - left), high - 0.2 * (high - low)
        handles += ax.plot([x], [y], ls="none", marker=_MARKERS[name],
                           ms=6 if grid is not None else 9, mfc="white", mec="black",
                           mew=1.2, label=f"{name} ($\\mu_2$ = {m:g}, "
                           f"$\\sigma_1$ = {s:g})")
    return handles


def _cell_text(ax: Any, x: float, y: float, value: float, mesh: Any) -> None:
    """A cell's value, dark on light cells and light on dark ones."""
    if np.isnan(value):
        ax.text(x, y, "failed", ha="center", va="center", fontsize="x-small",
                color="black")
        return
    text = "inf" if np.isinf(value) else f"{value:.2f}" if value >= 0.01 \
        else f"{value:.0e}"
    red, green, blue, _ = mesh.cmap(mesh.norm(min(value, mesh.norm.vmax)))
    light = 0.299 * red + 0.587 * green + 0.114 * blue > 0.5
    ax.text(x, y, text, ha="center", va="center", fontsize="x-small",
            color="black" if light else "white")


def phase_diagram(result: Sweep, *, steps: Optional[Any] = None,
                  metric: str = "max_abs_error", recipe: Optional[str] = None,
                  loss: Optional[str] = None, width: Optional[int] = None,
                  prior1: Optional[float] = None, contours: bool = True) -> Figure:
    r"""Heatmaps of the median error over :math:`\mu_2 \times \sigma_1`, per budget.

    Parameters
    ----------
    result : Sweep
    steps : int or sequence of int, optional
        The budgets, one panel each (default: all of the sweep's).
    metric : str, default "max_abs_error"
        A metric of :data:`~scratchnet.experiments.SWEEP_METRICS`.
    recipe, loss, width, prior1 : optional
        The slice (default: the first value of each axis).
    contours : bool, default True
        Draw the contours of the tail mass (dashed, where its crossing lies on
        the plotted range :math:`[-4, 7]`; thicker for less mass) and where
        that crossing leaves the range (dotted), named in the legend.

    Returns
    -------
    matplotlib.figure.Figure
        One ``pcolormesh`` per panel with one cell per grid point, on one
        logarithmic colour scale; on grids of at most 144 points each cell
        carries its value, and the study's tasks are outlined; the study's
        tasks and the contours are named in a legend below the panels.

    Examples
    --------
    >>> import scratchnet as sn
    >>> result = sn.experiments.sweep("1,2,3", "1,2", steps=(20,), seeds=1, jobs=1)
    >>> fig = sn.experiments.phase_diagram(result)
    >>> fig.axes[0].collections[0].get_array().size   # 3 x 2 cells
    6
    """
    grid = _check_sweep(result).grid
    steps = budgets(steps, grid.steps)
    if not isinstance(contours, (bool, np.bool_)):
        raise TypeError(f"contours must be True or False; got {contours!r}")
    chosen = result.choose_slice(steps[0], recipe, loss, width, prior1)
    fixed = {k: chosen[k] for k in ("recipe", "loss", "width", "prior1")}
    values = [_sorted_matrix(result, result.matrix(metric, step=step, **fixed))
              for step in steps]
    finite = np.concatenate([v[np.isfinite(v) & (v > 0)] for v in values])
    from matplotlib.colors import LogNorm
    from matplotlib.figure import Figure

    norm = LogNorm(vmin=finite.min() if finite.size else 1e-3,
                   vmax=max(finite.max() if finite.size else 1.0,
                            1.0001 * (finite.min() if finite.size else 1e-3)))
    mu2_edges, sigma1_edges = _edges(grid.mu2), _edges(grid.sigma1)
    fig = Figure(figsize=(1.0 + 4.6 * len(steps), 4.4), layout="constrained")
    axes = np.atleast_1d(fig.subplots(1, len(steps), sharey=True, squeeze=False)[0])
    handles: list = []
    lines: list = []
    for ax, step, matrix in zip(axes, steps, values):
        mesh = ax.pcolormesh(mu2_edges, sigma1_edges, np.ma.masked_invalid(matrix),
                             norm=norm, cmap="viridis")
        numbers = matrix.size <= 144  # write the numbers into small grids
        if numbers:
            for (i, j), v in np.ndenumerate(matrix):
                _cell_text(ax, np.sort(grid.mu2)[j], np.sort(grid.sigma1)[i], v, mesh)
        if contours:
            lines = _tail_contours(ax, mu2_edges, sigma1_edges, chosen["prior1"])
        if chosen["prior1"] == 0.5:
            handles = _mark_study_tasks(ax, mu2_edges, sigma1_edges,
                                        grid if numbers else None)
        ax.set_title(f"after {step:,} steps", fontsize="medium")
        ax.set_xlabel(r"$\mu_2$ (class 2 is $N(\mu_2, 1)$)")
    axes[0].set_ylabel(r"$\sigma_1$ (class 1 is $N(0, \sigma_1^2)$)")
    fig.colorbar(mesh, ax=list(axes), label=_label(metric, len(grid.seeds)))
    legend = (handles if chosen["prior1"] == 0.5 else []) + (lines if contours else [])
    if legend:  # below the panels, never over a cell
        fig.legend(handles=legend, loc="outside lower center",
                   ncols=min(len(legend), 2 * len(steps)), fontsize="small",
                   frameon=False)
    prior = "" if chosen["prior1"] == 0.5 else f", P(c1) = {chosen['prior1']:g}"
    fig.suptitle(f"{chosen['recipe']}, width {chosen['width']}, "
                 f"{_LOSS_NAMES.get(chosen['loss'], chosen['loss'])}, "
                 f"{len(grid.seeds)} seed{'s' if len(grid.seeds) > 1 else ''}{prior}",
                 fontsize="medium")
    return fig


def tail_mass_figure(result: Sweep, *, steps: Optional[Any] = None,
                     recipe: Optional[str] = None, loss: Optional[str] = None,
                     width: Optional[int] = None,
                     prior1: Optional[float] = None) -> Figure:
    r"""The error against the input mass past the tail crossing, every grid point.

    Parameters
    ----------
    result : Sweep
    steps : int or sequence of int, optional
        One colour per budget (default: all).
    recipe, loss, width, prior1 : optional
        The slice (default: the first value of each axis).

    Returns
    -------
    matplotlib.figure.Figure
        Two log-log panels, the median :math:`\max |q - P|` and the median
        expected KL against the mass past the tail crossing
        (:func:`~scratchnet.experiments.tail_crossing`; masses below
        :math:`10^{-8}` drawn at :math:`10^{-8}`); hollow markers where the
        crossing lies outside the plotted range :math:`[-4, 7]`, the study's
        tasks named.  Points without a crossing are left out.

    Examples
    --------
    >>> import scratchnet as sn
    >>> result = sn.experiments.sweep("1,3", "1,2", steps=(20,), seeds=1, jobs=1)
    >>> [ax.get_xscale() for ax in sn.experiments.tail_mass_figure(result).axes]
    ['log', 'log']
    """
    grid = _check_sweep(result).grid
    steps = budgets(steps, grid.steps)
    chosen = result.choose_slice(steps[0], recipe, loss, width, prior1)
    from matplotlib.figure import Figure

    from ..plotting import CLASS_COLORS

    fig = Figure(figsize=(11, 4.4), layout="constrained")
    axes = fig.subplots(1, 2)
    shown = {"max_abs_error": False, "expected_kl": False}
    for k, step in enumerate(steps):
        rows = [r for r in result.summary() if r["step"] == step and all(
            r[key] == chosen[key] for key in ("recipe", "loss", "width", "prior1"))]
        rows = [r for r in rows if np.isfinite(r["tail_mass"])]
        inside = _outside(np.array([r["tail_crossing"] for r in rows])) <= 0
        color = CLASS_COLORS[k % len(CLASS_COLORS)]
        for ax, metric in zip(axes, ("max_abs_error", "expected_kl")):
            x = np.maximum([r["tail_mass"] for r in rows], _SMALLEST_MASS)
            y = np.array([r[metric] for r in rows], dtype=float)
            drawn = np.isfinite(y) & (y > 0)  # a log axis: no 0, inf or failed cell
            filled, hollow = drawn & inside, drawn & ~inside
            shown[metric] = shown[metric] or bool(drawn.any())
            ax.scatter(x[filled], y[filled], s=22, color=color, alpha=0.8,
                       label=f"{step:,} steps")
            ax.scatter(x[hollow], y[hollow], s=22, facecolors="none",
                       edgecolors=color, alpha=0.8)
            if k == len(steps) - 1:
                for r in [r for r, shown in zip(rows, drawn) if shown]:
                    for name, point in STUDY_TASKS.items():
                        if (r["mu2"], r["sigma1"]) == point and chosen["prior1"] == 0.5:
                            ax.annotate(name, (max(r["tail_mass"], _SMALLEST_MASS),
                                               r[metric]),
                                        xytext=(5, 5), textcoords="offset points",
                                        fontsize="small")
    for ax, metric in zip(axes, ("max_abs_error", "expected_kl")):
        ax.set_xscale("log")
        if shown[metric]:
            ax.set_yscale("log")
        else:  # the hinge's one-hot readout: an infinite expected KL everywhere
            ax.text(0.5, 0.5, "infinite everywhere: not drawn", ha="center",
                    va="center", transform=ax.transAxes, color="0.3")
        ax.set_xlim(_SMALLEST_MASS / 2, 1.0)
        ax.set_xlabel("input mass past the tail crossing (the last one, "
                      r"$P(X > x_{last})$, for $\sigma_1 \geq 1$)")
        ax.set_ylabel(_label(metric, len(grid.seeds)))
        ax.grid(True, which="major", alpha=0.3)
    fig.legend(handles=axes[0].collections[::2], loc="outside lower center",
               ncols=len(steps), title="filled: the crossing lies in [-4, 7]",
               fontsize="small", title_fontsize="small", frameon=False)
    fig.suptitle(f"{len(grid.mu2) * len(grid.sigma1)} tasks, "
                 f"{_LOSS_NAMES.get(chosen['loss'], chosen['loss'])}: the less data "
                 "past the crossing, the larger the error", fontsize="medium")
    return fig


def loss_figure(result: Sweep, *, recipe: Optional[str] = None,
                width: Optional[int] = None, prior1: Optional[float] = None) -> Figure:
    r"""Which losses reach the posterior, and how fast: the grid's median per budget.

    Parameters
    ----------
    result : Sweep
    recipe, width, prior1 : optional
        The slice (default: the first value of each axis).

    Returns
    -------
    matplotlib.figure.Figure
        Three panels against the budget, one line per loss: the median over
        grid points (of the median over seeds) of :math:`\max |q - P|`, of
        the expected KL, and of the Bayes accuracy minus the accuracy; the
        band spans the grid's quartiles.  An infinite expected KL (the hinge
        loss, read as its one-hot decision) is not drawn: the legend, below
        the panels, says "infinite".

    Examples
    --------
    >>> import scratchnet as sn
    >>> result = sn.experiments.sweep("2", "1,2", steps=(20, 40), seeds=1, jobs=1,
    ...                               losses="cross_entropy,hinge")
    >>> [len(ax.get_lines()) for ax in sn.experiments.loss_figure(result).axes]
    [2, 2, 2]
    """
    grid = _check_sweep(result).grid
    chosen = result.choose_slice(None, recipe, None, width, prior1)
    from matplotlib.figure import Figure
    from matplotlib.ticker import NullLocator

    from ..plotting import CLASS_COLORS

    fig = Figure(figsize=(13, 4.2), layout="constrained")
    axes = fig.subplots(1, 3)
    summary = result.summary()
    for k, loss in enumerate(grid.losses):
        rows = [r for r in summary if r["loss"] == loss and all(
            r[key] == chosen[key] for key in ("recipe", "width", "prior1"))]
        color = CLASS_COLORS[k % len(CLASS_COLORS)]
        for ax, metric in zip(axes, ("max_abs_error", "expected_kl", "accuracy")):
            per_step = [np.array([(r["bayes_accuracy"] - r[metric]) if metric ==
                                  "accuracy" else r[metric]
                                  for r in rows if r["step"] == step], dtype=float)
                        for step in grid.steps]
            q = np.array([_quartiles(v) for v in per_step])
            steps = np.array(grid.steps)
            if metric == "expected_kl":  # a log axis: only finite, positive values
                q = np.where(np.isfinite(q) & (q > 0), q, np.nan)
            median = np.isfinite(q[:, 1])
            band = np.isfinite(q[:, 0]) & np.isfinite(q[:, 2])
            label = _LOSS_NAMES.get(loss, loss)
            if metric == "expected_kl" and not median.any():
                label += " (expected KL infinite)"  # the hinge's one-hot readout
            ax.plot(steps[median], q[median, 1], "o-", color=color, label=label)
            ax.fill_between(steps[band], q[band, 0], q[band, 2], color=color,
                            alpha=0.2)
    titles = ("distance to the posterior", "expected KL from the posterior",
              "accuracy below the Bayes accuracy")
    for ax, title in zip(axes, titles):
        ax.set_xscale("log")
        ax.set_xticks(grid.steps, [f"{s:,}" for s in grid.steps])
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xlabel("training steps")
        ax.set_title(title, fontsize="medium")
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel(r"$\max_{x\in[-4,7]}|q - P|$ (grid median, quartiles)")
    axes[1].set_yscale("log")
    axes[1].set_ylabel("nats")
    axes[2].set_ylabel("Bayes accuracy - accuracy")
    fig.legend(handles=axes[1].get_lines(), loc="outside lower center",
               ncols=len(grid.losses), fontsize="small", frameon=False)
    seeds = f"{len(grid.seeds)} seed{'s' if len(grid.seeds) > 1 else ''}"
    fig.suptitle(f"{len(grid.mu2) * len(grid.sigma1)} tasks x {seeds}, "
                 f"{chosen['recipe']} (width {chosen['width']})", fontsize="medium")
    return fig


def save_sweep_figures(result: Sweep, out: Union[str, Path], *,
                       format: str = "png", dpi: int = 100) -> list[Path]:
    """Write every figure of a sweep: phase diagrams, tail mass, losses.

    Parameters
    ----------
    result : Sweep
    out : str or Path
        A folder (created if needed).
    format : {"png", "pdf", "svg"}, default "png"
    dpi : int, default 100

    Returns
    -------
    list of Path
        ``phase[_<recipe>][_<loss>][_w<width>][_p<prior1>].<format>`` per
        slice (the suffix names only the axes with several values),
        ``tail_mass[...]`` per slice of the first loss, and ``losses[...]``
        when there are several losses.

    Examples
    --------
    >>> import scratchnet as sn, tempfile
    >>> result = sn.experiments.sweep("1,3", "1,2", steps=(20,), seeds=1, jobs=1)
    >>> [p.name for p in sn.experiments.save_sweep_figures(result, tempfile.mkdtemp())]
    ['phase.png', 'tail_mass.png']
    """
    _check_sweep(result)
    if format not in ("png", "pdf", "svg"):
        raise ValueError(f"format must be 'png', 'pdf' or 'svg'; got {format!r}")
    dpi = check_positive_int(dpi, "dpi")
    if not isinstance(out, (str, os.PathLike)):
        raise TypeError(f"out must be a folder path (str or Path); got {out!r}")
    if not str(out).strip() or (Path(out).exists() and not Path(out).is_dir()):
        raise ValueError(f"out must be a folder path; got {str(out)!r}"
                         + (", a file" if str(out).strip() else ""))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    grid, paths = result.grid, []

    def name(stem: str, **slice_: Any) -> Path:
        parts = [stem] + [f"{prefix}{slice_[key]}" for key, prefix, axis in (
            ("recipe", "", grid.recipes), ("loss", "", grid.losses),
            ("width", "w", grid.widths), ("prior1", "p", grid.prior1))
            if key in slice_ and len(axis) > 1]
        return out / f"{'_'.join(parts)}.{format}"

    for recipe in grid.recipes:
        for width in grid.widths:
            for prior1 in grid.prior1:
                common = {"recipe": recipe, "width": width, "prior1": prior1}
                figures = [(name("phase", loss=loss, **common),
                            phase_diagram(result, loss=loss, **common))
                           for loss in grid.losses]
                figures.append((name("tail_mass", **common),
                                tail_mass_figure(result, **common)))
                if len(grid.losses) > 1:
                    figures.append((name("losses", **common),
                                    loss_figure(result, **common)))
                for path, fig in figures:
                    fig.savefig(path, dpi=dpi)
                    paths.append(path)
    return paths
