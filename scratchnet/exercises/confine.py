"""How a child is confined without namespaces: a copy, a uid of its own, Landlock.

The pieces :mod:`scratchnet.exercises.sandbox` builds its sandboxes from.
:func:`stage` copies a submission as plain files (no link is followed), so
that everything the grader and the child read of it is that copy.
:func:`dedicated_uid` gives each grading process a uid no account and no
process uses: ``RLIMIT_NPROC`` counts processes per uid, and ``kill(-1,
SIGKILL)`` run as that uid (:func:`kill_uid`) ends everything it started.
:func:`landlock` confines a process and all it starts to a few folders
(Linux 5.13+): where bubblewrap cannot run, the dedicated uid can then open
nothing of the grader's.
"""

from __future__ import annotations

import ctypes
import os
import pwd
import shutil
import signal
import stat
import sys
from pathlib import Path
from typing import Any, List, Sequence

__all__ = ["LANDLOCK", "MAX_FILES", "MAX_FILE_BYTES", "dedicated_uid", "kill_uid",
           "landlock", "leave_network", "processes_of", "stage", "uid_for"]

#: The largest file of a submission that is copied (a module is a few kB).
MAX_FILE_BYTES = 4 * 2**20
#: The most files and folders of a submission that are copied, 8 folders deep.
MAX_FILES = 1000
_UID_BASE = 0x5C000000    # dedicated uids: this plus a grading process's pid


def stage(upload: Any, into: Any) -> Path:
    """A copy of an upload: plain files and folders only, each file size-bounded.

    Links inside it, FIFOs, devices and sockets are left out (a link to
    ``/dev/zero`` or to another student's folder is never followed), as are
    caches (the upload itself, named by who grades, may be a link); a file
    larger than :data:`MAX_FILE_BYTES` is cut to that size, and at most
    :data:`MAX_FILES` files and folders, 8 deep, are copied.  Everything the
    grader reads of a submission, it reads from this copy.

    Parameters
    ----------
    upload : str or Path
        A file or a folder.
    into : str or Path
        An empty folder for the copy; the copy is ``into / upload.name``.

    Returns
    -------
    Path

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = Path(tmp, "hw").mkdir()
    ...     _ = Path(tmp, "hw", "a.py").write_text("x = 1")
    ...     os.symlink("/dev/zero", Path(tmp, "hw", "b.py"))
    ...     copy = stage(Path(tmp, "hw"), Path(tmp, "out"))
    ...     sorted(p.name for p in copy.iterdir())
    ['a.py']
    """
    upload, into = Path(upload), Path(into)
    into.mkdir(parents=True, exist_ok=True)
    target = into / (upload.name or "submission")
    upload = upload.resolve()   # the upload itself is named by who grades: followed
    count = [0]

    def copy(src: Path, dst: Path, depth: int = 0) -> None:
        mode = os.lstat(src).st_mode
        if count[0] >= MAX_FILES or depth > 8:   # a bounded copy: files and folders
            return
        count[0] += 1
        if stat.S_ISDIR(mode):
            dst.mkdir()
            for entry in sorted(os.listdir(src)):
                if entry not in ("__pycache__", ".git"):
                    copy(src / entry, dst / entry, depth + 1)
        elif stat.S_ISREG(mode):
            fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            with os.fdopen(fd, "rb") as f:
                dst.write_bytes(f.read(MAX_FILE_BYTES))

    copy(upload, target)
    return target


def dedicated_uid(serial: int = 0) -> int:
    """A uid for one child of this grading process: no account, no running process.

    Parameters
    ----------
    serial : int
        The child's number in this grading process (each child a uid of its
        own: nothing one child left running or counted meets the next).

    Returns
    -------
    int
        :func:`uid_for` this process's pid and ``serial`` (pids are unique
        among running processes, so concurrent grading processes get
        different uids), or the next one free.

    Examples
    --------
    >>> dedicated_uid() >= 0x5C000000
    True
    """
    serial = serial % 256
    uid = uid_for(os.getpid(), serial)
    while _has_account(uid) or processes_of(uid):
        serial = (serial + 1) % 256
        uid = uid_for(os.getpid(), serial)
    return uid


def uid_for(pid: int, serial: int = 0) -> int:
    """The dedicated uid of the grading process ``pid``'s child number ``serial``.

    Parameters
    ----------
    pid : int
    serial : int, default 0
        Below 256.

    Returns
    -------
    int

    Examples
    --------
    >>> uid_for(7) - uid_for(0), uid_for(0, 1) - uid_for(0)
    (7, 4194304)
    """
    return _UID_BASE + pid + (serial << 22)   # a pid is below 2**22


def _has_account(uid: int) -> bool:
    try:
        pwd.getpwuid(uid)
        return True
    except KeyError:
        return False


def processes_of(uid: int) -> List[int]:
    """The live processes of ``uid`` (zombies, already dead, left out).

    Parameters
    ----------
    uid : int

    Returns
    -------
    list of int
        Their pids.

    Examples
    --------
    >>> os.getpid() in processes_of(os.getuid())
    True
    """
    found = []
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid != uid:
                    continue
                with open(f"/proc/{entry}/stat") as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if state not in ("Z", "X"):
                found.append(int(entry))
    return found


def kill_uid(uid: int) -> None:
    """Kill every process of ``uid``: ``kill(-1, SIGKILL)`` as that uid, until none.

    Run by root only (the fork sets its uid).  Then the uid's files in the
    shared temporary folders are removed.

    Parameters
    ----------
    uid : int

    Returns
    -------
    None

    Examples
    --------
    >>> callable(kill_uid)
    True
    """
    for _ in range(100):
        if not processes_of(uid):
            break
        pid = os.fork()
        if pid == 0:   # the fork becomes the uid and signals all it may: its own,
            try:       # itself included; it never returns into the grader's code
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
                os.kill(-1, signal.SIGKILL)
            finally:
                os.kill(os.getpid(), signal.SIGKILL)
        os.waitpid(pid, 0)
    for shared in ("/tmp", "/var/tmp", "/dev/shm"):
        _remove_owned(shared, uid)


def _remove_owned(folder: str, uid: int) -> None:
    try:
        entries = os.listdir(folder)
    except OSError:
        return
    for name in entries:
        path = os.path.join(folder, name)
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if info.st_uid == uid:
            if stat.S_ISDIR(info.st_mode):
                shutil.rmtree(path, ignore_errors=True)
            else:
                try:
                    os.unlink(path)
                except OSError:
                    pass


_LANDLOCK_READ = (1 << 0) | (1 << 2) | (1 << 3)   # execute, read files, read folders
_LANDLOCK_FILE = (1 << 0) | (1 << 1) | (1 << 2) | (1 << 14) | (1 << 15)


_LIBC = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") \
    else None
if _LIBC is not None:
    _LIBC.syscall.restype = ctypes.c_long


class _Beneath(ctypes.Structure):
    """``struct landlock_path_beneath_attr`` (packed)."""

    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


#: Landlock's ABI version here (Linux 5.13+), or 0 where the kernel has none.
LANDLOCK = max(0, int(_LIBC.syscall(444, None, 0, 1))) if _LIBC is not None else 0


def leave_network() -> bool:
    """Put this process in a network namespace of its own (root only); False if refused.

    Returns
    -------
    bool

    Examples
    --------
    >>> callable(leave_network)
    True
    """
    return _LIBC is not None and _LIBC.unshare(0x40000000) == 0   # CLONE_NEWNET


def landlock(read: Sequence[str], write: Sequence[str],
             listed: Sequence[str] = ()) -> None:
    """Confine this process and all it starts to ``read`` and ``write`` (Landlock).

    Irreversible: no file outside these folders can be opened, executed or
    listed; with ABI 4+ no TCP, with ABI 6+ no signal to a process outside.
    Run in the child, as the dedicated uid, just before it starts Python.

    Parameters
    ----------
    read : sequence of str
        Folders and files that may be read and executed.
    write : sequence of str
        Folders where anything may be done.
    listed : sequence of str, optional
        Folders whose entries may be listed, no more (the files in them only
        where ``read`` names them).

    Returns
    -------
    None

    Raises
    ------
    OSError
        The kernel refused a step.

    Examples
    --------
    >>> callable(landlock)
    True
    """
    libc = _LIBC
    handled = (1 << 13) - 1
    handled |= (1 << 13 if LANDLOCK >= 2 else 0) | (1 << 14 if LANDLOCK >= 3 else 0) \
        | (1 << 15 if LANDLOCK >= 5 else 0)
    fields = [handled, 3 if LANDLOCK >= 4 else 0, 3 if LANDLOCK >= 6 else 0]
    size = 8 * (1 if LANDLOCK < 4 else 2 if LANDLOCK < 6 else 3)
    attr = (ctypes.c_uint64 * 3)(*fields)
    ruleset = libc.syscall(444, ctypes.byref(attr), size, 0)
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")

    for paths, access in ((read, _LANDLOCK_READ), (write, handled),
                          (listed, 1 << 3)):
        for path in paths:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            allowed = access if os.path.isdir(path) else access & _LANDLOCK_FILE
            rule = _Beneath(allowed & handled, fd)
            done = libc.syscall(445, ruleset, 1, ctypes.byref(rule), 0)
            os.close(fd)
            if done < 0:
                raise OSError(ctypes.get_errno(), f"landlock_add_rule {path}")
    if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.syscall(446, ruleset, 0) < 0:
        raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    os.close(ruleset)
