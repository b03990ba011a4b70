"""The grader's memory and its event loop, whatever its kernels do.

- **Nothing left pending.** nbclient starts three tasks per cell (the
  reply, the output, a look at the kernel every second) and, when a cell
  times out or its kernel is killed, leaves the output one waiting on a
  socket that the kernel's teardown then closes: it failed later with
  "Socket operation on non-socket", logged by asyncio while it formatted the
  traceback (on CPython 3.11.7 that once broke a parse: ``parsing``).
  ``sandbox`` now cancels and awaits every task nbclient started for a cell.
- **A class of every amplifier, in 3 GB.** Exercise 03 from an honest
  student and from one attacker per amplification of issue 18 (findings 6
  and 7: 50 MB printed at once, a forged report of three megabytes, ten
  result messages of 7.4 MB from a cell that is not a probe, a message of
  50 frames of 64 MB, three of 20 frames of 7 MB, one of 300 frames of
  7 MB, /dev/shm and memfds filled) is graded once by ``bpe-lab grade`` in
  a process of its own, which reports its own peak resident memory
  (``VmHWM``). As root it runs in a fresh memory cgroup of 3 GB made inside
  this run's own (v1, or v2 where memory is delegated); where none can be
  made it runs outside one, and the cgroup's own test skips, saying why.
  The grader stays under 500 MB and finishes with a gradebook, its kernels
  and relays are the out-of-memory killer's first choice (``launch``,
  ``relay``), the honest student keeps full marks and each attacker earns
  what its answers earn, never more. Without the caps on what it reads,
  the grader holds the 50 MB message (a second run of that one notebook).
"""

from __future__ import annotations

import asyncio
import contextlib
import csv
import gc
import json
import logging
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from grading_support import DECODE, ENCODE, ROOT, SOLUTIONS, SOLVED, needs_bwrap, submission
from jupyter_client.asynchronous.client import AsyncKernelClient

from bpe_lab.grading.run.relay import RELAY_MEMORY
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


# -- a class of every amplifier, graded in a 3 GB memory cgroup ----------------

#: The memory the whole grading gets: the grader, its relays, the kernels
#: (``--memory-mb 1024`` each, two at once) and all they hold.
CGROUP_BYTES = 3 << 30
ANSWER = SOLVED[f"{ENCODE}_answer"]

#: ``bpe-lab grade ARGS...``, in this process (first moved into the cgroup
#: whose ``cgroup.procs`` is the first argument, unless it is "-"), then its
#: own peak resident memory (``VmHWM``: ru_maxrss would carry over the peak
#: of the pytest process that forked it) as the last line of stderr.
GRADE_AND_PEAK = """
import json, os, sys
if sys.argv[1] != "-":
    with open(sys.argv[1], "w") as procs:  # before anything is imported or started: all it starts is inside
        procs.write(str(os.getpid()))
from bpe_lab.cli import main
code = main(sys.argv[2:])
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"peak_mb": peak >> 10}), file=sys.stderr)
raise SystemExit(code)
"""

#: The same grading through ``grade`` with no caps on what the grader reads
#: (``wire.MAX_MESSAGE``, ``judge.MAX_REPR``): what they save. Its peak and
#: each report's total and encode_word's message, as one line of JSON.
UNCAPPED = """
import json, sys
from bpe_lab.grading.score import judge
from bpe_lab.grading.run import wire
from bpe_lab.grading.commands.grader import Limits, grade
wire.MAX_MESSAGE = judge.MAX_REPR = 1 << 40
reports = grade(json.loads(sys.argv[1]), solutions_dir=sys.argv[2], limits=Limits(cell_timeout=60, memory_mb=1024),
                workers=1)
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"peak_mb": peak >> 10, "reports": [
    {"total": r.total, "message": {t.grade_id: t.message for t in r.tasks}["03_encoding_encode_word"]}
    for r in reports]}))
"""

#: Prints 50 MB of output in one message (100 MB, a kernel of 1 GB could not send).
FLOOD = "print('x' * (50 << 20))\n"
#: The first value each test cell reports becomes a list of a million zeros, three megabytes of text.
FORGE = (
    "import IPython.display as _display\n"
    "_publish = _display.publish_display_data\n"
    "def _forged(data, *args, **kwargs):\n"
    "    big = '[' + '0, ' * (1 << 20) + ']'\n"
    "    forge = lambda r: {**r, 'repr': big} if isinstance(r, dict) and 'repr' in r else r\n"
    "    data = {k: [forge(v[0]), *v[1:]] if isinstance(v, list) and v else v for k, v in data.items()}\n"
    "    return _publish(data, *args, **kwargs)\n"
    "_display.publish_display_data = _forged\n"
)
#: Finding 6: ten result messages of 7.4 MB of [{}, {}, ...] (a gigabyte and a half, parsed), from a
#: cell that is not a probe.
RESULTS = (
    "from IPython.display import publish_display_data\n"
    "_big = [{}] * 1_850_000\n"
    "for _ in range(10):\n"
    "    publish_display_data({'application/vnd.bpe-lab.probe+json': _big})\n"
    "del _big\n"
)
_SEND = (
    "_k = get_ipython().kernel\n"
    "for _ in range({times}):\n"
    "    _k.session.send(_k.iopub_socket, 'display_data', {{'data': {{}}, 'metadata': {{}}}}, "
    "parent=_k.get_parent(), buffers=[_part] * {frames})\n"
)
#: Finding 6: one message whose 64 MB frame repeats 50 times (3.2 GB, received before any size is looked at).
FRAMES = "_part = b'x' * (64 << 20)\n" + _SEND.format(times=1, frames=50) + "del _part\n"
#: Three messages of 20 frames of 7 MB, each frame under MAXMSGSIZE: 420 MB received (zmq holds one at a time).
MANY_FRAMES = "_part = b'x' * (7 << 20)\n" + _SEND.format(times=3, frames=20)
#: One message of 300 frames of 7 MB (2.1 GB, every frame under 8 MB), sent through the kernel's own
#: session: one buffer, sent 300 times, never copied. zmq delivers a message whole: before the relay,
#: the grader held two gigabytes before it could drop the first frame.
FRAME_FLOOD = (
    "_part = b'x' * (7 << 20)\n" + _SEND.format(times=1, frames=300) + "import time; time.sleep(5)\n"
)  # the relay is full and the kernel stopped meanwhile
#: Finding 7: /dev/shm written until full (its tmpfs is 64 MB at most), then 2.4 GB in memfds, which no RSS shows.
FILLER = (
    "_chunk = b'x' * (8 << 20)\n"
    "try:\n"
    "    with open('/dev/shm/fill', 'wb') as _f:\n"
    "        for _ in range(64):\n"
    "            _f.write(_chunk)\n"
    "except OSError:\n"
    "    pass\n"
    "import os, time\n"
    "_fds = [os.memfd_create('hog') for _ in range(40)]\n"
    "for _fd in _fds:\n"
    "    os.write(_fd, b'x' * (60 << 20))\n"
    "time.sleep(20)\n"
)
#: The class: each attacker's code runs in encode_word's answer cell, before its answer.
CLASS = {
    "honest": None,
    "flood": FLOOD,
    "forge": FORGE,
    "results": RESULTS,
    "frames": FRAMES,
    "many_frames": MANY_FRAMES,
    "frame_flood": FRAME_FLOOD,
    "filler": FILLER,
}


def write_class(folder: Path, codes: dict[str, str | None]) -> list[Path]:
    """Exercise 03 per student, ``code`` run before encode_word's answer (None: honest)."""
    paths = []
    for student, code in codes.items():
        path = folder / student / "03_encoding.ipynb"
        path.parent.mkdir(parents=True)
        nbformat.write(submission(None if code is None else code + ANSWER), path)
        paths.append(path)
    return paths


def grade_cli(paths: list[Path], out: Path, *options: str, procs: str = "-") -> tuple[dict, list[dict], dict, int]:
    """``bpe-lab grade`` on ``paths`` in a process of its own (moved into
    the cgroup of ``procs`` first): its peak, the gradebook's rows, each
    task's message by student and grade_id (its ``--json``), its exit status."""
    details = out.with_name(out.stem + "-details.csv")  # the per-task points (the gradebook has one per assignment)
    args = [str(p) for p in paths] + ["--solutions", str(SOLUTIONS), "--out", str(out), "--json", *options]
    args += ["--details", str(details)]
    done = subprocess.run(
        [sys.executable, "-c", GRADE_AND_PEAK, procs, "grade", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=900,
        check=False,
    )
    lines = done.stderr.strip().splitlines()
    peak = json.loads(lines[-1]) if lines and lines[-1].startswith("{") else {"stderr": done.stderr[-3000:]}
    by_student: dict[str, dict] = {}
    tasks = list(csv.DictReader(details.read_text().splitlines())) if out.exists() and details.exists() else []
    for task in tasks:
        row = by_student.setdefault(task["student"], {"student": task["student"]})
        row[task["task"]] = task["task_points"]
    rows = list(by_student.values())
    try:
        reports = json.loads(done.stdout)
    except ValueError:
        reports = []
    messages = {r["student"]: {t["grade_id"]: t["message"] for t in r["tasks"]} for r in reports}
    return peak, rows, messages, done.returncode


def points(rows: list[dict], student: str) -> dict[str, float]:
    """encode_word's and decode's points in ``student``'s gradebook row."""
    row = next(r for r in rows if r["student"] == student)
    return {gid: float(row[gid]) for gid in (ENCODE, DECODE)}


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
def amplified(tmp_path_factory):
    """The class graded by ``bpe-lab grade`` (two kernels at once, 1 GB
    each) in a fresh 3 GB cgroup, or outside one where none can be made
    (``cgroup`` says why): the grader's peak, the gradebook's rows, the
    messages, its exit status, the cgroup's own peak and out-of-memory
    count (v1; None on v2), and the notebooks."""
    folder = tmp_path_factory.mktemp("amplified")
    paths = write_class(folder, CLASS)
    options = ("--workers", "2", "--memory-mb", "1024", "--timeout", "240", "--cell-timeout", "60")
    if why := _why_no_cgroup():
        return {"graded": grade_cli(paths, folder / "gradebook.csv", *options), "cgroup": why, "paths": paths}
    with memory_cgroup(CGROUP_BYTES) as (group, procs):
        graded = grade_cli(paths, folder / "gradebook.csv", *options, procs=procs)
        peak = group / "memory.max_usage_in_bytes"
        oom = group / "memory.oom_control"
        stats = (
            int(peak.read_text()) >> 20 if peak.exists() else None,
            oom.read_text() if oom.exists() else None,
        )
    return {"graded": graded, "cgroup": stats, "paths": paths}


def _total(rows: list[dict], student: str) -> float:
    return sum(points(rows, student).values())


@needs_bwrap
def test_the_graders_memory_is_not_the_submissions_to_set(amplified):
    """Findings 6 and 7: whatever the kernels send, the grader's own peak
    (VmHWM) stays under 500 MB, and every submission gets its row."""
    peak, rows, messages, code = amplified["graded"]
    assert code == 0, (peak, messages)
    assert peak["peak_mb"] < 500, peak
    assert {r["student"] for r in rows} == set(CLASS), rows
    assert points(rows, "honest") == {ENCODE: 3, DECODE: 2}, messages["honest"]
    assert _total(rows, "results") == 5, messages["results"]  # output of a cell that is not a probe: never read
    assert _total(rows, "frames") == 5, messages["frames"]  # refused by zmq, the connection made again
    earned = points(rows, "filler")  # stopped for memory, or not: never more than its answers earn
    assert earned[ENCODE] <= 3 and earned[DECODE] <= 2, messages["filler"]


@needs_bwrap
def test_a_class_graded_in_a_3_gb_cgroup_finishes_with_a_gradebook(amplified):
    """The grading, its relays and kernels all in 3 GB: the kernels and
    relays are the out-of-memory killer's first choice (``launch``,
    ``relay``), never the grader, and the grading ran inside the group."""
    if isinstance(amplified["cgroup"], str):
        pytest.skip(amplified["cgroup"])
    peak, rows, messages, code = amplified["graded"]
    group_peak, oom = amplified["cgroup"]
    assert code == 0 and len(rows) == len(CLASS), (peak, messages)
    assert group_peak is None or 0 < group_peak <= CGROUP_BYTES >> 20, group_peak  # the grading ran in it
    print(f"grader peak {peak['peak_mb']} MB, cgroup peak {group_peak} MB, {oom!r}")


@needs_bwrap
def test_a_submission_that_sends_too_much_is_stopped(amplified):
    _, rows, messages, _ = amplified["graded"]
    message = messages["many_frames"][ENCODE]
    assert _total(rows, "many_frames") < 5 and "MB of messages, more than the 256 MB" in message, message


@needs_bwrap
def test_a_forged_report_too_long_to_be_a_value_is_not_parsed(amplified):
    """Three megabytes of list text where the probe sends at most
    ``MAX_REPR`` characters: refused unparsed (parsed, it takes the grader
    past a gigabyte of syntax tree)."""
    _, rows, messages, _ = amplified["graded"]
    assert _total(rows, "forge") < 5 and "more than a value may have" in messages["forge"][ENCODE], messages["forge"]


@needs_bwrap
def test_a_message_of_300_frames_stops_its_sender_for_memory_and_says_why(amplified):
    """Through the relay, a process whose address space the operating system
    bounds, the grader's own peak stays small (above), the submission is
    stopped for memory and told so, and its other task keeps its points."""
    _, rows, messages, _ = amplified["graded"]
    assert points(rows, "frame_flood") == {ENCODE: 0, DECODE: 2}, messages["frame_flood"]
    said = f"stopped: it sent the grader messages of more than the {RELAY_MEMORY >> 20} MB that may be held"
    assert said in messages["frame_flood"][ENCODE], messages["frame_flood"]
    assert (messages["honest"][ENCODE], messages["honest"][DECODE]) == ("", ""), messages["honest"]


@needs_bwrap
def test_the_grader_drops_messages_too_large_to_read(amplified):
    """A cell that prints 50 MB at once: the message is over
    ``MAX_MESSAGE`` and refused by zmq; with no cap, the grader receives
    and holds it (its peak passes 160 MB for this one notebook alone; 106
    MB where the kernel could not send it)."""
    _, rows, messages, _ = amplified["graded"]
    flood = next(p for p in amplified["paths"] if p.parent.name == "flood")
    done = subprocess.run(
        [sys.executable, "-c", UNCAPPED, json.dumps([str(flood)]), str(SOLUTIONS)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
        check=True,
    )
    uncapped = json.loads(done.stdout.strip().splitlines()[-1])
    assert _total(rows, "flood") == uncapped["reports"][0]["total"] == 5, (messages["flood"], uncapped)
    assert uncapped["peak_mb"] > 160, uncapped
