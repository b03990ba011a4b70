"""A task's score from its test cell's outcome, decided in the grader.

What this adds over ``judge`` (the hidden cases' verdict from what the
kernel reported) and ``visible`` (the visible self-check replayed on the
kernel's values): the order in which the grader believes things. First
what costs points on the kernel's word (a call that reached what the
kernel's package view does not have, ``kernel_package``; a visible call
that reached a forbidden function): believed, since it can only lower a
score. Then the hidden cases' fraction, then the visible check, whose
failure costs the whole task. Nothing the kernel says can raise a score.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any

from bpe_lab.grading.authoring.tasks import Task
from bpe_lab.grading.check.guard import absent_message, delegation_message
from bpe_lab.grading.check.runner import not_written
from bpe_lab.grading.run.sandbox import Outcome
from bpe_lab.grading.run.visible import Visible, verdict
from bpe_lab.grading.score.judge import CELL_ERROR_CHARS, generated_calls, learner_line, score, short
from bpe_lab.grading.score.report import TaskResult

__all__ = ["task_score"]

#: How a stub of the kernel's package view (not an answer) reports itself (``guard.Delegated``).
_ABSENT = re.compile(r"^Delegated: (bpe_lab\.\S+) is not available here: a grading kernel")


def task_score(
    task: Task,
    outcome: Outcome | None,
    visible: Visible | None = None,
    shown_by: Outcome | None = None,
    hidden: Iterable[str] = (),
) -> TaskResult:
    """``judge.score`` of the hidden calls; 0 when a call reached what the
    kernel's package view does not have (its ``Delegated`` names it) or,
    in the run with ``visible`` checks, when a call of theirs reached a
    forbidden function (both the kernel's word, believed since they only
    cost points), or when the grader's replay of the visible check fails
    on the kernel's values (or its cell failed: a timeout, a crash); a task
    whose every hidden call raised
    ``NotImplementedError`` says it is not written yet. ``hidden``: every
    hidden call of the submission, which no learner text may repeat
    (``judge.learner_line``)."""
    shown: Any = None
    judged = visible is not None and bool(task.checked)
    zero = functools.partial(TaskResult, task.grade_id, 0, task.points, passed=0, cases=len(task.cases))
    if judged and (shown_by is None or shown_by.status != "ok"):
        # the cell's error is learner text (a failed answer cell's message rides along): one withheld-if-echoing line
        calls = generated_calls([task]) + list(hidden)
        why = "were not run" if shown_by is None else learner_line(shown_by.error, calls, CELL_ERROR_CHARS)
        summary = score(task, outcome, hidden).message
        return zero(short(f"the self-check's cases: {why}" + (f"; {summary}" if summary else ""), 800))
    if judged and shown_by is not None:
        shown = shown_by.results[0] if len(shown_by.results) == 1 else None
    probes = ([shown] if shown is not None else []) + (outcome.results if outcome and outcome.status == "ok" else [])
    for probe in probes:
        for case in probe if isinstance(probe, list) else []:
            found = _ABSENT.match(str(case.get("error", ""))) if isinstance(case, dict) else None
            if found:
                return zero(absent_message(task.name, found.group(1)))
            reached = case.get("reached") if isinstance(case, dict) and probe is shown else None
            for path in reached if isinstance(reached, list) else []:
                if path in task.forbid:
                    return zero(delegation_message(task.name, str(path), path in task.own))
    result = score(task, outcome, hidden)
    if judged and visible is not None and outcome is not None and outcome.status == "ok":
        why = verdict(visible, shown)
        if why:  # the hidden cases' summary too: what the learner may know of them
            return zero(short(f"{why}; {result.message}" if result.message else why, 700))
    reported = outcome.results[0] if outcome is not None and outcome.status == "ok" and outcome.results else None
    errors = [str(c.get("error", "")) if isinstance(c, dict) else "" for c in reported or []]
    if errors and result.points == 0 and all(e.startswith("NotImplementedError") for e in errors):
        result.message = short(f"{not_written(task.name)}; {result.message}", 500)
    return result
