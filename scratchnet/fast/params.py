r"""The fast path's parameters: named arrays that are views of one flat vector.

The optimisers of :mod:`scratchnet.optim` update a mapping of arrays; when
the arrays are consecutive views of one vector (``params.flat``) they run
their update rule once on the whole vector instead of once per array.
:class:`FlatParams` holds one network's parameters that way (``fast.MLP``'s
``W1, b1, W2, b2, ...``), :class:`StackedParams` the parameters of S networks
of one shape, member after member (``fast.Ensemble``'s, each array with a
leading member axis).  Assigning to an entry copies into its view.
"""

from __future__ import annotations

import functools
import math
from collections.abc import MutableMapping
from typing import Any, Dict, Iterator, Tuple

import numpy as np

__all__ = ["FlatParams", "Layout", "StackedParams"]

#: Names and shapes of the arrays, in their order in the vector.
Layout = Tuple[Tuple[str, Tuple[int, ...]], ...]


@functools.lru_cache(maxsize=64)
def _offsets(layout: Layout) -> Tuple[Tuple[str, int, int, Tuple[int, ...]], ...]:
    """``(name, start, stop, shape)`` of each array of ``layout`` in the vector."""
    offsets, start = [], 0
    for name, shape in layout:
        stop = start + math.prod(shape)
        offsets.append((name, start, stop, shape))
        start = stop
    return tuple(offsets)


class FlatParams(MutableMapping):
    """Named arrays that are consecutive views of one flat vector.

    Parameters
    ----------
    flat : ndarray, shape (P,)
        The vector.
    layout : tuple of (str, tuple of int)
        Names and shapes, in order; their sizes add up to P.

    Attributes
    ----------
    flat : ndarray
    layout : tuple

    Examples
    --------
    >>> import numpy as np
    >>> from scratchnet.fast import FlatParams
    >>> p = FlatParams(np.arange(5.0), (("W", (2, 2)), ("b", (1,))))
    >>> p["W"], p["b"]
    (array([[0., 1.],
           [2., 3.]]), array([4.]))
    >>> p["b"] = [9.0]; p.flat
    array([0., 1., 2., 3., 9.])
    """

    def __init__(self, flat: np.ndarray, layout: Layout) -> None:
        size = _offsets(layout)[-1][2]
        if flat.shape != (size,):
            raise ValueError(f"flat must have shape ({size},) for this layout; "
                             f"got {flat.shape}")
        self.flat, self.layout = flat, layout
        self._named: Dict[str, np.ndarray] | None = None  # made when first asked for

    @property
    def _views(self) -> Dict[str, np.ndarray]:
        """The named views, made on first use: an optimiser's step on the fast path's
        gradients reads only ``flat`` and ``layout`` (2 µs a step saved)."""
        if self._named is None:
            self._named = self.unflatten(self.flat)
        return self._named

    def unflatten(self, vector: np.ndarray) -> Dict[str, np.ndarray]:
        """Views of ``vector`` with this layout's names and shapes.

        Parameters
        ----------
        vector : ndarray, shape (P,)

        Returns
        -------
        dict of str to ndarray

        Examples
        --------
        >>> import numpy as np
        >>> from scratchnet.fast import FlatParams
        >>> p = FlatParams(np.zeros(3), (("a", (1,)), ("b", (2,))))
        >>> p.unflatten(np.arange(3.0))["b"]
        array([1., 2.])
        """
        if np.shape(vector) != self.flat.shape:
            raise ValueError(f"vector must have this layout's shape {self.flat.shape}; "
                             f"got shape {np.shape(vector)}")
        return {name: vector[start:stop].reshape(shape)
                for name, start, stop, shape in _offsets(self.layout)}

    def __getitem__(self, name: str) -> np.ndarray:
        return self._views[name]

    def __setitem__(self, name: str, value: Any) -> None:
        if name not in self._views:
            raise KeyError(f"the fast path's parameters are fixed: "
                           f"{list(self._views)}; cannot add {name!r}")
        view = self._views[name]
        value = np.asarray(value)
        if value.shape != view.shape:
            raise ValueError(f"params[{name!r}] must keep its shape {view.shape} (a "
                             f"view of the flat vector); got {value.shape}")
        view[...] = value

    def __delitem__(self, name: str) -> None:
        raise TypeError("the fast path's parameters are fixed; they cannot be deleted")

    def __iter__(self) -> Iterator[str]:
        return iter(self._views)

    def __len__(self) -> int:
        return len(self._views)

    def __repr__(self) -> str:
        return f"FlatParams({ {k: v.shape for k, v in self._views.items()} })"


class StackedParams(FlatParams):
    """:class:`FlatParams` of S members, stored member after member.

    Parameters
    ----------
    flat : ndarray, shape (S * P,)
        Member ``s``'s parameters are ``flat.reshape(S, P)[s]``, in the
        order of ``fast.MLP``'s own flat vector.
    layout : tuple of (str, tuple of int)
        Names and stacked shapes ``(S, *shape)``, in ``fast.MLP``'s order.

    Examples
    --------
    >>> import numpy as np
    >>> from scratchnet.fast import StackedParams
    >>> p = StackedParams(np.arange(6.0), (("W", (2, 1, 2)), ("b", (2, 1))))
    >>> p["W"][:, 0], p["b"][:, 0]   # member 0 is [0, 1 | 2], member 1 [3, 4 | 5]
    (array([[0., 1.],
           [3., 4.]]), array([2., 5.]))
    """

    def unflatten(self, vector: np.ndarray) -> dict:
        """Views of ``vector`` with this layout's names and stacked shapes.

        Parameters
        ----------
        vector : ndarray, shape (S * P,)

        Returns
        -------
        dict of str to ndarray
            Strided views: entry ``(S, *shape)`` of member ``s`` at
            ``vector.reshape(S, P)[s]``.

        Examples
        --------
        >>> import numpy as np
        >>> from scratchnet.fast import StackedParams
        >>> p = StackedParams(np.zeros(4), (("a", (2, 1)), ("b", (2, 1))))
        >>> p.unflatten(np.arange(4.0))["b"]
        array([[1.],
               [3.]])
        """
        rows = vector.reshape(self.layout[0][1][0], -1)
        views, start = {}, 0
        for name, shape in self.layout:
            stop = start + math.prod(shape[1:])
            views[name] = rows[:, start:stop].reshape(shape)
            start = stop
        return views
