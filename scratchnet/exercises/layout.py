"""How generated code is laid out: signatures and import blocks in PEP 8 form.

The student edition is written from syntax trees, and ``ast.unparse`` gives
``prior1: float=0.5`` and one import line per name.  These two functions lay
the generated text out as the chapters are written: ``prior1: float = 0.5``,
lines wrapped at 88 columns, imports merged per module and grouped (standard
library, NumPy, scratchnet, the package's own modules).
"""

from __future__ import annotations

import ast
import re
from typing import Dict, List

__all__ = ["import_block", "mark_unused_imports", "signature"]


def signature(name: str, args: ast.arguments, returns: str, indent: str) -> str:
    """The line ``def name(args) -> returns:`` in PEP 8 form, wrapped at 88 columns.

    Parameters
    ----------
    name : str
        The function's name.
    args : ast.arguments
        Its arguments (positional and keyword-only, with defaults).
    returns : str
        ``" -> type"`` or "".
    indent : str
        The indentation the line will have (a method's is four spaces).

    Returns
    -------
    str

    Examples
    --------
    >>> tree = ast.parse("def f(x: int, y: float=0.5, *, z=1): pass")
    >>> print(signature("f", tree.body[0].args, " -> None", ""))
    def f(x: int, y: float = 0.5, *, z=1) -> None:
    """
    parts = []
    defaults = [None] * (len(args.args) - len(args.defaults)) + list(args.defaults)
    for arg, default in [*zip(args.args, defaults), ("*", None),
                         *zip(args.kwonlyargs, args.kw_defaults)]:
        if arg == "*":
            if args.kwonlyargs:
                parts.append("*")
            continue
        text = arg.arg + (f": {ast.unparse(arg.annotation)}" if arg.annotation else "")
        if default is not None:
            text += f" = {ast.unparse(default)}" if arg.annotation else \
                f"={ast.unparse(default)}"
        parts.append(text)
    lines, line = [], f"def {name}("
    for i, part in enumerate(parts):
        piece = part + (", " if i < len(parts) - 1 else f"){returns}:")
        if len(indent) + len(line) + len(piece.rstrip()) > 88 and line.strip():
            lines.append(line.rstrip())
            line = " " * (len(name) + 5)
        line += piece
    return "\n".join([*lines, line])


def _member_key(name: str) -> tuple:
    """isort's order of a ``from`` line's names: constants, classes, the others."""
    bare = name.split(" as ")[0]
    kind = 0 if len(bare) > 1 and bare.isupper() else 1 if bare[:1].isupper() else 2
    return kind, bare.lower(), bare


def import_block(lines) -> List[str]:
    """Import lines merged per module and grouped: stdlib, NumPy, scratchnet, relative.

    The order is isort's (ruff's ``I001``): in each group the ``import x``
    lines, then the ``from`` lines by module; a renamed import (``Adam as
    ChapterAdam``) on a line of its own.

    Parameters
    ----------
    lines : iterable of str
        ``import x [as y]`` and ``from m import name [as alias]`` lines, one
        name each.

    Returns
    -------
    list of str
        The block, groups separated by an empty line; a ``from`` line longer
        than 88 columns is written with parentheses, one name a line.

    Examples
    --------
    >>> lines = ["from .softmax import softmax", "import numpy as np",
    ...          "from typing import Any", "from .softmax import log_softmax",
    ...          "from scratchnet.optim import SGD as ChapterSGD"]
    >>> print("\\n".join(import_block(lines)))
    from typing import Any
    <BLANKLINE>
    import numpy as np
    <BLANKLINE>
    from scratchnet.optim import SGD as ChapterSGD
    <BLANKLINE>
    from .softmax import log_softmax, softmax
    """
    modules: Dict[str, List[str]] = {}
    entries = []
    for line in set(lines):
        if line.startswith("import "):
            entries.append((line.split()[1], 0, "", line))
            continue
        module, name = line[5:].split(" import ")
        if " as " in name:
            entries.append((module, 1, _member_key(name), line))
        else:
            modules.setdefault(module, []).append(name)
    for module, names in modules.items():
        names = sorted(set(names), key=_member_key)
        line = f"from {module} import {', '.join(names)}"
        if len(line) > 88:
            listed = "".join(f"    {name},\n" for name in names)
            line = f"from {module} import (\n{listed})"
        entries.append((module, 1, _member_key(names[0]), line))

    def group(module: str) -> int:
        top = module.split(".")[0]
        return (3 if module.startswith(".") else 2 if top == "scratchnet"
                else 1 if top == "numpy" else 0)

    out, last = [], None
    for module, _, _, line in sorted(
            entries, key=lambda e: (group(e[0]), e[1], e[0].lower(), e[2])):
        if last is not None and group(module) != last:
            out.append("")
        out.append(line)
        last = group(module)
    return out


def mark_unused_imports(text: str, elsewhere: str = "", reason: str = "") -> str:
    """``text`` with ``# noqa: F401`` on each import line whose name no code reads.

    A hand-out imports what the student's answers and the docstrings'
    examples will call (``log_softmax`` in ``losses.py``); until the answer is
    written no code reads it, and a linter would call it unused.  The mark
    says why it is there.

    Parameters
    ----------
    text : str
        A module's source (or a notebook cell's).
    elsewhere : str, optional
        More code that reads the names (a notebook's other cells).
    reason : str, optional
        Said after the mark.

    Returns
    -------
    str

    Examples
    --------
    >>> print(mark_unused_imports("import math\\nimport numpy as np\\nnp.ones(2)",
    ...                           reason="for your answer"))
    import math  # noqa: F401 (for your answer)
    import numpy as np
    np.ones(2)
    """
    read = set()
    for code in (text, elsewhere):
        tree = ast.parse(code)
        read |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    lines = text.splitlines()
    marked = set()
    for node in ast.parse(text).body:
        if not isinstance(node, (ast.Import, ast.ImportFrom)) or \
                getattr(node, "module", "") == "__future__":
            continue
        for alias in node.names:
            bound = alias.asname or alias.name.split(".")[0]
            if bound in read:
                continue
            pattern = re.compile(rf"\b{re.escape(alias.name)}\b")
            for i in range(node.lineno - 1, node.end_lineno):
                if pattern.search(lines[i]):
                    marked.add(i)
                    break
    note = f" ({reason})" if reason else ""
    for i in marked:
        lines[i] += f"  # noqa: F401{note}"
    return "\n".join(lines) + ("\n" if text.endswith("\n") else "")
