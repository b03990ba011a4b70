"""Chapter 01's checks: Gage's byte-pair compression, over the shared runner.

What this adds to ``runner``: the cases where Gage's mistakes show (runs
such as ``b"aaaa"`` where overlapping counts differ, ties, nested codes),
the reference (``bpe_lab.variants.compression``) and the hints that name
each mistake. Last, the check of notebook 01's "your turn", one step of a
round: ``replace_pair``, every occurrence of one pair replaced by its code.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

from bpe_lab.grading.check.runner import compare, rng, run_cases, short
from bpe_lab.variants.compression import Compressed, compress, decompress

__all__ = ["check_most_frequent_pair", "check_compress", "check_decompress", "first_round", "compress_cases"]
__all__ += ["replaced", "check_replace_pair"]

PairCount = tuple[tuple[int, int], int]
Table = dict[int, tuple[int, int]]


def first_round(data: bytes) -> PairCount | None:
    """The reference for ``most_frequent_pair``: Gage's first replacement
    ``((a, b), count)``, or None when no pair occurs twice."""
    rounds = compress(data, max_rounds=1).rounds
    return (rounds[0].pair, rounds[0].count) if rounds else None


def _compression_cases(generator: random.Random) -> Iterator[bytes]:
    yield from (b"abababcab", b"aaaa", b"abcdcdab", b"aaaaaaaa", b"the theme of the thesis")
    for _ in range(20):
        yield bytes(generator.choice(b"abcd") for _ in range(generator.randint(4, 40)))


def check_most_frequent_pair(fn: Callable[[bytes], PairCount]) -> None:
    """``fn(data) -> ((a, b), count)``: the pair with the most non-overlapping
    occurrences, ties to the pair that occurs first in the data."""
    cases = [(d,) for d in _compression_cases(rng()) if first_round(d)]
    run_cases("most_frequent_pair", fn, cases, compare(first_round, _pair_hint))


def _pair_hint(expected: PairCount, got: object, data: bytes) -> str:
    if not (isinstance(got, tuple) and len(got) == 2 and isinstance(got[0], tuple)):
        return ": return a tuple ((a, b), count) with a and b byte values (ints)"
    (pair, count), (got_pair, got_count) = expected, got
    overlapping = sum(1 for p in zip(data, data[1:]) if p == tuple(got_pair))
    if got_pair == pair and got_count == overlapping != count:
        return (
            ": count non-overlapping occurrences: b'aaaa' holds b'aa' only twice side by side (bytes.count does this)"
        )
    if got_count == count:
        return ": ties go to the pair that occurs first in the data"
    return ""


def compress_cases(generator: random.Random) -> list[bytes]:
    """The data that ``check_compress`` and ``check_decompress`` pack."""
    return [b"abababcab", b"aaaaaaaa", b"the theme of the thesis"] + [
        bytes(generator.choice(b"abc") for _ in range(generator.randint(2, 30))) for _ in range(15)
    ]


def check_compress(fn: Callable[[bytes], tuple[bytes, Table]]) -> None:
    """``fn(data) -> (packed, table)`` with ``table = {code: (a, b)}`` in the
    order the replacements were made, equal to ``bpe_lab.compress``."""
    cases = [(data,) for data in compress_cases(rng())]
    run_cases("compress", fn, cases, _compress_verdict)


def _compress_verdict(got: object, data: bytes) -> str | None:
    ref = compress(data)
    if not (isinstance(got, tuple) and len(got) == 2 and isinstance(got[1], dict)):
        return f"return a tuple (packed_bytes, table_dict), got {short(got)}"
    packed, table = got
    if packed == ref.data and list(table.items()) == list(ref.table.items()):
        return None
    reused = _reused_code(data, got)
    if reused:
        return reused
    hint = _table_hint(ref, list(table.items()))
    if hint:
        return hint
    if packed != ref.data:
        return (
            f"the table is right but the data is {short(packed)}, expected {ref.data!r}: "
            "replace every non-overlapping occurrence, left to right (bytes.replace does this)"
        )
    return None


def _reusing(data: bytes) -> tuple[bytes, list[tuple[int, tuple[int, int]]]]:
    """The classic mistake: each round's code is the smallest byte value
    missing from the data *as it is now*, so a code (or byte) that a round
    took out of the data is given again; its table entries in order, one
    per round (a dict keeps only the last pair of a code given twice)."""
    rounds: list[tuple[int, tuple[int, int]]] = []
    while True:
        step = compress(data, max_rounds=1)  # a fresh call sees only the data as it is now
        if not step.rounds:
            return data, rounds
        data = step.data
        rounds.append(next(iter(step.table.items())))


def _reused_code(data: bytes, got: tuple[Any, Any]) -> str | None:
    """The message for a ``compress`` that gives a freed byte value again
    (``_reusing``), naming the round and what the value stood for; None
    for any other answer."""
    packed, rounds = _reusing(data)
    if got != (packed, dict(rounds)):
        return None
    rule = "the smallest byte value that never occurred, neither in the data nor as an earlier code"
    for k, (code, pair) in enumerate(rounds, start=1):
        earlier = next((j for j, (c, _) in enumerate(rounds[: k - 1], start=1) if c == code), None)
        if earlier is not None:
            old = rounds[earlier - 1][1]
            return (
                f"replacement {k}: {pair} gets code {code}, which already stands for {old} (replacement {earlier}): "
                f"a code that left the data is still in the table, and the table keeps one pair per code, so {old} "
                f"is lost. Use {rule}"
            )
        if code in data:
            return (
                f"replacement {k}: {pair} gets code {code}, a byte value that occurs in the data you were given "
                f"(a replacement took its last occurrence out): use {rule}"
            )
    return None


def _table_hint(ref: Compressed, got: list[tuple[int, tuple[int, int]]]) -> str | None:
    want = list(ref.table.items())
    for i, (expected, actual) in enumerate(zip(want, got), start=1):
        if expected == actual:
            continue
        (code, pair), (got_code, got_pair) = expected, actual
        if pair != got_pair:
            return (
                f"replacement {i}: expected pair {pair} (count {ref.rounds[i - 1].count}), got {got_pair}: "
                "see most_frequent_pair"
            )
        return (
            f"replacement {i}: expected code {code}, got {got_code}: use the smallest byte value that never "
            "occurred, neither in the data nor as an earlier code"
        )
    if len(got) > len(want):
        return (
            f"expected {len(want)} replacements, got {len(got)}: stop when no pair occurs twice "
            "(a replacement would not pay for its table entry)"
        )
    if len(got) < len(want):
        return (
            f"expected {len(want)} replacements, got {len(got)}: keep going while some pair occurs at least "
            "twice and a byte value is free"
        )
    return None


def check_decompress(fn: Callable[[bytes, Table], bytes]) -> None:
    """``fn(packed, table) -> data`` restores what ``bpe_lab.compress`` packed."""
    cases = [(ref.data, dict(ref.table)) for ref in map(compress, compress_cases(rng()))]
    run_cases("decompress", fn, cases, _decompress_verdict)


def _decompress_verdict(got: object, packed: bytes, table: Table) -> str | None:
    expected = decompress(Compressed(packed, table, (), 0))
    if got == expected:
        return None
    if not isinstance(got, (bytes, bytearray)):
        return f"return bytes, got {short(got)}"
    hint = ""
    if any(code in got for code in table):
        hint = (
            ": codes can stand for pairs that contain earlier codes, so expand the newest code first "
            "(walk the table in reverse)"
        )
    return f"expected {expected!r}, got {short(bytes(got))}{hint}"


# ------------------------------------------------------------ notebook 01's "your turn": one replacement


def replaced(data: bytes, pair: tuple[int, int], code: int) -> bytes:
    """The reference for ``replace_pair``: every non-overlapping occurrence of
    ``pair``, left to right, replaced by the byte ``code``, as a round of
    ``compress`` rewrites the data (``bytes.replace`` scans that way)."""
    return bytes(data).replace(bytes(pair), bytes([code]))


#: Worked by hand: notebook 01's round 1; overlapping runs (``aaa`` is code
#: then ``a``, ``aaaa`` two codes); a pair that is not there; codes in codes.
REPLACE_CASES: list[tuple[bytes, tuple[int, int], int]] = [
    (b"ababcababcab", (97, 98), 0),
    (b"aaa", (97, 97), 0),
    (b"aaaa", (97, 97), 1),
    (b"abcabc", (99, 97), 2),
    (b"abc", (120, 121), 0),
    (b"\x00\x00c\x00\x00c\x00", (0, 0), 1),
]


def _replace_cases(generator: random.Random) -> list[tuple[bytes, tuple[int, int], int]]:
    randoms = []
    for _ in range(20):
        data = bytes(generator.choice(b"ab") for _ in range(generator.randint(2, 12)))
        randoms.append((data, (generator.choice(b"ab"), generator.choice(b"ab")), generator.randrange(4)))
    return REPLACE_CASES + randoms


def check_replace_pair(fn: Callable[[bytes, tuple[int, int], int], bytes]) -> None:
    """``fn(data, pair, code) -> bytes``: one round's rewrite, every
    non-overlapping occurrence of ``pair`` (left to right) replaced by ``code``."""
    run_cases("replace_pair", fn, _replace_cases(rng()), compare(replaced, _replace_hint, expected_shown=repr))


def _no_skip(data: bytes, pair: tuple[int, int], code: int) -> bytes:
    """The classic mistake: a code where the pair starts, then the scan goes
    on at the pair's second byte instead of after it."""
    out, i = bytearray(), 0
    while i < len(data):
        if tuple(data[i : i + 2]) == pair:
            out.append(code)
        else:
            out.append(data[i])
        i += 1
    return bytes(out)


def _from_the_right(data: bytes, pair: tuple[int, int], code: int) -> bytes:
    return replaced(data[::-1], (pair[1], pair[0]), code)[::-1]


def _replace_hint(expected: bytes, got: object, data: bytes, pair: tuple[int, int], code: int) -> str:
    if isinstance(got, (list, bytearray)) and bytes(got) == expected:
        return ": return bytes (bytes(...) turns a list of byte values into bytes)"
    if not isinstance(got, bytes):
        return ": return bytes, the data after the replacement"
    if got == _from_the_right(data, pair, code):
        return f": scan from the left: in {data!r} the first {bytes(pair)!r} starts at the left end"
    if got == _no_skip(data, pair, code):
        return (
            ": after a replacement, go on after both bytes of the pair: occurrences never overlap, "
            "so b'aaa' becomes the code then b'a'"
        )
    if got == bytes(data).replace(bytes(pair), bytes([code]), 1):
        return ": replace every occurrence, not only the first"
    if got == data:
        return ": nothing was replaced"
    return ""
