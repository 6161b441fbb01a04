"""The child runs as nobody: a submission cannot write what the grader may write.

When the grading process runs as root (Gradescope's ``run_autograder``
does), the student's code would run as root too and could change any file:
the installed scratchnet and NumPy, the grader's own files, the next
submission's.  So on Linux a grading process that runs as root starts the
child as the account ``nobody`` (uid and gid 65534 where there is no such
entry), with no supplementary groups and umask 077, in a working directory
it may only read, and the child reads a copy of the submission
(:func:`stage`) that root owns and nobody may only read.

Whether nobody can run this Python, import scratchnet and reach the copy is
tried once per grading process (:func:`isolate`): one small process
started as nobody, with the child's environment.  Where it cannot (a virtual
environment inside a folder only root may enter), the child runs as root and
the report says so in a note.  ``SCRATCHNET_GRADER_PROBE=fail`` in the
grading process's environment makes the probe fail (for tests).
"""

from __future__ import annotations

import atexit
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional, Tuple

# NumPy imports these on first use, during grading: imported here, by the grading
# process before any child runs, so a file changed on disk then cannot reach it
import numpy.ma
import numpy.polynomial  # noqa: F401

__all__ = ["PROBE", "Account", "child_environment", "isolate", "nobody", "stage"]

#: What the probe runs as nobody: the child's imports, then the submission's folder.
PROBE = ("import os, sys, numpy, scratchnet, scratchnet.exercises.child\n"
         "os.listdir(sys.argv[1])\n")


def child_environment() -> Dict[str, str]:
    """The child's environment: this one, one thread per library, scratchnet importable.

    Returns
    -------
    dict

    Examples
    --------
    >>> child_environment()["OMP_NUM_THREADS"]
    '1'
    """
    return {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONFAULTHANDLER": "1",   # SIGABRT dumps where it is, even in C
            "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2]),
                                           os.environ.get("PYTHONPATH", "")])}


class Account(NamedTuple):
    """The account the child runs as: its user and group ids.

    Attributes
    ----------
    uid, gid : int

    Examples
    --------
    >>> Account(65534, 65534).popen()["extra_groups"]
    []
    """

    uid: int
    gid: int

    def popen(self) -> Dict[str, object]:
        """The keyword arguments that make ``subprocess.Popen`` start a process as it.

        Returns
        -------
        dict
            ``user``, ``group``, ``extra_groups`` (none) and ``umask`` (077).

        Examples
        --------
        >>> sorted(Account(65534, 65534).popen())
        ['extra_groups', 'group', 'umask', 'user']
        """
        return {"user": self.uid, "group": self.gid, "extra_groups": [],
                "umask": 0o077}


def nobody() -> Account:
    """The account ``nobody``, or uid and gid 65534 where the system has no such entry.

    Returns
    -------
    Account

    Examples
    --------
    >>> nobody().uid > 0
    True
    """
    try:
        entry = pwd.getpwnam("nobody")
        return Account(entry.pw_uid, entry.pw_gid)
    except KeyError:
        return Account(65534, 65534)


def _not_copied(folder: str, names: List[str]) -> List[str]:
    """Caches and anything not a folder, a plain file or a link (a FIFO would block)."""
    modes = {n: os.lstat(os.path.join(folder, n)).st_mode for n in names}
    return [n for n, mode in modes.items() if n in ("__pycache__", ".git") or not (
        stat.S_ISLNK(mode) or stat.S_ISDIR(mode) or stat.S_ISREG(mode))]


def stage(directory: Path) -> Path:
    """A copy of the submission that every user may read and only root may write.

    Links are copied as links (never followed: a link to a file only root may
    read stays unreadable to nobody) and never given a mode; folders get 0755
    and files 0644, and so does the new temporary folder that holds the copy.

    Parameters
    ----------
    directory : Path
        The submission's package folder.

    Returns
    -------
    Path
        The copy, ``<new temporary folder>/<its name>``; remove the folder
        with ``shutil.rmtree(copy.parent)``.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = (Path(tmp) / "a.py").write_text("x = 1")
    ...     copy = stage(Path(tmp))
    ...     mode = oct(copy.joinpath("a.py").stat().st_mode & 0o777)
    ...     shutil.rmtree(copy.parent)
    >>> mode
    '0o644'
    """
    holder = tempfile.mkdtemp(prefix="scratchnet-submission-")
    copy = Path(holder) / (directory.name or "submission")
    shutil.copytree(directory, copy, symlinks=True, ignore=_not_copied)
    os.chmod(holder, 0o755)
    for folder, _, files in os.walk(copy):
        os.chmod(folder, 0o755)
        for name in files:
            path = os.path.join(folder, name)
            if not os.path.islink(path):   # chmod follows links: never on one
                os.chmod(path, 0o644)
    return copy


def isolate(directory: Path) -> Tuple[Path, Optional[Account], List[str]]:
    """Where the child reads the submission, the account it runs as, and notes.

    Only a grading process that runs as root on Linux drops privileges: it
    copies the submission (:func:`stage`), then starts :data:`PROBE` as
    nobody with the child's environment (:func:`child_environment`), once:
    call it once per grading process, and keep the answer for every child.

    Parameters
    ----------
    directory : Path
        The submission's package folder.

    Returns
    -------
    (Path, Account or None, list of str)
        ``(directory, None, [])`` when this process is not root (or not on
        Linux); ``(copy, nobody, [])`` when the probe exits 0; ``(copy, None,
        [note])`` when nobody could not run the child, the note saying what
        it could not read.  The copy is removed when the process exits.

    Examples
    --------
    >>> os.geteuid() == 0 or isolate(Path(".")) == (Path("."), None, [])
    True
    """
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        return directory, None, []
    try:
        copy = stage(directory)
    except OSError as err:   # an unreadable upload: graded where it is, as root
        return directory, None, [f"the child ran as root: the copy failed ({err})"]
    atexit.register(shutil.rmtree, copy.parent, True)
    account, why = nobody(), ""
    if os.environ.get("SCRATCHNET_GRADER_PROBE") == "fail":   # for tests
        why = f"{sys.executable} (SCRATCHNET_GRADER_PROBE=fail)"
    else:
        try:
            done = subprocess.run([sys.executable, "-c", PROBE, str(copy)],
                                  env=child_environment(), cwd=copy.parent,
                                  capture_output=True, stdin=subprocess.DEVNULL,
                                  timeout=60,
                                  start_new_session=True, **account.popen())
            if done.returncode != 0:
                lines = done.stderr.decode(errors="replace").strip().splitlines()
                why = lines[-1] if lines else f"exit status {done.returncode}"
        except (OSError, subprocess.SubprocessError) as err:
            why = f"{sys.executable} ({err})"
    if why:
        return copy, None, [f"the child ran as root: nobody could not read {why}"]
    return copy, account, []
