"""How much code a reader follows from a chapter function down to its arithmetic.

For each function below: the function itself and every scratchnet function it
calls (or passes along), transitively, each counted once, in code lines (not
docstrings, comments or blank lines).  Argument validation is left out: the
module ``_validation`` and functions named ``check_*`` or ``as_*`` (private or
not: ``_check_*`` too); each chapter function makes one such call, at the top,
which returns the checked arguments and transforms nothing.

The budgets are issue 39's: the core ideas read as their formulas.  Before it,
by this count: ``cross_entropy`` 79 lines through 12 functions,
``cross_entropy_grad`` 56, ``nll_loss`` 44, ``kl_divergence`` 49,
``GaussianClasses.log_posterior`` 47, ``logsumexp`` 29, ``entropy`` 28,
``two_gaussian_posterior`` 26, ``log_softmax`` 25, ``softmax`` 20,
``TwoLayerMLP.backward`` 17, ``linear_backward`` 9.  Print today's numbers with
``PYTHONPATH=. python tests/test_reading_length.py [-v]``.
"""

import ast
import importlib
import inspect
import re
import sys
import textwrap
from pathlib import Path

import pytest
from _support import code_lines

#: (module, qualified name) of the functions a student reads, and each one's budget
#: in reading lines (issue 39); the rest of the path to training keeps the old 80.
FUNCTIONS = [
    ("scratchnet.softmax", "softmax", 12),
    ("scratchnet.softmax", "log_softmax", 12),
    ("scratchnet.softmax", "logsumexp", 12),
    ("scratchnet.information", "entropy", 12),
    ("scratchnet.losses", "cross_entropy", 15),
    ("scratchnet.losses", "cross_entropy_grad", 15),
    ("scratchnet.information", "kl_divergence", 15),
    ("scratchnet.two_gaussians", "two_gaussian_posterior", 15),
    ("scratchnet.losses", "nll_loss", 10),
    ("scratchnet.layers", "linear_backward", 10),
    ("scratchnet.gaussian", "GaussianClasses.log_posterior", 25),
    ("scratchnet.mlp", "TwoLayerMLP.backward", 20),
    ("scratchnet.optim", "Adam.update", 80),
    ("scratchnet.train", "train_step", 80),
]


def code_lines_of(func) -> int:
    """Code lines of one function: not blank, not comments, not docstrings."""
    lines, _ = inspect.getsourcelines(func)
    return code_lines(textwrap.dedent("".join(lines)))


def _is_validation(func) -> bool:
    name = func.__name__.removeprefix("_")  # a private check is a check too
    return (func.__module__ == "scratchnet._validation"
            or name.startswith("check_") or name.startswith("as_"))


def _scratchnet_function(obj):
    """``obj`` as a scratchnet function to read (a class: its ``__init__``), or None."""
    if inspect.isclass(obj):
        obj = obj.__dict__.get("__init__")
    obj = inspect.unwrap(obj) if callable(obj) else obj
    if not inspect.isfunction(obj):
        return None
    if not obj.__module__.startswith("scratchnet"):
        return None
    return None if _is_validation(obj) else obj


def _resolve(node, func, owner):
    """The object an ``ast.Name`` or ``ast.Attribute`` names inside ``func``."""
    if isinstance(node, ast.Name):
        if node.id in func.__globals__:
            return func.__globals__[node.id]
        return getattr(sys.modules["builtins"], node.id, None)
    if isinstance(node, ast.Attribute):
        if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            return None if owner is None else getattr(owner, node.attr, None)
        base = _resolve(node.value, func, owner)
        if base is None or not (inspect.ismodule(base) or inspect.isclass(base)):
            return None
        return getattr(base, node.attr, None)
    return None


def _owner(func):
    """The class a method is defined in, or None."""
    parts = func.__qualname__.split(".")
    if len(parts) < 2 or "<locals>" in parts:
        return None
    obj = sys.modules[func.__module__]
    for part in parts[:-1]:
        obj = getattr(obj, part, None)
    return obj if inspect.isclass(obj) else None


def callees(func) -> list:
    """The scratchnet functions ``func`` names (calls or passes), validation left out."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    owner = _owner(func)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Name, ast.Attribute)):
            target = _scratchnet_function(_resolve(node, func, owner))
            if target is not None and target is not func:
                found.append(target)
    return found


def reading(func) -> dict:
    """``{"module.qualname": code lines}`` of ``func`` and all it reaches."""
    seen = {}
    todo = [func]
    while todo:
        f = todo.pop()
        key = f"{f.__module__}.{f.__qualname__}"
        if key in seen:
            continue
        seen[key] = code_lines_of(f)
        todo.extend(callees(f))
    return seen


def _function(module: str, qualname: str):
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("module, qualname, budget", FUNCTIONS,
                         ids=[q for _, q, _ in FUNCTIONS])
def test_a_chapter_function_reads_within_its_budget(module, qualname, budget):
    path = reading(_function(module, qualname))
    total = sum(path.values())
    detail = ", ".join(f"{k} {v}" for k, v in sorted(path.items()))
    assert total <= budget, f"{qualname}: {total} lines > {budget} ({detail})"


@pytest.mark.parametrize("module, qualname", [f[:2] for f in FUNCTIONS[:12]],
                         ids=[q for _, q, _ in FUNCTIONS[:12]])
def test_a_chapter_function_validates_once_at_the_top(module, qualname):
    # The first statement after the docstring is the one validation call (a
    # method of a model has its arguments checked inside the first call).
    func = _function(module, qualname)
    body = ast.parse(textwrap.dedent(inspect.getsource(func))).body[0].body
    body = body[1:] if ast.get_docstring(ast.parse(textwrap.dedent(
        inspect.getsource(func))).body[0]) else body
    checks = [n for n in ast.walk(ast.Module(body=body, type_ignores=[]))
              if isinstance(n, ast.Call) and _is_validation_call(n, func)]
    if "." in qualname:
        assert len(checks) <= 1
        return
    assert len(checks) == 1, f"{qualname}: {len(checks)} validation calls"
    first = body[0].value if isinstance(body[0], (ast.Assign, ast.Expr)) else None
    assert first is checks[0], f"{qualname}: the validation call is not the first line"


def _is_validation_call(node, func) -> bool:
    target = _resolve(node.func, func, _owner(func))
    return (inspect.isfunction(target) and _is_validation(target)
            and target.__name__ != "unwrap")  # a 0-d result as a scalar: no check


def test_train_reads_as_its_loop():
    # issue 39: the body of train (its docstring and signature aside) is the loop
    # and its two ends; the set-up, the snapshots, early stopping and the
    # progress line are collaborators with names.
    from scratchnet.train import train
    node = ast.parse(textwrap.dedent(inspect.getsource(train))).body[0]
    body = node.body[1:]  # after the docstring
    lines = textwrap.dedent(inspect.getsource(train)).splitlines()
    text = textwrap.dedent("\n".join(lines[body[0].lineno - 1:body[-1].end_lineno]))
    assert code_lines(text) <= 30  # 77 before issue 39
    loops = [n for n in ast.walk(node) if isinstance(n, (ast.For, ast.While))]
    assert len(loops) == 1 and code_lines(ast.unparse(loops[0])) <= 15


def test_the_count_follows_calls_and_skips_validation():
    from scratchnet import losses
    path = reading(losses.cross_entropy)
    assert "scratchnet.losses.cross_entropy" in path
    assert "scratchnet.softmax.log_softmax" in path  # followed into the chapter before
    assert not any(k.startswith("scratchnet._validation") for k in path)
    assert not any(k.split(".")[-1].startswith(("check_", "as_")) for k in path)


def test_the_log_posterior_is_bayes_rule_in_its_own_methods():
    # log P(c|x) = log P(x, c) - log P(x): the body calls the two methods
    # beside it, and nothing else of scratchnet but the range check.
    from scratchnet.gaussian import GaussianClasses
    called = {f.__name__ for f in callees(GaussianClasses.log_posterior)}
    assert called == {"log_joint", "log_evidence"}
    source = inspect.getsource(GaussianClasses.log_posterior)
    assert "check_resolved(" in source and "log_joint_minus" not in source


# --- the proof on the reading path (issue 39, item 4) -----------------------------
def test_the_chapters_of_the_argument_link_the_derivation():
    import scratchnet.bayes
    import scratchnet.information
    import scratchnet.losses
    for module in (scratchnet.information, scratchnet.bayes, scratchnet.losses):
        assert "docs/derivation.md" in module.__doc__, module.__name__


def test_the_softmax_jacobian_is_derived_once_and_cited_elsewhere():
    """``d log q_i / d f_k = delta_ik - q_k`` is derived in cross_entropy_grad; every
    other docstring that states it names where it is derived."""
    import scratchnet
    from scratchnet import losses
    assert "derived here once" in losses.cross_entropy_grad.__doc__
    stated = re.compile(r"\\delta_\{ik\} - q_")
    for path in sorted(Path(scratchnet.__file__).parent.glob("*.py")):
        if path.name == "losses.py":
            continue
        for doc in re.findall(r'r?"""(.*?)"""', path.read_text(), re.S):
            if stated.search(doc):
                assert "derived in :func:`scratchnet.losses.cross_entropy_grad`" in \
                    " ".join(doc.split()), path.name


@pytest.mark.parametrize("module", ["softmax", "losses", "information"])
def test_public_functions_come_before_private_helpers(module):
    tree = ast.parse(Path(importlib.import_module(f"scratchnet.{module}").__file__)
                     .read_text())
    names = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    first_private = next((i for i, n in enumerate(names) if n.startswith("_")),
                         len(names))
    assert all(n.startswith("_") for n in names[first_private:]), names


if __name__ == "__main__":  # print the numbers: python tests/test_reading_length.py
    for module, qualname, budget in FUNCTIONS:
        path = reading(_function(module, qualname))
        print(f"{qualname:32s} {sum(path.values()):4d} (budget {budget:2d}) "
              f"in {len(path)} functions")
        if "-v" in sys.argv:
            for k, v in sorted(path.items()):
                print(f"      {v:4d} {k}")
