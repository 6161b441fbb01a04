"""What the grader reads in a submission's source before running any of it.

The source decides, without running it, what each exercise of the assignment
is: missing, broken (a syntax error in its definition), forbidden (it imports
a library the homework does not allow), or there to be run.  A module is read
definition by definition (:func:`chunks`), so a syntax error in one function
leaves its neighbours readable, and the child builds such a module the same
way.

The import policy: an exercise may use NumPy, ``math``, the standard library,
the student's own modules, and of scratchnet exactly what the hand-out gives
(the names the generated package imports).  Another numerical library
(:data:`NUMERICAL`) or any other scratchnet name scores 0 for the exercise
that uses it, with a message saying so.  Reading the source is never the
boundary: the sandbox (:mod:`scratchnet.exercises.sandbox`) holds none of
those libraries, so code that reaches for them by any other route only
fails there.  An exercise whose body is the chapter's own body is marked as
copied.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import tempfile
import textwrap
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, Iterable, List, Sequence, Tuple

from .definitions import chunks

__all__ = ["NUMERICAL", "chunks", "find_package", "handout_names", "read_exercise"]

#: Numerical libraries an exercise may not use unless the assignment allows them.
NUMERICAL = ("torch", "scipy", "jax", "jaxlib", "tensorflow", "keras", "sklearn",
             "cupy", "numba", "autograd", "mxnet", "theano", "chainer", "pandas",
             "tinygrad", "mlx", "paddle", "numexpr", "sympy", "mpmath", "statsmodels")
def find_package(directory: Any) -> Path:
    """The folder holding a submission's modules: itself, or its one subfolder.

    A flat upload (the modules themselves) and an upload of the package's
    folder are both accepted.

    Parameters
    ----------
    directory : str or Path

    Returns
    -------
    Path

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     (Path(tmp) / "hw").mkdir()
    ...     _ = (Path(tmp) / "hw" / "softmax.py").write_text("")
    ...     find_package(tmp).name
    'hw'
    """
    directory = Path(directory)
    if any(directory.glob("*.py")):
        return directory
    folders = [p for p in directory.iterdir() if p.is_dir()
               and not p.name.startswith((".", "_"))] if directory.is_dir() else []
    if len(folders) == 1 and any(folders[0].glob("*.py")):
        return folders[0]
    return directory


@lru_cache(maxsize=16)
def handout_names(ids: Tuple[str, ...]) -> frozenset:
    """The scratchnet names the hand-out of these exercises imports (what it gives).

    The student edition's imports and the answer key's (the chapter's bodies
    call a few library helpers, validation for one).

    Parameters
    ----------
    ids : tuple of str

    Returns
    -------
    frozenset of str
        Dotted names: ``"scratchnet.mlp.TwoLayerMLP"``, ``"scratchnet.losses.Loss"``.

    Examples
    --------
    >>> "scratchnet.mlp.TwoLayerMLP" in handout_names(("TwoLayerMLP.backward",))
    True
    """
    from .handout import make

    names = set()
    with tempfile.TemporaryDirectory() as tmp:
        written = make(list(ids), Path(tmp) / "hw") + \
            make(list(ids), Path(tmp) / "key", solutions=True)
        for path in written:
            if path.suffix == ".py":
                for node in ast.walk(ast.parse(path.read_text())):
                    names |= {full for _, full in _bindings(node)
                              if full.split(".")[0] == "scratchnet"}
    return frozenset(names)


def _bindings(node: ast.AST) -> Iterable[Tuple[str, str]]:
    """(local name, dotted origin) for an import statement."""
    if isinstance(node, ast.Import):
        for a in node.names:
            yield (a.asname or a.name.split(".")[0]), (a.name if a.asname
                                                       else a.name.split(".")[0])
    elif isinstance(node, ast.ImportFrom):
        base = "." * node.level + (node.module or "")
        for a in node.names:
            yield a.asname or a.name, (f"{base}.{a.name}" if not base.endswith(".")
                                       else base + a.name)


def _dotted(node: ast.AST) -> List[str]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id, *reversed(parts)]
    return []


def _body_dump(node: ast.AST) -> str:
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(
            getattr(body[0], "value", None), ast.Constant) and isinstance(
            body[0].value.value, str):
        body = body[1:]
    return "\n".join(ast.dump(b) for b in body)


def _chapter_body(chapter: str, ex_id: str) -> str:
    try:
        obj = importlib.import_module(f"scratchnet.{chapter}")
        for part in ex_id.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):   # an instructor's own exercise
        return "no chapter body"
    return _body_dump(ast.parse(textwrap.dedent(inspect.getsource(obj))).body[0])


def read_exercise(directory: Path, chapter: str, ex_id: str, *,
                  given: frozenset = frozenset(),
                  allow: Sequence[str] = ()) -> Dict[str, Any]:
    """What the source says of one exercise, before anything runs.

    Parameters
    ----------
    directory : Path
        The submission's package folder.
    chapter : str
        The module that must define it.
    ex_id : str
        ``"softmax"`` or ``"TwoLayerMLP.backward"``.
    given : frozenset of str
        The scratchnet names the hand-out imports (:func:`handout_names`).
    allow : sequence of str
        Modules or dotted names the assignment allows beyond the default.

    Returns
    -------
    dict
        ``status`` ("ok", "missing", "broken", "forbidden"), ``message``,
        ``copied`` (its body is the chapter's own) and ``broken_module``
        (the module has definitions that do not compile).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = (Path(tmp) / "softmax.py").write_text("import torch\\n"
    ...         "def softmax(x):\\n    return torch.softmax(x, -1)\\n")
    ...     print(read_exercise(Path(tmp), "softmax", "softmax")["message"])
    uses torch (softmax.py line 1: import torch): not allowed in this homework
    """
    path = directory / f"{chapter}.py"
    result = {"status": "ok", "message": "", "copied": False, "broken_module": False}
    if not path.exists():
        return {**result, "status": "missing", "message": f"missing: {path.name} is "
                f"not in the submission"}
    cls_name, _, method = ex_id.partition(".")
    bound: Dict[str, Tuple[str, int, str]] = {}    # name -> (origin, line, text)
    helpers: Dict[str, ast.AST] = {}
    node, problem = None, ""
    for line, source, names in chunks(path.read_text(errors="replace")):
        try:
            tree = ast.parse("\n" * (line - 1) + source)
        except SyntaxError as err:
            result["broken_module"] = True
            if cls_name in names:
                problem = f"a syntax error at {path.name} line {err.lineno}: {err.msg}"
            continue
        for statement in tree.body:
            for name, origin in _bindings(statement):
                bound[name] = (origin, statement.lineno,
                               ast.get_source_segment("\n" * (line - 1) + source,
                                                      statement) or "")
            if isinstance(statement, (ast.FunctionDef, ast.ClassDef)):
                helpers[statement.name] = statement
                if statement.name == cls_name:
                    node, problem = statement, ""
    origin = bound.get(cls_name, ("",))[0]
    if node is None and not method and origin.split(".")[0] == "scratchnet":
        return {**result, "status": "forbidden", "message": f"hands back scratchnet's "
                f"own {ex_id} (imports {origin}): write it, do not import it"}
    if node is None:
        return {**result, "status": "broken" if problem else "missing",
                "message": problem or f"missing: {ex_id} is not defined in {path.name}"}
    if method:
        node = next((m for m in node.body if isinstance(m, ast.FunctionDef)
                     and m.name == method), None)
        if node is None:
            return {**result, "status": "missing",
                    "message": f"missing: {cls_name} in {path.name} defines no "
                               f"{method}"}
    result["copied"] = _body_dump(node) == _chapter_body(chapter, ex_id)
    why = _forbidden(node, helpers, bound, ex_id, chapter, given, allow, path.name)
    if why:
        return {**result, "status": "forbidden", "message": why}
    return result


def _allowed(full: str, given: frozenset, allow: Sequence[str]) -> bool:
    top = full.split(".")[0]
    if any(full == a or full.startswith(a + ".") for a in allow):
        return True
    if top == "scratchnet":
        return any(full == g or full.startswith(g + ".") for g in given)
    return top not in NUMERICAL


def _forbidden(node, helpers, bound, ex_id, chapter, given, allow, filename) -> str:
    """Which library the exercise's code (and the module's helpers it calls) imports
    that the homework does not allow: a message before anything runs.

    Not a boundary: the sandbox holds no such library (the import would fail
    there), this only says so plainly.
    """
    own = f"scratchnet.{chapter}.{ex_id}"
    seen, todo, uses = set(), [node], []
    while todo:
        current = todo.pop()
        for sub in ast.walk(current):
            if isinstance(sub, ast.Name) and sub.id in helpers and sub.id not in seen \
                    and helpers[sub.id] is not node:
                seen.add(sub.id)
                if isinstance(helpers[sub.id], ast.FunctionDef):
                    todo.append(helpers[sub.id])
            uses.append(sub)
    bound = dict(bound)
    for sub in uses:   # imports inside the exercise: judged by what is used
        if isinstance(sub, (ast.Import, ast.ImportFrom)):
            for name, full in _bindings(sub):
                bound[name] = (full, sub.lineno, ast.unparse(sub))
                if not full.startswith(".") and full.split(".")[0] != "scratchnet" \
                        and not _allowed(full, given, allow):
                    return (f"uses {full} ({filename} line {sub.lineno}): not allowed "
                            f"in this homework")
    for sub in uses:
        dotted = _dotted(sub) if isinstance(sub, (ast.Attribute, ast.Name)) else []
        if not dotted or dotted[0] not in bound:
            continue
        origin, line, text = bound[dotted[0]]
        if origin.startswith("."):
            continue
        full = ".".join([origin, *dotted[1:]])
        if full == own or (full.endswith("." + ex_id) and
                           full.split(".")[0] == "scratchnet"):
            return (f"hands back scratchnet's own {ex_id} ({filename} line "
                    f"{sub.lineno}): write it, do not import it")
        if not _allowed(origin, given, allow) or (
                origin.split(".")[0] == "scratchnet"
                and not _allowed(full, given, allow)):
            top = origin.split(".")[0]
            return (f"uses {full if top == 'scratchnet' else top} ({filename} "
                    f"line {line}: {text.strip()}): not allowed in this homework")
    return ""
