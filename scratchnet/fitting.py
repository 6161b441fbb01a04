r"""A generative model fitted to data: Gaussian classes by maximum likelihood.

On real data nobody hands us :math:`P(X, C)`.  The next best thing is a
model of it fitted to a labelled sample :math:`(x_j, c_j)_{j=1}^{n}`: give
each class a Gaussian, :math:`P(x \mid c) = \mathcal{N}(x; \mu_c, \Sigma_c)`,
and choose the parameters that make the sample most probable.  The maximum
of the log-likelihood :math:`\sum_j \log P(c_j) + \log P(x_j \mid c_j)` is
reached, class by class, at the sample's own frequencies and moments:

.. math::

    P(c) = \frac{n_c}{n}, \qquad
    \mu_c = \frac{1}{n_c} \sum_{j:\, c_j = c} x_j, \qquad
    S_c = \frac{1}{n_c} \sum_{j:\, c_j = c} (x_j - \mu_c)(x_j - \mu_c)^{\mathsf T},

with :math:`n_c` the number of samples of class :math:`c` (the divisor is
:math:`n_c`, not :math:`n_c - 1`: the likelihood's maximum, as in
scikit-learn's ``QuadraticDiscriminantAnalysis``).  Bayes' rule on these
Gaussians is quadratic discriminant analysis; the code is
:meth:`GaussianClasses.fit <scratchnet.gaussian.GaussianClasses.fit>`, which
sums the outer products class by class.

:math:`S_c` has rank at most :math:`n_c - 1`: with fewer than :math:`D + 1`
samples of a class in :math:`D` dimensions (or pixels that never change) it
is singular, and the density is infinite on a subspace.  *Shrinkage* pulls
it toward a multiple of the identity with the same average variance,

.. math::

    \Sigma_c = (1 - \alpha)\, S_c + \alpha\, \frac{\operatorname{tr} S_c}{D}\, I,
    \qquad 0 \le \alpha \le 1,

which is positive definite for every :math:`\alpha > 0` as soon as the
class's samples are not all equal (scikit-learn's ``shrunk_covariance``,
and ``QuadraticDiscriminantAnalysis(solver="eigen", shrinkage=alpha)``).
scikit-learn's ``reg_param`` :math:`r` instead mixes in the identity
itself, :math:`(1 - r) S_c + r I`: the two agree, with :math:`r = \alpha`,
when :math:`\operatorname{tr} S_c = D`.

A second way to make the fit well posed is to fit in fewer dimensions:
:func:`fit_pca` projects the inputs on their :math:`d` directions of largest
variance (a singular value decomposition of the centred data).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ._validation import as_float_array, check_positive_int
from .gaussian import GaussianClasses

__all__ = ["PCA", "GaussianParameters", "fit_gaussian_classes", "fit_pca"]


class GaussianParameters(NamedTuple):
    r"""The parameters of M Gaussian classes: what :func:`fit_gaussian_classes` returns.

    Parameters
    ----------
    means : ndarray, shape (M, D)
        :math:`\mu_c`.
    covariances : ndarray, shape (M, D, D)
        :math:`\Sigma_c`, symmetric positive definite.
    priors : ndarray, shape (M,)
        :math:`P(c)`.

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> p = sn.fitting.GaussianParameters(np.zeros((2, 1)), np.ones((2, 1, 1)),
    ...                                   np.array([0.5, 0.5]))
    >>> sn.GaussianClasses(*p).posterior([[0.0]])
    array([[0.5, 0.5]])
    """

    means: np.ndarray
    covariances: np.ndarray
    priors: np.ndarray


def fit_gaussian_classes(x: Any, targets: Any, *, shrinkage: float = 0.0,
                         num_classes: int | None = None) -> GaussianParameters:
    r"""Maximum-likelihood Gaussian classes, with optional covariance shrinkage.

    Parameters
    ----------
    x : array_like, shape (n, D) (or (n,) for one feature)
        Finite inputs.
    targets : array_like of int, shape (n,)
        Their classes, in ``[0, num_classes)``.
    shrinkage : float in [0, 1], default 0.0
        :math:`\alpha`: each covariance becomes
        :math:`(1 - \alpha) S_c + \alpha (\operatorname{tr} S_c / D) I`.
    num_classes : int, optional
        :math:`M`; by default ``targets.max() + 1``.  Every class must have
        samples.

    Returns
    -------
    GaussianParameters
        ``(means (M, D), covariances (M, D, D), priors (M,))``, float64:
        the class frequencies :math:`n_c / n`, means, and covariances with the
        divisor :math:`n_c`, shrunk.  ``GaussianClasses(*result)`` is the
        fitted generative model.

    Raises
    ------
    ValueError
        For targets out of range, and for a class with too few samples for
        its covariance to be positive definite: :math:`D + 1` without
        shrinkage, 2 with shrinkage (and samples not all equal); also when
        the data of a class lie in a subspace (a constant feature) and
        ``shrinkage`` is 0.

    Notes
    -----
    The formulas above, as :meth:`scratchnet.GaussianClasses.fit` computes
    them (its parameters, as arrays).

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> x = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0], [2.0, 2.0], [9.0, 9.0],
    ...               [11.0, 9.0], [9.0, 11.0], [11.0, 11.0]])
    >>> fit = sn.fitting.fit_gaussian_classes(x, [0, 0, 0, 0, 1, 1, 1, 1])
    >>> fit.means
    array([[ 1.,  1.],
           [10., 10.]])
    >>> fit.covariances[0]        # the divisor is n_c = 4
    array([[1., 0.],
           [0., 1.]])
    >>> fit.priors
    array([0.5, 0.5])
    """
    task = GaussianClasses.fit(x, targets, shrinkage=shrinkage,
                               num_classes=num_classes)
    return GaussianParameters(task.means, task.covariances, task.priors)


class PCA(NamedTuple):
    r"""A projection on the directions of largest variance, from :func:`fit_pca`.

    Parameters
    ----------
    mean : ndarray, shape (D,)
        The mean of the data it was fitted to.
    components : ndarray, shape (d, D)
        Orthonormal rows, the principal directions, by decreasing variance.
    variances : ndarray, shape (d,)
        The data's variance along each (divisor :math:`n - 1`).

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> pca = sn.fitting.PCA(np.zeros(2), np.array([[1.0, 0.0]]), np.array([4.0]))
    >>> pca.transform([[3.0, 5.0]])
    array([[3.]])
    """

    mean: np.ndarray
    components: np.ndarray
    variances: np.ndarray

    def transform(self, x: Any) -> np.ndarray:
        r"""Coordinates along the components: :math:`z = (x - \bar x) V^{\mathsf T}`.

        Parameters
        ----------
        x : array_like, shape (n, D)

        Returns
        -------
        ndarray, shape (n, d)

        Examples
        --------
        >>> import numpy as np
        >>> import scratchnet as sn
        >>> x = np.array([[0.0, 0.0], [2.0, 0.1], [4.0, -0.1]])
        >>> sn.fitting.fit_pca(x, 1).transform(x).round(2)
        array([[-2.],
               [-0.],
               [ 2.]])
        """
        x = as_float_array(x, "x", allow_inf=False)
        if x.ndim != 2 or x.shape[1] != self.mean.shape[0]:
            raise ValueError(f"x must have shape (n, {self.mean.shape[0]}); got "
                             f"shape {x.shape}")
        return (x - self.mean) @ self.components.T


def fit_pca(x: Any, dim: int) -> PCA:
    r"""Principal component analysis by a singular value decomposition.

    Parameters
    ----------
    x : array_like, shape (n, D)
        Finite data, n >= 2.
    dim : int
        :math:`d`, the number of components kept, in ``[1, min(n, D)]``.

    Returns
    -------
    PCA
        ``(mean, components, variances)``; ``.transform(x)`` projects.

    Notes
    -----
    With the centred data :math:`X - \bar x = U S V^{\mathsf T}`, the rows of
    :math:`V^{\mathsf T}` are the directions and :math:`s_k^2 / (n - 1)` the
    variances along them.  Each direction's sign is chosen so that its entry
    of largest magnitude is positive (scikit-learn's convention), which makes
    the result deterministic.

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> rng = np.random.default_rng(0)
    >>> x = rng.standard_normal((500, 3)) * [3.0, 1.0, 0.1]
    >>> pca = sn.fitting.fit_pca(x, 2)
    >>> np.abs(pca.components).round(1)
    array([[1., 0., 0.],
           [0., 1., 0.]])
    >>> pca.variances.round(1)                  # about 3^2 and 1^2
    array([8.7, 0.9])
    """
    x = as_float_array(x, "x", allow_inf=False).astype(np.float64, copy=False)
    if x.ndim != 2 or x.shape[0] < 2 or x.shape[1] == 0:
        raise ValueError(f"x must have shape (n, D) with n >= 2, D >= 1; got shape "
                         f"{x.shape}")
    dim = check_positive_int(dim, "dim")
    if dim > min(x.shape):
        raise ValueError(f"dim must be in [1, min(n, D)] = [1, {min(x.shape)}]; got "
                         f"{dim}")
    mean = x.mean(axis=0)
    _, s, vt = np.linalg.svd(x - mean, full_matrices=False)
    vt = vt[:dim]
    signs = np.sign(vt[np.arange(dim), np.abs(vt).argmax(axis=1)])
    return PCA(mean, vt * signs[:, None], s[:dim] ** 2 / (x.shape[0] - 1))
