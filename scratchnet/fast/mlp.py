r"""The fast path's MLP: the chapters' network on flat vectors and reused buffers.

:class:`MLP` here is :class:`scratchnet.MLP` (same arguments, same initial parameters
for the same ``rng``, same predictions) with the computation engineered for speed:

* **One flat vector.**  ``params`` is a :class:`FlatParams` mapping whose arrays are
  views of one vector ``params.flat``; so are the gradients.  The optimisers of
  :mod:`scratchnet.optim` see ``.flat`` and run their update rule once on the whole
  vector.  Assigning to an entry (``params["W1"] = W``) copies into the view.
* **Buffers per batch size.**  The activations of the last forward pass (the cache
  of backward) and the backward pass's intermediate arrays are allocated once per
  batch size and reused (the kernels of :mod:`scratchnet.fast.kernels` write into
  them); :meth:`MLP.loss_and_grads_into` (:func:`scratchnet.fast.train`'s step)
  writes the gradients into the caller's vector.
* **Fused loss.**  With the plain cross-entropy on class indices
  (:func:`scratchnet.fast.kernels.fused_cross_entropy` decides), the logits turn
  into their gradient in place (one softmax:
  :func:`scratchnet.fast.kernels.cross_entropy_and_grad_inplace`, the kernel of
  :class:`scratchnet.fast.Ensemble` too, on one member); every other loss, option
  or target goes through the loss object, as in the chapter.
* **A drop-in.**  A subclass that overrides ``forward`` or ``backward`` is run
  through them, as :class:`scratchnet.MLP` runs it.
* **Predictions in blocks.**  ``predict_proba`` and ``predict_log_proba`` on many
  inputs run the layers on ``PREDICT_ROWS`` rows at a time, so that a block's
  activations stay in the core's cache from one layer to the next (on 15,872
  inputs of one feature through 64-64 float32 layers, 12.0 ms in one pass, 6.7 ms
  in 8 blocks; on 4,101, 2.8 and 1.8 ms).  The numbers agree with one pass to
  rounding (BLAS may sum a product's terms in another order).

``tests/test_fast.py`` pins it to the reference: the same forward, backward
and gradients, and 1,000 steps of SGD and Adam ending within 1e-10.
"""

from __future__ import annotations

from typing import Any, Dict, Sequence, Tuple

import numpy as np

from .. import mlp
from .._network_checks import check_dlogits, check_inputs
from .._validation import as_class_indices
from ..objectives import get_loss
from .kernels import (
    CrossEntropyScratch,
    cross_entropy_and_grad_inplace,
    fused_cross_entropy,
    linear_backward_into,
    linear_into,
    relu_backward_into,
    relu_into,
    tanh_backward_into,
    tanh_into,
)
from .params import FlatParams, Layout

__all__ = ["MLP"]

_KERNELS = {"relu": (relu_into, relu_backward_into),
            "tanh": (tanh_into, tanh_backward_into)}
_MAX_CACHED_BATCH_SIZES = 4

#: Rows per block of a prediction: 2,048 rows of 64 float32 activations are
#: 512 KiB, about one core's L2 cache.
PREDICT_ROWS = 2048

class _Work:
    """The arrays one batch size needs: activations and backward scratch."""

    def __init__(self, n: int, hidden: Sequence[int], outputs: int, dtype: Any) -> None:
        self.hidden = [np.empty((n, h), dtype) for h in hidden]  # a_1 .. a_{L-1}
        self.dhidden = [np.empty((n, h), dtype) for h in hidden]  # dL/da_l
        self.dpre = [np.empty((n, h), dtype) for h in hidden]  # dL/dz_l
        self.logits = np.empty((n, outputs), dtype)
        self.scratch = CrossEntropyScratch((1, n, outputs), dtype)  # the fused loss
        self.grads: tuple = (None, [])  # the last gradient vector, its layers' views


class MLP(mlp.MLP):
    r""":class:`scratchnet.MLP` on a flat parameter vector with reused buffers.

    Parameters
    ----------
    sizes : sequence of int
    activation : {"relu", "tanh"}, default "relu"
    rng : numpy.random.Generator or int or None, optional
    dtype : {np.float64, np.float32}, default np.float64
    init : {"xavier", "he", "torch"}, default "xavier"
    loss : str or Loss, optional
        All as :class:`scratchnet.MLP`; the same ``rng`` gives the same
        initial parameters, ``loss`` is kept as ``self.loss`` (the default
        of ``loss_and_grads`` and the readout of the predictions).

    Attributes
    ----------
    params : FlatParams
        Views of ``params.flat``, in the order W1, b1, W2, b2, ...

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> model = sn.fast.MLP([1, 64, 64, 2], rng=0)
    >>> model.params.flat.shape, model.params["W2"].shape
    ((4418,), (64, 64))
    >>> reference = sn.MLP([1, 64, 64, 2], rng=0)
    >>> bool(np.array_equal(model.forward([0.5]), reference.forward([0.5])))
    True
    """

    def __init__(self, sizes: Sequence[int], *, activation: str = "relu",
                 rng: Any = None, dtype: Any = np.float64,
                 init: str = "xavier", loss: Any = None) -> None:
        super().__init__(sizes, activation=activation, rng=rng, dtype=dtype, init=init,
                         loss=loss)
        arrays = self.params
        self.layout: Layout = tuple((name, p.shape) for name, p in arrays.items())
        self.params = FlatParams(np.concatenate([p.ravel() for p in arrays.values()]),
                                 self.layout)
        self._work: Dict[int, _Work] = {}
        self._phi, self._phi_backward = _KERNELS[activation]
        self._param_layers = self._layers(self.params)  # the views never change
        # loss_and_grads's gradients, written here (the per-layer views of this
        # vector are made once), then returned as a copy: a new vector per call
        self._grads = np.empty_like(self.params.flat)

    def __repr__(self) -> str:
        return "fast." + super().__repr__()

    def _layers(self, params: Any) -> list:
        """``[(W1, b1), (W2, b2), ...]`` of a mapping with this layout."""
        names = [name for name, _ in self.layout]
        return [(params[w], params[b]) for w, b in zip(names[::2], names[1::2])]

    def _buffers(self, n: int) -> _Work:
        work = self._work.get(n)
        if work is None:
            if len(self._work) >= _MAX_CACHED_BATCH_SIZES:
                self._work.pop(next(iter(self._work)))
            work = _Work(n, self.sizes[1:-1], self.sizes[-1], self.dtype)
            self._work[n] = work
        return work

    def _forward(self, x: np.ndarray, work: _Work | None) -> np.ndarray:
        """Logits of checked ``x``: into ``work`` (kept for backward) or new arrays."""
        a, layers = x, self._param_layers
        for layer, (W, b) in enumerate(layers[:-1]):
            z = _out(work and work.hidden[layer], len(x), W, self.dtype)
            a = self._phi(linear_into(a, W, b, z))  # a_l = phi(a_{l-1} W_l + b_l)
        W, b = layers[-1]
        logits = _out(work and work.logits, len(x), W, self.dtype)
        if work is not None:
            self._cache, self._logits_shape, self._x = work, logits.shape, x
        return linear_into(a, W, b, logits)

    def _backward_into(self, dlogits: np.ndarray, vector: np.ndarray) -> None:
        """The last forward pass's gradients, given dL/dlogits, into ``vector``."""
        work, x = self._cache, self._x
        if vector is not work.grads[0]:
            work.grads = vector, self._layers(FlatParams(vector, self.layout))
        layers, grad_layers = self._param_layers, work.grads[1]
        inputs, dz = [x, *work.hidden], dlogits
        for layer in range(len(layers) - 1, -1, -1):
            dx = None if layer == 0 else work.dhidden[layer - 1]
            (W, _), (dW, db) = layers[layer], grad_layers[layer]
            linear_backward_into(dz, inputs[layer], W, dx, dW, db)
            if layer:
                dz = self._phi_backward(dx, inputs[layer], work.dpre[layer - 1])

    def forward(self, x: Any) -> np.ndarray:
        """As :meth:`scratchnet.MLP.forward` (a new array is returned).

        Parameters
        ----------
        x : array_like, shape (N, d_0) (or (N,) when d_0 = 1)

        Returns
        -------
        logits : ndarray, shape (N, M)

        Examples
        --------
        >>> import numpy as np
        >>> import scratchnet as sn
        >>> sn.fast.MLP([2, 3, 4], rng=0).forward(np.zeros((5, 2))).shape
        (5, 4)
        """
        x = check_inputs(x, self.sizes[0], self.dtype)
        return self._forward(x, self._buffers(len(x))).copy()

    def backward(self, dlogits: Any) -> FlatParams:
        """As :meth:`scratchnet.MLP.backward`: new arrays, views of a new flat vector.

        Parameters
        ----------
        dlogits : array_like, shape (N, M)

        Returns
        -------
        grads : FlatParams

        Examples
        --------
        >>> import numpy as np
        >>> import scratchnet as sn
        >>> model = sn.fast.MLP([2, 3, 4], rng=0)
        >>> logits = model.forward(np.ones((5, 2)))
        >>> model.backward(np.ones((5, 4)))["b2"]
        array([5., 5., 5., 5.])
        """
        dlogits = check_dlogits(dlogits, self._logits_shape, self.dtype)
        grads = FlatParams(np.empty_like(self.params.flat), self.layout)
        self._backward_into(dlogits, grads.flat)
        return grads

    def check_batch(self, x: Any, targets: Any) -> Tuple[Any, np.ndarray]:
        """A training batch: the inputs checked and in the model's dtype.

        Parameters
        ----------
        x : array_like, shape (N, d_0) (or (N,) when d_0 = 1)
            Left to ``forward`` when a subclass overrides it (as in the chapter).
        targets : array_like
            Left to the loss (:meth:`loss_and_grads_into`: class indices in
            ``[0, M)`` for the fused cross-entropy, else the loss's own checks).

        Returns
        -------
        x : ndarray, shape (N, d_0)
        targets : ndarray

        Examples
        --------
        >>> import numpy as np
        >>> import scratchnet as sn
        >>> model = sn.fast.MLP([1, 4, 2], rng=0, dtype=np.float32)
        >>> x, t = model.check_batch([0.0, 1.0, 2.0], [0, 1, 1])
        >>> x.shape, x.dtype, t
        ((3, 1), dtype('float32'), array([0, 1, 1]))
        """
        if not self._overridden():
            x = check_inputs(x, self.sizes[0], self.dtype)
        return x, np.asarray(targets)

    def loss_and_grads_into(self, x: Any, t: np.ndarray, loss: Any,
                            grads: np.ndarray, losses: np.ndarray) -> None:
        """:meth:`loss_and_grads` into the caller's memory (the step of ``fast.train``).

        Parameters
        ----------
        x, t : ndarray
            A batch from :meth:`check_batch`.
        loss : Loss
            A loss object; fused as in :meth:`loss_and_grads`.
        grads, losses : ndarray
            Written: the gradients, shaped as ``params.flat``, and ``losses[0]``.

        Returns
        -------
        None

        Examples
        --------
        >>> import numpy as np
        >>> import scratchnet as sn
        >>> model = sn.fast.MLP([1, 4, 2], rng=0)
        >>> x, t = model.check_batch([0.0, 1.0], [0, 1])
        >>> grads, losses = np.empty_like(model.params.flat), np.empty(1)
        >>> model.loss_and_grads_into(x, t, model.loss, grads, losses)
        >>> bool(np.isfinite(losses).all()), grads.shape
        (True, (18,))
        """
        if self._overridden():  # the subclass's own forward and backward
            losses[0], parts = mlp.MLP.loss_and_grads(self, x, t, loss=loss)
            views = FlatParams(grads, self.layout)  # copied into the caller's vector
            views.update({name: parts[name] for name in views})
            return
        work = self._buffers(len(x))
        logits = self._forward(x, work)
        if (fused_cross_entropy(loss, logits.shape[1]) and t.ndim == 1 and t.size
                and t.dtype.kind in "iu" and t.min() >= 0):
            if t.shape != (len(x),):
                raise ValueError(f"targets must hold one class index per row of x, "
                                 f"shape ({len(x)},); got shape {t.shape}")
            if t.max() >= logits.shape[1]:  # the chapter's check names the index
                as_class_indices(t, logits.shape[1])
            cross_entropy_and_grad_inplace(logits[None], t[None], work.scratch, losses)
            dlogits = logits  # in place: the ensemble's kernel, on one member
        else:
            losses[0], dlogits = loss.loss_and_grad(logits, t)  # the chapter's
            dlogits = check_dlogits(dlogits, self._logits_shape, self.dtype)
        self._backward_into(dlogits, grads)

    def loss_and_grads(self, x: Any, targets: Any, *, loss: Any = None
                       ) -> Tuple[float, FlatParams]:
        """As :meth:`scratchnet.MLP.loss_and_grads`; plain cross-entropy is fused.

        :meth:`check_batch`, then :meth:`loss_and_grads_into` into a vector the
        network keeps; the gradients returned are a copy of it, their own.

        Parameters
        ----------
        x : array_like, shape (N, d_0) (or (N,) when d_0 = 1)
        targets : array_like
            Class indices (N,), or for the cross-entropy distributions (N, M).
        loss : str or Loss, optional
            Default ``self.loss``.  Fused when ``kernels.fused_cross_entropy``
            says so and the targets are class indices; else ``loss.loss_and_grad``.

        Returns
        -------
        loss : float
        grads : FlatParams

        Examples
        --------
        >>> import scratchnet as sn
        >>> model = sn.fast.MLP([1, 8, 2], rng=0)
        >>> loss, grads = model.loss_and_grads([0.0, 1.0], [0, 1])
        >>> sorted(grads), grads.flat.shape
        (['W1', 'W2', 'b1', 'b2'], (34,))
        """
        loss = self.loss if loss is None else get_loss(loss, outputs=self.sizes[-1])
        x, t = self.check_batch(x, targets)
        losses = np.empty(1)
        self.loss_and_grads_into(x, t, loss, self._grads, losses)  # its views kept
        return float(losses[0]), FlatParams(self._grads.copy(), self.layout)

    def _overridden(self) -> bool:
        """Whether a subclass overrides ``forward`` or ``backward``."""
        cls = type(self)
        return cls.forward is not MLP.forward or cls.backward is not MLP.backward

    def _predict_logits(self, x: Any) -> np.ndarray:
        """The chapter's hook for the predictions: logits in blocks, no cache."""
        if self._overridden():  # through the subclass's forward, the cache kept
            kept = (self._work, self._cache, getattr(self, "_logits_shape", None),
                    getattr(self, "_x", None))
            self._work = {}  # the prediction's own buffers, not backward's
            try:
                return super()._predict_logits(x)
            finally:
                self._work, self._cache, self._logits_shape, self._x = kept
        x = check_inputs(x, self.sizes[0], self.dtype)
        if len(x) <= PREDICT_ROWS:
            return self._forward(x, None)
        logits = np.empty((len(x), self.sizes[-1]), self.dtype)
        size = -(-len(x) // -(-len(x) // PREDICT_ROWS))  # equal blocks, at most that
        for start in range(0, len(x), size):  # a block's activations stay in cache
            rows = slice(start, start + size)
            logits[rows] = self._forward(x[rows], None)
        return logits


def _out(buffer: Any, n: int, W: np.ndarray, dtype: Any) -> np.ndarray:
    """``buffer``, or a new (n, outputs) array when there is none."""
    return np.empty((n, W.shape[1]), dtype) if buffer is None else buffer

