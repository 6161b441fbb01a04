"""The catalogue: which chapter object a student writes, and for how many points.

Every exercise is a public object of a chapter, named as it is named there
(``softmax``, ``linear_backward``, ``TwoLayerMLP.backward``).  An entry says
what the exercise teaches, which arguments it covers (the exercise version of
``cross_entropy`` is ``cross_entropy(logits, targets)`` with the mean, not
every option of the library's function), what the student is given in place
and working, and which other exercises its code may call (``uses``: a check
that fails only because one of those is wrong is rerun with the reference for
it, so one mistake costs points once).

The skeletons are generated from the chapters' own source
(:mod:`scratchnet.exercises.source`); the checks are in the ``checks_*``
modules; nothing else in the kit is written per exercise.
"""

from __future__ import annotations

import importlib
import inspect
import re
from dataclasses import dataclass
from typing import Any, Dict, List, Sequence, Tuple

__all__ = ["CATALOGUE", "CHAPTER_ORDER", "OWN", "Exercise", "catalogue_text",
           "chapter_exercise", "chapter_of", "select"]

# The chapters in reading order: the modules of a student's package.
CHAPTER_ORDER = ("softmax", "losses", "information", "two_gaussians", "layers", "mlp",
                 "optim", "train")


@dataclass(frozen=True)
class Exercise:
    """One exercise: a chapter object with its body left for the student to write.

    Parameters
    ----------
    id : str
        The object's name in its chapter: ``"softmax"`` or ``"SGD.update"``.
    chapter : str
        The module it comes from (``"softmax"`` is ``scratchnet/softmax.py``).
    teaches : str
        What writing it teaches, in one sentence.
    points : int
        Its weight in the total.
    covers : tuple of str
        The arguments the exercise version takes (the others keep their
        default values); for a method, ``self`` and the method's arguments.
    given : tuple of str
        Chapter objects written out, working, beside the exercise.
    uses : tuple of str
        Other exercises its code may call (carry-forward).
    todo : str
        The one-line pointer in the skeleton's ``NotImplementedError``.

    Examples
    --------
    >>> from scratchnet.exercises import select
    >>> ex = select(["linear_backward"])[0]
    >>> ex.chapter, ex.covers, ex.given
    ('layers', ('dout', 'cache'), ('linear_forward',))
    """

    id: str
    chapter: str
    teaches: str
    points: int
    covers: Tuple[str, ...]
    given: Tuple[str, ...]
    uses: Tuple[str, ...]
    todo: str


def _ex(id, chapter, teaches, points, covers, given, uses, todo):
    return Exercise(id, chapter, teaches, points, tuple(covers), tuple(given),
                    tuple(uses), todo)


CATALOGUE: List[Exercise] = [
    _ex("logsumexp", "softmax", "the max shift that keeps log(sum(exp(x))) finite",
        6, ["x"], [], [],
        "m = x.max(axis=-1, keepdims=True); return m + log(sum(exp(x - m)))"),
    _ex("softmax", "softmax", "scores to probabilities, stable for large logits",
        6, ["x"], [], [],
        "subtract each row's maximum, exponentiate, divide by the row sum"),
    _ex("log_softmax", "softmax", "log-probabilities that stay finite where "
        "probabilities underflow", 6, ["x"], [], ["logsumexp"],
        "x - logsumexp(x) over the last axis, never log(softmax(x))"),
    _ex("nll_loss", "losses", "the negative log-likelihood of the target classes",
        5, ["log_probs", "targets"], [], [],
        "minus the mean of log_probs[j, targets[j]] over the batch"),
    _ex("cross_entropy", "losses", "cross-entropy as the NLL of log-softmax",
        6, ["logits", "targets"], ["log_softmax"],
        ["log_softmax", "logsumexp", "nll_loss"],
        "the mean over the batch of -log_softmax(logits)[j, targets[j]]"),
    _ex("cross_entropy_grad", "losses", "the gradient (softmax - one_hot) / N",
        6, ["logits", "targets"], ["softmax"], ["softmax"],
        "(softmax(logits) - one_hot(targets)) / N"),
    _ex("entropy", "information", "H(p) = -sum p log p with 0 log 0 = 0",
        5, ["p"], [], [],
        "-sum over the last axis of p log p, terms with p = 0 left out"),
    _ex("kl_divergence", "information", "KL(p || q) >= 0, infinite where q = 0 < p",
        5, ["p", "q"], [], [],
        "sum over the last axis of p log(p / q), terms with p = 0 left out"),
    _ex("two_gaussian_posterior", "two_gaussians",
        "Bayes' rule for two Gaussian classes",
        6, ["x", "mu1", "sigma1", "mu2", "sigma2", "prior1"], ["sigmoid"], [],
        "P(c1|x) = prior1 N(x; mu1, sigma1) / (the same summed over both classes)"),
    _ex("linear_backward", "layers", "backprop through x @ W + b",
        6, ["dout", "cache"], ["linear_forward"], [],
        "dx = dout @ W.T, dW = x.T @ dout, db = dout summed over the batch"),
    _ex("relu_backward", "layers",
        "the ReLU passes the gradient where its input was > 0",
        5, ["dout", "cache"], ["relu_forward"], [], "dout where x > 0, else 0"),
    _ex("tanh_backward", "layers", "tanh' = 1 - tanh^2, from the cached output",
        5, ["dout", "cache"], ["tanh_forward"], [],
        "dout * (1 - y**2), y = tanh(x) cached"),
    _ex("TwoLayerMLP.forward", "mlp", "the network is the chain of the layer pairs",
        6, ["self", "x"], ["linear_forward", "relu_forward", "tanh_forward"], [],
        "linear -> activation -> linear, keeping each layer's cache in self._cache"),
    _ex("TwoLayerMLP.backward", "mlp", "backprop is the forward chain in reverse",
        8, ["self", "dlogits"],
        ["TwoLayerMLP.forward", "linear_backward", "relu_backward", "tanh_backward"],
        ["TwoLayerMLP.forward", "linear_backward", "relu_backward", "tanh_backward"],
        "the backward pairs in reverse order, returning {'W1', 'b1', 'W2', 'b2'}"),
    _ex("SGD.update", "optim", "a step against the gradient", 5,
        ["self", "param", "grad", "state"], [], [],
        "param -= self.lr * grad, in place"),
    _ex("Adam.update", "optim", "bias-corrected moment estimates", 6,
        ["self", "param", "grad", "state"], [], [],
        "update state['exp_avg'] and state['exp_avg_sq'] in place, then param"),
    _ex("train_step", "train", "forward, loss, backward, update", 8,
        ["model", "optimizer", "x", "targets"], [],
        ["TwoLayerMLP.forward", "TwoLayerMLP.backward", "SGD.update", "Adam.update",
         "cross_entropy", "cross_entropy_grad"],
        "loss and grads from the model, then optimizer.step(grads); return the loss"),
]

_BY_ID = {ex.id: ex for ex in CATALOGUE}


def select(names: Sequence[str]) -> List[Exercise]:
    """The exercises named by id or by chapter, in catalogue order.

    Parameters
    ----------
    names : sequence of str
        Exercise ids (``"softmax"``, ``"SGD.update"``), chapter names
        (``"layers"``: all its exercises), or any public function of a chapter
        (``"sigmoid"``: generic checks, after the catalogue's); empty selects
        the whole catalogue.

    Returns
    -------
    list of Exercise

    Raises
    ------
    KeyError
        For a name that is neither, with the ids and chapters there are.

    Examples
    --------
    >>> [ex.id for ex in select(["layers"])]
    ['linear_backward', 'relu_backward', 'tanh_backward']
    """
    wanted, extra = set(), []
    for name in names:
        if name in _BY_ID:
            wanted.add(name)
        elif name in CHAPTER_ORDER:
            wanted.update(ex.id for ex in CATALOGUE if ex.chapter == name)
        else:
            extra.append(_beyond_the_catalogue(name))
    return [ex for ex in CATALOGUE if not names or ex.id in wanted] + extra


#: The instructors' own exercises loaded in this process, by id
#: (:func:`scratchnet.exercises.exercise` adds them).
OWN: Dict[str, Exercise] = {}


def chapter_of(name: str) -> str:
    """The chapter that defines ``name`` (``"TwoLayerMLP.forward"`` -> ``"mlp"``).

    Parameters
    ----------
    name : str
        A public function, class or ``Class.method`` of a chapter, or an
        instructor's exercise (its hand-out module).

    Returns
    -------
    str

    Raises
    ------
    KeyError
        If no chapter defines it.

    Examples
    --------
    >>> chapter_of("TwoLayerMLP.forward"), chapter_of("sigmoid")
    ('mlp', 'softmax')
    """
    if name in OWN:
        return OWN[name].chapter
    top = name.split(".")[0]
    for chapter in CHAPTER_ORDER:
        value = getattr(importlib.import_module(f"scratchnet.{chapter}"), top, None)
        if getattr(value, "__module__", "") == f"scratchnet.{chapter}":
            return chapter
    raise KeyError(f"{name!r} is defined in none of the chapters")


def chapter_exercise(name: str, points: int = 5) -> Exercise:
    """Any public function or method of a chapter as an exercise (generic checks).

    It covers the arguments without a default; its checks are made from the
    chapter (:mod:`scratchnet.exercises.generic`).

    Parameters
    ----------
    name : str
        ``"sigmoid"``, ``"tanh_forward"``, or ``"Class.method"``.
    points : int, default 5

    Returns
    -------
    Exercise

    Raises
    ------
    KeyError
        If no chapter defines a public function of that name.

    Examples
    --------
    >>> ex = chapter_exercise("sigmoid")
    >>> ex.chapter, ex.covers
    ('softmax', ('x',))
    """
    if any(part.startswith("_") for part in name.split(".")):
        raise KeyError(f"{name!r} is private: only public chapter functions are "
                       f"exercises")
    chapter = chapter_of(name)
    obj: Any = importlib.import_module(f"scratchnet.{chapter}")
    for part in name.split("."):
        obj = getattr(obj, part)
    if not callable(obj) or inspect.isclass(obj):
        raise KeyError(f"{name!r} is not a function or method of a chapter")
    params = inspect.signature(obj).parameters.values()
    covers = tuple(p.name for p in params if p.default is inspect.Parameter.empty
                   and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD))
    summary = (inspect.getdoc(obj) or name).splitlines()[0].rstrip(".")
    summary = re.sub(r":\w+:`([^`]*)`", r"\1", summary).replace("\\", "")
    return Exercise(name, chapter, summary, points, covers, (), (),
                    summary[0].lower() + summary[1:])


def _beyond_the_catalogue(name: str) -> Exercise:
    """An instructor's exercise, or any public chapter function; else KeyError."""
    if name in OWN:
        return OWN[name]
    try:
        return chapter_exercise(name)
    except KeyError:
        own = f"; your exercises file's: {', '.join(OWN)}" if OWN else ""
        raise KeyError(f"no exercise, chapter or chapter function {name!r}; "
                       f"exercises: {', '.join(_BY_ID)}{own}; chapters: "
                       f"{', '.join(CHAPTER_ORDER)}") from None


def catalogue_text(exercises: Sequence[Exercise] = ()) -> str:
    """The catalogue as a table: id, chapter, points, signature, what it teaches, given.

    Parameters
    ----------
    exercises : sequence of Exercise, optional
        Default: the whole catalogue.

    Returns
    -------
    str

    Examples
    --------
    >>> text = catalogue_text(select(["relu_backward"]))
    >>> print(text)  # doctest: +NORMALIZE_WHITESPACE
    id             chapter  points  exercise
    relu_backward  layers        5  relu_backward(dout, cache)
        teaches: the ReLU passes the gradient where its input was > 0
        given:   relu_forward
    """
    rows = list(exercises) or CATALOGUE
    width = max(len(ex.id) for ex in rows) + 2
    chapter = max(len("chapter"), *(len(ex.chapter) for ex in rows)) + 1
    lines = [f"{'id':<{width}} {'chapter':<{chapter}} points  exercise"]
    for ex in rows:
        lines.append(f"{ex.id:<{width}} {ex.chapter:<{chapter}} {ex.points:>6}  "
                     f"{ex.id}({', '.join(ex.covers)})")
        lines.append(f"    teaches: {ex.teaches}")
        if ex.given:
            lines.append(f"    given:   {', '.join(ex.given)}")
    total = sum(ex.points for ex in rows)
    if len(rows) > 1:
        lines.append(f"{len(rows)} exercises, {total} points")
    return "\n".join(lines)
