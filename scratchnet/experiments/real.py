r"""Bring your own data: the digits study on any labelled table.

:func:`scratchnet.experiments.digits.run_digits` asks two questions of a
data set whose generative model nobody knows: does a network trained on
samples of a *fitted* model learn that model's exact posterior (the
semi-synthetic study), and how does a network trained on the data compare
with the fitted model's posterior on held-out data, before and after
temperature scaling?  This module gives it any data set
(``python -m scratchnet real --dataset wine``):

* scikit-learn's bundled ``digits``, ``iris``, ``wine`` and
  ``breast_cancer`` (no download), or a CSV file with a header row, one
  column of labels (``--target``, the last by default; any strings) and
  numeric features;
* labels encoded as :math:`0 .. M-1` in sorted order (``classes``);
* a stratified 60 / 20 / 20 split into train, validation and test
  (:func:`scratchnet.datasets.stratified_split`);
* a standardisation step: each feature centred and divided by its standard
  deviation *on the training split*.  Shrinkage toward
  :math:`(\operatorname{tr} S / D)\, I` mixes the features' variances, so
  without it a feature measured in thousands (wine's proline) dominates
  every shrunk covariance.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any, Callable, NamedTuple, Optional

import numpy as np

from ..datasets import INSTALL_HINT, Dataset, Splits, stratified_split
from .digits import DigitsSettings, run_digits

__all__ = ["BUNDLED", "MIN_PER_CLASS", "REAL_SETTINGS", "Table", "load_table",
           "read_csv", "run_real", "standardize"]

BUNDLED = ("digits", "iris", "wine", "breast_cancer")  #: scikit-learn's, no download
MIN_PER_CLASS = 5  #: samples of each class the three-way split needs
#: ``python -m scratchnet real``'s defaults: the digits study's with 3 seeds, so
#: that wine or breast_cancer take under a minute on 2 shared cores
REAL_SETTINGS = DigitsSettings(seeds=3)


class Table(NamedTuple):
    """A labelled data set, split, with the names of its classes and features.

    Parameters
    ----------
    splits : Splits
        Train, validation and test; classes encoded :math:`0 .. M-1`.
    classes : ndarray, shape (M,)
        The labels, sorted: class :math:`c` is ``classes[c]``.
    features : list of str
    name : str

    Examples
    --------
    >>> from scratchnet.experiments.real import load_table
    >>> table = load_table("iris")
    >>> table.classes.tolist(), table.splits.train.x.shape
    (['setosa', 'versicolor', 'virginica'], (90, 4))
    """

    splits: Splits
    classes: np.ndarray
    features: list
    name: str


def read_csv(path: Any, target: Optional[str] = None) -> tuple:
    """Numeric features and labels from a CSV file with a header row.

    Parameters
    ----------
    path : str or pathlib.Path
    target : str, optional
        The column of labels (any text); by default the last column.

    Returns
    -------
    x : ndarray of float64, shape (n, D)
    labels : ndarray of str, shape (n,)
    features : list of str
        The other columns' names, in order.

    Raises
    ------
    ValueError
        For a missing target column, a row of the wrong length, a feature
        that is not a number (naming the line, the column and the text),
        or a missing value.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from scratchnet.experiments.real import read_csv
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = Path(tmp) / "fruit.csv"
    ...     _ = path.write_text("weight,colour,kind\\n120,0.2,apple\\n150,0.9,pear\\n")
    ...     x, labels, features = read_csv(path)
    >>> x.tolist(), labels.tolist(), features
    ([[120.0, 0.2], [150.0, 0.9]], ['apple', 'pear'], ['weight', 'colour'])
    """
    path = Path(path)
    with path.open(newline="") as f:
        rows = [row for row in csv.reader(f) if any(cell.strip() for cell in row)]
    if len(rows) < 2:
        raise ValueError(f"{path} must have a header row and at least one row of "
                         f"data; got {len(rows)} row(s)")
    header = [name.strip() for name in rows[0]]
    target = header[-1] if target is None else target
    if target not in header:
        raise ValueError(f"--target {target!r} is not a column of {path}; its "
                         f"columns are {', '.join(map(repr, header))}")
    bad = next((i for i, row in enumerate(rows) if len(row) != len(header)), None)
    if bad is not None:
        raise ValueError(f"{path}, line {bad + 1}: {len(rows[bad])} fields where the "
                         f"header has {len(header)}")
    k = header.index(target)
    cells = np.array(rows[1:], dtype=str)
    labels = np.char.strip(cells[:, k])
    features = header[:k] + header[k + 1:]
    text = np.delete(cells, k, axis=1)
    try:
        x = np.char.strip(text).astype(np.float64)
    except ValueError:
        x = None
    if x is None or not np.isfinite(x).all():
        line, col = _first_bad_cell(text)
        raise ValueError(f"{path}, line {line + 2}, column {features[col]!r}: "
                         f"{str(text[line, col])!r} is not a finite number; every "
                         f"column but the target ({target!r}) must be numeric (encode "
                         "categories as numbers, fill or drop missing values)")
    return x, labels, features


def _first_bad_cell(text: np.ndarray) -> tuple:
    """(row, column) of the first cell that is not a finite number."""
    def finite(cell: str) -> bool:
        try:
            return bool(np.isfinite(float(cell)))
        except ValueError:
            return False
    ok = np.vectorize(finite, otypes=[bool])(text)
    return tuple(int(i) for i in np.argwhere(~ok)[0])


def _bundled(name: str) -> tuple:
    """One of scikit-learn's bundled data sets: (x, labels, features)."""
    try:
        from sklearn import datasets
    except ImportError:
        raise ImportError(f"--dataset {name} needs scikit-learn, which ships it (no "
                          f"download): {INSTALL_HINT}") from None
    bunch = getattr(datasets, f"load_{name}")()
    names = np.asarray(getattr(bunch, "target_names", np.unique(bunch.target)))
    labels = names[bunch.target].astype(str)
    features = [str(f) for f in getattr(bunch, "feature_names", [])] or [
        f"x{j}" for j in range(bunch.data.shape[1])]
    return np.asarray(bunch.data, dtype=np.float64), labels, features


def load_table(source: Any, target: Optional[str] = None, *, seed: int = 0
               ) -> Table:
    """A bundled data set or a CSV file, labels encoded, split 60 / 20 / 20.

    Parameters
    ----------
    source : str or pathlib.Path
        One of :data:`BUNDLED`, or the path of a CSV file (:func:`read_csv`).
    target : str, optional
        The CSV file's label column (by default its last).
    seed : int, default 0
        The stratified split's seed.

    Returns
    -------
    Table
        Not standardised (see :func:`standardize`).

    Raises
    ------
    ValueError
        A class with fewer than :data:`MIN_PER_CLASS` samples, fewer than two
        classes, and :func:`read_csv`'s errors.

    Examples
    --------
    >>> from scratchnet.experiments.real import load_table
    >>> table = load_table("wine")
    >>> [len(part.c) for part in table.splits], table.features[-1]
    ([107, 35, 36], 'proline')
    """
    name = str(source)
    if name in BUNDLED:
        x, labels, features = _bundled(name)
    else:
        path = Path(source)
        if path.suffix.lower() != ".csv" or not path.is_file():
            raise ValueError(f"--dataset must be one of {', '.join(BUNDLED)} or the "
                             f"path of a .csv file; got {name!r}")
        x, labels, features = read_csv(path, target)
        name = path.stem
    classes, codes, counts = np.unique(labels, return_inverse=True,
                                       return_counts=True)
    if len(classes) < 2:
        raise ValueError(f"{name} has one class, {classes[0]!r}: there is nothing "
                         "to classify")
    if counts.min() < MIN_PER_CLASS:
        few = int(np.argmin(counts))
        raise ValueError(f"class {classes[few]!r} of {name} has {counts[few]} "
                         f"sample(s); the study needs at least {MIN_PER_CLASS} of "
                         "each class (split into train, validation and test)")
    parts = stratified_split(codes, (0.6, 0.2, 0.2), rng=seed)
    splits = Splits(*(Dataset(x[i], codes[i].astype(np.int64)) for i in parts))
    return Table(splits, classes, features, name)


def standardize(splits: Splits) -> Splits:
    r"""Each feature centred and scaled by its mean and deviation on the train split.

    Parameters
    ----------
    splits : Splits

    Returns
    -------
    Splits
        :math:`(x - m) / s` in every part, with :math:`m, s` the training
        split's mean and standard deviation of each feature (:math:`s = 1`
        for a feature constant there), as scikit-learn's ``StandardScaler``.

    Examples
    --------
    >>> import numpy as np
    >>> from scratchnet.experiments.real import load_table, standardize
    >>> train = standardize(load_table("wine").splits).train.x
    >>> bool(np.allclose(train.mean(axis=0), 0))
    True
    >>> bool(np.allclose(train.std(axis=0), 1))
    True
    """
    mean, scale = splits.train.x.mean(axis=0), splits.train.x.std(axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    return Splits(*(Dataset((x - mean) / scale, c) for x, c in splits))


def run_real(source: Any, settings: Optional[DigitsSettings] = None, *,
             target: Optional[str] = None, scale: bool = True, jobs: int = 1,
             progress: Optional[Callable[[str], None]] = None) -> tuple:
    """The semi-synthetic and the real-data study on any data set.

    Parameters
    ----------
    source : str or pathlib.Path
        As :func:`load_table` takes it.
    settings : DigitsSettings, optional
        The study's settings (default: :data:`REAL_SETTINGS`; ``dim`` is
        capped at the number of features).
    target : str, optional
        A CSV file's label column.
    scale : bool, default True
        Standardise the features (:func:`standardize`).
    jobs : int, default 1
        Worker processes.
    progress : callable, optional
        Called with a line of text as each part finishes.

    Returns
    -------
    (DigitsResult, Table)

    Examples
    --------
    >>> from scratchnet.experiments.digits import DigitsSettings
    >>> from scratchnet.experiments.real import run_real
    >>> result, table = run_real("iris", DigitsSettings(sizes=(50,), steps=20,
    ...                                                 seeds=2, hidden=8))
    >>> result.name, result.fitted.task.dim, result.real["test_logits"].shape
    ('iris', 4, (2, 30, 3))
    """
    settings = REAL_SETTINGS if settings is None else settings
    table = load_table(source, target, seed=settings.seed)
    splits = standardize(table.splits) if scale else table.splits
    result = run_digits(settings, jobs=jobs, progress=progress, data=splits,
                        name=table.name)
    return result, table
