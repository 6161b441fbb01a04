"""The README is a front door: short, the reading order early, one order everywhere.

Issue 39: the README was 568 lines with its reading order at line 140, and
``scratchnet/__init__.py`` gave a second order that differed.  The numbers it
carried live in ``docs/experiments.md`` and ``docs/performance.md``.
"""

import re
from pathlib import Path

import scratchnet

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _modules_in_order(text: str) -> list:
    """The module names of a table, in order (``a``, ``b`` in one cell count both)."""
    names = []
    for line in text.splitlines():
        cell = line.split("|")[1] if line.startswith("|") else line[:21]
        names += re.findall(r"`{1,2}(\w+)`{1,2}", cell)
    return names


def test_the_readme_is_at_most_250_lines_with_the_reading_order_in_its_first_80():
    lines = README.splitlines()
    assert len(lines) <= 250, len(lines)
    heading = lines.index("## Reading order")
    assert heading < 80
    table_start = next(i for i in range(heading, len(lines)) if lines[i].startswith("|"))
    assert table_start < 80


def test_the_readme_and_the_package_docstring_give_one_reading_order():
    section = README.split("## Reading order", 1)[1].split("\n## ", 1)[0]
    readme = [n for n in _modules_in_order(section) if n != "module"]
    table = scratchnet.__doc__.split("=====", 2)[2].split("=====\n\nExamples")[0]
    package = _modules_in_order(table)
    assert readme == package


def test_the_pages_the_readme_links_exist():
    for target in re.findall(r"\]\((docs/[^)#]+)\)", README):
        assert (ROOT / target).exists(), target
