"""Early stopping in sn.train: the validation NLL recorded, the run stopped, the best
parameters restored (issue 32)."""

import numpy as np
import pytest
from scipy.special import logsumexp

import scratchnet as sn


class Scripted:
    """A model whose validation NLL follows a script: w falls by 1 every step
    (SGD, lr 1, gradient 1), and q(c=0|x) = exp(-nll[step])."""

    sizes = (1, 2)

    def __init__(self, nll):
        self.nll = np.asarray(nll, dtype=float)
        self.params = {"w": np.zeros(1)}

    def loss_and_grads(self, x, c):
        return 0.5, {"w": np.ones(1)}

    def predict_log_proba(self, x):
        step = round(-self.params["w"][0])
        q0 = np.exp(-self.nll[step - 1])
        return np.log(np.tile([q0, 1 - q0], (len(x), 1)))

    def predict_proba(self, x):
        return np.exp(self.predict_log_proba(x))


def test_stops_after_patience_rises_and_restores_the_best():
    script = [0.6, 0.5, 0.4, 0.45, 0.41, 0.5, 0.3, 0.2]
    model = Scripted(script)
    data = (np.zeros((4, 1)), np.zeros(4, dtype=int))
    h = sn.train(model, data, steps=8, batch_size=2, lr=1.0, rng=0,
                 validation=(np.zeros((3, 1)), np.zeros(3, dtype=int)), patience=3,
                 validation_every=1)
    # 0.4 at step 3, then three measurements above it: stop at step 6
    assert h.steps == 6 and h.stopped_early
    assert h.validation_steps.tolist() == [1, 2, 3, 4, 5, 6]
    np.testing.assert_allclose(h.validation_nll, script[:6], rtol=1e-12)
    assert h.best_step == 3
    assert model.params["w"][0] == -3.0      # the parameters after step 3


def test_without_patience_it_records_only():
    model = Scripted([0.6, 0.5, 0.7, 0.8])
    data = (np.zeros((4, 1)), np.zeros(4, dtype=int))
    h = sn.train(model, data, steps=4, batch_size=2, lr=1.0, rng=0,
                 validation=(np.zeros((3, 1)), np.zeros(3, dtype=int)),
                 validation_every=1)
    assert h.steps == 4 and not h.stopped_early and h.best_step is None
    assert model.params["w"][0] == -4.0


def _overfitting_data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, 5))
    c = (x[:, 0] + rng.normal(scale=1.5, size=60) > 0).astype(int)  # noisy labels
    xv = rng.normal(size=(200, 5))
    cv = (xv[:, 0] + rng.normal(scale=1.5, size=200) > 0).astype(int)
    return (x, c), (xv, cv)


def _independent_nll(params, x, c):
    """The validation NLL recomputed from the parameters with NumPy and SciPy."""
    h = np.maximum(x @ params["W1"] + params["b1"], 0.0)
    z = h @ params["W2"] + params["b2"]
    return float(np.mean(logsumexp(z, axis=1) - z[np.arange(len(c)), c]))


def test_a_real_run_stops_when_the_validation_nll_rises_and_restores_its_minimum():
    (x, c), (xv, cv) = _overfitting_data()
    model = sn.MLP([5, 64, 2], rng=0)
    h = sn.train(model, (x, c), steps=3000, batch_size=20, lr=1e-2,
                 optimizer="adam", rng=1, validation=(xv, cv), patience=5)
    assert h.stopped_early and h.steps < 3000
    best = int(np.argmin(h.validation_nll))
    assert h.best_step == h.validation_steps[best]
    # the last `patience` measurements are all above the minimum
    assert len(h.validation_nll) - 1 - best == 5
    assert np.all(h.validation_nll[best + 1:] > h.validation_nll[best])
    assert _independent_nll(model.params, xv, cv) == pytest.approx(
        h.validation_nll[best], rel=1e-10, abs=0)


def test_early_stopping_lowers_the_held_out_nll_on_an_overfitting_run():
    """Measured: stopped at step 27 with a held-out NLL of 0.63; run on to 1,000
    steps, the network has overfitted to 6.8."""
    (x, c), (xv, cv) = _overfitting_data()
    nll = {}
    for patience in (None, 5):
        model = sn.MLP([5, 64, 2], rng=0)
        sn.train(model, (x, c), steps=1000, batch_size=20, lr=1e-2, optimizer="adam",
                 rng=1, validation=(xv, cv), patience=patience)
        nll[patience] = _independent_nll(model.params, xv, cv)
    assert nll[5] < nll[None] - 0.1


def test_a_share_of_the_dataset_is_held_out():
    (x, c), _ = _overfitting_data()
    model = sn.MLP([5, 8, 2], rng=0)
    h = sn.train(model, (x, c), steps=12, batch_size=9, lr=1e-2, optimizer="adam",
                 rng=1, validation=0.25)
    # 45 samples train: one epoch is 5 steps; measured at 5, 10 and the last, 12
    assert h.validation_steps.tolist() == [5, 10, 12]
    again = sn.History.from_dict(h.to_dict())
    np.testing.assert_array_equal(again.validation_nll, h.validation_nll)
    assert again.validation_steps.tolist() == [5, 10, 12]


@pytest.mark.parametrize("kwargs, error, match", [
    ({"patience": 3}, ValueError, "patience needs a validation set"),
    ({"validation": 1.5}, TypeError, r"share in \(0, 1\)"),
    ({"validation": 0.001}, ValueError, "leaves no sample"),
    ({"validation": (np.zeros((2, 3)), [0, 1])}, ValueError, "validation set"),
    ({"validation": 0.2, "patience": 0}, ValueError, "patience"),
])
def test_bad_early_stopping_arguments_are_named(kwargs, error, match):
    (x, c), _ = _overfitting_data()
    with pytest.raises(error, match=match):
        sn.train(sn.MLP([5, 8, 2], rng=0), (x, c), steps=5, batch_size=8, lr=0.1,
                 **kwargs)


def test_a_task_needs_an_explicit_validation_set():
    with pytest.raises(TypeError, match="needs a fixed dataset"):
        sn.train(sn.MLP([1, 8, 2], rng=0), sn.tasks.separated(), steps=5,
                 batch_size=8, lr=0.1, validation=0.1)
    x, c = sn.tasks.separated().sample(50, rng=0)
    h = sn.train(sn.MLP([1, 8, 2], rng=0), sn.tasks.separated(), steps=250,
                 batch_size=8, lr=0.1, validation=(x, c), rng=0)
    assert h.validation_steps.tolist() == [100, 200, 250]
