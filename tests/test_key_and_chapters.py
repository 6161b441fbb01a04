"""The reference modules are the chapters: derived from them, computing the same.

The reference modules (``exercises/reference_scores.py``, ``reference_models.py``;
``key_scores``/``key_models`` before) hold the exercises' signatures and the
student's docstrings; their bodies are the chapters' own, made plain by
``python -m scratchnet.exercises.derive`` (the argument checks removed).  Here:
the committed modules are what the derivation gives (so neither side can be
edited alone), a body the chapter does not hold is put back, and each
reference function runs against its chapter on the same valid inputs (float64
and float32, large scores included).  The sandbox's scaffolding
(``exercises/given.py``) is pinned to ``optim.py`` and ``mlp.py`` the same way
here.  (The grader compares a student's function with the chapter's; the
reference scoring full marks is ``tests/test_exercises.py``.)
"""

import ast
import importlib
import inspect
import re
import textwrap
from pathlib import Path

import numpy as np
import pytest

import scratchnet as sn
from scratchnet import information, layers, mlp, optim, two_gaussians
from scratchnet.exercises import derive, given, reference_models, reference_scores
from scratchnet.exercises.carried import reference_source

RNG = np.random.default_rng(0)
LOGITS = np.vstack([RNG.normal(scale=3, size=(6, 4)), [[1e3, 1e3 - 5, -1e3, 0.0]]])
TARGETS = np.array([0, 1, 2, 3, 0, 1, 0])
P = RNG.dirichlet(np.ones(4), size=5)
Q = RNG.dirichlet(np.ones(4), size=5)
P[0, 1] = 0.0
P[0] /= P[0].sum()
HERE = Path(derive.__file__).parent


# --- derived: the source of each reference body is its chapter's -----------------

@pytest.mark.parametrize("module", derive.MODULES)
def test_the_committed_reference_module_is_what_the_chapters_give(module):
    text = (HERE / f"{module}.py").read_text()
    assert derive.derived(text) == text, (
        f"{module}.py differs from its chapters: run python -m scratchnet.exercises.derive")


def _defined(module):
    tree = ast.parse(inspect.getsource(module))
    out = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            out[node.name] = node
        elif isinstance(node, ast.ClassDef):
            out.update({f"{node.name}.{m.name}": m for m in node.body
                        if isinstance(m, ast.FunctionDef)})
    return out


DERIVED = [(m.__name__.rsplit(".", 1)[1], name)
           for m in (reference_scores, reference_models) for name in _defined(m)
           if derive.chapter_object(name) is not None and name not in derive.WRITTEN
           and not name.startswith("_")]


def test_every_exercise_and_given_function_but_the_two_network_methods_is_derived():
    names = {name for _, name in DERIVED}
    assert {"logsumexp", "softmax", "log_softmax", "sigmoid", "nll_loss",
            "cross_entropy", "cross_entropy_grad", "entropy", "kl_divergence",
            "two_gaussian_posterior", "linear_forward", "linear_backward",
            "relu_forward", "relu_backward", "tanh_forward", "tanh_backward",
            "SGD.update", "Adam.update", "train_step"} == names
    assert set(derive.WRITTEN) == {"TwoLayerMLP.forward", "TwoLayerMLP.backward"}


REWRITTEN = ("one_hot", "unwrap", "keep_loss", "_as_matrix", "as_float_array")


def _statements(func_node):
    return [ast.unparse(s) for s in func_node.body[1:]]   # after the docstring


@pytest.mark.parametrize("module, name", DERIVED, ids=[n for _, n in DERIVED])
def test_each_reference_body_is_its_chapter_s_body_without_the_checks(module, name):
    """Read from the two sources, statement by statement: every statement of the
    chapter's body that is not an argument check is in the reference's, as
    written (or with a call of ``REWRITTEN`` in plain NumPy); every statement of
    the reference's is the chapter's, an argument as an array, or a default."""
    chapter = derive.chapter_object(name)
    theirs = _statements(ast.parse(textwrap.dedent(inspect.getsource(chapter))).body[0])
    ours = _statements(_defined(importlib.import_module(
        f"scratchnet.exercises.{module}"))[name])
    checks = [s for s in theirs if re.search(r"\b_?check_\w*\(|^if .*\n\s+raise ", s)]
    for statement in theirs:
        if statement not in checks and not any(w in statement for w in REWRITTEN):
            assert statement in ours, (name, statement)
    for statement in ours:
        assert statement in theirs or re.fullmatch(
            r"[\w, ]+ = (-?\w+|1\.0 if .*|cache|None)", statement, re.S) or any(
            w in statement for w in ("np.eye", "np.asarray", "return")), \
            (name, statement)
    assert len(ours) <= len(theirs) + 6


def test_a_body_edited_in_the_reference_module_is_put_back_from_the_chapter():
    text = (HERE / "reference_scores.py").read_text()
    edited = text.replace("    q = softmax(f)\n", "    q = softmax(f) * 1.01  # a typo\n")
    assert edited != text
    assert derive.derived(edited) == text
    assert derive.main(["--check"]) == 0


def test_the_chapter_s_helpers_are_copied_and_carried_with_the_function():
    source = reference_source("log_softmax")
    assert "def _max_and_log_sum" in source and "log1p" in source
    namespace = {"np": np}
    exec(source, namespace)   # what the sandbox's child does: NumPy only
    np.testing.assert_allclose(namespace["log_softmax"](LOGITS), sn.log_softmax(LOGITS),
                               rtol=1e-15)
    assert "import scratchnet" not in source and "from scratchnet" not in source


@pytest.mark.parametrize("name", ["logsumexp", "softmax", "log_softmax", "sigmoid",
                                  "nll_loss", "cross_entropy", "cross_entropy_grad",
                                  "entropy", "kl_divergence", "two_gaussian_posterior",
                                  "linear_backward", "relu_backward", "tanh_backward",
                                  "train_step"])
def test_the_carried_source_needs_only_numpy(name):
    tree = ast.parse(reference_source(name))
    imports = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert imports == []


# --- the same numbers -----------------------------------------------------------

SCORES = [
    ("logsumexp", (LOGITS,), sn.logsumexp),
    ("softmax", (LOGITS,), sn.softmax),
    ("log_softmax", (LOGITS,), sn.log_softmax),
    ("sigmoid", (LOGITS[:, 0] / 100,), sn.sigmoid),
    ("cross_entropy", (LOGITS, TARGETS), sn.cross_entropy),
    ("cross_entropy_grad", (LOGITS, TARGETS), sn.cross_entropy_grad),
    ("nll_loss", (sn.log_softmax(LOGITS), TARGETS), sn.nll_loss),
    ("entropy", (P,), information.entropy),
    ("kl_divergence", (P, Q), information.kl_divergence),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name, args, chapter", SCORES, ids=[s[0] for s in SCORES])
def test_a_score_exercise_s_reference_is_its_chapter(name, args, chapter, dtype):
    args = tuple(a.astype(dtype) if a.dtype.kind == "f" else a for a in args)
    ref, ours = getattr(reference_scores, name)(*args), chapter(*args)
    rtol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(ref, ours, rtol=rtol, atol=rtol * 1e-3)


def test_the_layer_and_model_references_are_their_chapters():
    x, W, b = RNG.normal(size=(5, 3)), RNG.normal(size=(3, 4)), RNG.normal(size=4)
    dout = RNG.normal(size=(5, 4))
    for fwd, bwd in (("linear_forward", "linear_backward"),):
        out_k, cache_k = getattr(reference_models, fwd)(x, W, b)
        out_c, cache_c = getattr(layers, fwd)(x, W, b)
        np.testing.assert_allclose(out_k, out_c, rtol=1e-14)
        for gk, gc in zip(getattr(reference_models, bwd)(dout, cache_k),
                          getattr(layers, bwd)(dout, cache_c)):
            np.testing.assert_allclose(gk, gc, rtol=1e-14)
    for fwd, bwd in (("relu_forward", "relu_backward"), ("tanh_forward", "tanh_backward")):
        out_k, cache_k = getattr(reference_models, fwd)(x)
        out_c, cache_c = getattr(layers, fwd)(x)
        np.testing.assert_allclose(out_k, out_c, rtol=1e-14)
        np.testing.assert_allclose(getattr(reference_models, bwd)(dout[:, :3], cache_k),
                                   getattr(layers, bwd)(dout[:, :3], cache_c), rtol=1e-14)
    xs = np.linspace(-4, 7, 23)
    for params in ((0.0, 1.0, 3.0, 1.0), (0.0, 2.0, 1.0, 1.0), (0.0, 2.0, 3.0, 1.0, 0.3)):
        np.testing.assert_allclose(reference_models.two_gaussian_posterior(xs, *params),
                                   two_gaussians.two_gaussian_posterior(xs, *params),
                                   rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("optimiser", ["SGD", "Adam"])
def test_the_model_and_optimiser_references_train_as_the_chapters(optimiser):
    task = sn.tasks.separated()
    x, c = task.sample(64, np.random.default_rng(1))
    losses = {}
    for name, (model_cls, opt_cls, step) in {
        "reference": (reference_models.TwoLayerMLP,
                      getattr(reference_models, optimiser), reference_models.train_step),
        "chapter": (sn.TwoLayerMLP, getattr(sn, optimiser), sn.train_step),
    }.items():
        model = model_cls(1, 8, 2, rng=0)
        opt = opt_cls(model.params, 0.01)
        losses[name] = [step(model, opt, x, c) for _ in range(20)]
    np.testing.assert_allclose(losses["reference"], losses["chapter"], rtol=1e-10)


# --- given.py: the sandbox's scaffolding, pinned to optim.py and mlp.py ----------

def _public_signature(cls, method="__init__"):
    sig = inspect.signature(getattr(cls, method))
    return {k: (p.kind, p.default) for k, p in sig.parameters.items()
            if not k.startswith("_") and p.kind is not p.VAR_KEYWORD}


@pytest.mark.parametrize("name", ["SGD", "Adam"])
def test_given_optimisers_take_the_chapter_s_arguments_and_defaults(name):
    assert _public_signature(getattr(given, name)) == \
        _public_signature(getattr(optim, name))


def test_given_network_takes_the_chapter_s_arguments_and_defaults():
    ours, chapter = _public_signature(given.TwoLayerMLP), _public_signature(mlp.TwoLayerMLP)
    assert {k: chapter[k] for k in ours} == ours   # a subset: init is the grader's


@pytest.mark.parametrize("name, options", [("SGD", {"lr": 0.1}),
                                           ("SGD", {"lr": 0.1, "momentum": 0.9,
                                                    "weight_decay": 0.01}),
                                           ("Adam", {"lr": 0.05}),
                                           ("Adam", {"lr": 0.05, "betas": (0.8, 0.99),
                                                     "weight_decay": 0.1})])
def test_given_optimisers_step_as_the_chapter_s(name, options):
    """The scaffolding's state and step, with the update the sandbox attaches (the
    reference's, derived from the chapter), move the parameters as the chapter does."""
    rng = np.random.default_rng(3)
    start = {"w": rng.normal(size=(3, 2)), "b": rng.normal(size=2)}
    grads = [{k: rng.normal(size=v.shape) for k, v in start.items()} for _ in range(5)]
    params = {}
    for side, cls in (("given", getattr(given, name)), ("chapter", getattr(optim, name))):
        params[side] = {k: v.copy() for k, v in start.items()}
        opt = cls(params[side], **options)
        if side == "given":
            opt.update = getattr(reference_models, name).update.__get__(opt)
            assert {k: sorted(s) for k, s in opt.state.items()} == \
                {k: sorted(s) for k, s in cls.__mro__[0](start, **options).state.items()}
        for g in grads:
            opt.step(g)
        assert opt.steps == len(grads)
    for k in start:
        np.testing.assert_allclose(params["given"][k], params["chapter"][k], rtol=1e-14)


def test_given_optimiser_state_is_the_chapter_s():
    for name, options in (("SGD", {"lr": 1.0}), ("SGD", {"lr": 1.0, "momentum": 0.5}),
                          ("Adam", {})):
        w = np.arange(3.0)
        ours = getattr(given, name)({"w": w}, **options).state
        chapter = getattr(optim, name)({"w": w.copy()}, **options).state
        assert ours.keys() == chapter.keys()
        for k in chapter["w"]:
            np.testing.assert_array_equal(ours["w"][k], chapter["w"][k])
        assert ours["w"].keys() == chapter["w"].keys()


def test_given_loss_and_grads_is_the_chapter_s():
    """With the chapter's forward and backward and the carried loss, the
    scaffolding's loss and gradients are the chapter network's."""
    class Net(given.TwoLayerMLP):
        forward = mlp.TwoLayerMLP.forward
        backward = mlp.TwoLayerMLP.backward

    chapter = sn.TwoLayerMLP(1, 6, 2, rng=4)
    ours = Net(1, 6, 2, rng=9)
    ours.params = {k: v.copy() for k, v in chapter.params.items()}
    saved = dict(given.REFERENCE)
    given.REFERENCE.update(cross_entropy=reference_scores.cross_entropy,
                           cross_entropy_grad=reference_scores.cross_entropy_grad)
    try:
        x, t = np.linspace(-2, 3, 9), np.array([0, 1, 1, 0, 1, 0, 0, 1, 1])
        loss_g, grads_g = ours.loss_and_grads(x, t)
    finally:
        given.REFERENCE.clear()
        given.REFERENCE.update(saved)
    loss_c, grads_c = chapter.loss_and_grads(x, t)
    assert loss_g == pytest.approx(float(loss_c), rel=1e-14, abs=0)
    for k in grads_c:
        np.testing.assert_allclose(grads_g[k], grads_c[k], rtol=1e-13)


# --- the old names still import, for one release --------------------------------

@pytest.mark.parametrize("old, new", [("key_scores", reference_scores),
                                      ("key_models", reference_models)])
def test_the_old_key_module_names_still_import_the_same_functions(old, new):
    module = importlib.import_module(f"scratchnet.exercises.{old}")
    assert module.__all__ == new.__all__
    for name in new.__all__:
        assert getattr(module, name) is getattr(new, name), name
