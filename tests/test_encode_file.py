"""Tokenizer.encode_file: a file's ids, equal to ``encode`` of its text,
in worker processes, into a .npy file in bounded memory; and every bad input."""

import os
import time
import tracemalloc
from functools import cache

import numpy as np
import pytest
from echo_support import OptionsEcho
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizer_support import SAMPLES, SPECIAL_SAMPLE, real_text, small_trained_tokenizer, tiktoken_twin

from bpe_lab.bytelevel.encode_file import ids_dtype
from bpe_lab.bytelevel.gpt2 import gpt2_tokenizer
from bpe_lab.bytelevel.tokenizer import Tokenizer
from bpe_lab.cli import main
from bpe_lab.core.corpora import python_docs
from bpe_lab.core.patterns import PATTERNS

OVERLAPPING = ["<|endoftext|>", "<|a|>", "<|a|><|a|>", "a|>x"]


@cache
def tokenizers():
    small = small_trained_tokenizer()
    return {
        "gpt2": gpt2_tokenizer(),
        "trained": small,
        "overlapping": Tokenizer(small.vocab, small.merges, OVERLAPPING),
    }


def write(tmp_path, text, name="corpus.txt"):
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))  # bytes: "\r\n" stays as it is
    return path


def leftovers(folder):
    """Temporary files encode_file might have left behind."""
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".part"))


# ---------------------------------------------------------------- parity


@pytest.mark.parametrize("name", ["gpt2", "trained", "overlapping"])
def test_real_text_in_many_chunks_equals_encode(tmp_path, name):
    tok = tokenizers()[name]
    text = python_docs()[:60_000] + "<|endoftext|>" + real_text()[:40_000] + "\n\n" + "\n".join(SAMPLES.values())
    path = write(tmp_path, text)
    ids = tok.encode_file(path, workers=1, chunk_bytes=3_000)
    assert ids.dtype == np.uint16
    assert ids.tolist() == tok.encode(text)


def test_workers_give_the_same_ids(tmp_path):
    tok = gpt2_tokenizer()
    text = python_docs()[:200_000] + SPECIAL_SAMPLE + "  \n\n   spaces " * 50
    path = write(tmp_path, text)
    expected = tok.encode(text)
    assert tok.encode_file(path, workers=2, chunk_bytes=5_000).tolist() == expected
    out = tmp_path / "ids.npy"
    assert tok.encode_file(path, out, workers=2, chunk_bytes=7_000).tolist() == expected
    assert np.load(out).tolist() == expected


@pytest.fixture
def slow_here(monkeypatch):
    """This process's chunks, each taking 0.1 s more here, so that the worker
    (ready after its start-up) is sure to get some; the list of them."""
    from bpe_lab.bytelevel import encode_file

    here = []
    encode_here = encode_file._encode_chunk  # a worker process calls its own, unpatched copy

    def slowly(tok, job):
        here.append(job)
        time.sleep(0.1)
        return encode_here(tok, job)

    monkeypatch.setattr(encode_file, "_encode_chunk", slowly)
    return here


def test_this_process_and_the_worker_share_the_chunks(tmp_path, slow_here):
    """workers=2: one worker process, and this process encodes chunks too;
    the ids still come out in file order."""
    tok = gpt2_tokenizer()
    text = python_docs()[:100_000]
    path = write(tmp_path, text)
    ids = tok.encode_file(path, workers=2, chunk_bytes=2_000)
    assert ids.tolist() == tok.encode(text)
    assert 1 <= len(slow_here) < len(text) // 2_000, len(slow_here)


def test_a_small_file_is_encoded_here_without_waiting_for_the_worker(tmp_path):
    """A file encoded before the worker has started is this process's alone:
    the worker, still starting, is stopped, not waited for."""
    tok = gpt2_tokenizer()
    path = write(tmp_path, "tiny text " * 100)
    ids = tok.encode_file(path, workers=2, chunk_bytes=100)
    assert ids.tolist() == tok.encode("tiny text " * 100)


def test_gpt2_ids_are_tiktokens(tmp_path):
    tok = gpt2_tokenizer()
    text = real_text() + SPECIAL_SAMPLE + SAMPLES["chinese"] + SAMPLES["whitespace"]
    path = write(tmp_path, text)
    oracle = tiktoken_twin(tok)
    assert tok.encode_file(path, chunk_bytes=2_000).tolist() == oracle.encode(text, allowed_special="all")


#: Pieces that GPT-2's pattern and the special tokens treat specially,
#: several of them long runs of white space that chunk cuts fall into.
PIECES = st.sampled_from(
    list("ab 'lsdtrvem\n\r\t\u00a0x|<>0你好é🎉\u0301.")
    + OVERLAPPING
    + ["<|endof", "text|>", "'ll", "\r\n", " " * 40, "\n" * 30, " \n" * 10, "x y", "x\ny"]
)
VALID_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=6)  # no lone surrogates
TEXT = st.lists(st.one_of(PIECES, VALID_TEXT), max_size=60).map("".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXT, chunk=st.integers(1, 40), name=st.sampled_from(["gpt2", "trained", "overlapping"]))
def test_any_text_any_chunking_equals_encode(tmp_path, text, chunk, name):
    tok = tokenizers()[name]
    path = write(tmp_path, text)
    assert tok.encode_file(path, workers=1, chunk_bytes=chunk).tolist() == tok.encode(text)


# ------------------------------------------------------------- the output


def test_out_writes_a_npy_file_and_returns_it_mapped(tmp_path):
    tok = gpt2_tokenizer()
    text = python_docs()[:50_000]
    path = write(tmp_path, text)
    out = tmp_path / "ids.npy"
    mapped = tok.encode_file(path, out, workers=1, chunk_bytes=4_000)
    assert isinstance(mapped, np.memmap) and not mapped.flags.writeable
    saved = np.load(out)
    assert saved.dtype == np.uint16 and saved.shape == (len(tok.encode(text)),)
    assert saved.tolist() == tok.encode(text)
    assert leftovers(tmp_path) == []


def test_dtype(tmp_path):
    path = write(tmp_path, "hello world<|endoftext|>")
    tok = gpt2_tokenizer()
    assert tok.encode_file(path, dtype="uint32").dtype == np.uint32
    assert tok.encode_file(path, dtype=np.int64).tolist() == [31373, 995, 50256]
    assert ids_dtype(65535) == np.uint16 and ids_dtype(65536) == np.uint32 and ids_dtype(200_000) == np.uint32
    with pytest.raises(ValueError, match=r"dtype uint8 holds ids up to 255, but this vocabulary has ids up to 50256"):
        tok.encode_file(path, dtype=np.uint8)
    with pytest.raises(ValueError, match="dtype int16 holds ids up to 32767.* up to 50256"):
        tok.encode_file(path, tmp_path / "ids.npy", dtype="int16")
    with pytest.raises(TypeError, match="integer type"):
        tok.encode_file(path, dtype="float32")
    assert not (tmp_path / "ids.npy").exists()


def test_the_parents_memory_does_not_grow_with_the_file(tmp_path):
    """The parent encodes chunks too (its memory: a chunk being encoded, its
    pre-token cache and the ids of a few chunks in flight), and writes the
    ids to the .npy file as they come: 4 times the file, 4 times the ids,
    about the same peak (the first call's one-off allocations left out)."""
    text = python_docs().encode("utf-8")
    peaks = {}
    for copies in (1, 4, 16):
        path = tmp_path / f"{copies}.txt"
        path.write_bytes(text * copies)
        tok = gpt2_tokenizer()  # a new one: an empty cache each time
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        try:
            tok.encode_file(path, tmp_path / "ids.npy", workers=2, chunk_bytes=100_000)
            peaks[copies] = tracemalloc.get_traced_memory()[1] - before
        finally:
            tracemalloc.stop()
    ids_bytes = os.path.getsize(tmp_path / "ids.npy") - 128
    assert ids_bytes > 4_000_000
    assert peaks[16] < 1.5 * peaks[4] and peaks[16] < ids_bytes, (peaks, ids_bytes)
    first = tok.encode(python_docs())
    assert np.load(tmp_path / "ids.npy", mmap_mode="r")[: len(first)].tolist() == first


# -------------------------------------------------------------- bad input


def test_missing_file_and_directory(tmp_path):
    tok = gpt2_tokenizer()
    with pytest.raises(FileNotFoundError, match="no such file"):
        tok.encode_file(tmp_path / "nope.txt")
    with pytest.raises(IsADirectoryError, match="is a directory"):
        tok.encode_file(tmp_path)


@pytest.mark.parametrize("workers", [1, 2])
def test_not_utf8_names_the_byte_and_leaves_no_output(tmp_path, workers):
    tok = gpt2_tokenizer()
    good = ("word " * 2_000).encode()
    path = tmp_path / "bad.txt"
    path.write_bytes(good + b"caf\xe9 " + good)
    out = tmp_path / "ids.npy"
    out.write_bytes(b"an older file")
    with pytest.raises(ValueError, match=f"not valid UTF-8: byte 0xe9 at offset {len(good) + 3}"):
        tok.encode_file(path, out, workers=workers, chunk_bytes=1_000)
    assert out.read_bytes() == b"an older file"  # untouched: the new one was never renamed into place
    assert leftovers(tmp_path) == []


def test_empty_file_gives_an_empty_array(tmp_path):
    tok = gpt2_tokenizer()
    path = write(tmp_path, "")
    ids = tok.encode_file(path)
    assert ids.shape == (0,) and ids.dtype == np.uint16
    out = tmp_path / "empty.npy"
    assert tok.encode_file(path, out).shape == (0,)
    assert np.load(out).shape == (0,)


def test_bad_workers_and_out(tmp_path):
    tok = gpt2_tokenizer()
    path = write(tmp_path, "hello")
    with pytest.raises(ValueError, match="workers"):
        tok.encode_file(path, workers=0)
    with pytest.raises(TypeError, match="workers"):
        tok.encode_file(path, workers=1.5)
    with pytest.raises(FileNotFoundError, match=r"the folder .*missing does not exist"):
        tok.encode_file(path, tmp_path / "missing" / "ids.npy")
    with pytest.raises(IsADirectoryError, match="is a directory"):
        tok.encode_file(path, tmp_path)
    with pytest.raises(ValueError, match="the input file itself"):
        tok.encode_file(path, path)
    assert path.read_text() == "hello"


# ---------------------------------------------------------- command line


def test_cli_encode_file(tmp_path, capsys):
    text = python_docs()[:20_000] + "<|endoftext|>end"
    path = write(tmp_path, text)
    out = tmp_path / "ids.npy"
    assert main(["encode-file", str(path), "--gpt2", "--out", str(out), "--workers", "1"]) == 0
    assert np.load(out).tolist() == gpt2_tokenizer().encode(text)
    assert "ids.npy" in capsys.readouterr().out
    small = small_trained_tokenizer()
    saved = tmp_path / "small.json"
    small.save(saved)
    assert main(["encode-file", str(path), "--tokenizer", str(saved), "--out", str(out)]) == 0
    assert np.load(out).tolist() == small.encode(text)
    capsys.readouterr()
    assert main(["encode-file", str(write(tmp_path, "hi there", "short.txt")), "--gpt2"]) == 0
    assert capsys.readouterr().out.split() == ["5303", "612"]


def test_cli_errors_are_one_line(tmp_path, capsys):
    assert main(["encode-file", str(tmp_path / "nope.txt"), "--gpt2"]) == 2
    assert "no such file" in capsys.readouterr().err
    path = write(tmp_path, "hello")
    assert main(["encode-file", str(path), "--gpt2", "--workers", "0"]) == 2
    assert "workers" in capsys.readouterr().err
    assert main(["encode-file", str(path), "--gpt2", "--out", str(tmp_path / "no" / "x.npy")]) == 2
    assert "does not exist" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # argparse: exactly one of --gpt2 / --tokenizer
        main(["encode-file", str(path)])


def test_progress_bar_runs(tmp_path, capsys):
    path = write(tmp_path, python_docs()[:30_000])
    ids = gpt2_tokenizer().encode_file(path, chunk_bytes=5_000, progress=True)
    assert len(ids) > 0


def test_workers_rebuild_the_tokenizer_with_its_options(tmp_path, slow_here):
    """A worker's tokenizer keeps ``max_cached_pieces`` and ``pattern`` (were
    it rebuilt from the vocabulary, merges and special tokens alone, it would
    have the default cache and GPT-2's pattern, at place 0)."""
    small = small_trained_tokenizer()
    tok = OptionsEcho(small.vocab, small.merges, small.special_tokens, pattern="llama3", max_cached_pieces=7)
    path = write(tmp_path, "some words here\n" * 1_600)
    ids = tok.encode_file(path, workers=2, chunk_bytes=1_000)
    assert len(ids) > 4 and ids.tolist() == [7, list(PATTERNS).index("llama3")] * (len(ids) // 2)
    assert len(slow_here) < len(ids) // 2  # the worker's copy encoded some chunks


def test_an_encoding_worker_does_not_import_numpy():
    # NumPy's import took about as long as the rest of a worker's start
    import subprocess
    import sys

    code = (
        "import sys; from bpe_lab.bytelevel.encode_file import serve_encoding; "
        "print('bpe_lab.bytelevel.encode_file' in sys.modules, 'numpy' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["True", "False"]


@pytest.mark.parametrize("dtype", [">u2", "<i8"])
def test_a_worker_writes_ids_as_numpy_lays_them_out(tmp_path, slow_here, dtype):
    # a worker writes its chunks' ids with the standard library's array, in
    # the dtype's byte order and size, which this process reads with NumPy
    tok = gpt2_tokenizer()
    text = python_docs()[:100_000]
    path = write(tmp_path, text)
    ids = tok.encode_file(path, workers=2, chunk_bytes=2_000, dtype=dtype)
    assert ids.dtype.itemsize == np.dtype(dtype).itemsize and ids.tolist() == tok.encode(text)
    assert len(slow_here) < len(text) // 2_000, "the worker encoded no chunk"
