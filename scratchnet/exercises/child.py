"""The child: the process that imports a submission and answers the grader's requests.

The grader (:mod:`scratchnet.exercises.remote`) starts ``python -m
scratchnet.exercises.child REQUESTS ANSWERS MEMORY_MB CPU_S`` in a session of
its own and sends requests (:mod:`scratchnet.exercises.protocol`): load a
module of the submission, call a function or a method with these arguments,
with these of the student's functions replaced by the library's.  The child
answers with what came back, the arguments as they are after the call, the
exception with the student's file and line, the time, and which watched
library objects ran.  It compares nothing, scores nothing and writes no file:
the grader does that with its own copy of the checks.

The package's ``__init__.py`` is not run: the grader imports the chapter
modules.  A module that does not import is built definition by definition
(:func:`scratchnet.exercises.analysis.chunks`), so one broken function costs
only itself.  The student's imports go through a hook that refuses the
modules the grader names (``torch``, ...).
"""

from __future__ import annotations

import builtins
import importlib
import os
import signal
import sys
import time
import traceback
import types
from pathlib import Path
from typing import Any, Dict, List

from .analysis import chunks
from .protocol import Handle, library_object, pack, read_frame, unpack, write_frame

__all__ = ["CheckTimeout", "main"]

PACKAGE = "submission"


class CheckTimeout(BaseException):
    """Raised in the student's code when a call runs past its time limit.

    A ``BaseException``, so that ``except Exception`` does not swallow it.

    Parameters
    ----------
    *args
        The message.

    Examples
    --------
    >>> isinstance(CheckTimeout(), Exception)
    False
    """


class _Session:
    """The child's state: the student's modules, the library's objects, handles."""

    def __init__(self) -> None:
        self.root = ""
        self.refuse: List[str] = []
        self.library: Dict[str, Any] = {}      # id -> the library's own object
        self.homes: Dict[str, str] = {}        # id -> chapter
        self.ran: set = set()                  # watched library objects that ran
        self.handles: Dict[int, Any] = {}

    # -- loading ---------------------------------------------------------------------
    def start(self, request: Dict[str, Any]) -> Dict[str, Any]:
        self.root = os.path.realpath(request["dir"])
        self.refuse = list(request["refuse"])
        self.homes = dict(request["library"])
        for ex_id in request.get("watch", self.homes):  # not an instructor's own
            self.watch(ex_id, self.homes[ex_id])
        real_import = builtins.__import__

        def guarded(name, globals=None, locals=None, fromlist=(), level=0):
            importer = (globals or {}).get("__name__", "") or ""
            if level == 0 and importer.split(".")[0] == PACKAGE and any(
                    name == r or name.startswith(r + ".") for r in self.refuse):
                raise ImportError(f"{name} is not allowed in this homework")
            return real_import(name, globals, locals, fromlist, level)

        builtins.__import__ = guarded
        package = types.ModuleType(PACKAGE)
        package.__path__ = [self.root]
        sys.modules[PACKAGE] = package
        return {"ok": True}

    def watch(self, ex_id: str, chapter: str) -> None:
        """Put a recorder in place of the library's object of ``ex_id``, everywhere."""
        cls_name, _, method = ex_id.partition(".")
        module = importlib.import_module(f"scratchnet.{chapter}")
        owner = getattr(module, cls_name) if method else module
        original = vars(owner)[method] if method else getattr(module, cls_name)
        self.library[ex_id] = original

        def recorder(*args, **kwargs):
            self.ran.add(ex_id)
            return original(*args, **kwargs)

        recorder.__name__ = recorder.__qualname__ = ex_id
        if method:
            setattr(owner, method, recorder)
            return
        for name, mod in list(sys.modules.items()):
            if name.split(".")[0] == "scratchnet" and isinstance(mod, types.ModuleType):
                for attr, value in list(vars(mod).items()):
                    if value is original:
                        setattr(mod, attr, recorder)

    def load(self, request: Dict[str, Any]) -> Dict[str, Any]:
        name = request["module"]
        full = f"{PACKAGE}.{name}"
        broken: Dict[str, str] = {}
        if full in sys.modules:
            return {"ok": True, "value": {"built": "whole", "broken": broken}}
        if not request.get("by_function"):
            try:
                importlib.import_module(full)
                return {"ok": True, "value": {"built": "whole", "broken": broken}}
            except BaseException as err:  # a module that does not import
                sys.modules.pop(full, None)
                reason = f"{type(err).__name__}: {err}{self.where(err)}"
        else:
            reason = "built definition by definition"
        path = Path(self.root) / f"{name}.py"
        module = types.ModuleType(full)
        module.__file__, module.__package__ = str(path), PACKAGE
        sys.modules[full] = module
        text = path.read_text(errors="replace") if path.exists() else ""
        for line, source, names in chunks(text):
            try:
                code = compile("\n" * (line - 1) + source, str(path), "exec")
                exec(code, module.__dict__)
            except BaseException as err:  # the student's definition may raise anything
                where = f" at {path.name} line {getattr(err, 'lineno', None) or line}" \
                    if isinstance(err, SyntaxError) else self.where(err)
                for defined in names:
                    broken[defined] = f"{type(err).__name__}: {err}{where}"
        return {"ok": True, "value": {"built": "by definition", "reason": reason,
                                      "broken": broken}}

    # -- calling ---------------------------------------------------------------------
    def student(self, ex_id: str) -> Any:
        cls_name, _, method = ex_id.partition(".")
        module = sys.modules[f"{PACKAGE}.{self.homes[ex_id]}"]
        obj = getattr(module, cls_name)
        return getattr(obj, method) if method else obj

    def replaced(self, ids: List[str]) -> List[tuple]:
        """Carry-forward: the library's object wherever the student's one is bound."""
        undo = []
        for ex_id in ids:
            cls_name, _, method = ex_id.partition(".")
            module = sys.modules.get(f"{PACKAGE}.{self.homes[ex_id]}")
            own = getattr(module, cls_name, None)
            if method:
                if own is not None:
                    undo.append((own, method, vars(own).get(method)))
                    setattr(own, method, self.library[ex_id])
                continue
            mine = [m for n, m in list(sys.modules.items())
                    if n.split(".")[0] == PACKAGE and isinstance(m, types.ModuleType)]
            if own is None:   # missing or broken: bound where its name is missing
                places = [(m, cls_name) for m in mine if cls_name not in vars(m)]
            else:             # by identity, under any name
                places = [(m, a) for m in mine for a, v in vars(m).items() if v is own]
            for mod, attr in places:
                undo.append((mod, attr, own))
                setattr(mod, attr, self.library[ex_id])
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

    def handed_back(self, value: Any) -> Any:
        """Objects the grader passed in go back as their handles."""
        for number, obj in self.handles.items():
            if value is obj:
                return Handle(number)
        if isinstance(value, (list, tuple)):
            return type(value)(self.handed_back(v) for v in value)
        if isinstance(value, dict):
            return {k: self.handed_back(v) for k, v in value.items()}
        return value

    def target(self, spec: Dict[str, Any]) -> Any:
        if "student" in spec:
            return self.student(spec["student"])
        if "library" in spec:
            return library_object(spec["library"])
        if "new" in spec:
            if spec["side"] == "student":   # the class of a method exercise
                module = sys.modules[f"{PACKAGE}.{self.homes[spec['new']]}"]
                return getattr(module, spec["new"].split(".")[0])
            return library_object(spec["new"])
        return getattr(self.handles[spec["handle"]], spec["method"])

    def call(self, request: Dict[str, Any]) -> Dict[str, Any]:
        self.ran.clear()
        undo = self.replaced(request.get("replace", []))
        limit = float(request.get("limit") or 0)
        try:
            func = self.target(request["target"])
            args = self.resolve(request.get("args", []))
            kwargs = self.resolve(request.get("kwargs", {}))
            start = time.perf_counter()
            if limit and hasattr(signal, "setitimer"):
                signal.setitimer(signal.ITIMER_REAL, limit)
            try:
                if "loop" in request:
                    value = [func(*self.resolve(each)) for each in request["loop"]]
                else:
                    value = func(*args, **kwargs)
            finally:
                if hasattr(signal, "setitimer"):
                    signal.setitimer(signal.ITIMER_REAL, 0)
            seconds = time.perf_counter() - start
            if "new" in request["target"]:
                self.handles[len(self.handles)] = value
                value = Handle(len(self.handles) - 1)
            return {"ok": True, "value": self.handed_back(value),
                    "args": self.handed_back(args),
                    "kwargs": self.handed_back(kwargs), "seconds": seconds,
                    "library": sorted(self.ran)}
        except BaseException as err:  # the student's code may raise anything
            where = self.where(err)
            return {"ok": False, "library": sorted(self.ran), "error": _error(
                err, where, todo=isinstance(err, NotImplementedError) and bool(where))}
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

    def get(self, request: Dict[str, Any]) -> Dict[str, Any]:
        return {"ok": True, "value": self.handed_back(self.at(request))}

    def assign(self, request: Dict[str, Any]) -> Dict[str, Any]:
        self.at(request)[...] = request["value"]
        return {"ok": True, "value": None}

    def where(self, err: BaseException) -> str:
        """The student's file and line where ``err`` was raised ("" if not in it)."""
        frames = [f for f in traceback.extract_tb(err.__traceback__)
                  if self.root and os.path.realpath(f.filename).startswith(self.root)]
        return "" if not frames else (f" at {Path(frames[-1].filename).name} line "
                                      f"{frames[-1].lineno}: "
                                      f"{(frames[-1].line or '').strip()}")


def _error(err: BaseException, where: str = "", todo: bool = False) -> Dict[str, Any]:
    """An answer's ``error``: the exception's type and message, where, todo."""
    return {"type": type(err).__name__, "message": str(err)[:500], "where": where,
            "todo": todo}


def _on_alarm(signum, frame):
    raise CheckTimeout("ran past the time limit")


def _limits(memory_mb: int, cpu_seconds: int) -> None:
    try:
        import resource
    except ImportError:  # not POSIX: only the grader's wall-clock limit applies
        return
    for kind, value in ((resource.RLIMIT_AS, memory_mb * 2**20),
                        (resource.RLIMIT_CPU, cpu_seconds)):
        hard = resource.getrlimit(kind)[1]
        try:
            resource.setrlimit(kind, (value if hard == resource.RLIM_INFINITY
                                      else min(value, hard), hard))
        except (ValueError, OSError):  # macOS: no RLIMIT_AS
            pass


def main(argv: List[str]) -> int:
    """Answer requests until the grader closes the pipe: ``child IN OUT MB CPU``.

    Parameters
    ----------
    argv : list of str
        The request pipe's and the answer pipe's file descriptors, the
        address-space limit in MiB and the CPU-time limit in seconds.

    Returns
    -------
    int
        0 when the requests end, 2 for a wrong invocation.

    Examples
    --------
    >>> main([])
    2
    """
    if len(argv) != 4:
        return 2
    requests, answers = int(argv[0]), int(argv[1])
    _limits(int(argv[2]), int(argv[3]))
    if hasattr(signal, "SIGALRM"):
        signal.signal(signal.SIGALRM, _on_alarm)
    sys.stdout = sys.stderr   # the student's prints are never read as results
    session = _Session()
    ops = {"start": session.start, "load": session.load, "call": session.call,
           "get": session.get, "assign": session.assign}
    while True:
        try:
            request = unpack(read_frame(requests))
        except Exception:  # the grader closed the pipe: grading is over
            return 0
        try:
            answer = ops[request["op"]](request)
        except BaseException as err:  # a request the student's objects broke
            answer = {"ok": False, "error": _error(err)}
        try:
            payload = pack({**answer, "nonce": request.get("nonce")})
        except Exception as err:  # an answer that cannot be sent
            payload = pack({"ok": False, "nonce": request.get("nonce"),
                            "error": _error(err)})
        write_frame(answers, payload)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
