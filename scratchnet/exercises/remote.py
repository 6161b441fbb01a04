"""The student's side as a check sees it: calls that run in the child, and nothing left after.

A check calls the student's function as if it were here: :class:`Remote`
sends the arguments to the child (:mod:`scratchnet.exercises.child`), and
gives back what came back, writing the arguments as they are after the
call into the caller's arrays (so an in-place update looks in place, and a
function that overwrites its input is seen doing it).  Every call fails its
check when an argument the exercise may not change came back changed.  For
a method exercise the check builds objects in the child and calls their
methods (:class:`Objects`); for the student's own tests the same interface
runs in process (:class:`Local`).

:class:`Child` starts the child in a session and process group of its own,
under a memory and a CPU limit, and :func:`reap` kills it and every
descendant: on Linux the grading process is a child subreaper
(``prctl(PR_SET_CHILD_SUBREAPER)``), so a grandchild that called ``setsid``
comes back to it when its parent dies, and is killed too.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Sequence

import numpy as np

from .probes import Failed, show
from .protocol import Handle, ProtocolError, pack, read_frame, unpack, write_frame

__all__ = ["Child", "ChildLost", "LibraryUsed", "Local", "Objects", "Remote",
           "StudentRaised", "become_reaper", "reap"]


class StudentRaised(Exception):
    """The student's code raised: ``error`` holds type, message, where, todo.

    Examples
    --------
    >>> StudentRaised({"type": "ValueError", "message": "m", "where": ""}).error["type"]
    'ValueError'
    """

    def __init__(self, error: Dict[str, Any]) -> None:
        super().__init__(f"{error.get('type')}: {error.get('message')}")
        self.error = error


class LibraryUsed(Exception):
    """The library's own object of the exercise ran during its check.

    Examples
    --------
    >>> str(LibraryUsed("softmax"))
    'softmax'
    """


class ChildLost(Exception):
    """The child died, hung past the limit, or sent a malformed or oversized answer.

    Examples
    --------
    >>> str(ChildLost("no answer within 12 s"))
    'no answer within 12 s'
    """


class Child:
    """The child process and its two pipes.

    Parameters
    ----------
    directory : Path
        The submission's package folder.
    homes : dict
        Exercise id -> chapter, for every watched library object.
    refuse : list of str
        Modules the student's code may not import.
    limit : float
        Seconds per call.
    memory_mb : int
        Address-space limit (Linux).

    Examples
    --------
    >>> callable(Child)
    True
    """

    def __init__(self, directory: Path, homes: Dict[str, str], refuse: List[str], *,
                 limit: float, memory_mb: int) -> None:
        self.limit, self.loaded = limit, {}
        self.workdir = tempfile.TemporaryDirectory(prefix="scratchnet-child-")
        req_r, self.req_w = os.pipe()
        self.ans_r, ans_w = os.pipe()
        env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
               "MKL_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1",
               "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2]),
                                              os.environ.get("PYTHONPATH", "")])}
        self.log = Path(self.workdir.name) / "stderr.txt"
        cpu = int(max(60, 40 * limit))
        with open(self.log, "wb") as stderr:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "scratchnet.exercises.child", str(req_r),
                 str(ans_w), str(memory_mb), str(cpu)], pass_fds=(req_r, ans_w),
                start_new_session=True, stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=stderr, cwd=self.workdir.name, env=env)
        os.close(req_r)
        os.close(ans_w)
        self.request({"op": "start", "dir": str(directory), "library": homes,
                      "refuse": refuse}, timeout=60)

    def request(self, message: Dict[str, Any], timeout: float | None = None
                ) -> Dict[str, Any]:
        """Send one request; the answer, or :class:`ChildLost` (the child is then killed)."""
        wait = timeout if timeout is not None else self.limit + 2.0
        try:
            write_frame(self.req_w, pack(message))
            answer = unpack(read_frame(self.ans_r, timeout=wait))
            if not isinstance(answer, dict) or not isinstance(answer.get("ok"), bool):
                raise ProtocolError("an answer that is not an answer")
            return answer
        except (ProtocolError, OSError) as err:
            self.stop()
            if self.proc.returncode not in (None, 0, -signal.SIGKILL):
                tail = self.log.read_text(errors="replace").strip()[-300:]
                raise ChildLost(f"the grader's child process died (exit status "
                                f"{self.proc.returncode}) {tail}") from None
            raise ChildLost(f"{err}: a hang past the time limit of {self.limit:g} s, a "
                            f"crash or an answer that is not one") from None

    def stop(self) -> None:
        """Kill the child's process group and close the pipes."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                self.proc.kill()
        self.proc.wait()
        for fd in (self.req_w, self.ans_r):
            try:
                os.close(fd)
            except OSError:
                pass
        self.req_w = self.ans_r = -1
        self.workdir.cleanup()


def become_reaper() -> bool:
    """Make this process a child subreaper and not dumpable (Linux); False elsewhere.

    Orphaned descendants are re-parented to it, so :func:`reap` finds them;
    other processes of the same user cannot ptrace it or read its memory.

    Returns
    -------
    bool

    Examples
    --------
    >>> isinstance(become_reaper.__doc__, str)
    True
    """
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    set_subreaper, set_dumpable = 36, 4
    return libc.prctl(set_subreaper, 1, 0, 0, 0) == 0 and \
        libc.prctl(set_dumpable, 0, 0, 0, 0) == 0


def _children(pid: int) -> List[int]:
    found = []
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else []:
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def reap(rounds: int = 50) -> int:
    """Kill every descendant of this process; the number killed.

    Each round kills the children (and their process groups) and collects
    them; as a subreaper, their orphans become children for the next round.

    Parameters
    ----------
    rounds : int
        Rounds with no child left end it early (two in a row).

    Returns
    -------
    int

    Examples
    --------
    >>> reap() >= 0
    True
    """
    killed, quiet = 0, 0
    for _ in range(rounds):
        pids = _children(os.getpid())
        if not pids:
            quiet += 1
            if quiet >= 2:
                break
            time.sleep(0.01)
            continue
        quiet = 0
        for pid in pids:
            for kill in (lambda p: os.killpg(os.getpgid(p), signal.SIGKILL),
                         lambda p: os.kill(p, signal.SIGKILL)):
                try:
                    kill(pid)
                except OSError:
                    pass
            killed += 1
        for pid in pids:
            try:
                os.waitpid(pid, 0)
            except OSError:
                pass
    return killed


def _changed(before: Any, after: Any) -> bool:
    if isinstance(before, (tuple, list)) and isinstance(after, (tuple, list)):
        return len(before) != len(after) or any(map(_changed, before, after))
    if isinstance(before, np.ndarray):
        return not (isinstance(after, np.ndarray) and after.shape == before.shape
                    and np.array_equal(after, before, equal_nan=True))
    if isinstance(before, dict) and isinstance(after, dict):
        return any(_changed(v, after.get(k)) for k, v in before.items())
    return False


def _copy_back(before: Any, after: Any) -> None:
    """Write what the child's arrays became into the caller's (in-place semantics)."""
    if isinstance(before, np.ndarray) and isinstance(after, np.ndarray) and \
            after.shape == before.shape and before.flags.writeable:
        before[...] = after
    elif isinstance(before, (tuple, list)) and isinstance(after, (tuple, list)):
        for b, a in zip(before, after):
            _copy_back(b, a)
    elif isinstance(before, dict) and isinstance(after, dict):
        for k, v in before.items():
            _copy_back(v, after.get(k))


class Remote:
    """The student's function (or a method, or the library's) called in the child.

    Parameters
    ----------
    child : Child
    exercise : str
        The exercise being graded (its library object must not run).
    target : dict
        What to call (see :mod:`scratchnet.exercises.protocol`).
    replace : sequence of str
        Carry-forward: exercises whose student object is replaced.
    names : sequence of str
        The arguments' names, for messages.
    mutable : sequence of int
        Positions of arguments the call may change (an update's ``param``).

    Examples
    --------
    >>> callable(Remote)
    True
    """

    def __init__(self, child: Child, exercise: str, target: Dict[str, Any],
                 replace: Sequence[str] = (), names: Sequence[str] = (),
                 mutable: Sequence[int] = ()) -> None:
        self.child, self.exercise, self.target = child, exercise, target
        self.replace, self.names, self.mutable = list(replace), names, set(mutable)

    def ask(self, message: Dict[str, Any]) -> Dict[str, Any]:
        answer = self.child.request({**message, "exercise": self.exercise,
                                     "replace": self.replace, "limit": self.child.limit})
        if self.exercise in answer.get("library", ()):
            raise LibraryUsed(self.exercise)
        if not answer["ok"]:
            raise StudentRaised(answer.get("error") or {})
        return answer

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        answer = self.ask({"op": "call", "target": self.target, "args": list(args),
                           "kwargs": kwargs})
        after = answer.get("args") or []
        for i, (arg, new) in enumerate(zip(args, after)):
            if i not in self.mutable and _changed(arg, new):
                name = self.names[i] if i < len(self.names) else f"argument {i + 1}"
                raise Failed(f"{self.exercise} changed its argument {name}: it was "
                             f"{show(arg)}, it is now {show(new)}",
                             f"do not write into {name}: compute a new array (or copy "
                             "it first)")
            _copy_back(arg, new)
        return answer["value"]

    def loop(self, each: List[List[Any]]) -> List[Any]:
        """The call made once per argument list, in the child; the values."""
        return self.ask({"op": "call", "target": self.target, "loop": each})["value"]


class Objects:
    """Objects built in the child: the student's class of a method exercise, the library's.

    The interface the checks of method exercises use; :class:`Local` has
    the same one.

    Examples
    --------
    >>> callable(Objects)
    True
    """

    def __init__(self, child: Child, exercise: str, replace: Sequence[str] = ()) -> None:
        self.child, self.exercise, self.replace = child, exercise, list(replace)

    def remote(self, target, **kw) -> Remote:
        return Remote(self.child, self.exercise, target, self.replace, **kw)

    def new(self, *args: Any, library: str = "", **kwargs: Any) -> Handle:
        """Build the student's class (or ``library="mlp.TwoLayerMLP"``) in the child."""
        target = {"new": library or self.exercise, "side": "library" if library
                  else "student"}
        return self.remote(target)(*args, **kwargs)

    def method(self, obj: Handle, name: str, *, names: Sequence[str] = (),
               mutable: Sequence[int] = ()) -> Remote:
        return self.remote({"handle": obj.number, "method": name}, names=names,
                           mutable=mutable)

    def function(self, name: str, *, library: bool = False, names=(), mutable=()):
        target = {"library": name} if library else {"student": name}
        return self.remote(target, names=names, mutable=mutable)

    def params_of(self, obj: Handle) -> Handle:
        """The object's ``params``, to pass as an argument (an optimiser's)."""
        return Handle(obj.number, "params")

    def get(self, obj: Handle, *path: str) -> Any:
        return Remote.ask(self.remote({}), {"op": "get", "handle": obj.number,
                                            "path": list(path)})["value"]

    def assign(self, obj: Handle, path: Sequence[str], value: Any) -> None:
        Remote.ask(self.remote({}), {"op": "assign", "handle": obj.number,
                                     "path": list(path), "value": value})


class Local:
    """The same interface in this process, for a student's own tests (``assert_passes``).

    Parameters
    ----------
    obj : callable or class
        The student's function, or the student's class of a method exercise.

    Examples
    --------
    >>> import numpy as np
    >>> Local(np.abs).function("abs")(np.array([-1.0]))
    array([1.])
    """

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def new(self, *args: Any, library: str = "", **kwargs: Any) -> Any:
        if library:
            import importlib

            module, _, name = library.rpartition(".")
            cls = getattr(importlib.import_module(f"scratchnet.{module}"), name)
            return cls(*args, **kwargs)
        return self.obj(*args, **kwargs)

    def method(self, obj: Any, name: str, **_: Any) -> Any:
        return getattr(obj, name)

    def function(self, name: str, *, library: bool = False, **_: Any) -> Any:
        if library:
            import importlib

            module, _, attr = name.rpartition(".")
            return getattr(importlib.import_module(f"scratchnet.{module}"), attr)
        return self.obj

    def params_of(self, obj: Any) -> Any:
        return obj.params

    def get(self, obj: Any, *path: str) -> Any:
        value = getattr(obj, path[0])
        for key in path[1:]:
            value = value[key]
        return value

    def assign(self, obj: Any, path: Sequence[str], value: Any) -> None:
        self.get(obj, *path)[...] = value
