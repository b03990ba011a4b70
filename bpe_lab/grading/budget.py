"""One budget for everything a submission runs: memory, processes, disk.

What this adds over ``launch`` (limits each process sets on itself) and
``reaper`` (nothing left once grading ends): limits on a submission as a
whole *while* it runs. ``RLIMIT_AS`` bounds each process, so four
subprocesses of 2 GB each take 8 GB; ``RLIMIT_FSIZE`` bounds each file, so
35 files of 60 MB fill 2 GB of disk. ``watch`` looks at the submission
every ``POLL`` seconds and stops it the moment it is over budget:

- **memory**: the resident memory of all its processes together (their
  RSS summed: pages that two processes share count twice, so the sum is an
  upper bound and errs against the submission, never for it);
- **processes**: how many there are at once;
- **disk**: the bytes in its own folder (blocks allocated, so a sparse file
  counts what it really takes), and how many files it holds.

"Its processes" are the kernel's process and every descendant. In the
sandbox that is everything: an orphan or a ``setsid`` daemon is adopted by
the pid namespace's first process, itself a descendant. Without the
sandbox an orphan is adopted by the machine's init and escapes the count
(``reaper`` still kills it at the end): one more reason the report says so.

Why not cgroups, which the Linux kernel enforces exactly? They need root
or a delegated systemd scope, which an instructor's laptop or a
Gradescope container may not give; ``RLIMIT_NPROC`` does not apply to
root. Polling works everywhere, and its cost is the overshoot of one
interval: a submission can go over budget for at most ``POLL`` seconds
(each process still within its own rlimits) before it is stopped.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["POLL", "Budget", "Usage", "descendants", "usage", "over", "kill_tree", "remove_new", "watch"]

#: Seconds between two looks at a running submission.
POLL = 0.2
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


@dataclass(frozen=True)
class Budget:
    """What one submission may use at once, all its processes together."""

    memory_mb: int = 2048
    processes: int = 32
    disk_mb: int = 256
    files: int = 10_000


@dataclass(frozen=True)
class Usage:
    """What a submission used at one look."""

    memory: int = 0  # bytes resident
    processes: int = 0
    disk: int = 0  # bytes allocated in its folder
    files: int = 0


def _stat(pid: str) -> tuple[int, int] | None:
    """(parent pid, resident bytes) of one process, None if it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rpartition(")")[2].split()  # after the command name, which may hold spaces
    return int(fields[1]), int(fields[21]) * _PAGE  # ppid, rss (fields 4 and 24 of proc(5))


def descendants(root: int) -> dict[int, int]:
    """``root`` and every process below it: pid -> resident bytes."""
    parents: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and (found := _stat(entry.name)) is not None:
            parents.setdefault(found[0], []).append(int(entry.name))
            rss[int(entry.name)] = found[1]
    tree: dict[int, int] = {}
    todo = [root] if root in rss else []
    while todo:
        pid = todo.pop()
        if pid not in tree:
            tree[pid] = rss[pid]
            todo.extend(parents.get(pid, []))
    return tree


def _disk(folder: Path, most_files: int) -> tuple[int, int]:
    """Bytes allocated and files in ``folder`` (counting stops past ``most_files``)."""
    total, files, todo = 0, 0, [str(folder)]
    while todo and files <= most_files:
        try:
            entries = list(os.scandir(todo.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    todo.append(entry.path)
                else:
                    total += entry.stat(follow_symlinks=False).st_blocks * 512
            except OSError:  # gone meanwhile
                continue
            files += 1
    return total, files


def usage(root: int, folder: Path, budget: Budget) -> tuple[Usage, dict[int, int]]:
    """What the processes under ``root`` and the files in ``folder`` use now."""
    tree = descendants(root)
    disk, files = _disk(folder, budget.files)
    return Usage(sum(tree.values()), len(tree), disk, files), tree


def over(used: Usage, budget: Budget) -> str:
    """Why ``used`` is over ``budget``, for the learner; "" when it is not."""
    if used.memory > budget.memory_mb << 20:
        return (
            f"it used {used.memory >> 20} MB of memory in all its processes together, "
            f"more than the {budget.memory_mb} MB a submission may use"
        )
    if used.processes > budget.processes:
        return f"it ran {used.processes} processes at once, more than the {budget.processes} a submission may run"
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


async def watch(root: int, folder: Path, budget: Budget, stop: Callable[[str], None]) -> None:
    """Look at the submission every ``POLL`` seconds until cancelled; when it
    is over budget, kill its processes and call ``stop(reason)`` once."""
    while True:
        used, tree = await asyncio.to_thread(usage, root, folder, budget)
        reason = over(used, budget)
        if reason:
            kill_tree([root, *(pid for pid in tree if pid != root)])
            stop(reason)
            return
        await asyncio.sleep(POLL)
