"""Grading submitted notebooks: run each one in a sandbox, score it, report.

What this adds over ``tasks`` (the tasks of a solution and the run built
from a submission) and ``report`` (scores as data): running that run, and
judging it. What a submission can and cannot do, and why:

- It runs in its own kernel, in a temporary directory holding only a copy of
  the notebook, with memory and time limits (see ``sandbox``). A loop that
  never ends, ``sys.exit()``, a crash, deleted files or megabytes of output
  cost that submission its points and nothing else. Every folder of a run
  (the kernels', their package views) lies in one folder of the grader's
  under ``$TMPDIR/bpe-lab-grader-UID/`` (``check.scratch``), removed at the
  end, and by the next run if this one was killed.
- Test cells always come from ``solutions/`` (see ``assembly.assemble``).
- A submission can change anything inside its own kernel: monkeypatch
  ``bpe_lab``, redefine ``check``, even stop the kernel from reporting errors.
  So the verdict is not taken from the kernel's word. The hidden tests are
  ``hidden.expect(lambda: CALL, LITERAL)`` lines (or ``assert CALL ==
  LITERAL``); the grader never runs them as written: it runs each CALL in
  the kernel, receives the value's ``repr`` as data, and compares it with
  LITERAL *in the grader process*. Passing requires producing the right values.
- It may not produce them by calling the package's own answer (``answers``;
  ``bpe_lab.train_bpe`` for ``train``), nor anything else that computes
  it. The kernel never has the package: it imports an allow-listed view of
  it (``kernel_package``), in which only what the notebook's own cells and
  its tests' ``allow`` metadata reach keeps its code; every other function
  raises ``Delegated`` naming itself, and the instructor's modules are not
  importable. Two runs:

  1. In the first, ``guard`` also traps the task's own answers for each
     hidden call (they may be reached by the setup), so a call costs the
     task its points, with the message naming the function. This is the
     kernel's word, so it is only believed when it *costs* points.
  2. A kernel that un-patches the trap, hides its record or forges its
     report could still return the right values. So every task that passed
     is run again in a fresh kernel and folder whose view has no body for
     the task's answers nor for what only they reach, with only the hidden
     calls. The task keeps its points only if the second run's values are
     right too; a kernel that never had the answer cannot return it.
     The cases the grader measures itself (``measure``) are measured there
     only, once: in the first run they pass unless their call raised or
     reached a forbidden function, so the second run's measurement decides
     them. Where the notebook's setup reaches none of a task's answers
     (every task of chapters 01 to 04 and 06, and 05's but its trainer),
     the first run's view already has no body for them, nor for what
     only they reach: a second run would run the same code in the same
     package and could find nothing the first could not, so there is
     none, and the first run decides the task and measures its cases
     (``_Grading.checked_again``).

  The visible self-check is decided here too (``visible``, ``task_score``):
  its calls, recorded once on the solution, are sent to the kernel as cases
  and the real check judges the values that come back, in this process; in
  the kernel ``check.check_*`` decide nothing.
  Why not a "was it called" flag? It is the kernel's word again: only
  values the grader checks, computed where the answer does not exist,
  cannot be forged.
- The kernels run in bubblewrap (``jail``), as nobody with no capability,
  seeing only the interpreter, the allowed libraries, ``bpe_lab`` and their
  own folder (the only one they write), with no network and none of the
  grader's environment. Where bubblewrap cannot run, grading refuses
  unless told ``sandbox=False``; then each report says it graded without a
  sandbox (and a determined submission could read the answers from disk).

- Hidden cases cannot be memorised: besides the solution's fixed ones,
  each task gets cases generated for this submission (``cases``: seeded by
  the salt, the student, the task and the notebook's nonce), whose
  expected values exist only here. A task earns its points times the
  fraction of its cases right (``judge``). Written answers (nbgrader's
  manually graded cells) are never scored here: the report carries the
  learner's text, its points pending.

``grade`` grades a class: ``workers`` submissions at a time (one per core
by default), each in its own kernels, folders and sandbox; students and
assignments are told by ``roster``, which reads each file once
(``grade_collection`` grades a class it collected). ``bpe-lab grade`` is
its command line (``grade_command``). The names of ``tasks`` and ``report`` that the tests
use are importable from here too.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import os
import shutil
import tempfile
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from bpe_lab.grading.authoring.tasks import HiddenCase, Task, Written, load_tasks, load_written, parse_hidden
from bpe_lab.grading.cases.generated import with_generated
from bpe_lab.grading.check.scratch import process_folder, release
from bpe_lab.grading.intake.roster import Collection, Submission, collect_class
from bpe_lab.grading.intake.submissions import PathLike, read_once
from bpe_lab.grading.notebook_format import nbformat
from bpe_lab.grading.run.assembly import Step, assemble, probe_only
from bpe_lab.grading.run.distributions import needs
from bpe_lab.grading.run.jail import Confinement, confine, repository
from bpe_lab.grading.run.kernel_package import bodies, notebook_roots, view
from bpe_lab.grading.run.reach import Name
from bpe_lab.grading.run.sandbox import STUCK, Cell, Limits, Outcome, run_cells
from bpe_lab.grading.run.stubs import package_dir
from bpe_lab.grading.run.visible import Visible, record
from bpe_lab.grading.score.judge import generated_calls, score_written, short
from bpe_lab.grading.score.report import Report, TaskResult, format_report, gradebook
from bpe_lab.grading.score.task_score import task_score

__all__ = [
    "Limits",
    "TaskResult",
    "Report",
    "HiddenCase",
    "Task",
    "load_tasks",
    "parse_hidden",
    "assemble",
    "grade_notebook",
    "grade",
    "grade_collection",
    "deciding_views",
    "gradebook",
    "format_report",
    "default_workers",
]

T = TypeVar("T")


# ------------------------------------------------------------ running


#: The key of a test's visible cell's outcome: ``VISIBLE + grade_id``.
VISIBLE = "visible:"


async def _execute(
    steps: list[Step], workdir: Path, limits: Limits, confinement: Confinement, deferred: frozenset[str] = frozenset()
) -> dict[str, Outcome]:
    """Run the steps in the sandbox; the outcome of each test by grade_id
    (and of its visible cell by ``VISIBLE + grade_id``, and of any other
    step that timed out or killed its kernel by ``_STUCK + index``). A
    test's hidden calls are not run when its visible cell timed out or
    killed its kernel. The measured cases of the tests in ``deferred`` are
    left to the second run (``_recheck``).

    A failed test whose answer cell failed too says so: "NameError: name
    'train' is not defined" is clearer with the SyntaxError that caused it.
    """
    cells: list[Cell] = []
    order: list[tuple[int, Step]] = []  # each cell's step, and that step's index
    for index, step in enumerate(steps):
        after = None
        if step.visible:
            after = (len(cells), _HIDDEN_NOT_RUN)
            cells.append(Cell(step.visible, replay=False, results=True))
            order.append((index, Step("", "visible", step.grade_id)))
        test = step.role == "test"
        measure = step.grade_id not in deferred
        cells.append(Cell(step.source, replay=not test, results=test, measure=measure, after=after))
        order.append((index, step))
    outcomes = await run_cells(cells, workdir, limits, confinement)
    results: dict[str, Outcome] = {}
    answer_error = ""
    for (index, step), outcome in zip(order, outcomes):
        if step.role == "answer" and outcome.status != "ok":
            answer_error = outcome.error[:300]
        if step.role in ("visible", "test"):
            if outcome.status != "ok" and answer_error and outcome.status != "not run":
                outcome.error += f" (an earlier cell failed: {answer_error})"
            results[(VISIBLE if step.role == "visible" else "") + step.grade_id] = outcome
        elif outcome.status in STUCK:
            results[f"{_STUCK}{index}"] = outcome
        if step.role == "test":
            answer_error = ""
    return results


#: Why a test's hidden calls were not run: its visible check's cases timed out or killed the kernel.
_HIDDEN_NOT_RUN = "hidden tests not run: the self-check's cases did not come back, which costs the whole task"
#: The key of a cell that timed out or killed its kernel (not a test's): ``_STUCK + its step's index``.
_STUCK = "stuck:"


def _stuck_steps(outcomes: dict[str, Outcome]) -> set[int]:
    """The steps (by index) that timed out or killed their kernel in the run of ``outcomes``."""
    return {int(key[len(_STUCK) :]) for key in outcomes if key.startswith(_STUCK)}


@dataclass(frozen=True)
class _SolutionRead:
    """What grading takes from a solution notebook: its tasks (with the
    calls of their visible checks, recorded on the solution: ``visible``),
    its written answers, and the package names it reaches."""

    tasks: tuple[Task, ...]
    written: tuple[Written, ...]
    roots: frozenset[Name]
    visible: dict[str, Visible]


def _read_solution(solution: nbformat.NotebookNode) -> _SolutionRead:
    """``solution`` read for grading, once per process for each text of it:
    recording its visible checks runs its cells, which for the later
    chapters costs more than a kernel's start, and a process that grades
    again (a course's grading service, the test suite) meets the same
    solutions again. What a grading shares between its submissions, it
    shares with the next grading."""
    return _read_solution_text(json.dumps(solution, sort_keys=True))


@functools.lru_cache(maxsize=32)
def _read_solution_text(text: str) -> _SolutionRead:
    solution = nbformat.from_dict(json.loads(text))  # type: ignore[no-untyped-call, unused-ignore]
    tasks = load_tasks(solution)
    visible = record(solution, tasks)
    checked = [dataclasses.replace(t, checked=v.sources()) if (v := visible.get(t.grade_id)) else t for t in tasks]
    return _SolutionRead(tuple(checked), tuple(load_written(solution)), frozenset(notebook_roots(solution)), visible)


@dataclass
class _Grading:
    """What every submission of one ``grade`` call shares."""

    solutions: dict[str, nbformat.NotebookNode]
    solutions_dir: Path
    scratch: Path  # the run's temporary folder (the kernels' package views, each kernel's folder): see check.scratch
    limits: Limits
    sandbox: bool | None
    salt: str = ""
    hide: tuple[Path, ...] = ()
    nonces: dict[tuple[str, str], str] = field(default_factory=dict)  # recorded ones, for a re-grade
    views: dict[tuple[str, tuple[str, ...]], Path] = field(default_factory=dict)
    solutions_read: dict[str, _SolutionRead] = field(default_factory=dict)

    def assignment(self, name: str) -> _SolutionRead:
        """The assignment as read from its solution (``_read_solution``) when
        the first submission of it is graded, kept for the others: its text
        is not written out again for each of them."""
        if name not in self.solutions_read:
            self.solutions_read[name] = _read_solution(self.solutions[name])
        return self.solutions_read[name]

    def prepared(self, assignment: str) -> list[Task]:
        """The assignment's tasks with the calls of their visible checks."""
        return list(self.assignment(assignment).tasks)

    def needs(self, package: Path | None) -> tuple[str, ...]:
        """The libraries the kernels of the assignment whose view is ``package``
        may import besides the package's: its solution's word, never the submission's."""
        for (assignment, _), folder in self.views.items():
            if folder == package:
                return needs(self.solutions[assignment].metadata)
        return ()

    def _view_of(self, assignment: str, forbid: tuple[str, ...]) -> tuple[frozenset[Name], set[str], list[str]]:
        """What ``view(assignment, forbid)`` is made of: the notebook's roots,
        its answers (stubbed as the learner's to write) and, in the first
        run only, the self-checks the kernel runs for real."""
        read = self.assignment(assignment)
        answers = {p for task in read.tasks for p in task.forbid}
        real = [] if forbid else [v.check for v in read.visible.values() if v.partial]
        return read.roots, answers, real

    def _bodies(self, assignment: str, forbid: tuple[str, ...] = ()) -> frozenset[Name]:
        """What keeps its code in ``view(assignment, forbid)``."""
        roots, answers, real = self._view_of(assignment, forbid)
        return bodies(roots, forbid, answers, real)

    def checked_again(self, assignment: str, task: Task) -> bool:
        """Whether ``task``, if it earns points in the first run, is run
        again without its answers: it has answers to forbid and hidden
        calls, and the first run's view has bodies the second's would not
        (its notebook's setup reaches one of the task's answers, or a
        forbidden function is another library's, which no view of
        ``bpe_lab`` can take away). Otherwise the first run already ran
        where the answers have no body: the second would run the same
        code, and could find nothing the first could not."""
        if not (task.forbid and task.cases):
            return False
        if any(path.split(".")[0] != "bpe_lab" for path in task.forbid):
            return True
        return self._bodies(assignment) != self._bodies(assignment, task.forbid)

    def view(self, assignment: str, forbid: tuple[str, ...] = ()) -> Path:
        """The ``bpe_lab`` a kernel of ``assignment`` imports: what its
        notebook uses, without ``forbid`` (``kernel_package``; made once)."""
        key = (assignment, forbid)
        if key not in self.views:
            roots, answers, real = self._view_of(assignment, forbid)
            folder = Path(tempfile.mkdtemp(prefix="view-", dir=self.scratch))
            self.views[key] = view(roots, folder, forbid, answers, real)[0]
        return self.views[key]


def deciding_views(solutions: Mapping[str, nbformat.NotebookNode], scratch: Path) -> dict[str, tuple[Path, bool]]:
    """For each task with answers to forbid and hidden calls, by grade_id:
    the package view (written under ``scratch``) of the run that decides
    it, and whether that run is a second one (``_Grading.checked_again``).
    ``solutions``: by assignment. What ``grade`` would decide for a class
    answering those assignments, asked without grading anyone."""
    # no kernel runs here: there is no folder of solutions to hide from one
    run = _Grading(dict(solutions), solutions_dir=scratch, scratch=scratch, limits=Limits(), sandbox=None)
    found = {}
    for assignment in solutions:
        for task in run.prepared(assignment):
            if task.forbid and task.cases:
                again = run.checked_again(assignment, task)
                found[task.grade_id] = (run.view(assignment, task.forbid if again else ()), again)
    return found


async def _grade_one(sub: Submission, run: _Grading) -> Report:
    report = Report(str(sub.path), sub.assignment, student=sub.student, note=sub.note)
    if sub.assignment not in run.solutions:
        report.error = sub.error or f"unknown assignment {sub.assignment!r}"
        return report
    solution = run.solutions[sub.assignment]
    prepared = run.prepared(sub.assignment)
    written = run.assignment(sub.assignment).written
    read = sub.read if sub.read is not None else read_once(sub.path)  # collect's read: the file is not read again
    report.nonce = run.nonces.get((sub.student, sub.assignment)) or read.nonce
    nb = read.notebook
    if nb is None:
        report.error = read.error
        lost = [TaskResult(t.grade_id, 0, t.points, read.error, cases=len(t.cases)) for t in prepared]
        report.tasks = _in_order(solution, lost + [TaskResult(w.grade_id, 0, w.points, read.error) for w in written])
        return report
    tasks = with_generated(prepared, sub.student, run.salt, report.nonce)
    steps = assemble(solution, nb, tasks)
    # the measured cases of a task run again are measured in its second run, the others' in this one
    rechecked = frozenset(t.grade_id for t in tasks if run.checked_again(sub.assignment, t))
    view = run.view(sub.assignment)
    outcomes, report.sandbox = await _run_in_tempdir(sub.path, nb, steps, run, view, rechecked)
    stuck = _stuck_steps(outcomes)
    checks = run.assignment(sub.assignment).visible
    hidden = generated_calls(tasks)  # no message repeats any of them
    report.tasks = [
        task_score(t, outcomes.get(t.grade_id), checks.get(t.grade_id), outcomes.get(VISIBLE + t.grade_id), hidden)
        for t in tasks
    ]
    await _recheck(sub, nb, [s for i, s in enumerate(steps) if i not in stuck], tasks, rechecked, report, run)
    report.tasks = _in_order(solution, report.tasks + [score_written(nb, w) for w in written])
    return report


def _in_order(solution: nbformat.NotebookNode, results: list[TaskResult]) -> list[TaskResult]:
    """Results in the order of their cells in the solution."""
    order = {str(c.get("metadata", {}).get("nbgrader", {}).get("grade_id")): i for i, c in enumerate(solution.cells)}
    return sorted(results, key=lambda r: order.get(r.grade_id, len(order)))


async def _recheck(
    sub: Submission,
    nb: nbformat.NotebookNode,
    steps: list[Step],
    tasks: list[Task],
    rechecked: frozenset[str],
    report: Report,
    run: _Grading,
) -> None:
    """Run the tasks that passed again where their forbidden functions have
    no body, nor what only they reach (one run per forbidden set), if the
    first run's view had bodies for them (``rechecked``: by grade_id, as
    ``checked_again`` decided); a task keeps its points only if its hidden
    calls are right there too.
    ``steps``: the first run's, less those that timed out or killed their
    kernel there (that run went on without them, and each would cost a
    time limit again)."""
    scored = {r.grade_id: i for i, r in enumerate(report.tasks)}
    groups: dict[tuple[str, ...], list[Task]] = {}
    for task in tasks:
        if task.grade_id in rechecked and report.tasks[scored[task.grade_id]].points > 0:
            groups.setdefault(task.forbid, []).append(task)
    for forbid, group in groups.items():
        package = run.view(str(sub.assignment), forbid)
        outcomes, _ = await _run_in_tempdir(sub.path, nb, probe_only(steps, group), run, package)
        for task in group:
            hidden = generated_calls(tasks)
            again = task_score(task, outcomes.get(task.grade_id), hidden=hidden)
            first = report.tasks[scored[task.grade_id]]
            if again.points < first.points:
                again.message = short(_without_answers(again.message), 500)
                report.tasks[scored[task.grade_id]] = again


def _without_answers(message: str) -> str:
    """A message from the second run, saying where it comes from (unless it
    already names the forbidden function)."""
    if " calls bpe_lab." in message or " reaches bpe_lab." in message:
        return message
    return f"run again without bpe_lab's answers to this notebook: {message}"


async def _run_in_tempdir(
    path: Path,
    nb: nbformat.NotebookNode,
    steps: list[Step],
    run: _Grading,
    package: Path | None,
    deferred: frozenset[str] = frozenset(),
) -> tuple[dict[str, Outcome], str]:
    """Run ``steps`` in a fresh folder holding only a copy of the notebook
    (``deferred``: see ``_execute``); the outcomes and the confinement's
    note ("" when sandboxed)."""
    folder = Path(tempfile.mkdtemp(prefix="grade-", dir=run.scratch))
    try:
        workdir = folder / "work"
        workdir.mkdir()
        nbformat.write(nb, workdir / path.name)  # type: ignore[no-untyped-call, unused-ignore]
        home = package_dir()
        hide = [run.solutions_dir, path.resolve().parent, *run.hide, *filter(None, [repository(home)])]
        # /tmp gets half the disk budget (and /dev/shm at most a quarter): full, they are ENOSPC in the
        # kernel, never over the budget they are counted in, which would stop it whenever the watcher looked
        tmp_mb = max(1, run.limits.disk_mb // 2)
        extra = run.needs(package)
        confinement = confine(
            folder, workdir, home, hide=hide, package=package, sandbox=run.sandbox, tmp_mb=tmp_mb, needs=extra
        )
        return await _execute(steps, workdir, run.limits, confinement, deferred), confinement.note
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def default_workers() -> int:
    """One worker per core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def grade(
    submissions: Sequence[PathLike],
    *,
    solutions_dir: PathLike = "solutions",
    limits: Limits | None = None,
    workers: int | None = None,
    jobs: int | None = None,
    assignment: str | None = None,
    sandbox: bool | None = None,
    salt: str = "",
    hide: Sequence[PathLike] = (),
    nonces: Mapping[tuple[str, str], str] | None = None,
) -> list[Report]:
    """Grade every submission (files, or folders searched for ``*.ipynb``);
        ``workers`` submissions at a time (``jobs`` is its old name; default:
        one per core), each within ``limits`` (default: ``Limits()``).
        ``sandbox``: False goes without bubblewrap (every report says so);
        True or None (default) requires it (``jail.SandboxUnavailable``). ``salt``: a course secret mixed into
        the seeds of the generated cases; ``hide``: more folders the kernels must
    not see; ``nonces``: ``{(student, assignment): nonce}`` recorded by an
    earlier grading (``report.recorded_nonces``), used instead of each
    submission's own (``submissions.submission_nonce``) so that a re-grade meets
    the cases it met. Reports come back in submission order."""
    return grade_collection(
        collect_class(submissions, solutions_dir, assignment),
        limits=limits,
        workers=workers or jobs,
        sandbox=sandbox,
        salt=salt,
        hide=hide,
        nonces=nonces,
    )


def grade_collection(
    collection: Collection,
    *,
    limits: Limits | None = None,
    workers: int | None = None,
    sandbox: bool | None = None,
    salt: str = "",
    hide: Sequence[PathLike] = (),
    nonces: Mapping[tuple[str, str], str] | None = None,
) -> list[Report]:
    """``grade`` for a class already collected (``roster.collect_class``):
    what ``bpe-lab grade --similarity`` grades and then compares, no file
    read again. Keyword arguments as for ``grade``."""
    if not isinstance(collection, Collection):
        raise TypeError(f"grade_collection takes a roster.Collection (roster.collect_class), got {collection!r:.100}")
    limits = Limits() if limits is None else limits
    workers = workers or default_workers()
    subs = collection.submissions

    async def run_all() -> list[Report]:
        gate = asyncio.Semaphore(max(1, workers))
        scratch = process_folder("bpe-lab-grader")  # the last killed run's folders go first
        try:
            hidden = tuple(Path(h).resolve() for h in hide)
            run = _Grading(
                collection.solutions,
                collection.solutions_dir.resolve(),
                scratch,
                limits,
                sandbox,
                salt,
                hidden,
                dict(nonces or {}),
            )

            async def one(sub: Submission) -> Report:
                async with gate:
                    return await _grade_one(sub, run)

            return list(await asyncio.gather(*(one(s) for s in subs)))
        finally:
            release(scratch)

    return _run_coroutine(run_all)


def _run_coroutine(make: Callable[[], Awaitable[T]]) -> T:
    """``asyncio.run``, also from inside Jupyter (whose loop is already
    running): then in a worker thread with a loop of its own."""

    async def main() -> T:
        return await make()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(main())
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(main())).result()


def grade_notebook(path: PathLike, **kwargs: Any) -> Report:
    """Grade one submission; keyword arguments as for ``grade``."""
    return grade([path], **kwargs)[0]


# ------------------------------------------------------------ command line
