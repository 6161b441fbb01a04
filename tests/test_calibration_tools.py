"""Calibration tools (issues 29 and 32): ECE of a binary probability vector, the
reliability diagram's counts, and titled figures."""

import numpy as np
import pytest

import scratchnet as sn

pytest.importorskip("matplotlib")
import matplotlib.pyplot as plt

from scratchnet import plotting
from scratchnet.plotting.digits import plot_calibration_over_training


def _hand_ece(p1, y, bins=10):
    """ECE of P(class 1) written out with a loop over bins (right-closed)."""
    conf = np.maximum(p1, 1 - p1)
    pred = (p1 > 0.5).astype(int)
    total = 0.0
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        inside = (conf > lo) & (conf <= hi)
        if inside.any():
            total += inside.sum() / len(y) * abs((pred[inside] == y[inside]).mean()
                                                 - conf[inside].mean())
    return total


def test_ece_takes_the_probability_of_class_one():
    rng = np.random.default_rng(0)
    p1 = rng.uniform(0.01, 0.99, size=500)
    p1 = p1[np.abs(p1 - 0.5) > 1e-3]                      # no ties at 1/2
    y = (rng.uniform(size=p1.size) < p1 ** 2).astype(int)
    expected = _hand_ece(p1, y)
    assert sn.metrics.expected_calibration_error(p1, y) == pytest.approx(
        expected, rel=1e-12, abs=0)
    both = np.stack([1 - p1, p1], axis=1)
    assert sn.metrics.expected_calibration_error(both, y) == pytest.approx(
        expected, rel=1e-12, abs=0)


@pytest.mark.parametrize("probs, words", [
    ([0.2, 1.2], r"probabilities of class 1 in \[0, 1\]; got 1.2"),
    ([-0.1, 0.5], "got -0.1"),
    (np.zeros((2, 2, 2)), r"shape \(n, M\), or \(n,\)"),
])
def test_bad_binary_vectors_are_named(probs, words):
    with pytest.raises(ValueError, match=words):
        sn.metrics.expected_calibration_error(probs, [0, 1])


def test_the_reliability_diagram_writes_counts_and_marks_small_bins():
    rng = np.random.default_rng(1)
    p1 = np.concatenate([rng.uniform(0.9, 1.0, 200), [0.55, 0.56, 0.57]])
    y = (rng.uniform(size=p1.size) < p1).astype(int)
    ax = plotting.plot_reliability_diagram(p1, y, min_count=10, title="model A")
    conf = np.maximum(p1, 1 - p1)
    counts = np.histogram(conf, bins=np.linspace(0, 1, 11))[0]
    assert [t.get_text() for t in ax.texts] == [str(n) for n in counts if n]
    hatched = [bar.get_hatch() == "//" for bar in ax.patches]
    assert hatched == [0 < n < 10 for n in counts]
    title = ax.get_title()
    assert title.startswith("model A: reliability, ECE = ") and "n = 203" in title
    assert "fewer than 10 samples" in [t.get_text() for t in ax.get_legend().texts]
    plt.close(ax.figure)


def test_the_training_figure_has_titles():
    axes = plot_calibration_over_training([10, 100], [[0.5], [0.3]], [[0.1], [0.05]])
    assert [ax.get_title() for ax in axes] == ["held-out negative log-likelihood",
                                               "expected calibration error"]
    plt.close(axes[0].figure)


def test_the_gitignore_names_the_commands_output_folders():
    from pathlib import Path
    ignored = (Path(__file__).resolve().parents[1] / ".gitignore").read_text().split()
    assert {"scratchnet-digits/", "scratchnet-real/"} <= set(ignored)
