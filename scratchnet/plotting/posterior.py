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
from matplotlib.patches import Patch

from .._validation import as_float_array, as_generator, check_positive_int
from .style import _class_colors, _new_axes, _predict

__all__ = ["plot_posterior_fit", "plot_posterior_map"]


def plot_posterior_fit(
    task: Any,
    x: Any,
    probs: Any = None,
    *,
    labels: Optional[Sequence[str]] = None,
    band: Any = None,
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
    band : array_like, shape (k, 2, n, M), optional
        The lowest and highest :math:`q(c \mid x)` over seeds at each snapshot,
        shaded in the snapshot's grey around its dashed line (the median).
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
        if band is not None:
            band = as_float_array(band, "band")
            if band.shape != (k, 2, x.size, num_classes):
                raise ValueError(f"band must have shape (k, 2, n, M) = "
                                 f"{(k, 2, x.size, num_classes)}; got {band.shape}")
        greys = np.linspace(0.72, 0.0, k) if k > 1 else [0.0]
        for j in range(k):
            for i in range(num_classes):
                ax.plot(x, probs[j, :, i], ls="--", lw=1.5, color=str(greys[j]),
                        label=rf"$q(c\mid x)$, {labels[j]}" if i == 0 else "_")
                if band is not None:
                    ax.fill_between(x, band[j, 0, :, i], band[j, 1, :, i], lw=0,
                                    color=str(greys[j]), alpha=0.25,
                                    label="range over seeds" if i == j == 0 else "_")
    ax.set(xlabel="$x$", ylabel=r"probability; density $P(x, c)$",
           xlim=(x[0], x[-1]), ylim=(-0.02, 1.02))
    ax.legend(fontsize="small", framealpha=0.9, loc="best")
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
