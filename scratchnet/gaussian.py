r"""The generative model P(X, C): Gaussian classes, their posterior and Bayes loss.

To check that a classifier learns the posterior we need a world whose
posterior we know exactly.  :class:`GaussianClasses` is that world: a class
:math:`c \in \{0, \dots, M-1\}` is drawn with prior probability
:math:`P(c)`, then an input from that class's Gaussian,

.. math::

    P(x, c) = P(c)\, \mathcal{N}(x;\, \mu_c, \Sigma_c), \qquad
    P(x) = \sum_{c} P(x, c), \qquad
    P(c \mid x) = \frac{P(x, c)}{P(x)} \quad \text{(Bayes' rule)} .

An ideal observer who knows :math:`P(X, C)` predicts :math:`P(C \mid x)`.  No
model can reach a lower expected cross-entropy: the population loss of a
model :math:`q` splits as

.. math::

    \underbrace{\mathbb{E}_{(x, c)}\big[-\log q(c \mid x)\big]}_{\text{population loss}}
    = \underbrace{\mathbb{E}_{x}\, H\big(P(C \mid x)\big)}_{H(C \mid X)
        \text{ (Bayes loss)}}
    + \underbrace{\mathbb{E}_{x}\,
        \mathrm{KL}\big(P(C \mid x) \,\|\, q(C \mid x)\big)}_{\ge 0} ,

and the methods :meth:`~GaussianClasses.population_loss`,
:meth:`~GaussianClasses.bayes_loss` and :meth:`~GaussianClasses.expected_kl`
compute the three terms separately, so the identity can be checked.

**Numerics.**  Every density is handled as a log-density,
:math:`\log P(x, c) = -\tfrac12 \lVert L_c^{-1}(x - \mu_c)\rVert^2 - \log\lvert
L_c\rvert - \tfrac{D}{2}\log 2\pi + \log P(c)` with :math:`L_c` the Cholesky
factor of :math:`\Sigma_c` (in one dimension :math:`L_c = \sigma_c`).  The
posterior only depends on *differences* of log-joints,
:math:`\log P(c \mid x) = -\operatorname{logsumexp}_j \big(\log P(x, j) - \log
P(x, c)\big)`, and each difference of squares is computed as a product
:math:`\lVert w_j\rVert^2 - \lVert w_c\rVert^2 = (w_j - w_c) \cdot (w_j + w_c)`
of two terms linear in :math:`x`.  So the posterior is exact even where every
density underflows to 0 (:math:`x = 10^3`) and where the squares themselves
overflow (:math:`x = 10^{300}`), without a warning.

**Integrals.**  Expectations over :math:`x \sim P(X)` use composite
Gauss-Legendre quadrature in one and two dimensions (8 nodes per panel,
panels no wider than one standard deviation of the classes present there,
over :math:`\pm 10` standard deviations around every class), accurate to
better than :math:`10^{-10}` for smooth integrands, and Monte Carlo with a
reported standard error in three or more dimensions.  The nodes and the
posterior there are computed once and cached, since training code calls
:meth:`~GaussianClasses.expected_kl` at every snapshot.  The Bayes accuracy
integrates a function with kinks (a maximum), so in one and two dimensions
it is computed from normal CDFs between the decision boundaries instead.
"""

from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple

import numpy as np

from ._validation import (
    _where,
    as_float_array,
    as_generator,
    check_distribution,
    check_positive_int,
    check_scalar,
    unwrap,
)
from .information import _sum_over_support
from .softmax import logsumexp, sigmoid

__all__ = ["GaussianClasses", "two_gaussian_posterior"]

_LOG_2PI = math.log(2.0 * math.pi)
_TAIL_SDS = 10.0        # quadrature range: this many standard deviations per class
_NODES_PER_PANEL = 8    # Gauss-Legendre nodes in each panel
_MC_SAMPLES = 100_000   # default Monte Carlo sample size when D >= 3
_MAX_NODES = 250_000    # larger quadrature grids fall back to Monte Carlo
_erfc = np.frompyfunc(math.erfc, 1, 1)  # NumPy has no erf; math.erfc, elementwise


def _pow2_scale(x: np.ndarray) -> np.ndarray:
    """A power of two s >= max(1, |x| / 2) for each row of ``x`` (n, D); shape (n,).

    Dividing by a power of two is exact, so ``(x / s)`` loses nothing and a
    product rescaled by ``s * s`` at the end rounds exactly as the unscaled
    one would, except that it cannot overflow on the way.
    """
    _, exponent = np.frexp(np.maximum(np.abs(x).max(axis=-1), 1.0))
    return np.ldexp(1.0, np.minimum(exponent, 1023))   # 2**1024 would overflow


def _panel_edges(centre: np.ndarray, reach: np.ndarray, width: np.ndarray
                 ) -> np.ndarray:
    """Edges covering each range centre_c +- reach_c with panels <= width_c there.

    Where ranges overlap the finer grid wins, so classes of very different
    scales do not multiply the number of panels.
    """
    order = np.lexsort((np.arange(len(width)), width))      # finest first
    extent = np.ceil(reach / width)                          # panels per side
    edges = []
    for rank, c in enumerate(order):
        grid = centre[c] + width[c] * np.arange(-extent[c], extent[c] + 1)
        finer = order[:rank]
        covered = np.abs(grid[:, None] - centre[finer]) < (extent * width)[finer]
        edges.append(grid[~covered.any(axis=1)])
    return np.unique(np.concatenate(edges))


def _gauss_legendre(edges: np.ndarray) -> tuple:
    """Composite Gauss-Legendre nodes and weights on the panels between ``edges``."""
    t, w = np.polynomial.legendre.leggauss(_NODES_PER_PANEL)
    half = 0.5 * np.diff(edges)[:, None]
    nodes = 0.5 * (edges[1:] + edges[:-1])[:, None] + half * t
    return nodes.ravel(), (half * w).ravel()


class _Rule(NamedTuple):
    """Nodes x_k (K, D) and weights W_k (K,) with sum_k W_k f(x_k) ~ E_{P(X)} f."""

    x: np.ndarray
    weights: np.ndarray
    log_posterior: np.ndarray  # (K, M) at the nodes
    posterior: np.ndarray      # (K, M)
    monte_carlo: bool


class GaussianClasses:
    r"""M classes with Gaussian class conditionals: the generative model P(X, C).

    Parameters
    ----------
    means : array_like, shape (M,) or (M, D)
        Class means :math:`\mu_c`.  Shape (M,) makes a one-dimensional task.
    scales : array_like, shape (M,) or (M, D, D)
        Standard deviations :math:`\sigma_c` (shape (M,), with means of shape
        (M,)) or covariance matrices :math:`\Sigma_c` (shape (M, D, D), with
        means of shape (M, D)): positive, respectively symmetric positive
        definite.
    priors : array_like, shape (M,), optional
        Class probabilities :math:`P(c)`, positive, summing to 1 (within
        1e-6; they are then renormalised).  Uniform by default.
    name : str, optional
        A label for plots and reprs.

    Attributes
    ----------
    means, scales, priors : ndarray
        The (read-only) parameters as given, priors filled in.
    num_classes : int
        :math:`M`.
    dim : int
        :math:`D`, the number of input features (1 for shape (M,) means).
    name : str or None

    Notes
    -----
    Every method taking inputs ``x`` expects shape (n, D); a one-dimensional
    task also accepts shape (n,).  Inputs must be finite (no NaN, no inf);
    results are float64.  The parameters are fixed at construction (the
    arrays are read-only) because the constants, quadrature nodes and the
    posterior at them are precomputed and cached.

    Examples
    --------
    >>> import scratchnet as sn
    >>> task = sn.GaussianClasses([0.0, 3.0], [1.0, 1.0])
    >>> task
    GaussianClasses(means=[0.0, 3.0], scales=[1.0, 1.0], priors=[0.5, 0.5])
    >>> task.posterior([1.5]).round(4)     # halfway: equal posteriors
    array([[0.5, 0.5]])
    >>> x, c = task.sample(4, rng=0)
    >>> x.shape, c.dtype
    ((4, 1), dtype('int64'))
    >>> print(f"{task.bayes_loss():.4f}")
    0.1664
    """

    def __init__(
        self, means: Any, scales: Any, priors: Any = None, *, name: str | None = None
    ) -> None:
        means = as_float_array(means, "means", allow_inf=False).astype(np.float64)
        scales = as_float_array(scales, "scales", allow_inf=False).astype(np.float64)
        if means.ndim not in (1, 2) or means.size == 0:
            raise ValueError("means must have shape (M,) or (M, D) with M, D >= 1; "
                             f"got shape {means.shape}")
        m = means.shape[0]
        d = 1 if means.ndim == 1 else means.shape[1]
        if means.ndim == 1:
            if scales.shape != (m,):
                raise ValueError(
                    f"scales must have shape (M,) = ({m},), one standard deviation "
                    f"per class, when means has shape {means.shape}; "
                    f"got shape {scales.shape}"
                )
            bad = ~(scales > 0)
            if bad.any():
                raise ValueError(f"scales must be positive standard deviations; got "
                                 f"{scales[bad][0]:g}{_where(bad)}")
            chol = scales.reshape(m, 1, 1)
        else:
            chol = _cholesky(scales, m, d)
        if priors is None:
            priors = np.full(m, 1.0 / m)
        priors = _check_priors(priors, m)
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name must be a string or None; got {name!r}")
        for arr in (means, scales, priors):
            arr.flags.writeable = False
        self.means, self.scales, self.priors = means, scales, priors
        self.num_classes, self.dim, self.name = m, d, name
        self._mu = means.reshape(m, d)
        self._chol = chol
        self._sd = chol[:, 0, 0].copy() if d == 1 else None       # 1-D fast path
        self._cum = np.cumsum(priors)[:-1]                 # inverse-CDF for c
        # w_c(x) = A_c x - b_c with A_c = L_c^{-1}, so ||w_c||^2 = Mahalanobis^2.
        self._a = np.linalg.inv(chol)
        self._b = np.einsum("mij,mj->mi", self._a, self._mu)
        log_det_l = np.log(np.diagonal(chol, axis1=1, axis2=2)).sum(axis=1)
        self._log_norm = -log_det_l - 0.5 * d * _LOG_2PI
        c = np.log(priors) + self._log_norm
        # Pairwise terms [j, k] for log P(x, j) - log P(x, k).
        self._da, self._sa = _pairs(self._a)
        self._db, self._sb = _pairs(self._b)
        self._dc = c[:, None] - c[None, :]
        self._quadrature: _Rule | None = None
        self._axes: list | None = None
        self._accuracy: float | None = None
        self._mc_cache: dict = {}

    def __repr__(self) -> str:
        name = f", name={self.name!r}" if self.name is not None else ""
        return (f"GaussianClasses(means={self.means.tolist()}, "
                f"scales={self.scales.tolist()}, priors={self.priors.tolist()}{name})")

    # -- densities and Bayes' rule --------------------------------------------

    def _inputs(self, x: Any) -> np.ndarray:
        """Validate inputs and return them as float64 of shape (n, D)."""
        x = as_float_array(x, "x", allow_inf=False).astype(np.float64, copy=False)
        if x.ndim == 1 and self.dim == 1:
            return x.reshape(-1, 1)
        if x.ndim != 2 or x.shape[1] != self.dim:
            extra = " or (n,)" if self.dim == 1 else ""
            raise ValueError(f"x must have shape (n, {self.dim}){extra}, one row of "
                             f"{self.dim} feature(s) per input; got shape {x.shape}")
        return x

    def log_class_densities(self, x: Any) -> np.ndarray:
        r"""Log class-conditional densities :math:`\log P(x \mid c)`.

        Parameters
        ----------
        x : array_like, shape (n, D) (or (n,) in one dimension)

        Returns
        -------
        ndarray, shape (n, M)
            :math:`-\tfrac12 \lVert L_c^{-1}(x - \mu_c) \rVert^2 - \log|L_c|
            - \tfrac{D}{2} \log 2\pi`; ``-inf`` only where the squared
            distance overflows float64 (:math:`|x - \mu_c| > 10^{154}
            \sigma_c`).

        Examples
        --------
        >>> import scratchnet as sn
        >>> task = sn.GaussianClasses([0.0], [1.0])
        >>> task.log_class_densities([0.0, 1e3])   # no underflow in log space
        array([[-9.18938533e-01],
               [-5.00000919e+05]])
        """
        x = self._inputs(x)
        with np.errstate(over="ignore"):
            if self._sd is not None:
                w = (x - self._mu[:, 0]) / self._sd
                sq = w * w
            else:
                w = np.einsum("mij,nmj->nmi", self._a, x[:, None, :] - self._mu)
                sq = np.einsum("nmi,nmi->nm", w, w)
        return -0.5 * sq + self._log_norm

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
        return self.log_class_densities(x) + np.log(self.priors)

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
        >>> task = sn.GaussianClasses([0.0, 0.0], [1.0, 1.0])
        >>> task.log_evidence([0.0]).round(6)   # log N(0; 0, 1)
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
            Each row has ``logsumexp == 0`` (to rounding); entries are
            finite unless a posterior is below about :math:`e^{-10^{308}}`.

        Notes
        -----
        With :math:`d_{jc}(x) = \log P(x, j) - \log P(x, c)`,

        .. math::

            \log P(c \mid x) = -\log \sum_j e^{d_{jc}(x)}, \qquad
            d_{jc} = -\tfrac12 (w_j - w_c) \cdot (w_j + w_c)
                + \log\frac{P(j)\,|L_c|}{P(c)\,|L_j|},

        where :math:`w_c = L_c^{-1} x - L_c^{-1}\mu_c`.  Both factors are
        linear in :math:`x` (for classes with equal covariances the first
        one is a constant), so :math:`d_{jc}` never suffers the cancellation
        of two huge squares, and it is evaluated on :math:`x / s` with
        :math:`s` a power of two, so it cannot overflow on the way: the
        result is exact to rounding for every finite :math:`x`, including
        :math:`|x| = 10^{300}`.

        Examples
        --------
        >>> import scratchnet as sn
        >>> task = sn.GaussianClasses([0.0, 3.0], [1.0, 1.0])
        >>> task.log_posterior([1e3])        # exactly -(6x - 9)/2 and 0
        array([[-2995.5,     0. ]])
        """
        x = self._inputs(x)
        s = _pow2_scale(x)
        y = x / s[:, None]
        inv_s = (1.0 / s)[:, None, None, None]
        u = np.einsum("jkab,nb->njka", self._da, y) - self._db * inv_s
        v = np.einsum("jkab,nb->njka", self._sa, y) - self._sb * inv_s
        with np.errstate(over="ignore"):
            d = np.einsum("njka,njka->njk", u, v) * s[:, None, None]
            d *= -0.5 * s[:, None, None]
        d += self._dc
        return -logsumexp(d, axis=1)

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

    # -- sampling ---------------------------------------------------------------

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
            Inputs (D = 1 for a one-dimensional task).
        c : ndarray of int64, shape (n,)
            Their classes.

        Notes
        -----
        First :math:`c_j` is drawn from the priors by inverting their CDF at
        ``rng.random(n)``, then :math:`x_j = \mu_{c_j} + L_{c_j} z_j` with
        ``z = rng.standard_normal``.  Everything is precomputed, so one call
        with n = 64 costs a few microseconds.

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

    # -- integrals over P(X) ------------------------------------------------------

    def _rule(self, n_samples: int, rng: Any) -> _Rule:
        """The cached quadrature rule (D <= 2) or a Monte Carlo sample (D >= 3).

        Monte Carlo also replaces a quadrature grid that would exceed
        ``_MAX_NODES`` (a 2-D task with extremely elongated covariances).
        """
        if self._quadrature is None and self.dim <= 2:
            if math.prod(len(a[0]) for a in self._axis_rules()) <= _MAX_NODES:
                self._quadrature = self._make_rule(self._quadrature_nodes(), None)
        if self._quadrature is not None:
            return self._quadrature
        n_samples = check_positive_int(n_samples, "n_samples", minimum=2)
        if rng is not None:
            return self._make_rule(self.sample(n_samples, rng)[0], n_samples)
        if n_samples not in self._mc_cache:
            x = self.sample(n_samples, 0)[0]
            self._mc_cache[n_samples] = self._make_rule(x, n_samples)
        return self._mc_cache[n_samples]

    def _axis_rules(self) -> list:
        """Composite Gauss-Legendre nodes and weights along each axis (cached)."""
        if self._axes is None:
            cov = self._chol @ self._chol.transpose(0, 2, 1)
            sd_axes = np.sqrt(np.diagonal(cov, axis1=1, axis2=2))      # (M, D)
            narrow = np.sqrt(np.linalg.eigvalsh(cov).min(axis=1))      # (M,)
            # Panels no wider than a class's narrowest direction, nor than (a
            # multiple of) the sharpest posterior transition, ~ sd^2 / spread.
            spread = max(float(np.ptp(self._mu, axis=0).max()), 1e-300)
            width = narrow * np.minimum(1.0, 6.0 * narrow / spread)
            self._axes = [
                _gauss_legendre(_panel_edges(mu, _TAIL_SDS * sd, width))
                for mu, sd in zip(self._mu.T, sd_axes.T)
            ]
        return self._axes

    def _quadrature_nodes(self) -> tuple:
        """Tensor-product nodes (K, D) and weights (K,) for D <= 2."""
        axes = self._axis_rules()
        x = np.stack(np.meshgrid(*[a[0] for a in axes], indexing="ij"), axis=-1)
        w = np.prod(np.meshgrid(*[a[1] for a in axes], indexing="ij"), axis=0)
        return x.reshape(-1, self.dim), w.ravel()

    def _make_rule(self, nodes: Any, n_samples: int | None) -> _Rule:
        if n_samples is None:   # quadrature: fold P(x_k) into the weights
            x, w = nodes
            weights = w * self.density(x)
            keep = weights > 1e-30 * weights.max()   # nodes that cannot matter
            x, weights = x[keep], weights[keep]
        else:
            x, weights = nodes, np.full(n_samples, 1.0 / n_samples)
        log_post = self.log_posterior(x)
        rule = _Rule(x, weights, log_post, np.exp(log_post), n_samples is not None)
        for arr in rule[:4]:
            arr.flags.writeable = False    # cached: models see x, must not edit it
        return rule

    def _expect(self, rule: _Rule, values: np.ndarray, return_stderr: bool) -> Any:
        """sum_k W_k values_k, and its Monte Carlo standard error if asked."""
        estimate = float(rule.weights @ values)
        if not return_stderr:
            return estimate
        stderr = 0.0
        if rule.monte_carlo:
            stderr = float(values.std(ddof=1) / math.sqrt(values.size))
        return estimate, stderr

    def _model_log_probs(self, predict_proba: Callable, rule: _Rule) -> np.ndarray:
        """log q(c | x_k) at the rule's nodes, after checking the model's output."""
        if not callable(predict_proba):
            raise TypeError(f"predict_proba must be callable (x -> probabilities); "
                            f"got {type(predict_proba).__name__}")
        q = as_float_array(predict_proba(rule.x), "predict_proba(x)")
        expected = rule.posterior.shape
        if q.shape != expected:
            raise ValueError(f"predict_proba(x) must return probabilities of shape "
                             f"(n, M) = {expected} for x of shape {rule.x.shape}; "
                             f"got shape {q.shape}")
        check_distribution(q, "predict_proba(x)", axis=1)
        with np.errstate(divide="ignore"):
            return np.log(q.astype(np.float64, copy=False))

    def bayes_loss(
        self, *, return_stderr: bool = False, n_samples: int = _MC_SAMPLES,
        rng: Any = None,
    ) -> float | tuple:
        r"""The Bayes loss :math:`H(C \mid X) = \mathbb{E}_x H(P(C \mid x))`, in nats.

        The smallest expected cross-entropy any model can reach.

        Parameters
        ----------
        return_stderr : bool, default False
            Also return the standard error of the estimate.
        n_samples : int, default 100000
            Monte Carlo sample size, used only when D >= 3 (or for a 2-D task
            whose quadrature grid would exceed 250,000 nodes, e.g. with
            correlations above 0.999).
        rng : numpy.random.Generator or int seed, optional
            Used only when D >= 3; None uses a fixed seed (0) and caches the
            sample, so repeated calls (and different models) see the same
            inputs.

        Returns
        -------
        float, or (float, float) if ``return_stderr``
            The estimate and, if asked, its Monte Carlo standard error
            (0.0 for the quadrature used when D <= 2, whose error is below
            1e-10 and not random).

        Notes
        -----
        .. math::

            H(C \mid X) = -\int \sum_c P(x, c) \log P(c \mid x)\, dx
            \approx -\sum_k W_k \sum_c P(c \mid x_k) \log P(c \mid x_k),

        with :math:`0 \log 0 = 0`.  It equals :math:`H(C)` (the prior's
        entropy) when all classes coincide and tends to 0 as they separate.

        Examples
        --------
        >>> import scratchnet as sn
        >>> print(f"{sn.GaussianClasses([0.0, 0.0], [1.0, 1.0]).bayes_loss():.4f}")
        0.6931
        """
        rule = self._rule(n_samples, rng)
        values = -_sum_over_support(rule.posterior, rule.log_posterior, axis=1)[:, 0]
        return self._expect(rule, values, return_stderr)

    def bayes_accuracy(
        self, *, return_stderr: bool = False, n_samples: int = _MC_SAMPLES,
        rng: Any = None,
    ) -> float | tuple:
        r"""Accuracy of the Bayes classifier, :math:`\mathbb{E}_x \max_c P(c \mid x)`.

        Parameters
        ----------
        return_stderr, n_samples, rng
            As in :meth:`bayes_loss`.

        Returns
        -------
        float, or (float, float) if ``return_stderr``
            A probability in :math:`[1/M, 1]`.

        Notes
        -----
        :math:`\int \max_c P(x, c)\, dx`.  In one dimension the line splits
        at the crossings of the weighted class densities into intervals
        with one winner each, and the integral is a sum of normal CDF
        differences (exact); in two dimensions the same is done along
        :math:`x_2` at each quadrature node :math:`x_1`.  Monte Carlo for
        D >= 3.

        Examples
        --------
        >>> import scratchnet as sn
        >>> print(f"{sn.GaussianClasses([0.0, 3.0], [1.0, 1.0]).bayes_accuracy():.4f}")
        0.9332
        """
        if self.dim > 2:
            rule = self._rule(n_samples, rng)
            return self._expect(rule, rule.posterior.max(axis=1), return_stderr)
        if self._accuracy is None:
            self._accuracy = self._exact_accuracy()
        return (self._accuracy, 0.0) if return_stderr else self._accuracy

    def _exact_accuracy(self) -> float:
        """Bayes accuracy without quadrature across the decision boundaries.

        In 1-D, sum over the intervals between crossings of the winning
        class's probability mass there (normal CDFs).  In 2-D the same along
        x2 for each Gauss-Legendre node x1 (the slice of class c is
        N(x1; mu_c1, L_11^2) times N(x2; conditional mean, L_22^2)).
        """
        log_w = np.log(self.priors)[None, :]
        mean, sd = self._mu[None, :, 0], self._chol[None, :, 0, 0]
        if self.dim == 1:
            return float(_winner_mass(log_w, mean, sd)[0])
        x1, g = self._axis_rules()[0]
        l11, l21, l22 = self._chol[:, 0, 0], self._chol[:, 1, 0], self._chol[:, 1, 1]
        z1 = (x1[:, None] - mean) / sd                                 # (K, M)
        log_w = log_w - np.log(l11) - 0.5 * _LOG_2PI - 0.5 * z1**2
        cond_mean = self._mu[:, 1] + l21 * z1
        return float(g @ _winner_mass(log_w, cond_mean, np.broadcast_to(l22, z1.shape)))

    def expected_kl(
        self, predict_proba: Callable, *, return_stderr: bool = False,
        n_samples: int = _MC_SAMPLES, rng: Any = None,
    ) -> float | tuple:
        r"""How far a model is from the posterior: the expected KL divergence.

        Parameters
        ----------
        predict_proba : callable
            Maps inputs of shape (n, D) to probabilities :math:`q(c \mid x)`
            of shape (n, M), e.g. ``model.predict_proba``.
        return_stderr, n_samples, rng
            As in :meth:`bayes_loss`.

        Returns
        -------
        float, or (float, float) if ``return_stderr``
            In nats; 0 for the posterior itself, ``inf`` if :math:`q = 0`
            somewhere :math:`P(c \mid x) > 0` (no warning).

        Notes
        -----
        .. math::

            \mathbb{E}_x \mathrm{KL} = \int \sum_c P(x, c)
                \big(\log P(c \mid x) - \log q(c \mid x)\big)\, dx ,

        with terms where :math:`P(c \mid x) = 0` counted as 0.  Equals
        :meth:`population_loss` minus :meth:`bayes_loss`.  The quadrature
        is exact to about 1e-10 for smooth models; a ReLU network's output
        has kinks between nodes, and there the result is accurate to about
        1% relative (measured: 6.557e-4 against 6.514e-4 nats from a
        20,000-point trapezoid rule), enough to follow training.

        Examples
        --------
        >>> import scratchnet as sn
        >>> task = sn.GaussianClasses([0.0, 3.0], [1.0, 1.0])
        >>> print(f"{task.expected_kl(task.posterior):.4f}")
        0.0000
        >>> uniform = lambda x: np.full((len(x), 2), 0.5)
        >>> print(f"{task.expected_kl(uniform):.4f}")    # log 2 - 0.1664
        0.5268
        """
        rule = self._rule(n_samples, rng)
        log_q = self._model_log_probs(predict_proba, rule)
        log_ratio = rule.log_posterior - log_q
        values = _sum_over_support(rule.posterior, log_ratio, axis=1)[:, 0]
        return self._expect(rule, values, return_stderr)

    def population_loss(
        self, predict_proba: Callable, *, return_stderr: bool = False,
        n_samples: int = _MC_SAMPLES, rng: Any = None,
    ) -> float | tuple:
        r"""The expected cross-entropy :math:`\mathbb{E}_{(x, c)}[-\log q(c \mid x)]`.

        The training loss on infinitely many samples.

        Parameters
        ----------
        predict_proba : callable
            As in :meth:`expected_kl`.
        return_stderr, n_samples, rng
            As in :meth:`bayes_loss`.

        Returns
        -------
        float, or (float, float) if ``return_stderr``
            In nats, at least :meth:`bayes_loss`.

        Notes
        -----
        .. math::

            \int \sum_c P(x, c)\, \big(-\log q(c \mid x)\big)\, dx .

        Examples
        --------
        >>> import scratchnet as sn
        >>> task = sn.GaussianClasses([0.0, 3.0], [1.0, 1.0])
        >>> print(f"{task.population_loss(lambda x: np.full((len(x), 2), 0.5)):.4f}")
        0.6931
        """
        rule = self._rule(n_samples, rng)
        log_q = self._model_log_probs(predict_proba, rule)
        values = -_sum_over_support(rule.posterior, log_q, axis=1)[:, 0]
        return self._expect(rule, values, return_stderr)

    # -- geometry -------------------------------------------------------------------

    def support(self, mass: float = 0.999) -> tuple:
        r"""Where the inputs live: an interval (box) holding ``mass`` of :math:`P(X)`.

        Parameters
        ----------
        mass : float, default 0.999
            In (0, 1).

        Returns
        -------
        (low, high)
            One dimension: floats, the :math:`(1 - \text{mass})/2` and
            :math:`(1 + \text{mass})/2` quantiles of :math:`P(X)`.  D
            dimensions: arrays of shape (D,), per-axis central intervals of
            mass :math:`1 - (1 - \text{mass})/D` each, so that the box holds at
            least ``mass`` (union bound).

        Notes
        -----
        The marginal of each axis is a mixture of normals; its tails
        :math:`\sum_c P(c)\, \tfrac12 \operatorname{erfc}(\mp z_c / \sqrt2)`
        are inverted by bisection to full float precision.

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
        cov = self._chol @ self._chol.transpose(0, 2, 1)
        sd = np.sqrt(np.diagonal(cov, axis1=1, axis2=2))          # (M, D)
        low = _mixture_quantile(self._mu, sd, self.priors, tail, upper=False)
        high = _mixture_quantile(self._mu, sd, self.priors, tail, upper=True)
        if self.dim == 1:
            return float(low[0]), float(high[0])
        return low, high

    def decision_boundaries(self) -> np.ndarray:
        r"""The inputs where two one-dimensional classes are equally probable.

        Returns
        -------
        ndarray, shape (k,) with k in {0, 1, 2}
            The sorted roots of :math:`\log P(x, c_0) = \log P(x, c_1)`, a
            quadratic equation (linear for equal standard deviations).

        Notes
        -----
        Only for one-dimensional tasks with two classes.  With
        :math:`a x^2 + b x + e = 0`, :math:`a = \frac{1}{2\sigma_1^2} -
        \frac{1}{2\sigma_0^2}`, :math:`b = \frac{\mu_0}{\sigma_0^2} -
        \frac{\mu_1}{\sigma_1^2}`, :math:`e = \frac{\mu_1^2}{2\sigma_1^2} -
        \frac{\mu_0^2}{2\sigma_0^2} + \log\frac{P(c_0)\sigma_1}{P(c_1)\sigma_0}`,
        the roots are computed in the cancellation-free form :math:`t / a`
        and :math:`e / t` with
        :math:`t = -\tfrac12 (b + \operatorname{sign}(b)\sqrt{b^2 - 4ae})`.

        Examples
        --------
        >>> import scratchnet as sn
        >>> task = sn.GaussianClasses([0.0, 3.0], [2.0, 1.0])
        >>> task.decision_boundaries().round(3)
        array([1.582, 6.418])
        """
        if self.dim != 1 or self.num_classes != 2:
            raise ValueError("decision_boundaries needs a one-dimensional task with "
                             f"two classes; got dim={self.dim}, "
                             f"num_classes={self.num_classes}")
        roots = _crossings(np.log(self.priors), self._mu[:, 0], self._sd)
        return np.unique(roots[np.isfinite(roots)])


def _pairs(arr: np.ndarray) -> tuple:
    """Differences and sums over class pairs: ``out[j, k] = arr[j] -/+ arr[k]``."""
    return arr[:, None] - arr[None, :], arr[:, None] + arr[None, :]


def _cholesky(cov: np.ndarray, m: int, d: int) -> np.ndarray:
    """Check M covariance matrices of shape (D, D) and return their Cholesky factors."""
    if cov.shape != (m, d, d):
        raise ValueError(f"scales must have shape (M, D, D) = ({m}, {d}, {d}), one "
                         f"covariance matrix per class, when means has shape "
                         f"({m}, {d}); got shape {cov.shape}")
    size = np.abs(cov).max(axis=(1, 2), keepdims=True)
    asym = ~(np.abs(cov - cov.transpose(0, 2, 1)) <= 1e-10 * size)
    if asym.any():
        k, i, j = (int(t) for t in np.argwhere(asym)[0])
        raise ValueError(f"scales[{k}] must be a symmetric covariance matrix; got "
                         f"{cov[k, i, j]:g} at [{i}, {j}] but {cov[k, j, i]:g} "
                         f"at [{j}, {i}]")
    cov = 0.5 * (cov + cov.transpose(0, 2, 1))
    try:
        return np.linalg.cholesky(cov)
    except np.linalg.LinAlgError:
        eig = np.linalg.eigvalsh(cov).min(axis=1)
        k = int(np.argmin(eig))
        raise ValueError(f"scales[{k}] must be positive definite (a covariance "
                         f"matrix); its Cholesky factorisation failed (smallest "
                         f"eigenvalue {eig[k]:.3g})") from None


def _check_priors(priors: Any, m: int) -> np.ndarray:
    """Return the priors as float64 after checking they are a distribution."""
    priors = as_float_array(priors, "priors", allow_inf=False).astype(np.float64)
    if priors.shape != (m,):
        raise ValueError(f"priors must have shape (M,) = ({m},), one per class; "
                         f"got shape {priors.shape}")
    bad = ~(priors > 0)
    if bad.any():
        raise ValueError(
            f"priors must be positive; got {priors[bad][0]:g}{_where(bad)}")
    total = priors.sum()
    if abs(total - 1.0) > 1e-6:
        raise ValueError(
            f"priors must sum to 1 (within 1e-06); got a sum of {total:.10g}")
    return priors / total


def _crossings(log_w: np.ndarray, mean: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """Where two weighted normals w_c N(x; mean_c, sd_c^2) are equal, for every pair.

    ``log_w``, ``mean``, ``sd`` have shape (..., M); returns shape (..., P, 2)
    over the pairs j < k, NaN where a pair has fewer than two real roots.
    log w_j N_j - log w_k N_k = a x^2 + b x + e, solved without cancellation
    as t / a and e / t with t = -(b + sign(b) sqrt(b^2 - 4ae)) / 2.
    """
    j, k = np.triu_indices(log_w.shape[-1], 1)
    pj, pk = 1.0 / sd[..., j] ** 2, 1.0 / sd[..., k] ** 2
    a = 0.5 * (pk - pj)
    b = mean[..., j] * pj - mean[..., k] * pk
    e = (0.5 * (mean[..., k] ** 2 * pk - mean[..., j] ** 2 * pj)
         + (log_w[..., j] - np.log(sd[..., j])) - (log_w[..., k] - np.log(sd[..., k])))
    with np.errstate(all="ignore"):
        disc = b * b - 4.0 * a * e
        t = -0.5 * (b + np.copysign(np.sqrt(disc), b))
        quadratic = (a != 0) & (disc >= 0)
        linear = (a == 0) & (b != 0)
        first = np.where(quadratic, t / a, np.where(linear, -e / b, np.nan))
        second = np.where(quadratic & (t != 0), e / t, np.nan)
    return np.stack([first, second], axis=-1)


def _normal_mass(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """P(lo < Z < hi) for a standard normal Z, from the tail nearer the interval."""
    r = 1.0 / math.sqrt(2.0)
    upper = 0.5 * (_erfc(lo * r) - _erfc(hi * r)).astype(np.float64)
    lower = 0.5 * (_erfc(-hi * r) - _erfc(-lo * r)).astype(np.float64)
    return np.where(lo > 0, upper, lower)


def _winner_mass(log_w: np.ndarray, mean: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """Integral of max_c w_c N(x; mean_c, sd_c^2) over the real line, per row (K,).

    Between consecutive crossings the winning class is constant: find it at
    the interval's midpoint and add its normal mass on the interval.
    """
    roots = _crossings(log_w, mean, sd).reshape(len(log_w), -1)
    roots = np.sort(np.where(np.isnan(roots), np.inf, roots), axis=1)
    inf = np.full((len(log_w), 1), np.inf)
    lo = np.concatenate([-inf, roots], axis=1)[:, :, None]     # (K, intervals, 1)
    hi = np.concatenate([roots, inf], axis=1)[:, :, None]
    with np.errstate(invalid="ignore"):
        mid = np.where(np.isfinite(lo), lo + np.minimum(hi - lo, 2.0) / 2, hi - 1.0)
    mid = np.where(np.isfinite(mid), mid, 0.0)
    mean, sd, log_w = mean[:, None, :], sd[:, None, :], log_w[:, None, :]
    score = log_w - np.log(sd) - 0.5 * ((mid - mean) / sd) ** 2
    c = np.argmax(score, axis=2)[..., None]
    m, s, lw = (np.take_along_axis(np.broadcast_to(a, score.shape), c, axis=2)
                for a in (mean, sd, log_w))
    mass = np.exp(lw) * _normal_mass((lo - m) / s, (hi - m) / s)
    return mass[..., 0].sum(axis=1)


def _mixture_quantile(mu: np.ndarray, sd: np.ndarray, priors: np.ndarray,
                      tail: float, *, upper: bool) -> np.ndarray:
    """Per axis, where the lower (upper) tail of sum_c P(c) N(mu_c, sd_c^2) is ``tail``.

    Bisection, vectorised over the D axes, until the bracket cannot shrink.
    """
    sign = 1.0 if upper else -1.0
    lo = (mu - 40.0 * sd).min(axis=0)
    hi = (mu + 40.0 * sd).max(axis=0)
    for _ in range(2000):
        mid = 0.5 * (lo + hi)
        if np.all((mid == lo) | (mid == hi)):
            break
        z = sign * (mid - mu) / (sd * math.sqrt(2.0))
        mass = (priors[:, None] * 0.5 * _erfc(z).astype(np.float64)).sum(axis=0)
        go_right = (mass > tail) if upper else (mass < tail)
        lo = np.where(go_right, mid, lo)
        hi = np.where(go_right, hi, mid)
    return 0.5 * (lo + hi)


def two_gaussian_posterior(
    x: Any, mu1: float, sigma1: float, mu2: float, sigma2: float, prior1: float = 0.5
) -> np.ndarray:
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

        P(c_1 \mid x) = \frac{1}{1 + \frac{\sigma_1}{\sigma_2}
            \frac{P(c_2)}{P(c_1)} \exp\Big(\frac{\sigma_2^2 (x - \mu_1)^2
            - \sigma_1^2 (x - \mu_2)^2}{2 \sigma_1^2 \sigma_2^2}\Big)}
        = \sigma(-r), \quad
        r = \log\frac{\sigma_1 P(c_2)}{\sigma_2 P(c_1)}
            + \tfrac12 (z_1 - z_2)(z_1 + z_2) .

    Beware a version of this formula in circulation that drops the
    exponential and swaps the two squares: it is not a probability.  The
    exponent is :math:`\tfrac12(z_1^2 - z_2^2)`: the farther :math:`x` is
    from :math:`\mu_1` (in units of :math:`\sigma_1`), the smaller
    :math:`P(c_1 \mid x)`.  Here :math:`z_1 \pm z_2` are formed as linear
    functions of :math:`x` and the product is taken on :math:`x` scaled by a
    power of two, so no square of a large :math:`x` overflows or cancels;
    :func:`scratchnet.sigmoid` then never overflows either.

    Examples
    --------
    >>> import scratchnet as sn
    >>> x = np.array([0.0, 1.5, 3.0])
    >>> sn.two_gaussian_posterior(x, 0.0, 1.0, 3.0, 1.0).round(6)
    array([0.989013, 0.5     , 0.010987])
    >>> (1 / (1 + np.exp((6 * x - 9) / 2))).round(6)      # the closed form
    array([0.989013, 0.5     , 0.010987])
    """
    params = {"mu1": mu1, "sigma1": sigma1, "mu2": mu2, "sigma2": sigma2}
    for name, value in params.items():
        value = check_scalar(value, name, low=0.0 if name.startswith("sigma") else None,
                             low_inclusive=False)
        if not math.isfinite(value):
            raise ValueError(f"{name} must be finite; got {value}")
        params[name] = value
    mu1, sigma1, mu2, sigma2 = params.values()
    prior1 = check_scalar(prior1, "prior1", low=0.0, high=1.0,
                          low_inclusive=False, high_inclusive=False)
    x = as_float_array(x, "x", allow_inf=False)
    x64 = x.astype(np.float64).reshape(-1, 1)
    s = _pow2_scale(x64)[:, None]
    y = x64 / s
    diff = (1 / sigma1 - 1 / sigma2) * y + (mu2 / sigma2 - mu1 / sigma1) / s  # z1 - z2
    total = (1 / sigma1 + 1 / sigma2) * y - (mu1 / sigma1 + mu2 / sigma2) / s  # z1 + z2
    with np.errstate(over="ignore"):
        r = 0.5 * (diff * total * s) * s
    r += math.log(sigma1 / sigma2) + math.log((1.0 - prior1) / prior1)
    out = sigmoid(-r).reshape(x.shape).astype(x.dtype, copy=False)
    return unwrap(out)
