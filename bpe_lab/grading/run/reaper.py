"""Leaving nothing behind: whatever a kernel started dies with it.

What this adds over ``jail`` and ``sandbox`` (a kernel in bubblewrap, stopped
when its cells are done): the processes the kernel itself started. A
submission can start ``sleep 1000 &``, a daemon that forks twice and calls
``setsid``, or a loop that writes files; none of them may outlive its
grading, use the machine's cores while the next submission runs or see the
next submission's folder.

- In the sandbox, bubblewrap's ``--unshare-pid`` gives the kernel a pid
  namespace and ``--die-with-parent`` kills its first process when the
  grader stops the kernel; the Linux kernel then kills every process left
  in that namespace, whatever session or parent it has.
- Everywhere, each run's kernels get ``BPE_LAB_RUN=<token>`` in their
  environment, which their children inherit, and ``reap(token)`` kills
  every process that still carries it (its environment, read with psutil).
  Without a sandbox, a process that clears its own environment escapes this
  net: that is one more reason the report says it graded without a sandbox.
- Where the grader may make them, each kernel's processes are in cgroups
  of their own (``cgroups``), which the grader empties (SIGKILL to what is
  left) and removes when the kernel stops; the groups of a grader that was
  killed are removed by the next grader's first kernel (``cgroups.sweep``).
"""

from __future__ import annotations

import os
import signal
import time
import uuid

import psutil

__all__ = ["MARK", "new_token", "marked", "reap"]

#: The environment variable that marks one run's processes.
MARK = "BPE_LAB_RUN"


def new_token() -> str:
    return uuid.uuid4().hex


def marked(token: str) -> list[int]:
    """The pids of the processes whose environment carries ``token``."""
    found = []
    for process in psutil.process_iter():
        try:
            if process.environ().get(MARK) == token and process.pid != os.getpid():
                found.append(process.pid)
        except psutil.Error:  # gone already, or not ours to read
            continue
    return found


def reap(token: str, patience: float = 5.0) -> int:
    """Kill every process that carries ``token`` until none is left (or
    ``patience`` seconds have passed); how many were killed."""
    killed: set[int] = set()
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        pids = marked(token)
        alive = [pid for pid in pids if not _zombie(pid)]
        if not alive:
            break
        for pid in alive:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except OSError:
                pass
        time.sleep(0.05)
    return len(killed)


def _zombie(pid: int) -> bool:
    """A process that is dead and waits for its parent to collect it (or is gone)."""
    try:
        return bool(psutil.Process(pid).status() == psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return True
