"""Feedback to hand back: one Markdown file per student.

What this adds over ``report`` (scores as data, for the instructor): a page
for the learner. For each of their notebooks: the points, then one row per
task with its points and what went wrong, then their written answers, quoted,
with the points a person has still to give. It shows only what the reports'
messages say, and those describe a failed hidden case by its input and the
kind of mistake (wrong value, wrong type, raised X, too slow, not written
yet), never a property of the expected value, and carry the learner's own
text (an exception's message) only as one short line that repeats no hidden
call (``judge``). So the page reveals neither the hidden tests' expected
values nor the model solution. Nothing for the instructor alone appears
(sandbox notes, file paths). Every learner-derived string (the student's
name, messages, the quoted answers) is ``terminal_text.shown``: a page
``cat`` in a terminal runs no escape sequence, and no bidi override
reorders a line of it.

>>> from bpe_lab.grading.score.report import Report, TaskResult
>>> report = Report("a.ipynb", "03_encoding", [TaskResult("03_encoding_decode", 1, 2, "1/2 ok")])
>>> page = feedback_page("alice", [report])
>>> print(page.splitlines()[2])
## 03_encoding: 1/2
"""

from __future__ import annotations

import re
from pathlib import Path

from bpe_lab.grading.intake.submissions import PathLike
from bpe_lab.grading.score.report import Report, TaskResult
from bpe_lab.grading.terminal_text import shown

__all__ = ["feedback_page", "write_feedback"]


def _cell(text: str) -> str:
    """Text that stays inside one Markdown table cell."""
    return _line(text).replace("\\", "\\\\").replace("|", "\\|") or "ok"


def _line(text: str) -> str:
    """``text`` on one line, its control characters (a new line among them) shown escaped."""
    return " ".join(shown(text).split())


def _points(n: float) -> str:
    return f"{n:g} point{'' if n == 1 else 's'}"


def _task_name(result: TaskResult, assignment: str | None) -> str:
    prefix = f"{assignment}_" if assignment else ""
    return result.grade_id[len(prefix) :] if prefix and result.grade_id.startswith(prefix) else result.grade_id


def _section(report: Report) -> list[str]:
    pending = f" ({_points(report.pending)} awaiting manual grading)" if report.pending else ""
    assignment = _line(report.assignment or "unknown assignment")
    lines = [f"## {assignment}: {report.total:g}/{report.max_total:g}{pending}", ""]
    if report.error:
        lines += [f"**Not graded:** {_line(report.error)}", ""]
    graded = [t for t in report.tasks if not t.pending]
    if graded:
        lines += ["| task | points | result |", "|---|---|---|"]
        for task in graded:
            points = f"{task.points:g}/{task.max_points:g}"
            lines.append(f"| {_cell(_task_name(task, report.assignment))} | {points} | {_cell(task.message)} |")
        lines.append("")
    for task in (t for t in report.tasks if t.pending):
        name = _line(_task_name(task, report.assignment))
        lines += [f"### {name} ({_points(task.max_points)}): needs manual grading", ""]
        lines += [f"> {line}" if line else ">" for line in shown(task.answer, lines=True).splitlines()] or ["> (empty)"]
        lines.append("")
    return lines


def feedback_page(student: str, reports: list[Report]) -> str:
    """The Markdown page for one student's reports."""
    lines = [f"# Feedback for {_line(student)}", ""]
    for report in reports:
        lines += _section(report)
    return "\n".join(lines).rstrip() + "\n"


def _file_name(student: str, taken: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", student).strip("._") or "student"
    name, n = f"{base}.md", 1
    while name in taken:
        n += 1
        name = f"{base}-{n}.md"
    taken.add(name)
    return name


def write_feedback(reports: list[Report], folder: PathLike) -> list[Path]:
    """One ``STUDENT.md`` per student in ``folder``; the files written."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    by_student: dict[str, list[Report]] = {}
    for report in reports:
        by_student.setdefault(report.student or Path(report.submission).stem, []).append(report)
    taken: set[str] = set()
    written = []
    for student, theirs in by_student.items():
        path = out / _file_name(student, taken)
        path.write_text(feedback_page(student, theirs), encoding="utf-8")
        written.append(path)
    return written
