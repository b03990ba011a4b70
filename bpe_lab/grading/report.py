"""Scores as data: one report per submission, a gradebook for all of them.

What this adds over ``tasks`` (what is graded): what grading found. A
``Report`` holds one ``TaskResult`` per task, points and the reason for any
lost points; ``format_report`` prints it for a person, ``Report.to_dict``
for a program, and ``gradebook`` puts many side by side in a pandas table
(one row per submission, one column per task, total).

>>> report = Report("alice.ipynb", "02_training", [TaskResult("train", 2, 2), TaskResult("count", 0, 1, "wrong")])
>>> print(format_report(report))
alice.ipynb (02_training): 2/3
  train                              2/2  ok
  count                              0/1  wrong
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["TaskResult", "Report", "gradebook", "format_report"]


@dataclass
class TaskResult:
    """The points one task earned out of ``max_points``; ``message`` says
    why any were lost ("" for full marks)."""

    grade_id: str
    points: float
    max_points: float
    message: str = ""


@dataclass
class Report:
    """Everything grading found about one submission; ``error`` is set when
    the submission could not be graded at all (not a notebook, unknown
    assignment); ``sandbox`` is "" when its kernels ran in the sandbox, else
    why not ("graded without a sandbox (...)")."""

    submission: str
    assignment: str | None
    tasks: list[TaskResult] = field(default_factory=list)
    error: str = ""
    sandbox: str = ""

    @property
    def total(self) -> float:
        return sum(t.points for t in self.tasks)

    @property
    def max_total(self) -> float:
        return sum(t.max_points for t in self.tasks)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "total": self.total, "max_total": self.max_total}


def gradebook(reports: list[Report]) -> pd.DataFrame:
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
    if report.sandbox:
        lines.append(f"  ! {report.sandbox}")
    for task in report.tasks:
        status = "ok" if not task.message else task.message
        lines.append(f"  {task.grade_id:<34} {task.points:g}/{task.max_points:g}  {status}")
    return "\n".join(lines)
