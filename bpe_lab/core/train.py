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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bpe_lab.core.symbols import (
    END_OF_WORD,
    ON_SHORT,
    TIE_BREAKS,
    Corpus,
    OnShort,
    Pair,
    TieBreak,
    check_choice,
    check_int,
    check_markers,
    report_short,
)

if TYPE_CHECKING:  # pandas is imported only when a table is asked for
    import pandas as pd

__all__ = [
    "Round",
    "Trace",
    "word_to_symbols",
    "corpus_from_word_freq",
    "count_pairs",
    "merge_symbols",
    "pick_pair",
    "training_corpus",
    "short_reason",
    "train_trace",
    "train_bpe",
]


def word_to_symbols(
    word: str,
    *,
    end_of_word: str | None = END_OF_WORD,
    start_of_word: str | None = None,
    glue_end_of_word: bool = False,
) -> tuple[str, ...]:
    """Split a word into its starting symbols: its characters, with the
    end-of-word marker appended (``</w>``, as in the code listing of Sennrich
    et al., 2016) and/or the start-of-word marker prepended (``▁``,
    SentencePiece style). ``glue_end_of_word=True`` joins the marker to the
    last character instead, as subword-nmt does since its version 0.2.

    >>> word_to_symbols("low")
    ('l', 'o', 'w', '</w>')
    >>> word_to_symbols("low", glue_end_of_word=True)
    ('l', 'o', 'w</w>')
    >>> word_to_symbols("low", end_of_word=None, start_of_word="▁")
    ('▁', 'l', 'o', 'w')
    """
    _check_word(word, end_of_word, start_of_word)
    symbols = tuple(word)
    if start_of_word:
        symbols = (start_of_word,) + symbols
    if end_of_word and glue_end_of_word:
        symbols = symbols[:-1] + (symbols[-1] + end_of_word,)
    elif end_of_word:
        symbols = symbols + (end_of_word,)
    return symbols


def _check_word(word: object, end_of_word: str | None, start_of_word: str | None) -> None:
    if not isinstance(word, str):
        raise TypeError(f"words must be strings, got {word!r}")
    if not word:
        raise ValueError("the corpus contains an empty word")
    if any(ch.isspace() for ch in word):
        raise ValueError(f"word {word!r} contains white space; split text into words first (word_frequencies)")
    for marker in (end_of_word, start_of_word):
        if marker and marker in word:
            raise ValueError(f"word {word!r} contains the word marker {marker!r}; choose another marker")


def corpus_from_word_freq(
    word_freq: Mapping[str, int],
    *,
    end_of_word: str | None = END_OF_WORD,
    start_of_word: str | None = None,
    glue_end_of_word: bool = False,
) -> Corpus:
    """Validate a word -> frequency table and split every word into symbols.

    Raises ValueError naming the problem: an empty corpus, a count that is not
    a positive integer, an empty word, a word with white space or a marker.
    """
    check_markers(end_of_word, start_of_word)
    if not isinstance(word_freq, Mapping):
        raise TypeError(f"word_freq must be a dict of word -> count, got {type(word_freq).__name__}")
    if not word_freq:
        raise ValueError("the corpus is empty: give at least one word with a positive count")
    corpus: Corpus = {}
    for word, freq in word_freq.items():
        if check_int(freq, f"the count of {word!r}", minimum=None) <= 0:
            raise ValueError(f"the count of {word!r} must be positive, got {freq}")
        symbols = word_to_symbols(
            word, end_of_word=end_of_word, start_of_word=start_of_word, glue_end_of_word=glue_end_of_word
        )
        corpus[symbols] = freq
    return corpus


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


def merge_symbols(symbols: tuple[str, ...], pair: Pair) -> tuple[str, ...]:
    """Join every occurrence of ``pair`` in ``symbols``, scanning left to
    right; an occurrence that overlaps one already joined is skipped.

    >>> merge_symbols(("a", "a", "a", "a"), ("a", "a"))
    ('aa', 'aa')
    >>> merge_symbols(("a", "a", "a"), ("a", "a"))
    ('aa', 'a')
    """
    left, right = pair
    out: list[str] = []
    i = 0
    while i < len(symbols):
        if i + 1 < len(symbols) and symbols[i] == left and symbols[i + 1] == right:
            out.append(left + right)
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return tuple(out)


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
    """Everything a training run did, for tables, widgets and exercises."""

    initial: Corpus
    rounds: tuple[Round, ...]
    tie_break: TieBreak
    end_of_word: str | None
    start_of_word: str | None = None
    requested: int = field(default=0)
    glue_end_of_word: bool = False
    min_frequency: int = 1

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
    *,
    tie_break: TieBreak = "first",
    end_of_word: str | None = END_OF_WORD,
    start_of_word: str | None = None,
    on_short: OnShort = "warn",
    glue_end_of_word: bool = False,
    min_frequency: int = 1,
) -> tuple[Corpus, int]:
    """Check every argument a trainer takes; the split corpus and ``num_merges``.

    Shared by ``train_bpe``, ``train_trace`` and ``train_fast``, so all three
    reject a bad argument with the same message. ``glue_end_of_word=True``
    joins ``</w>`` to each word's last character (subword-nmt since 0.2).
    """
    num_merges = check_int(num_merges, "num_merges")
    check_choice(tie_break, "tie_break", TIE_BREAKS)
    check_choice(on_short, "on_short", ON_SHORT)
    check_int(min_frequency, "min_frequency", minimum=1)
    if glue_end_of_word is not False and not end_of_word:
        raise ValueError("glue_end_of_word=True needs an end_of_word marker to glue")
    corpus = corpus_from_word_freq(
        word_freq, end_of_word=end_of_word, start_of_word=start_of_word, glue_end_of_word=glue_end_of_word
    )
    return corpus, num_merges


def short_reason(final: Mapping[tuple[str, ...], int], min_frequency: int) -> str:
    """Why training stopped before ``num_merges``: every word is one symbol,
    or (with ``min_frequency`` above 1) no pair is frequent enough."""
    if any(len(symbols) > 1 for symbols in final):
        return f"no pair occurs min_frequency={min_frequency} times"
    return "every word is now a single symbol"


def train_trace(
    word_freq: Mapping[str, int],
    num_merges: int,
    *,
    tie_break: TieBreak = "first",
    end_of_word: str | None = END_OF_WORD,
    start_of_word: str | None = None,
    on_short: OnShort = "warn",
    glue_end_of_word: bool = False,
    min_frequency: int = 1,
) -> Trace:
    """Train like ``train_bpe`` and keep every round (see ``Trace``).

    >>> trace = train_trace({"low": 5, "lower": 2, "newest": 6, "widest": 3}, 5)
    >>> [(r.pair, r.count) for r in trace.rounds][:2]
    [(('e', 's'), 9), (('es', 't'), 9)]
    >>> trace.rounds[0].ties
    (('s', 't'), ('t', '</w>'))
    >>> train_trace({"ab": 1}, 3, on_short="ignore").stopped_early
    True
    """
    corpus, num_merges = training_corpus(
        word_freq,
        num_merges,
        tie_break=tie_break,
        end_of_word=end_of_word,
        start_of_word=start_of_word,
        on_short=on_short,
        glue_end_of_word=glue_end_of_word,
        min_frequency=min_frequency,
    )
    rounds = tuple(_rounds(corpus, num_merges, tie_break, min_frequency))
    reason = short_reason(rounds[-1].corpus_after if rounds else corpus, min_frequency)
    report_short(num_merges, len(rounds), on_short, reason=reason)
    return Trace(corpus, rounds, tie_break, end_of_word, start_of_word, num_merges, glue_end_of_word, min_frequency)


def train_bpe(
    word_freq: Mapping[str, int],
    num_merges: int,
    *,
    tie_break: TieBreak = "first",
    end_of_word: str | None = END_OF_WORD,
    start_of_word: str | None = None,
    on_short: OnShort = "warn",
    glue_end_of_word: bool = False,
    min_frequency: int = 1,
) -> list[Pair]:
    """Learn up to ``num_merges`` merges from a word -> frequency table.

    Returns the merges in the order learned; that order is their priority
    when encoding. ``tie_break`` is "first" (the textbook rule) or
    "lexicographic" (see ``TIE_BREAKS``). ``glue_end_of_word=True`` joins
    ``</w>`` to each word's last character; training stops once the best
    pair occurs fewer than ``min_frequency`` times. With "lexicographic" and
    ``min_frequency=2`` that is subword-nmt (``tests/test_subword_nmt.py``).
    If fewer merges are possible (every word became a single symbol, or no
    pair is frequent enough), training stops early and ``on_short`` says
    what happens: "warn" (the default; the warning says how many were
    learned and why), "raise" a ValueError, or "ignore" (compare the
    result's length with ``num_merges``).
    """
    corpus, num_merges = training_corpus(
        word_freq,
        num_merges,
        tie_break=tie_break,
        end_of_word=end_of_word,
        start_of_word=start_of_word,
        on_short=on_short,
        glue_end_of_word=glue_end_of_word,
        min_frequency=min_frequency,
    )
    # Keep only the pairs: each Round holds every pair count and the whole
    # corpus, so keeping them all (train_trace does) costs O(N) memory per round.
    merges, final = [], corpus
    for r in _rounds(corpus, num_merges, tie_break, min_frequency):
        merges.append(r.pair)
        final = r.corpus_after
    report_short(num_merges, len(merges), on_short, reason=short_reason(final, min_frequency))
    return merges
