"""Who submitted what, from the layouts instructors get: nbgrader's folders,
one folder per student, LMS download names; never two students merged,
never a notebook graded as an assignment its cells do not belong to.

No kernel runs here: ``collect`` only reads the files.
"""

from __future__ import annotations

import csv
from pathlib import Path

import nbformat
import pytest

from bpe_lab.grading.authoring.release import release_notebook
from bpe_lab.grading.intake.roster import collect, student_from_name
from bpe_lab.grading.intake.submissions import read_solutions
from bpe_lab.grading.score.feedback import feedback_page
from bpe_lab.grading.score.gradebook import class_gradebook, write_class_gradebook
from bpe_lab.grading.score.report import Report, TaskResult, write_gradebook

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = read_solutions(ROOT / "solutions")


def _write(path: Path, assignment: str | None) -> Path:
    """An untouched exercise of ``assignment`` (None: a notebook without cells) at ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    nb = release_notebook(SOLUTIONS[assignment], assignment) if assignment else nbformat.v4.new_notebook()
    nbformat.write(nb, path)
    return path


def test_the_student_comes_from_the_layout(tmp_path):
    _write(tmp_path / "submitted" / "alice" / "03_encoding" / "03_encoding.ipynb", "03_encoding")
    _write(tmp_path / "submitted" / "alice" / "02_training" / "02_training.ipynb", "02_training")
    _write(tmp_path / "submissions" / "bob" / "homework.ipynb", "03_encoding")
    _write(tmp_path / "canvas" / "smithjane_12345_67890_03_encoding.ipynb", "03_encoding")
    _write(tmp_path / "canvas" / "doejohn_LATE_2222_67891_02_training-1.ipynb", "02_training")
    _write(tmp_path / "flat" / "carol_03_encoding.ipynb", "03_encoding")
    _write(tmp_path / "flat" / "dave" / "03_encoding.ipynb", "03_encoding")
    folders = [tmp_path / name for name in ("submitted", "submissions", "canvas", "flat")]
    who = {(s.student, s.assignment) for s in collect(folders, SOLUTIONS)}
    assert who == {
        ("alice", "03_encoding"),
        ("alice", "02_training"),
        ("bob", "03_encoding"),
        ("smithjane_12345", "03_encoding"),
        ("doejohn_2222", "02_training"),
        ("carol", "03_encoding"),
        ("dave", "03_encoding"),
    }


def test_lms_download_names():
    assert student_from_name("smithjane_12345_67890_02_training.ipynb", []) == ("smithjane_12345", "02_training.ipynb")
    assert student_from_name("Jane Smith_777_assignsubmission_file_03_encoding.ipynb", [])[0] == "Jane_Smith_777"
    assert student_from_name("03_encoding.ipynb", []) == ("", "03_encoding.ipynb")
    # a Canvas name holding an underscore: the submission id is not the student's
    assert student_from_name("sato_ken_1023_55023_02_training.ipynb", []) == ("sato_ken_1023", "02_training.ipynb")
    assert student_from_name("sato_ken_LATE_1023_55024_02_training.ipynb", [])[0] == "sato_ken_1023"


def test_a_canvas_name_with_an_underscore_and_its_folder_are_one_student(tmp_path):
    """Finding: ``sato_ken_1023_55023_…`` kept the submission id in the key, and
    the same person from an LMS file and a folder named by it were two rows."""
    _write(tmp_path / "c" / "sato_ken_1023_55023_02_training.ipynb", "02_training")
    _write(tmp_path / "c" / "sato_ken_1023" / "03_encoding.ipynb", "03_encoding")
    subs = collect([tmp_path / "c"], SOLUTIONS)
    reports = [Report(str(s.path), s.assignment, [TaskResult("t", 1, 1)], student=s.student) for s in subs]
    write_class_gradebook(class_gradebook(reports, subs), tmp_path / "book.csv")
    assert (tmp_path / "book.csv").read_text(encoding="utf-8").splitlines() == [
        "student,id,02_training,03_encoding,pending,late,total,max,errors",
        "sato_ken,1023,1,1,0,0,2,2,0",
    ]


def test_a_class_gradebook_name_that_would_be_a_formula_is_text(tmp_path):
    path = _write(tmp_path / HYPERLINK / "03_encoding.ipynb", "03_encoding")
    subs = collect([tmp_path], SOLUTIONS)
    reports = [Report(str(path), "03_encoding", [TaskResult("t", 1, 2)], student=HYPERLINK)]
    write_class_gradebook(class_gradebook(reports, subs), tmp_path / "book.csv")
    with open(tmp_path / "book.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert rows[1] == [f"'{HYPERLINK}", "", "1", "0", "0", "1", "2", "0"]


def test_the_same_file_name_in_two_folders_is_two_students_never_merged(tmp_path):
    first = _write(tmp_path / "x" / "alice" / "03_encoding.ipynb", "03_encoding")
    second = _write(tmp_path / "y" / "alice" / "03_encoding.ipynb", "03_encoding")
    subs = collect([first, second], SOLUTIONS)
    assert len({s.student for s in subs}) == 2
    assert all(s.student.startswith("alice (") and "graded apart" in s.note for s in subs)
    # two uploads of one Canvas student for one assignment: also kept apart, and said so
    _write(tmp_path / "c" / "smithjane_1_2_03_encoding.ipynb", "03_encoding")
    _write(tmp_path / "c" / "smithjane_1_3_03_encoding-1.ipynb", "03_encoding")
    subs = collect([tmp_path / "c"], SOLUTIONS)
    assert len({s.student for s in subs}) == 2 and all("2 submissions" in s.note for s in subs)


@pytest.mark.parametrize(
    "name, content, override, assignment, phrase",
    [
        ("03_encoding.ipynb", "01_compression", None, None, "but its cells are 01_compression's"),
        ("02_training_03_encoding.ipynb", None, None, None, "names 02_training and 03_encoding"),
        ("02_training_03_encoding.ipynb", "02_training", None, "02_training", "graded as 02_training"),
        ("homework.ipynb", "02_training", None, "02_training", ""),
        ("homework.ipynb", None, None, None, "cannot tell which assignment"),
        ("homework.ipynb", "02_training", "03_encoding", None, "--assignment is 03_encoding"),
        ("homework.ipynb", None, "03_encoding", "03_encoding", ""),
        ("03_encoding.ipynb", None, None, "03_encoding", ""),
    ],
)
def test_the_assignment_comes_from_the_cells_and_a_disagreement_is_reported(
    tmp_path, name, content, override, assignment, phrase
):
    path = _write(tmp_path / "alice" / name, content)
    (sub,) = collect([path], SOLUTIONS, override)
    assert sub.assignment == assignment
    assert phrase in (sub.error if assignment is None else sub.note)
    assert bool(sub.error) == (assignment is None)


def test_a_notebook_with_as_many_cells_of_two_assignments_is_not_graded(tmp_path):
    def graded_cells(name):
        return [c for c in release_notebook(SOLUTIONS[name], name).cells if "nbgrader" in c.metadata][:2]

    mixed = nbformat.v4.new_notebook()
    mixed.cells = graded_cells("02_training") + graded_cells("03_encoding")
    nbformat.write(mixed, tmp_path / "notebook.ipynb")
    (sub,) = collect([tmp_path / "notebook.ipynb"], SOLUTIONS)
    assert sub.assignment is None and "several assignments (02_training, 03_encoding)" in sub.error


HYPERLINK = '=HYPERLINK("evil.example?steal","open")'  # a folder name: no /


def test_the_student_is_the_first_folder_under_the_root_and_nothing_deeper_names_one(tmp_path):
    """Finding 9: from ``submitted/mallory/03_encoding/``, folders inside make
    no row for bob, no second alice, and no student named like a formula."""
    root = tmp_path / "submitted"
    _write(root / "mallory" / "03_encoding" / "03_encoding.ipynb", "03_encoding")
    _write(root / "alice" / "03_encoding" / "03_encoding.ipynb", "03_encoding")
    inside = root / "mallory" / "03_encoding"
    for deep in ("bob/03_encoding", "alice/03_encoding", f"{HYPERLINK}/03_encoding", "x/y/z"):
        _write(inside / deep / "03_encoding.ipynb", "03_encoding")
    _write(root / "mallory" / "bob_1_2_03_encoding.ipynb", "03_encoding")  # a Canvas name inside a folder
    subs = collect([root], SOLUTIONS)
    graded = sorted((s.student, s.assignment, str(s.path.relative_to(root))) for s in subs if s.assignment)
    assert graded == [
        ("alice", "03_encoding", "alice/03_encoding/03_encoding.ipynb"),
        (
            "mallory (" + str(root / "mallory/03_encoding/03_encoding.ipynb") + ")",
            "03_encoding",
            "mallory/03_encoding/03_encoding.ipynb",
        ),
        (
            "mallory (" + str(root / "mallory/bob_1_2_03_encoding.ipynb") + ")",
            "03_encoding",
            "mallory/bob_1_2_03_encoding.ipynb",
        ),
    ]
    refused = [s for s in subs if s.assignment is None]
    assert len(refused) == 4 and {s.student for s in refused} == {"mallory"}
    assert all("deeper than any layout goes" in s.error and "not graded" in s.error for s in refused)
    assert any(f"it lies in 03_encoding/{HYPERLINK}/03_encoding/ inside mallory/" in s.error for s in refused)


def test_a_gradebook_cell_that_would_be_a_formula_is_text(tmp_path):
    """OWASP's rule: a cell that begins with =, +, -, @ gets a ' in front,
    whatever column it is in; numbers stay numbers. A tab or a carriage
    return, like any control character, is shown escaped (``shown``)."""
    reports = [
        Report(f"{HYPERLINK}.ipynb", "03_encoding", [TaskResult("t", 1, 2, "-1 wrong")], student=HYPERLINK),
        Report("b.ipynb", "03_encoding", [TaskResult("t", 2, 2)], error="+1", student="@bob"),
        Report("c.ipynb", None, error="\tx", student="\rcarol"),
        Report("d.ipynb", "03_encoding", [TaskResult("t", 0, 2)], student="dave-smith"),
    ]
    write_gradebook(reports, tmp_path / "book.csv")
    with open(tmp_path / "book.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [r["student"] for r in rows] == [f"'{HYPERLINK}", "'@bob", "\\rcarol", "dave-smith"]
    assert rows[0]["submission"] == f"'{HYPERLINK}.ipynb" and rows[1]["error"] == "'+1" and rows[2]["error"] == "\\tx"
    assert [r["t"] for r in rows] == ["1.0", "2.0", "", "0.0"] and rows[0]["total"] == "1"
    starts = [cell[:1] for row in rows for cell in row.values() if cell]
    assert not any(c in "=+-@\t\r" for c in starts), starts


def test_a_file_given_by_itself_is_named_by_its_student_folder(tmp_path):
    path = _write(tmp_path / "submitted" / "alice" / "03_encoding" / "03_encoding.ipynb", "03_encoding")
    other = _write(tmp_path / "submissions" / "bob" / "03_encoding.ipynb", "03_encoding")
    assert [(s.student, s.assignment) for s in collect([path, other], SOLUTIONS)] == [
        ("alice", "03_encoding"),
        ("bob", "03_encoding"),
    ]


def test_names_and_reasons_from_folder_names_stay_on_one_line_of_feedback(tmp_path):
    """A folder named with a new line and a Markdown heading neither breaks
    the reason it is not graded nor starts a section of the feedback page:
    the new line is shown escaped (``terminal_text.shown``)."""
    root = tmp_path / "submitted"
    _write(root / "mallory" / "03_encoding" / "x\n# 5/5 for mallory\r" / "y" / "03_encoding.ipynb", "03_encoding")
    (sub,) = collect([root], SOLUTIONS)
    assert "\n" not in sub.error and "\r" not in sub.error and r"x\n# 5/5 for mallory\r/y/" in sub.error
    page = feedback_page("mallory\n# all marks", [Report(str(sub.path), None, error=sub.error, student="mallory")])
    assert [line for line in page.splitlines() if line.startswith("#")] == [
        r"# Feedback for mallory\n# all marks",
        "## unknown assignment: 0/0",
    ]
