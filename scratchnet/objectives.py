r"""Loss objects: a loss of the network's outputs beside its gradient, pluggable.

Training needs two things from a loss: its value on a batch and its gradient
with respect to the network's outputs, :math:`\partial L / \partial f`, which
``backward`` carries down the layers.  A *loss object* pairs a function of
:mod:`scratchnet.losses` (or :mod:`scratchnet.scoring`) with its ``_grad``;
models and :func:`scratchnet.train` accept one, or its name:

==========================  ==================  ===============================
name                        object              the trained outputs estimate
==========================  ==================  ===============================
``"cross_entropy"``         CrossEntropyLoss    :math:`P(c \mid x)`: softmax of
                                                the logits, options undone
``"binary_cross_entropy"``  BCEWithLogitsLoss   :math:`P(1 \mid x)`: sigmoid of
                                                one output, options undone
``"mse"``                   MSELoss             :math:`P(c \mid x)` as the
                                                outputs themselves (one-hot)
``"hinge"``                 MultiMarginLoss     only the most probable class
==========================  ==================  ===============================

The last column is each loss's *readout*, ``loss.predict_proba(outputs)``
(:mod:`scratchnet.readouts`): options distort what the outputs estimate,
invertibly, and the readout inverts them.  A model keeps its loss
(``model.loss``) and reads its outputs through it, so ``predict_proba``,
:func:`scratchnet.train`'s snapshots and ``task.expected_kl(model)`` all
measure the same :math:`q(c \mid x)`.

Cross-entropy, its binary case and squared error on one-hot targets are
*proper* scoring rules: their population minimiser is the Bayes posterior.
The hinge loss is not; its minimiser gets the arg-max right and nothing else
(see :mod:`scratchnet.scoring`).

To write your own, subclass :class:`Loss` and define ``loss_and_grad``
(and, if its minimiser is a probability, ``predict_log_proba(outputs)``).
The targets :func:`scratchnet.train` passes are class indices, so a squared
error compares the outputs with their one-hot rows:

>>> import numpy as np
>>> import scratchnet as sn
>>> class Squared(sn.objectives.Loss):
...     name = "squared"
...     def loss_and_grad(self, outputs, targets):
...         r = outputs - sn.one_hot(targets, outputs.shape[1])
...         return float(np.mean(r ** 2)), 2 * r / r.size
>>> model = sn.MLP([1, 16, 2], rng=0)
>>> history = sn.train(model, sn.tasks.separated(), steps=300, batch_size=64,
...                    lr=0.1, rng=1, loss=Squared())
>>> bool(history.losses[-50:].mean() < history.losses[:50].mean())
True
"""

from __future__ import annotations

from typing import Any, Tuple

import numpy as np

from ._torch_layouts import as_target_column
from ._validation import check_positive_int
from .functional import (
    binary_cross_entropy_with_logits,
    binary_cross_entropy_with_logits_grad,
    cross_entropy_and_grad,
)
from .readouts import (
    binary_log_proba,
    brier_log_proba,
    brier_proba,
    cross_entropy_log_proba,
    decision_log_proba,
)
from .scoring import mse_loss, mse_loss_grad, multi_margin_loss, multi_margin_loss_grad

__all__ = ["LOSSES", "BCEWithLogitsLoss", "CrossEntropyLoss", "Loss", "MSELoss",
           "MultiMarginLoss", "get_loss"]


class Loss:
    r"""The base of every loss object: ``loss_and_grad(outputs, targets)``.

    Attributes
    ----------
    name : str
        The name :func:`get_loss` knows it by.

    Notes
    -----
    A subclass defines :meth:`loss_and_grad`; calling the object gives the
    loss and :meth:`grad` the gradient.  Losses are means over the batch.

    Examples
    --------
    >>> import scratchnet as sn
    >>> loss = sn.objectives.CrossEntropyLoss()
    >>> print(f"{loss([[0.0, 0.0]], [1]):.4f}")
    0.6931
    """

    name = "loss"

    def loss_and_grad(self, outputs: Any, targets: Any) -> Tuple[float, np.ndarray]:
        r"""The mean loss and :math:`\partial L / \partial \text{outputs}`.

        Parameters
        ----------
        outputs : array_like, shape (N, M)
            The network's outputs for a batch.
        targets : array_like
            What they are compared with.

        Returns
        -------
        loss : float
        grad : ndarray, shape of ``outputs``

        Examples
        --------
        >>> import scratchnet as sn
        >>> sn.objectives.MSELoss().loss_and_grad([[1.0, 0.0]], [0])
        (0.0, array([[0., 0.]]))
        """
        raise NotImplementedError(f"{type(self).__name__} must define loss_and_grad")

    def predict_log_proba(self, outputs: Any) -> np.ndarray:
        r"""The readout in logs: :math:`\log q(c \mid x)` from the outputs.

        Parameters
        ----------
        outputs : array_like, shape (N, M)
            A network's outputs, trained with this loss.

        Returns
        -------
        ndarray, shape (N, M), or (N, 2) when M = 1

        Raises
        ------
        TypeError
            For a loss that does not say how its outputs become probabilities.

        Examples
        --------
        >>> import scratchnet as sn
        >>> sn.objectives.CrossEntropyLoss().predict_log_proba([[0.0, 0.0]])
        array([[-0.69314718, -0.69314718]])
        """
        raise TypeError(f"{type(self).__name__} does not define how its outputs become "
                        "probabilities: define predict_log_proba(outputs)")

    def predict_proba(self, outputs: Any) -> np.ndarray:
        r"""The readout: :math:`q(c \mid x)` from the outputs, rows summing to 1.

        Parameters
        ----------
        outputs : array_like, shape (N, M)
            A network's outputs, trained with this loss.

        Returns
        -------
        ndarray, shape (N, M), or (N, 2) when M = 1
            ``exp(predict_log_proba(outputs))``.

        Examples
        --------
        >>> import scratchnet as sn
        >>> sn.objectives.MSELoss().predict_proba([[0.7, 0.2]]).round(4)
        array([[0.7778, 0.2222]])
        """
        return np.exp(self.predict_log_proba(outputs))

    def __call__(self, outputs: Any, targets: Any) -> float:
        return self.loss_and_grad(outputs, targets)[0]

    def grad(self, outputs: Any, targets: Any) -> np.ndarray:
        r"""The gradient :math:`\partial L / \partial \text{outputs}` alone.

        Parameters
        ----------
        outputs, targets
            As in :meth:`loss_and_grad`.

        Returns
        -------
        ndarray, shape of ``outputs``

        Examples
        --------
        >>> import scratchnet as sn
        >>> sn.objectives.CrossEntropyLoss().grad([[0.0, 0.0]], [1])
        array([[ 0.5, -0.5]])
        """
        return self.loss_and_grad(outputs, targets)[1]

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class CrossEntropyLoss(Loss):
    r"""Mean cross-entropy of ``softmax(outputs)``: :func:`scratchnet.cross_entropy`.

    Parameters
    ----------
    weight : array_like, shape (M,), optional
        Class weights.
    label_smoothing : float, default 0.0
    ignore_index : int, default -100
        Targets equal to it are skipped (as :func:`scratchnet.cross_entropy`).

    Notes
    -----
    Trained to its minimum, ``softmax(outputs)`` is :math:`q_i \propto w_i
    ((1 - \varepsilon) p_i + \varepsilon / M)`, :math:`p = P(c \mid x)`
    (Gibbs' inequality); ``predict_proba`` undoes the weights, then the
    smoothing (:func:`~scratchnet.readouts.cross_entropy_log_proba`).

    Examples
    --------
    >>> import scratchnet as sn
    >>> loss = sn.objectives.CrossEntropyLoss()
    >>> print(f"{loss([[-1.0, -3, 4], [-3, 3, -1]], [0, 1]):.4f}")
    2.5141
    """

    name = "cross_entropy"

    def __init__(self, *, weight: Any = None, label_smoothing: float = 0.0,
                 ignore_index: int = -100) -> None:
        self.weight, self.label_smoothing = weight, label_smoothing
        self.ignore_index = ignore_index

    def loss_and_grad(self, outputs: Any, targets: Any) -> Tuple[float, np.ndarray]:
        """See :meth:`Loss.loss_and_grad`; ``targets`` are class indices (N,) or
        distributions (N, M).

        Parameters
        ----------
        outputs : array_like, shape (N, M)
            Logits.
        targets : array_like, shape (N,) of int or (N, M) of float

        Returns
        -------
        loss : float
        grad : ndarray, shape (N, M)

        Examples
        --------
        >>> import scratchnet as sn
        >>> sn.objectives.CrossEntropyLoss().loss_and_grad([[0.0, 0.0]], [0])[1]
        array([[-0.5,  0.5]])
        """
        loss, grad = cross_entropy_and_grad(outputs, targets, weight=self.weight,
                                            label_smoothing=self.label_smoothing,
                                            ignore_index=self.ignore_index)
        return float(loss), grad

    def predict_log_proba(self, outputs: Any) -> np.ndarray:
        r"""The readout, options undone: :math:`\log P(c \mid x)` from the logits.

        Parameters
        ----------
        outputs : array_like, shape (N, M)

        Returns
        -------
        ndarray, shape (N, M)

        Examples
        --------
        >>> import numpy as np
        >>> import scratchnet as sn     # weights (1, 4) learn q = (0.2, 0.8) at p = 0.5
        >>> loss = sn.objectives.CrossEntropyLoss(weight=[1, 4])
        >>> loss.predict_proba(np.log([[1, 4]]))
        array([[0.5, 0.5]])
        """
        return cross_entropy_log_proba(outputs, self.weight, self.label_smoothing)


class BCEWithLogitsLoss(Loss):
    r"""Binary cross-entropy of one output (``binary_cross_entropy_with_logits``).

    Parameters
    ----------
    pos_weight : float or array_like, optional
        Weight of the positive term.

    Notes
    -----
    ``outputs`` (N, 1) or (N,), ``targets`` (N,): labels 0/1 or probabilities
    of class 1.  Trained to its minimum, :math:`\sigma(s(x))` is :math:`q = w p
    / (w p + 1 - p)`, :math:`p = P(1 \mid x)` (under the sample's class
    frequencies), :math:`w` the ``pos_weight``; ``predict_proba`` undoes it,
    :math:`p = \sigma(s - \log w)` (:func:`~scratchnet.readouts.binary_log_proba`).

    Examples
    --------
    >>> import scratchnet as sn
    >>> loss = sn.objectives.BCEWithLogitsLoss()
    >>> print(f"{loss([[0.0], [0.0]], [0, 1]):.4f}")
    0.6931
    """

    name = "binary_cross_entropy"

    def __init__(self, *, pos_weight: Any = None) -> None:
        self.pos_weight = pos_weight

    def loss_and_grad(self, outputs: Any, targets: Any) -> Tuple[float, np.ndarray]:
        """See :meth:`Loss.loss_and_grad`.

        Parameters
        ----------
        outputs : array_like, shape (N, 1) or (N,)
            Logits of class 1.
        targets : array_like, shape (N,)
            0/1 labels or probabilities of class 1.

        Returns
        -------
        loss : float
        grad : ndarray, shape of ``outputs``

        Examples
        --------
        >>> import scratchnet as sn
        >>> sn.objectives.BCEWithLogitsLoss().loss_and_grad([[0.0]], [1])[1]
        array([[-0.5]])
        """
        outputs, targets = as_target_column(outputs, targets)
        kwargs = {"pos_weight": self.pos_weight}
        return (float(binary_cross_entropy_with_logits(outputs, targets, **kwargs)),
                binary_cross_entropy_with_logits_grad(outputs, targets, **kwargs))

    def predict_log_proba(self, outputs: Any) -> np.ndarray:
        r"""The readout, ``pos_weight`` undone: :math:`\log \sigma(\mp(s - \log w))`.

        Parameters
        ----------
        outputs : array_like, shape (N, 1)

        Returns
        -------
        ndarray, shape (N, 2)

        Examples
        --------
        >>> import numpy as np
        >>> import scratchnet as sn     # pos_weight 9 learns q = 0.9 at p = 1/2
        >>> sn.objectives.BCEWithLogitsLoss(pos_weight=9).predict_proba([[np.log(9)]])
        array([[0.5, 0.5]])
        """
        return binary_log_proba(outputs, self.pos_weight)


class MSELoss(Loss):
    r"""Squared error, against one-hot rows for class indices (``mse_loss``).

    Attributes
    ----------
    name : str
        ``"mse"``.

    Notes
    -----
    ``targets`` of shape (N,) beside outputs (N, M), M >= 2, are class
    indices, compared as one-hot rows; beside (N, 1) outputs they are real
    targets of that column.  The mean is over all N M entries, gradient
    :math:`2 (o - y) / (N M)`.  Trained to its minimum on one-hot targets, the
    outputs themselves estimate :math:`P(c \mid x)` (its population minimiser
    is the posterior; on probabilities it is the Brier score, a proper
    scoring rule), though nothing keeps them in [0, 1].

    Examples
    --------
    >>> import scratchnet as sn
    >>> loss = sn.objectives.MSELoss()
    >>> loss([[-1.0, 2, -1, -1], [1, 0, 1, 1]], [1, 1])   # "too right" = wrong
    1.0
    """

    name = "mse"

    def loss_and_grad(self, outputs: Any, targets: Any) -> Tuple[float, np.ndarray]:
        """See :meth:`Loss.loss_and_grad`.

        Parameters
        ----------
        outputs : array_like, shape (N, M)
        targets : array_like, class indices (N,) or real targets of outputs' shape

        Returns
        -------
        loss : float
        grad : ndarray, shape of ``outputs``

        Examples
        --------
        >>> import scratchnet as sn
        >>> sn.objectives.MSELoss().loss_and_grad([[0.5], [0.5]], [0, 1])
        (0.25, array([[ 0.5],
               [-0.5]]))
        """
        return float(mse_loss(outputs, targets)), mse_loss_grad(outputs, targets)

    #: The readout: the outputs themselves, clipped to [1e-4, 1], renormalised.
    predict_proba = staticmethod(brier_proba)
    predict_log_proba = staticmethod(brier_log_proba)


class MultiMarginLoss(Loss):
    r"""The multi-class hinge loss: :func:`scratchnet.multi_margin_loss`.

    Parameters
    ----------
    margin : float, default 1.0
    weight : array_like, shape (M,), optional
        Class weights.

    Notes
    -----
    Per sample, :math:`\frac1M \sum_{i \ne c} \max(0,\, \text{margin} - f_c + f_i)`,
    averaged over the batch (``torch.nn.MultiMarginLoss``).  Its population
    minimiser ranks the most probable class first and says nothing more:
    ``softmax(outputs)`` of a network trained with it is not calibrated.

    Examples
    --------
    >>> import scratchnet as sn
    >>> loss = sn.objectives.MultiMarginLoss()
    >>> loss([[3.0, 0.0], [0.0, 0.5]], [0, 0])   # (0 + 1.5 / 2) / 2
    0.375
    """

    name = "hinge"

    def __init__(self, *, margin: float = 1.0, weight: Any = None) -> None:
        self.margin, self.weight = margin, weight

    def loss_and_grad(self, outputs: Any, targets: Any) -> Tuple[float, np.ndarray]:
        """See :meth:`Loss.loss_and_grad`.

        Parameters
        ----------
        outputs : array_like, shape (N, M)
        targets : array_like of int, shape (N,)

        Returns
        -------
        loss : float
        grad : ndarray, shape (N, M)

        Examples
        --------
        >>> import scratchnet as sn
        >>> sn.objectives.MultiMarginLoss().loss_and_grad([[0.0, 0.5]], [0])[1]
        array([[-0.5,  0.5]])
        """
        kwargs = {"margin": self.margin, "weight": self.weight}
        return (float(multi_margin_loss(outputs, targets, **kwargs)),
                multi_margin_loss_grad(outputs, targets, **kwargs))

    #: The readout: the decision (one-hot arg-max), not a probability.
    predict_log_proba = staticmethod(decision_log_proba)


#: The loss objects by name.
LOSSES = {cls.name: cls for cls in (CrossEntropyLoss, BCEWithLogitsLoss, MSELoss,
                                    MultiMarginLoss)}


def get_loss(loss: Any = None, outputs: Any = None) -> Loss:
    """The loss object for ``loss``: a name, an object, or None for cross-entropy.

    Parameters
    ----------
    loss : str or Loss or None
        A key of :data:`LOSSES`, any object with ``loss_and_grad``, or None:
        ``"cross_entropy"``, or ``"binary_cross_entropy"`` when ``outputs``
        is 1.
    outputs : int, optional
        The model's number of outputs: one output (class 1's logit) refuses
        cross-entropy and the hinge loss, which need one per class.

    Returns
    -------
    Loss

    Examples
    --------
    >>> import scratchnet as sn
    >>> sn.objectives.get_loss("mse")
    MSELoss()
    >>> sn.objectives.get_loss(None), sn.objectives.get_loss(None, outputs=1)
    (CrossEntropyLoss(), BCEWithLogitsLoss())
    """
    if outputs is not None:
        check_positive_int(outputs, "outputs")
    if loss is None:
        loss = BCEWithLogitsLoss() if outputs == 1 else CrossEntropyLoss()
    elif isinstance(loss, str):
        if loss not in LOSSES:
            raise ValueError(f"loss must be one of {', '.join(map(repr, LOSSES))} or a "
                             f"loss object; got {loss!r}")
        loss = LOSSES[loss]()
    elif not callable(getattr(loss, "loss_and_grad", None)):
        raise TypeError("loss must be a name like 'cross_entropy' or an object with "
                        f".loss_and_grad(outputs, targets); got {type(loss).__name__}")
    if outputs == 1 and getattr(loss, "name", None) in ("cross_entropy", "hinge"):
        raise ValueError(f"loss={loss.name!r} needs one output per class, not 1 "
                         "(class 1's logit): use loss='binary_cross_entropy'")
    return loss
