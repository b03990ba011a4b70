"""Generated cases for chapter 05: the byte map, byte-level encoding, decoding and training.

What this adds over ``generators`` (the table and the shared inputs): texts
from the Python docs mixed with accents, emoji and special tokens, a
byte-level vocabulary trained on them (``trained_on``), and for
``train_bytelevel`` a call that writes its text in the kernel with
``check.text_file(TEXT)`` (as the fixed cases do) and sends back the
vocabulary as a size and a sorted set, its merges as an exact list (CS336).
"""

from __future__ import annotations

import random
from typing import Any

from bpe_lab.bytelevel.byte_map import bytes_to_unicode
from bpe_lab.bytelevel.tokenizer import Tokenizer
from bpe_lab.core.corpora import python_docs
from bpe_lab.grading.cases.generators import CASES_PER_TASK, SPECIAL_SETS, Args, draw, mix, register, trained_on

__all__: list[str] = []  # it registers its generators, and exports nothing


def _bytes_to_unicode(data: bytes) -> str:
    table = bytes_to_unicode()
    return "".join(table[b] for b in data)


@register("05_bytelevel_bytes_to_unicode", _bytes_to_unicode, lambda f, args: f'"".join({f}()[b] for b in {args[0]!r})')
def _bytes_to_unicode_inputs(rng: random.Random) -> list[Args]:
    return draw(lambda: (bytes(rng.randrange(256) for _ in range(rng.randint(8, 24))),))


_SPECIALS = ["<|endoftext|>"]
_EXTRAS = ["für", " 🙂", "日本語", "  ", "\n\n", "naïve café", "<|endoftext|>", " don't", "x = f(1)"]


def _texts(rng: random.Random, n: int) -> list[str]:
    docs = python_docs()
    texts = []
    for _ in range(n):
        start = rng.randrange(len(docs) - 120)
        parts = [docs[start : start + rng.randint(15, 80)], rng.choice(_EXTRAS), docs[start + 200 : start + 230]]
        rng.shuffle(parts)
        texts.append("".join(parts))
    return texts


def _tiny_tokenizer(rng: random.Random) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    """A byte-level vocabulary of 257 + 12..30 entries trained on random text."""
    text = "".join(_texts(rng, 12))
    return trained_on(text, 257 + rng.randint(12, 30), _SPECIALS)


def _encode_bytelevel(text: str, vocab: dict[int, bytes], merges: list[Any], specials: list[str]) -> list[int]:
    return Tokenizer(vocab, merges, specials).encode(text)


@register("05_bytelevel_encode", _encode_bytelevel)
def _encode_bytelevel_inputs(rng: random.Random) -> list[Args]:
    vocab, merges = _tiny_tokenizer(rng)
    return [(text, vocab, merges, list(_SPECIALS)) for text in _texts(rng, CASES_PER_TASK)]


def _decode_bytelevel(ids: list[int], vocab: dict[int, bytes]) -> str:
    return Tokenizer(vocab, []).decode(ids)


@register("05_bytelevel_decode", _decode_bytelevel)
def _decode_bytelevel_inputs(rng: random.Random) -> list[Args]:
    vocab, merges = _tiny_tokenizer(rng)
    out: list[Args] = []
    for text in _texts(rng, CASES_PER_TASK):
        ids = _encode_bytelevel(text, vocab, merges, _SPECIALS)
        cut = rng.randrange(len(ids) + 1)  # a cut may fall inside a character: U+FFFD
        out.append((ids[:cut] + [rng.randrange(128, 256)] * (len(out) % 2), vocab))
    return out


_PIECES = ["low", "lower", "lowest", "ab", "abab", "the", "é", "今天", "天气", "aa", "x=1", "don't", "🙂"]
_SEPS = [" ", " ", "  ", "\n", ", ", "", "\n\n    "]


def _train_bytelevel(text: str, vocab_size: int, specials: list[str]) -> Args:
    """What the call sends back: the vocabulary's size and its sorted set of tokens, and the merges."""
    vocab, merges = trained_on(text, vocab_size, specials)
    return len(vocab), sorted(set(vocab.values())), merges


def _train_bytelevel_call(name: str, args: Args) -> str:
    text, size, specials = args
    return (
        f"(lambda v, m: (len(v), sorted(set(v.values())), m))(*{name}(check.text_file({text!r}), {size}, {specials!r}))"
    )


@register("05_bytelevel_train", _train_bytelevel, _train_bytelevel_call, name="train_bytelevel")
def _train_bytelevel_inputs(rng: random.Random) -> list[Args]:
    def make() -> Args | None:
        specials = rng.choice(SPECIAL_SETS)
        text = mix(rng, _PIECES + specials * 2, _SEPS, 10)
        size = 256 + len(specials) + rng.randint(2, 14)
        return (text, size, specials) if _train_bytelevel(text, size, specials)[0] == size else None

    return draw(make)
