r"""Many networks of one shape trained at once: a seed study for about one run.

One run says little about a recipe: the spread over seeds is large.  Training
S networks one after the other costs S times the Python overhead of a step;
:class:`Ensemble` instead stacks the members along a leading axis, so that
every layer is one batched matrix product over all members
(``(S, B, d) @ (S, d, h)``), the loss and its gradient one pass over
``(S, B, M)`` logits, and the optimiser's update one call on one flat vector.

Member :math:`s` is the network :class:`scratchnet.fast.MLP` would build from
``rngs[s]`` and train on member :math:`s`'s batches; the members never mix
(each one's loss is the mean over its own batch, and the gradient of the sum
of the members' losses with respect to member :math:`s`'s parameters is its
own gradient).  ``tests/test_fast.py`` pins it: every member, trained for
1,000 steps, ends within :math:`10^{-10}` of the network trained alone.

Two layout choices make a step cheap (:class:`StackedParams`):

* **Member after member.**  The flat vector holds member 0's parameters in
  ``fast.MLP``'s order (``W1, b1, W2, b2, ...``), then member 1's, and so
  on; the optimiser's state is laid out alike, so per-member quantities are
  one broadcast over ``flat.reshape(S, -1)``.
* **The bias as a last row.**  ``W_l`` (d, h) and ``b_l`` (h,) of one member
  are consecutive, so together they are one (d + 1, h) matrix
  :math:`\tilde W_l = [W_l;\, b_l]`.  Every activation buffer carries a
  last column of ones, :math:`\tilde a = [a,\, 1]`, so a layer is one
  matrix product, :math:`z = \tilde a \tilde W`, and its gradient too,
  :math:`\partial L / \partial \tilde W = \tilde a^\top \partial L / \partial z`
  (the row of ones sums ``dz`` over the batch: the bias's gradient).  No
  separate bias addition or reduction is left in a step.
"""

from __future__ import annotations

import math
from typing import Any, List, Sequence, Tuple

import numpy as np

from .._validation import as_float_array
from ..mlp import init_params
from .kernels import (
    relu_backward_mask_into,
    relu_into,
    relu_mask_into,
    tanh_backward_into,
    tanh_into,
)
from .mlp import MLP, FlatParams, Layout
from .objectives import _resolve, member_losses_inplace

__all__ = ["Ensemble", "StackedParams"]


class StackedParams(FlatParams):
    """:class:`FlatParams` of S members, stored member after member.

    Parameters
    ----------
    flat : ndarray, shape (S * P,)
        Member ``s``'s parameters are ``flat.reshape(S, P)[s]``, in the
        order of ``fast.MLP``'s own flat vector.
    layout : tuple of (str, tuple of int)
        Names and stacked shapes ``(S, *shape)``, in ``fast.MLP``'s order.

    Examples
    --------
    >>> from scratchnet.fast import StackedParams
    >>> p = StackedParams(np.arange(6.0), (("W", (2, 1, 2)), ("b", (2, 1))))
    >>> p["W"][:, 0], p["b"][:, 0]   # member 0 is [0, 1 | 2], member 1 [3, 4 | 5]
    (array([[0., 1.],
           [3., 4.]]), array([2., 5.]))
    """

    def unflatten(self, vector: np.ndarray) -> dict:
        """Views of ``vector`` with this layout's names and stacked shapes.

        Parameters
        ----------
        vector : ndarray, shape (S * P,)

        Returns
        -------
        dict of str to ndarray
            Strided views: entry ``(S, *shape)`` of member ``s`` at
            ``vector.reshape(S, P)[s]``.

        Examples
        --------
        >>> from scratchnet.fast import StackedParams
        >>> p = StackedParams(np.zeros(4), (("a", (2, 1)), ("b", (2, 1))))
        >>> p.unflatten(np.arange(4.0))["b"]
        array([[1.],
               [3.]])
        """
        rows = vector.reshape(self.layout[0][1][0], -1)
        views, start = {}, 0
        for name, shape in self.layout:
            stop = start + math.prod(shape[1:])
            views[name] = rows[:, start:stop].reshape(shape)
            start = stop
        return views


def _bias_blocks(vector: np.ndarray, sizes: Sequence[int]) -> List[np.ndarray]:
    r"""The (S, d + 1, h) views :math:`[W_l; b_l]` of a stacked vector."""
    rows = vector.reshape(-1, sum((d + 1) * h for d, h in zip(sizes, sizes[1:])))
    blocks, start = [], 0
    for d, h in zip(sizes, sizes[1:]):
        stop = start + (d + 1) * h
        blocks.append(rows[:, start:stop].reshape(-1, d + 1, h))
        start = stop
    return blocks


def _with_ones(shape: Tuple[int, ...], dtype: Any) -> np.ndarray:
    """An empty buffer of ``shape`` plus a last column of ones (the bias input)."""
    out = np.zeros((*shape[:-1], shape[-1] + 1), dtype)
    out[..., -1] = 1.0
    return out


class _Work:
    """The arrays of a training step on batches of n rows, allocated once, and
    the views of them that a step uses (made once: a view costs as much as a
    small array operation)."""

    def __init__(self, members: int, n: int, sizes: Sequence[int], dtype: Any, *,
                 relu: bool = True, training: bool = True, shared: bool = False
                 ) -> None:
        self.x = _with_ones((n, sizes[0]) if shared else (members, n, sizes[0]), dtype)
        self.hidden = [_with_ones((members, n, h), dtype) for h in sizes[1:-1]]
        self.logits = np.empty((members, n, sizes[-1]), dtype)
        # without the ones column: where x and the products are written
        self.x_in = self.x[..., :-1]
        self.z = [a[..., :-1] for a in self.hidden]
        if not training:  # a forward pass only (predictions)
            self.masks: List[np.ndarray] = []
            return
        # relu: 1[z > 0], kept for the backward pass (1 on the ones column)
        self.masks = [np.empty(a.shape, dtype) for a in self.hidden] if relu else []
        self.flags = [np.empty(a.shape, bool) for a in self.hidden] if relu else []
        self.dhidden = [np.zeros((members, n, h + 1), dtype) for h in sizes[1:-1]]
        # dL/da above (its last column stays 0); dL/dz in place for relu, apart for tanh
        self.dpre = self.dhidden if relu else [
            np.zeros((members, n, h + 1), dtype) for h in sizes[1:-1]]
        self.inputs_T = [a.transpose(0, 2, 1) for a in (self.x, *self.hidden)]
        self.da = [d[..., :-1] for d in self.dhidden]
        self.dz = [d[..., :-1] for d in self.dpre]
        m = sizes[-1]  # the cross-entropy's scratch, one row per (member, sample)
        self.row_max = np.empty((members * n, 1), dtype)
        self.total = np.empty((members * n, 1), dtype)
        self.first = np.arange(members * n) * m  # flat index of each row's logit 0
        self.picked = np.empty(members * n, np.intp)  # flat index of the target's
        self.n = np.asarray(n, dtype)  # 0-d arrays: faster operands than floats
        self.one_over_n = np.asarray(1.0 / n, dtype)
        self.zero = np.zeros((), dtype)
        self.one, self.minus_two = np.ones((), dtype), np.asarray(-2, dtype)  # 0-d
        self.n_losses = np.asarray(n, np.float64)  # the losses' dtype
        self.sign, self.u, self.softplus = (np.empty((members, n), dtype)
                                            for _ in range(3))  # two classes
        self.f0, self.f1 = self.logits[..., 0], self.logits[..., 1 % m]
        self.grads: Any = None  # the last gradient vector and its block views
        self.grad_blocks: List[np.ndarray] = []

    def blocks_of(self, grads: np.ndarray, sizes: Sequence[int]) -> List[np.ndarray]:
        """The [dW; db] views of ``grads``, kept while the same vector comes back."""
        if grads is not self.grads:
            self.grads, self.grad_blocks = grads, _bias_blocks(grads, sizes)
        return self.grad_blocks


class Ensemble:
    r"""S MLPs of the same shape with their parameters stacked on a member axis.

    Parameters
    ----------
    sizes : sequence of int
        Layer widths, as for :class:`scratchnet.MLP`.
    rngs : sequence of (numpy.random.Generator or int)
        One per member: member ``s`` starts from the parameters of
        ``scratchnet.MLP(sizes, rng=rngs[s], ...)``.
    activation : {"relu", "tanh"}, default "relu"
    dtype : {np.float64, np.float32}, default np.float64
    init : {"xavier", "he", "torch"}, default "xavier"

    Attributes
    ----------
    params : StackedParams
        ``W1`` of shape (S, d_0, d_1), ``b1`` (S, d_1), ...: views of one
        vector (member after member), so an optimiser updates every member
        in one call.
    members : int
        S.

    Examples
    --------
    >>> import scratchnet as sn
    >>> ens = sn.fast.Ensemble([1, 8, 2], rngs=[0, 1, 2])
    >>> ens.params["W2"].shape
    (3, 8, 2)
    >>> bool(np.array_equal(ens.params["W1"][1], sn.MLP([1, 8, 2], rng=1).params["W1"]))
    True
    """

    def __init__(self, sizes: Sequence[int], rngs: Sequence[Any], *,
                 activation: str = "relu", dtype: Any = np.float64,
                 init: str = "xavier") -> None:
        if isinstance(rngs, (str, bytes)) or not hasattr(rngs, "__len__") or not rngs:
            raise TypeError("rngs must be a non-empty sequence of seeds or Generators, "
                            f"one per member; got {rngs!r}")
        first = MLP(sizes, rng=rngs[0], activation=activation, dtype=dtype, init=init)
        members = [first.params.flat] + [np.concatenate([p.ravel() for p in init_params(
            sizes, activation=activation, init=init, rng=rng, dtype=dtype).values()])
            for rng in rngs[1:]]
        self.sizes, self.dtype, self.activation = first.sizes, first.dtype, activation
        self.members = len(rngs)
        self.layout: Layout = tuple((name, (self.members, *shape))
                                    for name, shape in first.layout)
        self.params = StackedParams(np.concatenate(members), self.layout)
        self._blocks = _bias_blocks(self.params.flat, self.sizes)
        self._W_T = [block[:, :-1, :].transpose(0, 2, 1) for block in self._blocks]
        self._relu = activation == "relu"  # relu(1) = 1 keeps the ones; in place
        self._work: dict = {}  # one _Work, for the last batch size trained on
        self._kept: Any = None  # the _Work of the last forward pass kept for backward

    def __repr__(self) -> str:
        return (f"fast.Ensemble({list(self.sizes)}, members={self.members}, "
                f"activation={self.activation!r})")

    def _inputs(self, x: Any, name: str = "x") -> np.ndarray:
        x = as_float_array(x, name, allow_inf=False).astype(self.dtype, copy=False)
        d = self.sizes[0]
        if d == 1 and (x.ndim == 1 or (x.ndim == 2 and x.shape[-1] != 1)):
            x = x[..., None]  # (N,) inputs, or (S, B) batches, of one feature
        if x.ndim not in (2, 3) or x.shape[-1] != d or (
                x.ndim == 3 and x.shape[0] != self.members):
            raise ValueError(f"{name} must have shape (N, {d}), shared by the members, "
                             f"or ({self.members}, N, {d}), one batch per member; got "
                             f"shape {x.shape}")
        return x

    def _forward(self, x: np.ndarray, work: Any) -> np.ndarray:
        """Logits (S, N, M) of checked x, (N, d) or (S, N, d): into ``work``
        (kept for backward), or into new arrays when ``work`` is None."""
        if work is None:
            work = _Work(self.members, x.shape[-2], self.sizes, self.dtype,
                         relu=self._relu, training=False, shared=x.ndim == 2)
        else:
            self._kept = work
        work.x_in[...] = x
        a = work.x
        for layer, (block, hidden, z) in enumerate(zip(self._blocks, work.hidden,
                                                       work.z)):
            np.matmul(a, block, out=z)  # [a, 1] [W; b] = a W + b
            if not self._relu:
                tanh_into(z)
            elif work.masks:  # training: 1[z > 0] kept; on the whole buffer (faster)
                relu_mask_into(hidden, work.masks[layer], work.flags[layer])
            else:  # predictions: no mask to keep
                relu_into(hidden)
            a = hidden
        return np.matmul(a, self._blocks[-1], out=work.logits)

    def _backward_into(self, dlogits: np.ndarray, grads: np.ndarray) -> None:
        """The gradients of the last kept forward pass, given dL/dlogits, into
        the stacked vector ``grads``."""
        work = self._kept
        grad_blocks, dz = work.blocks_of(grads, self.sizes), dlogits
        for layer in range(len(self._blocks) - 1, -1, -1):
            np.matmul(work.inputs_T[layer], dz, out=grad_blocks[layer])  # [a, 1]^T dz
            if layer:
                np.matmul(dz, self._W_T[layer], out=work.da[layer - 1])  # dz W^T
                if self._relu:  # the ones column of dhidden: 0 * 1
                    relu_backward_mask_into(work.dhidden[layer - 1],
                                            work.masks[layer - 1], work.dpre[layer - 1])
                else:
                    tanh_backward_into(work.dhidden[layer - 1], work.hidden[layer - 1],
                                       work.dpre[layer - 1])
                dz = work.dz[layer - 1]

    def _buffers(self, n: int) -> _Work:
        work = self._work.get(n)
        if work is None:
            work = _Work(self.members, n, self.sizes, self.dtype, relu=self._relu)
            self._work = {n: work}
        return work

    def _check_batch(self, x: Any, targets: Any) -> Tuple[np.ndarray, np.ndarray]:
        """A training batch, checked: x (S, B, d_0) (or (S, B)), targets (S, B)."""
        if not (isinstance(x, np.ndarray) and x.dtype == self.dtype
                and x.ndim == 3 and x.shape[0] == self.members):
            x = self._inputs(x)
        if x.ndim != 3:
            raise ValueError(f"x must hold one batch per member, shape ({self.members},"
                             f" B, {self.sizes[0]}); got shape {x.shape}")
        t = np.asarray(targets)
        m = self.sizes[-1]
        if t.shape != x.shape[:2] or t.dtype.kind not in "iu" or (
                t.size and (t.min() < 0 or t.max() >= m)):
            raise ValueError(f"targets must be class indices in [0, {m}) of shape "
                             f"{x.shape[:2]}; got shape {t.shape}, dtype {t.dtype}")
        return x, t

    def _loss_and_grads_into(self, x: np.ndarray, t: np.ndarray, loss: Any,
                             grads: np.ndarray, losses: np.ndarray) -> None:
        """Each member's loss into ``losses`` (S,); the gradients into ``grads``
        (a checked batch)."""
        work = self._buffers(x.shape[1])
        logits = self._forward(x, work)
        if loss is not None:  # mse, hinge, any loss object: every member at once
            losses[...] = member_losses_inplace(logits, t, loss)
        elif logits.shape[-1] == 2:
            _two_class_cross_entropy_and_grad_inplace(logits, t, work, losses)
        else:
            losses[...] = _cross_entropy_and_grad_inplace(logits, t, work)
        self._backward_into(logits, grads)  # the logits are now dL/dlogits

    def loss_and_grads(self, x: Any, targets: Any, *, loss: Any = None
                       ) -> Tuple[np.ndarray, StackedParams]:
        r"""Each member's mean loss on its batch, and all the gradients.

        Parameters
        ----------
        x : array_like, shape (S, B, d_0) (or (S, B) when d_0 = 1)
            Member ``s``'s batch is ``x[s]``.
        targets : array_like of int, shape (S, B)
        loss : str or Loss, optional
            ``"cross_entropy"`` (the default, fused), ``"mse"`` (squared
            error on one-hot targets), ``"hinge"``, or a loss object: member
            ``s``'s loss is that of ``loss`` on its own batch
            (:func:`scratchnet.fast.objectives.member_losses_inplace`).

        Returns
        -------
        losses : ndarray of float64, shape (S,)
        grads : StackedParams
            A new vector; member ``s``'s slice is the gradient of its own loss.

        Examples
        --------
        >>> import scratchnet as sn
        >>> ens = sn.fast.Ensemble([1, 4, 2], rngs=[0, 1])
        >>> losses, grads = ens.loss_and_grads(np.zeros((2, 3)), np.zeros((2, 3), int))
        >>> losses.shape, grads["W1"].shape
        ((2,), (2, 1, 4))
        """
        x, t = self._check_batch(x, targets)
        grads = StackedParams(np.empty_like(self.params.flat), self.layout)
        losses = np.empty(self.members)
        self._loss_and_grads_into(x, t, _resolve(loss), grads.flat, losses)
        return losses, grads

    def forward(self, x: Any) -> np.ndarray:
        r"""The outputs (logits) of every member, on shared or per-member inputs.

        Parameters
        ----------
        x : array_like, shape (N, d_0) (or (N,) when d_0 = 1), or (S, N, d_0)
            Inputs shared by the members, or member ``s``'s own in ``x[s]``.

        Returns
        -------
        ndarray, shape (S, N, M)
            A new array.

        Examples
        --------
        >>> import scratchnet as sn
        >>> ens = sn.fast.Ensemble([1, 4, 3], rngs=[0, 1])
        >>> ens.forward([0.0, 1.0]).shape, ens.forward(np.zeros((2, 5, 1))).shape
        ((2, 2, 3), (2, 5, 3))
        """
        return self._forward(self._inputs(x), None)

    def predict_log_proba(self, x: Any, member: int | None = None) -> np.ndarray:
        r"""Log-posteriors of every member (or one) on shared inputs.

        Parameters
        ----------
        x : array_like, shape (N, d_0) (or (N,) when d_0 = 1)
        member : int, optional
            Only this member (its (N, M) answer).

        Returns
        -------
        ndarray, shape (S, N, M), or (N, M) for one member

        Examples
        --------
        >>> import scratchnet as sn
        >>> sn.fast.Ensemble([1, 4, 3], rngs=[0, 1]).predict_log_proba([0.0]).shape
        (2, 1, 3)
        """
        x = self._inputs(x)
        if x.ndim != 2:
            raise ValueError(f"x must have shape (N, {self.sizes[0]}); got {x.shape}")
        if member is not None:
            return self.member(member).predict_log_proba(x)
        logits = self._forward(x, None)
        shifted = logits - logits.max(axis=-1, keepdims=True)
        return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))

    def predict_proba(self, x: Any, member: int | None = None) -> np.ndarray:
        """``exp(predict_log_proba(x, member))``.

        Parameters
        ----------
        x : array_like, shape (N, d_0) (or (N,) when d_0 = 1)
        member : int, optional

        Returns
        -------
        ndarray, shape (S, N, M), or (N, M) for one member

        Examples
        --------
        >>> import scratchnet as sn
        >>> p = sn.fast.Ensemble([1, 4, 2], rngs=[0, 1]).predict_proba([0.0, 1.0])
        >>> p.shape, bool(np.allclose(p.sum(axis=-1), 1))
        ((2, 2, 2), True)
        """
        return np.exp(self.predict_log_proba(x, member))

    def member(self, s: int) -> MLP:
        """Member ``s`` as a network of its own (a copy of its parameters).

        Parameters
        ----------
        s : int

        Returns
        -------
        scratchnet.fast.MLP

        Examples
        --------
        >>> import scratchnet as sn
        >>> sn.fast.Ensemble([1, 4, 2], rngs=[0, 1]).member(1)
        fast.MLP([1, 4, 2], activation='relu')
        """
        if not 0 <= s < self.members:
            raise IndexError(f"member must be in [0, {self.members}); got {s}")
        net = MLP(self.sizes, activation=self.activation, dtype=self.dtype)
        net.params.flat[...] = self.params.flat.reshape(self.members, -1)[s]
        return net


def _cross_entropy_and_grad_inplace(logits: np.ndarray, targets: np.ndarray,
                                    work: _Work) -> np.ndarray:
    """``kernels.cross_entropy_and_grad_inplace`` per member, into ``work``'s
    scratch: (S, B, M) logits become dL/dlogits; returns the S mean losses.

    The row maxima and sums run over the M columns, one array operation per
    class: a reduction along a short last axis costs a loop step per row."""
    members, n, m = logits.shape
    flat, entries = logits.reshape(-1, m), logits.reshape(-1)
    row_max, total = work.row_max[:, 0], work.total[:, 0]
    np.maximum(flat[:, 0], flat[:, 1 % m], out=row_max)
    for j in range(2, m):
        np.maximum(row_max, flat[:, j], out=row_max)
    flat -= work.row_max  # largest logit 0
    np.add(work.first, targets.reshape(-1), out=work.picked)
    picked = entries[work.picked].reshape(members, n)  # f_{n, c_n} - max_n
    np.exp(flat, out=flat)
    np.copyto(total, flat[:, 0])
    for j in range(1, m):
        total += flat[:, j]  # in [1, M]
    losses = (np.log(total).reshape(members, n).sum(axis=1) - picked.sum(axis=1)) / n
    total *= work.n
    flat /= work.total  # q / B
    entries[work.picked] -= work.one_over_n  # (q - one_hot) / B
    return losses.astype(np.float64)


def _two_class_cross_entropy_and_grad_inplace(logits: np.ndarray, targets: np.ndarray,
                                              work: _Work, losses: np.ndarray) -> None:
    r"""The same for two classes, in fewer array operations; the S mean
    losses into ``losses``.

    With :math:`u = f_{\bar c} - f_c` (the other class's logit minus the
    target's), the loss of a sample is :math:`\log(1 + e^u)`
    (``np.logaddexp(0, u)``) and its derivative in :math:`u` is
    :math:`\sigma(u) = e^{u - \log(1 + e^u)}`; :math:`u = s (f_1 - f_0)`
    with :math:`s = 1 - 2c`, so :math:`\partial L / \partial f_1 =
    s\,\sigma(u) / B = -\partial L / \partial f_0`."""
    sign, u, softplus = work.sign, work.u, work.softplus
    np.copyto(sign, targets, casting="unsafe")
    np.multiply(sign, work.minus_two, out=sign)
    np.add(sign, work.one, out=sign)  # s = 1 - 2c
    np.subtract(work.f1, work.f0, out=u)
    u *= sign  # u = f_other - f_target
    np.logaddexp(work.zero, u, out=softplus)
    np.add.reduce(softplus, axis=1, out=losses)
    np.divide(losses, work.n_losses, out=losses)
    u -= softplus
    np.exp(u, out=u)  # sigma(u)
    u *= sign
    np.multiply(u, work.one_over_n, out=work.f1)
    np.negative(work.f1, out=work.f0)
