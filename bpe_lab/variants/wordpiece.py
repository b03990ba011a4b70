"""How a pair is chosen: WordPiece's score instead of BPE's count (notebook 06).

What it adds over ``core.train.count_pairs``: BPE merges the most *frequent*
pair; WordPiece merges the pair with the best score
``count(a b) / (count(a) * count(b))``, which favours pairs whose parts
rarely occur apart. A teaching version: real WordPiece also marks
word-inner pieces with ``##`` and encodes by longest match
(``core.encode.longest_match``).

>>> corpus = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
>>> max(wordpiece_scores(corpus).items(), key=lambda item: item[1])
(('i', 'd'), 0.3333333333333333)
"""

from __future__ import annotations

from collections.abc import Mapping

from bpe_lab.core.symbols import END_OF_WORD, Pair
from bpe_lab.core.train import corpus_from_word_freq, count_pairs

__all__ = ["wordpiece_scores"]


def wordpiece_scores(word_freq: Mapping[str, int], *, end_of_word: str | None = END_OF_WORD) -> dict[Pair, float]:
    """WordPiece's first-round score of every adjacent pair,
    ``count(a b) / (count(a) * count(b))`` with every count weighted by word
    frequency, in the order the pairs are first met (BPE would rank them by
    ``count(a b)`` alone)."""
    corpus = corpus_from_word_freq(word_freq, end_of_word=end_of_word)
    singles: dict[str, int] = {}
    for symbols, freq in corpus.items():
        for symbol in symbols:
            singles[symbol] = singles.get(symbol, 0) + freq
    return {(a, b): n / (singles[a] * singles[b]) for (a, b), n in count_pairs(corpus).items()}
