"""Judging a task from what its kernel reported: plain data, compared here.

What this adds over ``tasks`` (the hidden cases) and ``probe`` (what the
kernel sends back for each): the verdict. Each hidden case's value arrives
as text, is parsed with ``ast.literal_eval`` (never run) and compared with
the expected value, type included, in the grader process; a value that was
not plain data (a generator, an object whose ``__eq__`` always says True)
fails its case.

**Partial credit.** A task earns its points times the fraction of its
hidden cases (fixed and generated) that came out right, rounded to 0.01. Two
things still cost the whole task, because they are about the task rather
than one case: its visible checks failing (the learner can run those, as
with nbgrader, where a failing test cell is 0), and a forbidden function
reached (``guard``). The kernel's word on either is believed only because it
costs points; nothing the kernel says can earn them.

**Written answers** (``score_written``) are not judged at all: the result
carries the learner's text with its points pending, for a person; only an
answer cell left as the exercise gave it, or deleted, is 0 (as nbgrader
gives an unchanged answer cell 0).

**What a message may say.** Feedback goes back to the learner, so a failed
case is shown by its input and what was wrong with the value (its type, its
length, the first wrong item, as the learner's value has it), never by the
expected value: ``describe`` does that.

>>> describe(["lo", "w"], ["low"])
'2 items, expected 1'
>>> describe({("a", "b"): 3}, {("a", "b"): 4})
"wrong value at [('a', 'b')]: 3"
"""

from __future__ import annotations

import ast
import re
from typing import Any

import nbformat

from bpe_lab.grading.check.hidden import same
from bpe_lab.grading.guard import delegation_message
from bpe_lab.grading.probe import MAX_REPR
from bpe_lab.grading.report import PENDING, TaskResult
from bpe_lab.grading.sandbox import Outcome
from bpe_lab.grading.tasks import HiddenCase, Task, Written, written_answer

__all__ = ["short", "describe", "judge", "score", "score_written"]


def short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


_DELEGATED = re.compile(r"^Delegated: (\S+) is not available")


def _delegation(task: Task, results: list[Any]) -> str:
    """The message naming a forbidden function the hidden calls reached, or "".

    The kernel reports what it reached; believing it can only cost points."""
    for result in results:
        if not isinstance(result, dict):
            continue
        reached = result.get("reached")
        found = _DELEGATED.match(str(result.get("error", "")))
        paths = [str(p) for p in reached] if isinstance(reached, list) else []
        for path in paths + ([found.group(1)] if found else []):
            if path in task.forbid:
                return delegation_message(task.name, path, path in task.own)
    return ""


def describe(got: Any, expected: Any, where: str = "") -> str:
    """What is wrong with ``got``, in terms of ``got`` only: the type, the
    length or the first wrong item, never the expected value itself."""
    at = f" at {where}" if where else ""
    if type(got) is not type(expected):
        name = type(expected).__name__
        return f"{type(got).__name__}{at}, expected {'an' if name[0] in 'aeiou' else 'a'} {name}"
    if isinstance(got, (list, tuple)):
        if len(got) != len(expected):
            return f"{len(got)} items{at}, expected {len(expected)}"
        for i, (a, b) in enumerate(zip(got, expected)):
            if a != b or type(a) is not type(b):
                return describe(a, b, f"{where}[{i}]")
    if isinstance(got, dict):
        extra = [k for k in got if k not in expected]
        if extra:
            return f"{short(repr(extra[0]), 80)} should not be a key{at}"
        missing = sum(k not in got for k in expected)
        if missing:
            return f"{missing} key{'s' * (missing > 1)} missing{at}"
        for key, value in got.items():
            if value != expected[key] or type(value) is not type(expected[key]):
                return describe(value, expected[key], f"{where}[{short(repr(key), 60)}]")
    if isinstance(got, (str, bytes)):
        first = next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b), None)
        if first is None:
            return f"{len(got)} characters{at}, expected {len(expected)}"
        return f"wrong from position {first}{at}: {short(repr(got[first : first + 20]), 60)}"
    return f"wrong value{at}: {short(repr(got), 80)}"


def _case_failure(number: int, case: HiddenCase, result: Any) -> str:
    """Why one hidden case failed ("" if it passed)."""
    label = f"hidden test {number}{' (generated for you)' if case.generated else ''}: {short(case.call, 240)}"
    if not isinstance(result, dict):
        return f"{label}: the kernel reported garbage"
    if "error" in result:
        hint = " (not written yet?)" if str(result["error"]).startswith("NotImplementedError") else ""
        return f"{label} raised {short(str(result['error']), 200)}{hint}"
    if "unplain" in result:
        kind = short(str(result["unplain"]), 80)
        hint = " (return a list, not a generator)" if kind.endswith("generator") else ""
        return f"{label} returned a {kind}, not plain data (lists, tuples, dicts, str, bytes, numbers){hint}"
    if "too_large" in result:
        return f"{label} returned a value over {result['too_large']} characters long: far more than the answer"
    text = str(result.get("repr"))
    if len(text) > MAX_REPR:  # the probe stops at MAX_REPR: a longer text is forged, and parsing it costs gigabytes
        return f"{label}: the kernel reported {len(text)} characters, more than a value may have ({MAX_REPR})"
    try:
        value = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return f"{label} returned {short(str(result.get('repr')), 120)}, which is not plain data"
    if same(value, case.expected):
        return ""
    return f"{label} returned {short(repr(value), 150)}: {describe(value, case.expected)}"


def judge(task: Task, probes: list[Any]) -> tuple[int, str]:
    """How many hidden cases came out right, and why the first wrong one
    did not ("" when all did). A delegation or a probe that did not report
    back counts as none right."""
    if len(probes) != 1 or not isinstance(probes[0], list) or len(probes[0]) != len(task.cases):
        return 0, "the hidden tests did not report back (was the test cell tampered with?)"
    delegated = _delegation(task, probes[0])
    if delegated:
        return 0, delegated
    failures = [_case_failure(n, case, r) for n, (case, r) in enumerate(zip(task.cases, probes[0]), start=1)]
    wrong = [f for f in failures if f]
    if not wrong:
        return len(task.cases), ""
    passed = len(task.cases) - len(wrong)
    return passed, f"{passed}/{len(task.cases)} hidden tests passed; {wrong[0]}"


def score(task: Task, outcome: Outcome | None) -> TaskResult:
    """The task's points from its test cell's outcome: 0 if the cell failed
    (its visible checks, a timeout, a crash), else the fraction of hidden
    cases right."""
    total = len(task.cases)
    if outcome is None:
        message = "not run: the notebook stopped before this task"
        return TaskResult(task.grade_id, 0, task.points, message, cases=total)
    if outcome.status != "ok":
        return TaskResult(task.grade_id, 0, task.points, short(outcome.error, 500), cases=total)
    if not task.cases:
        return TaskResult(task.grade_id, task.points, task.points)
    passed, message = judge(task, outcome.results)
    points = round(task.points * passed / total, 2)
    return TaskResult(task.grade_id, points, task.points, short(message, 500), passed=passed, cases=total)


def score_written(nb: nbformat.NotebookNode, written: Written) -> TaskResult:
    """A written answer: pending with the learner's text, or 0 when nothing
    was written (as nbgrader does for an unchanged answer cell)."""
    text = written_answer(nb, written)
    if text is None:
        return TaskResult(written.grade_id, 0, written.points, "the answer cell is missing from the submission")
    if not text and written.kind != "task":
        return TaskResult(written.grade_id, 0, written.points, "not answered: the cell still holds the exercise's text")
    message = f"needs manual grading ({written.points:g} point{'' if written.points == 1 else 's'} pending)"
    return TaskResult(written.grade_id, 0, written.points, message, status=PENDING, answer=short(text, 4000))
