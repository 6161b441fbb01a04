"""Each classic mistake, planted alone in a correct minimal submission, costs points
in its own exercise only and gets its hint; the exercises that call it keep theirs
(carry-forward).  Each test grades only the exercise and those that use it."""

from _minimal_submission import write

from scratchnet.exercises import check


def _grade(tmp_path, replace, only):
    report = check(write(tmp_path / "hw", replace), only=only)
    return {r["id"]: r for r in report.results}


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


def test_softmax_without_the_max_shift_overflows(tmp_path):
    results = _grade(tmp_path, {"softmax": [
        ("e = np.exp(x - x.max(axis=-1, keepdims=True))", "e = np.exp(x)")]},
        ["softmax", "cross_entropy_grad"])
    _assert_only(results, "softmax", "subtract each row's maximum",
                 carried=["cross_entropy_grad"])


def test_log_of_softmax_underflows(tmp_path):
    results = _grade(tmp_path, {"softmax": [
        ("return x - logsumexp(x)[..., None]", "return np.log(softmax(x))")]},
        ["log_softmax", "cross_entropy"])
    _assert_only(results, "log_softmax", "log(softmax(x)) underflows",
                 carried=["cross_entropy"])


def test_gradient_missing_one_over_n(tmp_path):
    results = _grade(tmp_path, {"losses": [("return grad / n", "return grad")]},
                     ["cross_entropy_grad", "cross_entropy"])
    _assert_only(results, "cross_entropy_grad", "N = 3 times too large")


def test_gradient_with_the_wrong_sign(tmp_path):
    results = _grade(tmp_path, {"losses": [("return grad / n", "return -grad / n")]},
                     ["cross_entropy_grad"])
    _assert_only(results, "cross_entropy_grad", "the sign is wrong")


def test_transposed_weight_gradient(tmp_path):
    results = _grade(tmp_path, {"layers": [("x.T @ dout", "dout.T @ x")]},
                     ["linear_backward", "TwoLayerMLP.backward"])
    _assert_only(results, "linear_backward", "transpose",
                 carried=["TwoLayerMLP.backward"])
    hints = {c["name"]: c["hint"] for c in results["linear_backward"]["checks"]}
    assert "transpose" in hints["values"]
    assert "transpose" in hints["square W"]   # also where the shapes agree


def test_relu_backward_without_its_mask(tmp_path):
    results = _grade(tmp_path, {"layers": [
        ("return dout * (cache > 0)", "return dout.copy()")]},
        ["relu_backward", "TwoLayerMLP.backward"])
    _assert_only(results, "relu_backward", "mask is missing",
                 carried=["TwoLayerMLP.backward"])


def test_backward_writing_into_its_upstream_gradient(tmp_path):
    results = _grade(tmp_path, {"layers": [
        ("return dout * (cache > 0)", "dout[cache <= 0] = 0\n    return dout")]},
        ["relu_backward", "TwoLayerMLP.backward"])
    _assert_only(results, "relu_backward", "must not write into dout")


def test_update_that_climbs_the_loss(tmp_path):
    results = _grade(tmp_path, {"optim": [
        ("param -= self.lr * grad", "param += self.lr * grad")]}, ["SGD.update"])
    _assert_only(results, "SGD.update", "climbs the loss")


def test_update_that_leaves_the_parameter_alone(tmp_path):
    results = _grade(tmp_path, {"optim": [
        ("param -= self.lr * grad", "param = param - self.lr * grad")]}, ["SGD.update"])
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


def test_no_overflow_hint_where_nothing_overflowed(tmp_path):
    """The row maximum is subtracted but the sum runs down the columns: the NaN
    of the large-logit check is 0 / 0, not an overflow, so the overflow hint,
    which only speaks when the output is the unshifted formula's, stays silent."""
    results = _grade(tmp_path, {"softmax": [
        ("return e / e.sum(axis=-1, keepdims=True)",
         "return e / e.sum(axis=0, keepdims=True)")]}, ["softmax"])
    hints = _hints_of(results["softmax"], "large logits")
    assert hints and not any("overflow" in h for h in hints), hints


def test_cross_entropy_without_the_max_shift_overflows(tmp_path):
    results = _grade(tmp_path, {"losses": [
        ("return nll_loss(log_softmax(logits), targets)",
         "e = np.exp(logits)\n    return nll_loss(np.log(e / e.sum(axis=-1, "
         "keepdims=True)), targets)")]}, ["cross_entropy"])
    hints = _hints_of(results["cross_entropy"], "large logits")
    assert any("exp overflowed" in h for h in hints), hints
