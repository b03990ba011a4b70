"""Merging inside one pre-token: three encoders with one answer.

Byte-level BPE encodes each pre-token on its own: start from its UTF-8 bytes,
one symbol per byte, and replay the learned merges by rank, always joining
the adjacent pair that was learned earliest (the leftmost one if it occurs
twice), until no adjacent pair is a learned merge. ``encode.py`` does this
for characters; here the symbols are ``bytes`` and ``ranks`` maps a pair of
byte strings to its position in the merge list.

The three functions below give the same output (a property test checks it)
and differ only in cost, which is what notebook 04 measures:

- ``replay_merges``: the definition, written plainly. Every step rescans all
  pairs: O(n^2) for a pre-token of n bytes.
- ``scan_merges``: the same steps, but it remembers each pair's rank and, after
  a merge, looks up only the two pairs that changed. Still O(n^2) in the worst
  case, but the rescan is a single ``min()`` over a list of ints, which runs in
  C; with pre-tokens of a few bytes that beats any cleverer structure. This is
  tiktoken's choice too, for the same reason.
- ``heap_merges``: a doubly linked list of symbols and a heap of candidate
  pairs with lazy invalidation: O(n log n). It pays off on long pre-tokens
  (a base64 blob, a long URL), so the Tokenizer uses it above ``LONG_PIECE``
  bytes.

The Tokenizer runs the same steps on token ids instead of byte strings
(``scan_merge_ids``, ``heap_merge_ids``: a pair of small ints hashes and
compares faster than a pair of ``bytes``), and ``byte_pair_encode`` is the one
place that picks between them by length, as tiktoken's ``byte_pair_encode``
does. ``MergeTable`` holds the merge list in the id form they take.

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

__all__ = [
    "PairRanks",
    "LONG_PIECE",
    "MergeTable",
    "byte_pair_encode",
    "replay_merges",
    "scan_merges",
    "heap_merges",
    "scan_merge_ids",
    "heap_merge_ids",
]

#: A merge list as a lookup table: ``(left, right) -> rank`` (0 = learned first).
PairRanks = Mapping[tuple[bytes, bytes], int]

#: Above this many bytes ``byte_pair_encode`` switches from the C-speed scan
#: (``scan_merge_ids``) to the heap (``heap_merge_ids``). Measured with GPT-2's
#: ranks on 2 cores (Xeon), CPython 3.11: microseconds per piece, scan / heap,
#: best of 9, for 50 pieces of n bytes each, cut at random from each source:
#:
#:   n bytes                           8          40          128          1024
#:   slice of the Python docs    3.0 / 4.3     24 / 23    148 / 81    10019 / 816
#:   the same, spaces removed    3.1 / 4.8     24 / 26    149 / 92     7286 / 910
#:   base64 of random bytes      2.0 / 2.8     12 / 10     68 / 33     3856 / 396
#:   a run of spaces             1.1 / 2.0    3.4 / 4.9   9.6 / 13       66 / 98
#:
#: The two cross at 24-32 bytes for base64, 32-40 for prose and about 48 for
#: letters without spaces; at 40 the encoder used is within 15% of the faster
#: one on all three, while a wrong choice far from 40 costs 1.5x (8 bytes) to
#: 10x (1 KB). Spaces are the exception: GPT-2 merges a run of spaces from the
#: left, so the scan stays linear and beats the heap at every length, but by
#: 1.5x on a few microseconds. (tiktoken's Rust core switches at 100 bytes:
#: there a scan step is cheaper, relative to a heap operation, than in Python.)
LONG_PIECE = 40

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


def scan_merges(data: bytes, ranks: PairRanks) -> list[bytes]:
    """Rank replay with the pair ranks kept in a list: same O(n^2), faster steps.

    ``pair_rank[i]`` is the rank of ``(symbols[i], symbols[i+1])``. Joining
    pair i changes only the pairs at i-1 and i, so each step does two dict
    lookups in Python and leaves the O(n) search to ``min`` and ``index``,
    which run in C.
    """
    symbols = _as_symbols(data)
    get = ranks.get
    pair_rank = list(map(get, pairwise(symbols), repeat(_NO_MERGE)))
    while pair_rank:
        best = min(pair_rank)  # O(n), in C
        if best == _NO_MERGE:
            break
        i = pair_rank.index(best)  # the leftmost pair of that rank
        symbols[i] += symbols.pop(i + 1)
        del pair_rank[i]
        if i:
            pair_rank[i - 1] = get((symbols[i - 1], symbols[i]), _NO_MERGE)
        if i < len(pair_rank):
            pair_rank[i] = get((symbols[i], symbols[i + 1]), _NO_MERGE)
    return symbols


def heap_merges(data: bytes, ranks: PairRanks) -> list[bytes]:
    """Rank replay with a linked list and a heap: O(n log n) for n bytes.

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

    >>> heap_merges(b"abc", {(b"a", b"b"): 0, (b"b", b"c"): 1, (b"ab", b"c"): 2})
    [b'abc']
    """
    symbols = _as_symbols(data)  # symbols[i]: the symbol that starts at byte i
    n = len(symbols)
    alive = [True] * n  # False: joined into its left neighbour
    after = list(range(1, n + 1))  # n means "no symbol after"
    before = list(range(-1, n - 1))  # -1 means "no symbol before"
    heap = [(ranks[pair], i) for i, pair in enumerate(pairwise(symbols)) if pair in ranks]
    heapq.heapify(heap)  # O(n)
    while heap:  # O(n) pops and pushes, O(log n) each
        rank, i = heapq.heappop(heap)
        j = after[i]
        if not alive[i] or j >= n or ranks.get((symbols[i], symbols[j])) != rank:
            continue  # stale: that pair was changed by an earlier join
        symbols[i] += symbols[j]  # join j into i, and unlink j
        alive[j] = False
        k = after[j]
        after[i] = k
        if k < n:
            before[k] = i
        for a, b in ((before[i], i), (i, k)):  # the two new neighbouring pairs
            if a >= 0 and b < n:
                new_rank = ranks.get((symbols[a], symbols[b]))
                if new_rank is not None:
                    heapq.heappush(heap, (new_rank, a))
    return [symbol for symbol, kept in zip(symbols, alive) if kept]


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
    C-speed ``min`` wins, beyond it the heap's O(n log n) (measurements at
    ``LONG_PIECE``). All give the ids of ``replay_merges``' tokens.

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
        return heap_merge_ids(ids, table.ranks, table.merged)
    return scan_merge_ids(ids, table.ranks, table.merged)


def scan_merge_ids(ids: list[int], id_ranks: Mapping[tuple[int, int], int], merged_ids: Sequence[int]) -> list[int]:
    """``scan_merges`` on token ids: the same steps, the Tokenizer's usual path.

    ``ids`` are the ids of the single bytes (changed in place and returned),
    ``id_ranks`` maps a pair of ids to its merge rank, and ``merged_ids[rank]``
    is the id that merge produces. Why it is faster than merging bytes: a
    pair of small ints hashes and compares faster than a pair of byte strings;
    a join is a list lookup instead of building a new ``bytes`` (whose hash is
    then computed on the next lookup); and the result needs no final
    bytes -> id lookup. It costs a second, id-keyed copy of the merge table
    (``MergeTable``).

    >>> ranks = {(b"l", b"o"): 0, (b"lo", b"w"): 1, (b"e", b"r"): 2}
    >>> id_of = {b"l": 0, b"o": 1, b"w": 2, b"e": 3, b"r": 4, b"lo": 5, b"low": 6, b"er": 7}
    >>> id_ranks = {(id_of[a], id_of[b]): rank for (a, b), rank in ranks.items()}
    >>> scan_merge_ids([id_of[bytes([b])] for b in b"lower"], id_ranks, [5, 6, 7])
    [6, 7]
    """
    get = id_ranks.get
    pair_rank = list(map(get, pairwise(ids), repeat(_NO_MERGE)))
    while pair_rank:
        best = min(pair_rank)  # O(n), in C
        if best == _NO_MERGE:
            break
        i = pair_rank.index(best)  # the leftmost pair of that rank
        ids[i] = merged_ids[best]
        del ids[i + 1]
        del pair_rank[i]
        if i:
            pair_rank[i - 1] = get((ids[i - 1], ids[i]), _NO_MERGE)
        if i < len(pair_rank):
            pair_rank[i] = get((ids[i], ids[i + 1]), _NO_MERGE)
    return ids


def heap_merge_ids(ids: list[int], id_ranks: Mapping[tuple[int, int], int], merged_ids: Sequence[int]) -> list[int]:
    """``heap_merges`` on token ids (arguments as for ``scan_merge_ids``).

    The same linked list and lazy heap; ``ids[i]`` holds the symbol at
    position i and ``alive[i]`` says whether it still exists. A heap entry is
    stale when its left symbol was absorbed, or when the pair at its position
    no longer has its rank (a neighbour was joined meanwhile).

    >>> heap_merge_ids([0, 1, 2], {(0, 1): 0, (1, 2): 1, (3, 2): 2}, [3, 4, 5])
    [5]
    """
    n = len(ids)
    alive = [True] * n
    after = list(range(1, n + 1))  # n means "no symbol after"
    before = list(range(-1, n - 1))  # -1 means "no symbol before"
    get = id_ranks.get
    heap = [(rank, i) for i, rank in enumerate(map(get, pairwise(ids))) if rank is not None]
    heapq.heapify(heap)  # O(n)
    while heap:  # O(n) pops and pushes, O(log n) each
        rank, i = heapq.heappop(heap)
        j = after[i]
        if not alive[i] or j >= n or get((ids[i], ids[j])) != rank:
            continue  # stale: that pair was changed by an earlier join
        ids[i] = merged_ids[rank]  # join j into i, and unlink j
        alive[j] = False
        k = after[j]
        after[i] = k
        if k < n:
            before[k] = i
        # The two new neighbouring pairs, written out: this loop is the
        # production path for long pieces, and a loop over them costs ~10%.
        h = before[i]
        if h >= 0 and (new_rank := get((ids[h], ids[i]))) is not None:
            heapq.heappush(heap, (new_rank, h))
        if k < n and (new_rank := get((ids[i], ids[k]))) is not None:
            heapq.heappush(heap, (new_rank, i))
    return [token for token, kept in zip(ids, alive) if kept]
