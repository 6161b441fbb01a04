"""Learning-rate schedules: closed forms, PyTorch's schedulers, the recipes, train."""

import math

import numpy as np
import pytest

import scratchnet as sn


def test_closed_forms_at_hand_computed_steps():
    assert [sn.StepLR(0.8, step_size=3, gamma=0.5)(t) for t in range(8)] == [
        0.8, 0.8, 0.8, 0.4, 0.4, 0.4, 0.2, 0.2]
    cosine = sn.CosineAnnealingLR(2.0, T_max=4, eta_min=1.0)
    # 1 + (1 + cos(pi t / 4)) / 2 at t = 0..4: 2, 1 + (1 + 1/sqrt 2)/2, 1.5, ..., 1
    expected = [2.0, 1.5 + 0.5 / math.sqrt(2), 1.5, 1.5 - 0.5 / math.sqrt(2), 1.0]
    assert [cosine(t) for t in range(5)] == pytest.approx(expected, rel=1e-15, abs=0)
    warmup = sn.LinearLR(1.0, start_factor=0.25, end_factor=1.0, total_iters=3)
    assert [warmup(t) for t in range(5)] == pytest.approx([0.25, 0.5, 0.75, 1.0, 1.0],
                                                          rel=1e-15, abs=0)
    assert sn.Constant(0.3)(0) == sn.Constant(0.3)(10**9) == 0.3


def test_sequential_restarts_each_schedule_at_its_milestone():
    first, second = sn.Constant(1.0), sn.StepLR(0.5, step_size=2, gamma=0.1)
    schedule = sn.SequentialLR([first, second, sn.Constant(7.0)], milestones=[3, 10])
    got = [schedule(t) for t in range(12)]
    assert got[:3] == [1.0] * 3
    assert got[3:10] == pytest.approx([0.5, 0.5, 0.05, 0.05, 0.005, 0.005, 0.0005],
                                      rel=1e-14, abs=0)
    assert got[10:] == [7.0, 7.0]


def test_the_covering_recipe_cosine_is_the_public_schedule_with_the_same_values():
    recipe = sn.experiments.COVERING
    for steps in (1, 7, 10_000):
        schedule = recipe.learning_rate(steps)
        assert isinstance(schedule, sn.CosineAnnealingLR)
        for t in sorted({0, 1, steps // 3, steps // 2, steps - 1, steps}):
            # the recipe's formula as it was written before the schedules existed
            old = recipe.lr_final + 0.5 * (recipe.lr - recipe.lr_final) * (
                1.0 + math.cos(math.pi * t / steps))
            assert schedule(t) == old  # bit for bit
    assert sn.experiments.TEXTBOOK.learning_rate(100) == 0.1


def test_a_schedule_drives_train_step_by_step():
    task = sn.tasks.separated()
    schedule = sn.StepLR(0.1, step_size=2, gamma=0.5)
    seen = []

    def callback(step, loss, model):
        seen.append(opt.lr)

    model = sn.TwoLayerMLP(1, 8, 2, rng=0)
    opt = sn.SGD(model.params, 0.1)
    sn.train(model, task, steps=5, batch_size=8, lr=schedule, optimizer=opt, rng=0,
             callback=callback)
    assert seen == [0.1, 0.1, 0.05, 0.05, 0.025]
    # and with optimizer="adam", built from the schedule's first rate
    warm = sn.SequentialLR([sn.LinearLR(1e-2, start_factor=0.1, total_iters=3),
                            sn.CosineAnnealingLR(1e-2, T_max=5)], milestones=[3])
    history = sn.train(sn.MLP([1, 8, 2], rng=0), task, steps=8, batch_size=8, lr=warm,
                       optimizer="adam", rng=0)
    assert history.steps == 8 and np.isfinite(history.losses).all()


def test_a_cosine_that_reaches_zero_is_a_valid_schedule_in_train():
    task = sn.tasks.separated()
    model = sn.TwoLayerMLP(1, 8, 2, rng=0)
    # T_max = 3 in a run of 5 steps: the rate is 0 at t = 3 (a no-op step), allowed
    history = sn.train(model, task, steps=5, batch_size=8,
                       lr=sn.CosineAnnealingLR(0.1, T_max=3), rng=0)
    assert history.steps == 5


@pytest.mark.parametrize("make, match", [
    (lambda: sn.StepLR(0.1, step_size=0), "step_size must be an integer >= 1; got 0"),
    (lambda: sn.StepLR(0.1, step_size=2.5), "step_size must be an integer; got 2.5"),
    (lambda: sn.StepLR(-0.1, step_size=2), r"lr must be in \[0, inf\); got -0.1"),
    (lambda: sn.StepLR(0.1, 2, gamma=math.nan), "gamma must not be NaN"),
    (lambda: sn.CosineAnnealingLR(0.1, T_max=0), "T_max must be an integer >= 1"),
    (lambda: sn.CosineAnnealingLR(0.1, 5, eta_min=-1.0), "eta_min must be in"),
    (lambda: sn.CosineAnnealingLR(math.inf, 5), r"lr must be in \[0, inf\); got inf"),
    (lambda: sn.LinearLR(0.1, start_factor=0.0), r"start_factor must be in \(0, 1\]; got 0"),
    (lambda: sn.LinearLR(0.1, end_factor=1.5), r"end_factor must be in \[0, 1\]; got 1.5"),
    (lambda: sn.LinearLR(0.1, total_iters=0), "total_iters must be an integer >= 1"),
    (lambda: sn.Constant("0.1"), "lr must be a real number; got '0.1'"),
    (lambda: sn.SequentialLR([], []), "schedules must be a non-empty sequence"),
    (lambda: sn.SequentialLR([0.1, 0.2], [3]), "schedules must be a non-empty sequence of callables"),
    (lambda: sn.SequentialLR([sn.Constant(1)] * 2, []), "milestones must have one entry fewer"),
    (lambda: sn.SequentialLR([sn.Constant(1)] * 3, [5, 5]), r"milestones must be increasing; got \[5, 5\]"),
    (lambda: sn.SequentialLR([sn.Constant(1)] * 2, [0]), r"milestones\[0\] must be an integer >= 1"),
    (lambda: sn.SequentialLR([sn.Constant(1)] * 2, 3), "milestones must be a sequence"),
    (lambda: sn.StepLR(0.1, 2)(-1), r"t \(the step\) must be an integer >= 0; got -1"),
    (lambda: sn.CosineAnnealingLR(0.1, 2)(1.5), r"t \(the step\) must be an integer; got 1.5"),
])
def test_bad_arguments_are_named(make, match):
    with pytest.raises((TypeError, ValueError), match=match):
        make()


# --- parity with torch.optim.lr_scheduler ----------------------------------------


def _torch_rates(make_scheduler, lr, steps):
    """The rate PyTorch's optimiser uses for each of ``steps`` updates."""
    torch = pytest.importorskip("torch")
    w = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([w], lr=lr)
    scheduler = make_scheduler(opt)
    rates = []
    for _ in range(steps):
        rates.append(opt.param_groups[0]["lr"])
        opt.step()
        scheduler.step()
    return np.array(rates)


@pytest.mark.parametrize("ours, theirs, steps", [
    (lambda: sn.StepLR(0.1, step_size=7, gamma=0.3),
     lambda opt, S: S.StepLR(opt, step_size=7, gamma=0.3), 40),
    (lambda: sn.CosineAnnealingLR(3e-3, T_max=25, eta_min=1e-5),
     lambda opt, S: S.CosineAnnealingLR(opt, T_max=25, eta_min=1e-5), 70),
    (lambda: sn.CosineAnnealingLR(0.5, T_max=10),
     lambda opt, S: S.CosineAnnealingLR(opt, T_max=10), 30),
    (lambda: sn.LinearLR(0.2, start_factor=0.05, end_factor=0.9, total_iters=12),
     lambda opt, S: S.LinearLR(opt, start_factor=0.05, end_factor=0.9, total_iters=12),
     20),
    (lambda: sn.SequentialLR([sn.LinearLR(0.1, start_factor=0.1, total_iters=5),
                              sn.CosineAnnealingLR(0.1, T_max=20, eta_min=1e-3)], [5]),
     lambda opt, S: S.SequentialLR(opt, [S.LinearLR(opt, start_factor=0.1, total_iters=5),
                                         S.CosineAnnealingLR(opt, T_max=20, eta_min=1e-3)],
                                   milestones=[5]), 25),
])
@pytest.mark.filterwarnings("ignore::UserWarning")  # PyTorch's own warnings
def test_rates_match_pytorch_schedulers(ours, theirs, steps):
    torch = pytest.importorskip("torch")
    schedule = ours()
    base = schedule.lr if hasattr(schedule, "lr") else schedule.schedules[0].lr
    expected = _torch_rates(lambda opt: theirs(opt, torch.optim.lr_scheduler), base,
                            steps)
    got = np.array([schedule(t) for t in range(steps)])
    # PyTorch updates recursively (a product per step): rounding, nothing more
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-15)
