"""The test command runs on every core and builds the documentation once.

``setup.cfg`` gives pytest ``-n auto --dist loadfile`` (pytest-xdist, in the test
extra): each worker takes a whole file at a time.  The root ``conftest.py`` puts
every file that reads the built site into ``tests/test_docs.py``'s unit of work
(``tests/_site.py`` builds it once per process, so two workers would build it
twice, 90 s each) and hands out the slowest units first.
"""

from __future__ import annotations

import configparser
import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytest.importorskip("xdist")


def _conftest():
    spec = importlib.util.spec_from_file_location("root_conftest", ROOT / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _setup_cfg() -> configparser.ConfigParser:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg", encoding="utf-8")
    return config


def test_the_test_extra_holds_xdist_and_pytest_uses_every_core():
    config = _setup_cfg()
    extra = config["options.extras_require"]["test"].split()
    assert any(re.match(r"pytest-xdist\b", line) for line in extra), extra
    addopts = config["tool:pytest"]["addopts"].split()
    assert "-n" in addopts and addopts[addopts.index("-n") + 1] == "auto", addopts
    assert "--dist" in addopts and addopts[addopts.index("--dist") + 1] == "loadfile"


def test_every_file_that_reads_the_built_site_shares_the_docs_unit():
    """A file importing ``tests/_site.py`` outside the docs unit would build the
    site again on the other worker (the kit's API page test did: 441 s of 3,378)."""
    conftest = _conftest()
    imports_site = re.compile(r"^\s*(from _site import|import _site\b)", re.M)
    readers = sorted(
        f"tests/{path.name}"
        for path in (ROOT / "tests").glob("test_*.py")
        if imports_site.search(path.read_text(encoding="utf-8"))
    )
    assert "tests/test_docs.py" in readers and len(readers) >= 2, readers
    scheduler = conftest.SlowestFilesFirst.__new__(conftest.SlowestFilesFirst)
    units = {reader: scheduler._split_scope(f"{reader}::test_x") for reader in readers}
    assert set(units.values()) == {"tests/test_docs.py"}, units
    # any other file stays a unit of its own
    assert scheduler._split_scope("tests/test_softmax.py::test_x[1]") == \
        "tests/test_softmax.py"
    assert scheduler._split_scope("notebooks/04_backprop_by_hand.ipynb::Cell 3") == \
        "notebooks/04_backprop_by_hand.ipynb"


def test_the_slowest_first_order_names_files_that_exist():
    conftest = _conftest()
    listed = [*conftest.SLOWEST_FIRST, *conftest.SHARED_UNITS, *conftest.SHARED_UNITS.values()]
    assert [name for name in listed if not (ROOT / name).is_file()] == []
    assert len(set(conftest.SLOWEST_FIRST)) == len(conftest.SLOWEST_FIRST)


def test_the_queue_is_handed_out_slowest_first():
    """The order is applied to loadfile's queue (which starts with the files that
    hold the most tests) before the first unit goes out."""
    from collections import OrderedDict

    conftest = _conftest()
    scheduler = conftest.SlowestFilesFirst.__new__(conftest.SlowestFilesFirst)
    first, second = conftest.SLOWEST_FIRST[:2]
    scheduler.workqueue = OrderedDict(
        (scope, {f"{scope}::t": False})
        for scope in ("tests/test_softmax.py", second, "tests/test_losses.py", first)
    )
    sent = []

    class Node:
        def send_runtest_some(self, indexes):
            sent.append(indexes)

    node = Node()
    scheduler.assigned_work = {}
    scheduler.registered_collections = {node: [f"{s}::t" for s in scheduler.workqueue]}
    scheduler._assign_work_unit(node)
    assert list(scheduler.workqueue) == [second, "tests/test_softmax.py",
                                         "tests/test_losses.py"]
    assert list(scheduler.assigned_work[node]) == [first]
