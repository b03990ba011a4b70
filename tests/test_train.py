"""The textbook trainer, pinned to hand-worked examples from the source material."""

import warnings

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpe_lab import count_pairs, merge_symbols, pick_pair, train_bpe, train_trace, word_to_symbols
from bpe_lab.core.options import TrainOptions
from bpe_lab.core.train import training_corpus
from bpe_lab.core.train_fast import train_fast

EXPECTED = [(("e", "s"), 9), (("es", "t"), 9), (("est", "</w>"), 9), (("l", "o"), 7), (("lo", "w"), 7)]


def test_low_lower_newest_widest_round_by_round(textbook_corpus):
    trace = train_trace(textbook_corpus, 5)
    assert [(r.pair, r.count) for r in trace.rounds] == EXPECTED
    assert train_bpe(textbook_corpus, 5) == [pair for pair, _ in EXPECTED]


def test_newest_goes_from_seven_symbols_to_four(textbook_corpus):
    trace = train_trace(textbook_corpus, 5)
    before = word_to_symbols("newest")
    assert len(before) == 7
    assert ("n", "e", "w", "est</w>") in trace.final
    assert trace.final[("n", "e", "w", "est</w>")] == 6
    assert trace.final == {
        ("low", "</w>"): 5,
        ("low", "e", "r", "</w>"): 2,
        ("n", "e", "w", "est</w>"): 6,
        ("w", "i", "d", "est</w>"): 3,
    }


def test_first_round_pair_counts_are_weighted_by_word_frequency(textbook_corpus):
    first = train_trace(textbook_corpus, 1).rounds[0]
    assert first.pair_counts[("l", "o")] == 7  # low 5 + lower 2
    assert first.pair_counts[("e", "s")] == 9  # newest 6 + widest 3
    assert first.pair_counts[("w", "e")] == 8  # lower 2 + newest 6
    assert first.pair_counts[("r", "</w>")] == 2
    assert sum(first.pair_counts.values()) == 5 * 3 + 2 * 5 + 6 * 6 + 3 * 6


def test_ties_are_recorded_and_first_seen_wins(textbook_corpus):
    rounds = train_trace(textbook_corpus, 5).rounds
    assert rounds[0].ties == (("s", "t"), ("t", "</w>"))
    assert rounds[3].ties == (("o", "w"),)


def test_lexicographic_rule_picks_a_different_first_merge(textbook_corpus):
    first = train_bpe(textbook_corpus, 1)
    lexi = train_bpe(textbook_corpus, 1, tie_break="lexicographic")
    assert first == [("e", "s")]
    assert lexi == [("t", "</w>")]
    assert train_bpe(textbook_corpus, 5, tie_break="lexicographic")[:2] == [("t", "</w>"), ("s", "t</w>")]


def test_overlapping_pairs_are_counted_three_times_but_merged_twice():
    assert count_pairs({word_to_symbols("aaaa", end_of_word=None): 1}) == {("a", "a"): 3}
    assert merge_symbols(("a", "a", "a", "a"), ("a", "a")) == ("aa", "aa")
    assert merge_symbols(("a", "a", "a"), ("a", "a")) == ("aa", "a")
    trace = train_trace({"aaaa": 1}, 1, end_of_word=None)
    assert trace.rounds[0].count == 3
    assert trace.final == {("aa", "aa"): 1}


def test_trace_to_frame_has_one_row_per_round(textbook_corpus):
    frame = train_trace(textbook_corpus, 5).to_frame()
    assert list(frame.index) == [1, 2, 3, 4, 5]
    assert list(frame["count"]) == [9, 9, 9, 7, 7]
    assert list(frame["new symbol"]) == ["es", "est", "est</w>", "lo", "low"]
    base = {"l", "o", "w", "</w>", "e", "r", "n", "s", "t", "i", "d"}
    assert list(frame["vocab size"]) == [len(base) + k for k in range(1, 6)]
    assert frame.loc[1, "tied with"] == "('s', 't'), ('t', '</w>')"


def test_prefix_marker_sentencepiece_style(textbook_corpus):
    merges = train_bpe(textbook_corpus, 3, end_of_word=None, start_of_word="▁")
    assert word_to_symbols("low", end_of_word=None, start_of_word="▁") == ("▁", "l", "o", "w")
    assert merges == [("e", "s"), ("es", "t"), ("▁", "l")]


def test_corpus_before_each_round(textbook_corpus):
    trace = train_trace(textbook_corpus, 2)
    assert trace.corpus_before(1) == trace.initial
    assert trace.corpus_before(2) == trace.rounds[0].corpus_after
    with pytest.raises(IndexError, match="round 3"):
        trace.corpus_before(3)


def test_more_merges_than_possible_stops_early_and_says_how_many():
    with pytest.warns(UserWarning, match=r"asked for 10 merges but only 4 were possible"):
        merges = train_bpe({"abc": 2, "ab": 1}, 10)
    assert merges == [("a", "b"), ("ab", "c"), ("abc", "</w>"), ("ab", "</w>")]


SHORT = {"abc": 2, "ab": 1}  # four merges are possible, then every word is one symbol
SHORT_MERGES = [("a", "b"), ("ab", "c"), ("abc", "</w>"), ("ab", "</w>")]
TRAINERS = [train_bpe, train_fast, lambda *a, **k: train_trace(*a, **k).merges]


@pytest.mark.parametrize("trainer", TRAINERS, ids=["train_bpe", "train_fast", "train_trace"])
def test_on_short_chooses_warn_raise_or_silence(trainer):
    with pytest.raises(ValueError, match=r"asked for 10 merges but only 4 were possible"):
        trainer(SHORT, 10, on_short="raise")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "ignore" must not warn, and "raise" must not fire when nothing is short
        assert trainer(SHORT, 10, on_short="ignore") == SHORT_MERGES
        assert trainer(SHORT, 4, on_short="raise") == SHORT_MERGES
    with pytest.raises(ValueError, match=r"unknown on_short 'quiet'; choose one of \('warn', 'raise', 'ignore'\)"):
        trainer(SHORT, 10, on_short="quiet")


def test_trace_says_whether_it_stopped_early(textbook_corpus):
    assert train_trace(SHORT, 10, on_short="ignore").stopped_early
    assert not train_trace(SHORT, 4).stopped_early
    assert not train_trace(textbook_corpus, 0).stopped_early


def test_zero_merges_learns_nothing(textbook_corpus):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert train_bpe(textbook_corpus, 0) == []


@pytest.mark.parametrize(
    "word_freq, message",
    [
        ({}, "corpus is empty"),
        ({"low": 0}, "must be positive"),
        ({"low": -3}, "must be positive"),
        ({"": 2}, "empty word"),
        ({"lo w": 2}, "white space"),
        ({"low</w>": 2}, "contains the word marker"),
    ],
)
def test_bad_corpus_is_named(word_freq, message):
    with pytest.raises(ValueError, match=message):
        train_bpe(word_freq, 3)


def test_bad_arguments_are_named(textbook_corpus):
    with pytest.raises(TypeError, match="must be an int"):
        train_bpe({"low": 2.5}, 3)
    with pytest.raises(ValueError, match="num_merges must be >= 0"):
        train_bpe(textbook_corpus, -1)
    with pytest.raises(TypeError, match="num_merges must be an int"):
        train_bpe(textbook_corpus, 2.0)
    with pytest.raises(ValueError, match="unknown tie_break 'random'"):
        train_bpe(textbook_corpus, 3, tie_break="random")
    with pytest.raises(TypeError, match="dict of word -> count"):
        train_bpe(["low", "lower"], 3)
    with pytest.raises(ValueError, match="end_of_word must be a non-empty string"):
        train_bpe(textbook_corpus, 3, end_of_word="")


def test_pick_pair_rules():
    counts = {("b", "a"): 2, ("a", "b"): 2, ("c", "c"): 1}
    assert pick_pair(counts, "first") == (("b", "a"), 2, (("a", "b"),))
    assert pick_pair(counts, "lexicographic") == (("b", "a"), 2, (("a", "b"),))
    assert pick_pair({("a", "b"): 2, ("b", "a"): 2}, "lexicographic")[0] == ("b", "a")
    with pytest.raises(ValueError, match="no pairs"):
        pick_pair({}, "first")


words = st.text(alphabet="abcd", min_size=1, max_size=8)
corpora = st.dictionaries(words, st.integers(min_value=1, max_value=20), min_size=1, max_size=8)


@given(corpora, st.integers(min_value=0, max_value=30), st.sampled_from(["first", "lexicographic"]))
def test_never_more_merges_than_asked_and_all_distinct(word_freq, num_merges, tie_break):
    merges = train_bpe(word_freq, num_merges, tie_break=tie_break, on_short="ignore")
    assert len(merges) <= num_merges
    assert len(set(merges)) == len(merges)


@given(corpora, st.integers(min_value=1, max_value=20))
def test_winner_has_the_maximum_weighted_count(word_freq, num_merges):
    trace = train_trace(word_freq, num_merges, on_short="ignore")
    for r in trace.rounds:
        assert r.count == max(r.pair_counts.values()) == r.pair_counts[r.pair]
        # the word total of symbols shrinks by exactly the number of joins
        assert sum(len(s) * f for s, f in r.corpus_after.items()) < sum(
            len(s) * f for s, f in trace.corpus_before(r.number).items()
        )


def test_subword_nmt_convention_glues_the_marker_and_stops_at_min_frequency(textbook_corpus):
    assert word_to_symbols("low", glue_end_of_word=True) == ("l", "o", "w</w>")
    assert word_to_symbols("a", glue_end_of_word=True) == ("a</w>",)
    merges = train_bpe(textbook_corpus, 4, glue_end_of_word=True, tie_break="lexicographic", min_frequency=2)
    assert merges == [("s", "t</w>"), ("e", "st</w>"), ("l", "o"), ("w", "est</w>")]
    trace = train_trace(textbook_corpus, 4, glue_end_of_word=True, tie_break="lexicographic")
    assert trace.merges == merges and trace.glue_end_of_word and trace.rounds[0].count == 9
    # min_frequency: (c, d</w>) occurs 3 times, every other pair once
    word_freq = {"abab": 1, "cd": 3}
    for trainer in (train_bpe, train_fast):
        with pytest.warns(
            UserWarning, match="asked for 5 merges but only 1 were possible: no pair occurs min_frequency=2"
        ):
            assert trainer(word_freq, 5, glue_end_of_word=True, min_frequency=2) == [("c", "d</w>")]
    assert train_fast(textbook_corpus, 4, glue_end_of_word=True, tie_break="lexicographic", min_frequency=2) == merges
    assert len(train_bpe(word_freq, 5, glue_end_of_word=True, on_short="ignore")) == 4
    with pytest.raises(ValueError, match="min_frequency must be >= 1"):
        train_bpe(textbook_corpus, 1, min_frequency=0)
    with pytest.raises(ValueError, match="needs an end_of_word marker"):
        train_bpe(textbook_corpus, 1, end_of_word=None, glue_end_of_word=True)


def test_one_options_object_is_checked_once_and_carried_through(textbook_corpus):
    """The six keywords are ``TrainOptions``' fields: every trainer takes
    them as keywords, a bad value is named once, the trace keeps them."""
    options = TrainOptions(tie_break="lexicographic", glue_end_of_word=True, min_frequency=2)
    corpus, num_merges = training_corpus(textbook_corpus, 4, options)
    assert num_merges == 4 and corpus[("l", "o", "w</w>")] == 5
    assert training_corpus(textbook_corpus, 4, tie_break="lexicographic", glue_end_of_word=True, min_frequency=2) == (
        corpus,
        4,
    )
    trace = train_trace(textbook_corpus, 4, tie_break="lexicographic", glue_end_of_word=True, min_frequency=2)
    assert trace.options == options and trace.tie_break == "lexicographic" and trace.min_frequency == 2
    assert trace.merges == [("s", "t</w>"), ("e", "st</w>"), ("l", "o"), ("w", "est</w>")]
    with pytest.raises(TypeError, match="not both"):
        training_corpus(textbook_corpus, 4, options, tie_break="first")
    with pytest.raises(TypeError, match="options must be a TrainOptions, got dict"):
        training_corpus(textbook_corpus, 4, {"tie_break": "first"})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="unknown option .tie_brake.; the options are tie_break, end_of_word"):
        train_fast(textbook_corpus, 4, tie_brake="first")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="glue_end_of_word must be True or False, got 'yes'"):
        TrainOptions(glue_end_of_word="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown on_short 'loud'"):
        TrainOptions(on_short="loud")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="start_of_word must be a non-empty string or None, got ''"):
        TrainOptions(start_of_word="")
    with pytest.raises(AttributeError):
        options.tie_break = "first"  # type: ignore[misc]  # frozen
        train_bpe(textbook_corpus, 1, end_of_word=None, glue_end_of_word=True)
