"""Learning byte-level merges in less memory: train_fast's loop, compact state.

What this adds over ``core/train_fast.learn_merges`` (any symbols, both tie
rules, the textbook's "first" rule included): the same incremental algorithm
on the same merge update (``core/merge_update.WordMerger``: pair counts
corrected locally after each merge, a pair -> words index), with a heap
with lazy deletion, specialised to what ``train_bytelevel`` needs, bytes and
the lexicographic tie rule, so that its state can be smaller:

- **the index**: ``learn_merges`` keeps a ``set`` of word ids per pair;
  here (``compact_index=True``) an ``array('I')`` per pair, 64 bytes plus 4
  per entry, duplicates and stale ids removed when the pair is merged. Late
  in training most pairs are in one word only: that word's id is kept as the
  int itself (``merge_update.add_word``).
- **the heap**: one 4-tuple ``(-count, key_left, key_right, pair)`` per
  entry whose keys are shared ``bytes``. A pair whose count fell is not
  pushed again (about half of all changes): its old entry, now too high, is
  re-pushed at the true count when it comes up (``pop_best``), so the pair
  popped is still the true best, with fewer entries and fewer pushes.
- **the input**: the pre-token counts are consumed while the words are
  built (``popitem``), then cleared: popitem never shrinks a dict's table.

A word's symbols stay a ``list`` of small ints, the byte values first (an
``array`` would be smaller but makes ``index`` and ``count``, the hot path,
slower). The merges are exactly ``learn_merges``'s (a test runs both): ties
go to the lexicographically greater pair of byte strings. What it costs is
measured by ``make bench`` (the training rows: time and peak memory against
HF tokenizers); ``bpe-lab corpus --mb 32`` makes a larger corpus to measure on.

>>> learn_bytelevel_merges({b"abc": 1, b"bca": 1}, 2)
[(b'b', b'c'), (b'bc', b'a')]
"""

from __future__ import annotations

import heapq
from array import array
from collections import defaultdict
from collections.abc import Callable, MutableMapping

from bpe_lab.core.merge_update import WORD_IDS, WordMerger

__all__ = ["learn_bytelevel_merges"]


def _descending(symbol: bytes) -> bytes:
    """A key that sorts byte strings in reverse: ``a < b`` exactly when
    ``_descending(a) > _descending(b)``. Each byte b becomes two, ``0, 255 - b``,
    and ``1, 0`` ends the key, above any byte's pair, so a prefix (smaller)
    gets the larger key. One ``bytes`` per symbol, compared by memcmp.

    >>> _descending(b"ab") > _descending(b"abc") > _descending(b"b")
    True
    """
    return bytes(v for b in symbol for v in (0, 255 - b)) + b"\x01\x00"


class _Learner(WordMerger[bytes]):
    """The training state: ``train_fast._Trainer``'s for the lexicographic
    rule, on the same merge update (``WordMerger``, with its compact index).
    Symbol ids 0-255 are the single bytes; a pair is one int,
    ``left * width + right``."""

    def __init__(self, counts: MutableMapping[bytes, int], num_merges: int) -> None:
        symbols = [bytes([b]) for b in range(256)]
        self.keys: list[bytes] = [_descending(s) for s in symbols]
        self.ids: dict[bytes, int] = {s: i for i, s in enumerate(symbols)}
        words: list[list[int]] = []
        freqs: list[int] = []
        while counts:  # consume the input: its memory is freed as the words grow
            token, freq = counts.popitem()
            words.append(list(token))  # symbol ids = byte values, a C loop
            freqs.append(freq)
        counts.clear()  # popitem never shrinks a dict: clear() frees its table
        super().__init__(symbols, words, freqs, 256 + num_merges + 1, compact_index=True)
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
                    where[pair] = array(WORD_IDS, (ids, w))
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
        for w in self.pop_words(pair):  # O(k log k), duplicates and stale ids dropped
            self.merge_word(w, left, right, joined, delta)
        del self.counts[pair]  # every occurrence was joined or broken up
        delta.pop(pair, None)
        self._apply(delta)

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
    return _Learner(counts, num_merges).learn(num_merges, progress=progress)
