r"""Is :math:`q(c \mid x)` the posterior?  Two checks on samples of the task.

When the generative model is known, each output can be set against the
"oracle", the exact :math:`P(c \mid x)` at the same input
(:func:`plot_oracle`): a perfect fit lies on the diagonal.  When it is not,
the outputs can still be checked against frequencies: among the inputs
where the model's confidence is about 0.8 it should be right four times in
five (:func:`plot_reliability_diagram`, with the numbers of
:func:`scratchnet.metrics.calibration_bins`).
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
from matplotlib.axes import Axes
from matplotlib.patches import Patch

from .._validation import as_generator, check_positive_int
from ..metrics import calibration_bins, expected_calibration_error
from ._shared import (
    check_ax,
    check_task,
    class_colors,
    model_function,
    new_axes,
    predict_probabilities,
)
from .style import CLASS_COLORS

__all__ = ["plot_oracle", "plot_reliability_diagram"]


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
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> task = sn.tasks.separated()
    >>> ax = sn.plotting.plot_oracle(task, task.posterior, n=50, rng=0)
    >>> offsets = ax.collections[0].get_offsets()
    >>> bool(np.allclose(offsets[:, 0], offsets[:, 1]))   # the oracle itself
    True
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    check_task(task), model_function(model), check_ax(ax)
    x, _ = task.sample(check_positive_int(n, "n"), as_generator(rng))
    posterior = np.asarray(task.posterior(x))
    probs = predict_probabilities(model, x, posterior.shape[1])
    colors = class_colors(posterior.shape[1])
    ax = new_axes(ax, figsize=(4.8, 4.6))
    for i in range(posterior.shape[1]):
        ax.scatter(posterior[:, i], probs[:, i], s=8, alpha=0.5, color=colors[i],
                   lw=0, label=f"$c_{i + 1}$")
    ax.plot([0, 1], [0, 1], color="black", ls="--", lw=1, label="$q = P$")
    ax.set(xlabel=r"Bayes posterior $P(c\mid x)$", ylabel=r"network $q(c\mid x)$",
           xlim=(-0.02, 1.02), ylim=(-0.02, 1.02), aspect="equal")
    ax.legend(loc="upper left", fontsize="small")
    return ax


def plot_reliability_diagram(
    probs: Any, targets: Any, *, n_bins: int = 10, min_count: int = 10,
    title: Optional[str] = None, ax: Optional[Axes] = None
) -> Axes:
    r"""Reliability diagram: accuracy per confidence bin against the diagonal.

    Parameters
    ----------
    probs : array_like, shape (n, M) or (n,)
        Predicted class probabilities (or, for two classes, the probability
        of class 1 of each sample).
    targets : array_like of int, shape (n,)
        True classes.
    n_bins : int, default 10
    min_count : int, default 10
        Bins with fewer samples are drawn pale and hatched: the accuracy of
        a handful of samples is mostly noise (a bin of one sample is at 0
        or 1 whatever the model).
    title : str, optional
        Put before the ECE in the title (e.g. the model's name).
    ax : matplotlib Axes, optional

    Returns
    -------
    Axes
        One bar per bin (height: accuracy, 0 for empty bins) with its count
        :math:`n_b` written at its foot, the diagonal of perfect calibration,
        the mean confidence of each non-empty bin as dots
        (:func:`scratchnet.metrics.calibration_bins`), and
        :func:`scratchnet.metrics.expected_calibration_error` in the title.

    Examples
    --------
    >>> import scratchnet as sn
    >>> ax = sn.plotting.plot_reliability_diagram([[0.9, 0.1], [0.2, 0.8]], [0, 0],
    ...                                           n_bins=5)
    >>> [round(bar.get_height(), 2) for bar in ax.patches]
    [0.0, 0.0, 0.0, 0.0, 1.0]
    >>> [text.get_text() for text in ax.texts]    # counts: too few to read
    ['1', '1']
    >>> ax.patches[-1].get_hatch()
    '//'
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    check_ax(ax)
    min_count = check_positive_int(min_count, "min_count")
    counts, mean_confidence, accuracy = calibration_bins(probs, targets, n_bins)
    ece = expected_calibration_error(probs, targets, n_bins)
    filled, few = counts > 0, (counts > 0) & (counts < min_count)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    ax = new_axes(ax, figsize=(4.8, 4.6))
    bars = ax.bar(edges[:-1], accuracy, width=1.0 / n_bins, align="edge",
                  color=CLASS_COLORS[0], alpha=0.75, edgecolor="white",
                  label="accuracy (samples at the foot)")
    for bar in np.array(bars.patches, dtype=object)[few]:
        bar.set(alpha=0.3, hatch="//")
    for left, n in zip(edges[:-1][filled], counts[filled]):
        ax.text(left + 0.5 / n_bins, 0.01, f"{n}", ha="center", va="bottom",
                fontsize="x-small", rotation=90 if n_bins > 15 else 0)
    ax.plot(mean_confidence[filled], accuracy[filled], "o", color=CLASS_COLORS[1],
            label="(mean confidence, accuracy)")
    ax.plot([0, 1], [0, 1], color="black", ls="--", lw=1, label="perfect calibration")
    handles = ax.get_legend_handles_labels()[0]
    if few.any():
        handles.append(Patch(facecolor=CLASS_COLORS[0], alpha=0.3, hatch="//",
                             label=f"fewer than {min_count} samples"))
    name = "" if title is None else f"{title}: "
    ax.set(xlabel="confidence (probability of the predicted class)",
           ylabel="accuracy", xlim=(0, 1), ylim=(0, 1), aspect="equal",
           title=f"{name}reliability, ECE = {ece:.3f} (n = {counts.sum():,})")
    ax.legend(handles=handles, loc="upper left", fontsize="small")
    return ax
