r"""scikit-learn's conventions around the chapters: the fitted model and the network.

Everything the library teaches works on arrays of class indices
:math:`0 .. M-1`.  A practitioner holds a table ``X`` and labels ``y`` of any
kind (strings, booleans, floats, categories) and expects an *estimator*:
``fit(X, y)``, ``predict``, ``predict_proba``, ``score``, and a place in a
``Pipeline``, ``cross_val_score``, ``GridSearchCV`` or
``CalibratedClassifierCV``.  Two estimators wrap the chapters:

* :class:`GaussianClassifier` fits Gaussian classes by maximum likelihood
  (:func:`scratchnet.fitting.fit_gaussian_classes`) and answers with their
  exact Bayes posterior :math:`P(c \mid x)`
  (:class:`scratchnet.GaussianClasses`): quadratic discriminant analysis
  (``covariance="full"``), linear discriminant analysis (``"tied"``: one
  covariance shared by the classes) or Gaussian naive Bayes (``"diag"``).
* :class:`NetworkClassifier` trains the chapters' :class:`scratchnet.MLP`
  with :func:`scratchnet.train`: the network whose softmax outputs learn
  that posterior, with early stopping and temperature scaling on a held-out
  validation split.

Labels are encoded as ``classes_ = np.unique(y)``; ``predict`` maps back,
and the columns of ``predict_proba`` follow ``classes_``.  The scorers
:func:`scratchnet.metrics.nll_scorer` and :func:`~scratchnet.metrics.ece_scorer`
are importable from here too.  This module needs scikit-learn
(``pip install "scratchnet[data]"``); the rest of the library does not.
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

import numpy as np

from ._estimator_parts import (
    TolerancePlateau,
    check_loss_options,
    check_no_missing_labels,
    check_sample_weight,
    check_squares_fit,
    exp_with_warning,
    fit_gaussian_kind,
    label_text,
    sample_weights,
    seed_of,
    weighted_batches,
)
from ._validation import check_choice, check_positive_int, check_scalar
from .datasets import INSTALL_HINT, stratified_split
from .exceptions import ScratchnetWarning
from .fast.gaussian import chunked_log_posterior
from .fast.mlp import MLP
from .gaussian import GaussianClasses
from .metrics import ece_scorer as ece_scorer  # for GridSearchCV, beside the models
from .metrics import nll_scorer as nll_scorer
from .optim import SGD, Adam
from .softmax import log_softmax
from .temperature import choose_temperature
from .train import train

try:
    from sklearn.base import BaseEstimator, ClassifierMixin
    from sklearn.utils import metadata_routing
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import check_is_fitted, validate_data
except ImportError:  # pragma: no cover - the error names the extra
    raise ImportError("scratchnet.estimators needs scikit-learn: "
                      f"{INSTALL_HINT}") from None

__all__ = ["GaussianClassifier", "LabelledClassifier", "NetworkClassifier"]

COVARIANCES = ("full", "tied", "diag")


class LabelledClassifier(ClassifierMixin, BaseEstimator):
    """What both estimators share: labels in and out, fitted-state checks.

    A subclass defines ``fit`` (calling ``_encode``, which sets ``classes_``
    and checks ``X`` with scikit-learn's ``validate_data``) and
    ``predict_log_proba`` (calling ``_inputs``); ``predict_proba``,
    ``predict`` and ``score`` (scikit-learn's mean accuracy) follow.

    Attributes
    ----------
    classes_ : ndarray, shape (M,)
        ``np.unique(y)``: the labels, sorted; class :math:`c` of the
        chapters is ``classes_[c]``.

    Examples
    --------
    >>> from scratchnet.estimators import GaussianClassifier, LabelledClassifier
    >>> issubclass(GaussianClassifier, LabelledClassifier)
    True
    """

    # score's sample weights are not routed by meta-estimators: no
    # set_score_request method (its docstring is scikit-learn's, not ours)
    __metadata_request__score: ClassVar[dict] = {
        "sample_weight": metadata_routing.UNUSED}

    def _encode(self, X: Any, y: Any) -> tuple:
        """``X`` (n, D) float64 and ``y`` as indices into ``classes_`` (set here)."""
        check_no_missing_labels(y)
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_, codes = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(f"y must have at least two classes to classify; got one "
                             f"class, {label_text(self.classes_[0])}")
        check_squares_fit(X)
        return X, codes

    def _inputs(self, X: Any) -> np.ndarray:
        check_is_fitted(self)
        return validate_data(self, X, dtype=np.float64, reset=False)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities, columns in the order of ``classes_``.

        Parameters
        ----------
        X : array_like, shape (n, D)

        Returns
        -------
        ndarray, shape (n, M)
            ``exp(predict_log_proba(X))``.

        Examples
        --------
        >>> import numpy as np
        >>> from scratchnet.estimators import GaussianClassifier
        >>> X = np.array([[0.0], [0.5], [3.0], [3.5]])
        >>> GaussianClassifier().fit(X, ["a", "a", "b", "b"]).predict_proba([[1.75]])
        array([[0.5, 0.5]])

        Notes
        -----
        A probability below :math:`e^{-745}` underflows to exactly 0 in
        float64, although the model gives every class of ``classes_`` a
        positive one: for a class observed in training
        (``observed_classes_``), a :class:`~scratchnet.ScratchnetWarning`
        says so, since
        a log-loss computed from such an output is infinite (or, clipped as
        scikit-learn's ``log_loss`` clips it, far too small).  Use
        ``predict_log_proba``, or :func:`scratchnet.metrics.nll_scorer`,
        which is exact.
        """
        return exp_with_warning(self.predict_log_proba(X),
                                getattr(self, "observed_classes_", None))

    def predict(self, X: Any) -> np.ndarray:
        """The most probable class of each row, as a label of ``classes_``.

        Parameters
        ----------
        X : array_like, shape (n, D)

        Returns
        -------
        ndarray, shape (n,)

        Examples
        --------
        >>> import numpy as np
        >>> from scratchnet.estimators import GaussianClassifier
        >>> X = np.array([[0.0], [0.5], [3.0], [3.5]])
        >>> GaussianClassifier().fit(X, ["a", "a", "b", "b"]).predict([[0.1], [9.0]])
        array(['a', 'b'], dtype='<U1')
        """
        log_q = self.predict_log_proba(X)       # checks that it is fitted first
        return self.classes_[np.argmax(log_q, axis=1)]


class GaussianClassifier(LabelledClassifier):
    r"""Gaussian classes fitted by maximum likelihood; their exact Bayes posterior.

    Parameters
    ----------
    shrinkage : float in [0, 1], default 0.0
        :math:`\alpha`: each covariance :math:`(1 - \alpha) S + \alpha
        (\operatorname{tr} S / D) I`.  It depends on the features' scales:
        standardise them first (scikit-learn's ``StandardScaler``).
    covariance : {"full", "tied", "diag"}, default "full"
        One covariance per class (QDA), one shared (``"tied"``, LDA) or
        diagonal ones (naive Bayes); see
        :func:`scratchnet._estimator_parts.fit_gaussian_kind`.

    Attributes
    ----------
    classes_ : ndarray, shape (M,)
    model_ : GaussianClasses
        The fitted generative model on the encoded classes :math:`0 .. M-1`.
    means_, covariances_, priors_ : ndarray
        Its parameters: (M, D), (M, D, D), and the class frequencies (M,)
        (weighted by ``sample_weight``, if given).
    observed_classes_ : ndarray of bool, shape (M,)
        All True: every class has samples of positive weight.
    n_features_in_ : int
    feature_names_in_ : ndarray
        When ``X`` had column names.

    Notes
    -----
    With the class frequencies as priors and covariances divided by
    :math:`n_c`, ``predict_proba`` equals scikit-learn's
    ``QuadraticDiscriminantAnalysis(solver="eigen", shrinkage=alpha)``
    (``covariance="full"``) and
    ``LinearDiscriminantAnalysis(solver="lsqr", shrinkage=alpha)``
    (``"tied"``) to rounding.

    Examples
    --------
    >>> import numpy as np
    >>> from scratchnet.estimators import GaussianClassifier
    >>> X = np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 0.0], [4.0, 5.0], [5.0, 4.0],
    ...               [5.0, 5.0]])
    >>> clf = GaussianClassifier(shrinkage=0.1).fit(X, [False] * 3 + [True] * 3)
    >>> clf.classes_, clf.predict([[0.5, 0.5], [4.5, 4.5]])
    (array([False,  True]), array([False,  True]))
    >>> clf.score(X, [False] * 3 + [True] * 3)
    1.0
    """

    def __init__(self, shrinkage: float = 0.0, covariance: str = "full") -> None:
        self.shrinkage = shrinkage
        self.covariance = covariance

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> GaussianClassifier:
        """Fit the Gaussian classes to ``(X, y)``.

        Parameters
        ----------
        X : array_like, shape (n, D)
        y : array_like, shape (n,)
            Labels of any kind.
        sample_weight : array_like, shape (n,), optional
            Non-negative weights: the weighted maximum-likelihood fit
            (:func:`scratchnet._estimator_parts.fit_weighted_gaussians`),
            which for integer weights is the fit of the rows repeated.

        Returns
        -------
        GaussianClassifier
            ``self``, fitted.

        Examples
        --------
        >>> from scratchnet.estimators import GaussianClassifier
        >>> clf = GaussianClassifier().fit([[0.0], [1.0], [5.0], [6.0]], [1, 1, 2, 2])
        >>> clf.means_.ravel().tolist(), clf.priors_.tolist()
        ([0.5, 5.5], [0.5, 0.5])
        """
        alpha = check_scalar(self.shrinkage, "shrinkage", low=0.0, high=1.0)
        kind = check_choice(self.covariance, "covariance", COVARIANCES)
        X, codes = self._encode(X, y)
        weights = (None if sample_weight is None else
                   check_sample_weight(sample_weight, len(codes)))
        fitted = fit_gaussian_kind(X, codes, len(self.classes_), alpha, kind, weights)
        self.model_ = GaussianClasses(fitted.means, covariances=fitted.covariances,
                                      priors=fitted.priors)
        self.means_, self.covariances_, self.priors_ = fitted
        self.observed_classes_ = np.ones(len(self.classes_), dtype=bool)
        return self

    def predict_log_proba(self, X: Any) -> np.ndarray:
        r"""The exact log-posterior :math:`\log P(c \mid x)` of the fitted model.

        Parameters
        ----------
        X : array_like, shape (n, D)

        Returns
        -------
        ndarray, shape (n, M)
            Columns in the order of ``classes_``.

        Examples
        --------
        >>> from scratchnet.estimators import GaussianClassifier
        >>> clf = GaussianClassifier().fit([[0.0], [1.0], [5.0], [6.0]], [1, 1, 2, 2])
        >>> clf.predict_log_proba([[3.0]]).round(6)
        array([[-0.693147, -0.693147]])
        """
        x = self._inputs(X)
        if self.model_.covariances is None:                    # one feature
            return self.model_.log_posterior(x)
        return chunked_log_posterior(self.model_, x)           # its engineered twin


class NetworkClassifier(LabelledClassifier):
    r"""A multi-layer perceptron trained with cross-entropy: the chapters' MLP.

    Parameters
    ----------
    hidden : tuple of int, default (64,)
        Widths of the hidden layers.
    activation : {"relu", "tanh"}, default "relu"
    optimizer : {"adam", "sgd"}, default "adam"
    lr : float, default 1e-3
    batch_size : int, default 64
        At most the number of training samples (smaller data: all of them).
    max_epochs : int, default 200
        Passes over the training data at most (``MLPClassifier``'s
        ``max_iter``).
    tol : float, default 1e-4
        Stop when the epoch's mean training loss has not fallen by more than
        ``tol`` for ``n_iter_no_change`` epochs in a row (0: never).
    n_iter_no_change : int, default 10
    steps : int or None, default None
        A cap on the updates (mini-batches), whatever ``max_epochs`` says.
    alpha : float, default 0.0
        L2 penalty: the objective is the mean loss plus
        :math:`\frac{\alpha}{2} \lVert \theta \rVert^2` over every parameter
        (the optimiser's ``weight_decay``).
    class_weight : dict, "balanced" or None, default None
        Weights of the classes (labels as keys); ``"balanced"``:
        :math:`n / (M n_c)`.  Cross-entropy with class weights :math:`w_c`
        learns :math:`q_c \propto w_c P(c \mid x)`: balanced weights target
        equal priors.
    loss : str, default "cross_entropy"
        A name of :data:`scratchnet.objectives.LOSSES`
        (``"binary_cross_entropy"``: one output, two classes).
    early_stopping : bool, default False
        Hold out ``validation_fraction`` of the training data (stratified),
        stop after ``patience`` epochs without a lower validation NLL and
        keep the best parameters (:func:`scratchnet.train`).
    validation_fraction : float in (0, 1), default 0.1
    patience : int, default 20
        In epochs (measurements of the validation NLL).
    temperature : bool, default False
        Fit a temperature on the validation split and divide the
        log-probabilities by it where
        :func:`scratchnet.temperature.choose_temperature` applies it; else
        it stays 1, with a :class:`~scratchnet.ScratchnetWarning` saying why.
    random_state : int, RandomState or None, default None
        The initial weights, the split and the batches.

    Attributes
    ----------
    classes_ : ndarray, shape (M,)
    network_ : scratchnet.fast.MLP
        The chapters' :class:`scratchnet.MLP` on flat parameters.
    history_ : History
        The training run (with the validation NLL when there was a split).
    n_epochs_ : float
        Passes over the training data made.
    temperature_ : float
        1.0 unless ``temperature`` applied one.
    observed_classes_ : ndarray of bool, shape (M,)
        The classes with a positive weight among the training rows (a class
        weighted 0 is not observed: its probability may well be 0, and
        ``predict_proba`` does not warn about it).
    n_features_in_ : int
    feature_names_in_ : ndarray
        When ``X`` had column names.

    Notes
    -----
    Weights (``sample_weight`` times ``class_weight``) are the probabilities
    with which mini-batches draw their samples
    (:func:`scratchnet._estimator_parts.weighted_batches`): the expected
    gradient is that of :math:`\sum_j w_j \ell_j / \sum_j w_j`; early
    stopping reads validation rows drawn the same way.

    Examples
    --------
    >>> import numpy as np
    >>> from scratchnet.estimators import NetworkClassifier
    >>> X = np.array([[0.0], [0.2], [0.4], [2.6], [2.8], [3.0]])
    >>> clf = NetworkClassifier(max_epochs=300, lr=1e-2, random_state=0)
    >>> clf.fit(X, ["no", "no", "no", "yes", "yes", "yes"]).predict([[0.1], [2.9]])
    array(['no', 'yes'], dtype='<U3')
    """

    def __init__(self, hidden: Any = (64,), activation: str = "relu",
                 optimizer: str = "adam", lr: float = 1e-3, batch_size: int = 64,
                 max_epochs: int = 200, tol: float = 1e-4,
                 n_iter_no_change: int = 10, steps: Any = None, alpha: float = 0.0,
                 class_weight: Any = None, loss: str = "cross_entropy",
                 early_stopping: bool = False, validation_fraction: float = 0.1,
                 patience: int = 20, temperature: bool = False,
                 random_state: Any = None) -> None:
        self.hidden = hidden
        self.activation = activation
        self.optimizer = optimizer
        self.lr = lr
        self.batch_size = batch_size
        self.max_epochs = max_epochs
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.steps = steps
        self.alpha = alpha
        self.class_weight = class_weight
        self.loss = loss
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.patience = patience
        self.temperature = temperature
        self.random_state = random_state

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> NetworkClassifier:
        """Train the network on ``(X, y)`` (less a validation split, if any).

        Parameters
        ----------
        X : array_like, shape (n, D)
        y : array_like, shape (n,)
            Labels of any kind.
        sample_weight : array_like, shape (n,), optional
            Non-negative weights of the samples (see Notes of the class).

        Returns
        -------
        NetworkClassifier
            ``self``, fitted.

        Examples
        --------
        >>> import numpy as np
        >>> from scratchnet.estimators import NetworkClassifier
        >>> X = np.array([[0.0], [0.2], [0.4], [0.6], [2.4], [2.6], [2.8], [3.0]])
        >>> clf = NetworkClassifier(max_epochs=50, early_stopping=True,
        ...                         validation_fraction=0.25, random_state=0)
        >>> clf.fit(X, [0, 0, 0, 0, 1, 1, 1, 1]).history_.validation_steps[:3]
        array([1, 2, 3])
        """
        hidden = (self.hidden,) if isinstance(self.hidden, int) else tuple(self.hidden)
        X, codes = self._encode(X, y)
        weights = sample_weights(sample_weight, self.class_weight, self.classes_,
                                 codes)
        check_loss_options(self.loss, len(self.classes_),
                           self.early_stopping or self.temperature)
        seed = seed_of(self.random_state)
        outputs = 1 if self.loss == "binary_cross_entropy" else len(self.classes_)
        self.network_ = MLP([X.shape[1], *hidden, outputs], activation=self.activation,
                            rng=np.random.default_rng([seed, 0]), loss=self.loss)
        train_rows, validation = self._split(codes, seed)
        self.observed_classes_ = np.bincount(
            codes[train_rows], minlength=len(self.classes_),
            weights=None if weights is None else weights[train_rows]) > 0
        batch = min(check_positive_int(self.batch_size, "batch_size"), len(train_rows))
        epoch = -(-len(train_rows) // batch)
        steps = check_positive_int(self.max_epochs, "max_epochs") * epoch
        if self.steps is not None:
            steps = min(steps, check_positive_int(self.steps, "steps"))
        data = weighted_batches(X[train_rows], codes[train_rows],
                                None if weights is None else weights[train_rows])
        plateau = TolerancePlateau(
            epoch, check_scalar(self.tol, "tol", low=0.0, high=np.inf),
            check_positive_int(self.n_iter_no_change, "n_iter_no_change"))
        held = validation
        if validation is not None and weights is not None:   # the weighted NLL,
            held = np.random.default_rng([seed, 3]).choice(  # in expectation
                validation, size=len(validation),
                p=weights[validation] / weights[validation].sum())
        self.history_ = train(
            self.network_, data, steps=steps, batch_size=batch,
            optimizer=self._optimizer(), rng=np.random.default_rng([seed, 1]),
            validation=None if validation is None else (X[held], codes[held]),
            patience=self.patience if self.early_stopping else None,
            validation_every=epoch, callback=None if self.early_stopping else plateau)
        self.n_epochs_ = len(self.history_.losses) / epoch
        self.temperature_ = 1.0
        if self.temperature:
            self.temperature_ = self._temperature(X[validation], codes[validation])
        return self

    def _optimizer(self) -> Any:
        """Adam or SGD on the network's parameters, ``alpha`` as weight decay."""
        kind = check_choice(self.optimizer, "optimizer", ("adam", "sgd"))
        lr = check_scalar(self.lr, "lr", low=0.0, low_inclusive=False, high=np.inf,
                          high_inclusive=False)
        alpha = check_scalar(self.alpha, "alpha", low=0.0, high=np.inf,
                             high_inclusive=False)
        rule = Adam if kind == "adam" else SGD
        return rule(self.network_.params, lr, weight_decay=alpha)

    def _temperature(self, x: np.ndarray, codes: np.ndarray) -> float:
        """The validation split's temperature where it may be applied, else 1."""
        choice = choose_temperature(self.network_.predict_log_proba(x), codes)
        if choice.kept:
            warnings.warn(f"temperature_ is kept at 1: {choice.kept}",
                          ScratchnetWarning, stacklevel=3)
        return choice.temperature

    def _split(self, codes: np.ndarray, seed: int) -> tuple:
        """Training rows and validation rows (None without early stopping or T)."""
        if not (self.early_stopping or self.temperature):
            return np.arange(len(codes)), None
        share = check_scalar(self.validation_fraction, "validation_fraction", low=0.0,
                             high=1.0, low_inclusive=False, high_inclusive=False)
        rows, held = stratified_split(codes, (1.0 - share, share),
                                      rng=np.random.default_rng([seed, 2]))
        if len(rows) == 0 or len(held) == 0:
            raise ValueError(f"validation_fraction={share} of {len(codes)} samples "
                             "leaves one side empty; use more data or another share")
        return rows, held

    def predict_log_proba(self, X: Any) -> np.ndarray:
        r"""The network's :math:`\log q(c \mid x)`, scaled by ``temperature_``.

        Parameters
        ----------
        X : array_like, shape (n, D)

        Returns
        -------
        ndarray, shape (n, M)
            ``log_softmax(network_.predict_log_proba(X) / temperature_)``;
            columns in the order of ``classes_``.

        Examples
        --------
        >>> from scratchnet.estimators import NetworkClassifier
        >>> clf = NetworkClassifier(max_epochs=5, random_state=0)
        >>> clf.fit([[0.0], [1.0]], ["a", "b"]).predict_log_proba([[0.5]]).shape
        (1, 2)
        """
        x = self._inputs(X)
        log_q = self.network_.predict_log_proba(x)
        if self.temperature_ == 1.0:
            return log_q
        return log_softmax(log_q / self.temperature_, axis=1)
