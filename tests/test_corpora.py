"""The shipped corpora: present, licensed, and split the same way every time."""

import pytest

from bpe_lab.core.corpora import DATA_DIR, LANGUAGES, parallel_sentences, python_docs, python_docs_topics


def test_every_corpus_ships_with_its_licence():
    assert (DATA_DIR / "python_docs.txt").is_file()
    assert "PYTHON SOFTWARE FOUNDATION LICENSE VERSION 2" in (DATA_DIR / "python_docs.LICENSE.txt").read_text(
        encoding="utf-8"
    )
    assert "CC0" in (DATA_DIR / "parallel_sentences.tsv").read_text(encoding="utf-8")


def test_python_docs_train_and_heldout_partition_the_paragraphs():
    topics = python_docs_topics()
    assert len(topics) == 79 and list(topics) == sorted(topics)
    train, heldout = python_docs("train"), python_docs("heldout")
    paragraphs = [p for p in python_docs().split("\n\n") if p.strip()]
    assert len(train.split("\n\n")) + len(heldout.split("\n\n")) == len(paragraphs)
    assert 0.15 < len(heldout) / (len(train) + len(heldout)) < 0.25
    with pytest.raises(ValueError, match="unknown part"):
        python_docs("test")


def test_parallel_sentences_line_up_across_languages():
    assert LANGUAGES == ("en", "zh", "de", "fr", "es")
    columns = [parallel_sentences(lang) for lang in LANGUAGES]
    assert {len(c) for c in columns} == {30}
    assert all(s.strip() == s and s for c in columns for s in c)
    assert parallel_sentences("en")[0] == "The weather is very nice today."
    with pytest.raises(ValueError, match="unknown language"):
        parallel_sentences("xx")


def test_the_textbook_corpus_is_read_only(textbook_corpus):
    assert dict(textbook_corpus) == {"low": 5, "lower": 2, "newest": 6, "widest": 3}
    with pytest.raises(TypeError, match="does not support item assignment"):
        textbook_corpus["low"] = 6  # one test's change would be every later test's input
    assert textbook_corpus["low"] == 5
