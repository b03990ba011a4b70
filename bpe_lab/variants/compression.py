"""Gage's 1994 byte-pair compression: where BPE comes from.

Philip Gage ("A New Algorithm for Data Compression", C Users Journal, 1994)
shrinks a byte string by repeatedly replacing its most frequent adjacent pair
of bytes with a byte value that does not occur in the data, and writing down
the replacement in a table. Decompression expands the table back.

BPE for NLP (Sennrich et al., 2016) keeps exactly this loop but throws away the
compressed data and keeps the *table* as a vocabulary. This module is the
original, so notebook 01 can show both sides of that step.

>>> packed = compress(b"abababcab")
>>> packed.rounds[0]
Replacement(pair=(97, 98), byte=0, count=4, length=5)
>>> decompress(packed) == b"abababcab"
True
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

__all__ = ["Replacement", "Compressed", "compress", "decompress"]


@dataclass(frozen=True)
class Replacement:
    """One replacement: ``pair`` became ``byte``; ``count`` occurrences were
    replaced and the data was ``length`` bytes long afterwards."""

    pair: tuple[int, int]
    byte: int
    count: int
    length: int


@dataclass(frozen=True)
class Compressed:
    """The compressed data, its replacement table and the history of rounds."""

    data: bytes
    table: dict[int, tuple[int, int]]
    rounds: tuple[Replacement, ...]
    original_length: int

    def ratio(self) -> float:
        """Compressed size over original size, counting 3 bytes per table entry
        (code byte + pair), as Gage's packed table roughly costs."""
        if self.original_length == 0:
            return 1.0
        return (len(self.data) + 3 * len(self.table)) / self.original_length


def _pair_counts(data: bytes) -> Counter[tuple[int, int]]:
    """Count every adjacent pair, as the number of *non-overlapping*
    left-to-right occurrences: that is how many bytes a replacement saves.

    ``zip`` counts overlapping pairs, which is only wrong for runs of one byte
    (``aaaa`` holds ``aa`` three times but only two fit side by side), so those
    are recounted with ``bytes.count``, which never overlaps.
    """
    counts = Counter(zip(data, data[1:]))
    for a, b in counts:
        if a == b:
            counts[(a, b)] = data.count(bytes((a, b)))
    return counts


def compress(data: bytes, *, max_rounds: int | None = None) -> Compressed:
    """Byte-pair compress ``data``.

    Each round replaces the most frequent adjacent pair (ties: the pair that
    occurs first in the data) with the smallest byte value that has never
    appeared, neither in the input nor as an earlier replacement, so every code
    in the table means exactly one pair. It stops when no pair occurs twice
    (a replacement would no longer shorten the data at all), when no unused
    byte value is left, or after ``max_rounds`` rounds.

    Each round is O(n) in the data length, so the whole run is O(n * rounds)
    with at most 256 rounds.
    """
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError(
            f"compress() needs bytes, got {type(data).__name__}; encode text first, e.g. text.encode('utf-8')"
        )
    if max_rounds is not None and max_rounds < 0:
        raise ValueError(f"max_rounds must be >= 0, got {max_rounds}")
    data = bytes(data)
    original_length = len(data)
    free = [b for b in range(256) if b not in set(data)]
    table: dict[int, tuple[int, int]] = {}
    rounds: list[Replacement] = []
    while free and (max_rounds is None or len(rounds) < max_rounds):
        counts = _pair_counts(data)
        if not counts:
            break
        pair, count = max(counts.items(), key=lambda item: item[1])
        if count < 2:
            break
        code = free.pop(0)
        data = data.replace(bytes(pair), bytes((code,)))
        table[code] = pair
        rounds.append(Replacement(pair, code, count, len(data)))
    return Compressed(data, table, tuple(rounds), original_length)


def decompress(packed: Compressed) -> bytes:
    """Expand every code byte back into its pair until only literals remain.

    Undoing the rounds newest first restores the data exactly: a code byte
    never occurs as a literal, because it was chosen from unused values.
    """
    if not isinstance(packed, Compressed):
        raise TypeError(f"decompress() needs a Compressed, got {type(packed).__name__}")
    data = packed.data
    for code in reversed(list(packed.table)):
        a, b = packed.table[code]
        if not (0 <= code < 256 and 0 <= a < 256 and 0 <= b < 256):
            raise ValueError(f"malformed table entry {code!r}: {(a, b)!r}")
        data = data.replace(bytes((code,)), bytes((a, b)))
    return data
