"""The budget's look at a sandbox's own ``/tmp`` and ``/dev/shm`` (``grading/run/budget.py``).

A kernel starting in bubblewrap: between making its mount namespace and
``pivot_root``, bubblewrap's child has a namespace of its own and still
the machine's root, so "its" ``/tmp`` was the machine's, with every other
run's folder and pytest's in it. On a loaded machine that window is long
enough for the watcher to look (98 MB and 2,792 files of it seen in one
look, two test workers grading beside it). Charged to a kernel starting,
that stops it before it replies ("Kernel died before replying to
kernel_info", the watcher's reason lost): the failures of
``test_grading_harm`` under load, after a submission went over budget and
its kernel was restarted.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from grading_support import needs_bwrap

from bpe_lab.grading.run import budget, jail
from bpe_lab.grading.run.budget import Budget, kill_tree, over, usage
from bpe_lab.grading.run.sandbox import Cell, Limits, run_cells
from bpe_lab.grading.run.stubs import package_dir

BUDGET = Budget(memory_mb=4096, processes=16, disk_mb=1, files=20)


def _machines_tmp(folder: Path) -> Path:
    """Eight megabytes in 40 files in the machine's ``/tmp`` (where pytest's folders are)."""
    if Path("/tmp").resolve() not in folder.resolve().parents:
        pytest.skip(f"the test's folder {folder} is not in the machine's /tmp")
    folder.mkdir()
    for i in range(40):
        (folder / f"file{i}.bin").write_bytes(b"x" * (8 << 20) if i == 0 else b"x")
    return folder


def _settled(process: subprocess.Popen[bytes], done: str) -> None:
    """Wait until ``process`` is ready (``done``: a file it makes), or skip if it could not start."""
    deadline = time.monotonic() + 10
    while not Path(done).exists():
        if process.poll() is not None or time.monotonic() > deadline:
            pytest.skip(f"{process.args[0]} could not start here (exit status {process.poll()})")
        time.sleep(0.05)


def test_a_sandbox_not_yet_in_its_own_root_is_not_charged_the_machines_tmp(tmp_path):
    """A process in a mount namespace of its own that still has the
    machine's root (as bubblewrap's child has while it sets the sandbox
    up): its ``/tmp`` and ``/dev/shm`` are not the submission's."""
    _machines_tmp(tmp_path / "machine")
    run = tmp_path / "run"
    run.mkdir()
    ready = tmp_path / "ready"
    command = ["unshare", "--mount", "--propagation", "private"]
    if os.geteuid() != 0:
        command[1:1] = ["--user", "--map-root-user"]
    process = subprocess.Popen([*command, "sh", "-c", f"touch {ready}; exec sleep 60"])
    try:
        _settled(process, str(ready))
        assert os.stat(f"/proc/{process.pid}/ns/mnt").st_ino != os.stat("/proc/self/ns/mnt").st_ino
        used, _ = usage(process.pid, run, BUDGET)
        assert (used.disk, used.files) == (0, 0), used
        assert over(used, BUDGET) == "", used
    finally:
        process.kill()
        process.wait()


@needs_bwrap
def test_what_a_sandbox_writes_in_its_own_tmp_is_counted(tmp_path):
    """Once in its own root, its ``/tmp`` (a tmpfs of its own) is counted, and
    nothing of the machine's ``/tmp`` is."""
    _machines_tmp(tmp_path / "machine")
    run = Path(tempfile.mkdtemp(dir=tmp_path))
    work = run / "work"
    work.mkdir()
    confinement = jail.confine(run, work, package_dir(), sandbox=True, tmp_mb=16)
    write = "head -c 3145728 /dev/zero > /tmp/three_mb && touch ready && exec sleep 60"
    process = subprocess.Popen([*confinement.command, "/bin/sh", "-c", write])
    try:
        _settled(process, str(work / "ready"))
        used, _ = usage(process.pid, run, BUDGET)
        assert 3 << 20 <= used.disk < 4 << 20, used  # its three megabytes, not the machine's eight
        assert over(used, BUDGET).startswith("it wrote 3 MB of files"), used
    finally:
        kill_tree([process.pid, *usage(process.pid, run, BUDGET)[1]])
        process.wait()


def test_a_kernel_stopped_by_its_watcher_while_it_starts_is_told_why(tmp_path, monkeypatch):
    """Stopped before it replied, the run says the watcher's reason, not
    "Kernel died before replying to kernel_info (is the memory limit too low?)"."""
    monkeypatch.setattr(budget, "over", lambda used, limit: "it is over budget at its first look")
    workdir = tmp_path / "work"
    workdir.mkdir()
    outcomes = asyncio.run(run_cells([Cell("1")], workdir, Limits(cell_timeout=30, notebook_timeout=60)))
    assert [o.status for o in outcomes] == ["not run"], outcomes
    assert outcomes[0].error == (
        "the kernel could not run this notebook: stopped: it is over budget at its first look"
    ), outcomes


def test_threads_count_as_tasks_and_a_process_of_50_threads_is_over_a_budget_of_8_processes(tmp_path):
    """Issue 30's attack 4: 3,012 threads were one process. Counted as
    tasks (4 per process allowed), one process of 50 threads is over a
    budget of 8 processes (32 tasks), and one process is not."""
    ready = tmp_path / "ready"
    code = (
        "import pathlib, sys, threading\n"
        "hold = threading.Event()\n"
        "for _ in range(49):\n"
        "    threading.Thread(target=hold.wait, daemon=True).start()\n"
        "pathlib.Path(sys.argv[1]).touch()\n"
        "hold.wait(60)\n"
    )
    process = subprocess.Popen([sys.executable, "-c", code, str(ready)])
    try:
        _settled(process, str(ready))
        budget = Budget(memory_mb=4096, processes=8, disk_mb=1, files=20)
        used, pids = usage(process.pid, tmp_path / "empty", budget)
        assert (used.processes, used.tasks, list(pids)) == (1, 50, [process.pid]), used
        assert over(used, budget) == (
            "it ran 50 threads at once in all its processes together, more than the 32 a submission may run"
        )
    finally:
        process.kill()
        process.wait()
