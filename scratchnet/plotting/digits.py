r"""Figures of the digits study: samples needed, and confidence over training.

When the generative model is unknown (:mod:`scratchnet.experiments.digits`),
two questions get a picture each.  On data sampled from a generative model
fitted to the digits, how far is a trained network from the exact posterior,
as the training set grows (:func:`plot_kl_against_n`) and as training goes
on (:func:`plot_kl_against_steps`)?  On the real digits, how do the held-out
negative log-likelihood and the expected calibration error move while the
network trains (:func:`plot_calibration_over_training`)?  Each draws the
median over seeds as a line and their range as a band, and keeps its legend
outside the data.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np
from matplotlib.axes import Axes

from .._validation import as_float_array
from ._shared import check_ax, new_axes
from .style import CLASS_COLORS

__all__ = ["plot_calibration_over_training", "plot_kl_against_n",
           "plot_kl_against_steps"]


def _median_band(ax: Axes, x: np.ndarray, values: np.ndarray, color: Any,
                 label: str, ls: str = "-") -> None:
    """The median over the last axis as a line, its range as a band."""
    ax.fill_between(x, values.min(axis=-1), values.max(axis=-1), color=color,
                    alpha=0.2, lw=0)
    ax.plot(x, np.median(values, axis=-1), color=color, ls=ls, marker=".",
            label=label)


def _series(values: Any, name: str, shape: tuple) -> np.ndarray:
    """``values`` as a float array whose leading axes are ``shape``."""
    arr = as_float_array(values, name, allow_inf=False)
    if arr.ndim != len(shape) + 1 or arr.shape[:-1] != shape:
        raise ValueError(f"{name} must have shape {(*shape, 'S')} (S seeds); got "
                         f"shape {arr.shape}")
    return arr


def plot_kl_against_n(sizes: Sequence[int], kl: Any, *,
                      ax: Optional[Axes] = None) -> Axes:
    r"""Expected KL to the exact posterior against the training-set size (log-log).

    Parameters
    ----------
    sizes : sequence of int, length K
        Training-set sizes :math:`n`.
    kl : array_like, shape (K, S)
        :math:`E_x KL(P(C \mid x) \,\|\, q(C \mid x))` of each of S seeds.
    ax : matplotlib Axes, optional

    Returns
    -------
    Axes

    Examples
    --------
    >>> import scratchnet as sn
    >>> from scratchnet.plotting.digits import plot_kl_against_n
    >>> ax = plot_kl_against_n([100, 1000], [[0.5, 0.6], [0.1, 0.2]])
    >>> len(ax.lines)
    1
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    check_ax(ax)
    sizes = np.asarray(sizes, dtype=float)
    kl = _series(kl, "kl", sizes.shape)
    ax = new_axes(ax)
    _median_band(ax, sizes, kl, CLASS_COLORS[0], f"median over {kl.shape[1]} seeds")
    ax.set(xscale="log", yscale="log", xlabel="training samples n",
           ylabel=r"$E_x\, KL(P(C\mid x)\,\|\,q(C\mid x))$ (nats)",
           title="semi-synthetic digits: distance to the posterior")
    ax.legend(loc="lower left", fontsize="small")
    return ax


def plot_kl_against_steps(steps: Sequence[int], sizes: Sequence[int], kl: Any, *,
                          ax: Optional[Axes] = None) -> Axes:
    r"""Expected KL against training steps, one line per training-set size.

    Parameters
    ----------
    steps : sequence of int, length T
    sizes : sequence of int, length K
    kl : array_like, shape (K, T, S)
    ax : matplotlib Axes, optional

    Returns
    -------
    Axes
        Log-log; the legend, one entry per :math:`n`, to the right of the axes.

    Examples
    --------
    >>> from scratchnet.plotting.digits import plot_kl_against_steps
    >>> ax = plot_kl_against_steps([10, 100], [50], [[[1.0], [0.5]]])
    >>> len(ax.lines)
    1
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    check_ax(ax)
    steps = np.asarray(steps, dtype=float)
    kl = _series(kl, "kl", (len(sizes), len(steps)))
    ax = new_axes(ax)
    for k, n in enumerate(sizes):
        _median_band(ax, steps, kl[k], CLASS_COLORS[k % len(CLASS_COLORS)],
                     f"n = {n:,}")
    ax.set(xscale="log", yscale="log", xlabel="training steps (batches)",
           ylabel=r"$E_x\, KL(P(C\mid x)\,\|\,q(C\mid x))$ (nats)",
           title="against training steps")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    return ax


def plot_calibration_over_training(steps: Sequence[int], nll: Any, ece: Any, *,
                                   reference: Optional[tuple] = None,
                                   axes: Optional[Sequence[Axes]] = None
                                   ) -> Sequence[Axes]:
    r"""Held-out NLL and ECE of a network against training steps.

    Parameters
    ----------
    steps : sequence of int, length T
    nll, ece : array_like, shape (T, S)
        Test negative log-likelihood (nats) and expected calibration error
        of S seeds at each snapshot.
    reference : (float, float), optional
        The NLL and ECE of another model (the fitted generative model),
        drawn as horizontal lines.
    axes : two matplotlib Axes, optional

    Returns
    -------
    (Axes, Axes)

    Examples
    --------
    >>> from scratchnet.plotting.digits import plot_calibration_over_training
    >>> axes = plot_calibration_over_training([10, 100], [[0.5], [0.3]],
    ...                                       [[0.1], [0.05]], reference=(0.2, 0.02))
    >>> [len(ax.lines) for ax in axes]
    [2, 2]
    >>> import matplotlib.pyplot as plt; plt.close(axes[0].figure)
    """
    steps = np.asarray(steps, dtype=float)
    series = [_series(nll, "nll", steps.shape), _series(ece, "ece", steps.shape)]
    if axes is None:
        import matplotlib.pyplot as plt

        axes = plt.subplots(1, 2, figsize=(10, 3.8), layout="constrained")[1]
    for ax in axes:
        check_ax(ax)
    labels = ("test NLL (nats)", "test ECE (10 bins)")
    titles = ("held-out negative log-likelihood", "expected calibration error")
    for i, (ax, values) in enumerate(zip(axes, series)):
        _median_band(ax, steps, values, CLASS_COLORS[0], "network (median, range)")
        if reference is not None:
            ax.axhline(reference[i], color=CLASS_COLORS[1], ls="--",
                       label="fitted generative model")
        ax.set(xscale="log", yscale="log" if i == 0 else "linear",
               xlabel="training steps (batches)", ylabel=labels[i])
        ax.set_title(titles[i], pad=28)
        if i:
            ax.set_ylim(bottom=0)
        ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.01), fontsize="small",
                  ncol=2, frameon=False)
    return axes
