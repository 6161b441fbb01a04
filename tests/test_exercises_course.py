"""The instructor's course (issue 31): hand-outs written for the exercise, any chapter
function as an exercise, notebook hand-outs, a class graded to CSV, Gradescope's zip.

The homework is the trial's: softmax and log_softmax, cross_entropy and its
gradient, linear_backward and relu_backward, the network's backward, and the
label-smoothed cross-entropy of the instructor's own (examples/label_smoothing.py).

Grading spawns sandboxed children, so the whole homework is graded twice only (the
answer key by the assignment, the solutions notebook self-checked); a class and the
autograder grade by a smaller assignment of three of its exercises in three modules
(the instructor's among them), the other tests grade the exercises they are about.
"""

import ast
import contextlib
import csv
import inspect
import io
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import numpy as np
import pytest

import scratchnet.exercises as ex
from scratchnet import functional, losses
from scratchnet.exercises.cli import main
from scratchnet.exercises.course import grade
from scratchnet.exercises.source import covered_arguments, function_text

ROOT = Path(__file__).resolve().parents[1]
OWN = ROOT / "examples" / "label_smoothing.py"
TRIAL = ["softmax", "log_softmax", "cross_entropy", "cross_entropy_grad",
         "linear_backward", "relu_backward", "TwoLayerMLP.backward",
         "smoothed_cross_entropy"]
TOTAL = sum(e.points for e in ex.select(TRIAL[:-1])) + 6
#: The assignment a class and the autograder are graded by: three modules'
#: exercises, the instructor's included (its file travels with the assignment).
SMALL = ["log_softmax", "relu_backward", "smoothed_cross_entropy"]
SMALL_TOTAL = 6 + 5 + 6


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """The trial's homework made with no grader code: package, answer key,
    notebooks, and the assignment (naming the instructor's exercises file)."""
    root = tmp_path_factory.mktemp("course")
    make = ["make", *TRIAL, "--exercises", str(OWN)]
    assert main([*make, "--out", str(root / "hw"),
                 "--assignment", str(root / "assignment.json")]) == 0
    assert main([*make, "--out", str(root / "key"), "--solutions"]) == 0
    assert main([*make, "--out", str(root / "nb"), "--notebook"]) == 0
    assert main([*make, "--out", str(root / "nb"), "--notebook", "--solutions"]) == 0
    ex.write_assignment(SMALL, root / "small.json", exercises_file=OWN)
    return root


def _pytest_doctests(root: Path, *folders: str) -> str:
    """``pytest --doctest-modules`` on the hand-outs ``folders`` of ``root``, one
    line per example's docstring (``-v``) and one per failure or error (``-rfE``).
    Pytest's own doctest runner alone: no installed plugin is loaded (nbval,
    xdist, hypothesis ... took 2.5 of its 4 s of CPU)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    done = subprocess.run([sys.executable, "-m", "pytest", "--doctest-modules",
                           *folders, "-v", "-rfE", "-p", "no:cacheprovider"],
                          cwd=root, env=env, capture_output=True, text=True)
    return done.stdout


#: Chapter functions whose bodies call private helpers of their chapter.
HELPED = ["binary_cross_entropy_with_logits", "log_sigmoid", "softmax_forward"]


@pytest.fixture(scope="module")
def doctests(course):
    """The examples of the trial's answer key and skeleton, of the whole
    catalogue's, and of the key of :data:`HELPED`, run by one pytest: its output
    and each docstring's outcome."""
    ex.make([], course / "catalogue_key", solutions=True)
    ex.make([], course / "catalogue_hw")
    ex.make(HELPED, course / "helped_key", solutions=True)
    out = _pytest_doctests(course, "key", "hw", "catalogue_key", "catalogue_hw",
                           "helped_key")
    outcomes = dict(re.findall(r"^(\S+::\S+) (PASSED|FAILED|ERROR)", out, re.M))
    return out, outcomes


def _key_with(key: Path, wrong: Path, module: str, old: str, new: str) -> Path:
    """A copy of the answer key at ``wrong`` with ``old`` written as ``new`` in
    ``module``; returns the patched file."""
    shutil.copytree(key, wrong)
    path = wrong / module
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    return path


# --- hand-outs written for the exercise (item 3) --------------------------------------

def test_the_handouts_examples_pass_on_the_key_and_fail_on_the_skeleton(doctests):
    out, outcomes = doctests
    key = {item: outcome for item, outcome in outcomes.items() if item.startswith("key/")}
    assert key and set(key.values()) == {"PASSED"}, out
    for ex_id in TRIAL:
        module = ex.select([ex_id])[0].chapter
        assert key[f"key/{module}.py::key.{module}.{ex_id}"] == "PASSED", ex_id
        assert outcomes[f"hw/{module}.py::hw.{module}.{ex_id}"] == "FAILED", ex_id


@pytest.mark.parametrize("edition", ["hw", "key"])
def test_the_handout_imports_no_private_name_of_scratchnet(course, edition):
    for path in (course / edition).glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                    "scratchnet"):
                assert not any(p.startswith("_") for p in node.module.split(".")), path
                assert not any(a.name.startswith("_") for a in node.names), path
            if isinstance(node, ast.Import):
                assert not any("._" in a.name for a in node.names), path


def test_the_given_code_is_the_chapters_formula_not_its_validation(course):
    layers = (course / "hw" / "layers.py").read_text()
    assert "out = x @ W + b" in layers
    assert "raise ValueError" not in layers and "as_float_array" not in layers


def test_stub_hints_say_what_to_compute_by_default_never_the_formula(tmp_path):
    texts = {}
    for hints in ("none", "pointer", "formula"):
        ex.make(["linear_backward"], tmp_path / hints, stub_hints=hints)
        texts[hints] = (tmp_path / hints / "layers.py").read_text()
    assert "dout @ W.T" not in texts["pointer"] and "dout @ W.T" not in texts["none"]
    assert "dout @ W.T" in texts["formula"]
    assert "the gradients of the loss with respect to x, W and b" in texts["pointer"]
    assert 'NotImplementedError("linear_backward: write it")' in texts["none"]
    assert main(["make", "softmax", "--out", str(tmp_path / "x"),
                 "--stub-hints", "answer"]) == 2


def test_a_chapter_docstring_is_cut_down_to_the_covered_arguments():
    text, names = function_text(losses.cross_entropy, stub="todo",
                                covers=["logits", "targets"], keyed=False,
                                namespace=vars(losses))
    doc = ast.get_docstring(ast.parse(text).body[0])
    for arg in ("weight", "ignore_index", "label_smoothing", "reduction"):
        assert not re.search(rf"``{arg}``|\b{arg}=|^{arg}\b", doc, re.M), arg
    assert "sn." not in doc and "import scratchnet" not in doc
    assert ">>> print(f\"{cross_entropy(logits, [0, 1]):.4f}\")" in doc
    assert "cross_entropy" in names   # the examples call the student's own function


def test_covered_arguments_keeps_defaults_and_keyword_only_arguments():
    tree = ast.parse("def f(a, b=1, c=2, *, d=3, e): pass")
    new, dropped = covered_arguments(tree.body[0].args, ["a", "c", "e"])
    assert ast.unparse(new) == "a, c=2, *, e"
    assert {k: ast.unparse(v) for k, v in dropped.items()} == {"b": "1", "d": "3"}


# --- any chapter function is an exercise (item 2) ------------------------------------

def test_any_public_chapter_function_is_an_exercise_with_generic_checks(tmp_path):
    ex.make(["sigmoid", "tanh_forward"], tmp_path / "key", solutions=True)
    report = ex.check(tmp_path / "key")
    assert report.score == report.max_score == 10
    checks = {c["name"] for r in report.results for c in r["checks"]}
    assert {"docstring examples", "random inputs", "inputs unchanged"} <= checks
    ex.make(["sigmoid", "tanh_forward"], tmp_path / "hw")
    assert ex.check(tmp_path / "hw").score == 0
    wrong = tmp_path / "wrong"
    _key_with(tmp_path / "key", wrong, "layers.py", "return out, out",
              "return out * 1.001, out")
    result = ex.check(wrong, only=["tanh_forward"]).results[0]
    failed = {c["name"] for c in result["checks"] if c["status"] != "pass"}
    assert {"docstring examples", "random inputs"} <= failed


def test_private_or_unknown_names_are_not_exercises(tmp_path):
    for name in ("_as_matrix", "no_such_function", "TwoLayerMLP"):
        with pytest.raises(KeyError):
            ex.make([name], tmp_path / "hw")


# --- notebooks (item 4) ---------------------------------------------------------------

def test_a_notebook_handout_has_per_exercise_its_docstring_stub_and_check(course):
    cells = json.loads((course / "nb" / "homework.ipynb").read_text())["cells"]
    checks = [c for c in cells if "check" in c["metadata"].get("tags", [])]
    assert len(checks) == len(TRIAL)
    for i, cell in enumerate(cells):
        if cell in checks:
            stub, doc = cells[i - 1], cells[i - 2]
            assert "exercise" in stub["metadata"]["tags"]
            assert doc["cell_type"] == "markdown" and doc["source"][0].startswith("###")
            assert "".join(cell["source"]).startswith(("assert_passes(",
                                                       "assert_examples("))
    code = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    assert "NotImplementedError" in code and "scratchnet._" not in code


def test_the_solutions_notebook_runs_and_passes_its_checks(course):
    cells = json.loads((course / "nb" / "solutions.ipynb").read_text())["cells"]
    namespace: dict = {}
    for cell in cells:
        if cell["cell_type"] == "code":
            exec("".join(cell["source"]), namespace)   # the checks raise if wrong


@pytest.fixture(scope="module")
def graded_class(course, tmp_path_factory):
    """A class graded into one CSV by the smaller assignment: the rows, and what
    was printed.  Each kind of upload once: a package, a notebook's skeleton in a
    folder, the files in a folder, the notebook with every answer (alone, and in
    a folder, as Gradescope hands it over), nothing, and a missing one."""
    folder = tmp_path_factory.mktemp("class")
    uploads = folder / "uploads"
    shutil.copytree(course / "key", uploads / "ada")               # a package
    (uploads / "bob").mkdir()                                      # the skeleton,
    shutil.copy(course / "nb" / "homework.ipynb", uploads / "bob")  # a notebook
    (uploads / "cy" / "inner").mkdir(parents=True)                 # files, in a folder
    for path in (course / "key").glob("*.py"):
        if path.name != "__init__.py":
            shutil.copy(path, uploads / "cy" / "inner" / path.name)
    shutil.copy(course / "nb" / "solutions.ipynb", uploads / "dee.ipynb")  # notebook
    (uploads / "eve").mkdir()                                      # nothing
    (uploads / "fay").mkdir()                                      # a notebook
    shutil.copy(course / "nb" / "solutions.ipynb", uploads / "fay")  # in a folder
    table = folder / "grades.csv"
    argv = ["check", *sorted(str(p) for p in uploads.iterdir()), str(uploads / "zed"),
            "--assignment", str(course / "small.json"), "--csv", str(table)]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(argv) == 0
    with table.open() as text:
        rows = {r["submission"]: r for r in csv.DictReader(text)}
    return rows, printed.getvalue()


def test_a_notebook_is_graded_as_the_package(graded_class):
    rows, _ = graded_class
    assert rows["dee.ipynb"]["total"] == rows["fay"]["total"] == f"{SMALL_TOTAL}"
    assert rows["fay"]["smoothed_cross_entropy"] == "6"   # the instructor's, too
    assert rows["bob"]["total"] == "0" and not rows["bob"]["error"]


# --- a class at once (item 7) ---------------------------------------------------------

def test_a_class_is_graded_into_one_csv_table(graded_class):
    rows, printed = graded_class
    assert list(rows) == ["ada", "bob", "cy", "dee.ipynb", "eve", "fay", "zed"]
    assert list(rows["ada"])[1:-3] == SMALL
    assert [rows[s]["total"] for s in rows] == [f"{SMALL_TOTAL}", "0", f"{SMALL_TOTAL}",
                                                f"{SMALL_TOTAL}", "0", f"{SMALL_TOTAL}",
                                                "0"]
    assert rows["ada"]["relu_backward"] == "5"
    assert rows["bob"]["log_softmax"] == rows["eve"]["log_softmax"] == "0"
    assert "no such submission" in rows["zed"]["error"] and not rows["ada"]["error"]
    assert f"eve: 0/{SMALL_TOTAL}" in printed


def test_csv_needs_an_assignment_and_several_submissions_need_csv(course, capsys):
    assert main(["check", str(course / "key"), "--csv", "x.csv"]) == 2
    assert main(["check", str(course / "key"), str(course / "hw")]) == 2
    assert "--csv" in capsys.readouterr().err


# --- Gradescope in one command (item 6) -----------------------------------------------

_PROBE = """
import os, sys, sysconfig, ensurepip
print(f"{sys.version_info[:2]}" == sys.argv[1] and sys.prefix == sys.base_prefix,
      os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")))
"""


def _system_python() -> tuple:
    """A Python that is no virtual environment, of this one's version (its NumPy
    runs there): one marked externally managed (PEP 668) where there is one."""
    marked = []
    for path in {shutil.which("python3", path="/usr/bin:/bin"),
                 getattr(sys, "_base_executable", None)} - {None}:
        probe = subprocess.run([path, "-c", _PROBE, f"{sys.version_info[:2]}"],
                               capture_output=True, text=True)
        if probe.stdout.split()[:1] == ["True"]:
            marked.append((probe.stdout.split()[1] == "True", path))
    if not marked:
        pytest.skip("no Python here outside a virtual environment with ensurepip")
    return max(marked)


def test_the_autograder_zip_grades_uploads_end_to_end_in_a_clean_venv(course, tmp_path):
    """setup.sh makes a virtual environment and installs scratchnet from the zip's
    wheel into it, with the system's Python marked externally managed where there is
    one (PEP 668: its pip refuses to install outside a venv); run_autograder grades
    $AUTOGRADER_ROOT/submission with it into results/results.json.  The venv finds
    this interpreter's NumPy and Matplotlib (a .pth file put there before setup.sh
    runs), so nothing is downloaded.  The assignment is the smaller one (three
    exercises, the instructor's file with them): each upload kind is graded by
    the installed wheel as the class is."""
    marked, python = _system_python()
    archive = tmp_path / "autograder.zip"
    assert main(["autograder", "--assignment", str(course / "small.json"),
                 "--out", str(archive)]) == 0
    names = zipfile.ZipFile(archive).namelist()
    assert {"setup.sh", "run_autograder", "assignment.json", OWN.name} <= set(names)
    assert any(re.fullmatch(r"scratchnet-.*\.whl", n) for n in names)
    root = tmp_path / "autograder"
    zipfile.ZipFile(archive).extractall(root / "source")
    bin_dir = tmp_path / "bin"   # python3 is the system's, as on Gradescope's image
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(python)
    venv = root / "venv"
    subprocess.run([python, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next(venv.glob("lib*/python*/site-packages"))
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PIP_"))}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env['PATH']}", AUTOGRADER_ROOT=str(root),
               PIP_NO_INDEX="1")
    done = subprocess.run(["bash", str(root / "source" / "setup.sh")], env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    if marked:   # what setup.sh did not do: pip into the system's Python
        refused = subprocess.run(["python3", "-m", "pip", "install", "--dry-run",
                                  str(next(root.glob("source/*.whl")))],
                                 env=env, capture_output=True, text=True)
        assert "externally-managed-environment" in refused.stderr
    where = subprocess.run([str(venv / "bin" / "python"), "-c",
                            "import scratchnet; print(scratchnet.__file__)"],
                           env=env, capture_output=True, text=True, cwd=tmp_path).stdout
    assert where.startswith(str(venv))   # the wheel's scratchnet, not this checkout

    def run(upload) -> dict:
        submission = root / "submission"
        shutil.rmtree(submission, ignore_errors=True)
        submission.mkdir()
        for path in upload:
            shutil.copy(path, submission / path.name)
        subprocess.run(["bash", str(root / "source" / "run_autograder")], env=env,
                       check=True, capture_output=True, cwd=tmp_path)
        return json.loads((root / "results" / "results.json").read_text())

    flat = [p for p in (course / "key").glob("*.py") if p.name != "__init__.py"]
    assert run(flat)["score"] == SMALL_TOTAL
    notebook = run([course / "nb" / "solutions.ipynb"])
    assert notebook["score"] == SMALL_TOTAL and len(notebook["tests"]) > len(SMALL)
    skeleton = run([course / "hw" / "layers.py"])   # a stub, and two modules missing
    assert skeleton["score"] == 0 and skeleton["visibility"] == "visible"
    assert all(t["status"] == "failed" and t["output"].startswith("not run:")
               for t in skeleton["tests"]), skeleton["tests"][:2]
    nothing = run([])
    assert nothing["score"] == 0 and nothing["output"]


def test_exercise_modules_name_no_private_helper_of_their_neighbours():
    """The hand-out modules are public API used by the grader: their shared names."""
    from scratchnet.exercises import docstrings, handout, notebook, source

    for module in (docstrings, handout, notebook, source):
        for name in module.__all__:
            assert not name.startswith("_") and inspect.getdoc(getattr(module, name))


# --- own exercises, no fork (item 1) --------------------------------------------------

def test_the_trials_own_exercise_takes_at_most_25_lines():
    assert len(OWN.read_text().splitlines()) <= 25


def test_the_own_reference_is_the_librarys_label_smoothing(course):
    ex.load_exercises(OWN)
    from scratchnet.exercises.own import REGISTRY

    reference = REGISTRY["smoothed_cross_entropy"].reference
    rng = np.random.default_rng(1)
    logits, targets = rng.normal(size=(7, 5)), rng.integers(0, 5, size=7)
    assert reference(logits, targets) == pytest.approx(
        functional.cross_entropy(logits, targets, label_smoothing=0.1), rel=1e-12, abs=0)


def test_the_own_exercise_gets_the_catalogues_treatment(course, tmp_path):
    key = grade(course / "key", course / "assignment.json")
    assert key.score == key.max_score == TOTAL
    own = {r["id"]: r for r in key.results}["smoothed_cross_entropy"]
    assert [c["name"] for c in own["checks"]] == [
        "inputs 1", "inputs 2", "inputs 3", "docstring examples", "inputs unchanged"]
    losses_py = (course / "hw" / "losses.py").read_text()
    assert "def smoothed_cross_entropy(logits, targets):" in losses_py
    assert "from .softmax import log_softmax" in losses_py   # the student's own
    assert "@exercise" not in losses_py and "smoothed = 0.9" not in losses_py
    # log(softmax) where log_softmax is asked: fails where it underflows, only there
    wrong = tmp_path / "wrong"
    _key_with(course / "key", wrong, "losses.py", "smoothed * log_softmax(logits)",
              "smoothed * np.log(np.exp(logits) / np.exp(logits).sum(-1, keepdims=True))")
    result = {r["id"]: r for r in grade(wrong, course / "assignment.json",
                                        only=["smoothed_cross_entropy"]).results}
    failed = [c["name"] for c in result["smoothed_cross_entropy"]["checks"]
              if c["status"] not in ("pass", "carried")]
    assert failed == ["inputs 3"]


def test_a_log_softmax_mistake_is_charged_once_through_the_own_exercise(course,
                                                                        tmp_path):
    wrong = tmp_path / "wrong"
    _key_with(course / "key", wrong, "softmax.py", "        return (x - m) - log_sum",
              "        return x - m")   # the log of the sum left out
    result = {r["id"]: r for r in grade(wrong, course / "assignment.json",
                                        only=["log_softmax", "smoothed_cross_entropy"]
                                        ).results}
    assert result["log_softmax"]["points"] < result["log_softmax"]["max_points"]
    own = result["smoothed_cross_entropy"]
    assert own["points"] == own["max_points"]
    assert any(c["status"] == "carried" for c in own["checks"])


def test_an_unknown_exercises_file_is_a_usage_error(tmp_path, capsys):
    assert main(["make", "softmax", "--exercises", str(tmp_path / "none.py"),
                 "--out", str(tmp_path / "hw")]) == 2
    assert "no such exercises file" in capsys.readouterr().err


# --- points and visibility from the assignment (item 5) -------------------------------

def test_weights_and_visibility_reach_gradescope(course, tmp_path):
    spec = json.loads((course / "assignment.json").read_text())
    spec["exercises_file"] = str(OWN)
    for entry in spec["exercises"]:
        if entry["id"] == "softmax":
            entry["points"] = 10
            entry["checks"] = {"float32 kept": {"weight": 0.5, "visibility": "hidden"},
                               "values": {"weight": 2, "visibility": "after_published"}}
    path = tmp_path / "assignment.json"
    path.write_text(json.dumps(spec))
    results = tmp_path / "results.json"
    grade(course / "key", path, json_path=results, only=["softmax"])
    tests = {t["name"]: t for t in json.loads(results.read_text())["tests"]}
    assert tests["softmax: float32 kept"]["visibility"] == "hidden"
    assert tests["softmax: values"]["visibility"] == "after_published"
    assert tests["softmax: empty batch"]["visibility"] == "visible"
    share = 10 / (2 + 0.5 + 7)   # nine checks: seven of weight 1
    assert tests["softmax: values"]["max_score"] == pytest.approx(2 * share)
    assert tests["softmax: float32 kept"]["max_score"] == pytest.approx(0.5 * share)


# --- a time-limit failure names the student's line (item 8) ----------------------------

def test_a_time_limit_failure_names_the_line_where_the_loop_was_stopped(course,
                                                                         tmp_path):
    looping = tmp_path / "looping"
    path = _key_with(course / "key", looping, "layers.py",
                     "    return np.where(cache > 0, dout, 0.0).astype(dout.dtype, copy=False)",
                     "    while True:\n        pass")
    line = path.read_text().splitlines().index("    while True:") + 1
    report = ex.check(looping, only=["relu_backward"], limit=0.5)
    messages = [c["message"] for c in report.results[0]["checks"]]
    # the loop is two lines, `while True:` and `pass`: the clock stops it on either
    assert any(f"time limit (0.5 s), stopped at layers.py line {n}" in m
               for m in messages for n in (line, line + 1)), messages


def test_a_student_self_checks_a_notebook(course, capsys):
    assert main(["check", str(course / "nb" / "solutions.ipynb"),
                 "--exercises", str(OWN)]) == 0
    out = capsys.readouterr().out
    assert f"total: {TOTAL}/{TOTAL} points" in out and "self-check" in out


# --- partial credit per returned array (item 5) ----------------------------------------

def test_a_check_credits_the_right_arrays_of_several(course, tmp_path):
    """linear_backward with db summed over the wrong axis: dx and dW still earn
    2/3 of each check that compares them; the network's backward, which calls it,
    keeps its points by carry-forward."""
    wrong = tmp_path / "wrong"
    _key_with(course / "key", wrong, "layers.py", "db = dout.sum(axis=0)",
              "db = dout.sum(axis=0) * 2")
    result = {r["id"]: r for r in grade(wrong, course / "assignment.json",
                                        only=["linear_backward", "TwoLayerMLP.backward"]
                                        ).results}
    checks = {c["name"]: c for c in result["linear_backward"]["checks"]}
    values = checks["values"]
    assert values["status"] == "fail" and "dx and dW are right" in values["message"]
    assert values["points"] == pytest.approx(values["max_points"] * 2 / 3)
    # the edges (batch of one, inputs unchanged) earn the value checks' share, 2/3
    kept = checks["inputs unchanged"]
    assert kept["points"] == pytest.approx(kept["max_points"] * 2 / 3, rel=0, abs=1e-6)
    values_share = 2 / 3   # six checks of weight 1 (1 point each), five compare arrays
    assert result["linear_backward"]["points"] == pytest.approx(
        4 * 2 / 3 + values_share * (2 / 3 + 1), rel=0, abs=1e-6)
    backward = result["TwoLayerMLP.backward"]
    assert backward["points"] == backward["max_points"]


def test_every_catalogue_handout_passes_its_examples_only_when_written(doctests):
    out, outcomes = doctests
    key = {item: outcome for item, outcome in outcomes.items()
           if item.startswith("catalogue_key/")}
    assert key and set(key.values()) == {"PASSED"}, out
    assert not re.search(r"^ERROR", out, re.M), out   # every module imports
    for e in ex.CATALOGUE:
        name = f"{e.chapter}.py::{{}}.{e.chapter}.{e.id}"
        assert key[f"catalogue_key/{name.format('catalogue_key')}"] == "PASSED", e.id
        assert outcomes[f"catalogue_hw/{name.format('catalogue_hw')}"] == "FAILED", e.id


def test_a_chapter_function_with_private_helpers_is_handed_out_without_them(course,
                                                                            doctests):
    key = course / "helped_key"
    for path in key.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                    "scratchnet"):
                assert not any(p.startswith("_") for p in node.module.split("."))
                assert not any(a.name.startswith("_") for a in node.names)
    out, outcomes = doctests
    examples = {item: outcome for item, outcome in outcomes.items()
                if item.startswith("helped_key/")}
    assert len(examples) >= len(HELPED) and set(examples.values()) == {"PASSED"}, out
    results = {r["id"]: r for r in ex.check(key).results}
    assert results["binary_cross_entropy_with_logits"]["points"] == 5
    assert results["log_sigmoid"]["points"] == 5
    # the sandbox holds no library: the chapter's softmax the hand-out imports for
    # softmax_forward is not there (a limit of grading generic exercises, issue 37)
    assert "'softmax' is not defined" in results["softmax_forward"]["checks"][0][
        "message"]


def test_a_students_notebook_checks_an_own_exercise_without_the_instructors_file(
        course):
    """In a kernel of the student's, the instructor's file is not loaded: the check
    cell of the own exercise runs its docstring's examples, no instructor code."""
    cells = json.loads((course / "nb" / "solutions.ipynb").read_text())["cells"]
    check_cells = ["".join(c["source"]) for c in cells
                   if "check" in c["metadata"].get("tags", [])]
    own = next(c for c in check_cells if "smoothed_cross_entropy" in c)
    assert own.startswith("assert_examples(smoothed_cross_entropy)")
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code"
                     and "check" not in c["metadata"].get("tags", []))
    script = code + "\n" + own + "\nprint('ok')\n"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.stdout.strip() == "ok", done.stderr
    skeleton = json.loads((course / "nb" / "homework.ipynb").read_text())["cells"]
    code = "\n".join("".join(c["source"]) for c in skeleton if c["cell_type"] == "code"
                     and "check" not in c["metadata"].get("tags", []))
    done = subprocess.run([sys.executable, "-c", code + "\n" + own],
                          capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert "NotImplementedError" in done.stderr


def test_a_hang_inside_c_code_names_the_line_too(tmp_path):
    """A loop inside C (``sum`` over a huge range): the child's faulthandler
    dumps its stack at the limit, from a thread of its own, naming the student's
    line; the grader kills the sandbox, and the exercise's remaining checks are
    not run (not each waited out)."""
    ex.make(["sigmoid"], tmp_path / "hw", solutions=True)
    path = tmp_path / "hw" / "softmax.py"
    text = path.read_text().replace("    x = np.asarray(x)\n", "    x = np.asarray(x)\n"
                                    "    sum(range(10**12))\n")
    path.write_text(text)
    line = text.splitlines().index("    sum(range(10**12))") + 1
    report = ex.check(tmp_path / "hw", limit=0.1)
    messages = [c["message"] for c in report.results[0]["checks"]]
    assert f"stopped at softmax.py line {line}" in messages[0], messages
    assert messages[1:] and all(m.startswith("not run: ") for m in messages[1:])


def test_an_unknown_id_lists_the_exercises_files_own_exercises_too(tmp_path):
    """A misspelt own exercise is answered with the names the file defines."""
    import subprocess
    import sys
    from pathlib import Path

    example = Path(__file__).resolve().parents[1] / "examples" / "label_smoothing.py"
    done = subprocess.run(
        [sys.executable, "-m", "scratchnet", "exercises", "make",
         "label_smoothed_cross_entropy", "--exercises", str(example),
         "--out", str(tmp_path / "hw")], capture_output=True, text=True)
    assert done.returncode != 0
    assert "your exercises file's: smoothed_cross_entropy" in done.stderr, done.stderr


@pytest.mark.parametrize("method", ["TwoLayerMLP.forward", "TwoLayerMLP.backward"])
def test_a_network_method_handed_out_alone_keeps_the_network_whole(tmp_path, method):
    """The key of one method, with the chapter's other, trains as the chapter
    does: the forward the key writes leaves what the chapter's backward reads
    (the caches and the logits' shape), and the other way round."""
    import importlib

    import scratchnet as sn

    package = "alone_" + method.replace(".", "_").lower()  # a name no other test imports
    ex.make([method], tmp_path / package, solutions=True)
    sys.path.insert(0, str(tmp_path))
    importlib.invalidate_caches()
    try:
        handout = importlib.import_module(f"{package}.mlp")
        x, c = np.linspace(-2.0, 2.0, 6), np.array([0, 1, 0, 1, 1, 0])
        loss, grads = handout.TwoLayerMLP(1, 4, 2, rng=0).loss_and_grads(x, c)
        want_loss, want = sn.TwoLayerMLP(1, 4, 2, rng=0).loss_and_grads(x, c)
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m.split(".")[0] == package]:
            del sys.modules[name]
    assert loss == pytest.approx(want_loss, rel=1e-12, abs=0)
    for name, g in want.items():
        np.testing.assert_allclose(grads[name], g, rtol=1e-12, atol=1e-15)
