"""The walls around a submission's kernel: bubblewrap, from an allow-list.

The threat model. A submission is code from someone who gains by a false
score, by reading what they must not (the answers, the course's salt, a
classmate's notebook) or by harming the grading (the grader, classmates'
kernels, the machine). The grader runs as root on CI, Docker and
Gradescope. Its kernel may touch exactly this, and nothing else:

- **files**: read the system (``/usr``, the loader's files of ``/etc``), the
  interpreter's ``bin/`` and ``lib/``, the allowed distributions of
  site-packages and the ``bpe_lab`` it is given, all read-only; write only
  its own run folder, and a ``/tmp`` and ``/dev/shm`` of a fixed size in
  memory. Nothing else of the machine is there to name.
- **system calls**: those on ``syscalls.ALLOWED`` (what CPython, ipykernel,
  zmq, numpy, regex and the package's threads make), under ``no_new_privs``;
  any other is refused (``EPERM``), raising a socket's buffers is refused,
  and another architecture's calls kill the process. It is uid 65534 with
  every capability set empty, in namespaces of its own (user, pid, mount,
  network with no interface but ``lo``, IPC, UTS), unable to make another.
- **memory of every kind**: each process's address space (``RLIMIT_AS``);
  all its processes' resident memory, shared memory and memfds together
  (``budget``); its ``/tmp`` and ``/dev/shm`` by their size; and, where
  the grader may make one, a memory cgroup of its own that also charges
  page cache, tmpfs and kernel memory (``cgroups``).
- **tasks**: processes and threads counted by the budget, at most
  ``budget.TASKS_PER_PROCESS`` threads per process it may run, and a pids
  cgroup where there can be one; at most 256 open files (``launch``).
- **time**: a limit per cell and per notebook (``sandbox``).
- **the grader**: only Jupyter messages through a relay of bounded memory
  (``relay``), on unix sockets in its folder.

What comes back is data, judged in the grader. The kernel runs as
(``command`` prints the one built here)::

    bwrap --unshare-all --unshare-user --uid 65534 --gid 65534   # nobody, in namespaces of its own
          --cap-drop ALL --disable-userns                        # no capability, no namespace of its own
          --die-with-parent --new-session
          --add-seccomp-fd FD ...                                # the allow-list of system calls (launch)
          --ro-bind /usr /usr --symlink usr/lib /lib ...         # the system, read-only
          --ro-bind /etc/ld.so.cache /etc/ld.so.cache ...        # of /etc only what the loader reads
          --proc /proc --dev /dev
          --size TMP --tmpfs /tmp --size SHM --tmpfs /dev/shm   # memory, of a bounded size
          --ro-bind PREFIX/bin PREFIX/bin --ro-bind PREFIX/lib PREFIX/lib ...   # the interpreter, its venv
          --tmpfs SITE ... --ro-bind SITE/numpy SITE/numpy ...   # site-packages: only what is allowed
          --ro-bind PACKAGE HOME/bpe_lab                         # bpe_lab alone, never its checkout
          --bind RUN RUN --remount-ro / --remount-ro SITE ... --chdir RUN/work
          python launch.py ...

It sees nothing of the machine that it was not given: not ``/root`` or any
home folder, not the checkout around ``bpe_lab`` (``solutions/``, tests,
``.git``), not another clone or backup of the course, not the grader's
folders or other submissions, and of site-packages only what
``distributions.allowed`` lists (no tiktoken, tokenizers, sentencepiece,
subword-nmt or nbgrader). It is uid 65534 with every capability set empty,
so it cannot unmount its ``/proc``, ptrace, or write what it was given
read-only; it has no network, not even 127.0.0.1 (jupyter_client talks to
it over unix sockets in its folder, ``transport="ipc"``), and its own pid
namespace, whose processes all die with it. Its user namespace maps 65534
to the grader's user, so the files the grader made in its folder are its
own to write; they are the only ones.

``PACKAGE`` is the package itself, or a copy to import instead (the stubbed
one of the second run, or a task's own view): whatever folder is given is
mounted where ``bpe_lab`` is imported from.

The interpreter's prefixes are normalised (``python``: its folder without
``..`` or linked folders): started as ``../venv/bin/python``, the same
folder under two names was bound twice and bubblewrap failed.

Where bubblewrap is missing or cannot make a user namespace, or no seccomp
filter can be made (libseccomp or pyseccomp missing: ``syscalls``),
``confine`` refuses (``SandboxUnavailable``, saying why and what to do)
unless the instructor asked to go without (``sandbox=False``,
``--no-sandbox``); then ``Confinement.note`` says so and every report
carries it. Before its first kernel, ``confine`` starts one for real
(``launch --trial``: the same command, binds, limits and filters, that
imports zmq from the allowed site-packages and exits), so a sandbox that
cannot run a kernel refuses up front with bubblewrap's own error, not
with every notebook scored 0.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from bpe_lab.grading.run import syscalls
from bpe_lab.grading.run.distributions import allowed, site_dirs

__all__ = [
    "Confinement",
    "SandboxUnavailable",
    "NO_SANDBOX",
    "MAX_IPC_DIR",
    "UID",
    "WALLS",
    "bwrap",
    "python",
    "why_not",
    "repository",
    "confine",
]

#: The longest folder for a kernel's sockets: a unix socket's path has at most 107 bytes
#: (``sun_path``), and ``sandbox`` names them ``k<N>-<port>`` inside it.
MAX_IPC_DIR = 90

NO_SANDBOX = "graded without a sandbox"
#: The kernel's user and group inside its namespace: nobody.
UID = 65534
#: What every sandbox starts with: namespaces of its own, no privilege
#: (its environment is ``sandbox``'s allow-list, never the grader's).
WALLS = (
    "--unshare-all",
    "--unshare-user",
    "--uid",
    str(UID),
    "--gid",
    str(UID),
    "--cap-drop",
    "ALL",
    "--disable-userns",
    "--die-with-parent",
    "--new-session",
)
#: What the dynamic loader and Python read of /etc.
_ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime")
#: The most ``/dev/shm`` holds, and never more than half of ``/tmp``: the two full
#: together stay under the disk budget they are counted in (``grader`` gives
#: ``/tmp`` half of it), so filling them is ENOSPC in the kernel, not a stop.
_SHM_MB = 64
_HOW = (
    "install bubblewrap (apt-get install bubblewrap) and allow user namespaces "
    "(sysctl -w kernel.unprivileged_userns_clone=1 and user.max_user_namespaces > 0; "
    "in Docker: --security-opt seccomp=unconfined --security-opt apparmor=unconfined, or --privileged), "
    "or grade without a sandbox on purpose: bpe-lab grade --no-sandbox"
)


class SandboxUnavailable(OSError):
    """No sandbox can be made here, and the grader was not told to go without."""


@dataclass(frozen=True)
class Confinement:
    """How one run's kernels are shut in: the ``bwrap`` command that comes
    before the kernel's own (empty: none), the folder for its unix sockets,
    the package copy to import instead of ``bpe_lab`` (or None), a note
    for the report when there is no sandbox, the seccomp filters (BPF
    programs, in hex: ``syscalls.program``) ``launch`` hands to bubblewrap,
    and the megabytes of memory its ``/tmp`` and ``/dev/shm`` may hold."""

    command: tuple[str, ...] = ()
    ipc_dir: Path | None = None
    package: Path | None = None
    note: str = ""
    filters: tuple[str, ...] = ()
    scratch_mb: int = 0


def _system() -> list[str]:
    """The system, read-only: ``/usr``, the ``/bin``, ``/lib*`` links (or
    folders) beside it, and the few files of ``/etc`` the loader reads."""
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    for name in _ETC:
        if (Path("/etc") / name).exists():
            args += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    return args


@functools.cache
def _trial() -> tuple[str | None, str]:
    """(bwrap's path, "") where a sandbox with these walls runs here, else (None, why not)."""
    found = shutil.which("bwrap")
    if found is None:
        return None, "bubblewrap (bwrap) is not installed"
    command = [found, *WALLS, *_system(), "--proc", "/proc", "--dev", "/dev", "--", "/usr/bin/env", "true"]
    try:
        trial = subprocess.run(command, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        return None, f"bubblewrap could not run: {err}"
    if trial.returncode != 0:
        said = trial.stderr.strip().splitlines()[-1:] or [f"exit status {trial.returncode}"]
        return None, f"bubblewrap cannot make its namespaces here ({said[0]})"
    unfiltered = syscalls.unavailable()
    if unfiltered:
        return None, unfiltered
    return found, ""


def bwrap() -> str | None:
    """The path of a bubblewrap that can sandbox a kernel here, else None."""
    return _trial()[0]


def why_not() -> str:
    """Why there can be no sandbox here, and what to do ("" when there can)."""
    reason = _trial()[1]
    return f"{reason}: {_HOW}" if reason else ""


def repository(package_dir: Path) -> Path | None:
    """The source checkout the package lives in (``pyproject.toml`` beside
    it), which holds the instructor's files; None for an installed package."""
    root = package_dir.parent
    return root if (root / "pyproject.toml").exists() or (root / ".git").exists() else None


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _bind(path: Path) -> list[str]:
    """``path`` read-only where it is; a symbolic link as a link."""
    if path.is_symlink():
        return ["--symlink", os.readlink(path), str(path)]
    return ["--ro-bind", str(path), str(path)]


def python() -> Path:
    """The interpreter that runs the kernel, by a path without ``..`` or
    linked folders: its folder resolved, its own name kept (a venv's
    ``python`` is a link to the base interpreter, which would leave the venv)."""
    executable = Path(os.path.abspath(sys.executable))
    return Path(os.path.realpath(executable.parent)) / executable.name


def _interpreter() -> list[str]:
    """The Python that runs the kernel: of each prefix (the venv, the
    installation it was made from) its ``bin``, ``lib`` and
    ``pyvenv.cfg``, never the folders around them; each prefix once,
    by its real path."""
    given = (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)
    prefixes = {Path(os.path.realpath(p)) for p in given}
    prefixes |= {python().parent.parent, Path(os.path.realpath(sys.executable)).parent.parent}
    args: list[str] = []
    for prefix in sorted(prefixes):
        for name in ("bin", "lib", "lib64", "pyvenv.cfg"):
            path = prefix / name
            if (path.exists() or path.is_symlink()) and not _inside(path.resolve(), Path("/usr")):
                args += _bind(path)
    return args


def command(
    run_dir: Path,
    workdir: Path,
    package_dir: Path,
    package: Path | None = None,
    tmp_mb: int = 256,
    hide: tuple[Path, ...] = (),
    needs: tuple[str, ...] = (),
) -> list[str]:
    """The bubblewrap command line (without the kernel's own) for a kernel
    in ``run_dir`` that imports ``package`` (default: ``package_dir``) as
    ``bpe_lab`` (``needs``: the libraries its exercise needs besides, ``distributions.needs``)."""
    found = bwrap()
    if found is None:
        raise SandboxUnavailable(f"no sandbox can be made: {why_not()}")
    args = [found, *WALLS, *_system(), "--proc", "/proc", "--dev", "/dev"]
    args += [
        "--size",
        str(tmp_mb << 20),
        "--tmpfs",
        "/tmp",
        "--size",
        str(min(_SHM_MB, max(1, tmp_mb // 2)) << 20),
        "--tmpfs",
        "/dev/shm",
    ]
    args += _interpreter()
    covers = [str(s) for s in site_dirs()]
    for site in covers:  # empty, then what may be imported bound back in
        args += ["--size", str(1 << 20), "--tmpfs", site]
    for entries in allowed(package or package_dir, needs).values():
        for entry in sorted(entries):
            args += _bind(entry)
    args += ["--ro-bind", str(package or package_dir), str(package_dir)]
    for folder in sorted(hide):  # within what it was given, a folder it must not see
        args += ["--size", str(1 << 20), "--tmpfs", str(folder)]
        covers.append(str(folder))
    args += ["--bind", str(run_dir), str(run_dir)]
    for cover in ["/", *covers]:  # "/": the folders made to hold the mounts, in memory and unbounded
        args += ["--remount-ro", cover]
    return [*args, "--chdir", str(workdir)]


def confine(
    run_dir: Path,
    workdir: Path,
    package_dir: Path,
    *,
    hide: list[Path] | tuple[Path, ...] = (),
    package: Path | None = None,
    sandbox: bool | None = None,
    tmp_mb: int = 256,
    needs: tuple[str, ...] = (),
) -> Confinement:
    """The confinement of one run: kernels in ``run_dir`` (cwd ``workdir``)
    that import ``package`` (default: ``package_dir``) as ``bpe_lab`` and
    see nothing else of the machine (``hide``: folders within what they
    are given that they must not see either). ``sandbox``: False goes
    without (the note says so), True or None requires one and raises
    ``SandboxUnavailable`` where there can be none. ``tmp_mb``: the size
    of its ``/tmp``; ``needs``: libraries the exercise's kernel may import
    besides the package's (``distributions.needs``)."""
    if sandbox is False:
        return Confinement(package=package, note=f"{NO_SANDBOX} (asked to: --no-sandbox)")
    given = [package or package_dir, *_given_paths()]
    inner = tuple(sorted({h.resolve() for h in hide if any(_inside(h.resolve(), g) for g in given)}))
    args = command(run_dir.resolve(), workdir.resolve(), package_dir.resolve(), package, tmp_mb, inner, needs)
    ipc_dir = run_dir / "ipc"
    if len(str(ipc_dir)) > MAX_IPC_DIR:
        raise ValueError(
            f"the grader's temporary folder {run_dir} is too long a path for the kernels' unix sockets "
            f"({len(str(ipc_dir))} characters with /ipc, at most {MAX_IPC_DIR}: a socket's whole path must stay "
            "under 108 bytes); set TMPDIR to a shorter folder, e.g. TMPDIR=/tmp"
        )
    ipc_dir.mkdir(exist_ok=True)
    filters = tuple(program.hex() for program in syscalls.program())
    scratch_mb = tmp_mb + min(_SHM_MB, max(1, tmp_mb // 2))
    confinement = Confinement(tuple(args), ipc_dir, package, filters=filters, scratch_mb=scratch_mb)
    ours = {str(run_dir.resolve()), str((package or package_dir).resolve()), *map(str, inner)}
    walls = tuple(arg for arg in args if arg not in ours and not arg.startswith(str(run_dir.resolve())))
    refused = _tried(walls, confinement, workdir)
    if refused:
        raise SandboxUnavailable(refused)
    return confinement


#: What a trial has said, by the walls it tried (the command without the folders of one run).
_TRIALS: dict[tuple[object, ...], str] = {}
_LAUNCH = Path(__file__).resolve().parent / "launch.py"


def _tried(key: tuple[object, ...], confinement: Confinement, workdir: Path) -> str:
    """Why a kernel cannot start in ``confinement`` ("" when it can),
    trying once per ``key``: the real command, binds and filters, through
    ``launch --trial``, which imports zmq and exits."""
    if key not in _TRIALS:
        env = {
            "BPE_LAB_JAIL": json.dumps(list(confinement.command)),
            "BPE_LAB_SECCOMP": json.dumps(list(confinement.filters)),
            "PATH": os.pathsep.join([str(python().parent), "/usr/bin", "/bin"]),
            "HOME": str(workdir),
            "LANG": "C.UTF-8",
            "MALLOC_ARENA_MAX": "2",
        }
        command = [str(python()), str(_LAUNCH), "--trial", str(2048 << 20), str(64 << 20)]
        try:
            trial = subprocess.run(command, env=env, cwd=workdir, capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as err:
            return f"a sandboxed kernel could not be started here: {err}"
        if trial.returncode != 0:
            said = trial.stderr.strip().splitlines()[-3:] or [f"exit status {trial.returncode}"]
            return f"a sandboxed kernel cannot start here: {' / '.join(said)}"
        _TRIALS[key] = ""
    return _TRIALS[key]


def _given_paths() -> list[Path]:
    """The folders of the interpreter a kernel is given (for ``hide``)."""
    return [Path(p).resolve() for p in (sys.prefix, sys.base_prefix)]
