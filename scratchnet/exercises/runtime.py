"""The child's runtime: its Python, NumPy alone, what a sandbox shows of the system.

The child needs a Python interpreter, its standard library, NumPy and nothing
else.  :func:`numpy_dirs` are NumPy's own folders (bound alone into the
sandbox's site folder, so nothing installed beside NumPy, scratchnet among
it, comes along); :func:`system_paths` are the system's programs and
libraries bubblewrap shows read-only, with every Python package folder under
them mounted empty (:func:`hidden_paths`).  A dedicated uid can only run
what every user may read (:func:`readable_by_all`): a Python installed in a
folder only root may enter is replaced by the system's Python of the same
version (:func:`python_for_others`), and NumPy in such a folder by a copy
made of hard links (:func:`numpy_for_others`).  What the child runs of the
grader's is byte-compiled once, by the grading process
(:func:`compile_for_children`).
"""

from __future__ import annotations

import glob
import importlib.util
import os
import py_compile
import shutil
import site
import stat
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

import numpy

__all__ = ["allowed_dirs", "compile_for_children", "hidden_paths", "interpreter_paths",
           "numpy_dirs", "numpy_for_others", "python_for_others", "readable_by_all",
           "system_paths", "this_python"]


def numpy_dirs() -> List[Path]:
    """NumPy's package folder and, where its wheel has one, ``numpy.libs``.

    Returns
    -------
    list of Path

    Examples
    --------
    >>> numpy_dirs()[0].name
    'numpy'
    """
    home = Path(numpy.__file__).resolve().parent
    libs = home.with_name("numpy.libs")
    return [home, *([libs] if libs.is_dir() else [])]


def allowed_dirs(allow: Sequence[str]) -> List[Path]:
    """The package folders (and their ``.libs``) of the modules an assignment allows.

    Parameters
    ----------
    allow : sequence of str
        Module names (``"scipy"``, ``"scipy.special"``); those not installed
        are left out, NumPy is there anyway.

    Returns
    -------
    list of Path

    Examples
    --------
    >>> allowed_dirs(["numpy", "no_such_module_here"])
    []
    """
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


def hidden_paths() -> List[str]:
    """Every folder of installed Python packages this machine has: empty in a sandbox.

    This Python's site folders, the system's ``dist-packages`` and
    ``site-packages``, and the folder this scratchnet was imported from.

    Returns
    -------
    list of str

    Examples
    --------
    >>> str(Path(numpy.__file__).resolve().parents[1]) in hidden_paths()
    True
    """
    found = {*site.getsitepackages(), sysconfig.get_paths()["purelib"],
             sysconfig.get_paths()["platlib"],
             *glob.glob("/usr/lib/python3*/*-packages"),
             *glob.glob("/usr/local/lib/python3*/*-packages"),
             *glob.glob(os.path.join(sys.base_prefix, "lib", "python3*", "*-packages")),
             str(Path(__file__).resolve().parents[2])}
    return sorted(p for p in {os.path.realpath(f) for f in found} if os.path.isdir(p))


def system_paths() -> List[str]:
    """The system's programs and libraries, which bubblewrap shows read-only.

    Returns
    -------
    list of str

    Examples
    --------
    >>> "/usr" in system_paths()
    True
    """
    roots = ["/usr", "/etc/ld.so.cache", "/etc/alternatives"]
    return [r for r in roots if os.path.exists(r)]


def this_python() -> str:
    """The interpreter running this process, links resolved.

    Returns
    -------
    str

    Examples
    --------
    >>> os.path.isabs(this_python())
    True
    """
    return os.path.realpath(sys.executable)


def readable_by_all(path: str) -> bool:
    """Whether any user may reach ``path`` and read it (mode bits, all the way down).

    Parameters
    ----------
    path : str

    Returns
    -------
    bool

    Examples
    --------
    >>> readable_by_all("/no/such/file")
    False
    """
    path = os.path.realpath(path)
    try:
        return all(os.stat(p).st_mode & stat.S_IXOTH for p in Path(path).parents) \
            and bool(os.stat(path).st_mode & stat.S_IROTH)
    except OSError:
        return False


def python_for_others() -> str:
    """A Python the dedicated uid can run: this one, or the system's of this version.

    Returns
    -------
    str

    Raises
    ------
    OSError
        When neither is readable by every user.

    Examples
    --------
    >>> callable(python_for_others)
    True
    """
    own = this_python()
    if readable_by_all(own) and readable_by_all(
            os.path.join(sysconfig.get_paths()["stdlib"], "os.py")):
        return own
    system = f"/usr/bin/python{sys.version_info[0]}.{sys.version_info[1]}"
    if readable_by_all(system):
        return system
    raise OSError(f"{own} is not readable by other users, and there is no {system}")


def numpy_for_others() -> List[Path]:
    """NumPy's folders where the dedicated uid can read them: as they are, or linked.

    A virtual environment in a folder only its owner may enter (``mktemp -d``)
    hides NumPy from other users: then a copy (hard links where the file
    system allows) is made once, owned by this user and readable by all,
    beside the temporary files.

    Returns
    -------
    list of Path

    Examples
    --------
    >>> [d.name for d in numpy_for_others()][0]
    'numpy'
    """
    dirs = numpy_dirs()
    if all(readable_by_all(str(d)) for d in dirs):
        return dirs
    home = Path(tempfile.gettempdir()) / (
        f"scratchnet-numpy-{numpy.__version__}-{os.stat(dirs[0]).st_ino}")
    try:
        info = os.lstat(home)   # made by this user, not a link another one left
        if stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid():
            return [home / d.name for d in dirs]
    except OSError:
        pass
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


def interpreter_paths(python: str) -> Tuple[List[str], List[str]]:
    """What ``python`` reads to start and to import its standard library: no packages.

    Parameters
    ----------
    python : str
        This Python (:func:`this_python`) or the system's of this version.

    Returns
    -------
    (list of str, list of str)
        The files and folders to read (the interpreter, the shared libraries,
        every entry of the standard library but ``*-packages``), and the
        folders that may only be listed (the standard library's own).

    Examples
    --------
    >>> read, listed = interpreter_paths(this_python())
    >>> any(p.endswith("-packages") for p in read)
    False
    """
    python = os.path.realpath(python)
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    if python == this_python():
        stdlib = sysconfig.get_paths()["stdlib"]
        libs = glob.glob(os.path.join(sys.base_prefix, "lib", "libpython*"))
    else:
        stdlib, libs = os.path.join(os.path.dirname(os.path.dirname(python)), "lib",
                                    version), []
    multiarch = sysconfig.get_config_var("MULTIARCH") or "x86_64-linux-gnu"
    libs += [f"/usr/lib/{multiarch}", f"/lib/{multiarch}", "/lib64", "/usr/lib64",
             "/etc/ld.so.cache"]
    entries = [os.path.join(stdlib, e) for e in sorted(os.listdir(stdlib))
               if not e.endswith("-packages")] if os.path.isdir(stdlib) else []
    return [python, *libs, *entries], [stdlib]


def compile_for_children(grader: Path, seen_as: Optional[str] = None) -> List[Path]:
    """Byte-compile the shim and the modules it loads, once, for every child.

    Every child (one per exercise, and one more after each death) starts
    with ``-B``: it writes no cache, so without one here it would compile
    ``shim.py``, ``frames.py``, ``definitions.py``, ``accounts.py`` and
    ``given.py`` itself, each time (about 25 ms of a child's 0.3 s, most of
    the rest NumPy's import).  The modules' caches go to ``grader/__pycache__``,
    where Python checks each against its source's size and time before using
    it; a script never reads a cache, so ``shim.py`` is compiled into
    ``shim.pyc`` beside it, the file the child runs.  All are written by the
    grading process, from its own copies, in the folder the child can only
    read.

    Parameters
    ----------
    grader : Path
        The folder holding the copies of the shim's files
        (:data:`~scratchnet.exercises.sandbox.SHIM_FILES`): every ``*.py`` in it.
    seen_as : str, optional
        That folder as the child sees it (default ``grader``): the shim's
        tracebacks name ``seen_as/shim.py``.

    Returns
    -------
    list of Path
        ``shim.pyc`` first, then the modules' caches in ``__pycache__``.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     for name in ("shim.py", "frames.py"):
    ...         _ = Path(tmp, name).write_text("X = 1")
    ...     [p.relative_to(tmp).parts[0] for p in compile_for_children(Path(tmp))]
    ['shim.pyc', '__pycache__']
    """
    written = []
    for source in sorted(Path(grader).glob("*.py"), key=lambda p: p.name != "shim.py"):
        name = source.name
        if name == "shim.py":   # run as a script: its code beside it
            cfile, shown = str(grader / "shim.pyc"), f"{seen_as or grader}/{name}"
        else:   # loaded by path: Python finds and checks the cache itself
            cfile, shown = importlib.util.cache_from_source(str(source)), None
        written.append(Path(py_compile.compile(str(source), cfile=cfile, dfile=shown,
                                               doraise=True)))
    return written
