"""The relay between a kernel and the grader (``grading/run/relay.py``): a
message of very many frames never reaches the grader's memory.

zmq delivers a multipart message whole and has no limit on its number of
frames: one message of 300 frames of 7 MB (each under ``MAXMSGSIZE``) was
two gigabytes held in the grader before it could drop it. Through the
relay, a process whose address space the operating system bounds, the
grader's own peak stays small, the submission is stopped for memory, and a
classmate graded beside it keeps full marks.

The grader runs as ``bpe-lab grade`` in a process of its own (``grade_cli``),
which reports its own peak resident memory (``VmHWM``) when it is done;
``test_grading_memory`` runs it inside a memory cgroup the same way.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import pytest
from grading_support import DECODE, ENCODE, ROOT, SOLUTIONS, SOLVED, needs_bwrap, submission
from hypothesis import given
from hypothesis import strategies as st

from bpe_lab.grading.run.relay import CHANNELS, RELAY_MEMORY, Relay, front_url, shape

ANSWER = SOLVED[f"{ENCODE}_answer"]

#: ``bpe-lab grade ARGS...``, in this process (first moved into the cgroup
#: whose ``cgroup.procs`` is the first argument, unless it is "-"), then its
#: own peak resident memory as the last line of stderr.
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

#: One message of 300 frames of 7 MB (2.1 GB, every frame under 8 MB), sent
#: through the kernel's own session: one buffer, sent 300 times, never copied.
FRAME_FLOOD = (
    "_part = b'x' * (7 << 20)\n"
    "_k = get_ipython().kernel\n"
    "_k.session.send(_k.iopub_socket, 'display_data', {'data': {}, 'metadata': {}}, "
    "parent=_k.get_parent(), buffers=[_part] * 300)\n"
    "import time; time.sleep(5)\n"  # the relay is full and the kernel stopped meanwhile
)


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
    args = [str(p) for p in paths] + ["--solutions", str(SOLUTIONS), "--out", str(out), "--json", *options]
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
    rows = list(csv.DictReader(out.open(newline=""))) if out.exists() else []
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


@pytest.fixture(scope="module")
def flooded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("flood")
    paths = write_class(folder, {"flooder": FRAME_FLOOD, "classmate": None})
    return grade_cli(paths, folder / "gradebook.csv", "--workers", "2", "--memory-mb", "1024", "--timeout", "200")


@needs_bwrap
def test_a_message_of_300_frames_never_reaches_the_graders_memory(flooded):
    peak, rows, _, code = flooded
    assert code == 0, peak
    assert peak["peak_mb"] < 500, peak
    assert len(rows) == 2, rows


@needs_bwrap
def test_the_flooder_is_stopped_for_memory_and_its_classmate_keeps_full_marks(flooded):
    _, rows, _, _ = flooded
    assert points(rows, "classmate") == {ENCODE: 3, DECODE: 2}, rows
    assert points(rows, "flooder") == {ENCODE: 0, DECODE: 2}, flooded[2]["flooder"]


@needs_bwrap
def test_the_flooder_is_told_why(flooded):
    """Its feedback names the relay's limit; the classmate's says nothing."""
    messages = flooded[2]
    said = f"stopped: it sent the grader messages of more than the {RELAY_MEMORY >> 20} MB that may be held"
    assert said in messages["flooder"][ENCODE], messages
    assert (messages["classmate"][ENCODE], messages["classmate"][DECODE]) == ("", ""), messages


def _reference(channel: str, sizes: list[int], delimiter: int | None, most: int) -> int:
    """What the grader may read, said plainly: a heartbeat of a few bytes
    whole; else the frames up to and including content (delimiter + 5),
    if the delimiter comes after at most three identities, content exists,
    and those frames fit in ``most``."""
    if channel == "hb":
        return len(sizes) if len(sizes) <= 8 and sum(sizes) <= 4096 else 0
    if delimiter is None or delimiter > 3:
        return 0
    content = delimiter + 5
    if content >= len(sizes):
        return 0
    return content + 1 if sum(sizes[: content + 1]) <= most else 0


@given(
    st.sampled_from(["shell", "iopub", "control", "stdin", "hb"]),
    st.lists(st.integers(0, 3 << 20), max_size=40),
    st.one_of(st.none(), st.integers(0, 6)),
    st.sampled_from([1 << 20, 8 << 20]),
)
def test_the_relay_forwards_only_a_message_of_sane_shape(channel, sizes, delimiter, most):
    kept = shape(channel, sizes, delimiter, most)
    assert kept == _reference(channel, sizes, delimiter, most)
    assert sum(sizes[:kept]) <= max(most, 4096) and kept <= 9


# ------------------------------------------------------------ what a kernel is charged


def _wait_for(condition, seconds: float = 15.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_a_refused_frame_is_charged_and_a_kernel_that_dies_is_not():
    """A frame over the relay's limit drops the connection and, once the
    kernel answers the new one, counts ``most`` bytes; a kernel that dies
    drops all five connections and answers none, and is charged nothing for
    them (each was once counted as a refused frame: 40 MB per killed kernel
    against a submission's 256 MB)."""
    import zmq

    most = 1 << 16
    context = zmq.Context()
    relay = Relay()
    with tempfile.TemporaryDirectory(prefix="r") as folder:
        kernel = {"transport": "ipc", "ip": f"{folder}/k", **{f"{c}_port": i for i, c in enumerate(CHANNELS, 1)}}
        sockets = {}
        for channel in CHANNELS:
            sockets[channel] = context.socket(zmq.PUB if channel == "iopub" else zmq.ROUTER)
            sockets[channel].linger = 0
            sockets[channel].bind(f"ipc://{kernel['ip']}-{kernel[f'{channel}_port']}")
        grader = context.socket(zmq.DEALER)
        grader.linger = 0
        try:
            relay.start(kernel, most, {})
            grader.connect(front_url(relay.front, "shell"))
            shell = sockets["shell"]
            assert _wait_for(lambda: (grader.send_multipart([b"ping"]), shell.poll(200))[1] != 0)
            identity = shell.recv_multipart()[0]
            shell.send_multipart([identity, b"x" * (2 * most)])  # refused at its header
            assert _wait_for(lambda: relay.received >= most), relay.received
            charged = relay.received
            for socket in sockets.values():
                socket.close()  # the kernel dies
            time.sleep(2)
            assert relay.process is not None and relay.process.poll() is None  # the relay lives on
            assert relay.received == charged
        finally:
            relay.stop()
            grader.close()
            for socket in sockets.values():
                socket.close()
            context.term()
