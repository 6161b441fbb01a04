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

from typing import Any, List, Sequence, Tuple

import numpy as np

from .._validation import as_float_array
from ..mlp import init_params
from ..objectives import get_loss
from .kernels import (
    CrossEntropyScratch,
    relu_backward_mask_into,
    relu_into,
    relu_mask_into,
    tanh_backward_into,
    tanh_into,
)
from .mlp import MLP
from .objectives import member_losses_inplace
from .params import Layout, StackedParams

__all__ = ["Ensemble"]


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
        self.scratch = CrossEntropyScratch(self.logits.shape, dtype)  # the fused loss
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
    loss : str or Loss, optional
        The loss the members are trained with, as for :class:`scratchnet.MLP`:
        the default of :meth:`loss_and_grads` and the readout of the
        predictions (None: the cross-entropy, or the binary cross-entropy
        for one output).  :func:`scratchnet.fast.train` given a
        ``loss=`` sets it.

    Attributes
    ----------
    params : StackedParams
        ``W1`` of shape (S, d_0, d_1), ``b1`` (S, d_1), ...: views of one
        vector (member after member), so an optimiser updates every member
        in one call.
    members : int
        S.
    loss : Loss
        Turns each member's outputs into probabilities.

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> ens = sn.fast.Ensemble([1, 8, 2], rngs=[0, 1, 2])
    >>> ens.params["W2"].shape
    (3, 8, 2)
    >>> bool(np.array_equal(ens.params["W1"][1], sn.MLP([1, 8, 2], rng=1).params["W1"]))
    True
    """

    def __init__(self, sizes: Sequence[int], rngs: Sequence[Any], *,
                 activation: str = "relu", dtype: Any = np.float64,
                 init: str = "xavier", loss: Any = None) -> None:
        if isinstance(rngs, (str, bytes)) or not hasattr(rngs, "__len__") or not rngs:
            raise TypeError("rngs must be a non-empty sequence of seeds or Generators, "
                            f"one per member; got {rngs!r}")
        first = MLP(sizes, rng=rngs[0], activation=activation, dtype=dtype, init=init,
                    loss=loss)
        members = [first.params.flat] + [np.concatenate([p.ravel() for p in init_params(
            sizes, activation=activation, init=init, rng=rng, dtype=dtype).values()])
            for rng in rngs[1:]]
        self.sizes, self.dtype, self.activation = first.sizes, first.dtype, activation
        self.init, self.loss = init, first.loss
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
        default = type(get_loss(None, outputs=self.sizes[-1]))
        loss = "" if type(self.loss) is default else f", loss={self.loss!r}"
        return (f"fast.Ensemble({list(self.sizes)}, members={self.members}, "
                f"activation={self.activation!r}{loss})")

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

    def check_batch(self, x: Any, targets: Any) -> Tuple[np.ndarray, np.ndarray]:
        """A training batch, checked and in the ensemble's dtype.

        Parameters
        ----------
        x : array_like, shape (S, B, d_0) (or (S, B) when d_0 = 1)
        targets : array_like of int, shape (S, B)
            Class indices in ``[0, M)`` (``[0, 2)`` for one output).

        Returns
        -------
        x : ndarray, shape (S, B, d_0)
        targets : ndarray of int, shape (S, B)

        Raises
        ------
        ValueError
            On a shape, a dtype or a class index that does not fit.

        Examples
        --------
        >>> import numpy as np
        >>> import scratchnet as sn
        >>> ens = sn.fast.Ensemble([1, 4, 2], rngs=[0, 1])
        >>> x, t = ens.check_batch(np.zeros((2, 3)), np.zeros((2, 3), int))
        >>> x.shape, x.dtype
        ((2, 3, 1), dtype('float64'))
        """
        if not (isinstance(x, np.ndarray) and x.dtype == self.dtype
                and x.ndim == 3 and x.shape[0] == self.members):
            x = self._inputs(x)
        if x.ndim != 3:
            raise ValueError(f"x must hold one batch per member, shape ({self.members},"
                             f" B, {self.sizes[0]}); got shape {x.shape}")
        t = np.asarray(targets)
        m = max(self.sizes[-1], 2)  # one output: the classes 0 and 1
        if t.shape != x.shape[:2] or t.dtype.kind not in "iu" or (
                t.size and (t.min() < 0 or t.max() >= m)):
            raise ValueError(f"targets must be class indices in [0, {m}) of shape "
                             f"{x.shape[:2]} (the ensemble takes no probability "
                             f"targets and no ignored index: train fast.MLP for "
                             f"those); got shape {t.shape}, dtype {t.dtype}")
        return x, t

    def loss_and_grads_into(self, x: np.ndarray, t: np.ndarray, loss: Any,
                            grads: np.ndarray, losses: np.ndarray) -> None:
        """:meth:`loss_and_grads` into memory the caller owns, on a checked batch.

        The training loop's step: no array of the parameters' size is made.

        Parameters
        ----------
        x, t : ndarray
            A batch from :meth:`check_batch`.
        loss : Loss
            A loss object (``get_loss`` of the name).
        grads, losses : ndarray
            Written: the stacked gradient vector (``params.flat``'s shape)
            and each member's loss (S,).

        Returns
        -------
        None

        Examples
        --------
        >>> import numpy as np
        >>> import scratchnet as sn
        >>> ens = sn.fast.Ensemble([1, 4, 2], rngs=[0, 1])
        >>> x, t = ens.check_batch(np.zeros((2, 3)), np.zeros((2, 3), int))
        >>> grads, losses = np.empty_like(ens.params.flat), np.empty(2)
        >>> ens.loss_and_grads_into(x, t, ens.loss, grads, losses)
        >>> bool(np.isfinite(losses).all())
        True
        """
        work = self._buffers(x.shape[1])
        logits = self._forward(x, work)
        member_losses_inplace(logits, t, loss, scratch=work.scratch, out=losses)
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
            Default ``self.loss``.  ``"cross_entropy"`` (fused), ``"mse"``
            (squared error on one-hot targets; with one output, on the class
            itself), ``"hinge"``, or a loss
            object: member ``s``'s loss is that of ``loss`` on its own batch
            (:func:`scratchnet.fast.objectives.member_losses_inplace`).

        Returns
        -------
        losses : ndarray of float64, shape (S,)
        grads : StackedParams
            A new vector; member ``s``'s slice is the gradient of its own loss.

        Examples
        --------
        >>> import numpy as np
        >>> import scratchnet as sn
        >>> ens = sn.fast.Ensemble([1, 4, 2], rngs=[0, 1])
        >>> losses, grads = ens.loss_and_grads(np.zeros((2, 3)), np.zeros((2, 3), int))
        >>> losses.shape, grads["W1"].shape
        ((2,), (2, 1, 4))
        """
        x, t = self.check_batch(x, targets)
        grads = StackedParams(np.empty_like(self.params.flat), self.layout)
        losses = np.empty(self.members)
        loss = self.loss if loss is None else get_loss(loss, outputs=self.sizes[-1])
        self.loss_and_grads_into(x, t, loss, grads.flat, losses)
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
        >>> import numpy as np
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
        ndarray, shape (S, N, K), or (N, K) for one member
            ``self.loss.predict_log_proba`` of each member's outputs (K = M,
            or 2 for one output): ``log_softmax`` for the cross-entropy.

        Examples
        --------
        >>> import scratchnet as sn
        >>> sn.fast.Ensemble([1, 4, 3], rngs=[0, 1]).predict_log_proba([0.0]).shape
        (2, 1, 3)
        """
        return self._readout(x, member, self.loss.predict_log_proba)

    def _readout(self, x: Any, member: int | None, readout: Any) -> np.ndarray:
        """``readout`` of every member's outputs (or one member's) on shared x."""
        x = self._inputs(x)
        if x.ndim != 2:
            raise ValueError(f"x must have shape (N, {self.sizes[0]}); got {x.shape}")
        if member is not None:
            net = self.member(member)
            return readout(net.forward(x))
        logits = self._forward(x, None)
        members, n, m = logits.shape  # the readouts work row by row
        return readout(logits.reshape(members * n, m)).reshape(members, n, -1)

    def predict_proba(self, x: Any, member: int | None = None) -> np.ndarray:
        """Posteriors of every member (or one): ``self.loss.predict_proba``.

        Parameters
        ----------
        x : array_like, shape (N, d_0) (or (N,) when d_0 = 1)
        member : int, optional

        Returns
        -------
        ndarray, shape (S, N, K), or (N, K) for one member

        Examples
        --------
        >>> import numpy as np
        >>> import scratchnet as sn
        >>> p = sn.fast.Ensemble([1, 4, 2], rngs=[0, 1]).predict_proba([0.0, 1.0])
        >>> p.shape, bool(np.allclose(p.sum(axis=-1), 1))
        ((2, 2, 2), True)
        """
        return self._readout(x, member, self.loss.predict_proba)

    def member(self, s: int) -> MLP:
        """Member ``s`` as a network of its own (a copy of its parameters), with
        the ensemble's ``init``, ``activation``, ``dtype`` and ``loss``.

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
        net = MLP(self.sizes, activation=self.activation, dtype=self.dtype,
                  init=self.init, loss=self.loss, rng=0)
        net.params.flat[...] = self.params.flat.reshape(self.members, -1)[s]
        return net

