r"""Private machinery behind :mod:`scratchnet.gaussian`: parameters and log joint.

Nothing here is new mathematics; it is the plumbing that keeps Bayes' rule
for a mixture of normals exact where the densities themselves underflow:

* **Log-joint differences in the far tails**: :math:`\log P(x, c) - \log P(x, r)`
  as a product of two factors linear in :math:`x`, formed on :math:`x`
  scaled by a power of two, exact where the squares themselves overflow,
  computed a block of inputs at a time, so that memory stays
  :math:`O(nMD)` with a small constant.
* **Checks** of the parameters and inputs of a mixture of normals, whose
  messages are part of :class:`~scratchnet.gaussian.GaussianClasses`'s contract.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._validation import as_float_array, at_index, check_scalar

_BLOCK = 2**20   # entries (inputs x classes x D) of one block's temporaries
_MAX_COEF = 2.0**1000   # |L^-1| and |L^-1 mu| above this would overflow the factors


# -- log P(x, c) - log P(x, r), exact in the far tails ---------------------------


def pow2_scale(x: np.ndarray) -> np.ndarray:
    """A power of two ``s >= max(1, |x| / 2)`` for each row of ``x`` (n, D); shape (n,).

    Dividing by a power of two is exact, so ``(x / s)`` loses nothing and a
    product rescaled by ``s * s`` at the end rounds exactly as the unscaled
    one would, except that it cannot overflow on the way.
    """
    _, exponent = np.frexp(np.maximum(np.abs(x).max(axis=-1), 1.0))
    return np.ldexp(1.0, np.minimum(exponent, 1023))   # 2**1024 would overflow


def log_joint_minus_best(x: np.ndarray, l_inv: np.ndarray, l_inv_mu: np.ndarray,
                          log_const: np.ndarray) -> tuple:
    r"""log P(x, c) - log P(x, r), r the most probable class at each x: (n, M), and r.

    For M Gaussian classes, ``log P(x, c) = -|w_c|^2 / 2 + log_const_c`` with
    w_c = L_c^{-1} x - L_c^{-1} mu_c (``l_inv`` (M, D, D), ``l_inv_mu`` (M, D)).
    Returns the differences, all <= 0 and exactly 0 at r, and r (n,) as
    intp.  Bayes' rule is
    unchanged by subtracting log P(x, r) from every log joint, so
    :meth:`~scratchnet.gaussian.GaussianClasses.log_posterior` takes these as
    its log joints.  Pinned by ``test_posterior_far_away_is_exact_and_silent``,
    ``test_posterior_far_away_in_two_dimensions`` and
    ``test_coinciding_classes_keep_their_priors_everywhere`` (tests/test_gaussian.py).

    Why not subtract two log joints?  Far from the means both are huge
    (about -x^2/2) and nearly equal, so the subtraction cancels: a
    difference of order x loses half its digits at x = 1e8 and all of them
    at 1e16, and past ``|x| = 1e154`` the squares overflow and the difference is
    inf - inf = NaN.  Instead the
    difference of the two squared distances is factored into two terms
    linear in x::

        |w_c|^2 - |w_r|^2 = (w_c - w_r) . (w_c + w_r)

    with the coefficients differenced first (for equal covariances the first
    factor is then exactly a constant).  Both factors are formed on x / s,
    s a power of two (an exact scaling), and the product is scaled back by
    s * s at the end, so nothing overflows on the way.  The factors take
    (rows, M, D) memory, so the rows go ``_BLOCK / (M D)`` at a time.

    r is found by climbing: start from a cheap guess (the best class if the
    classes were isotropic, from Euclidean distances), move to the class
    with the largest difference, and repeat while one is positive.  Each
    step moves to a more probable class, so there are at most M - 1; none
    for isotropic classes, more only in near-ties or where differences
    overflowed to +inf.
    """
    m, d = l_inv_mu.shape
    out, ref = np.empty((len(x), m)), np.zeros(len(x), dtype=np.intp)
    mu = np.linalg.solve(l_inv, l_inv_mu[..., None])[..., 0]          # (M, D)
    precision = np.einsum("mij,mij->m", l_inv, l_inv) / d       # isotropic guess
    step = max(1, _BLOCK // (m * d))
    for start in range(0, len(x), step):
        rows = slice(start, start + step)
        s = pow2_scale(x[rows])
        y = x[rows] / s[:, None]
        best, delta = ref[rows], out[rows]           # views: filled in place
        with np.errstate(all="ignore"):   # only a guess: overflow or NaN is harmless
            dist = (x[rows] ** 2).sum(axis=1)[:, None] - 2 * x[rows] @ mu.T
            best[:] = (log_const - 0.5 * precision * (dist + (mu**2).sum(axis=1))
                       ).argmax(axis=1)
        delta[:] = _log_joint_minus(best, y, s, l_inv, l_inv_mu, log_const)
        for _ in range(m):
            climb = np.flatnonzero(delta.max(axis=1) > 0)
            if climb.size == 0:
                break
            best[climb] = delta[climb].argmax(axis=1)
            delta[climb] = _log_joint_minus(best[climb], y[climb], s[climb],
                                            l_inv, l_inv_mu, log_const)
    return out, ref


def _log_joint_minus(ref: np.ndarray, y: np.ndarray, s: np.ndarray, a: np.ndarray,
                     b: np.ndarray, log_const: np.ndarray) -> np.ndarray:
    """log P(x, c) - log P(x, ref) at x = y * s, by the factored form above.

    The rows are grouped by their reference class r.  For each group both
    factors of every class c, (a_c -+ a_r) y - (b_c -+ b_r) / s, come from
    one matrix product: rows (y, 1/s) times the differenced coefficients
    stacked as (M D, D + 1).
    """
    (n, d), m = y.shape, len(log_const)
    out = np.empty((n, m))
    by_ref = np.argsort(ref, kind="stable")                  # the groups, one run each
    ends = np.searchsorted(ref[by_ref], np.arange(m + 1))
    ys = np.concatenate([y, 1.0 / s[:, None]], axis=1)            # (n, D + 1)
    with np.errstate(over="ignore", invalid="ignore"):
        for r in np.flatnonzero(np.diff(ends)):
            rows = by_ref[ends[r]:ends[r + 1]]
            diff, total = ((ys[rows] @ _stacked(a - sign * a[r], b - sign * b[r])
                            ).reshape(-1, m, d) for sign in (1.0, -1.0))  # (rows, M, D)
            delta = np.einsum("nci,nci->nc", diff, total) * s[rows, None]
            delta *= -0.5 * s[rows, None]
            out[rows] = delta + (log_const - log_const[r])
    return out


def _stacked(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Coefficients a (M, D, D), b (M, D) as (D + 1, M D): (y, 1/s) @ it = a y - b/s."""
    m, d = b.shape
    return np.concatenate([a, -b[..., None]], axis=2).reshape(m * d, d + 1).T


# -- the parameters of a mixture of normals ------------------------------------------


def mixture_parameters(means: Any, scales: Any, priors: Any,
                        covariances: Any = None) -> tuple:
    """Check (means, scales or covariances, priors) of M normals; return them and L_c.

    ``means`` of shape (M,) with standard deviations ``scales`` (M,), or of
    shape (M, D) with ``covariances`` (M, D, D) (also accepted as ``scales``,
    the older spelling); the Cholesky factors come back with shape
    (M, D, D).  Uniform priors when ``priors`` is None.  Returns means, the
    spread as given (standard deviations or covariances), priors and the
    factors, all float64; the arrays returned are read-only.
    """
    if (scales is None) == (covariances is None):
        raise TypeError(
            "GaussianClasses needs one of scales (standard deviations, shape (M,), "
            "with means of shape (M,)) or covariances (matrices, shape (M, D, D), "
            "with means of shape (M, D)); got "
            + ("both" if scales is not None else "neither"))
    means = as_float_array(means, "means", allow_inf=False).astype(np.float64)
    name = "scales" if covariances is None else "covariances"
    spread = scales if covariances is None else covariances
    scales = as_float_array(spread, name, allow_inf=False).astype(np.float64)
    if means.ndim not in (1, 2) or means.size == 0:
        raise ValueError("means must have shape (M,) or (M, D) with M, D >= 1; "
                         f"got shape {means.shape}")
    m = means.shape[0]
    if name == "covariances" and means.ndim == 1:
        raise ValueError("covariances needs means of shape (M, D); got means of shape "
                         f"{means.shape}: for a one-dimensional task give scales, "
                         "the standard deviations")
    if name == "scales" and means.ndim == 2 and scales.ndim != 3:
        raise ValueError(f"scales are standard deviations, for means of shape (M,); "
                         f"with means of shape {means.shape} give covariances, one "
                         f"(D, D) matrix per class; got scales of shape {scales.shape}")
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
                             f"{scales[bad][0]:g}{at_index(bad)}")
        chol = scales.reshape(m, 1, 1)
    else:
        chol = _cholesky(scales, m, means.shape[1], name)
    _check_resolvable(chol, means.reshape(m, -1), name)
    priors = _check_priors(np.full(m, 1.0 / m) if priors is None else priors, m)
    for arr in (means, scales, priors):
        arr.flags.writeable = False     # constants derived from them are cached
    return means, scales, priors, chol


def _cholesky(cov: np.ndarray, m: int, d: int, name: str) -> np.ndarray:
    """Check M covariance matrices of shape (D, D) and return their Cholesky factors."""
    if cov.shape != (m, d, d):
        raise ValueError(f"{name} must have shape (M, D, D) = ({m}, {d}, {d}), one "
                         f"covariance matrix per class, when means has shape "
                         f"({m}, {d}); got shape {cov.shape}")
    size = np.abs(cov).max(axis=(1, 2), keepdims=True)
    asym = ~(np.abs(cov - cov.transpose(0, 2, 1)) <= 1e-10 * size)
    if asym.any():
        k, i, j = (int(t) for t in np.argwhere(asym)[0])
        raise ValueError(f"{name}[{k}] must be a symmetric covariance matrix; got "
                         f"{cov[k, i, j]:g} at [{i}, {j}] but {cov[k, j, i]:g} "
                         f"at [{j}, {i}]")
    cov = 0.5 * (cov + cov.transpose(0, 2, 1))
    try:
        return np.linalg.cholesky(cov)
    except np.linalg.LinAlgError:
        eig = np.linalg.eigvalsh(cov).min(axis=1)
        k = int(np.argmin(eig))
        raise ValueError(f"{name}[{k}] must be positive definite (a covariance "
                         f"matrix); its Cholesky factorisation failed (smallest "
                         f"eigenvalue {eig[k]:.3g})") from None


def _check_resolvable(chol: np.ndarray, mu: np.ndarray, name: str) -> None:
    """Check L_c^{-1} and L_c^{-1} mu_c stay below 2**1000 (about 1e301).

    The factored log-joint differences are formed from these coefficients;
    beyond 2**1000 their sums would overflow and the posterior be NaN.
    """
    with np.errstate(over="ignore"):
        l_inv = np.linalg.inv(chol)
        size = np.maximum(np.abs(l_inv).max(axis=(1, 2)),
                          np.abs(np.einsum("mij,mj->mi", l_inv, mu)).max(axis=1))
    bad = ~(size <= _MAX_COEF)
    if bad.any():
        k = int(np.argmax(bad))
        raise ValueError(f"{name}[{k}] is too small for float64 against the means: "
                         f"1/scale and mean/scale must stay below 2**1000 (about "
                         f"1e301); got {size[k]:.3g}")


def _check_priors(priors: Any, m: int) -> np.ndarray:
    """Return the priors as float64 after checking they are a distribution."""
    priors = as_float_array(priors, "priors", allow_inf=False).astype(np.float64)
    if priors.shape != (m,):
        raise ValueError(f"priors must have shape (M,) = ({m},), one per class; "
                         f"got shape {priors.shape}")
    bad = ~(priors > 0)
    if bad.any():
        raise ValueError(
            f"priors must be positive; got {priors[bad][0]:g}{at_index(bad)}")
    total = priors.sum()
    if abs(total - 1.0) > 1e-6:
        raise ValueError(
            f"priors must sum to 1 (within 1e-06); got a sum of {total:.10g}")
    return priors / total



def check_two_gaussians(mu1: Any, sigma1: Any, mu2: Any, sigma2: Any, prior1: Any
                         ) -> tuple:
    """Check finite means, positive finite deviations and a prior in (0, 1)."""
    params = {"mu1": mu1, "sigma1": sigma1, "mu2": mu2, "sigma2": sigma2}
    for name, value in params.items():
        value = check_scalar(value, name, low=0.0 if name.startswith("sigma") else None,
                             low_inclusive=False)
        if not math.isfinite(value):
            raise ValueError(f"{name} must be finite; got {value}")
        params[name] = value
    for i in "12":
        mu, sigma = params[f"mu{i}"], params[f"sigma{i}"]
        if not max(1.0, abs(mu)) / sigma <= _MAX_COEF:   # the factors would overflow
            raise ValueError(f"sigma{i} is too small for float64 against mu{i}: "
                             f"1/sigma{i} and mu{i}/sigma{i} must stay below 2**1000 "
                             f"(about 1e301); got sigma{i}={sigma:g}, mu{i}={mu:g}")
    prior1 = check_scalar(prior1, "prior1", low=0.0, high=1.0,
                          low_inclusive=False, high_inclusive=False)
    return (*params.values(), prior1)


def check_mixture_inputs(x: Any, dim: int) -> np.ndarray:
    """Validate inputs to a D-dimensional model; float64 of shape (n, D)."""
    x = as_float_array(x, "x", allow_inf=False).astype(np.float64, copy=False)
    if x.ndim == 1 and dim == 1:
        return x.reshape(-1, 1)
    if x.ndim != 2 or x.shape[1] != dim:
        extra = " or (n,)" if dim == 1 else ""
        raise ValueError(f"x must have shape (n, {dim}){extra}, one row of "
                         f"{dim} feature(s) per input; got shape {x.shape}")
    return x
