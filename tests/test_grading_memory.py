"""The grader's memory and its event loop, whatever its kernels do.

- **Nothing left pending.** nbclient starts three tasks per cell (the
  reply, the output, a look at the kernel every second) and, when a cell
  times out or its kernel is killed, leaves the output one waiting on a
  socket that the kernel's teardown then closes: it failed later with
  "Socket operation on non-socket", logged by asyncio while it formatted the
  traceback (on CPython 3.11.7 that once broke a parse: ``parsing``).
  ``sandbox`` now cancels and awaits every task nbclient started for a cell.
- **A class in 3 GB.** ``bpe-lab grade`` on an honest notebook and two
  attackers (the amplifiers: result messages of 7.4 MB, a message of 64 MB
  frames, a message of 300 frames of 7 MB; /dev/shm and memfds filled), run
  as root in a fresh memory cgroup of 3 GB made inside this run's own
  (v1, or v2 where memory is delegated; skipped, saying why, where neither
  can be written), finishes normally with a gradebook: the grader stays
  under 500 MB, its kernels and relays are the out-of-memory killer's first
  choice (``launch``, ``relay``), the honest student keeps full marks.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from grading_support import DECODE, ENCODE, needs_bwrap, submission
from jupyter_client.asynchronous.client import AsyncKernelClient
from test_grading_harm import RESULTS  # ten result messages of 7.4 MB, sent by a cell that is not a probe
from test_grading_relay import FRAME_FLOOD, grade_cli, points

from bpe_lab.grading.run.sandbox import Cell, Limits, run_cells

#: A kernel killed mid-cell (by itself: as the watcher kills it), one
#: stuck past its cell's time limit, and cells that work after each.
KILLED_MID_CELL = [
    Cell("x = 1\nassert open('/proc/self/oom_score_adj').read().strip() == '1000'"),  # launch's: killed first
    Cell("import os, time\nprint('started', flush=True)\ntime.sleep(0.5)\nos.kill(os.getpid(), 9)"),
    Cell("x + 1", results=True),
    Cell("import time\nwhile True:\n    time.sleep(0.1)"),
    Cell("x + 2", results=True),
]


def _nbclients() -> list[str]:
    """The tasks of nbclient's still pending on this loop."""
    tasks = [t for t in asyncio.all_tasks() if not t.done() and t is not asyncio.current_task()]
    return [t.get_coro().__qualname__ for t in tasks if "NotebookClient" in t.get_coro().__qualname__]


def test_grading_a_killed_kernel_leaves_no_task_pending_and_logs_no_closed_socket(tmp_path, caplog, monkeypatch):
    """No task of nbclient's is pending when a kernel's sockets close (its
    client's ``stop_channels``: after the kill, after the timeout, at the
    end), none is left on the loop afterwards, and nothing is logged about
    a socket that was closed under a task."""
    workdir = tmp_path / "work"
    workdir.mkdir()
    limits = Limits(cell_timeout=3, notebook_timeout=120, memory_mb=1024)
    at_close: list[list[str]] = []
    stop_channels = AsyncKernelClient.stop_channels

    def spied(self: AsyncKernelClient) -> None:
        at_close.append(_nbclients())
        stop_channels(self)

    monkeypatch.setattr(AsyncKernelClient, "stop_channels", spied)

    async def graded() -> tuple[list[str], list[asyncio.Task]]:
        outcomes = await run_cells(KILLED_MID_CELL, workdir, limits)
        await asyncio.sleep(1.5)  # what was left behind meets its closed socket meanwhile
        left = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        return [o.status for o in outcomes], left

    with caplog.at_level(logging.DEBUG):
        loop = asyncio.new_event_loop()
        try:
            statuses, left = loop.run_until_complete(graded())
        finally:
            loop.close()
        del loop
        gc.collect()  # a task that failed unseen is logged when it is collected
    assert statuses == ["ok", "dead", "ok", "timeout", "ok"]
    assert at_close == [[], [], []], at_close  # three kernels: the first, after the kill, after the timeout
    assert left == [], left
    logged = "\n".join(record.getMessage() + str(record.exc_info) for record in caplog.records)
    assert "non-socket" not in logged and "never retrieved" not in logged, logged


# -- a class graded in a 3 GB memory cgroup -----------------------------------

#: The memory the whole grading gets: the grader, its relays, the kernels
#: (``--memory-mb 1024`` each, two at once) and all they hold.
CGROUP_BYTES = 3 << 30
_SEND = (
    "_k = get_ipython().kernel\n"
    "_k.session.send(_k.iopub_socket, 'display_data', {{'data': {{}}, 'metadata': {{}}}}, "
    "parent=_k.get_parent(), buffers=[_part] * {frames})\n"
)
#: One message of 64 MB frames (refused at the first frame's header).
FRAMES_64MB = "_part = b'x' * (64 << 20)\n" + _SEND.format(frames=50) + "del _part\n"
#: /dev/shm written until full (its tmpfs is 64 MB at most).
SHM = (
    "_chunk = b'x' * (8 << 20)\n"
    "try:\n"
    "    with open('/dev/shm/fill', 'wb') as _f:\n"
    "        for _ in range(64):\n"
    "            _f.write(_chunk)\n"
    "except OSError:\n"
    "    pass\n"
)
#: 2.4 GB in memfds, which no RSS shows.
MEMFD = (
    "import os, time\n"
    "_fds = [os.memfd_create('hog') for _ in range(40)]\n"
    "for _fd in _fds:\n"
    "    os.write(_fd, b'x' * (60 << 20))\n"
    "time.sleep(20)\n"
)
CLASS = {
    "honest": [],
    "amplifier": [FRAME_FLOOD, FRAMES_64MB, RESULTS, RESULTS, RESULTS],
    "filler": [SHM, MEMFD],
}


def _own_memory_cgroup() -> Path | None:
    """The cgroup v1 memory folder this process is in, if this process may
    make a group in it; else None."""
    root = Path("/sys/fs/cgroup/memory")
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            folder = root / path.lstrip("/")
            return folder if os.access(folder, os.W_OK) and (folder / "cgroup.procs").exists() else None
    return None


def _own_v2_cgroup() -> Path | None:
    """A cgroup v2 folder with the memory controller enabled for its
    children, where this process may make a group; else None."""
    for mount in (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/unified")):
        if not (mount / "cgroup.controllers").exists():
            continue
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            if line.startswith("0::"):
                folder = mount / line[3:].lstrip("/")
                enabled = (folder / "cgroup.subtree_control").read_text().split()
                if "memory" in enabled and os.access(folder, os.W_OK):
                    return folder
    return None


def _why_no_cgroup() -> str:
    if os.geteuid() != 0:
        return "a memory cgroup is made by root (or a delegated systemd scope); not root here"
    if _own_memory_cgroup() is None and _own_v2_cgroup() is None:
        return "neither a cgroup v1 memory controller nor a cgroup v2 one with memory delegated is writable here"
    return ""


@contextlib.contextmanager
def memory_cgroup(limit: int) -> Iterator[tuple[Path, str]]:
    """A fresh memory cgroup of ``limit`` bytes inside this process's own
    (so that whatever limits this run limits it too): (its folder, its
    file of pids). Removed afterwards, whatever happened, after moving any
    process still in it out to the parent."""
    parent = _own_memory_cgroup()
    v1 = parent is not None
    parent = parent if parent is not None else _own_v2_cgroup()
    assert parent is not None
    group = parent / f"bpe-lab-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    group.mkdir()
    try:
        (group / ("memory.limit_in_bytes" if v1 else "memory.max")).write_text(str(limit))
        if not v1:
            (group / "memory.swap.max").write_text("0")
        yield group, str(group / "cgroup.procs")
    finally:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            pids = (group / "cgroup.procs").read_text().split()
            for pid in pids:
                with contextlib.suppress(OSError):
                    (parent / "cgroup.procs").write_text(pid)
            try:
                group.rmdir()
                break
            except OSError:
                time.sleep(0.1)


@pytest.fixture(scope="module")
def in_cgroup(tmp_path_factory):
    """The class graded by ``bpe-lab grade`` in a fresh 3 GB cgroup: the
    grader's peak, the gradebook's rows, the messages, its exit status, and
    the cgroup's own peak and out-of-memory count (v1; None on v2)."""
    if why := _why_no_cgroup():
        pytest.skip(why)
    folder = tmp_path_factory.mktemp("cgroup")
    paths = []
    for student, cells in CLASS.items():
        nb = submission(None)
        answer = next(
            i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == f"{ENCODE}_answer"
        )
        nb.cells[answer:answer] = [nbformat.v4.new_code_cell(source) for source in cells]
        path = folder / student / "03_encoding.ipynb"
        path.parent.mkdir()
        nbformat.write(nb, path)
        paths.append(path)
    options = ("--workers", "2", "--memory-mb", "1024", "--timeout", "240", "--cell-timeout", "60")
    with memory_cgroup(CGROUP_BYTES) as (group, procs):
        graded = grade_cli(paths, folder / "gradebook.csv", *options, procs=procs)
        peak = group / "memory.max_usage_in_bytes"
        oom = group / "memory.oom_control"
        stats = (
            int(peak.read_text()) >> 20 if peak.exists() else None,
            oom.read_text() if oom.exists() else None,
        )
    return (*graded, stats)


@needs_bwrap
def test_a_class_graded_in_a_3_gb_cgroup_finishes_with_a_gradebook(in_cgroup):
    peak, rows, messages, code, (group_peak, oom) = in_cgroup
    assert code == 0, (peak, messages)
    assert peak["peak_mb"] < 500, peak
    assert {r["student"] for r in rows} == set(CLASS), rows
    assert group_peak is None or 0 < group_peak <= CGROUP_BYTES >> 20, group_peak  # the grading ran in it
    print(f"grader peak {peak['peak_mb']} MB, cgroup peak {group_peak} MB, {oom!r}")


@needs_bwrap
def test_in_the_cgroup_the_honest_student_keeps_full_marks_and_attackers_earn_no_more(in_cgroup):
    """Their attacks run in cells of their own (stopped, the kernel restarted);
    what they earn is what their answer cells earn, never more."""
    _, rows, messages, _, _ = in_cgroup
    assert points(rows, "honest") == {ENCODE: 3, DECODE: 2}, messages["honest"]
    for attacker in ("amplifier", "filler"):
        earned = points(rows, attacker)
        assert all(earned[gid] <= full for gid, full in ((ENCODE, 3), (DECODE, 2))), (earned, messages[attacker])
