"""Issue 37: a grader with nothing to steal.  Each attack is a real malicious submission.

Every attack family is graded under the isolation path the grader takes here:
bubblewrap where it is installed, else (as root) the dedicated uid, or the one
``SCRATCHNET_SANDBOX`` names (``bubblewrap`` or ``uid``); a path that cannot run
here is skipped with the reason.  ``.ci/run`` runs this file again with
``SCRATCHNET_SANDBOX=uid`` after the test command, so CI grades every attack
under both.  The measure of an attack is the one the issue sets: no submission
scores more on an exercise than a submission that returns zeros, unless its
own functions compute the answers.  The child's own view (its environment,
its files, its processes) is read back through the one channel a submission
has, the message of an exception it raises.
"""

import ast
import csv
import json
import os
import shutil
import sys
import textwrap
import uuid
from pathlib import Path

import pytest
from _minimal_submission import write

from scratchnet.exercises import check, course, sandbox
from scratchnet.exercises.assignment import write_assignment

ROOT = Path(__file__).resolve().parents[1]
KEY = ROOT / "scratchnet" / "exercises" / "reference_scores.py"
EXERCISES = Path(sandbox.__file__).parent

#: A submission that returns zeros: what an attack must not beat.
ZEROS = {
    "softmax": """
        import numpy as np

        def logsumexp(x):
            return np.zeros(np.shape(x)[:-1])

        def softmax(x):
            return np.zeros(np.shape(x))

        def log_softmax(x):
            return np.zeros(np.shape(x))
        """,
    "information": """
        import numpy as np

        def entropy(p):
            return np.zeros(np.shape(p)[:-1])

        def kl_divergence(p, q):
            return np.zeros(np.shape(p)[:-1])
        """,
    "losses": """
        import numpy as np

        def nll_loss(log_probs, targets):
            return 0.0

        def cross_entropy(logits, targets):
            return 0.0

        def cross_entropy_grad(logits, targets):
            return np.zeros(np.shape(logits))
        """,
    "train": """
        def train_step(model, optimizer, x, targets):
            return 0.0
        """,
}


def _available(kind):
    if not sys.platform.startswith("linux"):
        return "not Linux"
    if kind == "uid" and os.geteuid() != 0:
        return "the dedicated-uid path needs root"
    if kind == "bubblewrap" and not shutil.which("bwrap"):
        return "bubblewrap (bwrap) is not installed"
    return sandbox.probe("dedicated uid" if kind == "uid" else kind)


#: the path under test (see the module's docstring)
ISOLATION = (os.environ.get("SCRATCHNET_SANDBOX")
             or ("bubblewrap" if shutil.which("bwrap") else "uid"))


@pytest.fixture(params=[ISOLATION], scope="module")
def isolation(request):
    why = _available(request.param)
    if why:
        pytest.skip(f"{request.param}: {why}")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SCRATCHNET_SANDBOX", request.param)
        yield request.param


def _package(folder, modules):
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "__init__.py").write_text('"""A submission."""\n')
    for name, text in modules.items():
        (folder / f"{name}.py").write_text(textwrap.dedent(text).lstrip())
    return folder


def _grade(folder, ids, **options):
    assignment = Path(folder).parent / f"{Path(folder).name}-assignment.json"
    write_assignment(ids, assignment)
    if options:
        spec = json.loads(assignment.read_text())
        assignment.write_text(json.dumps({**spec, **options}))
    report = check(folder, assignment=assignment)
    return report, {r["id"]: r for r in report.results}


@pytest.fixture(scope="module")
def zeros_package(tmp_path_factory):
    return _package(tmp_path_factory.mktemp("zeros") / "hw", ZEROS)


@pytest.fixture(scope="module")
def zeros(zeros_package):
    """Points per function exercise of the zeros submission.  Graded once, under
    the isolation of the first test that asks: zeros reach for nothing, so what
    they score does not depend on the sandbox."""
    ids = ["logsumexp", "softmax", "log_softmax", "entropy", "kl_divergence",
           "nll_loss", "cross_entropy", "cross_entropy_grad"]
    return {i: r["points"] for i, r in _grade(zeros_package, ids)[1].items()}


@pytest.fixture(scope="module")
def zeros_train_step(zeros_package):
    """The zeros submission's points for ``train_step`` (graded once, as ``zeros``)."""
    return _grade(zeros_package, ["train_step"])[1]["train_step"]["points"]


def _no_better_than_zeros(results, zeros):
    for ex_id, r in results.items():
        assert r["points"] <= zeros[ex_id], (ex_id, r["points"], zeros[ex_id], r)


def _messages(result):
    return " | ".join([result.get("message", "")] + [c["message"]
                                                      for c in result["checks"]])


# --- the shim holds nothing of scratchnet ------------------------------------------

def test_the_shim_and_the_base_classes_import_only_the_standard_library_and_numpy():
    """Every file the sandbox holds of the grader's, read by its imports."""
    for name in sandbox.SHIM_FILES:
        tree = ast.parse((EXERCISES / name).read_text())
        imported = {a.name.split(".")[0] for n in ast.walk(tree)
                    if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module.split(".")[0] for n in ast.walk(tree)
                     if isinstance(n, ast.ImportFrom) and n.level == 0}
        assert imported <= {*sys.stdlib_module_names, "numpy"}, (name, imported)


def test_the_child_holds_no_scratchnet_and_sees_no_instructors_file(isolation, tmp_path,
                                                                    zeros):
    """The child reports what it sees, in the message of what it raises."""
    folder = _package(tmp_path / "hw", {"softmax": f"""
        import json, os, sys
        import numpy as np

        def _readable(path):
            try:
                if os.path.isdir(path):
                    os.listdir(path)
                else:
                    open(path, "rb").close()
                return True
            except OSError:
                return False

        def _fds():
            links = []
            try:
                listed = os.listdir("/proc/self/fd")
            except OSError:   # Landlock: /proc is not there to read
                listed = []
            for fd in listed:
                try:
                    links.append(os.readlink("/proc/self/fd/" + fd))
                except OSError:   # the listing's own descriptor, closed
                    pass
            return links

        def softmax(x):
            seen = {{
                "modules": sorted(n for n, m in sys.modules.items()   # but stand-ins
                                  if n.split(".")[0] == "scratchnet"
                                  and getattr(m, "__file__", "") != "<given>"),
                "key": _readable({str(KEY)!r}),
                "root": _readable({str(ROOT)!r}),
                "assignment": _readable({str(tmp_path / 'hw-assignment.json')!r}),
                "environ": sorted(os.environ),
                "fds": len(_fds()),
                "files": sorted(p for p in _fds() if not p.startswith(
                    ("pipe:", "/dev/null")) and not p.endswith(".log")),
            }}
            raise RuntimeError("SEEN" + json.dumps(seen) + "END")
        """})
    report, results = _grade(folder, ["softmax"])
    text = _messages(results["softmax"])
    assert "END" in text, text
    seen = json.loads(text.split("SEEN", 1)[1].split("END", 1)[0])
    assert seen["modules"] == [], seen["modules"]
    assert not seen["key"] and not seen["root"] and not seen["assignment"], seen
    assert set(seen["environ"]) <= {"PATH", "HOME", "TMPDIR", "LANG", "OMP_NUM_THREADS",
                                    "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "PWD",
                                    "LC_CTYPE"}, seen["environ"]
    # its pipes, /dev/null, its own log: no file of the grader's open
    assert seen["fds"] <= 8 and all("/proc/" in f for f in seen["files"]), seen
    assert report.isolation == {"uid": "dedicated uid"}.get(isolation, isolation)
    assert "isolation: " in report.gradescope()["output"]


def test_the_child_can_write_only_its_own_temporary_folder(isolation, tmp_path, zeros):
    """Nothing writable outside its temporary folder (bubblewrap's own root and
    /dev included: a tmpfs there would hold memory without bound)."""
    folder = _package(tmp_path / "hw", {"softmax": f"""
        import os, tempfile
        import numpy as np

        def softmax(x):
            wrote = []
            for place in ["/", "/dev", "/dev/shm", "/tmp", "/var/tmp", "/sandbox",
                          "/submission", os.path.dirname(__file__), {str(ROOT)!r},
                          {str(tmp_path)!r}]:
                try:
                    with open(os.path.join(place, "planted"), "w") as f:
                        f.write("x")
                    wrote.append(place)
                except OSError:
                    pass
            own = tempfile.gettempdir()
            with open(os.path.join(own, "mine"), "w") as f:   # its own: allowed
                f.write("x")
            raise RuntimeError(f"WROTE {{sorted(set(wrote) - {{own}})}}")
        """})
    _, results = _grade(folder, ["softmax"])
    assert "WROTE []" in _messages(results["softmax"]), _messages(results["softmax"])
    assert not (ROOT / "planted").exists() and not (tmp_path / "planted").exists()


# --- the key or the library reached: every route of the review --------------------

REACH = {
    "softmax": """
        import sys
        import numpy as np
        from scratchnet.exercises import reference_scores as _key_at_import  # module level

        def softmax(x):     # sys.modules directly
            return sys.modules["scratchnet.exercises.reference_scores"].softmax(x)

        def log_softmax(x):   # through NumPy's own modules
            return np._core.arrayprint.sys.modules["scratchnet.softmax"].log_softmax(x)

        def logsumexp(x):   # the module-level import above
            return _key_at_import.logsumexp(x)
        """,
    "information": f"""
        import builtins
        import numpy as np

        def entropy(p):     # __import__ with forged globals
            return __import__("scratchnet.information", {{"__name__": "scratchnet.x",
                              "__package__": "scratchnet"}}, None,
                              ["entropy"]).entropy(p)

        def kl_divergence(p, q):   # the key's file, by path
            ns = {{}}
            for path in [{str(KEY)!r},
                         "/usr/local/lib/python3.11/site-packages/scratchnet/"
                         "exercises/reference_scores.py"]:
                try:
                    exec(open(path).read(), ns)
                except OSError:
                    continue
                return ns["kl_divergence"](p, q)
            raise RuntimeError("no key file")
        """,
    "losses": """
        import builtins, gc, importlib
        import numpy as np

        def nll_loss(log_probs, targets):   # builtins' import
            mod = builtins.__dict__["__import__"]("scratchnet.losses", fromlist=["x"])
            return mod.nll_loss(log_probs, targets)

        def cross_entropy(logits, targets):   # scipy through importlib
            special = importlib.import_module("scipy.special")
            lp = special.log_softmax(logits, axis=-1)
            return -lp[np.arange(len(targets)), targets].mean()

        def cross_entropy_grad(logits, targets):   # any function object in memory
            for obj in gc.get_objects():
                if callable(obj) and getattr(obj, "__name__", "") == \\
                        "cross_entropy_grad" and obj is not cross_entropy_grad:
                    return obj(logits, targets)
            raise RuntimeError("no reference in memory")
        """,
}


def test_no_route_to_the_key_or_the_library_scores(isolation, tmp_path, zeros):
    folder = _package(tmp_path / "hw", REACH)
    _, results = _grade(folder, ["logsumexp", "softmax", "log_softmax", "entropy",
                                 "kl_divergence", "nll_loss", "cross_entropy",
                                 "cross_entropy_grad"])
    _no_better_than_zeros(results, zeros)
    assert "no key file" in _messages(results["kl_divergence"])


# --- forged frames, a patched shim, a huge frame header ---------------------------

FRAMES = {"softmax": """
    import os, stat, sys
    import numpy as np

    def _pipes():
        for fd in range(3, 20):
            try:
                if stat.S_ISFIFO(os.fstat(fd).st_mode):
                    yield fd
            except OSError:
                pass

    def softmax(x):   # a forged answer on every pipe, then many more
        shim = sys.modules["__main__"]
        for fd in _pipes():
            for _ in range(5):
                try:
                    shim.write_frame(fd, shim.pack({"ok": True, "value": "pass",
                                                    "status": "pass"}))
                except OSError:
                    pass
        return np.full(np.shape(x), 0.25)

    def log_softmax(x):   # a frame that says it is 2**40 bytes long
        for fd in _pipes():
            try:
                os.write(fd, (2**40).to_bytes(8, "big") + b"{" * 4096)
            except OSError:
                pass
        return np.zeros(np.shape(x))

    def logsumexp(x):   # the shim patched: every answer says what it likes
        shim = sys.modules["__main__"]
        real = shim.pack
        shim.pack = lambda value: real({"ok": True, "value": np.ones(1),
                                        "args": [], "kwargs": {}})
        header = b"[" * (64 * 2**20)   # and a 64 MiB JSON header
        for fd in _pipes():
            try:
                os.write(fd, (len(header) + 8).to_bytes(8, "big")
                         + len(header).to_bytes(8, "big") + header)
            except OSError:
                pass
        return np.zeros(np.shape(x)[:-1])
    """}


def test_forged_frames_and_a_patched_shim_score_no_more_than_zeros(isolation, tmp_path,
                                                                   zeros):
    import subprocess

    folder = _package(tmp_path / "hw", FRAMES)
    assignment = folder.parent / f"{folder.name}-assignment.json"
    write_assignment(["logsumexp", "softmax", "log_softmax"], assignment)
    # Graded in a fresh process, whose only children are this grading's (this
    # session's RUSAGE_CHILDREN holds the largest child of every earlier test):
    # its report, and the peak memory of the grading process, an interpreter of
    # its own here (a fork of the grading server is not this process's child).
    code = ("import json, resource, sys; from scratchnet.exercises import check; "
            "report = check(sys.argv[1], assignment=sys.argv[2]); "
            "print(json.dumps({r['id']: r for r in report.results})); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    done = subprocess.run([sys.executable, "-c", code, str(folder), str(assignment)],
                          capture_output=True, text=True, check=True,
                          env={**os.environ, "SCRATCHNET_FORKSERVER": "0"})
    graded, peak = done.stdout.splitlines()[-2:]
    results = json.loads(graded)
    _no_better_than_zeros(results, zeros)
    assert len(results) == 3
    # the grading process read no 64 MiB header: its peak memory stays small
    assert int(peak) < 400 * 1024   # kB


# --- the grader's argv, environment, working directory; files for later ----------

def test_the_grader_is_out_of_reach_and_nothing_is_left_for_a_later_child(
        isolation, tmp_path, zeros):
    mark = uuid.uuid4().hex
    plant = {"softmax": f"""
        import os, glob, tempfile
        import numpy as np

        def softmax(x):
            found = []
            for path in glob.glob("/proc/[0-9]*/cmdline"):
                try:
                    found.append(open(path, "rb").read())
                except OSError:
                    pass
            text = b" ".join(found)
            places = {{tempfile.gettempdir(), "/tmp", "/var/tmp", "/dev/shm",
                       os.getcwd(), os.path.expanduser("~"),
                       "/proc/%d/cwd" % os.getppid()}}
            for place in places:   # a package for the next (root) grading process
                try:
                    os.makedirs(os.path.join(place, "scratchnet"), exist_ok=True)
                    with open(os.path.join(place, "scratchnet", "__init__.py"),
                              "w") as f:
                        f.write("PLANTED = True\\n")
                    with open(os.path.join(place, "{mark}"), "w") as f:
                        f.write("answers")
                except OSError:
                    pass
            if b"assignment" in text or b"exercises_file" in text:
                return np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True)
            return np.zeros(np.shape(x))
        """}
    look = {"softmax": f"""
        import glob, os, tempfile
        import numpy as np

        def softmax(x):
            hits = [p for place in (tempfile.gettempdir(), "/tmp", "/var/tmp",
                                    "/dev/shm", os.getcwd())
                    for p in glob.glob(os.path.join(place, "*{mark}*"))]
            raise RuntimeError(f"LEFT {{hits}}")
        """}
    _, results = _grade(_package(tmp_path / "plant", plant), ["softmax"])
    _no_better_than_zeros(results, zeros)
    for place in ("/tmp", "/var/tmp", "/dev/shm", os.getcwd()):
        assert not Path(place, mark).exists(), place
    _, later = _grade(_package(tmp_path / "look", look), ["softmax"])
    assert "LEFT []" in _messages(later["softmax"])
    honest = write(tmp_path / "honest")   # the next grading process is untouched
    _, results = _grade(honest, ["softmax"])
    assert results["softmax"]["points"] == results["softmax"]["max_points"]


# --- processes: a 60-deep setsid chain, a bounded fork bomb ------------------------

def _survivors(mark):
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if mark.encode() in (entry / "cmdline").read_bytes():
                    found.append(entry.name)
            except OSError:
                pass
    return found


def test_a_setsid_chain_and_a_fork_bomb_die_with_the_sandbox(isolation, tmp_path,
                                                             zeros):
    mark = str(10**6 + uuid.uuid4().int % 10**6)
    chain = {"softmax": f"""
        import os, time
        import numpy as np

        def softmax(x):
            for depth in range(60):   # each link leaves its session and its parent
                if os.fork() != 0:
                    break
                os.setsid()
            else:
                os.execv("/usr/bin/sleep", ["sleep", "{mark}"])
            if depth == 0:
                for _ in range(200):   # a bounded fork bomb
                    try:
                        if os.fork() == 0:
                            os.execv("/usr/bin/sleep", ["sleep", "{mark}"])
                    except OSError:
                        break
                time.sleep(0.5)
                return np.zeros(np.shape(x))
            os._exit(0)

        def log_softmax(x):
            m = x.max(axis=-1, keepdims=True)
            return x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))
        """}
    _, results = _grade(_package(tmp_path / "hw", chain), ["softmax", "log_softmax"])
    assert results["softmax"]["points"] <= zeros["softmax"]
    assert results["log_softmax"]["points"] == results["log_softmax"]["max_points"]
    assert _survivors(mark) == []


# --- limits: soft limits raised, SIGALRM ignored ----------------------------------

def test_raised_soft_limits_and_an_ignored_alarm_change_nothing(isolation, tmp_path,
                                                                zeros):
    code = {"softmax": """
        import resource, signal, time
        import numpy as np

        def softmax(x):   # raise every limit back, then take 600 MB
            for kind in (resource.RLIMIT_AS, resource.RLIMIT_CPU,
                         resource.RLIMIT_FSIZE, resource.RLIMIT_NPROC):
                try:
                    resource.setrlimit(kind, (resource.RLIM_INFINITY,) * 2)
                except (ValueError, OSError):
                    soft, hard = resource.getrlimit(kind)
                    try:
                        resource.setrlimit(kind, (hard, hard))
                    except (ValueError, OSError):
                        pass
            block = np.ones(600 * 2**20 // 8)
            return np.zeros(np.shape(x)) + block[:1]

        def log_softmax(x):   # no alarm can stop this: only the grader's clock
            signal.signal(signal.SIGALRM, signal.SIG_IGN)
            time.sleep(1.5)   # three times the limit, short of a margin of 2 s
            return np.zeros(np.shape(x))
        """}
    _, results = _grade(_package(tmp_path / "hw", code), ["softmax", "log_softmax"],
                        memory_mb=300, time_limit=0.5)
    _no_better_than_zeros(results, zeros)
    assert "ran out of memory" in _messages(results["softmax"])
    messages = [c["message"] for c in results["log_softmax"]["checks"]]
    assert messages[0].startswith("ran past the time limit (0.5 s), stopped at "
                                  "softmax.py line"), messages
    assert messages[1:] and all(m.startswith("not run: ") for m in messages[1:])


# --- a class loses nothing ---------------------------------------------------------

def test_a_class_csv_survives_a_dev_zero_link_a_killer_and_a_crash(isolation, tmp_path,
                                                                   monkeypatch):
    uploads = tmp_path / "uploads"
    write(uploads / "ada")
    link = write(uploads / "link")
    (link / "softmax.py").unlink()
    os.symlink("/dev/zero", link / "softmax.py")
    killer = write(uploads / "killer")
    _package(killer, {"softmax": """
        import os, signal
        import numpy as np

        def softmax(x):
            for pid in [os.getppid(), -1, *[int(p) for p in os.listdir("/proc")
                                            if p.isdigit()]]:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            return np.zeros(np.shape(x))
        """})
    write(uploads / "crash")
    write(uploads / "zed")
    assignment = tmp_path / "assignment.json"
    write_assignment(["softmax", "relu_backward"], assignment)
    real = course.grade

    def crashing(upload, *args, **kwargs):   # a grading process that dies
        if Path(upload).name == "crash":
            raise RuntimeError("the grading process failed (exit status -9)")
        return real(upload, *args, **kwargs)

    monkeypatch.setattr(course, "grade", crashing)
    lines = []
    course.grade_class(sorted(uploads.iterdir()), assignment, tmp_path / "grades.csv",
                       progress=lines.append, jobs=2)
    with open(tmp_path / "grades.csv") as table:
        rows = {r["submission"]: r for r in csv.DictReader(table)}
    assert list(rows) == ["ada", "crash", "killer", "link", "zed"]
    assert rows["ada"]["total"] == rows["zed"]["total"] == "11"
    assert rows["crash"]["total"] == "0" and rows["crash"]["error"].startswith(
        "grader error: RuntimeError")
    assert rows["killer"]["relu_backward"] == "5" and rows["killer"]["error"] == ""
    assert rows["link"]["softmax"] == "0" and rows["link"]["relu_backward"] == "5"
    assert lines[0].startswith("isolation: ") and sum(
        "isolation" in line for line in lines) == 1


# --- a model whose forward is swapped ----------------------------------------------

def test_a_train_step_that_swaps_the_models_forward_scores_nothing(isolation,
                                                                   tmp_path,
                                                                   zeros_train_step):
    """The exact posterior logits of the task, written by hand, put in place of
    the model's forward without training it: the grader evaluates the trained
    parameters with the chapter's forward, never the child's method."""
    hw = write(tmp_path / "hw")
    (hw / "train.py").write_text(textwrap.dedent("""
        import numpy as np

        def _exact(x):   # log P(c|x) + const of tasks.unequal_variance()
            x = np.asarray(x, dtype=float).reshape(len(x), -1)[:, 0]
            return np.stack([-np.log(2.0) - x ** 2 / 8, -(x - 1) ** 2 / 2], axis=1)

        def train_step(model, optimizer, x, targets):
            model.forward = _exact
            return 0.0
        """))
    _, results = _grade(hw, ["train_step"])
    checks = {c["name"]: c for c in results["train_step"]["checks"]}
    assert checks["trains to the posterior"]["status"] == "fail"
    assert results["train_step"]["points"] <= zeros_train_step


def test_trained_weights_written_in_by_a_wrong_backward_do_not_pass_for_training(
        isolation, tmp_path, zeros):
    """A network trained elsewhere, its weights pasted into the submission, put in
    place by a backward that returns zero gradients: the KL would pass, but the
    first step is not the one the gradients give."""
    import numpy as np

    from scratchnet import tasks
    from scratchnet.mlp import TwoLayerMLP
    from scratchnet.optim import SGD
    from scratchnet.train import train_step

    net, task, rng = TwoLayerMLP(1, 16, 2, rng=0), tasks.unequal_variance(), \
        np.random.default_rng(7)
    opt = SGD(net.params, lr=0.3)
    for _ in range(2000):
        train_step(net, opt, *task.sample(64, rng))
    weights = {k: v.tolist() for k, v in net.params.items()}
    hw = write(tmp_path / "hw", {"mlp": [(
        "        x, z, h = self.saved\n",
        f"        for k, v in {weights!r}.items():\n"
        "            self.params[k][...] = np.array(v)\n"
        "        return {k: np.zeros_like(v) for k, v in self.params.items()}\n")]})
    _, results = _grade(hw, ["TwoLayerMLP.backward"])
    checks = {c["name"]: c for c in results["TwoLayerMLP.backward"]["checks"]}
    assert checks["trains to the posterior"]["status"] == "fail", checks
    assert "the first of 2000 training steps" in checks["trains to the posterior"][
        "message"]
    assert results["TwoLayerMLP.backward"]["points"] == 0


# --- refused without a sandbox -----------------------------------------------------

def test_a_normal_user_without_a_sandbox_is_refused_with_the_options(monkeypatch):
    monkeypatch.setattr(sandbox, "_bwrap", lambda: "")
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 1000)
    monkeypatch.delenv("SCRATCHNET_SANDBOX", raising=False)
    with pytest.raises(sandbox.SandboxRefused, match="--no-sandbox"):
        sandbox.choose()
    assert sandbox.choose(no_sandbox=True) == "none"
    assert sandbox.choose(own_code=True) == "none"


def test_a_forced_sandbox_that_cannot_run_is_an_error_not_a_fall_back(monkeypatch):
    monkeypatch.setattr(sandbox, "_bwrap", lambda: "")
    monkeypatch.setenv("SCRATCHNET_SANDBOX", "bubblewrap")
    with pytest.raises(sandbox.SandboxRefused, match="cannot run"):
        sandbox.choose()


# --- the red team's findings, each as it was found --------------------------------

def test_a_notebook_cell_naming_a_path_writes_nothing_outside(tmp_path):
    """A cell's module name was a path: sitecustomize.py written as root, 72/72."""
    target = tmp_path / "planted"
    notebook = tmp_path / "hw.ipynb"
    notebook.write_text(json.dumps({
        "nbformat": 4, "nbformat_minor": 5, "metadata": {"scratchnet": {"exercises": []}},
        "cells": [{"cell_type": "code", "execution_count": None, "outputs": [],
                   "metadata": {"scratchnet": {"module": str(target)}},
                   "source": ["PLANTED = 1\n"]}]}))
    assignment = tmp_path / "a.json"
    write_assignment(["softmax"], assignment)
    with pytest.raises(Exception, match="not a module name"):
        course.grade(notebook, assignment)
    assert not target.with_suffix(".py").exists()


def test_a_child_that_stops_reading_its_requests_cannot_hang_the_grader(
        isolation, tmp_path):
    """The training check's 2 MB request to a child that reads no more hung the
    grader for ever: the write has the call's deadline now."""
    hw = write(tmp_path / "hw")
    with open(hw / "train.py", "a") as f:   # the red team's submission
        f.write(textwrap.dedent("""
            import os, sys, threading, time

            def _find_fd():   # the shim's request descriptor, from main()'s frame
                f = sys._getframe()
                while f is not None:
                    if f.f_code.co_name == "main" and "requests" in f.f_locals:
                        return f.f_locals["requests"]
                    f = f.f_back

            def _proxy(real, w):   # forward small requests; stop at the first big one
                def exactly(n):
                    out = b""
                    while len(out) < n:
                        c = os.read(real, n - len(out))
                        if not c:
                            raise SystemExit
                        out += c
                    return out
                while True:
                    head = exactly(8)
                    size = int.from_bytes(head, "big")
                    if size > 60000:
                        while True:
                            time.sleep(3600)
                    os.write(w, head + exactly(size))

            _fd = _find_fd()
            if _fd is not None:
                _real = os.dup(_fd)
                _r, _w = os.pipe()
                os.dup2(_r, _fd)
                threading.Thread(target=_proxy, args=(_real, _w), daemon=True).start()
            """))
    _, results = _grade(hw, ["train_step"], time_limit=2)   # it ends: that is the test
    checks = {c["name"]: c for c in results["train_step"]["checks"]}
    assert checks["trains to the posterior"]["message"].startswith(
        "ran past the time limit (2 s)"), checks


def test_nothing_crosses_exercises_through_the_temporary_folder(isolation, tmp_path):
    """A child's TMPDIR served a later exercise's child the references of an earlier
    one: each child now has a fresh one (and, as root, a uid of its own)."""
    hw = _package(tmp_path / "hw", {"softmax": """
        import os, tempfile
        import numpy as np

        def softmax(x):
            with open(os.path.join(tempfile.gettempdir(), "left"), "w") as f:
                f.write(str(os.getuid()))
            return np.zeros(np.shape(x))

        def log_softmax(x):
            found = os.listdir(tempfile.gettempdir())
            raise RuntimeError(f"FOUND {found} AS {os.getuid()}")
        """})
    _, results = _grade(hw, ["softmax", "log_softmax"])
    assert "FOUND []" in _messages(results["log_softmax"])


def test_an_ungraded_dependencys_reference_is_not_in_the_child(isolation, tmp_path,
                                                                zeros):
    """cross_entropy with the hand-out's log_softmax a stub, the assignment grading
    cross_entropy only: the reference log_softmax was there to be used."""
    hw = _package(tmp_path / "hw", {"losses": """
        import gc
        import numpy as np

        def cross_entropy(logits, targets):
            for obj in gc.get_objects():
                if callable(obj) and getattr(obj, "__name__", "") == "log_softmax":
                    logp = obj(logits)
                    return -np.mean(logp[np.arange(len(targets)), targets])
            raise RuntimeError("no reference log_softmax")
        """})
    _, results = _grade(hw, ["cross_entropy"])
    assert results["cross_entropy"]["points"] <= zeros["cross_entropy"]
    assert "no reference log_softmax" in _messages(results["cross_entropy"])


def test_the_child_has_no_network_and_few_processes(isolation, tmp_path, zeros):
    """UDP reached an outside oracle on the uid path; 31 processes of --memory-mb each."""
    import socket

    oracle = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    oracle.bind(("127.0.0.1", 0))
    oracle.setblocking(False)
    port = oracle.getsockname()[1]
    hw = _package(tmp_path / "hw", {"softmax": f"""
        import os, socket
        import numpy as np

        def softmax(x):
            sent = False
            try:
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                s.sendto(b"x", ("127.0.0.1", {port}))
            except OSError:
                pass
            forked = 0
            for _ in range(40):
                try:
                    if os.fork() == 0:
                        os.read(os.open("/dev/zero", os.O_RDONLY), 1)
                        import time
                        time.sleep(5)
                        os.kill(os.getpid(), 9)
                    forked += 1
                except OSError:
                    break
            raise RuntimeError(f"SENT {{sent}} FORKED {{forked}}")
        """})
    _, results = _grade(hw, ["softmax"])
    text = _messages(results["softmax"])
    with pytest.raises(BlockingIOError):   # nothing came out of the sandbox
        oracle.recv(16)
    oracle.close()
    if os.geteuid() == 0:   # a dedicated uid: at most a few processes besides the shim
        forked = int(text.split("FORKED ")[1].split()[0])
        assert forked <= 4, text


def test_no_package_folder_of_the_system_is_readable(isolation, tmp_path):
    """/usr's dist-packages were readable under Landlock (a root pip install of
    scratchnet would be importable there)."""
    hw = _package(tmp_path / "hw", {"softmax": """
        import glob, os
        import numpy as np

        def softmax(x):
            read = []
            for folder in (glob.glob("/usr/lib/python3*/*-packages")
                           + glob.glob("/usr/local/lib/python3*/*-packages")):
                for name in sorted(os.listdir(folder))[:20]:
                    path = os.path.join(folder, name)
                    target = os.path.join(path, "__init__.py") if os.path.isdir(path) \\
                        else path
                    try:
                        open(target, "rb").close()
                        read.append(target)
                    except OSError:
                        pass
            raise RuntimeError(f"READ {read[:3]}")
        """})
    _, results = _grade(hw, ["softmax"])
    assert "READ []" in _messages(results["softmax"]), _messages(results["softmax"])


def test_a_child_that_dies_in_every_check_costs_two_checks_not_all(isolation,
                                                                  tmp_path):
    hw = _package(tmp_path / "hw", {"softmax": """
        import os

        def softmax(x):
            os.kill(os.getpid(), 9)
        """})
    _, results = _grade(hw, ["softmax"])
    messages = [c["message"] for c in results["softmax"]["checks"]]
    assert sum("died" in m for m in messages) == 2, messages
    assert all(m == "not run: the child was lost twice" for m in messages[2:])


def test_a_self_check_without_a_sandbox_runs_only_ones_own_files(monkeypatch,
                                                                  tmp_path):
    """Without bubblewrap and not root, a folder of someone else's is refused even
    without an assignment (it ran as the grader's user and reached the key)."""
    from scratchnet.exercises import grader

    hw = write(tmp_path / "hw")
    monkeypatch.setattr(sandbox, "_bwrap", lambda: "")
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 4242)
    monkeypatch.setattr(grader.os, "geteuid", lambda: 4242)
    monkeypatch.delenv("SCRATCHNET_SANDBOX", raising=False)
    with pytest.raises(grader.UsageError, match="--no-sandbox"):
        check(hw)
