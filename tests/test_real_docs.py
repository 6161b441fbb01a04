"""The real-data numbers of docs/unknown_model.md come from the code (issue 40).

Each quoted number carries the seeds and splits that produce it.  The default
``real`` runs (15 networks each, minutes of CPU) are committed as their tables,
``docs/_static/real/NAME.md``; the page's summary must quote them.  The
calibration table's breast_cancer rows without cross-validation take seconds,
and are recomputed here from :func:`calibration_study`'s recipe.
"""

import re
from pathlib import Path

import pytest

pytest.importorskip("sklearn")

from scratchnet.experiments.real import calibration_study

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "unknown_model.md"
RUNS = ROOT / "docs" / "_static" / "real"


def _row(page, data, model):
    """The numbers of a row ``| data | model | nll | ece | accuracy |``."""
    line = next(line for line in page.splitlines()
                if line.startswith(f"| {data} | {model} |"))
    return [float(v) for v in line.strip("|").split("|")[2:]]


def test_the_calibration_rows_are_what_the_recipe_computes():
    page = PAGE.read_text(encoding="utf-8")
    assert "a stratified\n80 / 20 split with seed 0" in page
    assert "`NetworkClassifier(random_state=0)` with its defaults" in page
    rows = calibration_study("breast_cancer", which=(
        "network", "network, early stopping", "network, temperature"))
    for model, fresh in rows.items():
        quoted = _row(page, "breast_cancer", model)
        for q, f in zip(quoted, (fresh["nll"], fresh["ece"], fresh["accuracy"])):
            assert abs(q - f) <= max(0.1 * abs(f), 2e-3), (model, quoted, fresh)
    assert "| breast_cancer | network, isotonic | inf |" in page


def test_the_summary_quotes_the_committed_runs():
    page = PAGE.read_text(encoding="utf-8")
    table = page.split("<!-- real summary -->")[1].split("<!-- end real summary -->")[0]
    rows = [line for line in table.splitlines() if line.startswith("| ")][1:]
    assert len(rows) == 5
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        run = (RUNS / f"{cells[0]}.md").read_text(encoding="utf-8")
        assert "5 stratified 60/20/20 split(s) (split seeds 0..4)" in run
        assert "seeds 0..2" in run
        for cell in cells[1:]:
            for number in re.findall(r"\d+\.\d+ ± \d+\.\d+", cell):
                assert number in run, (cells[0], number)
