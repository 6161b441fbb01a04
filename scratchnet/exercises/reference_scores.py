r"""The reference solutions of the score exercises: the chapters' code, in plain NumPy.

A hand-out is written from these functions, and the grader's sandbox is sent
them (carry-forward): plain NumPy, no scratchnet.  Each function has the
exercise's own signature and a docstring written for the student (only its
arguments, what the checks try, the edges of ``docs/conventions.md``, examples
that call the function itself); ``make`` keeps the docstring and replaces the
body with a stub, ``make --solutions`` keeps the body.

The bodies are not written here: each is its chapter function's body with the
argument checks taken out and the arguments the exercise leaves out set to
their defaults, copied by ``python -m scratchnet.exercises.derive``
(:mod:`scratchnet.exercises.derive`), with the chapters' private helpers they
call at the end of the file.  A formula is written once, in its chapter;
``tests/test_key_and_chapters.py`` checks that this file is what the
chapters give.  (Before the derivation this module was ``key_scores``; that
name still imports.)

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
    axis = -1  # not covered: the default
    keepdims = False  # not covered: the default
    x = np.asarray(x)
    # log sum e^x = m + log sum e^(x - m), m the maximum: no exponent above 0, and
    # the log of the shifted sum is log1p of all but its top term (SciPy gh-18295)
    m, log_sum = _max_and_log_sum(x, axis)
    out = m + log_sum
    return out if keepdims else np.squeeze(out, axis=axis)


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
    axis = -1  # not covered: the default
    x = np.asarray(x)
    # e^(x - m) / sum e^(x - m), m the largest logit: no exponent above 0, no overflow
    with np.errstate(over="ignore"):  # x - m below -1.8e308 is -inf: q = 0
        e = np.exp(x - np.max(x, axis=axis, keepdims=True, initial=-np.inf))
    return e / e.sum(axis=axis, keepdims=True)


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
    axis = -1  # not covered: the default
    x = np.asarray(x)
    # log q = x - logsumexp(x) = (x - m) - log sum e^(x - m): finite where q underflows
    m, log_sum = _max_and_log_sum(x, axis)
    with np.errstate(over="ignore"):  # x - m below -1.8e308 is -inf: log q = -inf
        return (x - m) - log_sum


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
    e = np.exp(-np.abs(x))  # at most 1, whatever the sign of x: no overflow
    return np.where(x >= 0, 1, e) / (1 + e)


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
    log_q = np.asarray(log_probs)
    t = np.asarray(targets)
    # -(1/N) sum_j log q_j: each term divided first, so losses of 1e308 cannot overflow
    return 0.0 - np.sum(log_q[np.arange(len(t)), t] / len(t))  # 0.0 -: never -0.0


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
    f = np.asarray(logits)
    t = np.asarray(targets)
    # L = -(1/N) sum_j log q(t_j | x_j), each term divided first: no overflow of the sum
    return 0.0 - np.sum(log_softmax(f)[np.arange(len(t)), t] / len(t))  # never -0.0


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
    f = np.asarray(logits)
    t = np.asarray(targets)
    q = softmax(f)
    return (q - np.eye(q.shape[1])[t]).astype(q.dtype) / len(t)


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
    base = None  # not covered: the default
    axis = -1  # not covered: the default
    p = np.asarray(p)
    log_base = 1.0 if base is None else np.log(base)
    log_p = np.log(p, out=np.zeros_like(p), where=p > 0)  # 0 log 0 = 0
    h = -np.sum(p * log_p, axis=axis) / log_base
    return h + 0.0


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
    log_q = None  # not covered: the default
    base = None  # not covered: the default
    axis = -1  # not covered: the default
    p = np.asarray(p)
    q = np.asarray(q)
    log_base = 1.0 if base is None else np.log(base)
    if log_q is None:
        log_q = np.log(q, out=np.full_like(q, -np.inf), where=q > 0)  # log 0 = -inf
    log_p = np.log(p, out=np.zeros_like(p), where=p > 0)  # 0 log 0 = 0
    kl = _kl_terms(p, log_p, log_q).sum(axis=axis)  # sum_i p_i log(p_i / q_i)
    return kl / log_base


# ---- The chapters' private helpers, copied by derive.py ----


def _kl_terms(p: np.ndarray, log_p: np.ndarray, log_q: np.ndarray) -> np.ndarray:
    r"""The terms :math:`p_i \log(p_i / q_i) - p_i + q_i` of the KL, each :math:`\ge 0`.

    They sum to :math:`\mathrm{KL}(p \| q)` (the :math:`q_i - p_i` sum to 0).
    With :math:`\delta = \log(q_i / p_i)` a term is :math:`p_i (e^\delta - 1 -
    \delta)`, and ``expm1(d) - d`` cannot round below 0: the KL is never
    negative, even for :math:`q` within rounding of :math:`p`.  For
    :math:`\delta > 1` the plain form neither cancels nor overflows.
    """
    q = np.exp(log_q)
    delta = np.zeros(np.broadcast_shapes(p.shape, log_q.shape), dtype=q.dtype)
    np.subtract(log_q, log_p, out=delta, where=p > 0)  # 0 where p_i = 0
    near = np.minimum(delta, 1.0)
    terms = np.where(delta > 1, q - p * (1 + delta), p * (np.expm1(near) - near))
    return np.where(p > 0, terms, q)


def _max_and_log_sum(x: np.ndarray, axis: int) -> tuple:
    r"""The largest score :math:`m` of each slice, and :math:`\log \sum_j e^{x_j - m}`.

    Both keepdims.  The largest terms are :math:`e^0 = 1` exactly, so the
    sum is 1 plus the others (and any ties), and its log is ``log1p`` of
    them: ``log(1 + 4.2e-18)`` rounds to 0, ``log1p(4.2e-18)`` does not
    (SciPy gh-18295).  For a slice of only ``-inf`` (or an empty one) :math:`m
    = -\infty`, for one holding ``+inf`` :math:`m = +\infty`, and
    ``m + log_sum`` is that :math:`m`: the ``inf - inf`` of their shift lands
    only on the top terms, which are left out.
    """
    m = np.max(x, axis=axis, keepdims=True, initial=-np.inf)  # -inf: an empty axis
    top = x == m  # the largest terms: e^(x - m) = 1 each
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        others = np.where(top, 0, np.exp(x - m)).sum(axis=axis, keepdims=True)
        ties = top.sum(axis=axis, keepdims=True, dtype=x.dtype) - 1
        return m, np.log1p(others + ties)
