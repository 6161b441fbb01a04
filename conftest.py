"""Shared pytest set-up: the doctests' namespace and temporary folder, the file
notebook kernels run first (``tests/_kernel_startup.py``: figures drawn, no image
made), a deterministic Hypothesis profile, the tolerant comparison of notebook
cells that print numbers from training runs, the order in which pytest-xdist's
workers take the test files, and two savings of CPU that change no outcome: a
garbage collector that walks the heap less often, and expected failures reported
without formatting their tracebacks."""

import doctest
import gc
import os
import shutil
import sys
import tempfile
from pathlib import Path

# The networks here are tiny: BLAS threads only add overhead (and contention on
# a 2-core CI machine).  Set before NumPy loads; notebook kernels inherit it.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
# Notebook kernels (nbval's, and those a test starts) run this file first: a figure
# a cell shows is drawn but gives no image, which nbval would not compare (see there).
os.environ["PYTHONSTARTUP"] = str(Path(__file__).resolve().parent / "tests"
                                  / "_kernel_startup.py")

import matplotlib  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

matplotlib.use("Agg")

# Python's cyclic garbage collector, at its defaults (a collection every 700
# allocations), walks a worker's heap again and again: the modules, NumPy,
# scikit-learn and the 6,000 collected tests.  Collected every 50,000
# allocations, with what collection built frozen (``pytest_collection_finish``
# below), the tests of the unit modules, the estimators and the doctests took
# 68-71 s of CPU instead of 75-79 s.
gc.set_threshold(50_000, 10, 10)

# Deterministic, bounded property tests: the same examples on every run.
settings.register_profile(
    "scratchnet", derandomize=True, deadline=None, max_examples=60, print_blob=True
)
settings.load_profile("scratchnet")

if np.lib.NumpyVersion(np.__version__) >= "2.0.0":
    # Print NumPy scalars as plain numbers in doctests under NumPy 1 and 2 alike.
    np.set_printoptions(legacy="1.25")


@pytest.fixture(scope="session")
def _doctest_tempdir():
    """One folder in the system's temporary folder for the run's doctests, removed
    at its end.  Not in pytest's own tree: that is private to this user, and as
    root the grader's sandbox (``check``'s examples) runs as another uid, which
    must pass through it."""
    folder = tempfile.mkdtemp(prefix="scratchnet-doctests-")
    os.chmod(folder, 0o711)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(autouse=True)
def _doctest_namespace(request, doctest_namespace):
    """Doctests see ``np``; the folders their examples make with ``tempfile``
    (``tempfile.mkdtemp()``) are made in one folder that the run removes, not left
    in the system's temporary folder."""
    doctest_namespace["np"] = np
    if isinstance(getattr(request.node, "dtest", None), doctest.DocTest):
        request.getfixturevalue("monkeypatch").setattr(
            tempfile, "tempdir", request.getfixturevalue("_doctest_tempdir"))


def _tolerances():
    """``tests/_support.py``'s table of tolerant cells (tests/ may not be on the
    path when only ``notebooks/`` is collected)."""
    tests = str(Path(__file__).resolve().parent / "tests")
    if tests not in sys.path:
        sys.path.insert(0, tests)
    import _support

    return _support


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """After nbval runs a notebook cell tagged ``nbval-ignore-output`` that
    ``NOTEBOOK_TOLERANCES`` lists, compare its fresh text outputs with the stored
    ones within the listed tolerance (nbval itself compares the other cells
    digit for digit).  See ``tests/_support.py``."""
    result = yield
    fresh = getattr(item, "test_outputs", None)
    cell = getattr(item, "cell", None)
    if fresh is None or cell is None:  # not an nbval cell, or it did not run
        return result
    if "nbval-ignore-output" not in cell.get("metadata", {}).get("tags", []):
        return result
    support = _tolerances()
    notebook = Path(item.path).stem
    listed = [
        tol
        for (name, marker), tol in support.NOTEBOOK_TOLERANCES.items()
        if name == notebook and marker in cell.source
    ]
    if listed:
        stored, now = (support.output_text(o) for o in (cell.outputs, fresh))
        differ = support.numbers_that_differ(stored, now, listed[0])
        assert not differ, (
            f"{notebook}: a cell's fresh outputs differ from the stored ones beyond "
            f"the tolerance ({listed[0]}):\n" + "\n".join(differ)
        )
    return result


def pytest_collection_finish(session):
    """Leave what collection built (modules, test items) out of every later
    garbage collection: it lives as long as the run."""
    gc.freeze()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_makereport(item, call):
    """An expected failure is reported by its reason: its traceback is cut first.

    A test marked ``xfail`` (no condition, no ``raises``) that fails is reported
    as XFAIL with the marker's reason, and its traceback is never shown; pytest
    formats it all the same, reading every module it passes through (3 s of CPU
    for the nine scikit-learn checks of ``tests/test_estimators.py``).  Here it
    is cut to the test function's own frame, and the exceptions chained to it
    are left out.  ``--runxfail`` keeps it whole.
    """
    marker = item.get_closest_marker("xfail")
    if (call.when != "call" or call.excinfo is None or marker is None or marker.args
            or {"condition", "raises"} & set(marker.kwargs)
            or item.config.option.runxfail):
        return
    tb = call.excinfo.tb
    while tb is not None and tb.tb_frame.f_code.co_filename != str(item.path):
        tb = tb.tb_next
    if tb is not None:
        tb.tb_next = None
    call.excinfo.value.__suppress_context__ = True
    call.excinfo.value.__cause__ = None


# The test command runs on every core (``-n auto --dist loadfile`` in setup.cfg):
# each worker takes a whole file at a time, so a notebook's cells share one kernel
# and a module's fixtures are built once.  Two changes to loadfile's plan:
#
# * the files that read the built documentation are one unit of work, so the site
#   is built once (``tests/_site.py``) and never by two workers into one folder;
# * the slowest units go first (longest processing time first: the short files
#   then fill the gaps), where loadfile would start with the files that hold the
#   most tests and could leave a two-minute notebook for the end.
#
# SLOWEST_FIRST is only an order: a file missing from it runs all the same, later.
SHARED_UNITS = {
    "tests/test_site.py": "tests/test_docs.py",
    "tests/test_handout.py": "tests/test_docs.py",   # the kit's API page
}
# Measured per file (the sum of its tests' durations) in a run of the test command
# on an idle 2-core machine, slowest first, down to 10 s; re-measure when a file
# grows.  The first entry is the documentation's unit (the site's build, its
# browser test and the kit's API page: 130 s).
SLOWEST_FIRST = (
    "tests/test_docs.py",
    "tests/test_exercises_course.py",
    "tests/test_exercises.py",
    "notebooks/07_homework_exercises.ipynb",
    "tests/test_exercises_attacks.py",
    "tests/test_exercises_sandbox.py",
    "notebooks/05_network_learns_posterior.ipynb",
    "notebooks/09_when_the_generative_model_is_unknown.ipynb",
    "notebooks/08_where_networks_learn_the_posterior.ipynb",
    "tests/test_experiments_robust.py",
    "tests/test_estimators.py",
    "notebooks/06_binary_classification.ipynb",
    "notebooks/04_backprop_by_hand.ipynb",
    "tests/test_exercises_mistakes.py",
)

try:
    from xdist.scheduler import LoadFileScheduling
except ImportError:  # pytest-xdist is in the test extra; without it, one process
    LoadFileScheduling = None

if LoadFileScheduling is not None:

    class SlowestFilesFirst(LoadFileScheduling):
        """``--dist loadfile`` with the shared units and the order above."""

        _ordered = False

        def _split_scope(self, nodeid: str) -> str:
            scope = super()._split_scope(nodeid)
            return SHARED_UNITS.get(scope, scope)

        def _assign_work_unit(self, node) -> None:
            if not self._ordered:
                rank = {scope: i for i, scope in enumerate(SLOWEST_FIRST)}
                order = sorted(self.workqueue, key=lambda s: rank.get(s, len(rank)))
                for scope in order:
                    self.workqueue.move_to_end(scope)
                self._ordered = True
            super()._assign_work_unit(node)

    def pytest_xdist_make_scheduler(config, log):
        """Schedule ``--dist loadfile`` with :class:`SlowestFilesFirst`."""
        if config.getvalue("dist") == "loadfile":
            return SlowestFilesFirst(config, log)
        return None
