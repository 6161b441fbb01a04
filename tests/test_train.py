"""The training loop: it learns the posterior, reproducibly, and rejects bad input."""

import json

import numpy as np
import pytest
from _gaussians import two_class_log_joint

import scratchnet as sn


def expected_kl_by_hand(params, mu, sd, priors):
    """E_x KL(P(C|x) || q(C|x)) of a two-layer ReLU net, independently of the library.

    The posterior from the Gaussian densities written out, the network's
    log-probabilities from its weights in float64 (relu(x W1 + b1) W2 + b2, then
    log-softmax by hand), and the integral over x by the trapezoid rule on a grid
    wide enough that P(x) is negligible (< 1e-30) outside it.
    """
    x = np.linspace(min(mu) - 12 * max(sd), max(mu) + 12 * max(sd), 200_001)
    log_joint = two_class_log_joint(x, mu, sd, priors)
    log_px = np.logaddexp(log_joint[:, 0], log_joint[:, 1])
    log_post = log_joint - log_px[:, None]
    W1, b1, W2, b2 = (np.asarray(params[k], dtype=np.float64)
                      for k in ("W1", "b1", "W2", "b2"))
    logits = np.maximum(x[:, None] @ W1 + b1, 0.0) @ W2 + b2
    log_q = logits - np.logaddexp(logits[:, 0], logits[:, 1])[:, None]
    kl = np.sum(np.exp(log_post) * (log_post - log_q), axis=1)
    f = np.exp(log_px) * kl
    return (x[1] - x[0]) * (f.sum() - 0.5 * (f[0] + f[-1]))  # the trapezoid rule


def flat(model):
    """Every parameter of ``model`` in one vector (a copy)."""
    return np.concatenate([p.ravel() for p in model.params.values()])


@pytest.fixture(scope="module")
def task():
    return sn.tasks.separated()


@pytest.fixture(scope="module")
def separated_runs(task):
    """TwoLayerMLP(1, 64, 2), batch 64, lr 0.1, plain SGD, 1,000 steps, seeds 0-4:
    (model, history) each, trained once for the tests below."""
    runs = []
    for seed in range(5):
        model = sn.TwoLayerMLP(1, 64, 2, rng=seed)
        runs.append((model, sn.train(model, task, steps=1000, batch_size=64, lr=0.1,
                                     rng=100 + seed, snapshot_steps=[100, 1000])))
    return runs


@pytest.fixture(scope="module")
def seed_0_by_hand(task, separated_runs):
    """The expected KL of seed 0's trained network, integrated by hand (once: a
    200,001-point grid through the 64 hidden units)."""
    model = separated_runs[0][0]
    return expected_kl_by_hand(model.params, task.means, task.scales, task.priors)


def test_training_on_the_separated_task_reaches_the_posterior(task, separated_runs,
                                                              seed_0_by_hand):
    """TwoLayerMLP(1, 64, 2), batch 64, lr 0.1, plain SGD, 1,000 steps, 5 seeds.

    The expected KL to the Bayes posterior must fall below 0.01 nats in at
    least 4 of 5 seeds, and the mean loss of the last 500 of the 1,000 steps
    must be within 0.02 nats of the Bayes loss H(C|X) in every seed.
    """
    bayes = task.bayes_loss()
    kls, gaps = [], []
    for model, history in separated_runs:
        kls.append(history.snapshot_kl[-1])
        gaps.append(history.losses[-500:].mean() - bayes)
        # the last snapshot is taken after the last update: the final network's
        # expected KL (pinned to the integral by hand below) agrees in every seed
        assert history.snapshot_kl[-1] == pytest.approx(task.expected_kl(model), rel=1e-9)
    assert separated_runs[0][1].snapshot_kl[-1] == pytest.approx(seed_0_by_hand, rel=1e-5)
    assert sum(kl < 0.01 for kl in kls) >= 4, kls
    assert max(abs(g) for g in gaps) < 0.02, gaps


def test_expected_kl_of_a_relu_network_is_the_integral_to_1e_6(task, separated_runs,
                                                               seed_0_by_hand):
    # the network's kinks fall inside quadrature panels: the rule for models must
    # be dense enough that they cost less than 1e-6 (5e-4 to 6e-3 on the coarse rule)
    model = separated_runs[0][0]          # seed 0, trained 1,000 steps
    assert task.expected_kl(model) == pytest.approx(seed_0_by_hand, rel=1e-6)


def test_same_seeds_give_bit_identical_runs_and_different_seeds_differ(task):
    def run(model_seed, data_seed):
        model = sn.MLP([1, 16, 16, 2], rng=model_seed)
        history = sn.train(model, task, steps=50, batch_size=32, lr=1e-2, optimizer="adam", rng=data_seed)
        return flat(model), history.losses

    p1, l1 = run(0, 1)
    p2, l2 = run(0, 1)
    np.testing.assert_array_equal(p1, p2)
    np.testing.assert_array_equal(l1, l2)
    assert not np.array_equal(run(0, 2)[0], p1)
    assert not np.array_equal(run(3, 1)[0], p1)


def test_history_records_losses_snapshots_and_round_trips_json(task):
    model = sn.TwoLayerMLP(1, 8, 2, rng=0)
    eval_x = np.linspace(-2, 5, 11)
    history = sn.train(model, task, steps=30, batch_size=16, lr=0.1, rng=0,
                       snapshot_steps=[30, 10, 10], eval_x=eval_x)
    assert history.losses.shape == (30,) and history.losses.dtype == np.float64
    np.testing.assert_array_equal(history.snapshot_steps, [10, 30])
    assert history.snapshot_probs.shape == (2, 11, 2)
    np.testing.assert_array_equal(history.snapshot_probs[-1], model.predict_proba(eval_x))
    assert history.snapshot_kl.shape == (2,)
    assert history.elapsed > 0 and not history.stopped_early
    d = history.to_dict()
    assert json.loads(json.dumps(d)) == d
    back = sn.History.from_dict(json.loads(json.dumps(d)))
    np.testing.assert_array_equal(back.losses, history.losses)
    np.testing.assert_array_equal(back.snapshot_probs, history.snapshot_probs)
    np.testing.assert_array_equal(back.snapshot_steps, history.snapshot_steps)


class RecordingMLP(sn.fast.MLP):
    """The engine, recording the inputs of every training batch."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.seen = []

    def loss_and_grads(self, x, targets, **kwargs):
        self.seen.append(np.asarray(x)[:, 0].copy())
        return super().loss_and_grads(x, targets, **kwargs)


class PublicOnly:
    """A duck-typed model (the generic path): delegates to the public methods."""

    def __init__(self, model):
        self.model, self.params, self.seen = model, model.params, []

    def loss_and_grads(self, x, targets):
        self.seen.append(np.asarray(x)[:, 0].copy())
        return self.model.loss_and_grads(x, targets)

    def predict_proba(self, x):
        return self.model.predict_proba(x)


@pytest.mark.parametrize("wrap", [False, True])
def test_fixed_dataset_visits_every_sample_once_per_epoch(wrap):
    x = np.arange(10.0)[:, None]
    c = np.arange(10) % 2
    model = PublicOnly(sn.TwoLayerMLP(1, 4, 2, rng=0)) if wrap else RecordingMLP([1, 4, 2], rng=0)
    sn.train(model, (x, c), steps=9, batch_size=4, lr=0.01, rng=0)
    sizes = [len(b) for b in model.seen]
    assert sizes == [4, 4, 2] * 3  # the last partial batch is kept
    epochs = [np.sort(np.concatenate(model.seen[i:i + 3])) for i in (0, 3, 6)]
    for epoch in epochs:
        np.testing.assert_array_equal(epoch, np.arange(10.0))
    orders = [np.concatenate(model.seen[i:i + 3]) for i in (0, 3, 6)]
    assert not np.array_equal(orders[0], orders[1])  # reshuffled every epoch


def test_a_duck_typed_model_the_reference_and_the_engine_train_alike(task):
    models = [sn.TwoLayerMLP(1, 8, 2, rng=0), PublicOnly(sn.TwoLayerMLP(1, 8, 2, rng=0)),
              sn.fast.MLP([1, 8, 2], rng=0)]
    histories = [sn.train(m, task, steps=20, batch_size=8, lr=0.1, rng=5) for m in models]
    for m, h in zip(models[1:], histories[1:]):
        np.testing.assert_allclose(h.losses, histories[0].losses, rtol=1e-12)
        np.testing.assert_allclose(flat(m), flat(models[0]), rtol=1e-12, atol=1e-15)


def test_train_honours_a_subclass_that_overrides_loss_and_grads(task):
    """Trap: an override (here: squared error) must be what trains the model."""
    for base in (sn.MLP, sn.fast.MLP):
        class SquaredError(base):
            calls = 0

            def loss_and_grads(self, x, targets):
                SquaredError.calls += 1
                return super().loss_and_grads(x, targets, loss="mse")

        model = SquaredError([1, 8, 2], rng=0)
        twin = base([1, 8, 2], rng=0)
        history = sn.train(model, task, steps=50, batch_size=16, lr=0.1, rng=3)
        assert SquaredError.calls == 50
        twin_history = sn.train(twin, task, steps=50, batch_size=16, lr=0.1, loss="mse", rng=3)
        np.testing.assert_allclose(history.losses, twin_history.losses, rtol=1e-12)


def test_a_one_output_network_learns_the_posterior_with_binary_cross_entropy(task):
    for cls in (sn.MLP, sn.fast.MLP):
        model = cls([1, 32, 1], rng=0)
        history = sn.train(model, task, steps=1500, batch_size=64, lr=0.1,
                           loss="binary_cross_entropy", rng=1, snapshot_steps=[1500])
        assert history.snapshot_kl[-1] < 0.01, history.snapshot_kl
        x = np.linspace(-1.0, 4.0, 11)
        # the readout is the sigmoid of the one output, written out here
        s = np.maximum(x[:, None] @ model.params["W1"] + model.params["b1"], 0.0)
        s = (s @ model.params["W2"] + model.params["b2"])[:, 0]
        q1 = 1.0 / (1.0 + np.exp(-s))
        np.testing.assert_allclose(model.predict_proba(x), np.stack([1 - q1, q1], 1),
                                   rtol=1e-12)
        # 0.012-0.051 over model seeds 0-2: within 0.06 of the posterior on [-1, 4]
        np.testing.assert_allclose(model.predict_proba(x), task.posterior(x), atol=0.06)
    with pytest.raises(ValueError, match=r"one output per class, not 1 .*loss='binary_cross_entropy'"):
        sn.train(sn.MLP([1, 4, 1]), task, steps=5, batch_size=4, lr=0.1,
                 loss="cross_entropy")


def test_an_optimiser_on_a_subset_trains_only_that_subset(task):
    model = sn.fast.MLP([1, 8, 2], rng=0)
    first = {k: model.params[k].copy() for k in ("W1", "b1")}
    opt = sn.Adam({"W2": model.params["W2"], "b2": model.params["b2"]}, lr=1e-2)
    sn.train(model, task, steps=30, batch_size=16, optimizer=opt, rng=0)
    for k, v in first.items():
        np.testing.assert_array_equal(model.params[k], v)
    assert opt.steps == 30


def test_sampler_callable_draws_inputs_with_posterior_labels(task):
    calls = []

    def sampler(n, rng):
        x = rng.uniform(-3.0, 6.0, n)
        calls.append(n)
        return x, task.sample_labels(x, rng)

    model = sn.TwoLayerMLP(1, 16, 2, rng=0)
    history = sn.train(model, sampler, steps=40, batch_size=32, lr=0.1, rng=0, task=task,
                       snapshot_steps=[40])
    assert calls == [32] * 40
    assert history.snapshot_kl.shape == (1,)
    assert np.all(np.isfinite(history.losses))


def test_callback_can_stop_training(task):
    seen = []

    def callback(step, loss, model):
        seen.append((step, loss))
        return step < 7

    history = sn.train(sn.TwoLayerMLP(1, 8, 2, rng=0), task, steps=100, batch_size=8, lr=0.1,
                       rng=0, callback=callback, snapshot_steps=[5, 50], eval_x=[0.0, 1.0])
    assert [s for s, _ in seen] == list(range(1, 8))
    assert history.steps == 7 and history.stopped_early
    np.testing.assert_array_equal(history.losses, [loss for _, loss in seen])
    np.testing.assert_array_equal(history.snapshot_steps, [5])
    assert history.snapshot_probs.shape == (1, 2, 2) and history.snapshot_kl.shape == (1,)


def test_learning_rate_schedule_is_applied(task):
    model = sn.TwoLayerMLP(1, 8, 2, rng=0)
    opt = sn.SGD(model.params, lr=1.0)
    used, asked = [], []

    def schedule(step):
        asked.append(step)
        return 0.1 / (1 + step)

    sn.train(model, task, steps=5, batch_size=8, optimizer=opt, lr=schedule, rng=0,
             callback=lambda step, loss, m: used.append(opt.lr))
    assert asked == [0, 1, 2, 3, 4]
    assert used == [0.1 / (1 + s) for s in range(5)]

    # with a string optimiser too, the schedule is asked once per step
    asked.clear()
    sn.train(sn.TwoLayerMLP(1, 8, 2, rng=0), task, steps=3, batch_size=8, lr=schedule, rng=0)
    assert asked == [0, 1, 2]

    # a constant schedule is the same run as the constant rate, bit for bit
    a, b = sn.TwoLayerMLP(1, 8, 2, rng=1), sn.TwoLayerMLP(1, 8, 2, rng=1)
    sn.train(a, task, steps=10, batch_size=8, lr=0.05, rng=2)
    sn.train(b, task, steps=10, batch_size=8, lr=lambda step: 0.05, rng=2)
    np.testing.assert_array_equal(flat(a), flat(b))


def test_adam_and_momentum_options(task):
    model = sn.MLP([1, 16, 16, 2], rng=0)
    history = sn.train(model, task, steps=300, batch_size=64, lr=1e-2, optimizer="adam", rng=0,
                       snapshot_steps=[1, 300])
    assert history.snapshot_kl[-1] < history.snapshot_kl[0]
    model = sn.TwoLayerMLP(1, 16, 2, rng=0)
    history = sn.train(model, task, steps=300, batch_size=64, lr=0.02, momentum=0.9, rng=0,
                       snapshot_steps=[1, 300])
    assert history.snapshot_kl[-1] < history.snapshot_kl[0]


def test_progress_prints_a_line_to_stderr(task, capsys):
    sn.train(sn.TwoLayerMLP(1, 4, 2, rng=0), task, steps=20, batch_size=4, lr=0.1, rng=0,
             progress=True)
    err = capsys.readouterr().err
    assert err.startswith("\rstep ") and "20/20" in err and err.endswith("\n")


def test_a_diverging_loss_names_the_step_and_suggests_a_smaller_lr(task):
    # the overflow in the model's own matrix products is shown, not silenced
    with pytest.warns(RuntimeWarning, match="overflow"), \
            pytest.raises(FloatingPointError, match=r"at step \d+ .*smaller learning rate"):
        sn.train(sn.TwoLayerMLP(1, 64, 2, rng=0), task, steps=200, batch_size=64, lr=1e6, rng=0)


def test_nan_inputs_are_reported_as_such():
    x = np.zeros((8, 1))
    x[3] = np.nan
    with pytest.raises(ValueError, match="x must not contain NaN"):
        sn.train(sn.TwoLayerMLP(1, 4, 2, rng=0), (x, np.zeros(8, int)), steps=2, batch_size=4, lr=0.1)

    def sampler(n, rng):
        return np.full(n, np.nan), np.zeros(n, int)

    with pytest.raises(ValueError, match="x from the sampler must not contain NaN"):
        sn.train(sn.TwoLayerMLP(1, 4, 2, rng=0), sampler, steps=2, batch_size=4, lr=0.1)


def test_bad_arguments_are_rejected(task):
    model = sn.TwoLayerMLP(1, 4, 2, rng=0)
    x, c = np.zeros((10, 1)), np.zeros(10, int)
    cases = [
        (dict(data=task, lr=0.0), ValueError, r"lr must be in \(0, inf\); got 0"),
        (dict(data=task, lr=-0.1), ValueError, "lr must be in"),
        (dict(data=task, lr=lambda s: -1.0), ValueError, r"schedule returned a bad learning rate: lr\(0\)"),
        (dict(data=task, lr=0.1, steps=0), ValueError, "steps must be an integer >= 1; got 0"),
        (dict(data=task, lr=0.1, batch_size=0), ValueError, "batch_size must be an integer >= 1; got 0"),
        (dict(data=(x, c), lr=0.1, batch_size=11), ValueError, "batch_size must be at most the dataset size 10; got 11"),
        (dict(data=(x, c[:9]), lr=0.1), ValueError, "x and c must have the same length; got 10 inputs and 9 labels"),
        (dict(data=(x, c + 2), lr=0.1), ValueError, r"labels c from the dataset must be integers in \[0, 2\); got 2"),
        (dict(data=(np.zeros((10, 3)), c), lr=0.1), ValueError, r"x from the dataset must have shape \(n, 1\)"),
        (dict(data=(x, c, c), lr=0.1), ValueError, "a fixed dataset must be a pair"),
        (dict(data=42, lr=0.1), TypeError, "data must be a task"),
        (dict(data=task, lr=0.1, snapshot_steps=[0]), ValueError, "snapshot_steps entries must be an integer >= 1"),
        (dict(data=task, lr=0.1, snapshot_steps=[6]), ValueError, r"snapshot_steps must be in \[1, steps=5\]; got 6"),
        (dict(data=(x, c), lr=0.1, snapshot_steps=[2]), ValueError, "snapshot_steps need eval_x or a task"),
        (dict(data=task, lr=None), TypeError, "lr is required"),
        (dict(data=task, lr=0.1, optimizer="rmsprop"), ValueError, "optimizer must be 'sgd', 'adam'"),
        (dict(data=task, lr=0.1, optimizer="adam", momentum=0.9), ValueError, "momentum applies to optimizer='sgd' only"),
        (dict(data=task, optimizer=sn.SGD({"w": np.zeros(1)}, 0.1)), ValueError, "optimizer must have been built on model.params"),
        (dict(data=task, lr=0.1, optimizer=sn.SGD(model.params, 0.1)), ValueError, "was given with an optimiser instance"),
        (dict(data=task, lr=0.1, eval_x=np.zeros((3, 2)), snapshot_steps=[1]), ValueError, r"eval_x must have shape \(n, 1\)"),
        (dict(data=task, lr=0.1, callback=3), TypeError, "callback must be callable"),
    ]
    for kwargs, error, match in cases:
        kwargs = {"steps": 5, "batch_size": 4, **kwargs}
        with pytest.raises(error, match=match):
            sn.train(model, **kwargs)
    with pytest.raises(ValueError, match="the task has 2 classes but the model has 3 outputs"):
        sn.train(sn.TwoLayerMLP(1, 4, 3), task, steps=5, batch_size=4, lr=0.1)
    with pytest.raises(ValueError, match=r"x from the task must have shape \(n, 2\)"):
        sn.train(sn.TwoLayerMLP(2, 4, 2), task, steps=5, batch_size=4, lr=0.1)
    with pytest.raises(TypeError, match=r"model must have \.params"):
        sn.train(object(), task, steps=5, batch_size=4, lr=0.1)


def test_a_diverging_generic_model_names_the_step(task):
    model = PublicOnly(sn.TwoLayerMLP(1, 64, 2, rng=0))
    with pytest.warns(RuntimeWarning, match="overflow"), \
            pytest.raises(FloatingPointError, match=r"at step \d+ .*smaller learning rate"):
        sn.train(model, task, steps=200, batch_size=64, lr=1e6, rng=0)


def test_labels_out_of_range_from_a_sampler_are_rejected():
    def sampler(n, rng):
        return rng.standard_normal(n), np.full(n, -1)

    with pytest.raises(ValueError, match=r"labels c from the sampler must be integers in \[0, 2\); got -1"):
        sn.train(sn.TwoLayerMLP(1, 4, 2, rng=0), sampler, steps=3, batch_size=4, lr=0.1)


REL_KL32 = 1e-3


@pytest.mark.parametrize("optimizer, lr", [("sgd", 0.1), ("adam", 1e-2)])
def test_a_float32_model_learns_the_posterior_and_stays_float32(task, optimizer, lr):
    model = sn.TwoLayerMLP(1, 64, 2, rng=0, dtype=np.float32)
    eval_x = np.linspace(-2.0, 5.0, 8)
    history = sn.train(model, task, steps=500, batch_size=64, lr=lr, optimizer=optimizer,
                       rng=1, snapshot_steps=[500], eval_x=eval_x)
    assert all(p.dtype == np.float32 for p in model.params.values())
    assert history.losses.dtype == np.float64 and np.isfinite(history.losses).all()
    kl = expected_kl_by_hand(model.params, task.means, task.scales, task.priors)
    assert kl < 0.01, kl  # 0.0007 (SGD) and 0.0046 (Adam) for these seeds
    # the snapshot goes through the float32 network's log q; the integral by hand
    # runs the same weights in float64 (float32 rounding, ~1e-5 relative)
    assert history.snapshot_kl[-1] == pytest.approx(kl, rel=REL_KL32)
    W1, b1, W2, b2 = (model.params[k].astype(np.float64) for k in ("W1", "b1", "W2", "b2"))
    logits = np.maximum(eval_x[:, None] @ W1 + b1, 0.0) @ W2 + b2
    by_hand = np.exp(logits - logits.max(1, keepdims=True))
    np.testing.assert_allclose(history.snapshot_probs[-1], by_hand / by_hand.sum(1, keepdims=True),
                               rtol=1e-5, atol=1e-7)
    # the same run in float64 ends in the same place, up to float32 rounding
    model64 = sn.TwoLayerMLP(1, 64, 2, rng=0)
    sn.train(model64, task, steps=500, batch_size=64, lr=lr, optimizer=optimizer, rng=1)
    np.testing.assert_allclose(model.predict_proba(eval_x), model64.predict_proba(eval_x), atol=1e-3)
    # a fixed float64 dataset works too (batches are converted to float32)
    x, c = task.sample(256, np.random.default_rng(2))
    sn.train(model, (x, c), steps=5, batch_size=64, lr=lr, optimizer=optimizer, rng=3)
    assert all(p.dtype == np.float32 for p in model.params.values())
