"""The homework kit: catalogue, student edition, grader, report, Gradescope JSON.

The expensive part, grading in a child process, runs a few times only: the
answer key and a hand-written minimal submission once each (all exercises),
the skeleton once, and the failure modes with ``only``.
"""

import importlib
import inspect
import json
import re
import sys

import numpy as np
import pytest
from _minimal_submission import write

import scratchnet as sn
import scratchnet.exercises as ex
from scratchnet import tasks
from scratchnet.exercises import checks_models
from scratchnet.exercises.cli import main
from scratchnet.mlp import TwoLayerMLP

REQUIRED = ["softmax", "log_softmax", "logsumexp", "cross_entropy", "cross_entropy_grad",
            "nll_loss", "linear_backward", "relu_backward", "tanh_backward", "entropy",
            "kl_divergence", "two_gaussian_posterior", "TwoLayerMLP.forward",
            "TwoLayerMLP.backward", "SGD.update", "Adam.update", "train_step"]


def _chapter_object(exercise):
    obj = importlib.import_module(f"scratchnet.{exercise.chapter}")
    for part in exercise.id.split("."):
        obj = getattr(obj, part)
    return obj


# --- the catalogue ------------------------------------------------------------------

def test_catalogue_has_the_required_exercises_one_per_chapter_at_least():
    ids = [e.id for e in ex.CATALOGUE]
    assert len(ids) >= 15 and set(REQUIRED) <= set(ids)
    assert {e.chapter for e in ex.CATALOGUE} == set(ex.CHAPTER_ORDER)


@pytest.mark.parametrize("exercise", ex.CATALOGUE, ids=lambda e: e.id)
def test_each_exercise_is_a_chapter_object_named_by_its_id(exercise):
    obj = _chapter_object(exercise)
    assert obj.__qualname__ == exercise.id
    params = list(inspect.signature(obj).parameters)
    assert list(exercise.covers) == [p for p in params if p in exercise.covers]
    assert exercise.points > 0 and exercise.teaches and exercise.todo
    for name in exercise.given:   # given objects are chapter objects too
        assert any(hasattr(importlib.import_module(f"scratchnet.{c}"), name.split(".")[0])
                   for c in ex.CHAPTER_ORDER), name


def test_list_prints_the_catalogue(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert all(f"{e.id}(" in out for e in ex.CATALOGUE)
    assert "cross_entropy(logits, targets)" in out   # the covered arguments only


# --- the student edition ------------------------------------------------------------

@pytest.fixture(scope="module")
def editions(tmp_path_factory):
    root = tmp_path_factory.mktemp("editions")
    assert main(["make", "--out", str(root / "hw")]) == 0
    assert main(["make", "--solutions", "--out", str(root / "key")]) == 0
    return root


def _import(directory, name):
    for cached in [m for m in sys.modules if m.split(".")[0] == directory.name]:
        del sys.modules[cached]   # another test's package of the same name
    sys.path.insert(0, str(directory.parent))
    try:
        return importlib.import_module(f"{directory.name}.{name}")
    finally:
        sys.path.remove(str(directory.parent))


def test_make_writes_one_module_per_chapter_and_a_readme(editions):
    hw = editions / "hw"
    assert sorted(p.name for p in hw.iterdir()) == sorted(
        [f"{c}.py" for c in ex.CHAPTER_ORDER] + ["__init__.py", "README.md"])
    assert "exercises check hw" in (hw / "README.md").read_text()
    assert "from .softmax import" in (hw / "losses.py").read_text()   # relative
    assert "from .layers import" in (hw / "mlp.py").read_text()


@pytest.mark.parametrize("exercise", ex.CATALOGUE, ids=lambda e: e.id)
def test_skeleton_keeps_signature_and_docstring_and_raises(editions, exercise):
    """The exercise's signature, a docstring for it alone, and the default stub."""
    module = _import(editions / "hw", exercise.chapter)
    obj = module
    for part in exercise.id.split("."):
        obj = getattr(obj, part)
    assert list(inspect.signature(obj).parameters) == list(exercise.covers)
    doc = inspect.getdoc(obj)
    assert "Examples" in doc and "sn." not in doc and "scratchnet" not in doc
    uncovered = set(inspect.signature(_chapter_object(exercise)).parameters) - set(
        exercise.covers)
    named = [a for a in uncovered  # as an argument: ``axis``, axis=0, "axis : int"
             if re.search(rf"``{a}``|\b{a}=|^\s*{a}\b.* : ", doc, re.M)]
    assert named == []
    source = inspect.getsource(obj)
    assert "NotImplementedError(\n" in source or "NotImplementedError(\"" in source
    assert f"{exercise.id}: " in source


def test_make_takes_chapters(tmp_path, capsys):
    assert main(["make", "layers", "--out", str(tmp_path / "hw")]) == 0
    assert [e.id for e in ex.exercises_in(tmp_path / "hw")] == [
        "linear_backward", "relu_backward", "tanh_backward"]


def test_what_is_given_works(editions):
    layers = _import(editions / "hw", "layers")
    out, cache = layers.linear_forward(np.ones((2, 3)), np.ones((3, 4)), np.zeros(4))
    assert out.shape == (2, 4) and len(cache) == 2
    mlp = _import(editions / "hw", "mlp")
    chapter = importlib.import_module("scratchnet.mlp").TwoLayerMLP
    assert issubclass(mlp.TwoLayerMLP, chapter)
    assert set(vars(mlp.TwoLayerMLP)) >= {"forward", "backward"}


def test_the_given_forward_is_in_place_when_only_backward_is_asked(tmp_path):
    ex.make(["TwoLayerMLP.backward"], tmp_path / "hw")
    mlp = _import(tmp_path / "hw", "mlp")
    model = mlp.TwoLayerMLP(2, 3, 2, rng=0)
    assert model.forward(np.ones((4, 2))).shape == (4, 2)   # given, working
    with pytest.raises(NotImplementedError, match=r"TwoLayerMLP\.backward"):
        model.backward(np.ones((4, 2)))


# --- grading --------------------------------------------------------------------------

def test_the_answer_key_scores_full_marks(editions, tmp_path):
    # within the grader's own time budgets: a check past its limit would score 0
    status = main(["check", str(editions / "key"), "--json", str(tmp_path / "r.json")])
    assert status == 0
    results = json.loads((tmp_path / "r.json").read_text())
    assert results["score"] == sum(e.points for e in ex.CATALOGUE) == 100
    assert {"name", "score", "max_score", "output"} <= set(results["tests"][0])
    ids = [e.id for e in ex.CATALOGUE]
    assert all(t["name"].split(":")[0] in ids for t in results["tests"])
    assert sum(t["score"] for t in results["tests"]) == pytest.approx(100)


def test_a_minimal_numpy_submission_scores_full_marks(tmp_path):
    report = ex.check(write(tmp_path / "hw"))
    assert report.score == report.max_score == 100, report.text()


def test_the_skeleton_scores_zero_without_tracebacks(editions, capsys):
    assert main(["check", str(editions / "hw")]) == 1
    out = capsys.readouterr().out
    assert out.count("not implemented yet") == len(ex.CATALOGUE)
    assert "Traceback" not in out and "\ntotal: 0/100 points\n" in out
    assert out.strip().endswith("grades with the assignment)")   # a self-check


def test_a_package_without_init_is_graded(tmp_path):
    hw = write(tmp_path / "hw")
    (hw / "__init__.py").unlink()
    report = ex.check(hw, only=["relu_backward"])
    assert report.score == report.max_score == 5, report.text()


def test_usage_errors_exit_2(tmp_path, capsys):
    assert main(["check", str(tmp_path / "missing")]) == 2
    (tmp_path / "empty").mkdir()
    assert main(["check", str(tmp_path / "empty")]) == 2
    assert main(["check", str(write(tmp_path / "hw")), "--only", "nothing"]) == 2
    assert main(["make", "nothing", "--out", str(tmp_path / "x")]) == 2
    assert main(["frobnicate"]) == 2
    assert "error: no such submission" in capsys.readouterr().err


def test_handing_back_the_library_function_scores_nothing(tmp_path):
    hw = write(tmp_path / "hw", {
        "softmax": [("def softmax(x):", "from scratchnet import softmax\n\n\n"
                     "def unused(x):")],
        "layers": [("return dout * (cache > 0)",
                    "import scratchnet as sn\n    return sn.layers.relu_backward(dout, cache)")]})
    report = ex.check(hw, only=["softmax", "relu_backward", "tanh_backward"])
    results = {r["id"]: r for r in report.results}
    for name in ("softmax", "relu_backward"):
        assert results[name]["points"] == 0
        assert "scratchnet's own" in results[name]["message"]
    assert results["tanh_backward"]["points"] == 5


def test_an_infinite_loop_costs_its_checks_only(tmp_path):
    hw = write(tmp_path / "hw", {"layers": [
        ("return dout * (cache > 0)", "while True:\n        pass")]})
    report = ex.check(hw, only=["relu_backward", "tanh_backward"], limit=0.3)
    relu, tanh = report.results
    assert relu["points"] == 0 and "time limit" in relu["checks"][0]["message"]
    assert tanh["points"] == tanh["max_points"]


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS is enforced on Linux")
def test_a_huge_allocation_costs_its_exercise_only(tmp_path):
    """1 GB, which a machine without the limit would allocate: the limit stops it."""
    hw = write(tmp_path / "hw", {"layers": [
        ("return dout * (cache > 0)", "return np.ones(2**27) * dout.sum()")]})
    report = ex.check(hw, only=["relu_backward", "tanh_backward"], memory_mb=768)
    relu, tanh = report.results
    assert relu["points"] == 0 and "out of memory" in relu["checks"][0]["message"]
    assert tanh["points"] == tanh["max_points"]


def test_a_crash_of_the_child_costs_its_exercise_only(tmp_path):
    hw = write(tmp_path / "hw", {"layers": [
        ("return dout * (cache > 0)", "import faulthandler\n    faulthandler._sigsegv()")]})
    report = ex.check(hw, only=["relu_backward", "tanh_backward"])
    relu, tanh = report.results
    assert relu["points"] == 0 and "died" in relu["checks"][0]["message"]   # per check now
    assert tanh["points"] == tanh["max_points"]


def test_an_exception_says_where_and_a_syntax_error_costs_its_module(tmp_path):
    hw = write(tmp_path / "hw", {
        "layers": [("return dout * (1 - cache ** 2)", "return dout @ cache")],
        "information": [("def entropy(p):", "def entropy(p)")]})
    report = ex.check(hw, only=["tanh_backward", "entropy", "relu_backward"])
    results = {r["id"]: r for r in report.results}
    message = results["tanh_backward"]["checks"][0]["message"]
    assert "raised ValueError" in message and "layers.py line 14" in message
    assert "syntax error at information.py line" in results["entropy"]["message"]
    assert results["relu_backward"]["points"] == 5


def test_assert_passes_in_a_students_own_test():
    def softmax(x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    ex.assert_passes("softmax", softmax)
    with pytest.raises(AssertionError, match="subtract each row's maximum"):
        ex.assert_passes("softmax", lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True),
                         "large logits")
    with pytest.raises(KeyError):
        ex.assert_passes("softmax", softmax, "no such check")


def _reference_kls(seeds, steps):
    """:func:`~scratchnet.exercises.train_to_posterior`'s training for each seed (the
    chapter's start, batches of 64 drawn from ``seed + 1000``, SGD with lr 0.3),
    replayed for all seeds at once by ``fast.Ensemble`` (pinned to the chapters by
    tests/test_fast*.py); the expected KL of each member's network."""
    task = tasks.unequal_variance()
    starts = [TwoLayerMLP(1, 16, 2, rng=seed) for seed in seeds]
    ensemble = sn.fast.Ensemble([1, 16, 2], rngs=list(seeds))
    for name in ensemble.params:
        ensemble.params[name][...] = [start.params[name] for start in starts]

    def stream(rng):
        while True:
            yield task.sample(64, rng)

    batches = sn.fast.stack_batches([stream(np.random.default_rng(seed + 1000))
                                     for seed in seeds])
    sn.fast.train(ensemble, batches, steps=steps,
                  optimizer=sn.SGD(ensemble.params, lr=0.3))
    kls = []
    for member, net in enumerate(starts):
        for name, value in net.params.items():
            value[...] = ensemble.params[name][member]
        kls.append(float(task.expected_kl(lambda x, net=net: sn.softmax(net.forward(x)))))
    return kls


def test_the_reference_trains_to_the_posterior_with_margin_over_6_seeds(monkeypatch):
    """Issue 30 (unequal variances): the check trains from seed 0; over seeds 0 to 5
    the reference reaches at most 0.455 of the threshold (seed 4: 0.0036 nats, the
    same within 1e-16 nats under OpenBLAS's Haswell and Sandybridge kernels), under
    the 0.667 asked here.  The six trainings run as one ensemble (1 s, not 10 s);
    that it replays the check's own training is checked first, on 20 steps, against
    ``train_to_posterior`` itself (the two agree to 2e-15 after all 2000 steps)."""
    seeds = range(6)
    monkeypatch.setattr(checks_models, "TRAIN_STEPS", 20)
    short = [ex.train_to_posterior(seed=seed) for seed in seeds]
    np.testing.assert_allclose(_reference_kls(seeds, 20), short, rtol=1e-9, atol=0)
    monkeypatch.undo()
    kls = _reference_kls(seeds, ex.TRAIN_STEPS)
    assert max(kls) < ex.KL_THRESHOLD / 1.5, kls


def test_the_catalogue_table_keeps_its_columns_for_every_chapter_name():
    """``exercises list``: each row's points end under the header's "points",
    however long the chapter's name (``information`` and ``two_gaussians``
    pushed theirs one and three places right)."""
    from scratchnet.exercises import catalogue_text

    lines = catalogue_text().splitlines()
    end = lines[0].index("points") + len("points")
    rows = [line for line in lines[1:] if line and not line.startswith((" ", "1"))
            and "exercises," not in line]
    assert len(rows) >= 17
    for row in rows:
        head = row[:end].split()
        assert head[-1].isdigit() and row[end] == " ", row
