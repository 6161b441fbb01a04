"""The hand-out as a student meets it: clean code, doctests that catch the classic
mistakes, whole sentences in its stubs, math typeset in a notebook, feedback that
names the notebook's cell, and ``assert_passes`` that says what passed."""

import doctest
import importlib
import json
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

from scratchnet.exercises import assert_passes, check, course, make
from scratchnet.exercises.course import submission_package

ROOT = Path(__file__).resolve().parents[1]
OWN = ROOT / "examples" / "label_smoothing.py"

# --- clean: what ``make`` writes passes the project's linter -----------------------


def test_every_kind_of_handout_is_ruff_clean(tmp_path):
    """Package and notebook, stubs of each kind and the answer key, with an
    instructor's exercise: ``ruff check`` with the project's configuration
    (E501 at 88 columns, unused imports, isort's order) finds nothing."""
    pytest.importorskip("ruff")
    code = textwrap.dedent(f"""
        from scratchnet.exercises import make
        out, own = {str(tmp_path)!r}, {str(OWN)!r}
        for hints in ("pointer", "none", "formula"):
            make([], out + "/hw_" + hints, stub_hints=hints)
        make([], out + "/key", solutions=True)
        make([], out + "/nb", notebook=True)
        make([], out + "/nbkey", notebook=True, solutions=True)
        make(["smoothed_cross_entropy", "softmax"], out + "/own", exercises=own)
        make(["smoothed_cross_entropy"], out + "/ownnb", exercises=own, notebook=True)
        """)
    subprocess.run([sys.executable, "-c", code], check=True)   # own exercises stay there
    out = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--config",
         str(ROOT / "pyproject.toml"), str(tmp_path)],
        capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert len(list(tmp_path.rglob("*.py"))) > 30   # it did lint the hand-outs


# --- doctests that discriminate: each classic mistake fails the hand-out's examples --

# (exercise, its module, the key's line, the mistake).  The hand-out's examples run
# on the answer key with the mistake planted: at least one must fail.
MISTAKES = {
    "softmax without the max shift":
        ("softmax", "softmax",
         "e = np.exp(x - np.max(x, axis=axis, keepdims=True, initial=-np.inf))",
         "e = np.exp(x)"),
    "softmax normalised over the whole batch":
        ("softmax", "softmax", "return e / e.sum(axis=axis, keepdims=True)",
         "return e / e.sum()"),
    "log of the softmax":
        ("log_softmax", "softmax", "return (x - m) - log_sum",
         "return np.log(np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True))"),
    "the sum for the mean":
        ("nll_loss", "losses", "log_q[np.arange(len(t)), t] / len(t))",
         "log_q[np.arange(len(t)), t])"),
    "the gradient without 1/N":
        ("cross_entropy_grad", "losses", ".astype(q.dtype) / len(t)", ".astype(q.dtype)"),
    "relu_backward without its mask":
        ("relu_backward", "layers",
         "return np.where(cache > 0, dout, 0.0).astype(dout.dtype, copy=False)",
         "return dout"),
    "0 log 0 left as NaN":
        ("entropy", "information", "log_p = np.log(p, out=np.zeros_like(p), where=p > 0)",
         "log_p = np.log(p)"),
    "the posterior without its 1/sigma factors (unequal sigmas)":
        ("two_gaussian_posterior", "two_gaussians",
         "r += math.log(sigma1) - math.log(sigma2) + ", "r += "),
    "a transposed weight gradient (a batch of two rows)":
        ("linear_backward", "layers", "dW = x.T @ dout", "dW = dout.T @ x"),
    "the bias gradient averaged (a batch of two rows)":
        ("linear_backward", "layers", "db = dout.sum(axis=0)", "db = dout.mean(axis=0)"),
    "the gradient's softmax without the max shift (a large logit)":
        ("cross_entropy_grad", "losses", "q = softmax(f)",
         "q = np.exp(f) / np.exp(f).sum(axis=-1, keepdims=True)"),
}


def _doctest_failures(tmp_path, ex_id, module, old="", new=""):
    """Failed examples of the hand-out's docstring of ``ex_id`` (the answer key,
    ``old`` replaced by ``new``), run as ``pytest --doctest-modules`` would."""
    package = f"hw_{abs(hash((ex_id, old, new)))}"
    make([ex_id], tmp_path / package, solutions=True)
    path = tmp_path / package / f"{module}.py"
    text = path.read_text()
    assert old in text, f"the key's {ex_id} no longer reads {old!r}"
    path.write_text(text.replace(old, new))
    sys.path.insert(0, str(tmp_path))
    try:
        mod = importlib.import_module(f"{package}.{module}")
    finally:
        sys.path.remove(str(tmp_path))
    runner = doctest.DocTestRunner(
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    name = ex_id.split(".")[-1]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for test in doctest.DocTestFinder().find(mod):
            if test.name.split(".")[-1] == name and test.examples:
                runner.run(test, out=lambda _: None)
    assert runner.tries > 0, f"{ex_id} has no examples"
    return runner.failures


@pytest.mark.parametrize("ex_id, module", sorted(
    {(e, m) for e, m, _, _ in MISTAKES.values()}))
def test_the_handouts_examples_pass_on_the_answer_key(tmp_path, ex_id, module):
    assert _doctest_failures(tmp_path, ex_id, module) == 0


@pytest.mark.parametrize("mistake", list(MISTAKES))
def test_the_handouts_examples_catch_the_classic_mistake(tmp_path, mistake):
    ex_id, module, old, new = MISTAKES[mistake]
    assert _doctest_failures(tmp_path, ex_id, module, old, new) > 0


# --- stubs and Markdown -------------------------------------------------------------


def test_an_instructors_stub_says_a_whole_sentence(tmp_path):
    """The stub of an exercise whose first sentence runs over a line break into a
    formula says the whole sentence, its formula as plain text."""
    own = tmp_path / "mine.py"
    own.write_text(textwrap.dedent('''
        import numpy as np
        from scratchnet.exercises import exercise


        @exercise(points=2, module="losses", inputs=[(np.zeros((2, 3)), np.array([0, 2]))])
        def mean_nll(logits, targets):
            r"""Cross-entropy of raw scores: the batch mean of
            :math:`-\\log \\mathrm{softmax}(f)_{t}`.  Finite for large logits.
            """
            shifted = logits - logits.max(axis=-1, keepdims=True)
            log_q = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
            return -log_q[np.arange(len(targets)), targets].mean()
        '''))
    code = (f"from scratchnet.exercises import make\n"
            f"make(['mean_nll'], {str(tmp_path / 'hw')!r}, exercises={str(own)!r})")
    subprocess.run([sys.executable, "-c", code], check=True)
    text = (tmp_path / "hw" / "losses.py").read_text()
    stub = text[text.index("NotImplementedError("):]
    stub = " ".join(part.strip().strip('"') for part in stub[:stub.index("\n    )")]
                    .splitlines()[1:])
    assert stub == ("mean_nll: cross-entropy of raw scores: the batch mean of "
                    "-log softmax(f)_t")


def test_a_math_role_over_two_lines_is_typeset_in_the_notebook(tmp_path):
    """``two_gaussian_posterior``'s Notes break a ``:math:`` role over two lines."""
    path = make(["two_gaussian_posterior"], tmp_path, notebook=True)[0]
    markdown = "".join("".join(c["source"]) for c in json.loads(path.read_text())["cells"]
                       if c["cell_type"] == "markdown")
    assert ":math:" not in markdown
    assert r"$\log N(x; \mu, \sigma) = -\tfrac12 ((x - \mu)/\sigma)^2 - \log \sigma" \
        in markdown


# --- feedback where the student works -----------------------------------------------


def test_a_notebook_students_error_names_the_cell_and_the_line(tmp_path):
    from scratchnet.exercises.notebook import cell_lines, in_cells

    path = make(["softmax"], tmp_path / "nb", notebook=True)[0]
    nb = json.loads(path.read_text())
    number, cell = next((i, c) for i, c in enumerate(nb["cells"], 1)
                        if "exercise" in c["metadata"].get("tags", []))
    source = "".join(cell["source"])
    stub = source[source.index("    raise NotImplementedError"):]
    source = source.replace(stub, "    rows = x.shape[0]\n    return x.no_such_method(rows)\n")
    cell["source"] = source.splitlines(keepends=True)
    path.write_text(json.dumps(nb))
    line = source.splitlines().index("    return x.no_such_method(rows)") + 1

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = check(submission_package(path, tmp_path / "work"))
    text = report.text()
    assert "softmax.py line" in text   # what the grader says of the package
    said = in_cells(text, cell_lines(path))
    assert f"cell {number}, line {line}" in said and "softmax.py line" not in said

    # and so the student reads it: graded by an assignment (with results.json) and
    # self-checked from the command line
    assignment = tmp_path / "a.json"
    assignment.write_text('{"exercises": [{"id": "softmax", "points": 6}]}')
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graded = course.grade(path, assignment, json_path=tmp_path / "results.json")
    for text in (graded.text(), (tmp_path / "results.json").read_text()):
        assert f"cell {number}, line {line}" in text and "softmax.py line" not in text
    out = subprocess.run([sys.executable, "-m", "scratchnet", "exercises", "check",
                          str(path)], capture_output=True, text=True).stdout
    assert f"cell {number}, line {line}" in out and "softmax.py line" not in out


def test_assert_passes_says_what_passed_and_carries_forward(capsys):
    """A right ``cross_entropy_grad`` behind a ``softmax`` without its max shift
    passes, its large-logits check carried forward as the grader does; a wrong one
    still fails."""
    space = {"np": np}
    exec(textwrap.dedent("""
        def softmax(x):
            e = np.exp(x)
            return e / e.sum(axis=-1, keepdims=True)

        def cross_entropy_grad(logits, targets):
            grad = softmax(logits)
            grad[np.arange(len(targets)), targets] -= 1
            return grad / len(targets)

        def without_one_over_n(logits, targets):
            grad = softmax(logits)
            grad[np.arange(len(targets)), targets] -= 1
            return grad
        """), space)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_passes("cross_entropy_grad", space["cross_entropy_grad"])
        said = capsys.readouterr().out
        assert said.startswith("cross_entropy_grad: passed values, finite differences")
        assert ("carried forward: large logits pass with the library's softmax in "
                "place of yours: fix softmax") in said
        with pytest.raises(AssertionError, match="values"):
            assert_passes("cross_entropy_grad", space["without_one_over_n"])
    assert space["softmax"].__code__.co_names == ("np", "exp", "sum")   # restored


def test_the_kits_api_page_leaves_no_tex_raw():
    """``api/exercises.html`` of the built site: outside the typeset math, no ``$$``
    nor ``\\(`` (the hand-out's own docstrings showed ``$$$`` in an example)."""
    from html.parser import HTMLParser

    from _site import built_site

    class Text(HTMLParser):
        def __init__(self):
            super().__init__()
            self.depth, self.stack, self.parts = 0, [], []

        def handle_starttag(self, tag, attrs):
            math = "math" in (dict(attrs).get("class") or "").split()
            if tag not in ("br", "img", "meta", "link", "input", "hr"):
                self.stack.append(math)
                self.depth += math

        def handle_endtag(self, tag):
            if tag not in ("br", "img", "meta", "link", "input", "hr") and self.stack:
                self.depth -= self.stack.pop()

        def handle_data(self, data):
            if not self.depth:
                self.parts.append(data)

    page = Text()
    page.feed((built_site() / "api" / "exercises.html").read_text())
    text = "".join(page.parts)
    assert "make" in text and "cell_lines" in text   # the page, read
    assert [d for d in ("$$", "\\(", "\\[") if d in text] == []


def test_a_students_self_check_says_nothing_of_the_sandbox_the_instructors_run_does(
        tmp_path, capsys):
    """The isolation note is for who grades (once per run), not for every self-check."""
    from scratchnet.exercises.cli import main

    hw = tmp_path / "hw"
    make(["relu_backward"], hw)
    main(["check", str(hw)])
    assert "isolation" not in capsys.readouterr().err
    assignment = tmp_path / "a.json"
    assignment.write_text('{"exercises": [{"id": "relu_backward", "points": 5}]}')
    main(["check", str(hw), "--assignment", str(assignment)])
    assert "note: isolation: " in capsys.readouterr().err
