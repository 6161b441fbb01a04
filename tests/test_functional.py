"""functional.py (PyTorch's options) against reference values, loops and finite differences."""

import math

import numpy as np
import pytest
from _support import classification_data
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import scratchnet as sn

pytestmark = pytest.mark.filterwarnings("error")  # no RuntimeWarning, ever

REDUCTIONS = ["mean", "sum", "none"]
# Two samples, three classes; targets 0 and 1: the loss is the mean of
# ln(e^-1 + e^-3 + e^4) + 1 and ln(e^-3 + e^3 + e^-1) - 3, 2.5141 nats.
LOGITS = np.array([[-1.0, -3.0, 4.0], [-3.0, 3.0, -1.0]])
TARGETS = np.array([0, 1])


_data = classification_data


# ------------------------------------------------- reference implementations
# Plain loops over samples, written from the formulas (PyTorch's semantics).


def _ref_log_softmax(row):
    top = max(row)
    lse = top + math.log(math.fsum(math.exp(v - top) for v in row))
    return [v - lse for v in row]


def _ref_reduce(losses, reduction, denominator):
    if reduction == "none":
        return np.array(losses)
    total = math.fsum(losses)
    return total / denominator if reduction == "mean" else total


def _ref_nll(log_probs, targets, weight=None, reduction="mean"):
    m = len(log_probs[0])
    w = [1.0] * m if weight is None else list(weight)
    losses = [-w[t] * row[t] for row, t in zip(log_probs, targets)]
    return _ref_reduce(losses, reduction, math.fsum(w[t] for t in targets))


def _ref_cross_entropy(logits, targets, weight=None, eps=0.0, reduction="mean"):
    n, m = np.shape(logits)
    w = [1.0] * m if weight is None else list(weight)
    losses, denominator = [], 0.0
    for j in range(n):
        lp = _ref_log_softmax(list(logits[j]))
        if np.ndim(targets) == 1:  # class indices
            t = targets[j]
            nll = -w[t] * lp[t]
            smooth = -math.fsum(w[i] * lp[i] for i in range(m))
            losses.append((1 - eps) * nll + eps / m * smooth)
            denominator += w[t]
        else:  # probabilities
            p = [targets[j][i] * (1 - eps) + eps / m for i in range(m)]
            losses.append(-math.fsum(w[i] * p[i] * lp[i] for i in range(m)))
            denominator += 1
    return _ref_reduce(losses, reduction, denominator)


def _ref_bce(logits, targets, pos_weight=None, reduction="mean"):
    s, y = np.asarray(logits, float), np.asarray(targets, float)
    pw = np.broadcast_to(1.0 if pos_weight is None else pos_weight, s.shape)
    losses = []
    for sv, yv, pv in zip(s.flat, y.flat, pw.flat):
        log_q = -math.log1p(math.exp(-sv))  # log sigmoid(s), moderate s only
        log_1mq = -math.log1p(math.exp(sv))  # log sigmoid(-s)
        losses.append(-(pv * yv * log_q + (1 - yv) * log_1mq))
    out = _ref_reduce(losses, reduction, len(losses))
    return out.reshape(s.shape) if reduction == "none" else out


# ------------------------------------------------------- reference values


def test_reference_value_2_5141():
    assert f"{sn.functional.cross_entropy(LOGITS, TARGETS):.4f}" == "2.5141"
    assert f"{sn.functional.nll_loss(sn.log_softmax(LOGITS), TARGETS):.4f}" == "2.5141"
    assert sn.functional.cross_entropy(LOGITS, TARGETS) == pytest.approx(
        _ref_cross_entropy(LOGITS, TARGETS), rel=1e-15
    )


def test_cross_entropy_equals_log_softmax_then_nll_per_sample():
    logits, targets, _, weight = _data()
    for w in (None, weight):
        np.testing.assert_allclose(
            sn.functional.cross_entropy(logits, targets, weight=w, reduction="none"),
            sn.functional.nll_loss(sn.log_softmax(logits), targets, weight=w, reduction="none"),
            rtol=1e-15,
        )


def test_per_sample_range_zero_to_log_m():
    assert sn.functional.cross_entropy([[1e4, 0.0, 0.0]], [0]) == 0.0  # perfect prediction
    assert sn.functional.cross_entropy(np.zeros((1, 5)), [3]) == pytest.approx(math.log(5))
    assert sn.functional.cross_entropy([[0.0, 50.0]], [0]) == pytest.approx(50.0)  # unbounded


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_matches_the_loop(reduction, weighted):
    logits, targets, _, weight = _data()
    w = weight if weighted else None
    log_probs = sn.log_softmax(logits)
    np.testing.assert_allclose(
        sn.functional.nll_loss(log_probs, targets, weight=w, reduction=reduction),
        _ref_nll(log_probs, targets, w, reduction),
        rtol=1e-14,
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("eps", [0.0, 0.1, 1.0])
@pytest.mark.parametrize("kind", ["indices", "probs"])
def test_cross_entropy_matches_the_loop(reduction, weighted, eps, kind):
    logits, targets, probs, weight = _data()
    y = targets if kind == "indices" else probs
    w = weight if weighted else None
    np.testing.assert_allclose(
        sn.functional.cross_entropy(logits, y, weight=w, label_smoothing=eps, reduction=reduction),
        _ref_cross_entropy(logits, y, w, eps, reduction),
        rtol=1e-13,
    )


def test_probability_targets_equal_to_one_hot_match_class_indices():
    logits, targets, _, _ = _data()
    one_hot = np.eye(logits.shape[1])[targets]
    for eps in (0.0, 0.3):
        np.testing.assert_allclose(
            sn.functional.cross_entropy(logits, one_hot, label_smoothing=eps),
            sn.functional.cross_entropy(logits, targets, label_smoothing=eps),
            rtol=1e-14,
        )


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("pos_weight", [None, 3.0, "vector"])
def test_binary_cross_entropy_matches_the_loop(reduction, pos_weight):
    rng = np.random.default_rng(3)
    logits = rng.normal(scale=3, size=(4, 3))
    targets = rng.uniform(size=(4, 3))
    targets[0] = [0.0, 1.0, 1.0]
    pw = rng.uniform(0.5, 2, size=3) if pos_weight == "vector" else pos_weight
    np.testing.assert_allclose(
        sn.functional.binary_cross_entropy_with_logits(
            logits, targets, pos_weight=pw, reduction=reduction
        ),
        _ref_bce(logits, targets, pw, reduction),
        rtol=1e-13,
    )


# ------------------------------------------------------- gradients


def _assert_gradient(loss, grad, x, args, kwargs):
    """Compare grad with central differences of loss (summed for 'none')."""

    def f(z):
        return np.sum(loss(z, *args, **kwargs))

    error = sn.gradient_check(f, grad(x, *args, **kwargs), x)
    assert error < 1e-6, f"relative error {error:.2e}"


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_grad(reduction, weighted):
    logits, targets, _, weight = _data()
    kwargs = {"weight": weight if weighted else None, "reduction": reduction}
    _assert_gradient(
        sn.functional.nll_loss, sn.functional.nll_loss_grad, sn.log_softmax(logits), (targets,), kwargs
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("eps", [0.0, 0.2])
@pytest.mark.parametrize("kind", ["indices", "probs"])
def test_cross_entropy_grad(reduction, weighted, eps, kind):
    logits, targets, probs, weight = _data()
    kwargs = {
        "weight": weight if weighted else None,
        "label_smoothing": eps,
        "reduction": reduction,
    }
    y = targets if kind == "indices" else probs
    _assert_gradient(sn.functional.cross_entropy, sn.functional.cross_entropy_grad, logits, (y,), kwargs)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("pos_weight", [None, 2.5, "vector"])
def test_binary_cross_entropy_grad(reduction, pos_weight):
    rng = np.random.default_rng(4)
    logits = rng.normal(scale=2, size=(5, 3))
    targets = rng.uniform(size=(5, 3))
    pw = rng.uniform(0.5, 3, size=3) if pos_weight == "vector" else pos_weight
    _assert_gradient(
        sn.functional.binary_cross_entropy_with_logits,
        sn.functional.binary_cross_entropy_with_logits_grad,
        logits,
        (targets,),
        {"pos_weight": pw, "reduction": reduction},
    )


def test_gradient_of_mean_cross_entropy_in_closed_form():
    logits, targets, _, _ = _data()
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    expected = (e / e.sum(axis=1, keepdims=True) - np.eye(4)[targets]) / len(targets)
    np.testing.assert_allclose(sn.functional.cross_entropy_grad(logits, targets), expected, atol=1e-16)


# ------------------------------------------------------- the fused hot path

FUSED_CASES = [
    {},
    {"reduction": "sum"},
    {"reduction": "none"},
    {"weight": "w"},
    {"weight": "w", "reduction": "none"},
    {"label_smoothing": 0.1},
    {"label_smoothing": 0.1, "weight": "w", "reduction": "sum"},
    {"probs": True},
    {"probs": True, "weight": "w", "label_smoothing": 0.3},
    {"float32": True},
    {"float32": True, "label_smoothing": 0.2, "weight": "w"},
]


@pytest.mark.parametrize("case", FUSED_CASES)
def test_cross_entropy_and_grad_equals_the_separate_functions_exactly(case):
    logits, targets, probs, weight = _data(n=16, m=7)
    case = dict(case)
    y = probs if case.pop("probs", False) else targets
    if case.pop("float32", False):
        logits, probs, weight = (a.astype(np.float32) for a in (logits, probs, weight))
    if "weight" in case:
        case["weight"] = weight
    loss, grad = sn.functional.cross_entropy_and_grad(logits, y, **case)
    assert np.all(loss == sn.functional.cross_entropy(logits, y, **case))
    assert np.all(grad == sn.functional.cross_entropy_grad(logits, y, **case))
    assert grad.dtype == logits.dtype and np.asarray(loss).dtype == logits.dtype


def test_cross_entropy_and_grad_leaves_its_input_alone():
    logits, targets, _, _ = _data()
    before = logits.copy()
    sn.functional.cross_entropy_and_grad(logits, targets)
    np.testing.assert_array_equal(logits, before)


# ------------------------------------------------------- properties


@st.composite
def logits_and_targets(draw, low=-50.0, high=50.0):
    n = draw(st.integers(1, 6))
    m = draw(st.integers(1, 6))
    logits = draw(arrays(np.float64, (n, m), elements=st.floats(low, high)))
    targets = np.array(draw(st.lists(st.integers(0, m - 1), min_size=n, max_size=n)))
    return logits, targets


@given(logits_and_targets())
def test_per_sample_cross_entropy_is_logsumexp_minus_target_logit(data):
    logits, targets = data
    top = logits.max(axis=1)
    lse = top + np.log(np.exp(logits - top[:, None]).sum(axis=1))
    expected = lse - logits[np.arange(len(targets)), targets]
    np.testing.assert_allclose(
        sn.functional.cross_entropy(logits, targets, reduction="none"), expected, atol=1e-12
    )
    assert np.all(sn.functional.cross_entropy(logits, targets, reduction="none") >= 0)


@given(logits_and_targets())
def test_gradient_of_mean_is_softmax_minus_one_hot_over_n(data):
    logits, targets = data
    n, m = logits.shape
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    expected = (e / e.sum(axis=1, keepdims=True) - np.eye(m)[targets]) / n
    np.testing.assert_allclose(sn.functional.cross_entropy_grad(logits, targets), expected, atol=1e-15)


@settings(max_examples=20)
@given(
    arrays(
        np.float64,
        st.tuples(st.integers(1, 3), st.integers(2, 5)),
        elements=st.floats(0.1, 1.0),
    )
)
def test_gradient_descent_on_logits_recovers_the_target_distribution(raw):
    """argmin_q H(p, q) = p: minimising cross-entropy recovers the distribution."""
    p = raw / raw.sum(axis=1, keepdims=True)
    logits = np.zeros_like(p)
    for _ in range(3000):
        loss, grad = sn.functional.cross_entropy_and_grad(logits, p, reduction="sum")
        logits -= 2.0 * grad
        if np.abs(grad).max() < 1e-9:
            break
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    np.testing.assert_allclose(e / e.sum(axis=1, keepdims=True), p, atol=1e-6)
    entropy = -np.sum(p * np.log(p))
    assert loss == pytest.approx(entropy, rel=1e-10)  # the minimum is H(p)


# ------------------------------------------------------- extremes, dtypes


def test_a_logit_gap_of_1e4_gives_exactly_1e4():
    assert sn.functional.cross_entropy([[1e4, 0.0]], [1]) == 1e4
    assert sn.functional.cross_entropy([[1e4, 0.0, 0.0]], [2]) == 1e4
    assert sn.functional.nll_loss(sn.log_softmax([[1e4, 0.0]]), [1]) == 1e4
    np.testing.assert_array_equal(sn.functional.cross_entropy_grad([[1e4, 0.0]], [1]), [[1.0, -1.0]])


def test_logits_of_1e300():
    x = np.array([[1e300, -1e300, 0.0]])
    assert sn.functional.cross_entropy(x, [0]) == 0.0
    assert sn.functional.cross_entropy(x, [1]) == 2e300
    np.testing.assert_array_equal(sn.functional.cross_entropy_grad(x, [0]), [[0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(sn.functional.cross_entropy_grad(x, [2]), [[1.0, 0.0, -1.0]])
    assert sn.functional.cross_entropy(x, [1], label_smoothing=0.3) == pytest.approx(
        0.7 * 2e300 + 0.1 * (0 + 2e300 + 1e300)
    )


def test_minus_infinity_logits():
    x = np.array([[0.0, -np.inf, 0.0]])
    assert sn.functional.cross_entropy(x, [0]) == pytest.approx(math.log(2))  # class 1 has q=0
    assert sn.functional.cross_entropy(x, [1]) == np.inf  # the target has probability 0
    assert sn.functional.nll_loss(sn.log_softmax(x), [1]) == np.inf
    np.testing.assert_allclose(sn.functional.cross_entropy_grad(x, [0]), [[-0.5, 0.0, 0.5]])
    # A probability-0 target where q = 0 contributes 0 (0 log 0 = 0).
    assert sn.functional.cross_entropy(x, np.array([[0.5, 0.0, 0.5]])) == pytest.approx(math.log(2))
    # Weight 0 silences an infinite term.
    loss = sn.functional.cross_entropy(x, [1, ], weight=[1.0, 0.0, 1.0], reduction="sum")
    assert loss == 0.0


def test_binary_cross_entropy_extremes():
    s = np.array([1e4, -1e4, 1e300, -1e300, 1e300, -1e300])
    y = np.array([0.0, 1.0, 0.0, 1.0, 1.0, 0.0])
    np.testing.assert_array_equal(
        sn.functional.binary_cross_entropy_with_logits(s, y, reduction="none"),
        [1e4, 1e4, 1e300, 1e300, 0.0, 0.0],
    )
    np.testing.assert_array_equal(
        sn.functional.binary_cross_entropy_with_logits_grad(s, y, reduction="sum"),
        [1.0, -1.0, 1.0, -1.0, 0.0, 0.0],
    )


def test_binary_cross_entropy_is_two_class_cross_entropy():
    s = np.linspace(-5, 5, 11)
    y = (s > 0.5).astype(float)
    pairs = np.stack([s, np.zeros_like(s)], axis=1)
    np.testing.assert_allclose(
        sn.functional.binary_cross_entropy_with_logits(s, y),
        sn.functional.cross_entropy(pairs, np.where(y == 1, 0, 1)),
        rtol=1e-14,
    )


LOSSES = [
    (sn.functional.nll_loss, sn.functional.nll_loss_grad, "log_probs"),
    (sn.functional.cross_entropy, sn.functional.cross_entropy_grad, "logits"),
    (sn.functional.binary_cross_entropy_with_logits, sn.functional.binary_cross_entropy_with_logits_grad, "b"),
]


def _inputs_for(kind, dtype):
    logits, targets, probs, _ = _data()
    if kind == "log_probs":
        return sn.log_softmax(logits).astype(dtype), targets
    if kind == "b":
        return logits.astype(dtype), probs
    return logits.astype(dtype), targets


@pytest.mark.parametrize("loss, grad, kind", LOSSES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_float32_in_float32_out(loss, grad, kind, reduction):
    x, y = _inputs_for(kind, np.float32)
    out32 = loss(x, y, reduction=reduction)
    assert np.asarray(out32).dtype == np.float32
    assert grad(x, y, reduction=reduction).dtype == np.float32
    out64 = loss(x.astype(np.float64), y, reduction=reduction)
    np.testing.assert_allclose(out32, out64, rtol=1e-5)


def test_integer_logits_are_accepted_as_float64():
    ints = np.array([[1, -3, 4], [-3, 3, -1]])
    assert sn.functional.cross_entropy(ints, [0, 1]) == sn.functional.cross_entropy(ints.astype(float), [0, 1])
    assert sn.functional.cross_entropy_grad(ints, [0, 1]).dtype == np.float64


# ------------------------------------------------------- bad input

CE_FUNCS = [sn.functional.cross_entropy, sn.functional.cross_entropy_grad, sn.functional.cross_entropy_and_grad]
X = LOGITS


@pytest.mark.parametrize("func", CE_FUNCS)
@pytest.mark.parametrize(
    "targets, kwargs, error, match",
    [
        ([0, 3], {}, ValueError, r"targets must be integers in \[0, 3\); got 3 at index 1"),
        ([-1, 0], {}, ValueError, r"targets must be integers in \[0, 3\); got -1"),
        ([0.0, 1.0], {}, TypeError, "targets must be integer class indices.*float64"),
        ([0, 1, 2], {}, ValueError, r"targets must hold one class index per row of logits, shape \(2,\); got shape \(3,\)"),
        ([[1.2, -0.2, 0], [0, 1, 0]], {}, ValueError, r"targets must be non-negative probabilities; got -0.2 at index \(0, 1\)"),
        ([[0.5, 0.4, 0], [0, 1, 0]], {}, ValueError, "targets must sum to 1 .*got a sum of 0.9 at index 0"),
        ([[np.nan, 1, 0], [0, 1, 0]], {}, ValueError, "targets must not contain NaN"),
        ([[0.5, 0.5], [0, 1]], {}, ValueError, r"targets must have the same shape as logits \(2, 3\); got \(2, 2\)"),
        ([[0, 1, 0], [0, 1, 0]], {}, ValueError, "targets must be class indices of shape .* or class probabilities .*dtype int"),
        ([0, 1], {"weight": [1.0, 2.0]}, ValueError, r"weight must hold one number per class, shape \(3,\); got shape \(2,\)"),
        ([0, 1], {"weight": [1.0, -2.0, 1.0]}, ValueError, "weight must be non-negative; got -2 at index 1"),
        ([0, 1], {"weight": [0.0, 0.0, 1.0]}, ValueError, "weight gives every target class weight 0.*mean"),
        ([0, 1], {"reduction": "avg"}, ValueError, "reduction must be one of 'mean', 'sum', 'none'; got 'avg'"),
        ([0, 1], {"label_smoothing": 1.5}, ValueError, r"label_smoothing must be in \[0, 1\]; got 1.5"),
        ([0, 1], {"label_smoothing": -0.1}, ValueError, r"label_smoothing must be in \[0, 1\]; got -0.1"),
    ],
)
def test_cross_entropy_rejects_bad_targets_and_options(func, targets, kwargs, error, match):
    with pytest.raises(error, match=match):
        func(X, targets, **kwargs)


@pytest.mark.parametrize("func", CE_FUNCS)
@pytest.mark.parametrize(
    "logits, match",
    [
        ([[0.0, np.nan, 1.0], [0, 0, 0]], r"logits must not contain NaN; got NaN at index \(0, 1\)"),
        ([[0.0, np.inf, 1.0], [0, 0, 0]], r"logits must not contain \+inf"),
        ([[0.0, 1.0, 1.0], [-np.inf] * 3], "logits has a slice along axis 1 where every entry is -inf"),
        (5.0, r"logits must have a class axis: shape \(C,\), \(N, C\) or \(N, C, d1, ...\); got a scalar"),
        (np.zeros((2, 3, 1)), r"targets must hold one class index per element of logits \(2, 3, 1\) without its class axis 1, shape \(2, 1\); got shape \(2,\)"),
        (np.zeros((0, 3)), r"logits must hold at least one sample.*got shape \(0, 3\)"),
    ],
)
def test_cross_entropy_rejects_bad_logits(func, logits, match):
    targets = [0, 1] if np.shape(logits)[:1] == (2,) else np.zeros(0, int)
    if np.ndim(logits) == 0:
        targets = 0
    with pytest.raises(ValueError, match=match):
        func(logits, targets)


@pytest.mark.parametrize("func", [sn.functional.nll_loss, sn.functional.nll_loss_grad])
@pytest.mark.parametrize(
    "log_probs, targets, kwargs, match",
    [
        ([[-0.5, np.nan]], [0], {}, r"log_probs must not contain NaN; got NaN at index \(0, 1\)"),
        ([[2.0, -1.0]], [0], {}, r"log_probs must be log-probabilities \(<= 0, .*; got 2 at"),
        ([[-0.5, -1.0]], [2], {}, r"targets must be integers in \[0, 2\); got 2"),
        ([[-0.5, -1.0]], [0, 1], {}, r"targets must hold one class index per row of log_probs"),
        ([[-0.5, -1.0]], [0], {"weight": [1.0]}, r"weight must hold one number per class"),
        ([[-0.5, -1.0]], [0], {"weight": [0.0, 1.0]}, "weight gives every target class weight 0"),
        ([[-0.5, -1.0]], [0], {"reduction": "max"}, "reduction must be one of"),
        (np.zeros((0, 2)), np.zeros(0, int), {}, "log_probs must hold at least one sample"),
        ([-0.5, -1.0], [0], {}, r"log_probs of shape \(2,\) holds one sample's class scores \(unbatched\), whose target is a single class index; got targets of shape \(1,\)"),
        ([[-0.5, -1.0]], [-100], {}, r"every target is ignore_index=-100, so reduction='mean' is 0/0 \(PyTorch returns nan\)"),
    ],
)
def test_nll_loss_rejects_bad_input(func, log_probs, targets, kwargs, match):
    with pytest.raises(ValueError, match=match):
        func(log_probs, targets, **kwargs)


BCE_FUNCS = [sn.functional.binary_cross_entropy_with_logits, sn.functional.binary_cross_entropy_with_logits_grad]


@pytest.mark.parametrize("func", BCE_FUNCS)
@pytest.mark.parametrize(
    "logits, targets, kwargs, match",
    [
        ([0.0, 1.0], [0.0, 1.5], {}, r"targets must be probabilities in \[0, 1\]; got 1.5 at index 1"),
        ([0.0, 1.0], [-0.5, 1.0], {}, r"targets must be probabilities in \[0, 1\]; got -0.5"),
        ([0.0, np.nan], [0.0, 1.0], {}, "logits must not contain NaN"),
        ([0.0, 1.0], [0.0, np.nan], {}, "targets must not contain NaN"),
        ([0.0, 1.0], [0.0, 1.0, 1.0], {}, r"targets must have the same shape as logits \(2,\); got \(3,\)"),
        ([[0.0, 1.0]], [[0.0, 1.0]], {"pos_weight": [1.0, 2.0, 3.0]}, r"pos_weight must be a scalar or have shape \(2,\)"),
        ([[0.0, 1.0]], [[0.0, 1.0]], {"pos_weight": -1.0}, "pos_weight must be non-negative; got -1"),
        ([0.0, 1.0], [0.0, 1.0], {"reduction": "max"}, "reduction must be one of"),
        ([], [], {}, "logits must hold at least one sample"),
    ],
)
def test_binary_cross_entropy_rejects_bad_input(func, logits, targets, kwargs, match):
    with pytest.raises(ValueError, match=match):
        func(logits, targets, **kwargs)


# ---- log-probabilities just above 0, float16 ---------------------------------------


def test_nll_loss_counts_log_probabilities_up_to_1e_6_as_zero_and_rejects_above():
    """A probability of 1 off by rounding (log q <= 1e-6) costs 0, never less."""
    for lp in (1e-6, 5e-7, 1e-300, 0.0):
        loss = sn.functional.nll_loss([[lp, -np.inf]], [0])
        assert loss == 0.0 and not np.signbit(loss)
        assert (sn.functional.nll_loss([[lp, -np.inf]], [0], reduction="none") >= 0).all()
    np.testing.assert_array_equal(sn.functional.nll_loss_grad([[1e-6, -np.inf]], [0]), [[-1.0, 0.0]])
    for lp in (1.0000001e-6, 2e-6):
        with pytest.raises(ValueError, match=r"log_probs must be log-probabilities \(<= 0, "
                                             r"or up to 1e-06.*; got (1\.0000001|2)e-06 at"):
            sn.functional.nll_loss([[lp, -np.inf]], [0])


@pytest.mark.parametrize("func", [sn.functional.cross_entropy, sn.functional.nll_loss,
                                  sn.functional.binary_cross_entropy_with_logits])
def test_float16_losses_are_rejected_with_the_fix(func):
    x = np.zeros((2, 2), np.float16)
    targets = np.zeros((2, 2)) if func is sn.functional.binary_cross_entropy_with_logits else [0, 1]
    with pytest.raises(TypeError, match=r"must be float32 or float64; got float16"):
        func(x, targets)


def test_the_mean_of_finite_losses_does_not_overflow():
    assert sn.functional.binary_cross_entropy_with_logits([1e308, -1e308], [0, 1]) == 1e308
    assert sn.functional.cross_entropy([[1e308, 0.0], [0.0, 1e308]], [1, 0]) == 1e308
    assert sn.functional.cross_entropy([[1e308, 0.0], [0.0, 1e308]], [1, 0], reduction="sum") == np.inf


def test_ignore_index_must_be_an_integer():
    for func in (sn.functional.nll_loss, sn.functional.cross_entropy):
        with pytest.raises(TypeError, match=r"ignore_index must be an integer; got 0\.5"):
            func([[-0.5, -1.0]], [0], ignore_index=0.5)


# ---- PyTorch's layouts, ignore_index and the messages for its habits ---------------


def _ce_rows(x, t):
    """Per-element cross-entropy written directly: logsumexp - the target logit."""
    top = x.max(axis=-1, keepdims=True)
    lse = top[..., 0] + np.log(np.exp(x - top).sum(axis=-1))
    return lse - np.take_along_axis(x, t[..., None], axis=-1)[..., 0]


def test_unbatched_logits_take_a_scalar_target():
    x = np.array([-1.0, -3.0, 4.0])
    expected = _ce_rows(x[None], np.array([0]))[0]
    assert sn.functional.cross_entropy(x, 0) == pytest.approx(expected, rel=1e-15)
    assert np.shape(sn.functional.cross_entropy(x, 0, reduction="none")) == ()
    q = np.exp(x) / np.exp(x).sum()
    np.testing.assert_allclose(sn.functional.cross_entropy_grad(x, 0), q - [1, 0, 0], rtol=1e-15)
    np.testing.assert_allclose(sn.functional.nll_loss_grad(np.log(q), 2), [0, 0, -1.0])


def test_a_class_per_position_is_a_batch_of_rows_with_class_axis_1():
    rng = np.random.default_rng(3)
    x, t = rng.normal(size=(2, 4, 3, 5)), rng.integers(0, 4, size=(2, 3, 5))
    rows = np.moveaxis(x, 1, -1)  # (2, 3, 5, 4): classes last
    per_element = _ce_rows(rows, t)
    np.testing.assert_allclose(sn.functional.cross_entropy(x, t, reduction="none"), per_element,
                               rtol=1e-14)
    assert sn.functional.cross_entropy(x, t) == pytest.approx(per_element.mean(), rel=1e-14)
    q = np.exp(rows) / np.exp(rows).sum(axis=-1, keepdims=True)
    expected = np.moveaxis(q - np.eye(4)[t], -1, 1) / t.size
    np.testing.assert_allclose(sn.functional.cross_entropy_grad(x, t), expected, rtol=1e-13, atol=0)


def test_ignore_index_skips_elements_in_loss_gradient_and_mean():
    x = np.array([[2.0, 0.0, 1.0], [0.0, 3.0, 0.0], [1.0, 1.0, 5.0]])
    kept = _ce_rows(x[[0, 2]], np.array([0, 2]))
    assert sn.functional.cross_entropy(x, [0, -100, 2]) == pytest.approx(kept.mean(), rel=1e-15)
    np.testing.assert_allclose(sn.functional.cross_entropy(x, [0, -100, 2], reduction="none"),
                               [kept[0], 0.0, kept[1]], rtol=1e-15)
    grad = sn.functional.cross_entropy_grad(x, [0, -100, 2], label_smoothing=0.3)
    np.testing.assert_array_equal(grad[1], 0.0)
    # an ignore_index that is a real class: targets of class 1 are skipped
    assert sn.functional.cross_entropy(x, [0, 1, 2], ignore_index=1) == pytest.approx(kept.mean(),
                                                                            rel=1e-15)
    # weights: the weighted mean over the kept elements only
    w = np.array([2.0, 7.0, 0.5])
    expected = (2.0 * kept[0] + 0.5 * kept[1]) / 2.5
    assert sn.functional.cross_entropy(x, [0, -100, 2], weight=w) == pytest.approx(expected, rel=1e-15)
    lp = sn.log_softmax(x)
    assert sn.functional.nll_loss(lp, [0, -100, 2], weight=w) == pytest.approx(expected, rel=1e-15)
    assert sn.functional.cross_entropy(x, [-100, -100, -100], reduction="sum") == 0.0


def test_a_batch_of_only_ignored_targets_has_no_mean():
    for func in (sn.functional.cross_entropy, sn.functional.cross_entropy_grad, sn.functional.nll_loss, sn.functional.nll_loss_grad):
        with pytest.raises(ValueError, match=r"every target is ignore_index=-100, so "
                                             r"reduction='mean' is 0/0 \(PyTorch returns nan\)"):
            func([[-1.0, -0.5]], [-100])


@pytest.mark.parametrize("logits, targets, match", [
    (np.zeros((3, 5)), [0, 1, 2, 0, 1],
     r"logits must have the class axis as axis 1, shape \(N, C\) with N = 5 targets; got "
     r"shape \(3, 5\), which looks transposed, \(C, N\): pass logits\.T"),
    (np.zeros((2, 4, 3)), np.zeros((2, 4), int),
     r"looks like classes on the last axis: pass np\.moveaxis\(logits, -1, 1\)"),
    (np.zeros((4, 1)), [0, 1, 1, 0],
     r"targets must be integers in \[0, 1\); got 1 at index 1 \(logits has one class "
     r"column.*use binary_cross_entropy_with_logits, loss='binary_cross_entropy'\)"),
    (np.zeros(4), [0, 1, 1, 0],
     r"logits of shape \(4,\) holds one sample's class scores \(unbatched\).*for one "
     r"score per sample use binary_cross_entropy_with_logits"),
    (np.zeros((2, 3)), np.array([[0, 1, 0], [1, 0, 0]]),
     r"targets must be class indices of shape \(2,\) or class probabilities \(floats\)"),
    (np.zeros((2, 3, 4)), np.zeros((2, 5), int),
     r"targets must hold one class index per element of logits \(2, 3, 4\) without its "
     r"class axis 1, shape \(2, 4\); got shape \(2, 5\)"),
])
def test_messages_point_pytorch_slips_to_their_fix(logits, targets, match):
    for func in (sn.functional.cross_entropy, sn.functional.cross_entropy_grad):
        with pytest.raises(ValueError, match=match):
            func(logits, targets)


def test_a_transposed_looking_batch_that_cannot_be_one_is_blamed_on_the_targets():
    """(2, 3) logits with targets [0, 1, 2]: transposed, class 2 would not exist."""
    with pytest.raises(ValueError, match=r"targets must hold one class index per row"):
        sn.functional.cross_entropy(np.zeros((2, 3)), [0, 1, 2])
