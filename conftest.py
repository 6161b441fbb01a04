"""Shared pytest set-up: doctest namespace and a deterministic Hypothesis profile."""

import os

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
