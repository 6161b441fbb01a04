r"""The estimators' machinery: seeds, labels in messages, weighted batches, a plateau.

:mod:`scratchnet.estimators` wraps the chapters in scikit-learn's conventions;
what those conventions need that is not mathematics lives here, each piece
with its reason:

* :func:`seed_of`: scikit-learn's ``random_state`` (an integer, NumPy's
  integers included, a ``RandomState`` or None) as the integer seed the
  chapters take;
* :func:`label_text`: a label in a message as the user wrote it (``'a'``,
  ``0``), not as NumPy prints it (``np.str_('a')``, ``np.int64(0)``);
* :func:`check_sample_weight`: non-negative finite weights, one per sample;
* :func:`weighted_batches`: a fixed dataset, or a sampler that draws each
  mini-batch's rows with probabilities proportional to their weights;
* :class:`TolerancePlateau`: scikit-learn's ``tol`` and ``n_iter_no_change``
  as a :func:`scratchnet.train` callback;
* :func:`class_weights`: ``class_weight`` as an array over the classes;
* :func:`fit_gaussian_kind`: the three covariance structures of
  :class:`scratchnet.estimators.GaussianClassifier`.
"""

from __future__ import annotations

import warnings
from typing import Any, Optional

import numpy as np

from ._mixture import check_definite, class_scatter, class_sums
from ._validation import check_choice, check_scalar
from .exceptions import ScratchnetWarning
from .fitting import GaussianParameters, fit_gaussian_classes

__all__ = [
    "TIED_SINGULAR",
    "TolerancePlateau",
    "check_loss_options",
    "check_no_missing_labels",
    "check_sample_weight",
    "check_squares_fit",
    "class_weights",
    "exp_with_warning",
    "fit_gaussian_kind",
    "fit_weighted_gaussians",
    "label_text",
    "plain_label",
    "sample_weights",
    "seed_of",
    "weighted_batches",
]


def seed_of(random_state: Any) -> int:
    """An integer seed: the integer given (NumPy's too), or one drawn from the state.

    Parameters
    ----------
    random_state : int, numpy integer, RandomState or None
        As scikit-learn takes it (None: NumPy's global ``RandomState``).

    Returns
    -------
    int

    Examples
    --------
    >>> import numpy as np
    >>> from scratchnet._estimator_parts import seed_of
    >>> seed_of(np.int64(7)), seed_of(7)
    (7, 7)
    """
    if isinstance(random_state, (int, np.integer)) and not isinstance(
            random_state, (bool, np.bool_)):
        return int(random_state)
    from sklearn.utils import check_random_state

    return int(check_random_state(random_state).randint(2**31 - 1))


def plain_label(label: Any) -> Any:
    """A label as a plain Python value (``np.str_('a')`` -> ``'a'``).

    Parameters
    ----------
    label : any

    Returns
    -------
    any

    Examples
    --------
    >>> import numpy as np
    >>> from scratchnet._estimator_parts import plain_label
    >>> plain_label(np.int64(3)), plain_label("a")
    (3, 'a')
    """
    return label.item() if isinstance(label, np.generic) else label


def label_text(label: Any) -> str:
    """A label for a message, without NumPy's reprs.

    Parameters
    ----------
    label : any

    Returns
    -------
    str

    Examples
    --------
    >>> import numpy as np
    >>> from scratchnet._estimator_parts import label_text
    >>> label_text(np.str_("a")), label_text(np.int64(0))
    ("'a'", '0')
    """
    return repr(plain_label(label))


def check_sample_weight(sample_weight: Any, n: int) -> np.ndarray:
    """``sample_weight`` as float64 (n,), finite and non-negative, or all ones.

    Parameters
    ----------
    sample_weight : array_like, shape (n,), or None
    n : int

    Returns
    -------
    ndarray of float64, shape (n,)

    Raises
    ------
    ValueError
        Naming the shape, or the first negative or non-finite weight.

    Examples
    --------
    >>> from scratchnet._estimator_parts import check_sample_weight
    >>> check_sample_weight(None, 2), check_sample_weight([1, 0], 2)
    (array([1., 1.]), array([1., 0.]))
    """
    if sample_weight is None:
        return np.ones(n)
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.shape != (n,):
        raise ValueError(f"sample_weight must have shape ({n},), one weight per "
                         f"sample; got shape {w.shape}")
    bad = ~(np.isfinite(w) & (w >= 0))
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"sample_weight must be finite and non-negative; got "
                         f"{w[i]!r} at index {i}")
    return w


def weighted_batches(x: np.ndarray, codes: np.ndarray, weights: Any) -> Any:
    r"""``(x, codes)`` (shuffled epochs), or a sampler drawing rows by weight.

    Parameters
    ----------
    x : ndarray, shape (n, D)
    codes : ndarray of int, shape (n,)
    weights : ndarray, shape (n,), or None

    Returns
    -------
    (x, codes) or callable
        Without weights, the fixed dataset (:func:`scratchnet.train` shuffles
        its epochs); with them, ``sampler(b, rng)``, whose rows are drawn
        with replacement with probabilities :math:`w_j / \sum_k w_k`: the
        expected gradient of a batch is that of the weighted loss.

    Examples
    --------
    >>> import numpy as np
    >>> from scratchnet._estimator_parts import weighted_batches
    >>> sampler = weighted_batches(np.arange(3.0)[:, None], np.arange(3),
    ...                            np.array([0.0, 0.0, 1.0]))
    >>> sampler(4, np.random.default_rng(0))[1].tolist()
    [2, 2, 2, 2]
    """
    if weights is None:
        return (x, codes)
    p = weights / weights.sum()

    def sampler(n: int, rng: np.random.Generator) -> tuple:
        rows = rng.choice(len(p), size=n, p=p)
        return x[rows], codes[rows]

    return sampler


class TolerancePlateau:
    """A ``train`` callback: stop when the epoch's loss stops falling by ``tol``.

    scikit-learn's ``MLPClassifier`` rule: after each epoch (``epoch``
    steps), the mean training loss of the epoch counts as progress when it is
    below the best so far by more than ``tol``; ``patience`` epochs in a row
    without progress stop the training (``tol=0``: never).

    Parameters
    ----------
    epoch : int
        Steps in an epoch.
    tol : float
    patience : int

    Examples
    --------
    >>> from scratchnet._estimator_parts import TolerancePlateau
    >>> stop = TolerancePlateau(epoch=1, tol=0.1, patience=2)
    >>> [stop(step, loss, None) for step, loss in enumerate([1.0, 0.95, 0.97], 1)]
    [True, True, False]
    """

    def __init__(self, epoch: int, tol: float, patience: int) -> None:
        self.epoch, self.tol, self.patience = epoch, tol, patience
        self.total, self.best, self.stale = 0.0, np.inf, 0

    def __call__(self, step: int, loss: float, model: Any) -> bool:
        """Add the step's loss; at an epoch's end, False to stop."""
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


def class_weights(class_weight: Any, classes: np.ndarray, codes: np.ndarray
                  ) -> np.ndarray:
    """``class_weight`` (a dict of label to weight, or "balanced") over ``classes``.

    Parameters
    ----------
    class_weight : dict or "balanced"
        Labels missing from the dict weigh 1; ``"balanced"``:
        :math:`n / (M n_c)`, scikit-learn's rule.
    classes : ndarray, shape (M,)
    codes : ndarray of int, shape (n,)
        The samples' classes, as indices into ``classes``.

    Returns
    -------
    ndarray, shape (M,)

    Examples
    --------
    >>> import numpy as np
    >>> from scratchnet._estimator_parts import class_weights
    >>> class_weights("balanced", np.array(["a", "b"]), np.array([0, 0, 0, 1]))
    array([0.66666667, 2.        ])
    """
    m = len(classes)
    if isinstance(class_weight, str):
        check_choice(class_weight, "class_weight", ("balanced",))
        counts = np.bincount(codes, minlength=m)
        return len(codes) / (m * counts)
    if not isinstance(class_weight, dict):
        raise TypeError(f"class_weight must be a dict of label -> weight, "
                        f"'balanced' or None; got {class_weight!r}")
    known = {plain_label(c) for c in classes}
    unknown = [k for k in class_weight if plain_label(k) not in known]
    if unknown:
        raise ValueError(f"class_weight has labels that are not classes of y: "
                         f"{', '.join(map(repr, unknown))}; the classes are "
                         f"{', '.join(label_text(c) for c in classes)}")
    weights = {plain_label(k): v for k, v in class_weight.items()}
    return np.array([check_scalar(weights.get(plain_label(c), 1.0),
                                 f"class_weight[{label_text(c)}]", low=0.0,
                                 high=np.inf, high_inclusive=False)
                     for c in classes])


#: the message of a singular shared covariance (``covariance="tied"``)
TIED_SINGULAR = ("the shared covariance of covariance='tied' (the within-class "
                 "scatter pooled over the classes) is not positive definite: the "
                 "samples lie in a subspace (a feature constant within every class, "
                 "or one that is a combination of others); use shrinkage > 0 or drop "
                 "those features")


def fit_gaussian_kind(x: np.ndarray, targets: np.ndarray, num_classes: int,
                      shrinkage: float, covariance: str,
                      weights: Optional[np.ndarray] = None) -> GaussianParameters:
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
    weights : ndarray of float, shape (n,), optional
        Sample weights: :func:`fit_weighted_gaussians`.

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
    >>> import numpy as np
    >>> from scratchnet._estimator_parts import fit_gaussian_kind
    >>> x = np.array([[0.0, 0.0], [2.0, 2.0], [4.0, 0.0], [6.0, 6.0]])
    >>> fit_gaussian_kind(x, np.array([0, 0, 1, 1]), 2, 0.0, "tied").covariances[0]
    array([[2., 2.],
           [2., 4.]])
    """
    if weights is not None:
        return fit_weighted_gaussians(x, targets, num_classes, shrinkage, covariance,
                                      weights)
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
            raise ValueError(TIED_SINGULAR) from None
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


def fit_weighted_gaussians(x: np.ndarray, targets: np.ndarray, num_classes: int,
                           shrinkage: float, covariance: str,
                           weights: np.ndarray) -> GaussianParameters:
    r"""Weighted maximum-likelihood Gaussian classes.

    Sample :math:`j` counts :math:`w_j` times: with :math:`W_c = \sum_{j: c_j
    = c} w_j`, the priors are :math:`W_c / \sum_k W_k`, the means
    :math:`\mu_c = \sum_{j: c_j = c} w_j x_j / W_c` and the scatter
    :math:`S_c = \sum_{j: c_j = c} w_j (x_j - \mu_c)(x_j - \mu_c)^{\mathsf
    T} / W_c`, shrunk and pooled (``"tied"``: :math:`S = \sum_c W_c S_c /
    \sum_k W_k`) or cut to its diagonal as in :func:`fit_gaussian_kind`.
    Integer weights give the fit of the data with each row repeated
    :math:`w_j` times; weight 0 drops a row.

    Parameters
    ----------
    x : ndarray, shape (n, D)
    targets : ndarray of int, shape (n,)
    num_classes : int
    shrinkage : float in [0, 1]
    covariance : {"full", "tied", "diag"}
    weights : ndarray of float, shape (n,)
        Non-negative; every class needs a positive total.

    Returns
    -------
    GaussianParameters

    Examples
    --------
    >>> import numpy as np
    >>> from scratchnet._estimator_parts import fit_weighted_gaussians
    >>> x = np.array([[0.0], [3.0], [10.0], [12.0]])
    >>> fit = fit_weighted_gaussians(x, np.array([0, 0, 1, 1]), 2, 0.0, "full",
    ...                              np.array([2.0, 1.0, 1.0, 1.0]))
    >>> fit.means.ravel().tolist(), fit.covariances.ravel().tolist(), fit.priors
    ([1.0, 11.0], [2.0, 1.0], array([0.6, 0.4]))
    """
    counts = np.bincount(targets, minlength=num_classes)
    mass = np.bincount(targets, weights=weights, minlength=num_classes)   # W_c
    if not mass.sum() > 0:
        raise ValueError("sample_weight must have a positive sum; got all zeros")
    if not np.all(mass > 0):
        c = int(np.argmax(~(mass > 0)))
        raise ValueError(f"sample_weight gives class {c} a total weight of 0: its "
                         "Gaussian cannot be fitted (give it positive weights, or "
                         "drop its rows)")
    means = class_sums(weights[:, None] * x, targets, counts) / mass[:, None]
    r = (x - means[targets]) * np.sqrt(weights)[:, None]     # sqrt(w_j) (x_j - mu_c)
    d = x.shape[1]
    if covariance == "diag":
        s = class_sums(r**2, targets, counts) / mass[:, None]
        s = (1.0 - shrinkage) * s + shrinkage * s.mean(axis=1, keepdims=True)
        covariances = s[:, :, None] * np.eye(d)
    else:
        s = class_scatter(r, targets, counts) / mass[:, None, None]          # S_c
        if covariance == "tied":
            s = np.broadcast_to((mass[:, None, None] * s).sum(axis=0) / mass.sum(),
                                s.shape)
        s = 0.5 * (s + s.transpose(0, 2, 1))
        scale = np.trace(s, axis1=1, axis2=2) / d
        covariances = (1.0 - shrinkage) * s + shrinkage * scale[:, None, None] * np.eye(
            d)
    try:
        check_definite(covariances, np.trace(covariances, axis1=1, axis2=2), shrinkage)
    except ValueError:
        if covariance == "tied":
            raise ValueError(TIED_SINGULAR) from None
        raise
    return GaussianParameters(means, np.array(covariances), mass / mass.sum())


def check_no_missing_labels(y: Any) -> None:
    """Refuse ``None`` or NaN among the labels, naming the first.

    Parameters
    ----------
    y : array_like, shape (n,)

    Raises
    ------
    ValueError
        With the index of the first missing label and their count.

    Examples
    --------
    >>> from scratchnet._estimator_parts import check_no_missing_labels
    >>> check_no_missing_labels(["a", None])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: y has a missing label (None or NaN) at index 1 (1 in all); ...
    """
    labels = np.asarray(y, dtype=object) if y is not None else None
    if labels is None or labels.ndim != 1:
        return
    missing = np.array([v is None or (isinstance(v, float) and v != v) for v in labels],
                       dtype=bool)
    if missing.any():
        raise ValueError(f"y has a missing label (None or NaN) at index "
                         f"{int(np.argmax(missing))} ({int(missing.sum())} in all); "
                         "drop those rows or fill in their class")


def check_squares_fit(X: np.ndarray) -> None:
    """Refuse features so large that their squares overflow float64.

    Parameters
    ----------
    X : ndarray, shape (n, D)

    Raises
    ------
    ValueError
        Naming the largest magnitude, the cause and the fix.

    Examples
    --------
    >>> import numpy as np
    >>> from scratchnet._estimator_parts import check_squares_fit
    >>> check_squares_fit(np.array([[1e100], [2.0]]))      # 1e200 is fine
    """
    with np.errstate(over="ignore"):
        largest = float(np.abs(X).max(initial=0.0))
        overflows = not np.isfinite(largest * largest * X.shape[0])
    if overflows:
        raise ValueError(f"X has a value of magnitude {largest:.3g}: its square "
                         "overflows float64 (above 1.8e308), so no variance or "
                         "gradient can be computed; rescale the features first "
                         "(StandardScaler, or divide by a power of ten)")


def check_loss_options(loss: Any, classes: int, reads_probabilities: bool) -> None:
    """The loss fits the classes, and gives probabilities where they are read.

    Parameters
    ----------
    loss : str
    classes : int
    reads_probabilities : bool
        Early stopping or a temperature will read the validation NLL.

    Raises
    ------
    ValueError

    Examples
    --------
    >>> from scratchnet._estimator_parts import check_loss_options
    >>> check_loss_options("cross_entropy", 3, True)
    """
    if loss == "binary_cross_entropy" and classes != 2:
        raise ValueError(f"loss='binary_cross_entropy' has one output for two "
                         f"classes, and y has {classes}: use loss='cross_entropy'")
    if loss == "hinge" and reads_probabilities:
        raise ValueError("loss='hinge' is not a proper loss: its outputs are "
                         "decisions, not probabilities, so the validation NLL that "
                         "early_stopping and temperature read is infinite; use "
                         "loss='cross_entropy', or neither option")


def exp_with_warning(log_q: np.ndarray, observed: Any = None) -> np.ndarray:
    """``exp(log_q)``, warning where an observed class's probability underflows to 0.

    Parameters
    ----------
    log_q : ndarray, shape (n, M)
    observed : ndarray of bool, shape (M,), optional
        The classes observed in training (a positive weight); the others
        (``class_weight`` 0, say) may well have probability 0, and are not
        warned about.  Default: every class.

    Returns
    -------
    ndarray, shape (n, M)

    Examples
    --------
    >>> import numpy as np
    >>> import warnings
    >>> from scratchnet._estimator_parts import exp_with_warning
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     q = exp_with_warning(np.array([[0.0, -800.0]]))
    ...     _ = exp_with_warning(np.array([[0.0, -800.0]]), np.array([True, False]))
    >>> q.tolist(), len(caught)
    ([[1.0, 0.0]], 1)
    """
    q = np.exp(log_q)
    zero = (q == 0) & (log_q > -np.inf)
    if observed is not None:
        zero &= np.asarray(observed, dtype=bool)
    if zero.any():
        rows = np.flatnonzero(zero.any(axis=1))
        warnings.warn(f"predict_proba underflows to exactly 0 in {len(rows)} row(s) "
                      f"(first: row {rows[0]}, whose smallest log-probability is "
                      f"{log_q[rows[0]].min():.4g}); a log-loss of these "
                      "probabilities is infinite, or wrong where it is clipped: use "
                      "predict_log_proba or scratchnet.metrics.nll_scorer",
                      ScratchnetWarning, stacklevel=3)
    return q


def sample_weights(sample_weight: Any, class_weight: Any, classes: np.ndarray,
                   codes: np.ndarray) -> Any:
    """Each sample's weight, ``sample_weight`` times ``class_weight``; or None.

    Parameters
    ----------
    sample_weight : array_like, shape (n,), or None
    class_weight : dict, "balanced" or None
        See :func:`class_weights`.
    classes : ndarray, shape (M,)
    codes : ndarray of int, shape (n,)

    Returns
    -------
    ndarray of float64, shape (n,), or None
        None where neither is given (plain shuffled epochs).

    Examples
    --------
    >>> import numpy as np
    >>> from scratchnet._estimator_parts import sample_weights
    >>> sample_weights([1, 2, 3], {"b": 10.0}, np.array(["a", "b"]),
    ...                np.array([0, 1, 1]))
    array([ 1., 20., 30.])
    """
    if sample_weight is None and class_weight is None:
        return None
    w = check_sample_weight(sample_weight, len(codes))
    if class_weight is not None:
        w = w * class_weights(class_weight, classes, codes)[codes]
    if not w.sum() > 0:
        raise ValueError("sample_weight (times class_weight) must have a positive "
                         "sum; got all zeros")
    return w
