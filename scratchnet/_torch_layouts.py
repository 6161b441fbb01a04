r"""PyTorch's layouts of class scores and their targets, seen by the losses as rows.

``torch.nn.functional.cross_entropy`` and ``nll_loss`` take class scores in
three layouts, the class axis being axis 1 whenever there is a batch, and
:func:`scratchnet.cross_entropy` and :func:`scratchnet.nll_loss` take the same:

====================  ================================  ======================
scores                class-index targets               probability targets
====================  ================================  ======================
(C,): one sample      a scalar                          (C,)
(N, C): a batch       (N,)                              (N, C)
(N, C, d1, ..., dk)   (N, d1, ..., dk): one class per   (N, C, d1, ..., dk)
                      position (a segmentation map)
====================  ================================  ======================

The losses compute on rows: ``_to_rows`` moves the class axis last and
flattens the rest into :math:`K = N d_1 \cdots d_k` rows, one per classified
element, and ``from_rows`` puts per-element losses and gradients back in
the layout they came from.  A mean is over all :math:`K` elements.

A target equal to ``ignore_index`` (-100 by default, as in PyTorch) is
skipped: its element counts with weight 0 in the loss, in the gradient and
in the denominator of the mean.

The messages anticipate the slips of a PyTorch user: logits of shape (C, N)
are called transposed (not blamed on the targets), classes on the last axis
of (N, d, C) scores are pointed to axis 1, and a one-column (N, 1) network
output is pointed to the binary loss.  ``as_nll_inputs`` and
``as_cross_entropy_inputs`` check the arguments of :mod:`scratchnet.functional`
and return them in rows.
This module is private.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ._loss_common import as_class_weight
from ._scores import check_scores
from ._validation import (
    as_float_array,
    as_number_array,
    at_index,
    check_distribution,
    check_integer,
    check_no_nan,
    check_reduction,
    check_scalar,
)

__all__ = ["IGNORE_INDEX", "CrossEntropyInputs", "as_cross_entropy_inputs",
           "as_nll_inputs", "as_target_column", "check_class_scores",
           "check_no_options", "from_rows"]

#: The target value that marks an element to skip (PyTorch's default).
IGNORE_INDEX = -100


def _as_scores(x: Any, name: str) -> np.ndarray:
    """``x`` as a float array of shape (C,), (N, C) or (N, C, d1, ...), not empty."""
    x = as_float_array(x, name, check_nan=False)
    if x.ndim == 0:
        raise ValueError(f"{name} must have a class axis: shape (C,), (N, C) or "
                         "(N, C, d1, ...); got a scalar")
    if x.size == 0:
        raise ValueError(
            f"{name} must hold at least one sample with at least one class "
            f"(an empty batch has no loss); got shape {x.shape}"
        )
    return x


def _class_axis(shape: tuple) -> int:
    """Axis 0 of one unbatched sample (C,), else axis 1."""
    return 0 if len(shape) == 1 else 1


def _element_shape(shape: tuple) -> tuple:
    """The shape of class-index targets and of ``"none"`` losses: no class axis."""
    return () if len(shape) == 1 else (shape[0], *shape[2:])


def _to_rows(x: np.ndarray) -> np.ndarray:
    """(K, C): one row of class scores per classified element."""
    if x.ndim <= 2:
        return x.reshape(-1, x.shape[-1])
    return np.moveaxis(x, 1, -1).reshape(-1, x.shape[1])


def from_rows(rows: np.ndarray, shape: tuple) -> np.ndarray:
    """Per-element values (K,) or rows (K, C) back in the layout of scores ``shape``."""
    if rows.ndim == 1:
        return rows.reshape(_element_shape(shape))
    if len(shape) <= 2:
        return rows.reshape(shape)
    return np.moveaxis(rows.reshape(shape[0], *shape[2:], shape[1]), -1, 1)


def _shape_message(t: np.ndarray, shape: tuple, name: str) -> str:
    """Why targets of ``t.shape`` do not fit scores of ``shape``, and the likely fix."""
    element = _element_shape(shape)
    if t.dtype.kind == "f" and t.ndim == len(shape):  # probabilities, misshapen
        return f"targets must have the same shape as {name} {shape}; got {t.shape}"
    if t.ndim == len(shape) > 1:  # integer rows: one-hot targets given as integers?
        return (f"targets must be class indices of shape {element} or class "
                f"probabilities (floats) of {name}' shape {shape}; got an array of "
                f"dtype {t.dtype} and shape {t.shape}")
    if (len(shape) == 2 and t.shape == shape[1:] and 2 <= shape[0] != shape[1]
            and t.dtype.kind in "iu" and 0 <= t.min() and t.max() < shape[0]):
        return (f"{name} must have the class axis as axis 1, shape (N, C) with "
                f"N = {shape[1]} targets; got shape {shape}, which looks "
                f"transposed, (C, N): pass {name}.T")
    if len(shape) >= 3 and t.shape == shape[:-1]:
        return (f"{name} must have the class axis as axis 1, shape (N, C, d1, ...); "
                f"got shape {shape}, which looks like classes on the last axis: "
                f"pass np.moveaxis({name}, -1, 1)")
    if len(shape) == 1:
        return (f"{name} of shape {shape} holds one sample's class scores "
                "(unbatched), whose target is a single class index; got targets "
                f"of shape {t.shape}.  For a batch give {name} of shape (N, C); "
                "for one score per sample use binary_cross_entropy_with_logits")
    if len(shape) == 2:
        return (f"targets must hold one class index per row of {name}, shape "
                f"({shape[0]},); got shape {t.shape}")
    return (f"targets must hold one class index per element of {name} {shape} "
            f"without its class axis 1, shape {element}; got shape {t.shape}")


def _index_targets(targets: Any, shape: tuple, name: str,
                   ignore_index: int | None) -> tuple:
    """``(t, keep)``: checked class indices of the K elements, and which count.

    ``keep`` is None when no target equals ``ignore_index``; otherwise it is
    False there, and those ``t`` are set to 0, a valid index that adds nothing.
    The common case is screened by the smallest and largest target: all in
    ``[0, M)`` with ``ignore_index`` outside their range, nothing is out of
    range or ignored, and the masks that say where are not built.
    """
    t = as_number_array(targets, "targets", "class indices (integers)")
    if t.shape != _element_shape(shape):
        raise ValueError(_shape_message(t, shape, name))
    m = shape[_class_axis(shape)]
    if t.dtype.kind not in "iu":
        raise TypeError(f"targets must be integer class indices in [0, {m}); "
                        f"got dtype {t.dtype}")
    if t.size:
        low, high = t.min(), t.max()
        if 0 <= low and high < m and (ignore_index is None
                                      or not low <= ignore_index <= high):
            return t.reshape(-1).astype(np.intp, copy=False), None
    ignored = np.zeros(t.shape, bool) if ignore_index is None else t == ignore_index
    bad = ((t < 0) | (t >= m)) & ~ignored
    if bad.any():
        hint = ("" if m > 1 else f" ({name} has one class column, so every loss is "
                "0: for a one-output network use binary_cross_entropy_with_logits, "
                "loss='binary_cross_entropy')")
        raise ValueError(f"targets must be integers in [0, {m}); got "
                         f"{t[bad].flat[0]}{at_index(bad)}{hint}")
    t = t.reshape(-1).astype(np.intp, copy=False)
    if not ignored.any():
        return t, None
    keep = ~ignored.reshape(-1)
    return np.where(keep, t, 0), keep


def _check_mean_is_defined(w: np.ndarray | None, t: np.ndarray,
                           keep: np.ndarray | None, reduction: str,
                           ignore_index: int) -> None:
    """Reject a mean over no weight at all: every target ignored, or weight 0."""
    if reduction != "mean" or (w is None and keep is None):
        return
    if keep is not None and not keep.any():
        raise ValueError(
            f"every target is ignore_index={ignore_index}, so reduction='mean' is "
            "0/0 (PyTorch returns nan); use reduction='sum' (0) or skip the batch")
    w_t = np.ones(t.shape) if w is None else w[t]
    if keep is not None:
        w_t = w_t * keep
    if not w_t.any():
        raise ValueError(
            "weight gives every target class weight 0, so reduction='mean' "
            "(which divides by sum_j weight[targets[j]]) is 0/0; give the "
            "target classes positive weight or use reduction='sum'"
        )


# ---- The checked inputs of nll_loss and cross_entropy, in rows ----
#: A log-probability up to 1e-6 is a probability of 1 off by rounding (the
#: tolerance of a distribution's total elsewhere); it counts as log 1 = 0.
_LOG_ONE = 1e-6


class CrossEntropyInputs(NamedTuple):
    """The checked arguments of the cross-entropy (and NLL), in rows (K elements)."""

    x: np.ndarray               # (K, M) logits (log-probabilities for nll_loss)
    t: np.ndarray | None        # (K,) class indices (0 where ignored), or None
    p: np.ndarray | None        # (K, M) target distributions, or None
    w: np.ndarray | None        # (M,) class weights, or None
    keep: np.ndarray | None     # (K,) False where the target is ignored, or None
    eps: float                  # label smoothing
    reduction: str
    shape: tuple                # the scores' own shape


def _check_logits(x: np.ndarray) -> None:
    """Reject NaN, ``+inf`` and an element whose every logit is ``-inf``."""
    check_scores(x, "logits", _class_axis(x.shape))


def _check_log_probs(lp: np.ndarray) -> None:
    """Reject NaN and log-probabilities above 0 (beyond rounding)."""
    top = np.max(lp)  # NaN propagates through the max: one pass, no temporary
    if np.isnan(top):
        check_no_nan(lp, "log_probs")
    if top > _LOG_ONE:
        bad = lp > _LOG_ONE
        raise ValueError(
            f"log_probs must be log-probabilities (<= 0, or up to {_LOG_ONE:g} "
            f"for a probability 1 off by rounding); got {lp[bad][0]:.10g}"
            f"{at_index(bad)} (for raw scores use cross_entropy, which takes logits)"
        )


def as_nll_inputs(log_probs: Any, targets: Any, weight: Any, ignore_index: Any,
                  reduction: Any) -> CrossEntropyInputs:
    """The checked arguments of ``nll_loss``, in rows (no smoothing, no ``p``)."""
    reduction = check_reduction(reduction)
    ignore_index = check_integer(ignore_index, "ignore_index")
    lp = _as_scores(log_probs, "log_probs")
    _check_log_probs(lp)
    t, keep = _index_targets(targets, lp.shape, "log_probs", ignore_index)
    w = as_class_weight(weight, lp.shape[_class_axis(lp.shape)], lp.dtype)
    _check_mean_is_defined(w, t, keep, reduction, ignore_index)
    return CrossEntropyInputs(_to_rows(lp), t, None, w, keep, 0.0, reduction,
                              lp.shape)


def as_cross_entropy_inputs(logits: Any, targets: Any, weight: Any, ignore_index: Any,
                            label_smoothing: Any, reduction: Any) -> CrossEntropyInputs:
    """The checked arguments of ``cross_entropy``, in rows.

    NaN and ``+inf`` in the logits are rejected, and a row of only ``-inf``.
    """
    reduction = check_reduction(reduction)
    eps = check_scalar(label_smoothing, "label_smoothing", low=0.0, high=1.0)
    ignore_index = check_integer(ignore_index, "ignore_index")
    x = _as_scores(logits, "logits")
    _check_logits(x)
    t = as_number_array(targets, "targets",
                        "class indices (integers) or class probabilities (floats)")
    w = as_class_weight(weight, x.shape[_class_axis(x.shape)], x.dtype)
    if t.dtype.kind == "f" and t.shape == x.shape:  # class probabilities
        check_distribution(t, "targets", axis=_class_axis(x.shape))
        p = _to_rows(t.astype(x.dtype, copy=False))
        return CrossEntropyInputs(_to_rows(x), None, p, w, None, eps, reduction,
                                  x.shape)
    t, keep = _index_targets(t, x.shape, "logits", ignore_index)
    _check_mean_is_defined(w, t, keep, reduction, ignore_index)
    return CrossEntropyInputs(_to_rows(x), t, None, w, keep, eps, reduction, x.shape)


def check_no_options(options: dict, caller: str) -> None:
    """Refuse PyTorch's options in a chapter loss, saying where they live."""
    if options:
        raise TypeError(
            f"{caller}() got {', '.join(map(repr, sorted(options)))}: the chapter "
            f"function is the formula alone (a batch (N, M), class indices, the "
            f"mean); class weights, ignore_index, label_smoothing, reduction, "
            f"pos_weight and PyTorch's other layouts live in "
            f"scratchnet.functional.{caller}, with torch.nn.functional's signature")


def check_class_scores(scores: Any, targets: Any, options: dict, caller: str) -> tuple:
    """``(scores, targets)`` of a chapter loss, checked: (N, M) and (N,) class indices.

    The scores are logits (``cross_entropy*``: no NaN or ``+inf``, a finite
    entry in every row) or log-probabilities (``nll_loss*``: at most 0, up
    to rounding).  Nothing is transformed; the options must be empty.
    """
    check_no_options(options, caller)
    name = "log_probs" if caller.startswith("nll") else "logits"
    x = _as_scores(scores, name)
    if x.ndim != 2:
        raise ValueError(
            f"{name} must have shape (N, M), one row of M class scores per sample; "
            f"got shape {x.shape} (for one sample of shape (M,), or PyTorch's "
            f"(N, M, d1, ...) layout, use scratchnet.functional.{caller})")
    t = as_number_array(targets, "targets", "class indices (integers)")
    if t.dtype.kind == "f" and t.shape == x.shape:
        raise TypeError(f"targets of {caller}() must be class indices (integers); "
                        f"for probability targets use scratchnet.functional.{caller}")
    if name == "logits":
        _check_logits(x)
    else:
        _check_log_probs(x)
    t, _ = _index_targets(t, x.shape, name, None)
    return x, t


def as_target_column(outputs: Any, targets: Any) -> tuple:
    """(N,) targets beside (N, 1) outputs, as the (N, 1) column they describe."""
    outputs, targets = np.asarray(outputs), np.asarray(targets)
    one_column = outputs.ndim == 2 and outputs.shape[1] == 1
    if one_column and targets.shape == outputs.shape[:1]:
        targets = targets.reshape(-1, 1)
    return outputs, targets
