"""Training a Unigram language model: start big, then EM and pruning (Kudo, 2018; notebook 06).

What it adds over ``variants.unigram``, whose ``Unigram`` takes its
log-probabilities as given: where they come from. BPE (``core.train``)
grows a vocabulary one merge at a time; Unigram training goes the other
way. It starts from far too many pieces and alternates

1. **EM** over all segmentations of every word: the E-step spreads each
   word's count over the pieces of its lattice, each in proportion to the
   probability of the paths through it (forward-backward, so *expected*
   counts, not Viterbi counts); the M-step makes the probabilities
   proportional to those counts. Each step can only lower the corpus loss
   ``-sum(count(w) * log P(w))``, P(w) summed over w's segmentations;
2. **pruning**: drop the pieces whose removal raises that loss least,
   keeping every single character so every word stays encodable, until
   ``shrink`` of them are left (0.75, as SentencePiece), and repeat until
   ``vocab_size`` are left.

Words are SentencePiece's: each gets a ``▁`` in front (unless it has one
already, as ``sp_words`` gives them), so ``Unigram.encode`` of running text
uses the pieces it was trained on.

>>> model = train_unigram({"low": 5, "lower": 2, "newest": 6, "widest": 3}, 14)
>>> len(model), [piece for piece in model.pieces if len(piece) > 1]
(14, ['▁low', '▁newest', '▁widest'])
>>> model.encode("lowest newer")
['▁low', 'e', 's', 't', '▁', 'n', 'e', 'w', 'e', 'r']
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from bpe_lab.core.symbols import ON_SHORT, OnShort, check_choice, check_int, report_short
from bpe_lab.variants.sentencepiece import SPACE
from bpe_lab.variants.unigram import Lattice, Unigram, build_lattice, forward_logprobs, logaddexp

__all__ = ["training_words", "seed_pieces", "em_step", "corpus_loss", "piece_losses", "prune", "train_unigram"]

#: The least expected count a piece keeps in EM: pieces are removed by
#: pruning only, so a trained model has exactly ``vocab_size`` of them.
_TINY = 1e-12


def training_words(word_freq: Mapping[str, int]) -> dict[str, int]:
    """The words Unigram trains on: ``▁`` in front of each (words that start
    with ``▁`` are kept as they are), counts added up where two coincide.

    Raises ValueError for an empty table, a word with white space (split the
    text first: ``word_frequencies``), or a count that is not a positive int.

    >>> training_words({"low": 5, "▁low": 1, "er": 2})
    {'▁low': 6, '▁er': 2}
    """
    if not isinstance(word_freq, Mapping):
        raise TypeError(f"word_freq must be a mapping word -> count, got {type(word_freq).__name__}")
    if not word_freq:
        raise ValueError("word_freq is empty: there is nothing to train on")
    words: dict[str, int] = {}
    for word, freq in word_freq.items():
        if not isinstance(word, str) or not word or any(ch.isspace() for ch in word):
            raise ValueError(f"every word must be a non-empty str without white space, got {word!r}")
        if isinstance(freq, bool) or not isinstance(freq, int) or freq <= 0:
            raise ValueError(f"the count of {word!r} must be a positive int, got {freq!r}")
        key = word if word.startswith(SPACE) else SPACE + word
        words[key] = words.get(key, 0) + freq
    return words


def seed_pieces(words: Mapping[str, int], seed_size: int, *, max_piece_length: int = 16) -> dict[str, float]:
    """The starting vocabulary: every character, plus the ``seed_size``
    substrings of 2 to ``max_piece_length`` characters with the greatest
    ``frequency * length`` (SentencePiece's ranking; ties: the one met
    first). Log-probabilities proportional to frequency. O(N * L) for N
    characters of distinct words.

    >>> seed = seed_pieces({"▁ab": 2, "▁b": 1}, 2)  # ▁ab: 2 * 3, then ▁a and ab: 2 * 2, ▁a met first
    >>> {piece: round(score, 3) for piece, score in seed.items()}
    {'a': -1.792, 'b': -1.386, '▁': -1.386, '▁ab': -1.792, '▁a': -1.792}
    """
    counts: dict[str, int] = {}
    for word, freq in words.items():
        for i in range(len(word)):
            for j in range(i + 1, min(len(word), i + max_piece_length) + 1):
                counts[word[i:j]] = counts.get(word[i:j], 0) + freq
    chars = sorted(piece for piece in counts if len(piece) == 1)
    longer = sorted((p for p in counts if len(p) > 1), key=lambda p: -counts[p] * len(p))[:seed_size]
    total = sum(counts[p] for p in chars + longer)
    return {p: math.log(counts[p] / total) for p in chars + longer}


def _backward(lattice: Lattice, scores: Mapping[str, float]) -> list[float]:
    """``bwd[i]``: log of the summed probability of all paths from i to the end."""
    bwd = [-math.inf] * (len(lattice) + 1)
    bwd[-1] = 0.0
    for i in range(len(lattice) - 1, -1, -1):
        for j, piece in lattice[i]:
            bwd[i] = logaddexp(bwd[i], scores[piece] + bwd[j])
    return bwd


def em_step(words: Mapping[str, int], pieces: Mapping[str, float]) -> tuple[dict[str, float], float]:
    """One EM iteration: the new log-probabilities, and the corpus loss
    (negative log-likelihood) of the *old* ones, so a run of steps shows the
    loss falling.

    E-step, per distinct word: forward ``fwd`` and backward ``bwd`` sums over
    its lattice; a piece from i to j is used with posterior probability
    ``exp(fwd[i] + log p + bwd[j] - log P(w))``, times the word's count.
    O(edges) = O(n * L) per word, so O(N * L) per iteration. M-step:
    ``p = expected count / all expected counts`` (maximum likelihood, which
    is what makes the loss monotone; SentencePiece uses a digamma-smoothed
    variant that drops rare pieces faster). No piece is dropped here: an
    expected count is at least 1e-12, which changes the loss by less than
    rounding does.
    """
    longest = max(map(len, pieces))
    expected = dict.fromkeys(pieces, 0.0)
    loss = 0.0
    for word, freq in words.items():
        lattice = build_lattice(word, pieces, longest)
        fwd, bwd = forward_logprobs(lattice, pieces), _backward(lattice, pieces)
        log_z = fwd[-1]
        if log_z == -math.inf:
            raise ValueError(f"{word!r} cannot be segmented with these pieces: some character of it is missing")
        loss -= freq * log_z
        for i, edges in enumerate(lattice):
            for j, piece in edges:
                expected[piece] += freq * math.exp(fwd[i] + pieces[piece] + bwd[j] - log_z)
    kept = {p: max(n, _TINY) for p, n in expected.items()}
    total = sum(kept.values())
    return {p: math.log(n / total) for p, n in kept.items()}, loss


def corpus_loss(words: Mapping[str, int], pieces: Mapping[str, float]) -> float:
    """``-sum(count(w) * log P(w))`` over the (``training_words``) words,
    each P(w) summed over all of w's segmentations: what EM lowers."""
    longest = max(map(len, pieces))
    return -sum(freq * forward_logprobs(build_lattice(w, pieces, longest), pieces)[-1] for w, freq in words.items())


def piece_losses(words: Mapping[str, int], pieces: Mapping[str, float]) -> dict[str, float]:
    """For every piece longer than one character: how much the corpus loss
    would rise if it were removed (the other probabilities held as they
    are; EM re-estimates them after pruning). Exact, not SentencePiece's
    Viterbi approximation: each word's ``P(w)`` is recomputed without the
    piece, for every piece in the word's lattice (the other words do not
    change).

    Sums run in plain probabilities, rescaled per word so that the full P(w)
    is 1 (every path covers all n characters, so multiplying each piece's
    probability by ``P(w) ** (-len / n)`` multiplies every path by
    ``1 / P(w)``), which keeps long words from underflowing. O(distinct
    pieces * edges) per word, about O(N * L^2) per pruning step.
    """
    longest = max(map(len, pieces))
    losses = {p: 0.0 for p in pieces if len(p) > 1}
    for word, freq in words.items():
        lattice = build_lattice(word, pieces, longest)
        per_char = -forward_logprobs(lattice, pieces)[-1] / len(word)
        edges = [[(j, p, math.exp(pieces[p] + per_char * (j - i))) for j, p in out] for i, out in enumerate(lattice)]
        for piece in {p for out in lattice for _, p in out if len(p) > 1}:
            z = _forward_without(edges, piece)
            losses[piece] += freq * -math.log(z) if z > 0 else math.inf
    return losses


def _forward_without(edges: list[list[tuple[int, str, float]]], skip: str) -> float:
    # The summed weight of the paths that do not use `skip`.
    fwd = [1.0] + [0.0] * len(edges)
    for i, out in enumerate(edges):
        if fwd[i]:
            for j, piece, weight in out:
                if piece != skip:
                    fwd[j] += fwd[i] * weight
    return fwd[-1]


def prune(words: Mapping[str, int], pieces: Mapping[str, float], keep: int) -> dict[str, float]:
    """The ``keep`` pieces left after removing those whose removal raises
    the loss least (``piece_losses``); single characters always stay.
    Tie-break among equal losses: the less probable piece goes first, then
    the lexicographically smaller. The kept scores are not renormalised (the
    next EM step does that).

    >>> words = {"▁ab": 3, "▁b": 1}
    >>> sorted(prune(words, seed_pieces(words, 10), 4))  # ▁ab, the frequent word, is the dearest to lose
    ['a', 'b', '▁', '▁ab']
    """
    losses = piece_losses(words, pieces)
    ranked = sorted(losses, key=lambda p: (losses[p], pieces[p], p))
    drop = set(ranked[: max(0, len(pieces) - keep)])
    return {p: score for p, score in pieces.items() if p not in drop}


def train_unigram(
    word_freq: Mapping[str, int],
    vocab_size: int,
    *,
    seed_size: int | None = None,
    max_piece_length: int = 16,
    shrink: float = 0.75,
    em_iterations: int = 2,
    on_short: OnShort = "warn",
) -> Unigram:
    """Train a Unigram model of at most ``vocab_size`` pieces on the words of
    ``word_freq`` (``▁`` put in front of each, see ``training_words``).

    Seed: every character plus the ``seed_size`` (default ``4 * vocab_size``)
    best substrings (``seed_pieces``). Then, until ``vocab_size`` pieces are
    left: ``em_iterations`` EM steps, and pruning to ``shrink`` of the
    pieces (never below ``vocab_size``); EM runs once more after the last
    pruning. The pieces come out most probable first.

    Raises ValueError for an empty corpus, a non-positive count, or a
    ``vocab_size`` smaller than the alphabet (the characters, ``▁`` among
    them, which are never pruned). When the seed has fewer pieces than
    ``vocab_size``, ``on_short`` ("warn", "raise", "ignore") says so.
    """
    check_int(vocab_size, "vocab_size", minimum=1)
    check_int(max_piece_length, "max_piece_length", minimum=1)
    check_int(em_iterations, "em_iterations", minimum=1)
    check_choice(on_short, "on_short", ON_SHORT)
    if isinstance(shrink, bool) or not isinstance(shrink, (int, float)) or not 0 < shrink < 1:
        raise ValueError(f"shrink must be a number between 0 and 1, got {shrink!r}")
    words = training_words(word_freq)
    alphabet = {ch for word in words for ch in word}
    if vocab_size < len(alphabet):
        raise ValueError(
            f"vocab_size {vocab_size} is smaller than the alphabet: the corpus has {len(alphabet)} characters "
            f"({SPACE!r} among them), and each stays a piece so that every word can be encoded"
        )
    seed_size = check_int(4 * vocab_size if seed_size is None else seed_size, "seed_size")
    pieces = seed_pieces(words, seed_size, max_piece_length=max_piece_length)
    if len(pieces) < vocab_size:
        reason = "the corpus has no more characters and substrings to start from"
        report_short(vocab_size, len(pieces), on_short, what="pieces", reason=reason)
    while True:
        for _ in range(em_iterations):  # O(N * L) each
            pieces, _ = em_step(words, pieces)
        if len(pieces) <= vocab_size:
            break
        pieces = prune(words, pieces, max(vocab_size, int(len(pieces) * shrink)))  # O(N * L^2)
    return Unigram(dict(sorted(pieces.items(), key=lambda item: (-item[1], item[0]))))
