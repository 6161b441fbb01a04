"""The class of scratchnet's warnings.

One class, so that a user can single out what the library says (as
scikit-learn's ``sklearn.exceptions`` does for its own); it was defined in
:mod:`scratchnet.temperature`, where its first warning was, and is still
importable from there.
"""

from __future__ import annotations

__all__ = ["ScratchnetWarning"]


class ScratchnetWarning(UserWarning):
    """A result that is what was asked for but perhaps not what was meant.

    scratchnet warns with this class, and the message says why (for example
    a fitted temperature that stopped at a bound of its search interval), so
    that ``warnings.filterwarnings("error", category=ScratchnetWarning)``
    or ``pytest.warns(ScratchnetWarning)`` can single them out.

    Attributes
    ----------
    args : tuple
        The message, as for any warning.

    Examples
    --------
    >>> import warnings
    >>> import scratchnet as sn
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     sn.temperature.fit_temperature([[5.0, 0.0], [0.0, 5.0]], [0, 1])
    0.01
    >>> issubclass(caught[0].category, sn.ScratchnetWarning)
    True
    >>> sn.ScratchnetWarning is sn.temperature.ScratchnetWarning   # the old home
    True
    """
