"""How a word is segmented: a Unigram language model instead of rank replay (notebook 06).

What it adds over ``core.encode``: BPE replays its merges, so each word has
exactly one segmentation and no probability; a Unigram language model gives
every token a probability and picks the segmentation with the highest
product (``viterbi``), and it can score every other segmentation too
(``segmentation_probs``). A teaching version: real Unigram learns its
probabilities with EM while pruning a large vocabulary; here they come from
token counts you give (``token_counts`` of a BPE segmentation, for example).

>>> viterbi("lowest", {"low": -1.0, "est</w>": -1.0, "l": -3.0, "o": -3.0, "w": -3.0,
...                    "e": -3.0, "s": -3.0, "t": -3.0, "</w>": -3.0})
(['low', 'est</w>'], -2.0)
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence

from bpe_lab.core.symbols import END_OF_WORD, Pair
from bpe_lab.core.train import word_to_symbols
from bpe_lab.variants.granularity import segment_words

__all__ = ["token_counts", "unigram_logprobs", "viterbi", "segmentations", "segmentation_probs"]


def token_counts(
    word_freq: Mapping[str, int], merges: Sequence[Pair], *, end_of_word: str | None = END_OF_WORD
) -> dict[str, int]:
    """How often each token occurs when the corpus is encoded with ``merges``
    (weighted by word frequency), most frequent first."""
    counts: dict[str, int] = {}
    for word, tokens in segment_words(word_freq, merges, end_of_word=end_of_word).items():
        for token in tokens:
            counts[token] = counts.get(token, 0) + word_freq[word]
    return dict(sorted(counts.items(), key=lambda item: -item[1]))


def unigram_logprobs(counts: Mapping[str, int]) -> dict[str, float]:
    """Natural-log probability of each token, ``log(count / total)``: the
    unigram model's parameters estimated from token counts.

    >>> unigram_logprobs({"a": 1, "b": 3})["b"] == math.log(0.75)
    True
    """
    total = sum(counts.values())
    if total <= 0:
        raise ValueError("the counts must add up to more than zero")
    return {token: math.log(n / total) for token, n in counts.items() if n > 0}


def viterbi(
    word: str, logprobs: Mapping[str, float], *, end_of_word: str | None = END_OF_WORD
) -> tuple[list[str], float]:
    """The segmentation of ``word`` (plus ``end_of_word``) into tokens of
    ``logprobs`` with the highest total log-probability, and that total.

    Dynamic programming over the n + 1 cut positions: ``best[j]`` is the best
    score of the first j symbols, tried from every earlier cut ``i``; O(n^2)
    look-ups. Raises ValueError when no segmentation exists (a symbol is
    missing from the vocabulary).
    """
    symbols = word_to_symbols(word, end_of_word=end_of_word)
    n = len(symbols)
    best: list[tuple[float, int]] = [(0.0, 0)] + [(-math.inf, 0)] * n
    for j in range(1, n + 1):
        for i in range(j):
            piece = "".join(symbols[i:j])
            if piece in logprobs and best[i][0] + logprobs[piece] > best[j][0]:
                best[j] = (best[i][0] + logprobs[piece], i)
    if best[n][0] == -math.inf:
        raise ValueError(f"{word!r} cannot be segmented: some symbol of it is not in the vocabulary")
    pieces, j = [], n
    while j > 0:
        i = best[j][1]
        pieces.append("".join(symbols[i:j]))
        j = i
    return pieces[::-1], best[n][0]


def segmentations(
    word: str, vocab: Collection[str], *, end_of_word: str | None = END_OF_WORD, limit: int = 16
) -> list[list[str]]:
    """Every way to cut ``word`` (plus ``end_of_word``) into tokens of
    ``vocab``. There can be up to 2^(n-1) of them, so words longer than
    ``limit`` symbols are refused.

    >>> segmentations("ab", {"a", "b", "ab", "b</w>", "</w>"})
    [['a', 'b', '</w>'], ['a', 'b</w>'], ['ab', '</w>']]
    """
    symbols = word_to_symbols(word, end_of_word=end_of_word)
    if len(symbols) > limit:
        raise ValueError(f"{word!r} has {len(symbols)} symbols; enumerating is limited to {limit}")

    def cuts(start: int) -> list[list[str]]:
        if start == len(symbols):
            return [[]]
        out: list[list[str]] = []
        for end in range(start + 1, len(symbols) + 1):
            piece = "".join(symbols[start:end])
            if piece in vocab:
                out.extend([piece] + rest for rest in cuts(end))
        return out

    return cuts(0)


def segmentation_probs(
    word: str, logprobs: Mapping[str, float], *, end_of_word: str | None = END_OF_WORD, top: int | None = None
) -> list[tuple[list[str], float]]:
    """Every segmentation of ``word`` with its probability under the unigram
    model, normalised so they sum to 1, most probable first (at most ``top``)."""
    options = segmentations(word, logprobs, end_of_word=end_of_word)
    if not options:
        raise ValueError(f"{word!r} cannot be segmented: some symbol of it is not in the vocabulary")
    scores = [sum(logprobs[p] for p in pieces) for pieces in options]
    peak = max(scores)
    weights = [math.exp(s - peak) for s in scores]
    total = sum(weights)
    ranked = sorted(zip(options, (w / total for w in weights)), key=lambda item: -item[1])
    return ranked[:top] if top is not None else ranked
