"""Checks made from a reference: any chapter function's, an instructor's exercise's.

``make sigmoid`` works though ``sigmoid`` is not in the catalogue: any public
function (or method) of a chapter is an exercise
(``catalogue.chapter_exercise``) whose covered
arguments are those without a default, whose hand-out is the chapter's source
made plain (:mod:`scratchnet.exercises.source`), and whose checks come from the
chapter:

- ``docstring examples``: the examples of the student's docstring, run on the
  student's function, must print what they show;
- ``random inputs``: arrays of the shapes the Parameters section documents
  (``shape (N, M)``; ``any shape``), random normal with a fixed seed, give
  what the chapter's function gives;
- ``inputs unchanged``: those arrays are as they were after the call (the
  one check that charges a function writing into its arguments);
- ``float32 kept``: where the docstring promises it, float32 arrays give a
  float32 result.

An instructor's exercise (:mod:`scratchnet.exercises.own`) gets
:func:`own_checks`: its inputs against its reference, float32 if asked, its
docstring's examples, and its first input unchanged; one a self-check knows by
name only (:func:`~scratchnet.exercises.own.examples_only`) gets the examples
of the student's docstring, run where the student's code runs.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from typing import Any, Callable, Dict, List, Tuple

import numpy as np

from .catalogue import Exercise, chapter_exercise, chapter_of
from .own import REGISTRY, OwnExercise
from .probes import Failed, expect_close, show, unchanged
from .remote import ChildLost, StudentRaised
from .source import chapter_module, function_text, reference

__all__ = ["assert_examples", "examples_check", "generic_checks", "own_checks",
           "random_inputs"]

_SIZES = {"N": 4, "M": 3, "D": 2, "K": 3, "in": 3, "out": 2}


def _library(name: str) -> Any:
    owner = chapter_module(chapter_of(name))
    for part in name.split("."):
        owner = getattr(owner, part)
    return owner


def _shape(text: str) -> Tuple[int, ...] | None:
    """The shape a Parameters line documents, with sizes filled in; None if none."""
    found = re.search(r"shape \(([^)]*)\)", text)
    if "any shape" in text or (not found and re.match(r"(array_like|ndarray)\b", text)):
        return (3, 4)
    if not found:
        return None
    sizes = [s.strip() for s in found.group(1).split(",") if s.strip()]
    if not all(s in _SIZES or s.isdigit() for s in sizes):
        return None
    return tuple(_SIZES.get(s, int(s) if s.isdigit() else 0) for s in sizes)


def random_inputs(name: str, covers: Tuple[str, ...],
                  dtype: Any = np.float64) -> Dict[str, np.ndarray] | None:
    """Random arrays of the documented shapes for the covered arguments, or None.

    Parameters
    ----------
    name : str
    covers : tuple of str
    dtype : dtype, default float64

    Returns
    -------
    dict or None
        None when an argument's shape is not documented.

    Examples
    --------
    >>> {k: v.shape for k, v in random_inputs("sigmoid", ("x",)).items()}
    {'x': (3, 4)}
    """
    doc = inspect.getdoc(_library(name)) or ""
    rng = np.random.default_rng(0)
    out = {}
    for arg in covers:
        line = re.search(rf"^{re.escape(arg)}\b[^\n]* : ([^\n]*)", doc, re.M)
        shape = _shape(line.group(1)) if line else None
        if shape is None:
            return None
        out[arg] = rng.normal(size=shape).astype(dtype)
    return out


def _first_failure(doc: str, globs: Dict[str, Any], name: str) -> str:
    """The report of the first of ``doc``'s examples that printed something else
    (its last 600 characters), or "" when all print what they show."""
    # imported here: a grading process without such an exercise never needs it
    import doctest

    class Runner(doctest.DocTestRunner):
        """Lets "not implemented yet", and what the child says (the student's code
        raised or hung), through to the grader."""

        def report_unexpected_exception(self, out, test, example, exc_info):
            if issubclass(exc_info[0], (NotImplementedError, StudentRaised,
                                        ChildLost)):
                raise exc_info[1]
            super().report_unexpected_exception(out, test, example, exc_info)

    test = doctest.DocTestParser().get_doctest(doc, globs, name, None, 0)
    report: List[str] = []
    runner = Runner(optionflags=doctest.ELLIPSIS)
    runner.run(test, out=report.append, clear_globs=False)
    return report[0].lstrip("*\n")[-600:] if runner.failures else ""


def assert_examples(function: Callable) -> None:
    """Assert that the examples of a function's docstring print what they show.

    The check a student can run on an exercise of the instructor's own (its
    other checks need the instructor's file): the notebook hand-out's check
    cell for such an exercise.

    Parameters
    ----------
    function : callable
        The student's function; its module's names are the examples' names.

    Returns
    -------
    None

    Raises
    ------
    AssertionError
        With the first example that printed something else.
    NotImplementedError
        While the function is a stub.

    Examples
    --------
    >>> def double(x):
    ...     '''Twice x.
    ...
    ...     >>> double(2)
    ...     4
    ...     '''
    ...     return 2 * x
    >>> assert_examples(double)
    """
    globs = {**getattr(function, "__globals__", {}), function.__name__: function}
    failed = _first_failure(inspect.getdoc(function) or "", globs, function.__name__)
    if failed:
        raise AssertionError(f"{function.__name__}: the docstring's examples: "
                             + failed)


def examples_check(ex: Exercise) -> Callable:
    """The check that the examples of the student's docstring print what they show.

    Parameters
    ----------
    ex : Exercise

    Returns
    -------
    callable
        ``check(f)``, raising :class:`~scratchnet.exercises.probes.Failed`.

    Examples
    --------
    >>> callable(examples_check(chapter_exercise("sigmoid")))
    True
    """
    def run(f):
        obj, keyed = reference(ex.id, chapter_module(ex.chapter))
        text, _ = function_text(obj, stub="", covers=ex.covers, keyed=keyed,
                                namespace={})
        doc = ast.get_docstring(ast.parse(textwrap.dedent(text)).body[0]) or ""
        globs = {**vars(chapter_module(ex.chapter)), "np": np,
                 ex.id.split(".")[-1]: f}
        failed = _first_failure(doc, globs, ex.id)
        if failed:
            raise Failed("the docstring's examples: " + failed)
    return run


def generic_checks(name: str) -> List[Tuple[str, Callable]]:
    """The checks of a chapter function's exercise: ``[(name, check(f)), ...]``.

    Parameters
    ----------
    name : str

    Returns
    -------
    list of (str, callable)

    Examples
    --------
    >>> [n for n, _ in generic_checks("sigmoid")]
    ['docstring examples', 'random inputs', 'inputs unchanged']
    """
    ex = chapter_exercise(name)
    library = _library(name)
    checks = [("docstring examples", examples_check(ex))]
    if random_inputs(name, ex.covers) is not None:
        def values(f, dtype=np.float64):
            args = random_inputs(name, ex.covers, dtype)
            copies = {k: v.copy() for k, v in args.items()}
            return f(*copies.values()), library(*args.values()), args

        def random(f):
            got, want, args = values(f)
            expect_close(got, want, f"{name} on random inputs {show(args)}")

        def kept(f):   # the one check that charges writing into an argument
            args = random_inputs(name, ex.covers)
            given = [v.copy() for v in args.values()]
            f(*given)
            unchanged(given, list(args.values()), list(args), f"{name}(...)")

        checks += [("random inputs", random), ("inputs unchanged", kept)]
        if "float32" in (inspect.getdoc(library) or ""):
            def float32(f):
                got, want, args = values(f, np.float32)
                expect_close(got, want, f"{name} on float32 inputs {show(args)}",
                             rtol=1e-5, atol=1e-6, dtype=np.float32)
            checks.append(("float32 kept", float32))
    return checks


def _arguments(i: int, item: Any) -> Tuple:
    args = item(np.random.default_rng(i)) if callable(item) else item
    return tuple(args) if isinstance(args, (tuple, list)) else (args,)


def _values_check(own: OwnExercise, i: int, item: Any, dtype: Any = None) -> Callable:
    name = own.exercise.id
    covers = own.exercise.covers

    def run(f):
        args = _arguments(i, item)
        if dtype is not None:
            args = tuple(a.astype(dtype) if isinstance(a, np.ndarray) and
                         a.dtype.kind == "f" else a for a in args)
        expected = own.reference(*[a.copy() if isinstance(a, np.ndarray) else a
                                   for a in args])
        got = f(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
        shown = ", ".join(f"{n}={show(a)}" for n, a in zip(covers, args))
        try:
            expect_close(got, expected, f"{name}({shown})", rtol=own.rtol,
                         atol=own.atol, dtype=dtype)
        except Failed as err:   # a diagnosis speaks only for a wrong result
            hint = next((h for h in (d(got, *args) for d in own.diagnoses) if h),
                        err.hint)
            raise Failed(err.message, hint) from None
    return run


def _students_examples(f: Any) -> None:
    """The examples of the student's own docstring, run in the child with the
    student's code (:meth:`~scratchnet.exercises.remote.Remote.examples`), or
    here for a function of this process."""
    if hasattr(f, "examples"):
        ran = f.examples()
        if not ran["examples"]:
            raise Failed("no examples in the docstring: nothing to run here")
        if ran["failed"]:
            raise Failed("the docstring's examples: " + ran["failed"][-600:])
    else:
        try:
            assert_examples(f)
        except AssertionError as err:
            raise Failed(str(err)) from None


def own_checks(ex_id: str) -> List[Tuple[str, Callable]]:
    """The checks of an instructor's exercise: ``[(name, check(f)), ...]``.

    Parameters
    ----------
    ex_id : str
        An exercise in ``scratchnet.exercises.own.REGISTRY``.

    Returns
    -------
    list of (str, callable)

    Examples
    --------
    >>> import numpy as np
    >>> from scratchnet.exercises import exercise
    >>> @exercise(inputs=[(np.ones(2),), (np.zeros(3),)], float32=True)
    ... def triple(x):
    ...     '''Three times x.'''
    ...     return 3 * x
    >>> [name for name, _ in own_checks("triple")]
    ['inputs 1', 'inputs 2', 'float32 kept', 'docstring examples', 'inputs unchanged']
    """
    own = REGISTRY[ex_id]
    if own.examples_only:
        return [("docstring examples", _students_examples)]
    checks = [(f"inputs {i + 1}", _values_check(own, i, item))
              for i, item in enumerate(own.inputs)]
    if own.float32 and own.inputs:
        first = own.inputs[0]
        checks.append(("float32 kept", _values_check(own, 0, first, np.float32)))
    checks.append(("docstring examples", examples_check(own.exercise)))
    if own.inputs:
        checks.append(("inputs unchanged", _kept_check(own)))
    return checks


def _kept_check(own: OwnExercise) -> Callable:
    """The one check that charges writing into an argument: the first input's."""
    def run(f):
        args = _arguments(0, own.inputs[0])
        given = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        f(*given)
        arrays = [(g, a, n) for g, a, n in zip(given, args, own.exercise.covers)
                  if isinstance(a, np.ndarray)]
        unchanged([g for g, _, _ in arrays], [a for _, a, _ in arrays],
                  [n for _, _, n in arrays], f"{own.exercise.id}(...)")
    return run
