"""Figures the grader measures itself, around cells it runs: CPU time, resident memory.

What this adds over ``probe`` (values the kernel sends back) and ``budget``
(the kernel's processes watched against limits): verdicts that rest on no
figure the kernel reports. Whether a merge touches only the words its index
names, or a trainer's work grows with corpus x merges, a kernel could tell
by counting its own operations (``check.instruments``), and a submission
could forge those counts. So for a hidden call a chapter knows how to
measure (``cases.generators.MEASURED``: its ``Measured`` plan), the grader
runs cells of its own after the probe's and measures them from the host:

- ``cpu``: the CPU time of the kernel's whole process tree (``budget``'s
  ``descendants``: utime + stime of every process, and the cutime + cstime
  of the children they reaped), read from ``/proc`` before and after each
  timed cell. The plan weighs the cells (+1, -1): a difference of two
  corpora, so that what both share (the call, the probe's own work) cancels.
  A difference alone can be padded (CPU burnt on the small corpus until it
  costs what the large one does), so each timed cell is followed by one of
  the grader's (``reference_cell``: the package's own answer on the same
  input, the plan's ``reference``), timed the same way in the same kernel,
  and each learner's cell must stay within ``ratio`` times its reference's
  seconds plus the bound: padding shows on the cell it pads.
- ``memory``: the tree's resident memory (RSS summed, as ``budget`` counts
  it), sampled while a timed cell runs; the peak over the level just
  before the cell must stay under the plan's bound.

The probe marks such a call with one comment line (``MARK`` and JSON: its
case's number, the call, the timed cells' probe sources); ``planned`` reads
those lines back, with the reference cells after their timed cells, and
``plan_of`` makes the plan again from the call (in this process: its
expected values never reach the kernel). ``decide`` turns
the figures and the timed cells' results into the case's result, which
replaces whatever the kernel's probe said for that case: ``{"repr":
PASSED}`` when every value is right and the figure within its bound, else
``{"measured": WHY}`` naming the input's size and the kind of mistake
(never an expected value), with ``OVER: True`` when the figure was over
its bound (or the timed call ran past the time limit): the work the task is
about, which costs the whole task (``judge``), as the self-check's verdict
on the same work does at home. A figure never comes from the kernel, a value
does, as every probe's value does, and is compared here.

What escapes: work handed to a process outside the tree (none can be, in
the sandbox: every process is a descendant of the pid namespace's first),
or to a thread that goes on after the timed cell (code written to dodge the
measurement: the call's value must be right when it returns).

>>> plan = Measured("cpu", "", (("f(1)", -1, 1), ("f(2)", 1, 1)), "", 0.15, "9 words",
...                 "too slow: the work grew with the corpus", "flat")
>>> decide(plan, [0.30, 0.32], [[{"repr": "1"}], [{"repr": "1"}]])
{'repr': "'flat'", 'reached': []}
>>> decide(plan, [0.30, 0.90], [[{"repr": "1"}], [{"repr": "1"}]])
{'measured': 'too slow: the work grew with the corpus (9 words)', 'reached': [], 'over': True}
>>> decide(plan, [0.30, 0.32], [[{"repr": "1"}], [{"repr": "2"}]])["measured"]
'returned a wrong value on 9 words'
>>> padded = Measured("cpu", "", plan.timed, "", 0.15, "9 words", "too slow", "flat", ("r(1)", "r(2)"), 4)
>>> decide(padded, [0.30, 0.01, 0.32, 0.30], [[{"repr": "1"}], None, [{"repr": "1"}], None])["measured"]
"too slow: more than 4 times a local answer's time (9 words)"
"""

from __future__ import annotations

import ast
import functools
import json
import os
import threading
from pathlib import Path
from typing import Any

from bpe_lab.grading.cases.chapters import GENERATORS  # noqa: F401 - every chapter's module imported: MEASURED filled
from bpe_lab.grading.cases.generators import MEASURED, Measured
from bpe_lab.grading.check.hidden import MAX_REPR, same
from bpe_lab.grading.run.budget import descendants

__all__ = [
    "MARK",
    "OVER",
    "SAMPLE",
    "TRIES",
    "Measured",
    "beyond_load",
    "plan_of",
    "marks",
    "reference_cell",
    "planned",
    "cpu_seconds",
    "rss_bytes",
    "PeakMemory",
    "decide",
]

#: Begins the comment line that marks a measured case in a probe's source.
MARK = "#%bpe-lab-measure "
#: The key a measured case's result holds (True) when its figure was over the bound.
OVER = "over"
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@functools.lru_cache(maxsize=64)
def plan_of(call: str) -> Measured | None:
    """The measured plan of a hidden ``call``, or None when no chapter measures it."""
    for planner in MEASURED:
        plan = planner(call)
        if plan is not None:
            return plan
    return None


def marks(calls: list[str], timed: dict[int, list[str]]) -> str:
    """The lines that mark ``calls``' measured cases (``timed``: case number ->
    its timed cells' sources, as the probe writes them)."""
    lines = [
        MARK + json.dumps({"slot": slot, "call": calls[slot], "timed": cells}) for slot, cells in sorted(timed.items())
    ]
    return "".join(f"\n{line}" for line in lines)


def reference_cell(call: str) -> str:
    """The cell that runs the grader's reference ``call``: one call of
    ``in_kernel`` (``reference_merge``, ``reference_train``), which runs the
    module's own local answer with the garbage collector off, as the timed
    cell's function runs the learner's, and returns None: the cell shows
    and sends back nothing (no guard: it is the package's own answer)."""
    return f"{call}\n"


def _cells(plan: Measured, timed: list[str]) -> list[str]:
    """The cells a plan's case runs: each timed cell, then its reference's if the plan has one."""
    if not plan.reference:
        return list(timed)
    return [cell for pair in zip(timed, map(reference_cell, plan.reference)) for cell in pair]


def planned(source: str) -> list[tuple[int, Measured, list[str]]]:
    """The measured cases a probe's ``source`` marks: (case number, plan, the
    cells to time: each timed cell, followed by its reference's when the plan has some)."""
    found = []
    for line in source.splitlines():
        if not line.startswith(MARK):
            continue
        try:
            data = json.loads(line[len(MARK) :])
            slot, call, cells = int(data["slot"]), str(data["call"]), [str(c) for c in data["timed"]]
        except (ValueError, KeyError, TypeError):
            continue
        plan = plan_of(call)
        if plan is not None and len(cells) == len(plan.timed):
            found.append((slot, plan, _cells(plan, cells)))
    return found


def _cpu(pid: int) -> int:
    """Ticks of CPU of one process: its own and its reaped children's (0 if it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0
    return sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime (fields 14-17 of proc(5))


def cpu_seconds(root: int) -> float:
    """CPU seconds the process tree under ``root`` has used, all its processes together."""
    return sum(_cpu(pid) for pid in descendants(root)) / _TICK


def rss_bytes(root: int) -> int:
    """Resident bytes of the process tree under ``root``, all its processes together (as ``budget`` counts them)."""
    return sum(descendants(root).values())


#: Seconds between two looks at a measured cell's memory (a look scans ``/proc``: a few ms more).
SAMPLE = 0.01
#: How many times in all a case measured over its bound is measured: the first figure within the
#: bound stands. Over the bound costs the whole task, and other processes' load (a class graded on
#: every core) could inflate one call's figure; an answer whose work grows is over every time. A
#: figure too far over for load to explain (``beyond_load``) is not measured again.
TRIES = 3


def beyond_load(plan: Measured, figures: list[float]) -> bool:
    """Whether a figure over its bound is too far over for other processes'
    load to explain, so that measuring again would only cost time (a
    textbook trainer's case took 7 CPU seconds a try). CPU: the weighted sum
    is more than twice what the calls it subtracts took, and twice the
    bound. A flat answer's sum is noise around 0 (the solution's calls here:
    0.26, 0.00, 0.25 and 0.01 s, weighted -1, +1, +1, -1), so load would
    have to make its added calls take three times as long as the
    subtracted ones; a rescanning merge's is 0.45 s over calls of 0.08 s
    subtracted. Against a reference: a cell more than twice its allowance
    (``ratio`` times its reference's seconds plus the bound), as both ran
    in the same kernel one after the other (a padded scan: 0.7 s against
    an allowance of 0.14 s). Memory: a peak more than twice the bound
    (reading 08's text whole held 14 MB and more, as bytes 3.1 MB and more
    against a bound of 1 MB; the solution 0).

    >>> plan = Measured("cpu", "", (("f(1)", -1, 1), ("f(2)", 1, 1)), "", 0.12, "9 words", "too slow", "flat")
    >>> beyond_load(plan, [0.08, 0.53]), beyond_load(plan, [0.26, 0.50])
    (True, False)
    """
    if plan.kind == "cpu":
        own, references = _split(plan, figures)
        subtracted = sum(seconds for (_, weight, _), seconds in zip(plan.timed, own) if weight < 0)
        slower = any(seconds > 2 * allowed for seconds, allowed in zip(own, _allowed(plan, references)))
        return slower or _figure(plan, own) > 2 * max(subtracted, plan.bound)
    return _figure(plan, figures) > 2 * plan.bound


def _split(plan: Measured, figures: list[float]) -> tuple[list[float], list[float]]:
    """The learner's cells' figures and the references' (none without a
    reference), from the figures of the cells ``planned`` gave, in order."""
    if not plan.reference:
        return list(figures), []
    return list(figures[0::2]), list(figures[1::2])


def _allowed(plan: Measured, references: list[float]) -> list[float]:
    """The seconds each timed cell may take next to its reference's."""
    return [plan.ratio * seconds + plan.bound for seconds in references]


def _figure(plan: Measured, figures: list[float]) -> float:
    """What a case's timed cells come to, to hold against its bound: CPU, the
    weighted sum of their seconds; memory, the highest peak (0 for none)."""
    if plan.kind == "cpu":
        return sum(weight * seconds for (_, weight, _), seconds in zip(plan.timed, figures))
    return max(figures, default=0.0)


class PeakMemory:
    """The most resident memory the tree under ``root`` had while the block
    ran: ``baseline`` is its level on entry, ``peak`` the highest seen by a
    thread of its own that looks every ``SAMPLE`` seconds (stopped and
    joined on exit, whatever happened). A peak shorter than a look can be
    missed; what a streaming encoder must not do, hold the whole text or
    all its pre-tokens, lasts as long as the encoding."""

    def __init__(self, root: int) -> None:
        self.root, self.baseline, self.peak = root, 0, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._look, name="bpe-lab-peak-memory", daemon=True)

    def __enter__(self) -> PeakMemory:
        self.baseline = self.peak = rss_bytes(self.root)
        self._thread.start()
        return self

    def _look(self) -> None:
        while not self._stop.wait(SAMPLE):
            self.peak = max(self.peak, rss_bytes(self.root))

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss_bytes(self.root))

    @property
    def grew(self) -> int:
        """Bytes the peak rose over the level on entry."""
        return self.peak - self.baseline


def _reached(results: list[Any]) -> list[str]:
    """What the timed cells' calls reached (the kernel's word, believed where it costs points)."""
    paths: list[str] = []
    for result in results:
        reached = result.get("reached") if isinstance(result, dict) else None
        paths += [str(p) for p in reached] if isinstance(reached, list) else []
    return sorted(set(paths))


def decide(plan: Measured, figures: list[float], results: list[Any]) -> dict[str, Any]:
    """The measured case's result from the timed cells' ``figures`` (CPU
    seconds, or bytes of memory over the level before the cell) and their
    probes' ``results`` (each a list of one case's dict)."""
    cells = len(plan.timed) + len(plan.reference)
    if len(figures) != cells:  # the grader's own figures: a mismatch is a bug here, not the kernel's doing
        raise ValueError(f"decide: {len(figures)} figures {figures!r} for {cells} timed cells")
    own, references = _split(plan, figures)
    if plan.reference and len(results) == cells:
        results = results[0::2]  # a reference cell sends back nothing
    cases = [r[0] if isinstance(r, list) and len(r) == 1 else None for r in results]
    reached = _reached(cases)
    if len(cases) != len(plan.timed):
        return {"measured": f"the measured calls on {plan.size} did not report back", "reached": reached}
    for case, (_, _, expected) in zip(cases, plan.timed):
        if not isinstance(case, dict):
            return {"measured": f"the measured calls on {plan.size} did not report back", "reached": reached}
        if "error" in case:
            return {"error": str(case["error"])[:300], "reached": reached}
        text = case.get("repr")
        try:
            value = ast.literal_eval(text) if isinstance(text, str) and len(text) <= MAX_REPR else _Wrong
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            value = _Wrong
        if value is _Wrong or not same(value, expected):
            return {"measured": f"returned a wrong value on {plan.size}", "reached": reached}
    if _figure(plan, own) > plan.bound:
        return {"measured": f"{plan.mistake} ({plan.size})", "reached": reached, OVER: True}
    if any(seconds > allowed for seconds, allowed in zip(own, _allowed(plan, references))):
        slower = f"too slow: more than {plan.ratio:g} times a local answer's time ({plan.size})"
        return {"measured": slower, "reached": reached, OVER: True}
    return {"repr": repr(plan.passed), "reached": reached}


class _Wrong:
    """A value that was not plain data: equal to no expected value."""
