"""The package as a whole: its public API, its docstrings and its import order."""

import ast
import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import pytest
from _support import CHAPTERS

import scratchnet as sn

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "scratchnet"

ORDER = CHAPTERS


def test_version_is_a_string():
    assert isinstance(sn.__version__, str)
    assert sn.__version__.count(".") == 2


def test_every_name_in_all_exists():
    missing = [name for name in sn.__all__ if not hasattr(sn, name)]
    assert missing == []


def test_every_module_is_in_the_reading_order():
    modules = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__"}
    assert modules == set(ORDER)


def _imported_siblings(path: Path) -> set:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                names.add(node.module.split(".")[0])
            else:
                names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
            "scratchnet."
        ):
            names.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("scratchnet."):
                    names.add(alias.name.split(".")[1])
    return names


@pytest.mark.parametrize("module", ORDER)
def test_imports_flow_one_way(module):
    """Each module imports only modules that come before it (no cycles)."""
    allowed = set(ORDER[: ORDER.index(module)])
    imported = _imported_siblings(PACKAGE / f"{module}.py")
    assert imported <= allowed, f"{module} imports later modules: {imported - allowed}"


def _public_objects():
    """Every public function, class and method, in the module that defines it."""
    found = []
    for module_name in ORDER:
        if module_name == "_validation":
            continue
        module = importlib.import_module(f"scratchnet.{module_name}")
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
                continue
            if inspect.isfunction(obj):
                found.append((f"{module_name}.{name}", obj))
            elif inspect.isclass(obj):
                found.append((f"{module_name}.{name}", obj))
                for attr, member in vars(obj).items():
                    if not attr.startswith("_") and inspect.isfunction(member):
                        found.append((f"{module_name}.{name}.{attr}", member))
    return found


def _takes_arguments(func) -> bool:
    params = list(inspect.signature(func).parameters)
    return bool(params[1:] if params[:1] == ["self"] else params)


@pytest.mark.parametrize("name, obj", _public_objects(), ids=lambda v: str(v))
def test_public_docstrings_follow_numpydoc(name, obj):
    """Parameters (when there are any), Returns, and Examples that run as doctests."""
    doc = inspect.getdoc(obj) or ""
    assert "\nExamples\n---" in doc, f"{name} lacks an Examples section"
    if inspect.isclass(obj):
        assert "\nParameters\n---" in doc or "\nAttributes\n---" in doc, (
            f"{name} lacks a Parameters (or Attributes) section"
        )
        return
    if _takes_arguments(obj):
        assert "\nParameters\n---" in doc, f"{name} lacks a Parameters section"
    assert "\nReturns\n---" in doc or "\nYields\n---" in doc, f"{name} lacks Returns"
    assert "return" in obj.__annotations__, f"{name} has no return type hint"


@pytest.mark.parametrize("module", [m for m in ORDER if not m.startswith("_")])
def test_every_module_opens_with_its_idea(module):
    tree = ast.parse((PACKAGE / f"{module}.py").read_text())
    doc = ast.get_docstring(tree)
    assert doc and len(doc.splitlines()) >= 3, f"{module} needs a module docstring"
    assert not doc.startswith("STUB"), f"{module} is still a stub"


# Chapters short enough to read in one sitting: at most 500 lines, at most 250
# of them code (outside docstrings, comments and blank lines).  Modules join
# this list as they are split by idea.
SIZED = ["_quadrature", "bayes", "gaussian"]


def _code_lines(source: str) -> int:
    """Lines that are not blank, not comments and not inside a docstring."""
    docstrings = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)):
            first = node.body[0] if node.body else None
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                docstrings.update(range(first.lineno, first.end_lineno + 1))
    return sum(1 for i, line in enumerate(source.splitlines(), 1)
               if line.strip() and not line.strip().startswith("#")
               and i not in docstrings)


@pytest.mark.parametrize("module", SIZED)
def test_chapters_are_short(module):
    source = (PACKAGE / f"{module}.py").read_text()
    assert len(source.splitlines()) <= 500, f"{module} has more than 500 lines"
    assert _code_lines(source) <= 250, f"{module} has more than 250 lines of code"


def test_import_does_not_load_matplotlib():
    code = "import sys, scratchnet; print('matplotlib' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"


def test_ruff_is_clean():
    pytest.importorskip("ruff")
    out = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", str(ROOT)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stdout + out.stderr
