"""As root, with bubblewrap, as CI runs the grader: tasks and memory the Linux kernel counts.

Issue 30's attack 4: one kernel held 3,012 threads against ``--processes
32`` and was not stopped (the budget counted processes, and threads are
not processes). And attack 3's remedy where the machine allows it: a
memory and a pids cgroup per kernel (``grading/run/cgroups.py``), gone when
the kernel is, even when the grader that made them was killed.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from grading_support import needs_bwrap

from bpe_lab.grading.run import budget, cgroups, jail
from bpe_lab.grading.run.budget import Budget
from bpe_lab.grading.run.sandbox import Cell, Limits, run_cells
from bpe_lab.grading.run.stubs import package_dir

needs_cgroups = pytest.mark.skipif(cgroups.why_none() != "", reason=cgroups.why_none() or "cgroups")

THREADS = """
import threading, time
threading.stack_size(256 << 10)  # 3,000 stacks of 256 kB fit the 2 GB address space
hold = threading.Event()
for _ in range(3000):
    try:
        threading.Thread(target=hold.wait, daemon=True).start()
    except RuntimeError:  # can't start new thread: the pids cgroup said no
        break
time.sleep(10)
"""


#: A grader of one kernel that sleeps, saying where its groups are.
GRADER = """
import asyncio, pathlib, sys
from bpe_lab.grading.run import budget, cgroups, jail
from bpe_lab.grading.run.sandbox import Cell, Limits, run_cells
from bpe_lab.grading.run.stubs import package_dir
make = cgroups.make
def told(memory, tasks):
    group = make(memory, tasks)
    print(*group.folders, flush=True)
    return group
cgroups.make = told
run = pathlib.Path(sys.argv[1])
confinement = jail.confine(run, run / "work", package_dir(), sandbox=True, tmp_mb=32)
asyncio.run(run_cells([Cell("import time\\ntime.sleep(120)")], run / "work", Limits(cell_timeout=150), confinement))
"""


def _run(tmp_path, cells, limits):
    run = tmp_path / "run"
    (run / "work").mkdir(parents=True)
    confinement = jail.confine(run, run / "work", package_dir(), sandbox=True, tmp_mb=32)
    return asyncio.run(run_cells(cells, run / "work", limits, confinement))


@needs_bwrap
def test_a_kernel_of_3000_threads_is_stopped(tmp_path):
    """Attack 4, under ``--processes 32``: 128 threads at most (4 per
    process), and the next stops it, whether the watcher or the pids
    cgroup sees it first; the cell after it runs in a new kernel."""
    outcomes = _run(tmp_path, [Cell(THREADS), Cell("1 + 1")], Limits(cell_timeout=60, processes=32))
    assert outcomes[0].status == "dead", outcomes[0]
    assert outcomes[0].error.startswith("stopped: it ran "), outcomes[0]
    assert outcomes[0].error.endswith(
        "threads at once in all its processes together, more than the 128 a submission may run"
    )
    assert outcomes[1].status == "ok", outcomes[1]


def test_the_tasks_a_budget_allows_are_four_per_process():
    assert (Budget(processes=32).tasks, Budget(processes=16).tasks) == (128, 64)


@needs_bwrap
@needs_cgroups
def test_a_kernel_runs_in_its_own_memory_and_pids_cgroups_removed_after_it(tmp_path, monkeypatch):
    """Every process of the kernel (bubblewrap's two, the kernel) is in
    groups limited to its memory (the budget's, /tmp's 32 MB and /dev/shm's
    16 MB) and to 129 tasks; none is left once it is done."""
    made, seen, asked = [], [], []
    make = cgroups.make

    def recording(memory, tasks):
        group = make(memory, tasks)
        made.append(group)
        asked.append((memory, tasks))
        return group

    def look():
        while not made:
            time.sleep(0.02)
        for _ in range(40):
            try:
                seen.append([len((folder / "cgroup.procs").read_text().split()) for folder in made[0].folders])
            except OSError:
                pass
            time.sleep(0.05)

    monkeypatch.setattr(cgroups, "make", recording)
    watcher = threading.Thread(target=look)
    watcher.start()
    outcomes = _run(tmp_path, [Cell("import time\ntime.sleep(3)")], Limits(cell_timeout=60, memory_mb=400))
    watcher.join()
    assert [o.status for o in outcomes] == ["ok"], outcomes
    (group,) = made
    assert max(seen) == [3] * len(group.folders), seen
    assert all(not folder.exists() for folder in group.folders)
    assert asked == [((400 + 32 + 16) << 20, 129)]


@needs_bwrap
@needs_cgroups
def test_a_kernels_groups_are_removed_when_its_grader_is_killed(tmp_path):
    """SIGKILL leaves the grader no last word: the kernel dies with it
    (bubblewrap's --die-with-parent), and the process ``launch`` left
    outside the groups removes them."""
    run = tmp_path / "run"
    (run / "work").mkdir(parents=True)
    grader = subprocess.Popen([sys.executable, "-c", GRADER, str(run)], stdout=subprocess.PIPE, text=True)
    folders = []
    try:
        folders = [Path(folder) for folder in grader.stdout.readline().split()]
        assert folders, "the grader made no group"
        deadline = time.monotonic() + 60
        while len((folders[0] / "cgroup.procs").read_text().split()) < 3:  # bubblewrap's two and the kernel
            assert time.monotonic() < deadline, "the kernel never started"
            time.sleep(0.1)
    finally:
        grader.kill()
        grader.wait()
        grader.stdout.close()
    deadline = time.monotonic() + 15
    while any(folder.exists() for folder in folders) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [folder for folder in folders if folder.exists()]
    if left:
        cgroups.Cgroup(tuple(left), 1).remove()
    assert left == []


@needs_cgroups
def test_the_groups_a_killed_grader_left_are_removed_by_the_next(tmp_path):
    """A grader killed with SIGKILL cannot remove its kernels' groups; the
    next grader on the machine removes those of graders no longer alive."""
    dead = subprocess.Popen([sys.executable, "-c", ""])
    dead.wait()
    first = cgroups.make(64 << 20, 8)
    assert first is not None
    stale = tuple(folder.with_name(f"{cgroups.PREFIX}{dead.pid}-left") for folder in first.folders)
    for folder in stale:
        folder.mkdir()
    alive = tuple(folder.with_name(f"{cgroups.PREFIX}{os.getpid()}-mine") for folder in first.folders)
    for folder in alive:
        folder.mkdir()
    try:
        second = cgroups.make(64 << 20, 8)
        assert second is not None
        assert [folder.exists() for folder in stale] == [False] * len(stale)
        assert [folder.exists() for folder in alive] == [True] * len(alive)  # a live grader's group stays
        second.remove()
    finally:
        first.remove()
        for folder in (*stale, *alive):
            if folder.exists():
                folder.rmdir()


@needs_cgroups
def test_a_group_holds_the_limits_it_was_made_with(tmp_path):
    group = cgroups.make(300 << 20, 40)
    assert group is not None
    try:
        if group.version == 1:
            memory, pids = group.folders
            assert int((memory / "memory.limit_in_bytes").read_text()) == 300 << 20
        else:
            memory = pids = group.folders[0]
            assert int((memory / "memory.max").read_text()) == 300 << 20
        assert (pids / "pids.max").read_text().strip() == "40"
    finally:
        group.remove()
    assert all(not folder.exists() for folder in group.folders)


HOGS = """
import subprocess, sys, time
hog = "import time; b = b'x' * (200 << 20); time.sleep(30)"
hogs = [subprocess.Popen([sys.executable, "-c", hog]) for _ in range(4)]
time.sleep(20)
"""


@needs_bwrap
@needs_cgroups
def test_memory_the_watcher_does_not_see_is_stopped_by_the_memory_cgroup(tmp_path, monkeypatch):
    """Memory the budget's watcher cannot see (here: a watcher blinded on
    purpose, as it is to queued socket buffers or between two looks) is
    still bounded: 800 MB in four processes against a group of 448 MB (400
    MB and its /tmp's 32 and /dev/shm's 16) is killed by the Linux kernel,
    and the submission is told in the budget's words."""
    monkeypatch.setattr(budget, "over", lambda used, limit: "")
    outcomes = _run(tmp_path, [Cell(HOGS)], Limits(cell_timeout=60, memory_mb=400))
    assert outcomes[0].status == "dead", outcomes[0]
    assert outcomes[0].error == (
        "stopped: it used 448 MB of memory in all its processes together, more than the 400 MB a submission may "
        "use (its memory cgroup, which also holds its /tmp and /dev/shm, is 448 MB)"
    ), outcomes[0]
