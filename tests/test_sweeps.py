"""Sweeps over the two-Gaussian family: the grid, the runs, the table, the figures, Dask."""

import csv
import dataclasses
import subprocess
import sys

import numpy as np
import pytest
from _support import build_figures_without_rendering

import scratchnet as sn
from scratchnet import experiments
from scratchnet.__main__ import main


def _read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


# --- the grid ------------------------------------------------------------------------


def test_parse_axis_reads_ranges_and_lists():
    assert experiments.parse_axis("0.5:5:10", "mu2") == tuple(np.linspace(0.5, 5, 10))
    assert experiments.parse_axis("1:3:3", "sigma1") == (1.0, 2.0, 3.0)
    assert experiments.parse_axis("2:2:1", "sigma1") == (2.0,)
    assert experiments.parse_axis("-1, 0.5,3", "mu2") == (-1.0, 0.5, 3.0)
    assert experiments.parse_axis("16:64:4", "widths") == (16, 32, 48, 64)
    assert experiments.parse_axis([1000, 10_000], "steps") == (1000, 10_000)
    assert experiments.parse_axis(0.3, "prior1") == (0.3,)


@pytest.mark.parametrize("spec, name, message", [
    ("1:x", "mu2", r"mu2 must be start:stop:count \(count a positive integer\) or a "
                   r"comma-separated list of numbers; got '1:x'"),
    ("1:3:0", "mu2", "mu2 must be start:stop:count"),
    ("1:3:2.5", "sigma1", "sigma1 must be start:stop:count"),
    ("1,,2", "mu2", "comma-separated list of numbers; got '1,,2'"),
    ("", "mu2", "comma-separated list of numbers; got ''"),
    ("1:3:1", "sigma1", "a count of 1 needs start == stop; got '1:3:1'"),
    ("0:2:3", "sigma1", "sigma1 values must be positive; got 0"),
    ("0.5,1", "prior1", r"prior1 values must be in \(0, 1\); got 1"),
    ("nan", "mu2", "mu2 values must be a finite number; got nan"),
    ("1,2,1", "mu2", "mu2 values must be distinct; got '1,2,1'"),
    ("10.5", "steps", "steps values must be positive integers; got 10.5"),
    ("0", "widths", "widths values must be a positive integer; got 0"),
])
def test_parse_axis_errors_name_the_axis_and_the_spec(spec, name, message):
    with pytest.raises(ValueError, match=message):
        experiments.parse_axis(spec, name)


def test_parse_axis_and_the_grid_reject_bad_arguments():
    with pytest.raises(ValueError, match="name must be one of mu2, sigma1"):
        experiments.parse_axis("1", "mu1")
    with pytest.raises(TypeError, match="mu2 must be a string like '1:3:5'"):
        experiments.parse_axis({1: 2}, "mu2")
    with pytest.raises(ValueError, match="recipes must be distinct names from original"):
        experiments.Grid((1.0,), (1.0,), recipes=("nope",))
    with pytest.raises(ValueError, match="losses must be distinct names from "
                                         "cross_entropy, mse, hinge; got"):
        experiments.Grid((1.0,), (1.0,), losses=("l2",))
    with pytest.raises(ValueError, match="seeds must be distinct non-negative integers"):
        experiments.Grid((1.0,), (1.0,), seeds=(0, 0))
    with pytest.raises(ValueError, match="parts must be a positive integer; got 0"):
        experiments.Grid((1.0,), (1.0,)).units(parts=0)
    with pytest.raises(ValueError, match="jobs must be an integer >= 1; got 0"):
        experiments.sweep("1", "1", steps=(10,), seeds=1, jobs=0)
    with pytest.raises(TypeError, match="scheduler must be an address like"):
        pytest.importorskip("dask.distributed")
        experiments.sweep("1", "1", steps=(10,), seeds=1, scheduler=8786)
    with pytest.raises(ValueError, match="loss must be one of 'cross_entropy', 'mse', "
                                         "'hinge'; got 'l1'"):
        experiments.run("separated", dataclasses.replace(experiments.TEXTBOOK,
                                                         loss="l1"), steps=10)


def test_the_family_holds_the_study_tasks():
    for name, (mu2, sigma1) in experiments.STUDY_TASKS.items():
        task, study = experiments.family_task(mu2, sigma1), sn.tasks.get_task(name)
        np.testing.assert_allclose(task.decision_boundaries(),
                                   study.decision_boundaries(), rtol=1e-12)
        assert task.bayes_accuracy() == pytest.approx(study.bayes_accuracy(), rel=1e-12)
    assert experiments.family_task(2, 1.5, prior1=0.3).priors.tolist() == [0.3, 0.7]


def test_tail_crossing_finds_the_sparse_side():
    for name in ("unequal-variance", "sparse-tail"):   # sigma1 > 1: past the last crossing
        task = sn.tasks.get_task(name)
        last = task.decision_boundaries()[-1]
        assert experiments.tail_crossing(task) == (last, experiments.tail_mass(task, last))
    x, mass = experiments.tail_crossing(experiments.family_task(1.0, 0.625))
    first = experiments.family_task(1.0, 0.625).decision_boundaries()[0]
    assert x == first < 0   # sigma1 < 1: class 2 wins both tails, the left one is sparse
    sample = experiments.family_task(1.0, 0.625).sample(400_000, np.random.default_rng(0))[0]
    assert mass == pytest.approx(np.mean(sample < first), rel=0.05)
    x, mass = experiments.tail_crossing(sn.tasks.separated())   # one crossing: a tie
    assert (x, mass) == (1.5, pytest.approx(0.5))
    same = sn.GaussianClasses([0.0, 0.0], [1.0, 1.0])
    assert all(np.isnan(experiments.tail_crossing(same)))


def test_units_split_every_member_once_per_shape():
    grid = experiments.Grid("1:3:3", "1,2", losses=("cross_entropy", "hinge"),
                            widths=(8, 16), seeds=(4, 5), steps=(30, 10))
    assert grid.steps == (10, 30) and grid.runs == 6 * 2 * 2 * 2
    for parts in (1, 3, 8, 100):
        units = grid.units(parts)
        members = [(u.recipe, u.loss, u.width, m) for u in units for m in u.members]
        assert len(members) == len(set(members)) == grid.runs
        assert all(u.steps == (10, 30) for u in units)


# --- the runs --------------------------------------------------------------------------


def test_sweep_members_are_the_runs_alone_however_they_are_grouped():
    kwargs = {"steps": (20, 40), "seeds": (3, 7), "jobs": 1,
              "losses": "cross_entropy,mse"}
    one = experiments.sweep("1,3", "2", parts=1, **kwargs)
    many = experiments.sweep("1,3", "2", parts=8, **kwargs)
    assert one.rows == many.rows   # identical, to the last bit
    assert len(one.rows) == 2 * 2 * 2 * 2
    alone = experiments.run(experiments.family_task(3, 2),
                            dataclasses.replace(experiments.TEXTBOOK, loss="mse"),
                            steps=40, seed=7)
    row = next(r for r in one.rows if (r["mu2"], r["loss"], r["seed"], r["step"])
               == (3.0, "mse", 7, 40))
    for key in ("max_abs_error", "expected_kl", "accuracy", "loss_gap"):
        # the same network; the accuracies of all snapshots are one matrix product
        assert row[key] == pytest.approx(alone.rows[-1][key], rel=1e-12)


def test_other_losses_are_read_through_their_own_readout():
    """Squared error: the outputs clipped to [1e-4, 1] and renormalised; hinge:
    the one-hot decision (expected KL infinite), computed here from the outputs."""
    task = sn.tasks.separated()
    x = experiments.EVAL_X
    p1 = 1 / (1 + np.exp((6 * x - 9) / 2))   # N(0, 1) vs N(3, 1): P(c1 | x)
    posterior = np.column_stack([p1, 1 - p1])
    for loss in ("mse", "hinge"):
        recipe = dataclasses.replace(experiments.TEXTBOOK, loss=loss)
        result = experiments.run(task, recipe, steps=300, seed=0)
        row = result.rows[-1]
        outputs = result.model.forward(x[:, None])
        if loss == "mse":
            clipped = np.clip(outputs, 1e-4, 1.0)
            q = clipped / clipped.sum(axis=1, keepdims=True)
            assert 0 < row["expected_kl"] < np.inf
        else:
            q = (outputs == outputs.max(axis=1, keepdims=True)).astype(float)
            assert row["expected_kl"] == np.inf   # q = 0 where P(c|x) > 0
        np.testing.assert_allclose(result.history.snapshot_probs[-1], q, rtol=1e-12)
        assert row["max_abs_error"] == pytest.approx(np.abs(q - posterior).max())
        assert -0.05 < row["loss_gap"] < 0.3   # the mean loss minus its Bayes floor
    assert not hasattr(experiments, "readout") and not hasattr(experiments, "MSE_FLOOR")


# --- the command line, end to end ------------------------------------------------------


def test_sweep_command_writes_the_table_and_the_figures(tmp_path, capsys, monkeypatch):
    # the figures are built and named, not rendered: each kind is drawn by
    # test_experiments_robust.py's legends test, and written by the example of
    # experiments.save_sweep_figures
    build_figures_without_rendering(monkeypatch)
    code = main(["sweep", "--mu2", "1:3:2", "--sigma1", "1,2", "--steps", "20,40",
                 "--seeds", "2", "--losses", "cross_entropy,mse", "--widths", "16",
                 "--jobs", "1", "--out", str(tmp_path)])
    assert code == 0
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["losses.png", "phase_cross_entropy.png", "phase_mse.png",
                     "sweep.csv", "sweep.log", "sweep_summary.csv", "tail_mass.png"]
    for name in ("sweep.csv", "sweep.log", "sweep_summary.csv"):
        assert (tmp_path / name).stat().st_size > 0
    rows = _read_csv(tmp_path / "sweep.csv")
    assert tuple(rows[0]) == experiments.SWEEP_COLUMNS
    assert len(rows) == 4 * 2 * 2 * 2   # points x losses x seeds x budgets
    assert {(r["loss"], r["width"], r["step"]) for r in rows} == {
        (loss, "16", step) for loss in ("cross_entropy", "mse") for step in ("20", "40")}
    sparse = [r for r in rows if (r["mu2"], r["sigma1"]) == ("3.0", "2.0")]
    assert {r["crossings"] for r in sparse} == {"1.58166;6.41834"}
    assert all(float(r["tail_mass"]) == pytest.approx(4.9e-4, rel=0.01) for r in sparse)
    summary = _read_csv(tmp_path / "sweep_summary.csv")
    assert tuple(summary[0]) == experiments.SUMMARY_COLUMNS and len(summary) == 16
    assert all(float(r["max_abs_error_min"]) <= float(r["max_abs_error"])
               <= float(r["max_abs_error_max"]) for r in summary)
    captured = capsys.readouterr()
    assert "| textbook | mse | 16 | 40 |" in captured.out
    assert "separated | unequal-variance | sparse-tail |" in captured.out
    progress = [line for line in captured.err.splitlines() if "runs done" in line]
    assert len(progress) >= 2 and progress[-1].startswith("sweep: 16/16 runs done")
    assert "runs/s, about" in progress[0] and " s left" in progress[0]


@pytest.mark.parametrize("args, message", [
    (["--mu2", "1:x"], "argument --mu2: mu2 must be start:stop:count"),
    (["--sigma1=-1,2"], "argument --sigma1: sigma1 values must be positive; got -1"),
    (["--steps", "100,100"], "argument --steps: steps values must be distinct"),
    (["--widths", "0"], "argument --widths: widths values must be a positive integer"),
    (["--losses", "l2"], "argument --losses: unknown loss 'l2'; valid losses: "
                         "cross_entropy, mse, hinge"),
    (["--recipe", "fast"], "argument --recipe/--recipes: unknown recipe 'fast'"),
    (["--seeds", "0"], "argument --seeds: must be a positive integer; got 0"),
    (["--prior1", "1.5"], r"argument --prior1: prior1 values must be in \(0, 1\)"),
])
def test_bad_grid_specs_exit_with_status_2_and_one_line(args, message, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["sweep", *args])
    assert exc.value.code == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and captured.out == ""
    assert lines[0].startswith("scratchnet sweep: error: ")
    assert lines[0].endswith("(see --help)")
    import re
    assert re.search(message, lines[0]), lines[0]


def test_sweep_help_documents_the_grid_and_the_cluster(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["sweep", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for text in ("--mu2 SPEC", "--sigma1 SPEC", "--losses NAMES", "--steps SPEC",
                 "--scheduler ADDRESS", "start:stop:count", "dask scheduler",
                 "dask worker"):
        assert text in out, text


def test_the_package_does_not_import_dask():
    code = ("import sys, scratchnet, scratchnet.experiments, scratchnet.__main__; "
            "print(any(m.split('.')[0] in ('dask', 'distributed') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


# --- on a Dask cluster -----------------------------------------------------------------


def test_a_local_cluster_gives_the_table_of_an_in_process_run():
    distributed = pytest.importorskip("dask.distributed")
    kwargs = {"steps": (20, 30), "seeds": 2, "losses": ("cross_entropy", "hinge")}
    here = experiments.sweep("1,2.5", "1,2", jobs=1, **kwargs)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster:
        there = experiments.sweep("1,2.5", "1,2", scheduler=cluster.scheduler_address,
                                  **kwargs)
    assert there.where.startswith("Dask scheduler")
    assert there.rows == here.rows   # the same table, to the last bit
    assert there.summary() == here.summary()


# --- the figures -----------------------------------------------------------------------


def test_phase_diagram_draws_one_cell_per_grid_point():
    result = experiments.sweep("3,1,2", "2,1", steps=(10, 20), seeds=1, jobs=1)
    fig = experiments.phase_diagram(result)
    panels = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]
    assert len(panels) == 2   # one per budget
    for ax, step in zip(panels, (10, 20)):
        meshes = [c for c in ax.collections if type(c).__name__ == "QuadMesh"]
        assert len(meshes) == 1
        cells = np.asarray(meshes[0].get_array())
        assert cells.size == 3 * 2
        # the cells hold the medians, both axes sorted (mu2 1, 2, 3; sigma1 1, 2)
        expected = result.matrix(step=step)[np.ix_([1, 0], [1, 2, 0])]
        np.testing.assert_array_equal(cells.reshape(2, 3), expected)
        # every cell's value is written in it, none hidden under a marker
        texts = sorted(t.get_text() for t in ax.texts   # not the contours' labels
                       if not t.get_text().startswith(("tail", "crossing")))
        assert texts == sorted(f"{v:.2f}" if v >= 0.01 else f"{v:.0e}"
                               for v in expected.ravel())
    names = [t.get_text() for t in fig.legends[0].get_texts()]
    assert [n.split(" (")[0] for n in names[:3]] == ["separated", "unequal-variance",
                                                     "sparse-tail"]
    assert "tail mass $10^{-3}$" in names   # the contours, named below the panels


def test_tail_mass_and_loss_figures():
    result = experiments.sweep("1,3", "1,2", steps=(10, 20), seeds=1, jobs=1,
                               losses="cross_entropy,mse,hinge")
    fig = experiments.tail_mass_figure(result, loss="mse")
    assert [ax.get_yscale() for ax in fig.axes] == ["log", "log"]
    fig = experiments.loss_figure(result)
    assert [len(ax.get_lines()) for ax in fig.axes] == [3, 3, 3]
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [
        "cross-entropy", "squared error", "hinge (expected KL infinite)"]
    assert fig.axes[1].get_lines()[2].get_xydata().size == 0   # inf is not drawn
    with pytest.raises(ValueError, match=r"step must be one of the sweep's \(10, 20\); "
                                         "got 15"):
        experiments.phase_diagram(result, steps=15)
