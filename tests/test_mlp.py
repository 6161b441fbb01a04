"""MLP and TwoLayerMLP: forward by hand, backprop by central differences, errors."""

import numpy as np
import pytest
from _support import numerical_grad, rel_error

import scratchnet as sn
from scratchnet.losses import _cross_entropy_and_grad_inplace


def forward_by_hand(params, x, activation):
    """The MLP written out directly from its definition (independent of scratchnet)."""
    phi = {"relu": lambda z: np.maximum(z, 0), "tanh": np.tanh}[activation]
    num_layers = len(params) // 2
    a, pre = x, []
    for layer in range(1, num_layers + 1):
        z = a @ params[f"W{layer}"] + params[f"b{layer}"]
        if layer == num_layers:
            return z, pre
        pre.append(z)
        a = phi(z)


def mean_cross_entropy(logits, targets):
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_q = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return -np.mean(log_q[np.arange(len(targets)), targets])


MODELS = [
    ("two-layer", lambda act: sn.TwoLayerMLP(3, 6, 4, activation=act, rng=3)),
    ("three-layer", lambda act: sn.MLP([3, 5, 4, 3], activation=act, rng=4)),
]


@pytest.mark.parametrize("activation", ["relu", "tanh"])
@pytest.mark.parametrize("kind, make", MODELS)
def test_backward_matches_central_differences(kind, make, activation):
    model = make(activation)
    rng = np.random.default_rng(5)
    for p in model.params.values():  # non-zero biases, so their gradients matter
        p += 0.1 * rng.standard_normal(p.shape)
    x = rng.standard_normal((5, 3))
    targets = rng.integers(0, model.sizes[-1], 5)
    _, pre = forward_by_hand(model.params, x, activation)
    # away from ReLU's kink: no pre-activation within reach of the eps = 1e-6 steps
    assert min(np.abs(z).min() for z in pre) > 1e-3

    loss, grads = model.loss_and_grads(x, targets)
    assert loss == pytest.approx(mean_cross_entropy(forward_by_hand(model.params, x, activation)[0], targets), rel=1e-12)

    def f():
        return mean_cross_entropy(forward_by_hand(model.params, x, activation)[0], targets)

    assert sorted(grads) == sorted(model.params)
    for name, p in model.params.items():
        assert grads[name].shape == p.shape
        assert rel_error(grads[name], numerical_grad(f, p)) < 1e-6, name


@pytest.mark.parametrize("activation", ["relu", "tanh"])
def test_forward_matches_the_definition(activation):
    model = sn.MLP([2, 7, 5, 3], activation=activation, rng=0)
    x = np.random.default_rng(1).standard_normal((4, 2))
    np.testing.assert_allclose(model.forward(x), forward_by_hand(model.params, x, activation)[0], rtol=1e-12)


def test_two_layer_mlp_is_the_textbook_chain():
    model = sn.TwoLayerMLP(2, 8, 3, rng=0)
    P = model.params
    assert {k: v.shape for k, v in P.items()} == {"W1": (2, 8), "b1": (8,), "W2": (8, 3), "b2": (3,)}
    x = np.random.default_rng(2).standard_normal((6, 2))
    h = np.maximum(x @ P["W1"] + P["b1"], 0)
    np.testing.assert_allclose(model.forward(x), h @ P["W2"] + P["b2"], rtol=1e-12)
    assert isinstance(model, sn.MLP)
    assert (model.in_features, model.hidden_features, model.out_features) == (2, 8, 3)
    assert repr(model) == "TwoLayerMLP(2, 8, 3, activation='relu')"


def test_predict_proba_and_predict():
    model = sn.MLP([2, 6, 4], rng=0)
    x = np.random.default_rng(3).standard_normal((9, 2))
    logits = forward_by_hand(model.params, x, "relu")[0]
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    np.testing.assert_allclose(model.predict_proba(x), e / e.sum(axis=1, keepdims=True), rtol=1e-12)
    np.testing.assert_array_equal(model.predict(x), np.argmax(logits, axis=1))


def test_training_fast_path_agrees_with_the_public_path():
    model = sn.MLP([1, 16, 16, 3], rng=0)
    rng = np.random.default_rng(4)
    x, targets = rng.standard_normal((10, 1)), rng.integers(0, 3, 10)
    loss, grads = model.loss_and_grads(x, targets)
    public = {k: g.copy() for k, g in grads.items()}
    fast_loss = model._loss_and_grads_unchecked(x, targets)
    assert fast_loss == pytest.approx(loss, rel=1e-13)
    for k in public:
        np.testing.assert_allclose(model.grads[k], public[k], rtol=1e-12, atol=1e-15)


def test_in_place_cross_entropy_kernel_matches_the_formula():
    rng = np.random.default_rng(6)
    logits = rng.standard_normal((7, 4)) * 30
    targets = rng.integers(0, 4, 7)
    work = logits.copy()
    loss = _cross_entropy_and_grad_inplace(work, targets, np.arange(7))
    assert loss == pytest.approx(mean_cross_entropy(logits, targets), rel=1e-13)
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    expected = e / e.sum(axis=1, keepdims=True)
    expected[np.arange(7), targets] -= 1
    np.testing.assert_allclose(work, expected / 7, rtol=1e-12, atol=1e-16)  # 1/N - q/N cancels


def test_params_and_grads_are_views_into_flat_vectors():
    model = sn.MLP([3, 4, 2], rng=0)
    assert model.flat_params.shape == (3 * 4 + 4 + 4 * 2 + 2,)
    expected = np.concatenate([model.params[k].ravel() for k in ("W1", "b1", "W2", "b2")])
    np.testing.assert_array_equal(model.flat_params, expected)
    model.flat_params[:] = 0.5
    assert np.all(model.params["W2"] == 0.5)
    model.params["b1"][:] = -1.0  # an in-place update of a view is an update of the model
    assert np.all(model.flat_params[12:16] == -1.0)
    model.loss_and_grads(np.ones((2, 3)), [0, 1])
    for g in model.grads.values():
        assert np.shares_memory(g, model.flat_grads)


@pytest.mark.parametrize("activation, gain2", [("relu", 2.0), ("tanh", 1.0)])
def test_initialisation_follows_the_docstring(activation, gain2):
    model = sn.MLP([300, 500, 100], activation=activation, rng=0)
    W1, W2 = model.params["W1"], model.params["W2"]
    assert W1.std() == pytest.approx(np.sqrt(gain2 * 2 / 800), rel=0.02)
    assert W2.std() == pytest.approx(np.sqrt(2 / 600), rel=0.02)  # output layer: gain 1
    assert abs(W1.mean()) < 0.002
    assert np.all(model.params["b1"] == 0) and np.all(model.params["b2"] == 0)


def test_same_seed_same_parameters_different_seed_different():
    a = sn.TwoLayerMLP(1, 64, 2, rng=7)
    b = sn.TwoLayerMLP(1, 64, 2, rng=7)
    c = sn.TwoLayerMLP(1, 64, 2, rng=8)
    np.testing.assert_array_equal(a.flat_params, b.flat_params)
    assert not np.array_equal(a.flat_params, c.flat_params)
    d = sn.TwoLayerMLP(1, 64, 2, rng=np.random.default_rng(7))
    np.testing.assert_array_equal(a.flat_params, d.flat_params)


def test_one_dimensional_input_for_one_feature():
    model = sn.TwoLayerMLP(1, 8, 2, rng=0)
    x = np.array([-1.0, 0.5, 2.0])
    np.testing.assert_array_equal(model.forward(x), model.forward(x[:, None]))
    assert model.predict_proba(x).shape == (3, 2)
    with pytest.raises(ValueError, match=r"x must have shape \(N, 2\) .*; got shape \(3,\)"):
        sn.TwoLayerMLP(2, 8, 2, rng=0).forward(x)


def test_forward_returns_a_new_array_and_backward_overwrites():
    model = sn.MLP([2, 5, 3], rng=0)
    x1, x2 = np.ones((4, 2)), -np.ones((4, 2))
    l1 = model.forward(x1)
    kept = l1.copy()
    model.forward(x2)
    np.testing.assert_array_equal(l1, kept)
    d = np.full((4, 3), 0.25)
    g1 = {k: v.copy() for k, v in model.backward(d).items()}
    grads = model.backward(d)  # written again, not accumulated
    for k in g1:
        np.testing.assert_array_equal(grads[k], g1[k])
    assert model.backward(d) is grads


def test_predict_proba_does_not_disturb_the_cache():
    model = sn.MLP([2, 5, 3], rng=0)
    rng = np.random.default_rng(1)
    x, other, d = rng.standard_normal((4, 2)), rng.standard_normal((4, 2)), rng.standard_normal((4, 3))
    model.forward(x)
    expected = {k: v.copy() for k, v in model.backward(d).items()}
    model.forward(x)
    model.predict_proba(other)
    model.predict(other)
    for k, v in model.backward(d).items():
        np.testing.assert_array_equal(v, expected[k])


def test_alternating_batch_sizes_keep_gradients_right():
    model = sn.MLP([2, 5, 3], rng=0)
    rng = np.random.default_rng(2)
    batches = [(rng.standard_normal((n, 2)), rng.integers(0, 3, n)) for n in (4, 7, 4, 1, 9, 2, 4)]
    for x, t in batches:
        loss, grads = model.loss_and_grads(x, t)
        fresh = sn.MLP([2, 5, 3], rng=0)
        loss2, grads2 = fresh.loss_and_grads(x, t)
        assert loss == loss2
        for k in grads:
            np.testing.assert_array_equal(grads[k], grads2[k])


def test_bad_input_is_rejected():
    model = sn.TwoLayerMLP(3, 4, 2, rng=0)
    with pytest.raises(ValueError, match=r"x must have shape \(N, 3\).*got shape \(5, 2\)"):
        model.forward(np.ones((5, 2)))
    with pytest.raises(ValueError, match="x must have shape"):
        model.forward(np.ones((2, 5, 3)))
    with pytest.raises(ValueError, match="x must not contain NaN"):
        model.forward([[np.nan, 0.0, 0.0]])
    with pytest.raises(ValueError, match=r"targets must be integers in \[0, 2\); got 2"):
        model.loss_and_grads(np.ones((3, 3)), [0, 1, 2])
    with pytest.raises(RuntimeError, match=r"call forward\(x\) first"):
        sn.TwoLayerMLP(3, 4, 2).backward(np.ones((1, 2)))
    model.forward(np.ones((5, 3)))
    with pytest.raises(ValueError, match=r"dlogits must have the shape .* \(5, 2\); got \(5, 3\)"):
        model.backward(np.ones((5, 3)))
    with pytest.raises(ValueError, match="activation must be 'relu' or 'tanh'; got 'sigmoid'"):
        sn.MLP([1, 2, 2], activation="sigmoid")
    with pytest.raises(ValueError, match="sizes must list at least"):
        sn.MLP([3])
    with pytest.raises(ValueError, match=r"sizes\[1\] must be an integer >= 1; got 0"):
        sn.MLP([3, 0, 2])
    with pytest.raises(TypeError, match="sizes must be a sequence"):
        sn.MLP(3)
    with pytest.raises(TypeError, match="rng must be"):
        sn.MLP([1, 2], rng="seed")


# --- dtype=float32 -------------------------------------------------------------


def test_float32_model_keeps_float32_everywhere():
    model = sn.MLP([3, 8, 5, 4], rng=0, dtype=np.float32)
    assert model.dtype == np.float32
    rng = np.random.default_rng(0)
    x, targets = rng.standard_normal((6, 3)), rng.integers(0, 4, 6)  # float64 input
    assert model.flat_params.dtype == np.float32 and model.flat_grads.dtype == np.float32
    assert all(p.dtype == np.float32 for p in model.params.values())
    assert model.forward(x).dtype == np.float32
    assert model.predict_proba(x).dtype == np.float32
    loss, grads = model.loss_and_grads(x, targets)
    assert type(loss) is float
    assert all(g.dtype == np.float32 and np.shares_memory(g, model.flat_grads)
               for g in grads.values())
    assert model.backward(np.ones((6, 4))) is grads  # float64 dlogits are converted
    assert all(g.dtype == np.float32 for g in grads.values())
    assert type(model._loss_and_grads_unchecked(x, targets)) is float
    work = model._work[6]
    assert all(a.dtype == np.float32 for a in work.hidden + work.dhidden + work.dpre)
    assert work.logits.dtype == np.float32
    # float64 input is rounded to float32 first: the same logits as float32 input
    np.testing.assert_array_equal(model.forward(x), model.forward(x.astype(np.float32)))
    assert repr(sn.TwoLayerMLP(2, 3, 2, dtype="float32")) == (
        "TwoLayerMLP(2, 3, 2, activation='relu', dtype='float32')")


@pytest.mark.parametrize("dtype", [np.float64, "float64"])
def test_float64_is_the_default_and_can_be_named(dtype):
    model = sn.TwoLayerMLP(2, 3, 2, rng=0, dtype=dtype)
    assert model.dtype == np.float64 and model.flat_params.dtype == np.float64
    assert model.forward(np.ones((2, 2), np.float32)).dtype == np.float64
    np.testing.assert_array_equal(model.flat_params, sn.TwoLayerMLP(2, 3, 2, rng=0).flat_params)


@pytest.mark.parametrize("activation", ["relu", "tanh"])
def test_float32_model_agrees_with_float64_from_the_same_seed(activation):
    m64 = sn.MLP([3, 16, 8, 4], activation=activation, rng=11)
    m32 = sn.MLP([3, 16, 8, 4], activation=activation, rng=11, dtype="float32")
    # the same float64 draws, rounded once
    np.testing.assert_array_equal(m32.flat_params, m64.flat_params.astype(np.float32))
    rng = np.random.default_rng(12)
    x = rng.standard_normal((32, 3)).astype(np.float32)  # exactly representable in both
    targets = rng.integers(0, 4, 32)
    m64.flat_params[:] = m32.flat_params  # the very same numbers
    # the float64 reference, written out independently of scratchnet
    params64 = {k: p.astype(np.float64) for k, p in m32.params.items()}
    loss_ref = mean_cross_entropy(forward_by_hand(params64, x.astype(np.float64), activation)[0], targets)
    loss32, grads32 = m32.loss_and_grads(x, targets)
    assert loss32 == pytest.approx(loss_ref, rel=1e-5)
    loss64, grads64 = m64.loss_and_grads(x.astype(np.float64), targets)
    assert loss64 == pytest.approx(loss_ref, rel=1e-12)
    for k in grads64:  # the float64 gradients are checked by central differences above
        g64 = grads64[k]
        np.testing.assert_allclose(grads32[k], g64, rtol=1e-4, atol=1e-5 * np.abs(g64).max(), err_msg=k)
    np.testing.assert_allclose(m32.predict_proba(x), m64.predict_proba(x), rtol=1e-4, atol=1e-7)


@pytest.mark.parametrize("dtype, error", [
    (np.float16, ValueError), ("float16", ValueError), (np.int64, ValueError),
    (np.longdouble, ValueError), ("double precision", TypeError), (None, TypeError),
    (32, TypeError),
])
def test_bad_dtype_is_rejected(dtype, error):
    match = r"dtype must be np\.float32 or np\.float64 \(or 'float32', 'float64'\); got "
    with pytest.raises(error, match=match):
        sn.MLP([2, 3, 2], dtype=dtype)
    with pytest.raises(error, match=match):
        sn.TwoLayerMLP(2, 3, 2, dtype=dtype)
