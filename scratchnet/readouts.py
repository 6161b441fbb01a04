r"""Readouts: how a trained network's outputs become probabilities.

A network is trained to minimise a loss, and the loss decides what its
outputs :math:`f(x)` estimate.  The *readout* turns them into the model's
:math:`q(c \mid x)`; it must be the one that matches the loss, or a network
that learned the posterior is read as one that did not:

* cross-entropy: the logits are :math:`\log P(c \mid x)` up to a constant
  per input; read through the softmax (:func:`cross_entropy_log_proba`);
* binary cross-entropy, one output :math:`s`: :math:`s` is the log-odds
  :math:`\operatorname{logit} P(1 \mid x)`; read through the sigmoid
  (:func:`binary_log_proba`);
* squared error on one-hot rows (on outputs that are probabilities, the
  Brier score): the outputs are :math:`P(c \mid x)` themselves; read as they
  are, clipped and renormalised (:func:`brier_proba`);
* hinge: the outputs rank the classes and say nothing of how probable they
  are; read as the decision (:func:`decision_log_proba`).

Each loss object of :mod:`scratchnet.objectives` carries its readout as
``loss.predict_log_proba`` and ``loss.predict_proba``; a model keeps the
loss it was trained with and reads its outputs through it.

**Options move the minimiser, invertibly.**  A loss's options re-weight what
it rewards, and the trained outputs estimate a distorted posterior
:math:`q` instead of :math:`p = P(c \mid x)`:

.. math::

    \begin{aligned}
    \text{pos\_weight } w&:\quad \operatorname{logit} q = \log w
        + \operatorname{logit} p, \\
    \text{weights } w_i&:\quad q_i \propto w_i\, p_i, \\
    \text{smoothing } \varepsilon&:\quad q = (1 - \varepsilon)\, p
        + \varepsilon / M .
    \end{aligned}

Each map is one-to-one (a shift of the log-odds or of the logits, an affine
map with slope :math:`1 - \varepsilon > 0`), so the readout inverts it and
still returns :math:`p`: :func:`binary_log_proba` subtracts :math:`\log w`,
:func:`cross_entropy_log_proba` subtracts :math:`\log w_i` and then maps
:math:`q \mapsto (q - \varepsilon/M) / (1 - \varepsilon)`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._validation import as_float_array, at_index, check_scalar
from .softmax import log_sigmoid, log_softmax

__all__ = ["MSE_FLOOR", "binary_log_proba", "brier_log_proba", "brier_proba",
           "cross_entropy_log_proba", "decision_log_proba"]

#: The smallest probability :func:`brier_proba` reads off an output, so that
#: log-probabilities and the expected KL stay finite where a squared-error
#: network's output dips to or below 0.
MSE_FLOOR = 1e-4


def _outputs(outputs: Any, name: str = "outputs") -> np.ndarray:
    """A model's outputs as a float array of shape (N, M), M >= 1."""
    outputs = as_float_array(outputs, name)
    if outputs.ndim != 2 or outputs.shape[1] == 0:
        raise ValueError(f"{name} must have shape (N, M), one row of M >= 1 outputs "
                         f"per input; got shape {outputs.shape}")
    return outputs


def _log_weights(weight: Any, name: str, size: int, dtype: Any) -> np.ndarray:
    """``log w`` of positive, finite weights: a scalar or shape (size,)."""
    w = as_float_array(weight, name, allow_inf=False).astype(np.float64)
    if w.shape not in ((), (size,)):
        raise ValueError(f"{name} must be a scalar or have shape ({size},); got shape "
                         f"{w.shape}")
    zero = ~(w > 0)
    if zero.any():
        raise ValueError(f"{name} must be positive for the readout: a weight 0 hides "
                         "its class from the loss, so nothing can read its probability "
                         f"back; got {w[zero].flat[0]:g}{at_index(zero)}")
    return np.log(w).astype(dtype)


def binary_log_proba(outputs: Any, pos_weight: Any = None) -> np.ndarray:
    r"""Both classes' log-probabilities from one logit :math:`s`.

    Parameters
    ----------
    outputs : array_like, shape (N, 1)
        The logit :math:`s` of class 1, trained with the binary cross-entropy.
    pos_weight : float, optional
        The loss's weight :math:`w > 0` of the positive term, undone.

    Returns
    -------
    ndarray, shape (N, 2)
        :math:`\log p(0 \mid x) = \log \sigma(-(s - \log w))` and
        :math:`\log p(1 \mid x) = \log \sigma(s - \log w)`, finite where a
        probability underflows.

    Notes
    -----
    With ``pos_weight`` :math:`w` the loss at :math:`x` is, in expectation,
    :math:`-w\, p \log \sigma(s) - (1 - p) \log \sigma(-s)`; its minimiser
    is :math:`\sigma(s) = q = w p / (w p + 1 - p)`, i.e.
    :math:`\operatorname{logit} q = \log w + \operatorname{logit} p`.  The
    readout subtracts :math:`\log w` from the logit and returns :math:`p`.

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> sn.readouts.binary_log_proba([[0.0], [40.0]]).round(2)
    array([[ -0.69,  -0.69],
           [-40.  ,  -0.  ]])
    >>> np.exp(sn.readouts.binary_log_proba([[np.log(9.0)]], pos_weight=9.0))
    array([[0.5, 0.5]])
    """
    s = _outputs(outputs)
    if s.shape[1] != 1:
        raise ValueError("the binary readout takes one output per input, class 1's "
                         f"logit: outputs of shape (N, 1); got shape {s.shape}")
    if pos_weight is not None:
        s = s - _log_weights(pos_weight, "pos_weight", 1, s.dtype)   # logit p
    return np.concatenate([log_sigmoid(-s), log_sigmoid(s)], axis=1)


def cross_entropy_log_proba(outputs: Any, weight: Any = None,
                            label_smoothing: float = 0.0) -> np.ndarray:
    r"""Log-probabilities from logits trained with (weighted, smoothed) cross-entropy.

    Parameters
    ----------
    outputs : array_like, shape (N, M)
        Logits :math:`f`.
    weight : array_like, shape (M,), optional
        The loss's class weights :math:`w_i > 0`, undone.
    label_smoothing : float in [0, 1), default 0.0
        The loss's :math:`\varepsilon`, undone.

    Returns
    -------
    ndarray, shape (N, M)
        :math:`\log p(c \mid x)`: ``log_softmax(f - log w)`` without smoothing;
        with it, the log of :math:`(r - \varepsilon/M) / (1 - \varepsilon)`,
        :math:`r = \operatorname{softmax}(f - \log w)`, clipped to
        [:data:`MSE_FLOOR`, 1] and renormalised.

    Notes
    -----
    With weights and smoothing the loss at :math:`x` is, in expectation over
    :math:`c \sim p`, :math:`-\sum_i w_i \bigl((1 - \varepsilon) p_i +
    \varepsilon / M\bigr) \log q_i` (over a denominator that does not
    depend on :math:`q`), minimised by Gibbs' inequality at

    .. math::

        q_i \propto w_i \bigl((1 - \varepsilon)\, p_i + \varepsilon / M\bigr).

    The readout undoes the two in reverse order: the weights first,
    :math:`r = \operatorname{softmax}(f - \log w) = (1 - \varepsilon) p +
    \varepsilon / M`, then the smoothing, :math:`p = (r - \varepsilon / M)
    / (1 - \varepsilon)`.  At the minimiser :math:`r \ge \varepsilon / M`;
    a network that overshoots gets the clip (its floor, as for
    :func:`brier_proba`, keeps the logs and the expected KL finite).
    :math:`\varepsilon = 1` (every target uniform) teaches nothing about
    :math:`p` and is refused.

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> f = np.log([[1.0, 4.0]])      # q = (0.2, 0.8)
    >>> np.exp(sn.readouts.cross_entropy_log_proba(f))
    array([[0.2, 0.8]])
    >>> np.exp(sn.readouts.cross_entropy_log_proba(f, weight=[1.0, 4.0]))
    array([[0.5, 0.5]])
    >>> smoothed = np.log([[0.3, 0.7]])   # 0.8 p + 0.1: p = (0.25, 0.75)
    >>> np.exp(sn.readouts.cross_entropy_log_proba(smoothed, label_smoothing=0.2))
    array([[0.25, 0.75]])
    """
    f = _outputs(outputs)
    eps = check_scalar(label_smoothing, "label_smoothing", low=0.0, high=1.0,
                       high_inclusive=False)
    if weight is not None:
        f = f - _log_weights(weight, "weight", f.shape[1], f.dtype)  # the weights
    log_r = log_softmax(f, axis=1)
    if eps == 0:
        return log_r
    m = f.shape[1]
    p = (np.exp(log_r) - eps / m) / (1.0 - eps)                    # the smoothing
    p = np.clip(p, MSE_FLOOR, 1.0)
    return np.log(p / p.sum(axis=1, keepdims=True))


def brier_proba(outputs: Any) -> np.ndarray:
    r"""The outputs themselves as probabilities, clipped and renormalised.

    Parameters
    ----------
    outputs : array_like, shape (N, M)
        Outputs trained with squared error towards one-hot rows; for M = 1,
        towards the 0/1 label of class 1.

    Returns
    -------
    ndarray, shape (N, M), or (N, 2) when M = 1
        :math:`q_c = \tilde o_c / \sum_j \tilde o_j` with :math:`\tilde o =
        \operatorname{clip}(o, \epsilon, 1)` and :math:`\epsilon` =
        :data:`MSE_FLOOR`; one output :math:`o` gives the columns
        :math:`(1 - p, p)` with :math:`p = \operatorname{clip}(o, \epsilon,
        1 - \epsilon)`.

    Notes
    -----
    Squared error on one-hot targets (on probabilities, the Brier score, a
    proper scoring rule) has the posterior itself as its population
    minimiser, so the outputs (not their softmax) estimate
    :math:`P(c \mid x)`.  Nothing keeps them in :math:`[0, 1]` or summing to
    1 during training, hence the clip and the renormalisation.

    Examples
    --------
    >>> import scratchnet as sn
    >>> sn.readouts.brier_proba([[0.7, 0.2], [1.2, -0.2]]).round(4)
    array([[0.7778, 0.2222],
           [0.9999, 0.0001]])
    >>> sn.readouts.brier_proba([[0.25]])
    array([[0.75, 0.25]])
    """
    o = _outputs(outputs)
    if o.shape[1] == 1:
        p = np.clip(o, MSE_FLOOR, 1 - MSE_FLOOR)
        return np.concatenate([1 - p, p], axis=1)
    o = np.clip(o, MSE_FLOOR, 1.0)
    return o / o.sum(axis=1, keepdims=True)


def brier_log_proba(outputs: Any) -> np.ndarray:
    r"""``log(brier_proba(outputs))``, finite: every entry is >= :math:`\epsilon / M`.

    Parameters
    ----------
    outputs : array_like, shape (N, M)

    Returns
    -------
    ndarray, shape (N, M), or (N, 2) when M = 1

    Examples
    --------
    >>> import scratchnet as sn
    >>> sn.readouts.brier_log_proba([[1.0, 0.0]]).round(3)
    array([[-0.  , -9.21]])
    """
    return np.log(brier_proba(outputs))


def decision_log_proba(outputs: Any) -> np.ndarray:
    r"""The decision as a distribution, in logs: 0 at the arg-max, -inf elsewhere.

    Parameters
    ----------
    outputs : array_like, shape (N, M)
        Outputs trained with the hinge loss.

    Returns
    -------
    ndarray, shape (N, M)
        Its ``exp`` is the one-hot row of :math:`\arg\max_c f_c` (the first,
        on ties).

    Notes
    -----
    The hinge loss's population minimiser carries the sign of
    :math:`P(c \mid x) - P(c' \mid x)` and nothing more, so the only honest
    readout is the decision itself.  The softmax of the outputs would look
    like a probability and is not one (:math:`\sigma(\pm 1)`, 0.73 or 0.27,
    wherever the margins have hardened); the expected KL from the posterior
    to this readout is infinite, which is the point.

    Examples
    --------
    >>> import scratchnet as sn
    >>> sn.readouts.decision_log_proba([[1.0, -1.0], [0.2, 0.3]])
    array([[  0., -inf],
           [-inf,   0.]])
    """
    f = _outputs(outputs)
    decision = np.arange(f.shape[1]) == f.argmax(axis=1)[:, None]
    return np.where(decision, 0.0, -np.inf).astype(f.dtype)
