"""Measuring character vs word vs subword granularity."""

import pytest

from bpe_lab import encode_word, train_bpe, word_frequencies
from bpe_lab.variants.granularity import (
    bpe_vocabulary,
    granularity_table,
    segment_words,
    tokens_per_word,
    unknown_rate,
    vocab_curve,
    word_vocabulary,
    words,
)

MERGES = [("e", "s"), ("es", "t"), ("est", "</w>"), ("l", "o"), ("lo", "w")]


def test_words_split_punctuation_from_letters_and_drop_spaces():
    assert words("x = f(a, b)  # call") == ["x", "=", "f", "(", "a", ",", "b", ")", "#", "call"]
    assert word_frequencies(["a b a", "b ."], split=words) == {"a": 2, "b": 2, ".": 1}


def test_segment_words_is_rank_replay():
    test = {"lowest": 1, "xylophone": 2, "newest": 1}
    assert segment_words(test, MERGES) == {w: encode_word(w, MERGES) for w in test}


def test_tokens_per_word_is_weighted_by_frequency(textbook_corpus):
    # low -> low </w> (2 tokens) x 5, lower -> low e r </w> (4) x 2, newest -> n e w est</w> (4) x 6, widest -> 4 x 3
    assert tokens_per_word(textbook_corpus, MERGES) == (2 * 5 + 4 * 2 + 4 * 6 + 4 * 3) / 16
    # no merges: characters plus the end-of-word marker
    assert tokens_per_word({"low": 1, "ab": 1}, []) == 3.5


def test_vocabularies_and_unknown_rates(textbook_corpus):
    assert word_vocabulary(textbook_corpus) == set(textbook_corpus)
    vocab = bpe_vocabulary(textbook_corpus, MERGES)
    assert len(vocab) == 11 + 5 and {"est</w>", "low", "</w>"} <= vocab
    test = {"low": 3, "lowest": 1}
    assert unknown_rate(test, word_vocabulary(textbook_corpus)) == 0.25
    assert unknown_rate(test, vocab, MERGES) == 0.0
    # a character never seen in training is the only way BPE meets an unknown
    assert unknown_rate({"low": 3, "lox": 1}, vocab, MERGES) == 0.25


def test_granularity_table_orders_character_bpe_word(textbook_corpus):
    table = granularity_table(textbook_corpus, {"lowest": 1, "newer": 1}, MERGES)
    assert list(table.index) == ["character", "BPE, 5 merges", "word"]
    assert table["vocabulary size"].tolist() == [11, 16, 4]
    assert table["unknown words (%)"].tolist() == [0.0, 0.0, 100.0]


def test_vocab_curve_uses_prefixes_of_one_training_run(textbook_corpus):
    merges = train_bpe(textbook_corpus, 8)
    curve = vocab_curve(textbook_corpus, {"lowest": 1}, merges, [0, 5, 8])
    assert curve["merges"].tolist() == [0, 5, 8]
    assert curve["vocabulary size"].tolist() == [11, 16, 19]
    assert curve["test tokens per word"].tolist()[:2] == [7.0, 2.0]
    assert curve["train tokens per word"].is_monotonic_decreasing
    with pytest.raises(ValueError, match="outside 0..8"):
        vocab_curve(textbook_corpus, textbook_corpus, merges, [9])
