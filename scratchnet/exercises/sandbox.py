"""The sandbox the student's code runs in, and the threat model it answers.

A submission is untrusted code written by someone who gains from a higher
grade.  So the process that runs it (the *child*) sees Python, NumPy, the
answering shim (:mod:`~scratchnet.exercises.shim`) and its own files, under
hard limits (soft = hard) and the grader's wall clock, and nothing it starts
outlives it (``docs/teaching.md``, *The threat model*, platform by platform).

Three ways to get there, chosen once per run (:func:`choose`):

``bubblewrap``
    Linux with bubblewrap (``bwrap``) and user namespaces: new user, PID,
    mount, network, IPC, UTS and cgroup namespaces, all capabilities
    dropped, ``--die-with-parent``, ``--new-session``, an empty environment;
    nothing writable but a 64 MiB ``/tmp``.
    As root, bwrap itself runs as a dedicated unprivileged uid, one per child.
``dedicated uid``
    Root where bubblewrap cannot run (a container without user namespaces):
    a uid of its own per child, at most 6 processes, a fresh ``TMPDIR``, its
    own network namespace where allowed, and with Landlock
    (:func:`~scratchnet.exercises.confine.landlock`) nothing to open but its
    interpreter, the shared libraries, its standard library, NumPy and its
    own copies (without Landlock, world-readable files stay readable).
``none``
    No isolation (``--no-sandbox``, or a self-check of one's own files): the
    grader's own user runs the child.

A normal user without bubblewrap is refused, with the reason and the
options: grading another person's code as oneself gives it one's files.
``SCRATCHNET_SANDBOX`` (``bubblewrap``, ``uid``, ``none``) forces one way (tests
and CI run both); a forced way that cannot run is an error, not a fall-back.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from .confine import (
    LANDLOCK,
    dedicated_uid,
    kill_uid,
    landlock,
    leave_network,
    processes_of,
    stage,
)
from .runtime import (
    allowed_dirs,
    compile_for_children,
    hidden_paths,
    interpreter_paths,
    numpy_dirs,
    numpy_for_others,
    python_for_others,
    system_paths,
    this_python,
)

try:
    import resource
except ImportError:   # not POSIX: no sandbox runs there (see choose)
    resource = None

__all__ = ["KINDS", "SHIM_FILES", "Sandbox", "SandboxRefused", "choose", "describe",
           "probe"]

#: The ways to isolate the child, as the report names them.
KINDS = ("bubblewrap", "dedicated uid", "none")
#: The files of the grader the child runs: the shim, what it imports, the base classes.
SHIM_FILES = ("shim.py", "frames.py", "definitions.py", "accounts.py", "given.py")


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


@functools.lru_cache(maxsize=1)
def _bwrap() -> str:
    return shutil.which("bwrap") or ""


class Sandbox:
    """How this grading process starts each child, and how it ends it.

    Everything the child reads lies in ``workdir``, a private folder of the
    grading process: a copy of the submission
    (:func:`~scratchnet.exercises.confine.stage`), of the shim and ``given.py``,
    and a site folder holding NumPy alone.

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
        self.serial = 0
        self.uid: Optional[int] = dedicated_uid() if os.geteuid() == 0 and \
            kind != "none" else None
        self.package = stage(package, self.workdir / "copy")
        self.grader = self.workdir / "grader"
        self.grader.mkdir()
        for name in SHIM_FILES:
            shutil.copy(Path(__file__).with_name(name), self.grader / name)
        compile_for_children(self.grader, "/sandbox/grader" if kind == "bubblewrap"
                             else None)
        self.site = self.workdir / "site"
        self.site.mkdir()
        self.numpy = numpy_for_others() if self.uid is not None else numpy_dirs()
        self.numpy += allowed_dirs(allow)
        self.python = python_for_others() if self.uid is not None else this_python()
        self.interpreter = interpreter_paths(self.python)   # before any fork
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
            if not path.is_symlink() and path.suffix != ".log":   # logs: root's
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
        shim = self.grader / "shim.pyc"   # shim.py, compiled (compile_for_children)
        if self.kind != "bubblewrap":
            return [self.python, "-I", "-S", "-B", str(shim), str(self.site)]
        args = [_bwrap(), "--unshare-all", "--die-with-parent", "--new-session",
                "--cap-drop", "ALL", "--clearenv"]
        for name, value in self.environment().items():
            args += ["--setenv", name, value]
        roots = system_paths()
        if not any(self.python.startswith(r + "/") for r in roots):
            roots.append(os.path.realpath(sys.base_prefix))   # this Python's own
        for root in roots:
            args += ["--ro-bind", root, root]
        for hidden in hidden_paths():
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
                 "--", self.python, "-I", "-S", "-B", "/sandbox/grader/shim.pyc",
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
        # processes: the shim, its watchdog thread and bubblewrap's two, no more (so
        # the memory limit times the processes stays near the memory limit)
        nproc = 6 if self.uid is not None else len(processes_of(os.getuid())) + 64
        if self.kind == "dedicated uid" and LANDLOCK:
            read, listed = self.interpreter
            landlock([*read, *[str(d) for d in self.numpy], str(self.package),
                      str(self.grader), str(self.site), "/dev/urandom"],
                     [str(self.tmp), "/dev/null"], listed)
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
        if self.uid is not None:   # a uid of its own: nothing left by the last meets it
            self.serial += 1
            self.uid = dedicated_uid(self.serial)
        if self.kind != "bubblewrap":   # a fresh TMPDIR too
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp.mkdir()
        if self.uid is not None:
            self._share_with_uid()
        return subprocess.Popen(
            self.command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=stderr, env=self.environment(), start_new_session=True,
            preexec_fn=self.confine,
            cwd="/" if self.kind == "bubblewrap" else str(self.tmp))

    def confine(self) -> None:
        """In the child, before it runs the shim: its uid, its network, its limits.

        As root, the dedicated-uid child first leaves the network (a network
        namespace of its own: no UDP, no TCP, no DNS; where the kernel refuses,
        a container's own network stays), then becomes the dedicated uid with
        no other group; then Landlock and the hard limits (:meth:`limits`).

        Returns
        -------
        None

        Examples
        --------
        >>> callable(Sandbox.confine)
        True
        """
        if self.uid is not None:
            if self.kind == "dedicated uid":
                leave_network()
            os.setgroups([])
            os.setgid(self.uid)
            os.setuid(self.uid)
            os.umask(0o077)
        self.limits()

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
        for pipe in (proc.stdin, proc.stdout):
            try:
                pipe.close()
            except (OSError, AttributeError):
                pass
        if proc.poll() is None:   # killed, not waited for: its answers are all in
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
    from .frames import pack, read_frame, unpack, write_frame

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
    except (OSError, SandboxRefused, subprocess.SubprocessError) as err:
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
