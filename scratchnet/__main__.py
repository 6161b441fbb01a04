r"""Command line: ``python -m scratchnet`` (or ``scratchnet``) reproduces the study.

It trains networks on each task with each recipe (by default the three tasks
of :mod:`scratchnet.tasks`, ``separated``, ``unequal-variance`` and
``sparse-tail``, with the ``original`` and ``covering`` recipes of
:mod:`scratchnet.experiments`), ``--seeds`` of them at once on the fast path's
ensemble, in parallel worker processes, and writes to ``--out``:

* ``posterior_<task>_<recipe>.<format>``: the Bayes posterior
  :math:`P(c \mid x)` (solid), the networks' :math:`q(c \mid x)` at a few
  snapshots (dashed: the median over seeds; shaded: their range) and the
  class densities :math:`P(x \mid c) P(c)` (shaded);
* ``convergence.<format>``: expected KL and :math:`\max |q - P|` against
  steps (median and range over seeds), with the original study's figures
  at 10,000 batches;
* ``summary.csv``: every seed's metrics at every snapshot; ``summary.md``:
  the median [min, max] over seeds (:func:`scratchnet.experiments.summarize`);
  a shorter table is printed.

``python -m scratchnet sweep`` maps *where* in the two-Gaussian family, and
with which loss, the networks learn the posterior
(:func:`scratchnet.experiments.sweep`): grid axes such as ``--mu2 0.5:5:10
--sigma1 1:3:9`` (``start:stop:count`` or a comma-separated list), losses,
widths, budgets and seeds; it writes ``sweep.csv`` (one row per point,
budget, loss and seed), ``sweep_summary.csv`` (median, min and max over
seeds), the phase diagram, the error against the tail mass and, with several
losses, their comparison (:func:`scratchnet.experiments.save_sweep_figures`).
``--scheduler ADDRESS`` runs it on a Dask cluster.

``python -m scratchnet digits`` goes to real data
(:mod:`scratchnet.experiments.digits`), ``python -m scratchnet real --dataset
wine`` (or any CSV file) runs the same study on other data
(:mod:`scratchnet.experiments.real`); ``python -m scratchnet exercises`` is
the homework kit (:mod:`scratchnet.exercises`).

Examples
--------
>>> from scratchnet.__main__ import build_parser
>>> build_parser().parse_args(["--tasks", "separated", "--steps", "30"]).steps
30
"""

from __future__ import annotations

import argparse
import gc
import importlib
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Callable, Optional

from . import experiments
from .experiments.cli import (
    MAX_RUN_BYTES,
    OneLineParser,
    names,
    non_negative,
    out_dir,
    plan_parts,
    positive,
    run_bytes,
)
from .experiments.report import LOSS_GAP_NOTE
from .tasks import TASKS

__all__ = ["build_parser", "build_sweep_parser", "main"]

DEFAULT_TASKS = tuple(TASKS)
DEFAULT_RECIPES = ("original", "covering")
DEFAULT_SEEDS = 1
#: The subcommands besides ``sweep``: the module whose ``main(argv)`` runs each.
SUBCOMMANDS = {"digits": "scratchnet.experiments.digits_report",
               "real": "scratchnet.experiments.digits_report",
               "exercises": "scratchnet.exercises.cli"}
_PRINTED_STEPS = (100, 1000, 10_000)
# measured by benchmarks/bench_default_run.py on 2 cores (AMD EPYC, end of issue 29):
# 4.6 to 5.1 s idle, 5.5 s with the Haswell kernels, 8.5 s beside other test runs
_DEFAULT_RUN_TIME = "5-9 s"


def _epilog() -> str:
    recipes = "\n".join(f"  {r.name:9s} {r.description} ({r.steps:,} steps)"
                         for r in experiments.RECIPES.values())
    return (
        f"recipes:\n{recipes}\n\n"
        "output (in --out): posterior_<task>_<recipe>.<format> for each run,\n"
        "convergence.<format>, summary.csv and summary.md (every snapshot).\n\n"
        f"The default run ({len(TASKS)} tasks x {' and '.join(DEFAULT_RECIPES)}, "
        f"{len(TASKS) * len(DEFAULT_RECIPES)} runs) takes about "
        f"{_DEFAULT_RUN_TIME} on 2 cores\n(the original code: about "
        f"{experiments.ORIGINAL_SECONDS_PER_SETTING * len(TASKS):.0f} s); "
        "--steps 1000 takes a few seconds.\n\n"
        "python -m scratchnet sweep --help: where in task space, and with which "
        "loss,\nnetworks learn the posterior (grids of tasks, a phase diagram).\n"
        "python -m scratchnet digits --help: real data, a fitted generative model, "
        "calibration.\n"
        "python -m scratchnet real --help: the same study on iris, wine, "
        "breast_cancer or a CSV file.\n"
        "python -m scratchnet exercises --help: the homework kit (list, make, "
        "check).")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``scratchnet`` command.

    Returns
    -------
    argparse.ArgumentParser
        Options ``--tasks``, ``--recipes``, ``--steps``, ``--seed``, ``--out``,
        ``--format``, ``--jobs``, ``--quiet``; bad values exit with code 2 and
        one line naming the option, what it expects and what it got (also
        for step and seed counts whose records would not fit in
        ``MAX_RUN_BYTES``, 2 GiB, checked before anything is allocated).

    Examples
    --------
    >>> from scratchnet.__main__ import build_parser
    >>> build_parser().parse_args(["--tasks", "separated,sparse-tail"]).tasks
    ['separated', 'sparse-tail']
    """
    parser = OneLineParser(
        prog="scratchnet",
        description="Train small networks with the cross-entropy on the Gaussian "
        "tasks and compare their softmax outputs q(c|x) with the Bayes posterior "
        "P(c|x): figures and a table of the expected KL, the largest gap "
        "max |q - P| on [-4, 7], the loss and the accuracy against their Bayes "
        "values.",
        epilog=_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--tasks", type=names("task", tuple(TASKS)), action="extend", metavar="NAMES",
        help=f"tasks to run, comma-separated, from: {', '.join(TASKS)} "
        "(default: all)")
    parser.add_argument(
        "--recipes", type=names("recipe", tuple(experiments.RECIPES)),
        action="extend", metavar="NAMES",
        help=f"training recipes, comma-separated, from: "
        f"{', '.join(experiments.RECIPES)} (default: {','.join(DEFAULT_RECIPES)})")
    parser.add_argument("--steps", type=positive, default=None,
                        help="training steps of every run (default: each recipe's own)")
    parser.add_argument("--seed", type=non_negative, default=0,
                        help="the first seed of the weights, data and batches "
                        "(default: 0)")
    parser.add_argument("--seeds", type=positive, default=DEFAULT_SEEDS,
                        help="seeds per task and recipe, trained at once: seeds "
                        f"--seed .. --seed + SEEDS - 1 (default: {DEFAULT_SEEDS})"),
    parser.add_argument("--out", type=out_dir, default=Path("scratchnet-results"),
                        help="directory for the figures and tables "
                        "(default: scratchnet-results)")
    parser.add_argument("--format", choices=("png", "pdf", "svg"), default="png",
                        help="file format of the figures (default: png)")
    parser.add_argument("--jobs", type=positive, default=None,
                        help="worker processes (default: CPUs, at most one per "
                        "network)")
    parser.add_argument("--quiet", action="store_true",
                        help="print nothing but errors (files are still written)")
    return parser


def _units(pairs: list[tuple[str, str]], args: argparse.Namespace, jobs: int
           ) -> list[tuple[str, list[tuple[str, int]]]]:
    """The work: per recipe, its (task, seed) members split into at most one
    ensemble per worker by :func:`scratchnet.experiments.plan_ensembles`,
    balanced by their multiply-adds, each worker's shortest first.  The
    default run on 2 cores: ``original``'s 2 networks on one worker,
    ``covering`` as one ensemble then ``original``'s third on the other."""
    seeds = range(args.seed, args.seed + args.seeds)
    groups = {recipe: [(task, seed) for task, r in pairs if r == recipe
                       for seed in seeds]
              for recipe in dict.fromkeys(r for _, r in pairs)}
    return experiments.plan_ensembles(groups, jobs, steps=args.steps)


def _run_all(pairs: list[tuple[str, str]], args: argparse.Namespace, jobs: int,
             say: Callable[[str], None]) -> list[experiments.ExperimentResult]:
    """Train every member on the fast path's ensemble in worker processes; here,
    draw each (task, recipe)'s figure as soon as all its seeds are trained
    (while other ensembles still train); report as they end and return every
    seed's result, pair by pair.  Only this process imports matplotlib."""
    units, done, finished = _units(pairs, args, jobs), {}, []
    start = time.perf_counter()
    expected = {pair: args.seeds for pair in pairs}

    def trained(unit: tuple[str, list], results: list) -> None:
        """Record a unit's results; draw the pairs it completed."""
        for result in results:
            done.setdefault((result.task, result.recipe), []).append(result)
        finished.append(unit)
        steps = results[0].rows[-1]["step"]
        tasks = ", ".join(sorted({t for t, _ in unit[1]}))
        say(f"[{len(finished)}/{len(units)}] {unit[0]}: {len(results)} network"
            f"{'s' if len(results) > 1 else ''} ({tasks}) x {steps:,} steps in "
            f"{results[0].extra['elapsed']:.1f} s; "
            f"{time.perf_counter() - start:.1f} s elapsed")
        for pair in dict.fromkeys((t, unit[0]) for t, _ in unit[1]):
            if len(done[pair]) == expected[pair]:
                seconds = experiments.save_posterior_figure(
                    _by_seed(done[pair]),
                    args.out / f"posterior_{pair[0]}_{pair[1]}.{args.format}")
                last = experiments.summarize(done[pair], over_seeds=True)[-1]
                median = "median " if args.seeds > 1 else ""  # over several seeds
                say(f"  {pair[0]} / {pair[1]}: {median}max|q-P| "
                    f"{last['max_abs_error']:.3f}, E KL {last['expected_kl']:.1e} at "
                    f"step {last['step']:,} (figure {seconds:.1f} s)")

    if jobs == 1:
        for unit in units:
            trained(unit, experiments.run_group(unit[1], unit[0], steps=args.steps))
    else:
        with experiments.single_threaded_blas(), ProcessPoolExecutor(
                jobs, mp_context=experiments.worker_context()) as pool:
            futures = {pool.submit(experiments.run_group, unit[1], unit[0],
                                   steps=args.steps): unit for unit in units}
            for future in as_completed(futures):
                trained(futures[future], future.result())
    return [result for pair in pairs for result in _by_seed(done[pair])]


def _by_seed(results: list[experiments.ExperimentResult]
             ) -> list[experiments.ExperimentResult]:
    return sorted(results, key=lambda r: r.seed)


def _tail_notes(results: list[experiments.ExperimentResult]) -> list[str]:
    """Why sparse-tail's far right is hard: how much data lies there, per recipe."""
    notes, counts = [], {}
    for result in results:
        if "n_tail" in result.extra and result.task == "sparse-tail":
            counts.setdefault(result.recipe, []).append(result.extra)
    for recipe, extras in counts.items():
        tails, extra = sorted(e["n_tail"] for e in extras), extras[0]
        tail = (f"{tails[0]:,}" if tails[0] == tails[-1] else
                f"{tails[0]:,} to {tails[-1]:,} (over {len(tails)} seeds)")
        notes.append(
            f"sparse-tail / {recipe}: {tail} of the {extra['n_train']:,} training "
            f"inputs lie past the second crossing x = {extra['last_crossing']:.3f}, "
            f"where P(x > {extra['last_crossing']:.3f}) = {extra['tail_mass']:.2e}")
    if notes:
        notes.append("(the loss weighs the error at x by the density of the training "
                     "inputs there: with almost no data past the crossing, nothing "
                     "pulls the network towards P(c|x) there)")
    return notes


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the experiments and write figures and tables; return the exit code.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments (default: ``sys.argv[1:]``); when the first is
        ``sweep``, the rest are those of :func:`build_sweep_parser`; of a
        name in ``SUBCOMMANDS``, those of that module's ``<name>_main`` (or
        ``main``).

    Returns
    -------
    int
        0 on success; 1 if a run failed, or a cell of a sweep (the others are
        written, the failed ones with their error); argument errors, and
        grids too large for memory, exit with 2 before any work.

    Examples
    --------
    A short run of one task and recipe into a temporary folder:

    >>> import tempfile
    >>> from scratchnet.__main__ import main
    >>> with tempfile.TemporaryDirectory() as out:
    ...     main(["--tasks", "separated", "--recipes", "textbook", "--steps", "50",
    ...           "--jobs", "1", "--quiet", "--out", out])
    0
    """
    program = argv is None  # the command itself, not a call from Python
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["sweep"]:
        return _sweep_main(argv[1:])
    if argv[:1] and argv[0] in SUBCOMMANDS:  # imported on use (scikit-learn, the kit)
        module = importlib.import_module(SUBCOMMANDS[argv[0]])
        return getattr(module, f"{argv[0]}_main", module.main)(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    tasks = list(dict.fromkeys(args.tasks or DEFAULT_TASKS))
    recipes = list(dict.fromkeys(args.recipes or DEFAULT_RECIPES))
    pairs = [(task, recipe) for task in tasks for recipe in recipes]
    needed = run_bytes(pairs, args.steps, args.seeds)
    if needed > MAX_RUN_BYTES:
        parser.error(f"--steps {args.steps or 'default'} with --seeds {args.seeds} "
                     f"asks for about {needed / 2**30:,.3g} GiB for {len(pairs)} runs "
                     f"(at most {MAX_RUN_BYTES / 2**30:g} GiB): lower them")
    jobs = min(args.jobs or experiments.cpu_count(), len(pairs) * args.seeds)

    def say(message: str) -> None:
        if not args.quiet:
            print(message, file=sys.stderr, flush=True)

    start = time.perf_counter()
    seeds = (f"seed {args.seed}" if args.seeds == 1 else
             f"seeds {args.seed}..{args.seed + args.seeds - 1}")
    say(f"scratchnet: {len(pairs)} runs ({', '.join(tasks)} x {', '.join(recipes)}), "
        f"{seeds}, {jobs} worker process{'es' if jobs > 1 else ''}")
    try:
        args.out.mkdir(parents=True, exist_ok=True)
        results = _run_all(pairs, args, jobs, say)
        experiments.convergence_figure(results).savefig(
            args.out / f"convergence.{args.format}", dpi=120)
        experiments.write_table(experiments.summarize(results),
                                args.out / "summary.csv", args.out / "summary.md")
        if args.seeds > 1:  # the Markdown table: median [min, max] over seeds
            (args.out / "summary.md").write_text(experiments.format_table(
                experiments.summarize(results, over_seeds=True)) + "\n")
    except (OSError, ValueError, FloatingPointError, BrokenProcessPool) as exc:
        print(f"scratchnet: error: {exc}", file=sys.stderr)
        return 1
    if not args.quiet:
        print(experiments.format_table(experiments.summarize(
            results, _PRINTED_STEPS, over_seeds=args.seeds > 1)))
        print(LOSS_GAP_NOTE)
        for note in _tail_notes(results):
            print(note)
    say(f"wrote {len(pairs) + 1} figures and summary.csv, summary.md to {args.out} "
        f"in {time.perf_counter() - start:.1f} s")
    if program:  # its exit need not collect every object again: 0.08 s of the
        gc.freeze()  # default run (a Python caller's objects stay collectable)
    return 0


# --- python -m scratchnet sweep ------------------------------------------------------

# measured: 71.5 and 76.0 s wall on a quiet 2-core machine, 69.6 s at load average 2.5;
# 55.3 s in a later session (forked workers)
_DEFAULT_SWEEP_TIME = "55-80 s"
_ROW_BYTES = 2_000  # a row of the sweep's table, a dict of 17 entries, held in memory


def _axis(name: str) -> Callable[[str], tuple]:
    """An argparse type: a grid axis, ``start:stop:count`` or ``a,b,c``."""
    def parse(text: str) -> tuple:
        try:
            return experiments.parse_axis(text, name)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return parse


def build_sweep_parser() -> argparse.ArgumentParser:
    """The argument parser of ``scratchnet sweep``.

    Returns
    -------
    argparse.ArgumentParser
        Options ``--mu2``, ``--sigma1``, ``--prior1``, ``--recipe``,
        ``--losses``, ``--widths``, ``--steps``, ``--seeds``, ``--seed``,
        ``--out``, ``--format``, ``--jobs``, ``--scheduler``, ``--quiet``;
        a bad value exits with code 2 and one line naming the option, what
        it expects and what it got (also for budgets and grids whose
        records would not fit in ``MAX_RUN_BYTES``, checked in
        :func:`main` before anything is trained).

    Examples
    --------
    >>> from scratchnet.__main__ import build_sweep_parser
    >>> parser = build_sweep_parser()
    >>> args = parser.parse_args(["--mu2", "0.5:5:10", "--steps", "10,20"])
    >>> args.mu2[:3], args.steps
    ((0.5, 1.0, 1.5), (10, 20))
    """
    default = experiments.DEFAULT_SWEEP
    parser = OneLineParser(
        prog="scratchnet sweep",
        description="Where, and with which loss, does a network learn the posterior? "
        "Train networks across the family class 1 ~ N(0, sigma1^2), class 2 ~ "
        "N(mu2, 1) and measure each one against its exact posterior P(c|x).",
        epilog="A numeric axis is start:stop:count (count values, both ends "
        "included) or a comma-separated list.\nThe study's tasks are the points "
        "(mu2, sigma1) = (3, 1) separated, (1, 2) unequal-variance,\n(3, 2) "
        "sparse-tail.  Every network trains once, to the largest budget, and is "
        "measured\nat each.  Output (in --out): sweep.csv, sweep_summary.csv, "
        "phase*.<format>,\ntail_mass*.<format>, with several losses "
        "losses*.<format>, and sweep.log.\nsweep.csv gets each unit's rows as it "
        "finishes; a failed cell keeps its rows (NaN\nmetrics, the error in "
        "its error column), the others go on, and the exit status is 1."
        f"\n\nThe default sweep ({default['mu2']} x "
        f"{default['sigma1']}, {default['seeds']} seeds, budgets "
        f"{','.join(map(str, default['steps']))}) takes {_DEFAULT_SWEEP_TIME} on 2 "
        "idle cores.\nOn a cluster: run `dask scheduler` on one machine, `dask worker "
        "tcp://HOST:8786` on each\nof the others, then pass --scheduler "
        "tcp://HOST:8786 (needs scratchnet[distributed]).",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mu2", type=_axis("mu2"), default=default["mu2"],
                        metavar="SPEC", help="means of class 2 (default: "
                        f"{default['mu2']})")
    parser.add_argument("--sigma1", type=_axis("sigma1"), default=default["sigma1"],
                        metavar="SPEC", help="standard deviations of class 1 "
                        f"(default: {default['sigma1']})")
    parser.add_argument("--prior1", type=_axis("prior1"), default=(0.5,),
                        metavar="SPEC", help="priors P(c1) (default: 0.5)")
    parser.add_argument("--recipe", "--recipes", dest="recipes",
                        type=names("recipe", tuple(experiments.RECIPES)),
                        metavar="NAMES", help="training recipes, comma-separated, "
                        f"from: {', '.join(experiments.RECIPES)} (default: textbook)")
    parser.add_argument("--losses", type=names("loss", experiments.LOSSES),
                        metavar="NAMES", help="losses, comma-separated, from: "
                        f"{', '.join(experiments.LOSSES)} (default: cross_entropy)")
    parser.add_argument("--widths", type=_axis("widths"), default=(), metavar="SPEC",
                        help="hidden widths (default: the recipe's)")
    parser.add_argument("--steps", type=_axis("steps"), default=default["steps"],
                        metavar="SPEC", help="step budgets (default: "
                        f"{','.join(map(str, default['steps']))})")
    parser.add_argument("--seeds", type=positive, default=default["seeds"],
                        help=f"seeds per point (default: {default['seeds']})")
    parser.add_argument("--seed", type=non_negative, default=0,
                        help="the first seed (default: 0)")
    parser.add_argument("--out", type=out_dir, default=Path("scratchnet-sweep"),
                        help="directory for the tables and figures "
                        "(default: scratchnet-sweep)")
    parser.add_argument("--format", choices=("png", "pdf", "svg"), default="png",
                        help="file format of the figures (default: png)")
    parser.add_argument("--jobs", type=positive, default=None,
                        help="local worker processes (default: one per CPU)")
    parser.add_argument("--scheduler", metavar="ADDRESS", default=None,
                        help="run on this Dask cluster, e.g. tcp://10.0.0.1:8786")
    parser.add_argument("--quiet", action="store_true",
                        help="print nothing but errors (files are still written)")
    return parser


def _sweep_main(argv: Sequence[str]) -> int:
    """``scratchnet sweep``: run the sweep, write its tables and figures."""
    parser = build_sweep_parser()
    args = parser.parse_args(argv)
    recipes = args.recipes or ["textbook"]
    networks = (len(args.mu2) * len(args.sigma1) * len(args.prior1) * args.seeds
                * len(args.losses or ["cross_entropy"]) * max(1, len(args.widths))
                * len(recipes))
    if networks * len(args.steps) * _ROW_BYTES > MAX_RUN_BYTES:  # the table itself
        parser.error(f"the grid with --seeds {args.seeds} and {len(args.steps)} "
                     f"budgets has {networks * len(args.steps):,} rows, about "
                     f"{networks * len(args.steps) * _ROW_BYTES / 2**30:,.3g} GiB "
                     f"(at most {MAX_RUN_BYTES / 2**30:g} GiB): lower them")
    grid = experiments.Grid(args.mu2, args.sigma1, args.prior1, tuple(recipes),
                            tuple(args.losses or ("cross_entropy",)), args.widths,
                            args.steps, tuple(range(args.seed, args.seed + args.seeds)))
    workers = 1 if args.scheduler else args.jobs or experiments.cpu_count()
    try:  # one unit per worker at a time: split the grid so that they fit
        parts = plan_parts(grid, workers)
    except ValueError as exc:
        parser.error(str(exc))
    try:
        args.out.mkdir(parents=True, exist_ok=True)
        log = open(args.out / "sweep.log", "w")
    except OSError as exc:
        parser.error(f"argument --out: cannot write there: {exc}")

    def say(message: str) -> None:
        print(message, file=log, flush=True)
        if not args.quiet:
            print(message, file=sys.stderr, flush=True)

    start = time.perf_counter()
    try:
        with log:
            result = experiments.sweep(
                args.mu2, args.sigma1, prior1=args.prior1, recipes=recipes,
                losses=args.losses or ("cross_entropy",), widths=args.widths,
                steps=args.steps, seeds=args.seeds, seed=args.seed, jobs=args.jobs,
                scheduler=args.scheduler, parts=parts, progress=say, out=args.out)
            say(f"sweep: {result.grid.runs:,} networks ({len(result.grid.points)} "
                f"points) trained on {result.where} in {result.elapsed:.1f} s"
                + (f"; {len(result.failed)} cells failed" if result.failed else ""))
            paths = result.write(args.out)
            paths += experiments.save_sweep_figures(result, args.out,
                                                    format=args.format)
    except (OSError, ValueError, ImportError, FloatingPointError, BrokenProcessPool,
            TimeoutError) as exc:
        print(f"scratchnet sweep: error: {exc}", file=sys.stderr)
        return 1
    if not args.quiet:
        print(result.overview())
        print(f"wrote {', '.join(p.name for p in paths)} and sweep.log to "
              f"{args.out} in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    if result.failed:
        print(f"scratchnet sweep: error: {len(result.failed)} of "
              f"{result.grid.runs:,} cells failed (their rows say why; the others "
              f"are in {args.out})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
