r"""The generative model P(X, C): Gaussian classes and Bayes' rule.

To check that a classifier learns the posterior we need a world whose posterior
we know exactly.  In :class:`GaussianClasses` a class :math:`c` is drawn with
probability :math:`P(c)`, then an input from its Gaussian; Bayes' rule gives:

.. math::

    P(x, c) = P(c)\, \mathcal{N}(x;\, \mu_c, \Sigma_c), \qquad
    P(x) = \sum_{c} P(x, c), \qquad
    P(c \mid x) = \frac{P(x, c)}{P(x)} .

Far from the means the densities underflow (:math:`e^{-500000}` at
:math:`x = 10^3`), so each step is taken in log space, one method each
(``log_class_densities``, ``log_joint``, ``log_evidence``, ``log_posterior``):

.. math::

    \log P(x \mid c) &= -\tfrac12 \lVert L_c^{-1}(x - \mu_c)\rVert^2
        - \log\lvert L_c\rvert - \tfrac{D}{2}\log 2\pi , \\
    \log P(x, c) &= \log P(c) + \log P(x \mid c) , \\
    \log P(x) &= \operatorname{logsumexp}_c \log P(x, c) , \\
    \log P(c \mid x) &= \log P(x, c) - \log P(x) ,

with :math:`\lVert L_c^{-1}(x - \mu_c)\rVert` the Mahalanobis distance from
class :math:`c` (:math:`L_c` the Cholesky factor of :math:`\Sigma_c`; in one
dimension :math:`\lvert x - \mu_c\rvert / \sigma_c`).

No classifier has a lower expected cross-entropy than this posterior: that
floor, and a model's distance to it, come from
:class:`~scratchnet.bayes.GenerativeModel` (Gauss-Legendre rules over
:math:`P(X)` in one and two dimensions, Monte Carlo beyond);
``GaussianClasses.fit`` builds the model from a labelled sample.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import _quadrature as quadrature
from ._mixture import (
    check_class_counts,
    check_definite,
    check_mixture_inputs,
    check_resolved,
    class_scatter,
    class_sums,
    fit_inputs,
    mixture_parameters,
)
from ._validation import (
    as_generator,
    check_optional_string,
    check_positive_int,
    check_scalar,
)
from .bayes import GenerativeModel
from .softmax import logsumexp

__all__ = ["GaussianClasses"]


class GaussianClasses(GenerativeModel):
    r"""M classes with Gaussian class conditionals: the generative model P(X, C).

    Inputs ``x`` to every method must be finite; results are float64.

    Parameters
    ----------
    means : array_like, shape (M,) or (M, D)
        Class means :math:`\mu_c`.  Shape (M,) makes a one-dimensional task.
    scales : array_like, shape (M,)
        Positive standard deviations :math:`\sigma_c`, with means of shape (M,).
    priors : array_like, shape (M,), optional
        Class probabilities :math:`P(c)`, positive, summing to 1 (within
        1e-6; they are then renormalised).  Uniform by default.
    covariances : array_like, shape (M, D, D), keyword only
        Symmetric positive definite covariance matrices :math:`\Sigma_c`,
        with means of shape (M, D): ``GaussianClasses(means, covariances=...)``.
        Give ``scales`` or ``covariances`` (older code passes them as ``scales``).
    name : str, optional
        A label for plots and reprs.

    Attributes
    ----------
    means, scales, covariances, priors : ndarray
        The parameters as given, priors filled in; read-only (what is derived
        from them is cached).  ``covariances`` is None in one dimension; in D
        dimensions ``scales`` is the same array.
    num_classes, dim : int
        :math:`M` and :math:`D` (1 for means of shape (M,)).
    name : str or None

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> task = sn.GaussianClasses([0.0, 3.0], [1.0, 1.0])
    >>> task
    GaussianClasses(means=[0.0, 3.0], scales=[1.0, 1.0], priors=[0.5, 0.5])
    >>> task.posterior([1.5]).round(4)     # halfway: equal posteriors
    array([[0.5, 0.5]])
    >>> plane = sn.GaussianClasses([[0.0, 0.0], [2.0, 0.0]],
    ...                            covariances=[np.eye(2), np.eye(2)])
    >>> plane.posterior([[1.0, 5.0]]).round(4)
    array([[0.5, 0.5]])
    """

    def __init__(self, means: Any, scales: Any = None, priors: Any = None, *,
                 covariances: Any = None, name: str | None = None) -> None:
        means, scales, priors, chol = mixture_parameters(means, scales, priors,
                                                          covariances)
        check_optional_string(name, "name")
        m, d = chol.shape[:2]
        self.means, self.scales, self.priors = means, scales, priors
        self.covariances = scales if means.ndim == 2 else None
        self.num_classes, self.dim, self.name = m, d, name
        self._mu, self._chol = means.reshape(m, d), chol
        self._sd = chol[:, 0, 0].copy() if d == 1 else None       # 1-D fast path
        self._cum = np.cumsum(priors)[:-1]                 # inverse-CDF for c
        self._l_inv = np.linalg.inv(chol)   # for ||L_c^{-1} (x - mu_c)||, Mahalanobis
        log_det_l = np.log(np.diagonal(chol, axis1=1, axis2=2)).sum(axis=1)
        self._log_norm = -log_det_l - 0.5 * d * math.log(2.0 * math.pi)
        self._log_prior = np.log(priors)

    @classmethod
    def fit(cls, x: Any, targets: Any, *, shrinkage: float = 0.0,
            num_classes: int | None = None) -> GaussianClasses:
        r"""Gaussian classes fitted to labelled data by maximum likelihood.

        Parameters
        ----------
        x : array_like, shape (n, D) (or (n,) for one feature)
            Finite inputs.
        targets : array_like of int, shape (n,)
            Their classes, in ``[0, M)``, every class with samples.
        shrinkage : float in [0, 1], default 0.0
            :math:`\alpha`, the pull of each covariance toward a scaled identity.
        num_classes : int, optional
            :math:`M`; by default ``targets.max() + 1``.

        Returns
        -------
        GaussianClasses
            Means (M, D), covariances (M, D, D), priors (M,).

        Raises
        ------
        ValueError
            For a class with no samples (labels must be 0..M-1), with fewer
            than :math:`D + 1` (2 with shrinkage), or lying in a subspace.

        Notes
        -----
        The maximum of :math:`\sum_j \log P(c_j) + \log P(x_j \mid c_j)`:

        .. math::

            P(c) = \frac{n_c}{n}, \quad
            \mu_c = \frac{1}{n_c} \sum_{j:\, c_j = c} x_j, \quad
            S_c = \frac{1}{n_c} \sum_{j:\, c_j = c} r_j r_j^{\mathsf T},
            \quad r_j = x_j - \mu_{c_j},

        then :math:`\Sigma_c = (1 - \alpha) S_c + \alpha
        (\operatorname{tr} S_c / D) I` (the chapter :mod:`scratchnet.fitting`
        tells why).  The sums of outer products are taken class by class
        (:func:`~scratchnet._mixture.class_scatter`, one sort): about
        :math:`n D^2` operations, not :math:`M n D^2`.

        Examples
        --------
        >>> import numpy as np
        >>> import scratchnet as sn
        >>> x = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0], [2.0, 2.0],
        ...               [9.0, 9.0], [11.0, 9.0], [9.0, 11.0], [11.0, 11.0]])
        >>> task = sn.GaussianClasses.fit(x, [0, 0, 0, 0, 1, 1, 1, 1])
        >>> task.covariances[0]        # the divisor is n_c = 4
        array([[1., 0.],
               [0., 1.]])
        """
        x, targets, m = fit_inputs(x, targets, num_classes)
        alpha = check_scalar(shrinkage, "shrinkage", low=0.0, high=1.0)
        n, d = x.shape
        counts = np.bincount(targets, minlength=m).astype(np.float64)     # n_c
        check_class_counts(counts, d, alpha)
        means = class_sums(x, targets, counts) / counts[:, None]          # mu_c
        r = x - means[targets]                                            # r_j
        s = class_scatter(r, targets, counts) / counts[:, None, None]     # S_c
        s = 0.5 * (s + s.transpose(0, 2, 1))            # exactly symmetric
        scale = np.trace(s, axis1=1, axis2=2) / d                         # tr S_c / D
        covariances = (1.0 - alpha) * s + alpha * scale[:, None, None] * np.eye(d)
        check_definite(covariances, scale, alpha)
        return cls(means, covariances=covariances, priors=counts / n)

    def __repr__(self) -> str:
        name = f", name={self.name!r}" if self.name is not None else ""
        spread = "scales" if self.covariances is None else "covariances"
        return (f"GaussianClasses(means={self.means.tolist()}, {spread}="
                f"{self.scales.tolist()}, priors={self.priors.tolist()}{name})")

    def log_class_densities(self, x: Any) -> np.ndarray:
        r"""Log class-conditional densities :math:`\log P(x \mid c)`.

        Parameters
        ----------
        x : array_like, shape (n, D) (or (n,) in one dimension)

        Returns
        -------
        ndarray, shape (n, M)
            ``-inf`` only where :math:`|x - \mu_c| > 10^{154} \sigma_c`.

        Examples
        --------
        >>> import scratchnet as sn
        >>> sn.GaussianClasses([0.0], [1.0]).log_class_densities([0.0, 1e3])
        array([[-9.18938533e-01],
               [-5.00000919e+05]])
        """
        x = check_mixture_inputs(x, self.dim)
        # -||L_c^-1 (x - mu_c)||^2 / 2 + log of the normaliser, Sigma_c = L_c L_c^T
        with np.errstate(over="ignore"):  # past 1e154 sigmas: -inf, rightly
            w = np.einsum("mij,nmj->nmi", self._l_inv, x[:, None, :] - self._mu)
            return -0.5 * np.einsum("nmi,nmi->nm", w, w) + self._log_norm

    def log_joint(self, x: Any) -> np.ndarray:
        r"""Log joint densities :math:`\log P(x, c) = \log P(x \mid c) + \log P(c)`.

        Parameters
        ----------
        x : array_like, shape (n, D) (or (n,) in one dimension)

        Returns
        -------
        ndarray, shape (n, M)

        Examples
        --------
        >>> import scratchnet as sn
        >>> task = sn.GaussianClasses([0.0, 3.0], [1.0, 1.0], [0.25, 0.75])
        >>> task.log_joint([0.0]).round(4)
        array([[-2.3052, -5.7066]])
        """
        return self.log_class_densities(x) + self._log_prior

    def log_evidence(self, x: Any) -> np.ndarray:
        r"""Log input density :math:`\log P(x) = \log \sum_c P(x, c)` (by logsumexp).

        Parameters
        ----------
        x : array_like, shape (n, D) (or (n,) in one dimension)

        Returns
        -------
        ndarray, shape (n,)

        Examples
        --------
        >>> import scratchnet as sn
        >>> sn.GaussianClasses([0.0, 0.0], [1.0, 1.0]).log_evidence([0.0]).round(6)
        array([-0.918939])
        """
        return logsumexp(self.log_joint(x), axis=1)

    def density(self, x: Any) -> np.ndarray:
        r"""The input density :math:`P(x) = \sum_c P(c)\, P(x \mid c)`.

        Parameters
        ----------
        x : array_like, shape (n, D) (or (n,) in one dimension)

        Returns
        -------
        ndarray, shape (n,)
            Non-negative; underflows to 0 far from every class.

        Examples
        --------
        >>> import scratchnet as sn
        >>> sn.GaussianClasses([0.0], [1.0]).density([0.0, 50.0]).round(6)
        array([0.398942, 0.      ])
        """
        return np.exp(self.log_evidence(x))

    def log_posterior(self, x: Any) -> np.ndarray:
        r"""Log posterior :math:`\log P(c \mid x)` by Bayes' rule in log space.

        Parameters
        ----------
        x : array_like, shape (n, D) (or (n,) in one dimension)

        Returns
        -------
        ndarray, shape (n, M)
            Each row has ``logsumexp == 0`` (to rounding).

        Raises
        ------
        ValueError
            Where :math:`\log P(x) < -10^{10}` (about :math:`1.4 \cdot 10^5`
            standard deviations from every class): see Notes.

        Notes
        -----
        Bayes' rule, the log joint minus the log evidence:

        .. math::

            \log P(c \mid x) &= \log P(x, c) - \log P(x) , \\
            \log P(x) &= \operatorname{logsumexp}_j \log P(x, j) ,

        computed as written (as scikit-learn's QDA and ``GaussianMixture``
        do), so exact to an *absolute* error of a few roundings of
        :math:`\log P(x, c) \approx -\lVert x - \mu_c\rVert^2 / 2\sigma_c^2`:
        :math:`10^{-13}` at 30 standard deviations, :math:`10^{-10}` at 1,000.
        So the most probable class's log posterior is 0 where the others'
        share is below that rounding, and inputs where it would pass
        :math:`10^{-6}` are refused (:func:`~scratchnet._mixture.check_resolved`;
        :func:`~scratchnet.two_gaussians.two_gaussian_posterior` is exact at any
        distance).  See the
        conventions page.

        Examples
        --------
        >>> import scratchnet as sn
        >>> task = sn.GaussianClasses([0.0, 3.0], [1.0, 1.0])
        >>> task.log_posterior([1.5, 1e3]).round(6)   # log 1/2 at the midpoint;
        ...                                           # far right -(6x - 9)/2 and 0
        array([[-6.931470e-01, -6.931470e-01],
               [-2.995500e+03,  0.000000e+00]])
        """
        log_evidence = self.log_evidence(x)     # log P(x) = logsumexp_c log P(x, c)
        check_resolved(log_evidence, x)
        return self.log_joint(x) - log_evidence[:, None]  # log P(x, c) - log P(x)

    def posterior(self, x: Any) -> np.ndarray:
        r"""The Bayes posterior :math:`P(c \mid x) = P(x, c) / P(x)`.

        Parameters
        ----------
        x : array_like, shape (n, D) (or (n,) in one dimension)

        Returns
        -------
        ndarray, shape (n, M)
            Rows are distributions, exact even where :math:`P(x)`
            underflows (see :meth:`log_posterior`).

        Examples
        --------
        >>> import scratchnet as sn
        >>> task = sn.GaussianClasses([0.0, 3.0], [1.0, 1.0])
        >>> task.posterior([-1e3, 1.0, 1e3]).round(4)
        array([[1.    , 0.    ],
               [0.8176, 0.1824],
               [0.    , 1.    ]])
        """
        return np.exp(self.log_posterior(x))

    def sample(self, n: int, rng: Any = None) -> tuple:
        r"""Draw n pairs :math:`(x_j, c_j) \sim P(X, C)`.

        Parameters
        ----------
        n : int
            Number of samples (>= 0).
        rng : numpy.random.Generator or int seed, optional
            Source of randomness (None: a fresh, unseeded generator).

        Returns
        -------
        x : ndarray of float64, shape (n, D)
            Inputs :math:`x_j = \mu_{c_j} + L_{c_j} z_j`, ``z`` standard normal.
        c : ndarray of int64, shape (n,)
            Their classes, from the priors' inverse CDF at ``rng.random(n)``.

        Examples
        --------
        >>> import scratchnet as sn
        >>> x, c = sn.GaussianClasses([0.0, 3.0], [1.0, 1.0]).sample(1000, rng=1)
        >>> bool(abs(x[c == 1].mean() - 3.0) < 0.1)   # class 1 is N(3, 1)
        True
        """
        if type(n) is not int or n < 0:   # the isinstance checks cost ~1 us
            n = check_positive_int(n, "n", minimum=0)
        rng = as_generator(rng)
        u = rng.random(n)
        if self.num_classes == 2:
            c = (u >= self._cum[0]).astype(np.int64)
        else:
            c = np.searchsorted(self._cum, u, side="right").astype(np.int64)
        if self._sd is not None:
            x = rng.standard_normal(n)
            x *= self._sd.take(c)
            x += self._mu[:, 0].take(c)
            return x.reshape(n, 1), c
        z = rng.standard_normal((n, self.dim))
        return self._mu[c] + np.einsum("nij,nj->ni", self._chol[c], z), c

    def sample_labels(self, x: Any, rng: Any = None) -> np.ndarray:
        r"""Draw a label for each input from the posterior: :math:`c_j \sim P(C|x_j)`.

        An ideal labeller: training on inputs from any distribution with
        these labels has the same minimiser :math:`P(C \mid x)`.

        Parameters
        ----------
        x : array_like, shape (n, D) (or (n,) in one dimension)
        rng : numpy.random.Generator or int seed, optional

        Returns
        -------
        ndarray of int64, shape (n,)

        Examples
        --------
        >>> import scratchnet as sn
        >>> task = sn.GaussianClasses([0.0, 3.0], [1.0, 1.0])
        >>> task.sample_labels([-10.0, 10.0], rng=0)
        array([0, 1])
        """
        post = self.posterior(x)
        u = as_generator(rng).random(post.shape[0])
        below = np.cumsum(post[:, :-1], axis=1) <= u[:, None]
        return below.sum(axis=1).astype(np.int64)

    def support(self, mass: float = 0.999) -> tuple:
        r"""Where the inputs live: an interval (box) holding ``mass`` of :math:`P(X)`.

        Parameters
        ----------
        mass : float, default 0.999
            In (0, 1).

        Returns
        -------
        (low, high)
            One dimension: floats, the :math:`(1 \mp \text{mass})/2` quantiles
            of :math:`P(X)`, found by bisection on the mixture's tails.  D
            dimensions: arrays of shape (D,), per-axis central intervals of
            mass :math:`1 - (1 - \text{mass})/D`, so that the box holds at
            least ``mass`` (union bound).

        Examples
        --------
        >>> import scratchnet as sn
        >>> low, high = sn.GaussianClasses([0.0], [1.0]).support(0.95)
        >>> print(f"{low:.4f} {high:.4f}")
        -1.9600 1.9600
        """
        mass = check_scalar(mass, "mass", low=0.0, high=1.0,
                            low_inclusive=False, high_inclusive=False)
        tail = 0.5 * (1.0 - mass) / self.dim
        mixture = (self._mu, self._chol, self.priors)
        low = quadrature.mixture_quantile(*mixture, tail, upper=False)
        high = quadrature.mixture_quantile(*mixture, tail, upper=True)
        if self.dim == 1:
            return float(low[0]), float(high[0])
        return low, high

    def decision_boundaries(self) -> np.ndarray:
        r"""The inputs where two one-dimensional classes are equally probable.

        Only for one-dimensional tasks with two classes.

        Returns
        -------
        ndarray, shape (k,) with k in {0, 1, 2}
            The sorted roots of :math:`\log P(x, c_0) = \log P(x, c_1)`, a
            quadratic equation (linear for equal standard deviations),
            computed without cancellation, as :math:`t / a` and :math:`e / t`.

        Examples
        --------
        >>> import scratchnet as sn
        >>> sn.GaussianClasses([0.0, 3.0], [2.0, 1.0]).decision_boundaries().round(3)
        array([1.582, 6.418])
        """
        if self.dim != 1 or self.num_classes != 2:
            raise ValueError("decision_boundaries needs a one-dimensional task with "
                             f"two classes; got dim={self.dim}, "
                             f"num_classes={self.num_classes}")
        roots = quadrature.normal_crossings(self._log_prior, self._mu[:, 0], self._sd)
        return np.unique(roots[np.isfinite(roots)])

    def _expectation_rule(self) -> tuple | None:
        """GenerativeModel's hook: Gauss-Legendre nodes over P(X); None (Monte Carlo) if
        D > 2 or too many."""
        return quadrature.mixture_rule(self._mu, self._chol, self.density)

    def _kinked_expectation_rule(self) -> tuple | None:
        """The same, with 64 times narrower panels in 1-D (for a ReLU model's kinks)."""
        return quadrature.mixture_rule(self._mu, self._chol, self.density, kinked=True)

    def _exact_accuracy(self) -> float | None:
        """The Bayes accuracy from normal CDFs between crossings; None if D > 2."""
        return quadrature.mixture_accuracy(self._mu, self._chol, self.priors)
