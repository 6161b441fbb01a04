r"""Layers as forward/backward pairs: linear, ReLU and tanh.

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
:math:`\mathbf{1}[x > 0]` for ReLU and :math:`1 - \tanh^2(x)` for tanh.

The backward functions accept ``out=`` buffers so a training loop can write
gradients into preallocated (even shared) memory instead of allocating new
arrays at every step.  Shapes are checked; values are not scanned for NaN (a
NaN propagates to the loss, where the training loop reports it).
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from ._validation import as_float_array

__all__ = [
    "linear_backward",
    "linear_forward",
    "relu_backward",
    "relu_forward",
    "tanh_backward",
    "tanh_forward",
]

Buffers = Tuple[Optional[np.ndarray], Optional[np.ndarray], Optional[np.ndarray]]


# --- the unchecked kernels (the mathematics; the models call these) ----------


def _linear(x: np.ndarray, W: np.ndarray, b: np.ndarray, out=None) -> np.ndarray:
    """``x @ W + b`` written into ``out`` (allocated when None)."""
    if x.shape[1] == 1:  # one input feature: x W is an outer product, and a
        out = np.multiply(x, W, out=out)  # broadcast beats BLAS at K = 1
    else:
        out = np.matmul(x, W, out=out)
    out += b
    return out


def _linear_param_grads(
    dout: np.ndarray, x: np.ndarray, dW=None, db=None
) -> Tuple[np.ndarray, np.ndarray]:
    """``dW = x.T @ dout`` and ``db = dout.sum(axis=0)``, into the given buffers."""
    dW = np.matmul(x.T, dout, out=dW)
    db = np.add.reduce(dout, axis=0, out=db)
    return dW, db


def _linear_input_grad(dout: np.ndarray, W: np.ndarray, dx=None) -> np.ndarray:
    """``dx = dout @ W.T``, into ``dx``."""
    return np.matmul(dout, W.T, out=dx)


def _relu(x: np.ndarray, out=None) -> np.ndarray:
    """``max(x, 0)`` elementwise."""
    return np.maximum(x, 0.0, out=out)


def _relu_grad(dout: np.ndarray, relu_out: np.ndarray, out=None) -> np.ndarray:
    """``dout * 1[x > 0]``, read off the ReLU's output (``x > 0`` iff ``out > 0``)."""
    return np.multiply(dout, relu_out > 0.0, out=out)


def _tanh(x: np.ndarray, out=None) -> np.ndarray:
    """``tanh(x)`` elementwise."""
    return np.tanh(x, out=out)


def _tanh_grad(dout: np.ndarray, tanh_out: np.ndarray, out=None) -> np.ndarray:
    """``dout * (1 - tanh(x)^2)`` from the tanh's output (``out`` is not ``dout``)."""
    d = np.multiply(tanh_out, tanh_out, out=out)
    np.subtract(1.0, d, out=d)
    d *= dout
    return d


# --- shape checks shared by the public functions -----------------------------


def _as_matrix(x: Any, name: str) -> np.ndarray:
    x = as_float_array(x, name, check_nan=False)
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


def _check_cache(cache: Any, length: int, layer: str) -> None:
    if not isinstance(cache, tuple) or len(cache) != length:
        raise TypeError(
            f"cache must be the tuple returned by {layer}_forward; got "
            f"{type(cache).__name__}"
        )


# --- the public forward/backward pairs -----------------------------------------


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
    x = _as_matrix(x, "x")
    W = _as_matrix(W, "W")
    b = as_float_array(b, "b", check_nan=False)
    if W.shape[0] != x.shape[1]:
        raise ValueError(
            f"W must have {x.shape[1]} rows (one per input feature of x, shape "
            f"{x.shape}); got shape {W.shape}"
        )
    if b.shape != (W.shape[1],):
        raise ValueError(
            f"b must have shape ({W.shape[1]},) (one per column of W); got {b.shape}"
        )
    return _linear(x, W, b), (x, W)


def linear_backward(
    dout: Any, cache: tuple, *, out: Buffers | None = None
) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Gradients of the affine layer :math:`\text{out} = x W + b`.

    Parameters
    ----------
    dout : array_like, shape (N, out)
        :math:`\partial L / \partial \text{out}`, the upstream gradient.
    cache : tuple
        ``(x, W)`` from :func:`linear_forward`.
    out : tuple of three ndarrays or None, optional
        Buffers ``(dx, dW, db)`` of shapes (N, in), (in, out), (out,) to write
        the gradients into (any entry may be None: allocate it).

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
        \qquad
        \frac{\partial L}{\partial x_{ni}} = \sum_k \text{dout}_{nk}\, W_{ik},
        \qquad
        \frac{\partial L}{\partial b_k} = \sum_n \text{dout}_{nk} .

    The bias gradient sums over the batch because the same :math:`b` is
    added to every row.  Gradients are *written*, never accumulated.

    Examples
    --------
    >>> import scratchnet as sn
    >>> out, cache = sn.layers.linear_forward([[1.0, 2.0]], [[1.0], [3.0]], [0.0])
    >>> dx, dW, db = sn.layers.linear_backward([[1.0]], cache)
    >>> dx, dW.ravel(), db
    (array([[1., 3.]]), array([1., 2.]), array([1.]))
    """
    _check_cache(cache, 2, "linear")
    x, W = cache
    dout = _check_dout(dout, (x.shape[0], W.shape[1]), "layer's output")
    dx, dW, db = (None, None, None) if out is None else out
    dW, db = _linear_param_grads(dout, x, dW, db)
    return _linear_input_grad(dout, W, dx), dW, db


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
        ``out`` itself: :math:`x > 0` exactly where :math:`\text{out} > 0`,
        so the output is all the backward pass needs.

    Examples
    --------
    >>> import scratchnet as sn
    >>> out, cache = sn.layers.relu_forward([-1.0, 0.0, 2.0])
    >>> out
    array([0., 0., 2.])
    """
    x = as_float_array(x, "x", check_nan=False)
    out = _relu(x)
    return out, out


def relu_backward(dout: Any, cache: np.ndarray, *, out: np.ndarray | None = None
                  ) -> np.ndarray:
    r"""Gradient of the ReLU: pass ``dout`` where the input was positive, else 0.

    Parameters
    ----------
    dout : array_like, same shape as the layer's output
        :math:`\partial L / \partial \text{out}`.
    cache : ndarray
        The output of :func:`relu_forward`.
    out : ndarray, optional
        Buffer for the result (may be ``dout`` itself: computed in place).

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
    gradient checks choose inputs away from it.

    Examples
    --------
    >>> import scratchnet as sn
    >>> out, cache = sn.layers.relu_forward([-1.0, 0.0, 2.0])
    >>> sn.layers.relu_backward([5.0, 5.0, 5.0], cache)
    array([0., 0., 5.])
    """
    if not isinstance(cache, np.ndarray):
        raise TypeError("cache must be the array returned by relu_forward; got "
                        f"{type(cache).__name__}")
    dout = _check_dout(dout, cache.shape, "ReLU's output")
    return _relu_grad(dout, cache, out=out)


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
    x = as_float_array(x, "x", check_nan=False)
    out = _tanh(x)
    return out, out


def tanh_backward(dout: Any, cache: np.ndarray, *, out: np.ndarray | None = None
                  ) -> np.ndarray:
    r"""Gradient of tanh: ``dout * (1 - tanh(x)**2)``.

    Parameters
    ----------
    dout : array_like, same shape as the layer's output
        :math:`\partial L / \partial \text{out}`.
    cache : ndarray
        The output of :func:`tanh_forward`.
    out : ndarray, optional
        Buffer for the result (may be ``dout`` itself).

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
    if not isinstance(cache, np.ndarray):
        raise TypeError("cache must be the array returned by tanh_forward; got "
                        f"{type(cache).__name__}")
    dout = _check_dout(dout, cache.shape, "tanh's output")
    if out is not None and np.may_share_memory(out, dout):
        # The kernel would overwrite dout before reading it; ufuncs handle overlap.
        return np.multiply(dout, 1.0 - cache * cache, out=out)
    return _tanh_grad(dout, cache, out=out)
