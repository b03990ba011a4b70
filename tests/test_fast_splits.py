"""The fast pre-tokenizers cut exactly as the ``regex`` module does.

Each named pattern's ``Pattern.split`` is a ``FastSplit`` (GPT-2's and
r50k's: ``gpt2_pretokenize``): Python's ``re`` with an ASCII form of the
pattern on ASCII text, ``regex`` in windows around the rest. Their pieces
must be ``regex.findall``'s with the pattern itself, on any text: here
adversarial text of every kind the patterns treat specially (mixed scripts,
digit runs, apostrophes, every kind of white space, combining marks, emoji,
random code points), and long ASCII stretches around non-ASCII runs, so
that the windows are exercised too.
"""

from __future__ import annotations

import re
from unittest import mock

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_lab.core import pretokenize
from bpe_lab.core.patterns import ASCII_PATTERNS, PATTERNS, SAFE_CUTS, resolve_pattern
from bpe_lab.core.pretokenize import FastSplit, gpt2_pretokenize

NAMES = ["gpt2", "r50k", "cl100k", "o200k", "llama3"]

#: Every character of Unicode's White_Space, and the four ASCII separators
#: that Python's str.isspace() calls white space but ``regex`` does not.
WHITE_SPACE = list("\t\n\x0b\x0c\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000") + [
    chr(c) for c in range(0x2000, 0x200B)
]
NOT_WHITE_SPACE = list("\x1c\x1d\x1e\x1f\u200b\ufeff")
#: Letters of each category, digits that are not ASCII, apostrophes
#: (ASCII and U+2019), combining marks, emoji with joiners, the symbols the
#: patterns name.
TRICKY = (
    WHITE_SPACE
    + NOT_WHITE_SPACE
    + list("'’`sdmtlvreSDMTLVREaZ09٣²Ⅻ½ǅʰ中かé\u0301\u0308क्ष🙂👩\u200d💻/\\$.,-_!?()")
    + ["'s", "'S", "'ll", "'LL", "'re", "'Ve", "’s", "\r\n", "\r\n\r\n", "\n\n  ", "  \n", ".\n", "1234567"]
)
TEXT = st.lists(
    st.one_of(
        st.sampled_from(TRICKY),
        st.text(st.characters(blacklist_categories=("Cs",)), max_size=5),  # any code point but a surrogate
        st.text(st.characters(max_codepoint=127), max_size=12),
    ),
    max_size=40,
).map("".join)
ASCII_TEXT = st.text(st.characters(max_codepoint=127), max_size=120) | st.lists(
    st.sampled_from(
        list(" \t\n\r\x0b\x0c\x1c'sdmtlvreSDMTLVRExyXY019/.,$") + ["'ll", "'LL", "\r\n", "  ", "\n\n", "xY", "Xy"]
    ),
    max_size=40,
).map("".join)


def test_each_named_pattern_takes_a_fast_split():
    for name in NAMES:
        split = resolve_pattern(name).split
        assert split is gpt2_pretokenize if name in ("gpt2", "r50k") else isinstance(split, FastSplit)
    assert sorted(ASCII_PATTERNS) == ["cl100k", "llama3", "o200k"]


@pytest.mark.parametrize("name", sorted(ASCII_PATTERNS))
@settings(max_examples=300)
@given(text=ASCII_TEXT)
def test_the_ascii_form_cuts_ascii_text_as_the_pattern(name, text):
    assert re.findall(ASCII_PATTERNS[name], text, re.ASCII) == regex.findall(PATTERNS[name], text)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=300)
@given(text=TEXT)
def test_the_fast_split_cuts_any_text_as_the_pattern(name, text):
    assert resolve_pattern(name).split(text) == regex.findall(PATTERNS[name], text)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=150)
@given(
    parts=st.lists(st.one_of(ASCII_TEXT, TEXT), max_size=6),
    stretch=st.sampled_from([1, 2, 5, 40]),
)
def test_windows_around_non_ascii_runs_cut_as_the_pattern(name, parts, stretch):
    # with a short ASCII_STRETCH, most ASCII stretches between non-ASCII
    # runs go to re, and the windows' edges are cut at the safe cuts
    text = "".join(parts)
    with mock.patch.object(pretokenize, "ASCII_STRETCH", stretch):
        assert resolve_pattern(name).split(text) == regex.findall(PATTERNS[name], text)


@pytest.mark.parametrize("name", sorted(ASCII_PATTERNS))
def test_exact_pieces_around_a_non_ascii_word(name):
    # a long ASCII stretch, one accented word, a long stretch again: the
    # window runs from the safe cut before " #" to the one before " y"
    text = "x = 1 " * 50 + "# café ok\nDon't" + " y" * 200
    contraction = ["Don't"] if name == "o200k" else ["Don", "'t"]  # o200k keeps it on its word
    head = ["x", " =", " ", "1"] + [" x", " =", " ", "1"] * 49
    assert resolve_pattern(name).split(text) == head + [" #", " café", " ok", "\n"] + contraction + [" y"] * 200


def test_a_fast_split_names_its_forms_and_refuses_bytes():
    split = FastSplit(r"[a-z]+|[^a-z]", r"\p{L}+|\P{L}", SAFE_CUTS["gpt2"])
    assert split("ab cé") == ["ab", " ", "cé"]
    assert "FastSplit('[a-z]+|[^a-z]'" in repr(split)
    with pytest.raises(TypeError, match="text must be a str, got bytes"):
        split(b"ab")
