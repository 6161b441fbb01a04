r"""The fast path's optimisers are the chapter's: :class:`scratchnet.Adam`, flat.

:meth:`scratchnet.optim.Optimizer.step` already runs its update rule once on
the whole vector when it is given the fast path's :class:`~scratchnet.fast.FlatParams`
or :class:`~scratchnet.fast.StackedParams` (``params.flat``, ``grads.flat``),
so the fast path needs no update rule of its own.  Until issue 23 it had one: a
copy of :meth:`scratchnet.optim.Adam.update` that wrote its temporaries into a
scratch vector and took its constants as 0-d arrays.  Measured on a 2-core
x86-64 machine (1-64-64-2 float32 networks, 2,000 steps, median of 7 rounds
interleaved), the chapter's update costs 15.4 µs a step against the copy's
12.2 µs for one network, and 136.6 against 121.9 µs for 18: 3 and 15 µs of
steps of about 70 and 600 µs, 2 to 5%, under the 10% that would justify a
second Adam.  ``tests/test_fast.py::test_fast_adam_*`` pins the flat update
to the chapter's update of separate arrays, to the last bit.

Examples
--------
>>> import scratchnet as sn
>>> sn.fast.Adam is sn.Adam
True
"""

from __future__ import annotations

from ..optim import Adam

__all__ = ["Adam"]
