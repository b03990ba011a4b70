"""Pre-tokenizing benchmarks: one row per pattern of ``core.patterns.PATTERNS``,
and GPT-2's fast pre-tokenizer against its own pattern.

Each pattern cuts the first ``Sizes.pretokenize_bytes`` of the corpus with the
``regex`` module (``findall`` of the compiled pattern, what tiktoken's
``pat_str`` means), so the rows compare the patterns on the same text: how
fast each is and how many pieces it makes. The last row is
``core.pretokenize.gpt2_pretokenize`` (what ``Tokenizer`` runs for GPT-2's
pattern: an ASCII-only equivalent when the text allows) against ``regex``
with GPT-2's pattern, the pieces checked identical. All of them take turns,
best of ``Sizes.encode_repeat``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import regex

from bpe_lab.bench.corpus import read_head
from bpe_lab.bench.sizes import Sizes
from bpe_lab.bench.table import Row, faster
from bpe_lab.bench.timing import Prepare, describe_repeat, interleaved
from bpe_lab.core.patterns import PATTERNS
from bpe_lab.core.pretokenize import gpt2_pretokenize
from bpe_lab.core.symbols import ENDOFTEXT

__all__ = ["bench_pretokenizers"]

_FAST = "gpt2_pretokenize"


def bench_pretokenizers(path: Path, sizes: Sizes) -> list[Row]:
    """A row per pattern, then the fast GPT-2 pre-tokenizer's row."""
    documents = read_head(path, sizes.pretokenize_bytes).split(ENDOFTEXT)
    megabytes = sum(len(document.encode()) for document in documents) / 1e6

    def with_regex(pattern: str, keep: bool) -> Callable[[], Any]:
        compiled = regex.compile(pattern)  # compiled outside the clock
        if keep:  # GPT-2's pieces, compared with the fast path's
            return lambda: [piece for document in documents for piece in compiled.findall(document)]
        return lambda: sum(len(compiled.findall(document)) for document in documents)

    def fast() -> Callable[[], Any]:
        return lambda: [piece for document in documents for piece in gpt2_pretokenize(document)]

    contenders: dict[str, Prepare] = {
        name: partial(with_regex, pattern, name == "gpt2") for name, pattern in PATTERNS.items()
    }
    contenders[_FAST] = fast
    timed = interleaved(contenders, sizes.encode_repeat)
    rows = [
        Row(
            f"pre-tokenizing, pattern {name}, {megabytes:.1f} MB",
            f"regex {megabytes / timed[name].best:.1f} MB/s, {_count(timed[name].result):,} pieces",
        )
        for name in PATTERNS
    ]
    rows[0].notes.append(describe_repeat(timed) + f"; each document cut apart (never across {ENDOFTEXT})")
    ours, gpt2 = timed[_FAST], timed["gpt2"]
    same = "" if ours.result == gpt2.result else " (PIECES DIFFER)"
    rows.append(
        Row(
            f"pre-tokenizing, {_FAST} (GPT-2's fast path), {megabytes:.1f} MB",
            f"{_FAST} {megabytes / ours.best:.1f} MB/s",
            f"regex, pattern gpt2 {megabytes / gpt2.best:.1f} MB/s",
            faster(gpt2.best, ours.best) + same,
        )
    )
    return rows


def _count(result: int | list[str]) -> int:
    return result if isinstance(result, int) else len(result)
