"""How generated code is laid out: signatures and import blocks in PEP 8 form.

The student edition is written from syntax trees, and ``ast.unparse`` gives
``prior1: float=0.5`` and one import line per name.  These two functions lay
the generated text out as the chapters are written: ``prior1: float = 0.5``,
lines wrapped at 88 columns, imports merged per module and grouped (standard
library, NumPy, scratchnet, the package's own modules).
"""

from __future__ import annotations

import ast
from typing import Dict, List

__all__ = ["import_block", "signature"]


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


def import_block(lines) -> List[str]:
    """Import lines merged per module and grouped: stdlib, NumPy, scratchnet, relative.

    Parameters
    ----------
    lines : iterable of str
        ``import x [as y]`` and ``from m import name`` lines, one name each.

    Returns
    -------
    list of str
        The block, groups separated by an empty line; a ``from`` line longer
        than 88 columns is written with parentheses, one name a line.

    Examples
    --------
    >>> lines = ["from .softmax import softmax", "import numpy as np",
    ...          "from typing import Any", "from .softmax import log_softmax"]
    >>> print("\\n".join(import_block(lines)))
    from typing import Any
    <BLANKLINE>
    import numpy as np
    <BLANKLINE>
    from .softmax import log_softmax, softmax
    """
    modules: Dict[str, List[str]] = {}
    entries = []
    for line in lines:
        if line.startswith("import "):
            entries.append((line.split()[1], line))
        else:
            module, name = line[5:].split(" import ")
            modules.setdefault(module, []).append(name)
    for module, names in modules.items():
        line = f"from {module} import {', '.join(sorted(names))}"
        if len(line) > 88:
            names = "".join(f"    {name},\n" for name in sorted(names))
            line = f"from {module} import (\n{names})"
        entries.append((module, line))

    def group(module: str) -> int:
        top = module.split(".")[0]
        return (3 if module.startswith(".") else 2 if top == "scratchnet"
                else 1 if top == "numpy" else 0)

    out, last = [], None
    for module, line in sorted(entries, key=lambda e: (group(e[0]), e[0])):
        if last is not None and group(module) != last:
            out.append("")
        out.append(line)
        last = group(module)
    return out
