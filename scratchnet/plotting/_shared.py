"""Helpers the figure modules share: axes, colours and checks of their arguments.

Public names in a private module: each plotting module imports them from here,
none is part of :mod:`scratchnet.plotting`'s API.
"""

from __future__ import annotations

import numbers
from typing import Any, Optional

import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import to_rgb

from .._validation import as_float_array, check_distribution
from .style import CLASS_COLORS


def new_axes(ax: Optional[Axes], figsize: tuple[float, float] = (6.4, 4.2)) -> Axes:
    """Return ``ax``, or the axes of a new pyplot figure (shown in notebooks)."""
    check_ax(ax)
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=figsize, layout="constrained")[1]


def class_colors(num_classes: int) -> list[tuple[float, float, float]]:
    """RGB colour of each class: the palette, cycled if there are more classes."""
    return [to_rgb(CLASS_COLORS[i % len(CLASS_COLORS)]) for i in range(num_classes)]


def shade(color: Any, amount: float) -> tuple[float, float, float]:
    """``color`` lightened towards white (``amount < 0``) or darkened towards black.

    One colour per class, several curves of it: a network's snapshots go from
    light (early) to dark (late) in the class's colour.
    """
    rgb = np.array(to_rgb(color))
    mixed = rgb + (1 - rgb) * -amount if amount < 0 else rgb * (1 - amount)
    return tuple(float(v) for v in mixed)


def check_ax(ax: Any) -> None:
    """``ax`` must be None or a matplotlib Axes (checked before any drawing)."""
    if ax is not None and not isinstance(ax, Axes):
        raise TypeError(f"ax must be a matplotlib Axes or None; got "
                        f"{type(ax).__name__}")


def check_task(task: Any, dim: Optional[int] = None) -> Any:
    """``task`` must be a generative model (a GaussianClasses), of ``dim`` if given."""
    if not all(hasattr(task, a) for a in ("posterior", "sample", "dim", "num_classes")):
        raise TypeError("task must be a GaussianClasses (with .posterior, .sample, "
                        f".dim and .num_classes); got {type(task).__name__}")
    if dim is not None and task.dim != dim:
        raise ValueError(f"task must be {('one', 'two')[dim - 1]}-dimensional; got "
                         f"dim {task.dim}")
    return task


def model_function(model: Any) -> Any:
    """The function x -> probabilities of a model (``.predict_proba``) or a callable."""
    predict = getattr(model, "predict_proba", model)
    if not callable(predict):
        raise TypeError("model must have a predict_proba method or be a callable "
                        f"x -> probabilities; got {type(model).__name__}")
    return predict


def as_probabilities(probs: Any, name: str) -> np.ndarray:
    """``probs`` as a float array of distributions along the last axis."""
    probs = as_float_array(probs, name)
    check_distribution(probs, name)
    return probs


def predict_probabilities(model: Any, x: np.ndarray, num_classes: int) -> np.ndarray:
    """Class probabilities (n, M) from a model (``.predict_proba``) or a callable."""
    probs = as_probabilities(model_function(model)(x), "model(x) (probabilities)")
    if probs.shape != (len(x), num_classes):
        raise ValueError(f"model must return probabilities of shape "
                         f"{(len(x), num_classes)}; got {probs.shape}")
    return probs


def as_increasing(values: Any, name: str) -> np.ndarray:
    """A non-empty, finite, increasing 1-D array."""
    values = as_float_array(values, name, allow_inf=False, allow_empty=False)
    if values.ndim > 1:
        raise ValueError(f"{name} must be one-dimensional; got shape {values.shape}")
    values = values.reshape(-1)
    if np.any(np.diff(values) <= 0):
        raise ValueError(f"{name} must be increasing; got {values[:5].tolist()}...")
    return values


def as_interval(limits: Any, name: str) -> tuple[float, float]:
    """A pair (low, high) of finite numbers with low < high."""
    ok = (isinstance(limits, (tuple, list, np.ndarray)) and len(limits) == 2
          and all(isinstance(v, numbers.Real) and np.isfinite(v) for v in limits))
    if not ok or not limits[0] < limits[1]:
        raise ValueError(f"{name} must be a pair (low, high) of finite numbers with "
                         f"low < high; got {limits!r}")
    return float(limits[0]), float(limits[1])
