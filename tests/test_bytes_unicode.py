"""GPT-2's printable byte map: a bijection that leaves printable Latin-1 alone."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpe_lab.bytelevel.byte_map import bytes_to_unicode, printable_to_token, token_to_printable, unicode_to_bytes


def test_bijection_over_all_bytes():
    table = bytes_to_unicode()
    assert sorted(table) == list(range(256))
    assert len(set(table.values())) == 256
    assert unicode_to_bytes() == {ch: b for b, ch in table.items()}


def test_printable_bytes_stand_for_themselves_and_the_rest_start_at_u0100():
    table = bytes_to_unicode()
    assert table[ord("A")] == "A" and table[ord("é".encode("latin-1"))] == "é"
    assert table[0] == "\u0100" and table[ord(" ")] == "Ġ" and table[ord("\n")] == "Ċ"
    assert all(ch.isprintable() and not ch.isspace() for ch in table.values())


@given(st.binary())
def test_round_trip(data):
    assert printable_to_token(token_to_printable(data)) == data


def test_unknown_character_is_named():
    with pytest.raises(ValueError, match=r"contains '☃' \(U\+2603\)"):
        printable_to_token("a\u2603")
