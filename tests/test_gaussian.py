"""GaussianClasses and two_gaussian_posterior against independent computations.

References used here: the closed forms of REFERENCE.md section 3, Gaussian
densities written out with det and inverse, normal CDFs from math.erf,
Monte Carlo sampling error bounds, a fine trapezoid rule, and a Newton
solver for the population cross-entropy written in this file.
"""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import scratchnet as sn
from scratchnet import gaussian as gaussian_module

LOG_2PI = math.log(2 * math.pi)


# -- independent helpers ---------------------------------------------------------


def normal_cdf(z):
    return 0.5 * (1.0 + np.vectorize(math.erf)(np.asarray(z) / math.sqrt(2.0)))


def log_normal_pdf_1d(x, mu, sd):
    return -0.5 * ((x - mu) / sd) ** 2 - math.log(sd) - 0.5 * LOG_2PI


def log_normal_pdf(x, mu, cov):
    """log N(x; mu, cov) written out with the inverse and the determinant."""
    diff = x - mu
    quad = np.einsum("ni,ij,nj->n", diff, np.linalg.inv(cov), diff)
    return -0.5 * quad - 0.5 * math.log(np.linalg.det(cov)) - 0.5 * len(mu) * LOG_2PI


def two_class_log_joint(x, mu, sd, priors):
    """(n, 2) log P(x, c) for a 1-D two-class task, written out."""
    return np.stack(
        [log_normal_pdf_1d(x, mu[c], sd[c]) + math.log(priors[c]) for c in (0, 1)],
        axis=1,
    )


def trapezoid_grid(mu, sd, n=200_001):
    lo = min(m - 14 * s for m, s in zip(mu, sd))
    hi = max(m + 14 * s for m, s in zip(mu, sd))
    x = np.linspace(lo, hi, n)
    w = np.full(n, x[1] - x[0])
    w[[0, -1]] *= 0.5
    return x, w


def composite_gauss_legendre(lo, hi, panels, nodes=10):
    t, w = np.polynomial.legendre.leggauss(nodes)
    edges = np.linspace(lo, hi, panels + 1)
    half = 0.5 * np.diff(edges)[:, None]
    x = (0.5 * (edges[1:] + edges[:-1])[:, None] + half * t).ravel()
    return x, (half * w).ravel()


def logistic(x, coef):
    """A 1-D two-class logistic model on (1, x) with class-0 logit coef @ (1, x)."""
    logit = coef[0] + coef[1] * np.asarray(x).reshape(-1)
    p0 = 1.0 / (1.0 + np.exp(-logit))
    return np.stack([p0, 1.0 - p0], axis=1)


SEPARATED = sn.GaussianClasses([0.0, 3.0], [1.0, 1.0], name="separated")


def rotation(theta):
    return np.array([[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]])


def rotated_task(mu, sd, priors, theta=0.7, other_var=1.3):
    """A 2-D task whose classes differ only along a rotated axis: same P(C|x) structure."""
    r = rotation(theta)
    means = np.array([[m, 0.0] for m in mu]) @ r.T
    covs = np.array([r @ np.diag([s**2, other_var]) @ r.T for s in sd])
    return sn.GaussianClasses(means, covs, priors), r


# -- the posterior ----------------------------------------------------------------


def test_separated_posterior_is_the_reference_closed_form():
    x = np.linspace(-6.0, 9.0, 301)
    post = SEPARATED.posterior(x)
    np.testing.assert_allclose(post[:, 0], 1 / (1 + np.exp((6 * x - 9) / 2)), rtol=1e-12)
    np.testing.assert_allclose(post[:, 1], 1 / (1 + np.exp((-6 * x + 9) / 2)), rtol=1e-12)
    np.testing.assert_allclose(
        sn.two_gaussian_posterior(x, 0.0, 1.0, 3.0, 1.0),
        1 / (1 + np.exp((6 * x - 9) / 2)),
        rtol=1e-12,
    )


def test_two_gaussian_posterior_is_the_reference_formula():
    x = np.linspace(-4.0, 6.0, 41)
    s1, m1, s2, m2, p1 = 2.0, 0.0, 1.0, 3.0, 0.3
    expo = (s2**2 * (x - m1) ** 2 - s1**2 * (x - m2) ** 2) / (2 * s1**2 * s2**2)
    ref = 1 / (1 + (s1 / s2) * ((1 - p1) / p1) * np.exp(expo))
    np.testing.assert_allclose(sn.two_gaussian_posterior(x, m1, s1, m2, s2, p1), ref,
                               rtol=1e-12)


@settings(max_examples=25)
@given(
    mu=st.tuples(st.floats(-5, 5), st.floats(-5, 5)),
    sd=st.tuples(st.floats(0.2, 5), st.floats(0.2, 5)),
    prior=st.floats(0.05, 0.95),
)
def test_two_gaussian_posterior_matches_gaussian_classes(mu, sd, prior):
    task = sn.GaussianClasses(list(mu), list(sd), [prior, 1 - prior])
    x = np.linspace(-12.0, 12.0, 49)
    post = task.posterior(x)
    p1 = sn.two_gaussian_posterior(x, mu[0], sd[0], mu[1], sd[1], prior)
    p2 = sn.two_gaussian_posterior(x, mu[1], sd[1], mu[0], sd[0], 1 - prior)
    np.testing.assert_allclose(post[:, 0], p1, rtol=1e-10, atol=1e-300)
    np.testing.assert_allclose(post[:, 1], p2, rtol=1e-10, atol=1e-300)
    # and Bayes' rule written out
    log_joint = two_class_log_joint(x, mu, sd, (prior, 1 - prior))
    ref = np.exp(log_joint - np.logaddexp(log_joint[:, :1], log_joint[:, 1:]))
    np.testing.assert_allclose(post, ref, rtol=1e-10, atol=1e-300)


def test_two_gaussian_posterior_shapes_and_dtypes():
    assert sn.two_gaussian_posterior(1.5, 0, 1, 3, 1) == pytest.approx(0.5, abs=1e-15)
    out = sn.two_gaussian_posterior(np.zeros((2, 3), dtype=np.float32), 0, 1, 3, 1)
    assert out.shape == (2, 3) and out.dtype == np.float32


MULTI_MEANS = np.array([[0.0, 0.0], [2.0, 1.0], [-1.0, 2.5]])
MULTI_COVS = np.array([
    [[1.0, 0.3], [0.3, 0.5]],
    [[2.0, -0.8], [-0.8, 1.0]],
    [[0.7, 0.0], [0.0, 1.5]],
])
MULTI_PRIORS = np.array([0.5, 0.3, 0.2])


def test_multiclass_2d_matches_written_out_densities():
    task = sn.GaussianClasses(MULTI_MEANS, MULTI_COVS, MULTI_PRIORS)
    x = np.random.default_rng(3).normal(scale=3.0, size=(50, 2))
    ref = np.stack(
        [log_normal_pdf(x, MULTI_MEANS[c], MULTI_COVS[c]) for c in range(3)], axis=1
    )
    np.testing.assert_allclose(task.log_class_densities(x), ref, rtol=1e-12)
    joint = np.exp(ref) * MULTI_PRIORS
    np.testing.assert_allclose(task.log_joint(x), np.log(joint), rtol=1e-12)
    np.testing.assert_allclose(task.density(x), joint.sum(1), rtol=1e-12)
    np.testing.assert_allclose(task.log_evidence(x), np.log(joint.sum(1)), rtol=1e-12)
    np.testing.assert_allclose(task.posterior(x), joint / joint.sum(1, keepdims=True),
                               rtol=1e-10)
    log_post = np.log(joint) - np.log(joint.sum(1, keepdims=True))
    np.testing.assert_allclose(task.log_posterior(x), log_post, rtol=1e-10, atol=1e-14)


def test_three_dimensional_densities():
    rng = np.random.default_rng(4)
    a = rng.normal(size=(2, 3, 3))
    covs = a @ a.transpose(0, 2, 1) + 0.5 * np.eye(3)
    means = rng.normal(size=(2, 3))
    task = sn.GaussianClasses(means, covs, [0.4, 0.6])
    x = rng.normal(size=(20, 3))
    ref = np.stack([log_normal_pdf(x, means[c], covs[c]) for c in range(2)], axis=1)
    np.testing.assert_allclose(task.log_class_densities(x), ref, rtol=1e-12)


def test_one_dimensional_task_accepts_both_input_shapes():
    x = np.linspace(-2, 5, 7)
    np.testing.assert_array_equal(SEPARATED.posterior(x), SEPARATED.posterior(x[:, None]))
    assert SEPARATED.log_evidence(x).shape == (7,)
    assert SEPARATED.log_joint(x).shape == (7, 2)


EXTREME = [-1e300, -1e200, -1e150, -1e3, 1e3, 1e150, 1e200, 1e300, 1.7e308]


def test_posterior_far_away_is_exact_and_silent():
    x = np.array(EXTREME)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        log_post = SEPARATED.log_posterior(x)
        post = SEPARATED.posterior(x)
        closed = sn.two_gaussian_posterior(x, 0.0, 1.0, 3.0, 1.0)
        dens = SEPARATED.density(x)
    assert np.isfinite(post).all()
    np.testing.assert_allclose(post.sum(1), 1.0, rtol=1e-15)
    np.testing.assert_array_equal(post[:, 0], closed)
    np.testing.assert_array_equal(post[:, 0], (x < 0).astype(float))
    # log P(c1|x) - log P(c2|x) = -(6x - 9)/2 exactly, where it is finite
    finite = np.isfinite(log_post).all(1)
    np.testing.assert_allclose((log_post[:, 0] - log_post[:, 1])[finite],
                               -(6 * x[finite] - 9) / 2, rtol=1e-15)
    assert log_post[3, 1] == -3004.5 and log_post[4, 0] == -2995.5
    assert (dens == 0).all()


def test_unequal_variances_far_away_favour_the_wide_class():
    task = sn.GaussianClasses([0.0, 1.0], [2.0, 1.0])
    x = np.array(EXTREME)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        post = task.posterior(x)
        closed = sn.two_gaussian_posterior(x, 0.0, 2.0, 1.0, 1.0)
    np.testing.assert_array_equal(post[:, 0], 1.0)
    np.testing.assert_array_equal(closed, 1.0)


def test_coinciding_classes_keep_their_priors_everywhere():
    task = sn.GaussianClasses([1.0, 1.0], [2.0, 2.0], [0.3, 0.7])
    post = task.posterior(np.array([0.0, *EXTREME]))
    np.testing.assert_allclose(post, np.tile([0.3, 0.7], (len(EXTREME) + 1, 1)),
                               rtol=1e-14)


def test_posterior_far_away_in_two_dimensions():
    # Classes differing only along x1: the posterior is the 1-D one at x1,
    # and a rotated copy has the posterior of the rotated point.
    flat = sn.GaussianClasses([[0.0, 5.0], [3.0, 5.0]],
                              [np.diag([1.0, 2.0]), np.diag([1.0, 2.0])])
    rotated, r = rotated_task([0.0, 3.0], [1.0, 1.0], [0.5, 0.5])
    x1 = np.array([-1e3, 1e3, 1e200, -1e300, 1.5, 0.3])
    pts = np.stack([x1, np.array([1e3, -1e3, 1e200, 7.0, 2.0, -4.0])], axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        post = flat.posterior(pts)
        post_rot = rotated.posterior(pts[[0, 1, 4, 5]] @ r.T)
    np.testing.assert_allclose(post[:, 0], sn.two_gaussian_posterior(x1, 0, 1, 3, 1),
                               rtol=1e-12)
    np.testing.assert_allclose(post_rot[:, 0], post[[0, 1, 4, 5], 0], rtol=1e-9,
                               atol=1e-300)
    assert np.isfinite(post).all()
    np.testing.assert_allclose(post.sum(1), 1.0, rtol=1e-15)


# -- sampling -------------------------------------------------------------------------


def test_sample_shapes_dtypes_and_reproducibility():
    x, c = SEPARATED.sample(64, np.random.default_rng(0))
    assert x.shape == (64, 1) and x.dtype == np.float64
    assert c.shape == (64,) and c.dtype == np.int64
    x2, c2 = SEPARATED.sample(64, 0)
    x3, c3 = SEPARATED.sample(64, 0)
    np.testing.assert_array_equal(x2, x3)
    np.testing.assert_array_equal(c2, c3)
    x0, c0 = SEPARATED.sample(0, 0)
    assert x0.shape == (0, 1) and c0.shape == (0,)
    task = sn.GaussianClasses(MULTI_MEANS, MULTI_COVS, MULTI_PRIORS)
    x, c = task.sample(5, 1)
    assert x.shape == (5, 2) and c.dtype == np.int64


def _check_frequencies(c, probs):
    n = len(c)
    freq = np.bincount(c, minlength=len(probs)) / n
    se = np.sqrt(np.asarray(probs) * (1 - np.asarray(probs)) / n)
    assert np.all(np.abs(freq - probs) < 5 * se), (freq, probs)


def test_sample_matches_priors_means_and_variances_1d():
    mu, sd, priors = [-1.0, 2.0, 0.5], [0.5, 1.5, 3.0], [0.2, 0.5, 0.3]
    x, c = sn.GaussianClasses(mu, sd, priors).sample(1_000_000, 42)
    _check_frequencies(c, priors)
    for k in range(3):
        xk = x[c == k, 0]
        n = len(xk)
        assert abs(xk.mean() - mu[k]) < 5 * sd[k] / math.sqrt(n)
        assert abs(xk.var(ddof=1) - sd[k] ** 2) < 5 * sd[k] ** 2 * math.sqrt(2 / (n - 1))


def test_sample_two_classes_matches_priors():
    _, c = sn.GaussianClasses([0.0, 3.0], [1.0, 1.0], [0.3, 0.7]).sample(100_000, 5)
    _check_frequencies(c, [0.3, 0.7])


def test_sample_matches_means_and_covariances_2d():
    task = sn.GaussianClasses(MULTI_MEANS, MULTI_COVS, MULTI_PRIORS)
    x, c = task.sample(200_000, 7)
    _check_frequencies(c, MULTI_PRIORS)
    for k in range(3):
        xk = x[c == k]
        n, cov = len(xk), MULTI_COVS[k]
        se_mean = np.sqrt(np.diag(cov) / n)
        assert np.all(np.abs(xk.mean(0) - MULTI_MEANS[k]) < 5 * se_mean)
        var_entry = (np.outer(np.diag(cov), np.diag(cov)) + cov**2) / n
        assert np.all(np.abs(np.cov(xk.T) - cov) < 5 * np.sqrt(var_entry))


@pytest.mark.parametrize("point", [-1.0, 1.0, 2.5])
def test_sample_labels_follow_the_posterior(point):
    task = sn.GaussianClasses([0.0, 1.0, 3.0], [2.0, 1.0, 0.7], [0.3, 0.3, 0.4])
    n = 100_000
    c = task.sample_labels(np.full(n, point), 11)
    assert c.dtype == np.int64 and c.shape == (n,)
    _check_frequencies(c, task.posterior([point])[0])


def test_sample_labels_never_draw_impossible_classes():
    c = SEPARATED.sample_labels(np.array([-1e3] * 50 + [1e3] * 50), 0)
    np.testing.assert_array_equal(c, [0] * 50 + [1] * 50)


# -- Bayes loss, accuracy, expected KL, population loss ---------------------------------


def entropy_of(p):
    p = np.asarray(p, dtype=float)
    return float(-(p * np.log(p)).sum())


@pytest.mark.parametrize("priors", [[0.5, 0.5], [0.2, 0.5, 0.3]])
def test_bayes_loss_of_coinciding_classes_is_the_prior_entropy(priors):
    m = len(priors)
    task_1d = sn.GaussianClasses([1.0] * m, [2.0] * m, priors)
    task_2d = sn.GaussianClasses([[1.0, -1.0]] * m, [MULTI_COVS[0]] * m, priors)
    for task in (task_1d, task_2d):
        assert task.bayes_loss() == pytest.approx(entropy_of(priors), abs=1e-12)
        assert task.bayes_accuracy() == pytest.approx(max(priors), abs=1e-12)


def test_bayes_loss_vanishes_as_classes_separate():
    losses = [sn.GaussianClasses([0.0, d], [1.0, 1.0]).bayes_loss() for d in (1, 2, 4, 8)]
    assert all(a > b for a, b in zip(losses, losses[1:]))
    assert sn.GaussianClasses([0.0, 100.0], [1.0, 1.0]).bayes_loss() < 1e-12
    assert sn.GaussianClasses([0.0, 100.0], [1.0, 1.0]).bayes_accuracy() == pytest.approx(1.0)


@pytest.mark.parametrize("mu, sd, loss, accuracy", [
    ([0.0, 3.0], [1.0, 1.0], 0.166, 93.32),
    ([0.0, 1.0], [2.0, 1.0], 0.565, 69.50),
    ([0.0, 3.0], [2.0, 1.0], 0.342, 85.39),
])
def test_reference_bayes_loss_and_accuracy(mu, sd, loss, accuracy):
    task = sn.GaussianClasses(mu, sd)
    assert round(task.bayes_loss(), 3) == loss
    assert round(100 * task.bayes_accuracy(), 2) == accuracy


@pytest.mark.parametrize("mu, sd, priors", [
    ([0.0, 3.0], [1.0, 1.0], [0.5, 0.5]),
    ([0.0, 1.0], [2.0, 1.0], [0.5, 0.5]),
    ([0.0, 3.0], [2.0, 1.0], [0.3, 0.7]),
    ([-1.0, 0.5, 4.0], [0.5, 2.0, 1.0], [0.2, 0.5, 0.3]),
    ([0.0, 3.0], [1.0, 100.0], [0.5, 0.5]),
])
def test_quadrature_matches_a_fine_trapezoid_rule(mu, sd, priors):
    task = sn.GaussianClasses(mu, sd, priors)
    x, w = trapezoid_grid(mu, sd)
    log_joint = np.stack([log_normal_pdf_1d(x, mu[c], sd[c]) + math.log(priors[c])
                          for c in range(len(mu))], axis=1)
    log_evidence = np.logaddexp.reduce(log_joint, axis=1)
    joint = np.exp(log_joint)
    log_post = log_joint - log_evidence[:, None]
    h = -(w[:, None] * joint * np.where(joint > 0, log_post, 0.0)).sum()
    acc = (w * joint.max(1)).sum()
    assert task.bayes_loss() == pytest.approx(h, abs=1e-10)
    assert task.bayes_accuracy() == pytest.approx(acc, abs=1e-7)   # kinks: O(h^2)
    # a smooth, deliberately wrong model
    def model(z):
        q = np.full((len(z), len(mu)), 1.0)
        q[:, 0] += 0.5 * np.tanh(z[:, 0])
        return q / q.sum(1, keepdims=True)

    q = model(x[:, None])
    pop = -(w[:, None] * joint * np.log(q)).sum()
    assert task.population_loss(model) == pytest.approx(pop, abs=1e-10)
    assert task.expected_kl(model) == pytest.approx(pop - h, abs=1e-10)


def test_bayes_accuracy_is_exact_for_equal_variances():
    # Equal variances and priors: accuracy = Phi(|mu1 - mu2| / (2 sd)).
    for d, s in [(3.0, 1.0), (1.0, 2.0), (0.1, 0.5)]:
        task = sn.GaussianClasses([0.0, d], [s, s])
        assert task.bayes_accuracy() == pytest.approx(float(normal_cdf(d / (2 * s))),
                                                      abs=1e-14)


def test_quadrature_converges_when_nodes_double(monkeypatch):
    monkeypatch.setattr(gaussian_module, "_MAX_NODES", 10**6)
    tasks = [sn.GaussianClasses([0.0, 3.0], [2.0, 1.0]),
             sn.GaussianClasses([-1.0, 0.5, 4.0], [0.5, 2.0, 1.0], [0.2, 0.5, 0.3]),
             rotated_task([0.0, 3.0], [2.0, 1.0], [0.5, 0.5])[0]]
    def model(z):
        return np.full((len(z), 2), [0.3, 0.7])

    coarse = [t.bayes_loss() for t in tasks] + [tasks[0].expected_kl(model)]
    monkeypatch.setattr(gaussian_module, "_NODES_PER_PANEL", 16)
    tasks = [sn.GaussianClasses(t.means, t.scales, t.priors) for t in tasks]
    fine = [t.bayes_loss() for t in tasks] + [tasks[0].expected_kl(model)]
    np.testing.assert_allclose(coarse, fine, rtol=0, atol=1e-12)


@pytest.mark.parametrize("mu, sd, priors", [
    ([0.0, 3.0], [1.0, 1.0], [0.5, 0.5]),
    ([0.0, 3.0], [2.0, 1.0], [0.3, 0.7]),
])
def test_two_dimensional_integrals_are_rotation_invariant(mu, sd, priors):
    flat = sn.GaussianClasses(mu, sd, priors)
    rotated, _ = rotated_task(mu, sd, priors)
    assert rotated.bayes_loss(return_stderr=True)[1] == 0.0     # quadrature, not MC
    assert rotated.bayes_loss() == pytest.approx(flat.bayes_loss(), abs=1e-10)
    assert rotated.bayes_accuracy() == pytest.approx(flat.bayes_accuracy(), abs=1e-9)


def test_two_dimensional_quadrature_with_very_different_scales():
    task = sn.GaussianClasses([[0.0, 0.0], [3.0, 1.0]], [np.eye(2), 100 * np.eye(2)])
    loss, stderr = task.bayes_loss(return_stderr=True)
    assert stderr == 0.0
    x, _ = task.sample(200_000, 9)
    post = task.posterior(x)
    values = -(post * np.log(post, where=post > 0, out=np.zeros_like(post))).sum(1)
    assert abs(loss - values.mean()) < 5 * values.std() / math.sqrt(len(values))


def test_two_dimensional_accuracy_with_correlated_equal_covariances():
    # Equal covariance: accuracy = Phi(Delta / 2), Delta the Mahalanobis distance.
    cov = np.array([[1.0, 0.6], [0.6, 0.5]])
    means = np.array([[0.0, 0.0], [1.0, 2.0]])
    diff = means[1] - means[0]
    delta = math.sqrt(diff @ np.linalg.solve(cov, diff))
    task = sn.GaussianClasses(means, [cov, cov])
    assert task.bayes_accuracy() == pytest.approx(float(normal_cdf(delta / 2)), abs=1e-9)


def test_population_loss_is_bayes_loss_plus_expected_kl():
    task2 = sn.GaussianClasses(MULTI_MEANS, MULTI_COVS, MULTI_PRIORS)
    task3 = sn.GaussianClasses([-1.0, 0.5, 4.0], [0.5, 2.0, 1.0], [0.2, 0.5, 0.3])
    models = [
        lambda x: logistic(x, [1.0, -0.5]),
        lambda x: logistic(x, [-2.0, 3.0]),
        lambda x: np.full((len(x), 2), 0.5),
    ]
    for task in (SEPARATED, sn.GaussianClasses([0.0, 3.0], [2.0, 1.0])):
        for model in models:
            kl = task.expected_kl(model)
            assert kl > 0
            assert task.population_loss(model) == pytest.approx(
                task.bayes_loss() + kl, abs=1e-9)
    def soft(x):
        return sn.softmax(x @ np.array([[1.0, -1.0, 0.2], [0.3, 0.1, -0.5]]))
    def tilted(x):
        return sn.softmax(task3.log_posterior(x) + np.array([0.5, 0.0, -0.5]))
    for task, model in [(task2, soft), (task3, tilted)]:
        assert task.population_loss(model) == pytest.approx(
            task.bayes_loss() + task.expected_kl(model), abs=1e-9)


def test_expected_kl_of_the_posterior_is_zero():
    for task in (SEPARATED, sn.GaussianClasses(MULTI_MEANS, MULTI_COVS, MULTI_PRIORS)):
        assert abs(task.expected_kl(task.posterior)) < 1e-12
        assert task.population_loss(task.posterior) == pytest.approx(task.bayes_loss(),
                                                                     abs=1e-12)


def test_constant_models_have_closed_form_population_loss():
    # E_x P(c|x) = P(c), so predicting q(c|x) = r_c costs -sum_c P(c) log r_c.
    task = sn.GaussianClasses([-1.0, 0.5, 4.0], [0.5, 2.0, 1.0], [0.2, 0.5, 0.3])
    r = np.array([0.1, 0.6, 0.3])
    ref = -(task.priors * np.log(r)).sum()
    assert task.population_loss(lambda x: np.tile(r, (len(x), 1))) == pytest.approx(
        ref, abs=1e-12)
    assert task.population_loss(lambda x: np.tile(task.priors, (len(x), 1))) == (
        pytest.approx(entropy_of(task.priors), abs=1e-12))


def test_a_zero_probability_where_the_posterior_is_positive_costs_infinity():
    def certain(x):
        return np.tile([1.0, 0.0], (len(x), 1))

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert SEPARATED.expected_kl(certain) == math.inf
        assert SEPARATED.population_loss(certain) == math.inf


def test_return_stderr_for_quadrature():
    value, stderr = SEPARATED.bayes_loss(return_stderr=True)
    assert value == SEPARATED.bayes_loss() and stderr == 0.0
    value, stderr = SEPARATED.bayes_accuracy(return_stderr=True)
    assert value == SEPARATED.bayes_accuracy() and stderr == 0.0


def test_monte_carlo_in_three_dimensions():
    # Classes differing only along the first axis: the 1-D values are exact.
    flat = sn.GaussianClasses([0.0, 3.0], [2.0, 1.0])
    covs = [np.diag([4.0, 1.0, 2.0]), np.diag([1.0, 1.0, 2.0])]
    task = sn.GaussianClasses([[0.0, 1.0, -1.0], [3.0, 1.0, -1.0]], covs)
    for method in ("bayes_loss", "bayes_accuracy"):
        value, stderr = getattr(task, method)(return_stderr=True, n_samples=20_000)
        assert 0 < stderr < 0.01
        assert abs(value - getattr(flat, method)()) < 5 * stderr
        again = getattr(task, method)(n_samples=20_000)
        assert again == value                     # cached fixed-seed sample
        other = getattr(task, method)(n_samples=20_000, rng=1)
        assert other != value and abs(other - value) < 10 * stderr
    def model(x):
        return np.tile([0.5, 0.5], (len(x), 1))

    pop, se = task.population_loss(model, return_stderr=True, n_samples=20_000)
    assert pop == pytest.approx(math.log(2), abs=1e-12) and se == pytest.approx(0, abs=1e-12)
    kl = task.expected_kl(model, n_samples=20_000)
    assert kl == pytest.approx(pop - task.bayes_loss(n_samples=20_000), abs=1e-12)


# -- the loss minimiser is the posterior ------------------------------------------------


def newton_logistic(phi, weights0, weights1, iters=100):
    """Minimise sum_k w0_k (-log s(f_k)) + w1_k (-log s(-f_k)), f = phi @ theta.

    The population cross-entropy of a two-class logistic model with class-0
    logit f: convex, so Newton's method with backtracking converges.
    """
    def loss(theta):
        f = phi @ theta
        return weights0 @ np.logaddexp(0.0, -f) + weights1 @ np.logaddexp(0.0, f)

    theta = np.zeros(phi.shape[1])
    total = weights0 + weights1
    current = loss(theta)
    for _ in range(iters):
        f = phi @ theta
        q = 0.5 * (1 + np.tanh(0.5 * f))          # sigmoid, no overflow
        grad = phi.T @ (total * q - weights0)
        hess = (phi * (total * q * (1 - q))[:, None]).T @ phi
        step = np.linalg.solve(hess, grad)
        if grad @ step < 1e-28:
            break
        t = 1.0
        while loss(theta - t * step) > current and t > 1e-10:
            t *= 0.5
        theta = theta - t * step
        current = loss(theta)
    return theta, current


def quadratic_features(x, centre, scale):
    u = (x - centre) / scale
    return np.stack([np.ones_like(u), u, u * u], axis=1)


@settings(max_examples=15)
@given(
    mu=st.tuples(st.floats(-3, 3), st.floats(-3, 3)),
    sd=st.tuples(st.floats(0.5, 3), st.floats(0.5, 3)),
    prior=st.floats(0.1, 0.9),
)
def test_minimiser_of_the_population_loss_is_the_posterior(mu, sd, prior):
    priors = (prior, 1 - prior)
    task = sn.GaussianClasses(list(mu), list(sd), list(priors))
    lo = min(m - 12 * s for m, s in zip(mu, sd))
    hi = max(m + 12 * s for m, s in zip(mu, sd))
    x, w = composite_gauss_legendre(lo, hi, panels=int((hi - lo) / 0.1))
    log_joint = two_class_log_joint(x, mu, sd, priors)
    joint = w[:, None] * np.exp(log_joint)                  # w_k P(x_k, c)
    centre, scale = 0.5 * (lo + hi), 0.5 * (hi - lo)
    phi = quadratic_features(x, centre, scale)
    theta, minimum = newton_logistic(phi, joint[:, 0], joint[:, 1])

    def model(z):
        f = quadratic_features(np.asarray(z)[:, 0], centre, scale) @ theta
        return np.exp(-np.logaddexp(0.0, np.stack([-f, f], axis=1)))

    low, high = task.support(0.99)
    grid = np.linspace(low, high, 401)
    q = model(grid[:, None])
    assert np.max(np.abs(q - task.posterior(grid))) < 1e-4
    assert minimum == pytest.approx(task.bayes_loss(), abs=1e-6)
    assert task.population_loss(model) == pytest.approx(task.bayes_loss(), abs=1e-6)

    # Inputs from another distribution (a wide normal), labels from the
    # posterior: the weights change, the minimiser does not.
    log_post = log_joint - np.logaddexp(log_joint[:, :1], log_joint[:, 1:])
    other = w * np.exp(log_normal_pdf_1d(x, 0.5 * (lo + hi), 0.4 * (hi - lo)))
    theta_other, _ = newton_logistic(phi, other * np.exp(log_post[:, 0]),
                                     other * np.exp(log_post[:, 1]))
    f_grid = quadratic_features(grid, centre, scale)
    p_other = 0.5 * (1 + np.tanh(0.5 * (f_grid @ theta_other)))
    assert np.max(np.abs(p_other - q[:, 0])) < 1e-4


# -- support and decision boundaries ---------------------------------------------------


def test_support_of_a_normal_is_its_central_interval():
    low, high = sn.GaussianClasses([2.0], [3.0]).support(0.95)
    assert low == pytest.approx(2.0 - 3.0 * 1.959963984540054, abs=1e-9)
    assert high == pytest.approx(2.0 + 3.0 * 1.959963984540054, abs=1e-9)


def test_support_of_a_mixture_has_the_right_tails():
    mu, sd, priors = np.array([0.0, 3.0]), np.array([2.0, 1.0]), np.array([0.3, 0.7])
    low, high = sn.GaussianClasses(mu, sd, priors).support(0.999)
    def cdf(t):
        return float((priors * normal_cdf((t - mu) / sd)).sum())

    assert cdf(low) == pytest.approx(0.0005, rel=1e-9)
    assert 1 - cdf(high) == pytest.approx(0.0005, rel=1e-6)
    assert low < high


def test_support_in_two_dimensions_is_a_box_holding_the_mass():
    task = sn.GaussianClasses(MULTI_MEANS, MULTI_COVS, MULTI_PRIORS)
    low, high = task.support(0.99)
    assert low.shape == high.shape == (2,)
    for d in range(2):   # each axis leaves (1 - 0.99) / 4 in each tail
        sd = np.sqrt(MULTI_COVS[:, d, d])
        lower = (MULTI_PRIORS * normal_cdf((low[d] - MULTI_MEANS[:, d]) / sd)).sum()
        assert lower == pytest.approx(0.0025, rel=1e-9)
    x, _ = task.sample(20_000, 3)
    inside = np.all((x >= low) & (x <= high), axis=1).mean()
    assert inside > 0.99 - 5 * math.sqrt(0.01 * 0.99 / 20_000)


def test_decision_boundaries():
    sparse = sn.GaussianClasses([0.0, 3.0], [2.0, 1.0])
    roots = sparse.decision_boundaries()
    assert len(roots) == 2 and round(roots[1], 3) == 6.418
    np.testing.assert_allclose(sparse.posterior(roots), 0.5, rtol=1e-12)
    np.testing.assert_allclose(SEPARATED.decision_boundaries(), [1.5], rtol=1e-15)
    assert sn.GaussianClasses([1.0, 1.0], [1.0, 1.0]).decision_boundaries().size == 0
    # A class so likely that it wins everywhere: no crossing.
    assert sn.GaussianClasses([0.0, 0.0], [1.1, 1.0], [0.99, 0.01]).decision_boundaries(
    ).size == 0
    with pytest.raises(ValueError, match="two classes"):
        sn.GaussianClasses([0.0, 1.0, 2.0], [1.0, 1.0, 1.0]).decision_boundaries()


# -- the object and its validation ---------------------------------------------------------


def test_attributes_and_repr():
    task = sn.GaussianClasses(MULTI_MEANS, MULTI_COVS, name="three")
    assert task.num_classes == 3 and task.dim == 2 and task.name == "three"
    np.testing.assert_allclose(task.priors, [1 / 3] * 3)
    assert "name='three'" in repr(task) and "means=[[0.0, 0.0]" in repr(task)
    assert SEPARATED.dim == 1 and SEPARATED.means.shape == (2,)
    with pytest.raises(ValueError, match="read-only"):
        task.means[0, 0] = 1.0


@pytest.mark.parametrize("args, kwargs, error, match", [
    (([0.0, 1.0], [1.0, -1.0]), {}, ValueError, r"scales must be positive .* -1 at index 1"),
    (([0.0, 1.0], [1.0, 0.0]), {}, ValueError, "scales must be positive"),
    (([0.0, 1.0], [1.0]), {}, ValueError, r"scales must have shape \(M,\) = \(2,\)"),
    (([0.0, 1.0], [1.0, 1.0], [0.5, 0.6]), {}, ValueError, "priors must sum to 1"),
    (([0.0, 1.0], [1.0, 1.0], [1.0, 0.0]), {}, ValueError, "priors must be positive"),
    (([0.0, 1.0], [1.0, 1.0], [0.2, 0.3, 0.5]), {}, ValueError,
     r"priors must have shape \(M,\) = \(2,\)"),
    (([0.0, np.nan], [1.0, 1.0]), {}, ValueError, "means must not contain NaN"),
    (([0.0, 1.0], [1.0, np.inf]), {}, ValueError, "scales must be finite"),
    ((5.0, 1.0), {}, ValueError, r"means must have shape \(M,\) or \(M, D\)"),
    (([[0.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]]), {}, ValueError,
     r"scales must have shape \(M, D, D\) = \(1, 2, 2\)"),
    (([[0.0, 0.0]], [[[1.0, 0.5], [0.4, 1.0]]]), {}, ValueError,
     r"scales\[0\] must be a symmetric covariance matrix"),
    (([[0.0, 0.0], [1.0, 1.0]], [np.eye(2), [[1.0, 2.0], [2.0, 1.0]]]), {}, ValueError,
     r"scales\[1\] must be positive definite .* eigenvalue -1"),
    (([0.0, 1.0], [1.0, 1.0]), {"name": 3}, TypeError, "name must be a string"),
    ((["a", "b"], [1.0, 1.0]), {}, TypeError, "means must be an array of real numbers"),
])
def test_bad_parameters_are_rejected(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        sn.GaussianClasses(*args, **kwargs)


def test_bad_inputs_are_rejected():
    task2 = sn.GaussianClasses(MULTI_MEANS, MULTI_COVS)
    with pytest.raises(ValueError, match=r"x must have shape \(n, 2\).*got shape \(5, 3\)"):
        task2.posterior(np.zeros((5, 3)))
    with pytest.raises(ValueError, match=r"x must have shape \(n, 2\).*got shape \(4,\)"):
        task2.log_joint(np.zeros(4))
    with pytest.raises(ValueError, match=r"x must have shape \(n, 1\) or \(n,\)"):
        SEPARATED.posterior(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="x must not contain NaN; got NaN at index 1"):
        SEPARATED.posterior([0.0, np.nan])
    with pytest.raises(ValueError, match="x must be finite"):
        SEPARATED.density([np.inf])
    with pytest.raises(ValueError, match="n must be an integer >= 0; got -1"):
        SEPARATED.sample(-1, 0)
    with pytest.raises(TypeError, match="n must be an integer"):
        SEPARATED.sample(2.0, 0)
    with pytest.raises(TypeError, match=r"rng must be a numpy\.random\.Generator"):
        SEPARATED.sample(2, "seed")
    with pytest.raises(ValueError, match=r"mass must be in \(0, 1\)"):
        SEPARATED.support(1.0)


def test_bad_models_are_rejected():
    with pytest.raises(ValueError, match=r"predict_proba\(x\) must return probabilities "
                                         r"of shape \(n, M\) = \(\d+, 2\)"):
        SEPARATED.expected_kl(lambda x: np.full((len(x), 3), 1 / 3))
    with pytest.raises(ValueError, match=r"predict_proba\(x\) must sum to 1"):
        SEPARATED.population_loss(lambda x: np.full((len(x), 2), 0.6))
    with pytest.raises(ValueError, match=r"predict_proba\(x\) must be non-negative"):
        SEPARATED.expected_kl(lambda x: np.tile([1.5, -0.5], (len(x), 1)))
    with pytest.raises(ValueError, match=r"predict_proba\(x\) must not contain NaN"):
        SEPARATED.expected_kl(lambda x: np.full((len(x), 2), np.nan))
    with pytest.raises(TypeError, match="predict_proba must be callable"):
        SEPARATED.expected_kl(np.ones((3, 2)))


@pytest.mark.parametrize("kwargs, match", [
    ({"sigma1": -1.0}, r"sigma1 must be in \(0, inf\]"),
    ({"sigma2": 0.0}, r"sigma2 must be in \(0, inf\]"),
    ({"prior1": 1.0}, r"prior1 must be in \(0, 1\)"),
    ({"mu1": math.inf}, "mu1 must be finite"),
])
def test_two_gaussian_posterior_rejects_bad_parameters(kwargs, match):
    params = {"mu1": 0.0, "sigma1": 1.0, "mu2": 3.0, "sigma2": 1.0, "prior1": 0.5}
    params.update(kwargs)
    with pytest.raises(ValueError, match=match):
        sn.two_gaussian_posterior([0.0], **params)
