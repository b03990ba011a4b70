"""Running a submitted notebook's cells in a kernel of their own, with limits.

What the grader needs from a kernel, and why each piece is here:

- **Limits.** A memory limit (``RLIMIT_AS``, set by the kernel process on
  itself before ipykernel starts: jupyter_client cannot pass a ``preexec_fn``),
  a file-size limit, a time limit per cell and one per notebook. The address
  space is what the kernel uses, not what glibc reserves: with a malloc arena
  of 64 MB for each of its threads a kernel's address space was 814 MB at
  rest (58 MB resident), and at a limit of 850 MB importing numpy killed it
  (a thread that meets another in malloc may take one more arena: a busy
  machine leaves less still); with two arenas (``MALLOC_ARENA_MAX``; the
  relay runs with one) it is 348 MB.
- **A directory of its own.** The kernel starts in a fresh folder, and HOME
  and IPython's folders point there, so ``rm -rf *``, a history file or a
  matplotlib cache touch nothing else.
- **One budget.** The memory, processes, threads and disk of the kernel
  and all it starts, together, checked while it runs (``budget``), and,
  where the grader may make them, a memory and a pids cgroup per kernel
  that the Linux kernel enforces (``cgroups``: its memory limit is the
  budget's and the size of its ``/tmp`` and ``/dev/shm``; its tasks one
  more than the budget's, so that the watcher sees a submission that
  reaches it). A kernel the out-of-memory killer stopped in its cgroup is
  told so.
- **Nothing shared to spoil.** The kernelspec is built in memory, never
  written where a submission could rewrite it for the next one.
- **Little memory in the grader.** The kernel's messages pass a relay
  process of bounded memory (``relay``: a message of very many frames
  stops the submission for memory, never reaches the grader), zmq refuses
  a frame larger than ``MAX_MESSAGE``, output is decoded only while a
  probe runs, and of that only errors and one probe-shaped ``RESULT_MIME``
  message per cell are kept (``wire``); past ``Limits.received_mb`` of
  messages the submission is stopped.
- **None of the grader's environment.** The kernel's is an allow-list
  (``kernel_env``): no course salt, nothing the instructor exported.
- **Nothing left running.** Whatever the kernel started is killed when
  its cells are done (``reaper``).
- **Measured cases.** A probe cell that marks a case the grader measures
  itself (``measure``) is followed by that case's cells: an untimed setup,
  timed cells around which the grader reads the kernel tree's CPU time or
  samples its memory from ``/proc``, an untimed cleanup; the grader's
  verdict replaces what the kernel said for the case. A timed cell that
  times out or kills the kernel fails that case alone, and the kernel is
  restarted as after any crash.
- **Going on after a crash.** After a timeout or a dead kernel (``os._exit``,
  ``SIGKILL``, out of memory) a new kernel replays the replayable cells that
  had worked, and the run continues with the next cell, unless that cell
  needs the one that got stuck (``Cell.after``: a test's hidden calls after
  its visible check's).

- **Public API only.** The kernel is driven by jupyter_client's public
  client (``execute(store_history=False)``, ``get_iopub_msg``,
  ``get_shell_msg``, ``is_alive``, ``shutdown_kernel``), in one coroutine
  per cell (``_Kernel._execute``). It was driven by nbclient's
  ``NotebookClient``, with three of its private methods overridden
  (``_async_poll_for_reply``, ``_async_poll_output_msg``,
  ``_async_poll_kernel_alive``) only to find the three tasks nbclient
  starts for a cell: after a timeout it left one waiting on a socket the
  kernel's teardown closed, which failed later, logged by asyncio; and
  ``_async_cleanup_kernel`` was called to stop a kernel. Reading the
  messages itself, the grader starts no task for a cell, so none is left
  over, and it keeps only what it reads (errors and one result).

- **Walls.** With a ``Confinement`` from ``jail``, the kernel runs inside
  bubblewrap as nobody with no capability, seeing only what it is given
  (no network, only its own folder writable), and is reached over unix
  sockets in its folder; with a ``package``, that copy is imported
  instead of ``bpe_lab``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from queue import Empty
from typing import Any

import zmq
import zmq.asyncio

from bpe_lab.grading.run import cgroups, wire
from bpe_lab.grading.run.budget import Budget, remove_new, watch
from bpe_lab.grading.run.jail import Confinement, python
from bpe_lab.grading.run.measure import (
    OVER,
    TRIES,
    Measured,
    PeakMemory,
    beyond_load,
    cpu_seconds,
    decide,
    planned,
)
from bpe_lab.grading.run.reaper import MARK, new_token, reap
from bpe_lab.grading.run.relay import Relay
from bpe_lab.grading.run.relay import available as relay_available
from bpe_lab.grading.run.wire import MAX_MESSAGE, manager_class

__all__ = [
    "RESULT_MIME",
    "KERNEL_NAME",
    "MAX_MESSAGE",
    "KEPT_ENV",
    "ONE_THREAD",
    "STUCK",
    "Limits",
    "Cell",
    "Outcome",
    "kernel_argv",
    "kernel_env",
    "run_cells",
]

#: Results that code in the kernel reports to the grader travel as display
#: data of this type; all other output is dropped.
RESULT_MIME = "application/vnd.bpe-lab.probe+json"
KERNEL_NAME = "bpe-lab-sandbox"
#: The outcomes after which the kernel is started again: its state is lost or stuck.
STUCK = frozenset({"timeout", "dead"})
_MAX_RESTARTS = 3
_KERNELS = itertools.count()  # numbers the kernels this process starts, for their sockets' names
_MAX_OUTPUTS = 10  # kept per cell: errors and results only
_MAX_CASES = 1000  # hidden calls in one probe, at most
_STARTUP_TIMEOUT = 60  # seconds for a kernel to answer its first request


@dataclass(frozen=True)
class Limits:
    """Resource limits for one notebook. ``memory_mb`` bounds each process's
    address space and all its processes' resident memory together;
    ``processes`` and ``disk_mb`` bound what it runs and writes at once;
    ``received_mb`` what the grader reads from its kernels, all messages."""

    cell_timeout: float = 30.0
    notebook_timeout: float = 300.0
    memory_mb: int = 2048
    file_size_mb: int = 64
    processes: int = 32
    disk_mb: int = 256
    received_mb: int = 256

    @property
    def budget(self) -> Budget:
        return Budget(self.memory_mb, self.processes, self.disk_mb)


@dataclass(frozen=True)
class Cell:
    """Code to run; ``replay``: run it again in a restarted kernel if it worked
    (setup and answers yes, tests no: their result is already known);
    ``results``: a probe, whose one ``RESULT_MIME`` message the grader reads
    (of every other cell it reads only errors); ``measure``: the grader
    measures the cases the probe marks (``measure``). False where a second
    run, in which the task's answers have no body, measures them instead
    (``grader``): a case is measured once, where its answer cannot be
    delegated to, and passes here unless its call raised or reached a
    forbidden function (the kernel's word, believed where it costs points);
    the lower score of the two runs stands. ``after``: an earlier cell's
    index, and why this one is not run when that one timed out or its
    kernel died (a test's hidden calls after its visible check's: that
    failure already costs the whole task, and a function that loops
    forever would cost a time limit and a restarted kernel again)."""

    source: str
    replay: bool = True
    results: bool = False
    measure: bool = True
    after: tuple[int, str] | None = None


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
        str(python()),
        str(launch),
        str(limits.memory_mb << 20),
        str(limits.file_size_mb << 20),
        "-f",
        "{connection_file}",
    ]


#: The thread pools of numpy's BLAS, OpenMP and Rust's rayon: one thread, not
#: one per core of the machine (a kernel's threads count in its budget).
ONE_THREAD = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "RAYON_NUM_THREADS")

#: What a kernel keeps of the grader's environment (everything else, the
#: course's salt and whatever the instructor exported, it never sees).
KEPT_ENV = ("LANG", "LC_ALL", "LC_CTYPE", "TERM", "PYTHONHASHSEED", "TZ")


def kernel_env(workdir: Path, confinement: Confinement, token: str, outside: dict[str, str]) -> dict[str, str]:
    """The environment of a kernel in ``workdir``: an allow-list, not the
    grader's ``outside`` environment. PATH is the interpreter's folder and
    the system's, HOME and IPython's and matplotlib's folders are its own,
    ``bpe_lab`` is found on PYTHONPATH, and ``MARK`` tells its processes
    (``reaper``); of ``outside`` only ``KEPT_ENV``."""
    env = {name: outside[name] for name in KEPT_ENV if name in outside}
    env.setdefault("LANG", "C.UTF-8")
    package_root = str(Path(__file__).resolve().parents[3])
    if confinement.package is not None and not confinement.command:
        package_root = os.pathsep.join([str(confinement.package.parent), package_root])
    if confinement.command:
        env["BPE_LAB_JAIL"] = json.dumps(list(confinement.command))
        env["BPE_LAB_SECCOMP"] = json.dumps(list(confinement.filters))
    env.update({name: "1" for name in ONE_THREAD})
    env.update(
        {MARK: token},  # every process the kernel starts inherits it: see reaper
        PATH=os.pathsep.join([str(python().parent), "/usr/local/bin", "/usr/bin", "/bin"]),
        HOME=str(workdir),
        IPYTHONDIR=str(workdir / ".ipython"),
        MPLCONFIGDIR=str(workdir / ".matplotlib"),
        PYTHONPATH=package_root,
        PYDEVD_DISABLE_FILE_VALIDATION="1",
        PYTHONDONTWRITEBYTECODE="1",  # no __pycache__ written into the package from the kernel
        MALLOC_ARENA_MAX="2",  # the memory limit counts what the kernel uses, not glibc's empty reservations
    )
    return env


def _plausible(results: Any) -> bool:
    """Whether a probe's message has the probe's shape (a list of small
    dicts): a forged one of a million items is not kept until judged."""
    return (
        isinstance(results, list)
        and len(results) <= _MAX_CASES
        and all(isinstance(r, dict) and len(r) <= 4 for r in results)
    )


#: After a cell's reply, how long its last output (the kernel's "idle") may take (nbclient's ``iopub_timeout``).
_IOPUB_GRACE = 4.0
#: How often a running cell's kernel is looked at (a kernel that died answers nothing).
_ALIVE_EVERY = 1.0


class _Stuck(Exception):
    """A cell that ran past its time limit (``status``: timeout) or whose kernel died (dead)."""

    def __init__(self, status: str) -> None:
        super().__init__(status)
        self.status = status


def _kept(msg: dict[str, Any], outputs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """What the grader keeps of one output message of a cell (None: nothing):
    errors, shortened, and one probe-shaped ``RESULT_MIME`` display."""
    kind, content = msg.get("msg_type"), msg.get("content") or {}
    if len(outputs) >= _MAX_OUTPUTS or not isinstance(content, dict):
        return None
    if kind == "error":
        traceback = content.get("traceback", [])
        return {
            "output_type": "error",
            "ename": str(content.get("ename", "Error"))[:200],
            "evalue": str(content.get("evalue", ""))[:1000],
            "traceback": [str(line)[-2000:] for line in (traceback if isinstance(traceback, list) else [])[-5:]],
        }
    data = content.get("data")
    if kind == "display_data" and isinstance(data, dict) and _plausible(data.get(RESULT_MIME)):
        if any(RESULT_MIME in o.get("data", {}) for o in outputs):
            return None  # a probe sends one
        return {"output_type": "display_data", "data": {RESULT_MIME: data[RESULT_MIME]}}
    return None


class _Kernel:
    """One kernel in ``workdir`` (its run folder: ``workdir``'s parent),
    watched against its budget; stop and start again to restart."""

    def __init__(self, workdir: Path, limits: Limits, confinement: Confinement):
        self.workdir, self.limits, self.confinement = workdir, limits, confinement
        self.token = new_token()
        self.km: Any = None  # jupyter_client's kernel manager while the kernel runs (``wire``)
        self.kc: Any = None  # and its client, whose sockets connect to the relay
        self.poller: Any = None  # the client's shell and iopub sockets, waited on together
        self.relay: Relay | None = None  # between the kernel and the grader's sockets (relay)
        self.watcher: asyncio.Task[None] | None = None
        self.cgroup: cgroups.Cgroup | None = None  # its memory and pids cgroups, where they can be made
        self.over_budget = ""  # why the watcher stopped the kernel
        self.received = 0  # bytes read from the kernels stopped so far
        self.first_files = {p.name for p in workdir.iterdir()}  # what the grader put there
        self.deadline = time.monotonic() + limits.notebook_timeout

    async def start(self) -> None:
        ipc = self.confinement.ipc_dir  # in the sandbox: unix sockets, there is no network
        name = f"k{next(_KERNELS)}"  # short: a unix socket's whole path has at most 107 bytes (jail.MAX_IPC_DIR)
        self.km = manager_class(KERNEL_NAME)(
            kernel_argv(self.limits),
            connection_file=str((ipc or self.workdir.parent) / f"{name}.json"),
            **({"transport": "ipc", "ip": str(ipc / name)} if ipc else {}),
        )
        self.relay = Relay() if relay_available() else None
        if self.relay is not None:  # the grader's sockets connect to the relay, never to the kernel
            self.km.relay = self.relay.front
        self.over_budget = ""
        env = kernel_env(self.workdir, self.confinement, self.token, dict(os.environ))
        budget = self.limits.budget
        memory = (self.limits.memory_mb + self.confinement.scratch_mb) << 20
        self.cgroup = await asyncio.to_thread(cgroups.make, memory, budget.tasks + 1)
        if self.cgroup is not None:
            env["BPE_LAB_CGROUP"] = json.dumps(self.cgroup.procs)
        await self.km.start_kernel(cwd=str(self.workdir), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if self.relay is not None:
            self.relay.start(self.km.get_connection_info(), wire.MAX_MESSAGE, {MARK: self.token})
        root = getattr(self.km.provisioner, "pid", None)
        if root is not None:
            self.watcher = asyncio.create_task(
                watch(root, self.workdir.parent, self.limits.budget, self._stopped, self._too_much_received)
            )
        self.kc = self.km.client()
        self.kc.allow_stdin = False
        self.kc.start_channels()
        await self.kc.wait_for_ready(timeout=_STARTUP_TIMEOUT)
        self.poller = zmq.asyncio.Poller()
        for channel in (self.kc.shell_channel, self.kc.iopub_channel):
            self.poller.register(channel.socket, zmq.POLLIN)

    @property
    def root(self) -> int | None:
        """The pid of the kernel's first process (in the sandbox, bubblewrap's), None before it starts."""
        if self.km is None:
            return None
        return getattr(self.km.provisioner, "pid", None)

    def _stopped(self, reason: str) -> None:
        self.over_budget = reason

    def _sessions(self) -> list[Any]:
        """The sessions reading this kernel's messages (the manager's and its client's)."""
        found = [getattr(self.km, "session", None), getattr(self.kc, "session", None)]
        return list({id(s): s for s in found if hasattr(s, "received")}.values())

    def _too_much_received(self) -> str:
        """Why the grader will read no more of this submission's messages,
        or why its cgroup's out-of-memory killer stopped it ("": neither)."""
        if self.cgroup is not None and self.cgroup.oom_kills():  # the Linux kernel saw it first
            held = self.limits.memory_mb + self.confinement.scratch_mb
            return (
                f"it used {held} MB of memory in all its processes together, more than the "
                f"{self.limits.memory_mb} MB a submission may use (its memory cgroup, which also holds its "
                f"/tmp and /dev/shm, is {held} MB)"
            )
        if self.relay is not None and (full := self.relay.why_stopped()):
            return full
        received = self.received + self._received_now()
        if received > self.limits.received_mb << 20:
            return (
                f"it sent the grader {received >> 20} MB of messages, "
                f"more than the {self.limits.received_mb} MB a submission may send"
            )
        return ""

    def _received_now(self) -> int:
        """Bytes the running kernel sent: all of them pass the relay (the
        grader's sessions see only what it forwards)."""
        if self.relay is not None and self.relay.process is not None:
            return self.relay.received
        return sum(session.received for session in self._sessions())

    async def stop(self) -> None:
        if self.watcher is not None:
            self.watcher.cancel()
            self.watcher = None
        if self.km is not None:
            self.received += self._received_now()
            try:  # a dead kernel may fail to shut down: nothing left to do (what is left is reaped)
                if await self.km.is_alive():
                    await self.km.shutdown_kernel(now=True)
            except Exception:  # noqa: BLE001
                pass
            finally:
                if self.kc is not None:
                    self.kc.stop_channels()
                with contextlib.suppress(Exception):
                    await self.km.cleanup_resources()
        self.km = self.kc = self.poller = None
        if self.relay is not None:
            self.relay.stop()
            self.relay = None
        if self.cgroup is not None:  # whatever is left in it is killed
            await asyncio.to_thread(self.cgroup.remove)
            self.cgroup = None

    async def run(self, source: str, results: bool = False) -> Outcome:
        timeout = min(self.limits.cell_timeout, self.deadline - time.monotonic())
        if timeout <= 0:
            return Outcome(
                "not run", f"not run: the notebook time limit ({self.limits.notebook_timeout:g} s) was reached"
            )
        seconds = max(1, round(timeout))
        for session in self._sessions():
            session.results = results
        try:
            status, outputs = await self._execute(source, seconds)
            outcome = _outcome(outputs, status)
        except _Stuck as stuck:
            if stuck.status == "timeout":
                outcome = Outcome("timeout", f"timed out after {seconds} s (an infinite loop?)")
            else:
                outcome = Outcome(
                    "dead", "the kernel died (the notebook called os._exit, crashed, or ran out of memory)"
                )
        for session in self._sessions():
            session.results = False
        self.over_budget = self.over_budget or self._too_much_received()
        if self.over_budget:  # whatever the cell came to, the watcher stopped it (a reply may beat the kill)
            return Outcome("dead", f"stopped: {self.over_budget}")
        return outcome

    async def _execute(self, source: str, seconds: float) -> tuple[str | None, list[dict[str, Any]]]:
        """Run ``source`` (nothing kept in In, _ih, Out) and read its messages
        until its reply and its last output are in: the reply's status (None:
        no reply) and the outputs kept (``_kept``). One coroutine, jupyter_client's
        public client: nothing of the cell is left running when it returns.
        Raises ``_Stuck`` past ``seconds`` or when the kernel died."""
        kc = self.kc
        msg_id = kc.execute(source, store_history=False, allow_stdin=False, stop_on_error=False)
        start = time.monotonic()
        deadline, alive_at = start + seconds, start + _ALIVE_EVERY
        status: str | None = None
        replied, idle = False, False
        outputs: list[dict[str, Any]] = []
        while not (replied and idle):
            now = time.monotonic()
            if not replied and now >= deadline:
                raise _Stuck("timeout")
            if replied and now >= deadline:
                break  # the reply is in; its last output did not come (nbclient goes on too)
            if now >= alive_at:
                alive_at = now + _ALIVE_EVERY
                if not await self.km.is_alive():
                    if replied:
                        break
                    raise _Stuck("dead")
            await self.poller.poll(max(1, int((min(deadline, alive_at) - now) * 1000)))
            with contextlib.suppress(Empty):
                msg = await kc.get_iopub_msg(timeout=0)
                if msg.get("parent_header", {}).get("msg_id") == msg_id:
                    content = msg.get("content") or {}
                    if msg.get("msg_type") == "status" and content.get("execution_state") == "idle":
                        idle = True
                    elif (kept := _kept(msg, outputs)) is not None:
                        outputs.append(kept)
            with contextlib.suppress(Empty):
                msg = await kc.get_shell_msg(timeout=0)
                if msg.get("parent_header", {}).get("msg_id") == msg_id and not replied:
                    replied = True
                    said = (msg.get("content") or {}).get("status")
                    status = said if isinstance(said, str) else None
                    deadline = time.monotonic() + _IOPUB_GRACE
        return status, outputs


def _outcome(outputs: list[dict[str, Any]], status: str | None) -> Outcome:
    """A cell's outcome from the outputs kept and its reply's status (None: no reply)."""
    errors = [o for o in outputs if o.get("output_type") == "error"]
    results = [o["data"][RESULT_MIME] for o in outputs if o.get("output_type") == "display_data"]
    status = status or "error"
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
            if cell.after is not None and outcomes[cell.after[0]].status in STUCK:
                outcomes.append(Outcome("not run", cell.after[1]))
                continue
            outcome = await kernel.run(cell.source, cell.results)
            broken = await _measure(kernel, cell, outcome)
            outcomes.append(outcome)
            if outcome.status == "ok" and cell.replay:
                replay.append(cell.source)
            if outcome.status == "not run":
                stopped = outcome.error
                break
            if outcome.status in STUCK or broken:
                restarts += 1
                stopped = (
                    "not run: too many kernel restarts" if restarts > _MAX_RESTARTS else await _restart(kernel, replay)
                )
                if stopped:
                    break
    except Exception as err:  # noqa: BLE001 - a kernel that cannot start must not crash the grader
        if kernel.over_budget:  # the watcher stopped it while it started: why, not that it died
            stopped = f"the kernel could not run this notebook: stopped: {kernel.over_budget}"
        else:
            hint = f" (is the memory limit of {limits.memory_mb} MB too low?)" if "before replying" in str(err) else ""
            stopped = f"the kernel could not run this notebook: {type(err).__name__}: {err}{hint}"
    finally:
        await kernel.stop()
        await asyncio.to_thread(reap, kernel.token)  # what the kernel started, and a kernel that would not stop
    return outcomes + [Outcome("not run", stopped or "not run") for _ in cells[len(outcomes) :]]


async def _measure(kernel: _Kernel, cell: Cell, outcome: Outcome) -> bool:
    """Run the measured cases ``cell``'s probe marks (``measure``) and put
    the grader's verdict on each in ``outcome``; True when a timed cell
    timed out or the kernel died (it must be restarted). A case whose call
    raised in the probe is not measured: it failed by the kernel's own
    word, which costs it the case (and the error says why, as a timed
    cell's would). A cell not to be measured (``Cell.measure``) gets a
    pass on each case whose call did not raise, keeping what it reached."""
    if not (cell.results and outcome.status == "ok" and outcome.results and isinstance(outcome.results[0], list)):
        return False
    cases: list[Any] = outcome.results[0]
    for slot, plan, timed in planned(cell.source):
        case = cases[slot] if 0 <= slot < len(cases) else None
        if isinstance(case, dict) and "error" in case:
            continue
        if not cell.measure:
            if isinstance(case, dict):
                cases[slot] = {"repr": repr(plan.passed), "reached": case.get("reached", [])}
            continue
        verdict, broken = await _measured(kernel, plan, timed)
        if 0 <= slot < len(cases):
            cases[slot] = verdict
        if broken:
            return True
    return False


async def _measured(kernel: _Kernel, plan: Measured, timed: list[str]) -> tuple[dict[str, Any], bool]:
    """One measured case: its setup, its timed cells measured, its cleanup
    (whatever came before, unless the kernel is gone: what the setup made
    must not weigh on the cells after it), all again while the figure is
    over its bound but not beyond what load could explain
    (``measure.beyond_load``), up to ``TRIES`` times; the case's result
    and whether the kernel must be restarted."""
    for _ in range(TRIES):
        verdict, broken, figures = await _timed(kernel, plan, timed)
        if not broken:
            cleanup = await kernel.run(plan.cleanup)
            broken = cleanup.status in STUCK
        if broken or verdict.get(OVER) is not True or beyond_load(plan, figures):
            break
    return verdict, broken


async def _timed(kernel: _Kernel, plan: Measured, timed: list[str]) -> tuple[dict[str, Any], bool, list[float]]:
    """A measured case's setup and timed cells: its result, whether the
    kernel must be restarted, and the timed cells' figures (none unless
    every one was measured)."""
    setup = await kernel.run(plan.setup)
    if setup.status != "ok":
        why = f"the grader could not build {plan.size}: {setup.error[:200]}"
        return {"measured": why}, setup.status in STUCK, []
    figures: list[float] = []
    results: list[Any] = []
    for source in timed:
        root = kernel.root
        if root is None:
            return {"measured": "the grader could not measure this case (no kernel process to look at)"}, False, []
        if plan.kind == "memory":
            with PeakMemory(root) as memory:
                ran = await kernel.run(source, results=True)
            figure = float(memory.grew)
        else:
            before = await asyncio.to_thread(cpu_seconds, root)
            ran = await kernel.run(source, results=True)
            figure = await asyncio.to_thread(cpu_seconds, root) - before
        if ran.status == "timeout":
            return {"measured": f"too slow: it ran past the time limit on {plan.size}", OVER: True}, True, []
        if ran.status != "ok":
            return {"measured": f"{ran.error[:200]} (on {plan.size})"}, ran.status == "dead", []
        figures.append(figure)
        results.append(ran.results[0] if len(ran.results) == 1 else None)
    return decide(plan, figures, results), False, figures


async def _restart(kernel: _Kernel, replay: list[str]) -> str:
    """A fresh kernel with the cells that had worked run again; "" when
    that worked, else why the run cannot go on. After going over budget,
    the files the kernel wrote go first (they would stop the next one too);
    after sending more than the grader reads, there is no new kernel."""
    await kernel.stop()
    if sent_too_much := kernel._too_much_received():
        return f"not run: {sent_too_much}"
    if kernel.over_budget:
        await asyncio.to_thread(remove_new, kernel.workdir, kernel.first_files)
    await kernel.start()
    for source in replay:
        outcome = await kernel.run(source)
        if outcome.status == "not run":
            return outcome.error
        if outcome.status in STUCK:
            return f"not run: the kernel could not be restored ({outcome.error})"
    return ""
