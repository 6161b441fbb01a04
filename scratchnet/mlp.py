r"""Multi-layer perceptrons: the chain of the layer pairs, and backprop by hand.

An MLP with layer sizes :math:`(d_0, d_1, \dots, d_L)` maps an input
:math:`x \in \mathbb{R}^{d_0}` to :math:`M = d_L` logits by alternating affine
maps and an elementwise activation :math:`\phi` (ReLU or tanh):

.. math::

    a_0 = x, \qquad a_\ell = \phi(a_{\ell-1} W_\ell + b_\ell) \;\; (\ell < L),
    \qquad f(x) = a_{L-1} W_L + b_L ,

and the outputs, read through the loss the model is trained with, are its
posterior :math:`q(C \mid x)` (for the cross-entropy, the softmax of the
logits).
``forward`` is literally that chain of :mod:`scratchnet.layers` forward
functions, each keeping its cache; ``backward`` calls the matching backward
functions in reverse order, and ``loss_and_grads`` puts a loss
(:mod:`scratchnet.objectives`) between them.

``params`` is a plain dict of arrays, updated in place by an optimiser; rebinding
an entry (``model.params["W1"] = new_W1``) works too, as every pass reads the
dict.  ``backward`` returns new arrays.  The fast path :class:`scratchnet.fast.MLP`
computes the same faster; ``tests/test_fast.py`` pins the two.
"""

from __future__ import annotations

import math
from typing import Any, Dict, Sequence, Tuple

import numpy as np

from ._network_checks import (
    check_dlogits,
    check_float_dtype,
    check_inputs,
    check_layer_sizes,
)
from ._validation import as_generator
from .layers import (
    linear_backward,
    linear_forward,
    relu_backward,
    relu_forward,
    tanh_backward,
    tanh_forward,
)
from .objectives import get_loss

__all__ = ["INITS", "MLP", "TwoLayerMLP", "init_params"]

ACTIVATIONS = {"relu": (relu_forward, relu_backward),
               "tanh": (tanh_forward, tanh_backward)}
#: The initialisation schemes of :func:`init_params`.
INITS = ("xavier", "he", "torch")


def init_params(sizes: Sequence[int], *, activation: str = "relu", init: str = "xavier",
                rng: Any = None, dtype: Any = np.float64) -> Dict[str, np.ndarray]:
    r"""Initial weights and biases of an MLP with layer ``sizes``.

    Parameters
    ----------
    sizes : sequence of int
        :math:`(d_0, \dots, d_L)`.
    activation : {"relu", "tanh"}, default "relu"
        Sets the gain :math:`g_\ell`: :math:`g_\ell^2 = 2` for the layers
        that feed a ReLU, 1 for tanh and for the output layer.
    init : {"xavier", "he", "torch"}, default "xavier"
        The scheme (below).
    rng : numpy.random.Generator or int or None
    dtype : float32 or float64, default float64

    Returns
    -------
    dict of str to ndarray
        ``W1`` (d_0, d_1), ``b1`` (d_1,), ..., ``WL``, ``bL``.

    Notes
    -----
    With fan-in :math:`n_\ell = d_{\ell-1}` and fan-out :math:`m_\ell = d_\ell`:

    * ``"xavier"`` (Glorot, scaled by the gain): :math:`W_\ell \sim
      \mathcal N(0,\, g_\ell^2 \cdot 2 / (n_\ell + m_\ell))`, :math:`b_\ell = 0`
      (``torch.nn.init.xavier_normal_`` with ``calculate_gain``);
    * ``"he"`` (Kaiming): :math:`W_\ell \sim \mathcal N(0,\, g_\ell^2 / n_\ell)`,
      :math:`b_\ell = 0` (``kaiming_normal_``, fan-in mode);
    * ``"torch"`` (the default of ``torch.nn.Linear``): :math:`W_\ell` and
      :math:`b_\ell` uniform on :math:`[-1/\sqrt{n_\ell},\, 1/\sqrt{n_\ell}]`.

    Draws are made in float64, layer by layer (``W``, then ``b`` for
    ``"torch"``), then rounded to ``dtype``.

    Examples
    --------
    >>> import scratchnet as sn
    >>> params = sn.mlp.init_params([1, 64, 2], init="torch", rng=0)
    >>> {k: v.shape for k, v in params.items()}, bool(abs(params["b2"]).max() <= 1 / 8)
    ({'W1': (1, 64), 'b1': (64,), 'W2': (64, 2), 'b2': (2,)}, True)
    """
    sizes = check_layer_sizes(sizes)
    if not isinstance(activation, str) or activation not in ACTIVATIONS:
        raise ValueError(f"activation must be 'relu' or 'tanh'; got {activation!r}")
    if init not in INITS:
        raise ValueError(f"init must be one of {', '.join(map(repr, INITS))}; "
                         f"got {init!r}")
    dtype, rng = check_float_dtype(dtype), as_generator(rng)
    params, num_layers = {}, len(sizes) - 1
    for layer, (fan_in, fan_out) in enumerate(zip(sizes, sizes[1:]), 1):
        gain2 = 2.0 if activation == "relu" and layer < num_layers else 1.0
        if init == "torch":
            bound = 1.0 / math.sqrt(fan_in)
            W = rng.uniform(-bound, bound, (fan_in, fan_out))
            b = rng.uniform(-bound, bound, fan_out)
        else:
            fan = (fan_in + fan_out) / 2 if init == "xavier" else fan_in
            variance = gain2 / fan
            W = rng.standard_normal((fan_in, fan_out)) * math.sqrt(variance)
            b = np.zeros(fan_out)
        params[f"W{layer}"], params[f"b{layer}"] = W.astype(dtype), b.astype(dtype)
    return params


class MLP:
    r"""A multi-layer perceptron: linear -> activation -> ... -> linear -> logits.

    Parameters
    ----------
    sizes : sequence of int, length L + 1 >= 2
        Layer widths :math:`(d_0, \dots, d_L)`: input features, hidden
        widths, and the number of outputs :math:`M`.  ``[1, 64, 64, 2]``
        has two hidden layers of 64 units.
    activation : {"relu", "tanh"}, default "relu"
        The hidden activation :math:`\phi` (none after the last layer).
    rng : numpy.random.Generator or int or None, optional
        Randomness for the initial parameters (a seed reproduces them).
    dtype : {np.float64, np.float32}, default np.float64
        Floating type of the parameters and the computation; inputs are
        converted to it.
    init : {"xavier", "he", "torch"}, default "xavier"
        The initialisation scheme of :func:`init_params`.
    loss : str or Loss, optional
        The loss it is trained with, a name of
        :data:`scratchnet.objectives.LOSSES` or a loss object: the default of
        ``loss_and_grads`` and the *readout* of ``predict_proba``.  None is
        ``"cross_entropy"``, or ``"binary_cross_entropy"`` for one output.
        :func:`scratchnet.train` and :func:`scratchnet.train_step` given a
        ``loss=`` set it.

    Attributes
    ----------
    params : dict of str to ndarray
        ``"W1", "b1", ..., "WL", "bL"``; ``W_l`` has shape
        :math:`(d_{l-1}, d_l)`, ``b_l`` shape :math:`(d_l,)`.
    loss : Loss
        The loss object, which turns outputs into probabilities.
    sizes, activation, init, dtype
        As given.

    Notes
    -----
    A network with one output (:math:`M = 1`) is a binary classifier: its
    output :math:`s` is the logit of class 1, :math:`q(1 \mid x) =
    \sigma(s)`, trained with ``loss="binary_cross_entropy"``; its
    ``predict_proba`` returns the two columns :math:`(\sigma(-s), \sigma(s))`.
    A network trained with squared error reads its outputs themselves
    (``loss="mse"``), one trained with the hinge loss only their arg-max
    (:mod:`scratchnet.objectives`).
    Input (N,) is read as (N, 1) when :math:`d_0 = 1`; NaN or infinite input
    raises ``ValueError`` naming it.

    Examples
    --------
    >>> import scratchnet as sn
    >>> model = sn.MLP([1, 64, 64, 2], rng=0)
    >>> sorted(model.params)
    ['W1', 'W2', 'W3', 'b1', 'b2', 'b3']
    >>> model.predict_proba([0.0, 3.0]).shape
    (2, 2)
    """

    def __init__(self, sizes: Sequence[int], *, activation: str = "relu",
                 rng: Any = None, dtype: Any = np.float64,
                 init: str = "xavier", loss: Any = None) -> None:
        self.params = init_params(sizes, activation=activation, init=init, rng=rng,
                                  dtype=dtype)
        self.sizes, self.dtype = check_layer_sizes(sizes), check_float_dtype(dtype)
        self.activation, self.init = activation, init
        self.loss = get_loss(loss, outputs=self.sizes[-1])
        self._cache: Any = None  # what the last forward kept for backward
        self._logits_shape: Any = None   # and the shape of its logits

    def _repr_options(self) -> str:
        extra = "" if self.dtype == np.float64 else f", dtype={self.dtype.name!r}"
        extra += "" if self.init == "xavier" else f", init={self.init!r}"
        if type(self.loss) is not type(get_loss(None, outputs=self.sizes[-1])):
            extra += f", loss={self.loss!r}"
        return f"activation={self.activation!r}{extra}"

    def __repr__(self) -> str:
        return f"MLP({list(self.sizes)}, {self._repr_options()})"

    def forward(self, x: Any) -> np.ndarray:
        r"""Logits :math:`f(x)` for a batch, keeping the caches ``backward`` needs.

        Parameters
        ----------
        x : array_like, shape (N, d_0) (or (N,) when d_0 = 1)

        Returns
        -------
        logits : ndarray of ``dtype``, shape (N, M)

        Examples
        --------
        >>> import numpy as np
        >>> import scratchnet as sn
        >>> sn.MLP([2, 3, 4], rng=0).forward(np.zeros((5, 2))).shape
        (5, 4)
        """
        activation_forward, _ = ACTIVATIONS[self.activation]
        P, L = self.params, len(self.sizes) - 1
        a, caches = check_inputs(x, self.sizes[0], self.dtype), []
        for layer in range(1, L):
            z, linear_cache = linear_forward(a, P[f"W{layer}"], P[f"b{layer}"])
            a, activation_cache = activation_forward(z)
            caches.append((linear_cache, activation_cache))
        logits, linear_cache = linear_forward(a, P[f"W{L}"], P[f"b{L}"])
        self._cache, self._logits_shape = (caches, linear_cache), logits.shape
        return logits

    def backward(self, dlogits: Any) -> Dict[str, np.ndarray]:
        r"""Gradients of the loss with respect to every parameter, by backprop.

        Parameters
        ----------
        dlogits : array_like, shape (N, M)
            :math:`\delta_L = \partial L / \partial f` for the batch of the last
            ``forward`` (for the mean cross-entropy, :math:`(q - \text{one\_hot}) / N`).

        Returns
        -------
        grads : dict of str to ndarray
            New arrays with the keys and shapes of ``params``.

        Notes
        -----
        Going down the layers,

        .. math::

            \frac{\partial L}{\partial W_\ell} = a_{\ell-1}^\top \delta_\ell, \quad
            \frac{\partial L}{\partial b_\ell} = \sum_n \delta_{\ell, n}, \quad
            \delta_{\ell-1} = (\delta_\ell W_\ell^\top) \odot \phi'(z_{\ell-1}) .

        Examples
        --------
        >>> import numpy as np
        >>> import scratchnet as sn
        >>> model = sn.MLP([2, 3, 4], rng=0)
        >>> logits = model.forward(np.ones((5, 2)))
        >>> model.backward(np.ones((5, 4)))["b2"]
        array([5., 5., 5., 5.])
        """
        dlogits = check_dlogits(dlogits, self._logits_shape, self.dtype)
        _, activation_backward = ACTIVATIONS[self.activation]
        caches, linear_cache = self._cache
        L, grads = len(self.sizes) - 1, {}
        da, grads[f"W{L}"], grads[f"b{L}"] = linear_backward(dlogits, linear_cache)
        for layer in range(L - 1, 0, -1):
            linear_cache, activation_cache = caches[layer - 1]
            dz = activation_backward(da, activation_cache)
            da, grads[f"W{layer}"], grads[f"b{layer}"] = linear_backward(
                dz, linear_cache)
        return grads

    def loss_and_grads(self, x: Any, targets: Any, *, loss: Any = None
                       ) -> Tuple[float, Dict[str, np.ndarray]]:
        r"""A batch's loss and its gradients: forward, loss, backward.

        Parameters
        ----------
        x : array_like, shape (N, d_0) (or (N,) when d_0 = 1)
        targets : array_like
            What the loss compares the outputs with (class indices for cross-entropy).
        loss : str or Loss, optional
            A name of :data:`scratchnet.objectives.LOSSES` or a loss object;
            default ``self.loss``.

        Returns
        -------
        loss : float
        grads : dict of str to ndarray
            As returned by :meth:`backward`.

        Examples
        --------
        >>> import scratchnet as sn
        >>> loss, grads = sn.MLP([1, 8, 2], rng=0).loss_and_grads([0.0, 1.0], [0, 1])
        >>> sorted(grads)
        ['W1', 'W2', 'b1', 'b2']
        """
        loss = self.loss if loss is None else get_loss(loss, outputs=self.sizes[-1])
        logits = self.forward(x)
        value, dlogits = loss.loss_and_grad(logits, targets)
        return float(value), self.backward(dlogits)

    def _predict_logits(self, x: Any) -> np.ndarray:
        """``forward(x)``, leaving the cache of the last ``forward`` as it was."""
        cache, shape = self._cache, self._logits_shape
        logits = self.forward(x)
        self._cache, self._logits_shape = cache, shape
        return logits

    def predict_log_proba(self, x: Any) -> np.ndarray:
        r"""The model's log-posterior :math:`\log q(C \mid x)`, one row per input.

        Parameters
        ----------
        x : array_like, shape (N, d_0) (or (N,) when d_0 = 1)

        Returns
        -------
        log_probs : ndarray of ``dtype``, shape (N, M), or (N, 2) when M = 1
            ``self.loss.predict_log_proba(f(x))``: ``log_softmax(f(x))`` for
            the cross-entropy; for one output :math:`s`,
            :math:`(\log \sigma(-s), \log \sigma(s))`.  Finite where the
            probability underflows.  The cache of ``forward`` is left as it was.

        Examples
        --------
        >>> import scratchnet as sn
        >>> sn.MLP([1, 8, 3], rng=0).predict_log_proba([0.5, 1.5]).shape
        (2, 3)
        """
        return self.loss.predict_log_proba(self._predict_logits(x))

    def predict_proba(self, x: Any) -> np.ndarray:
        r"""The model's posterior :math:`q(C \mid x)`, one row per input.

        Parameters
        ----------
        x : array_like, shape (N, d_0) (or (N,) when d_0 = 1)

        Returns
        -------
        probs : ndarray of ``dtype``, shape (N, M), or (N, 2) when M = 1
            ``self.loss.predict_proba(f(x))``: the softmax of the logits for
            the cross-entropy; rows sum to 1.

        Examples
        --------
        >>> import scratchnet as sn
        >>> sn.MLP([1, 8, 3], rng=0).predict_proba([0.5, 1.5]).sum(axis=1)
        array([1., 1.])
        """
        return self.loss.predict_proba(self._predict_logits(x))

    def predict(self, x: Any) -> np.ndarray:
        r"""The most probable class :math:`\arg\max_c q(c \mid x)` for each input.

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
        return np.argmax(self.predict_proba(x), axis=1)


class TwoLayerMLP(MLP):
    r"""The textbook two-layer network: linear -> activation -> linear -> logits.

    Parameters
    ----------
    in_features, hidden_features, out_features : int
        :math:`D`, :math:`H` and :math:`M`: it is :class:`MLP` with ``sizes = [D,
        H, M]``, written out.
    activation, rng, dtype, init, loss
        As for :class:`MLP`.

    Attributes
    ----------
    params : dict of str to ndarray
        ``W1`` (D, H), ``b1`` (H,), ``W2`` (H, M), ``b2`` (M,).

    Notes
    -----
    The forward pass is three layer functions in a chain, and the backward
    pass their backward functions in reverse order:

    .. math::

        z &= x W_1 + b_1, &\quad \delta_h &= \delta_f W_2^\top,\;
            \partial L / \partial W_2 = h^\top \delta_f \\
        h &= \phi(z), && \delta_z = \delta_h \odot \phi'(z) \\
        f &= h W_2 + b_2, && \partial L / \partial W_1 = x^\top \delta_z .

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> model = sn.TwoLayerMLP(1, 64, 2, rng=0)
    >>> loss, grads = model.loss_and_grads(np.array([0.0, 3.0]), np.array([0, 1]))
    >>> print(f"{loss:.1f}")   # near log 2: the untrained network is unsure
    0.6
    """

    def __init__(self, in_features: int, hidden_features: int, out_features: int, *,
                 activation: str = "relu", rng: Any = None, dtype: Any = np.float64,
                 init: str = "xavier", loss: Any = None) -> None:
        super().__init__([in_features, hidden_features, out_features],
                         activation=activation, rng=rng, dtype=dtype, init=init,
                         loss=loss)
        self.in_features, self.hidden_features, self.out_features = self.sizes

    def __repr__(self) -> str:
        D, H, M = self.sizes
        return f"TwoLayerMLP({D}, {H}, {M}, {self._repr_options()})"

    def forward(self, x: Any) -> np.ndarray:
        """Logits of a batch: ``linear -> activation -> linear`` (:meth:`MLP.forward`).

        Parameters
        ----------
        x : array_like, shape (N, D) (or (N,) when D = 1)

        Returns
        -------
        logits : ndarray, shape (N, M)

        Examples
        --------
        >>> import numpy as np
        >>> import scratchnet as sn
        >>> sn.TwoLayerMLP(2, 3, 4, rng=0).forward(np.zeros((5, 2))).shape
        (5, 4)
        """
        activation_forward, _ = ACTIVATIONS[self.activation]
        P = self.params
        x = check_inputs(x, self.sizes[0], self.dtype)
        z, cache_1 = linear_forward(x, P["W1"], P["b1"])
        h, cache_h = activation_forward(z)
        logits, cache_2 = linear_forward(h, P["W2"], P["b2"])
        self._cache, self._logits_shape = (cache_1, cache_h, cache_2), logits.shape
        return logits

    def backward(self, dlogits: Any) -> Dict[str, np.ndarray]:
        """Gradients by backprop: the forward chain in reverse (:meth:`MLP.backward`).

        Parameters
        ----------
        dlogits : array_like, shape (N, M)

        Returns
        -------
        grads : dict of str to ndarray
            New arrays ``W1, b1, W2, b2``.

        Examples
        --------
        >>> import numpy as np
        >>> import scratchnet as sn
        >>> model = sn.TwoLayerMLP(2, 3, 4, rng=0)
        >>> logits = model.forward(np.ones((5, 2)))
        >>> model.backward(np.ones((5, 4)))["b2"]
        array([5., 5., 5., 5.])
        """
        dlogits = check_dlogits(dlogits, self._logits_shape, self.dtype)
        _, activation_backward = ACTIVATIONS[self.activation]
        cache_1, cache_h, cache_2 = self._cache
        dh, dW2, db2 = linear_backward(dlogits, cache_2)
        dz = activation_backward(dh, cache_h)
        _, dW1, db1 = linear_backward(dz, cache_1)
        return {"W1": dW1, "b1": db1, "W2": dW2, "b2": db2}
