"""``python -m scratchnet digits`` end to end, with tiny settings, and its parts."""

import subprocess
import sys

import numpy as np
import pytest
from _support import build_figures_without_rendering

pytest.importorskip("sklearn")
pytest.importorskip("matplotlib")

from scratchnet.datasets import load_digits
from scratchnet.experiments.digits import (
    DigitsSettings,
    fit_generative,
    run_digits,
)
from scratchnet.experiments.digits_report import digits_table, main

TINY = DigitsSettings(sizes=(40, 80), steps=30, seeds=2, dim=4, hidden=8,
                      eval_samples=500, snapshots=3)


@pytest.fixture(scope="module")
def result():
    return run_digits(TINY)


def test_the_command_writes_its_figures_and_tables(tmp_path, capsys, monkeypatch):
    # the figures are named, not rendered: write_digits's example renders all three
    build_figures_without_rendering(monkeypatch)
    code = main(["--sizes", "40,80", "--steps", "30", "--seeds", "2", "--dim", "4",
                 "--hidden", "8", "--jobs", "1", "--out", str(tmp_path / "out")])
    assert code == 0
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert names == ["digits.md", "digits_kl.png", "digits_real.csv",
                     "digits_reliability.png", "digits_semi_synthetic.csv",
                     "digits_training.png"]
    captured = capsys.readouterr()
    assert "| 80 |" in captured.out and "fitted model, temperature T" in captured.out
    # the study on the digits themselves: their test split, a 64-input network
    assert "test split 359 images" in captured.out
    assert "Networks 64-8-8-10" in captured.out
    assert "digits: [3/3]" in captured.err          # the progress lines
    rows = (tmp_path / "out" / "digits_semi_synthetic.csv").read_text().splitlines()
    assert rows[0] == "n,seed,step,expected_kl" and len(rows) > 1


def test_worker_processes_give_the_same_numbers(result):
    two = run_digits(TINY, jobs=2)
    for a, b in zip(result.synthetic, two.synthetic):
        np.testing.assert_array_equal(a["kl"], b["kl"])
    np.testing.assert_array_equal(result.real["test_logits"], two.real["test_logits"])


def test_the_numbers_hang_together(result):
    real = result.real
    scores = real["scores"]
    for before, after in zip(scores["network"], scores["network, T"]):
        assert before["accuracy"] == after["accuracy"]     # the argmax is kept
    for before, after in zip(scores["generative"], scores["generative, T"]):
        assert before["accuracy"] == after["accuracy"]
    assert np.all(real["kl_to_fitted"] >= 0)
    for out in result.synthetic:
        assert out["kl"].shape == (len(out["steps"]), 2) and np.all(out["kl"] >= 0)
        assert 0 <= out["bayes_loss"] < np.log(10)
    # the first snapshot's KL matches the network's own numbers, recomputed
    assert real["nll"].shape == (len(real["steps"]), 2)
    table = digits_table(result)
    assert "mean ± sd" in table and "seeds 0..1" in table


def test_the_generative_model_is_chosen_on_validation():
    digits = load_digits()
    fitted = fit_generative(digits, 8)
    assert fitted.shrinkage == min(fitted.validation_nll, key=fitted.validation_nll.get)
    assert fitted.task.dim == 8 and fitted.task.num_classes == 10
    log_post = fitted.log_posterior(digits.test.x)
    assert (log_post.argmax(axis=1) == digits.test.c).mean() > 0.9


@pytest.mark.parametrize("args, words", [
    (["--sizes", "5"], "--sizes: must be comma-separated integers >= 10"),
    (["--shrinkage", "2"], "--shrinkage: must be a number in [0, 1]"),
    (["--steps", "0"], "--steps"),
    (["--dim", "65"], "--dim: dim must be at most 64"),
])
def test_bad_options_cost_one_line(args, words, capsys):
    with pytest.raises(SystemExit) as info:
        main(args)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1


def test_an_output_path_under_a_file_is_refused(tmp_path):
    (tmp_path / "file").write_text("")
    out = subprocess.run(
        [sys.executable, "-m", "scratchnet.experiments.digits_report", "--out",
         str(tmp_path / "file")], capture_output=True, text=True)
    assert out.returncode == 2 and "must be a directory" in out.stderr


@pytest.mark.parametrize("kwargs, error, words", [
    ({"sizes": ()}, ValueError, "sizes must be a non-empty tuple"),
    ({"sizes": (1,)}, ValueError, "sizes"),
    ({"seeds": 0}, ValueError, "seeds must be an integer >= 1; got 0"),
    ({"steps": 2.5}, TypeError, "steps must be an integer"),
    ({"dim": 65}, ValueError, "dim must be at most 64"),
    ({"lr": -1.0}, ValueError, "lr must be in (0, inf)"),
    ({"shrinkage": 1.5}, ValueError, "shrinkage must be in [0, 1]"),
    ({"seed": -1}, ValueError, "seed must be an integer >= 0"),
])
def test_bad_settings_are_named(kwargs, error, words):
    with pytest.raises(error) as info:
        DigitsSettings(**kwargs)
    assert words in str(info.value)


def test_bad_arguments_to_run_digits_are_named():
    with pytest.raises(TypeError, match="settings must be a DigitsSettings"):
        run_digits({"steps": 10})
    with pytest.raises(ValueError, match="jobs must be an integer >= 1"):
        run_digits(TINY, jobs=0)
