"""No private name is used outside the module that defines it (issue 23).

What modules share is a public name with a docstring; it may live in a module
whose own name starts with ``_`` (``scratchnet._validation``,
``scratchnet.plotting._shared``).  The rule, checked on every module under
``scratchnet/`` with :mod:`ast`:

* a *private name* is an identifier that starts with ``_`` and is not a dunder
  (``__init__``, ``__all__``, ``__name__`` are fine);
* **imports**: ``from <scratchnet module> import _name`` is a violation unless
  ``_name`` is itself a module (``from . import _quadrature`` imports a private
  module, whose public names may then be used);
* **attributes**: ``obj._name`` is a violation when the module never defines
  ``_name`` (as a function, class, assignment target, attribute assignment such
  as ``self._name = ...``, or argument), or when ``obj`` starts from a name the
  module imported (``quadrature._x``, ``mlp.MLP._predict_logits``): that reaches
  into another module.  So ``result._slice`` or ``self._check_x`` inherited from
  another module's class is a violation, and ``other._cache`` on another
  instance of a class defined here is not.
* **hooks**: a base class calling ``self._hook()`` that a subclass in another
  module overrides (``bayes.GenerativeModel._expectation_rule``, defined again by
  ``gaussian.GaussianClasses``) is one class family sharing a private
  protocol: both modules define the name, so the rule allows it, and the hooks
  stay private (they are for subclasses, not for callers).

Code that the homework kit generates (``scratchnet.exercises.source``) is
checked by ``test_the_homework_kit_imports_no_private_library_names``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "scratchnet"

# Known exceptions, each (file relative to scratchnet/, the code as ast.unparse
# writes it), with the reason beside it.
ALLOWED: set = {
    # the standard library's public way for a forked child to end (the name
    # predates the convention): sys.exit would unwind into the server's loop
    ("exercises/forkserver.py", "os._exit"),
}


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _defined_names(tree: ast.AST) -> set:
    """Every name the module defines: functions, classes, targets, attributes set."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store,
                                                                       ast.Del)):
            names.add(node.attr)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return names


def _root(node: ast.AST) -> ast.AST:
    """The name an attribute chain starts from (``a`` in ``a.b(c)[0]._d``)."""
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node


def _imported_from(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute module an ``ImportFrom`` reads from."""
    if not node.level:
        return node.module or ""
    parts = module.split(".") if is_package else module.split(".")[:-1]
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join(parts + ([node.module] if node.module else []))


def private_uses(source: str, module: str, is_package: bool = False) -> list:
    """(line, code) of every private name the module uses that it does not own."""
    tree = ast.parse(source)
    defined = _defined_names(tree)
    imported = {(alias.asname or alias.name).split(".")[0]
                for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                for alias in node.names}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            origin = _imported_from(node, module, is_package)
            if origin.split(".")[0] != "scratchnet":
                continue
            found += [(node.lineno, f"from {origin} import {alias.name}")
                      for alias in node.names
                      if _is_private(alias.name) and f"{origin}.{alias.name}" not in MODULES]
        elif isinstance(node, ast.Attribute) and _is_private(node.attr):
            root = _root(node.value)
            from_import = isinstance(root, ast.Name) and root.id in imported
            if node.attr not in defined or from_import:
                found.append((node.lineno, ast.unparse(node)))
    return sorted(set(found))


def all_private_uses() -> list:
    """(file relative to scratchnet/, line, code) over the whole package."""
    return [(str(path.relative_to(PACKAGE)), line, code)
            for module, path in MODULES.items()
            for line, code in private_uses(path.read_text(encoding="utf-8"), module,
                                           path.name == "__init__.py")]


@pytest.fixture(scope="module")
def package_uses() -> list:
    """:func:`all_private_uses`, the package parsed once for both tests below."""
    return all_private_uses()


def test_no_private_name_is_used_outside_its_module(package_uses):
    found = [use for use in package_uses if (use[0], use[2]) not in ALLOWED]
    assert not found, "private names used outside their module:\n" + "\n".join(
        f"  scratchnet/{file}:{line}: {code}" for file, line, code in found)


def test_the_allow_list_names_only_uses_that_still_exist(package_uses):
    present = {(file, code) for file, _, code in package_uses}
    assert ALLOWED <= present, f"fixed, remove from ALLOWED: {ALLOWED - present}"


@pytest.mark.parametrize("source, expected", [
    ("from ._validation import as_float_array", []),          # a private module
    ("from . import _quadrature as quadrature\nquadrature.mixture_rule", []),
    ("from .plotting.style import _check_ax",
     [(1, "from scratchnet.plotting.style import _check_ax")]),
    ("def f(result):\n    return result._slice()", [(2, "result._slice")]),
    ("from . import mlp\nmlp.MLP._predict_logits", [(2, "mlp.MLP._predict_logits")]),
    ("class A:\n    def f(self):\n        return self._g()", [(3, "self._g")]),
    ("class A:\n    def _g(self):\n        pass\n    def f(self, other):\n"
     "        return self._g() + other._g()", []),
    ("class A:\n    def __init__(self):\n        self.__dict__.clear()", []),
    ("import numpy as np\nnp._NoValue", [(2, "np._NoValue")]),
])
def test_the_rule_on_small_examples(source, expected):
    assert private_uses(source, "scratchnet.losses") == expected


def test_the_homework_kit_imports_no_private_library_names(tmp_path):
    """The student edition and the answer key copy chapter bodies: the names they
    import from scratchnet are public (private modules allowed); the chapters'
    private helpers the bodies call are written out in the package."""
    from scratchnet.exercises import make

    make([], tmp_path / "kit" / "hw")
    make([], tmp_path / "key" / "hw", solutions=True)
    found = set()
    for path in sorted(tmp_path.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                    "scratchnet"):
                found |= {f"{node.module}.{alias.name}" for alias in node.names
                          if _is_private(alias.name)
                          and f"{node.module}.{alias.name}" not in MODULES}
    assert found <= ALLOWED_IN_KIT, f"private names in the kit: {found - ALLOWED_IN_KIT}"


# None: the kit writes out the chapter's private helpers that its code calls
# (scratchnet.exercises.source, given code) instead of importing them.
ALLOWED_IN_KIT: set = set()
