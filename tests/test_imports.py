"""Every package a test imports is installed by the README's test command.

``python -m pip install -e ".[test]"`` installs the runtime dependencies and the
``test`` extra of setup.cfg, and nothing else.  A test module that imports a
package from neither (SciPy, once) passes on a machine where someone installed
it by hand and fails on a fresh one; a package that only some machines have
(PyTorch) must be imported through ``pytest.importorskip``, so that the test
skips with a reason instead.  Here every import in ``tests/`` and ``conftest.py``
is read with :mod:`ast` and traced to the distribution that provides it.
"""

import ast
import configparser
import re
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TEST_FILES = [*sorted((ROOT / "tests").glob("*.py")), ROOT / "conftest.py"]
LOCAL = {path.stem for path in (ROOT / "tests").glob("*.py")} | {"scratchnet", "conftest"}


def _requirement_names(text):
    """Distribution names of a setup.cfg requirement list, normalised (PEP 503)."""
    names = set()
    for line in text.strip().splitlines():
        name = re.match(r"[A-Za-z0-9._-]+", line.strip()).group(0)
        names.add(re.sub(r"[-_.]+", "-", name).lower())
    return names


def _installed_by_the_test_command():
    setup = configparser.ConfigParser()
    setup.read(ROOT / "setup.cfg")
    return (_requirement_names(setup["options"]["install_requires"])
            | _requirement_names(setup["options.extras_require"]["test"]))


def _imports(path):
    """(top-level name, line) of every absolute import; and the importorskip'd names."""
    imported, skipped = [], set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            imported += [(alias.name.split(".")[0], node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            imported.append((node.module.split(".")[0], node.lineno))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "importorskip" and node.args
              and isinstance(node.args[0], ast.Constant)):
            skipped.add(node.args[0].value.split(".")[0])
    return imported, skipped


def test_the_scan_sees_imports_and_importorskip(tmp_path):
    path = tmp_path / "t.py"
    path.write_text("import a.b\nfrom c import d\nfrom . import e\n"
                    "def f():\n    import g\n    h = pytest.importorskip('h.i')\n")
    imported, skipped = _imports(path)
    assert imported == [("a", 1), ("c", 2), ("g", 5)] and skipped == {"h"}


@pytest.fixture(scope="module")
def allowed():
    return _installed_by_the_test_command()


@pytest.fixture(scope="module")
def providers():
    """Top-level import name -> distributions, read once: scanning every installed
    distribution's file list takes about 0.4 s."""
    return packages_distributions()


@pytest.mark.skipif(sys.version_info < (3, 10), reason="needs sys.stdlib_module_names")
@pytest.mark.parametrize("path", TEST_FILES, ids=lambda p: p.name)
def test_every_import_is_installed_by_the_test_extra_or_skipped(path, allowed, providers):
    imported, skipped = _imports(path)
    missing = []
    for name, line in imported:
        if name in sys.stdlib_module_names or name in LOCAL or name in skipped:
            continue
        dists = {re.sub(r"[-_.]+", "-", d).lower() for d in providers.get(name, [])}
        if not dists & allowed:
            missing.append(f"{path.name}:{line} imports {name!r} (from "
                           f"{sorted(dists) or 'no installed distribution'})")
    assert not missing, (
        "imported by a test but installed neither by numpy/matplotlib nor by the "
        "'test' extra: add it to the extra or use pytest.importorskip:\n  "
        + "\n  ".join(missing))
