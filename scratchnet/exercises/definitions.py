"""A module's top-level definitions as separate sources: a broken one costs itself.

:func:`chunks` cuts a module's text, which need not parse, into its top-level
statements (each with its decorators; an import of several names into one
import per name).  The grader reads a submission's source this way, and the
answering shim builds a module that does not import whole definition by
definition.  This file imports only the standard library.
"""

from __future__ import annotations

import ast
import re
from typing import Any, List, Tuple

__all__ = ["chunks"]

_START = re.compile(r"^(?![\s#)\]}]|else\b|elif\b|except\b|finally\b)")
_NAMED = re.compile(r"^(?:async\s+)?(?:def|class)\s+(\w+)|^(\w+)\s*(?::[^=]*)?=")


def chunks(text: str) -> List[Tuple[int, str, List[str]]]:
    """A module's top-level statements, each with its decorators, as separate sources.

    Parameters
    ----------
    text : str
        The module's source; it need not parse.

    Returns
    -------
    list of (int, str, list of str)
        The first line (1-based), the source, and the names it defines
        (a ``def`` or ``class`` name, or an assignment's target).

    Examples
    --------
    >>> text = ("import numpy as np\\n\\ndef f(x)\\n    return x\\n\\n"
    ...         "@d\\ndef g():\\n    pass\\n")
    >>> [(line, names) for line, _, names in chunks(text)]
    [(1, []), (3, ['f']), (6, ['g'])]
    >>> [source for _, source, _ in chunks("from .softmax import a, b\\n")]
    ['from .softmax import a\\n', 'from .softmax import b\\n']
    """
    lines = text.splitlines()
    found: List[List[Any]] = []
    decorated = False
    for i, line in enumerate(lines, 1):
        if not line.strip() or not _START.match(line):
            if found:
                found[-1][1].append(line)
            continue
        if decorated:
            found[-1][1].append(line)
        else:
            found.append([i, [line]])
        decorated = line.startswith("@")
    out = []
    for first, body in found:
        names = [m.group(1) or m.group(2) for m in map(_NAMED.match, body[:8]) if m]
        named = [n for n in names if n][:1]
        source = "\n".join(body).rstrip() + "\n"
        out += [(first, one, named) for one in _one_name_each(source)]
    return out


def _one_name_each(source: str) -> List[str]:
    """An import of several names as one import per name (one missing costs only it)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return [source]
    node = tree.body[0] if len(tree.body) == 1 else None
    if not isinstance(node, (ast.Import, ast.ImportFrom)) or len(node.names) < 2:
        return [source]
    return [ast.unparse(type(node)(**{**dict(ast.iter_fields(node)),
                                      "names": [alias]})) + "\n"
            for alias in node.names]
