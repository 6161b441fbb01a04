"""One exercise graded: a fresh sandboxed child, its checks, carry-forward.

:class:`Children` starts the exercise's child
(:class:`~scratchnet.exercises.remote.Child`) with the references its
dependencies carry (:func:`~scratchnet.exercises.carried.carried`) and loads
the submission's modules in it; a child lost in a check costs that check and a
new one answers the rest, a time-out costs the exercise's remaining checks.
:func:`grade_exercise` runs the checks and, for those that failed while an
exercise this one uses (at any depth: :func:`dependencies`) failed, or a
stub of one raised inside it, runs them again in a fresh child with the
references in place of the student's.  A check that then passes is carried
forward only on evidence: the student's dependency, recomputed on the very
inputs the check passed it, gives another result than the reference
(:func:`differs`).  A stub of a dependency raising inside the exercise is the
dependency's, not the exercise's.  One mistake costs points once.
"""

from __future__ import annotations

import copy
import time
from typing import Any, Dict, List, Sequence

import numpy as np

from .carried import carried, reference_source
from .catalogue import Exercise, chapter_of, select
from .checking import checks_of, run_checks
from .checks_models import CHECKS_USE
from .diagnoses import close
from .frames import Described, Handle
from .own import child_homes
from .remote import Child, ChildLost, where
from .sandbox import Sandbox
from .sides import Objects
from .source import chapter_module, reference

__all__ = ["Children", "dependencies", "differs", "exercise_budget", "grade_exercise",
           "same"]


class Children:
    """The children of one exercise: one at a time, a new one after one is lost.

    Parameters
    ----------
    ex : Exercise
    box : Sandbox
        The grading process's sandbox.
    job : dict
        The grading job (``exercises``, ``limit``).
    modules : dict
        The submission's modules to load in each child -> built definition by
        definition (those first: the others import them).
    dead : dict
        Module -> why a child died importing it; shared by the exercises, so
        such a module is left out of every later child.
    replace : sequence of str, optional
        Carry-forward: the exercises whose references these children hold
        and put in place of the student's (none on the first run: then the
        children hold only what the checks build with).

    Examples
    --------
    >>> callable(Children)
    True
    """

    def __init__(self, ex: Exercise, box: Sandbox, job: Dict[str, Any],
                 modules: Dict[str, bool], dead: Dict[str, str],
                 replace: Sequence[str] = ()) -> None:
        self.ex, self.box, self.job, self.modules = ex, box, job, modules
        self.dead = dead   # module -> why a child died importing it (shared)
        self.homes = child_homes(job["exercises"])
        self.replace = list(replace)
        self.references = carried(ex, [*CHECKS_USE.get(ex.id, ()), *replace])
        self.current: Child | None = None
        self.broken: Dict[str, Dict[str, Any]] = {}
        self.deadline = time.monotonic() + exercise_budget(
            len(checks_of(ex.id)), job["limit"])
        self.lost = 0

    def get(self) -> Child:
        """The current child, started and the submission's modules loaded if needed.

        Returns
        -------
        Child

        Raises
        ------
        ChildLost
            When the sandbox does not start.

        Examples
        --------
        >>> callable(Children.get)
        True
        """
        while self.current is None:
            child = Child(self.box, self.homes, self.references,
                          limit=self.job["limit"])
            end = time.monotonic() + self.job["limit"] + 2.0   # all imports at once
            try:
                for module, by_function in self.modules.items():
                    if module in self.dead:
                        continue
                    at = module
                    answer = child.request({"op": "load", "module": module,
                                            "by_function": by_function},
                                           timeout=max(0.5, end - time.monotonic()))
                    if module == self.ex.chapter:
                        self.broken = (answer.get("value") or {}).get("broken", {})
                self.current = child
            except ChildLost as err:   # importing it ends the child (or takes the
                self.dead[at] = str(err)   # time of all): left out of every later one
        return self.current

    def run(self, names: Sequence[str]) -> List[Dict[str, Any]]:
        """The checks, one at a time: a lost child costs the check it was in; a
        time-out, a second lost child or the exercise's time budget spent cost
        its remaining checks.  The exercise's own stub raising ends them: it is
        not implemented yet, whatever the others would say (a skeleton's
        exercise costs one check, not all).

        Parameters
        ----------
        names : sequence of str
            The checks to run.

        Returns
        -------
        list of dict
            One outcome per check run (as
            :func:`~scratchnet.exercises.checking.run_checks` gives); after a
            ``todo``, none.

        Examples
        --------
        >>> callable(Children.run)
        True
        """
        out: List[Dict[str, Any]] = []
        for i, name in enumerate(names):
            why = "the exercise ran past its time budget" if \
                time.monotonic() > self.deadline else ""
            if not why:
                try:
                    out += run_checks(self.ex, Objects(self.get(), self.ex.id,
                                                       self.replace), only=[name])
                    if out[-1]["status"] == "todo":
                        break
                    continue
                except ChildLost as err:
                    self.current, self.lost = None, self.lost + 1
                    out.append({"name": name, "status": "error", "hint": "",
                                "message": str(err), "location": err.location})
                    why = f"the check {name!r} ran past the time limit" if \
                        err.timed_out else "the child was lost twice" if \
                        self.lost > 1 else ""
                    if not why:
                        continue
                    i += 1
            out += [{"name": rest, "status": "error", "hint": "",
                     "message": f"not run: {why}"} for rest in names[i:]]
            break
        return out

    def stop(self) -> None:
        """End the current child, if there is one.

        Returns
        -------
        None

        Examples
        --------
        >>> callable(Children.stop)
        True
        """
        if self.current is not None:
            self.current.stop()
            self.current = None


def grade_exercise(ex: Exercise, finding: Dict[str, Any], failed: set,
                   children: Children) -> Dict[str, Any]:
    """One exercise graded: its checks in its children, then carry-forward.

    Parameters
    ----------
    ex : Exercise
    finding : dict
        What its source said
        (:func:`~scratchnet.exercises.analysis.read_exercise`).
    failed : set of str
        The exercises graded before that lost points: carry-forward's suspects,
        with the stubs that raised inside this one's checks.
    children : Children
        Its children; stopped at the end.

    Returns
    -------
    dict
        ``id``, ``status``, ``checks`` (each with its outcome), ``copied`` and,
        when it was not graded, ``message``.

    Examples
    --------
    >>> callable(grade_exercise)
    True
    """
    result = {"id": ex.id, "status": "graded", "checks": [],
              "copied": finding["copied"]}
    if finding["status"] != "ok":
        return {**result, "status": finding["status"], "message": finding["message"]}
    try:
        try:
            children.get()
        except ChildLost as err:
            return {**result, "status": "error",
                    "message": f"starting the sandbox: {err}"}
        if ex.chapter in children.dead:
            return {**result, "status": "error", "message": f"importing "
                    f"{ex.chapter}.py: {children.dead[ex.chapter]}"}
        own = children.broken.get(ex.id.split(".")[0])
        if own:
            return {**result, "status": "error", "message": f"{ex.chapter}.py: "
                    f"{own['type']}: {own['message']}{where(own.get('location'))}"}
        checks = children.run([c.name for c in checks_of(ex.id)])
        if any(c["status"] == "todo" for c in checks):
            return {**result, "status": "todo"}
        wrong = [c for c in checks if c["status"] != "pass"]   # not run too
        stubs = [c["helper"] for c in wrong if c.get("helper")]
        suspects = [use for use in dependencies(ex, stubs)
                    if (use in failed or use in stubs)
                    and reference_source(use) is not None]
        if wrong and suspects:   # a fresh child that holds their references only now
            children.stop()
            if _carry_forward(wrong, Children(ex, children.box, children.job,
                                              children.modules, children.dead,
                                              suspects)):
                return {**result, "status": "todo"}   # its own stub, behind theirs
        return {**result, "checks": checks}
    finally:
        children.stop()


def _carry_forward(wrong: List[Dict[str, Any]], rerun: Children) -> bool:
    """Each wrong check run again with the references in place; carried where it
    passes and a replaced dependency of the student's, recomputed on the very
    inputs the check gave it, differs from the reference (the evidence), or
    hangs or dies there.  True when the exercise's own stub raised then: it is
    not implemented yet."""
    known: set = set()   # the student's own hung or died on such inputs once
    try:
        for c in wrong:
            again = rerun.run([c["name"]])[0]
            if again["status"] == "todo":
                return True
            if rerun.current is None:   # lost or late: the rest is not run again
                break
            cause = []
            for name in rerun.replace:
                try:
                    found = rerun.current.request({"op": "evidence", "id": name,
                                                   "count": name in known})
                except ChildLost:   # the student's own, on those inputs, did not return
                    rerun.current = None
                    known.add(name)
                    cause.append(name)
                    break
                calls = (found.get("value") or []) if found.get("ok") else []
                if calls and (name in known or any(differs(name, call)
                                                   for call in calls)):
                    cause.append(name)
            if again["status"] == "pass" and cause:
                named = " and ".join(sorted(cause))
                c.update(status="carried", message="", credit=1.0, hint=(
                    f"passes with the library's {named} in place of yours: fix "
                    f"{named} (graded there)"))
    finally:
        rerun.stop()
    return False


def dependencies(ex: Exercise, called: Sequence[Any] = ()) -> List[str]:
    """The exercises ``ex`` may call, transitively: its ``uses``, theirs, and so on.

    Parameters
    ----------
    ex : Exercise
    called : sequence of str
        Exercises found calling (a helper's stub that raised), added first.

    Returns
    -------
    list of str
        Never ``ex.id``.

    Examples
    --------
    >>> from scratchnet.exercises.catalogue import select
    >>> dependencies(select(["cross_entropy"])[0])
    ['log_softmax', 'logsumexp', 'nll_loss']
    """
    todo = [*(c for c in called if c), *ex.uses]
    out: List[str] = []
    while todo:
        name = todo.pop(0)
        if name in out or name == ex.id:
            continue
        out.append(name)
        try:
            todo += list(select([name])[0].uses)
        except KeyError:   # not an exercise: nothing it uses is known
            pass
    return sorted(out)


def differs(name: str, call: Dict[str, Any]) -> bool:
    """Whether the student's ``name`` gave another result than the reference on one
    recorded input (raised, another value, or another argument after the call).

    Where ``name`` is a function, the reference value is computed here, from the
    recorded arguments, with the grader's own copy of the key.

    Parameters
    ----------
    name : str
    call : dict
        ``args``, ``kwargs``, and ``student`` and ``reference``, each ``value`` and
        ``args`` (after the call) or ``error``.

    Returns
    -------
    bool

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[0.0, 1.0]])
    >>> from scratchnet.softmax import softmax
    >>> mine = {"value": softmax(x), "args": [x]}
    >>> differs("softmax", {"args": [x], "kwargs": {}, "student": mine})
    False
    >>> differs("softmax", {"args": [x], "kwargs": {},
    ...                     "student": {"error": {"type": "NotImplementedError"}}})
    True
    """
    student = call.get("student") or {}
    if "error" in student:
        return True
    expected = call.get("reference") or {}
    if "." not in name:
        try:
            func = reference(name, chapter_module(chapter_of(name)))[0]
            args = copy.deepcopy(list(call.get("args") or []))
            with np.errstate(all="ignore"):
                expected = {"value": func(*args, **(call.get("kwargs") or {})),
                            "args": args}
        except Exception:   # the reference cannot take these inputs
            return False
    if "error" in expected or not expected:
        return False
    return not (same(student.get("value"), expected.get("value"))
                and same(student.get("args"), expected.get("args")))


def same(a: Any, b: Any) -> bool:
    """Whether two results agree: arrays within tolerance (NaN matches NaN), the
    same keys and items; objects the child only described are not compared.

    Parameters
    ----------
    a, b : object

    Returns
    -------
    bool

    Examples
    --------
    >>> import numpy as np
    >>> same({"W": np.ones(2)}, {"W": np.ones(2) + 1e-12}), same((1.0,), (2.0,))
    (True, False)
    """
    if isinstance(a, (Described, Handle)) or isinstance(b, (Described, Handle)):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(map(same, a, b))
    if a is None or b is None or isinstance(a, str) or isinstance(b, str):
        return a == b
    return close(a, b)


def exercise_budget(checks: int, limit: float) -> float:
    """The wall-clock seconds one exercise may take: each check and a load at the limit.

    Parameters
    ----------
    checks : int
    limit : float
        Seconds per call.

    Returns
    -------
    float

    Examples
    --------
    >>> exercise_budget(6, 10.0)
    120.0
    """
    return (checks + 6) * limit
