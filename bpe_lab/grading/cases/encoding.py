"""Generated cases for chapter 03: encoding a word and decoding symbols.

What this adds over ``generators`` (the table and the shared inputs): random
words and merge lists for ``encode_word``, and symbol lists encoded with
them for ``decode``; the references are ``encode_word`` and ``decode_words``.
"""

from __future__ import annotations

import random

from bpe_lab.core.encode import decode_words, encode_word
from bpe_lab.grading.cases.generators import Args, draw, random_merges, random_word, register

__all__: list[str] = []  # it registers its generators, and exports nothing


@register("03_encoding_encode_word", encode_word)
def _encode_word_inputs(rng: random.Random) -> list[Args]:
    return draw(lambda: (random_word(rng), random_merges(rng)))


@register("03_encoding_decode", decode_words)
def _decode_inputs(rng: random.Random) -> list[Args]:
    def make() -> Args:
        merges = random_merges(rng)
        return ([s for _ in range(rng.randint(1, 4)) for s in encode_word(random_word(rng), merges)],)

    return draw(make)
