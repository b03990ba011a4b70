"""Grading submitted notebooks: hidden tests from the solution, scores as data.

What a submission can and cannot do, and why the grader is built this way:

- It runs in its own kernel, in a temporary directory holding only a copy of
  the notebook, with memory and time limits (see ``sandbox``). A loop that
  never ends, ``sys.exit()``, a crash, deleted files or megabytes of output
  cost that submission its points and nothing else.
- Test cells always come from ``solutions/``, matched by nbgrader
  ``grade_id``: a submission cannot edit, delete or reorder them away.
- A submission can change anything inside its own kernel: monkeypatch
  ``bpe_lab``, redefine ``check``, even stop the kernel from reporting errors.
  So the verdict is not taken from the kernel's word. The hidden tests are
  ``assert CALL == LITERAL`` statements; the grader runs each CALL in the
  kernel, receives the value's ``repr`` as data, and compares it with LITERAL
  *in the grader process*. Passing requires producing the right values.

Scores come out as a per-task report per submission and a pandas gradebook
(one row per submission, one column per task, total).
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import json
import os
import shutil
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import nbformat

from bpe_lab.grading.release import BEGIN_HIDDEN, END_HIDDEN, strip_regions
from bpe_lab.grading.sandbox import RESULT_MIME, Cell, Limits, Outcome, run_cells, write_kernelspec

__all__ = [
    "Limits",
    "TaskResult",
    "Report",
    "HiddenCase",
    "Task",
    "load_tasks",
    "grade_notebook",
    "grade",
    "gradebook",
    "format_report",
]

_MAX_NOTEBOOK_BYTES = 20 << 20
_MAX_REPR = 100_000


@dataclass
class TaskResult:
    grade_id: str
    points: float
    max_points: float
    message: str = ""


@dataclass
class Report:
    submission: str
    assignment: str | None
    tasks: list[TaskResult] = field(default_factory=list)
    error: str = ""

    @property
    def total(self) -> float:
        return sum(t.points for t in self.tasks)

    @property
    def max_total(self) -> float:
        return sum(t.max_points for t in self.tasks)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "total": self.total, "max_total": self.max_total}


# ------------------------------------------------------ tasks of a solution


@dataclass(frozen=True)
class HiddenCase:
    """One hidden ``assert CALL == LITERAL``; ``expected`` is the literal's value."""

    call: str
    expected: Any


@dataclass(frozen=True)
class Task:
    grade_id: str
    points: float
    visible: str
    cases: tuple[HiddenCase, ...]


def _nbgrader(cell: nbformat.NotebookNode) -> dict[str, Any]:
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
    so the expected value can be known without running submitted code."""
    cases = []
    for stmt in ast.parse(block).body:
        test = getattr(stmt, "test", None)
        if not (
            isinstance(stmt, ast.Assert)
            and isinstance(test, ast.Compare)
            and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Eq)
        ):
            raise ValueError(f"hidden tests must be `assert CALL == LITERAL` lines, got: {ast.unparse(stmt)}")
        try:
            expected = ast.literal_eval(test.comparators[0])
        except ValueError:
            raise ValueError(f"hidden tests must be `assert CALL == LITERAL` lines, got: {ast.unparse(stmt)}") from None
        cases.append(HiddenCase(ast.get_source_segment(block, test.left), expected))
    return tuple(cases)


def load_tasks(solution: nbformat.NotebookNode) -> list[Task]:
    """The graded tasks of a solution notebook, in notebook order."""
    tasks = []
    for cell in solution.cells:
        meta = _nbgrader(cell)
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


_PROBE = """
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
    return task.visible + "\n" + _PROBE.format(cases=calls, limit=_MAX_REPR, mime=RESULT_MIME)


def assemble(solution: nbformat.NotebookNode, submission: nbformat.NotebookNode) -> list[Step]:
    """The submission's cells in its order, with every locked cell (setup and
    tests) taken from the solution by grade_id; locked cells the submission
    lost or renamed are put back after the nearest earlier nbgrader cell."""
    tasks = {t.grade_id: t for t in load_tasks(solution)}
    locked = {m["grade_id"]: c for c in solution.cells if (m := _nbgrader(c)).get("locked") and c.cell_type == "code"}
    answers = {m["grade_id"] for c in solution.cells if (m := _nbgrader(c)).get("solution")}
    steps: list[Step] = []
    placed: dict[str, int] = {}
    for cell in submission.cells:
        if cell.cell_type != "code":
            continue
        gid = str(_nbgrader(cell).get("grade_id", ""))
        if gid in placed or gid not in locked and gid not in answers:
            steps.append(Step(cell.source, "student"))
            continue
        placed[gid] = len(steps)
        steps.append(_locked_step(gid, locked, tasks) if gid in locked else Step(cell.source, "answer", gid))
    return _restore_missing(solution, steps, placed, locked, tasks)


def _locked_step(gid: str, locked: dict, tasks: dict[str, Task]) -> Step:
    if gid in tasks:
        return Step(_test_source(tasks[gid]), "test", gid)
    return Step(locked[gid].source, "setup", gid)


def _restore_missing(
    solution, steps: list[Step], placed: dict[str, int], locked: dict, tasks: dict[str, Task]
) -> list[Step]:
    anchor = -1
    for cell in solution.cells:
        gid = _nbgrader(cell).get("grade_id")
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


# ------------------------------------------------------------ running


async def _execute(steps: list[Step], workdir: Path, kernel_dirs: Path, limits: Limits) -> dict[str, Outcome]:
    """Run the steps in the sandbox; the outcome of each test by grade_id.

    A failed test whose answer cell failed too says so: "NameError: name
    'train' is not defined" is clearer with the SyntaxError that caused it.
    """
    cells = [Cell(step.source, replay=step.role != "test") for step in steps]
    outcomes = await run_cells(cells, workdir, kernel_dirs, limits)
    results: dict[str, Outcome] = {}
    answer_error = ""
    for step, outcome in zip(steps, outcomes):
        if step.role == "answer" and outcome.status != "ok":
            answer_error = outcome.error[:300]
        if step.role == "test":
            if outcome.status != "ok" and answer_error and outcome.status != "not run":
                outcome.error += f" (an earlier cell failed: {answer_error})"
            results[step.grade_id] = outcome
            answer_error = ""
    return results


# ------------------------------------------------------------ scoring


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _judge(task: Task, probes: list) -> str:
    """ "" if every hidden case returned its literal, else why not."""
    if len(probes) != 1 or not isinstance(probes[0], list) or len(probes[0]) != len(task.cases):
        return "the hidden tests did not report back (was the test cell tampered with?)"
    for number, (case, result) in enumerate(zip(task.cases, probes[0]), start=1):
        if not isinstance(result, dict):
            return "the hidden tests reported garbage"
        if "error" in result:
            hint = " (not written yet?)" if str(result["error"]).startswith("NotImplementedError") else ""
            return f"hidden test {number}: {_short(case.call, 120)} raised {result['error']}{hint}"
        try:
            value = ast.literal_eval(str(result.get("repr")))
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return f"hidden test {number}: {_short(case.call, 120)} returned {_short(str(result.get('repr')), 120)}, which is not a plain value"
        if value != case.expected or type(value) is not type(case.expected):
            return f"hidden test {number}: {_short(case.call, 120)} returned {_short(repr(value), 150)}, expected {_short(repr(case.expected), 150)}"
    return ""


def _score(task: Task, outcome: Outcome | None) -> TaskResult:
    if outcome is None:
        return TaskResult(task.grade_id, 0, task.points, "not run: the notebook stopped before this task")
    message = outcome.error if outcome.status != "ok" else _judge(task, outcome.results) if task.cases else ""
    return TaskResult(task.grade_id, 0 if message else task.points, task.points, _short(message, 500))


# ------------------------------------------------------------ notebooks


def _read_submission(path: Path) -> nbformat.NotebookNode:
    """The submission as a notebook, or ValueError saying why it is not one."""
    if path.stat().st_size > _MAX_NOTEBOOK_BYTES:
        raise ValueError(f"the file is larger than {_MAX_NOTEBOOK_BYTES >> 20} MB")
    try:
        nb = nbformat.reads(path.read_text(encoding="utf-8"), as_version=4)
        cells = nb.cells
        if not isinstance(cells, list) or not all(
            isinstance(c.get("source"), str) and c.get("cell_type") for c in cells
        ):
            raise ValueError("its cells are malformed")
    except Exception as err:  # noqa: BLE001 - any parse failure means "not a notebook"
        raise ValueError(f"not a readable notebook ({type(err).__name__}: {_short(str(err), 150)})") from None
    return nb


def _assignment(path: Path, nb: nbformat.NotebookNode | None, known: list[str], override: str | None) -> str | None:
    """Which solution a submission answers: --assignment, the notebook's
    metadata (written by release), or a known name in the file name."""
    if override:
        return override
    meta = (
        nb.metadata.get("bpe_lab", {}).get("assignment")
        if nb is not None and isinstance(nb.metadata.get("bpe_lab"), dict)
        else None
    )
    if meta in known:
        return meta
    return next((name for name in sorted(known, key=len, reverse=True) if name in path.name), None)


def _solutions(solutions_dir: Path) -> dict[str, nbformat.NotebookNode]:
    paths = sorted(solutions_dir.glob("[0-9][0-9]_*.ipynb"))
    if not paths:
        raise ValueError(f"no solution notebooks in {solutions_dir}")
    return {p.stem: nbformat.read(p, as_version=4) for p in paths}


async def _grade_one(path: Path, solutions: dict, kernel_dirs: Path, limits: Limits, override: str | None) -> Report:
    nb, problem = None, ""
    try:
        nb = _read_submission(path)
    except (OSError, ValueError) as err:
        problem = str(err)
    name = _assignment(path, nb, list(solutions), override)
    report = Report(str(path), name)
    if name not in solutions:
        report.error = (
            problem or f"cannot tell which assignment this is (not one of {', '.join(solutions)}); use --assignment"
        )
        return report
    tasks = load_tasks(solutions[name])
    if nb is None:
        report.error = problem
        report.tasks = [TaskResult(t.grade_id, 0, t.points, problem) for t in tasks]
        return report
    outcomes = await _run_in_tempdir(path, nb, solutions[name], kernel_dirs, limits)
    report.tasks = [_score(t, outcomes.get(t.grade_id)) for t in tasks]
    return report


async def _run_in_tempdir(path: Path, nb, solution, kernel_dirs: Path, limits: Limits) -> dict[str, Outcome]:
    workdir = Path(tempfile.mkdtemp(prefix="bpe-lab-grade-"))
    try:
        nbformat.write(nb, workdir / path.name)
        return await _execute(assemble(solution, nb), workdir, kernel_dirs, limits)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def grade(
    submissions: list[str | os.PathLike],
    *,
    solutions_dir: str | os.PathLike = "solutions",
    limits: Limits = Limits(),
    jobs: int = 1,
    assignment: str | None = None,
) -> list[Report]:
    """Grade every submission (files, or folders searched for ``*.ipynb``);
    ``jobs`` kernels run at a time. Reports come back in submission order."""
    paths = _expand(submissions)
    solutions = _solutions(Path(solutions_dir))
    if assignment is not None and assignment not in solutions:
        raise ValueError(f"unknown assignment {assignment!r}; choose one of {', '.join(solutions)}")

    async def run_all() -> list[Report]:
        gate = asyncio.Semaphore(max(1, jobs))
        spec_root = Path(tempfile.mkdtemp(prefix="bpe-lab-kernel-"))
        try:
            kernel_dirs = write_kernelspec(spec_root, limits)

            async def one(path: Path) -> Report:
                async with gate:
                    return await _grade_one(path, solutions, kernel_dirs, limits, assignment)

            return list(await asyncio.gather(*(one(p) for p in paths)))
        finally:
            shutil.rmtree(spec_root, ignore_errors=True)

    return _run_coroutine(run_all)


def _run_coroutine(make):
    """``asyncio.run``, also from inside Jupyter (whose loop is already
    running): then in a worker thread with a loop of its own."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(make())).result()


def grade_notebook(path: str | os.PathLike, **kwargs: Any) -> Report:
    """Grade one submission; keyword arguments as for ``grade``."""
    return grade([path], **kwargs)[0]


def _expand(submissions: list[str | os.PathLike]) -> list[Path]:
    paths: list[Path] = []
    for item in map(Path, submissions):
        if item.is_dir():
            paths.extend(sorted(p for p in item.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts))
        elif item.exists():
            paths.append(item)
        else:
            raise FileNotFoundError(f"no such submission: {item}")
    if not paths:
        raise ValueError("no submissions to grade")
    return paths


# ------------------------------------------------------------ output


def gradebook(reports: list[Report]):
    """One row per submission, one column per task (in notebook order), total and max."""
    import pandas as pd

    columns: dict[str, None] = {}
    rows = []
    for report in reports:
        row: dict[str, Any] = {"submission": report.submission, "assignment": report.assignment}
        for task in report.tasks:
            columns[task.grade_id] = None
            row[task.grade_id] = task.points
        row.update(total=report.total, max=report.max_total, error=report.error)
        rows.append(row)
    return pd.DataFrame(rows, columns=["submission", "assignment", *columns, "total", "max", "error"])


def format_report(report: Report) -> str:
    """A few readable lines: the total, then one line per task."""
    lines = [
        f"{report.submission} ({report.assignment or 'unknown assignment'}): {report.total:g}/{report.max_total:g}"
    ]
    if report.error:
        lines.append(f"  ! {report.error}")
    for task in report.tasks:
        status = "ok" if not task.message else task.message
        lines.append(f"  {task.grade_id:<34} {task.points:g}/{task.max_points:g}  {status}")
    return "\n".join(lines)


def _run(args: argparse.Namespace) -> None:
    limits = Limits(args.cell_timeout, args.timeout, args.memory_mb)
    reports = grade(
        args.submissions, solutions_dir=args.solutions, limits=limits, jobs=args.jobs, assignment=args.assignment
    )
    if args.json:
        print(json.dumps([r.to_dict() for r in reports], indent=1))
    else:
        print("\n\n".join(format_report(r) for r in reports))
    if args.out:
        gradebook(reports).to_csv(args.out, index=False)
        print(f"wrote {args.out} ({len(reports)} submissions)", file=sys.stderr)


def add_grade_command(subparsers) -> None:
    """Register ``bpe-lab grade`` (kept here so cli.py only wires it in)."""
    parser = subparsers.add_parser("grade", help="grade submitted notebooks against solutions/ into a gradebook")
    parser.add_argument("submissions", nargs="+", help="notebooks, or folders of notebooks")
    parser.add_argument("--out", help="write the gradebook CSV here")
    parser.add_argument("--json", action="store_true", help="print the per-task reports as JSON")
    parser.add_argument("--solutions", default="solutions", help="folder of solution notebooks (default: solutions)")
    parser.add_argument("--assignment", help="grade every submission as this assignment (e.g. 02_training)")
    parser.add_argument(
        "--cell-timeout", type=float, default=Limits.cell_timeout, help="seconds per cell (default: %(default)s)"
    )
    parser.add_argument(
        "--timeout", type=float, default=Limits.notebook_timeout, help="seconds per notebook (default: %(default)s)"
    )
    parser.add_argument(
        "--memory-mb",
        type=int,
        default=Limits.memory_mb,
        help="address-space limit of each kernel (default: %(default)s)",
    )
    parser.add_argument("--jobs", type=int, default=1, help="kernels to run at once (default: 1)")
    parser.set_defaults(run=_run)
