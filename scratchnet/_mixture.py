r"""Private machinery behind :mod:`scratchnet.gaussian`: checks and scaling.

Nothing here is new mathematics:

* **Checks** of the parameters and inputs of a mixture of normals, whose
  messages are part of :class:`~scratchnet.gaussian.GaussianClasses`'s contract,
  and of the range where its log posterior is resolved in float64
  (:func:`check_resolved`).
* **Scaling by a power of two** (:func:`pow2_scale`), which keeps the closed
  form :func:`~scratchnet.two_gaussians.two_gaussian_posterior` exact where the
  squares of its inputs would overflow.
* **The checks and the sums of a fit** to labelled data
  (:meth:`~scratchnet.gaussian.GaussianClasses.fit`): the targets, the class
  counts, the covariances' definiteness, :func:`class_sums` and
  :func:`class_scatter`, the per-class sums of the rows and of their outer
  products, at the cost of one product per class.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._validation import (
    as_class_indices,
    as_float_array,
    at_index,
    check_positive_int,
    check_scalar,
)

_MAX_COEF = 2.0**1000   # |L^-1| and |L^-1 mu| above this would overflow
#: The least log P(x) at which the log posterior is computed: there the rounding
#: of each log P(x, c), 2.2e-16 times its size, is about 2e-6; below, it grows
#: until it swamps the differences between the classes.
MIN_LOG_EVIDENCE = -1e10


# -- scaling, and the range of the log posterior ----------------------------------


def pow2_scale(x: np.ndarray) -> np.ndarray:
    """A power of two ``s >= max(1, |x| / 2)`` for each row of ``x`` (n, D); shape (n,).

    Dividing by a power of two is exact, so ``(x / s)`` loses nothing and a
    product rescaled by ``s * s`` at the end rounds exactly as the unscaled
    one would, except that it cannot overflow on the way.
    """
    _, exponent = np.frexp(np.maximum(np.abs(x).max(axis=-1), 1.0))
    return np.ldexp(1.0, np.minimum(exponent, 1023))   # 2**1024 would overflow


def check_resolved(log_evidence: np.ndarray, x: Any) -> None:
    r"""Refuse inputs whose log joints are too large for float64 to tell apart.

    :meth:`~scratchnet.gaussian.GaussianClasses.log_posterior` subtracts
    :math:`\log P(x)` from each :math:`\log P(x, c)`; each carries a rounding
    error of about :math:`2.2 \cdot 10^{-16}` times its size, so where
    :math:`\log P(x) < -10^{10}` (about :math:`1.4 \cdot 10^5` standard
    deviations from every class) the error would pass :math:`2 \cdot 10^{-6}`,
    and far beyond (:math:`10^{16}` standard deviations) it is larger than the
    differences between the classes: a posterior that does not sum to 1.
    Such inputs get a ValueError naming the first of them, rather than that
    (``tests/test_gaussian.py::test_inputs_too_far_for_float64_are_refused``).

    Parameters
    ----------
    log_evidence : ndarray, shape (n,)
        :math:`\log P(x)` of the rows of ``x``.
    x : array_like
        The inputs, for the message.

    Returns
    -------
    None
    """
    far = ~(log_evidence >= MIN_LOG_EVIDENCE)
    if far.any():
        i = int(np.argmax(far))
        row = np.asarray(x, dtype=np.float64).reshape(len(log_evidence), -1)[i]
        shown = ", ".join(f"{v:g}" for v in row[:4]) + (", ..." if row.size > 4 else "")
        shown = shown if row.size == 1 else f"[{shown}]"
        raise ValueError(
            f"x[{i}] = {shown} is too far from every class for float64: log P(x) = "
            f"{log_evidence[i]:.3g} (below {MIN_LOG_EVIDENCE:g}, about 1.4e5 standard "
            "deviations from every mean), where rounding swamps the differences "
            "between the classes' log joints; for two one-dimensional classes, "
            "sn.two_gaussian_posterior is exact at any distance")


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

    The Mahalanobis distances are formed from these coefficients; beyond
    2**1000 they would overflow at every input.
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


# -- fitting to labelled data ---------------------------------------------------------


def fit_inputs(x: Any, targets: Any, num_classes: int | None) -> tuple:
    """The checked ``(x (n, D) float64, targets (n,) in [0, M), M)`` of a fit.

    M is ``num_classes``, or the largest target + 1.
    """
    x = as_float_array(x, "x", allow_inf=False).astype(np.float64, copy=False)
    x = x.reshape(-1, 1) if x.ndim == 1 else x
    if x.ndim != 2 or x.shape[0] == 0 or x.shape[1] == 0:
        raise ValueError(f"x must have shape (n, D) with n, D >= 1; got shape "
                         f"{x.shape}")
    n = x.shape[0]
    t = np.asarray(targets)
    if t.dtype.kind not in "iu" or t.shape != (n,):
        raise (TypeError if t.dtype.kind not in "iu" else ValueError)(
            f"targets must be integer class indices of shape ({n},), one per row of "
            f"x; got dtype {t.dtype}, shape {t.shape}")
    m = (int(t.max()) + 1 if num_classes is None else
         check_positive_int(num_classes, "num_classes"))
    return x, as_class_indices(t, m), m


def check_class_counts(counts: np.ndarray, d: int, alpha: float) -> None:
    """Every class needs samples: D + 1 of them (no shrinkage) or 2 (shrinkage > 0).

    A class with none is a labelling matter (labels 1..M instead of 0..M-1,
    or ``num_classes`` too large), and is named as such.
    """
    empty = counts == 0
    if empty.any():
        c = int(np.argmax(empty))
        hint = ("labels that start at 1? subtract 1" if c == 0 else
                "number the classes that occur 0, 1, 2, ... without gaps")
        raise ValueError(f"targets must be class indices 0..M-1 with every class "
                         f"present (here M = {counts.size}); class {c} has no "
                         f"samples ({hint})")
    needed = 2 if alpha > 0 else d + 1
    few = counts < needed
    if few.any():
        c = int(np.argmax(few))
        why = ("a covariance shrunk toward a scaled identity" if alpha > 0 else
               f"a full-rank covariance in {d} dimensions without shrinkage "
               "(use shrinkage > 0, or fit_pca to fewer dimensions)")
        raise ValueError(f"targets must give every class at least {needed} samples "
                         f"for {why}; got {int(counts[c])} of class {c}")


def check_definite(covariances: np.ndarray, scale: np.ndarray, alpha: float) -> None:
    """Refuse covariances that are singular to rounding (data in a subspace)."""
    eig = np.linalg.eigvalsh(covariances)                          # ascending
    d = covariances.shape[-1]
    bad = ~(eig[:, 0] > d * np.finfo(float).eps * np.maximum(eig[:, -1], 0.0)) | (
        scale <= 0)
    if bad.any():
        c = int(np.argmax(bad))
        hint = ("its samples are all equal" if alpha > 0 else
                "its samples lie in a subspace (a feature that never changes?); "
                "use shrinkage > 0 or fit_pca")
        raise ValueError(f"the covariance of class {c} is not positive definite "
                         f"(smallest eigenvalue {eig[c, 0]:.3g}): {hint}")


def class_sums(x: np.ndarray, targets: np.ndarray, counts: np.ndarray) -> np.ndarray:
    r"""Per-class sums of the rows: :math:`\sum_{j: c_j = c} x_j`, shape (M, D).

    One sort groups the rows by class, ``np.add.reduceat`` adds each group
    (every count at least 1, as the fit checks first): no (n, M) one-hot.
    """
    first_row = np.concatenate([[0], np.cumsum(counts.astype(np.int64))[:-1]])
    return np.add.reduceat(x[np.argsort(targets, kind="stable")], first_row, axis=0)


def class_scatter(r: np.ndarray, targets: np.ndarray, counts: np.ndarray) -> np.ndarray:
    r"""Per-class sums of outer products: :math:`\sum_{j: c_j = c} r_j r_j^{\mathsf T}`.

    Parameters
    ----------
    r : ndarray, shape (n, D)
    targets : ndarray of int, shape (n,)
        Classes in ``[0, M)``.
    counts : ndarray, shape (M,)
        :math:`n_c`, each at least 1.

    Returns
    -------
    ndarray, shape (M, D, D)

    Notes
    -----
    One sort groups the rows by class; each class's rows are cut into blocks
    of ``B = max(D, 64)`` rows (the last one padded with zeros, which add
    nothing), one matrix product :math:`R_b^{\mathsf T} R_b` per block, and
    the blocks of each class are added (``np.add.reduceat``).  The work is
    that of the per-class products, about :math:`n D^2` (a one-hot
    weighted sum :math:`\sum_j Y_{jc} r_j r_j^{\mathsf T}` does :math:`M`
    times more), and the memory :math:`(n + M B) D + (n / B + M) D^2`, about
    the size of the data and of the result.
    """
    n, d = r.shape
    block = max(d, 64)
    blocks = -(-counts.astype(np.int64) // block)        # ceil(n_c / B) per class
    first_block = np.concatenate([[0], np.cumsum(blocks)[:-1]])
    first_row = np.concatenate([[0], np.cumsum(counts.astype(np.int64))[:-1]])
    order = np.argsort(targets, kind="stable")           # rows grouped by class
    c = targets[order]
    position = np.arange(n) - first_row[c]               # row within its class
    padded = np.zeros((int(blocks.sum()), block, d))
    padded[first_block[c] + position // block, position % block] = r[order]
    grams = padded.transpose(0, 2, 1) @ padded           # R_b^T R_b, (blocks, D, D)
    return np.add.reduceat(grams, first_block, axis=0)
