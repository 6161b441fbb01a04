r"""Layers as forward/backward pairs: linear, ReLU, tanh, softmax and log-softmax.

A network is a chain of simple functions, and backpropagation is the chain rule
applied link by link, from the loss back to the inputs.  Each layer here is a
pair of functions in the style of CS231n:

* ``out, cache = <layer>_forward(x, ...)`` computes the layer and keeps in
  ``cache`` exactly what the backward pass will need;
* ``dx, ... = <layer>_backward(dout, cache)`` receives
  :math:`\partial L / \partial \text{out}` (``dout``, same shape as ``out``)
  and returns :math:`\partial L / \partial x` (and the gradients of the
  layer's parameters) by the chain rule

.. math::

    \frac{\partial L}{\partial x} = \frac{\partial L}{\partial \text{out}}
        \, \frac{\partial \text{out}}{\partial x} .

A batch of :math:`N` samples is a matrix with one sample per row.  For the
linear layer :math:`\text{out} = x W + b` with :math:`x` of shape
:math:`(N, \text{in})`, :math:`W` of shape :math:`(\text{in}, \text{out})`:

.. math::

    \frac{\partial L}{\partial x} = \text{dout}\, W^\top, \qquad
    \frac{\partial L}{\partial W} = x^\top \text{dout}, \qquad
    \frac{\partial L}{\partial b} = \sum_{n} \text{dout}_{n,:} ;

the elementwise activations multiply ``dout`` by their derivative,
:math:`\mathbf{1}[x > 0]` for ReLU and :math:`1 - \tanh^2(x)` for tanh.  The
softmax pair closes the chain: ``log_softmax_forward`` followed by the
negative log-likelihood is the cross-entropy, and chaining their backward
passes gives its famous gradient :math:`q - \text{one\_hot}(c)`
(``tests/test_layers.py::test_log_softmax_then_nll_gives_the_cross_entropy_gradient``
checks exactly that).

Every function returns new arrays and checks shapes.  The forward passes
also refuse NaN input with a ``ValueError`` naming the argument (``x``,
``W``, ``b``): a NaN is never a valid input, while infinities are extreme but
valid (:math:`\max(\infty, 0) = \infty`, :math:`\tanh(\infty) = 1`) and pass.
The backward passes check shapes only: a NaN in ``dout`` propagates to the
gradients, where the optimizer reports it.  The fast
path in :mod:`scratchnet.fast` runs the same arithmetic into preallocated
buffers; ``tests/test_fast.py`` pins it to these functions.
"""

from __future__ import annotations

from typing import Any, Tuple

import numpy as np

from ._validation import as_float_array, describe, normalize_axis
from .softmax import log_softmax, softmax

__all__ = [
    "linear_backward",
    "linear_forward",
    "log_softmax_backward",
    "log_softmax_forward",
    "relu_backward",
    "relu_forward",
    "softmax_backward",
    "softmax_forward",
    "tanh_backward",
    "tanh_forward",
]


def _as_matrix(x: Any, name: str) -> np.ndarray:
    x = as_float_array(x, name)  # NaN is refused, infinities pass
    if x.ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D array of shape (N, features); got shape {x.shape}"
        )
    return x


def _check_dout(dout: Any, shape: tuple, what: str) -> np.ndarray:
    dout = as_float_array(dout, "dout", check_nan=False)
    if dout.shape != shape:
        raise ValueError(
            f"dout must have the shape of the {what} {shape}; got {dout.shape}"
        )
    return dout


def _check_cache(cache: Any, kind: Any, layer: str) -> None:
    """``cache`` is an array (``kind`` np.ndarray) or a tuple of the ``kind`` types."""
    if kind is np.ndarray:
        ok, what = isinstance(cache, np.ndarray), "array"
    else:
        ok = (isinstance(cache, tuple) and len(cache) == len(kind)
              and all(isinstance(c, k) for c, k in zip(cache, kind)))
        what = "tuple (" + ", ".join(k.__name__ for k in kind) + ")"
    if not ok:
        raise TypeError(f"cache must be the {what} returned by {layer}_forward; "
                        f"got {describe(cache)}")


# --- linear -------------------------------------------------------------------


def linear_forward(x: Any, W: Any, b: Any) -> Tuple[np.ndarray, tuple]:
    r"""Affine layer :math:`\text{out} = x W + b` (a fully connected layer).

    Parameters
    ----------
    x : array_like, shape (N, in)
        A batch of :math:`N` inputs, one per row.
    W : array_like, shape (in, out)
        Weights; column :math:`k` holds the input weights of output unit :math:`k`.
    b : array_like, shape (out,)
        Biases, one per output unit (broadcast over the batch).

    Returns
    -------
    out : ndarray, shape (N, out)
        :math:`x W + b`.
    cache : tuple
        ``(x, W)``, what :func:`linear_backward` needs.

    Notes
    -----
    .. math::

        \text{out}_{n k} = \sum_i x_{n i} W_{i k} + b_k .

    ``W`` is stored (in, out), as in CS231n, so the forward pass reads
    ``x @ W`` (``torch.nn.Linear`` stores the transpose).

    Examples
    --------
    >>> import scratchnet as sn
    >>> x, W, b = [[1.0, 2.0]], [[1.0, 0.0], [0.0, 1.0]], [0.5, -0.5]
    >>> out, cache = sn.layers.linear_forward(x, W, b)
    >>> out
    array([[1.5, 1.5]])
    """
    x, W = _as_matrix(x, "x"), _as_matrix(W, "W")
    b = as_float_array(b, "b")
    if W.shape[0] != x.shape[1]:
        raise ValueError(f"W must have {x.shape[1]} rows (one per input feature of x, "
                         f"shape {x.shape}); got shape {W.shape}")
    if b.shape != (W.shape[1],):
        raise ValueError(f"b must have shape ({W.shape[1]},) (one per column of W); "
                         f"got {b.shape}")
    out = x @ W + b
    return out, (x, W)


def linear_backward(dout: Any, cache: tuple
                    ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Gradients of the affine layer :math:`\text{out} = x W + b`.

    Parameters
    ----------
    dout : array_like, shape (N, out)
        :math:`\partial L / \partial \text{out}`, the upstream gradient.
    cache : tuple
        ``(x, W)`` from :func:`linear_forward`.

    Returns
    -------
    dx : ndarray, shape (N, in)
        :math:`\partial L / \partial x = \text{dout}\, W^\top`.
    dW : ndarray, shape (in, out)
        :math:`\partial L / \partial W = x^\top \text{dout}`.
    db : ndarray, shape (out,)
        :math:`\partial L / \partial b = \sum_n \text{dout}_{n,:}`.

    Notes
    -----
    By the chain rule, since :math:`\partial \text{out}_{nk} / \partial W_{ik}
    = x_{ni}` and :math:`\partial \text{out}_{nk} / \partial x_{ni} = W_{ik}`,

    .. math::

        \frac{\partial L}{\partial W_{ik}} = \sum_n x_{ni}\, \text{dout}_{nk},
        \quad
        \frac{\partial L}{\partial x_{ni}} = \sum_k \text{dout}_{nk}\, W_{ik},
        \quad
        \frac{\partial L}{\partial b_k} = \sum_n \text{dout}_{nk} .

    The bias gradient sums over the batch because the same :math:`b` is
    added to every row.

    Examples
    --------
    >>> import scratchnet as sn
    >>> out, cache = sn.layers.linear_forward([[1.0, 2.0]], [[1.0], [3.0]], [0.0])
    >>> dx, dW, db = sn.layers.linear_backward([[1.0]], cache)
    >>> dx, dW.ravel(), db
    (array([[1., 3.]]), array([1., 2.]), array([1.]))
    """
    dout, (x, W) = _check_linear_backward(dout, cache)
    dx = dout @ W.T
    dW = x.T @ dout
    db = dout.sum(axis=0)
    return dx, dW, db


def _check_linear_backward(dout: Any, cache: Any) -> tuple:
    """``(dout, (x, W))`` checked: the cache of the forward pass, a gradient."""
    _check_cache(cache, (np.ndarray, np.ndarray), "linear")
    x, W = cache
    return _check_dout(dout, (x.shape[0], W.shape[1]), "layer's output"), cache


# --- elementwise activations -----------------------------------------------------


def relu_forward(x: Any) -> Tuple[np.ndarray, np.ndarray]:
    r"""Rectified linear unit :math:`\max(x, 0)`, elementwise.

    Parameters
    ----------
    x : array_like, any shape
        Pre-activations.

    Returns
    -------
    out : ndarray, same shape as ``x``
        :math:`\max(x, 0)`.
    cache : ndarray
        ``x``, whose sign the backward pass needs.

    Examples
    --------
    >>> import scratchnet as sn
    >>> out, cache = sn.layers.relu_forward([-1.0, 0.0, 2.0])
    >>> out
    array([0., 0., 2.])
    """
    x = as_float_array(x, "x")
    return np.asarray(np.maximum(x, 0.0)), x  # asarray: a 0-d x gives a 0-d array


def relu_backward(dout: Any, cache: np.ndarray) -> np.ndarray:
    r"""Gradient of the ReLU: pass ``dout`` where the input was positive, else 0.

    Parameters
    ----------
    dout : array_like, same shape as the layer's output
        :math:`\partial L / \partial \text{out}`.
    cache : ndarray
        The input saved by :func:`relu_forward`.

    Returns
    -------
    dx : ndarray, same shape as ``dout``
        :math:`\partial L / \partial x = \text{dout} \cdot \mathbf{1}[x > 0]`.

    Notes
    -----
    .. math::

        \frac{\partial\, \max(x, 0)}{\partial x} = \mathbf{1}[x > 0] .

    At the kink :math:`x = 0` the derivative is taken as 0 (the PyTorch
    convention); finite differences straddling 0 disagree there, so
    gradient checks choose inputs away from it.  An inactive unit passes
    exactly 0, whatever ``dout`` holds (even NaN or infinity), as PyTorch's
    ``threshold_backward`` does; an active one passes ``dout`` as it is.

    Examples
    --------
    >>> import scratchnet as sn
    >>> out, cache = sn.layers.relu_forward([-1.0, 0.0, 2.0])
    >>> sn.layers.relu_backward([5.0, 5.0, 5.0], cache)
    array([0., 0., 5.])
    """
    _check_cache(cache, np.ndarray, "relu")
    dout = _check_dout(dout, cache.shape, "ReLU's output")
    return np.where(cache > 0, dout, 0.0).astype(dout.dtype, copy=False)


def tanh_forward(x: Any) -> Tuple[np.ndarray, np.ndarray]:
    r"""Hyperbolic tangent :math:`\tanh(x)`, elementwise.

    Parameters
    ----------
    x : array_like, any shape
        Pre-activations.

    Returns
    -------
    out : ndarray, same shape as ``x``
        :math:`\tanh(x) \in (-1, 1)`.
    cache : ndarray
        ``out`` itself: the derivative :math:`1 - \tanh^2(x)` is a function
        of the output, so nothing else need be kept.

    Examples
    --------
    >>> import scratchnet as sn
    >>> out, cache = sn.layers.tanh_forward([0.0, 100.0])
    >>> out
    array([0., 1.])
    """
    out = np.asarray(np.tanh(as_float_array(x, "x")))  # 0-d: an array
    return out, out


def tanh_backward(dout: Any, cache: np.ndarray) -> np.ndarray:
    r"""Gradient of tanh: ``dout * (1 - tanh(x)**2)``.

    Parameters
    ----------
    dout : array_like, same shape as the layer's output
        :math:`\partial L / \partial \text{out}`.
    cache : ndarray
        The output of :func:`tanh_forward`.

    Returns
    -------
    dx : ndarray, same shape as ``dout``
        :math:`\partial L / \partial x`.

    Notes
    -----
    .. math::

        \frac{d \tanh x}{d x} = 1 - \tanh^2 x ,

    evaluated from the cached output, so no second ``tanh`` is computed.

    Examples
    --------
    >>> import scratchnet as sn
    >>> out, cache = sn.layers.tanh_forward([0.0, 100.0])
    >>> sn.layers.tanh_backward([2.0, 2.0], cache)
    array([2., 0.])
    """
    _check_cache(cache, np.ndarray, "tanh")
    dout = _check_dout(dout, cache.shape, "tanh's output")
    return np.asarray(dout * (1.0 - cache * cache))  # 0-d stays an array


# --- scores to probabilities --------------------------------------------------------


def softmax_forward(x: Any, axis: int = -1) -> Tuple[np.ndarray, tuple]:
    r"""Softmax along ``axis`` (:func:`scratchnet.softmax`), keeping its output.

    Parameters
    ----------
    x : array_like, shape (..., M)
        Logits.
    axis : int, default -1
        The class axis.

    Returns
    -------
    probs : ndarray, same shape as ``x``
        :math:`q_i = e^{x_i} / \sum_j e^{x_j}`.
    cache : tuple
        ``(probs, axis)``.

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> probs, cache = sn.layers.softmax_forward([[0.0, np.log(3.0)]])
    >>> probs
    array([[0.25, 0.75]])
    """
    probs = softmax(x, axis=axis)
    return probs, (probs, normalize_axis(axis, probs.ndim))


def softmax_backward(dout: Any, cache: tuple) -> np.ndarray:
    r"""Softmax gradient: :math:`q \odot (\text{dout} - \sum_i \text{dout}_i q_i)`.

    Parameters
    ----------
    dout : array_like, same shape as the probabilities
        :math:`\partial L / \partial q`.
    cache : tuple
        From :func:`softmax_forward`.

    Returns
    -------
    dx : ndarray, same shape as ``dout``
        :math:`\partial L / \partial x`.

    Notes
    -----
    The softmax Jacobian (derived in :func:`scratchnet.losses.cross_entropy_grad`)
    is :math:`\partial q_i / \partial x_k = q_i (\delta_{ik} - q_k)`, so

    .. math::

        \frac{\partial L}{\partial x_k} = \sum_i \text{dout}_i\, q_i (\delta_{ik} - q_k)
            = q_k \Bigl(\text{dout}_k - \sum_i \text{dout}_i\, q_i\Bigr) .

    Adding a constant to ``dout`` changes nothing: the softmax cannot move
    all probabilities up at once.

    Examples
    --------
    >>> import scratchnet as sn
    >>> probs, cache = sn.layers.softmax_forward([[0.0, 0.0]])
    >>> sn.layers.softmax_backward([[1.0, 0.0]], cache)
    array([[ 0.25, -0.25]])
    """
    _check_cache(cache, (np.ndarray, int), "softmax")
    probs, axis = cache
    dout = _check_dout(dout, probs.shape, "softmax's output")
    return probs * (dout - np.sum(dout * probs, axis=axis, keepdims=True))


def log_softmax_forward(x: Any, axis: int = -1) -> Tuple[np.ndarray, tuple]:
    r"""Log-softmax along ``axis`` (:func:`scratchnet.log_softmax`), keeping its output.

    Parameters
    ----------
    x : array_like, shape (..., M)
        Logits.
    axis : int, default -1
        The class axis.

    Returns
    -------
    log_probs : ndarray, same shape as ``x``
        :math:`\log q_i = x_i - \operatorname{logsumexp}(x)`.
    cache : tuple
        ``(log_probs, axis)``.

    Examples
    --------
    >>> import scratchnet as sn
    >>> log_probs, cache = sn.layers.log_softmax_forward([[0.0, 0.0]])
    >>> log_probs.round(4)
    array([[-0.6931, -0.6931]])
    """
    log_probs = log_softmax(x, axis=axis)
    return log_probs, (log_probs, normalize_axis(axis, log_probs.ndim))


def log_softmax_backward(dout: Any, cache: tuple) -> np.ndarray:
    r"""Gradient of the log-softmax: :math:`\text{dout} - q \sum_i \text{dout}_i`.

    Parameters
    ----------
    dout : array_like, same shape as the log-probabilities
        :math:`\partial L / \partial \log q`.
    cache : tuple
        From :func:`log_softmax_forward`.

    Returns
    -------
    dx : ndarray, same shape as ``dout``
        :math:`\partial L / \partial x`.

    Notes
    -----
    Since :math:`\partial \log q_i / \partial x_k = \delta_{ik} - q_k` (derived in
    :func:`scratchnet.losses.cross_entropy_grad`),

    .. math::

        \frac{\partial L}{\partial x_k} = \text{dout}_k - q_k \sum_i \text{dout}_i .

    The negative log-likelihood of class :math:`c` has
    :math:`\text{dout} = -\text{one\_hot}(c)` (summing to -1), so the chain
    gives :math:`q - \text{one\_hot}(c)`: cross-entropy's gradient.

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> log_probs, cache = sn.layers.log_softmax_forward([[0.0, np.log(3.0)]])
    >>> sn.layers.log_softmax_backward([[-1.0, 0.0]], cache)   # NLL of class 0
    array([[-0.75,  0.75]])
    """
    _check_cache(cache, (np.ndarray, int), "log_softmax")
    log_probs, axis = cache
    dout = _check_dout(dout, log_probs.shape, "log-softmax's output")
    return dout - np.exp(log_probs) * np.sum(dout, axis=axis, keepdims=True)
