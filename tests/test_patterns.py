"""The pre-tokenization patterns of ``bpe_lab.core.patterns``: the strings
are the ones tiktoken ships, and the ``regex`` module cuts text with each
of them exactly where tiktoken's Rust engine does.

Nothing is downloaded: tiktoken's encoding constructors would fetch their
rank files, so they run here with the two loaders stubbed out and only the
``pat_str`` they return is kept.

How tiktoken is made to show its cuts: tiktoken never says where it cut, only
which ids came out. Give it a table that holds, as one token each, every run
of consecutive pieces that ``regex`` cut (``p1``, ``p1 p2``, ..., ``p2``,
``p2 p3``, ...) plus the 256 single bytes. If tiktoken cuts the same pieces,
each is in the table and comes out as its own id. If it cuts differently,
either one of its pieces ends inside a ``regex`` piece (and a token ends
there, which no ``regex`` piece's id does), or one of its pieces joins
several ``regex`` pieces (a run, so it is in the table and comes out as one
id where two were expected). Either way the ids differ.

Random text is drawn from the characters Python's Unicode 14.0 assigns. On
code points it leaves unassigned the two engines' Unicode tables can differ:
``regex`` counts U+3D000 as a letter and tiktoken does not, so ``"A\U0003d000"``
is one piece for one and two for the other.
"""

from __future__ import annotations

import unicodedata
from functools import cache

import pytest
import regex
import tiktoken
import tiktoken_ext.openai_public as openai_public
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_lab.core.corpora import LANGUAGES, parallel_sentences, python_docs
from bpe_lab.core.patterns import (
    CL100K_PATTERN,
    JA_RANGE_PATTERN,
    LLAMA3_PATTERN,
    O200K_PATTERN,
    PATTERNS,
    R50K_PATTERN,
    SAFE_CUTS,
    ZH_RANGE_PATTERN,
    pattern_named,
    pretokenize_with,
    side_by_side,
)
from bpe_lab.core.pretokenize import GPT2_PATTERN

TRICKY = [
    "I'LL say DON'T, you're, WE'VE, it'S",
    "camelCaseWord HTTPServer iPhone McDonald's",
    "x\r\n\r\ny\n\n\n  z  \n",
    "trailing spaces   ",
    "\t\tindented\n    four\n        eight",
    "12345678901 3.14159 1,000,000 ０１２ ¼ Ⅻ",
    "$100 #tag @user a/b/c //comment\n/* x */",
    "e\u0301 \u0301alone n\u0303o क्षत्रिय",
    "自然语言处理。今天天气很好，我们去公园散步吧！ひらがなカタカナ",
    "emoji 🙂 👩‍💻 🇺🇳!!",
    "",
    " ",
    "\n",
]


def real_texts() -> list[str]:
    """Every parallel sentence, and the held-out documentation in pieces of
    at most 400 characters (the oracle's table grows with the square of a
    text's pieces)."""
    docs = python_docs("heldout")[:24_000]
    return [s for lang in LANGUAGES for s in parallel_sentences(lang)] + [
        docs[i : i + 400] for i in range(0, len(docs), 400)
    ]


# -- the strings are tiktoken's


@cache
def tiktoken_patterns() -> dict[str, str]:
    """``{encoding name: pat_str}`` from the installed tiktoken_ext, with its
    rank loaders replaced by stubs, so nothing is fetched."""
    saved = openai_public.load_tiktoken_bpe, openai_public.data_gym_to_mergeable_bpe_ranks
    openai_public.load_tiktoken_bpe = lambda *args, **kwargs: {}
    openai_public.data_gym_to_mergeable_bpe_ranks = lambda *args, **kwargs: {}
    try:
        return {name: make()["pat_str"] for name, make in openai_public.ENCODING_CONSTRUCTORS.items()}
    finally:
        openai_public.load_tiktoken_bpe, openai_public.data_gym_to_mergeable_bpe_ranks = saved


def test_the_strings_are_tiktokens():
    shipped = tiktoken_patterns()
    assert shipped["cl100k_base"] == CL100K_PATTERN
    assert shipped["o200k_base"] == O200K_PATTERN
    assert {shipped[name] for name in ("gpt2", "r50k_base", "p50k_base", "p50k_edit")} == {R50K_PATTERN}
    assert PATTERNS == {
        "gpt2": GPT2_PATTERN,
        "r50k": R50K_PATTERN,
        "cl100k": CL100K_PATTERN,
        "o200k": O200K_PATTERN,
        "llama3": LLAMA3_PATTERN,
    }


def test_llama3_is_cl100k_as_first_published():
    """The two differ as strings only in tiktoken's later rewrite: possessive
    quantifiers, ``\\s++$``, ``\\s*[\\r\\n]`` for ``\\s*[\\r\\n]+`` and a
    final ``\\s`` for ``\\s+``. Undo the rewrite and the strings are equal."""
    undone = (
        CL100K_PATTERN.replace("++", "+")
        .replace("?+", "?")
        .replace("{1,3}+", "{1,3}")
        .replace("*+", "*")
        .replace(r"|\s+$", "")
        .replace(r"\s*[\r\n]|", r"\s*[\r\n]+|")
        .replace("'(?i:[sdmt]|ll|ve|re)", "(?i:'s|'t|'re|'ve|'m|'ll|'d)")
    )
    assert undone.endswith(r"|\s")
    assert undone + "+" == LLAMA3_PATTERN


# -- regex cuts where tiktoken cuts


def cuts_like_tiktoken(pattern: str, text: str, *, tiktoken_pattern: str | None = None) -> bool:
    """True if tiktoken, given ``pattern`` (or ``tiktoken_pattern``, to test
    this test), cuts ``text`` into exactly the pieces the ``regex`` module
    finds with ``pattern`` (the module docstring says why the ids can only
    match then)."""
    pieces = [piece.encode("utf-8") for piece in regex.findall(pattern, text)]
    if not pieces:
        return text == ""
    runs = sorted({b"".join(pieces[i:j]) for i in range(len(pieces)) for j in range(i + 1, len(pieces) + 1)})
    ranks = {run: rank for rank, run in enumerate(runs)}
    for byte in range(256):
        ranks.setdefault(bytes([byte]), len(ranks))  # so that a different cut cannot panic the Rust code
    oracle = tiktoken.Encoding(
        name="runs", pat_str=tiktoken_pattern or pattern, mergeable_ranks=ranks, special_tokens={}
    )
    return oracle.encode_ordinary(text) == [ranks[piece] for piece in pieces]


def test_the_oracle_can_fail():
    """A different cut is caught, whether tiktoken's pieces are coarser,
    finer, or cut elsewhere."""
    assert cuts_like_tiktoken(r"\d{1,3}|\D+", "12345 x")
    assert not cuts_like_tiktoken(r"\d{1,3}|\D+", "12345 x", tiktoken_pattern=r"\d+|\D+")  # coarser
    assert not cuts_like_tiktoken(r"\d+|\D+", "12345 x", tiktoken_pattern=r"\d{1,3}|\D+")  # finer
    assert not cuts_like_tiktoken(r"\d{1,3}|\D+", "12345 x", tiktoken_pattern=r"\d{1,2}|\D+")  # elsewhere
    assert not cuts_like_tiktoken(r"\w+|\s+", "ab  cd", tiktoken_pattern=r"\w+|\s")  # 2-byte pieces too
    assert not cuts_like_tiktoken(r"\w|\s", "ab", tiktoken_pattern=r"\w+|\s")  # one-byte pieces too


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_real_text_cut_like_tiktoken(name):
    pattern = PATTERNS[name]
    bad = [text for text in real_texts() + TRICKY if not cuts_like_tiktoken(pattern, text)]
    assert bad == []


#: Characters of every kind (those Python's Unicode 14.0 has assigned, which
#: both regex engines know), weighted towards the ones the patterns treat
#: specially: white space, new lines, digits, apostrophes, capitals, marks.
CHARS = st.one_of(
    st.sampled_from(list(" \t\r\n\u3000'’sdmtlvreSDMTLVRE0123456789Aa$/.,-_é\u0301低か🙂")),
    st.characters(codec="utf-8").filter(lambda ch: unicodedata.category(ch) != "Cn"),
)


@pytest.mark.parametrize("name", sorted(PATTERNS))
@settings(max_examples=150)
@given(text=st.text(CHARS, max_size=40))
def test_any_text_cut_like_tiktoken(name, text):
    assert cuts_like_tiktoken(PATTERNS[name], text)


# -- what the patterns do


@settings(max_examples=200)
@given(text=st.text(CHARS, max_size=60))
def test_pieces_join_to_the_text(text):
    for name in PATTERNS:
        assert "".join(pretokenize_with(text, name)) == text
    assert "".join(pretokenize_with(text, ZH_RANGE_PATTERN)) == text


def _ending_joined(pieces: list[str]) -> list[str]:
    """The pieces with the white-space pieces that end the text joined into one."""
    end = len(pieces)
    while end and pieces[end - 1].isspace():
        end -= 1
    return pieces[:end] + (["".join(pieces[end:])] if end < len(pieces) else [])


@settings(max_examples=200)
@given(text=st.text(CHARS, max_size=60))
def test_old_and_new_cl100k_cut_alike_but_for_the_white_space_that_ends_a_text(text):
    old, new = pretokenize_with(text, "llama3"), pretokenize_with(text, "cl100k")
    assert old == new or _ending_joined(old) == _ending_joined(new) and new[-1].isspace()
    assert pretokenize_with(text, "gpt2") == pretokenize_with(text, "r50k")


@pytest.mark.parametrize(
    ("text", "old", "new"),
    [
        ("ok\n  ", ["ok", "\n", "  "], ["ok", "\n  "]),  # found by hypothesis as "\r "
        ("\r ", ["\r", " "], ["\r "]),
        ("ok\n  done", ["ok", "\n", " ", " done"], ["ok", "\n", " ", " done"]),  # not at the end: alike
        ("ok  ", ["ok", "  "], ["ok", "  "]),
    ],
)
def test_only_today_s_cl100k_keeps_the_ending_white_space_whole(text, old, new):
    assert pretokenize_with(text, "llama3") == old
    assert pretokenize_with(text, "cl100k") == new
    assert cuts_like_tiktoken(PATTERNS["llama3"], text) and cuts_like_tiktoken(PATTERNS["cl100k"], text)


def test_digits_contractions_and_case():
    cut = side_by_side("DON'T 1234567", ["gpt2", "cl100k", "o200k", "llama3"])
    assert cut["gpt2"] == ["DON", "'", "T", " 1234567"]
    assert cut["cl100k"] == cut["llama3"] == ["DON", "'T", " ", "123", "456", "7"]
    assert cut["o200k"] == ["DON'T", " ", "123", "456", "7"]
    assert pretokenize_with("camelCase", "o200k") == ["camel", "Case"]
    assert pretokenize_with("camelCase", "cl100k") == ["camelCase"]


def test_range_patterns_cut_han_one_by_one():
    pieces = ["今", "天", " ", "天", "气", "hello", "世", "界"]
    assert pretokenize_with("今天 天气hello世界", ZH_RANGE_PATTERN) == pieces
    assert pretokenize_with("ひらがなabc", JA_RANGE_PATTERN) == ["ひ", "ら", "が", "な", "abc"]
    assert pretokenize_with("㐀鿿", ZH_RANGE_PATTERN) == ["㐀鿿"]  # outside U+4E00-U+9FA5: one piece


def test_pattern_names():
    assert pattern_named("o200k") == O200K_PATTERN and pattern_named(r"\s+") == r"\s+"
    with pytest.raises(ValueError, match="a pattern must be"):
        pattern_named("")
    with pytest.raises(TypeError):
        pretokenize_with(b"bytes", "gpt2")  # type: ignore[arg-type]


# -- where a text may be cut (SAFE_CUTS)

#: Characters around the cuts: printable ASCII of every kind, the white space
#: the rules look at and the white space they do not, and a few others.
CUT_CHARS = st.one_of(
    st.sampled_from(list(" \n\r\t\u00a0.,;:!?'\"$/\\()-_aAzZ0189sStT") + ["'ll", "'S", "\r\n", ".\n", "a\n"]),
    CHARS,
)


@pytest.mark.parametrize("name", sorted(SAFE_CUTS))
@settings(max_examples=150)
@given(text=st.lists(CUT_CHARS, max_size=40).map("".join))
def test_a_safe_cut_splits_no_piece(name, text):
    """At every position SAFE_CUTS allows, cutting the text and pre-tokenizing
    the two sides gives the pieces of the whole text."""
    pieces = regex.findall(PATTERNS[name], text)
    for match in regex.finditer(SAFE_CUTS[name], text):
        cut = match.start()
        assert regex.findall(PATTERNS[name], text[:cut]) + regex.findall(PATTERNS[name], text[cut:]) == pieces, cut


@pytest.mark.parametrize(
    ("name", "text", "cut"),
    [
        ("cl100k", "a.\nb", 2),  # the symbols branch takes the new line: ".\n"
        ("o200k", "a./\nb", 3),  # o200k's takes "/" and new lines
        ("llama3", "a!\nb", 2),
    ],
)
def test_gpt2_s_rule_would_split_a_piece_of_the_newer_patterns(name, text, cut):
    """Why the newer patterns have their own rule: GPT-2's allows these cuts
    before a new line after a symbol, and they split a piece."""
    assert cut in [m.start() for m in regex.finditer(SAFE_CUTS["gpt2"], text)]
    assert cut not in [m.start() for m in regex.finditer(SAFE_CUTS[name], text)]
    whole = regex.findall(PATTERNS[name], text)
    assert regex.findall(PATTERNS[name], text[:cut]) + regex.findall(PATTERNS[name], text[cut:]) != whole
