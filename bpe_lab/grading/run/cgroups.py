"""A memory and a pids cgroup per kernel, where the machine lets the grader make them.

What this adds over ``budget`` (which looks at a submission every
``budget.POLL`` seconds): limits the Linux kernel enforces at every
allocation, on memory no process's resident memory shows. 64 unix socket
pairs queued more than a gigabyte of the machine's memory with 11 MB
resident; 3,012 threads were 3,012 tasks of the machine's. A memory cgroup
charges a kernel's pages, page cache, tmpfs and (cgroup v2, or v1's
``memory.kmem``) kernel memory to it, and a pids cgroup counts its tasks,
threads included, and refuses the one too many (``EAGAIN``).

``make`` creates ``bpe-lab-<grader pid>-<token>`` inside the grader's own
cgroup (so whatever limits the grader limits the kernels too):

- cgroup v1 (a ``memory`` and a ``pids`` hierarchy under
  ``/sys/fs/cgroup``, writable as root): ``memory.limit_in_bytes``,
  ``memory.memsw.limit_in_bytes`` and ``memory.kmem.limit_in_bytes`` where
  the Linux kernel still has them, and ``pids.max``;
- cgroup v2 (``/sys/fs/cgroup`` is cgroup2, with ``memory`` and ``pids``
  in the ``cgroup.subtree_control`` of the grader's cgroup, as in the root
  of a container's own cgroup namespace): ``memory.max``,
  ``memory.swap.max`` 0 and ``pids.max``.

The kernel's first process (``launch``) moves itself in before it starts
anything. ``Cgroup.remove`` kills whatever is left in the groups and
removes them when the kernel stops; a grader that was killed (``SIGKILL``
leaves it no last word) leaves empty groups behind, which the next ``make``
on the machine removes (``sweep``: the groups of graders no longer alive).

Where no cgroup can be made (not root, and nothing delegated: an
instructor's laptop, some containers), ``make`` gives None with the reason
in ``why_none``; the budget's watcher and each process's rlimits still
bound the kernel, as before.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import psutil

__all__ = ["PREFIX", "Cgroup", "make", "why_none", "sweep"]

PREFIX = "bpe-lab-"
_ROOT = Path("/sys/fs/cgroup")


@dataclass(frozen=True)
class Cgroup:
    """The groups of one kernel: each folder (one per controller in v1, one in v2) and the version."""

    folders: tuple[Path, ...]
    version: int

    @property
    def procs(self) -> list[str]:
        """The files a process writes its pid to, to join every group."""
        return [str(folder / "cgroup.procs") for folder in self.folders]

    def oom_kills(self) -> int:
        """Processes the out-of-memory killer killed in the group (its limit reached)."""
        for folder in self.folders:
            for name in ("memory.events", "memory.oom_control"):  # v2, v1
                with contextlib.suppress(OSError):
                    for line in (folder / name).read_text().splitlines():
                        key, _, value = line.partition(" ")
                        if key == "oom_kill":
                            return int(value)
        return 0

    def remove(self, patience: float = 5.0) -> None:
        """Kill what is left in the groups and remove them."""
        deadline = time.monotonic() + patience
        for folder in self.folders:
            _remove(folder, deadline)


def _remove(folder: Path, deadline: float) -> None:
    while True:
        for pid in _pids(folder):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        try:
            folder.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:  # busy: a process still dying
            if time.monotonic() > deadline:
                return
            time.sleep(0.05)


def _pids(folder: Path) -> list[int]:
    try:
        return [int(p) for p in (folder / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def _own(controller: str) -> Path | None:
    """This process's cgroup folder for ``controller`` (v1), or its v2 folder (``controller`` "")."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, names, path = line.split(":", 2)
        if (controller and controller in names.split(",")) or (not controller and names == ""):
            base = _ROOT / controller if controller else _ROOT
            return base / path.lstrip("/")
    return None


def _parents() -> tuple[tuple[Path, ...], int] | None:
    """Where this grader may make its kernels' groups: (folders, version), or None."""
    if (_ROOT / "cgroup.controllers").exists():  # the unified hierarchy (v2) is mounted there
        own = _own("")
        if own is None:
            return None
        try:
            delegated = (own / "cgroup.subtree_control").read_text().split()
        except OSError:
            return None
        if {"memory", "pids"} <= set(delegated) and os.access(own, os.W_OK):
            return (own,), 2
        return None
    folders = tuple(p for p in (_own("memory"), _own("pids")) if p is not None)
    if len(folders) == 2 and all((p / "cgroup.procs").exists() and os.access(p, os.W_OK) for p in folders):
        return folders, 1
    return None


def why_none() -> str:
    """Why no cgroup can be made for a kernel here ("" when one can)."""
    if _parents() is not None:
        return ""
    if os.geteuid() != 0:
        return "no cgroup can be made here: not root, and no cgroup v2 with memory and pids delegated"
    return "no cgroup can be made here: no writable cgroup v1 memory and pids hierarchies, nor a delegated cgroup v2"


def sweep(parents: tuple[Path, ...]) -> None:
    """Remove the groups of graders that are no longer alive (killed before they could)."""
    deadline = time.monotonic() + 2
    for parent in parents:
        with contextlib.suppress(OSError):
            for child in parent.iterdir():
                owner = child.name[len(PREFIX) :].partition("-")[0]
                if child.name.startswith(PREFIX) and owner.isdigit() and not psutil.pid_exists(int(owner)):
                    _remove(child, deadline)


def _write(path: Path, value: int | str, required: bool = True) -> None:
    try:
        path.write_text(str(value))
    except OSError:
        if required:
            raise


def make(memory: int, tasks: int) -> Cgroup | None:
    """Groups for one kernel: at most ``memory`` bytes and ``tasks`` tasks;
    None where none can be made (``why_none``)."""
    found = _parents()
    if found is None:
        return None
    parents, version = found
    sweep(parents)
    name = f"{PREFIX}{os.getpid()}-{uuid.uuid4().hex[:12]}"
    folders = tuple(parent / name for parent in parents)
    group = Cgroup(folders, version)
    try:
        for folder in folders:
            folder.mkdir()
        if version == 2:
            _write(folders[0] / "memory.max", memory)
            _write(folders[0] / "memory.swap.max", 0, required=False)
            _write(folders[0] / "pids.max", tasks)
        else:
            memory_folder, pids_folder = folders
            _write(memory_folder / "memory.kmem.limit_in_bytes", memory, required=False)  # before any task joins
            _write(memory_folder / "memory.limit_in_bytes", memory)
            _write(memory_folder / "memory.memsw.limit_in_bytes", memory, required=False)
            _write(pids_folder / "pids.max", tasks)
    except OSError:
        group.remove()
        return None
    return group
