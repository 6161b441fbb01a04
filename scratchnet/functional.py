r"""PyTorch's options for the losses, with torch.nn.functional's signatures.

The chapter :mod:`scratchnet.losses` is the formulas: a batch (N, M), class
indices, the mean.  A library user also wants what PyTorch's losses take,
and this module has them, under the same names and with the same meaning
(``tests/test_parity_torch.py`` compares the two):

* ``weight``: class weights :math:`w_i`; the mean divides by
  :math:`\sum_j w_{t_j}`.
* ``ignore_index`` (-100): targets equal to it are skipped, in the loss, the
  gradient and the mean's denominator.
* ``label_smoothing`` :math:`\varepsilon`: targets
  :math:`(1 - \varepsilon) y + \varepsilon / M`.
* ``reduction``: ``"mean"`` (default), ``"sum"`` or ``"none"``.
* Probability targets (floats of the logits' shape), one unbatched sample of
  shape (M,), and the (N, M, d1, ...) layout of a class per position (the
  classes on axis 1).
* ``pos_weight`` of the binary loss.

Every option is a line of one formula: with the target distribution
:math:`y'_j` (one-hot, smoothed or given) and :math:`a_{ji} = w_i\, y'_{ji}`,
:math:`\ell_j = -\sum_i a_{ji} \log q_{ji}` and, from the softmax Jacobian
(:func:`scratchnet.losses.cross_entropy_grad`), :math:`\partial \ell_j /
\partial f_{jk} = q_{jk} \sum_i a_{ji} - a_{jk}`.  Without options these
functions give the chapter's values.  What each option makes the trained
network learn, and how to read the posterior back, is
:mod:`scratchnet.readouts`.

Conventions shared by every loss (here and in :mod:`scratchnet.scoring`):

* ``<loss>_grad`` takes the arguments of ``<loss>`` and returns the gradient
  with respect to the first one, of its shape; with ``"none"``, row :math:`j`
  is that of sample :math:`j`'s loss (the gradient of the *sum* of the losses).
* An empty batch is an error.
* :math:`0 \cdot \infty = 0`: a term with weight or probability 0 contributes
  nothing, even where the log-probability is :math:`-\infty`.  A logit of
  ``-inf`` on the target class gives the loss ``+inf``, without a warning.
* float32 input gives float32 output; integer input is computed in float64.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._loss_common import (
    Loss,
    check_binary_targets,
    reduce_loss,
    reduction_scale,
    safe_multiply,
)
from ._torch_layouts import (
    IGNORE_INDEX,
    CrossEntropyInputs,
    as_cross_entropy_inputs,
    as_nll_inputs,
    from_rows,
)
from ._validation import (
    as_float_array,
    check_reduction,
    unwrap,
)
from .softmax import log_sigmoid, log_softmax, sigmoid, softmax

__all__ = [
    "binary_cross_entropy_with_logits", "binary_cross_entropy_with_logits_grad",
    "cross_entropy", "cross_entropy_and_grad", "cross_entropy_grad",
    "nll_loss", "nll_loss_grad",
]


# ---- The pieces of the formula, on rows (one per classified element) ----
def _mean_safe_weights(inp: CrossEntropyInputs) -> np.ndarray | None:
    r"""The class weights :math:`w_i`, divided by :math:`\max_j w_{t_j}` for a mean.

    A refinement the formula does not show.  The weighted mean
    :math:`\sum_j w_{t_j} \ell_j / \sum_j w_{t_j}` does not change when every
    weight is scaled, and scaled so that the largest target weight is 1,
    weights of 1e308 cannot overflow the sums, nor weights of 1e-320 underflow
    them and make the gradient infinite.  Pinned by
    ``tests/test_extremes.py::test_weighted_gradients_are_finite_and_scale_free``
    and the ``"ce weights 1e308"`` rows there.
    """
    if inp.w is None or inp.t is None or inp.reduction != "mean":
        return inp.w
    with np.errstate(over="ignore"):  # another class 1e300 times heavier: inf, rightly
        return inp.w / _target_weights(inp, inp.w).max()


def _target_weights(inp: CrossEntropyInputs, w: np.ndarray | None) -> np.ndarray:
    r""":math:`w_{t_j}` of each element, shape (K,): 1 unweighted, 0 where ignored."""
    w_t = np.ones(inp.t.shape, inp.x.dtype) if w is None else w[inp.t]
    return w_t if inp.keep is None else w_t * inp.keep


def _weighted_targets(inp: CrossEntropyInputs, w: np.ndarray | None) -> np.ndarray:
    r"""The weighted targets :math:`a_{ji} = w_i\, y'_{ji}`, shape (K, M).

    :math:`y' = (1 - \varepsilon) y + \varepsilon / M` is the smoothed target
    distribution; :math:`y_j` is one-hot at :math:`t_j` (or the given distribution); an
    ignored element wants nothing (:math:`a_j = 0`).
    """
    m = inp.x.shape[1]
    y = inp.p if inp.t is None else (inp.t[:, None] == np.arange(m)).astype(inp.x.dtype)
    a = (1.0 - inp.eps) * y + inp.eps / m
    a = a if w is None else a * w
    return a if inp.keep is None else a * inp.keep[:, None]  # ignored: a_j = 0


def _reduced(losses: np.ndarray, inp: CrossEntropyInputs, denominator: Any) -> Loss:
    """The per-element losses reduced, or in the targets' layout for ``"none"``."""
    if inp.reduction == "none":
        return unwrap(from_rows(losses, inp.shape))
    return reduce_loss(losses, inp.reduction, denominator)


# ---- Negative log-likelihood ----
def nll_loss(log_probs: Any, targets: Any, *, weight: Any = None,
             ignore_index: int = IGNORE_INDEX, reduction: str = "mean") -> Loss:
    r"""Negative log-likelihood of the target classes, given log-probabilities.

    Parameters
    ----------
    log_probs : array_like, shape (N, M), (M,) or (N, M, d1, ...)
        :math:`\log q(i \mid x_j) \le 0`, e.g. from :func:`scratchnet.log_softmax`
        (``-inf``: probability 0); the class axis is axis 1 (axis 0 for one
        unbatched sample), as in PyTorch.
    targets : array_like of int, shape (N,), () or (N, d1, ...)
        Class indices :math:`t_j \in [0, M)`, or ``ignore_index``.
    weight : array_like, shape (M,), optional
        Non-negative class weights :math:`w_i` (default: all 1).
    ignore_index : int, default -100
        Targets equal to it are skipped: loss and gradient 0, and left out
        of the mean (PyTorch's default and meaning).
    reduction : {"mean", "sum", "none"}, default "mean"

    Returns
    -------
    scalar or ndarray of the targets' shape
        The reduced loss, or the per-element losses for ``"none"``.

    Notes
    -----
    :math:`\ell_j = -w_{t_j} \log q(t_j \mid x_j)` (``+inf`` for log-probability
    ``-inf``, 0 for weight 0); the mean is :math:`\sum_j \ell_j / \sum_j w_{t_j}`
    over the elements not ignored, PyTorch's weighted mean (their number
    without weights); if every target is ignored it is 0/0, and a
    ``ValueError`` (PyTorch returns NaN).  A log-probability in
    :math:`(0, 10^{-6}]` is a probability of 1 off by rounding and counts as
    0, so the loss is never negative; above :math:`10^{-6}` it is rejected.

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> log_probs = sn.log_softmax(np.array([[-1.0, -3, 4], [-3, 3, -1]]))
    >>> print(f"{sn.functional.nll_loss(log_probs, [0, 1]):.4f}")
    2.5141
    >>> print(f"{sn.functional.nll_loss(log_probs, [0, -100]):.4f}")  # 2nd skipped
    5.0076
    """
    inp = as_nll_inputs(log_probs, targets, weight, ignore_index, reduction)
    w_t = _target_weights(inp, _mean_safe_weights(inp))
    log_q_t = inp.x[np.arange(inp.t.size), inp.t]
    # log q above 0 (rounding) counts as 0; 0.0 - 0.0 is +0.0, never -0.0
    losses = safe_multiply(w_t, 0.0 - np.minimum(log_q_t, 0.0))
    return _reduced(losses, inp, w_t.sum())


def nll_loss_grad(log_probs: Any, targets: Any, *, weight: Any = None,
                  ignore_index: int = IGNORE_INDEX,
                  reduction: str = "mean") -> np.ndarray:
    r"""Gradient of :func:`nll_loss` with respect to ``log_probs``.

    Parameters
    ----------
    log_probs, targets, weight, ignore_index, reduction
        As in :func:`nll_loss`.

    Returns
    -------
    ndarray, shape of ``log_probs``
        :math:`-s\, w_{t_j}` at :math:`(j, t_j)` and 0 elsewhere (and at
        ignored elements), with :math:`s = 1 / \sum_j w_{t_j}` for ``"mean"``
        and 1 otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> sn.functional.nll_loss_grad(np.log([[0.5, 0.5], [0.9, 0.1]]), [0, 1])
    array([[-0.5,  0. ],
           [ 0. , -0.5]])
    """
    inp = as_nll_inputs(log_probs, targets, weight, ignore_index, reduction)
    w_t = _target_weights(inp, _mean_safe_weights(inp))
    grad = np.zeros_like(inp.x)
    s = reduction_scale(inp.reduction, w_t.sum())
    grad[np.arange(inp.t.size), inp.t] = -s * w_t
    return from_rows(grad, inp.shape)


# ---- Cross-entropy on logits ----
def cross_entropy(logits: Any, targets: Any, *, weight: Any = None,
                  ignore_index: int = IGNORE_INDEX, label_smoothing: float = 0.0,
                  reduction: str = "mean") -> Loss:
    r"""Cross-entropy between target classes (or distributions) and ``softmax(logits)``.

    Parameters
    ----------
    logits : array_like, shape (N, M), (M,) or (N, M, d1, ...)
        Scores :math:`f_i(x_j)`, one row per sample (one sample unbatched; a
        class axis 1 at every position of (d1, ...), as in PyTorch);
        ``-inf`` means probability 0, ``+inf`` and NaN are rejected.
    targets : array_like of int, shape (N,), () or (N, d1, ...); or of float
        Class indices :math:`t_j \in [0, M)` (or ``ignore_index``), or target
        distributions :math:`p_j` of logits' shape along the class axis
        (non-negative, summing to 1 within 1e-6).
    weight : array_like, shape (M,), optional
        Non-negative class weights :math:`w_i` (default: all 1).
    ignore_index : int, default -100
        Class-index targets equal to it are skipped: loss and gradient 0, and
        left out of the mean (PyTorch's default and meaning).
    label_smoothing : float in [0, 1], default 0
        :math:`\varepsilon`: targets :math:`(1-\varepsilon) y + \varepsilon/M`.
    reduction : {"mean", "sum", "none"}, default "mean"

    Returns
    -------
    scalar or ndarray of shape (N,) (or (N, d1, ...), or a scalar)
        The reduced loss, or the per-sample losses :math:`\ell_j \in [0, \infty)`
        (0 for a perfect prediction, :math:`\log M` for a uniform one).

    Notes
    -----
    Exactly ``torch.nn.functional.cross_entropy``: with the target distribution
    :math:`y'_j` (one-hot, smoothed or given) and :math:`a_{ji} = w_i\, y'_{ji}`,

    .. math::

        \ell_j = -\sum_i a_{ji} \log \operatorname{softmax}(f_j)_i, \qquad
        \text{mean} = \frac{1}{D} \sum_j \ell_j,

    with :math:`D = \sum_j w_{t_j}` for class indices (:math:`N` without
    weights) and :math:`D = N` for probability targets, the sums over the
    elements whose target is not ``ignore_index`` (an ignored element has
    :math:`a_j = 0`: no smoothing either); all of them ignored is 0/0, a
    ``ValueError`` (PyTorch returns NaN).  With (N, M, d1, ...) logits every
    position is a sample: the mean is over all :math:`N d_1 \cdots` of them.
    The leading class keeps its relative precision: ``[[40, 0]]`` with
    target 0 gives :math:`\log(1 + e^{-40}) = 4.2 \cdot 10^{-18}`, exactly the
    :func:`binary_cross_entropy_with_logits` of the logit 40 (the
    ``log1p`` inside :func:`scratchnet.log_softmax`).

    The code is the formula: ``log_softmax``, then :math:`-\sum_i a_{ji} \log
    q_{ji}`.  Convention (``docs/conventions.md``): a logit more than the
    largest float (about 1.8e308) below its row's maximum has log-probability
    ``-inf``, so under label smoothing, where every class has a share of the
    target, the loss is ``inf`` (the exact value may be finite).  The fused,
    in-place loss and gradient for training are the fast path's
    :func:`scratchnet.fast.kernels.cross_entropy_and_grad_inplace`.

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> logits = np.array([[-1.0, -3, 4], [-3, 3, -1]])
    >>> print(f"{sn.functional.cross_entropy(logits, [0, 1]):.4f}")
    2.5141
    >>> losses = sn.functional.cross_entropy([[0.0, 0, 0], [1e4, 0, 0]], [2, 1],
    ...                                      reduction="none")
    >>> [round(float(v), 4) for v in losses]   # log 3 when uniform; a gap of 1e4
    [1.0986, 10000.0]

    PyTorch's other layouts: one sample, and a class per position of a map:

    >>> print(f"{sn.functional.cross_entropy([-1.0, -3, 4], 0):.4f}")
    5.0076
    >>> maps = np.zeros((2, 3, 4, 4))                 # N=2, M=3 classes, 4x4
    >>> print(f"{sn.functional.cross_entropy(maps, np.ones((2, 4, 4), int)):.4f}")
    1.0986
    """
    inp = as_cross_entropy_inputs(logits, targets, weight, ignore_index,
                                  label_smoothing, reduction)
    w = _mean_safe_weights(inp)
    a = _weighted_targets(inp, w)        # a_ji = w_i y'_ji
    log_q = log_softmax(inp.x)   # log q(i | x_j): one row per element, classes last
    # l_j = -sum_i a_ji log q_ji, with 0 * -inf = 0; 0.0 - s is never -0.0
    losses = 0.0 - safe_multiply(a, log_q).sum(axis=1)
    # D of the mean: sum_j w_tj for class indices, N for distributions
    d = inp.x.shape[0] if inp.t is None else _target_weights(inp, w).sum()
    return _reduced(losses, inp, d)


def cross_entropy_grad(logits: Any, targets: Any, *, weight: Any = None,
                       ignore_index: int = IGNORE_INDEX, label_smoothing: float = 0.0,
                       reduction: str = "mean") -> np.ndarray:
    r"""Gradient of :func:`cross_entropy` with respect to ``logits``.

    Parameters
    ----------
    logits, targets, weight, ignore_index, label_smoothing, reduction
        As in :func:`cross_entropy`.

    Returns
    -------
    ndarray, shape of ``logits``
        :math:`\partial\,\text{loss} / \partial f` (row by row for ``"none"``;
        0 for an ignored element).

    Notes
    -----
    With :math:`\partial \log q_{ji} / \partial f_{jk} = \delta_{ik} - q_{jk}`
    (the softmax Jacobian, derived in :func:`scratchnet.losses.cross_entropy_grad`)
    and :math:`A_j = \sum_i a_{ji}` (notation of :func:`cross_entropy`),

    .. math::

        \frac{\partial \ell_j}{\partial f_{jk}}
            = -\sum_i a_{ji} (\delta_{ik} - q_{jk}) = q_{jk} A_j - a_{jk},

    times :math:`1/D` for ``"mean"``.  For class indices without weights or
    smoothing :math:`A_j = 1`: the familiar :math:`\partial L / \partial f =
    (\operatorname{softmax}(f) - \operatorname{one\_hot}(t)) / N`.

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> sn.functional.cross_entropy_grad([[0.0, 0.0], [0.0, np.log(3)]], [0, 1])
    array([[-0.25 ,  0.25 ],
           [ 0.125, -0.125]])
    """
    inp = as_cross_entropy_inputs(logits, targets, weight, ignore_index,
                                  label_smoothing, reduction)
    w = _mean_safe_weights(inp)
    a = _weighted_targets(inp, w)        # a_ji = w_i y'_ji
    q = softmax(inp.x)   # q(i | x_j), one row per element
    # q_j A_j - a_j: softmax minus the targets (A_j = sum_i a_ji = 1 unweighted)
    grad = q * a.sum(axis=1, keepdims=True) - a
    d = inp.x.shape[0] if inp.t is None else _target_weights(inp, w).sum()
    grad *= reduction_scale(inp.reduction, d)
    return from_rows(grad, inp.shape)


def cross_entropy_and_grad(logits: Any, targets: Any, *, weight: Any = None,
                           ignore_index: int = IGNORE_INDEX,
                           label_smoothing: float = 0.0,
                           reduction: str = "mean") -> tuple[Loss, np.ndarray]:
    r"""The loss and its gradient, as a training step uses them.

    :func:`cross_entropy` and :func:`cross_entropy_grad` called in turn, each with
    its own check and its own softmax: bit-for-bit the two functions' values.  The
    fused version, one check and one ``exp`` in place, is the fast path's
    :func:`scratchnet.fast.kernels.cross_entropy_and_grad_inplace`, pinned to these.

    Parameters
    ----------
    logits, targets, weight, ignore_index, label_smoothing, reduction
        As in :func:`cross_entropy`.

    Returns
    -------
    loss : scalar or ndarray of the targets' shape
        As :func:`cross_entropy`.
    grad : ndarray, shape of ``logits``
        As :func:`cross_entropy_grad`.

    Examples
    --------
    >>> import scratchnet as sn
    >>> loss, grad = sn.functional.cross_entropy_and_grad([[0.0, 0.0]], [1])
    >>> print(f"{loss:.4f}", grad)
    0.6931 [[ 0.5 -0.5]]
    """
    options = {"weight": weight, "ignore_index": ignore_index,
               "label_smoothing": label_smoothing, "reduction": reduction}
    loss = cross_entropy(logits, targets, **options)
    return loss, cross_entropy_grad(logits, targets, **options)


# ---- Binary cross-entropy on logits ----
def _bce_inputs(logits: Any, targets: Any, pos_weight: Any, reduction: Any):
    """Validated (logits, targets, pos_weight * targets, reduction)."""
    reduction = check_reduction(reduction)
    s, y = check_binary_targets(logits, targets, {}, "binary_cross_entropy_with_logits")
    if pos_weight is None:
        return s, y, y, reduction
    pw = as_float_array(pos_weight, "pos_weight", allow_inf=False)
    if pw.ndim > 1 or (pw.ndim == 1 and pw.shape[0] not in (1, s.shape[-1])):
        raise ValueError(f"pos_weight must be a scalar or have shape ({s.shape[-1]},),"
                         f" one weight per entry of logits' last axis; got shape "
                         f"{pw.shape}")
    if (pw < 0).any():
        raise ValueError(f"pos_weight must be non-negative; got {pw.min():g}")
    return s, y, pw.astype(s.dtype, copy=False) * y, reduction


def binary_cross_entropy_with_logits(logits: Any, targets: Any, *,
                                     pos_weight: Any = None,
                                     reduction: str = "mean") -> Loss:
    r"""Binary cross-entropy between targets in [0, 1] and ``sigmoid(logits)``.

    Parameters
    ----------
    logits : array_like, shape (N, ...)
        Scores :math:`s`; :math:`q = \sigma(s)` is the probability of the
        positive class.  ``+-inf`` allowed, NaN rejected.
    targets : array_like, same shape as ``logits``
        :math:`y \in [0, 1]` (labels 0/1 or soft targets).
    pos_weight : array_like, scalar or shape (C,), optional
        Non-negative weight :math:`\pi` of the positive term, broadcast along
        the last axis (C = ``logits.shape[-1]``).  Default 1.
    reduction : {"mean", "sum", "none"}, default "mean"
        The mean is over all elements (as in PyTorch).

    Returns
    -------
    scalar or ndarray of logits' shape

    Notes
    -----
    :math:`\ell = -\bigl[\pi\, y \log \sigma(s) + (1 - y) \log \sigma(-s)\bigr]`,
    the two-class cross-entropy with logits :math:`(s, 0)`, computed with
    :func:`scratchnet.log_sigmoid`: :math:`s = \pm 10^{300}` gives the exact 0 or
    :math:`10^{300}`.  :math:`\pi = N_B / N_A` re-weights an unbalanced sample
    towards equal priors (class counts act as priors).

    Examples
    --------
    >>> import scratchnet as sn
    >>> sn.functional.binary_cross_entropy_with_logits(
    ...     [0.0, 1e300, -1e300], [1.0, 0.0, 0.0], reduction="none")
    array([6.93147181e-001, 1.00000000e+300, 0.00000000e+000])
    """
    s, y, py, reduction = _bce_inputs(logits, targets, pos_weight, reduction)
    # -log sigma(s) >= 0 and -log sigma(-s) >= 0: the two terms never cancel.
    losses = safe_multiply(py, -log_sigmoid(s))
    losses += safe_multiply(1.0 - y, -log_sigmoid(-s))
    return reduce_loss(losses, reduction, losses.size)


def binary_cross_entropy_with_logits_grad(logits: Any, targets: Any, *,
                                          pos_weight: Any = None,
                                          reduction: str = "mean") -> np.ndarray:
    r"""Gradient of :func:`binary_cross_entropy_with_logits` with respect to ``logits``.

    Parameters
    ----------
    logits, targets, pos_weight, reduction
        As in :func:`binary_cross_entropy_with_logits`.

    Returns
    -------
    ndarray, same shape as ``logits``

    Notes
    -----
    From :math:`\frac{d}{ds} \log \sigma(\pm s) = \pm \sigma(\mp s)`,
    :math:`\partial \ell / \partial s = (1 - y)\, \sigma(s) - \pi\, y\, \sigma(-s)`,
    which is :math:`\sigma(s) - y` for :math:`\pi = 1`; times :math:`1/n`
    (n elements) for ``"mean"``.

    Examples
    --------
    >>> import scratchnet as sn
    >>> sn.functional.binary_cross_entropy_with_logits_grad([0.0, 0.0], [1.0, 0.0],
    ...                                          reduction="sum")
    array([-0.5,  0.5])
    """
    s, y, py, reduction = _bce_inputs(logits, targets, pos_weight, reduction)
    grad = (1.0 - y) * sigmoid(s)
    grad -= py * sigmoid(-s)
    grad *= reduction_scale(reduction, grad.size)
    return grad
