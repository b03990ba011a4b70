"""SentencePiece-style spaces, WordPiece scores and the Unigram view."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpe_lab import encode_word, train_bpe, word_frequencies
from bpe_lab.variants.sentencepiece import sp_decode, sp_encode, sp_pieces, sp_words
from bpe_lab.variants.unigram import segmentation_probs, segmentations, token_counts, unigram_logprobs, viterbi
from bpe_lab.variants.wordpiece import wordpiece_scores

MERGES = [("e", "s"), ("es", "t"), ("est", "</w>"), ("l", "o"), ("lo", "w")]


def test_sp_pieces_keep_every_space():
    assert sp_pieces("low  lower\n") == ["▁low", "▁", "▁lower", "\n"]
    assert word_frequencies("low low  lower", split=sp_words) == {"▁low": 2, "▁": 1, "▁lower": 1}
    with pytest.raises(ValueError, match="contains"):
        sp_pieces("a▁b")


@given(st.text(st.characters(blacklist_characters="▁", blacklist_categories=("Cs",)), max_size=30))
def test_sp_encode_decode_is_lossless(text):
    merges = [("▁", "l"), ("▁l", "o")]
    assert sp_decode(sp_encode(text, merges)) == text


@given(st.text(st.characters(blacklist_characters="▁", blacklist_categories=("Cs",)), min_size=1, max_size=30))
def test_sp_pieces_can_always_be_trained_on(text):
    freq = word_frequencies(text, split=sp_words)
    if freq:
        merges = train_bpe(freq, 3, end_of_word=None, on_short="ignore")
        assert sp_decode(sp_encode(text, merges)) == text


def test_sp_training_puts_the_boundary_in_front():
    text = "low low low lower newest newest widest"
    merges = train_bpe(word_frequencies(text, split=sp_words), 4, end_of_word=None)
    assert merges == [("▁", "l"), ("▁l", "o"), ("▁lo", "w"), ("e", "s")]
    assert sp_encode("lowest  low", merges) == ["▁low", "es", "t", "▁", "▁low"]


def test_wordpiece_prefers_pairs_whose_parts_rarely_occur_apart(textbook_corpus):
    scores = wordpiece_scores(textbook_corpus)
    assert scores[("e", "s")] == 9 / (17 * 9)
    assert scores[("i", "d")] == 3 / (3 * 3)
    assert max(scores, key=scores.get) == ("i", "d")


def test_token_counts_and_logprobs(textbook_corpus):
    counts = token_counts(textbook_corpus, MERGES)
    assert counts["est</w>"] == 9 and counts["low"] == 7 and counts["</w>"] == 7
    assert sum(counts.values()) == sum(len(encode_word(w, MERGES)) * n for w, n in textbook_corpus.items())
    logp = unigram_logprobs(counts)
    assert math.isclose(sum(math.exp(v) for v in logp.values()), 1.0)
    with pytest.raises(ValueError):
        unigram_logprobs({})


def test_viterbi_finds_the_most_probable_segmentation(textbook_corpus):
    logp = unigram_logprobs(token_counts(textbook_corpus, MERGES))
    best, score = viterbi("lowest", logp)
    options = segmentation_probs("lowest", logp)
    assert options[0][0] == best
    assert math.isclose(sum(p for _, p in options), 1.0)
    assert math.isclose(score, sum(logp[t] for t in best))
    assert all(len(s) > 0 for s, _ in options)
    with pytest.raises(ValueError, match="cannot be segmented"):
        viterbi("lox", logp)


def test_segmentations_enumerates_every_cut():
    vocab = {"a", "b", "c", "ab", "bc", "abc", "</w>"}
    assert len(segmentations("abc", vocab)) == 4
    with pytest.raises(ValueError, match="limited"):
        segmentations("a" * 20, {"a", "</w>"})
