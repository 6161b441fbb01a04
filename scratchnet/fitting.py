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
Gaussians is quadratic discriminant analysis.

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

from ._validation import (
    as_class_indices,
    as_float_array,
    check_positive_int,
    check_scalar,
)

__all__ = ["PCA", "FittedToData", "GaussianParameters", "fit_gaussian_classes",
           "fit_pca"]


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
    The sums over the samples of each class are products with the one-hot
    matrix :math:`Y` (:math:`Y_{jc} = 1` if :math:`c_j = c`):
    :math:`n_c = \sum_j Y_{jc}`, :math:`\mu = \operatorname{diag}(n)^{-1}
    Y^{\mathsf T} X`, and :math:`S_c = \frac{1}{n_c} \sum_j Y_{jc}\,
    r_j r_j^{\mathsf T}` with :math:`r_j = x_j - \mu_{c_j}`: no loop over
    samples or classes.

    Examples
    --------
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
    x = as_float_array(x, "x", allow_inf=False).astype(np.float64, copy=False)
    x = x.reshape(-1, 1) if x.ndim == 1 else x
    if x.ndim != 2 or x.shape[0] == 0 or x.shape[1] == 0:
        raise ValueError(f"x must have shape (n, D) with n, D >= 1; got shape "
                         f"{x.shape}")
    n, d = x.shape
    alpha = check_scalar(shrinkage, "shrinkage", low=0.0, high=1.0)
    targets, m = _targets(targets, n, num_classes)
    onehot = np.zeros((n, m))
    onehot[np.arange(n), targets] = 1.0
    counts = onehot.sum(axis=0)                                     # n_c
    _check_counts(counts, d, alpha)
    means = (onehot.T @ x) / counts[:, None]                        # mu_c
    r = x - means[targets]                                          # r_j
    scatter = np.einsum("jc,jd,je->cde", onehot, r, r, optimize=True)
    s = scatter / counts[:, None, None]                             # S_c
    s = 0.5 * (s + s.transpose(0, 2, 1))            # exactly symmetric
    scale = np.trace(s, axis1=1, axis2=2) / d                       # tr S_c / D
    covariances = (1.0 - alpha) * s + alpha * scale[:, None, None] * np.eye(d)
    _check_definite(covariances, scale, alpha)
    return GaussianParameters(means, covariances, counts / n)


class FittedToData:
    """A generative model that can be fitted to data: the ``fit`` constructor.

    :class:`scratchnet.GaussianClasses` inherits :meth:`fit`, so that a
    fitted model is built like any other, ``GaussianClasses.fit(x, c)``.

    Attributes
    ----------
    fit : classmethod
        ``cls.fit(x, targets, *, shrinkage=0.0)``: the model fitted to a
        labelled sample by :func:`fit_gaussian_classes`.

    Examples
    --------
    >>> import scratchnet as sn
    >>> issubclass(sn.GaussianClasses, sn.fitting.FittedToData)
    True
    """

    @classmethod
    def fit(cls, x: Any, targets: Any, *, shrinkage: float = 0.0) -> Any:
        r"""Gaussian classes fitted to labelled data by maximum likelihood.

        Parameters
        ----------
        x : array_like, shape (n, D) (or (n,) for one feature)
        targets : array_like of int, shape (n,)
            Classes in ``[0, M)``, every one with samples.
        shrinkage : float in [0, 1], default 0.0
            :math:`\alpha`: :math:`\Sigma_c = (1 - \alpha) S_c + \alpha
            (\operatorname{tr} S_c / D) I`
            (:func:`scratchnet.fitting.fit_gaussian_classes`).

        Returns
        -------
        GaussianClasses
            Priors :math:`n_c / n`, the class means and covariances (divisor
            :math:`n_c`); its posterior is quadratic discriminant analysis.

        Examples
        --------
        >>> import scratchnet as sn
        >>> x, c = sn.GaussianClasses([[0.0, 0.0], [4.0, 0.0]],
        ...                           covariances=[np.eye(2)] * 2).sample(4000, rng=0)
        >>> sn.GaussianClasses.fit(x, c).means.round(1)
        array([[0., 0.],
               [4., 0.]])
        """
        means, covariances, priors = fit_gaussian_classes(x, targets,
                                                          shrinkage=shrinkage)
        return cls(means, covariances=covariances, priors=priors)


def _targets(targets: Any, n: int, num_classes: int | None) -> tuple:
    """``targets`` as n class indices in [0, M), and M (given, or the largest + 1)."""
    t = np.asarray(targets)
    if t.dtype.kind not in "iu" or t.shape != (n,):
        raise (TypeError if t.dtype.kind not in "iu" else ValueError)(
            f"targets must be integer class indices of shape ({n},), one per row of "
            f"x; got dtype {t.dtype}, shape {t.shape}")
    m = (int(t.max()) + 1 if num_classes is None else
         check_positive_int(num_classes, "num_classes"))
    return as_class_indices(t, m), m


def _check_counts(counts: np.ndarray, d: int, alpha: float) -> None:
    """Each class needs D + 1 samples (no shrinkage) or 2 (shrinkage > 0)."""
    needed = 2 if alpha > 0 else d + 1
    few = counts < needed
    if few.any():
        c = int(np.argmax(few))
        why = ("a covariance shrunk toward a scaled identity" if alpha > 0 else
               f"a full-rank covariance in {d} dimensions without shrinkage "
               "(use shrinkage > 0, or fit_pca to fewer dimensions)")
        raise ValueError(f"targets must give every class at least {needed} samples "
                         f"for {why}; got {int(counts[c])} of class {c}")


def _check_definite(covariances: np.ndarray, scale: np.ndarray, alpha: float) -> None:
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
