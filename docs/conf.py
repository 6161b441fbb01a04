"""Sphinx configuration for the scratchnet documentation: a small textbook.

Build with ``python -m sphinx -W -b html docs docs/_build/html`` (warnings are
errors; ``tests/test_docs.py`` runs the same command).  Nothing is fetched,
neither at build time nor by the reader's browser: there is no intersphinx,
the theme's fonts and icons ship with the theme, and MathJax 3 is served from
``docs/_static/mathjax`` (the ``mathjax`` npm package, version 3.2.2, Apache
licence 2.0, whose text is kept beside it: its ``es5/tex-chtml-full.js``, every
TeX extension built in, and the woff-v2 fonts it loads from
``output/chtml/fonts/``; to update, ``npm pack mathjax@3`` and copy those).

The notebooks are chapters of the site: ``myst_nb`` renders them from their
stored outputs (it never executes them; ``scripts/execute_notebooks.py`` refreshes
the outputs).  They live in ``notebooks/`` and are copied to ``docs/notebooks/``
(ignored by git) when the build starts.

The local extensions live in ``setup`` below:

* ``optional-figure``: a figure directive that renders the image when the file
  exists and a short note saying how to produce it when it does not, so the
  experiments page builds before ``python -m scratchnet`` has been run and the
  figures copied to ``docs/_static/experiments/``.
* a ``missing-reference`` handler that resolves the top-level short names
  (``scratchnet.cross_entropy``) to the place each object is documented
  (``scratchnet.losses.cross_entropy``): every object is documented once, in
  its module, and the short spelling students use still links there.
* an ``autodoc-process-docstring`` handler for the constants that a
  subpackage re-exports (``scratchnet.experiments.EVAL_X``, defined in
  ``scratchnet/experiments/runs.py``): autodoc reads ``#:`` comments only in
  the module it documents, so the API page names such constants with
  ``autodata`` and the handler gives each the ``#:`` comment written where it
  is defined (instead of the docstring of its type).
* prose and code linked both ways (the "Defined in" links of *Dive into Deep
  Learning*, the other way round): every section of a notebook chapter gets a
  line "In this section:" linking the API entries its code calls as
  ``sn.<name>``, and every API entry a line "Taught in:" linking the
  notebook sections that call it.  Both are computed from the notebooks' code
  when the site is built, so they cannot drift and no docstring is edited.

Three more, in ``docs/_ext``, make the build cheaper and leave every page as
it was (the HTML is the same, byte for byte): ``chapter_nav`` (the sidebar's
chapter list resolved from the pages' titles alone), ``numpydoc_once``
(numpydoc's template compiled once, not once per docstring, and its signature
handler, which changed nothing here, dropped) and ``search_stems`` (each word
of the search index stemmed once, not once per page).  And Python's garbage
collector runs less often (below).
"""

from __future__ import annotations

import filecmp
import gc
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.parsers.rst.directives.images import Figure
from sphinx.errors import PycodeError
from sphinx.pycode import ModuleAnalyzer

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))  # document the source tree, installed or not
sys.path.insert(0, str(DOCS / "_ext"))  # chapter_links
os.environ.setdefault("MPLBACKEND", "Agg")  # plotting imports matplotlib headless

# The build holds about a million Python objects (the environment and the
# doctrees).  At the cyclic collector's default threshold, a collection every 700
# allocations, it ran 4,600 times and walked the whole heap 15 times: 8 to 9 s of
# a 48 s build.  Every 50,000 allocations: 40 s, and the build's peak memory is
# the same (380 MB).
gc.set_threshold(50_000, 10, 10)

import scratchnet  # noqa: E402

# -- Project -----------------------------------------------------------------

project = "scratchnet"
author = "the scratchnet authors"
copyright = "the scratchnet authors, MIT licence"
version = scratchnet.__version__
release = scratchnet.__version__

# -- General -----------------------------------------------------------------

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "numpydoc_once",  # numpydoc's template compiled once, in docs/_ext
    "myst_nb",  # MyST Markdown pages and the notebooks (it includes myst_parser)
    "chapter_links",  # notebook sections <-> API entries, in docs/_ext
    "chapter_nav",  # the sidebar's chapter list from the page titles, in docs/_ext
    "search_stems",  # each word stemmed once for the search index, in docs/_ext
]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"
exclude_patterns = [
    "_build",
    "_static",
    "_ext",
    "notebook-twins",  # the notebooks' MyST twins, for reviewing diffs: not pages
    "Thumbs.db",
    ".DS_Store",
    "**.ipynb_checkpoints",
]
nitpicky = False
default_role = "code"  # `x` in reStructuredText docstrings renders as code

# MyST: $...$ and $$...$$ math, \begin{align} environments, ::: fences.
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3

# The notebooks: rendered from their stored outputs, never executed here.
nb_execution_mode = "off"
nb_merge_streams = True


def _copy_notebooks() -> None:
    """Copy ``notebooks/NN_*.ipynb`` to ``docs/notebooks/``; unchanged copies stay."""
    source, target = ROOT / "notebooks", DOCS / "notebooks"
    target.mkdir(exist_ok=True)
    wanted = {p.name: p for p in sorted(source.glob("[0-9][0-9]_*.ipynb"))}
    for stale in target.glob("*.ipynb"):
        if stale.name not in wanted:
            stale.unlink()
    for name, path in wanted.items():
        copy = target / name
        if not copy.exists() or not filecmp.cmp(path, copy, shallow=False):
            shutil.copyfile(path, copy)


_copy_notebooks()

# Math with no network: MathJax 3 from _static/mathjax (see the module docstring).
mathjax_path = "mathjax/tex-chtml-full.js"

# autodoc + numpydoc: documented in source order, signatures with type hints.
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
# numpydoc loads autosummary, whose stub generation reads every source file
# (the notebooks too) for ``autosummary`` directives; these pages have none.
autosummary_generate = False

# -- HTML --------------------------------------------------------------------

html_theme = "sphinx_book_theme"  # a book: chapters on the left, sections on the right
html_title = f"scratchnet {release}"
html_static_path = ["_static"]
html_theme_options = {
    "home_page_in_toc": True,
    "show_toc_level": 2,
    "show_navbar_depth": 1,
    "use_download_button": False,
    "use_fullscreen_button": False,
    "navigation_with_keys": False,
}
html_show_sourcelink = False
# The highlighted source of each module (``_modules/``, from viewcode) is one
# click from its API entry and one back ("[docs]"): those pages show the code
# and the search field without the chapters' navigation, which the theme
# rebuilds for every page from the whole table of contents (over a hundred
# source pages: about a third of the build's time).
html_sidebars = {
    "_modules/**": ["navbar-logo.html", "icon-links.html", "search-button-field.html"],
}


# -- Local extensions --------------------------------------------------------


class OptionalFigure(Figure):
    """``figure`` that degrades to a note when the image file does not exist.

    The path is resolved like Sphinx resolves image paths: relative to the
    document, or to the source directory when it starts with ``/``.
    """

    def run(self) -> list[nodes.Node]:
        env = self.state.document.settings.env
        _, filename = env.relfn2path(self.arguments[0], env.docname)
        if Path(filename).is_file():
            return super().run()
        name = Path(filename).name
        note = nodes.note()
        note += nodes.paragraph(
            "",
            "",
            nodes.Text("Figure "),
            nodes.literal(text=name),
            nodes.Text(
                " has not been generated yet: run python -m scratchnet and copy "
                "scratchnet-results/"
            ),
            nodes.literal(text=name),
            nodes.Text(" to docs/_static/experiments/."),
        )
        return [note]


def _resolve_short_name(
    app: Any, env: Any, node: Any, contnode: nodes.Node
) -> nodes.Node | None:
    """Link ``scratchnet.<name>[.<attr>]`` to where ``<name>`` is documented."""
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "")
    parts = target.split(".")
    if len(parts) < 2 or parts[0] != "scratchnet":
        return None
    obj = vars(scratchnet).get(parts[1])  # no lazy import of plotting here
    module = getattr(obj, "__module__", None)
    if module is None or not callable(obj):
        return None
    canonical = ".".join([module, obj.__qualname__, *parts[2:]])
    if canonical == target:
        return None
    domain = env.get_domain("py")
    return domain.resolve_xref(
        env, node["refdoc"], app.builder, node["reftype"], canonical, node, contnode
    )


def _reexported_constant_doc(
    app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]
) -> None:
    """Document ``package.NAME`` with the ``#:`` comment of the module defining it."""
    package_name, _, attr = name.rpartition(".")
    package = sys.modules.get(package_name)
    if what != "data" or not hasattr(package, "__path__"):
        return
    for module_name, module in list(sys.modules.items()):
        if module_name.startswith(f"{package_name}.") and (
            getattr(module, attr, None) is obj
        ):
            try:
                comment = ModuleAnalyzer.for_module(module_name).find_attr_docs()
            except PycodeError:  # no source to read
                continue
            if ("", attr) in comment:
                lines[:] = list(comment["", attr])
                return


def setup(app: Any) -> dict[str, Any]:
    app.add_directive("optional-figure", OptionalFigure)
    app.connect("missing-reference", _resolve_short_name)
    app.connect("autodoc-process-docstring", _reexported_constant_doc)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
