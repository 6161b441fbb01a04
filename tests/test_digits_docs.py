"""The numbers of docs/unknown_model.md come from the code.

The networks' numbers are those of the committed default run
(``docs/_static/digits/digits.md``, written by ``python -m scratchnet digits``; 83 s of
CPU, too long to repeat here); the fitted generative model's are recomputed.
After a new run: copy its ``digits.md`` and its figures to
``docs/_static/digits/``, and update the page.
"""

import csv
import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sklearn")

from scratchnet.datasets import load_digits
from scratchnet.experiments.digits import DigitsSettings, fit_generative
from scratchnet.temperature import fit_temperature, temperature_nll

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "unknown_model.md"
RUN = ROOT / "docs" / "_static" / "digits" / "digits.md"


def _cells(text):
    """The cells of the data rows of the Markdown tables in ``text``."""
    rows = [line for line in text.splitlines()
            if line.startswith("|") and not line.startswith("|---")]
    return [cell.strip() for row in rows[1:] for cell in row.strip("|").split("|")]


def test_the_page_shows_the_committed_run():
    page, run = PAGE.read_text(encoding="utf-8"), RUN.read_text(encoding="utf-8")
    numbers = [c for c in _cells(run) if re.fullmatch(r"[\d.,]+( ± [\d.]+)?", c)]
    assert len(numbers) > 60
    missing = [c for c in numbers if c not in page]
    assert missing == []
    kl = re.search(r"test split: (.*) nats at T = 1; not reported after scaling", run)
    assert kl and kl.group(1) in page
    assert "five seeds (0-4)" in page and "seeds 0..4" in run
    defaults = DigitsSettings()
    assert f"{defaults.steps:,} steps" in run and defaults.seeds == 5


def test_the_fitted_model_numbers_are_what_the_code_computes():
    digits = load_digits()
    fitted = fit_generative(digits, 16)
    page = PAGE.read_text(encoding="utf-8")
    assert fitted.shrinkage == 0.03 and "(it chose 0.03; validation NLL 0.038)" in page
    assert f"{fitted.validation_nll[0.03]:.3f}" == "0.038"
    c = digits.test.c
    log_post = fitted.log_posterior(digits.test.x)
    t = fit_temperature(fitted.log_posterior(digits.validation.x), digits.validation.c)
    assert f"| fitted model, temperature T | - | {t:.3f} |" in page
    assert f"{temperature_nll(log_post, c, 1.0):.4f}" == "0.1682"
    assert f"{temperature_nll(log_post, c, t):.4f}" == "0.1009"
    losses = -log_post[np.arange(len(c)), c]
    assert f"{losses.max():.1f}" == "35.6" and f"{losses.sum():.1f}" == "60.4"
    assert "35.6 of the 60.4 nats summed over the 359 images" in page


def _medians(name, key, value):
    """{key: (steps, median over seeds of value)} from a committed CSV."""
    import csv

    with (RUN.parent / name).open() as f:
        rows = list(csv.DictReader(f))
    out = {}
    for k in sorted({r[key] for r in rows}, key=float) if key else [None]:
        mine = [r for r in rows if key is None or r[key] == k]
        steps = sorted({int(r["step"]) for r in mine})
        out[k] = (np.array(steps), np.array([np.median(
            [float(r[value]) for r in mine if int(r["step"]) == s]) for s in steps]))
    return out


def test_the_prose_says_what_the_committed_run_shows():
    page = " ".join(PAGE.read_text(encoding="utf-8").split())
    kl = _medians("digits_semi_synthetic.csv", "n", "expected_kl")
    final = {int(n): v[-1] for n, (_, v) in kl.items()}
    bayes = float(re.search(r"\| 100 \| ([\d.]+) \|", RUN.read_text()).group(1))
    assert f"On the draws of $n = 100$, $H(C \\mid X) = {bayes}$ nats" in page
    assert "falls by a factor of about 23, roughly as $n^{-0.7}$" in page
    assert round(final[100] / final[10000]) == 23
    assert round(np.log(final[100] / final[10000]) / np.log(100), 1) == 0.7
    assert "three and a half times the Bayes loss" in page
    assert round(final[10000] / bayes, 1) in (3.4, 3.5, 3.6)
    steps, v100 = kl["100"]
    assert ("With 100 samples the distance is lowest after about 600 steps (0.26) and "
            "rises to 0.34 by 6,000") in page
    assert steps[v100.argmin()] == 586 and f"{v100.min():.2f}" == "0.26"
    assert f"{v100[-1]:.2f}" == "0.34"
    steps, v1000 = kl["1000"]
    assert "the lowest point (0.055) is at about 1,000 steps and the end is 0.075" in page
    assert steps[v1000.argmin()] == 1048 and f"{v1000.min():.3f}" == "0.055"
    assert "both curves are still falling when training stops" in page
    assert kl["10000"][1].argmin() == len(steps) - 1
    assert kl["30000"][1].argmin() == len(steps) - 1
    assert "the KL is still 18 times the Bayes loss" in page
    assert round(final[1000] / bayes) == 18
    steps, nll = _medians("digits_real.csv", None, "test_nll")[None]
    _, acc = _medians("digits_real.csv", None, "test_accuracy")[None]
    assert ("test NLL is lowest after about 1,000 steps (0.118 [0.110, 0.129]) and then "
            "climbs to 0.160 by 6,000 steps") in page
    best = nll.argmin()
    assert steps[best] == 1048 and f"{nll[best]:.3f}" == "0.118"
    assert f"{nll[-1]:.3f}" == "0.160" and np.all(acc[best:] == acc[best])
    with (RUN.parent / "digits_real.csv").open() as f:
        selected = {int(r["seed"]): int(r["selected_step"]) for r in csv.DictReader(f)}
    assert f"(step {np.mean(list(selected.values())):,.0f} ± " in page
    assert 0.1188 - 0.0085 < nll.min() < 0.1188       # early stopping: near the best
