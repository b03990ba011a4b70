"""The public names of docs/api.md, which notebooks, exercises and users rely on,
called the way docs/api.md documents them, with hand-worked results."""

import re
from pathlib import Path

import pytest

import bpe_lab

MERGES = [("e", "s"), ("es", "t"), ("est", "</w>"), ("l", "o"), ("lo", "w")]


def test_textbook_api_with_its_documented_keywords(textbook_corpus):
    assert bpe_lab.train_bpe(textbook_corpus, 5, tie_break="first", end_of_word="</w>") == MERGES
    assert bpe_lab.train_bpe(textbook_corpus, 1, tie_break="lexicographic") == [("t", "</w>")]
    trace = bpe_lab.train_trace(textbook_corpus, 5, tie_break="first", end_of_word="</w>")
    assert trace.merges == MERGES
    assert list(trace.to_frame()["new symbol"]) == ["es", "est", "est</w>", "lo", "low"]
    assert bpe_lab.encode_word("lowest", MERGES, end_of_word="</w>") == ["low", "est</w>"]
    assert bpe_lab.decode_words(["low", "est</w>"], end_of_word="</w>") == "lowest"


@pytest.mark.parametrize(
    "call",
    [
        lambda corpus: bpe_lab.train_bpe(corpus, 5, "first"),
        lambda corpus: bpe_lab.train_trace(corpus, 5, "first"),
        lambda corpus: bpe_lab.encode_word("low", MERGES, "</w>"),
        lambda corpus: bpe_lab.decode_words(["low</w>"], "</w>"),
    ],
    ids=["train_bpe", "train_trace", "encode_word", "decode_words"],
)
def test_options_are_keyword_only(call, textbook_corpus):
    # tie_break and end_of_word passed by position would be easy to swap
    with pytest.raises(TypeError, match="positional argument"):
        call(textbook_corpus)


def test_bytelevel_api(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("low low low<|endoftext|>lower", encoding="utf-8")
    vocab, merges = bpe_lab.train_bytelevel(corpus, 258, ["<|endoftext|>"])
    # pre-tokens low, " low", " low", lower: (l,o) and (o,w) both occur 4 times,
    # and the tie goes to the greater pair of bytes, (o,w)
    assert vocab[256] == b"<|endoftext|>" and merges == [(b"o", b"w")] and vocab[257] == b"ow"
    tok = bpe_lab.Tokenizer(vocab, merges, special_tokens=["<|endoftext|>"])
    assert tok.encode("low<|endoftext|>") == [ord("l"), 257, 256]
    assert tok.decode([ord("l"), 257, 256]) == "low<|endoftext|>"
    assert list(tok.encode_iterable(["lo", "w\n"])) == [ord("l"), 257, ord("\n")]
    tok.save(tmp_path / "tok.json")
    assert bpe_lab.Tokenizer.load(tmp_path / "tok.json").encode("owow") == [257, 257]


def test_variants_api(textbook_corpus):
    wp = bpe_lab.train_wordpiece(textbook_corpus, 25, on_short="raise")
    assert isinstance(wp, bpe_lab.WordPiece) and wp.encode("lowest")[0] == "low"
    assert bpe_lab.WordPiece(["[UNK]", "low", "##est"]).encode("lowest") == ["low", "##est"]
    uni = bpe_lab.Unigram({"\u2581low": -1.0, "est": -1.0, "\u2581": -3.0, **{c: -4.0 for c in "lowest"}})
    assert uni.encode("lowest") == ["\u2581low", "est"]
    assert isinstance(bpe_lab.train_unigram(textbook_corpus, 20), bpe_lab.Unigram)


def test_every_exported_name_exists():
    missing = [name for name in bpe_lab.__all__ if not hasattr(bpe_lab, name)]
    assert missing == []


def test_the_api_brief_shows_every_exported_name():
    brief = (Path(__file__).resolve().parent.parent / "docs" / "api.md").read_text(encoding="utf-8")
    missing = [name for name in bpe_lab.__all__ if not re.search(rf"\b{re.escape(name)}\b", brief)]
    assert missing == []


def test_the_api_page_puts_bpe_labs_special_token_default_beside_tiktokens():
    """docs/api.md's table and the Tokenizer's docstring, call by call, on GPT-2
    with a user who typed ``<|endoftext|>``: bpe_lab's default gives its id,
    tiktoken's raises; both have the same two safe forms."""
    from tokenizer_support import tiktoken_twin

    tok = bpe_lab.gpt2_tokenizer()
    enc = tiktoken_twin(tok)
    text = "Hi<|endoftext|>"
    ordinary = [17250, 27, 91, 437, 1659, 5239, 91, 29]
    assert tok.encode(text) == enc.encode(text, allowed_special="all") == [17250, 50256]
    with pytest.raises(ValueError, match="disallowed special token"):
        enc.encode(text)
    with pytest.raises(ValueError, match="which disallowed_special refuses"):
        tok.encode(text, allowed_special=set())
    assert tok.encode_ordinary(text) == enc.encode_ordinary(text) == ordinary
    assert tok.encode(text, allowed_special=set(), disallowed_special=()) == enc.encode(text, disallowed_special=())
    assert enc.encode(text, disallowed_special=()) == ordinary
    brief = (Path(__file__).resolve().parent.parent / "docs" / "api.md").read_text(encoding="utf-8")
    rows = [line for line in brief.splitlines() if line.startswith("|")]
    assert rows[rows.index("|---|---|---|") + 1 :] == [
        "| the default call | `encode(text)` → `[17250, 50256]`: the user's text ends the document "
        "| `encode(text)` → `ValueError` (disallowed special token) |",
        "| an error | `encode(text, allowed_special=set())` → `ValueError` | `encode(text)` (its default) |",
        "| ordinary text | `encode_ordinary(text)`, or `encode(text, allowed_special=set(), disallowed_special=())` "
        f"→ `{ordinary}` | `encode_ordinary(text)`, or `encode(text, disallowed_special=())` → the same eight ids |",
        '| its id, 50256 | `encode(text)` (its default) | `encode(text, allowed_special="all")` → `[17250, 50256]` |',
    ]
    doc = " ".join(bpe_lab.Tokenizer.__doc__.split())
    assert "``encode(text)``: here ``[17250, 50256]``, the user's text ends the document; in tiktoken ValueError" in doc
    assert f"``encode_ordinary(text)``: ``{ordinary}`` in both" in doc
