"""Grading submitted notebooks: run each one in a sandbox, score it, report.

What this adds over ``tasks`` (the tasks of a solution and the run built
from a submission) and ``report`` (scores as data): running that run, and
judging it. What a submission can and cannot do, and why:

- It runs in its own kernel, in a temporary directory holding only a copy of
  the notebook, with memory and time limits (see ``sandbox``). A loop that
  never ends, ``sys.exit()``, a crash, deleted files or megabytes of output
  cost that submission its points and nothing else.
- Test cells always come from ``solutions/`` (see ``tasks.assemble``).
- A submission can change anything inside its own kernel: monkeypatch
  ``bpe_lab``, redefine ``check``, even stop the kernel from reporting errors.
  So the verdict is not taken from the kernel's word. The hidden tests are
  ``assert CALL == LITERAL`` statements; the grader runs each CALL in the
  kernel, receives the value's ``repr`` as data, and compares it with LITERAL
  *in the grader process*. Passing requires producing the right values.

``bpe-lab grade`` (``add_grade_command``) prints the reports and writes the
gradebook. The names of ``tasks`` and ``report`` that the command line and
the tests use are importable from here too.
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
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import nbformat

from bpe_lab.grading.report import Report, TaskResult, format_report, gradebook
from bpe_lab.grading.sandbox import Cell, Limits, Outcome, run_cells, write_kernelspec
from bpe_lab.grading.tasks import HiddenCase, Step, Task, assemble, load_tasks, parse_hidden

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
    "gradebook",
    "format_report",
    "add_grade_command",
]

_MAX_NOTEBOOK_BYTES = 20 << 20

T = TypeVar("T")
PathLike = str | os.PathLike[str]


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


def _judge(task: Task, probes: list[Any]) -> str:
    """ "" if every hidden case returned its literal, else why not."""
    if len(probes) != 1 or not isinstance(probes[0], list) or len(probes[0]) != len(task.cases):
        return "the hidden tests did not report back (was the test cell tampered with?)"
    for number, (case, result) in enumerate(zip(task.cases, probes[0]), start=1):
        if not isinstance(result, dict):
            return "the hidden tests reported garbage"
        call = _short(case.call, 120)
        if "error" in result:
            hint = " (not written yet?)" if str(result["error"]).startswith("NotImplementedError") else ""
            return f"hidden test {number}: {call} raised {result['error']}{hint}"
        try:
            value = ast.literal_eval(str(result.get("repr")))
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            shown = _short(str(result.get("repr")), 120)
            return f"hidden test {number}: {call} returned {shown}, which is not a plain value"
        if value != case.expected or type(value) is not type(case.expected):
            got, expected = _short(repr(value), 150), _short(repr(case.expected), 150)
            return f"hidden test {number}: {call} returned {got}, expected {expected}"
    return ""


def _score(task: Task, outcome: Outcome | None) -> TaskResult:
    if outcome is None:
        return TaskResult(task.grade_id, 0, task.points, "not run: the notebook stopped before this task")
    message = outcome.error if outcome.status != "ok" else _judge(task, outcome.results) if task.cases else ""
    return TaskResult(task.grade_id, 0 if message else task.points, task.points, _short(message, 500))


# ------------------------------------------------------------ notebooks


def _read_notebook(text: str) -> nbformat.NotebookNode:
    """Notebook text as a version 4 notebook."""
    notebook: nbformat.NotebookNode = nbformat.reads(text, as_version=4)  # type: ignore[no-untyped-call, unused-ignore]
    return notebook


def _read_submission(path: Path) -> nbformat.NotebookNode:
    """The submission as a notebook, or ValueError saying why it is not one."""
    if path.stat().st_size > _MAX_NOTEBOOK_BYTES:
        raise ValueError(f"the file is larger than {_MAX_NOTEBOOK_BYTES >> 20} MB")
    try:
        nb = _read_notebook(path.read_text(encoding="utf-8"))
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
    meta = nb.metadata.get("bpe_lab", {}) if nb is not None else {}
    name = meta.get("assignment") if isinstance(meta, dict) else None
    if name in known:
        return str(name)
    return next((name for name in sorted(known, key=len, reverse=True) if name in path.name), None)


def _solutions(solutions_dir: Path) -> dict[str, nbformat.NotebookNode]:
    paths = sorted(solutions_dir.glob("[0-9][0-9]_*.ipynb"))
    if not paths:
        raise ValueError(f"no solution notebooks in {solutions_dir}")
    return {p.stem: _read_notebook(p.read_text(encoding="utf-8")) for p in paths}


async def _grade_one(
    path: Path, solutions: dict[str, nbformat.NotebookNode], kernel_dirs: Path, limits: Limits, override: str | None
) -> Report:
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


async def _run_in_tempdir(
    path: Path, nb: nbformat.NotebookNode, solution: nbformat.NotebookNode, kernel_dirs: Path, limits: Limits
) -> dict[str, Outcome]:
    workdir = Path(tempfile.mkdtemp(prefix="bpe-lab-grade-"))
    try:
        nbformat.write(nb, workdir / path.name)  # type: ignore[no-untyped-call, unused-ignore]
        return await _execute(assemble(solution, nb), workdir, kernel_dirs, limits)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def grade(
    submissions: list[PathLike],
    *,
    solutions_dir: PathLike = "solutions",
    limits: Limits | None = None,
    jobs: int = 1,
    assignment: str | None = None,
) -> list[Report]:
    """Grade every submission (files, or folders searched for ``*.ipynb``);
    ``jobs`` kernels run at a time, each within ``limits`` (default:
    ``Limits()``). Reports come back in submission order."""
    limits = Limits() if limits is None else limits
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


def _expand(submissions: list[PathLike]) -> list[Path]:
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


# ------------------------------------------------------------ command line


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


def add_grade_command(subparsers: Any) -> None:
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
