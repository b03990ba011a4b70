"""The relay between a kernel and the grader (``grading/run/relay.py``): it
forwards only messages of Jupyter's shape, and charges a kernel for what it
sent, never for dying.

zmq delivers a multipart message whole and has no limit on its number of
frames: one message of 300 frames of 7 MB (each under ``MAXMSGSIZE``) was
two gigabytes held in the grader before it could drop it. Through the
relay, a process whose address space the operating system bounds, the
grader's own peak stays small, the submission is stopped for memory, and a
classmate graded beside it keeps full marks: ``test_grading_memory`` grades
that message in a class with the other amplifications, in a process of its
own that reports its peak.
"""

from __future__ import annotations

import tempfile
import time

from hypothesis import given
from hypothesis import strategies as st

from bpe_lab.grading.run.relay import CHANNELS, Relay, front_url, shape


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
