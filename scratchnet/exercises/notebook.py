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
from typing import Any, Dict, List

from .catalogue import OWN
from .layout import import_block, mark_unused_imports

__all__ = ["docstring_markdown", "notebook_json", "notebook_modules"]


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


def notebook_json(title: str, modules: List[Any], by_id: Dict[str, Any]) -> Dict:
    """The notebook of a hand-out: given code, then per exercise doc, stub, check.

    Parameters
    ----------
    title : str
    modules : list
        The hand-out's modules (``handout._Module``: ``blocks``, ``helpers``,
        ``imports``), in chapter order.
    by_id : dict
        The exercises, by id.

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
                   "given and works."),
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


def _code(cell: Dict[str, Any]) -> str:
    source = cell.get("source", "")
    text = "".join(source) if isinstance(source, list) else str(source)
    return "\n".join(line for line in text.splitlines()   # no IPython magics
                     if not line.lstrip().startswith(("%", "!")))


def notebook_modules(path: Any) -> Dict[str, str]:
    """A notebook's code as the package's modules: its code cells, in order.

    Each cell written by ``make`` names its module in its metadata
    (``{"scratchnet": {"module": "layers"}}``; ``"*"``: every module, the
    imports); a cell the student added belongs to the module of the cell
    before it; ``check`` cells are left out.  A module imports, relatively,
    the names it reads that another module's cells define.

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
    cells = json.loads(Path(path).read_text())["cells"]
    shared: List[str] = []
    own: Dict[str, List[str]] = {}
    current = "*"
    for cell in cells:
        meta = cell.get("metadata", {})
        if cell.get("cell_type") != "code" or "check" in meta.get("tags", []):
            continue
        current = meta.get("scratchnet", {}).get("module", current)
        (shared if current == "*" else own.setdefault(current, [])).append(_code(cell))
    defined = {module: set(re.findall(r"^(?:def|class)\s+(\w+)|^(\w+)\s*=",
                                      "\n".join(texts), re.M))
               for module, texts in own.items()}
    defined = {m: {a or b for a, b in names} for m, names in defined.items()}
    out = {}
    for module, texts in own.items():
        words = set(re.findall(r"\w+", "\n".join(texts)))
        imports = [f"from .{other} import {', '.join(sorted(names & words))}"
                   for other, names in defined.items()
                   if other != module and names & words - defined[module]]
        head = "\n\n".join(part for part in ("\n".join(shared), "\n".join(imports))
                           if part)
        out[module] = "\n\n\n".join([head, *texts]) + "\n"
    return out
