"""Helpers shared by several test files (not tests themselves)."""

import ast

import numpy as np

# The modules in reading order: each may import only those before it.  A module
# of a subpackage is named with a dot ("plotting.style"); a subpackage's own
# ``__init__`` comes after its modules, since it re-exports them.
CHAPTERS = [
    "_validation",
    "_shift",
    "_network_checks",
    "softmax",
    "_loss_common",
    "_loss_layout",
    "losses",
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
    "batches",
    "fitting",
    "datasets",
    "train",
    "temperature",
    "metrics",
    "estimators",
    "fast.kernels",
    "fast.params",
    "fast.mlp",
    "fast.objectives",
    "fast.streams",
    "fast.optim",
    "fast.ensemble",
    "fast.training",
    "fast",
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
    "experiments.digits",
    "experiments.real",
    "experiments",
    "experiments.cli",
    "exercises.catalogue",
    "exercises.probes",
    "exercises.protocol",
    "exercises.diagnoses",
    "exercises.remote",
    "exercises.reaper",
    "exercises.sides",
    "exercises.layout",
    "exercises.docstrings",
    "exercises.key_scores",
    "exercises.key_models",
    "exercises.own",
    "exercises.source",
    "exercises.notebook",
    "exercises.handout",
    "exercises.generic",
    "exercises.checks_scores",
    "exercises.checks_layers",
    "exercises.checks_models",
    "exercises.analysis",
    "exercises.child",
    "exercises.checking",
    "exercises.report",
    "exercises.assignment",
    "exercises.grader",
    "exercises.course",
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
