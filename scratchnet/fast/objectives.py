r"""The fast path's losses: which ones it fuses, and every member's loss at once.

Two things live here.

**The one decision.**  :func:`scratchnet.fast.kernels.fused_cross_entropy`
(beside the kernel it guards) says whether a loss is the plain
cross-entropy that the fast path's fused kernel,
:func:`scratchnet.fast.kernels.cross_entropy_and_grad_inplace`, computes
(one softmax that turns the logits into their gradient in place).
:class:`scratchnet.fast.MLP` and :func:`member_losses_inplace` (so
:class:`scratchnet.fast.Ensemble`) both ask it, and nothing else: every
other loss, and every option of a chapter loss, goes through the loss
object's own ``loss_and_grad``, i.e. the chapter's formula.

**The members' losses.**  An :class:`~scratchnet.fast.Ensemble` scores S
networks on S batches in one pass.  Member :math:`s`'s loss is the mean over
its own batch, exactly the loss object of :mod:`scratchnet.objectives`
applied to ``outputs[s]``, and the gradient written back is that of its own
loss (the members never mix):

=================  ===============================================  =================
loss               member :math:`s`'s loss :math:`L_s`              replaces
=================  ===============================================  =================
cross-entropy      :math:`\frac1B \sum_b [\log \sum_i e^{o_{sbi}}   ``CrossEntropy``
                   - o_{sbc}]`, gradient :math:`(q - y) / B`        ``Loss()``
``mse``            :math:`\frac{1}{BM} \sum_{b, i} (o_{sbi} -       ``MSELoss()``
                   y_{sbi})^2`, gradient :math:`2 (o - y) / (BM)`
                   (one output: :math:`y_{sb} = c_{sb}`)
``hinge``          :math:`\frac1B \sum_b \frac{w_c}{M} \sum_{i \ne  ``MultiMargin``
                   c} \max(0, \Delta - o_{sbc} + o_{sbi})`          ``Loss(margin,``
                                                                    ``weight)``
any other object   ``loss.loss_and_grad(outputs[s], targets[s])``,  itself
                   member by member (weights, smoothing, an
                   ``ignore_index`` in range, ``pos_weight``, ...)
=================  ===============================================  =================

(:math:`y` is the one-hot row of the class :math:`c`; with one output, the
class itself, 0 or 1, as ``MSELoss`` reads targets beside one column.)  The
first three are vectorised over the members and the classes; the
cross-entropy is the plain one (fused, the kernel :class:`scratchnet.fast.MLP`
uses too), its options go to the last row.  ``tests/test_fast_edges.py`` pins
each loss and each option to its loss object, member by member.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..objectives import MSELoss, MultiMarginLoss, get_loss
from .kernels import (
    CrossEntropyScratch,
    cross_entropy_and_grad_inplace,
    fused_cross_entropy,
)

__all__ = ["member_losses_inplace"]


def member_losses_inplace(outputs: np.ndarray, targets: np.ndarray, loss: Any = None, *,
                          scratch: CrossEntropyScratch | None = None,
                          out: np.ndarray | None = None) -> np.ndarray:
    r"""Each member's mean loss; ``outputs`` become their gradients, in place.

    Parameters
    ----------
    outputs : ndarray of float, shape (S, B, M)
        Member ``s``'s outputs on its batch are ``outputs[s]``; overwritten
        with :math:`\partial L_s / \partial\, \text{outputs}[s]`.
    targets : ndarray of int, shape (S, B)
        Class indices in ``[0, M)`` (``[0, 2)`` for one output), checked by
        the caller.
    loss : str or Loss, optional
        A name of :data:`scratchnet.objectives.LOSSES` or a loss object;
        default (None) the cross-entropy, or the binary cross-entropy for
        one output.
    scratch : CrossEntropyScratch, optional
        The fused cross-entropy's work arrays, made for ``outputs``; new
        ones when not given.
    out : ndarray of float64, shape (S,), optional
        Where the losses are written.

    Returns
    -------
    ndarray of float64, shape (S,)
        :math:`L_s`, the mean loss of each member on its batch.

    Examples
    --------
    >>> import numpy as np
    >>> from scratchnet import fast
    >>> outputs = np.array([[[0.0, 0.0]], [[1.0, 0.0]]])   # two members, one row each
    >>> fast.objectives.member_losses_inplace(outputs, np.array([[0], [0]]), "mse")
    array([0.5, 0. ])
    >>> outputs   # 2 (o - y) / (B M)
    array([[[-1.,  0.]],
    <BLANKLINE>
           [[ 0.,  0.]]])
    """
    m = outputs.shape[2]
    if out is None:
        out = np.empty(outputs.shape[0])
    if fused_cross_entropy(loss, m):  # the plain cross-entropy: no object to make
        return cross_entropy_and_grad_inplace(outputs, targets, scratch, out)
    loss = get_loss(loss, outputs=m)
    if type(loss) is MSELoss:
        out[...] = _mse(outputs, targets)
    elif type(loss) is MultiMarginLoss:
        out[...] = _hinge(outputs, targets, loss.margin, loss.weight)
    else:
        for s in range(outputs.shape[0]):  # any other loss object: member by member
            value, grad = loss.loss_and_grad(outputs[s], targets[s])
            out[s] = value
            outputs[s] = grad
    return out


def _rows(outputs: np.ndarray) -> tuple:
    """Index arrays that pick ``outputs[s, b, targets[s, b]]``."""
    return np.arange(outputs.shape[0])[:, None], np.arange(outputs.shape[1])[None, :]


def _mse(outputs: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """``MSELoss`` per member: the mean over the B x M entries of (o - y)^2.

    ``y`` is the one-hot row of the class for M >= 2 outputs, and the class
    itself (0 or 1) for one output, as ``MSELoss`` reads targets beside one
    column.
    """
    if outputs.shape[2] == 1:
        outputs[..., 0] -= targets  # the residual o - c
    else:
        members, rows = _rows(outputs)
        outputs[members, rows, targets] -= 1.0  # the residual o - one_hot(c)
    size = outputs.shape[1] * outputs.shape[2]
    with np.errstate(over="ignore"):  # as the chapter: (1e300)^2 is inf, correctly
        squares = np.square(outputs)   # rounded (the caller checks the losses)
    losses = squares.reshape(len(outputs), -1).sum(axis=1) / size
    with np.errstate(over="ignore"):  # as scoring.mse_loss_grad: inf past 1.8e308
        outputs *= 2.0 * (1.0 / size)
    return losses.astype(np.float64)


def _hinge(outputs: np.ndarray, targets: np.ndarray, margin: float,
           weight: Any) -> np.ndarray:
    """``MultiMarginLoss`` per member, in the order of operations of the chapter."""
    n, m = outputs.shape[1], outputs.shape[2]
    members, rows = _rows(outputs)
    picked = outputs[members, rows, targets]
    with np.errstate(over="ignore"):  # as the chapter: margins beyond 1e308 are inf
        z = np.add((outputs.dtype.type(margin) - picked)[..., None], outputs)
    z[members, rows, targets] = 0.0
    factor = (np.full(targets.shape, 1.0 / m, dtype=outputs.dtype) if weight is None
              else np.asarray(weight, dtype=outputs.dtype)[targets] / m)
    losses = (np.maximum(z, 0.0).sum(axis=2) * factor).sum(axis=1) / n
    factor *= 1.0 / n  # d(mean) / d(each sample's loss)
    active = z > 0  # the target column holds 0: never active
    np.multiply(active, factor[..., None], out=outputs)
    outputs[members, rows, targets] = -active.sum(axis=2) * factor
    return losses.astype(np.float64)
