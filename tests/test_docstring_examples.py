"""Every public docstring's examples run as written in a fresh interpreter.

The doctests of the test command run with ``np`` in their namespace
(``conftest.py``), so an example that uses ``np`` without importing it passes
there and raises ``NameError`` when a reader pastes it into a prompt (issue 41:
``gradient_check``, ``fit_temperature``, ``GaussianClasses``).  This test reads
every example of every docstring of the package and checks that the names the
test command injects (``np``) are bound before they are used, by the examples
themselves (an import, an assignment), as in a fresh interpreter.  (Other
names a module's own examples call, its functions, come from the module's
namespace, which doctest gives them as Python's ``doctest`` does.)

The answer key's modules (``exercises.reference_scores``, ``exercises.reference_models``)
are left out: their examples are a hand-out's, run inside the student's module,
where the function they call is defined and ``np`` imported.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import pkgutil

import pytest

import scratchnet

HANDOUT_EXAMPLES = {"scratchnet.exercises.reference_scores",
                    "scratchnet.exercises.reference_models"}


def _modules() -> list:
    names = ["scratchnet"] + [m.name for m in pkgutil.walk_packages(
        scratchnet.__path__, "scratchnet.") if m.name not in HANDOUT_EXAMPLES]
    return [n for n in names if not n.endswith("__main__")]


def _bound(node: ast.AST) -> set:
    """The names a statement binds (assignments, imports, loops, definitions)."""
    names = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)):
            names.add(sub.id)
        elif isinstance(sub, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in sub.names}
        elif isinstance(sub, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            names.add(sub.name)
        elif isinstance(sub, ast.arg):
            names.add(sub.arg)
        elif isinstance(sub, ast.ExceptHandler) and sub.name:
            names.add(sub.name)
    return names


INJECTED = {"np"}  # conftest.py's doctest namespace


def unbound_names(test: doctest.DocTest) -> list:
    """Injected names the examples read before anything binds them."""
    known: set = set()
    missing = []
    for example in test.examples:
        try:
            tree = ast.parse(example.source)
        except SyntaxError:
            continue
        known |= _bound(tree)  # a name bound in the statement (a loop, a lambda)
        for sub in ast.walk(tree):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) \
                    and sub.id in INJECTED and sub.id not in known:
                missing.append(sub.id)
    return sorted(set(missing))


def _tests() -> list:
    finder = doctest.DocTestFinder(exclude_empty=True)
    found = []
    for name in _modules():
        module = importlib.import_module(name)
        for test in finder.find(module, name, globs={}):
            if test.examples:
                found.append(test)
    return found


def test_the_check_finds_a_missing_import():
    parser = doctest.DocTestParser()
    bad = parser.get_doctest(">>> np.zeros(2)\n", {}, "bad", None, 0)
    good = parser.get_doctest(">>> import numpy as np\n>>> np.zeros(2)\n", {}, "good",
                              None, 0)
    assert unbound_names(bad) == ["np"] and unbound_names(good) == []


@pytest.mark.parametrize("test", _tests(), ids=lambda t: t.name)
def test_a_docstring_example_runs_in_a_fresh_interpreter(test):
    assert unbound_names(test) == [], (
        f"{test.name}: its examples use {unbound_names(test)} without importing or "
        "defining them")
