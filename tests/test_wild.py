"""The measurements of notebook 07 (``bpe_lab.variants.quirks``): each one on
a worked case small enough to check by hand, on GPT-2's real ranks, and on
random text where a property must hold."""

from __future__ import annotations

import io
import unicodedata

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_lab.bytelevel.gpt2 import gpt2_tokenizer
from bpe_lab.bytelevel.tokenizer import Tokenizer
from bpe_lab.core.corpora import LANGUAGES, parallel_sentences
from bpe_lab.core.patterns import ZH_RANGE_PATTERN, pretokenize_with
from bpe_lab.core.pretokenize import word_frequencies
from bpe_lab.core.train import train_bpe
from bpe_lab.variants import quirks


@pytest.fixture(scope="module")
def gpt2() -> Tokenizer:
    return gpt2_tokenizer()


def abc_tokenizer() -> Tokenizer:
    """256 bytes, then ``ab`` and ``abc``: every ``ab`` followed by ``c`` is absorbed."""
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"ab", 257: b"abc"}
    return Tokenizer(vocab, [(b"a", b"b"), (b"ab", b"c")])


# -- tokens as text, letters, digits, white space


@settings(max_examples=100)
@given(text=st.text(max_size=40))
def test_token_strings_cover_the_text(gpt2, text):
    tokens = [gpt2.decode_bytes([i]) for i in gpt2.encode(text)]
    assert b"".join(tokens) == text.encode("utf-8")
    assert len(quirks.token_strings(gpt2, text)) == len(tokens)


@settings(max_examples=100)
@given(text=st.text(st.sampled_from("rstraw berry Ré低"), max_size=40))
def test_letters_by_token_counts_every_letter(gpt2, text):
    counted = quirks.letters_by_token(gpt2, text, "r")
    assert sum(n for _, n in counted) == text.count("r")


def test_strawberry_is_one_gpt2_token(gpt2):
    assert quirks.letters_by_token(gpt2, " strawberry", "r") == [(" strawberry", 3)]
    assert quirks.token_strings(gpt2, "strawberry") == ["st", "raw", "berry"]
    assert quirks.token_strings(Tokenizer.byte_level(), "é") == ["\\xc3", "\\xa9"]


def test_digit_shapes(gpt2):
    shapes = quirks.digit_shapes(gpt2, range(1000, 10_000))
    assert sum(shapes.values()) == 9000 and all(sum(shape) == 4 for shape in shapes)
    assert shapes == {(2, 2): 4680, (1, 3): 3417, (3, 1): 513, (1, 2, 1): 214, (4,): 176}
    assert quirks.digit_shapes(Tokenizer.byte_level(), [12, 345], prefix="") == {(1, 1): 1, (1, 1, 1): 1}


def test_indentation_and_whitespace_tokens(gpt2):
    assert quirks.indentation_cost(gpt2, [0, 1, 4, 8]) == {0: 2, 1: 2, 4: 5, 8: 9}
    assert quirks.whitespace_tokens(gpt2) == [b"\t", b"\n", b"\x0b", b"\x0c", b"\r", b" ", b"\n\n"]
    assert b"<|endoftext|>" not in quirks.whitespace_tokens(gpt2)


# -- under-trained tokens


def test_an_absorbed_merge_is_never_used():
    tok = abc_tokenizer()
    assert quirks.token_strings(tok, "abc abc") == ["abc", " ", "abc"]
    rare = quirks.rarely_used(tok, "abc abc", "ab", limit=5)
    assert [(use.text, use.train, use.heldout) for use in rare] == [("ab", 0, 1), ("abc", 2, 0)]
    assert quirks.built_from(tok, b"ab") == [b"abc"] and quirks.built_from(tok, b"abc") == []
    assert quirks.token_uses(tok, "abc ab")[256] == 1


def test_rarely_used_ranks_by_uses_then_length():
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"xy", 257: b"xyz", 258: b"qq"}
    tok = Tokenizer(vocab, [(b"x", b"y"), (b"xy", b"z"), (b"q", b"q")], ["<|endoftext|>"])
    ranked = quirks.rarely_used(tok, "xyz qq", "", limit=10)
    assert [use.token for use in ranked] == [b"xy", b"xyz", b"qq"]  # 0 uses; then 1 use, longer first
    assert all(use.id != tok.special_ids["<|endoftext|>"] for use in ranked)


# -- languages, Unicode


def test_language_costs(gpt2):
    sentences = {lang: parallel_sentences(lang) for lang in LANGUAGES}
    costs = quirks.language_costs(gpt2, sentences)
    assert costs == {"en": 266, "zh": 700, "de": 523, "fr": 518, "es": 521}
    assert costs["en"] == sum(len(gpt2.encode(s)) for s in sentences["en"])


def test_normal_forms(gpt2):
    forms = quirks.normal_forms("café")
    assert [len(forms[f]) for f in quirks.NORMAL_FORMS] == [4, 5, 4, 5]
    assert gpt2.encode(forms["NFC"]) != gpt2.encode(forms["NFD"])
    assert quirks.normal_forms("ﬁ") == {"NFC": "ﬁ", "NFD": "ﬁ", "NFKC": "fi", "NFKD": "fi"}


def test_han_coverage():
    coverage = quirks.han_coverage()
    # assigned first, then Han (the reverse of han_coverage's order), in one regex scan
    assigned = "".join(
        chr(cp) for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF and unicodedata.category(chr(cp)) != "Cn"
    )
    assigned_han = len(regex.findall(r"\p{Han}", assigned))
    assert sum(coverage.values()) == assigned_han
    assert coverage["inside the range"] == 20_902 == 0x9FA5 - 0x4E00 + 1  # all assigned since Unicode 1.1
    assert coverage["U+9FA6-U+9FFF (the rest of the block)"] <= 90
    if unicodedata.unidata_version == "14.0.0":  # the counts notebook 07 shows
        assert assigned_han == 94_215 and coverage["U+3400-U+4DBF (Extension A)"] == 6_592
    everything = quirks.han_coverage(0, 0x10FFFF)
    assert everything == {"inside the range": assigned_han}


def test_is_han():
    assert all(quirks.is_han(ch) for ch in "我㐀𠮷々")
    assert not any(quirks.is_han(ch) for ch in "aか。1 ")


# -- the tutorial's range pattern forbids Han merges


def test_range_pattern_never_merges_two_han_characters():
    def cut(line: str) -> list[str]:
        return [piece.strip() for piece in pretokenize_with(line, ZH_RANGE_PATTERN) if piece.strip()]

    text = parallel_sentences("en") + parallel_sentences("zh")
    merges = train_bpe(word_frequencies(text, split=cut), 300, end_of_word=None)
    assert len(merges) == 300
    assert not any(quirks.is_han(ch) for a, b in merges for ch in a + b)


# -- SentencePiece's byte fallback, as the notebook trains it


def test_sentencepiece_byte_fallback():
    spm = pytest.importorskip("sentencepiece")
    lines = [s for lang in ("en", "de", "fr", "es") for s in parallel_sentences(lang)]

    def train(byte_fallback: bool):
        model = io.BytesIO()
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(lines),
            model_writer=model,
            model_type="bpe",
            vocab_size=400,
            byte_fallback=byte_fallback,
            character_coverage=1.0,
            num_threads=1,
            minloglevel=2,
        )
        return spm.SentencePieceProcessor(model_proto=model.getvalue())

    with_bytes, plain = train(True), train(False)
    assert sum(with_bytes.is_byte(i) for i in range(with_bytes.get_piece_size())) == 256
    assert with_bytes.encode("你", out_type=str)[-3:] == ["<0xE4>", "<0xBD>", "<0xA0>"]
    assert with_bytes.decode(with_bytes.encode("你好")) == "你好"
    assert plain.unk_id() in plain.encode("你好") and plain.decode(plain.encode("你好")) != "你好"
