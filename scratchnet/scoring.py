r"""Scoring rules beyond the log loss: which losses make the outputs probabilities.

A loss charges a prediction :math:`o` for the observed class :math:`c`.
Training minimises its average over the sample, an unbiased estimate of the
population risk :math:`\mathbb{E}_x \mathbb{E}_{c \sim P(C \mid x)} S(o(x), c)`;
a flexible model minimises it input by input.  The rule :math:`S` is
**proper** if, for every true distribution :math:`p`, the expected score
:math:`\mathbb{E}_{c \sim p} S(o, c)` is minimised by the prediction
:math:`o = p` (*strictly* proper if only by it).  Only a proper rule trains
the outputs towards the posterior :math:`P(C \mid x)`.

**The log loss is strictly proper.**  :math:`\mathbb{E}_{c \sim p}[-\log q_c]
= H(p, q) \ge H(p)` with equality only at :math:`q = p` (Gibbs'
inequality): this is why :func:`scratchnet.losses.cross_entropy` learns
:math:`P(C \mid x)` (the sketch of :mod:`scratchnet.information`, proved in
``docs/derivation.md``).

**Squared error on one-hot targets is strictly proper** (on outputs that are
probabilities it is the Brier score), with the outputs themselves, not a
softmax of them, estimating
:math:`P(c \mid x)`: since :math:`\mathbb{E}[y_i] = \mathbb{E}[y_i^2] = p_i`,

.. math::

    \mathbb{E}_{c \sim p} \sum_i (o_i - y_i)^2
        = \sum_i (o_i - p_i)^2 + \sum_i p_i (1 - p_i),

minimised exactly at :math:`o = p`.  But nothing keeps :math:`o` in the
simplex, and used on logits it penalises being "too right" (:func:`mse_loss`).

**The multi-class hinge loss is not proper.**  With two classes, margin 1 and
:math:`d = x_1 - x_0`, the expected :func:`multi_margin_loss` is
:math:`\tfrac12 [p_1 \max(0, 1 - d) + p_0 \max(0, 1 + d)]`, piecewise linear
in :math:`d` and minimised at :math:`d = +1` whenever :math:`p_1 > 1/2` and
:math:`d = -1` whenever :math:`p_1 < 1/2`.  The minimiser gets the argmax,
the Bayes decision, right and says nothing about how sure it is: 0.51 and
0.99 give the same scores.  Nothing is calibrated.

Conventions as in :mod:`scratchnet.functional` (``reduction``, ``<loss>_grad``,
float32 in, float32 out); the inputs here must be finite.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._loss_common import (
    Loss,
    as_batch,
    as_class_weight,
    reduce_loss,
    reduction_scale,
    row_class_indices,
)
from ._validation import (
    as_float_array,
    as_number_array,
    check_reduction,
    check_same_shape,
    check_scalar,
)

__all__ = ["mse_loss", "mse_loss_grad", "multi_margin_loss", "multi_margin_loss_grad"]


# --------------------------------------------------------------------------
# Squared error on one-hot targets (on probabilities: the Brier score)
# --------------------------------------------------------------------------


def _mse_residual(outputs: Any, targets: Any, reduction: Any):
    """(outputs - targets, reduction), with class indices one-hot encoded.

    The shapes decide, never the dtype: targets of ``outputs``' shape are
    real targets (0/1 integers included); (N,) targets beside (N, M)
    outputs are class indices, or for M = 1 the values of that one column.
    """
    reduction = check_reduction(reduction)
    o = as_batch(outputs, "outputs", two_d=False, allow_inf=False)
    t = as_number_array(targets, "targets", "class indices or real targets")
    if o.ndim == 2 and t.shape == (o.shape[0],) and o.shape[1] == 1:
        t = t.reshape(o.shape)  # one output per sample: its real targets
    if o.ndim == 2 and t.shape == (o.shape[0],):
        t = row_class_indices(t, o, "outputs")
        residual = o.copy()
        residual[np.arange(o.shape[0]), t] -= 1.0
        return residual, reduction
    y = as_float_array(t, "targets", allow_inf=False)
    check_same_shape(o, y, "outputs", "targets")
    with np.errstate(over="ignore"):  # 1e308 - (-1e308) is inf, correctly rounded
        return np.subtract(o, y, dtype=o.dtype), reduction


def mse_loss(outputs: Any, targets: Any, *, reduction: str = "mean") -> Loss:
    r"""Mean squared error between outputs and targets (or one-hot class targets).

    Parameters
    ----------
    outputs : array_like, shape (N, ...)
        The model's outputs :math:`o`; finite.
    targets : array_like
        Real targets :math:`y` of ``outputs``' shape (integers too), or, for
        outputs of shape (N, M), integer class indices of shape (N,), compared
        as one-hot rows; for outputs of shape (N, 1), targets of shape (N,)
        are that column's real targets.  The shapes decide, not the dtype.
    reduction : {"mean", "sum", "none"}, default "mean"
        The mean is over all elements (as in PyTorch).

    Returns
    -------
    scalar or ndarray of outputs' shape
        The reduced loss, or the elementwise :math:`(o - y)^2` for ``"none"``.

    Notes
    -----
    :math:`\ell = (o - y)^2`: the negative log-likelihood of Gaussian noise
    around the target.  On one-hot targets its sum over classes is the Brier
    score, a proper rule *for outputs that are probabilities*: the expected
    score is smallest at :math:`o = p` (module docstring).  On logits it is
    the wrong model: it pulls every output to a fixed point, so it penalises
    being "too right".  With the correct class the second unit (one-hot
    target (0, 1, 0, 0)), the output (0, 1, 0, 0) scores 0, while the *more*
    confident correct (-1, 2, -1, -1) scores 1 averaged (4 summed) -- as much
    as the completely wrong (1, 0, 1, 1).  Cross-entropy ranks them 0.744,
    0.139 and 2.214: only the differences between the logits matter to it.

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> outputs = np.array([[0.0, 1, 0, 0], [-1, 2, -1, -1], [1, 0, 1, 1]])
    >>> sn.mse_loss(outputs, [1, 1, 1], reduction="none").mean(axis=1)
    array([0., 1., 1.])
    >>> sn.functional.cross_entropy(outputs, [1, 1, 1], reduction="none").round(3)
    array([0.744, 0.139, 2.214])

    The Brier score of a probability vector ``o``, expected over a class drawn
    from ``p``, is smallest at ``o = p``:

    >>> p = np.array([0.7, 0.2, 0.1])
    >>> def brier(o):
    ...     return sum(p[c] * sn.mse_loss([o], [c], reduction="sum") for c in range(3))
    >>> print(f"{brier(p):.2f} {brier([1.0, 0, 0]):.2f} {brier([0.8, 0.1, 0.1]):.2f}")
    0.46 0.60 0.48
    """
    residual, reduction = _mse_residual(outputs, targets, reduction)
    with np.errstate(over="ignore"):  # (1e300)^2 is inf, correctly rounded
        losses = np.square(residual, out=residual)
    return reduce_loss(losses, reduction, losses.size)


def mse_loss_grad(outputs: Any, targets: Any, *, reduction: str = "mean") -> np.ndarray:
    r"""Gradient of :func:`mse_loss` with respect to ``outputs``: :math:`2 (o - y)`.

    Parameters
    ----------
    outputs, targets, reduction
        As in :func:`mse_loss`.

    Returns
    -------
    ndarray, same shape as ``outputs``
        :math:`2 (o - y)`, times :math:`1/n` (n elements) for ``"mean"``;
        :math:`\pm\infty` without a warning where that exceeds the largest
        float (:math:`2 \cdot 10^{308}`): the correctly rounded value.

    Examples
    --------
    >>> import scratchnet as sn
    >>> sn.mse_loss_grad([[1e308]], [0], reduction="sum")    # 2e308 rounds to inf
    array([[inf]])
    >>> sn.mse_loss_grad([[0.0, 1.0], [0.5, 0.5]], [1, 0])
    array([[ 0.  ,  0.  ],
           [-0.25,  0.25]])
    """
    residual, reduction = _mse_residual(outputs, targets, reduction)
    with np.errstate(over="ignore"):  # 2 (o - y) past 1.8e308 is inf, correctly rounded
        residual *= 2.0 * reduction_scale(reduction, residual.size)
    return residual


# --------------------------------------------------------------------------
# Multi-class hinge loss
# --------------------------------------------------------------------------


def _hinge(logits: Any, targets: Any, margin: Any, weight: Any, reduction: Any):
    r"""Checked inputs, the (N, M) margins :math:`z`, the factors :math:`w_{t_j} / M`.

    :math:`z_{ji} = (\text{margin} - x_{jt_j}) + x_{ji}` for :math:`i \ne t_j`
    (PyTorch's order of operations) and 0 on the target column.
    """
    reduction = check_reduction(reduction)
    margin = check_scalar(margin, "margin")
    if not np.isfinite(margin):
        raise ValueError(f"margin must be a finite real number; got {margin:g}")
    x = as_batch(logits, "logits", two_d=True, allow_inf=False)
    t = row_class_indices(targets, x, "logits")
    w = as_class_weight(weight, x.shape[1], x.dtype)
    n, m = x.shape
    rows = np.arange(n)
    with np.errstate(over="ignore"):  # margins beyond 1e308 are inf, as they should be
        z = np.add((x.dtype.type(margin) - x[rows, t])[:, None], x)
    z[rows, t] = 0.0
    factor = np.full(n, 1.0 / m, dtype=x.dtype) if w is None else w[t] / m
    return z, t, factor, reduction


def multi_margin_loss(logits: Any, targets: Any, *, margin: float = 1.0,
                      weight: Any = None, reduction: str = "mean") -> Loss:
    r"""Multi-class hinge loss: other scores should trail the target's by a margin.

    Parameters
    ----------
    logits : array_like, shape (N, M)
        Scores :math:`x_{ji}`, one row per sample; finite.
    targets : array_like of int, shape (N,)
        Class indices :math:`t_j \in [0, M)`.
    margin : float, default 1
        The gap :math:`\Delta` the target's score should keep; finite.
    weight : array_like, shape (M,), optional
        Non-negative class weights :math:`w_i`; sample :math:`j`'s loss is
        multiplied by :math:`w_{t_j}` (default: all 1).
    reduction : {"mean", "sum", "none"}, default "mean"

    Returns
    -------
    scalar or ndarray of shape (N,)
        The reduced loss, or the per-sample losses :math:`\ell_j \ge 0`.

    Notes
    -----
    Exactly ``torch.nn.functional.multi_margin_loss`` with ``p=1``:

    .. math::

        \ell_j = \frac{w_{t_j}}{M} \sum_{i \ne t_j}
            \max\bigl(0,\; \Delta - x_{jt_j} + x_{ji}\bigr), \qquad
        \text{mean} = \frac{1}{N} \sum_j \ell_j .

    Unlike :func:`scratchnet.losses.cross_entropy`, the weighted mean divides
    by :math:`N`, not by :math:`\sum_j w_{t_j}`.  A sample whose target
    leads every other score by at least :math:`\Delta` costs 0 and teaches
    nothing more: the loss asks for the right argmax with a margin, not for
    probabilities, so it is not a proper scoring rule (module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> sn.multi_margin_loss([[0.0, 2.0, 1.5], [1.0, 0.0, 0.0]], [1, 1],
    ...                      reduction="none")
    array([0.16666667, 1.        ])

    Two classes, :math:`d = x_1 - x_0`: the expected loss is smallest at
    :math:`d = 1` whether :math:`P(1 \mid x)` is 0.6 or 0.99 (uncalibrated):

    >>> d = np.arange(-300, 301) / 100
    >>> logits = np.stack([np.zeros_like(d), d], axis=1)
    >>> ones, zeros = np.ones(601, int), np.zeros(601, int)
    >>> for p1 in (0.6, 0.99):
    ...     risk = (p1 * sn.multi_margin_loss(logits, ones, reduction="none")
    ...             + (1 - p1) * sn.multi_margin_loss(logits, zeros, reduction="none"))
    ...     print(d[np.argmin(risk)])
    1.0
    1.0
    """
    z, _, factor, reduction = _hinge(logits, targets, margin, weight, reduction)
    losses = np.maximum(z, 0.0, out=z).sum(axis=1)
    losses *= factor
    return reduce_loss(losses, reduction, losses.shape[0])


def multi_margin_loss_grad(logits: Any, targets: Any, *, margin: float = 1.0,
                           weight: Any = None, reduction: str = "mean") -> np.ndarray:
    r"""Gradient of :func:`multi_margin_loss` with respect to ``logits``.

    Parameters
    ----------
    logits, targets, margin, weight, reduction
        As in :func:`multi_margin_loss`.

    Returns
    -------
    ndarray, shape (N, M)
        :math:`\partial\,\text{loss} / \partial x`; for ``"none"``, row
        :math:`j` is :math:`\partial \ell_j / \partial x_j`.

    Notes
    -----
    With the active set :math:`A_j = \{i \ne t_j : \Delta - x_{jt_j} + x_{ji} > 0\}`,

    .. math::

        \frac{\partial \ell_j}{\partial x_{ji}} = \frac{w_{t_j}}{M}
            \bigl([i \in A_j] - |A_j|\, [i = t_j]\bigr),

    times :math:`1/N` for ``"mean"``.  At a kink, where
    :math:`\Delta - x_{jt_j} + x_{ji} = 0` exactly, the hinge is not
    differentiable; like PyTorch we take the subgradient 0 (the class is not
    in :math:`A_j`).  The gradient is piecewise constant: it pushes the
    offending scores down and the target's up by fixed amounts, however
    confident the prediction already is.

    Examples
    --------
    >>> import scratchnet as sn
    >>> sn.multi_margin_loss_grad([[0.0, 2.0, 1.5], [1.0, 0.0, 0.0]], [1, 1],
    ...                           reduction="sum")
    array([[ 0.        , -0.33333333,  0.33333333],
           [ 0.33333333, -0.66666667,  0.33333333]])
    """
    z, t, factor, reduction = _hinge(logits, targets, margin, weight, reduction)
    factor *= reduction_scale(reduction, z.shape[0])
    active = z > 0  # the target column holds 0: never active
    grad = np.multiply(active, factor[:, None], dtype=z.dtype)
    grad[np.arange(z.shape[0]), t] = -active.sum(axis=1) * factor
    return grad
