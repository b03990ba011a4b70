"""Chapter 04's checks: updating pair counts after a merge instead of recounting.

What this adds to ``runner``: words where a merge changes its neighbours'
counts (``A B C B C``, runs of ``a``), ``recount_deltas``, the reference
that recounts a word before and after the merge, and the rule every
incremental update is held to: equal to a full recount, with no zero
entries. The corpora are chapter 02's.

Then the pair -> words index (``index_words``, ``merge_in_index``) and the
instruments that tell a local trainer from a recount by counting what it
does, not how long it takes: ``TracedWords`` records which word ids are
read, ``TracedFreq`` the arithmetic done with a word's frequency (a pair
count update), ``TracedSymbol`` the comparisons of a symbol (a scan).
``measure_work`` trains on corpora with more and more words that no merge
involves: a trainer that works locally pays for them once, when it builds
its index; a recount pays again in every round.

Last, the check of notebook 04's "your turn", the heap's lazy deletion on
its own: ``pop_best`` discards out-of-date entries until one is current.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable, Mapping, MutableSequence, Sequence
from typing import Any

from bpe_lab.core.corpora import TEXTBOOK_CORPUS
from bpe_lab.core.symbols import Corpus, Pair
from bpe_lab.core.train import count_pairs
from bpe_lab.core.train_fast import learn_merges
from bpe_lab.core.words import merge_symbols
from bpe_lab.grading.check.instruments import FLAT, TracedWords, Words, measure_work
from bpe_lab.grading.check.runner import call, compare, fail, passed, rng, run_cases, short, split
from bpe_lab.grading.check.training import corpus_cases

__all__ = [
    "recount_deltas",
    "check_pair_deltas",
    "check_merge_and_update",
    "Index",
    "index_words",
    "merge_in_index",
    "check_build_index",
    "check_merge_indexed",
    "check_train_indexed",
    "Heap",
    "popped_best",
    "check_pop_best",
]


def recount_deltas(symbols: tuple[str, ...], pair: Pair) -> dict[Pair, int]:
    """Reference: recount the word before and after, keep what changed.

    >>> recount_deltas(("A", "B", "C"), ("B", "C")) == {("A", "B"): -1, ("B", "C"): -1, ("A", "BC"): 1}
    True
    """
    before, after = count_pairs({symbols: 1}), count_pairs({merge_symbols(symbols, pair): 1})
    changes = {p: after.get(p, 0) - before.get(p, 0) for p in {**before, **after}}
    return {p: d for p, d in changes.items() if d}


def check_pair_deltas(fn: Callable[[tuple[str, ...], Pair], dict[Pair, int]]) -> None:
    """``fn(symbols, pair) -> {pair: change}``: how merging ``pair`` in one word
    (frequency 1) changes its pair counts; unchanged pairs left out."""
    fixed: list[tuple[tuple[str, ...], Pair]] = [
        (("A", "B", "C"), ("B", "C")),
        (("A", "B", "C", "B", "C"), ("B", "C")),
        (("a", "a", "a", "a"), ("a", "a")),
        (("a", "a", "a"), ("a", "a")),
        (("l", "o", "w", "</w>"), ("e", "s")),
    ]
    generator = rng()
    randoms = [
        (
            tuple(generator.choice("ab") for _ in range(generator.randint(2, 8))),
            (generator.choice("ab"), generator.choice("ab")),
        )
        for _ in range(20)
    ]
    verdict = compare(
        recount_deltas, _deltas_hint, same=lambda got, expected: isinstance(got, Mapping) and dict(got) == expected
    )
    run_cases("pair_deltas", fn, fixed + randoms, verdict)


def _deltas_hint(expected: dict[Pair, int], got: object, symbols: tuple[str, ...], pair: Pair) -> str:
    if isinstance(got, Mapping) and {p: d for p, d in got.items() if d} == expected:
        return ": leave out pairs whose count does not change"
    return ""


def check_merge_and_update(fn: Callable[..., tuple[Corpus, dict[Pair, int]]]) -> None:
    """``fn(corpus, counts, pair) -> (corpus, counts)``: after the merge, the
    counts must equal a full recount of the merged corpus (no zero entries)."""
    cases = [(c, count_pairs(c), p) for c in corpus_cases(rng()) for p in list(count_pairs(c))[:3]]
    run_cases(
        "merge_and_update",
        fn,
        cases,
        _update_verdict,
        shown=lambda corpus, counts, pair: f"{short(corpus, 60)}, ..., {pair}",
    )


def _update_verdict(got: Any, corpus: Corpus, counts: dict[Pair, int], pair: Pair) -> str | None:
    expected_corpus = {merge_symbols(s, pair): f for s, f in corpus.items()}
    if not (isinstance(got, tuple) and len(got) == 2):
        return f"return a tuple (corpus, counts), got {short(got)}"
    new_corpus, new_counts = got
    if dict(new_corpus) != expected_corpus:
        return f"the merged corpus should be {short(expected_corpus)}, got {short(new_corpus)}"
    recount = count_pairs(expected_corpus)
    if dict(new_counts) != recount:
        return _update_hint(recount, dict(new_counts))
    return None


def _update_hint(recount: dict[Pair, int], got: dict[Pair, int]) -> str:
    zeros = [p for p, c in got.items() if c == 0]
    if zeros:
        return f"delete pairs whose count drops to 0, such as {zeros[0]}"
    for pair in {**recount, **got}:
        if recount.get(pair) != got.get(pair):
            return (
                f"pair {pair}: a recount gives {recount.get(pair)}, your update gives {got.get(pair)}: "
                "add each changed word's pair_deltas times its frequency"
            )
    return "the counts differ from a recount"


# ------------------------------------------------ the pair -> words index

#: pair -> the ids of the words that contain it
Index = dict[Pair, set[int]]


def index_words(words: Sequence[tuple[tuple[str, ...], int]]) -> tuple[dict[Pair, int], Index]:
    """Reference for ``build_index``: the weighted pair counts, and for each
    pair the set of ids (positions in ``words``) of the words holding it.

    >>> index_words([(("a", "b", "a", "b"), 2), (("b", "a"), 1)])
    ({('a', 'b'): 4, ('b', 'a'): 3}, {('a', 'b'): {0}, ('b', 'a'): {0, 1}})
    """
    counts: dict[Pair, int] = {}
    index: Index = {}
    for i, (symbols, freq) in enumerate(words):
        for pair in zip(symbols, symbols[1:]):
            counts[pair] = counts.get(pair, 0) + freq
            index.setdefault(pair, set()).add(i)
    return counts, index


def merge_in_index(
    words: MutableSequence[tuple[tuple[str, ...], int]], counts: dict[Pair, int], index: Index, pair: Pair
) -> set[Pair]:
    """Reference for ``merge_indexed``: merge ``pair`` in the words that
    ``index[pair]`` lists, and only those, correcting ``counts`` and
    ``index`` in place (the worked ``A B C`` cases are ``recount_deltas``);
    returns the pairs whose count changed (a trainer pushes them on its heap).

    >>> words = [(("A", "B", "C"), 2), (("C", "A"), 1)]
    >>> counts, index = index_words(words)
    >>> sorted(merge_in_index(words, counts, index, ("B", "C")))
    [('A', 'B'), ('A', 'BC'), ('B', 'C')]
    >>> words, counts, index
    ([(('A', 'BC'), 2), (('C', 'A'), 1)], {('C', 'A'): 1, ('A', 'BC'): 2}, {('C', 'A'): {1}, ('A', 'BC'): {0}})
    """
    changed_pairs: set[Pair] = set()
    for i in sorted(index.get(pair, ())):
        symbols, freq = words[i]
        merged = merge_symbols(symbols, pair)
        before, after = set(zip(symbols, symbols[1:])), set(zip(merged, merged[1:]))
        for changed, delta in recount_deltas(symbols, pair).items():
            counts[changed] = counts.get(changed, 0) + delta * freq
            if counts[changed] == 0:
                del counts[changed]
            changed_pairs.add(changed)
        for gone in before - after:
            index[gone].discard(i)
            if not index[gone]:
                del index[gone]
        for new in after - before:
            index.setdefault(new, set()).add(i)
        words[i] = (merged, freq)
    return changed_pairs


def _index_cases(generator: random.Random) -> list[tuple[Words, Pair]]:
    """(words, pair to merge): the worked cases, then chapter 02's corpora."""
    fixed: list[tuple[Words, Pair]] = [
        ([(("A", "B", "C", "B", "C"), 2), (("B", "C"), 3), (("A", "B"), 1)], ("B", "C")),
        ([(("a", "a", "a", "a"), 1), (("b", "a", "a"), 2), (("a", "b"), 4)], ("a", "a")),
    ]
    corpora = [list(corpus.items()) for corpus in corpus_cases(generator)]
    return fixed + [(words, pair) for words in corpora for pair in list(index_words(words)[0])[:2]]


def check_build_index(fn: Callable[[Words], tuple[dict[Pair, int], Index]]) -> None:
    """``fn(words) -> (counts, index)``: the weighted pair counts, and
    ``index[pair]``, the set of ids of the words that contain ``pair``."""
    cases = [(words,) for words, _ in _index_cases(rng())]
    run_cases("build_index", fn, cases, _build_verdict, shown=lambda words: short(words, 80))


def _build_verdict(got: Any, words: Words) -> str | None:
    counts, index = index_words(words)
    if not (isinstance(got, tuple) and len(got) == 2 and all(isinstance(g, Mapping) for g in got)):
        return f"return a tuple (counts, index) of two dicts, got {short(got)}"
    got_counts, got_index = dict(got[0]), dict(got[1])
    if got_counts != counts:
        return (
            f"the counts should be {short(counts)}, got {short(got_counts)}: weight each pair by its word's frequency"
        )
    for pair, ids in index.items():
        value = got_index.get(pair)
        if isinstance(value, (list, tuple)) and set(value) == ids:
            return f"index[{pair}] is {short(value)}: make it a set, so a word that holds the pair twice is listed once"
        if value != ids:
            hint = (
                "store word ids (positions in words), not the words"
                if value and not set(value) <= set(range(len(words)))
                else "list every word that contains the pair, by its position in words"
            )
            return f"index[{pair}] should be {short(ids)}, got {short(value)}: {hint}"
    extra = [p for p in got_index if p not in index]
    return f"index has pairs no word contains, such as {extra[0]}" if extra else None


def _state(words: Words, pair: Pair) -> tuple[Words, dict[Pair, int], Index, Pair]:
    """Fresh (words, counts, index, pair) for one merge: the learner changes them."""
    counts, index = index_words(words)
    return list(words), counts, index, pair


def check_merge_indexed(fn: Callable[..., object]) -> None:
    """``fn(words, counts, index, pair) -> changed`` merges ``pair`` in place:
    only in the words ``index[pair]`` lists, reading no other word, with
    ``counts`` and ``index`` left as ``build_index`` of the merged words
    would give; ``changed`` is the set of pairs whose count changed."""
    number = 0
    for words, pair in _index_cases(rng()):
        _, counts, index, _ = _state(words, pair)
        traced = TracedWords(words)
        got = call(fn, "merge_indexed", traced, counts, index, pair)
        message = _merge_verdict(got, words, pair, traced, counts, index)
        if message is not None:
            fail(f"merge_indexed({short(words, 60)}, counts, index, {pair})", message)
        number += 1
    passed("merge_indexed", number)


def _merge_verdict(
    got: object, words: Words, pair: Pair, traced: TracedWords, counts: dict[Pair, int], index: Index
) -> str | None:
    expected_words, expected_counts, expected_index, _ = _state(words, pair)
    changed = merge_in_index(expected_words, expected_counts, expected_index, pair)
    _, start_index = index_words(words)
    if traced.plain() == words and isinstance(got, tuple):
        return "change words, counts and index in place: building new ones costs O(all pairs) every merge"
    listed = start_index.get(pair, set())
    stray = sorted({*traced.read, *traced.written} - listed)
    if stray:
        return (
            f"you read word {stray[0]} {words[stray[0]][0]}, which does not contain {pair}: loop over index[pair] "
            "only; scanning every word is the recount's O(N) per merge"
        )
    if traced.plain() != expected_words:
        wrong = next(i for i, w in enumerate(traced.plain()) if w != expected_words[i])
        return (
            f"word {wrong} should become {expected_words[wrong]}, got {short(traced.plain()[wrong])}: "
            "set words[i] = (merged symbols, freq)"
        )
    if counts != expected_counts:
        return _update_hint(expected_counts, dict(counts))
    wrong_index = _index_hint(expected_index, index)
    if wrong_index is not None:
        return wrong_index
    if not (isinstance(got, (set, frozenset)) and got == changed):
        return (
            f"return the set of pairs whose count changed, {short(changed)}, got {short(got)}: "
            "the trainer pushes each of them on its heap again"
        )
    return None


def _index_hint(expected: Index, got: Index) -> str | None:
    empty = [p for p, ids in got.items() if not ids]
    if empty:
        return f"index[{empty[0]}] is empty: delete a pair once no word holds it"
    for p in {**expected, **got}:
        want, have = expected.get(p, set()), set(got.get(p, ()))
        if have - want:
            i = min(have - want)
            return f"word {i} no longer contains {p}: remove {i} from index[{p}]"
        if want - have:
            i = min(want - have)
            return f"word {i} now contains {p}: add {i} to index[{p}] (a new pair needs a new set)"
    return None


# ------------------------------------------------ the trainer, and how its work grows


def check_train_indexed(fn: Callable[[Words, int], list[Pair]]) -> None:
    """``fn(words, num_merges) -> merges``, ties to the greatest pair (as
    ``learn_merges(..., tie_break="lexicographic")``), with work per word that
    does not grow with the number of merges."""
    generator = rng()
    cases = [(list(c.items()), n) for c in corpus_cases(generator) for n in (generator.randint(1, 12),)]
    cases.insert(0, (list(split(TEXTBOOK_CORPUS).items()), 10))
    verdict = compare(
        lambda words, n: learn_merges(dict(words), n, tie_break="lexicographic"),
        _train_hint,
        same=lambda got, expected: isinstance(got, list) and [tuple(p) for p in got] == expected,
    )
    for words, n in cases:
        message = verdict(call(fn, "train_indexed", list(words), n), words, n)
        if message is not None:
            fail(f"train_indexed({short(words, 60)}, {n})", message)
    growth = measure_work(lambda words, merges: call(fn, "train_indexed", words, merges))
    if sum(growth.values()) > FLAT:
        fail("train_indexed on corpora 200 and 400 words larger, with 10 and 40 merges", _growth_hint(growth))
    passed("train_indexed", len(cases) + 1)


def _train_hint(expected: list[Pair], got: object, words: Words, n: int) -> str:
    if not isinstance(got, list):
        return ": return the list of merges"
    got = [tuple(p) for p in got]
    rounds = next((r for r, (a, b) in enumerate(zip(got, expected)) if a != b), None)
    if rounds is None:
        return f": expected {len(expected)} merges, got {len(got)}: stop only when no pair is left"
    corpus = dict(words)
    for pair in expected[:rounds]:
        corpus = {merge_symbols(s, pair): f for s, f in corpus.items()}
    counts = count_pairs(corpus)
    if counts.get(got[rounds]) == counts[expected[rounds]]:
        return (
            f": round {rounds + 1}: {got[rounds]} and {expected[rounds]} tie with count {counts[expected[rounds]]}; "
            "ties go to the greatest pair (max(tied)): heapq pops the smallest entry, so push "
            "(-count, descending(pair), pair) with the key given above"
        )
    return (
        f": round {rounds + 1}: {got[rounds]} has count {counts.get(got[rounds], 0)}, {expected[rounds]} has "
        f"{counts[expected[rounds]]}: skip a heap entry whose count is out of date (lazy deletion), and push a pair "
        "again whenever its count changes"
    )


def _growth_hint(growth: dict[str, float]) -> str:
    # a recount also scans (it merges every word), so name the recount first, then reads, then a scan
    worst = next(
        (k for k in ("arithmetic", "reads", "comparisons") if growth[k] > FLAT / 2), max(growth, key=growth.__getitem__)
    )
    unit, cause = {
        "reads": ("word reads", "you read every word of words in every round"),
        "arithmetic": ("pair count updates", "you recount the pairs of every word in every round"),
        "comparisons": ("symbol comparisons", "you scan every word for the pair in every round"),
    }[worst]
    return (
        f"30 more merges cost {growth[worst]:.0f} more {unit} per word, even for words no merge touches: {cause}. "
        "Build the index once, then merge only the words in index[pair] (merge_indexed), "
        "and take the best pair from a heap"
    )


# ------------------------------------------------- notebook 04's "your turn": lazy deletion

#: A heapq min-heap of ``(-count, pair)`` entries: the highest count on top.
Heap = list[tuple[int, Pair]]


def popped_best(heap: Heap, counts: Mapping[Pair, int]) -> tuple[Pair | None, Heap]:
    """The reference for ``pop_best`` on a copy of ``heap``: pop entries until
    one is current (its count is the pair's count now, and above 0), pop that
    one too; its pair (None when the heap runs out) and what is left."""
    heap = list(heap)
    while heap:
        negated, pair = heapq.heappop(heap)
        if -negated == counts.get(pair, 0) > 0:
            return pair, heap
    return None, heap


def _heap(*entries: tuple[int, Pair]) -> Heap:
    heap = list(entries)
    heapq.heapify(heap)
    return heap


def _pop_best_cases(generator: random.Random) -> list[tuple[Heap, dict[Pair, int]]]:
    """Worked by hand: a current top; the textbook's round 2, where (w, e)
    was pushed with 8 and merging (e, s) left it 2, so (l, o) 7 is the best;
    a merged pair (count 0) on top; only out-of-date entries (None); an empty
    heap; two current pairs tied (heapq pops the smaller pair); then random
    heaps where each pair was pushed with every count it had."""
    es, we, lo, ab, bc = ("e", "s"), ("w", "e"), ("l", "o"), ("a", "b"), ("b", "c")
    fixed: list[tuple[Heap, dict[Pair, int]]] = [
        (_heap((-9, es), (-7, lo)), {es: 9, lo: 7}),
        (_heap((-8, we), (-7, lo), (-2, we)), {we: 2, lo: 7}),
        (_heap((-9, es), (-3, ab)), {ab: 3}),
        (_heap((-4, ab), (-5, bc)), {ab: 1}),
        ([], {ab: 1}),
        (_heap((-3, bc), (-3, ab)), {ab: 3, bc: 3}),
    ]
    randoms = []
    for _ in range(20):
        counts: dict[Pair, int] = {}
        entries = []
        for _ in range(generator.randint(1, 8)):
            pair, count = (generator.choice("abc"), generator.choice("abc")), generator.randint(1, 9)
            entries.append((-count, pair))
            counts[pair] = count
        for pair in list(counts):
            if generator.random() < 0.3:
                del counts[pair]  # merged: its entries are all out of date
        randoms.append((_heap(*entries), counts))
    return fixed + randoms


def check_pop_best(fn: Callable[[Heap, dict[Pair, int]], Pair | None]) -> None:
    """``fn(heap, counts) -> pair or None``: pop the out-of-date entries off
    ``heap`` (a heapq list of ``(-count, pair)``), then the first current
    one, and return its pair; None when the heap runs out. The heap is
    checked afterwards too: what was discarded must be gone."""
    cases = _pop_best_cases(rng())
    for heap, counts in cases:
        shown = f"pop_best({heap!r}, {short(counts, 100)})"
        expected, left = popped_best(heap, counts)
        mine = list(heap)
        got = call(fn, "pop_best", mine, dict(counts))
        if got != expected or sorted(mine) != sorted(left):
            fail(shown, _pop_best_message(expected, left, got, mine, heap, counts))
    passed("pop_best", len(cases))


def _pop_best_message(
    expected: Pair | None, left: Heap, got: object, mine: Heap, heap: Heap, counts: Mapping[Pair, int]
) -> str:
    if got == expected:
        return (
            f"the pair is right, but the heap is left as {short(sorted(mine))}, expected {sorted(left)}: "
            "heapq.heappop every entry you look at, the out-of-date ones and the one you return"
        )
    said = f"expected {expected}, got {short(got)}"
    if isinstance(got, tuple) and len(got) == 2 and isinstance(got[0], int):
        return said + ": return the pair, not the heap entry (-count, pair)"
    if not heap:
        return said + ": the heap is empty: return None"
    top_count, top = -heap[0][0], heap[0][1]
    if got == top and top_count != counts.get(top, 0):
        now = counts.get(top, 0)
        return (
            said + f": the top entry says {top} has {top_count}, but its count is now {now}: the entry is out of "
            "date, so discard it and look at the next"
        )
    if got is not None and got not in counts:
        return said + f": {got} is no longer in counts (merged): its entries are out of date"
    if isinstance(got, tuple) and not any(-n == counts.get(p, 0) for n, p in heap if p == got):
        return said + ": an entry is current only when its count equals counts[pair]"
    if expected is None:
        return said + ": every entry is out of date, so the heap runs out: return None"
    return said + ": take entries from the top (heapq.heappop), the highest count first"
