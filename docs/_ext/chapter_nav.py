"""The chapters' navigation, built from the titles alone.

The theme's left sidebar lists every page of the site by its title
(``toctree(titles_only=True, includehidden=True)``), and it is rebuilt for
every page, because the current page is marked in it and its links are
relative.  Sphinx builds it by copying each page's whole table of contents
(every section and, on the API pages, every function, method and class)
and then throwing away all but the page's title and its ``toctree``
directives.  With over sixty pages of several dozen entries each, the
copying was about a tenth of the build's time.

This extension keeps the result and skips the waste: when the build starts
writing, it keeps, for every page, the part of its table of contents that a
titles-only tree keeps (the title, and the ``toctree`` directives found
below it), and the sidebar's ``toctree`` is resolved by Sphinx's own
:func:`~sphinx.environment.adapters.toctree.global_toctree_for_doc` from
those small trees instead of the full ones.  It gives the same tree, so the
same HTML: the cut is the one Sphinx makes afterwards, made once instead of
once per page.  A page whose table of contents holds an ``only`` directive,
or that sets its own ``tocdepth``, keeps its full tree (there the cut would
depend on the page being written).  The full tables of contents are
untouched: each page's own "On this page" list is built from them.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.environment.adapters.toctree import global_toctree_for_doc


def titles_only_toc(toc: nodes.bullet_list) -> nodes.bullet_list:
    """A copy of a page's table of contents cut as ``titles_only`` cuts it.

    Each top-level entry keeps its title and, in place of its sub-entries,
    the ``toctree`` directives found anywhere below it (none: no sub-list).
    """
    cut = toc.deepcopy()
    for top_level in cut.children:
        if isinstance(top_level, nodes.Element) and len(top_level) > 1:
            if subtrees := list(top_level.findall(addnodes.toctree)):
                top_level[1][:] = subtrees
            else:
                top_level.pop(1)
    return cut


class TitlesOnlyEnvironment:
    """The build environment, seen with the titles-only tables of contents."""

    def __init__(self, env: Any) -> None:
        self._env = env
        self.tocs = {
            docname: toc
            if "tocdepth" in env.metadata[docname] or any(toc.findall(addnodes.only))
            else titles_only_toc(toc)
            for docname, toc in env.tocs.items()
        }

    def __getattr__(self, name: str) -> Any:
        return getattr(self._env, name)


def on_page_context(
    app: Any, pagename: str, templatename: str, context: dict, doctree: Any
) -> None:
    """Resolve the page's titles-only ``toctree()`` from the cut tables of contents."""
    if "toctree" not in context:
        return
    builder = app.builder
    full_toctree = context["toctree"]

    def toctree(**kwargs: Any) -> str:
        if not kwargs.get("titles_only"):
            return full_toctree(**kwargs)
        # the defaults and the spelling of Sphinx's own ``toctree()``
        kwargs.setdefault("collapse", True)
        kwargs.setdefault("includehidden", False)
        if kwargs.get("maxdepth") == "":
            kwargs.pop("maxdepth")
        env = getattr(builder, "scratchnet_titles_env", None)
        if env is None:
            env = builder.scratchnet_titles_env = TitlesOnlyEnvironment(app.env)
        tags = builder.tags
        tree = global_toctree_for_doc(env, pagename, builder, tags=tags, **kwargs)
        return builder.render_partial(tree)["fragment"]

    context["toctree"] = toctree


def setup(app: Any) -> dict[str, Any]:
    # before the theme (priority 500) looks at the sidebar templates
    app.connect("html-page-context", on_page_context, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
