"""The grading processes are forks of one clean server (``scratchnet.exercises.forkserver``).

Each test starts gradings of ``tests/_forked_job.py``, which answers with what its
process is: its pid, parent, session, folder, open descriptors and what earlier
gradings left in it.  A grading is a fresh fork with the caller's pipes as its only
streams, its own session and its own folder; it is stopped at its time limit and
the server goes on; a server killed is replaced; gradings from several threads each
get their own answer; another environment starts another server (but not pytest's
name of the running test); with ``SCRATCHNET_FORKSERVER=0`` each grading starts an
interpreter of its own.
"""

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from scratchnet.exercises import forkserver

pytestmark = pytest.mark.skipif(not hasattr(os, "pidfd_open"),
                                reason="the server needs os.pidfd_open (Linux)")

TESTS = Path(__file__).resolve().parent
PATH = [str(TESTS), str(TESTS.parent), *filter(os.path.isabs, sys.path)]


@pytest.fixture(autouse=True)
def _server_on(monkeypatch):
    """The server whatever the environment of the run says."""
    monkeypatch.delenv("SCRATCHNET_FORKSERVER", raising=False)


def _grade(folder, timeout=60, **request):
    grading = forkserver.start(PATH, "_forked_job", "main", str(folder))
    out, err = grading.communicate(json.dumps(request).encode(), timeout=timeout)
    return grading, json.loads(out), err.decode()


def test_each_grading_is_a_fresh_fork_of_one_server(tmp_path):
    big = "x" * 300_000   # more than a pipe holds, both ways
    first, one, err = _grade(tmp_path, remember="first", exit=3, echo=big)
    (tmp_path / "other").mkdir()
    second, two, _ = _grade(tmp_path / "other", remember="second")
    assert isinstance(first, forkserver.Forked)
    assert (first.returncode, second.returncode) == (3, 0)
    assert err == "a line on stderr\n" and one["echo"] == big
    assert one["ppid"] == two["ppid"] != os.getpid()   # one server, two forks
    assert one["pid"] != two["pid"] and first.pid == one["pid"]
    assert one["sid"] == one["pid"] and two["sid"] == two["pid"]   # sessions of their own
    assert (one["cwd"], two["cwd"]) == (str(tmp_path), str(tmp_path / "other"))
    assert one["remembered"] == ["first"] and two["remembered"] == ["second"]
    assert one["fds"] == [0, 1, 2, 3] and one["argv"] == []   # 3: the listing's own


def test_a_grading_past_its_time_is_stopped_and_the_server_goes_on(tmp_path):
    grading = forkserver.start(PATH, "_forked_job", "main", str(tmp_path))
    with pytest.raises(subprocess.TimeoutExpired):
        grading.communicate(json.dumps({"sleep": 60}).encode(), timeout=1)
    os.killpg(grading.pid, signal.SIGKILL)
    grading.communicate()
    assert grading.returncode == -signal.SIGKILL
    after, answer, _ = _grade(tmp_path)
    assert after.returncode == 0 and answer["pid"] != grading.pid


def test_a_server_that_was_killed_is_replaced(tmp_path):
    _, before, _ = _grade(tmp_path)
    assert before["ppid"] != os.getpid()   # the server, not this process
    os.kill(before["ppid"], signal.SIGKILL)
    grading, after, _ = _grade(tmp_path)
    assert grading.returncode == 0 and after["ppid"] not in (before["ppid"], os.getpid())


def test_gradings_from_threads_each_get_their_own_answer(tmp_path):
    answers = {}

    def one(n):
        answers[n] = _grade(tmp_path, echo=n, sleep=0.2)[1]

    threads = [threading.Thread(target=one, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert {n: a["echo"] for n, a in answers.items()} == {n: n for n in range(4)}
    assert len({a["pid"] for a in answers.values()}) == 4


def test_without_the_server_each_grading_is_an_interpreter_of_its_own(tmp_path,
                                                                      monkeypatch):
    monkeypatch.setenv("SCRATCHNET_FORKSERVER", "0")
    grading, answer, err = _grade(tmp_path, exit=4)
    assert isinstance(grading, subprocess.Popen)
    assert grading.returncode == 4 and answer["ppid"] == os.getpid()
    assert answer["cwd"] == str(tmp_path) and err == "a line on stderr\n"


def test_a_new_environment_starts_a_new_server_but_not_the_tests_name(tmp_path,
                                                                      monkeypatch):
    _, before, _ = _grade(tmp_path)
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "another test (call)")
    _, same, _ = _grade(tmp_path)
    monkeypatch.setenv("SCRATCHNET_SOMETHING", "1")
    _, other, _ = _grade(tmp_path)
    assert same["ppid"] == before["ppid"] != other["ppid"]
