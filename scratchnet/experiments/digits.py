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
import warnings
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
from ..temperature import ScratchnetWarning, fit_temperature
from .pool import single_threaded_blas, worker_context

__all__ = ["DigitsResult", "DigitsSettings", "FittedModel", "fit_generative",
           "real_unit", "run_digits", "semi_synthetic_unit"]

SHRINKAGES = (0.01, 0.03, 0.1, 0.3, 0.6)  #: candidates, chosen on validation NLL


@dataclass(frozen=True)
class DigitsSettings:
    """What ``python -m scratchnet digits`` runs (its options, with these defaults).

    Parameters
    ----------
    sizes : tuple of int
        Training-set sizes of the semi-synthetic study.
    dim : int
        PCA dimensions of the fitted generative model.
    shrinkage : float or None
        Its covariance shrinkage; None: the best of ``SHRINKAGES`` on the
        validation split's NLL.
    hidden : int
        Width of the networks' two hidden layers (ReLU).
    steps : int
        Adam steps (batches of ``batch_size``) of every network.
    batch_size, lr : int, float
    seeds : int
        Networks per setting (seeds ``seed .. seed + seeds - 1``).
    seed : int
    eval_samples : int
        Draws of the fitted model on which the expected KL is measured.
    snapshots : int
        Log-spaced steps at which the networks are measured.

    Examples
    --------
    >>> from scratchnet.experiments.digits import DigitsSettings
    >>> DigitsSettings().sizes
    (100, 300, 1000, 3000, 10000, 30000)
    """

    sizes: tuple = (100, 300, 1000, 3000, 10000, 30000)
    dim: int = 16
    shrinkage: Optional[float] = None
    hidden: int = 64
    steps: int = 6000
    batch_size: int = 64
    lr: float = 1e-3
    seeds: int = 5
    seed: int = 0
    eval_samples: int = 4000
    snapshots: int = 12

    def __post_init__(self) -> None:
        """Refuse settings that cannot run, naming the field."""
        if (not isinstance(self.sizes, tuple) or not self.sizes
                or any(type(n) is not int or n < 2 for n in self.sizes)):
            raise ValueError(f"sizes must be a non-empty tuple of integers >= 2; got "
                             f"{self.sizes!r}")
        for name in ("dim", "hidden", "steps", "batch_size", "seeds", "eval_samples",
                     "snapshots"):
            check_positive_int(getattr(self, name), name)
        check_positive_int(self.seed, "seed", minimum=0)
        if self.dim > 64:
            raise ValueError(f"dim must be at most 64, the digits' pixels; got "
                             f"{self.dim}")
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


def _ensemble(sizes: list[int], settings: DigitsSettings, datasets: list,
              tag: int) -> tuple:
    """An ensemble of ``settings.seeds`` networks, its batches and its optimiser."""
    seeds = range(settings.seed, settings.seed + settings.seeds)
    ensemble = fast.Ensemble(sizes, rngs=list(seeds))
    rngs = [np.random.default_rng([s, tag, 1]) for s in seeds]
    batch = min(settings.batch_size, len(datasets[0][0]))
    batches = fast.stacked_epochs(datasets, batch, rngs)
    return ensemble, batches, fast.Adam(ensemble.params, lr=settings.lr)


def semi_synthetic_unit(params: tuple, n: int, settings: DigitsSettings) -> dict:
    """Train ``seeds`` networks on n samples of the fitted model; KL at snapshots.

    Parameters
    ----------
    params : tuple
        ``(means, covariances, priors)`` of the fitted model.
    n : int
    settings : DigitsSettings

    Returns
    -------
    dict
        ``n``, ``steps`` (T,), ``kl`` (T, S), ``accuracy`` (S,) on the
        evaluation sample, its ``bayes_loss`` and ``bayes_accuracy``.

    Examples
    --------
    >>> import numpy as np
    >>> from scratchnet.experiments.digits import DigitsSettings, semi_synthetic_unit
    >>> params = (np.array([[0.0], [2.0]]), np.ones((2, 1, 1)), np.array([0.5, 0.5]))
    >>> out = semi_synthetic_unit(params, 50, DigitsSettings(steps=20, seeds=2))
    >>> out["kl"].shape          # 11 snapshots (steps 10..20), 2 seeds
    (11, 2)
    """
    task = GaussianClasses(*params)
    seeds = range(settings.seed, settings.seed + settings.seeds)
    x_eval, c_eval = task.sample(settings.eval_samples,
                                 rng=np.random.default_rng([settings.seed, n, 2]))
    log_p = task.log_posterior(x_eval)
    p = np.exp(log_p)
    datasets = [task.sample(n, rng=np.random.default_rng([s, n, 3])) for s in seeds]
    sizes = [task.dim, settings.hidden, settings.hidden, task.num_classes]
    ensemble, batches, optimizer = _ensemble(sizes, settings, datasets, n)
    snaps = _snapshot_steps(settings.steps, settings.snapshots)
    kl = []

    def measure(step: int, ens: fast.Ensemble) -> None:
        log_q = ens.predict_log_proba(x_eval)                  # (S, N, M)
        kl.append((p * (log_p - log_q)).sum(axis=-1).mean(axis=-1))

    fast.train(ensemble, batches, steps=settings.steps, optimizer=optimizer,
               snapshot_steps=snaps, on_snapshot=measure)
    predicted = ensemble.forward(x_eval).argmax(axis=-1)
    return {"n": n, "steps": np.array(snaps), "kl": np.array(kl),
            "accuracy": (predicted == c_eval).mean(axis=-1),
            "bayes_loss": float(-(p * log_p).sum(axis=1).mean()),
            "bayes_accuracy": float((log_p.argmax(axis=1) == c_eval).mean())}


def real_unit(digits: Splits, settings: DigitsSettings) -> dict:
    """Train ``seeds`` networks on the digits' training split, measured on test.

    Parameters
    ----------
    digits : Splits
    settings : DigitsSettings

    Returns
    -------
    dict
        ``steps`` (T,); test ``nll``, ``ece``, ``accuracy`` (T, S) at the
        snapshots; the final ``val_logits`` and ``test_logits`` (S, n, M).

    Examples
    --------
    >>> from scratchnet.datasets import load_digits
    >>> from scratchnet.experiments.digits import DigitsSettings, real_unit
    >>> out = real_unit(load_digits(), DigitsSettings(steps=20, seeds=2))
    >>> out["test_logits"].shape
    (2, 359, 10)
    """
    x, c = digits.test
    classes = int(digits.train.c.max()) + 1
    sizes = [x.shape[1], settings.hidden, settings.hidden, classes]
    data = [tuple(digits.train)] * settings.seeds
    ensemble, batches, optimizer = _ensemble(sizes, settings, data, 0)
    snaps = _snapshot_steps(settings.steps, settings.snapshots)
    nll, ece, accuracy = [], [], []

    def measure(step: int, ens: fast.Ensemble) -> None:
        log_q = ens.predict_log_proba(x)
        nll.append([nll_loss(lq, c) for lq in log_q])
        ece.append([expected_calibration_error(np.exp(lq), c) for lq in log_q])
        accuracy.append((log_q.argmax(axis=-1) == c).mean(axis=-1))

    fast.train(ensemble, batches, steps=settings.steps, optimizer=optimizer,
               snapshot_steps=snaps, on_snapshot=measure)
    return {"steps": np.array(snaps), "nll": np.array(nll), "ece": np.array(ece),
            "accuracy": np.array(accuracy),
            "val_logits": ensemble.forward(digits.validation.x),
            "test_logits": ensemble.forward(x)}


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
    synthetic : list of dict
        :func:`semi_synthetic_unit`'s results, by increasing n.
    real : dict
        :func:`real_unit`'s result, with ``temperatures`` (S,) and, for
        ``"network"``, ``"network, T"``, ``"generative"``,
        ``"generative, T"``, the final test ``scores`` (lists over seeds for
        the networks); ``kl_to_fitted`` (S,) at T = 1 and ``kl_to_fitted_T``
        after scaling both; ``generative_temperature``.
    elapsed : float
        Seconds.
    name : str
        The data set's name ("digits" unless :func:`run_digits` was given
        another data set).

    Examples
    --------
    >>> from scratchnet.experiments.digits import DigitsResult
    >>> sorted(DigitsResult.__dataclass_fields__)[:2]
    ['elapsed', 'fitted']
    """

    settings: DigitsSettings
    fitted: FittedModel
    synthetic: list = field(default_factory=list)
    real: dict = field(default_factory=dict)
    elapsed: float = 0.0
    name: str = "digits"


def _unit(kind: str, payload: Any, settings: DigitsSettings) -> tuple:
    """One piece of work, in a worker process or here."""
    if kind == "real":
        return kind, real_unit(payload, settings)
    params, n = payload
    return kind, semi_synthetic_unit(params, n, settings)


def run_digits(settings: DigitsSettings = DigitsSettings(), *, jobs: int = 1,
               progress: Optional[Callable[[str], None]] = None,
               data: Optional[Splits] = None, name: str = "digits") -> DigitsResult:
    """Run both studies; ``jobs`` worker processes share the networks.

    Parameters
    ----------
    settings : DigitsSettings
    jobs : int, default 1
        1: in this process; more: a process pool, one BLAS thread each.
    progress : callable, optional
        Called with one line of text as each part finishes.
    data : Splits, optional
        Another data set, split three ways, classes :math:`0 .. M-1`
        (:func:`scratchnet.experiments.real.load_table` reads any); by
        default the digits.  The fitted model uses ``min(dim, D)`` principal
        components.
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
    >>> result.real["scores"]["generative"]["accuracy"] > 0.5
    True
    """
    if not isinstance(settings, DigitsSettings):
        raise TypeError(f"settings must be a DigitsSettings; got "
                        f"{type(settings).__name__}")
    jobs = check_positive_int(jobs, "jobs")
    start = time.perf_counter()
    say = progress or (lambda message: None)
    digits = load_digits() if data is None else data
    dim = min(settings.dim, digits.train.x.shape[1])
    fitted = fit_generative(digits, dim, settings.shrinkage)
    say(f"{name}: fitted Gaussian classes on {dim} principal components "
        f"(shrinkage {fitted.shrinkage:g}, chosen on validation)")
    params = (fitted.task.means, fitted.task.scales, fitted.task.priors)
    work = [("real", digits)] + [("synthetic", (params, n))
                                 for n in sorted(settings.sizes, reverse=True)]
    result = DigitsResult(settings, fitted, name=name)
    done = 0
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
                result.real = out
            else:
                result.synthetic.append(out)
            what = (f"real {name}" if kind == "real"
                    else f"semi-synthetic n={out['n']:,}")
            say(f"{name}: [{done}/{len(work)}] {what} trained "
                f"({time.perf_counter() - start:.1f} s)")
    finally:
        if jobs != 1:
            pool.shutdown(cancel_futures=True)
    result.synthetic.sort(key=lambda out: out["n"])
    _calibrate(result, digits)
    for note in result.real["temperature_notes"]:
        say(f"{name}: note: {note}")
    result.elapsed = time.perf_counter() - start
    return result


def _calibrate(result: DigitsResult, digits: Splits) -> None:
    """Temperatures on validation; final test scores and KL to the fitted model."""
    real, fitted = result.real, result.fitted
    c_val, c = digits.validation.c, digits.test.c
    gen_val = fitted.log_posterior(digits.validation.x)
    gen_test = fitted.log_posterior(digits.test.x)
    with warnings.catch_warnings(record=True) as caught:   # a T at a bound:
        warnings.simplefilter("always", ScratchnetWarning)  # kept as a note
        temps = [fit_temperature(z, c_val) for z in real["val_logits"]]
        t_gen = fit_temperature(gen_val, c_val)
    real["temperature_notes"] = list(dict.fromkeys(
        str(w.message) for w in caught if issubclass(w.category, ScratchnetWarning)))
    real["temperatures"], real["generative_temperature"] = np.array(temps), t_gen
    real["scores"] = {
        "network": [_scores(z, c, 1.0) for z in real["test_logits"]],
        "network, T": [_scores(z, c, t) for z, t in zip(real["test_logits"], temps)],
        "generative": _scores(gen_test, c, 1.0),
        "generative, T": _scores(gen_test, c, t_gen)}
    log_p = log_softmax(gen_test, axis=1)
    log_p_t = log_softmax(gen_test / t_gen, axis=1)
    log_q = log_softmax(real["test_logits"], axis=-1)
    log_q_t = log_softmax(real["test_logits"] / np.array(temps)[:, None, None],
                          axis=-1)
    real["kl_to_fitted"] = (np.exp(log_p) * (log_p - log_q)).sum(-1).mean(-1)
    real["kl_to_fitted_T"] = (np.exp(log_p_t) * (log_p_t - log_q_t)).sum(-1).mean(-1)
    real["probabilities"] = {"network": np.exp(log_q[0]),
                             "network, T": np.exp(log_q_t[0]),
                             "generative": np.exp(log_p),
                             "generative, T": np.exp(log_p_t)}
    real["test_targets"] = c

