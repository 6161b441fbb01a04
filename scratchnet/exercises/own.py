"""An instructor's own exercises, without a fork: a reference function and a decorator.

An exercises file is a Python module the instructor writes; each exercise in
it is a reference function, decorated::

    import numpy as np
    from scratchnet.exercises import exercise
    from scratchnet.softmax import log_softmax

    @exercise(points=6, module="losses", given=["log_softmax"],
              uses=["log_softmax"], inputs=[(np.zeros((2, 3)), np.array([0, 2]))])
    def smoothed_cross_entropy(logits, targets):
        \"\"\"The student's docstring: what it computes, what is checked.\"\"\"
        ...

The reference is the answer key: its signature and docstring are the
hand-out's (the docstring cut down to ``covers``), its body the solution.
``make ... --exercises FILE`` and ``check ... --exercises FILE`` (or an
assignment naming ``"exercises_file"``) load the file; its exercises then get
the catalogue's treatment: the student edition and the answer key, a package
or a notebook, the grader's child and limits, the import policy,
carry-forward for ``uses`` (exercises of the catalogue or of the chapters),
the report and Gradescope's results.  Their checks are made from what the
decorator was given (:func:`scratchnet.exercises.generic.own_checks`):

- ``inputs i``: the student's function on each input (a tuple of arguments,
  or ``generate(rng) -> tuple`` called with ``numpy.random.default_rng(i)``)
  must give what the reference gives (``rtol``, ``atol``), the arguments
  unchanged; each diagnosis ``diagnosis(got, *args) -> str`` adds its hint
  when it recognises the mistake;
- ``float32 kept`` (``float32=True``): on the first input in float32;
- ``docstring examples``: the examples of the student's docstring.

A student's self-check has the hand-out, not the instructor's file: each
exercise of the instructor's that the package lists is then known only by its
name, module and arguments (:func:`examples_only`), graded by the instructor,
and the self-check runs the one check the student has, the examples of the
student's own docstring, in the sandbox with the student's code.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Sequence

from .catalogue import CATALOGUE, OWN, Exercise, select
from .docstrings import summary_sentence

__all__ = ["REGISTRY", "OwnExercise", "child_homes", "examples_only", "exercise",
           "load_exercises", "load_own"]


@dataclass(frozen=True)
class OwnExercise:
    """An exercise of the instructor's: the catalogue's entry and what its checks need.

    Attributes
    ----------
    exercise : Exercise
        Its entry, as the catalogue's (``chapter`` is the hand-out's module).
    reference : callable
        The answer key.
    inputs : tuple
        Argument tuples, or generators ``generate(rng) -> tuple``.
    diagnoses : tuple of callable
        ``diagnosis(got, *args) -> str``: a hint when it recognises a mistake.
    rtol, atol : float
    float32 : bool
        Also check that float32 inputs give a float32 result.
    file : str
        The exercises file it comes from.
    examples_only : bool
        Known from a student's hand-out only (:func:`examples_only`): its
        one check runs the examples of the student's docstring.

    Examples
    --------
    >>> OwnExercise.__dataclass_fields__["float32"].default
    False
    """

    exercise: Exercise
    reference: Callable
    inputs: tuple = ()
    diagnoses: tuple = ()
    rtol: float = 1e-6
    atol: float = 1e-9
    float32: bool = False
    file: str = field(default="", compare=False)
    examples_only: bool = False


#: The instructor's exercises loaded in this process, by id.
REGISTRY: Dict[str, OwnExercise] = {}


def exercise(*, points: float = 5, covers: Sequence[str] | None = None,
             given: Sequence[str] = (), uses: Sequence[str] = (),
             inputs: Sequence[Any] = (), diagnoses: Sequence[Callable] = (),
             module: str = "", hint: str = "", rtol: float = 1e-6,
             atol: float = 1e-9, float32: bool = False) -> Callable:
    """Declare the decorated reference function an exercise (and return it unchanged).

    Parameters
    ----------
    points : float, default 5
    covers : sequence of str, optional
        The arguments the student's version takes (default: all).
    given : sequence of str
        Chapter functions (or catalogue ids) written out, working, beside it.
    uses : sequence of str
        Exercises its code calls: a check that fails while one of them failed
        too is run again with the library's in place (carry-forward).
    inputs : sequence
        Argument tuples, or ``generate(rng) -> tuple``.
    diagnoses : sequence of callable
        ``diagnosis(got, *args) -> str``.
    module : str, optional
        The hand-out's module that holds it (default: the file's name).
    hint : str, optional
        What the stub says (default: the docstring's first sentence, its math as
        plain text).
    rtol, atol : float
        How close the values must be.
    float32 : bool, default False
        Whether float32 inputs must give float32.

    Returns
    -------
    callable
        The decorator.

    Examples
    --------
    >>> import numpy as np
    >>> @exercise(points=2, inputs=[(np.array([1.0, -1.0]),)])
    ... def double(x):
    ...     '''Twice x.'''
    ...     return 2 * x
    >>> REGISTRY["double"].exercise.points, double(np.array([1.0]))
    (2, array([2.]))
    """
    def register(reference: Callable) -> Callable:
        file = inspect.getsourcefile(reference) or ""
        name = reference.__name__
        plain = summary_sentence(inspect.getdoc(reference) or name)
        params = list(inspect.signature(reference).parameters)
        entry = Exercise(name, module or Path(file).stem or "own", plain, points,
                         tuple(covers or params), tuple(given), tuple(uses),
                         hint or plain[0].lower() + plain[1:])
        REGISTRY[name] = OwnExercise(entry, reference, tuple(inputs), tuple(diagnoses),
                                     rtol, atol, float32, file)
        OWN[name] = entry
        return reference
    return register


def examples_only(*, module: str) -> Callable:
    """Declare the decorated stub an exercise of the instructor's known by name only.

    A student's package lists it (``EXERCISES``) and defines it, but its
    reference, inputs and points are in the instructor's file, which the
    student does not have: its one check is then the examples of the
    student's docstring, run with the student's code (in the sandbox), and
    the self-check lists it as graded by the instructor.  The decorated
    function gives its name and arguments (its body is never the answer).

    Parameters
    ----------
    module : str
        The package's module that defines it.

    Returns
    -------
    callable
        The decorator.

    Examples
    --------
    >>> @examples_only(module="mine")
    ... def halve_it(x):
    ...     raise NotImplementedError("graded by your instructor")
    >>> REGISTRY["halve_it"].examples_only, REGISTRY["halve_it"].exercise.covers
    (True, ('x',))
    """
    def register(stub: Callable) -> Callable:
        name = stub.__name__
        entry = Exercise(name, module, "graded by your instructor", 1,
                         tuple(inspect.signature(stub).parameters), (), (),
                         "graded by your instructor")
        REGISTRY[name] = OwnExercise(entry, stub, examples_only=True,
                                     file=inspect.getsourcefile(stub) or "")
        OWN[name] = entry
        return stub
    return register


def load_exercises(path: Any) -> List[Exercise]:
    """Run an exercises file (the instructor's) and return the exercises it declares.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    list of Exercise

    Raises
    ------
    KeyError
        If the file does not exist or declares no exercise.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "mine.py"
    ...     _ = path.write_text("from scratchnet.exercises import exercise\\n"
    ...                         "@exercise(points=3)\\ndef halve(x):\\n"
    ...                         "    '''Half of x.'''\\n    return x / 2\\n")
    ...     [(e.id, e.chapter, e.points) for e in load_exercises(path)]
    [('halve', 'mine', 3)]
    """
    path = Path(path).resolve()
    if not path.is_file():
        raise KeyError(f"no such exercises file: {path}")
    name = f"scratchnet_own_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    found = [own.exercise for own in REGISTRY.values()
             if own.file and Path(own.file).resolve() == path]
    if not found:
        raise KeyError(f"{path} declares no exercise: decorate a reference function "
                       f"with @scratchnet.exercises.exercise(...)")
    return found


def load_own(*paths: Any) -> List[str]:
    """Load exercises files, and those the assignments among ``paths`` name.

    Parameters
    ----------
    *paths : str, Path or None
        Exercises files (``.py``) and assignment files (``.json``, whose
        ``"exercises_file"`` is relative to the assignment's folder); None is
        skipped.

    Returns
    -------
    list of str
        The exercises files loaded, as absolute paths.

    Examples
    --------
    >>> load_own(None)
    []
    """
    files = []
    for path in [Path(p) for p in paths if p is not None]:
        if path.suffix == ".json":
            try:
                named = json.loads(path.read_text()).get("exercises_file")
            except (OSError, ValueError, AttributeError):
                named = None   # the assignment's reader says what is wrong
            if named:
                files.append(str((path.parent / named).resolve()))
        else:
            files.append(str(path.resolve()))
    for file in files:
        load_exercises(file)
    return files


def child_homes(entries: Sequence[Any]) -> Dict[str, str]:
    """Where the grader's child finds each exercise: ``{id: module}``.

    The catalogue's exercises and those graded (an assignment's entries, or
    ids): any chapter function's, an instructor's.

    Parameters
    ----------
    entries : sequence of dict or str

    Returns
    -------
    dict

    Examples
    --------
    >>> homes = child_homes([{"id": "sigmoid", "points": 5}])
    >>> homes["sigmoid"], homes["relu_backward"]
    ('softmax', 'layers')
    """
    ids = [e["id"] if isinstance(e, dict) else e for e in entries]
    return {e.id: e.chapter for e in [*CATALOGUE, *select(ids)]}
