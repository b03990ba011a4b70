"""The one incremental merge update (``core/merge_update.WordMerger``),
against the simple reference: rewrite every word with ``merge_symbols`` and
recount every pair after every merge.

Both trainers run on it (``train_fast`` with a set per pair, the byte-level
learner with the compact index), so it is tested here on both kinds of
symbol (``str`` characters; ``bytes`` whose ids are the byte values, as the
byte-level learner numbers them), both index kinds, and both ways of
rewriting a word (in place, and copied into a new list).
"""

from __future__ import annotations

import importlib
from collections import Counter, defaultdict
from itertools import chain
from unittest.mock import patch

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from bpe_lab.core.merge_update import WordMerger, add_word
from bpe_lab.core.words import merge_symbols

merge_update = importlib.import_module("bpe_lab.core.merge_update")


def recount(corpus):
    """Every adjacent pair's weighted count, the textbook way."""
    counts = Counter()
    for symbols, freq in corpus:
        for pair in zip(symbols, symbols[1:]):
            counts[pair] += freq
    return +counts


def replay(words, freqs, picks, *, as_bytes, compact):
    """Merge the pairs ``picks`` chooses, one after another, with
    ``WordMerger`` and with the reference; after every merge the words, the
    counts and the index must agree with a recount."""
    reference = [(tuple(bytes([b]) for b in w) if as_bytes else tuple(w), f) for w, f in zip(words, freqs)]
    if as_bytes:  # the byte-level learner's numbering: ids 0-255 are the bytes
        symbols = [bytes([b]) for b in range(256)]
    else:
        symbols = list(dict.fromkeys(chain.from_iterable(w for w, _ in reference)))
    ids = {s: i for i, s in enumerate(symbols)}
    width = len(symbols) + len(picks) + 1
    state = WordMerger(symbols, [[ids[s] for s in w] for w, _ in reference], list(freqs), width, compact_index=compact)
    counts = Counter()
    for w, word in enumerate(state.words):
        for left, right in zip(word, word[1:]):
            counts[left * width + right] += freqs[w]
            if compact:
                add_word(state.where, left * width + right, w)
            else:
                state.where[left * width + right].add(w)
    for pick in picks:
        if not counts:
            break
        pair = sorted(counts)[pick % len(counts)]
        left, right = divmod(pair, width)
        symbol = symbols[left] + symbols[right]
        joined = ids.setdefault(symbol, len(symbols))
        if joined == len(symbols):
            symbols.append(symbol)
        delta = defaultdict(int)
        visited = state.pop_words(pair)
        assert list(visited) == sorted(set(visited)), "each word once, in word order"
        for w in visited:
            state.merge_word(w, left, right, joined, delta)
        delta.pop(pair, None)
        del counts[pair]
        for p, change in delta.items():
            counts[p] += change
        counts = +counts  # the pairs at 0 leave
        reference = [(merge_symbols(s, (symbols[left], symbols[right])), f) for s, f in reference]
        assert [tuple(symbols[i] for i in word) for word in state.words] == [s for s, _ in reference]
        expected = recount(reference)
        assert {state.pair_of(p): n for p, n in counts.items()} == expected
        for w, word in enumerate(state.words):  # the index holds every word that has a pair
            for p in {a * width + b for a, b in zip(word, word[1:])}:
                ids_of = state.where[p]
                assert w == ids_of if isinstance(ids_of, int) else w in ids_of


word_lists = st.lists(st.text(alphabet="abc", min_size=1, max_size=14), min_size=1, max_size=6)
picks = st.lists(st.integers(0, 10**6), max_size=12)
rewrites = pytest.mark.parametrize("copy_from", [0, 10**9], ids=["copied", "in place"])


@rewrites
@settings(max_examples=150, deadline=None)
@given(words=word_lists, freqs=st.lists(st.integers(1, 5), min_size=6, max_size=6), picks=picks)
@example(words=["abcbc"], freqs=[1] * 6, picks=[1])  # A B C B C, merging (b, c): the second pair by id
@example(words=["aaaa", "aaa"], freqs=[2] * 6, picks=[0, 0])
def test_str_symbols_with_a_set_per_pair(copy_from, words, freqs, picks):
    with patch.object(merge_update, "COPY_FROM", copy_from):
        replay(words, freqs[: len(words)], picks, as_bytes=False, compact=False)


@rewrites
@settings(max_examples=150, deadline=None)
@given(
    words=st.lists(
        st.binary(min_size=1, max_size=14).map(lambda b: bytes(97 + x % 3 for x in b)), min_size=1, max_size=6
    ),
    freqs=st.lists(st.integers(1, 5), min_size=6, max_size=6),
    picks=picks,
)
@example(words=[b"aaaaaaaaaaaa"], freqs=[1] * 6, picks=[0, 0, 0])
def test_byte_ids_with_the_compact_index(copy_from, words, freqs, picks):
    with patch.object(merge_update, "COPY_FROM", copy_from):
        replay([list(w) for w in words], freqs[: len(words)], picks, as_bytes=True, compact=True)


def test_the_worked_cases_of_the_docstring():
    """A B C B C, merging (B, C): (A, B) and (C, B) lost, (A, BC) and
    (BC, BC) gained; (BC, B), made by the first join, is undone by the second."""
    state = WordMerger(["A", "B", "C", "BC"], [[0, 1, 2, 1, 2]], [3], width=10)
    delta = defaultdict(int)
    state.merge_word(0, 1, 2, 3, delta)
    assert state.words == [[0, 3, 3]]
    assert dict(delta) == {1: -3, 3: 3, 21: -3, 31: 0, 33: 3}
    assert state.where[3] == {0} and state.where[33] == {0}
    # a a a a, merging (a, a): the middle (a, a) can no longer join; aa aa remains
    state = WordMerger(["a", "aa"], [[0, 0, 0, 0]], [1], width=4)
    delta = defaultdict(int)
    state.merge_word(0, 0, 0, 1, delta)
    assert state.words == [[1, 1]] and dict(delta) == {0: -1, 1 * 4 + 0: 0, 1 * 4 + 1: 1}


def test_a_lone_word_id_stays_an_int_until_a_second_comes():
    where = {}
    add_word(where, 7, 3)
    add_word(where, 7, 3)  # the same word again: still one int
    assert where == {7: 3}
    add_word(where, 7, 5)
    assert list(where[7]) == [3, 5]
