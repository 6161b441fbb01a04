"""Every exercise's checks, and one exercise's checks run against the student's side.

The checks live in the ``checks_*`` modules, each a list per exercise id of
:class:`~scratchnet.exercises.protocol.Check` (data: inputs, reference,
comparison, diagnoses) or ``(name, check)`` pairs (a check of several
calls).  A check of a function exercise is called with the student's
function (which may run in the child), a check of a method exercise or of
``train_step`` with the student's side
(:class:`~scratchnet.exercises.sides.Objects` or
:class:`~scratchnet.exercises.sides.Local`).  A check passes, fails
(:class:`~scratchnet.exercises.probes.Failed`), is not implemented yet, or
raises: each outcome is a status here.  :func:`scored` gives the points:
one mistake is charged once (an argument written into costs the ``inputs
unchanged`` check only, every other check compares values computed from
copies), and the checks an answer that computes nothing can pass
(:data:`EDGE_CHECKS`: an all-zeros array, the input handed back) earn their
points in proportion to the exercise's value checks.
"""

from __future__ import annotations

import warnings
from typing import Any, Dict, List, Sequence

from .catalogue import Exercise
from .checks_layers import CHECKS as LAYER_CHECKS
from .checks_models import CHECKS as MODEL_CHECKS
from .checks_scores import CHECKS as SCORE_CHECKS
from .generic import generic_checks, own_checks
from .own import REGISTRY, child_homes
from .probes import Failed
from .protocol import Check
from .remote import StudentRaised

__all__ = ["CHECKS", "EDGE_CHECKS", "OBJECT_CHECKS", "STATUS_TEXT", "checks_of",
           "run_checks", "scored", "value_share"]

#: What a check says when its exercise was not graded.
STATUS_TEXT = {
    "todo": "not implemented yet",
}


#: The checks an answer that computes nothing passes (zeros of the right shape,
#: the input handed back, a function that never writes): the conventions' edges.
#: Their points follow the value checks' (:func:`value_share`), so an exercise
#: earns nothing for edges until it computes something right.
EDGE_CHECKS = frozenset({"inputs unchanged", "empty batch", "one class", "one outcome",
                         "KL(p || p) = 0", "batch of one", "one sample"})


class _WithGeneric(dict):
    """Checks by id: the catalogue's, an instructor's, a chapter function's."""

    def __missing__(self, ex_id: str) -> List:
        return own_checks(ex_id) if ex_id in REGISTRY else generic_checks(ex_id)


CHECKS: Dict[str, List] = _WithGeneric({**SCORE_CHECKS, **LAYER_CHECKS, **MODEL_CHECKS})
#: The exercises whose checks take the student's side, not a function.
OBJECT_CHECKS = frozenset(MODEL_CHECKS)


def _helper(error: Dict[str, Any], ex: Exercise) -> str:
    """The exercise whose stub raised the student's ``NotImplementedError``, when
    it is another exercise than ``ex`` (a helper ``ex`` calls), else ""."""
    name = str(error.get("function") or "")
    if not name or name == ex.id or name.rpartition(".")[2] == ex.id.rpartition(".")[2]:
        return ""
    return name if name in child_homes([]) or name in REGISTRY else ""


def _outcome(check: Any, arg: Any, ex: Exercise) -> Dict[str, Any]:
    try:
        with warnings.catch_warnings():  # the same under pytest's warnings as errors
            warnings.simplefilter("ignore")
            check(arg)
        return {"status": "pass", "message": "", "hint": "", "credit": 1.0}
    except Failed as err:
        return {"status": "fail", "message": err.message, "hint": err.hint,
                "credit": err.credit}
    except StudentRaised as err:
        e = err.error
        helper = _helper(e, ex) if e.get("todo") else ""
        if helper:   # a stub the exercise calls: the helper's, not the exercise's
            return {"status": "error", "hint": f"{helper} is graded on its own",
                    "message": f"{helper}, which this calls, is not implemented "
                    f"yet{err.where}", "helper": helper,
                    "location": e.get("location") or {}}
        if e.get("todo"):
            return {"status": "todo", "message": "not implemented yet", "hint": ""}
        located = {"location": e.get("location") or {}}
        if e.get("type") == "MemoryError":
            return {"status": "error", "message": f"ran out of memory{err.where}",
                    "hint": "an array far larger than the inputs: check the shapes",
                    **located}
        if e.get("type") == "SystemExit":
            return {"status": "error", "message": f"called sys.exit{err.where}",
                    "hint": "return a value; never exit the program", **located}
        return {"status": "error", "hint": "", "message":
                f"raised {e.get('type')}: {e.get('message')}{err.where}", **located}
    except NotImplementedError:   # in process (assert_passes)
        return {"status": "todo", "message": "not implemented yet", "hint": ""}
    except (ArithmeticError, LookupError, TypeError, ValueError, AttributeError,
            RuntimeError) as err:   # in process: the student's code raised
        return {"status": "error", "hint": "",
                "message": f"raised {type(err).__name__}: {err}"}


def checks_of(ex_id: str) -> List[Check]:
    """An exercise's checks, each a :class:`~scratchnet.exercises.protocol.Check`.

    A ``(name, function)`` pair of a ``checks_*`` module is a check of
    several calls (``run``).

    Parameters
    ----------
    ex_id : str

    Returns
    -------
    list of Check

    Examples
    --------
    >>> [c.name for c in checks_of("relu_backward")][:2]
    ['values', 'finite differences']
    """
    return [entry if isinstance(entry, Check) else Check(entry[0], run=entry[1])
            for entry in CHECKS[ex_id]]


def run_checks(ex: Exercise, side: Any, *, only: Sequence[str] = ()
               ) -> List[Dict[str, Any]]:
    """Run an exercise's checks against the student's side.

    Parameters
    ----------
    ex : Exercise
    side : Objects or Local
        The student's code, in the child or in this process.
    only : sequence of str, optional
        Names of the checks to run (default all).

    Returns
    -------
    list of dict
        Per check: ``name``, ``status`` (pass, fail, todo, error),
        ``message``, ``hint`` and, when it passed or failed, ``credit``.

    Raises
    ------
    ChildLost
        From the child: the grader decides what it costs.

    Examples
    --------
    >>> import numpy as np
    >>> from scratchnet.exercises import select
    >>> from scratchnet.exercises.sides import Local
    >>> relu = select(["relu_backward"])[0]
    >>> results = run_checks(relu, Local(lambda dout, x: dout * (x > 0)))
    >>> sorted({r["status"] for r in results})
    ['pass']
    """
    arg = side if ex.id in OBJECT_CHECKS else side.function(ex.id, names=ex.covers)
    out = []
    for check in checks_of(ex.id):
        if only and check.name not in only:
            continue
        out.append({"name": check.name, **_outcome(check, arg, ex)})
    return out


def scored(result: Dict[str, Any], ex: Exercise, entry: Dict[str, Any]
            ) -> Dict[str, Any]:
    """Points per check, shared by weight; one message when the exercise is out.

    Parameters
    ----------
    result : dict
        One exercise's outcome: ``status`` and, when graded, its ``checks``
        (each with the ``credit`` it earned, 0 to 1).
    ex : Exercise
    entry : dict
        The assignment's entry: ``points`` and optional per-check ``weight``
        and ``visibility``.

    Returns
    -------
    dict
        ``result`` with ``points``, ``max_points`` and each check's share.

    Examples
    --------
    >>> from scratchnet.exercises.catalogue import select
    >>> out = scored({"status": "todo"}, select(["relu_backward"])[0],
    ...              {"points": 5})
    >>> out["points"], out["max_points"], out["checks"][0]["message"]
    (0.0, 5, 'not implemented yet')
    """
    status = result["status"]
    checks = checks_of(ex.id)
    names = [c.name for c in checks]
    specs = entry.get("checks") or {}
    weights = {c.name: float(specs.get(c.name, {}).get("weight", c.weight))
               for c in checks}
    total = sum(weights.values()) or 1.0
    if status != "graded":
        message = result.get("message") or STATUS_TEXT[status].format(id=ex.id)
        checks = [{"name": n, "status": status, "message": message if i == 0 else "",
                   "hint": ""} for i, n in enumerate(names)]
        result = {**result, "checks": checks, "message": message}
    share = value_share(result["checks"], weights)
    for c in result["checks"]:
        c["max_points"] = entry["points"] * weights[c["name"]] / total
        credit = c.get("credit", 0.0)   # a share of its arrays
        if c["name"] in EDGE_CHECKS and credit and share < 1:
            credit *= share
            c["message"] = (c["message"] + "; " if c["message"] else "") + (
                f"an edge case: its points follow the value checks' "
                f"({share:.0%} of theirs earned)")
        c["points"] = c["max_points"] * credit
        c["visibility"] = specs.get(c["name"], {}).get("visibility", "visible")
    return {**result, "points": round(sum(c["points"] for c in result["checks"]), 6),
            "max_points": entry["points"]}


def value_share(checks: Sequence[Dict[str, Any]], weights: Dict[str, float]) -> float:
    """The share of the value checks' points an exercise earned (1 when it has none).

    The value checks are those not in :data:`EDGE_CHECKS`: an answer that
    computes nothing fails them.  An edge check's credit is multiplied by
    this share.

    Parameters
    ----------
    checks : sequence of dict
        ``name`` and ``credit`` (0 to 1; missing: 0).
    weights : dict
        Check name -> weight.

    Returns
    -------
    float

    Examples
    --------
    >>> checks = [{"name": "values", "credit": 0.0}, {"name": "large logits",
    ...           "credit": 1.0}, {"name": "empty batch", "credit": 1.0}]
    >>> value_share(checks, {"values": 1.0, "large logits": 1.0, "empty batch": 1.0})
    0.5
    """
    values = [c for c in checks if c["name"] not in EDGE_CHECKS]
    total = sum(weights.get(c["name"], 1.0) for c in values)
    if not total:
        return 1.0
    return sum(weights.get(c["name"], 1.0) * c.get("credit", 0.0)
               for c in values) / total
