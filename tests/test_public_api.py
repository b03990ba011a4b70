"""The public names of DESIGN.md, which notebooks, exercises and users rely on."""

import inspect

import pytest

import bpe_lab


@pytest.mark.parametrize(
    "name, params",
    [
        ("train_bpe", ["word_freq", "num_merges", "tie_break", "end_of_word"]),
        ("train_trace", ["word_freq", "num_merges", "tie_break", "end_of_word"]),
        ("encode_word", ["word", "merges", "end_of_word"]),
        ("decode_words", ["symbols", "end_of_word"]),
        ("train_bytelevel", ["input_path", "vocab_size", "special_tokens"]),
        ("Tokenizer", ["vocab", "merges", "special_tokens"]),
    ],
)
def test_design_signatures(name, params):
    signature = inspect.signature(getattr(bpe_lab, name))
    assert list(signature.parameters)[: len(params)] == params
    for keyword in ("tie_break", "end_of_word"):
        if keyword in signature.parameters:
            assert signature.parameters[keyword].kind is inspect.Parameter.KEYWORD_ONLY


def test_design_defaults():
    params = inspect.signature(bpe_lab.train_bpe).parameters
    assert params["tie_break"].default == "first"
    assert params["end_of_word"].default == "</w>"


def test_tokenizer_methods():
    for method in ("encode", "decode", "encode_iterable", "save"):
        assert callable(getattr(bpe_lab.Tokenizer, method))
    assert isinstance(inspect.getattr_static(bpe_lab.Tokenizer, "load"), (classmethod, staticmethod))
    assert isinstance(inspect.getattr_static(bpe_lab.Tokenizer, "from_files"), (classmethod, staticmethod))


def test_all_names_exist():
    for name in bpe_lab.__all__:
        assert hasattr(bpe_lab, name), name


def test_trace_to_frame():
    trace = bpe_lab.train_trace({"low": 5, "lower": 2, "newest": 6, "widest": 3}, 5)
    assert list(trace.to_frame()["new symbol"]) == ["es", "est", "est</w>", "lo", "low"]
