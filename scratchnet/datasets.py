r"""A real data set, split three ways: train, validation, test.

The Gaussian tasks come with their generative model; real data do not.
:func:`load_digits` gives scikit-learn's bundled handwritten digits (1,797
images of 8 x 8 pixels with values 0-16, ten classes, shipped inside the
package: no download) as float arrays in :math:`[0, 1]`, split once and for
all by a seeded, stratified shuffle:

* **train**: what a network, or a generative model, is fitted to;
* **validation**: held out for choices made after training (a temperature,
  a shrinkage), so that they are not fitted to the test set;
* **test**: touched only to report the final numbers.

Stratified means each class is split in the same proportions, so that the
three parts have (to one sample) the class frequencies of the whole.
scikit-learn is an optional dependency: ``pip install "scratchnet[data]"``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ._validation import as_generator

__all__ = ["Dataset", "Splits", "load_digits", "make_mixed_scale", "stratified_split"]

INSTALL_HINT = 'pip install "scratchnet[data]"'


class Dataset(NamedTuple):
    """Inputs and their classes.

    Parameters
    ----------
    x : ndarray, shape (n, D)
    c : ndarray of int64, shape (n,)

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> x, c = sn.datasets.Dataset(np.zeros((2, 3)), np.array([0, 1]))
    >>> x.shape, c.tolist()
    ((2, 3), [0, 1])
    """

    x: np.ndarray
    c: np.ndarray


class Splits(NamedTuple):
    """A data set in three disjoint parts.

    Parameters
    ----------
    train, validation, test : Dataset

    Examples
    --------
    >>> import numpy as np
    >>> import scratchnet as sn
    >>> part = sn.datasets.Dataset(np.zeros((1, 2)), np.array([0]))
    >>> sn.datasets.Splits(part, part, part).test.x.shape
    (1, 2)
    """

    train: Dataset
    validation: Dataset
    test: Dataset


def stratified_split(targets: Any, fractions: Any = (0.6, 0.2, 0.2),
                     rng: Any = 0) -> tuple:
    r"""Indices of a stratified train / validation / test split.

    Parameters
    ----------
    targets : array_like of int, shape (n,)
        Class labels (non-negative integers).
    fractions : tuple of float, default (0.6, 0.2, 0.2)
        Positive shares of the parts, summing to 1: three (train,
        validation, test) or two (say train and validation).
    rng : numpy.random.Generator or int, default 0
        The shuffle; a seed makes the split the same on every call.

    Returns
    -------
    tuple of sorted int64 index arrays, one per share
        Disjoint, together ``0 .. n-1``.  Class :math:`c`'s :math:`n_c`
        samples, in a random order, go to the first part up to rank
        :math:`\operatorname{round}(f_1 n_c)`, to the second up to
        :math:`\operatorname{round}((f_1 + f_2) n_c)`, and so on.

    Notes
    -----
    One sort does it: order the samples by class, then by a random key; a
    sample's rank within its class is its position minus the position of
    its class's first sample.

    Examples
    --------
    >>> import scratchnet as sn
    >>> train, val, test = sn.datasets.stratified_split([0] * 5 + [1] * 5)
    >>> len(train), len(val), len(test)
    (6, 2, 2)
    >>> train, val = sn.datasets.stratified_split([0] * 5 + [1] * 5, (0.8, 0.2))
    >>> len(train), len(val)
    (8, 2)
    """
    t = np.asarray(targets)
    if t.dtype.kind not in "iu" or t.ndim != 1 or t.size == 0 or t.min() < 0:
        raise ValueError(f"targets must be a non-empty array of non-negative integer "
                         f"class indices 0, 1, ..., shape (n,) (encode other labels "
                         f"with np.unique(y, return_inverse=True)); got dtype "
                         f"{t.dtype}, shape {t.shape}")
    f = np.asarray(fractions, dtype=float)
    if f.shape not in ((2,), (3,)) or not np.all(f > 0) or abs(f.sum() - 1) > 1e-9:
        raise ValueError(f"fractions must be two or three positive shares summing "
                         f"to 1; got {fractions!r}")
    key = as_generator(rng).random(t.size)
    order = np.lexsort((key, t))                       # by class, then at random
    counts = np.bincount(t)
    first = np.concatenate(([0], np.cumsum(counts)[:-1]))
    rank = np.arange(t.size) - first[t[order]]         # rank within the class
    cuts = np.rint(np.cumsum(f)[:-1, None] * counts[t[order]]).astype(np.int64)
    part = (rank >= cuts).sum(axis=0)                  # cuts passed = the part
    return tuple(np.sort(order[part == k]) for k in range(len(f)))


def load_digits(*, seed: int = 0, fractions: Any = (0.6, 0.2, 0.2),
                dtype: Any = np.float64) -> Splits:
    r"""scikit-learn's 8 x 8 handwritten digits, scaled to [0, 1] and split.

    Parameters
    ----------
    seed : int, default 0
        The seed of the stratified split (:func:`stratified_split`).
    fractions : (float, float, float), default (0.6, 0.2, 0.2)
        Shares of train, validation and test.
    dtype : {np.float64, np.float32}, default np.float64
        The inputs' dtype.

    Returns
    -------
    Splits
        ``train``, ``validation`` and ``test``, each a :class:`Dataset`
        ``(x, c)``: ``x`` of shape (n, 64), the pixels divided by 16 (row by
        row), ``c`` int64 digits 0-9.  With the defaults: 1,078, 360 and 359
        images.

    Raises
    ------
    ImportError
        Without scikit-learn, naming the extra that installs it.

    Examples
    --------
    >>> import scratchnet as sn
    >>> digits = sn.datasets.load_digits()
    >>> digits.train.x.shape, digits.validation.x.shape, digits.test.x.shape
    ((1078, 64), (360, 64), (359, 64))
    >>> float(digits.train.x.max()), digits.train.c.dtype
    (1.0, dtype('int64'))
    """
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be a non-negative integer; got {seed!r}")
    if seed < 0:
        raise ValueError(f"seed must be a non-negative integer; got {seed}")
    if dtype not in (np.float64, np.float32, "float64", "float32"):
        raise ValueError(f"dtype must be np.float64 or np.float32; got {dtype!r}")
    if np.shape(fractions) != (3,):
        raise ValueError(f"fractions must be three shares (train, validation, test); "
                         f"got {fractions!r}")
    try:
        from sklearn.datasets import load_digits as sklearn_digits
    except ImportError:
        raise ImportError("load_digits needs scikit-learn, which ships the digits "
                          f"(no download): {INSTALL_HINT}") from None
    bunch = sklearn_digits()
    x = (np.asarray(bunch.data, dtype=np.float64) / 16.0).astype(dtype)
    c = np.asarray(bunch.target, dtype=np.int64)
    parts = stratified_split(c, fractions, seed)
    return Splits(*(Dataset(x[i], c[i]) for i in parts))


def make_mixed_scale(n: int = 2000, d: int = 20, *, seed: int = 0) -> tuple:
    r"""A practitioner's table: ``d`` correlated features on scales 1e-3 to 1e3.

    Three classes, ``"alpha"``, ``"beta"`` and ``"gamma"`` (priors 0.5, 0.3,
    0.2), with Gaussian class conditionals that overlap (a fitted quadratic
    discriminant scores about 0.81 accuracy and 0.47 nats under 5-fold
    cross-validation after standardisation), and then feature :math:`k`
    shifted and multiplied by :math:`10^{-3 + 6k / (d - 1)}`: the kind of
    raw table (grams beside kilometres) on which an unscaled model misleads.

    Parameters
    ----------
    n : int, default 2000
    d : int, default 20
        At least 2.
    seed : int, default 0

    Returns
    -------
    x : ndarray of float64, shape (n, d)
    labels : ndarray of str, shape (n,)

    Notes
    -----
    :math:`c \sim \mathrm{Cat}(0.5, 0.3, 0.2)`,
    :math:`z = \mu_c + A \varepsilon` with :math:`\varepsilon \sim N(0, I)`,
    :math:`A = I + 0.4 G / \sqrt d` (:math:`G` standard normal entries, drawn
    once), half of each mean's entries :math:`N(0, 0.5^2)` and the rest 0;
    then :math:`x_k = s_k (z_k + o_k)` with offsets :math:`o_k \sim N(0, 3^2)`.

    Examples
    --------
    >>> import scratchnet as sn
    >>> x, labels = sn.datasets.make_mixed_scale(seed=0)
    >>> x.shape, sorted(set(labels.tolist()))
    ((2000, 20), ['alpha', 'beta', 'gamma'])
    >>> bool(x[:, 0].std() < 0.01 < 100 < x[:, -1].std())
    True
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 3:
        raise ValueError(f"n must be an integer >= 3; got {n!r}")
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 2:
        raise ValueError(f"d must be an integer >= 2; got {d!r}")
    rng = as_generator(seed)
    c = rng.choice(3, size=n, p=[0.5, 0.3, 0.2])
    means = rng.normal(0.0, 0.5, size=(3, d)) * (rng.random(d) < 0.5)
    mixing = np.eye(d) + 0.4 * rng.normal(size=(d, d)) / np.sqrt(d)
    z = means[c] + rng.normal(size=(n, d)) @ mixing.T
    scales = 10.0 ** np.linspace(-3.0, 3.0, d)
    x = (z + rng.normal(0.0, 3.0, d)) * scales
    return x, np.array(["alpha", "beta", "gamma"])[c]
