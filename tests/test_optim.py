"""SGD and Adam: each step against the torch.optim formulas computed by hand."""

import math

import numpy as np
import pytest

import scratchnet as sn


def separate_params(rng):
    """A plain dict of independent arrays (the per-array update path)."""
    return {"W": rng.standard_normal((3, 2)), "b": rng.standard_normal(2)}


def flat_params(rng, dtype=np.float64):
    """The engine's parameters: views of one flat vector (the whole-vector path)."""
    model = sn.fast.MLP([3, 2], rng=0, dtype=dtype)
    model.params.flat[:] = rng.standard_normal(model.params.flat.size)
    return model.params, model


def two_gradients(rng, params):
    return [{k: rng.standard_normal(p.shape) for k, p in params.items()} for _ in range(2)]


def as_model_grads(model, grads):
    """The gradients as the engine's backward returns them: views of one vector."""
    flat = sn.fast.FlatParams(np.empty_like(model.params.flat), model.layout)
    for k, g in grads.items():
        flat[k] = g
    return flat


def sgd_by_hand(p, gs, lr, momentum, weight_decay):
    p, buf = p.copy(), None
    for g in gs:
        g = g + weight_decay * p
        if momentum:
            buf = g.copy() if buf is None else momentum * buf + g
            g = buf
        p = p - lr * g
    return p


def adam_by_hand(p, gs, lr, beta1, beta2, eps, weight_decay):
    p, m, v = p.copy(), 0.0, 0.0
    for t, g in enumerate(gs, 1):
        g = g + weight_decay * p
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        m_hat, v_hat = m / (1 - beta1**t), v / (1 - beta2**t)
        p = p - lr * m_hat / (np.sqrt(v_hat) + eps)
    return p


@pytest.mark.parametrize("layout", ["separate", "flat"])
@pytest.mark.parametrize("momentum, weight_decay", [(0.0, 0.0), (0.9, 0.0), (0.0, 0.01), (0.8, 0.05)])
def test_sgd_two_steps_match_the_hand_computation(layout, momentum, weight_decay):
    rng = np.random.default_rng(0)
    if layout == "flat":
        params, model = flat_params(rng)
    else:
        params, model = separate_params(rng), None
    start = {k: p.copy() for k, p in params.items()}
    arrays = {k: id(p) for k, p in params.items()}
    grads = two_gradients(rng, params)
    opt = sn.SGD(params, 0.1, momentum=momentum, weight_decay=weight_decay)
    for g in grads:
        opt.step(as_model_grads(model, g) if model else g)
    for k in params:
        expected = sgd_by_hand(start[k], [g[k] for g in grads], 0.1, momentum, weight_decay)
        np.testing.assert_allclose(params[k], expected, rtol=1e-14, atol=1e-15)
        assert id(params[k]) == arrays[k]  # updated in place


def test_one_sgd_step_is_p_minus_lr_g():
    params = {"w": np.array([1.0, -2.0, 0.5])}
    sn.SGD(params, lr=0.5).step({"w": np.array([2.0, 2.0, -1.0])})
    np.testing.assert_array_equal(params["w"], [0.0, -3.0, 1.0])


@pytest.mark.parametrize("layout", ["separate", "flat"])
@pytest.mark.parametrize("weight_decay", [0.0, 0.1])
@pytest.mark.parametrize("steps", [1, 2])
def test_adam_steps_match_the_hand_computation(layout, weight_decay, steps):
    rng = np.random.default_rng(1)
    if layout == "flat":
        params, model = flat_params(rng)
    else:
        params, model = separate_params(rng), None
    start = {k: p.copy() for k, p in params.items()}
    grads = two_gradients(rng, params)[:steps]
    opt = sn.Adam(params, lr=0.01, betas=(0.8, 0.95), eps=1e-3, weight_decay=weight_decay)
    for g in grads:
        opt.step(as_model_grads(model, g) if model else g)
    for k in params:
        expected = adam_by_hand(start[k], [g[k] for g in grads], 0.01, 0.8, 0.95, 1e-3, weight_decay)
        np.testing.assert_allclose(params[k], expected, rtol=1e-13, atol=1e-15)


def test_adam_first_step_moves_each_coordinate_by_about_lr():
    params = {"w": np.array([1.0, 1.0, 1.0])}
    sn.Adam(params, lr=0.1).step({"w": np.array([1e-3, -50.0, 2.0])})
    # m_hat / sqrt(v_hat) = g / |g| on the first step (up to eps)
    np.testing.assert_allclose(params["w"], [0.9, 1.1, 0.9], rtol=1e-5)


def test_the_whole_vector_path_equals_the_per_array_path():
    """The engine's flat update and the per-array update give the same numbers."""
    rng = np.random.default_rng(2)
    a = sn.fast.MLP([2, 3, 2], rng=0)
    b = {k: p.copy() for k, p in a.params.items()}
    opt_a, opt_b = sn.Adam(a.params, lr=0.05), sn.Adam(b, lr=0.05)
    calls = []
    opt_a.update = lambda p, g, state: (calls.append(p.shape), sn.Adam.update(opt_a, p, g, state))
    for _ in range(3):
        g = {k: rng.standard_normal(p.shape) for k, p in b.items()}
        opt_a.step(as_model_grads(a, g))
        opt_b.step({k: v.copy() for k, v in g.items()})  # new arrays each step
    assert calls == [a.params.flat.shape] * 3  # one update of the whole vector per step
    for k in b:
        np.testing.assert_array_equal(a.params[k], b[k])
        for name, v in opt_a.state[k].items():  # the per-name state views the flat state
            np.testing.assert_array_equal(v, opt_b.state[k][name])
    opt_a.step({k: rng.standard_normal(p.shape) for k, p in b.items()})  # a plain dict
    assert opt_a.steps == 4


def test_an_optimiser_may_hold_a_subset_of_the_parameters():
    for cls in (sn.MLP, sn.fast.MLP):
        model = cls([1, 4, 2], rng=0)
        frozen = {k: model.params[k].copy() for k in ("W1", "b1")}
        opt = sn.SGD({k: model.params[k] for k in ("W2", "b2")}, lr=0.5)
        before = model.params["W2"].copy()
        _, grads = model.loss_and_grads([0.0, 1.0, 2.0], [0, 1, 1])
        opt.step(grads)  # grads has all four keys; only two are used
        for k, v in frozen.items():
            np.testing.assert_array_equal(model.params[k], v)
        np.testing.assert_allclose(model.params["W2"], before - 0.5 * grads["W2"], rtol=1e-15)


def test_a_rebound_parameter_is_the_one_updated():
    params = {"w": np.zeros(2)}
    opt = sn.SGD(params, lr=1.0)
    params["w"] = np.array([5.0, 5.0])  # a new array in the same dict
    opt.step({"w": np.ones(2)})
    np.testing.assert_array_equal(params["w"], [4.0, 4.0])


def test_lr_is_settable_between_steps():
    params = {"w": np.zeros(2)}
    opt = sn.SGD(params, lr=1.0)
    opt.step({"w": np.ones(2)})
    opt.lr = 0.25
    opt.step({"w": np.ones(2)})
    np.testing.assert_array_equal(params["w"], [-1.25, -1.25])
    with pytest.raises(ValueError, match="lr must be in"):
        opt.lr = -0.25
    opt.lr = 0.0  # a rate of 0 (as PyTorch allows) leaves the parameters as they are
    opt.step({"w": np.ones(2)})
    np.testing.assert_array_equal(params["w"], [-1.25, -1.25])


def test_adam_bias_correction_uses_the_step_count():
    params = {"w": np.zeros(1)}
    opt = sn.Adam(params, lr=1.0, betas=(0.5, 0.5), eps=1e-300)  # 1 + 1e-300 == 1
    for _ in range(3):
        opt.step({"w": np.ones(1)})  # constant gradient: m_hat = v_hat = 1, step = lr
    assert params["w"][0] == pytest.approx(-3.0, rel=1e-14)
    assert opt.steps == 3


@pytest.mark.parametrize("make, match", [
    (lambda p: sn.SGD(p, math.inf), r"lr must be in \[0, inf\); got inf"),
    (lambda p: sn.SGD(p, -0.1), "lr must be in"),
    (lambda p: sn.SGD(p, math.nan), "lr must not be NaN"),
    (lambda p: sn.SGD(p, 0.1, momentum=-0.5), "momentum must be in"),
    (lambda p: sn.SGD(p, 0.1, weight_decay=-1.0), "weight_decay must be in"),
    (lambda p: sn.Adam(p, lr=-1e-3), "lr must be in"),
    (lambda p: sn.Adam(p, betas=(1.0, 0.999)), r"betas\[0\] must be in \[0, 1\); got 1"),
    (lambda p: sn.Adam(p, betas=(0.9, -0.1)), r"betas\[1\] must be in"),
    (lambda p: sn.Adam(p, eps=-1e-8), "eps must be in"),
    (lambda p: sn.Adam(p, eps=0.0), r"eps must be in \(0, inf\); got 0"),
    (lambda p: sn.Adam(p, eps=math.inf), r"eps must be in \(0, inf\); got inf"),
    (lambda p: sn.Adam(p, lr=math.nan), "lr must not be NaN"),
    (lambda p: sn.Adam(p, weight_decay=-0.1), "weight_decay must be in"),
])
def test_bad_hyperparameters_are_rejected(make, match):
    with pytest.raises(ValueError, match=match):
        make({"w": np.zeros(2)})


def test_bad_params_and_grads_are_rejected():
    with pytest.raises(TypeError, match="params must be a non-empty dict"):
        sn.SGD([np.zeros(2)], 0.1)
    with pytest.raises(TypeError, match=r"params\['w'\] must be a floating ndarray"):
        sn.SGD({"w": np.zeros(2, dtype=int)}, 0.1)
    with pytest.raises(TypeError, match="betas must be a pair"):
        sn.Adam({"w": np.zeros(2)}, betas=0.9)
    opt = sn.Adam({"w": np.zeros(2), "b": np.zeros(1)})
    opt.step({"w": np.zeros(2), "b": np.zeros(1)})
    with pytest.raises(ValueError, match=r"grads must have the keys of params .* missing 'w'"):
        opt.step({"v": np.zeros(2), "b": np.zeros(1)})
    with pytest.raises(TypeError, match="grads must be a dict like params; got list"):
        opt.step([np.zeros(2), np.zeros(1)])
    with pytest.raises(ValueError, match=r"grads must have the keys of params .* missing 'b'"):
        opt.step({"w": np.zeros(2)})
    with pytest.raises(ValueError, match=r"grads\['b'\] must have the shape of params\['b'\] \(1,\); got \(2,\)"):
        opt.step({"w": np.zeros(2), "b": np.zeros(2)})
    with pytest.raises(TypeError, match=r"grads\['w'\] must be a real ndarray"):
        opt.step({"w": [0.0, 0.0], "b": np.zeros(1)})


# --- float32 parameters --------------------------------------------------------

OPTIMISERS = [
    ("sgd", lambda p: sn.SGD(p, 0.1), dict(momentum=0.0, weight_decay=0.0)),
    ("sgd momentum+decay", lambda p: sn.SGD(p, 0.1, momentum=0.9, weight_decay=0.01),
     dict(momentum=0.9, weight_decay=0.01)),
    ("adam", lambda p: sn.Adam(p, lr=0.01, betas=(0.8, 0.95), eps=1e-3, weight_decay=0.1),
     dict(beta1=0.8, beta2=0.95, eps=1e-3, weight_decay=0.1)),
]


@pytest.mark.parametrize("layout", ["separate", "flat"])
@pytest.mark.parametrize("name, make, hyper", OPTIMISERS)
def test_float32_parameters_stay_float32_and_follow_the_formulas(layout, name, make, hyper):
    rng = np.random.default_rng(3)
    if layout == "flat":
        params, model = flat_params(rng, np.float32)
    else:
        model = None
        params = {k: p.astype(np.float32) for k, p in separate_params(rng).items()}
    start = {k: p.astype(np.float64) for k, p in params.items()}
    grads = [{k: g.astype(np.float32) for k, g in gs.items()} for gs in two_gradients(rng, params)]
    opt = make(params)
    for g in grads:
        opt.step(as_model_grads(model, g) if model else g)
    assert all(v.dtype == np.float32 for st in opt.state.values() for v in st.values())
    for k, p in params.items():
        assert p.dtype == np.float32
        gs = [g[k].astype(np.float64) for g in grads]
        if name == "adam":
            expected = adam_by_hand(start[k], gs, 0.01, **hyper)
        else:
            expected = sgd_by_hand(start[k], gs, 0.1, **hyper)
        np.testing.assert_allclose(p, expected, rtol=1e-5, atol=1e-6)  # float32 rounding


@pytest.mark.parametrize("name, make, hyper", OPTIMISERS)
def test_float32_steps_compute_in_float32(name, make, hyper):
    """Scalar coefficients must not promote the updates to float64."""
    params, model = flat_params(np.random.default_rng(0), np.float32)
    grads = as_model_grads(model, {k: np.ones(p.shape, np.float32) for k, p in params.items()})
    opt = make(params)
    for _ in range(2):
        opt.step(grads)
    assert params.flat.dtype == np.float32
    assert all(v.dtype == np.float32 for st in opt.state.values() for v in st.values())


@pytest.mark.parametrize("name, make, hyper", OPTIMISERS)
def test_the_optimisers_match_torch_optim(name, make, hyper):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(9)
    w0 = rng.standard_normal((4, 3))
    grads = [rng.standard_normal((4, 3)) for _ in range(6)]
    params = {"w": w0.copy()}
    opt = make(params)
    tw = torch.tensor(w0.copy(), requires_grad=True)
    if name == "adam":
        topt = torch.optim.Adam([tw], lr=0.01, betas=(hyper["beta1"], hyper["beta2"]),
                                eps=hyper["eps"], weight_decay=hyper["weight_decay"])
    else:
        topt = torch.optim.SGD([tw], lr=0.1, momentum=hyper["momentum"],
                               weight_decay=hyper["weight_decay"])
    for g in grads:
        opt.step({"w": g})
        tw.grad = torch.tensor(g)
        topt.step()
    np.testing.assert_allclose(params["w"], tw.detach().numpy(), rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("make", [lambda p: sn.SGD(p, 0.1, momentum=0.9),
                                  lambda p: sn.Adam(p, lr=0.1)])
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_a_non_finite_gradient_stops_the_step_before_any_array_changes(make, bad):
    params = {"w": np.ones(3), "b": np.zeros(2)}
    opt = make(params)
    opt.step({"w": np.ones(3), "b": np.ones(2)})
    before = {k: v.copy() for k, v in params.items()}
    grads = {"w": np.ones(3), "b": np.array([0.5, bad])}
    with pytest.raises(FloatingPointError,
                       match=rf"grads\['b'\] must be finite .*got {bad} at index \(1,\)"):
        opt.step(grads)
    for k in params:  # nothing moved, not even "w", checked first
        np.testing.assert_array_equal(params[k], before[k])
    assert opt.steps == 1


def test_a_non_finite_gradient_of_the_engine_is_named_too():
    model = sn.fast.MLP([1, 4, 2], rng=0)
    opt = sn.Adam(model.params, lr=0.1)
    _, grads = model.loss_and_grads(np.array([0.0, 1.0]), np.array([0, 1]))
    grads["W2"][1, 0] = math.nan
    flat = model.params.flat.copy()
    with pytest.raises(FloatingPointError, match=r"grads\['W2'\] must be finite .*got nan at index \(1, 0\)"):
        opt.step(grads)
    np.testing.assert_array_equal(model.params.flat, flat)
