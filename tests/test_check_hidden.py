"""Scored hidden tests (``check.HiddenCases``): the score is the cell's value,
a case is judged as ``bpe-lab grade`` judges it, nothing but a count is
printed, and ``tasks.parse_hidden`` reads the block into the same cases as
the ``assert CALL == LITERAL`` lines it replaced."""

from __future__ import annotations

import sys
import warnings
from collections import Counter
from pathlib import Path

import IPython.display
import nbformat
import pytest

from bpe_lab.grading import check
from bpe_lab.grading.authoring.release import BEGIN_HIDDEN, END_HIDDEN
from bpe_lab.grading.authoring.tasks import HiddenCase, Task, load_tasks, parse_hidden, read_hidden
from bpe_lab.grading.check.hidden import MAX_REPR, HiddenCases, same
from bpe_lab.grading.run.probe import probe_source
from bpe_lab.grading.run.sandbox import RESULT_MIME
from bpe_lab.grading.score.judge import judge

SOLUTIONS = Path(__file__).resolve().parent.parent / "solutions"
NAMES = sorted(p.stem for p in SOLUTIONS.glob("[0-9][0-9]_*.ipynb"))

# ------------------------------------------------------------ scoring in the kernel


def test_the_score_is_the_points_times_the_fraction_right_rounded_to_hundredths(capsys):
    hidden = check.HiddenCases(points=2)
    hidden.expect(lambda: sorted("ba"), ["a", "b"])
    hidden.expect(lambda: "ab".upper(), "ab")
    hidden.expect(lambda: "ab".upper(), "Ab")
    assert hidden.score() == 0.67
    assert capsys.readouterr().out == "hidden tests: 1 of 3 right\n"


def test_all_right_is_full_points_and_no_cases_is_full_points_too():
    hidden = HiddenCases(points=3)
    hidden.expect(lambda: 1 + 1, 2)
    assert hidden.score() == 3.0 and type(hidden.score()) is float
    assert HiddenCases(points=1).score() == 1.0


def _to_stderr(message, category, filename, lineno, file=None, line=None):
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def test_a_wrong_case_shows_nothing_but_the_count_and_never_writes_to_stderr(capsys):
    """nbgrader's feedback shows the cell's output, and a cell that wrote to
    stderr is 0 there: what a case prints, warns or raises is swallowed."""

    def noisy():
        print("SECRET-PRINTED")
        warnings.warn("SECRET-WARNED", stacklevel=1)
        raise ValueError("SECRET-RAISED")

    hidden = HiddenCases(points=1)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = _to_stderr  # as outside pytest, which records warnings instead
        hidden.expect(noisy, "SECRET-EXPECTED")
    hidden.expect(lambda: "got", "SECRET-EXPECTED")
    hidden.expect(lambda: SystemExit, "SECRET-EXPECTED")
    hidden.expect(lambda: exit(3), "SECRET-EXPECTED")  # a case that stops the kernel is a wrong case
    assert hidden.score() == 0
    out, err = capsys.readouterr()
    assert (out, err) == ("hidden tests: 0 of 4 right\n", "")


def test_an_interrupt_stops_the_cell():
    """nbgrader's cell timeout interrupts the kernel: that must end the cell."""

    def interrupted():
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        HiddenCases(points=1).expect(interrupted, 1)


def test_points_must_be_a_number_at_least_0():
    with pytest.raises(ValueError):
        HiddenCases(points=-1)
    with pytest.raises(TypeError):
        HiddenCases(2)  # type: ignore[misc]


# ------------------------------------------------------------ the same verdict as the grader's


class Always:
    def __eq__(self, other):
        return True

    __hash__ = object.__hash__


class Three(int):
    def __repr__(self):
        return "4"


class Shouting(str):
    def __repr__(self):
        return "'LOUD'"


class Padded(list):
    def __iter__(self):
        return iter([*super().__iter__(), "extra"])


#: (value the learner's function returns, literal the test expects)
VALUES = {
    "counter is a dict": (Counter({"a": 2}), {"a": 2}),
    "int is not float": ([1], [1.0]),
    "tuple is not list": ((1,), [1]),
    "bool is not int": (True, 1),
    "int subclass is its int": (Three(3), 3),
    "str subclass is its str": (Shouting("quiet"), "quiet"),
    "list subclass iterates as a list": (Padded([1]), [1]),
    "bytearray is bytes": (bytearray(b"hi"), b"hi"),
    "frozenset is not plain": (frozenset({1}), {1}),
    "set": ({("a", "b"), ("c", "d")}, {("c", "d"), ("a", "b")}),
    "empty set": (set(), set()),
    "generator is not plain": ((x for x in [1]), [1]),
    "an object equal to all is not plain": (Always(), 5),
    "nan is not a literal": (float("nan"), 0.0),
    "minus zero": (-0.0, 0.0),
    "none": (None, None),
    "nested types": ({("a", "b"): [1, (2, 3.5)]}, {("a", "b"): [1, (2, 3.5)]}),
    "nested int vs float": ({"k": [1, (2, 3)]}, {"k": [1, (2, 3.0)]}),
    "too long to send back": (["x" * 10] * 10_000, ["x" * 10] * 10_000),
    "just short enough": ("y" * (MAX_REPR - 2), "y" * (MAX_REPR - 2)),
    "just too long": ("y" * (MAX_REPR - 1), "y" * (MAX_REPR - 1)),
}


def _grader_passes(value, expected, monkeypatch) -> bool:
    """What ``bpe-lab grade`` says of ``value``: the probe run here (its
    display data caught), its report judged in this process."""
    published = []
    monkeypatch.setattr(IPython.display, "publish_display_data", lambda data: published.append(data[RESULT_MIME]))
    exec(probe_source(["returned"], []), {"returned": value})  # a name the probe's own code does not use
    task = Task("t", 1.0, "", (HiddenCase("returned", expected),), "f")
    passed, _ = judge(task, published)
    return passed == 1


@pytest.mark.parametrize("key", VALUES)
def test_a_case_is_right_exactly_when_the_grader_says_so(key, monkeypatch):
    value, expected = VALUES[key]
    hidden = HiddenCases(points=1)
    hidden.expect(lambda: value, expected)
    assert hidden.passed == _grader_passes(value, expected, monkeypatch)


def test_the_judge_believes_no_longer_text_than_the_probe_sends(monkeypatch):
    """The probe sends a value of exactly MAX_REPR characters and not one
    more ("just short enough" / "just too long" above); a report one
    character longer can only be forged, and the judge refuses it unread."""
    value = "y" * (MAX_REPR - 1)
    task = Task("t", 1.0, "", (HiddenCase("returned", value),), "f")
    passed, message = judge(task, [[{"repr": repr(value), "reached": []}]])
    assert passed == 0 and f"more than a value may have ({MAX_REPR})" in message
    published = []
    monkeypatch.setattr(IPython.display, "publish_display_data", lambda data: published.append(data[RESULT_MIME]))
    exec(probe_source(["returned"], []), {"returned": value})
    assert published == [[{"too_large": MAX_REPR + 1, "reached": []}]]


def test_the_battery_has_both_verdicts(monkeypatch):
    verdicts = {key: _grader_passes(*VALUES[key], monkeypatch) for key in VALUES}
    assert any(verdicts.values()) and not all(verdicts.values())
    assert same([1, (2, "a")], [1, (2, "a")]) and not same([True], [1])


# ------------------------------------------------------------ reading the block


SCORED = """hidden = check.HiddenCases(points=2)
hidden.expect(lambda: f(1, [('a', 'b')]), [2, 3])
# a comment between cases
hidden.expect(lambda: (lambda w: (g(w), w))({'x': 1}),
              ({'x'}, {'x': 1}))
hidden.score()"""

ASSERTS = """assert f(1, [('a', 'b')]) == [2, 3]
# a comment between cases
assert (lambda w: (g(w), w))({'x': 1}) == ({'x'}, {'x': 1})"""


def test_the_scored_block_reads_as_the_asserts_it_replaced():
    assert (
        parse_hidden(SCORED)
        == parse_hidden(ASSERTS)
        == (
            HiddenCase("f(1, [('a', 'b')])", [2, 3]),
            HiddenCase("(lambda w: (g(w), w))({'x': 1})", ({"x"}, {"x": 1})),
        )
    )
    assert read_hidden(SCORED)[0] == 2.0 and read_hidden(ASSERTS)[0] is None
    assert parse_hidden("") == () and read_hidden("# nothing")[0] is None


WRONG_BLOCKS = {
    "no score": "h = check.HiddenCases(points=1)\nh.expect(lambda: f(1), 2)",
    "score not last": "h = check.HiddenCases(points=1)\nh.score()\nh.expect(lambda: f(1), 2)",
    "an assert among the cases": "h = check.HiddenCases(points=1)\nassert f(1) == 2\nh.score()",
    "a lambda with a parameter": "h = check.HiddenCases(points=1)\nh.expect(lambda x: f(x), 2)\nh.score()",
    "a call, not a lambda": "h = check.HiddenCases(points=1)\nh.expect(f(1), 2)\nh.score()",
    "an expected value not a literal": "h = check.HiddenCases(points=1)\nh.expect(lambda: f(1), g(2))\nh.score()",
    "points that are not a literal": "h = check.HiddenCases(points=n)\nh.expect(lambda: f(1), 2)\nh.score()",
    "points not named": "h = check.HiddenCases(1)\nh.expect(lambda: f(1), 2)\nh.score()",
    "another object's expect": "h = check.HiddenCases(points=1)\nother.expect(lambda: f(1), 2)\nh.score()",
    "some other first line": "print(1)\nh.score()",
    "a HiddenCases after asserts": "assert f(1) == 2\nh = check.HiddenCases(points=1)",
}


@pytest.mark.parametrize("key", WRONG_BLOCKS)
def test_a_malformed_block_is_refused_with_its_form(key):
    with pytest.raises(ValueError):
        parse_hidden(WRONG_BLOCKS[key])


def _solution_with_test_cell(source: str, points: int) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = {"grade": True, "solution": False, "locked": True, "points": points, "grade_id": "t"}
    cell.metadata["bpe_lab"] = {"forbid": ["bpe_lab.train_bpe"]}
    nb = nbformat.v4.new_notebook()
    nb.cells = [cell]
    return nb


def test_a_block_must_score_out_of_its_cells_points_and_end_the_cell():
    block = f"check.check_train(train)\n{BEGIN_HIDDEN}\n{SCORED}\n{END_HIDDEN}"
    assert [t.cases for t in load_tasks(_solution_with_test_cell(block, 2))] == [parse_hidden(SCORED)]
    assert load_tasks(_solution_with_test_cell(block + "\n# a comment may follow", 2))
    with pytest.raises(ValueError, match="score out of 2 points"):
        load_tasks(_solution_with_test_cell(block, 3))  # nbgrader would fail a cell scoring over its points
    with pytest.raises(ValueError, match="cell's value"):
        load_tasks(_solution_with_test_cell(block + "\nprint('done')", 2))


@pytest.mark.parametrize("name", NAMES)
def test_every_solution_scores_its_hidden_tests_and_reads_as_asserts(name):
    """Every test cell with hidden tests gives nbgrader its partial score,
    and its block reads into the very cases its assert lines would."""
    solution = nbformat.read(SOLUTIONS / f"{name}.ipynb", as_version=4)
    cells = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in solution.cells}
    tasks = load_tasks(solution)
    assert tasks
    for task in tasks:
        block = cells[task.grade_id].source.split(BEGIN_HIDDEN)[1].split(END_HIDDEN)[0]
        assert read_hidden(block)[0] == task.points, task.grade_id
        asserts = "\n".join(f"assert {case.call} == {case.expected!r}" for case in task.cases)
        assert parse_hidden(asserts) == task.cases, task.grade_id
