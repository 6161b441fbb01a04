"""Every argument of the chapter modules refuses the wrong kind of value clearly.

One table: each row calls one public function, class or method of the
chapters (``softmax``, ``losses``, ``scoring``, ``information``, ``units``,
``gaussian``, ``tasks``, ``metrics``, ``gradcheck``, ``optim``, ``schedules``,
``history``, ``layers``) with one argument of the wrong kind (a list or an
array where a name is expected, a number where a sequence is, a string where a
number is, a bool where an integer is, a non-callable where a callable is) or
of the right kind and a bad value (an infinite or NaN step size, a
non-positive eps).  The call must raise ``TypeError`` (wrong kind) or
``ValueError`` (right kind, bad value) whose message names the argument and
says what it received ("got ..."): never a raw Python or NumPy error such as
"unhashable type" or "ufunc 'log' not supported".

``test_every_public_callable_has_a_row`` keeps the table complete.
"""

import importlib
import inspect
import math

import numpy as np
import pytest

import scratchnet as sn

# the modules themselves (``sn.softmax`` is the function of the same name)
MODULES = [importlib.import_module(f"scratchnet.{name}") for name in (
    "softmax", "losses", "functional", "scoring", "information", "units", "gaussian", "two_gaussians",
    "tasks", "metrics", "gradcheck", "optim", "schedules", "history", "layers")]
(softmax, losses, functional, scoring, information, units, gaussian, two_gaussians, tasks, metrics,
 gradcheck, optim, schedules, history, layers) = MODULES

NAN, INF = math.nan, math.inf
LOGITS = np.array([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]])
LOG_PROBS = sn.log_softmax(LOGITS)
TARGETS = np.array([0, 2])
PROBS = np.array([[0.2, 0.8], [0.6, 0.4]])
P, Q = np.array([0.25, 0.75]), np.array([0.5, 0.5])
TASK = sn.tasks.separated()
TASK2D = sn.GaussianClasses([[0.0, 0.0], [2.0, 1.0]],
                            covariances=np.stack([np.eye(2)] * 2))
GRID = np.linspace(-3.0, 3.0, 7)
DENSITY = np.exp(-GRID**2 / 2)
X3 = np.array([0.5, -1.0, 2.0])
LINEAR_CACHE = layers.linear_forward(np.ones((2, 3)), np.ones((3, 2)), np.zeros(2))[1]
SOFTMAX_CACHE = layers.softmax_forward(LOGITS)[1]
LOG_SOFTMAX_CACHE = layers.log_softmax_forward(LOGITS)[1]
RELU_CACHE = layers.relu_forward(X3)[1]
TANH_CACHE = layers.tanh_forward(X3)[1]
HISTORY = dict(losses=np.array([0.7, 0.5]), snapshot_steps=np.array([2]),
               snapshot_probs=None, snapshot_kl=None, eval_x=None, elapsed=0.1)


def square(x):
    return float(np.sum(x**2))


def double(x):
    return 2 * x


def params():
    return {"w": np.zeros(2)}


def sgd():
    return sn.SGD(params(), lr=0.1)


def adam():
    return sn.Adam(params())


def adam_stepped():
    """An Adam that has made one step (``update`` needs t >= 1)."""
    opt = sn.Adam(params())
    opt.step({"w": np.ones(2)})
    return opt


ROWS = []


def row(call, args, kwargs, error, names, received="got"):
    """``call(*args, **kwargs)`` raises ``error`` naming ``names`` (a str) in its message.

    ``call`` may be a zero-argument function that returns the callable under
    test (for methods of objects made fresh for each row).  The message must
    also say what it received: by default it contains "got".
    """
    ROWS.append((call, args, kwargs, error, names, received))


# --- softmax ---------------------------------------------------------------------
for f in (softmax.softmax, softmax.log_softmax, softmax.logsumexp):
    row(f, ("abc",), {}, TypeError, "x")
    row(f, (LOGITS,), {"axis": "1"}, TypeError, "axis")
    row(f, (LOGITS,), {"axis": 1.5}, TypeError, "axis")
    row(f, (LOGITS,), {"axis": True}, TypeError, "axis")
    row(f, (LOGITS,), {"axis": [0]}, TypeError, "axis")
    row(f, (LOGITS,), {"axis": np.array([0, 1])}, TypeError, "axis")
    # a 0-d input is the input's fault, not the axis's (issue 29)
    row(f, (1.0,), {}, ValueError, "x must have at least one dimension", received="scalar")
row(softmax.logsumexp, (LOGITS,), {"keepdims": "yes"}, TypeError, "keepdims")
row(softmax.logsumexp, (LOGITS,), {"keepdims": [True]}, TypeError, "keepdims")
for f in (softmax.sigmoid, softmax.log_sigmoid, softmax.logit):
    row(f, ("abc",), {}, TypeError, "x" if f is not softmax.logit else "p")
    row(f, (None,), {}, TypeError, "x" if f is not softmax.logit else "p")
    row(f, ({"a": 1},), {}, TypeError, "x" if f is not softmax.logit else "p")
row(softmax.one_hot, ([0.5, 1.0],), {}, TypeError, "targets")
row(softmax.one_hot, ("ab",), {}, TypeError, "targets")
row(softmax.one_hot, ([0, 1],), {"num_classes": "3"}, TypeError, "num_classes")
row(softmax.one_hot, ([0, 1],), {"num_classes": 2.5}, TypeError, "num_classes")
row(softmax.one_hot, ([0, 1],), {"num_classes": True}, TypeError, "num_classes")
row(softmax.one_hot, ([0, 1],), {"num_classes": [3]}, TypeError, "num_classes")
row(softmax.one_hot, ([0, 1],), {"num_classes": 0}, ValueError, "num_classes")

# --- losses and scoring -----------------------------------------------------------
# The options live in functional (the chapter refuses them: tests/test_losses.py).
CLASS_LOSSES = [functional.cross_entropy, functional.cross_entropy_grad,
                functional.cross_entropy_and_grad]
NLL = [functional.nll_loss, functional.nll_loss_grad]
BCE = [functional.binary_cross_entropy_with_logits,
       functional.binary_cross_entropy_with_logits_grad]
CHAPTER_LOSSES = [losses.cross_entropy, losses.cross_entropy_grad,
                  losses.cross_entropy_and_grad, losses.nll_loss, losses.nll_loss_grad,
                  losses.binary_cross_entropy_with_logits,
                  losses.binary_cross_entropy_with_logits_grad]
MSE = [scoring.mse_loss, scoring.mse_loss_grad]
MARGIN = [scoring.multi_margin_loss, scoring.multi_margin_loss_grad]
BCE_ARGS = (np.array([0.5, -1.0]), np.array([1.0, 0.0]))
for f in CLASS_LOSSES + NLL + BCE + MSE + MARGIN:
    scores, targets = BCE_ARGS if f in BCE else (LOG_PROBS if f in NLL else LOGITS,
                                                 TARGETS)
    first = "log_probs" if f in NLL else ("outputs" if f in MSE else "logits")
    row(f, (scores, targets), {"reduction": ["mean"]}, TypeError, "reduction")
    row(f, (scores, targets), {"reduction": np.array(["mean", "sum"])}, TypeError,
        "reduction")
    row(f, (scores, targets), {"reduction": np.array("mean")}, TypeError, "reduction")
    row(f, (scores, targets), {"reduction": None}, TypeError, "reduction")
    row(f, (scores, targets), {"reduction": "average"}, ValueError, "reduction")
    row(f, ("abc", targets), {}, TypeError, first)
    row(f, (scores, "abc"), {}, TypeError, "targets")
    row(f, (scores, None), {}, TypeError, "targets")
for f in CHAPTER_LOSSES:
    binary, nll = "binary" in f.__name__, f.__name__.startswith("nll")
    scores, targets = BCE_ARGS if binary else (LOG_PROBS if nll else LOGITS, TARGETS)
    first = "log_probs" if nll else "logits"
    row(f, ("abc", targets), {}, TypeError, first)
    row(f, (scores, "abc"), {}, TypeError, "targets")
    row(f, (scores, None), {}, TypeError, "targets")
for f in CLASS_LOSSES + NLL + MARGIN:
    scores = LOG_PROBS if f in NLL else LOGITS
    row(f, (scores, TARGETS), {"weight": "abc"}, TypeError, "weight")
    row(f, (scores, TARGETS), {"weight": 2.0}, ValueError, "weight")
for f in CLASS_LOSSES + NLL:
    scores = LOG_PROBS if f in NLL else LOGITS
    row(f, (scores, TARGETS), {"ignore_index": 1.5}, TypeError, "ignore_index")
    row(f, (scores, TARGETS), {"ignore_index": True}, TypeError, "ignore_index")
    row(f, (scores, TARGETS), {"ignore_index": "1"}, TypeError, "ignore_index")
    row(f, (scores, TARGETS), {"ignore_index": [1]}, TypeError, "ignore_index")
for f in CLASS_LOSSES:
    row(f, (LOGITS, TARGETS), {"label_smoothing": "0.1"}, TypeError, "label_smoothing")
    row(f, (LOGITS, TARGETS), {"label_smoothing": [0.1]}, TypeError, "label_smoothing")
    row(f, (LOGITS, TARGETS), {"label_smoothing": True}, TypeError, "label_smoothing")
    row(f, (LOGITS, TARGETS), {"label_smoothing": NAN}, ValueError, "label_smoothing")
    row(f, (LOGITS, TARGETS), {"label_smoothing": 1.5}, ValueError, "label_smoothing")
for f in BCE:
    row(f, BCE_ARGS, {"pos_weight": "abc"}, TypeError, "pos_weight")
    row(f, BCE_ARGS, {"pos_weight": [1.0, 2.0, 3.0]}, ValueError, "pos_weight")
for f in MARGIN:
    row(f, (LOGITS, TARGETS), {"margin": "1"}, TypeError, "margin")
    row(f, (LOGITS, TARGETS), {"margin": [1.0]}, TypeError, "margin")
    row(f, (LOGITS, TARGETS), {"margin": True}, TypeError, "margin")
    row(f, (LOGITS, TARGETS), {"margin": NAN}, ValueError, "margin")
    row(f, (LOGITS, TARGETS), {"margin": INF}, ValueError, "margin")

# --- information and units -------------------------------------------------------
TWO = [information.cross_entropy, information.kl_divergence, information.gibbs_inequality]
for f in [information.entropy, *TWO]:
    args = (P,) if f is information.entropy else (P, Q)
    row(f, args, {"base": [2]}, TypeError, "base")
    row(f, args, {"base": "2"}, TypeError, "base")
    row(f, args, {"base": True}, TypeError, "base")
    row(f, args, {"base": np.array([2.0, 3.0])}, TypeError, "base")
    row(f, args, {"base": 1.0}, ValueError, "base")
    row(f, args, {"base": 0.0}, ValueError, "base")
    row(f, args, {"base": -2.0}, ValueError, "base")
    row(f, args, {"base": NAN}, ValueError, "base")
    row(f, args, {"base": INF}, ValueError, "base")
    row(f, args, {"axis": "0"}, TypeError, "axis")
    row(f, args, {"axis": [0]}, TypeError, "axis")
    row(f, ("abc", *args[1:]), {}, TypeError, "p")
    row(f, (0.5,) * len(args), {}, ValueError, "p" + " and q" * (len(args) - 1)
        + " must have at least one dimension", received="scalar")
for f in TWO:
    row(f, (P, "abc"), {}, TypeError, "q")
    row(f, (P,), {"log_q": "abc"}, TypeError, "log_q")
    row(f, (P, Q), {"log_q": np.log(Q)}, TypeError, "log_q")
    row(f, (P,), {}, TypeError, "q")
row(information.expected_kl, (PROBS, PROBS), {"weights": "abc"}, TypeError, "weights")
row(information.expected_kl, (PROBS, PROBS), {"weights": 0.5}, ValueError, "weights")
row(information.expected_kl, (PROBS, PROBS), {"base": [2]}, TypeError, "base")
row(information.expected_kl, (PROBS, PROBS), {"base": 1.0}, ValueError, "base")
row(information.expected_kl, ("abc", PROBS), {}, TypeError, "p_cond")
row(information.expected_kl, (PROBS, "abc"), {}, TypeError, "q_cond")
row(information.expected_kl, (PROBS,), {}, TypeError, "q_cond")
for f in (units.nats_to_bits, units.bits_to_nats):
    row(f, ("abc",), {}, TypeError, "x")
    row(f, (None,), {}, TypeError, "x")
    row(f, ([1.0, "a"],), {}, TypeError, "x")

# --- gaussian and tasks ------------------------------------------------------------
G = gaussian.GaussianClasses
row(G, ("ab", [1.0, 1.0]), {}, TypeError, "means")
row(G, ([0.0, 1.0], "ab"), {}, TypeError, "scales")
row(G, ([0.0, 1.0], 1.0), {}, ValueError, "scales")
row(G, ([0.0, 1.0], [1.0, 1.0], "ab"), {}, TypeError, "priors")
row(G, ([0.0, 1.0], [1.0, 1.0], 0.5), {}, ValueError, "priors")
row(G, ([0.0, 1.0], [1.0, 1.0]), {"name": 3}, TypeError, "name")
row(G, ([0.0, 1.0], [1.0, 1.0]), {"name": ["a"]}, TypeError, "name")
row(G, ([[0.0, 0.0]],), {"covariances": "ab"}, TypeError, "covariances")
row(G, ([[0.0, 0.0]],), {"covariances": 1.0}, ValueError, "covariances")
row(G, ([0.0, 1.0], [1.0, 1.0]), {"covariances": [[[1.0]], [[1.0]]]}, TypeError,
    "covariances")
for method in ("log_class_densities", "log_joint", "log_evidence", "density",
               "log_posterior", "posterior", "sample_labels"):
    row(lambda m=method: getattr(TASK, m), ("abc",), {}, TypeError, "x")
    row(lambda m=method: getattr(TASK, m), ([np.inf],), {}, ValueError, "x")
    row(lambda m=method: getattr(TASK2D, m), ([1.0, 2.0, 3.0],), {}, ValueError, "x")
row(lambda: TASK.sample_labels, ([0.0],), {"rng": "a"}, TypeError, "rng")
row(lambda: TASK.sample_labels, ([0.0],), {"rng": 1.5}, TypeError, "rng")
row(lambda: TASK.sample, (2.5,), {}, TypeError, "n")
row(lambda: TASK.sample, (-1,), {}, ValueError, "n")
row(lambda: TASK.sample, (True,), {}, TypeError, "n")
row(lambda: TASK.sample, ("3",), {}, TypeError, "n")
row(lambda: TASK.sample, ([3],), {}, TypeError, "n")
row(lambda: TASK.sample, (3,), {"rng": "a"}, TypeError, "rng")
row(lambda: TASK.sample, (3,), {"rng": 1.5}, TypeError, "rng")
row(lambda: TASK.sample, (3,), {"rng": -1}, ValueError, "rng")
row(lambda: TASK.support, ("0.9",), {}, TypeError, "mass")
row(lambda: TASK.support, ([0.9],), {}, TypeError, "mass")
row(lambda: TASK.support, (NAN,), {}, ValueError, "mass")
row(lambda: TASK.support, (1.0,), {}, ValueError, "mass")
row(lambda: TASK2D.decision_boundaries, (), {}, ValueError, "decision_boundaries")
FIT_X = np.arange(12.0).reshape(6, 2) ** 1.5
row(G.fit, ("abc", [0, 0, 0, 1, 1, 1]), {}, TypeError, "x")
row(G.fit, (FIT_X, [0.0] * 6), {}, TypeError, "targets")
row(G.fit, (FIT_X, [0, 1]), {}, ValueError, "targets")
row(G.fit, (FIT_X, [0, 0, 0, 1, 1, -1]), {}, ValueError, "targets")
row(G.fit, (FIT_X, [0, 0, 0, 1, 1, 1]), {"shrinkage": "0.1"}, TypeError, "shrinkage")
row(G.fit, (FIT_X, [0, 0, 0, 1, 1, 1]), {"shrinkage": 2.0}, ValueError, "shrinkage")
row(G.fit, (FIT_X, [0, 0, 0, 1, 1, 1]), {"num_classes": 2.0}, TypeError, "num_classes")
# labels 1..K: class 0 is empty, and the message says so (issue 29)
row(G.fit, (FIT_X, [1, 1, 1, 2, 2, 2]), {}, ValueError, "class 0 has no samples",
    received="start at 1")
TWO_GAUSSIANS = dict(mu1=0.0, sigma1=1.0, mu2=3.0, sigma2=1.0)
TGP = two_gaussians.two_gaussian_posterior
for key in TWO_GAUSSIANS:
    row(TGP, (X3,), {**TWO_GAUSSIANS, key: "1"}, TypeError,
        key)
    row(TGP, (X3,), {**TWO_GAUSSIANS, key: [1.0]}, TypeError,
        key)
    row(TGP, (X3,), {**TWO_GAUSSIANS, key: INF}, ValueError,
        key)
row(TGP, (X3,), {**TWO_GAUSSIANS, "sigma1": 0.0}, ValueError,
    "sigma1")
row(TGP, (X3,), {**TWO_GAUSSIANS, "prior1": True}, TypeError,
    "prior1")
row(TGP, (X3,), {**TWO_GAUSSIANS, "prior1": 1.0}, ValueError,
    "prior1")
row(TGP, ("abc",), TWO_GAUSSIANS, TypeError, "x")
row(tasks.get_task, (["separated"],), {}, TypeError, "name")
row(tasks.get_task, (np.array("separated"),), {}, TypeError, "name")
row(tasks.get_task, (3,), {}, TypeError, "name")
row(tasks.get_task, ("nope",), {}, ValueError, "task", received="'nope'")

# --- metrics -------------------------------------------------------------------------
for f in (metrics.calibration_bins, metrics.expected_calibration_error):
    row(f, (PROBS, [1, 0]), {"n_bins": 2.5}, TypeError, "n_bins")
    row(f, (PROBS, [1, 0]), {"n_bins": True}, TypeError, "n_bins")
    row(f, (PROBS, [1, 0]), {"n_bins": "10"}, TypeError, "n_bins")
    row(f, (PROBS, [1, 0]), {"n_bins": [10]}, TypeError, "n_bins")
    row(f, (PROBS, [1, 0]), {"n_bins": 0}, ValueError, "n_bins")
    row(f, ("abc", [1, 0]), {}, TypeError, "probs")
    row(f, (PROBS, "ab"), {}, TypeError, "targets")
    row(f, (PROBS, [0.5, 1.0]), {}, TypeError, "targets")
for f in (metrics.nll_scorer, metrics.ece_scorer):
    row(f, ("abc", [[0.0]], [0]), {}, TypeError, "estimator", received="str")
row(metrics.moving_average, ([1.0, 2.0, 3.0], 2.5), {}, TypeError, "window")
row(metrics.moving_average, ([1.0, 2.0, 3.0], True), {}, TypeError, "window")
row(metrics.moving_average, ([1.0, 2.0, 3.0], "2"), {}, TypeError, "window")
row(metrics.moving_average, ([1.0, 2.0, 3.0], 0), {}, ValueError, "window")
row(metrics.moving_average, ("abc", 2), {}, TypeError, "values")
row(metrics.moving_average, (3.0, 2), {}, ValueError, "values")
row(metrics.fit_gaussian_by_kl, (DENSITY, GRID), {"direction": ["forward"]}, TypeError,
    "direction")
row(metrics.fit_gaussian_by_kl, (DENSITY, GRID), {"direction": np.array("forward")},
    TypeError, "direction")
row(metrics.fit_gaussian_by_kl, (DENSITY, GRID), {"direction": "sideways"}, ValueError,
    "direction")
row(metrics.fit_gaussian_by_kl, ("abc", GRID), {}, TypeError, "p")
row(metrics.fit_temperature, ("abc", [0]), {}, TypeError, "logits")
row(metrics.fit_temperature, ([[0.0, 1.0]], "a"), {}, TypeError, "targets")
row(metrics.fit_temperature, ([[0.0, 1.0]], [0]), {"bounds": 5}, TypeError, "bounds")
row(metrics.fit_temperature, ([[0.0, 1.0]], [0]), {"bounds": (0, 1)}, ValueError, "bounds")
row(metrics.fit_temperature, ([[0.0, 1.0]], [0]), {"bounds": ("a", "b")}, TypeError,
    "bounds")
row(metrics.fit_gaussian_by_kl, (DENSITY, "abc"), {}, TypeError, "grid")
row(metrics.fit_gaussian_by_kl, (DENSITY, 1.0), {}, ValueError, "grid")
row(metrics.loss_landscape, (["mse"], 0.5, 0.5), {}, TypeError, "kind")
row(metrics.loss_landscape, (np.array("mse"), 0.5, 0.5), {}, TypeError, "kind")
row(metrics.loss_landscape, ("hinge", 0.5, 0.5), {}, ValueError, "kind")
row(metrics.loss_landscape, ("mse", "a", 0.5), {}, TypeError, "correct")
row(metrics.loss_landscape, ("mse", 0.5, "a"), {}, TypeError, "other")
row(metrics.loss_landscape, ("mse", np.zeros(3), np.zeros(4)), {}, ValueError,
    "correct and other must have broadcastable shapes", received="(3,) and (4,)")

# --- gradcheck -------------------------------------------------------------------------
for f in (gradcheck.numerical_gradient, gradcheck.gradient_check):
    args = (square, X3) if f is gradcheck.numerical_gradient else (square, double, X3)
    row(f, (3, *args[1:]), {}, TypeError, "f")
    row(f, ("square", *args[1:]), {}, TypeError, "f")
    row(f, (*args[:-1], "abc"), {}, TypeError, "x")
    row(f, args, {"eps": "1e-6"}, TypeError, "eps")
    row(f, args, {"eps": [1e-6]}, TypeError, "eps")
    row(f, args, {"eps": True}, TypeError, "eps")
    row(f, args, {"eps": 0.0}, ValueError, "eps")
    row(f, args, {"eps": -1e-6}, ValueError, "eps")
    row(f, args, {"eps": INF}, ValueError, "eps")
    row(f, args, {"eps": NAN}, ValueError, "eps")
    row(f, (lambda x: "a", *args[1:]), {}, TypeError, "f")
row(gradcheck.gradient_check, (square, "abc", X3), {}, TypeError, "grad")
row(gradcheck.gradient_check, (square, double, X3), {"floor": "1"}, TypeError, "floor")
row(gradcheck.gradient_check, (square, double, X3), {"floor": INF}, ValueError, "floor")
row(gradcheck.gradient_check, (square, double, X3), {"floor": 0.0}, ValueError, "floor")
row(gradcheck.gradient_check, (square, double, X3), {"return_index": "yes"}, TypeError,
    "return_index")

# --- optim ------------------------------------------------------------------------------
for cls in (optim.SGD, optim.Adam, optim.Optimizer):
    row(cls, (params(), "0.1"), {}, TypeError, "lr")
    row(cls, (params(), [0.1]), {}, TypeError, "lr")
    row(cls, (params(), True), {}, TypeError, "lr")
    row(cls, (params(), INF), {}, ValueError, "lr")
    row(cls, (params(), NAN), {}, ValueError, "lr")
    row(cls, (params(), -0.1), {}, ValueError, "lr")
    row(cls, (np.zeros(2), 0.1), {}, TypeError, "params")
    row(cls, ([np.zeros(2)], 0.1), {}, TypeError, "params")
    row(cls, ({"w": [0.0, 0.0]}, 0.1), {}, TypeError, "params['w']")
    row(cls, ({3: np.zeros(2)}, 0.1), {}, TypeError, "params")
for key in ("momentum", "weight_decay"):
    row(optim.SGD, (params(), 0.1), {key: "0.9"}, TypeError, key)
    row(optim.SGD, (params(), 0.1), {key: [0.9]}, TypeError, key)
    row(optim.SGD, (params(), 0.1), {key: INF}, ValueError, key)
    row(optim.SGD, (params(), 0.1), {key: -0.5}, ValueError, key)
row(optim.Adam, (params(),), {"betas": 0.9}, TypeError, "betas")
row(optim.Adam, (params(),), {"betas": "ab"}, TypeError, "betas")
row(optim.Adam, (params(),), {"betas": (0.9,)}, TypeError, "betas")
row(optim.Adam, (params(),), {"betas": np.array([0.9, 0.999])}, TypeError, "betas")
row(optim.Adam, (params(),), {"betas": (0.9, "a")}, TypeError, "betas[1]")
row(optim.Adam, (params(),), {"betas": (1.0, 0.999)}, ValueError, "betas[0]")
row(optim.Adam, (params(),), {"eps": "1e-8"}, TypeError, "eps")
row(optim.Adam, (params(),), {"eps": 0.0}, ValueError, "eps")
row(optim.Adam, (params(),), {"eps": INF}, ValueError, "eps")
row(optim.Adam, (params(),), {"eps": NAN}, ValueError, "eps")
row(optim.Adam, (params(),), {"weight_decay": [0.1]}, TypeError, "weight_decay")
for make in (sgd, adam_stepped):
    row(lambda make=make: make().step, ([np.zeros(2)],), {}, TypeError, "grads")
    row(lambda make=make: make().step, ({"w": "ab"},), {}, TypeError, "grads['w']")
    row(lambda make=make: make().step, ({"w": np.zeros(3)},), {}, ValueError, "grads['w']")
    row(lambda make=make: make().step, ({"w": np.zeros(2)},), {"check_finite": "yes"},
        TypeError, "check_finite")
    row(lambda make=make: make().init_state, ("abc",), {}, TypeError, "param")
    row(lambda make=make: make().update, ("abc", np.zeros(2), {}), {}, TypeError, "param")
    row(lambda make=make: make().update, (np.zeros(2), "ab", {}), {}, TypeError, "grad")
    row(lambda make=make: make().update, (np.zeros(2), np.zeros(3), {}), {}, ValueError,
        "grad")
    row(lambda make=make: make().update, (np.zeros(2), np.zeros(2), "ab"), {}, TypeError,
        "state")
row(lambda: optim.Optimizer(params(), 0.1).init_state, ("abc",), {}, TypeError, "param")
row(lambda: adam().update, (np.zeros(2), np.zeros(2), adam().state["w"]), {},
    RuntimeError, "steps")
row(lambda: adam().step_number, (), {}, RuntimeError, "steps")

# --- schedules ---------------------------------------------------------------------------
for cls, extra in ((schedules.Constant, {}), (schedules.StepLR, {"step_size": 2}),
                   (schedules.CosineAnnealingLR, {"T_max": 10}),
                   (schedules.LinearLR, {})):
    row(cls, ("0.1",), extra, TypeError, "lr")
    row(cls, ([0.1],), extra, TypeError, "lr")
    row(cls, (True,), extra, TypeError, "lr")
    row(cls, (INF,), extra, ValueError, "lr")
    row(cls, (NAN,), extra, ValueError, "lr")
    row(lambda cls=cls, extra=extra: cls(0.1, **extra), ("3",), {}, TypeError, "t")
    row(lambda cls=cls, extra=extra: cls(0.1, **extra), (1.5,), {}, TypeError, "t")
    row(lambda cls=cls, extra=extra: cls(0.1, **extra), (True,), {}, TypeError, "t")
    row(lambda cls=cls, extra=extra: cls(0.1, **extra), (-1,), {}, ValueError, "t")
row(schedules.StepLR, (0.1, 2.5), {}, TypeError, "step_size")
row(schedules.StepLR, (0.1, True), {}, TypeError, "step_size")
row(schedules.StepLR, (0.1, 0), {}, ValueError, "step_size")
row(schedules.StepLR, (0.1, 2), {"gamma": "0.5"}, TypeError, "gamma")
row(schedules.StepLR, (0.1, 2), {"gamma": INF}, ValueError, "gamma")
row(schedules.CosineAnnealingLR, (0.1, "10"), {}, TypeError, "T_max")
row(schedules.CosineAnnealingLR, (0.1, 10), {"eta_min": [0.0]}, TypeError, "eta_min")
row(schedules.CosineAnnealingLR, (0.1, 10), {"eta_min": NAN}, ValueError, "eta_min")
row(schedules.LinearLR, (0.1,), {"start_factor": "0.5"}, TypeError, "start_factor")
row(schedules.LinearLR, (0.1,), {"end_factor": [1.0]}, TypeError, "end_factor")
row(schedules.LinearLR, (0.1,), {"total_iters": 2.5}, TypeError, "total_iters")
row(schedules.LinearLR, (0.1,), {"total_iters": True}, TypeError, "total_iters")
WARM, COOL = schedules.Constant(0.1), schedules.Constant(0.01)
row(schedules.SequentialLR, (WARM, [5]), {}, TypeError, "schedules")
row(schedules.SequentialLR, ("ab", [5]), {}, TypeError, "schedules")
row(schedules.SequentialLR, ([WARM, 3], [5]), {}, TypeError, "schedules")
row(schedules.SequentialLR, ([WARM, COOL], 5), {}, TypeError, "milestones")
row(schedules.SequentialLR, ([WARM, COOL], "5"), {}, TypeError, "milestones")
row(schedules.SequentialLR, ([WARM, COOL], [2.5]), {}, TypeError, "milestones[0]")
row(schedules.SequentialLR, ([WARM, COOL], [True]), {}, TypeError, "milestones[0]")
row(lambda: schedules.SequentialLR([WARM, COOL], [5]), ("1",), {}, TypeError, "t")

# --- history --------------------------------------------------------------------------------
row(history.History, (), {**HISTORY, "losses": "abc"}, TypeError, "losses")
row(history.History, (), {**HISTORY, "losses": 0.5}, ValueError, "losses")
row(history.History, (), {**HISTORY, "snapshot_steps": [0.5]}, TypeError, "snapshot_steps")
row(history.History, (), {**HISTORY, "snapshot_probs": "abc"}, TypeError, "snapshot_probs")
row(history.History, (), {**HISTORY, "snapshot_kl": "abc"}, TypeError, "snapshot_kl")
row(history.History, (), {**HISTORY, "eval_x": "abc"}, TypeError, "eval_x")
row(history.History, (), {**HISTORY, "elapsed": "0.1"}, TypeError, "elapsed")
row(history.History, (), {**HISTORY, "elapsed": [0.1]}, TypeError, "elapsed")
row(history.History, (), {**HISTORY, "elapsed": NAN}, ValueError, "elapsed")
row(history.History, (), {**HISTORY, "stopped_early": "no"}, TypeError, "stopped_early")
row(history.History.from_dict, ("abc",), {}, TypeError, "d")
row(history.History.from_dict, ({"losses": "abc", "elapsed": 0.1},), {}, TypeError,
    "losses")
row(history.History.from_dict, ({"losses": [0.5], "elapsed": "x"},), {}, TypeError,
    "elapsed")
row(history.History.from_dict, ({"losses": [0.5], "elapsed": 0.1,
                                  "snapshot_steps": ["a"]},), {}, TypeError,
    "snapshot_steps")
row(history.History.from_dict, ({"losses": [0.5], "elapsed": 0.1,
                                  "stopped_early": "no"},), {}, TypeError, "stopped_early")
row(history.EarlyStopping, (np.zeros((1, 1)), [0]), {"every": 1, "patience": 1.5},
    TypeError, "patience")
row(history.EarlyStopping, (np.zeros((1, 1)), [0]), {"every": 0, "patience": None},
    ValueError, "validation_every")
row(lambda: history.EarlyStopping(np.zeros((1, 1)), [0], every=1, patience=1).update,
    ("3", None), {}, TypeError, "step")
row(lambda: history.EarlyStopping(np.zeros((1, 1)), [0], every=1, patience=1).update,
    (3, "abc"), {}, TypeError, "model")
row(lambda: history.EarlyStopping(np.zeros((1, 1)), [0], every=1, patience=1).restore,
    ("abc",), {}, TypeError, "model")

# --- layers -------------------------------------------------------------------------------------
W, B = np.ones((3, 2)), np.zeros(2)
row(layers.linear_forward, ("abc", W, B), {}, TypeError, "x")
row(layers.linear_forward, (np.ones((2, 3)), "abc", B), {}, TypeError, "W")
row(layers.linear_forward, (np.ones((2, 3)), W, "ab"), {}, TypeError, "b")
row(layers.linear_forward, (np.ones((2, 3)), np.ones(3), B), {}, ValueError, "W")
row(layers.linear_forward, (np.ones((2, 3)), W, 0.0), {}, ValueError, "b")
row(layers.linear_backward, (np.ones((2, 2)), "ab"), {}, TypeError, "cache")
row(layers.linear_backward, (np.ones((2, 2)), (1, 2, 3)), {}, TypeError, "cache")
row(layers.linear_backward, (np.ones((2, 2)), ("a", "b")), {}, TypeError, "cache")
row(layers.linear_backward, ("ab", LINEAR_CACHE), {}, TypeError, "dout")
row(layers.linear_backward, (np.ones((3, 3)), LINEAR_CACHE), {}, ValueError, "dout")
for forward, backward, cache in ((layers.relu_forward, layers.relu_backward, RELU_CACHE),
                                 (layers.tanh_forward, layers.tanh_backward, TANH_CACHE)):
    row(forward, ("abc",), {}, TypeError, "x")
    row(backward, (X3, "ab"), {}, TypeError, "cache")
    row(backward, (X3, [1.0, 2.0, 3.0]), {}, TypeError, "cache")
    row(backward, ("ab", cache), {}, TypeError, "dout")
    row(backward, (np.ones(2), cache), {}, ValueError, "dout")
for forward, backward, cache in (
        (layers.softmax_forward, layers.softmax_backward, SOFTMAX_CACHE),
        (layers.log_softmax_forward, layers.log_softmax_backward, LOG_SOFTMAX_CACHE)):
    row(forward, ("abc",), {}, TypeError, "x")
    row(forward, (LOGITS,), {"axis": "1"}, TypeError, "axis")
    row(forward, (LOGITS,), {"axis": [1]}, TypeError, "axis")
    row(backward, (LOGITS, "ab"), {}, TypeError, "cache")
    row(backward, (LOGITS, (LOGITS,)), {}, TypeError, "cache")
    row(backward, (LOGITS, ("a", "b")), {}, TypeError, "cache")
    row(backward, ("ab", cache), {}, TypeError, "dout")
    row(backward, (np.ones((3, 3)), cache), {}, ValueError, "dout")


def _callable(call):
    """The callable a row tests: ``call`` itself, or what a factory lambda returns."""
    if inspect.isfunction(call) and call.__name__ == "<lambda>":
        return call()
    return call


def _row_id(index, entry):
    call, names = entry[0], entry[4]
    target = _callable(call)
    name = getattr(target, "__qualname__", type(target).__name__)
    return f"{name}-{names}-{index}"


@pytest.mark.parametrize(
    "call, args, kwargs, error, names, received",
    [pytest.param(*entry, id=_row_id(i, entry)) for i, entry in enumerate(ROWS)])
def test_a_wrong_kind_of_argument_is_refused_clearly(call, args, kwargs, error, names,
                                                     received):
    target = _callable(call)
    with pytest.raises(Exception) as info:
        target(*args, **kwargs)
    message = str(info.value)
    assert type(info.value) is error, f"{type(info.value).__name__}: {message}"
    assert names in message, f"the message does not name {names!r}: {message}"
    assert received in message, f"the message does not say what it received: {message}"
    assert "\n" not in message  # one plain sentence


def _public_callables():
    """(module, name, qualname) of every public function, class and method."""
    found = []
    for module in MODULES:
        for name in module.__all__:
            obj = getattr(module, name)
            if not callable(obj):
                continue
            found.append(obj.__qualname__)
            if inspect.isclass(obj):
                for attr, value in vars(obj).items():
                    if attr.startswith("_") and attr != "__call__":
                        continue
                    if isinstance(value, (classmethod, staticmethod)):
                        value = value.__func__
                    if inspect.isfunction(value):
                        found.append(value.__qualname__)
    return found


def _tested_callables():
    tested = set()
    for call, *_ in ROWS:
        target = _callable(call)
        target = getattr(target, "__func__", target)
        if inspect.isclass(target) or inspect.isfunction(target):
            tested.add(target.__qualname__)
        elif callable(target):  # an instance: its __call__
            tested.add(type(target).__qualname__ + ".__call__")
    return tested


# Records the library returns (named tuples of results), never arguments a user
# builds: they take what they are given, as a tuple does.
RESULTS = {"GibbsResult", "CalibrationBins", "GaussianFit"}
# The base optimiser's update only says that a subclass must define it.
ABSTRACT = {"Optimizer.update"}


def _takes_arguments(qualname):
    module = next(m for m in MODULES if qualname.split(".")[0] in m.__all__)
    obj = module
    for part in qualname.split("."):
        obj = getattr(obj, part)
    names = [p for p in inspect.signature(obj).parameters if p != "self"]
    return bool(names)


def test_every_public_callable_has_a_row():
    tested = _tested_callables()
    missing = [q for q in _public_callables()
               if q not in tested | RESULTS | ABSTRACT and _takes_arguments(q)]
    assert not missing, f"no row for {missing}"
