"""The child seen from the grader: a process under limits, and calls that run in it.

:class:`Child` starts the child (:mod:`scratchnet.exercises.child`) in a
session and process group of its own, under a memory and a CPU limit, and
reads each answer with a deadline and a size limit; :meth:`Child.stop` kills
the whole group.  A check calls the student's function as if it were here:
:class:`Remote` sends the arguments, and gives back what came back, writing
the arguments as they are after the call into the caller's arrays (so an
in-place update looks in place).  A call fails its check when an argument
the exercise may not change came back changed: "inputs unchanged" holds for
every exercise.
"""

from __future__ import annotations

import os
import re
import secrets
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from .catalogue import OWN
from .privileges import Account, child_environment
from .probes import Failed, show
from .protocol import ProtocolError, pack, read_frame, unpack, write_frame

__all__ = ["Child", "ChildLost", "LibraryUsed", "Remote", "StudentRaised"]


class StudentRaised(Exception):
    """The student's code raised: ``error`` holds type, message, where, todo.

    Parameters
    ----------
    error : dict
        The child's account: ``type``, ``message``, ``where`` (the student's
        file and line), ``todo`` (a ``NotImplementedError`` of the student's).

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

    Parameters
    ----------
    exercise : str
        The exercise's id.

    Examples
    --------
    >>> str(LibraryUsed("softmax"))
    'softmax'
    """


class ChildLost(Exception):
    """The child died, hung past the limit, or sent a malformed or oversized answer.

    Parameters
    ----------
    message : str
        What happened, for the check it happened in.

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
    account : Account, optional
        Start the child as this account (a grader running as root), in a
        working directory it may read but not write.

    Examples
    --------
    >>> callable(Child)
    True
    """

    def __init__(self, directory: Path, homes: Dict[str, str], refuse: List[str], *,
                 limit: float, memory_mb: int, account: Optional[Account] = None
                 ) -> None:
        self.limit = limit
        self.root = os.path.realpath(directory)
        self.workdir = tempfile.TemporaryDirectory(prefix="scratchnet-child-")
        req_r, self.req_w = os.pipe()
        self.ans_r, ans_w = os.pipe()
        if account is not None:
            os.chmod(self.workdir.name, 0o755)   # root's: nobody reads, never writes
        self.log = Path(self.workdir.name) / "stderr.txt"
        cpu = int(max(60, 40 * limit))
        with open(self.log, "wb") as stderr:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "scratchnet.exercises.child", str(req_r),
                 str(ans_w), str(memory_mb), str(cpu)], pass_fds=(req_r, ans_w),
                start_new_session=True, stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=stderr, cwd=self.workdir.name,
                env=child_environment(), **(account.popen() if account else {}))
        os.close(req_r)
        os.close(ans_w)
        self.request({"op": "start", "dir": str(directory), "library": homes,
                      "refuse": refuse, "watch": [i for i in homes if i not in OWN]},
                     timeout=60)

    def request(self, message: Dict[str, Any], timeout: float | None = None
                ) -> Dict[str, Any]:
        """Send one request and read its answer, or :class:`ChildLost`.

        Parameters
        ----------
        message : dict
            A request (see :mod:`scratchnet.exercises.protocol`).
        timeout : float, optional
            Seconds for the answer (default: the limit per call, plus 2).

        Returns
        -------
        dict
            The answer.

        Raises
        ------
        ChildLost
            Died, late, malformed or oversized: the child is then killed.

        Examples
        --------
        >>> callable(Child.request)
        True
        """
        wait = timeout if timeout is not None else self.limit + 2.0
        nonce = secrets.token_hex(8)   # an answer must echo its request's nonce
        try:
            write_frame(self.req_w, pack({**message, "nonce": nonce}))
            answer = unpack(read_frame(self.ans_r, timeout=wait))
            if not isinstance(answer, dict) or not isinstance(answer.get("ok"), bool) \
                    or answer.get("nonce") != nonce:
                raise ProtocolError("an answer that is not the answer to this request")
            return answer
        except (ProtocolError, OSError) as err:
            tail = self.log.read_text(errors="replace").strip()[-300:] \
                if self.log.exists() else ""
            exited = self.proc.poll() is not None
            where = "" if exited else self.where_stopped()
            self.stop()
            if exited:
                raise ChildLost(f"the grader's child process died (exit status "
                                f"{self.proc.returncode}) while answering {tail}"
                                ) from None
            raise ChildLost(f"{err}: the child was stopped{where} (a hang past the "
                            f"time limit of {self.limit:g} s, or an answer that is not "
                            f"one)") from None

    def where_stopped(self) -> str:
        """The student's line a hanging child is on, as `` at FILE line N`` (or "").

        The child runs with ``PYTHONFAULTHANDLER``: on ``SIGABRT`` it writes its
        Python traceback to its stderr log, also from inside C code (a regular
        expression that backtracks for ever, a huge product) where the per-call
        timer cannot interrupt it.  The innermost frame in the student's files
        is where the loop was stopped.

        Returns
        -------
        str

        Examples
        --------
        >>> callable(Child.where_stopped)
        True
        """
        try:
            os.kill(self.proc.pid, signal.SIGABRT)
            self.proc.wait(timeout=2.0)
        except (OSError, subprocess.TimeoutExpired):
            return ""
        dump = self.log.read_text(errors="replace").rsplit("Fatal Python error", 1)[-1]
        for path, line in re.findall(r'File "([^"]+)", line (\d+)', dump):
            if os.path.realpath(path).startswith(self.root + os.sep):
                return f" at {Path(path).name} line {line}"
        return ""

    def stop(self) -> None:
        """Kill the child's process group and close the pipes.

        Returns
        -------
        None

        Examples
        --------
        >>> callable(Child.stop)
        True
        """
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
        """Send a request about this exercise; the answer, if the student's code ran.

        Parameters
        ----------
        message : dict
            The request (``op`` and its fields).

        Returns
        -------
        dict
            The answer.

        Raises
        ------
        LibraryUsed
            The library's own object of the exercise ran during the call.
        StudentRaised
            The student's code raised.

        Examples
        --------
        >>> callable(Remote.ask)
        True
        """
        answer = self.child.request({**message, "exercise": self.exercise,
                                     "replace": self.replace,
                                     "limit": self.child.limit})
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
                             f"{self.exercise} must not write into {name}: compute a "
                             "new array (or copy it first)")
            _copy_back(arg, new)
        return answer["value"]

    def loop(self, each: List[List[Any]]) -> List[Any]:
        """The call made once per argument list, in the child (a training loop).

        Parameters
        ----------
        each : list of list
            The arguments of each call.

        Returns
        -------
        list
            What each call returned.

        Examples
        --------
        >>> callable(Remote.loop)
        True
        """
        return self.ask({"op": "call", "target": self.target, "loop": each})["value"]
