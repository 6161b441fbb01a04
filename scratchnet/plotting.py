r"""The figures: a network's softmax outputs next to the Bayes posterior.

Every figure of the library is drawn here, from plain arrays, so that the
command line, the notebooks and a student's own script show the same thing.
The central one puts the two sides of the claim on one plot: the Bayes
posterior of a task (solid) and the outputs of a network trained with the
cross-entropy (dashed), over the class densities :math:`P(x \mid c) P(c)`,
whose sum is the input density :math:`P(x)` that weights the loss,

.. math::

    E_{x \sim P(X)} \, KL\bigl(P(C \mid x) \,\|\, q(C \mid x)\bigr)
        = \int P(x) \sum_c P(c \mid x) \log \frac{P(c \mid x)}{q(c \mid x)} \, dx ,

so the fit is good where the shading is high and may be poor where it is not.
The other figures illustrate the side stories: training curves against the
Bayes loss, MSE versus cross-entropy landscapes, log loss versus hinge loss,
the asymmetry of KL, calibration and two-dimensional posterior maps.

Conventions: each function takes an optional matplotlib ``Axes`` (``ax=None``
makes a new figure) and returns the ``Axes`` it drew on; none calls
``plt.show``.  Colours come from the Okabe-Ito palette, which stays
distinguishable under the common forms of colour blindness; class :math:`c_i`
always has colour ``CLASS_COLORS[i - 1]``.  The helpers that compute what is
drawn (:func:`moving_average`, :func:`loss_landscape`,
:func:`fit_gaussian_by_kl`, :func:`expected_calibration_error`) are public so
that tests and notebooks can check the numbers behind each picture.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Callable, NamedTuple, Optional

import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import to_rgb
from matplotlib.patches import Patch

from ._validation import (
    as_class_indices,
    as_float_array,
    as_generator,
    check_distribution,
    check_positive_int,
)
from .gaussian import GaussianClasses
from .information import kl_divergence
from .softmax import log_sigmoid, log_softmax

__all__ = [
    "CLASS_COLORS",
    "GaussianFit",
    "expected_calibration_error",
    "fit_gaussian_by_kl",
    "loss_landscape",
    "moving_average",
    "plot_convergence",
    "plot_kl_fits",
    "plot_loss_landscape",
    "plot_margin_losses",
    "plot_oracle",
    "plot_posterior_fit",
    "plot_posterior_map",
    "plot_reliability_diagram",
    "plot_training_curve",
]

#: Okabe-Ito colours, in the order used for classes, tasks and fits.
CLASS_COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7",
                "#E69F00", "#56B4E9", "#F0E442", "#000000")

METRIC_LABELS = {
    "expected_kl": r"$E_x\, KL(P(C\mid x)\,\|\,q(C\mid x))$ (nats)",
    "max_abs_error": r"$\max_{x \in [-4, 7]} |q(c\mid x) - P(c\mid x)|$",
    "loss_gap": "training loss minus its Bayes floor (nats)",
}
_LINESTYLES = ("-", "--", ":", "-.")


def _new_axes(ax: Optional[Axes], figsize: tuple[float, float] = (6.4, 4.2)) -> Axes:
    """Return ``ax``, or the axes of a new pyplot figure (shown in notebooks)."""
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=figsize, layout="constrained")[1]


def _class_colors(num_classes: int) -> list[tuple[float, float, float]]:
    """RGB colour of each class: the palette, cycled if there are more classes."""
    return [to_rgb(CLASS_COLORS[i % len(CLASS_COLORS)]) for i in range(num_classes)]


def _predict(model: Any, x: np.ndarray) -> np.ndarray:
    """Class probabilities from a model (``.predict_proba``) or a callable."""
    predict = getattr(model, "predict_proba", model)
    if not callable(predict):
        raise TypeError("model must have a predict_proba method or be a callable "
                        f"x -> probabilities; got {type(model).__name__}")
    return np.asarray(predict(x), dtype=float)


def moving_average(values: Any, window: int) -> np.ndarray:
    r"""Trailing mean of the last ``window`` values at every position.

    Parameters
    ----------
    values : array_like, shape (n,)
        A sequence, e.g. the training loss of each step.
    window : int
        Number of values averaged (at least 1).

    Returns
    -------
    ndarray, shape (n,)
        ``out[i] = mean(values[max(0, i + 1 - window) : i + 1])``: the first
        ``window - 1`` entries average the shorter prefix.

    Notes
    -----
    Computed from one cumulative sum, :math:`(S_{i+1} - S_{i+1-w}) / w`, so it
    costs :math:`O(n)` whatever the window.

    Examples
    --------
    >>> import scratchnet as sn
    >>> sn.plotting.moving_average([1.0, 2.0, 3.0, 4.0], window=2)
    array([1. , 1.5, 2.5, 3.5])
    """
    values = as_float_array(values, "values").reshape(-1)
    window = check_positive_int(window, "window")
    cumsum = np.concatenate(([0.0], np.cumsum(values, dtype=np.float64)))
    end = np.arange(1, values.size + 1)
    start = np.maximum(end - window, 0)
    return (cumsum[end] - cumsum[start]) / (end - start)


def plot_posterior_fit(
    task: Any,
    x: Any,
    probs: Any = None,
    *,
    labels: Optional[Sequence[str]] = None,
    densities: bool = True,
    ax: Optional[Axes] = None,
) -> Axes:
    r"""The Bayes posterior (solid), a network's outputs (dashed) and the densities.

    Parameters
    ----------
    task : GaussianClasses
        A one-dimensional task (``task.dim == 1``) with ``M`` classes.
    x : array_like, shape (n,)
        The inputs where the curves are drawn (and where ``probs`` were taken).
    probs : array_like, shape (n, M) or (k, n, M), optional
        The network's :math:`q(c \mid x)` on ``x``, one array per snapshot,
        drawn as dashed lines from light grey (first) to black (last).
    labels : sequence of k str, optional
        Legend text of each snapshot, e.g. ``"1000 steps"``.
    densities : bool, default True
        Shade :math:`P(x \mid c) P(c)` of each class under the curves.
    ax : matplotlib Axes, optional

    Returns
    -------
    Axes
        Its lines are the M posteriors (labelled :math:`P(c_i \mid x)`) and
        then the snapshots, class by class.

    Notes
    -----
    The shaded areas are the joint densities :math:`P(x, c) = P(x \mid c)
    P(c)`; their sum is :math:`P(x)` and their ratio is the posterior,
    :math:`P(c \mid x) = P(x, c) / P(x)`.

    Examples
    --------
    >>> import scratchnet as sn
    >>> x = np.linspace(-4, 7, 100)
    >>> ax = sn.plotting.plot_posterior_fit(sn.tasks.separated(), x)
    >>> [line.get_label() for line in ax.get_lines()]
    ['$P(c_1\\mid x)$', '$P(c_2\\mid x)$']
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    if task.dim != 1:
        raise ValueError(f"task must be one-dimensional; got dim {task.dim}")
    x = as_float_array(x, "x", allow_inf=False).reshape(-1)
    posterior = np.asarray(task.posterior(x))
    num_classes = posterior.shape[1]
    colors = _class_colors(num_classes)
    ax = _new_axes(ax)
    if densities:
        joint = np.exp(np.asarray(task.log_joint(x)))
        for i in range(num_classes):
            ax.fill_between(x, joint[:, i], color=colors[i], alpha=0.18, lw=0,
                            label=rf"$P(x\mid c_{i + 1})P(c_{i + 1})$")
    for i in range(num_classes):
        ax.plot(x, posterior[:, i], color=colors[i], lw=2.5,
                label=rf"$P(c_{i + 1}\mid x)$")
    if probs is not None:
        probs = as_float_array(probs, "probs")
        if probs.ndim == 2:
            probs = probs[None]
        if probs.ndim != 3 or probs.shape[1:] != (x.size, num_classes):
            raise ValueError(f"probs must have shape (n, M) or (k, n, M) with n = "
                             f"{x.size}, M = {num_classes}; got {probs.shape}")
        k = probs.shape[0]
        labels = [f"snapshot {j + 1}" for j in range(k)] if labels is None else labels
        if len(labels) != k:
            raise ValueError(f"labels must have one entry per snapshot ({k}); "
                             f"got {len(labels)}")
        greys = np.linspace(0.72, 0.0, k) if k > 1 else [0.0]
        for j in range(k):
            for i in range(num_classes):
                ax.plot(x, probs[j, :, i], ls="--", lw=1.5, color=str(greys[j]),
                        label=rf"$q(c\mid x)$, {labels[j]}" if i == 0 else "_")
    ax.set(xlabel="$x$", ylabel=r"probability; density $P(x, c)$",
           xlim=(x[0], x[-1]), ylim=(-0.02, 1.02))
    ax.legend(fontsize="small", framealpha=0.9, loc="best")
    return ax


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
        (the rows of :func:`scratchnet.experiments.summarize`).
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
    curves: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for row in rows:
        curves.setdefault((row["task"], row["recipe"]), []).append(
            (float(row["step"]), float(row[metric])))
    tasks = list(dict.fromkeys(task for task, _ in curves))
    recipes = list(dict.fromkeys(recipe for _, recipe in curves))
    ax = _new_axes(ax)
    for (task, recipe), points in curves.items():
        steps, values = np.array(sorted(points)).T
        keep = values > 0
        ax.plot(steps[keep], values[keep], marker="o", ms=3,
                color=CLASS_COLORS[tasks.index(task) % len(CLASS_COLORS)],
                ls=_LINESTYLES[recipes.index(recipe) % len(_LINESTYLES)],
                label=f"{task}, {recipe}")
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


def loss_landscape(kind: str, correct: Any, other: Any) -> np.ndarray:
    r"""The loss of one two-class sample as a function of its two activations.

    Parameters
    ----------
    kind : {"mse", "cross_entropy"}
    correct, other : array_like (broadcastable)
        Activation :math:`x` of the correct unit and :math:`y` of the other.

    Returns
    -------
    ndarray, the broadcast shape
        ``"mse"``: :math:`(x - 1)^2 + (y + 1)^2`, squared error against the
        targets :math:`\pm 1`; ``"cross_entropy"``:
        :math:`-\log \frac{e^x}{e^x + e^y} = \log(1 + e^{y - x})`.

    Notes
    -----
    MSE is a bowl with its one minimum at :math:`(1, -1)`: it punishes an
    output that is "too right".  Cross-entropy depends on :math:`x - y` only
    and tends to 0 wherever :math:`x \gg y`.  It is computed with
    :func:`scratchnet.log_softmax`, exact for any activations.

    Examples
    --------
    >>> import scratchnet as sn
    >>> sn.plotting.loss_landscape("mse", [1.0, 3.0], [-1.0, -3.0])
    array([0., 8.])
    >>> sn.plotting.loss_landscape("cross_entropy", [0.0, 30.0], [0.0, 0.0]).round(6)
    array([0.693147, 0.      ])
    """
    correct, other = np.broadcast_arrays(as_float_array(correct, "correct"),
                                         as_float_array(other, "other"))
    if kind == "mse":
        return (correct - 1.0) ** 2 + (other + 1.0) ** 2
    if kind == "cross_entropy":
        return -log_softmax(np.stack([correct, other], axis=-1))[..., 0]
    raise ValueError(f"kind must be 'mse' or 'cross_entropy'; got {kind!r}")


def plot_loss_landscape(
    kind: str = "cross_entropy",
    *,
    limits: tuple[float, float] = (-4.0, 4.0),
    resolution: int = 201,
    levels: Any = None,
    ax: Optional[Axes] = None,
) -> Axes:
    r"""Filled contours of :func:`loss_landscape` over (correct, other) activations.

    Parameters
    ----------
    kind : {"mse", "cross_entropy"}, default "cross_entropy"
    limits : (float, float), default (-4, 4)
        Range of both activations.
    resolution : int, default 201
        Grid points per axis.
    levels : array_like, optional
        Contour levels; default ``0, 0.5, ..., 10`` for both kinds, so two
        panels side by side share one colour scale.
    ax : matplotlib Axes, optional

    Returns
    -------
    Axes
        With a colour bar, and the loss minimum (MSE) or the decision line
        :math:`x = y` (cross-entropy) marked.

    Examples
    --------
    >>> import scratchnet as sn
    >>> ax = sn.plotting.plot_loss_landscape("mse")
    >>> ax.get_lines()[0].get_xydata().tolist()   # the minimum of the bowl
    [[1.0, -1.0]]
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    grid = np.linspace(*limits, check_positive_int(resolution, "resolution", minimum=2))
    correct, other = np.meshgrid(grid, grid)
    loss = loss_landscape(kind, correct, other)
    levels = np.linspace(0.0, 10.0, 21) if levels is None else levels
    ax = _new_axes(ax, figsize=(5.2, 4.4))
    filled = ax.contourf(correct, other, loss, levels=levels, cmap="viridis",
                         extend="max")
    ax.contour(correct, other, loss, levels=filled.levels[::2], colors="white",
               linewidths=0.5, alpha=0.6)
    ax.figure.colorbar(filled, ax=ax, label="loss (nats)" if kind != "mse" else "loss")
    if kind == "mse":
        ax.plot([1.0], [-1.0], marker="*", ms=14, color=CLASS_COLORS[4], ls="none",
                label="minimum (1, -1)")
        ax.set_title(r"MSE: $(x-1)^2 + (y+1)^2$")
    else:
        ax.plot(limits, limits, color=CLASS_COLORS[4], ls="--", label="$x = y$")
        ax.set_title(r"cross-entropy: $-\log \frac{e^x}{e^x + e^y}$")
    ax.set(xlabel="activation of the correct unit $x$",
           ylabel="activation of the other unit $y$", aspect="equal")
    ax.legend(loc="upper left", fontsize="small")
    return ax


def plot_margin_losses(margins: Any = None, *, ax: Optional[Axes] = None) -> Axes:
    r"""Log loss :math:`\ln(1 + e^{-m})` and hinge loss :math:`\max(0, 1 - m)`.

    Parameters
    ----------
    margins : array_like, shape (n,), optional
        Values of the margin :math:`m = 2 y s(x)`; default 401 points on
        :math:`[-4, 4]`.
    ax : matplotlib Axes, optional

    Returns
    -------
    Axes
        Lines: log loss, hinge loss, 0-1 loss :math:`[m \le 0]`.

    Notes
    -----
    The log loss is :math:`-\log \sigma(m)`, computed with
    :func:`scratchnet.log_sigmoid` (no overflow for any margin).  It is about
    :math:`-m` for :math:`m \ll -1`, like the hinge, but it never reaches 0:
    even a confident correct answer is pushed to become more confident, by
    less and less.

    Examples
    --------
    >>> import scratchnet as sn
    >>> ax = sn.plotting.plot_margin_losses([-1.0, 0.0, 2.0])
    >>> ax.get_lines()[1].get_ydata().tolist()   # hinge
    [2.0, 1.0, 0.0]
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    m = np.linspace(-4.0, 4.0, 401) if margins is None else margins
    m = as_float_array(m, "margins").reshape(-1)
    ax = _new_axes(ax)
    ax.plot(m, -log_sigmoid(m), color=CLASS_COLORS[0], lw=2,
            label=r"log loss $\ln(1 + e^{-m})$")
    ax.plot(m, np.maximum(0.0, 1.0 - m), color=CLASS_COLORS[1], lw=2, ls="--",
            label=r"hinge $\max(0, 1 - m)$")
    ax.plot(m, (m <= 0).astype(float), color="0.5", lw=1, ls=":",
            drawstyle="steps-mid", label=r"0-1 loss $[m \leq 0]$")
    ax.set(xlabel=r"margin $m = 2\,y\,s(x)$", ylabel="loss")
    ax.legend()
    return ax


class GaussianFit(NamedTuple):
    r"""A Gaussian :math:`N(\mu, \sigma^2)` fitted to a density, and the KL reached.

    Returned by :func:`fit_gaussian_by_kl`.

    Parameters
    ----------
    mu, sigma : float
        The mean and standard deviation of the fitted Gaussian.
    kl : float
        The divergence the fit minimised, in nats.

    Examples
    --------
    >>> import scratchnet as sn
    >>> fit = sn.plotting.GaussianFit(mu=0.0, sigma=1.0, kl=0.25)
    >>> fit.sigma
    1.0
    """

    mu: float
    sigma: float
    kl: float


def _gaussian_masses(grid: np.ndarray, widths: np.ndarray, mu: Any, sigma: Any
                     ) -> np.ndarray:
    """Discretised N(mu, sigma^2) on ``grid``, rows normalised to sum to 1."""
    z = (grid - np.asarray(mu)[..., None]) / np.asarray(sigma)[..., None]
    masses = np.exp(-0.5 * z * z) * widths
    return masses / masses.sum(axis=-1, keepdims=True)


def fit_gaussian_by_kl(p: Any, grid: Any, direction: str = "forward") -> GaussianFit:
    r"""Fit one Gaussian to a density on a grid by minimising KL in one direction.

    Parameters
    ----------
    p : array_like, shape (n,)
        Density values (need not be normalised) at the points of ``grid``.
    grid : array_like, shape (n,)
        Increasing points; each is the centre of a cell of width
        ``np.gradient(grid)``.
    direction : {"forward", "reverse"}, default "forward"
        ``"forward"`` minimises :math:`KL(P \,\|\, Q)` (mode covering),
        ``"reverse"`` minimises :math:`KL(Q \,\|\, P)` (mode seeking).

    Returns
    -------
    GaussianFit
        ``(mu, sigma, kl)``, with ``kl`` the divergence reached, from
        :func:`scratchnet.kl_divergence` on the discretised densities.

    Notes
    -----
    :math:`KL(P \,\|\, Q) = H(P, Q) - H(P)`, and for Gaussian :math:`Q` the
    cross-entropy is minimised by matching moments, :math:`\mu = E_P[x]`,
    :math:`\sigma^2 = \operatorname{Var}_P[x]` (the forward fit, in closed
    form on the grid).  The reverse fit has no closed form: it is a grid
    search over :math:`(\mu, \sigma)`: 81 x 41 candidates spanning the grid,
    then 81 x 41 again within one step of the best (steps 40 times finer in
    :math:`\mu`, 20 times in :math:`\sigma`).  For
    a mixture of separated modes it lands on one of them; exact ties go to
    the leftmost mode.

    Examples
    --------
    >>> import scratchnet as sn
    >>> grid = np.linspace(-8, 8, 801)
    >>> p = np.exp(-0.5 * (grid - 3) ** 2) + np.exp(-0.5 * (grid + 3) ** 2)
    >>> fit = sn.plotting.fit_gaussian_by_kl(p, grid, "forward")
    >>> print(f"{fit.mu:.3f} {fit.sigma:.3f}")   # sigma^2 = 1 + 3^2
    0.000 3.162
    >>> fit = sn.plotting.fit_gaussian_by_kl(p, grid, "reverse")
    >>> print(f"{fit.mu:.2f} {fit.sigma:.2f}")   # about one mode, N(-3, 1)
    -2.98 1.03
    """
    grid = as_float_array(grid, "grid", allow_inf=False).reshape(-1)
    p = as_float_array(p, "p", allow_inf=False).reshape(-1)
    if grid.size < 3 or p.shape != grid.shape or np.any(np.diff(grid) <= 0):
        raise ValueError("grid must be at least 3 increasing points and p the same "
                         f"shape; got grid {grid.shape}, p {p.shape}")
    if np.any(p < 0) or not p.sum() > 0:
        raise ValueError("p must be non-negative density values, not all 0")
    widths = np.gradient(grid)
    masses = p * widths / np.sum(p * widths)
    if direction == "forward":
        mu = float(masses @ grid)
        sigma = float(np.sqrt(masses @ (grid - mu) ** 2))
        return GaussianFit(mu, sigma, float(kl_divergence(
            masses, _gaussian_masses(grid, widths, mu, sigma))))
    if direction != "reverse":
        raise ValueError(f"direction must be 'forward' or 'reverse'; got {direction!r}")
    mu_lo, mu_hi = grid[0], grid[-1]
    sigma_lo, sigma_hi = 2 * widths.min(), (grid[-1] - grid[0]) / 2
    for _ in range(2):  # coarse search, then a finer one around the best
        mus, sigmas = np.meshgrid(np.linspace(mu_lo, mu_hi, 81),
                                  np.linspace(sigma_lo, sigma_hi, 41), indexing="ij")
        q = _gaussian_masses(grid, widths, mus.ravel(), sigmas.ravel())
        kls = kl_divergence(q, np.broadcast_to(masses, q.shape), axis=-1)
        best = int(np.argmin(kls))
        mu_step, sigma_step = (mu_hi - mu_lo) / 80, (sigma_hi - sigma_lo) / 40
        mu, sigma = mus.flat[best], sigmas.flat[best]
        mu_lo, mu_hi = mu - mu_step, mu + mu_step
        sigma_lo, sigma_hi = max(sigma - sigma_step, sigma_lo), sigma + sigma_step
    return GaussianFit(float(mu), float(sigma), float(kls[best]))


def plot_kl_fits(grid: Any = None, p: Any = None, *, ax: Optional[Axes] = None
                 ) -> Axes:
    r"""A two-mode density and its Gaussian fits by :math:`KL(P\|Q)`, :math:`KL(Q\|P)`.

    Parameters
    ----------
    grid : array_like, shape (n,), optional
        Default 801 points on :math:`[-6, 6]`.
    p : array_like, shape (n,), optional
        Density on ``grid``; default the mixture
        :math:`0.55\, N(-2, 0.6^2) + 0.45\, N(2, 0.6^2)`.
    ax : matplotlib Axes, optional

    Returns
    -------
    Axes
        Lines: :math:`P`, the forward (mode-covering) fit, the reverse
        (mode-seeking) fit; the fitted parameters are in the legend and
        come from :func:`fit_gaussian_by_kl`.

    Examples
    --------
    >>> import scratchnet as sn
    >>> ax = sn.plotting.plot_kl_fits()
    >>> len(ax.get_lines())
    3
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    grid = np.linspace(-6.0, 6.0, 801) if grid is None else grid
    grid = as_float_array(grid, "grid", allow_inf=False).reshape(-1)
    if p is None:
        p = GaussianClasses([-2.0, 2.0], [0.6, 0.6], [0.55, 0.45]).density(grid)
    p = as_float_array(p, "p").reshape(-1)
    ax = _new_axes(ax)
    ax.fill_between(grid, p, color="0.85", lw=0)
    ax.plot(grid, p, color="black", lw=2, label="$P$ (two modes)")
    styles = {"forward": (CLASS_COLORS[0], "--", r"KL(P\,\|\,Q)", "mode covering"),
              "reverse": (CLASS_COLORS[1], "-.", r"KL(Q\,\|\,P)", "mode seeking")}
    for direction, (color, ls, kl, what) in styles.items():
        fit = fit_gaussian_by_kl(p, grid, direction)
        q = GaussianClasses([fit.mu], [fit.sigma]).density(grid)
        ax.plot(grid, q, color=color, ls=ls, lw=2,
                label=rf"$\arg\min_Q {kl}$: $\mu$={fit.mu:.2f}, "
                      rf"$\sigma$={fit.sigma:.2f} ({what})")
    ax.set(xlabel="$x$", ylabel="density", ylim=(0, None))
    ax.legend(fontsize="small")
    return ax


def _ece(counts: np.ndarray, confidence: np.ndarray, correct: np.ndarray) -> float:
    """ECE from per-bin counts and sums of confidence and of correct predictions."""
    return float(np.abs(correct - confidence).sum() / max(counts.sum(), 1.0))


def _calibration_bins(probs: Any, targets: Any, n_bins: int
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per confidence bin: count, summed confidence, number correct."""
    probs = as_float_array(probs, "probs")
    if probs.ndim != 2:
        raise ValueError(f"probs must have shape (n, M); got {probs.shape}")
    check_distribution(probs, "probs")
    targets = as_class_indices(targets, probs.shape[1])
    if targets.shape != probs.shape[:1]:
        raise ValueError(f"targets must have shape ({probs.shape[0]},); "
                         f"got {targets.shape}")
    n_bins = check_positive_int(n_bins, "n_bins")
    confidence = probs.max(axis=1)
    correct = (probs.argmax(axis=1) == targets).astype(float)
    # Bin b holds the confidences in (b / n_bins, (b + 1) / n_bins]; 0 goes to bin 0.
    bins = np.searchsorted(np.linspace(0.0, 1.0, n_bins + 1)[1:-1], confidence)
    return (np.bincount(bins, minlength=n_bins).astype(float),
            np.bincount(bins, weights=confidence, minlength=n_bins),
            np.bincount(bins, weights=correct, minlength=n_bins))


def expected_calibration_error(probs: Any, targets: Any, n_bins: int = 10) -> float:
    r"""Expected calibration error: the gap between confidence and accuracy.

    Parameters
    ----------
    probs : array_like, shape (n, M)
        Predicted class probabilities, each row a distribution.
    targets : array_like of int, shape (n,)
        True classes in ``[0, M)``.
    n_bins : int, default 10
        Equal-width bins of the confidence on :math:`[0, 1]`.

    Returns
    -------
    float
        .. math::

            \mathrm{ECE} = \sum_b \frac{n_b}{n}
                \bigl|\operatorname{acc}_b - \operatorname{conf}_b\bigr| ,

        with :math:`\operatorname{conf}_b` the mean confidence (largest
        probability of a row) and :math:`\operatorname{acc}_b` the fraction
        of correct argmax predictions among the :math:`n_b` samples of bin
        :math:`b`.

    Notes
    -----
    Bin :math:`b` is the interval :math:`(b/B, (b+1)/B]` (the first also
    holds 0), as in Guo et al. (2017).  A model that outputs the Bayes
    posterior is calibrated: its ECE tends to 0 as :math:`n` grows.

    Examples
    --------
    >>> import scratchnet as sn
    >>> probs = [[0.9, 0.1], [0.9, 0.1], [0.6, 0.4], [0.3, 0.7]]
    >>> print(f"{sn.plotting.expected_calibration_error(probs, [0, 1, 0, 1]):.4f}")
    0.3750
    """
    return _ece(*_calibration_bins(probs, targets, n_bins))


def plot_reliability_diagram(
    probs: Any, targets: Any, *, n_bins: int = 10, ax: Optional[Axes] = None
) -> Axes:
    r"""Reliability diagram: accuracy per confidence bin against the diagonal.

    Parameters
    ----------
    probs : array_like, shape (n, M)
        Predicted class probabilities.
    targets : array_like of int, shape (n,)
        True classes.
    n_bins : int, default 10
    ax : matplotlib Axes, optional

    Returns
    -------
    Axes
        One bar per bin (height: accuracy, 0 for empty bins), the diagonal of
        perfect calibration, the mean confidence of each non-empty bin as
        dots, and :func:`expected_calibration_error` in the title.

    Examples
    --------
    >>> import scratchnet as sn
    >>> ax = sn.plotting.plot_reliability_diagram([[0.9, 0.1], [0.2, 0.8]], [0, 0],
    ...                                           n_bins=5)
    >>> [round(bar.get_height(), 2) for bar in ax.patches]
    [0.0, 0.0, 0.0, 0.0, 1.0]
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    counts, confidence, correct = _calibration_bins(probs, targets, n_bins)
    ece = _ece(counts, confidence, correct)
    filled = counts > 0
    accuracy = np.divide(correct, counts, out=np.zeros(n_bins), where=filled)
    mean_confidence = np.divide(confidence, counts, out=np.zeros(n_bins), where=filled)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    ax = _new_axes(ax, figsize=(4.8, 4.6))
    ax.bar(edges[:-1], accuracy, width=1.0 / n_bins, align="edge",
           color=CLASS_COLORS[0], alpha=0.75, edgecolor="white", label="accuracy")
    ax.plot(mean_confidence[filled], accuracy[filled], "o", color=CLASS_COLORS[1],
            label="(mean confidence, accuracy)")
    ax.plot([0, 1], [0, 1], color="black", ls="--", lw=1, label="perfect calibration")
    ax.set(xlabel="confidence (probability of the predicted class)",
           ylabel="accuracy", xlim=(0, 1), ylim=(0, 1), aspect="equal",
           title=f"reliability diagram, ECE = {ece:.3f}")
    ax.legend(loc="upper left", fontsize="small")
    return ax


def plot_oracle(
    task: Any, model: Any, *, n: int = 1000, rng: Any = None,
    ax: Optional[Axes] = None,
) -> Axes:
    r"""A model's :math:`q(c \mid x)` against the true :math:`P(c \mid x)` on samples.

    Parameters
    ----------
    task : GaussianClasses
        The generative model: its samples and its posterior (the "oracle").
    model : object with ``predict_proba`` or callable
        Maps x (n, D) to probabilities (n, M).
    n : int, default 1000
        Samples :math:`x \sim P(X)`.
    rng : numpy.random.Generator or int, optional
    ax : matplotlib Axes, optional

    Returns
    -------
    Axes
        One scatter (collection) per class with offsets
        :math:`(P(c \mid x_j), q(c \mid x_j))`, and the diagonal :math:`q = P`.

    Examples
    --------
    >>> import scratchnet as sn
    >>> task = sn.tasks.separated()
    >>> ax = sn.plotting.plot_oracle(task, task.posterior, n=50, rng=0)
    >>> offsets = ax.collections[0].get_offsets()
    >>> bool(np.allclose(offsets[:, 0], offsets[:, 1]))   # the oracle itself
    True
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    x, _ = task.sample(check_positive_int(n, "n"), as_generator(rng))
    posterior = np.asarray(task.posterior(x))
    probs = _predict(model, x)
    if probs.shape != posterior.shape:
        raise ValueError(f"model must return probabilities of shape {posterior.shape}; "
                         f"got {probs.shape}")
    colors = _class_colors(posterior.shape[1])
    ax = _new_axes(ax, figsize=(4.8, 4.6))
    for i in range(posterior.shape[1]):
        ax.scatter(posterior[:, i], probs[:, i], s=8, alpha=0.5, color=colors[i],
                   lw=0, label=f"$c_{i + 1}$")
    ax.plot([0, 1], [0, 1], color="black", ls="--", lw=1, label="$q = P$")
    ax.set(xlabel=r"Bayes posterior $P(c\mid x)$", ylabel=r"network $q(c\mid x)$",
           xlim=(-0.02, 1.02), ylim=(-0.02, 1.02), aspect="equal")
    ax.legend(loc="upper left", fontsize="small")
    return ax


def plot_posterior_map(
    task: Any,
    model: Optional[Callable[..., Any]] = None,
    *,
    limits: Optional[Sequence[tuple[float, float]]] = None,
    resolution: int = 200,
    samples: int = 0,
    rng: Any = None,
    levels: Sequence[float] = (0.5, 0.9),
    ax: Optional[Axes] = None,
) -> Axes:
    r"""A two-dimensional posterior map: class colours blended by probability.

    Parameters
    ----------
    task : GaussianClasses
        A task with ``task.dim == 2``.
    model : object with ``predict_proba`` or callable, optional
        Draw its :math:`q(c \mid x)` instead of the Bayes posterior.
    limits : ((x0, x1), (y0, y1)), optional
        Default: ``task.support()`` in each coordinate.
    resolution : int, default 200
        Pixels per axis.
    samples : int, default 0
        Also scatter this many samples of the task, coloured by class.
    rng : numpy.random.Generator or int, optional
    levels : sequence of float, default (0.5, 0.9)
        Contours of the largest class probability :math:`\max_c q(c \mid x)`
        (levels outside the range of the map are skipped).
    ax : matplotlib Axes, optional

    Returns
    -------
    Axes
        Its image is ``probs @ colours``: each pixel mixes the RGB colours of
        the classes with weights :math:`q(c \mid x)`, so pure colours are
        certain regions and muddy ones uncertain.

    Examples
    --------
    >>> import scratchnet as sn
    >>> covariances = np.stack([np.eye(2)] * 3)
    >>> task = sn.GaussianClasses([[0, 0], [3, 0], [0, 3]], covariances)
    >>> ax = sn.plotting.plot_posterior_map(task, resolution=20)
    >>> ax.images[0].get_array().shape
    (20, 20, 3)
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    if task.dim != 2:
        raise ValueError(f"task must be two-dimensional; got dim {task.dim}")
    resolution = check_positive_int(resolution, "resolution", minimum=2)
    if limits is None:
        low, high = (np.broadcast_to(np.asarray(b, dtype=float), (2,))
                     for b in task.support())
        limits = list(zip(low, high))
    (x0, x1), (y0, y1) = limits
    xx, yy = np.meshgrid(np.linspace(x0, x1, resolution),
                         np.linspace(y0, y1, resolution))
    points = np.column_stack([xx.ravel(), yy.ravel()])
    probs = task.posterior(points) if model is None else _predict(model, points)
    probs = np.asarray(probs, dtype=float)
    colors = np.array(_class_colors(probs.shape[1]))
    ax = _new_axes(ax, figsize=(5.2, 4.6))
    image = np.clip(probs @ colors, 0.0, 1.0).reshape(resolution, resolution, 3)
    ax.imshow(image, origin="lower", extent=(x0, x1, y0, y1), aspect="auto",
              interpolation="bilinear")
    confidence = probs.max(axis=1).reshape(xx.shape)
    levels = [v for v in sorted(levels) if confidence.min() < v < confidence.max()]
    if levels:  # a constant field has no contours (matplotlib would warn)
        contours = ax.contour(xx, yy, confidence, levels=levels, colors="black",
                              linewidths=0.8)
        ax.clabel(contours, fontsize="x-small", fmt="%.2g")
    handles = [Patch(color=colors[i], label=f"$c_{i + 1}$")
               for i in range(probs.shape[1])]
    if samples:
        x, c = task.sample(check_positive_int(samples, "samples"), as_generator(rng))
        ax.scatter(x[:, 0], x[:, 1], c=colors[c], s=14, edgecolors="black",
                   linewidths=0.4)
    title = r"Bayes posterior $P(c\mid x)$" if model is None else r"$q(c\mid x)$"
    ax.set(xlabel="$x_1$", ylabel="$x_2$", xlim=(x0, x1), ylim=(y0, y1), title=title)
    ax.legend(handles=handles, loc="upper right", fontsize="small")
    return ax
