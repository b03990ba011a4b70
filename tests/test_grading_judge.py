"""The judge compares what a kernel reported with the expected value in the
grader process: equal values of the same types, nothing parsed that no
honest probe could have sent."""

from __future__ import annotations

import nbformat
from grading_support import SOLUTIONS

from bpe_lab.grading.authoring.tasks import HiddenCase, Task, load_tasks
from bpe_lab.grading.run.probe import MAX_REPR
from bpe_lab.grading.run.sandbox import Outcome
from bpe_lab.grading.score.judge import LEARNER_CHARS, judge, score, short

COUNTS = HiddenCase("count_pairs({('a', 'b', 'c'): 2})", {("a", "b"): 2, ("b", "c"): 2})
TASK = Task("02_training_count_pairs", 2, "", (COUNTS,), name="count_pairs")


def _report(text: str) -> list[list[dict]]:
    return [[{"repr": text, "reached": []}]]


def test_the_right_counts_pass():
    assert judge(TASK, _report("{('a', 'b'): 2, ('b', 'c'): 2}")) == (1, "")


def test_float_counts_where_ints_are_asked_fail_and_say_so():
    passed, message = judge(TASK, _report("{('a', 'b'): 2.0, ('b', 'c'): 2.0}"))
    assert passed == 0
    assert message.endswith("wrong type: equal values, but of other types inside (2.0 is not 2, True is not 1)")


def test_true_is_not_one():
    task = Task("t", 1, "", (HiddenCase("f()", [1, 2]),), name="f")
    passed, message = judge(task, _report("[True, 2]"))
    assert passed == 0 and "wrong type: equal values" in message


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


def test_learner_text_is_one_short_line_that_never_repeats_a_hidden_call():
    """What a learner's exception says reaches feedback as one line of at
    most LEARNER_CHARS characters, and not at all where it repeats the
    hidden calls (a message built from ``In[-1]``, ``_ih`` or the caller's frame)."""
    calls = ["encode_word('zebra', [('z', 'e')])", "encode_word('quokka', [('q', 'u'), ('o', 'k')])"]
    cases = tuple(HiddenCase(c, ["x"], generated=True) for c in calls)
    task = Task("03_encoding_encode_word", 2, "", cases, name="encode_word")
    probe = "def __bpe_lab_probe():\n    for case in [\n        lambda: (" + "),\n        lambda: (".join(calls) + ")]"
    for stolen in (probe, repr([probe]), calls[1][len("encode_word(") : -1]):
        error = {"error": f"ValueError: {stolen}", "reached": []}
        passed, message = judge(task, [[error, error]])
        assert passed == 0 and "ValueError (its message repeats the hidden tests' code" in message
        assert calls[1] not in message and "quokka" not in message
    passed, message = judge(task, [[{"error": "KeyError: 'a\n\x1b[2Jb\r" + "x" * 500, "reached": []}] * 2])
    said = message.split(" raised ", 1)[1]
    assert said == short("KeyError: 'a [2Jb " + "x" * 500, LEARNER_CHARS) and len(said) == LEARNER_CHARS
    failed = score(task, Outcome("error", "RuntimeError: " + probe))  # the cell failed (publish_display_data broken)
    assert failed.points == 0 and "quokka" not in failed.message and "\n" not in failed.message
