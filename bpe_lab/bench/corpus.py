"""What the benchmark runs on, said in the table: the corpus and the machine.

The corpus is real text that needs no download (``core.corpus_files``): this
Python's standard library, its files joined with ``<|endoftext|>``, built
once into a cache file. A speed depends on what is encoded (many small
documents cost the per-document overhead many times; one huge one does not),
so the table names the corpus with its document count and the spread of the
document sizes, and the cores and load of the machine it ran on.

>>> shape = CorpusShape.of(["ab", "cde", "f" * 10])
>>> shape.documents, shape.median_bytes, shape.largest_bytes
(3, 3, 10)
"""

from __future__ import annotations

import os
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bpe_lab.bench.table import Row
from bpe_lab.core.corpora import python_docs
from bpe_lab.core.symbols import ENDOFTEXT

__all__ = ["CorpusShape", "corpus_row", "english_sample", "read_head"]


@dataclass(frozen=True)
class CorpusShape:
    """How many documents, and how big (in UTF-8 bytes)."""

    documents: int
    total_bytes: int
    smallest_bytes: int
    median_bytes: int
    p90_bytes: int
    largest_bytes: int

    @classmethod
    def of(cls, documents: Sequence[str]) -> CorpusShape:
        if not documents:
            raise ValueError("a corpus needs at least one document")
        sizes = sorted(len(document.encode("utf-8")) for document in documents)
        return cls(
            documents=len(sizes),
            total_bytes=sum(sizes),
            smallest_bytes=sizes[0],
            median_bytes=int(statistics.median_low(sizes)),
            p90_bytes=sizes[min(len(sizes) - 1, (len(sizes) * 9) // 10)],
            largest_bytes=sizes[-1],
        )

    def sizes(self) -> str:
        def kb(n: int) -> str:
            return f"{n / 1e3:,.1f} KB"

        return (
            f"document sizes: median {kb(self.median_bytes)}, 90% under {kb(self.p90_bytes)}, "
            f"smallest {kb(self.smallest_bytes)}, largest {kb(self.largest_bytes)}"
        )


def read_head(path: Path, num_bytes: int | None = None) -> str:
    """The first ``num_bytes`` of a UTF-8 file (all of it for None), cut at a character."""
    with open(path, "rb") as f:
        data = f.read() if num_bytes is None else f.read(num_bytes)
    return data.decode("utf-8", errors="ignore")


def corpus_row(path: Path, what: str) -> Row:
    """The table's first row: the corpus, its documents, and the machine."""
    shape = CorpusShape.of(read_head(path).split(ENDOFTEXT))
    load = f", load average {os.getloadavg()[0]:.1f} at the start" if hasattr(os, "getloadavg") else ""
    row = Row(
        f"corpus: {what}, {shape.total_bytes / 1e6:.1f} MB",
        f"{shape.documents:,} documents joined by {ENDOFTEXT}",
        shape.sizes(),
    )
    row.notes.append(
        f"{path}; Python {sys.version.split()[0]} on {os.cpu_count()} cores{load}: "
        "figures from a loaded machine are slower, and its ratios noisier"
    )
    return row


def english_sample(num_bytes: int = 130_000) -> str:
    """About ``num_bytes`` of English prose: the start of the course's Python
    documentation corpus, cut at a character boundary."""
    return python_docs().encode("utf-8")[:num_bytes].decode("utf-8", errors="ignore")
