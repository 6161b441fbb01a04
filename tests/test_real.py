"""``python -m scratchnet real``: the digits study on any data set (issues 32, 40)."""

import csv

import numpy as np
import pytest
from _support import build_figures_without_rendering

pytest.importorskip("sklearn")
pytest.importorskip("matplotlib")

from sklearn.datasets import load_wine
from sklearn.preprocessing import StandardScaler

from scratchnet.experiments.digits import DigitsSettings
from scratchnet.experiments.digits_report import real_main
from scratchnet.experiments.real import (
    choose_scaling,
    load_table,
    read_csv,
    run_real,
    standardize,
)

TINY = ["--sizes", "40", "--steps", "30", "--seeds", "2", "--dim", "4", "--hidden",
        "8", "--jobs", "1", "--splits", "2"]


def _write(path, header, rows):
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)
    return path


@pytest.fixture
def wine_csv(tmp_path):
    """Wine with its label first, as the cultivars' names (strings)."""
    bunch = load_wine()
    names = np.array(["barbera", "barolo", "grignolino"])[bunch.target]
    rows = [[label, *map(repr, x.tolist())] for label, x in zip(names, bunch.data)]
    return _write(tmp_path / "cultivars.csv", ["cultivar", *bunch.feature_names], rows)


def test_a_csv_with_string_labels_is_the_bundled_data_set(wine_csv):
    ours = load_table(wine_csv, target="cultivar")
    bundled = load_table("wine")
    assert ours.name == "cultivars" and ours.features == bundled.features
    assert ours.classes.tolist() == ["barbera", "barolo", "grignolino"]
    for a, b in zip(ours.splits, bundled.splits):
        np.testing.assert_array_equal(a.x, b.x)
        np.testing.assert_array_equal(a.c, b.c)


def test_standardize_is_a_standard_scaler_fitted_on_the_training_split():
    table = load_table("breast_cancer")
    scaler = StandardScaler().fit(table.splits.train.x)
    for ours, raw in zip(standardize(table.splits), table.splits):
        np.testing.assert_allclose(ours.x, scaler.transform(raw.x), rtol=1e-12,
                                   atol=1e-12)


def test_the_command_runs_on_a_csv_file(wine_csv, tmp_path, capsys, monkeypatch):
    # the figures are built and named, not rendered: the example of
    # digits_report.real_main renders the same three on iris
    build_figures_without_rendering(monkeypatch)
    out = tmp_path / "out"
    code = real_main(["--dataset", str(wine_csv), "--target", "cultivar", *TINY,
                      "--out", str(out)])
    assert code == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == ["cultivars.md", "cultivars_kl.png", "cultivars_real.csv",
                     "cultivars_reliability.png", "cultivars_semi_synthetic.csv",
                     "cultivars_training.png"]
    captured = capsys.readouterr()
    assert "fitted to cultivars" in captured.out
    assert "Networks 13-8-8-3" in captured.out and "Real cultivars" in captured.out
    assert "cultivars: [3/3]" in captured.err        # the progress lines
    assert "4 principal components of the 13 features" in captured.err


def test_the_study_on_iris_uses_every_feature_and_class():
    result, table = run_real("iris", DigitsSettings(sizes=(40,), steps=30, seeds=2,
                                                    hidden=8, snapshots=3, dim=None))
    assert result.name == "iris" and result.fitted.task.dim == 4
    assert table.classes.tolist() == ["setosa", "versicolor", "virginica"]
    assert result.real["test_logits"].shape == (2, 30, 3)
    assert result.real["scores"]["generative"][0]["accuracy"] > 0.9


@pytest.mark.parametrize("header, rows, target, words", [
    (["a", "b", "label"], [[1, 2, "x"]] * 6 + [[1, 3, "y"]] * 6, "kind",
     "'kind' is not a column of .*; its columns are 'a', 'b', 'label'"),
    (["a", "b", "label"], [[1, 2, "x"]] * 6 + [[1, "tall", "y"]] * 6, None,
     r"line 8, column 'b': 'tall' is not a finite number"),
    (["a", "b", "label"], [[1, 2, "x"]] * 6 + [[1, "", "y"]] * 6, None,
     r"line 8, column 'b': '' is not a finite number"),
    (["a", "b", "label"], [[1, 2, "x"]] * 6 + [[1, "nan", "y"]] * 6, None,
     "'nan' is not a finite number"),
    (["a", "b", "label"], [[1, 2, "x"]] * 6 + [[1, 3, "y"]] * 3, None,
     "class 'y' of data has 3 sample.*at least 5 of each class"),
    (["a", "b", "label"], [[1, 2, "x"]] * 6, None, "one class, 'x'"),
    (["a", "b", "label"], [[1, 2, "x"]] * 6 + [[1, "y"]], None,
     "line 8: 2 fields where the header has 3"),
    # issue 40: each names the argument, the cause and the fix
    (["a", "b", "y"], [[1, 2, f"{0.1 * k:.3f}"] for k in range(40)], None,
     r"the labels of data has 40 distinct values in 40 rows \('0\.000', '0\.100', "
     r"'0\.200', \.\.\.\): it looks like a continuous quantity.*--target"),
    (["a", "b", "label"], [[1, 2, "x"]] * 6 + [[1, 3, ""]] * 6, None,
     r"line 8: the label \(column 'label'\) is empty; every row needs a class"),
    (["label"], [["x"]] * 6 + [["y"]] * 6, None,
     "has only the label column 'label': the study needs at least one numeric "
     "feature column"),
    (["a", "b", "label"], [[1, 2, "x"]] * 6 + [["1,5", 3, "y"]] * 6, None,
     r"'1,5' is not a finite number \(a decimal comma\? write numbers with a point\)"),
])
def test_bad_tables_are_named(tmp_path, header, rows, target, words):
    path = _write(tmp_path / "data.csv", header, rows)
    with pytest.raises(ValueError, match=words):
        load_table(path, target)


def test_excel_csv_files_read_as_the_user_sees_them(tmp_path):
    """A UTF-8 BOM, a trailing comma on every line, semicolons (issue 40)."""
    path = tmp_path / "excel.csv"
    path.write_bytes("\ufeffkind,w,h,\napple,1.5,2,\npear,3,4,\n".encode("utf-8"))
    x, labels, features = read_csv(path, target="kind")   # the BOM's first column
    assert labels.tolist() == ["apple", "pear"] and features == ["w", "h"]
    with pytest.raises(ValueError, match=r"the target \('h'\)"):   # the last, not ''
        read_csv(path)
    path.write_text("w;h;kind\n1.5;2;apple\n3;4;pear\n")
    x, labels, features = read_csv(path)
    assert x.tolist() == [[1.5, 2.0], [3.0, 4.0]] and labels.tolist() == ["apple",
                                                                         "pear"]


def test_a_missing_file_and_a_target_for_bundled_data_are_named(tmp_path):
    with pytest.raises(ValueError, match=r"--dataset '.*nowhere\.csv': no such file "
                       r"\(give the path of a CSV file, or one of digits"):
        load_table(tmp_path / "nowhere.csv")
    with pytest.raises(ValueError, match="--target 'species' applies to a CSV file; "
                       "iris is bundled with its own labels"):
        load_table("iris", target="species")


def test_read_csv_keeps_the_column_order_and_strips_blanks(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("kind, w ,h\n apple ,1.5, 2\n\npear,3,4\n")
    x, labels, features = read_csv(path, target="kind")
    assert x.tolist() == [[1.5, 2.0], [3.0, 4.0]]
    assert labels.tolist() == ["apple", "pear"] and features == ["w", "h"]


def test_bad_datasets_fail_with_a_message(tmp_path, capsys):
    assert real_main(["--dataset", "mnist", *TINY, "--out", str(tmp_path)]) == 1
    assert ("--dataset 'mnist': no such file (give the path of a CSV file, or one of "
            "digits, iris, wine, breast_cancer)") in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        real_main([*TINY])
    assert exit_.value.code == 2
    assert "--dataset" in capsys.readouterr().err


def test_help_names_the_data_sets_and_the_outputs(capsys):
    with pytest.raises(SystemExit):
        real_main(["--help"])
    text = capsys.readouterr().out
    assert "breast_cancer" in text and "--target" in text and "NAME_kl" in text


# ``python -m scratchnet digits`` is the study on the digits (their 359-image test
# split, a 64-input network): tests/test_digits_experiment.py checks it on its own
# run of the command.


def test_the_module_entry_point_dispatches_real(tmp_path):
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-m", "scratchnet", "real", "--help"],
                         capture_output=True, text=True, check=True)
    assert "scratchnet real" in out.stdout


def test_stratified_split_takes_two_shares():
    from scratchnet.datasets import load_digits, stratified_split
    targets = np.repeat([0, 1, 2], [10, 21, 7])
    train, held = stratified_split(targets, (0.8, 0.2), rng=3)
    assert sorted(np.concatenate([train, held]).tolist()) == list(range(38))
    assert np.bincount(targets[held]).tolist() == [2, 4, 1]   # round(0.2 n_c)
    with pytest.raises(ValueError, match="two or three positive shares"):
        stratified_split(targets, (0.5, 0.2, 0.2, 0.1))
    with pytest.raises(ValueError, match=r"encode other labels"):
        stratified_split(np.array(["a", "b"]))
    with pytest.raises(ValueError, match="three shares"):
        load_digits(fractions=(0.8, 0.2))


def test_standardising_the_digits_hurts_the_fitted_model_as_the_docs_say():
    from pathlib import Path

    from scratchnet.experiments.digits import fit_generative
    from scratchnet.losses import nll_loss
    page = (Path(__file__).resolve().parents[1] / "docs" / "unknown_model.md").read_text(
        encoding="utf-8")
    table = load_table("digits")
    said = []
    for splits in (standardize(table.splits), table.splits):
        fitted = fit_generative(splits, 16)
        nll = float(nll_loss(fitted.log_posterior(splits.test.x), splits.test.c))
        said.append((fitted.shrinkage, nll))
    assert said[0][0] == 0.6 and said[1][0] == 0.03
    assert (f"offer (0.6) and the fitted model's test NLL is {said[0][1]:.2f} nats, "
            f"against {said[1][1]:.3f}\nunstandardised") in page
    keep, why = choose_scaling([table.splits], 16, None)     # so auto keeps them raw
    assert not keep and why.startswith("not standardised")
