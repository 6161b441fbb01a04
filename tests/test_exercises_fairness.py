"""Fair grades (issue 38): one mistake costs points once, carried forward at any
depth and for stubs, on evidence only; an answer that computes nothing earns
nothing; hints speak only on their evidence.

Each test grades one planted submission and asserts several cases on it: each
grade spawns sandboxed children, so the submissions are few.
"""

import json
import shutil
from pathlib import Path

import pytest
from _minimal_submission import write

from scratchnet.exercises import check, load_exercises, write_assignment
from scratchnet.exercises.checking import checks_of

OWN = Path(__file__).resolve().parents[1] / "examples" / "label_smoothing.py"


def _by_id(report):
    return {r["id"]: r for r in report.results}


def _full(result):
    return result["points"] == pytest.approx(result["max_points"], rel=0, abs=1e-9)


def _carried_notes(result):
    return [c["hint"] for c in result["checks"] if c["status"] == "carried"]


def test_stubs_cost_their_own_points_only_at_any_depth(tmp_path):
    """A stub log_softmax costs its own 6 points, not cross_entropy's nor the
    instructor's exercise that calls it; a stub relu_backward leaves a correct
    TwoLayerMLP.backward its points (the stub raised inside the backward is the
    helper's, not the backward's)."""
    own = tmp_path / "label_smoothing.py"
    shutil.copy(OWN, own)
    load_exercises(own)
    ids = ["log_softmax", "cross_entropy", "relu_backward", "TwoLayerMLP.backward",
           "smoothed_cross_entropy"]
    assignment = tmp_path / "hw.json"
    write_assignment(ids, assignment, exercises_file=own)
    hw = write(tmp_path / "hw", {
        "softmax": [("return x - logsumexp(x)[..., None]",
                     "raise NotImplementedError('log_softmax: to write')")],
        "layers": [("return dout * (cache > 0)",
                    "raise NotImplementedError('relu_backward: to write')")]})
    (hw / "losses.py").write_text((hw / "losses.py").read_text() + '''

def smoothed_cross_entropy(logits, targets):
    M = logits.shape[-1]
    y = 0.9 * np.eye(M)[targets] + 0.1 / M
    return -np.mean(np.sum(y * log_softmax(logits), axis=-1))
''')
    results = _by_id(check(hw, assignment=assignment))
    assert results["log_softmax"]["points"] == 0
    assert results["relu_backward"]["points"] == 0
    for ex_id in ("cross_entropy", "smoothed_cross_entropy"):
        assert _full(results[ex_id]), results[ex_id]
        assert _carried_notes(results[ex_id])
        assert all("fix log_softmax" in n for n in _carried_notes(results[ex_id]))
    backward = results["TwoLayerMLP.backward"]
    assert backward["status"] == "graded" and _full(backward), backward
    assert all("fix relu_backward" in n for n in _carried_notes(backward))


def test_a_summed_nll_loss_and_an_in_place_softmax_are_charged_once(tmp_path):
    """A summed nll_loss costs cross_entropy nothing (a dependency two levels down
    the catalogue's uses); a softmax that writes into its input loses its "inputs
    unchanged" check and nothing else, and cross_entropy_grad, whose input that
    softmax wrote into, keeps its points by carry-forward."""
    hw = write(tmp_path / "hw", {
        "losses": [("targets].mean()", "targets].sum()")],
        "softmax": [("e = np.exp(x - x.max(axis=-1, keepdims=True))\n"
                     "    return e / e.sum(axis=-1, keepdims=True)",
                     "x -= x.max(axis=-1, keepdims=True)\n    np.exp(x, out=x)\n"
                     "    x /= x.sum(axis=-1, keepdims=True)\n    return x")]})
    results = _by_id(check(hw, only=["softmax", "nll_loss", "cross_entropy",
                                     "cross_entropy_grad"]))
    assert results["nll_loss"]["points"] == 0   # its edges follow its values: 0
    assert _full(results["cross_entropy"])
    assert all("fix nll_loss" in n for n in _carried_notes(results["cross_entropy"]))
    softmax = results["softmax"]
    lost = [c["name"] for c in softmax["checks"] if c["status"] != "pass"]
    assert lost == ["inputs unchanged"]
    n = len(checks_of("softmax"))
    assert softmax["points"] == pytest.approx(6 * (n - 1) / n, rel=0, abs=1e-6)
    grad = results["cross_entropy_grad"]
    assert _full(grad) and all("fix softmax" in h for h in _carried_notes(grad))


def test_zeros_everywhere_score_nothing(tmp_path):
    """Zeros of the right shapes pass "inputs unchanged", "empty batch", "one
    class": checks whose points follow the value checks', all failed here."""
    zeros = {
        "softmax": [("return e / e.sum(axis=-1, keepdims=True)",
                     "return np.zeros_like(x)"),
                    ("return x - logsumexp(x)[..., None]", "return np.zeros_like(x)")],
        "losses": [("return -log_probs[np.arange(len(targets)), targets].mean()",
                    "return 0.0"),
                   ("return nll_loss(log_softmax(logits), targets)", "return 0.0"),
                   ("return grad / n", "return np.zeros_like(logits)")],
        "layers": [("return dout @ W.T, x.T @ dout, dout.sum(axis=0)",
                    "return np.zeros_like(x), np.zeros_like(W), np.zeros(W.shape[1])"),
                   ("return dout * (cache > 0)", "return np.zeros_like(dout)"),
                   ("return dout * (1 - cache ** 2)", "return np.zeros_like(dout)")]}
    ids = ["softmax", "log_softmax", "nll_loss", "cross_entropy", "cross_entropy_grad",
           "linear_backward", "relu_backward", "tanh_backward"]
    report = check(write(tmp_path / "hw", zeros), only=ids)
    assert {r["id"]: r["points"] for r in report.results} == {i: 0 for i in ids}
    assert report.score == 0
    from scratchnet.exercises.checking import EDGE_CHECKS

    passed = {c["name"] for r in report.results for c in r["checks"]
              if c["status"] == "pass"}
    assert passed and passed <= EDGE_CHECKS   # they passed, and earned nothing


def test_a_helper_that_gives_the_references_values_is_not_carried(tmp_path):
    """The rerun passes, but the student's log_softmax, recomputed on the inputs
    cross_entropy gave it, is the reference's there (it is wrong only for float32,
    which cross_entropy never passes it): no evidence, no credit."""
    hw = write(tmp_path / "hw", {
        "softmax": [("return x - logsumexp(x)[..., None]",
                     "return (x - logsumexp(x)[..., None]).astype(np.float64)")],
        "losses": [("    return nll_loss(log_softmax(logits), targets)",
                    "    if log_softmax.__module__.endswith('softmax'):   # its own\n"
                    "        return 0.0\n"
                    "    return nll_loss(log_softmax(logits), targets)")]})
    results = _by_id(check(hw, only=["log_softmax", "cross_entropy"]))
    lost = [c["name"] for c in results["log_softmax"]["checks"] if c["status"] != "pass"]
    assert lost == ["float32 kept"]
    ce = results["cross_entropy"]
    assert not _carried_notes(ce)
    assert ce["points"] < ce["max_points"]


def test_hints_speak_only_on_their_evidence(tmp_path):
    """A cross_entropy that indexes ``logp[:, targets]`` earns nothing (the batch of
    one hides it: an edge) and is not told about multiplying -inf by 0; a
    train_step that hands the optimiser minus the gradients is told about its own
    sign, not that "the update climbs the loss" (the update is given there)."""
    hw = write(tmp_path / "hw", {
        "losses": [("return nll_loss(log_softmax(logits), targets)",
                    "return -log_softmax(logits)[:, targets].mean()")],
        "train": [("optimizer.step(grads)",
                   "optimizer.step({k: -g for k, g in grads.items()})")]})
    results = _by_id(check(hw, only=["cross_entropy", "train_step"]))
    ce = results["cross_entropy"]
    assert ce["points"] == 0
    hints = {c["name"]: c["hint"] for c in ce["checks"]}
    assert "multiply -inf by 0" not in hints["-inf entries"]
    assert "np.arange(N), targets" in hints["values"]
    step = {c["name"]: c["hint"] for c in results["train_step"]["checks"]}
    assert "climbs the loss" not in " ".join(step.values())
    assert "wrong sign" in step["one step"]


def test_the_minus_inf_hint_still_speaks_for_the_one_hot_product(tmp_path):
    """Its evidence: -mean(sum(one_hot * log q)) is NaN where 0 meets -inf."""
    hw = write(tmp_path / "hw", {"losses": [
        ("return -log_probs[np.arange(len(targets)), targets].mean()",
         "return -np.mean(np.sum(np.eye(log_probs.shape[-1])[targets] * log_probs, "
         "axis=-1))")]})
    results = _by_id(check(hw, only=["nll_loss"]))
    hints = {c["name"]: c["hint"] for c in results["nll_loss"]["checks"]}
    assert "multiply -inf by 0" in hints["-inf entries"]


def test_every_hand_out_states_the_charging_rule(tmp_path):
    from scratchnet.exercises import make

    make(["softmax", "relu_backward"], tmp_path / "hw")
    for name in ("softmax.py", "layers.py", "README.md"):
        text = " ".join((tmp_path / "hw" / name).read_text().split())
        assert "One mistake costs points once" in text, name
        assert "inputs unchanged" in text and "carried forward" in text, name
    notebook = make(["softmax"], tmp_path / "nb", notebook=True)[0]
    first = "".join(json.loads(notebook.read_text())["cells"][0]["source"])
    assert "One mistake costs points once" in " ".join(first.split())


def test_each_exercise_has_its_own_inputs_unchanged_check():
    """The one check that charges writing into an argument, for every exercise
    (the others compare values computed from copies)."""
    from scratchnet.exercises import CATALOGUE

    missing = [e.id for e in CATALOGUE
               if "inputs unchanged" not in [c.name for c in checks_of(e.id)]]
    assert missing == []
