"""The reference modules, derived from the chapters: one implementation per formula.

:mod:`~scratchnet.exercises.reference_scores` and
:mod:`~scratchnet.exercises.reference_models` are what a hand-out is written
from and what the grader's sandbox is sent (plain NumPy, no scratchnet).
Their signatures and docstrings are written for the student; their *bodies
are not written at all*: each is the chapter function's own body, made plain
by :func:`~scratchnet.exercises.source.plain_body` (the arguments the
exercise leaves out set to their defaults, the argument checks removed, the
few checks that also convert written as their plain NumPy,
:data:`~scratchnet.exercises.source.PLAIN_EQUIVALENTS`), and the chapters'
private helpers those bodies call are copied below them.  So a formula is
written once, in its chapter, and a change there reaches the hand-outs and
the grader by running ::

    python -m scratchnet.exercises.derive           # rewrite the bodies
    python -m scratchnet.exercises.derive --check   # exit 1 if one is stale

``tests/test_key_and_chapters.py`` runs the check: the committed modules are
what the chapters give.  Not derived (:data:`WRITTEN`): the two methods of
``TwoLayerMLP``, whose chapter bodies read the chapter's table of
activation pairs (``mlp.ACTIVATIONS``), which the sandbox cannot hold
without the backward passes an exercise must not be given; they are
pinned to the chapter by what they compute.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import sys
import textwrap
import types
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from .catalogue import chapter_of
from .source import chapter_module, plain_body

__all__ = ["HELPERS", "MODULES", "WRITTEN", "chapter_object", "derived", "main"]

#: The modules whose bodies are derived (files beside this one).
MODULES = ("reference_scores", "reference_models")
#: Written in the reference module, not derived (see the module docstring).
WRITTEN = ("TwoLayerMLP.forward", "TwoLayerMLP.backward")
#: The line after which a reference module holds the chapters' helpers.
HELPERS = "# ---- The chapters' private helpers, copied by derive.py ----"


def chapter_object(name: str) -> Optional[types.FunctionType]:
    """The chapter function (or method) ``name``, or None where no chapter has it.

    Parameters
    ----------
    name : str
        ``"softmax"`` or ``"SGD.update"``.

    Returns
    -------
    function or None

    Examples
    --------
    >>> chapter_object("SGD.update").__qualname__
    'SGD.update'
    >>> chapter_object("POINTERS") is None
    True
    """
    try:
        chapter = chapter_module(chapter_of(name))
    except (KeyError, ImportError):
        return None
    owner_name, _, attr = name.rpartition(".")
    owner = getattr(chapter, owner_name, None) if owner_name else chapter
    found = inspect.getattr_static(owner, attr, None) if owner is not None else None
    return found if inspect.isfunction(found) else None


def _definitions(tree: ast.Module) -> List[tuple]:
    """``(name, node)`` of each function and method, in the file's order."""
    out = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            out.append((node.name, node))
        elif isinstance(node, ast.ClassDef):
            out += [(f"{node.name}.{m.name}", m) for m in node.body
                    if isinstance(m, ast.FunctionDef)]
    return out


def _helpers(bodies: Sequence[tuple]) -> Dict[str, str]:
    """The chapters' private functions the bodies call, by name: their source."""
    found: Dict[str, str] = {}
    todo = list(bodies)
    while todo:
        text, namespace = todo.pop()
        for node in ast.walk(ast.parse(text)):
            name = node.id if isinstance(node, ast.Name) else ""
            value = namespace.get(name)
            if name.startswith("_") and name not in found and inspect.isfunction(value):
                source = textwrap.dedent(inspect.getsource(value))
                found[name] = source.rstrip()
                todo.append((source, vars(inspect.getmodule(value))))
    return dict(sorted(found.items()))


def derived(text: str) -> str:
    """A reference module's text with every body derived from its chapter.

    Parameters
    ----------
    text : str
        The module as it is.

    Returns
    -------
    str
        The same signatures and docstrings; each body the chapter's, plain
        (the functions of :data:`WRITTEN` and those no chapter has kept);
        after :data:`HELPERS`, the chapters' private helpers they call.

    Examples
    --------
    >>> src = (Path(__file__).parent / "reference_scores.py").read_text()
    >>> derived(src) == src   # the committed module is what the chapters give
    True
    """
    text = text.split("\n" + HELPERS)[0].rstrip() + "\n"
    lines, bodies = text.splitlines(), []
    for name, node in reversed(_definitions(ast.parse(text))):
        chapter = chapter_object(name)
        if chapter is None or name in WRITTEN:
            continue
        covers = [a.arg for a in node.args.posonlyargs + node.args.args
                  + node.args.kwonlyargs]
        body = plain_body(chapter, covers)
        bodies.append((body, vars(inspect.getmodule(chapter))))
        has_doc = ast.get_docstring(node) is not None
        start = node.body[1].lineno if has_doc else node.body[0].lineno
        indent = " " * (node.col_offset + 4)
        lines[start - 1:node.end_lineno] = textwrap.indent(body, indent).splitlines()
    helpers = _helpers(bodies)
    tail = ["", "", HELPERS, *[f"\n\n{source}" for source in helpers.values()]]
    return "\n".join(lines + (tail if helpers else [])) + "\n"


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Rewrite the reference modules from the chapters, or check them (``--check``).

    Parameters
    ----------
    argv : sequence of str, optional

    Returns
    -------
    int
        0, or 1 when ``--check`` finds a module the chapters would change.

    Examples
    --------
    >>> main(["--check"])
    0
    """
    parser = argparse.ArgumentParser(prog="python -m scratchnet.exercises.derive",
                                     description=main.__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 if a module is not derived")
    args = parser.parse_args(argv)
    stale = []
    for module in MODULES:
        path = Path(__file__).with_name(f"{module}.py")
        text = path.read_text()
        new = derived(text)
        if new != text:
            stale.append(path.name)
            if not args.check:
                path.write_text(new)
    if args.check and stale:
        print(f"not derived from the chapters: {', '.join(stale)}; run "
              "python -m scratchnet.exercises.derive", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
