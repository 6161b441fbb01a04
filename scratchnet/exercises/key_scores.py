r"""The answer key of the score exercises: each the chapter's formula in plain NumPy.

A hand-out is written from these functions, not from the chapters: the
chapters validate every argument and take every option of their PyTorch
counterparts, while an exercise takes only the arguments it covers and is
graded only on what its docstring states.  So each function here has the
exercise's own signature, a docstring that names only its arguments and
states what the checks try (the edges of ``docs/conventions.md``), examples
that call the function itself, and a body that is the formula of the chapter
with nothing else: ``make`` keeps the docstring for the student and replaces
the body with a stub; ``make --solutions`` keeps the body.  The grader checks
the student's function against the chapter's, so the answer key scoring full
marks (a test) pins these bodies to the chapters.

``POINTERS`` holds what each stub says by default: what to compute, not how.
"""

from __future__ import annotations

import numpy as np

__all__ = ["POINTERS", "cross_entropy", "cross_entropy_grad", "entropy",
           "kl_divergence", "log_softmax", "logsumexp", "nll_loss", "sigmoid",
           "softmax"]

POINTERS = {
    "logsumexp": "log(sum(exp(x))) over the last axis, finite for large x",
    "softmax": "the probabilities exp(x) / sum(exp(x)) of each row, finite for "
               "large x",
    "log_softmax": "the log of each row's softmax, finite where the probability "
                   "underflows",
    "nll_loss": "the mean negative log-probability of the target classes",
    "cross_entropy": "the mean negative log-probability that softmax(logits) gives "
                     "the targets",
    "cross_entropy_grad": "the gradient of the mean cross-entropy with respect to "
                          "the logits",
    "entropy": "the entropy of each distribution, in nats, with 0 log 0 = 0",
    "kl_divergence": "KL(p || q) of each pair of distributions, in nats",
}


def logsumexp(x: np.ndarray) -> np.ndarray:
    r"""The log of the sum of exponentials of each row, without overflow.

    Parameters
    ----------
    x : ndarray, shape (N, M) or (M,)
        Scores, the classes in the last dimension; ``-inf`` is a score of
        probability 0.

    Returns
    -------
    ndarray, shape (N,), or a scalar for one sample
        :math:`\log \sum_i e^{x_i}` of each row.

    Notes
    -----
    With :math:`m` the row's maximum,

    .. math::

        \log \sum_i e^{x_i} = m + \log \sum_i e^{x_i - m},

    exact, and finite for large scores (:math:`e^{1000}` overflows, every
    :math:`e^{x_i - m} \le 1` does not).  A row of ``-inf`` gives ``-inf``.
    float32 input gives float32; an empty batch, shape (0, M), gives shape (0,).

    Examples
    --------
    >>> print(f"{logsumexp(np.array([0.0, np.log(3.0)])):.4f}")   # log(1 + 3)
    1.3863
    >>> logsumexp(np.array([[1000.0, 1000.0], [0.0, -np.inf]]))
    array([1000.69314718,    0.        ])
    """
    m = np.max(x, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)  # a row of -inf: no shift, log(0) = -inf
    with np.errstate(divide="ignore"):
        out = m + np.log(np.sum(np.exp(x - m), axis=-1, keepdims=True))
    return out[..., 0]


def softmax(x: np.ndarray) -> np.ndarray:
    r"""Scores to probabilities, row by row: :math:`e^{x_i} / \sum_k e^{x_k}`.

    Parameters
    ----------
    x : ndarray, shape (N, M) or (M,)
        Scores (logits), the classes in the last dimension; ``-inf`` is a score of
        probability 0 (each row has a finite maximum).

    Returns
    -------
    ndarray, shape of ``x``
        Probabilities, each row summing to 1.

    Notes
    -----
    .. math::

        \operatorname{softmax}(x)_i = \frac{e^{x_i - m}}{\sum_k e^{x_k - m}},
        \qquad m = \max_k x_k ,

    the same value for every shift :math:`m`; the maximum keeps every
    exponential at most 1, so large scores do not overflow.  float32 input
    gives float32; an empty batch, shape (0, M), gives shape (0, M).

    Examples
    --------
    >>> softmax(np.array([[0.0, np.log(3.0)], [1000.0, 1000.0]]))
    array([[0.25, 0.75],
           [0.5 , 0.5 ]])
    >>> softmax(np.array([1.0, -np.inf]))
    array([1., 0.])
    """
    m = np.max(x, axis=-1, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=-1, keepdims=True)


def log_softmax(x: np.ndarray) -> np.ndarray:
    r"""Log-probabilities, row by row: :math:`x_i - \log \sum_k e^{x_k}`.

    Parameters
    ----------
    x : ndarray, shape (N, M) or (M,)
        Scores (logits), the classes in the last dimension; ``-inf`` is a score of
        probability 0 (each row has a finite maximum).

    Returns
    -------
    ndarray, shape of ``x``
        :math:`\log \operatorname{softmax}(x)`, finite wherever ``x`` is.

    Notes
    -----
    .. math::

        \log \operatorname{softmax}(x)_i = (x_i - m) - \log \sum_k e^{x_k - m},
        \qquad m = \max_k x_k .

    Computing ``log(softmax(x))`` instead gives ``log(0) = -inf`` wherever the
    probability underflows (a score 1e4 below the maximum), though the
    log-probability is finite.  float32 input gives float32; an empty batch,
    shape (0, M), gives shape (0, M).

    Examples
    --------
    >>> log_softmax(np.array([[0.0, 0.0], [0.0, -1e4]]))
    array([[-6.93147181e-01, -6.93147181e-01],
           [ 0.00000000e+00, -1.00000000e+04]])
    """
    shifted = x - np.max(x, axis=-1, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))


def sigmoid(x: np.ndarray) -> np.ndarray:
    r"""The logistic function :math:`1 / (1 + e^{-x})`, elementwise, without overflow.

    Parameters
    ----------
    x : ndarray, any shape

    Returns
    -------
    ndarray, shape of ``x``

    Notes
    -----
    With :math:`e = e^{-|x|} \le 1`, :math:`\sigma(x) = 1 / (1 + e)` for
    :math:`x \ge 0` and :math:`e / (1 + e)` for :math:`x < 0`: no exponential
    overflows.

    Examples
    --------
    >>> sigmoid(np.array([0.0, 1000.0, -1000.0]))
    array([0.5, 1. , 0. ])
    """
    x = np.asarray(x)
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0, e) / (1.0 + e)


def nll_loss(log_probs: np.ndarray, targets: np.ndarray) -> float:
    r"""The negative log-likelihood of the target classes, averaged over the batch.

    Parameters
    ----------
    log_probs : ndarray, shape (N, M)
        Log-probabilities of the M classes, one row per sample (``-inf`` is a
        probability of 0).
    targets : ndarray of int, shape (N,)
        The class :math:`t_j \in [0, M)` of each sample.

    Returns
    -------
    float
        :math:`-\frac{1}{N} \sum_j \log q_{j t_j}`; neither input is changed.

    Examples
    --------
    >>> log_probs = np.log(np.array([[0.5, 0.5], [0.25, 0.75]]))
    >>> print(f"{nll_loss(log_probs, np.array([0, 1])):.4f}")
    0.4904
    """
    picked = log_probs[np.arange(len(targets)), targets]
    return -np.mean(picked)


def cross_entropy(logits: np.ndarray, targets: np.ndarray) -> float:
    r"""The cross-entropy of target classes and ``softmax(logits)``, averaged.

    Parameters
    ----------
    logits : ndarray, shape (N, M)
        Scores, one row per sample; ``-inf`` is a score of probability 0.
    targets : ndarray of int, shape (N,)
        The class :math:`t_j \in [0, M)` of each sample.

    Returns
    -------
    float
        The mean loss; neither input is changed.

    Notes
    -----
    The negative log-likelihood of the log-softmax:

    .. math::

        L = -\frac{1}{N} \sum_j \log \operatorname{softmax}(f_j)_{t_j} ,

    finite for large logits (use ``log_softmax``, never ``log(softmax)``); a
    class of probability 0 that is not a target costs nothing.

    Examples
    --------
    >>> logits = np.array([[-1.0, -3, 4], [-3, 3, -1]])
    >>> print(f"{cross_entropy(logits, np.array([0, 1])):.4f}")
    2.5141
    >>> print(f"{cross_entropy(np.array([[0.0, 1e4]]), np.array([0])):.1f}")
    10000.0
    """
    log_q = log_softmax(logits)
    return -np.mean(log_q[np.arange(len(targets)), targets])


def cross_entropy_grad(logits: np.ndarray, targets: np.ndarray) -> np.ndarray:
    r"""Gradient of the mean cross-entropy with respect to the logits.

    Parameters
    ----------
    logits : ndarray, shape (N, M)
        Scores, one row per sample; ``-inf`` is a score of probability 0.
    targets : ndarray of int, shape (N,)
        The class of each sample.

    Returns
    -------
    ndarray, shape (N, M), the dtype of ``logits``
        :math:`\partial L / \partial f`; neither input is changed.

    Notes
    -----
    Since :math:`\partial \log q_{ji} / \partial f_{jk} = \delta_{ik} - q_{jk}`,

    .. math::

        \frac{\partial L}{\partial f} = \frac{\operatorname{softmax}(f)
            - \operatorname{one\_hot}(t)}{N} .

    It agrees with central finite differences of the loss.

    Examples
    --------
    >>> cross_entropy_grad(np.array([[0.0, 0.0], [0.0, np.log(3)]]), np.array([0, 1]))
    array([[-0.25 ,  0.25 ],
           [ 0.125, -0.125]])
    >>> cross_entropy_grad(np.array([[1000.0, 0.0]]), np.array([1]))   # a large logit
    array([[ 1., -1.]])
    """
    one_hot = np.eye(logits.shape[-1], dtype=logits.dtype)[targets]
    return (softmax(logits) - one_hot) / len(targets)


def entropy(p: np.ndarray) -> np.ndarray:
    r"""The entropy :math:`H(p) = -\sum_i p_i \log p_i` of each distribution, in nats.

    Parameters
    ----------
    p : ndarray, shape (..., M)
        Distributions over M outcomes in the last dimension.

    Returns
    -------
    ndarray, shape (...), or a scalar for one distribution

    Notes
    -----
    The convention :math:`0 \log 0 = 0` (the limit of :math:`p \log p`): an
    outcome of probability 0 adds nothing.  A certain outcome has entropy 0,
    a uniform distribution :math:`\log M`.

    Examples
    --------
    >>> print(f"{entropy(np.array([0.5, 0.5])):.4f}")   # log 2
    0.6931
    >>> entropy(np.array([[1.0, 0.0], [0.25, 0.75]]))
    array([0.        , 0.56233514])
    """
    support = p > 0
    terms = np.zeros(p.shape)
    terms[support] = p[support] * np.log(1 / p[support])
    return np.sum(terms, axis=-1)


def kl_divergence(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    r"""The KL divergence :math:`KL(p \| q) = \sum_i p_i \log(p_i / q_i)`, in nats.

    Parameters
    ----------
    p, q : ndarray, shape (..., M)
        Distributions over M outcomes in the last dimension.

    Returns
    -------
    ndarray, shape (...), or a scalar for one pair

    Notes
    -----
    :math:`KL(p \| q) \ge 0`, with equality when :math:`p = q`.  A term with
    :math:`p_i = 0` adds nothing (:math:`0 \log 0 = 0`); a :math:`q_i = 0 < p_i`
    makes the divergence infinite.

    Examples
    --------
    >>> print(f"{kl_divergence(np.array([0.5, 0.5]), np.array([0.25, 0.75])):.4f}")
    0.1438
    >>> print(kl_divergence(np.array([1.0, 0.0]), np.array([0.0, 1.0])))
    inf
    """
    p, q = np.broadcast_arrays(p, q)
    support = p > 0
    terms = np.zeros(p.shape)
    with np.errstate(divide="ignore"):
        terms[support] = p[support] * (np.log(p[support]) - np.log(q[support]))
    return np.sum(terms, axis=-1)
