"""Every notebook runs top to bottom, its stored outputs carry no errors, and its
MyST Markdown twin in ``notebooks/md/`` has the same cells."""

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = sorted(
    (Path(__file__).resolve().parents[1] / "notebooks").glob("[0-9]*.ipynb")
)


def test_there_are_notebooks():
    assert len(NOTEBOOKS) >= 7


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_stored_outputs_are_clean(path):
    """The stored notebook was executed in full and shows no error."""
    nb = nbformat.read(path, as_version=4)
    code_cells = [c for c in nb.cells if c.cell_type == "code" and c.source.strip()]
    assert code_cells, "a notebook without code"
    for i, cell in enumerate(code_cells):
        assert cell.get("execution_count") is not None, f"code cell {i} was not run"
        for out in cell.get("outputs", []):
            assert out.get("output_type") != "error", f"code cell {i} stored an error"
            assert out.get("name") != "stderr" or "Warning" not in out.get(
                "text", ""
            ), f"code cell {i} stored a warning: {out.get('text')}"
    counts = [c.execution_count for c in code_cells]
    assert counts == sorted(counts), "cells were run out of order"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_executes(path):
    """Re-executing in a fresh kernel raises nothing (run time: notebooks/execute.py)."""
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(
        nb,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_markdown_twin_is_in_sync(path):
    """``notebooks/md/<name>.md`` has the notebook's cells, in order, word for word.

    Refresh the twins with ``python notebooks/execute.py --twins``.
    """
    jupytext = pytest.importorskip("jupytext")
    twin = path.parent / "md" / f"{path.stem}.md"
    assert twin.is_file(), f"no twin {twin.name}: run notebooks/execute.py --twins"

    def cells(nb):  # trailing blank lines are not kept by the Markdown form
        return [(c.cell_type, c.source.rstrip()) for c in nb.cells]

    notebook = nbformat.read(path, as_version=4)
    assert cells(jupytext.read(twin)) == cells(notebook), (
        f"{twin.name} is out of sync with {path.name}: "
        "run python notebooks/execute.py --twins"
    )
