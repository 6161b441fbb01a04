"""The grading processes: one clean interpreter, forked once per grading.

Each grading runs in a process of its own (:mod:`~scratchnet.exercises.grader`):
``python -I -S`` with the grader's paths, its job on its stdin, its report on its
stdout, in a session of its own and a private folder.  Starting that interpreter
costs about 0.35 s of CPU, most of it importing NumPy and the grader: as much as
grading a small exercise.  So the first grading of a process starts a *server*
instead, the same ``python -I -S`` that imports the grader and then only forks,
once per grading (as ``multiprocessing``'s forkserver starts its workers).
A fork is what a fresh grading process is after its imports: the server runs
nothing but them, and nothing a fork does comes back to it.

The caller makes a grading's pipes and passes their ends to the server over a
Unix socket (``SCM_RIGHTS``); the fork makes them its standard streams, closes
every other descriptor, starts its own session and moves into the grading's
folder.  The server answers on a socket of the grading's own: the fork's pid,
then its exit status, as ``subprocess.Popen.returncode`` gives it.
:func:`start` returns a :class:`Forked`, which answers ``pid``, ``returncode``
and ``communicate(input, timeout)`` as a ``subprocess.Popen`` does.

A server serves the process that started it, with the environment and paths it
started with: another environment (but for :data:`CHANGING`) or other paths
start another server.  It exits when the caller closes its socket (or dies) and
its last fork has ended.
Where none can run (no ``os.pidfd_open``: not Linux, or Python before 3.9), with
``SCRATCHNET_FORKSERVER=0``, or when one cannot be reached twice in a row, a
grading starts its own interpreter, a ``subprocess.Popen``.
"""

from __future__ import annotations

import atexit
import ctypes
import importlib
import os
import select
import selectors
import socket
import subprocess
import sys
import threading
import time
import traceback
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

__all__ = ["CHANGING", "START_SECONDS", "Forked", "not_dumpable", "serve", "start"]

#: Seconds to wait for a server's first answer (the fork's pid).
START_SECONDS = 60.0
#: Variables that change by themselves while a process runs (pytest names the
#: test running in ``PYTEST_CURRENT_TEST``): a change in them starts no server.
CHANGING = ("PYTEST_CURRENT_TEST",)

_lock = threading.Lock()
_server: Optional[Tuple[Any, subprocess.Popen, socket.socket, int]] = None


def not_dumpable() -> None:
    """No other process of this user may ptrace this one or read its memory (Linux).

    Returns
    -------
    None

    Examples
    --------
    >>> not_dumpable() is None
    True
    """
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)   # PR_SET_DUMPABLE, 0


class Forked:
    """A grading forked by the server: ``pid``, ``returncode`` and ``communicate``.

    Parameters
    ----------
    control : socket.socket
        The server's socket.
    server : int
        The server's pidfd.
    cwd : str
        The folder the grading works in.

    Raises
    ------
    OSError
        The server did not take the grading (it has stopped).

    Examples
    --------
    >>> callable(Forked.communicate)
    True
    """

    def __init__(self, control: socket.socket, server: int, cwd: str) -> None:
        theirs = [*os.pipe(), *os.pipe(), *os.pipe()]   # stdin, stdout, stderr
        self._stdin, self._stdout, self._stderr = theirs[1], theirs[2], theirs[4]
        self._status, status = socket.socketpair()
        self.returncode: Optional[int] = None
        self._server = server
        try:
            socket.send_fds(control, [os.fsencode(cwd)],
                            [theirs[0], theirs[3], theirs[5], status.fileno()])
            self.pid = _number(self._status, server, START_SECONDS, signed=False)
        except OSError:
            self._close_all()
            raise
        finally:
            for fd in (theirs[0], theirs[3], theirs[5]):
                os.close(fd)
            status.close()
        self._input = memoryview(b"")
        self._out: List[bytes] = []
        self._err: List[bytes] = []

    def _close_all(self) -> None:
        for fd in (self._stdin, self._stdout, self._stderr):
            if fd is not None:
                os.close(fd)
        self._stdin = self._stdout = self._stderr = None
        self._status.close()

    def communicate(self, input: Optional[bytes] = None,
                    timeout: Optional[float] = None) -> Tuple[bytes, bytes]:
        """Write ``input``, read both outputs to their end, then the exit status.

        Parameters
        ----------
        input : bytes, optional
            Written to the grading's stdin, which is then closed.
        timeout : float, optional
            Seconds; past them, ``subprocess.TimeoutExpired`` (call again,
            after killing the grading, for the rest).

        Returns
        -------
        (bytes, bytes)
            Everything the grading wrote to its stdout and its stderr.

        Examples
        --------
        >>> callable(Forked.communicate)
        True
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        if input and self._stdin is not None and not self._input:
            self._input = memoryview(input)
        with selectors.DefaultSelector() as chosen:
            if self._stdin is not None:
                chosen.register(self._stdin, selectors.EVENT_WRITE)
            for fd in (self._stdout, self._stderr):
                if fd is not None:
                    chosen.register(fd, selectors.EVENT_READ)
            while chosen.get_map():
                for key, _ in chosen.select(self._left(deadline, timeout)):
                    if self._step(key.fd):
                        chosen.unregister(key.fd)
        if self.returncode is None:
            try:
                self.returncode = _number(self._status, self._server,
                                          self._left(deadline, timeout), signed=True)
            except socket.timeout:
                raise subprocess.TimeoutExpired("grading", timeout) from None
            except OSError:   # no answer: the server stopped before the fork ended
                self.returncode = -1
            self._status.close()
        return b"".join(self._out), b"".join(self._err)

    @staticmethod
    def _left(deadline: Optional[float], timeout: Optional[float]) -> Optional[float]:
        if deadline is None:
            return None
        left = deadline - time.monotonic()
        if left <= 0:
            raise subprocess.TimeoutExpired("grading", timeout)
        return left

    def _step(self, fd: int) -> bool:
        """One write to the stdin or one read of an output; True when it is done."""
        if fd == self._stdin:
            chunk = self._input[:select.PIPE_BUF]   # a write that cannot block
            try:
                self._input = self._input[os.write(fd, chunk):] if chunk else chunk
            except BrokenPipeError:   # the grading stopped reading
                self._input = memoryview(b"")
            if self._input:
                return False
            os.close(fd)
            self._stdin = None
            return True
        data = os.read(fd, 65536)
        if data:
            (self._out if fd == self._stdout else self._err).append(data)
            return False
        os.close(fd)
        if fd == self._stdout:
            self._stdout = None
        else:
            self._stderr = None
        return True


def _number(answers: socket.socket, server: int, timeout: Optional[float],
            signed: bool) -> int:
    """One of the server's answers: four bytes, big-endian.

    A request still queued when the server dies leaves its socket open (the
    kernel frees descriptors in flight later): the server's own end, ``server``
    (a pidfd), says it has gone."""
    data = b""
    while len(data) < 4:
        ready = select.select([answers, server], [], [], timeout)[0]
        if not ready:
            raise socket.timeout("no answer from the grading server")
        more = answers.recv(4 - len(data)) if answers in ready else b""
        if not more:
            raise OSError("the grading server stopped")
        data += more
    return int.from_bytes(data, "big", signed=signed)


def _boot(path: Sequence[str], module: str, function: str, control: int) -> str:
    head = f"import sys; sys.path[:0] = {list(path)!r}; "
    if control < 0:
        return head + f"from {module} import {function}; sys.exit({function}([]))"
    return head + (f"from scratchnet.exercises.forkserver import serve; "
                   f"serve({control}, {module!r}, {function!r})")


def _usable() -> bool:
    return (hasattr(os, "pidfd_open") and hasattr(socket, "send_fds")
            and os.environ.get("SCRATCHNET_FORKSERVER", "1") != "0")


def _stop(server: Tuple[Any, subprocess.Popen, socket.socket, int],
          wait: bool = False) -> None:
    """Close a server's socket and pidfd: it ends once its last fork has.  Reaped
    in a thread, or here (``wait``: at exit, killed past 10 s)."""
    server[2].close()
    os.close(server[3])
    if not wait:
        threading.Thread(target=server[1].wait, daemon=True).start()
        return
    try:
        server[1].wait(timeout=10)
    except subprocess.TimeoutExpired:
        server[1].kill()
        server[1].wait()


@atexit.register
def _stop_at_exit() -> None:
    global _server
    if _server is not None and _server[0][0] == os.getpid():
        _stop(_server, wait=True)
    _server = None


def _connected(key: Any, path: Sequence[str], module: str, function: str
               ) -> Tuple[Any, subprocess.Popen, socket.socket, int]:
    """This process's server for ``key``, started when there is none."""
    global _server
    if _server is not None and _server[0] == key and _server[1].poll() is None:
        return _server
    if _server is not None and _server[0][0] == os.getpid():
        _stop(_server)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    with theirs:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c",
             _boot(path, module, function, theirs.fileno())],
            pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/",
            start_new_session=True)
    _server = (key, proc, ours, os.pidfd_open(proc.pid))
    return _server


def start(path: Sequence[str], module: str, function: str,
          cwd: str) -> Union[Forked, subprocess.Popen]:
    """A grading: ``function([])`` of ``module``, in a fork of this process's server.

    Parameters
    ----------
    path : sequence of str
        Put first on the interpreter's ``sys.path``.
    module, function : str
        What the grading runs; it reads stdin, writes stdout and returns the
        exit status.
    cwd : str
        The folder it works in.

    Returns
    -------
    Forked or subprocess.Popen
        A fork of the server, or, where none can run, an interpreter of its
        own; either is read with ``communicate(input, timeout)``.

    Examples
    --------
    A job larger than the grader reads is refused with exit status 2:

    >>> import os, sys, tempfile
    >>> from pathlib import Path
    >>> import scratchnet
    >>> path = [str(Path(scratchnet.__file__).parents[1]), *sys.path]
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     grading = start(path, "scratchnet.exercises.grader", "main", tmp)
    ...     grading.communicate(b" " * (2**20 + 1), timeout=60), grading.returncode
    ((b'', b''), 2)
    """
    if _usable():
        environment = sorted(i for i in os.environ.items() if i[0] not in CHANGING)
        key = (os.getpid(), sys.executable, tuple(path), module, function,
               tuple(environment))
        for _ in range(2):   # a server that has stopped is replaced, once
            with _lock:
                server = _connected(key, path, module, function)
            try:
                return Forked(server[2], server[3], cwd)
            except OSError:
                with _lock:
                    if _server is server:
                        server[1].kill()
                        server[1].wait()
    return subprocess.Popen(
        [sys.executable, "-I", "-S", "-c", _boot(path, module, function, -1)],
        cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, start_new_session=True)


def serve(control: int, module: str, function: str) -> None:
    """The server: fork ``function`` of ``module`` for each grading asked for.

    Run by the server's interpreter (:func:`start` starts it), never imported
    for anything else.  Each request on the socket ``control`` is the
    grading's folder and four descriptors: its stdin, stdout and stderr, and
    a socket for the answers (the fork's pid, then its exit status).

    Parameters
    ----------
    control : int
        The server's end of the caller's socket.
    module, function : str

    Returns
    -------
    None
        When the caller has closed its socket and the last fork has ended.

    Examples
    --------
    >>> callable(serve)
    True
    """
    not_dumpable()
    run = getattr(importlib.import_module(module), function)
    requests = socket.socket(fileno=control)
    forks: Dict[int, Tuple[int, socket.socket]] = {}   # pidfd: (pid, answers)
    while True:
        waiting = [requests] if requests.fileno() >= 0 else []
        if not waiting and not forks:
            return
        for ready in select.select([*waiting, *forks], [], [])[0]:
            if ready is requests:
                try:
                    message, fds, _, _ = socket.recv_fds(requests, 4096, 4)
                except OSError:
                    message, fds = b"", []
                if len(fds) != 4 or not message:
                    for fd in fds:
                        os.close(fd)
                    if not message:   # the caller has gone
                        requests.close()
                    continue
                pid = os.fork()
                if pid == 0:
                    _grading(run, os.fsdecode(message), fds)
                for fd in fds[:3]:
                    os.close(fd)
                answers = socket.socket(fileno=fds[3])
                forks[os.pidfd_open(pid)] = (pid, answers)
                _answer(answers, pid, signed=False)
            else:
                pid, answers = forks.pop(ready)
                os.close(ready)
                _answer(answers, os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
                answers.close()


def _answer(answers: socket.socket, value: int, signed: bool = True) -> None:
    try:
        answers.sendall(value.to_bytes(4, "big", signed=signed))
    except OSError:   # the caller has stopped listening
        pass


def _grading(run: Any, cwd: str, fds: List[int]) -> None:
    """In the fork: the grading's streams, session and folder, then ``run([])``."""
    code = 1
    try:
        os.setsid()
        for std, fd in enumerate(fds[:3]):
            os.dup2(fd, std)
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))   # the server's and other forks'
        os.chdir(cwd)
        code = run([])
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        traceback.print_exc()
    finally:
        os._exit(code if isinstance(code, int) else 1)
