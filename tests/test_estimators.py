"""scratchnet.estimators: scikit-learn's conventions around the chapters (issue 32).

scikit-learn's own ``check_estimator`` suite; the Gaussian classifier against
QuadraticDiscriminantAnalysis, LinearDiscriminantAnalysis and GaussianNB fold by
fold in a Pipeline; labels of any kind; the network's early stopping and
temperature against independent recomputations; calibration beside it.
"""

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")
from scipy.optimize import minimize_scalar  # noqa: E402
from scipy.special import log_softmax as scipy_log_softmax  # noqa: E402
from sklearn.calibration import CalibratedClassifierCV  # noqa: E402
from sklearn.datasets import load_breast_cancer, load_iris, load_wine  # noqa: E402
from sklearn.discriminant_analysis import (  # noqa: E402
    LinearDiscriminantAnalysis,
    QuadraticDiscriminantAnalysis,
)
from sklearn.model_selection import (  # noqa: E402
    GridSearchCV,
    StratifiedKFold,
    cross_val_predict,
    cross_val_score,
)
from sklearn.naive_bayes import GaussianNB  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

import scratchnet as sn  # noqa: E402
from scratchnet.datasets import stratified_split  # noqa: E402
from scratchnet.estimators import GaussianClassifier, NetworkClassifier  # noqa: E402

LOADERS = {"iris": load_iris, "wine": load_wine, "breast_cancer": load_breast_cancer}


def _expected_failures(estimator):
    """The checks expected to fail, each with its reason.

    The network's weights are sampling odds: weighted mini-batches are equal to
    repeated samples in expectation, not draw for draw (scikit-learn declares the
    same of its own MLPClassifier).  The Gaussian classifier's sample-weight checks
    fit data it rightly refuses or warns about; its weighted fit is checked against
    NumPy's weighted moments and against repeated rows in
    ``test_estimators_issue40.py``.
    """
    if isinstance(estimator, NetworkClassifier):
        return {"check_sample_weight_equivalence_on_dense_data":
                "sample weights are the mini-batches' sampling probabilities: the "
                "weighted loss in expectation, not the same draws as repeated rows"}
    if estimator.shrinkage == 0:
        singular = ("the check's classes hold a few repeated rows (or 30 features "
                    "for 3 to 10 rows): without shrinkage their covariance is "
                    "singular, which the fit refuses")
        return dict.fromkeys(("check_sample_weights_shape",
                              "check_sample_weights_not_overwritten",
                              "check_sample_weight_equivalence_on_dense_data"), singular)
    return {"check_sample_weight_equivalence_on_dense_data":
            "the check's rows lie thousands of nats from some classes: predict_proba "
            "warns that their probabilities underflow to 0, and the check's warnings "
            "are errors here"}


# The networks train 100 steps: the checks that need a trained network
# (check_classifiers_train's accuracy bar) pass with it; trained 5 steps they fail.
@parametrize_with_checks([
    GaussianClassifier(),
    GaussianClassifier(covariance="tied"),
    GaussianClassifier(covariance="diag", shrinkage=0.2),
    NetworkClassifier(steps=100, lr=1e-2),
    NetworkClassifier(steps=100, lr=1e-2, early_stopping=True, validation_fraction=0.2),
], expected_failed_checks=_expected_failures)
def test_scikit_learns_own_checks(estimator, check):
    check(estimator)


def _fold_by_fold(model, name, method="predict_proba"):
    x, y = LOADERS[name](return_X_y=True)
    folds = StratifiedKFold(5, shuffle=True, random_state=0)
    return cross_val_predict(make_pipeline(StandardScaler(), model), x, y, cv=folds,
                             method=method)


@pytest.mark.parametrize("name", ["iris", "wine", "breast_cancer"])
@pytest.mark.parametrize("alpha", [0.0, 0.1, 0.5])
def test_full_covariances_equal_qda_fold_by_fold(name, alpha):
    ours = _fold_by_fold(GaussianClassifier(shrinkage=alpha), name, "predict_log_proba")
    qda = (QuadraticDiscriminantAnalysis(tol=0.0) if alpha == 0 else
           QuadraticDiscriminantAnalysis(solver="eigen", shrinkage=alpha))
    theirs = _fold_by_fold(qda, name, "predict_log_proba")
    # log-posteriors reach -1e3 on wine: compare where the probability is readable
    np.testing.assert_allclose(np.exp(ours), np.exp(theirs), rtol=0, atol=1e-9)
    np.testing.assert_allclose(ours[theirs > -30], theirs[theirs > -30], rtol=0,
                               atol=1e-8)


@pytest.mark.parametrize("name", ["iris", "wine", "breast_cancer"])
@pytest.mark.parametrize("alpha", [0.0, 0.3])
def test_tied_covariance_equals_lda_fold_by_fold(name, alpha):
    ours = _fold_by_fold(GaussianClassifier(shrinkage=alpha, covariance="tied"), name)
    lda = LinearDiscriminantAnalysis(solver="lsqr", shrinkage=alpha or None)
    np.testing.assert_allclose(ours, _fold_by_fold(lda, name), rtol=0, atol=1e-9)


@pytest.mark.parametrize("name", ["iris", "wine", "breast_cancer"])
@pytest.mark.filterwarnings("ignore:predict_proba underflows:scratchnet.ScratchnetWarning")
def test_diagonal_covariances_equal_gaussian_naive_bayes_fold_by_fold(name):
    ours = _fold_by_fold(GaussianClassifier(covariance="diag"), name)
    theirs = _fold_by_fold(GaussianNB(var_smoothing=0.0), name)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-9)


def _iris():
    return load_iris(return_X_y=True)


@pytest.mark.parametrize("labels", [
    lambda y: np.array(["setosa", "versicolor", "virginica"])[y],
    lambda y: (y + 1),                                   # 1..K
    lambda y: np.array([-1.0, 2.0, 7.0])[y],             # whole floats (others
    lambda y: np.array(["a", "b", "c"], dtype=object)[y],  # are a regression target)
    lambda y: y == 2,
])
@pytest.mark.parametrize("make", [lambda: GaussianClassifier(shrinkage=0.1),
                                  lambda: NetworkClassifier(steps=100, lr=1e-2,
                                                            random_state=0)])
def test_any_labels_give_the_same_model_and_come_back(labels, make):
    x, y = _iris()
    named = labels(y)
    y = np.unique(named, return_inverse=True)[1]   # (booleans: two classes)
    base, other = make().fit(x, y), make().fit(x, named)
    np.testing.assert_array_equal(other.classes_, np.unique(named))
    np.testing.assert_allclose(other.predict_proba(x), base.predict_proba(x),
                               rtol=0, atol=1e-12)
    np.testing.assert_array_equal(other.predict(x), other.classes_[base.predict(x)])


def test_the_order_of_the_columns_follows_classes():
    x, y = _iris()
    named = np.array(["b", "a", "c"])[y]
    clf = GaussianClassifier().fit(x, named)
    base = GaussianClassifier().fit(x, y)
    np.testing.assert_allclose(clf.predict_proba(x), base.predict_proba(x)[:, [1, 0, 2]],
                               rtol=0, atol=1e-12)


def test_boolean_labels_and_binary_cross_entropy():
    x, y = load_breast_cancer(return_X_y=True)
    x = StandardScaler().fit_transform(x)
    clf = NetworkClassifier(steps=200, lr=1e-2, loss="binary_cross_entropy",
                            random_state=0).fit(x, y.astype(bool))
    assert clf.classes_.tolist() == [False, True]
    assert clf.network_.sizes[-1] == 1
    assert clf.predict(x).dtype == bool and clf.score(x, y.astype(bool)) > 0.95


def test_pandas_categorical_labels_and_feature_names():
    pd = pytest.importorskip("pandas", reason="pandas labels and column names")
    x, y = _iris()
    frame = pd.DataFrame(x, columns=["sl", "sw", "pl", "pw"])
    labels = pd.Categorical.from_codes(y, ["setosa", "versicolor", "virginica"])
    clf = GaussianClassifier().fit(frame, labels)
    assert clf.feature_names_in_.tolist() == ["sl", "sw", "pl", "pw"]
    assert clf.n_features_in_ == 4
    assert set(clf.predict(frame)) <= {"setosa", "versicolor", "virginica"}
    np.testing.assert_allclose(clf.predict_proba(frame),
                               GaussianClassifier().fit(x, y).predict_proba(x),
                               rtol=0, atol=1e-12)


def test_the_estimators_work_in_grid_search_and_cross_validation():
    x, y = load_wine(return_X_y=True)
    pipe = make_pipeline(StandardScaler(), GaussianClassifier())
    search = GridSearchCV(pipe, {"gaussianclassifier__shrinkage": [0.0, 0.1, 0.5],
                                 "gaussianclassifier__covariance": ["full", "tied"]},
                          cv=3).fit(x, y)
    assert search.best_score_ > 0.95
    scores = cross_val_score(make_pipeline(StandardScaler(), NetworkClassifier(
        steps=300, lr=1e-2, random_state=0)), x, y, cv=3)
    assert scores.mean() > 0.9


def test_shrinkage_depends_on_the_scale_standardising_helps():
    """On raw wine (proline ~ 1e3, hue ~ 1) shrinkage toward (tr S / D) I hurts."""
    x, y = load_wine(return_X_y=True)
    folds = StratifiedKFold(5, shuffle=True, random_state=0)
    raw = cross_val_score(GaussianClassifier(shrinkage=0.5), x, y, cv=folds).mean()
    scaled = cross_val_score(make_pipeline(StandardScaler(),
                                           GaussianClassifier(shrinkage=0.5)),
                             x, y, cv=folds).mean()
    assert scaled > raw + 0.2


def test_temperature_is_fitted_on_the_validation_split_and_kept_where_it_says_little():
    x, y = load_breast_cancer(return_X_y=True)
    x = StandardScaler().fit_transform(x)
    with pytest.warns(sn.ScratchnetWarning, match="113 held-out samples cannot tell"):
        clf = NetworkClassifier(steps=600, lr=1e-2, temperature=True,
                                validation_fraction=0.2, random_state=3).fit(x, y)
    _, held = stratified_split(y, (0.8, 0.2), rng=np.random.default_rng([3, 2]))
    log_q = clf.network_.predict_log_proba(x[held])

    def nll(t):
        return -scipy_log_softmax(log_q / t, axis=1)[np.arange(len(held)), y[held]].mean()

    best = minimize_scalar(nll, bounds=(0.01, 100), method="bounded",
                           options={"xatol": 1e-10})
    choice = sn.temperature.choose_temperature(log_q, y[held])
    assert choice.fitted == pytest.approx(best.x, rel=1e-5)
    assert clf.temperature_ == 1.0 and choice.temperature == 1.0
    clf.temperature_ = choice.fitted          # what applying it would give
    np.testing.assert_allclose(clf.predict_log_proba(x[:5]),
                               scipy_log_softmax(clf.network_.predict_log_proba(x[:5])
                                                 / choice.fitted, axis=1),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(clf.predict(x), clf.network_.predict(x))


def test_early_stopping_lowers_the_test_nll_on_breast_cancer():
    x, y = load_breast_cancer(return_X_y=True)
    train, test = stratified_split(y, (0.7, 0.3), rng=0)
    scale = StandardScaler().fit(x[train])
    x = scale.transform(x)
    nll = {}
    for stop in (False, True):
        clf = NetworkClassifier(steps=2000, lr=1e-3, early_stopping=True, patience=10,
                                random_state=0).set_params(early_stopping=stop)
        clf.fit(x[train], y[train])
        proba = clf.predict_proba(x[test])[np.arange(len(test)), y[test]]
        nll[stop] = -np.log(proba).mean()
        if stop:
            assert clf.history_.best_step is not None and clf.history_.stopped_early
    assert nll[True] < nll[False] - 0.05


def test_platt_and_isotonic_calibration_wrap_the_network():
    x, y = load_breast_cancer(return_X_y=True)
    x = StandardScaler().fit_transform(x)
    net = NetworkClassifier(steps=200, lr=1e-2, random_state=0)
    for method in ("sigmoid", "isotonic"):
        calibrated = CalibratedClassifierCV(net, method=method, cv=3).fit(x, y)
        proba = calibrated.predict_proba(x)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
        assert calibrated.score(x, y) > 0.95


@pytest.mark.parametrize("params, error, match", [
    ({"covariance": "spherical"}, ValueError, "covariance must be one of"),
    ({"shrinkage": 1.5}, ValueError, "shrinkage"),
])
def test_bad_gaussian_options_are_named(params, error, match):
    x, y = _iris()
    with pytest.raises(error, match=match):
        GaussianClassifier(**params).fit(x, y)


def test_a_constant_feature_within_a_class_is_named():
    x = np.array([[0.0, 1.0], [1.0, 1.0], [2.0, 1.0], [5.0, 0.0], [6.0, 2.0],
                  [7.0, 1.0]])
    with pytest.raises(ValueError, match="feature 1 is constant within class 0"):
        GaussianClassifier(covariance="diag").fit(x, [0, 0, 0, 1, 1, 1])
    GaussianClassifier(covariance="diag", shrinkage=0.1).fit(x, [0, 0, 0, 1, 1, 1])


def test_a_too_small_validation_split_is_named():
    with pytest.raises(ValueError, match="validation_fraction"):
        NetworkClassifier(early_stopping=True, validation_fraction=0.1).fit(
            [[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1])


def test_importing_scratchnet_does_not_import_the_estimators():
    """In a fresh interpreter: ``import scratchnet`` leaves scikit-learn alone, and
    the first use of ``sn.estimators`` is what asks for it (stopped right there by a
    finder put first on the import path: importing scikit-learn costs seconds)."""
    import subprocess
    import sys
    code = ("import sys, scratchnet as sn\n"
            "asked = []\n"
            "class Stop:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.partition('.')[0] == 'sklearn':\n"
            "            asked.append(name)\n"
            "            raise ImportError('stopped')\n"
            "print('sklearn' in sys.modules, 'scratchnet.estimators' in sys.modules)\n"
            "sys.meta_path.insert(0, Stop())\n"
            "try:\n"
            "    sn.estimators.GaussianClassifier\n"
            "except ImportError as exc:\n"
            "    print(asked[0], exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    lines = out.stdout.splitlines()
    assert lines[0] == "False False", lines
    assert len(lines) == 2 and lines[1].startswith(
        "sklearn scratchnet.estimators needs scikit-learn"), lines


def test_a_temperature_at_its_bound_is_not_used_and_says_why():
    """breast_cancer's 46-sample validation split is separated by the network: the
    NLL falls as T -> 0, down to the policy's bound 1/4 (issue 40: fit_temperature's
    own bound 0.01 would make the test NLL explode, about 8)."""
    x, y = load_breast_cancer(return_X_y=True)
    train, test = stratified_split(y, (0.8, 0.2), rng=0)
    scale = StandardScaler().fit(x[train])
    clf = NetworkClassifier(temperature=True, early_stopping=True, random_state=1)
    with pytest.warns(sn.ScratchnetWarning, match="temperature_ is kept at 1: .*bound "
                      "T = 0.25"):
        clf.fit(scale.transform(x[train]), y[train])
    assert clf.temperature_ == 1.0
    np.testing.assert_array_equal(clf.predict_log_proba(scale.transform(x[test])),
                                  clf.network_.predict_log_proba(
                                      scale.transform(x[test])))


def test_the_docs_shrinkage_numbers_are_what_the_code_computes():
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    page = (root / "docs" / "unknown_model.md").read_text(encoding="utf-8")
    readme = (root / "README.md").read_text(encoding="utf-8")
    x, y = load_wine(return_X_y=True)
    folds = StratifiedKFold(5, shuffle=True, random_state=0)

    def accuracy(alpha, scale):
        model = GaussianClassifier(shrinkage=alpha)
        model = make_pipeline(StandardScaler(), model) if scale else model
        return f"{cross_val_score(model, x, y, cv=folds).mean():.3f}"

    raw = [accuracy(a, False) for a in (0.0, 0.1, 0.5)]
    scaled = [accuracy(a, True) for a in (0.1, 0.5)]
    assert (f"5-fold accuracy {raw[0]} without shrinkage, {raw[1]} at $\\alpha = 0.1$, "
            f"{raw[2]}\nat 0.5") in page
    assert f"the same shrinkages give {scaled[0]} and {scaled[1]}" in page
    assert (f"accuracy {raw[0]} without shrinkage, {raw[1]} at 0.1; standardised: "
            f"{scaled[0]}") in " ".join(readme.split())
