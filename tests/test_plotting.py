"""Tests for scratchnet.plotting: each figure draws the data it should (headless)."""

import math

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgb

import scratchnet as sn
from scratchnet import plotting
from scratchnet.plotting.style import CLASS_COLORS


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _normal_pdf(x, mu, sigma):
    return np.exp(-0.5 * ((x - mu) / sigma) ** 2) / (sigma * math.sqrt(2 * math.pi))


# --- the package ----------------------------------------------------------------------

DRAWING_FUNCTIONS = ["plot_convergence", "plot_kl_fits", "plot_loss_landscape",
                     "plot_margin_losses", "plot_oracle", "plot_posterior_fit",
                     "plot_posterior_map", "plot_reliability_diagram",
                     "plot_training_curve"]


def test_every_figure_is_drawn_by_a_function_of_sn_plotting():
    assert sorted(plotting.__all__) == sorted(["CLASS_COLORS", *DRAWING_FUNCTIONS])
    for name in DRAWING_FUNCTIONS:
        assert callable(getattr(sn.plotting, name))
    # what computes rather than draws lives in sn.metrics only
    for name in ("moving_average", "loss_landscape", "fit_gaussian_by_kl",
                 "GaussianFit", "expected_calibration_error", "calibration_bins"):
        assert not hasattr(plotting, name) and hasattr(sn.metrics, name)


# --- posterior fit ----------------------------------------------------------------


def test_posterior_fit_draws_posterior_network_and_densities():
    task = sn.tasks.separated()
    x = np.linspace(-4, 7, 100)
    # N(0, 1) vs N(3, 1), equal priors: log P(c2|x)/P(c1|x) = 3x - 9/2
    p1 = 1 / (1 + np.exp((6 * x - 9) / 2))
    probs = np.stack([np.column_stack([q, 1 - q]) for q in (np.full(100, 0.5), p1 * 0.9)])
    ax = plotting.plot_posterior_fit(task, x, probs, labels=["10 steps", "final"])
    lines = ax.get_lines()
    assert len(lines) == 2 + 2 * 2 + 1   # posteriors, snapshots, decision boundary
    solid, dashed, (boundary,) = lines[:2], lines[2:6], lines[6:]
    assert boundary.get_xdata() == [1.5, 1.5]   # 3x - 9/2 = 0
    assert boundary.get_label() == "Bayes decision boundary: x = 1.500"
    np.testing.assert_allclose(solid[0].get_ydata(), p1, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(solid[1].get_ydata(), 1 - p1, rtol=1e-12, atol=1e-15)
    assert all(line.get_linestyle() == "-" for line in solid)
    assert all(line.get_linestyle() == "--" for line in dashed)
    np.testing.assert_allclose(dashed[2].get_ydata(), 0.9 * p1)
    np.testing.assert_allclose(dashed[3].get_ydata(), 1 - 0.9 * p1)
    # one colour per class: each snapshot's class-2 curve is class 2's colour,
    # lightened (first) or darkened (last); never a grey shared by both classes
    blue, orange = (np.array(to_rgb(c)) for c in CLASS_COLORS[:2])
    for line, base in zip(dashed, (blue, orange, blue, orange)):
        rgb = np.array(to_rgb(line.get_color()))
        assert np.ptp(rgb) > 0.2   # not a grey
        assert np.argmax(rgb) == np.argmax(base) and np.argmin(rgb) == np.argmin(base)
    dark, light = (np.array(to_rgb(dashed[j].get_color())) for j in (3, 1))
    assert np.all(dark <= orange) and dark.sum() < orange.sum() - 0.3   # the last
    assert np.all(light >= orange) and light.sum() > orange.sum() + 0.3   # the first
    # the shaded class densities P(x|c) P(c) reach 0.5 * N(0; 0, 1) and 0.5 * N(3; 3, 1)
    assert len(ax.collections) == 2
    for shade, mu in zip(ax.collections, (0.0, 3.0)):
        top = shade.get_paths()[0].vertices[:, 1].max()
        assert top == pytest.approx(0.5 * _normal_pdf(x, mu, 1.0).max(), rel=1e-12)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert r"$P(c_1\mid x)$" in labels and r"$q(c\mid x)$, final" in labels


def test_posterior_fit_without_network_or_densities():
    ax = plotting.plot_posterior_fit(sn.tasks.sparse_tail(), np.linspace(-4, 7, 50),
                                     densities=False)
    assert len(ax.get_lines()) == 2 + 2 and len(ax.collections) == 0
    # N(0, 2^2) vs N(3, 1): -x^2/8 - log 2 = -(x - 3)^2 / 2, i.e.
    # 3x^2 - 24x + 36 - 8 log 2 = 0, whose roots are 1.582 and 6.418
    disc = math.sqrt(24**2 - 12 * (36 - 8 * math.log(2)))
    roots = [(24 - disc) / 6, (24 + disc) / 6]
    drawn = [line.get_xdata()[0] for line in ax.get_lines()[2:]]
    assert drawn == pytest.approx(roots, rel=1e-12)
    assert ax.get_lines()[2].get_label() == "Bayes decision boundary: x = 1.582, 6.418"
    assert [t.get_text() for t in ax.texts] == ["x = 1.582", "x = 6.418"]
    ax = plotting.plot_posterior_fit(sn.tasks.sparse_tail(), np.linspace(-4, 7, 50),
                                     densities=False, boundaries=False)
    assert len(ax.get_lines()) == 2
    # only the boundaries inside the plotted range
    ax = plotting.plot_posterior_fit(sn.tasks.sparse_tail(), np.linspace(-4, 5, 50))
    assert [t.get_text() for t in ax.texts] == ["x = 1.582"]


def test_posterior_fit_rejects_bad_input():
    task = sn.tasks.separated()
    x = np.linspace(-4, 7, 10)
    with pytest.raises(ValueError, match=r"probs must have shape"):
        plotting.plot_posterior_fit(task, x, np.full((10, 3), 1 / 3))
    with pytest.raises(ValueError, match="labels must have one entry"):
        plotting.plot_posterior_fit(task, x, np.full((2, 10, 2), 0.5), labels=["a"])
    task2d = sn.GaussianClasses([[0.0, 0.0], [1.0, 1.0]], np.stack([np.eye(2)] * 2))
    with pytest.raises(ValueError, match="one-dimensional"):
        plotting.plot_posterior_fit(task2d, x)


# --- convergence and training curves -----------------------------------------------


def test_convergence_one_line_per_task_and_recipe_with_reference():
    rows = [{"task": t, "recipe": r, "step": s, "expected_kl": k / s, "max_abs_error": 0.0}
            for t, k in (("a", 1.0), ("b", 2.0)) for r in ("r1", "r2")
            for s in (100, 10, 1000)]
    ax = plotting.plot_convergence(rows, "expected_kl", reference={"b": (0.1, 0.3)})
    lines = ax.get_lines()
    assert len(lines) == 6   # 4 curves, the reference bar, its legend entry
    assert lines[5].get_label() == "original study, 10,000 steps"
    assert lines[0].get_xdata().tolist() == [10, 100, 1000]   # sorted by step
    np.testing.assert_allclose(lines[2].get_ydata(), [0.2, 0.02, 0.002])
    assert lines[0].get_color() == lines[1].get_color() != lines[2].get_color()
    assert lines[0].get_linestyle() != lines[1].get_linestyle()
    assert lines[4].get_xdata().tolist() == [10_000, 10_000]
    assert lines[4].get_ydata().tolist() == [0.1, 0.3]
    assert lines[4].get_color() == lines[2].get_color()   # in task b's colour
    assert ax.get_xscale() == ax.get_yscale() == "log"
    # zeros cannot be drawn on a log axis and are left out
    ax = plotting.plot_convergence(rows, "max_abs_error")
    assert all(len(line.get_xdata()) == 0 for line in ax.get_lines())


def test_convergence_legend_tells_recipes_by_line_style_and_tasks_by_colour():
    rows = [{"task": t, "recipe": r, "step": s, "expected_kl": 1 / s}
            for t in ("a", "b") for r in ("original", "covering") for s in (10, 100)]
    ax = plotting.plot_convergence(rows, "expected_kl", reference={"a": (0.1, 0.2)},
                                   reference_label="original study (Xie, 2024)")
    legend = ax.get_legend()
    texts = [t.get_text() for t in legend.get_texts()]
    assert texts == ["task a", "task b", "recipe original", "recipe covering",
                     "original study (Xie, 2024), 10,000 steps"]
    handles = legend.legend_handles
    # tasks: solid lines in two colours; recipes: black lines in two line styles
    assert handles[0].get_color() != handles[1].get_color()
    assert handles[0].get_linestyle() == handles[1].get_linestyle() == "-"
    assert handles[2].get_color() == handles[3].get_color() == "black"
    assert handles[2].get_linestyle() == "-" and handles[3].get_linestyle() == "--"
    # and each drawn curve has the style of its recipe's entry
    curves = {line.get_label(): line for line in ax.get_lines()}
    assert curves["b, covering"].get_linestyle() == handles[3].get_linestyle()
    assert curves["b, covering"].get_color() == handles[1].get_color()


def test_figures_that_name_the_original_study_cite_it():
    citation = ('Yudi Xie, "How do we interpret the outputs of a neural network trained '
                'on classification?", 2024, '
                "https://yudixie.github.io/blog/2024/interpret-classification/")
    assert sn.experiments.ORIGINAL_STUDY == citation
    result = sn.experiments.run("separated", "original", steps=20)
    for fig in (sn.experiments.convergence_figure([result]),
                sn.experiments.posterior_figure(result)):
        assert any(citation in t.get_text().replace(",\n", ", ") for t in fig.texts)
    legend = sn.experiments.convergence_figure([result]).legends[0]
    assert "original study (Xie, 2024), right panel, 10,000 steps" in [
        t.get_text() for t in legend.get_texts()]


def test_the_convergence_figure_says_its_seeds_and_both_panels_share_its_legend():
    runs = [sn.experiments.run("separated", "textbook", steps=20, seed=s)
            for s in (0, 1, 2)]
    fig = sn.experiments.convergence_figure(runs)
    assert fig._suptitle.get_text().endswith(": median and range over 3 seeds")
    assert not any(ax.get_legend() for ax in fig.axes)   # one legend, the figure's
    (legend,) = fig.legends
    renderer = FigureCanvasAgg(fig).get_renderer()
    below = legend.get_window_extent(renderer)
    boxes = [ax.get_window_extent(renderer) for ax in fig.axes]
    assert all(below.y1 < box.y0 for box in boxes)   # under both panels, across them
    assert below.x0 < boxes[0].x1 and below.x1 > boxes[1].x0
    one = sn.experiments.convergence_figure(runs[:1])
    assert one._suptitle.get_text().endswith(": one seed (0) per curve")


def test_the_posterior_figure_gives_each_axis_label_one_meaning():
    x = np.linspace(-4, 7, 50)
    ax = plotting.plot_posterior_fit(sn.tasks.separated(), x)
    assert ax.get_ylabel() == r"probability $P(c\mid x)$, $q(c\mid x)$"
    (right,) = ax.child_axes   # the densities, on the same scale
    assert right.get_ylabel() == r"density $P(x\mid c)\,P(c)$"
    assert len(ax.figure.axes) == 1
    bare = plotting.plot_posterior_fit(sn.tasks.separated(), x, densities=False)
    assert not bare.child_axes


def test_training_curve_smooths_and_marks_the_bayes_loss():
    losses = np.arange(1.0, 11.0)
    ax = plotting.plot_training_curve(losses, bayes_loss=0.5, window=3)
    raw, smooth, floor = ax.get_lines()
    np.testing.assert_array_equal(raw.get_ydata(), losses)
    np.testing.assert_allclose(smooth.get_ydata(), [1, 1.5, 2, 3, 4, 5, 6, 7, 8, 9])
    assert floor.get_ydata().tolist() == [0.5, 0.5]
    assert raw.get_xdata().tolist() == list(range(1, 11))


# --- losses --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["mse", "cross_entropy"])
def test_loss_landscape_plot(kind):
    ax = plotting.plot_loss_landscape(kind, resolution=41)
    assert ax.collections, "no contours drawn"
    assert len(ax.figure.axes) == 2   # the axes and its colour bar
    assert ("MSE" in ax.get_title()) == (kind == "mse")


def test_margin_losses_lines():
    m = np.linspace(-5, 5, 101)
    ax = plotting.plot_margin_losses(m)
    log_loss, hinge, zero_one = ax.get_lines()
    np.testing.assert_allclose(log_loss.get_ydata(), np.log1p(np.exp(-m)), rtol=1e-12)
    np.testing.assert_array_equal(hinge.get_ydata(), np.maximum(0, 1 - m))
    np.testing.assert_array_equal(zero_one.get_ydata(), (m <= 0).astype(float))
    # stable for huge margins: ln(1 + e^{1000}) = 1000
    ax = plotting.plot_margin_losses([-1000.0, 1000.0])
    assert ax.get_lines()[0].get_ydata().tolist() == [1000.0, 0.0]


# --- KL asymmetry -------------------------------------------------------------------


def _mixture(grid):
    return 0.3 * _normal_pdf(grid, -2.0, 0.5) + 0.7 * _normal_pdf(grid, 2.5, 0.8)


def test_kl_fits_plot():
    grid = np.linspace(-8, 10, 601)
    ax = plotting.plot_kl_fits(grid, _mixture(grid))
    p, forward, reverse = ax.get_lines()
    np.testing.assert_allclose(p.get_ydata(), _mixture(grid))
    fit = sn.metrics.fit_gaussian_by_kl(_mixture(grid), grid, "reverse")
    np.testing.assert_allclose(reverse.get_ydata(), _normal_pdf(grid, fit.mu, fit.sigma))
    assert "mode covering" in forward.get_label()
    assert "mode seeking" in reverse.get_label()


# --- calibration ----------------------------------------------------------------------


def test_reliability_bin_edges_are_right_closed():
    # 0.3 belongs to (0.2, 0.3] even though 0.3 * 10 is 3.0000000000000004
    probs = np.array([[0.3, 0.3, 0.2, 0.2]])
    ax = plotting.plot_reliability_diagram(probs, [0])
    assert [bar.get_height() for bar in ax.patches][2] == 1.0
    assert "ECE = 0.700" in ax.get_title()


def test_reliability_diagram_bars_are_bin_accuracies():
    probs = np.array([[0.95, 0.05], [0.92, 0.08], [0.65, 0.35], [0.3, 0.7]])
    targets = np.array([0, 1, 0, 0])
    ax = plotting.plot_reliability_diagram(probs, targets, n_bins=5)
    heights = [bar.get_height() for bar in ax.patches]
    assert heights == pytest.approx([0, 0, 0, 0.5, 0.5])   # (0.6, 0.8]: 1 of 2
    assert [bar.get_x() for bar in ax.patches] == pytest.approx([0, 0.2, 0.4, 0.6, 0.8])
    # per bin |number right - summed confidence| / n
    ece = (abs(1 - (0.95 + 0.92)) + abs(1 - (0.65 + 0.7))) / 4
    assert f"{ece:.3f}" in ax.get_title()


# --- oracle and 2-D maps -----------------------------------------------------------


def test_oracle_scatter_offsets():
    task = sn.tasks.unequal_variance()

    def shrunk(x):   # a model halfway between the posterior and uniform
        return 0.5 * task.posterior(x) + 0.25

    ax = plotting.plot_oracle(task, shrunk, n=200, rng=3)
    x, _ = task.sample(200, np.random.default_rng(3))
    posterior = task.posterior(x)
    assert len(ax.collections) == 2
    for i, scatter in enumerate(ax.collections):
        offsets = np.asarray(scatter.get_offsets())
        np.testing.assert_allclose(offsets[:, 0], posterior[:, i])
        np.testing.assert_allclose(offsets[:, 1], 0.5 * posterior[:, i] + 0.25)
    assert ax.get_lines()[0].get_xydata().tolist() == [[0, 0], [1, 1]]
    with pytest.raises(ValueError, match="shape"):
        plotting.plot_oracle(task, lambda x: np.ones((len(x), 3)) / 3, n=5)


def test_posterior_map_blends_class_colours():
    means = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 3.0]])
    task = sn.GaussianClasses(means, np.stack([np.eye(2)] * 3))
    ax = plotting.plot_posterior_map(task, limits=[(-2, 5), (-3, 4)], resolution=15,
                                     samples=30, rng=0)
    image = ax.images[0].get_array()
    assert image.shape == (15, 15, 3)
    # pixel (row i, column j) is at (x1, x2) = (xs[j], ys[i]); isotropic equal
    # covariances and priors: posterior = softmax(-|x - mu_c|^2 / 2)
    xs, ys = np.linspace(-2, 5, 15), np.linspace(-3, 4, 15)
    point = np.array([xs[4], ys[9]])
    logits = -0.5 * ((point - means) ** 2).sum(axis=1)
    posterior = np.exp(logits - logits.max())
    posterior /= posterior.sum()
    colours = np.array([to_rgb(c) for c in plotting.CLASS_COLORS[:3]])
    np.testing.assert_allclose(image[9, 4], posterior @ colours, rtol=1e-10)
    assert len(ax.get_legend().get_texts()) == 3
    assert len(ax.collections) >= 2   # the contours and the samples
    with pytest.raises(ValueError, match="two-dimensional"):
        plotting.plot_posterior_map(sn.tasks.separated())


def test_posterior_map_of_a_model_and_default_limits():
    task = sn.GaussianClasses([[0.0, 0.0], [2.0, 2.0]], np.stack([np.eye(2)] * 2))
    uniform = lambda x: np.full((len(x), 2), 0.5)   # noqa: E731
    ax = plotting.plot_posterior_map(task, uniform, resolution=8)
    assert not ax.collections   # a constant map has no contours
    low, high = task.support()
    assert ax.get_xlim() == pytest.approx((low[0], high[0]))
    mixed = 0.5 * np.array(to_rgb(plotting.CLASS_COLORS[0])) + 0.5 * np.array(
        to_rgb(plotting.CLASS_COLORS[1]))
    np.testing.assert_allclose(ax.images[0].get_array()[3, 5], mixed)
