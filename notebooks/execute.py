"""Re-execute the notebooks in place so their stored outputs match the code.

Run after changing the library or a notebook::

    python notebooks/execute.py            # every notebook
    python notebooks/execute.py 03*.ipynb  # some of them
    python notebooks/execute.py --twins    # only rewrite the Markdown twins

Each notebook runs top to bottom in a fresh kernel; its outputs (figures
included) are written back into the file, and the run time is printed.  A
notebook that raises stops the script with the error, and the file is left as
it was.  Then its twin ``notebooks/md/<name>.md``, the same cells in MyST
Markdown without outputs (written with jupytext), is rewritten, so that a
change to a notebook can be reviewed as a text diff.
``tests/test_notebooks.py`` checks that the stored outputs carry no errors,
that every notebook still runs and that the twins say what the notebooks say.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent
TWINS = HERE / "md"


def write_twin(path: Path) -> Path:
    """Write the MyST Markdown twin of the notebook at ``path``; return its path."""
    import jupytext  # in the notebooks and test extras

    nb = jupytext.read(path)
    TWINS.mkdir(exist_ok=True)
    twin = TWINS / f"{path.stem}.md"
    jupytext.write(nb, twin, fmt="md:myst")
    return twin


def execute(path: Path, timeout: int = 300) -> float:
    """Execute the notebook at ``path`` in place and return the seconds it took."""
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        record_timing=False,
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    seconds = time.perf_counter() - start
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = _merge_streams(cell.outputs)
    nbformat.write(nb, path)
    return seconds


def _merge_streams(outputs: list) -> list:
    """Join consecutive prints to one stream, so re-runs store the same JSON."""
    merged: list = []
    for out in outputs:
        prev = merged[-1] if merged else None
        if (
            out.get("output_type") == "stream"
            and prev is not None
            and prev.get("output_type") == "stream"
            and prev.get("name") == out.get("name")
        ):
            prev["text"] += out["text"]
        else:
            merged.append(out)
    return merged


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--twins",
        action="store_true",
        help="only rewrite the Markdown twins, without executing",
    )
    parser.add_argument(
        "patterns",
        nargs="*",
        default=["[0-9]*.ipynb"],
        help="glob patterns inside notebooks/ (default: all)",
    )
    args = parser.parse_args(argv)
    paths = sorted({p for pattern in args.patterns for p in HERE.glob(pattern)})
    if not paths:
        print("no notebook matches", args.patterns, file=sys.stderr)
        return 1
    for path in paths:
        if not args.twins:
            print(f"{path.name}: ", end="", flush=True)
            print(f"{execute(path):.1f} s")
        print(f"  twin: {write_twin(path).relative_to(HERE.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
