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
* repeated stratified 60 / 20 / 20 splits into train, validation and test
  (:func:`scratchnet.datasets.stratified_split`, split seeds 0, 1, ...);
* a standardisation step: each feature centred and divided by its standard
  deviation *on the training split*.  Shrinkage toward
  :math:`(\operatorname{tr} S / D)\, I` mixes the features' variances, so
  without it a feature measured in thousands (wine's proline) dominates
  every shrunk covariance; but scaled to unit variance, the digits' nearly
  blank border pixels turn rare ink into large deviations.  By default
  (``"auto"``) the study fits the generative model both ways on the first
  split and keeps the one with the lower validation NLL, and says so.
"""

from __future__ import annotations

import csv
import warnings
from pathlib import Path
from typing import Any, Callable, NamedTuple, Optional

import numpy as np

from ..datasets import INSTALL_HINT, Dataset, Splits, stratified_split
from ..exceptions import ScratchnetWarning
from .digits import DigitsSettings, fit_generative, run_digits

__all__ = ["BUNDLED", "CALIBRATIONS", "MIN_PER_CLASS", "REAL_SETTINGS", "SCALINGS",
           "Table", "calibration_study", "choose_scaling", "load_table", "read_csv",
           "run_real", "standardize"]

BUNDLED = ("digits", "iris", "wine", "breast_cancer")  #: scikit-learn's, no download
MIN_PER_CLASS = 5  #: samples of each class the three-way split needs
#: ``python -m scratchnet real``'s defaults: the digits study's with 3 seeds on
#: each of 5 splits (15 networks, so that every number has a spread), the
#: fitted model on every feature, the networks of a split stopping together
#: (their validation splits hold 30 to 400 samples) within at most 200 epochs
#: (``MLPClassifier``'s ``max_iter``)
REAL_SETTINGS = DigitsSettings(seeds=3, splits=5, dim=None, stop="together",
                               max_epochs=200)
SCALINGS = ("auto", "yes", "no")  #: ``--standardize``


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
    if not path.is_file():
        raise ValueError(f"--dataset {str(path)!r}: no such file (give the path of a "
                         f"CSV file, or one of {', '.join(BUNDLED)})")
    text = path.read_text(encoding="utf-8-sig")          # Excel's UTF-8 BOM, if any
    rows = [row for row in csv.reader(text.splitlines(), delimiter=_delimiter(text))
            if any(cell.strip() for cell in row)]
    if len(rows) < 2:
        raise ValueError(f"{path} must have a header row and at least one row of "
                         f"data; got {len(rows)} row(s)")
    rows = _without_empty_trailing_columns(rows)
    header = [name.strip() for name in rows[0]]
    target = header[-1] if target is None else target
    if target not in header:
        raise ValueError(f"--target {target!r} is not a column of {path}; its "
                         f"columns are {', '.join(map(repr, header))}")
    if len(header) < 2:
        raise ValueError(f"{path} has only the label column {target!r}: the study "
                         "needs at least one numeric feature column beside it")
    bad = next((i for i, row in enumerate(rows) if len(row) != len(header)), None)
    if bad is not None:
        raise ValueError(f"{path}, line {bad + 1}: {len(rows[bad])} fields where the "
                         f"header has {len(header)}")
    k = header.index(target)
    cells = np.array(rows[1:], dtype=str)
    labels = np.char.strip(cells[:, k])
    if not np.all(labels != ""):
        line = int(np.argmax(labels == "")) + 2
        raise ValueError(f"{path}, line {line}: the label (column {target!r}) is "
                         "empty; every row needs a class (drop the row, or fill it "
                         "in)")
    features = header[:k] + header[k + 1:]
    text = np.delete(cells, k, axis=1)
    try:
        x = np.char.strip(text).astype(np.float64)
    except ValueError:
        x = None
    if x is None or not np.isfinite(x).all():
        line, col = _first_bad_cell(text)
        cell = str(text[line, col])
        hint = (" (a decimal comma? write numbers with a point)"
                if "," in cell and cell.replace(",", "").strip().isdigit() else "")
        raise ValueError(f"{path}, line {line + 2}, column {features[col]!r}: "
                         f"{cell!r} is not a finite number{hint}; every "
                         f"column but the target ({target!r}) must be numeric (encode "
                         "categories as numbers, fill or drop missing values)")
    return x, labels, features


def _delimiter(text: str) -> str:
    """``,``; or ``;`` or a tab where the header has them and no comma."""
    header = text.split("\n", 1)[0]
    if "," in header:
        return ","
    return next((d for d in (";", "\t") if d in header), ",")


def _without_empty_trailing_columns(rows: list) -> list:
    """Drop the nameless, empty last columns a trailing comma (Excel) leaves."""
    width = len(rows[0])
    while width > 1 and not rows[0][width - 1].strip() and all(
            len(row) < width or not row[width - 1].strip() for row in rows):
        width -= 1
    return [row[:width] for row in rows] if width < len(rows[0]) else rows


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
        if target is not None:
            raise ValueError(f"--target {target!r} applies to a CSV file; {name} is "
                             "bundled with its own labels (drop --target)")
        x, labels, features = _bundled(name)
    else:
        path = Path(source)
        if path.is_file() and path.suffix.lower() != ".csv":
            raise ValueError(f"--dataset must be one of {', '.join(BUNDLED)} or the "
                             f"path of a .csv file; got {name!r}")
        x, labels, features = read_csv(path, target)
        name = path.stem
    classes, codes, counts = np.unique(labels, return_inverse=True,
                                       return_counts=True)
    if len(classes) < 2:
        raise ValueError(f"{name} has one class, {str(classes[0])!r}: there is "
                         "nothing to classify")
    column = "the labels" if target is None else f"--target {target!r}"
    if len(classes) > len(labels) / 2 and len(classes) > 10:
        shown = ", ".join(repr(str(c)) for c in classes[:3])
        raise ValueError(f"{column} of {name} has {len(classes)} distinct values in "
                         f"{len(labels)} rows ({shown}, ...): it looks like a "
                         "continuous quantity, and the study classifies; choose a "
                         "column of class labels with --target (or bin the values)")
    if counts.min() < MIN_PER_CLASS:
        few = int(np.argmin(counts))
        raise ValueError(f"class {str(classes[few])!r} of {name} has {counts[few]} "
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


def choose_scaling(tables: list, dim: Optional[int], shrinkage: Optional[float]
                   ) -> tuple:
    """Standardise or not: the fitted model's lower validation NLL on the first split.

    Parameters
    ----------
    tables : list of Splits
        The splits, not standardised.
    dim : int or None
        PCA dimensions (None: every feature).
    shrinkage : float or None
        As :func:`scratchnet.experiments.digits.fit_generative` takes it.

    Returns
    -------
    (bool, str)
        Whether to standardise, and a sentence with both validation NLLs.

    Examples
    --------
    >>> from scratchnet.experiments.real import choose_scaling, load_table
    >>> choose_scaling([load_table("wine").splits], None, None)[0]
    True
    """
    first = tables[0]
    features = first.train.x.shape[1]
    dim = features if dim is None else min(dim, features)
    nll = {}
    for scaled in (True, False):
        model = fit_generative(standardize(first) if scaled else first, dim, shrinkage)
        nll[scaled] = model.validation_nll[model.shrinkage]
    keep = nll[True] <= nll[False]
    return keep, (f"{'' if keep else 'not '}standardised: the fitted model's "
                  f"validation NLL is {nll[True]:.3f} standardised and "
                  f"{nll[False]:.3f} not")


def run_real(source: Any, settings: Optional[DigitsSettings] = None, *,
             target: Optional[str] = None, scale: Any = "auto", jobs: int = 1,
             progress: Optional[Callable[[str], None]] = None) -> tuple:
    """The semi-synthetic and the real-data study on any data set.

    Parameters
    ----------
    source : str or pathlib.Path
        As :func:`load_table` takes it.
    settings : DigitsSettings, optional
        The study's settings (default: :data:`REAL_SETTINGS`; ``dim`` is
        capped at the number of features); ``settings.splits`` stratified
        splits with seeds ``0, 1, ...``.
    target : str, optional
        A CSV file's label column.
    scale : {"auto", True, False}, default "auto"
        Standardise the features (:func:`standardize`), or not; ``"auto"``:
        :func:`choose_scaling`.
    jobs : int, default 1
        Worker processes.
    progress : callable, optional
        Called with a line of text as each part finishes.

    Returns
    -------
    (DigitsResult, Table)
        The table of the first split.

    Examples
    --------
    >>> from scratchnet.experiments.digits import DigitsSettings
    >>> from scratchnet.experiments.real import run_real
    >>> result, table = run_real("iris", DigitsSettings(sizes=(50,), steps=20,
    ...                                                 seeds=2, hidden=8, splits=2))
    >>> result.name, result.fitted.task.dim, result.real["test_logits"].shape
    ('iris', 4, (4, 30, 3))
    """
    settings = REAL_SETTINGS if settings is None else settings
    say = progress or (lambda message: None)
    tables = [load_table(source, target, seed=k) for k in range(settings.splits)]
    raw = [table.splits for table in tables]
    if scale == "auto":
        scale, why = choose_scaling(raw, settings.dim, settings.shrinkage)
        say(f"{tables[0].name}: {why}")
    elif scale not in (True, False):
        raise ValueError(f"scale must be 'auto', True or False; got {scale!r}")
    splits = [standardize(split) for split in raw] if scale else raw
    result = run_digits(settings, jobs=jobs, progress=progress, data=splits,
                        name=tables[0].name)
    return result, tables[0]


#: the calibrations :func:`calibration_study` compares
CALIBRATIONS = ("network", "network, early stopping", "network, temperature",
                "network, Platt (sigmoid)", "network, isotonic")


def calibration_study(source: Any, *, seed: int = 0, random_state: int = 0,
                      target: Optional[str] = None, which: Any = CALIBRATIONS) -> dict:
    """Temperature, Platt and isotonic calibration of one network, on one split.

    The recipe behind the calibration table of the docs: a stratified
    80 / 20 split (``stratified_split`` with ``seed``), features
    standardised on the 80 % (scikit-learn's ``StandardScaler`` in a
    ``Pipeline``), ``NetworkClassifier(random_state=random_state)`` with its
    defaults as it comes, with ``early_stopping=True``, with
    ``temperature=True``, and inside ``CalibratedClassifierCV(cv=3)`` with
    ``method="sigmoid"`` (Platt) and ``"isotonic"``.

    Parameters
    ----------
    source : str or pathlib.Path
        As :func:`load_table` takes it.
    seed : int, default 0
        The split's seed.
    random_state : int, default 0
        The networks' seed.
    target : str, optional
    which : sequence of str, default CALIBRATIONS
        The rows to compute.

    Returns
    -------
    dict
        For each name of ``which``, the test ``nll`` (exact: a
        probability 0 for the true class costs infinity, as the log of
        ``predict_proba`` says), ``ece`` and ``accuracy``.

    Examples
    --------
    >>> from scratchnet.experiments.real import calibration_study
    >>> rows = calibration_study("iris")                      # doctest: +SKIP
    >>> sorted(rows["network"])                               # doctest: +SKIP
    ['accuracy', 'ece', 'nll']
    """
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from ..estimators import NetworkClassifier
    from ..metrics import expected_calibration_error

    name = str(source)
    x, labels, _ = _bundled(name) if name in BUNDLED else read_csv(source, target)
    classes, codes = np.unique(labels, return_inverse=True)
    train, test = stratified_split(codes, (0.8, 0.2), rng=seed)

    def network(**options: Any) -> Any:
        return NetworkClassifier(random_state=random_state, **options)

    models = dict(zip(CALIBRATIONS, (
        network(), network(early_stopping=True), network(temperature=True),
        CalibratedClassifierCV(network(), method="sigmoid", cv=3),
        CalibratedClassifierCV(network(), method="isotonic", cv=3))))
    rows = {}
    for key in which:
        model = models[key]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ScratchnetWarning)   # T kept, said there
            fitted = make_pipeline(StandardScaler(), model).fit(x[train],
                                                                 classes[codes[train]])
            q = fitted.predict_proba(x[test])
        p = q[np.arange(len(test)), codes[test]]
        log_q = np.log(p, out=np.full_like(p, -np.inf), where=p > 0)   # isotonic's 0s
        rows[key] = {"nll": float(-log_q.mean()),
                     "ece": expected_calibration_error(q, codes[test]),
                     "accuracy": float((q.argmax(axis=1) == codes[test]).mean())}
    return rows
