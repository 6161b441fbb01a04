r"""Multi-layer perceptrons built from the layer pairs, with hand-written backprop.

An MLP with layer sizes :math:`(d_0, d_1, \dots, d_L)` maps an input
:math:`x \in \mathbb{R}^{d_0}` to :math:`M = d_L` logits by alternating affine
maps and an elementwise activation :math:`\phi` (ReLU or tanh):

.. math::

    a_0 = x, \qquad a_\ell = \phi(a_{\ell-1} W_\ell + b_\ell) \;\; (\ell < L),
    \qquad f(x) = a_{L-1} W_L + b_L ,

and the softmax of the logits :math:`f(x)` is the model's posterior
:math:`q(C \mid x)`.  Training minimises the cross-entropy, whose gradient
with respect to the logits is :math:`(q - \text{one\_hot}(c)) / N`; the
backward pass carries it back through the same layers in reverse order,
each ``*_backward`` undoing its ``*_forward`` (see :mod:`scratchnet.layers`).

Two implementation choices make the training loop fast, and a reader should
know them:

* **Parameters live in one flat vector.**  ``model.flat_params`` is a single
  array (float64 by default, float32 on request); ``model.params["W1"]``
  etc. are reshaped *views* into it, so an optimiser may update the whole
  model in a few vectorised operations and an in-place update of a view is
  an update of the model.  Likewise ``model.flat_grads`` and the gradient
  dict returned by ``backward``.
* **Work arrays are reused.**  The hidden activations of the last
  ``forward`` are kept (that is the cache ``backward`` needs) in buffers
  allocated once per batch size, and ``backward`` writes each gradient into
  its view of ``flat_grads`` (``np.matmul(..., out=...)``): no array the size
  of the parameters or of the activations is allocated in the hot loop (small
  temporaries remain, such as ReLU's mask and per-row loss vectors).
  Consequently the dict ``backward`` returns is the same
  object every time and is overwritten by the next ``backward``: copy it to
  keep it.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Sequence, Tuple

import numpy as np

from ._validation import as_float_array, as_generator, check_positive_int
from .layers import (
    _linear,
    _linear_input_grad,
    _linear_param_grads,
    _relu,
    _relu_grad,
    _tanh,
    _tanh_grad,
)
from .losses import _cross_entropy_and_grad_inplace, cross_entropy_and_grad
from .softmax import softmax

__all__ = ["MLP", "TwoLayerMLP"]

# name -> (forward kernel, backward kernel given the forward's output)
_ACTIVATIONS = {"relu": (_relu, _relu_grad), "tanh": (_tanh, _tanh_grad)}
_MAX_CACHED_BATCH_SIZES = 4


def _flat_views(shapes: Sequence[Tuple[int, ...]], dtype: np.dtype
                ) -> Tuple[np.ndarray, List[np.ndarray]]:
    """One zero vector of ``dtype`` and consecutive views of it with ``shapes``."""
    sizes = [int(np.prod(shape)) for shape in shapes]
    flat = np.zeros(sum(sizes), dtype)
    views, start = [], 0
    for shape, size in zip(shapes, sizes):
        views.append(flat[start:start + size].reshape(shape))
        start += size
    return flat, views


def _check_sizes(sizes: Any) -> Tuple[int, ...]:
    if isinstance(sizes, (str, bytes)) or not hasattr(sizes, "__len__"):
        raise TypeError(f"sizes must be a sequence of layer widths like [1, 64, 2]; "
                        f"got {sizes!r}")
    if len(sizes) < 2:
        raise ValueError("sizes must list at least the input and output widths "
                         f"(like [1, 64, 2]); got {list(sizes)}")
    return tuple(check_positive_int(s, f"sizes[{i}]") for i, s in enumerate(sizes))


_DTYPES = "np.float32 or np.float64 (or 'float32', 'float64')"


def _check_dtype(dtype: Any) -> np.dtype:
    """``dtype`` as ``np.dtype('float32')`` or ``np.dtype('float64')``."""
    try:
        # None (which NumPy reads as float64) and bools are not dtypes here.
        resolved = None if dtype is None or isinstance(dtype, bool) else np.dtype(dtype)
    except (TypeError, ValueError):
        resolved = None
    if resolved is None:
        raise TypeError(f"dtype must be {_DTYPES}; got {dtype!r}")
    if resolved not in (np.float32, np.float64):
        raise ValueError(f"dtype must be {_DTYPES}; got {resolved}")
    return resolved


class _Work:
    """The arrays one batch size needs: activations and backward scratch."""

    def __init__(self, n: int, hidden: Sequence[int], out_features: int,
                 dtype: np.dtype) -> None:
        self.hidden = [np.empty((n, h), dtype) for h in hidden]  # a_1 .. a_{L-1}
        self.dhidden = [np.empty((n, h), dtype) for h in hidden]  # dL/da_l
        self.dpre = [np.empty((n, h), dtype) for h in hidden]  # dL/dz_l, pre-activation
        self.logits = np.empty((n, out_features), dtype)
        self.rows = np.arange(n)


class MLP:
    r"""A multi-layer perceptron: linear -> activation -> ... -> linear -> logits.

    Parameters
    ----------
    sizes : sequence of int, length L + 1 >= 2
        Layer widths :math:`(d_0, \dots, d_L)`: the number of input
        features, the hidden widths, and the number of classes :math:`M`.
        ``[1, 64, 64, 2]`` has two hidden layers of 64 units.
    activation : {"relu", "tanh"}, default "relu"
        The hidden activation :math:`\phi` (none after the last layer: its
        outputs are logits).
    rng : numpy.random.Generator or int or None, optional
        Randomness for the initial weights (a seed gives reproducible
        weights, bit for bit).
    dtype : {np.float64, np.float32} or {"float64", "float32"}, default np.float64
        Floating type of the parameters, the gradients, the work arrays and
        the logits.  Inputs of another type are converted to it.

    Attributes
    ----------
    params : dict of str to ndarray
        ``"W1", "b1", ..., "WL", "bL"``; ``W_l`` has shape
        :math:`(d_{l-1}, d_l)`, ``b_l`` shape :math:`(d_l,)`.  These are views
        into ``flat_params``.
    flat_params, flat_grads : ndarray of ``dtype``, shape (P,)
        All parameters (gradients) in one vector, in the order
        W1, b1, W2, b2, ... (each matrix row-major).
    sizes : tuple of int
    activation : str
    dtype : numpy.dtype
        ``float64`` or ``float32``.

    Notes
    -----
    Initialisation: biases 0, weights :math:`W_\ell \sim \mathcal N(0,
    \sigma_\ell^2)` with the Glorot/Xavier variance scaled by the gain of the
    activation that follows,

    .. math::

        \sigma_\ell^2 = g_\ell^2 \, \frac{2}{d_{\ell-1} + d_\ell}, \qquad
        g_\ell^2 = 2 \text{ for ReLU hidden layers}, \quad
        g_\ell^2 = 1 \text{ for tanh and for the output layer}

    (``torch.nn.init.xavier_normal_`` with ``calculate_gain``).  Between
    hidden layers of equal width this is exactly He/Kaiming's
    :math:`2 / d_{\ell-1}` for ReLU (which keeps the mean square of the
    activations constant: ReLU zeroes half its inputs, hence the 2) and
    Glorot's for tanh.  It differs where it matters for the experiments,
    the first layer of a one-input network: He's :math:`2 / d_0 = 2` gives
    weights of standard deviation 1.4, and with raw inputs reaching
    :math:`|x| \approx 6` the hidden activations are so large that plain
    SGD at learning rate 0.1 is near its stability limit and bounces around
    the posterior instead of settling on it (on the separated task, 4 of 10
    seeds were still more than 0.01 nats of expected KL away after 1,000
    steps of batch 64; with the rule above, 0 of 20, the worst at 0.003).
    Averaging the fan-in and fan-out keeps those weights near 0.25 and the
    training robust without rescaling the input.

    Update parameters in place (``model.params["W1"][...] = ...``, as the
    optimisers do); rebinding a dict entry to a new array would detach it
    from the model.  Input of shape (N,) is accepted when ``sizes[0] == 1``
    (a batch of scalars, as in the one-dimensional experiments) and treated
    as (N, 1).

    The computation runs in ``dtype``: ``forward``, ``predict_proba``,
    ``predict`` and ``loss_and_grads`` first convert ``x`` to it (so a
    float32 model given float64 data computes in float32, at the cost of
    one conversion per call: give it float32 data to skip it), and
    ``backward`` converts ``dlogits``.  float32 halves the memory and roughly doubles
    the speed of the matrix products on large layers; its rounding error
    (about :math:`6 \times 10^{-8}` relative per operation, against
    :math:`10^{-16}`) is far below the noise of stochastic gradients, but
    gradient checks by finite differences need float64.  The initial
    weights are drawn in float64 and rounded, so float32 and float64
    models built from the same seed start from the same weights up to
    rounding.

    Examples
    --------
    >>> import scratchnet as sn
    >>> model = sn.MLP([1, 64, 64, 2], rng=0)
    >>> sorted(model.params)
    ['W1', 'W2', 'W3', 'b1', 'b2', 'b3']
    >>> model.params["W2"].shape, model.flat_params.shape
    ((64, 64), (4418,))
    >>> model.predict_proba([0.0, 3.0]).shape
    (2, 2)
    >>> small = sn.MLP([1, 64, 64, 2], rng=0, dtype=np.float32)
    >>> small.flat_params.dtype, small.forward([0.0, 3.0]).dtype
    (dtype('float32'), dtype('float32'))
    """

    def __init__(self, sizes: Sequence[int], *, activation: str = "relu",
                 rng: Any = None, dtype: Any = np.float64) -> None:
        self.sizes = _check_sizes(sizes)
        self.dtype = _check_dtype(dtype)
        if activation not in _ACTIVATIONS:
            raise ValueError(f"activation must be 'relu' or 'tanh'; got {activation!r}")
        self.activation = activation
        self._phi, self._phi_grad = _ACTIVATIONS[activation]
        rng = as_generator(rng)

        shapes, names = [], []
        for layer, (fan_in, fan_out) in enumerate(zip(self.sizes, self.sizes[1:]), 1):
            shapes += [(fan_in, fan_out), (fan_out,)]
            names += [f"W{layer}", f"b{layer}"]
        self.flat_params, param_views = _flat_views(shapes, self.dtype)
        self.flat_grads, grad_views = _flat_views(shapes, self.dtype)
        self.params: Dict[str, np.ndarray] = dict(zip(names, param_views))
        self.grads: Dict[str, np.ndarray] = dict(zip(names, grad_views))
        # (W, b) and (dW, db) per layer, for the loops below.
        self._layers = list(zip(param_views[::2], param_views[1::2]))
        self._grad_layers = list(zip(grad_views[::2], grad_views[1::2]))
        for layer, (W, _) in enumerate(self._layers, 1):
            # drawn in float64 whatever the dtype: same seed, same weights
            W[...] = rng.standard_normal(W.shape) * self._init_std(layer)
        self._work: Dict[int, _Work] = {}
        self._inputs: List[np.ndarray] | None = None  # the cache: a_0 .. a_{L-1}

    def _init_std(self, layer: int) -> float:
        """Standard deviation of the initial weights of layer ``layer`` (1-based)."""
        fan_in, fan_out = self.sizes[layer - 1], self.sizes[layer]
        gain2 = 2.0 if self.activation == "relu" and layer < len(self._layers) else 1.0
        return math.sqrt(gain2 * 2.0 / (fan_in + fan_out))

    def _repr_dtype(self) -> str:
        return "" if self.dtype == np.float64 else f", dtype={self.dtype.name!r}"

    def __repr__(self) -> str:
        return (f"MLP({list(self.sizes)}, activation={self.activation!r}"
                f"{self._repr_dtype()})")

    # --- input checks (public methods only) ---------------------------------

    def _check_x(self, x: Any) -> np.ndarray:
        x = as_float_array(x, "x")
        d = self.sizes[0]
        if x.ndim == 1 and d == 1:
            x = x.reshape(-1, 1)
        if x.ndim != 2 or x.shape[1] != d:
            one_d = " (or (N,), since there is one feature)" if d == 1 else ""
            raise ValueError(
                f"x must have shape (N, {d}){one_d} for a network with "
                f"{d} input feature{'s' if d != 1 else ''}; got shape {x.shape}"
            )
        return x

    # --- the unchecked passes (the mathematics) --------------------------------

    def _buffers(self, n: int) -> _Work:
        work = self._work.get(n)
        if work is None:
            if len(self._work) >= _MAX_CACHED_BATCH_SIZES:
                self._work.pop(next(iter(self._work)))
            work = self._work[n] = _Work(n, self.sizes[1:-1], self.sizes[-1],
                                         self.dtype)
        return work

    def _forward(self, x: np.ndarray, work: _Work | None, logits=None) -> np.ndarray:
        """Logits for 2-D ``x``; with ``work``, cache the activations for backward."""
        if x.dtype != self.dtype:
            x = x.astype(self.dtype)  # compute in the model's dtype
        a, inputs = x, [x]
        for layer, (W, b) in enumerate(self._layers[:-1]):
            z = _linear(a, W, b, out=None if work is None else work.hidden[layer])
            a = self._phi(z, out=z)  # a_l = phi(a_{l-1} W_l + b_l), in place
            inputs.append(a)
        if work is not None:
            self._inputs = inputs
        W, b = self._layers[-1]
        return _linear(a, W, b, out=logits)

    def _backward(self, dlogits: np.ndarray) -> None:
        """Write dL/dW_l, dL/db_l into ``flat_grads`` given dL/dlogits."""
        inputs = self._inputs
        work = self._work[dlogits.shape[0]]
        dz = dlogits
        for layer in range(len(self._layers) - 1, -1, -1):
            dW, db = self._grad_layers[layer]
            _linear_param_grads(dz, inputs[layer], dW, db)
            if layer == 0:
                break  # dL/dx is not needed
            da = _linear_input_grad(dz, self._layers[layer][0], work.dhidden[layer - 1])
            dz = self._phi_grad(da, inputs[layer], out=work.dpre[layer - 1])

    def _loss_and_grads_unchecked(self, x: np.ndarray, targets: np.ndarray) -> float:
        """One training step's loss; gradients left in ``flat_grads``.

        ``x`` must be 2-D float of the right width and ``targets`` valid
        class indices: the training loop checks them once, not every step.
        """
        work = self._buffers(x.shape[0])
        logits = self._forward(x, work, logits=work.logits)
        loss = _cross_entropy_and_grad_inplace(logits, targets, work.rows)
        self._backward(logits)
        return loss

    # --- the public interface -------------------------------------------------

    def forward(self, x: Any) -> np.ndarray:
        r"""Logits :math:`f(x)` for a batch, keeping what ``backward`` needs.

        Parameters
        ----------
        x : array_like, shape (N, d_0) (or (N,) when d_0 = 1)
            A batch of inputs, converted to the model's ``dtype``.

        Returns
        -------
        logits : ndarray of ``dtype``, shape (N, M)
            A new array (not overwritten by later calls).

        Examples
        --------
        >>> import scratchnet as sn
        >>> sn.MLP([2, 3, 4], rng=0).forward(np.zeros((5, 2))).shape
        (5, 4)
        """
        x = self._check_x(x)
        return self._forward(x, self._buffers(x.shape[0]))

    def backward(self, dlogits: Any) -> Dict[str, np.ndarray]:
        r"""Gradients of the loss w.r.t. every parameter, by backpropagation.

        Parameters
        ----------
        dlogits : array_like, shape (N, M)
            :math:`\partial L / \partial f` for the batch of the last
            ``forward`` (for the mean cross-entropy, :math:`(q - \text{one\_hot}) / N`),
            converted to the model's ``dtype``.

        Returns
        -------
        grads : dict of str to ndarray
            Same keys and shapes as ``params``; views into ``flat_grads``,
            the same dict every call, overwritten (not accumulated) by the
            next ``backward``.

        Notes
        -----
        Going down the layers, with :math:`\delta_L = \partial L / \partial f`,

        .. math::

            \frac{\partial L}{\partial W_\ell} = a_{\ell-1}^\top \delta_\ell, \quad
            \frac{\partial L}{\partial b_\ell} = \sum_n \delta_{\ell, n}, \quad
            \delta_{\ell-1} = (\delta_\ell W_\ell^\top) \odot \phi'(z_{\ell-1}) .

        Examples
        --------
        >>> import scratchnet as sn
        >>> model = sn.MLP([2, 3, 4], rng=0)
        >>> logits = model.forward(np.ones((5, 2)))
        >>> grads = model.backward(np.ones((5, 4)))
        >>> grads["W2"].shape, grads["b2"]
        ((3, 4), array([5., 5., 5., 5.]))
        """
        if self._inputs is None:
            raise RuntimeError("backward() needs the cache of a forward() pass; "
                               "call forward(x) first")
        n = self._inputs[0].shape[0]
        dlogits = as_float_array(dlogits, "dlogits").astype(self.dtype, copy=False)
        expected = (n, self.sizes[-1])
        if dlogits.shape != expected:
            raise ValueError(
                f"dlogits must have the shape of the last forward's logits "
                f"{expected}; got {dlogits.shape}"
            )
        self._backward(dlogits)
        return self.grads

    def loss_and_grads(self, x: Any, targets: Any
                       ) -> Tuple[float, Dict[str, np.ndarray]]:
        r"""Mean cross-entropy on a batch and its gradients (forward, loss, backward).

        Parameters
        ----------
        x : array_like, shape (N, d_0) (or (N,) when d_0 = 1)
            Converted to the model's ``dtype``.
        targets : array_like of int, shape (N,)
            Class indices in :math:`[0, M)`.

        Returns
        -------
        loss : float
            :math:`L = -\frac1N \sum_n \log q(c_n \mid x_n)`, computed in
            the model's ``dtype``.
        grads : dict of str to ndarray
            As returned by :meth:`backward`.

        Examples
        --------
        >>> import scratchnet as sn
        >>> model = sn.MLP([1, 8, 2], rng=0)
        >>> loss, grads = model.loss_and_grads([0.0, 1.0], [0, 1])
        >>> sorted(grads)
        ['W1', 'W2', 'b1', 'b2']
        """
        loss, dlogits = cross_entropy_and_grad(self.forward(x), targets)
        return float(loss), self.backward(dlogits)

    def predict_proba(self, x: Any) -> np.ndarray:
        r"""The model's posterior :math:`q(C \mid x) = \operatorname{softmax}(f(x))`.

        Parameters
        ----------
        x : array_like, shape (N, d_0) (or (N,) when d_0 = 1)
            Converted to the model's ``dtype``.

        Returns
        -------
        probs : ndarray of ``dtype``, shape (N, M)
            Rows sum to 1.  Does not touch the cache of ``forward``.

        Examples
        --------
        >>> import scratchnet as sn
        >>> probs = sn.MLP([1, 8, 3], rng=0).predict_proba([0.5, 1.5])
        >>> probs.shape, bool(np.allclose(probs.sum(axis=1), 1.0))
        ((2, 3), True)
        """
        return softmax(self._forward(self._check_x(x), None))

    def predict(self, x: Any) -> np.ndarray:
        r"""The most probable class :math:`\arg\max_i f_i(x)` for each input.

        Parameters
        ----------
        x : array_like, shape (N, d_0) (or (N,) when d_0 = 1)

        Returns
        -------
        classes : ndarray of int, shape (N,)

        Examples
        --------
        >>> import scratchnet as sn
        >>> sn.MLP([1, 8, 2], rng=0).predict([0.0, 1.0]).shape
        (2,)
        """
        return np.argmax(self._forward(self._check_x(x), None), axis=1)


class TwoLayerMLP(MLP):
    r"""The textbook two-layer network: linear -> activation -> linear -> logits.

    Parameters
    ----------
    in_features : int
        :math:`D`, the input dimension (1 for the Gaussian experiments).
    hidden_features : int
        :math:`H`, the number of hidden units.
    out_features : int
        :math:`M`, the number of classes (logits).
    activation : {"relu", "tanh"}, default "relu"
        The hidden nonlinearity :math:`\phi`.
    rng : numpy.random.Generator or int or None, optional
        Randomness for the initial weights.
    dtype : {np.float64, np.float32} or {"float64", "float32"}, default np.float64
        Floating type of the parameters and the computation; inputs are
        converted to it.

    Attributes
    ----------
    params : dict of str to ndarray
        ``W1`` (D, H), ``b1`` (H,), ``W2`` (H, M), ``b2`` (M,): views into
        ``flat_params`` (see :class:`MLP`).

    Notes
    -----
    For a batch :math:`x` of shape (N, D), the forward pass is three
    forward functions of :mod:`scratchnet.layers` in a chain,

    .. math::

        z &= x W_1 + b_1            &\quad& \text{linear\_forward}  \\
        h &= \phi(z)                 &&      \text{relu\_forward / tanh\_forward} \\
        f &= h W_2 + b_2             &&      \text{linear\_forward (the logits)}

    and :math:`q(C \mid x) = \operatorname{softmax}(f)`.  Given
    :math:`\delta_f = \partial L / \partial f`, which for the mean
    cross-entropy is :math:`(q - \text{one\_hot}(c)) / N`, the backward
    pass calls the matching backward functions in reverse order:

    .. math::

        \frac{\partial L}{\partial W_2} &= h^\top \delta_f, \quad
        \frac{\partial L}{\partial b_2} = \textstyle\sum_n \delta_{f,n}, \quad
        \delta_h = \delta_f W_2^\top     &\quad& \text{linear\_backward} \\
        \delta_z &= \delta_h \odot \phi'(z)
            \quad (\mathbf 1[z > 0] \text{ or } 1 - h^2)
                                          && \text{relu\_backward / tanh\_backward} \\
        \frac{\partial L}{\partial W_1} &= x^\top \delta_z, \quad
        \frac{\partial L}{\partial b_1} = \textstyle\sum_n \delta_{z,n}
                                          && \text{linear\_backward}

    (:math:`\partial L / \partial x` is not needed).  This is :class:`MLP`
    with ``sizes = [in_features, hidden_features, out_features]``; the
    same code runs both, and its initialisation is described there
    (ReLU: weights :math:`\mathcal N(0, 4 / (D + H))` then
    :math:`\mathcal N(0, 2 / (H + M))`; biases 0).  ``dtype=np.float32``
    halves the memory and roughly doubles the speed of the matrix products
    on large layers (e.g. 784-256-10); check gradients in float64.

    Examples
    --------
    >>> import scratchnet as sn
    >>> model = sn.TwoLayerMLP(1, 64, 2, rng=0)
    >>> {name: p.shape for name, p in model.params.items()}
    {'W1': (1, 64), 'b1': (64,), 'W2': (64, 2), 'b2': (2,)}
    >>> loss, grads = model.loss_and_grads(np.array([0.0, 3.0]), np.array([0, 1]))
    >>> print(f"{loss:.4f}")   # near log 2: the untrained network is unsure
    0.6...
    """

    def __init__(self, in_features: int, hidden_features: int, out_features: int, *,
                 activation: str = "relu", rng: Any = None,
                 dtype: Any = np.float64) -> None:
        super().__init__([in_features, hidden_features, out_features],
                         activation=activation, rng=rng, dtype=dtype)
        self.in_features, self.hidden_features, self.out_features = self.sizes

    def __repr__(self) -> str:
        return (f"TwoLayerMLP({self.in_features}, {self.hidden_features}, "
                f"{self.out_features}, activation={self.activation!r}"
                f"{self._repr_dtype()})")
