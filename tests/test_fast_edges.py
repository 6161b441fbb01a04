"""The engine equal to the chapters at the edges (issue 22): every option of a loss,
the dominant term, extreme logits, and warnings that belong to the user's model.

Every expectation comes from the chapters (``sn.MLP`` with the same parameters,
``sn.cross_entropy``, ``sn.log_softmax``, the loss objects), never from the engine.
"""

import warnings

import numpy as np
import pytest

import scratchnet as sn
from scratchnet import fast
from scratchnet.objectives import (
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    Loss,
    MSELoss,
    MultiMarginLoss,
)


class SummedCrossEntropy(CrossEntropyLoss):
    """A 'reduction' option: the sum over the batch, not the mean."""

    def loss_and_grad(self, outputs, targets):
        return (float(sn.functional.cross_entropy(outputs, targets, reduction="sum")),
                sn.functional.cross_entropy_grad(outputs, targets, reduction="sum"))


class Squared(Loss):
    """A loss object of the user's own (the objectives chapter's example)."""

    name = "squared"

    def loss_and_grad(self, outputs, targets):
        r = outputs - np.eye(outputs.shape[1])[targets]
        return float(np.mean(r ** 2)), 2 * r / r.size


OPTIONS = {  # every option a chapter loss takes, and losses the engine does not know
    "ce": None,
    "ce-ignore_index-1": CrossEntropyLoss(ignore_index=1),
    "ce-ignore_index-0": CrossEntropyLoss(ignore_index=0),
    "ce-ignore_index-outside": CrossEntropyLoss(ignore_index=7),
    "ce-weight": CrossEntropyLoss(weight=[0.5, 2.0, 1.0]),
    "ce-smoothing": CrossEntropyLoss(label_smoothing=0.15),
    "ce-all": CrossEntropyLoss(weight=[0.5, 2.0, 1.0], label_smoothing=0.1, ignore_index=2),
    "ce-subclass-sum": SummedCrossEntropy(),
    "mse": MSELoss(),
    "hinge": MultiMarginLoss(),
    "hinge-margin-weight": MultiMarginLoss(margin=0.3, weight=[1.0, 3.0, 0.5]),
    "custom": Squared(),
    "bce": BCEWithLogitsLoss(),
    "bce-pos_weight": BCEWithLogitsLoss(pos_weight=2.5),
    # one output, every loss the engine takes there (issue 29: "mse" on one output
    # read the targets as one-hot columns, IndexError for a target 1)
    "mse-one-output": MSELoss(),
    "mse-by-name-one-output": "mse",
    "bce-by-name": "binary_cross_entropy",
    "default-one-output": None,
}
ONE_OUTPUT = [name for name in OPTIONS
              if name.startswith("bce") or name.endswith("one-output")]


def _case(name):
    loss = OPTIONS[name]
    sizes = [2, 7, 1] if name in ONE_OUTPUT else [2, 7, 3]
    rng = np.random.default_rng(len(name))
    x = rng.normal(size=(3, 16, 2))
    t = rng.integers(0, max(sizes[-1], 2), size=(3, 16))
    t[:, :3] = [0, 1, 2] if sizes[-1] == 3 else [0, 1, 1]  # every class present
    return loss, sizes, x, t


def _assert_same(value, grads, ref_value, ref_grads, s=None):
    assert value == pytest.approx(ref_value, rel=1e-13, abs=1e-16)
    for k in ref_grads:
        got = grads[k] if s is None else grads[k][s]
        np.testing.assert_allclose(got, ref_grads[k], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", list(OPTIONS))
def test_engine_mlp_computes_every_option_as_the_chapter(name):
    """fast.MLP's loss and gradients equal sn.MLP's for every option (issue 22:
    ignore_index=1 gave 1.268 on the engine, 1.348 on the chapter)."""
    loss, sizes, x, t = _case(name)
    engine, ref = fast.MLP(sizes, rng=0), sn.MLP(sizes, rng=0)
    _assert_same(*engine.loss_and_grads(x[0], t[0], loss=loss),
                 *ref.loss_and_grads(x[0], t[0], loss=loss))
    engine, ref = fast.MLP(sizes, rng=0, loss=loss), sn.MLP(sizes, rng=0, loss=loss)
    _assert_same(*engine.loss_and_grads(x[1], t[1]), *ref.loss_and_grads(x[1], t[1]))


@pytest.mark.parametrize("name", list(OPTIONS))
def test_ensemble_computes_every_option_as_the_chapter_on_each_member(name):
    loss, sizes, x, t = _case(name)
    for ens in (fast.Ensemble(sizes, rngs=[0, 1, 2]),
                fast.Ensemble(sizes, rngs=[0, 1, 2], loss=loss)):
        losses, grads = ens.loss_and_grads(x, t, loss=loss if ens.loss is not loss else None)
        for s in range(3):
            ref = sn.MLP(sizes, rng=s)
            _assert_same(losses[s], grads, *ref.loss_and_grads(x[s], t[s], loss=loss), s=s)
    outputs = ens.forward(x)
    got = outputs.copy()
    values = fast.objectives.member_losses_inplace(got, t, loss)
    for s in range(3):
        value, grad = sn.objectives.get_loss(loss, sizes[-1]).loss_and_grad(outputs[s], t[s])
        assert values[s] == pytest.approx(value, rel=1e-13, abs=1e-16)
        np.testing.assert_allclose(got[s], grad, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", ONE_OUTPUT)
@pytest.mark.parametrize("targets", ["zeros", "ones"])
def test_one_output_with_every_target_the_same_class(name, targets):
    """All targets 0 (the issue: the ensemble's "mse" gave a wrong loss) or all 1
    (IndexError): each member as the chapter's network with the loss object."""
    loss, sizes, x, _ = _case(name)
    t = np.full((3, 16), targets == "ones", dtype=np.int64)
    losses, grads = fast.Ensemble(sizes, rngs=[0, 1, 2], loss=loss).loss_and_grads(x, t)
    for s in range(3):
        _assert_same(losses[s], grads,
                     *sn.MLP(sizes, rng=s, loss=loss).loss_and_grads(x[s], t[s]), s=s)
    _assert_same(*fast.MLP(sizes, rng=0, loss=loss).loss_and_grads(x[0], t[0]),
                 *sn.MLP(sizes, rng=0, loss=loss).loss_and_grads(x[0], t[0]))


def test_the_issues_ignore_index_numbers():
    """The issue's case: the engine gave 1.268 where the chapter gives 1.348."""
    rng = np.random.default_rng(0)
    x, t = rng.normal(size=(64, 1)), rng.integers(0, 3, size=64)
    loss = CrossEntropyLoss(ignore_index=1)
    expected = sn.MLP([1, 8, 3], rng=0).loss_and_grads(x, t, loss=loss)[0]
    assert fast.MLP([1, 8, 3], rng=0).loss_and_grads(x, t, loss=loss)[0] == pytest.approx(
        expected, rel=1e-13)
    ens = fast.Ensemble([1, 8, 3], rngs=[0])
    assert ens.loss_and_grads(x[None], t[None], loss=loss)[0][0] == pytest.approx(
        expected, rel=1e-13)


def test_engine_mlp_skips_ignored_targets_as_the_chapter():
    """Targets equal to the default ignore_index (-100) are skipped, as by sn.MLP."""
    rng = np.random.default_rng(5)
    x, t = rng.normal(size=(9, 1)), np.array([0, -100, 2, 1, -100, 0, 2, 2, 1])
    for loss in (None, CrossEntropyLoss(), "cross_entropy"):
        _assert_same(*fast.MLP([1, 6, 3], rng=0).loss_and_grads(x, t, loss=loss),
                     *sn.MLP([1, 6, 3], rng=0).loss_and_grads(x, t, loss=loss))


def test_the_fused_path_is_decided_in_one_place():
    decide = fast.kernels.fused_cross_entropy
    assert decide(None, 2) and decide("cross_entropy", 3) and decide(CrossEntropyLoss(), 5)
    assert decide(CrossEntropyLoss(ignore_index=5), 5)  # no class index can equal it
    for loss in (CrossEntropyLoss(ignore_index=4), CrossEntropyLoss(weight=[1.0] * 5),
                 CrossEntropyLoss(label_smoothing=0.1), SummedCrossEntropy(), "mse",
                 MSELoss(), Squared(), "hinge"):
        assert not decide(loss, 5), loss
    assert not decide(None, 1)  # one output: the binary cross-entropy


def test_the_ensemble_refuses_what_it_does_not_compute():
    ens = fast.Ensemble([1, 4, 3], rngs=[0, 1])
    x = np.zeros((2, 5, 1))
    probabilities = np.full((2, 5, 3), 1 / 3)
    with pytest.raises(ValueError, match=r"targets must be class indices in \[0, 3\) .*"
                                         r"no probability targets and no ignored index"):
        ens.loss_and_grads(x, probabilities)
    with pytest.raises(ValueError, match=r"no ignored index"):
        ens.loss_and_grads(x, np.full((2, 5), -100))
    with pytest.raises(ValueError, match="needs one output per class"):
        fast.Ensemble([1, 4, 1], rngs=[0], loss="cross_entropy")


# --- the dominant term and extreme logits (the ensemble's own kernels) ----------------


def _linear_ensemble(logits):
    """An ensemble of linear networks [M, M] whose outputs on the identity are ``logits``
    (S, B, M): W = I, b = 0, x = logits."""
    members, _, m = logits.shape
    ens = fast.Ensemble([m, m], rngs=list(range(members)))
    ens.params["W1"] = np.broadcast_to(np.eye(m), (members, m, m))
    ens.params["b1"] = np.zeros((members, m))
    return ens


@pytest.mark.parametrize("logits, target", [([40.0, 0.0, 0.0], 0), ([40.0, 0.0], 0),
                                            ([0.0, 45.0, 3.0, -2.0], 1)])
def test_ensemble_keeps_the_dominant_term(logits, target):
    """[40, 0, 0] with target 0: log1p(2 e^-40) = 8.5e-18, not 0 (issue 22)."""
    logits = np.array([[logits]])
    losses, _ = _linear_ensemble(logits).loss_and_grads(logits, [[target]])
    expected = sn.cross_entropy(logits[0], [target])
    assert expected > 0 and losses[0] == pytest.approx(expected, rel=1e-15, abs=0)


@pytest.mark.parametrize("m", [3, 4, 7])
@pytest.mark.parametrize("scale", [1.0, 300.0, 1e4])
def test_ensemble_loss_takes_the_maximum_over_every_class(m, scale):
    """Member s holds its largest logit in class s (the last class included), far
    above the others, and targets on and off it: the loss and gradient are the
    chapter's (a row maximum that skipped a class would overflow its exp)."""
    rng = np.random.default_rng(m)
    logits = rng.normal(size=(m, 4, m))
    for s in range(m):
        logits[s, :, s] += scale
    targets = np.stack([[s, (s + 1) % m, s, (s + 2) % m] for s in range(m)])
    losses, grads = _linear_ensemble(logits).loss_and_grads(logits, targets)
    got = logits.copy()
    values = fast.objectives.member_losses_inplace(got, targets)
    for s in range(m):
        value, dlogits = sn.cross_entropy_and_grad(logits[s], targets[s])
        assert losses[s] == pytest.approx(value, rel=1e-13)
        assert values[s] == pytest.approx(value, rel=1e-13)
        np.testing.assert_allclose(got[s], dlogits, rtol=1e-12, atol=1e-300)
        np.testing.assert_allclose(grads["W1"][s], logits[s].T @ dlogits, rtol=1e-12,
                                   atol=1e-300)


@pytest.mark.parametrize("loss", [None, "mse", "hinge"])
def test_ensemble_predictions_take_each_rows_own_maximum(loss):
    """Rows of very different scales (member 0 around 1000, member 1 around 0, and
    within each member): a global maximum would underflow the small rows to -inf.
    Each member's log-probabilities are the chapter's readout of its outputs."""
    logits = np.array([[[1000.0, 999.0, 998.0], [1.0, 0.5, -3.0], [500.0, 0.0, 0.2]],
                       [[0.0, -1.0, -2.0], [-700.0, -705.0, -701.0], [3.0, 2.0, 1.0]]])
    ens = _linear_ensemble(logits)
    ens.params["W1"] = logits  # the outputs on the rows of the identity
    ens.loss = sn.objectives.get_loss(loss)
    x = np.eye(3)
    outputs = ens.forward(x)
    np.testing.assert_array_equal(outputs, logits)
    log_probs, probs = ens.predict_log_proba(x), ens.predict_proba(x)
    for s in range(2):
        expected = ens.loss.predict_log_proba(outputs[s])
        if loss is None:
            np.testing.assert_allclose(expected, sn.log_softmax(outputs[s]), rtol=1e-15)
            assert np.isfinite(log_probs).all()
        np.testing.assert_allclose(log_probs[s], expected, rtol=1e-14, atol=0)
        np.testing.assert_allclose(probs[s], ens.loss.predict_proba(outputs[s]), rtol=1e-14)
        ref = sn.MLP([3, 3], rng=0, loss=ens.loss)
        ref.params["W1"][...], ref.params["b1"][...] = ens.params["W1"][s], ens.params["b1"][s]
        np.testing.assert_allclose(ens.predict_log_proba(x, member=s),
                                   ref.predict_log_proba(x), rtol=1e-14, atol=0)


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-13), (np.float32, 1e-5)])
@pytest.mark.parametrize("classes", [np.int64, np.int8, np.uint8])
def test_ensemble_cross_entropy_of_many_classes_equals_the_chapter(dtype, rtol, classes):
    """Ten classes, and the small integer types stacked_epochs stores classes in."""
    rng = np.random.default_rng(9)
    outputs = rng.normal(scale=5.0, size=(5, 33, 10)).astype(dtype)
    targets = rng.integers(0, 10, size=(5, 33)).astype(classes)
    got = outputs.copy()
    values = fast.objectives.member_losses_inplace(got, targets)
    assert got.dtype == dtype
    for s in range(5):
        value, grad = sn.cross_entropy_and_grad(outputs[s], targets[s])
        assert values[s] == pytest.approx(value, rel=rtol)
        np.testing.assert_allclose(got[s], grad, rtol=rtol, atol=rtol * 1e-3)


# --- warnings where they belong --------------------------------------------------------


def _huge_batches(scale):
    x = np.full((2, 8, 1), scale)
    return iter([(x, np.zeros((2, 8), int))] * 3)


def test_an_overflow_in_the_users_model_is_not_silenced():
    """A learning rate of 1e300 makes the second step's forward pass overflow: the
    engine's loop shows the model's RuntimeWarning (it silenced everything before)
    and stops with a clear error before the update the gradient would spoil."""
    ens = fast.Ensemble([1, 8, 8, 2], rngs=[0, 1])
    rng = np.random.default_rng(0)
    batches = iter([(rng.normal(size=(2, 8, 1)), rng.integers(0, 2, size=(2, 8)))] * 5)
    with warnings.catch_warnings(record=True) as caught, \
            pytest.raises(FloatingPointError, match="not finite at step 2"):
        warnings.simplefilter("always")
        fast.train(ens, batches, steps=5, optimizer=sn.SGD(ens.params, lr=1e300))
    messages = [str(w.message) for w in caught if w.category is RuntimeWarning]
    assert "overflow encountered in matmul" in messages


def test_the_engines_finite_check_raises_no_warning():
    """Inputs of 1e155 give gradients near 1e155: finite, but their squares overflow
    the check's dot product.  No warning from the engine's check, no error."""
    ens = fast.Ensemble([1, 2], rngs=[0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        losses = fast.train(ens, _huge_batches(1e155), steps=3,
                                     optimizer=sn.SGD(ens.params, lr=0.0))
        _, grads = ens.loss_and_grads(np.full((2, 8, 1), 1e155), np.zeros((2, 8), int))
    assert np.isfinite(losses).all() and np.isfinite(grads.flat).all()
    assert np.abs(grads.flat).max() > 1e154  # the squares overflow


@pytest.mark.parametrize("m", [2, 3, 5])
def test_member_losses_write_the_gradient_into_outputs_of_any_layout(m):
    """A strided view of outputs (every other row) gets its gradient in place."""
    rng = np.random.default_rng(m)
    buffer = rng.normal(size=(3, 8, m))
    outputs, targets = buffer[:, ::2, :], rng.integers(0, m, size=(3, 4))
    before = outputs.copy()
    values = fast.objectives.member_losses_inplace(outputs, targets)
    for s in range(3):
        value, grad = sn.cross_entropy_and_grad(before[s], targets[s])
        assert values[s] == pytest.approx(value, rel=1e-13)
        np.testing.assert_allclose(outputs[s], grad, rtol=1e-12, atol=1e-16)
