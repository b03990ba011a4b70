"""Generated cases for chapter 04: incremental pair counts and the pair index.

What this adds over ``generators`` (the table and the shared inputs): the
inputs of chapter 04's tasks, and for an update made in place a call that
sends back its arguments too, so that generated cases are judged as the
fixed ones are:
``(lambda w, c, i: (merge_indexed(w, c, i, pair), w, c, i))(words, counts, index)``.
The references are ``check.complexity``'s (``recount_deltas``,
``index_words``, ``merge_in_index``) and ``learn_merges``; what a kernel-side
instrument measures (``check.work_growth``, the reads of ``merge_indexed``)
stays with the fixed cases: a value cannot show it.

>>> from bpe_lab.grading.cases.generators import GENERATORS
>>> call = GENERATORS["04_complexity_merge_indexed"].source
>>> call("merge_indexed", ([(("a", "b"), 2)], {("a", "b"): 2}, {("a", "b"): {0}}, ("a", "b")))[:58]
"(lambda w, c, i: (merge_indexed(w, c, i, ('a', 'b')), w, c"
"""

from __future__ import annotations

import random
from typing import Any

from bpe_lab.core.train import count_pairs
from bpe_lab.core.train_fast import learn_merges
from bpe_lab.core.words import merge_symbols
from bpe_lab.grading.cases.generators import Args, Corpus, Pair, draw, random_corpus, random_symbols_and_pair, register
from bpe_lab.grading.check.complexity import index_words, merge_in_index, recount_deltas

__all__: list[str] = []  # it registers its generators, and exports nothing


Words = list[tuple[tuple[str, ...], int]]


@register("04_complexity_pair_deltas", recount_deltas)
def _pair_deltas_inputs(rng: random.Random) -> list[Args]:
    return draw(lambda: random_symbols_and_pair(rng))


def _merge_and_update(corpus: Corpus, counts: dict[Pair, int], pair: Pair) -> tuple[Corpus, dict[Pair, int]]:
    """Merge ``pair`` everywhere and correct ``counts`` word by word."""
    counts, merged = dict(counts), {}
    for symbols, freq in corpus.items():
        if pair in zip(symbols, symbols[1:]):
            for p, change in recount_deltas(symbols, pair).items():
                counts[p] = counts.get(p, 0) + change * freq
                if counts[p] == 0:
                    del counts[p]
            symbols = merge_symbols(symbols, pair)
        merged[symbols] = freq
    return merged, counts


@register("04_complexity_merge_and_update", _merge_and_update)
def _merge_and_update_inputs(rng: random.Random) -> list[Args]:
    def make() -> Args | None:
        corpus = random_corpus(rng)
        counts = count_pairs(corpus)
        return (corpus, counts, rng.choice(sorted(counts))) if counts else None

    return draw(make)


def _words(rng: random.Random) -> Words:
    """2-5 distinct words of symbols (runs of ``a`` repeat a pair), some ending in ``</w>``."""
    words: dict[tuple[str, ...], int] = {}
    for _ in range(rng.randint(2, 5)):
        symbols = tuple(rng.choice(["a", "a", "b", "c", "ab"]) for _ in range(rng.randint(1, 6)))
        words[symbols + (("</w>",) if rng.random() < 0.7 else ())] = rng.randint(1, 9)
    return list(words.items())


@register("04_complexity_build_index", index_words)
def _build_index_inputs(rng: random.Random) -> list[Args]:
    return draw(lambda: (_words(rng),))


def _merge_indexed(words: Words, counts: dict[Any, int], index: dict[Any, set[int]], pair: Any) -> Args:
    """The changed pairs, then words, counts and index as the merge leaves them."""
    words, counts, index = list(words), dict(counts), {p: set(ids) for p, ids in index.items()}
    return merge_in_index(words, counts, index, pair), words, counts, index


def _merge_indexed_call(name: str, args: Args) -> str:
    words, counts, index, pair = args
    return f"(lambda w, c, i: ({name}(w, c, i, {pair!r}), w, c, i))({words!r}, {counts!r}, {index!r})"


@register("04_complexity_merge_indexed", _merge_indexed, _merge_indexed_call)
def _merge_indexed_inputs(rng: random.Random) -> list[Args]:
    def make() -> Args | None:
        words = _words(rng)
        counts, index = index_words(words)
        return (words, counts, index, rng.choice(sorted(counts))) if counts else None

    return draw(make)


def _train_indexed(words: Words, num_merges: int) -> list[Any]:
    return learn_merges(dict(words), num_merges, tie_break="lexicographic")


@register("04_complexity_train_indexed", _train_indexed)
def _train_indexed_inputs(rng: random.Random) -> list[Args]:
    return draw(lambda: (_words(rng), rng.randint(1, 12)))
