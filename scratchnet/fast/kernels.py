r"""In-place kernels: the chapters' arithmetic written into preallocated memory.

Each kernel computes exactly what a chapter function computes, but into
buffers the caller owns (``out=`` arguments, in-place updates), so that a
training step allocates nothing the size of the activations.  The
docstring of each names the function it replaces; ``tests/test_fast.py``
pins every kernel to that function.

=====================================  ===========================================
kernel                                 replaces
=====================================  ===========================================
``linear_into``                        ``layers.linear_forward``
``linear_backward_into``               ``layers.linear_backward``
``relu_into``, ``relu_backward_into``  ``layers.relu_forward`` / ``relu_backward``
``relu_mask_into``,                    the same pair, the mask of the forward pass
``relu_backward_mask_into``            kept for the backward pass
``tanh_into``, ``tanh_backward_into``  ``layers.tanh_forward`` / ``tanh_backward``
``cross_entropy_and_grad_inplace``     ``losses.cross_entropy_and_grad`` (mean,
                                       class indices)
``fused_cross_entropy``                the engine's one decision: which loss the
                                       fused kernels compute exactly
``log_softmax``                        ``softmax.log_softmax`` (cache-blocked)
=====================================  ===========================================
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._shift import check_some_finite, row_max, top_and_rest
from .._validation import as_float_array, normalize_axis
from ..objectives import CrossEntropyLoss

__all__ = [
    "cross_entropy_and_grad_inplace",
    "fused_cross_entropy",
    "linear_backward_into",
    "linear_into",
    "log_softmax",
    "relu_backward_into",
    "relu_backward_mask_into",
    "relu_into",
    "relu_mask_into",
    "tanh_backward_into",
    "tanh_into",
]

#: 0-d zeros: operands that NumPy converts faster than the Python number 0.0.
_ZEROS = {np.dtype(t): np.zeros((), t) for t in (np.float32, np.float64)}

#: Entries per block of ``log_softmax``: 512 KiB of float64, cache-sized.
BLOCK = 1 << 16


def linear_into(x: np.ndarray, W: np.ndarray, b: np.ndarray, out: np.ndarray
                ) -> np.ndarray:
    """``x @ W + b`` written into ``out``; replaces ``layers.linear_forward``.

    Parameters
    ----------
    x : ndarray, shape (N, in)
    W : ndarray, shape (in, out)
    b : ndarray, shape (out,)
    out : ndarray, shape (N, out)

    Returns
    -------
    ndarray
        ``out``.

    Examples
    --------
    >>> from scratchnet.fast import kernels
    >>> kernels.linear_into(np.ones((2, 1)), np.full((1, 3), 2.0), np.ones(3),
    ...                     np.empty((2, 3)))
    array([[3., 3., 3.],
           [3., 3., 3.]])
    """
    if x.shape[1] == 1:  # one input feature: x W is an outer product, and a
        np.multiply(x, W, out=out)  # broadcast beats BLAS at K = 1 (same numbers)
    else:
        np.matmul(x, W, out=out)
    out += b
    return out


def linear_backward_into(dout: np.ndarray, x: np.ndarray, W: np.ndarray,
                         dx: Any, dW: np.ndarray, db: np.ndarray) -> None:
    """``dx = dout W^T``, ``dW = x^T dout``, ``db = sum_n dout``, into the buffers.

    Replaces ``layers.linear_backward``.  ``dx`` may be None (not needed for
    the first layer).

    Parameters
    ----------
    dout : ndarray, shape (N, out)
    x : ndarray, shape (N, in)
    W : ndarray, shape (in, out)
    dx : ndarray, shape (N, in), or None
    dW : ndarray, shape (in, out)
    db : ndarray, shape (out,)

    Returns
    -------
    None

    Examples
    --------
    >>> from scratchnet.fast import kernels
    >>> dW, db = np.empty((1, 1)), np.empty(1)
    >>> kernels.linear_backward_into(np.ones((2, 1)), np.ones((2, 1)), np.ones((1, 1)),
    ...                              None, dW, db)
    >>> dW, db
    (array([[2.]]), array([2.]))
    """
    np.matmul(x.T, dout, out=dW)
    np.add.reduce(dout, axis=0, out=db)
    if dx is not None:
        np.matmul(dout, W.T, out=dx)


def relu_into(z: np.ndarray) -> np.ndarray:
    """``max(z, 0)`` in place; replaces ``layers.relu_forward``.

    Computed as ``z * (z > 0)``, two to three times faster than ``np.maximum``
    on float32: the same numbers for finite ``z`` (a negative ``z`` gives
    ``-0.0``, equal to ``0.0``); ``-inf`` would give NaN, and the training
    loop reports a non-finite loss long before that.

    Parameters
    ----------
    z : ndarray

    Returns
    -------
    ndarray
        ``z``, now the activations.

    Examples
    --------
    >>> from scratchnet.fast import kernels
    >>> kernels.relu_into(np.array([-1.0, 2.0]))
    array([0., 2.])
    """
    return np.multiply(z, z > 0.0, out=z)


def relu_backward_into(da: np.ndarray, a: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``da * 1[a > 0]`` into ``out``, from the ReLU's output ``a``.

    Replaces ``layers.relu_backward`` (``a > 0`` exactly where the input was).
    The same numbers wherever ``da`` is finite; where it is not, the product
    keeps the NaN that the chapter's ``where`` would drop (the training loop
    reports a non-finite loss long before).

    Parameters
    ----------
    da : ndarray
    a : ndarray, shape of ``da``
        The ReLU's output.
    out : ndarray, shape of ``da``

    Returns
    -------
    ndarray
        ``out``.

    Examples
    --------
    >>> from scratchnet.fast import kernels
    >>> kernels.relu_backward_into(np.array([3.0, 3.0]), np.array([0.0, 1.0]),
    ...                            np.empty(2))
    array([0., 3.])
    """
    return np.multiply(da, a > 0.0, out=out)  # 4x faster than copyto(where=)


def relu_mask_into(z: np.ndarray, mask: np.ndarray, flags: np.ndarray) -> np.ndarray:
    """``max(z, 0)`` in place, keeping ``mask = 1[z > 0]`` for the backward pass.

    Replaces ``layers.relu_forward``, whose cache is the same mask.  The
    training step of :class:`scratchnet.fast.Ensemble` uses it: the mask is
    kept in ``z``'s dtype, because multiplying by a float mask is about
    twice as fast as by a boolean one (which is converted on the fly), and
    the backward pass multiplies by it again.  ``z * mask`` equals
    ``max(z, 0)`` for finite ``z`` (a negative ``z`` gives ``-0.0``, equal to
    ``0.0``); a NaN stays NaN.

    Parameters
    ----------
    z : ndarray
    mask : ndarray, shape and dtype of ``z``
        Written: 1.0 where ``z > 0``, else 0.0.
    flags : ndarray of bool, shape of ``z``
        Scratch: ``z > 0``.

    Returns
    -------
    ndarray
        ``z``, now the activations.

    Examples
    --------
    >>> from scratchnet.fast import kernels
    >>> mask = np.empty(2)
    >>> kernels.relu_mask_into(np.array([-1.0, 2.0]), mask, np.empty(2, bool)), mask
    (array([-0.,  2.]), array([0., 1.]))
    """
    np.greater(z, _ZEROS.get(z.dtype, 0.0), out=flags)  # a 0-d array: faster
    np.copyto(mask, flags)
    return np.multiply(z, mask, out=z)


def relu_backward_mask_into(da: np.ndarray, mask: np.ndarray, out: np.ndarray
                            ) -> np.ndarray:
    """``da * mask`` into ``out``: the ReLU's backward pass from its kept mask.

    Replaces ``layers.relu_backward``; ``mask`` is what
    :func:`relu_mask_into` kept.  ``out`` may be ``da`` (in place).

    Parameters
    ----------
    da : ndarray
    mask : ndarray, shape of ``da``
        1.0 where the ReLU's input was positive, else 0.0.
    out : ndarray, shape of ``da``

    Returns
    -------
    ndarray
        ``out``.

    Examples
    --------
    >>> from scratchnet.fast import kernels
    >>> kernels.relu_backward_mask_into(np.array([3.0, 3.0]), np.array([0.0, 1.0]),
    ...                                 np.empty(2))
    array([0., 3.])
    """
    return np.multiply(da, mask, out=out)


def tanh_into(z: np.ndarray) -> np.ndarray:
    """``tanh(z)`` in place; replaces ``layers.tanh_forward``.

    Parameters
    ----------
    z : ndarray

    Returns
    -------
    ndarray
        ``z``, now the activations.

    Examples
    --------
    >>> from scratchnet.fast import kernels
    >>> kernels.tanh_into(np.array([0.0]))
    array([0.])
    """
    return np.tanh(z, out=z)


def tanh_backward_into(da: np.ndarray, a: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``da * (1 - a^2)`` into ``out`` (not ``da``), from the tanh's output ``a``.

    Replaces ``layers.tanh_backward``.

    Parameters
    ----------
    da, a, out : ndarray, one shape

    Returns
    -------
    ndarray
        ``out``.

    Examples
    --------
    >>> from scratchnet.fast import kernels
    >>> kernels.tanh_backward_into(np.array([2.0]), np.array([0.5]), np.empty(1))
    array([1.5])
    """
    np.multiply(a, a, out=out)
    np.subtract(1.0, out, out=out)
    out *= da
    return out


def cross_entropy_and_grad_inplace(logits: np.ndarray, targets: np.ndarray,
                                   rows: np.ndarray) -> float:
    r"""Mean cross-entropy of ``logits``; overwrites ``logits`` with its gradient.

    Replaces ``losses.cross_entropy_and_grad(logits, targets)`` (class
    indices, no weight or smoothing, mean): one softmax, no allocation of the
    logits' size,

    .. math::

        L = \frac1N \sum_n \bigl[\operatorname{logsumexp}(f_n) - f_{n, c_n}\bigr],
        \qquad \frac{\partial L}{\partial f} = \frac{q - \text{one\_hot}(c)}{N} .

    Parameters
    ----------
    logits : ndarray, shape (N, M)
        Finite; overwritten.
    targets : ndarray of int, shape (N,)
        Valid class indices (not checked).
    rows : ndarray of int, shape (N,)
        ``np.arange(N)``.

    Returns
    -------
    float

    Examples
    --------
    >>> from scratchnet.fast import kernels
    >>> logits = np.zeros((1, 2))
    >>> round(kernels.cross_entropy_and_grad_inplace(logits, np.array([1]),
    ...                                               np.arange(1)), 4), logits
    (0.6931, array([[ 0.5, -0.5]]))
    """
    n = logits.shape[0]
    top = np.argmax(logits, axis=1)
    logits -= logits[rows, top][:, None]  # largest logit 0
    picked = logits[rows, targets]  # f_{n, c_n} - max_n
    np.exp(logits, out=logits)
    logits[rows, top] = 0.0  # the top term e^0 = 1 out of the sum, as the chapter
    rest = np.add.reduce(logits, axis=1, keepdims=True)  # in [0, M - 1]
    logits[rows, top] = 1.0
    loss = (np.log1p(rest).sum() - picked.sum()) / n  # log1p keeps 1e-18
    total = rest + 1.0
    total *= n
    logits /= total  # q / N
    logits[rows, targets] -= 1.0 / n  # (q - one_hot) / N
    return float(loss)


def fused_cross_entropy(loss: Any, outputs: int) -> bool:
    r"""Whether the engine's fused kernel computes ``loss`` exactly, on class indices.

    The fused kernels (:func:`cross_entropy_and_grad_inplace` for one
    network, :func:`scratchnet.fast.objectives.member_losses_inplace` for
    an ensemble) compute the mean
    cross-entropy :math:`\frac1N \sum_n [\operatorname{logsumexp}(f_n) -
    f_{n, c_n}]` on class indices :math:`c_n \in [0, M)`, nothing more.  That
    is the loss exactly when it is a :class:`~scratchnet.objectives.CrossEntropyLoss`
    (the class itself: a subclass may compute something else) without class
    weights or label smoothing, whose ``ignore_index`` no class index can
    equal.  Every other loss goes through its own ``loss_and_grad``.

    Parameters
    ----------
    loss : str or Loss or None
        As models take it (None: the cross-entropy).
    outputs : int
        M, the number of outputs; one output is never fused (its default
        loss is the binary cross-entropy).

    Returns
    -------
    bool
        The caller fuses only for class-index targets in ``[0, M)``.

    Examples
    --------
    >>> from scratchnet import fast
    >>> from scratchnet.objectives import CrossEntropyLoss
    >>> fast.kernels.fused_cross_entropy(None, 3)
    True
    >>> fast.kernels.fused_cross_entropy(CrossEntropyLoss(ignore_index=1), 3)
    False
    >>> fast.kernels.fused_cross_entropy(CrossEntropyLoss(label_smoothing=0.1), 3)
    False
    """
    if outputs < 2:
        return False
    if loss is None or (isinstance(loss, str) and loss == "cross_entropy"):
        return True
    return (type(loss) is CrossEntropyLoss and loss.weight is None
            and loss.label_smoothing == 0.0 and not 0 <= loss.ignore_index < outputs)


def _log_softmax_rows(x: np.ndarray, m: np.ndarray, out: np.ndarray, *, axis: int,
                      scratch: Any = None) -> None:
    """Write ``(x - m) - log1p(rest)`` into ``out``; ``m`` is the row max.

    As the chapter: the top term (``e^0 = 1``) is kept out of the sum, so
    ``log1p`` of the rest keeps the dominant entry to relative precision.
    """
    with np.errstate(over="ignore"):
        np.subtract(x, m, out=out)
    e = np.exp(out, out=None if scratch is None else scratch[: out.shape[0]])
    top, rest = top_and_rest(e, np.argmax(x, axis=axis, keepdims=True), axis)
    check_some_finite(top == 0, "x", axis)
    out -= np.log1p(rest)


def log_softmax(x: Any, axis: int = -1) -> np.ndarray:
    """``softmax.log_softmax`` worked through cache-sized blocks of rows.

    The only array of ``x``'s size that is allocated is the result, and ``x``
    is read twice (the chapter's version allocates the shifted logits and
    their exponential too): about 512 KiB of rows at a time are shifted,
    exponentiated and summed while they sit in the CPU cache.

    Parameters
    ----------
    x : array_like
        Logits; the same conventions as ``scratchnet.log_softmax``.
    axis : int, default -1

    Returns
    -------
    ndarray, same shape as ``x``

    Examples
    --------
    >>> from scratchnet import fast
    >>> fast.log_softmax([0.0, -1e4])
    array([     0., -10000.])
    """
    x = as_float_array(x, "x", check_nan=False)
    axis = normalize_axis(axis, x.ndim)
    if x.shape[axis] == 0:
        return np.empty(x.shape, x.dtype)
    m = row_max(x, axis, "x", allow_posinf=False)
    out = np.empty(x.shape, dtype=x.dtype)
    if axis != x.ndim - 1:
        _log_softmax_rows(x, m, out, axis=axis)
        return out
    width = x.shape[-1]
    x2, m2, out2 = x.reshape(-1, width), m.reshape(-1, 1), out.reshape(-1, width)
    rows = max(1, BLOCK // width)
    scratch = np.empty((min(rows, x2.shape[0]), width), dtype=x.dtype)
    for start in range(0, x2.shape[0], rows):  # a loop over blocks, not samples
        block = slice(start, start + rows)
        _log_softmax_rows(x2[block], m2[block], out2[block], axis=1, scratch=scratch)
    return out
