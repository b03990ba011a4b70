"""The pre-token encoders agree: rank replay (the definition), the C-speed scan
and the linked list + heap, on bytes and on ids, and ``byte_pair_encode``,
the one dispatch the Tokenizer uses."""

from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_lab.bytelevel import encoders, gpt2
from bpe_lab.bytelevel.encoders import (
    LONG_PIECE,
    MergeTable,
    byte_pair_encode,
    heap_merge_ids,
    heap_merges,
    replay_merges,
    scan_merge_ids,
    scan_merges,
)
from bpe_lab.bytelevel.gpt2 import gpt2_tokenizer


class Table:
    """A merge list in both forms: byte ranks and ``MergeTable`` ids."""

    def __init__(self, ranks, id_of=None):
        merges = sorted(ranks, key=ranks.get)
        if id_of is None:  # the bytes, then each new merge result
            id_of = {bytes([b]): b for b in range(256)}
            for left, right in merges:
                id_of.setdefault(left + right, len(id_of))
        self.ranks = ranks
        self.ids = MergeTable.from_merges(merges, id_of)
        self.token_of = {i: token for token, i in id_of.items()}

    def tokens(self, ids):
        return [self.token_of[i] for i in ids]

    def every_encoding(self, data):
        """Each encoder's tokens for ``data``, by encoder name."""
        byte_ids = [self.ids.byte_ids[b] for b in data]
        got = {encode.__name__: encode(data, self.ranks) for encode in (replay_merges, scan_merges, heap_merges)}
        for encode in (scan_merge_ids, heap_merge_ids):
            got[encode.__name__] = self.tokens(encode(list(byte_ids), self.ids.ranks, self.ids.merged))
        got["byte_pair_encode"] = self.tokens(byte_pair_encode(data, self.ids))
        return got


@cache
def gpt2_table():
    tok = gpt2_tokenizer()
    return Table(tok.pair_ranks, {token: i for i, token in tok.vocab.items()})


def assert_all_agree(table, data):
    got = table.every_encoding(data)
    expected = got["replay_merges"]
    assert b"".join(expected) == data
    assert {name: expected for name in got} == got


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
@given(ranks=merge_tables(), data=st.binary(max_size=2 * LONG_PIECE).map(lambda b: bytes(b"abc"[x % 3] for x in b)))
def test_encoders_agree_on_random_merges(ranks, data):
    assert_all_agree(Table(ranks), data)


@settings(max_examples=100)
@given(text=st.text(min_size=1, max_size=40))
def test_encoders_agree_on_gpt2(text):
    assert_all_agree(gpt2_table(), text.encode("utf-8", "surrogatepass"))


@pytest.mark.parametrize(
    "data",
    [b" " * (LONG_PIECE + 300), b"ab" * 400, "🎉".encode() * 100, bytes(range(256)) * 2, b"x" * LONG_PIECE],
)
def test_long_pieces(data):
    assert_all_agree(gpt2_table(), data)


def test_dispatch_scans_up_to_long_piece_and_uses_the_heap_above(monkeypatch):
    table = gpt2_table()
    used = []
    for name in ("scan_replay", "heap_replay"):
        encoder = getattr(encoders, name)
        monkeypatch.setattr(encoders, name, lambda *args, e=encoder, n=name: used.append(n) or e(*args))
    byte_pair_encode(b"a" * LONG_PIECE, table.ids)
    byte_pair_encode(b"a" * (LONG_PIECE + 1), table.ids)
    byte_pair_encode(b"a", table.ids)  # one byte: nothing to merge, neither is called
    assert used == ["scan_replay", "heap_replay"]


def test_the_tokenizer_encodes_a_piece_with_byte_pair_encode():
    tok = gpt2_tokenizer()
    piece = " antidisestablishmentarianism" + "x" * LONG_PIECE  # one pre-token, longer than LONG_PIECE
    assert tok.encode_ordinary(piece) == byte_pair_encode(piece.encode(), gpt2_table().ids)


def test_leftmost_pair_first_on_ties():
    table = Table({(b"a", b"a"): 0})
    assert set(map(tuple, table.every_encoding(b"aaa").values())) == {(b"aa", b"a")}
    assert set(map(tuple, table.every_encoding(b"aaaa").values())) == {(b"aa", b"aa")}


def test_rank_replay_is_not_longest_match():
    # (a,b) fires first, and no merge joins ab with c: "abc" is in the table's
    # results but is not reached (the example of encode.py, in bytes)
    table = Table({(b"a", b"b"): 0, (b"b", b"c"): 1, (b"a", b"bc"): 2})
    assert set(map(tuple, table.every_encoding(b"abc").values())) == {(b"ab", b"c")}
    assert set(map(tuple, table.every_encoding(b"").values())) == {()}
    assert set(map(tuple, table.every_encoding(b"x").values())) == {(b"x",)}


@settings(max_examples=200)
@given(
    ranks=merge_tables(),
    data=st.binary(max_size=2 * LONG_PIECE).map(lambda b: bytes(b"abc"[x % 3] for x in b)),
    seed=st.randoms(use_true_random=False),
)
def test_the_generic_scan_and_heap_take_any_ids(ranks, data, seed):
    """``scan_replay`` and ``heap_replay`` on ids numbered at random (not the
    byte values) give the tokens of the definition, ``replay_merges``; on
    byte strings, joined with ``+``, they give them too."""
    merges = sorted(ranks, key=ranks.get)
    tokens = list(dict.fromkeys([bytes([b]) for b in b"abc"] + [left + right for left, right in merges]))
    numbers = seed.sample(range(10_000), len(tokens))
    id_of = dict(zip(tokens, numbers))
    token_of = dict(zip(numbers, tokens))
    id_ranks = {(id_of[left], id_of[right]): rank for (left, right), rank in ranks.items()}
    merged = [id_of[left + right] for left, right in merges]
    expected = replay_merges(data, ranks)
    for encode in (encoders.scan_replay, encoders.heap_replay):
        assert [token_of[i] for i in encode([id_of[bytes([b])] for b in data], id_ranks, merged)] == expected
        assert encode([bytes([b]) for b in data], ranks) == expected


def test_gpt2s_shipped_splits_are_the_merges_its_ranks_hide():
    """data/gpt2.splits is derived, not trusted: replaying the ranks gives it again."""
    vocab, merges = gpt2.gpt2_vocab_and_merges()
    assert merges == gpt2.merges_from_ranks(gpt2.load_tiktoken_ranks(gpt2.GPT2_RANKS_PATH))
    assert len(vocab) == 50_256 and merges[0] == (b" ", b"t")


def test_a_damaged_splits_file_cannot_pass_for_gpt2(tmp_path, monkeypatch):
    splits = gpt2.GPT2_SPLITS_PATH.read_bytes()
    vocab, merges = gpt2.gpt2_vocab_and_merges()
    # a merge cut where its right part is no earlier token: only the Tokenizer's check can tell
    rank_of = {token: rank for rank, token in vocab.items()}
    i = next(
        i
        for i, (left, right) in enumerate(merges)
        if len(left) > 1 and rank_of.get(left[1:] + right, len(vocab)) >= 256 + i
    )
    monkeypatch.setattr(gpt2, "GPT2_SPLITS_PATH", tmp_path / "gpt2.splits")
    damaged = (
        (splits[:-1], "49,999 splits for 50,000 merges"),
        (splits[:7] + bytes([0]) + splits[8:], "byte 7: cuts the 2-byte token b'er' at 0"),
        (splits[:7] + bytes([2]) + splits[8:], "byte 7: cuts the 2-byte token b'er' at 2"),
        (splits[:i] + bytes([1]) + splits[i + 1 :], f"merge {i} .* neither a single byte nor the result of an earlier"),
    )
    try:
        for data, message in damaged:
            gpt2.GPT2_SPLITS_PATH.write_bytes(data)
            gpt2.gpt2_vocab_and_merges.cache_clear()
            with pytest.raises(ValueError, match=message):
                gpt2.gpt2_tokenizer()
    finally:
        gpt2.gpt2_vocab_and_merges.cache_clear()  # the next call reads the real file again
