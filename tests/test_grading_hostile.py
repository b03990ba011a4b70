"""More bad and hostile input, each with a clear per-task result: never a
crashed grader, never a false full score (test_grader.py has the others).

Values that only pretend (an ``__eq__`` that always says True, a
``__repr__`` that raises or lies, a generator, 10**8 items), processes left
running after the kernel, test cells whose points or grade_id were edited
or that were duplicated, an nbformat 3 notebook, an empty one, a 50 MB one.
All use 03_encoding (encode_word 3 points, decode 2) and share one grading
run (two workers).
"""

from __future__ import annotations

import json
import uuid

import nbformat
import pytest
from grading_support import DECODE, ENCODE, SOLUTIONS, SOLVED, running, submission

from bpe_lab.grading import jail
from bpe_lab.grading.grader import Limits, grade

LIMITS = Limits(cell_timeout=20, notebook_timeout=120, memory_mb=1536)
MARK = f"4321.{uuid.uuid4().int % 10**9:09d}"  # the seconds of this run's sleeps: unique, so findable


def _edit_test_cells(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade_id") == ENCODE:
            meta["points"] = 100
        if meta.get("grade_id") == DECODE:
            meta["grade_id"], meta["points"] = "03_encoding_decode_renamed", 50
    return nb


def _duplicate_test_cell(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    i = next(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == ENCODE)
    copy = nbformat.from_dict(json.loads(json.dumps(nb.cells[i])))
    copy["id"] = uuid.uuid4().hex[:8]  # the same grade_id twice, as a copy-paste leaves it
    nb.cells.insert(i + 1, copy)
    return nb


def _test_cell_copied_above_its_answer(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """What JupyterLab leaves when a learner copies a locked test cell up
    to see it beside the answer: the same metadata, grade_id and all."""
    test = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == ENCODE)
    answer = next(
        i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == f"{ENCODE}_answer"
    )
    copy = nbformat.from_dict(json.loads(json.dumps(test)))
    copy["id"] = uuid.uuid4().hex[:8]
    nb.cells.insert(answer, copy)
    return nb


def _huge_outputs(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell("print('plots')")
    cell.outputs = [nbformat.v4.new_output("stream", text="x" * (50 << 20))]
    nb.cells.append(cell)
    return nb


def _background(cleared_env: bool) -> str:
    """encode_word's cell, starting a process that outlives the kernel."""
    start = (
        f"subprocess.Popen(['sleep', '{MARK}'], start_new_session=True, env={{}}, stdout=-3, stderr=-3)"
        if cleared_env  # its own session and no environment: only the sandbox's pid namespace catches it
        else f"subprocess.Popen(['sh', '-c', 'sleep {MARK} &'], stdout=-3, stderr=-3).wait()"  # an orphan
    )
    return f"import subprocess\n{start}\n{SOLVED[f'{ENCODE}_answer']}"


#: silences encode_word's visible check, so that the hidden calls meet the value
NO_CHECK = "from bpe_lab.grading import check as _check\n_check.check_encode_word = lambda *a: None\n"

HOSTILE = {
    # name -> (the notebook or file text, points for encode_word, for decode, phrase in encode_word's message)
    "eq_always_true": (
        "class AlwaysEqual:\n    def __eq__(self, other):\n        return True\n"
        "def encode_word(word, merges):\n    return AlwaysEqual()",
        0,
        2,
        "AlwaysEqual, not plain data",
    ),
    "repr_raises": (
        "class Shy:\n    def __repr__(self):\n        raise RuntimeError('no')\n"
        "def encode_word(word, merges):\n    return Shy()",
        0,
        2,
        "Shy, not plain data",  # the grader's replay of the visible check never calls its repr, nor the probe
    ),
    "repr_raises_past_a_silenced_check": (
        NO_CHECK + "class Shy:\n    def __repr__(self):\n        raise RuntimeError('no')\n"
        "def encode_word(word, merges):\n    return Shy()",
        0,
        2,
        "Shy, not plain data",
    ),
    "list_that_lies": (
        "class Liar(list):\n    def __eq__(self, other):\n        return True\n"
        "    def __repr__(self):\n        return \"['ab', 'c', '</w>']\"\n"
        "def encode_word(word, merges):\n    return Liar(['?'])",
        0,
        2,
        "returned ['?']",
    ),
    "returns_generator": (
        NO_CHECK + "def encode_word(word, merges):\n    return (s for s in [word])",
        0,
        2,
        "not a generator",
    ),
    "returns_10_to_the_8_items": (
        NO_CHECK + "def encode_word(word, merges):\n    return [0] * 10**8",
        0,
        2,
        "characters long",
    ),
    "edited_points_and_grade_id": (_edit_test_cells(submission()), 3, 2, ""),
    "duplicated_test_cell": (_duplicate_test_cell(submission()), 3, 2, ""),
    "test_cell_copied_above_its_answer": (_test_cell_copied_above_its_answer(submission()), 3, 2, ""),
    "nbformat_3": (nbformat.writes(nbformat.convert(submission(), 3)), 3, 2, ""),
    "empty_notebook": (nbformat.v4.new_notebook(), 0, 0, "not defined"),
    "50_mb_of_outputs": (_huge_outputs(submission()), 3, 2, ""),
    "8_mb_of_code": (submission("x = '" + "y" * (9 << 20) + "'"), 0, 0, "more than 8 MB"),
    "background_process": (_background(cleared_env=bool(jail.bwrap())), 3, 2, ""),
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    paths = []
    for key, (content, *_) in HOSTILE.items():
        path = folder / key / "03_encoding.ipynb"
        path.parent.mkdir()
        if isinstance(content, str) and not content.startswith("{"):
            content = submission(content)
        path.write_text(content if isinstance(content, str) else nbformat.writes(content), encoding="utf-8")
        paths.append(path)
    reports = grade(paths, solutions_dir=SOLUTIONS, limits=LIMITS, workers=2)
    return dict(zip(HOSTILE, reports)), running(MARK)


@pytest.mark.parametrize("key", sorted(HOSTILE))
def test_bad_input_gets_a_clear_result_per_task(graded, key):
    report = graded[0][key]
    _, encode, decode, phrase = HOSTILE[key]
    points = {t.grade_id: t.points for t in report.tasks if t.grade_id in (ENCODE, DECODE)}
    assert points == {ENCODE: encode, DECODE: decode}, report.tasks
    message = next(t.message for t in report.tasks if t.grade_id == ENCODE)
    assert phrase in (message or report.error), report.tasks


def test_edited_points_count_for_nothing(graded):
    report = graded[0]["edited_points_and_grade_id"]
    assert {t.grade_id: t.max_points for t in report.tasks if t.grade_id.startswith("03_encoding")} == {
        ENCODE: 3,
        DECODE: 2,
    }


def test_nothing_a_kernel_started_outlives_grading(graded):
    assert graded[1] == [], "processes started by a submission were still running when grading returned"


def test_without_a_sandbox_the_processes_a_kernel_started_are_killed_too(tmp_path):
    mark = f"4322.{uuid.uuid4().int % 10**9:09d}"
    path = tmp_path / "bg" / "03_encoding.ipynb"
    path.parent.mkdir()
    nbformat.write(submission(_background(cleared_env=False).replace(MARK, mark)), path)
    report = grade([path], solutions_dir=SOLUTIONS, limits=LIMITS, sandbox=False)[0]
    assert report.total == 5 and report.sandbox
    assert running(mark) == []
