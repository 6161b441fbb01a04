r"""The digits study's outputs: its table, its files and its command line.

:func:`scratchnet.experiments.digits.run_digits` measures; this module
reports.  :func:`digits_table` writes the numbers as Markdown (median
[min, max] over seeds), :func:`write_digits` saves the figures of
:mod:`scratchnet.plotting.digits` with the table and the raw numbers as
CSV, and :func:`main` is ``python -m scratchnet digits``: a progress line
per finished part on stderr, the table on stdout.
"""

from __future__ import annotations

import argparse
import csv
import sys
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from ..metrics import expected_calibration_error
from .cli import OneLineParser, non_negative, out_dir, positive
from .digits import STOPS, DigitsResult, DigitsSettings, run_digits
from .pool import cpu_count
from .real import BUNDLED, REAL_SETTINGS, SCALINGS, run_real
from .selection import describe_shrinkage

__all__ = ["build_parser", "digits_table", "main", "real_main", "write_digits"]

#: each command's settings: its options' defaults, and the rest of its study
_DEFAULTS = {"digits": DigitsSettings(), "real": REAL_SETTINGS}
_SELECTED = {"each": "the step of its lowest validation NLL (early stopping)",
             "together": "the step where the mean validation NLL of its split's "
                         "networks is lowest (early stopping, the split's networks "
                         "together)"}


def _spread(values: Any, digits: int = 4) -> str:
    """``mean ± sd`` of several values (sd with divisor n - 1), or the one value."""
    v = np.atleast_1d(np.asarray(values, dtype=float))
    if v.size == 1:
        return f"{v[0]:.{digits}f}"
    return f"{v.mean():.{digits}f} ± {v.std(ddof=1):.{digits}f}"


def _range(first: int, count: int) -> str:
    """"seed 3" or "seeds 0..4"."""
    return f"{first}" if count == 1 else f"{first}..{first + count - 1}"


def _budget(s: DigitsSettings, last: int) -> str:
    """In words: "6,000 steps", or "400 steps (200 epochs; at most 6,000)"."""
    if last == s.steps:
        return f"{last:,} steps"
    return f"{last:,} steps ({s.max_epochs} epochs; at most {s.steps:,})"


def _synthetic_lines(result: DigitsResult) -> list:
    """The semi-synthetic table, each row with its own draws' Bayes numbers."""
    s, name, task = result.settings, result.name, result.fitted.task
    dim, m = task.dim, task.num_classes
    lines = [f"Semi-synthetic: Gaussian classes fitted to {name} on "
             f"{dim} principal components of its {result.features} features "
             f"({describe_shrinkage(result.fitted, s.shrinkage)}); networks "
             f"{dim}-{s.hidden}-{s.hidden}-{m}, Adam lr {s.lr:g}, batch "
             f"{s.batch_size}, up to {s.steps:,} steps, each ending at its lowest "
             "NLL on its own ceil(n/3) validation draws (measured once an epoch); "
             f"seeds {_range(s.seed, s.seeds)}; mean ± sd over seeds; every row "
             f"measured on its own {s.eval_samples:,} fresh draws, with their Bayes "
             "loss H(C|X) and Bayes accuracy.", "",
             "| n | Bayes loss | Bayes accuracy | selected step | expected KL (nats), "
             "selected step | at the last step | accuracy, selected step |",
             "|---|---|---|---|---|---|---|"]
    above = []
    for out in result.synthetic:
        bayes = out["bayes_accuracy"]
        se = float(np.sqrt(bayes * (1 - bayes) / s.eval_samples))
        flag = ""
        if np.max(out["accuracy"]) > bayes + se:
            flag = " (!)"
            above.append(f"n = {out['n']:,}: a network's accuracy "
                         f"{np.max(out['accuracy']):.4f} is above this row's Bayes "
                         f"accuracy {bayes:.4f} by more than its standard error "
                         f"{se:.4f}: chance on {s.eval_samples:,} draws, or a bug")
        lines.append(f"| {out['n']:,} | {out['bayes_loss']:.4f} | {bayes:.4f} | "
                     f"{_spread(out['best_step'], 0)} | "
                     f"{_spread(out['kl_selected'])} | "
                     f"{_spread(out['kl'][-1])} | "
                     f"{_spread(out['accuracy'])}{flag} |")
    return lines + [f"\nFlag (!): {line}." for line in above]


def _temperature_cell(applied: Any, kept: list) -> str:
    """The temperatures applied, and how many were kept at 1."""
    count = sum(bool(k) for k in kept)
    cell = _spread(applied, 3)
    return cell + (f" (kept at 1: {count} of {len(kept)})" if count else "")


def digits_table(result: DigitsResult) -> str:
    """The measured numbers as Markdown: mean ± sd over networks (and splits).

    Parameters
    ----------
    result : DigitsResult

    Returns
    -------
    str
        Two tables: the semi-synthetic expected KL and accuracy at each n (at
        the step each network selected on its validation draws, and at the
        last step), beside that row's Bayes loss and accuracy; and the test
        NLL, ECE and accuracy of a constant prediction, of the networks at
        their last and at their selected step, before and after temperature
        scaling, and of the fitted model, with the mean KL from the fitted
        posterior to the networks.  Notes follow: temperatures kept at 1,
        networks no better than the constant prediction, rows above Bayes.

    Examples
    --------
    >>> from scratchnet.experiments.digits import DigitsSettings, run_digits
    >>> from scratchnet.experiments.digits_report import digits_table
    >>> table = digits_table(run_digits(DigitsSettings(sizes=(50,), steps=20, seeds=2,
    ...                                                dim=4, hidden=8)))
    >>> "| n |" in table and "temperature" in table
    True
    """
    s, real, name = result.settings, result.real, result.name
    task, inputs = result.fitted.task, result.features
    m, splits = task.num_classes, len(result.fitted_all)
    lines = _synthetic_lines(result) if result.synthetic else []
    scores, networks = real["scores"], len(real["best_step"])
    last = int(real["steps"][-1])
    what = "images" if name == "digits" else "samples"
    lines += ["", f"Real {name}: {splits} stratified 60/20/20 split(s) (split seeds "
              f"{_range(0, splits)}), {s.seeds} network(s) on each (seeds "
              f"{_range(s.seed, s.seeds)}): mean ± sd over the {networks} networks "
              f"(the fitted model and the constant: over the {splits} split(s)); "
              f"test split {real['test_size']} {what}, validation split "
              f"{real['validation_size']}.  Networks {inputs}-{s.hidden}-{s.hidden}-"
              f"{m}, Adam lr {s.lr:g}, batch {s.batch_size}, {_budget(s, last)}, "
              "measured on the validation split once an epoch; each is reported at "
              f"its last step and at {_SELECTED[s.stop]}.  T is fitted on the "
              "validation split and applied only where it is inside the search "
              "bounds and the split tells it from 1 (two standard errors).", "",
              "| model | step | T | test NLL (nats) | ECE | accuracy |",
              "|---|---|---|---|---|---|"]
    net_t = _temperature_cell(real["temperatures"], real["kept"])
    gen_t = _temperature_cell(real["generative_temperature"], real["generative_kept"])
    rows = [("constant", "constant (training class frequencies)", "-", "-"),
            ("network, last step", "network, last step", f"{last:,}", "1"),
            ("network", "network, selected step", _spread(real["best_step"], 0), "1"),
            ("network, T", "network, selected step, temperature T",
             _spread(real["best_step"], 0), net_t),
            ("generative", "fitted model, T=1", "-", "1"),
            ("generative, T", "fitted model, temperature T", "-", gen_t)]
    for key, label, step, temperature in rows:
        lines.append(f"| {label} | {step} | {temperature} | "
                     + " | ".join(_spread([v[k] for v in scores[key]])
                                  for k in ("nll", "ece", "accuracy")) + " |")
    both = ~np.isnan(real["kl_to_fitted_T"])
    after = (f"{_spread(real['kl_to_fitted_T'][both])} after scaling both (the "
             f"{int(both.sum())} of {networks} networks whose temperature and whose "
             "split's fitted-model temperature are both applied)" if both.any() else
             "not reported after scaling (no network has both temperatures applied)")
    lines += ["", "Mean KL(fitted posterior || network) on the test split: "
              f"{_spread(real['kl_to_fitted'])} nats at T = 1; {after}."]
    constant = np.array([v["nll"] for v in scores["constant"]])[real["split"]]
    lines += [f"\nNote: {note}." for note in real.get("temperature_notes", [])]
    for key, label in (("network", "at the selected step"),
                       ("network, T", "at the selected step, temperature T"),
                       ("network, last step", "at the last step")):
        worse = np.array([v["nll"] for v in scores[key]]) > constant
        if worse.any():
            lines.append(f"\nNote: {int(worse.sum())} of {networks} networks, {label}, "
                         "have a test NLL above the constant prediction's on their "
                         "split: no better than knowing the class frequencies there.")
    return "\n".join(lines)


def write_digits(result: DigitsResult, out: Path, format: str = "png") -> list[Path]:
    """Write the figures, ``digits.md`` and two CSV files into ``out``.

    Parameters
    ----------
    result : DigitsResult
    out : pathlib.Path
        Created if missing.
    format : {"png", "pdf", "svg"}

    Returns
    -------
    list of pathlib.Path
        ``digits_kl.<format>``, ``digits_reliability.<format>``,
        ``digits_training.<format>``, ``digits.md``,
        ``digits_semi_synthetic.csv``, ``digits_real.csv`` (``digits``: the
        result's ``name``, e.g. ``wine`` for ``python -m scratchnet real``).
        Each figure has a title naming the data set and what it shows.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from scratchnet.experiments.digits import DigitsSettings, run_digits
    >>> from scratchnet.experiments.digits_report import write_digits
    >>> result = run_digits(DigitsSettings(sizes=(50,), steps=20, seeds=2, dim=4,
    ...                                   hidden=8, snapshots=2))
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     [p.name for p in write_digits(result, Path(tmp))][-1]
    'digits_real.csv'
    """
    import matplotlib.pyplot as plt

    from ..plotting.calibration import plot_reliability_diagram
    from ..plotting.digits import (
        plot_calibration_over_training,
        plot_kl_against_n,
        plot_kl_against_steps,
    )

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    real, paths, name = result.real, [], result.name

    def save(fig: Any, name: str) -> None:
        paths.append(out / f"{name}.{format}")
        fig.savefig(paths[-1], dpi=110)
        plt.close(fig)

    if result.synthetic:
        fig, axes = plt.subplots(1, 2, figsize=(11, 4), layout="constrained")
        sizes = [o["n"] for o in result.synthetic]
        plot_kl_against_n(sizes, [o["kl_selected"] for o in result.synthetic],
                          ax=axes[0])
        axes[0].set_title(f"semi-synthetic {name}: at each network's selected step")
        plot_kl_against_steps(result.synthetic[0]["steps"], sizes,
                              [o["kl"] for o in result.synthetic], ax=axes[1])
        fig.suptitle(f"{name}: networks trained on samples of the fitted model, "
                     "distance to its exact posterior")
        save(fig, f"{name}_kl")
    fig, axes = plt.subplots(2, 2, figsize=(8.4, 9.2), layout="constrained")
    titles = {"network": "network (seed {seed}), T = 1",
              "network, T": "network (seed {seed}), T = {t:.2f}",
              "generative": "fitted model, T = 1",
              "generative, T": "fitted model, T = {t:.2f}"}
    temps = {"network, T": real["temperatures"][0],
             "generative, T": real["generative_temperature"][0]}
    legend: dict = {}
    for ax, (key, probs) in zip(axes.flat, real["probabilities"].items()):
        plot_reliability_diagram(probs, real["test_targets"], ax=ax)
        ece = expected_calibration_error(probs, real["test_targets"])
        title = titles[key].format(seed=result.settings.seed, t=temps.get(key, 1.0))
        ax.set_title(f"{title}: ECE {ece:.3f}", fontsize="medium")
        shown = ax.get_legend()
        legend.update(zip((t.get_text() for t in shown.texts), shown.legend_handles))
        ax.get_legend().remove()
    fig.legend(list(legend.values()), list(legend), loc="outside lower center", ncol=2,
               fontsize="small")
    fig.suptitle(f"{name}, test split: reliability of the network and of the fitted "
                 "model,\nbefore and after temperature scaling")
    save(fig, f"{name}_reliability")
    gen = real["scores"]["generative"]
    axes = plot_calibration_over_training(
        real["steps"], real["nll"], real["ece"],
        reference=(np.mean([g["nll"] for g in gen]), np.mean([g["ece"] for g in gen])))
    for ax in axes:
        ax.axvline(np.median(real["best_step"]), color="0.4", ls=":", lw=1,
                   label="median selected step")
    axes[0].figure.suptitle(f"{name}: the networks' test NLL and ECE over training "
                            "(median and range)")
    save(axes[0].figure, f"{name}_training")
    paths.append(out / f"{name}.md")
    paths[-1].write_text(digits_table(result) + "\n")
    paths.append(out / f"{name}_semi_synthetic.csv")
    with paths[-1].open("w", newline="") as f:
        rows = csv.writer(f)
        rows.writerow(["n", "seed", "step", "expected_kl"])
        for o in result.synthetic:
            for t, step in enumerate(o["steps"]):
                rows.writerows([o["n"], result.settings.seed + s, int(step),
                                f"{kl:.6g}"] for s, kl in enumerate(o["kl"][t]))
    paths.append(out / f"{name}_real.csv")
    with paths[-1].open("w", newline="") as f:
        rows = csv.writer(f)
        rows.writerow(["split", "seed", "step", "test_nll", "test_ece",
                       "test_accuracy", "selected_step"])
        seeds = result.settings.seeds
        for t, step in enumerate(real["steps"]):
            rows.writerows([s // seeds, result.settings.seed + s % seeds, int(step),
                            f"{real['nll'][t, s]:.6g}", f"{real['ece'][t, s]:.6g}",
                            f"{real['accuracy'][t, s]:.6g}",
                            int(real["best_step"][s])]
                           for s in range(len(real["best_step"])))
    return paths


def _sizes(text: str) -> tuple:
    """An argument type: comma-separated training-set sizes, each >= 10."""
    try:
        sizes = tuple(int(v) for v in text.split(","))
    except ValueError:
        sizes = ()
    if not sizes or min(sizes) < 10:
        raise argparse.ArgumentTypeError(f"must be comma-separated integers >= 10; "
                                         f"got {text!r}")
    return tuple(sorted(set(sizes)))


def _fraction(text: str) -> float:
    """An argument type: a number in [0, 1]."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be a number in [0, 1]; got {text!r}")
    return value


def build_parser(command: str = "digits") -> argparse.ArgumentParser:
    """The options of ``python -m scratchnet digits`` (or ``real``).

    Parameters
    ----------
    command : {"digits", "real"}, default "digits"
        ``real`` adds ``--dataset``, ``--target`` and ``--standardize``.

    Returns
    -------
    argparse.ArgumentParser

    Examples
    --------
    >>> from scratchnet.experiments.digits_report import build_parser
    >>> build_parser().parse_args(["--sizes", "100,30"]).sizes
    (30, 100)
    >>> build_parser("real").parse_args(["--dataset", "wine"]).out.name
    'scratchnet-real'
    """
    d = _DEFAULTS[command]
    data = ("the bundled digits" if command == "digits"
            else "any labelled data set (--dataset)")
    parser = OneLineParser(
        prog=f"scratchnet {command}",
        description=f"When the generative model is unknown: fit Gaussian classes to "
        f"{data}, train networks on samples of that model (expected KL to its "
        "exact posterior against n) and on the real data (test NLL, ECE and "
        "accuracy before and after temperature scaling on the validation split).",
        epilog=None if command == "digits" else
        "output (in --out): NAME_kl, NAME_reliability and NAME_training figures "
        "(NAME: the data set), NAME.md (the table, also printed), "
        "NAME_semi_synthetic.csv and NAME_real.csv; a progress line per part on "
        "stderr.  python -m scratchnet digits is this study on the digits, "
        "without standardisation.")
    if command == "real":
        parser.add_argument("--dataset", required=True, metavar="NAME|PATH.csv",
                            help=f"one of {', '.join(BUNDLED)} (scikit-learn's, no "
                            "download) or a CSV file with a header row, numeric "
                            "features and one column of labels")
        parser.add_argument("--target", default=None, metavar="COLUMN",
                            help="the CSV file's label column (default: the last)")
        parser.add_argument("--standardize", choices=SCALINGS, default="auto",
                            help="centre and scale each feature on the training "
                            "split (shrinkage depends on the scales); auto "
                            "(default): whichever gives the fitted model the lower "
                            "validation NLL on the first split, said on stderr")
        parser.add_argument("--no-standardize", dest="standardize",
                            action="store_const", const="no",
                            help="the same as --standardize no")
    parser.add_argument("--out", type=out_dir, default=Path(f"scratchnet-{command}"),
                        help="directory for figures and tables "
                        f"(default: scratchnet-{command})")
    parser.add_argument("--sizes", type=_sizes, default=d.sizes,
                        help="semi-synthetic training-set sizes, comma-separated "
                        f"(default: {','.join(map(str, d.sizes))})")
    parser.add_argument("--steps", type=positive, default=d.steps,
                        help=f"Adam steps of every network (default: {d.steps})")
    parser.add_argument("--seeds", type=positive, default=d.seeds,
                        help=f"networks per setting (default: {d.seeds})")
    parser.add_argument("--seed", type=non_negative, default=d.seed,
                        help="the first seed (default: 0)")
    parser.add_argument("--splits", type=positive, default=d.splits,
                        help="stratified 60/20/20 splits, split seeds 0..K-1, "
                        f"--seeds networks on each (default: {d.splits})")
    parser.add_argument("--dim", type=positive, default=d.dim,
                        help="PCA dimensions of the fitted model (default: "
                        f"{'every feature' if d.dim is None else d.dim}; at most "
                        "the number of features)")
    parser.add_argument("--shrinkage", type=_fraction, default=None,
                        help="covariance shrinkage in [0, 1] (default: chosen on "
                        "the validation split)")
    if command == "real":
        parser.add_argument("--max-epochs", type=positive, default=d.max_epochs,
                            help="the real-data networks train at most this many "
                            "passes over the training split, if fewer than --steps "
                            f"(default: {d.max_epochs})")
    parser.add_argument("--stop", choices=STOPS, default=d.stop,
                        help="the real-data networks of a split stop at their own "
                        "lowest validation NLL (each) or together, at the lowest "
                        "mean of the split's networks (safer on a small validation "
                        f"split; default: {d.stop})")
    parser.add_argument("--hidden", type=positive, default=d.hidden,
                        help=f"width of the two hidden layers (default: {d.hidden})")
    parser.add_argument("--jobs", type=positive, default=None,
                        help="worker processes (default: CPUs)")
    parser.add_argument("--format", choices=("png", "pdf", "svg"), default="png")
    parser.add_argument("--quiet", action="store_true",
                        help="print nothing but errors")
    return parser


def real_main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m scratchnet real``: the study on any data set.

    Parameters
    ----------
    argv : sequence of str, optional
        The options after ``real`` (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        0 on success, 1 on a failure (a missing file or column, non-numeric
        features, too few samples of a class); bad options exit with 2.

    Examples
    --------
    >>> import tempfile
    >>> from scratchnet.experiments.digits_report import real_main
    >>> with tempfile.TemporaryDirectory() as out:
    ...     real_main(["--dataset", "iris", "--sizes", "50", "--steps", "20",
    ...                "--seeds", "2", "--hidden", "8", "--jobs", "1", "--quiet",
    ...                "--out", out])
    0
    """
    return main(argv, command="real")


def main(argv: Optional[Sequence[str]] = None, command: str = "digits") -> int:
    """``python -m scratchnet digits``: run the study, write figures and tables.

    Parameters
    ----------
    argv : sequence of str, optional
        The options after ``digits`` (default: ``sys.argv[1:]``).
    command : {"digits", "real"}, default "digits"
        ``real``: :func:`real_main`.

    Returns
    -------
    int
        0 on success, 1 on a failure (bad options exit with 2).

    Examples
    --------
    >>> import tempfile
    >>> from scratchnet.experiments.digits_report import main
    >>> with tempfile.TemporaryDirectory() as out:
    ...     main(["--sizes", "50", "--steps", "20", "--seeds", "2", "--dim", "4",
    ...           "--hidden", "8", "--jobs", "1", "--quiet", "--out", out])
    0
    """
    parser = build_parser(command)
    args = parser.parse_args(sys.argv[1:] if argv is None else list(argv))
    try:
        settings = replace(_DEFAULTS[command], sizes=args.sizes, steps=args.steps,
                           seeds=args.seeds, seed=args.seed, dim=args.dim,
                           shrinkage=args.shrinkage, hidden=args.hidden,
                           splits=args.splits, stop=args.stop,
                           max_epochs=getattr(args, "max_epochs", None))
    except ValueError as exc:          # --dim above 64
        parser.error(f"--{str(exc).split()[0]}: {exc}")

    def say(message: str) -> None:
        if not args.quiet:
            print(message, file=sys.stderr, flush=True)

    jobs = args.jobs or cpu_count()
    try:
        if command == "digits":
            result = run_digits(settings, jobs=jobs, progress=say)
        else:
            say(f"real: {args.dataset}, standardize: {args.standardize}")
            scale = {"auto": "auto", "yes": True, "no": False}[args.standardize]
            result = run_real(args.dataset, settings, target=args.target,
                              scale=scale, jobs=jobs, progress=say)[0]
        paths = write_digits(result, args.out, args.format)
    except (OSError, ValueError, ImportError, FloatingPointError,
            BrokenProcessPool) as exc:
        print(f"scratchnet {command}: error: {exc}", file=sys.stderr)
        return 1
    if not args.quiet:
        print(digits_table(result))
    say(f"wrote {', '.join(p.name for p in paths)} to {args.out} in "
        f"{result.elapsed:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
