"""The numbers of docs/unknown_model.md come from the code.

The networks' numbers are those of the committed default run
(``docs/_static/digits/digits.md``, written by ``python -m scratchnet digits``; 26 s of
CPU, too long to repeat here); the fitted generative model's are recomputed.
After a new run: copy its ``digits.md`` and its figures to
``docs/_static/digits/``, and update the page.
"""

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
    numbers = [c for c in _cells(run) if re.fullmatch(r"[\d.]+( \[[\d., ]+\])?", c)]
    assert len(numbers) > 30
    missing = [c for c in numbers if c not in page]
    assert missing == []
    kl = re.search(r"test split: (.*) nats at T = 1, (.*) after scaling", run)
    assert kl and kl.group(1) in page and kl.group(2) in page
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
    assert f"| fitted Gaussian classes, fitted $T$ | {t:.3f} |" in page
    assert f"{temperature_nll(log_post, c, 1.0):.4f}" == "0.1682"
    assert f"{temperature_nll(log_post, c, t):.4f}" == "0.1009"
    losses = -log_post[np.arange(len(c)), c]
    assert f"{losses.max():.1f}" == "35.6" and f"{losses.sum():.1f}" == "60.4"
    assert "35.6 of the 60.4 nats summed over the 359 images" in page
