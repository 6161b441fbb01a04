"""Honest reports and Gradescope's whole format (issue 38, items 3 and 4).

Checks that did not run say so in every report (the terminal's, the class's
CSV, Gradescope's results.json); the self-check grades what the assignment
grades; the assignment takes every Gradescope visibility, refuses a check name
the exercise does not have, and ``--only`` narrows it.  Each test builds its
own hand-out in ``tmp_path``.
"""

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import scratchnet.exercises as ex
from scratchnet.exercises.assignment import read_assignment
from scratchnet.exercises.catalogue import select
from scratchnet.exercises.checking import checks_of, scored
from scratchnet.exercises.cli import main
from scratchnet.exercises.course import grade, grade_class
from scratchnet.exercises.report import Report

ROOT = Path(__file__).resolve().parents[1]
OWN = ROOT / "examples" / "label_smoothing.py"
LOOP = ("    dout = np.asarray(dout)", "    while True:\n        pass")


def _assignment(path: Path, entries, **top) -> Path:
    path.write_text(json.dumps({"exercises": entries, **top}))
    return path


def _self_check(package: Path) -> subprocess.CompletedProcess:
    """``exercises check PACKAGE`` as a student runs it: a process of its own,
    without the instructor's exercises file."""
    return subprocess.run([sys.executable, "-m", "scratchnet", "exercises", "check",
                           str(package)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def _written(folder: Path, ids, old: str = "", new: str = "", module: str = "") -> Path:
    """The answer key of ``ids`` in ``folder``, ``old`` written as ``new`` in
    ``module``."""
    ex.make(ids, folder, solutions=True, exercises=OWN)
    if module:
        text = (folder / module).read_text()
        assert old in text
        (folder / module).write_text(text.replace(old, new))
    return folder


# --- checks that did not run ------------------------------------------------------------

def test_a_stubs_checks_are_not_run_failed_and_score_0_in_gradescope():
    relu = select(["relu_backward"])[0]
    result = scored({"id": "relu_backward", "status": "todo"}, relu, {"points": 5})
    tests = Report([result], 0.0).gradescope()["tests"]
    assert len(tests) == len(checks_of("relu_backward")) > 1
    for test in tests:
        assert test["status"] == "failed" and test["score"] == 0
        assert test["output"] == "not run: not implemented yet"


def test_a_time_out_says_not_run_in_the_terminal_the_csv_and_results_json(
        tmp_path, capsys):
    looping = _written(tmp_path / "looping", ["relu_backward"], *LOOP, "layers.py")
    assignment = _assignment(tmp_path / "a.json", [{"id": "relu_backward"}],
                             time_limit=0.5)
    results = tmp_path / "results.json"
    assert main(["check", str(looping), "--assignment", str(assignment),
                 "--json", str(results)]) == 1
    text = capsys.readouterr().out
    names = [c.name for c in checks_of("relu_backward")]
    why = f"the check {names[0]!r} ran past the time limit"
    assert f"  FAIL {names[0]}: ran past the time limit (0.5 s)" in text
    for name in names[1:]:
        assert f"  NOT RUN {name}: {why}" in text
    tests = json.loads(results.read_text())["tests"]
    assert [t["output"] for t in tests[1:]] == [f"not run: {why}"] * (len(names) - 1)
    assert all(t["status"] == "failed" and t["score"] == 0 for t in tests)
    table = tmp_path / "grades.csv"
    grade_class([looping], assignment, table, progress=print)
    with table.open() as rows:
        row = next(csv.DictReader(rows))
    stopped = f"relu_backward: {len(names) - 1} of {len(names)} checks not run ({why})"
    assert row["not_run"] == stopped and row["total"] == "0"
    assert f"looping: 0/5 - {stopped}" in capsys.readouterr().out


# --- the self-check grades what the assignment grades --------------------------------------

def test_a_self_check_never_says_full_marks_for_an_instructors_stub(tmp_path):
    """cross_entropy written, the instructor's smoothed_cross_entropy left a stub,
    checked without the instructor's file: the given log_softmax is not graded,
    the own exercise is listed as the instructor's, and the exit status is 1."""
    ids = ["cross_entropy", "smoothed_cross_entropy"]
    package = _written(tmp_path / "key", ids)
    ex.make(ids, tmp_path / "hw", exercises=OWN)
    stub = (tmp_path / "hw" / "losses.py").read_text()
    answer = (package / "losses.py").read_text()
    cut = "def smoothed_cross_entropy("
    (package / "losses.py").write_text(answer[:answer.index(cut)]
                                       + stub[stub.index(cut):])
    done = _self_check(package)
    out = done.stdout
    assert done.returncode == 1, done.stderr
    assert "cross_entropy: 6/6 points" in out
    assert "log_softmax" not in out   # given code: not graded
    assert "smoothed_cross_entropy: graded by your instructor" in out
    assert "not implemented yet" in out.split("smoothed_cross_entropy:")[1]
    assert "total: 6/6 points (not counted: smoothed_cross_entropy" in out


def test_a_self_check_runs_the_students_docstring_examples_of_an_own_exercise(
        tmp_path):
    package = _written(tmp_path / "wrong", ["smoothed_cross_entropy"],
                       "    return -np.mean(", "    return -2 * np.mean(", "losses.py")
    done = _self_check(package)
    out = done.stdout
    assert done.returncode == 1, done.stderr
    assert "  FAIL docstring examples: the docstring's examples:" in out
    assert "1.3863" in out and "2.7726" in out   # expected, and twice it
    assert "total: 0/0 points" in out


# --- Gradescope's whole format ----------------------------------------------------------

@pytest.mark.parametrize("visibility", ["visible", "hidden", "after_due_date",
                                        "after_published"])
def test_every_gradescope_visibility_is_accepted(tmp_path, visibility):
    path = _assignment(tmp_path / "a.json", [
        {"id": "softmax", "checks": {"values": {"visibility": visibility}}}])
    entry = read_assignment(path)["exercises"][0]
    assert entry["checks"]["values"]["visibility"] == visibility


def test_an_unknown_visibility_is_refused_naming_the_known_ones(tmp_path):
    path = _assignment(tmp_path / "a.json", [
        {"id": "softmax", "checks": {"values": {"visibility": "later"}}}])
    with pytest.raises(ValueError, match=r"after_due_date.*got 'later'"):
        read_assignment(path)
    path = _assignment(tmp_path / "b.json", [{"id": "softmax"}], visibility="soon")
    with pytest.raises(ValueError, match="visibility must be one of"):
        read_assignment(path)


def test_an_unknown_check_name_is_an_error_naming_the_known_ones(tmp_path, capsys):
    path = _assignment(tmp_path / "a.json", [
        {"id": "softmax", "checks": {"large logit": {"weight": 3}}}])
    hw = tmp_path / "hw"
    ex.make(["softmax"], hw)
    assert main(["check", str(hw), "--assignment", str(path)]) == 2
    err = capsys.readouterr().err
    assert "'softmax' has no check 'large logit'" in err
    assert all(repr(c.name) in err for c in checks_of("softmax"))


def test_the_total_is_as_hidden_as_the_most_hidden_check(tmp_path):
    key = _written(tmp_path / "key", ["relu_backward"])
    names = [c.name for c in checks_of("relu_backward")]
    path = _assignment(tmp_path / "a.json", [
        {"id": "relu_backward", "checks": {names[0]: {"visibility": "after_due_date"},
                                           names[1]: {"visibility": "hidden"}}}])
    results = tmp_path / "results.json"
    grade(key, path, json_path=results)
    out = json.loads(results.read_text())
    assert out["visibility"] == "hidden" and out["stdout_visibility"] == "hidden"
    assert [t["visibility"] for t in out["tests"][:3]] == [
        "after_due_date", "hidden", "visible"]
    assert all(t["status"] == "passed" for t in out["tests"])
    # the instructor's choice wins, for the total and for the printed report
    path = _assignment(tmp_path / "b.json", [{"id": "relu_backward"}],
                       visibility="after_published", stdout_visibility="visible")
    grade(key, path, json_path=results)
    out = json.loads(results.read_text())
    assert (out["visibility"], out["stdout_visibility"]) == ("after_published",
                                                            "visible")


def test_the_top_level_visibility_follows_the_most_restrictive_test():
    def report(*visibilities):
        return Report([{"id": "x", "status": "graded", "points": 0.0, "max_points": 1,
                        "checks": [{"name": f"c{i}", "status": "pass", "message": "",
                                    "hint": "", "points": 0.0, "max_points": 0.0,
                                    "visibility": v}
                                   for i, v in enumerate(visibilities)]}], 0.0)
    assert report("visible").gradescope()["visibility"] == "visible"
    assert report("visible", "after_due_date").gradescope()["visibility"] == \
        "after_due_date"
    assert report("after_published", "after_due_date").gradescope()["visibility"] == \
        "after_published"


def test_only_narrows_an_assignment(tmp_path, capsys):
    key = _written(tmp_path / "key", ["relu_backward"])
    path = _assignment(tmp_path / "a.json", [{"id": "relu_backward"},
                                             {"id": "softmax"}])
    results = tmp_path / "results.json"
    assert main(["check", str(key), "--assignment", str(path), "--only",
                 "relu_backward", "--json", str(results)]) == 0
    assert "total: 5/5 points" in capsys.readouterr().out
    tests = json.loads(results.read_text())["tests"]
    assert {t["name"].split(":")[0] for t in tests} == {"relu_backward"}
