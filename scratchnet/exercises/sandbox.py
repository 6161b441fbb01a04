"""The sandbox the student's code runs in, and the threat model it answers.

A submission is untrusted code written by someone who gains from a higher
grade.  So the process that runs it (the *child*) holds nothing worth
stealing, and the grading process holds everything but touches nothing the
child can write:

- **What the child sees.**  Python's standard library, NumPy (bound alone into
  a private site folder), the answering shim (:mod:`~scratchnet.exercises.shim`,
  standard library and NumPy only), a read-only copy of the submission and a
  private, size-limited ``/tmp``.  No scratchnet, no answer key, no
  instructor's file, no other submission, no results, no network.
- **How long and how much.**  Hard limits (soft = hard, so the child cannot
  raise them back) on address space, CPU time, file size, open files and
  processes (``RLIMIT_NPROC``); the wall clock is the grader's, which kills
  the whole sandbox with SIGKILL when an answer is late.
- **What survives it.**  Nothing: every process the child started dies with
  it (a PID namespace, or ``kill(-1, SIGKILL)`` as its own uid), and a
  dedicated uid's files in the shared temporary folders are removed.

Three ways to get there, chosen once per run (:func:`choose`):

``bubblewrap``
    Linux with bubblewrap (``bwrap``) and user namespaces: new user, PID,
    mount, network, IPC, UTS and cgroup namespaces, all capabilities
    dropped, ``--die-with-parent``, ``--new-session``, an empty environment;
    nothing writable but a 64 MiB ``/tmp``.
    As root, bwrap itself runs as a dedicated unprivileged uid.
``dedicated uid``
    Root where bubblewrap cannot run (a container without user namespaces, as
    Gradescope's may be): the child runs as a uid of its own (one per grading
    process, so concurrent jobs cannot signal or count each other) with no
    groups but one of its own, the hard limits, a private ``TMPDIR``, and
    ``python -I -S`` with NumPy alone on its path.  Where the kernel has
    Landlock (Linux 5.13+, :func:`landlock`), the child can open nothing but
    the system's libraries, its Python, NumPy and its own copies; without it,
    files every user may read (the installed Python packages, scratchnet
    among them) stay readable by path, and the report says so.
``none``
    No isolation (``--no-sandbox``): the grader's own user runs the child.
    Only for grading one's own code, or accepting the risk in writing.

A normal user without bubblewrap is refused, with the reason and the
options: grading another person's code as oneself gives it one's files.
``SCRATCHNET_SANDBOX`` (``bubblewrap``, ``uid`` or ``none``) forces one way
(tests and CI run both); a forced way that cannot run is an error, never a
fall-back.
"""

from __future__ import annotations

import ctypes
import functools
import glob
import os
import pwd
import shutil
import signal
import site
import stat
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import numpy

try:
    import resource
except ImportError:   # not POSIX: no sandbox runs there (see choose)
    resource = None

__all__ = ["KINDS", "LANDLOCK", "Sandbox", "SandboxRefused", "choose", "dedicated_uid",
           "describe", "hidden_paths", "kill_uid", "landlock", "probe", "stage"]

#: The ways to isolate the child, as the report names them.
KINDS = ("bubblewrap", "dedicated uid", "none")
#: The largest file of a submission that is copied (a module is a few kB).
MAX_FILE_BYTES = 4 * 2**20
MAX_FILES = 1000
_SHIM = Path(__file__).with_name("shim.py")
_GIVEN = Path(__file__).with_name("given.py")
_UID_BASE = 0x5C000000    # dedicated uids: this plus a grading process's pid


class SandboxRefused(ValueError):
    """No sandbox can run here, and the grader will not run the code without one.

    Parameters
    ----------
    message : str
        Why, and the options.

    Examples
    --------
    >>> str(SandboxRefused("no bubblewrap"))
    'no bubblewrap'
    """


def stage(upload: Any, into: Any) -> Path:
    """A copy of an upload: plain files and folders only, each file size-bounded.

    Links inside it, FIFOs, devices and sockets are left out (a link to
    ``/dev/zero`` or to another student's folder is never followed), as are
    caches (the upload itself, named by who grades, may be a link); a file
    larger than :data:`MAX_FILE_BYTES` is cut to that size.  Everything the
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

    def copy(src: Path, dst: Path) -> None:
        mode = os.lstat(src).st_mode
        if stat.S_ISDIR(mode):
            dst.mkdir()
            for entry in sorted(os.listdir(src)):
                if entry not in ("__pycache__", ".git"):
                    copy(src / entry, dst / entry)
        elif stat.S_ISREG(mode) and count[0] < MAX_FILES:
            count[0] += 1
            fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            with os.fdopen(fd, "rb") as f:
                dst.write_bytes(f.read(MAX_FILE_BYTES))

    copy(upload, target)
    return target


@functools.lru_cache(maxsize=1)
def _bwrap() -> str:
    return shutil.which("bwrap") or ""


def _numpy_dirs() -> List[Path]:
    """NumPy's package folder and, where its wheel has one, ``numpy.libs``."""
    home = Path(numpy.__file__).resolve().parent
    libs = home.with_name("numpy.libs")
    return [home, *([libs] if libs.is_dir() else [])]


def _allowed_dirs(allow: Sequence[str]) -> List[Path]:
    """The package folders (and their ``.libs``) of modules an assignment allows."""
    import importlib.util

    found = []
    for name in dict.fromkeys(a.split(".")[0] for a in allow):
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        if spec is None or not spec.submodule_search_locations or name == "numpy":
            continue
        home = Path(next(iter(spec.submodule_search_locations))).resolve()
        libs = home.with_name(f"{name}.libs")
        found += [home, *([libs] if libs.is_dir() else [])]
    return found


def _hidden() -> List[str]:
    """Folders of Python packages under what the sandbox binds: mounted empty there."""
    found = {*site.getsitepackages(), sysconfig.get_paths()["purelib"],
             sysconfig.get_paths()["platlib"],
             *glob.glob("/usr/lib/python3*/*-packages"),
             *glob.glob("/usr/local/lib/python3*/*-packages"),
             *glob.glob(os.path.join(sys.base_prefix, "lib", "python3*", "*-packages")),
             str(Path(__file__).resolve().parents[2])}
    return sorted(p for p in {os.path.realpath(f) for f in found} if os.path.isdir(p))


def _bound() -> List[str]:
    """What bubblewrap shows read-only: the system's programs and libraries, and
    this Python's installation (its package folders hidden, see :func:`_hidden`)."""
    roots = ["/usr", "/etc/ld.so.cache", "/etc/alternatives"]
    return [r for r in dict.fromkeys(roots) if os.path.exists(r)]


def _python() -> str:
    return os.path.realpath(sys.executable)


def _readable(path: str) -> bool:
    """Whether any user may reach ``path`` and read it (mode bits, all the way down)."""
    path = os.path.realpath(path)
    parts = Path(path).parents
    try:
        return all(os.stat(p).st_mode & stat.S_IXOTH for p in parts) and bool(
            os.stat(path).st_mode & stat.S_IROTH)
    except OSError:
        return False


def _uid_python() -> str:
    """A Python the dedicated uid can run: this one, or the system's of this version."""
    own = _python()
    if _readable(own) and _readable(os.path.join(sysconfig.get_paths()["stdlib"],
                                                 "os.py")):
        return own
    system = f"/usr/bin/python{sys.version_info[0]}.{sys.version_info[1]}"
    if os.path.exists(system) and _readable(system):
        return system
    raise SandboxRefused(f"{own} is not readable by other users, and there is no "
                         f"{system}")


def _shared_numpy() -> List[Path]:
    """NumPy's folders where the dedicated uid can read them: as they are, or linked.

    A virtual environment in a folder only its owner may enter (``mktemp -d``)
    hides NumPy from other users: then a copy (hard links where the file
    system allows) is made once, owned by root and readable by all, beside
    the temporary files.
    """
    dirs = _numpy_dirs()
    if all(_readable(str(d / "__init__.py")) or _readable(str(d)) for d in dirs):
        return dirs
    home = Path(tempfile.gettempdir()) / (
        f"scratchnet-numpy-{numpy.__version__}-{os.stat(dirs[0]).st_ino}")
    if home.is_dir() and os.stat(home).st_uid == os.geteuid():
        return [home / d.name for d in dirs]
    building = Path(tempfile.mkdtemp(prefix="scratchnet-numpy-"))
    for d in dirs:
        try:
            shutil.copytree(d, building / d.name, copy_function=os.link)
        except OSError:   # another file system: copies
            shutil.rmtree(building / d.name, ignore_errors=True)
            shutil.copytree(d, building / d.name)
    for folder, _, _ in os.walk(building):
        os.chmod(folder, 0o755)
    try:
        os.rename(building, home)
    except OSError:   # another grading process made it first
        shutil.rmtree(building, ignore_errors=True)
    return [home / d.name for d in dirs]


def dedicated_uid() -> int:
    """A uid for this grading process's children: no account, no running process.

    Returns
    -------
    int
        ``0x5C000000`` plus this process's pid (unique among running
        processes, so concurrent grading processes get different uids), or
        the next one free.

    Examples
    --------
    >>> dedicated_uid() > 0x5C000000
    True
    """
    uid = _UID_BASE + os.getpid()
    while _has_account(uid) or _processes_of(uid):
        uid += 1 << 22    # above any pid
    return uid


def _has_account(uid: int) -> bool:
    try:
        pwd.getpwuid(uid)
        return True
    except KeyError:
        return False


def _processes_of(uid: int) -> List[int]:
    """The live processes of ``uid`` (zombies, already dead, left out)."""
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
        if not _processes_of(uid):
            break
        pid = os.fork()
        if pid == 0:   # the fork becomes the uid and signals all it may: its own
            try:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
                os.kill(-1, signal.SIGKILL)
            finally:
                os._exit(0)
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


def landlock(read: Sequence[str], write: Sequence[str]) -> None:
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

    for paths, access in ((read, _LANDLOCK_READ), (write, handled)):
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


class Sandbox:
    """How this grading process starts each child, and how it ends it.

    Everything the child reads lies in ``workdir``, a private folder of the
    grading process: a copy of the submission (:func:`stage`), of the shim
    and ``given.py``, and a site folder holding NumPy alone.

    Parameters
    ----------
    kind : str
        One of :data:`KINDS`.
    package : Path
        The submission's package folder (copied here).
    workdir : Path
        A new private folder (logs; the dedicated uid's ``TMPDIR``).
    memory_mb : int
        Address space of the child.
    cpu_seconds : int
        CPU time of the child.
    allow : sequence of str, optional
        Modules an assignment allows besides NumPy (``"scipy"``): their
        folders are shown too.

    Examples
    --------
    >>> callable(Sandbox)
    True
    """

    def __init__(self, kind: str, package: Path, workdir: Path, *, memory_mb: int,
                 cpu_seconds: int, allow: Sequence[str] = ()) -> None:
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}; got {kind!r}")
        self.kind, self.workdir = kind, Path(workdir)
        self.memory_mb, self.cpu_seconds = memory_mb, cpu_seconds
        self.uid: Optional[int] = dedicated_uid() if os.geteuid() == 0 and \
            kind != "none" else None
        self.package = stage(package, self.workdir / "copy")
        self.grader = self.workdir / "grader"
        self.grader.mkdir()
        for source in (_SHIM, _GIVEN):
            shutil.copy(source, self.grader / source.name)
        self.site = self.workdir / "site"
        self.site.mkdir()
        self.numpy = _shared_numpy() if self.uid is not None else _numpy_dirs()
        self.numpy += _allowed_dirs(allow)
        self.python = _uid_python() if self.uid is not None else _python()
        self.tmp = self.workdir / "tmp"
        self.tmp.mkdir()
        if kind != "bubblewrap":   # NumPy alone on the child's path
            for d in self.numpy:
                os.symlink(d, self.site / d.name)
        if self.uid is not None:
            self._share_with_uid()

    def _share_with_uid(self) -> None:
        """All of the work folder readable by the uid's group only; TMPDIR its own."""
        for path in [self.workdir, *self.workdir.rglob("*")]:
            if not path.is_symlink():
                os.chown(path, 0, self.uid)
                os.chmod(path, 0o750 if path.is_dir() else 0o640)
        os.chown(self.tmp, self.uid, self.uid)
        os.chmod(self.tmp, 0o700)

    def command(self) -> List[str]:
        """The child's command line: the shim, under bubblewrap or not.

        Returns
        -------
        list of str

        Examples
        --------
        >>> callable(Sandbox.command)
        True
        """
        shim = self.grader / "shim.py"
        if self.kind != "bubblewrap":
            return [self.python, "-I", "-S", "-B", str(shim), str(self.site)]
        args = [_bwrap(), "--unshare-all", "--die-with-parent", "--new-session",
                "--cap-drop", "ALL", "--clearenv"]
        for name, value in self.environment().items():
            args += ["--setenv", name, value]
        roots = _bound()
        if not any(self.python.startswith(r + "/") for r in roots):
            roots.append(os.path.realpath(sys.base_prefix))   # this Python's own
        for root in roots:
            args += ["--ro-bind", root, root]
        for hidden in _hidden():
            if any(hidden == r or hidden.startswith(r.rstrip("/") + "/")
                   for r in roots):
                args += ["--tmpfs", hidden]
        for link, target in (("/bin", "usr/bin"), ("/lib", "usr/lib"),
                             ("/lib64", "usr/lib64"), ("/sbin", "usr/sbin")):
            if os.path.islink(link):
                args += ["--symlink", target, link]
        for d in self.numpy:
            args += ["--ro-bind", str(d), f"/sandbox/site/{d.name}"]
        args += ["--ro-bind", str(self.grader), "/sandbox/grader",
                 "--ro-bind", str(self.package), "/submission",
                 "--proc", "/proc", "--dev", "/dev", "--remount-ro", "/dev",
                 "--size", str(64 * 2**20), "--tmpfs", "/tmp", "--remount-ro", "/",
                 "--chdir", "/tmp",
                 "--", self.python, "-I", "-S", "-B", "/sandbox/grader/shim.py",
                 "/sandbox/site"]
        return args

    @property
    def root(self) -> str:
        """Where the child sees the submission.

        Returns
        -------
        str

        Examples
        --------
        >>> callable(Sandbox.root.fget)
        True
        """
        return "/submission" if self.kind == "bubblewrap" else str(self.package)

    def environment(self) -> Dict[str, str]:
        """The child's whole environment: one thread per library, a private temp.

        Returns
        -------
        dict

        Examples
        --------
        >>> callable(Sandbox.environment)
        True
        """
        tmp = "/tmp" if self.kind == "bubblewrap" else str(self.tmp)
        return {"PATH": "/usr/bin:/bin", "HOME": tmp, "TMPDIR": tmp, "LANG": "C.UTF-8",
                "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
                "MKL_NUM_THREADS": "1"}

    def readable(self) -> List[str]:
        """What the child may read under Landlock: the system's programs and
        libraries, its Python, NumPy, and its copies in the work folder.

        Returns
        -------
        list of str

        Examples
        --------
        >>> callable(Sandbox.readable)
        True
        """
        python = os.path.realpath(self.python)
        prefix = [] if python.startswith("/usr/") else [
            os.path.realpath(sys.base_prefix)]
        return [*_bound(), *prefix, *[str(d) for d in self.numpy],
                str(self.package), str(self.grader), str(self.site), "/dev/urandom"]

    def limits(self) -> None:
        """Set the hard limits, soft = hard (run in the child before it starts).

        Returns
        -------
        None

        Examples
        --------
        >>> callable(Sandbox.limits)
        True
        """
        nproc = 32 if self.uid is not None else len(_processes_of(os.getuid())) + 64
        if self.kind == "dedicated uid" and LANDLOCK:
            landlock(self.readable(), [str(self.tmp), "/dev/null"])
        for kind, value in ((resource.RLIMIT_AS, self.memory_mb * 2**20),
                            (resource.RLIMIT_CPU, self.cpu_seconds),
                            (resource.RLIMIT_FSIZE, 16 * 2**20),
                            (resource.RLIMIT_NOFILE, 256),
                            (resource.RLIMIT_CORE, 0),
                            (resource.RLIMIT_NPROC, nproc)):
            hard = resource.getrlimit(kind)[1]
            value = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(kind, (value, value))

    def start(self, stderr: int) -> subprocess.Popen:
        """Start one child; its stdin takes requests, its stdout gives answers.

        Parameters
        ----------
        stderr : int
            A file descriptor for the child's prints and tracebacks.

        Returns
        -------
        subprocess.Popen

        Examples
        --------
        >>> callable(Sandbox.start)
        True
        """
        account: Dict[str, Any] = {}
        if self.uid is not None:
            account = {"user": self.uid, "group": self.uid, "extra_groups": [],
                       "umask": 0o077}
        return subprocess.Popen(
            self.command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=stderr, env=self.environment(), start_new_session=True,
            preexec_fn=self.limits, **account,
            cwd="/" if self.kind == "bubblewrap" else str(self.tmp))

    def end(self, proc: subprocess.Popen) -> None:
        """Kill a child and everything it started.

        Parameters
        ----------
        proc : subprocess.Popen

        Returns
        -------
        None

        Examples
        --------
        >>> callable(Sandbox.end)
        True
        """
        for pipe in (proc.stdin, proc.stdout):   # a shim that is waiting exits
            try:
                pipe.close()
            except (OSError, AttributeError):
                pass
        try:
            proc.wait(timeout=0.2)
        except subprocess.TimeoutExpired:
            pass
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)   # bwrap: its namespace dies
            except OSError:
                proc.kill()
        proc.wait()
        if self.uid is not None:
            kill_uid(self.uid)


def _refusal(why: str) -> SandboxRefused:
    return SandboxRefused(
        f"refusing to run a submission without a sandbox: {why}.  Options: install "
        f"bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; it needs "
        f"unprivileged user namespaces), grade as root (the child then runs as a "
        f"dedicated uid), or pass --no-sandbox to accept that the submission runs "
        f"as you, with your files (only for code you trust)")


@functools.lru_cache(maxsize=4)
def probe(kind: str) -> str:
    """Whether a child of this kind starts here: "" if it does, else why not.

    One child is started, imports NumPy and answers one request; the answer
    is kept for the life of this process.

    Parameters
    ----------
    kind : str
        One of :data:`KINDS`.

    Returns
    -------
    str

    Examples
    --------
    >>> probe("none")
    ''
    """
    from .shim import pack, read_frame, unpack, write_frame

    work = Path(tempfile.mkdtemp(prefix="scratchnet-probe-"))
    try:
        (work / "empty").mkdir()
        box = Sandbox(kind, work / "empty", work, memory_mb=1024, cpu_seconds=30)
        with open(work / "log", "wb") as log:
            proc = box.start(log.fileno())
        try:
            write_frame(proc.stdin.fileno(), pack(
                {"op": "start", "package": box.root, "homes": {}}))
            answer = unpack(read_frame(proc.stdout.fileno(), timeout=30))
            return "" if answer.get("ok") else str(answer.get("error"))
        except Exception as err:
            tail = (work / "log").read_text(errors="replace").strip()[-300:]
            return f"{err}: {tail}" if tail else str(err)
        finally:
            box.end(proc)
    except (OSError, SandboxRefused) as err:
        return str(err)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def choose(no_sandbox: bool = False, own_code: bool = False) -> str:
    """The isolation to grade with here, or :class:`SandboxRefused`.

    Parameters
    ----------
    no_sandbox : bool, default False
        Accept running the submission without a sandbox, as this user.
    own_code : bool, default False
        The code is the grader's own user's (a student's self-check): where
        no sandbox runs, it runs without one.

    Returns
    -------
    str
        One of :data:`KINDS`.

    Raises
    ------
    SandboxRefused
        A normal user without bubblewrap and without ``no_sandbox``, or a way
        forced by ``SCRATCHNET_SANDBOX`` that cannot run here.

    Examples
    --------
    >>> choose(no_sandbox=True) in KINDS
    True
    """
    forced = os.environ.get("SCRATCHNET_SANDBOX", "")
    if forced not in ("", "bubblewrap", "uid", "none"):
        raise SandboxRefused(f"SCRATCHNET_SANDBOX must be bubblewrap, uid or none; "
                             f"got {forced!r}")
    if no_sandbox or forced == "none":
        return "none"
    linux, root = sys.platform.startswith("linux"), os.geteuid() == 0
    if forced == "uid":
        if not (linux and root):
            raise SandboxRefused("SCRATCHNET_SANDBOX=uid needs root on Linux")
        return _checked("dedicated uid")
    why = "not Linux" if not linux else "bubblewrap (bwrap) is not installed" \
        if not _bwrap() else probe("bubblewrap")
    if not why:
        return "bubblewrap"
    if forced == "bubblewrap":
        raise SandboxRefused(f"SCRATCHNET_SANDBOX=bubblewrap, but it cannot run: {why}")
    if linux and root:
        return _checked("dedicated uid")
    if own_code:
        return "none"
    raise _refusal(why)


def _checked(kind: str) -> str:
    why = probe(kind)
    if why:
        raise SandboxRefused(f"the {kind} sandbox cannot run here: {why}")
    return kind


def describe(kind: str) -> str:
    """The isolation note of a report: which sandbox the submission ran in.

    Parameters
    ----------
    kind : str

    Returns
    -------
    str

    Examples
    --------
    >>> describe("none")[:30]
    'isolation: none (--no-sandbox:'
    """
    return {
        "bubblewrap": "isolation: bubblewrap (namespaces: the submission saw only "
                      "Python, NumPy and its own files; hard limits)",
        "dedicated uid": "isolation: a dedicated uid with hard limits and "
                         + ("Landlock (the submission could open only Python, NumPy "
                            "and its own files)" if LANDLOCK else "no Landlock (files "
                            "every user may read stayed readable)"),
        "none": "isolation: none (--no-sandbox: the submission ran as the grader's "
                "user)",
    }[kind]


def hidden_paths() -> Sequence[str]:
    """The package folders mounted empty in the bubblewrap sandbox (for tests).

    Returns
    -------
    list of str

    Examples
    --------
    >>> isinstance(hidden_paths(), list)
    True
    """
    return _hidden()
