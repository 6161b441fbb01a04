r"""The training loop: mini-batch gradient descent on the cross-entropy, recorded.

Each step draws a mini-batch :math:`(x_j, c_j)_{j=1}^{B}`, computes the mean
cross-entropy and its gradient by backpropagation, and lets the optimiser
move the parameters:

.. math::

    L_t(\theta) = -\frac1B \sum_{j=1}^{B} \log q_\theta(c_j \mid x_j), \qquad
    \theta_t = \theta_{t-1} - \eta_t\, \nabla_\theta L_t(\theta_{t-1})
    \quad \text{(plain SGD)} .

When the batches are fresh samples of :math:`P(X, C)`, :math:`L_t` is an
unbiased estimate of the population loss
:math:`\mathbb E_{x}\,[H(P(C \mid x), q(C \mid x))]`, which exceeds its floor
:math:`H(C \mid X)` (the Bayes loss) by exactly the expected KL divergence
:math:`\mathbb E_x\, \mathrm{KL}(P(C \mid x) \,\|\, q(C \mid x))`.  So the
loss curve falling to the Bayes loss *is* the model's posterior approaching
the Bayes posterior, and :func:`train` records both: the loss of every step
and, at chosen steps, the model's probabilities and its expected KL.

The loop validates its inputs once and then calls the model's and the
optimiser's unchecked fast paths (for a :class:`scratchnet.MLP`), so a step of
a small network costs tens of microseconds.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, Sequence, Tuple, Union

import numpy as np

from ._validation import (
    as_class_indices,
    as_float_array,
    as_generator,
    check_positive_int,
    check_scalar,
)
from .gaussian import GaussianClasses
from .mlp import MLP
from .optim import SGD, Adam

__all__ = ["History", "train"]

Batches = Iterator[Tuple[np.ndarray, np.ndarray]]
_PROGRESS_EVERY = 0.2  # seconds between progress-line updates


@dataclass
class History:
    r"""What a training run recorded: the loss curve and the snapshots.

    Parameters
    ----------
    losses : ndarray of float64, shape (T,)
        The mini-batch loss of every step, in nats (``losses[t]`` was
        computed before update ``t + 1``).  ``T`` is the number of steps
        done (fewer than asked if a callback stopped the run).
    snapshot_steps : ndarray of int, shape (K,)
        The step counts (number of updates made) at which snapshots were
        taken.
    snapshot_probs : ndarray of the model's dtype, shape (K, n_eval, M), or None
        ``model.predict_proba(eval_x)`` at each snapshot (None without
        ``eval_x``).
    snapshot_kl : ndarray of float64, shape (K,), or None
        ``task.expected_kl(model.predict_proba)`` at each snapshot, in nats
        (None without a task).
    eval_x : ndarray or None
        The inputs of ``snapshot_probs``.
    elapsed : float
        Wall-clock seconds spent in the loop (snapshots included).
    stopped_early : bool
        True if the callback ended the run.

    Examples
    --------
    >>> import scratchnet as sn
    >>> h = sn.History(losses=np.array([0.7, 0.5]), snapshot_steps=np.array([2]),
    ...                snapshot_probs=None, snapshot_kl=np.array([0.01]),
    ...                eval_x=None, elapsed=0.001)
    >>> h.steps, h.to_dict()["snapshot_kl"]
    (2, [0.01])
    """

    losses: np.ndarray
    snapshot_steps: np.ndarray
    snapshot_probs: np.ndarray | None
    snapshot_kl: np.ndarray | None
    eval_x: np.ndarray | None
    elapsed: float
    stopped_early: bool = False

    @property
    def steps(self) -> int:
        """The number of steps done, ``len(losses)``."""
        return len(self.losses)

    def to_dict(self) -> Dict[str, Any]:
        """The record as plain lists, floats and None (JSON-serialisable).

        Returns
        -------
        dict
            Keys as the fields, plus ``"steps"``; arrays become nested lists.

        Examples
        --------
        >>> import json
        >>> import scratchnet as sn
        >>> model = sn.TwoLayerMLP(1, 8, 2, rng=0)
        >>> history = sn.train(model, sn.tasks.separated(), steps=5, batch_size=16,
        ...                    lr=0.1, rng=0)
        >>> record = history.to_dict()
        >>> record["steps"], len(record["losses"])
        (5, 5)
        >>> sn.History.from_dict(json.loads(json.dumps(record))).steps
        5
        """

        def plain(a: np.ndarray | None) -> Any:
            return None if a is None else np.asarray(a).tolist()

        return {
            "steps": self.steps,
            "losses": plain(self.losses),
            "snapshot_steps": plain(self.snapshot_steps),
            "snapshot_probs": plain(self.snapshot_probs),
            "snapshot_kl": plain(self.snapshot_kl),
            "eval_x": plain(self.eval_x),
            "elapsed": float(self.elapsed),
            "stopped_early": bool(self.stopped_early),
        }

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> History:
        """Rebuild a History from :meth:`to_dict`'s output (e.g. read from JSON).

        Parameters
        ----------
        d : dict
            As returned by :meth:`to_dict`.

        Returns
        -------
        History
        """

        def array(key: str, dtype: Any = np.float64) -> np.ndarray | None:
            return None if d.get(key) is None else np.asarray(d[key], dtype=dtype)

        return cls(losses=array("losses"),
                   snapshot_steps=array("snapshot_steps", np.int64),
                   snapshot_probs=array("snapshot_probs"),
                   snapshot_kl=array("snapshot_kl"), eval_x=array("eval_x"),
                   elapsed=float(d["elapsed"]),
                   stopped_early=bool(d.get("stopped_early", False)))


# --- where the batches come from --------------------------------------------


def _check_batch(x: Any, c: Any, model: MLP, source: str
                 ) -> Tuple[np.ndarray, np.ndarray]:
    """Cheap per-batch checks for the MLP fast path (shapes, dtypes, label range)."""
    if not (isinstance(x, np.ndarray) and x.dtype.kind == "f"):
        x = as_float_array(x, f"x from the {source}")
    d, m = model.sizes[0], model.sizes[-1]
    if x.ndim == 1 and d == 1:
        x = x.reshape(-1, 1)
    if x.ndim != 2 or x.shape[1] != d:
        raise ValueError(f"x from the {source} must have shape (n, {d}) for this "
                         f"model; got shape {x.shape}")
    if not (isinstance(c, np.ndarray) and c.dtype.kind in "iu" and c.size
            and c.min() >= 0 and c.max() < m):
        c = as_class_indices(c, m, f"labels c from the {source}")
    if c.shape != (x.shape[0],):
        raise ValueError(f"labels c from the {source} must have shape "
                         f"({x.shape[0]},), one per row of x; got {c.shape}")
    return x, c


def _epochs(x: np.ndarray, c: np.ndarray, batch_size: int,
            rng: np.random.Generator) -> Batches:
    """Shuffled passes over a fixed dataset; the last, partial batch is kept."""
    n = len(x)
    while True:
        order = rng.permutation(n)
        for start in range(0, n, batch_size):
            batch = order[start:start + batch_size]
            yield x[batch], c[batch]


def _checker(model: Any, source: str) -> Callable:
    """Per-batch checks for the fast path; other models check their own input."""
    if isinstance(model, MLP):
        return lambda x, c: _check_batch(x, c, model, source)
    return lambda x, c: (x, c)


def _draws(sample: Callable, batch_size: int, rng: np.random.Generator,
           check: Callable, trusted: bool) -> Batches:
    """Fresh batches; after the first, a ``trusted`` source is not re-checked."""
    yield check(*sample(batch_size, rng))
    if trusted:
        while True:
            yield sample(batch_size, rng)
    while True:
        x, c = sample(batch_size, rng)
        yield check(x, c)


def _batches(data: Any, model: Any, batch_size: int, rng: np.random.Generator
             ) -> Tuple[Batches, Any]:
    """The batch iterator for ``data`` and the task it is, if it is one."""
    fast = isinstance(model, MLP)
    if isinstance(data, (tuple, list)):
        if len(data) != 2:
            raise ValueError("a fixed dataset must be a pair (x, c); got a "
                             f"{type(data).__name__} of length {len(data)}")
        x = as_float_array(data[0], "x", allow_empty=False)
        c = np.asarray(data[1])
        if len(x) != len(c):
            raise ValueError(f"x and c must have the same length; got {len(x)} "
                             f"inputs and {len(c)} labels")
        if batch_size > len(x):
            raise ValueError(f"batch_size must be at most the dataset size {len(x)}; "
                             f"got {batch_size}")
        if fast:
            x, c = _check_batch(x, c, model, "dataset")
            x = x.astype(model.dtype, copy=False)  # once, not every batch
        return _epochs(x, c, batch_size, rng), None
    if hasattr(data, "sample"):
        # scratchnet's own tasks always return float64 (n, D) inputs and int64
        # labels in [0, M): once the first batch fits the model, all will.
        trusted = type(data) is GaussianClasses
        if fast and getattr(data, "num_classes", model.sizes[-1]) != model.sizes[-1]:
            raise ValueError(f"the task has {data.num_classes} classes but the model "
                             f"has {model.sizes[-1]} outputs")
        return _draws(data.sample, batch_size, rng, _checker(model, "task"),
                      trusted), data
    if callable(data):
        return _draws(data, batch_size, rng, _checker(model, "sampler"), False), None
    raise TypeError("data must be a task (with .sample(n, rng)), a pair (x, c) or "
                    f"a sampler(n, rng) -> (x, c); got {type(data).__name__}")


# --- the optimiser, the schedule, the snapshots -------------------------------


def _optimizer(model: Any, optimizer: Any, lr: Any, first: float | None,
               momentum: float) -> Any:
    """The optimiser to use; ``first`` is the validated rate of the first step."""
    if isinstance(optimizer, str):
        if optimizer not in ("sgd", "adam"):
            raise ValueError(f"optimizer must be 'sgd', 'adam' or an optimiser "
                             f"instance; got {optimizer!r}")
        if first is None:
            raise TypeError(f"lr is required with optimizer={optimizer!r}")
        if optimizer == "sgd":
            return SGD(model.params, first, momentum=momentum)
        if momentum:
            raise ValueError("momentum applies to optimizer='sgd' only (Adam's is "
                             f"betas); got momentum={momentum!r}")
        return Adam(model.params, first)
    if not (hasattr(optimizer, "step") and hasattr(optimizer, "lr")):
        raise TypeError("optimizer must be 'sgd', 'adam' or an object with "
                        f".step(grads) and .lr; got {type(optimizer).__name__}")
    params = getattr(optimizer, "params", None)
    if not (isinstance(params, dict) and params.keys() == model.params.keys()
            and all(params[k] is p for k, p in model.params.items())):
        raise ValueError("optimizer must have been built on model.params "
                         "(e.g. sn.Adam(model.params, lr=1e-3))")
    if momentum:
        raise ValueError("momentum applies only to optimizer='sgd'; set it when "
                         "building the optimiser instance")
    if lr is not None and not callable(lr):
        raise ValueError(f"lr={lr!r} was given with an optimiser instance; set the "
                         "rate when building it, or pass a schedule lr(step)")
    return optimizer


def _lr_at(lr: Any, step: int) -> float:
    """The learning rate for update ``step + 1`` (0-based ``step``)."""
    if not callable(lr):
        return check_scalar(lr, "lr", low=0.0, low_inclusive=False, high=math.inf,
                            high_inclusive=False)
    value = lr(step)
    try:
        return check_scalar(value, f"lr({step})", low=0.0, low_inclusive=False,
                            high=math.inf, high_inclusive=False)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"the schedule returned a bad learning rate: {exc}") from None


def _snapshots(snapshot_steps: Any, steps: int) -> Sequence[int]:
    snaps = sorted({check_positive_int(s, "snapshot_steps entries")
                    for s in snapshot_steps})
    if snaps and snaps[-1] > steps:
        raise ValueError(f"snapshot_steps must be in [1, steps={steps}]; "
                         f"got {snaps[-1]}")
    return snaps


def _params_finite(model: Any) -> bool:
    if isinstance(model, MLP):
        return bool(np.isfinite(model.flat_params).all())
    return all(np.isfinite(p).all() for p in model.params.values())


def _diverged(step: int, loss: float, lr: float, model: Any, x: Any
              ) -> FloatingPointError:
    if _params_finite(model) and not np.isfinite(np.asarray(x, dtype=float)).all():
        return FloatingPointError(f"the loss is {loss} at step {step}: the batch "
                                  "contains NaN or infinite inputs")
    return FloatingPointError(
        f"the training loss became {loss} at step {step} (lr={lr:g}): the updates "
        "diverged; try a smaller learning rate"
    )


def train(
    model: Any,
    data: Any,
    *,
    steps: int,
    batch_size: int,
    lr: Union[float, Callable[[int], float], None] = None,
    momentum: float = 0.0,
    optimizer: Any = "sgd",
    rng: Any = None,
    snapshot_steps: Sequence[int] = (),
    eval_x: Any = None,
    task: Any = None,
    callback: Callable[[int, float, Any], Any] | None = None,
    progress: bool = False,
) -> History:
    r"""Train ``model`` by mini-batch gradient descent on the cross-entropy.

    Parameters
    ----------
    model : MLP or any model
        Anything with ``.params``, ``.loss_and_grads(x, targets)`` and
        ``.predict_proba(x)``; an :class:`scratchnet.MLP` (or
        :class:`scratchnet.TwoLayerMLP`) runs the fast path, which reuses the
        model's buffers and checks the data once instead of every step.
    data : task, (x, c) or callable
        Where the batches come from:

        * a *task* (anything with ``.sample(n, rng)``, e.g.
          ``sn.tasks.separated()``): every step draws a fresh batch, as in
          the original experiments (an endless stream of data);
        * a fixed dataset ``(x, c)`` with ``x`` of shape (n, D) (or (n,)
          when D = 1) and labels ``c`` of shape (n,): shuffled epochs, like
          ``DataLoader(shuffle=True, drop_last=False)`` -- reshuffled at the
          start of every epoch, batches taken in order, the last partial
          batch kept (it is a step of its own);
        * a sampler ``sampler(n, rng) -> (x, c)``, e.g. inputs drawn
          uniformly over a range with labels from ``task.sample_labels``.
    steps : int
        Number of updates (>= 1).
    batch_size : int
        Samples per step (>= 1; at most n for a fixed dataset).
    lr : float or callable, optional
        Learning rate :math:`\eta > 0`, or a schedule ``lr(step) -> float``
        called once per update with its 0-based index (``lr(0)`` for the
        first, asked before training starts) and written to
        ``optimizer.lr`` before the update.  Required with a
        string ``optimizer``; with an optimiser instance only a schedule
        may be given (its own rate is used otherwise).
    momentum : float, default 0.0
        SGD momentum (``optimizer="sgd"`` only).
    optimizer : {"sgd", "adam"} or optimiser, default "sgd"
        ``"sgd"`` builds ``SGD(model.params, lr, momentum=momentum)``,
        ``"adam"`` builds ``Adam(model.params, lr)`` (default betas); or an
        instance already built on ``model.params`` (then ``lr`` and
        ``momentum`` do not apply, except a schedule).
    rng : numpy.random.Generator or int or None, optional
        Randomness for batches and shuffling (the model's initial weights
        come from its own ``rng``).
    snapshot_steps : sequence of int, optional
        Step counts in ``[1, steps]`` (e.g. 10, 100, 1000) after which to
        record ``predict_proba(eval_x)`` and the expected KL; sorted,
        duplicates ignored.
    eval_x : array_like, shape (n_eval, D) or (n_eval,), optional
        Inputs for the snapshot probabilities.
    task : task, optional
        Task whose ``expected_kl`` is recorded at snapshots; defaults to
        ``data`` when ``data`` is a task.
    callback : callable, optional
        ``callback(step, loss, model)`` after every update (``step``
        counts updates from 1); returning ``False`` stops training.
    progress : bool, default False
        Print a one-line progress report to stderr (updated in place).

    Returns
    -------
    History
        Loss of every step, snapshots, elapsed time.

    Raises
    ------
    FloatingPointError
        If the loss becomes NaN or infinite (naming the step): the learning
        rate is too large for the problem.
    ValueError, TypeError
        For bad arguments, before any step is taken.

    Notes
    -----
    With fresh batches from the task and plain SGD (the defaults), the
    parameters descend an unbiased estimate of the population loss, whose
    minimiser is the Bayes posterior (Gibbs' inequality); the recorded
    expected KL is the distance still to go, and the mean loss approaches
    ``task.bayes_loss()`` from above.  Floating-point warnings are silenced
    inside the loop; a non-finite loss is reported instead.

    Examples
    --------
    >>> import scratchnet as sn
    >>> task = sn.tasks.separated()
    >>> model = sn.TwoLayerMLP(1, 64, 2, rng=0)
    >>> history = sn.train(model, task, steps=1000, batch_size=64, lr=0.1, rng=1,
    ...                    snapshot_steps=[1000])
    >>> bool(history.snapshot_kl[-1] < 0.01)   # nats from the Bayes posterior
    True
    >>> gap = history.losses[-500:].mean() - task.bayes_loss()
    >>> bool(abs(gap) < 0.02)   # the loss has reached the Bayes loss H(C|X)
    True
    """
    steps = check_positive_int(steps, "steps")
    batch_size = check_positive_int(batch_size, "batch_size")
    momentum = check_scalar(momentum, "momentum", low=0.0, high=math.inf,
                            high_inclusive=False)
    for name in ("params", "loss_and_grads", "predict_proba"):
        if not hasattr(model, name):
            raise TypeError(f"model must have .{name} (see sn.MLP); got "
                            f"{type(model).__name__}")
    rng = as_generator(rng)
    snaps = _snapshots(snapshot_steps, steps)
    batches, data_task = _batches(data, model, batch_size, rng)
    task = data_task if task is None else task
    if task is not None and not hasattr(task, "expected_kl"):
        raise TypeError(f"task must have .expected_kl; got {type(task).__name__}")
    if eval_x is not None:
        eval_x = (model._check_x(eval_x) if isinstance(model, MLP)
                  else as_float_array(eval_x, "eval_x"))
    if snaps and eval_x is None and task is None:
        raise ValueError("snapshot_steps need eval_x or a task to record")
    first_lr = None if lr is None else _lr_at(lr, 0)
    opt = _optimizer(model, optimizer, lr, first_lr, momentum)
    schedule = lr if callable(lr) else None
    if schedule is not None:
        opt.lr = first_lr
    if callback is not None and not callable(callback):
        raise TypeError(f"callback must be callable; got {type(callback).__name__}")

    losses = np.empty(steps)
    probs, kls = [], []
    fast = isinstance(model, MLP)
    grads = model.grads if fast else None
    taken, done, stopped = 0, 0, False  # snapshots taken, steps done
    start = last_report = time.perf_counter()
    with np.errstate(all="ignore"):
        for step in range(1, steps + 1):
            x, c = next(batches)
            if schedule is not None and step > 1:
                opt.lr = _lr_at(schedule, step - 1)
            if fast:
                loss = model._loss_and_grads_unchecked(x, c)
            else:
                try:
                    loss, grads = model.loss_and_grads(x, c)
                except ValueError as exc:  # e.g. infinite logits rejected by the loss
                    if step == 1:
                        raise  # nothing trained yet: the input is at fault
                    raise FloatingPointError(
                        f"the model's loss failed at step {step} (lr={opt.lr:g}): "
                        f"{exc}; if the updates diverged, try a smaller learning "
                        "rate") from exc
                loss = float(loss)
            if not math.isfinite(loss):
                raise _diverged(step, loss, opt.lr, model, x)
            opt.step(grads)
            losses[step - 1] = loss
            done = step
            if taken < len(snaps) and step == snaps[taken]:
                if eval_x is not None:
                    probs.append(model.predict_proba(eval_x))
                if task is not None:
                    kls.append(task.expected_kl(model.predict_proba))
                taken += 1
            if callback is not None and callback(step, loss, model) is False:
                stopped = step < steps
                break
            if progress and time.perf_counter() - last_report >= _PROGRESS_EVERY:
                last_report = time.perf_counter()
                rate = step / (last_report - start)
                print(f"\rstep {step}/{steps}  loss {loss:.4f}  {rate:,.0f} steps/s",
                      end="", file=sys.stderr, flush=True)
    elapsed = time.perf_counter() - start
    if progress:
        print(f"\rstep {done}/{steps}  loss {losses[done - 1]:.4f}  "
              f"{elapsed:.2f} s", file=sys.stderr, flush=True)
    if not _params_finite(model):
        raise FloatingPointError(f"the parameters became NaN or infinite at step "
                                 f"{done} (lr={opt.lr:g}); try a smaller learning rate")
    snapshot_probs = None
    if eval_x is not None:  # (K, n_eval, M), also when K = 0
        snapshot_probs = (np.stack(probs) if probs
                          else model.predict_proba(eval_x)[None][:0])
    return History(
        losses=losses[:done],
        snapshot_steps=np.asarray(snaps[:taken], dtype=np.int64),
        snapshot_probs=snapshot_probs,
        snapshot_kl=np.asarray(kls, dtype=np.float64) if task is not None else None,
        eval_x=eval_x,
        elapsed=elapsed,
        stopped_early=stopped,
    )
