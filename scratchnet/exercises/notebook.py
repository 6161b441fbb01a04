"""The hand-out as a notebook: per exercise its docstring, a stub and a check.

Courses hand out notebooks.  ``make ... --notebook`` writes one (nbformat 4,
plain JSON: no Jupyter needed to write it): a title, a cell of imports, the
given code, then per exercise its docstring as Markdown, a code cell with the
function to write (tagged ``exercise``) and a cell that checks it with
:func:`~scratchnet.exercises.assert_passes` (tagged ``check``).  The grader
reads the code cells in order as the package's modules, each cell in the
module its metadata names, the ``check`` cells left out
(:func:`notebook_modules`).
"""

from __future__ import annotations

import ast
import json
import re
import textwrap
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from .catalogue import OWN
from .layout import import_block, mark_unused_imports

#: Where a line of a notebook's module was written: (cell, line in the cell), from 1.
Origin = Optional[Tuple[int, int]]

__all__ = ["cell_lines", "cell_of", "docstring_markdown", "in_cells", "notebook_json",
           "notebook_modules"]


def _cell(kind: str, text: str, tag: str = "", module: str = "") -> Dict[str, Any]:
    cell: Dict[str, Any] = {"cell_type": kind, "metadata": {},
                            "source": text.strip("\n").splitlines(keepends=True)}
    if tag:
        cell["metadata"]["tags"] = [tag]
    if module:
        cell["metadata"]["scratchnet"] = {"module": module}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def docstring_markdown(name: str, doc: str) -> str:
    """A numpydoc docstring as Markdown: sections as headings, math as ``$...$``.

    Parameters
    ----------
    name : str
        The exercise's id, the heading.
    doc : str
        The docstring (cleaned, as ``inspect.cleandoc`` gives it).

    Returns
    -------
    str

    Examples
    --------
    >>> doc = "Sum :math:`x +\\n    y`.\\n\\nNotes\\n-----\\nSee ``y``."
    >>> print(docstring_markdown("f", doc))
    ### `f`
    <BLANKLINE>
    Sum $x + y$.
    <BLANKLINE>
    **Notes**
    <BLANKLINE>
    See `y`.
    """
    doc = re.sub(r":math:`([^`]*)`",   # a role broken over lines: on one line
                 lambda m: ":math:`" + " ".join(m.group(1).split()) + "`", doc)
    out, lines, in_math, in_code = [f"### `{name}`", ""], doc.splitlines(), False, False
    for i, line in enumerate(lines):
        if set(line.strip()) == {"-"} and i:
            continue
        if i + 1 < len(lines) and set(lines[i + 1].strip()) == {"-"} and line.strip():
            if in_code:
                out.append("```")
                in_code = False
            out += [f"**{line.strip()}**", ""]
            continue
        if line.strip() == ".. math::":
            out.append("$$")
            in_math = True
            continue
        if in_math and line.strip() and not line.startswith(" "):
            out += ["$$", ""]
            in_math = False
        if line.lstrip().startswith(">>>") and not in_code:
            out.append("```python")
            in_code = True
        if in_code and not line.strip():
            out += ["```", ""]
            in_code = False
            continue
        line = re.sub(r":math:`([^`]*)`", r"$\1$", line)
        line = re.sub(r":\w+:`~?([^`]*)`", r"`\1`", line).replace("``", "`")
        out.append(line.strip() if in_math else line)
    if in_math:
        out.append("$$")
    if in_code:
        out.append("```")
    return "\n".join(out).rstrip()


def notebook_json(title: str, modules: List[Any], by_id: Dict[str, Any],
                  rule: str = "") -> Dict:
    """The notebook of a hand-out: given code, then per exercise doc, stub, check.

    Parameters
    ----------
    title : str
    modules : list
        The hand-out's modules (``handout._Module``: ``blocks``, ``helpers``,
        ``imports``), in chapter order.
    by_id : dict
        The exercises, by id.
    rule : str, optional
        A paragraph for the first cell (the hand-out's grading rule).

    Returns
    -------
    dict
        nbformat 4.

    Examples
    --------
    >>> notebook_json("Homework", [], {})["nbformat"]
    4
    """
    imports = set()
    for module in modules:
        imports |= {line for line in module.imports if not line.startswith("from .")}
    imports.add("from scratchnet.exercises import assert_passes")
    if any(i in OWN for i in by_id):
        imports.add("from scratchnet.exercises import assert_examples")
    cells = [_cell("markdown", f"# {title}\n\nExercises from scratchnet's chapters: "
                   f"{', '.join(by_id)}.\n\nRun the cells in order.  Write the "
                   "bodies that raise `NotImplementedError` (the message says what "
                   "to compute); the cell after each checks it.  Everything else is "
                   "given and works." + (f"\n\n{rule}" if rule else "")),
             _cell("code", "\n".join(import_block(imports)), "given", "*")]
    for module in modules:
        given = [text for _, role, text in module.blocks if role == "given"]
        given += list(module.helpers.values())
        if given:
            cells.append(_cell("markdown", f"## Given, from `{module.chapter}`"))
            cells.append(_cell("code", "\n\n\n".join(given), "given", module.chapter))
        for name, role, text in module.blocks:
            if role != "exercise":
                continue
            ids = [i for i in by_id if i.split(".")[0] == name]
            node = ast.parse(textwrap.dedent(text)).body[0]
            doc = ast.get_docstring(node) or ""
            if isinstance(node, ast.ClassDef):
                doc = "\n\n".join(ast.get_docstring(m) or "" for m in node.body
                                  if isinstance(m, ast.FunctionDef)
                                  and f"{name}.{m.name}" in ids)
            cells.append(_cell("markdown", docstring_markdown(" and ".join(ids), doc)))
            cells.append(_cell("code", text, "exercise", module.chapter))
            checks = [f"assert_examples({name})  # your instructor's exercise"
                      if i in OWN else f'assert_passes("{i}", {name})' for i in ids]
            cells.append(_cell("code", "\n".join(checks), "check"))
    code = ["".join(cell["source"]) for cell in cells[2:]
            if cell["cell_type"] == "code"]
    cells[1] = _cell("code", mark_unused_imports(
        "".join(cells[1]["source"]), "\n\n".join(code),
        "for your answers and the examples"), "given", "*")
    for i, cell in enumerate(cells):
        cell["id"] = f"cell-{i}"
    return {"cells": cells, "metadata": {
        "scratchnet": {"exercises": list(by_id)},   # what a self-check grades
        "kernelspec": {"display_name": "Python 3", "language": "python",
                       "name": "python3"},
        "language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}


def _code(cell: Dict[str, Any], number: int) -> List[Tuple[str, Origin]]:
    """A code cell's lines, each with where it is: (cell number, line in the cell).

    IPython's magics (``%``, ``!``) are left out; an empty cell is one empty
    line."""
    source = cell.get("source", "")
    text = "".join(source) if isinstance(source, list) else str(source)
    lines = [(line, (number, n)) for n, line in enumerate(text.splitlines(), 1)
             if not line.lstrip().startswith(("%", "!"))]
    return lines or [("", None)]


def _joined(parts: List[List[Tuple[str, Origin]]],
            blank: int) -> List[Tuple[str, Origin]]:
    """The parts one after the other, ``blank`` empty lines between them."""
    out: List[Tuple[str, Origin]] = []
    for i, part in enumerate(parts):
        out += [("", None)] * (blank if i else 0) + part
    return out


def _assembled(path: Any) -> Dict[str, List[Tuple[str, Origin]]]:
    """Each module's lines as :func:`notebook_modules` writes them, with their cells."""
    cells = json.loads(Path(path).read_text())["cells"]
    shared: List[List[Tuple[str, Origin]]] = []
    own: Dict[str, List[List[Tuple[str, Origin]]]] = {}
    current = "*"
    for number, cell in enumerate(cells, 1):
        meta = cell.get("metadata", {})
        if cell.get("cell_type") != "code" or "check" in meta.get("tags", []):
            continue
        current = meta.get("scratchnet", {}).get("module", current)
        lines = _code(cell, number)
        (shared if current == "*" else own.setdefault(current, [])).append(lines)

    def text(parts):
        return "\n".join(line for part in parts for line, _ in part)

    defined = {module: set(re.findall(r"^(?:def|class)\s+(\w+)|^(\w+)\s*=",
                                      text(parts), re.M))
               for module, parts in own.items()}
    defined = {m: {a or b for a, b in names} for m, names in defined.items()}
    out = {}
    for module, parts in own.items():
        words = set(re.findall(r"\w+", text(parts)))
        imports = [(f"from .{other} import {', '.join(sorted(names & words))}", None)
                   for other, names in defined.items()
                   if other != module and names & words - defined[module]]
        head = [part for part in (_joined(shared, 0), imports) if part]
        out[module] = _joined([_joined(head, 1), *parts] if head else parts, 2)
    return out


def notebook_modules(path: Any) -> Dict[str, str]:
    """A notebook's code as the package's modules: its code cells, in order.

    Each cell written by ``make`` names its module in its metadata
    (``{"scratchnet": {"module": "layers"}}``; ``"*"``: every module, the
    imports); a cell the student added belongs to the module of the cell
    before it; ``check`` cells are left out.  A module imports, relatively,
    the names it reads that another module's cells define.
    :func:`cell_lines` says which cell each line comes from.

    Parameters
    ----------
    path : str or Path
        An ``.ipynb`` file.

    Returns
    -------
    dict
        ``{module: source}``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> cell = lambda text, module: {"cell_type": "code", "source": [text],
    ...     "metadata": {"scratchnet": {"module": module}}}
    >>> nb = {"cells": [cell("import numpy as np", "*"),
    ...                 cell("def softmax(x): ...", "softmax"),
    ...                 cell("def loss(x): return softmax(x)", "losses")]}
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "hw.ipynb"
    ...     _ = path.write_text(json.dumps(nb))
    ...     print(notebook_modules(path)["losses"])
    import numpy as np
    <BLANKLINE>
    from .softmax import softmax
    <BLANKLINE>
    <BLANKLINE>
    def loss(x): return softmax(x)
    <BLANKLINE>
    """
    return {module: "\n".join(line for line, _ in lines) + "\n"
            for module, lines in _assembled(path).items()}


def cell_lines(path: Any) -> Dict[str, List[Origin]]:
    """Where each line of the notebook's modules comes from: (cell, line in the cell).

    Parameters
    ----------
    path : str or Path
        An ``.ipynb`` file.

    Returns
    -------
    dict
        ``{module: [origin of line 1, of line 2, ...]}``; an origin is
        ``(cell number, line number in that cell)``, both counted from 1 (the
        cells as the notebook lists them, Markdown ones included), or None for
        a line the package adds (an import).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> cell = lambda text, module: {"cell_type": "code", "source": [text],
    ...     "metadata": {"scratchnet": {"module": module}}}
    >>> nb = {"cells": [cell("import numpy as np", "*"),
    ...                 {"cell_type": "markdown", "source": ["# softmax"]},
    ...                 cell("def softmax(x):\\n    return x", "softmax")]}
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "hw.ipynb"
    ...     _ = path.write_text(json.dumps(nb))
    ...     cell_lines(path)["softmax"]
    [(1, 1), None, None, (3, 1), (3, 2)]
    """
    return {module: [origin for _, origin in lines]
            for module, lines in _assembled(path).items()}


def cell_of(lines: Dict[str, List[Origin]], module_file: str, line: int) -> Origin:
    """The notebook cell, and the line in it, of a line of a module it was made into.

    Parameters
    ----------
    lines : dict
        :func:`cell_lines` of the notebook.
    module_file : str
        The module's file (``"softmax.py"``, or a path to it).
    line : int
        The line in that file, from 1.

    Returns
    -------
    (int, int) or None
        (cell number, line in the cell), both from 1; None if the line is not
        one of the notebook's (an import the package adds, or another file).

    Examples
    --------
    >>> cell_of({"softmax": [(1, 1), None, None, (3, 1), (3, 2)]},
    ...         "/tmp/submission/softmax.py", 5)
    (3, 2)
    """
    origins = lines.get(Path(module_file).stem, [])
    return origins[line - 1] if 0 < line <= len(origins) else None


#: What a report says of a place in a module: "softmax.py line 68".
_PLACE = re.compile(r"\b(\w+)\.py line (\d+)\b")


def in_cells(text: str, lines: Dict[str, List[Origin]]) -> str:
    """A report's text with each "softmax.py line 68" said as the notebook's cell.

    A notebook student has no ``softmax.py``: the grader reads the notebook as
    a package (:func:`notebook_modules`), and its messages name that package's
    files.  This names the cell and the line in it instead.

    Parameters
    ----------
    text : str
        A message of the report.
    lines : dict
        :func:`cell_lines` of the notebook.

    Returns
    -------
    str

    Examples
    --------
    >>> lines = {"softmax": [(1, 1), None, None, (3, 1), (3, 2)]}
    >>> in_cells("ZeroDivisionError: division by zero at softmax.py line 5", lines)
    'ZeroDivisionError: division by zero at cell 3, line 2'
    """
    def place(match: re.Match) -> str:
        where = cell_of(lines, match.group(1), int(match.group(2)))
        return match.group(0) if where is None else f"cell {where[0]}, line {where[1]}"
    return _PLACE.sub(place, text)
