r"""The Gaussian classes' posterior, engineered: by blocks, one factor per class.

:meth:`scratchnet.GaussianClasses.log_posterior` is Bayes' rule as written:
every row against every class at once, an (n, M, D) array of differences
and an ``einsum`` over it, then the log joint computed a second time for the
evidence.  That reads like the formula and costs about :math:`3 n M D`
floats of memory and no BLAS.  :func:`chunked_log_posterior` computes the
same numbers the way scikit-learn's ``QuadraticDiscriminantAnalysis`` does:

* once per class, the Cholesky factor :math:`\Sigma_c = L_c L_c^{\mathsf T}`
  and the triangular solve :math:`W_c = L_c^{-1}` (so
  :math:`(x - \mu_c)^{\mathsf T} \Sigma_c^{-1} (x - \mu_c) = \lVert W_c (x -
  \mu_c) \rVert^2`), and :math:`\log \det \Sigma_c = 2 \sum_i \log (L_c)_{ii}`;
* then, a block of rows at a time, one matrix product per class
  :math:`(X_b - \mu_c) W_c^{\mathsf T}` (BLAS), the log joint, its
  ``logsumexp`` and the difference, written into the (n, M) result.

The blocks hold at most ``block_bytes`` of differences, so the memory beyond
the result is bounded whatever n is.  ``tests/test_fast_gaussian.py`` pins it
to the chapter's method.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._mixture import check_resolved
from ..softmax import logsumexp

__all__ = ["chunked_log_posterior"]


def chunked_log_posterior(task: Any, x: np.ndarray, *,
                          block_bytes: int = 1 << 23) -> np.ndarray:
    r"""``task.log_posterior(x)`` of D-dimensional Gaussian classes, by blocks of rows.

    Parameters
    ----------
    task : scratchnet.GaussianClasses
        With means of shape (M, D) and covariances (M, D, D).
    x : ndarray of float64, shape (n, D)
        Finite inputs (checked by the caller).
    block_bytes : int, default 8 MiB
        Memory of one block of differences :math:`X_b - \mu_c` (and of its
        product); a block has at least one row.

    Returns
    -------
    ndarray, shape (n, M)
        :math:`\log P(c \mid x)`, equal to the chapter's to rounding.

    Raises
    ------
    ValueError
        Where the chapter's method raises (inputs too far from every class
        for float64: :func:`scratchnet._mixture.check_resolved`).

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> from scratchnet.fast.gaussian import chunked_log_posterior
    >>> task = sn.GaussianClasses([[0.0, 0.0], [2.0, 1.0]],
    ...                           covariances=[np.eye(2), [[2.0, 0.5], [0.5, 1.0]]])
    >>> x = np.array([[0.5, 0.5], [3.0, -1.0]])
    >>> bool(np.allclose(chunked_log_posterior(task, x), task.log_posterior(x)))
    True
    """
    means = np.asarray(task.means, dtype=np.float64)
    covariances = np.asarray(task.covariances, dtype=np.float64)
    m, d = means.shape
    chol = np.linalg.cholesky(covariances)                       # Sigma_c = L_c L_c^T
    w_t = np.linalg.solve(chol, np.eye(d)).transpose(0, 2, 1)    # (L_c^{-1})^T
    log_det_l = np.log(np.diagonal(chol, axis1=1, axis2=2)).sum(axis=1)
    offset = np.log(task.priors) - log_det_l - 0.5 * d * math.log(2.0 * math.pi)
    n = len(x)
    out = np.empty((n, m))
    rows = max(1, int(block_bytes) // (16 * max(d, 1)))
    diff, whitened = np.empty((min(rows, n), d)), np.empty((min(rows, n), d))
    for start in range(0, n, rows):
        block = x[start:start + rows]
        b = len(block)
        joint = out[start:start + b]                              # a view
        for c in range(m):
            np.subtract(block, means[c], out=diff[:b])            # x - mu_c
            np.matmul(diff[:b], w_t[c], out=whitened[:b])         # L_c^{-1}(x - mu_c)
            np.einsum("ij,ij->i", whitened[:b], whitened[:b], out=joint[:, c])
        joint *= -0.5                               # log P(x | c) + log P(c):
        joint += offset                             # -maha/2 - log det L + log P(c)
        evidence = logsumexp(joint, axis=1)                       # log P(x)
        check_resolved(evidence, block)
        joint -= evidence[:, None]
    return out
