"""Growth, for chapter 08 (BPE at scale): training as the corpus grows.

What this adds over ``training`` (one corpus): ``train_bytelevel`` and HF
tokenizers' trainer (one thread) at each corpus size of
``Sizes.growth_bytes`` (the standard library, then site-packages: 32 MB,
128 MB, everything, about 140 MB), each run in a fresh process, its time and
the peak memory of its process tree (``runs``), and the log-log slope of
each: 1 is linear, below 1 grows slower than the corpus.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from bpe_lab.bench.runs import Result, in_fresh_process, memory
from bpe_lab.bench.sizes import Sizes
from bpe_lab.bench.table import Row, faster
from bpe_lab.bench.training import ONE_THREAD
from bpe_lab.core.corpus_files import offline_corpus

__all__ = ["bench_growth", "log_log_slope"]


def log_log_slope(sizes: list[float], values: list[float]) -> float:
    """The slope of ``log(values)`` against ``log(sizes)`` (least squares):
    ``values ~ sizes ** slope``.

    >>> round(log_log_slope([1, 10, 100], [2, 20, 200]), 6)
    1.0
    """
    slope, _ = np.polyfit(np.log(sizes), np.log(values), 1)
    return float(slope)


def bench_growth(sizes: Sizes, cache_dir: str | None, say: Callable[[str], object] = print) -> list[Row]:
    """Train at each size of ``sizes.growth_bytes``, ours and HF's, each in a
    fresh process; one row per size, and one for the slopes."""
    points: dict[str, list[tuple[float, Result]]] = {"ours": [], "hf": []}
    rows = []
    for max_bytes in sizes.growth_bytes:
        path = offline_corpus(max_bytes or None, sources=("stdlib", "site-packages"), cache=cache_dir)
        megabytes = path.stat().st_size / 1e6
        say(f"  growth: {megabytes:.1f} MB ...")
        ours = in_fresh_process("child_bytelevel", str(path), sizes.vocab_size, None)
        try:
            hf = in_fresh_process("child_hf", str(path), sizes.vocab_size, env=ONE_THREAD)
        except RuntimeError as err:
            hf = {"error": str(err).splitlines()[-1]}
        points["ours"].append((megabytes, ours))
        row = Row(
            f"growth, vocab {sizes.vocab_size:,}, {megabytes:.1f} MB",
            f"train_bytelevel {ours['seconds']:.2f} s",
            memory=f"ours {memory(ours)}",
        )
        if "error" in hf:
            row.notes.append(f"HF tokenizers skipped: {hf['error']}")
        else:
            points["hf"].append((megabytes, hf))
            row.reference = f"HF tokenizers, 1 thread {hf['seconds']:.2f} s"
            row.ratio = faster(hf["seconds"], ours["seconds"])
            row.memory += f"; HF {memory(hf)}"
        rows.append(row)
    rows.append(_slopes(points))
    return rows


def _slopes(points: dict[str, list[tuple[float, Result]]]) -> Row:
    def slopes(name: str) -> str:
        found = points[name]
        if len(found) < 2:
            return "n/a"
        megabytes = [mb for mb, _ in found]
        time_slope = log_log_slope(megabytes, [r["seconds"] for _, r in found])
        memory_slope = log_log_slope(megabytes, [r["peak_mb"] for _, r in found])
        return f"time ~ size^{time_slope:.2f}, memory ~ size^{memory_slope:.2f}"

    row = Row("growth, log-log slopes", f"ours: {slopes('ours')}", f"HF: {slopes('hf')}")
    row.notes.append("slope 1: grows like the corpus; a vocabulary of fixed size makes the merge loop grow slower")
    return row
