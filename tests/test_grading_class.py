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
import shutil
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
    out, feedback = tmp / "gradebook.csv", tmp / "feedback"
    args = ["grade", str(tmp / "submitted"), "--solutions", str(solutions), "--workers", "2"]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main([*args, "--out", str(out), "--feedback", str(feedback), "--json"]) == 0
    reports = json.loads(printed.getvalue())
    return {"solution": solution, "book": pd.read_csv(out), "feedback": feedback, "json": reports}


def _row(graded, student: str) -> dict:
    book = graded["book"]
    return book[book["student"] == student].iloc[0].to_dict()


def test_one_gradebook_row_per_student(graded):
    book = graded["book"]
    assert sorted(book["student"]) == ["alice", "bob", "carol", "dave"]
    assert list(book.columns[:3]) == ["student", "assignment", "submission"]
    assert list(book.columns[-4:]) == ["total", "max", "pending", "error"]


def test_a_written_answer_is_pending_with_the_students_text_never_scored(graded):
    alice, bob = _row(graded, "alice"), _row(graded, "bob")
    written = [w.grade_id for w in load_written(graded["solution"])]
    assert WRITTEN in written
    assert all(alice[w] == "pending" for w in written) and alice["pending"] == sum(
        w.points for w in load_written(graded["solution"])
    )
    assert alice["total"] == 5 and alice["max"] == 5 + alice["pending"]
    assert bob[WRITTEN] == "0" and bob["pending"] == 0  # nothing written: 0, as nbgrader gives
    page = (graded["feedback"] / "alice.md").read_text()
    assert "needs manual grading" in page and f"> {ANSWER}" in page


def test_memorised_answers_get_only_the_fraction_of_cases_they_know(graded):
    carol = _row(graded, "carol")
    fixed = len(next(t for t in load_tasks(graded["solution"]) if t.grade_id == "03_encoding_encode_word").cases)
    assert float(carol["03_encoding_encode_word"]) == round(3 * fixed / (fixed + 5), 2)
    assert float(carol["03_encoding_decode"]) == 2


def test_feedback_shows_the_input_of_a_failed_case_never_its_answer(graded):
    page = (graded["feedback"] / "carol.md").read_text()
    assert "generated for you" in page and "hidden tests passed" in page
    (task,) = [t for t in with_generated(load_tasks(graded["solution"]), "carol") if t.grade_id.endswith("word")]
    for case in (c for c in task.cases if c.generated):
        assert repr(case.expected) not in page.replace(case.call, "")
    assert "TABLE" not in page and "ranks = {pair: rank" not in page  # no code, not hers, not the model's


def test_a_notebook_saved_under_another_assignments_name_is_reported_not_graded(graded):
    dave = _row(graded, "dave")
    assert "cells are 01_compression's" in dave["error"] and dave["total"] == 0
    assert "Not graded" in (graded["feedback"] / "dave.md").read_text()


def test_json_reports_say_whose_they_are(graded):
    by_student = {r["student"]: r for r in graded["json"]}
    assert sorted(by_student) == ["alice", "bob", "carol", "dave"]
    written = next(t for t in by_student["alice"]["tasks"] if t["grade_id"] == WRITTEN)
    assert written["status"] == "pending" and ANSWER in written["answer"]
