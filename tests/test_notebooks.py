"""Every notebook runs top to bottom, and its stored outputs carry no errors."""

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
