"""The grader's memory and its event loop, whatever its kernels do.

- **Nothing left pending.** nbclient starts three tasks per cell (the
  reply, the output, a look at the kernel every second) and, when a cell
  times out or its kernel is killed, leaves the output one waiting on a
  socket that the kernel's teardown then closes: it failed later with
  "Socket operation on non-socket", logged by asyncio while it formatted the
  traceback (on CPython 3.11.7 that once broke a parse: ``parsing``).
  ``sandbox`` now cancels and awaits every task nbclient started for a cell.
"""

from __future__ import annotations

import asyncio
import gc
import logging

from jupyter_client.asynchronous.client import AsyncKernelClient

from bpe_lab.grading.sandbox import Cell, Limits, run_cells

#: A kernel killed mid-cell (by itself: as the watcher kills it), one
#: stuck past its cell's time limit, and cells that work after each.
KILLED_MID_CELL = [
    Cell("x = 1"),
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
