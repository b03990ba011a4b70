"""subword-nmt's convention, checked against subword-nmt itself.

Since its version 0.2, Sennrich's subword-nmt glues ``</w>`` to the last
character of each word, breaks ties by taking the greatest pair
(``max(stats, key=lambda x: (stats[x], x))`` in ``learn_bpe.py``), stops when
the best pair occurs fewer than ``--min-frequency`` (default 2) times, and
prints ``@@`` after every piece that does not end a word (``apply_bpe.py``).
``train_bpe(..., glue_end_of_word=True, tie_break="lexicographic",
min_frequency=2)``, ``encode_text(..., glue_end_of_word=True)`` and
``mark_continuations`` must give the same merges and the same output.
Skipped when subword-nmt is not installed.
"""

import io
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_lab import encode_word, train_bpe
from bpe_lab.core.corpora import python_docs
from bpe_lab.core.encode import encode_text, mark_continuations
from bpe_lab.core.pretokenize import word_frequencies

learn_bpe = pytest.importorskip("subword_nmt.learn_bpe")
apply_bpe = pytest.importorskip("subword_nmt.apply_bpe")


def snmt_merges(word_freq, num_merges, min_frequency=2):
    """subword-nmt's merges for a word -> count table (its ``--dict-input``)."""
    table = io.StringIO("".join(f"{word} {count}\n" for word, count in word_freq.items()))
    codes = io.StringIO()
    learn_bpe.learn_bpe(table, codes, num_merges, min_frequency=min_frequency, is_dict=True)
    lines = codes.getvalue().splitlines()
    assert lines[0] == "#version: 0.2"
    return [tuple(line.split(" ")) for line in lines[1:]]


def ours(word_freq, num_merges, min_frequency=2):
    return train_bpe(
        word_freq,
        num_merges,
        glue_end_of_word=True,
        tie_break="lexicographic",
        min_frequency=min_frequency,
        on_short="ignore",
    )


def snmt_segment(merges, text, dropout=0.0):
    codes = io.StringIO("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges))
    return apply_bpe.BPE(codes).segment(text, dropout=dropout)


def test_the_classic_corpus(textbook_corpus):
    merges = ours(textbook_corpus, 20)
    assert merges == snmt_merges(textbook_corpus, 20)
    # glued: the first merge joins s with t</w>, and there is no (est, </w>)
    assert merges[:4] == [("s", "t</w>"), ("e", "st</w>"), ("l", "o"), ("w", "est</w>")]
    assert len(merges) == 13  # then every word is one symbol
    text = "lowest newest newer low"
    assert " ".join(mark_continuations(encode_text(text, merges, glue_end_of_word=True))) == snmt_segment(merges, text)
    assert snmt_segment(merges, text) == "lo@@ west newest ne@@ wer low"


def test_min_frequency_stops_training():
    word_freq = {"abab": 1, "cd": 3, "ef": 1}
    assert ours(word_freq, 10) == snmt_merges(word_freq, 10) == [("c", "d</w>")]
    assert ours(word_freq, 10, min_frequency=1) == snmt_merges(word_freq, 10, min_frequency=1)


def test_the_python_documentation():
    docs = dict(list(word_frequencies(python_docs("train")).items())[:600])
    merges = ours(docs, 300)
    assert merges == snmt_merges(docs, 300)
    text = " ".join(list(word_frequencies(python_docs("heldout")))[:300])
    assert " ".join(mark_continuations(encode_text(text, merges, glue_end_of_word=True))) == snmt_segment(merges, text)


words = st.text(alphabet="abcd", min_size=1, max_size=9)
corpora = st.dictionaries(words, st.integers(min_value=1, max_value=6), min_size=1, max_size=10)


@settings(max_examples=150, deadline=None)
@given(corpora, st.integers(1, 30), st.integers(1, 3))
def test_random_corpora(word_freq, num_merges, min_frequency):
    if all(len(word) == 1 for word in word_freq):
        return  # subword-nmt calls max() on no pairs at all and fails
    merges = ours(word_freq, num_merges, min_frequency)
    assert merges == snmt_merges(word_freq, num_merges, min_frequency)
    if not merges:
        return  # apply_bpe cannot read a codes file without codes
    text = " ".join(word_freq)
    assert " ".join(mark_continuations(encode_text(text, merges, glue_end_of_word=True))) == snmt_segment(merges, text)


@settings(max_examples=100, deadline=None)
@given(corpora, st.integers(1, 20), words, st.sampled_from([0.1, 0.3, 0.6]), st.integers(0, 10**6))
def test_bpe_dropout_draws_as_apply_bpe_does(word_freq, num_merges, word, dropout, seed):
    merges = ours(word_freq, num_merges, 1)
    if not merges:
        return  # apply_bpe cannot read a codes file without codes
    pieces = encode_word(word, merges, glue_end_of_word=True, dropout=dropout, rng=random.Random(seed))
    random.seed(seed)  # apply_bpe draws from the random module itself
    assert " ".join(mark_continuations(pieces)) == snmt_segment(merges, word, dropout)
