"""Learning byte-level merges in less memory: train_fast's loop, compact state.

What this adds over ``core/train_fast.learn_merges`` (any symbols, both tie
rules, the textbook's "first" rule included): the same incremental algorithm
(pair counts corrected locally after each merge, a pair -> words index, a
heap with lazy deletion), specialised to what ``train_bytelevel`` needs,
bytes and the lexicographic tie rule, so that its state can be smaller. On
the 32 MB offline corpus (``bpe-lab corpus --mb 32``) at vocabulary 10,000
(101,212 distinct pre-tokens, ~96,000 pairs alive at the end), measured with
``sys.getsizeof`` and /proc on CPython 3.11, this process grew from 37 MB to
100 MB while learning, and now to 81-84 MB (the peak of all of training):

- **the index**: ``learn_merges`` keeps a ``set`` of word ids per pair (41
  MB at the start); here an ``array('I')`` per pair, 64 bytes plus 4 per
  entry, duplicates and stale ids removed when the pair is merged,
  ``sorted(set(...))``. 55% of the pairs at the end are in one word only:
  that word's id is kept as the int itself (``_add``): 19 MB -> 13 MB.
- **the heap**: one 4-tuple ``(-count, key_left, key_right, pair)`` per
  entry whose keys are shared ``bytes`` (~140 bytes). A pair whose count
  fell is not pushed again (half of all changes): its old entry, now too
  high, is re-pushed at the true count when it comes up (``pop_best``), so
  the pair popped is still the true best. 190,000 entries (26 MB) -> 134,000
  (18 MB), and fewer pushes.
- **the input**: the pre-token counts are consumed while the words are
  built (``popitem``), then cleared: popitem never shrinks a dict's table.

A word's symbols stay a ``list`` of small ints, the byte values first (an
``array`` would save 6 MB but makes ``index`` and ``count``, the hot path,
about twice as slow). The merges are exactly ``learn_merges``'s (a test runs
both): ties go to the lexicographically greater pair of byte strings.

>>> learn_bytelevel_merges({b"abc": 1, b"bca": 1}, 2)
[(b'b', b'c'), (b'bc', b'a')]
"""

from __future__ import annotations

import heapq
from array import array
from collections import defaultdict
from collections.abc import Callable, MutableMapping

__all__ = ["learn_bytelevel_merges"]

#: Word ids in the index: 4 bytes each (up to 4 billion distinct pre-tokens).
_WORD_IDS = "I"
#: A word with more occurrences of the left symbol than this is rewritten
#: into a new list rather than edited in place (as in ``train_fast``).
_COPY_FROM = 8


def _descending(symbol: bytes) -> bytes:
    """A key that sorts byte strings in reverse: ``a < b`` exactly when
    ``_descending(a) > _descending(b)``. Each byte b becomes two, ``0, 255 - b``,
    and ``1, 0`` ends the key, above any byte's pair, so a prefix (smaller)
    gets the larger key. One ``bytes`` per symbol, compared by memcmp.

    >>> _descending(b"ab") > _descending(b"abc") > _descending(b"b")
    True
    """
    return bytes(v for b in symbol for v in (0, 255 - b)) + b"\x01\x00"


def _add(where: dict[int, int | array[int]], pair: int, w: int) -> None:
    """Note that word ``w`` has ``pair``: a lone id is kept as the int itself
    (55% of the pairs at the end), a second one makes an array."""
    ids = where.get(pair)
    if ids is None:
        where[pair] = w
    elif isinstance(ids, int):
        if ids != w:
            where[pair] = array(_WORD_IDS, (ids, w))
    else:
        ids.append(w)


class _Learner:
    """The training state; the names and the worked cases are ``train_fast``'s
    (``_Trainer``), which this follows step for step for the lexicographic
    rule. Symbol ids 0-255 are the single bytes; a pair is one int,
    ``left * width + right``."""

    def __init__(self, counts: MutableMapping[bytes, int], num_merges: int) -> None:
        self.symbols: list[bytes] = [bytes([b]) for b in range(256)]
        self.keys: list[bytes] = [_descending(s) for s in self.symbols]
        self.ids: dict[bytes, int] = {s: i for i, s in enumerate(self.symbols)}
        self.width = 256 + num_merges + 1
        self.words: list[list[int]] = []
        self.freqs: list[int] = []
        while counts:  # consume the input: its memory is freed as the words grow
            token, freq = counts.popitem()
            self.words.append(list(token))  # symbol ids = byte values, a C loop
            self.freqs.append(freq)
        counts.clear()  # popitem never shrinks a dict: clear() frees its table (5 MB here)
        self.counts: dict[int, int] = {}
        self.where: dict[int, int | array[int]] = {}
        self._count_all()
        self.heap: list[tuple[int, bytes, bytes, int]] = []
        self._rebuild_heap()

    def _count_all(self) -> None:
        """The one full count: O(N) over all N symbol occurrences."""
        counts, where, width = self.counts, self.where, self.width
        for w, word in enumerate(self.words):
            freq = self.freqs[w]
            for pair in {left * width + right for left, right in zip(word, word[1:])}:
                ids = where.get(pair)  # once per word: the index is a set in effect
                if ids is None:
                    where[pair] = w
                elif isinstance(ids, int):
                    where[pair] = array(_WORD_IDS, (ids, w))
                else:
                    ids.append(w)
            for left, right in zip(word, word[1:]):
                pair = left * width + right
                counts[pair] = counts.get(pair, 0) + freq

    def _entry(self, pair: int, count: int) -> tuple[int, bytes, bytes, int]:
        left, right = divmod(pair, self.width)
        return -count, self.keys[left], self.keys[right], pair

    def _rebuild_heap(self) -> None:
        self.heap = [self._entry(pair, count) for pair, count in self.counts.items()]
        heapq.heapify(self.heap)  # O(P)

    def pop_best(self) -> int | None:
        """The pair with the highest count, the greatest among ties; stale
        entries (their count is no longer the pair's) are dropped."""
        heap, counts = self.heap, self.counts
        while heap:
            neg, key_left, key_right, pair = heapq.heappop(heap)
            count = counts.get(pair)
            if count == -neg:
                return pair
            if count is not None and count < -neg:  # it fell since: back in at its count
                heapq.heappush(heap, (-count, key_left, key_right, pair))
        return None

    def pair_of(self, pair: int) -> tuple[bytes, bytes]:
        left, right = divmod(pair, self.width)
        return self.symbols[left], self.symbols[right]

    def merge(self, pair: int) -> None:
        """Join ``pair`` in every word that has it and correct the counts."""
        left, right = divmod(pair, self.width)
        symbol = self.symbols[left] + self.symbols[right]
        joined = self.ids.get(symbol)
        if joined is None:  # a new symbol (``ab c`` and ``a bc`` make the same one)
            joined = self.ids[symbol] = len(self.symbols)
            self.symbols.append(symbol)
            self.keys.append(_descending(symbol))
        delta: defaultdict[int, int] = defaultdict(int)
        ids = self.where.pop(pair)
        for w in (ids,) if isinstance(ids, int) else sorted(set(ids)):  # O(k log k), duplicates and stale ids dropped
            self._merge_word(w, left, right, joined, delta)
        del self.counts[pair]  # every occurrence was joined or broken up
        delta.pop(pair, None)
        self._apply(delta)

    def _merge_word(self, w: int, left: int, right: int, joined: int, delta: defaultdict[int, int]) -> None:
        """Rewrite word ``w`` left to right and record how the neighbouring
        pairs' counts change: at ``... P [L R] N ...`` (P already rewritten,
        N still the original) (P, L) and (R, N) are lost, (P, LR) and (LR, N)
        gained. ``train_fast._Trainer._merge_word`` walks the overlapping
        cases (``A B C B C``, ``a a a a``)."""
        word, freq, width, where = self.words[w], self.freqs[w], self.width, self.where
        todo = word.count(left)  # occurrences of L not yet looked at
        out: list[int] | None = [] if todo > _COPY_FROM else None
        start = pos = 0
        while todo > 0:  # once per occurrence of L
            j = word.index(left, pos)
            todo -= 1
            if j + 1 == len(word) or word[j + 1] != right:
                pos = j + 1
                continue
            if right == left:
                todo -= 1  # the R we join is an L too
            if out is None:
                word[j] = joined
                del word[j + 1]
                prev = word[j - 1] if j else None
                nxt = word[j + 1] if j + 1 < len(word) else None
                pos = j + 1
            else:
                out += word[start:j]
                prev = out[-1] if out else None
                nxt = word[j + 2] if j + 2 < len(word) else None
                out.append(joined)
                start = pos = j + 2
            if prev is not None:
                delta[prev * width + left] -= freq
                delta[prev * width + joined] += freq
                _add(where, prev * width + joined, w)
            if nxt is not None:
                delta[right * width + nxt] -= freq
                delta[joined * width + nxt] += freq
                _add(where, joined * width + nxt, w)
        if out is not None and start:
            self.words[w] = out + word[start:]

    def _apply(self, delta: dict[int, int]) -> None:
        """Add the round's changes and push each changed pair once; a pair at
        0 leaves the counts and the index. The heap is rebuilt, O(P), when
        stale entries outnumber live ones."""
        counts, heap, where, keys, width = self.counts, self.heap, self.where, self.keys, self.width
        for pair, change in delta.items():
            if not change:
                continue
            count = counts.get(pair, 0) + change
            if count:
                counts[pair] = count
                if change > 0:  # a fall is pushed lazily, when the old entry comes up (``pop_best``)
                    heapq.heappush(heap, (-count, keys[pair // width], keys[pair % width], pair))
            else:
                counts.pop(pair, None)
                where.pop(pair, None)
        if len(heap) > 2 * len(counts) + 1024:
            self._rebuild_heap()


def learn_bytelevel_merges(
    counts: MutableMapping[bytes, int], num_merges: int, *, progress: Callable[[int], object] | None = None
) -> list[tuple[bytes, bytes]]:
    """Up to ``num_merges`` merges learned from ``{pre-token bytes: count}``,
    ties to the greater pair. ``counts`` is emptied (consumed to save memory;
    pass a copy to keep it). ``progress`` is called with 1 after each merge."""
    learner = _Learner(counts, num_merges)
    merges: list[tuple[bytes, bytes]] = []
    for _ in range(num_merges):  # V rounds, each O(changes * log H)
        pair = learner.pop_best()
        if pair is None:
            break
        merges.append(learner.pair_of(pair))
        learner.merge(pair)
        if progress is not None:
            progress(1)
    return merges
