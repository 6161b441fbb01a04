"""The documentation site, built once per test process for the tests that read it.

``tests/test_docs.py`` checks the HTML and ``tests/test_site.py`` opens it in a
browser; both call :func:`built_site`, so a run of the suite builds the site
once, with the command of the README (warnings are errors).
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


@functools.cache
def built_site() -> Path:
    """Build ``docs/`` with ``python -m sphinx -W -b html`` and return the HTML folder."""
    out = Path(tempfile.mkdtemp(prefix="scratchnet-docs-"))
    atexit.register(shutil.rmtree, out, ignore_errors=True)
    html = out / "html"
    cmd = [sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", str(DOCS), str(html)]
    env = {**os.environ, "MPLBACKEND": "Agg"}
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        pytest.fail(
            f"the docs build failed (exit code {proc.returncode}):\n"
            f"{proc.stdout}\n{proc.stderr}",
            pytrace=False,
        )
    return html
