r"""The central figure: the Bayes posterior and a network's outputs over x.

:func:`plot_posterior_fit` puts the two sides of the claim on one plot: the
Bayes posterior of a one-dimensional task (solid) and the outputs of a
network trained with the cross-entropy (dashed), over the class densities
:math:`P(x \mid c) P(c)`, whose sum is the input density :math:`P(x)` that
weights the loss.  :func:`plot_posterior_map` shows the same for inputs in
the plane, as a map whose colours blend the classes' by probability.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Callable, Optional

import numpy as np
from matplotlib.axes import Axes
from matplotlib.legend_handler import HandlerTuple
from matplotlib.patches import Patch

from .._validation import as_float_array, as_generator, check_positive_int
from ._shared import (
    as_increasing,
    as_interval,
    as_probabilities,
    check_ax,
    check_task,
    class_colors,
    model_function,
    new_axes,
    predict_probabilities,
    shade,
)

__all__ = ["plot_posterior_fit", "plot_posterior_map"]


def plot_posterior_fit(
    task: Any,
    x: Any,
    probs: Any = None,
    *,
    labels: Optional[Sequence[str]] = None,
    band: Any = None,
    densities: bool = True,
    boundaries: bool = True,
    ax: Optional[Axes] = None,
) -> Axes:
    r"""The Bayes posterior (solid), a network's outputs (dashed) and the densities.

    Parameters
    ----------
    task : GaussianClasses
        A one-dimensional task (``task.dim == 1``) with ``M`` classes.
    x : array_like, shape (n,)
        The inputs where the curves are drawn (and where ``probs`` were
        taken): finite and increasing.
    probs : array_like, shape (n, M) or (k, n, M), optional
        The network's :math:`q(c \mid x)` on ``x`` (rows summing to 1), one
        array per snapshot, drawn as dashed lines in each class's colour, from
        light (first) to dark (last).
    labels : sequence of k str, optional
        Legend text of each snapshot, e.g. ``"1000 steps"``.
    band : array_like, shape (k, 2, n, M), optional
        The lowest and highest :math:`q(c \mid x)` over seeds at each snapshot,
        shaded in the snapshot's colour around its dashed line (the median).
    densities : bool, default True
        Shade :math:`P(x \mid c) P(c)` of each class under the curves, read on
        the right axis (the same scale; the left one reads probabilities).
    boundaries : bool, default True
        For two classes, mark the Bayes decision boundaries in the plotted
        range, the inputs where :math:`P(c_1 \mid x) = 1/2`
        (``task.decision_boundaries()``; the sparse-tail task has two, the
        second at :math:`x = 6.418`), as dotted vertical lines.
    ax : matplotlib Axes, optional

    Returns
    -------
    Axes
        Its lines are the M posteriors (labelled :math:`P(c_i \mid x)`), then
        the snapshots, class by class, then the decision boundaries.  The
        legend stands outside the axes, on the right, where it covers no
        curve (save with ``bbox_inches="tight"``, or leave room on the right).

    Notes
    -----
    The shaded areas are the joint densities :math:`P(x, c) = P(x \mid c)
    P(c)`; their sum is :math:`P(x)` and their ratio is the posterior,
    :math:`P(c \mid x) = P(x, c) / P(x)`.

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> x = np.linspace(-4, 7, 100)
    >>> ax = sn.plotting.plot_posterior_fit(sn.tasks.separated(), x)
    >>> [line.get_label() for line in ax.get_lines()]
    ['$P(c_1\\mid x)$', '$P(c_2\\mid x)$', 'Bayes decision boundary: x = 1.500']
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    check_task(task, 1)
    x, num_classes = as_increasing(x, "x"), task.num_classes
    for name, flag in (("densities", densities), ("boundaries", boundaries)):
        if not isinstance(flag, (bool, np.bool_)):
            raise TypeError(f"{name} must be True or False; got {flag!r}")
    if probs is not None:
        probs = as_probabilities(probs, "probs")
        probs = probs[None] if probs.ndim == 2 else probs
        if probs.ndim != 3 or probs.shape[1:] != (x.size, num_classes):
            raise ValueError(f"probs must have shape (n, M) or (k, n, M) with n = "
                             f"{x.size}, M = {num_classes}; got {probs.shape}")
        labels = _snapshot_labels(labels, probs.shape[0])
    if band is not None:
        band = _band(band, probs, (2, x.size, num_classes))
    check_ax(ax)
    posterior = np.asarray(task.posterior(x))
    colors = class_colors(num_classes)
    ax = new_axes(ax)
    if densities:
        joint = np.exp(np.asarray(task.log_joint(x)))
        for i in range(num_classes):
            ax.fill_between(x, joint[:, i], color=colors[i], alpha=0.18, lw=0,
                            label=rf"$P(x\mid c_{i + 1})P(c_{i + 1})$")
    for i in range(num_classes):
        ax.plot(x, posterior[:, i], color=colors[i], lw=2.5,
                label=rf"$P(c_{i + 1}\mid x)$")
    snapshots: dict = {}   # the first line of a snapshot -> its lines, for the legend
    if probs is not None:
        k = probs.shape[0]
        shades = np.linspace(-0.6, 0.35, k) if k > 1 else [0.35]
        for j in range(k):
            drawn, fills = [], []
            for i in range(num_classes):
                color = shade(colors[i], shades[j])
                drawn += ax.plot(x, probs[j, :, i], ls="--", lw=1.5, color=color,
                                 label=rf"$q(c\mid x)$, {labels[j]}" if i == 0 else "_")
                if band is not None:
                    fills.append(ax.fill_between(
                        x, band[j, 0, :, i], band[j, 1, :, i], lw=0, color=color,
                        alpha=0.2, label="range over seeds" if i == j == 0 else "_"))
            snapshots[drawn[0]] = tuple(drawn)
            if fills and j == 0:
                snapshots[fills[0]] = tuple(fills)
    if boundaries and num_classes == 2 and hasattr(task, "decision_boundaries"):
        shown = [b for b in task.decision_boundaries() if x[0] <= b <= x[-1]]
        for j, b in enumerate(shown):
            where = ", ".join(f"{v:.3f}" for v in shown)
            ax.axvline(b, color="0.25", ls=":", lw=1.2,
                       label=f"Bayes decision boundary: x = {where}" if j == 0 else "_")
            right = b > (x[0] + x[-1]) / 2  # the text on the side with room
            ax.annotate(f"x = {b:.3f}", (b, 1.0), xytext=(-3 if right else 3, -3),
                        textcoords="offset points", ha="right" if right else "left",
                        va="top", fontsize="x-small", color="0.25")
    ax.set(xlabel="$x$", ylabel=r"probability $P(c\mid x)$, $q(c\mid x)$",
           xlim=(x[0], x[-1]), ylim=(-0.02, 1.02))
    if densities:   # their own axis label, on the right, on the same scale
        right = ax.secondary_yaxis("right")
        right.set_ylabel(r"density $P(x\mid c)\,P(c)$")
    # outside the axes, to the right: the curves and densities fill the plot; a
    # snapshot's entry shows its dashes in each class's colour
    handles, texts = ax.get_legend_handles_labels()
    ax.legend([snapshots.get(h, h) for h in handles], texts, fontsize="small",
              loc="upper left", bbox_to_anchor=(1.1 if densities else 1.02, 1.0),
              borderaxespad=0.0, frameon=False,
              handler_map={tuple: HandlerTuple(ndivide=None, pad=0.3)})
    return ax


def _snapshot_labels(labels: Any, k: int) -> list[str]:
    """One legend text per snapshot (default ``snapshot j``)."""
    if labels is None:
        return [f"snapshot {j + 1}" for j in range(k)]
    if isinstance(labels, str) or not all(isinstance(t, str) for t in labels):
        raise TypeError(f"labels must be a sequence of strings, one per snapshot; "
                        f"got {labels!r}")
    if len(labels) != k:
        raise ValueError(f"labels must have one entry per snapshot ({k}); "
                         f"got {len(labels)}")
    return list(labels)


def _band(band: Any, probs: Any, shape: tuple[int, int, int]) -> np.ndarray:
    """The (k, 2, n, M) lowest and highest probabilities around the snapshots."""
    if probs is None:
        raise ValueError("band needs probs: it is the range around each snapshot")
    band = as_float_array(band, "band")
    if band.shape != (probs.shape[0], *shape):
        raise ValueError(f"band must have shape (k, 2, n, M) = "
                         f"{(probs.shape[0], *shape)}; got {band.shape}")
    if np.any((band < 0) | (band > 1)):
        raise ValueError("band must hold probabilities in [0, 1]; got values from "
                         f"{band.min():g} to {band.max():g}")
    return band


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
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> covariances = np.stack([np.eye(2)] * 3)
    >>> task = sn.GaussianClasses([[0, 0], [3, 0], [0, 3]], covariances)
    >>> ax = sn.plotting.plot_posterior_map(task, resolution=20)
    >>> ax.images[0].get_array().shape
    (20, 20, 3)
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    check_task(task, 2)
    if model is not None:
        model_function(model)
    resolution = check_positive_int(resolution, "resolution", minimum=2)
    samples = check_positive_int(samples, "samples", minimum=0)
    levels = as_float_array(levels, "levels", allow_inf=False).reshape(-1)
    if np.any((levels <= 0) | (levels >= 1)):
        raise ValueError(f"levels must be probabilities in (0, 1); got "
                         f"{levels.tolist()}")
    check_ax(ax)
    if limits is None:
        low, high = (np.broadcast_to(np.asarray(b, dtype=float), (2,))
                     for b in task.support())
        limits = list(zip(low, high))
    if not isinstance(limits, (tuple, list)) or len(limits) != 2:
        raise ValueError(f"limits must be ((x0, x1), (y0, y1)); got {limits!r}")
    (x0, x1), (y0, y1) = (as_interval(v, f"limits[{i}]") for i, v in enumerate(limits))
    xx, yy = np.meshgrid(np.linspace(x0, x1, resolution),
                         np.linspace(y0, y1, resolution))
    points = np.column_stack([xx.ravel(), yy.ravel()])
    probs = (task.posterior(points) if model is None
             else predict_probabilities(model, points, task.num_classes))
    probs = np.asarray(probs, dtype=float)
    colors = np.array(class_colors(probs.shape[1]))
    ax = new_axes(ax, figsize=(5.2, 4.6))
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
        x, c = task.sample(samples, as_generator(rng))
        ax.scatter(x[:, 0], x[:, 1], c=colors[c], s=14, edgecolors="black",
                   linewidths=0.4)
    title = r"Bayes posterior $P(c\mid x)$" if model is None else r"$q(c\mid x)$"
    ax.set(xlabel="$x_1$", ylabel="$x_2$", xlim=(x0, x1), ylim=(y0, y1), title=title)
    ax.legend(handles=handles, loc="upper right", fontsize="small")
    return ax
