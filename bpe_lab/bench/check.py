"""``bpe-lab bench --check``: the benchmark's tiktoken figures against a
plain script's (``bench.plain``), which must agree within ``TOLERANCE``.

A benchmark can misreport its anchor without any bug in the anchor: a fresh
object per run, a missing warm-up, a contender that leaves work behind for
the next. The check runs the plain script in a process of its own before
and after the benchmark's encoding rows (so a drift of the machine's load
touches both sides) and compares each tiktoken call's MB/s, the plain
script's better run of the two against the benchmark's figure.

>>> agree(19.0, 20.0), agree(17.0, 20.0)
(True, False)
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from bpe_lab.bench.encoding import bench_encode_file, bench_encoding
from bpe_lab.bench.sizes import Sizes
from bpe_lab.bench.table import Row

__all__ = ["TOLERANCE", "agree", "check_tiktoken"]

#: How far apart the benchmark's and the plain script's MB/s may be.
TOLERANCE = 0.10


def agree(benchmark: float, plain: float) -> bool:
    """Whether the benchmark's figure is within ``TOLERANCE`` of the plain one."""
    return abs(benchmark / plain - 1) <= TOLERANCE


def _plain(path: Path, sizes: Sizes) -> dict[str, float]:
    command = [sys.executable, "-m", "bpe_lab.bench.plain", str(path), "--threads", str(sizes.workers)]
    command += ["--repeat", str(sizes.encode_repeat)]
    if sizes.encode_bytes is not None:
        command += ["--single-bytes", str(sizes.encode_bytes)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the plain script failed ({' '.join(command)}): {done.stderr.strip()[-2000:]}")
    figures: dict[str, float] = json.loads(done.stdout)
    return figures


def check_tiktoken(path: Path, sizes: Sizes, say: Callable[[str], object] = print) -> tuple[list[Row], bool]:
    """A row per tiktoken call (the benchmark's MB/s, the plain script's,
    their ratio) and whether every pair agrees."""
    say("the plain script, first run ...")
    before = _plain(path, sizes)
    say("the benchmark's encoding rows ...")
    measured: dict[str, float] = {}
    for row in bench_encoding(path, sizes) + bench_encode_file(path, sizes):
        measured |= row.figures
    say("the plain script, second run ...")
    after = _plain(path, sizes)
    rows, all_agree = [], True
    for call, figure in measured.items():
        plain = max(before[call], after[call])
        ok = agree(figure, plain)
        all_agree &= ok
        row = Row(
            f"check: tiktoken {call}",
            f"benchmark {figure:.1f} MB/s",
            f"plain script {plain:.1f} MB/s (runs {before[call]:.1f}, {after[call]:.1f})",
            f"{figure / plain:.0%} of the plain script: " + ("agree" if ok else f"DISAGREE (over {TOLERANCE:.0%})"),
        )
        rows.append(row)
    return rows, all_agree
