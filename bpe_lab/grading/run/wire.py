"""The grader's end of a kernel's sockets: what it reads, bounded.

What this adds over ``sandbox`` (running cells in a kernel): how much of
the kernel's messages the grader lets into its own memory. A submission
controls everything its kernel sends; the grader's memory must not be its
to set (a gigabyte per message, a thousand messages, one frame repeated).

- **No large frame is received.** Every socket the grader opens to a kernel
  comes from a zmq context whose default ``zmq.MAXMSGSIZE`` is
  ``MAX_MESSAGE`` (pyzmq's ``Context.setsockopt``): zmq refuses a larger
  frame while it reads its header, before it holds any of it.
- **No large message is kept.** zmq hands over a message of many frames
  only once all of them have arrived, and has no limit on their number;
  so the grader's sockets connect to the kernel's ``relay``, a process of
  bounded memory that forwards only messages of Jupyter's shape, under
  ``MAX_MESSAGE``, and counts every byte the kernel sent. The client is
  pointed at the relay by the connection info ``KernelManager.client``
  takes (its documented "manual overrides").
- **Only what is asked for is parsed.** Output (printed text, display data,
  results) is decoded only while the cell running is one of the grader's
  probes (``Session.results``); otherwise it is dropped from its header
  alone, never unpacked (``Session.deserialize``, a public method).
- **A budget for everything.** The bytes the relay received from one kernel
  are counted (``relay.Relay.received``; without a relay, ``Session.received``);
  ``sandbox`` stops a submission past ``Limits.received_mb``.

Public API only (issue 30; ``tests/test_grading_public_api.py``). What
this module once overrode of jupyter_client's private methods, and why:

- ``_create_connected_socket`` (to set ``MAXMSGSIZE`` on each socket): now
  the default of the manager's and the client's ``context`` (a public
  trait), set before any socket is made.
- the client's ``_make_url`` (to connect to the relay): now the
  connection info given to ``KernelManager.client(**kwargs)``.
- the channel's ``_recv`` and ``get_msg`` (to read frames one at a time,
  drop a message over ``MAX_MESSAGE`` and connect again after zmq dropped
  a connection): the relay forwards no message over ``MAX_MESSAGE`` and
  no frame the grader's ``MAXMSGSIZE`` would refuse, so nothing is left
  for them to do where a relay runs (Linux, where bubblewrap runs too).
  Without one a large frame drops the connection and the cell times out.
- Still overridden, and why: the manager's ``_make_url``. jupyter_client
  connects the manager's own control socket to the kernel when it starts
  (for ``shutdown_request``), with no public setting for where; connected
  to the kernel directly, a kernel could send it a message of very many
  frames into the grader's memory. It goes with the relay, once each
  submission is graded in a worker process of bounded memory (its
  kernels' floods then land in the worker, which dies, not the grader).
"""

from __future__ import annotations

import functools
import json
from typing import Any

import zmq

from bpe_lab.grading.run.relay import front_info, front_url

__all__ = ["MAX_MESSAGE", "OUTPUT_TYPES", "manager_class"]

#: The largest message the grader reads from a kernel; larger ones are dropped unread.
MAX_MESSAGE = 8 << 20
#: Messages that carry output: read only while a probe runs.
OUTPUT_TYPES = frozenset(
    {"stream", "display_data", "update_display_data", "execute_result", "clear_output", "comm_open", "comm_msg"}
)
_MAX_HEADER = 4096


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


def _size(frame: Any) -> int:
    """A frame's length, a ``zmq.Frame`` or bytes."""
    return len(frame.buffer) if isinstance(frame, zmq.Frame) else len(frame)


@functools.cache
def manager_class(kernel_name: str) -> Any:
    """jupyter_client's kernel manager for one argv (its kernelspec in
    memory: no ``kernel.json`` on disk for a submission to rewrite), whose
    sockets and session read as this module says."""
    from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from jupyter_client.session import Session

    class OneSpec(KernelSpecManager):
        argv: list[str] = []

        def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
            return KernelSpec(argv=self.argv, display_name="BPE Lab grading sandbox", language="python")

    class CappedSession(Session):
        received = 0  # bytes from the kernel, all messages (without a relay: the relay counts them all)
        results = False  # whether output is read now (a probe runs)

        def deserialize(self, msg_list: Any, content: bool = True, copy: bool = True) -> dict[str, Any]:
            self.received += sum(_size(frame) for frame in msg_list)
            if not msg_list or (len(msg_list) > 1 and not self.results and _kind(msg_list[1]) in OUTPUT_TYPES):
                return _dropped()
            return dict(super().deserialize(msg_list, content, copy))

    class Manager(AsyncKernelManager):
        """Every socket made with ``MAXMSGSIZE``, and connected to the
        kernel's relay when it has one (``relay``: its name)."""

        relay = ""

        def __init__(self, argv: list[str], **kwargs: Any) -> None:
            specs = OneSpec()
            specs.argv = argv
            super().__init__(kernel_name=kernel_name, kernel_spec_manager=specs, **kwargs)
            self.session = CappedSession(parent=self)
            self.context.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE)  # every socket it makes (its own context)

        def _make_url(self, channel: str) -> str:  # allowed in test_grading_public_api: see the docstring
            if self.relay:
                return front_url(self.relay, channel)
            return str(super()._make_url(channel))

        def client(self, **kwargs: Any) -> Any:
            """A client whose sockets connect where the manager's do, with ``MAXMSGSIZE``."""
            if self.relay:
                kwargs = {**front_info(self.relay), **kwargs}
            client: Any = super().client(**kwargs)
            client.context.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE)  # before start_channels makes a socket
            return client

    return Manager
