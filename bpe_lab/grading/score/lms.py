"""The gradebook in each LMS's own grade-import format (``--lms``).

What this adds over ``gradebook`` (the class's numbers): the columns an
LMS reads. Both files hold one row per student with an LMS id (a student
known only by a folder name has no id an LMS could match, and is left out
and named, for the instructor to enter by hand) and one column per
assignment: its points graded so far after the late penalty (``gradebook``:
written answers awaiting a person are counted apart), or an empty cell where
nothing is graded yet (an LMS leaves an empty cell's grade as it was).

- **Canvas** (Gradebook → Import; the Canvas Instructor Guide, "How do I
  import grades in the Gradebook?", and the importer it documents,
  instructure/canvas-lms ``lib/gradebook_importer.rb``): the header is
  ``Student, ID, SIS User ID, SIS Login ID, Section`` then one column per
  assignment named ``Assignment Name (assignment_id)``; the importer finds
  the student by ``ID`` (the Canvas user id in the download's file names),
  the assignment by the id in parentheses (a name alone makes a new
  assignment), and reads a row whose first cell is ``Points Possible`` as
  the assignments' maximum points. ``--lms-assignment 02_training=4521``
  gives an assignment's Canvas id.
- **Moodle** (Grades → Import → CSV file; MoodleDocs "Grade import",
  https://docs.moodle.org/en/Grade_import): any columns, mapped on the
  import page: "Map from" a column that identifies the user to one of
  userid, username, useridnumber or useremail ("Map to"; moodle/moodle
  ``grade/import/csv/classes/load_data.php``), and each grade
  column to a grade item. The id in Moodle's download names is the
  assignment's participant identifier, so the file holds it as
  ``Participant``, and ``Full name``; with ``--lms-assignment`` a column
  is named for the grade item it fills.

>>> canvas_header(["02_training"], {"02_training": "4521"})
['Student', 'ID', 'SIS User ID', 'SIS Login ID', 'Section', '02_training (4521)']
"""

from __future__ import annotations

import csv
import os
from collections.abc import Mapping

from bpe_lab.grading.score.gradebook import Gradebook, number
from bpe_lab.grading.score.report import csv_cell

__all__ = ["LMS_FORMATS", "canvas_header", "lms_rows", "write_lms", "parse_lms_assignments"]

PathLike = str | os.PathLike[str]

#: The LMSs whose import format ``--lms`` writes.
LMS_FORMATS = ("canvas", "moodle")

#: Canvas's columns before the assignments' (``GradebookImporter#header?``).
CANVAS_STUDENT_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]


def parse_lms_assignments(pairs: list[str] | None) -> dict[str, str]:
    """``["02_training=4521", …]`` (``--lms-assignment``) as ``{assignment: id}``."""
    found: dict[str, str] = {}
    for pair in pairs or []:
        name, sep, ident = pair.partition("=")
        if not sep or not name.strip() or not ident.strip():
            raise ValueError(f"--lms-assignment {pair!r}: write ASSIGNMENT=ID, e.g. 02_training=4521")
        found[name.strip()] = ident.strip()
    return found


def canvas_header(assignments: list[str], ids: Mapping[str, str]) -> list[str]:
    """Canvas's header: the student columns, then ``Name (id)`` per assignment."""
    return CANVAS_STUDENT_COLUMNS + [f"{a} ({ids[a]})" if a in ids else a for a in assignments]


def lms_rows(book: Gradebook, lms: str, ids: Mapping[str, str] | None = None) -> tuple[list[list[str]], list[str]]:
    """``(rows, left out)``: the file's rows, header first, and the names of
    the students who have no LMS id (or another LMS's)."""
    if lms not in LMS_FORMATS:
        raise ValueError(f"unknown LMS {lms!r}; choose one of {', '.join(LMS_FORMATS)}")
    ids = dict(ids or {})
    unknown = sorted(set(ids) - set(book.assignments))
    if unknown:
        raise ValueError(f"--lms-assignment names {', '.join(unknown)}, not graded in this run")
    table = book.table()
    left = [str(r["student"]) for r in table if not r["id"] or r["lms"] != lms]
    kept = [r for r in table if r["id"] and r["lms"] == lms]
    if lms == "canvas":
        rows = [canvas_header(book.assignments, ids)]
        maxima = [number(book.maximum(a)) for a in book.assignments]
        rows.append(["Points Possible", "", "", "", "", *maxima])
        for r in kept:
            rows.append([csv_cell(r["student"]), r["id"], "", "", "", *(number(r[a]) for a in book.assignments)])
    else:
        rows = [["Participant", "Full name", *(f"{a} ({ids[a]})" if a in ids else a for a in book.assignments)]]
        for r in kept:
            rows.append([r["id"], csv_cell(r["student"]), *(number(r[a]) for a in book.assignments)])
    return rows, left


def write_lms(book: Gradebook, lms: str, path: PathLike, ids: Mapping[str, str] | None = None) -> list[str]:
    """The ``lms`` import file at ``path``; returns the students left out (no LMS id)."""
    rows, left = lms_rows(book, lms, ids)
    with open(path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f, lineterminator="\r\n").writerows(rows)
    return left
