"""scratchnet: a classifier trained with cross-entropy learns the Bayes posterior.

A from-scratch NumPy library that makes one idea concrete, end to end: the
softmax outputs q(C|x) of a network trained by minimising the cross-entropy
L = -(1/N) sum_j log q(c_j | x_j) converge to the posterior P(C|x) that an
ideal observer who knows the generative model P(X, C) would compute.

The modules read in order, like chapters; each imports only those above it.

===================  ===========================================================
``softmax``          scores to probabilities: logsumexp, softmax, log_softmax,
                     sigmoid, log_sigmoid, one_hot
``losses``           nll_loss, cross_entropy, binary cross-entropy, MSE, each
                     with its gradient w.r.t. the model's outputs
``gradcheck``        numerical_gradient, gradient_check (central differences)
``information``      entropy, cross-entropy of distributions, KL divergence,
                     Gibbs' inequality, expected KL
``gaussian``         GaussianClasses: P(X, C), its Bayes posterior, Bayes loss
``tasks``            the three experimental settings as named presets
``layers``           forward/backward pairs: linear, relu, tanh
``mlp``              TwoLayerMLP and MLP built from the layers
``optim``            SGD and Adam
``train``            the training loop and its History
``metrics``          the numbers behind the figures: calibration (ECE), Gaussian
                     fits by KL, loss landscapes, moving averages
``plotting``         the figures (imported on first use: it needs matplotlib)
``experiments``      the reproduction, shared by the CLI and the notebooks
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
    gaussian,
    gradcheck,
    information,
    layers,
    losses,
    metrics,
    mlp,
    optim,
    tasks,
)
from .gaussian import GaussianClasses, two_gaussian_posterior
from .gradcheck import gradient_check, numerical_gradient
from .information import (
    bits_to_nats,
    entropy,
    expected_kl,
    gibbs_inequality,
    kl_divergence,
    nats_to_bits,
)
from .losses import (
    binary_cross_entropy_with_logits,
    binary_cross_entropy_with_logits_grad,
    cross_entropy,
    cross_entropy_and_grad,
    cross_entropy_grad,
    mse_loss,
    mse_loss_grad,
    nll_loss,
    nll_loss_grad,
)
from .mlp import MLP, TwoLayerMLP
from .optim import SGD, Adam
from .softmax import log_sigmoid, log_softmax, logsumexp, one_hot, sigmoid, softmax
from .train import History, train

_LAZY_MODULES = ("plotting", "experiments")


def __getattr__(name: str) -> Any:
    """Import the matplotlib-based modules on first use (``sn.plotting``)."""
    if name in _LAZY_MODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "MLP",
    "SGD",
    "Adam",
    "GaussianClasses",
    "History",
    "TwoLayerMLP",
    "__version__",
    "binary_cross_entropy_with_logits",
    "binary_cross_entropy_with_logits_grad",
    "bits_to_nats",
    "cross_entropy",
    "cross_entropy_and_grad",
    "cross_entropy_grad",
    "entropy",
    "expected_kl",
    "gaussian",
    "gibbs_inequality",
    "gradcheck",
    "gradient_check",
    "information",
    "kl_divergence",
    "layers",
    "log_sigmoid",
    "log_softmax",
    "logsumexp",
    "losses",
    "metrics",
    "mlp",
    "mse_loss",
    "mse_loss_grad",
    "nats_to_bits",
    "nll_loss",
    "nll_loss_grad",
    "numerical_gradient",
    "one_hot",
    "optim",
    "sigmoid",
    "softmax",
    "tasks",
    "train",
    "two_gaussian_posterior",
]
