"""The answering shim: the only grader code that runs beside the student's code.

This file is run on its own, inside the sandbox
(:mod:`scratchnet.exercises.sandbox`), as ``python -I -S shim.py SITE``
(compiled once by the grading process, into the ``shim.pyc`` each child runs):
``SITE`` is a folder that holds NumPy and nothing else, and this file and the
ones it loads from beside it (:mod:`~scratchnet.exercises.frames`,
:mod:`~scratchnet.exercises.definitions`,
:mod:`~scratchnet.exercises.accounts`, ``given.py``) import only the
standard library and NumPy (a test reads their imports).  It never imports
scratchnet: the sandbox does not even hold it.  It imports the submission's
modules and answers the grader's requests on its stdin with frames on its
stdout (the student's prints go to stderr): call this function with these
arguments, build this object, read or write this array.  Every reference
value, comparison, hint and point is the grader's, computed in its own
process; nothing the student's code can do here reaches them.

What the child holds besides the submission is what the grader sent for the
exercise being graded: the reference source of its dependencies
(carry-forward), never its own, and the hand-out's base classes
(``given.py``, served as ``scratchnet.mlp`` and ``scratchnet.optim``).  A
frame the student's code writes itself can at most be the answer its own
function could have given.
"""

from __future__ import annotations
import __future__

import faulthandler
import importlib
import importlib.util
import os
import sys
import time
import types
from typing import Any, Dict, List

if __name__ == "__main__":   # in the sandbox: NumPy is in the folder named first
    sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else "")
import numpy as np

__all__ = ["PACKAGE", "main"]

PACKAGE = "submission"


def _beside(name: str) -> types.ModuleType:
    """A module of the files beside this one: the package's, or loaded by path
    where there is no package (in the sandbox)."""
    if __package__:
        return importlib.import_module(f"{__package__}.{name}")
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


frames, definitions = _beside("frames"), _beside("definitions")
accounts = _beside("accounts")


class _Given:
    """Serves ``scratchnet``, ``scratchnet.mlp``, ``scratchnet.optim`` and
    ``scratchnet.exercises``: the hand-out's base classes and a check cell's
    ``assert_passes`` (``given.py``), nothing else of the library.  A finder and
    loader by their methods (``importlib.abc``'s base classes would cost every
    child the import of ``importlib.resources``)."""

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


class _Session:
    """The child's state: the submission's modules, the references, the handles."""

    def __init__(self, given: types.ModuleType) -> None:
        self.given = given
        self.root = ""
        self.homes: Dict[str, str] = {}
        self.reference: Dict[str, Any] = {}   # carried: exercise id -> object
        self.handles: Dict[int, Any] = {}
        self.calls: Dict[str, List[tuple]] = {}   # carried: the inputs they were given

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
        for line, source, names in definitions.chunks(text):
            try:
                exec(compile("\n" * (line - 1) + source, path, "exec"), module.__dict__)
            except BaseException as err:  # the student's definition may raise anything
                for defined in names:
                    broken[defined] = accounts.account(err, self.root)
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
                    setattr(own, method, accounts.recording(
                        self.reference[ex_id], self.calls.setdefault(ex_id, [])))
                continue
            if own is None:   # missing or broken: bound where its name is missing
                places = [(m, cls_name) for m in mine if cls_name not in vars(m)]
            else:             # by identity, under any name
                places = [(m, a) for m in mine for a, v in vars(m).items() if v is own]
            for mod, attr in places:
                undo.append((mod, attr, own))
                setattr(mod, attr, accounts.recording(
                    self.reference[ex_id], self.calls.setdefault(ex_id, [])))
        return undo

    def evidence(self, request: Dict[str, Any]) -> Any:
        """The student's own ``id`` on each input its carried reference was given,
        beside the reference (:func:`~scratchnet.exercises.accounts.rerun`)."""
        ex_id = request["id"]
        method = ex_id.partition(".")[2]
        return self.handed_back(accounts.rerun(
            self.calls.pop(ex_id, []), self.reference[ex_id],
            lambda args: getattr(type(args[0]), method) if method else
            self.student(ex_id), bool(method),
            lambda err: accounts.account(err, self.root), bool(request.get("count"))))

    def resolve(self, value: Any) -> Any:
        if isinstance(value, frames.Handle):
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
                return frames.Handle(number)
        if depth > frames.MAX_DEPTH:
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
                value = frames.Handle(len(self.handles) - 1)
            return {"value": self.handed_back(value), "args": self.handed_back(args),
                    "kwargs": self.handed_back(kwargs), "seconds": seconds}
        finally:
            for owner, attr, value in reversed(undo):
                if value is None:
                    delattr(owner, attr)
                else:
                    setattr(owner, attr, value)

    def examples(self, request: Dict[str, Any]) -> Any:
        """Run the examples of a student's docstring (an exercise a self-check
        knows by name only): how many, and the first that failed."""
        return accounts.examples(self.target(request["target"]),
                                 float(request.get("limit") or 10))

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
    """``given.py``, beside this file, fresh: the hand-out's base classes."""
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
           "get": session.get, "assign": session.assign,
           "evidence": session.evidence, "examples": session.examples}
    while True:
        try:
            request = frames.unpack(frames.read_frame(requests))
        except frames.ProtocolError:   # the grader closed the pipe: grading is over
            return 0
        try:
            result = ops[request["op"]](request)
            answer = {"ok": True, **(result if request["op"] == "call"
                                     else {"value": result})}
        except BaseException as err:  # the student's code may raise anything
            answer = {"ok": False, "error": accounts.account(err, session.root)}
        try:
            payload = frames.pack(answer)
        except Exception as err:  # an answer that cannot be sent
            payload = frames.pack({"ok": False,
                                   "error": accounts.account(err, session.root)})
        frames.write_frame(answers, payload)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
