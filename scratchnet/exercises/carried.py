"""What the child is given for one exercise: the reference source of its dependencies.

Carry-forward (a check that fails only because a dependency is wrong is run
again with the reference for it) needs the references in the child.  The
child gets them as plain NumPy source, read from the answer key here, in
the grading process: what the exercise's checks build with
(``checks_models.CHECKS_USE``) from the start, the
dependencies that failed only in the fresh child of the rerun, and the key's
helpers those call; never the exercise's own reference.  So a child grading
``TwoLayerMLP.backward`` never holds a ``backward`` to hand back, and holds
``linear_backward`` only when the student's failed.  A dependency without
plain NumPy source (a chapter function that is not in the key) is not
carried: then no carry-forward for it.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Dict, Iterable, Optional

from .catalogue import Exercise, chapter_of
from .source import chapter_module, reference

__all__ = ["carried", "reference_source"]


def reference_source(name: str) -> Optional[str]:
    """The reference of ``name`` as plain NumPy source, or None where there is none.

    The one accessor of the reference source: the reference module's function
    (its body derived from the chapter, :mod:`~scratchnet.exercises.derive`,
    or an instructor's reference), dedented, without decorators, followed by
    the private helpers it calls (``_max_and_log_sum`` for ``logsumexp``).

    Parameters
    ----------
    name : str
        ``"softmax"``, ``"TwoLayerMLP.forward"``, ``"linear_forward"``.

    Returns
    -------
    str or None

    Examples
    --------
    >>> print(reference_source("relu_forward").splitlines()[0])
    def relu_forward(x: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    >>> [line.split("(")[0] for line in reference_source("logsumexp").splitlines()
    ...  if line.startswith("def ")]
    ['def logsumexp', 'def _max_and_log_sum']
    >>> reference_source("np") is None
    True
    """
    try:
        obj, keyed = reference(name, chapter_module(chapter_of(name)))
    except (KeyError, AttributeError, TypeError):
        return None
    if not keyed or not inspect.isfunction(obj):
        return None
    namespace, sources, todo = vars(inspect.getmodule(obj)), {}, [obj]
    while todo:   # the function, then the private helpers it calls, once each
        func = todo.pop(0)
        node = ast.parse(textwrap.dedent(inspect.getsource(func))).body[0]
        node.decorator_list = []
        sources[func.__name__] = ast.unparse(node) + "\n"
        todo += [namespace[n] for n in sorted(_names(sources[func.__name__]))
                 if n.startswith("_") and n not in sources
                 and inspect.isfunction(namespace.get(n))]
    return "\n".join(sources.values())


def _names(source: str) -> Iterable[str]:
    return {n.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name)}


def carried(ex: Exercise, names: Iterable[str]) -> Dict[str, str]:
    """The references the child grading ``ex`` gets: ``names`` and the key's helpers
    they call, id -> source.

    Parameters
    ----------
    ex : Exercise
    names : iterable of str
        What its checks build with, and the failed dependencies that
        carry-forward replaces.

    Returns
    -------
    dict
        Never ``ex.id``'s own.

    Examples
    --------
    >>> from scratchnet.exercises.catalogue import select
    >>> sorted(carried(select(["TwoLayerMLP.backward"])[0], ["TwoLayerMLP.forward"]))
    ['TwoLayerMLP.forward', 'linear_forward', 'relu_forward', 'tanh_forward']
    >>> backward = select(["TwoLayerMLP.backward"])[0]
    >>> "TwoLayerMLP.backward" in carried(backward, ["train_step", *backward.uses])
    False
    """
    todo, out = list(names), {}
    own = ex.id.rpartition(".")[2]
    while todo:
        name = todo.pop()
        if name in out or name == ex.id:
            continue
        source = reference_source(name)
        if source is None:
            continue
        out[name] = source
        todo += [n for n in _names(source) if n != own and n not in out]
    return dict(sorted(out.items()))
