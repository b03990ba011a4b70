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

Those two figures are ``MeteredText``'s, counted in the kernel: a
submission can forge them. So the last generated case is one the grader
measures itself, the same for everyone: ``check.MeteredText.held_by(encode_stream, 4096)``
(which counts the same way at home), planned here (``MEASURED``) and run
by ``run.measure``. An untimed cell (``run.in_kernel.measured_setup``,
sent the unit, the number of copies and the tokenizer's vocabulary tail
and merges as data) writes ``COPIES`` copies of ``check.scale.long_text``'s
unit (4,003 characters of the docs and a smiley) into a file in the
kernel's folder, 3.6 million characters that Python keeps at 4 bytes each
(the smiley lies outside the Basic Multilingual Plane), 14 MB as a str;
the timed cell (the probe's hidden call ``in_kernel.streamed(NAME, BLOCK)``)
streams the file through the learner's function with ``check.scale.BLOCK``
characters a read, counting and hashing the ids as they come (it holds
none of them); the grader samples the kernel tree's resident memory meanwhile.
The peak over the level before the cell must stay under ``HELD_BOUND``
(1 MB: 64 blocks of 4-byte characters), and the count and hash must be
those of ``Tokenizer.encode`` of the whole text.

**The margins.** A streaming encoder holds a block and what is left of
the one before: some tens of KB, and what Python's allocator keeps around
them (the solution's peak over the level before was 0 MB, every time).
The bound is relative to the block, not to the text: reading the file
whole, even as its UTF-8 bytes (3.6 MB, which a bound of 4 MB once let
pass: ``f.buffer.read()`` behind a text wrapper of its own, 3.1-3.5 MB
measured), holds more than three times the bound for as long as the
encoding takes; as a str it is 14 MB, keeping all its pre-tokens (a str
each) some 50 MB more, and encoding it whole more again: each from three
to dozens of times the bound. A look at the
memory scans ``/proc`` every ``run.measure.SAMPLE`` seconds; the encoding
takes far longer than that on any machine, so a held copy is seen.
What it does not catch: memory taken from the system before the cell and
kept resident (a heap grown on purpose and reused), code written to dodge
the measurement.
"""

from __future__ import annotations

import functools
import hashlib
import random
from typing import Any

import regex

from bpe_lab.core.corpora import python_docs
from bpe_lab.grading.cases.generators import (
    CASES_PER_TASK,
    MEASURED,
    SPECIAL_SETS,
    Args,
    Measured,
    draw,
    kernel_call,
    mix,
    register,
    tokenizer_of,
    tokenizer_source,
    trained_on,
)
from bpe_lab.grading.check.scale import BLOCK, chunk_boundaries, chunk_counts, held_limit, long_text, merged_counts

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


#: The inputs of the generated case the grader measures itself (``_held_plan``): always the same.
_HELD: Args = ("held_by",)


def _stream_reference(*args: Any) -> Any:
    """``_encode_stream``, or ``"bounded"`` for the measured case."""
    return "bounded" if args == _HELD else _encode_stream(*args)


def _encode_stream_call(name: str, args: Args) -> str:
    if args == _HELD:
        return f"check.MeteredText.held_by({name}, {BLOCK})"  # its arguments: no message holds them
    tail, merges, text, block = args
    limit = _encode_stream(tail, merges, text, block)[2]
    return (
        f"(lambda t, f: (f.drain(t, {name}(t, f, {block})), max(f.largest_read, {block}), max(f.most_held, {limit})))"
        f"({tokenizer_source(tail, merges, [])}, check.MeteredText({text!r}))"
    )


@register("08_scale_encode_stream", _stream_reference, _encode_stream_call)
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

    return draw(make, CASES_PER_TASK - 1) + [_HELD]  # the first four as before, then the measured one


# ------------------------------------------------ measured: a stream that must not hold the whole text

#: Copies of ``long_text``'s unit the measured case streams (3.6 million characters).
COPIES = 900
#: Resident bytes the measured call may add over the level before it: 64 blocks of ``BLOCK`` characters at
#: 4 bytes each (1 MB), a few times less than the text's UTF-8 bytes (see the module's docstring).
HELD_BOUND = 64 * 4 * BLOCK
#: The file the measured case streams, in the kernel's folder.
_FILE = "bpe-lab-measured.txt"


@functools.cache
def _long_tokenizer() -> tuple[dict[int, bytes], list[tuple[bytes, bytes]], tuple[int, str]]:
    """A tokenizer trained on the long text's unit (its vocabulary's tail and
    merges), and the count and SHA-256 of its ids for the whole long text."""
    unit = long_text(1)
    vocab, merges = trained_on(unit, 256 + 200, [])
    tail = {i: t for i, t in vocab.items() if i >= 256}
    ids = tokenizer_of(tail, merges, []).encode(long_text(COPIES))
    digest = hashlib.sha256(b"".join(i.to_bytes(4, "little") for i in ids)).hexdigest()
    return tail, merges, (len(ids), digest)


def _held_plan(call: str) -> Measured | None:
    """The measured plan of ``check.MeteredText.held_by(NAME, BLOCK)``, or None."""
    prefix, suffix = "check.MeteredText.held_by(", f", {BLOCK})"
    name = call[len(prefix) : -len(suffix)] if call.startswith(prefix) and call.endswith(suffix) else ""
    if not name.isidentifier():
        return None
    tail, merges, expected = _long_tokenizer()
    unit = long_text(1)
    data = {"file": _FILE, "unit": unit, "copies": COPIES, "tail": tail, "merges": merges}
    setup = kernel_call("measured_setup", repr("held"), repr(data))
    timed = kernel_call("streamed", name, repr(BLOCK))
    size = f"a file of {COPIES * len(unit):,} characters read {BLOCK} at a time"
    return Measured(
        "memory",
        setup,
        ((timed, 1, expected),),
        kernel_call("measured_cleanup"),
        HELD_BOUND,
        size,
        "held the whole text",
        "bounded",
    )


MEASURED.append(_held_plan)
