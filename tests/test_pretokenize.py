"""Pre-tokenization: white-space words, GPT-2's regex, special tokens."""

import re

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

from bpe_lab.core.pretokenize import (
    gpt2_pretokenize,
    special_token_pattern,
    split_special,
    split_words,
    word_frequencies,
)


def test_word_frequencies_keep_first_seen_order():
    assert word_frequencies("b a b\nc a b") == {"b": 3, "a": 2, "c": 1}
    assert list(word_frequencies(["low lower", "low"])) == ["low", "lower"]
    assert word_frequencies("") == {}
    with pytest.raises(TypeError, match="each line must be a str"):
        word_frequencies([b"bytes"])


def test_split_words():
    assert split_words("  low\tlower\n newest ") == ["low", "lower", "newest"]


def test_gpt2_branches():
    assert gpt2_pretokenize("I'm here, they've 3 cats!") == [
        "I",
        "'m",
        " here",
        ",",
        " they",
        "'ve",
        " 3",
        " cats",
        "!",
    ]
    # the last space before a word stays with the word; the others form their own piece
    assert gpt2_pretokenize("a   b") == ["a", "  ", " b"]
    # \s+(?!\S) backs off one character before a word, so \r\n splits in two
    assert gpt2_pretokenize("line\r\nnext") == ["line", "\r", "\n", "next"]
    assert gpt2_pretokenize("你好，世界") == ["你好", "，", "世界"]


@given(st.text(max_size=100) | st.text(alphabet=" \r\n\tab'sd1.", max_size=40))
def test_pattern_splits_like_tiktokens_gpt2_pattern(text):
    # tiktoken ships a faster equivalent of GPT-2's pattern (possessive quantifiers)
    from tiktoken_ext.openai_public import r50k_pat_str

    assert gpt2_pretokenize(text) == regex.findall(r50k_pat_str, text)


@given(st.text(max_size=100) | st.text(alphabet=" \r\n\tab'sdlvm1.,\u00a0\u3000é", max_size=40))
def test_fast_pattern_splits_like_gpt2_pattern(text):
    from bpe_lab.core.pretokenize import GPT2_FAST_PATTERN, GPT2_PATTERN

    assert regex.findall(GPT2_FAST_PATTERN, text) == regex.findall(GPT2_PATTERN, text)


@given(
    st.text(alphabet=st.characters(max_codepoint=127), max_size=100)
    | st.text(alphabet=" \r\n\t\x0b\x0c\x1cab'sdlvm1.,", max_size=40)
)
def test_ascii_pattern_splits_like_gpt2_pattern(text):
    from bpe_lab.core.pretokenize import GPT2_ASCII_PATTERN, GPT2_PATTERN

    assert re.findall(GPT2_ASCII_PATTERN, text, re.ASCII) == regex.findall(GPT2_PATTERN, text)
    assert gpt2_pretokenize(text) == regex.findall(GPT2_PATTERN, text)  # the ASCII path of gpt2_pretokenize


@given(
    st.lists(st.text(alphabet=" \r\n\tab'sdlvm1.,", max_size=30) | st.text(alphabet="é\u00a0\u3000x ", max_size=4)),
    st.sampled_from([1, 2, 5]),
)
def test_mixed_text_is_cut_like_gpt2_pattern_around_its_non_ascii_runs(parts, stretch):
    # ASCII stretches of at least ASCII_STRETCH characters go to the fast
    # engine, the windows around the non-ASCII runs to regex: the same pieces
    from unittest import mock

    from bpe_lab.core import pretokenize
    from bpe_lab.core.pretokenize import GPT2_PATTERN

    text = "".join(parts)
    with mock.patch.object(pretokenize, "ASCII_STRETCH", stretch):
        assert gpt2_pretokenize(text) == regex.findall(GPT2_PATTERN, text)


def test_mixed_text_exact_pieces():
    # a long ASCII stretch, one accented word, a long stretch again: the
    # window is " café" up to the safe cut before " ok"
    text = "x = 1 " * 50 + "# café ok" + " y" * 200
    pieces = gpt2_pretokenize(text)
    assert pieces == ["x", " =", " 1"] + [" x", " =", " 1"] * 49 + [" #", " café", " ok"] + [" y"] * 200
    assert gpt2_pretokenize("café " + "a" * 300) == ["café", " " + "a" * 300]


@given(st.text(max_size=200))
def test_gpt2_pieces_join_back(text):
    assert "".join(gpt2_pretokenize(text)) == text


def test_split_special_longest_first():
    tokens = ["<|endoftext|>", "<|endoftext|><|endoftext|>"]
    parts = split_special("a<|endoftext|><|endoftext|>b<|endoftext|>", tokens)
    assert parts == [("a", False), ("<|endoftext|><|endoftext|>", True), ("b", False), ("<|endoftext|>", True)]
    assert split_special("", tokens) == []
    assert split_special("plain", []) == [("plain", False)]


def test_special_token_errors():
    with pytest.raises(ValueError, match="duplicate special tokens"):
        special_token_pattern(["<s>", "<s>"])
    with pytest.raises(ValueError, match="non-empty strings"):
        special_token_pattern([""])
    assert special_token_pattern([]) is None


@given(st.text(alphabet="ab<|>", max_size=60))
def test_split_special_joins_back_and_finds_every_token(text):
    parts = split_special(text, ["<|a|>", "<|a|><|a|>"])
    assert "".join(p for p, _ in parts) == text
    for piece, special in parts:
        assert piece
        assert special == (piece in ("<|a|>", "<|a|><|a|>"))
        if not special:
            assert regex.search(r"<\|a\|>", piece) is None
