"""The Bayes floor: Bayes loss and accuracy, expected KL and population loss.

Checked against independent computations: a fine trapezoid rule and a
composite Gauss-Legendre rule over densities written out here, normal CDFs
for the accuracy (Phi(Delta / 2) for equal covariances), the prior's entropy
for coinciding classes, closed forms for constant models and for a model of
two uniform classes, Monte Carlo error bounds, and a Newton solver for the
population cross-entropy written in this file.
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
    log_normal_pdf_1d,
    normal_cdf,
    rotated_task,
    two_class_log_joint,
)
from hypothesis import given, settings
from hypothesis import strategies as st

import scratchnet as sn
from scratchnet import _quadrature as quadrature_module
from scratchnet.bayes import BayesFloor, GenerativeModel

# -- independent helpers ---------------------------------------------------------


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


# -- Bayes loss, accuracy, expected KL, population loss ---------------------------------


def entropy_of(p):
    p = np.asarray(p, dtype=float)
    return float(-(p * np.log(p)).sum())


@pytest.mark.parametrize("priors", [[0.5, 0.5], [0.2, 0.5, 0.3]])
def test_bayes_loss_of_coinciding_classes_is_the_prior_entropy(priors):
    m = len(priors)
    task_1d = sn.GaussianClasses([1.0] * m, [2.0] * m, priors)
    task_2d = sn.GaussianClasses([[1.0, -1.0]] * m, covariances=[MULTI_COVS[0]] * m, priors=priors)
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
    monkeypatch.setattr(quadrature_module, "_MAX_NODES", 10**6)
    tasks = [sn.GaussianClasses([0.0, 3.0], [2.0, 1.0]),
             sn.GaussianClasses([-1.0, 0.5, 4.0], [0.5, 2.0, 1.0], [0.2, 0.5, 0.3]),
             rotated_task([0.0, 3.0], [2.0, 1.0], [0.5, 0.5])[0]]
    def model(z):
        return np.full((len(z), 2), [0.3, 0.7])

    coarse = [t.bayes_loss() for t in tasks] + [tasks[0].expected_kl(model)]
    monkeypatch.setattr(quadrature_module, "_NODES_PER_PANEL", 16)
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
    task = sn.GaussianClasses([[0.0, 0.0], [3.0, 1.0]], covariances=[np.eye(2), 100 * np.eye(2)])
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
    task = sn.GaussianClasses(means, covariances=[cov, cov])
    assert task.bayes_accuracy() == pytest.approx(float(normal_cdf(delta / 2)), abs=1e-9)


def test_population_loss_is_bayes_loss_plus_expected_kl():
    task2 = sn.GaussianClasses(MULTI_MEANS, covariances=MULTI_COVS, priors=MULTI_PRIORS)
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


@pytest.mark.parametrize("mu, sd, priors", [([0.0, 3.0], [1.0, 1.0], [0.5, 0.5]),
                                             ([0.0, 3.0], [2.0, 1.0], [0.7, 0.3])])
def test_a_model_with_kinks_is_integrated_to_1e_6(mu, sd, priors):
    """A one-unit-per-kink ReLU logit, kinks between the coarse rule's nodes:
    scipy.integrate.quad with the kinks as breakpoints is the reference."""
    from scipy import integrate

    task = sn.GaussianClasses(mu, sd, priors)
    kinks, slopes = np.array([-1.37, 0.71, 1.93, 4.09]), np.array([1.5, -2.0, 3.0, -1.0])

    def log_q(x):
        z = -1.0 + np.maximum(np.asarray(x, float).reshape(-1, 1) - kinks, 0.0) @ slopes
        return np.stack([-np.logaddexp(0.0, z), -np.logaddexp(0.0, -z)], axis=1)

    def integrand(x):
        log_joint = two_class_log_joint(np.array([x]), mu, sd, priors)[0]
        log_post = log_joint - np.logaddexp(*log_joint)
        return float(np.exp(log_joint) @ (log_post - log_q([x])[0]))

    lo, hi = min(mu) - 14 * max(sd), max(mu) + 14 * max(sd)
    reference, _ = integrate.quad(integrand, lo, hi, points=kinks, limit=500,
                                  epsabs=1e-14, epsrel=1e-12)
    assert task.expected_kl(log_q, log_probs=True) == pytest.approx(reference, rel=1e-6)
    assert task.population_loss(log_q, log_probs=True) == pytest.approx(
        reference + task.bayes_loss(), rel=1e-6)


def written_out_posterior(means, covs, priors):
    """q(C|x) by Bayes' rule written out with det and inverse (not the code under test)."""
    def predict(x):
        log_joint = np.stack([log_normal_pdf(x, means[c], covs[c]) + math.log(priors[c])
                              for c in range(len(priors))], axis=1)
        return np.exp(log_joint - np.logaddexp.reduce(log_joint, axis=1, keepdims=True))

    return predict


def test_the_true_posterior_has_no_gap_and_reaches_the_floor():
    # H(C|X) of the 3-class 2-D task from an independent tensor Gauss-Legendre rule.
    x1, w1 = composite_gauss_legendre(-20.0, 21.0, panels=40)
    x2, w2 = composite_gauss_legendre(-16.0, 19.0, panels=40)
    x = np.stack(np.meshgrid(x1, x2, indexing="ij"), axis=-1).reshape(-1, 2)
    w = np.outer(w1, w2).ravel()
    log_joint = np.stack([log_normal_pdf(x, MULTI_MEANS[c], MULTI_COVS[c])
                          + math.log(MULTI_PRIORS[c]) for c in range(3)], axis=1)
    log_post = log_joint - np.logaddexp.reduce(log_joint, axis=1, keepdims=True)
    h_2d = -(w[:, None] * np.exp(log_joint) * log_post).sum()
    # ... and of the separated task from the trapezoid rule.
    x, w = trapezoid_grid([0.0, 3.0], [1.0, 1.0])
    log_joint = two_class_log_joint(x, [0.0, 3.0], [1.0, 1.0], [0.5, 0.5])
    log_post = log_joint - np.logaddexp(log_joint[:, :1], log_joint[:, 1:])
    h_1d = -(w[:, None] * np.exp(log_joint) * log_post).sum()
    cases = [
        (SEPARATED, written_out_posterior([[0.0], [3.0]], np.ones((2, 1, 1)), [0.5, 0.5]),
         h_1d),
        (sn.GaussianClasses(MULTI_MEANS, covariances=MULTI_COVS, priors=MULTI_PRIORS),
         written_out_posterior(MULTI_MEANS, MULTI_COVS, MULTI_PRIORS), h_2d),
    ]
    for task, true_posterior, h in cases:   # each against the independent h
        assert abs(task.expected_kl(true_posterior)) < 1e-12
        assert task.bayes_loss() == pytest.approx(h, abs=1e-10)
        assert task.population_loss(true_posterior) == pytest.approx(h, abs=1e-10)


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
    task = sn.GaussianClasses([[0.0, 1.0, -1.0], [3.0, 1.0, -1.0]], covariances=covs)
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


def test_bad_models_are_rejected():
    with pytest.raises(ValueError, match=r"model\(x\) must have shape \(n, M\) = "
                                         r"\(\d+, 2\)"):
        SEPARATED.expected_kl(lambda x: np.full((len(x), 3), 1 / 3))
    with pytest.raises(ValueError, match=r"model\(x\) must sum to 1"):
        SEPARATED.population_loss(lambda x: np.full((len(x), 2), 0.6))
    with pytest.raises(ValueError, match=r"model\(x\) must be non-negative"):
        SEPARATED.expected_kl(lambda x: np.tile([1.5, -0.5], (len(x), 1)))
    with pytest.raises(ValueError, match=r"model\(x\) must not contain NaN"):
        SEPARATED.expected_kl(lambda x: np.full((len(x), 2), np.nan))
    with pytest.raises(TypeError, match="model must have predict_log_proba or be callable"):
        SEPARATED.expected_kl(np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"model\(x\) \(log-probabilities\) must sum to 1"):
        SEPARATED.expected_kl(lambda x: np.zeros((len(x), 2)), log_probs=True)


def test_a_confident_float32_model_is_measured_through_its_log_probabilities():
    """q = 1e-50 rounds to 0 in float32 probabilities (KL = inf), not in log q."""
    task = sn.GaussianClasses([0.0, 10.0], [1.0, 1.0])

    def log_q(x):  # the posterior's log-odds, made twice as confident, in float32
        r = 2 * (10 * np.asarray(x)[:, 0] - 50)  # 2 log(P(c2|x)/P(c1|x))
        return np.stack([-np.logaddexp(0, r), -np.logaddexp(0, -r)], 1).astype(np.float32)

    assert task.expected_kl(lambda x: np.exp(log_q(x))) == np.inf
    kl = task.expected_kl(log_q, log_probs=True)
    # the same model in float64, computed independently of scratchnet's code
    x = np.linspace(-12, 22, 400_001)
    r = 10 * x - 50
    p2 = 0.5 * (np.exp(-0.5 * x**2) + np.exp(-0.5 * (x - 10) ** 2)) / np.sqrt(2 * np.pi)
    post = np.stack([1 / (1 + np.exp(r)), 1 / (1 + np.exp(-r))], 1)
    lq = np.stack([-np.logaddexp(0, 2 * r), -np.logaddexp(0, -2 * r)], 1)
    lp = np.stack([-np.logaddexp(0, r), -np.logaddexp(0, -r)], 1)
    f = (post * (lp - lq)).sum(1) * p2
    reference = np.sum((f[1:] + f[:-1]) / 2 * np.diff(x))  # the trapezoid rule
    assert np.isfinite(kl) and kl == pytest.approx(reference, rel=1e-3)


def test_a_float32_mlp_trained_with_adam_is_measured_in_log_space():
    """The regression of issue 13: N(0, 1) vs N(10, 1), a float32 MLP trained
    with Adam.  Its probabilities round to 0 in the tails (KL = inf); through
    predict_log_proba the expected KL is about 1e-6 nats, as a trapezoid rule
    over the same model's log-probabilities (in float64) says."""
    task = sn.GaussianClasses([0.0, 10.0], [1.0, 1.0])
    model = sn.MLP([1, 16, 16, 2], dtype="float32", rng=0)
    history = sn.train(model, task, steps=1000, batch_size=64, lr=0.05,
                       optimizer="adam", rng=1, snapshot_steps=[1000])
    x = np.linspace(-12.0, 22.0, 400_001)
    log_q = model.predict_log_proba(x).astype(np.float64)
    r = 10 * x - 50                                   # log P(c2|x) / P(c1|x)
    log_p = -np.logaddexp(0.0, np.stack([r, -r], axis=1))
    density = 0.5 * (np.exp(-0.5 * x**2) + np.exp(-0.5 * (x - 10) ** 2)) / math.sqrt(2 * math.pi)
    f = (np.exp(log_p) * (log_p - log_q)).sum(axis=1) * density
    reference = float(np.sum((f[1:] + f[:-1]) / 2 * np.diff(x)))
    assert 1e-7 < reference < 1e-5
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert task.expected_kl(model.predict_proba) == np.inf      # through q: rounded
        kl = task.expected_kl(model)                                # through log q
        kl_log = task.expected_kl(model.predict_log_proba, log_probs=True)
        pop = task.population_loss(model)
    assert kl == kl_log and kl == pytest.approx(reference, rel=0.02)   # ReLU kinks
    assert history.snapshot_kl[-1] == pytest.approx(kl, rel=1e-6)      # the snapshot too
    assert pop - task.bayes_loss() == pytest.approx(kl, rel=1e-6, abs=1e-15)


# -- any generative model --------------------------------------------------------------


class TwoUniforms(GenerativeModel):
    """Class 0 ~ U(0, 2), class 1 ~ U(1, 3), equal priors: no rule, so Monte Carlo.

    P(c0 | x) = 1, 1/2, 0 on (0, 1), (1, 2), (2, 3).
    """

    def log_posterior(self, x):
        x = np.asarray(x, dtype=float)[:, 0]
        p0 = np.where(x < 1, 1.0, np.where(x < 2, 0.5, 0.0))
        with np.errstate(divide="ignore"):
            return np.log(np.stack([p0, 1.0 - p0], axis=1))

    def sample(self, n, rng):
        rng = np.random.default_rng(rng)
        c = rng.integers(0, 2, n)
        return (rng.uniform(0.0, 2.0, n) + c)[:, None], c


class TwoUniformsOnAGrid(TwoUniforms):
    """The same model with a midpoint rule: P(x) = 1/4, 1/2, 1/4 on the three unit cells."""

    def _expectation_rule(self):
        x = (np.arange(3000) + 0.5) / 1000
        return x[:, None], np.where((x > 1) & (x < 2), 0.5, 0.25) / 1000


def test_the_floor_of_another_generative_model():
    # H(C|X) = P(1 < x < 2) log 2; accuracy 1/4 + 1/2 * 1/2 + 1/4; a coin flip
    # costs log 2, so its gap is log 2 - H(C|X).
    half_log2 = 0.5 * math.log(2)

    def coin(x):
        return np.full((len(x), 2), 0.5)

    grid = TwoUniformsOnAGrid()
    loss, stderr = grid.bayes_loss(return_stderr=True)
    assert loss == pytest.approx(half_log2, abs=1e-14) and stderr == 0.0
    assert grid.bayes_accuracy() == pytest.approx(0.75, abs=1e-14)
    assert grid.expected_kl(coin) == pytest.approx(half_log2, abs=1e-14)
    assert grid.population_loss(coin) == pytest.approx(math.log(2), abs=1e-14)
    sampled = TwoUniforms()
    for method, exact in [("bayes_loss", half_log2), ("bayes_accuracy", 0.75)]:
        value, stderr = getattr(sampled, method)(return_stderr=True, n_samples=20_000)
        assert 0 < stderr < 0.01 and abs(value - exact) < 5 * stderr
        assert getattr(sampled, method)(n_samples=20_000) == value   # cached sample
    kl, stderr = sampled.expected_kl(coin, return_stderr=True, n_samples=20_000, rng=3)
    assert abs(kl - half_log2) < 5 * stderr
    with pytest.raises(ValueError, match="n_samples must be an integer >= 2; got 1"):
        sampled.bayes_loss(n_samples=1)


@pytest.mark.parametrize("method", ["monte_carlo", "quadrature"])
def test_a_model_with_probability_zero_is_infinitely_far_exactly(method):
    """KL(P || q) is +inf where q = 0 < P: the estimate is inf with standard error 0,
    and no warning (issue 29: the Monte Carlo one was inf +- nan, with NumPy's
    'invalid value encountered in subtract' from the spread of inf - inf)."""
    task = (sn.GaussianClasses([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]],
                               covariances=[np.eye(3)] * 2)
            if method == "monte_carlo" else sn.tasks.separated())
    sure = lambda x: np.column_stack([np.ones(len(x)), np.zeros(len(x))])  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for measure in (task.expected_kl, task.population_loss):
            got = measure(sure, return_stderr=True, n_samples=2000, rng=0) \
                if method == "monte_carlo" else measure(sure, return_stderr=True)
            assert got == (math.inf, 0.0)
        hinge = sn.MLP([task.dim, 4, 2], rng=0, loss="hinge")   # a one-hot readout
        assert task.expected_kl(hinge, return_stderr=True) == (math.inf, 0.0)


def test_the_old_name_of_the_generative_model_base_stays_importable():
    # issue 39 renamed BayesFloor (a name that hid a base class) for one release
    assert BayesFloor is GenerativeModel
    assert isinstance(sn.tasks.separated(), BayesFloor)
