"""Notebook 09's prose says what its stored outputs show.

The stored outputs are those of a fresh run (the suite re-executes the
notebooks); each claim of the Markdown is checked here against them, with the
tolerance its wording allows.
"""

import re
from pathlib import Path

import numpy as np
import pytest

nbformat = pytest.importorskip("nbformat")

PATH = (Path(__file__).resolve().parents[1] / "notebooks"
        / "09_when_the_generative_model_is_unknown.ipynb")


@pytest.fixture(scope="module")
def nb():
    return nbformat.read(PATH, as_version=4)


def _prose(nb, words):
    text = " ".join(" ".join(c.source.split()) for c in nb.cells
                    if c.cell_type == "markdown")
    assert words in text, f"the prose no longer says {words!r}: update this test"


def _output(nb, marker):
    cells = [c for c in nb.cells if c.cell_type == "code" and marker in c.source]
    assert len(cells) == 1, f"{len(cells)} code cells contain {marker!r}"
    parts = []
    for out in cells[0].outputs:
        if out.get("output_type") == "stream":
            parts.append(out["text"])
        elif "text/markdown" in out.get("data", {}):
            parts.append(out["data"]["text/markdown"])
    return "\n".join(parts)


def _numbers(pattern, text):
    found = re.findall(pattern, text)
    assert found, f"no {pattern!r} in:\n{text}"
    return [tuple(float(v.replace(",", "")) for v in (f if isinstance(f, tuple) else (f,)))
            for f in found]


def test_the_split_and_the_fitted_model(nb):
    out = _output(nb, "load_digits()")
    _prose(nb, "about 108 images per class")
    counts = [int(v) for v in re.search(r"train .*classes \[(.*)\]", out).group(1).split(",")]
    assert sum(counts) == 1078 and 104 <= min(counts) and max(counts) <= 110
    out = _output(nb, "fit_generative(digits, dim=16)")
    assert "<- chosen" in out


def test_the_semi_synthetic_claims(nb):
    out = _output(nb, "Bayes loss H(C|X)")
    bayes_loss = _numbers(r"H\(C\|X\) = ([\d.]+)", out)[0][0]
    rows = _numbers(r"n = +([\d,]+): expected KL ([\d.]+) .*?lowest \(([\d.]+)\) at step ([\d,]+)",
                    out)
    n, kl, lowest, at = (np.array(v) for v in zip(*rows))
    _prose(nb, "with 100 samples their expected KL is tens of times the Bayes loss")
    assert 10 <= kl[0] / bayes_loss < 100
    _prose(nb, "each tenfold increase of $n$ divides it by only about three")
    ratios = kl[:-1] / kl[1:]
    assert np.all(np.diff(np.log10(n)) == 1) and np.all((2.5 <= ratios) & (ratios <= 4))
    _prose(nb, "after about a thousand batches the networks trained on 100 and on 1,000 "
               "samples move *away* from the posterior again")
    assert np.all((500 <= at[:2]) & (at[:2] <= 2000)) and np.all(kl[:2] > lowest[:2])
    _prose(nb, "with 10,000 samples the distance is still falling when training stops")
    assert at[2] == 2000   # the last step (DigitsSettings(steps=2000) in the notebook)
    _prose(nb, "a thousand samples leave the network several hundredths of a nat away")
    assert 0.02 <= kl[1] <= 0.1


def test_the_real_data_claims(nb):
    out = _output(nb, "median test NLL")
    step, nll, acc = (np.array(v) for v in zip(*_numbers(
        r"step +([\d,]+): median test NLL ([\d.]+), accuracy ([\d.]+)", out)))
    _prose(nb, "its test NLL reaches its lowest point after about a thousand batches and "
               "then creeps up while the accuracy stays put")
    best = int(np.argmin(nll))
    assert 500 <= step[best] <= 2000 and nll[-1] > nll[best]
    assert np.all(acc[best:] == acc[best])
    table = _output(nb, "display(Markdown(digits_table")
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.strip("|").split("|")]
            for line in table.splitlines() if line.startswith("| ") and "model |" not in line}
    _prose(nb, "each network ends at the step of its lowest validation NLL, about 1,250 "
               "batches here, and its test NLL there is lower than at the last step, for "
               "the same accuracy")
    assert 1000 <= float(rows["network, selected step"][1].split()[0]) <= 1500
    assert (float(rows["network, selected step"][3].split()[0])
            < float(rows["network, last step"][3].split()[0]))
    _prose(nb, "The networks' temperatures are kept at 1")
    assert rows["network, selected step, temperature T"][2].endswith("(kept at 1: 3 of 3)")
    _prose(nb, "its temperature is well above 1, and dividing by it lowers its test NLL "
               "without changing a single prediction")
    assert float(rows["fitted model, temperature T"][2]) > 1.5
    assert (float(rows["fitted model, temperature T"][3])
            < float(rows["fitted model, T=1"][3]))
    assert rows["fitted model, temperature T"][5] == rows["fitted model, T=1"][5]
    _prose(nb, "Both classify about 97-98% of the test images correctly")
    for key in ("network, selected step", "fitted model, T=1"):
        assert 0.965 <= float(rows[key][5].split()[0]) <= 0.985
    _prose(nb, "the mean KL from the fitted posterior to the network's outputs is about as "
               "large as either model's test NLL")
    kl = float(re.search(r"test split: ([\d.]+)", table).group(1))
    for key in ("network, selected step", "fitted model, T=1"):
        assert 0.5 <= kl / float(rows[key][3].split()[0]) <= 2
