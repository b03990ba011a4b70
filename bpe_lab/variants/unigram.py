"""How a word is segmented: a Unigram language model instead of rank replay (notebook 06).

What it adds over ``core.encode``: BPE replays its merges, so each word has
exactly one segmentation and no probability; a Unigram language model (Kudo,
2018) gives every piece a probability and a segmentation the product of its
pieces' probabilities. So it can pick the most probable segmentation
(Viterbi), list the n best, and *sample* one (subword regularisation).

Two levels:

- the teaching functions of the notebook, on words with ``</w>`` and
  probabilities you give (``token_counts`` of a BPE segmentation turned into
  ``unigram_logprobs``): ``viterbi``, ``segmentations``,
  ``segmentation_probs``;
- ``Unigram``, the model as SentencePiece uses it: text, not words. Every
  space becomes ``▁`` and one ``▁`` goes in front
  (``variants.sentencepiece``), then one lattice over the whole string is
  searched (a piece with an inner ``▁`` could span two words; trained
  pieces never have one, as they come from single words). Its pieces and
  log-probabilities come from ``train_unigram`` (``variants.unigram_train``:
  EM and pruning) or from you.

A character that no piece covers is an error naming it (no ``<unk>``): every
character of ``train_unigram``'s corpus is kept as a piece, so this happens
only on new text, and then it is better to know.

>>> viterbi("lowest", {"low": -1.0, "est</w>": -1.0, "l": -3.0, "o": -3.0, "w": -3.0,
...                    "e": -3.0, "s": -3.0, "t": -3.0, "</w>": -3.0})
(['low', 'est</w>'], -2.0)
>>> model = Unigram({"▁": -2.0, "a": -2.0, "b": -2.0, "▁a": -1.5, "ab": -1.0, "▁ab": -2.5})
>>> model.encode("ab a")
['▁ab', '▁a']
>>> model.nbest("ab", 3)
[(['▁ab'], -2.5), (['▁', 'ab'], -3.0), (['▁a', 'b'], -3.5)]
"""

from __future__ import annotations

import heapq
import math
import random
from collections.abc import Collection, Mapping, Sequence

from bpe_lab.core.symbols import END_OF_WORD, Pair, check_int
from bpe_lab.core.words import word_to_symbols
from bpe_lab.variants.granularity import segment_words
from bpe_lab.variants.sentencepiece import SPACE

__all__ = [
    "Unigram",
    "Lattice",
    "sp_normalize",
    "build_lattice",
    "logaddexp",
    "forward_logprobs",
    "token_counts",
    "unigram_logprobs",
    "viterbi",
    "segmentations",
    "segmentation_probs",
]

#: A lattice: for each start position, the (end, piece) of every piece that starts there.
Lattice = list[list[tuple[int, str]]]


def sp_normalize(text: str) -> str:
    """The string a ``Unigram`` segments: every space becomes ``▁`` and one
    ``▁`` goes in front (SentencePiece's ``add_dummy_prefix``); empty text
    stays empty. Other white space is kept as it is.

    >>> sp_normalize("low  lower")
    '▁low▁▁lower'
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if SPACE in text:
        raise ValueError(f"text contains {SPACE!r} itself, so its spaces could not be told apart from it")
    return SPACE + text.replace(" ", SPACE) if text else ""


def build_lattice(s: str, pieces: Collection[str], longest: int) -> Lattice:
    """Every piece of ``pieces`` that occurs in ``s``, by start position:
    O(n * L) dictionary look-ups for n characters and pieces of at most L
    characters (a trie would share the prefixes; at L = 16 slicing is fast
    enough).

    >>> build_lattice("abc", {"a", "b", "c", "ab", "bc"}, 2)
    [[(1, 'a'), (2, 'ab')], [(2, 'b'), (3, 'bc')], [(3, 'c')]]
    """
    n = len(s)
    return [[(j, s[i:j]) for j in range(i + 1, min(n, i + longest) + 1) if s[i:j] in pieces] for i in range(n)]


def logaddexp(a: float, b: float) -> float:
    """``log(exp(a) + exp(b))`` without overflow; -inf is log(0).

    >>> math.isclose(logaddexp(math.log(1), math.log(3)), math.log(4))
    True
    """
    if a == -math.inf:
        return b
    if b == -math.inf:
        return a
    top = max(a, b)
    return top + math.log1p(math.exp(-abs(a - b)))


def forward_logprobs(lattice: Lattice, scores: Mapping[str, float], alpha: float = 1.0) -> list[float]:
    """``fwd[j]``: the log of the summed weights of all paths from 0 to j,
    a path weighing ``exp(alpha * sum of its scores)``; ``fwd[n]`` is the
    log-probability of the whole string, summed over its segmentations (for
    alpha = 1). O(edges) = O(n * L)."""
    fwd = [-math.inf] * (len(lattice) + 1)
    fwd[0] = 0.0
    for i, edges in enumerate(lattice):
        if fwd[i] == -math.inf:
            continue
        for j, piece in edges:
            fwd[j] = logaddexp(fwd[j], fwd[i] + alpha * scores[piece])
    return fwd


class Unigram:
    """A Unigram language model over pieces: ``pieces`` maps each piece to
    its log-probability (any finite score works: SentencePiece's and Hugging
    Face's Unigram models take the same table).

    ``encode`` is Viterbi (the most probable segmentation), ``nbest`` the n
    most probable, ``sample`` draws one at random (subword regularisation);
    all three first turn the text into SentencePiece's form
    (``sp_normalize``), and ``decode`` turns it back.

    Tie-break (as SentencePiece and Hugging Face): of two equally probable
    ways to reach a position, the one whose last piece *starts earlier*
    (so is longer) wins.

    >>> model = Unigram({"▁": -1.0, "a": -1.0, "▁a": -2.0, "aa": -2.0})
    >>> model.encode("aa")
    ['▁', 'aa']
    >>> model.nbest("aa", 5)
    [(['▁', 'aa'], -3.0), (['▁a', 'a'], -3.0), (['▁', 'a', 'a'], -3.0)]
    >>> model.sample("aa", alpha=0.5, rng=7)
    ['▁', 'aa']
    >>> model.decode(model.encode("a aa"))
    'a aa'
    """

    def __init__(self, pieces: Mapping[str, float]) -> None:
        if not isinstance(pieces, Mapping) or not pieces:
            raise ValueError("pieces must be a non-empty mapping piece -> log-probability")
        for piece, score in pieces.items():
            if not isinstance(piece, str) or not piece:
                raise ValueError(f"every piece must be a non-empty str, got {piece!r}")
            if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
                raise ValueError(f"the score of {piece!r} must be a finite number, got {score!r}")
        self._scores = {piece: float(score) for piece, score in pieces.items()}
        self.longest = max(map(len, self._scores))

    @property
    def pieces(self) -> dict[str, float]:
        """Piece -> log-probability (a copy)."""
        return dict(self._scores)

    def __len__(self) -> int:
        return len(self._scores)

    def __repr__(self) -> str:
        return f"Unigram(<{len(self._scores)} pieces>)"

    def score(self, pieces: Sequence[str]) -> float:
        """The log-probability of one segmentation: the sum of its pieces'."""
        return sum(self._scores[piece] for piece in pieces)

    def _lattice(self, s: str, text: str) -> Lattice:
        lattice = build_lattice(s, self._scores, self.longest)
        reach = [False] * (len(s) + 1)
        reach[0] = True
        for i, edges in enumerate(lattice):
            if reach[i]:
                for j, _ in edges:
                    reach[j] = True
        if not reach[-1]:
            stuck = max(i for i, ok in enumerate(reach) if ok)
            raise ValueError(
                f"cannot encode {text!r}: no piece covers {s[stuck]!r} there; add it to the pieces "
                "(train_unigram keeps every character of its corpus)"
            )
        return lattice

    def segment(self, s: str) -> tuple[list[str], float]:
        """Viterbi on ``s`` as it is (no ``▁`` added): the most probable
        segmentation and its log-probability.

        ``best[j]`` is the best score of a path from 0 to j; every piece
        starting at i is tried from ``best[i]``, left to right, and replaces
        the best path to its end only if strictly better (the tie-break
        above). O(n * L) for n characters and pieces of at most L.
        """
        lattice = self._lattice(s, s)
        best = [-math.inf] * (len(s) + 1)
        back = [-1] * (len(s) + 1)
        best[0] = 0.0
        for i, edges in enumerate(lattice):  # i increasing: the earliest start wins a tie
            if back[i] < 0 and i > 0:
                continue  # i cannot be reached
            for j, piece in edges:
                candidate = best[i] + self._scores[piece]
                if back[j] < 0 or candidate > best[j]:
                    best[j], back[j] = candidate, i
        pieces, j = [], len(s)
        while j > 0:
            pieces.append(s[back[j] : j])
            j = back[j]
        return pieces[::-1], best[len(s)]

    def encode(self, text: str) -> list[str]:
        """The most probable segmentation of ``text`` (Viterbi, ``segment``).

        Raises ValueError naming a character no piece covers."""
        s = sp_normalize(text)
        return self.segment(s)[0] if s else []

    def nbest(self, text: str, n: int) -> list[tuple[list[str], float]]:
        """The ``n`` most probable segmentations of ``text`` with their
        log-probabilities, best first (fewer if there are fewer); the first
        is ``encode``'s.

        Viterbi keeping the n best paths to every position instead of one:
        ``top[j]`` holds (score, start of the last piece, which of
        ``top[start]`` it extends). O(n * L * N log N) for the N best."""
        check_int(n, "n", minimum=1)
        s = sp_normalize(text)
        if not s:
            return [([], 0.0)]
        lattice = self._lattice(s, text)
        top: list[list[tuple[float, int, int]]] = [[(0.0, -1, -1)]] + [[] for _ in s]
        incoming: list[list[tuple[float, int, int]]] = [[] for _ in range(len(s) + 1)]
        for i, edges in enumerate(lattice):
            # top[i] is final once every piece ending at i has been offered (they all start before i).
            top[i] = top[i] or _best_n(incoming[i], n)
            for j, piece in edges:
                incoming[j].extend((score + self._scores[piece], i, k) for k, (score, _, _) in enumerate(top[i]))
        top[len(s)] = _best_n(incoming[len(s)], n)
        results = []
        for k, (score, _, _) in enumerate(top[len(s)]):
            pieces, j = [], len(s)
            while j > 0:
                _, i, k = top[j][k]
                pieces.append(s[i:j])
                j = i
            results.append((pieces[::-1], score))
        return results

    def sample(self, text: str, *, alpha: float = 1.0, rng: random.Random | int | None = None) -> list[str]:
        """One segmentation of ``text`` drawn at random with probability
        proportional to ``p(segmentation) ** alpha`` (Kudo's subword
        regularisation: alpha near 0 is almost uniform, a large alpha is
        almost always Viterbi). ``rng`` is a ``random.Random``, a seed, or
        None for a fresh generator.

        Forward filtering, backward sampling: ``fwd[j]`` sums the weights of
        all paths to j; from the end, the last piece (i, j) is drawn with
        probability ``exp(fwd[i] + alpha * score - fwd[j])``, then the piece
        before it, and so on: an exact draw in O(n * L), without listing
        the (exponentially many) segmentations."""
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 <= alpha < math.inf:
            raise ValueError(f"alpha must be a number >= 0, got {alpha!r}")
        generator = rng if isinstance(rng, random.Random) else random.Random(rng)
        s = sp_normalize(text)
        if not s:
            return []
        lattice = self._lattice(s, text)
        fwd = forward_logprobs(lattice, self._scores, alpha)
        ending: list[list[tuple[int, str]]] = [[] for _ in range(len(s) + 1)]
        for i, edges in enumerate(lattice):
            for j, piece in edges:
                ending[j].append((i, piece))
        pieces, j = [], len(s)
        while j > 0:
            u, total = generator.random(), 0.0
            choices = [(i, piece) for i, piece in ending[j] if fwd[i] > -math.inf]
            for i, piece in choices:
                total += math.exp(fwd[i] + alpha * self._scores[piece] - fwd[j])
                if u < total:
                    break
            # (rounding can leave total a hair under 1: then the last choice is taken)
            pieces.append(piece)
            j = i
        return pieces[::-1]

    def decode(self, pieces: Sequence[str]) -> str:
        """Join the pieces, turn ``▁`` back into spaces, drop the one in front."""
        text = "".join(pieces).replace(SPACE, " ")
        return text[1:] if text.startswith(" ") else text


def _best_n(candidates: list[tuple[float, int, int]], n: int) -> list[tuple[float, int, int]]:
    # Stable: among equal scores the earlier start (then the better prefix) comes first, as in Viterbi.
    return heapq.nsmallest(n, candidates, key=lambda c: -c[0])


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
