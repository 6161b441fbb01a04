"""Layer forward/backward pairs: closed forms, central differences, errors."""

import numpy as np
import pytest
from _support import numerical_grad, rel_error
from hypothesis import given
from hypothesis import strategies as st

from scratchnet import layers


@pytest.fixture
def batch():
    rng = np.random.default_rng(0)
    return {
        "x": rng.standard_normal((5, 4)),
        "W": rng.standard_normal((4, 3)),
        "b": rng.standard_normal(3),
        "G": rng.standard_normal((5, 3)),  # L = sum(out * G), so dL/dout = G
    }


def test_linear_forward_matches_the_sum_formula(batch):
    x, W, b = batch["x"], batch["W"], batch["b"]
    out, cache = layers.linear_forward(x, W, b)
    expected = np.array([[sum(x[n, i] * W[i, k] for i in range(4)) + b[k]
                          for k in range(3)] for n in range(5)])
    np.testing.assert_allclose(out, expected, rtol=1e-13)
    assert cache[0] is x and cache[1] is W


def test_linear_forward_with_one_input_feature_is_the_outer_product():
    x = np.array([[1.0], [-2.0], [0.5]])
    W = np.array([[3.0, -1.0]])
    out, _ = layers.linear_forward(x, W, np.array([0.25, 0.0]))
    np.testing.assert_array_equal(out, [[3.25, -1.0], [-5.75, 2.0], [1.75, -0.5]])


def test_linear_backward_matches_central_differences(batch):
    x, W, b, G = batch["x"], batch["W"], batch["b"], batch["G"]

    def loss():
        return np.sum((x @ W + b) * G)

    _, cache = layers.linear_forward(x, W, b)
    dx, dW, db = layers.linear_backward(G, cache)
    for analytic, wrt in ((dx, x), (dW, W), (db, b)):
        assert analytic.shape == wrt.shape
        assert rel_error(analytic, numerical_grad(loss, wrt)) < 1e-6


def test_linear_backward_closed_forms(batch):
    x, W, b, G = batch["x"], batch["W"], batch["b"], batch["G"]
    _, cache = layers.linear_forward(x, W, b)
    dx, dW, db = layers.linear_backward(G, cache)
    np.testing.assert_allclose(dx, np.einsum("nk,ik->ni", G, W), rtol=1e-13)
    np.testing.assert_allclose(dW, np.einsum("ni,nk->ik", x, G), rtol=1e-13)
    np.testing.assert_allclose(db, G.sum(axis=0), rtol=1e-13)


@pytest.mark.parametrize("name", ["relu", "tanh"])
def test_activation_backward_matches_central_differences(name):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 6))
    x[np.abs(x) < 0.1] += 0.5  # away from ReLU's kink at 0
    G = rng.standard_normal((5, 6))
    forward = getattr(layers, f"{name}_forward")
    backward = getattr(layers, f"{name}_backward")
    f = {"relu": lambda: np.sum(np.maximum(x, 0) * G), "tanh": lambda: np.sum(np.tanh(x) * G)}[name]
    _, cache = forward(x)
    dx = backward(G, cache)
    assert rel_error(dx, numerical_grad(f, x)) < 1e-6


def test_relu_forward_and_backward_values():
    out, cache = layers.relu_forward([-2.0, -0.0, 0.0, 3.0])
    np.testing.assert_array_equal(out, [0.0, 0.0, 0.0, 3.0])
    # derivative taken as 0 at the kink, 1 where the input was positive
    np.testing.assert_array_equal(layers.relu_backward([1.0, 1.0, 1.0, 1.0], cache),
                                  [0.0, 0.0, 0.0, 1.0])


def test_tanh_backward_is_one_minus_tanh_squared():
    x = np.linspace(-3, 3, 7)
    _, cache = layers.tanh_forward(x)
    np.testing.assert_allclose(layers.tanh_backward(np.ones(7), cache),
                               1.0 / np.cosh(x) ** 2, rtol=1e-13)


def test_float32_stays_float32():
    x = np.ones((2, 3), np.float32)
    out, _ = layers.linear_forward(x, np.ones((3, 2), np.float32), np.zeros(2, np.float32))
    assert out.dtype == np.float32
    assert layers.relu_forward(x)[0].dtype == np.float32


@given(n=st.integers(1, 4), d_in=st.integers(1, 4), d_out=st.integers(1, 4),
       seed=st.integers(0, 2**16))
def test_linear_gradients_have_the_parameter_shapes(n, d_in, d_out, seed):
    rng = np.random.default_rng(seed)
    x, W, b = rng.standard_normal((n, d_in)), rng.standard_normal((d_in, d_out)), rng.standard_normal(d_out)
    out, cache = layers.linear_forward(x, W, b)
    dx, dW, db = layers.linear_backward(np.ones_like(out), cache)
    assert (dx.shape, dW.shape, db.shape) == (x.shape, W.shape, b.shape)
    # with dout = 1, dL/db counts the samples and dL/dx sums the rows of W
    np.testing.assert_allclose(db, np.full(d_out, float(n)))
    np.testing.assert_allclose(dx, np.tile(W.sum(axis=1), (n, 1)), rtol=1e-12, atol=1e-12)


def test_linear_forward_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match="W must have 3 rows"):
        layers.linear_forward(np.ones((2, 3)), np.ones((4, 2)), np.zeros(2))
    with pytest.raises(ValueError, match=r"b must have shape \(2,\)"):
        layers.linear_forward(np.ones((2, 3)), np.ones((3, 2)), np.zeros(3))
    with pytest.raises(ValueError, match="x must be a 2-D array"):
        layers.linear_forward(np.ones(3), np.ones((3, 2)), np.zeros(2))
    with pytest.raises(TypeError, match="x must be an array of real numbers"):
        layers.linear_forward(np.array([["a"]]), np.ones((1, 2)), np.zeros(2))


def test_backward_rejects_wrong_dout_and_cache():
    _, cache = layers.linear_forward(np.ones((2, 3)), np.ones((3, 4)), np.zeros(4))
    with pytest.raises(ValueError, match=r"dout must have the shape .* \(2, 4\); got \(2, 3\)"):
        layers.linear_backward(np.ones((2, 3)), cache)
    with pytest.raises(TypeError, match=r"cache must be the tuple \(ndarray, ndarray\) returned by linear_forward"):
        layers.linear_backward(np.ones((2, 4)), [1, 2])
    _, relu_cache = layers.relu_forward(np.ones(3))
    with pytest.raises(ValueError, match="dout must have the shape"):
        layers.relu_backward(np.ones(4), relu_cache)
    with pytest.raises(TypeError, match="cache must be the array returned by tanh_forward"):
        layers.tanh_backward(np.ones(3), (1,))


@pytest.mark.parametrize("axis", [-1, 0])
def test_softmax_backward_matches_central_differences(axis):
    rng = np.random.default_rng(3)
    x, G = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))

    def loss():
        e = np.exp(x - x.max(axis=axis, keepdims=True))
        return np.sum(e / e.sum(axis=axis, keepdims=True) * G)

    probs, cache = layers.softmax_forward(x, axis=axis)
    np.testing.assert_allclose(probs.sum(axis=axis), 1.0, rtol=1e-14)
    assert rel_error(layers.softmax_backward(G, cache), numerical_grad(loss, x)) < 1e-6


@pytest.mark.parametrize("axis", [-1, 0])
def test_log_softmax_backward_matches_central_differences(axis):
    rng = np.random.default_rng(4)
    x, G = rng.standard_normal((3, 6)), rng.standard_normal((3, 6))

    def loss():
        m = x.max(axis=axis, keepdims=True)
        return np.sum((x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))) * G)

    _, cache = layers.log_softmax_forward(x, axis=axis)
    assert rel_error(layers.log_softmax_backward(G, cache), numerical_grad(loss, x)) < 1e-6


def test_log_softmax_then_nll_gives_the_cross_entropy_gradient():
    """Chaining the backward passes gives (q - one_hot) / N, the closed form."""
    logits = np.array([[-1.0, -3.0, 4.0], [-3.0, 3.0, -1.0]])
    targets = np.array([0, 1])
    log_probs, cache = layers.log_softmax_forward(logits)
    n = len(targets)
    assert -log_probs[np.arange(n), targets].mean() == pytest.approx(2.5141, abs=5e-5)
    dlog_probs = np.zeros_like(logits)
    dlog_probs[np.arange(n), targets] = -1.0 / n  # d(mean NLL) / d log q
    dlogits = layers.log_softmax_backward(dlog_probs, cache)
    e = np.exp(logits)
    q = e / e.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(dlogits, (q - np.eye(3)[targets]) / n, rtol=1e-12, atol=1e-17)


def test_softmax_backward_ignores_a_constant_added_to_dout():
    _, cache = layers.softmax_forward([[0.3, -1.0, 2.0]])
    g = np.array([[0.5, -2.0, 1.0]])
    np.testing.assert_allclose(layers.softmax_backward(g + 7.0, cache),
                               layers.softmax_backward(g, cache), atol=1e-14)


def test_relu_backward_passes_zero_at_inactive_units_whatever_dout_holds():
    _, cache = layers.relu_forward([-1.0, 2.0, 0.0])
    np.testing.assert_array_equal(layers.relu_backward([np.nan, 3.0, np.inf], cache),
                                  [0.0, 3.0, 0.0])


# --- edge cases: the kink, NaN from upstream, 0-d input ---------------------------


def test_relu_backward_at_exactly_zero_passes_nothing():
    """The derivative at the kink is 0 (PyTorch's convention): x = 0 is inactive."""
    _, cache = layers.relu_forward([0.0, -0.0, 5e-324, -5e-324])
    np.testing.assert_array_equal(layers.relu_backward([1.0, 1.0, 1.0, 1.0], cache),
                                  [0.0, 0.0, 1.0, 0.0])


def test_relu_backward_passes_nan_only_through_active_units():
    """As torch's threshold_backward: 0 at inactive units whatever dout holds."""
    _, cache = layers.relu_forward([-1.0, 0.0, 2.0, 3.0])
    got = layers.relu_backward([np.nan, np.inf, np.nan, -np.inf], cache)
    np.testing.assert_array_equal(got, [0.0, 0.0, np.nan, -np.inf])


@pytest.mark.parametrize("name", ["relu", "tanh"])
@pytest.mark.parametrize("x", [np.float64(0.5), np.array(-2.0), 3.0])
def test_a_0d_input_round_trips_through_the_elementwise_pairs(name, x):
    forward = getattr(layers, f"{name}_forward")
    backward = getattr(layers, f"{name}_backward")
    out, cache = forward(x)
    assert isinstance(out, np.ndarray) and out.shape == ()
    dx = backward(np.array(2.0), cache)
    assert isinstance(dx, np.ndarray) and dx.shape == ()
    slope = float(x > 0) if name == "relu" else 1 - np.tanh(float(x)) ** 2
    assert float(dx) == pytest.approx(2.0 * slope, rel=1e-15, abs=0)


def test_forward_passes_refuse_nan_and_let_infinities_through():
    """NaN is never a valid input (ValueError naming it); infinities are extreme
    but valid: relu(inf) = inf, relu(-inf) = 0, tanh(+-inf) = +-1, inf * 2 + 1 = inf."""
    np.testing.assert_array_equal(layers.relu_forward([np.inf, -np.inf])[0], [np.inf, 0.0])
    np.testing.assert_array_equal(layers.tanh_forward([np.inf, -np.inf])[0], [1.0, -1.0])
    out, _ = layers.linear_forward([[np.inf, 1.0]], [[2.0], [0.0]], [1.0])
    np.testing.assert_array_equal(out, [[np.inf]])
    one = np.ones((1, 1))
    for args, name in [((np.array([[np.nan]]), one, np.ones(1)), "x"),
                       ((one, np.array([[np.nan]]), np.ones(1)), "W"),
                       ((one, one, np.array([np.nan])), "b")]:
        with pytest.raises(ValueError, match=rf"^{name} must not contain NaN; got NaN"):
            layers.linear_forward(*args)
    for forward in (layers.relu_forward, layers.tanh_forward):
        with pytest.raises(ValueError, match=r"^x must not contain NaN; got NaN at index 1$"):
            forward([0.0, np.nan])
