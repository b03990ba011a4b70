"""Chapter 06's checks: WordPiece's longest match, unigram Viterbi, SentencePiece decoding; a Chinese pre-token helper.

What this adds to ``runner``: the references in ``bpe_lab.variants``
(imported inside the checks, like the byte-level ones, so that a problem
there cannot break the earlier chapters' checks), unigram models where a
greedy segmentation loses, and hints that tell the variant from BPE. The
words and merge lists are chapter 03's, so longest match is tried exactly
where rank replay was. For languages without spaces (chapter 06 shows BPE
on Chinese; the exercise on the ``[\u4e00-\u9fa5]`` pattern is chapter
07's, whose check uses it): a pre-tokenizer that cuts Chinese into
single characters leaves BPE nothing to merge across characters, which
``han_words_learned`` shows by training on the course's Chinese
sentences.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import regex

from bpe_lab.core.encode import encode_word, longest_match
from bpe_lab.core.symbols import END_OF_WORD, Pair
from bpe_lab.core.train import train_bpe
from bpe_lab.grading.check.encoding import check_decoder, encode_cases, show_word_and_merges
from bpe_lab.grading.check.runner import compare, random_word_freq, rng, run_cases, short

__all__ = [
    "check_longest_match",
    "check_viterbi",
    "check_sp_decode",
    "ZH_RANGE",
    "han_words_learned",
]


def check_longest_match(fn: Callable[[str, list[Pair]], list[str]]) -> None:
    """``fn(word, merges) -> symbols``: WordPiece's greedy longest match, as
    ``bpe_lab.longest_match``."""
    verdict = compare(longest_match, _longest_hint)
    run_cases("longest_match", fn, encode_cases(rng()), verdict, shown=show_word_and_merges)


def _longest_hint(expected: list[str], got: object, word: str, merges: list[Pair]) -> str:
    if got == encode_word(word, merges) != expected:
        return ": that is BPE's rank replay; WordPiece ignores the merge order and takes the longest vocabulary entry"
    return ": from the left, take the longest run of symbols whose join is in the vocabulary"


def _unigram_cases(generator: random.Random) -> list[tuple[str, dict[str, float]]]:
    fixed_probs = {
        "low": -1.0,
        "est</w>": -1.0,
        "l": -3.0,
        "o": -3.0,
        "w": -3.0,
        "e": -3.0,
        "s": -3.0,
        "t": -3.0,
        "</w>": -3.0,
        "lowe": -1.5,
        "st</w>": -1.5,
    }
    cases = [("lowest", fixed_probs), ("low", fixed_probs)]
    for _ in range(12):
        word_freq = random_word_freq(generator, "abc")
        merges = train_bpe(word_freq, generator.randint(2, 8), on_short="ignore")
        vocab = ["a", "b", "c", END_OF_WORD] + [a + b for a, b in merges]
        probs = {token: -round(generator.uniform(0.5, 6.0), 3) for token in vocab}
        cases.append(("".join(generator.choice("abc") for _ in range(generator.randint(1, 8))), probs))
    return cases


def check_viterbi(fn: Callable[[str, dict[str, float]], list[str]]) -> None:
    """``fn(word, logprobs) -> pieces``: the most probable segmentation of
    ``word + '</w>'`` under a unigram model, as ``bpe_lab.variants.unigram.viterbi``."""
    from bpe_lab.variants.unigram import viterbi

    verdict = compare(lambda word, logprobs: viterbi(word, logprobs)[0], _viterbi_hint)
    run_cases("viterbi", fn, _unigram_cases(rng()), verdict, shown=_show_unigram_case)


def _show_unigram_case(word: str, logprobs: dict[str, float]) -> str:
    return f"{word!r}, {short(logprobs, 80)}"


def _viterbi_hint(expected: list[str], got: object, word: str, logprobs: dict[str, float]) -> str:
    from bpe_lab.variants.unigram import viterbi

    if isinstance(got, list) and all(p in logprobs for p in got) and "".join(got) == word + END_OF_WORD:
        best = viterbi(word, logprobs)[1]
        return (
            f": yours has log-probability {sum(logprobs[p] for p in got):.3f}, the best has {best:.3f}: "
            "try every cut position (dynamic programming), not a greedy choice"
        )
    return ""


def check_sp_decode(fn: Callable[[list[str]], str]) -> None:
    """``fn(symbols) -> text``: SentencePiece-style decoding, exact for any
    spacing, as ``bpe_lab.variants.sentencepiece.sp_decode``."""
    from bpe_lab.core.pretokenize import word_frequencies
    from bpe_lab.variants.sentencepiece import sp_decode, sp_encode, sp_words

    texts = ["Hello world", "Hello  world", " leading space", "two\nlines\tand a tab", "trailing  ", "a"]
    merges = train_bpe(word_frequencies(" ".join(texts), split=sp_words), 10, end_of_word=None)
    hint = ": every '▁' is a space; drop only the one space put in front of the text"
    check_decoder(fn, "sp_decode", [sp_encode(text, merges) for text in texts], sp_decode, hint)


# ------------------------------------------------------------ pre-tokenizing Chinese

#: The range of Chinese characters that ``[\u4e00-\u9fa5]`` names, U+4E00..U+9FA5 (the CJK
#: Unified Ideographs of Unicode 1.1, less the later ones).
ZH_RANGE = (0x4E00, 0x9FA5)


def han_words_learned(fn: Callable[[str], list[str]], num_merges: int) -> list[str]:
    """The tokens of two or more Han characters that ``num_merges`` byte-level
    merges learn on ``parallel_sentences("zh")`` cut by ``fn``, most frequent
    pair first (chapter 07's check shows them for the learner's pattern and
    for the ``[\u4e00-\u9fa5]`` one, which learns none)."""
    from collections import Counter

    from bpe_lab.core.corpora import parallel_sentences
    from bpe_lab.core.train_fast import learn_merges

    pieces = Counter(p for s in parallel_sentences("zh") for p in fn(s))
    corpus = {tuple(bytes([b]) for b in p.encode("utf-8")): c for p, c in pieces.items()}
    tokens = [
        (a + b).decode("utf-8", errors="replace")
        for a, b in learn_merges(corpus, num_merges, tie_break="lexicographic")
    ]
    return [t for t in tokens if regex.fullmatch(r"\p{Han}{2,}", t)]
