"""numpydoc's work done once where it repeated it for every docstring.

numpydoc rewrites each docstring's sections into reStructuredText with a Jinja
template, and it made a new template environment, and so compiled that
template again, for every docstring (seven hundred compilations, about a
twentieth of the build's time).  The template is the same for the whole build
(numpydoc's, or the project's override in ``templates_path``), so this
extension hands numpydoc the one it compiled first; numpydoc itself offers to
replace its ``get_doc_object`` (the argument of its ``setup``).

numpydoc's ``autodoc-process-signature`` handler is disconnected: it parsed
every docstring a second time to replace the signature autodoc reads from the
object by one written as the docstring's first line (``name(args)``).
scratchnet's docstrings never start so (numpydoc's style does not ask for
it), so the handler changed no signature of the site; without it, a docstring
that did would still show the real signature.

Load it after ``numpydoc``.
"""

from __future__ import annotations

from typing import Any

import numpydoc.numpydoc
from numpydoc.docscrape import get_doc_object as parse_doc_object
from numpydoc.docscrape_sphinx import SphinxClassDoc, SphinxFunctionDoc, SphinxObjDoc
from numpydoc.docscrape_sphinx import get_doc_object as numpydoc_get_doc_object


def get_doc_object(
    obj: Any,
    what: str | None = None,
    doc: str | None = None,
    config: dict | None = None,
    builder: Any = None,
) -> Any:
    """numpydoc's ``get_doc_object``, its template compiled once per builder."""
    config = {} if config is None else config
    template = getattr(builder, "scratchnet_numpydoc_template", None)
    if builder is None or template is None:
        parsed = numpydoc_get_doc_object(obj, what, doc, config, builder)
        if builder is not None:
            builder.scratchnet_numpydoc_template = config["template"]
        return parsed
    config["template"] = template
    return parse_doc_object(
        obj,
        what=what,
        doc=doc,
        config=config,
        class_doc=SphinxClassDoc,
        func_doc=SphinxFunctionDoc,
        obj_doc=SphinxObjDoc,
    )


def setup(app: Any) -> dict[str, Any]:
    numpydoc.numpydoc.get_doc_object = get_doc_object
    for listener in list(app.events.listeners.get("autodoc-process-signature", [])):
        if listener.handler is numpydoc.numpydoc.mangle_signature:
            app.disconnect(listener.id)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
