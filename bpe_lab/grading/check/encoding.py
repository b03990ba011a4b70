"""Chapter 03's checks: encoding a word by rank replay, decoding symbols.

What this adds to ``runner``: words and merge lists where longest match
and rank replay disagree or ``</w>`` gets lost, the references in
``bpe_lab.core.encode``, and ``check_decoder``, the one decoder comparison
that chapter 06's SentencePiece decoder reuses.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from bpe_lab.core.corpora import TEXTBOOK_CORPUS
from bpe_lab.core.encode import decode_words, encode_text, encode_word, longest_match
from bpe_lab.core.symbols import END_OF_WORD, Pair
from bpe_lab.core.train import train_bpe
from bpe_lab.grading.check.runner import compare, random_word_freq, rng, run_cases, short

__all__ = ["encode_cases", "show_word_and_merges", "check_encode_word", "check_decode", "check_decoder"]


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
