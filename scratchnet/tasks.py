r"""The three experimental settings: two 1-D Gaussian classes with equal priors.

Each task draws a class :math:`c \in \{c_1, c_2\}` with probability 1/2 and an
input :math:`x \sim \mathcal{N}(\mu_c, \sigma_c^2)`.  Its Bayes posterior is a
sigmoid of a quadratic in :math:`x` (see
:func:`scratchnet.two_gaussian_posterior`); a small MLP trained with
cross-entropy and mini-batch SGD should converge to it.  How fast it does
depends on where the posterior changes and how many inputs land there.
(Classes are numbered 0 and 1 in code: :math:`c_1` is class 0.)

====================  ==============  ==============  =========  ========
name                  sigma1, mu1     sigma2, mu2     H(C|X)     Bayes
                                                      (nats)     accuracy
====================  ==============  ==============  =========  ========
``separated``         1, 0            1, 3            0.166      93.32%
``unequal-variance``  2, 0            1, 1            0.565      69.50%
``sparse-tail``       2, 0            1, 3            0.342      85.39%
====================  ==============  ==============  =========  ========

``separated``
    Equal variances, so the log posterior ratio is *linear*:
    :math:`P(c_1 \mid x) = 1 / (1 + e^{(6x - 9)/2})`, one crossing at
    :math:`x = 1.5`, right where the data are.  The trained network is
    nearly indistinguishable from the posterior after about 100 batches.
``unequal-variance``
    :math:`c_1` is wide, :math:`c_2` narrow and close to it, so the log
    ratio is a parabola with two crossings, at :math:`x \approx -0.181` and
    :math:`x \approx 2.848`: :math:`c_1` wins on the left, :math:`c_2` past
    about 0, and :math:`c_1` again past about 3, because the narrow class's
    density falls faster.  Gaps are visible at 100 batches and mostly
    gone by 1000.
``sparse-tail``
    The same wide :math:`c_1` with :math:`c_2` moved to 3: the first crossing
    (:math:`x \approx 1.582`) lies among plenty of data and is learned by
    about 1000 batches.  The second, at :math:`x \approx 6.418`, sits where
    both densities are tiny (:math:`P(x) \approx 10^{-3}`), so the loss
    barely weighs errors there and the network still gets it wrong after
    10,000 batches: the loss minimiser is the posterior only where
    :math:`P(x) > 0` matters.

The crossings are ``task.decision_boundaries()``.

Examples
--------
>>> import scratchnet as sn
>>> task = sn.tasks.get_task("sparse-tail")
>>> task.decision_boundaries().round(3)
array([1.582, 6.418])
"""

from __future__ import annotations

from typing import Callable

from ._validation import describe
from .gaussian import GaussianClasses

__all__ = ["TASKS", "get_task", "separated", "sparse_tail", "unequal_variance"]


def _two_classes(mu1: float, sigma1: float, mu2: float, sigma2: float,
                 name: str) -> GaussianClasses:
    """Two 1-D Gaussian classes with equal priors."""
    return GaussianClasses([mu1, mu2], [sigma1, sigma2], [0.5, 0.5], name=name)


def separated() -> GaussianClasses:
    r"""The separated task: :math:`\mathcal{N}(0, 1)` vs :math:`\mathcal{N}(3, 1)`.

    Returns
    -------
    GaussianClasses
        One-dimensional, two classes, equal priors, ``name="separated"``.

    Examples
    --------
    >>> import scratchnet as sn
    >>> task = sn.tasks.separated()
    >>> print(f"{task.bayes_loss():.3f} {task.bayes_accuracy():.4f}")
    0.166 0.9332
    """
    return _two_classes(0.0, 1.0, 3.0, 1.0, "separated")


def unequal_variance() -> GaussianClasses:
    r"""Unequal variance: :math:`\mathcal{N}(0, 4)` against :math:`\mathcal{N}(1, 1)`.

    Returns
    -------
    GaussianClasses
        One-dimensional, two classes, equal priors, ``name="unequal-variance"``.

    Examples
    --------
    >>> import scratchnet as sn
    >>> task = sn.tasks.unequal_variance()
    >>> print(f"{task.bayes_loss():.3f} {task.bayes_accuracy():.4f}")
    0.565 0.6950
    """
    return _two_classes(0.0, 2.0, 1.0, 1.0, "unequal-variance")


def sparse_tail() -> GaussianClasses:
    r"""The sparse-tail task: :math:`\mathcal{N}(0, 4)` vs :math:`\mathcal{N}(3, 1)`.

    Returns
    -------
    GaussianClasses
        One-dimensional, two classes, equal priors, ``name="sparse-tail"``.

    Examples
    --------
    >>> import scratchnet as sn
    >>> task = sn.tasks.sparse_tail()
    >>> print(f"{task.bayes_loss():.3f} {task.bayes_accuracy():.4f}")
    0.342 0.8539
    """
    return _two_classes(0.0, 2.0, 3.0, 1.0, "sparse-tail")


#: The preset tasks by name: ``"separated"``, ``"unequal-variance"`` and
#: ``"sparse-tail"``, each mapped to the function that builds it (a fresh
#: :class:`~scratchnet.gaussian.GaussianClasses` per call; see
#: :func:`~scratchnet.tasks.get_task`).  The command line's ``--tasks`` takes
#: these names.
TASKS: dict[str, Callable[[], GaussianClasses]] = {
    "separated": separated,
    "unequal-variance": unequal_variance,
    "sparse-tail": sparse_tail,
}


def get_task(name: str) -> GaussianClasses:
    """Build one of the preset tasks by name.

    Parameters
    ----------
    name : str
        One of ``"separated"``, ``"unequal-variance"``, ``"sparse-tail"``
        (underscores are accepted for hyphens).

    Returns
    -------
    GaussianClasses
        A fresh task.

    Examples
    --------
    >>> import scratchnet as sn
    >>> sn.tasks.get_task("unequal_variance").name
    'unequal-variance'
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a string, one of "
                        f"{', '.join(repr(k) for k in TASKS)}; got {describe(name)}")
    key = name.replace("_", "-")
    if key not in TASKS:
        raise ValueError(f"unknown task {name!r}; expected one of "
                         f"{', '.join(repr(k) for k in TASKS)}")
    return TASKS[key]()
