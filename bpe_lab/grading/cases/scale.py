"""Generated cases for chapter 08: chunk boundaries, counting a chunk, merging counts, streaming.

What this adds over ``generators`` (the table and the shared inputs): files
cut at special tokens, long runs of one byte written ``b'a' * 5000`` so that
a token far past a read window keeps the call short, and the list of
Counters ``merge_counts`` must leave alone, sent back with its total; a
streaming encoder is handed a ``check.MeteredText`` of the text, and the
call sends back the ids it yields and its largest read and most bytes held,
each raised to the grader's bound (``max(f.most_held, LIMIT)``): equal to
the bound when within it, the figure itself when over. The references are
``check.scale``'s (``chunk_boundaries``, ``chunk_counts``,
``merged_counts``, ``held_limit``) and ``Tokenizer.encode``.
"""

from __future__ import annotations

import random
from typing import Any

import regex

from bpe_lab.core.corpora import python_docs
from bpe_lab.grading.cases.generators import (
    SPECIAL_SETS,
    Args,
    draw,
    mix,
    register,
    tokenizer_of,
    tokenizer_source,
    trained_on,
)
from bpe_lab.grading.check.scale import chunk_boundaries, chunk_counts, held_limit, merged_counts

__all__: list[str] = []  # it registers its generators, and exports nothing


_TOKENS = [b"<|endoftext|>", b"<|endoftext|>", b"<|b|>", b"<|>"]


def _bytes_source(data: bytes) -> str:
    """``data`` as a Python expression, a run of 16+ equal bytes written ``b'a' * n``."""
    parts, literal = [], b""
    for run in regex.finditer(rb"(?s)(.)\1*", data):
        chunk = run.group()
        if len(chunk) < 16:
            literal += chunk
            continue
        if literal:
            parts.append(repr(literal))
        parts.append(f"{bytes(chunk[:1])!r} * {len(chunk)}")
        literal = b""
    if literal or not parts:
        parts.append(repr(literal))
    return " + ".join(parts)


def _boundaries_call(name: str, args: Args) -> str:
    data, n, token = args
    return f"{name}({_bytes_source(data)}, {n!r}, {token!r})"


def _chunked_data(rng: random.Random, token: bytes, long: bool) -> bytes:
    """Bits of the docs and of Chinese between tokens (the given one, another,
    none); ``long``: with a run of 9000+ of one byte before a token, so that
    with 2 chunks the token lies past a read window of 4096 bytes after the guess."""
    docs = python_docs()
    parts = []
    for _ in range(rng.randint(1, 6)):
        start = rng.randrange(len(docs) - 60)
        text = docs[start : start + rng.randint(0, 50)] if rng.random() < 0.7 else rng.choice(["今天", "天气", "很好"])
        parts += [text.encode("utf-8"), rng.choice([token, token, b"<|a|>", b""])]
    if long:
        parts.insert(rng.randint(0, 2), bytes([rng.choice(b"ab")]) * rng.randint(9000, 13000) + token)
    return b"".join(parts)


@register("08_scale_find_chunk_boundaries", chunk_boundaries, _boundaries_call)
def _boundaries_inputs(rng: random.Random) -> list[Args]:
    def make() -> Args:
        token, long = rng.choice(_TOKENS), rng.random() < 0.3
        return _chunked_data(rng, token, long), 2 if long else rng.randint(1, 10), token

    return draw(make)


_COUNT_WORDS = ["the", " end", "end", "start", "The", "low", " lower", "don't", "a", "b", "  indented", "naïve", "今天"]


def _count_chunk(text: str, special_tokens: list[str]) -> dict[str, int]:
    return dict(chunk_counts(text, special_tokens))


@register("08_scale_count_chunk", _count_chunk)
def _count_chunk_inputs(rng: random.Random) -> list[Args]:
    def make() -> Args:
        specials = rng.choice(SPECIAL_SETS[1:] * 2 + SPECIAL_SETS[:1])
        text = mix(rng, _COUNT_WORDS + specials * 4, [" ", "", "", "\n\n", "  "], 9)
        return text, list(specials)

    return draw(make)


_PRETOKENS = [" the", "low", " a", "x", "\n", " lower", "y"]


def _merge_counts(counts: list[dict[str, int]], given_back: bool = False) -> Any:
    """The total; ``given_back``: and the Counters as they were given (the
    call form that catches a first Counter made the total)."""
    from collections import Counter

    total = dict(merged_counts([Counter(c) for c in counts]))
    return (total, [dict(c) for c in counts]) if given_back else total


def _merge_counts_call(name: str, args: Args) -> str:
    counters = f"[{', '.join(f'Counter({c!r})' for c in args[0])}]"
    return f"(lambda cs: ({name}(cs), cs))({counters})" if args[1] else f"{name}({counters})"


@register("08_scale_merge_counts", _merge_counts, _merge_counts_call, name="merge_counts")
def _merge_counts_inputs(rng: random.Random) -> list[Args]:
    def counter() -> dict[str, int]:
        return {t: rng.randint(1, 9) for t in rng.sample(_PRETOKENS, rng.randint(0, 4))}

    return draw(lambda: ([counter() for _ in range(rng.randint(1, 5))], True))


_STREAM_WORDS = [
    "I'll",
    " you'll",
    " we're",
    " they've",
    " it's",
    " don't",
    " low",
    " lower",
    "  ",
    "\n\n",
    " naïve",
    " 今天",
]


def _encode_stream(tail: dict[int, bytes], merges: list[tuple[bytes, bytes]], text: str, block: int) -> Args:
    """The ids of the whole text, the block size (no read may be larger) and
    the most bytes a function may hold (``held_limit``): the call caps the
    kernel's two figures at these, so a function within them gives exactly this."""
    tokenizer = tokenizer_of(tail, merges, [])
    return tokenizer.encode(text), block, held_limit(tokenizer, text, block)


def _encode_stream_call(name: str, args: Args) -> str:
    tail, merges, text, block = args
    limit = _encode_stream(tail, merges, text, block)[2]
    return (
        f"(lambda t, f: (f.drain(t, {name}(t, f, {block})), max(f.largest_read, {block}), max(f.most_held, {limit})))"
        f"({tokenizer_source(tail, merges, [])}, check.MeteredText({text!r}))"
    )


@register("08_scale_encode_stream", _encode_stream, _encode_stream_call)
def _encode_stream_inputs(rng: random.Random) -> list[Args]:
    docs = python_docs()

    def make() -> Args | None:
        train = "".join(rng.choice(_STREAM_WORDS) for _ in range(rng.randint(20, 40)))
        vocab, merges = trained_on(train, 256 + rng.randint(4, 24), [])
        parts = []
        for _ in range(rng.randint(3, 8)):
            start = rng.randrange(len(docs) - 100)
            parts.append(docs[start : start + rng.randint(10, 90)] if rng.random() < 0.6 else rng.choice(_STREAM_WORDS))
        text, block = "".join(parts), rng.choice([1, 2, 3, 5, 8, 16, 32])
        tail = {i: t for i, t in vocab.items() if i >= 256}
        return (
            (tail, merges, text, block)
            if len(text.encode()) > 2 * _encode_stream(tail, merges, text, block)[2]
            else None
        )

    return draw(make)
