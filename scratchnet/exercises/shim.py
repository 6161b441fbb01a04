"""The answering shim: the only grader code that runs beside the student's code.

This file is run on its own, inside the sandbox
(:mod:`scratchnet.exercises.sandbox`), as ``python -I -S shim.py SITE``:
``SITE`` is a folder that holds NumPy and nothing else, and this file imports
only the standard library and NumPy (a test reads its imports).  It never
imports scratchnet: the sandbox does not even show it.  It imports the
submission's modules, and answers the grader's requests on its stdin with
frames on its stdout (the student's prints go to stderr): call this
function with these arguments, build this object, read or write this array.
Every reference value, comparison, hint and point is the grader's, computed
in its own process; nothing the student's code can do here reaches them.

What the child holds besides the submission is what the grader sent for the
exercise being graded: the reference source of its dependencies
(carry-forward), never its own, and the hand-out's base classes
(``given.py`` beside this file, served as ``scratchnet.mlp`` and
``scratchnet.optim``).  A frame the student's code writes itself can at most
be the answer its own function could have given.

The grading process imports the frame codec (:func:`pack`,
:func:`unpack`, :func:`read_frame`, :func:`write_frame`) and :func:`chunks`
from here, so both sides speak with one implementation.
"""

from __future__ import annotations
import __future__

import ast
import faulthandler
import importlib
import importlib.abc
import importlib.util
import io
import json
import os
import re
import select
import sys
import time
import traceback
import types
from typing import Any, Dict, List, Tuple

if __name__ == "__main__":   # in the sandbox: NumPy is in the folder named first
    sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else "")
import numpy as np

__all__ = ["MAX_FRAME_BYTES", "MAX_HEADER_BYTES", "Described", "Handle",
           "ProtocolError", "chunks", "pack", "read_frame", "unpack", "write_frame"]

MAX_FRAME_BYTES = 16 * 2**20   # a frame larger than this is refused unread
MAX_HEADER_BYTES = 2**20       # and a JSON header larger than this
_MAX_DEPTH = 32
PACKAGE = "submission"


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


# -- the frame codec ---------------------------------------------------------------

def _tagged(value: Any, arrays: List[bytes], depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise ProtocolError(f"a value nested more than {_MAX_DEPTH} levels deep")
    if isinstance(value, (np.ndarray, np.generic)):
        array = np.asarray(value)
        if array.dtype.hasobject or array.dtype.fields is not None:
            return {"$object": f"an array of Python objects, shape {array.shape}"}
        buffer = io.BytesIO()
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
    try:
        text = repr(value)[:200]
    except Exception:   # a __repr__ of the student's that raises
        text = "?"
    return {"$object": f"{type(value).__name__[:100]}: {text}"}


def pack(value: Any) -> bytes:
    """A value as a frame's payload: a JSON header, then the arrays as ``.npy``.

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


def _array(blob: bytes) -> np.ndarray:
    """One ``.npy`` blob, its header checked against its length before allocating."""
    buffer = io.BytesIO(blob)
    version = np.lib.format.read_magic(buffer)
    read_header = {(1, 0): np.lib.format.read_array_header_1_0,
                   (2, 0): np.lib.format.read_array_header_2_0}.get(version)
    if read_header is None:
        raise ValueError(f"an array of .npy version {version}")
    shape, _, dtype = read_header(buffer)
    if dtype.hasobject or dtype.fields is not None or (dtype.itemsize == 0 and \
            dtype.kind not in "SUV"):
        raise ValueError(f"an array of dtype {dtype}")
    size = int(np.prod(shape, dtype=object)) * dtype.itemsize
    if size != len(blob) - buffer.tell():
        raise ValueError(f"an array of shape {shape} in {len(blob)} bytes")
    return np.lib.format.read_array(io.BytesIO(blob), allow_pickle=False)


def unpack(payload: bytes) -> Any:
    """The value a payload holds; :class:`ProtocolError` if it is malformed.

    Arrays are read with ``allow_pickle=False`` after their header is
    checked against their length: nothing in a payload runs code, and no
    array is allocated larger than the bytes that came.

    Parameters
    ----------
    payload : bytes

    Returns
    -------
    object

    Examples
    --------
    >>> [type(v).__name__ for v in unpack(pack([np.float32(1.5), None]))]
    ['float32', 'NoneType']
    >>> unpack(b"junk")
    Traceback (most recent call last):
    ...
    scratchnet.exercises.shim.ProtocolError: a malformed frame: ...
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
            arrays.append(_array(blob))
            at += 8 + n
        return _untagged(header, arrays, 0)
    except ProtocolError:
        raise
    except Exception as err:  # anything the other side can send must fail cleanly
        raise ProtocolError(f"a malformed frame: {type(err).__name__}: "
                            f"{str(err)[:200]}") from None


def write_frame(fd: int, payload: bytes) -> None:
    """Write one frame (an 8-byte big-endian length, then the payload) to a pipe.

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
    data = memoryview(len(payload).to_bytes(8, "big") + payload)
    while len(data):
        data = data[os.write(fd, data):]


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
    scratchnet.exercises.shim.ProtocolError: a frame of 1000000000 bytes; ...
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


# -- a module, definition by definition --------------------------------------------

_START = re.compile(r"^(?![\s#)\]}]|else\b|elif\b|except\b|finally\b)")
_NAMED = re.compile(r"^(?:async\s+)?(?:def|class)\s+(\w+)|^(\w+)\s*(?::[^=]*)?=")


def chunks(text: str) -> List[Tuple[int, str, List[str]]]:
    """A module's top-level statements, each with its decorators, as separate sources.

    Parameters
    ----------
    text : str
        The module's source; it need not parse.

    Returns
    -------
    list of (int, str, list of str)
        The first line (1-based), the source, and the names it defines
        (a ``def`` or ``class`` name, or an assignment's target).

    Examples
    --------
    >>> text = ("import numpy as np\\n\\ndef f(x)\\n    return x\\n\\n"
    ...         "@d\\ndef g():\\n    pass\\n")
    >>> [(line, names) for line, _, names in chunks(text)]
    [(1, []), (3, ['f']), (6, ['g'])]
    >>> [source for _, source, _ in chunks("from .softmax import a, b\\n")]
    ['from .softmax import a\\n', 'from .softmax import b\\n']
    """
    lines = text.splitlines()
    found: List[List[Any]] = []
    decorated = False
    for i, line in enumerate(lines, 1):
        if not line.strip() or not _START.match(line):
            if found:
                found[-1][1].append(line)
            continue
        if decorated:
            found[-1][1].append(line)
        else:
            found.append([i, [line]])
        decorated = line.startswith("@")
    out = []
    for first, body in found:
        names = [m.group(1) or m.group(2) for m in map(_NAMED.match, body[:8]) if m]
        named = [n for n in names if n][:1]
        source = "\n".join(body).rstrip() + "\n"
        out += [(first, one, named) for one in _one_name_each(source)]
    return out


def _one_name_each(source: str) -> List[str]:
    """An import of several names as one import per name (one missing costs only it)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return [source]
    node = tree.body[0] if len(tree.body) == 1 else None
    if not isinstance(node, (ast.Import, ast.ImportFrom)) or len(node.names) < 2:
        return [source]
    return [ast.unparse(type(node)(**{**dict(ast.iter_fields(node)),
                                      "names": [alias]})) + "\n"
            for alias in node.names]


# -- the child ---------------------------------------------------------------------

class _Given(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves ``scratchnet``, ``scratchnet.mlp``, ``scratchnet.optim`` and
    ``scratchnet.exercises``: the hand-out's base classes and a check cell's
    ``assert_passes`` (``given.py``), nothing else of the library."""

    def __init__(self, given: types.ModuleType) -> None:
        self.given = given

    def find_spec(self, name, path=None, target=None):
        if name in ("scratchnet", "scratchnet.mlp", "scratchnet.optim",
                    "scratchnet.exercises"):
            return importlib.util.spec_from_loader(name, self,
                                                   is_package=name == "scratchnet")
        return None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        module.__file__ = "<given>"
        for name in getattr(self.given, "__all__", []):
            setattr(module, name, getattr(self.given, name))


def _error(err: BaseException, root: str) -> Dict[str, Any]:
    """An answer's ``error``: type, message, and where in the student's files."""
    frames = [f for f in traceback.extract_tb(err.__traceback__)
              if root and os.path.realpath(f.filename).startswith(root + os.sep)]
    if isinstance(err, SyntaxError) and err.filename and os.path.realpath(
            err.filename).startswith(root + os.sep):
        location = {"file": os.path.basename(err.filename), "line": err.lineno or 0,
                    "text": (err.text or "").strip()}
    elif frames:
        location = {"file": os.path.basename(frames[-1].filename),
                    "line": frames[-1].lineno or 0,
                    "text": (frames[-1].line or "").strip()}
    else:
        location = {}
    try:
        message = str(err)[:500]
    except Exception:   # an exception of the student's whose __str__ raises
        message = "?"
    return {"type": type(err).__name__[:100], "message": message,
            "location": location,
            "todo": isinstance(err, NotImplementedError) and bool(location)}


class _Session:
    """The child's state: the submission's modules, the references, the handles."""

    def __init__(self, given: types.ModuleType) -> None:
        self.given = given
        self.root = ""
        self.homes: Dict[str, str] = {}
        self.reference: Dict[str, Any] = {}   # carried: exercise id -> object
        self.handles: Dict[int, Any] = {}

    def start(self, request: Dict[str, Any]) -> Any:
        self.root = os.path.realpath(request["package"])
        self.homes = dict(request["homes"])
        namespace: Dict[str, Any] = {"np": np, "__name__": "reference"}
        exec("import math\nfrom typing import Any, Dict, List, Tuple\n", namespace)
        for ex_id, source in request.get("references", {}).items():
            exec(compile(source, f"<reference {ex_id}>", "exec", dont_inherit=True,
                         flags=__future__.annotations.compiler_flag), namespace)
            cls_name, _, method = ex_id.partition(".")
            self.reference[ex_id] = namespace[method or cls_name]
            if method:   # a method of a base class: it is the class's from now on
                setattr(getattr(self.given, cls_name), method, namespace[method])
                del namespace[method]
        self.given.REFERENCE.update({k: v for k, v in self.reference.items()
                                     if "." not in k})
        sys.meta_path.insert(0, _Given(self.given))
        package = types.ModuleType(PACKAGE)
        package.__path__ = [self.root]
        sys.modules[PACKAGE] = package
        return None

    def load(self, request: Dict[str, Any]) -> Any:
        name = request["module"]
        full = f"{PACKAGE}.{name}"
        broken: Dict[str, Dict[str, Any]] = {}
        if full in sys.modules:
            return {"built": "whole", "broken": broken}
        if not request.get("by_function"):
            try:
                importlib.import_module(full)
                return {"built": "whole", "broken": broken}
            except BaseException:  # a module that does not import
                sys.modules.pop(full, None)
        path = os.path.join(self.root, f"{name}.py")
        module = types.ModuleType(full)
        module.__file__, module.__package__ = path, PACKAGE
        sys.modules[full] = module
        try:
            with open(path, errors="replace") as f:
                text = f.read(2**20)
        except OSError:
            text = ""
        for line, source, names in chunks(text):
            try:
                exec(compile("\n" * (line - 1) + source, path, "exec"), module.__dict__)
            except BaseException as err:  # the student's definition may raise anything
                for defined in names:
                    broken[defined] = _error(err, self.root)
        return {"built": "by definition", "broken": broken}

    def student(self, ex_id: str) -> Any:
        cls_name, _, method = ex_id.partition(".")
        obj = getattr(sys.modules[f"{PACKAGE}.{self.homes[ex_id]}"], cls_name)
        return getattr(obj, method) if method else obj

    def replaced(self, ids: List[str]) -> List[tuple]:
        """Carry-forward: the reference wherever the student's object is bound."""
        undo = []
        mine = [m for n, m in list(sys.modules.items())
                if n.split(".")[0] == PACKAGE and isinstance(m, types.ModuleType)]
        for ex_id in ids:
            if ex_id not in self.reference:
                continue
            cls_name, _, method = ex_id.partition(".")
            module = sys.modules.get(f"{PACKAGE}.{self.homes.get(ex_id, '')}")
            own = getattr(module, cls_name, None)
            if method:
                if isinstance(own, type):
                    undo.append((own, method, vars(own).get(method)))
                    setattr(own, method, self.reference[ex_id])
                continue
            if own is None:   # missing or broken: bound where its name is missing
                places = [(m, cls_name) for m in mine if cls_name not in vars(m)]
            else:             # by identity, under any name
                places = [(m, a) for m in mine for a, v in vars(m).items() if v is own]
            for mod, attr in places:
                undo.append((mod, attr, own))
                setattr(mod, attr, self.reference[ex_id])
        return undo

    def resolve(self, value: Any) -> Any:
        if isinstance(value, Handle):
            obj = self.handles[value.number]
            return getattr(obj, value.attribute) if value.attribute else obj
        if isinstance(value, (list, tuple)):
            return type(value)(self.resolve(v) for v in value)
        if isinstance(value, dict):
            return {k: self.resolve(v) for k, v in value.items()}
        return value

    def handed_back(self, value: Any, depth: int = 0) -> Any:
        """Objects the grader passed in go back as their handles."""
        for number, obj in self.handles.items():
            if value is obj:
                return Handle(number)
        if depth > _MAX_DEPTH:
            return value
        if isinstance(value, (list, tuple)) and type(value) in (list, tuple):
            return type(value)(self.handed_back(v, depth + 1) for v in value)
        if isinstance(value, dict) and type(value) is dict:
            return {k: self.handed_back(v, depth + 1) for k, v in value.items()}
        return value

    def target(self, spec: Dict[str, Any]) -> Any:
        if "student" in spec:
            return self.student(spec["student"])
        if "reference" in spec:
            return self.reference[spec["reference"]]
        if "new" in spec:
            if spec["side"] == "student":   # the class of a method exercise
                module = sys.modules[f"{PACKAGE}.{self.homes[spec['new']]}"]
                return getattr(module, spec["new"].split(".")[0])
            return getattr(self.given, spec["new"].rpartition(".")[2])
        return getattr(self.handles[spec["handle"]], spec["method"])

    def call(self, request: Dict[str, Any]) -> Any:
        undo = self.replaced(request.get("replace", []))
        limit = float(request.get("limit") or 0)
        try:
            func = self.target(request["target"])
            args = self.resolve(request.get("args", []))
            kwargs = self.resolve(request.get("kwargs", {}))
            if limit:   # where a call that hangs was, for the grader's message
                faulthandler.dump_traceback_later(limit, exit=False)
            start = time.perf_counter()
            try:
                if "loop" in request:
                    value = [func(*self.resolve(each)) for each in request["loop"]]
                else:
                    value = func(*args, **kwargs)
            finally:
                faulthandler.cancel_dump_traceback_later()
            seconds = time.perf_counter() - start
            if "new" in request["target"]:
                self.handles[len(self.handles)] = value
                value = Handle(len(self.handles) - 1)
            return {"value": self.handed_back(value), "args": self.handed_back(args),
                    "kwargs": self.handed_back(kwargs), "seconds": seconds}
        finally:
            for owner, attr, value in reversed(undo):
                if value is None:
                    delattr(owner, attr)
                else:
                    setattr(owner, attr, value)

    def at(self, request: Dict[str, Any]) -> Any:
        """The value at ``path`` (an attribute, then keys) of a handle's object."""
        value = self.handles[request["handle"]]
        for i, key in enumerate(request["path"]):
            value = getattr(value, key) if i == 0 else value[key]
        return value

    def get(self, request: Dict[str, Any]) -> Any:
        return self.handed_back(self.at(request))

    def assign(self, request: Dict[str, Any]) -> Any:
        self.at(request)[...] = request["value"]
        return None


def _given() -> types.ModuleType:
    """``given.py``, beside this file: the hand-out's base classes in plain NumPy."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "given.py")
    spec = importlib.util.spec_from_file_location("given", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: List[str]) -> int:
    """Answer requests on stdin, on stdout, until stdin closes: ``shim.py SITE``.

    Parameters
    ----------
    argv : list of str
        The folder that holds NumPy (already on ``sys.path`` when run as a
        script).

    Returns
    -------
    int
        0 when the requests end, 2 for a wrong invocation.

    Examples
    --------
    >>> main([])
    2
    """
    if len(argv) != 1:
        return 2
    requests, answers = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)             # the student's prints go to the log, never to the grader
    sys.stdout = sys.stderr
    session = _Session(_given())
    ops = {"start": session.start, "load": session.load, "call": session.call,
           "get": session.get, "assign": session.assign}
    while True:
        try:
            request = unpack(read_frame(requests))
        except ProtocolError:   # the grader closed the pipe: grading is over
            return 0
        try:
            result = ops[request["op"]](request)
            answer = {"ok": True, **(result if request["op"] == "call"
                                     else {"value": result})}
        except BaseException as err:  # the student's code may raise anything
            answer = {"ok": False, "error": _error(err, session.root)}
        try:
            payload = pack(answer)
        except Exception as err:  # an answer that cannot be sent
            payload = pack({"ok": False, "error": _error(err, session.root)})
        write_frame(answers, payload)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
