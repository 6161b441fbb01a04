r"""Classification losses, each beside its gradient with respect to the model's outputs.

**Maximum likelihood is cross-entropy.**  A classifier turns its logits
:math:`f(x_j)` into :math:`q(C \mid x_j) = \operatorname{softmax}(f(x_j))`.
Maximising the likelihood :math:`\prod_j q(c_j \mid x_j)` of the observed
labels is minimising the average negative log-likelihood

.. math::

    L = -\frac{1}{N} \sum_{j=1}^{N} \log q(C = c_j \mid x_j) ,

the *cross-entropy* between the labels and the model.  In code that is
``-mean(log_softmax(f)[range(N), t])``, and it is what :func:`cross_entropy`
is.  Why its minimiser is the posterior :math:`P(C \mid x)` is the proof of
``docs/derivation.md`` (in short: :mod:`scratchnet.information`).

**The gradient is "prediction minus target".**  :math:`\partial L /
\partial f = (\operatorname{softmax}(f) - \operatorname{one\_hot}(t)) / N`
(derived in :func:`cross_entropy_grad`): a gradient step moves probability
from where the model put too much to where the label is.  This signal
trains every classifier in scratchnet, and is why softmax and cross-entropy
are always paired.

**Binary case.**  One logit :math:`s` and :math:`q(A \mid x) = \sigma(s)` give
:math:`-y \log \sigma(s) - (1 - y) \log \sigma(-s)`, with gradient
:math:`\sigma(s) - y` (:func:`binary_cross_entropy_with_logits`).  Squared
error and the hinge loss, and whether they learn :math:`P(C \mid x)`, are the
next chapter, :mod:`scratchnet.scoring`.

The functions here are the formulas: a batch of shape (N, M), one class
index per row, the mean.  PyTorch's options (class weights, ``ignore_index``,
label smoothing, ``reduction``, probability targets, the (M,) and
(N, M, d1, ...) layouts) live in :mod:`scratchnet.functional`, under the same
names and with ``torch.nn.functional``'s signatures; given one, a function
here raises a ``TypeError`` that says so.  The fused, in-place loss and
gradient that training uses for speed are the fast path's
(:mod:`scratchnet.fast.kernels`), pinned to these functions by
``tests/test_fast.py``.

A logit of ``-inf`` on the target class gives the loss ``+inf``, without a
warning.  float32 input gives float32 output; integer input is computed in
float64.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._loss_common import Loss, check_binary_targets, safe_multiply
from ._torch_layouts import check_class_scores
from .softmax import log_sigmoid, log_softmax, one_hot, sigmoid, softmax

__all__ = [
    "binary_cross_entropy_with_logits", "binary_cross_entropy_with_logits_grad",
    "cross_entropy", "cross_entropy_and_grad", "cross_entropy_grad",
    "nll_loss", "nll_loss_grad",
]


def nll_loss(log_probs: Any, targets: Any, **options: Any) -> Loss:
    r"""Negative log-likelihood of the targets: :math:`-\frac1N \sum_j \log q_{j t_j}`.

    Parameters
    ----------
    log_probs : array_like, shape (N, M)
        :math:`\log q(i \mid x_j) \le 0`, e.g. from :func:`scratchnet.log_softmax`
        (``-inf``: probability 0).
    targets : array_like of int, shape (N,)
        Class indices :math:`t_j \in [0, M)`.
    **options
        None taken: ``weight``, ``ignore_index`` and ``reduction`` are
        :func:`scratchnet.functional.nll_loss`'s.

    Returns
    -------
    scalar
        The mean of :math:`-\log q(t_j \mid x_j)` over the batch (``+inf``
        where a target's log-probability is ``-inf``).

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> log_probs = sn.log_softmax(np.array([[-1.0, -3, 4], [-3, 3, -1]]))
    >>> print(f"{sn.nll_loss(log_probs, [0, 1]):.4f}")
    2.5141
    """
    log_q, t = check_class_scores(log_probs, targets, options, "nll_loss")
    # -(1/N) sum_j log q_j: each term divided first, so losses of 1e308 cannot overflow
    return 0.0 - np.sum(log_q[np.arange(len(t)), t] / len(t))  # 0.0 -: never -0.0


def nll_loss_grad(log_probs: Any, targets: Any, **options: Any) -> np.ndarray:
    r"""Gradient of :func:`nll_loss`: :math:`-1/N` at each target, 0 elsewhere.

    Parameters
    ----------
    log_probs, targets
        As in :func:`nll_loss`.

    Returns
    -------
    ndarray, shape (N, M)
        :math:`-1/N` at :math:`(j, t_j)` and 0 elsewhere: the loss reads only
        the target entries, each with weight :math:`1/N`.

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> sn.nll_loss_grad(np.log([[0.5, 0.5], [0.9, 0.1]]), [0, 1])
    array([[-0.5,  0. ],
           [ 0. , -0.5]])
    """
    log_q, t = check_class_scores(log_probs, targets, options, "nll_loss_grad")
    return (0.0 - one_hot(t, log_q.shape[1])).astype(log_q.dtype) / len(t)


def cross_entropy(logits: Any, targets: Any, **options: Any) -> Loss:
    r"""Cross-entropy of the targets: ``-mean(log_softmax(f)[range(N), t])``.

    Parameters
    ----------
    logits : array_like, shape (N, M)
        Scores :math:`f_i(x_j)`, one row per sample; ``-inf`` means
        probability 0, ``+inf`` and NaN are rejected.
    targets : array_like of int, shape (N,)
        Class indices :math:`t_j \in [0, M)`.
    **options
        None taken: class weights, ``ignore_index``, ``label_smoothing``,
        ``reduction``, probability targets and PyTorch's other layouts are
        :func:`scratchnet.functional.cross_entropy`'s.

    Returns
    -------
    scalar
        :math:`L = -\frac1N \sum_j \log \operatorname{softmax}(f_j)_{t_j} \ge 0`:
        0 for a perfect prediction, :math:`\log M` for a uniform one.

    Notes
    -----
    ``log_softmax`` keeps the leading class's relative precision: ``[[40,
    0]]`` with target 0 gives :math:`\log(1 + e^{-40}) = 4.2 \cdot 10^{-18}`,
    exactly the :func:`binary_cross_entropy_with_logits` of the logit 40.
    The same value as :func:`nll_loss` of ``log_softmax(logits)``.

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> logits = np.array([[-1.0, -3, 4], [-3, 3, -1]])
    >>> print(f"{sn.cross_entropy(logits, [0, 1]):.4f}")
    2.5141
    >>> print(f"{sn.cross_entropy([[0.0, 0, 0]], [2]):.4f}")   # uniform: log 3
    1.0986
    """
    f, t = check_class_scores(logits, targets, options, "cross_entropy")
    # L = -(1/N) sum_j log q(t_j | x_j), each term divided first: no overflow of the sum
    return 0.0 - np.sum(log_softmax(f)[np.arange(len(t)), t] / len(t))  # never -0.0


def cross_entropy_grad(logits: Any, targets: Any, **options: Any) -> np.ndarray:
    r"""Gradient of :func:`cross_entropy`: ``(softmax(f) - one_hot(t)) / N``.

    Parameters
    ----------
    logits, targets
        As in :func:`cross_entropy`.

    Returns
    -------
    ndarray, shape (N, M)
        :math:`\partial L / \partial f_{jk}`.

    Notes
    -----
    **The softmax Jacobian** (derived here once; the other chapters cite
    it).  With :math:`\log q_i = f_i - \log \sum_m e^{f_m}`,

    .. math::

        \frac{\partial \log q_i}{\partial f_k}
            = \delta_{ik} - \frac{e^{f_k}}{\sum_m e^{f_m}} = \delta_{ik} - q_k .

    Sample :math:`j`'s loss is :math:`\ell_j = -\log q_{j t_j}`, so
    :math:`\partial \ell_j / \partial f_{jk} = q_{jk} - \delta_{t_j k}`, and
    the mean divides by :math:`N`:

    .. math::

        \frac{\partial L}{\partial f} = \frac{1}{N}
            \bigl(\operatorname{softmax}(f) - \operatorname{one\_hot}(t)\bigr).

    Each row sums to 0: the step moves probability, it does not create it.
    ``tests/test_losses.py`` checks it against finite differences.

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> sn.cross_entropy_grad([[0.0, 0.0], [0.0, np.log(3)]], [0, 1])
    array([[-0.25 ,  0.25 ],
           [ 0.125, -0.125]])
    """
    f, t = check_class_scores(logits, targets, options, "cross_entropy_grad")
    q = softmax(f)
    return (q - one_hot(t, q.shape[1])).astype(q.dtype) / len(t)  # float32 stays


def cross_entropy_and_grad(logits: Any, targets: Any,
                           **options: Any) -> tuple[Loss, np.ndarray]:
    r"""The loss and its gradient, as a training step uses them.

    The two calls, each with its own check and its own softmax (after a
    first check that names this function if an option is given).  The fused
    version, one check and one ``exp`` in place, is the fast path's
    :func:`scratchnet.fast.kernels.cross_entropy_and_grad_inplace`, pinned
    to these.

    Parameters
    ----------
    logits, targets
        As in :func:`cross_entropy` (with options:
        :func:`scratchnet.functional.cross_entropy_and_grad`).

    Returns
    -------
    loss : scalar
        As :func:`cross_entropy`.
    grad : ndarray, shape (N, M)
        As :func:`cross_entropy_grad`.

    Examples
    --------
    >>> import scratchnet as sn
    >>> loss, grad = sn.cross_entropy_and_grad([[0.0, 0.0]], [1])
    >>> print(f"{loss:.4f}", grad)
    0.6931 [[ 0.5 -0.5]]
    """
    check_class_scores(logits, targets, options, "cross_entropy_and_grad")
    return cross_entropy(logits, targets), cross_entropy_grad(logits, targets)


def binary_cross_entropy_with_logits(logits: Any, targets: Any, **options: Any) -> Loss:
    r"""Binary cross-entropy of targets in [0, 1] under ``sigmoid(logits)``.

    Parameters
    ----------
    logits : array_like, shape (N, ...)
        Scores :math:`s`; :math:`q = \sigma(s)` is the probability of the
        positive class.  ``+-inf`` allowed, NaN rejected.
    targets : array_like, same shape as ``logits``
        :math:`y \in [0, 1]` (labels 0/1 or soft targets).
    **options
        None taken: ``pos_weight`` and ``reduction`` are
        :func:`scratchnet.functional.binary_cross_entropy_with_logits`'s.

    Returns
    -------
    scalar
        The mean over all elements of
        :math:`\ell = -\bigl[y \log \sigma(s) + (1 - y) \log \sigma(-s)\bigr]`.

    Notes
    -----
    The two-class cross-entropy with logits :math:`(s, 0)`, computed with
    :func:`scratchnet.log_sigmoid`: :math:`s = \pm 10^{300}` gives the exact 0
    or :math:`10^{300}`.  :math:`0 \cdot \infty = 0`: a label of 0 or 1
    silences the other term even where its log is infinite.

    Examples
    --------
    >>> import scratchnet as sn
    >>> print(f"{sn.binary_cross_entropy_with_logits([0.0, 1e300], [1.0, 0.0]):.4g}")
    5e+299
    """
    s, y = check_binary_targets(logits, targets, options,
                                "binary_cross_entropy_with_logits")
    # -log sigma(s) >= 0 and -log sigma(-s) >= 0: the two terms never cancel
    losses = safe_multiply(y, -log_sigmoid(s)) + safe_multiply(1 - y, -log_sigmoid(-s))
    return np.sum(losses / losses.size)  # the mean, each term divided first


def binary_cross_entropy_with_logits_grad(logits: Any, targets: Any,
                                          **options: Any) -> np.ndarray:
    r"""Gradient of the binary cross-entropy: :math:`(\sigma(s) - y) / n`.

    Parameters
    ----------
    logits, targets
        As in :func:`binary_cross_entropy_with_logits`.

    Returns
    -------
    ndarray, same shape as ``logits``

    Notes
    -----
    From :math:`\frac{d}{ds} \log \sigma(\pm s) = \pm \sigma(\mp s)`,
    :math:`\partial \ell / \partial s = (1 - y)\, \sigma(s) - y\, \sigma(-s)
    = \sigma(s) - y`, over the :math:`n` elements of the mean; written in the
    first form, which keeps a gradient of :math:`-10^{-30}` that
    :math:`\sigma(s) - y` would round to 0.

    Examples
    --------
    >>> import scratchnet as sn
    >>> sn.binary_cross_entropy_with_logits_grad([0.0, 0.0], [1.0, 0.0])
    array([-0.25,  0.25])
    """
    s, y = check_binary_targets(logits, targets, options,
                                "binary_cross_entropy_with_logits_grad")
    return ((1 - y) * sigmoid(s) - y * sigmoid(-s)) / y.size
