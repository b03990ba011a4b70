"""What a graded notebook holds: its tasks and hidden tests, and the run built from a submission.

What this adds over ``release`` (which strips the hidden tests out of a
solution): reading them back as data, and putting a submission together
with the solution's locked cells, so that the grader below only has to run
the result and score it.

- A task is an nbgrader test cell (``grade: true``, not a solution cell):
  its visible checks, its points, and its hidden tests.
- Hidden tests must be ``assert CALL == LITERAL`` statements: the LITERAL
  is parsed here, in the grader process, and the CALL is run in the
  submission's kernel with only its value's ``repr`` sent back (``PROBE``),
  so a submission that tampers with its kernel cannot fake a pass.
- ``assemble`` takes the submission's cells in its order, but every locked
  cell (setup and tests) from the solution, matched by nbgrader
  ``grade_id``: a submission cannot edit, delete or reorder them away.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

import nbformat

from bpe_lab.grading.release import BEGIN_HIDDEN, END_HIDDEN, strip_regions
from bpe_lab.grading.sandbox import RESULT_MIME

__all__ = ["MAX_REPR", "HiddenCase", "Task", "Step", "nbgrader", "parse_hidden", "load_tasks", "assemble"]

#: The longest ``repr`` of a hidden call's value that the kernel sends back.
MAX_REPR = 100_000


@dataclass(frozen=True)
class HiddenCase:
    """One hidden ``assert CALL == LITERAL``; ``expected`` is the literal's value."""

    call: str
    expected: Any


@dataclass(frozen=True)
class Task:
    """One graded test cell: its points, the checks the learner sees, and
    the hidden cases that only the grader runs."""

    grade_id: str
    points: float
    visible: str
    cases: tuple[HiddenCase, ...]


def nbgrader(cell: nbformat.NotebookNode) -> dict[str, Any]:
    """A cell's nbgrader metadata ({} when it has none or it is malformed)."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta if isinstance(meta, dict) else {}


def _hidden_block(source: str) -> str:
    lines = source.splitlines()
    marks = [line.strip() for line in lines]
    if BEGIN_HIDDEN not in marks:
        return ""
    start, end = marks.index(BEGIN_HIDDEN), marks.index(END_HIDDEN)
    return "\n".join(lines[start + 1 : end])


def parse_hidden(block: str) -> tuple[HiddenCase, ...]:
    """Hidden tests as data. Each statement must be ``assert CALL == LITERAL``
    so the expected value can be known without running submitted code.

    >>> parse_hidden("assert f(1) == [2, 3]")
    (HiddenCase(call='f(1)', expected=[2, 3]),)
    """
    cases = []
    for stmt in ast.parse(block).body:
        wrong = f"hidden tests must be `assert CALL == LITERAL` lines, got: {ast.unparse(stmt)}"
        if not (
            isinstance(stmt, ast.Assert)
            and isinstance(stmt.test, ast.Compare)
            and len(stmt.test.ops) == 1
            and isinstance(stmt.test.ops[0], ast.Eq)
        ):
            raise ValueError(wrong)
        try:
            expected = ast.literal_eval(stmt.test.comparators[0])
        except ValueError:
            raise ValueError(wrong) from None
        call = ast.get_source_segment(block, stmt.test.left)
        cases.append(HiddenCase(call if call is not None else ast.unparse(stmt.test.left), expected))
    return tuple(cases)


def load_tasks(solution: nbformat.NotebookNode) -> list[Task]:
    """The graded tasks of a solution notebook, in notebook order."""
    tasks = []
    for cell in solution.cells:
        meta = nbgrader(cell)
        if cell.cell_type == "code" and meta.get("grade") and not meta.get("solution"):
            visible = strip_regions(cell.source, BEGIN_HIDDEN, END_HIDDEN)
            tasks.append(
                Task(meta["grade_id"], float(meta.get("points", 0)), visible, parse_hidden(_hidden_block(cell.source)))
            )
    return tasks


# --------------------------------------------------- building the run


@dataclass(frozen=True)
class Step:
    """One code cell to run: ``role`` is setup (locked, from the solution),
    answer (the learner's solution cell), student (any other cell) or test."""

    source: str
    role: str
    grade_id: str = ""


PROBE = """
def __bpe_lab_probe():
    from IPython.display import publish_display_data
    import operator
    def plain(value, depth=0):
        if depth > 50:
            return value
        if isinstance(value, dict):
            return {{plain(k, depth + 1): plain(v, depth + 1) for k, v in value.items()}}
        if isinstance(value, tuple):
            return tuple(plain(v, depth + 1) for v in value)
        if isinstance(value, list):
            return [plain(v, depth + 1) for v in value]
        if isinstance(value, bytearray):
            return bytes(value)
        if not isinstance(value, (int, str, bytes)) and hasattr(value, "__index__"):
            return operator.index(value)
        return value
    results = []
    for case in [{cases}]:
        try:
            results.append({{"repr": repr(plain(case()))[:{limit}]}})
        except (Exception, SystemExit) as err:
            results.append({{"error": (type(err).__name__ + (": " + str(err) if str(err) else ""))[:300]}})
    publish_display_data({{"{mime}": results}})
__bpe_lab_probe()
del __bpe_lab_probe
"""


def _test_source(task: Task) -> str:
    """The visible checks, then the hidden calls reported back as data."""
    if not task.cases:
        return task.visible
    calls = ",\n        ".join(f"lambda: ({case.call})" for case in task.cases)
    return task.visible + "\n" + PROBE.format(cases=calls, limit=MAX_REPR, mime=RESULT_MIME)


Locked = dict[str, nbformat.NotebookNode]


def assemble(solution: nbformat.NotebookNode, submission: nbformat.NotebookNode) -> list[Step]:
    """The submission's cells in its order, with every locked cell (setup and
    tests) taken from the solution by grade_id; locked cells the submission
    lost or renamed are put back after the nearest earlier nbgrader cell."""
    tasks = {t.grade_id: t for t in load_tasks(solution)}
    locked = {m["grade_id"]: c for c in solution.cells if (m := nbgrader(c)).get("locked") and c.cell_type == "code"}
    answers = {m["grade_id"] for c in solution.cells if (m := nbgrader(c)).get("solution")}
    steps: list[Step] = []
    placed: dict[str, int] = {}
    for cell in submission.cells:
        if cell.cell_type != "code":
            continue
        gid = str(nbgrader(cell).get("grade_id", ""))
        if gid in placed or gid not in locked and gid not in answers:
            steps.append(Step(cell.source, "student"))
            continue
        placed[gid] = len(steps)
        steps.append(_locked_step(gid, locked, tasks) if gid in locked else Step(cell.source, "answer", gid))
    return _restore_missing(solution, steps, placed, locked, tasks)


def _locked_step(gid: str, locked: Locked, tasks: dict[str, Task]) -> Step:
    if gid in tasks:
        return Step(_test_source(tasks[gid]), "test", gid)
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
