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

Labels are encoded as ``classes_ = np.unique(y)`` and a sample's label
becomes its index there; ``predict`` maps back, and the columns of
``predict_proba`` follow ``classes_``.

Shrinkage toward :math:`(\operatorname{tr} S / D)\, I` mixes the features'
variances, so it depends on their scales: standardise first
(``make_pipeline(StandardScaler(), GaussianClassifier(shrinkage=0.1))``).
This module needs scikit-learn (``pip install "scratchnet[data]"``); the
rest of the library does not import it.
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

import numpy as np

from ._mixture import class_sums
from ._validation import check_choice, check_positive_int, check_scalar
from .datasets import INSTALL_HINT, stratified_split
from .fast.gaussian import chunked_log_posterior
from .fast.mlp import MLP
from .fitting import GaussianParameters, fit_gaussian_classes
from .gaussian import GaussianClasses
from .metrics import expected_calibration_error
from .optim import SGD, Adam
from .softmax import log_softmax
from .temperature import ScratchnetWarning, choose_temperature
from .train import train

try:
    from sklearn.base import BaseEstimator, ClassifierMixin
    from sklearn.utils import check_random_state, metadata_routing
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import (
        _check_sample_weight,
        check_is_fitted,
        validate_data,
    )
except ImportError:  # pragma: no cover - the error names the extra
    raise ImportError("scratchnet.estimators needs scikit-learn: "
                      f"{INSTALL_HINT}") from None

__all__ = ["GaussianClassifier", "LabelledClassifier", "NetworkClassifier",
           "ece_scorer", "fit_gaussian_kind", "nll_scorer"]

COVARIANCES = ("full", "tied", "diag")


def fit_gaussian_kind(x: np.ndarray, targets: np.ndarray, num_classes: int,
                      shrinkage: float, covariance: str) -> GaussianParameters:
    r"""Gaussian classes with full, shared (tied) or diagonal covariances.

    Parameters
    ----------
    x : ndarray, shape (n, D)
    targets : ndarray of int, shape (n,)
        Classes in ``[0, num_classes)``, each present.
    num_classes : int
    shrinkage : float in [0, 1]
        :math:`\alpha` of :func:`scratchnet.fitting.fit_gaussian_classes`.
    covariance : {"full", "tied", "diag"}

    Returns
    -------
    GaussianParameters
        Priors :math:`n_c / n` and means :math:`\mu_c` in every case, and

        * ``"full"``: :math:`\Sigma_c = (1-\alpha) S_c + \alpha
          (\operatorname{tr} S_c / D) I` (quadratic discriminant analysis);
        * ``"tied"``: one :math:`\Sigma = (1-\alpha) S + \alpha
          (\operatorname{tr} S / D) I` for all classes, with the pooled
          :math:`S = \sum_c \frac{n_c}{n} S_c`, the covariance of the
          residuals :math:`x_j - \mu_{c_j}` (linear discriminant analysis);
        * ``"diag"``: the diagonal of the ``"full"`` covariances (Gaussian
          naive Bayes: the features independent within a class).

    Examples
    --------
    >>> from scratchnet.estimators import fit_gaussian_kind
    >>> x = np.array([[0.0, 0.0], [2.0, 2.0], [4.0, 0.0], [6.0, 6.0]])
    >>> fit_gaussian_kind(x, np.array([0, 0, 1, 1]), 2, 0.0, "tied").covariances[0]
    array([[2., 2.],
           [2., 4.]])
    """
    if covariance == "full":
        return fit_gaussian_classes(x, targets, shrinkage=shrinkage,
                                    num_classes=num_classes)
    counts = np.bincount(targets, minlength=num_classes).astype(np.float64)  # n_c
    means = class_sums(x, targets, counts) / counts[:, None]      # mu_c
    residuals = x - means[targets]                                # x_j - mu_{c_j}
    if covariance == "tied":
        try:
            pooled = fit_gaussian_classes(residuals, np.zeros(len(x), dtype=np.int64),
                                          shrinkage=shrinkage).covariances[0]
        except ValueError:
            raise ValueError("the shared covariance of covariance='tied' (the "
                             "within-class scatter pooled over the classes) is not "
                             "positive definite: the samples lie in a subspace (a "
                             "feature constant within every class, or one that is a "
                             "combination of others); use shrinkage > 0 or drop "
                             "those features") from None
        covariances = np.broadcast_to(pooled, (num_classes, *pooled.shape))
    else:
        variances = class_sums(residuals**2, targets, counts) / counts[:, None]
        variances = ((1.0 - shrinkage) * variances
                     + shrinkage * variances.mean(axis=1, keepdims=True))
        if not np.all(variances > 0):
            c, d = np.argwhere(~(variances > 0))[0]
            raise ValueError(f"feature {d} is constant within class {c}: its variance "
                             "is 0; use shrinkage > 0")
        covariances = variances[:, :, None] * np.eye(x.shape[1])
    return GaussianParameters(means, np.array(covariances), counts / len(x))


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

    # fit takes no sample weights, and score's are not routed by meta-estimators:
    # no set_score_request method (its docstring is scikit-learn's, not ours)
    __metadata_request__score: ClassVar[dict] = {
        "sample_weight": metadata_routing.UNUSED}

    def _encode(self, X: Any, y: Any) -> tuple:
        """``X`` (n, D) float64 and ``y`` as indices into ``classes_`` (set here)."""
        labels = np.asarray(y, dtype=object) if y is not None else None
        if labels is not None and labels.ndim == 1:
            missing = np.array([v is None or v is np.nan for v in labels])
            if missing.any():
                raise ValueError(f"y has a missing label (None or NaN) at index "
                                 f"{int(np.argmax(missing))} ({int(missing.sum())} in "
                                 "all); drop those rows or fill in their class")
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_, codes = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(f"y must have at least two classes to classify; got one "
                             f"class, {_shown(self.classes_[0])}")
        with np.errstate(over="ignore"):
            largest = float(np.abs(X).max(initial=0.0))
            overflows = not np.isfinite(largest * largest * X.shape[0])
        if overflows:
            raise ValueError(f"X has a value of magnitude {largest:.3g}: its square "
                             "overflows float64 (above 1.8e308), so no variance or "
                             "gradient can be computed; rescale the features first "
                             "(StandardScaler, or divide by a power of ten)")
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
        >>> from scratchnet.estimators import GaussianClassifier
        >>> X = np.array([[0.0], [0.5], [3.0], [3.5]])
        >>> GaussianClassifier().fit(X, ["a", "a", "b", "b"]).predict_proba([[1.75]])
        array([[0.5, 0.5]])

        Notes
        -----
        A probability below :math:`e^{-745}` underflows to exactly 0 in
        float64, although the model gives every class of ``classes_`` a
        positive one: a :class:`~scratchnet.ScratchnetWarning` says so, since
        a log-loss computed from such an output is infinite (or, clipped as
        scikit-learn's ``log_loss`` clips it, far too small).  Use
        :meth:`predict_log_proba`, or :func:`nll_scorer`, which is exact.
        """
        log_q = self.predict_log_proba(X)
        q = np.exp(log_q)
        zero = (q == 0) & (log_q > -np.inf)
        if zero.any():
            rows = np.flatnonzero(zero.any(axis=1))
            warnings.warn(f"predict_proba underflows to exactly 0 in {len(rows)} "
                          f"row(s) (first: row {rows[0]}, whose smallest log-"
                          f"probability is {log_q[rows[0]].min():.4g}); a log-loss "
                          "of these probabilities is infinite, or wrong where it is "
                          "clipped: use predict_log_proba or scratchnet.estimators."
                          "nll_scorer", ScratchnetWarning, stacklevel=2)
        return q

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
        diagonal ones (naive Bayes); see :func:`fit_gaussian_kind`.

    Attributes
    ----------
    classes_ : ndarray, shape (M,)
    model_ : GaussianClasses
        The fitted generative model on the encoded classes :math:`0 .. M-1`.
    means_, covariances_, priors_ : ndarray
        Its parameters: (M, D), (M, D, D), and the class frequencies (M,).
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

    def fit(self, X: Any, y: Any) -> GaussianClassifier:
        """Fit the Gaussian classes to ``(X, y)``.

        Parameters
        ----------
        X : array_like, shape (n, D)
        y : array_like, shape (n,)
            Labels of any kind.

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
        fitted = fit_gaussian_kind(X, codes, len(self.classes_), alpha, kind)
        self.model_ = GaussianClasses(fitted.means, covariances=fitted.covariances,
                                      priors=fitted.priors)
        self.means_, self.covariances_, self.priors_ = fitted
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
        Passes over the training data at most (scikit-learn's ``max_iter``
        of ``MLPClassifier``).
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
        A name of :data:`scratchnet.objectives.LOSSES`; the network reads its
        outputs through it (``"binary_cross_entropy"``: one output, two
        classes).
    early_stopping : bool, default False
        Hold out ``validation_fraction`` of the training data (stratified),
        stop after ``patience`` epochs without a lower validation NLL and
        keep the best parameters (:func:`scratchnet.train`).
    validation_fraction : float in (0, 1), default 0.1
    patience : int, default 20
        In epochs (measurements of the validation NLL).
    temperature : bool, default False
        Fit a temperature on the validation split and divide the
        log-probabilities by it, where
        :func:`scratchnet.temperature.choose_temperature` applies it: not at
        a bound of the search (a validation split the network separates
        perfectly drives :math:`T \to 0`), nor where the split cannot tell
        it from 1; then the temperature stays 1 with a
        :class:`~scratchnet.ScratchnetWarning` that says why.
    random_state : int, RandomState or None, default None
        The initial weights, the split and the batches.

    Attributes
    ----------
    classes_ : ndarray, shape (M,)
    network_ : scratchnet.fast.MLP
        The chapters' :class:`scratchnet.MLP` on the engine's flat
        parameters (the same mathematics, pinned by tests).
    history_ : History
        The training run (with the validation NLL when there was a split).
    n_epochs_ : float
        Passes over the training data made.
    temperature_ : float
        1.0 unless ``temperature`` applied one.
    n_features_in_ : int
    feature_names_in_ : ndarray
        When ``X`` had column names.

    Notes
    -----
    ``sample_weight`` and ``class_weight`` enter as the probabilities with
    which each mini-batch draws its samples (with replacement): the expected
    gradient of a step is that of the weighted loss
    :math:`\sum_j w_j \ell_j / \sum_j w_j`, and early stopping reads the
    NLL of the validation rows drawn the same way.  Without weights, batches
    are shuffled epochs.

    Examples
    --------
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
        >>> from scratchnet.estimators import NetworkClassifier
        >>> X = np.array([[0.0], [0.2], [0.4], [0.6], [2.4], [2.6], [2.8], [3.0]])
        >>> clf = NetworkClassifier(max_epochs=50, early_stopping=True,
        ...                         validation_fraction=0.25, random_state=0)
        >>> clf.fit(X, [0, 0, 0, 0, 1, 1, 1, 1]).history_.validation_steps[:3]
        array([1, 2, 3])
        """
        hidden = (self.hidden,) if isinstance(self.hidden, int) else tuple(self.hidden)
        X, codes = self._encode(X, y)
        weights = self._weights(X, codes, sample_weight)
        self._check_loss()
        seed = _seed(self.random_state)
        outputs = 1 if self.loss == "binary_cross_entropy" else len(self.classes_)
        self.network_ = MLP([X.shape[1], *hidden, outputs], activation=self.activation,
                            rng=np.random.default_rng([seed, 0]), loss=self.loss)
        train_rows, validation = self._split(codes, seed)
        batch = min(check_positive_int(self.batch_size, "batch_size"), len(train_rows))
        epoch = -(-len(train_rows) // batch)
        steps = check_positive_int(self.max_epochs, "max_epochs") * epoch
        if self.steps is not None:
            steps = min(steps, check_positive_int(self.steps, "steps"))
        data = _weighted_batches(X[train_rows], codes[train_rows],
                                 None if weights is None else weights[train_rows])
        plateau = _Plateau(epoch, check_scalar(self.tol, "tol", low=0.0, high=np.inf),
                           check_positive_int(self.n_iter_no_change,
                                              "n_iter_no_change"))
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

    def _check_loss(self) -> None:
        """The loss fits the classes, and gives probabilities where they are read."""
        m = len(self.classes_)
        if self.loss == "binary_cross_entropy" and m != 2:
            raise ValueError(f"loss='binary_cross_entropy' has one output for two "
                             f"classes, and y has {m}: use loss='cross_entropy'")
        if self.loss == "hinge" and (self.early_stopping or self.temperature):
            raise ValueError("loss='hinge' is not a proper loss: its outputs are "
                             "decisions, not probabilities, so the validation NLL "
                             "that early_stopping and temperature read is infinite; "
                             "use loss='cross_entropy', or neither option")

    def _optimizer(self) -> Any:
        """Adam or SGD on the network's parameters, ``alpha`` as weight decay."""
        kind = check_choice(self.optimizer, "optimizer", ("adam", "sgd"))
        lr = check_scalar(self.lr, "lr", low=0.0, low_inclusive=False, high=np.inf,
                          high_inclusive=False)
        alpha = check_scalar(self.alpha, "alpha", low=0.0, high=np.inf,
                             high_inclusive=False)
        rule = Adam if kind == "adam" else SGD
        return rule(self.network_.params, lr, weight_decay=alpha)

    def _weights(self, X: np.ndarray, codes: np.ndarray, sample_weight: Any) -> Any:
        """Each sample's weight (``sample_weight`` times ``class_weight``), or None."""
        if sample_weight is None and self.class_weight is None:
            return None
        w = _check_sample_weight(sample_weight, X, dtype=np.float64,
                                 ensure_non_negative=True)
        if self.class_weight is not None:
            w = w * self._class_weights(codes)[codes]
        if not w.sum() > 0:
            raise ValueError("sample_weight (times class_weight) must have a positive "
                             "sum; got all zeros")
        return w

    def _class_weights(self, codes: np.ndarray) -> np.ndarray:
        """``class_weight`` as an array over ``classes_``."""
        m = len(self.classes_)
        if isinstance(self.class_weight, str):
            check_choice(self.class_weight, "class_weight", ("balanced",))
            counts = np.bincount(codes, minlength=m)
            return len(codes) / (m * counts)
        if not isinstance(self.class_weight, dict):
            raise TypeError(f"class_weight must be a dict of label -> weight, "
                            f"'balanced' or None; got {self.class_weight!r}")
        known = {_plain(c) for c in self.classes_}
        unknown = [k for k in self.class_weight if _plain(k) not in known]
        if unknown:
            raise ValueError(f"class_weight has labels that are not classes of y: "
                             f"{', '.join(map(repr, unknown))}; the classes are "
                             f"{', '.join(_shown(c) for c in self.classes_)}")
        weights = {_plain(k): v for k, v in self.class_weight.items()}
        out = np.array([check_scalar(weights.get(_plain(c), 1.0),
                                     f"class_weight[{_shown(c)}]", low=0.0,
                                     high=np.inf, high_inclusive=False)
                        for c in self.classes_])
        return out

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


def _seed(random_state: Any) -> int:
    """An int seed: the integer given (NumPy's too), or one drawn from the state."""
    if isinstance(random_state, (int, np.integer)) and not isinstance(
            random_state, (bool, np.bool_)):
        return int(random_state)
    return int(check_random_state(random_state).randint(2**31 - 1))


def _plain(label: Any) -> Any:
    """A label as a plain Python value (``np.str_('a')`` -> ``'a'``)."""
    return label.item() if isinstance(label, np.generic) else label


def _shown(label: Any) -> str:
    """A label for a message, without NumPy's reprs (``'a'``, ``0``)."""
    return repr(_plain(label))


def _weighted_batches(x: np.ndarray, codes: np.ndarray, weights: Any) -> Any:
    """``(x, codes)`` (shuffled epochs), or a sampler drawing rows by weight."""
    if weights is None:
        return (x, codes)
    p = weights / weights.sum()

    def sampler(n: int, rng: np.random.Generator) -> tuple:
        rows = rng.choice(len(p), size=n, p=p)
        return x[rows], codes[rows]

    return sampler


class _Plateau:
    """A ``train`` callback: stop when the epoch's loss stops falling by ``tol``."""

    def __init__(self, epoch: int, tol: float, patience: int) -> None:
        self.epoch, self.tol, self.patience = epoch, tol, patience
        self.total, self.best, self.stale = 0.0, np.inf, 0

    def __call__(self, step: int, loss: float, model: Any) -> bool:
        self.total += loss
        if step % self.epoch:
            return True
        mean, self.total = self.total / self.epoch, 0.0
        if self.tol == 0 or mean < self.best - self.tol:
            self.stale = 0
        else:
            self.stale += 1
        self.best = min(self.best, mean)
        return self.stale < self.patience


def nll_scorer(estimator: Any, X: Any, y: Any) -> float:
    r"""Minus the exact mean negative log-likelihood: a scorer for ``GridSearchCV``.

    ``scoring=nll_scorer`` in any scikit-learn model selection tool (greater
    is better, so it returns :math:`-\mathrm{NLL}`).  Unlike scikit-learn's
    ``"neg_log_loss"``, which clips probabilities to :math:`[\epsilon, 1 -
    \epsilon]`, it reads the estimator's ``predict_log_proba`` (or the log of
    ``predict_proba``): a class given probability 0 costs :math:`\infty`.

    Parameters
    ----------
    estimator : fitted classifier
        With ``classes_`` and ``predict_log_proba`` or ``predict_proba``.
    X : array_like, shape (n, D)
    y : array_like, shape (n,)
        Labels of any kind, each in ``estimator.classes_``.

    Returns
    -------
    float
        :math:`\frac1n \sum_j \log q(y_j \mid x_j)`, in nats (at most 0).

    Examples
    --------
    >>> from scratchnet.estimators import GaussianClassifier, nll_scorer
    >>> X = np.array([[0.0], [0.5], [3.0], [3.5]])
    >>> clf = GaussianClassifier().fit(X, ["a", "a", "b", "b"])
    >>> print(f"{nll_scorer(clf, [[1.75]], ['a']):.4f}")    # log 1/2
    -0.6931
    """
    log_q, codes = _log_proba_and_codes(estimator, X, y)
    return float(log_q[np.arange(len(codes)), codes].mean())


def ece_scorer(estimator: Any, X: Any, y: Any) -> float:
    r"""Minus the expected calibration error on labels: a scorer for ``GridSearchCV``.

    :func:`scratchnet.metrics.expected_calibration_error` (10 equal-width
    bins of the top-class confidence) of ``predict_proba(X)`` against the
    labels ``y`` of any kind, negated so that greater is better.

    Parameters
    ----------
    estimator : fitted classifier
    X : array_like, shape (n, D)
    y : array_like, shape (n,)

    Returns
    -------
    float
        :math:`-\mathrm{ECE}`, in :math:`[-1, 0]`.

    Examples
    --------
    >>> from scratchnet.estimators import GaussianClassifier, ece_scorer
    >>> X = np.array([[0.0], [0.5], [3.0], [3.5]])
    >>> clf = GaussianClassifier().fit(X, ["a", "a", "b", "b"])
    >>> print(f"{ece_scorer(clf, [[1.75], [1.75]], ['a', 'b']):.4f}")  # 1/2 right
    0.0000
    """
    log_q, codes = _log_proba_and_codes(estimator, X, y)
    return -expected_calibration_error(np.exp(log_q), codes)


def _log_proba_and_codes(estimator: Any, X: Any, y: Any) -> tuple:
    """The estimator's log-probabilities of X and y as indices into classes_."""
    classes = np.asarray(estimator.classes_)
    labels = np.asarray(y)
    codes = np.searchsorted(classes, labels)
    codes = np.clip(codes, 0, len(classes) - 1)
    unknown = classes[codes] != labels
    if unknown.any():
        raise ValueError(f"y has a label that is not a class of the estimator: "
                         f"{_shown(labels[np.argmax(unknown)])} (its classes are "
                         f"{', '.join(_shown(c) for c in classes)})")
    if hasattr(estimator, "predict_log_proba"):
        log_q = np.asarray(estimator.predict_log_proba(X), dtype=np.float64)
    else:
        with np.errstate(divide="ignore"):
            log_q = np.log(np.asarray(estimator.predict_proba(X), dtype=np.float64))
    return log_q, codes
