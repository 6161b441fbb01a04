"""Issue 30: a grader running as root runs the student's code as nobody.

A submission reads its effective uid (``/proc/self/status``, through
``open``, which the import policy allows) and tries to write where root may
write; its ``relu_backward`` is right only when it ran unprivileged and
wrote nothing, so the grader's verdict says what happened in the child.
The tests that need the child to run as nobody skip where this Python is
one nobody cannot run (a virtual environment inside a folder only root may
enter): there the grader falls back to root, which the last test checks.
"""

import os
import shutil
import stat
import sys
import tempfile
from pathlib import Path

import pytest
from _minimal_submission import write

import scratchnet
from scratchnet.exercises import check
from scratchnet.exercises.assignment import write_assignment
from scratchnet.exercises.privileges import isolate, stage

RELU = "return dout * (cache > 0)"
EUID = ("import numpy as np\n"
        "EUID = [int(line.split()[2]) for line in open('/proc/self/status')\n"
        "        if line.startswith('Uid:')][0]\n")

needs_root = pytest.mark.skipif(
    not sys.platform.startswith("linux") or os.geteuid() != 0,
    reason="privileges are dropped only by a grader running as root on Linux")


def _nobody_can_run_the_child(tmp_path):
    folder = tmp_path / "probe"
    folder.mkdir()
    copy, account, notes = isolate(folder)
    if copy != folder:
        shutil.rmtree(copy.parent)
    if account is None:
        pytest.skip(f"this Python cannot run as nobody here: {notes[0]}")


def _grade(tmp_path, top, body):
    hw = write(tmp_path / "hw", {"layers": [("import numpy as np", top)]})
    (hw / "layers.py").write_text((hw / "layers.py").read_text().replace(RELU, body))
    path = tmp_path / "assignment.json"
    write_assignment(["relu_backward"], path)
    report = check(hw, assignment=path)
    return report, report.results[0]


@needs_root
def test_the_students_code_runs_as_a_user_other_than_root(tmp_path):
    _nobody_can_run_the_child(tmp_path)
    report, relu = _grade(tmp_path, EUID, f"if EUID == 0:\n        return 0 * dout\n"
                                          f"    {RELU}")
    assert relu["points"] == 5, report.text()
    assert report.notes == []


@needs_root
def test_the_students_code_cannot_write_into_scratchnet_or_roots_files(tmp_path):
    _nobody_can_run_the_child(tmp_path)
    package = Path(scratchnet.__file__).parent / "written_by_a_submission.txt"
    folder = Path(tempfile.mkdtemp())
    roots = folder / "roots.txt"
    try:
        os.chmod(folder, 0o755)
        roots.write_text("root's\n")
        os.chmod(roots, 0o644)
        report, relu = _grade(tmp_path, (
            "import numpy as np\nWROTE = []\n"
            f"for path, how in [({str(package)!r}, 'w'), ({str(roots)!r}, 'a')]:\n"
            "    try:\n"
            "        open(path, how).write('written by a submission')\n"
            "        WROTE.append(path)\n"
            "    except OSError:\n"
            "        pass\n"), f"if WROTE:\n        return 0 * dout\n    {RELU}")
        assert not package.exists()
        assert roots.read_text() == "root's\n"
        assert relu["points"] == 5, report.text()
    finally:
        package.unlink(missing_ok=True)
        roots.unlink()
        folder.rmdir()


@needs_root
def test_when_nobody_cannot_run_the_child_it_runs_as_root_and_the_report_says_so(
        tmp_path, monkeypatch):
    monkeypatch.setenv("SCRATCHNET_GRADER_PROBE", "fail")   # the probe fails
    report, relu = _grade(tmp_path, EUID, f"if EUID != 0:\n        return 0 * dout\n"
                                          f"    {RELU}")
    assert relu["points"] == 5, report.text()   # the child ran as root
    assert len(report.notes) == 1
    assert report.notes[0].startswith("the child ran as root: nobody could not read ")
    assert report.notes[0] not in report.text()   # the student's: the same anywhere
    assert report.notes[0] in report.gradescope()["output"]


def test_the_copy_is_readable_by_all_and_never_changes_a_links_target(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("only root")
    secret.chmod(0o600)
    hw = tmp_path / "hw"
    (hw / "sub").mkdir(parents=True)
    (hw / "layers.py").write_text("x = 1\n")
    (hw / "layers.py").chmod(0o600)
    (hw / "sub" / "more.py").write_text("y = 2\n")
    (hw / "__pycache__").mkdir()
    (hw / "link.py").symlink_to(secret)
    os.mkfifo(hw / "fifo")   # copying a FIFO would wait for a writer
    copy = stage(hw)
    try:
        assert stat.S_IMODE(copy.parent.stat().st_mode) == 0o755
        assert stat.S_IMODE(copy.stat().st_mode) == 0o755
        assert stat.S_IMODE((copy / "sub").stat().st_mode) == 0o755
        assert stat.S_IMODE((copy / "layers.py").stat().st_mode) == 0o644
        assert (copy / "sub" / "more.py").read_text() == "y = 2\n"
        assert (copy / "link.py").is_symlink()
        assert stat.S_IMODE(secret.stat().st_mode) == 0o600
        assert not (copy / "__pycache__").exists() and not (copy / "fifo").exists()
    finally:
        shutil.rmtree(copy.parent)   # removes the link, never its target
