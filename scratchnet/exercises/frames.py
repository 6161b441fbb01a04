"""The frames the grader and the child send each other: a bounded, pickle-free codec.

One frame is an 8-byte big-endian length, then the payload (:func:`pack`): a
JSON header, which gives each NumPy array's dtype, shape and memory order,
then each array's raw bytes.  Whoever reads checks the length against a limit
before reading (:func:`read_frame`), the header against 1 MiB, and each
array's dtype (plain numbers, booleans, strings, times: no objects, no
fields) and shape against its bytes before anything is allocated
(:func:`unpack`); nothing is unpickled or evaluated.  (Not ``.npy``: NumPy
reads its header with ``ast.literal_eval``, and a training loop's 4,000
small arrays took the child 0.8 s.)  This file
imports only the standard library and NumPy: the answering shim runs it in
the sandbox, the grading process imports it, one implementation for both.
"""

from __future__ import annotations

import json
import os
import re
import select
import time
from typing import Any, List

import numpy as np

__all__ = ["MAX_FRAME_BYTES", "MAX_HEADER_BYTES", "Described", "Handle",
           "ProtocolError", "pack", "read_frame", "unpack", "write_frame"]

#: A frame larger than this is refused unread.
MAX_FRAME_BYTES = 16 * 2**20
#: A frame's JSON header larger than this is refused unread.
MAX_HEADER_BYTES = 2**20
MAX_DEPTH = 32
#: An array's dtype as :attr:`numpy.dtype.str` gives it: byte order, kind, size
#: (and a time unit); what else a dtype may be (objects, fields) is described.
_DTYPE = re.compile(r"[<>|][biufcSUVmM][0-9]{1,4}(\[[0-9]*[a-zA-Z]{1,2}\])?")


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

    def __init__(self, number: int, attribute: str = "") -> None:
        self.number, self.attribute = int(number), str(attribute)

    def __repr__(self) -> str:
        return f"Handle(number={self.number}, attribute={self.attribute!r})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Handle) and (self.number, self.attribute) == (
            other.number, other.attribute)

    def __hash__(self) -> int:
        return hash((self.number, self.attribute))


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


def _tagged(value: Any, arrays: List[bytes], depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise ProtocolError(f"a value nested more than {MAX_DEPTH} levels deep")
    if isinstance(value, (np.ndarray, np.generic)):
        array = np.asarray(value)
        if array.dtype.hasobject:
            return {"$object": f"an array of Python objects, shape {array.shape}"}
        if not _DTYPE.fullmatch(array.dtype.str) or array.dtype.fields is not None:
            return {"$object": f"an array of dtype {array.dtype}, shape {array.shape}"}
        order = "F" if array.flags.f_contiguous and not array.flags.c_contiguous \
            else "C"
        arrays.append(array.tobytes(order))
        return {"$array": len(arrays) - 1, "dtype": array.dtype.str,
                "shape": list(array.shape), "order": order,
                "scalar": isinstance(value, np.generic)}
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
    try:
        text = repr(value)[:200]
    except Exception:   # a __repr__ of the student's that raises
        text = "?"
    return {"$object": f"{type(value).__name__[:100]}: {text}"}


def pack(value: Any) -> bytes:
    """A value as a frame's payload: a JSON header, then the arrays' bytes.

    Values are ``None``, booleans, numbers, strings, lists, tuples, dicts
    with string keys, arrays and :class:`Handle`; anything else is sent as
    its description (:class:`Described`).

    Parameters
    ----------
    value : object

    Returns
    -------
    bytes

    Examples
    --------
    >>> import numpy as np
    >>> unpack(pack({"x": np.arange(3), "t": (1, "a")}))
    {'x': array([0, 1, 2]), 't': (1, 'a')}
    >>> unpack(pack(np.ones((2, 3), ">f4", order="F"))).flags.f_contiguous
    True
    """
    arrays: List[bytes] = []
    header = json.dumps(_tagged(value, arrays, 0)).encode()
    parts = [len(header).to_bytes(8, "big"), header]
    for blob in arrays:
        parts += [len(blob).to_bytes(8, "big"), blob]
    return b"".join(parts)


def _untagged(value: Any, arrays: List[Any], depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise ProtocolError("a value nested too deep")
    if isinstance(value, list):
        return [_untagged(v, arrays, depth + 1) for v in value]
    if not isinstance(value, dict):
        return value
    if "$array" in value:
        array = _array(arrays, value)
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


def _array(arrays: List[Any], tag: dict) -> np.ndarray:
    """One array from its bytes, read once (so a header cannot multiply them), its
    dtype and shape checked against their length first."""
    number = tag["$array"]
    if type(number) is not int or not 0 <= number < len(arrays) or \
            arrays[number] is None:
        raise ValueError(f"no array {str(number)[:20]} to read")
    blob, arrays[number] = arrays[number], None
    text, shape, order = tag.get("dtype"), tag.get("shape"), tag.get("order", "C")
    if not isinstance(text, str) or not _DTYPE.fullmatch(text):
        raise ValueError(f"an array of dtype {str(text)[:40]!r}")
    dtype = np.dtype(text)
    if not isinstance(shape, list) or len(shape) > 64 or order not in ("C", "F") or \
            not all(type(n) is int and n >= 0 for n in shape):
        raise ValueError(f"an array of shape {str(shape)[:80]}, order {order!r}")
    count = 1
    for n in shape:
        count *= n
    if count * dtype.itemsize != len(blob):
        raise ValueError(f"an array of {count} {dtype} in {len(blob)} bytes")
    if dtype.itemsize == 0:
        return np.empty(shape, dtype)
    return np.frombuffer(blob, dtype).reshape(shape, order=order).copy(order="K")


def unpack(payload: bytes) -> Any:
    """The value a payload holds; :class:`ProtocolError` if it is malformed.

    An array's dtype and shape are checked against its length before it is
    read: nothing in a payload runs code, and no array is allocated larger
    than the bytes that came.

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
    scratchnet.exercises.frames.ProtocolError: a malformed frame: ...
    >>> forged = pack(np.zeros(2)).replace(b'"<f8"', b'"|O8"')   # pointers
    >>> unpack(forged)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    scratchnet.exercises.frames.ProtocolError: ...: an array of dtype '|O8'
    """
    try:
        size = int.from_bytes(payload[:8], "big")
        if size > MAX_HEADER_BYTES:
            raise ValueError(f"a header of {size} bytes (at most {MAX_HEADER_BYTES})")
        header = json.loads(payload[8:8 + size].decode())
        arrays, at = [], 8 + size
        while at < len(payload):
            n = int.from_bytes(payload[at:at + 8], "big")
            blob = payload[at + 8:at + 8 + n]
            if len(blob) != n:
                raise ValueError("an array is cut short")
            arrays.append(blob)
            at += 8 + n
        return _untagged(header, arrays, 0)
    except ProtocolError:
        raise
    except Exception as err:  # anything the other side can send must fail cleanly
        raise ProtocolError(f"a malformed frame: {type(err).__name__}: "
                            f"{str(err)[:200]}") from None


def write_frame(fd: int, payload: bytes, *, timeout: float | None = None) -> None:
    """Write one frame (an 8-byte big-endian length, then the payload) to a pipe.

    Parameters
    ----------
    fd : int
        Non-blocking when ``timeout`` is given (a reader that stops reading
        cannot hold the writer past it).
    payload : bytes
    timeout : float, optional
        Seconds for the whole frame (None: wait).

    Returns
    -------
    None

    Raises
    ------
    ProtocolError
        The frame could not be written within ``timeout``.

    Examples
    --------
    >>> r, w = os.pipe()
    >>> write_frame(w, b"hi"); read_frame(r, timeout=1.0)
    b'hi'
    >>> os.set_blocking(w, False)
    >>> write_frame(w, bytes(2**20), timeout=0.1)
    Traceback (most recent call last):
    ...
    scratchnet.exercises.frames.ProtocolError: the request was not read within 0.1 s
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    data = memoryview(len(payload).to_bytes(8, "big") + payload)
    while len(data):
        try:
            data = data[os.write(fd, data):]
        except BlockingIOError:   # the pipe is full: wait until it is read, or the end
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([], [fd], [], wait)[1]:
                raise ProtocolError(f"the request was not read within {timeout:g} s") \
                    from None


def read_frame(fd: int, *, timeout: float | None = None,
               limit: int = MAX_FRAME_BYTES) -> bytes:
    """Read one frame within ``timeout`` seconds; its size is checked before it is read.

    Parameters
    ----------
    fd : int
    timeout : float, optional
        Seconds for the whole frame (None: wait).
    limit : int
        The largest payload accepted: a larger length is refused unread.

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
    scratchnet.exercises.frames.ProtocolError: a frame of 1000000000 bytes; ...
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
                raise ProtocolError("the pipe closed (the child exited or died)")
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    size = int.from_bytes(exactly(8), "big")
    if size > limit:
        raise ProtocolError(f"a frame of {size} bytes; at most {limit} are read")
    return exactly(size)
