"""Merging inside one pre-token: three encoders with one answer.

Byte-level BPE encodes each pre-token on its own: start from its UTF-8 bytes,
one symbol per byte, and replay the learned merges by rank, always joining
the adjacent pair that was learned earliest (the leftmost one if it occurs
twice), until no adjacent pair is a learned merge. ``encode.py`` does this
for characters; here the symbols are ``bytes`` and ``ranks`` maps a pair of
byte strings to its position in the merge list.

Three algorithms, each written once and generic over what a symbol is
(``bytes``, joined with ``+``, or token ids, joined by a table); they give
the same output (a property test checks it) and differ only in cost, which
is what notebook 04 measures:

- ``replay_merges``: the definition, written plainly. Every step rescans all
  pairs: O(n^2) for a pre-token of n bytes.
- ``scan_replay``: the same steps, but it remembers each pair's rank and,
  after a merge, looks up only the two pairs that changed. Still O(n^2) in
  the worst case, but the rescan is a single ``min()`` over a list of ints,
  which runs in C; with pre-tokens of a few bytes that beats any cleverer
  structure. This is tiktoken's choice too, for the same reason.
- ``heap_replay``: a doubly linked list of symbols and a heap of candidate
  pairs with lazy invalidation: O(n log n). It pays off on long pre-tokens
  (a base64 blob, a long URL), so the Tokenizer uses it above ``LONG_PIECE``
  bytes.

``scan_merges`` / ``heap_merges`` run them on the bytes of a pre-token, and
``scan_merge_ids`` / ``heap_merge_ids`` on token ids, as the Tokenizer does
(a pair of small ints hashes and compares faster than a pair of ``bytes``).
``byte_pair_encode`` is the one place that picks the scan or the heap by
length, as tiktoken's ``byte_pair_encode`` does. ``MergeTable`` holds the
merge list in the id form it takes.

>>> ranks = {(b"l", b"o"): 0, (b"lo", b"w"): 1, (b"e", b"r"): 2}
>>> replay_merges(b"lower", ranks)
[b'low', b'er']
>>> heap_merges(b"lower", ranks) == scan_merges(b"lower", ranks) == [b"low", b"er"]
True
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise, repeat
from typing import TypeVar

__all__ = [
    "PairRanks",
    "LONG_PIECE",
    "MergeTable",
    "byte_pair_encode",
    "replay_merges",
    "scan_replay",
    "heap_replay",
    "scan_merges",
    "heap_merges",
    "scan_merge_ids",
    "heap_merge_ids",
]

#: A merge list as a lookup table: ``(left, right) -> rank`` (0 = learned first).
PairRanks = Mapping[tuple[bytes, bytes], int]

#: Above this many bytes ``byte_pair_encode`` switches from the C-speed scan
#: (``scan_replay``) to the heap (``heap_replay``). Chosen by timing both, in
#: microseconds per piece, best of several runs, with GPT-2's ranks on pieces
#: of 8 to 1024 bytes cut at random from four sources: the Python docs, the
#: same with spaces removed, base64 of random bytes, and a run of spaces
#: (notebook 04, section 3, "Encoding one pre-token", times the encoders by
#: length: re-run it to re-measure on your machine). The two cross a few dozen bytes in, later
#: for letters without spaces than for base64; near this threshold the
#: encoder used is close to the faster one on every source, while a wrong
#: choice far from it costs a multiple (the scan is quadratic, the heap pays
#: a fixed cost per piece). Runs of spaces are the exception: GPT-2 merges a
#: run of spaces from the left, so the scan stays linear and beats the heap at
#: every length, by a little. (tiktoken's Rust core makes the same choice
#: from version 0.13.0 on, switching at 100 bytes: ``byte_pair_encode`` in
#: its ``src/lib.rs``, linked by notebook 04, scans shorter pieces and sends
#: longer ones to the heap of ``_byte_pair_merge_large``.)
LONG_PIECE = 40

#: A symbol of the generic encoders: ``bytes`` or an ``int`` token id.
T = TypeVar("T", bytes, int)

#: The rank of a pair that is not a merge: larger than any real rank. An int,
#: not ``float("inf")``, because ``min`` compares int with int fastest.
_NO_MERGE = 1 << 62

#: ``_SINGLE[b] == bytes([b])``, built once: splitting a pre-token into bytes
#: is then a C-level ``map``.
_SINGLE = [bytes([b]) for b in range(256)]


def _as_symbols(data: bytes) -> list[bytes]:
    """One symbol per byte."""
    return list(map(_SINGLE.__getitem__, data))


def replay_merges(data: bytes, ranks: PairRanks) -> list[bytes]:
    """Rank replay, the textbook way: O(n^2) for n bytes.

    Each pass scans all n-1 adjacent pairs for the lowest rank (O(n)) and joins
    it; every join removes one symbol, so there are at most n-1 passes.
    """
    symbols = _as_symbols(data)
    while len(symbols) > 1:
        best_rank, best_i = _NO_MERGE, -1
        for i in range(len(symbols) - 1):  # O(n) scan, in Python
            rank = ranks.get((symbols[i], symbols[i + 1]), _NO_MERGE)
            if rank < best_rank:  # strict: the leftmost pair wins a tie
                best_rank, best_i = rank, i
        if best_rank == _NO_MERGE:
            break
        symbols[best_i : best_i + 2] = [symbols[best_i] + symbols[best_i + 1]]
    return symbols


def scan_replay(symbols: list[T], ranks: Mapping[tuple[T, T], int], merged: Sequence[T] | None = None) -> list[T]:
    """Rank replay with the pair ranks kept in a list: same O(n^2) as the
    definition, faster steps. The one scan, for byte strings and for ids.

    ``symbols`` are a pre-token's starting symbols (changed in place and
    returned) and ``ranks`` maps a pair of them to its merge rank. A join
    makes ``merged[rank]`` when ``merged`` is given (ids: the id that merge
    produces) and ``left + right`` when it is None (byte strings).

    ``pair_rank[i]`` is the rank of ``(symbols[i], symbols[i+1])``. Joining
    pair i changes only the pairs at i-1 and i, so each step does two dict
    lookups in Python and leaves the O(n) search to ``min`` and ``index``,
    which run in C.

    >>> scan_replay([b"l", b"o", b"w"], {(b"l", b"o"): 0, (b"lo", b"w"): 1})
    [b'low']
    >>> scan_replay([0, 1, 2], {(0, 1): 0, (3, 2): 1}, merged=[3, 4])
    [4]
    """
    get = ranks.get
    pair_rank = list(map(get, pairwise(symbols), repeat(_NO_MERGE)))
    while pair_rank:
        best = min(pair_rank)  # O(n), in C
        if best == _NO_MERGE:
            break
        i = pair_rank.index(best)  # the leftmost pair of that rank
        if merged is None:
            symbols[i] += symbols.pop(i + 1)
        else:
            symbols[i] = merged[best]
            del symbols[i + 1]
        del pair_rank[i]
        if i:
            pair_rank[i - 1] = get((symbols[i - 1], symbols[i]), _NO_MERGE)
        if i < len(pair_rank):
            pair_rank[i] = get((symbols[i], symbols[i + 1]), _NO_MERGE)
    return symbols


def heap_replay(symbols: list[T], ranks: Mapping[tuple[T, T], int], merged: Sequence[T] | None = None) -> list[T]:
    """Rank replay with a linked list and a heap: O(n log n) for n symbols.
    The one heap, for byte strings and for ids (arguments as for
    ``scan_replay``).

    Symbols stay in a Python list indexed by their first byte's position;
    ``after[i]`` and ``before[i]`` link the symbols still alive, so a join is
    O(1) instead of a list splice. The heap holds ``(rank, position)`` of
    candidate pairs: popping the smallest gives the earliest-learned pair and,
    among equal ranks, the leftmost, exactly the replay order.

    Lazy invalidation: a join changes the pairs on both sides of it, but
    instead of finding and deleting their heap entries (O(n)) we leave them
    and push the new pairs. When a stale entry surfaces, it no longer
    describes the pair at its position (the left symbol was absorbed, or the
    pair's rank is different now), and we drop it. Each join pushes at most
    two entries, so the heap never holds more than 3n, and every entry is
    pushed and popped once: O(n log n) overall.

    Worked case, merges ``(a,b)=0, (b,c)=1, (ab,c)=2`` on ``abc``: the heap
    starts with (0,0) for ``ab`` and (1,1) for ``bc``. Pop (0,0): join, push
    (2,0) for ``ab c``. Pop (1,1): stale, position 1 was absorbed. Pop (2,0):
    join. Result ``[abc]``.

    >>> heap_replay([b"a", b"b", b"c"], {(b"a", b"b"): 0, (b"b", b"c"): 1, (b"ab", b"c"): 2})
    [b'abc']
    >>> heap_replay([0, 1, 2], {(0, 1): 0, (1, 2): 1, (3, 2): 2}, merged=[3, 4, 5])
    [5]
    """
    n = len(symbols)
    alive = [True] * n  # False: joined into its left neighbour
    after = list(range(1, n + 1))  # n means "no symbol after"
    before = list(range(-1, n - 1))  # -1 means "no symbol before"
    get = ranks.get
    heap = [(rank, i) for i, rank in enumerate(map(get, pairwise(symbols))) if rank is not None]
    heapq.heapify(heap)  # O(n)
    while heap:  # O(n) pops and pushes, O(log n) each
        rank, i = heapq.heappop(heap)
        j = after[i]
        if not alive[i] or j >= n or get((symbols[i], symbols[j])) != rank:
            continue  # stale: that pair was changed by an earlier join
        if merged is None:  # join j into i, and unlink j
            symbols[i] += symbols[j]
        else:
            symbols[i] = merged[rank]
        alive[j] = False
        k = after[j]
        after[i] = k
        if k < n:
            before[k] = i
        # The two new neighbouring pairs, written out rather than looped
        # over: this is the production path for long pieces.
        h = before[i]
        if h >= 0 and (new_rank := get((symbols[h], symbols[i]))) is not None:
            heapq.heappush(heap, (new_rank, h))
        if k < n and (new_rank := get((symbols[i], symbols[k]))) is not None:
            heapq.heappush(heap, (new_rank, i))
    return [symbol for symbol, kept in zip(symbols, alive) if kept]


def scan_merges(data: bytes, ranks: PairRanks) -> list[bytes]:
    """``scan_replay`` on the bytes of one pre-token, one symbol per byte."""
    return scan_replay(_as_symbols(data), ranks)


def heap_merges(data: bytes, ranks: PairRanks) -> list[bytes]:
    """``heap_replay`` on the bytes of one pre-token, one symbol per byte.

    >>> heap_merges(b"abc", {(b"a", b"b"): 0, (b"b", b"c"): 1, (b"ab", b"c"): 2})
    [b'abc']
    """
    return heap_replay(_as_symbols(data), ranks)


@dataclass(frozen=True, slots=True)
class MergeTable:
    """A merge list in the form the id encoders take, built once per tokenizer.

    ``byte_ids[b]`` is the id of the single byte ``b``, ``ranks`` maps a pair
    of ids to its merge rank, and ``merged[rank]`` is the id that merge makes.
    It is a second, id-keyed copy of the merge list: memory for speed.
    """

    byte_ids: Sequence[int]
    ranks: Mapping[tuple[int, int], int]
    merged: Sequence[int]

    @classmethod
    def from_merges(cls, merges: Sequence[tuple[bytes, bytes]], id_of: Mapping[bytes, int]) -> MergeTable:
        """The table for ``merges`` (in rank order) with the ids of ``id_of``,
        which must hold every single byte and every merge's result."""
        return cls(
            byte_ids=[id_of[bytes([b])] for b in range(256)],
            ranks={(id_of[left], id_of[right]): rank for rank, (left, right) in enumerate(merges)},
            merged=[id_of[left + right] for left, right in merges],
        )


def byte_pair_encode(data: bytes, table: MergeTable) -> list[int]:
    """The ids of one pre-token: the one place that picks an encoder.

    A single byte is its own token; up to ``LONG_PIECE`` bytes the scan's
    C-speed ``min`` wins, beyond it the heap's O(n log n) (how that was
    measured: ``LONG_PIECE``). All give the ids of ``replay_merges``' tokens.

    >>> table = MergeTable.from_merges([(b"l", b"o"), (b"lo", b"w")], {bytes([b]): b for b in range(256)}
    ...                                | {b"lo": 256, b"low": 257})
    >>> byte_pair_encode(b"lower", table)
    [257, 101, 114]
    """
    ids = list(map(table.byte_ids.__getitem__, data))
    if len(ids) < 3:  # one pair at most: one lookup, no scan (a sixth of all pieces)
        rank = table.ranks.get((ids[0], ids[1])) if len(ids) == 2 else None
        return ids if rank is None else [table.merged[rank]]
    if len(ids) > LONG_PIECE:
        return heap_replay(ids, table.ranks, table.merged)
    return scan_replay(ids, table.ranks, table.merged)


def scan_merge_ids(ids: list[int], id_ranks: Mapping[tuple[int, int], int], merged_ids: Sequence[int]) -> list[int]:
    """``scan_replay`` on token ids, the Tokenizer's usual path.

    ``ids`` are the ids of the single bytes (changed in place and returned),
    ``id_ranks`` maps a pair of ids to its merge rank, and ``merged_ids[rank]``
    is the id that merge produces. Why ids are faster than bytes: a pair of
    small ints hashes and compares faster than a pair of byte strings; a
    join is a list lookup instead of building a new ``bytes`` (whose hash is
    then computed on the next lookup); and the result needs no final
    bytes -> id lookup. It costs a second, id-keyed copy of the merge table
    (``MergeTable``).

    >>> ranks = {(b"l", b"o"): 0, (b"lo", b"w"): 1, (b"e", b"r"): 2}
    >>> id_of = {b"l": 0, b"o": 1, b"w": 2, b"e": 3, b"r": 4, b"lo": 5, b"low": 6, b"er": 7}
    >>> id_ranks = {(id_of[a], id_of[b]): rank for (a, b), rank in ranks.items()}
    >>> scan_merge_ids([id_of[bytes([b])] for b in b"lower"], id_ranks, [5, 6, 7])
    [6, 7]
    """
    return scan_replay(ids, id_ranks, merged_ids)


def heap_merge_ids(ids: list[int], id_ranks: Mapping[tuple[int, int], int], merged_ids: Sequence[int]) -> list[int]:
    """``heap_replay`` on token ids (arguments as for ``scan_merge_ids``).

    >>> heap_merge_ids([0, 1, 2], {(0, 1): 0, (1, 2): 1, (3, 2): 2}, [3, 4, 5])
    [5]
    """
    return heap_replay(ids, id_ranks, merged_ids)
