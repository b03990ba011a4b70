"""The judge compares what a kernel reported with the expected value in the
grader process: equal values of the same types, nothing parsed that no
honest probe could have sent."""

from __future__ import annotations

import nbformat
from grading_support import SOLUTIONS

from bpe_lab.grading.judge import judge
from bpe_lab.grading.probe import MAX_REPR
from bpe_lab.grading.tasks import HiddenCase, Task, load_tasks

COUNTS = HiddenCase("count_pairs({('a', 'b', 'c'): 2})", {("a", "b"): 2, ("b", "c"): 2})
TASK = Task("02_training_count_pairs", 2, "", (COUNTS,), name="count_pairs")


def _report(text: str) -> list[list[dict]]:
    return [[{"repr": text, "reached": []}]]


def test_the_right_counts_pass():
    assert judge(TASK, _report("{('a', 'b'): 2, ('b', 'c'): 2}")) == (1, "")


def test_float_counts_where_ints_are_asked_fail_and_say_so():
    passed, message = judge(TASK, _report("{('a', 'b'): 2.0, ('b', 'c'): 2.0}"))
    assert passed == 0
    assert "float at [('a', 'b')], expected an int" in message


def test_true_is_not_one():
    task = Task("t", 1, "", (HiddenCase("f()", [1, 2]),), name="f")
    passed, message = judge(task, _report("[True, 2]"))
    assert passed == 0 and "bool at [0]" in message


def test_a_report_longer_than_any_probe_sends_is_refused_unparsed():
    text = "[" + "0, " * (MAX_REPR // 3 + 10) + "]"
    passed, message = judge(TASK, _report(text))
    assert passed == 0
    assert f"the kernel reported {len(text)} characters, more than a value may have" in message


def test_a_missing_report_counts_for_nothing():
    assert judge(TASK, [])[0] == 0
    assert judge(TASK, [[]])[0] == 0


def test_a_task_is_named_after_the_function_the_learner_writes():
    """Its hidden calls also call ``set`` and ``Counter``; the message that
    names a delegation must name ``train_bytelevel`` and ``merge_counts``."""
    names = {}
    for notebook in ("05_bytelevel", "08_scale"):
        names.update({t.grade_id: t.name for t in load_tasks(nbformat.read(SOLUTIONS / f"{notebook}.ipynb", 4))})
    assert names["05_bytelevel_train"] == "train_bytelevel"
    assert names["08_scale_merge_counts"] == "merge_counts"
