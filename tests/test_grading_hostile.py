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
from grading_support import DECODE, ENCODE, SOLUTION, SOLUTIONS, SOLVED, exercise_with, running, submission

from bpe_lab.grading.cases.generators import CASES_PER_TASK
from bpe_lab.grading.commands.grader import Limits, grade, load_tasks
from bpe_lab.grading.run import jail

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

#: What the kernel keeps of the cells it ran that could hold a hidden call:
#: IPython's history (In, _ih, Out, _i, _iN, _N, the history database) and
#: linecache, where IPython's compiler puts each cell for tracebacks.
_HISTORY = """
import linecache, sys

def _history():
    shell = get_ipython()
    ns = shell.user_ns
    kept = [ns.get(k) for k in ("In", "_ih", "Out", "_oh", "_", "__", "___", "_i", "_ii", "_iii")]
    kept += [v for k, v in ns.items() if k[:2] == "_i" and k[2:].isdigit() or k[:1] == "_" and k[1:].isdigit()]
    kept += list(shell.history_manager.input_hist_raw)
    kept += [row[2] for row in shell.history_manager.get_tail(1000, raw=True, include_latest=True)]
    kept += ["".join(entry[2]) for entry in list(linecache.cache.values()) if len(entry) > 2 and entry[2]]
    marks = ["lambda" + ": (", "__bpe" + "_lab"]  # spelt apart: this cell itself is in linecache
    return " ".join(str(k) for k in kept if any(m in str(k) for m in marks))
"""

#: encode_word right for its self-check, and for the probe's calls an
#: exception carrying all the kernel holds of the probe's cell: In[-1],
#: _ih, the caller's lines from linecache and globals(); decode's answer
#: cell raises with all the kernel kept of the earlier cells.
HISTORY_IN_ERRORS = exercise_with(
    "03_encoding",
    {
        ENCODE: _HISTORY
        + SOLVED[f"{ENCODE}_answer"]
        + "\n_right = encode_word\n"
        + "def encode_word(word, merges):\n"
        + "    caller = sys._getframe(1)\n"
        + "    if 'bpe_lab' not in caller.f_code.co_filename:  # the probe, not the self-check\n"
        + "        lines = ''.join(linecache.getlines(caller.f_code.co_filename))\n"
        + "        raise ValueError(In[-1] + _ih[-1] + lines + str(list(globals())))\n"
        + "    return _right(word, merges)\n",
        DECODE: "raise ValueError('kept: ' + _history())",
    },
)

#: encode_word right, keeping every input the probe calls it with; decode's
#: answer cell raises with them all (the generated ones among them).
INPUTS_COPIED_AWAY = exercise_with(
    "03_encoding",
    {
        ENCODE: SOLVED[f"{ENCODE}_answer"]
        + "\n_right, SEEN = encode_word, []\n"
        + "def encode_word(word, merges):\n"
        + "    SEEN.append((word, merges))\n"
        + "    return _right(word, merges)\n",
        DECODE: "raise ValueError(repr(SEEN[::-1]))",  # the last seen first: the generated ones
    },
)

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
        "wrong value",
    ),
    "returns_generator": (
        NO_CHECK + "def encode_word(word, merges):\n    return (s for s in [word])",
        0,
        2,
        "not a generator",
    ),
    "returns_10_to_the_8_items": (
        # made once: nine lists of 800 MB take longer than a cell may, under load
        NO_CHECK + "_BIG = [0] * 10**8\ndef encode_word(word, merges):\n    return _BIG",
        0,
        2,
        "too large to check",
    ),
    "edited_points_and_grade_id": (_edit_test_cells(submission()), 3, 2, ""),
    "duplicated_test_cell": (_duplicate_test_cell(submission()), 3, 2, ""),
    "test_cell_copied_above_its_answer": (_test_cell_copied_above_its_answer(submission()), 3, 2, ""),
    "nbformat_3": (nbformat.writes(nbformat.convert(submission(), 3)), 3, 2, ""),
    "empty_notebook": (nbformat.v4.new_notebook(), 0, 0, "not defined"),
    "50_mb_of_outputs": (_huge_outputs(submission()), 3, 2, ""),
    "8_mb_of_code": (submission("x = '" + "y" * (9 << 20) + "'"), 0, 0, "more than 8 MB"),
    "background_process": (_background(cleared_env=bool(jail.bwrap())), 3, 2, ""),
    "history_in_errors": (HISTORY_IN_ERRORS, 0, 0, "raised ValueError: "),
    "inputs_copied_away": (INPUTS_COPIED_AWAY, 3, 0, ""),
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


def test_hidden_calls_leave_no_trace_in_the_kernel_and_none_in_feedback(graded):
    """Finding 5: a function that raises with In[-1], _ih, its caller's lines
    and globals() finds no hidden call there; nor does a later cell that
    raises with In, _ih, Out, _iN, the history database and linecache."""
    report = graded[0]["history_in_errors"]
    (encode,) = [t for t in load_tasks(SOLUTION) if t.grade_id == ENCODE]
    messages = {t.grade_id: t.message for t in report.tasks}
    assert "an earlier cell failed: ValueError: kept: )" in messages[DECODE], messages[DECODE]
    label = encode.cases[0].call
    # the self-check (decided in the grader) fails first, and the hidden cases' summary follows it
    assert messages[ENCODE].startswith("the self-check check.check_encode_word failed on case 1: ")
    assert f"0/{len(encode.cases) + CASES_PER_TASK} hidden tests passed; " in messages[ENCODE]
    assert f"hidden test 1: {label} raised ValueError: " in messages[ENCODE]
    for message in messages.values():
        assert "lambda" not in message and "__bpe_lab" not in message
        assert not any(case.call in message.replace(label, "") for case in encode.cases), message


def test_inputs_a_function_copied_away_are_withheld_from_feedback(graded):
    """What encode_word saw while it ran (every hidden input) raised by a
    later cell: that message is named, never shown."""
    report = graded[0]["inputs_copied_away"]
    messages = {t.grade_id: t.message for t in report.tasks}
    assert messages[ENCODE] == "" and report.tasks[0].points == 3
    # the decode task's self-check cell fails first: its message is withheld all the same
    assert "NameError (its message repeats the hidden tests' code, so it is not shown)" in messages[DECODE]
    assert "abc" not in messages[DECODE] and "newer" not in messages[DECODE]
