"""One readout per loss: a model reads its outputs through the loss it was trained
with, everywhere (predict_proba, train's snapshots, task.expected_kl); and the
training loop's own promises (warnings shown, parameters checked, early stops)."""

import numpy as np
import pytest
from _gaussians import two_class_log_joint
from scipy.special import log_softmax as scipy_log_softmax

import scratchnet as sn
from scratchnet.readouts import MSE_FLOOR

RNG = np.random.default_rng(0)


@pytest.fixture(scope="module")
def task():
    return sn.tasks.separated()


def relu_net(params, x):
    """The outputs of a two-layer ReLU network, written out in float64."""
    W1, b1, W2, b2 = (np.asarray(params[k], np.float64) for k in ("W1", "b1", "W2", "b2"))
    return np.maximum(np.reshape(x, (-1, 1)) @ W1 + b1, 0.0) @ W2 + b2


def brier_by_hand(o):
    """Squared error's readout: the outputs, clipped to [1e-4, 1], over their sum."""
    q = np.minimum(np.maximum(o, 1e-4), 1.0)
    return q / q.sum(axis=1, keepdims=True)


def expected_kl_by_hand(task, q_of_x):
    """E_x KL(P(C|x) || q(C|x)) by the trapezoid rule on a wide fine grid."""
    mu, sd, priors = task.means, task.scales, task.priors
    x = np.linspace(min(mu) - 12 * max(sd), max(mu) + 12 * max(sd), 200_001)
    log_joint = two_class_log_joint(x, mu, sd, priors)
    log_px = np.logaddexp(log_joint[:, 0], log_joint[:, 1])
    log_post = log_joint - log_px[:, None]
    kl = np.sum(np.exp(log_post) * (log_post - np.log(q_of_x(x))), axis=1)
    f = np.exp(log_px) * kl
    return (x[1] - x[0]) * (f.sum() - 0.5 * (f[0] + f[-1]))


# --- the readouts, against what they stand for -----------------------------


def test_each_loss_reads_its_outputs_by_its_own_formula():
    o = RNG.normal(size=(50, 3)) * 3
    s = RNG.normal(size=(50, 1)) * 10
    ce, bce = sn.objectives.CrossEntropyLoss(), sn.objectives.BCEWithLogitsLoss()
    mse, hinge = sn.objectives.MSELoss(), sn.objectives.MultiMarginLoss()
    np.testing.assert_allclose(ce.predict_log_proba(o), scipy_log_softmax(o, axis=1),
                               rtol=1e-14, atol=1e-14)
    q0, q1 = 1 / (1 + np.exp(s)), 1 / (1 + np.exp(-s))
    np.testing.assert_allclose(bce.predict_proba(s), np.hstack([q0, q1]), rtol=1e-12)
    np.testing.assert_allclose(mse.predict_proba(o), brier_by_hand(o), rtol=1e-15)
    p = np.clip(s / 10, 1e-4, 1 - 1e-4)
    np.testing.assert_allclose(mse.predict_proba(s / 10), np.hstack([1 - p, p]), rtol=1e-15)
    one_hot = np.eye(3)[o.argmax(axis=1)]
    np.testing.assert_array_equal(hinge.predict_proba(o), one_hot)
    assert MSE_FLOOR == 1e-4


def test_readouts_are_exact_and_silent_at_the_extremes():
    """(The suite turns every warning into an error.)"""
    log_q = sn.objectives.BCEWithLogitsLoss().predict_log_proba([[800.0], [-800.0]])
    np.testing.assert_array_equal(log_q, [[-800.0, 0.0], [0.0, -800.0]])
    log_d = sn.objectives.MultiMarginLoss().predict_log_proba([[1e308, -1e308]])
    np.testing.assert_array_equal(log_d, [[0.0, -np.inf]])
    log_b = sn.objectives.MSELoss().predict_log_proba([[np.inf, -np.inf]])
    np.testing.assert_allclose(log_b, np.log([[1 / (1 + 1e-4), 1e-4 / (1 + 1e-4)]]),
                               rtol=1e-15)


def test_float32_outputs_stay_float32():
    o = RNG.normal(size=(4, 2)).astype(np.float32)
    for name in sn.objectives.LOSSES:
        out = o[:, :1] if name == "binary_cross_entropy" else o
        assert sn.get_loss(name).predict_proba(out).dtype == np.float32, name


def test_a_loss_without_a_readout_says_so():
    class Squared(sn.objectives.Loss):
        def loss_and_grad(self, outputs, targets):
            return 0.0, np.zeros_like(outputs)

    with pytest.raises(TypeError, match="does not define how its outputs become probabilities"):
        sn.MLP([1, 4, 2], rng=0, loss=Squared()).predict_proba([0.0])


@pytest.mark.parametrize("bad, error, match", [
    ([1.0, 2.0], ValueError, r"outputs must have shape \(N, M\)"),
    ([["a", "b"]], TypeError, "outputs must be an array of real numbers"),
    ([[np.nan, 0.0]], ValueError, "outputs must not contain NaN"),
])
def test_readouts_refuse_what_is_not_outputs(bad, error, match):
    with pytest.raises(error, match=match):
        sn.readouts.brier_proba(bad)


# --- models keep the loss they are trained with -----------------------------


def test_a_squared_error_network_is_read_through_its_outputs_not_their_softmax(task):
    """The issue's case: after 1,500 steps with squared error the outputs are near
    the posterior; their softmax was not (0.23 nats from it); the readout is."""
    model = sn.MLP([1, 64, 2], rng=0)
    eval_x = np.array([-1.0, 0.5, 1.5, 2.5, 4.0])
    history = sn.train(model, task, steps=1500, batch_size=64, lr=0.1, loss="mse", rng=1,
                       snapshot_steps=[1500], eval_x=eval_x)
    assert type(model.loss) is sn.objectives.MSELoss
    by_hand = brier_by_hand(relu_net(model.params, eval_x))
    np.testing.assert_allclose(model.predict_proba(eval_x), by_hand, rtol=1e-12)
    np.testing.assert_allclose(history.snapshot_probs[-1], by_hand, rtol=1e-12)
    kl = expected_kl_by_hand(task, lambda x: brier_by_hand(relu_net(model.params, x)))
    assert history.snapshot_kl[-1] == pytest.approx(kl, rel=1e-3)
    assert task.expected_kl(model) == pytest.approx(kl, rel=1e-3)
    assert kl < 0.03, kl  # 0.008-0.020 for model seeds 0-2; the softmax gave 0.23
    softmax_kl = expected_kl_by_hand(task, lambda x: np.exp(
        scipy_log_softmax(relu_net(model.params, x), axis=1)))
    assert softmax_kl > 0.1, softmax_kl
    # within 0.06 of the posterior (0.055 at x = 2.5); the softmax was 0.25 off at x = 4
    np.testing.assert_allclose(model.predict_proba(eval_x), task.posterior(eval_x), atol=0.06)


def test_a_hinge_network_reads_as_its_decision(task):
    model = sn.MLP([1, 16, 2], rng=0)
    history = sn.train(model, task, steps=300, batch_size=64, lr=0.1, loss="hinge", rng=1,
                       snapshot_steps=[300])
    x = np.linspace(-2.0, 5.0, 29)
    decision = np.eye(2)[relu_net(model.params, x).argmax(axis=1)]
    np.testing.assert_array_equal(model.predict_proba(x), decision)
    np.testing.assert_array_equal(model.predict(x), decision.argmax(axis=1))
    # a one-hot q has q = 0 where P(c|x) > 0: infinitely far from the posterior
    assert history.snapshot_kl[-1] == np.inf


def test_train_step_and_train_record_the_loss_they_are_given(task):
    model = sn.TwoLayerMLP(1, 8, 2, rng=0)
    assert type(model.loss) is sn.objectives.CrossEntropyLoss
    opt = sn.SGD(model.params, lr=0.1)
    sn.train_step(model, opt, [0.0, 3.0], [0, 1], loss="mse")
    assert type(model.loss) is sn.objectives.MSELoss
    sn.train_step(model, opt, [0.0, 3.0], [0, 1])  # None keeps it
    assert type(model.loss) is sn.objectives.MSELoss
    hinge = sn.objectives.MultiMarginLoss(margin=2.0)
    sn.train(model, task, steps=2, batch_size=4, lr=0.1, loss=hinge)
    assert model.loss is hinge
    assert repr(model) == "TwoLayerMLP(1, 8, 2, activation='relu', loss=MultiMarginLoss())"


def test_a_model_whose_loss_is_a_method_keeps_it(task):
    """A CS231n-style model has a method named ``loss``: training must not clobber it."""

    class Net:
        def __init__(self):
            self.inner = sn.TwoLayerMLP(1, 4, 2, rng=0)
            self.params = self.inner.params

        def loss(self, x, y):
            return self.inner.loss_and_grads(x, y)

        def loss_and_grads(self, x, y, loss=None):
            return self.inner.loss_and_grads(x, y, loss=loss)

        def predict_proba(self, x):
            return self.inner.predict_proba(x)

    net = Net()
    method = net.loss
    sn.train(net, task, steps=3, batch_size=4, lr=0.1, loss="cross_entropy")
    assert net.loss == method


# --- the loop's own promises --------------------------------------------------


def test_an_overflow_in_the_students_own_model_is_shown(task):
    class Loud:
        def __init__(self):
            self.inner = sn.TwoLayerMLP(1, 4, 2, rng=0)
            self.params = self.inner.params

        def loss_and_grads(self, x, y, loss=None):
            np.exp(np.float64(1000.0))  # the student's own layer overflows
            return self.inner.loss_and_grads(x, y)

        def predict_proba(self, x):
            return self.inner.predict_proba(x)

    with pytest.warns(RuntimeWarning, match="overflow"):
        sn.train(Loud(), task, steps=1, batch_size=4, lr=0.1)


def test_parameters_that_become_infinite_on_the_last_step_are_reported(task):
    """The loss is computed before the update, so only the final check sees it."""
    model = sn.TwoLayerMLP(1, 4, 2, rng=0)

    class Poison:
        lr, steps = 0.1, 0

        def step(self, grads):
            self.steps += 1
            if self.steps == 3:
                model.params["b1"][0] = np.inf

    with pytest.raises(FloatingPointError, match="parameters became NaN or infinite at step 3"):
        sn.train(model, task, steps=3, batch_size=4, optimizer=Poison())


@pytest.mark.parametrize("stop_at, steps, stopped", [(5, 5, False), (2, 5, True), (1, 1, False)])
def test_stopped_early_means_steps_were_left(task, stop_at, steps, stopped):
    history = sn.train(sn.TwoLayerMLP(1, 4, 2, rng=0), task, steps=steps, batch_size=4,
                       lr=0.1, callback=lambda step, loss, model: step != stop_at)
    assert history.stopped_early is stopped
    assert len(history.losses) == stop_at


# --- every argument refuses the wrong kind of value, naming it ---------------


def _model():
    return sn.TwoLayerMLP(1, 4, 2, rng=0)


def _fit(**kwargs):
    args = dict(data=sn.tasks.separated(), steps=2, batch_size=4, lr=0.1)
    args.update(kwargs)
    return sn.train(_model(), **args)


WRONG_KINDS = [
    ("MLP activation=['relu']", lambda: sn.MLP([1, 4, 2], activation=["relu"]),
     ValueError, "activation must be 'relu' or 'tanh'"),
    ("MLP loss=['mse']", lambda: sn.MLP([1, 4, 2], loss=["mse"]), TypeError, "loss must be"),
    ("MLP loss=array", lambda: sn.MLP([1, 4, 2], loss=np.array("mse")), TypeError,
     "loss must be"),
    ("get_loss outputs='2'", lambda: sn.get_loss("mse", outputs="2"), TypeError,
     "outputs must be an integer"),
    ("train snapshot_steps=2", lambda: _fit(snapshot_steps=2), TypeError,
     "snapshot_steps must be a sequence"),
    ("train snapshot_steps='2'", lambda: _fit(snapshot_steps="2"), TypeError,
     "snapshot_steps must be a sequence"),
    ("train progress='yes'", lambda: _fit(progress="yes"), TypeError,
     "progress must be True or False"),
    ("train lr=inf", lambda: _fit(lr=float("inf")), ValueError, r"lr must be in \(0, inf\)"),
    ("train lr=[0.1]", lambda: _fit(lr=[0.1]), TypeError, "lr must be a real number"),
    ("train steps=2.5", lambda: _fit(steps=2.5), TypeError, "steps must be an integer"),
    ("train optimizer=['sgd']", lambda: _fit(optimizer=["sgd"]), TypeError,
     "optimizer must be 'sgd', 'adam'"),
    ("train data='separated'", lambda: _fit(data="separated"), TypeError,
     "data must be a task"),
    ("train data=(x, 1)", lambda: _fit(data=(np.zeros(4), 1), batch_size=2), TypeError,
     "c must be a sequence of labels"),
    ("train sampler -> 5", lambda: _fit(data=lambda n, rng: 5), TypeError,
     r"the sampler must return a pair \(x, c\)"),
    ("epochs rng='a'", lambda: next(sn.batches.epochs(np.zeros(3), np.zeros(3), 1, "a")),
     TypeError, "rng must be a numpy.random.Generator"),
]


@pytest.mark.parametrize("call, error, match", [case[1:] for case in WRONG_KINDS],
                         ids=[case[0] for case in WRONG_KINDS])
def test_a_wrong_kind_of_argument_is_named(call, error, match):
    with pytest.raises(error, match=match):
        call()
