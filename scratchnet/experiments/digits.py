r"""When the generative model is unknown: the digits, a fitted model, calibration.

The study this library reproduces (Yudi Xie, "How do we interpret the outputs
of a neural network trained on classification?", 2024,
https://yudixie.github.io/blog/2024/interpret-classification/) notes that on
real data the softmax outputs approximate the Bayesian posterior of a
generative model of the data "if someone can find such a model".  This
experiment finds one and asks two questions with it
(``python -m scratchnet digits``):

1. **Semi-synthetic.**  Fit Gaussian classes to the digits (PCA to ``dim``
   dimensions, covariance shrinkage chosen on the validation split), then
   *sample* training sets of size :math:`n` from that model, whose posterior
   is exact, train networks on them (``seeds`` of them at once on the
   engine's :class:`~scratchnet.fast.Ensemble`) and measure the expected KL
   :math:`E_x KL(P(C \mid x) \,\|\, q(C \mid x))` (the gap between the
   population loss and the Bayes loss) on a fresh sample, against :math:`n`
   and against training steps.
2. **Real data.**  Train networks on the digits' training split; on the test
   split compare the network, the fitted model's posterior and the labels:
   negative log-likelihood, expected calibration error (ECE) and accuracy,
   over training and at the end, before and after temperature scaling
   (:func:`scratchnet.temperature.fit_temperature` on the validation split;
   Guo et al., "On Calibration of Modern Neural Networks", ICML 2017,
   https://arxiv.org/abs/1706.04599), and the mean KL from the fitted
   posterior to the network's outputs.
"""

from __future__ import annotations

import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple, Optional

import numpy as np

from .. import fast
from .._validation import check_positive_int, check_scalar
from ..datasets import Splits, load_digits
from ..fitting import PCA, fit_pca
from ..gaussian import GaussianClasses
from ..losses import nll_loss
from ..metrics import expected_calibration_error
from ..softmax import log_softmax, softmax
from ..temperature import choose_temperature
from .pool import single_threaded_blas, worker_context

__all__ = ["DigitsResult", "DigitsSettings", "EarlyStop", "FittedModel",
           "describe_shrinkage", "fit_generative", "member_nll", "real_unit",
           "run_digits", "semi_synthetic_unit"]

SHRINKAGES = (0.01, 0.03, 0.1, 0.3, 0.6)  #: candidates, chosen on validation NLL


@dataclass(frozen=True)
class DigitsSettings:
    """What ``python -m scratchnet digits`` runs (its options, with these defaults).

    Parameters
    ----------
    sizes : tuple of int
        Training-set sizes of the semi-synthetic study.
    dim : int or None
        PCA dimensions of the fitted generative model (at most the number
        of features); None: every feature.
    shrinkage : float or None
        Its covariance shrinkage; None: the best of ``SHRINKAGES`` on the
        validation split's NLL.
    hidden : int
        Width of the networks' two hidden layers (ReLU).
    steps : int
        Adam steps (batches of ``batch_size``) of every network: the budget.
        Each network is measured on its validation data once an epoch and
        ends with the parameters of its lowest validation NLL (early
        stopping); the last step's numbers are reported beside them.
    batch_size, lr : int, float
    seeds : int
        Networks per setting (seeds ``seed .. seed + seeds - 1``).
    seed : int
    eval_samples : int
        Draws of the fitted model on which the expected KL is measured.
    snapshots : int
        Log-spaced steps at which the networks are measured.
    splits : int
        Stratified 60 / 20 / 20 splits of the data (split seeds
        ``0 .. splits - 1``); the real-data study trains ``seeds`` networks
        on each, the semi-synthetic one samples the model fitted to the
        first.

    Examples
    --------
    >>> from scratchnet.experiments.digits import DigitsSettings
    >>> DigitsSettings().sizes
    (100, 300, 1000, 3000, 10000, 30000)
    """

    sizes: tuple = (100, 300, 1000, 3000, 10000, 30000)
    dim: Optional[int] = 16
    shrinkage: Optional[float] = None
    hidden: int = 64
    steps: int = 6000
    batch_size: int = 64
    lr: float = 1e-3
    seeds: int = 5
    seed: int = 0
    eval_samples: int = 4000
    snapshots: int = 12
    splits: int = 1

    def __post_init__(self) -> None:
        """Refuse settings that cannot run, naming the field."""
        if (not isinstance(self.sizes, tuple) or not self.sizes
                or any(type(n) is not int or n < 2 for n in self.sizes)):
            raise ValueError(f"sizes must be a non-empty tuple of integers >= 2; got "
                             f"{self.sizes!r}")
        for name in ("hidden", "steps", "batch_size", "seeds", "eval_samples",
                     "snapshots", "splits"):
            check_positive_int(getattr(self, name), name)
        if self.dim is not None:
            check_positive_int(self.dim, "dim")
            if self.dim > 64:
                raise ValueError(f"dim must be at most 64, the digits' pixels; got "
                                 f"{self.dim}")
        check_positive_int(self.seed, "seed", minimum=0)
        check_scalar(self.lr, "lr", low=0.0, low_inclusive=False, high=np.inf,
                     high_inclusive=False)
        if self.shrinkage is not None:
            check_scalar(self.shrinkage, "shrinkage", low=0.0, high=1.0)


class FittedModel(NamedTuple):
    """The generative model fitted to the digits' training split.

    Parameters
    ----------
    pca : scratchnet.fitting.PCA
    task : GaussianClasses
        Gaussian classes on the PCA coordinates.
    shrinkage : float
    validation_nll : dict
        Validation NLL of each candidate shrinkage.

    Examples
    --------
    >>> from scratchnet.experiments.digits import FittedModel
    >>> FittedModel._fields
    ('pca', 'task', 'shrinkage', 'validation_nll')
    """

    pca: PCA
    task: GaussianClasses
    shrinkage: float
    validation_nll: dict

    def log_posterior(self, x: Any) -> np.ndarray:
        """The fitted :math:`\\log P(c \\mid x)` of images ``x`` (n, 64).

        Parameters
        ----------
        x : array_like, shape (n, 64)

        Returns
        -------
        ndarray, shape (n, 10)

        Examples
        --------
        >>> from scratchnet.datasets import load_digits
        >>> from scratchnet.experiments.digits import fit_generative
        >>> digits = load_digits()
        >>> fit_generative(digits, 8).log_posterior(digits.test.x).shape
        (359, 10)
        """
        return self.task.log_posterior(self.pca.transform(x))


def fit_generative(digits: Splits, dim: int, shrinkage: Optional[float] = None
                   ) -> FittedModel:
    """Gaussian classes on ``dim`` principal components of the training split.

    Parameters
    ----------
    digits : Splits
        From :func:`scratchnet.datasets.load_digits`.
    dim : int
    shrinkage : float, optional
        None: the candidate of ``SHRINKAGES`` with the lowest NLL on the
        validation split.

    Returns
    -------
    FittedModel

    Examples
    --------
    >>> from scratchnet.datasets import load_digits
    >>> from scratchnet.experiments.digits import fit_generative
    >>> fit_generative(load_digits(), 8, shrinkage=0.1).task.dim
    8
    """
    pca = fit_pca(digits.train.x, dim)
    z, c = pca.transform(digits.train.x), digits.train.c
    z_val, c_val = pca.transform(digits.validation.x), digits.validation.c
    scores = {}
    for alpha in SHRINKAGES if shrinkage is None else (shrinkage,):
        task = GaussianClasses.fit(z, c, shrinkage=alpha)
        scores[alpha] = float(nll_loss(task.log_posterior(z_val), c_val))
    best = min(scores, key=scores.get)
    task = GaussianClasses.fit(z, c, shrinkage=best)
    return FittedModel(pca, task, best, scores)


def _snapshot_steps(steps: int, count: int) -> list[int]:
    """About ``count`` log-spaced steps from 10 (or fewer) to ``steps``, included."""
    grid = np.geomspace(min(10, steps), steps, max(count, 1))
    return sorted(set(np.rint(grid).astype(int).tolist()) | {steps})


def _checks(n: int, settings: DigitsSettings) -> set:
    """The steps that end an epoch of ``n`` samples, and the last step."""
    epoch = -(-n // min(settings.batch_size, n))
    return set(range(epoch, settings.steps + 1, epoch)) | {settings.steps}


def _ensemble(sizes: list[int], settings: DigitsSettings, datasets: list,
              tag: tuple) -> tuple:
    """An ensemble of ``settings.seeds`` networks, its batches and its optimiser."""
    seeds = range(settings.seed, settings.seed + settings.seeds)
    ensemble = fast.Ensemble(sizes, rngs=list(seeds))
    rngs = [np.random.default_rng([s, *tag, 1]) for s in seeds]
    batch = min(settings.batch_size, len(datasets[0][0]))
    batches = fast.stacked_epochs(datasets, batch, rngs)
    return ensemble, batches, fast.Adam(ensemble.params, lr=settings.lr)


def member_nll(log_q: np.ndarray, c: np.ndarray) -> np.ndarray:
    r"""Each member's mean negative log-likelihood of the classes ``c``.

    :math:`-\frac1N \sum_j \log q_s(c_j \mid x_j)` for every member :math:`s`.

    Parameters
    ----------
    log_q : ndarray, shape (S, N, M)
        Every member's log-probabilities.
    c : ndarray of int, shape (N,) or (S, N)
        The classes, shared or one row per member.

    Returns
    -------
    ndarray, shape (S,)

    Examples
    --------
    >>> from scratchnet.experiments.digits import member_nll
    >>> log_q = np.log([[[0.5, 0.5]], [[0.25, 0.75]]])
    >>> member_nll(log_q, np.array([1])).round(4)
    array([0.6931, 0.2877])
    """
    c = np.broadcast_to(c, log_q.shape[:2])
    return -np.take_along_axis(log_q, c[..., None], axis=-1)[..., 0].mean(axis=-1)


class EarlyStop:
    """Each member's lowest validation NLL so far, the step and the parameters.

    Early stopping for an ensemble trained to its step budget: after the
    training, :meth:`restore` gives every member the parameters of its own
    lowest validation NLL (as :func:`scratchnet.train` with ``patience`` does
    for one network).

    Parameters
    ----------
    ensemble : scratchnet.fast.Ensemble

    Attributes
    ----------
    steps : list of int
        The steps measured.
    nll : list of ndarray (S,)
        The validation NLL of every member at each of them.
    best_step : ndarray of int, shape (S,)

    Examples
    --------
    >>> import scratchnet as sn
    >>> from scratchnet.experiments.digits import EarlyStop
    >>> ens = sn.fast.Ensemble([1, 4, 2], rngs=[0, 1])
    >>> stop = EarlyStop(ens)
    >>> stop.update(10, np.array([0.5, 0.4])); stop.update(20, np.array([0.3, 0.6]))
    >>> stop.best_step.tolist()
    [20, 10]
    """

    def __init__(self, ensemble: fast.Ensemble) -> None:
        self._flat = ensemble.params.flat.reshape(ensemble.members, -1)  # a view
        self._best = self._flat.copy()
        self._lowest = np.full(ensemble.members, np.inf)
        self.best_step = np.zeros(ensemble.members, dtype=np.int64)
        self.steps: list = []
        self.nll: list = []

    def update(self, step: int, nll: np.ndarray) -> None:
        """Record the members' validation NLL after ``step``; keep each best."""
        better = nll < self._lowest
        self._best[better] = self._flat[better]
        self._lowest[better], self.best_step[better] = nll[better], step
        self.steps.append(step)
        self.nll.append(nll)

    def restore(self) -> None:
        """Every member back to the parameters of its lowest validation NLL."""
        self._flat[...] = self._best


def semi_synthetic_unit(params: tuple, n: int, settings: DigitsSettings) -> dict:
    """Train ``seeds`` networks on n samples of the fitted model; KL at snapshots.

    Each network has its own n training draws and :math:`\\lceil n/3 \\rceil`
    validation draws (the real split's 60 : 20), measured once an epoch: it
    ends with the parameters of its lowest validation NLL (early stopping).

    Parameters
    ----------
    params : tuple
        ``(means, covariances, priors)`` of the fitted model.
    n : int
    settings : DigitsSettings

    Returns
    -------
    dict
        ``n``, ``steps`` (T,), ``kl`` (T, S) at the snapshots; at the
        selected step: ``best_step``, ``kl_selected`` and ``accuracy`` (S,);
        ``accuracy_last`` (S,); and, on the same evaluation draws, their
        ``bayes_loss`` and ``bayes_accuracy``.

    Examples
    --------
    >>> import numpy as np
    >>> from scratchnet.experiments.digits import DigitsSettings, semi_synthetic_unit
    >>> params = (np.array([[0.0], [2.0]]), np.ones((2, 1, 1)), np.array([0.5, 0.5]))
    >>> out = semi_synthetic_unit(params, 50, DigitsSettings(steps=20, seeds=2))
    >>> out["kl"].shape, out["best_step"].shape   # 11 snapshots (10..20), 2 seeds
    ((11, 2), (2,))
    """
    task = GaussianClasses(*params)
    seeds = range(settings.seed, settings.seed + settings.seeds)
    x_eval, c_eval = task.sample(settings.eval_samples,
                                 rng=np.random.default_rng([settings.seed, n, 2]))
    log_p = task.log_posterior(x_eval)
    p = np.exp(log_p)
    datasets = [task.sample(n, rng=np.random.default_rng([s, n, 3])) for s in seeds]
    held = [task.sample(-(-n // 3), rng=np.random.default_rng([s, n, 4]))
            for s in seeds]
    x_val, c_val = np.stack([x for x, _ in held]), np.stack([c for _, c in held])
    sizes = [task.dim, settings.hidden, settings.hidden, task.num_classes]
    ensemble, batches, optimizer = _ensemble(sizes, settings, datasets, (n,))
    snaps, checks = _snapshot_steps(settings.steps, settings.snapshots), _checks(
        n, settings)
    stop, kl = EarlyStop(ensemble), []

    def kl_to_posterior(ens: fast.Ensemble) -> np.ndarray:
        log_q = ens.predict_log_proba(x_eval)                  # (S, N, M)
        return (p * (log_p - log_q)).sum(axis=-1).mean(axis=-1)

    def measure(step: int, ens: fast.Ensemble) -> None:
        if step in checks:
            stop.update(step, member_nll(log_softmax(ens.forward(x_val), axis=-1),
                                         c_val))
        if step in snaps:
            kl.append(kl_to_posterior(ens))

    fast.train(ensemble, batches, steps=settings.steps, optimizer=optimizer,
               snapshot_steps=sorted(set(snaps) | checks), on_snapshot=measure)
    last = ensemble.forward(x_eval).argmax(axis=-1)
    stop.restore()
    predicted = ensemble.forward(x_eval).argmax(axis=-1)
    return {"n": n, "steps": np.array(snaps), "kl": np.array(kl),
            "best_step": stop.best_step, "kl_selected": kl_to_posterior(ensemble),
            "accuracy": (predicted == c_eval).mean(axis=-1),
            "accuracy_last": (last == c_eval).mean(axis=-1),
            "bayes_loss": float(-(p * log_p).sum(axis=1).mean()),
            "bayes_accuracy": float((log_p.argmax(axis=1) == c_eval).mean()),
            "validation_samples": len(c_val[0])}


def real_unit(digits: Splits, settings: DigitsSettings, split: int = 0) -> dict:
    """Train ``seeds`` networks on a training split; early stopping on validation.

    Parameters
    ----------
    digits : Splits
    settings : DigitsSettings
    split : int, default 0
        Which split this is (it seeds the batches).

    Returns
    -------
    dict
        ``steps`` (T,); test ``nll``, ``ece``, ``accuracy`` (T, S) at the
        snapshots; ``validation_steps`` (V,) and ``validation_nll`` (V, S),
        measured once an epoch; ``best_step`` (S,), the step of each
        network's lowest validation NLL, whose parameters give
        ``val_logits`` and ``test_logits`` (S, n, M); ``last_test_logits``,
        those of the last step.

    Examples
    --------
    >>> from scratchnet.datasets import load_digits
    >>> from scratchnet.experiments.digits import DigitsSettings, real_unit
    >>> out = real_unit(load_digits(), DigitsSettings(steps=20, seeds=2))
    >>> out["test_logits"].shape, out["validation_steps"].tolist()
    ((2, 359, 10), [17, 20])
    """
    x, c = digits.test
    classes = int(digits.train.c.max()) + 1
    sizes = [x.shape[1], settings.hidden, settings.hidden, classes]
    data = [tuple(digits.train)] * settings.seeds
    # split 0's batches are those of the study before it had several splits
    ensemble, batches, optimizer = _ensemble(sizes, settings, data,
                                             (0,) if split == 0 else (0, split))
    snaps, checks = _snapshot_steps(settings.steps, settings.snapshots), _checks(
        len(digits.train.c), settings)
    stop, nll, ece, accuracy = EarlyStop(ensemble), [], [], []

    def measure(step: int, ens: fast.Ensemble) -> None:
        if step in checks:
            stop.update(step, member_nll(ens.predict_log_proba(digits.validation.x),
                                         digits.validation.c))
        if step in snaps:
            log_q = ens.predict_log_proba(x)
            nll.append(member_nll(log_q, c))
            ece.append([expected_calibration_error(np.exp(lq), c) for lq in log_q])
            accuracy.append((log_q.argmax(axis=-1) == c).mean(axis=-1))

    fast.train(ensemble, batches, steps=settings.steps, optimizer=optimizer,
               snapshot_steps=sorted(set(snaps) | checks), on_snapshot=measure)
    last_test = ensemble.forward(x)
    stop.restore()
    return {"steps": np.array(snaps), "nll": np.array(nll), "ece": np.array(ece),
            "accuracy": np.array(accuracy),
            "validation_steps": np.array(stop.steps),
            "validation_nll": np.array(stop.nll), "best_step": stop.best_step,
            "val_logits": ensemble.forward(digits.validation.x),
            "test_logits": ensemble.forward(x), "last_test_logits": last_test}


def _scores(logits: np.ndarray, c: np.ndarray, temperature: float) -> dict:
    """Test NLL, ECE and accuracy of softmax(logits / T)."""
    log_q = log_softmax(logits / temperature, axis=1)
    return {"nll": float(nll_loss(log_q, c)),
            "ece": expected_calibration_error(np.exp(log_q), c),
            "accuracy": float((log_q.argmax(axis=1) == c).mean())}


@dataclass
class DigitsResult:
    """Everything the digits study measured (see :func:`run_digits`).

    Parameters
    ----------
    settings : DigitsSettings
    fitted : FittedModel
        The generative model fitted to the first split (the semi-synthetic
        study samples it).
    synthetic : list of dict
        :func:`semi_synthetic_unit`'s results, by increasing n.
    real : dict
        :func:`real_unit`'s results, the networks of every split side by
        side (``split`` (K S,) says whose), with the temperature choices
        (:func:`scratchnet.temperature.choose_temperature`: ``temperatures``
        applied, ``fitted_temperatures``, ``kept`` reasons; the same for the
        fitted model with ``generative_`` in front, one per split), the
        final test ``scores`` (lists over networks, or over splits) of
        ``"network"`` (at the selected step), ``"network, T"``,
        ``"network, last step"``, ``"generative"``, ``"generative, T"``
        and ``"constant"`` (the training split's class frequencies), and
        ``kl_to_fitted`` (K S,) at T = 1 and ``kl_to_fitted_T`` after
        scaling both (NaN where either temperature is kept at 1).
    elapsed : float
        Seconds.
    name : str
        The data set's name ("digits" unless :func:`run_digits` was given
        another data set).
    fitted_all : list of FittedModel
        One per split.
    features : int
        The number of features of the data (``fitted.task.dim`` are kept).

    Examples
    --------
    >>> from scratchnet.experiments.digits import DigitsResult
    >>> sorted(DigitsResult.__dataclass_fields__)[:2]
    ['elapsed', 'features']
    """

    settings: DigitsSettings
    fitted: FittedModel
    synthetic: list = field(default_factory=list)
    real: dict = field(default_factory=dict)
    elapsed: float = 0.0
    name: str = "digits"
    fitted_all: list = field(default_factory=list)
    features: int = 64


def _unit(kind: str, payload: Any, settings: DigitsSettings) -> tuple:
    """One piece of work, in a worker process or here."""
    if kind == "real":
        split, data = payload
        return kind, (split, real_unit(data, settings, split))
    params, n = payload
    return kind, semi_synthetic_unit(params, n, settings)


def run_digits(settings: DigitsSettings = DigitsSettings(), *, jobs: int = 1,
               progress: Optional[Callable[[str], None]] = None,
               data: Any = None, name: str = "digits") -> DigitsResult:
    """Run both studies; ``jobs`` worker processes share the networks.

    Parameters
    ----------
    settings : DigitsSettings
    jobs : int, default 1
        1: in this process; more: a process pool, one BLAS thread each.
    progress : callable, optional
        Called with one line of text as each part finishes.
    data : Splits or list of Splits, optional
        Another data set, split three ways (or ``settings.splits`` times),
        classes :math:`0 .. M-1` (:func:`scratchnet.experiments.real.load_table`
        reads any); by default the digits, split with seeds
        ``0 .. settings.splits - 1``.  The fitted model uses ``min(dim, D)``
        principal components.
    name : str, default "digits"
        The data set's name, for the progress lines and the report.

    Returns
    -------
    DigitsResult

    Examples
    --------
    >>> from scratchnet.experiments.digits import DigitsSettings, run_digits
    >>> result = run_digits(DigitsSettings(sizes=(50,), steps=20, seeds=2, dim=4,
    ...                                   hidden=8, snapshots=2))
    >>> result.real["scores"]["generative"][0]["accuracy"] > 0.5
    True
    """
    if not isinstance(settings, DigitsSettings):
        raise TypeError(f"settings must be a DigitsSettings; got "
                        f"{type(settings).__name__}")
    jobs = check_positive_int(jobs, "jobs")
    start = time.perf_counter()
    say = progress or (lambda message: None)
    if data is None:
        splits = [load_digits(seed=k) for k in range(settings.splits)]
    else:
        splits = [data] if isinstance(data, Splits) else list(data)
    features = splits[0].train.x.shape[1]
    dim = features if settings.dim is None else min(settings.dim, features)
    fitted = [fit_generative(split, dim, settings.shrinkage) for split in splits]
    say(f"{name}: fitted Gaussian classes on {_components(dim, features)}; "
        f"{describe_shrinkage(fitted[0], settings.shrinkage)}")
    params = (fitted[0].task.means, fitted[0].task.scales, fitted[0].task.priors)
    work = [("real", (k, split)) for k, split in enumerate(splits)] + [
        ("synthetic", (params, n)) for n in sorted(settings.sizes, reverse=True)]
    result = DigitsResult(settings, fitted[0], name=name, fitted_all=fitted,
                          features=features)
    done, units = 0, {}
    if jobs == 1:
        finished = (_unit(kind, payload, settings) for kind, payload in work)
    else:
        with single_threaded_blas():   # workers start at the first submit
            pool = ProcessPoolExecutor(min(jobs, len(work)),
                                       mp_context=worker_context())
            futures = [pool.submit(_unit, kind, payload, settings)
                       for kind, payload in work]
        finished = (future.result() for future in as_completed(futures))
    try:
        for kind, out in finished:
            done += 1
            if kind == "real":
                units[out[0]] = out[1]
                what = f"real {name}" + (f", split {out[0]}" if len(splits) > 1
                                         else "")
            else:
                result.synthetic.append(out)
                what = f"semi-synthetic n={out['n']:,}"
            say(f"{name}: [{done}/{len(work)}] {what} trained "
                f"({time.perf_counter() - start:.1f} s)")
    finally:
        if jobs != 1:
            pool.shutdown(cancel_futures=True)
    result.synthetic.sort(key=lambda out: out["n"])
    result.real = _calibrate([units[k] for k in range(len(splits))], splits, fitted)
    for note in result.real["temperature_notes"]:
        say(f"{name}: note: {note}")
    result.elapsed = time.perf_counter() - start
    return result


def _components(dim: int, features: int) -> str:
    """"16 principal components of the 30 features", or "all 4 features"."""
    if dim == features:
        return f"all {features} features (rotated to their principal components)"
    return f"{dim} principal components of the {features} features"


def describe_shrinkage(fitted: FittedModel, given: Optional[float]) -> str:
    """A sentence on the shrinkage: given, or chosen, and whether at the grid's edge.

    Parameters
    ----------
    fitted : FittedModel
    given : float or None
        The shrinkage asked for (None: chosen on validation).

    Returns
    -------
    str

    Examples
    --------
    >>> from scratchnet.experiments.digits import FittedModel, describe_shrinkage
    >>> model = FittedModel(None, None, 0.6, {0.01: 2.0, 0.6: 1.0})
    >>> print(describe_shrinkage(model, None))  # doctest: +NORMALIZE_WHITESPACE
    shrinkage 0.6 chosen on validation (NLL 1.000), the largest on the grid
    0.01..0.6: a larger one might fit better
    """
    if given is not None:
        return f"shrinkage {fitted.shrinkage:g} (given)"
    grid = sorted(fitted.validation_nll)
    text = (f"shrinkage {fitted.shrinkage:g} chosen on validation (NLL "
            f"{fitted.validation_nll[fitted.shrinkage]:.3f})")
    if len(grid) > 1 and fitted.shrinkage in (grid[0], grid[-1]):
        edge = "largest" if fitted.shrinkage == grid[-1] else "smallest"
        other = "larger" if edge == "largest" else "smaller"
        text += (f", the {edge} on the grid {grid[0]:g}..{grid[-1]:g}: a {other} one "
                 "might fit better")
    return text


def _choices(logits: Any, targets: np.ndarray) -> list:
    """:func:`choose_temperature` of each validation logit array."""
    return [choose_temperature(z, targets) for z in logits]


def _kept_note(what: str, choices: list) -> list:
    """One line on the temperatures kept at 1, with the first reason; or none."""
    kept = [c.kept for c in choices if c.kept]
    if not kept:
        return []
    bound = sum(k.startswith("the fit ended at its bound") for k in kept)
    return [f"{what}: temperature kept at 1 for {len(kept)} of {len(choices)} "
            f"({bound} at a bound of the search, {len(kept) - bound} not told apart "
            f"from 1 by the validation split); e.g. {kept[0]}"]


def _calibrate(units: list, splits: list, fitted: list) -> dict:
    """Temperatures on validation; test scores and KL to the fitted model."""
    seeds = len(units[0]["best_step"])
    real: dict = {key: np.concatenate([u[key] for u in units], axis=1)
                  for key in ("nll", "ece", "accuracy", "validation_nll")}
    real["steps"], real["validation_steps"] = units[0]["steps"], units[0][
        "validation_steps"]
    for key in ("best_step", "val_logits", "test_logits", "last_test_logits"):
        real[key] = np.concatenate([u[key] for u in units])
    real["split"] = np.repeat(np.arange(len(units)), seeds)
    scores: dict = {key: [] for key in ("network", "network, T", "network, last step",
                                        "generative", "generative, T", "constant")}
    net_choices, gen_choices, kl, kl_t = [], [], [], []
    for unit, split, model in zip(units, splits, fitted):
        c_val, c = split.validation.c, split.test.c
        gen_test = model.log_posterior(split.test.x)
        gen = choose_temperature(model.log_posterior(split.validation.x), c_val)
        nets = _choices(unit["val_logits"], c_val)
        gen_choices.append(gen)
        net_choices += nets
        counts = np.bincount(split.train.c, minlength=gen_test.shape[1])
        scores["constant"].append(_scores(np.broadcast_to(
            np.log(counts / counts.sum()), gen_test.shape), c, 1.0))
        scores["generative"].append(_scores(gen_test, c, 1.0))
        scores["generative, T"].append(_scores(gen_test, c, gen.temperature))
        log_p = log_softmax(gen_test, axis=1)
        log_p_t = log_softmax(gen_test / gen.temperature, axis=1)
        for z, z_last, net in zip(unit["test_logits"], unit["last_test_logits"], nets):
            scores["network"].append(_scores(z, c, 1.0))
            scores["network, T"].append(_scores(z, c, net.temperature))
            scores["network, last step"].append(_scores(z_last, c, 1.0))
            log_q = log_softmax(z, axis=1)
            log_q_t = log_softmax(z / net.temperature, axis=1)
            kl.append((np.exp(log_p) * (log_p - log_q)).sum(-1).mean())
            both = not (net.kept or gen.kept)
            kl_t.append((np.exp(log_p_t) * (log_p_t - log_q_t)).sum(-1).mean()
                        if both else np.nan)
    real["scores"], real["kl_to_fitted"], real["kl_to_fitted_T"] = (
        scores, np.array(kl), np.array(kl_t))
    real["temperatures"] = np.array([ch.temperature for ch in net_choices])
    real["fitted_temperatures"] = np.array([ch.fitted for ch in net_choices])
    real["kept"] = [ch.kept for ch in net_choices]
    real["generative_temperature"] = np.array([ch.temperature for ch in gen_choices])
    real["generative_fitted"] = np.array([ch.fitted for ch in gen_choices])
    real["generative_kept"] = [ch.kept for ch in gen_choices]
    real["temperature_notes"] = (_kept_note("networks", net_choices)
                                 + _kept_note("fitted model", gen_choices))
    first, split = units[0], splits[0]
    gen = fitted[0].log_posterior(split.test.x)
    t_net, t_gen = real["temperatures"][0], real["generative_temperature"][0]
    real["probabilities"] = {
        "network": softmax(first["test_logits"][0], axis=1),
        "network, T": softmax(first["test_logits"][0] / t_net, axis=1),
        "generative": softmax(gen, axis=1),
        "generative, T": softmax(gen / t_gen, axis=1)}
    real["test_targets"] = split.test.c
    real["test_size"], real["validation_size"] = len(split.test.c), len(
        split.validation.c)
    return real
