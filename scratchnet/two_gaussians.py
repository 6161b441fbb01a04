r"""The closed-form posterior of two one-dimensional Gaussian classes.

With two classes on a line, Bayes' rule needs no logsumexp: the log odds
:math:`\log P(c_1 \mid x) - \log P(c_2 \mid x)` is a quadratic in :math:`x`,
and the posterior is its sigmoid.  :func:`two_gaussian_posterior` writes it
out, the formula the notebooks check a trained network against, and the
reference :class:`~scratchnet.gaussian.GaussianClasses` agrees with in one
dimension.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._mixture import check_two_gaussians
from ._validation import as_float_array
from .softmax import sigmoid

__all__ = ["two_gaussian_posterior"]


def two_gaussian_posterior(x: Any, mu1: float, sigma1: float, mu2: float,
                           sigma2: float, prior1: float = 0.5) -> np.ndarray:
    r"""Closed-form posterior :math:`P(c_1 \mid x)` of two 1-D Gaussian classes.

    Parameters
    ----------
    x : array_like
        Finite inputs, any shape.
    mu1, sigma1 : float
        Mean and (positive) standard deviation of class :math:`c_1`.
    mu2, sigma2 : float
        The same for class :math:`c_2`.
    prior1 : float, default 0.5
        :math:`P(c_1)` in (0, 1); :math:`P(c_2) = 1 - P(c_1)`.

    Returns
    -------
    ndarray (or scalar for scalar input), same shape as ``x``
        :math:`P(c_1 \mid x)`; :math:`P(c_2 \mid x)` is one minus it.
        float32 input gives float32.

    Notes
    -----
    Bayes' rule with :math:`z_i = (x - \mu_i)/\sigma_i` gives a sigmoid of a
    quadratic in :math:`x`:

    .. math::

        \begin{aligned}
        P(c_1 \mid x) &= \frac{1}{1 + \frac{\sigma_1}{\sigma_2}
            \frac{P(c_2)}{P(c_1)} \exp\Big(\frac{\sigma_2^2 (x - \mu_1)^2
            - \sigma_1^2 (x - \mu_2)^2}{2 \sigma_1^2 \sigma_2^2}\Big)}
        = \sigma(-r), \\
        r &= \log\frac{\sigma_1 P(c_2)}{\sigma_2 P(c_1)}
            + \tfrac12 (z_1 - z_2)(z_1 + z_2) .
        \end{aligned}

    (A version in circulation drops the exponential and swaps the squares:
    it is not a probability.)  The factors :math:`z_1 \pm z_2` are linear in
    :math:`x`, formed on :math:`x` scaled by a power of two: no square of a
    large :math:`x` overflows or cancels.

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> x = np.array([0.0, 1.5, 3.0])
    >>> sn.two_gaussian_posterior(x, 0.0, 1.0, 3.0, 1.0).round(6)
    array([0.989013, 0.5     , 0.010987])
    >>> (1 / (1 + np.exp((6 * x - 9) / 2))).round(6)      # the closed form
    array([0.989013, 0.5     , 0.010987])
    """
    x, (mu1, sigma1, mu2, sigma2, prior1) = _check_arguments(x, mu1, sigma1, mu2,
                                                             sigma2, prior1)
    # z1 - z2 and z1 + z2 (z_i = (x - mu_i) / sigma_i) as lines in x: with equal
    # sigmas z1 - z2 is the exact constant, however large x is
    with np.errstate(over="ignore"):  # |r| past 1.8e308 is inf: P is 0 or 1 there
        diff = (1 / sigma1 - 1 / sigma2) * x + (mu2 / sigma2 - mu1 / sigma1)
        total = (1 / sigma1 + 1 / sigma2) * x - (mu1 / sigma1 + mu2 / sigma2)
        r = 0.5 * diff * total  # (z1^2 - z2^2) / 2
    r += math.log(sigma1) - math.log(sigma2) + math.log((1 - prior1) / prior1)
    return sigmoid(-r)


def _check_arguments(x: Any, *params: Any) -> tuple:
    """``(x, params)`` checked: finite inputs, the two classes and the prior."""
    return as_float_array(x, "x", allow_inf=False), check_two_gaussians(*params)
