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
labels of every batch of :math:`B` drawn up front.  A sweep counts what one
unit of work holds at a time, per worker, times the workers
(:func:`unit_bytes`, :func:`plan_parts`): the records, the training data and
the weights of each of its networks (which grow with ``--widths``), and the
activations of one network measured on the quadrature's nodes; it splits
the grid into units small enough, and refuses only a network too large to
train at all.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Callable, Optional

from .recipes import get_recipe

__all__ = ["MAX_RUN_BYTES", "OneLineParser", "names", "non_negative", "out_dir",
           "plan_parts", "positive", "run_bytes", "unit_bytes"]

MAX_RUN_BYTES = 2 * 2**30  #: the most the runs' records may ask for, checked first
#: Rows the measuring network keeps buffers for: one network measures every member
#: of a unit in turn and keeps its buffers for up to four input sizes (those of
#: ``fast.MLP``), each the 100 + 4,001 points of a snapshot or one task's expected-KL
#: quadrature nodes (at most about 17,400 for two classes).
_MEASURED_ROWS = 4 * 17_400


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
    if not text.strip() or "\0" in text:
        raise argparse.ArgumentTypeError(f"must be a directory path; got {text!r}")
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"must be a directory; got {text!r}, a file")
    existing = path.absolute()
    while not existing.exists():  # the nearest folder that exists must take it
        existing = existing.parent
    if not existing.is_dir():
        raise argparse.ArgumentTypeError(
            f"must be a directory path; got {text!r}, under the file {str(existing)!r}")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(
            f"must be a directory we can write; got {text!r} ({str(existing)!r} is "
            "not writable)")
    return path


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


def unit_bytes(recipe: Any, width: int, steps: int, members: int) -> int:
    """Bytes one unit of work holds at once: its networks, and one being measured.

    Parameters
    ----------
    recipe : str or Recipe
    width : int
        Every hidden layer's width.
    steps : int
        The largest budget (every network trains to it).
    members : int
        Networks trained together in the unit.

    Returns
    -------
    int
        ``members`` times (the losses, 8 bytes a step; the training data, 16
        bytes an input, drawn up front for ``fixed`` and ``covering``; the
        weights with their gradients and Adam's two moments, 32 bytes a
        parameter; the activations of a batch, 24 bytes a unit), plus the
        buffers of the network that measures them (24 bytes per unit and
        input, for the 69,600 inputs of up to four grids).

    Examples
    --------
    >>> from scratchnet.experiments.cli import unit_bytes
    >>> round(unit_bytes("textbook", 64, 1000, 1) / 2**20, 1)   # MiB: the measuring
    106.8
    """
    recipe = get_recipe(recipe)
    hidden = [width] * (len(recipe.sizes) - 2)
    sizes = [recipe.sizes[0], *hidden, recipe.sizes[-1]]
    params = sum((a + 1) * b for a, b in zip(sizes[:-1], sizes[1:]))
    samples = {"fixed": recipe.dataset_size, "covering": steps * recipe.batch_size,
               "stream": 0}[recipe.data]
    network = (8 * steps + 16 * samples + 32 * params
               + 24 * recipe.batch_size * sum(sizes))
    return members * network + 24 * _MEASURED_ROWS * sum(sizes)


def plan_parts(grid: Any, workers: int, limit: int = MAX_RUN_BYTES) -> int:
    """Units to split a sweep's grid into, so that ``workers`` of them fit in ``limit``.

    Parameters
    ----------
    grid : Grid
    workers : int
        Units held at once (one per worker process).
    limit : int, default MAX_RUN_BYTES

    Returns
    -------
    int
        At least four per worker; more where a unit of the grid's largest
        shape would need more than ``limit / workers`` bytes.

    Raises
    ------
    ValueError
        When even one network of a recipe and width does not fit, naming
        ``--widths`` (or ``--steps``) and the size.

    Examples
    --------
    >>> import scratchnet as sn
    >>> from scratchnet.experiments.cli import plan_parts
    >>> grid = sn.experiments.Grid("0.25:5:20", "0.625:3:20", recipes=("covering",),
    ...                            seeds=range(5), steps=(1000, 10000))
    >>> plan_parts(grid, 2)   # 2,000 networks: 25 units of 80, two at a time
    25
    """
    members = len(grid.points) * len(grid.seeds)
    steps = grid.steps[-1]
    most = 1
    for recipe in grid.recipes:
        for width in grid.widths:
            one = unit_bytes(recipe, width, steps, 1) * workers
            if one > limit:
                raise ValueError(
                    f"--widths {width} with --steps {steps:,} needs about "
                    f"{one / 2**30:,.3g} GiB for one {recipe} network per worker "
                    f"({workers} worker{'s' if workers > 1 else ''}; at most "
                    f"{limit / 2**30:g} GiB): lower --widths, --steps or --jobs")
            per = unit_bytes(recipe, width, steps, 2) - unit_bytes(recipe, width,
                                                                   steps, 1)
            fixed = unit_bytes(recipe, width, steps, 0)
            fits = max(1, (limit // workers - fixed) // per)
            most = max(most, math.ceil(members / fits))
    shapes = len(grid.recipes) * len(grid.losses) * len(grid.widths)
    return max(4 * workers, most * shapes)
