"""SGD and Adam against independent results.

Closed forms: plain SGD on a quadratic is a geometric sequence; with momentum
it is a second-order linear recurrence solved by its two characteristic
roots; weight decay adds its coefficient to the curvature; Adam's first step
is ``lr * g / (|g| + eps)`` entry by entry (the bias corrections cancel the
moments' factors), and so is every step under a constant gradient.  Values
worked out by hand on paper.  ``torch.optim`` where PyTorch is installed,
within the rounding the two are measured to differ by (see ``assert_near``).
Each closed form runs on both parameter layouts (a dict of separate arrays,
the engine's views of one flat vector) and in float64 and float32.
"""

import math

import numpy as np
import pytest

import scratchnet as sn

LAYOUTS = ["separate", "flat"]
DTYPES = [np.float64, np.float32]


def separate_params(rng, dtype=np.float64):
    """A plain dict of independent arrays (the per-array update path)."""
    return {"W": rng.standard_normal((3, 2)).astype(dtype),
            "b": rng.standard_normal(2).astype(dtype)}


def flat_params(rng, dtype=np.float64):
    """The engine's parameters: views of one flat vector (the whole-vector path)."""
    model = sn.fast.MLP([3, 2], rng=0, dtype=dtype)
    model.params.flat[:] = rng.standard_normal(model.params.flat.size)
    return model.params, model


def make_params(layout, rng, dtype=np.float64):
    if layout == "flat":
        return flat_params(rng, dtype)
    return separate_params(rng, dtype), None


def as_model_grads(model, grads):
    """The gradients as the engine's backward returns them: views of one vector."""
    if model is None:
        return grads
    flat = sn.fast.FlatParams(np.empty_like(model.params.flat), model.layout)
    for k, g in grads.items():
        flat[k] = g
    return flat


def assert_near(actual, expected, ulps):
    """Every entry within ``ulps`` units in the last place of the largest entry.

    The optimisers' rounding differs from another order of the same
    arithmetic (a closed form, PyTorch's fused kernels) by a few such units,
    and entries that pass near zero have no relative accuracy to offer.
    """
    actual = np.asarray(actual)
    eps = np.finfo(actual.dtype).eps
    scale = np.max(np.abs(expected))
    np.testing.assert_allclose(actual, expected, rtol=0, atol=ulps * eps * scale)


def curvatures(params, low=0.1, high=12.0):
    """Diagonal curvatures a of the quadratic loss sum(a * w**2) / 2, per array:
    from ``low`` to ``high`` in every array, evenly on a log scale."""
    return {k: np.geomspace(low, high, p.size).reshape(p.shape) for k, p in params.items()}


def run_on_quadratic(opt, params, model, a, steps):
    """``steps`` updates with the gradient of the quadratic, a * w."""
    for _ in range(steps):
        grads = {k: (a[k] * params[k]).astype(params[k].dtype) for k in params}
        opt.step(as_model_grads(model, grads))


# --- SGD: closed forms ----------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_plain_sgd_on_a_quadratic_is_geometric(layout, dtype):
    """w_t = (1 - lr a)^t w_0."""
    params, model = make_params(layout, np.random.default_rng(0), dtype)
    w0 = {k: p.astype(np.float64) for k, p in params.items()}
    arrays = {k: id(p) for k, p in params.items()}
    a, lr, t = curvatures(params), 0.1, 25
    run_on_quadratic(sn.SGD(params, lr), params, model, a, t)
    for k, p in params.items():
        assert p.dtype == dtype and id(p) == arrays[k]  # updated in place
        assert_near(p, (1 - lr * a[k]) ** t * w0[k], ulps=2 * t)


def momentum_closed_form(w0, a, lr, mu, t):
    """w_t of heavy-ball SGD on a w^2 / 2, from its characteristic roots.

    With b_0 = 0: w_{t+1} = (1 + mu - lr a) w_t - mu w_{t-1} and w_{-1} = w_0,
    so w_t = c1 r1^t + c2 r2^t with r1, r2 the roots of
    r^2 - (1 + mu - lr a) r + mu = 0, complex for the oscillating curvatures.
    """
    trace = (1 + mu - lr * a).astype(complex)
    root = np.sqrt(trace**2 - 4 * mu)
    r1, r2 = (trace + root) / 2, (trace - root) / 2
    w1 = (1 - lr * a) * w0
    c1 = (w1 - r2 * w0) / (r1 - r2)
    c2 = w0 - c1
    return (c1 * r1**t + c2 * r2**t).real


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_sgd_momentum_on_a_quadratic_follows_the_two_root_closed_form(layout, dtype):
    params, model = make_params(layout, np.random.default_rng(1), dtype)
    w0 = {k: p.astype(np.float64) for k, p in params.items()}
    a, lr, mu, t = curvatures(params), 0.1, 0.5, 30  # real roots for a < 0.86
    assert all((1 + mu - lr * ak.min()) ** 2 > 4 * mu for ak in a.values())  # real
    assert all((1 + mu - lr * ak.max()) ** 2 < 4 * mu for ak in a.values())  # complex
    run_on_quadratic(sn.SGD(params, lr, momentum=mu), params, model, a, t)
    for k, p in params.items():
        assert_near(p, momentum_closed_form(w0[k], a[k], lr, mu, t), ulps=2 * t)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("momentum", [0.0, 0.5])
def test_sgd_weight_decay_adds_lambda_to_the_curvature(momentum, dtype):
    params, model = make_params("separate", np.random.default_rng(2), dtype)
    w0 = {k: p.astype(np.float64) for k, p in params.items()}
    a, lr, decay, t = curvatures(params), 0.1, 0.3, 20
    opt = sn.SGD(params, lr, momentum=momentum, weight_decay=decay)
    run_on_quadratic(opt, params, model, a, t)
    for k, p in params.items():
        expected = momentum_closed_form(w0[k], a[k] + decay, lr, momentum, t)
        assert_near(p, expected, ulps=2 * t)


def test_weight_decay_alone_shrinks_geometrically():
    params = {"w": np.array([3.0, -1.0, 0.25])}
    opt = sn.SGD(params, lr=0.5, weight_decay=0.2)
    for _ in range(10):
        opt.step({"w": np.zeros(3)})
    assert_near(params["w"], 0.9**10 * np.array([3.0, -1.0, 0.25]), ulps=40)


def test_sgd_steps_worked_by_hand():
    params = {"w": np.array([1.0, -2.0, 0.5])}
    sn.SGD(params, lr=0.5).step({"w": np.array([2.0, 2.0, -1.0])})
    np.testing.assert_array_equal(params["w"], [0.0, -3.0, 1.0])
    # momentum 0.9, lr 0.1, gradient 1 three times: b = 1, 1.9, 2.71
    params = {"w": np.array([1.0])}
    opt = sn.SGD(params, lr=0.1, momentum=0.9)
    seen = []
    for _ in range(3):
        opt.step({"w": np.array([1.0])})
        seen.append(params["w"][0])
    np.testing.assert_allclose(seen, [0.9, 0.71, 0.439], rtol=4e-16)


# --- Adam: closed forms -----------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_adam_first_step_is_lr_g_over_abs_g_plus_eps(layout, dtype):
    """m_1 = (1 - b1) g and v_1 = (1 - b2) g^2: the bias corrections cancel."""
    params, model = make_params(layout, np.random.default_rng(3), dtype)
    for p in params.values():
        p[...] = 0
    rng = np.random.default_rng(4)
    grads = {k: (rng.standard_normal(p.shape) * 10.0 ** rng.integers(-4, 3, p.shape)
                 ).astype(dtype) for k, p in params.items()}
    lr, eps = 0.01, 1e-3  # eps comparable to the smallest |g|
    sn.Adam(params, lr=lr, betas=(0.8, 0.95), eps=eps).step(as_model_grads(model, grads))
    for k, p in params.items():
        g = grads[k].astype(np.float64)
        np.testing.assert_array_max_ulp(p, (-lr * g / (np.abs(g) + eps)).astype(dtype),
                                        maxulp=4)


@pytest.mark.parametrize("dtype", DTYPES)
def test_adam_first_step_with_weight_decay_uses_g_plus_lambda_w(dtype):
    rng = np.random.default_rng(5)
    w0, g = rng.standard_normal(6).astype(dtype), rng.standard_normal(6).astype(dtype)
    params = {"w": w0.copy()}
    lr, eps, decay = 0.01, 1e-3, 0.5
    sn.Adam(params, lr=lr, eps=eps, weight_decay=decay).step({"w": g})
    decayed = g.astype(np.float64) + decay * w0.astype(np.float64)
    assert_near(params["w"], w0 - lr * decayed / (np.abs(decayed) + eps), ulps=4)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_adam_under_a_constant_gradient_moves_the_same_amount_each_step(layout, dtype):
    """m_t = (1 - b1^t) g and v_t = (1 - b2^t) g^2: every step is lr g / (|g| + eps)."""
    params, model = make_params(layout, np.random.default_rng(6), dtype)
    w0 = {k: p.astype(np.float64) for k, p in params.items()}
    rng = np.random.default_rng(7)
    grads = {k: rng.standard_normal(p.shape).astype(dtype) for k, p in params.items()}
    lr, eps, t = 0.01, 1e-2, 50
    opt = sn.Adam(params, lr=lr, betas=(0.9, 0.999), eps=eps)
    for _ in range(t):
        opt.step(as_model_grads(model, grads))
    for k, p in params.items():
        g = grads[k].astype(np.float64)
        assert_near(p, w0[k] - t * lr * g / (np.abs(g) + eps), ulps=t)


def test_adam_steps_worked_by_hand():
    """betas (0.5, 0.75), lr 1, gradients 1 then -1, from 0.

    Step 1: m = 1/2, v = 1/4, m_hat = 1, v_hat = 1: w = -1.
    Step 2: m = 1/4 - 1/2 = -1/4, v = 3/16 + 1/4 = 7/16; m_hat = -1/4 / (3/4)
    = -1/3, v_hat = 7/16 / (7/16) = 1: w = -1 + 1/3 = -2/3.
    """
    params = {"w": np.zeros(1)}
    opt = sn.Adam(params, lr=1.0, betas=(0.5, 0.75), eps=1e-300)  # 1 + 1e-300 == 1
    opt.step({"w": np.ones(1)})
    assert params["w"][0] == -1.0
    opt.step({"w": -np.ones(1)})
    np.testing.assert_array_max_ulp(params["w"], np.array([-2 / 3]), maxulp=2)
    assert opt.steps == 2


def test_adam_update_before_any_step_raises_instead_of_dividing_by_zero():
    """t = 0 has no bias correction (1 - beta^0 = 0); step() counts the step first."""
    w = np.ones(2)
    opt = sn.Adam({"w": w}, lr=0.1)
    with pytest.raises(RuntimeError, match=r"Adam.update needs the step count t = steps "
                                           r">= 1 .*got steps=0: call step\(grads\)"):
        opt.update(w, np.ones(2), opt.state["w"])
    np.testing.assert_array_equal(w, [1.0, 1.0])  # nothing moved
    opt.step({"w": np.ones(2)})  # the same first step through step()
    assert_near(w, 1 - 0.1 / (1 + 1e-8) * np.ones(2), ulps=2)
    fresh = np.ones(2)  # a direct call with the count set is the step it says
    opt2 = sn.Adam({"w": fresh}, lr=0.1)
    opt2.steps = 1
    opt2.update(fresh, np.ones(2), opt2.state["w"])
    np.testing.assert_array_equal(fresh, w)


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


# --- float32 parameters ----------------------------------------------------------

OPTIMISERS = [
    ("sgd", lambda p: sn.SGD(p, 0.1), dict(momentum=0.0, weight_decay=0.0)),
    ("sgd momentum+decay", lambda p: sn.SGD(p, 0.1, momentum=0.9, weight_decay=0.01),
     dict(momentum=0.9, weight_decay=0.01)),
    ("adam", lambda p: sn.Adam(p, lr=0.01, betas=(0.8, 0.95), eps=1e-3, weight_decay=0.1),
     dict(beta1=0.8, beta2=0.95, eps=1e-3, weight_decay=0.1)),
]


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


# --- PyTorch ------------------------------------------------------------------------

TORCH_CASES = [
    ("SGD", dict(lr=0.01)),
    ("SGD", dict(lr=0.01, momentum=0.9)),
    ("SGD", dict(lr=0.01, momentum=0.9, weight_decay=0.01)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.95), eps=1e-3, weight_decay=0.1)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name, options", TORCH_CASES)
@pytest.mark.parametrize("steps, ulps", [(1, 1), (200, 4)])
def test_the_optimisers_match_torch_optim_to_rounding(name, options, dtype, steps, ulps):
    """Not bit for bit: PyTorch's kernels round differently.

    Measured on 5 seeds of a (50, 40) array: after 1 step 1-2% of the entries
    differ (at most 0.65 ulp of the largest entry), after 200 steps 47-64% of
    them (at most 2.1 ulp of the largest entry), in float64 and float32.
    """
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(9)
    w0 = rng.standard_normal((50, 40)).astype(dtype)
    params = {"w": w0.copy()}
    opt = getattr(sn, name)(params, **options)
    tw = torch.tensor(w0.copy(), requires_grad=True)
    topt = getattr(torch.optim, name)([tw], **options)
    for _ in range(steps):
        g = rng.standard_normal(w0.shape).astype(dtype)
        opt.step({"w": g})
        tw.grad = torch.tensor(g)
        topt.step()
    expected = tw.detach().numpy()
    assert params["w"].dtype == expected.dtype == dtype
    assert_near(params["w"], expected, ulps=ulps)


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
