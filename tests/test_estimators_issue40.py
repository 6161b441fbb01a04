"""The estimators where a scikit-learn user looks (issue 40).

Weights, a penalty, stopping by epochs or tolerance, scorers for the exact NLL
and for the ECE on labels, a warning where ``predict_proba`` underflows, the
engineered Gaussian posterior, and messages that name the argument, the cause
and the fix.
"""

import warnings

import numpy as np
import pytest

pytest.importorskip("sklearn")
from sklearn.datasets import load_iris
from sklearn.metrics import log_loss
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import scratchnet as sn
from scratchnet.estimators import (
    GaussianClassifier,
    NetworkClassifier,
    ece_scorer,
    nll_scorer,
)


def _iris_strings():
    x, y = load_iris(return_X_y=True)
    return StandardScaler().fit_transform(x), np.array(["a", "b", "c"])[y]


def test_the_nll_scorer_is_scikit_learns_log_loss_without_its_clipping():
    x, y = _iris_strings()
    clf = GaussianClassifier(shrinkage=0.1).fit(x[::2], y[::2])
    expected = -log_loss(y[1::2], clf.predict_proba(x[1::2]), labels=clf.classes_)
    assert nll_scorer(clf, x[1::2], y[1::2]) == pytest.approx(expected, rel=1e-12)
    far = GaussianClassifier().fit([[0.0], [0.1], [50.0], [50.1]], ["a", "a", "b", "b"])
    # x = 0 is hundreds of standard deviations from class b: log q(b|0) = -1.2e5
    assert nll_scorer(far, [[0.0]], ["b"]) == pytest.approx(
        far.predict_log_proba([[0.0]])[0, 1], rel=1e-12)
    assert nll_scorer(far, [[0.0]], ["b"]) < -1e5
    with pytest.warns(sn.ScratchnetWarning, match="underflows to exactly 0 in 1 row"):
        clipped = -log_loss(["b"], far.predict_proba([[0.0]]), labels=["a", "b"])
    assert clipped > -40                      # what the clipped score says instead


def test_the_ece_scorer_takes_labels_of_any_kind():
    x, y = _iris_strings()
    clf = GaussianClassifier(shrinkage=0.3).fit(x[::2], y[::2])
    codes = np.searchsorted(clf.classes_, y[1::2])
    expected = sn.metrics.expected_calibration_error(clf.predict_proba(x[1::2]), codes)
    assert ece_scorer(clf, x[1::2], y[1::2]) == -expected
    with pytest.raises(ValueError, match="y has a label that is not a class of the "
                       "estimator: 'z'"):
        ece_scorer(clf, x[:1], ["z"])


def test_the_scorers_work_in_grid_search():
    x, y = _iris_strings()
    search = GridSearchCV(GaussianClassifier(), {"shrinkage": [0.0, 0.3, 0.9]},
                          scoring={"nll": nll_scorer, "ece": ece_scorer}, refit="nll",
                          cv=StratifiedKFold(3, shuffle=True, random_state=0))
    search.fit(x, y)
    nll = search.cv_results_["mean_test_nll"]
    assert np.all(nll < 0) and search.best_params_["shrinkage"] == [0.0, 0.3, 0.9][
        int(np.argmax(nll))]
    assert np.all(search.cv_results_["mean_test_ece"] <= 0)


def test_an_integer_random_state_of_numpy_is_the_same_seed():
    x, y = _iris_strings()
    a = NetworkClassifier(max_epochs=5, random_state=0).fit(x, y)
    b = NetworkClassifier(max_epochs=5, random_state=np.int64(0)).fit(x, y)
    np.testing.assert_array_equal(a.predict_log_proba(x), b.predict_log_proba(x))


def test_stopping_by_epochs_and_by_tolerance():
    x, y = _iris_strings()
    clf = NetworkClassifier(max_epochs=7, tol=0.0, random_state=0).fit(x, y)
    assert clf.n_epochs_ == 7 and len(clf.history_.losses) == 7 * 3   # 150 / 64
    clf = NetworkClassifier(max_epochs=500, tol=0.05, n_iter_no_change=3,
                            random_state=0).fit(x, y)
    assert clf.n_epochs_ < 500 and clf.n_epochs_ == int(clf.n_epochs_)
    assert NetworkClassifier(steps=10, random_state=0).fit(x, y).n_epochs_ == 10 / 3


def test_sample_weight_and_class_weight_move_the_probabilities():
    x, y = _iris_strings()
    plain = NetworkClassifier(max_epochs=30, random_state=0).fit(x, y)
    weights = np.where(y == "c", 0.0, 1.0)             # class c never drawn
    weighted = NetworkClassifier(max_epochs=30, random_state=0).fit(
        x, y, sample_weight=weights)
    assert weighted.predict_proba(x)[:, 2].mean() < 0.5 * plain.predict_proba(x)[:, 2].mean()
    favoured = NetworkClassifier(max_epochs=30, class_weight={"a": 1.0, "b": 1.0,
                                                              "c": 20.0},
                                 random_state=0).fit(x, y)
    assert favoured.predict_proba(x)[:, 2].mean() > plain.predict_proba(x)[:, 2].mean()
    with pytest.raises(ValueError, match="class_weight has labels that are not "
                       "classes of y: 'd'; the classes are 'a', 'b', 'c'"):
        NetworkClassifier(class_weight={"d": 2.0}).fit(x, y)


def test_balanced_class_weights_target_equal_priors():
    """Priors 0.8 / 0.2, N(0, 1) and N(1, 1): at x = 1/2 the posterior is 0.2 with the
    sample's priors and 1/2 with equal ones (q_c proportional to w_c P(c|x))."""
    task = sn.GaussianClasses([0.0, 1.0], [1.0, 1.0], priors=[0.8, 0.2])
    x, y = task.sample(4000, rng=0)
    q = [NetworkClassifier(hidden=(16,), max_epochs=20, lr=1e-2, class_weight=w,
                           random_state=0).fit(x.reshape(-1, 1), y).predict_proba([[0.5]])[0, 1]
         for w in (None, "balanced")]
    assert q[0] == pytest.approx(0.2, abs=0.05) and q[1] == pytest.approx(0.5, abs=0.05)


def test_alpha_is_an_l2_penalty():
    x, y = _iris_strings()
    norms = [sum(float((p**2).sum()) for p in NetworkClassifier(
        max_epochs=60, alpha=a, random_state=0).fit(x, y).network_.params.values())
        for a in (0.0, 0.1)]
    assert norms[1] < 0.8 * norms[0]


@pytest.mark.parametrize("make, fit_args, error, words", [
    (lambda: GaussianClassifier(covariance="tied"),
     lambda x, y: (np.column_stack([x[:, :2], x[:, 1] * 2]), y), ValueError,
     "the shared covariance of covariance='tied'.*use shrinkage > 0"),
    (lambda: NetworkClassifier(loss="binary_cross_entropy"), None, ValueError,
     "loss='binary_cross_entropy' has one output for two classes, and y has 3: use "
     "loss='cross_entropy'"),
    (lambda: GaussianClassifier(), lambda x, y: (x * 1e200, y), ValueError,
     "X has a value of magnitude .*e\\+200: its square overflows float64.*rescale"),
    (lambda: GaussianClassifier(),
     lambda x, y: (x, np.where(np.arange(len(y)) == 7, None, y).astype(object)),
     ValueError, r"y has a missing label \(None or NaN\) at index 7 \(1 in all\)"),
    (lambda: GaussianClassifier(), lambda x, y: (x, np.zeros(len(y), dtype=np.int64)),
     ValueError, "got one class, 0$"),
    (lambda: NetworkClassifier(loss="hinge", early_stopping=True), None, ValueError,
     "loss='hinge' is not a proper loss.*early_stopping and temperature"),
])
def test_messages_name_the_argument_the_cause_and_the_fix(make, fit_args, error,
                                                          words):
    x, y = _iris_strings()
    args = (x, y) if fit_args is None else fit_args(x, y)
    with pytest.raises(error, match=words):
        make().fit(*args)


def test_the_engineered_gaussian_posterior_is_the_chapters():
    from scratchnet.fast.gaussian import chunked_log_posterior

    rng = np.random.default_rng(0)
    x = rng.normal(size=(500, 6)) * 3
    c = rng.integers(0, 4, 500)
    task = GaussianClassifier(shrinkage=0.05).fit(x, c).model_
    expected = task.log_posterior(x)
    for block in (1, 16 * 6 * 7, 1 << 23):          # one row, 7 rows, all at once
        np.testing.assert_allclose(chunked_log_posterior(task, x, block_bytes=block),
                                   expected, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="too far from every class"):
        chunked_log_posterior(task, np.full((2, 6), 1e9))


def test_the_estimator_reads_the_posterior_by_blocks_in_a_pipeline():
    x, y = _iris_strings()
    pipe = make_pipeline(StandardScaler(), GaussianClassifier()).fit(x, y)
    model = pipe[-1].model_
    np.testing.assert_allclose(pipe.predict_log_proba(x),
                               model.log_posterior(pipe[0].transform(x)),
                               rtol=1e-12, atol=1e-12)


def test_underflow_warns_only_for_a_class_observed_in_training():
    far = GaussianClassifier().fit([[0.0], [0.1], [50.0], [50.1]], ["a", "a", "b", "b"])
    assert far.observed_classes_.tolist() == [True, True]
    with pytest.warns(sn.ScratchnetWarning, match="underflows to exactly 0 in 1 row"):
        far.predict_proba([[0.0]])                       # q(b | 0) = e^-1.2e5
    far.observed_classes_ = np.array([True, False])     # as if b had weight 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(far.predict_proba([[0.0]]), [[1.0, 0.0]])
    x, y = _iris_strings()
    unseen = NetworkClassifier(max_epochs=2, class_weight={"a": 1.0, "b": 1.0, "c": 0.0},
                               random_state=0).fit(x, y)
    assert unseen.observed_classes_.tolist() == [True, True, False]
    weights = np.where(y == "a", 0.0, 1.0)
    assert NetworkClassifier(max_epochs=2, random_state=0).fit(
        x, y, sample_weight=weights).observed_classes_.tolist() == [False, True, True]


class _Zeros:
    """A foreign classifier whose predict_proba gives exact zeros (as isotonic does)."""

    classes_ = np.array(["a", "b"])

    def predict_proba(self, X):
        return np.tile([1.0, 0.0], (len(X), 1))


def test_the_nll_scorer_warns_where_a_label_of_y_gets_probability_zero():
    with warnings.catch_warnings():
        warnings.simplefilter("error")                  # a 0 for another class: fine
        assert nll_scorer(_Zeros(), [[0.0], [1.0]], ["a", "a"]) == 0.0
    with pytest.warns(sn.ScratchnetWarning, match=r"_Zeros gives probability 0 to the "
                      r"label of 1 of 2 row\(s\) of y \(first: row 1, 'b'\)"):
        assert nll_scorer(_Zeros(), [[0.0], [1.0]], ["a", "b"]) == -np.inf


def _weighted_by_hand(x, y, w, alpha, kind):
    """Weighted means, scatter (divisor: the class's weight), priors; by NumPy."""
    classes = np.unique(y)
    mass = np.array([w[y == c].sum() for c in classes])
    means = np.array([np.average(x[y == c], axis=0, weights=w[y == c]) for c in classes])
    s = np.array([np.cov(x[y == c].T, aweights=w[y == c], bias=True) for c in classes])
    if kind == "tied":
        s = np.array([np.tensordot(mass, s, axes=1) / mass.sum()] * len(classes))
    if kind == "diag":
        v = np.diagonal(s, axis1=1, axis2=2)
        v = (1 - alpha) * v + alpha * v.mean(axis=1, keepdims=True)
        s = np.array([np.diag(row) for row in v])
    else:
        d = x.shape[1]
        s = np.array([(1 - alpha) * m + alpha * np.trace(m) / d * np.eye(d) for m in s])
    return means, s, mass / mass.sum()


@pytest.mark.parametrize("kind", ["full", "tied", "diag"])
@pytest.mark.parametrize("alpha", [0.0, 0.2])
def test_gaussian_sample_weight_is_the_weighted_fit_by_hand(kind, alpha):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(60, 3)) @ rng.normal(size=(3, 3))
    y = np.array(["p", "q", "r"])[rng.integers(0, 3, 60)]
    w = rng.uniform(0.0, 3.0, 60)
    clf = GaussianClassifier(shrinkage=alpha, covariance=kind).fit(x, y, sample_weight=w)
    for got, want in zip((clf.means_, clf.covariances_, clf.priors_),
                         _weighted_by_hand(x, y, w, alpha, kind)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    counts = rng.integers(0, 4, 60)                      # integer weights: repeated rows
    counts[:3] = 1                                      # (every class keeps a row)
    repeated = GaussianClassifier(shrinkage=alpha, covariance=kind).fit(
        np.repeat(x, counts, axis=0), np.repeat(y, counts))
    weighted = GaussianClassifier(shrinkage=alpha, covariance=kind).fit(
        x, y, sample_weight=counts)
    np.testing.assert_allclose(weighted.predict_log_proba(x),
                               repeated.predict_log_proba(x), rtol=1e-9, atol=1e-9)


def test_gaussian_sample_weight_refuses_a_class_of_weight_zero():
    x, y = _iris_strings()
    with pytest.raises(ValueError, match="sample_weight gives class 2 a total weight "
                       "of 0: its Gaussian cannot be fitted"):
        GaussianClassifier().fit(x, y, sample_weight=np.where(y == "c", 0.0, 1.0))
