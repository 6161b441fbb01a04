"""Shared pytest set-up: doctest namespace and a deterministic Hypothesis profile."""

import matplotlib
import numpy as np
import pytest
from hypothesis import settings

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
