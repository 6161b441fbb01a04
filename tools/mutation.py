"""Mutation testing of scratchnet's core modules with mutmut (not run in CI).

A test suite is only as good as the bugs it can catch.  Mutation testing
makes small bugs on purpose (``>`` for ``>=``, ``+`` for ``-``, a changed
constant, a dropped argument), one at a time, and runs the tests against each
*mutant*: a mutant the tests fail on is *killed*, one they pass on *survives*.
A survivor is either a real gap in the tests or an *equivalent* mutant (one that
computes the same thing, like ``check_nan=None`` for ``check_nan=False``).

This script copies the working tree into a temporary directory (the checkout is
never touched), adds a ``[mutmut]`` section to the copy's ``setup.cfg``, runs
``mutmut run`` there and writes a report: the counts, the score, and the diff of
every survivor, to be read and classified by hand.

Usage::

    python -m pip install mutmut
    python tools/mutation.py                        # the core modules
    python tools/mutation.py --modules softmax losses --jobs 2
    python tools/mutation.py --report mutation-report.md

It takes about a second per mutant per core on the networks' test files.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: The core modules and the test files that exercise them.  mutmut first runs
#: the whole selection once to learn which tests reach which function, then runs
#: only those tests against each mutant.
CORE = {
    "softmax": ["test_softmax.py"],
    "_loss_common": ["test_losses.py", "test_functional.py"],
    "losses": ["test_losses.py", "test_functional.py"],
    "functional": ["test_functional.py", "test_losses.py"],
    "scoring": ["test_scoring.py"],
    "information": ["test_information.py"],
    "units": ["test_units.py"],
    "layers": ["test_layers.py"],
    "optim": ["test_optim.py"],
    "gaussian": ["test_gaussian.py"],
    "two_gaussians": ["test_gaussian.py"],
    "_mixture": ["test_gaussian.py"],
    "bayes": ["test_bayes.py"],
    "readouts": ["test_readouts.py", "test_readouts_undo_options.py",
                 "test_fast_readout.py"],
    "temperature": ["test_digits.py", "test_argument_kinds.py", "test_real_honest.py"],
}
#: What the tests read besides the package and the tests themselves, copied with
#: them into the directory where mutmut runs them: the configuration, the
#: examples, the notebooks and the docs some tests compare with, ``.gitignore``.
ALSO_COPY = ["conftest.py", "setup.cfg", "pyproject.toml", ".gitignore", "README.md",
             "benchmarks", "docs", "examples", "notebooks", "scripts", "tools"]
#: Test files that check many modules at once (included when present).
SHARED_TESTS = ["test_extremes.py", "test_parity_scipy.py", "test_parity_torch.py",
                "test_bad_inputs.py", "test_mutation_gaps.py"]


def _copy_tree(dest: Path) -> None:
    """Copy the tracked and untracked-but-not-ignored files of the checkout."""
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, check=True,
        capture_output=True, text=True).stdout.split()
    for name in files:
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)


def _config(modules: list[str]) -> str:
    tests = sorted({t for m in modules for t in CORE[m]}
                   | {t for t in SHARED_TESTS if (ROOT / "tests" / t).exists()})
    lines = ["", "[mutmut]", "source_paths = scratchnet", "also_copy ="]
    lines += [f"    {name}" for name in ALSO_COPY if (ROOT / name).exists()]
    lines += ["only_mutate ="]
    lines += [f"    scratchnet/{m}.py" for m in modules]
    lines += ["pytest_add_cli_args_test_selection ="]
    lines += [f"    tests/{t}" for t in tests]
    lines += ["pytest_add_cli_args = -p no:cacheprovider -q -x", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--modules", nargs="+", choices=sorted(CORE),
                        default=list(CORE),
                        help="core modules to mutate (default: all of them)")
    parser.add_argument("--jobs", type=int, default=1, help="mutants run at once")
    parser.add_argument("--report", type=Path, default=Path("mutation-report.md"),
                        help="where to write the counts and the survivors' diffs")
    parser.add_argument("--keep", action="store_true",
                        help="keep the temporary copy (its path is printed)")
    args = parser.parse_args(argv)
    if shutil.which("mutmut") is None:
        parser.exit(2, "mutation: mutmut is not installed "
                    "(python -m pip install mutmut)\n")

    work = Path(tempfile.mkdtemp(prefix="scratchnet-mutation-"))
    try:
        _copy_tree(work)
        cfg = work / "setup.cfg"
        # mutmut runs pytest in its own process, one mutant at a time: not on
        # pytest-xdist's workers, which the test command's addopts start
        cfg.write_text(re.sub(r"-n \S+ --dist \S+ ", "", cfg.read_text())
                       + _config(args.modules))
        print(f"mutation: mutating {', '.join(args.modules)} in {work}", flush=True)
        run = subprocess.run(["mutmut", "run", "--max-children", str(args.jobs)],
                             cwd=work, check=False)
        if run.returncode != 0:
            print(f"mutation: mutmut run failed (exit status {run.returncode}); "
                  "no score", file=sys.stderr)
            return 1
        subprocess.run(["mutmut", "export-cicd-stats"], cwd=work, check=True,
                       capture_output=True)
        stats = json.loads((work / "mutants" / "mutmut-cicd-stats.json").read_text())
        results = subprocess.run(["mutmut", "results"], cwd=work, check=True,
                                 capture_output=True, text=True).stdout
        survivors = [line.split(":")[0].strip() for line in results.splitlines()
                     if line.strip().endswith(": survived")]
        tested = stats["killed"] + stats["survived"] + stats["timeout"]
        if tested == 0:
            print("mutation: no mutant was tested; no score", file=sys.stderr)
            return 1
        score = (stats["killed"] + stats["timeout"]) / max(tested, 1)
        out = [f"# Mutation testing: {', '.join(args.modules)}", "",
               f"killed {stats['killed']}, timed out {stats['timeout']}, "
               f"survived {stats['survived']}, no tests {stats['no_tests']}, "
               f"of {stats['total']}: score {score:.1%} before removing equivalent "
               "mutants", ""]
        for name in survivors:
            diff = subprocess.run(["mutmut", "show", name], cwd=work, check=False,
                                  capture_output=True, text=True).stdout
            changed = [d for d in diff.splitlines()
                       if d[:1] in "+-" and d[:3] not in ("+++", "---")]
            out += [f"## {name}", "", "```diff", *changed, "```", ""]
        args.report.write_text("\n".join(out))
        print(out[2])
        print(f"mutation: {len(survivors)} survivors written to {args.report}")
    finally:
        if args.keep:
            print(f"mutation: kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
