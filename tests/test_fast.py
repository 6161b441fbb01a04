"""The engine is pinned to the chapters: every fast piece computes what it replaces."""

import math

import numpy as np
import pytest

import scratchnet as sn
from scratchnet import layers
from scratchnet.fast import FlatParams, kernels

SIZES = [[1, 64, 2], [1, 64, 64, 2], [3, 7, 5, 4]]


@pytest.mark.parametrize("init", sn.mlp.INITS)
@pytest.mark.parametrize("sizes", SIZES)
def test_engine_matches_reference_initial_parameters(sizes, init):
    for dtype in (np.float64, np.float32):
        ref = sn.MLP(sizes, rng=3, init=init, dtype=dtype)
        eng = sn.fast.MLP(sizes, rng=3, init=init, dtype=dtype)
        assert list(eng.params) == list(ref.params)
        for k in ref.params:
            np.testing.assert_array_equal(eng.params[k], ref.params[k])
            assert np.shares_memory(eng.params[k], eng.params.flat)


@pytest.mark.parametrize("activation", ["relu", "tanh"])
@pytest.mark.parametrize("sizes", SIZES)
def test_engine_matches_reference_forward_backward_and_loss(sizes, activation):
    ref = sn.MLP(sizes, activation=activation, rng=0)
    eng = sn.fast.MLP(sizes, activation=activation, rng=0)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((9, sizes[0]))
    targets = rng.integers(0, sizes[-1], 9)
    np.testing.assert_allclose(eng.forward(x), ref.forward(x), rtol=1e-14, atol=1e-15)
    dlogits = rng.standard_normal((9, sizes[-1]))
    g_ref, g_eng = ref.backward(dlogits), eng.backward(dlogits)
    for k in g_ref:
        np.testing.assert_allclose(g_eng[k], g_ref[k], rtol=1e-13, atol=1e-15)
    for loss in ("cross_entropy", "mse", sn.objectives.CrossEntropyLoss(label_smoothing=0.1)):
        l_ref, g_ref = ref.loss_and_grads(x, targets, loss=loss)
        l_eng, g_eng = eng.loss_and_grads(x, targets, loss=loss)
        assert l_eng == pytest.approx(l_ref, rel=1e-14)
        for k in g_ref:
            np.testing.assert_allclose(g_eng[k], g_ref[k], rtol=1e-12, atol=1e-16)
    np.testing.assert_allclose(eng.predict_proba(x), ref.predict_proba(x), rtol=1e-13)


@pytest.mark.parametrize("optimizer, lr, sizes", [("sgd", 0.1, [1, 64, 2]),
                                                  ("adam", 1e-3, [1, 64, 64, 2])])
def test_training_ends_within_1e_10_of_the_reference(optimizer, lr, sizes):
    """300 steps on the same batches (float64): the engine ends where the chapters do
    (measured: 7e-16 apart)."""
    task = sn.tasks.sparse_tail()
    ref, eng = sn.MLP(sizes, rng=0, init="torch"), sn.fast.MLP(sizes, rng=0, init="torch")
    h_ref = sn.train(ref, task, steps=300, batch_size=64, lr=lr, optimizer=optimizer, rng=1)
    h_eng = sn.train(eng, task, steps=300, batch_size=64, lr=lr, optimizer=optimizer, rng=1)
    assert np.max(np.abs(h_eng.losses - h_ref.losses)) < 1e-10
    worst = max(np.max(np.abs(eng.params[k] - ref.params[k])) for k in ref.params)
    assert worst < 1e-10, worst
    assert h_ref.losses[-100:].mean() < h_ref.losses[:100].mean()  # it did train


def test_flat_params_are_views_and_assignment_copies_into_them():
    model = sn.fast.MLP([3, 4, 2], rng=0)
    flat = model.params.flat
    assert flat.shape == (3 * 4 + 4 + 4 * 2 + 2,)
    np.testing.assert_array_equal(
        flat, np.concatenate([model.params[k].ravel() for k in ("W1", "b1", "W2", "b2")]))
    model.params["b1"] = [1.0, 2.0, 3.0, 4.0]  # rebinding writes into the view
    np.testing.assert_array_equal(flat[12:16], [1.0, 2.0, 3.0, 4.0])
    assert model.params.flat is flat
    with pytest.raises(ValueError, match=r"params\['b1'\] must keep its shape \(4,\) .*; got \(3,\)"):
        model.params["b1"] = np.zeros(3)
    with pytest.raises(KeyError, match="cannot add 'W9'"):
        model.params["W9"] = np.zeros(1)
    with pytest.raises(TypeError, match="cannot be deleted"):
        del model.params["W1"]
    with pytest.raises(ValueError, match=r"flat must have shape \(26,\)"):
        FlatParams(np.zeros(5), model.layout)


def test_kernels_match_the_layer_pairs():
    rng = np.random.default_rng(2)
    for d_in in (1, 5):  # one input feature takes the broadcast branch
        x, W, b = rng.standard_normal((6, d_in)), rng.standard_normal((d_in, 3)), rng.standard_normal(3)
        out, cache = layers.linear_forward(x, W, b)
        np.testing.assert_array_equal(kernels.linear_into(x, W, b, np.empty((6, 3))), out)
        dout = rng.standard_normal((6, 3))
        dx, dW, db = layers.linear_backward(dout, cache)
        bufs = np.empty((6, d_in)), np.empty((d_in, 3)), np.empty(3)
        kernels.linear_backward_into(dout, x, W, *bufs)
        for got, want in zip(bufs, (dx, dW, db)):
            np.testing.assert_allclose(got, want, rtol=1e-15, atol=1e-16)
    z = rng.standard_normal((5, 4))
    da = rng.standard_normal((5, 4))
    for name in ("relu", "tanh"):
        forward, backward = getattr(layers, f"{name}_forward"), getattr(layers, f"{name}_backward")
        out, cache = forward(z)
        a = getattr(kernels, f"{name}_into")(z.copy())
        np.testing.assert_array_equal(a, out)
        got = getattr(kernels, f"{name}_backward_into")(da, a, np.empty((5, 4)))
        np.testing.assert_allclose(got, backward(da, cache), rtol=1e-15, atol=0)


@pytest.mark.parametrize("classes", [2, 4])  # two classes: the kernel's own path
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fused_cross_entropy_matches_the_loss_and_its_gradient(dtype, classes):
    rng = np.random.default_rng(6)
    logits = (rng.standard_normal((7, classes)) * 30).astype(dtype)
    targets = rng.integers(0, classes, 7)
    loss, grad = sn.cross_entropy_and_grad(logits, targets)
    work = logits.copy()
    fused = kernels.cross_entropy_and_grad_inplace(work[None], targets[None])[0]
    rtol, atol = (1e-13, 1e-16) if dtype == np.float64 else (1e-5, 1e-7)  # (1 - q)/N cancels
    assert fused == pytest.approx(float(loss), rel=rtol)
    assert work.dtype == dtype
    np.testing.assert_allclose(work, grad, rtol=rtol, atol=atol)


def test_engine_float32_buffers_stay_float32():
    model = sn.fast.MLP([3, 8, 4], rng=0, dtype=np.float32)
    _, grads = model.loss_and_grads(np.ones((6, 3)), [0, 1, 2, 3, 0, 1])
    work = model._work[6]
    assert all(a.dtype == np.float32 for a in work.hidden + work.dhidden + work.dpre)
    assert grads.flat.dtype == np.float32 and model.params.flat.dtype == np.float32


def test_engine_rejects_bad_targets_on_the_fused_path():
    model = sn.fast.MLP([2, 3, 2], rng=0)
    with pytest.raises(ValueError, match=r"targets must be integers in \[0, 2\); got 2"):
        model.loss_and_grads(np.ones((3, 2)), [0, 1, 2])
    with pytest.raises(ValueError, match=r"targets must hold one class index per row of x, shape \(3,\)"):
        model.loss_and_grads(np.ones((3, 2)), [0, 1])


@pytest.mark.parametrize("optimizer, lr, dtype", [("adam", 1e-3, np.float64), ("sgd", 0.1, np.float64),
                                                  ("adam", 1e-3, np.float32)])
def test_ensemble_members_equal_networks_trained_alone(optimizer, lr, dtype):
    """Each member, over 100 steps (10 epochs), ends within 1e-10 of the network
    trained alone with its seed on its batches (float32: 1e-5).  Measured: at most
    2.5e-16 apart in float64, 1.2e-7 in float32 (the bias as a matrix row and the
    two-class loss round differently from the chapters)."""
    from scratchnet.train import epochs

    task, sizes, S = sn.tasks.sparse_tail(), [1, 16, 16, 2], 3
    data = [task.sample(640, np.random.default_rng(100 + s)) for s in range(S)]
    ens = sn.fast.Ensemble(sizes, rngs=list(range(S)), init="torch", dtype=dtype)
    batches = sn.fast.stack_batches([epochs(x.astype(dtype), c, 64, np.random.default_rng(200 + s))
                                     for s, (x, c) in enumerate(data)])
    opt = sn.Adam(ens.params, lr=lr) if optimizer == "adam" else sn.SGD(ens.params, lr=lr)
    losses = sn.fast.train(ens, batches, steps=100, optimizer=opt)
    tol = 1e-10 if dtype == np.float64 else 1e-5
    for s in range(S):
        alone = sn.MLP(sizes, rng=s, init="torch", dtype=dtype)  # the reference chapters
        history = sn.train(alone, data[s], steps=100, batch_size=64, lr=lr, optimizer=optimizer,
                           rng=np.random.default_rng(200 + s))
        np.testing.assert_allclose(losses[:, s], history.losses, rtol=0, atol=tol)
        for k in alone.params:
            np.testing.assert_allclose(ens.params[k][s], alone.params[k], rtol=0, atol=tol)
        x = np.linspace(-4, 7, 9)
        np.testing.assert_allclose(ens.predict_proba(x)[s], alone.predict_proba(x), atol=tol)
        np.testing.assert_allclose(ens.member(s).predict_proba(x), alone.predict_proba(x), atol=tol)


@pytest.mark.parametrize("activation", ["relu", "tanh"])
def test_ensemble_of_several_inputs_and_classes_equals_networks_trained_alone(activation):
    """Two inputs, three classes (the bias rows and the column-wise softmax for M > 2),
    fast.Adam: member s ends within 1e-10 of sn.MLP trained alone by sn.train."""
    from scratchnet.train import epochs

    sizes, S, steps = [2, 6, 5, 3], 3, 100
    rng = np.random.default_rng(7)
    data = [(rng.standard_normal((200, 2)), rng.integers(0, 3, 200)) for _ in range(S)]
    ens = sn.fast.Ensemble(sizes, rngs=[10 + s for s in range(S)], activation=activation)
    batches = sn.fast.stack_batches([epochs(x, c, 32, np.random.default_rng(20 + s))
                                     for s, (x, c) in enumerate(data)])
    losses = sn.fast.train(ens, batches, steps=steps,
                                    optimizer=sn.fast.Adam(ens.params, lr=1e-2))
    for s in range(S):
        alone = sn.MLP(sizes, rng=10 + s, activation=activation)
        history = sn.train(alone, data[s], steps=steps, batch_size=32, lr=1e-2, optimizer="adam",
                           rng=np.random.default_rng(20 + s))
        np.testing.assert_allclose(losses[:, s], history.losses, rtol=0, atol=1e-10)
        for k in alone.params:
            np.testing.assert_allclose(ens.params[k][s], alone.params[k], rtol=0, atol=1e-10)
    assert losses[-50:].mean() < losses[:50].mean()  # it did train


def test_stacked_params_hold_each_member_as_its_own_fast_mlp_does():
    """Member after member, each in fast.MLP's order: member s's slice of the vector
    is the flat vector of the network built alone from its seed."""
    ens = sn.fast.Ensemble([2, 5, 3], rngs=[4, 5, 6], init="torch", dtype=np.float32)
    rows = ens.params.flat.reshape(3, -1)
    for s, seed in enumerate([4, 5, 6]):
        alone = sn.fast.MLP([2, 5, 3], rng=seed, init="torch", dtype=np.float32)
        np.testing.assert_array_equal(rows[s], alone.params.flat)
        for k in alone.params:
            np.testing.assert_array_equal(ens.params[k][s], alone.params[k])
            assert np.shares_memory(ens.params[k], ens.params.flat)
        np.testing.assert_array_equal(ens.member(s).params.flat, alone.params.flat)
    ens.params["b2"] = np.ones((3, 3))  # assignment writes into the stacked vector
    np.testing.assert_array_equal(rows[:, -3:], np.ones((3, 3)))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fast_adam_equals_the_chapters_adam_to_the_last_bit(dtype):
    """fast.Adam on a flat vector against sn.Adam on separate arrays (the chapter's
    update, temporaries and all), with weight decay and a changing rate."""
    rng = np.random.default_rng(0)
    layout = (("W", (3, 4)), ("b", (4,)))
    start = rng.standard_normal(16).astype(dtype)
    ref = {"W": start[:12].reshape(3, 4).copy(), "b": start[12:].copy()}
    flat = FlatParams(start.copy(), layout)
    opt_ref = sn.Adam(ref, lr=0.01, weight_decay=0.1)
    opt_fast = sn.fast.Adam(flat, lr=0.01, weight_decay=0.1)
    for t in range(60):
        g = (rng.standard_normal(16) * 10.0 ** rng.integers(-6, 3)).astype(dtype)
        opt_ref.step({"W": g[:12].reshape(3, 4), "b": g[12:]})
        opt_fast.step(FlatParams(g, layout))
        opt_ref.lr = opt_fast.lr = 0.01 * (1 + t % 3)
    for k in ref:
        assert flat[k].dtype == dtype
        np.testing.assert_array_equal(flat[k], ref[k])
        for moment in ("exp_avg", "exp_avg_sq"):
            np.testing.assert_array_equal(opt_fast.state[k][moment], opt_ref.state[k][moment])


def test_non_finite_gradients_stop_training_naming_the_parameter_and_member():
    """Issue 13: the step whose gradient is not finite raises before the update."""
    ens = sn.fast.Ensemble([1, 8, 2], rngs=[0, 1, 2])
    good = (np.zeros((3, 4, 1)), np.zeros((3, 4), int))
    bad = (good[0].copy(), good[1])
    bad[0][1, 2, 0] = np.inf  # member 1's batch: inf * W1 gives inf and NaN logits
    batches = iter([good, good, bad])
    opt = sn.fast.Adam(ens.params, lr=1e-2)
    with pytest.warns(RuntimeWarning, match="invalid value"), \
            pytest.raises(FloatingPointError, match=r"the gradient of W1 is not finite at step 3 "
                                                    r"\(member 1: \d+ entries\)"):
        sn.fast.train(ens, batches, steps=3, optimizer=opt)  # the model's warning shows
    assert np.isfinite(ens.params.flat).all() and opt.steps == 2  # not updated
    # large but finite gradients whose squares overflow pass (one by one)
    huge = sn.fast.StackedParams(np.full_like(ens.params.flat, 1e300), ens.layout)
    sn.fast.training.check_finite_gradients(huge, 1)
    huge32 = sn.fast.StackedParams(np.full(ens.params.flat.size, 1e30, np.float32), ens.layout)
    sn.fast.training.check_finite_gradients(huge32, 1)


def test_ensemble_rejects_bad_batches():
    ens = sn.fast.Ensemble([1, 4, 2], rngs=[0, 1])
    with pytest.raises(ValueError, match=r"x must hold one batch per member, shape \(2, B, 1\)"):
        ens.loss_and_grads(np.zeros((5, 1)), np.zeros(5, int))
    with pytest.raises(ValueError, match=r"targets must be class indices in \[0, 2\)"):
        ens.loss_and_grads(np.zeros((2, 3)), np.full((2, 3), 2))
    with pytest.raises(TypeError, match="rngs must be a non-empty sequence"):
        sn.fast.Ensemble([1, 4, 2], rngs=3)
    with pytest.raises(IndexError, match=r"member must be in \[0, 2\); got 2"):
        ens.member(2)
    with pytest.raises(ValueError, match=r"datasets must all hold 3 inputs and 3 labels"):
        next(sn.fast.stacked_epochs([(np.zeros((3, 1)), np.zeros(3, int)),
                                     (np.zeros((4, 1)), np.zeros(4, int))], 2,
                                    [np.random.default_rng(0)] * 2))


def test_stacked_epochs_give_each_members_own_epochs():
    from scratchnet.train import epochs

    rng = np.random.default_rng(0)
    data = [(rng.standard_normal((10, 1)), rng.integers(0, 2, 10)) for _ in range(3)]
    one = sn.fast.stacked_epochs(data, 4, [np.random.default_rng(s) for s in range(3)])
    each = sn.fast.stack_batches([epochs(x, c, 4, np.random.default_rng(s))
                                  for s, (x, c) in enumerate(data)])
    for _ in range(7):  # across epochs, the partial batch (of 2) included
        (x1, c1), (x2, c2) = next(one), next(each)
        np.testing.assert_array_equal(x1, x2)
        np.testing.assert_array_equal(c1, c2)


# --- the members' losses and the stacked stream -----------------------------------


@pytest.mark.parametrize("loss", ["cross_entropy", "mse", "hinge",
                                  sn.objectives.MultiMarginLoss(margin=0.5, weight=[1.0, 2.0, 0.5]),
                                  sn.objectives.CrossEntropyLoss(label_smoothing=0.1)],
                         ids=["cross_entropy", "mse", "hinge", "hinge-weighted", "smoothed"])
def test_member_losses_equal_the_loss_object_on_each_member(loss):
    rng = np.random.default_rng(0)
    outputs = rng.normal(scale=2.0, size=(4, 5, 3))
    targets = rng.integers(0, 3, size=(4, 5))
    grads = outputs.copy()
    losses = sn.fast.objectives.member_losses_inplace(grads, targets, loss)
    for s in range(4):
        value, grad = sn.objectives.get_loss(loss).loss_and_grad(outputs[s], targets[s])
        assert losses[s] == pytest.approx(value, rel=1e-13, abs=1e-15)
        np.testing.assert_allclose(grads[s], grad, rtol=1e-13, atol=1e-16)


@pytest.mark.parametrize("loss, optimizer, lr", [("mse", "sgd", 0.1), ("hinge", "sgd", 0.1),
                                                 ("mse", "adam", 1e-3), ("hinge", "adam", 1e-3)])
def test_ensemble_members_trained_with_a_loss_equal_networks_trained_alone(loss, optimizer, lr):
    """Member s equals sn.MLP (and sn.fast.MLP) trained alone with sn.train(loss=...)."""
    task, sizes, S, steps = sn.tasks.sparse_tail(), [1, 16, 2], 3, 100
    ens = sn.fast.Ensemble(sizes, rngs=list(range(S)))
    batches = sn.fast.stacked_stream([task] * S, 32, [np.random.default_rng(50 + s)
                                                      for s in range(S)])
    opt = sn.Adam(ens.params, lr=lr) if optimizer == "adam" else sn.SGD(ens.params, lr=lr)
    losses = sn.fast.train(ens, batches, steps=steps, optimizer=opt, loss=loss)
    x = np.linspace(-4, 7, 9)
    for s in range(S):
        for alone in (sn.MLP(sizes, rng=s), sn.fast.MLP(sizes, rng=s)):
            history = sn.train(alone, task, steps=steps, batch_size=32, lr=lr, loss=loss,
                               optimizer=optimizer, rng=np.random.default_rng(50 + s))
            np.testing.assert_allclose(losses[:, s], history.losses, rtol=0, atol=1e-10)
            for k in alone.params:
                np.testing.assert_allclose(ens.params[k][s], alone.params[k], rtol=0, atol=1e-10)
            np.testing.assert_allclose(ens.forward(x)[s], alone.forward(x), rtol=0, atol=1e-10)


def test_stacked_stream_draws_what_task_sample_draws():
    from scratchnet.experiments import family_task

    tasks = [sn.tasks.separated(), family_task(2.5, 1.5, prior1=0.3),
             sn.GaussianClasses([[0.0], [3.0]], [[[4.0]], [[1.0]]])]
    rngs = lambda: [np.random.default_rng(10 + s) for s in range(3)]  # noqa: E731
    each = sn.fast.stack_batches([iter(lambda t=t, r=r: t.sample(8, r), None)
                                  for t, r in zip(tasks, rngs())])
    one = sn.fast.stacked_stream(tasks, 8, rngs())
    for _ in range(5):
        (x1, c1), (x2, c2) = next(one), next(each)
        np.testing.assert_array_equal(x1, x2)
        np.testing.assert_array_equal(c1, c2)
    three = [sn.GaussianClasses([0.0, 1.0, 2.0], [1.0, 1.0, 1.0], [0.2, 0.3, 0.5])] * 2
    x, c = next(sn.fast.stacked_stream(three, 6, [np.random.default_rng(s) for s in (1, 2)]))
    x_ref, c_ref = three[1].sample(6, np.random.default_rng(2))
    np.testing.assert_array_equal(c[1], c_ref)
    np.testing.assert_array_equal(x[1, :, 0], x_ref[:, 0])
    with pytest.raises(ValueError, match="tasks and rngs must be non-empty and of one length"):
        sn.fast.stacked_stream(tasks, 8, rngs()[:2]).__next__()
    with pytest.raises(ValueError, match="the same number of classes"):
        sn.fast.stacked_stream([tasks[0], three[0]], 8, rngs()[:2]).__next__()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_two_class_kernel_equals_the_closed_form_over_the_whole_range(dtype):
    # Closed forms, each in its stable branch (Python floats): the loss log(1 + e^d)
    # and the gradient +-sigma(d) / B, d = f_other - f_target, from a target 1e4
    # ahead (sigma = e^-1e4 = 0) to 1e4 behind, both targets.
    margins = np.array([-1e4, -700.0, -60.0, -20.0, -1.0, 0.0, 1e-3, 3.0, 40.0, 1e4])
    targets = np.arange(margins.size) % 2
    logits = np.zeros((1, margins.size, 2))
    logits[0, np.arange(margins.size), 1 - targets] = margins
    exact_loss = np.mean([d + math.log1p(math.exp(-d)) if d > 0 else math.log1p(math.exp(d))
                          for d in margins])
    sigma = np.array([1 / (1 + math.exp(-d)) if d > 0 else math.exp(d) / (1 + math.exp(d))
                      for d in margins])
    exact_grad = np.where(np.arange(2) == targets[:, None], -sigma[:, None], sigma[:, None])
    work = logits.astype(dtype)
    loss = kernels.cross_entropy_and_grad_inplace(work, targets[None])[0]
    rtol = 1e-15 if dtype == np.float64 else 1e-6
    assert loss == pytest.approx(exact_loss, rel=rtol, abs=0)
    assert work.dtype == dtype
    tiny = np.finfo(dtype).tiny  # e^-700 is below float32's range: 0 there
    np.testing.assert_allclose(work[0], exact_grad / margins.size, rtol=8 * rtol,
                               atol=tiny)


def test_the_engine_keeps_the_dominant_term_to_relative_precision():
    # Closed forms: log(1 + e^-40) = log1p(e^-40); with three classes
    # log(1 + 2 e^-20) = log1p(2 e^-20).  Summing 1 + tiny before the log rounds to 0.
    logits = np.array([[[40.0, 0.0]]])
    loss = kernels.cross_entropy_and_grad_inplace(logits, np.array([[0]]))[0]
    assert loss == pytest.approx(math.log1p(math.exp(-40)), rel=1e-15, abs=0)
    logits = np.array([[[0.0, -20.0, -20.0]]])
    loss = kernels.cross_entropy_and_grad_inplace(logits, np.array([[0]]))[0]
    assert loss == pytest.approx(math.log1p(2 * math.exp(-20)), rel=1e-15, abs=0)


# --- the training step's shortcuts (issue 12: the default run and the seed study) ---


def test_relu_kernels_with_a_kept_mask_match_the_layer_pair():
    """relu_mask_into keeps 1[z > 0] in z's dtype; the backward pass multiplies by it."""
    rng = np.random.default_rng(3)
    for dtype in (np.float64, np.float32):
        z = rng.standard_normal((4, 6)).astype(dtype)
        z[0, :2] = 0.0  # the kink itself: inactive, as in the chapter
        da = rng.standard_normal((4, 6)).astype(dtype)
        out, cache = layers.relu_forward(z)
        mask, flags = np.empty_like(z), np.empty(z.shape, bool)
        a = kernels.relu_mask_into(z.copy(), mask, flags)
        np.testing.assert_array_equal(a, out)
        np.testing.assert_array_equal(mask, (z > 0).astype(dtype))
        assert a.dtype == mask.dtype == dtype
        got = kernels.relu_backward_mask_into(da, mask, np.empty_like(da))
        np.testing.assert_array_equal(got, layers.relu_backward(da, cache))
    nan = kernels.relu_mask_into(np.array([np.nan, -1.0]), np.empty(2), np.empty(2, bool))
    assert np.isnan(nan[0]) and nan[1] == 0.0  # a NaN is not hidden


def test_stacked_epochs_keep_labels_small_and_inputs_stacked():
    data = [(np.zeros((6, 1), np.float32), np.array([0, 1, 1, 0, 1, 0]))] * 2
    rngs = [np.random.default_rng(s) for s in (0, 1)]
    x, c = next(sn.fast.stacked_epochs(data, 4, rngs))
    assert x.shape == (2, 4, 1) and x.dtype == np.float32
    assert c.dtype == np.int8   # one byte per label
    wide = [(np.zeros((3, 1)), np.array([0, 300, 1]))]
    assert next(sn.fast.stacked_epochs(wide, 3, rngs[:1]))[1].dtype == np.int16
    with pytest.raises(ValueError, match="the labels must be class indices"):
        sn.fast.stacked_epochs([(np.zeros((3, 1)), np.zeros(3))], 2, rngs[:1])
    flat = sn.fast.stacked_epochs([(np.zeros(6), np.arange(6) % 2)] * 2, 4, rngs)
    assert next(flat)[0].shape == (2, 4, 1)   # (n,) inputs of one feature


def test_every_batch_is_checked_at_every_step():
    """float64 inputs for a float32 ensemble, and a class out of range: the
    per-step check converts and rejects."""
    ens = sn.fast.Ensemble([1, 4, 2], rngs=[0, 1], dtype=np.float32)
    data = [(np.linspace(-1, 1, 8)[:, None], np.arange(8) % 2)] * 2
    rngs = [np.random.default_rng(s) for s in (0, 1)]
    losses = sn.fast.train(ens, sn.fast.stacked_epochs(data, 4, rngs), steps=3,
                                    optimizer=sn.fast.Adam(ens.params))
    assert losses.shape == (3, 2) and ens.params.flat.dtype == np.float32
    bad = iter([(np.zeros((2, 4, 1)), np.full((2, 4), 2))])
    with pytest.raises(ValueError, match=r"targets must be class indices in \[0, 2\)"):
        sn.fast.train(ens, bad, steps=1, optimizer=sn.fast.Adam(ens.params))


def test_a_non_finite_loss_is_reported_with_its_step():
    """Squared error that overflows float32 while its gradient stays finite: the
    parameters are not spoilt, and the bulk check names the first bad step."""
    ens = sn.fast.Ensemble([1, 2], rngs=[0], dtype=np.float32)
    ens.params["W1"] = np.full((1, 1, 2), 1e20, np.float32)
    ens.params["b1"] = np.zeros((1, 2), np.float32)
    x = np.ones((1, 4, 1), np.float32)
    batches = iter([(x * 1e-30, np.zeros((1, 4), int))] * 5 + [(x, np.zeros((1, 4), int))] * 5)
    with pytest.raises(FloatingPointError, match=r"loss became non-finite at step 6:"):
        sn.fast.train(ens, batches, steps=10, optimizer=sn.SGD(ens.params, lr=0.0),
                               loss="mse")


def test_the_optimizer_skips_its_check_only_when_asked():
    params = {"w": np.array([1.0])}
    opt = sn.SGD(params, lr=0.5)
    with pytest.raises(FloatingPointError):
        opt.step({"w": np.array([np.nan])})
    assert params["w"][0] == 1.0 and opt.steps == 0
    opt.step({"w": np.array([np.nan])}, check_finite=False)  # the caller checked
    assert np.isnan(params["w"][0]) and opt.steps == 1


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-12), (np.float32, 1e-5)])
def test_predictions_in_blocks_match_the_chapter(dtype, rtol):
    """More rows than fast.mlp.PREDICT_ROWS go through the layers in equal blocks
    (here 3 of 1,667 rows): every row's probabilities are the chapter MLP's."""
    from scratchnet.fast.mlp import PREDICT_ROWS

    x = np.random.default_rng(3).normal(0.0, 3.0, size=(2 * PREDICT_ROWS + 905, 1))
    ref = sn.MLP([1, 16, 16, 3], rng=5, init="torch", dtype=dtype)
    eng = sn.fast.MLP([1, 16, 16, 3], rng=5, init="torch", dtype=dtype)
    np.testing.assert_allclose(eng.predict_proba(x), ref.predict_proba(x), rtol=rtol,
                               atol=0)
    np.testing.assert_allclose(eng.predict_log_proba(x), ref.predict_log_proba(x),
                               rtol=rtol, atol=0)
