"""Generated cases for chapter 01: Gage's byte-pair compression.

What this adds over ``generators`` (the table and the shared inputs): random
byte strings for ``most_frequent_pair``, ``compress`` and ``decompress``, whose
references are ``check.compression.first_round`` and bpe_lab's own
``compress`` and ``decompress``.
"""

from __future__ import annotations

import random

from bpe_lab.grading.cases.generators import Args, draw, register
from bpe_lab.grading.check.compression import first_round
from bpe_lab.variants.compression import Compressed, compress, decompress

__all__: list[str] = []  # it registers its generators, and exports nothing


def _data(rng: random.Random, alphabet: bytes = b"abcd ") -> bytes:
    return bytes(rng.choice(alphabet) for _ in range(rng.randint(6, 40)))


@register("01_compression_most_frequent_pair", first_round)
def _most_frequent_pair(rng: random.Random) -> list[Args]:
    return draw(lambda: (data,) if first_round(data := _data(rng)) is not None else None)


def _compress(data: bytes) -> tuple[bytes, dict[int, tuple[int, int]]]:
    packed = compress(data)
    return packed.data, dict(packed.table)


@register("01_compression_compress", _compress)
def _compress_inputs(rng: random.Random) -> list[Args]:
    return draw(lambda: (_data(rng, rng.choice([b"ab", b"abc", b"abcd ", b"the s"])),))


def _decompress(packed: bytes, table: dict[int, tuple[int, int]]) -> bytes:
    return decompress(Compressed(packed, table, (), 0))


@register("01_compression_decompress", _decompress)
def _decompress_inputs(rng: random.Random) -> list[Args]:
    return draw(lambda: _compress(_data(rng, rng.choice([b"ab", b"abc", b"abcd "]))))
