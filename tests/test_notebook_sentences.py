"""Sentences of the notebooks and the docs that quote numbers, compared with the
notebooks' stored outputs (which nbval keeps equal to what the code prints) and with
each other: a sentence that outlives its number fails here."""

import ast
import json
import re
from pathlib import Path

from _support import NOTEBOOK_DIR, notebook_cell, output_text

ROOT = Path(__file__).resolve().parents[1]


def _markdown(notebook: str) -> str:
    cells = json.loads((NOTEBOOK_DIR / f"{notebook}.ipynb").read_text())["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


def test_03_the_sampled_bayes_loss_and_accuracy_are_within_the_quoted_standard_errors():
    """Section 7 says the columns agree to within 3.1 SE, sparse-tail being the
    three-SE draw (loss above, accuracy below) and the others within 1.6 SE."""
    text = " ".join(_markdown("03_bayes_posterior_gaussians").split())
    quoted = re.search(r"agree to within (\d+\.\d) standard errors", text)
    others = re.search(r"other tasks stay within (\d+\.\d) SE", text)
    assert quoted and others and "sparse-tail's sample is a three-SE draw" in text
    printed = output_text(notebook_cell("03_bayes_posterior_gaussians",
                                        "z_loss = ").outputs)
    rows = {}
    for line in printed.strip().splitlines():
        name = line.split()[0]
        z = [float(v) for v in re.findall(r"\(([-+]\d+\.\d) SE\)", line)]
        assert len(z) == 2, line
        # the printed z is the printed numbers' gap over their standard error
        means = [float(v) for v in re.findall(r"sampled (\d\.\d+)", line)]
        ses = [float(v) for v in re.findall(r"\+- (\d\.\d+)", line)]
        exact = [float(v) for v in re.findall(r"exact (\d\.\d+)", line)]
        for zi, m, s, e in zip(z, means, ses, exact):
            # (each printed to 4 decimals: the gap to 1e-4, the SE to 5e-5)
            assert abs(zi - (m - e) / s) <= (1e-4 + 5e-5 * abs(zi)) / s + 0.05, line
        rows[name] = z
    assert set(rows) == {"separated", "unequal-variance", "sparse-tail"}
    largest = max(abs(v) for z in rows.values() for v in z)
    assert largest == float(quoted.group(1))
    assert max(abs(v) for v in rows["sparse-tail"]) == largest
    assert round(min(abs(v) for v in rows["sparse-tail"])) == 3   # both three-SE
    assert rows["sparse-tail"][0] > 0 > rows["sparse-tail"][1]   # loss above, acc below
    assert max(abs(v) for name, z in rows.items() if name != "sparse-tail"
               for v in z) <= float(others.group(1))


def _grading_time(text: str) -> tuple:
    found = re.findall(r"all 17 exercises is graded in (\d+\.\d) to (\d+\.\d) s",
                       " ".join(text.split()))
    assert len(found) == 1, found
    return found[0]


def test_one_grading_time_from_the_benchmark_in_the_docs_and_notebook_07():
    """docs/teaching.md and notebook 07 quote the same range, and name the benchmark
    that measures it; notebook 07 prints no time of its own."""
    teaching = (ROOT / "docs" / "teaching.md").read_text()
    notebook = _markdown("07_homework_exercises")
    assert _grading_time(teaching) == _grading_time(notebook)
    for text in (teaching, notebook):
        assert "benchmarks/bench_grading.py" in text
    assert (ROOT / "benchmarks" / "bench_grading.py").exists()
    fixed = notebook_cell("07_homework_exercises", "the fix")
    assert re.fullmatch(r"\d+/\d+ points\n", output_text(fixed.outputs))


def test_07_starter_cells_hold_stubs_and_the_solutions_come_after_a_marked_heading():
    import nbformat

    cells = nbformat.read(NOTEBOOK_DIR / "07_homework_exercises.ipynb", as_version=4).cells
    sources = [c.source for c in cells]
    heading = next(i for i, s in enumerate(sources)
                   if s.startswith("## Solutions (read after trying)"))
    part2 = next(i for i, s in enumerate(sources) if s.startswith("## Part 2"))
    starters = [s for s in sources[part2:heading] if "raise NotImplementedError(" in s
                and not s.startswith("def run_check")]
    assert len(starters) == 6   # one starter cell per problem, (a) to (f)
    for s in sources[part2:heading]:
        assert "BEGIN SOLUTION" not in s and "_solution" not in s
    for s in starters:   # every function a docstring and a raise, nothing else
        for node in ast.parse(s).body:
            if isinstance(node, ast.FunctionDef):
                assert [type(n) for n in node.body] == [ast.Expr, ast.Raise], s
    checks = [s for s in sources[part2:heading] if "run_check(" in s
              and not s.startswith("def run_check")]
    assert len(checks) == 6
    outputs = [output_text(c.get("outputs", [])) for c in cells[part2:heading]
               if "run_check(" in c.source]
    assert sum("not written yet" in o for o in outputs) == 6
    solved = [output_text(c.outputs) for c in cells[heading:] if c.cell_type == "code"]
    assert [label for label in "abcdef"
            if any(f"({label}) passed" in o for o in solved)] == list("abcdef")
    assert not any("not written yet" in o for o in solved)
