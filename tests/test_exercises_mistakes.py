"""Each classic mistake, planted in a correct minimal submission, costs points in its
own exercise only and gets its hint; the exercises that call it keep theirs
(carry-forward).  Each case grades only the exercise and those that use it.

The cases share gradings: :data:`CASES` are gathered into as few submissions as
hold them apart (:func:`~_minimal_submission.in_groups`: within one, no case's
exercises use or are used by another's, at any depth, nor are called by its
planted code), so each exercise is graded as with its own mistake alone, and
each test reads the results of its case's exercises only."""

import pytest
from _minimal_submission import in_groups, merged, write

from scratchnet.exercises import check

#: name -> (the planted mistake, the exercises graded, the exercises its code calls
#: besides them)
CASES = {
    "softmax without the max shift": ({"softmax": [
        ("e = np.exp(x - x.max(axis=-1, keepdims=True))", "e = np.exp(x)")]},
        ["softmax", "cross_entropy_grad"], []),
    "log of softmax": ({"softmax": [
        ("return x - logsumexp(x)[..., None]", "return np.log(softmax(x))")]},
        ["log_softmax", "cross_entropy"], ["softmax"]),
    "gradient missing 1/N": ({"losses": [("return grad / n", "return grad")]},
                             ["cross_entropy_grad", "cross_entropy"], []),
    "gradient with the wrong sign": ({"losses": [("return grad / n",
                                                  "return -grad / n")]},
                                     ["cross_entropy_grad"], []),
    "transposed weight gradient": ({"layers": [("x.T @ dout", "dout.T @ x")]},
                                   ["linear_backward", "TwoLayerMLP.backward"], []),
    "relu without its mask": ({"layers": [
        ("return dout * (cache > 0)", "return dout.copy()")]},
        ["relu_backward", "TwoLayerMLP.backward"], []),
    "relu writing into dout": ({"layers": [
        ("return dout * (cache > 0)", "dout[cache <= 0] = 0\n    return dout")]},
        ["relu_backward", "TwoLayerMLP.backward"], []),
    "update climbing the loss": ({"optim": [
        ("param -= self.lr * grad", "param += self.lr * grad")]}, ["SGD.update"], []),
    "update leaving the parameter alone": ({"optim": [
        ("param -= self.lr * grad", "param = param - self.lr * grad")]},
        ["SGD.update"], []),
    "softmax summed down the columns": ({"softmax": [
        ("return e / e.sum(axis=-1, keepdims=True)",
         "return e / e.sum(axis=0, keepdims=True)")]}, ["softmax"], []),
    "cross-entropy without the max shift": ({"losses": [
        ("return nll_loss(log_softmax(logits), targets)",
         "e = np.exp(logits)\n    return nll_loss(np.log(e / e.sum(axis=-1, "
         "keepdims=True)), targets)")]}, ["cross_entropy"], []),
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Each case's name -> its exercises' results (five gradings for the eleven)."""
    out = {}
    for group in in_groups(CASES, lambda name: [*CASES[name][1], *CASES[name][2]]):
        hw = write(tmp_path_factory.mktemp("hw") / "hw",
                   merged(CASES[name][0] for name in group))
        report = check(hw, only=[i for name in group for i in CASES[name][1]])
        results = {r["id"]: r for r in report.results}
        out.update({name: {i: results[i] for i in CASES[name][1]} for name in group})
    return out


def _failed_hints(result):
    return [c["hint"] for c in result["checks"] if c["status"] not in ("pass", "carried")]


def _assert_only(results, exercise, hint_words, carried=()):
    """``exercise`` lost points with a hint containing ``hint_words``; the others
    scored full marks, ``carried`` ones by carry-forward naming ``exercise``."""
    bad = results[exercise]
    assert bad["points"] < bad["max_points"]
    assert any(hint_words in hint for hint in _failed_hints(bad)), _failed_hints(bad)
    for ex_id, r in results.items():
        if ex_id != exercise:
            assert r["points"] == r["max_points"], (ex_id, r)
    for ex_id in carried:
        notes = [c["hint"] for c in results[ex_id]["checks"] if c["status"] == "carried"]
        assert notes and all(f"fix {exercise}" in n for n in notes)


def test_softmax_without_the_max_shift_overflows(graded):
    results = graded["softmax without the max shift"]
    _assert_only(results, "softmax", "subtract each row's maximum",
                 carried=["cross_entropy_grad"])


def test_log_of_softmax_underflows(graded):
    results = graded["log of softmax"]
    _assert_only(results, "log_softmax", "log(softmax(x)) underflows",
                 carried=["cross_entropy"])


def test_gradient_missing_one_over_n(graded):
    results = graded["gradient missing 1/N"]
    _assert_only(results, "cross_entropy_grad", "N = 3 times too large")


def test_gradient_with_the_wrong_sign(graded):
    results = graded["gradient with the wrong sign"]
    _assert_only(results, "cross_entropy_grad", "the sign is wrong")


def test_transposed_weight_gradient(graded):
    results = graded["transposed weight gradient"]
    _assert_only(results, "linear_backward", "transpose",
                 carried=["TwoLayerMLP.backward"])
    hints = {c["name"]: c["hint"] for c in results["linear_backward"]["checks"]}
    assert "transpose" in hints["values"]
    assert "transpose" in hints["square W"]   # also where the shapes agree


def test_relu_backward_without_its_mask(graded):
    results = graded["relu without its mask"]
    _assert_only(results, "relu_backward", "mask is missing",
                 carried=["TwoLayerMLP.backward"])


def test_backward_writing_into_its_upstream_gradient(graded):
    results = graded["relu writing into dout"]
    _assert_only(results, "relu_backward", "must not write into dout")


def test_update_that_climbs_the_loss(graded):
    results = graded["update climbing the loss"]
    _assert_only(results, "SGD.update", "climbs the loss")


def test_update_that_leaves_the_parameter_alone(graded):
    results = graded["update leaving the parameter alone"]
    _assert_only(results, "SGD.update", "update it in place")


def test_a_forward_pass_without_its_bias_costs_forward_only(tmp_path):
    """Carry-forward through a method: the answer key's backward reads the caches
    of the given forward, so the library's forward can stand in for the student's."""
    from scratchnet.exercises import make

    make(["mlp"], tmp_path / "hw", solutions=True)
    path = tmp_path / "hw" / "mlp.py"
    text = path.read_text()
    old = 'linear_forward(x, P["W1"], P["b1"])'
    assert old in text
    path.write_text(text.replace(old, 'linear_forward(x, P["W1"], 0 * P["b1"])'))
    results = {r["id"]: r for r in check(tmp_path / "hw").results}
    assert results["TwoLayerMLP.forward"]["points"] == 0
    backward = results["TwoLayerMLP.backward"]
    assert backward["points"] == backward["max_points"]
    assert any("fix TwoLayerMLP.forward" in c["hint"] for c in backward["checks"])


def _hints_of(result, check_name):
    return [c["hint"] for c in result["checks"] if c["name"] == check_name]


def test_no_overflow_hint_where_nothing_overflowed(graded):
    """The row maximum is subtracted but the sum runs down the columns: the NaN
    of the large-logit check is 0 / 0, not an overflow, so the overflow hint,
    which only speaks when the output is the unshifted formula's, stays silent."""
    results = graded["softmax summed down the columns"]
    hints = _hints_of(results["softmax"], "large logits")
    assert hints and not any("overflow" in h for h in hints), hints


def test_cross_entropy_without_the_max_shift_overflows(graded):
    results = graded["cross-entropy without the max shift"]
    hints = _hints_of(results["cross_entropy"], "large logits")
    assert any("exp overflowed" in h for h in hints), hints
