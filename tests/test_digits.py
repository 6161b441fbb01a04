"""Fitting a generative model to data, temperature scaling, and the digits.

Checked against independent computations: scikit-learn's
QuadraticDiscriminantAnalysis and PCA, SciPy's scalar minimiser, closed-form
optima, per-class loops written here, and samples of a known model.
"""

import subprocess
import sys

import numpy as np
import pytest

import scratchnet as sn
from scratchnet.datasets import load_digits, stratified_split
from scratchnet.fitting import fit_gaussian_classes, fit_pca
from scratchnet.temperature import fit_temperature, temperature_nll, temperature_scale

sklearn = pytest.importorskip("sklearn")
from sklearn.decomposition import PCA  # noqa: E402
from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis  # noqa: E402

KNOWN = sn.GaussianClasses(
    [[0.0, 0.0], [3.0, 1.0], [-1.0, 4.0]],
    [[[1.0, 0.3], [0.3, 0.5]], [[2.0, -0.4], [-0.4, 1.0]], [[0.7, 0.0], [0.0, 1.5]]],
    [0.5, 0.3, 0.2])


@pytest.fixture(scope="module")
def digits():
    return load_digits()


@pytest.fixture(scope="module")
def projected(digits):
    """The digits on their 12 leading principal directions (well conditioned)."""
    pca = fit_pca(digits.train.x, 12)
    return pca.transform(digits.train.x), digits.train.c, pca.transform(digits.test.x)


def _posterior(x, c, shrinkage=0.0):
    return sn.GaussianClasses(*fit_gaussian_classes(x, c, shrinkage=shrinkage))


# --- the fit -------------------------------------------------------------------------


def test_fit_is_the_per_class_maximum_likelihood():
    """Frequencies, means and covariances with divisor n_c, class by class."""
    x, c = KNOWN.sample(500, rng=1)
    fit = fit_gaussian_classes(x, c)
    for k in range(3):
        xs = x[c == k]
        np.testing.assert_allclose(fit.priors[k], len(xs) / len(x), rtol=1e-15)
        np.testing.assert_allclose(fit.means[k], xs.mean(axis=0), rtol=1e-13)
        np.testing.assert_allclose(fit.covariances[k], np.cov(xs.T, bias=True),
                                   rtol=1e-12, atol=1e-14)


def test_shrinkage_moves_toward_the_scaled_identity():
    x, c = KNOWN.sample(300, rng=2)
    s = fit_gaussian_classes(x, c).covariances
    for alpha in (0.25, 1.0):
        shrunk = fit_gaussian_classes(x, c, shrinkage=alpha).covariances
        scale = np.trace(s, axis1=1, axis2=2) / 2
        np.testing.assert_allclose(
            shrunk, (1 - alpha) * s + alpha * scale[:, None, None] * np.eye(2),
            rtol=1e-14)


def test_fit_recovers_a_known_model_within_sampling_error():
    n = 40_000
    x, c = KNOWN.sample(n, rng=3)
    fit = fit_gaussian_classes(x, c)
    cov = np.asarray(KNOWN.scales)
    counts = KNOWN.priors * n
    # 5 standard errors: priors sqrt(p(1-p)/n), means sqrt(diag / n_c),
    # covariances sqrt((S_ii S_jj + S_ij^2) / n_c)
    assert np.all(np.abs(fit.priors - KNOWN.priors)
                  < 5 * np.sqrt(KNOWN.priors * (1 - KNOWN.priors) / n))
    diag = np.diagonal(cov, axis1=1, axis2=2)
    assert np.all(np.abs(fit.means - KNOWN.means) < 5 * np.sqrt(diag / counts[:, None]))
    se = np.sqrt((diag[:, :, None] * diag[:, None, :] + cov ** 2) / counts[:, None, None])
    assert np.all(np.abs(fit.covariances - cov) < 5 * se)


def test_posterior_equals_sklearn_qda_without_regularisation(projected):
    """scikit-learn 1.9 divides each class's scatter by n_c: the same fit."""
    x, c, x_test = projected
    qda = QuadraticDiscriminantAnalysis(reg_param=0.0).fit(x, c)
    ours = _posterior(x, c).posterior(x_test)
    np.testing.assert_allclose(ours, qda.predict_proba(x_test), rtol=0, atol=1e-8)
    x2, c2 = KNOWN.sample(400, rng=4)
    qda = QuadraticDiscriminantAnalysis().fit(x2, c2)
    np.testing.assert_allclose(_posterior(x2, c2).posterior(x2), qda.predict_proba(x2),
                               rtol=0, atol=1e-8)


@pytest.mark.parametrize("alpha", [0.05, 0.3, 1.0])
def test_shrinkage_equals_sklearn_qda_eigen_shrinkage(digits, alpha):
    """Our shrinkage is scikit-learn's shrunk_covariance, used by
    QDA(solver="eigen", shrinkage=alpha), on the raw 64 pixels (singular S_c)."""
    x, c = digits.train
    qda = QuadraticDiscriminantAnalysis(solver="eigen", shrinkage=alpha).fit(x, c)
    ours = _posterior(x, c, alpha).posterior(digits.test.x)
    np.testing.assert_allclose(ours, qda.predict_proba(digits.test.x), rtol=0,
                               atol=1e-8)


@pytest.mark.parametrize("r", [0.1, 0.5])
def test_shrinkage_is_reg_param_when_each_trace_is_d(projected, r):
    """QDA's reg_param r gives (1 - r) S_c + r I: our shrinkage r when tr S_c = D.
    Rescale each class about its mean so that tr S_c = D, then compare."""
    x, c, x_test = projected
    means = np.stack([x[c == k].mean(axis=0) for k in range(10)])
    spread = np.array([np.mean(np.sum((x[c == k] - means[k]) ** 2, axis=1))
                       for k in range(10)])
    x = means[c] + (x - means[c]) * np.sqrt(x.shape[1] / spread[c])[:, None]
    qda = QuadraticDiscriminantAnalysis(reg_param=r).fit(x, c)
    np.testing.assert_allclose(_posterior(x, c, r).posterior(x_test),
                               qda.predict_proba(x_test), rtol=0, atol=1e-8)


def test_pca_equals_sklearn(digits):
    x = digits.train.x
    ours = fit_pca(x, 10)
    theirs = PCA(10, svd_solver="full").fit(x)
    np.testing.assert_allclose(ours.components, theirs.components_, atol=1e-10)
    np.testing.assert_allclose(ours.variances, theirs.explained_variance_, rtol=1e-10)
    np.testing.assert_allclose(ours.transform(digits.test.x),
                               theirs.transform(digits.test.x), atol=1e-10)


@pytest.mark.parametrize("call, error, words", [
    (lambda: fit_gaussian_classes([[0.0], [1], [2], [3]], [0, 0, 1, 2],
                                  num_classes=2, shrinkage=0.5),
     ValueError, "targets must be integers in [0, 2); got 2 at index 3"),
    (lambda: fit_gaussian_classes(np.eye(3), [0, 0, 1]), ValueError,
     "at least 4 samples"),
    (lambda: fit_gaussian_classes(np.eye(3), [0, 0, 1], shrinkage=0.1), ValueError,
     "at least 2 samples for a covariance shrunk toward a scaled identity; got 1 "
     "of class 1"),
    (lambda: fit_gaussian_classes(np.ones((4, 1)), [0, 0, 1, 1], shrinkage=0.5),
     ValueError, "all equal"),
    (lambda: fit_gaussian_classes(np.c_[np.arange(8.0), np.zeros(8)], [0, 1] * 4),
     ValueError, "not positive definite"),
    (lambda: fit_gaussian_classes(np.eye(3), [0, 1, 1], shrinkage=1.5), ValueError,
     "shrinkage must be in [0, 1]; got 1.5"),
    (lambda: fit_gaussian_classes([[np.nan], [0.0]], [0, 1]), ValueError, "NaN"),
    (lambda: fit_gaussian_classes(np.eye(3), [0.0, 1.0, 1.0]), TypeError,
     "targets must be integer class indices"),
    (lambda: fit_gaussian_classes(np.eye(3), [0, 1]), ValueError, "shape (3,)"),
    (lambda: fit_gaussian_classes(np.eye(4), [0, 0, 0, 2], shrinkage=0.1), ValueError,
     "class 1 has no samples"),
    (lambda: fit_pca(np.eye(3), 4), ValueError, "dim must be in [1, min(n, D)]"),
    (lambda: fit_pca(np.eye(3)[0], 1), ValueError, "x must have shape (n, D)"),
])
def test_bad_inputs_to_the_fit_are_named(call, error, words):
    with pytest.raises(error) as info:
        call()
    assert words in str(info.value)


def test_a_constant_pixel_needs_shrinkage(digits):
    """Pixel 0 of every digit is 0: S_c is singular, shrinkage makes it definite."""
    x, c = digits.train
    assert np.ptp(x[:, 0]) == 0
    with pytest.raises(ValueError, match="not positive definite"):
        fit_gaussian_classes(x, c)
    assert np.isfinite(_posterior(x, c, 0.1).log_posterior(digits.test.x)).all()


def test_gaussian_classes_fit_is_the_fitted_model():
    x, c = KNOWN.sample(300, rng=5)
    task = sn.GaussianClasses.fit(x, c, shrinkage=0.2)
    assert isinstance(task, sn.GaussianClasses)
    np.testing.assert_array_equal(task.posterior(x), _posterior(x, c, 0.2).posterior(x))


# --- temperature scaling --------------------------------------------------------------


def _logits(n=400, m=5, scale=4.0, seed=0):
    """Overconfident logits: informative but too large."""
    rng = np.random.default_rng(seed)
    c = rng.integers(0, m, n)
    z = rng.standard_normal((n, m)) + 1.5 * np.eye(m)[c]
    return scale * z, c


@pytest.mark.parametrize("seed, scale", [(0, 4.0), (1, 0.3), (2, 1.0)])
def test_fit_temperature_equals_scipy(seed, scale):
    optimize = pytest.importorskip("scipy.optimize")
    z, c = _logits(scale=scale, seed=seed)
    found = fit_temperature(z, c)
    best = optimize.minimize_scalar(lambda u: temperature_nll(z, c, np.exp(u)),
                                    bounds=(np.log(1e-2), np.log(1e2)),
                                    method="bounded", options={"xatol": 1e-12})
    assert found == pytest.approx(np.exp(best.x), rel=1e-6)
    assert temperature_nll(z, c, found) <= best.fun + 1e-12


@pytest.mark.parametrize("p", [0.6, 0.9, 0.99])
def test_temperature_of_a_hand_made_case(p):
    """Every row z = (a, 0, 0), class 0 a fraction p of the time: the best
    softmax(z / T) gives class 0 probability p: a / T = log(2p / (1 - p))."""
    n = 1000
    c = np.zeros(n, dtype=int)
    c[: round((1 - p) * n)] = np.tile([1, 2], n)[: round((1 - p) * n)]
    z = np.tile([3.0, 0.0, 0.0], (n, 1))
    assert fit_temperature(z, c) == pytest.approx(3.0 / np.log(2 * p / (1 - p)),
                                                  rel=1e-10)


def test_temperature_keeps_the_argmax_and_lowers_the_nll():
    z, c = _logits()
    t = fit_temperature(z, c)
    assert t > 1                                  # overconfident logits: soften
    for temperature in (t, 0.05, 1.0, 50.0):
        np.testing.assert_array_equal(temperature_scale(z, temperature).argmax(axis=1),
                                      z.argmax(axis=1))
    assert temperature_nll(z, c, t) < temperature_nll(z, c, 1.0)
    np.testing.assert_allclose(temperature_scale(z, t), sn.softmax(z / t), rtol=1e-15)


def test_temperature_at_the_bounds_warns_with_the_reason():
    z = np.array([[5.0, 0.0], [0.0, 5.0]])
    with pytest.warns(sn.ScratchnetWarning, match="bound 0.01.*separate every class"):
        assert fit_temperature(z, [0, 1]) == 1e-2       # separable: T -> 0
    with pytest.warns(sn.ScratchnetWarning, match="bound 100.*no better than chance"):
        assert fit_temperature(z, [1, 0]) == 1e2        # always wrong: T -> infinity
    with pytest.warns(sn.ScratchnetWarning, match="bound 0.5"):
        assert fit_temperature(z, [0, 1], bounds=(0.5, 2.0)) == 0.5


@pytest.mark.parametrize("call, error, words", [
    (lambda: temperature_scale([[1.0, 0.0]], 0.0), ValueError,
     "temperature must be in (0, inf); got 0"),
    (lambda: temperature_scale([[1.0, 0.0]], -1.0), ValueError, "temperature"),
    (lambda: temperature_nll([[1.0, 0.0]], [0], np.nan), ValueError, "NaN"),
    (lambda: fit_temperature([[1.0, np.nan]], [0]), ValueError, "logits"),
    (lambda: fit_temperature([[1.0, 0.0]], [2]), ValueError,
     "targets must be integers in [0, 2); got 2"),
    (lambda: fit_temperature([[1.0, 0.0]], [0, 1]), ValueError, "shape (1,)"),
    (lambda: fit_temperature([1.0, 0.0], [0, 1]), ValueError, "shape (n, M)"),
    (lambda: fit_temperature([[1.0, 0.0]], [0], bounds=(2.0, 1.0)), ValueError,
     "bounds[1]"),
    (lambda: fit_temperature([[1.0, 0.0]], [0], bounds=3.0), TypeError, "bounds"),
])
def test_bad_inputs_to_temperature_scaling_are_named(call, error, words):
    with pytest.raises(error) as info:
        call()
    assert words in str(info.value)


# --- the digits -------------------------------------------------------------------------


def test_digits_shapes_dtypes_and_scale(digits):
    sizes = [len(part.x) for part in digits]
    assert sizes == [1078, 360, 359] and sum(sizes) == 1797
    for part in digits:
        assert part.x.dtype == np.float64 and part.x.shape[1] == 64
        assert part.c.dtype == np.int64 and part.c.shape == part.x.shape[:1]
        assert part.x.min() >= 0 and part.x.max() <= 1
    assert load_digits(dtype=np.float32).test.x.dtype == np.float32


def test_the_split_is_deterministic_disjoint_complete_and_stratified(digits):
    from sklearn.datasets import load_digits as sklearn_digits

    again = load_digits()
    for a, b in zip(digits, again):
        np.testing.assert_array_equal(a.x, b.x)
        np.testing.assert_array_equal(a.c, b.c)
    bunch = sklearn_digits()
    parts = stratified_split(bunch.target, rng=0)
    assert sorted(np.concatenate(parts).tolist()) == list(range(1797))
    np.testing.assert_array_equal(digits.test.x, bunch.data[parts[2]] / 16)
    counts = np.bincount(bunch.target)
    for part, share in zip(digits, (0.6, 0.2, 0.2)):
        assert np.all(np.abs(np.bincount(part.c, minlength=10) - share * counts) <= 1)
    other = load_digits(seed=1)
    assert not np.array_equal(other.test.c, digits.test.c)


def test_without_sklearn_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    with pytest.raises(ImportError, match=r'pip install "scratchnet\[data\]"'):
        load_digits()


def test_import_scratchnet_does_not_import_sklearn():
    code = "import sys, scratchnet; print('sklearn' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("call, error, words", [
    (lambda: load_digits(seed=-1), ValueError, "seed must be a non-negative integer"),
    (lambda: load_digits(seed=1.5), TypeError, "seed"),
    (lambda: load_digits(fractions=(0.5, 0.5, 0.5)), ValueError, "fractions"),
    (lambda: load_digits(dtype=np.int32), ValueError, "dtype"),
    (lambda: stratified_split([0.0, 1.0]), ValueError, "targets"),
])
def test_bad_inputs_to_the_loader_are_named(call, error, words):
    with pytest.raises(error, match=words):
        call()


@pytest.mark.parametrize("dim, counts", [
    (3, [4, 64, 65, 867]),        # classes of 1 block, exactly 1, just over, many
    (1, [2, 200, 129]),
    (70, [71, 140, 141]),          # blocks of D rows when D > 64
])
def test_fit_sums_each_class_alone_whatever_its_size(dim, counts):
    """The blocked per-class sums of GaussianClasses.fit against NumPy's biased
    covariance of each class's rows, taken one class at a time (issue 29: the
    one-hot weighted sum did M times the work)."""
    rng = np.random.default_rng(5)
    c = rng.permutation(np.repeat(np.arange(len(counts)), counts))
    x = rng.standard_normal((c.size, dim)) * rng.uniform(0.5, 2.0, dim) + 3.0 * c[:, None]
    task = sn.GaussianClasses.fit(x, c)
    for k in range(len(counts)):
        rows = x[c == k]
        np.testing.assert_allclose(task.means[k], rows.mean(axis=0), rtol=1e-12)
        expected = np.atleast_2d(np.cov(rows, rowvar=False, bias=True))
        np.testing.assert_allclose(task.covariances[k], expected, rtol=1e-10,
                                   atol=1e-12)
        assert task.priors[k] == pytest.approx(counts[k] / c.size, rel=1e-15, abs=0)
