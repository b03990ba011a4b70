"""The incremental trainer: exactly the textbook trainer's merges, faster."""

import importlib
import warnings
from unittest.mock import patch

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from bpe_lab.core.train import count_pairs, pick_pair, train_bpe
from bpe_lab.core.train_fast import learn_merges, train_fast
from bpe_lab.core.words import merge_symbols

# the module itself, by its import path
merge_update = importlib.import_module("bpe_lab.core.merge_update")


def quietly(trainer, *args, **kwargs):
    return trainer(*args, **kwargs, on_short="ignore")


def test_low_lower_newest_widest(textbook_corpus):
    assert train_fast(textbook_corpus, 5) == [("e", "s"), ("es", "t"), ("est", "</w>"), ("l", "o"), ("lo", "w")]
    assert train_fast(textbook_corpus, 5, tie_break="lexicographic")[:2] == [("t", "</w>"), ("s", "t</w>")]
    for tie_break in ("first", "lexicographic"):
        assert quietly(train_fast, textbook_corpus, 100, tie_break=tie_break) == quietly(
            train_bpe, textbook_corpus, 100, tie_break=tie_break
        )


@pytest.mark.parametrize(
    "word_freq, merges",
    [
        # a run overlaps itself: (a, a) counts 3 but joins twice, then (aa, aa)
        ({"aaaa": 1}, [("a", "a"), ("aa", "aa")]),
        ({"aaa": 2}, [("a", "a"), ("aa", "a")]),
        # A B C B C: (b, c) twice, then the pair the overlap left behind, (bc, bc)
        ({"abcbc": 1}, [("b", "c"), ("a", "bc"), ("abc", "bc")]),
        ({"ababab": 1, "ba": 1}, [("a", "b"), ("ab", "ab"), ("abab", "ab"), ("b", "a")]),
    ],
)
def test_overlaps_and_runs_join_left_to_right(word_freq, merges):
    got = quietly(train_fast, word_freq, 10, end_of_word=None)
    assert got == merges == quietly(train_bpe, word_freq, 10, end_of_word=None)


def test_first_rule_worked_case_from_the_settle_first_docstring():
    word_freq = {"xyz": 1, "pqxy": 1, "yz": 2}
    expected = [("y", "z"), ("x", "yz"), ("p", "q"), ("pq", "x")]
    assert train_fast(word_freq, 4, end_of_word=None) == train_bpe(word_freq, 4, end_of_word=None) == expected


def test_prefix_marker_sentencepiece_style(textbook_corpus):
    kwargs = dict(end_of_word=None, start_of_word="▁")
    assert (
        train_fast(textbook_corpus, 3, **kwargs)
        == train_bpe(textbook_corpus, 3, **kwargs)
        == [("e", "s"), ("es", "t"), ("▁", "l")]
    )


def test_generic_core_on_bytes():
    corpus = {(b"a", b"b", b"c"): 1, (b"b", b"c", b"a"): 1}
    assert learn_merges(corpus, 3, tie_break="lexicographic") == [(b"b", b"c"), (b"bc", b"a"), (b"a", b"bc")]
    assert learn_merges(corpus, 3, tie_break="first") == [(b"b", b"c"), (b"a", b"bc"), (b"bc", b"a")]


def test_generic_core_reports_progress_and_stops_quietly():
    ticks = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        merges = learn_merges({("a", "b"): 1}, 5, progress=ticks.append)
    assert merges == [("a", "b")] and ticks == [1]


def test_generic_core_checks_its_arguments():
    with pytest.raises(ValueError, match="unknown tie_break 'greatest'"):
        learn_merges({("a", "b"): 1}, 1, tie_break="greatest")
    with pytest.raises(ValueError, match="num_merges must be >= 0"):
        learn_merges({("a", "b"): 1}, -1)


def test_more_merges_than_possible_stops_early_and_says_how_many():
    with pytest.warns(UserWarning, match=r"asked for 10 merges but only 4 were possible"):
        merges = train_fast({"abc": 2, "ab": 1}, 10)
    assert merges == [("a", "b"), ("ab", "c"), ("abc", "</w>"), ("ab", "</w>")]


def test_zero_merges_learns_nothing(textbook_corpus):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert train_fast(textbook_corpus, 0) == []


@pytest.mark.parametrize(
    "args, kwargs, error, message",
    [
        (({}, 3), {}, ValueError, "corpus is empty"),
        (({"low": 0}, 3), {}, ValueError, "must be positive"),
        (({"": 2}, 3), {}, ValueError, "empty word"),
        (({"lo w": 2}, 3), {}, ValueError, "white space"),
        (({"low</w>": 2}, 3), {}, ValueError, "contains the word marker"),
        (({"low": 2.5}, 3), {}, TypeError, "must be an int"),
        (({"low": 5}, -1), {}, ValueError, "num_merges must be >= 0"),
        (({"low": 5}, 2.0), {}, TypeError, "num_merges must be an int"),
        (({"low": 5}, 3), {"tie_break": "random"}, ValueError, "unknown tie_break 'random'"),
        ((["low", "lower"], 3), {}, TypeError, "dict of word -> count"),
        (({"low": 5}, 3), {"end_of_word": ""}, ValueError, "end_of_word must be a non-empty string"),
    ],
)
def test_bad_input_raises_like_train_bpe(args, kwargs, error, message):
    with pytest.raises(error, match=message):
        train_bpe(*args, **kwargs)
    with pytest.raises(error, match=message):
        train_fast(*args, **kwargs)


# Small alphabets make ties, runs ('aaaa') and overlaps ('abcbc') frequent;
# the larger one adds multi-character markers and unequal frequencies.
small_words = st.text(alphabet="ab", min_size=1, max_size=10)
mid_words = st.text(alphabet="abcd", min_size=1, max_size=12)
corpora = st.one_of(
    st.dictionaries(small_words, st.integers(1, 3), min_size=1, max_size=6),
    st.dictionaries(mid_words, st.integers(1, 20), min_size=1, max_size=12),
    st.dictionaries(st.text(alphabet="abcdefgh", min_size=1, max_size=6), st.just(1), min_size=1, max_size=20),
)
markers = st.sampled_from([dict(), dict(end_of_word=None), dict(end_of_word=None, start_of_word="▁")])


@settings(max_examples=300)
@given(corpora, st.integers(0, 60), st.sampled_from(["first", "lexicographic"]), markers)
@example({"abcbc": 1, "aaaa": 2}, 10, "first", {})
@example({"ba": 1, "ab": 1}, 3, "lexicographic", {"end_of_word": None})
def test_same_merges_as_the_textbook_trainer(word_freq, num_merges, tie_break, marker_kwargs):
    expected = quietly(train_bpe, word_freq, num_merges, tie_break=tie_break, **marker_kwargs)
    for copy_from in (0, 10**9):  # both ways of rewriting a word: copying, in place
        with patch.object(merge_update, "COPY_FROM", copy_from):
            assert quietly(train_fast, word_freq, num_merges, tie_break=tie_break, **marker_kwargs) == expected


def test_a_long_run_is_joined_in_halves():
    word_freq = {"a" * 10_000 + "b": 1}
    expected = [("a" * 2**k, "a" * 2**k) for k in range(13)]
    assert train_fast(word_freq, 13, end_of_word=None) == train_bpe(word_freq, 13, end_of_word=None) == expected


def textbook(corpus, num_merges, tie_break):
    """train_bpe's loop on an already split corpus (any symbols). With
    multi-character starting symbols two words can become equal, (a, b, a)
    and (a, ba) after merging (b, a), so their counts are added up."""
    merges = []
    for _ in range(num_merges):
        counts = count_pairs(corpus)
        if not counts:
            break
        pair = pick_pair(counts, tie_break)[0]
        merges.append(pair)
        merged = {}
        for symbols, freq in corpus.items():
            key = merge_symbols(symbols, pair)
            merged[key] = merged.get(key, 0) + freq
        corpus = merged
    return merges


symbols = st.sampled_from([b"a", b"b", b"ab", b"ba", b"c"])


@given(st.dictionaries(st.lists(symbols, min_size=1, max_size=8).map(tuple), st.integers(1, 5), min_size=1, max_size=8))
@example({(b"ab", b"a", b"b", b"ab"): 1})
@example({(b"a", b"a", b"a"): 1, (b"a", b"b", b"a"): 1, (b"a", b"ba"): 1})
def test_core_on_byte_tuples_matches_the_textbook_loop(corpus):
    """Multi-byte starting symbols make a join collide with an existing symbol
    (b"a" + b"b" == b"ab"): the pair must be the same pair either way."""
    for tie_break in ("first", "lexicographic"):
        assert learn_merges(corpus, 20, tie_break=tie_break) == textbook(corpus, 20, tie_break)
