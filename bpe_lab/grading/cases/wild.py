"""Generated cases for chapter 07: digit and Chinese pre-tokenizers, tokens never emitted.

What this adds over ``generators`` (the table and the shared inputs): texts
of digits and numerals, Han text, and a tokenizer built in the call,
``Tokenizer({**{i: bytes([i]) ...}, 256: ...}, merges, specials)``, from a
vocabulary trained here on a few words. The references are
``check.wild``'s (``digit_pieces``, ``zh_pieces``, ``unemitted_tokens``).
"""

from __future__ import annotations

import random
from typing import Any

from bpe_lab.grading.cases.generators import (
    SPECIAL_SETS,
    Args,
    draw,
    random_han_text,
    register,
    tokenizer_of,
    tokenizer_source,
    trained_on,
)
from bpe_lab.grading.check.wild import digit_pieces, unemitted_tokens, zh_pieces

__all__: list[str] = []  # it registers its generators, and exports nothing


_NUMBERS = ["²", "½", "Ⅻ", "٣٤٥٦٧", "１２３４", "3.14159", "1,000,000"]
_WORDS = ["pay", "The", "x", "don't", "I'LL", "it's", "v", "(", "=", "$", "abc"]


def _digit_text(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(2, 7)):
        roll = rng.random()
        if roll < 0.5:
            parts.append("".join(rng.choice("0123456789") for _ in range(rng.randint(1, 11))))
        else:
            parts.append(rng.choice(_NUMBERS if roll < 0.6 else _WORDS))
        parts.append(rng.choice([" ", " ", "  ", "", ",", ".", "\n", " + "]))
    return "".join(parts)


@register("07_wild_pretokenize_digits", digit_pieces)
def _pretokenize_digits_inputs(rng: random.Random) -> list[Args]:
    return draw(lambda: (_digit_text(rng),))


@register("07_wild_pretokenize_zh", zh_pieces)
def _pretokenize_zh_inputs(rng: random.Random) -> list[Args]:
    return draw(lambda: (random_han_text(rng),))


_A_WORDS = ["a", "aa", "aaa", "aaaa", "ab", "abab", "ba", "low", "lower", "lowest"]


def _never_emitted(tail: dict[int, bytes], merges: list[tuple[bytes, bytes]], specials: list[str], text: str) -> Any:
    return unemitted_tokens(tokenizer_of(tail, merges, specials), text)


def _never_emitted_call(name: str, args: Args) -> str:
    tail, merges, specials, text = args
    return f"{name}({tokenizer_source(tail, merges, specials)}, {text!r})"


@register("07_wild_never_emitted", _never_emitted, _never_emitted_call)
def _never_emitted_inputs(rng: random.Random) -> list[Args]:
    def make() -> Args:
        specials = rng.choice(SPECIAL_SETS[:2])
        train = " ".join(rng.choice(_A_WORDS + specials) for _ in range(rng.randint(4, 10)))
        vocab, merges = trained_on(train, 256 + len(specials) + rng.randint(2, 8), specials)
        text = train if rng.random() < 0.4 else " ".join(rng.choice(_A_WORDS) for _ in range(rng.randint(1, 6)))
        return {i: t for i, t in vocab.items() if i >= 256}, merges, specials, text

    return draw(make)
