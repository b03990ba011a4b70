"""Running a submitted notebook's cells in a kernel of their own, with limits.

What the grader needs from a kernel, and why each piece is here:

- **Limits.** A memory limit (``RLIMIT_AS``, set by the kernel process on
  itself before ipykernel starts: jupyter_client cannot pass a ``preexec_fn``),
  a file-size limit, a time limit per cell and one per notebook.
- **A directory of its own.** The kernel starts in a fresh folder, and HOME
  and IPython's folders point there, so ``rm -rf *``, a history file or a
  matplotlib cache touch nothing else.
- **One budget.** The memory, processes and disk of the kernel and all it
  starts, together, checked while it runs (``budget``).
- **Nothing shared to spoil.** The kernelspec is built in memory, never
  written where a submission could rewrite it for the next one.
- **Little memory in the grader.** A message from the kernel larger than
  ``MAX_MESSAGE`` is dropped unread; of the rest, only errors and results
  sent with ``RESULT_MIME`` are kept, so a cell that prints megabytes is
  read and dropped.
- **Nothing left running.** Whatever the kernel started is killed when
  its cells are done (``reaper``).
- **Going on after a crash.** After a timeout or a dead kernel (``os._exit``,
  ``SIGKILL``, out of memory) a new kernel replays the replayable cells that
  had worked, and the run continues with the next cell.

- **Walls.** With a ``Confinement`` from ``jail``, the kernel runs inside
  bubblewrap (no network, the instructor's files hidden, only its own
  folder writable) and is reached over unix sockets in its folder; with a
  stubbed ``package``, that copy is imported instead of ``bpe_lab``.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat

from bpe_lab.grading.budget import Budget, remove_new, watch
from bpe_lab.grading.jail import Confinement
from bpe_lab.grading.reaper import MARK, new_token, reap

__all__ = ["RESULT_MIME", "KERNEL_NAME", "MAX_MESSAGE", "Limits", "Cell", "Outcome", "kernel_argv", "run_cells"]

#: Results that code in the kernel reports to the grader travel as display
#: data of this type; all other output is dropped.
RESULT_MIME = "application/vnd.bpe-lab.probe+json"
KERNEL_NAME = "bpe-lab-sandbox"
#: The largest message the grader reads from a kernel; larger ones are dropped unread.
MAX_MESSAGE = 8 << 20
_MAX_RESTARTS = 3
_MAX_OUTPUTS = 10  # kept per cell: errors and results only


@dataclass(frozen=True)
class Limits:
    """Resource limits for one notebook. ``memory_mb`` bounds each process's
    address space and all its processes' resident memory together;
    ``processes`` and ``disk_mb`` bound what it runs and writes at once."""

    cell_timeout: float = 30.0
    notebook_timeout: float = 300.0
    memory_mb: int = 2048
    file_size_mb: int = 64
    processes: int = 32
    disk_mb: int = 256

    @property
    def budget(self) -> Budget:
        return Budget(self.memory_mb, self.processes, self.disk_mb)


@dataclass(frozen=True)
class Cell:
    """Code to run; ``replay``: run it again in a restarted kernel if it worked
    (setup and answers yes, tests no: their result is already known)."""

    source: str
    replay: bool = True


@dataclass
class Outcome:
    """What one cell did: ``status`` is ok, error, timeout, dead or not run."""

    status: str
    error: str = ""
    results: list[Any] = field(default_factory=list)


def kernel_argv(limits: Limits) -> list[str]:
    """The kernel's command: ``launch`` by its path, which limits the process
    before ipykernel starts."""
    launch = Path(__file__).resolve().parent / "launch.py"
    return [
        sys.executable,
        str(launch),
        str(limits.memory_mb << 20),
        str(limits.file_size_mb << 20),
        "-f",
        "{connection_file}",
    ]


def _small(part: Any) -> bool:
    return len(part) <= MAX_MESSAGE


@functools.cache
def _manager_class() -> Any:
    """jupyter_client's kernel manager with its kernelspec in memory (no
    ``kernel.json`` on disk for a submission to rewrite) and a session that
    reads no message over ``MAX_MESSAGE``."""
    from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from jupyter_client.session import Session

    class OneSpec(KernelSpecManager):
        argv: list[str] = []

        def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
            return KernelSpec(argv=self.argv, display_name="BPE Lab grading sandbox", language="python")

    class CappedSession(Session):
        def deserialize(self, msg_list: Any, content: bool = True, copy: bool = True) -> dict[str, Any]:
            if all(map(_small, msg_list)):
                return dict(super().deserialize(msg_list, content, copy))
            # too large to read: its size is known without unpacking it, and
            # nothing in it is needed; a stand-in that answers no request
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

    class Manager(AsyncKernelManager):
        def __init__(self, argv: list[str], **kwargs: Any) -> None:
            specs = OneSpec()
            specs.argv = argv
            super().__init__(kernel_name=KERNEL_NAME, kernel_spec_manager=specs, **kwargs)
            self.session = CappedSession(parent=self)

    return Manager


def _kernel_env(workdir: Path, confinement: Confinement, token: str) -> dict[str, str]:
    env = dict(os.environ)
    env[MARK] = token  # every process the kernel starts inherits it: see reaper
    package_root = str(Path(__file__).resolve().parents[2])
    if confinement.package is not None and not confinement.command:
        package_root = os.pathsep.join([str(confinement.package.parent), package_root])
    if confinement.command:
        env["BPE_LAB_JAIL"] = json.dumps(list(confinement.command))
    env.update(
        HOME=str(workdir),
        IPYTHONDIR=str(workdir / ".ipython"),
        MPLCONFIGDIR=str(workdir / ".matplotlib"),
        PYTHONPATH=os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH", "")) if p),
        PYDEVD_DISABLE_FILE_VALIDATION="1",
        PYTHONDONTWRITEBYTECODE="1",  # no __pycache__ written into the package from the kernel
    )
    return env


@functools.cache
def _client_class() -> Any:
    """nbclient's client, keeping only errors and results."""
    from nbclient import NotebookClient

    class QuietClient(NotebookClient):
        def process_message(self, msg: dict[str, Any], cell: Any, cell_index: int) -> Any:
            kind, content = msg["msg_type"], msg["content"]
            if kind == "status":  # "idle" ends the cell
                return super().process_message(msg, cell, cell_index)
            if len(cell.outputs) >= _MAX_OUTPUTS:
                return None
            if kind == "error":
                content["traceback"] = [str(line)[-2000:] for line in content.get("traceback", [])[-5:]]
                content["evalue"] = str(content.get("evalue", ""))[:1000]
            elif not (kind == "display_data" and RESULT_MIME in content.get("data", {})):
                return None
            return super().process_message(msg, cell, cell_index)

    return QuietClient


class _Kernel:
    """One kernel in ``workdir`` (its run folder: ``workdir``'s parent),
    watched against its budget; stop and start again to restart."""

    def __init__(self, workdir: Path, limits: Limits, confinement: Confinement):
        self.workdir, self.limits, self.confinement = workdir, limits, confinement
        self.token = new_token()
        self.client: Any = None  # an nbclient NotebookClient while the kernel runs
        self.watcher: asyncio.Task[None] | None = None
        self.over_budget = ""  # why the watcher stopped the kernel
        self.first_files = {p.name for p in workdir.iterdir()}  # what the grader put there
        self.deadline = time.monotonic() + limits.notebook_timeout

    async def start(self) -> None:
        nb = nbformat.v4.new_notebook()  # type: ignore[no-untyped-call, unused-ignore]
        self.client = _client_class()(
            nb, allow_errors=True, interrupt_on_timeout=False, shutdown_kernel="immediate", startup_timeout=60
        )
        ipc = self.confinement.ipc_dir  # in the sandbox: unix sockets, there is no network
        name = f"connection-{id(self)}-{time.monotonic_ns()}"
        self.client.km = _manager_class()(
            kernel_argv(self.limits),
            connection_file=str((ipc or self.workdir.parent) / f"{name}.json"),
            **({"transport": "ipc", "ip": str(ipc / name)} if ipc else {}),
        )
        self.over_budget = ""
        await self.client.async_start_new_kernel(
            cwd=str(self.workdir),
            env=_kernel_env(self.workdir, self.confinement, self.token),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        root = getattr(self.client.km.provisioner, "pid", None)
        if root is not None:
            self.watcher = asyncio.create_task(watch(root, self.workdir.parent, self.limits.budget, self._stopped))
        await self.client.async_start_new_kernel_client()

    def _stopped(self, reason: str) -> None:
        self.over_budget = reason

    async def stop(self) -> None:
        if self.watcher is not None:
            self.watcher.cancel()
            self.watcher = None
        if self.client is not None and self.client.km is not None:
            try:
                await self.client._async_cleanup_kernel()
            except Exception:  # noqa: BLE001 - a dead kernel may fail to clean up; nothing left to do
                pass
        self.client = None

    async def run(self, source: str) -> Outcome:
        from nbclient.exceptions import CellTimeoutError, DeadKernelError

        timeout = min(self.limits.cell_timeout, self.deadline - time.monotonic())
        if timeout <= 0:
            return Outcome(
                "not run", f"not run: the notebook time limit ({self.limits.notebook_timeout:g} s) was reached"
            )
        cell = nbformat.v4.new_code_cell(source)  # type: ignore[no-untyped-call, unused-ignore]
        self.client.nb.cells = [cell]
        self.client.timeout = max(1, round(timeout))
        replies: list[dict[str, Any]] = []
        self.client.on_cell_executed = lambda **kw: replies.append(kw.get("execute_reply") or {})
        try:
            await self.client.async_execute_cell(cell, 0, store_history=False)  # nothing kept in In, _ih, Out
            outcome = _outcome(cell, replies)
        except CellTimeoutError:
            outcome = Outcome("timeout", f"timed out after {self.client.timeout} s (an infinite loop?)")
        except DeadKernelError:
            outcome = Outcome("dead", "the kernel died (the notebook called os._exit, crashed, or ran out of memory)")
        if self.over_budget:  # whatever the cell came to, the watcher stopped it (a reply may beat the kill)
            return Outcome("dead", f"stopped: {self.over_budget}")
        return outcome


def _outcome(cell: nbformat.NotebookNode, replies: list[dict[str, Any]]) -> Outcome:
    errors = [o for o in cell.outputs if o.get("output_type") == "error"]
    results = [
        o["data"][RESULT_MIME]
        for o in cell.outputs
        if o.get("output_type") == "display_data" and RESULT_MIME in o.get("data", {})
    ]
    status = (replies[-1].get("content", {}).get("status") if replies else None) or "error"
    if errors or status != "ok":
        text = _error_text(errors[0]) if errors else f"the cell ended with status {status!r}"
        return Outcome("error", text, results)
    return Outcome("ok", "", results)


def _error_text(error: dict[str, Any]) -> str:
    name, value = str(error.get("ename", "Error")), str(error.get("evalue", ""))
    if name == "SystemExit":
        return "SystemExit: the notebook called sys.exit() or exit()"
    return f"{name}: {value}" if value else name


async def run_cells(
    cells: list[Cell], workdir: Path, limits: Limits, confinement: Confinement | None = None
) -> list[Outcome]:
    """Run ``cells`` in order in a fresh kernel (confined by ``confinement``,
    default: not at all); one outcome per cell.

    After a timeout or a dead kernel, a new kernel replays the replayable
    cells that had worked and the run goes on (at most a few times). Cells
    never reached get the reason the run stopped.
    """
    kernel = _Kernel(workdir, limits, confinement or Confinement())
    outcomes: list[Outcome] = []
    replay: list[str] = []
    restarts, stopped = 0, ""
    try:
        await kernel.start()
        for cell in cells:
            outcome = await kernel.run(cell.source)
            outcomes.append(outcome)
            if outcome.status == "ok" and cell.replay:
                replay.append(cell.source)
            if outcome.status == "not run":
                stopped = outcome.error
                break
            if outcome.status in ("timeout", "dead"):
                restarts += 1
                stopped = (
                    "not run: too many kernel restarts" if restarts > _MAX_RESTARTS else await _restart(kernel, replay)
                )
                if stopped:
                    break
    except Exception as err:  # noqa: BLE001 - a kernel that cannot start must not crash the grader
        hint = f" (is the memory limit of {limits.memory_mb} MB too low?)" if "before replying" in str(err) else ""
        stopped = f"the kernel could not run this notebook: {type(err).__name__}: {err}{hint}"
    finally:
        await kernel.stop()
        await asyncio.to_thread(reap, kernel.token)  # what the kernel started, and a kernel that would not stop
    return outcomes + [Outcome("not run", stopped or "not run") for _ in cells[len(outcomes) :]]


async def _restart(kernel: _Kernel, replay: list[str]) -> str:
    """A fresh kernel with the cells that had worked run again; "" when
    that worked, else why the run cannot go on. After going over budget,
    the files the kernel wrote go first (they would stop the next one too)."""
    await kernel.stop()
    if kernel.over_budget:
        await asyncio.to_thread(remove_new, kernel.workdir, kernel.first_files)
    await kernel.start()
    for source in replay:
        outcome = await kernel.run(source)
        if outcome.status == "not run":
            return outcome.error
        if outcome.status in ("timeout", "dead"):
            return f"not run: the kernel could not be restored ({outcome.error})"
    return ""
