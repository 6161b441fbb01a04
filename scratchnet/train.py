r"""Training: forward, backward, update -- one step, then many, recorded.

One step of mini-batch gradient descent is two lines (:func:`train_step`):

.. code-block:: python

    loss, grads = model.loss_and_grads(x, targets)   # forward, loss, backward
    optimizer.step(grads)                            # update

With the mean cross-entropy of a batch :math:`(x_j, c_j)_{j=1}^{B}`,

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
the Bayes posterior.  :func:`train` runs the steps and records both: the
loss of every step and, at chosen steps, the model's probabilities and its
expected KL.  Where the batches come from, the learning-rate schedule, the
snapshots, the callback and the progress line all live around the step,
never inside it: :func:`train`'s body is its loop, and each of them is a
named collaborator (``_Run``, below it, checks the arguments and holds the
batches, the optimiser and the schedule; ``Snapshots`` records,
:class:`~scratchnet.history.EarlyStopping` watches the validation loss,
``ProgressLine`` writes the progress line).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence, Union

import numpy as np

from ._recording import ProgressLine, Snapshots
from ._validation import (
    as_generator,
    check_positive_int,
    check_scalar,
)
from .batches import batches_of, check_inputs, epochs, hold_out
from .history import EarlyStopping, History
from .objectives import get_loss
from .optim import SGD, Adam

__all__ = ["History", "epochs", "keep_loss", "train", "train_step"]


def train_step(model: Any, optimizer: Any, x: Any, targets: Any, *,
               loss: Any = None) -> float:
    r"""One step of gradient descent: forward, loss and gradient, backward, update.

    Parameters
    ----------
    model : MLP or any model
        Anything with ``loss_and_grads(x, targets[, loss=...])`` returning the
        loss and a dict of gradients.
    optimizer : Optimizer
        Built on (some of) ``model.params``.
    x, targets : array_like
        One batch.
    loss : str or Loss, optional
        Passed on to ``model.loss_and_grads``; None leaves the model's own
        (``model.loss``).  A model that keeps its loss (``model.loss``, as
        :class:`scratchnet.MLP` does) records it: it then reads its outputs
        through the loss it was trained with.

    Returns
    -------
    float
        The batch's loss before the update.

    Examples
    --------
    >>> import scratchnet as sn
    >>> model = sn.TwoLayerMLP(1, 8, 2, rng=0)
    >>> opt = sn.SGD(model.params, lr=0.1)
    >>> first = sn.train_step(model, opt, [0.0, 3.0], [0, 1])
    >>> second = sn.train_step(model, opt, [0.0, 3.0], [0, 1])
    >>> bool(second < first)
    True
    """
    if not callable(getattr(optimizer, "step", None)):
        raise TypeError(f"optimizer must have .step(grads); got {optimizer!r}")
    loss = keep_loss(model, loss)
    if loss is None:
        value, grads = model.loss_and_grads(x, targets)  # forward, loss, backward
    else:
        value, grads = model.loss_and_grads(x, targets, loss=loss)
    optimizer.step(grads)  # update
    return float(value)


def keep_loss(model: Any, loss: Any) -> Any:
    """Record ``loss`` as ``model.loss`` when the model keeps one; return it.

    Parameters
    ----------
    model : MLP or any model
        A model whose ``loss`` attribute is a loss object (as
        :class:`scratchnet.MLP`'s) records ``loss``; others are left alone.
    loss : str or Loss or None
        None changes nothing.

    Returns
    -------
    Loss or str or None
        The loss object recorded, or ``loss`` as given.

    Examples
    --------
    >>> import scratchnet as sn
    >>> from scratchnet.train import keep_loss
    >>> model = sn.MLP([1, 4, 2], rng=0)
    >>> keep_loss(model, "mse"), model.loss
    (MSELoss(), MSELoss())
    """
    kept = getattr(model, "loss", None)
    if loss is None or not callable(getattr(kept, "loss_and_grad", None)):
        return loss
    model.loss = get_loss(loss, outputs=model.sizes[-1])
    return model.loss


def _check_outputs(model: Any, task: Any, loss: Any) -> None:
    """The model's outputs must fit the task's classes and the loss."""
    sizes, classes = getattr(model, "sizes", None), getattr(task, "num_classes", None)
    if sizes is None or classes is None or sizes[-1] == classes:
        return
    if sizes[-1] == 1 and classes == 2:
        name = getattr(loss, "name", loss)
        if name in (None, "cross_entropy"):
            raise ValueError("the model has 1 output, the logit of class 1: train it "
                             "with loss='binary_cross_entropy' (cross-entropy needs "
                             "one output per class)")
        return
    raise ValueError(f"the task has {classes} classes but the model has {sizes[-1]} "
                     f"outputs: build it with one per class (sizes[-1] = {classes})")


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
    ours = params is None or all(model.params.get(k) is p for k, p in params.items())
    if not ours:
        raise ValueError("optimizer must have been built on model.params (or a subset "
                         "of it), e.g. sn.Adam(model.params, lr=1e-3)")
    if momentum:
        raise ValueError("momentum applies only to optimizer='sgd'; set it when "
                         "building the optimiser instance")
    if lr is not None and not callable(lr):
        raise ValueError(f"lr={lr!r} was given with an optimiser instance; set the "
                         "rate when building it, or pass a schedule lr(step)")
    return optimizer


def _lr_at(lr: Any, step: int) -> float:
    """The learning rate for update ``step + 1`` (0-based ``step``)."""
    if not callable(lr):  # a constant 0 would train nothing
        return check_scalar(lr, "lr", low=0.0, low_inclusive=False, high=math.inf,
                            high_inclusive=False)
    try:  # a schedule may pass through 0 (a step that changes nothing)
        return check_scalar(lr(step), f"lr({step})", low=0.0, high=math.inf,
                            high_inclusive=False)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"the schedule returned a bad learning rate: {exc}") from None


def _snapshots(snapshot_steps: Any, steps: int) -> Sequence[int]:
    if isinstance(snapshot_steps, (str, bytes)) or not np.iterable(snapshot_steps):
        raise TypeError("snapshot_steps must be a sequence of step counts like "
                        f"[100, 1000]; got {snapshot_steps!r}")
    snaps = sorted({check_positive_int(s, "snapshot_steps entries")
                    for s in snapshot_steps})
    if snaps and snaps[-1] > steps:
        raise ValueError(f"snapshot_steps must be in [1, steps={steps}]; "
                         f"got {snaps[-1]}")
    return snaps


def _step_or_explain(model: Any, opt: Any, x: Any, c: Any, loss: Any,
                     step: int) -> float:
    """:func:`train_step`, its failures after the first step told as divergence."""
    try:
        value = train_step(model, opt, x, c, loss=loss)
    except ValueError as exc:  # e.g. infinite logits rejected by the loss
        if step == 1:
            raise  # nothing trained yet: the input is at fault
        raise FloatingPointError(
            f"the model's loss failed at step {step} (lr={opt.lr:g}): {exc}; if the "
            "updates diverged, try a smaller learning rate") from exc
    if not math.isfinite(value):
        raise FloatingPointError(
            f"the training loss became {value} at step {step} (lr={opt.lr:g}): the "
            "updates diverged; try a smaller learning rate")
    return value


def train(
    model: Any,
    data: Any,
    *,
    steps: int,
    batch_size: int,
    lr: Union[float, Callable[[int], float], None] = None,
    momentum: float = 0.0,
    optimizer: Any = "sgd",
    loss: Any = None,
    rng: Any = None,
    snapshot_steps: Sequence[int] = (),
    eval_x: Any = None,
    task: Any = None,
    callback: Callable[[int, float, Any], Any] | None = None,
    progress: bool = False,
    validation: Any = None,
    patience: int | None = None,
    validation_every: int | None = None,
) -> History:
    r"""Train ``model`` by mini-batch gradient descent, recording what happens.

    Parameters
    ----------
    model : MLP or any model
        Anything with ``.params``, ``.loss_and_grads(x, targets)`` and
        ``.predict_proba(x)``: :class:`scratchnet.MLP`, the fast path's
        :class:`scratchnet.fast.MLP`, or a model of your own (its
        ``loss_and_grads`` is what trains it).
    data : task, (x, c) or callable
        Where the batches come from:

        * a *task* (anything with ``.sample(n, rng)``, e.g.
          ``sn.tasks.separated()``): a fresh batch every step;
        * a fixed dataset ``(x, c)``, ``x`` of shape (n, D) (or (n,) when
          D = 1): shuffled epochs like ``DataLoader(shuffle=True)``,
          reshuffled every epoch, the last partial batch kept;
        * a sampler ``sampler(n, rng) -> (x, c)``.
    steps : int
        Number of updates (>= 1).
    batch_size : int
        Samples per step (at most n for a fixed dataset).
    lr : float or callable, optional
        Learning rate :math:`\eta > 0`, or a schedule ``lr(step) -> float``
        (:mod:`scratchnet.schedules`; rates >= 0) called with the 0-based
        index of each update and written to ``optimizer.lr`` before it.
        Required with a string ``optimizer``; with an optimiser instance
        only a schedule may be given.
    momentum : float, default 0.0
        SGD momentum (``optimizer="sgd"`` only).
    optimizer : {"sgd", "adam"} or Optimizer, default "sgd"
        ``"sgd"`` builds ``SGD(model.params, lr, momentum=momentum)``,
        ``"adam"`` builds ``Adam(model.params, lr)``; or an instance built
        on ``model.params`` or a subset of it (the rest stays fixed).
    loss : str or Loss, optional
        The loss to train with, passed to ``model.loss_and_grads``:
        ``"cross_entropy"``, ``"binary_cross_entropy"`` (one output),
        ``"mse"``, ``"hinge"`` or a loss object; None uses the model's own
        (``model.loss``).  The model records it (:func:`train_step`), and
        its snapshots read the outputs through it.
    rng : numpy.random.Generator or int or None, optional
        Randomness for batches and shuffling.
    snapshot_steps : sequence of int, optional
        Step counts in ``[1, steps]`` after which to record
        ``predict_proba(eval_x)`` and the expected KL.
    eval_x : array_like, shape (n_eval, D) or (n_eval,), optional
        Inputs of the snapshot probabilities.
    task : task, optional
        Whose ``expected_kl`` is recorded at snapshots; defaults to ``data``
        when it is a task.
    callback : callable, optional
        ``callback(step, loss, model)`` after every update; returning
        ``False`` stops training.
    progress : bool, default False
        A progress line on stderr (steps, rate, time left).
    validation : (x_val, c_val) or float, optional
        A validation set, or the share in (0, 1) of a fixed dataset ``data``
        to hold out from training (:func:`scratchnet.batches.hold_out`): its
        negative log-likelihood is recorded in the History
        (:class:`scratchnet.history.EarlyStopping`).
    patience : int, optional
        With ``validation``: stop after this many measurements in a row
        without a new lowest validation NLL, and restore the parameters of
        the lowest (early stopping).  None: record only.
    validation_every : int, optional
        Steps between measurements; by default one epoch of a fixed dataset
        (``ceil(n / batch_size)``), 100 steps otherwise.

    Returns
    -------
    History

    Raises
    ------
    FloatingPointError
        If the loss becomes NaN or infinite (naming the step).
    ValueError, TypeError
        For bad arguments, before any step is taken.

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

    Early stopping on a quarter of a fixed sample held out (the validation
    NLL measured once an epoch, the best parameters restored):

    >>> x, c = task.sample(200, rng=0)
    >>> history = sn.train(sn.MLP([1, 16, 2], rng=0), (x, c), steps=2000,
    ...                    batch_size=30, lr=0.05, rng=1, validation=0.25, patience=5)
    >>> bool(history.best_step <= history.steps <= 2000), history.validation_steps[:3]
    (True, array([ 5, 10, 15]))
    """
    run = _Run.checked(model, data, steps=steps, batch_size=batch_size, lr=lr,
                       momentum=momentum, optimizer=optimizer, loss=loss, rng=rng,
                       snapshot_steps=snapshot_steps, eval_x=eval_x, task=task,
                       callback=callback, progress=progress, validation=validation,
                       patience=patience, validation_every=validation_every)
    losses = np.empty(run.steps)
    done, stopped = 0, False
    for step in range(1, run.steps + 1):
        run.set_learning_rate(step)                      # the schedule, if any
        x, c = next(run.batches)
        losses[step - 1] = _step_or_explain(model, run.opt, x, c, run.loss, step)
        done = step
        run.snapshots.record(step, model)                # probabilities, expected KL
        if run.should_stop(step, losses[step - 1], model):  # callback, early stopping
            stopped = step < run.steps
            break
        run.progress.update(step, losses[step - 1])
    elapsed = run.progress.close(done, losses[done - 1])
    best_step = run.watch.restore(model) if run.watch is not None else None
    _check_finite_parameters(model, done, run.opt)
    return History(losses=losses[:done], **run.snapshots.fields(), elapsed=elapsed,
                   stopped_early=stopped, best_step=best_step,
                   validation_steps=None if run.watch is None else run.watch.steps,
                   validation_nll=None if run.watch is None else run.watch.nll)


# --- the loop's set-up: the checked arguments, the run they describe --------------


class _Run:
    """The checked set-up of :func:`train`: batches, optimiser, schedule, recorders.

    Built by :meth:`checked`, which raises for every bad argument before a
    step is taken.
    """

    def __init__(self, **parts: Any) -> None:
        self.__dict__.update(parts)

    def set_learning_rate(self, step: int) -> None:
        """Write the schedule's rate for update ``step`` (1-based) to the optimiser."""
        if self.schedule is not None:
            self.opt.lr = self.first_lr if step == 1 else _lr_at(self.schedule,
                                                                 step - 1)

    def should_stop(self, step: int, loss: float, model: Any) -> bool:
        """Whether the callback returned False or early stopping ends the run."""
        if self.callback and self.callback(step, loss, model) is False:
            return True
        return self.watch is not None and self.watch.update(
            step, model, last=step == self.steps)

    @classmethod
    def checked(cls, model: Any, data: Any, *, steps: Any, batch_size: Any, lr: Any,
                momentum: Any, optimizer: Any, loss: Any, rng: Any,
                snapshot_steps: Any, eval_x: Any, task: Any, callback: Any,
                progress: Any, validation: Any, patience: Any,
                validation_every: Any) -> _Run:
        """The arguments of :func:`train` checked, and the run they describe."""
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
        if validation is not None:
            data, (x_val, c_val) = hold_out(data, validation, model, rng)
        elif patience is not None:
            raise ValueError("patience needs a validation set: pass validation=(x, c) "
                             "or a share of the dataset such as validation=0.1")
        loss = keep_loss(model, loss)
        if loss is not None and getattr(model, "loss", None) is loss:
            loss = None  # recorded on the model: every step reads it there
        _check_outputs(model, data if hasattr(data, "sample") else None,
                       getattr(model, "loss", None) if loss is None else loss)
        batches, data_task = batches_of(data, model, batch_size, rng)
        watch = None if validation is None else EarlyStopping(
            x_val, c_val, every=validation_every or _epoch(data, batch_size),
            patience=patience)
        task = data_task if task is None else task
        if task is not None and not hasattr(task, "expected_kl"):
            raise TypeError(f"task must have .expected_kl; got {type(task).__name__}")
        if eval_x is not None:
            eval_x = check_inputs(eval_x, model, "eval_x")
        if snaps and eval_x is None and task is None:
            raise ValueError("snapshot_steps need eval_x or a task to record")
        first_lr = None if lr is None else _lr_at(lr, 0)
        opt = _optimizer(model, optimizer, lr, first_lr, momentum)
        schedule = lr if callable(lr) else None
        if callback is not None and not callable(callback):
            raise TypeError(f"callback must be callable; got {type(callback).__name__}")
        if not isinstance(progress, (bool, np.bool_)):
            raise TypeError(f"progress must be True or False; got {progress!r}")
        return cls(steps=steps, batches=batches, opt=opt, schedule=schedule,
                   first_lr=first_lr, loss=loss, callback=callback, watch=watch,
                   snapshots=Snapshots(snaps, eval_x, task, model),
                   progress=ProgressLine(steps, progress))


def _check_finite_parameters(model: Any, step: int, opt: Any) -> None:
    """Refuse to return a model whose training ended in NaN or inf parameters."""
    if not all(np.isfinite(p).all() for p in model.params.values()):
        raise FloatingPointError(f"the parameters became NaN or infinite at step "
                                 f"{step} (lr={opt.lr:g}); try a smaller learning rate")


def _epoch(data: Any, batch_size: int) -> int:
    """Steps in one epoch of a fixed dataset; 100 for a task or a sampler."""
    if isinstance(data, (tuple, list)):
        return -(-len(data[0]) // batch_size)
    return 100
