"""Shared pytest set-up: doctest namespace, a deterministic Hypothesis profile, and
the tolerant comparison of notebook cells that print numbers from training runs."""

import os
import sys
from pathlib import Path

# The networks here are tiny: BLAS threads only add overhead (and contention on
# a 2-core CI machine).  Set before NumPy loads; notebook kernels inherit it.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import matplotlib  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

matplotlib.use("Agg")

# Deterministic, bounded property tests: the same examples on every run.
settings.register_profile(
    "scratchnet", derandomize=True, deadline=None, max_examples=60, print_blob=True
)
settings.load_profile("scratchnet")

if np.lib.NumpyVersion(np.__version__) >= "2.0.0":
    # Print NumPy scalars as plain numbers in doctests under NumPy 1 and 2 alike.
    np.set_printoptions(legacy="1.25")


@pytest.fixture(autouse=True)
def _doctest_numpy(doctest_namespace):
    doctest_namespace["np"] = np


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
