"""Tests for scratchnet.experiments: recipes, runs, metrics, tables and figures."""

import csv
import math

import numpy as np
import pytest

import scratchnet as sn
from scratchnet import experiments


def _separated_posterior(x):
    # N(0, 1) vs N(3, 1), equal priors: log P(c2|x)/P(c1|x) = 3x - 9/2
    p1 = 1 / (1 + np.exp((6 * x - 9) / 2))
    return np.column_stack([p1, 1 - p1])


def _normal_pdf(x, mu, sigma):
    return np.exp(-0.5 * ((x - mu) / sigma) ** 2) / (sigma * math.sqrt(2 * math.pi))


def _chapter_textbook_run(seed, steps, sizes=(1, 64, 2), loss=None):
    """The textbook recipe on separated, written with the chapters: sn.MLP trained
    by sn.train (SGD 0.1, batches of 64 drawn from the task), on the streams a run
    spawns from its seed (initial weights, data, batches)."""
    init, _, batches = [np.random.default_rng(s)
                        for s in np.random.SeedSequence(seed).spawn(3)]
    model = sn.MLP(list(sizes), rng=init)
    history = sn.train(model, sn.tasks.separated(), steps=steps, batch_size=64,
                       lr=0.1, optimizer="sgd", rng=batches, loss=loss)
    return model, history


@pytest.fixture(scope="module")
def textbook_run():
    return experiments.run("separated", "textbook", steps=600, seed=3)


def test_original_recipe_is_the_studys_setting():
    r = experiments.RECIPES["original"]
    assert r.sizes == (1, 64, 64, 2) and r.optimizer == "adam" and r.lr == 1e-3
    assert r.schedule == "constant" and r.batch_size == 64
    assert r.data == "fixed" and r.dataset_size == 100_000 and r.steps == 50_000
    assert r.snapshot_steps == (10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000,
                                20_000, 50_000)
    t = experiments.RECIPES["textbook"]
    assert (t.sizes, t.optimizer, t.lr, t.batch_size, t.data) == (
        (1, 64, 2), "sgd", 0.1, 64, "stream")
    assert set(experiments.RECIPES) == {"original", "textbook", "covering"}
    assert experiments.get_recipe(r) is r
    with pytest.raises(ValueError, match=r"unknown recipe 'fast'.*'original'"):
        experiments.get_recipe("fast")


def test_learning_rate_schedules():
    assert experiments.RECIPES["original"].learning_rate(100) == 1e-3
    cosine = experiments.Recipe("c", (1, 4, 2), "adam", 1e-2, 8, "stream", 100, (),
                                schedule="cosine", lr_final=1e-4)
    lr = cosine.learning_rate(100)
    assert lr(0) == pytest.approx(1e-2)
    assert lr(50) == pytest.approx((1e-2 + 1e-4) / 2)
    assert lr(100) == pytest.approx(1e-4)
    assert lr(25) == pytest.approx(1e-4 + (1e-2 - 1e-4) * (1 + math.cos(math.pi / 4)) / 2)


def test_run_rows_match_independent_metrics(textbook_run):
    result = textbook_run
    assert (result.task, result.recipe, result.seed) == ("separated", "textbook", 3)
    assert [row["step"] for row in result.rows] == [10, 20, 50, 100, 200, 500, 600]
    np.testing.assert_array_equal(result.eval_x, np.linspace(-4, 7, 100))
    posterior = _separated_posterior(result.eval_x)
    np.testing.assert_allclose(result.posterior, posterior, rtol=1e-12, atol=1e-15)
    probs = result.history.snapshot_probs
    assert probs.shape == (7, 100, 2)
    for row, p in zip(result.rows, probs):
        assert row["max_abs_error"] == pytest.approx(np.abs(p - posterior).max())
        assert row["bayes_accuracy"] == pytest.approx(0.9332, abs=5e-5)

    # the final snapshot is the returned model: integrate the metrics directly
    final = result.rows[-1]
    x = np.linspace(-10, 13, 20_001)   # 10 standard deviations around each class
    dx = x[1] - x[0]
    density = 0.5 * _normal_pdf(x, 0, 1) + 0.5 * _normal_pdf(x, 3, 1)
    p = _separated_posterior(x)
    logits = result.model.forward(x)
    log_q = logits - np.logaddexp(logits[:, :1], logits[:, 1:])
    q = np.exp(log_q)
    kl = (p * (np.log(p) - log_q)).sum(axis=1)
    # task.expected_kl uses Gauss-Legendre panels made for smooth integrands; a
    # ReLU network's kinks cost it about 1% here
    assert final["expected_kl"] == pytest.approx(np.sum(density * kl) * dx, rel=2e-2)
    chosen = p[np.arange(x.size), q.argmax(axis=1)]
    assert final["accuracy"] == pytest.approx(np.sum(density * chosen) * dx, abs=2e-5)
    bayes_loss = -np.sum(density * (p * np.log(p)).sum(axis=1)) * dx
    gap = result.history.losses[-500:].mean() - bayes_loss
    assert final["loss_gap"] == pytest.approx(gap, abs=1e-7)
    early = result.rows[1]   # step 20: the mean of the first 20 losses
    assert early["loss_gap"] == pytest.approx(
        result.history.losses[:20].mean() - bayes_loss, abs=1e-7)
    # and it learned: close to the posterior after 600 steps
    assert final["expected_kl"] < 0.01 and final["max_abs_error"] < 0.1


def test_run_is_the_chapter_mlp_trained_by_sn_train(textbook_run):
    """The engine's run against an independent one: the chapter sn.MLP, trained by
    sn.train on the same streams (initial weights, batches), read by a softmax
    computed here and measured against the posterior computed here."""
    model, history = _chapter_textbook_run(seed=3, steps=600)
    np.testing.assert_allclose(textbook_run.history.losses, history.losses,
                               rtol=1e-12, atol=1e-14)
    x = textbook_run.eval_x
    logits = model.forward(x[:, None])
    q = np.exp(logits - np.logaddexp(logits[:, :1], logits[:, 1:]))
    np.testing.assert_allclose(textbook_run.history.snapshot_probs[-1], q,
                               rtol=1e-10, atol=1e-13)
    final = textbook_run.rows[-1]
    assert final["max_abs_error"] == pytest.approx(
        np.abs(q - _separated_posterior(x)).max(), rel=1e-9)
    other = experiments.run("separated", "textbook", steps=600, seed=4)
    assert other.rows[-1]["expected_kl"] != final["expected_kl"]   # seeded


def test_a_run_with_one_output_is_the_chapters_network_with_its_loss(loss="mse"):
    """Recipe(sizes=(1, 16, 1), loss=...) end to end, seeds as one ensemble, each
    the chapter's sn.MLP trained by sn.train with the loss object (issue 29: "mse"
    on one output raised IndexError, or trained on the wrong targets)."""
    import dataclasses

    recipe = dataclasses.replace(experiments.RECIPES["textbook"], sizes=(1, 16, 1),
                                 loss=loss, steps=150, snapshot_steps=(50, 150))
    results = experiments.run("separated", recipe, seeds=[0, 1])
    for result in results:
        model, history = _chapter_textbook_run(result.seed, 150, (1, 16, 1), loss)
        np.testing.assert_allclose(result.history.losses, history.losses, rtol=1e-12,
                                   atol=1e-14)
        q1 = model.predict_proba(result.eval_x[:, None])[:, 1]
        np.testing.assert_allclose(result.history.snapshot_probs[-1][:, 1], q1,
                                   rtol=1e-10, atol=1e-13)
        assert result.rows[-1]["accuracy"] > 0.85      # it learned (Bayes: 0.933)
    with pytest.raises(ValueError, match=r"loss='cross_entropy' needs one output per "
                                         r"class, and sizes=\(1, 16, 1\) ends in one"):
        dataclasses.replace(recipe, loss="cross_entropy")


def test_original_recipe_counts_training_points_in_the_tail():
    result = experiments.run(sn.tasks.sparse_tail(), "original", steps=30, seed=1)
    assert [row["step"] for row in result.rows] == [10, 20, 30]
    extra = result.extra
    assert extra["n_train"] == 100_000
    assert extra["last_crossing"] == pytest.approx(6.418, abs=5e-4)
    x = np.linspace(extra["last_crossing"], 40, 200_001)
    density = 0.5 * _normal_pdf(x, 0, 2) + 0.5 * _normal_pdf(x, 3, 1)
    mass = np.sum((density[1:] + density[:-1]) / 2) * (x[1] - x[0])
    assert extra["tail_mass"] == pytest.approx(mass, rel=1e-6)
    assert experiments.tail_mass(sn.tasks.sparse_tail(), 6.418) == pytest.approx(
        4.9e-4, abs=5e-6)
    # a few dozen of the 100,000 points: Poisson around 49
    assert 20 < extra["n_tail"] < 90


def test_covering_recipe_runs_and_its_floor_is_the_training_bayes_loss():
    result = experiments.run("unequal-variance", "covering", steps=40, seed=0)
    assert [row["step"] for row in result.rows] == [10, 20, 40]
    # 40 batches of 64 fresh inputs, about 23% past the last crossing x = 2.848:
    # half of U(-6, 9) gives 0.5 * 6.152 / 15, half of P(X) 0.5 * 0.0548
    assert result.extra["n_train"] == 40 * 64
    assert 0.18 < result.extra["n_tail"] / 2560 < 0.29
    # floor: half the task's H(C|X), half the mean entropy of P(C|x) over U(-6, 9)
    x = np.linspace(-6, 9, 30_001)
    log_ratio = np.log(_normal_pdf(x, 0, 2)) - np.log(_normal_pdf(x, 1, 1))
    p1 = 1 / (1 + np.exp(-log_ratio))
    h = -(p1 * np.log(p1) + (1 - p1) * np.log1p(-p1))
    floor = 0.5 * sn.tasks.unequal_variance().bayes_loss() + 0.5 * h.mean()
    gap = result.history.losses.mean() - floor
    assert result.rows[-1]["loss_gap"] == pytest.approx(gap, abs=1e-4)


def test_covering_recipe_learns_the_sparse_tail():
    """The claim of the recipe: posterior everywhere on [-4, 7] after 10,000 steps."""
    result = experiments.run("sparse-tail", "covering", seed=0)
    final = result.rows[-1]
    assert final["step"] == 10_000
    assert final["max_abs_error"] < 0.03
    assert final["expected_kl"] < 1e-3


def test_run_rejects_bad_input():
    with pytest.raises(ValueError, match="unknown task"):
        experiments.run("nope", "original")
    with pytest.raises(ValueError, match="steps"):
        experiments.run("separated", "original", steps=0)
    task2d = sn.GaussianClasses([[0.0, 0.0], [1.0, 1.0]], np.stack([np.eye(2)] * 2))
    with pytest.raises(ValueError, match="one-dimensional"):
        experiments.run(task2d, "textbook", steps=5)


def test_summarize_and_tables(textbook_run, tmp_path):
    short = experiments.run("separated", "original", steps=25, seed=0)
    rows = experiments.summarize([textbook_run, short])
    assert len(rows) == 7 + 3
    picked = experiments.summarize([textbook_run, short], steps=[100])
    assert [(r["recipe"], r["step"]) for r in picked] == [
        ("textbook", 100), ("textbook", 600), ("original", 25)]
    assert experiments.summarize(short, steps=[10], final=False)[0]["step"] == 10

    experiments.write_table(rows, tmp_path / "t.csv", tmp_path / "t.md")
    with open(tmp_path / "t.csv") as f:
        table = list(csv.DictReader(f))
    assert tuple(table[0]) == experiments.COLUMNS
    assert len(table) == 10
    assert float(table[3]["max_abs_error"]) == rows[3]["max_abs_error"]   # full precision
    markdown = (tmp_path / "t.md").read_text().splitlines()
    assert len(markdown) == 2 + 10
    assert markdown[0].startswith("| task | recipe |")
    assert "| separated | textbook | 3 | 600 |" in markdown[-4]
    assert markdown[-4].endswith("| 93.32% |")


@pytest.fixture(scope="module")
def seed_study():
    return experiments.run("separated", "textbook", steps=120, seeds=[2, 7, 9])


def test_a_seed_study_is_the_runs_of_its_seeds(seed_study):
    assert [r.seed for r in seed_study] == [2, 7, 9]
    alone = experiments.run("separated", "textbook", steps=120, seed=7)
    assert seed_study[1].rows == alone.rows
    np.testing.assert_array_equal(seed_study[1].history.losses, alone.history.losses)
    for result in seed_study:   # and each member is the chapters' network
        _, history = _chapter_textbook_run(seed=result.seed, steps=120)
        np.testing.assert_allclose(result.history.losses, history.losses, rtol=1e-12,
                                   atol=1e-14)
    with pytest.raises(ValueError, match="seeds must be distinct"):
        experiments.run("separated", "textbook", steps=5, seeds=[1, 1])
    with pytest.raises(TypeError, match="seeds must be a count or a sequence"):
        experiments.run("separated", "textbook", steps=5, seeds="3")


def test_summarize_over_seeds_gives_median_min_and_max(seed_study):
    rows = experiments.summarize(seed_study, over_seeds=True)
    assert [r["step"] for r in rows] == [10, 20, 50, 100, 120]
    for row in rows:
        values = [r["max_abs_error"] for s in seed_study for r in s.rows
                  if r["step"] == row["step"]]
        assert row["seeds"] == 3
        assert row["max_abs_error"] == sorted(values)[1]   # the median of three
        assert (row["max_abs_error_min"], row["max_abs_error_max"]) == (min(values),
                                                                        max(values))
    table = experiments.format_table(rows).splitlines()
    assert "median [min, max]" in table[0]


def test_posterior_figure_draws_the_median_and_the_range_over_seeds(seed_study):
    fig = experiments.posterior_figure(seed_study)
    ax = fig.axes[0]
    probs = np.stack([r.history.snapshot_probs[-1] for r in seed_study])  # (3, 100, 2)
    # 2 density fills, then one band per class for each snapshot drawn (100, 120)
    assert len(ax.collections) == 2 + 2 * 2
    dashed = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
    assert len(dashed) == 2 * 2
    for i, line in enumerate(dashed[2:]):   # step 120, classes 1 and 2
        np.testing.assert_allclose(line.get_ydata(), np.median(probs, axis=0)[:, i])
    for i, band in enumerate(ax.collections[4:]):
        ys = band.get_paths()[0].vertices[:, 1]
        assert ys.min() == pytest.approx(probs[:, :, i].min())
        assert ys.max() == pytest.approx(probs[:, :, i].max())
    assert "median and range over 3 seeds" in ax.get_title()
    with pytest.raises(ValueError, match="seeds of one task and recipe"):
        experiments.posterior_figure([seed_study[0], experiments.run("sparse-tail",
                                                                     "textbook", steps=20)])


def test_convergence_figure_shades_the_range_over_seeds(seed_study):
    fig = experiments.convergence_figure(seed_study)
    _, ax_max = fig.axes
    assert len(ax_max.collections) == 1   # one (task, recipe), one band
    ys = ax_max.collections[0].get_paths()[0].vertices[:, 1]
    rows = experiments.summarize(seed_study, over_seeds=True)
    assert ys.min() == pytest.approx(min(r["max_abs_error_min"] for r in rows))
    assert ys.max() == pytest.approx(max(r["max_abs_error_max"] for r in rows))
