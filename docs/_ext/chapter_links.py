"""Link the notebook chapters and the API reference both ways.

*Dive into Deep Learning* ends every library object's entry with "Defined in"
and the section that defines it.  Here the chapters are notebooks and the
library is written apart from them, so the links are read off the notebooks'
code when the site is built:

* after the title of every section of a notebook chapter, a line
  "In this section:" links each API entry that the section's code cells call
  as ``sn.<name>`` (``sn.cross_entropy``, ``sn.tasks.separated``);
* at the end of every API entry that some section calls, a line "Taught in:"
  links those sections, one per notebook (the first section that calls it).

Nothing is written into the notebooks or the docstrings, so the links cannot
drift from the code.  The API pages may be read before the notebooks, so an
entry receives a placeholder (``.. taught-in::``) that is filled in when the
page is written, after every notebook has been read.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

from docutils import nodes
from docutils.parsers.rst import Directive
from sphinx import addnodes

import scratchnet

NOTEBOOKS = "notebooks/"  # docnames of the chapters start with this
_CALL = re.compile(r"\bsn\.([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)")


def _resolve(dotted: str) -> tuple[str, Any] | None:
    """``"tasks.separated"`` -> (``"scratchnet.tasks.separated"``, the object).

    Walks the attributes from ``scratchnet`` down to the first object that is
    not a module (attributes of a function's result are not followed).
    Returns None for private names and names scratchnet does not have.
    """
    obj: Any = scratchnet
    path = ["scratchnet"]
    for part in dotted.split("."):
        if part.startswith("_") or not hasattr(obj, part):
            break
        obj = getattr(obj, part)
        path.append(part)
        if not inspect.ismodule(obj):
            break
    if len(path) == 1:
        return None
    return ".".join(path), obj


def key(obj: Any) -> str | None:
    """One name per object, however it is reached: its module and qualified name."""
    if inspect.ismodule(obj):
        return obj.__name__
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if not (module and qualname and module.startswith("scratchnet")):
        return None
    return f"{module}.{qualname}"


def _cell_sources(section: nodes.section) -> list[str]:
    """The code of the cells in ``section`` itself (not in its subsections)."""
    sources = []
    for block in section.findall(nodes.literal_block):
        parent = block.parent
        if not isinstance(parent, nodes.Element):
            continue
        if parent.get("nb_element") != "cell_code_source":
            continue
        owner = block.parent
        while not isinstance(owner, nodes.section):
            owner = owner.parent
        if owner is section:
            sources.append(block.astext())
    return sources


def _calls(sources: list[str]) -> list[tuple[str, Any]]:
    """The scratchnet objects called in ``sources``, in order of first use."""
    found: dict[str, tuple[str, Any]] = {}
    for source in sources:
        for match in _CALL.finditer(source):
            resolved = _resolve(match.group(1))
            if resolved is None:
                continue
            name, obj = resolved
            k = key(obj)
            if k is not None and k not in found:
                found[k] = (name, obj)
    return list(found.values())


def _xref(name: str, obj: Any, docname: str) -> addnodes.pending_xref:
    """A link to the API entry of ``obj``, shown as ``sn.<name>``."""
    canonical = key(obj) or name
    reftype = "mod" if inspect.ismodule(obj) else "obj"
    ref = addnodes.pending_xref(
        "",
        refdomain="py",
        reftype=reftype,
        reftarget=canonical,
        refdoc=docname,
        refexplicit=True,
        refwarn=False,
        sn_path=name,  # tried when the canonical name is not documented
    )
    ref += nodes.literal(text="sn." + name.split(".", 1)[1], classes=["xref", "py"])
    return ref


def on_doctree_read(app: Any, doctree: nodes.document) -> None:
    """Notebook chapters: add the "In this section" line, record the sections."""
    env = app.env
    docname = env.docname
    if not docname.startswith(NOTEBOOKS):
        return
    # A Markdown link to a source file (``../scratchnet/layers.py``, which opens
    # the file in JupyterLab) leads to the module's API page on the site.
    for ref in doctree.findall(addnodes.pending_xref):
        source = _SOURCE_FILE.match(ref.get("reftarget", ""))
        if ref.get("reftype") == "myst" and source:
            module = f"scratchnet.{source.group(1)}"
            ref.update_all_atts(
                {"refdomain": "py", "reftype": "mod", "reftarget": module}, replace=True
            )
    taught = env.scratchnet_taught = getattr(env, "scratchnet_taught", {})
    chapter = None
    for section in list(doctree.findall(nodes.section)):
        title = section.next_node(nodes.title)
        if chapter is None:
            chapter = title.astext()
            continue  # the notebook's title: its cells are the imports
        calls = _calls(_cell_sources(section))
        if not calls:
            continue
        line = nodes.paragraph(classes=["api-links"])
        line += nodes.emphasis(text="In this section: ")
        for i, (name, obj) in enumerate(calls):
            if i:
                line += nodes.Text(", ")
            line += _xref(name, obj, docname)
        section.insert(section.index(title) + 1, line)
        anchor = section["ids"][0]
        for _, obj in calls:
            entries = taught.setdefault(key(obj), [])
            if not any(doc == docname for doc, *_ in entries):
                entries.append((docname, anchor, chapter, title.astext()))


def on_purge_doc(app: Any, env: Any, docname: str) -> None:
    taught = getattr(env, "scratchnet_taught", {})
    for k in list(taught):
        taught[k] = [e for e in taught[k] if e[0] != docname]


def on_merge_info(app: Any, env: Any, docnames: Any, other: Any) -> None:
    taught = env.scratchnet_taught = getattr(env, "scratchnet_taught", {})
    for k, entries in getattr(other, "scratchnet_taught", {}).items():
        known = taught.setdefault(k, [])
        known.extend(e for e in entries if e not in known)


def on_get_outdated(
    app: Any, env: Any, added: set, changed: set, removed: set
) -> list[str]:
    """A changed chapter changes the "Taught in" lines: re-read the API pages."""
    if any(doc.startswith(NOTEBOOKS) for doc in added | changed | removed):
        return [doc for doc in env.found_docs if doc.startswith("api/")]
    return []


class taught_in(nodes.General, nodes.Element):
    """Placeholder for the "Taught in" line of an API entry."""


class TaughtIn(Directive):
    """``.. taught-in:: <key>``: replaced by links when the page is written."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        return [taught_in(key=self.arguments[0])]


def on_process_docstring(
    app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]
) -> None:
    """Give every function, class and method a "Taught in" placeholder."""
    if what not in ("function", "class", "method", "module"):
        return
    k = key(obj)
    if k is None:
        return
    lines.extend(["", f".. taught-in:: {k}", ""])


def on_doctree_resolved(app: Any, doctree: nodes.document, docname: str) -> None:
    """Fill the placeholders with links to the sections recorded while reading."""
    taught = getattr(app.env, "scratchnet_taught", {})
    for node in list(doctree.findall(taught_in)):
        entries = sorted(taught.get(node["key"], []))
        if not entries:
            node.parent.remove(node)
            continue
        line = nodes.paragraph(classes=["taught-in"])
        line += nodes.emphasis(text="Taught in: ")
        for i, (target, anchor, chapter, section) in enumerate(entries):
            if i:
                line += nodes.Text("; ")
            uri = app.builder.get_relative_uri(docname, target) + "#" + anchor
            text = f"{chapter}, {section}"
            line += nodes.reference("", text, internal=True, refuri=uri)
        node.replace_self(line)


_SOURCE_FILE = re.compile(r"^(?:\.\./)+scratchnet/(\w+)\.py$")


def on_missing_reference(app: Any, env: Any, node: Any, contnode: Any) -> Any:
    """A link of "In this section" whose canonical name is not documented."""
    domain = env.get_domain("py")
    alternative = node.get("sn_path")
    if not alternative or alternative == node.get("reftarget"):
        return None
    return domain.resolve_xref(
        env, node["refdoc"], app.builder, node["reftype"], alternative, node, contnode
    )


def setup(app: Any) -> dict[str, Any]:
    app.add_node(taught_in)
    app.add_directive("taught-in", TaughtIn)
    app.connect("doctree-read", on_doctree_read)
    app.connect("env-purge-doc", on_purge_doc)
    app.connect("env-merge-info", on_merge_info)
    app.connect("env-get-outdated", on_get_outdated)
    # after numpydoc (priority 500) has rewritten the docstring into sections
    app.connect("autodoc-process-docstring", on_process_docstring, priority=600)
    app.connect("doctree-resolved", on_doctree_resolved)
    app.connect("missing-reference", on_missing_reference)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
