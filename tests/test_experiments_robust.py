"""The experiments never lose work, refuse the wrong kind of value clearly, and
draw legends that cover no data (issue 22, items 2, 4, 5 and 7)."""

import csv
import dataclasses
import math
import os
import pathlib
import re
import tracemalloc

import numpy as np
import pytest
from _support import build_figures_without_rendering
from matplotlib.backends.backend_agg import FigureCanvasAgg

import scratchnet as sn
from scratchnet import experiments
from scratchnet.__main__ import main
from scratchnet.experiments import grids
from scratchnet.experiments.cli import MAX_RUN_BYTES, plan_parts, unit_bytes


def _read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


# --- tasks without a decision boundary -------------------------------------------------


@pytest.mark.parametrize("priors", [(0.5, 0.5), (0.3, 0.7)])
@pytest.mark.parametrize("recipe", ["original", "covering", "textbook"])
def test_a_task_without_a_crossing_runs_and_reports(recipe, priors):
    task = sn.GaussianClasses([0.0, 0.0], [1.0, 1.0], list(priors))
    result = experiments.run(task, recipe, steps=20, seed=0)
    row = result.rows[-1]
    # the posterior is the prior everywhere: computed here, not by the task
    assert row["max_abs_error"] == pytest.approx(
        np.abs(result.history.snapshot_probs[-1] - np.array(priors)).max())
    assert row["bayes_accuracy"] == pytest.approx(max(priors))
    assert math.isfinite(row["expected_kl"])
    if recipe != "textbook":   # a sample: nothing lies past a crossing
        assert math.isnan(result.extra["last_crossing"])
        assert math.isnan(result.extra["tail_mass"]) and result.extra["n_tail"] == 0


def test_a_sweep_over_a_point_without_a_crossing_runs():
    result = experiments.sweep("0,1", "1", recipes="covering", steps=(20,), seeds=1,
                               jobs=1)
    assert result.failed == [] and len(result.rows) == 2
    no_crossing = next(r for r in result.rows if r["mu2"] == 0.0)
    assert no_crossing["crossings"] == "" and math.isnan(no_crossing["tail_mass"])


# --- a failed cell is reported, the others kept ----------------------------------------


@pytest.fixture()
def mu2_zero_fails(monkeypatch):
    """Make every cell with mu2 = 0 fail inside its unit, as a bug would."""
    real = grids.run_group

    def run_group(members, recipe, **kwargs):
        if any(np.ravel(task.means)[1] == 0.0 for task, _ in members):
            raise ArithmeticError("cell mu2=0 broke\nsecond line")
        return real(members, recipe, **kwargs)

    monkeypatch.setattr(grids, "run_group", run_group)


def test_a_failed_cell_is_reported_and_every_other_cell_kept(mu2_zero_fails, tmp_path):
    lines = []
    result = experiments.sweep("0,1,2", "1,2", steps=(10, 20), seeds=2, jobs=1,
                               parts=1, progress=lines.append, out=tmp_path)
    assert len(result.rows) == 3 * 2 * 2 * 2
    failed = [r for r in result.rows if r["error"]]
    assert {(r["mu2"], r["sigma1"], r["seed"]) for r in failed} == {
        (0.0, s, seed) for s in (1.0, 2.0) for seed in (0, 1)}
    assert all(r["error"] == "ArithmeticError: cell mu2=0 broke" for r in failed)
    assert all(math.isnan(r["max_abs_error"]) for r in failed)
    assert all(0 < r["max_abs_error"] < 1 for r in result.rows if not r["error"])
    assert len(result.failed) == 4
    summary = [r for r in result.summary() if r["mu2"] == 0.0]
    assert all(r["failed"] == 2 and r["seeds"] == 0 for r in summary)
    overview = result.overview()
    assert "failed: mu2=0, sigma1=1" in overview and "ArithmeticError" in overview
    assert any(line.startswith("sweep: failed cell mu2=0, sigma1=1") for line in lines)
    written = _read_csv(tmp_path / "sweep.csv")   # written as the units finished
    assert len(written) == len(result.rows)
    assert sum(bool(r["error"]) for r in written) == len(failed)
    again = experiments.Sweep.read(tmp_path)
    assert len(again.failed) == 4
    # the figures of a sweep with failed cells are drawn, without a warning, by the
    # command line in the test below


def test_the_sweep_command_keeps_the_cells_and_exits_1(mu2_zero_fails, tmp_path, capsys):
    code = main(["sweep", "--mu2", "0,1", "--sigma1", "1", "--steps", "10",
                 "--seeds", "1", "--jobs", "1", "--out", str(tmp_path)])
    assert code == 1
    err = capsys.readouterr().err
    assert "sweep: failed cell mu2=0, sigma1=1" in err
    assert err.strip().splitlines()[-1].startswith(
        "scratchnet sweep: error: 1 of 2 cells failed")
    assert "Traceback" not in err
    log = (tmp_path / "sweep.log").read_text()
    assert "ArithmeticError: cell mu2=0 broke" in log
    rows = _read_csv(tmp_path / "sweep.csv")
    assert [bool(r["error"]) for r in rows] == [True, False]
    # every figure drawn around the failed cell (a warning would be an error here)
    assert sorted(p.name for p in tmp_path.glob("*.png")) == ["phase.png",
                                                                "tail_mass.png"]


def test_rows_are_on_disk_before_the_sweep_ends(tmp_path):
    seen = []

    def progress(line):
        if "runs done" in line:
            seen.append(len(_read_csv(tmp_path / "sweep.csv")))

    experiments.sweep("1,2,3", "1", steps=(10,), seeds=1, jobs=1, parts=3,
                      progress=progress, out=tmp_path)
    assert seen == [1, 2, 3]


# --- the memory check -------------------------------------------------------------------


def test_unit_bytes_bounds_what_a_unit_allocates():
    """tracemalloc sees NumPy's allocations: the estimate is an upper bound, and
    not a wild one."""
    unit = experiments.Unit("covering", "cross_entropy", 32,
                            tuple((m, 2.0, 0.5, 0) for m in (1.0, 2.0, 3.0, 4.0)),
                            (300,))
    tracemalloc.start()
    experiments.run_unit(unit)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    estimate = unit_bytes("covering", 32, 300, 4)
    assert peak <= estimate <= 20 * peak


def test_the_memory_check_counts_one_unit_per_worker_and_the_widths():
    grid = experiments.Grid("0.25:5:20", "0.625:3:20", recipes=("covering",),
                            seeds=tuple(range(5)), steps=(1000, 3000, 10000))
    parts = plan_parts(grid, 2)
    units = grid.units(parts)
    biggest = max(unit_bytes("covering", 64, 10_000, len(u.members)) for u in units)
    assert 2 * biggest <= MAX_RUN_BYTES   # two workers, one unit each
    # all 2,000 networks at once would need 20 GiB
    assert unit_bytes("covering", 64, 10_000, 2000) > 20 * 2**30
    wide = experiments.Grid("1", "1", widths=(3_000_000,), steps=(10,))
    with pytest.raises(ValueError, match=r"--widths 3000000 .* GiB"):
        plan_parts(wide, 1)


def test_a_too_wide_sweep_is_refused_in_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as info:
        main(["sweep", "--widths", "3000000", "--out", str(tmp_path)])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--widths 3000000" in err[0] and "GiB" in err[0]


# --- the wrong kind of value ------------------------------------------------------------

E = experiments
RECIPE = E.TEXTBOOK
SMALL = {"steps": (10,), "seeds": 1, "jobs": 1}


@pytest.fixture(scope="module")
def small_sweep():
    return E.sweep("1,3", "1", **SMALL)


BAD_API = [
    ("run task list", lambda: E.run(["separated"], "textbook"), TypeError, "task"),
    ("run task array", lambda: E.run(np.array(["separated"]), "textbook"), TypeError,
     "task"),
    ("run recipe list", lambda: E.run("separated", ["textbook"]), TypeError, "recipe"),
    ("run steps float", lambda: E.run("separated", "textbook", steps=1.5), TypeError,
     "steps"),
    ("run steps array", lambda: E.run("separated", "textbook", steps=np.array([5])),
     TypeError, "steps"),
    ("run seed str", lambda: E.run("separated", "textbook", seed="0"), TypeError,
     "seed"),
    ("run seeds float", lambda: E.run("separated", "textbook", seeds=3.0), TypeError,
     "seeds"),
    ("run seeds empty", lambda: E.run("separated", "textbook", seeds=[]), ValueError,
     "seeds"),
    ("run progress str", lambda: E.run("separated", "textbook", progress="yes"),
     TypeError, "progress"),
    ("run_group members str", lambda: E.run_group("separated", "textbook"), TypeError,
     "members"),
    ("run_group member single", lambda: E.run_group([("separated",)], "textbook"),
     TypeError, "members"),
    # a network that does not fit the task: named, not an internal grid (issue 29)
    ("run sizes inputs", lambda: E.run("separated", dataclasses.replace(
        RECIPE, sizes=(2, 16, 2)), steps=5), ValueError,
     r"recipe 'textbook' has sizes=\(2, 16, 2\).*task 'separated' has 1 input"),
    ("run sizes outputs", lambda: E.run("separated", dataclasses.replace(
        RECIPE, sizes=(1, 16, 3)), steps=5), ValueError,
     r"3 output\(s\), but task 'separated' has .* 2 classes"),
    ("recipe lr inf", lambda: dataclasses.replace(RECIPE, lr=math.inf), ValueError,
     "lr"),
    ("recipe loss list", lambda: dataclasses.replace(RECIPE, loss=["mse"]), TypeError,
     "loss"),
    ("recipe sizes int", lambda: dataclasses.replace(RECIPE, sizes=3), TypeError,
     "sizes"),
    ("recipe name array", lambda: dataclasses.replace(RECIPE, name=np.array(["r"])),
     TypeError, "name"),
    ("recipe input_range", lambda: dataclasses.replace(RECIPE,
                                                       input_range=(0.0, math.inf)),
     ValueError, "input_range"),
    ("recipe snapshots str", lambda: dataclasses.replace(RECIPE, snapshot_steps="10"),
     TypeError, "snapshot_steps"),
    ("get_recipe array", lambda: E.get_recipe(np.array(["original"])), TypeError,
     "recipe"),
    ("sweep losses mixed", lambda: E.sweep("1", "1", losses=["mse", 1], **SMALL),
     TypeError, "losses"),
    ("sweep recipes int", lambda: E.sweep("1", "1", recipes=3, **SMALL), TypeError,
     "recipes"),
    ("sweep seeds float", lambda: E.sweep("1", "1", steps=(10,), seeds=2.5),
     TypeError, "seeds"),
    ("sweep steps empty", lambda: E.sweep("1", "1", steps=[], seeds=1), ValueError,
     "steps"),
    ("sweep steps inf", lambda: E.sweep("1", "1", steps=math.inf, seeds=1), ValueError,
     "steps"),
    ("sweep widths float", lambda: E.sweep("1", "1", widths=2.5, **SMALL), ValueError,
     "widths"),
    ("sweep mu2 inf", lambda: E.sweep(math.inf, "1", **SMALL), ValueError, "mu2"),
    ("sweep mu2 empty", lambda: E.sweep("", "1", **SMALL), ValueError, "mu2"),
    ("sweep parts 0", lambda: E.sweep("1", "1", parts=0, **SMALL), ValueError, "parts"),
    ("sweep jobs float", lambda: E.sweep("1", "1", steps=(10,), seeds=1, jobs=1.5),
     TypeError, "jobs"),
    ("sweep progress str", lambda: E.sweep("1", "1", progress="yes", **SMALL),
     TypeError, "progress"),
    ("sweep out int", lambda: E.sweep("1", "1", out=3, **SMALL), TypeError, "out"),
    ("grid seeds int", lambda: E.Grid("1", "1", seeds=3), TypeError, "seeds"),
    ("grid recipes int", lambda: E.Grid("1", "1", recipes=3), TypeError, "recipes"),
    ("family_task str", lambda: E.family_task("3", 1.0), TypeError, "mu2"),
    ("tail_mass x0 str", lambda: E.tail_mass(sn.tasks.separated(), "x"), TypeError,
     "x0"),
    ("run_unit str", lambda: E.run_unit("unit"), TypeError, "unit"),
    ("summarize steps int", lambda: E.summarize(E.run("separated", "textbook",
                                                       steps=10), steps=10),
     TypeError, "steps"),
    ("format_table str", lambda: E.format_table("rows"), TypeError, "rows"),
    ("write_table path int", lambda: E.write_table([], 3, "t.md"), TypeError,
     "path_csv"),
    ("posterior_figure str", lambda: E.posterior_figure("result"), TypeError,
     "result"),
    ("convergence_figure int", lambda: E.convergence_figure(3), TypeError, "results"),
    ("phase_diagram object", lambda: E.phase_diagram(object()), TypeError, "result"),
    ("Sweep.read int", lambda: E.Sweep.read(3), TypeError, "path"),
    ("makespan str", lambda: E.makespan("abc", 2), TypeError, "costs"),
    ("makespan jobs float", lambda: E.makespan([1.0], 1.5), TypeError, "jobs"),
    ("plan_ensembles list", lambda: E.plan_ensembles([("a", 1)], 2), TypeError,
     "groups"),
    ("plan_ensembles jobs str", lambda: E.plan_ensembles({"textbook": ["a"]}, "2"),
     TypeError, "jobs"),
    ("ensemble_work str", lambda: E.ensemble_work(3, 10, 2), TypeError, "recipe"),
    ("ensemble_work steps inf", lambda: E.ensemble_work("textbook", math.inf, 2),
     TypeError, "steps"),
    ("parse_axis name list", lambda: E.parse_axis("1", ["mu2"]), ValueError, "name"),
    ("tail_crossing str", lambda: E.tail_crossing("separated"), TypeError, "task"),
]


@pytest.mark.parametrize("call, kind, name", [case[1:] for case in BAD_API],
                         ids=[case[0] for case in BAD_API])
def test_the_api_refuses_the_wrong_kind_of_value(call, kind, name):
    with pytest.raises(kind) as info:
        call()
    assert re.search(rf"\b{name}\b", str(info.value)), str(info.value)


SWEEP_RESULT_CALLS = [
    ("matrix metric list", lambda r: r.matrix(["max_abs_error"]), TypeError, "metric"),
    ("overview threshold str", lambda r: r.overview("x"), TypeError, "threshold"),
    ("write out int", lambda r: r.write(3), TypeError, "out"),
    ("phase steps", lambda r: E.phase_diagram(r, steps=15), ValueError, "step"),
    ("phase steps empty", lambda r: E.phase_diagram(r, steps=[]), ValueError, "steps"),
    ("phase steps str", lambda r: E.phase_diagram(r, steps="10"), TypeError, "steps"),
    ("phase contours str", lambda r: E.phase_diagram(r, contours="no"), TypeError,
     "contours"),
    ("tail steps empty", lambda r: E.tail_mass_figure(r, steps=()), ValueError,
     "steps"),
    ("phase metric list", lambda r: E.phase_diagram(r, metric=["x"]), TypeError,
     "metric"),
    ("figures dpi float", lambda r: E.save_sweep_figures(r, "x", dpi=1.5), TypeError,
     "dpi"),
    ("figures out int", lambda r: E.save_sweep_figures(r, 3), TypeError, "out"),
]


@pytest.mark.parametrize("call, kind, name", [case[1:] for case in SWEEP_RESULT_CALLS],
                         ids=[case[0] for case in SWEEP_RESULT_CALLS])
def test_a_sweeps_methods_refuse_the_wrong_kind_of_value(small_sweep, call, kind,
                                                         name):
    with pytest.raises(kind) as info:
        call(small_sweep)
    assert re.search(rf"\b{name}\b", str(info.value)), str(info.value)


@pytest.fixture()
def a_file(tmp_path):
    path = tmp_path / "somefile"
    path.write_text("not a folder")
    return path


BAD_CLI = [
    (["--out", "{file}/sub"], "--out"),
    (["--out", "{file}"], "--out"),
    (["--out", ""], "--out"),
    (["--seeds", "x"], "--seeds"),
    (["--seeds", "0"], "--seeds"),
    (["--seeds", "1.5"], "--seeds"),
    (["--steps", "1e999"], "--steps"),
    (["--steps", ""], "--steps"),
    (["--tasks", ""], "--tasks"),
    (["--tasks", ","], "--tasks"),
    (["--seed", "-1"], "--seed"),
    (["--jobs", "0"], "--jobs"),
    (["sweep", "--out", "{file}/sub"], "--out"),
    (["sweep", "--steps", "1e999"], "--steps"),
    (["sweep", "--steps", ""], "--steps"),
    (["sweep", "--mu2", ""], "--mu2"),
    (["sweep", "--mu2", "1:2:0"], "--mu2"),
    (["sweep", "--losses", ","], "--losses"),
    (["sweep", "--widths", "1e999"], "--widths"),
    (["sweep", "--prior1", "nan"], "--prior1"),
    (["sweep", "--seeds", "-2"], "--seeds"),
    (["sweep", "--seeds", "1000000000"], "--seeds"),
    (["sweep", "--jobs", "x"], "--jobs"),
]


@pytest.mark.parametrize("args, option", BAD_CLI,
                         ids=[" ".join(c[0]) for c in BAD_CLI])
def test_the_command_line_refuses_the_wrong_kind_of_value(args, option, a_file,
                                                          capsys):
    args = [a.format(file=a_file) for a in args]
    with pytest.raises(SystemExit) as info:
        main(args)
    assert info.value.code == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err   # one line, never a traceback
    assert lines[0].startswith(("scratchnet: error: ", "scratchnet sweep: error: "))
    assert option in lines[0]


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="needs a folder the user cannot write (root writes anywhere)")
def test_an_unwritable_out_is_refused_in_one_line(tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(SystemExit) as info:
            main(["--out", str(locked / "sub")])
    finally:
        locked.chmod(0o700)
    assert info.value.code == 2
    assert "--out" in capsys.readouterr().err


# --- "median" only over several seeds ---------------------------------------------------


def test_median_is_printed_only_over_several_seeds(small_sweep, two_losses, tmp_path,
                                                   capsys, monkeypatch):
    # the printed text is the point: the command's figures are built, not rendered
    # (the legends tests below render them)
    build_figures_without_rendering(monkeypatch)
    for seeds in (1, 2):
        out = tmp_path / str(seeds)
        assert main(["--tasks", "separated", "--recipes", "textbook", "--steps", "20",
                     "--seeds", str(seeds), "--jobs", "1", "--out", str(out)]) == 0
        captured = capsys.readouterr()
        text = (captured.out + captured.err + (out / "summary.md").read_text()
                ).replace(str(out), "OUT")   # the folder's name holds "median"
        assert ("median" in text) == (seeds > 1), text
    rows = E.summarize(E.run("separated", "textbook", steps=20), over_seeds=True)
    assert "median" not in E.format_table(rows)
    one = small_sweep   # one seed
    assert "median" not in E.phase_diagram(one).axes[-1].get_ylabel()
    assert "median" not in E.tail_mass_figure(one).axes[0].get_ylabel()
    two = two_losses   # two seeds
    assert E.phase_diagram(two).axes[-1].get_ylabel().startswith("median")


# --- legends never cover data ----------------------------------------------------------


def _assert_legends_clear(fig):
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes
                                   if ax.get_legend() is not None]
    assert legends
    for legend in legends:
        box = legend.get_window_extent(renderer)
        inside = fig.bbox   # and within the figure: nothing clipped when saved
        assert inside.x0 - 1 <= box.x0 and box.x1 <= inside.x1 + 1, "legend clipped"
        assert inside.y0 - 1 <= box.y0 and box.y1 <= inside.y1 + 1, "legend clipped"
        for ax in fig.axes:
            if ax.get_label() == "<colorbar>":
                continue
            assert not box.overlaps(ax.get_window_extent(renderer)), (
                f"a legend covers the axes {ax.get_title()!r}")


@pytest.fixture(scope="module")
def study():
    return E.run("unequal-variance", "textbook", steps=100, seeds=2)


def test_the_command_lines_figures_keep_their_legends_off_the_data(study):
    _assert_legends_clear(E.posterior_figure(study))
    _assert_legends_clear(E.posterior_figure(study[0]))
    _assert_legends_clear(E.convergence_figure(study))


@pytest.fixture(scope="module")
def two_losses():
    """Cross-entropy and the hinge loss (whose expected KL is infinite) on one grid,
    over two seeds: the figures of both tests below are drawn from it."""
    return E.sweep("1,3", "1,2", steps=(10, 20), seeds=2, jobs=1,
                   losses="cross_entropy,hinge")


def test_the_sweeps_figures_keep_their_legends_off_the_data(two_losses):
    """Each kind of sweep figure, two panels and one; the hinge loss's slices carry
    its infinite expected KL through the drawing (the test below relies on it)."""
    result = two_losses
    for fig in (E.phase_diagram(result),
                E.phase_diagram(result, steps=20, loss="hinge", metric="expected_kl"),
                E.tail_mass_figure(result, loss="hinge"), E.loss_figure(result)):
        _assert_legends_clear(fig)


# --- infinite expected KL, cleanly; no blanket errstate ---------------------------------


def test_the_hinge_losss_infinite_kl_goes_through_every_table_and_figure(two_losses,
                                                                        tmp_path):
    """The tables here; the sweep's figures of the hinge loss are drawn (and their
    legends checked) from the same sweep by the test above."""
    result = two_losses
    hinge = [r for r in result.rows if r["loss"] == "hinge"]
    assert len(hinge) == 2 * 2 * 2 * 2   # points x seeds x budgets
    assert all(r["expected_kl"] == math.inf for r in hinge)
    assert all(r["expected_kl"] < math.inf for r in result.rows if r not in hinge)
    assert all(r["expected_kl"] == math.inf for r in result.summary()
               if r["loss"] == "hinge")
    result.write(tmp_path)
    again = E.Sweep.read(tmp_path)
    assert [r["expected_kl"] == math.inf for r in again.rows] == [
        r["loss"] == "hinge" for r in again.rows]
    result.overview()
    recipe = dataclasses.replace(E.TEXTBOOK, loss="hinge")
    runs = E.run("separated", recipe, steps=20, seeds=2)
    rows = E.summarize(runs, over_seeds=True)
    assert "inf [inf, inf]" in E.format_table(rows)
    E.write_table(E.summarize(runs), tmp_path / "t.csv", tmp_path / "t.md")
    FigureCanvasAgg(E.convergence_figure(runs)).draw()


def test_no_blanket_errstate_in_the_experiments():
    folder = pathlib.Path(E.__file__).parent
    for path in folder.glob("*.py"):
        assert "errstate" not in path.read_text(), path.name
