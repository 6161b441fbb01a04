r"""What a loss rewards: its landscape, its margins and the direction of KL.

Three side stories of the derivation, one figure each:
:func:`plot_loss_landscape` shows why squared error punishes an output for
being "too right" while the cross-entropy does not;
:func:`plot_margin_losses` sets the log loss beside the hinge loss of a
support vector machine; :func:`plot_kl_fits` shows that minimising
:math:`KL(P \,\|\, Q)`, the direction of the cross-entropy, covers every
mode of :math:`P`, while :math:`KL(Q \,\|\, P)` picks one.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
from matplotlib.axes import Axes

from .._validation import as_float_array, check_positive_int
from ..gaussian import GaussianClasses
from ..metrics import fit_gaussian_by_kl, loss_landscape
from ..softmax import log_sigmoid
from ._shared import as_increasing, as_interval, check_ax, new_axes
from .style import CLASS_COLORS

__all__ = ["plot_kl_fits", "plot_loss_landscape", "plot_margin_losses"]


def plot_loss_landscape(
    kind: str = "cross_entropy",
    *,
    limits: tuple[float, float] = (-4.0, 4.0),
    resolution: int = 201,
    levels: Any = None,
    ax: Optional[Axes] = None,
) -> Axes:
    r"""Filled contours of the loss of one sample over its two activations.

    The values are :func:`scratchnet.metrics.loss_landscape` on a square grid
    of (correct, other) activations.

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
    if kind not in ("mse", "cross_entropy"):
        raise ValueError(f"kind must be 'mse' or 'cross_entropy'; got {kind!r}")
    limits = as_interval(limits, "limits")
    levels = (np.linspace(0.0, 10.0, 21) if levels is None
              else as_increasing(levels, "levels"))
    check_ax(ax)
    grid = np.linspace(*limits, check_positive_int(resolution, "resolution", minimum=2))
    correct, other = np.meshgrid(grid, grid)
    loss = loss_landscape(kind, correct, other)
    ax = new_axes(ax, figsize=(5.2, 4.4))
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
    m = as_float_array(m, "margins", allow_inf=False).reshape(-1)
    ax = new_axes(ax)
    ax.plot(m, -log_sigmoid(m), color=CLASS_COLORS[0], lw=2,
            label=r"log loss $\ln(1 + e^{-m})$")
    ax.plot(m, np.maximum(0.0, 1.0 - m), color=CLASS_COLORS[1], lw=2, ls="--",
            label=r"hinge $\max(0, 1 - m)$")
    ax.plot(m, (m <= 0).astype(float), color="0.5", lw=1, ls=":",
            drawstyle="steps-mid", label=r"0-1 loss $[m \leq 0]$")
    ax.set(xlabel=r"margin $m = 2\,y\,s(x)$", ylabel="loss")
    ax.legend()
    return ax


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
        come from :func:`scratchnet.metrics.fit_gaussian_by_kl`.

    Examples
    --------
    >>> import scratchnet as sn
    >>> ax = sn.plotting.plot_kl_fits()
    >>> len(ax.get_lines())
    3
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    grid = np.linspace(-6.0, 6.0, 801) if grid is None else grid
    grid = as_increasing(grid, "grid")
    if p is None:
        p = GaussianClasses([-2.0, 2.0], [0.6, 0.6], [0.55, 0.45]).density(grid)
    p = as_float_array(p, "p", allow_inf=False)
    if p.shape != grid.shape:
        raise ValueError(f"p must have the shape of grid {grid.shape}; got {p.shape}")
    if np.any(p < 0):
        raise ValueError(f"p must be non-negative density values; got {p.min():g}")
    ax = new_axes(ax)
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
