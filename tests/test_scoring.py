"""scoring.py: squared error and the multi-class hinge loss.

Every value is compared with an independent computation: a plain loop written
from the formula, numbers worked out by hand, central finite differences
(``_support.numerical_grad``, not ``scratchnet.gradcheck``) and, when it is
installed, PyTorch.
"""

import math

import numpy as np
import pytest
from _support import classification_data, numerical_grad
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import scratchnet as sn

pytestmark = pytest.mark.filterwarnings("error")  # no RuntimeWarning, ever

REDUCTIONS = ["mean", "sum", "none"]


_data = classification_data


# ------------------------------------------------- reference implementations


def _ref_reduce(losses, reduction, denominator):
    if reduction == "none":
        return np.array(losses)
    total = math.fsum(losses)
    return total / denominator if reduction == "mean" else total


def _ref_mse(outputs, targets, reduction="mean"):
    o = np.asarray(outputs, float)
    t = np.asarray(targets)
    if t.dtype.kind == "i":
        y = np.zeros_like(o)
        for j, c in enumerate(t):
            y[j, c] = 1.0
    else:
        y = t.astype(float)
    losses = [(a - b) ** 2 for a, b in zip(o.flat, y.flat)]
    out = _ref_reduce(losses, reduction, len(losses))
    return out.reshape(o.shape) if reduction == "none" else out


def _ref_hinge(logits, targets, margin=1.0, weight=None, reduction="mean"):
    """PyTorch's documented formula, one sample and one class at a time."""
    n, m = np.shape(logits)
    losses = []
    for j in range(n):
        x, y = [float(v) for v in logits[j]], int(targets[j])
        w = 1.0 if weight is None else float(weight[y])
        terms = [max(0.0, margin - x[y] + x[i]) for i in range(m) if i != y]
        losses.append(w * math.fsum(terms) / m)
    return _ref_reduce(losses, reduction, n)  # the mean divides by N, weights or not


def _ref_hinge_grad(logits, targets, margin=1.0, weight=None, reduction="mean"):
    """The subgradient, 0 at a kink, from the formula with explicit loops."""
    n, m = np.shape(logits)
    grad = np.zeros((n, m))
    scale = 1.0 / n if reduction == "mean" else 1.0
    for j in range(n):
        x, y = logits[j], int(targets[j])
        w = 1.0 if weight is None else float(weight[y])
        for i in range(m):
            if i != y and margin - x[y] + x[i] > 0:
                grad[j, i] += scale * w / m
                grad[j, y] -= scale * w / m
    return grad


def _hinge_data(n=6, m=5, seed=1, margin=1.0, gap=1e-3):
    """Logits whose hinge arguments all stay at least ``gap`` away from the kink."""
    rng = np.random.default_rng(seed)
    while True:
        logits = rng.normal(scale=1.5, size=(n, m))
        targets = rng.integers(0, m, size=n)
        z = margin - logits[np.arange(n), targets][:, None] + logits
        z[np.arange(n), targets] = 1.0  # the target column has no hinge
        if np.abs(z).min() > gap:
            return logits, targets, rng.uniform(0.2, 2.0, size=m)


# ------------------------------------------------------- squared error


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("kind", ["floats", "indices"])
def test_mse_matches_the_loop(reduction, kind):
    logits, targets, probs, _ = _data()
    y = targets if kind == "indices" else probs
    np.testing.assert_allclose(
        sn.mse_loss(logits, y, reduction=reduction),
        _ref_mse(logits, y, reduction),
        rtol=1e-14,
    )


def test_mse_penalises_being_too_right():
    """Squared error penalises outputs above the one-hot target as much as
    outputs below it; cross-entropy rewards them (correct class index 1)."""
    outputs = np.array([[0.0, 1, 0, 0], [-1, 2, -1, -1], [1, 0, 1, 1]])
    per_sample = sn.mse_loss(outputs, [1, 1, 1], reduction="none").mean(axis=1)
    np.testing.assert_array_equal(per_sample, [0.0, 1.0, 1.0])
    summed = sn.mse_loss(outputs, [1, 1, 1], reduction="none").sum(axis=1)
    np.testing.assert_array_equal(summed, [0.0, 4.0, 4.0])
    ce = sn.functional.cross_entropy(outputs, [1, 1, 1], reduction="none")
    assert ce[1] < ce[0] < ce[2]  # cross-entropy rewards the confident answer
    np.testing.assert_allclose(ce[1:], [0.139, 2.214], atol=5e-4)
    np.testing.assert_allclose(ce[1], math.log(math.exp(2) + 3 * math.exp(-1)) - 2, rtol=1e-14)
    np.testing.assert_allclose(ce[2], math.log(3 * math.e + 1), rtol=1e-14)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("kind", ["floats", "indices"])
def test_mse_loss_grad(reduction, kind):
    logits, targets, probs, _ = _data()
    y = targets if kind == "indices" else probs

    def f():
        return np.sum(sn.mse_loss(logits, y, reduction=reduction))

    grad = sn.mse_loss_grad(logits, y, reduction=reduction)
    np.testing.assert_allclose(grad, numerical_grad(f, logits), rtol=1e-7, atol=1e-9)
    error = sn.gradient_check(
        lambda z: np.sum(sn.mse_loss(z, y, reduction=reduction)), grad, logits
    )
    assert error < 1e-6, f"relative error {error:.2e}"


def test_mse_loss_grad_leaves_its_input_alone():
    logits, targets, _, _ = _data()
    before = logits.copy()
    sn.mse_loss_grad(logits, targets)
    sn.mse_loss(logits, targets)
    np.testing.assert_array_equal(logits, before)


def test_mse_of_huge_outputs_is_inf_without_warning():
    assert sn.mse_loss([[1e300, 0.0]], [0]) == np.inf


def test_integer_outputs_are_accepted_as_float64():
    ints = np.array([[1, -3, 4], [-3, 3, -1]])
    assert sn.mse_loss(ints, [0, 1]) == pytest.approx(_ref_mse(ints, np.array([0, 1])))
    assert sn.multi_margin_loss(ints, [0, 1]) == sn.multi_margin_loss(
        ints.astype(float), [0, 1]
    )
    assert sn.multi_margin_loss_grad(ints, [0, 1]).dtype == np.float64


@settings(max_examples=40)
@given(
    arrays(np.float64, st.integers(2, 6), elements=st.floats(0.01, 1.0)),
    arrays(np.float64, st.integers(2, 6), elements=st.floats(-1.0, 2.0)),
)
def test_the_brier_score_is_proper(raw, other):
    """E_{c~p} sum_i (o_i - [i = c])^2 = sum_i (o_i - p_i)^2 + sum_i p_i (1 - p_i)."""
    p = raw / raw.sum()
    m = p.size
    o = np.resize(other, m)

    def expected(outputs):
        per_class = sn.mse_loss(np.tile(outputs, (m, 1)), np.arange(m), reduction="none")
        return float(p @ per_class.sum(axis=1))

    floor = float(np.sum(p * (1 - p)))
    assert expected(p) == pytest.approx(floor, rel=1e-12, abs=0)
    assert expected(o) == pytest.approx(floor + np.sum((o - p) ** 2), rel=1e-12, abs=1e-15)
    assert expected(o) >= expected(p) - 1e-15


# ------------------------------------------------------- hinge: values


def test_hinge_hand_computed():
    # Row 0, target 1: classes 0 and 2 have margins 1 - 2 + 0 = -1 and
    # 1 - 2 + 1.5 = 0.5, so (0 + 0.5) / 3.  Row 1, target 1: 1 - 0 + 1 = 2 and
    # 1 - 0 + 0 = 1, so 3 / 3.  Row 2, target 0 leads by >= 1: 0.
    logits = [[0.0, 2.0, 1.5], [1.0, 0.0, 0.0], [3.0, 2.0, -1.0]]
    targets = [1, 1, 0]
    np.testing.assert_array_equal(
        sn.multi_margin_loss(logits, targets, reduction="none"), [0.5 / 3, 1.0, 0.0]
    )
    assert sn.multi_margin_loss(logits, targets, reduction="sum") == pytest.approx(
        0.5 / 3 + 1.0, rel=1e-15
    )
    assert sn.multi_margin_loss(logits, targets) == pytest.approx(
        (0.5 / 3 + 1.0) / 3, rel=1e-15
    )
    # margin 2: row 2's class 1 now violates it by 2 - 3 + 2 = 1.
    np.testing.assert_allclose(
        sn.multi_margin_loss(logits, targets, margin=2.0, reduction="none"),
        [(0.0 + 1.5) / 3, (3 + 2) / 3, 1 / 3],
        rtol=1e-15,
    )
    # weight[target] multiplies each sample; the mean still divides by N = 3.
    w = [10.0, 2.0, 0.5]
    np.testing.assert_allclose(
        sn.multi_margin_loss(logits, targets, weight=w, reduction="none"),
        [2 * 0.5 / 3, 2 * 1.0, 0.0],
        rtol=1e-15,
    )
    assert sn.multi_margin_loss(logits, targets, weight=w) == pytest.approx(
        (2 * 0.5 / 3 + 2.0) / 3, rel=1e-15
    )
    np.testing.assert_allclose(
        sn.multi_margin_loss_grad(logits, targets, reduction="sum"),
        [[0, -1 / 3, 1 / 3], [1 / 3, -2 / 3, 1 / 3], [0, 0, 0]],
        rtol=1e-15,
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("margin", [1.0, 0.3, 2.5, -0.5])
def test_hinge_matches_the_loop(reduction, weighted, margin):
    logits, targets, _, weight = _data(n=7, m=5, seed=2)
    w = weight if weighted else None
    kwargs = {"margin": margin, "weight": w, "reduction": reduction}
    np.testing.assert_allclose(
        sn.multi_margin_loss(logits, targets, **kwargs),
        _ref_hinge(logits, targets, margin, w, reduction),
        rtol=1e-14,
        atol=1e-300,
    )
    np.testing.assert_allclose(
        sn.multi_margin_loss_grad(logits, targets, **kwargs),
        _ref_hinge_grad(logits, targets, margin, w, reduction),
        rtol=1e-14,
        atol=1e-300,
    )


def test_hinge_weighted_mean_divides_by_n_not_by_the_weights():
    logits, targets, _, weight = _data(n=6, m=3, seed=5)
    per_sample = sn.multi_margin_loss(logits, targets, weight=weight, reduction="none")
    mean = sn.multi_margin_loss(logits, targets, weight=weight)
    assert mean == pytest.approx(math.fsum(per_sample) / 6, rel=1e-14)
    # All-zero weights: the loss is 0 (no 0/0, unlike cross_entropy's mean).
    zero = np.zeros(3)
    assert sn.multi_margin_loss(logits, targets, weight=zero) == 0.0
    np.testing.assert_array_equal(sn.multi_margin_loss_grad(logits, targets, weight=zero), 0)


def test_hinge_at_the_kink_takes_the_subgradient_zero():
    # margin - x[y] + x[i] == 0 exactly for class 0; class 2 is active.
    logits = np.array([[0.0, 1.0, 0.5]])
    assert sn.multi_margin_loss(logits, [1], reduction="sum") == pytest.approx(0.5 / 3)
    np.testing.assert_array_equal(
        sn.multi_margin_loss_grad(logits, [1], reduction="sum") * 3, [[0.0, -1.0, 1.0]]
    )


def test_hinge_single_class_is_zero():
    assert sn.multi_margin_loss([[5.0], [-2.0]], [0, 0]) == 0.0
    np.testing.assert_array_equal(sn.multi_margin_loss_grad([[5.0], [-2.0]], [0, 0]), 0)


def test_hinge_is_not_proper_its_minimiser_is_only_the_argmax():
    """Two classes, d = x1 - x0: the expected loss is minimised at d = +-margin."""
    d = np.arange(-400, 401) / 100
    logits = np.stack([np.zeros_like(d), d], axis=1)
    ones, zeros = np.ones(d.size, int), np.zeros(d.size, int)
    for margin in (1.0, 2.0):
        on_1 = sn.multi_margin_loss(logits, ones, margin=margin, reduction="none")
        on_0 = sn.multi_margin_loss(logits, zeros, margin=margin, reduction="none")
        for p1 in (0.2, 0.4, 0.6, 0.75, 0.99):
            risk = p1 * on_1 + (1 - p1) * on_0
            assert d[np.argmin(risk)] == (margin if p1 > 0.5 else -margin)


def test_hinge_large_logits_overflow_to_inf_without_warning():
    assert sn.multi_margin_loss([[-1e308, 1e308]], [0], reduction="sum") == np.inf


# ------------------------------------------------------- hinge: gradient


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("margin", [1.0, 0.4])
def test_hinge_grad_matches_central_differences(reduction, weighted, margin):
    logits, targets, weight = _hinge_data(margin=margin)
    w = weight if weighted else None
    kwargs = {"margin": margin, "weight": w, "reduction": reduction}

    def f():
        return np.sum(sn.multi_margin_loss(logits, targets, **kwargs))

    # Piecewise linear and eps << 1e-3 (the distance to every kink): central
    # differences are exact up to rounding.
    np.testing.assert_allclose(
        sn.multi_margin_loss_grad(logits, targets, **kwargs),
        numerical_grad(f, logits, eps=1e-6),
        rtol=1e-7,
        atol=1e-9,
    )


# ------------------------------------------------------- hinge: PyTorch parity


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("margin", [1.0, 0.5, 3.0])
@pytest.mark.parametrize("seed", range(4))
def test_hinge_matches_pytorch(torch, reduction, weighted, margin, seed):
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(1, 9)), int(rng.integers(1, 7))
    logits = rng.normal(scale=2.0, size=(n, m))
    targets = rng.integers(0, m, size=n)
    targets[0] = m - 1
    if m > 1:  # a kink, exactly: margin - x[0, m-1] + x[0, 0] == 0
        logits[0, -1], logits[0, 0] = 2.0, 2.0 - margin
    w = rng.uniform(0.0, 3.0, size=m) if weighted else None
    x = torch.tensor(logits, dtype=torch.float64, requires_grad=True)
    out = torch.nn.functional.multi_margin_loss(
        x, torch.tensor(targets), p=1, margin=margin,
        weight=None if w is None else torch.tensor(w), reduction=reduction,
    )
    out.sum().backward()
    kwargs = {"margin": margin, "weight": w, "reduction": reduction}
    np.testing.assert_allclose(
        sn.multi_margin_loss(logits, targets, **kwargs), out.detach().numpy(),
        rtol=0, atol=1e-10,
    )
    np.testing.assert_allclose(
        sn.multi_margin_loss_grad(logits, targets, **kwargs), x.grad.numpy(),
        rtol=0, atol=1e-10,
    )


def test_hinge_kink_convention_matches_pytorch(torch):
    logits = np.array([[0.0, 1.0, 0.5], [2.0, 1.0, 2.0]])  # z = 0 at (0, 0) and (1, 1)
    targets = np.array([1, 0])
    x = torch.tensor(logits, requires_grad=True)
    torch.nn.functional.multi_margin_loss(x, torch.tensor(targets)).backward()
    np.testing.assert_array_equal(sn.multi_margin_loss_grad(logits, targets), x.grad.numpy())


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("kind", ["floats", "indices"])
def test_mse_matches_pytorch(torch, reduction, kind):
    logits, targets, probs, _ = _data()
    y = targets if kind == "indices" else probs
    dense = np.eye(logits.shape[1])[targets] if kind == "indices" else probs
    x = torch.tensor(logits, requires_grad=True)
    out = torch.nn.functional.mse_loss(x, torch.tensor(dense), reduction=reduction)
    out.sum().backward()
    np.testing.assert_allclose(
        sn.mse_loss(logits, y, reduction=reduction), out.detach().numpy(),
        rtol=0, atol=1e-12,
    )
    np.testing.assert_allclose(
        sn.mse_loss_grad(logits, y, reduction=reduction), x.grad.numpy(),
        rtol=0, atol=1e-12,
    )


# ------------------------------------------------------- hinge: properties


@st.composite
def hinge_problems(draw):
    n = draw(st.integers(1, 5))
    m = draw(st.integers(1, 5))
    logits = draw(arrays(np.float64, (n, m), elements=st.floats(-20.0, 20.0)))
    targets = np.array(draw(st.lists(st.integers(0, m - 1), min_size=n, max_size=n)))
    margin = draw(st.floats(0.0, 5.0))
    return logits, targets, margin


@settings(max_examples=60)
@given(hinge_problems())
def test_hinge_properties(problem):
    logits, targets, margin = problem
    n, m = logits.shape
    kw = {"margin": margin}
    losses = sn.multi_margin_loss(logits, targets, reduction="none", **kw)
    assert losses.shape == (n,) and np.all(losses >= 0)
    np.testing.assert_allclose(losses, _ref_hinge(logits, targets, margin, None, "none"),
                               rtol=1e-13, atol=1e-13)
    grad_sum = sn.multi_margin_loss_grad(logits, targets, reduction="sum", **kw)
    grad_none = sn.multi_margin_loss_grad(logits, targets, reduction="none", **kw)
    grad_mean = sn.multi_margin_loss_grad(logits, targets, **kw)
    np.testing.assert_array_equal(grad_none, grad_sum)
    np.testing.assert_allclose(grad_mean * n, grad_sum, rtol=1e-14, atol=0)
    # Each row's gradient sums to 0: raising every score equally changes nothing.
    np.testing.assert_allclose(grad_sum.sum(axis=1), 0.0, atol=1e-15)
    # Entries are multiples of 1/M: +1/M for a violating class, -k/M for the target.
    np.testing.assert_allclose(grad_sum * m, np.round(grad_sum * m), atol=1e-12)
    # A sample whose target leads every other score by more than the margin is free.
    rows = np.arange(n)
    others = np.where(np.eye(m, dtype=bool)[targets], -np.inf, logits)
    free = logits[rows, targets] - others.max(axis=1) > margin + 1e-9  # beyond rounding
    assert np.all(losses[free] == 0) and np.all(grad_sum[free] == 0)


@settings(max_examples=40)
@given(hinge_problems(), st.floats(0.0, 10.0), st.floats(-100.0, 100.0))
def test_hinge_scales_with_a_constant_weight_and_ignores_a_shift(problem, c, shift):
    logits, targets, margin = problem
    m = logits.shape[1]
    plain = sn.multi_margin_loss(logits, targets, margin=margin, reduction="sum")
    weighted = sn.multi_margin_loss(
        logits, targets, margin=margin, weight=np.full(m, c), reduction="sum"
    )
    assert weighted == pytest.approx(c * plain, rel=1e-13, abs=0)
    shifted = sn.multi_margin_loss(logits + shift, targets, margin=margin, reduction="sum")
    assert shifted == pytest.approx(plain, rel=1e-9, abs=1e-9 * (1 + abs(shift)))


# ------------------------------------------------------- dtypes


SCORING = [
    (sn.mse_loss, sn.mse_loss_grad),
    (sn.multi_margin_loss, sn.multi_margin_loss_grad),
]


@pytest.mark.parametrize("loss, grad", SCORING)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_float32_in_float32_out(loss, grad, reduction):
    logits, targets, _, _ = _data()
    x = logits.astype(np.float32)
    out32 = loss(x, targets, reduction=reduction)
    assert np.asarray(out32).dtype == np.float32
    assert grad(x, targets, reduction=reduction).dtype == np.float32
    np.testing.assert_allclose(out32, loss(logits, targets, reduction=reduction), rtol=1e-5)


def test_float32_weighted_hinge_stays_float32():
    logits, targets, _, weight = _data()
    x = logits.astype(np.float32)
    assert np.asarray(sn.multi_margin_loss(x, targets, weight=weight)).dtype == np.float32
    assert sn.multi_margin_loss_grad(x, targets, weight=weight).dtype == np.float32


# ------------------------------------------------------- bad input


@pytest.mark.parametrize("func", [sn.mse_loss, sn.mse_loss_grad])
@pytest.mark.parametrize(
    "outputs, targets, kwargs, error, match",
    [
        ([[0.0, 1.0]], [2], {}, ValueError, r"targets must be integers in \[0, 2\); got 2"),
        ([[0.0, 1.0]], [[0.0]], {}, ValueError, r"targets must have the same shape as outputs \(1, 2\); got \(1, 1\)"),
        ([[0.0, np.nan]], [0], {}, ValueError, "outputs must not contain NaN"),
        ([[0.0, np.inf]], [0], {}, ValueError, "outputs must be finite; got inf"),
        ([[0.0, 1.0]], [[0.0, np.nan]], {}, ValueError, "targets must not contain NaN"),
        ([[0.0, 1.0]], [0], {"reduction": "MEAN"}, ValueError, "reduction must be one of"),
        (np.zeros((0, 2)), np.zeros(0, int), {}, ValueError, "outputs must hold at least one sample"),
        ([["a", "b"]], [0], {}, TypeError, "outputs must be an array of real numbers"),
    ],
)
def test_mse_rejects_bad_input(func, outputs, targets, kwargs, error, match):
    with pytest.raises(error, match=match):
        func(outputs, targets, **kwargs)


@pytest.mark.parametrize("func", [sn.multi_margin_loss, sn.multi_margin_loss_grad])
@pytest.mark.parametrize(
    "logits, targets, kwargs, error, match",
    [
        ([[0.0, 1.0, 2.0]], [3], {}, ValueError, r"targets must be integers in \[0, 3\); got 3 at index 0"),
        ([[0.0, 1.0, 2.0]], [-1], {}, ValueError, r"targets must be integers in \[0, 3\); got -1"),
        ([[0.0, 1.0, 2.0]], [1.0], {}, TypeError, "targets must be integer class indices.*float64"),
        ([[0.0, 1.0, 2.0]], [0, 1], {}, ValueError, r"targets must hold one class index per row of logits, shape \(1,\); got shape \(2,\)"),
        ([[0.0, np.nan, 2.0]], [0], {}, ValueError, "logits must not contain NaN"),
        ([[0.0, np.inf, 2.0]], [0], {}, ValueError, "logits must be finite; got inf"),
        ([[0.0, -np.inf, 2.0]], [0], {}, ValueError, "logits must be finite; got -inf"),
        ([0.0, 1.0, 2.0], [0], {}, ValueError, r"logits must be a 2-D array of shape \(N, M\).*got shape \(3,\)"),
        (np.zeros((0, 3)), np.zeros(0, int), {}, ValueError, r"logits must hold at least one sample.*got shape \(0, 3\)"),
        ([["a", "b"]], [0], {}, TypeError, "logits must be an array of real numbers"),
        ([[0.0, 1.0, 2.0]], [0], {"weight": [1.0, 2.0]}, ValueError, r"weight must hold one number per class, shape \(3,\); got shape \(2,\)"),
        ([[0.0, 1.0, 2.0]], [0], {"weight": [1.0, -2.0, 1.0]}, ValueError, "weight must be non-negative; got -2 at index 1"),
        ([[0.0, 1.0, 2.0]], [0], {"weight": [1.0, np.inf, 1.0]}, ValueError, "weight must be finite"),
        ([[0.0, 1.0, 2.0]], [0], {"margin": np.nan}, ValueError, "margin must not be NaN"),
        ([[0.0, 1.0, 2.0]], [0], {"margin": np.inf}, ValueError, "margin must be a finite real number; got inf"),
        ([[0.0, 1.0, 2.0]], [0], {"margin": "1"}, TypeError, "margin must be a real number; got '1'"),
        ([[0.0, 1.0, 2.0]], [0], {"margin": True}, TypeError, "margin must be a real number; got True"),
        ([[0.0, 1.0, 2.0]], [0], {"reduction": "avg"}, ValueError, "reduction must be one of 'mean', 'sum', 'none'; got 'avg'"),
    ],
)
def test_hinge_rejects_bad_input(func, logits, targets, kwargs, error, match):
    with pytest.raises(error, match=match):
        func(logits, targets, **kwargs)


def test_squared_error_decides_targets_by_shape_not_dtype():
    """(N, 1) outputs beside (N,) 0/1 integers: real targets of the one column."""
    o = np.array([[0.25], [0.5], [1.0]])
    for t in (np.array([0, 1, 1]), np.array([[0], [1], [1]]), [0.0, 1.0, 1.0]):
        assert sn.mse_loss(o, t) == pytest.approx((0.0625 + 0.25 + 0) / 3, rel=1e-15)
        np.testing.assert_allclose(sn.mse_loss_grad(o, t), 2 * (o - [[0], [1], [1]]) / 3,
                                   rtol=1e-15)
    # integer targets of the outputs' shape are real targets too
    assert sn.mse_loss(np.array([[0.5, 0.5]]), np.array([[1, 0]])) == 0.25
    # (N,) beside (N, M >= 2): class indices, and they must be integers
    with pytest.raises(TypeError, match="targets must be integer class indices"):
        sn.mse_loss(np.zeros((2, 3)), [0.0, 1.0])


def test_squared_error_overflows_to_inf_without_a_warning():
    assert sn.mse_loss([1e308, -1e308], [-1e308, 1e308]) == np.inf
    np.testing.assert_array_equal(sn.mse_loss_grad([1e308], [-1e308], reduction="sum"),
                                  [np.inf])


def test_transposed_logits_get_the_fix_in_the_message():
    for func in (sn.multi_margin_loss, sn.multi_margin_loss_grad):
        with pytest.raises(ValueError, match=r"shape \(3,\); got shape \(5,\) \(if logits is "
                                             r"\(M, N\), transposed, pass logits\.T"):
            func(np.zeros((3, 5)), [0, 1, 2, 0, 1])
