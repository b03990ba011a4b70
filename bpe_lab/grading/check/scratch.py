"""Temporary folders that outlive no process: one parent, cleared of the dead.

What this adds over ``tempfile.mkdtemp`` (a folder nobody removes once its
process is killed): an owner. ``process_folder(KIND)`` makes
``$TMPDIR/KIND-UID/PID-START-RANDOM/``, named after the process that made it
(its pid and, on Linux, its start time, so a reused pid is told apart), and
first removes every sibling whose process is gone. So a grader killed with
``kill -9`` leaves its folders only until the next run of any grader of
this user, and ``check.text_file`` leaves nothing once its kernel is gone.
``release`` removes one folder, and the parent with it when nothing else
is left there; ``release_at_exit`` registers that for the end of the
process.

The parent is trusted only when it is a real folder (not a link) of this
user that no one else may write to; otherwise a folder of ``mkdtemp``'s
own is used, so a link planted in a shared ``/tmp`` never turns a sweep
against someone else's files.

>>> folder = process_folder("bpe-lab-doctest")
>>> folder.parent.name.startswith("bpe-lab-doctest-"), folder.name.startswith(f"{os.getpid()}-")
(True, True)
>>> release(folder); folder.exists()
False
"""

from __future__ import annotations

import atexit
import contextlib
import os
import secrets
import shutil
import stat
import tempfile
from pathlib import Path

__all__ = ["process_folder", "release", "release_at_exit", "release_registered", "sweep"]


def _started(pid: int) -> str:
    """When process ``pid`` started (clock ticks since boot, from /proc), "0"
    where that cannot be read (not Linux), or "" when there is no such process."""
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
        return stat_line.rpartition(")")[2].split()[19]
    except (OSError, IndexError):
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return ""
    except OSError:  # someone else's process: alive
        return "0"
    return "0"


def _alive(name: str) -> bool:
    """Whether the process a folder ``PID-START-RANDOM`` is named after still runs."""
    pid, _, rest = name.partition("-")
    start = rest.partition("-")[0]
    if not pid.isdigit():
        return True  # not one of ours: left alone
    now = _started(int(pid))
    return bool(now) and (now == start or "0" in (now, start))


def _parent(kind: str) -> Path | None:
    """``$TMPDIR/KIND-UID``, made if need be; None where it is not safely ours."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    parent = Path(tempfile.gettempdir()) / f"{kind}-{uid}"
    with contextlib.suppress(FileExistsError):
        parent.mkdir(mode=0o700)
    try:
        info = os.lstat(parent)
    except OSError:
        return None
    mine = not hasattr(os, "getuid") or info.st_uid == uid
    if not stat.S_ISDIR(info.st_mode) or not mine or info.st_mode & 0o022:
        return None
    return parent


def sweep(parent: Path) -> list[Path]:
    """Remove the folders in ``parent`` whose process is gone; the ones removed."""
    removed = []
    for child in sorted(parent.iterdir()) if parent.is_dir() else []:
        if child.is_dir() and not child.is_symlink() and not _alive(child.name):
            shutil.rmtree(child, ignore_errors=True)
            removed.append(child)
    return removed


def process_folder(kind: str) -> Path:
    """A new folder of this process under ``$TMPDIR/KIND-UID/``, the folders
    of processes that are gone removed first."""
    for _ in range(3):  # the parent may vanish between two steps (another run's release)
        parent = _parent(kind)
        if parent is None:
            return Path(tempfile.mkdtemp(prefix=f"{kind}-"))
        sweep(parent)
        folder = parent / f"{os.getpid()}-{_started(os.getpid()) or 0}-{secrets.token_hex(4)}"
        try:
            folder.mkdir(mode=0o700)
            return folder
        except FileNotFoundError:
            continue
    return Path(tempfile.mkdtemp(prefix=f"{kind}-"))


def release(folder: Path) -> None:
    """Remove ``folder``, and its parent (one of ``process_folder``'s) if
    that is left empty."""
    shutil.rmtree(folder, ignore_errors=True)
    if folder.parent.resolve() != Path(tempfile.gettempdir()).resolve():  # mkdtemp's, the temp folder itself
        with contextlib.suppress(OSError):
            folder.parent.rmdir()  # only when empty: other runs' folders stay


#: The folders ``release_at_exit`` was given, not yet released.
_AT_EXIT: list[Path] = []


def release_at_exit(folder: Path) -> Path:
    """``folder``, removed (``release``) when the process ends normally, or
    sooner by ``release_registered``."""
    _AT_EXIT.append(folder)
    return folder


def release_registered() -> None:
    """Remove now what ``release_at_exit`` would remove at the end of the
    process (a test runner calls it before it checks its temp folder; a
    later ``text_file`` makes a new folder)."""
    while _AT_EXIT:
        release(_AT_EXIT.pop())


atexit.register(release_registered)
