"""What the grader and the student's code say to each other, and what a check is.

The grader decides; the student's code only answers.  Three contracts keep
it so, and every other module of the kit is written against them.

**The assignment** (the instructor's file, written by ``exercises make ...
--assignment FILE``, read by ``exercises check SUBMISSION --assignment FILE``)
is JSON::

    {"format": "scratchnet-assignment", "version": 1,
     "title": "Homework 1",
     "exercises": [{"id": "softmax", "points": 6},
                   {"id": "linear_backward", "points": 6,
                    "allow": ["math"],
                    "checks": {"float32 kept": {"weight": 0.5,
                                                "visibility": "hidden"}}}],
     "allow": [],
     "time_limit": 10.0, "memory_mb": 2048,
     "visibility": "after_published", "stdout_visibility": "hidden"}

Exactly the listed exercises are graded, each for at most its ``points``;
``allow`` names modules (``"scipy.special"``) or scratchnet objects
(``"scratchnet.softmax.softmax"``) an exercise's code may use beyond the
default (NumPy, ``math``, the student's own modules, and of scratchnet what
the hand-out gives); ``checks`` weights a check (default 1; an exercise's
points are shared in proportion) and sets its ``visibility`` (Gradescope's:
``"visible"``, ``"after_due_date"``, ``"after_published"``, ``"hidden"``); a
check name the exercise does not have is an error.  The top-level
``visibility`` (who sees the total in Gradescope) defaults to the most
restrictive of the checks', so the total never shows a hidden check's points;
``stdout_visibility`` (who sees what the autograder printed, every check
named) defaults to ``"hidden"``.  Unknown keys are kept for later versions
(:mod:`scratchnet.exercises.assignment` reads and checks the file).

**The requests and answers** between the grading process and the child, the
answering shim that imports the submission inside the sandbox
(:mod:`scratchnet.exercises.shim`, :mod:`scratchnet.exercises.sandbox`).
Each message is one *frame* on the child's stdin (requests) or stdout (answers;
the student's prints go to stderr): an 8-byte big-endian length, checked against
:data:`~scratchnet.exercises.frames.MAX_FRAME_BYTES` before anything is read,
then the payload (:func:`pack`): a JSON header (at most 1 MiB), then each NumPy
array's raw bytes, read once, after its dtype (numbers, booleans, strings,
times: no objects, no fields) and shape, given in the header, are checked
against their length.  Nothing from the child is ever unpickled or
evaluated.  A malformed, oversized or late answer loses the child, charged to the
check it came in.  Values are ``None``, booleans, numbers, strings, lists, dicts
with string keys (``{"$dict": {...}}``), and these tagged objects:
``{"$array": i, "dtype": "<f8", "shape": [2, 3], "order": "C"}`` (the i-th
array), ``{"$tuple": [...]}``, ``{"$handle": n}`` (an object the child built
and keeps), ``{"$object": "repr"}`` (anything else, described only).
Requests:

============  ===============================================================
``start``     ``package`` (where the child sees the submission), ``homes``
              (exercise id -> module), ``references`` (id -> plain NumPy
              source: the carried references of the exercise's dependencies)
``load``      ``module`` (a module of the submission), ``by_function``
              (build it definition by definition)
``call``      ``target`` (``{"student": id}``, ``{"reference": id}``,
              ``{"handle": n, "method": m}``, or ``{"new": name, "side":
              "student" | "reference"}`` to build an object), ``args``,
              ``kwargs``, ``replace`` (ids whose student object is replaced by
              the carried reference: carry-forward), ``loop`` (optional: a
              list of argument lists, the call made once for each), ``limit``
              (seconds)
``get``       ``handle``, ``path``: an attribute and keys (``["params"]``)
``assign``    ``handle``, ``path``, ``value``: written into the array there
``evidence``  ``id`` (a replaced exercise), ``count``: the student's own ``id``
              run on each input (at most three) its carried reference was given
              since the last such request, beside the reference's result
              (``value`` and ``args`` after the call, or ``error``); with
              ``count``, only how many
``examples``  ``target`` (``{"student": id}``): run the examples of the
              student's docstring, for an exercise a self-check knows by name
              only (the answer's value: ``examples``, ``failed``)
============  ===============================================================

An answer is ``{"ok": true, "value", "args", "kwargs", "seconds"}`` (``args``
and ``kwargs`` as they are after the call) or ``{"ok": false, "error":
{"type", "message", "location", "todo", "function"}}`` (``location``: the
student's ``file``, ``line`` and ``text``; ``todo``: a ``NotImplementedError``
raised in the student's files; ``function``: the innermost of the student's
functions it was raised in, so that a stub's error is its own exercise's).
The student's code shares the child's process, so it may write frames itself:
a forged answer is at most what its own function could have returned, since
every verdict is computed here from values.

**A check** is data (:class:`Check`): its name, how its inputs are built,
the reference that gives the expected value (computed in the grading
process, with its own copy of the library), how outputs are compared, which
diagnoses may explain a difference (:mod:`scratchnet.exercises.diagnoses`),
and its weight.  A check of several calls (an optimiser over five steps, training
to the posterior) gives ``run`` instead: a function of the student's side
(:class:`~scratchnet.exercises.sides.Objects` or
:class:`~scratchnet.exercises.sides.Local`) that raises
:class:`~scratchnet.exercises.probes.Failed`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable, Tuple

import numpy as np

from .frames import (
    MAX_FRAME_BYTES,
    Described,
    Handle,
    ProtocolError,
    pack,
    read_frame,
    unpack,
    write_frame,
)
from .probes import expect_close, show

__all__ = ["FORMAT", "MAX_FRAME_BYTES", "Check", "Described", "Handle",
           "ProtocolError", "library_object", "pack", "read_frame", "unpack",
           "write_frame"]

FORMAT = "scratchnet-assignment"


def library_object(name: str) -> Any:
    """The library's object that a request names as ``"module.name"``.

    Parameters
    ----------
    name : str
        A chapter module of scratchnet and an object in it, dotted:
        ``"softmax.softmax"``, ``"optim.SGD"``.

    Returns
    -------
    object
        ``scratchnet.<module>.<name>``.

    Examples
    --------
    >>> library_object("optim.SGD").__name__
    'SGD'
    """
    module, _, attr = name.rpartition(".")
    return getattr(importlib.import_module(f"scratchnet.{module}"), attr)


@dataclass(frozen=True)
class Check:
    """One check of an exercise, as data.

    Parameters
    ----------
    name : str
        Shown in the report (``"large logits"``).
    inputs : callable, optional
        ``inputs() -> tuple`` of the arguments (fresh arrays each call).
    reference : callable, optional
        ``reference(*inputs)``: the expected value, computed by the grader.
    rtol, atol : float
        How outputs are compared (NaN matches NaN, infinities must agree).
    dtype : dtype, optional
        The dtype the result must have (where the docstring promises it).
    diagnoses : tuple of callables
        Each ``diagnosis(got, inputs) -> str`` returns a hint when its
        mistake explains the difference on these outputs, else "".
    run : callable, optional
        For a check of several calls: ``run(student)`` raises ``Failed``;
        then ``inputs`` and ``reference`` are not used.
    weight : float, default 1
        The check's share of the exercise's points (relative).
    what : str, optional
        The call in a message, formatted with the inputs shown:
        ``"softmax(x) for large logits, x = {0}"``.

    Examples
    --------
    >>> import numpy as np
    >>> c = Check("values", inputs=lambda: (np.ones(2),), reference=lambda x: 2 * x,
    ...           what="double(x) for x = {0}")
    >>> c(lambda x: 2 * x)     # passes: returns None
    >>> c(lambda x: 3 * x)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    scratchnet.exercises.probes.Failed: double(x) for x = [1. 1.] ...
    """

    name: str
    inputs: Callable[[], Tuple] | None = None
    reference: Callable | None = None
    rtol: float = 1e-6
    atol: float = 1e-9
    dtype: Any = None
    diagnoses: Tuple[Callable, ...] = ()
    run: Callable | None = None
    weight: float = 1.0
    what: str = ""

    def __call__(self, student: Callable) -> None:
        """Run the check: call the student's side, compare, diagnose.

        Parameters
        ----------
        student : callable
            The student's function (``run`` checks: the student's side).

        Returns
        -------
        None

        Raises
        ------
        Failed
            With what was expected, what came back and, when a diagnosis
            holds on the output, its hint.

        Examples
        --------
        >>> Check("x", run=lambda f: None)(abs)
        """
        if self.run is not None:
            self.run(student)
            return
        inputs = self.inputs()
        got = student(*[np.copy(a) if isinstance(a, np.ndarray) else a
                        for a in inputs])
        shown = [show(a) for a in inputs]
        what = self.what.format(*shown) if self.what else \
            f"the call for {', '.join(shown)}"
        expect_close(got, self.reference(*inputs), what, rtol=self.rtol,
                     atol=self.atol, dtype=self.dtype,
                     diagnoses=[lambda g, d=d: d(g, inputs) for d in self.diagnoses])
