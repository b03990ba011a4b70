"""One budget for everything a submission runs: memory, processes, disk.

What this adds over ``launch`` (limits each process sets on itself) and
``reaper`` (nothing left once grading ends): limits on a submission as a
whole *while* it runs. ``RLIMIT_AS`` bounds each process, so four
subprocesses of 2 GB each take 8 GB; ``RLIMIT_FSIZE`` bounds each file, so
35 files of 60 MB fill 2 GB of disk. ``watch`` looks at the submission
every ``POLL`` seconds and stops it the moment it is over budget:

- **memory**: the resident memory of all its processes together (their
  RSS summed, shared memory they map included: pages that two processes
  share count twice, so the sum is an upper bound and errs against the
  submission, never for it), and the memory it holds as files no folder
  shows (memfds, deleted files kept open: ``held``);
- **processes**: how many there are at once, and **tasks**: how many
  threads they run together (a task each, as the Linux kernel counts
  them: 3,012 threads of one process were one process, and about 30,000
  leave the machine unable to start another). A kernel at rest is 13 to 21
  tasks (ipykernel's and zmq's threads, bubblewrap's two processes), so the
  tasks allowed are ``TASKS_PER_PROCESS`` times the processes;
- **disk**: the bytes in its own folder (blocks allocated, so a sparse file
  counts what it really takes) and in the sandbox's own ``/tmp`` and
  ``/dev/shm`` (memory, each also bounded by its size), and how many
  files they hold.

"Its processes" are the kernel's process and every descendant. In the
sandbox that is everything: an orphan or a ``setsid`` daemon is adopted by
the pid namespace's first process, itself a descendant. Without the
sandbox an orphan is adopted by the machine's init and escapes the count
(``reaper`` still kills it at the end): one more reason the report says so.

Where the grader may make cgroups (root, or a delegated cgroup v2),
each kernel also runs in a memory and a pids cgroup of its own
(``cgroups``), which the Linux kernel enforces at every allocation and
every new task, and which count what this watcher cannot see (socket
buffers, kernel memory). They need root or delegation, which an
instructor's laptop or a Gradescope container may not give, and
``RLIMIT_NPROC`` counts a whole user's processes (and not root's): so
polling stays, everywhere, and its cost is the overshoot of one interval
where there is no cgroup: a submission can go over budget for at most
``POLL`` seconds (each process still within its own rlimits) before it is
stopped.

Processes, their resident memory and their threads are read with psutil.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psutil

__all__ = [
    "POLL",
    "TASKS_PER_PROCESS",
    "Budget",
    "Usage",
    "tree",
    "descendants",
    "usage",
    "over",
    "held",
    "kill_tree",
    "remove_new",
    "watch",
]

#: Seconds between two looks at a running submission.
POLL = 0.2
#: Tasks (threads of all its processes together) a submission may run per process it may run.
TASKS_PER_PROCESS = 4


@dataclass(frozen=True)
class Budget:
    """What one submission may use at once, all its processes together."""

    memory_mb: int = 2048
    processes: int = 32
    disk_mb: int = 256
    files: int = 10_000

    @property
    def tasks(self) -> int:
        """The threads all its processes may run together."""
        return TASKS_PER_PROCESS * self.processes


@dataclass(frozen=True)
class Usage:
    """What a submission used at one look."""

    memory: int = 0  # bytes resident
    processes: int = 0
    disk: int = 0  # bytes allocated in its folder
    files: int = 0
    tasks: int = 0  # threads of all its processes


def tree(root: int) -> list[psutil.Process]:
    """``root`` and every process below it (none if ``root`` is gone)."""
    try:
        top = psutil.Process(root)
        return [top, *top.children(recursive=True)]
    except psutil.Error:
        return []


def _looked(processes: list[psutil.Process]) -> dict[int, tuple[int, int]]:
    """pid -> (resident bytes, threads) of each process still there."""
    found = {}
    for process in processes:
        try:
            with process.oneshot():
                found[process.pid] = (process.memory_info().rss, process.num_threads())
        except psutil.Error:  # gone meanwhile, or a zombie
            continue
    return found


def descendants(root: int) -> dict[int, int]:
    """``root`` and every process below it: pid -> resident bytes."""
    return {pid: rss for pid, (rss, _) in _looked(tree(root)).items()}


def _disk(folder: Path, most_files: int, one_device: bool = False) -> tuple[int, int]:
    """Bytes allocated and files in ``folder`` (counting stops past
    ``most_files``); ``one_device``: not in what is mounted inside it."""
    try:
        device = os.stat(folder).st_dev
    except OSError:
        return 0, 0
    total, files, todo = 0, 0, [str(folder)]
    while todo and files <= most_files:
        try:
            entries = list(os.scandir(todo.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                stat = entry.stat(follow_symlinks=False)
                if one_device and stat.st_dev != device:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    todo.append(entry.path)
                else:
                    total += stat.st_blocks * 512
            except OSError:  # gone meanwhile
                continue
            files += 1
    return total, files


def held(pids: list[int]) -> int:
    """Bytes of memory the processes hold as files no folder shows: memfds
    and deleted files they keep open (each counted once, however many hold
    it). Mapped, they are in the processes' RSS as well: counted twice, against
    the submission, never for it."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for pid in pids:
        try:
            fds = list(os.scandir(f"/proc/{pid}/fd"))
        except OSError:  # gone, or not ours to look at
            continue
        for fd in fds:
            try:
                target = os.readlink(fd.path)
                if not (target.startswith("/memfd:") or target.endswith(" (deleted)")):
                    continue
                stat = os.stat(fd.path)
            except OSError:
                continue
            if (stat.st_dev, stat.st_ino) not in seen:
                seen.add((stat.st_dev, stat.st_ino))
                total += stat.st_blocks * 512
    return total


#: The sandbox's folders in memory (``jail`` mounts a tmpfs of its own on each).
_SCRATCH = ("/tmp", "/dev/shm")


def _device(path: str) -> int | None:
    try:
        return os.stat(path).st_dev
    except OSError:
        return None


def _own_mounts(pids: list[int], most_files: int) -> tuple[int, int]:
    """Bytes and files in the sandbox's own ``/tmp`` and ``/dev/shm`` (memory,
    seen through ``/proc/PID/root`` of a process in its mount namespace;
    nothing without a sandbox, where they are the machine's).

    Only folders that are file systems of the sandbox's own count: a
    process of a sandbox still being set up (bubblewrap's child between
    making its mount namespace and ``pivot_root``, longer on a loaded
    machine) has a namespace of its own but the machine's root, and its
    ``/tmp`` is then the machine's, with every other run's folder in it:
    charged to the kernel starting, it stops it before it can reply."""
    try:
        ours = os.stat("/proc/self/ns/mnt").st_ino
    except OSError:
        return 0, 0
    machine = [_device(folder) for folder in _SCRATCH]
    for pid in pids:
        try:
            if os.stat(f"/proc/{pid}/ns/mnt").st_ino == ours:
                continue
        except OSError:
            continue
        theirs = [_device(f"/proc/{pid}/root{folder}") for folder in _SCRATCH]
        if any(device is None or device == mine for device, mine in zip(theirs, machine)):
            continue  # not in its own root (yet): these are the machine's folders, or none
        sizes = [_disk(Path(f"/proc/{pid}/root{folder}"), most_files, True) for folder in _SCRATCH]
        return sum(b for b, _ in sizes), sum(f for _, f in sizes)
    return 0, 0


def usage(root: int, folder: Path, budget: Budget) -> tuple[Usage, dict[int, int]]:
    """What the processes under ``root`` use now (their memory with what
    they ``held``), and the files in ``folder`` and in their own ``/tmp``
    and ``/dev/shm``."""
    looked = _looked(tree(root))
    disk, files = _disk(folder, budget.files)
    more_disk, more_files = _own_mounts(list(looked), budget.files)
    memory = sum(rss for rss, _ in looked.values()) + held(list(looked))
    tasks = sum(threads for _, threads in looked.values())
    used = Usage(memory, len(looked), disk + more_disk, files + more_files, tasks)
    return used, {pid: rss for pid, (rss, _) in looked.items()}


def over(used: Usage, budget: Budget) -> str:
    """Why ``used`` is over ``budget``, for the learner; "" when it is not."""
    if used.memory > budget.memory_mb << 20:
        return (
            f"it used {used.memory >> 20} MB of memory in all its processes together, "
            f"more than the {budget.memory_mb} MB a submission may use"
        )
    if used.processes > budget.processes:
        return f"it ran {used.processes} processes at once, more than the {budget.processes} a submission may run"
    if used.tasks > budget.tasks:
        return (
            f"it ran {used.tasks} threads at once in all its processes together, "
            f"more than the {budget.tasks} a submission may run"
        )
    if used.disk > budget.disk_mb << 20:
        return f"it wrote {used.disk >> 20} MB of files, more than the {budget.disk_mb} MB a submission may write"
    if used.files > budget.files:
        return f"it made more than {budget.files} files, the most a submission may make"
    return ""


def kill_tree(pids: list[int]) -> None:
    """SIGKILL every pid (the first is the root: with the sandbox, its death
    takes the whole pid namespace along)."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:  # gone already
            pass


def remove_new(folder: Path, keep: set[str]) -> None:
    """Delete what is in ``folder`` but ``keep``: the files a submission
    wrote, so that a kernel restarted after going over budget has room."""
    for entry in folder.iterdir():
        if entry.name not in keep:
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)


async def watch(
    root: int, folder: Path, budget: Budget, stop: Callable[[str], None], also: Callable[[], str] = lambda: ""
) -> None:
    """Look at the submission every ``POLL`` seconds until cancelled; when it
    is over budget (or ``also()`` gives a reason), kill its processes and
    call ``stop(reason)`` once."""
    while True:
        used, pids = await asyncio.to_thread(usage, root, folder, budget)
        reason = over(used, budget) or also()
        if reason:
            kill_tree([root, *(pid for pid in pids if pid != root)])
            stop(reason)
            return
        await asyncio.sleep(POLL)
