"""The student's side as a check sees it: objects in the child, or the code itself here.

A check of a method exercise builds objects and calls their methods through
one small interface: ``new`` (the student's class, or a library class),
``method``, ``function``, ``get``, ``assign`` and ``params_of``.
:class:`Objects` does it in the child, where the submission runs, for the
grader; :class:`Local` does it in this process, for a student's own tests
(:func:`~scratchnet.exercises.assert_passes`).
"""

from __future__ import annotations

from typing import Any, Sequence

from .protocol import Handle, library_object
from .remote import Child, Remote

__all__ = ["Local", "Objects"]


class Objects:
    """Objects built in the child: the student's class and the library's.

    The interface the checks of method exercises use; :class:`Local` has
    the same one.

    Parameters
    ----------
    child : Child
    exercise : str
        The exercise being graded.
    replace : sequence of str
        Carry-forward: exercises whose student object is replaced.

    Examples
    --------
    >>> callable(Objects)
    True
    """

    def __init__(self, child: Child, exercise: str,
                 replace: Sequence[str] = ()) -> None:
        self.child, self.exercise, self.replace = child, exercise, list(replace)

    def _remote(self, target, **kw) -> Remote:
        return Remote(self.child, self.exercise, target, self.replace, **kw)

    def new(self, *args: Any, library: str = "", **kwargs: Any) -> Handle:
        """Build the student's class, or a reference's (``library="mlp.TwoLayerMLP"``).

        Parameters
        ----------
        *args, **kwargs
            The constructor's arguments.
        library : str, optional
            A chapter class, as ``"module.Name"``: in the child, the hand-out's
            base class with the carried reference methods.

        Returns
        -------
        Handle

        Examples
        --------
        >>> callable(Objects.new)
        True
        """
        target = {"new": library or self.exercise, "side": "reference" if library
                  else "student"}
        return self._remote(target)(*args, **kwargs)

    def method(self, obj: Handle, name: str, *, names: Sequence[str] = (),
               mutable: Sequence[int] = ()) -> Remote:
        """A method of an object in the child, to call.

        Parameters
        ----------
        obj : Handle
        name : str
        names : sequence of str
            The arguments' names, for messages.
        mutable : sequence of int
            Positions of arguments the call may change.

        Returns
        -------
        Remote

        Examples
        --------
        >>> callable(Objects.method)
        True
        """
        return self._remote({"handle": obj.number, "method": name}, names=names,
                           mutable=mutable)

    def function(self, name: str, *, library: bool = False, names: Sequence[str] = (),
                 mutable: Sequence[int] = ()) -> Remote:
        """The student's function ``name`` (or the carried reference ``"module.name"``).

        Parameters
        ----------
        name : str
        library : bool, default False
        names, mutable
            As for :meth:`method`.

        Returns
        -------
        Remote

        Examples
        --------
        >>> callable(Objects.function)
        True
        """
        target = {"reference": name.rpartition(".")[2]} if library else \
            {"student": name}
        return self._remote(target, names=names, mutable=mutable)

    def params_of(self, obj: Handle) -> Handle:
        """The object's ``params``, to pass as an argument (an optimiser's).

        Parameters
        ----------
        obj : Handle

        Returns
        -------
        Handle

        Examples
        --------
        >>> from scratchnet.exercises.protocol import Handle
        >>> Objects.params_of(None, Handle(2))
        Handle(number=2, attribute='params')
        """
        return Handle(obj.number, "params")

    def get(self, obj: Handle, *path: str) -> Any:
        """The value at an attribute (then keys) of an object in the child.

        Parameters
        ----------
        obj : Handle
        *path : str
            ``"params", "W1"``.

        Returns
        -------
        object

        Examples
        --------
        >>> callable(Objects.get)
        True
        """
        return self._remote({}).ask({"op": "get", "handle": obj.number,
                                     "path": list(path)})["value"]

    def assign(self, obj: Handle, path: Sequence[str], value: Any) -> None:
        """Write ``value`` into the array at ``path`` of an object in the child.

        Parameters
        ----------
        obj : Handle
        path : sequence of str
        value : ndarray

        Returns
        -------
        None

        Examples
        --------
        >>> callable(Objects.assign)
        True
        """
        self._remote({}).ask({"op": "assign", "handle": obj.number,
                              "path": list(path), "value": value})


class Local:
    """The same interface in this process, for a student's tests (``assert_passes``).

    Parameters
    ----------
    obj : callable or class
        The student's function, or the student's class of a method exercise.

    Examples
    --------
    >>> import numpy as np
    >>> Local(np.abs).function("abs")(np.array([-1.0]))
    array([1.])
    """

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def new(self, *args: Any, library: str = "", **kwargs: Any) -> Any:
        """As :meth:`Objects.new`, here.

        Parameters
        ----------
        *args, **kwargs, library
            As for :meth:`Objects.new`.

        Returns
        -------
        object

        Examples
        --------
        >>> Local(dict).new(a=1)
        {'a': 1}
        """
        if library:
            return library_object(library)(*args, **kwargs)
        return self.obj(*args, **kwargs)

    def method(self, obj: Any, name: str, **_: Any) -> Any:
        """As :meth:`Objects.method`, here: the bound method.

        Parameters
        ----------
        obj : object
        name : str

        Returns
        -------
        callable

        Examples
        --------
        >>> Local(None).method([3, 1], "count")(3)
        1
        """
        return getattr(obj, name)

    def function(self, name: str, *, library: bool = False, **_: Any) -> Any:
        """As :meth:`Objects.function`, here.

        Parameters
        ----------
        name : str
        library : bool, default False

        Returns
        -------
        callable

        Examples
        --------
        >>> Local(None).function("softmax.softmax", library=True).__name__
        'softmax'
        """
        if library:
            return library_object(name)
        return self.obj

    def params_of(self, obj: Any) -> Any:
        """As :meth:`Objects.params_of`, here: ``obj.params``.

        Parameters
        ----------
        obj : object

        Returns
        -------
        dict

        Examples
        --------
        >>> from scratchnet.mlp import TwoLayerMLP
        >>> sorted(Local(None).params_of(TwoLayerMLP(1, 2, 2, rng=0)))
        ['W1', 'W2', 'b1', 'b2']
        """
        return obj.params

    def get(self, obj: Any, *path: str) -> Any:
        """As :meth:`Objects.get`, here.

        Parameters
        ----------
        obj : object
        *path : str

        Returns
        -------
        object

        Examples
        --------
        >>> from scratchnet.mlp import TwoLayerMLP
        >>> Local(None).get(TwoLayerMLP(1, 2, 2, rng=0), "params", "b2")
        array([0., 0.])
        """
        value = getattr(obj, path[0])
        for key in path[1:]:
            value = value[key]
        return value

    def assign(self, obj: Any, path: Sequence[str], value: Any) -> None:
        """As :meth:`Objects.assign`, here.

        Parameters
        ----------
        obj : object
        path : sequence of str
        value : ndarray

        Returns
        -------
        None

        Examples
        --------
        >>> import numpy as np
        >>> from scratchnet.mlp import TwoLayerMLP
        >>> net = TwoLayerMLP(1, 2, 2, rng=0)
        >>> Local(None).assign(net, ["params", "b2"], np.ones(2)); net.params["b2"]
        array([1., 1.])
        """
        self.get(obj, *path)[...] = value
