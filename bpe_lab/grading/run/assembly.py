"""The run built from a submission: its cells, with the solution's locked ones.

What this adds over ``tasks`` (what a solution's graded cells hold, as
data): putting a submission together with the solution's locked cells, so
that the grader only has to run the result and score it. ``assemble`` takes
the submission's cells in its order, but every locked cell (setup and
tests) from the solution, matched by nbgrader ``grade_id``: a submission
cannot edit, delete or reorder them away. A test cell runs the task's
visible checks, the calls of them the grader judges (``visible``), then
its hidden calls, each through ``probe``.
"""

from __future__ import annotations

from dataclasses import dataclass

from bpe_lab.grading.authoring.tasks import Task, load_tasks, nbgrader
from bpe_lab.grading.notebook_format import nbformat
from bpe_lab.grading.run.probe import FORGET_CELL, probe_source

__all__ = ["Step", "assemble", "probe_only"]


@dataclass(frozen=True)
class Step:
    """One code cell to run: ``role`` is setup (locked, from the solution),
    answer (the learner's solution cell), student (any other cell) or test.
    ``visible``: a test's cell run just before it, with the calls of its
    visible check that the grader judges (``Task.checked``), so that they
    have a time limit of their own."""

    source: str
    role: str
    grade_id: str = ""
    visible: str = ""


def _probe(task: Task) -> str:
    """The hidden calls, each with the task's forbidden functions guarded,
    reported back as data (``probe``)."""
    return probe_source([case.call for case in task.cases], task.forbid)


def _test_step(task: Task) -> Step:
    """The visible checks (in a grading kernel they decide nothing) and the
    calls the grader makes of them (``Task.checked``), in a cell before the
    hidden calls' (each call one probe result)."""
    if task.checked:
        visible = task.visible + "\n" + probe_source(list(task.checked), task.forbid)
        return Step(_probe(task) if task.cases else "", "test", task.grade_id, visible)
    # the hidden calls leave linecache before a failing visible check could leave them for later cells
    return Step(FORGET_CELL + task.visible + "\n" + _probe(task) if task.cases else task.visible, "test", task.grade_id)


def probe_only(steps: list[Step], tasks: list[Task]) -> list[Step]:
    """The same run without the visible checks (they need the package's
    answers) and with only the hidden calls of ``tasks``: what the grader
    runs where those answers are not installed at all (see ``grader``)."""
    wanted = {t.grade_id: t for t in tasks if t.cases}
    return [
        Step(_probe(wanted[s.grade_id]), "test", s.grade_id) if s.role == "test" else s
        for s in steps
        if s.role != "test" or s.grade_id in wanted
    ]


Locked = dict[str, nbformat.NotebookNode]


def assemble(
    solution: nbformat.NotebookNode, submission: nbformat.NotebookNode, tasks: list[Task] | None = None
) -> list[Step]:
    """The submission's cells in its order, with every locked cell (setup and
    tests) taken from the solution by grade_id; locked cells the submission
    lost or renamed are put back after the nearest earlier nbgrader cell. A
    test cell moved or copied above an answer it follows in the solution
    (JupyterLab keeps a copied cell's metadata) runs after that answer; a
    second copy of a locked cell runs as the learner's own code.
    ``tasks``: the solution's, with this submission's generated cases
    (default: ``load_tasks(solution)``)."""
    by_id = {t.grade_id: t for t in (load_tasks(solution) if tasks is None else tasks)}
    locked = {m["grade_id"]: c for c in solution.cells if (m := nbgrader(c)).get("locked") and c.cell_type == "code"}
    answers = {m["grade_id"] for c in solution.cells if (m := nbgrader(c)).get("solution")}
    needs = _answers_before(solution, answers & {str(nbgrader(c).get("grade_id")) for c in submission.cells})
    steps: list[Step] = []
    placed: dict[str, int] = {}
    waiting: list[str] = []  # tests whose answers come later in the submission

    def place(gid: str, step: Step) -> None:
        placed[gid] = len(steps)
        steps.append(step)
        for test in [t for t in waiting if not needs[t] - placed.keys()]:  # an answer came: tests, never answers
            waiting.remove(test)
            placed[test] = len(steps)
            steps.append(_locked_step(test, locked, by_id))

    for cell in submission.cells:
        gid = str(nbgrader(cell).get("grade_id", ""))
        if cell.cell_type != "code":
            continue
        if gid in placed or gid in waiting or gid not in locked and gid not in answers:
            steps.append(Step(cell.source, "student"))
        elif gid in by_id and needs[gid] - placed.keys():
            waiting.append(gid)
        else:
            place(gid, _locked_step(gid, locked, by_id) if gid in locked else Step(cell.source, "answer", gid))
    for gid in waiting:  # what they wait for never came: run them last
        placed[gid] = len(steps)
        steps.append(_locked_step(gid, locked, by_id))
    return _restore_missing(solution, steps, placed, locked, by_id)


def _answers_before(solution: nbformat.NotebookNode, answers: set[str]) -> dict[str, set[str]]:
    """For each nbgrader cell of the solution, the ``answers`` above it."""
    seen: set[str] = set()
    before: dict[str, set[str]] = {}
    for cell in solution.cells:
        gid = str(nbgrader(cell).get("grade_id", ""))
        before[gid] = set(seen)
        if gid in answers:
            seen.add(gid)
    return before


def _locked_step(gid: str, locked: Locked, tasks: dict[str, Task]) -> Step:
    if gid in tasks:
        return _test_step(tasks[gid])
    return Step(locked[gid].source, "setup", gid)


def _restore_missing(
    solution: nbformat.NotebookNode, steps: list[Step], placed: dict[str, int], locked: Locked, tasks: dict[str, Task]
) -> list[Step]:
    anchor = -1
    for cell in solution.cells:
        gid = nbgrader(cell).get("grade_id")
        if not gid:
            continue
        if gid in placed:
            anchor = max(anchor, placed[gid])
        elif gid in locked:
            anchor += 1
            steps.insert(anchor, _locked_step(gid, locked, tasks))
            placed = {g: i + (i >= anchor) for g, i in placed.items()}
            placed[gid] = anchor
    return steps
