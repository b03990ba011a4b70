"""How long grading a class takes: ``bpe-lab bench --grading N``.

What this adds over the other benchmarks (the trainers and encoders): the grader at
class scale. ``N`` copies of a solved notebook, laid out as nbgrader's
``submitted/STUDENT/ASSIGNMENT/`` (so each is a student of its own, with its
own generated cases), graded by ``grade`` with its defaults: one worker per
core, each submission in its own sandboxed kernels, every passed task run a
second time without the package's answers. A solved notebook is the slow
case: a wrong answer is not run again.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bpe_lab.grading.commands.grader import default_workers, grade
from bpe_lab.grading.score.report import PENDING

__all__ = ["GradingRun", "bench_grading"]


@dataclass(frozen=True)
class GradingRun:
    """One timed grading of a class."""

    submissions: int
    workers: int
    seconds: float
    full_marks: int  # how many got every auto-graded point
    sandboxed: bool

    @property
    def per_submission(self) -> float:
        return self.seconds / max(1, self.submissions)

    def line(self, assignment: str) -> str:
        where = "in bubblewrap" if self.sandboxed else "without a sandbox"
        return (
            f"graded {self.submissions} solved submissions of {assignment} in {self.seconds:.1f} s with "
            f"{self.workers} workers ({where}): {self.per_submission:.2f} s per submission; "
            f"{self.full_marks} of {self.submissions} got full marks"
        )


def bench_grading(
    count: int, solutions_dir: Path, assignment: str = "02_training", workers: int | None = None
) -> GradingRun:
    """Grade ``count`` copies of ``solutions_dir/ASSIGNMENT.ipynb`` as many students."""
    if count < 1:
        raise ValueError(f"the number of submissions must be at least 1, got {count}")
    solution = Path(solutions_dir) / f"{assignment}.ipynb"
    if not solution.is_file():
        raise FileNotFoundError(f"no solution notebook {solution}")
    workers = workers or default_workers()
    folder = Path(tempfile.mkdtemp(prefix="bpe-lab-bench-grading-"))
    try:
        for i in range(count):
            target = folder / "submitted" / f"student{i:03d}" / assignment / solution.name
            target.parent.mkdir(parents=True)
            shutil.copyfile(solution, target)
        started = time.perf_counter()
        reports = grade([folder / "submitted"], solutions_dir=solutions_dir, workers=workers)
        seconds = time.perf_counter() - started
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    full = sum(all(t.points == t.max_points for t in r.tasks if t.status != PENDING) for r in reports)
    return GradingRun(len(reports), workers, seconds, full, not any(r.sandbox for r in reports))
