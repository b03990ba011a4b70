"""The grader: full marks for solutions, zero for stubs, exact losses for the
classic mistakes, and a clear result (never a crash, never a false full
score, never a changed file outside the temporary directory) for hostile and
broken submissions.

Every submission is built here from the solution notebooks, so the fixtures
follow the solutions when they change. One grading run (two workers) is shared
by all the asserts, and the solutions and untouched exercises are the test
run's shared grading (``grading_support.shared``). Each task also runs the
hidden cases generated for its submission (``cases``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pandas as pd
import pytest
from grading_support import NAMES, SOLUTIONS, shared, tree_digest

from bpe_lab.cli import main
from bpe_lab.grading.authoring.release import release_notebook
from bpe_lab.grading.authoring.tasks import load_written
from bpe_lab.grading.commands.grader import Limits, assemble, grade, gradebook, load_tasks, parse_hidden

# ------------------------------------------------------------ builders


def _solution(name: str) -> nbformat.NotebookNode:
    return nbformat.read(SOLUTIONS / f"{name}.ipynb", as_version=4)


def _answers(name: str) -> dict[str, str]:
    """grade_id -> solution source of every answer cell."""
    return {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in _solution(name).cells
        if c.metadata.get("nbgrader", {}).get("solution")
    }


def submission(
    name: str, answers: dict[str, str] | None = None, *, solved: bool = True, prepend: str = "", edit=None
) -> nbformat.NotebookNode:
    """A student's notebook: the exercise with answer cells filled (from the
    solution when ``solved``, then ``answers``), an optional extra first code
    cell, and an optional ``edit(nb)`` for anything else."""
    nb = release_notebook(_solution(name), name)
    fill = {**(_answers(name) if solved else {}), **(answers or {})}
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid in fill:
            cell.source = fill[gid]
    if prepend:
        first_code = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
        nb.cells.insert(first_code + 1, nbformat.v4.new_code_cell(prepend))
    if edit:
        edit(nb)
    return nb


def _drop_test_cells(nb: nbformat.NotebookNode) -> None:
    nb.cells = [c for c in nb.cells if not c.metadata.get("nbgrader", {}).get("grade")]


def _blank_test_cells(nb: nbformat.NotebookNode) -> None:
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade"):
            cell.source = "pass"


ENCODE = "03_encoding_encode_word_answer"
DECODE = "03_encoding_decode_answer"

WRONG = {
    # classic mistakes: (notebook, answers) -> the points each task must keep
    "unweighted_counts": (
        "02_training",
        {
            "02_training_count_pairs_answer": """
def count_pairs(corpus):
    counts = {}
    for symbols in corpus:
        for pair in zip(symbols, symbols[1:]):
            counts[pair] = counts.get(pair, 0) + 1
    return counts"""
        },
    ),
    "overlap_merge": (
        "02_training",
        {
            "02_training_merge_pair_answer": """
def merge_pair(symbols, pair):
    out = list(symbols)
    i = len(out) - 2
    while i >= 0:  # right to left: ('a', 'a', 'a') becomes ('a', 'aa')
        if (out[i], out[i + 1]) == pair:
            out[i : i + 2] = [pair[0] + pair[1]]
        i -= 1
    return tuple(out)"""
        },
    ),
    "lexicographic_ties": (
        "02_training",
        {
            "02_training_train_answer": """
def train(word_freq, num_merges):
    corpus = {tuple(word) + ("</w>",): freq for word, freq in word_freq.items()}
    merges = []
    for _ in range(num_merges):
        counts = count_pairs(corpus)
        if not counts:
            break
        pair = max(counts, key=lambda p: (counts[p], p))
        merges.append(pair)
        corpus = {merge_pair(s, pair): f for s, f in corpus.items()}
    return merges"""
        },
    ),
    "lost_end_of_word_train": (
        "02_training",
        {
            "02_training_train_answer": """
def train(word_freq, num_merges):
    corpus = {tuple(word): freq for word, freq in word_freq.items()}
    merges = []
    for _ in range(num_merges):
        counts = count_pairs(corpus)
        if not counts:
            break
        best = max(counts.values())
        pair = next(p for p, c in counts.items() if c == best)
        merges.append(pair)
        corpus = {merge_pair(s, pair): f for s, f in corpus.items()}
    return merges"""
        },
    ),
    "longest_match": (
        "03_encoding",
        {
            ENCODE: """
def encode_word(word, merges):
    vocab = {a + b for a, b in merges}
    symbols, out, i = list(word) + ["</w>"], [], 0
    while i < len(symbols):
        j = len(symbols)
        while j > i + 1 and "".join(symbols[i:j]) not in vocab:
            j -= 1
        out.append("".join(symbols[i:j]))
        i = j
    return out"""
        },
    ),
    "lost_end_of_word_encode": ("03_encoding", {ENCODE: _answers("03_encoding")[ENCODE].replace(' + ["</w>"]', "")}),
    "overlapping_gage_counts": (
        "01_compression",
        {
            "01_compression_most_frequent_pair_answer": """
def most_frequent_pair(data):
    counts = {}
    for pair in zip(data, data[1:]):
        counts[pair] = counts.get(pair, 0) + 1
    best = max(counts.values())
    return next((p, c) for p, c in counts.items() if c == best)"""
        },
    ),
    "special_tokens_split_into_bytes": (
        "05_bytelevel",
        {
            "05_bytelevel_encode_answer": _answers("05_bytelevel")["05_bytelevel_encode_answer"].replace(
                "split_special(text, special_tokens)", "[(text, False)]"
            )
        },
    ),
    "greedy_instead_of_viterbi": (
        "06_variants",
        {
            "06_variants_viterbi_answer": """
def viterbi(word, logprobs):
    symbols, out, i = list(word) + ["</w>"], [], 0
    while i < len(symbols):
        j = len(symbols)
        while j > i + 1 and "".join(symbols[i:j]) not in logprobs:
            j -= 1
        out.append("".join(symbols[i:j]))
        i = j
    return out"""
        },
    ),
}

#: Points each wrong submission keeps, task by task (a mistake in a helper
#: also costs the tasks that call it: train and first_mistake use count_pairs
#: and merge_pair).
WRONG_KEEPS = {
    "unweighted_counts": {"count_pairs": 0, "merge_pair": 2, "train": 0, "first_mistake": 0},
    "overlap_merge": {"count_pairs": 2, "merge_pair": 0, "train": 0, "first_mistake": 0},
    "lexicographic_ties": {"count_pairs": 2, "merge_pair": 2, "train": 0, "first_mistake": 2},
    "lost_end_of_word_train": {"count_pairs": 2, "merge_pair": 2, "train": 0, "first_mistake": 2},
    "longest_match": {"encode_word": 0, "decode": 2},
    "lost_end_of_word_encode": {"encode_word": 0, "decode": 2},
    "overlapping_gage_counts": {"most_frequent_pair": 0, "compress": 0, "decompress": 2},
    "special_tokens_split_into_bytes": {"bytes_to_unicode": 2, "encode": 0, "decode": 2},
    "greedy_instead_of_viterbi": {"longest_match": 2, "viterbi": 0, "sp_decode": 2},
}

WRONG_HINTS = {
    "unweighted_counts": "weight every occurrence by the word's frequency",
    "overlap_merge": "skip an occurrence that overlaps one already joined",
    "lexicographic_ties": "ties go to the pair met first",
    "lost_end_of_word_train": "end-of-word marker",
    "longest_match": "that is longest match",
    "lost_end_of_word_encode": "the end-of-word marker is lost",
    "overlapping_gage_counts": "non-overlapping",
    "special_tokens_split_into_bytes": "find special tokens first",
    "greedy_instead_of_viterbi": "try every cut position",
}

HOSTILE = {
    # name -> (notebook, builder kwargs); all use 03_encoding: encode_word (3) then decode (2)
    "sys_exit": {"answers": {ENCODE: "import sys\ndef encode_word(word, merges):\n    sys.exit()"}},
    "os_exit": {"answers": {ENCODE: "import os\ndef encode_word(word, merges):\n    os._exit(0)"}},
    "kernel_crash": {
        "answers": {
            ENCODE: "import os, signal\ndef encode_word(word, merges):\n    os.kill(os.getpid(), signal.SIGKILL)"
        }
    },
    "crash_at_top": {"prepend": "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)", "solved": False},
    "megabytes_of_output": {"prepend": "for _ in range(200):\n    print('x' * 100_000)"},
    "deletes_files": {
        "prepend": (
            "import os, shutil\n"
            "for entry in os.listdir('.'):\n"
            "    shutil.rmtree(entry, ignore_errors=True) if os.path.isdir(entry) else os.remove(entry)"
        )
    },
    "monkeypatches_bpe_lab": {
        "solved": False,
        "prepend": (
            "import bpe_lab, bpe_lab.grading.check\n"
            "for name in dir(bpe_lab.grading.check):\n"
            "    if name.startswith('check_'):\n"
            "        setattr(bpe_lab.grading.check, name, lambda *a, **k: print('all good!'))\n"
            "bpe_lab.encode_word = lambda *a, **k: ['x']"
        ),
    },
    "redefines_check": {
        "solved": False,
        "edit": lambda nb: nb.cells.insert(
            3,
            nbformat.v4.new_code_cell(
                "class check:\n    def __getattr__(self, name):\n        return lambda *a: None\ncheck = check()"
            ),
        ),
    },
    "neuters_later_cells": {
        "solved": False,
        "prepend": "get_ipython().input_transformers_cleanup.append(lambda lines: ['pass\\n'])",
    },
    "forges_probe_results": {
        "solved": False,
        "prepend": (
            "import bpe_lab.grading.check\n"
            "bpe_lab.grading.check.check_encode_word = bpe_lab.grading.check.check_decode = print\n"
            "import IPython.display as d\n"
            "_real = d.publish_display_data\n"
            "d.publish_display_data = lambda data, *a, **k: "
            "_real({m: [{'repr': 'None'}] * len(v) for m, v in data.items()}, *a, **k)"
        ),
    },
    "deleted_test_cells": {"solved": False, "edit": _drop_test_cells},
    "blanked_test_cells": {"solved": False, "edit": _blank_test_cells},
    "solved_without_test_cells": {"edit": _drop_test_cells},
    "memory_hog": {"answers": {ENCODE: "def encode_word(word, merges):\n    hog = bytearray(8 << 30)\n    return []"}},
}

#: (points for encode_word, points for decode, a phrase the encode_word message must contain)
HOSTILE_EXPECT = {
    "sys_exit": (0, 2, "SystemExit"),
    "os_exit": (0, 2, "kernel died"),
    "kernel_crash": (0, 2, "kernel died"),
    "crash_at_top": (0, 0, "not written yet"),
    "megabytes_of_output": (3, 2, ""),
    "deletes_files": (3, 2, ""),
    "monkeypatches_bpe_lab": (0, 0, "hidden test 1"),
    "redefines_check": (0, 0, "hidden test 1"),
    "neuters_later_cells": (0, 0, "did not report back"),
    "forges_probe_results": (0, 0, "hidden test"),
    "deleted_test_cells": (0, 0, "not written yet"),
    "blanked_test_cells": (0, 0, "not written yet"),
    "solved_without_test_cells": (3, 2, ""),
    "memory_hog": (0, 2, "MemoryError"),
}

LIMITS = Limits(cell_timeout=20, notebook_timeout=120, memory_mb=1536)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Write every submission into one folder, grade them all once; the
    solutions and the untouched exercises are the run's shared grading
    (``grading_support.shared``), which checks the same of its files."""
    folder = tmp_path_factory.mktemp("submissions")
    files: dict[str, Path] = {}

    def add(key: str, nb_or_text, name: str) -> None:
        path = folder / key / f"{name}.ipynb"
        path.parent.mkdir()
        path.write_text(nb_or_text if isinstance(nb_or_text, str) else nbformat.writes(nb_or_text), encoding="utf-8")
        files[key] = path

    for key, (name, answers) in WRONG.items():
        add(key, submission(name, answers), name)
    for key, kwargs in HOSTILE.items():
        add(key, submission("03_encoding", **kwargs), "03_encoding")
    add("corrupted", '{"cells": [ this is not json', "03_encoding")
    add("not_a_notebook", "\x89PNG\r\n\x1a\n binary junk", "02_training")
    add("unknown_assignment", nbformat.writes(nbformat.v4.new_notebook()), "homework")

    before = {"solutions": tree_digest(SOLUTIONS), "submissions": tree_digest(folder)}
    reports = grade(list(files.values()), solutions_dir=SOLUTIONS, limits=LIMITS, jobs=2)
    after = {"solutions": tree_digest(SOLUTIONS), "submissions": tree_digest(folder)}
    common = shared(tmp_path_factory)
    by_key = {**common.reports, **dict(zip(files, reports))}
    return {"reports": by_key, "before": before, "after": after, "shared_unchanged": common.unchanged}


AUTOGRADED = {t.grade_id for name in NAMES for t in load_tasks(_solution(name))}


def _points(report) -> dict[str, float]:
    """Task name (grade_id without the notebook prefix) -> points, for the
    automatically graded tasks (written answers are a person's to grade)."""
    return {t.grade_id.split("_", 2)[2]: t.points for t in report.tasks if t.grade_id in AUTOGRADED}


def _message(report, task: str) -> str:
    return next(t.message for t in report.tasks if t.grade_id.endswith("_" + task))


# ------------------------------------------------------------ solutions and stubs


@pytest.mark.parametrize("name", NAMES)
def test_solutions_score_full_marks(graded, name):
    report = graded["reports"][f"solution-{name}"]
    assert report.total + report.pending == report.max_total > 0, report.tasks
    assert len([t for t in report.tasks if not t.pending]) >= 2
    assert all(t.cases > 1 and t.passed == t.cases for t in report.tasks if not t.pending)
    assert all(t.answer and t.points == 0 for t in report.tasks if t.pending)  # a person grades those


@pytest.mark.parametrize("name", NAMES)
def test_untouched_exercises_score_zero_with_a_message_per_task(graded, name):
    report = graded["reports"][f"exercise-{name}"]
    assert report.total == 0 and report.pending == 0
    for task in report.tasks:
        if task.grade_id in {t.grade_id for t in load_written(_solution(name))}:
            assert "not answered" in task.message, task
        else:
            assert "is not written yet" in task.message and "NotImplementedError" in task.message, task


# ------------------------------------------------------------ classic mistakes


@pytest.mark.parametrize("key", sorted(WRONG))
def test_a_classic_mistake_loses_exactly_its_points(graded, key):
    report = graded["reports"][key]
    full = {t.grade_id.split("_", 2)[2]: t.max_points for t in report.tasks if t.grade_id in AUTOGRADED}
    assert _points(report) == {**full, **WRONG_KEEPS[key]}  # the tasks it does not list keep full marks


@pytest.mark.parametrize("key", sorted(WRONG))
def test_a_classic_mistake_gets_its_specific_hint(graded, key):
    report = graded["reports"][key]
    lost = [t for t in report.tasks if t.points == 0]
    assert WRONG_HINTS[key] in lost[0].message, lost[0].message


# ------------------------------------------------------------ hostile and broken


@pytest.mark.parametrize("key", sorted(HOSTILE))
def test_hostile_submission_gets_a_clear_result(graded, key):
    report = graded["reports"][key]
    encode_points, decode_points, phrase = HOSTILE_EXPECT[key]
    assert _points(report) == {"encode_word": encode_points, "decode": decode_points}, report.tasks
    assert phrase in _message(report, "encode_word")


def test_reports_stay_small_whatever_the_output(graded):
    for report in graded["reports"].values():
        assert len(json.dumps(report.to_dict())) < 5000


def test_no_file_outside_the_temporary_directory_changes(graded):
    assert graded["before"] == graded["after"]
    assert graded["shared_unchanged"]  # the solutions and exercises, around their own grading


@pytest.mark.parametrize("key", ["corrupted", "not_a_notebook"])
def test_a_file_that_is_not_a_notebook_scores_zero_on_every_task(graded, key):
    report = graded["reports"][key]
    assert report.tasks and report.total == 0
    assert all("not a readable notebook" in t.message for t in report.tasks)


def test_an_unknown_assignment_is_reported_not_graded(graded):
    report = graded["reports"]["unknown_assignment"]
    assert report.tasks == [] and "cannot tell which assignment" in report.error


def test_an_infinite_loop_that_ignores_interrupts_and_floods_output_times_out_and_grading_goes_on(
    tmp_path, monkeypatch
):
    """Each cell that calls the loop times out once: the self-check's cases
    and the demo cell after the answer. The hidden calls after a self-check
    that timed out are not run (it costs the whole task already). Three
    kernels: the first, and one after each time limit; decode, whose setup
    reaches none of its answers, has no second run. Before, the loop cost
    four time limits and six kernels, then two and four."""
    from bpe_lab.grading.run import sandbox

    timed_out: list[str] = []
    started: list[int] = []
    run, start = sandbox._Kernel.run, sandbox._Kernel.start

    async def counted(self, source, results=False):
        outcome = await run(self, source, results)
        if outcome.status == "timeout":
            timed_out.append(source)
        return outcome

    async def counted_start(self):
        started.append(1)
        await start(self)

    monkeypatch.setattr(sandbox._Kernel, "run", counted)
    monkeypatch.setattr(sandbox._Kernel, "start", counted_start)
    looping = (
        "def encode_word(word, merges):\n"
        "    while True:\n"
        "        try:\n"
        "            print('spam' * 1000)\n"
        "        except BaseException:\n"
        "            pass"
    )
    path = tmp_path / "03_encoding.ipynb"
    nbformat.write(submission("03_encoding", {ENCODE: looping}), path)
    report = grade([path], solutions_dir=SOLUTIONS, limits=Limits(cell_timeout=2, notebook_timeout=60))[0]
    assert _points(report) == {"encode_word": 0, "decode": 2}
    message = _message(report, "encode_word")
    assert "timed out" in message and "hidden tests not run: the self-check's cases did not come back" in message
    assert len(timed_out) == 2, timed_out
    assert timed_out[0].startswith("check.check_encode_word(encode_word)")
    assert timed_out[1].startswith("encode_word(")  # the notebook's demo cell
    assert len(started) == 3, started


def test_the_notebook_time_limit_marks_the_remaining_tasks(tmp_path):
    slow = "import time\ntime.sleep(2.5)"
    path = tmp_path / "03_encoding.ipynb"
    nbformat.write(submission("03_encoding", prepend=slow), path)
    report = grade([path], solutions_dir=SOLUTIONS, limits=Limits(cell_timeout=10, notebook_timeout=2))[0]
    assert report.total == 0
    assert all("time limit" in t.message for t in report.tasks if t.grade_id in AUTOGRADED), report.tasks


# ------------------------------------------------------------ gradebook and CLI


def test_gradebook_has_a_row_per_submission_and_a_column_per_task(graded):
    reports = [graded["reports"][k] for k in ("solution-02_training", "unweighted_counts", "exercise-02_training")]
    book = gradebook(reports)
    tasks = [t.grade_id for t in reports[0].tasks]
    assert list(book.columns) == [
        "student",
        "assignment",
        "submission",
        "nonce",
        *tasks,
        "total",
        "max",
        "pending",
        "error",
    ]
    assert book["nonce"].tolist() == [r.nonce for r in reports] and all(len(r.nonce) == 16 for r in reports)
    assert tasks[:4] == [
        "02_training_count_pairs",
        "02_training_merge_pair",
        "02_training_train",
        "02_training_first_mistake",
    ]
    assert book["student"].tolist() == ["solution-02_training", "unweighted_counts", "exercise-02_training"]
    assert book["total"].tolist() == [9, 2, 0]


def test_cli_grades_a_folder_into_a_csv(tmp_path, capsys):
    folder = tmp_path / "class"
    folder.mkdir()
    nbformat.write(_solution("03_encoding"), folder / "alice_03_encoding.ipynb")
    nbformat.write(submission("03_encoding", solved=False), folder / "bob.ipynb")
    out = tmp_path / "gradebook.csv"
    assert main(["grade", str(folder), "--solutions", str(SOLUTIONS), "--out", str(out), "--json"]) == 0
    reports = json.loads(capsys.readouterr().out)
    assert [r["total"] for r in reports] == [5, 0]
    assert pd.read_csv(out)["total"].tolist() == [5, 0]


# ------------------------------------------------------------ how hidden tests are read


def test_every_graded_cell_has_hidden_tests_the_grader_can_read():
    for name in NAMES:
        for task in load_tasks(_solution(name)):
            assert task.cases and task.points > 0, task.grade_id


def test_hidden_tests_must_be_literal_comparisons():
    assert parse_hidden("assert f(1) == {'a': (1, 2)}")[0].expected == {"a": (1, 2)}
    with pytest.raises(ValueError, match="assert CALL == LITERAL"):
        parse_hidden("assert f(1) == g(2)")
    with pytest.raises(ValueError, match="assert CALL == LITERAL"):
        parse_hidden("x = f(1)")


def test_test_cells_come_from_the_solution_whatever_the_submission_did():
    solution = _solution("03_encoding")
    tampered = submission("03_encoding", edit=_blank_test_cells)
    tampered.cells.reverse()
    steps = assemble(solution, tampered)
    tests = [s for s in steps if s.role == "test"]
    assert {s.grade_id for s in tests} == {"03_encoding_encode_word", "03_encoding_decode"}
    assert all(".run_hidden([" in s.source for s in tests)


# ------------------------------------------------------------ nothing left behind

_GRADE_AND_WAIT = """
import sys
from bpe_lab.grading.commands.grader import Limits, grade
grade([sys.argv[1]], solutions_dir=sys.argv[2], limits=Limits(cell_timeout=120, notebook_timeout=120))
"""


def _ours(tmp: Path) -> list[int]:
    """Processes whose working folder lies in ``tmp``."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if Path(os.readlink(entry / "cwd")).is_relative_to(tmp):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def test_a_grader_killed_mid_run_leaves_nothing_once_the_next_run_is_done(tmp_path):
    """Finding 13: kill -9 a grader while its kernel runs (its folder holds
    the notebook's copy), then grade again: the temporary folder is as it
    was before both."""
    tmp = tmp_path / "tmp"
    (tmp / "someone_elses").mkdir(parents=True)
    before = sorted(p.relative_to(tmp) for p in tmp.rglob("*"))
    path = tmp_path / "alice" / "03_encoding.ipynb"
    path.parent.mkdir()
    nbformat.write(submission("03_encoding", prepend="import time\ntime.sleep(100)"), path)
    env = {**os.environ, "TMPDIR": str(tmp)}
    grader = subprocess.Popen(
        [sys.executable, "-c", _GRADE_AND_WAIT, str(path), str(SOLUTIONS)], env=env, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 120
        while not list(tmp.glob("bpe-lab-grader-*/*/grade-*/work/03_encoding.ipynb")):
            assert grader.poll() is None and time.monotonic() < deadline, "the grader never started its kernel"
            time.sleep(0.2)
        os.killpg(grader.pid, signal.SIGKILL)
        grader.wait()
        assert list(tmp.glob("bpe-lab-grader-*/*/grade-*/work/03_encoding.ipynb"))  # what a killed grader leaves
        for _ in range(100):  # the kernel follows its grader (ipykernel's parent poller, bubblewrap)
            if not _ours(tmp):
                break
            time.sleep(0.1)
        for pid in _ours(tmp):
            os.kill(pid, signal.SIGKILL)
    finally:
        if grader.poll() is None:
            os.killpg(grader.pid, signal.SIGKILL)
    unreadable = tmp_path / "bob" / "03_encoding.ipynb"
    unreadable.parent.mkdir()
    unreadable.write_text("not a notebook")
    done = subprocess.run([sys.executable, "-c", _GRADE_AND_WAIT, str(unreadable), str(SOLUTIONS)], env=env)
    assert done.returncode == 0
    assert sorted(p.relative_to(tmp) for p in tmp.rglob("*")) == before
