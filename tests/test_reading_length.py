"""How much code a reader follows from a chapter function down to its arithmetic.

For each function below: the function itself and every scratchnet function it
calls (or passes along), transitively, each counted once, in code lines (not
docstrings, comments or blank lines).  Argument validation is left out: the
module ``_validation`` and functions named ``check_*`` or ``as_*`` (private or
not: ``_check_*`` too).  The target of issue 23: at most 80 lines each.

Before issue 23, by this count: ``cross_entropy`` and ``cross_entropy_grad``
211 lines in 17 functions (the fused in-place kernel and its helpers),
``nll_loss`` 135 (222 and 146 if the private ``_as_scores`` and
``_check_*`` were counted as reading).  Print today's numbers with
``PYTHONPATH=. python tests/test_reading_length.py [-v]``.
"""

import ast
import importlib
import inspect
import sys
import textwrap

import pytest
from _support import code_lines

MAX_READING_LINES = 80

#: (module, qualified name) of the functions a student reads.
FUNCTIONS = [
    ("scratchnet.softmax", "softmax"),
    ("scratchnet.softmax", "log_softmax"),
    ("scratchnet.softmax", "logsumexp"),
    ("scratchnet.losses", "cross_entropy"),
    ("scratchnet.losses", "cross_entropy_grad"),
    ("scratchnet.losses", "nll_loss"),
    ("scratchnet.information", "entropy"),
    ("scratchnet.information", "kl_divergence"),
    ("scratchnet.gaussian", "GaussianClasses.log_posterior"),
    ("scratchnet.layers", "linear_backward"),
    ("scratchnet.mlp", "TwoLayerMLP.backward"),
    ("scratchnet.optim", "Adam.update"),
    ("scratchnet.train", "train_step"),
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


@pytest.mark.parametrize("module, qualname", FUNCTIONS,
                         ids=[q for _, q in FUNCTIONS])
def test_a_chapter_function_reads_in_at_most_80_lines(module, qualname):
    path = reading(_function(module, qualname))
    total = sum(path.values())
    detail = ", ".join(f"{k} {v}" for k, v in sorted(path.items()))
    assert total <= MAX_READING_LINES, f"{qualname}: {total} lines ({detail})"


def test_the_count_follows_calls_and_skips_validation():
    from scratchnet import losses
    path = reading(losses.nll_loss)
    assert "scratchnet.losses.nll_loss" in path
    assert not any(k.startswith("scratchnet._validation") for k in path)
    assert not any(k.split(".")[-1].startswith(("check_", "as_")) for k in path)
    assert len(path) >= 2  # nll_loss calls at least one helper


def test_the_log_posterior_is_bayes_rule_in_its_own_methods():
    # log P(c|x) = log P(x, c) - log P(x): the body calls the two methods
    # beside it, and nothing else of scratchnet but the range check.
    from scratchnet.gaussian import GaussianClasses
    called = {f.__name__ for f in callees(GaussianClasses.log_posterior)}
    assert called == {"log_joint", "log_evidence"}
    source = inspect.getsource(GaussianClasses.log_posterior)
    assert "check_resolved(" in source and "log_joint_minus" not in source


if __name__ == "__main__":  # print the numbers: python tests/test_reading_length.py
    for module, qualname in FUNCTIONS:
        path = reading(_function(module, qualname))
        print(f"{qualname:32s} {sum(path.values()):4d}  in {len(path)} functions")
        if "-v" in sys.argv:
            for k, v in sorted(path.items()):
                print(f"      {v:4d} {k}")
