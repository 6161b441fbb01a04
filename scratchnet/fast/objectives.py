r"""Every member's loss at once: the chapters' losses on (S, B, M) outputs.

An :class:`~scratchnet.fast.Ensemble` scores S networks on S batches in one
pass.  Member :math:`s`'s loss is the mean over its own batch, exactly the
loss object of :mod:`scratchnet.objectives` applied to ``outputs[s]``, and
the gradient written back is that of its own loss (the members never mix):

=================  ===============================================  =================
loss               member :math:`s`'s loss :math:`L_s`              replaces
=================  ===============================================  =================
``mse``            :math:`\frac{1}{BM} \sum_{b, i} (o_{sbi} -       ``MSELoss()``
                   y_{sbi})^2`, gradient :math:`2 (o - y) / (BM)`
``hinge``          :math:`\frac1B \sum_b \frac{w_c}{M} \sum_{i \ne  ``MultiMargin``
                   c} \max(0, \Delta - o_{sbc} + o_{sbi})`          ``Loss()``
any other object   ``loss.loss_and_grad(outputs[s], targets[s])``,  itself
                   member by member
=================  ===============================================  =================

(:math:`y` is the one-hot row of the class :math:`c`.)  The two named losses
are vectorised over the members.  The plain cross-entropy, the default, is
fused into :meth:`scratchnet.fast.Ensemble.loss_and_grads` itself; given
here, it goes member by member like any other loss object.
``tests/test_fast.py`` pins each loss to its loss object, member by member,
and an ensemble trained with the squared error or the hinge loss to the
networks trained alone with :func:`scratchnet.train`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..objectives import CrossEntropyLoss, MSELoss, MultiMarginLoss, get_loss

__all__ = ["member_losses_inplace"]


def member_losses_inplace(outputs: np.ndarray, targets: np.ndarray,
                          loss: Any = None) -> np.ndarray:
    r"""Each member's mean loss; ``outputs`` become their gradients, in place.

    Parameters
    ----------
    outputs : ndarray of float, shape (S, B, M)
        Member ``s``'s outputs on its batch are ``outputs[s]``; overwritten
        with :math:`\partial L_s / \partial\, \text{outputs}[s]`.
    targets : ndarray of int, shape (S, B)
        Class indices in ``[0, M)`` (checked by the caller).
    loss : str or Loss, optional
        A name of :data:`scratchnet.objectives.LOSSES` or a loss object;
        default (None) the cross-entropy.

    Returns
    -------
    ndarray of float64, shape (S,)
        :math:`L_s`, the mean loss of each member on its batch.

    Examples
    --------
    >>> from scratchnet import fast
    >>> outputs = np.array([[[0.0, 0.0]], [[1.0, 0.0]]])   # two members, one row each
    >>> fast.objectives.member_losses_inplace(outputs, np.array([[0], [0]]), "mse")
    array([0.5, 0. ])
    >>> outputs   # 2 (o - y) / (B M)
    array([[[-1.,  0.]],
    <BLANKLINE>
           [[ 0.,  0.]]])
    """
    loss = get_loss(loss)
    if type(loss) is MSELoss:
        return _mse(outputs, targets)
    if type(loss) is MultiMarginLoss:
        return _hinge(outputs, targets, loss.margin, loss.weight)
    losses = np.empty(outputs.shape[0])
    for s in range(outputs.shape[0]):  # any other loss object: member by member
        value, grad = loss.loss_and_grad(outputs[s], targets[s])
        losses[s] = value
        outputs[s] = grad
    return losses


def _resolve(loss: Any) -> Any:
    """None for the plain cross-entropy (fused in the ensemble), else the loss."""
    if loss is None or (isinstance(loss, str) and loss == "cross_entropy"):
        return None
    loss = get_loss(loss)
    if (type(loss) is CrossEntropyLoss and loss.weight is None
            and loss.label_smoothing == 0.0):
        return None
    return loss


def _rows(outputs: np.ndarray) -> tuple:
    """Index arrays that pick ``outputs[s, b, targets[s, b]]``."""
    return np.arange(outputs.shape[0])[:, None], np.arange(outputs.shape[1])[None, :]


def _mse(outputs: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """``MSELoss`` per member: the mean over the B x M entries of (o - one_hot)^2."""
    members, rows = _rows(outputs)
    outputs[members, rows, targets] -= 1.0  # the residual o - y
    size = outputs.shape[1] * outputs.shape[2]
    losses = np.square(outputs).reshape(len(outputs), -1).sum(axis=1) / size
    outputs *= 2.0 * (1.0 / size)  # as scoring.mse_loss_grad
    return losses.astype(np.float64)


def _hinge(outputs: np.ndarray, targets: np.ndarray, margin: float,
           weight: Any) -> np.ndarray:
    """``MultiMarginLoss`` per member, in the order of operations of the chapter."""
    n, m = outputs.shape[1], outputs.shape[2]
    members, rows = _rows(outputs)
    picked = outputs[members, rows, targets]
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
