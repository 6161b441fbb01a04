"""The old name of :mod:`scratchnet.exercises.reference_scores`, kept for one release.

The same functions under the old name; it goes in the next release.
"""

from __future__ import annotations

from .reference_scores import *  # noqa: F403 (the old module's names, all of them)
from .reference_scores import POINTERS, __all__  # noqa: F401
