"""A relay between a kernel and the grader: the grader's memory out of a kernel's reach.

What this adds over ``wire`` (the grader's sockets refuse a frame over
``MAXMSGSIZE``): a bound on what zmq holds before the grader reads
anything, so that the grader reads kernels through jupyter_client's
public client, unchanged. zmq delivers a multipart message whole,
and it has no limit on the number of frames, so one message of 300 frames
of 7 MB each (every frame under ``MAXMSGSIZE``) was two gigabytes in the
grader's own process before the first frame could be dropped. A kernel can
send that at no cost to itself (its 300 frames can be one buffer sent 300
times, never copied).

So the grader no longer connects to a kernel. Each kernel gets a relay
process, started by the grader (``Relay``), that connects to the kernel's
five sockets as the grader would, and offers five of its own to the grader
(abstract unix sockets: no file to replace, and unreachable from the
sandbox's network namespace), named as jupyter_client names a kernel's
(``front_info``: the connection info the grader's client is given). What it forwards to the grader is a Jupyter
message of sane shape only: at most ``_MAX_IDS`` identities, the
``<IDS|MSG>`` delimiter, the signature and the four dictionaries, and no
buffers (the grader never reads them; they are outside the signature), all
of it under ``wire.MAX_MESSAGE`` (given to the relay); anything else is
dropped and counted. What the
grader sends to the kernel passes as it is.

Why a process and not a thread of the grader: its memory is bounded by the
operating system (``RLIMIT_AS``, ``RELAY_MEMORY``), not by code that runs
after zmq has already taken the memory. A message too large for the relay
makes zmq's allocation in the relay fail (the connection is dropped, the
partial message freed) or the relay die; either way the grader's own
memory never held it. The relay then tells the grader by exiting with
``_FULL`` (its peak resident memory, ``VmHWM``, came near its limit), and
the grader stops the submission for memory, as its budget would
(``sandbox``). A single frame over ``MAX_MESSAGE`` is refused by zmq while
it reads the frame's header (``MAXMSGSIZE``), as on the grader's sockets:
the connection is made again and, once the kernel answers it, that many
bytes are counted (a kernel that died, and so dropped every connection,
is charged nothing for it).

The bytes received from the kernel, kept or dropped, are counted in eight
bytes of shared memory (a memfd the grader maps) for the grader's budget
of messages (``Limits.received_mb``). The relay dies with the grader
(``PR_SET_PDEATHSIG``), carries the kernel's mark (``reaper``), and is,
like the kernel, the out-of-memory killer's first choice, never the grader.

Usage (by the grader): ``python -I relay.py FRONT BACK_JSON MAX_MESSAGE MEMORY COUNTER_FD GRADER_PID``.
"""

from __future__ import annotations

import contextlib
import json
import mmap
import os
import signal
import struct
import subprocess
import sys
import uuid
from typing import Any

__all__ = ["RELAY_MEMORY", "CHANNELS", "DELIMITER", "Relay", "available", "front_info", "front_url", "shape"]

#: The relay's address space: its interpreter and zmq (about 40 MB) and
#: what it may hold at once of messages it drops (a few of ``wire.MAX_MESSAGE``,
#: or one of about 300 MB).
RELAY_MEMORY = 384 << 20
#: The relay's exit status when a message was too large to hold.
_FULL = 3
#: Identity frames before ``<IDS|MSG>``: one on every channel, at most three kept.
_MAX_IDS = 3
#: A heartbeat is an echo of a few bytes.
_MAX_HEARTBEAT = 4096
DELIMITER = b"<IDS|MSG>"
#: channel -> (the grader's side, the kernel's side): the zmq socket types of each
CHANNELS = {
    "shell": ("ROUTER", "DEALER"),
    "control": ("ROUTER", "DEALER"),
    "stdin": ("ROUTER", "DEALER"),
    "hb": ("ROUTER", "DEALER"),
    "iopub": ("XPUB", "XSUB"),
}
_PR_SET_PDEATHSIG = 1


def available() -> bool:
    """Whether a relay can run here: abstract unix sockets and memfds are Linux's."""
    return sys.platform.startswith("linux") and hasattr(os, "memfd_create")


def front_info(front: str) -> dict[str, Any]:
    """The relay's sockets as jupyter_client's connection info: a client
    given it connects to them (``ipc://IP-PORT``, ``front_url``).

    >>> front_info("r")["ip"], front_info("r")["iopub_port"]
    ('@r', 5)
    """
    return {"transport": "ipc", "ip": f"@{front}", **{f"{c}_port": n for n, c in enumerate(CHANNELS, 1)}}


def front_url(front: str, channel: str) -> str:
    """Where the grader's socket for ``channel`` connects: the relay's, an
    abstract unix socket named as jupyter_client names a port's (``front_info``).

    >>> front_url("r", "shell")
    'ipc://@r-1'
    """
    return f"ipc://@{front}-{list(CHANNELS).index(channel) + 1}"


def shape(channel: str, sizes: list[int], delimiter: int | None, most: int = 8 << 20) -> int:
    """How many of a message's first frames the relay forwards (0: none,
    the message is dropped): ``sizes`` are its frames' sizes, ``delimiter``
    the index of ``<IDS|MSG>`` among its first frames (None: not there),
    ``most`` the most bytes forwarded in one message.

    >>> shape("iopub", [20, 9, 64, 300, 2, 2, 50, 7 << 20], 1)  # a message and one buffer
    7
    >>> shape("iopub", [20, 9, 64, 300, 2, 2], 1)  # no content frame
    0
    >>> shape("shell", [20, 9, 64, 300, 2, 2, 9 << 20], 1)  # content over 8 MB
    0
    """
    if channel == "hb":
        return len(sizes) if len(sizes) <= 8 and sum(sizes) <= _MAX_HEARTBEAT else 0
    if delimiter is None or delimiter > _MAX_IDS or len(sizes) < delimiter + 6:
        return 0
    kept = delimiter + 6  # identities, <IDS|MSG>, hmac, header, parent_header, metadata, content
    return kept if sum(sizes[:kept]) <= most else 0


class Relay:
    """The grader's handle on one kernel's relay: ``front`` names its
    sockets (known before the kernel starts, so the grader's connect to
    them), ``start`` runs it once the kernel's sockets are known."""

    def __init__(self) -> None:
        self.front = f"bpe-lab-relay-{os.getpid()}-{uuid.uuid4().hex[:16]}"
        self.process: subprocess.Popen[bytes] | None = None
        self._counter: mmap.mmap | None = None

    def start(self, kernel: dict[str, Any], most: int, env: dict[str, str]) -> None:
        """Run the relay to the kernel of connection info ``kernel``,
        forwarding messages of at most ``most`` bytes (``env``: what its
        environment adds, the kernel's mark)."""
        back = {key: kernel[key] for key in ("transport", "ip", *(f"{c}_port" for c in CHANNELS))}
        fd = os.memfd_create("bpe-lab-relay-count", os.MFD_CLOEXEC)
        try:
            os.ftruncate(fd, 8)
            self._counter = mmap.mmap(fd, 8)
            args = [json.dumps(back), str(most), str(RELAY_MEMORY), str(fd), str(os.getpid())]
            self.process = subprocess.Popen(
                [sys.executable, "-I", os.path.abspath(__file__), self.front, *args],
                pass_fds=[fd],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                # one arena, and large blocks always mapped and unmapped: what is dropped is given back
                env={"MALLOC_ARENA_MAX": "1", "MALLOC_MMAP_THRESHOLD_": "131072", "LANG": "C.UTF-8", **env},
            )
        finally:
            os.close(fd)

    @property
    def received(self) -> int:
        """Bytes the relay received from the kernel, forwarded or not."""
        return struct.unpack_from("=Q", self._counter)[0] if self._counter is not None else 0

    def why_stopped(self) -> str:
        """Why the relay is no longer running ("": it is, or never started)."""
        if self.process is None or self.process.poll() is None:
            return ""
        if self.process.returncode in (_FULL, -signal.SIGKILL, -signal.SIGABRT):  # full, or killed out of memory
            return (
                f"it sent the grader messages of more than the {RELAY_MEMORY >> 20} MB that may be held between "
                "its kernel and the grader (one message of very many frames?)"
            )
        return f"the relay between its kernel and the grader stopped (exit status {self.process.returncode})"

    def stop(self) -> None:
        """End the relay (nothing is left of it)."""
        if self.process is not None:
            if self.process.poll() is None:
                self.process.kill()
            self.process.wait()
        if self._counter is not None:
            self._counter.close()
            self._counter = None


# ------------------------------------------------------------ the relay process


def _die_with_parent(parent: int) -> None:
    """Be killed when the grader dies (and exit now if it already has)."""
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the reaper's mark is left
        pass
    if os.getppid() != parent:
        os._exit(1)


def _peak_resident() -> int:
    """This process's peak resident memory since it was last reset (bytes)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) << 10
    return 0


def _reset_peak() -> None:
    try:
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")  # resets VmHWM (proc(5))
    except OSError:
        pass


def _event(frames: list[bytes]) -> int:
    """The event number of a zmq socket monitor's message: its first frame
    is the event (16 bits, unsigned) and its value (32 bits), native byte order
    (zmq_socket_monitor(3)). Read here rather than by pyzmq's
    ``parse_monitor_message``, whose module imports asyncio: that import
    was a third of the CPU time a relay used over a kernel's life.

    >>> _event([struct.pack("=Hi", 512, 7), b"ipc://@x"])
    512
    """
    return int(struct.unpack_from("=H", frames[0])[0]) if frames and len(frames[0]) >= 6 else -1


def _url(back: dict[str, Any], channel: str) -> str:
    port = back[f"{channel}_port"]
    if back["transport"] == "tcp":
        return f"tcp://{back['ip']}:{port}"
    return f"{back['transport']}://{back['ip']}-{port}"


def main(argv: list[str]) -> None:
    """Relay until killed; exit ``_FULL`` when a message was too large to hold."""
    front, back = argv[0], json.loads(argv[1])
    most, memory, fd, parent = (int(arg) for arg in argv[2:6])
    _die_with_parent(parent)
    try:
        with open("/proc/self/oom_score_adj", "w") as adj:
            adj.write("1000")  # out of memory, the relay goes before the grader (and stops its submission)
    except OSError:
        pass
    import resource

    import zmq

    counter = mmap.mmap(fd, 8)
    os.close(fd)
    context = zmq.Context()
    identity = uuid.uuid4().bytes  # shell's and stdin's alike: the kernel asks for input where it was asked
    fronts, backs, monitors, received = {}, {}, {}, 0
    refused: set[str] = set()  # channels dropped and connecting again: counted once the kernel answers
    for channel, (front_type, back_type) in CHANNELS.items():
        outward = context.socket(getattr(zmq, front_type))
        outward.linger = 0
        outward.bind(front_url(front, channel))
        inward = context.socket(getattr(zmq, back_type))
        inward.linger = 0
        inward.setsockopt(zmq.MAXMSGSIZE, most)
        inward.rcvhwm = 1  # one whole message held while the one before it is dropped
        if back_type == "DEALER" and channel != "hb":
            inward.identity = identity
        monitor_url = f"inproc://monitor-{channel}"
        inward.monitor(monitor_url, zmq.EVENT_DISCONNECTED | zmq.EVENT_CONNECTED)
        monitor = context.socket(zmq.PAIR)
        monitor.connect(monitor_url)
        inward.connect(_url(back, channel))
        fronts[channel], backs[channel], monitors[channel] = outward, inward, monitor
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    poller = zmq.Poller()
    for sockets in (fronts, backs, monitors):
        for socket in sockets.values():
            poller.register(socket, zmq.POLLIN)
    owner = {
        socket: (channel, kind)
        for kind, sockets in (("front", fronts), ("back", backs), ("monitor", monitors))
        for channel, socket in sockets.items()
    }
    while True:
        for socket, _ in poller.poll():
            channel, kind = owner[socket]
            if kind == "front":  # the grader's: passed as it is (dropped if the kernel takes no more)
                with contextlib.suppress(zmq.Again):
                    backs[channel].send_multipart(socket.recv_multipart(copy=False), copy=False, flags=zmq.NOBLOCK)
                continue
            if kind == "monitor":
                event = _event(socket.recv_multipart())
                if event == zmq.EVENT_CONNECTED:
                    # Connected again to a kernel that is still there: the message
                    # zmq dropped was the kernel's (a frame too large), so it counts.
                    # A kernel that died drops every connection and never answers
                    # again: nothing it did not send is counted against it.
                    if channel in refused:
                        refused.discard(channel)
                        received += most
                else:  # zmq dropped the kernel's connection: a frame too large, memory, or the kernel died
                    if _peak_resident() > memory * 3 // 4:
                        os._exit(_FULL)
                    _reset_peak()
                    url = _url(back, channel)
                    backs[channel].disconnect(url)
                    backs[channel].connect(url)
                    refused.add(channel)
            else:
                received += _forward(socket, fronts[channel], channel, most)
            struct.pack_into("=Q", counter, 0, received)


def _forward(inward: Any, outward: Any, channel: str, most: int) -> int:
    """Read one message from the kernel frame by frame, forward what
    ``shape`` keeps of it; its size."""
    import zmq

    frames: list[Any] = []
    sizes: list[int] = []
    delimiter, more = None, True
    while more:
        frame = inward.recv(copy=False)
        sizes.append(len(frame.buffer))
        if len(frames) <= _MAX_IDS + 6:
            frames.append(frame)
            if delimiter is None and sizes[-1] == len(DELIMITER) and frame.bytes == DELIMITER:
                delimiter = len(sizes) - 1
        more = bool(inward.get(zmq.RCVMORE))
    kept = shape(channel, sizes, delimiter, most)
    if kept:
        outward.send_multipart(frames[:kept], copy=False)
    return sum(sizes)


if __name__ == "__main__":
    main(sys.argv[1:])
