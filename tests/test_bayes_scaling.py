"""The Bayes floor at scale: quadrature sized first, Monte Carlo with a stated error.

Every integral (Bayes loss, Bayes accuracy, expected KL, population loss) is
reached through the Monte Carlo fallback in one, two and five dimensions and
checked, with fixed seeds, against independent closed forms within a few
standard errors: the normal CDF Phi(Delta / 2) for the accuracy of two classes
with equal covariances (Delta the Mahalanobis distance, from the eigenvectors
written out here), the Bayes loss of the equivalent 1-D task from a trapezoid
rule over densities written out here, log 2 minus it for a coin-flip model,
and -sum_c P(c) log r_c for a constant model.  The refusals (quadrature grids
too large, counted before anything is allocated) are checked with tracemalloc.
"""

import math
import tracemalloc
import warnings

import numpy as np
import pytest
from _gaussians import log_normal_pdf_1d, normal_cdf

import scratchnet as sn
from scratchnet.bayes import Estimate

# -- independent references -------------------------------------------------------


def two_class_bayes_loss(delta, n=400_001):
    """H(C|X) of N(0, 1) vs N(delta, 1), equal priors, by the trapezoid rule."""
    x = np.linspace(-14.0, delta + 14.0, n)
    log_joint = np.stack([log_normal_pdf_1d(x, 0.0, 1.0), log_normal_pdf_1d(x, delta, 1.0)],
                         axis=1) + math.log(0.5)
    log_post = log_joint - np.logaddexp(log_joint[:, :1], log_joint[:, 1:])
    f = -(np.exp(log_joint) * log_post).sum(axis=1)
    return float(np.sum((f[1:] + f[:-1]) / 2 * np.diff(x)))


def coin(x):
    return np.full((len(x), 2), 0.5)


def constant(r):
    return lambda x: np.tile(r, (len(x), 1))


def within(estimate, reference, k=4.0):
    """|value - reference| within k standard errors (and a positive error)."""
    value, stderr = estimate
    assert stderr > 0, estimate
    assert abs(value - reference) <= k * stderr, (estimate, reference)


def nearly_singular_task(rho, a=1.5):
    """Two classes N(0, S), N((a, +-a), S), S = [[1, rho], [rho, 1]]: the means
    differ along the eigenvector (1, sign(rho))/sqrt(2) of eigenvalue 1 + |rho|,
    so Delta^2 = 2 a^2 / (1 + |rho|) exactly, however thin the other direction."""
    cov = np.array([[1.0, rho], [rho, 1.0]])
    task = sn.GaussianClasses([[0.0, 0.0], [a, math.copysign(a, rho)]], covariances=[cov, cov])
    return task, a * math.sqrt(2.0 / (1.0 + abs(rho)))


# -- every integral by Monte Carlo, against closed forms ------------------------------


def test_monte_carlo_in_one_dimension_against_closed_forms():
    task = sn.GaussianClasses([0.0, 3.0], [1.0, 1.0], [0.5, 0.5])
    kw = {"method": "monte_carlo", "return_stderr": True, "n_samples": 20_000, "rng": 1}
    h = two_class_bayes_loss(3.0)
    within(task.bayes_accuracy(**kw), float(normal_cdf(1.5)))
    within(task.bayes_loss(**kw), h)
    within(task.expected_kl(coin, **kw), math.log(2) - h)
    r = np.array([0.2, 0.8])
    est = task.population_loss(constant(r), **kw)
    assert abs(est.value + 0.5 * np.log(r).sum()) <= 4 * est.stderr
    # the same seed gives the same sample; another seed another one
    assert task.bayes_loss(**kw) == task.bayes_loss(**kw)
    assert task.bayes_loss(**{**kw, "rng": 2}).value != task.bayes_loss(**kw).value


@pytest.mark.parametrize("rho", [1 - 1e-9, 1 - 1e-12, -(1 - 1e-12)])
def test_nearly_singular_covariances_fall_back_to_monte_carlo(rho):
    task, delta = nearly_singular_task(rho)
    h = two_class_bayes_loss(delta)
    kw = {"return_stderr": True, "n_samples": 20_000, "rng": 3}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        within(task.bayes_accuracy(**kw), float(normal_cdf(delta / 2)))   # no 2-D rule
        within(task.bayes_loss(**kw), h)
        within(task.expected_kl(coin, **kw), math.log(2) - h)
        est = task.population_loss(constant([0.3, 0.7]), **kw)
    assert abs(est.value + 0.5 * math.log(0.3 * 0.7)) <= 4 * est.stderr
    with pytest.raises(ValueError, match="method='quadrature' is not available"):
        task.bayes_loss(method="quadrature")


def test_a_correlation_of_0_999_keeps_an_exact_accuracy():
    # The 2-D grid would exceed 250,000 nodes (Monte Carlo for the loss), but
    # the rule along x1 alone is small: the accuracy stays exact.
    task, delta = nearly_singular_task(0.999)
    acc = task.bayes_accuracy(return_stderr=True)
    assert acc.stderr == 0.0
    assert acc.value == pytest.approx(float(normal_cdf(delta / 2)), abs=1e-9)
    within(task.bayes_loss(return_stderr=True, n_samples=20_000, rng=4),
           two_class_bayes_loss(delta))


def test_fifty_classes_in_five_dimensions_reduce_to_one():
    # Classes that differ only along the first axis: the 1-D task's exact
    # accuracy (normal CDFs between crossings) and quadrature are the reference.
    rng = np.random.default_rng(7)
    mu1 = np.sort(rng.uniform(0, 60, 50))
    sd1 = rng.uniform(0.5, 1.5, 50)
    means = np.zeros((50, 5))
    means[:, 0] = mu1
    covs = np.tile(np.diag([1.0, 2.0, 0.5, 1.0, 3.0]), (50, 1, 1))
    covs[:, 0, 0] = sd1**2
    task, flat = sn.GaussianClasses(means, covariances=covs), sn.GaussianClasses(mu1, sd1)
    kw = {"return_stderr": True, "n_samples": 4_000, "rng": 5}
    within(task.bayes_accuracy(**kw), flat.bayes_accuracy())
    within(task.bayes_loss(**kw), flat.bayes_loss())
    uniform = constant(np.full(50, 1 / 50))
    est = task.population_loss(uniform, **kw)
    assert est.value == pytest.approx(math.log(50), rel=1e-12)   # every x: log 50
    within(task.expected_kl(uniform, **kw), math.log(50) - flat.bayes_loss())


@pytest.mark.parametrize("far", [1e9, 1e20])
def test_means_far_apart_use_monte_carlo_and_stay_exact(far):
    task = sn.GaussianClasses([0.0, far], [1.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert task.bayes_loss(return_stderr=True) == (0.0, 0.0)   # posteriors 0 and 1
        assert task.bayes_accuracy(return_stderr=True) == (1.0, 0.0)   # crossing at far/2
        kl = task.expected_kl(coin, return_stderr=True)
        pop = task.population_loss(constant([0.25, 0.75]), return_stderr=True)
    assert kl.value == pytest.approx(math.log(2), rel=1e-15)   # log 2 at every x
    within(pop, -0.5 * math.log(0.25 * 0.75))   # the sample's class frequencies vary
    with pytest.raises(ValueError, match="method='quadrature' is not available"):
        task.expected_kl(coin, method="quadrature")


def test_a_standard_deviation_of_1e_8_keeps_its_quadrature():
    # N(0, 1e-16) against N(1, 1): the narrow class gets panels of its own width.
    task = sn.GaussianClasses([0.0, 1.0], [1e-8, 1.0])
    # independent: the trapezoid rule in u = x / 1e-8, densities written out
    s, u = 1e-8, np.linspace(-60.0, 60.0, 600_001)
    log_joint = np.stack([log_normal_pdf_1d(u, 0.0, 1.0) - math.log(s),
                          log_normal_pdf_1d(s * u, 1.0, 1.0)], axis=1) + math.log(0.5)
    log_post = log_joint - np.logaddexp(log_joint[:, :1], log_joint[:, 1:])
    near = -(np.exp(log_joint) * log_post).sum(axis=1)
    h_near = float(np.sum((near[1:] + near[:-1]) / 2 * np.diff(u))) * s
    loss = task.bayes_loss(return_stderr=True, method="quadrature")
    assert loss.stderr == 0.0 and loss.value == pytest.approx(h_near, rel=1e-6)
    # accuracy: the narrow class wins on |x| < t, t from the quadratic written out
    a, b, e = 0.5 * (1 / s**2 - 1), 1.0, math.log(s) - 0.5
    roots = [(-b - math.sqrt(b * b - 4 * a * e)) / (2 * a),
             (-b + math.sqrt(b * b - 4 * a * e)) / (2 * a)]
    narrow = float(normal_cdf(roots[1] / s) - normal_cdf(roots[0] / s))
    wide = 1 - float(normal_cdf(roots[1] - 1) - normal_cdf(roots[0] - 1))
    assert task.bayes_accuracy() == pytest.approx(0.5 * (narrow + wide), abs=1e-14)


# -- sizes counted before anything is allocated --------------------------------------


@pytest.mark.parametrize("means, scales", [
    ([[0.0, 0.0], [1.0, 1.0]], [np.diag([2.0, 1e-8]), np.eye(2)]),
    ([[0.0, 0.0], [1.0, 1.0]], [np.diag([2.0, 1e-12]), np.eye(2)]),
    ([[0.0, 0.0], [1e9, 0.0]], [np.eye(2), np.eye(2)]),
    ([0.0, 1e9], [1.0, 1.0]),
    ([0.0, 1e20], [1.0, 1.0]),
    (np.zeros((3, 3)), np.tile(np.eye(3), (3, 1, 1))),
])
def test_quadrature_too_large_is_refused_before_allocating(means, scales):
    task = sn.GaussianClasses(means, scales)
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match="method='quadrature' is not available"):
            task.bayes_loss(method="quadrature")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20, f"{peak / 2**20:.1f} MiB"


def test_the_posterior_of_many_classes_takes_little_memory():
    task = sn.GaussianClasses(np.arange(100.0) * 2, np.ones(100))
    x = np.linspace(-5.0, 205.0, 1000)
    tracemalloc.start()
    try:
        log_post = task.log_posterior(x)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert log_post.shape == (1000, 100)
    assert peak < 8 * 2**20, f"{peak / 2**20:.1f} MiB"   # a few (n, M) arrays


def test_many_classes_keep_an_accurate_quadrature():
    # 20 unit-variance classes 2 apart: the quadrature (not Monte Carlo) and
    # the exact accuracy against a fine trapezoid rule written out here.
    mu = np.arange(20.0) * 2
    task = sn.GaussianClasses(mu, np.ones(20))
    x = np.linspace(-14.0, 52.0, 200_001)
    log_joint = log_normal_pdf_1d(x[:, None], mu, 1.0) - math.log(20)
    log_post = log_joint - np.logaddexp.reduce(log_joint, axis=1, keepdims=True)
    w = np.full(len(x), x[1] - x[0])
    w[[0, -1]] *= 0.5
    h = -(w[:, None] * np.exp(log_joint) * log_post).sum()
    acc = (w * np.exp(log_joint).max(axis=1)).sum()
    loss = task.bayes_loss(return_stderr=True)
    assert loss.stderr == 0.0 and loss.value == pytest.approx(h, abs=1e-10)
    assert task.bayes_accuracy() == pytest.approx(acc, abs=1e-7)   # kinks: O(h^2)


# -- the API -------------------------------------------------------------------------


def test_estimate_and_method_arguments():
    task = sn.GaussianClasses([0.0, 3.0], [1.0, 1.0])
    est = task.bayes_loss(return_stderr=True)
    assert isinstance(est, Estimate) and est.stderr == 0.0
    assert est.value == task.bayes_loss(method="quadrature")
    value, stderr = task.bayes_accuracy(method="monte_carlo", return_stderr=True,
                                        n_samples=1000, rng=0)
    assert 0 < stderr < 0.05 and abs(value - float(normal_cdf(1.5))) < 4 * stderr
    with pytest.raises(ValueError, match="method must be one of 'auto', 'quadrature', "
                                         "'monte_carlo'; got 'mc'"):
        task.bayes_loss(method="mc")
    with pytest.raises(ValueError, match="method must be one of"):
        task.bayes_accuracy(method=None)
    with pytest.raises(ValueError, match="n_samples must be an integer >= 2; got 1"):
        task.expected_kl(coin, method="monte_carlo", n_samples=1)


def test_a_thousand_classes_sample_fewer_points_and_stay_small():
    # Too many classes for the quadrature (nodes x classes) and the exact
    # accuracy (M^3 work): Monte Carlo on 2**22 // 1000 = 4194 draws with
    # seed 0, equal to the mean entropy of the posterior written out here.
    mu = np.arange(1000.0) * 2
    task = sn.GaussianClasses(mu, np.ones(1000))
    tracemalloc.start()
    try:
        est = task.bayes_loss(return_stderr=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 160 * 2**20, f"{peak / 2**20:.1f} MiB"   # a few (4194, 1000) arrays
    x = task.sample(2**22 // 1000, 0)[0][:, 0]
    log_joint = log_normal_pdf_1d(x[:, None], mu, 1.0) - math.log(1000)
    log_post = log_joint - np.logaddexp.reduce(log_joint, axis=1, keepdims=True)
    entropy = -(np.exp(log_post) * log_post).sum(axis=1)
    assert est.value == pytest.approx(entropy.mean(), rel=1e-10)
    assert est.stderr == pytest.approx(entropy.std(ddof=1) / math.sqrt(len(x)), rel=1e-8)
