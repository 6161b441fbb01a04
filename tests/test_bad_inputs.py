"""A catalogue of bad inputs over the whole public API and the command line.

Each entry calls one public function, class or method (of ``scratchnet``,
``scratchnet.fast``, ``scratchnet.plotting``, ``scratchnet.experiments``) or the
command line with one bad argument, and asserts the exception type and that the
message names the argument (a regular expression that must be found in it).
Nothing here trains for more than a few steps: the whole file runs in seconds.

Entries that fail because of a module being changed by another owner are marked
``xfail(strict=True, reason="owner: <name>")``: they pass as soon as the owner's
fix lands, and then the mark must go.
"""

import contextlib
import io
import math

import matplotlib.pyplot as plt
import numpy as np
import pytest

import scratchnet as sn
from scratchnet import experiments, fast, plotting
from scratchnet.__main__ import main

NAN, INF = math.nan, math.inf
TASK = sn.tasks.separated()
TASK2D = sn.GaussianClasses([[0.0, 0.0], [2.0, 1.0]], covariances=np.stack([np.eye(2)] * 2))
LOGITS = np.array([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]])
TARGETS = np.array([0, 2])
PROBS = np.array([[0.2, 0.8], [0.6, 0.4]])


def _model():
    return sn.MLP([1, 4, 2], rng=0)


def _result():
    """A finished run of 20 steps (made once)."""
    if not hasattr(_result, "cached"):
        _result.cached = experiments.run("separated", "textbook", steps=20)
    return _result.cached


def _rows():
    return experiments.summarize(_result())


class CommandLineError(Exception):
    """What the command line printed, when it exited with status 2."""


def _cli(*argv):
    """The command line in-process: exit status 2 and one line, no traceback."""
    def call():
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                main(list(argv))
            except SystemExit as exc:
                code = exc.code
            else:
                code = 0
        text = err.getvalue()
        if code != 2 or text.count("\n") != 1 or "Traceback" in text:
            raise AssertionError(f"expected exit 2 and one line; got {code}: {text!r}")
        raise CommandLineError(text)
    return call


ENTRIES = []


def bad(api, call, error, name, owner=None):
    """One entry: ``call()`` raises ``error`` whose message matches ``name``."""
    marks = [pytest.mark.xfail(strict=True, reason=f"owner: {owner}")] if owner else []
    ENTRIES.append(pytest.param(call, error, name, id=f"{api}-{len(ENTRIES)}",
                                marks=marks))


# --- generic bad arrays, for every function of an array ----------------------------

BAD_ARRAYS = [
    ("strings", np.array(["a", "b"]), TypeError),
    ("complex", np.array([1j, 2.0]), TypeError),
    ("objects", np.array([None, 1.0], dtype=object), TypeError),
    ("NaN", np.array([1.0, NAN]), ValueError),
    ("ragged", [[1.0, 2.0], [3.0]], ValueError),
]
for fn in ("logsumexp", "softmax", "log_softmax", "sigmoid", "log_sigmoid"):
    for kind, value, error in BAD_ARRAYS:
        bad(f"sn.{fn}[{kind}]", lambda f=fn, v=value: getattr(sn, f)(v), error, "^x ")
    if fn in ("logsumexp", "softmax", "log_softmax"):
        bad(f"sn.{fn}[axis str]", lambda f=fn: getattr(sn, f)([1.0, 2.0], axis="0"),
            TypeError, "axis")
        bad(f"sn.{fn}[axis out of range]",
            lambda f=fn: getattr(sn, f)([1.0, 2.0], axis=3), ValueError, "axis")

for fn in ("entropy",):
    for kind, value, error in BAD_ARRAYS:
        bad(f"sn.{fn}[{kind}]", lambda v=value: sn.entropy(v), error, "^p ")
bad("sn.entropy[not summing to 1]", lambda: sn.entropy([0.5, 0.6]), ValueError,
    "p must sum to 1")
bad("sn.entropy[negative]", lambda: sn.entropy([1.5, -0.5]), ValueError, "p must be non")
bad("sn.entropy[base]", lambda: sn.entropy([0.5, 0.5], base=-2), ValueError, "base")
for fn in ("kl_divergence", "gibbs_inequality"):
    f = getattr(sn, fn)
    bad(f"sn.{fn}[p not summing to 1]", lambda f=f: f([0.5, 0.6], [0.5, 0.5]),
        ValueError, "^p must sum to 1")
    bad(f"sn.{fn}[q not summing to 1]", lambda f=f: f([0.5, 0.5], [0.1, 0.1]),
        ValueError, "^q must sum to 1")
    bad(f"sn.{fn}[shapes]", lambda f=f: f([0.5, 0.5], [0.2, 0.3, 0.5]), ValueError,
        "q|p")
    bad(f"sn.{fn}[q strings]", lambda f=f: f([0.5, 0.5], ["a", "b"]), TypeError, "^q ")
    bad(f"sn.{fn}[p NaN]", lambda f=f: f([NAN, 0.5], [0.5, 0.5]), ValueError, "^p ")
bad("sn.information.cross_entropy[q negative]",
    lambda: sn.information.cross_entropy([0.5, 0.5], [1.5, -0.5]), ValueError, "^q ")
bad("sn.information.cross_entropy[p strings]",
    lambda: sn.information.cross_entropy(["a"], [1.0]), TypeError, "^p ")
bad("sn.expected_kl[P not summing to 1]",
    lambda: sn.expected_kl(np.full((3, 2), 0.7), np.full((3, 2), 0.5), np.full(3, 1 / 3)),
    ValueError,
    "sum to 1")
bad("sn.expected_kl[shapes]",
    lambda: sn.expected_kl(np.full((3, 2), 0.5), np.full((4, 2), 0.5), np.full(3, 1 / 3)),
    ValueError,
    "shape")
bad("sn.nats_to_bits[strings]", lambda: sn.nats_to_bits("a"), TypeError, "^x ")
bad("sn.bits_to_nats[strings]", lambda: sn.bits_to_nats("a"), TypeError, "^x ")
bad("sn.nats_to_bits[NaN]", lambda: sn.nats_to_bits(NAN), ValueError, "^x ")

# --- one_hot --------------------------------------------------------------------------
bad("sn.one_hot[float targets]", lambda: sn.one_hot([0.0, 1.0], 2), TypeError,
    "targets")
bad("sn.one_hot[out of range]", lambda: sn.one_hot([0, 3], 2), ValueError, "targets")
bad("sn.one_hot[negative]", lambda: sn.one_hot([-1], 2), ValueError, "targets")
bad("sn.one_hot[num_classes 0]", lambda: sn.one_hot([0], 0), ValueError, "num_classes")
bad("sn.one_hot[num_classes float]", lambda: sn.one_hot([0], 2.5), TypeError,
    "num_classes")

# --- losses -----------------------------------------------------------------------------
for fn in ("cross_entropy", "cross_entropy_grad", "cross_entropy_and_grad"):
    f, F = getattr(sn, fn), getattr(sn.functional, fn)  # F: the options layer
    bad(f"sn.{fn}[targets float]", lambda f=f: f(LOGITS, [0.0, 2.0]), TypeError,
        "targets")
    bad(f"sn.{fn}[targets out of range]", lambda f=f: f(LOGITS, [0, 3]), ValueError,
        "targets")
    bad(f"sn.{fn}[targets length]", lambda f=f: f(LOGITS, [0, 1, 2]), ValueError,
        "targets")
    bad(f"sn.{fn}[logits strings]", lambda f=f: f(np.array([["a", "b"]]), [0]),
        TypeError, "logits")
    bad(f"sn.{fn}[logits NaN]", lambda f=f: f(np.array([[NAN, 0.0]]), [0]), ValueError,
        "logits")
    bad(f"sn.functional.{fn}[reduction]", lambda f=F: f(LOGITS, TARGETS, reduction="avg"),
        ValueError, "reduction")
    bad(f"sn.functional.{fn}[weight length]", lambda f=F: f(LOGITS, TARGETS, weight=[1.0, 2.0]),
        ValueError, "weight")
    bad(f"sn.functional.{fn}[weight negative]", lambda f=F: f(LOGITS, TARGETS,
                                                   weight=[1.0, -1.0, 1.0]),
        ValueError, "weight")
    bad(f"sn.functional.{fn}[label_smoothing 2]", lambda f=F: f(LOGITS, TARGETS,
                                                     label_smoothing=2.0),
        ValueError, "label_smoothing")
    bad(f"sn.functional.{fn}[label_smoothing str]", lambda f=F: f(LOGITS, TARGETS,
                                                       label_smoothing="0.1"),
        TypeError, "label_smoothing")
for fn in ("nll_loss", "nll_loss_grad"):
    f, F = getattr(sn, fn), getattr(sn.functional, fn)  # F: the options layer
    log_p = np.log(np.array([[0.2, 0.8], [0.5, 0.5]]))
    bad(f"sn.{fn}[positive log-probabilities]", lambda f=f: f([[0.5, -1.0]], [0]),
        ValueError, "log_probs")
    bad(f"sn.{fn}[targets float]", lambda f=f, lp=log_p: f(lp, [0.0, 1.0]), TypeError,
        "targets")
    bad(f"sn.{fn}[targets out of range]", lambda f=f, lp=log_p: f(lp, [0, 2]),
        ValueError, "targets")
    bad(f"sn.functional.{fn}[reduction]", lambda f=F, lp=log_p: f(lp, [0, 1], reduction="x"),
        ValueError, "reduction")
    bad(f"sn.{fn}[log_probs strings]", lambda f=f: f(np.array([["a"]]), [0]), TypeError,
        "log_probs")
for fn in ("binary_cross_entropy_with_logits", "binary_cross_entropy_with_logits_grad"):
    f, F = getattr(sn, fn), getattr(sn.functional, fn)  # F: the options layer
    bad(f"sn.{fn}[targets 2]", lambda f=f: f([0.5, 1.0], [0, 2]), ValueError, "targets")
    bad(f"sn.{fn}[targets shape]", lambda f=f: f([0.5, 1.0], [0, 1, 1]), ValueError,
        "targets")
    bad(f"sn.{fn}[logits NaN]", lambda f=f: f([NAN, 1.0], [0, 1]), ValueError, "logits")
    bad(f"sn.{fn}[logits strings]", lambda f=f: f(["a"], [0]), TypeError, "logits")
    bad(f"sn.functional.{fn}[pos_weight negative]", lambda f=F: f([0.5], [1], pos_weight=-1.0),
        ValueError, "pos_weight")
    bad(f"sn.functional.{fn}[reduction]", lambda f=F: f([0.5], [1], reduction="avg"), ValueError,
        "reduction")
for fn in ("mse_loss", "mse_loss_grad", "multi_margin_loss", "multi_margin_loss_grad"):
    f = getattr(sn, fn)
    bad(f"sn.{fn}[targets out of range]", lambda f=f: f(LOGITS, [0, 3]), ValueError,
        "targets")
    bad(f"sn.{fn}[outputs strings]", lambda f=f: f(np.array([["a", "b"]]), [0]),
        TypeError, "outputs|logits")
    bad(f"sn.{fn}[reduction]", lambda f=f: f(LOGITS, TARGETS, reduction="avg"),
        ValueError, "reduction")
bad("sn.multi_margin_loss[margin NaN]",
    lambda: sn.multi_margin_loss(LOGITS, TARGETS, margin=NAN), ValueError, "margin")
bad("sn.multi_margin_loss[margin str]",
    lambda: sn.multi_margin_loss(LOGITS, TARGETS, margin="1"), TypeError, "margin")
bad("sn.mse_loss[shape]", lambda: sn.mse_loss(LOGITS, np.zeros((2, 4))), ValueError,
    "targets")

# --- loss objects -------------------------------------------------------------------
bad("sn.get_loss[unknown]", lambda: sn.get_loss("cross-entropy!"), ValueError, "loss")
bad("sn.get_loss[number]", lambda: sn.get_loss(3), TypeError, "loss")
bad("CrossEntropyLoss[label_smoothing]",
    lambda: sn.objectives.CrossEntropyLoss(label_smoothing=-0.1).loss_and_grad(
        LOGITS, TARGETS), ValueError,
    "label_smoothing")
bad("CrossEntropyLoss.loss_and_grad[targets]",
    lambda: sn.objectives.CrossEntropyLoss().loss_and_grad(LOGITS, [0, 5]), ValueError,
    "targets")
bad("BCEWithLogitsLoss.loss_and_grad[targets]",
    lambda: sn.objectives.BCEWithLogitsLoss().loss_and_grad(np.zeros((2, 1)), [0, 2]),
    ValueError, "targets")
bad("MSELoss.loss_and_grad[targets]",
    lambda: sn.objectives.MSELoss().loss_and_grad(LOGITS, [0, 7]), ValueError,
    "targets")
bad("MultiMarginLoss[margin]", lambda: sn.objectives.MultiMarginLoss(
    margin=NAN).loss_and_grad(LOGITS, TARGETS), ValueError, "margin")
bad("MultiMarginLoss.loss_and_grad[targets]",
    lambda: sn.objectives.MultiMarginLoss().loss_and_grad(LOGITS, [0, 7]), ValueError,
    "targets")
bad("Loss.loss_and_grad[base]", lambda: sn.objectives.Loss().loss_and_grad(LOGITS,
                                                                           TARGETS),
    NotImplementedError, "loss_and_grad")

# --- gradient checks ----------------------------------------------------------------
bad("sn.numerical_gradient[returns str]", lambda: sn.numerical_gradient(lambda z: "1",
                                                                        [1.0]),
    TypeError, r"f must return a real number; got '1' \(str\)")
bad("sn.numerical_gradient[returns None]",
    lambda: sn.numerical_gradient(lambda z: None, [1.0]), TypeError,
    r"f must return a real number; got None \(NoneType\)")
bad("sn.numerical_gradient[returns array]",
    lambda: sn.numerical_gradient(lambda z: z, [1.0, 2.0]), ValueError,
    "f must return a scalar")
bad("sn.numerical_gradient[returns inf]",
    lambda: sn.numerical_gradient(lambda z: INF, [1.0]), ValueError, "f must be finite")
bad("sn.numerical_gradient[eps 0]",
    lambda: sn.numerical_gradient(lambda z: 0.0, [1.0], eps=0.0), ValueError, "eps")
bad("sn.numerical_gradient[x inf]",
    lambda: sn.numerical_gradient(lambda z: 0.0, [INF]), ValueError, "^x must be finite")
bad("sn.numerical_gradient[x strings]",
    lambda: sn.numerical_gradient(lambda z: 0.0, ["a"]), TypeError, "^x ")
bad("sn.gradient_check[grad inf]",
    lambda: sn.gradient_check(lambda z: z.sum(), [INF], [1.0]), ValueError,
    "grad must be finite; got inf")
bad("sn.gradient_check[grad -inf]",
    lambda: sn.gradient_check(lambda z: z.sum(), [-INF], [1.0]), ValueError,
    "grad must be finite; got -inf")
bad("sn.gradient_check[grad NaN]",
    lambda: sn.gradient_check(lambda z: z.sum(), [NAN], [1.0]), ValueError,
    "grad must not contain NaN")
bad("sn.gradient_check[grad shape]",
    lambda: sn.gradient_check(lambda z: z.sum(), [1.0, 1.0], [1.0]), ValueError,
    "grad must have the same shape as x")
bad("sn.gradient_check[floor 0]",
    lambda: sn.gradient_check(lambda z: z.sum(), [1.0], [1.0], floor=0.0), ValueError,
    "floor")
bad("sn.gradient_check[grad strings]",
    lambda: sn.gradient_check(lambda z: z.sum(), ["a"], [1.0]), TypeError, "^grad ")

# --- the generative model and the tasks -----------------------------------------------
G = sn.GaussianClasses
bad("GaussianClasses[sd 0]", lambda: G([0.0, 1.0], [1.0, 0.0]), ValueError,
    "scales|sd|cov")
bad("GaussianClasses[sd negative]", lambda: G([0.0, 1.0], [1.0, -1.0]), ValueError,
    "scales|sd|cov")
bad("GaussianClasses[means NaN]", lambda: G([0.0, NAN], [1.0, 1.0]), ValueError,
    "means")
bad("GaussianClasses[means inf]", lambda: G([0.0, INF], [1.0, 1.0]), ValueError,
    "means")
bad("GaussianClasses[means strings]", lambda: G(["a", "b"], [1.0, 1.0]), TypeError,
    "means")
bad("GaussianClasses[priors sum]", lambda: G([0.0, 1.0], [1.0, 1.0], [0.5, 0.6]),
    ValueError, "priors")
bad("GaussianClasses[priors negative]", lambda: G([0.0, 1.0], [1.0, 1.0], [1.5, -0.5]),
    ValueError, "priors")
bad("GaussianClasses[priors length]", lambda: G([0.0, 1.0], [1.0, 1.0], [1.0]),
    ValueError, "priors")
bad("GaussianClasses[scales length]", lambda: G([0.0, 1.0], [1.0]), ValueError,
    "scales|covariances")
bad("GaussianClasses[cov not symmetric]",
    lambda: G([[0.0, 0.0]], np.array([[[1.0, 0.5], [0.0, 1.0]]])), ValueError,
    "covariances|scales")
bad("GaussianClasses[cov not positive]",
    lambda: G([[0.0, 0.0]], np.array([[[1.0, 2.0], [2.0, 1.0]]])), ValueError,
    "covariances|scales")
bad("GaussianClasses[name int]", lambda: G([0.0], [1.0], name=3), TypeError, "name")
bad("GaussianClasses.posterior[x NaN]", lambda: TASK.posterior([NAN]), ValueError, "x")
bad("GaussianClasses.posterior[x strings]", lambda: TASK.posterior(["a"]), TypeError,
    "x")
bad("GaussianClasses.posterior[x shape]", lambda: TASK.posterior(np.zeros((3, 2))),
    ValueError, "x")
bad("GaussianClasses.log_posterior[x NaN]", lambda: TASK.log_posterior([NAN]),
    ValueError, "x")
bad("GaussianClasses.log_joint[x strings]", lambda: TASK.log_joint(["a"]), TypeError,
    "x")
bad("GaussianClasses.log_class_densities[x NaN]",
    lambda: TASK.log_class_densities([NAN]), ValueError, "x")
bad("GaussianClasses.log_evidence[x NaN]", lambda: TASK.log_evidence([NAN]),
    ValueError, "x")
bad("GaussianClasses.density[x 2-D for 1-D]", lambda: TASK.density(np.zeros((2, 2))),
    ValueError, "x")
bad("GaussianClasses.sample[n negative]", lambda: TASK.sample(-1), ValueError, "^n ")
bad("GaussianClasses.sample[n float]", lambda: TASK.sample(2.5), TypeError, "^n ")
bad("GaussianClasses.sample[rng str]", lambda: TASK.sample(3, rng="0"), TypeError,
    "rng")
bad("GaussianClasses.sample[rng negative]", lambda: TASK.sample(3, rng=-1), ValueError,
    "rng")
bad("GaussianClasses.sample_labels[x NaN]", lambda: TASK.sample_labels([NAN], rng=0),
    ValueError, "x")
bad("GaussianClasses.support[mass 1]", lambda: TASK.support(1.0), ValueError, "mass")
bad("GaussianClasses.support[mass str]", lambda: TASK.support("0.9"), TypeError,
    "mass")
bad("GaussianClasses.decision_boundaries[2-D]", lambda: TASK2D.decision_boundaries(),
    ValueError, "decision_boundaries needs a one-dimensional task")
bad("GenerativeModel.expected_kl[model str]", lambda: TASK.expected_kl("model"), TypeError,
    "model")
bad("GenerativeModel.expected_kl[wrong outputs]",
    lambda: TASK.expected_kl(sn.MLP([1, 4, 3], rng=0)), ValueError, "shape")
bad("GenerativeModel.expected_kl[probabilities not summing to 1]",
    lambda: TASK.expected_kl(lambda x: np.full((len(x), 2), 0.7)), ValueError,
    "sum to 1")
bad("GenerativeModel.population_loss[model str]", lambda: TASK.population_loss("m"),
    TypeError, "model")
bad("GenerativeModel.bayes_loss[return_stderr str]",
    lambda: TASK.bayes_loss(return_stderr="yes"), TypeError, "return_stderr")
bad("GenerativeModel.bayes_accuracy[return_stderr str]",
    lambda: TASK.bayes_accuracy(return_stderr="yes"), TypeError, "return_stderr")
bad("GenerativeModel.expected_kl[return_stderr int]",
    lambda: TASK.expected_kl(TASK.posterior, return_stderr=1), TypeError,
    "return_stderr")
bad("GenerativeModel.population_loss[log_probs str]",
    lambda: TASK.population_loss(TASK.posterior, log_probs="no"), TypeError,
    "log_probs")
bad("sn.two_gaussian_posterior[sigma 0]",
    lambda: sn.two_gaussian_posterior([0.0], 0.0, 0.0, 1.0, 1.0), ValueError,
    "sigma1")
bad("sn.two_gaussian_posterior[x NaN]",
    lambda: sn.two_gaussian_posterior([NAN], 0.0, 1.0, 1.0, 1.0), ValueError, "x")
bad("sn.two_gaussian_posterior[prior 1]",
    lambda: sn.two_gaussian_posterior([0.0], 0.0, 1.0, 1.0, 1.0, prior1=1.5),
    ValueError, "prior")
bad("sn.tasks.get_task[unknown]", lambda: sn.tasks.get_task("separate"), ValueError,
    "task|name")
bad("sn.tasks.get_task[number]", lambda: sn.tasks.get_task(3), TypeError, "task|name")

# --- layers --------------------------------------------------------------------------
X23 = np.ones((2, 3))
bad("linear_forward[W shape]",
    lambda: sn.layers.linear_forward(X23, np.ones((4, 2)), np.ones(2)), ValueError,
    "W")
bad("linear_forward[b shape]",
    lambda: sn.layers.linear_forward(X23, np.ones((3, 2)), np.ones(3)), ValueError,
    "^b ")
bad("linear_forward[x strings]",
    lambda: sn.layers.linear_forward(np.array([["a"]]), np.ones((1, 1)), np.ones(1)),
    TypeError, "^x ")
bad("linear_forward[x NaN]",
    lambda: sn.layers.linear_forward(np.array([[NAN]]), np.ones((1, 1)), np.ones(1)),
    ValueError, "^x ")
bad("linear_forward[W NaN]",
    lambda: sn.layers.linear_forward(np.ones((1, 1)), np.array([[NAN]]), np.ones(1)),
    ValueError, "^W ")
bad("linear_forward[b NaN]",
    lambda: sn.layers.linear_forward(np.ones((1, 1)), np.ones((1, 1)), np.array([NAN])),
    ValueError, "^b ")
bad("linear_backward[dout shape]",
    lambda: sn.layers.linear_backward(np.ones((2, 5)), sn.layers.linear_forward(
        X23, np.ones((3, 2)), np.ones(2))[1]), ValueError, "dout")
bad("linear_backward[cache]", lambda: sn.layers.linear_backward(np.ones((2, 2)), None),
    TypeError, "cache")
for pair in ("relu", "tanh"):
    fwd = getattr(sn.layers, f"{pair}_forward")
    bwd = getattr(sn.layers, f"{pair}_backward")
    bad(f"{pair}_forward[strings]", lambda f=fwd: f(np.array(["a"])), TypeError, "^x ")
    bad(f"{pair}_forward[NaN]", lambda f=fwd: f(np.array([NAN])), ValueError, "^x ")
    bad(f"{pair}_backward[dout shape]", lambda f=fwd, b=bwd: b(np.ones(3),
                                                               f(np.ones(2))[1]),
        ValueError, "dout")
    bad(f"{pair}_backward[dout strings]", lambda f=fwd, b=bwd: b(np.array(["a", "b"]),
                                                                 f(np.ones(2))[1]),
        TypeError, "dout")
for pair in ("softmax", "log_softmax"):
    fwd = getattr(sn.layers, f"{pair}_forward")
    bwd = getattr(sn.layers, f"{pair}_backward")
    bad(f"{pair}_forward[axis]", lambda f=fwd: f(X23, axis=2), ValueError, "axis")
    bad(f"{pair}_forward[NaN]", lambda f=fwd: f(np.array([[NAN, 0.0]])), ValueError,
        "^x ")
    bad(f"{pair}_backward[dout shape]", lambda f=fwd, b=bwd: b(np.ones((2, 2)),
                                                               f(X23)[1]),
        ValueError, "dout")
    bad(f"{pair}_backward[cache]", lambda b=bwd: b(X23, "cache"), TypeError, "cache")

# --- networks --------------------------------------------------------------------------
for cls in (sn.MLP, fast.MLP):
    api = "fast.MLP" if cls is fast.MLP else "sn.MLP"
    bad(f"{api}[sizes str]", lambda c=cls: c("1,4,2"), TypeError, "sizes")
    bad(f"{api}[sizes short]", lambda c=cls: c([3]), ValueError, "sizes")
    bad(f"{api}[sizes 0]", lambda c=cls: c([1, 0, 2]), ValueError, r"sizes\[1\]")
    bad(f"{api}[sizes float]", lambda c=cls: c([1, 2.5, 2]), TypeError, r"sizes\[1\]")
    bad(f"{api}[activation]", lambda c=cls: c([1, 4, 2], activation="sigmoid"),
        ValueError, "activation")
    bad(f"{api}[init]", lambda c=cls: c([1, 4, 2], init="normal"), ValueError, "init")
    bad(f"{api}[dtype int]", lambda c=cls: c([1, 4, 2], dtype=np.int32), ValueError,
        "dtype")
    bad(f"{api}[dtype junk]", lambda c=cls: c([1, 4, 2], dtype="floaty"), TypeError,
        "dtype")
    bad(f"{api}[rng str]", lambda c=cls: c([1, 4, 2], rng="0"), TypeError, "rng")
    model = cls([2, 4, 2], rng=0)
    for method in ("forward", "predict_proba", "predict_log_proba", "predict"):
        bad(f"{api}.{method}[inf]", lambda m=model, f=method: getattr(m, f)(
            np.array([[0.0, INF]])), ValueError, r"^x must be finite; got inf")
        bad(f"{api}.{method}[-inf]", lambda m=model, f=method: getattr(m, f)(
            np.array([[-INF, 0.0]])), ValueError, r"^x must be finite; got -inf")
        bad(f"{api}.{method}[NaN]", lambda m=model, f=method: getattr(m, f)(
            np.array([[NAN, 0.0]])), ValueError, r"^x must not contain NaN; got NaN")
        bad(f"{api}.{method}[shape]", lambda m=model, f=method: getattr(m, f)(
            np.zeros((3, 3))), ValueError, r"^x must have shape \(N, 2\)")
        bad(f"{api}.{method}[strings]", lambda m=model, f=method: getattr(m, f)(
            np.array([["a", "b"]])), TypeError, "^x ")
    bad(f"{api}.loss_and_grads[targets]", lambda m=model: m.loss_and_grads(
        np.zeros((2, 2)), [0, 2]), ValueError, "targets")
    bad(f"{api}.loss_and_grads[x inf]", lambda m=model: m.loss_and_grads(
        np.array([[INF, 0.0]]), [0]), ValueError, "^x must be finite")
    bad(f"{api}.loss_and_grads[loss]", lambda m=model: m.loss_and_grads(
        np.zeros((2, 2)), [0, 1], loss="ce"), ValueError, "loss")
    bad(f"{api}.loss_and_grads[one output, cross-entropy]",
        lambda c=cls: c([1, 4, 1], rng=0).loss_and_grads([0.0, 1.0], [0, 1],
                                                         loss="cross_entropy"),
        ValueError, "binary_cross_entropy")
    bad(f"{api}.backward[before forward]", lambda c=cls: c([1, 4, 2]).backward(
        np.zeros((2, 2))), RuntimeError, "forward")
bad("sn.MLP.backward[dlogits shape]", lambda: (lambda m: (m.forward(np.zeros((2, 1))),
                                                           m.backward(np.zeros((3, 2)))))(
    _model()), ValueError, "dlogits")
bad("sn.MLP.backward[dlogits strings]",
    lambda: (lambda m: (m.forward(np.zeros((1, 1))), m.backward(np.array([["a", "b"]]))))(
        _model()), TypeError, "dlogits")
bad("sn.TwoLayerMLP[hidden 0]", lambda: sn.TwoLayerMLP(1, 0, 2), ValueError,
    r"sizes\[1\]")
bad("sn.TwoLayerMLP[in str]", lambda: sn.TwoLayerMLP("1", 4, 2), TypeError,
    r"sizes\[0\]")
bad("sn.TwoLayerMLP.forward[inf]", lambda: sn.TwoLayerMLP(1, 4, 2).forward([INF]),
    ValueError, "^x must be finite; got inf")
bad("sn.mlp.init_params[init]", lambda: sn.mlp.init_params([1, 2], init="zeros"),
    ValueError, "init")
bad("sn.mlp.init_params[sizes]", lambda: sn.mlp.init_params(5), TypeError, "sizes")
bad("fast.FlatParams[flat shape]",
    lambda: fast.FlatParams(np.zeros(3), (("w", (2,)),)), ValueError, "flat")
bad("fast.log_softmax[NaN]", lambda: fast.log_softmax(np.array([[NAN, 0.0]])),
    ValueError, "^x ")
bad("fast.log_softmax[strings]", lambda: fast.log_softmax(np.array([["a"]])),
    TypeError, "^x ")
bad("fast.Ensemble[members 0]", lambda: fast.Ensemble([1, 4, 2], rngs=[]), TypeError,
    "rngs")
bad("fast.Ensemble[sizes]", lambda: fast.Ensemble([1], rngs=[0]), ValueError, "sizes")
ENS = fast.Ensemble([1, 4, 2], rngs=[0, 1])
bad("fast.Ensemble.forward[inf]", lambda: ENS.forward(np.full((2, 3, 1), INF)),
    ValueError, "^x ")
bad("fast.Ensemble.forward[shape]", lambda: ENS.forward(np.zeros((3, 3, 1))),
    ValueError, "^x ")
bad("fast.Ensemble.predict_proba[member]", lambda: ENS.predict_proba(np.zeros((3, 1)),
                                                                    member=5),
    IndexError, "member")
bad("fast.Ensemble.member[index]", lambda: ENS.member(2), IndexError, "^s |member")
bad("fast.Ensemble.loss_and_grads[targets]",
    lambda: ENS.loss_and_grads(np.zeros((2, 3, 1)), np.full((2, 3), 5)), ValueError,
    "targets")
bad("fast.stacked_epochs[batch_size 0]",
    lambda: fast.stacked_epochs([(np.zeros(4), np.zeros(4, int))], 0, [np.random.
                                                                      default_rng(0)]),
    ValueError, "batch_size")
bad("fast.stacked_stream[batch_size 0]",
    lambda: next(fast.stacked_stream([TASK], 0, [np.random.default_rng(0)])), ValueError,
    "batch_size")
bad("fast.stack_batches[empty]", lambda: next(fast.stack_batches([])), ValueError,
    "iterators")
bad("fast.train[steps 0]",
    lambda: fast.train(ENS, iter(()), steps=0, optimizer=sn.SGD(ENS.params, 0.1)),
    ValueError, "steps")
FAST_MLP = fast.MLP([1, 4, 2], rng=0)
bad("fast.train[model]",
    lambda: fast.train(_model(), iter(()), steps=1, optimizer=sn.SGD(_model().params,
                                                                     0.1)),
    TypeError, r"^model must be a scratchnet\.fast\.MLP .* got scratchnet\.mlp\.MLP")
bad("fast.train[fast.MLP steps 0]",
    lambda: fast.train(FAST_MLP, iter(()), steps=0,
                       optimizer=sn.SGD(FAST_MLP.params, 0.1)),
    ValueError, "steps")
bad("fast.train[fast.MLP x shape]",
    lambda: fast.train(FAST_MLP, iter([(np.zeros((3, 2)), np.zeros(3, int))]), steps=1,
                       optimizer=sn.SGD(FAST_MLP.params, 0.1)),
    ValueError, r"^x must have shape \(N, 1\)")
bad("fast.train[fast.MLP targets]",
    lambda: fast.train(FAST_MLP, iter([(np.zeros(3), np.array([0, 1, 2]))]), steps=1,
                       optimizer=sn.SGD(FAST_MLP.params, 0.1)),
    ValueError, r"^targets must be integers in \[0, 2\)")
bad("fast.MLP.check_batch[x NaN]",
    lambda: FAST_MLP.check_batch(np.array([0.0, NAN]), [0, 1]), ValueError,
    "^x must not contain NaN")

# --- optimisers and schedules ---------------------------------------------------------
P = {"w": np.zeros(2)}
bad("sn.SGD[lr negative]", lambda: sn.SGD({"w": np.zeros(2)}, -0.1), ValueError, "^lr ")
bad("sn.SGD[lr inf]", lambda: sn.SGD({"w": np.zeros(2)}, INF), ValueError, "^lr ")
bad("sn.SGD[lr NaN]", lambda: sn.SGD({"w": np.zeros(2)}, NAN), ValueError, "^lr ")
bad("sn.SGD[lr str]", lambda: sn.SGD({"w": np.zeros(2)}, "0.1"), TypeError, "^lr ")
bad("sn.SGD[momentum]", lambda: sn.SGD({"w": np.zeros(2)}, 0.1, momentum=-1),
    ValueError, "momentum")
bad("sn.SGD[weight_decay inf]", lambda: sn.SGD({"w": np.zeros(2)}, 0.1,
                                               weight_decay=INF),
    ValueError, "weight_decay")
bad("sn.SGD[params list]", lambda: sn.SGD([np.zeros(2)], 0.1), TypeError, "params")
bad("sn.SGD[params int array]", lambda: sn.SGD({"w": np.zeros(2, int)}, 0.1),
    TypeError, r"params\['w'\]")
bad("sn.SGD[params read-only]", lambda: sn.SGD(
    {"w": np.broadcast_to(np.zeros(1), (2,))}, 0.1), ValueError, r"params\['w'\]")
bad("sn.Adam[eps 0]", lambda: sn.Adam({"w": np.zeros(2)}, eps=0.0), ValueError,
    r"^eps must be in \(0, inf\); got 0")
bad("sn.Adam[eps negative]", lambda: sn.Adam({"w": np.zeros(2)}, eps=-1e-8),
    ValueError, "^eps ")
bad("sn.Adam[eps NaN]", lambda: sn.Adam({"w": np.zeros(2)}, eps=NAN), ValueError,
    "^eps ")
bad("sn.Adam[betas 1]", lambda: sn.Adam({"w": np.zeros(2)}, betas=(1.0, 0.9)),
    ValueError, r"betas\[0\]")
bad("sn.Adam[betas negative]", lambda: sn.Adam({"w": np.zeros(2)}, betas=(0.9, -0.1)),
    ValueError, r"betas\[1\]")
bad("sn.Adam[betas scalar]", lambda: sn.Adam({"w": np.zeros(2)}, betas=0.9), TypeError,
    "betas")
bad("sn.Adam[betas str]", lambda: sn.Adam({"w": np.zeros(2)}, betas=("a", 0.9)),
    TypeError, r"betas\[0\]")
bad("sn.Adam[lr inf]", lambda: sn.Adam({"w": np.zeros(2)}, lr=INF), ValueError, "^lr ")
bad("sn.Adam[lr negative]", lambda: sn.Adam({"w": np.zeros(2)}, lr=-1.0), ValueError,
    "^lr ")
bad("sn.Adam[weight_decay]", lambda: sn.Adam({"w": np.zeros(2)}, weight_decay=-1.0),
    ValueError, "weight_decay")
for name, make in (("SGD", lambda p: sn.SGD(p, 0.1, momentum=0.9)),
                   ("Adam", lambda p: sn.Adam(p))):
    for value in (NAN, INF, -INF):
        bad(f"sn.{name}.step[grad {value}]", lambda m=make, v=value: m(
            {"w": np.zeros(2)}).step({"w": np.array([0.0, v])}), FloatingPointError,
            rf"^grads\['w'\] must be finite .*got {value} at index \(1,\)")
    bad(f"sn.{name}.step[grads list]", lambda m=make: m({"w": np.zeros(2)}).step(
        [np.zeros(2)]), TypeError, "grads")
    bad(f"sn.{name}.step[missing key]", lambda m=make: m({"w": np.zeros(2)}).step(
        {"v": np.zeros(2)}), ValueError, "grads")
    bad(f"sn.{name}.step[shape]", lambda m=make: m({"w": np.zeros(2)}).step(
        {"w": np.zeros(3)}), ValueError, r"grads\['w'\]")
    bad(f"sn.{name}.step[strings]", lambda m=make: m({"w": np.zeros(2)}).step(
        {"w": np.array(["a", "b"])}), TypeError, r"grads\['w'\]")
    bad(f"sn.{name}.lr[set negative]", lambda m=make: setattr(m({"w": np.zeros(2)}),
                                                              "lr", -1.0),
        ValueError, "^lr ")
bad("fast engine step[grad NaN]", lambda: (lambda m: (
    lambda g: (g["b1"].__setitem__(0, NAN), sn.Adam(m.params).step(g)))(
        m.loss_and_grads(np.zeros((2, 1)), [0, 1])[1]))(fast.MLP([1, 4, 2], rng=0)),
    FloatingPointError, r"^grads\['b1'\] must be finite")
bad("sn.Optimizer.update[base]", lambda: sn.Optimizer({"w": np.zeros(1)}, 0.1).update(
    np.zeros(1), np.zeros(1), {}), NotImplementedError, "update")
bad("sn.StepLR[step_size 0]", lambda: sn.StepLR(0.1, 0), ValueError, "step_size")
bad("sn.StepLR[gamma negative]", lambda: sn.StepLR(0.1, 2, gamma=-1.0), ValueError,
    "gamma")
bad("sn.StepLR[lr str]", lambda: sn.StepLR("0.1", 2), TypeError, "^lr ")
bad("sn.StepLR.__call__[t negative]", lambda: sn.StepLR(0.1, 2)(-1), ValueError,
    r"^t \(the step\)")
bad("sn.CosineAnnealingLR[T_max 0]", lambda: sn.CosineAnnealingLR(0.1, 0), ValueError,
    "T_max")
bad("sn.CosineAnnealingLR[T_max float]", lambda: sn.CosineAnnealingLR(0.1, 10.0),
    TypeError, "T_max")
bad("sn.CosineAnnealingLR[eta_min NaN]", lambda: sn.CosineAnnealingLR(0.1, 5, NAN),
    ValueError, "eta_min")
bad("sn.CosineAnnealingLR.__call__[t float]", lambda: sn.CosineAnnealingLR(0.1, 5)(
    0.5), TypeError, r"^t \(the step\)")
bad("sn.LinearLR[start_factor 0]", lambda: sn.LinearLR(0.1, start_factor=0.0),
    ValueError, "start_factor")
bad("sn.LinearLR[end_factor 2]", lambda: sn.LinearLR(0.1, end_factor=2.0), ValueError,
    "end_factor")
bad("sn.LinearLR[total_iters 0]", lambda: sn.LinearLR(0.1, total_iters=0), ValueError,
    "total_iters")
bad("sn.LinearLR[lr inf]", lambda: sn.LinearLR(INF), ValueError, "^lr ")
bad("sn.Constant[lr negative]", lambda: sn.Constant(-1.0), ValueError, "^lr ")
bad("sn.SequentialLR[schedules empty]", lambda: sn.SequentialLR([], []), TypeError,
    "schedules")
bad("sn.SequentialLR[milestones count]",
    lambda: sn.SequentialLR([sn.Constant(1.0)] * 2, [1, 2]), ValueError, "milestones")
bad("sn.SequentialLR[milestones order]",
    lambda: sn.SequentialLR([sn.Constant(1.0)] * 3, [4, 2]), ValueError, "milestones")

# --- training -----------------------------------------------------------------------------
M = _model()
X10, C10 = np.zeros((10, 1)), np.zeros(10, int)


def _train(**kwargs):
    kwargs = {"steps": 3, "batch_size": 4, "lr": 0.1, **kwargs}
    model, data = kwargs.pop("model", M), kwargs.pop("data", TASK)  # once: re-runnable
    return lambda: sn.train(model, data, **kwargs)


bad("sn.train[steps 0]", _train(steps=0), ValueError, "steps")
bad("sn.train[steps float]", _train(steps=2.0), TypeError, "steps")
bad("sn.train[batch_size 0]", _train(batch_size=0), ValueError, "batch_size")
bad("sn.train[lr 0]", _train(lr=0.0), ValueError, "^lr ")
bad("sn.train[lr inf]", _train(lr=INF), ValueError, "^lr ")
bad("sn.train[lr str]", _train(lr="0.1"), TypeError, "^lr ")
bad("sn.train[schedule negative]", _train(lr=lambda t: -1.0), ValueError, r"lr\(0\)")
bad("sn.train[schedule NaN]", _train(lr=lambda t: NAN), ValueError, r"lr\(0\)")
bad("sn.train[schedule str]", _train(lr=lambda t: "x"), TypeError, r"lr\(0\)")
bad("sn.train[momentum]", _train(momentum=-0.5), ValueError, "momentum")
bad("sn.train[optimizer unknown]", _train(optimizer="rmsprop"), ValueError, "optimizer")
bad("sn.train[optimizer object]", _train(optimizer=3), TypeError, "optimizer")
bad("sn.train[model]", _train(model=object()), TypeError, "model")
bad("sn.train[data]", _train(data=42), TypeError, "data")
bad("sn.train[data triple]", _train(data=(X10, C10, C10)), ValueError, "pair")
bad("sn.train[data lengths]", _train(data=(X10, C10[:9])), ValueError, "x and c")
bad("sn.train[data scalar x]", _train(data=(np.float64(1.0), np.array([0]))), TypeError,
    r"^x must be a sequence of inputs.*got the scalar 1\.0")   # was: len() of unsized object
bad("sn.train[data inf]", _train(data=(np.full((10, 1), INF), C10)), ValueError,
    "x from the dataset must be finite")
bad("sn.train[data labels]", _train(data=(X10, C10 + 5)), ValueError, "labels c")
bad("sn.train[batch larger than data]", _train(data=(X10, C10), batch_size=11),
    ValueError, "batch_size")
bad("sn.train[rng]", _train(rng="seed"), TypeError, "rng")
bad("sn.train[snapshot_steps 0]", _train(snapshot_steps=[0]), ValueError,
    "snapshot_steps")
bad("sn.train[snapshot_steps past]", _train(snapshot_steps=[9]), ValueError,
    "snapshot_steps")
bad("sn.train[eval_x shape]", _train(eval_x=np.zeros((3, 2)), snapshot_steps=[1]),
    ValueError, "eval_x")
bad("sn.train[eval_x NaN]", _train(eval_x=[NAN], snapshot_steps=[1]), ValueError,
    "eval_x")
bad("sn.train[task]", _train(data=(X10, C10), task=3), TypeError, "task")
bad("sn.train[callback]", _train(callback=3), TypeError, "callback")
bad("sn.train[classes vs outputs]", _train(model=sn.MLP([1, 4, 3])), ValueError,
    r"sizes\[-1\] = 2")
bad("sn.train[one output]", _train(model=sn.MLP([1, 4, 1]), loss="cross_entropy"),
    ValueError, "binary_cross_entropy")
bad("sn.train[one output, fixed data]", _train(model=sn.MLP([1, 4, 1]),
                                               data=(X10, C10 + 1), loss="hinge"),
    ValueError, "binary_cross_entropy")
bad("sn.train_step[targets]", lambda: sn.train_step(M, sn.SGD(M.params, 0.1), [0.0],
                                                     [4]), ValueError, "targets")
bad("sn.train.epochs[batch_size 0]", lambda: next(sn.train.__module__ and __import__(
    "scratchnet.train", fromlist=["epochs"]).epochs(X10, C10, 0, np.random.default_rng(
        0))), ValueError, "^batch_size must be an integer >= 1; got 0")
bad("fast.FlatParams.unflatten[vector size]", lambda: fast.FlatParams(
    np.zeros(2), (("w", (2,)),)).unflatten(np.zeros(3)), ValueError, "vector")
bad("Loss.grad[targets]", lambda: sn.objectives.CrossEntropyLoss().grad(
    np.zeros((2, 2)), [0, 5]), ValueError, "targets")
bad("experiments.ExperimentResult[task]", lambda: experiments.ExperimentResult(
    3, "textbook", 0, None, X, X, []), TypeError, "task")
bad("experiments.ExperimentResult[seed]", lambda: experiments.ExperimentResult(
    "separated", "textbook", -1, None, X, X, []), ValueError, "^seed ")
bad("experiments.ExperimentResult[rows]", lambda: experiments.ExperimentResult(
    "separated", "textbook", 0, None, X, X, None), TypeError, "^rows ")
bad("sn.History.from_dict[missing]", lambda: sn.History.from_dict({"losses": [1.0]}),
    ValueError, "^d must have the keys .*missing elapsed")
bad("sn.History.from_dict[not a dict]", lambda: sn.History.from_dict([1.0]), TypeError,
    "^d must be a dict")
bad("sn.train_step[optimizer]", lambda: sn.train_step(M, None, [0.0], [0]),
    TypeError, r"^optimizer must have \.step\(grads\); got None")

# --- metrics ---------------------------------------------------------------------------
for fn in ("calibration_bins", "expected_calibration_error"):
    f = getattr(sn.metrics, fn)
    bad(f"metrics.{fn}[probs sum]", lambda f=f: f(np.full((2, 2), 0.7), [0, 1]),
        ValueError, "probs")
    bad(f"metrics.{fn}[targets range]", lambda f=f: f(PROBS, [0, 2]), ValueError,
        "targets")
    bad(f"metrics.{fn}[targets length]", lambda f=f: f(PROBS, [0, 1, 1]), ValueError,
        "targets")
    bad(f"metrics.{fn}[n_bins 0]", lambda f=f: f(PROBS, [0, 1], n_bins=0), ValueError,
        "n_bins")
    bad(f"metrics.{fn}[probs NaN]", lambda f=f: f(np.array([[NAN, 1.0]]), [0]),
        ValueError, "probs")
bad("metrics.moving_average[window 0]", lambda: sn.metrics.moving_average([1.0], 0),
    ValueError, "window")
bad("metrics.moving_average[values strings]",
    lambda: sn.metrics.moving_average(["a"], 1), TypeError, "values")
bad("metrics.moving_average[values 2-D]",
    lambda: sn.metrics.moving_average(np.zeros((2, 2)), 1), ValueError, "values")
bad("metrics.loss_landscape[kind]", lambda: sn.metrics.loss_landscape("hinge", 0, 0),
    ValueError, "kind")
bad("metrics.loss_landscape[correct NaN]",
    lambda: sn.metrics.loss_landscape("mse", NAN, 0.0), ValueError, "correct")
bad("metrics.loss_landscape[shapes]",
    lambda: sn.metrics.loss_landscape("mse", np.zeros(2), np.zeros(3)), ValueError,
    "other|shape")
bad("metrics.fit_gaussian_by_kl[direction]",
    lambda: sn.metrics.fit_gaussian_by_kl([1.0, 1.0, 1.0], [0.0, 1.0, 2.0], "sideways"),
    ValueError, "direction")
bad("metrics.fit_gaussian_by_kl[p negative]",
    lambda: sn.metrics.fit_gaussian_by_kl([1.0, -1.0, 1.0], [0.0, 1.0, 2.0]), ValueError,
    "^p ")
bad("metrics.fit_gaussian_by_kl[grid unsorted]",
    lambda: sn.metrics.fit_gaussian_by_kl([1.0, 1.0, 1.0], [0.0, 2.0, 1.0]),
    ValueError, "grid")
bad("metrics.fit_gaussian_by_kl[shapes]",
    lambda: sn.metrics.fit_gaussian_by_kl([1.0, 1.0], [0.0, 1.0, 2.0]), ValueError,
    "grid|p")

# --- plotting ------------------------------------------------------------------------------
X = np.linspace(-4, 7, 10)
bad("plot_posterior_fit[task]", lambda: plotting.plot_posterior_fit("separated", X),
    TypeError, "task")
bad("plot_posterior_fit[task 2-D]", lambda: plotting.plot_posterior_fit(TASK2D, X),
    ValueError, "task must be one-dimensional")
bad("plot_posterior_fit[x NaN]", lambda: plotting.plot_posterior_fit(TASK, [NAN, 1.0]),
    ValueError, "^x ")
bad("plot_posterior_fit[x empty]", lambda: plotting.plot_posterior_fit(TASK, []),
    ValueError, "^x ")
bad("plot_posterior_fit[x unsorted]", lambda: plotting.plot_posterior_fit(
    TASK, [1.0, 0.0, 2.0]), ValueError, "^x must be increasing")
bad("plot_posterior_fit[probs shape]", lambda: plotting.plot_posterior_fit(
    TASK, X, np.full((10, 3), 1 / 3)), ValueError, "probs")
bad("plot_posterior_fit[probs sum]", lambda: plotting.plot_posterior_fit(
    TASK, X, np.full((10, 2), 0.7)), ValueError, "probs must sum to 1")
bad("plot_posterior_fit[probs negative]", lambda: plotting.plot_posterior_fit(
    TASK, X, np.tile([1.5, -0.5], (10, 1))), ValueError, "probs must be non-negative")
bad("plot_posterior_fit[probs strings]", lambda: plotting.plot_posterior_fit(
    TASK, X, [["a"]]), TypeError, "probs")
bad("plot_posterior_fit[labels count]", lambda: plotting.plot_posterior_fit(
    TASK, X, np.full((2, 10, 2), 0.5), labels=["a"]), ValueError, "labels")
bad("plot_posterior_fit[labels str]", lambda: plotting.plot_posterior_fit(
    TASK, X, np.full((2, 10, 2), 0.5), labels="ab"), TypeError, "labels")
bad("plot_posterior_fit[band shape]", lambda: plotting.plot_posterior_fit(
    TASK, X, np.full((10, 2), 0.5), band=np.zeros((1, 2, 10, 3))), ValueError, "band")
bad("plot_posterior_fit[band outside]", lambda: plotting.plot_posterior_fit(
    TASK, X, np.full((10, 2), 0.5), band=np.full((1, 2, 10, 2), 1.5)), ValueError,
    "band")
bad("plot_posterior_fit[band without probs]", lambda: plotting.plot_posterior_fit(
    TASK, X, band=np.full((1, 2, 10, 2), 0.5)), ValueError, "band")
bad("plot_posterior_fit[densities str]", lambda: plotting.plot_posterior_fit(
    TASK, X, densities="yes"), TypeError, "densities")
bad("plot_posterior_fit[ax]", lambda: plotting.plot_posterior_fit(TASK, X, ax="ax"),
    TypeError, "^ax ")
bad("plot_posterior_map[task 1-D]", lambda: plotting.plot_posterior_map(TASK),
    ValueError, "task must be two-dimensional")
bad("plot_posterior_map[task]", lambda: plotting.plot_posterior_map(None), TypeError,
    "task")
bad("plot_posterior_map[model]", lambda: plotting.plot_posterior_map(TASK2D, model=3,
                                                                    resolution=4),
    TypeError, "model")
bad("plot_posterior_map[model probabilities]", lambda: plotting.plot_posterior_map(
    TASK2D, model=lambda x: np.full((len(x), 2), 0.9), resolution=4), ValueError,
    "sum to 1")
bad("plot_posterior_map[model shape]", lambda: plotting.plot_posterior_map(
    TASK2D, model=lambda x: np.full((len(x), 3), 1 / 3), resolution=4), ValueError,
    "model")
bad("plot_posterior_map[limits shape]", lambda: plotting.plot_posterior_map(
    TASK2D, limits=(0, 1)), ValueError, "limits")
bad("plot_posterior_map[limits order]", lambda: plotting.plot_posterior_map(
    TASK2D, limits=((1, 0), (0, 1))), ValueError, "limits")
bad("plot_posterior_map[limits NaN]", lambda: plotting.plot_posterior_map(
    TASK2D, limits=((0, NAN), (0, 1))), ValueError, "limits")
bad("plot_posterior_map[resolution 1]", lambda: plotting.plot_posterior_map(
    TASK2D, resolution=1), ValueError, "resolution")
bad("plot_posterior_map[samples negative]", lambda: plotting.plot_posterior_map(
    TASK2D, samples=-1, resolution=4), ValueError, "samples")
bad("plot_posterior_map[levels]", lambda: plotting.plot_posterior_map(
    TASK2D, levels=(0.5, 2.0), resolution=4), ValueError, "levels")
bad("plot_posterior_map[ax]", lambda: plotting.plot_posterior_map(
    TASK2D, resolution=4, ax=3), TypeError, "^ax ")
bad("plot_oracle[task]", lambda: plotting.plot_oracle("t", TASK.posterior), TypeError,
    "task")
bad("plot_oracle[model]", lambda: plotting.plot_oracle(TASK, 3), TypeError, "model")
bad("plot_oracle[model probabilities]", lambda: plotting.plot_oracle(
    TASK, lambda x: np.full((len(x), 2), 0.2), n=5, rng=0), ValueError, "sum to 1")
bad("plot_oracle[n 0]", lambda: plotting.plot_oracle(TASK, TASK.posterior, n=0),
    ValueError, "^n ")
bad("plot_oracle[rng]", lambda: plotting.plot_oracle(TASK, TASK.posterior, rng="0"),
    TypeError, "rng")
bad("plot_oracle[ax]", lambda: plotting.plot_oracle(TASK, TASK.posterior, n=5, ax=1),
    TypeError, "^ax ")
bad("plot_reliability_diagram[probs sum]", lambda: plotting.plot_reliability_diagram(
    np.full((2, 2), 0.7), [0, 1]), ValueError, "probs")
bad("plot_reliability_diagram[targets]", lambda: plotting.plot_reliability_diagram(
    PROBS, [0, 5]), ValueError, "targets")
bad("plot_reliability_diagram[n_bins]", lambda: plotting.plot_reliability_diagram(
    PROBS, [0, 1], n_bins=0), ValueError, "n_bins")
bad("plot_reliability_diagram[ax]", lambda: plotting.plot_reliability_diagram(
    PROBS, [0, 1], ax="x"), TypeError, "^ax ")
bad("plot_training_curve[losses empty]", lambda: plotting.plot_training_curve([]),
    ValueError, "losses")
bad("plot_training_curve[losses strings]", lambda: plotting.plot_training_curve(["a"]),
    TypeError, "losses")
bad("plot_training_curve[losses 2-D]", lambda: plotting.plot_training_curve(
    np.zeros((2, 2))), ValueError, "losses")
bad("plot_training_curve[bayes_loss str]", lambda: plotting.plot_training_curve(
    [1.0], bayes_loss="0.5"), TypeError, "bayes_loss")
bad("plot_training_curve[bayes_loss negative]", lambda: plotting.plot_training_curve(
    [1.0], bayes_loss=-1.0), ValueError, "bayes_loss")
bad("plot_training_curve[window 0]", lambda: plotting.plot_training_curve(
    [1.0, 2.0], window=0), ValueError, "window")
bad("plot_training_curve[label]", lambda: plotting.plot_training_curve(
    [1.0], label=3), TypeError, "label")
bad("plot_training_curve[ax]", lambda: plotting.plot_training_curve([1.0], ax=[]),
    TypeError, "^ax ")
ROWS = [{"task": "a", "recipe": "r", "step": 10, "expected_kl": 0.1}]
bad("plot_convergence[rows not mappings]", lambda: plotting.plot_convergence([1, 2]),
    TypeError, "rows")
bad("plot_convergence[rows str]", lambda: plotting.plot_convergence("rows"), TypeError,
    "rows")
bad("plot_convergence[rows empty]", lambda: plotting.plot_convergence([]), ValueError,
    "rows")
bad("plot_convergence[metric missing]", lambda: plotting.plot_convergence(
    ROWS, "max_abs_error"), ValueError, "max_abs_error")
bad("plot_convergence[step missing]", lambda: plotting.plot_convergence(
    [{"task": "a", "recipe": "r", "expected_kl": 0.1}], "expected_kl"), ValueError,
    "step")
bad("plot_convergence[value str]", lambda: plotting.plot_convergence(
    [{**ROWS[0], "expected_kl": "x"}], "expected_kl"), TypeError, "expected_kl")
bad("plot_convergence[metric int]", lambda: plotting.plot_convergence(ROWS, 3),
    TypeError, "metric")
bad("plot_convergence[reference]", lambda: plotting.plot_convergence(
    ROWS, "expected_kl", reference={"a": 0.1}), ValueError, "reference")
bad("plot_convergence[reference order]", lambda: plotting.plot_convergence(
    ROWS, "expected_kl", reference={"a": (0.3, 0.1)}), ValueError, "reference")
bad("plot_convergence[reference_step]", lambda: plotting.plot_convergence(
    ROWS, "expected_kl", reference_step=0), ValueError, "reference_step")
bad("plot_convergence[ax]", lambda: plotting.plot_convergence(
    ROWS, "expected_kl", ax=1), TypeError, "^ax ")
bad("plot_loss_landscape[kind]", lambda: plotting.plot_loss_landscape("hinge"),
    ValueError, "kind")
bad("plot_loss_landscape[limits order]", lambda: plotting.plot_loss_landscape(
    limits=(4.0, -4.0)), ValueError, "limits")
bad("plot_loss_landscape[limits length]", lambda: plotting.plot_loss_landscape(
    limits=(1.0,)), ValueError, "limits")
bad("plot_loss_landscape[limits inf]", lambda: plotting.plot_loss_landscape(
    limits=(0.0, INF)), ValueError, "limits")
bad("plot_loss_landscape[resolution]", lambda: plotting.plot_loss_landscape(
    resolution=1), ValueError, "resolution")
bad("plot_loss_landscape[levels unsorted]", lambda: plotting.plot_loss_landscape(
    resolution=5, levels=[1.0, 0.0]), ValueError, "levels")
bad("plot_loss_landscape[ax]", lambda: plotting.plot_loss_landscape(
    resolution=5, ax="a"), TypeError, "^ax ")
bad("plot_margin_losses[margins NaN]", lambda: plotting.plot_margin_losses([NAN]),
    ValueError, "margins")
bad("plot_margin_losses[margins inf]", lambda: plotting.plot_margin_losses([INF]),
    ValueError, "margins")
bad("plot_margin_losses[margins strings]", lambda: plotting.plot_margin_losses(["a"]),
    TypeError, "margins")
bad("plot_margin_losses[ax]", lambda: plotting.plot_margin_losses(ax=0), TypeError,
    "^ax ")
bad("plot_kl_fits[p negative]", lambda: plotting.plot_kl_fits([0.0, 1.0], [1.0, -1.0]),
    ValueError, "^p ")
bad("plot_kl_fits[p shape]", lambda: plotting.plot_kl_fits([0.0, 1.0], [1.0, 1.0, 1.0]),
    ValueError, "^p ")
bad("plot_kl_fits[p NaN]", lambda: plotting.plot_kl_fits([0.0, 1.0], [1.0, NAN]),
    ValueError, "^p ")
bad("plot_kl_fits[grid unsorted]", lambda: plotting.plot_kl_fits([1.0, 0.0, 2.0],
                                                                 [1.0, 1.0, 1.0]),
    ValueError, "grid")
bad("plot_kl_fits[grid inf]", lambda: plotting.plot_kl_fits([0.0, INF], [1.0, 1.0]),
    ValueError, "grid")
bad("plot_kl_fits[ax]", lambda: plotting.plot_kl_fits(ax=0), TypeError, "^ax ")

# --- experiments -----------------------------------------------------------------------
E = experiments
bad("experiments.run[task]", lambda: E.run("separate", "textbook", steps=5), ValueError,
    "task")
bad("experiments.run[recipe]", lambda: E.run("separated", "cookbook", steps=5),
    ValueError, "recipe")
bad("experiments.run[steps 0]", lambda: E.run("separated", "textbook", steps=0),
    ValueError, "steps")
bad("experiments.run[steps str]", lambda: E.run("separated", "textbook", steps="5"),
    TypeError, "steps")
bad("experiments.run[seed negative]", lambda: E.run("separated", "textbook", steps=5,
                                                   seed=-1), ValueError, "seed")
bad("experiments.run[seeds 0]", lambda: E.run("separated", "textbook", steps=5,
                                             seeds=0), ValueError, "seeds")
bad("experiments.run[task 2-D]", lambda: E.run(TASK2D, "textbook", steps=5), ValueError,
    "task must be one-dimensional")
bad("experiments.run_group[members empty]", lambda: E.run_group([], "textbook",
                                                               steps=5),
    ValueError, "members")
bad("experiments.run_group[recipe]", lambda: E.run_group([("separated", 0)], "x",
                                                        steps=5),
    ValueError, "recipe")
bad("experiments.get_recipe[unknown]", lambda: E.get_recipe("fast"), ValueError,
    "recipe")
bad("experiments.get_recipe[number]", lambda: E.get_recipe(3), TypeError, "recipe|name")
bad("experiments.Recipe.learning_rate[schedule]", lambda: E.Recipe(
    "x", (1, 2), "sgd", 0.1, 4, "stream", 5, (5,), schedule="linear").learning_rate(5),
    ValueError, "schedule")
bad("experiments.Recipe.learning_rate[steps 0]",
    lambda: E.COVERING.learning_rate(0), ValueError, "steps")
bad("experiments.summarize[results]", lambda: E.summarize([1, 2]), TypeError,
    "results")
bad("experiments.summarize[steps str]", lambda: E.summarize(_result(), steps="10"),
    TypeError, "steps")
bad("experiments.summarize[over_seeds str]", lambda: E.summarize(_result(),
                                                                 over_seeds="yes"),
    TypeError, "over_seeds")
bad("experiments.format_table[rows not dicts]", lambda: E.format_table([1]), TypeError,
    "rows")
bad("experiments.format_table[missing key]", lambda: E.format_table(
    [{"task": "t"}]), ValueError, "rows")
bad("experiments.write_table[rows]", lambda: E.write_table([1], "/tmp/x.csv",
                                                          "/tmp/x.md"),
    TypeError, "rows")
bad("experiments.write_table[path dir]", lambda: E.write_table(_rows(), "/tmp",
                                                              "/tmp/x.md"),
    ValueError, "path_csv")
bad("experiments.write_table[path type]", lambda: E.write_table(_rows(), 3, "/tmp/x.md"),
    TypeError, "path_csv")
bad("experiments.posterior_figure[result]", lambda: E.posterior_figure("run"),
    TypeError, "result")
bad("experiments.posterior_figure[empty]", lambda: E.posterior_figure([]), ValueError,
    "result")
bad("experiments.convergence_figure[results]", lambda: E.convergence_figure([3]),
    TypeError, "results")
bad("experiments.convergence_figure[empty]", lambda: E.convergence_figure([]),
    ValueError, "results")
bad("experiments.save_posterior_figure[path type]",
    lambda: E.save_posterior_figure(_result(), 3), TypeError, "path")
bad("experiments.save_posterior_figure[path suffix]",
    lambda: E.save_posterior_figure(_result(), "/tmp/fig.xyz"), ValueError, "path")
bad("experiments.save_posterior_figure[result]",
    lambda: E.save_posterior_figure(None, "/tmp/fig.png"), TypeError, "result")
bad("experiments.run_and_plot[path suffix]",
    lambda: E.run_and_plot("separated", "textbook", "/tmp/fig.nope", steps=5),
    ValueError, "path")
bad("experiments.run_and_plot[task]",
    lambda: E.run_and_plot("nope", "textbook", "/tmp/fig.png", steps=5), ValueError,
    "task")
bad("get_loss[name]", lambda: sn.get_loss("ce"), ValueError, "loss")
bad("experiments.tail_mass[task]", lambda: E.tail_mass("separated", 3.0), TypeError,
    "task")
bad("experiments.tail_mass[x NaN]", lambda: E.tail_mass(TASK, NAN), ValueError, "^x|x ")
bad("experiments.family_task[sigma1 0]", lambda: E.family_task(3.0, 0.0), ValueError,
    "sigma1")
bad("experiments.family_task[mu2 NaN]", lambda: E.family_task(NAN, 1.0), ValueError,
    "mu2")
bad("experiments.family_task[prior1 1]", lambda: E.family_task(3.0, 1.0, prior1=1.0),
    ValueError, "prior1")
bad("experiments.parse_axis[junk]", lambda: E.parse_axis("a:b", "mu2"), ValueError,
    "mu2")
bad("experiments.parse_axis[count 0]", lambda: E.parse_axis("0:1:0", "mu2"),
    ValueError, "mu2")
bad("experiments.parse_axis[empty]", lambda: E.parse_axis("", "sigma1"), ValueError,
    "sigma1")
bad("experiments.Grid[mu2 empty]", lambda: E.Grid(mu2=(), sigma1=(1.0,)), ValueError,
    "mu2")
bad("experiments.sweep[mu2 empty]", lambda: E.sweep((), (1.0,)), ValueError, "mu2")
bad("experiments.sweep[losses unknown]", lambda: E.sweep((3.0,), (1.0,),
                                                        losses=("ce",)),
    ValueError, "loss")
bad("experiments.sweep[seeds 0]", lambda: E.sweep((3.0,), (1.0,), seeds=0), ValueError,
    "seeds")
bad("experiments.sweep[steps 0]", lambda: E.sweep((3.0,), (1.0,), steps=(0,)),
    ValueError, "steps")
bad("experiments.phase_diagram[sweep]", lambda: E.phase_diagram("sweep"), TypeError,
    "sweep|result")
bad("experiments.tail_mass_figure[sweep]", lambda: E.tail_mass_figure(3), TypeError,
    "sweep|result")
bad("experiments.loss_figure[sweep]", lambda: E.loss_figure(None), TypeError,
    "sweep|result")
bad("experiments.save_sweep_figures[sweep]", lambda: E.save_sweep_figures(
    None, "/tmp"), TypeError, "sweep|result")
bad("experiments.run_unit[unit]", lambda: E.run_unit("unit"), TypeError, "unit")
bad("experiments.tail_mass[x0 str]", lambda: E.tail_mass(TASK, "3"), TypeError, "^x0 ")
EMPTY_SWEEP = E.Sweep(E.Grid(mu2=(3.0,), sigma1=(1.0,)))
bad("experiments.save_sweep_figures[out file]", lambda: E.save_sweep_figures(
    EMPTY_SWEEP, __file__), ValueError, "^out .*a file")
bad("experiments.save_sweep_figures[out int]", lambda: E.save_sweep_figures(
    EMPTY_SWEEP, 3), TypeError, "^out ")
bad("experiments.save_sweep_figures[dpi 0]", lambda: E.save_sweep_figures(
    EMPTY_SWEEP, "/tmp", dpi=0), ValueError, "^dpi ")
UNIT_MEMBERS = ((3.0, 1.0, 0.5, 0),)
bad("experiments.Unit[loss]", lambda: E.Unit("textbook", "ce", 8, UNIT_MEMBERS, (20,)),
    ValueError, "^loss ")
bad("experiments.Unit[recipe]", lambda: E.Unit("cookbook", "mse", 8, UNIT_MEMBERS,
                                              (20,)), ValueError, "recipe")
bad("experiments.Unit[width]", lambda: E.Unit("textbook", "mse", 8.5, UNIT_MEMBERS,
                                             (20,)), TypeError, "^width ")
bad("experiments.Unit[members]", lambda: E.Unit("textbook", "mse", 8, (), (20,)),
    ValueError, "^members ")
bad("experiments.Unit[steps]", lambda: E.Unit("textbook", "mse", 8, UNIT_MEMBERS,
                                             (20, 10)), ValueError, "^steps ")

# --- the command line ---------------------------------------------------------------------
for argv, option, *owner in [
        (["--tasks", ""], "--tasks: must name at least one task"),
        (["--tasks", " , "], "--tasks: must name at least one task"),
        (["--tasks", "separated,bogus"], "--tasks: unknown task 'bogus'"),
        (["--recipes", ""], "--recipes: must name at least one recipe"),
        (["--recipes", "cookbook"], "--recipes: unknown recipe"),
        (["--out", ""], "--out: must be a directory path; got ''"),
        (["--out", __file__], "--out: must be a directory; got .*, a file"),
        (["--steps", "1000000000000"], "--steps 1000000000000 .* GiB"),
        (["--steps", "100000", "--seeds", "100000"], "--steps 100000 with --seeds 100000"),
        (["--steps", "0"], "--steps: must be a positive integer; got 0"),
        (["--steps", "-5"], "--steps: must be a positive integer"),
        (["--steps", "ten"], "--steps: must be a positive integer; got 'ten'"),
        (["--steps", "1e3"], "--steps: must be a positive integer"),
        (["--seed", "-1"], "--seed: must be a non-negative integer"),
        (["--seeds", "0"], "--seeds: must be a positive integer"),
        (["--jobs", "0"], "--jobs: must be a positive integer"),
        (["--format", "jpg"], "--format: invalid choice"),
        (["--bogus"], "unrecognized arguments: --bogus"),
        (["sweep", "--mu2", "a:b"], "--mu2"),
        (["sweep", "--seeds", "0"], "--seeds: must be a positive integer"),
        (["sweep", "--losses", "ce"], "--losses: unknown loss"),
        (["sweep", "--losses", ""], "--losses: must name at least one loss"),
        (["sweep", "--recipe", ""], "--recipe/--recipes: must name at least one recipe"),
        (["sweep", "--out", ""], "--out: must be a directory path; got ''"),
        (["sweep", "--out", __file__], "--out: must be a directory; got .*, a file"),
        (["sweep", "--steps", "1000000000000"], "--steps 1,000,000,000,000 .* GiB"),
        (["sweep", "--steps", "100000", "--seeds", "100000"],
         "--seeds 100000 .* GiB"),
]:
    bad(f"cli[{' '.join(argv)}]", _cli(*argv), CommandLineError, option,
        owner=owner[0] if owner else None)


# --- the test ----------------------------------------------------------------------------


@pytest.mark.parametrize("call, error, name", ENTRIES)
def test_a_bad_input_gets_a_clear_error_naming_the_argument(call, error, name):
    try:
        with pytest.raises(error, match=name):
            call()
    finally:
        plt.close("all")


def test_the_catalogue_has_at_least_300_entries():
    assert len(ENTRIES) >= 300, len(ENTRIES)
