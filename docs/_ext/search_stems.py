"""One stemming of each word for the whole search index.

The search index maps the stem of every word of every page to the pages
holding it; Sphinx stems each word once per page (it memoises within a page),
so a word used on sixty pages was stemmed sixty times: the pure-Python Snowball
stemmer was about a twentieth of the build's time.  A stem depends on the word
alone, so this extension memoises the indexer's stemmer for the whole build,
and the index it writes is the same.
"""

from __future__ import annotations

import functools
from typing import Any


def on_doctree_resolved(app: Any, doctree: Any, docname: str) -> None:
    """Memoise the stemmer of the search indexer once the builder has made it."""
    indexer = getattr(app.builder, "indexer", None)
    lang = getattr(indexer, "lang", None)
    if lang is None or getattr(lang, "scratchnet_memoised", False):
        return
    lang.stem = functools.cache(lang.stem)
    lang.scratchnet_memoised = True


def setup(app: Any) -> dict[str, Any]:
    app.connect("doctree-resolved", on_doctree_resolved)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
