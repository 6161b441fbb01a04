r"""Worker processes for many small runs: how many, and one BLAS thread each.

The networks of the experiments are small (matrices of a few hundred
entries), so a run gains nothing from BLAS threads; when several runs go to
worker processes at once, threads only compete for the same cores.  The
command line and :func:`scratchnet.experiments.sweep` therefore set up their
local process pools the same way: one worker per core this process may use
(:func:`cpu_count`), each started with one BLAS thread
(:func:`single_threaded_blas`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

__all__ = ["BLAS_THREAD_VARIABLES", "cpu_count", "single_threaded_blas"]

#: The environment variables that set the BLAS thread count of a new process.
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def cpu_count() -> int:
    """The number of cores this process may run on.

    Returns
    -------
    int
        The size of the process's CPU affinity set where the system reports
        one (Linux: a container or ``taskset`` limit counts), else
        ``os.cpu_count()``, and 1 when even that is unknown.  At least 1.

    Examples
    --------
    >>> import scratchnet as sn
    >>> sn.experiments.cpu_count() >= 1
    True
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@contextlib.contextmanager
def single_threaded_blas() -> Iterator[None]:
    """Within the block, processes started get one BLAS thread each.

    Sets each of :data:`BLAS_THREAD_VARIABLES` to ``"1"`` unless the user set
    it already (a value given is kept), and restores the environment on
    leaving.  It acts on worker processes started inside the block, not on
    this process, whose BLAS has already read its settings.

    Yields
    ------
    None

    Examples
    --------
    >>> import os
    >>> import scratchnet as sn
    >>> before = dict(os.environ)
    >>> with sn.experiments.single_threaded_blas():
    ...     all(name in os.environ for name in sn.experiments.BLAS_THREAD_VARIABLES)
    True
    >>> dict(os.environ) == before
    True
    """
    saved = {name: os.environ.get(name) for name in BLAS_THREAD_VARIABLES}
    for name in BLAS_THREAD_VARIABLES:
        os.environ.setdefault(name, "1")
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
