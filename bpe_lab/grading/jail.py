"""A real sandbox for a submission's kernel: bubblewrap.

What this adds over ``sandbox`` (limits, a folder of its own, restarts):
walls. With bubblewrap (``bwrap``, Debian package ``bubblewrap``) the kernel
runs as::

    bwrap --ro-bind / / --dev /dev --proc /proc --size TMP --tmpfs /tmp
          --size 1M --tmpfs REPO --size 1M --tmpfs SOLUTIONS ...   # the instructor's files: empty folders
          --ro-bind VENV VENV --ro-bind PACKAGE REPO/bpe_lab       # bound back: what the kernel needs
          --bind RUN RUN                                           # its own temp dir, the only one it writes
          --remount-ro REPO --remount-ro SOLUTIONS ...             # the empty folders stay empty
          --unshare-net --unshare-pid --unshare-ipc --unshare-uts
          --die-with-parent --new-session --chdir RUN/work
          python -m bpe_lab.grading.launch ...

so it sees the system read-only, its own temporary folder writable, and
neither ``solutions/``, the hidden tests, the rest of the repository
(tests, ``.git``), other submissions nor other kernels' folders; it has no
network, not even 127.0.0.1, so jupyter_client talks to it over unix
sockets in its folder (``transport="ipc"``). ``PACKAGE`` is the package
itself, or the copy without the answers that ``stubs`` makes. Its ``/tmp``
is memory (a tmpfs) and holds at most ``TMP`` bytes; ``budget`` watches
``RUN``.

Where bubblewrap is missing or cannot run (no user namespaces), kernels run
as before, and ``Confinement.note`` says so; the grader puts it in the report.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Confinement", "bwrap", "repository", "confine", "NO_SANDBOX"]

NO_SANDBOX = "graded without a sandbox"


@dataclass(frozen=True)
class Confinement:
    """How one run's kernels are shut in: the ``bwrap`` command that comes
    before the kernel's own (empty: none), the folder for its unix sockets,
    the package copy to import instead of ``bpe_lab`` (or None), and a note
    for the report when there is no sandbox."""

    command: tuple[str, ...] = ()
    ipc_dir: Path | None = None
    package: Path | None = None
    note: str = ""


@functools.cache
def bwrap() -> str | None:
    """The path of a bubblewrap that works here, else None."""
    found = shutil.which("bwrap")
    if found is None:
        return None
    try:
        trial = subprocess.run(
            [found, "--ro-bind", "/", "/", "--unshare-net", "--unshare-pid", "--die-with-parent", "true"],
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return found if trial.returncode == 0 else None


def repository(package_dir: Path) -> Path | None:
    """The source checkout the package lives in (``pyproject.toml`` beside
    it), which holds the instructor's files; None for an installed package."""
    root = package_dir.parent
    return root if (root / "pyproject.toml").exists() or (root / ".git").exists() else None


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _needed(package_dir: Path) -> list[Path]:
    """What the kernel must see even where it lies in a hidden folder: the
    interpreter, its environment and the package."""
    paths = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    paths.add(Path(sys.executable).resolve().parent)
    return sorted(paths | {package_dir})


def confine(
    run_dir: Path,
    workdir: Path,
    package_dir: Path,
    *,
    hide: list[Path],
    package: Path | None = None,
    sandbox: bool | None = None,
    tmp_mb: int = 256,
) -> Confinement:
    """The confinement of one run: kernels in ``run_dir`` (cwd ``workdir``)
    that cannot see ``hide``; ``package`` replaces ``package_dir`` when given.
    ``sandbox``: True requires bubblewrap, False goes without, None uses it
    when it works. ``tmp_mb``: the size of its ``/tmp``."""
    found = bwrap() if sandbox is not False else None
    if found is None:
        if sandbox:
            raise RuntimeError("bubblewrap (bwrap) is not installed or cannot run here: apt-get install bubblewrap")
        why = "bubblewrap is not installed or cannot run here" if sandbox is None else "asked to"
        return Confinement(package=package, note=f"{NO_SANDBOX} ({why})")
    temps = list(dict.fromkeys([Path("/tmp"), Path(tempfile.gettempdir()).resolve()]))  # other kernels' folders
    hidden: list[Path] = []
    for folder in sorted({h.resolve() for h in hide}, key=lambda p: len(p.parts)):
        if folder != Path("/") and not any(_inside(folder, h) for h in temps + hidden):
            hidden.append(folder)
    args = [found, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for folder in temps:
        args += ["--size", str(tmp_mb << 20), "--tmpfs", str(folder)]
    for folder in hidden:
        args += ["--size", str(1 << 20), "--tmpfs", str(folder)]
    covered = temps + hidden  # a checkout or a venv under /tmp is covered too (CI clones there)
    for path in _needed(package_dir):
        if path != package_dir and any(_inside(path, h) for h in covered):
            args += ["--ro-bind", str(path), str(path)]
    if package is not None or any(_inside(package_dir, h) for h in covered):
        args += ["--ro-bind", str(package or package_dir), str(package_dir)]
    ipc_dir = run_dir / "ipc"
    ipc_dir.mkdir(exist_ok=True)
    args += ["--bind", str(run_dir), str(run_dir)]
    for folder in hidden:
        args += ["--remount-ro", str(folder)]
    args += ["--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent", "--new-session"]
    args += ["--chdir", str(workdir)]
    return Confinement(tuple(args), ipc_dir, package)
