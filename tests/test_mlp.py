"""MLP and TwoLayerMLP (and the engine's MLP): forward by hand, backprop by central
differences, the traps a student walks into, errors."""

import numpy as np
import pytest
from _support import numerical_grad, rel_error

import scratchnet as sn


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
    ("engine", lambda act: sn.fast.MLP([3, 5, 4, 3], activation=act, rng=4)),
]
#: The reference classes and the engine, built from layer sizes.
CLASSES = [sn.MLP, sn.fast.MLP]


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


@pytest.mark.parametrize("activation, gain2", [("relu", 2.0), ("tanh", 1.0)])
def test_xavier_initialisation_is_the_default_and_follows_the_docstring(activation, gain2):
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
    d = sn.TwoLayerMLP(1, 64, 2, rng=np.random.default_rng(7))
    for k in a.params:
        np.testing.assert_array_equal(a.params[k], b.params[k])
        np.testing.assert_array_equal(a.params[k], d.params[k])
    assert not np.array_equal(a.params["W1"], c.params["W1"])


def test_one_dimensional_input_for_one_feature():
    model = sn.TwoLayerMLP(1, 8, 2, rng=0)
    x = np.array([-1.0, 0.5, 2.0])
    np.testing.assert_array_equal(model.forward(x), model.forward(x[:, None]))
    assert model.predict_proba(x).shape == (3, 2)
    with pytest.raises(ValueError, match=r"x must have shape \(N, 2\) .*; got shape \(3,\)"):
        sn.TwoLayerMLP(2, 8, 2, rng=0).forward(x)


@pytest.mark.parametrize("cls", CLASSES)
def test_forward_returns_a_new_array_and_backward_returns_fresh_arrays(cls):
    """Trap: a saved gradient dict must survive the next backward."""
    model = cls([2, 5, 3], rng=0)
    x1, x2 = np.ones((4, 2)), -np.ones((4, 2))
    l1 = model.forward(x1)
    kept = l1.copy()
    model.forward(x2)
    np.testing.assert_array_equal(l1, kept)
    saved = model.backward(np.full((4, 3), 0.25))
    copies = {k: v.copy() for k, v in saved.items()}
    later = model.backward(np.full((4, 3), -3.0))
    assert later is not saved
    for k in saved:
        np.testing.assert_array_equal(saved[k], copies[k])
        assert not np.shares_memory(saved[k], later[k])


@pytest.mark.parametrize("cls", CLASSES)
def test_the_rebinding_loop_students_write_trains_the_model(cls):
    """Trap: ``params[k] = params[k] - lr * grads[k]`` must not be a silent no-op."""
    model = cls([1, 16, 2], rng=0)
    x, t = sn.tasks.separated().sample(256, np.random.default_rng(1))
    first, _ = model.loss_and_grads(x, t)
    for _ in range(200):
        loss, grads = model.loss_and_grads(x, t)
        for k in model.params:
            model.params[k] = model.params[k] - 0.1 * grads[k]
    assert loss < first - 0.1, (first, loss)
    np.testing.assert_allclose(model.forward(x), forward_by_hand(dict(model.params), x, "relu")[0],
                               rtol=1e-12)


@pytest.mark.parametrize("cls", CLASSES)
def test_predict_proba_does_not_disturb_the_cache(cls):
    model = cls([2, 5, 3], rng=0)
    rng = np.random.default_rng(1)
    x, other, d = rng.standard_normal((4, 2)), rng.standard_normal((4, 2)), rng.standard_normal((4, 3))
    model.forward(x)
    expected = {k: v.copy() for k, v in model.backward(d).items()}
    model.forward(x)
    model.predict_proba(other)
    model.predict(other)
    for k, v in model.backward(d).items():
        np.testing.assert_array_equal(v, expected[k])


@pytest.mark.parametrize("cls", CLASSES)
def test_alternating_batch_sizes_keep_gradients_right(cls):
    model = cls([2, 5, 3], rng=0)
    rng = np.random.default_rng(2)
    batches = [(rng.standard_normal((n, 2)), rng.integers(0, 3, n)) for n in (4, 7, 4, 1, 9, 2, 4)]
    for x, t in batches:
        loss, grads = model.loss_and_grads(x, t)
        fresh = cls([2, 5, 3], rng=0)
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


@pytest.mark.parametrize("cls", CLASSES)
def test_float32_model_keeps_float32_everywhere(cls):
    model = cls([3, 8, 5, 4], rng=0, dtype=np.float32)
    assert model.dtype == np.float32
    rng = np.random.default_rng(0)
    x, targets = rng.standard_normal((6, 3)), rng.integers(0, 4, 6)  # float64 input
    assert all(p.dtype == np.float32 for p in model.params.values())
    assert model.forward(x).dtype == np.float32
    assert model.predict_proba(x).dtype == np.float32
    assert model.predict_log_proba(x).dtype == np.float32
    loss, grads = model.loss_and_grads(x, targets)
    assert type(loss) is float
    assert all(g.dtype == np.float32 for g in grads.values())
    assert all(g.dtype == np.float32 for g in model.backward(np.ones((6, 4))).values())
    # float64 input is rounded to float32 first: the same logits as float32 input
    np.testing.assert_array_equal(model.forward(x), model.forward(x.astype(np.float32)))
    assert repr(sn.TwoLayerMLP(2, 3, 2, dtype="float32")) == (
        "TwoLayerMLP(2, 3, 2, activation='relu', dtype='float32')")


@pytest.mark.parametrize("dtype", [np.float64, "float64"])
def test_float64_is_the_default_and_can_be_named(dtype):
    model = sn.TwoLayerMLP(2, 3, 2, rng=0, dtype=dtype)
    assert model.dtype == np.float64 and model.params["W1"].dtype == np.float64
    assert model.forward(np.ones((2, 2), np.float32)).dtype == np.float64
    np.testing.assert_array_equal(model.params["W2"], sn.TwoLayerMLP(2, 3, 2, rng=0).params["W2"])


@pytest.mark.parametrize("activation", ["relu", "tanh"])
def test_float32_model_agrees_with_float64_from_the_same_seed(activation):
    m64 = sn.MLP([3, 16, 8, 4], activation=activation, rng=11)
    m32 = sn.MLP([3, 16, 8, 4], activation=activation, rng=11, dtype="float32")
    # the same float64 draws, rounded once
    for k in m64.params:
        np.testing.assert_array_equal(m32.params[k], m64.params[k].astype(np.float32))
    rng = np.random.default_rng(12)
    x = rng.standard_normal((32, 3)).astype(np.float32)  # exactly representable in both
    targets = rng.integers(0, 4, 32)
    for k in m64.params:
        m64.params[k][...] = m32.params[k]  # the very same numbers
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


@pytest.mark.parametrize("activation, gain2", [("relu", 2.0), ("tanh", 1.0)])
def test_he_initialisation_has_variance_gain_over_fan_in(activation, gain2):
    model = sn.MLP([400, 300, 200], activation=activation, rng=1, init="he")
    W1, W2 = model.params["W1"], model.params["W2"]
    # sample std of 120,000 normal draws: relative standard error about 0.2%
    assert W1.std() == pytest.approx(np.sqrt(gain2 / 400), rel=0.01)
    assert W2.std() == pytest.approx(np.sqrt(1 / 300), rel=0.01)
    assert abs(W1.mean()) < 5 * np.sqrt(gain2 / 400) / np.sqrt(W1.size)
    assert np.all(model.params["b1"] == 0)


def test_torch_initialisation_is_uniform_on_one_over_root_fan_in():
    model = sn.MLP([1, 64, 64, 2], rng=2, init="torch")
    for layer, fan_in in ((1, 1), (2, 64), (3, 64)):
        bound = 1 / np.sqrt(fan_in)
        for name in (f"W{layer}", f"b{layer}"):
            p = model.params[name]
            assert np.abs(p).max() <= bound
            if p.size >= 64:
                assert np.abs(p).max() > 0.9 * bound  # the range is used, not zeros
    # the first layer: weights AND biases spread over [-1, 1], so the ReLU kinks
    # -b/w start spread over x instead of all at x = 0
    big = sn.MLP([1, 20000, 2], rng=3, init="torch").params
    for p in (big["W1"], big["b1"]):
        assert p.mean() == pytest.approx(0.0, abs=0.02)
        assert p.var() == pytest.approx(1 / 3, rel=0.03)  # variance of U(-1, 1)
    kinks = -big["b1"] / big["W1"][0]
    assert np.mean(np.abs(kinks) > 1) > 0.3
    with pytest.raises(ValueError, match="init must be one of 'xavier', 'he', 'torch'; got 'lecun'"):
        sn.MLP([1, 2], init="lecun")


@pytest.mark.parametrize("cls", CLASSES)
def test_predict_log_proba_is_log_softmax_and_finite_where_probs_underflow(cls):
    model = cls([1, 4, 3], rng=0)
    for k in model.params:
        model.params[k][...] = 0.0
    model.params["b2"][...] = [0.0, -800.0, 5.0]
    log_q = model.predict_log_proba([0.0, 1.0])
    expected = np.array([0.0, -800.0, 5.0]) - 5.0 - np.log1p(np.exp(-5.0))
    np.testing.assert_allclose(log_q, [expected, expected], rtol=1e-13)
    assert np.all(model.predict_proba([0.0])[0, 1] == 0.0)  # exp(-805) underflows
    np.testing.assert_array_equal(model.predict([0.0, 1.0]), [2, 2])


@pytest.mark.parametrize("cls", CLASSES)
def test_a_one_output_network_reports_two_columns(cls):
    model = cls([1, 3, 1], rng=0)
    s = forward_by_hand(dict(model.params), np.array([[0.5], [-2.0]]), "relu")[0][:, 0]
    q1 = 1 / (1 + np.exp(-s))  # P(class 1 | x) = sigmoid(s)
    np.testing.assert_allclose(model.predict_proba([0.5, -2.0]), np.c_[1 - q1, q1], rtol=1e-13)
    np.testing.assert_array_equal(model.predict([0.5, -2.0]), (s > 0).astype(int))


def _loss_by_hand(name, outputs, targets):
    """The four losses written out from their definitions (not scratchnet's code)."""
    n = len(targets)
    if name == "binary_cross_entropy":
        s, y = outputs[:, 0], targets
        return np.mean(y * np.log1p(np.exp(-s)) + (1 - y) * np.log1p(np.exp(s)))
    if name == "mse":
        return np.mean((outputs - np.eye(outputs.shape[1])[targets]) ** 2)
    if name == "hinge":
        right = outputs[np.arange(n), targets][:, None]
        terms = np.maximum(0, 1 - right + outputs)
        terms[np.arange(n), targets] = 0
        return np.mean(terms.sum(axis=1) / outputs.shape[1])
    return mean_cross_entropy(outputs, targets)


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("loss", ["cross_entropy", "binary_cross_entropy", "mse", "hinge"])
def test_every_named_loss_backpropagates_by_central_differences(cls, loss):
    outputs = 1 if loss == "binary_cross_entropy" else 3
    model = cls([2, 6, outputs], rng=5)
    rng = np.random.default_rng(6)
    for p in model.params.values():
        p += 0.1 * rng.standard_normal(p.shape)
    x = rng.standard_normal((7, 2))
    targets = rng.integers(0, max(outputs, 2), 7)

    def f():
        return _loss_by_hand(loss, forward_by_hand(dict(model.params), x, "relu")[0], targets)

    value, grads = model.loss_and_grads(x, targets, loss=loss)
    assert value == pytest.approx(f(), rel=1e-12)
    for name, p in model.params.items():  # atol: a zero gradient's numerical noise
        np.testing.assert_allclose(grads[name], numerical_grad(f, p), rtol=1e-6, atol=1e-8,
                                   err_msg=f"{loss} {name}")


@pytest.mark.parametrize("method", ["forward", "predict_proba", "predict_log_proba", "predict"])
@pytest.mark.parametrize("bad, named", [(np.inf, "inf"), (-np.inf, "-inf"), (np.nan, "NaN")])
def test_non_finite_input_is_named_as_it_is(method, bad, named):
    model = sn.MLP([2, 4, 2], rng=0)
    x = np.zeros((3, 2))
    x[1, 0] = bad
    with pytest.raises(ValueError, match=rf"^x must .*got {named} at index \(1, 0\)$"):
        getattr(model, method)(x)


def test_a_one_output_network_with_cross_entropy_points_to_the_binary_loss():
    model = sn.MLP([1, 4, 1], rng=0)
    assert type(model.loss) is sn.objectives.BCEWithLogitsLoss  # its default
    for loss in ("cross_entropy", "hinge"):
        with pytest.raises(ValueError, match=r"one output per class, not 1 .*use loss='binary_cross_entropy'"):
            model.loss_and_grads([0.0, 1.0], [0, 1], loss=loss)
    value, _ = model.loss_and_grads([0.0, 1.0], [0, 1], loss="binary_cross_entropy")
    assert np.isfinite(value)
