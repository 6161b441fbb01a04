r"""Private machinery behind :mod:`scratchnet.gaussian` and :mod:`scratchnet.bayes`.

Nothing here is new mathematics; it is the plumbing that turns the integrals
and equations of those chapters into numbers accurate to about :math:`10^{-10}`,
or says, before allocating anything, that it cannot:

* **Composite Gauss-Legendre quadrature** for :math:`\mathbb{E}_{x \sim P(X)}`
  over a mixture of normals in one or two dimensions: 8 nodes per panel,
  panels no wider than one standard deviation of the classes present there
  (and narrower where the posterior between two overlapping classes turns
  fast), over :math:`\pm 10` standard deviations around every class,
  combined as a tensor product in two dimensions.  The grid's size is
  counted first, without building it; grids larger than ``_MAX_NODES``
  nodes or ``_MAX_ENTRIES`` nodes times classes, or panels too narrow for
  float64 to place nodes in (far from the origin), are refused, and the
  caller falls back to Monte Carlo.  For integrands with kinks (a ReLU
  network's output), which Gauss-Legendre resolves only to :math:`O(h^2)`
  when a kink falls inside a panel, the one-dimensional rule splits every
  panel into ``_KINK_SUBPANELS`` (within the same limits): about
  :math:`10^{-7}` relative instead of :math:`10^{-3}`.
* **Crossings and normal-CDF masses**: where two weighted normals are equal
  (a quadratic equation solved without cancellation), and the integral of
  :math:`\max_c P(c)\,\mathcal{N}(x;\mu_c,\sigma_c^2)` as a sum of normal
  masses between crossings, which gives the Bayes accuracy exactly although
  the integrand has kinks that quadrature would resolve only to
  :math:`O(h^2)`; refused too when the :math:`O(K M^3)` work would be too
  large.  **Mixture quantiles** by bisection on the tails.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

_TAIL_SDS = 10.0        # quadrature range: this many standard deviations per class
_NODES_PER_PANEL = 8    # Gauss-Legendre nodes in each panel
_MAX_NODES = 250_000    # larger quadrature grids are refused (Monte Carlo instead)
_KINK_SUBPANELS = 64    # 1-D panels split this many ways for integrands with kinks
_MAX_ENTRIES = 2**22    # nodes x classes: the posterior cached at the nodes
_RESOLUTION = 2.0**-20  # smallest panel width relative to |x|: nodes placed to 2e-10
_BLOCK = 2**18          # entries (intervals x classes) scored at once
_MAX_WORK = 2**25       # rows x intervals x classes of the exact accuracy
_LOG_2PI = math.log(2.0 * math.pi)
_erfc = np.frompyfunc(math.erfc, 1, 1)  # NumPy has no erf; math.erfc, elementwise


# -- quadrature over a mixture of normals ------------------------------------------


def _panel_widths(mu: np.ndarray, reach: np.ndarray, narrow: np.ndarray) -> np.ndarray:
    """The panel width near each class (M,): its narrowest standard deviation,
    narrower where the posterior against an overlapping class turns fast.

    Between classes c and r the log posterior ratio has a slope of about
    |mu_c - mu_r| / sd^2, so a panel of 6 sd^2 / |mu_c - mu_r| (sd the wider
    of the two) resolves the turn.  Only classes whose ranges ``mu +- reach``
    (shape (M, D)) overlap count: elsewhere P(x) is below e^-50.
    """
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        gap = np.abs(mu[:, None, :] - mu[None, :, :])                 # (M, M, D)
        overlap = np.all(gap < reach[:, None, :] + reach[None, :, :], axis=-1)
        wider, far = np.maximum(narrow[:, None], narrow[None, :]), gap.max(axis=-1)
        turn = 6.0 * narrow[:, None] * (wider / far)
    return np.minimum(narrow, np.where(overlap & (far > 0), turn, np.inf).min(axis=1))


def _edge_count(centre: np.ndarray, extent: np.ndarray, width: np.ndarray,
                order: np.ndarray) -> float:
    """How many edges ``_panel_edges`` keeps, counted (in float) without making them.

    Class c's grid points are centre_c + width_c k, |k| <= extent_c; those
    inside a finer class's range are dropped.  The dropped k form a union of
    integer intervals, counted by merging them in order.
    """
    total = 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        for rank, c in enumerate(order):
            finer = order[:rank]
            half = extent[finer] * width[finer]
            lo = np.floor((centre[finer] - half - centre[c]) / width[c]) + 1
            hi = np.ceil((centre[finer] + half - centre[c]) / width[c]) - 1
            by_lo = np.argsort(lo)
            lo, hi = np.maximum(lo, -extent[c])[by_lo], np.minimum(hi, extent[c])[by_lo]
            start = np.maximum(lo, np.concatenate([[-np.inf],
                                                   np.maximum.accumulate(hi)[:-1] + 1]))
            dropped = np.maximum(hi - start + 1, 0.0).sum()
            total += 2.0 * extent[c] + 1.0 - dropped
    return total


def _panel_edges(centre: np.ndarray, reach: np.ndarray, width: np.ndarray,
                 limit: float) -> np.ndarray | None:
    """Edges covering each range centre_c +- reach_c with panels <= width_c there.

    Where ranges overlap the finer grid wins, so classes of very different
    scales do not multiply the number of panels.  None, before anything is
    allocated, if there would be more than ``limit`` edges or if the panels
    are too narrow for float64 to tell the nodes apart.
    """
    order = np.lexsort((np.arange(len(width)), width))      # finest first
    extent = np.ceil(reach / width)                          # panels per side
    far = np.abs(centre) + reach
    if (not np.all(width >= _RESOLUTION * far)
            or not _edge_count(centre, extent, width, order) <= limit):
        return None
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


def _axis_sds(chol: np.ndarray) -> np.ndarray:
    """Standard deviations along the axes, sqrt(diag(L L^T)), shape (M, D).

    Each row of L is scaled by its largest entry first, so that a standard
    deviation of 1e-300 (or 1e300) does not underflow (overflow) when squared.
    """
    big = np.abs(chol).max(axis=2)
    return big * np.sqrt(((chol / big[..., None]) ** 2).sum(axis=2))


def _split_panels(edges: np.ndarray, parts: int) -> np.ndarray:
    """The edges with every panel between them split into ``parts`` equal panels."""
    inner = edges[:-1, None] + np.diff(edges)[:, None] * (np.arange(parts) / parts)
    return np.append(inner.ravel(), edges[-1])


def _mixture_axis_rules(mu: np.ndarray, chol: np.ndarray, kinked: bool = False
                        ) -> list | None:
    """Nodes and weights along each axis for classes N(mu_c, L_c L_c^T): D pairs.

    ``mu`` has shape (M, D), ``chol`` (M, D, D).  None, before anything is
    built, if D > 2 or an axis would need more than ``_MAX_NODES`` nodes.
    ``kinked`` and D = 1: every panel split into up to ``_KINK_SUBPANELS``,
    as many as ``_MAX_NODES`` and ``_MAX_ENTRIES`` (nodes x classes) allow.
    """
    if mu.shape[1] > 2:
        return None
    sd_axes = _axis_sds(chol)                                      # (M, D)
    narrow = np.linalg.svd(chol, compute_uv=False).min(axis=1)   # sqrt(min eig)
    if not np.all(narrow > 0):
        return None
    width = _panel_widths(mu, _TAIL_SDS * sd_axes, narrow)
    edges = [_panel_edges(centre, _TAIL_SDS * sd, width, _MAX_NODES / _NODES_PER_PANEL)
             for centre, sd in zip(mu.T, sd_axes.T)]
    if any(e is None for e in edges):
        return None
    if kinked and len(edges) == 1:
        room = min(_MAX_NODES, _MAX_ENTRIES // len(mu)) // (_NODES_PER_PANEL
                                                            * len(edges[0]))
        edges = [_split_panels(edges[0], max(1, min(_KINK_SUBPANELS, room)))]
    return [_gauss_legendre(e) for e in edges]


def mixture_rule(mu: np.ndarray, chol: np.ndarray, density: Callable,
                  kinked: bool = False) -> tuple | None:
    """Nodes x_k (K, D) and weights W_k with sum_k W_k f(x_k) ~ E_{P(X)} f.

    The tensor product of the per-axis rules with the density ``density(x)``
    of P(X), evaluated a block of nodes at a time, folded into the weights,
    dropping nodes whose weight cannot matter.  None, before the product is
    formed, if D > 2, if an axis needs too many nodes, if K would exceed
    ``_MAX_NODES`` or K times the number of classes ``_MAX_ENTRIES``.
    ``kinked``: a rule for integrands with kinks (denser in 1-D).
    """
    axes = _mixture_axis_rules(mu, chol, kinked)
    size = math.inf if axes is None else math.prod(len(a[0]) for a in axes)
    if size > _MAX_NODES or size * len(mu) > _MAX_ENTRIES:
        return None
    x = np.stack(np.meshgrid(*[a[0] for a in axes], indexing="ij"), axis=-1)
    w = np.prod(np.meshgrid(*[a[1] for a in axes], indexing="ij"), axis=0)
    x, w = x.reshape(-1, len(axes)), w.ravel()
    weights = w * np.concatenate([density(x[i:i + 4096])
                                  for i in range(0, len(x), 4096)])
    keep = weights > 1e-30 * weights.max()   # nodes that cannot matter
    return x[keep], weights[keep]


# -- crossings and normal masses: the exact Bayes accuracy ----------------------------


def normal_crossings(log_w: np.ndarray, mean: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """Where two weighted normals w_c N(x; mean_c, sd_c^2) are equal, for every pair.

    ``log_w``, ``mean``, ``sd`` have shape (..., M); returns shape (..., P, 2)
    over the pairs j < k, NaN where a pair has fewer than two real roots.
    With u = x - mean_j and d = mean_k - mean_j (no squares of large means),
    log w_j N_j - log w_k N_k = a u^2 + b u + e, solved without cancellation
    as t / a and e / t with t = -(b + sign(b) sqrt(b^2 - 4ae)) / 2.
    """
    j, k = np.triu_indices(log_w.shape[-1], 1)
    pj, pk = (1.0 / sd[..., j]) ** 2, (1.0 / sd[..., k]) ** 2
    d = mean[..., k] - mean[..., j]
    a = 0.5 * (pk - pj)
    b = -pk * d
    e = (0.5 * pk * d * d
         + (log_w[..., j] - np.log(sd[..., j])) - (log_w[..., k] - np.log(sd[..., k])))
    with np.errstate(all="ignore"):
        disc = b * b - 4.0 * a * e
        t = -0.5 * (b + np.copysign(np.sqrt(disc), b))
        quadratic = (a != 0) & (disc >= 0)
        linear = (a == 0) & (b != 0)
        first = np.where(quadratic, t / a, np.where(linear, -e / b, np.nan))
        second = np.where(quadratic & (t != 0), e / t, np.nan)
    return mean[..., j, None] + np.stack([first, second], axis=-1)


def _normal_mass(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """P(lo < Z < hi) for a standard normal Z, from the tail nearer the interval."""
    r = 1.0 / math.sqrt(2.0)
    upper = 0.5 * (_erfc(lo * r) - _erfc(hi * r)).astype(np.float64)
    lower = 0.5 * (_erfc(-hi * r) - _erfc(-lo * r)).astype(np.float64)
    return np.where(lo > 0, upper, lower)


def _winner_mass(log_w: np.ndarray, mean: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """Integral of max_c w_c N(x; mean_c, sd_c^2) over the real line, per row (K,).

    Between consecutive crossings the winning class is constant: find it at
    each interval's midpoint (a block of intervals at a time), merge
    neighbouring intervals with the same winner, and add the winner's normal
    mass on each merged interval.
    """
    k, m = log_w.shape
    roots = normal_crossings(log_w, mean, sd).reshape(k, -1)
    roots = np.sort(np.where(np.isnan(roots), np.inf, roots), axis=1)
    inf = np.full((k, 1), np.inf)
    lo = np.concatenate([-inf, roots], axis=1).ravel()       # (K * intervals,)
    hi = np.concatenate([roots, inf], axis=1).ravel()
    big = np.finfo(np.float64).max
    with np.errstate(invalid="ignore", over="ignore"):   # a point inside each interval
        mid = np.where(np.isfinite(lo),
                       np.where(np.isfinite(hi), 0.5 * lo + 0.5 * hi,
                                np.minimum(lo + 1.0 + np.abs(lo), big)),
                       np.maximum(hi - 1.0 - np.abs(hi), -big))
    mid = np.where(np.isfinite(mid), mid, 0.0)
    row = np.repeat(np.arange(k), len(lo) // k)
    winner = np.empty(len(lo), dtype=np.intp)
    step = max(1, _BLOCK // m)
    for i in range(0, len(lo), step):
        r, x = row[i:i + step], mid[i:i + step, None]
        score = log_w[r] - np.log(sd[r]) - 0.5 * ((x - mean[r]) / sd[r]) ** 2
        winner[i:i + step] = score.argmax(axis=1)
    first = np.flatnonzero(np.r_[True, (winner[1:] != winner[:-1])
                                 | (row[1:] != row[:-1])])     # runs of one winner
    last = np.r_[first[1:], len(lo)] - 1
    r, c = row[first], winner[first]
    m_, s = mean[r, c], sd[r, c]
    mass = np.exp(log_w[r, c]) * _normal_mass((lo[first] - m_) / s, (hi[last] - m_) / s)
    return np.bincount(r, weights=mass, minlength=k)


def mixture_accuracy(mu: np.ndarray, chol: np.ndarray, priors: np.ndarray
                      ) -> float | None:
    """The integral of max_c P(c) N(x; mu_c, L_c L_c^T) in one or two dimensions.

    In 1-D, sum over the intervals between crossings of the winning class's
    probability mass there (normal CDFs).  In 2-D the same along x2 for each
    node x1 of the quadrature rule along the first axis: the slice of class c is
    N(x1; mu_c1, L_11^2) times N(x2; conditional mean, L_22^2).  Computed
    relative to the first mean.  None if D > 2, if that rule is too large,
    if the K M^2 intervals times M classes
    would exceed ``_MAX_WORK``, or if a mean or 1 is 1e75 standard deviations
    (the quadratics would overflow).
    """
    m, d = len(priors), mu.shape[1]
    axes = _mixture_axis_rules(mu, chol) if d == 2 else None
    if d > 2 or (d == 2 and axes is None):
        return None
    rows = 1 if d == 1 else len(axes[0][0])
    mu_ref = mu[0]
    mu = mu - mu_ref                    # translation invariant: no squares of 1e20
    ratio = np.maximum(1.0, np.abs(mu)) / np.diagonal(chol, axis1=1, axis2=2)
    if rows * (m * (m - 1) + 1) * max(m, 8) > _MAX_WORK or not np.all(ratio < 1e75):
        return None
    log_w = np.log(priors)[None, :]
    mean, sd = mu[None, :, 0], chol[None, :, 0, 0]
    if mu.shape[1] == 1:
        return float(_winner_mass(log_w, mean, sd)[0])
    x1, g = axes[0][0] - mu_ref[0], axes[0][1]
    l11, l21, l22 = chol[:, 0, 0], chol[:, 1, 0], chol[:, 1, 1]
    z1 = (x1[:, None] - mean) / sd                                 # (K, M)
    log_w = log_w - np.log(l11) - 0.5 * _LOG_2PI - 0.5 * z1**2
    cond_mean = mu[:, 1] + l21 * z1
    return float(g @ _winner_mass(log_w, cond_mean, np.broadcast_to(l22, z1.shape)))


def mixture_quantile(mu: np.ndarray, chol: np.ndarray, priors: np.ndarray,
                      tail: float, *, upper: bool) -> np.ndarray:
    """Per axis, where the lower (upper) tail of sum_c P(c) N(mu_c, sd_c^2) is ``tail``.

    Bisection, vectorised over the D axes, until the bracket cannot shrink;
    sd_c are the standard deviations along the axes of N(mu_c, L_c L_c^T).
    """
    sd, sign = _axis_sds(chol), (1.0 if upper else -1.0)
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
