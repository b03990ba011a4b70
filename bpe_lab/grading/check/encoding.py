"""Chapter 03's checks: encoding a word by rank replay, decoding symbols.

What this adds to ``runner``: words and merge lists where longest match
and rank replay disagree or ``</w>`` gets lost, the references in
``bpe_lab.core.encode``, and ``check_decoder``, the one decoder comparison
that chapter 06's SentencePiece decoder reuses. Last, the check of notebook
03's "your turn", the choice one step of rank replay makes:
``lowest_ranked_pair``.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from bpe_lab.core.corpora import TEXTBOOK_CORPUS
from bpe_lab.core.encode import decode_words, encode_text, encode_word, longest_match, merge_ranks
from bpe_lab.core.symbols import END_OF_WORD, Pair
from bpe_lab.core.train import train_bpe
from bpe_lab.core.words import merge_symbols, word_to_symbols
from bpe_lab.grading.check.runner import compare, random_word_freq, rng, run_cases, short

__all__ = ["encode_cases", "show_word_and_merges", "check_encode_word", "check_decode", "check_decoder"]
__all__ += ["lowest_ranked", "check_lowest_ranked_pair"]


def encode_cases(generator: random.Random) -> list[tuple[str, list[Pair]]]:
    """``(word, merges)``: textbook words, merges whose rank order and longest
    match disagree on ``abc``, then random ones."""
    textbook = train_bpe(TEXTBOOK_CORPUS, 10)
    fixed = [(w, textbook) for w in ("lowest", "newer", "wider", "low", "xyz")]
    fixed.append(("abc", [("a", "b"), ("b", "c"), ("a", "bc")]))
    randoms = []
    for _ in range(15):
        word_freq = random_word_freq(generator, "abc")
        merges = train_bpe(word_freq, generator.randint(1, 8), on_short="ignore")
        randoms.append(("".join(generator.choice("abc") for _ in range(generator.randint(1, 8))), merges))
    return fixed + randoms


def show_word_and_merges(word: str, merges: list[Pair]) -> str:
    """How a ``(word, merges)`` case is named in a failure message."""
    return f"{word!r}, {short(merges, 100)}"


def check_encode_word(fn: Callable[[str, list[Pair]], list[str]]) -> None:
    """``fn(word, merges) -> symbols``: rank replay, as ``bpe_lab.encode_word``."""
    verdict = compare(encode_word, _encode_hint)
    run_cases("encode_word", fn, encode_cases(rng()), verdict, shown=show_word_and_merges)


def _encode_hint(expected: list[str], got: object, word: str, merges: list[Pair]) -> str:
    if not isinstance(got, list):
        return ": return a list of symbols"
    if got == longest_match(word, merges):
        return (
            ": that is longest match; BPE replays the merges by rank: repeatedly join the adjacent pair "
            "that was learned earliest, until no learned pair is left"
        )
    if not any(END_OF_WORD in str(s) for s in got):
        return (
            ": the end-of-word marker is lost: start from list(word) + ['</w>'], so 'lowest' gives "
            "['low', 'est</w>'], not ['low', 'est']"
        )
    return ": join the learned pair with the lowest rank first, then look again"


def check_decode(fn: Callable[[list[str]], str]) -> None:
    """``fn(symbols) -> text``: as ``bpe_lab.decode_words``."""
    merges = train_bpe(TEXTBOOK_CORPUS, 10)
    texts = ["lowest", "low newest widest", "newer lower lowest", "x", "a bb ccc"]
    hint = ": each '</w>' ends a word: it becomes a space between words, and nothing after the last word"
    check_decoder(fn, "decode", [encode_text(text, merges) for text in texts], decode_words, hint)


def check_decoder(
    fn: Callable[[list[str]], str],
    name: str,
    cases: list[list[str]],
    reference: Callable[[list[str]], str],
    hint: str,
) -> None:
    """Compare a learner's decoder with ``reference`` on each symbol list;
    ``hint`` is the one thing to say when a case differs."""
    verdict = compare(reference, lambda expected, got, symbols: hint, expected_shown=repr)
    run_cases(name, fn, [(symbols,) for symbols in cases], verdict, shown=lambda symbols: short(symbols, 100))


# ------------------------------------------------- notebook 03's "your turn": one step's choice


def lowest_ranked(symbols: list[str], ranks: dict[Pair, int]) -> Pair | None:
    """The reference for ``lowest_ranked_pair``: of the adjacent pairs of
    whole symbols that have a rank, the one with the lowest; None when none has."""
    ranked = [pair for pair in zip(symbols, symbols[1:]) if pair in ranks]
    return min(ranked, key=ranks.__getitem__) if ranked else None


def _replay_states(word: str, ranks: dict[Pair, int]) -> list[list[str]]:
    """Every state of replaying ``word``, the finished one (no pair left) included."""
    states = [list(word_to_symbols(word))]
    while (best := lowest_ranked(states[-1], ranks)) is not None:
        states.append(list(merge_symbols(tuple(states[-1]), best)))
    return states


def _lowest_ranked_cases(generator: random.Random) -> list[tuple[list[str], dict[Pair, int]]]:
    """Worked by hand: ``a b c d`` joins (c, d), rank 0, neither the first
    pair nor the highest rank; with notebook 03's five merges ((e, s) 0, (es, t) 1,
    (est, </w>) 2, (l, o) 3, (lo, w) 4): ``l o w e s t </w>`` joins (e, s)
    though (l, o) comes first; ``n e s t </w>`` with seven merges joins (e, s),
    rank 0, not (n, e), rank 5; ``x ab c`` has no pair (b, c); then every
    state of replaying random words."""
    five, seven = merge_ranks(train_bpe(TEXTBOOK_CORPUS, 5)), merge_ranks(train_bpe(TEXTBOOK_CORPUS, 7))
    fixed = [(["a", "b", "c", "d"], {("a", "b"): 1, ("b", "c"): 2, ("c", "d"): 0})]
    fixed += [(state, five) for state in _replay_states("lowest", five)]
    fixed += [(list("nest") + [END_OF_WORD], seven), (["x", "ab", "c"], {("b", "c"): 0, ("ab", "c"): 1})]
    fixed += [(["x", "y", "z", END_OF_WORD], five), (["a"], {("a", "b"): 0})]
    randoms = []
    for _ in range(6):
        ranks = merge_ranks(train_bpe(random_word_freq(generator, "abc"), generator.randint(2, 8), on_short="ignore"))
        word = "".join(generator.choice("abc") for _ in range(generator.randint(2, 8)))
        randoms += [(state, ranks) for state in _replay_states(word, ranks)]
    return fixed + randoms


def check_lowest_ranked_pair(fn: Callable[[list[str], dict[Pair, int]], Pair | None]) -> None:
    """``fn(symbols, ranks) -> pair or None``: the adjacent pair one step of
    rank replay joins, the one with the lowest rank in ``ranks``."""
    run_cases(
        "lowest_ranked_pair",
        fn,
        _lowest_ranked_cases(rng()),
        compare(lowest_ranked, _lowest_ranked_hint),
        shown=lambda symbols, ranks: f"{symbols!r}, {short(ranks, 100)}",
    )


def _lowest_ranked_hint(expected: Pair | None, got: object, symbols: list[str], ranks: dict[Pair, int]) -> str:
    adjacent = list(zip(symbols, symbols[1:]))
    ranked = [pair for pair in adjacent if pair in ranks]
    if expected is None:
        if isinstance(got, tuple) and got in ranks:
            return f": {got} has rank {ranks[got]} but is not two adjacent symbols here: return None"
        return ": no adjacent pair has a rank: return None"
    if got is None:
        return f": {expected} is adjacent and has rank {ranks[expected]}"
    if isinstance(got, list) and tuple(got) == expected:
        return ": return the pair as a tuple (left, right)"
    if isinstance(got, int):
        return ": return the pair, not its rank"
    if got == ranked[0]:
        return f": rank decides, not position: {got} comes first in the word but has rank {ranks[got]}"
    if got == max(ranked, key=ranks.__getitem__):
        return f": take the lowest rank (learned first), not the highest: {got} has rank {ranks[got]}"
    if isinstance(got, tuple) and got in ranks and got not in adjacent:
        return f": {got} is not two adjacent whole symbols here; look only at zip(symbols, symbols[1:])"
    return ""
