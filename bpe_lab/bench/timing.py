"""Timing contenders fairly on a shared machine: best of N, taking turns.

A benchmark that times ours N times and then theirs N times lets a burst of
load from another process land on one side only. Here the contenders take
turns (ours, theirs, ours, theirs, …) and each keeps its best run, the one
least disturbed. Each timed run starts from a state its ``prepare`` builds
outside the clock (a fresh tokenizer, so a cache filled by one run cannot
speed up the next), and every run's time is kept, so the table can show how
far apart they were. Each run's CPU time is kept too (this process's
threads, and the child processes it waited for during the run: workers):
on a machine busy with other jobs the wall clock measures the load, and
CPU seconds still compare the work.

>>> turns = []
>>> timed = interleaved({"a": lambda: lambda: turns.append("a"), "b": lambda: lambda: turns.append("b")}, 2)
>>> turns, sorted(timed), len(timed["a"].seconds), len(timed["a"].cpu_seconds)
(['a', 'b', 'a', 'b'], ['a', 'b'], 2, 2)
"""

from __future__ import annotations

import resource
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Prepare", "Timing", "interleaved", "describe_repeat"]

#: Builds a contender's starting state, untimed, and returns the call to time.
Prepare = Callable[[], Callable[[], Any]]


@dataclass
class Timing:
    """Every run's seconds and CPU seconds (in order) and the last run's result."""

    seconds: list[float] = field(default_factory=list)
    cpu_seconds: list[float] = field(default_factory=list)
    result: Any = None

    @property
    def best(self) -> float:
        return min(self.seconds)

    def spread(self) -> str:
        """The runs, best first: ``"0.41 s (runs 0.41-0.47 s; CPU 0.40 s)"``."""
        cpu = f"CPU {min(self.cpu_seconds):.2f} s" if self.cpu_seconds else ""
        if len(self.seconds) == 1:
            return f"{self.best:.2f} s (one run; {cpu})" if cpu else f"{self.best:.2f} s (one run)"
        runs = f"runs {self.best:.2f}-{max(self.seconds):.2f} s"
        return f"{self.best:.2f} s ({runs}; {cpu})" if cpu else f"{self.best:.2f} s ({runs})"


def _cpu_seconds() -> float:
    """CPU time of this process's threads and of its children waited for."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def interleaved(contenders: Mapping[str, Prepare], repeat: int) -> dict[str, Timing]:
    """Time each contender ``repeat`` times, taking turns in the order given;
    ``prepare()`` runs before each timed call and is not timed."""
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    timings = {name: Timing() for name in contenders}
    for _ in range(repeat):
        for name, prepare in contenders.items():
            call = prepare()
            cpu, start = _cpu_seconds(), time.perf_counter()
            result = call()
            timings[name].seconds.append(time.perf_counter() - start)
            timings[name].cpu_seconds.append(_cpu_seconds() - cpu)
            timings[name].result = result
            del result  # free it before the next contender runs
    return timings


def describe_repeat(timings: Mapping[str, Timing]) -> str:
    """One note for a row: how it was timed and how far the runs spread."""
    runs = "; ".join(f"{name} {timing.spread()}" for name, timing in timings.items())
    count = len(next(iter(timings.values())).seconds)
    return f"best of {count}, the contenders taking turns, each from a fresh start: {runs}"
