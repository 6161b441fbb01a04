"""GaussianClasses (Bayes' rule, sampling, geometry) and two_gaussian_posterior.

Checked against independent computations: the closed-form posterior
1 / (1 + exp((6x - 9) / 2)) of the separated task and the sigmoid of a
quadratic for two classes, Gaussian densities written out with det and
inverse, normal CDFs from math.erf, and Monte Carlo sampling error bounds.
The Bayes loss and its relatives are tested in test_bayes.py.
"""

import math
import warnings

import numpy as np
import pytest
from _gaussians import (
    MULTI_COVS,
    MULTI_MEANS,
    MULTI_PRIORS,
    SEPARATED,
    log_normal_pdf,
    normal_cdf,
    rotated_task,
    two_class_log_joint,
)
from hypothesis import given, settings
from hypothesis import strategies as st

import scratchnet as sn

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



def test_multiclass_2d_matches_written_out_densities():
    task = sn.GaussianClasses(MULTI_MEANS, covariances=MULTI_COVS, priors=MULTI_PRIORS)
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
    task = sn.GaussianClasses(means, covariances=covs, priors=[0.4, 0.6])
    x = rng.normal(size=(20, 3))
    ref = np.stack([log_normal_pdf(x, means[c], covs[c]) for c in range(2)], axis=1)
    np.testing.assert_allclose(task.log_class_densities(x), ref, rtol=1e-12)


def test_one_dimensional_task_accepts_both_input_shapes():
    x = np.linspace(-2, 5, 7)
    np.testing.assert_array_equal(SEPARATED.posterior(x), SEPARATED.posterior(x[:, None]))
    assert SEPARATED.log_evidence(x).shape == (7,)
    assert SEPARATED.log_joint(x).shape == (7, 2)


# Far out, but resolved in float64: log P(x) >= -1e10 (docs/conventions.md).
FAR = [-1e5, -3e4, -1e3, 1e3, 3e4, 1e5]
# Beyond: every class more than 1.4e5 standard deviations away.
TOO_FAR = [-1.7e308, -1e300, -1e150, -1e16, -1.42e5, 1.42e5, 1e6, 1e200, 1.7e308]
EPS = np.finfo(np.float64).eps


def rounding_of(log_joint):
    """The convention's absolute error of log P(c|x) = log P(x,c) - log P(x):
    a few roundings of the largest log joint of the row."""
    return 4 * EPS * np.abs(log_joint).max(axis=-1, keepdims=True)


def test_posterior_far_out_is_accurate_and_silent():
    x = np.array(FAR)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        log_post = SEPARATED.log_posterior(x)
        post = SEPARATED.posterior(x)
        closed = sn.two_gaussian_posterior(x, 0.0, 1.0, 3.0, 1.0)
        dens = SEPARATED.density(x)
    np.testing.assert_array_equal(post[:, 0], closed)        # 0 or 1: e^-3000 underflows
    np.testing.assert_array_equal(post[:, 0], (x < 0).astype(float))
    # log P(c1|x) - log P(c2|x) = -(6x - 9)/2, to the rounding of log P(x, c) ~ -x^2/2
    tolerance = 8 * EPS * (x**2 / 2 + 10 * np.abs(x) + 10)
    assert (np.abs(log_post[:, 0] - log_post[:, 1] + (6 * x - 9) / 2) <= tolerance).all()
    assert log_post[2, 1] == pytest.approx(-3004.5, rel=1e-13, abs=0)
    assert log_post[3, 0] == pytest.approx(-2995.5, rel=1e-13, abs=0)
    assert (log_post <= 0).all() and (dens == 0).all()


def test_inputs_too_far_for_float64_are_refused():
    # log P(x) = -x^2/2 - log(2 sqrt(2 pi)) + ... < -1e10 from |x| = 141,421
    for x in TOO_FAR:
        with pytest.raises(ValueError, match=r"x\[1\] = .* is too far from every "
                           r"class for float64: log P\(x\) = -.*two_gaussian_posterior"):
            SEPARATED.log_posterior([0.0, x])
        with pytest.raises(ValueError, match=r"x\[0\] = .* too far"):
            SEPARATED.posterior([x])
    assert np.isfinite(SEPARATED.log_posterior([-1.41e5, 1.41e5])).all()
    plane = sn.GaussianClasses([[0.0, 0.0], [3.0, 0.0]],
                               covariances=[np.eye(2), np.eye(2)])
    with pytest.raises(ValueError, match=r"x\[0\] = \[0, -1e\+06\] is too far"):
        plane.log_posterior([[0.0, -1e6]])
    # the closed form of two classes is exact there (the factored quadratic)
    np.testing.assert_array_equal(
        sn.two_gaussian_posterior(np.array(TOO_FAR), 0.0, 1.0, 3.0, 1.0),
        (np.array(TOO_FAR) < 0).astype(float))


def log_sigmoid_of(t):
    """log(1 / (1 + e^-t)) by hand, each branch without cancellation."""
    return -math.log1p(math.exp(-t)) if t > 0 else t - math.log1p(math.exp(t))


@pytest.mark.parametrize("x", [-200.0, -100.0, -20.0, -5.0, 1.5, 5.0, 20.0, 100.0, 200.0])
def test_the_dominant_class_is_exact_to_the_rounding_of_the_log_joints(x):
    # log P(c1|x) = log sigmoid(-(6x - 9)/2): for x = -100 it is -e^-304.5, which
    # Bayes' rule as written returns as 0 (the log joints are about -5000, their
    # rounding 1e-12); the losing class keeps its relative precision.
    log_post = SEPARATED.log_posterior([x])[0]
    t = -(6 * x - 9) / 2
    log_joint = -np.array([x, x - 3.0]) ** 2 / 2 - math.log(2 * math.sqrt(2 * math.pi))
    exact = np.array([log_sigmoid_of(t), log_sigmoid_of(-t)])
    assert (np.abs(log_post - exact) <= rounding_of(log_joint)).all()
    loser = int(np.argmin(exact))
    assert log_post[loser] == pytest.approx(exact[loser], rel=1e-12, abs=0)
    assert (log_post <= 0).all()   # never above 0: log P(x) >= every log P(x, c)


def test_the_dominant_class_keeps_its_precision_among_many():
    # 2-D, three classes, a point where class 1 dominates by e^-60 or so: the
    # log posterior of class 1 is -(sum of the others' ratios), here below the
    # rounding of the log joints: 0 to that rounding; the others' log posteriors
    # are the differences of log joints written out with det and inverse.
    task = sn.GaussianClasses(MULTI_MEANS, covariances=MULTI_COVS, priors=MULTI_PRIORS)
    x = np.array([[9.0, -3.0], [12.0, -4.0]])
    log_joint = np.stack([log_normal_pdf(x, MULTI_MEANS[c], MULTI_COVS[c])
                          + math.log(MULTI_PRIORS[c]) for c in range(3)], axis=1)
    others = np.exp(log_joint[:, [0, 2]] - log_joint[:, [1]]).sum(axis=1)
    assert (others < 1e-20).all()
    log_post = task.log_posterior(x)
    assert (np.abs(log_post[:, 1] + others) <= rounding_of(log_joint)[:, 0]).all()
    np.testing.assert_allclose(log_post[:, [0, 2]], log_joint[:, [0, 2]]
                               - log_joint[:, [1]], rtol=1e-12)


@pytest.mark.parametrize("s1, s2", [(1e-200, 1e200), (1e200, 1e-200), (1e-300, 1.0)])
def test_two_gaussian_posterior_at_extreme_scales(s1, s2):
    # r = log(s1/s2) + (z1 - z2)(z1 + z2)/2, P = 1/(1 + e^r), written out in logs
    x = np.array([-1e250, -1.0, 0.0, 1e-205, s1, 10 * s1, 100 * s1, 1.0, 1e250])
    task = sn.GaussianClasses([0.0, 1.0], [s1, s2])
    resolved = task.log_evidence(x) >= -1e10     # the rest is refused (test above)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = sn.two_gaussian_posterior(x, 0.0, s1, 1.0, s2)
        post = task.posterior(x[resolved])[:, 0]
    ref = []
    for xi in map(float, x):
        # log|z1|, log|z2| first: where one is astronomically larger, it decides
        lz1 = math.log(abs(xi)) - math.log(s1) if xi else -math.inf
        lz2 = math.log(abs(xi - 1.0)) - math.log(s2) if xi != 1.0 else -math.inf
        if max(lz1, lz2) > math.log(1e150):
            r = math.copysign(math.inf, lz1 - lz2)
        else:
            z1, z2 = xi / s1, (xi - 1.0) / s2
            r = math.log(s1) - math.log(s2) + 0.5 * (z1 - z2) * (z1 + z2)
        ref.append(0.0 if r > 700 else 1.0 / (1.0 + math.exp(r)))
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-300)
    assert resolved.sum() >= 5
    np.testing.assert_allclose(post, np.array(ref)[resolved], rtol=1e-12, atol=1e-300)


def test_scales_too_small_for_float64_are_rejected_clearly():
    with pytest.raises(ValueError, match=r"sigma1 is too small for float64 against mu1"):
        sn.two_gaussian_posterior([0.0], 0.0, 1e-308, 1.0, 1.0)
    with pytest.raises(ValueError, match=r"sigma2 is too small .* got sigma2=1e-300, mu2=100"):
        sn.two_gaussian_posterior([0.0], 0.0, 1.0, 100.0, 1e-300)
    with pytest.raises(ValueError, match=r"scales\[1\] is too small for float64"):
        sn.GaussianClasses([0.0, 1.0], [1.0, 1e-308])
    with pytest.raises(ValueError, match=r"covariances\[0\] is too small for float64"):
        sn.GaussianClasses([[1e300, 0.0]], covariances=[np.diag([1e-200, 1.0])])


def test_unequal_variances_far_away_favour_the_wide_class():
    task = sn.GaussianClasses([0.0, 1.0], [2.0, 1.0])
    x = np.array(FAR)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        post = task.posterior(x)
        closed = sn.two_gaussian_posterior(x, 0.0, 2.0, 1.0, 1.0)
    np.testing.assert_array_equal(post[:, 0], 1.0)
    np.testing.assert_array_equal(closed, 1.0)


def test_coinciding_classes_keep_their_priors_to_the_rounding_of_the_log_joints():
    # log P(c|x) = log prior_c exactly; as written, to ~eps x^2/8 (x = 1e5: 3e-7)
    task = sn.GaussianClasses([1.0, 1.0], [2.0, 2.0], [0.3, 0.7])
    x = np.array([0.0, *FAR])
    log_post = task.log_posterior(x)
    bound = rounding_of(-((x[:, None] - 1.0) ** 2) / 8 - 2.0)
    assert (np.abs(log_post - np.log([0.3, 0.7])) <= bound).all()


def test_posterior_far_away_in_two_dimensions():
    # Classes differing only along x1: the posterior is the 1-D one at x1,
    # and a rotated copy has the posterior of the rotated point.
    flat = sn.GaussianClasses([[0.0, 5.0], [3.0, 5.0]],
                              covariances=[np.diag([1.0, 2.0]), np.diag([1.0, 2.0])])
    rotated, r = rotated_task([0.0, 3.0], [1.0, 1.0], [0.5, 0.5])
    x1 = np.array([-1e3, 1e3, 1e4, -1e5, 1.5, 0.3])
    pts = np.stack([x1, np.array([1e3, -1e3, 1e4, 7.0, 2.0, -4.0])], axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        post = flat.posterior(pts)
        post_rot = rotated.posterior(pts[[0, 1, 4, 5]] @ r.T)
    np.testing.assert_allclose(post[:, 0], sn.two_gaussian_posterior(x1, 0, 1, 3, 1),
                               rtol=1e-12)
    np.testing.assert_allclose(post_rot[:, 0], post[[0, 1, 4, 5], 0], rtol=1e-9,
                               atol=1e-300)
    assert np.isfinite(post).all()
    np.testing.assert_allclose(post.sum(1), 1.0, rtol=1e-14)   # rounding of log P(x, c)


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
    task = sn.GaussianClasses(MULTI_MEANS, covariances=MULTI_COVS, priors=MULTI_PRIORS)
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
    task = sn.GaussianClasses(MULTI_MEANS, covariances=MULTI_COVS, priors=MULTI_PRIORS)
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
    task = sn.GaussianClasses(MULTI_MEANS, covariances=MULTI_COVS, priors=MULTI_PRIORS)
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
    task = sn.GaussianClasses(MULTI_MEANS, covariances=MULTI_COVS, name="three")
    assert task.num_classes == 3 and task.dim == 2 and task.name == "three"
    np.testing.assert_allclose(task.priors, [1 / 3] * 3)
    assert "name='three'" in repr(task) and "means=[[0.0, 0.0]" in repr(task)
    assert "covariances=[[[" in repr(task) and "scales" not in repr(task)
    np.testing.assert_array_equal(task.covariances, MULTI_COVS)
    assert task.scales is task.covariances  # the older name, kept in D dimensions
    assert SEPARATED.dim == 1 and SEPARATED.means.shape == (2,)
    assert SEPARATED.covariances is None and "scales=[" in repr(SEPARATED)
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
    (([[0.0, 0.0]],), {"covariances": [[1.0, 0.0], [0.0, 1.0]]}, ValueError,
     r"covariances must have shape \(M, D, D\) = \(1, 2, 2\)"),
    (([[0.0, 0.0]],), {"covariances": [[[1.0, 0.5], [0.4, 1.0]]]}, ValueError,
     r"covariances\[0\] must be a symmetric covariance matrix"),
    (([[0.0, 0.0], [1.0, 1.0]],), {"covariances": [np.eye(2), [[1.0, 2.0], [2.0, 1.0]]]},
     ValueError, r"covariances\[1\] must be positive definite .* eigenvalue -1"),
    (([[0.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]]), {}, ValueError,
     r"scales are standard deviations, for means of shape \(M,\); with means of shape "
     r"\(1, 2\) give covariances, one \(D, D\) matrix per class; got scales of shape"),
    (([[0.0, 0.0]], [[[1.0, 0.5], [0.4, 1.0]]]), {}, ValueError,  # the older spelling
     r"scales\[0\] must be a symmetric covariance matrix"),
    (([0.0, 1.0], [1.0, 1.0]), {"covariances": np.stack([np.eye(1)] * 2)}, TypeError,
     r"needs one of scales .* or covariances .*; got both"),
    (([0.0, 1.0],), {}, TypeError, r"needs one of scales .* or covariances .*; got neither"),
    (([0.0, 1.0],), {"covariances": np.stack([np.eye(1)] * 2)}, ValueError,
     r"covariances needs means of shape \(M, D\); got means of shape \(2,\): for a "
     r"one-dimensional task give scales"),
    (([0.0, 1.0], [1.0, 1.0]), {"name": 3}, TypeError, "name must be a string"),
    ((["a", "b"], [1.0, 1.0]), {}, TypeError, "means must be an array of real numbers"),
])
def test_bad_parameters_are_rejected(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        sn.GaussianClasses(*args, **kwargs)


def test_covariances_and_the_older_scales_spelling_give_the_same_task():
    new = sn.GaussianClasses(MULTI_MEANS, covariances=MULTI_COVS, priors=MULTI_PRIORS)
    old = sn.GaussianClasses(MULTI_MEANS, MULTI_COVS, MULTI_PRIORS)
    x = np.array([[0.3, -1.0], [4.0, 2.0]])
    np.testing.assert_array_equal(new.log_posterior(x), old.log_posterior(x))
    assert repr(new) == repr(old)


def test_bad_inputs_are_rejected():
    task2 = sn.GaussianClasses(MULTI_MEANS, covariances=MULTI_COVS)
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

