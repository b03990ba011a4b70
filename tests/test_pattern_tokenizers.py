"""A tokenizer for each pre-tokenization pattern the course teaches.

For GPT-2, r50k, cl100k, o200k and Llama 3: a tokenizer trained with the
pattern by ``train_bytelevel`` gives tiktoken's ids when tiktoken is given the
same regex and the same ranks (the oracle, built offline), cuts text exactly
as ``regex.findall`` does, streams like ``encode``, encodes a file like
``encode``, and saves and loads its pattern. Trained once per pattern, on
the package's documentation and five-language corpora (a few hundred merges).
"""

from __future__ import annotations

import json
from itertools import pairwise

import numpy as np
import pytest
import regex
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_lab.bytelevel.tokenizer import Tokenizer
from bpe_lab.bytelevel.train import train_bytelevel
from bpe_lab.core.corpora import DATA_DIR
from bpe_lab.core.patterns import PATTERNS, resolve_pattern
from bpe_lab.core.pretokenize import gpt2_pretokenize

EOT = "<|endoftext|>"
NAMES = list(PATTERNS)
MERGES = 300

#: Text that stresses where the patterns differ, one kind per entry.
ADVERSARIAL = {
    "digit runs": "1234567890123456789 x=00000000007 3.14159265358979 1,000,000 ２０２４",
    "white space at the end": "done   ",
    "new lines and spaces at the end": "ok\n  ",
    "a lone CR and space": "\r ",
    "tabs and new lines at the end": "x\t\n \t\n\n",
    "upper-case contractions": "DON'T I'M WE'LL THEY'RE YOU'VE SHE'D IT'S don't i'm it'S 'LL",
    "CR/LF mixes": "a\r\nb\n\rc\r\r\n\nd \r\n e\r\n\r\n",
    "emoji with ZWJ": "👩\u200d💻 👨\u200d👩\u200d👧\u200d👦 🏳\ufe0f\u200d🌈 👍🏽 🇯🇵",
    "Arabic-Indic digits": "٠١٢٣٤٥٦٧٨٩ ۱۲۳۴۵۶ رقم ١٢٣٤٥",
    "combining marks": "e\u0301 n\u0303o a\u0308\u0301 \u0301alone क्षत्रिय Ǻ",
    "Chinese": "自然语言处理是人工智能的一个分支。今天天气很好，我们去公园散步吧！",
    "code": 'def f(x):\n\tif x >= 10:  # check\n\t\treturn x ** 2\n\n\n    return {"a": [1, 2.5e-3]}\r\n',
    "symbols and new lines": "a.\nb!\n\nc)\r\n/* x */\n//y\n$100 #tag @user a/b/c",
    "camel case": "camelCaseWord HTTPServer iPhone McDonald's XMLHttpRequest",
    "special tokens": f"Hello{EOT} world{EOT}{EOT}\n{EOT}end",
    "empty": "",
}


@pytest.fixture(scope="session")
def corpus(tmp_path_factory):
    """The package's documentation and five-language corpora, as one file."""
    path = tmp_path_factory.mktemp("pattern_corpus") / "corpus.txt"
    text = (
        (DATA_DIR / "python_docs.txt").read_text("utf-8") + EOT + (DATA_DIR / "five_languages.txt").read_text("utf-8")
    )
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def trained(corpus):
    """name -> (tokenizer trained with that pattern, its tiktoken twin)."""
    made = {}
    for name in NAMES:
        vocab, merges = train_bytelevel(corpus, 256 + 1 + MERGES, [EOT], pattern=name)
        tok = Tokenizer(vocab, merges, [EOT], pattern=name)
        ranks = {token: i for i, token in vocab.items() if i != tok.special_ids[EOT]}
        oracle = tiktoken.Encoding(
            name=f"bpe_lab_{name}", pat_str=PATTERNS[name], mergeable_ranks=ranks, special_tokens=dict(tok.special_ids)
        )
        made[name] = tok, oracle
    return made


def test_each_pattern_learns_its_own_merges(trained):
    """The pattern decides what can be learned: GPT-2's keeps a space before
    digits (`` 3``) but never a symbol with the new line after it; cl100k's
    symbols branch takes the new lines after a symbol (``.\\n``) and its
    digits take no space. GPT-2 and r50k cut alike, so they learn alike."""
    merges = {name: trained[name][0].merges for name in NAMES}
    assert merges["gpt2"] == merges["r50k"] != merges["cl100k"]
    assert (b" ", b"3") in merges["gpt2"] and (b".", b"\n") not in merges["gpt2"]
    for name in ("cl100k", "o200k", "llama3"):
        assert (b".", b"\n") in merges[name] and (b" ", b"3") not in merges[name]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("kind", sorted(ADVERSARIAL))
def test_adversarial_text_like_tiktoken(trained, name, kind):
    tok, oracle = trained[name]
    text = ADVERSARIAL[kind]
    ids = tok.encode(text)
    assert ids == oracle.encode(text, allowed_special="all")
    assert tok.encode_ordinary(text) == oracle.encode_ordinary(text)
    assert tok.decode(ids) == text


@pytest.mark.parametrize("name", NAMES)
def test_all_the_adversarial_text_at_once_like_tiktoken(trained, name):
    tok, oracle = trained[name]
    text = "".join(ADVERSARIAL.values()) * 3
    assert tok.encode(text) == oracle.encode(text, allowed_special="all")
    assert tok.encode(text, allowed_special=set(), disallowed_special=()) == oracle.encode_ordinary(text)


# Characters assigned in this Python's Unicode (the `regex` module and
# tiktoken's Rust regex ship different Unicode versions; see test_patterns.py),
# weighted towards the characters the patterns treat specially.
TRICKY = st.sampled_from(
    list(" \t\r\n\u00a0\u3000'’sdmtlvreSDMTLVRE0123456789٣Aa$/.,-_é\u0301低か🙂\u200d👩")
    + [EOT, "'ll", "'LL", "\r\n", "  ", "\n\n", ".\n"]
)
ASSIGNED = st.characters(blacklist_categories=("Cn", "Cs"))
TEXT = st.lists(st.one_of(TRICKY, st.text(ASSIGNED, max_size=6)), max_size=30).map("".join)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=100)
@given(text=TEXT)
def test_hypothesis_text_like_tiktoken_and_round_trips(trained, name, text):
    tok, oracle = trained[name]
    ids = tok.encode(text)
    assert ids == oracle.encode(text, allowed_special="all")
    assert tok.decode(ids) == text


# -- the pre-tokenizer each tokenizer uses


@pytest.mark.parametrize("name", NAMES)
def test_pieces_are_regex_findall(trained, name):
    tok, _ = trained[name]
    for text in ADVERSARIAL.values():
        assert tok.pattern.split(text) == regex.findall(PATTERNS[name], text)


@pytest.mark.parametrize("name", NAMES)
def test_each_pattern_takes_its_fast_pre_tokenizer(trained, name):
    # GPT-2's and r50k's cut alike, with gpt2_pretokenize; the others with a
    # FastSplit of their own (tests/test_fast_splits.py checks their pieces)
    tok, _ = trained[name]
    fast = tok.pattern.split
    assert fast is gpt2_pretokenize if name in ("gpt2", "r50k") else fast.pattern == PATTERNS[name]
    assert (tok.pattern.name, tok.pattern.regex) == (name, PATTERNS[name])


def test_a_regex_equal_to_a_named_one_is_that_one():
    for name, pattern in PATTERNS.items():
        assert resolve_pattern(pattern).name == name
        assert Tokenizer.byte_level(pattern=pattern).pattern == resolve_pattern(name)


# -- streaming and files


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=60)
@given(text=TEXT, cuts=st.lists(st.integers(0, 300), max_size=10), block_chars=st.sampled_from([1, 2, 3, 7, 64]))
def test_encode_iterable_equals_encode(trained, name, text, cuts, block_chars):
    tok, _ = trained[name]
    bounds = sorted({0, len(text), *(c for c in cuts if c < len(text))})
    chunks = [text[a:b] for a, b in pairwise(bounds)]
    assert list(tok.encode_iterable(chunks, block_chars=block_chars)) == tok.encode(text)


#: Texts cut where more text changes a pre-token before the cut.
ACROSS_LINES = [
    ["x\n\n  ", "\n"],  # Llama 3 and o200k re-cut a run of white space when a new line follows
    ["don'", "t"],  # o200k's contraction joins the word before it
    ["a.", "\n\nb"],  # the symbols branch takes the new lines after it
    ["12", "34", "5"],
    ["DON'", "T x"],
    ["ok ", " ", " y"],
    ["it'", "s"],
    ["a  ", "b"],
    ["x'l", "l"],
]


@pytest.fixture(scope="session")
def whole_pieces(tmp_path_factory):
    """name -> a tokenizer with the pattern whose every pre-token of the texts
    of ACROSS_LINES is one token: trained on them with room for every merge.
    Its ids then show any pre-token cut differently (with a few hundred
    merges, two cuts of white space often give the same ids)."""
    path = tmp_path_factory.mktemp("whole_pieces") / "texts.txt"
    path.write_text(EOT.join("".join(chunks) for chunks in ACROSS_LINES), encoding="utf-8")
    made = {}
    for name in NAMES:
        vocab, merges = train_bytelevel(path, 256 + 1 + 200, [EOT], pattern=name, on_short="ignore")
        made[name] = Tokenizer(vocab, merges, [EOT], pattern=name)
    return made


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("chunks", ACROSS_LINES, ids="|".join)
def test_encode_iterable_across_line_boundaries(whole_pieces, name, chunks):
    tok = whole_pieces[name]
    text = "".join(chunks)
    expected = tok.encode(text)
    assert len(expected) == len(regex.findall(PATTERNS[name], text))  # one token per pre-token
    for block_chars in (1, 2, 3, 1 << 16):
        assert list(tok.encode_iterable(chunks, block_chars=block_chars)) == expected


def test_encode_file_with_workers_equals_encode(trained, tmp_path):
    """With a newer pattern (GPT-2's: test_encode_file.py): chunks cut by its safe cuts."""
    tok, _ = trained["o200k"]
    text = ("".join(ADVERSARIAL.values()) + "plain words, and more plain words\n") * 40
    path = tmp_path / "text.txt"
    path.write_bytes(text.encode("utf-8"))
    expected = tok.encode(text)
    assert tok.encode_file(path, workers=1, chunk_bytes=300).tolist() == expected
    assert tok.encode_file(path, workers=2, chunk_bytes=300).tolist() == expected


@pytest.mark.parametrize("name", NAMES)
def test_save_and_load_keep_the_pattern(trained, tmp_path, name):
    tok, _ = trained[name]
    path = tmp_path / "tok.json"
    tok.save(path)
    recorded = json.loads(path.read_text("utf-8"))
    assert recorded["version"] == 2 and recorded["pattern"] == {"name": name, "regex": PATTERNS[name]}
    again = Tokenizer.load(path)
    assert again.pattern == tok.pattern and again.merges == tok.merges
    text = "".join(ADVERSARIAL.values())
    assert again.encode(text) == tok.encode(text)
    assert f"# pattern {name}: " in path.with_suffix(".vocab").read_text("utf-8")


def test_a_regex_of_ones_own_is_saved_and_loaded(tmp_path):
    own = r"\p{L}+|\p{N}|[^\p{L}\p{N}]"
    tok = Tokenizer.byte_level([EOT], pattern=own)
    assert tok.pattern.name is None and tok.pattern.safe_cut is None
    assert tok.encode("ab12") == [97, 98, 49, 50]
    tok.save(tmp_path / "own.json")
    assert json.loads((tmp_path / "own.json").read_text("utf-8"))["pattern"] == {"name": None, "regex": own}
    assert Tokenizer.load(tmp_path / "own.json").pattern == tok.pattern


def _old_file(tok: Tokenizer, path) -> None:
    """The file as bpe_lab wrote it before tokenizers had a pattern: version 1, no "pattern"."""
    tok.save(path)
    lines = path.read_text("utf-8").split("\n")
    assert lines[2] == '"version": 2,' and lines[3].startswith('"pattern": ')
    path.write_text("\n".join([*lines[:2], '"version": 1,', *lines[4:]]), encoding="utf-8")


def test_an_old_file_without_a_pattern_loads_as_gpt2(trained, tmp_path):
    tok, _ = trained["gpt2"]
    _old_file(tok, tmp_path / "old.json")
    old = Tokenizer.load(tmp_path / "old.json")
    assert old.pattern.name == "gpt2" and old.pattern.split is gpt2_pretokenize
    assert old.encode(ADVERSARIAL["code"]) == tok.encode(ADVERSARIAL["code"])


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda data: data.update(version=3), r"version 3 is not one this bpe_lab reads \(1, 2\)"),
        (lambda data: data.pop("pattern"), r'"pattern" must be \{"name": a name or null'),
        (lambda data: data.update(pattern="cl100k"), r'"pattern" must be \{"name"'),
        (
            lambda data: data["pattern"].update(name="cl100k"),
            r"line 4: the pattern is named 'cl100k' but its regex is .*cl100k's regex is",
        ),
        (lambda data: data["pattern"].update(name="gpt4"), r"named 'gpt4' .*the names are gpt2, r50k"),
        (lambda data: data["pattern"].update(name=None, regex="(x"), r"line 4: the pattern '\(x' is not a valid regex"),
    ],
)
def test_a_bad_pattern_in_a_file_is_named(tmp_path, change, message):
    path = tmp_path / "tok.json"
    Tokenizer.byte_level().save(path)
    data = json.loads(path.read_text("utf-8"))
    change(data)
    # one entry per line, as save writes it, so that the error can name the line
    path.write_text("{\n" + ",\n".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in data.items()) + "\n}\n", "utf-8")
    with pytest.raises(ValueError, match=message):
        Tokenizer.load(path)


def test_from_files_takes_the_pattern(tmp_path):
    from bpe_lab.bytelevel.files import write_gpt2_files

    tok = Tokenizer.byte_level()
    write_gpt2_files(tok.vocab, tok.merges, tmp_path / "vocab.json", tmp_path / "merges.txt")
    again = Tokenizer.from_files(tmp_path / "vocab.json", tmp_path / "merges.txt", pattern="o200k")
    assert again.pattern.name == "o200k"
    assert Tokenizer.from_files(tmp_path / "vocab.json", tmp_path / "merges.txt").pattern.name == "gpt2"


# -- bad patterns


@pytest.mark.parametrize(
    "pattern, error, message",
    [
        ("gpt4", ValueError, r"unknown pattern name 'gpt4'; the names are gpt2, r50k, cl100k, o200k, llama3"),
        ("CL100K", ValueError, r"unknown pattern name 'CL100K'"),
        ("", ValueError, r"unknown pattern name ''"),
        ("(?:a", ValueError, r"the pattern '\(\?:a' is not a valid regex .*the names are gpt2"),
        (r"(\w+)|\s", ValueError, r"1 capturing group\(s\); write them \(\?:\.\.\.\)"),
        (r"\w+", ValueError, r"the pattern '\\\\w\+' drops ' ' at character 5"),
        (r"\w*|\s", ValueError, r"matches an empty piece at character 5"),
        (
            None,
            TypeError,
            r"pattern must be a name \(gpt2, r50k, cl100k, o200k, llama3\) or a regex, got NoneType",
        ),
        (["gpt2"], TypeError, r"got list"),
    ],
)
def test_a_bad_pattern_is_named(corpus, pattern, error, message):
    with pytest.raises(error, match=message):
        Tokenizer.byte_level(pattern=pattern)
    with pytest.raises(error, match=message):
        train_bytelevel(corpus, 300, [EOT], pattern=pattern)


# -- decode and encode_iterable's keywords (here: with the trained o200k)


def test_encode_iterable_takes_encodes_special_token_keywords(trained):
    tok, oracle = trained["o200k"]
    text = "a<|endoftext|>b " * 3
    lines = [text[i : i + 4] for i in range(0, len(text), 4)]  # the special token cut across lines
    stream = tok.encode_iterable
    assert list(stream(lines)) == tok.encode(text) == oracle.encode(text, allowed_special="all")
    assert list(stream(lines, allowed_special=set(), disallowed_special=())) == oracle.encode_ordinary(text)
    with pytest.raises(ValueError, match=r"special token '<\|endoftext\|>' at character 1, which disallowed_special"):
        list(stream(lines, allowed_special=set()))
    # the character is counted in the whole text, not in the block that holds it
    with pytest.raises(ValueError, match=r"at character 10001, which disallowed_special"):
        list(stream(["x" * 10_000 + "y<|endof", "text|>"], allowed_special=set(), block_chars=64))
    with pytest.raises(ValueError, match=r"allowed_special names '<\|nope\|>'"):
        stream(lines, allowed_special={"<|nope|>"})  # at the call, before any id
    with pytest.raises(TypeError, match=r"disallowed_special must be \"all\" or a set"):
        stream(lines, disallowed_special=None)


def test_decode_takes_encode_files_array(trained, tmp_path):
    tok, _ = trained["cl100k"]
    path = tmp_path / "t.txt"
    path.write_text(ADVERSARIAL["Chinese"], encoding="utf-8")
    ids = tok.encode_file(path, workers=1)
    assert ids.dtype == np.uint16
    assert tok.decode(ids) == tok.decode(ids.tolist()) == ADVERSARIAL["Chinese"]
