"""The Tokenizer: round trips, special tokens, streaming, files, bad input."""

import hashlib
import json
import random
import re
import tracemalloc
from array import array
from functools import cache
from itertools import islice, pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizer_support import SAMPLES, SPECIAL_SAMPLE, real_text, small_trained_tokenizer, tiktoken_twin

from bpe_lab.bytelevel.byte_map import bytes_to_unicode
from bpe_lab.bytelevel.files import listing_path, write_gpt2_files
from bpe_lab.bytelevel.gpt2 import GPT2_RANKS_PATH, gpt2_tokenizer, load_tiktoken_ranks
from bpe_lab.bytelevel.tokenizer import Tokenizer

OVERLAPPING = ["<|endoftext|>", "<|a|>", "<|a|><|a|>", "a|>x"]


@cache
def tokenizers():
    """GPT-2, a small trained one, and the trained one with overlapping specials."""
    small = small_trained_tokenizer()
    overlapping = Tokenizer(small.vocab, small.merges, OVERLAPPING)
    return {"gpt2": gpt2_tokenizer(), "trained": small, "overlapping": overlapping, "bytes": Tokenizer.byte_level()}


NAMES = ["gpt2", "trained", "overlapping", "bytes"]
TRICKY = st.sampled_from(
    list("ab 'lsdtrvem\n\r\t\u00a0x|<>0你好é🎉\u0301") + OVERLAPPING + ["<|endof", "text|>", "'ll", "\r\n", "  "]
)
TEXT = st.lists(st.one_of(TRICKY, st.text(max_size=6)), max_size=40).map("".join)


# ------------------------------------------------------------ round trips


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=100)
@given(text=TEXT)
def test_decode_inverts_encode(name, text):
    tok = tokenizers()[name]
    assert tok.decode(tok.encode(text)) == text


@pytest.mark.parametrize("text", [*SAMPLES.values(), SPECIAL_SAMPLE, "", "\r\n", "\u0301", "🎉", " \u0301\n\r\n\t"])
def test_decode_inverts_encode_on_samples(text):
    for tok in tokenizers().values():
        assert tok.decode(tok.encode(text)) == text


def test_lone_surrogate_is_encoded_as_replacement_character():
    tok = gpt2_tokenizer()
    assert tok.encode("a\ud800b") == tok.encode("a\ufffdb") == tiktoken_twin(tok).encode("a\ud800b")


def test_partial_utf8_decodes_to_replacement_like_tiktoken():
    tok = gpt2_tokenizer()
    oracle = tiktoken_twin(tok)
    ids = tok.encode("é 🎉 你好")
    for end in range(len(ids) + 1):
        for start in range(end):
            assert tok.decode(ids[start:end]) == oracle.decode(ids[start:end])
    assert "\ufffd" in tok.decode(tok.encode("🎉")[:1])
    assert tok.decode_bytes(tok.encode("🎉")) == "🎉".encode()


@pytest.mark.parametrize("bad", [50257, -1, 10**30, np.int64(50257)])
def test_unknown_id_is_named(bad):
    with pytest.raises(ValueError, match=re.escape(f"unknown token id {bad!r} at position 1;")):
        tokenizers()["gpt2"].decode([15496, bad])


def test_unknown_id_message_names_the_id_its_position_and_the_valid_ids():
    tok = tokenizers()["gpt2"]
    for ids, message in [
        ([15496, 50257], "unknown token id 50257 at position 1; the valid ids are 0 to 50256"),
        ([-1], "unknown token id -1 at position 0; the valid ids are 0 to 50256"),
        (
            [15496, 995, np.int64(60000)],
            f"unknown token id {np.int64(60000)!r} at position 2; the valid ids are 0 to 50256",
        ),
    ]:
        with pytest.raises(ValueError) as error:
            tok.decode(ids)
        assert str(error.value) == message
    # ids with a gap: a special token given id 300 above the 256 bytes
    gapped = Tokenizer({**{i: bytes([i]) for i in range(256)}, 300: b"<|endoftext|>"}, [], ["<|endoftext|>"])
    with pytest.raises(ValueError) as error:
        gapped.decode([97, 299])
    assert str(error.value) == "unknown token id 299 at position 1; the valid ids are 0 to 300 (257 ids, with gaps)"


@pytest.mark.parametrize("bad", [1.0, True, False, "1", None, [1], b"1", np.float32(1), np.bool_(True)])
def test_an_id_that_is_not_an_integer_is_refused(bad):
    with pytest.raises(TypeError, match=re.escape(f"token ids must be integers, got {bad!r} (")):
        tokenizers()["gpt2"].decode([15496, bad, 995])
    with pytest.raises(TypeError, match=r"at position 2$"):
        tokenizers()["gpt2"].decode_bytes([15496, 995, bad])


def test_numpy_integer_ids_decode_like_ints():
    tok = tokenizers()["gpt2"]
    ids = tok.encode("Hello world, héllo 🎉")
    for dtype in (np.uint16, np.int32, np.uint32, np.int64):
        array = np.array(ids, dtype=dtype)
        assert tok.decode(array) == tok.decode(list(array)) == "Hello world, héllo 🎉"


# ---------------------------------------------------------- special tokens


def test_special_tokens_are_whole_and_longest_first():
    tok = tokenizers()["overlapping"]
    a, aa, end = tok.special_ids["<|a|>"], tok.special_ids["<|a|><|a|>"], tok.special_ids["<|endoftext|>"]
    assert tok.encode("<|a|><|a|><|a|>") == [aa, a]
    assert tok.encode("<|endoftext|>") == [end]
    assert tok.encode("x<|endoftext|>y")[1] == end
    assert gpt2_tokenizer().encode("<|endoftext|>") == [50256]


def test_allowed_and_disallowed_special_tokens():
    tok = tokenizers()["overlapping"]
    a, end = tok.special_ids["<|a|>"], tok.special_ids["<|endoftext|>"]
    text = "x<|a|><|a|>y<|endoftext|>"
    as_text = tok.encode_ordinary("<|endoftext|>")
    assert len(as_text) > 1 and end not in as_text
    only_a = tok.encode(text, allowed_special={"<|a|>"}, disallowed_special=())
    assert only_a == tok.encode_ordinary("x") + [a, a] + tok.encode_ordinary("y") + as_text
    assert tok.encode(text, allowed_special=set(), disallowed_special=()) == tok.encode_ordinary(text)
    assert tok.encode(text) == tok.encode(text, allowed_special="all") == list(tok.encode_iterable([text]))
    assert tok.encode("no special token here", allowed_special=set()) == tok.encode("no special token here")


@pytest.mark.parametrize(
    "allowed, disallowed, message",
    [
        (set(), "all", r"special token '<\|a\|><\|a\|>' at character 1, which disallowed_special refuses"),
        # as in tiktoken, a disallowed token is looked for in the raw text, even inside an allowed one
        ({"<|a|><|a|>"}, "all", r"special token '<\|a\|>' at character 1"),
        ({"<|a|>", "<|a|><|a|>"}, "all", r"'<\|endoftext\|>' at character 12.*allowed_special=\{'<\|endoftext\|>'\}"),
        ("all", {"<|endoftext|>"}, r"'<\|endoftext\|>' at character 12.*encode_ordinary\(text\)"),
    ],
)
def test_a_disallowed_special_token_raises_and_says_what_to_do(allowed, disallowed, message):
    with pytest.raises(ValueError, match=message):
        tokenizers()["overlapping"].encode(
            "x<|a|><|a|>y<|endoftext|>", allowed_special=allowed, disallowed_special=disallowed
        )


@pytest.mark.parametrize(
    "keywords, error, message",
    [
        ({"allowed_special": {"<|nope|>"}}, ValueError, r"allowed_special names '<\|nope\|>', which this tokenizer"),
        ({"disallowed_special": {"<|pad|>"}}, ValueError, r"disallowed_special names '<\|pad\|>'.*\['<\|endoftext"),
        ({"allowed_special": "<|endoftext|>"}, TypeError, r"allowed_special must be \"all\" or a set.*the string"),
        ({"disallowed_special": None}, TypeError, r"disallowed_special must be \"all\" or a set.*NoneType"),
    ],
)
def test_bad_special_token_arguments_are_named(keywords, error, message):
    with pytest.raises(error, match=message):
        gpt2_tokenizer().encode("hello", **keywords)


def test_special_token_ids():
    small = small_trained_tokenizer()
    assert small.special_ids == {"<|endoftext|>": 256}  # already in the trained vocab: keeps its id
    tok = Tokenizer(small.vocab, small.merges, ["<|endoftext|>", "<|pad|>"])
    assert tok.special_ids == {"<|endoftext|>": 256, "<|pad|>": max(small.vocab) + 1}  # new: next free id
    assert tok.decode([tok.special_ids["<|pad|>"]]) == "<|pad|>"
    assert Tokenizer.byte_level().encode("<|endoftext|>") == list(b"<|endoftext|>")  # not special here


# ---------------------------------------------------------------- streaming


@pytest.mark.parametrize(
    "chunks",
    [
        ["x'l", "l"],  # a contraction needs three characters
        ["it'", "s"],
        ["a  ", "b"],  # the last space goes with the next word
        ["a\n\n", "\n b"],  # a run of newlines continues on the next line
        ["wor", "ld"],
        ["<|endof", "text|>"],  # a special token cut in half
        ["<|a|>", "<|a|>"],  # the longer special token wins across lines
        ["<|a", "|><|a|", ">x"],
        ["<|a|>", "x"],
        ["", "", "a", ""],
    ],
)
def test_encode_iterable_across_line_boundaries(chunks):
    tok = tokenizers()["overlapping"]
    expected = tok.encode("".join(chunks))
    for block_chars in (1, 2, 3, 1 << 16):
        assert list(tok.encode_iterable(chunks, block_chars=block_chars)) == expected


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=100)
@given(text=TEXT, cuts=st.lists(st.integers(0, 400), max_size=12), block_chars=st.sampled_from([1, 2, 3, 5, 64]))
def test_encode_iterable_equals_encode(name, text, cuts, block_chars):
    tok = tokenizers()[name]
    bounds = sorted({0, len(text), *(c for c in cuts if c < len(text))})
    chunks = [text[a:b] for a, b in pairwise(bounds)]
    assert list(tok.encode_iterable(chunks, block_chars=block_chars)) == tok.encode(text)


def test_encode_iterable_with_pre_tokens_longer_than_a_block():
    tok = tokenizers()["gpt2"]
    text = "x" * 9_000 + " " * 6_000 + "\n" * 2_000 + "y<|endoftext|>" + "z" * 4_000
    lines = [text[:1000], text[1000:16_000], text[16_000:]]
    assert list(tok.encode_iterable(lines, block_chars=1000)) == tok.encode(text)


def test_encode_iterable_rejects_bytes():
    with pytest.raises(TypeError, match="text mode"):
        list(tokenizers()["gpt2"].encode_iterable([b"binary"]))


def _generated_text(size: int) -> str:
    """Code- and prose-like lines from a fixed word list, special tokens included."""
    rng = random.Random(3)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyzé") for _ in range(rng.randint(1, 9))) for _ in range(3000)]
    extras = ["'s", "'ll", ",", ".", "(", "):", " 42", "  ", "\t", "你好", "🎉", "<|endoftext|>"]
    lines, total = [], 0
    while total < size:
        parts = [rng.choice(words) if rng.random() < 0.8 else rng.choice(extras) for _ in range(rng.randint(0, 14))]
        line = " " * rng.choice([0, 0, 4, 8]) + " ".join(parts) + rng.choice(["\n", "\n", " \n", "\r\n", "\n\n"])
        lines.append(line)
        total += len(line)
    return "".join(lines)


def _digest(ids) -> tuple[str, int]:
    """A hash of an id stream, read in small batches so that it costs no memory."""
    digest, count, ids = hashlib.sha256(), 0, iter(ids)
    while batch := array("I", islice(ids, 4096)):
        digest.update(batch.tobytes())
        count += len(batch)
    return digest.hexdigest(), count


def test_encode_iterable_runs_in_fixed_memory(tmp_path):
    path = tmp_path / "big.txt"
    text = _generated_text(5_000_000)
    path.write_text(text, encoding="utf-8", newline="")
    size = path.stat().st_size
    expected = _digest(gpt2_tokenizer().encode(text))
    del text
    tok = gpt2_tokenizer()  # a fresh cache, filled while we measure
    tracemalloc.start()
    try:
        with open(path, encoding="utf-8", newline="") as lines:
            got = _digest(tok.encode_iterable(lines))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert got == expected
    # one 16K-character block, its pre-tokens and ids (about 0.4 MB), and the
    # pre-token cache (about 1 MB here): a fixed overhead, whatever the file size
    assert peak < size / 2.5, f"peak {peak / 1e6:.1f} MB while streaming a {size / 1e6:.1f} MB file"


# -------------------------------------------------------------------- files


def test_save_and_load(tmp_path):
    tok = tokenizers()["overlapping"]
    path = tmp_path / "small.json"
    tok.save(path)
    again = Tokenizer.load(path)
    assert (again.vocab, again.merges, again.special_ids) == (tok.vocab, tok.merges, tok.special_ids)
    text = real_text()[:5000] + SPECIAL_SAMPLE
    assert again.encode(text) == tok.encode(text)
    listing = listing_path(path).read_text(encoding="utf-8")
    assert "\n32\t[ ]\tbyte\n" in listing
    assert "\t[<|a|><|a|>]\tspecial token\n" in listing
    left, right = tok.merges[0]
    assert f"[{left.decode()}] + [{right.decode()}]" in listing


def _write_gpt2_files_by_hand(tmp_path):
    """vocab.json and merges.txt as GPT-2 released them, built from the ranks."""
    printable = bytes_to_unicode()

    def show(token):
        return "".join(printable[b] for b in token)

    ranks = load_tiktoken_ranks(GPT2_RANKS_PATH)
    table = {show(token): rank for token, rank in ranks.items()} | {"<|endoftext|>": 50256}
    vocab_path, merges_path = tmp_path / "vocab.json", tmp_path / "merges.txt"
    vocab_path.write_text(json.dumps(table), encoding="utf-8")
    merges = gpt2_tokenizer().merges
    merges_path.write_text("#version: 0.2\n" + "".join(f"{show(a)} {show(b)}\n" for a, b in merges), encoding="utf-8")
    return vocab_path, merges_path


def test_from_files_reads_gpt2_format(tmp_path):
    vocab_path, merges_path = _write_gpt2_files_by_hand(tmp_path)
    tok = Tokenizer.from_files(vocab_path, merges_path, special_tokens=["<|endoftext|>"])
    gpt2 = gpt2_tokenizer()
    assert (tok.vocab, tok.merges, tok.special_ids) == (gpt2.vocab, gpt2.merges, gpt2.special_ids)
    text = real_text()[:20000] + SPECIAL_SAMPLE
    assert tok.encode(text) == gpt2.encode(text)
    # and what bpe_lab writes reads back the same
    write_gpt2_files(gpt2.vocab, gpt2.merges, tmp_path / "v2.json", tmp_path / "m2.txt")
    assert json.loads((tmp_path / "v2.json").read_text("utf-8")) == json.loads(vocab_path.read_text("utf-8"))
    assert (tmp_path / "m2.txt").read_text("utf-8") == merges_path.read_text("utf-8")


def test_hf_tokenizers_agree_on_our_gpt2_files(tmp_path):
    tokenizers_lib = pytest.importorskip("tokenizers")
    gpt2 = gpt2_tokenizer()
    write_gpt2_files(gpt2.vocab, gpt2.merges, tmp_path / "vocab.json", tmp_path / "merges.txt")
    hf = tokenizers_lib.Tokenizer(
        tokenizers_lib.models.BPE.from_file(str(tmp_path / "vocab.json"), str(tmp_path / "merges.txt"))
    )
    hf.pre_tokenizer = tokenizers_lib.pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.add_special_tokens(["<|endoftext|>"])
    text = real_text()[:20000] + "".join(SAMPLES.values())
    assert hf.encode(text).ids == gpt2.encode(text)


# ---------------------------------------------------------------- bad input

BYTES = {i: bytes([i]) for i in range(256)}


@pytest.mark.parametrize(
    "vocab, merges, specials, message",
    [
        (BYTES, [], ["<|x|>", "<|x|>"], "duplicate special tokens"),
        (BYTES | {256: b"a"}, [], None, "vocab ids 97 and 256 both map to b'a'"),
        ({i: t for i, t in BYTES.items() if i != 7}, [], None, "no token for 1 single byte.*0x07"),
        (BYTES | {-1: b"ab"}, [], None, "vocab id -1 is not a non-negative integer"),
        (BYTES | {256: "ab"}, [], None, "tokens must be non-empty bytes"),
        (BYTES, [(b"a", b"b")], None, r"merge 0 .*the result b'ab' is not in the vocabulary"),
        (BYTES | {256: b"abc"}, [(b"ab", b"c")], None, r"merge 0 .*the part b'ab' is not in the vocabulary"),
        (BYTES | {256: b"abc", 257: b"ab"}, [(b"ab", b"c"), (b"a", b"b")], None, "merge 0 .*neither a single byte nor"),
        (BYTES | {256: b"ab"}, [(b"a", b"b"), (b"a", b"b")], None, "merge 1 .*repeats merge 0"),
        (BYTES | {256: b"ab"}, [("a", "b")], None, "merge 0 .*not a pair of non-empty byte strings"),
    ],
)
def test_bad_vocab_or_merges(vocab, merges, specials, message):
    with pytest.raises(ValueError, match=message):
        Tokenizer(vocab, merges, specials)


def test_special_tokens_must_be_a_list():
    with pytest.raises(TypeError, match="list of strings"):
        Tokenizer(BYTES, [], "<|endoftext|>")


def test_encode_needs_text():
    with pytest.raises(TypeError, match="needs a str"):
        tokenizers()["gpt2"].encode(b"bytes")
    with pytest.raises(TypeError, match="needs a str"):
        tokenizers()["gpt2"].encode_ordinary(b"bytes")


GOOD_VOCAB = json.dumps({c: i for i, c in enumerate(bytes_to_unicode().values())} | {"ab": 256}, indent=0)


@pytest.mark.parametrize(
    "vocab_text, merges_text, message",
    [
        ("", "", r"vocab.json, line 1: not valid JSON"),
        # the trailing comma is on line 3: Python 3.13 says so, and bpe_lab says so on every version
        (
            '{\n"a": 1,\n"b": 2,\n}',
            "",
            r"vocab.json, line 3: not valid JSON \(Illegal trailing comma before end of object",
        ),
        ("[\n1,\n2 ,\n\n]", "", r"vocab.json, line 3: not valid JSON \(Illegal trailing comma before end of array"),
        ('{\n"a": 1\n"b": 2}', "", r"vocab.json, line 3: not valid JSON \(Expecting ',' delimiter, column 1\)"),
        ("[1, 2]", "", "expected a JSON object"),
        (GOOD_VOCAB.replace('"ab": 256', '"ab": 97'), "", r"vocab.json, line 258: tokens 'a' and 'ab' both have id 97"),
        (GOOD_VOCAB.replace('"ab": 256', '"ab": "x"'), "", r"vocab.json, line 258: token 'ab' has id 'x'"),
        (
            GOOD_VOCAB.replace('"ab": 256', '"ab": 256,\n"ab": 257'),
            "",
            r"vocab.json, line 259: the key 'ab' appears twice",
        ),
        (
            GOOD_VOCAB.replace('"ab": 256', '"a b": 256'),
            "",
            r"vocab.json, line 258: .*' ' \(U\+0020\), which is not one of",
        ),
        (GOOD_VOCAB, "#version: 0.2\na b\na b c\n", r"merges.txt, line 3: expected two tokens"),
        (
            GOOD_VOCAB,
            "#version: 0.2\n\na c\n",
            r"merges.txt, line 3: merge .*the result b'ac' is not in the vocabulary",
        ),
        (GOOD_VOCAB, "a b\nab c\n", r"merges.txt, line 2: merge .*the result b'abc' is not"),
        (GOOD_VOCAB, "a b\na b\n", r"merges.txt, line 2: merge 'a b' repeats line 1"),
        (GOOD_VOCAB, "a b\na b\u00a0\n", r"merges.txt, line 2: .*U\+00A0"),
    ],
)
def test_malformed_gpt2_files_name_the_line(tmp_path, vocab_text, merges_text, message):
    (tmp_path / "vocab.json").write_text(vocab_text, encoding="utf-8")
    (tmp_path / "merges.txt").write_text(merges_text, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        Tokenizer.from_files(tmp_path / "vocab.json", tmp_path / "merges.txt")


def test_from_files_reads_a_small_valid_pair(tmp_path):
    (tmp_path / "vocab.json").write_text(GOOD_VOCAB, encoding="utf-8")
    (tmp_path / "merges.txt").write_text("#version: 0.2\na b\n", encoding="utf-8")
    tok = Tokenizer.from_files(tmp_path / "vocab.json", tmp_path / "merges.txt")
    assert tok.encode("abc") == [256, 99]  # this vocab numbers the bytes by value


def test_missing_and_non_utf8_files(tmp_path):
    (tmp_path / "merges.txt").write_text("", encoding="utf-8")
    with pytest.raises(FileNotFoundError, match="no such file: .*nope.json"):
        Tokenizer.from_files(tmp_path / "nope.json", tmp_path / "merges.txt")
    (tmp_path / "vocab.json").write_bytes(b'{"a": 1,\n "\xff": 2}')
    with pytest.raises(ValueError, match=r"vocab.json is not valid UTF-8: byte 0xff at offset 11"):
        Tokenizer.from_files(tmp_path / "vocab.json", tmp_path / "merges.txt")
    with pytest.raises(FileNotFoundError):
        Tokenizer.load(tmp_path / "missing.json")


def test_load_rejects_other_json_and_names_bad_lines(tmp_path):
    path = tmp_path / "tok.json"
    path.write_text('{"vocab": {}}', encoding="utf-8")
    with pytest.raises(ValueError, match="not a bpe_lab tokenizer file"):
        Tokenizer.load(path)
    tokenizers()["trained"].save(path)
    lines = path.read_text(encoding="utf-8").split("\n")
    first_merge = lines.index('"merges": [') + 1
    lines[first_merge + 2] = '  ["Ġ", "zzzz"],'
    path.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(
        ValueError, match=rf"tok.json, line {first_merge + 3}: merge 2 .*b'zzzz' is not in the vocabulary"
    ):
        Tokenizer.load(path)
    path.write_text('{"format": "bpe_lab.Tokenizer",\n"version": 1,\n"vocab": {\n"x": "a"', encoding="utf-8")
    with pytest.raises(ValueError, match=r"tok.json, line 4: not valid JSON"):
        Tokenizer.load(path)


def test_load_names_the_line_of_a_repeated_merge(tmp_path):
    path = tmp_path / "tok.json"
    tokenizers()["trained"].save(path)
    lines = path.read_text(encoding="utf-8").split("\n")
    first_merge = lines.index('"merges": [') + 1
    lines[first_merge + 1] = lines[first_merge]  # merge 1 repeats merge 0
    path.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(ValueError, match=rf"tok.json, line {first_merge + 2}: merge 1 .* repeats merge 0"):
        Tokenizer.load(path)


@pytest.mark.parametrize("pattern", ["gpt2", "llama3", r"\w+|\s+|[^\w\s]+"])
def test_a_pickled_tokenizer_loads_with_its_tables_pattern_and_options_and_an_empty_cache(pattern):
    """encode_file sends its workers a pickled tokenizer: the checked tables
    as they are, the pattern by name or regex, no cache."""
    import pickle

    small = small_trained_tokenizer()
    tok = Tokenizer(small.vocab, small.merges, ["<|endoftext|>", "<|a|>"], pattern=pattern, max_cached_pieces=9)
    text = SAMPLES["english"] + "<|a|>" + SAMPLES["code"] + "<|endoftext|>" + real_text()[:5_000]
    expected = tok.encode(text)
    assert len(tok._cache) > 0
    data = pickle.dumps(tok)
    loaded = pickle.loads(data)
    assert type(loaded) is Tokenizer and len(loaded._cache) == 0
    assert (loaded.pattern, loaded.max_cached_pieces, loaded.special_ids) == (tok.pattern, 9, tok.special_ids)
    assert loaded.vocab == tok.vocab and loaded.merges == tok.merges
    assert loaded.encode(text) == expected
    assert list(loaded.encode_iterable(text.splitlines(keepends=True))) == expected
    assert len(pickle.dumps(loaded)) == len(data)  # the cache it filled is not pickled
