"""Measuring how running time grows, for notebook 04.

Big-O claims are checked by measurement: run the same function on inputs of
growing size, take the best of a few runs (the least disturbed by whatever
else the machine is doing), and fit a line on log-log axes
(``plots.fit_slope``): a slope near 1 means linear growth, near 2 quadratic.
Timings are never exact, so notebooks show them but do not compare them with
fixed numbers.

The other half of the story is how small the inputs of the slow parts are in
practice: ``pretoken_counts`` shows that running text repeats a few thousand
distinct pre-tokens, which is why encoders cache per pre-token.

>>> sizes, seconds = time_curve(lambda n: sum(range(n)), [10, 100], repeat=2)
>>> sizes, len(seconds), all(s >= 0 for s in seconds)
([10, 100], 2, True)
>>> pretoken_counts("a cat and a cat")
(5, 4)
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Iterable

from bpe_lab.core.pretokenize import gpt2_pretokenize

__all__ = ["best_time", "time_curve", "pretoken_counts"]


#: Caps every ``repeat``: the test suite sets it to 1, so a notebook's timing
#: cells run the same code once instead of three times (their outputs are
#: not compared, only their curves get noisier).
MAX_REPEAT_ENV = "BPE_LAB_MAX_REPEAT"


def best_time(func: Callable[[], object], *, repeat: int = 3) -> float:
    """The shortest of ``repeat`` wall-clock timings of ``func()``, in seconds
    (at most ``$BPE_LAB_MAX_REPEAT`` of them, when that is set)."""
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    best = float("inf")
    for _ in range(min(repeat, _max_repeat())):
        start = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - start)
    return best


def time_curve(
    func: Callable[[int], object], sizes: Iterable[int], *, repeat: int = 3
) -> tuple[list[int], list[float]]:
    """Time ``func(size)`` for every size: ``(sizes, seconds)``, the shape
    ``plots.timing_curves`` takes for one series. Prepare inputs outside
    ``func`` (for example in a dict keyed by size) so only the work is timed."""
    sizes = list(sizes)
    return sizes, [best_time(functools.partial(func, size), repeat=repeat) for size in sizes]


def _max_repeat() -> int:
    cap = os.environ.get(MAX_REPEAT_ENV)
    if cap is None:
        return 1 << 30
    if not cap.isdigit() or int(cap) < 1:
        raise ValueError(f"${MAX_REPEAT_ENV} must be a whole number of at least 1, got {cap!r}")
    return int(cap)


def pretoken_counts(text: str) -> tuple[int, int]:
    """``(pre-tokens, distinct pre-tokens)`` of ``text`` under GPT-2's
    pattern: how many pieces an encoder must encode, and how many it must
    actually work out when it caches each distinct piece."""
    pieces = gpt2_pretokenize(text)
    return len(pieces), len(set(pieces))
