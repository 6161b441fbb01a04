"""The chapter losses (losses.py): the formulas, against loops, closed forms and finite
differences; PyTorch's options refused with a pointer to ``scratchnet.functional``."""

import math

import numpy as np
import pytest

import scratchnet as sn

pytestmark = pytest.mark.filterwarnings("error")  # no RuntimeWarning, ever

# Two samples, three classes; targets 0 and 1: 2.5141 nats (a PyTorch reference value).
LOGITS = np.array([[-1.0, -3.0, 4.0], [-3.0, 3.0, -1.0]])
TARGETS = np.array([0, 1])
CHAPTER = ["nll_loss", "nll_loss_grad", "cross_entropy", "cross_entropy_grad",
           "cross_entropy_and_grad", "binary_cross_entropy_with_logits",
           "binary_cross_entropy_with_logits_grad"]


def _loop_cross_entropy(logits, targets):
    """-1/N sum_j log softmax(f_j)_{t_j}, one sample at a time with math.fsum."""
    total = []
    for row, t in zip(logits.tolist(), targets.tolist()):
        lse = math.log(math.fsum(math.exp(v) for v in row))
        total.append(lse - row[t])
    return math.fsum(total) / len(total)


def _loop_gradient(logits, targets):
    """(softmax(f) - one_hot(t)) / N, entry by entry."""
    n, m = logits.shape
    out = np.zeros((n, m))
    for j in range(n):
        z = math.fsum(math.exp(v) for v in logits[j])
        for k in range(m):
            out[j, k] = (math.exp(logits[j, k]) / z - (k == targets[j])) / n
    return out


def test_the_reference_value_2_5141():
    assert float(sn.cross_entropy(LOGITS, TARGETS)) == pytest.approx(2.5141, abs=5e-5)
    assert float(sn.nll_loss(sn.log_softmax(LOGITS), TARGETS)) == pytest.approx(
        2.5141, abs=5e-5)


def test_cross_entropy_and_its_gradient_match_the_loops():
    rng = np.random.default_rng(0)
    logits, targets = rng.normal(scale=3, size=(7, 4)), rng.integers(0, 4, 7)
    assert sn.cross_entropy(logits, targets) == pytest.approx(
        _loop_cross_entropy(logits, targets), rel=1e-14, abs=0)
    np.testing.assert_allclose(sn.cross_entropy_grad(logits, targets),
                               _loop_gradient(logits, targets), rtol=1e-13, atol=1e-17)
    loss, grad = sn.cross_entropy_and_grad(logits, targets)
    assert loss == sn.cross_entropy(logits, targets)
    np.testing.assert_array_equal(grad, sn.cross_entropy_grad(logits, targets))


@pytest.mark.parametrize("name", ["nll_loss", "cross_entropy",
                                  "binary_cross_entropy_with_logits"])
def test_each_gradient_matches_finite_differences(name):
    rng = np.random.default_rng(1)
    if name.startswith("binary"):
        x, y = rng.normal(size=(5, 2)), rng.uniform(size=(5, 2))
    else:
        x, y = rng.normal(size=(5, 3)), rng.integers(0, 3, 5)
    if name == "nll_loss":  # any point of R^{N x M} is a direction of log_probs
        x = sn.log_softmax(x)
    loss, grad = getattr(sn, name), getattr(sn, f"{name}_grad")
    assert sn.gradient_check(lambda v: float(loss(v, y)), grad(x, y), x) < 1e-7


def test_the_chapter_and_the_options_layer_agree_without_options():
    rng = np.random.default_rng(2)
    logits, targets = rng.normal(size=(6, 5)), rng.integers(0, 5, 6)
    for name in CHAPTER[:5]:
        x = sn.log_softmax(logits) if name.startswith("nll") else logits
        ours, theirs = getattr(sn, name)(x, targets), getattr(sn.functional, name)(
            x, targets)
        for a, b in zip(np.atleast_1d(ours) if name != "cross_entropy_and_grad" else ours,
                        np.atleast_1d(theirs) if name != "cross_entropy_and_grad" else theirs):
            np.testing.assert_allclose(a, b, rtol=1e-15, atol=1e-17)


@pytest.mark.parametrize("name", CHAPTER)
@pytest.mark.parametrize("option", ["weight", "ignore_index", "label_smoothing",
                                    "reduction", "pos_weight"])
def test_an_option_is_refused_with_the_name_of_its_layer(name, option):
    func = getattr(sn, name)
    args = (np.zeros((2, 2)), np.ones((2, 2)) / 2) if name.startswith("binary") else \
        (np.log(np.full((2, 2), 0.5)), [0, 1])
    with pytest.raises(TypeError, match=rf"{name}\(\) got '{option}'.*"
                                        rf"scratchnet\.functional\.{name}\b"):
        func(*args, **{option: None})


@pytest.mark.parametrize("logits, targets, error, match", [
    (np.zeros(3), 0, ValueError, r"shape \(N, M\).*scratchnet\.functional"),
    (np.zeros((2, 3, 4)), np.zeros((2, 4), int), ValueError,
     r"shape \(N, M\).*scratchnet\.functional"),
    (np.zeros((2, 3)), np.full((2, 3), 1 / 3), TypeError,
     r"class indices.*probability targets use scratchnet\.functional"),
    (np.zeros((2, 3)), [0, 3], ValueError, r"integers in \[0, 3\); got 3"),
    (np.zeros((2, 3)), [0, -100], ValueError, r"integers in \[0, 3\); got -100"),
    ([[0.0, np.nan]], [0], ValueError, "NaN"),
    ([[0.0, np.inf]], [0], ValueError, r"\+inf"),
    ([[-np.inf, -np.inf]], [0], ValueError, "every entry is -inf"),
])
def test_what_the_chapter_does_not_take_is_named(logits, targets, error, match):
    for func in (sn.cross_entropy, sn.cross_entropy_grad):
        with pytest.raises(error, match=match):
            func(logits, targets)


def test_extremes_give_the_exact_answer():
    assert sn.cross_entropy([[1e4, 0.0]], [1]) == 1e4
    assert sn.cross_entropy([[40.0, 0.0]], [0]) == pytest.approx(
        math.log1p(math.exp(-40)), rel=1e-15, abs=0)
    assert sn.cross_entropy([[1e300, -1e300]], [0]) == 0.0
    assert sn.cross_entropy([[-np.inf, 0.0]], [0]) == np.inf
    assert np.signbit(sn.cross_entropy([[0.0, -np.inf]], [0])) == False  # noqa: E712
    np.testing.assert_array_equal(sn.cross_entropy_grad([[1e300, -1e300]], [1]),
                                  [[1.0, -1.0]])
    assert sn.binary_cross_entropy_with_logits([np.inf, -np.inf], [1.0, 0.0]) == 0.0
    assert sn.binary_cross_entropy_with_logits([-1e300], [1.0]) == 1e300
    # a mean of finite losses is finite even where their sum overflows
    assert sn.binary_cross_entropy_with_logits([1e308, -1e308], [0.0, 1.0]) == 1e308
    assert sn.cross_entropy([[1e308, 0.0, -1e308], [1e308, 0.0, -1e308]], [1, 1]) == 1e308
    assert sn.binary_cross_entropy_with_logits_grad([100.0], [1.0])[0] == pytest.approx(
        -math.exp(-100), rel=1e-14, abs=0)


@pytest.mark.parametrize("name", CHAPTER)
def test_float32_stays_float32(name):
    func = getattr(sn, name)
    x = np.array([[0.5, -1.0], [2.0, 0.0]], np.float32)
    y = np.array([[1.0, 0.0], [0.0, 1.0]], np.float32) if name.startswith("binary") \
        else [0, 1]
    x = sn.log_softmax(x) if name.startswith("nll") else x
    for out in np.atleast_1d(func(x, y)) if name != "cross_entropy_and_grad" \
            else func(x, y):
        assert np.asarray(out).dtype == np.float32
