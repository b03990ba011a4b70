"""bpe_lab's Tokenizer gives tiktoken's ids, token for token.

tiktoken is the oracle, built offline from bpe_lab's own vocabulary (never
``tiktoken.get_encoding``, which downloads): once with GPT-2's real ranks and
once with a small vocabulary trained here.
"""

from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizer_support import SAMPLES, SPECIAL_SAMPLE, real_text, small_trained_tokenizer, tiktoken_twin

from bpe_lab.bytelevel.gpt2 import gpt2_tokenizer
from bpe_lab.bytelevel.tokenizer import Tokenizer
from bpe_lab.bytelevel.train import train_bytelevel

TOKENIZERS = {"gpt2": gpt2_tokenizer, "trained": small_trained_tokenizer}


@cache
def tokenizer_and_oracle(name):
    tokenizer = TOKENIZERS[name]()
    return tokenizer, tiktoken_twin(tokenizer)


@pytest.fixture(params=sorted(TOKENIZERS))
def pair(request):
    return tokenizer_and_oracle(request.param)


def test_gpt2_is_gpt2():
    tok = gpt2_tokenizer()
    assert len(tok) == 50257 and tok.special_ids == {"<|endoftext|>": 50256}
    assert len(tok.merges) == 50000
    assert tok.merges[:3] == [(b" ", b"t"), (b" ", b"a"), (b"h", b"e")]  # merges.txt as released
    assert tok.encode("Hello world") == [15496, 995]  # GPT-2's well-known ids


def test_real_text(pair):
    tok, oracle = pair
    text = real_text()
    assert tok.encode(text) == oracle.encode(text, allowed_special="all")


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_samples(pair, name):
    tok, oracle = pair
    assert tok.encode(SAMPLES[name]) == oracle.encode(SAMPLES[name], allowed_special="all")


def test_special_tokens(pair):
    tok, oracle = pair
    ids = tok.encode(SPECIAL_SAMPLE)
    assert ids == oracle.encode(SPECIAL_SAMPLE, allowed_special="all")
    assert ids.count(tok.special_ids["<|endoftext|>"]) == 4


# (allowed_special, disallowed_special) as tiktoken takes them; None: its default
KEYWORDS = [
    ("all", "all"),
    (set(), ()),
    ({"<|endoftext|>"}, "all"),
    ({"<|endoftext|>"}, ()),
    (None, ()),
    ("all", None),
]


def keywords(allowed, disallowed):
    given = {"allowed_special": allowed, "disallowed_special": disallowed}
    return {key: value for key, value in given.items() if value is not None}


@pytest.mark.parametrize("allowed, disallowed", KEYWORDS)
@pytest.mark.parametrize("text", [SPECIAL_SAMPLE, SAMPLES["english"], "<|endoftext|>", "<|endoftext|" + "> <|endof"])
def test_allowed_and_disallowed_special_like_tiktoken(pair, allowed, disallowed, text):
    tok, oracle = pair
    ours = keywords(allowed, disallowed)
    theirs = keywords(allowed, disallowed)
    ours.setdefault("allowed_special", set())  # tiktoken's default, where the keyword is left out
    assert tok.encode(text, **ours) == oracle.encode(text, **theirs)


@pytest.mark.parametrize("allowed, disallowed", [(set(), "all"), (None, None), (None, {"<|endoftext|>"})])
def test_a_disallowed_special_token_raises_like_tiktoken(pair, allowed, disallowed):
    tok, oracle = pair
    theirs = keywords(allowed, disallowed)
    ours = {"allowed_special": set(), "disallowed_special": "all"} | theirs
    with pytest.raises(ValueError, match="disallowed special token"):
        oracle.encode(SPECIAL_SAMPLE, **theirs)
    with pytest.raises(ValueError, match=r"special token '<\|endoftext\|>' at character 5, which disallowed_special"):
        tok.encode(SPECIAL_SAMPLE, **ours)


@pytest.mark.parametrize("text", [SPECIAL_SAMPLE, real_text()[:5000], ""])
def test_encode_ordinary_like_tiktoken(pair, text):
    tok, oracle = pair
    assert tok.encode_ordinary(text) == oracle.encode_ordinary(text)
    assert tok.encode_ordinary(text) == tok.encode(text, allowed_special=set(), disallowed_special=())


def test_long_pieces_use_the_heap_and_agree(pair):
    tok, oracle = pair
    text = " " * 3000 + "x" + "a" * 700 + "\n" * 500 + "🎉" * 300
    assert tok.encode(text) == oracle.encode(text)


# Characters that stress the pattern's branches, mixed with arbitrary Unicode.
TRICKY = st.sampled_from(
    list("ab 'lsdtrvemLS\n\r\t\u00a0\u30000123你好é🎉\u0301.,!?-") + ["<|endoftext|>", "'ll", "  ", "\r\n"]
)
# Arbitrary text is limited to characters assigned in the Unicode version of
# this Python's unicodedata: the `regex` module and tiktoken's Rust regex ship
# different Unicode versions, so a character assigned only in the newest one
# (say U+3D000, a letter to `regex` 2026 but unassigned to tiktoken 0.14) is
# split differently by the two libraries, not by bpe_lab.
ASSIGNED = st.characters(blacklist_categories=("Cn",))
TEXT = st.lists(st.one_of(TRICKY, st.text(ASSIGNED, max_size=8)), max_size=40).map("".join)


@pytest.mark.parametrize("name", sorted(TOKENIZERS))
@settings(max_examples=150)
@given(text=TEXT)
def test_hypothesis_text(name, text):
    tok, oracle = tokenizer_and_oracle(name)
    assert tok.encode(text) == oracle.encode(text, allowed_special="all")
    assert tok.encode_ordinary(text) == oracle.encode_ordinary(text)


def test_trained_by_train_bytelevel(tmp_path):
    """A vocabulary from bpe_lab's own trainer, checked against tiktoken."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(real_text() + "".join(SAMPLES.values()), encoding="utf-8")
    vocab, merges = train_bytelevel(corpus, 256 + 1 + 400, ["<|endoftext|>"])
    tok = Tokenizer(vocab, merges, ["<|endoftext|>"])
    oracle = tiktoken_twin(tok)
    text = real_text() + SPECIAL_SAMPLE + "".join(SAMPLES.values())
    assert tok.encode(text) == oracle.encode(text, allowed_special="all")
    assert tok.decode(tok.encode(text)) == text
