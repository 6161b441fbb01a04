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
from .digits import DigitsResult, DigitsSettings, run_digits
from .pool import cpu_count
from .real import BUNDLED, REAL_SETTINGS, run_real

__all__ = ["build_parser", "digits_table", "main", "real_main", "write_digits"]

#: each command's settings: its options' defaults, and the rest of its study
_DEFAULTS = {"digits": DigitsSettings(), "real": REAL_SETTINGS}


def _spread(values: Any, digits: int = 4) -> str:
    """``median [min, max]`` of several values, or the one value."""
    v = np.atleast_1d(np.asarray(values, dtype=float))
    if v.size == 1:
        return f"{v[0]:.{digits}f}"
    return (f"{np.median(v):.{digits}f} [{v.min():.{digits}f}, "
            f"{v.max():.{digits}f}]")


def digits_table(result: DigitsResult) -> str:
    """The measured numbers as Markdown: median [min, max] over seeds.

    Parameters
    ----------
    result : DigitsResult

    Returns
    -------
    str
        Two tables: the semi-synthetic expected KL and accuracy at each n
        (final step), and the test NLL, ECE and accuracy of the network and
        of the fitted model before and after temperature scaling, with the
        mean KL from the fitted posterior to the network.

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
    seeds = (f"seeds {s.seed}..{s.seed + s.seeds - 1}" if s.seeds > 1
             else f"seed {s.seed}")
    first = result.synthetic[0] if result.synthetic else None
    task, inputs = result.fitted.task, result.fitted.pca.mean.shape[-1]
    dim, m = task.dim, task.num_classes
    lines = [f"Semi-synthetic: {dim}-D Gaussian classes fitted to {name} "
             f"(shrinkage {result.fitted.shrinkage:g}); networks {dim}-{s.hidden}-"
             f"{s.hidden}-{m}, Adam lr {s.lr:g}, batch {s.batch_size}, {s.steps:,} "
             f"steps, {seeds}; median [min, max] over seeds, on "
             f"{s.eval_samples:,} fresh draws.", ""]
    if first is not None:
        lines += [f"Bayes loss H(C|X) {first['bayes_loss']:.4f} nats, Bayes accuracy "
                  f"{first['bayes_accuracy']:.4f} (same draws).", "",
                  "| n | expected KL (nats), final | lowest over snapshots | "
                  "accuracy |", "|---|---|---|---|"]
        lines += [f"| {out['n']:,} | {_spread(out['kl'][-1])} | "
                  f"{_spread(out['kl'].min(axis=0))} | {_spread(out['accuracy'])} |"
                  for out in result.synthetic]
    scores = real["scores"]
    rows = [("network", "network, T=1"), ("network, T", "network, temperature T"),
            ("generative", "fitted model, T=1"),
            ("generative, T", "fitted model, temperature T")]
    what = "images" if name == "digits" else "samples"
    lines += ["", f"Real {name}, test split ({len(real['test_targets'])} {what}); "
              f"networks {inputs}-{s.hidden}-{s.hidden}-{m} on the training split; T "
              "fitted on the validation split.", "",
              "| model | T | test NLL (nats) | ECE | accuracy |",
              "|---|---|---|---|---|"]
    temps = {"network": 1.0, "network, T": real["temperatures"], "generative": 1.0,
             "generative, T": real["generative_temperature"]}
    for key, label in rows:
        values = scores[key] if isinstance(scores[key], list) else [scores[key]]
        lines.append(f"| {label} | {_spread(temps[key], 3)} | "
                     + " | ".join(_spread([v[m] for v in values])
                                  for m in ("nll", "ece", "accuracy")) + " |")
    lines += ["", "Mean KL(fitted posterior || network) on the test split: "
              f"{_spread(real['kl_to_fitted'])} nats at T = 1, "
              f"{_spread(real['kl_to_fitted_T'])} after scaling both."]
    lines += [f"\nNote: {note}." for note in real.get("temperature_notes", [])]
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
        plot_kl_against_n(sizes, [o["kl"][-1] for o in result.synthetic], ax=axes[0])
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
             "generative, T": real["generative_temperature"]}
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
    axes = plot_calibration_over_training(real["steps"], real["nll"], real["ece"],
                                          reference=(gen["nll"], gen["ece"]))
    axes[0].figure.suptitle(f"{name}: the network's test NLL and ECE over training")
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
        rows.writerow(["seed", "step", "test_nll", "test_ece", "test_accuracy"])
        for t, step in enumerate(real["steps"]):
            rows.writerows([result.settings.seed + s, int(step),
                            f"{real['nll'][t, s]:.6g}", f"{real['ece'][t, s]:.6g}",
                            f"{real['accuracy'][t, s]:.6g}"]
                           for s in range(result.settings.seeds))
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
        ``real`` adds ``--dataset``, ``--target`` and ``--no-standardize``.

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
        parser.add_argument("--no-standardize", dest="standardize",
                            action="store_false",
                            help="keep the features' scales (by default each is "
                            "centred and scaled on the training split: shrinkage "
                            "depends on the scales)")
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
    parser.add_argument("--dim", type=positive, default=d.dim,
                        help=f"PCA dimensions of the fitted model (default: {d.dim})")
    parser.add_argument("--shrinkage", type=_fraction, default=None,
                        help="covariance shrinkage in [0, 1] (default: chosen on "
                        "the validation split)")
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
                           shrinkage=args.shrinkage, hidden=args.hidden)
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
            say(f"real: {args.dataset}, standardised: {args.standardize}")
            result = run_real(args.dataset, settings, target=args.target,
                              scale=args.standardize, jobs=jobs, progress=say)[0]
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
