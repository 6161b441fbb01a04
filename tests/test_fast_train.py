"""``fast.train``, the engine's one loop, is the chapter's loop of ``train_step``.

On a ``fast.MLP`` it is compared with a plain loop of ``sn.train_step`` on the
chapter's ``sn.MLP`` (the same batches, the same optimiser and schedule); on
an ensemble, member ``s`` with the ``fast.MLP`` trained alone on its batches.
"""

import itertools

import numpy as np
import pytest

import scratchnet as sn
from scratchnet import fast
from scratchnet.objectives import CrossEntropyLoss
from scratchnet.train import epochs


def _batches(n=640, d=1, classes=2, batch_size=64, seed=0, steps=300):
    """``steps`` batches of one fixed sample, as a list (replayed by both loops)."""
    rng = np.random.default_rng(seed)
    x, c = rng.standard_normal((n, d)), rng.integers(0, classes, n)
    x[:, 0] += 2.0 * c  # something to learn
    return list(itertools.islice(epochs(x, c, batch_size, rng), steps))


def _chapter_loop(model, optimizer, batches, schedule=None, loss=None):
    """The chapter's loop: ``lr(step)`` set, then ``sn.train_step`` on each batch."""
    losses = []
    for step, (x, t) in enumerate(batches):
        if schedule is not None:
            optimizer.lr = schedule(step)
        losses.append(sn.train_step(model, optimizer, x, t, loss=loss))
    return np.array(losses)


def _assert_same(engine, chapter, losses, chapter_losses, tol):
    np.testing.assert_allclose(losses, chapter_losses, rtol=0, atol=tol)
    assert list(engine.params) == list(chapter.params)
    for k in chapter.params:
        np.testing.assert_allclose(engine.params[k], chapter.params[k], rtol=0, atol=tol)


OPTIMIZERS = {
    "sgd-momentum": (lambda p: sn.SGD(p, lr=0.05, momentum=0.9), None),
    "adam": (lambda p: sn.Adam(p, lr=1e-2), None),
    "adam-cosine": (lambda p: sn.Adam(p, lr=1e-2), sn.CosineAnnealingLR(1e-2, T_max=300)),
    "sgd-steps": (lambda p: sn.SGD(p, lr=0.1, momentum=0.5), sn.StepLR(0.1, 100, 0.5)),
}


@pytest.mark.parametrize("activation", ["relu", "tanh"])
@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_fast_train_on_a_fast_mlp_equals_the_chapters_train_step_loop(name, activation):
    """300 steps: losses and parameters within 1e-10 of ``sn.train_step`` on ``sn.MLP``."""
    make, schedule = OPTIMIZERS[name]
    sizes, batches = [2, 16, 16, 3], _batches(d=2, classes=3)
    engine = fast.MLP(sizes, rng=4, activation=activation, init="torch")
    chapter = sn.MLP(sizes, rng=4, activation=activation, init="torch")
    losses = fast.train(engine, iter(batches), steps=300, optimizer=make(engine.params),
                        lr=schedule)
    expected = _chapter_loop(chapter, make(chapter.params), batches, schedule)
    assert losses.shape == (300,) and losses.dtype == np.float64
    _assert_same(engine, chapter, losses, expected, 1e-10)
    assert losses[-50:].mean() < losses[:50].mean()  # it did train


def test_fast_train_keeps_float32_and_follows_the_float32_chapter():
    """float64 batches into a float32 network: converted by ``check_batch``, the
    parameters stay float32, and 300 steps end within 1e-5 of the float32 chapter
    (measured: the losses 6e-8 apart, the fused loss summing in another order)."""
    batches = _batches()
    engine = fast.MLP([1, 16, 2], rng=0, dtype=np.float32)
    chapter = sn.MLP([1, 16, 2], rng=0, dtype=np.float32)
    x, _ = engine.check_batch(*batches[0])
    assert x.dtype == np.float32 and x.shape == (64, 1)
    losses = fast.train(engine, iter(batches), steps=300,
                        optimizer=sn.Adam(engine.params, lr=1e-2))
    expected = _chapter_loop(chapter, sn.Adam(chapter.params, lr=1e-2), batches)
    assert engine.params.flat.dtype == np.float32
    assert all(engine.params[k].dtype == np.float32 for k in engine.params)
    _assert_same(engine, chapter, losses, expected, 1e-5)


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_a_fast_mlp_trained_by_fast_train_equals_the_member_of_an_ensemble(optimizer):
    """The same loop on both kinds of model: member s of an ensemble, and the
    fast.MLP of its seed trained on its batches, end together."""
    S, steps, sizes = 3, 200, [1, 8, 8, 2]
    per_member = [_batches(seed=10 + s, steps=steps) for s in range(S)]
    ens = fast.Ensemble(sizes, rngs=[20 + s for s in range(S)])
    make = (lambda p: sn.SGD(p, lr=0.1, momentum=0.9)) if optimizer == "sgd" else (
        lambda p: sn.Adam(p, lr=1e-2))
    ens_losses = fast.train(ens, fast.stack_batches([iter(b) for b in per_member]),
                            steps=steps, optimizer=make(ens.params))
    assert ens_losses.shape == (steps, S)
    for s in range(S):
        alone = fast.MLP(sizes, rng=20 + s)
        losses = fast.train(alone, iter(per_member[s]), steps=steps,
                            optimizer=make(alone.params))
        np.testing.assert_allclose(ens_losses[:, s], losses, rtol=0, atol=1e-10)
        for k in alone.params:
            np.testing.assert_allclose(ens.params[k][s], alone.params[k], rtol=0, atol=1e-10)


def _probabilities(batches, classes, seed=3):
    """The same inputs with random distributions over the classes as targets."""
    rng = np.random.default_rng(seed)
    return [(x, rng.dirichlet(np.ones(classes), size=len(x))) for x, _ in batches]


LOSSES = {  # name: (sizes, loss, targets of the batches)
    "mse": ([2, 8, 3], "mse", lambda b: b),
    "hinge": ([2, 8, 3], "hinge", lambda b: b),
    "hinge-margin-weight": ([2, 8, 3], sn.objectives.MultiMarginLoss(
        margin=0.5, weight=[1.0, 2.0, 0.5]), lambda b: b),
    "binary-cross-entropy": ([2, 8, 1], "binary_cross_entropy",
                             lambda b: [(x, t % 2) for x, t in b]),
    # one output with squared error (issue 29): the target is the class, 0 or 1
    "mse-one-output": ([2, 8, 1], "mse", lambda b: [(x, t % 2) for x, t in b]),
    "bce-pos_weight": ([2, 8, 1], sn.objectives.BCEWithLogitsLoss(pos_weight=3.0),
                       lambda b: [(x, t % 2) for x, t in b]),
    "probability-targets": ([2, 8, 3], None, lambda b: _probabilities(b, 3)),
    "smoothed": ([2, 8, 3], CrossEntropyLoss(label_smoothing=0.1), lambda b: b),
}


@pytest.mark.parametrize("name", list(LOSSES))
def test_other_losses_train_as_the_chapters_train_step(name):
    """Every other loss goes through the loss object, as in the chapter: 100 steps
    within 1e-10, and the loss recorded on the model."""
    sizes, loss, targets = LOSSES[name]
    batches = targets(_batches(d=2, classes=3, steps=100))
    engine, chapter = fast.MLP(sizes, rng=1), sn.MLP(sizes, rng=1)
    losses = fast.train(engine, iter(batches), steps=100, loss=loss,
                        optimizer=sn.SGD(engine.params, lr=0.05, momentum=0.9))
    expected = _chapter_loop(chapter, sn.SGD(chapter.params, lr=0.05, momentum=0.9),
                             batches, loss=loss)
    _assert_same(engine, chapter, losses, expected, 1e-10)
    assert type(engine.loss) is type(chapter.loss)
    x = np.linspace(-2.0, 2.0, 7)[:, None].repeat(2, axis=1)
    np.testing.assert_allclose(engine.predict_proba(x), chapter.predict_proba(x),
                               rtol=0, atol=1e-10)


def test_a_subclass_of_fast_mlp_is_trained_through_its_overrides():
    """forward and backward overridden: fast.train goes through them, as the chapter."""

    def tempered(base):
        class Tempered(base):
            def forward(self, x):
                return super().forward(x) / 3.0

            def backward(self, dlogits):
                return super().backward(np.asarray(dlogits) / 3.0)

        return Tempered

    batches = _batches(steps=50)
    engine, chapter = tempered(fast.MLP)([1, 8, 2], rng=0), tempered(sn.MLP)([1, 8, 2], rng=0)
    losses = fast.train(engine, iter(batches), steps=50,
                        optimizer=sn.Adam(engine.params, lr=1e-2))
    expected = _chapter_loop(chapter, sn.Adam(chapter.params, lr=1e-2), batches)
    _assert_same(engine, chapter, losses, expected, 1e-10)


def test_loss_and_grads_is_check_batch_then_loss_and_grads_into():
    """The wrapper and the loop's two methods give the same numbers, and the
    gradients are those of the chapter's network."""
    x, t = _batches(d=2, classes=3, steps=1)[0]
    engine, chapter = fast.MLP([2, 8, 3], rng=0), sn.MLP([2, 8, 3], rng=0)
    value, grads = engine.loss_and_grads(x, t)
    xb, tb = engine.check_batch(x, t)
    into, losses = np.full_like(engine.params.flat, np.nan), np.full(1, np.nan)
    engine.loss_and_grads_into(xb, tb, engine.loss, into, losses)
    assert losses[0] == value
    np.testing.assert_array_equal(into, grads.flat)
    ref_value, ref_grads = chapter.loss_and_grads(x, t)
    assert value == pytest.approx(ref_value, rel=1e-13)
    for k in ref_grads:
        np.testing.assert_allclose(grads[k], ref_grads[k], rtol=1e-12, atol=1e-15)


def test_a_diverging_fast_mlp_stops_naming_the_parameter_and_step():
    """A learning rate of 1e300: the second step's gradient is not finite; the
    update is refused and the message has no ensemble wording."""
    model = fast.MLP([1, 8, 2], rng=0)
    opt = sn.SGD(model.params, lr=1e300)
    with np.errstate(all="ignore"), pytest.raises(FloatingPointError) as raised:
        fast.train(model, iter(_batches(steps=5)), steps=5, optimizer=opt)
    message = str(raised.value)
    assert message.startswith("the gradient of ")
    assert "not finite at step 2 (" in message and " entries)" in message
    assert "member" not in message
    assert opt.steps == 1 and np.isfinite(model.params.flat).all()


def test_a_non_finite_loss_of_a_fast_mlp_is_reported_with_its_step():
    """Squared error that overflows float32 while its gradient stays finite."""
    model = fast.MLP([1, 2], rng=0, dtype=np.float32)
    model.params["W1"] = np.full((1, 2), 1e20, np.float32)
    model.params["b1"] = np.zeros(2, np.float32)
    x = np.ones((4, 1), np.float32)
    batches = iter([(x * 1e-30, np.zeros(4, int))] * 5 + [(x, np.zeros(4, int))] * 5)
    with np.errstate(over="ignore"), pytest.raises(FloatingPointError) as raised:
        fast.train(model, batches, steps=10, optimizer=sn.SGD(model.params, lr=0.0),
                   loss="mse")
    assert str(raised.value).startswith("the loss became non-finite at step 6: inf")


@pytest.mark.parametrize("model", [sn.MLP([1, 4, 2], rng=0), "fast.MLP", None])
def test_fast_train_refuses_other_models_naming_what_it_received(model):
    with pytest.raises(TypeError, match=r"^model must be a scratchnet\.fast\.MLP or a "
                                        r"scratchnet\.fast\.Ensemble .* got "):
        fast.train(model, iter(()), steps=1, optimizer=sn.SGD({"w": np.zeros(1)}, 0.1))
    with pytest.raises(TypeError, match=type(model).__qualname__):
        fast.train(model, iter(()), steps=1, optimizer=sn.SGD({"w": np.zeros(1)}, 0.1))


@pytest.mark.parametrize("kind", ["mlp", "ensemble"])
def test_snapshots_are_taken_after_their_steps(kind):
    """on_snapshot(step, model) after exactly those steps, with the parameters of
    that many steps (a second run stopped there)."""
    batches = _batches(steps=30)

    def make():
        if kind == "mlp":
            return fast.MLP([1, 8, 2], rng=0), iter(batches)
        return (fast.Ensemble([1, 8, 2], rngs=[0, 1]),
                fast.stack_batches([iter(batches), iter(batches[::-1])]))

    model, stream = make()
    seen = []
    fast.train(model, stream, steps=30, optimizer=sn.Adam(model.params, lr=1e-2),
               snapshot_steps=(1, 7, 30, 99),
               on_snapshot=lambda step, m: seen.append((step, m, m.params.flat.copy())))
    assert [step for step, _, _ in seen] == [1, 7, 30]
    assert all(m is model for _, m, _ in seen)
    for step, _, flat in seen:
        again, stream = make()
        fast.train(again, stream, steps=step, optimizer=sn.Adam(again.params, lr=1e-2))
        np.testing.assert_array_equal(flat, again.params.flat)


def test_the_progress_line_goes_to_stderr(capsys):
    model = fast.MLP([1, 8, 2], rng=0)
    fast.train(model, iter(_batches(steps=20)), steps=20, progress=True,
               optimizer=sn.Adam(model.params))
    out, err = capsys.readouterr()
    assert out == "" and "step 20/20" in err


def test_train_ensemble_is_train():
    """The earlier name, kept for code written before: the same function."""
    assert fast.train_ensemble is fast.train
    assert fast.training.train_ensemble is fast.training.train
