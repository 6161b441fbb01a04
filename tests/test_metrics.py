"""Tests for scratchnet.metrics: the numbers behind the figures, without matplotlib."""

import math
import subprocess
import sys

import numpy as np
import pytest

from scratchnet import metrics


def _normal_pdf(x, mu, sigma):
    return np.exp(-0.5 * ((x - mu) / sigma) ** 2) / (sigma * math.sqrt(2 * math.pi))


def test_computing_an_ece_does_not_load_matplotlib():
    code = (
        "import sys\n"
        "import scratchnet.metrics as m\n"
        "ece = m.expected_calibration_error([[0.9, 0.1], [0.3, 0.7]], [0, 0])\n"
        "print(round(ece, 12), 'matplotlib' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    # bins (0.8, 0.9]: 0.9 right, (0.6, 0.7]: 0.7 wrong -> (0.1 + 0.7) / 2
    assert out.stdout.split() == ["0.4", "False"]


# --- moving average ------------------------------------------------------------------


def test_moving_average_matches_direct_means():
    values = np.random.default_rng(0).normal(size=37)
    for window in (1, 5, 37, 100):
        expected = [values[max(0, i + 1 - window):i + 1].mean() for i in range(37)]
        np.testing.assert_allclose(metrics.moving_average(values, window), expected,
                                   rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError, match="window"):
        metrics.moving_average(values, 0)


# --- loss landscapes -----------------------------------------------------------------


def test_loss_landscape_values():
    x, y = np.meshgrid(np.linspace(-3, 3, 7), np.linspace(-2, 2, 5))
    np.testing.assert_allclose(metrics.loss_landscape("mse", x, y),
                               (x - 1) ** 2 + (y + 1) ** 2)
    ce = -np.log(np.exp(x) / (np.exp(x) + np.exp(y)))
    np.testing.assert_allclose(metrics.loss_landscape("cross_entropy", x, y), ce,
                               rtol=1e-12)
    # extreme activations: exact, no overflow warning
    assert metrics.loss_landscape("cross_entropy", 0.0, 1000.0) == pytest.approx(1000)
    assert metrics.loss_landscape("cross_entropy", 1000.0, 0.0) == 0.0
    with pytest.raises(ValueError, match="kind must be"):
        metrics.loss_landscape("hinge", x, y)


# --- KL asymmetry -------------------------------------------------------------------


def _mixture(grid):
    return 0.3 * _normal_pdf(grid, -2.0, 0.5) + 0.7 * _normal_pdf(grid, 2.5, 0.8)


def test_forward_kl_fit_matches_moments():
    grid = np.linspace(-8, 10, 3001)
    fit = metrics.fit_gaussian_by_kl(_mixture(grid), grid, "forward")
    mean = 0.3 * -2.0 + 0.7 * 2.5
    var = 0.3 * (0.25 + 4.0) + 0.7 * (0.64 + 6.25) - mean**2
    assert fit.mu == pytest.approx(mean, abs=1e-6)
    assert fit.sigma == pytest.approx(math.sqrt(var), rel=1e-6)
    assert fit.kl > 0


def test_reverse_kl_fit_seeks_a_mode_and_minimises_reverse_kl():
    grid = np.linspace(-8, 10, 1201)
    p = _mixture(grid)
    fit = metrics.fit_gaussian_by_kl(p, grid, "reverse")
    # the heavier, higher mode N(2.5, 0.8^2), slightly widened by nothing else
    assert fit.mu == pytest.approx(2.5, abs=0.05)
    assert fit.sigma == pytest.approx(0.8, abs=0.05)

    def reverse_kl(mu, sigma):   # KL(Q || P) on the grid, written out
        q = _normal_pdf(grid, mu, sigma)
        q, pp = q / q.sum(), p / p.sum()
        keep = q > 0
        return float(np.sum(q[keep] * np.log(q[keep] / pp[keep])))

    assert fit.kl == pytest.approx(reverse_kl(fit.mu, fit.sigma), rel=1e-6)
    forward = metrics.fit_gaussian_by_kl(p, grid, "forward")
    assert fit.kl < reverse_kl(forward.mu, forward.sigma)
    for mu, sigma in [(fit.mu + 0.1, fit.sigma), (fit.mu, fit.sigma * 1.1),
                      (-2.0, 0.5)]:
        assert fit.kl <= reverse_kl(mu, sigma)


def test_kl_fit_rejects_bad_input():
    grid = np.linspace(-1, 1, 5)
    with pytest.raises(ValueError, match="direction"):
        metrics.fit_gaussian_by_kl(np.ones(5), grid, "sideways")
    with pytest.raises(ValueError, match="non-negative"):
        metrics.fit_gaussian_by_kl(-np.ones(5), grid)
    with pytest.raises(ValueError, match="increasing"):
        metrics.fit_gaussian_by_kl(np.ones(5), grid[::-1])


# --- calibration ----------------------------------------------------------------------


def test_calibration_bins_match_a_loop_over_the_predictions():
    rng = np.random.default_rng(7)
    probs = rng.dirichlet([0.7, 0.7, 0.7], size=400)
    targets = rng.integers(0, 3, size=400)
    n_bins = 8
    counts, confidence, accuracy = [0] * n_bins, [0.0] * n_bins, [0.0] * n_bins
    for row, target in zip(probs.tolist(), targets.tolist()):
        conf = max(row)
        b = next(b for b in range(n_bins) if b / n_bins < conf <= (b + 1) / n_bins)
        counts[b] += 1
        confidence[b] += conf
        accuracy[b] += row.index(conf) == target
    bins = metrics.calibration_bins(probs, targets, n_bins)
    assert bins.counts.tolist() == counts
    assert bins.counts.sum() == 400 and counts[0] == counts[1] == 0   # conf >= 1/3
    filled = [b for b in range(n_bins) if counts[b]]
    np.testing.assert_allclose(bins.confidence[filled],
                               [confidence[b] / counts[b] for b in filled], rtol=1e-12)
    np.testing.assert_allclose(bins.accuracy[filled],
                               [accuracy[b] / counts[b] for b in filled], rtol=1e-12)
    assert bins.confidence[0] == bins.accuracy[0] == 0.0   # empty bins
    ece = sum(counts[b] * abs(accuracy[b] / counts[b] - confidence[b] / counts[b])
              for b in filled) / 400
    assert metrics.expected_calibration_error(probs, targets, n_bins) == pytest.approx(
        ece, rel=1e-12)


def test_ece_is_zero_when_calibrated():
    # confidence 0.8: 8 of 10 right; confidence 0.6: 3 of 5 right
    probs = np.array([[0.8, 0.2]] * 10 + [[0.4, 0.6]] * 5)
    targets = np.array([0] * 8 + [1] * 2 + [1] * 3 + [0] * 2)
    assert metrics.expected_calibration_error(probs, targets) == pytest.approx(0, abs=1e-15)


def test_ece_hand_computation():
    probs = np.array([[0.95, 0.05, 0.0], [0.1, 0.85, 0.05], [0.5, 0.3, 0.2],
                      [0.2, 0.3, 0.5], [0.3, 0.3, 0.4]])
    targets = np.array([0, 0, 0, 2, 1])
    # bins of width 0.1: (0.9, 1] {0.95 right}, (0.8, 0.9] {0.85 wrong},
    # (0.4, 0.5] {0.5 right, 0.5 right}, (0.3, 0.4] {0.4 wrong}
    expected = (abs(1 - 0.95) + abs(0 - 0.85) + 2 * abs(1 - 0.5) + abs(0 - 0.4)) / 5
    assert metrics.expected_calibration_error(probs, targets) == pytest.approx(expected)
    # with one bin: |accuracy - mean confidence|
    one = abs(3 / 5 - np.mean([0.95, 0.85, 0.5, 0.5, 0.4]))
    assert metrics.expected_calibration_error(probs, targets, n_bins=1) == pytest.approx(one)
    bins = metrics.calibration_bins(probs, targets)
    assert bins.counts.tolist() == [0, 0, 0, 1, 2, 0, 0, 0, 1, 1]
    assert bins.accuracy.tolist() == [0, 0, 0, 0, 1, 0, 0, 0, 0, 1]
    np.testing.assert_allclose(bins.confidence, [0, 0, 0, 0.4, 0.5, 0, 0, 0, 0.85, 0.95])


def test_ece_bin_edges_are_right_closed():
    # 0.3 belongs to (0.2, 0.3] even though 0.3 * 10 is 3.0000000000000004
    probs = np.array([[0.3, 0.3, 0.2, 0.2]])
    assert metrics.expected_calibration_error(probs, [0]) == pytest.approx(0.7)
    assert metrics.calibration_bins(probs, [0]).counts.tolist() == [0, 0, 1] + [0] * 7


def test_ece_rejects_bad_input():
    with pytest.raises(ValueError, match="sum to 1"):
        metrics.expected_calibration_error([[0.5, 0.6]], [0])
    with pytest.raises(ValueError, match="targets"):
        metrics.expected_calibration_error([[0.5, 0.5]], [2])
    with pytest.raises(ValueError, match="shape"):
        metrics.expected_calibration_error([[0.5, 0.5]], [0, 1])
    with pytest.raises(ValueError, match="n_bins"):
        metrics.calibration_bins([[0.5, 0.5]], [0], n_bins=0)
