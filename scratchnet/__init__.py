"""scratchnet: a classifier trained with cross-entropy learns the Bayes posterior.

A from-scratch NumPy library that makes one idea concrete, end to end: the
softmax outputs q(C|x) of a network trained by minimising the cross-entropy
L = -(1/N) sum_j log q(c_j | x_j) converge to the posterior P(C|x) that an
ideal observer who knows the generative model P(X, C) would compute.

The modules read in order, like chapters; each imports only those above it
(the README's reading order is this one).  The proof that the loss minimiser
is the posterior is ``docs/derivation.md``.

===================  ===========================================================
``softmax``          scores to probabilities: logsumexp, softmax, log_softmax,
                     sigmoid, log_sigmoid, logit, one_hot
``losses``           nll_loss, cross_entropy, binary cross-entropy, each with
                     its gradient w.r.t. the model's outputs: the formulas
``functional``       the same losses with PyTorch's options and signatures
                     (weight, ignore_index, label_smoothing, reduction, layouts)
``scoring``          proper and improper scoring rules: squared error on one-hot
                     targets (on probabilities, the Brier score) and the
                     multi-class hinge loss, with their gradients
``readouts``         how a trained network's outputs become probabilities, per
                     loss: softmax, sigmoid, the outputs themselves, the decision
``objectives``       loss objects (a loss beside its gradient and its readout),
                     by name
``gradcheck``        numerical_gradient, gradient_check (central differences)
``information``      entropy, cross-entropy of distributions, KL divergence,
                     Gibbs' inequality, expected KL
``units``            nats and bits (nats_to_bits, bits_to_nats), code length
``bayes``            the Bayes floor: Bayes loss and accuracy, expected KL,
                     population loss, for any generative model
``gaussian``         GaussianClasses: P(X, C) and its Bayes posterior, and the
                     model fitted to labelled data by maximum likelihood
``two_gaussians``    the closed-form posterior of two 1-D Gaussian classes
``tasks``            the three experimental settings as named presets
``layers``           forward/backward pairs: linear, relu, tanh, softmax,
                     log_softmax
``mlp``              TwoLayerMLP and MLP: the chain of the layer pairs
``optim``            Optimizer, SGD and Adam: one update rule each
``schedules``        learning-rate schedules t -> rate (StepLR, CosineAnnealingLR,
                     LinearLR warm-up, SequentialLR), as PyTorch's
``history``          History: what a training run records
``batches``          where the batches come from: a task, a dataset, a sampler
``fitting``          a generative model fitted to data: shrinkage toward a
                     scaled identity, PCA
``datasets``         real data: the bundled digits, a stratified
                     train / validation / test split
``train``            train_step (forward, backward, update) and train
``temperature``      temperature scaling: fit_temperature on held-out data
``metrics``          the numbers behind the figures: calibration (ECE), Gaussian
                     fits by KL, loss landscapes, moving averages
``estimators``       GaussianClassifier and NetworkClassifier: scikit-learn's
                     conventions around the chapters (imported on first use:
                     it needs scikit-learn)
``fast``             the fast path: the same mathematics on flat vectors and
                     reused buffers, and an ensemble of seeds; pinned by tests
``plotting``         the figures (imported on first use: it needs matplotlib)
``experiments``      the reproduction, shared by the CLI and the notebooks
``exercises``        the homework kit: any chapter as an exercise, its student
                     edition generated from the source, the grader
===================  ===========================================================

Examples
--------
>>> import scratchnet as sn
>>> print(f"{sn.cross_entropy([[-1., -3, 4], [-3, 3, -1]], [0, 1]):.4f}")
2.5141
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

from . import (
    batches,
    bayes,
    datasets,
    fitting,
    functional,
    gaussian,
    gradcheck,
    history,
    information,
    layers,
    losses,
    metrics,
    mlp,
    objectives,
    optim,
    readouts,
    schedules,
    scoring,
    tasks,
    temperature,
    two_gaussians,
    units,
)
from .exceptions import ScratchnetWarning
from .gaussian import GaussianClasses
from .gradcheck import gradient_check, numerical_gradient
from .history import History
from .information import entropy, expected_kl, gibbs_inequality, kl_divergence
from .losses import (
    binary_cross_entropy_with_logits,
    binary_cross_entropy_with_logits_grad,
    cross_entropy,
    cross_entropy_and_grad,
    cross_entropy_grad,
    nll_loss,
    nll_loss_grad,
)
from .mlp import MLP, TwoLayerMLP
from .objectives import get_loss
from .optim import SGD, Adam, Optimizer
from .schedules import Constant, CosineAnnealingLR, LinearLR, SequentialLR, StepLR
from .scoring import mse_loss, mse_loss_grad, multi_margin_loss, multi_margin_loss_grad
from .softmax import (
    log_sigmoid,
    log_softmax,
    logit,
    logsumexp,
    one_hot,
    sigmoid,
    softmax,
)
from .train import train, train_step
from .two_gaussians import two_gaussian_posterior
from .units import bits_to_nats, nats_to_bits

_LAZY_MODULES = ("plotting", "experiments", "exercises", "estimators")

from . import fast  # noqa: E402  (after the chapters it is pinned to)


def __getattr__(name: str) -> Any:
    """Import plotting, experiments, exercises, estimators on first use."""
    if name in _LAZY_MODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "MLP",
    "SGD",
    "Adam",
    "Constant",
    "CosineAnnealingLR",
    "GaussianClasses",
    "History",
    "LinearLR",
    "Optimizer",
    "ScratchnetWarning",
    "SequentialLR",
    "StepLR",
    "TwoLayerMLP",
    "__version__",
    "batches",
    "bayes",
    "binary_cross_entropy_with_logits",
    "binary_cross_entropy_with_logits_grad",
    "bits_to_nats",
    "cross_entropy",
    "cross_entropy_and_grad",
    "cross_entropy_grad",
    "datasets",
    "entropy",
    "expected_kl",
    "fast",
    "fitting",
    "functional",
    "gaussian",
    "get_loss",
    "gibbs_inequality",
    "gradcheck",
    "gradient_check",
    "history",
    "information",
    "kl_divergence",
    "layers",
    "log_sigmoid",
    "log_softmax",
    "logit",
    "logsumexp",
    "losses",
    "metrics",
    "mlp",
    "mse_loss",
    "mse_loss_grad",
    "multi_margin_loss",
    "multi_margin_loss_grad",
    "nats_to_bits",
    "nll_loss",
    "nll_loss_grad",
    "numerical_gradient",
    "objectives",
    "one_hot",
    "optim",
    "readouts",
    "schedules",
    "scoring",
    "sigmoid",
    "softmax",
    "tasks",
    "temperature",
    "train",
    "train_step",
    "two_gaussian_posterior",
    "two_gaussians",
    "units",
]
