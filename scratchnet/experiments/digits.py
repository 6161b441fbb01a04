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
   is exact, train networks on them (``seeds`` of them at once on the fast
   path's :class:`~scratchnet.fast.Ensemble`) and measure the expected KL
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
from ..softmax import log_softmax
from .digits_calibration import calibrate
from .pool import single_threaded_blas, worker_context
from .selection import EarlyStop, components, describe_shrinkage, epoch_ends, member_nll

__all__ = ["STOPS", "DigitsResult", "DigitsSettings", "FittedModel", "fit_generative",
           "real_steps", "real_unit", "run_digits", "semi_synthetic_unit"]

SHRINKAGES = (0.01, 0.03, 0.1, 0.3, 0.6)  #: candidates, chosen on validation NLL
STOPS = ("each", "together")  #: ``DigitsSettings.stop``


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
    stop : {"each", "together"}
        How the real-data networks of a split, which share its validation
        split, choose their step: ``"each"`` at its own lowest validation
        NLL, ``"together"`` at the lowest mean of their validation NLLs
        (:class:`~scratchnet.experiments.selection.EarlyStop`): the choice
        for small validation splits, where one network's curve can keep
        falling while its test NLL rises.  The semi-synthetic networks each
        have their own validation draws, and stop each.
    max_epochs : int or None
        The real-data networks' budget in passes over the training split as
        well: ``min(steps, max_epochs`` epochs) (:func:`real_steps`); None:
        ``steps`` alone.  6,000 steps are 3,000 epochs of iris's 90 training
        rows, long enough for a network that classifies all 30 validation
        rows right to keep lowering its validation NLL by sharpening while
        its test NLL climbs above the constant prediction's.

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
    stop: str = "each"
    max_epochs: Optional[int] = None

    def __post_init__(self) -> None:
        """Refuse settings that cannot run, naming the field."""
        if (not isinstance(self.sizes, tuple) or not self.sizes
                or any(type(n) is not int or n < 2 for n in self.sizes)):
            raise ValueError(f"sizes must be a non-empty tuple of integers >= 2; got "
                             f"{self.sizes!r}")
        for name in ("hidden", "steps", "batch_size", "seeds", "eval_samples",
                     "snapshots", "splits"):
            check_positive_int(getattr(self, name), name)
        if self.max_epochs is not None:
            check_positive_int(self.max_epochs, "max_epochs")
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
        if self.stop not in STOPS:
            raise ValueError(f"stop must be one of {', '.join(map(repr, STOPS))}; got "
                             f"{self.stop!r}")


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


def _ensemble(sizes: list[int], settings: DigitsSettings, datasets: list,
              tag: tuple) -> tuple:
    """An ensemble of ``settings.seeds`` networks, its batches and its optimiser."""
    seeds = range(settings.seed, settings.seed + settings.seeds)
    ensemble = fast.Ensemble(sizes, rngs=list(seeds))
    rngs = [np.random.default_rng([s, *tag, 1]) for s in seeds]
    batch = min(settings.batch_size, len(datasets[0][0]))
    batches = fast.stacked_epochs(datasets, batch, rngs)
    return ensemble, batches, fast.Adam(ensemble.params, lr=settings.lr)


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
    snaps, checks = _snapshot_steps(settings.steps, settings.snapshots), epoch_ends(
        n, settings.batch_size, settings.steps)
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


def real_steps(n: int, settings: DigitsSettings) -> int:
    """The real-data networks' budget: ``steps``, or ``max_epochs`` epochs if fewer.

    Parameters
    ----------
    n : int
        Training rows.
    settings : DigitsSettings

    Returns
    -------
    int

    Examples
    --------
    >>> from scratchnet.experiments.digits import DigitsSettings, real_steps
    >>> real_steps(90, DigitsSettings(max_epochs=200))     # 2 batches of 64 an epoch
    400
    >>> real_steps(90, DigitsSettings()), real_steps(1078, DigitsSettings(max_epochs=9))
    (6000, 153)
    """
    if settings.max_epochs is None:
        return settings.steps
    epoch = -(-n // min(settings.batch_size, n))                 # batches an epoch
    return min(settings.steps, settings.max_epochs * epoch)


def real_unit(digits: Splits, settings: DigitsSettings, split: int = 0) -> dict:
    """Train ``seeds`` networks on a training split; early stopping on validation.

    The networks share the validation split: each stops at its own lowest
    validation NLL, or, with ``settings.stop == "together"``, all at the
    step of their lowest mean validation NLL (one network's curve on a
    hundred samples can keep falling while its test NLL climbs above the
    constant prediction's).

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
        measured once an epoch; ``best_step`` (S,), the selected step of
        each network (see ``settings.stop``), whose parameters give
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
    steps = real_steps(len(digits.train.c), settings)
    snaps, checks = _snapshot_steps(steps, settings.snapshots), epoch_ends(
        len(digits.train.c), settings.batch_size, steps)
    stop, nll, ece, accuracy = EarlyStop(
        ensemble, together=settings.stop == "together"), [], [], []

    def measure(step: int, ens: fast.Ensemble) -> None:
        if step in checks:
            stop.update(step, member_nll(ens.predict_log_proba(digits.validation.x),
                                         digits.validation.c))
        if step in snaps:
            log_q = ens.predict_log_proba(x)
            nll.append(member_nll(log_q, c))
            ece.append([expected_calibration_error(np.exp(lq), c) for lq in log_q])
            accuracy.append((log_q.argmax(axis=-1) == c).mean(axis=-1))

    fast.train(ensemble, batches, steps=steps, optimizer=optimizer,
               snapshot_steps=sorted(set(snaps) | checks), on_snapshot=measure)
    last_test = ensemble.forward(x)
    stop.restore()
    return {"steps": np.array(snaps), "nll": np.array(nll), "ece": np.array(ece),
            "accuracy": np.array(accuracy),
            "validation_steps": np.array(stop.steps),
            "validation_nll": np.array(stop.nll), "best_step": stop.best_step,
            "val_logits": ensemble.forward(digits.validation.x),
            "test_logits": ensemble.forward(x), "last_test_logits": last_test}


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
        side (``split`` says whose), with their temperatures and test scores
        (:func:`scratchnet.experiments.digits_calibration.calibrate`).
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
    say(f"{name}: fitted Gaussian classes on {components(dim, features)}; "
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
    result.real = calibrate([units[k] for k in range(len(splits))], splits, fitted)
    for note in result.real["temperature_notes"]:
        say(f"{name}: note: {note}")
    result.elapsed = time.perf_counter() - start
    return result
