"""Parity with SciPy: every function the two libraries share, float64, rtol 1e-10.

The cases follow the shared ones of SciPy's own ``test_logsumexp.py`` and
``test_entropy.py`` (large inputs, many equal terms, tiny terms in log space,
infinities, axes and keepdims, the dominant term of gh-18295; entropies in
nats and bits, KL as ``entropy(p, q)`` and ``rel_entr``, along either axis),
written here, not copied.  SciPy has no gradients; where we compute one it is
checked against SciPy's values of the function it must equal (the gradient
of log-sum-exp is the softmax, that of the cross-entropy softmax minus one-hot).

Where we differ by design (SciPy's softmax default ``axis=None``, the silent
renormalisation of ``scipy.stats.entropy``, NaN for ``logit`` outside [0, 1],
``b=`` and ``return_sign=``, which we do not have), the axis is given
explicitly, inputs are distributions, and the difference is tested as such.

Runs where SciPy is installed (``pip install -e ".[parity]"``).
"""

import numpy as np
import pytest

import scratchnet as sn

special = pytest.importorskip("scipy.special")
stats = pytest.importorskip("scipy.stats")

pytestmark = pytest.mark.filterwarnings("error")

RTOL = 1e-10


def _close(ours, theirs):
    np.testing.assert_allclose(np.asarray(ours, dtype=np.float64), theirs, rtol=RTOL,
                               atol=0)


# ---- logsumexp -----------------------------------------------------------------

LSE_CASES = {
    "arange(200)": (np.arange(200.0), -1),
    "[1000, 1000]": (np.array([1000.0, 1000.0]), -1),
    "1000 x 10000": (np.full(1000, 10000.0), -1),
    "1e-40 x 1000 in log space": (np.full(1000, np.log(1e-40)), -1),
    "[1e10, 1e-10]": (np.array([1e10, 1e-10]), -1),
    "[-inf, -inf]": (np.array([-np.inf, -np.inf]), -1),
    "[inf, -inf]": (np.array([np.inf, -np.inf]), -1),
    "[inf, inf]": (np.array([np.inf, np.inf]), -1),
    "[-inf, 1]": (np.array([-np.inf, 1.0]), -1),
    "gh-18295 [0, -40]": (np.array([0.0, -40.0]), -1),
    "gh-18295 [-40, 0, -40]": (np.array([-40.0, 0.0, -40.0]), -1),
    "gh-18295 [0, -745]": (np.array([0.0, -700.0]), -1),
    "ties [3, 3, -40]": (np.array([3.0, 3.0, -40.0]), -1),
    "2-d axis 0": (np.random.default_rng(0).normal(scale=10, size=(4, 6)), 0),
    "2-d axis 1": (np.random.default_rng(1).normal(scale=10, size=(4, 6)), 1),
    "3-d axis 1": (np.random.default_rng(2).normal(scale=100, size=(2, 5, 3)), 1),
    "rows with -inf": (np.array([[0.0, -np.inf], [-np.inf, -np.inf], [5.0, 5.0]]), 1),
    "empty": (np.array([]), -1),
    "empty axis": (np.zeros((3, 0)), 1),
}


@pytest.mark.parametrize("name", LSE_CASES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_logsumexp_matches_scipy(name, keepdims):
    x, axis = LSE_CASES[name]
    got = sn.logsumexp(x, axis=axis, keepdims=keepdims)
    want = special.logsumexp(x, axis=axis, keepdims=keepdims)
    assert np.shape(got) == np.shape(want)
    _close(got, want)


@pytest.mark.parametrize("seed", range(4))
def test_the_gradient_of_logsumexp_is_scipy_softmax(seed):
    """d logsumexp / dx = softmax(x), checked through the cross-entropy:
    d/df [logsumexp(f) - f_c] = softmax(f) - one_hot(c)."""
    rng = np.random.default_rng(seed)
    f = rng.normal(scale=4.0, size=(5, 7))
    c = rng.integers(0, 7, size=5)
    want = (special.softmax(f, axis=1) - np.eye(7)[c]) / 5
    _close(sn.cross_entropy_grad(f, c), want)
    _close(sn.cross_entropy(f, c), np.mean(special.logsumexp(f, axis=1) - f[range(5), c]))


# ---- softmax and log_softmax (axis given: SciPy's default is the whole array) -------

SOFTMAX_CASES = {
    "row": (np.array([1.0, 2.0, 3.0, 4.0]), -1),
    "rows": (np.array([[-10.0, -10, 10, -5], [3, 0, 0, 0]]), 1),
    "columns": (np.random.default_rng(3).normal(scale=5, size=(6, 3)), 0),
    "large": (np.array([[1000.0, 999.0, -1000.0]]), 1),
    "-inf": (np.array([[0.0, -np.inf, 2.0]]), 1),
    "3-d": (np.random.default_rng(4).normal(scale=3, size=(2, 3, 4)), 2),
}


@pytest.mark.parametrize("name", SOFTMAX_CASES)
def test_softmax_and_log_softmax_match_scipy(name):
    x, axis = SOFTMAX_CASES[name]
    _close(sn.softmax(x, axis=axis), special.softmax(x, axis=axis))
    _close(sn.log_softmax(x, axis=axis), special.log_softmax(x, axis=axis))


def test_softmax_default_axis_differs_from_scipy_by_design():
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    _close(sn.softmax(x), special.softmax(x, axis=-1))
    assert not np.allclose(sn.softmax(x), special.softmax(x))  # SciPy: one distribution


# ---- sigmoid, log-sigmoid and logit: expit, log_expit, logit ------------------------

# Within +-700: SciPy's expit flushes the subnormal sigmoid(-720) to 0 (we keep
# it; tests/test_extremes.py checks those tails against mpmath).
X = np.concatenate([np.linspace(-700.0, 700.0, 281), [-40.0, -1e-8, 0.0, 1e-8, 40.0]])
P = np.concatenate([np.linspace(1e-6, 1 - 1e-6, 301), [0.0, 1.0, 1e-300, 0.3, 0.65]])


def test_sigmoid_is_expit_and_log_sigmoid_is_log_expit():
    _close(sn.sigmoid(X), special.expit(X))
    _close(sn.log_sigmoid(X), special.log_expit(X))


def test_logit_is_scipy_logit_and_rejects_what_scipy_turns_into_nan():
    _close(sn.logit(P), special.logit(P))
    with np.errstate(invalid="ignore"):
        assert np.isnan(special.logit(1.5))
    with pytest.raises(ValueError, match=r"p must be probabilities in \[0, 1\]"):
        sn.logit(1.5)


# ---- entropy, KL, cross-entropy of distributions ----------------------------------

RNG = np.random.default_rng(8)
DISTRIBUTIONS = {
    "halves": ([0.5, 0.5], [0.9, 0.1]),
    "quarters": ([0.25] * 4, [0.1, 0.2, 0.3, 0.4]),
    "a zero in p": ([0.0, 0.3, 0.7], [0.2, 0.3, 0.5]),
    "one-hot p": ([1.0, 0.0, 0.0], [0.5, 0.25, 0.25]),
    "p = q": ([0.1, 0.2, 0.7], [0.1, 0.2, 0.7]),
    "dirichlet": (RNG.dirichlet(np.ones(6)), RNG.dirichlet(np.ones(6))),
    "tiny entries": ([1e-300, 1 - 1e-300], [0.5, 0.5]),
}


@pytest.mark.parametrize("name", DISTRIBUTIONS)
@pytest.mark.parametrize("base", [None, 2, 10])
def test_entropy_and_kl_match_scipy(name, base):
    p, q = (np.asarray(a, dtype=float) for a in DISTRIBUTIONS[name])
    _close(sn.entropy(p, base=base), stats.entropy(p, base=base))
    _close(sn.kl_divergence(p, q, base=base), stats.entropy(p, q, base=base))
    h_pq = stats.entropy(p, base=base) + stats.entropy(p, q, base=base)
    _close(sn.information.cross_entropy(p, q, base=base), h_pq)


@pytest.mark.parametrize("name", DISTRIBUTIONS)
def test_kl_and_entropy_are_sums_of_rel_entr_and_entr(name):
    p, q = (np.asarray(a, dtype=float) for a in DISTRIBUTIONS[name])
    _close(sn.kl_divergence(p, q), np.sum(special.rel_entr(p, q)))
    _close(sn.entropy(p), np.sum(special.entr(p)))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_entropy_along_an_axis_matches_scipy(axis):
    rng = np.random.default_rng(axis + 10)
    p = np.moveaxis(rng.dirichlet(np.ones(4), size=(3, 5)), -1, axis)
    q = np.moveaxis(rng.dirichlet(np.ones(4), size=(3, 5)), -1, axis)
    _close(sn.entropy(p, axis=axis), stats.entropy(p, axis=axis))
    _close(sn.kl_divergence(p, q, axis=axis), stats.entropy(p, q, axis=axis))


def test_infinite_kl_where_q_misses_p_as_scipy():
    assert sn.kl_divergence([0.5, 0.5], [1.0, 0.0]) == stats.entropy([0.5, 0.5], [1.0, 0.0])
    assert sn.kl_divergence([0.5, 0.5], [1.0, 0.0]) == np.inf


def test_entropy_of_a_non_distribution_differs_from_scipy_by_design():
    assert stats.entropy([0.5, 0.6]) == pytest.approx(0.6890, abs=1e-4)  # renormalised
    with pytest.raises(ValueError, match="p must sum to 1"):
        sn.entropy([0.5, 0.6])


def test_units_match_scipy_bases():
    p = np.array([0.2, 0.3, 0.5])
    _close(sn.nats_to_bits(sn.entropy(p)), stats.entropy(p, base=2))
    _close(sn.bits_to_nats(stats.entropy(p, base=2)), stats.entropy(p))
