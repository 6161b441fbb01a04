"""The child seen from the grader: a sandboxed process, and calls that run in it.

:class:`Child` starts the answering shim (:mod:`scratchnet.exercises.shim`)
in the sandbox (:mod:`scratchnet.exercises.sandbox`), one per exercise, and
reads each answer with a deadline and a size limit checked before the frame
is read; :meth:`Child.stop` kills the sandbox and all it started.  A check
calls the student's function as if it were here: :class:`Remote` sends the
arguments, and gives back what came back, writing the arguments as they are
after the call into the caller's arrays (so an in-place update looks in
place).  An argument written into is the "inputs unchanged" check's to
charge: the other checks compare what came back with copies (one mistake,
one charge).
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any, Dict, List, Sequence

import numpy as np

from .frames import ProtocolError, pack, read_frame, unpack, write_frame
from .sandbox import Sandbox

__all__ = ["Child", "ChildLost", "Remote", "StudentRaised", "where"]


def where(location: Dict[str, Any]) -> str:
    """A location in the student's files as a message's tail: `` at FILE line N: TEXT``.

    Parameters
    ----------
    location : dict
        ``file``, ``line`` and optionally ``text`` (empty: not in the student's
        files).

    Returns
    -------
    str

    Examples
    --------
    >>> where({"file": "softmax.py", "line": 3, "text": "return x"})
    ' at softmax.py line 3: return x'
    >>> where({})
    ''
    """
    if not location or not location.get("file"):
        return ""
    text = f" at {location['file']} line {location.get('line', 0)}"
    return text + (f": {location['text']}" if location.get("text") else "")


class StudentRaised(Exception):
    """The student's code raised: ``error`` holds type, message, location, todo.

    Parameters
    ----------
    error : dict
        The child's account: ``type``, ``message``, ``location`` (the
        student's ``file``, ``line`` and ``text``: kept as data so that a
        hand-out's cells can be mapped from it), ``todo`` (a
        ``NotImplementedError`` of the student's).

    Examples
    --------
    >>> StudentRaised({"type": "ValueError", "message": "m"}).where
    ''
    """

    def __init__(self, error: Dict[str, Any]) -> None:
        super().__init__(f"{error.get('type')}: {error.get('message')}")
        self.error = error
        self.where = where(error.get("location") or {})


class ChildLost(Exception):
    """The child died, hung past the limit, or sent a malformed or oversized answer.

    Parameters
    ----------
    message : str
        What happened, for the check it happened in.
    timed_out : bool, default False
        It ran past the time limit (the exercise's other checks are skipped).
    location : dict, optional
        Where in the student's files it was stopped.

    Examples
    --------
    >>> ChildLost("no answer within 12 s", timed_out=True).timed_out
    True
    """

    def __init__(self, message: str, timed_out: bool = False,
                 location: Dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.timed_out, self.location = timed_out, location or {}


class Child:
    """One sandboxed child: started for one exercise, answering over two pipes.

    Parameters
    ----------
    box : Sandbox
        The grading process's sandbox.
    homes : dict
        Exercise id -> the submission's module that defines it.
    references : dict
        The carried references, id -> source
        (:func:`~scratchnet.exercises.carried.carried`).
    limit : float
        Seconds per call.

    Examples
    --------
    >>> callable(Child)
    True
    """

    count = 0

    def __init__(self, box: Sandbox, homes: Dict[str, str],
                 references: Dict[str, str], *, limit: float) -> None:
        self.box, self.limit = box, limit
        Child.count += 1
        self.log = Path(box.workdir) / f"child-{Child.count}.log"
        with open(self.log, "wb") as log:
            self.proc = box.start(log.fileno())
        os.set_blocking(self.proc.stdin.fileno(), False)   # writes have a deadline too
        self.request({"op": "start", "package": box.root, "homes": homes,
                      "references": references}, timeout=60)

    def request(self, message: Dict[str, Any], timeout: float | None = None
                ) -> Dict[str, Any]:
        """Send one request and read its answer, or :class:`ChildLost`.

        Parameters
        ----------
        message : dict
            A request (see :mod:`scratchnet.exercises.protocol`).
        timeout : float, optional
            Seconds for the answer (default: the limit per call, plus 0.5 for
            the transfer: the grader's clock is the only limit).

        Returns
        -------
        dict
            The answer: ``ok`` and ``value``, or ``error``.

        Raises
        ------
        ChildLost
            Died, late, malformed or oversized: the child is then killed.

        Examples
        --------
        >>> callable(Child.request)
        True
        """
        wait = timeout if timeout is not None else self.limit + 0.5   # the transfer
        try:
            start = time.monotonic()
            write_frame(self.proc.stdin.fileno(), pack(message), timeout=wait)
            answer = unpack(read_frame(self.proc.stdout.fileno(), timeout=max(
                0.0, wait - (time.monotonic() - start))))
            if not isinstance(answer, dict) or not isinstance(answer.get("ok"), bool):
                raise ProtocolError("an answer that is not one")
            return answer
        except (ProtocolError, OSError) as err:
            exited = self.proc.poll() is not None
            late = not exited and ("no answer within" in str(err)
                                   or "not read within" in str(err))
            self.stop()
            stopped = self.where_stopped()
            if exited:
                raise ChildLost(f"the child process died (exit status "
                                f"{self.proc.returncode}){where(stopped)}",
                                location=stopped) from None
            if late:
                raise ChildLost(f"ran past the time limit ({self.limit:g} s), "
                                f"stopped{where(stopped) or ' (where is unknown)'}",
                                timed_out=True, location=stopped) from None
            raise ChildLost(f"{err}: the child was stopped", location=stopped) from None

    def tail(self, size: int = 65536) -> str:
        """The end of the child's log (its prints, its tracebacks).

        Parameters
        ----------
        size : int
            Bytes read at most.

        Returns
        -------
        str

        Examples
        --------
        >>> callable(Child.tail)
        True
        """
        try:
            with open(self.log, "rb") as f:
                f.seek(max(0, os.path.getsize(self.log) - size))
                return f.read(size).decode(errors="replace")
        except OSError:
            return ""

    def where_stopped(self) -> Dict[str, Any]:
        """Where the student's code was when the child was stopped or died.

        The shim has ``faulthandler`` dump the Python stack to the log when a
        call runs past its limit, also from inside C code; the innermost frame
        in the student's files is where it was.

        Returns
        -------
        dict
            ``file`` and ``line``, or empty.

        Examples
        --------
        >>> callable(Child.where_stopped)
        True
        """
        root = self.box.root.rstrip("/") + "/"
        dump = self.tail().rsplit("Timeout (", 1)[-1]
        for path, line in re.findall(r'File "([^"]+)", line (\d+)', dump):
            if path.startswith(root):
                return {"file": path[len(root):], "line": int(line)}
        return {}

    def stop(self) -> None:
        """Kill the child's sandbox and everything in it; close the pipes.

        Returns
        -------
        None

        Examples
        --------
        >>> callable(Child.stop)
        True
        """
        self.box.end(self.proc)
        for pipe in (self.proc.stdin, self.proc.stdout):
            try:
                pipe.close()
            except OSError:
                pass


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
        The exercise being graded.
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
        StudentRaised
            The student's code raised.

        Examples
        --------
        >>> callable(Remote.ask)
        True
        """
        answer = self.child.request({**message, "replace": self.replace,
                                     "limit": self.child.limit})
        if not answer["ok"]:
            raise StudentRaised(answer.get("error") or {})
        return answer

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        answer = self.ask({"op": "call", "target": self.target, "args": list(args),
                           "kwargs": kwargs})
        for arg, new in zip(args, answer.get("args") or []):
            _copy_back(arg, new)   # charged by the "inputs unchanged" check alone
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

    def examples(self) -> Dict[str, Any]:
        """Run the examples of the student's docstring in the child.

        Only for an exercise a self-check knows by name
        (:func:`~scratchnet.exercises.own.examples_only`): the examples are the
        student's text, so they run where the student's code runs, never in the
        grading process.

        Returns
        -------
        dict
            ``examples`` (how many) and ``failed`` (the first that printed
            something else, as doctest reports it; "" when none).

        Raises
        ------
        StudentRaised
            The student's code raised (a stub: ``NotImplementedError``).

        Examples
        --------
        >>> callable(Remote.examples)
        True
        """
        return self.ask({"op": "examples", "target": self.target})["value"]
