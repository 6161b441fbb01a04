"""Re-execute the notebooks in place so their stored outputs are what the code prints.

Run from anywhere, after changing the library or a notebook::

    python scripts/execute_notebooks.py            # every notebook
    python scripts/execute_notebooks.py 03 05      # some of them (name prefixes)
    python scripts/execute_notebooks.py --twins    # only rewrite the Markdown twins

Each notebook runs top to bottom in a fresh kernel started with *this* Python
(the interpreter running the script, whatever kernels Jupyter has installed),
with the checkout's root first on ``PYTHONPATH``, so the kernel imports this
checkout's ``scratchnet``, and one BLAS thread, as the tests do
(``conftest.py``).  Its outputs (figures included) are written back into the
file, consecutive prints merged into one output, and the run time is printed.
A notebook that raises, or prints a warning, is left as it was; the others are
still run, and the script exits with status 1 naming it.

Then the notebook's twin ``docs/notebook-twins/<name>.md``, the same cells in
MyST Markdown without outputs (written with jupytext), is rewritten, so that a
change to a notebook can be reviewed as a text diff.  The twins live outside
``notebooks/`` so that JupyterLab opened there lists only the notebooks.

``python -m pytest notebooks`` (nbval, configured in ``setup.cfg``) then runs
every notebook again and compares each cell's text outputs with the stored
ones, times and memory addresses masked by ``tests/nbval_sanitize.cfg``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import nbformat
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
TWINS = ROOT / "docs" / "notebook-twins"


class _ThisPython(KernelSpecManager):
    """Kernel specs whose ``python3`` is an IPython kernel on this interpreter."""

    def get_kernel_spec(self, kernel_name):
        import ipykernel.kernelspec

        return self.kernel_spec_class(
            resource_dir=ipykernel.kernelspec.RESOURCES,
            **ipykernel.kernelspec.get_kernel_dict(),
        )


def write_twin(path: Path) -> Path:
    """Write the MyST Markdown twin of the notebook at ``path``; return its path."""
    import jupytext  # in the notebooks and test extras

    nb = jupytext.read(path)
    TWINS.mkdir(exist_ok=True)
    twin = TWINS / f"{path.stem}.md"
    jupytext.write(nb, twin, fmt="md:myst")
    return twin


def execute(path: Path, timeout: int = 600) -> float:
    """Execute the notebook at ``path``, write it in place and return the seconds.

    Raises ``CellExecutionError`` (the file untouched) when a cell raises, and
    ``RuntimeError`` when a cell prints a warning to stderr.
    """
    nb = nbformat.read(path, as_version=4)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p
        ),
    }
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(var, "1")  # as conftest.py sets them for the test run
    km = KernelManager(kernel_name="python3", kernel_spec_manager=_ThisPython())
    start = time.perf_counter()
    client = NotebookClient(
        nb,
        km=km,
        timeout=timeout,
        record_timing=False,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute(env=env, cwd=str(path.parent))
    seconds = time.perf_counter() - start
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        cell.outputs = _merge_streams(cell.outputs)
        for out in cell.outputs:
            if out.get("name") == "stderr" and "Warning" in out.get("text", ""):
                raise RuntimeError(f"cell {i} printed a warning:\n{out['text']}")
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
        "names",
        nargs="*",
        help="notebook name prefixes, such as 03 or 05_network (default: all)",
    )
    args = parser.parse_args(argv)
    paths = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    if args.names:
        paths = [p for p in paths if any(p.name.startswith(n) for n in args.names)]
    if not paths:
        print("no notebook matches", args.names, file=sys.stderr)
        return 1
    failed = []
    for path in paths:
        if not args.twins:
            print(f"{path.name}: ", end="", flush=True)
            try:
                print(f"{execute(path):.1f} s", flush=True)
            except (CellExecutionError, RuntimeError) as error:
                print(f"FAILED, left as it was\n{error}", flush=True)
                failed.append(path.name)
                continue
        print(f"  twin: {write_twin(path).relative_to(ROOT)}")
    if failed:
        print("failed:", ", ".join(failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
