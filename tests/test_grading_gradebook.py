"""The gradebook an LMS imports, and late work: one row per student keyed by
the LMS id, one number per assignment, the newest submission counted, the
late policy applied; Canvas's and Moodle's import files in the shape their
documentation gives. No kernel runs here: the reports are made by hand
(the end-to-end run is ``test_grading_class.py``'s)."""

from __future__ import annotations

import csv
import json
import os
from datetime import datetime
from pathlib import Path

import nbformat
import pytest

from bpe_lab.grading.authoring.release import release_notebook
from bpe_lab.grading.intake.roster import Identity, Submission, collect, lms_identity
from bpe_lab.grading.intake.submissions import read_solutions
from bpe_lab.grading.score.gradebook import LatePolicy, class_gradebook, write_class_gradebook, write_details
from bpe_lab.grading.score.lms import write_lms
from bpe_lab.grading.score.report import PENDING, Report, TaskResult

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = read_solutions(ROOT / "solutions")
DUE = "2026-12-10T23:59+01:00"
DUE_TS = datetime.fromisoformat(DUE).timestamp()
DAY = 86400
TWO_DAYS_AND_A_SECOND = DUE_TS + 2 * DAY + 1


def test_canvas_and_moodle_names_give_the_student_and_the_lms_id():
    assert lms_identity("sato_ken_1023_55023_02_training.ipynb") == Identity("sato_ken", "1023", "canvas", "55023")
    late = Identity("garciaana", "1001", "canvas", "55001", late_marker=True)
    assert lms_identity("garciaana_LATE_1001_55001_05_x.ipynb") == late
    assert lms_identity("Ana María García_88_assignsubmission_file_02_training.ipynb") == Identity(
        "Ana María García", "88", "moodle"
    )
    assert lms_identity("Ken Sato_89_assignsubmission_file_") == Identity("Ken Sato", "89", "moodle")  # a folder
    assert lms_identity("alice_02_training.ipynb") is None and lms_identity("02_training.ipynb") is None
    with pytest.raises(TypeError, match="takes a file or folder name"):
        lms_identity(None)  # type: ignore[arg-type]


def _write(path: Path, assignment: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(release_notebook(SOLUTIONS[assignment], assignment), path)
    return path


def test_collect_tells_each_file_whose_it_is_from_canvas_moodle_and_folders(tmp_path):
    canvas, moodle = tmp_path / "canvas", tmp_path / "moodle"
    _write(canvas / "sato_ken_1023_55023_02_training.ipynb", "02_training")
    _write(canvas / "sato_ken_LATE_1023_55100_02_training-1.ipynb", "02_training")
    _write(moodle / "Ken Sato_89_assignsubmission_file_" / "02_training.ipynb", "02_training")
    _write(moodle / "Ana Garcia_88_assignsubmission_file_02_training.ipynb", "02_training")
    subs = collect([canvas, moodle], SOLUTIONS)
    got = sorted((s.relative, s.identity) for s in subs)
    assert got == [
        ("Ana Garcia_88_assignsubmission_file_02_training.ipynb", Identity("Ana Garcia", "88", "moodle")),
        ("Ken Sato_89_assignsubmission_file_/02_training.ipynb", Identity("Ken Sato", "89", "moodle")),
        ("sato_ken_1023_55023_02_training.ipynb", Identity("sato_ken", "1023", "canvas", "55023")),
        ("sato_ken_LATE_1023_55100_02_training-1.ipynb", Identity("sato_ken", "1023", "canvas", "55100", True)),
    ]
    assert all(s.mtime == os.lstat(s.path).st_mtime for s in subs)


def _sub(name: str, assignment: str, tasks: list[TaskResult], mtime: float, *, folder: str = "") -> tuple:
    """A submission named ``name`` (under ``folder``) with its report."""
    relative = f"{folder}/{name}" if folder else name
    path = Path("/home/teacher/class") / relative
    identity = lms_identity(folder or name) or Identity(folder or Path(name).stem.split("_0")[0])
    sub = Submission(path, identity.name, assignment, identity=identity, relative=relative, mtime=mtime)
    return sub, Report(str(path), assignment, tasks, student=identity.name, nonce="n-" + name[:4])


def _class() -> tuple[list[Submission], list[Report]]:
    """A Canvas class: sato_ken (underscores) submits 02 twice and 05 late by
    Canvas's marker; garciaana submits 02 two days and a second late, and
    also has a folder named ``garciaana_1001`` holding 05; alice (a folder,
    no LMS id) has a written answer pending, bob only that; mallory's file
    is not a notebook."""
    full = [TaskResult("train", 3, 3), TaskResult("merge", 2, 2)]
    pairs = [
        _sub("sato_ken_1023_55023_02_training.ipynb", "02_training", [TaskResult("train", 1, 3)], DUE_TS - 3000),
        _sub("sato_ken_1023_55099_02_training-1.ipynb", "02_training", full, DUE_TS - 4000),  # newer by its id
        _sub("sato_ken_LATE_1023_55100_05_x.ipynb", "05_x", [TaskResult("bits", 4, 4)], DUE_TS - 10),
        _sub(
            "garciaana_1001_55200_02_training.ipynb",
            "02_training",
            [TaskResult("train", 2.5, 3)],
            TWO_DAYS_AND_A_SECOND,
        ),
        _sub("05_x.ipynb", "05_x", [TaskResult("bits", 3, 4)], DUE_TS + 0.5 * DAY, folder="garciaana_1001"),
        _sub(
            "05_x.ipynb",
            "05_x",
            [TaskResult("bits", 4, 4), TaskResult("why", 0, 2, status=PENDING, answer="because")],
            DUE_TS,
            folder="alice",
        ),
    ]
    pairs.append(_sub("05_x.ipynb", "05_x", [TaskResult("why", 0, 2, status=PENDING)], DUE_TS, folder="bob"))
    mallory = _sub("mallory_05_x.ipynb", "05_x", [], DUE_TS)
    mallory[1].error = f"not a readable notebook: {mallory[0].path}"
    pairs.append(mallory)
    return [p[0] for p in pairs], [p[1] for p in pairs]


def _read(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


POLICY = LatePolicy.parse(DUE, "10%/day", "25%")


def test_the_gradebook_is_one_row_per_student_one_number_per_assignment(tmp_path):
    subs, reports = _class()
    book = class_gradebook(reports, subs, POLICY)
    write_class_gradebook(book, tmp_path / "book.csv")
    assert _read(tmp_path / "book.csv") == [
        ["student", "id", "02_training", "05_x", "pending", "late", "total", "max", "errors"],
        ["sato_ken", "1023", "5", "3.6", "0", "1", "8.6", "9", "0"],  # 05 late by the marker: 1 day, 10%
        ["garciaana", "1001", "1.88", "2.7", "0", "4", "4.58", "7", "0"],  # 3 days: 25% (the cap); 1 day
        ["alice", "", "", "4", "1", "0", "4", "6", "0"],  # a written answer pending: counted apart
        ["bob", "", "", "", "1", "0", "0", "2", "0"],  # only a written answer: nothing graded, an empty cell
        ["mallory", "", "", "0", "0", "0", "0", "0", "1"],
    ]
    text = (tmp_path / "book.csv").read_text(encoding="utf-8")
    assert "/" not in text and "ipynb" not in text and "pending" in text.splitlines()[0]


def test_the_details_keep_every_submission_its_time_and_files_relative_to_the_class(tmp_path):
    subs, reports = _class()
    write_details(class_gradebook(reports, subs, POLICY), tmp_path / "details.json")
    rows = json.loads((tmp_path / "details.json").read_text(encoding="utf-8"))
    first = rows[0]
    assert (first["file"], first["counted"], first["points"], first["task"]) == (
        "sato_ken_1023_55023_02_training.ipynb",
        "no",
        1,
        "train",
    )
    late = next(r for r in rows if r["file"].startswith("sato_ken_LATE"))
    assert (late["time_source"], late["late_days"], late["penalty"], late["penalised"]) == (
        "late (Canvas marker)",
        1,
        0.1,
        3.6,
    )
    folder = next(r for r in rows if r["file"] == "garciaana_1001/05_x.ipynb")
    assert (folder["student"], folder["id"], folder["time_source"], folder["submitted"]) == (
        "garciaana",
        "1001",
        "file modification time",
        "2026-12-11T10:59:00+00:00",
    )
    assert next(r for r in rows if r["student"] == "mallory")["error"] == "not a readable notebook: mallory_05_x.ipynb"
    assert "/home/teacher" not in json.dumps(rows)
    write_details(class_gradebook(reports, subs, POLICY), tmp_path / "details.csv")
    assert _read(tmp_path / "details.csv")[0][:6] == ["student", "id", "graded_as", "assignment", "file", "counted"]


def test_canvas_import_file_has_the_columns_and_points_possible_row_canvas_reads(tmp_path):
    subs, reports = _class()
    left = write_lms(class_gradebook(reports, subs, POLICY), "canvas", tmp_path / "c.csv", {"02_training": "4521"})
    assert _read(tmp_path / "c.csv") == [
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "02_training (4521)", "05_x"],
        ["Points Possible", "", "", "", "", "5", "6"],
        ["sato_ken", "1023", "", "", "", "5", "3.6"],
        ["garciaana", "1001", "", "", "", "1.88", "2.7"],
    ]
    assert left == ["alice", "bob", "mallory"]
    with pytest.raises(ValueError, match="--lms-assignment names 09_x, not graded in this run"):
        write_lms(class_gradebook(reports, subs, POLICY), "canvas", tmp_path / "c.csv", {"09_x": "1"})


KEN = "Ken Sato_89_assignsubmission_file_"  # a folder of Moodle's download-all zip


def test_moodle_import_file_has_an_identifying_column_and_one_per_grade_item(tmp_path):
    moodle = [
        _sub("Ana Garcia_88_assignsubmission_file_02_training.ipynb", "02_training", [TaskResult("t", 4, 5)], 0),
        _sub("02_training.ipynb", "02_training", [TaskResult("t", 5, 5)], 0, folder=KEN),
        _sub("05_x.ipynb", "05_x", [TaskResult("t", 1, 2)], 0, folder=KEN),
    ]
    book = class_gradebook([p[1] for p in moodle], [p[0] for p in moodle])
    assert write_lms(book, "moodle", tmp_path / "m.csv") == []
    assert _read(tmp_path / "m.csv") == [
        ["Participant", "Full name", "02_training", "05_x"],
        ["88", "Ana Garcia", "4", ""],
        ["89", "Ken Sato", "5", "1"],
    ]
    write_class_gradebook(book, tmp_path / "book.csv")
    assert _read(tmp_path / "book.csv")[1:] == [
        ["Ana Garcia", "88", "4", "", "0", "0", "4", "5", "0"],
        ["Ken Sato", "89", "5", "1", "0", "0", "6", "7", "0"],
    ]


@pytest.mark.parametrize(
    "due, penalty, cap, message",
    [
        ("2026-12-10T23:59", None, None, "has no time zone: write it with one, e.g. 2026-12-10T23:59+01:00"),
        ("tomorrow", None, None, "is not an ISO 8601 time"),
        (None, "10%/day", None, "--late-penalty needs --due"),
        (DUE, "10%", None, "write a share per day, e.g. 10%/day"),
        (DUE, "ten%/day", None, "'ten' is not a number"),
        (DUE, "10%/day", "150%", "a share between 0% and 100%"),
        (DUE, None, "50%", "--late-cap needs --late-penalty"),
    ],
)
def test_a_naive_deadline_or_a_malformed_policy_is_refused(due, penalty, cap, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("+", r"\+")):
        LatePolicy.parse(due, penalty, cap)


def test_days_late_round_up_and_the_penalty_stops_at_the_cap():
    policy = LatePolicy.parse("2026-12-10T23:59Z", "15%/day", "40%")
    due = datetime.fromisoformat("2026-12-10T23:59Z").timestamp()
    assert [policy.days_late(due + s, False)[0] for s in (0, 1, DAY, DAY + 1, 5 * DAY)] == [0, 1, 1, 2, 5]
    assert [policy.penalty(d) for d in (0, 1, 2, 3)] == [0.0, 0.15, 0.3, 0.4]
    assert policy.days_late(due - DAY, True) == (1, "2026-12-09T23:59:00+00:00", "late (Canvas marker)")
    assert LatePolicy().days_late(due + 9 * DAY, False)[0] == 0  # no --due: nobody is late by the clock


def test_reports_and_submissions_must_pair():
    subs, reports = _class()
    with pytest.raises(ValueError, match="7 reports for 8 submissions"):
        class_gradebook(reports[:-1], subs)
    with pytest.raises(ValueError, match="paired with the submission"):
        class_gradebook(reports[::-1], subs)
