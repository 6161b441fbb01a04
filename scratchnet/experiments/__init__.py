r"""The reproduction: train networks on the Gaussian tasks, measure them against P(C|x).

A network trained with the cross-entropy minimises, in expectation, the
expected KL divergence from the Bayes posterior,

.. math::

    \mathbb{E}_{(x, c)}[-\log q(c \mid x)]
        = H(C \mid X) + \mathbb{E}_{x \sim P(X)}\,
          KL\bigl(P(C \mid x) \,\|\, q(C \mid x)\bigr) ,

since the Bayes loss :math:`H(C \mid X)` does not depend on the network; so
its outputs approach :math:`P(C \mid x)`, at least where :math:`P(x)` is not
small.  This package runs that experiment on the tasks of
:mod:`scratchnet.tasks`, whose posterior is known exactly, and measures
every snapshot of the network against it.  Its modules, in reading order:

===============  ==============================================================
``pool``         local worker processes: :func:`cpu_count`,
                 :func:`single_threaded_blas`, :func:`worker_context`, and
                 the split of the networks into ensembles
                 (:func:`plan_ensembles`)
``recipes``      how to train: :class:`Recipe`, and :data:`RECIPES`
                 (``original``, ``textbook``, ``covering``)
``runs``         :func:`run`: train by a recipe, measure each snapshot (the
                 metrics of :data:`COLUMNS`), in an :class:`ExperimentResult`
``report``       :func:`summarize`, :func:`format_table`, :func:`write_table`,
                 :func:`posterior_figure`, :func:`convergence_figure` and
                 :func:`run_and_plot`
``axes``         a grid's axes: :func:`parse_axis` (``start:stop:count``
                 or ``a,b,c``) and their bounds, :data:`AXES`
``grids``        where in task space: :func:`family_task` (class 1
                 :math:`N(0, \sigma_1^2)`, class 2 :math:`N(\mu_2, 1)`), a
                 sweep's :class:`Grid`, its
                 :class:`Unit`\ s of work, :func:`run_unit`, and
                 :func:`tail_crossing` (the sparse side of a task)
``sweeps``       :func:`sweep`: the units in-process, in local processes or on
                 a Dask cluster, into a :class:`Sweep`
``tables``       :class:`Sweep` (tidy table, summary over seeds, CSV, failed
                 cells) and :class:`SweepWriter` (rows written as they come)
``phase``        :func:`phase_diagram`, :func:`tail_mass_figure`,
                 :func:`loss_figure` and :func:`save_sweep_figures`
``cli``          the command line's argument types and its memory check
                 (used by :mod:`scratchnet.__main__` only)
===============  ==============================================================

Every public name but those of ``cli`` is available here as
``sn.experiments.<name>``; the command line (:mod:`scratchnet.__main__`) and
the notebooks use them.

**What the runs show.**  On the sparse-tail task, :math:`N(0, 2^2)` against
:math:`N(3, 1)`, the ``original`` recipe learns the first crossing of
:math:`P(c_1 \mid x) = 1/2` but not the second, :math:`x = 6.418`: only
:math:`P(X > 6.418) = 4.9 \cdot 10^{-4}` of the inputs lie past it
(:func:`tail_mass`), and the loss weighs an error at :math:`x` by
:math:`P(x)`, so after 10,000 steps the network is still 0.3 to 0.4 off at
:math:`x = 7`.  The ``covering`` recipe draws half of its inputs uniformly on
:math:`[-6, 9]`, labelled by :math:`c \sim P(C \mid x)` (which leaves the
minimiser, the posterior, unchanged), and anneals its learning rate: after
10,000 steps its largest gap to the posterior on :math:`[-4, 7]` is 0.017 to
0.020 (seeds 0 to 2).  The experiments page of the documentation
(``docs/experiments.md``) has the figures, the table of a full run and which
of the two changes matters.
"""

from __future__ import annotations

from .axes import AXES, parse_axis
from .grids import (
    STUDY_TASKS,
    SWEEP_COLUMNS,
    Grid,
    Unit,
    family_task,
    run_unit,
    tail_crossing,
)
from .phase import loss_figure, phase_diagram, save_sweep_figures, tail_mass_figure
from .pool import (
    BLAS_THREAD_VARIABLES,
    cpu_count,
    ensemble_work,
    makespan,
    plan_ensembles,
    single_threaded_blas,
    worker_context,
)
from .recipes import (
    COVERING,
    LOSSES,
    ORIGINAL,
    ORIGINAL_SECONDS_PER_SETTING,
    ORIGINAL_STUDY,
    RECIPES,
    TEXTBOOK,
    Recipe,
    get_recipe,
)
from .report import (
    METRICS,
    ORIGINAL_REPORTED,
    ORIGINAL_REPORTED_STEP,
    convergence_figure,
    format_table,
    posterior_figure,
    run_and_plot,
    save_posterior_figure,
    summarize,
    write_table,
)
from .runs import (
    COLUMNS,
    EVAL_X,
    LOSS_WINDOW,
    ExperimentResult,
    run,
    run_group,
    tail_mass,
)
from .sweeps import DEFAULT_SWEEP, sweep
from .tables import SUMMARY_COLUMNS, SWEEP_METRICS, Sweep, SweepWriter

__all__ = [
    "AXES",
    "BLAS_THREAD_VARIABLES",
    "COLUMNS",
    "COVERING",
    "DEFAULT_SWEEP",
    "EVAL_X",
    "LOSSES",
    "LOSS_WINDOW",
    "METRICS",
    "ORIGINAL",
    "ORIGINAL_REPORTED",
    "ORIGINAL_REPORTED_STEP",
    "ORIGINAL_SECONDS_PER_SETTING",
    "ORIGINAL_STUDY",
    "RECIPES",
    "STUDY_TASKS",
    "SUMMARY_COLUMNS",
    "SWEEP_COLUMNS",
    "SWEEP_METRICS",
    "TEXTBOOK",
    "ExperimentResult",
    "Grid",
    "Recipe",
    "Sweep",
    "SweepWriter",
    "Unit",
    "convergence_figure",
    "cpu_count",
    "ensemble_work",
    "family_task",
    "format_table",
    "get_recipe",
    "loss_figure",
    "makespan",
    "parse_axis",
    "phase_diagram",
    "plan_ensembles",
    "posterior_figure",
    "run",
    "run_and_plot",
    "run_group",
    "run_unit",
    "save_posterior_figure",
    "save_sweep_figures",
    "single_threaded_blas",
    "summarize",
    "sweep",
    "tail_crossing",
    "tail_mass",
    "tail_mass_figure",
    "worker_context",
    "write_table",
]
