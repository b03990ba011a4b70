"""Training BPE the textbook way (Sennrich et al., 2016).

The input is a word -> frequency table, not running text. Every word starts as
its characters plus an end-of-word marker (``</w>``), so ``est`` at the end of
``newest`` can become a different token from ``est`` inside ``estate``. Then,
round after round:

1. count every adjacent pair of symbols, each occurrence weighted by the
   frequency of its word;
2. take the most frequent pair (ties broken by a fixed rule);
3. record it as a merge and rewrite every word with the pair joined.

The ordered list of merges is the model. This module recounts every pair every
round, O(N) per round for N symbol occurrences, so O(N * V) for V merges; that
is the version to read. Notebook 04 measures it against an incremental trainer.

>>> corpus = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
>>> train_bpe(corpus, 5)
[('e', 's'), ('es', 't'), ('est', '</w>'), ('l', 'o'), ('lo', 'w')]
>>> train_bpe(corpus, 1, tie_break="lexicographic")
[('t', '</w>')]

subword-nmt (``learn_bpe.py``, version 0.2 on) glues ``</w>`` to the last
character (``l o w</w>``), takes the greatest of tied pairs, and stops when
the best pair occurs fewer than ``--min-frequency`` (default 2) times:

>>> train_bpe(corpus, 4, glue_end_of_word=True, tie_break="lexicographic", min_frequency=2)
[('s', 't</w>'), ('e', 'st</w>'), ('l', 'o'), ('w', 'est</w>')]
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bpe_lab.core.options import TrainKeywords, TrainOptions
from bpe_lab.core.symbols import TIE_BREAKS, Corpus, Pair, TieBreak, check_choice, check_int, report_short
from bpe_lab.core.words import corpus_from_word_freq, merge_symbols, short_reason

if TYPE_CHECKING:  # pandas is imported only when a table is asked for
    import pandas as pd
    from typing_extensions import Unpack

__all__ = [
    "Round",
    "Trace",
    "count_pairs",
    "pick_pair",
    "training_corpus",
    "train_trace",
    "train_bpe",
]


def count_pairs(corpus: Mapping[tuple[str, ...], int]) -> dict[Pair, int]:
    """Weighted counts of adjacent symbol pairs, in the order first met.

    Every occurrence counts, overlapping ones too: ``a a a a`` holds
    ``(a, a)`` three times, although merging can join only two of them.

    >>> count_pairs({("a", "a", "a", "a"): 1, ("b", "a"): 2})
    {('a', 'a'): 3, ('b', 'a'): 2}
    """
    counts: dict[Pair, int] = {}
    for symbols, freq in corpus.items():
        for pair in zip(symbols, symbols[1:]):
            counts[pair] = counts.get(pair, 0) + freq
    return counts


def pick_pair(counts: Mapping[Pair, int], tie_break: TieBreak = "first") -> tuple[Pair, int, tuple[Pair, ...]]:
    """The winning pair, its count, and the other pairs tied with it.

    ``counts`` must be in scan order (as ``count_pairs`` returns it) for the
    "first" rule to mean the pair met first.
    """
    check_choice(tie_break, "tie_break", TIE_BREAKS)
    if not counts:
        raise ValueError("there are no pairs to pick from")
    best_count = max(counts.values())
    tied = [pair for pair, count in counts.items() if count == best_count]
    winner = tied[0] if tie_break == "first" else max(tied)
    return winner, best_count, tuple(p for p in tied if p != winner)


@dataclass(frozen=True)
class Round:
    """One training round: every pair count, the winner and the result."""

    number: int
    pair_counts: dict[Pair, int]
    pair: Pair
    count: int
    ties: tuple[Pair, ...]
    corpus_after: Corpus

    @property
    def new_symbol(self) -> str:
        return self.pair[0] + self.pair[1]


@dataclass(frozen=True)
class Trace:
    """Everything a training run did, for tables, widgets and exercises:
    the split corpus, every round, the options it ran with and the number
    of merges asked for."""

    initial: Corpus
    rounds: tuple[Round, ...]
    options: TrainOptions = TrainOptions()
    requested: int = 0

    @property
    def tie_break(self) -> TieBreak:
        return self.options.tie_break

    @property
    def end_of_word(self) -> str | None:
        return self.options.end_of_word

    @property
    def start_of_word(self) -> str | None:
        return self.options.start_of_word

    @property
    def glue_end_of_word(self) -> bool:
        return self.options.glue_end_of_word

    @property
    def min_frequency(self) -> int:
        return self.options.min_frequency

    @property
    def stopped_early(self) -> bool:
        """True when fewer merges were possible than ``requested``."""
        return len(self.rounds) < self.requested

    @property
    def merges(self) -> list[Pair]:
        return [r.pair for r in self.rounds]

    @property
    def base_symbols(self) -> list[str]:
        """The starting vocabulary: every symbol of the split corpus, first seen first."""
        seen: dict[str, None] = {}
        for symbols in self.initial:
            seen.update(dict.fromkeys(symbols))
        return list(seen)

    def corpus_before(self, number: int) -> Corpus:
        """The corpus as round ``number`` (1-based) found it."""
        if not 1 <= number <= len(self.rounds):
            raise IndexError(f"round {number} does not exist; this trace has rounds 1..{len(self.rounds)}")
        return self.initial if number == 1 else self.rounds[number - 2].corpus_after

    @property
    def final(self) -> Corpus:
        return self.rounds[-1].corpus_after if self.rounds else self.initial

    def to_frame(self) -> pd.DataFrame:
        """One row per round: the pair, its count, the new symbol, the pairs
        tied with it, and the vocabulary size after the round."""
        import pandas as pd

        base = len(self.base_symbols)
        rows = [
            {
                "round": r.number,
                "pair": r.pair,
                "count": r.count,
                "new symbol": r.new_symbol,
                "tied with": ", ".join(map(repr, r.ties)),  # quoted: a pair of "," and "</w>" stays readable
                "vocab size": base + r.number,
            }
            for r in self.rounds
        ]
        columns = ["round", "pair", "count", "new symbol", "tied with", "vocab size"]
        return pd.DataFrame(rows, columns=columns).set_index("round")


def _rounds(corpus: Corpus, num_merges: int, tie_break: TieBreak, min_frequency: int = 1) -> Iterator[Round]:
    for number in range(1, num_merges + 1):
        counts = count_pairs(corpus)
        if not counts:
            return
        pair, count, ties = pick_pair(counts, tie_break)
        if count < min_frequency:  # subword-nmt: "no pair has frequency >= 2. Stopping"
            return
        corpus = {merge_symbols(symbols, pair): freq for symbols, freq in corpus.items()}
        yield Round(number, counts, pair, count, ties, corpus)


def training_corpus(
    word_freq: Mapping[str, int],
    num_merges: int,
    options: TrainOptions | None = None,
    **keywords: Unpack[TrainKeywords],
) -> tuple[Corpus, int]:
    """Check every argument a trainer takes; the split corpus and ``num_merges``.

    Shared by ``train_bpe``, ``train_trace`` and ``train_fast``, so all three
    reject a bad argument with the same message. The options come as
    ``options`` (already checked) or as keywords (``TrainOptions``' fields),
    not both.
    """
    num_merges = check_int(num_merges, "num_merges")
    options = _options(options, keywords)
    corpus = corpus_from_word_freq(
        word_freq,
        end_of_word=options.end_of_word,
        start_of_word=options.start_of_word,
        glue_end_of_word=options.glue_end_of_word,
    )
    return corpus, num_merges


def _options(options: TrainOptions | None, keywords: TrainKeywords) -> TrainOptions:
    if options is None:
        return TrainOptions.from_keywords(keywords)
    if not isinstance(options, TrainOptions):
        raise TypeError(f"options must be a TrainOptions, got {type(options).__name__}")
    if keywords:
        raise TypeError(f"give the options either as options= or as keywords, not both (got {', '.join(keywords)})")
    return options


def train_trace(word_freq: Mapping[str, int], num_merges: int, **keywords: Unpack[TrainKeywords]) -> Trace:
    """Train like ``train_bpe`` and keep every round (see ``Trace``); the
    keywords are ``train_bpe``'s.

    >>> trace = train_trace({"low": 5, "lower": 2, "newest": 6, "widest": 3}, 5)
    >>> [(r.pair, r.count) for r in trace.rounds][:2]
    [(('e', 's'), 9), (('es', 't'), 9)]
    >>> trace.rounds[0].ties
    (('s', 't'), ('t', '</w>'))
    >>> train_trace({"ab": 1}, 3, on_short="ignore").stopped_early
    True
    """
    options = TrainOptions.from_keywords(keywords)
    corpus, num_merges = training_corpus(word_freq, num_merges, options)
    rounds = tuple(_rounds(corpus, num_merges, options.tie_break, options.min_frequency))
    reason = short_reason(rounds[-1].corpus_after if rounds else corpus, options.min_frequency)
    report_short(num_merges, len(rounds), options.on_short, reason=reason)
    return Trace(corpus, rounds, options, num_merges)


def train_bpe(word_freq: Mapping[str, int], num_merges: int, **keywords: Unpack[TrainKeywords]) -> list[Pair]:
    """Learn up to ``num_merges`` merges from a word -> frequency table.

    Returns the merges in the order learned; that order is their priority
    when encoding. The keywords are the fields of ``TrainOptions`` (checked
    there, with their defaults): ``tie_break`` is "first" (the textbook rule)
    or "lexicographic" (see ``TIE_BREAKS``); ``end_of_word`` and
    ``start_of_word`` are the word markers; ``glue_end_of_word=True`` joins
    ``</w>`` to each word's last character; training stops once the best
    pair occurs fewer than ``min_frequency`` times. With "lexicographic" and
    ``min_frequency=2`` that is subword-nmt on the same word table
    (``tests/test_subword_nmt.py``; its words end at ASCII spaces only,
    ``word_frequencies``'s at any white space).
    If fewer merges are possible (every word became a single symbol, or no
    pair is frequent enough), training stops early and ``on_short`` says
    what happens: "warn" (the default; the warning says how many were
    learned and why), "raise" a ValueError, or "ignore" (compare the
    result's length with ``num_merges``).
    """
    options = TrainOptions.from_keywords(keywords)
    corpus, num_merges = training_corpus(word_freq, num_merges, options)
    # Keep only the pairs: each Round holds every pair count and the whole
    # corpus, so keeping them all (train_trace does) costs O(N) memory per round.
    merges, final = [], corpus
    for r in _rounds(corpus, num_merges, options.tie_break, options.min_frequency):
        merges.append(r.pair)
        final = r.corpus_after
    report_short(num_merges, len(merges), options.on_short, reason=short_reason(final, options.min_frequency))
    return merges
