"""The engine reads its outputs through its loss, and is a drop-in for sn.MLP (issue 22).

Every expectation is computed by the chapters: ``sn.MLP`` with the same parameters,
``sn.readouts``, the loss objects of ``sn.objectives``.
"""

import numpy as np
import pytest

import scratchnet as sn
from scratchnet import fast
from scratchnet.objectives import CrossEntropyLoss, MSELoss, MultiMarginLoss

X = np.linspace(-4.0, 7.0, 23)


def _chapter_twin(model, s=None):
    """sn.MLP with the parameters of a fast.MLP (or of member s of an ensemble)."""
    ref = sn.MLP(model.sizes, rng=0, activation=model.activation, dtype=model.dtype,
                 init=model.init, loss=model.loss)
    for k in ref.params:
        ref.params[k][...] = model.params[k] if s is None else model.params[k][s]
    return ref


@pytest.mark.parametrize("sizes", [[1, 8, 3], [1, 8, 1]])
@pytest.mark.parametrize("loss", [None, "cross_entropy", "mse", "hinge",
                                  "binary_cross_entropy", MultiMarginLoss(margin=0.5)],
                         ids=["none", "ce", "mse", "hinge", "bce", "hinge-object"])
def test_engine_models_keep_their_loss_as_the_chapter_does(sizes, loss):
    try:
        expected = sn.MLP(sizes, rng=0, loss=loss).loss
    except ValueError:  # a one-output model refuses cross-entropy and hinge ...
        for make in (lambda: fast.MLP(sizes, rng=0, loss=loss),
                     lambda: fast.Ensemble(sizes, rngs=[0, 1], loss=loss)):
            with pytest.raises(ValueError, match="needs one output per class"):
                make()  # ... and so does the engine
        return
    for model in (fast.MLP(sizes, rng=0, loss=loss), fast.Ensemble(sizes, [0, 1], loss=loss)):
        assert type(model.loss) is type(expected)
        if loss is not None and not isinstance(loss, str):
            assert model.loss is loss


@pytest.mark.parametrize("loss", ["mse", "hinge", "binary_cross_entropy"])
def test_loss_and_grads_default_to_the_models_loss(loss):
    sizes = [1, 8, 1] if loss == "binary_cross_entropy" else [1, 8, 3]
    rng = np.random.default_rng(0)
    x, t = rng.normal(size=(3, 10)), rng.integers(0, max(sizes[-1], 2), size=(3, 10))
    engine, ens = fast.MLP(sizes, rng=0, loss=loss), fast.Ensemble(sizes, [0, 1, 2], loss=loss)
    losses, grads = ens.loss_and_grads(x, t)
    for s in range(3):
        ref = sn.MLP(sizes, rng=s, loss=loss)
        value, ref_grads = ref.loss_and_grads(x[s], t[s])
        assert losses[s] == pytest.approx(value, rel=1e-13)
        for k in ref_grads:
            np.testing.assert_allclose(grads[k][s], ref_grads[k], rtol=1e-12, atol=1e-15)
    value, eng_grads = engine.loss_and_grads(x[0], t[0])
    ref_value, ref_grads = sn.MLP(sizes, rng=0, loss=loss).loss_and_grads(x[0], t[0])
    assert value == pytest.approx(ref_value, rel=1e-13)
    for k in ref_grads:
        np.testing.assert_allclose(eng_grads[k], ref_grads[k], rtol=1e-12, atol=1e-15)


def _one_hot_decision(outputs):
    return np.eye(outputs.shape[1])[np.argmax(outputs, axis=1)]


@pytest.mark.parametrize("loss, readout", [("mse", sn.readouts.brier_proba),
                                           ("hinge", _one_hot_decision)])
def test_networks_trained_with_a_loss_read_their_outputs_through_it(loss, readout):
    """A fast.MLP trained with sn.train(loss=...) and an ensemble trained with
    train_ensemble(loss=...) (and its members) read their outputs through the loss:
    the Brier readout for mse, the one-hot decision for hinge; never a softmax."""
    sizes, S = [1, 16, 3], 2
    tasks = [sn.GaussianClasses([0.0, 2.0, 4.0], [1.0, 1.0, 1.0])] * S
    engine = fast.MLP(sizes, rng=0, init="torch")
    sn.train(engine, tasks[0], steps=200, batch_size=32, lr=0.1, loss=loss, rng=1)
    assert type(engine.loss) is type(sn.objectives.get_loss(loss))
    np.testing.assert_allclose(engine.predict_proba(X), readout(engine.forward(X)), rtol=1e-13)
    np.testing.assert_allclose(engine.predict_proba(X), _chapter_twin(engine).predict_proba(X),
                               rtol=1e-12, atol=1e-15)

    ens = fast.Ensemble(sizes, rngs=list(range(S)), init="torch")
    batches = fast.stacked_stream(tasks, 32, [np.random.default_rng(s) for s in range(S)])
    fast.train(ens, batches, steps=200, optimizer=sn.SGD(ens.params, lr=0.1),
                        loss=loss)
    assert type(ens.loss) is type(sn.objectives.get_loss(loss))
    probs, outputs = ens.predict_proba(X), ens.forward(X)
    for s in range(S):
        expected = readout(outputs[s])
        assert not np.allclose(expected, sn.softmax(outputs[s]))  # the readout matters
        np.testing.assert_allclose(probs[s], expected, rtol=1e-13, atol=0)
        np.testing.assert_allclose(ens.predict_proba(X, member=s), expected, rtol=1e-13)
        member = ens.member(s)
        assert (member.init, member.activation, member.dtype, member.loss) == (
            "torch", "relu", np.float64, ens.loss)
        np.testing.assert_allclose(member.predict_proba(X), expected, rtol=1e-13)
        np.testing.assert_allclose(member.predict_proba(X),
                                   _chapter_twin(ens, s).predict_proba(X), rtol=1e-12)


def test_ensemble_member_keeps_init_dtype_and_loss():
    ens = fast.Ensemble([1, 4, 2], rngs=[0, 1], init="he", dtype=np.float32, loss="mse",
                        activation="tanh")
    member = ens.member(1)
    assert isinstance(member, fast.MLP)
    assert (member.init, member.activation, member.dtype) == ("he", "tanh", np.float32)
    assert member.loss is ens.loss and isinstance(member.loss, MSELoss)
    np.testing.assert_array_equal(member.params.flat, ens.params.flat.reshape(2, -1)[1])


def test_one_output_ensemble_trains_and_reads_the_binary_cross_entropy():
    """One output: BCE by default (as sn.MLP), targets 0 and 1, two readout columns."""
    rng = np.random.default_rng(1)
    x, t = rng.normal(size=(2, 12)), rng.integers(0, 2, size=(2, 12))
    ens = fast.Ensemble([1, 6, 1], rngs=[3, 4])
    losses, grads = ens.loss_and_grads(x, t)
    probs = ens.predict_proba(X)
    assert probs.shape == (2, len(X), 2)
    for s in range(2):
        ref = sn.MLP([1, 6, 1], rng=3 + s)
        value, ref_grads = ref.loss_and_grads(x[s], t[s])
        assert losses[s] == pytest.approx(value, rel=1e-13)
        for k in ref_grads:
            np.testing.assert_allclose(grads[k][s], ref_grads[k], rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(probs[s], ref.predict_proba(X), rtol=1e-13)


# --- a drop-in for sn.MLP: probability targets and subclasses -------------------------


@pytest.mark.parametrize("loss", [None, CrossEntropyLoss(label_smoothing=0.2),
                                  CrossEntropyLoss(weight=[1.0, 2.0, 0.5])],
                         ids=["plain", "smoothed", "weighted"])
def test_engine_takes_probability_targets_as_the_chapter(loss):
    rng = np.random.default_rng(2)
    x = rng.normal(size=(7, 2))
    p = rng.dirichlet(np.ones(3), size=7)
    engine, ref = fast.MLP([2, 5, 3], rng=0), sn.MLP([2, 5, 3], rng=0)
    value, grads = engine.loss_and_grads(x, p, loss=loss)
    ref_value, ref_grads = ref.loss_and_grads(x, p, loss=loss)
    assert value == pytest.approx(ref_value, rel=1e-13)
    for k in ref_grads:
        np.testing.assert_allclose(grads[k], ref_grads[k], rtol=1e-12, atol=1e-15)


def _tempered(base, with_backward=True):
    """A subclass dividing the logits by a temperature (and, optionally, the gradient)."""

    class Tempered(base):
        T = 3.0

        def forward(self, x):
            return super().forward(x) / self.T

        if with_backward:
            def backward(self, dlogits):
                return super().backward(np.asarray(dlogits) / self.T)

    return Tempered


@pytest.mark.parametrize("backward", [True, False], ids=["forward-backward", "forward"])
def test_engine_subclass_overrides_are_honoured_as_by_the_chapter(backward):
    rng = np.random.default_rng(4)
    x, t = rng.normal(size=(6, 1)), rng.integers(0, 3, size=6)
    engine = _tempered(fast.MLP, backward)([1, 8, 3], rng=0)
    ref = _tempered(sn.MLP, backward)([1, 8, 3], rng=0)
    for method in ("predict_proba", "predict_log_proba", "predict"):
        np.testing.assert_allclose(getattr(engine, method)(X), getattr(ref, method)(X),
                                   rtol=1e-13, atol=0)
    assert not np.allclose(engine.predict_proba(X), fast.MLP([1, 8, 3], rng=0).predict_proba(X))
    value, grads = engine.loss_and_grads(x, t)
    ref_value, ref_grads = ref.loss_and_grads(x, t)
    assert value == pytest.approx(ref_value, rel=1e-13)
    for k in ref_grads:
        np.testing.assert_allclose(grads[k], ref_grads[k], rtol=1e-12, atol=1e-15)
    # a prediction between forward and backward leaves the cache as it was
    d = rng.normal(size=(6, 3))
    engine.forward(x)
    ref.forward(x)
    engine.predict_proba(x[::-1])
    ref.predict_proba(x[::-1])
    eng_grads, ref_grads = engine.backward(d), ref.backward(d)
    for k in ref_grads:
        np.testing.assert_allclose(eng_grads[k], ref_grads[k], rtol=1e-12, atol=1e-15)


def test_the_engines_adam_refuses_an_update_before_any_step_as_the_chapter():
    """t = 0 would divide by the bias corrections 1 - beta**0 = 0."""
    for cls in (sn.Adam, sn.fast.Adam):
        opt = cls({"w": np.zeros(3)})
        with pytest.raises(RuntimeError, match=r"needs the step count t = steps >= 1"):
            opt.update(np.zeros(3), np.ones(3), opt.init_state(np.zeros(3)))
