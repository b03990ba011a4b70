"""Rank-replay encoding, decoding, and longest match for contrast."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpe_lab import (
    apply_merges,
    decode_words,
    encode_text,
    encode_word,
    longest_match,
    merge_ranks,
    train_bpe,
    train_trace,
    vocabulary,
)
from bpe_lab.core.encode import mark_continuations

MERGES = [("e", "s"), ("es", "t"), ("est", "</w>"), ("l", "o"), ("lo", "w")]
ABC = [("a", "b"), ("b", "c"), ("a", "bc")]


def test_lowest_encodes_as_low_est():
    assert encode_word("lowest", MERGES) == ["low", "est</w>"]
    assert decode_words(encode_word("lowest", MERGES)) == "lowest"


def test_unseen_word_still_encodes_from_characters():
    assert encode_word("xylophone", MERGES) == ["x", "y", "lo", "p", "h", "o", "n", "e", "</w>"]
    assert encode_word("低", MERGES) == ["低", "</w>"]


def test_rank_replay_and_longest_match_disagree_on_abc():
    assert encode_word("abc", ABC, end_of_word=None) == ["ab", "c"]
    assert longest_match("abc", ABC, end_of_word=None) == ["abc"]
    # with the end-of-word marker the marker stays its own symbol
    assert encode_word("abc", ABC) == ["ab", "c", "</w>"]
    assert longest_match("abc", ABC) == ["abc", "</w>"]


def test_longest_match_uses_the_learned_vocabulary():
    assert longest_match("lowest", MERGES) == ["low", "est</w>"]
    assert longest_match("newest", MERGES) == ["n", "e", "w", "est</w>"]
    assert vocabulary(MERGES, ["l", "o"]) == ["l", "o", "es", "est", "est</w>", "lo", "low"]


def test_decode_words_turns_markers_into_boundaries():
    assert decode_words(["low</w>", "n", "e", "w", "est</w>"]) == "low newest"
    assert decode_words(["▁low", "▁new", "est"], end_of_word=None, start_of_word="▁") == "low newest"
    assert decode_words([]) == ""
    with pytest.raises(TypeError, match="list of symbol strings"):
        decode_words("lowest")


def test_encode_text_encodes_every_word():
    symbols = encode_text("low lowest", MERGES)
    assert symbols == ["low", "</w>", "low", "est</w>"]
    assert decode_words(symbols) == "low lowest"


def test_merges_are_checked():
    with pytest.raises(ValueError, match=r"merge 0 \('ab', 'c'\) uses the symbol 'ab'"):
        encode_word("abc", [("ab", "c")])
    with pytest.raises(ValueError, match="repeats merge 0"):
        merge_ranks([("a", "b"), ("a", "b")])
    with pytest.raises(ValueError, match="pair of non-empty strings"):
        merge_ranks([("a",)])
    with pytest.raises(ValueError, match="pair of non-empty strings"):
        merge_ranks([("a", "")])
    assert merge_ranks(MERGES) == {pair: rank for rank, pair in enumerate(MERGES)}


words = st.text(alphabet="abcde", min_size=1, max_size=10)
corpora = st.dictionaries(words, st.integers(min_value=1, max_value=9), min_size=1, max_size=8)
any_word = st.text(st.characters(blacklist_categories=("Zs", "Zl", "Zp", "Cc", "Cs")), min_size=1, max_size=12).filter(
    lambda w: not any(c.isspace() for c in w) and "</w>" not in w
)


def _train(word_freq, num_merges, tie_break="first"):
    return train_bpe(word_freq, num_merges, tie_break=tie_break, on_short="ignore")


@given(corpora, st.integers(0, 25), any_word)
def test_decode_encode_round_trips(word_freq, num_merges, word):
    merges = _train(word_freq, num_merges)
    assert decode_words(encode_word(word, merges)) == word


@given(corpora, st.integers(0, 25), st.one_of(words, any_word), st.sampled_from(["first", "lexicographic"]))
def test_applying_merges_in_order_equals_rank_replay(word_freq, num_merges, word, tie_break):
    merges = _train(word_freq, num_merges, tie_break)
    assert apply_merges(word, merges) == encode_word(word, merges)


@given(corpora, st.integers(0, 25))
def test_encoding_a_training_word_reproduces_training(word_freq, num_merges):
    trace = train_trace(word_freq, num_merges, on_short="ignore")
    for word, symbols in zip(word_freq, trace.final):
        assert encode_word(word, trace.merges) == list(symbols)


SEVEN = MERGES + [("n", "e"), ("ne", "w")]


def test_nest_rank_replay_and_longest_match_disagree_with_trained_merges(textbook_corpus):
    assert train_bpe(textbook_corpus, 7) == SEVEN
    assert encode_word("nest", SEVEN) == ["n", "est</w>"]
    assert longest_match("nest", SEVEN) == ["ne", "s", "t", "</w>"]


@given(st.dictionaries(st.text(alphabet="abc", min_size=1, max_size=8), st.integers(1, 9), min_size=1, max_size=8))
def test_the_abc_merge_list_cannot_come_out_of_training(word_freq):
    """Once (a, b) is merged no symbol a stands before b, and a symbol a can
    only lose a neighbour, never gain one: no bc made later has an a before it."""
    for end_of_word in (None, "</w>"):
        merges = train_bpe(word_freq, 12, end_of_word=end_of_word, on_short="ignore")
        if ("a", "b") in merges and ("b", "c") in merges[merges.index(("a", "b")) :]:
            assert ("a", "bc") not in merges


def test_abc_example_corpus():
    merges = train_bpe({"ab": 6, "abc": 1, "bc": 2}, 5, end_of_word=None, on_short="ignore")
    assert merges[:2] == [("a", "b"), ("b", "c")] and ("a", "bc") not in merges


def test_glued_marker_and_continuation_marks():
    snmt = [("s", "t</w>"), ("e", "st</w>"), ("l", "o"), ("w", "est</w>")]
    assert encode_word("lowest", snmt, glue_end_of_word=True) == ["lo", "west</w>"]
    assert decode_words(encode_text("lowest low", snmt, glue_end_of_word=True)) == "lowest low"
    assert apply_merges("lowest", snmt, glue_end_of_word=True) == ["lo", "west</w>"]
    with pytest.raises(ValueError, match="uses the symbol 't</w>'"):
        encode_word("lowest", snmt)  # a glued list needs glue_end_of_word=True
    assert mark_continuations(["lo", "west</w>", "lo", "w", "</w>"]) == ["lo@@", "west", "lo@@", "w"]


def test_bpe_dropout():
    assert encode_word("lowest", MERGES, dropout=0.0) == ["low", "est</w>"]
    assert encode_word("lowest", MERGES, dropout=1.0, rng=0) == list("lowest") + ["</w>"]
    samples = {tuple(encode_word("lowest", MERGES, dropout=0.3, rng=seed)) for seed in range(50)}
    assert ("low", "est</w>") in samples and len(samples) > 3
    assert all(decode_words(list(s)) == "lowest" for s in samples)
    assert encode_word("lowest", MERGES, dropout=0.3, rng=7) == encode_word("lowest", MERGES, dropout=0.3, rng=7)
    with pytest.raises(ValueError, match="dropout must be a probability"):
        encode_word("lowest", MERGES, dropout=1.5)


@pytest.mark.parametrize("encode", [encode_word, apply_merges, encode_text, merge_ranks])
def test_every_encoder_checks_the_word_markers_as_the_trainers_do(encode):
    # one WordMarkers per call (core/options.py), the checks TrainOptions makes too
    args = ([("l", "o")],) if encode is merge_ranks else ("low", [("l", "o")])
    with pytest.raises(ValueError, match="glue_end_of_word=True needs an end_of_word marker"):
        encode(*args, end_of_word=None, glue_end_of_word=True)
    with pytest.raises(TypeError, match="glue_end_of_word must be True or False, got 'yes'"):
        encode(*args, glue_end_of_word="yes")
    with pytest.raises(ValueError, match="start_of_word must be a non-empty string or None"):
        encode(*args, start_of_word="")
    with pytest.raises(ValueError, match="glue_end_of_word=True needs an end_of_word marker"):
        train_bpe({"low": 1}, 1, end_of_word=None, glue_end_of_word=True)
