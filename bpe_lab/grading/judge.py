"""Judging a task from what its kernel reported: plain data, compared here.

What this adds over ``tasks`` (the hidden cases and what the kernel sends
back for each): the verdict. Each hidden case's value arrives as a
``repr``, is parsed with ``ast.literal_eval`` (never run) and compared with
the literal the solution wrote, type included. The kernel's report of a
forbidden function it reached (``guard``) is believed only because it costs
the task its points; nothing the kernel says can earn them.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from bpe_lab.grading.guard import delegation_message
from bpe_lab.grading.report import TaskResult
from bpe_lab.grading.sandbox import Outcome
from bpe_lab.grading.tasks import Task

__all__ = ["short", "judge", "score"]


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


def judge(task: Task, probes: list[Any]) -> str:
    """ "" if every hidden case returned its literal, else why not."""
    if len(probes) != 1 or not isinstance(probes[0], list) or len(probes[0]) != len(task.cases):
        return "the hidden tests did not report back (was the test cell tampered with?)"
    delegated = _delegation(task, probes[0])
    if delegated:
        return delegated
    for number, (case, result) in enumerate(zip(task.cases, probes[0]), start=1):
        if not isinstance(result, dict):
            return "the hidden tests reported garbage"
        call = short(case.call, 120)
        if "error" in result:
            hint = " (not written yet?)" if str(result["error"]).startswith("NotImplementedError") else ""
            return f"hidden test {number}: {call} raised {result['error']}{hint}"
        try:
            value = ast.literal_eval(str(result.get("repr")))
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            shown = short(str(result.get("repr")), 120)
            return f"hidden test {number}: {call} returned {shown}, which is not a plain value"
        if value != case.expected or type(value) is not type(case.expected):
            got, expected = short(repr(value), 150), short(repr(case.expected), 150)
            return f"hidden test {number}: {call} returned {got}, expected {expected}"
    return ""


def score(task: Task, outcome: Outcome | None) -> TaskResult:
    if outcome is None:
        return TaskResult(task.grade_id, 0, task.points, "not run: the notebook stopped before this task")
    message = outcome.error if outcome.status != "ok" else judge(task, outcome.results) if task.cases else ""
    return TaskResult(task.grade_id, 0 if message else task.points, task.points, short(message, 500))
