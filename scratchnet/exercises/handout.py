"""The hand-out: the student edition (or the answer key) as a package or a notebook.

``make`` writes each exercise from its reference
(:func:`~scratchnet.exercises.source.reference`) with the body left to write,
and beside it what the student is given, working: the functions listed in
the exercise's ``given`` and the chapter's private helpers the given code
calls, written out.  A package has one module per chapter, named as the
chapter, its modules importing each other relatively (the student's
``cross_entropy`` calls the student's ``log_softmax``); a notebook has, per
exercise, its docstring as Markdown, a cell with the stub and a cell that
checks it with :func:`~scratchnet.exercises.assert_passes`, after the given
code.  Neither imports a private name of scratchnet.
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
import textwrap
import types
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

from .catalogue import CHAPTER_ORDER, Exercise, chapter_of, select
from .layout import import_block, mark_unused_imports
from .notebook import notebook_json
from .own import load_own
from .source import chapter_module, function_text, reference, stub_message

__all__ = ["CHARGING", "make"]

#: The grading rule every hand-out states: what one mistake costs.
CHARGING = ("One mistake costs points once: every check computes its expected value "
            "from its own copy of the inputs, so writing into an argument costs the "
            "``inputs unchanged`` check alone; the edge cases (an empty batch, one "
            "class, a batch of one, inputs unchanged) earn their points in "
            "proportion to the value checks; and a check that fails only because "
            "another exercise it calls is wrong keeps its points (carried forward).")

_README = """\
# {title}

Exercises from scratchnet's chapters: {ids}.

Each module is named as the chapter it comes from.  Write the bodies that
raise `NotImplementedError` (the message says what to compute); each
docstring says what the function takes, what it returns and what is checked,
and its examples call your own function: `python -m pytest --doctest-modules
{name}` runs them.  Everything else in the modules is given and works.

{charging}

Check your work (from the folder that holds `{name}`):

    python -m scratchnet exercises check {name}
    python -m scratchnet exercises check {name} --only {first}

or in your own pytest file:

    from scratchnet.exercises import assert_passes
    from {name}.{chapter} import {func}

    def test_{test}():
        assert_passes("{first}", {func})
"""


def _source_line(chapter: str, name: str) -> Tuple[int, int]:
    """Where ``name`` is written: the chapter's (or the key's) order, then the
    instructor's exercises after."""
    obj: Any = chapter_module(chapter)
    for part in name.split("."):
        obj = getattr(obj, part, None)
    own = obj is None or not inspect.getmodule(obj).__name__.startswith("scratchnet.")
    if own:
        obj, _ = reference(name, chapter_module(chapter))
    return int(own), inspect.getsourcelines(obj)[1]


def _public_home(name: str) -> str:
    """Where the library defines a public ``name`` (a chapter, else scratchnet)."""
    try:
        return f"scratchnet.{chapter_of(name)}"
    except KeyError:
        return "scratchnet"


class _Module:
    """What one module of the hand-out holds: blocks of code and the names they need."""

    def __init__(self, chapter: str, where: Dict[str, str]) -> None:
        self.chapter, self.where = chapter, where
        self.blocks: List[Tuple[str, str, str]] = []   # (name, role, text)
        self.needed: Dict[str, Dict[str, Any]] = {}    # name -> its namespace
        self.helpers: Dict[str, str] = {}
        self.imports: set = set()

    def need(self, names: Sequence[str], namespace: Dict[str, Any]) -> None:
        for name in names:
            self.needed.setdefault(name, namespace)

    def resolve_names(self) -> None:
        """Import lines for what the blocks need; private helpers written out."""
        todo = list(self.needed)
        while todo:
            name = todo.pop()
            namespace = self.needed[name]
            if name.startswith("?"):   # only from the package, or a module (np)
                bare = name[1:]
                if bare in self.where or isinstance(namespace.get(bare),
                                                    types.ModuleType):
                    self.needed.setdefault(bare, namespace)
                    todo.append(bare)
                continue
            if self.where.get(name) == self.chapter or name in self.helpers:
                continue
            if name in self.where:
                self.imports.add(f"from .{self.where[name]} import {name}")
                continue
            value = namespace.get(name)
            if value is None and name in vars(importlib.import_module("scratchnet")):
                self.imports.add(f"from {_public_home(name)} import {name}")
                continue
            line, helper = _import_or_helper(name, value, namespace.get("__name__", ""))
            if line:
                self.imports.add(line)
            elif helper is not None:
                text, names = helper
                self.helpers[name] = text
                module = vars(inspect.getmodule(value)) if inspect.isfunction(value) \
                    else namespace
                for n in names:
                    if n not in self.needed:
                        self.needed[n] = module
                        todo.append(n)


def _import_or_helper(name: str, value: Any, reader: str) -> Tuple[str, Any]:
    """``(import line, None)``, or ``("", (text, names))`` for a helper written out.

    ``reader`` is the module whose code reads ``name``: a public name it holds
    but whose origin does not (``Loss``, an alias of ``typing``'s) is imported
    from it.
    """
    if isinstance(value, types.ModuleType):
        alias = "" if value.__name__ == name else f" as {name}"
        return f"import {value.__name__}{alias}", None
    origin = getattr(value, "__module__", None) or ""
    if origin.startswith("scratchnet.exercises.reference") and not name.startswith("_"):
        return f"from {_public_home(name)} import {name}", None
    private = origin.startswith("scratchnet") and (
        any(p.startswith("_") for p in origin.split(".")) or name.startswith("_"))
    if private and inspect.isfunction(value):
        return "", function_text(value, stub=None, covers=None, keyed=False,
                                 namespace=vars(inspect.getmodule(value)))
    if name.startswith("_") and type(value) in (int, float, str, bool):
        return "", (f"{name} = {value!r}", [])
    if value is None:
        return "", None
    if origin and getattr(importlib.import_module(origin), name, None) is value:
        return f"from {origin} import {name}", None
    public = reader.startswith("scratchnet.") and not name.startswith("_") and not \
        any(p.startswith("_") for p in reader.split("."))
    return (f"from {reader} import {name}", None) if public else ("", None)


def _exercise_module(chapter: str, items: Dict[str, str], where: Dict[str, str],
                     by_id: Dict[str, Exercise], solutions: bool,
                     hints: str) -> _Module:
    """One module's blocks, in the chapter's order; classes hold their methods."""
    module, classes = _Module(chapter, where), {}
    mod = chapter_module(chapter)
    for name, role in items.items():
        ex = by_id.get(name) if role == "exercise" else None
        obj, keyed = reference(name, mod)
        stub = None if ex is None or solutions else stub_message(name, hints, ex.todo)
        namespace = vars(inspect.getmodule(obj))
        text, names = function_text(obj, stub=stub, covers=ex.covers if ex else None,
                                    keyed=keyed, namespace=namespace,
                                    indent="    " if "." in name else "")
        module.need(names, namespace)
        module.need([n for n in (ex.given if ex else ()) if "." not in n], namespace)
        if "." in name:
            classes.setdefault(name.split(".")[0], []).append((name, role, text))
        else:
            module.blocks.append((name, role, text))
    for cls_name, methods in classes.items():
        to_write = [n.split(".")[1] for n, role, _ in methods if role == "exercise"]
        summary = inspect.getdoc(getattr(mod, cls_name)).splitlines()[0]
        head = [f"class {cls_name}(Chapter{cls_name}):",
                f'    """{summary}', "",
                f"    The chapter's class, with {', '.join(to_write) or 'nothing'} to "
                f"write here;", f"    everything else is inherited from "
                f"``scratchnet.{chapter}.{cls_name}``.", '    """']
        text = "\n\n".join(["\n".join(head), *[t for _, _, t in methods]])
        role = "exercise" if to_write else "given"
        module.blocks.append((cls_name, role, text))
        module.imports.add(f"from scratchnet.{chapter} import {cls_name} as "
                           f"Chapter{cls_name}")
    module.resolve_names()
    return module


def _given(exercises: Sequence[Exercise]) -> List[str]:
    """What is given: the exercises' ``given``, and the answer key's functions that
    any code of the hand-out calls (``tanh_forward`` for a given ``forward``)."""
    given = [name for ex in exercises for name in ex.given]
    todo, seen = [*given, *(ex.id for ex in exercises)], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        obj, keyed = reference(name, chapter_module(chapter_of(name)))
        if not keyed:
            continue
        _, names = function_text(obj, stub=None, covers=None, keyed=True,
                                 namespace={})
        space = vars(inspect.getmodule(obj))
        for n in names:
            value = space.get(n)
            origin = getattr(value, "__module__", "")
            if origin.startswith("scratchnet.exercises.reference") and \
                    not n.startswith("_") and inspect.isfunction(value) and \
                    n not in given:
                given.append(n)
                todo.append(n)
    return given


def _layout(exercises: Sequence[Exercise]) -> Dict[str, Dict[str, str]]:
    """``{chapter: {name: "exercise" | "given"}}`` in chapter order and source order."""
    items: Dict[str, Dict[str, str]] = {}
    for name in _given(exercises):
        items.setdefault(chapter_of(name), {}).setdefault(name, "given")
    for ex in exercises:
        items.setdefault(ex.chapter, {})[ex.id] = "exercise"
    return {chapter: {n: items[chapter][n] for n in
                      sorted(items[chapter], key=lambda n: _source_line(chapter, n))}
            for chapter in [*CHAPTER_ORDER, *sorted(set(items) - set(CHAPTER_ORDER))]
            if chapter in items}


def _package_module(module: _Module, solutions: bool) -> str:
    mod = chapter_module(module.chapter)
    ids = [n for n, role, _ in module.blocks if role == "exercise"]
    given = [n for n, role, _ in module.blocks if role == "given"]
    kind = "Answer key" if solutions else "Exercises"
    summary = f"{kind} from scratchnet's chapter ``{module.chapter}``."
    doc = [f'"""{summary}', "",
           *_wrapped((mod.__doc__ or "").strip().splitlines()[0].replace('"""', "'''")),
           "", *_wrapped(f"To write: {', '.join(ids) or 'nothing (given code only)'}.")]
    if given:
        doc += _wrapped(f"Given, working: {', '.join(given)}.")
    if ids:
        doc += ["", *_wrapped(CHARGING)]
    doc += ["", "Generated by ``python -m scratchnet exercises make``.", '"""']
    head = "\n".join(doc) + "\n\nfrom __future__ import annotations\n\n"
    blocks = [text for _, _, text in module.blocks] + list(module.helpers.values())
    text = "\n\n\n".join([head + "\n".join(import_block(module.imports)),
                          *blocks]) + "\n"
    return mark_unused_imports(text, reason=_UNUSED)


#: Why an import no code reads yet is there (the linter's ``F401`` is silenced).
_UNUSED = "for your answers and the examples"


def _wrapped(text: str) -> List[str]:
    """A paragraph of a generated docstring, wrapped at 88 columns."""
    return textwrap.wrap(text, 88, break_on_hyphens=False, break_long_words=False)


def _init_module(title: str, ids: Sequence[str]) -> str:
    """The package's ``__init__.py``: what it holds, and what a self-check grades."""
    listed = "".join(f"    {i!r},\n" for i in ids)
    doc = "\n".join(_wrapped(f'"""{title}: scratchnet exercises {", ".join(ids)}.'))
    return (f'{doc}\n"""\n\n# What a self-check grades:\n'
            f"EXERCISES = (\n{listed})\n")


def make(names: Sequence[str], out: Any, *, solutions: bool = False,
         stub_hints: str = "pointer", notebook: bool = False,
         exercises: Any = None) -> List[Path]:
    """Write the student edition (or the answer key): a package or a notebook.

    Parameters
    ----------
    names : sequence of str
        Exercise ids, chapter names, or any public function or method of a
        chapter (``"sigmoid"``: an exercise with generic checks); empty means
        the whole catalogue.
    out : str or Path
        The folder, created if needed (its files of the same names are
        overwritten).
    solutions : bool, default False
        Write the answer key: the bodies in place of the stubs.
    stub_hints : {"pointer", "none", "formula"}
        What a stub says: what to compute (default), nothing, or the formula.
    notebook : bool, default False
        Write ``homework.ipynb`` (``solutions.ipynb``) instead of a package.
    exercises : str or Path, optional
        An instructor's exercises file (:mod:`scratchnet.exercises.own`): its
        exercises can be named too.

    Returns
    -------
    list of Path
        The files written.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     files = make(["relu_backward"], pathlib.Path(tmp) / "hw")
    ...     print(sorted(f.name for f in files))
    ['README.md', '__init__.py', 'layers.py']
    """
    load_own(exercises)
    exercises = select(list(names))
    stub_message(exercises[0].id, stub_hints, "")  # a wrong choice fails here
    by_id = {ex.id: ex for ex in exercises}
    layout = _layout(exercises)
    where = {name.split(".")[0]: chapter   # a notebook drops the relative imports
             for chapter, found in layout.items() for name in found}
    modules = [_exercise_module(chapter, items, where, by_id, solutions, stub_hints)
               for chapter, items in layout.items()]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    title = "Answer key" if solutions else "Homework"
    if notebook:
        path = out / ("solutions.ipynb" if solutions else "homework.ipynb")
        text = json.dumps(notebook_json(title, modules, by_id,
                                        CHARGING.replace("``", "`")), indent=1)
        path.write_text(text + "\n")
        return [path]
    written = []
    for module in modules:
        written.append(out / f"{module.chapter}.py")
        written[-1].write_text(_package_module(module, solutions))
    (out / "__init__.py").write_text(_init_module(title, list(by_id)))
    first = exercises[0]
    (out / "README.md").write_text(_README.format(
        title=title, ids=", ".join(by_id), name=out.name, first=first.id,
        charging="\n".join(textwrap.wrap(CHARGING.replace("``", "`"), 78)),
        chapter=first.chapter, func=first.id.split(".")[0],
        test=re.sub(r"\W", "_", first.id).lower()))
    return sorted([*written, out / "__init__.py", out / "README.md"])
