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
costs points; nothing the kernel says can earn them. A third is the
grader's own: a case it measured over its bound (``measure.OVER``: the work
grew with the corpus, the text was held whole). That is the work the task
is about, which its self-check judges at home from counts a kernel could
forge; so a forger who passes the self-check that way loses the whole task
here, as an honest slow answer does at the self-check.

**Written answers** (``score_written``) are not judged at all: the result
carries the learner's text with its points pending, for a person; only an
answer cell left as the exercise gave it, or deleted, is 0 (as nbgrader
gives an unchanged answer cell 0).

**What a message may say.** Feedback goes back to the learner, so a failed
case is shown by its input (the call, which the grader wrote) and the kind
of mistake: a wrong value, a wrong type, an exception raised, too slow, not
written yet; a case the grader measured itself (``measure``), by the size
of its input and what the measurement showed ("too slow: the work grew
with the corpus"). Never a property of the expected value (its length, prefix,
keys, the position of the first difference): over resubmissions those
would rebuild the answer. Nor the learner's own value: they can run the
call themselves, and what the kernel sends back is theirs to fill with
anything (``describe``).

**Learner text** (an exception's message, a cell's error) reaches a message
only through ``learner_line``: one line, no control characters, at most
``LEARNER_CHARS`` characters, and never the probe's code nor a hidden
call's arguments (a function that raises with ``In[-1]`` or its caller's
frame in its message would otherwise hand every hidden input out at once).

>>> describe(["lo", "w"], ["low"])
'wrong value'
>>> describe(("low",), ["low"])
'wrong type (yours is a tuple)'
>>> describe({("a", "b"): 3.0}, {("a", "b"): 3})
'wrong type: equal values, but of other types inside (2.0 is not 2, True is not 1)'
>>> learner_line("ValueError: no\\n\\x1b[31mred", [])
'ValueError: no [31mred'
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from typing import Any

from bpe_lab.grading.authoring.tasks import HiddenCase, Task, Written, written_answer
from bpe_lab.grading.check.guard import delegation_message
from bpe_lab.grading.check.hidden import same
from bpe_lab.grading.notebook_format import nbformat
from bpe_lab.grading.run.measure import OVER
from bpe_lab.grading.run.probe import MAX_REPR
from bpe_lab.grading.run.sandbox import Outcome
from bpe_lab.grading.score.report import PENDING, TaskResult

__all__ = [
    "LEARNER_CHARS",
    "CELL_ERROR_CHARS",
    "short",
    "learner_line",
    "generated_calls",
    "describe",
    "judge",
    "score",
    "score_written",
]


def short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


#: The most characters of learner-controlled text one message carries: an
#: exception's message; a failed cell's error (mostly a self-check's
#: message, whose hint comes last) may have more.
LEARNER_CHARS, CELL_ERROR_CHARS = 200, 500
#: An argument list of a hidden call this long, repeated in learner text, is withheld.
ECHO_CHARS = 12
#: What only the grader's probe cell holds: learner text with any of these
#: came from the cell's source (``In[-1]``, ``_ih``, a frame, ``linecache``).
PROBE_MARKS = ("lambda: (", "__bpe_lab", "hidden.expect", "HiddenCases(", "BEGIN HIDDEN")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2066-\u2069]+")


def _arguments(call: str) -> str:
    """What a call passes: the text between its first ``(`` and its last ``)``."""
    start, end = call.find("("), call.rfind(")")
    return call[start + 1 : end] if 0 <= start < end else call


def _echoes(text: str, hidden: Iterable[str]) -> bool:
    """Whether ``text`` holds the probe's own code, or the whole argument
    list of one of the ``hidden`` calls (the generated ones: random, so no
    honest message holds theirs; not any shorter stretch, nor the fixed
    cases': the visible self-checks' messages share words, merge lists and
    even whole inputs with those)."""
    if any(mark in text for mark in PROBE_MARKS):
        return True
    return any(len(args) >= ECHO_CHARS and args in text for args in map(_arguments, hidden))


def generated_calls(tasks: Iterable[Task]) -> list[str]:
    """The calls of the tasks' generated cases: what ``learner_line`` never lets through."""
    return [case.call for task in tasks for case in task.cases if case.generated]


def learner_line(text: str, hidden: Iterable[str], limit: int = LEARNER_CHARS) -> str:
    """Learner-controlled ``text`` made fit for feedback: one line without
    control characters, at most ``limit`` characters, and withheld (but for
    its first word, the exception's name) where it repeats the probe's code
    or one of the ``hidden`` calls' arguments."""
    line = " ".join(_CONTROL.sub(" ", str(text)).split())
    if _echoes(line, hidden):
        name = line.split(":", 1)[0].split(" ", 1)[0][:60]
        return f"{name} (its message repeats the hidden tests' code, so it is not shown)"
    return short(line, limit)


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


def describe(got: Any, expected: Any) -> str:
    """The kind of mistake ``got`` makes: a wrong type (at the top: inside,
    only when the values are equal but for their types), else a wrong
    value. Nothing about ``expected`` beyond that: not its length, its
    keys, its first items, nor where ``got`` departs from it."""
    if type(got) is not type(expected):
        return f"wrong type (yours is {_a(type(got).__name__)})"
    if got == expected:
        return "wrong type: equal values, but of other types inside (2.0 is not 2, True is not 1)"
    return "wrong value"


def _a(name: str) -> str:
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {short(name, 60)}"


def _case_failure(number: int, case: HiddenCase, result: Any, hidden: list[str]) -> str:
    """Why one hidden case failed ("" if it passed), by its call and the
    kind of mistake; ``hidden``: every hidden call of the task, never echoed."""
    label = f"hidden test {number}{' (generated for you)' if case.generated else ''}: {short(case.call, 240)}"
    if not isinstance(result, dict):
        return f"{label}: the kernel reported garbage"
    if "error" in result:
        error = str(result["error"])
        hint = " (not written yet?)" if error.startswith("NotImplementedError") else ""
        return f"{label} raised {learner_line(error, hidden)}{hint}"
    if "unplain" in result:
        kind = learner_line(str(result["unplain"]), hidden, 80)
        hint = " (return a list, not a generator)" if kind.endswith("generator") else ""
        return f"{label} returned {_a(kind)}, not plain data (lists, tuples, dicts, str, bytes, numbers){hint}"
    if "too_large" in result:
        return f"{label} returned a value too large to check (over {MAX_REPR} characters written out)"
    if "measured" in result:  # the grader's own verdict on a case it measured (``measure``): its size and the mistake
        return f"{label}: {learner_line(str(result['measured']), hidden, 300)}"
    text = str(result.get("repr"))
    if len(text) > MAX_REPR:  # the probe stops at MAX_REPR: a longer text is forged, and parsing it costs gigabytes
        return f"{label}: the kernel reported {len(text)} characters, more than a value may have ({MAX_REPR})"
    try:
        value = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return f"{label} returned something that is not plain data"
    if same(value, case.expected):
        return ""
    return f"{label}: {describe(value, case.expected)}"


def judge(task: Task, probes: list[Any], hidden: Iterable[str] = ()) -> tuple[int, str]:
    """How many hidden cases came out right, and why the first wrong one
    did not ("" when all did). A delegation or a probe that did not report
    back counts as none right. ``hidden``: the other tasks' calls, which no
    message may repeat either."""
    if len(probes) != 1 or not isinstance(probes[0], list) or len(probes[0]) != len(task.cases):
        return 0, "the hidden tests did not report back (was the test cell tampered with?)"
    delegated = _delegation(task, probes[0])
    if delegated:
        return 0, delegated
    hidden = generated_calls([task]) + list(hidden)
    failures = [_case_failure(n, c, r, hidden) for n, (c, r) in enumerate(zip(task.cases, probes[0]), start=1)]
    over = [f for f, r in zip(failures, probes[0]) if isinstance(r, dict) and r.get(OVER) is True and "measured" in r]
    if over:  # measured over its bound: the work the task is about
        return 0, f"{over[0]}; that is the work this task is about, so it costs the whole task"
    wrong = [f for f in failures if f]
    if not wrong:
        return len(task.cases), ""
    passed = len(task.cases) - len(wrong)
    return passed, f"{passed}/{len(task.cases)} hidden tests passed; {wrong[0]}"


def score(task: Task, outcome: Outcome | None, hidden: Iterable[str] = ()) -> TaskResult:
    """The task's points from its test cell's outcome: 0 if the cell failed
    (its visible checks, a timeout, a crash), else the fraction of hidden
    cases right. ``hidden``: every hidden call of the submission (what one
    task's function copied away may surface in another task's message)."""
    hidden = generated_calls([task]) + list(hidden)
    total = len(task.cases)
    if outcome is None:
        message = "not run: the notebook stopped before this task"
        return TaskResult(task.grade_id, 0, task.points, message, cases=total)
    if outcome.status != "ok":
        error = learner_line(outcome.error, hidden, CELL_ERROR_CHARS)
        return TaskResult(task.grade_id, 0, task.points, error, cases=total)
    if not task.cases:
        return TaskResult(task.grade_id, task.points, task.points)
    passed, message = judge(task, outcome.results, hidden)
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
