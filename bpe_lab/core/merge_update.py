"""The incremental merge update: one word rewritten, its pair counts corrected.

What this adds over ``words.merge_symbols`` (which rewrites a word and
leaves the counting to a full recount): the step that makes incremental
training incremental. After a merge only the pairs *next to* each joined
occurrence change, so a trainer that knows which words hold a pair can
rewrite just those words and correct the counts locally
(``WordMerger.merge_word``, with the worked cases). Both incremental
trainers run on it: ``train_fast._Trainer`` (any symbols, both tie rules)
and ``bytelevel.merge_learner`` (bytes, in compact state), each a subclass
that adds its heap and its tie rule.

Symbols are numbered: a word is a ``list`` of symbol ids, whatever a symbol
is (``str`` for the textbook path, ``bytes`` for byte-level BPE), and a pair
is one int, ``left * width + right``. The pair -> words index comes in two
kinds, chosen by ``compact_index``: a ``set`` of word ids per pair, or
(``add_word``) the lone word id as the int itself and more as an
``array('I')``, with duplicates removed when the pair is merged.

>>> state = WordMerger(["A", "B", "C", "BC"], [[0, 1, 2, 1, 2]], [3], width=10)
>>> delta = defaultdict(int)
>>> state.merge_word(0, 1, 2, 3, delta)  # A B C B C, merging (B, C) = 3
>>> state.words[0], {pair: change for pair, change in delta.items() if change}
([0, 3, 3], {1: -3, 3: 3, 21: -3, 33: 3})
"""

from __future__ import annotations

from array import array
from collections import defaultdict
from collections.abc import Callable, MutableMapping, Sequence
from typing import Any, Generic, TypeVar

__all__ = ["WordMerger", "add_word", "WORD_IDS", "COPY_FROM"]

#: What a symbol is (``str`` for the textbook path, ``bytes`` for byte-level
#: BPE): here only stored and returned, so anything.
S = TypeVar("S")

#: Word ids in the compact index: 4 bytes each (up to 4 billion words).
WORD_IDS = "I"

#: A word with more occurrences of the left symbol than this is rewritten
#: into a new list rather than edited in place (see ``merge_word``).
COPY_FROM = 8


def add_word(where: MutableMapping[int, Any], pair: int, w: int) -> None:
    """Note in a compact index that word ``w`` has ``pair``: a lone id is
    kept as the int itself (most pairs late in training are in one word
    only), a second one makes an array."""
    ids = where.get(pair)
    if ids is None:
        where[pair] = w
    elif isinstance(ids, int):
        if ids != w:
            where[pair] = array(WORD_IDS, (ids, w))
    else:
        ids.append(w)


class WordMerger(Generic[S]):
    """Words as symbol ids, the pair counts and the pair -> words index, and
    the round loop of an incremental trainer (``learn``); a subclass fills
    the counts and adds the heap that picks the best pair (``pop_best``) and
    the merge that makes the new symbol and calls ``merge_word`` (``merge``).

    ``symbols[i]`` is the symbol of id ``i``, ``words[w]`` holds the symbol
    ids of word ``w`` and ``freqs[w]`` its count; ``counts[pair]`` is the
    weighted count of every pair present; ``width`` is above every id a run
    will make (the base symbols plus one per merge); ``where[pair]`` is a
    superset of the words that contain the pair (ids are added eagerly,
    removed lazily): a set per pair, or the compact form of ``add_word``
    when ``compact_index`` is true.
    """

    def __init__(
        self, symbols: list[S], words: list[list[int]], freqs: list[int], width: int, *, compact_index: bool = False
    ) -> None:
        self.symbols: list[S] = symbols
        self.words = words
        self.freqs = freqs
        self.width = width
        self.where: MutableMapping[int, Any] = {} if compact_index else defaultdict(set)
        self.compact_index = compact_index
        self.counts: dict[int, int] = {}

    def pop_best(self) -> int | None:
        """Remove and return the pair to merge next, or None when none is left."""
        raise NotImplementedError  # pragma: no cover - every trainer has its own

    def merge(self, pair: int) -> None:
        """Join ``pair`` in every word that has it and correct the counts."""
        raise NotImplementedError  # pragma: no cover - every trainer has its own

    def pair_of(self, pair: int) -> tuple[S, S]:
        """The two symbols of a pair id."""
        left, right = divmod(pair, self.width)
        return self.symbols[left], self.symbols[right]

    def learn(
        self, num_merges: int, min_frequency: int = 1, progress: Callable[[int], object] | None = None
    ) -> list[tuple[S, S]]:
        """Up to ``num_merges`` merges, best pair first, stopping silently
        when no pair is left or the best occurs fewer than ``min_frequency``
        times; ``progress(1)`` after each merge."""
        merges: list[tuple[S, S]] = []
        for _ in range(num_merges):  # V rounds, each O(changes * log H)
            pair = self.pop_best()
            if pair is None or self.counts[pair] < min_frequency:
                break
            merges.append(self.pair_of(pair))
            self.merge(pair)
            if progress is not None:
                progress(1)
        return merges

    def pop_words(self, pair: int) -> Sequence[int]:
        """The ids of the words indexed under ``pair``, in word order, each
        once, and the pair taken out of the index. O(k log k) for k ids."""
        ids = self.where.pop(pair)
        if isinstance(ids, int):
            return (ids,)
        return sorted(set(ids) if self.compact_index else ids)

    def merge_word(
        self,
        w: int,
        left: int,
        right: int,
        joined: int,
        delta: defaultdict[int, int],
        gained: dict[int, int] | None = None,
    ) -> None:
        """Rewrite word ``w`` left to right, exactly like
        ``words.merge_symbols``, and add to ``delta`` how the neighbouring
        pairs' counts change; note the new pairs in the index and, when
        ``gained`` is given (with the set index only), the first word where
        each appeared (the "first" tie rule needs it). ``list.count`` and
        ``list.index`` find the occurrences at C speed, so the Python loop
        runs once per occurrence of ``left``, not once per symbol.

        At each joined occurrence ``... P [L R] N ...``, weighted by the
        word's count: (P, L) and (R, N) are lost, (P, LR) and (LR, N) are
        gained. Because the word is rewritten from the left, P is already the
        *rewritten* symbol and N is still the original one, and that makes
        overlaps come out right. Worked cases, merging (B, C):

        - ``A B C``     -> ``A BC``:     (A, B) -1, (A, BC) +1.
        - ``A B C D``   -> ``A BC D``:   also (C, D) -1, (BC, D) +1.
        - ``A B C B C`` -> ``A BC BC``: the first join sees N = B:
          (C, B) -1, (BC, B) +1; the second sees P = BC, the symbol just
          made: (BC, B) -1 (cancelling the +1), (BC, BC) +1. Net: (A, B),
          (C, B) lost; (A, BC), (BC, BC) gained, as a recount gives.

        Merging (a, a) in a run, which overlaps itself:

        - ``a a a a``   -> ``aa aa``: the first join sees N = a: (a, a) -1
          (the middle occurrence, which can no longer join), (aa, a) +1; the
          second sees P = aa: (aa, a) -1, (aa, aa) +1. The merged pair's own
          count is left to the caller to delete: no occurrence survives a
          merge.
        - ``a a a``     -> ``aa a``:     (aa, a) +1 stays.

        A stale index entry (the word lost the pair in an earlier round) finds
        no occurrence and changes nothing.
        """
        word, freq, width, where, compact = self.words[w], self.freqs[w], self.width, self.where, self.compact_index
        todo = word.count(left)  # occurrences of L not yet looked at
        # Few joins (the usual case): edit the list in place, each ``del``
        # shifting the tail in C. Many: copy into a new list instead, so that
        # a long run such as 10,000 spaces costs O(len), not O(len * joins).
        out: list[int] | None = [] if todo > COPY_FROM else None
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
                prev = word[j - 1] if j else None  # P: already rewritten
                nxt = word[j + 1] if j + 1 < len(word) else None  # N: still the original
                pos = j + 1
            else:
                out += word[start:j]
                prev = out[-1] if out else None
                nxt = word[j + 2] if j + 2 < len(word) else None
                out.append(joined)
                start = pos = j + 2
            # The two neighbours, P then N, written out rather than looped
            # over: this runs once per joined occurrence, the hot path.
            if prev is not None:
                delta[prev * width + left] -= freq
                new = prev * width + joined
                delta[new] += freq
                if compact:
                    add_word(where, new, w)
                else:
                    where[new].add(w)
                    if gained is not None:
                        gained.setdefault(new, w)
            if nxt is not None:
                delta[right * width + nxt] -= freq
                new = joined * width + nxt
                delta[new] += freq
                if compact:
                    add_word(where, new, w)
                else:
                    where[new].add(w)
                    if gained is not None:
                        gained.setdefault(new, w)
        if out is not None and start:
            self.words[w] = out + word[start:]
