"""Helpers shared by several test files (not tests themselves)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = ROOT / "notebooks"

# The modules in reading order: each may import only those before it.  A module
# of a subpackage is named with a dot ("plotting.style"); a subpackage's own
# ``__init__`` comes after its modules, since it re-exports them.
CHAPTERS = [
    "_validation",
    "_scores",
    "_network_checks",
    "softmax",
    "_loss_common",
    "_torch_layouts",
    "losses",
    "functional",
    "scoring",
    "readouts",
    "objectives",
    "gradcheck",
    "information",
    "units",
    "_quadrature",
    "_mixture",
    "bayes",
    "gaussian",
    "two_gaussians",
    "tasks",
    "layers",
    "mlp",
    "optim",
    "schedules",
    "history",
    "_recording",
    "batches",
    "fitting",
    "datasets",
    "train",
    "exceptions",
    "temperature",
    "_estimator_parts",
    "metrics",
    "fast.kernels",
    "fast.params",
    "fast.mlp",
    "fast.objectives",
    "fast.streams",
    "fast.optim",
    "fast.ensemble",
    "fast.training",
    "fast.gaussian",
    "fast",
    "estimators",
    "plotting.style",
    "plotting._shared",
    "plotting.posterior",
    "plotting.calibration",
    "plotting.training",
    "plotting.objectives",
    "plotting.digits",
    "plotting",
    "experiments._checks",
    "experiments.recipes",
    "experiments.pool",
    "experiments.runs",
    "experiments.report",
    "experiments.axes",
    "experiments.grids",
    "experiments.tables",
    "experiments.sweeps",
    "experiments.phase",
    "experiments.selection",
    "experiments.digits_calibration",
    "experiments.digits",
    "experiments.real",
    "experiments",
    "experiments.cli",
    "exercises.catalogue",
    "exercises.probes",
    "exercises.frames",
    "exercises.definitions",
    "exercises.accounts",
    "exercises.shim",
    "exercises.given",
    "exercises.protocol",
    "exercises.diagnoses",
    "exercises.runtime",
    "exercises.confine",
    "exercises.forkserver",
    "exercises.sandbox",
    "exercises.remote",
    "exercises.sides",
    "exercises.layout",
    "exercises.docstrings",
    "exercises.reference_scores",
    "exercises.reference_models",
    "exercises.key_scores",
    "exercises.key_models",
    "exercises.own",
    "exercises.source",
    "exercises.derive",
    "exercises.carried",
    "exercises.notebook",
    "exercises.handout",
    "exercises.generic",
    "exercises.checks_scores",
    "exercises.checks_layers",
    "exercises.checks_models",
    "exercises.analysis",
    "exercises.checking",
    "exercises.report",
    "exercises.assignment",
    "exercises.grading",
    "exercises.grader",
    "exercises.course",
    "exercises.selfcheck",
    "exercises.assertions",
    "exercises",
    "exercises.cli",
    "experiments.digits_report",
    "__main__",
]


def numerical_grad(f, x, eps=1e-6):
    """Central differences of the scalar f() w.r.t. every entry of x (in place).

    Written here, independently of ``scratchnet.gradcheck``, so that the
    backward passes are checked against code that is not under test.
    """
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        old = x[i]
        x[i] = old + eps
        up = f()
        x[i] = old - eps
        down = f()
        x[i] = old
        grad[i] = (up - down) / (2 * eps)
    return grad


def rel_error(a, b):
    """Largest relative error, with a floor of 1e-8 in the denominator."""
    return np.max(np.abs(a - b) / np.maximum(1e-8, np.abs(a) + np.abs(b)))


def classification_data(n=5, m=4, seed=0):
    """Moderate float64 logits, class indices, distributions and weights."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(scale=2.0, size=(n, m))
    targets = rng.integers(0, m, size=n)
    probs = rng.dirichlet(np.ones(m), size=n)
    weight = rng.uniform(0.2, 2.0, size=m)
    return logits, targets, probs, weight


def code_lines(source: str) -> int:
    """Lines that are not blank, not comments and not in a docstring.

    Docstrings are those of the module, of classes and of functions, found in
    the syntax tree (a string statement elsewhere is code).
    """
    docstring_lines = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                             ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                docstring_lines.update(range(first.lineno, first.end_lineno + 1))
    return sum(1 for i, line in enumerate(source.splitlines(), 1)
               if line.strip() and not line.strip().startswith("#")
               and i not in docstring_lines)


# -- Numbers that notebooks print from training runs ---------------------------
#
# A matrix product's last bits depend on the BLAS kernel, which OpenBLAS picks by
# CPU (``OPENBLAS_CORETYPE=Haswell``, ``Sandybridge``, ``SkylakeX`` force one),
# and training amplifies them: two CPUs print a trained network's expected KL
# as 1.53e-03 and 1.59e-03.  A cell that prints such numbers carries the tag
# ``nbval-ignore-output``, so nbval does not compare it digit for digit, and an
# entry in ``NOTEBOOK_TOLERANCES`` below: the root ``conftest.py`` then compares
# the fresh run's text of that cell (the one nbval just executed, no second run)
# with the stored text, words exactly and numbers within the stated tolerance.
# The stored numbers themselves are held to what the prose claims by
# ``tests/test_notebooks.py`` and ``tests/test_notebook_numbers.py``
# (``printed_number`` reads them).  Numbers from exact arithmetic stay in cells
# that nbval compares exactly.


@dataclass(frozen=True)
class Tolerance:
    """How far a fresh run's printed numbers may be from the stored ones.

    A number printed in e-notation (``1.53e-03``: a quantity spanning decades)
    may differ by ``rel`` times the stored value; any other number (``0.500``,
    ``85.37%``, ``46``) by ``abs`` in the units printed.  Two numbers both at
    most ``noise`` in magnitude agree (rounding-error measurements: ``0.0``
    against ``5.6e-17``).  ``why`` says what the numbers measure and why the
    tolerance fits.
    """

    rel: float = 0.0
    abs: float = 0.0
    noise: float = 0.0
    why: str = ""


# (notebook stem, text found in the source of exactly one code cell) -> tolerance.
NOTEBOOK_TOLERANCES: dict[tuple[str, str], Tolerance] = {
    # Rounding-error measurements (not training): the last bits of the matrix
    # products, and so these values, differ between BLAS kernels.  What the
    # cells show is that the correct gradient sits at rounding level (below
    # 1e-7, where sn.gradient_check passes) and each bug at 1e-1 or more; the
    # bug rows (1.0e+00, 7/9 = 7.8e-01) are compared exactly.
    ("04_backprop_by_hand", "dlogits_chain = sn.layers.log_softmax_backward"): Tolerance(
        noise=1e-12,
        why="0.0 on one CPU, 5.6e-17 on another: two roundings of the same gradient",
    ),
    ("04_backprop_by_hand", "error = sn.gradient_check(loss_as_function_of(name)"): Tolerance(
        noise=1e-7, why="central differences agree with the backward pass to rounding"
    ),
    ("04_backprop_by_hand", "bugs = [None,"): Tolerance(
        noise=1e-7, why="the correct rows at rounding level, the bug rows exact"
    ),
    # Training runs (float32, 2,000 steps on sparse-tail).  Across the OpenBLAS
    # cores Haswell, Sandybridge and SkylakeX the expected KL of seed 0 moves by
    # up to 11% (original 1.53e-03 to 1.70e-03, covering 8.1e-05 to 9.1e-05) and
    # max |q - P| by up to 0.009 (0.491 to 0.500); over seeds 0-5 on one CPU the
    # KL spans a factor of 10 (8.4e-04 to 1.1e-02) and max |q - P| 0.49 to 0.70.
    # rel 0.5 and abs 0.03 are 3 to 4 times the CPU spread and far inside the
    # seed spread: a fresh run is the same run, perturbed in its last bits.
    ("05_network_learns_posterior", 'original = ex.run("sparse-tail", "original"'): Tolerance(
        rel=0.5, abs=0.03, why="a float32 training run on another CPU's BLAS kernels"
    ),
    ("05_network_learns_posterior", 'covering = ex.run("sparse-tail", "covering"'): Tolerance(
        rel=0.5, abs=0.03, why="a float32 training run on another CPU's BLAS kernels"
    ),
    # The grader prints float64 matrix products to 6 decimals; a value next to a
    # rounding boundary (2.0330255) prints its last digit either way depending
    # on the kernel's summation order: one unit in the 6th decimal, with margin.
    ("07_homework_exercises",
     "report = exercises.check(hw, assignment=assignment)\nprint(report.text())"
     ): Tolerance(
        abs=1.5e-6, why="float64 products printed to 6 decimals"
    ),
}

# A number as the notebooks print it: sign, digits (with thousands commas),
# decimals, exponent.  A letter or underscore just before it makes it part of a
# name (W1, x_2), compared as text.
_NUMBER = re.compile(
    r"(?<![\w.])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?"
    r"|(?<![\w.])[-+]?\.\d+(?:[eE][-+]?\d+)?"
)


def output_text(outputs) -> str:
    """The text of a cell's outputs: its streams, and each display's Markdown or
    plain text (figures excluded), in order, as nbval compares them."""
    parts = []
    for out in outputs:
        if out.get("output_type") == "stream":
            parts.append(out["text"])
        for kind in ("text/markdown", "text/plain"):
            if kind in out.get("data", {}):
                parts.append(out["data"][kind])
                break
    return "".join(parts)


def notebook_cell(notebook: str, marker: str):
    """The one code cell of ``notebooks/<notebook>.ipynb`` whose source contains
    ``marker`` (stored outputs included)."""
    import nbformat

    nb = nbformat.read(NOTEBOOK_DIR / f"{notebook}.ipynb", as_version=4)
    cells = [c for c in nb.cells if c.cell_type == "code" and marker in c.source]
    assert len(cells) == 1, f"{notebook}: {len(cells)} code cells contain {marker!r}"
    return cells[0]


def printed_number(notebook: str, marker: str, pattern: str) -> float:
    """The number that ``pattern``'s first group matches in the stored text
    outputs of the code cell of ``notebook`` containing ``marker``: for example
    ``printed_number("05_network_learns_posterior", 'original = ex.run(',
    "expected KL (\\S+),")`` is 0.00153.  Thousands commas and a trailing ``%``
    are dropped.
    """
    text = output_text(notebook_cell(notebook, marker).outputs)
    found = re.search(pattern, text)
    assert found, f"{notebook}: no {pattern!r} in the output of {marker!r}:\n{text}"
    return float(found.group(1).replace(",", "").rstrip("%"))


def numbers_that_differ(stored: str, fresh: str, tolerance: Tolerance) -> list[str]:
    """Where ``fresh`` differs from ``stored`` beyond ``tolerance``: the words
    (everything but numbers) exactly, the numbers as ``Tolerance`` says.
    Empty when they agree."""
    words = (_NUMBER.split(stored), _NUMBER.split(fresh))
    if words[0] != words[1]:
        return [f"the text differs beyond its numbers:\n{stored!r}\n{fresh!r}"]
    differ = []
    for a, b in zip(_NUMBER.findall(stored), _NUMBER.findall(fresh)):
        x, y = (float(v.replace(",", "")) for v in (a, b))
        if a == b or max(abs(x), abs(y)) <= tolerance.noise:
            continue
        allowed = tolerance.rel * abs(x) if "e" in a.lower() else tolerance.abs
        if not abs(x - y) <= allowed:
            differ.append(f"stored {a}, fresh {b}: beyond {allowed:.3g}")
    return differ


def build_figures_without_rendering(monkeypatch) -> None:
    """Make ``Figure.savefig`` write an empty file instead of rendering one.

    For tests of what a command prints and which files it names, where the
    figures are not the point: they are still built (every artist, label and
    legend), and named on disk, but not laid out and rasterised (about half a
    second a figure).  Each such figure is rendered by another test, named
    where this helper is used.
    """
    from matplotlib.figure import Figure

    def touch(self, fname, *args, **kwargs):
        Path(fname).touch()

    monkeypatch.setattr(Figure, "savefig", touch)
