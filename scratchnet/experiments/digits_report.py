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

__all__ = ["build_parser", "digits_table", "main", "write_digits"]


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
    s, real = result.settings, result.real
    seeds = (f"seeds {s.seed}..{s.seed + s.seeds - 1}" if s.seeds > 1
             else f"seed {s.seed}")
    first = result.synthetic[0] if result.synthetic else None
    lines = [f"Semi-synthetic: {s.dim}-D Gaussian classes fitted to the digits "
             f"(shrinkage {result.fitted.shrinkage:g}); networks {s.dim}-{s.hidden}-"
             f"{s.hidden}-10, Adam lr {s.lr:g}, batch {s.batch_size}, {s.steps:,} "
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
    lines += ["", f"Real digits, test split ({len(real['test_targets'])} images); "
              f"networks 64-{s.hidden}-{s.hidden}-10 on the training split; T fitted "
              "on the validation split.", "",
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
        ``digits_semi_synthetic.csv``, ``digits_real.csv``.

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
    real, paths = result.real, []

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
        save(fig, "digits_kl")
    fig, axes = plt.subplots(2, 2, figsize=(8.4, 9.2), layout="constrained")
    titles = {"network": "network (seed {seed}), T = 1",
              "network, T": "network (seed {seed}), T = {t:.2f}",
              "generative": "fitted model, T = 1",
              "generative, T": "fitted model, T = {t:.2f}"}
    temps = {"network, T": real["temperatures"][0],
             "generative, T": real["generative_temperature"]}
    for ax, (key, probs) in zip(axes.flat, real["probabilities"].items()):
        plot_reliability_diagram(probs, real["test_targets"], ax=ax)
        ece = expected_calibration_error(probs, real["test_targets"])
        title = titles[key].format(seed=result.settings.seed, t=temps.get(key, 1.0))
        ax.set_title(f"{title}: ECE {ece:.3f}", fontsize="medium")
        handles, labels = ax.get_legend_handles_labels()
        ax.get_legend().remove()
    fig.legend(handles, labels, loc="outside lower center", ncol=3, fontsize="small")
    save(fig, "digits_reliability")
    gen = real["scores"]["generative"]
    axes = plot_calibration_over_training(real["steps"], real["nll"], real["ece"],
                                          reference=(gen["nll"], gen["ece"]))
    save(axes[0].figure, "digits_training")
    paths.append(out / "digits.md")
    paths[-1].write_text(digits_table(result) + "\n")
    paths.append(out / "digits_semi_synthetic.csv")
    with paths[-1].open("w", newline="") as f:
        rows = csv.writer(f)
        rows.writerow(["n", "seed", "step", "expected_kl"])
        for o in result.synthetic:
            for t, step in enumerate(o["steps"]):
                rows.writerows([o["n"], result.settings.seed + s, int(step),
                                f"{kl:.6g}"] for s, kl in enumerate(o["kl"][t]))
    paths.append(out / "digits_real.csv")
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


def build_parser() -> argparse.ArgumentParser:
    """The options of ``python -m scratchnet digits``.

    Returns
    -------
    argparse.ArgumentParser

    Examples
    --------
    >>> from scratchnet.experiments.digits_report import build_parser
    >>> build_parser().parse_args(["--sizes", "100,30"]).sizes
    (30, 100)
    """
    d = DigitsSettings()
    parser = OneLineParser(
        prog="scratchnet digits",
        description="When the generative model is unknown: fit Gaussian classes to "
        "the bundled digits, train networks on samples of that model (expected KL "
        "to its exact posterior against n) and on the real digits (test NLL, ECE "
        "and accuracy before and after temperature scaling).")
    parser.add_argument("--out", type=out_dir, default=Path("scratchnet-digits"),
                        help="directory for figures and tables "
                        "(default: scratchnet-digits)")
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


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m scratchnet digits``: run the study, write figures and tables.

    Parameters
    ----------
    argv : sequence of str, optional
        The options after ``digits`` (default: ``sys.argv[1:]``).

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
    parser = build_parser()
    args = parser.parse_args(sys.argv[1:] if argv is None else list(argv))
    try:
        settings = replace(DigitsSettings(), sizes=args.sizes, steps=args.steps,
                           seeds=args.seeds, seed=args.seed, dim=args.dim,
                           shrinkage=args.shrinkage, hidden=args.hidden)
    except ValueError as exc:          # --dim above 64
        parser.error(f"--{str(exc).split()[0]}: {exc}")

    def say(message: str) -> None:
        if not args.quiet:
            print(message, file=sys.stderr, flush=True)

    jobs = args.jobs or cpu_count()
    try:
        result = run_digits(settings, jobs=jobs, progress=say)
        paths = write_digits(result, args.out, args.format)
    except (OSError, ValueError, ImportError, FloatingPointError,
            BrokenProcessPool) as exc:
        print(f"scratchnet digits: error: {exc}", file=sys.stderr)
        return 1
    if not args.quiet:
        print(digits_table(result))
    say(f"wrote {', '.join(p.name for p in paths)} to {args.out} in "
        f"{result.elapsed:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
