"""The three pre-token encoders agree (rank replay, C-speed scan, linked list + heap)."""

from functools import lru_cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_lab.bytelevel.encoders import LONG_PIECE, heap_merges, merge_bytes, replay_merges, scan_merges
from bpe_lab.bytelevel.gpt2 import gpt2_tokenizer

ENCODERS = [replay_merges, scan_merges, heap_merges, merge_bytes]


@lru_cache(maxsize=1)
def gpt2_ranks():
    return gpt2_tokenizer().pair_ranks


@st.composite
def merge_tables(draw):
    """Random but valid merge lists over a 3-byte alphabet: each merge joins
    two symbols that exist already (bytes or earlier results)."""
    symbols = [b"a", b"b", b"c"]
    ranks = {}
    for _ in range(draw(st.integers(0, 25))):
        pair = (draw(st.sampled_from(symbols)), draw(st.sampled_from(symbols)))
        if pair not in ranks:
            ranks[pair] = len(ranks)
            if pair[0] + pair[1] not in symbols:
                symbols.append(pair[0] + pair[1])
    return ranks


@settings(max_examples=300)
@given(ranks=merge_tables(), data=st.binary(max_size=60).map(lambda b: bytes(b"abc"[x % 3] for x in b)))
def test_encoders_agree_on_random_merges(ranks, data):
    expected = replay_merges(data, ranks)
    assert b"".join(expected) == data
    for encode in ENCODERS[1:]:
        assert encode(data, ranks) == expected


@settings(max_examples=100)
@given(text=st.text(min_size=1, max_size=40))
def test_encoders_agree_on_gpt2(text):
    ranks = gpt2_ranks()
    data = text.encode("utf-8", "surrogatepass")
    expected = replay_merges(data, ranks)
    for encode in ENCODERS[1:]:
        assert encode(data, ranks) == expected


@pytest.mark.parametrize("data", [b" " * (LONG_PIECE + 300), b"ab" * 400, "🎉".encode() * 100, bytes(range(256)) * 2])
def test_long_pieces(data):
    ranks = gpt2_ranks()
    assert (
        heap_merges(data, ranks) == scan_merges(data, ranks) == merge_bytes(data, ranks) == replay_merges(data, ranks)
    )


def test_leftmost_pair_first_on_ties():
    ranks = {(b"a", b"a"): 0}
    for encode in ENCODERS:
        assert encode(b"aaa", ranks) == [b"aa", b"a"]
        assert encode(b"aaaa", ranks) == [b"aa", b"aa"]


def test_rank_replay_is_not_longest_match():
    # (a,b) fires first, and no merge joins ab with c: "abc" is in the table's
    # results but is not reached (the example of encode.py, in bytes)
    ranks = {(b"a", b"b"): 0, (b"b", b"c"): 1, (b"a", b"bc"): 2}
    for encode in ENCODERS:
        assert encode(b"abc", ranks) == [b"ab", b"c"]
        assert encode(b"", ranks) == []
        assert encode(b"x", ranks) == [b"x"]
