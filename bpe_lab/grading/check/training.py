"""Chapter 02's checks: textbook BPE training, over the shared runner.

What this adds to ``runner``: corpora where the training mistakes show
(unweighted counts, overlapping runs such as ``aaaa``, lexicographic ties,
a missing ``</w>``), the references in ``bpe_lab.core.train``, hints that
read the learner's merge list round by round, and ``find_first_mistake``,
the reference for the "find the mistake in a published trace" task. Last,
the check of notebook 02's "your turn", one count of the counting step:
``pair_count``, the weighted count of one pair.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from bpe_lab.core.corpora import TEXTBOOK_CORPUS
from bpe_lab.core.symbols import END_OF_WORD, Corpus, Pair, TieBreak
from bpe_lab.core.train import Round, Trace, count_pairs, train_trace
from bpe_lab.core.words import merge_symbols
from bpe_lab.grading.check.runner import compare, random_word_freq, rng, run_cases, short, split

__all__ = [
    "Mistake",
    "find_first_mistake",
    "corpus_cases",
    "check_count_pairs",
    "check_merge_pair",
    "check_train",
    "check_first_mistake",
    "check_pair_count",
]

PublishedTrace = list[tuple[Pair, int]]


# ------------------------------------------------------------ count_pairs


def corpus_cases(generator: random.Random) -> list[Corpus]:
    """Split corpora: the textbook one, overlapping runs, then random ones."""
    fixed = [split(TEXTBOOK_CORPUS), {("a", "a", "a", "a"): 1, ("b", "a"): 2}]
    return fixed + [split(random_word_freq(generator)) for _ in range(15)]


def check_count_pairs(fn: Callable[[Corpus], dict[Pair, int]]) -> None:
    """``fn(corpus) -> {pair: count}``: every adjacent pair, weighted by the
    frequency of its word, overlapping occurrences included."""
    cases = [(corpus,) for corpus in corpus_cases(rng())]
    run_cases("count_pairs", fn, cases, _count_verdict, shown=lambda corpus: short(corpus, 80))


def _count_verdict(got: object, corpus: Corpus) -> str | None:
    if not isinstance(got, Mapping):
        return f"return a dict {{pair: count}}, got {short(got)}"
    expected = count_pairs(corpus)
    return None if dict(got) == expected else _count_hint(corpus, expected, dict(got))


def _count_hint(corpus: Mapping[tuple[str, ...], int], expected: dict[Pair, int], got: dict[Pair, int]) -> str:
    if got == count_pairs({symbols: 1 for symbols in corpus}):
        return (
            "you counted each pair once per word: weight every occurrence by the word's frequency "
            "(low appears 5 times, so its (l, o) adds 5)"
        )
    for pair, count in expected.items():
        if got.get(pair) != count:
            detail = f"pair {pair}: expected {count}, got {got.get(pair)}"
            if pair[0] == pair[1]:
                detail += (
                    ": count overlapping occurrences too, ('a', 'a', 'a', 'a') holds ('a', 'a') three times "
                    "(merging will join only two of them, but counting sees three)"
                )
            return detail
    extra = next(p for p in got if p not in expected)
    return f"pair {extra} does not occur in the corpus, but you counted it {got[extra]} times"


# ------------------------------------------------------------- merge_pair


def check_merge_pair(fn: Callable[[tuple[str, ...], Pair], tuple[str, ...]]) -> None:
    """``fn(symbols, pair) -> symbols``: every non-overlapping occurrence of
    ``pair`` joined, left to right, whole symbols only."""
    fixed: list[tuple[tuple[str, ...], Pair]] = [
        (("a", "a", "a", "a"), ("a", "a")),
        (("a", "a", "a"), ("a", "a")),
        (("x", "ab", "c"), ("b", "c")),
        (("l", "o", "w", "e", "r", "</w>"), ("e", "r")),
        (("n", "e", "w", "es", "t", "</w>"), ("es", "t")),
    ]
    generator = rng()
    randoms = []
    for _ in range(20):
        symbols = tuple(generator.choice("ab") for _ in range(generator.randint(1, 8)))
        randoms.append((symbols, (generator.choice("ab"), generator.choice("ab"))))
    run_cases("merge_pair", fn, fixed + randoms, compare(merge_symbols, _merge_hint))


def _merge_hint(expected: tuple[str, ...], got: object, symbols: tuple[str, ...], pair: Pair) -> str:
    if isinstance(got, list) and tuple(got) == expected:
        return ": return a tuple, not a list (tuples can be dict keys)"
    if "".join(map(str, got if isinstance(got, (list, tuple)) else [])) != "".join(symbols):
        return ": merging must keep every character, in order"
    if pair[0] + pair[1] not in "".join(symbols) or all(pair != p for p in zip(symbols, symbols[1:])):
        return ": join only whole symbols: ('x', 'ab', 'c') does not contain the pair ('b', 'c')"
    return (
        ": scan left to right and skip an occurrence that overlaps one already joined: "
        "('a', 'a', 'a', 'a') becomes ('aa', 'aa')"
    )


# ------------------------------------------------------------------ train


def _train_cases(generator: random.Random) -> list[tuple[dict[str, int], int]]:
    fixed = [(dict(TEXTBOOK_CORPUS), 10), ({"aaaa": 3, "aa": 1}, 3), ({"aaa": 3, "aaaaa": 2}, 4)]
    return fixed + [(random_word_freq(generator), generator.randint(1, 6)) for _ in range(12)]


def check_train(fn: Callable[[dict[str, int], int], list[Pair]]) -> None:
    """``fn(word_freq, num_merges) -> merges``, round by round equal to
    ``bpe_lab.train_bpe`` (``</w>`` at the end of every word, first-seen ties)."""
    run_cases(
        "train",
        fn,
        _train_cases(rng()),
        lambda got, word_freq, num_merges: _trace_hint(train_trace(word_freq, num_merges, on_short="ignore"), got),
        shown=lambda word_freq, num_merges: f"{short(word_freq, 80)}, {num_merges}",
    )


def _trace_hint(trace: Trace, got: object) -> str | None:
    if not isinstance(got, list):
        return f"return a list of pairs, got {short(got)}"
    for r, pair in zip(trace.rounds, got):
        if tuple(pair) != r.pair:
            return (
                f"round {r.number}: expected {r.pair} with count {r.count}, got {short(pair)}"
                f"{_round_hint(trace, r, got)}"
            )
    if len(got) != len(trace.rounds):
        return (
            f"expected {len(trace.rounds)} merges, got {len(got)}: learn num_merges merges, fewer only when "
            "every word has become a single symbol"
        )
    if any(not isinstance(p, tuple) for p in got):
        return "return each merge as a tuple (left, right)"
    return None


def _round_hint(trace: Trace, r: Round, got: list[Any]) -> str:
    """Why round ``r`` went wrong, guessed from the learner's whole merge list."""
    pair = tuple(got[r.number - 1])
    count = r.pair_counts.get(pair)
    if pair in r.ties:
        return f" (count {count}): ties go to the pair met first (words in order, left to right in each word)"
    if END_OF_WORD in "".join(r.pair) and not any(END_OF_WORD in "".join(map(str, p)) for p in got):
        return ": every word ends with the end-of-word marker '</w>': start from list(word) + ['</w>']"
    if count is None and r.number == 1:
        return (
            ": this pair does not occur in the corpus: split each word into its characters plus '</w>' "
            "and count those pairs"
        )
    if count is None:
        return (
            ": this pair does not occur in the corpus at this round: check how you merge "
            "(every occurrence, left to right, whole symbols only)"
        )
    unweighted = count_pairs({symbols: 1 for symbols in trace.corpus_before(r.number)})
    if max(unweighted, key=unweighted.__getitem__) == pair:
        return f" (count {count}): weight every pair by its word's frequency"
    return f" (count {count}): take the most frequent pair"


# ------------------------------------------------------- find the mistake


class Mistake(NamedTuple):
    """The first wrong round of a published trace and what it should have been."""

    round: int
    expected_pair: Pair | None
    expected_count: int | None
    published_pair: Pair
    published_count: int

    def __str__(self) -> str:
        if self.expected_pair is None:
            return f"round {self.round}: no pair is left to merge, but the trace merges {self.published_pair}"
        if self.expected_pair == self.published_pair:
            return (
                f"round {self.round}: {self.published_pair} is right but its count is {self.expected_count}, "
                f"not {self.published_count}"
            )
        return (
            f"round {self.round}: the trace merges {self.published_pair} with count {self.published_count}, "
            f"but {self.expected_pair} has count {self.expected_count}"
        )


def find_first_mistake(
    word_freq: Mapping[str, int],
    trace: Sequence[tuple[Pair, int]],
    *,
    tie_break: TieBreak = "first",
    end_of_word: str | None = END_OF_WORD,
    glue_end_of_word: bool = False,
    min_frequency: int = 1,
) -> Mistake | None:
    """Replay a published trace ``[(pair, count), ...]`` against the corpus and
    return its first wrong round (wrong pair or wrong count), or None.

    A trace is right or wrong only under a convention: the tie rule, the
    end-of-word marker (``end_of_word=None`` for code that starts from
    ``tuple(word)``, as seed 004's does), subword-nmt's glued marker and its
    minimum frequency. The defaults are the textbook's: ``</w>`` as a symbol
    of its own, ties to the pair met first. Only the first mistake is
    meaningful: after it, the published corpus and the real one differ, so
    later rounds cannot be judged.

    >>> published = [(("e", "s"), 9), (("es", "t"), 9), (("l", "o"), 7)]
    >>> str(find_first_mistake(TEXTBOOK_CORPUS, published))
    "round 3: the trace merges ('l', 'o') with count 7, but ('est', '</w>') has count 9"
    >>> find_first_mistake(TEXTBOOK_CORPUS, published, end_of_word=None) is None
    True
    """
    rounds = train_trace(
        word_freq,
        len(trace),
        tie_break=tie_break,
        end_of_word=end_of_word,
        glue_end_of_word=glue_end_of_word,
        min_frequency=min_frequency,
        on_short="ignore",
    ).rounds
    for number, (published, count) in enumerate(trace, start=1):
        pair: Pair = tuple(published)  # type: ignore[assignment]  # lists are accepted as pairs
        if number > len(rounds):
            return Mistake(number, None, None, pair, count)
        r = rounds[number - 1]
        if (pair, count) != (r.pair, r.count):
            return Mistake(number, r.pair, r.count, pair, count)
    return None


#: Traces as published, with the mistakes found in tutorials on the web.
_PUBLISHED: list[PublishedTrace] = [
    [(("e", "s"), 9), (("es", "t"), 9), (("o", "w"), 7)],
    [(("l", "o"), 7), (("lo", "w"), 7)],
    [(("e", "s"), 9), (("es", "t"), 9), (("est", "</w>"), 9), (("l", "o"), 7), (("lo", "w"), 7)],
    [(("e", "s"), 4), (("es", "t"), 2)],
    [(("e", "s"), 9), (("es", "t"), 9), (("est", "</w>"), 9), (("l", "o"), 7), (("lo", "w"), 6)],
]


def _published(word_freq: Mapping[str, int], num_merges: int) -> PublishedTrace:
    return [(r.pair, r.count) for r in train_trace(word_freq, num_merges, on_short="ignore").rounds]


def _mistake_cases(generator: random.Random) -> list[tuple[Mapping[str, int], PublishedTrace]]:
    cases: list[tuple[Mapping[str, int], PublishedTrace]] = [(dict(TEXTBOOK_CORPUS), trace) for trace in _PUBLISHED]
    odd_runs = {"aaa": 3, "aaaaa": 2}  # a right trace that only a correct merge confirms
    cases.append((odd_runs, _published(odd_runs, 4)))
    for _ in range(10):
        word_freq = random_word_freq(generator)
        trace = _published(word_freq, 5)
        if trace and generator.random() < 0.7:
            i = generator.randrange(len(trace))
            trace[i] = (trace[i][0], trace[i][1] + generator.choice((-1, 1, 2)))
        cases.append((word_freq, trace))
    return cases


def _as_answer(mistake: Mistake | None) -> tuple[int, Pair | None, int | None] | None:
    return None if mistake is None else (mistake.round, mistake.expected_pair, mistake.expected_count)


def check_first_mistake(fn: Callable[[dict[str, int], PublishedTrace], tuple[int, Pair, int] | None]) -> None:
    """``fn(word_freq, trace) -> (round, correct_pair, correct_count)`` for the
    first wrong round (numbered from 1), or None when the trace is right."""
    run_cases(
        "first_mistake",
        fn,
        _mistake_cases(rng()),
        compare(lambda word_freq, trace: _as_answer(find_first_mistake(word_freq, trace)), _mistake_hint),
        shown=lambda word_freq, trace: f"{short(word_freq, 60)}, {short(trace, 100)}",
    )


def _mistake_hint(expected: object, got: object, word_freq: Mapping[str, int], trace: PublishedTrace) -> str:
    mistake = find_first_mistake(word_freq, trace)
    if mistake is None:
        return ": every round of this trace is right, so return None"
    if not isinstance(got, tuple) or len(got) != 3:
        return ": return a tuple (round, correct_pair, correct_count)"
    if got[0] == mistake.round - 1:
        return ": number the rounds from 1"
    if got[1] == mistake.published_pair and mistake.published_pair != mistake.expected_pair:
        return ": return the pair that should have been merged, not the published one"
    return ": compare pair and count in every round, and stop at the first difference"


# ------------------------------------------------- notebook 02's "your turn": one pair's count


def _pair_count_cases(generator: random.Random) -> list[tuple[Corpus, Pair]]:
    """Worked by hand on the textbook corpus (``(e, s)`` 6 + 3 = 9, ``(w, e)``
    2 + 6 = 8, ``(l, o)`` 5 + 2 = 7, ``(o, l)`` 0), then ``a a a a`` (3
    overlapping occurrences), a pair inside one symbol (0) and random corpora."""
    textbook = split(TEXTBOOK_CORPUS)
    fixed: list[tuple[Corpus, Pair]] = [(textbook, p) for p in [("e", "s"), ("w", "e"), ("l", "o"), ("o", "l")]]
    fixed += [({("a", "a", "a", "a"): 1, ("b", "a"): 2}, ("a", "a")), ({("x", "ab", "c"): 4}, ("b", "c"))]
    fixed += [({("x", "ab", "c"): 4, ("ab", "c"): 1}, ("ab", "c"))]
    randoms = []
    for _ in range(15):
        corpus = split(random_word_freq(generator, "abc"))
        randoms.append((corpus, (generator.choice("abc"), generator.choice("abc"))))
    return fixed + randoms


def check_pair_count(fn: Callable[[Corpus, Pair], int]) -> None:
    """``fn(corpus, pair) -> int``: how often ``pair`` occurs as two adjacent
    symbols, each occurrence weighted by its word's frequency."""
    run_cases(
        "pair_count",
        fn,
        _pair_count_cases(rng()),
        compare(lambda corpus, pair: count_pairs(corpus).get(pair, 0), _pair_count_hint),
        shown=lambda corpus, pair: f"{short(corpus, 80)}, {pair!r}",
    )


def _pair_count_hint(expected: int, got: object, corpus: Corpus, pair: Pair) -> str:
    if not isinstance(got, int):
        return ": return the count, an int"
    occurrences = {symbols: sum(p == pair for p in zip(symbols, symbols[1:])) for symbols in corpus}
    if got == sum(occurrences.values()) != expected:
        return ": weight each occurrence by its word's frequency (low appears 5 times, so its (l, o) adds 5)"
    if got == sum(freq for symbols, freq in corpus.items() if occurrences[symbols]) != expected:
        return ": count every occurrence in a word, overlapping ones too: ('a', 'a', 'a', 'a') holds ('a', 'a') 3 times"
    in_text = {symbols: "".join(symbols).count(pair[0] + pair[1]) for symbols in corpus}
    if got == sum(n * corpus[symbols] for symbols, n in in_text.items()) != expected:
        if any(in_text[symbols] > occurrences[symbols] for symbols in corpus):
            return (
                ": count pairs of whole adjacent symbols, not letters in the joined word: "
                "('x', 'ab', 'c') holds ('ab', 'c') but not ('b', 'c')"
            )
        return ": str.count skips overlapping occurrences, but ('a', 'a', 'a', 'a') holds ('a', 'a') 3 times"
    return ""
