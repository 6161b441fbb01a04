"""Run by every notebook kernel of the tests (``PYTHONSTARTUP``, which the root
``conftest.py`` sets): a figure a cell shows is drawn but gives no image.

nbval compares a fresh run's text outputs with the stored ones, never the images.
The inline backend's image formatter draws each figure shown once more (a layout
pass for ``bbox_inches="tight"``, then the pixels), encodes a PNG and sends it:
here it calls ``Figure.draw_without_rendering`` instead, which still draws every
artist, lays out every text and parses every formula, so a figure that cannot be
drawn still fails its cell (matplotlib's own redraw after each cell renders the
figures left open, as before).  Over the nine notebooks, 136 s of CPU became
122 s.  The figure's ``text/plain`` output (``<Figure size 1000x400 with 2
Axes>``) is unchanged; ``tests/test_notebooks.py`` checks both in a kernel.
Only the tests' kernels read this file: a notebook opened in Jupyter shows its
figures.
"""


def _install() -> None:
    """IPython's ``print_figure``, which the inline backend's image formatter calls,
    replaced by a draw that returns no image (a formatter's ``None``: no output)."""
    import IPython.core.pylabtools

    def drawn_not_rendered(fig, *args, **kwargs):
        fig.draw_without_rendering()

    IPython.core.pylabtools.print_figure = drawn_not_rendered


_install()
del _install   # nothing of this file is left in the notebook's namespace
