"""Tests for scratchnet.information: entropy, cross-entropy, KL, Gibbs, expected KL.

Every value is checked against something independent of the code under test:
a closed form (the uniform distribution over m outcomes has entropy ln m, 8
bits for 256 of them; a one-hot distribution has entropy 0; the KL divergence
between two Bernoulli distributions written out term by term), or a
plain-Python loop over the entries with ``math.log`` (the ``ref_*`` functions
below).
"""

import contextlib
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import scratchnet as sn
from scratchnet import information
from scratchnet.information import GibbsResult, cross_entropy

TINY = 1e-300
LN2 = math.log(2.0)


# ---------------------------------------------------------------------------
# Independent reference: one entry at a time, with the conventions spelled out.
# ---------------------------------------------------------------------------


def ref_entropy(p):
    return -sum(pi * math.log(pi) for pi in p if pi > 0)


def ref_cross_entropy(p, q):
    if any(pi > 0 and qi == 0 for pi, qi in zip(p, q)):
        return math.inf
    return -sum(pi * math.log(qi) for pi, qi in zip(p, q) if pi > 0)


def ref_kl(p, q):
    if any(pi > 0 and qi == 0 for pi, qi in zip(p, q)):
        return math.inf
    return sum(pi * (math.log(pi) - math.log(qi)) for pi, qi in zip(p, q) if pi > 0)


def log_of(q):
    """log q with log 0 = -inf, computed in the test without a warning."""
    with np.errstate(divide="ignore"):
        return np.log(q)


@contextlib.contextmanager
def no_warnings():
    """A context in which any warning, and any divide/invalid/overflow floating-point
    event, raises (underflow is ignored, as NumPy does by default: exp(-800) = 0 is
    the right answer, not an error)."""
    with warnings.catch_warnings(), np.errstate(divide="raise", invalid="raise", over="raise"):
        warnings.simplefilter("error")
        yield


# ---------------------------------------------------------------------------
# Strategies: small distributions, some entries exactly 0 or 1e-300.
# ---------------------------------------------------------------------------


@st.composite
def distributions(draw, m, *, zeros=True, tiny=True, low=1e-3):
    """A distribution over m outcomes: bounded positive weights normalised,
    with some entries forced to exactly 0 or to 1e-300 (which leave the sum 1)."""
    kinds = [st.floats(min_value=low, max_value=1.0)]
    if zeros:
        kinds.append(st.just(0.0))
    if tiny:
        kinds.append(st.just(TINY))
    raw = np.array(draw(st.lists(st.one_of(kinds), min_size=m, max_size=m)))
    normal = raw >= low
    if not normal.any():
        raw[draw(st.integers(0, m - 1))] = 1.0
        normal = raw >= low
    return np.where(normal, raw / raw[normal].sum(), raw)


@st.composite
def pairs(draw, max_m=6):
    m = draw(st.integers(1, max_m))
    return draw(distributions(m)), draw(distributions(m))


@st.composite
def conditionals(draw):
    """(p_cond, q_cond, weights) with shapes (n, M), (n, M), (n,)."""
    n, m = draw(st.integers(1, 4)), draw(st.integers(1, 5))
    p = np.array([draw(distributions(m)) for _ in range(n)])
    q = np.array([draw(distributions(m)) for _ in range(n)])
    w = draw(distributions(n, tiny=False))
    return p, q, w


# ---------------------------------------------------------------------------
# Closed forms and reference values.
# ---------------------------------------------------------------------------


def test_uniform_over_256_values_is_8_bits():
    p = np.full(256, 1 / 256)
    assert sn.entropy(p, base=2) == pytest.approx(8.0, rel=1e-14)
    assert sn.nats_to_bits(sn.entropy(p)) == pytest.approx(8.0, rel=1e-14)


@pytest.mark.parametrize("m", [1, 2, 3, 10, 1000])
def test_entropy_of_uniform_is_log_m(m):
    assert sn.entropy(np.full(m, 1 / m)) == pytest.approx(math.log(m), rel=1e-13, abs=1e-15)


@pytest.mark.parametrize("m, hot", [(1, 0), (3, 0), (5, 4)])
def test_entropy_of_one_hot_is_zero(m, hot):
    h = sn.entropy(np.eye(m)[hot])
    assert h == 0.0
    assert math.copysign(1.0, h) == 1.0  # +0, not -0


@given(st.floats(0.01, 0.99), st.floats(0.01, 0.99))
def test_kl_between_bernoullis_matches_closed_form(a, b):
    expected = a * math.log(a / b) + (1 - a) * math.log((1 - a) / (1 - b))
    assert sn.kl_divergence([a, 1 - a], [b, 1 - b]) == pytest.approx(
        expected, rel=1e-9, abs=1e-14
    )


@given(pairs())
def test_base_2_is_nats_over_ln2(pq):
    p, q = pq
    np.testing.assert_allclose(sn.entropy(p, base=2), sn.entropy(p) / LN2, rtol=1e-15)
    for f in (cross_entropy, sn.kl_divergence):
        np.testing.assert_allclose(f(p, q, base=2), f(p, q) / LN2, rtol=1e-15)
    assert sn.nats_to_bits(sn.entropy(p)) == sn.entropy(p, base=2)  # same division
    np.testing.assert_allclose(sn.entropy(p, base=10), ref_entropy(p) / math.log(10),
                               rtol=1e-12, atol=1e-300)


def test_kl_is_not_symmetric():
    # KL(p || q) = 0.5 ln(0.5/0.9) + 0.5 ln(0.5/0.1); KL(q || p) = 0.9 ln 1.8 + 0.1 ln 0.2
    p, q = [0.5, 0.5], [0.9, 0.1]
    forward = 0.5 * math.log(0.5 / 0.9) + 0.5 * math.log(0.5 / 0.1)
    backward = 0.9 * math.log(0.9 / 0.5) + 0.1 * math.log(0.1 / 0.5)
    assert sn.kl_divergence(p, q) == pytest.approx(forward, rel=1e-14)
    assert sn.kl_divergence(q, p) == pytest.approx(backward, rel=1e-14)
    assert abs(forward - backward) > 0.1


# ---------------------------------------------------------------------------
# Properties over random distributions (with zeros and 1e-300 entries).
# ---------------------------------------------------------------------------


@given(pairs())
def test_functions_match_the_reference_loop(pq):
    p, q = pq
    assert sn.entropy(p) == pytest.approx(ref_entropy(p), rel=1e-12, abs=1e-300)
    assert cross_entropy(p, q) == pytest.approx(ref_cross_entropy(p, q), rel=1e-12, abs=1e-300)
    assert sn.kl_divergence(p, q) == pytest.approx(ref_kl(p, q), rel=1e-9, abs=1e-13)


@given(pairs())
def test_kl_is_non_negative(pq):
    p, q = pq
    # 1e-300 entries leave sums of 1 + 1e-300, so KL may dip below 0 by ~1e-297.
    assert sn.kl_divergence(p, q) >= -1e-12


@given(pairs())
def test_kl_of_a_distribution_with_itself_is_zero(pq):
    p, _ = pq
    assert sn.kl_divergence(p, p) == 0.0


@given(pairs())
def test_kl_is_cross_entropy_minus_entropy(pq):
    p, q = pq
    h_pq = cross_entropy(p, q)
    if np.isfinite(h_pq):
        assert sn.kl_divergence(p, q) == pytest.approx(h_pq - sn.entropy(p), abs=1e-12)
    else:
        assert sn.kl_divergence(p, q) == np.inf


@given(pairs())
def test_entropy_lies_between_0_and_log_m(pq):
    p, _ = pq
    h = sn.entropy(p)
    assert 0.0 <= h <= math.log(len(p)) + 1e-12


@given(pairs())
def test_gibbs_gap_is_kl_and_non_negative(pq):
    p, q = pq
    r = sn.gibbs_inequality(p, q)
    assert isinstance(r, GibbsResult)
    h_pq, h_p, gap = r  # unpacks like a tuple
    assert h_pq == pytest.approx(ref_cross_entropy(p, q), rel=1e-12, abs=1e-300)
    assert h_p == pytest.approx(ref_entropy(p), rel=1e-12, abs=1e-300)
    assert gap == pytest.approx(ref_kl(p, q), rel=1e-9, abs=1e-13)
    assert gap == sn.kl_divergence(p, q)  # the gap is KL(p || q), computed term by term
    assert sn.gibbs_inequality(p, p).gap == 0.0
    if np.isfinite(h_pq):
        assert gap == pytest.approx(h_pq - h_p, abs=1e-12)
    assert r.holds


@given(pairs())
def test_log_q_path_equals_q_path(pq):
    p, q = pq
    np.testing.assert_allclose(cross_entropy(p, log_q=log_of(q)), cross_entropy(p, q),
                               rtol=1e-15)
    np.testing.assert_allclose(sn.kl_divergence(p, log_q=log_of(q)),
                               sn.kl_divergence(p, q), rtol=1e-15)
    a, b = sn.gibbs_inequality(p, log_q=log_of(q)), sn.gibbs_inequality(p, q)
    np.testing.assert_allclose(np.array(a), np.array(b), rtol=1e-15)


@given(conditionals())
def test_expected_kl_of_a_conditional_with_itself_is_zero(pqw):
    p, _, w = pqw
    assert sn.expected_kl(p, p, w) == 0.0


@given(conditionals())
def test_expected_kl_is_the_weighted_sum_of_row_kls(pqw):
    p, q, w = pqw
    expected = 0.0
    for p_row, q_row, w_row in zip(p, q, w):
        if w_row > 0:  # an input with P(x) = 0 does not count, even if its KL is inf
            expected += w_row * ref_kl(p_row, q_row)
    got = sn.expected_kl(p, q, w)
    assert np.ndim(got) == 0
    assert got == pytest.approx(expected, rel=1e-9, abs=1e-12)
    np.testing.assert_allclose(sn.expected_kl(p, q, w, base=2), got / LN2, rtol=1e-15)


@given(conditionals())
def test_expected_kl_through_log_q_is_the_weighted_sum_of_row_kls(pqw):
    p, q, w = pqw
    expected = sum(w_row * ref_kl(p_row, q_row)
                   for p_row, q_row, w_row in zip(p, q, w) if w_row > 0)
    with no_warnings():
        got = sn.expected_kl(p, log_q=log_of(q), weights=w)
    assert got == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_expected_kl_through_log_q_keeps_what_q_would_round_to_zero():
    # q = e^-800 underflows to 0 (KL = inf through q); through log q the KL is
    # p log(p / q) summed by hand: 0.5 (log 0.5 - log(1 - e^-800)) + 0.5 (log 0.5 + 800).
    p = np.array([[0.5, 0.5]])
    log_q = np.array([[-math.exp(-800.0), -800.0]])   # log(1 - e^-800) = -e^-800
    ref = 0.5 * (math.log(0.5) - log_q[0, 0]) + 0.5 * (math.log(0.5) + 800.0)
    with no_warnings():
        assert sn.expected_kl(p, np.exp(log_q), [1.0]) == math.inf
        assert sn.expected_kl(p, log_q=log_q, weights=[1.0]) == pytest.approx(ref, rel=1e-15)
        assert sn.expected_kl(p, log_q=log_q, weights=[1.0], base=2) == pytest.approx(
            ref / LN2, rel=1e-15)


THIRDS = np.full((2, 3), 1 / 3)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"q_cond": THIRDS, "log_q": np.log(THIRDS), "weights": [0.5, 0.5]}, TypeError,
     "exactly one of q_cond and log_q; got q_cond=ndarray, log_q=ndarray"),
    ({"weights": [0.5, 0.5]}, TypeError, "exactly one of q_cond and log_q"),
    ({"log_q": np.log(THIRDS)}, TypeError, "give weights .* weights=NoneType"),
    ({"log_q": np.zeros((2, 3)), "weights": [0.5, 0.5]}, ValueError,
     "log_q must be log-probabilities whose logsumexp"),
    ({"log_q": np.zeros((2, 2)), "weights": [0.5, 0.5]}, ValueError,
     "log_q must have the same shape as p_cond"),
])
def test_expected_kl_log_q_bad_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        sn.expected_kl(THIRDS, **kwargs)


# ---------------------------------------------------------------------------
# Conventions: zeros, infinities, no warnings.
# ---------------------------------------------------------------------------


def test_p_zero_where_q_zero_contributes_nothing():
    p, q = [0.5, 0.5, 0.0], [0.25, 0.75, 0.0]
    with no_warnings():
        kl = sn.kl_divergence(p, q)
        h_pq = cross_entropy(p, q)
        h_p = sn.entropy(p)
    assert kl == pytest.approx(0.5 * math.log(2) + 0.5 * math.log(0.5 / 0.75), rel=1e-14)
    assert h_pq == pytest.approx(-0.5 * math.log(0.25) - 0.5 * math.log(0.75), rel=1e-14)
    assert h_p == pytest.approx(LN2, rel=1e-15)


def test_p_positive_where_q_zero_gives_inf_without_warning():
    p, q = np.array([[0.5, 0.5], [1.0, 0.0]]), np.array([[1.0, 0.0], [1.0, 0.0]])
    with no_warnings():
        kl = sn.kl_divergence(p, q)
        h_pq = cross_entropy(p, q)
        r = sn.gibbs_inequality(p, q)
        via_log = sn.kl_divergence(p, log_q=[[0.0, -np.inf], [0.0, -np.inf]])
    np.testing.assert_array_equal(kl, [np.inf, 0.0])
    np.testing.assert_array_equal(via_log, [np.inf, 0.0])
    np.testing.assert_array_equal(h_pq, [np.inf, 0.0])
    np.testing.assert_array_equal(r.gap, [np.inf, 0.0])
    assert r.holds


def test_tiny_probabilities_keep_full_precision():
    with no_warnings():
        kl = sn.kl_divergence([0.5, 0.5], [1.0 - TINY, TINY])
        kl_sub = sn.kl_divergence([0.5, 0.5], [1.0, 5e-324])  # subnormal
        kl_p = sn.kl_divergence([TINY, 1.0], [0.5, 0.5])
    assert kl == pytest.approx(0.5 * math.log(0.5) + 0.5 * math.log(0.5 / TINY), rel=1e-14)
    assert kl_sub == pytest.approx(0.5 * math.log(0.5) + 0.5 * (math.log(0.5) - math.log(5e-324)),
                                   rel=1e-14)
    assert kl_p == pytest.approx(LN2 + TINY * math.log(2 * TINY), rel=1e-14)


def test_log_q_handles_probabilities_that_underflow():
    # q = softmax([0, -800]) = (1, e^-800): exp(-800) underflows to 0 in float64,
    # so the q path sees a zero and returns inf, while log_q keeps -800 exactly.
    log_q = sn.log_softmax([0.0, -800.0])
    np.testing.assert_array_equal(log_q, [0.0, -800.0])
    p = [0.5, 0.5]
    with no_warnings():
        assert cross_entropy(p, log_q=log_q) == pytest.approx(400.0, rel=1e-15)
        assert sn.kl_divergence(p, log_q=log_q) == pytest.approx(math.log(0.5) + 400.0, rel=1e-15)
        assert sn.kl_divergence(p, np.exp(log_q)) == np.inf


@settings(max_examples=15)  # gradient descent is iterative: fewer examples
@given(st.integers(2, 5).flatmap(lambda m: distributions(m, zeros=False, tiny=False, low=0.1)))
def test_unconditional_form_cross_entropy_minimiser_is_p(p):
    # H(p, softmax(z)) = -sum_i p_i (z_i - logsumexp(z)) = logsumexp(z) - sum_i p_i z_i
    # (sum_i p_i = 1), and d logsumexp(z) / dz_k = softmax(z)_k, so the gradient is
    # softmax(z) - p.  The softmax Hessian diag(s) - s s^T has eigenvalues <= 1/2,
    # so a step of 2 is stable; H is convex in z and its minimum is at softmax(z) = p.
    z = np.zeros_like(p)
    for _ in range(5000):
        grad = sn.softmax(z) - p
        if np.max(np.abs(grad)) < 1e-12:
            break
        z -= 2.0 * grad
    np.testing.assert_allclose(sn.softmax(z), p, atol=1e-6)
    direct = -np.sum(p * np.log(p))
    assert cross_entropy(p, sn.softmax(z)) == pytest.approx(direct, abs=1e-10)
    assert cross_entropy(p, log_q=sn.log_softmax(z)) == pytest.approx(direct, abs=1e-10)


def test_gradient_of_cross_entropy_in_logits_is_softmax_minus_p():
    # Central differences of z -> H(p, softmax(z)) against the closed form softmax(z) - p.
    rng = np.random.default_rng(0)
    p = sn.softmax(rng.normal(size=5))
    z = rng.normal(size=5)
    eps = 1e-6
    numeric = np.empty_like(z)
    for k in range(z.size):
        e = np.zeros_like(z)
        e[k] = eps
        numeric[k] = (cross_entropy(p, log_q=sn.log_softmax(z + e))
                      - cross_entropy(p, log_q=sn.log_softmax(z - e))) / (2 * eps)
    analytic = sn.softmax(z) - p
    rel = np.linalg.norm(numeric - analytic) / max(np.linalg.norm(analytic), 1e-12)
    assert rel < 1e-6


# ---------------------------------------------------------------------------
# Shapes, axes, dtypes, the result type.
# ---------------------------------------------------------------------------


def test_scalars_for_1d_arrays_otherwise():
    p = np.array([[0.5, 0.5], [0.9, 0.1], [1.0, 0.0]])
    h = sn.entropy(p[0])
    assert isinstance(h, np.floating) and np.ndim(h) == 0
    assert sn.entropy(p).shape == (3,)
    assert isinstance(sn.kl_divergence(p[0], p[1]), np.floating)
    assert isinstance(sn.expected_kl(p, p, [0.2, 0.3, 0.5]), np.floating)


def test_axis_and_broadcasting_match_a_loop():
    rng = np.random.default_rng(1)
    p = sn.softmax(rng.normal(size=(4, 3)))
    q = sn.softmax(rng.normal(size=(4, 3)))
    loop = [ref_kl(p_row, q_row) for p_row, q_row in zip(p, q)]
    np.testing.assert_allclose(sn.kl_divergence(p, q), loop, rtol=1e-12)
    np.testing.assert_allclose(sn.kl_divergence(p.T, q.T, axis=0), loop, rtol=1e-12)
    # one p against many q (and vice versa): broadcasting over the non-axis dims
    np.testing.assert_allclose(sn.kl_divergence(p[0], q), [ref_kl(p[0], r) for r in q],
                               rtol=1e-12)
    np.testing.assert_allclose(cross_entropy(p, q[0]), [ref_cross_entropy(r, q[0]) for r in p],
                               rtol=1e-12)
    r = sn.gibbs_inequality(p[0], q)
    np.testing.assert_allclose(r.entropy, np.full(4, ref_entropy(p[0])), rtol=1e-12)
    assert r.cross_entropy.shape == r.gap.shape == (4,)


def test_float32_is_preserved():
    p = np.array([[0.25, 0.75], [0.5, 0.5]], dtype=np.float32)
    q = np.array([0.5, 0.5], dtype=np.float32)
    assert sn.entropy(p).dtype == np.float32
    assert sn.entropy(p[0], base=2).dtype == np.float32
    assert cross_entropy(p, q).dtype == np.float32
    assert sn.kl_divergence(p, q, base=2).dtype == np.float32
    assert sn.kl_divergence(p[0], q).dtype == np.float32
    assert all(x.dtype == np.float32 for x in sn.gibbs_inequality(p, q))
    assert sn.expected_kl(p, p, np.float32([0.5, 0.5])).dtype == np.float32
    np.testing.assert_allclose(sn.kl_divergence(p, q), sn.kl_divergence(p.astype(float), q.astype(float)), rtol=1e-6)


def test_gibbs_result_repr_and_holds():
    r = sn.gibbs_inequality([0.5, 0.5], [0.9, 0.1], base=2)
    assert repr(r) == "GibbsResult(cross_entropy=1.73697, entropy=1, gap=0.736966)"
    assert r.holds
    assert r._fields == ("cross_entropy", "entropy", "gap")
    assert not GibbsResult(1.0, 1.1, -0.1).holds
    arr = sn.gibbs_inequality([[0.5, 0.5]], [[0.5, 0.5]])
    assert repr(arr).startswith("GibbsResult(cross_entropy=[0.693147]")


def test_distribution_cross_entropy_is_not_the_top_level_loss():
    assert sn.cross_entropy is not cross_entropy
    assert "cross_entropy" in information.__all__


# ---------------------------------------------------------------------------
# Bad input: a clear error naming the argument.
# ---------------------------------------------------------------------------

HALF = [0.5, 0.5]
UNIFORM = np.full((2, 3), 1 / 3)


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: sn.entropy([0.5, -0.5, 1.0]), ValueError, r"p must be non-negative.*-0\.5"),
        (lambda: sn.entropy([0.5, 0.4]), ValueError, r"p must sum to 1.*0\.9"),
        (lambda: sn.entropy([np.nan, 1.0]), ValueError, r"p must not contain NaN"),
        (lambda: sn.entropy(np.ones((2, 0))), ValueError, r"p must have at least one outcome"),
        (lambda: sn.kl_divergence(HALF, [0.5, 0.6]), ValueError, r"q must sum to 1"),
        (lambda: sn.kl_divergence(HALF, [1.5, -0.5]), ValueError, r"q must be non-negative"),
        (lambda: sn.kl_divergence(HALF, [np.nan, 1.0]), ValueError, r"q must not contain NaN"),
        (lambda: cross_entropy(UNIFORM, [[0.2, 0.2, 0.6], [0.3, 0.3, 0.3]]), ValueError,
         r"q must sum to 1 along axis 1.*at index 1"),
        (lambda: sn.kl_divergence(HALF, [0.2, 0.3, 0.5]), ValueError,
         r"p and q .*shapes \(2,\) and \(3,\)"),
        (lambda: sn.kl_divergence(UNIFORM, np.full((4, 3), 1 / 3)), ValueError,
         r"p and q .*shapes \(2, 3\) and \(4, 3\)"),
        (lambda: sn.kl_divergence(np.full((3, 2), 0.5), np.ones((3, 1))), ValueError,
         r"p and q must have the same number of outcomes along axis 1"),
        (lambda: sn.kl_divergence(HALF), TypeError, r"exactly one of q and log_q; got neither"),
        (lambda: sn.kl_divergence(HALF, HALF, log_q=[0.0, 0.0]), TypeError,
         r"exactly one of q and log_q; got both"),
        (lambda: sn.kl_divergence(HALF, log_q=[0.0, 0.0]), ValueError, r"log_q must be log-probabilities"),
        (lambda: sn.kl_divergence(HALF, log_q=[0.0, np.inf]), ValueError, r"log_q .*got inf"),
        (lambda: sn.kl_divergence(HALF, log_q=[0.0, np.nan]), ValueError, r"log_q must not contain NaN"),
        (lambda: sn.gibbs_inequality(HALF, log_q=[-np.inf, -np.inf]), ValueError, r"log_q .*got -inf"),
        (lambda: sn.entropy(HALF, base=0), ValueError, r"base must be a positive real number other than 1"),
        (lambda: sn.entropy(HALF, base=-2.0), ValueError, r"base must be a positive.*got -2"),
        (lambda: sn.kl_divergence(HALF, HALF, base=1), ValueError, r"base must be a positive real number other than 1 .*got 1"),
        (lambda: sn.kl_divergence(HALF, HALF, base=np.inf), ValueError, r"base .*got inf"),
        (lambda: cross_entropy(HALF, HALF, base=float("nan")), ValueError, r"base must not be NaN"),
        (lambda: sn.gibbs_inequality(HALF, HALF, base=True), TypeError, r"base must be a real number"),
        (lambda: sn.entropy(HALF, base="2"), TypeError, r"base must be a real number"),
        (lambda: sn.entropy(UNIFORM, axis=2), ValueError, r"axis must be in \[-2, 2\)"),
        (lambda: sn.expected_kl(UNIFORM, UNIFORM, [0.5, 0.6]), ValueError, r"weights must sum to 1"),
        (lambda: sn.expected_kl(UNIFORM, UNIFORM, [0.5, 0.5, 0.0]), ValueError,
         r"weights must have shape \(n,\) = \(2,\).*got shape \(3,\)"),
        (lambda: sn.expected_kl(UNIFORM, UNIFORM, [-0.5, 1.5]), ValueError, r"weights must be non-negative"),
        (lambda: sn.expected_kl(UNIFORM, UNIFORM, [np.nan, 1.0]), ValueError, r"weights must not contain NaN"),
        (lambda: sn.expected_kl(UNIFORM[0], UNIFORM[0], [1.0]), ValueError, r"p_cond must have shape \(n, M\)"),
        (lambda: sn.expected_kl(UNIFORM, np.full((3, 3), 1 / 3), [0.5, 0.5]), ValueError,
         r"q_cond must have the same shape as p_cond"),
        (lambda: sn.expected_kl(UNIFORM, [[1.0, 0, 0], [0.5, 0, 0]], [0.5, 0.5]), ValueError,
         r"q_cond must sum to 1"),
        (lambda: sn.entropy(["a", "b"]), TypeError, r"p must be an array of real numbers"),
    ],
)
def test_bad_input_gives_a_clear_error(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_expected_kl_is_never_negative_when_q_is_within_rounding_of_p():
    # q a few ulps away from p: the plain sum of p log(p/q) rounds below 0 in
    # about half of such cases; the termwise form cannot.
    rng = np.random.default_rng(5)
    p = rng.dirichlet(np.ones(4), size=(500, 6))  # 500 trials of 6 rows
    q = p * (1 + rng.integers(-4, 5, size=p.shape) * np.finfo(float).eps)
    q /= q.sum(axis=-1, keepdims=True)
    w = np.full(6, 1 / 6)
    values = np.array([sn.expected_kl(pi, qi, w) for pi, qi in zip(p, q)])
    assert values.min() >= 0.0
    assert values.max() < 1e-28  # and still tiny: about (eps)^2 per term
