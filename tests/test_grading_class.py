"""Grading a class with ``bpe-lab grade``: nbgrader's folder layout, two
workers, one gradebook row per student, a feedback file each, partial
credit, written answers pending, and a notebook saved under the wrong
assignment's name reported, not graded.

Carol memorised: her encode_word is a table of the answers to every case
she could see (the self-check's) and to the solution's fixed hidden cases.
She passes those and fails the cases generated for her, so she gets
exactly that fraction of the points, and her feedback shows her inputs
but not their answers. One ``bpe-lab grade`` run serves every test.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import os
import shutil
from datetime import datetime
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from bpe_lab import encode_word
from bpe_lab.cli import main
from bpe_lab.grading.authoring.release import release_notebook
from bpe_lab.grading.authoring.tasks import load_written
from bpe_lab.grading.cases.generated import with_generated
from bpe_lab.grading.check.encoding import encode_cases
from bpe_lab.grading.check.runner import rng
from bpe_lab.grading.commands.grader import load_tasks

ROOT = Path(__file__).resolve().parent.parent
WRITTEN = "03_encoding_why_ranks"  # the written answer this test adds to its copy of the solution
ANSWER = "Encoding replays the merges by rank, so a word splits the way training joined it."


def _solution_with_a_written_answer() -> nbformat.NotebookNode:
    solution = nbformat.read(ROOT / "solutions" / "03_encoding.ipynb", 4)
    cell = nbformat.v4.new_markdown_cell(f"### BEGIN SOLUTION\n{ANSWER}\n### END SOLUTION")
    cell.metadata["nbgrader"] = {"grade": True, "solution": True, "locked": False, "points": 2, "grade_id": WRITTEN}
    cell.metadata["nbgrader"]["schema_version"] = 3
    solution.cells.append(cell)
    return solution


def _memorised(solution: nbformat.NotebookNode) -> str:
    """encode_word as a table of every answer Carol could have seen."""
    task = next(t for t in load_tasks(solution) if t.grade_id == "03_encoding_encode_word")
    fixed = [ast.literal_eval(c.call[len("encode_word") :]) for c in task.cases]
    seen = [(w, m) for w, m in encode_cases(rng())] + fixed
    table = {(w, tuple(m)): encode_word(w, m) for w, m in seen}
    return f"TABLE = {table!r}\ndef encode_word(word, merges):\n    return TABLE.get((word, tuple(merges)), [word])"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("class")
    solutions = tmp / "solutions"
    solutions.mkdir()
    solution = _solution_with_a_written_answer()
    nbformat.write(solution, solutions / "03_encoding.ipynb")
    shutil.copy(ROOT / "solutions" / "01_compression.ipynb", solutions)
    solved = {c.metadata["nbgrader"]["grade_id"]: c.source for c in solution.cells if "nbgrader" in c.metadata}

    def submit(student: str, answers: dict[str, str], notebook: str = "03_encoding") -> None:
        source = solution if notebook == "03_encoding" else nbformat.read(solutions / f"{notebook}.ipynb", 4)
        nb = release_notebook(source, notebook)
        for cell in nb.cells:
            gid = cell.metadata.get("nbgrader", {}).get("grade_id")
            cell.source = answers.get(gid, cell.source)
        folder = tmp / "submitted" / student / "03_encoding"
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / "03_encoding.ipynb")

    submit("alice", solved)
    submit("bob", {})
    submit("carol", {**solved, "03_encoding_encode_word_answer": _memorised(solution)})
    submit("dave", {}, notebook="01_compression")  # notebook 01, saved as 03_encoding.ipynb
    out, feedback, details = tmp / "gradebook.csv", tmp / "feedback", tmp / "details.csv"
    args = ["grade", str(tmp / "submitted"), "--solutions", str(solutions), "--workers", "2"]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main([*args, "--out", str(out), "--details", str(details), "--feedback", str(feedback), "--json"]) == 0
    reports = json.loads(printed.getvalue())
    book, detail = pd.read_csv(out), pd.read_csv(details, keep_default_na=False)
    return {"solution": solution, "book": book, "details": detail, "feedback": feedback, "json": reports}


def _row(graded, student: str) -> dict:
    book = graded["book"]
    return book[book["student"] == student].iloc[0].to_dict()


def _task(graded, student: str, grade_id: str) -> dict:
    """``student``'s row of ``grade_id`` in the details (``--details``)."""
    details = graded["details"]
    return details[(details["student"] == student) & (details["task"] == grade_id)].iloc[0].to_dict()


def test_one_gradebook_row_per_student(graded):
    book = graded["book"]
    assert sorted(book["student"]) == ["alice", "bob", "carol", "dave"]
    assert list(book.columns) == ["student", "id", "03_encoding", "pending", "late", "total", "max", "errors"]
    assert all(str(t) in ("int64", "float64") for t in book.dtypes[2:]), book.dtypes  # numbers only


def test_a_written_answer_is_pending_with_the_students_text_never_scored(graded):
    alice, bob = _row(graded, "alice"), _row(graded, "bob")
    written = load_written(graded["solution"])
    assert WRITTEN in [w.grade_id for w in written]
    assert all(_task(graded, "alice", w.grade_id)["status"] == "pending" for w in written)
    assert all(_task(graded, "alice", w.grade_id)["task_points"] == "" for w in written)
    assert alice["pending"] == len(written) and alice["03_encoding"] == 5 and alice["total"] == 5
    assert alice["max"] == 5 + sum(w.points for w in written)
    bob_written = _task(graded, "bob", WRITTEN)  # nothing written: 0, as nbgrader gives
    assert (bob_written["status"], float(bob_written["task_points"]), bob["pending"]) == ("graded", 0, 0)
    page = (graded["feedback"] / "alice.md").read_text()
    assert "needs manual grading" in page and f"> {ANSWER}" in page


def test_memorised_answers_get_only_the_fraction_of_cases_they_know(graded):
    fixed = len(next(t for t in load_tasks(graded["solution"]) if t.grade_id == "03_encoding_encode_word").cases)
    assert float(_task(graded, "carol", "03_encoding_encode_word")["task_points"]) == round(3 * fixed / (fixed + 5), 2)
    assert float(_task(graded, "carol", "03_encoding_decode")["task_points"]) == 2


def test_feedback_shows_the_input_of_a_failed_case_never_its_answer(graded):
    page = (graded["feedback"] / "carol.md").read_text()
    assert "generated for you" in page and "hidden tests passed" in page
    (task,) = [t for t in with_generated(load_tasks(graded["solution"]), "carol") if t.grade_id.endswith("word")]
    for case in (c for c in task.cases if c.generated):
        assert repr(case.expected) not in page.replace(case.call, "")
    assert "TABLE" not in page and "ranks = {pair: rank" not in page  # no code, not hers, not the model's


def test_a_notebook_saved_under_another_assignments_name_is_reported_not_graded(graded):
    dave = _row(graded, "dave")
    assert (dave["errors"], dave["total"], dave["max"]) == (1, 0, 0)
    assert "cells are 01_compression's" in _task(graded, "dave", "")["error"]
    assert "Not graded" in (graded["feedback"] / "dave.md").read_text()


def test_json_reports_say_whose_they_are(graded):
    by_student = {r["student"]: r for r in graded["json"]}
    assert sorted(by_student) == ["alice", "bob", "carol", "dave"]
    written = next(t for t in by_student["alice"]["tasks"] if t["grade_id"] == WRITTEN)
    assert written["status"] == "pending" and ANSWER in written["answer"]


# ------------------------------------------------------------ an LMS class, late work

DUE = "2026-12-10T23:59+01:00"
DUE_TS = datetime.fromisoformat(DUE).timestamp()


@pytest.fixture(scope="module")
def lms_graded(tmp_path_factory):
    """Solution notebooks copied under Canvas's and Moodle's download names,
    each class graded by one ``bpe-lab grade`` run with a late policy:
    sato_ken (a name with an underscore) hands in 01 untouched, then the
    solution (a resubmission), and 03 with Canvas's LATE marker; garciaana
    hands in 01 a day and a second late. In Moodle's download, Ken Sato's
    03 is in his folder and Ana Garcia's 01 is a file."""
    tmp = tmp_path_factory.mktemp("lms")
    canvas, moodle = tmp / "canvas", tmp / "moodle" / "Ken Sato_89_assignsubmission_file_"
    canvas.mkdir()
    moodle.mkdir(parents=True)

    def copy(name: str, to: Path, when: float, untouched: bool = False) -> None:
        source = ROOT / "solutions" / f"{name}.ipynb"
        if untouched:
            nbformat.write(release_notebook(nbformat.read(source, 4), name), to)
        else:
            shutil.copy(source, to)
        os.utime(to, (when, when))

    copy("01_compression", canvas / "sato_ken_1023_55023_01_compression.ipynb", DUE_TS - 9000, untouched=True)
    copy("01_compression", canvas / "sato_ken_1023_55099_01_compression-1.ipynb", DUE_TS - 9500)  # newer by id
    copy("03_encoding", canvas / "sato_ken_LATE_1023_55100_03_encoding.ipynb", DUE_TS - 60)
    copy("01_compression", canvas / "garciaana_1001_55200_01_compression.ipynb", DUE_TS + 86401)
    copy("03_encoding", moodle / "03_encoding.ipynb", DUE_TS)
    copy("01_compression", moodle.parent / "Ana Garcia_88_assignsubmission_file_01_compression.ipynb", DUE_TS)
    policy = ["--due", DUE, "--late-penalty", "10%/day", "--late-cap", "50%", "--workers", "2"]
    for lms in ("canvas", "moodle"):
        args = ["grade", str(tmp / lms), "--out", str(tmp / f"{lms}.csv"), "--details", str(tmp / f"{lms}.json")]
        with contextlib.redirect_stdout(io.StringIO()):
            assert main([*args, "--lms", lms, "--lms-assignment", "01_compression=4521", *policy]) == 0
    return tmp


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def test_a_canvas_class_grades_into_one_row_per_student_and_canvas_s_import_file(lms_graded):
    """01 is worth 5 graded points (and 1 written, pending), 03 5 (and 2):
    sato_ken's resubmission counts (5), his LATE 03 loses 10% (4.5);
    garciaana's 01, 1 day and 1 second late, is 2 days: 20% (4)."""
    assert _lines(lms_graded / "canvas.csv") == [
        "student,id,01_compression,03_encoding,pending,late,total,max,errors",
        "garciaana,1001,4,,1,2,4,6,0",
        "sato_ken,1023,5,4.5,2,1,9.5,13,0",
    ]
    assert _lines(lms_graded / "canvas-canvas.csv") == [
        "Student,ID,SIS User ID,SIS Login ID,Section,01_compression (4521),03_encoding",
        "Points Possible,,,,,6,7",
        "garciaana,1001,,,,4,",
        "sato_ken,1023,,,,5,4.5",
    ]
    details = json.loads((lms_graded / "canvas.json").read_text(encoding="utf-8"))
    first = {(d["file"], d["counted"], d["time_source"], d["late_days"]) for d in details}
    assert first == {
        ("sato_ken_1023_55023_01_compression.ipynb", "no", "file modification time", 0),
        ("sato_ken_1023_55099_01_compression-1.ipynb", "yes", "file modification time", 0),
        ("sato_ken_LATE_1023_55100_03_encoding.ipynb", "yes", "late (Canvas marker)", 1),
        ("garciaana_1001_55200_01_compression.ipynb", "yes", "file modification time", 2),
    }
    assert str(lms_graded) not in (lms_graded / "canvas.json").read_text(encoding="utf-8")


def test_a_moodle_class_grades_into_one_row_per_student_and_moodle_s_import_file(lms_graded):
    assert _lines(lms_graded / "moodle.csv") == [
        "student,id,01_compression,03_encoding,pending,late,total,max,errors",
        "Ana Garcia,88,5,,1,0,5,6,0",
        "Ken Sato,89,,5,1,0,5,7,0",
    ]
    assert _lines(lms_graded / "moodle-moodle.csv") == [
        "Participant,Full name,01_compression (4521),03_encoding",
        "88,Ana Garcia,5,",
        "89,Ken Sato,,5",
    ]


def test_a_deadline_without_a_time_zone_is_refused_before_grading(tmp_path, capsys):
    args = ["grade", str(tmp_path), "--due", "2026-12-10T23:59"]
    assert main(args) != 0
    assert "--due '2026-12-10T23:59' has no time zone" in capsys.readouterr().err
