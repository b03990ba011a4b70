"""Training BPE incrementally: the merges of ``train``, without recounting.

Unlike ``train.train_bpe``, which recounts every pair of the whole corpus in
every round (O(N) per round, O(N * V) for V merges), this trainer counts once
and then only *corrects* the counts a merge changes:

- an **index** maps each pair to the ids of the words that contain it, so a
  merge visits only those words, not the whole corpus;
- a merge changes only the pairs **next to** each joined occurrence, so the
  counts are updated locally (``merge_update.WordMerger.merge_word``, with
  the worked cases; the byte-level learner runs the same update);
- a **max-heap with lazy deletion** finds the most frequent pair in
  O(log P) instead of a scan over all P pairs: a changed count is pushed
  again, and an entry whose count is out of date is dropped when it surfaces;
- the **tie rule is part of the heap key** (the greatest pair first, or the
  pair met first in the corpus), so a round where thousands of pairs tie, as
  happens late in training, does not scan them all.

How much faster that is on a real corpus is ``make bench``'s "textbook
trainer" row (train_fast against train_bpe); notebook 04 draws the curves.

Both tie-break rules of ``symbols.TIE_BREAKS`` give exactly the merges of
``train_bpe`` (a property test checks this on random corpora). The core,
``learn_merges``, works on any symbols that compare and join with ``+``:
``str`` for the textbook path, ``bytes`` for byte-level BPE (``bytelevel.merge_learner``
specialises it in less memory).

>>> corpus = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
>>> train_fast(corpus, 5)
[('e', 's'), ('es', 't'), ('est', '</w>'), ('l', 'o'), ('lo', 'w')]
>>> learn_merges({(b"a", b"b", b"c"): 1, (b"b", b"c", b"a"): 1}, 2, tie_break="lexicographic")
[(b'b', b'c'), (b'bc', b'a')]
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Callable, Mapping
from itertools import chain
from typing import TYPE_CHECKING, TypeVar

from bpe_lab.core.merge_update import WordMerger
from bpe_lab.core.options import TrainKeywords, TrainOptions
from bpe_lab.core.symbols import TIE_BREAKS, TieBreak, check_choice, check_int, report_short
from bpe_lab.core.train import training_corpus
from bpe_lab.core.words import short_reason

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["learn_merges", "train_fast"]

#: A symbol: ``str`` (textbook) or ``bytes`` (byte-level); it must be
#: hashable, ordered (for the lexicographic rule) and joinable with ``+``.
S = TypeVar("S", str, bytes)

#: Above every code point (and byte): ends a symbol's descending key, so that
#: no key is a prefix of another.
_END = 0x110000


def _descending(symbol: str | bytes) -> tuple[int, ...]:
    """A key that sorts symbols in *reverse* order: ``a < b`` exactly when
    ``_descending(a) > _descending(b)``. It lets a min-heap put the greatest
    pair first among equal counts, with no Python-level comparison."""
    values = symbol if isinstance(symbol, bytes) else map(ord, symbol)
    return (*(_END - 1 - v for v in values), _END)


class _Trainer(WordMerger[S]):
    """The training state. Symbols are numbered (ids) so that a pair is one
    int, ``left * width + right``: hashing and comparing one small int is
    much cheaper than a tuple of two strings, and this is the hot path.

    State: ``WordMerger``'s (words, counts, a set of word ids per pair),
    with the words in corpus order, which the "first" rule needs.

    The heap holds ``(-count, key, pair)``, and the key makes the heap apply
    the tie rule. "lexicographic": the pair's descending key, so the top is
    the greatest pair at the highest count. "first": ``low[pair]``, a lower
    bound on the first word that has the pair; ``pop_best`` makes it exact
    when the pair reaches the top (``_settle_first``). An entry is stale,
    and skipped, when its count or key is no longer the pair's.
    """

    def __init__(self, corpus: Mapping[tuple[S, ...], int], num_merges: int, tie_break: str) -> None:
        symbols: list[S] = list(dict.fromkeys(chain.from_iterable(corpus)))  # first seen first
        self.descending: list[tuple[int, ...]] = [_descending(s) for s in symbols]  # by id
        self.ids: dict[S, int] = {s: i for i, s in enumerate(symbols)}
        WordMerger.__init__(  # not super(): mypy mistypes it in a class generic over str or bytes
            self,
            symbols,
            [list(map(self.ids.__getitem__, word)) for word in corpus],  # O(N), C loops
            list(corpus.values()),
            len(symbols) + num_merges + 1,  # every id ever needed: the base symbols plus one per merge
        )
        self._count_all()
        # "first": the lowest word id indexed is a lower bound on the first word.
        self.low: dict[int, int] | None = (
            {pair: min(ids) for pair, ids in self.where.items()} if tie_break == "first" else None
        )
        self.heap: list[tuple[int, object, int]] = []
        self._rebuild_heap()

    def _id(self, symbol: S) -> int:
        known = self.ids.get(symbol)
        if known is None:
            known = self.ids[symbol] = len(self.symbols)
            self.symbols.append(symbol)
            self.descending.append(_descending(symbol))
        return known

    def _count_all(self) -> None:
        """The one full count: O(N) over all N symbol occurrences."""
        counts, where, width = self.counts, self.where, self.width
        for w, word in enumerate(self.words):
            freq = self.freqs[w]
            for left, right in zip(word, word[1:]):
                pair = left * width + right
                counts[pair] = counts.get(pair, 0) + freq
                where[pair].add(w)

    # -- the heap and the tie rules ----------------------------------------

    def _key(self, pair: int) -> object:
        if self.low is not None:
            return self.low[pair]
        left, right = divmod(pair, self.width)
        return self.descending[left], self.descending[right]

    def _rebuild_heap(self) -> None:
        self.heap = [(-count, self._key(pair), pair) for pair, count in self.counts.items()]
        heapq.heapify(self.heap)  # O(P)

    def _is_current(self, entry: tuple[int, object, int]) -> bool:
        neg, key, pair = entry
        return self.counts.get(pair) == -neg and (self.low is None or self.low[pair] == key)

    def pop_best(self) -> int | None:
        """Remove and return the winning pair, or None when no pair is left.

        Stale entries are popped and dropped as they surface (lazy deletion:
        each is popped once, O(log H) amortized per push). For
        "lexicographic" the first current entry is the winner; for "first"
        its word bound must be made exact first (``_settle_first``).
        """
        heap = self.heap
        while heap:
            top = heapq.heappop(heap)
            if not self._is_current(top):
                continue
            if self.low is None:
                return top[2]
            best = self._settle_first(top)
            if best is not None:
                return best
        return None

    def _settle_first(self, top: tuple[int, object, int]) -> int | None:
        """The textbook "first" rule: among the pairs at the top count, the
        one met first scanning the *current* corpus, word by word, left to
        right. ``top`` has the highest count and the lowest bound ``b``; every
        other pair at that count has a bound >= b, so its first word is >= b.

        Pop the pairs tied with ``top`` on (count, b) and find where each
        really occurs first. A pair first met in a later word than b gets that
        word as its exact bound and goes back on the heap; among the pairs met
        in word b, the leftmost wins and the others go back. Returns None when
        every candidate went back (then the new top decides).

        Worked case, words ``0: x y z``, ``1: p q x y``, ``2: y z`` (count 2).
        After (y, z) is merged every pair has count 1, and (x, y) still has
        bound 0, but word 0 is now ``x yz``: (x, y) is first met in word 1 at
        position 2 and goes back with bound 1. (x, yz), bound 0, in word 0,
        wins, as the scan meets it first. Next round (p, q), (q, x) and (x, y)
        all come up with bound 1, and (p, q), at position 0, wins.
        """
        low, heap, (neg, bound, pair) = self.low, self.heap, top
        assert low is not None and isinstance(bound, int)  # only the "first" rule keys by word
        tied = {pair}
        while heap and heap[0][0] == neg and heap[0][1] == bound:  # T tied pairs, O(T log H)
            entry = heapq.heappop(heap)
            if self._is_current(entry):
                tied.add(entry[2])
        in_first_word: list[tuple[int, int]] = []  # (position, pair)
        for pair in tied:
            word, position = self._first_seen(pair)
            if word > bound:  # the bound was loose: make it exact, queue again
                low[pair] = word
                heapq.heappush(heap, (neg, word, pair))
            else:
                in_first_word.append((position, pair))
        if not in_first_word:
            return None
        in_first_word.sort()
        for _, pair in in_first_word[1:]:
            heapq.heappush(heap, (neg, bound, pair))
        return in_first_word[0][1]

    def _first_seen(self, pair: int) -> tuple[int, int]:
        """Where the textbook scan meets ``pair`` first: (word id, position).
        The index holds every word that has the pair plus stale ids; going
        through it in order, the first word that really has the pair is the
        answer, and stale ids met on the way are dropped from the index.
        O(k log k) for k indexed words."""
        left, right = divmod(pair, self.width)
        ids = self.where[pair]
        for w in sorted(ids):
            word = self.words[w]
            for i in range(len(word) - 1):
                if word[i] == left and word[i + 1] == right:
                    return w, i
            ids.discard(w)
        raise AssertionError(f"pair {self.pair_of(pair)!r} has a count but no word")  # pragma: no cover

    # -- merging ---------------------------------------------------------

    def merge(self, pair: int) -> None:
        """Join ``pair`` in every word that has it and correct the counts.

        Only the words in ``where[pair]`` are visited, in order; the changes
        are summed in ``delta`` first, so a pair touched in many words is
        pushed on the heap once per round, not once per word. ``gained``
        keeps the first word where each pair appeared (only for "first").
        """
        left, right = divmod(pair, self.width)
        joined = self._id(self.symbols[left] + self.symbols[right])
        delta: defaultdict[int, int] = defaultdict(int)
        gained: dict[int, int] | None = None if self.low is None else {}
        for w in self.pop_words(pair):  # in word order, so gained keeps the first; O(k log k)
            self.merge_word(w, left, right, joined, delta, gained)
        del self.counts[pair]  # every occurrence was joined or broken up
        delta.pop(pair, None)
        self._apply(delta, gained)

    def _apply(self, delta: dict[int, int], gained: dict[int, int] | None) -> None:
        """Add the round's changes to the counts and push each changed pair
        once (its old entry goes stale). For "first", a pair that appeared in
        a word before its bound gets the lower bound, and is pushed even if
        its count did not change (it may have left a later word in the same
        round). A pair whose count reaches 0 leaves the counts and the index.
        When stale entries outnumber live ones the heap is rebuilt, O(P),
        which keeps it within a constant factor of P."""
        counts, heap, where, low = self.counts, self.heap, self.where, self.low
        descending, width = self.descending, self.width
        for pair, change in delta.items():
            moved = False
            if gained is not None and pair in gained and gained[pair] < low.get(pair, gained[pair] + 1):  # type: ignore[union-attr]
                low[pair], moved = gained[pair], True  # type: ignore[index]
            if not (change or moved):
                continue
            count = counts.get(pair, 0) + change
            if count:
                counts[pair] = count
                # the key, as _key computes it, inline: this is the hot path
                key = low[pair] if low is not None else (descending[pair // width], descending[pair % width])
                heapq.heappush(heap, (-count, key, pair))
            else:  # gone (or never there: created and broken up in one round)
                counts.pop(pair, None)
                where.pop(pair, None)
                if low is not None:
                    low.pop(pair, None)
        if len(heap) > 2 * len(counts) + 1024:
            self._rebuild_heap()


def learn_merges(
    corpus: Mapping[tuple[S, ...], int],
    num_merges: int,
    *,
    tie_break: TieBreak = "first",
    min_frequency: int = 1,
    progress: Callable[[int], object] | None = None,
) -> list[tuple[S, S]]:
    """Up to ``num_merges`` merges from ``{symbols: count}``, split into
    starting symbols (``str`` or ``bytes``; dict order is the "first" rule's
    scan order). Stops silently, shorter, when no pair is left or the best
    occurs fewer than ``min_frequency`` times; ``progress(1)`` after each merge.
    """
    num_merges = check_int(num_merges, "num_merges")
    check_choice(tie_break, "tie_break", TIE_BREAKS)
    trainer: _Trainer[S] = _Trainer(corpus, num_merges, tie_break)
    return trainer.learn(num_merges, min_frequency, progress)


def train_fast(
    word_freq: Mapping[str, int], num_merges: int, **keywords: Unpack[TrainKeywords]
) -> list[tuple[str, str]]:
    """The merges of ``train.train_bpe``, learned incrementally: same keywords
    (``options.TrainOptions``), checks, errors and ``on_short``; only the cost
    differs (module docstring)."""
    options = TrainOptions.from_keywords(keywords)
    corpus, num_merges = training_corpus(word_freq, num_merges, options)
    trainer: _Trainer[str] = _Trainer(corpus, num_merges, options.tie_break)
    merges = trainer.learn(num_merges, options.min_frequency)
    # Why it stopped short, if it did: from the words as training left them.
    reason = short_reason(trainer.words, options.min_frequency)
    report_short(num_merges, len(merges), options.on_short, reason=reason)
    return merges
