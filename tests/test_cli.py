"""Tests for the command line, ``python -m scratchnet`` / ``scratchnet``."""

import csv
import subprocess
import sys

import numpy as np
import pytest
from _support import build_figures_without_rendering

from scratchnet import experiments
from scratchnet.__main__ import main


def _read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def test_runs_end_to_end_and_writes_every_file(tmp_path, capsys):
    out = tmp_path / "results"
    code = main(["--tasks", "separated,sparse-tail", "--recipes", "original,covering",
                 "--steps", "30", "--seeds", "1", "--out", str(out), "--jobs", "1"])
    assert code == 0
    names = sorted(path.name for path in out.iterdir())
    assert names == sorted(
        ["convergence.png", "summary.csv", "summary.md"]
        + [f"posterior_{t}_{r}.png" for t in ("separated", "sparse-tail")
           for r in ("original", "covering")])
    for name in names:
        assert (out / name).stat().st_size > 0
    assert (out / "convergence.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = _read_csv(out / "summary.csv")
    assert tuple(rows[0]) == experiments.COLUMNS
    # 2 tasks x 2 recipes x snapshots at 10, 20, 30 steps
    assert [(r["task"], r["recipe"], r["step"]) for r in rows[:3]] == [
        ("separated", "original", "10"), ("separated", "original", "20"),
        ("separated", "original", "30")]
    assert len(rows) == 12
    assert all(0 <= float(r["max_abs_error"]) <= 1 for r in rows)
    assert all(float(r["expected_kl"]) >= 0 for r in rows)
    markdown = (out / "summary.md").read_text().splitlines()
    assert len(markdown) == 2 + 12
    captured = capsys.readouterr()
    assert "| task | recipe |" in captured.out          # the table is printed
    assert "sparse-tail / original: " in captured.out
    # the footnote says what a negative "loss - Bayes loss" means
    note = [line for line in captured.out.splitlines() if line.startswith("loss - Bayes")]
    assert len(note) == 1 and "finite-sample estimate below the population floor" in note[0]
    assert "of the 100,000 training inputs lie past the second crossing" in captured.out
    progress = captured.err.splitlines()
    assert sum("steps in" in line for line in progress) == 2   # one ensemble per recipe
    assert sum("max|q-P|" in line for line in progress) == 4   # one per pair
    assert not any("median" in line for line in progress)   # one seed: no median
    assert "wrote 5 figures" in progress[-1]


def test_parallel_workers_give_the_numbers_of_an_in_process_run(tmp_path, capsys,
                                                               monkeypatch):
    import gc

    frozen = []   # main(argv) called from Python leaves the caller's collector alone
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append("gc.freeze()"))
    code = main(["--tasks", "unequal-variance", "--recipes", "textbook,covering",
                 "--steps", "20", "--seed", "5", "--seeds", "1", "--out", str(tmp_path),
                 "--format", "svg", "--jobs", "2", "--quiet"])
    assert code == 0
    assert frozen == []
    assert (tmp_path / "posterior_unequal-variance_textbook.svg").exists()
    assert (tmp_path / "convergence.svg").read_text().lstrip().startswith("<?xml")
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""   # --quiet
    rows = _read_csv(tmp_path / "summary.csv")
    expected = experiments.summarize(
        [experiments.run("unequal-variance", recipe, steps=20, seed=5)
         for recipe in ("textbook", "covering")])
    assert len(rows) == len(expected) == 4   # 2 runs, snapshots at 10 and 20
    for row, want in zip(rows, expected):
        assert {k: row[k] for k in ("task", "recipe", "seed", "step")} == {
            k: str(want[k]) for k in ("task", "recipe", "seed", "step")}
        for key in ("expected_kl", "max_abs_error", "loss_gap", "accuracy"):
            assert float(row[key]) == want[key]   # CSV keeps full precision


def test_seeds_end_to_end_draw_bands_and_summarise_over_seeds(tmp_path, capsys,
                                                            monkeypatch):
    # the figures (the bands over seeds among them) are built, not rendered: the
    # legends tests of tests/test_experiments_robust.py render them over two seeds
    build_figures_without_rendering(monkeypatch)
    code = main(["--tasks", "sparse-tail", "--recipes", "original", "--steps", "20",
                 "--seeds", "3", "--seed", "4", "--out", str(tmp_path), "--jobs", "1"])
    assert code == 0
    rows = _read_csv(tmp_path / "summary.csv")   # every seed's snapshots
    assert [(r["seed"], r["step"]) for r in rows] == [
        (s, t) for s in ("4", "5", "6") for t in ("10", "20")]
    # seed 5 of the study is exactly the run with --seed 5 alone
    alone = experiments.run("sparse-tail", "original", steps=20, seed=5).rows
    for row, want in zip(rows[2:4], alone):
        assert float(row["max_abs_error"]) == want["max_abs_error"]
    errors = [float(r["max_abs_error"]) for r in rows if r["step"] == "20"]
    markdown = (tmp_path / "summary.md").read_text().splitlines()
    assert "median [min, max]" in markdown[0] and "| seeds |" in markdown[0]
    last = markdown[-1].split(" | ")
    assert last[2:4] == ["3", "20"]
    assert last[5] == (f"{np.median(errors):.3f} [{min(errors):.3f}, "
                       f"{max(errors):.3f}]")
    out = capsys.readouterr()
    assert "(over 3 seeds)" in out.out and "3 networks (sparse-tail) x 20 steps" in out.err


def test_help_documents_every_option(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    for option in ("--tasks", "--recipes", "--steps", "--seed", "--seeds", "--out",
                   "--quiet", "--format", "--jobs"):
        assert option in text
    assert "takes about" in text and "sparse-tail" in text


@pytest.mark.parametrize(("args", "message"), [
    (["--tasks", "separated,nope"], "unknown task 'nope'; valid tasks: separated, "
                                    "unequal-variance, sparse-tail"),
    (["--recipes", "fast"], "unknown recipe 'fast'; valid recipes: original, "
                            "textbook, covering"),
    (["--steps", "0"], "must be a positive integer; got 0"),
    (["--steps", "-5"], "must be a positive integer; got -5"),
    (["--jobs", "x"], "must be a positive integer; got 'x'"),
    (["--format", "gif"], "invalid choice: 'gif'"),
])
def test_bad_arguments_exit_with_a_clear_message(args, message, capsys):
    with pytest.raises(SystemExit) as info:
        main(args)
    assert info.value.code == 2
    assert message in capsys.readouterr().err


def test_unwritable_output_is_an_error(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(SystemExit) as info:   # refused before any work, in one line
        main(["--tasks", "separated", "--recipes", "textbook", "--steps", "5",
              "--out", str(blocker / "sub"), "--quiet"])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("scratchnet: error: argument --out")


def test_module_entry_point():
    done = subprocess.run([sys.executable, "-m", "scratchnet", "--tasks", "bogus"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "unknown task 'bogus'" in done.stderr


def test_only_the_program_spares_its_exit_a_garbage_collection(tmp_path):
    """The command (main() reading sys.argv) freezes its objects before it exits,
    so the interpreter's last collection skips them (0.08 s of the default run);
    main(argv) called from Python does not (checked in the test above, on its
    run)."""
    argv = ["--tasks", "separated", "--recipes", "textbook", "--steps", "20",
            "--jobs", "1", "--quiet"]
    code = ("import gc, sys; from scratchnet.__main__ import main; "
            # the figures are built, not rendered (the other tests render them)
            "from matplotlib.figure import Figure; "
            "Figure.savefig = lambda self, *args, **kwargs: None; "
            f"sys.argv = ['scratchnet', *{argv!r}, '--out', {str(tmp_path / 'cmd')!r}]; "
            "assert main() == 0; print(gc.get_freeze_count())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=120)
    assert int(done.stdout) > 10_000


def test_the_work_is_split_to_balance_the_workers_each_shortest_first():
    """Each recipe's members in at most one ensemble per worker, as few as
    balance the workers' multiply-adds, each worker's shortest first; every
    member exactly once."""
    from scratchnet.__main__ import DEFAULT_RECIPES, DEFAULT_TASKS, _units, build_parser

    pairs = [(t, r) for t in DEFAULT_TASKS for r in DEFAULT_RECIPES]
    for argv, jobs, want in (([], 2, [("original", 2), ("covering", 3), ("original", 1)]),
                             ([], 1, [("covering", 3), ("original", 3)]),
                             (["--seeds", "12"], 2, [("covering", 18), ("covering", 18),
                                                    ("original", 18), ("original", 18)])):
        args = build_parser().parse_args(argv)
        units = _units(pairs, args, jobs)
        assert [(recipe, len(members)) for recipe, members in units] == want
        members = sorted((r, t, s) for r, unit in units for t, s in unit)
        assert members == sorted((r, t, s) for t, r in pairs for s in range(args.seeds))


def test_training_workers_start_without_matplotlib():
    """The command line's workers import scratchnet.experiments to train: matplotlib
    (about 0.8 s) is imported only where a figure is drawn."""
    code = ("import sys, scratchnet.experiments, scratchnet.__main__; "
            "assert 'matplotlib' not in sys.modules, 'matplotlib imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_pool_given_the_ensembles_in_order_balances_them_shortest_first():
    """plan_ensembles orders by steps x members x multiply-adds, not by seconds:
    a pool handing each to the worker free first ends when the longest-first
    split would (its makespan), and each worker's work comes shortest first."""
    from scratchnet.experiments import (
        ensemble_work,
        get_recipe,
        makespan,
        plan_ensembles,
    )

    groups = {"original": list("abc"), "textbook": list("abcde"), "covering": list("ab")}
    for jobs in (1, 2, 3):
        units = plan_ensembles(groups, jobs)
        work = [ensemble_work(get_recipe(r), get_recipe(r).steps, len(m)) for r, m in units]
        assert makespan(work, jobs, in_order=True) == makespan(work, jobs)
        free, last = [0] * jobs, [0] * jobs  # the pool's dispatch, by hand
        for cost in work:
            worker = free.index(min(free))
            assert cost >= last[worker]  # each worker's own: shortest first
            free[worker] += cost
            last[worker] = cost
        assert all(sum(r == name for r, _ in units) <= jobs for name in groups)
        assert sorted(m for _, members in units for m in members) == sorted(
            m for members in groups.values() for m in members)
