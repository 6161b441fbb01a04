"""The three preset tasks: their parameters, Bayes losses and Bayes accuracies."""

import math

import numpy as np
import pytest

import scratchnet as sn
from scratchnet import tasks

# name -> (sigma1, mu1, sigma2, mu2, H(C|X) to 3 decimals, Bayes accuracy in %),
# equal priors; the values of the table in docs/experiments.md.
PRESETS = {
    "separated": (1.0, 0.0, 1.0, 3.0, 0.166, 93.32),
    "unequal-variance": (2.0, 0.0, 1.0, 1.0, 0.565, 69.50),
    "sparse-tail": (2.0, 0.0, 1.0, 3.0, 0.342, 85.39),
}


def test_tasks_registry():
    assert list(tasks.TASKS) == ["separated", "unequal-variance", "sparse-tail"]
    assert tasks.TASKS["separated"] is tasks.separated
    assert tasks.TASKS["unequal-variance"] is tasks.unequal_variance
    assert tasks.TASKS["sparse-tail"] is tasks.sparse_tail
    assert sn.tasks is tasks


@pytest.mark.parametrize("name", list(PRESETS))
def test_presets_have_the_reference_parameters(name):
    s1, m1, s2, m2, _, _ = PRESETS[name]
    task = tasks.TASKS[name]()
    assert isinstance(task, sn.GaussianClasses)
    assert task.name == name and task.num_classes == 2 and task.dim == 1
    np.testing.assert_array_equal(task.means, [m1, m2])
    np.testing.assert_array_equal(task.scales, [s1, s2])
    np.testing.assert_array_equal(task.priors, [0.5, 0.5])
    assert tasks.get_task(name).name == name
    assert tasks.get_task(name.replace("-", "_")).name == name
    assert tasks.get_task(name) is not tasks.get_task(name)       # fresh each time


@pytest.mark.parametrize("name", list(PRESETS))
def test_presets_reach_the_reference_bayes_loss_and_accuracy(name):
    *_, loss, accuracy = PRESETS[name]
    task = tasks.get_task(name)
    assert round(task.bayes_loss(), 3) == loss
    assert round(100 * task.bayes_accuracy(), 2) == accuracy


@pytest.mark.parametrize("name", list(PRESETS))
def test_preset_posterior_is_the_reference_formula(name):
    s1, m1, s2, m2, _, _ = PRESETS[name]
    x = np.linspace(-6.0, 8.0, 57)
    expo = (s2**2 * (x - m1) ** 2 - s1**2 * (x - m2) ** 2) / (2 * s1**2 * s2**2)
    ref = 1 / (1 + (s1 / s2) * np.exp(expo))
    np.testing.assert_allclose(tasks.get_task(name).posterior(x)[:, 0], ref, rtol=1e-12)


def test_separated_posterior_is_linear_in_the_logit():
    x = np.linspace(-3.0, 6.0, 19)
    np.testing.assert_allclose(tasks.separated().posterior(x)[:, 0],
                               1 / (1 + np.exp((6 * x - 9) / 2)), rtol=1e-12)
    np.testing.assert_allclose(tasks.separated().decision_boundaries(), [1.5])


def test_unequal_variance_crossings_near_zero_and_three():
    task = tasks.unequal_variance()
    left, right = task.decision_boundaries()
    assert abs(left) < 0.2 and abs(right - 3) < 0.2
    # roots of 3x^2/8 - x + 1/2 - log 2 = 0, written out
    a, b, c = 3 / 8, -1.0, 0.5 - math.log(2)
    disc = math.sqrt(b * b - 4 * a * c)
    np.testing.assert_allclose([left, right], [(-b - disc) / (2 * a), (-b + disc) / (2 * a)],
                               rtol=1e-13)
    p1 = task.posterior([left - 1, 0.5 * (left + right), right + 1])[:, 0]
    assert p1[0] > 0.5 and p1[1] < 0.5 and p1[2] > 0.5


def test_sparse_tail_second_crossing_is_where_data_are_rare():
    task = tasks.sparse_tail()
    first, second = task.decision_boundaries()
    assert round(first, 3) == 1.582 and round(second, 3) == 6.418
    np.testing.assert_allclose(task.posterior([first, second]), 0.5, rtol=1e-12)
    density = task.density([first, second, 3.0])
    assert density[1] < 0.01 * density[2] < density[0]
    # the second crossing lies outside the central 99% of the inputs
    assert task.support(0.99)[1] < second


def test_get_task_rejects_unknown_names():
    with pytest.raises(ValueError, match="unknown task 'overlap'; expected one of "
                                         "'separated', 'unequal-variance', 'sparse-tail'"):
        tasks.get_task("overlap")
    with pytest.raises(TypeError, match="name must be a string"):
        tasks.get_task(3)
