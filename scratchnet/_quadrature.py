r"""Private machinery behind :mod:`scratchnet.gaussian` and :mod:`scratchnet.bayes`.

Nothing here is new mathematics; it is the plumbing that turns the integrals
and equations of those chapters into numbers accurate to about :math:`10^{-10}`:

* **Composite Gauss-Legendre quadrature** for :math:`\mathbb{E}_{x \sim P(X)}`
  over a mixture of normals in one or two dimensions: 8 nodes per panel,
  panels no wider than one standard deviation of the classes present there
  (and narrower where the posterior changes fast), over :math:`\pm 10`
  standard deviations around every class, combined as a tensor product in
  two dimensions.  Larger grids than ``_MAX_NODES`` are refused (the caller
  then falls back to Monte Carlo).
* **Crossings and normal-CDF masses**: where two weighted normals are equal
  (a quadratic equation solved without cancellation), and the integral of
  :math:`\max_c P(c)\,\mathcal{N}(x;\mu_c,\sigma_c^2)` as a sum of normal
  masses between crossings, which gives the Bayes accuracy exactly although
  the integrand has kinks that quadrature would resolve only to
  :math:`O(h^2)`.  **Mixture quantiles** by bisection on the tails.
* **Log-joint differences in the far tails**: :math:`\log P(x, c) - \log P(x, r)`
  as a product of two factors linear in :math:`x`, formed on :math:`x`
  scaled by a power of two, exact where the squares themselves overflow.
* **Checks** of the parameters and inputs of a mixture of normals, whose
  messages are part of :class:`~scratchnet.gaussian.GaussianClasses`'s contract.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ._validation import _where, as_float_array, check_scalar

_TAIL_SDS = 10.0        # quadrature range: this many standard deviations per class
_NODES_PER_PANEL = 8    # Gauss-Legendre nodes in each panel
_MAX_NODES = 250_000    # larger quadrature grids are refused (Monte Carlo instead)
_LOG_2PI = math.log(2.0 * math.pi)
_erfc = np.frompyfunc(math.erfc, 1, 1)  # NumPy has no erf; math.erfc, elementwise


# -- quadrature over a mixture of normals ------------------------------------------


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


def _mixture_axis_rules(mu: np.ndarray, chol: np.ndarray) -> list:
    """Nodes and weights along each axis for classes N(mu_c, L_c L_c^T): D pairs.

    ``mu`` has shape (M, D), ``chol`` (M, D, D).  Panels are no wider than a
    class's narrowest direction, nor than (a multiple of) the sharpest
    posterior transition, about sd^2 / spread of the means.
    """
    cov = chol @ chol.transpose(0, 2, 1)
    sd_axes = np.sqrt(np.diagonal(cov, axis1=1, axis2=2))      # (M, D)
    narrow = np.sqrt(np.linalg.eigvalsh(cov).min(axis=1))      # (M,)
    spread = max(float(np.ptp(mu, axis=0).max()), 1e-300)
    width = narrow * np.minimum(1.0, 6.0 * narrow / spread)
    return [_gauss_legendre(_panel_edges(m, _TAIL_SDS * sd, width))
            for m, sd in zip(mu.T, sd_axes.T)]


def _mixture_rule(axes: list, density: Callable) -> tuple | None:
    """Nodes x_k (K, D) and weights W_k with sum_k W_k f(x_k) ~ E_{P(X)} f.

    The tensor product of the per-axis ``axes`` (nodes, weights) with the
    density ``density(x)`` of P(X) folded into the weights, dropping nodes
    whose weight cannot matter; None if K would exceed ``_MAX_NODES``.
    """
    if math.prod(len(nodes) for nodes, _ in axes) > _MAX_NODES:
        return None
    x = np.stack(np.meshgrid(*[a[0] for a in axes], indexing="ij"), axis=-1)
    w = np.prod(np.meshgrid(*[a[1] for a in axes], indexing="ij"), axis=0)
    x, w = x.reshape(-1, len(axes)), w.ravel()
    weights = w * density(x)
    keep = weights > 1e-30 * weights.max()   # nodes that cannot matter
    return x[keep], weights[keep]


# -- crossings and normal masses: the exact Bayes accuracy ----------------------------


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


def _mixture_accuracy(mu: np.ndarray, chol: np.ndarray, priors: np.ndarray,
                      x1_rule: tuple | None = None) -> float:
    """The integral of max_c P(c) N(x; mu_c, L_c L_c^T) in one or two dimensions.

    In 1-D, sum over the intervals between crossings of the winning class's
    probability mass there (normal CDFs).  In 2-D the same along x2 for each
    node x1 of ``x1_rule`` (nodes, weights): the slice of class c is
    N(x1; mu_c1, L_11^2) times N(x2; conditional mean, L_22^2).
    """
    log_w = np.log(priors)[None, :]
    mean, sd = mu[None, :, 0], chol[None, :, 0, 0]
    if mu.shape[1] == 1:
        return float(_winner_mass(log_w, mean, sd)[0])
    x1, g = x1_rule
    l11, l21, l22 = chol[:, 0, 0], chol[:, 1, 0], chol[:, 1, 1]
    z1 = (x1[:, None] - mean) / sd                                 # (K, M)
    log_w = log_w - np.log(l11) - 0.5 * _LOG_2PI - 0.5 * z1**2
    cond_mean = mu[:, 1] + l21 * z1
    return float(g @ _winner_mass(log_w, cond_mean, np.broadcast_to(l22, z1.shape)))


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


# -- log P(x, c) - log P(x, r), exact in the far tails ---------------------------


def _pow2_scale(x: np.ndarray) -> np.ndarray:
    """A power of two s >= max(1, |x| / 2) for each row of ``x`` (n, D); shape (n,).

    Dividing by a power of two is exact, so ``(x / s)`` loses nothing and a
    product rescaled by ``s * s`` at the end rounds exactly as the unscaled
    one would, except that it cannot overflow on the way.
    """
    _, exponent = np.frexp(np.maximum(np.abs(x).max(axis=-1), 1.0))
    return np.ldexp(1.0, np.minimum(exponent, 1023))   # 2**1024 would overflow


def _log_joint_minus_best(x: np.ndarray, l_inv: np.ndarray, l_inv_mu: np.ndarray,
                          log_const: np.ndarray) -> np.ndarray:
    r"""log P(x, c) - log P(x, r), r the most probable class at each x: (n, M).

    For M Gaussian classes, log P(x, c) = -|w_c|^2 / 2 + log_const_c with
    w_c = L_c^{-1} x - L_c^{-1} mu_c (``l_inv`` (M, D, D), ``l_inv_mu`` (M, D)).

    Why not subtract two log joints?  Far from the means both are huge
    (about -x^2/2) and nearly equal, so the subtraction cancels: a
    difference of order x loses half its digits at x = 1e8 and all of them
    at 1e16, and past |x| = 1e154 the squares overflow and the difference is
    inf - inf = NaN.  Instead the
    difference of the two squared distances is factored into two terms
    linear in x,

        |w_c|^2 - |w_r|^2 = (w_c - w_r) . (w_c + w_r),

    with the coefficients differenced first (for equal covariances the first
    factor is then exactly a constant).  Both factors are formed on x / s,
    s a power of two (an exact scaling), and the product is scaled back by
    s * s at the end, so nothing overflows on the way.  Memory is O(n M D).

    r is found by climbing: start from class 0, move to the class with the
    largest difference, and repeat while one is positive.  Each step moves
    to a more probable class, so there are at most M - 1; usually one, more
    only in near-ties or where differences overflowed to +inf.
    """
    s = _pow2_scale(x)
    y = x / s[:, None]
    ref = np.zeros(len(x), dtype=np.intp)
    out = _log_joint_minus(ref, y, s, l_inv, l_inv_mu, log_const)
    for _ in range(len(log_const)):
        climb = np.flatnonzero(out.max(axis=1) > 0)
        if climb.size == 0:
            break
        ref[climb] = out[climb].argmax(axis=1)
        out[climb] = _log_joint_minus(ref[climb], y[climb], s[climb],
                                      l_inv, l_inv_mu, log_const)
    return out


def _log_joint_minus(ref: np.ndarray, y: np.ndarray, s: np.ndarray, a: np.ndarray,
                     b: np.ndarray, log_const: np.ndarray) -> np.ndarray:
    """log P(x, c) - log P(x, ref) at x = y * s, by the factored form above."""
    out = np.empty((len(y), len(log_const)))
    counts = np.bincount(ref, minlength=len(log_const))
    for r in np.flatnonzero(counts):
        rows = slice(None) if counts[r] == len(y) else ref == r
        yr, sr = y[rows], s[rows, None]
        diff = np.einsum("cij,nj->nci", a - a[r], yr) - (b - b[r]) / sr[:, :, None]
        total = np.einsum("cij,nj->nci", a + a[r], yr) - (b + b[r]) / sr[:, :, None]
        with np.errstate(over="ignore"):
            d = np.einsum("nci,nci->nc", diff, total) * sr
            d *= -0.5 * sr
        out[rows] = d + (log_const - log_const[r])
    return out


# -- the parameters of a mixture of normals ------------------------------------------


def _mixture_parameters(means: Any, scales: Any, priors: Any) -> tuple:
    """Check (means, scales, priors) of M normals; return them as float64 and L_c.

    ``means`` of shape (M,) with standard deviations ``scales`` (M,), or of
    shape (M, D) with covariance matrices (M, D, D); the Cholesky factors
    come back with shape (M, D, D).  Uniform priors when ``priors`` is None.
    The arrays returned are read-only.
    """
    means = as_float_array(means, "means", allow_inf=False).astype(np.float64)
    scales = as_float_array(scales, "scales", allow_inf=False).astype(np.float64)
    if means.ndim not in (1, 2) or means.size == 0:
        raise ValueError("means must have shape (M,) or (M, D) with M, D >= 1; "
                         f"got shape {means.shape}")
    m = means.shape[0]
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
        chol = _cholesky(scales, m, means.shape[1])
    priors = _check_priors(np.full(m, 1.0 / m) if priors is None else priors, m)
    for arr in (means, scales, priors):
        arr.flags.writeable = False     # constants derived from them are cached
    return means, scales, priors, chol


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



def _check_two_gaussians(mu1: Any, sigma1: Any, mu2: Any, sigma2: Any, prior1: Any
                         ) -> tuple:
    """Check finite means, positive finite deviations and a prior in (0, 1)."""
    params = {"mu1": mu1, "sigma1": sigma1, "mu2": mu2, "sigma2": sigma2}
    for name, value in params.items():
        value = check_scalar(value, name, low=0.0 if name.startswith("sigma") else None,
                             low_inclusive=False)
        if not math.isfinite(value):
            raise ValueError(f"{name} must be finite; got {value}")
        params[name] = value
    prior1 = check_scalar(prior1, "prior1", low=0.0, high=1.0,
                          low_inclusive=False, high_inclusive=False)
    return (*params.values(), prior1)


def _check_inputs(x: Any, dim: int) -> np.ndarray:
    """Validate inputs to a D-dimensional model; float64 of shape (n, D)."""
    x = as_float_array(x, "x", allow_inf=False).astype(np.float64, copy=False)
    if x.ndim == 1 and dim == 1:
        return x.reshape(-1, 1)
    if x.ndim != 2 or x.shape[1] != dim:
        extra = " or (n,)" if dim == 1 else ""
        raise ValueError(f"x must have shape (n, {dim}){extra}, one row of "
                         f"{dim} feature(s) per input; got shape {x.shape}")
    return x
