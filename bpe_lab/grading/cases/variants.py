"""Generated cases for chapter 06: longest match, Viterbi, SentencePiece, Han pre-tokenizing.

What this adds over ``generators`` (the table and the shared inputs): the
inputs of chapter 06's tasks; a Han pre-tokenizer is judged by
``check.han_cuts`` (each Han run whole) and by its pieces joining back to
the text. The references are ``longest_match``, ``viterbi``, ``sp_decode``
and ``check.variants.han_cuts``.
"""

from __future__ import annotations

import random

import regex

from bpe_lab.core.encode import longest_match
from bpe_lab.core.pretokenize import word_frequencies
from bpe_lab.grading.cases.generators import EOW, Args, draw, random_han_text, random_merges, random_word, register
from bpe_lab.grading.check.variants import han_cuts
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


def _whole_runs(text: str) -> list[str]:
    return [str(piece) for piece in regex.findall(r"\p{Han}+|\P{Han}+", text)]


def _han_pretokenize(text: str) -> Args:
    """Each Han run whole, and the pieces join back to the text."""
    return han_cuts(_whole_runs, text), text


def _han_call(name: str, args: Args) -> str:
    return f"(lambda t: (check.han_cuts({name}, t), ''.join({name}(t))))({args[0]!r})"


@register("06_variants_han_pretokenize", _han_pretokenize, _han_call)
def _han_pretokenize_inputs(rng: random.Random) -> list[Args]:
    return draw(lambda: (random_han_text(rng),))
