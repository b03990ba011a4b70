"""The merges file: the whole model of textbook BPE, as readable text.

One merge per line, the two symbols separated by a single space, in rank
order, under a ``#version`` header (the subword-nmt layout). Symbols never
contain white space, because words never do.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from bpe_lab.core.encode import merge_ranks
from bpe_lab.core.symbols import END_OF_WORD
from bpe_lab.core.textfile import read_text

__all__ = ["save_merges", "load_merges", "HEADER"]

HEADER = "#version: 0.2"


def save_merges(
    merges: Sequence[tuple[str, str]],
    path: str | os.PathLike[str],
    *,
    end_of_word: str | None = END_OF_WORD,
    start_of_word: str | None = None,
) -> None:
    """Write ``merges`` to ``path`` (checked first, so a bad list is never saved)."""
    merge_ranks(merges, end_of_word=end_of_word, start_of_word=start_of_word)
    for a, b in merges:
        if any(ch.isspace() for ch in a + b):
            raise ValueError(f"merge {(a, b)!r} contains white space and cannot be saved")
    lines = [HEADER] + [f"{a} {b}" for a, b in merges]
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def load_merges(
    path: str | os.PathLike[str], *, end_of_word: str | None = END_OF_WORD, start_of_word: str | None = None
) -> list[tuple[str, str]]:
    """Read a merges file; a malformed line raises ValueError with its number."""
    merges: list[tuple[str, str]] = []
    for number, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip() or (number == 1 and line.startswith("#version")):
            continue
        parts = line.split(" ")
        if len(parts) != 2 or not all(parts):
            raise ValueError(f"{path}, line {number}: expected two symbols separated by one space, got {line!r}")
        merges.append((parts[0], parts[1]))
    try:
        merge_ranks(merges, end_of_word=end_of_word, start_of_word=start_of_word)
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None
    return merges
