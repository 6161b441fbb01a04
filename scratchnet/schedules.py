r"""Learning-rate schedules: the step size as a function of the step.

Stochastic gradient descent with a constant rate :math:`\eta` does not settle
at the minimiser: each step follows a mini-batch's gradient, an unbiased but
noisy estimate of the population gradient, so the parameters keep jittering
in a cloud whose size grows with :math:`\eta`.  A schedule
:math:`t \mapsto \eta_t` takes large steps early, to get near the minimiser
(the Bayes posterior, for the cross-entropy), and small ones late, to shrink
the cloud.  The classic condition for convergence (Robbins and Monro) is
:math:`\sum_t \eta_t = \infty` and :math:`\sum_t \eta_t^2 < \infty`.

Each schedule here is a callable ``schedule(t) -> float``, with :math:`t =
0, 1, \dots` the index of the update (``t = 0`` is the first), and can be
passed as ``lr=`` of :func:`scratchnet.train`.  Names, arguments and values
follow ``torch.optim.lr_scheduler`` (``lr`` is the optimiser's initial rate
there): the rate PyTorch's optimiser uses for update :math:`t + 1`, after
:math:`t` calls of ``scheduler.step()``, is ``schedule(t)`` here.  Each is
written in its closed form:

==========================  ===================================================
:class:`Constant`           :math:`\eta_t = \eta`
:class:`StepLR`             :math:`\eta_t = \eta\, \gamma^{\lfloor t / s \rfloor}`
:class:`CosineAnnealingLR`  :math:`\eta_t = \eta_\min + \tfrac12 (\eta -
                            \eta_\min)(1 + \cos(\pi t / T))`
:class:`LinearLR`           :math:`\eta_t = \eta\,(f_0 + (f_1 - f_0)
                            \min(t, n) / n)`: a linear warm-up
:class:`SequentialLR`       one schedule after another, each restarted at
                            its milestone (a warm-up, then a cosine)
==========================  ===================================================
"""

from __future__ import annotations

import bisect
import math
from typing import Any, Callable, Sequence

from ._validation import check_positive_int, check_scalar

__all__ = ["Constant", "CosineAnnealingLR", "LinearLR", "SequentialLR", "StepLR"]


def _rate(value: Any, name: str) -> float:
    """A finite number >= 0."""
    return check_scalar(value, name, low=0.0, high=math.inf, high_inclusive=False)


def _step(t: Any) -> int:
    """The 0-based index of an update."""
    return check_positive_int(t, "t (the step)", minimum=0)


class Constant:
    r"""The same rate at every step: :math:`\eta_t = \eta`.

    Parameters
    ----------
    lr : float
        :math:`\eta \ge 0`, finite.

    Examples
    --------
    >>> import scratchnet as sn
    >>> schedule = sn.Constant(0.1)
    >>> schedule(0), schedule(10_000)
    (0.1, 0.1)
    """

    def __init__(self, lr: float) -> None:
        self.lr = _rate(lr, "lr")

    def __call__(self, t: int) -> float:
        _step(t)
        return self.lr

    def __repr__(self) -> str:
        return f"Constant({self.lr:g})"


class StepLR:
    r"""Step decay: the rate times ``gamma`` every ``step_size`` steps.

    .. math:: \eta_t = \eta\, \gamma^{\lfloor t / \text{step\_size} \rfloor}

    Parameters
    ----------
    lr : float
        The initial rate :math:`\eta \ge 0`.
    step_size : int
        Steps between two decays (>= 1).
    gamma : float, default 0.1
        The factor of each decay, :math:`\gamma \ge 0`.

    Examples
    --------
    >>> import scratchnet as sn
    >>> schedule = sn.StepLR(1.0, step_size=100, gamma=0.5)
    >>> [schedule(t) for t in (0, 99, 100, 250)]
    [1.0, 1.0, 0.5, 0.25]
    """

    def __init__(self, lr: float, step_size: int, gamma: float = 0.1) -> None:
        self.lr = _rate(lr, "lr")
        self.step_size = check_positive_int(step_size, "step_size")
        self.gamma = _rate(gamma, "gamma")

    def __call__(self, t: int) -> float:
        return self.lr * self.gamma ** (_step(t) // self.step_size)

    def __repr__(self) -> str:
        return f"StepLR({self.lr:g}, step_size={self.step_size}, gamma={self.gamma:g})"


class CosineAnnealingLR:
    r"""Cosine annealing from ``lr`` down to ``eta_min`` over ``T_max`` steps.

    .. math::

        \eta_t = \eta_\min + \tfrac12 (\eta - \eta_\min)
                 \bigl(1 + \cos(\pi t / T_\max)\bigr)

    Parameters
    ----------
    lr : float
        The initial rate :math:`\eta \ge 0`.
    T_max : int
        Steps from :math:`\eta` to :math:`\eta_\min` (>= 1).
    eta_min : float, default 0.0
        The final rate :math:`\eta_\min \ge 0`.

    Notes
    -----
    :math:`\eta_0 = \eta` and :math:`\eta_{T_\max} = \eta_\min`; past
    :math:`T_\max` the formula goes on, back up (as PyTorch's does).  For a
    run of :math:`T` updates, ``T_max = T`` never reaches :math:`\eta_\min`
    (the last update uses :math:`t = T - 1`), which keeps every step a step.

    Examples
    --------
    >>> import scratchnet as sn
    >>> schedule = sn.CosineAnnealingLR(1.0, T_max=100, eta_min=0.1)
    >>> [round(schedule(t), 6) for t in (0, 50, 100)]
    [1.0, 0.55, 0.1]
    """

    def __init__(self, lr: float, T_max: int, eta_min: float = 0.0) -> None:
        self.lr = _rate(lr, "lr")
        self.T_max = check_positive_int(T_max, "T_max")
        self.eta_min = _rate(eta_min, "eta_min")

    def __call__(self, t: int) -> float:
        lr, eta_min = self.lr, self.eta_min
        return eta_min + 0.5 * (lr - eta_min) * (
            1.0 + math.cos(math.pi * _step(t) / self.T_max))

    def __repr__(self) -> str:
        return (f"CosineAnnealingLR({self.lr:g}, T_max={self.T_max}, "
                f"eta_min={self.eta_min:g})")


class LinearLR:
    r"""A linear change of the rate's factor over ``total_iters`` steps: a warm-up.

    .. math::

        \eta_t = \eta \Bigl(f_0 + (f_1 - f_0) \frac{\min(t, n)}{n}\Bigr)

    Parameters
    ----------
    lr : float
        The base rate :math:`\eta \ge 0`.
    start_factor : float, default 1/3
        :math:`f_0 \in (0, 1]` (PyTorch's range: a warm-up never starts at 0).
    end_factor : float, default 1.0
        :math:`f_1 \in [0, 1]`, kept after step :math:`n`.
    total_iters : int, default 5
        :math:`n \ge 1`.

    Examples
    --------
    >>> import scratchnet as sn
    >>> warmup = sn.LinearLR(0.1, start_factor=0.1, total_iters=4)
    >>> [round(warmup(t), 6) for t in range(6)]
    [0.01, 0.0325, 0.055, 0.0775, 0.1, 0.1]
    """

    def __init__(self, lr: float, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, total_iters: int = 5) -> None:
        self.lr = _rate(lr, "lr")
        self.start_factor = check_scalar(start_factor, "start_factor", low=0.0,
                                         low_inclusive=False, high=1.0)
        self.end_factor = check_scalar(end_factor, "end_factor", low=0.0, high=1.0)
        self.total_iters = check_positive_int(total_iters, "total_iters")

    def __call__(self, t: int) -> float:
        f0, f1, n = self.start_factor, self.end_factor, self.total_iters
        return self.lr * (f0 + (f1 - f0) * min(_step(t), n) / n)

    def __repr__(self) -> str:
        return (f"LinearLR({self.lr:g}, start_factor={self.start_factor:g}, "
                f"end_factor={self.end_factor:g}, total_iters={self.total_iters})")


class SequentialLR:
    r"""Schedules one after another, each counting its steps from its milestone.

    With milestones :math:`m_1 < m_2 < \dots`, schedule :math:`i` (from 0)
    runs for :math:`m_i \le t < m_{i+1}` (:math:`m_0 = 0`) and is called with
    :math:`t - m_i`.

    Parameters
    ----------
    schedules : sequence of callables
        ``k >= 1`` schedules ``t -> rate``.
    milestones : sequence of int
        ``k - 1`` increasing steps >= 1 where the next schedule takes over.

    Examples
    --------
    A linear warm-up over 100 steps, then a cosine over the 900 others:

    >>> import scratchnet as sn
    >>> schedule = sn.SequentialLR(
    ...     [sn.LinearLR(0.1, start_factor=0.01, total_iters=100),
    ...      sn.CosineAnnealingLR(0.1, T_max=900)], milestones=[100])
    >>> [round(schedule(t), 6) for t in (0, 50, 100, 550, 999)]
    [0.001, 0.0505, 0.1, 0.05, 0.0]
    """

    def __init__(self, schedules: Sequence[Callable[[int], float]],
                 milestones: Sequence[int]) -> None:
        if isinstance(schedules, (str, bytes)) or not hasattr(schedules, "__len__"):
            raise TypeError(f"schedules must be a sequence of callables t -> rate; "
                            f"got {type(schedules).__name__}")
        if not schedules or not all(callable(s) for s in schedules):
            raise TypeError(f"schedules must be a non-empty sequence of callables "
                            f"t -> rate; got {list(schedules)!r}")
        if isinstance(milestones, (str, bytes)) or not hasattr(milestones, "__len__"):
            raise TypeError(f"milestones must be a sequence of steps; got "
                            f"{type(milestones).__name__}")
        self.milestones = [check_positive_int(m, f"milestones[{i}]")
                           for i, m in enumerate(milestones)]
        if len(self.milestones) != len(schedules) - 1:
            raise ValueError(f"milestones must have one entry fewer than schedules "
                             f"({len(schedules) - 1}); got {len(self.milestones)}")
        if any(a >= b for a, b in zip(self.milestones, self.milestones[1:])):
            raise ValueError(f"milestones must be increasing; got {self.milestones}")
        self.schedules = list(schedules)

    def __call__(self, t: int) -> float:
        i = bisect.bisect_right(self.milestones, _step(t))
        return self.schedules[i](t - (self.milestones[i - 1] if i else 0))

    def __repr__(self) -> str:
        return f"SequentialLR({self.schedules!r}, milestones={self.milestones})"
