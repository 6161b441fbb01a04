"""The student edition, generated from the chapters' source: the bodies left to write.

``make`` reads each exercise's function (or method) from its chapter with
:mod:`inspect` and :mod:`ast`, keeps the covered arguments of its signature
and its docstring (equation and doctest included, the Parameters entries of
arguments the exercise does not cover left out), and replaces the body with
``raise NotImplementedError`` and a one-line pointer.  What the student is
given is written out from the chapter's source, working; a class exercise is
a subclass of the chapter's class with only the methods to write.  Names a body
needs are imported: relatively from the package's other modules
(``from .softmax import log_softmax``), or else from where the chapter takes
them.  ``make(..., solutions=True)`` writes the answer key: the same package
with the chapter's bodies in place (arguments not covered set to their
defaults).  Nothing here is written per exercise, so the edition follows the
chapters as they change.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import textwrap
import types
from pathlib import Path
from typing import Dict, List, Sequence

from .catalogue import CHAPTER_ORDER, Exercise, select
from .layout import import_block, signature

__all__ = ["make"]

_README = """\
# {title}

Exercises from scratchnet's chapters: {ids}.

Each module is named as the chapter it comes from.  Write the bodies that
raise `NotImplementedError` (the message says what to write); the docstrings
are the chapter's own, with the equations, and their examples show what the
library's function returns: yours should return the same.  Everything else
in the modules is given and works.

Check your work (from the folder that holds `{name}`):

    python -m scratchnet exercises check {name}
    python -m scratchnet exercises check {name} --only {first}

or in your own pytest file:

    from scratchnet.exercises import assert_passes
    from {name}.{chapter} import {func}

    def test_{test}():
        assert_passes("{first}", {func})

Each check says which input it used, what it expected, what came back and,
for the classic mistakes, what to change.
"""


def _chapter_module(chapter: str) -> types.ModuleType:
    return importlib.import_module(f"scratchnet.{chapter}")


def _home(name: str) -> str:
    """The chapter that defines ``name`` (``"TwoLayerMLP.forward"`` -> ``"mlp"``)."""
    top = name.split(".")[0]
    for chapter in CHAPTER_ORDER:
        if getattr(_chapter_module(chapter), top, None) is not None and \
                getattr(getattr(_chapter_module(chapter), top), "__module__", "") \
                == f"scratchnet.{chapter}":
            return chapter
    raise KeyError(f"{name!r} is defined in none of the chapters")


def _function_node(obj) -> tuple:
    """The dedented source of a function and its ``ast.FunctionDef``."""
    src = textwrap.dedent(inspect.getsource(obj))
    return src, ast.parse(src).body[0]


def _covered_arguments(node: ast.FunctionDef, covers: Sequence[str]) -> tuple:
    """The signature's arguments reduced to ``covers``; the others with defaults."""
    args = node.args
    positional = args.posonlyargs + args.args
    with_default = [a.arg for a in positional][len(positional) - len(args.defaults):]
    defaults = dict(zip(with_default, args.defaults))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults)
                     if d is not None})
    keep = [a for a in positional if a.arg in covers]
    kwonly = [a for a in args.kwonlyargs if a.arg in covers]
    new = ast.arguments(
        posonlyargs=[], args=keep, vararg=None, kwonlyargs=kwonly,
        kw_defaults=[defaults.get(a.arg) for a in kwonly], kwarg=None,
        defaults=[defaults[a.arg] for a in keep if a.arg in defaults][
            -len([a for a in keep if a.arg in defaults]) or len(keep):])
    dropped = {a.arg: defaults[a.arg] for a in positional + args.kwonlyargs
               if a.arg not in covers and a.arg in defaults}
    return new, dropped


def _pruned_docstring(src: str, node: ast.FunctionDef, covers: Sequence[str]) -> str:
    """The docstring's source text without Parameters entries of uncovered arguments."""
    first = node.body[0]
    lines = src.splitlines()[first.lineno - 1:first.end_lineno]
    out, skipping, section = [], False, ""
    indent = len(lines[0]) - len(lines[0].lstrip())
    for i, line in enumerate(lines):
        depth = len(line) - len(line.lstrip())
        if i + 1 < len(lines) and set(lines[i + 1].strip()) == {"-"}:
            section, skipping = line.strip(), False
        elif set(line.strip()) == {"-"}:
            pass
        elif section == "Parameters" and line.strip() and depth == indent:
            names = [n.strip() for n in line.split(" : ")[0].split(",")]
            skipping = not any(n in covers for n in names)
        elif section == "Parameters" and line.strip() and depth < indent:
            skipping = False
        if not skipping:
            out.append(line)
    return "\n".join(out)


def _free_names(tree: ast.AST, params: Sequence[str]) -> List[str]:
    """Names a function reads that it neither takes nor assigns (nor are builtins)."""
    stored = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)
              and not isinstance(n.ctx, ast.Load)}
    loaded = [n.id for n in ast.walk(tree) if isinstance(n, ast.Name)
              and isinstance(n.ctx, ast.Load)]
    skip = set(params) | stored | set(dir(builtins))
    return sorted(set(loaded) - skip)


def _function_text(obj, ex_id: str, covers, todo: str | None, indent: str) -> tuple:
    """A function's text for the package: exercise (``todo``) or full body."""
    src, node = _function_node(obj)
    if covers is None:
        covers = [a.arg for a in node.args.posonlyargs + node.args.args
                  + node.args.kwonlyargs]
    args, dropped = _covered_arguments(node, covers)
    returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
    head = signature(node.name, args, returns, indent)
    doc = _pruned_docstring(src, node, covers)
    if todo is not None:
        body = f'    raise NotImplementedError("{ex_id}: {todo}")'
        code_tree = ast.parse(f"def f({ast.unparse(args)}){returns}: pass")
        hidden = _free_names(node, [a.arg for a in args.args + args.kwonlyargs])
    else:
        prelude = [f"    {name} = {ast.unparse(value)}  # not covered: the default"
                   for name, value in dropped.items()]
        body_lines = src.splitlines()[node.body[0].end_lineno:node.end_lineno]
        body = "\n".join(prelude + body_lines)
        code_tree = ast.parse(textwrap.dedent(head + "\n" + body))
        if ast.get_docstring(node) is None:
            body = "\n".join(prelude + src.splitlines()[node.body[0].lineno - 1:
                                                       node.end_lineno])
    params = [a.arg for a in args.args + args.kwonlyargs]
    names = _free_names(code_tree, params)
    if todo is not None:  # what the chapter's body uses, if the package has it
        names += [f"?{name}" for name in hidden if name not in names]
    text = "\n".join([head, doc, body]) if ast.get_docstring(node) else \
        "\n".join([head, body])
    return textwrap.indent(text, indent), names


def _import_line(name: str, chapter: str, where: Dict[str, str], here: str) -> str:
    """How a module of the package gets ``name``, or "" if it defines it.

    A name marked ``?`` is imported only from the package or as a module.
    """
    optional, name = name.startswith("?"), name.lstrip("?")
    if where.get(name) == here:
        return ""
    if name in where:
        return f"from .{where[name]} import {name}"
    value = getattr(_chapter_module(chapter), name, None)
    if optional and not isinstance(value, types.ModuleType):
        return ""
    if isinstance(value, types.ModuleType):
        alias = "" if value.__name__ == name else f" as {name}"
        return f"import {value.__name__}{alias}"
    origin = getattr(value, "__module__", None)
    if not origin or getattr(importlib.import_module(origin), name, None) is not value:
        origin = f"scratchnet.{chapter}"
    return f"from {origin} import {name}"


def _given_helpers(mod: types.ModuleType, needed: Dict[str, str]) -> Dict[str, str]:
    """The chapter's private functions the module's code calls, written out, given.

    The package imports only public library names: a helper such as
    ``losses._reduced`` is copied from the chapter with the code that calls
    it, and so is every helper it calls in turn (``needed`` gains what they
    need), and a private constant they read (``_ATOL = 1e-06``).  Returns
    ``{name: text}``: the constants, then the functions in source order.
    """
    def is_helper(name: str) -> bool:
        obj = getattr(mod, name, None)
        return name.startswith("_") and inspect.isfunction(obj) and \
            obj.__module__ == mod.__name__

    def constant(name: str) -> str:  # a private number or string, as a line
        value = getattr(mod, name, None)
        private = name.startswith("_") and type(value) in (int, float, str, bool)
        return f"{name} = {value!r}" if private else ""

    found: Dict[str, str] = {}
    todo = list(needed)
    while todo:
        name = todo.pop()
        if name in found or not (is_helper(name) or constant(name)):
            continue
        if constant(name):
            found[name] = constant(name)
            continue
        found[name], names = _function_text(getattr(mod, name), name, None, None, "")
        for n in names:
            needed.setdefault(n, mod.__name__.rsplit(".", 1)[-1])
        todo += names
    line = {name: 0 if constant(name) else inspect.getsourcelines(getattr(mod, name))[1]
            for name in found}
    return {name: found[name] for name in sorted(found, key=lambda n: (line[n], n))}


def _module_text(chapter: str, items: Dict[str, str], where, by_id, solutions) -> str:
    """One module of the package: its exercises and what is given, in source order."""
    mod = _chapter_module(chapter)
    blocks, needed, classes = [], {}, {}
    for name, role in items.items():
        if "." in name:
            classes.setdefault(name.split(".")[0], []).append((name, role))
            continue
        ex = by_id.get(name) if role == "exercise" else None
        todo = None if ex is None or solutions else ex.todo
        text, names = _function_text(getattr(mod, name), name,
                                     ex.covers if ex else None, todo, "")
        blocks.append(text)
        needed.update({n: chapter for n in names})
        needed.update({f"?{n}": chapter for n in (ex.given if ex else ())
                       if "." not in n})
    for cls_name, methods in classes.items():
        cls = getattr(mod, cls_name)
        to_write = [n.split(".")[1] for n, role in methods if role == "exercise"]
        summary = inspect.getdoc(cls).splitlines()[0]
        lines = [f"class {cls_name}(Chapter{cls_name}):",
                 f'    """{summary}', "",
                 f"    The chapter's class, with {', '.join(to_write) or 'nothing'} "
                 "to write here;",
                 f"    everything else is inherited from ``scratchnet.{chapter}."
                 f"{cls_name}``.", '    """']
        for name, role in methods:
            ex = by_id.get(name) if role == "exercise" else None
            todo = None if ex is None or solutions else ex.todo
            text, names = _function_text(getattr(cls, name.split(".")[1]), name,
                                         ex.covers if ex else None, todo, "    ")
            lines += ["", text]
            needed.update({n: chapter for n in names})
            needed.update({f"?{n}": chapter for n in (ex.given if ex else ())
                           if "." not in n})
        blocks.append("\n".join(lines))
        needed[f"Chapter{cls_name}"] = chapter
    helpers = _given_helpers(mod, needed)
    blocks += helpers.values()
    lines = {_import_line(n, c, where, chapter) for n, c in needed.items()
             if not n.startswith("Chapter") and n not in helpers} - {""}
    lines |= {f"from scratchnet.{chapter} import {c} as Chapter{c}" for c in classes}
    imports = import_block(lines)
    ids = [n for n, role in items.items() if role == "exercise"]
    given = [n for n, role in items.items() if role == "given"]
    kind = "Answer key" if solutions else "Exercises"
    doc = [f'"""{kind} from scratchnet\'s chapter '
           f"``{chapter}``: {', '.join(ids) or 'none (given code only)'}.", "",
           (mod.__doc__ or "").strip().splitlines()[0].replace('"""', "'''"), ""]
    if given:
        doc.append(f"Given, working: {', '.join(given)}.")
    doc += ["Generated from the chapter's source by ``python -m scratchnet "
            "exercises make``.", '"""']
    head = "\n".join(doc) + "\n\nfrom __future__ import annotations\n\n"
    return "\n\n\n".join([head + "\n".join(imports), *blocks]) + "\n"


def make(names: Sequence[str], out, *, solutions: bool = False) -> List[Path]:
    """Write the student edition (or the answer key) of exercises as a package.

    Parameters
    ----------
    names : sequence of str
        Exercise ids or chapter names (see :func:`~scratchnet.exercises.select`);
        empty means the whole catalogue.
    out : str or Path
        The package's folder, created if needed (its existing modules of these
        chapters are overwritten).
    solutions : bool, default False
        Write the chapters' bodies in place of ``NotImplementedError``.

    Returns
    -------
    list of Path
        The files written: ``__init__.py``, ``README.md`` and one module per
        chapter.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     files = make(["relu_backward"], pathlib.Path(tmp) / "hw")
    ...     print(sorted(f.name for f in files))
    ['README.md', '__init__.py', 'layers.py']
    """
    exercises: List[Exercise] = select(list(names))
    by_id = {ex.id: ex for ex in exercises}
    items: Dict[str, Dict[str, str]] = {}
    for ex in exercises:
        for name in ex.given:
            items.setdefault(_home(name), {}).setdefault(name, "given")
    for ex in exercises:
        items.setdefault(ex.chapter, {})[ex.id] = "exercise"
    where = {name.split(".")[0]: chapter for chapter, found in items.items()
             for name in found}
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for chapter in [c for c in CHAPTER_ORDER if c in items]:
        order = sorted(items[chapter], key=lambda n: _source_line(chapter, n))
        text = _module_text(chapter, {n: items[chapter][n] for n in order}, where,
                            by_id, solutions)
        written.append(out / f"{chapter}.py")
        written[-1].write_text(text)
    title = "Answer key" if solutions else "Homework"
    (out / "__init__.py").write_text(
        f'"""{title}: scratchnet exercises {", ".join(by_id)}."""\n\n'
        f"EXERCISES = {tuple(by_id)!r}  # what the grader grades\n")
    first = exercises[0]
    (out / "README.md").write_text(_README.format(
        title=title, ids=", ".join(by_id), name=out.name, first=first.id,
        chapter=first.chapter, func=first.id.split(".")[0],
        test=first.id.replace(".", "_").lower()))
    return sorted([*written, out / "__init__.py", out / "README.md"])


def _source_line(chapter: str, name: str) -> int:
    obj = _chapter_module(chapter)
    for part in name.split("."):
        obj = getattr(obj, part)
    return inspect.getsourcelines(obj)[1]
