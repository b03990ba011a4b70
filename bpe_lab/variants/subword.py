"""BPE's neighbours, small enough to run in a notebook cell (notebook 06).

Three things textbook BPE does one way that other tokenizers do another:

- **Where the word boundary goes.** subword-nmt appends ``</w>`` to each word
  and throws the spaces away; SentencePiece turns every space into ``▁``
  (U+2581) and keeps it as an ordinary symbol at the *start* of the next
  piece, so decoding gives the text back exactly, spaces and all
  (``sp_pieces``, ``sp_encode``, ``sp_decode``).
- **How a pair is chosen in training.** BPE merges the most *frequent* pair;
  WordPiece merges the pair with the best score
  ``count(a b) / (count(a) * count(b))``, which favours pairs whose parts
  rarely occur apart (``wordpiece_scores``).
- **How a word is segmented.** BPE replays its merges, so each word has
  exactly one segmentation and no probability; a Unigram language model
  gives every token a probability and picks the segmentation with the
  highest product (``viterbi``), and it can score every other segmentation
  too (``segmentation_probs``).

These are teaching versions: real WordPiece adds ``##`` to word-inner pieces
and real Unigram learns its probabilities with EM while pruning a large
vocabulary; here the probabilities come from token counts you give.

>>> sp_pieces("Hello  world")
['▁Hello', '▁', '▁world']
>>> sp_decode(sp_encode("Hello  world", []))
'Hello  world'
>>> corpus = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
>>> max(wordpiece_scores(corpus).items(), key=lambda item: item[1])
(('i', 'd'), 0.3333333333333333)
>>> viterbi("lowest", {"low": -1.0, "est</w>": -1.0, "l": -3.0, "o": -3.0, "w": -3.0,
...                    "e": -3.0, "s": -3.0, "t": -3.0, "</w>": -3.0})
(['low', 'est</w>'], -2.0)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import regex

from bpe_lab.core.encode import merge_ranks, replay_symbols
from bpe_lab.core.symbols import END_OF_WORD, Pair
from bpe_lab.core.train import corpus_from_word_freq, count_pairs, word_to_symbols
from bpe_lab.variants.granularity import segment_words

__all__ = [
    "SPACE",
    "sp_pieces",
    "sp_word_freq",
    "sp_encode",
    "sp_decode",
    "wordpiece_scores",
    "token_counts",
    "unigram_logprobs",
    "viterbi",
    "segmentations",
    "segmentation_probs",
]

#: SentencePiece's visible space, U+2581 LOWER ONE EIGHTH BLOCK.
SPACE = "\u2581"

# Every character Python's str.isspace() accepts (all lie below U+3001), so
# that pieces agree with the trainer's own white-space check.
_WHITE = regex.escape("".join(ch for ch in map(chr, range(0x3001)) if ch.isspace()))
# A piece: an optional ▁ and a run of other non-white-space characters; or a
# ▁ on its own (the second of two spaces); or one other white-space character.
_PIECE = regex.compile(f"▁?[^▁{_WHITE}]+|▁|[{_WHITE}]")


def sp_pieces(text: str) -> list[str]:
    r"""Cut text SentencePiece-style: every space becomes ``▁``, one ``▁`` is
    put in front of the text (so the first word looks like the others), and
    the text is cut before each ``▁``. Other white space (new lines, tabs)
    becomes pieces of its own. Joining the pieces and turning ``▁`` back
    into spaces gives ``" " + text``.

    >>> sp_pieces("a  b\nc")
    ['▁a', '▁', '▁b', '\n', 'c']
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if SPACE in text:
        raise ValueError(f"text contains {SPACE!r} itself, so its spaces could not be told apart from it")
    return _PIECE.findall(SPACE + text.replace(" ", SPACE))


def sp_word_freq(text: str) -> dict[str, int]:
    """``{piece: count}`` of the pieces BPE trains on (white space other than
    spaces is left out: it never merges). Train with ``end_of_word=None``:
    the ``▁`` inside the pieces already marks where words start."""
    counts: dict[str, int] = {}
    for piece in sp_pieces(text):
        if not piece.isspace():
            counts[piece] = counts.get(piece, 0) + 1
    return counts


def sp_encode(text: str, merges: Sequence[Pair]) -> list[str]:
    """Encode text piece by piece with rank replay; white-space pieces stay
    as they are. Nothing of the text is dropped, so ``sp_decode`` restores it."""
    ranks = merge_ranks(merges, end_of_word=None)
    symbols: list[str] = []
    for piece in sp_pieces(text):
        symbols.extend([piece] if piece.isspace() else replay_symbols(tuple(piece), ranks))
    return symbols


def sp_decode(symbols: Sequence[str]) -> str:
    """Join symbols, turn every ``▁`` back into a space and drop the one
    space ``sp_pieces`` put in front: the exact original text."""
    if isinstance(symbols, str) or not all(isinstance(s, str) for s in symbols):
        raise TypeError("sp_decode() needs a list of symbol strings")
    text = "".join(symbols).replace(SPACE, " ")
    return text[1:] if text.startswith(" ") else text


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


def segmentations(word: str, vocab, *, end_of_word: str | None = END_OF_WORD, limit: int = 16) -> list[list[str]]:
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
        out = []
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
