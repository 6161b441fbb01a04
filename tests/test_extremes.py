"""A catalogue of extreme but valid inputs, each against an independent reference.

Logits of 1e300, ``-inf``, probabilities of 1e-300, weights of 1e308 and 1e-320,
far tails, float32 and empty axes.  Every reference is computed here, with
mpmath at 50 digits or in closed form, never with the code under test, and
compared relatively (``abs=0``): a tiny value must come out tiny *and right*.
Warnings are errors, so an overflow on the way to a right answer fails too.
"""

import math

import mpmath
import numpy as np
import pytest

import scratchnet as sn

pytestmark = pytest.mark.filterwarnings("error")

mp = mpmath.mp
mp.dps = 50
INF = float("inf")


def _engine_mse_grad(o):
    """The engine's squared error on one member, one sample, one output: 2 (o - c)."""
    outputs = np.array([[[o]]])
    sn.fast.objectives.member_losses_inplace(outputs, np.array([[0]]), "mse")
    return outputs[0, 0, 0]


# ---- references in mpmath ------------------------------------------------------


def _mpf(v):
    return v if isinstance(v, mpmath.mpf) else mpmath.mpf(float(v))


def _mp_log_total(xs):
    """log sum exp(x - max x), as log1p of all but the top term (50 digits are
    not enough for 1 + e^-745)."""
    top = max(xs)
    rest = list(xs)
    rest.remove(top)
    return top, mpmath.log1p(mpmath.fsum(mpmath.exp(v - top) for v in rest))


def mp_logsumexp(xs):
    if any(v == INF for v in xs):
        return INF
    xs = [_mpf(v) for v in xs if v != -INF]
    if not xs:
        return -INF
    top, log_total = _mp_log_total(xs)
    return float(top + log_total)


def mp_log_softmax_mp(xs, i):
    xs = [_mpf(v) for v in xs]
    top, log_total = _mp_log_total(xs)
    return xs[i] - top - log_total


def mp_log_softmax(xs, i):
    return float(mp_log_softmax_mp(xs, i))


def mp_softmax(xs, i):
    return float(mpmath.exp(mp_log_softmax_mp(xs, i)))


def mp_cross_entropy(rows, targets, weight=None, eps=0.0, reduction="mean"):
    """torch.nn.functional.cross_entropy with class indices, in mpmath."""
    m = len(rows[0])
    w = [mpmath.mpf(1)] * m if weight is None else [_mpf(v) for v in weight]
    losses, total_w = [], mpmath.mpf(0)
    for row, t in zip(rows, targets):
        lq = [mp_log_softmax_mp(row, i) for i in range(m)]
        y = [(1 - eps) * (i == t) + mpmath.mpf(eps) / m for i in range(m)]
        losses.append(-mpmath.fsum(w[i] * y[i] * lq[i] for i in range(m)))
        total_w += w[t]
    if reduction == "none":
        return [float(v) for v in losses]
    total = mpmath.fsum(losses)
    return float(total / total_w if reduction == "mean" else total)


def mp_log_sigmoid(s):
    return float(-mpmath.log1p(mpmath.exp(-_mpf(s))))


def mp_kl(p, q):
    """sum p log(p/q) - p + q: KL(p||q) for distributions, and the divergence of
    the measures as given for inputs that sum to 1 only within rounding."""
    p, q = [_mpf(a) for a in p], [_mpf(b) for b in q]
    return float(mpmath.fsum(a * mpmath.log(a / b) for a, b in zip(p, q) if a > 0)
                 - mpmath.fsum(p) + mpmath.fsum(q))


def mp_entropy(p):
    return float(-mpmath.fsum(_mpf(a) * mpmath.log(_mpf(a)) for a in p if a > 0))


# ---- the catalogue: (id, what scratchnet computes, the reference, rtol) ------------

E40 = math.exp(-40)

CASES = [
    # logsumexp: the dominant term, overflow, underflow, infinities, the empty sum
    ("lse [0, -40]", lambda: sn.logsumexp([0.0, -40.0]), mp_logsumexp([0, -40]), 1e-15),
    ("lse [0, -40, -40]", lambda: sn.logsumexp([0.0, -40.0, -40.0]),
     mp_logsumexp([0, -40, -40]), 1e-15),
    ("lse [0, -745]", lambda: sn.logsumexp([0.0, -745.0]), mp_logsumexp([0, -745]), 1e-14),
    ("lse [1e300, 0]", lambda: sn.logsumexp([1e300, 0.0]), 1e300, 0),
    ("lse [1e308, 1e308]", lambda: sn.logsumexp([1e308, 1e308]), 1e308, 1e-15),
    ("lse [-1e300, -1e300]", lambda: sn.logsumexp([-1e300, -1e300]), -1e300, 1e-15),
    ("lse [1000, 1000]", lambda: sn.logsumexp([1000.0, 1000.0]),
     mp_logsumexp([1000, 1000]), 1e-15),
    ("lse [-inf, 0]", lambda: sn.logsumexp([-INF, 0.0]), 0.0, 0),
    ("lse [-inf, -inf]", lambda: sn.logsumexp([-INF, -INF]), -INF, 0),
    ("lse [inf, 1]", lambda: sn.logsumexp([INF, 1.0]), INF, 0),
    ("lse []", lambda: sn.logsumexp([]), -INF, 0),
    ("lse float32 [0, -20]", lambda: sn.logsumexp(np.float32([0, -20])),
     mp_logsumexp([0, -20]), 1e-6),
    ("lse [5e-324, -5e-324]", lambda: sn.logsumexp([5e-324, -5e-324]), math.log(2), 1e-15),
    # log_softmax and softmax
    ("log_softmax [0, -20, -20][0]", lambda: sn.log_softmax([0.0, -20, -20])[0],
     mp_log_softmax([0, -20, -20], 0), 1e-15),
    ("log_softmax [0, -40][0]", lambda: sn.log_softmax([0.0, -40])[0],
     mp_log_softmax([0, -40], 0), 1e-15),
    ("log_softmax [0, -40][1]", lambda: sn.log_softmax([0.0, -40])[1],
     mp_log_softmax([0, -40], 1), 1e-15),
    ("log_softmax [1e300, 0][1]", lambda: sn.log_softmax([1e300, 0.0])[1], -1e300, 0),
    ("log_softmax [0, -1e4][1]", lambda: sn.log_softmax([0.0, -1e4])[1], -1e4, 0),
    ("log_softmax [-inf, 0][0]", lambda: sn.log_softmax([-INF, 0.0])[0], -INF, 0),
    ("log_softmax f32 [20, 0][0]", lambda: sn.log_softmax(np.float32([20, 0]))[0],
     mp_log_softmax([20, 0], 0), 1e-6),
    ("softmax [0, -745][1]", lambda: sn.softmax([0.0, -745.0])[1],
     mp_softmax([0, -745], 1), 1e-1),   # a subnormal: about one significant digit
    ("softmax [0, -700][1]", lambda: sn.softmax([0.0, -700.0])[1],
     mp_softmax([0, -700], 1), 1e-14),
    ("softmax [1e300, 0, -inf][0]", lambda: sn.softmax([1e300, 0.0, -INF])[0], 1.0, 0),
    ("softmax [-1e300]*2 [0]", lambda: sn.softmax([-1e300, -1e300])[0], 0.5, 0),
    ("softmax f32 [0, -80][1]", lambda: sn.softmax(np.float32([0, -80]))[1],
     mp_softmax([0, -80], 1), 1e-5),
    # sigmoid, log-sigmoid, logit: far tails
    ("sigmoid(-700)", lambda: sn.sigmoid(-700.0), float(mpmath.exp(-700) / (1 + mpmath.exp(-700))),
     1e-14),
    ("sigmoid(-1e300)", lambda: sn.sigmoid(-1e300), 0.0, 0),
    ("sigmoid(40)", lambda: sn.sigmoid(40.0), 1.0, 0),
    ("log_sigmoid(40)", lambda: sn.log_sigmoid(40.0), mp_log_sigmoid(40), 1e-15),
    ("log_sigmoid(-1e300)", lambda: sn.log_sigmoid(-1e300), -1e300, 0),
    ("log_sigmoid(700)", lambda: sn.log_sigmoid(700.0), mp_log_sigmoid(700), 1e-14),
    ("log_sigmoid f32 (20)", lambda: sn.log_sigmoid(np.float32(20)), mp_log_sigmoid(20), 1e-6),
    ("logit(1e-300)", lambda: sn.logit(1e-300),
     float(mpmath.log(_mpf(1e-300) / (1 - _mpf(1e-300)))), 1e-15),
    ("logit(0.5 + 2^-40)", lambda: sn.logit(0.5 + 2.0 ** -40),
     float(mpmath.log((0.5 + mpmath.mpf(2) ** -40) / (0.5 - mpmath.mpf(2) ** -40))), 1e-15),
    ("logit(1 - 2^-53)", lambda: sn.logit(1 - 2.0 ** -53), 53 * math.log(2), 1e-15),
    ("logit(0)", lambda: sn.logit(0.0), -INF, 0),
    # cross-entropy: the same loss as the binary one, to relative precision
    ("ce [[40, 0]], 0", lambda: sn.cross_entropy([[40.0, 0]], [0]), math.log1p(E40), 1e-15),
    ("bce [40], 1", lambda: sn.binary_cross_entropy_with_logits([40.0], [1.0]),
     math.log1p(E40), 1e-15),
    ("ce probs [[40, 0]], [1, 0]",
     lambda: sn.functional.cross_entropy([[40.0, 0]], np.array([[1.0, 0.0]])), math.log1p(E40), 1e-15),
    ("ce weighted [[40, 0]], 0", lambda: sn.functional.cross_entropy([[40.0, 0]], [0], weight=[3.0, 1]),
     math.log1p(E40), 1e-15),
    ("ce f32 [[20, 0]], 0", lambda: sn.cross_entropy(np.float32([[20, 0]]), [0]),
     math.log1p(math.exp(-20)), 1e-6),
    ("ce [[1e300, 0]], 1", lambda: sn.cross_entropy([[1e300, 0.0]], [1]), 1e300, 0),
    ("ce [[0, -inf]], 1", lambda: sn.cross_entropy([[0.0, -INF]], [1]), INF, 0),
    ("ce [[0, -inf]], 0", lambda: sn.cross_entropy([[0.0, -INF]], [0]), 0.0, 0),
    ("ce smoothing 0.1 at 1e307",
     lambda: sn.functional.cross_entropy([[1e307, -1e307]], [0], label_smoothing=0.1), 0.05 * 2e307,
     1e-15),
    ("ce smoothing 0.1 at 1e308",
     lambda: sn.functional.cross_entropy([[1e308, -1e308]], [0], label_smoothing=0.1),
     INF, 0),  # convention (docs/conventions.md): a gap beyond 1.8e308 is inf, and
    #           so is its share (0.1 / 2) * 2e308 = 1e307 of the smoothed loss
    ("ce smoothing 0.2, [[40, 0, 0]]",
     lambda: sn.functional.cross_entropy([[40.0, 0, 0]], [0], label_smoothing=0.2),
     mp_cross_entropy([[40, 0, 0]], [0], eps=0.2), 1e-14),
    ("ce weights 1e308", lambda: sn.functional.cross_entropy([[0.0, 1], [1, 0]], [0, 1],
                                                  weight=[1e308, 1e308]),
     mp_cross_entropy([[0, 1], [1, 0]], [0, 1]), 1e-15),
    ("ce weights 1e-320", lambda: sn.functional.cross_entropy([[0.0, 1], [1, 0]], [0, 1],
                                                   weight=[1e-320, 1e-320]),
     mp_cross_entropy([[0, 1], [1, 0]], [0, 1]), 1e-15),
    ("ce weights 1e308 and 1, smoothing",
     lambda: sn.functional.cross_entropy([[0.0, 1], [1, 0]], [0, 1], weight=[1e308, 1.0],
                              label_smoothing=0.1),
     mp_cross_entropy([[0, 1], [1, 0]], [0, 1], weight=[1e308, 1], eps=0.1), 1e-14),
    ("ce weights sum 1e308", lambda: sn.functional.cross_entropy([[0.0, 1]], [0], weight=[1e308, 1],
                                                      reduction="sum"),
     1e308 * math.log1p(math.e), 1e-15),
    ("nll of log_softmax [0, -40]",
     lambda: sn.nll_loss(sn.log_softmax(np.array([[0.0, -40]])), [0]), math.log1p(E40), 1e-15),
    ("nll at log q = 1e-6 (rounding)", lambda: sn.functional.nll_loss([[1e-6, -INF]], [0]), 0.0, 0),
    # binary cross-entropy
    ("bce [1e308, -1e308] mean", lambda: sn.binary_cross_entropy_with_logits(
        [1e308, -1e308], [0.0, 1.0]), 1e308, 1e-15),
    ("bce [1e308, -1e308] sum", lambda: sn.functional.binary_cross_entropy_with_logits(
        [1e308, -1e308], [0.0, 1.0], reduction="sum"), INF, 0),
    ("bce [-800], 1", lambda: sn.binary_cross_entropy_with_logits([-800.0], [1.0]), 800.0,
     1e-15),
    ("bce [800], 1", lambda: sn.binary_cross_entropy_with_logits([800.0], [1.0]), 0.0, 0),
    ("bce f32 [30], 1", lambda: sn.binary_cross_entropy_with_logits(np.float32([30]), [1.0]),
     math.log1p(math.exp(-30)), 1e-6),
    # squared error: overflow is inf, silently and rightly
    ("mse [1e308] vs [-1e308]", lambda: sn.mse_loss([1e308], [-1e308]), INF, 0),
    ("mse [1e154] vs [0]", lambda: sn.mse_loss([1e154], [0.0]), 1e308, 1e-15),
    # 2 (o - y) = 2e308 rounds to inf: the right answer, silently (issue 29)
    ("mse_grad sum at 1e308", lambda: sn.mse_loss_grad([[1e308]], [0], reduction="sum")[0, 0],
     INF, 0),
    ("mse_grad none at -1e308", lambda: sn.mse_loss_grad([[-1e308]], [[0.0]],
                                                          reduction="none")[0, 0], -INF, 0),
    ("mse_grad mean of one at 1e308", lambda: sn.mse_loss_grad([[1e308]], [0])[0, 0], INF, 0),
    ("engine mse grad at 1e308", lambda: _engine_mse_grad(1e308), INF, 0),
    ("mse (N,1) with 0/1 integer targets",
     lambda: sn.mse_loss(np.array([[0.25], [0.5]]), np.array([0, 1])), (0.0625 + 0.25) / 2, 0),
    # information
    ("kl p 1e-300", lambda: sn.kl_divergence([1e-300, 1 - 1e-300], [0.5, 0.5]),
     mp_kl([1e-300, 1], [0.5, 0.5]), 1e-15),
    ("kl p subnormal 1e-320", lambda: sn.kl_divergence([1e-320, 1.0], [0.5, 0.5]),
     mp_kl([1e-320, 1], [0.5, 0.5]), 1e-15),
    ("kl q 1e-300", lambda: sn.kl_divergence([0.5, 0.5], [1e-300, 1 - 1e-300]),
     mp_kl([0.5, 0.5], [1e-300, 1]), 1e-15),
    ("kl log_q -800", lambda: sn.kl_divergence([0.5, 0.5], log_q=[0.0, -800.0]),
     mp_kl([0.5, 0.5], [1, mpmath.exp(-800)]), 1e-15),
    ("kl p = q", lambda: sn.kl_divergence([0.3, 0.7], [0.3, 0.7]), 0.0, 0),
    ("kl q = 0 < p", lambda: sn.kl_divergence([0.5, 0.5], [1.0, 0.0]), INF, 0),
    ("entropy [1e-300, 1]", lambda: sn.entropy([1e-300, 1.0]), mp_entropy([1e-300, 1]), 1e-15),
    ("entropy [0, 1]", lambda: sn.entropy([0.0, 1.0]), 0.0, 0),
    ("cross-entropy log_q -800", lambda: sn.information.cross_entropy(
        [0.5, 0.5], log_q=[0.0, -800.0]), 400.0, 1e-15),
    # units
    ("nats_to_bits(1e308)", lambda: sn.nats_to_bits(1e308), 1e308 / math.log(2), 1e-15),
    ("bits_to_nats(5e-324)", lambda: sn.bits_to_nats(5e-324), 5e-324, 0),
]


@pytest.mark.parametrize("case, got, expected, rtol", CASES, ids=[c[0] for c in CASES])
def test_extreme_valid_input_gives_the_right_answer(case, got, expected, rtol):
    value = got()
    if np.isinf(expected) or expected == 0 or rtol == 0:
        assert value == expected, f"{case}: {value!r} != {expected!r}"
        assert not np.signbit(value) or expected < 0 or np.signbit(expected), "-0.0"
    else:
        assert float(value) == pytest.approx(expected, rel=rtol, abs=0), case


def test_the_catalogue_is_large():
    assert len(CASES) >= 70


def test_kl_is_never_negative_when_q_is_within_rounding_of_p():
    """Half of these came out negative (to -4.4e-16) when the KL was summed as
    p log(p/q); the termwise p log(p/q) - p + q cannot round below 0."""
    rng = np.random.default_rng(13)
    p = rng.dirichlet(np.ones(5), size=300)
    q = p * (1 + rng.integers(-4, 5, size=p.shape) * 2.0 ** -53)  # a few ulps off
    kl = sn.kl_divergence(p, q)
    assert (kl >= 0).all()
    reference = [mp_kl(a, b) for a, b in zip(p[:40], q[:40])]
    np.testing.assert_allclose(kl[:40], reference, rtol=0, atol=4 * 2.0 ** -52)
    gap = sn.gibbs_inequality(p, q).gap
    assert (gap >= 0).all()


# ---- gradients at the extremes -----------------------------------------------------


@pytest.mark.parametrize("weight", [[1e-320, 1e-320], [1e308, 1e308], [1e-320, 1e300]])
def test_weighted_gradients_are_finite_and_scale_free(weight):
    logits, targets = np.array([[0.0, 1.0], [1.0, 0.0]]), [0, 1]
    w = np.asarray(weight)
    grad = sn.functional.cross_entropy_grad(logits, targets, weight=w)
    q = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    share = w[targets] / w[targets].max()  # sample j's share of the weighted mean
    expected = (q - np.eye(2)[targets]) * (share / share.sum())[:, None]
    np.testing.assert_allclose(grad, expected, rtol=1e-15, atol=0)
    nll = sn.functional.nll_loss_grad(np.log(q), targets, weight=w)
    np.testing.assert_allclose(nll, -np.eye(2)[targets] * (share / share.sum())[:, None],
                               rtol=1e-15, atol=0)


def test_label_smoothing_gradient_at_1e308_is_the_smoothing_share():
    grad = sn.functional.cross_entropy_grad([[1e308, -1e308]], [0], label_smoothing=0.1)
    np.testing.assert_allclose(grad, [[0.05, -0.05]], rtol=1e-14, atol=0)


# ---- empty axes ------------------------------------------------------------------


@pytest.mark.parametrize("shape, axis", [((4, 0), -1), ((0, 4), -1), ((2, 0, 3), 1)])
def test_empty_axes(shape, axis):
    x = np.zeros(shape, np.float32)
    for func in (sn.softmax, sn.log_softmax):
        out = func(x, axis=axis)
        assert out.shape == shape and out.dtype == np.float32
    expected_shape = tuple(n for i, n in enumerate(shape) if i != axis % len(shape))
    lse = sn.logsumexp(x, axis=axis)
    assert lse.shape == expected_shape
    assert (lse == -INF).all() if shape[axis] == 0 else True
