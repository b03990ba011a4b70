"""Nothing to read: a submission's kernel runs in bubblewrap.

A spying submission tries, from its kernel, to read the solutions (a copy in
a temporary folder, and the repository's own), the hidden tests' source and
the repository's tests, to overwrite the solutions copy, to create a file
in the grader's home, and to connect to a socket the test opens on
127.0.0.1. Its encode_word returns one flag per attempt ("1": it worked),
so the report shows what it got. In the sandbox: nothing. Without one (and
the report says so), the reads and the connection work, which shows the
spy would have seen them.
"""

from __future__ import annotations

import asyncio
import hashlib
import shutil
import socket
import uuid
from pathlib import Path

import nbformat
import pytest
from grading_support import ROOT, SOLUTIONS, needs_bwrap, shared

from bpe_lab.grading.authoring.release import release_notebook
from bpe_lab.grading.commands.grader import Limits, format_report, grade
from bpe_lab.grading.run import jail

LIMITS = Limits(cell_timeout=30, notebook_timeout=120, memory_mb=1536)


def _digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode() + path.read_bytes())
    return digest.hexdigest()


SPY = """
import os, socket
def _try(attempt):
    try:
        return "1" if attempt() else "0"
    except Exception:
        return "0"
_flags = [
    "sol:" + _try(lambda: open({copy!r}).read()),
    "repo:" + _try(lambda: open({repo_solution!r}).read()),
    "tests:" + _try(lambda: open({tests!r}).read()),
    "git:" + _try(lambda: os.listdir({git!r})),
    "wsol:" + (_try(lambda: open({copy!r}, "w").write("{{}}")) if {writes!r} else "-"),
    "whome:" + (_try(lambda: open({canary!r}, "w").write("x")) if {writes!r} else "-"),
    "net:" + _try(lambda: socket.create_connection(("127.0.0.1", {port!r}), timeout=3)),
]
def encode_word(word, merges):
    raise ValueError(str(_flags))  # feedback shows what a learner's code raised (one line), never what it returned
"""


def _spy(copy: Path, canary: Path, port: int, *, writes: bool) -> nbformat.NotebookNode:
    solution = nbformat.read(SOLUTIONS / "03_encoding.ipynb", as_version=4)
    nb = release_notebook(solution, "03_encoding")
    source = SPY.format(
        copy=str(copy / "03_encoding.ipynb"),
        repo_solution=str(SOLUTIONS / "03_encoding.ipynb"),
        tests=str(ROOT / "tests" / "test_grader.py"),
        git=str(ROOT / ".git"),
        canary=str(canary),
        port=port,
        writes=writes,
    )
    solved = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source for c in solution.cells}
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid == "03_encoding_decode_answer":
            cell.source = solved[gid]
        if gid == "03_encoding_encode_word_answer":
            cell.source = source
    return nb


@pytest.fixture
def spying(tmp_path):
    copy = tmp_path / "solutions"
    shutil.copytree(SOLUTIONS, copy)
    canary = Path.home() / f".bpe-lab-sandbox-canary-{uuid.uuid4().hex}"
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(5)
    try:
        yield copy, canary, listener.getsockname()[1]
    finally:
        listener.close()
        canary.unlink(missing_ok=True)


def _flags(report) -> str:
    return next(t.message for t in report.tasks if t.grade_id == "03_encoding_encode_word")


@needs_bwrap
def test_a_sandboxed_kernel_can_read_write_and_connect_to_nothing(spying, tmp_path):
    copy, canary, port = spying
    before = _digest(copy)
    path = tmp_path / "spy" / "03_encoding.ipynb"
    path.parent.mkdir()
    nbformat.write(_spy(copy, canary, port, writes=True), path)
    report = grade([path], solutions_dir=copy, limits=LIMITS, sandbox=True)[0]
    assert report.sandbox == ""
    assert "['sol:0', 'repo:0', 'tests:0', 'git:0', 'wsol:0', 'whome:0', 'net:0']" in _flags(report), report.tasks
    assert _digest(copy) == before and not canary.exists()
    decode = next(t for t in report.tasks if t.grade_id == "03_encoding_decode")
    assert decode.points == decode.max_points  # the rest of the notebook runs as usual


@needs_bwrap
def test_solutions_score_full_marks_in_the_sandbox(tmp_path_factory):
    """The run's shared grading of the solutions (``grading_support.shared``,
    which requires the sandbox as ``grade`` does by default), not another."""
    graded = shared(tmp_path_factory, ["solution-03_encoding", "solution-05_bytelevel"]).reports
    for report in graded.values():
        assert report.sandbox == "" and report.total + report.pending == report.max_total > 0, report.tasks


#: The kernel's own address space, resident memory and threads, as one probe-shaped result.
_VM = """
from IPython.display import publish_display_data
_vm = {l.split(':')[0]: int(l.split()[1]) for l in open('/proc/self/status') if l.startswith(('VmSize', 'VmRSS'))}
publish_display_data({'application/vnd.bpe-lab.probe+json': [_vm]})
"""


def test_the_memory_limit_counts_what_the_kernel_uses_not_what_malloc_reserves(tmp_path):
    """With a malloc arena of 64 MB for each of its threads, a kernel's
    address space was 814 MB at rest, 58 MB of it resident: under a limit of
    850 MB (``RLIMIT_AS``) importing numpy killed it. With two arenas a
    kernel imports what the course uses under that limit."""
    from bpe_lab.grading.run.sandbox import Cell, run_cells

    workdir = tmp_path / "work"
    workdir.mkdir()
    cells = [Cell("import numpy, regex, bpe_lab\nfrom bpe_lab.grading import check"), Cell(_VM, results=True)]
    outcomes = asyncio.run(run_cells(cells, workdir, Limits(cell_timeout=60, memory_mb=850)))
    assert [o.status for o in outcomes] == ["ok", "ok"], outcomes
    (vm,) = outcomes[1].results[0]
    assert vm["VmSize"] < 600 << 10, vm  # kB: the limit's room is the kernel's to use


def test_without_a_sandbox_the_grader_refuses_unless_told(spying, tmp_path, monkeypatch):
    """Where bubblewrap cannot run, grading stops with why and what to do;
    ``sandbox=False`` (``--no-sandbox``) grades anyway, and the report says so
    (and then the reads and the connection work: the spy would have seen them)."""
    copy, canary, port = spying
    monkeypatch.setattr(jail, "_trial", lambda: (None, "bubblewrap (bwrap) is not installed"))
    path = tmp_path / "spy" / "03_encoding.ipynb"
    path.parent.mkdir()
    nbformat.write(_spy(copy, canary, port, writes=False), path)
    for sandbox in (None, True):
        with pytest.raises(jail.SandboxUnavailable, match="apt-get install bubblewrap.*--no-sandbox"):
            grade([path], solutions_dir=copy, limits=LIMITS, sandbox=sandbox)
    report = grade([path], solutions_dir=copy, limits=LIMITS, sandbox=False)[0]
    assert report.sandbox.startswith("graded without a sandbox") and "--no-sandbox" in report.sandbox
    assert "graded without a sandbox" in format_report(report)
    assert "['sol:1', 'repo:1', 'tests:1'" in _flags(report) and "'net:1'" in _flags(report), report.tasks


@needs_bwrap
def test_nothing_bound_in_is_covered_by_a_later_mount(tmp_path):
    """bubblewrap mounts in order: a tmpfs (``/tmp``, a site-packages folder)
    must come before what is bound back inside it, or it hides it (CI
    clones into /tmp, the stubbed package copy lives there)."""
    package = tmp_path / "copy" / "bpe_lab"
    shutil.copytree(ROOT / "bpe_lab", package, ignore=shutil.ignore_patterns("__pycache__"))
    run = tmp_path / "run"
    (run / "work").mkdir(parents=True)
    command = list(jail.confine(run, run / "work", ROOT / "bpe_lab", package=package).command)
    mounts = [(i, command[i + 2]) for i, arg in enumerate(command) if arg in ("--ro-bind", "--bind", "--symlink")]
    covers = [(i, command[i + 1]) for i, arg in enumerate(command) if arg == "--tmpfs"]
    for at, target in mounts:
        hiding = [c for j, c in covers if j > at and Path(target).is_relative_to(c)]
        assert not hiding, f"{target} is bound in, then covered by {hiding}"
    assert (str(package), str(ROOT / "bpe_lab")) in {(command[i + 1], command[i + 2]) for i, _ in mounts}
    assert str(ROOT) not in {command[i + 2] for i, _ in mounts}  # bpe_lab alone, not its checkout


def test_bpe_lab_grade_refuses_without_a_sandbox_and_no_sandbox_goes_without(tmp_path, monkeypatch, capsys):
    from bpe_lab.cli import main
    from bpe_lab.grading.commands import grade_command

    monkeypatch.setattr(jail, "_trial", lambda: (None, "bubblewrap (bwrap) is not installed"))
    path = tmp_path / "alice" / "03_encoding.ipynb"
    path.parent.mkdir()
    nbformat.write(release_notebook(nbformat.read(SOLUTIONS / "03_encoding.ipynb", 4), "03_encoding"), path)
    assert main(["grade", str(path), "--solutions", str(SOLUTIONS)]) == 2
    assert "apt-get install bubblewrap" in capsys.readouterr().err
    asked = {}
    monkeypatch.setattr(grade_command, "grade_collection", lambda *args, **kwargs: asked.update(kwargs) or [])
    assert main(["grade", str(path), "--solutions", str(SOLUTIONS), "--no-sandbox"]) == 0
    assert asked["sandbox"] is False
