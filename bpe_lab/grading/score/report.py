"""Scores as data: one report per submission, a gradebook for a class.

What this adds over ``tasks`` (what is graded): what grading found. A
``Report`` holds one ``TaskResult`` per graded cell: the points earned
(partial credit: the fraction of hidden cases right), the reason for any
lost, and for a written answer (graded by a person, not here) the learner's
text with its points *pending*: counted neither as 0 nor as earned (the
maximum counts them; ``Report.pending`` says how many await a person).
``format_report`` prints a report for a person, ``Report.to_dict`` for a
program, and ``gradebook`` puts a class side by side in a pandas table: one
row per student, one column per task, the total, the maximum and the points
still pending. ``write_gradebook`` writes it as CSV for a spreadsheet, every
text cell that a spreadsheet would run as a formula (one that begins with
``=``, ``+``, ``-``, ``@``, a tab or a carriage return: OWASP's CSV
injection rule) behind a ``'``: a folder named ``=HYPERLINK(…)`` is a name
there, not a link. Names, paths and messages are the learner's: both the
printed report and the CSV show them through ``terminal_text.shown``
(control characters, escape sequences and bidi overrides escaped), so a
folder named with ``ESC [ 2 K`` cannot print over its own 0/7. A report
stays raw data (``Report.to_dict``): ``json.dumps`` escapes every control
and non-ASCII character as ``\\uNNNN``, and gives it back unchanged.

>>> report = Report("alice.ipynb", "02_training", [TaskResult("train", 2, 2), TaskResult("count", 0.5, 1, "wrong")])
>>> print(format_report(report))
alice.ipynb (02_training): 2.5/3
  train                              2/2  ok
  count                            0.5/1  wrong
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from bpe_lab.grading.terminal_text import shown

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "PENDING",
    "TaskResult",
    "Report",
    "gradebook",
    "csv_cell",
    "write_gradebook",
    "recorded_nonces",
    "format_report",
]

#: The status, and the gradebook entry, of a task a person still has to grade.
PENDING = "pending"

PathLike = str | os.PathLike[str]


@dataclass
class TaskResult:
    """The points one task earned out of ``max_points``; ``message`` says
    why any were lost ("" for full marks). ``passed`` of ``cases`` hidden
    cases came out right. ``status`` is "graded", or ``PENDING`` for a
    written answer a person grades (``answer`` is its text; ``points`` are
    0 until then and count nowhere)."""

    grade_id: str
    points: float
    max_points: float
    message: str = ""
    passed: int = 0
    cases: int = 0
    status: str = "graded"
    answer: str = ""

    @property
    def pending(self) -> bool:
        return self.status == PENDING


@dataclass
class Report:
    """Everything grading found about one submission; ``error`` is set when
    the submission could not be graded at all (not a notebook, unknown
    assignment); ``sandbox`` is "" when its kernels ran in the sandbox, else
    why not ("graded without a sandbox (...)"); ``student`` is who submitted
    it (``roster``) and ``note`` anything the instructor should know about
    how that or the assignment was told; ``nonce`` is the submission's
    (``submissions.submission_nonce``), which chose its generated cases."""

    submission: str
    assignment: str | None
    tasks: list[TaskResult] = field(default_factory=list)
    error: str = ""
    sandbox: str = ""
    student: str = ""
    note: str = ""
    nonce: str = ""

    @property
    def total(self) -> float:
        """The points earned on automatically graded tasks."""
        return round(sum(t.points for t in self.tasks if not t.pending), 2)

    @property
    def max_total(self) -> float:
        """What all the tasks are worth, written answers included."""
        return sum(t.max_points for t in self.tasks)

    @property
    def pending(self) -> float:
        """What the written answers awaiting a person are worth."""
        return sum(t.max_points for t in self.tasks if t.pending)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "total": self.total, "max_total": self.max_total, "pending": self.pending}


def gradebook(reports: list[Report]) -> pd.DataFrame:
    """One row per student (their reports for different assignments side by
    side), one column per task in notebook order ("pending" for a written
    answer not graded yet), then total, max and pending points."""
    import pandas as pd

    columns: dict[str, None] = {}
    rows: dict[str, dict[str, Any]] = {}
    for report in reports:
        key = report.student or report.submission
        row = rows.setdefault(key, {"student": key, "assignment": [], "submission": [], "nonce": [], "error": []})
        row["assignment"].append(report.assignment or "?")
        row["submission"].append(report.submission)
        row["nonce"].append(report.nonce or "-")
        row["error"].extend(filter(None, [report.error]))
        row.update(
            total=round(row.get("total", 0) + report.total, 2),
            max=row.get("max", 0) + report.max_total,
            pending=row.get("pending", 0) + report.pending,
        )
        for task in report.tasks:
            columns[task.grade_id] = None
            row[task.grade_id] = PENDING if task.pending else task.points
    for row in rows.values():
        row.update({k: "; ".join(row[k]) for k in ("assignment", "submission", "nonce", "error")})
    order = ["student", "assignment", "submission", "nonce", *columns, "total", "max", "pending", "error"]
    return pd.DataFrame(list(rows.values()), columns=order)


#: What a spreadsheet takes for the start of a formula (OWASP, CSV injection).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """``value`` safe in a spreadsheet and in a terminal that shows the
    file: text is ``shown`` (its control characters escaped), and text
    that would start a formula gets a ``'`` in front (numbers stay numbers).

    >>> print(csv_cell("=1+2"), csv_cell("@SUM(A1)"), csv_cell("alice"), csv_cell(-1.5), csv_cell("\\x1b[2Kbob"))
    '=1+2 '@SUM(A1) alice -1.5 \\x1b[2Kbob
    """
    if not isinstance(value, str):
        return value
    value = shown(value)
    return "'" + value if value.startswith(FORMULA_START) else value


def write_gradebook(reports: list[Report], path: PathLike) -> None:
    """The ``gradebook`` as CSV at ``path``, every cell through ``csv_cell``
    (the column names too: task names come from the solutions, but cost
    nothing to check)."""
    book = gradebook(reports)
    book = book.map(csv_cell) if hasattr(book, "map") else book.applymap(csv_cell)  # pandas 2.0 has no map
    book.columns = [csv_cell(str(c)) for c in book.columns]
    book.to_csv(path, index=False, lineterminator="\r\n")  # RFC 4180: a cell holding \r or \n is quoted


def recorded_nonces(path: PathLike) -> dict[tuple[str, str], str]:
    """``{(student, assignment): nonce}`` from what an earlier grading wrote:
    its ``--json`` reports, its ``--details`` (CSV or JSON: the student as
    graded is ``graded_as``) or a CSV of ``write_gradebook`` (a row's
    assignments and nonces side by side), so that a re-grade meets the same
    generated cases even where the file was saved again. (A student whose
    name holds a control character is found by the JSON only: the CSV shows
    the name escaped.)"""
    import csv
    import json
    from pathlib import Path

    text = Path(path).read_text(encoding="utf-8")
    found: dict[tuple[str, str], str] = {}
    if text.lstrip().startswith("["):
        for report in json.loads(text):
            if isinstance(report, dict) and report.get("nonce") and report.get("assignment"):
                student = report.get("graded_as", report.get("student"))
                found[(str(student), str(report["assignment"]))] = str(report["nonce"])
        return found
    rows = list(csv.DictReader(text.splitlines(keepends=True)))
    if rows and "nonce" not in rows[0]:
        raise ValueError(f"{path}: no nonce column (was it written by bpe-lab grade --details?)")
    for row in rows:
        student = _unescaped(row.get("graded_as") or row.get("student") or "")
        for assignment, nonce in zip(row["assignment"].split("; "), row["nonce"].split("; ")):
            if assignment != "?" and nonce != "-":
                found[(student, _unescaped(assignment))] = nonce
    return found


def _unescaped(cell: str) -> str:
    """A cell as it was before ``csv_cell``."""
    return cell[1:] if cell.startswith("'") and cell[1:].startswith(FORMULA_START) else cell


def format_report(report: Report) -> str:
    """A few readable lines: the total, then one line per task, every
    string in them ``shown`` (a name cannot move the cursor or hide a line)."""
    pending = f" ({report.pending:g} pending manual grading)" if report.pending else ""
    lines = [
        f"{shown(report.submission)} ({shown(report.assignment or 'unknown assignment')}): "
        f"{report.total:g}/{report.max_total:g}{pending}"
    ]
    for note in (report.error, report.note, report.sandbox):
        if note:
            lines.append(f"  ! {shown(note)}")
    for task in report.tasks:
        if task.pending:
            status = f"{PENDING}/{task.max_points:g}  needs manual grading"
        else:
            status = f"{task.points:g}/{task.max_points:g}  {shown(task.message or 'ok')}"
        lines.append(f"  {shown(task.grade_id):<30} {_right(status)}")
    return "\n".join(lines)


def _right(status: str) -> str:
    """The points right-aligned in a column of 7, then the message."""
    points, _, rest = status.partition("  ")
    return f"{points:>7}  {rest}"
