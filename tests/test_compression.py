"""Gage's byte-pair compression: exact rounds on small inputs, exact round trips."""

import sysconfig
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpe_lab.variants.compression import Compressed, Replacement, compress, decompress


def test_hand_worked_example():
    packed = compress(b"abababcab")
    # 'ab' occurs 4 times; 0x00 is the smallest unused byte value
    assert packed.rounds == (Replacement(pair=(97, 98), byte=0, count=4, length=5),)
    assert packed.data == b"\x00\x00\x00c\x00"
    assert packed.table == {0: (97, 98)}
    assert decompress(packed) == b"abababcab"


def test_new_symbols_stack_like_subwords():
    packed = compress(b"aaaa" * 4)
    # 'aa' fits 8 times side by side, then the new byte pairs with itself
    assert [(r.pair, r.count, r.length) for r in packed.rounds] == [
        ((97, 97), 8, 8),
        ((0, 0), 4, 4),
        ((1, 1), 2, 2),
    ]
    assert packed.data == b"\x02\x02"
    assert decompress(packed) == b"a" * 16


def test_overlapping_run_counts_non_overlapping_occurrences():
    packed = compress(b"aaab" * 2)  # 'aa' fits once per 'aaa', 'ab' once each
    first = packed.rounds[0]
    assert first.count == 2
    assert decompress(packed) == b"aaab" * 2


def test_ties_go_to_the_pair_met_first():
    packed = compress(b"xyzxyz")
    assert packed.rounds[0].pair == (ord("x"), ord("y"))


def test_stops_when_no_pair_repeats():
    packed = compress(b"abcdef")
    assert packed.rounds == ()
    assert packed.data == b"abcdef"
    assert packed.ratio() == 1.0


def test_stops_when_no_byte_value_is_free():
    data = bytes(range(256)) * 2
    packed = compress(data)
    assert packed.rounds == ()
    assert decompress(packed) == data


def test_uses_only_bytes_absent_from_the_input():
    data = bytes(range(250)) * 3 + b"hello hello hello"
    packed = compress(data)
    assert 0 < len(packed.rounds) <= 6
    assert {r.byte for r in packed.rounds} <= set(range(250, 256))
    assert decompress(packed) == data


def test_real_text_shrinks_and_round_trips():
    text = (Path(sysconfig.get_paths()["stdlib"]) / "this.py").read_bytes()
    packed = compress(text)
    lengths = [r.length for r in packed.rounds]
    assert lengths == sorted(lengths, reverse=True)
    assert packed.ratio() < 0.9
    assert decompress(packed) == text


def test_max_rounds_and_bad_input():
    assert len(compress(b"abab" * 10, max_rounds=1).rounds) == 1
    assert compress(b"").rounds == ()
    with pytest.raises(TypeError, match="encode text first"):
        compress("text")
    with pytest.raises(ValueError, match="max_rounds"):
        compress(b"ab", max_rounds=-1)
    with pytest.raises(TypeError, match="needs a Compressed"):
        decompress(b"ab")
    with pytest.raises(ValueError, match="malformed table entry"):
        decompress(Compressed(b"\x00", {0: (97, 300)}, (), 2))


@given(st.binary(max_size=300))
def test_decompress_inverts_compress(data):
    packed = compress(data)
    assert decompress(packed) == data
    assert len(packed.data) <= len(data)
    for r in packed.rounds:
        assert r.count >= 2 and r.byte not in data


@given(st.text(alphabet="ab ", max_size=200))
def test_each_round_saves_count_bytes(text):
    data = text.encode()
    packed = compress(data)
    length = len(data)
    for r in packed.rounds:
        assert r.length == length - r.count
        length = r.length
