r"""Where in task space: the two-Gaussian family, its grid, and the units of work.

The study's three tasks are points of one family: class 1 is
:math:`\mathcal{N}(0, \sigma_1^2)`, class 2 is :math:`\mathcal{N}(\mu_2, 1)`,
with prior :math:`\pi_1 = P(c_1)` (1/2 in the study):

====================  ==============  ==============
task                  :math:`\mu_2`   :math:`\sigma_1`
====================  ==============  ==============
``separated``         3               1
``unequal-variance``  1               2
``sparse-tail``       3               2
====================  ==============  ==============

(:data:`STUDY_TASKS`, built by :func:`family_task`).  Where
:math:`\sigma_1 > 1` the wide class wins again far to the right, past a
second crossing of :math:`P(c_1 \mid x) = 1/2`; the input mass past that last
crossing, :math:`P(X > x_\mathrm{last})` (:func:`scratchnet.experiments.tail_mass`),
is what the loss sees of the posterior there.  Where :math:`\sigma_1 < 1`
class 2 is the wide one and wins both tails, and the sparse side is the left
one, before the first crossing.  :func:`tail_crossing` finds the crossing
with the least input mass beyond it, and that mass, for any task of the
family.  A sweep trains networks on a grid of the family and measures each
against its exact posterior.

A :class:`Grid` is the crossing of the axes :math:`\mu_2 \times \sigma_1
\times \pi_1` with recipes, losses, hidden widths, step budgets and seeds.
An axis is written as on the command line (:func:`parse_axis`):
``start:stop:count`` for ``count`` evenly spaced values, both ends
included, or a comma-separated list.  Every network is trained once, to the
largest budget, and measured at each (the smaller budgets are snapshots of
the same run).  The networks of one shape (recipe, loss and width) are
trained together on the fast path's ensemble, seeds and grid points alike, in
:class:`Unit`\ s of work that :func:`run_unit` runs anywhere: a worker
process, or a Dask worker on another machine.  The results do not depend on
how the members are split into units (each member is exactly the network
trained alone).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import check_positive_int
from ..gaussian import GaussianClasses
from ._checks import names
from .axes import check_axis_value, parse_axis, real_number
from .recipes import LOSSES, RECIPES, get_recipe
from .runs import run_group, tail_mass

__all__ = ["STUDY_TASKS", "SWEEP_COLUMNS", "Grid", "Unit", "family_task", "run_unit",
           "tail_crossing"]

#: The study's three tasks as points of the family: name -> (mu2, sigma1).
STUDY_TASKS = {"separated": (3.0, 1.0), "unequal-variance": (1.0, 2.0),
               "sparse-tail": (3.0, 2.0)}

#: The columns of a sweep's tidy table: one row per point, budget, loss and seed
#: (``error``: empty, or why the cell failed, its metrics then NaN).
SWEEP_COLUMNS = ("mu2", "sigma1", "prior1", "recipe", "loss", "width", "seed", "step",
                 "max_abs_error", "expected_kl", "accuracy", "bayes_accuracy",
                 "loss_gap", "crossings", "tail_crossing", "tail_mass", "error")


def family_task(mu2: float, sigma1: float, prior1: float = 0.5) -> GaussianClasses:
    r"""The family's task: :math:`N(0, \sigma_1^2)` against :math:`N(\mu_2, 1)`.

    Parameters
    ----------
    mu2 : float
        The mean of class 2.
    sigma1 : float
        The standard deviation of class 1, positive.
    prior1 : float, default 0.5
        :math:`P(c_1)`, in (0, 1).

    Returns
    -------
    GaussianClasses
        One-dimensional, named ``"mu2=..,sigma1=.."`` (and ``",prior1=.."``
        when it is not 1/2).

    Examples
    --------
    >>> import scratchnet as sn
    >>> task = sn.experiments.family_task(3, 2)   # the sparse-tail task
    >>> task.name, task.decision_boundaries().round(3)
    ('mu2=3,sigma1=2', array([1.582, 6.418]))
    """
    mu2, sigma1, prior1 = (real_number(v, name) for v, name in
                           ((mu2, "mu2"), (sigma1, "sigma1"), (prior1, "prior1")))
    for value, name in ((mu2, "mu2"), (sigma1, "sigma1"), (prior1, "prior1")):
        check_axis_value(value, name)
    name = f"mu2={mu2:g},sigma1={sigma1:g}" + (
        "" if prior1 == 0.5 else f",prior1={prior1:g}")
    return GaussianClasses([0.0, mu2], [sigma1, 1.0], [prior1, 1.0 - prior1], name=name)


def tail_crossing(task: GaussianClasses) -> tuple[float, float]:
    r"""The outermost crossing with the least input mass beyond it, and that mass.

    Parameters
    ----------
    task : GaussianClasses
        One-dimensional, two classes.

    Returns
    -------
    (float, float)
        The crossing of :math:`P(c_1 \mid x) = 1/2` and the probability of
        the inputs beyond it: the last crossing and :math:`P(X > x_\mathrm{last})`,
        or the first one and :math:`P(X < x_\mathrm{first})` when that is
        smaller (a tie goes to the last); ``(nan, nan)`` without a crossing.
        In the family, the last crossing for :math:`\sigma_1 \ge 1` (the
        study's tasks), the first for :math:`\sigma_1 < 1`.

    Examples
    --------
    >>> import scratchnet as sn
    >>> x, mass = sn.experiments.tail_crossing(sn.tasks.sparse_tail())
    >>> print(f"{x:.3f} {mass:.2e}")
    6.418 4.90e-04
    >>> x, mass = sn.experiments.tail_crossing(sn.experiments.family_task(1, 0.625))
    >>> print(f"{x:.3f} {mass:.2e}")   # class 2 wins both tails: the left one
    -1.927 1.37e-03
    """
    if not isinstance(task, GaussianClasses) or task.dim != 1:
        raise TypeError("task must be a one-dimensional GaussianClasses (e.g. "
                        f"family_task(mu2, sigma1)); got {task!r:.40}")
    crossings = task.decision_boundaries()
    if not crossings.size:
        return math.nan, math.nan
    last, first = float(crossings[-1]), float(crossings[0])
    right = tail_mass(task, last)
    scales = np.asarray(task.scales, dtype=float)
    sd = scales if scales.ndim == 1 else np.sqrt(scales.reshape(-1))  # (M,) or 1x1
    mu = np.asarray(task.means, dtype=float).reshape(-1)
    left = float(sum(p * 0.5 * math.erfc((m - first) / (s * math.sqrt(2)))
                     for p, m, s in zip(task.priors, mu, sd)))
    return (first, left) if left < right else (last, right)


@dataclass(frozen=True)
class Unit:
    """A unit of work: networks of one shape, trained together to the last budget.

    Parameters
    ----------
    recipe : str
        A name of :data:`scratchnet.experiments.RECIPES`.
    loss : str
        One of :data:`scratchnet.experiments.LOSSES`.
    width : int
        Every hidden layer's width.
    members : tuple of (mu2, sigma1, prior1, seed)
    steps : tuple of int
        The budgets, increasing.

    Examples
    --------
    >>> import scratchnet as sn
    >>> unit = sn.experiments.Unit("textbook", "cross_entropy", 8,
    ...                            ((3.0, 2.0, 0.5, 0),), (20, 40))
    >>> len(unit.members), unit.steps[-1]
    (1, 40)
    """

    recipe: str
    loss: str
    width: int
    members: tuple
    steps: tuple

    def __post_init__(self) -> None:
        get_recipe(self.recipe)
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {', '.join(LOSSES)}; got "
                             f"{self.loss!r}")
        check_positive_int(self.width, "width")
        if not isinstance(self.members, (tuple, list)) or not self.members or any(
                not isinstance(m, (tuple, list)) or len(m) != 4 for m in self.members):
            raise ValueError("members must be a non-empty tuple of (mu2, sigma1, "
                             f"prior1, seed); got {self.members!r}")
        steps = self.steps
        if (not isinstance(steps, (tuple, list)) or not steps
                or any(isinstance(s, bool) or not isinstance(s, (int, np.integer))
                       or s < 1 for s in steps) or list(steps) != sorted(set(steps))):
            raise ValueError(f"steps must be increasing positive integers; got "
                             f"{steps!r}")


def run_unit(unit: Unit) -> list[dict[str, Any]]:
    """Train a unit's networks as one ensemble; their rows of the sweep's table.

    Parameters
    ----------
    unit : Unit

    Returns
    -------
    list of dict
        Keys :data:`SWEEP_COLUMNS`: one row per member and budget.  A member
        that fails (the unit is then run again member by member) keeps its
        rows, with NaN metrics and the error in ``error``: one bad cell
        never loses the others.

    Examples
    --------
    >>> import scratchnet as sn
    >>> unit = sn.experiments.Unit("textbook", "cross_entropy", 8,
    ...                            ((3.0, 2.0, 0.5, 0), (3.0, 1.0, 0.5, 0)), (20, 40))
    >>> rows = sn.experiments.run_unit(unit)
    >>> [(r["sigma1"], r["step"]) for r in rows]
    [(2.0, 20), (2.0, 40), (1.0, 20), (1.0, 40)]
    >>> rows[0]["crossings"], f"{rows[0]['tail_mass']:.2e}"
    ('1.58166;6.41834', '4.90e-04')
    """
    if not isinstance(unit, Unit):
        raise TypeError(f"unit must be a Unit (from Grid.units); got {unit!r}")
    try:
        return _unit_rows(unit, unit.members)
    except Exception as exc:
        if len(unit.members) == 1:
            return failed_rows(unit, unit.members, exc)
    rows = []
    for member in unit.members:  # again, one by one: only the bad cells fail
        try:
            rows += _unit_rows(unit, [member])
        except Exception as exc:
            rows += failed_rows(unit, [member], exc)
    return rows


def _unit_rows(unit: Unit, members: Sequence[tuple]) -> list[dict[str, Any]]:
    """The rows of ``members`` of ``unit``, trained together."""
    base = get_recipe(unit.recipe)
    sizes = (base.sizes[0], *[unit.width] * (len(base.sizes) - 2), base.sizes[-1])
    recipe = dataclasses.replace(base, sizes=sizes, loss=unit.loss,
                                 snapshot_steps=tuple(unit.steps))
    tasks = {}
    for mu2, sigma1, prior1, _ in members:
        if (mu2, sigma1, prior1) not in tasks:
            tasks[mu2, sigma1, prior1] = family_task(mu2, sigma1, prior1)
    results = run_group([(tasks[m[:3]], m[3]) for m in members], recipe,
                        steps=max(unit.steps))
    rows = []
    for (mu2, sigma1, prior1, seed), result in zip(members, results):
        explained = _explained(tasks[mu2, sigma1, prior1])
        for row in result.rows:
            if row["step"] in unit.steps:
                rows.append({**_key(unit, mu2, sigma1, prior1, seed, row["step"]),
                             **{k: row[k] for k in _METRICS}, **explained,
                             "error": ""})
    return rows


_METRICS = ("max_abs_error", "expected_kl", "accuracy", "bayes_accuracy", "loss_gap")


def _key(unit: Unit, mu2: float, sigma1: float, prior1: float, seed: int,
         step: int) -> dict[str, Any]:
    return {"mu2": mu2, "sigma1": sigma1, "prior1": prior1, "recipe": unit.recipe,
            "loss": unit.loss, "width": unit.width, "seed": seed, "step": step}


def _explained(task: GaussianClasses) -> dict[str, Any]:
    """The columns that explain a cell: its crossings, the tail crossing and mass."""
    crossing, mass = tail_crossing(task)
    return {"crossings": ";".join(f"{x:.6g}" for x in task.decision_boundaries()),
            "tail_crossing": crossing, "tail_mass": mass}


def failed_rows(unit: Unit, members: Sequence[tuple], exc: BaseException
                 ) -> list[dict[str, Any]]:
    """The rows of cells that failed: NaN metrics, and the error in one line.

    Parameters
    ----------
    unit : Unit
    members : sequence of (mu2, sigma1, prior1, seed)
        The members of ``unit`` that failed.
    exc : BaseException
        Why.

    Returns
    -------
    list of dict
        Keys :data:`SWEEP_COLUMNS`, one per member and budget, ``error`` the
        exception's type and the first line of its message.

    Examples
    --------
    >>> import scratchnet as sn
    >>> from scratchnet.experiments.grids import failed_rows
    >>> unit = sn.experiments.Unit("textbook", "cross_entropy", 8,
    ...                            ((0.0, 1.0, 0.5, 0),), (20,))
    >>> failed_rows(unit, unit.members, MemoryError("too big"))[0]["error"]
    'MemoryError: too big'
    """
    error = f"{type(exc).__name__}: {exc}".splitlines()[0]
    rows = []
    for mu2, sigma1, prior1, seed in members:
        try:
            explained = _explained(family_task(mu2, sigma1, prior1))
        except (TypeError, ValueError):
            explained = {"crossings": "", "tail_crossing": math.nan,
                         "tail_mass": math.nan}
        rows += [{**_key(unit, mu2, sigma1, prior1, seed, step),
                  **dict.fromkeys(_METRICS, math.nan), **explained, "error": error}
                 for step in unit.steps]
    return rows


@dataclass(frozen=True)
class Grid:
    r"""A sweep's grid: the family's points crossed with how the networks train.

    Parameters
    ----------
    mu2, sigma1, prior1 : tuple of float
        The family's axes (each through :func:`parse_axis`).
    recipes : tuple of str
        Names of :data:`scratchnet.experiments.RECIPES`.
    losses : tuple of str
        Of :data:`scratchnet.experiments.LOSSES`.
    widths : tuple of int
        Hidden widths (every hidden layer of the recipe's network).
    steps : tuple of int
        The budgets; sorted.
    seeds : tuple of int
        Distinct, non-negative.

    Attributes
    ----------
    points : list of (mu2, sigma1, prior1)
    runs : int
        The number of networks trained: points x recipes x losses x widths x
        seeds (each measured at every budget).

    Examples
    --------
    >>> import scratchnet as sn
    >>> grid = sn.experiments.Grid(mu2=(1.0, 3.0), sigma1=(1.0, 2.0), seeds=(0, 1),
    ...                            steps=(100, 1000))
    >>> grid.runs, len(grid.units(parts=2)), grid.widths
    (8, 2, (64,))
    """

    mu2: tuple
    sigma1: tuple
    prior1: tuple = (0.5,)
    recipes: tuple = ("textbook",)
    losses: tuple = ("cross_entropy",)
    widths: tuple = ()
    steps: tuple = (1000, 10_000)
    seeds: tuple = (0, 1, 2)

    def __post_init__(self) -> None:
        set_ = object.__setattr__  # frozen: normalise the fields once
        for name in ("mu2", "sigma1", "prior1"):
            set_(self, name, parse_axis(getattr(self, name), name))
        set_(self, "steps", tuple(sorted(parse_axis(self.steps, "steps"))))
        for name, valid in (("recipes", tuple(RECIPES)), ("losses", LOSSES)):
            set_(self, name, names(getattr(self, name), name, valid))
        widths = self.widths
        if isinstance(widths, (tuple, list)) and not widths:
            widths = (get_recipe(self.recipes[0]).sizes[1],)
        set_(self, "widths", parse_axis(widths, "widths"))
        if isinstance(self.seeds, (str, bytes)) or not isinstance(
                self.seeds, (Sequence, np.ndarray, range)):
            raise TypeError("seeds must be a sequence of seeds (distinct non-negative "
                            f"integers); got {type(self.seeds).__name__}")
        seeds = tuple(self.seeds)
        if (not seeds or len(set(seeds)) != len(seeds) or any(
                isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 0
                for s in seeds)):
            raise ValueError(f"seeds must be distinct non-negative integers; got "
                             f"{seeds!r}")
        set_(self, "seeds", tuple(int(s) for s in seeds))

    @property
    def points(self) -> list:
        """The family's points, mu2 fastest: ``[(mu2, sigma1, prior1), ...]``."""
        return [(m, s, p) for p in self.prior1 for s in self.sigma1 for m in self.mu2]

    @property
    def runs(self) -> int:
        """Networks trained: points x recipes x losses x widths x seeds."""
        return (len(self.points) * len(self.recipes) * len(self.losses)
                * len(self.widths) * len(self.seeds))

    def units(self, parts: int = 1) -> list[Unit]:
        """The work, split into about ``parts`` units (at least one per shape).

        Parameters
        ----------
        parts : int, default 1
            How many units to aim for in all; each network shape (recipe,
            loss, width) gets a share in proportion to its members (all
            shapes have as many), its points and seeds split into
            contiguous runs.

        Returns
        -------
        list of Unit
            Every (point, seed) of every shape exactly once.

        Examples
        --------
        >>> import scratchnet as sn
        >>> grid = sn.experiments.Grid(mu2=(1.0, 3.0), sigma1=(1.0,), seeds=(0,),
        ...                            losses=("cross_entropy", "mse"), steps=(50,))
        >>> [(u.loss, len(u.members)) for u in grid.units(parts=4)]
        [('cross_entropy', 1), ('cross_entropy', 1), ('mse', 1), ('mse', 1)]
        """
        if isinstance(parts, bool) or not isinstance(parts, (int, np.integer)) or \
                parts < 1:
            raise ValueError(f"parts must be a positive integer; got {parts!r}")
        members = [(*point, seed) for point in self.points for seed in self.seeds]
        shapes = [(r, loss, w) for r in self.recipes for loss in self.losses
                  for w in self.widths]
        per_shape = min(len(members), max(1, round(parts / len(shapes))))
        return [Unit(recipe, loss, width, tuple(map(tuple, chunk)), self.steps)
                for recipe, loss, width in shapes
                for chunk in np.array_split(np.array(members, dtype=object), per_shape)]
