"""A class's gradebook: one row per student, one number per assignment.

What this adds over ``report`` (one submission's scores): the class as an
LMS wants it. ``class_gradebook`` puts each report beside the submission it
graded (``roster``'s, in the same order) and makes:

- **one row per student**, keyed by the LMS id when a file name gives one
  (``roster.Identity``), else by the folder's name; a folder named like
  the LMS student (``sato_ken_1023``, or ``sato_ken`` when one student has
  that name) is that student's row too;
- **one numeric column per assignment**: the newest submission counts
  (Canvas's larger submission id, else the later modification time); the
  earlier ones stay in the details, marked ``counted = no``;
- **numbers only**: a cell holds the points graded so far; the written
  answers that await a person count in neither it nor ``total`` (they are
  in ``max``), and ``pending`` counts them; a cell with nothing graded yet
  (no submission, or only written answers) is empty, never the text
  "pending"; ``errors`` counts submissions not graded (why is in the
  details); no path, message or nonce in the book;
- **late work** (``LatePolicy``): ``--due`` with a time zone, the time a
  submission came in (Canvas's ``LATE`` marker says late but not when:
  "late (Canvas marker)", counted as the days the file's time gives, at
  least 1; otherwise the file's modification time), days late rounded up
  (one second late is one day), and ``--late-penalty 10%/day`` capped by
  ``--late-cap 50%``: an assignment's cell is its points less that share.
  ``late`` is the days late, summed over the row's assignments (0 on
  time), and ``total`` the penalised points.

``write_details`` writes the per-task detail (the reason for each point
lost, the nonce, the file relative to the class folder, the time used and
where it came from) as CSV or JSON by the file's extension.

>>> LatePolicy.parse("2026-12-10T23:59+01:00", "10%/day", "50%").penalty(7)
0.5
"""

from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from bpe_lab.grading.intake.roster import Identity, Submission
from bpe_lab.grading.score.report import Report, TaskResult, csv_cell

__all__ = ["LatePolicy", "Entry", "Gradebook", "class_gradebook", "write_class_gradebook", "write_details", "number"]

PathLike = str | os.PathLike[str]

#: What the details say when the time came from Canvas's marker, or from the file.
CANVAS_MARKER, FILE_TIME = "late (Canvas marker)", "file modification time"


def _share(text: str, option: str, per_day: bool) -> float:
    """``"10%/day"`` (``per_day``) or ``"50%"`` as a fraction, or ValueError naming ``option``."""
    body = text.strip()
    if per_day:
        if not body.endswith("/day"):
            raise ValueError(f"{option} {text!r}: write a share per day, e.g. 10%/day")
        body = body[: -len("/day")]
    if not body.endswith("%"):
        raise ValueError(f"{option} {text!r}: write a percentage, e.g. {'10%/day' if per_day else '50%'}")
    try:
        value = float(body[:-1]) / 100
    except ValueError:
        raise ValueError(f"{option} {text!r}: {body[:-1]!r} is not a number") from None
    if not 0 <= value <= 1:
        raise ValueError(f"{option} {text!r}: a share between 0% and 100%")
    return value


def parse_due(text: str) -> datetime:
    """``--due`` as an aware datetime; a time without a zone is refused (a
    class spans zones, and the grader's own zone is no one's deadline)."""
    try:
        due = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"--due {text!r} is not an ISO 8601 time, e.g. 2026-12-10T23:59+01:00") from None
    if due.tzinfo is None or due.utcoffset() is None:
        raise ValueError(f"--due {text!r} has no time zone: write it with one, e.g. {text.strip()}+01:00 or {text}Z")
    return due


@dataclass(frozen=True)
class LatePolicy:
    """The deadline (``due``, aware; None: none) and the penalty: ``per_day``
    of the points per started day late, at most ``cap``."""

    due: datetime | None = None
    per_day: float = 0.0
    cap: float = 1.0

    @classmethod
    def parse(cls, due: str | None, penalty: str | None = None, cap: str | None = None) -> LatePolicy:
        """The policy from ``--due``, ``--late-penalty`` and ``--late-cap``."""
        if penalty is not None and due is None:
            raise ValueError("--late-penalty needs --due (the deadline it counts from)")
        if cap is not None and penalty is None:
            raise ValueError("--late-cap needs --late-penalty")
        return cls(
            parse_due(due) if due is not None else None,
            _share(penalty, "--late-penalty", True) if penalty is not None else 0.0,
            _share(cap, "--late-cap", False) if cap is not None else 1.0,
        )

    def days_late(self, mtime: float, marker: bool) -> tuple[int, str, str]:
        """``(days late, the time used as ISO text, where it came from)``."""
        when = datetime.fromtimestamp(mtime, timezone.utc) if mtime else None
        shown = when.isoformat(timespec="seconds") if when else ""
        days = 0
        if self.due is not None and when is not None and when > self.due:
            days = math.ceil((when - self.due).total_seconds() / 86400)
        if marker:
            return max(1, days), shown, CANVAS_MARKER
        return days, shown, FILE_TIME

    def penalty(self, days: int) -> float:
        """The share of the points lost ``days`` late."""
        return round(min(self.cap, self.per_day * days), 6)


@dataclass
class Entry:
    """One graded submission in the book: its ``report``, who the file
    says it is from (``identity``) and whose row it goes in (``row``), and
    how late (``days``, ``penalty``: the share lost)."""

    report: Report
    submission: Submission
    identity: Identity
    row: Identity
    counted: bool = True
    days: int = 0
    penalty: float = 0.0
    submitted: str = ""
    time_source: str = ""

    @property
    def points(self) -> float:
        """The points after the late penalty."""
        return round(self.report.total * (1 - self.penalty), 2)


@dataclass
class Gradebook:
    """``rows``: per student key, its ``Identity`` and its counted entries by
    assignment; ``entries``: every submission, counted or not; ``assignments``
    in order."""

    assignments: list[str]
    entries: list[Entry]
    rows: dict[str, tuple[Identity, dict[str, Entry]]] = field(default_factory=dict)

    def maximum(self, assignment: str) -> float:
        """What ``assignment`` is worth (its graded submissions' maximum)."""
        return max((e.report.max_total for e in self.entries if e.report.assignment == assignment), default=0.0)

    def table(self) -> list[dict[str, Any]]:
        """The gradebook as rows: student, id, lms, then numbers (None where
        nothing is graded yet: no submission, or only written answers)."""
        out = []
        for identity, by_assignment in self.rows.values():
            row: dict[str, Any] = {"student": identity.name, "id": identity.user_id, "lms": identity.lms}
            pending = sum(sum(1 for t in e.report.tasks if t.pending) for e in by_assignment.values())
            total = 0.0
            for name in self.assignments:
                entry = by_assignment.get(name)
                tasks = entry.report.tasks if entry is not None else []
                graded = entry is not None and (not tasks or any(not t.pending for t in tasks))
                row[name] = entry.points if entry is not None and graded else None
                total += entry.points if entry is not None else 0.0
            row["pending"] = pending
            row["late"] = sum(e.days for e in by_assignment.values())
            row["total"] = round(total, 2)
            row["max"] = sum(e.report.max_total for e in by_assignment.values())
            row["errors"] = sum(1 for e in self.entries if e.row.key == identity.key and e.report.error)
            out.append(row)
        return out


def number(value: float | None) -> str:
    """A gradebook number as CSV text: ``4.5``, ``5``, "" for none."""
    return "" if value is None else f"{round(float(value), 2):g}"


def _newer(a: Entry, b: Entry) -> bool:
    """Whether ``a`` came in after ``b``: Canvas's submission ids when both
    have one, else the files' modification times."""
    if a.identity.submission_id and b.identity.submission_id:
        return int(a.identity.submission_id) > int(b.identity.submission_id)
    return a.submission.mtime > b.submission.mtime


def _merged(identities: list[Identity]) -> dict[Identity, Identity]:
    """Each identity's row: one with no LMS id joins the LMS student whose
    ``name_id`` it is named, or whose name it bears when only one student does."""
    with_id = {i.key: i for i in identities if i.user_id}
    by_full = {f"{i.name.replace(' ', '_')}_{i.user_id}": i for i in with_id.values()}
    by_name: dict[str, list[Identity]] = {}
    for i in with_id.values():
        by_name.setdefault(i.name.replace(" ", "_"), []).append(i)
    out = {}
    for i in identities:
        if i.user_id:
            out[i] = with_id[i.key]
        elif i.name in by_full:
            out[i] = by_full[i.name]
        elif len(by_name.get(i.name, [])) == 1:
            out[i] = by_name[i.name][0]
        else:
            out[i] = i
    return out


def class_gradebook(
    reports: Sequence[Report], submissions: Sequence[Submission], policy: LatePolicy | None = None
) -> Gradebook:
    """The class's ``Gradebook``: ``reports[i]`` graded ``submissions[i]``
    (``grade_collection``'s order), late work penalised by ``policy``."""
    if len(reports) != len(submissions):
        raise ValueError(f"{len(reports)} reports for {len(submissions)} submissions: they must pair one to one")
    policy = policy or LatePolicy()
    identities = [s.identity or Identity(s.student) for s in submissions]
    row_of = _merged(identities)
    entries: list[Entry] = []
    for report, sub, identity in zip(reports, submissions, identities):
        if report.submission != str(sub.path):
            raise ValueError(f"report of {report.submission!r} paired with the submission {str(sub.path)!r}")
        days, when, source = policy.days_late(sub.mtime, identity.late_marker)
        entries.append(Entry(report, sub, identity, row_of[identity], True, days, policy.penalty(days), when, source))
    assignments = sorted({e.report.assignment for e in entries if e.report.assignment})
    book = Gradebook(assignments, entries)
    for entry in entries:
        key = entry.row.key
        book.rows.setdefault(key, (entry.row, {}))
        name = entry.report.assignment
        if name is None:
            continue
        by_assignment = book.rows[key][1]
        held = by_assignment.get(name)
        if held is None or _newer(entry, held):
            if held is not None:
                held.counted = False
            by_assignment[name] = entry
        else:
            entry.counted = False
    return book


def write_class_gradebook(book: Gradebook, path: PathLike) -> None:
    """The ``Gradebook`` as CSV: student, id, one column per assignment,
    pending, late, total, max, errors (numbers only, names through ``csv_cell``)."""
    columns = ["student", "id", *book.assignments, "pending", "late", "total", "max", "errors"]
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, lineterminator="\r\n")
        writer.writerow([csv_cell(c) for c in columns])
        for row in book.table():
            writer.writerow([csv_cell(row[c]) if c in ("student", "id") else number(row[c]) for c in columns])


def _relative_text(text: str, sub: Submission) -> str:
    """``text`` with the submission's own path as it lies under the class folder."""
    return text.replace(str(sub.path), sub.relative) if sub.relative else text


def detail_rows(book: Gradebook) -> list[dict[str, Any]]:
    """One row per task of each submission (one for a submission with none)."""
    rows = []
    for e in book.entries:
        sub, report = e.submission, e.report
        base = {
            "student": e.row.name,
            "id": e.row.user_id,
            "graded_as": _relative_text(sub.student, sub),
            "assignment": report.assignment or "",
            "file": sub.relative,
            "counted": "yes" if e.counted else "no",
            "submitted": e.submitted,
            "time_source": e.time_source,
            "late_days": e.days,
            "penalty": e.penalty,
            "points": report.total,
            "penalised": e.points,
            "max": report.max_total,
            "nonce": report.nonce,
            "error": _relative_text(report.error, sub),
            "note": _relative_text(report.note, sub),
        }
        tasks: list[TaskResult | None] = list(report.tasks) or [None]
        for task in tasks:
            rows.append(
                {
                    **base,
                    "task": task.grade_id if task else "",
                    "task_points": (None if task.pending else task.points) if task else None,
                    "task_max": task.max_points if task else None,
                    "status": task.status if task else "",
                    "message": task.message if task else "",
                }
            )
    return rows


def write_details(book: Gradebook, path: PathLike) -> None:
    """The per-task detail at ``path``: JSON for ``*.json``, else CSV
    (text cells through ``csv_cell``)."""
    rows = detail_rows(book)
    if Path(path).suffix.lower() == ".json":
        Path(path).write_text(json.dumps(rows, indent=1, ensure_ascii=True) + "\n", encoding="utf-8")
        return
    columns = list(rows[0]) if rows else ["student"]
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, columns, lineterminator="\r\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: "" if v is None else csv_cell(v) for k, v in row.items()})
