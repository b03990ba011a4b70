"""Generated cases for chapter 06: longest match, Viterbi, SentencePiece.

What this adds over ``generators`` (the table and the shared inputs): the
inputs of chapter 06's tasks (the Han pre-tokenizer is chapter 07's, in
``wild``). The references are ``longest_match``, ``viterbi`` and
``sp_decode``.
"""

from __future__ import annotations

import random

from bpe_lab.core.encode import longest_match
from bpe_lab.core.pretokenize import word_frequencies
from bpe_lab.grading.cases.generators import EOW, Args, draw, random_merges, random_word, register
from bpe_lab.variants.sentencepiece import sp_decode, sp_encode, sp_words
from bpe_lab.variants.unigram import viterbi

__all__: list[str] = []  # it registers its generators, and exports nothing


@register("06_variants_longest_match", longest_match)
def _longest_match_inputs(rng: random.Random) -> list[Args]:
    return draw(lambda: (random_word(rng), random_merges(rng)))


def _viterbi(word: str, logprobs: dict[str, float]) -> list[str]:
    return viterbi(word, logprobs)[0]


def _unigram_case(rng: random.Random) -> Args:
    vocab = ["a", "b", "c", EOW] + [a + b for a, b in random_merges(rng)]
    vocab += [t + EOW for t in vocab[4:] if rng.random() < 0.3]
    return random_word(rng), {token: -round(rng.uniform(0.5, 6.0), 4) for token in dict.fromkeys(vocab)}


@register("06_variants_viterbi", _viterbi)
def _viterbi_inputs(rng: random.Random) -> list[Args]:
    return draw(lambda: _unigram_case(rng))


def _sp_symbols(rng: random.Random) -> Args:
    from bpe_lab.core.train import train_bpe

    words = [random_word(rng) for _ in range(rng.randint(1, 5))]
    text = "".join(w + rng.choice([" ", " ", "  ", "\n", "\t", " \n"]) for w in words)
    text = (" " if rng.random() < 0.3 else "") + text[: -1 if rng.random() < 0.5 else None]
    merges = train_bpe(word_frequencies(text, split=sp_words), rng.randint(1, 6), end_of_word=None, on_short="ignore")
    return (sp_encode(text, merges),)


@register("06_variants_sp_decode", sp_decode)
def _sp_decode_inputs(rng: random.Random) -> list[Args]:
    return draw(lambda: _sp_symbols(rng))
