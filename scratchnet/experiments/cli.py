r"""The command line's argument checks: a bad option costs one line, before any work.

``python -m scratchnet`` and ``python -m scratchnet sweep`` read their options
with the argument types below.  Each one parses an option's text and either
returns the value or raises ``argparse.ArgumentTypeError`` with what it
expects and what it got; :class:`OneLineParser` prints that as one line,
naming the option, and exits with status 2 (no usage block, no traceback).
A run that would not fit in memory is refused the same way, from
:func:`run_bytes`, the size of its records, counted before anything is
allocated:

.. math::

    \text{bytes} = \sum_{\text{runs}} \text{networks} \times \text{steps}
        \times (8 + 16\, B\, [\text{covering}]),

8 bytes for each step's loss, and for a ``covering`` recipe the inputs and
labels of every batch of :math:`B` drawn up front.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Callable, Optional

from .recipes import get_recipe

__all__ = ["MAX_RUN_BYTES", "OneLineParser", "names", "non_negative", "out_dir",
           "positive", "run_bytes"]

MAX_RUN_BYTES = 2 * 2**30  #: the most the runs' records may ask for, checked first


class OneLineParser(argparse.ArgumentParser):
    """An ``argparse.ArgumentParser`` whose errors are one line and exit status 2.

    Parameters
    ----------
    *args, **kwargs
        Those of ``argparse.ArgumentParser``.

    Examples
    --------
    >>> from scratchnet.experiments.cli import OneLineParser, positive
    >>> parser = OneLineParser(prog="demo")
    >>> _ = parser.add_argument("--steps", type=positive)
    >>> parser.parse_args(["--steps", "30"]).steps
    30
    """

    def error(self, message: str) -> None:  # type: ignore[override]
        """Print ``prog: error: message (see --help)`` and exit with status 2.

        Parameters
        ----------
        message : str
            What argparse found wrong, naming the option.

        Returns
        -------
        None
            It does not return: it raises ``SystemExit(2)``.

        Examples
        --------
        >>> from scratchnet.experiments.cli import OneLineParser
        >>> OneLineParser(prog="demo").error("--steps: bad")
        Traceback (most recent call last):
        SystemExit: 2
        """
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def names(kind: str, valid: Sequence[str]) -> Callable[[str], list[str]]:
    """An argument type: comma-separated names, each one of ``valid``.

    Parameters
    ----------
    kind : str
        What is named ("task", "recipe", "loss"), for the messages; task
        names may be written with ``_`` for ``-``.
    valid : sequence of str
        The names accepted.

    Returns
    -------
    callable
        Text to the list of names; ``argparse.ArgumentTypeError`` for none or
        an unknown one.

    Examples
    --------
    >>> from scratchnet.experiments.cli import names
    >>> names("task", ("separated", "sparse-tail"))("separated, sparse_tail")
    ['separated', 'sparse-tail']
    """
    def parse(text: str) -> list[str]:
        found = [name.strip().replace("_", "-") if kind == "task" else name.strip()
                 for name in text.split(",") if name.strip()]
        if not found:
            raise argparse.ArgumentTypeError(
                f"must name at least one {kind}, comma-separated, from: "
                f"{', '.join(valid)}; got {text!r}")
        for name in found:
            if name not in valid:
                raise argparse.ArgumentTypeError(
                    f"unknown {kind} {name!r}; valid "
                    f"{'losses' if kind == 'loss' else kind + 's'}: {', '.join(valid)}")
        return found
    return parse


def positive(text: str) -> int:
    """An argument type: an integer >= 1.

    Parameters
    ----------
    text : str

    Returns
    -------
    int

    Examples
    --------
    >>> from scratchnet.experiments.cli import positive
    >>> positive("12")
    12
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer; got {text!r}"
                                         ) from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer; got {value}")
    return value


def non_negative(text: str) -> int:
    """An argument type: an integer >= 0 (a seed).

    Parameters
    ----------
    text : str

    Returns
    -------
    int

    Examples
    --------
    >>> from scratchnet.experiments.cli import non_negative
    >>> non_negative("0")
    0
    """
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(
            f"must be a non-negative integer; got {text!r}")
    return value


def out_dir(text: str) -> Path:
    """An argument type: a directory to write into (made later if missing), not a file.

    Parameters
    ----------
    text : str
        Not empty or blank (that would write into the working directory).

    Returns
    -------
    pathlib.Path

    Examples
    --------
    >>> from scratchnet.experiments.cli import out_dir
    >>> out_dir("results").name
    'results'
    """
    if not text.strip():
        raise argparse.ArgumentTypeError(f"must be a directory path; got {text!r}")
    if Path(text).exists() and not Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"must be a directory; got {text!r}, a file")
    return Path(text)


def run_bytes(pairs: Sequence[tuple[Any, str]], steps: Optional[int],
              seeds: int) -> int:
    """Bytes of the runs' records: losses, and the inputs covering draws up front.

    Parameters
    ----------
    pairs : sequence of (task, recipe name)
        The runs; the task does not matter.
    steps : int or None
        Steps of every run (None: each recipe's own).
    seeds : int
        Networks per run.

    Returns
    -------
    int
        The sum over the runs of networks x steps x (8 + 16 B for a covering
        recipe, B its batch size).

    Examples
    --------
    >>> from scratchnet.experiments.cli import run_bytes
    >>> run_bytes([("separated", "textbook")], 1000, 5)   # 5 x 1,000 losses
    40000
    """
    total = 0
    for _, name in pairs:
        recipe = get_recipe(name)
        n = steps or recipe.steps
        per_step = 8 + (16 * recipe.batch_size if recipe.data == "covering" else 0)
        total += seeds * n * per_step
    return total
