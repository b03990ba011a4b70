"""Chapter 05's checks: GPT-2's byte map, byte-level encoding and decoding.

What this adds to ``runner``: texts where byte-level mistakes show (special
tokens, runs of spaces, characters of several bytes, tokens that cut a
character in half), ``bpe_lab.bytelevel.tokenizer.Tokenizer`` as the
reference, and hints that recompute the wrong answer (no special tokens,
no pre-tokenizing) to recognise it.

The ``bpe_lab.bytelevel`` modules are imported inside the checks, so that
the checks of chapters 01-04 keep working whatever happens to them.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from bpe_lab.grading.check.runner import compare, rng, run_cases, short

if TYPE_CHECKING:
    from bpe_lab.bytelevel.tokenizer import Tokenizer

__all__ = ["check_bytes_to_unicode", "check_encode_bytelevel", "check_decode_bytelevel", "bytelevel_texts"]

Merges = list[tuple[bytes, bytes]]


def check_bytes_to_unicode(fn: Callable[[], dict[int, str]]) -> None:
    """``fn() -> {byte: character}``: GPT-2's printable stand-in for each byte."""
    run_cases("bytes_to_unicode", fn, [()], _byte_map_verdict, shown=lambda: "", count=256)


def _byte_map_verdict(got: Any) -> str | None:
    from bpe_lab.bytelevel.byte_map import bytes_to_unicode

    expected = bytes_to_unicode()
    if not isinstance(got, Mapping) or sorted(got) != list(range(256)):
        return "return a dict with one entry for every byte value 0..255"
    if len(set(got.values())) != 256:
        return "two bytes map to the same character: the map must be one-to-one, or decoding is ambiguous"
    for byte in range(256):
        if got[byte] != expected[byte]:
            return f"byte {byte}: expected {expected[byte]!r}, got {short(got[byte])}{_byte_hint(byte, expected)}"
    return None


def _byte_hint(byte: int, expected: dict[int, str]) -> str:
    if expected[byte] == chr(byte):
        return ": a printable byte ('!'..'~', '¡'..'¬', '®'..'ÿ') stands for itself, chr(byte)"
    return ": the other bytes get chr(256), chr(257), ... in byte order (so the space, byte 32, becomes 'Ġ')"


_BYTELEVEL_TEXTS = [
    "Hello world!",
    "the  end<|endoftext|>The start",
    "naïve café, 今天天气很好",
    "<|endoftext|><|endoftext|>",
    "",
    "don't stop\n\n  indented",
    "a<|endoftext|>b",
]


def bytelevel_texts(generator: random.Random) -> list[str]:
    """Fixed texts where the mistakes show, then stretches of the Python docs."""
    from bpe_lab.core.corpora import python_docs

    docs = python_docs()
    starts = [generator.randrange(len(docs) - 200) for _ in range(8)]
    return _BYTELEVEL_TEXTS + [docs[s : s + generator.randint(20, 200)] for s in starts]


def check_encode_bytelevel(
    fn: Callable[..., list[int]], vocab: dict[int, bytes], merges: Merges, special_tokens: list[str]
) -> None:
    """``fn(text, vocab, merges, special_tokens) -> ids`` equal to
    ``bpe_lab.Tokenizer(vocab, merges, special_tokens).encode(text)``."""
    from bpe_lab.bytelevel.tokenizer import Tokenizer

    reference = Tokenizer(vocab, merges, special_tokens)
    cases = [(text, vocab, merges, special_tokens) for text in bytelevel_texts(rng())]
    verdict = compare(
        lambda text, *_: reference.encode(text),
        lambda expected, got, text, *_: _bytelevel_hint(reference, text, expected, got),
        expected_shown=lambda expected: short(expected, 100),
        got_limit=100,
    )
    run_cases(
        "encode", fn, cases, verdict, shown=lambda text, *_: f"{short(text, 60)}, ...", exercise="encode_bytelevel"
    )


def _bytelevel_hint(reference: Tokenizer, text: str, expected: list[int], got: object) -> str:
    if not isinstance(got, list) or not all(isinstance(i, int) for i in got):
        return ": return a list of int ids"
    special_ids = set(reference.special_ids.values())
    if special_ids & set(expected) and not special_ids & set(got):
        return ": find special tokens first (split_special) and give each its own id; they are never split into bytes"
    if got == list(text.encode("utf-8")):
        return ": no merge was applied: replay the merges by rank inside each pre-token"
    if got == _without_pretokenizing(reference, text):
        return ": cut each stretch with gpt2_pretokenize first: merges never cross pre-token boundaries"
    if reference.decode(got) != text:
        return ": your ids do not even decode back to the text; look up each final token's bytes in the vocabulary"
    return (
        ": same text, different tokens: cut with gpt2_pretokenize, then join the lowest-rank pair first, "
        "inside each pre-token"
    )


def _without_pretokenizing(reference: Tokenizer, text: str) -> list[int]:
    """The ids a learner gets who merges across pre-tokens: rank replay over
    each whole stretch between special tokens."""
    from bpe_lab.bytelevel.encoders import replay_merges
    from bpe_lab.core.pretokenize import split_special

    id_of = {token: i for i, token in reference.vocab.items()}
    ids: list[int] = []
    for piece, special in split_special(text, reference.special_tokens):
        if special:
            ids.append(reference.special_ids[piece])
        else:
            ids.extend(id_of[t] for t in replay_merges(piece.encode("utf-8"), reference.pair_ranks))
    return ids


def check_decode_bytelevel(
    fn: Callable[[list[int], dict[int, bytes]], str],
    vocab: dict[int, bytes],
    merges: Merges,
    special_tokens: list[str],
) -> None:
    """``fn(ids, vocab) -> text`` equal to ``bpe_lab.Tokenizer.decode``,
    including ids that cut a character in half (they decode to U+FFFD)."""
    from bpe_lab.bytelevel.tokenizer import Tokenizer

    reference = Tokenizer(vocab, merges, special_tokens)
    id_lists = [reference.encode(t) for t in bytelevel_texts(rng())] + [
        [195],
        [104, 195, 169, 33],
        list("今".encode())[:2],
    ]
    verdict = compare(lambda ids, _: reference.decode(ids), _decode_hint, expected_shown=repr)
    cases = [(ids, vocab) for ids in id_lists]
    run_cases(
        "decode", fn, cases, verdict, shown=lambda ids, _: f"{short(ids, 80)}, vocab", exercise="decode_bytelevel"
    )


def _decode_hint(expected: str, got: object, *_: object) -> str:
    if isinstance(got, str) and "\ufffd" in got and got.replace("\ufffd", "") != expected.replace("\ufffd", ""):
        return ": join the bytes of all the ids first, then decode once: one character can span several tokens"
    return ": decode the joined bytes once, as UTF-8 with errors='replace'"
