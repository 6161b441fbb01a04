"""The student's docstring: only the covered arguments, examples on the student's code.

A chapter's docstring speaks of every option of the library's function
(``weight``, ``ignore_index``, ``axis``, ``keepdims``) and its examples call the
library (``sn.softmax(...)``).  An exercise takes fewer arguments, and its
student should read only about those and run examples that call their own
function, so that the examples fail until the function is written.
:func:`exercise_docstring` cuts a numpydoc docstring down in that way:

- Parameters: the entries of arguments not covered are left out (a shared
  entry ``logits, targets, weight`` keeps ``logits, targets``);
- every other section: a paragraph that names an argument not covered is left
  out (a section left empty goes with its title);
- Examples: an example that names one, or reads a variable such an example
  made, is left out; ``sn.layers.linear_forward(...)`` becomes
  ``linear_forward(...)`` and ``import scratchnet as sn`` goes.
"""

from __future__ import annotations

import ast
import builtins
import re
import textwrap
from typing import Iterable, List, Sequence, Set

__all__ = ["example_names", "exercise_docstring", "free_names", "plain_math",
           "summary_sentence"]

_LIBRARY_CALL = re.compile(r"\b(?:sn|scratchnet)(?:\.\w+)*\.(\w+)\b")
_IMPORT_LIBRARY = re.compile(
    r"^\s*>>> (import scratchnet( as sn)?|from scratchnet\b.*)$")


def _mentions(text: str, names: Iterable[str]) -> bool:
    return any(re.search(rf"\b{re.escape(name)}\b", text) for name in names)


def _example_code(lines: Sequence[str]) -> List[str]:
    """The code of doctest lines, ``>>> `` and ``... `` taken off (no output)."""
    return [line.lstrip()[4:] for line in lines
            if line.lstrip()[:4] in (">>> ", "... ")]


def _paragraphs(lines: Sequence[str]) -> List[List[str]]:
    """Lines grouped into paragraphs, a blank line closing each (kept with it)."""
    groups: List[List[str]] = [[]]
    for line in lines:
        groups[-1].append(line)
        if not line.strip():
            groups.append([])
    return [g for g in groups if g]


def _prose(lines: Sequence[str], uncovered: Sequence[str]) -> List[str]:
    """A paragraph without the parentheses and sentences that name what is not
    covered, wrapped again; [] if nothing is left or it is not plain prose."""
    if not _mentions("".join(lines), uncovered):
        return list(lines)
    text = [line for line in lines if line.strip()]
    depth = {len(line) - len(line.lstrip()) for line in text}
    if len(depth) != 1 or any("::" in line or ">>>" in line for line in text):
        return []
    joined = " ".join(line.strip() for line in text)
    for name in uncovered:
        joined = re.sub(rf"\s*\([^()]*\b{re.escape(name)}\b[^()]*\)", "", joined)
    sentences = [s for s in re.split(r"(?<=[.;])\s+", joined)
                 if not _mentions(s, uncovered)]
    if not sentences:
        return []
    indent = " " * depth.pop()
    tail = [""] if not lines[-1].strip() else []
    return textwrap.wrap(" ".join(sentences), 88 - 4, initial_indent=indent,
                         subsequent_indent=indent, break_on_hyphens=False) + tail


def _examples(lines: Sequence[str], uncovered: Sequence[str]) -> List[str]:
    """The Examples section without the examples that need what is not covered."""
    chunks: List[List[str]] = []
    for line in lines:
        starts = line.lstrip().startswith(">>>")
        if starts or not chunks or not line.strip() or \
                not chunks[-1][-1].strip():
            chunks.append([])
        chunks[-1].append(line)
    kept, poisoned = [], set(uncovered)
    for chunk in chunks:
        if _IMPORT_LIBRARY.match(chunk[0]):
            continue
        code = _example_code(chunk)
        if _mentions("\n".join(code) if code else "\n".join(chunk), poisoned):
            poisoned |= _assigned(code)
            continue
        kept.append(chunk)
    out = [_LIBRARY_CALL.sub(r"\1", line) for chunk in kept for line in chunk]
    return out if any(line.lstrip().startswith(">>>") for line in out) else []


def _assigned(code: Sequence[str]) -> Set[str]:
    try:
        tree = ast.parse("\n".join(code))
    except SyntaxError:
        return set()
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Store)}


def _parameter_entries(lines: Sequence[str], covers: Sequence[str],
                       uncovered: Sequence[str], indent: int) -> List[str]:
    """The entries of the covered arguments, their text cut as ``_prose`` cuts."""
    entries: List[List[str]] = []
    for line in lines:
        depth = len(line) - len(line.lstrip())
        if line.strip() and depth == indent:
            head, sep, kind = line.strip().partition(" : ")
            wanted = [n.strip() for n in head.split(",") if n.strip() in covers]
            entries.append([" " * indent + ", ".join(wanted) + sep + kind] if wanted
                           else [])
        elif entries and entries[-1]:
            entries[-1].append(line)
    return [line for entry in entries if entry
            for line in [entry[0], *_prose(entry[1:], uncovered)]]


def exercise_docstring(text: str, covers: Sequence[str],
                       uncovered: Sequence[str]) -> str:
    """A docstring's source cut down to the exercise (see the module's docstring).

    Parameters
    ----------
    text : str
        The docstring as written in the source, quotes and indentation
        included.
    covers : sequence of str
        The arguments the exercise takes.
    uncovered : sequence of str
        The arguments of the chapter's function that it does not take.

    Returns
    -------
    str

    Examples
    --------
    >>> doc = '''    \"\"\"Sum.
    ...
    ...     Parameters
    ...     ----------
    ...     x : ndarray
    ...     axis : int
    ...
    ...     Examples
    ...     --------
    ...     >>> import scratchnet as sn
    ...     >>> sn.total(np.ones(2))
    ...     2.0
    ...     >>> sn.total(np.ones((2, 2)), axis=0)
    ...     array([2., 2.])
    ...     \"\"\"'''
    >>> out = exercise_docstring(doc, ["x"], ["axis"])
    >>> print(out.replace(">>>", "%%%"))
        \"\"\"Sum.
    <BLANKLINE>
        Parameters
        ----------
        x : ndarray
    <BLANKLINE>
        Examples
        --------
        %%% total(np.ones(2))
        2.0
        \"\"\"
    """
    lines = text.splitlines()
    closing = lines.pop() if len(lines) > 1 and lines[-1].strip() == '"""' else None
    indent = len(closing) - len(closing.lstrip()) if closing is not None else 0
    sections: List[List[str]] = [[]]
    for i, line in enumerate(lines):
        if i + 1 < len(lines) and set(lines[i + 1].strip()) == {"-"} and line.strip():
            sections.append([])
        sections[-1].append(line)
    out: List[str] = []
    for section in sections:
        titled = len(section) > 1 and set(section[1].strip()) == {"-"}
        title, head = (section[0].strip(), section[:2]) if titled else ("", [])
        body = section[len(head):]
        if title == "Parameters":
            body = _parameter_entries(body, covers, uncovered, indent)
        elif title == "Examples":
            body = _examples(body, uncovered)
        elif titled or out:  # the summary and the text under it stay
            body = [line for p in _paragraphs(body) for line in _prose(p, uncovered)]
        if titled and not any(line.strip() for line in body):
            continue
        if out and out[-1].strip():
            out.append("")
        out += head + body
    while out and not out[-1].strip():
        out.pop()
    return "\n".join(out + ([closing] if closing is not None else []))


def example_names(text: str) -> List[str]:
    """The names a docstring's examples read that they do not define (nor builtins).

    Parameters
    ----------
    text : str
        A docstring.

    Returns
    -------
    list of str
        Sorted.

    Examples
    --------
    >>> example_names('''>>> x = np.ones(2)
    ... >>> softmax(x)''')
    ['np', 'softmax']
    """
    try:
        tree = ast.parse("\n".join(_example_code(text.splitlines())))
    except SyntaxError:
        return []
    imported = [a.asname or a.name.split(".")[0] for n in ast.walk(tree)
                if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names]
    return free_names(tree, imported)


def free_names(tree: ast.AST, params: Sequence[str]) -> List[str]:
    """Names code reads that it neither takes nor assigns (nor are builtins).

    Parameters
    ----------
    tree : ast.AST
    params : sequence of str

    Returns
    -------
    list of str
        Sorted.

    Examples
    --------
    >>> free_names(ast.parse("y = np.exp(x) + len(z)"), ["x"])
    ['np', 'z']
    """
    stored = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)
              and not isinstance(n.ctx, ast.Load)}
    loaded = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)
              and isinstance(n.ctx, ast.Load)}
    return sorted(loaded - stored - set(params) - set(dir(builtins)))


def plain_math(tex: str) -> str:
    r"""TeX as plain text for a message: ``\mathrm{onehot}_t`` is ``onehot_t``.

    Parameters
    ----------
    tex : str
        The inside of a ``:math:`` role.

    Returns
    -------
    str

    Examples
    --------
    >>> plain_math(r"y' = 0.9\,\mathrm{onehot}_t + \frac{0.1}{M}")
    "y' = 0.9 onehot_t + (0.1)/(M)"
    """
    text = re.sub(r"\\[,;:! ]|\\quad", " ", tex)
    text = re.sub(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}", r"(\1)/(\2)", text)
    text = re.sub(r"\\(?:mathrm|operatorname|text|mathbf|mathbb|mathcal)\s*"
                  r"\{([^{}]*)\}", r"\1", text)
    text = re.sub(r"\\cdot\b", "*", text)
    text = re.sub(r"\\(?:left|right|[bB]ig[lr]?)\b", "", text)
    text = re.sub(r"\\([A-Za-z]+)", r"\1", text).replace("{", "").replace("}", "")
    return " ".join(text.split())


def summary_sentence(doc: str) -> str:
    r"""The first sentence of a docstring, its math as plain text, no full stop.

    What a stub says of an instructor's exercise: a whole sentence, never one
    cut where a line breaks or where a formula was.

    Parameters
    ----------
    doc : str
        A docstring (cleaned, as ``inspect.getdoc`` gives it).

    Returns
    -------
    str

    Examples
    --------
    >>> summary_sentence(r'''Label-smoothed cross-entropy: the batch mean of
    ... :math:`-\sum_i y'_i \log q_i`.  Finite for large logits.''')
    "Label-smoothed cross-entropy: the batch mean of -sum_i y'_i log q_i"
    """
    paragraph = " ".join(doc.strip().split("\n\n")[0].split())
    paragraph = re.sub(r":math:`([^`]*)`", lambda m: plain_math(m.group(1)), paragraph)
    paragraph = re.sub(r":\w+:`~?([^`]*)`", r"\1", paragraph).replace("``", "")
    first = re.split(r"(?<=[.!?])\s+(?=[A-Z(`])", paragraph)[0]
    return first.rstrip(".").strip()
