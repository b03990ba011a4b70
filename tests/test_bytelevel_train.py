"""Byte-level BPE training: hand-checked cases, a textbook reference, chunking
that changes nothing, workers that change nothing, and bad input."""

import os
import tempfile
import warnings
from collections import Counter
from pathlib import Path

import pytest
import regex
from hypothesis import example, given, settings
from hypothesis import strategies as st

from bpe_lab.bytelevel.tokenizer import Tokenizer
from bpe_lab.bytelevel.train import chunk_bounds, count_pretokens, train_bytelevel
from bpe_lab.core.patterns import PATTERNS
from bpe_lab.core.pretokenize import gpt2_pretokenize, split_special
from bpe_lab.core.train import count_pairs, merge_symbols, pick_pair

EOT = "<|endoftext|>"


def write(directory, text: str | bytes, name="corpus.txt"):
    path = os.path.join(directory, name)
    with open(path, "wb") as f:
        f.write(text.encode("utf-8") if isinstance(text, str) else text)
    return path


@pytest.fixture
def corpus_file(tmp_path):
    return lambda text, name="corpus.txt": write(tmp_path, text, name)


def quietly(*args, **kwargs):
    """Train; running out of pairs before ``vocab_size`` is fine here."""
    return train_bytelevel(*args, on_short="ignore", **kwargs)


def reference_counts(text, special_tokens, pattern="gpt2"):
    """Pre-tokens of the whole text at once: ``gpt2_pretokenize``, or ``regex.findall`` with a named pattern."""
    counts = Counter()
    for piece, is_special in split_special(text, special_tokens):
        if not is_special:
            counts.update(gpt2_pretokenize(piece) if pattern == "gpt2" else regex.findall(PATTERNS[pattern], piece))
    return counts


def reference(text, vocab_size, special_tokens):
    """The textbook loop on byte tuples: recount everything every round,
    ties to the greatest pair. Returns the merges and the number of rounds
    before the first one with a tie."""
    corpus = {
        tuple(bytes([b]) for b in token.encode("utf-8")): n
        for token, n in reference_counts(text, special_tokens).items()
    }
    merges, untied = [], None
    for _ in range(vocab_size - 256 - len(special_tokens)):
        counts = count_pairs(corpus)
        if not counts:
            break
        pair, _, ties = pick_pair(counts, "lexicographic")
        if ties and untied is None:
            untied = len(merges)
        merges.append(pair)
        corpus = {merge_symbols(symbols, pair): n for symbols, n in corpus.items()}
    return merges, len(merges) if untied is None else untied


# -- hand-checked cases -----------------------------------------------------


def test_small_case_by_hand(corpus_file):
    # pre-tokens: "low" x1, " low" x1, "lower" x1 (the special token is cut out)
    # round 1: (l,o)=3 and (o,w)=3 tie; b"o" > b"l", so (o,w) wins
    # round 2: (l,ow)=3; round 3: (low,e)=(e,r)=(\x20,low)=1: (low,e) is greatest
    vocab, merges = train_bytelevel(corpus_file(f"low low{EOT}lower"), 260, [EOT])
    assert merges == [(b"o", b"w"), (b"l", b"ow"), (b"low", b"e")]
    assert vocab == {**{i: bytes([i]) for i in range(256)}, 256: EOT.encode(), 257: b"ow", 258: b"low", 259: b"lowe"}


def test_chinese_characters_are_built_from_their_utf8_bytes(corpus_file):
    # "中" is e4 b8 ad. (e4,b8) and (b8,ad) tie at 2; 0xe4 > 0xb8 so (e4,b8)
    # wins; then (e4b8,ad) makes the whole character, then the two characters join.
    vocab, merges = train_bytelevel(corpus_file("中中"), 259, [])
    assert merges == [(b"\xe4", b"\xb8"), (b"\xe4\xb8", b"\xad"), ("中".encode(), "中".encode())]
    assert vocab[258].decode("utf-8") == "中中"


def test_vocab_layout_bytes_then_specials_in_order_then_merges(corpus_file):
    specials = ["<|b|>", "<|a|>", "<pad>"]
    vocab, merges = train_bytelevel(corpus_file("hello hello hello<|a|>help"), 256 + 3 + 4, specials)
    assert list(vocab) == list(range(len(vocab)))
    assert [vocab[i] for i in range(256)] == [bytes([i]) for i in range(256)]
    assert [vocab[256 + i] for i in range(3)] == [s.encode() for s in specials]
    assert [vocab[259 + k] for k in range(len(merges))] == [a + b for a, b in merges]
    assert len(vocab) == 256 + 3 + len(merges) == 263


def test_special_tokens_are_never_merged_across(corpus_file):
    text = (f"x{EOT}y" * 50) + ("ab" * 3)
    vocab, merges = quietly(corpus_file(text), 300, [EOT])
    joined = [a + b for a, b in merges]
    assert all(b"<|" not in piece and b"|>" not in piece for piece in joined)
    assert all(not (piece.startswith(b"x") and len(piece) > 1) for piece in joined)
    assert (b"x", b"<") not in merges and (b">", b"y") not in merges


def test_running_out_of_pairs_stops_early_and_warns(corpus_file):
    path = corpus_file("ab")
    with pytest.warns(UserWarning, match=r"asked for 44 merges \(vocab_size=300\) but only 1 were possible") as record:
        vocab, merges = train_bytelevel(path, 300, [])
    assert merges == [(b"a", b"b")] and len(vocab) == 257
    assert record[0].filename == __file__
    with pytest.raises(ValueError, match=r"asked for 44 merges \(vocab_size=300\) but only 1"):
        train_bytelevel(path, 300, [], on_short="raise")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "ignore" must not warn
        assert train_bytelevel(path, 300, [], on_short="ignore") == (vocab, merges)
    with pytest.raises(ValueError, match="unknown on_short 'quiet'"):
        train_bytelevel(path, 300, [], on_short="quiet")


# -- equal to the textbook reference --------------------------------------

SPECIALS = [EOT, "<|a|>", "<|a|><|a|>", "b<|a|>", "a\nb"]  # overlapping, and one with a newline
pieces = st.one_of(
    st.text(alphabet="ab \n", max_size=12),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=8),
    st.text(alphabet="ab,.'s é中😀\r\n\t0123", max_size=10),
    st.text(alphabet="aB. \n\r'tT/$19٣\u00a0", max_size=10),  # where the newer patterns differ from GPT-2's
    st.sampled_from(SPECIALS + ["<|", "a|>", ".\nx", "x\n\n  ", "don't", "I'M"]),
)
texts = st.lists(pieces, min_size=1, max_size=12).map("".join).filter(lambda t: t != "")


@settings(max_examples=150)
@given(texts, st.integers(256 + len(SPECIALS), 256 + len(SPECIALS) + 40))
@example("aaaa aaaa<|a|><|a|>abcbc abcbc", 280)
def test_equals_the_textbook_loop_on_bytes(text, vocab_size):
    with tempfile.TemporaryDirectory() as tmp:
        vocab, merges = quietly(write(tmp, text), vocab_size, SPECIALS, chunk_bytes=16)
    assert merges == reference(text, vocab_size, SPECIALS)[0]
    assert all(not any(s.encode() in a + b for s in SPECIALS) for a, b in merges)


@settings(max_examples=150)
@given(texts, st.integers(1, 64))
@example("x\n" * 10 + "<|a|><|a|>" * 3 + "y", 3)
@example("a  \n\n  b\r\nc\n d e\nf" * 5, 1)
def test_counting_chunk_by_chunk_equals_counting_the_whole_text(text, chunk_bytes):
    with tempfile.TemporaryDirectory() as tmp:
        path = write(tmp, text)
        bounds = chunk_bounds(path, SPECIALS, chunk_bytes)
        counts = count_pretokens(path, SPECIALS, workers=1, chunk_bytes=chunk_bytes)
    data = text.encode("utf-8")
    assert bounds[0] == 0 and bounds[-1] == len(data) and bounds == sorted(set(bounds))
    for cut in bounds[1:-1]:
        safe_space = 0x21 <= data[cut - 1] <= 0x7E and data[cut] in b" \n" and 0x21 <= data[cut + 1] <= 0x7E
        assert safe_space or any(data[cut:].startswith(s.encode()) for s in SPECIALS)
    assert counts == reference_counts(text, SPECIALS)


def cut_is_safe(name, data, cut):
    """Where SAFE_CUTS lets a file with ``name``'s pattern be cut, said again
    byte by byte: before a space (any pattern) or a new line (GPT-2's and
    r50k's after any printable character, the newer patterns' only after a
    letter or digit) between two printable ASCII characters."""
    printable = b"!"[0] <= data[cut - 1] <= b"~"[0] and cut + 1 < len(data) and b"!"[0] <= data[cut + 1] <= b"~"[0]
    after = (printable, printable) if name in ("gpt2", "r50k") else (printable, chr(data[cut - 1]).isalnum())
    return (data[cut] == ord(" ") and after[0]) or (data[cut] == ord("\n") and printable and after[1])


def counts_as_the_whole_text(name, workers, text, chunk_bytes):
    """Parallel training is exact for pattern ``name``: the file is cut only
    where the pattern cannot split a pre-token (or before a special token),
    and a worker process counts with the same pattern."""
    with tempfile.TemporaryDirectory() as tmp:
        path = write(tmp, text)
        bounds = chunk_bounds(path, SPECIALS, chunk_bytes, pattern=name)
        counts = count_pretokens(path, SPECIALS, pattern=name, workers=workers, chunk_bytes=chunk_bytes)
    data = text.encode("utf-8")
    for cut in bounds[1:-1]:
        assert cut_is_safe(name, data, cut) or any(data[cut:].startswith(s.encode()) for s in SPECIALS)
    assert counts == reference_counts(text, SPECIALS, name)


ACROSS_NEW_LINES = "a.\nb c!\nd 1\ne\r\n f x\n\n  \ny don't DON'T $a /b\n/c " * 4


@pytest.mark.parametrize("name", sorted(PATTERNS))
@settings(max_examples=150)
@given(text=texts, chunk_bytes=st.integers(1, 64))
@example(text=ACROSS_NEW_LINES, chunk_bytes=1)
def test_every_pattern_counts_chunk_by_chunk_as_the_whole_text(name, text, chunk_bytes):
    counts_as_the_whole_text(name, 1, text, chunk_bytes)


@pytest.mark.parametrize("name", sorted(PATTERNS))
@settings(max_examples=10)  # each example starts a worker process
@given(text=texts, chunk_bytes=st.integers(1, 64))
@example(text=ACROSS_NEW_LINES, chunk_bytes=1)
def test_every_pattern_counts_chunk_by_chunk_as_the_whole_text_in_two_processes(name, text, chunk_bytes):
    counts_as_the_whole_text(name, 2, text, chunk_bytes)


def test_the_newer_patterns_may_not_be_cut_before_a_new_line_after_a_symbol(tmp_path):
    """Why cl100k, o200k and Llama 3 have their own rule: their symbols branch
    takes the new lines after a symbol, so GPT-2's cut before ``"\\n"`` would
    split the piece ``".\\n"``; and a pattern of one's own is cut only before
    special tokens."""
    assert regex.findall(PATTERNS["cl100k"], "a.\nb") == ["a", ".\n", "b"]
    assert regex.findall(PATTERNS["gpt2"], "a.\nb") == ["a", ".", "\n", "b"]
    path = write(tmp_path, "a.\nb " * 20)  # 100 bytes; the first cut is wanted at 8, then 8 past each cut
    data = Path(path).read_bytes()
    assert chunk_bounds(path, [], 8, pattern="gpt2") == [0, 9, *range(17, 100, 10), 100]
    assert data[9:10] == b" " and data[16:18] == b".\n"  # GPT-2 cuts before that new line
    for name in ("cl100k", "o200k", "llama3"):
        assert chunk_bounds(path, [], 8, pattern=name) == [0, *range(9, 90, 10), 100]  # only before spaces
    path = write(tmp_path, f"one two{EOT}three four{EOT}five six")
    assert chunk_bounds(path, [EOT], 1, pattern=r"\S+|\s+") == [0, 7, 30, 51]  # before the special tokens only
    assert count_pretokens(path, [EOT], pattern=r"\S+|\s+", chunk_bytes=1) == Counter(
        {"one": 1, " ": 3, "two": 1, "three": 1, "four": 1, "five": 1, "six": 1}
    )


# -- workers and chunks change nothing ------------------------------------


def test_two_workers_give_the_same_result_as_one(corpus_file):
    text = "\n".join(f"def f{i}(x): return x * {i}  # héllo wörld {EOT}" for i in range(300))
    path = corpus_file(text)
    assert len(chunk_bounds(path, [EOT], 512)) > 10
    one = train_bytelevel(path, 400, [EOT], workers=1, chunk_bytes=512)
    two = train_bytelevel(path, 400, [EOT], workers=2, chunk_bytes=512)
    whole = train_bytelevel(path, 400, [EOT], workers=1, chunk_bytes=1 << 30)
    assert one == two == whole
    assert one[1] == reference(text, 400, [EOT])[0]


def test_cuts_fall_before_special_tokens_or_at_safe_spaces(corpus_file):
    path = corpus_file(f"aaaa{EOT}bbbb{EOT}" * 20)
    bounds = chunk_bounds(path, [EOT], 20)
    data = Path(path).read_bytes()
    assert len(bounds) > 5 and all(data[cut:].startswith(EOT.encode()) for cut in bounds[1:-1])
    # no special token: cut before a space or newline between two ASCII non-spaces
    assert chunk_bounds(corpus_file("word " * 100, "flat.txt"), [], 16) == [
        0,
        19,
        39,
        59,
        79,
        99,
        119,
        139,
        159,
        179,
        199,
        219,
        239,
        259,
        279,
        299,
        319,
        339,
        359,
        379,
        399,
        419,
        439,
        459,
        479,
        500,
    ]
    # nowhere safe (only non-ASCII letters and spaces): one chunk
    assert chunk_bounds(corpus_file("été " * 100, "french.txt"), [], 16) == [0, 600]


# -- parity with HF tokenizers where it can be exact -----------------------


def gpt2_byte_map():
    """GPT-2's printable stand-in for each byte (HF's ByteLevel uses it)."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars, extra = {}, 0
    for b in range(256):
        if b in keep:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + extra)
            extra += 1
    return {c: bytes([b]) for b, c in chars.items()}


def hf_merges(path, vocab_size, special_tokens):
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import models, pre_tokenizers, trainers

    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=special_tokens,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train([path], trainer)
    to_bytes = gpt2_byte_map()
    import json

    merges = json.loads(tok.to_str())["model"]["merges"]
    pairs = [m.split(" ") if isinstance(m, str) else m for m in merges]
    return [(b"".join(to_bytes[c] for c in a), b"".join(to_bytes[c] for c in b)) for a, b in pairs]


def test_same_merges_as_hf_tokenizers_until_the_first_tie(corpus_file):
    """HF breaks ties by its own pair ids, so compare only the rounds before
    the reference's first tie. Word j of 26 common words occurs about 160/(j+1)
    times (Zipf-like), which gives 15 rounds without a tie. No special token
    in the text (HF would pre-tokenize it like ordinary text) and no newline
    (HF reads a file line by line, so "\n" followed by spaces is cut
    differently from GPT-2's pattern on the whole text)."""
    words = "the of and to in is that for it as with was on be by this are from at or an which have not but one".split()
    text = " ".join(words[j] for i in range(160) for j in range(len(words)) if i % (j + 1) == 0)
    merges, untied = reference(text, 256 + 1 + 40, [])
    assert untied == 15
    path = corpus_file(text)
    vocab_size = 256 + 1 + untied
    assert train_bytelevel(path, vocab_size, [EOT])[1] == merges[:untied]
    assert hf_merges(path, vocab_size, [EOT]) == merges[:untied]


# -- bad input -------------------------------------------------------------


def test_missing_file_directory_and_empty_file(corpus_file, tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        train_bytelevel(tmp_path / "nope.txt", 300, [])
    with pytest.raises(IsADirectoryError, match="is a directory"):
        train_bytelevel(tmp_path, 300, [])
    with pytest.raises(ValueError, match="is empty"):
        train_bytelevel(corpus_file(""), 300, [])


def test_non_utf8_file_names_the_byte_offset(corpus_file):
    with pytest.raises(ValueError, match=r"not valid UTF-8: byte 0xff at offset 5"):
        train_bytelevel(corpus_file(b"hello\xffworld"), 300, [])
    # in a later chunk, the offset still counts from the start of the file
    path = corpus_file(b"ab\n" * 1000 + b"caf\xe9 \n")
    with pytest.raises(ValueError, match=r"byte 0xe9 at offset 3003"):
        train_bytelevel(path, 300, [], chunk_bytes=100)
    with pytest.raises(ValueError, match=r"byte 0xe9 at offset 3003"):
        train_bytelevel(path, 300, [], chunk_bytes=100, workers=2)


@pytest.mark.parametrize(
    "vocab_size, special_tokens, error, message",
    [
        (255, [], ValueError, r"vocab_size=255 is too small.*at least 256"),
        (257, [EOT, "<pad>"], ValueError, r"at least 258"),
        (300.0, [], TypeError, "vocab_size must be an int"),
        (300, [EOT, EOT], ValueError, "duplicate special tokens"),
        (300, [EOT, 7], TypeError, "special tokens must be strings, got 7"),
        (300, [b"<pad>"], TypeError, "special tokens must be strings"),
        (300, EOT, TypeError, "special_tokens must be a list of strings"),
        (300, [""], ValueError, "non-empty"),
    ],
)
def test_bad_arguments_are_named(corpus_file, vocab_size, special_tokens, error, message):
    with pytest.raises(error, match=message):
        train_bytelevel(corpus_file("some text"), vocab_size, special_tokens)


def test_bad_workers_and_chunk_size(corpus_file):
    with pytest.raises(ValueError, match="workers must be >= 1, got 0"):
        train_bytelevel(corpus_file("some text"), 300, [], workers=0)
    with pytest.raises(TypeError, match="workers must be an int, got True"):
        train_bytelevel(corpus_file("some text"), 300, [], workers=True)
    with pytest.raises(ValueError, match="chunk_bytes must be >= 1, got 0"):
        train_bytelevel(corpus_file("some text"), 300, [], chunk_bytes=0)


def test_workers_are_not_forked(corpus_file):
    """Forking a multi-threaded process can deadlock (Python 3.12+ warns)."""
    path = corpus_file("some text, some more text\n" * 50)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # 3.12+: "use of fork() may lead to deadlocks"
        assert train_bytelevel(path, 262, [], workers=2, chunk_bytes=64) == train_bytelevel(path, 262, [], workers=1)


@pytest.mark.parametrize("read_from_stdin", [False, True])
def test_a_script_without_a_main_guard_trains_and_encodes_with_workers(corpus_file, tmp_path, read_from_stdin):
    """Workers import bpe_lab, never the main module: a script needs no
    ``__main__`` guard, and one read from stdin (``python -``), which
    multiprocessing's spawn and forkserver cannot import, works too (a
    worker's error coming back: test_non_utf8_file_names_the_byte_offset)."""
    import subprocess
    import sys

    path = corpus_file("some text, some more text\n" * 200)
    code = (
        "from bpe_lab.bytelevel.train import train_bytelevel\n"
        "from bpe_lab.bytelevel.tokenizer import Tokenizer\n"
        f"vocab, merges = train_bytelevel({path!r}, 280, [], workers=2, chunk_bytes=256, on_short='ignore')\n"
        f"ids = Tokenizer(vocab, merges, []).encode_file({path!r}, workers=2, chunk_bytes=256)\n"
        "print(len(merges), len(ids))\n"
    )
    script = tmp_path / "train_me.py"
    script.write_text(code)
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": root}
    command = [sys.executable, "-"] if read_from_stdin else [sys.executable, str(script)]
    done = subprocess.run(
        command, input=code if read_from_stdin else None, capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    vocab, merges = quietly(path, 280, [], workers=1)
    expected = len(Tokenizer(vocab, merges, []).encode(Path(path).read_text()))
    assert done.stdout.split() == [str(len(merges)), str(expected)]


# -- the compact merge learner ---------------------------------------------

WORDS = st.dictionaries(
    st.binary(min_size=1, max_size=12).map(lambda b: bytes(x % 6 for x in b) if b[0] % 2 else b),
    st.integers(1, 50),
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(counts=WORDS, num_merges=st.integers(0, 60))
def test_the_compact_learner_equals_learn_merges(counts, num_merges):
    """merge_learner keeps train_fast's merges, ties to the greater pair,
    on words made of few distinct bytes (many ties, overlapping runs)."""
    from bpe_lab.bytelevel.merge_learner import learn_bytelevel_merges
    from bpe_lab.core.train_fast import learn_merges

    corpus = {tuple(bytes([b]) for b in word): n for word, n in counts.items()}
    expected = learn_merges(corpus, num_merges, tie_break="lexicographic")
    given_counts = dict(counts)
    assert learn_bytelevel_merges(given_counts, num_merges) == expected
    assert given_counts == {}  # consumed


def test_the_compact_learner_on_real_pretokens():
    from bpe_lab.bytelevel.merge_learner import learn_bytelevel_merges
    from bpe_lab.core.corpora import python_docs
    from bpe_lab.core.train_fast import learn_merges

    counts = Counter(token.encode() for token in gpt2_pretokenize(python_docs()))
    corpus = {tuple(bytes([b]) for b in token): n for token, n in counts.items()}
    assert learn_bytelevel_merges(dict(counts), 600) == learn_merges(corpus, 600, tie_break="lexicographic")
