"""As root, with bubblewrap, as CI runs the grader: what a kernel can reach.

Issue 18's attacks from a submission's kernel, each of which must gain
nothing: unmount its ``/proc`` to find the machine's and walk up to the
grader (finding 1); write the checkout's ``launch.py`` or a classmate's
notebook (2); read another clone of the course, its ``.git``, or this
checkout's ``solutions/`` (3); import a library that answers a task (4);
read the course's salt from its environment (8); fill a ``/dev/shm`` of
no size (7). One kernel, started once, runs every attack as a cell of its
own and reports what it got as data; each test reads one report. The
attacks graded beside classmates are in ``test_grading_harm``.

The tests are skipped, with the reason, only where bubblewrap cannot make
its namespaces here.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sys
import uuid
from pathlib import Path

import nbformat
import pytest
from grading_support import ROOT, SOLUTIONS, needs_bwrap
from packaging.requirements import Requirement

from bpe_lab.grading.run import jail
from bpe_lab.grading.run.distributions import allowed, closure, imported_by
from bpe_lab.grading.run.sandbox import KEPT_ENV, ONE_THREAD, RESULT_MIME, Cell, Limits, run_cells
from bpe_lab.grading.run.stubs import package_dir

pytestmark = needs_bwrap
ANSWERERS = ("tiktoken", "tokenizers", "sentencepiece", "subword_nmt", "nbgrader")
SALT = f"salt-{uuid.uuid4().hex}"

#: the first cell: how every other cell reports (as the probe does: a list of small dicts)
REPORT = f"""
import ctypes, errno, json, os, subprocess, sys
from IPython.display import publish_display_data
def _report(value):
    publish_display_data({{{RESULT_MIME!r}: [{{"value": json.loads(json.dumps(value, default=str))}}]}})
def _try(attempt):
    try:
        return ["got", attempt()]
    except BaseException as err:
        return [type(err).__name__]
"""

#: name -> one cell whose ``_report`` is the test's to read; {names} filled in by the fixture
ATTACKS = {
    "status": "_report({{l.split(':')[0]: l.split(':', 1)[1].split() for l in open('/proc/self/status') "
    "if l.startswith(('Uid', 'Gid', 'Cap', 'NoNewPrivs'))}})",
    "umount": (
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "done = libc.umount2(b'/proc', 2)  # MNT_DETACH\n"
        "said = errno.errorcode.get(ctypes.get_errno(), '')\n"
        "pids = [p for p in os.listdir('/proc') if p.isdigit()]\n"
        "cwds = [_try(lambda: os.readlink(f'/proc/{{p}}/cwd')) for p in pids]\n"
        "salted = [p for p in pids if {salt!r}.encode() in (_try(lambda: open(f'/proc/{{p}}/environ', 'rb').read())"
        " + [b''])[-1]]\n"
        "grader = _try(lambda: os.listdir('/proc/{grader}/cwd'))\n"
        "netns = _try(lambda: os.setns(os.open('/proc/1/ns/net', os.O_RDONLY), 0))\n"
        "_report(dict(done=done, errno=said, pids=len(pids), cwds=cwds, salted=salted, grader=grader, netns=netns))"
    ),
    "reads": (
        "_report({{path: _try(lambda: os.listdir(path) if os.path.isdir(path) else open(path).read()[:20])"
        " for path in {reads!r}}})"
    ),
    "listings": "_report({{path: _try(lambda: sorted(os.listdir(path))) for path in {listings!r}}})",
    "git": "_report(_try(lambda: subprocess.run(['git', '-C', {clone!r}, 'show', 'HEAD:solutions/03_encoding.ipynb'],"
    " capture_output=True, text=True, timeout=30).returncode))",
    "writes": "_report({{path: _try(lambda: open(path, 'a').write('x')) for path in {writes!r}}})",
    "own_folder": "open('mine.txt', 'w').write('mine')\n_report([open('mine.txt').read(), os.stat('mine.txt').st_uid])",
    "imports": (
        "import importlib\n"
        "sys.path += {sites!r}  # every site-packages folder of the machine, on the path\n"
        "_report({{name: _try(lambda: importlib.import_module(name).__name__) for name in {imports!r}}})"
    ),
    "environment": "_report(dict(os.environ))",
    "shm": (
        "def fill(folder):\n"
        "    written = 0\n"
        "    try:\n"
        "        for i in range(64):\n"
        "            with open(f'{{folder}}/fill{{i}}', 'wb') as f:\n"
        "                f.write(b'x' * (8 << 20))\n"
        "            written += 8 << 20\n"
        "    except OSError as err:\n"
        "        return [written >> 20, errno.errorcode.get(err.errno)]\n"
        "    finally:\n"
        "        for i in range(64):\n"
        "            try:\n"
        "                os.remove(f'{{folder}}/fill{{i}}')\n"
        "            except OSError:\n"
        "                pass\n"
        "    return [written >> 20, '']\n"
        "_report({{'/dev/shm': fill('/dev/shm'), '/tmp': fill('/tmp')}})"
    ),
    "root_folder": "_report([_try(lambda: open(p, 'w').write('x')) for p in ('/x', '/root/x', '/usr/x', '/tmp/x')])",
}


def _digest(paths: list[Path]) -> str:
    return hashlib.sha256(b"".join(p.read_bytes() for p in paths)).hexdigest()


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """Another clone of the course (a marker in its solutions/, a .git) and
    a classmate's submitted notebook, beside this run."""
    folder = tmp_path_factory.mktemp("root")
    clone = folder / "course-backup"
    (clone / "solutions").mkdir(parents=True)
    (clone / "solutions" / "03_encoding.ipynb").write_text("MARKER: the answers")
    (clone / ".git").mkdir()
    (clone / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    classmate = folder / "submitted" / "bob" / "03_encoding.ipynb"
    classmate.parent.mkdir(parents=True)
    nbformat.write(nbformat.read(SOLUTIONS / "03_encoding.ipynb", 4), classmate)
    return folder, clone, classmate


@pytest.fixture(scope="module")
def attacked(course):
    """Each attack's report, from one kernel in the sandbox, with the salt
    and an instructor's variable in the grader's environment."""
    folder, clone, classmate = course
    launch = ROOT / "bpe_lab" / "grading" / "run" / "launch.py"
    reads = [clone / "solutions" / "03_encoding.ipynb", clone / ".git", SOLUTIONS / "03_encoding.ipynb"]
    reads += [ROOT / ".git", ROOT / "tests", ROOT / "pyproject.toml", classmate]
    names = dict(
        salt=SALT,
        grader=os.getpid(),
        clone=str(clone),
        reads=[str(p) for p in reads],
        listings=[str(ROOT), str(Path.home()), "/"],
        writes=[str(launch), str(classmate), str(SOLUTIONS / "03_encoding.ipynb")],
        sites=[str(p) for p in allowed(package_dir())] + [str(p) for p in _sites()],
        imports=[*ANSWERERS, "debugpy", "numpy", "pandas", "matplotlib.pyplot", "regex", "bpe_lab.core"],
    )
    before = _digest([launch, classmate])
    run = folder / "run"
    (run / "work").mkdir(parents=True)
    cells = [Cell(REPORT)] + [Cell(code.format(**names), results=True) for code in ATTACKS.values()]
    with pytest.MonkeyPatch.context() as env:
        env.setenv("BPE_LAB_SALT", SALT)
        env.setenv("INSTRUCTOR_TOKEN", SALT)
        confinement = jail.confine(run, run / "work", package_dir(), sandbox=True, tmp_mb=32)
        outcomes = asyncio.run(run_cells(cells, run / "work", Limits(cell_timeout=60), confinement))
    assert outcomes[0].status == "ok", outcomes[0]
    reports = {}
    for name, outcome in zip(ATTACKS, outcomes[1:]):
        assert outcome.status == "ok" and len(outcome.results) == 1, (name, outcome)
        reports[name] = outcome.results[0][0]["value"]
    return reports, before == _digest([launch, classmate])


def _sites() -> list[Path]:
    from bpe_lab.grading.run.distributions import site_dirs

    return site_dirs()


def test_the_kernel_is_nobody_with_no_capability(attacked):
    status = attacked[0]["status"]
    assert status["Uid"] == status["Gid"] == [str(jail.UID)] * 4, status
    for name in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert int(status[name][0], 16) == 0, (name, status)


def test_unmounting_proc_fails_and_the_grader_is_out_of_sight(attacked):
    """Finding 1: ``umount2("/proc")`` found the machine's procfs, the
    grader's cwd (its solutions/) and environment (the salt)."""
    found = attacked[0]["umount"]
    assert found["done"] == -1 and found["errno"] == "EPERM", found
    assert found["pids"] < 10, found  # its own pid namespace: the kernel and what it started
    assert all(cwd[0] != "got" or cwd[1].startswith(("/tmp", "/")) for cwd in found["cwds"])
    assert str(ROOT) not in json.dumps(found["cwds"]), found
    assert found["salted"] == [] and found["grader"][0] != "got" and found["netns"][0] != "got", found


def test_no_other_copy_of_the_course_no_git_no_classmate_is_readable(attacked):
    """Finding 3: a backup clone, its .git (``git show``), the checkout's
    solutions/, tests and .git, a classmate's notebook, the home folder."""
    reads = attacked[0]["reads"]
    got = {path: result for path, result in reads.items() if result[0] == "got" and result[1]}
    assert got == {}, got
    assert attacked[0]["git"] != ["got", 0], attacked[0]["git"]
    # of the checkout and the home folder, only the way to what it was given: bpe_lab, the interpreter
    listings = attacked[0]["listings"]
    given = [package_dir(), Path(sys.prefix), Path(sys.base_prefix)]
    for folder in (ROOT, Path.home()):
        ways = {p.relative_to(folder).parts[0] for p in given if p.is_relative_to(folder) and p != folder}
        assert set(listings[str(folder)][-1]) <= ways, (folder, listings[str(folder)])
    system = {"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "proc", "dev", "tmp"}
    assert set(listings["/"][1]) <= system | {p.parts[1] for p in given}, listings["/"]


def test_nothing_outside_its_folder_is_writable_and_nothing_changed(attacked):
    """Finding 2: the checkout's launch.py, a classmate's notebook, the
    solutions; nor the sandbox's own root (memory of no size)."""
    reports, unchanged = attacked
    assert all(result[0] != "got" for result in reports["writes"].values()), reports["writes"]
    assert unchanged
    assert reports["own_folder"] == ["mine", jail.UID]
    assert [r[0] for r in reports["root_folder"]] == ["OSError", "OSError", "OSError", "got"], reports["root_folder"]


def test_no_library_that_answers_a_task_can_be_imported(attacked):
    """Finding 4: tiktoken and the rest are absent even with every
    site-packages folder of the machine on ``sys.path``."""
    imports = attacked[0]["imports"]
    assert {name: imports[name][0] for name in ANSWERERS} == dict.fromkeys(ANSWERERS, "ModuleNotFoundError")
    assert [imports[name][0] for name in ("numpy", "pandas", "matplotlib.pyplot", "regex", "bpe_lab.core")] == [
        "got"
    ] * 5, imports
    assert imports["debugpy"][0] == "ModuleNotFoundError", imports  # ipykernel's debugger: no kernel runs it


def test_the_allow_list_is_a_closure_without_the_answerers():
    dists = closure(("ipykernel", "pandas"))
    assert {"ipykernel", "jupyter-client", "pyzmq", "traitlets", "pandas", "numpy"} <= set(dists)
    assert not {"tiktoken", "tokenizers", "sentencepiece", "subword-nmt", "nbgrader"} & set(dists)
    assert "debugpy" in {Requirement(r).name for r in dists["ipykernel"].requires or []}
    assert "debugpy" not in dists  # required by ipykernel for its debugger, which no grading kernel runs
    tops = {entry.name for entries in allowed(package_dir()).values() for entry in entries}
    assert {"numpy", "regex", "ipykernel", "IPython"} <= tops
    assert not {"tiktoken", "tokenizers", "sentencepiece", "nbgrader"} & tops
    assert not any(name.endswith(".pth") and "editable" in name for name in tops)


def test_the_kernel_sees_none_of_the_graders_environment(attacked):
    """Finding 8: the salt and an instructor's variable stay in the grader."""
    env = attacked[0]["environment"]
    assert "BPE_LAB_SALT" not in env and "INSTRUCTOR_TOKEN" not in env
    assert SALT not in json.dumps(env)
    ours = {"PATH", "HOME", "IPYTHONDIR", "MPLCONFIGDIR", "PYTHONPATH", "BPE_LAB_RUN", "PWD", *KEPT_ENV, *ONE_THREAD}
    ipykernel = {
        "PAGER",
        "GIT_PAGER",
        "CLICOLOR",
        "CLICOLOR_FORCE",
        "FORCE_COLOR",
        "MPLBACKEND",
        "PYDEVD_USE_FRAME_EVAL",
    }
    assert set(env) - ours - ipykernel <= {
        "PYDEVD_DISABLE_FILE_VALIDATION",
        "PYTHONDONTWRITEBYTECODE",
        "MALLOC_ARENA_MAX",
    }, env
    assert Path(env["HOME"]).name == "work"


def test_tmp_and_dev_shm_have_a_size(attacked):
    """Finding 7: a /dev/shm of no size held gigabytes the budget never saw."""
    shm, tmp = attacked[0]["shm"]["/dev/shm"], attacked[0]["shm"]["/tmp"]
    assert shm[1] == "ENOSPC" and shm[0] <= 16, shm  # at most half of /tmp's 32 MB
    assert tmp[1] == "ENOSPC" and tmp[0] <= 32, tmp


def test_without_user_namespaces_confine_says_why_and_what_to_do(monkeypatch, tmp_path):
    monkeypatch.setattr(jail, "_trial", lambda: (None, "bubblewrap cannot make its namespaces here (bwrap: ...)"))
    with pytest.raises(jail.SandboxUnavailable) as refused:
        jail.confine(tmp_path, tmp_path, package_dir())
    said = str(refused.value)
    assert "namespaces" in said and "apt-get install bubblewrap" in said and "unprivileged_userns_clone" in said
    assert "--no-sandbox" in said
    assert jail.confine(tmp_path, tmp_path, package_dir(), sandbox=False).note.startswith(jail.NO_SANDBOX)


def test_a_package_copy_of_any_name_brings_none_of_bpe_labs_own_requirements(tmp_path):
    """bpe-lab's distribution requires sentencepiece: its own imports never
    count as a distribution to bind, whatever the copy's folder is called."""
    copy = tmp_path / "view-03"
    (copy / "core").mkdir(parents=True)
    (copy / "core" / "encode.py").write_text("import regex\nimport bpe_lab.core\nfrom bpe_lab import x\n")
    assert imported_by(copy) == {"regex"}
