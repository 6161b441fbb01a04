r"""The engine's losses: which ones it fuses, and every member's loss at once.

Two things live here.

**The one decision.**  :func:`scratchnet.fast.kernels.fused_cross_entropy`
(beside the kernel it guards) says whether a loss is the plain
cross-entropy that the engine's fused kernels compute (one softmax that
turns the logits into their gradient in place).  :class:`scratchnet.fast.MLP`
and :func:`member_losses_inplace` (so :class:`scratchnet.fast.Ensemble`)
both ask it, and nothing else: every other loss, and every option of a
chapter loss, goes through the loss object's own ``loss_and_grad``, i.e.
the chapter's formula.

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
``hinge``          :math:`\frac1B \sum_b \frac{w_c}{M} \sum_{i \ne  ``MultiMargin``
                   c} \max(0, \Delta - o_{sbc} + o_{sbi})`          ``Loss(margin,``
                                                                    ``weight)``
any other object   ``loss.loss_and_grad(outputs[s], targets[s])``,  itself
                   member by member (weights, smoothing, an
                   ``ignore_index`` in range, ``pos_weight``, ...)
=================  ===============================================  =================

(:math:`y` is the one-hot row of the class :math:`c`.)  The first three are
vectorised over the members and the classes; the cross-entropy is the plain
one (fused), its options go to the last row.  ``tests/test_fast_edges.py``
pins each loss and each option to its loss object, member by member.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..objectives import MSELoss, MultiMarginLoss, get_loss
from .kernels import fused_cross_entropy

__all__ = ["LossScratch", "member_losses_inplace"]


class LossScratch:
    """The work arrays of the fused cross-entropy on (S, B, M) outputs, made once.

    Parameters
    ----------
    outputs : ndarray, shape (S, B, M)
        The buffer the kernels will overwrite (kept: the two-class kernel
        works on views of its columns).

    Examples
    --------
    >>> from scratchnet import fast
    >>> fast.objectives.LossScratch(np.zeros((2, 3, 4))).by_class.shape
    (4, 6)
    """

    def __init__(self, outputs: np.ndarray) -> None:
        members, n, m = outputs.shape
        rows, dtype = members * n, outputs.dtype
        self.outputs = outputs
        self.n = np.asarray(n, dtype)  # 0-d arrays: faster operands than floats
        self.one_over_n = np.asarray(1.0 / n, dtype)
        self.n_losses = np.asarray(n, np.float64)  # the losses' dtype
        # M >= 3: class-major, so that every sum over the classes runs in C
        self.by_class = np.empty((m, rows), dtype)
        self.row_max, self.rest = np.empty(rows, dtype), np.empty(rows, dtype)
        self.picked = np.empty(rows, np.intp)  # flat index of each target's entry
        self.columns = np.arange(rows)  # ... is c * rows + row
        self.stride = np.asarray(rows, np.intp)  # (targets may be int8)
        # M = 2: u = f_other - f_target, in fewer operations
        self.zero, self.one = np.zeros((), dtype), np.ones((), dtype)
        self.minus_two = np.asarray(-2, dtype)
        self.sign, self.u, self.softplus = (np.empty((members, n), dtype)
                                            for _ in range(3))
        self.f0, self.f1 = outputs[..., 0], outputs[..., 1 % m]


def member_losses_inplace(outputs: np.ndarray, targets: np.ndarray, loss: Any = None, *,
                          scratch: LossScratch | None = None,
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
    scratch : LossScratch, optional
        Made for ``outputs``; a new one when not given.
    out : ndarray of float64, shape (S,), optional
        Where the losses are written.

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
    m = outputs.shape[2]
    loss = get_loss(loss, outputs=m)
    if out is None:
        out = np.empty(outputs.shape[0])
    if fused_cross_entropy(loss, m):
        if scratch is None or scratch.outputs is not outputs:
            scratch = LossScratch(outputs)
        if m == 2:
            _two_class_cross_entropy(targets, scratch, out)
        else:
            _cross_entropy(outputs, targets, scratch, out)
    elif type(loss) is MSELoss:
        out[...] = _mse(outputs, targets)
    elif type(loss) is MultiMarginLoss:
        out[...] = _hinge(outputs, targets, loss.margin, loss.weight)
    else:
        for s in range(outputs.shape[0]):  # any other loss object: member by member
            value, grad = loss.loss_and_grad(outputs[s], targets[s])
            out[s] = value
            outputs[s] = grad
    return out


def _cross_entropy(outputs: np.ndarray, targets: np.ndarray, scratch: LossScratch,
                   out: np.ndarray) -> None:
    r"""Plain cross-entropy per member, M >= 3; (S, B, M) outputs become dL/doutputs.

    On a class-major copy :math:`z` (M, S B): :math:`z = f - \max_i f_i` (the
    largest 0), :math:`e = e^z`, and with :math:`R` the sum of :math:`e` over
    the classes other than the target :math:`c`, the log of the normaliser
    is :math:`\log T = \operatorname{log1p}(R + (e_c - 1))`: exactly the
    chapter's :math:`\operatorname{log1p}(R)` when the target is the top
    class (:math:`e_c = 1`), which keeps :math:`\log(1 + 10^{-18})`; else
    :math:`T \ge 1 + e_c` and no precision is at stake.  The loss of a row is
    :math:`\log T - z_c`, its gradient :math:`(e / T - y) / B`.
    """
    members, n, m = outputs.shape
    z, rest, picked = scratch.by_class, scratch.rest, scratch.picked
    np.copyto(z, outputs.reshape(-1, m).T)
    np.max(z, axis=0, out=scratch.row_max)  # over every class (no class left out)
    z -= scratch.row_max  # largest logit 0
    entries = z.reshape(-1)
    np.multiply(targets.reshape(-1), scratch.stride, out=picked)
    picked += scratch.columns  # entry (c, row) of the class-major copy
    z_target = entries[picked]  # f_c - max
    np.exp(z, out=z)
    e_target = entries[picked]
    entries[picked] = 0.0  # the target's term out of the sum ...
    np.add.reduce(z, axis=0, out=rest)
    entries[picked] = e_target  # ... and back
    total = rest + e_target  # T
    e_target -= scratch.one
    e_target += rest  # T - 1, exact when the target is the top class
    log_total = np.log1p(e_target)
    log_total -= z_target  # each row's loss
    np.add.reduce(log_total.reshape(members, n), axis=1, out=out)
    out /= scratch.n_losses
    total *= scratch.n
    z /= total  # q / B
    entries[picked] -= scratch.one_over_n  # (q - one_hot) / B
    np.copyto(outputs, z.T.reshape(outputs.shape))  # a view: outputs of any layout


def _two_class_cross_entropy(targets: np.ndarray, scratch: LossScratch,
                             out: np.ndarray) -> None:
    r"""The same for two classes, in fewer array operations, on the columns
    ``scratch.f0``, ``scratch.f1`` of the outputs.

    With :math:`u = f_{\bar c} - f_c` (the other class's logit minus the
    target's), the loss of a sample is :math:`\log(1 + e^u)`
    (``np.logaddexp(0, u)``, which is :math:`\operatorname{log1p}(e^u)`: the
    dominant term kept) and its derivative in :math:`u` is
    :math:`\sigma(u) = e^{u - \log(1 + e^u)}`; :math:`u = s (f_1 - f_0)`
    with :math:`s = 1 - 2c`, so :math:`\partial L / \partial f_1 =
    s\,\sigma(u) / B = -\partial L / \partial f_0`."""
    sign, u, softplus = scratch.sign, scratch.u, scratch.softplus
    np.copyto(sign, targets, casting="unsafe")
    np.multiply(sign, scratch.minus_two, out=sign)
    np.add(sign, scratch.one, out=sign)  # s = 1 - 2c
    np.subtract(scratch.f1, scratch.f0, out=u)
    u *= sign  # u = f_other - f_target
    np.logaddexp(scratch.zero, u, out=softplus)
    np.add.reduce(softplus, axis=1, out=out)
    np.divide(out, scratch.n_losses, out=out)
    u -= softplus
    np.exp(u, out=u)  # sigma(u)
    u *= sign
    np.multiply(u, scratch.one_over_n, out=scratch.f1)
    np.negative(scratch.f1, out=scratch.f0)


def _rows(outputs: np.ndarray) -> tuple:
    """Index arrays that pick ``outputs[s, b, targets[s, b]]``."""
    return np.arange(outputs.shape[0])[:, None], np.arange(outputs.shape[1])[None, :]


def _mse(outputs: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """``MSELoss`` per member: the mean over the B x M entries of (o - one_hot)^2."""
    members, rows = _rows(outputs)
    outputs[members, rows, targets] -= 1.0  # the residual o - y
    size = outputs.shape[1] * outputs.shape[2]
    with np.errstate(over="ignore"):  # as the chapter: (1e300)^2 is inf, correctly
        squares = np.square(outputs)   # rounded (the caller checks the losses)
    losses = squares.reshape(len(outputs), -1).sum(axis=1) / size
    outputs *= 2.0 * (1.0 / size)  # as scoring.mse_loss_grad
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
