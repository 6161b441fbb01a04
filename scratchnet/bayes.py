r"""The Bayes floor: the lowest loss any classifier can reach, and the distance to it.

Take any generative model :math:`P(X, C)` and any classifier :math:`q(C \mid x)`.
Averaged over the population, the cross-entropy of :math:`q` splits into two
terms:

.. math::

    \begin{aligned}
    \underbrace{\mathbb{E}_{(x, c) \sim P}\big[-\log q(c \mid x)\big]}_{
        \text{population loss}}
    &= \underbrace{\mathbb{E}_{x}\, H\big(P(C \mid x)\big)}_{H(C \mid X)
        \text{ (Bayes loss)}}
    + \underbrace{\mathbb{E}_{x}\,
        \mathrm{KL}\big(P(C \mid x) \,\|\, q(C \mid x)\big)}_{\text{expected KL}} \\
    &\ge H(C \mid X) .
    \end{aligned}

This is the sketch of :mod:`scratchnet.information` ("Why a classifier learns
the posterior"), written for the population; ``docs/derivation.md`` proves it
step by step.  The KL term is never negative
(Gibbs' inequality, :func:`scratchnet.information.gibbs_inequality`), so the
population loss is at least the *Bayes loss* :math:`H(C \mid X)`, the
uncertainty about the class that remains after seeing :math:`x`.  It reaches
that floor exactly when :math:`q(C \mid x) = P(C \mid x)` wherever
:math:`P(x) > 0`: the minimiser of the cross-entropy is the posterior, and
nothing is asked of :math:`q` where no inputs fall.

The best possible *accuracy* is that of the Bayes classifier, which predicts
the most probable class, :math:`\hat c(x) = \arg\max_c P(c \mid x)`; it is
right with probability

.. math::

    \mathbb{E}_x \max_c P(c \mid x) = \int \max_c P(x, c)\, dx .

:class:`GenerativeModel` computes these four numbers for any model that can say
:math:`\log P(c \mid x)` and average over :math:`P(X)`.  The model plugs in an
expectation rule: nodes :math:`x_k` and weights :math:`W_k` with
:math:`\sum_k W_k f(x_k) \approx \mathbb{E}_{x \sim P(X)} f(x)` (a quadrature,
exact to about :math:`10^{-10}` for
:class:`~scratchnet.gaussian.GaussianClasses` in one and two dimensions), or,
without one, a Monte Carlo sample :math:`x_1, \dots, x_n \sim P(X)` from its
own ``sample`` method, with weights :math:`1/n` and the standard error
:math:`s_f / \sqrt{n}` (:math:`s_f` the sample standard deviation of
:math:`f(x_k)`), which ``return_stderr=True`` reports as an :class:`Estimate`.
``method="monte_carlo"`` asks for the sample even where there is a rule,
``method="quadrature"`` refuses to answer without one.  A model's output
(a ReLU network's) has kinks, which a quadrature built for smooth integrands
steps over with an error of order :math:`h^2` per kink, so integrals of a
model may use a second, denser rule.  The posterior at the nodes is computed
once and cached, since training code calls :meth:`GenerativeModel.expected_kl` at
every snapshot.
"""

from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple

import numpy as np

from ._validation import (
    as_float_array,
    check_bool,
    check_distribution,
    check_positive_int,
)
from .information import cross_entropy, kl_divergence

__all__ = ["Estimate", "GenerativeModel"]

_MC_SAMPLES = 100_000   # default Monte Carlo sample size (models without a rule)
_MC_ENTRIES = 2**22     # ... fewer for many classes: samples x classes at most this
_METHODS = ("auto", "quadrature", "monte_carlo")


class Estimate(NamedTuple):
    r"""An integral's value and its standard error (from ``return_stderr=True``).

    A tuple ``(value, stderr)``, so ``value, stderr = task.bayes_loss(
    return_stderr=True)`` unpacks it.

    Attributes
    ----------
    value : float
        The estimate of :math:`\mathbb{E}_{x \sim P(X)} f(x)`.
    stderr : float
        Its Monte Carlo standard error :math:`s_f / \sqrt{n}`; 0.0 for a
        quadrature or a closed form, whose error (below about
        :math:`10^{-10}`) is not random.

    Examples
    --------
    >>> import scratchnet as sn
    >>> task = sn.GaussianClasses([0.0, 3.0], [1.0, 1.0])
    >>> task.bayes_accuracy(return_stderr=True)
    Estimate(value=0.9331927987311419, stderr=0.0)
    >>> est = task.bayes_accuracy(method="monte_carlo", return_stderr=True, rng=0)
    >>> print(f"{est.value:.4f} +- {est.stderr:.4f}")     # Phi(1.5) = 0.9332
    0.9331 +- 0.0004
    """

    value: float
    stderr: float


class _Rule(NamedTuple):
    """Nodes x_k (K, D) and weights W_k (K,) with sum_k W_k f(x_k) ~ E_{P(X)} f."""

    x: np.ndarray
    weights: np.ndarray
    log_posterior: np.ndarray  # (K, M) at the nodes
    posterior: np.ndarray      # (K, M)
    monte_carlo: bool

    def expect(self, values: np.ndarray, return_stderr: bool) -> float | Estimate:
        """sum_k W_k values_k, and its Monte Carlo standard error if asked."""
        estimate = float(self.weights @ values)
        if not return_stderr:
            return estimate
        stderr = 0.0
        if self.monte_carlo and math.isfinite(estimate):  # inf is exact (expected_kl)
            stderr = float(values.std(ddof=1) / math.sqrt(values.size))
        return Estimate(estimate, stderr)


class GenerativeModel:
    r"""A generative model's Bayes floor: its Bayes loss and accuracy, a model's gap.

    The base class of a generative model :math:`P(X, C)` (``BayesFloor``
    before issue 39, a name that hid what it is; that name stays importable,
    ``scratchnet.bayes.BayesFloor``, for one release).

    For any generative model :math:`P(X, C)` that provides ``log_posterior(x)``
    and an expectation rule over :math:`P(X)`.  A subclass supplies the
    attributes below and may override three private hooks:
    ``_expectation_rule()``, returning nodes (K, D) and weights (K,) for
    :math:`\mathbb{E}_{x \sim P(X)}` (or None, the default: Monte Carlo on
    ``sample``), ``_kinked_expectation_rule()``, the same for integrands with
    kinks such as a ReLU network's output (by default the first), used by
    :meth:`expected_kl` and :meth:`population_loss`, and
    ``_exact_accuracy()``, returning the Bayes accuracy in closed form (or
    None, the default: the expectation rule).  All, and the posterior at the
    nodes, are cached: the model must not change.

    Attributes
    ----------
    log_posterior : callable
        Supplied by the subclass: inputs of shape (n, D) to
        :math:`\log P(c \mid x)` of shape (n, M).
    sample : callable
        Supplied by the subclass: ``sample(n, rng)`` draws ``(x, c)`` from
        :math:`P(X, C)`; used for Monte Carlo when there is no rule.

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> task = sn.GaussianClasses([0.0, 3.0], [1.0, 1.0])
    >>> isinstance(task, sn.bayes.GenerativeModel)
    True
    >>> wrong = lambda x: np.full((len(x), 2), 0.5)
    >>> loss = task.population_loss(wrong)                  # = floor + gap
    >>> print(f"{loss:.4f} = {task.bayes_loss():.4f} + {task.expected_kl(wrong):.4f}")
    0.6931 = 0.1664 + 0.5268
    """

    def bayes_loss(
        self, *, method: str = "auto", return_stderr: bool = False,
        n_samples: int | None = None, rng: Any = None,
    ) -> float | Estimate:
        r"""The Bayes loss :math:`H(C \mid X) = \mathbb{E}_x H(P(C \mid x))`, in nats.

        The smallest expected cross-entropy any model can reach.

        Parameters
        ----------
        method : {"auto", "quadrature", "monte_carlo"}, default "auto"
            "auto" uses the model's quadrature rule when it has one (for
            :class:`~scratchnet.gaussian.GaussianClasses`: D <= 2, a grid of
            at most 250,000 nodes and 2**22 nodes times classes, counted
            before it is built) and Monte Carlo otherwise (D >= 3, nearly
            singular covariances, standard deviations tiny against the
            distance between the means or from the origin, many classes);
            "quadrature" raises ``ValueError`` where there is no rule;
            "monte_carlo" samples anyway.
        return_stderr : bool, default False
            Return an :class:`~scratchnet.bayes.Estimate` ``(value, stderr)``
            instead of a float.
        n_samples : int, optional
            Monte Carlo sample size (>= 2); unused by a quadrature.  By
            default 100,000, fewer for a model with ``num_classes`` M > 41
            (:math:`2^{22} / M`, at least 1,000), so that the posterior
            cached at the sample stays near 32 MiB.
        rng : numpy.random.Generator or int seed, optional
            Used only for Monte Carlo; None uses a fixed seed (0) and caches
            the sample, so repeated calls (and different models) see the same
            inputs.

        Returns
        -------
        float, or :class:`~scratchnet.bayes.Estimate` if ``return_stderr``
            The estimate and, if asked, its Monte Carlo standard error
            (0.0 for a quadrature, whose error is below 1e-10 and not
            random).

        Notes
        -----
        .. math::

            \begin{aligned}
            H(C \mid X) &= -\int \sum_c P(x, c) \log P(c \mid x)\, dx \\
            &\approx -\sum_k W_k \sum_c P(c \mid x_k) \log P(c \mid x_k),
            \end{aligned}

        with :math:`0 \log 0 = 0`.  It equals :math:`H(C)` (the prior's
        entropy) when all classes coincide and tends to 0 as they separate.

        Examples
        --------
        >>> import scratchnet as sn
        >>> print(f"{sn.GaussianClasses([0.0, 0.0], [1.0, 1.0]).bayes_loss():.4f}")
        0.6931
        """
        return_stderr = check_bool(return_stderr, "return_stderr")
        rule = self._rule(method, n_samples, rng)
        values = cross_entropy(rule.posterior, log_q=rule.log_posterior, axis=1)
        return rule.expect(values, return_stderr)

    def bayes_accuracy(
        self, *, method: str = "auto", return_stderr: bool = False,
        n_samples: int | None = None, rng: Any = None,
    ) -> float | Estimate:
        r"""Accuracy of the Bayes classifier, :math:`\mathbb{E}_x \max_c P(c \mid x)`.

        Parameters
        ----------
        method, return_stderr, n_samples, rng
            As in :meth:`bayes_loss`; "quadrature" includes the closed form.

        Returns
        -------
        float, or :class:`~scratchnet.bayes.Estimate` if ``return_stderr``
            A probability in :math:`[1/M, 1]`.

        Notes
        -----
        :math:`\int \max_c P(x, c)\, dx`.  The integrand has kinks where the
        winning class changes, so a model may compute it exactly instead:
        :class:`~scratchnet.gaussian.GaussianClasses` splits the line at the
        crossings of the weighted class densities into intervals with one
        winner each and sums normal CDF differences (in two dimensions along
        :math:`x_2` at each quadrature node :math:`x_1`).  Without either
        (D >= 3, grids too large, or more than a few hundred classes) it is
        the Monte Carlo mean of :math:`\max_c P(c \mid x_k)`.

        Examples
        --------
        >>> import scratchnet as sn
        >>> print(f"{sn.GaussianClasses([0.0, 3.0], [1.0, 1.0]).bayes_accuracy():.4f}")
        0.9332
        """
        return_stderr = check_bool(return_stderr, "return_stderr")
        if _check_method(method) != "monte_carlo":
            exact = self._cached("accuracy", self._exact_accuracy)
            if exact is not None:
                return Estimate(exact, 0.0) if return_stderr else exact
        rule = self._rule(method, n_samples, rng)
        return rule.expect(rule.posterior.max(axis=1), return_stderr)

    def expected_kl(
        self, model: Any, *, log_probs: bool = False, method: str = "auto",
        return_stderr: bool = False, n_samples: int | None = None, rng: Any = None,
    ) -> float | Estimate:
        r"""How far a model is from the posterior: the expected KL divergence.

        Parameters
        ----------
        model : model or callable
            A model with ``predict_log_proba`` (used, so a confident float32
            model's :math:`q = 10^{-50}` is not rounded to 0), or a callable
            mapping inputs of shape (n, D) to probabilities
            :math:`q(c \mid x)` of shape (n, M), e.g. ``model.predict_proba``.
        log_probs : bool, default False
            The callable returns :math:`\log q(c \mid x)` instead.
        method, return_stderr, n_samples, rng
            As in :meth:`bayes_loss`.

        Returns
        -------
        float, or :class:`~scratchnet.bayes.Estimate` if ``return_stderr``
            In nats; 0 for the posterior itself, ``inf`` if :math:`q = 0`
            somewhere :math:`P(c \mid x) > 0` (no warning), with standard
            error 0: one such node makes the integral :math:`+\infty`, exactly,
            whatever the other samples (their spread, inf minus inf, is no error).

        Notes
        -----
        .. math::

            \mathbb{E}_x \mathrm{KL} = \int \sum_c P(x, c)
                \big(\log P(c \mid x) - \log q(c \mid x)\big)\, dx ,

        with terms where :math:`P(c \mid x) = 0` counted as 0.  Equals
        :meth:`population_loss` minus :meth:`bayes_loss`.  The model is
        integrated on the rule for kinked integrands: for one-dimensional
        :class:`~scratchnet.gaussian.GaussianClasses`, Gauss-Legendre on
        panels 64 times narrower than for :meth:`bayes_loss` (about 12,000
        nodes for two classes), since a ReLU network's kinks fall between the
        nodes; measured against ``scipy.integrate.quad`` with the kinks as
        breakpoints, about 1e-7 relative (1e-3 on the coarse rule).  In two
        dimensions the rule is the coarse one: about 1e-3 relative for a ReLU
        network, exact to about 1e-10 for smooth models.

        Examples
        --------
        >>> import numpy as np
        >>> import scratchnet as sn
        >>> task = sn.GaussianClasses([0.0, 3.0], [1.0, 1.0])
        >>> print(f"{task.expected_kl(task.posterior):.4f}")
        0.0000
        >>> uniform = lambda x: np.full((len(x), 2), 0.5)
        >>> print(f"{task.expected_kl(uniform):.4f}")    # log 2 - 0.1664
        0.5268
        >>> log_uniform = lambda x: np.full((len(x), 2), -np.log(2))
        >>> print(f"{task.expected_kl(log_uniform, log_probs=True):.4f}")
        0.5268
        """
        return_stderr = check_bool(return_stderr, "return_stderr")
        rule = self._rule(method, n_samples, rng, kinked=True)
        log_q = _model_log_probs(model, rule, check_bool(log_probs, "log_probs"))
        values = kl_divergence(rule.posterior, log_q=log_q, axis=1)
        return rule.expect(values, return_stderr)

    def population_loss(
        self, model: Any, *, log_probs: bool = False, method: str = "auto",
        return_stderr: bool = False, n_samples: int | None = None, rng: Any = None,
    ) -> float | Estimate:
        r"""The expected cross-entropy :math:`\mathbb{E}_{(x, c)}[-\log q(c \mid x)]`.

        The training loss on infinitely many samples.

        Parameters
        ----------
        model, log_probs
            As in :meth:`expected_kl`: a model with ``predict_log_proba``, a
            callable returning probabilities, or (``log_probs=True``) one
            returning log-probabilities.
        method, return_stderr, n_samples, rng
            As in :meth:`bayes_loss`.

        Returns
        -------
        float, or :class:`~scratchnet.bayes.Estimate` if ``return_stderr``
            In nats, at least :meth:`bayes_loss`.

        Notes
        -----
        .. math::

            \int \sum_c P(x, c)\, \big(-\log q(c \mid x)\big)\, dx .

        Examples
        --------
        >>> import numpy as np
        >>> import scratchnet as sn
        >>> task = sn.GaussianClasses([0.0, 3.0], [1.0, 1.0])
        >>> print(f"{task.population_loss(lambda x: np.full((len(x), 2), 0.5)):.4f}")
        0.6931
        """
        return_stderr = check_bool(return_stderr, "return_stderr")
        rule = self._rule(method, n_samples, rng, kinked=True)
        log_q = _model_log_probs(model, rule, check_bool(log_probs, "log_probs"))
        values = cross_entropy(rule.posterior, log_q=log_q, axis=1)
        return rule.expect(values, return_stderr)

    # -- the hooks a model may override ------------------------------------------------

    def _expectation_rule(self) -> tuple | None:
        """Nodes (K, D) and weights (K,) for E over P(X), or None for Monte Carlo."""
        return None

    def _kinked_expectation_rule(self) -> tuple | None:
        """As ``_expectation_rule``, for integrands with kinks (a ReLU model's)."""
        return self._expectation_rule()

    def _exact_accuracy(self) -> float | None:
        """The Bayes accuracy in closed form, or None to use the expectation rule."""
        return None

    # -- the expectation rule with the posterior at its nodes, cached ------------------

    def _cached(self, key: Any, compute: Callable) -> Any:
        """``compute()`` on the first call with ``key``, the stored result after."""
        cache = self.__dict__.setdefault("_bayes_floor_cache", {})
        if key not in cache:
            cache[key] = compute()
        return cache[key]

    def _rule(self, method: str, n_samples: int, rng: Any, kinked: bool = False
              ) -> _Rule:
        """The model's own rule if it has one (unless ``method`` says Monte Carlo),
        else a Monte Carlo sample of P(X); seed 0, cached per size, if ``rng`` is None.
        ``kinked``: the rule for integrands with kinks.
        """
        if _check_method(method) != "monte_carlo":
            rule = self._cached(("quadrature", kinked),
                                lambda: self._quadrature_rule(kinked))
            if rule is not None:
                return rule
            if method == "quadrature":
                raise ValueError(
                    f"method='quadrature' is not available for this "
                    f"{type(self).__name__}: it has no quadrature rule or the grid "
                    "would be too large (for GaussianClasses: D >= 3, or more than "
                    "250,000 nodes); use method='auto' or 'monte_carlo'")
        if n_samples is None:
            n_samples = max(1_000, min(_MC_SAMPLES,
                                       _MC_ENTRIES // getattr(self, "num_classes", 1)))
        n_samples = check_positive_int(n_samples, "n_samples", minimum=2)
        if rng is not None:
            return self._posterior_at(self.sample(n_samples, rng)[0])
        return self._cached(("monte carlo", n_samples),
                            lambda: self._posterior_at(self.sample(n_samples, 0)[0]))

    def _quadrature_rule(self, kinked: bool) -> _Rule | None:
        """The posterior at the nodes of the expectation rule, if there are any."""
        nodes = self._kinked_expectation_rule() if kinked else self._expectation_rule()
        return None if nodes is None else self._posterior_at(*nodes)

    def _posterior_at(self, x: np.ndarray, weights: Any = None) -> _Rule:
        """The rule on nodes ``x``: Monte Carlo (weights 1/K) if ``weights`` is None."""
        monte_carlo = weights is None
        if monte_carlo:
            weights = np.full(len(x), 1.0 / len(x))
        log_post = self.log_posterior(x)
        rule = _Rule(x, weights, log_post, np.exp(log_post), monte_carlo)
        for arr in rule[:4]:
            arr.flags.writeable = False    # cached: models see x, must not edit it
        return rule


def _check_method(method: Any) -> str:
    """Check ``method`` is one of "auto", "quadrature", "monte_carlo"."""
    if not isinstance(method, str) or method not in _METHODS:
        raise ValueError(f"method must be one of {', '.join(map(repr, _METHODS))}; "
                         f"got {method!r}")
    return method


def _model_log_probs(model: Any, rule: _Rule, log_probs: bool) -> np.ndarray:
    """log q(c | x_k) at the rule's nodes, after checking the model's output."""
    if hasattr(model, "predict_log_proba"):
        model, log_probs = model.predict_log_proba, True
    if not callable(model):
        raise TypeError("model must have predict_log_proba or be callable (x -> "
                        f"probabilities); got {type(model).__name__}")
    name = "model(x)" + (" (log-probabilities)" if log_probs else "")
    out = as_float_array(model(rule.x), name).astype(np.float64, copy=False)
    expected = rule.posterior.shape
    if out.shape != expected:
        raise ValueError(f"{name} must have shape (n, M) = {expected} for x of "
                         f"shape {rule.x.shape}; got shape {out.shape}")
    if log_probs:
        check_distribution(np.exp(out), name, axis=1)
        return out
    check_distribution(out, name, axis=1)
    with np.errstate(divide="ignore"):
        return np.log(out)


#: The old name of :class:`GenerativeModel`, kept importable for one release.
BayesFloor = GenerativeModel
