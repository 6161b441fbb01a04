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
     "time_limit": 10.0, "memory_mb": 2048}

Exactly the listed exercises are graded, each for at most its ``points``;
``allow`` names modules (``"scipy.special"``) or scratchnet objects
(``"scratchnet.softmax.softmax"``) an exercise's code may use beyond the
default (NumPy, ``math``, the student's own modules, and of scratchnet what
the hand-out gives); ``checks`` weights a check (default 1; an exercise's
points are shared in proportion) and sets its ``visibility`` (``"visible"``,
``"hidden"``, ``"after_published"``, as Gradescope's).  Unknown keys are kept
for later versions (:mod:`scratchnet.exercises.assignment` reads and checks
the file).

**The requests and answers** between the grader (the parent) and the child
process that imports the submission (:mod:`scratchnet.exercises.child`).
Each message is one *frame*: an 8-byte big-endian length, then the payload
(:func:`pack`): a JSON header, then each NumPy array as ``.npy`` bytes
(``numpy.save``; read back with ``allow_pickle=False``).  Nothing from the
child is ever unpickled or evaluated, and its stdout and stderr are never
read as results: frames travel on two pipes of their own.  The parent reads
an answer with a size limit and a deadline; a malformed, oversized or late
answer fails that request.  Values are ``None``, booleans, numbers, strings,
lists, dicts with string keys (``{"$dict": {...}}``), and these tagged
objects: ``{"$array": i}``
(the i-th array), ``{"$tuple": [...]}``, ``{"$handle": n}`` (an object the
child built and keeps), ``{"$object": "repr"}`` (anything else, described
only).  Requests:

==========  ===============================================================
``start``   ``dir`` (the package folder), ``refuse`` (modules the
            student's code may not import), ``library`` (exercise id ->
            chapter: the library objects watched)
``load``    ``module`` (a chapter module of the submission),
            ``by_function`` (build it definition by definition)
``call``    ``exercise`` (the id being graded), ``target`` (``{"student":
            id}``, ``{"library": "module.name"}``, ``{"handle": n,
            "method": m}``, or ``{"new": name, "side": "student" |
            "library"}`` to build an object), ``args``, ``kwargs``,
            ``replace`` (exercise ids whose student object is replaced by
            the library's: carry-forward), ``loop`` (optional: a list of
            argument lists, the call made once for each), ``limit``
            (seconds)
``get``     ``handle``, ``path``: an attribute and keys (``["params"]``)
``assign``  ``handle``, ``path``, ``value``: written into the array there
==========  ===============================================================

Every request carries a ``nonce`` that its answer must echo (an answer the
student's code wrote into the pipe itself fails its request).  An answer
is ``{"ok": true, "value", "args", "kwargs", "seconds", "library": [ids]}``
(``args`` and ``kwargs`` as they are after the call; ``library``: the
watched library objects that ran during it) or ``{"ok":
false, "error": {"type", "message", "where", "todo"}}`` (``where``: the
student's file and line; ``todo``: a ``NotImplementedError`` raised in the
student's files).

**A check** is data (:class:`Check`): its name, how its inputs are built,
the reference that gives the expected value (computed in the parent, with
its own copy of the library), how outputs are compared, which diagnoses may
explain a difference (:mod:`scratchnet.exercises.diagnoses`), and its
weight.  A check of several calls (an optimiser over five steps, training
to the posterior) gives ``run`` instead: a function of the student's side
(:class:`~scratchnet.exercises.sides.Objects` or
:class:`~scratchnet.exercises.sides.Local`) that raises
:class:`~scratchnet.exercises.probes.Failed`.
"""

from __future__ import annotations

import importlib
import io
import json
import os
import select
import time
from dataclasses import dataclass
from typing import Any, Callable, List, Tuple

import numpy as np

from .probes import expect_close, show

__all__ = ["FORMAT", "MAX_ANSWER_BYTES", "Check", "Described", "Handle",
           "ProtocolError", "library_object", "pack", "read_frame", "unpack",
           "write_frame"]

FORMAT = "scratchnet-assignment"
MAX_ANSWER_BYTES = 64 * 2**20   # an answer larger than this fails its request
_MAX_DEPTH = 32


class ProtocolError(ValueError):
    """A frame that is malformed, too large, or did not come in time.

    Parameters
    ----------
    message : str
        What was wrong with it.

    Examples
    --------
    >>> str(ProtocolError("the answer is 70000000 bytes"))
    'the answer is 70000000 bytes'
    """


@dataclass(frozen=True)
class Handle:
    """An object the child built and keeps (a network, an optimiser), by number.

    Parameters
    ----------
    number : int
        The object's number in the child.
    attribute : str, optional
        One of its attributes instead (``"params"``), to be passed as an
        argument (an optimiser built on a network's parameters).

    Examples
    --------
    >>> Handle(3)
    Handle(number=3, attribute='')
    """

    number: int
    attribute: str = ""


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


def _tagged(value: Any, arrays: List[bytes], depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise ProtocolError(f"a value nested more than {_MAX_DEPTH} levels deep")
    if isinstance(value, (np.ndarray, np.generic)):
        buffer = io.BytesIO()
        array = np.asarray(value)
        if array.dtype.hasobject:
            return {"$object": f"an array of Python objects, shape {array.shape}"}
        np.save(buffer, array, allow_pickle=False)
        arrays.append(buffer.getvalue())
        return {"$array": len(arrays) - 1, "scalar": isinstance(value, np.generic)}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Handle):
        return {"$handle": value.number, "attribute": value.attribute}
    if isinstance(value, tuple):
        return {"$tuple": [_tagged(v, arrays, depth + 1) for v in value]}
    if isinstance(value, list):
        return [_tagged(v, arrays, depth + 1) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"$dict": {k: _tagged(v, arrays, depth + 1) for k, v in value.items()}}
    text = repr(value) if len(type(value).__name__) < 100 else "?"
    return {"$object": f"{type(value).__name__}: {text[:200]}"}


def pack(value: Any) -> bytes:
    """A value as a frame's payload: a JSON header, then the arrays as ``.npy``.

    Parameters
    ----------
    value : object
        Built of the types the protocol knows (anything else is described).

    Returns
    -------
    bytes

    Examples
    --------
    >>> import numpy as np
    >>> unpack(pack({"x": np.arange(3), "t": (1, "a")}))
    {'x': array([0, 1, 2]), 't': (1, 'a')}
    """
    arrays: List[bytes] = []
    header = json.dumps(_tagged(value, arrays, 0)).encode()
    parts = [len(header).to_bytes(8, "big"), header]
    for blob in arrays:
        parts += [len(blob).to_bytes(8, "big"), blob]
    return b"".join(parts)


def _untagged(value: Any, arrays: List[np.ndarray], depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise ProtocolError("a value nested too deep")
    if isinstance(value, list):
        return [_untagged(v, arrays, depth + 1) for v in value]
    if not isinstance(value, dict):
        return value
    if "$array" in value:
        array = arrays[value["$array"]]
        return array[()] if value.get("scalar") else array
    if "$tuple" in value:
        return tuple(_untagged(v, arrays, depth + 1) for v in value["$tuple"])
    if "$dict" in value:
        return {str(k): _untagged(v, arrays, depth + 1)
                for k, v in value["$dict"].items()}
    if "$handle" in value:
        return Handle(int(value["$handle"]), str(value.get("attribute", "")))
    if "$object" in value:
        return Described(str(value["$object"]))
    raise ProtocolError(f"an unknown tagged value with keys {sorted(value)[:5]}")


class Described(str):
    """A value the child could only describe (not an array, number or container).

    Parameters
    ----------
    text : str
        Its type and ``repr``, cut short.

    Examples
    --------
    >>> Described("object: <object at 0x1>")
    'object: <object at 0x1>'
    """


def unpack(payload: bytes) -> Any:
    """The value a payload holds; :class:`ProtocolError` if it is malformed.

    Arrays are read with ``numpy.load(..., allow_pickle=False)``: nothing in
    the payload can run code here.

    Parameters
    ----------
    payload : bytes

    Returns
    -------
    object

    Examples
    --------
    >>> import numpy as np
    >>> [type(v).__name__ for v in unpack(pack([np.float32(1.5), None]))]
    ['float32', 'NoneType']
    >>> unpack(b"junk")
    Traceback (most recent call last):
    ...
    scratchnet.exercises.protocol.ProtocolError: a malformed answer: ...
    """
    try:
        size = int.from_bytes(payload[:8], "big")
        header = json.loads(payload[8:8 + size].decode())
        arrays, at = [], 8 + size
        while at < len(payload):
            n = int.from_bytes(payload[at:at + 8], "big")
            blob = payload[at + 8:at + 8 + n]
            if len(blob) != n:
                raise ValueError("an array is cut short")
            arrays.append(np.load(io.BytesIO(blob), allow_pickle=False))
            at += 8 + n
        return _untagged(header, arrays, 0)
    except ProtocolError:
        raise
    except Exception as err:  # anything the child can send must fail cleanly
        raise ProtocolError(f"a malformed answer: {type(err).__name__}: "
                            f"{str(err)[:200]}") from None


def write_frame(fd: int, payload: bytes) -> None:
    """Write one frame (length, then payload) to a pipe.

    Parameters
    ----------
    fd : int
    payload : bytes

    Returns
    -------
    None

    Examples
    --------
    >>> r, w = os.pipe()
    >>> write_frame(w, b"hi"); read_frame(r, timeout=1.0)
    b'hi'
    """
    data = len(payload).to_bytes(8, "big") + payload
    while data:
        data = data[os.write(fd, data):]


def read_frame(fd: int, *, timeout: float | None = None,
               limit: int = MAX_ANSWER_BYTES) -> bytes:
    """Read one frame from a pipe within ``timeout`` seconds and ``limit`` bytes.

    Parameters
    ----------
    fd : int
    timeout : float, optional
        Seconds for the whole frame (None: wait).
    limit : int
        The largest payload accepted.

    Returns
    -------
    bytes
        The payload.

    Raises
    ------
    ProtocolError
        Too large, late, or the pipe closed before the frame ended.

    Examples
    --------
    >>> r, w = os.pipe()
    >>> os.write(w, (10**9).to_bytes(8, "big"))
    8
    >>> read_frame(r, timeout=1.0, limit=100)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    scratchnet.exercises.protocol.ProtocolError: the answer is 1000000000 bytes; ...
    """
    deadline = None if timeout is None else time.monotonic() + timeout

    def exactly(n: int) -> bytes:
        chunks, got = [], 0
        while got < n:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([fd], [], [], wait)[0]:
                raise ProtocolError(f"no answer within {timeout:g} s")
            chunk = os.read(fd, min(n - got, 2**20))
            if not chunk:
                raise ProtocolError("the child closed its pipe (it exited or died)")
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    size = int.from_bytes(exactly(8), "big")
    if size > limit:
        raise ProtocolError(f"the answer is {size} bytes; at most {limit} are read")
    return exactly(size)


