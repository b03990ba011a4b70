"""The grader's end of a kernel's sockets: what it reads, bounded.

What this adds over ``sandbox`` (running cells in a kernel): how much of
the kernel's messages the grader lets into its own memory. A submission
controls everything its kernel sends; the grader's memory must not be its
to set (a gigabyte per message, a thousand messages, one frame repeated).

- **No large frame is received.** Every socket the grader opens to a kernel
  has ``zmq.MAXMSGSIZE`` at ``MAX_MESSAGE``: zmq refuses a larger frame
  while it reads its header, before it holds any of it, and drops the
  connection; the channel sees that (a socket monitor) and connects again
  at once (zmq would not), counting ``MAX_MESSAGE`` bytes received.
- **No large message is kept.** Frames are read one at a time and a
  message is kept only while its frames together stay under
  ``MAX_MESSAGE``; the rest is read and dropped frame by frame, and counted.
  What this does not bound by itself: zmq hands over a message of many
  frames only once all of them have arrived, and has no limit on their
  number; so the grader's sockets connect to the kernel's ``relay``, a
  process of bounded memory that forwards only messages of Jupyter's
  shape, under ``MAX_MESSAGE``, and counts every byte the kernel sent.
- **Only what is asked for is parsed.** Output (printed text, display data,
  results) is decoded only while the cell running is one of the grader's
  probes (``Session.results``); otherwise it is dropped from its header
  alone, never unpacked.
- **A budget for everything.** The bytes received from one kernel are
  counted (``Session.received``); ``sandbox`` stops a submission past
  ``Limits.received_mb``.
"""

from __future__ import annotations

import functools
import json
import time
from queue import Empty
from typing import Any

import zmq

from bpe_lab.grading.run.relay import front_url

__all__ = ["MAX_MESSAGE", "OUTPUT_TYPES", "manager_class"]

#: The largest message the grader reads from a kernel; larger ones are dropped unread.
MAX_MESSAGE = 8 << 20
#: Messages that carry output: read only while a probe runs.
OUTPUT_TYPES = frozenset(
    {"stream", "display_data", "update_display_data", "execute_result", "clear_output", "comm_open", "comm_msg"}
)
_MAX_HEADER = 4096
_POLL_MS = 100  # how soon a dropped connection is made again


def _dropped() -> dict[str, Any]:
    """A stand-in for a message not read: answers no request, shows nothing."""
    header = {"msg_id": "dropped", "msg_type": "stream", "username": "", "session": "", "date": None}
    return {
        "header": header,
        "msg_id": "dropped",
        "msg_type": "stream",
        "parent_header": {},
        "metadata": {},
        "content": {"name": "stdout", "text": ""},
        "buffers": [],
    }


def _kind(header: Any) -> str:
    """A message's type from its header frame, without trusting it to be small or well formed."""
    try:
        data = bytes(header)
        return str(json.loads(data).get("msg_type", "")) if len(data) <= _MAX_HEADER else ""
    except (ValueError, AttributeError, TypeError):
        return ""


@functools.cache
def manager_class(kernel_name: str) -> Any:
    """jupyter_client's kernel manager for one argv (its kernelspec in
    memory: no ``kernel.json`` on disk for a submission to rewrite), whose
    sockets and session read as this module says."""
    from jupyter_client.asynchronous.client import AsyncKernelClient
    from jupyter_client.channels import AsyncZMQSocketChannel
    from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from jupyter_client.session import Session

    class OneSpec(KernelSpecManager):
        argv: list[str] = []

        def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
            return KernelSpec(argv=self.argv, display_name="BPE Lab grading sandbox", language="python")

    class CappedSession(Session):
        received = 0  # bytes from the kernel, all messages
        results = False  # whether output is read now (a probe runs)

        def deserialize(self, msg_list: Any, content: bool = True, copy: bool = True) -> dict[str, Any]:
            if not msg_list or (len(msg_list) > 1 and not self.results and _kind(msg_list[1]) in OUTPUT_TYPES):
                return _dropped()
            return dict(super().deserialize(msg_list, content, copy))

    class CappedChannel(AsyncZMQSocketChannel):
        def __init__(self, socket: Any, session: Any, loop: Any = None) -> None:
            super().__init__(socket, session, loop)
            address = f"inproc://bpe-lab-monitor-{id(self)}-{time.monotonic_ns()}"
            socket.monitor(address, zmq.EVENT_DISCONNECTED)
            self.monitor = socket.context.socket(zmq.PAIR)  # the same context: closed with it
            self.monitor.connect(address)

        async def _connect_again(self) -> None:
            """After zmq dropped the connection (a frame over ``MAXMSGSIZE``), make it again."""
            dropped = False
            while self.monitor.get(zmq.EVENTS) & zmq.POLLIN:
                await self.monitor.recv_multipart()
                dropped = True
            if dropped and self.socket is not None:
                endpoint = self.socket.getsockopt_string(zmq.LAST_ENDPOINT)
                self.socket.disconnect(endpoint)
                self.socket.connect(endpoint)
                self.session.received += MAX_MESSAGE  # type: ignore[attr-defined]

        async def get_msg(self, timeout: float | None = None) -> dict[str, Any]:  # type: ignore[override]
            assert self.socket is not None
            deadline = None if timeout is None else time.monotonic() + timeout
            while True:
                await self._connect_again()
                left = _POLL_MS if deadline is None else min(_POLL_MS, int((deadline - time.monotonic()) * 1000))
                if await self.socket.poll(max(0, left)):
                    return await self._recv()
                if deadline is not None and time.monotonic() >= deadline:
                    raise Empty

        def close(self) -> None:
            if self.socket is not None and not self.socket.closed:
                self.socket.disable_monitor()
            self.monitor.close(linger=0)
            super().close()

        async def _recv(self, **kwargs: Any) -> dict[str, Any]:  # type: ignore[override]
            assert self.socket is not None
            frames: list[bytes] = []
            size, more = 0, True
            while more:
                frame = await self.socket.recv(copy=True)
                size += len(frame)
                if size <= MAX_MESSAGE:
                    frames.append(frame)
                more = bool(self.socket.get(zmq.RCVMORE))
            self.session.received += size  # type: ignore[attr-defined]
            if size > MAX_MESSAGE:
                return _dropped()
            _, message = self.session.feed_identities(frames)
            return dict(self.session.deserialize(message))

    class Capped:
        """Every socket made with ``MAXMSGSIZE``, and connected to the
        kernel's relay when it has one (``relay``: its name)."""

        relay = ""

        def _make_url(self, channel: str) -> str:
            if self.relay:
                return front_url(self.relay, channel)
            return str(super()._make_url(channel))  # type: ignore[misc]

        def _create_connected_socket(self, channel: str, identity: bytes | None = None) -> Any:
            self.context.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE)  # type: ignore[attr-defined]
            return super()._create_connected_socket(channel, identity)  # type: ignore[misc]

    class Client(Capped, AsyncKernelClient):
        shell_channel_class = CappedChannel
        iopub_channel_class = CappedChannel
        stdin_channel_class = CappedChannel
        control_channel_class = CappedChannel

    class Manager(Capped, AsyncKernelManager):
        def __init__(self, argv: list[str], **kwargs: Any) -> None:
            specs = OneSpec()
            specs.argv = argv
            super().__init__(kernel_name=kernel_name, kernel_spec_manager=specs, client_factory=Client, **kwargs)
            self.session = CappedSession(parent=self)

        def client(self, **kwargs: Any) -> Any:
            client: Any = super().client(**kwargs)
            client.relay = self.relay  # its sockets connect where the manager's do
            return client

    return Manager
