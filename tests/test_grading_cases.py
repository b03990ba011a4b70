"""Generated hidden cases: per student, repeatable, checked against the
solutions' fixed cases, never sent to the kernel with their answers; and
how a task's points come from the fraction of cases right.

No kernel runs here: the grading runs that use these cases are in
test_grader.py and test_grading_class.py.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from pathlib import Path

import nbformat
import pytest

from bpe_lab.grading.authoring.release import release_notebook
from bpe_lab.grading.cases.chapters import GENERATORS  # every chapter's generators
from bpe_lab.grading.cases.generated import generated, seed_for, usable, with_generated
from bpe_lab.grading.cases.generators import CASES_PER_TASK
from bpe_lab.grading.check.hidden import same, write_plain
from bpe_lab.grading.commands.grader import HiddenCase, Task, assemble, load_tasks
from bpe_lab.grading.intake.submissions import submission_nonce
from bpe_lab.grading.run.sandbox import Outcome
from bpe_lab.grading.score.judge import describe, score
from bpe_lab.grading.score.report import Report, recorded_nonces, write_gradebook

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
NAMES = sorted(p.stem for p in SOLUTIONS.glob("[0-9][0-9]_*.ipynb"))
SOLUTION_03 = nbformat.read(SOLUTIONS / "03_encoding.ipynb", 4)
TASKS = {t.grade_id: t for name in NAMES for t in load_tasks(nbformat.read(SOLUTIONS / f"{name}.ipynb", 4))}


def _task(grade_id: str) -> Task:
    if grade_id not in TASKS:
        pytest.skip(f"{grade_id} is no longer a task of solutions/")
    return TASKS[grade_id]


@pytest.mark.parametrize("grade_id", sorted(GENERATORS))
def test_every_generator_agrees_with_its_tasks_fixed_cases(grade_id):
    task = _task(grade_id)
    assert usable(task) == "", f"{grade_id}'s generator no longer fits its task: {usable(task)}"
    cases = generated(task, "alice")
    assert len(cases) == CASES_PER_TASK and all(c.generated for c in cases)


@pytest.mark.parametrize("grade_id", sorted(GENERATORS))
def test_each_student_gets_other_cases_and_a_regrade_the_same(grade_id):
    task = _task(grade_id)
    alice, again, bob = generated(task, "alice"), generated(task, "alice"), generated(task, "bob")
    assert alice == again
    assert [c.call for c in alice] != [c.call for c in bob]
    assert [c.call for c in generated(task, "alice", salt="course secret")] != [c.call for c in alice]
    assert seed_for("alice", grade_id) != seed_for("alice", grade_id, "course secret")


def test_the_kernel_gets_the_inputs_never_the_expected_values():
    for name in NAMES:
        solution = nbformat.read(SOLUTIONS / f"{name}.ipynb", 4)
        tasks = with_generated(load_tasks(solution), "alice")
        sources = "\n".join(s.source for s in assemble(solution, release_notebook(solution, name), tasks))
        calls = [case.call for task in tasks for case in task.cases]
        assert all(call in sources for call in calls)
        for call in sorted(calls, key=len, reverse=True):
            sources = sources.replace(call, "")
        for task in tasks:
            for case in task.cases:
                answer = repr(case.expected)
                assert len(answer) < 8 or answer not in sources, (task.grade_id, case.call)


def test_a_generator_that_no_longer_fits_its_task_is_left_out():
    task = _task("03_encoding_encode_word")
    other_signature = dataclasses.replace(task, cases=(HiddenCase("encode_word('ab')", ["ab"]),))
    assert "arguments" in usable(other_signature) and generated(other_signature, "alice") == ()
    other_convention = dataclasses.replace(task, cases=(HiddenCase("encode_word('ab', [('a', 'b')])", ["ab"]),))
    assert "disagrees" in usable(other_convention) and generated(other_convention, "alice") == ()
    unknown = Task("99_new_task", 1, "", (HiddenCase("f(1)", 2),), "f")
    assert with_generated([unknown], "alice") == [unknown]


def test_describe_names_the_kind_of_mistake_and_nothing_of_the_expected_value():
    expected = ["low", "est</w>"]
    for got, said in [
        (["lo", "w", "est</w>"], "wrong value"),  # once "3 items, expected 2"
        (("low", "est</w>"), "wrong type (yours is a tuple)"),  # once "tuple, expected a list"
        (["low", "esx</w>"], "wrong value"),  # once "wrong from position 2 at [1]: 'x</w>'"
        (["low", "es"], "wrong value"),  # once "2 characters at [1], expected 7"
        ([1.0], "wrong value"),
    ]:
        assert describe(got, expected) == said
    assert describe({("a", "b"): 1, ("x", "y"): 1}, {("a", "b"): 2}) == "wrong value"  # once "should not be a key"
    assert describe({("a", "b"): 1}, {("a", "b"): 2, ("c", "d"): 1}) == "wrong value"  # once "1 key missing"
    assert describe([1.0], [1]).startswith("wrong type: equal values")


#: What feedback said once, each a property of the expected value.
ORACLE_PHRASES = re.compile(r"expected \d|characters, expected|wrong from position|keys? missing|should not be a key")


def _wrong_values(expected: object) -> list[object]:
    """Values a learner's function might return instead of ``expected``:
    one short, one long, one off by a little, one of another type."""
    if isinstance(expected, bool):
        return [not expected, int(expected)]
    if isinstance(expected, (int, float)):
        return [expected + 1, str(expected)]
    if isinstance(expected, (str, bytes)):
        return [expected[:-1], expected + expected[-1:] * 2, expected[::-1], list(expected)]
    if isinstance(expected, (list, tuple)):
        kind = type(expected)
        return [expected[:-1], expected + expected[:1], kind(reversed(expected)), list(map(repr, expected))]
    if isinstance(expected, dict):
        keys = list(expected)
        dropped = {k: expected[k] for k in keys[:-1]}
        return [dropped, {**expected, "extra": 1}, {k: 0 for k in keys}, sorted(map(repr, expected.items()))]
    return [None]


def _leaks(message: str, expected: object, call: str, width: int = 8) -> set[str]:
    """Stretches of ``repr(expected)`` ``width`` long in ``message`` that its call does not hold."""
    answer = repr(expected)
    stretches = {answer[i : i + width] for i in range(len(answer) - width + 1)}
    return {w for w in stretches if w in message and w not in call}


def write(value: object) -> str:
    """``value`` as the probe sends it."""
    out: list[str] = []
    write_plain(value, out, [0])
    return "".join(out)


@pytest.mark.parametrize("grade_id", sorted(TASKS))
def test_feedback_on_a_failing_case_shows_its_input_and_never_its_answer(grade_id):
    """Every task's every case (fixed and generated), failed with values a
    learner might return, gets a message with the call and the kind of
    mistake, and no stretch of the expected value's text beyond the call's."""
    (task,) = with_generated([TASKS[grade_id]], "alice")
    if not task.cases:
        pytest.skip("no hidden cases")
    for i, case in enumerate(task.cases):
        right = [{"repr": write(c.expected), "reached": []} for c in task.cases]
        for wrong in _wrong_values(case.expected):
            if same(wrong, case.expected):
                continue
            reported = [*right[:i], {"repr": write(wrong), "reached": []}, *right[i + 1 :]]
            result = score(task, Outcome("ok", results=[reported]))
            assert result.passed == len(task.cases) - 1, (case.call, wrong)
            assert case.call[:200] in result.message and re.search(r"wrong (value|type)", result.message)
            assert not ORACLE_PHRASES.search(result.message), result.message
            assert not _leaks(result.message, case.expected, case.call), (result.message, case.expected)


def _task_with(n: int, points: float = 3) -> Task:
    return Task("t", points, "", tuple(HiddenCase(f"f({i})", [i]) for i in range(n)), "f", ("pkg.answer",), ())


def test_points_are_the_fraction_of_hidden_cases_right():
    task = _task_with(4)
    results = [{"repr": "[0]"}, {"repr": "[1]"}, {"repr": "[2]"}, {"repr": "[99]"}]
    result = score(task, Outcome("ok", results=[results]))
    assert (result.points, result.passed, result.cases) == (2.25, 3, 4)
    assert result.message == "3/4 hidden tests passed; hidden test 4: f(3): wrong value"
    assert "[3]" not in result.message  # the expected value stays here


@pytest.mark.parametrize(
    "reported, phrase",
    [
        ({"unplain": "builtins.generator"}, "not a generator"),
        ({"unplain": "__main__.AlwaysEqual"}, "not plain data"),
        ({"too_large": 100_001}, "too large to check"),
        ({"error": "NotImplementedError"}, "not written yet"),
        ({"repr": "<object at 0x1>"}, "not plain data"),
        ("garbage", "garbage"),
    ],
)
def test_a_value_that_is_not_plain_data_fails_its_case_with_a_reason(reported, phrase):
    result = score(_task_with(2), Outcome("ok", results=[[{"repr": "[0]"}, reported]]))
    assert result.points == 1.5 and phrase in result.message, result


def test_what_costs_the_whole_task():
    task = _task_with(2)
    delegated = [{"repr": "[0]"}, {"repr": "[1]", "reached": ["pkg.answer"]}]
    assert score(task, Outcome("ok", results=[delegated])).points == 0  # reached a forbidden function
    assert score(task, Outcome("error", "CheckFailed: round 1: ...")).points == 0  # its visible checks failed
    assert score(task, Outcome("ok", results=[])).points == 0  # the probe did not report back
    assert score(task, None).message.startswith("not run")


def test_the_probe_sends_plain_data_and_never_calls_a_values_own_repr(monkeypatch):
    import IPython.display

    from bpe_lab.grading.run.probe import MAX_REPR, probe_source
    from bpe_lab.grading.run.sandbox import RESULT_MIME

    published: list[dict] = []
    monkeypatch.setattr(IPython.display, "publish_display_data", published.append)

    class Liar(list):
        def __eq__(self, other):
            return True

        def __repr__(self):
            raise RuntimeError("never called")

    namespace = {
        "plain": lambda: {("a", "b"): [1, 2.5, b"x", bytearray(b"y"), None, True, set()]},
        "liar": lambda: Liar(["?"]),
        "gen": lambda: (i for i in range(3)),
        "big": lambda: [0] * 10**6,
        "boom": lambda: 1 / 0,
        "exits": lambda: exec("raise SystemExit(3)"),
    }
    exec(probe_source([f"{name}()" for name in namespace], []), namespace)  # noqa: S102 - our own probe
    plain, liar, gen, big, boom, exits = published[0][RESULT_MIME]
    assert plain["repr"] == "{('a', 'b'): [1, 2.5, b'x', b'y', None, True, set()]}"
    assert liar["repr"] == "['?']" and gen["unplain"] == "builtins.generator"
    assert big["too_large"] > MAX_REPR and boom["error"].startswith("ZeroDivisionError")
    assert exits["error"] == "SystemExit: 3"


@pytest.mark.parametrize("grade_id", sorted(GENERATORS))
def test_each_submission_meets_its_own_cases_and_a_regrade_of_it_the_same(grade_id):
    task = _task(grade_id)
    first, again = generated(task, "alice", nonce="0123abcd"), generated(task, "alice", nonce="0123abcd")
    second = generated(task, "alice", nonce="4567ef01")
    assert first == again and [c.call for c in first] != [c.call for c in second]
    assert seed_for("alice", grade_id, "", "0123abcd") != seed_for("alice", grade_id)


def test_the_nonce_is_the_digest_of_the_file_and_is_read_back_for_a_regrade(tmp_path):
    one, same, other = tmp_path / "one.ipynb", tmp_path / "same.ipynb", tmp_path / "other.ipynb"
    one.write_bytes(b'{"cells": []}')
    same.write_bytes(b'{"cells": []}')
    other.write_bytes(b'{"cells": [] }')
    assert submission_nonce(one) == submission_nonce(same) == hashlib.sha256(b'{"cells": []}').hexdigest()[:16]
    assert submission_nonce(other) != submission_nonce(one)
    reports = [
        Report("a.ipynb", "02_training", student="=alice", nonce="aaaa"),
        Report("b.ipynb", "03_encoding", student="=alice", nonce="bbbb"),
        Report("c.ipynb", None, error="not graded", student="bob"),
        Report("d.ipynb", "03_encoding", student="carol; dave", nonce="dddd"),
    ]
    wanted = {
        ("=alice", "02_training"): "aaaa",
        ("=alice", "03_encoding"): "bbbb",
        ("carol; dave", "03_encoding"): "dddd",
    }
    write_gradebook(reports, tmp_path / "book.csv")
    (tmp_path / "reports.json").write_text(json.dumps([r.to_dict() for r in reports]))
    assert recorded_nonces(tmp_path / "reports.json") == wanted
    assert recorded_nonces(tmp_path / "book.csv") == wanted
    (tmp_path / "old.csv").write_text("student,total\nalice,3\n")
    with pytest.raises(ValueError, match="old.csv: no nonce column"):
        recorded_nonces(tmp_path / "old.csv")


def test_two_submissions_of_one_student_meet_different_cases_and_one_graded_twice_the_same(tmp_path, monkeypatch):
    """Through ``grade`` itself (its kernels left out: the probe cells it
    would send are caught): a re-grade of the same file sends the same
    generated calls, another save of it other ones, and ``nonces`` recorded
    from the first grading bring the first ones back."""
    from bpe_lab.grading.commands import grader

    sent: list[str] = []

    async def no_kernel(path, nb, steps, run, package, deferred=frozenset()):
        sent.append("\n".join(step.source for step in steps if step.role == "test"))
        return {}, ""

    monkeypatch.setattr(grader, "_run_in_tempdir", no_kernel)
    nb = release_notebook(nbformat.read(SOLUTIONS / "03_encoding.ipynb", 4), "03_encoding")
    first = tmp_path / "alice" / "03_encoding.ipynb"
    first.parent.mkdir()
    nbformat.write(nb, first)
    nb.cells.append(nbformat.v4.new_markdown_cell("one more line"))
    second = tmp_path / "again" / "alice" / "03_encoding.ipynb"
    second.parent.mkdir(parents=True)
    nbformat.write(nb, second)
    (one,) = grader.grade([first], solutions_dir=SOLUTIONS)
    (again,) = grader.grade([first], solutions_dir=SOLUTIONS)
    (other,) = grader.grade([second], solutions_dir=SOLUTIONS)
    (recorded,) = grader.grade([second], solutions_dir=SOLUTIONS, nonces={("alice", "03_encoding"): one.nonce})
    assert one.student == other.student == "alice" and one.nonce == again.nonce != other.nonce
    assert recorded.nonce == one.nonce
    generated_calls = [
        c.call for t in with_generated(load_tasks(SOLUTION_03), "alice", "", one.nonce) for c in t.cases if c.generated
    ]
    assert generated_calls and all(call in sent[0] for call in generated_calls)
    assert sent[0] == sent[1] == sent[3] != sent[2]
    assert not any(call in sent[2] for call in generated_calls)


def test_bpe_lab_grade_regrades_with_the_nonces_its_gradebook_recorded(tmp_path, monkeypatch, capsys):
    from bpe_lab.cli import main
    from bpe_lab.grading.commands import grader

    async def no_kernel(path, nb, steps, run, package, deferred=frozenset()):
        return {}, ""

    monkeypatch.setattr(grader, "_run_in_tempdir", no_kernel)
    path = tmp_path / "class" / "=alice" / "03_encoding.ipynb"
    path.parent.mkdir(parents=True)
    nbformat.write(release_notebook(SOLUTION_03, "03_encoding"), path)
    book = tmp_path / "book.csv"
    args = ["grade", str(tmp_path / "class"), "--solutions", str(SOLUTIONS), "--json"]
    assert main([*args, "--details", str(book)]) == 0
    (first,) = json.loads(capsys.readouterr().out)
    path.write_text(path.read_text() + "\n")  # saved again: another file, the same submission
    assert main(args) == 0
    (resaved,) = json.loads(capsys.readouterr().out)
    assert main([*args, "--nonces", str(book)]) == 0
    (regraded,) = json.loads(capsys.readouterr().out)
    assert first["student"] == "=alice" and len(first["nonce"]) == 16
    assert resaved["nonce"] != first["nonce"] == regraded["nonce"]
