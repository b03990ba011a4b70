"""exercises/ is generated from solutions/: in sync, without solutions or
hidden tests, without outputs, and the same bytes on every run."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from bpe_lab.cli import main
from bpe_lab.grading.authoring.release import (
    BEGIN_HIDDEN,
    BEGIN_SOLUTION,
    release,
    release_notebook,
    render,
    stale,
    strip_regions,
)

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS, EXERCISES = ROOT / "solutions", ROOT / "exercises"


def test_exercises_are_in_sync_with_solutions():
    assert stale(SOLUTIONS, EXERCISES) == [], "exercises/ is out of date: run `bpe-lab release`"


def test_there_is_one_exercise_notebook_per_chapter():
    names = sorted(render(SOLUTIONS))
    assert [n[:2] for n in names] == [f"{i:02d}" for i in range(1, len(names) + 1)]
    assert len(names) >= 4


@pytest.mark.parametrize("name", sorted(render(SOLUTIONS)))
def test_an_exercise_holds_no_solution_no_hidden_test_and_no_output(name):
    nb = nbformat.reads(render(SOLUTIONS)[name], as_version=4)
    text = "\n".join(c.source for c in nb.cells)
    assert "### BEGIN" not in text and "### END" not in text
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution") and cell.cell_type == "code":
            assert "# YOUR CODE HERE\n" in cell.source and cell.source.rstrip().endswith("raise NotImplementedError()")
        if meta.get("solution") and cell.cell_type == "markdown":  # a written answer
            assert "YOUR ANSWER HERE" in cell.source
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None
        if meta.get("locked"):
            assert cell.metadata["editable"] is False and cell.metadata["deletable"] is False
    assert nb.metadata["bpe_lab"]["assignment"] == name[:-6]
    assert "language_info" not in nb.metadata


def test_release_is_deterministic():
    assert render(SOLUTIONS) == render(SOLUTIONS)


def test_solution_regions_become_an_indented_stub():
    source = "def f(x):\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION\n"
    assert strip_regions(
        source, BEGIN_SOLUTION, "### END SOLUTION", ("# YOUR CODE HERE", "raise NotImplementedError()")
    ) == ("def f(x):\n    # YOUR CODE HERE\n    raise NotImplementedError()")


def test_hidden_tests_are_removed_with_their_markers():
    source = "check(f)\n### BEGIN HIDDEN TESTS\nassert f(1) == 2\n### END HIDDEN TESTS"
    assert strip_regions(source, BEGIN_HIDDEN, "### END HIDDEN TESTS") == "check(f)"


@pytest.mark.parametrize(
    "source",
    [
        "### BEGIN SOLUTION\nx = 1",
        "x = 1\n### END SOLUTION",
        "### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION",
    ],
)
def test_unbalanced_markers_are_refused(source):
    with pytest.raises(ValueError):
        strip_regions(source, BEGIN_SOLUTION, "### END SOLUTION", ("stub",))


def test_a_markdown_answer_becomes_your_answer_here():
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_markdown_cell("Why?\n### BEGIN SOLUTION\nBecause.\n### END SOLUTION")]
    )
    assert release_notebook(nb, "07_x").cells[0].source == "Why?\nYOUR ANSWER HERE"


def test_a_written_answer_without_markers_is_replaced_whole_as_nbgrader_does():
    answer = nbformat.v4.new_markdown_cell("Because ranks replay training.")
    answer.metadata["nbgrader"] = {"grade": True, "solution": True, "points": 2, "grade_id": "07_x_why"}
    code = nbformat.v4.new_code_cell("def f():\n    return 1")
    code.metadata["nbgrader"] = {"grade": False, "solution": True, "grade_id": "07_x_f"}
    nb = nbformat.v4.new_notebook(cells=[answer, code])
    released = release_notebook(nb, "07_x").cells
    assert released[0].source == "YOUR ANSWER HERE" and "ranks" not in released[0].source
    assert released[1].source == "# YOUR CODE HERE\nraise NotImplementedError()"


def test_release_writes_and_check_reports_a_stale_folder(tmp_path, capsys):
    out = tmp_path / "exercises"
    assert release(SOLUTIONS, out) == sorted(render(SOLUTIONS))
    assert release(SOLUTIONS, out) == []
    (out / "99_old.ipynb").write_text("{}")
    first = sorted(out.glob("0*.ipynb"))[0]
    first.write_text(first.read_text() + " ")
    with pytest.raises(SystemExit) as exit_:
        main(["release", "--solutions", str(SOLUTIONS), "--out", str(out), "--check"])
    assert exit_.value.code == 1 and "out of date" in capsys.readouterr().out
    assert main(["release", "--solutions", str(SOLUTIONS), "--out", str(out)]) == 0
    assert not (out / "99_old.ipynb").exists() and stale(SOLUTIONS, out) == []
