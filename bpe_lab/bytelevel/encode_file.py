"""A whole corpus to one array of token ids, on every core, in bounded memory.

What this adds over ``tokenizer.py`` (``Tokenizer.encode``: one string, one
process, a list of Python ints): the last step of a training pipeline, where
a multi-gigabyte text file becomes a flat ``uint16`` array (8 bytes per id
as a Python list, 2 bytes here) that a model's data loader memory-maps.

- **Chunks cut where nothing can cross.** The file is cut with the
  trainer's ``chunk_bounds``, given the tokenizer's special tokens and
  pattern: only before a special token or at a safe cut of the pattern
  (``core.patterns.SAFE_CUTS``, such as a space between two printable
  ASCII characters), where the pattern always starts a new pre-token and
  no special token is cut in half. Encoding the chunks one by one then
  gives exactly the ids of ``encode`` on the whole text (``encode``'s
  default: every special token of the tokenizer becomes its id), which the
  tests check with cuts forced every few bytes.
- **Workers.** Chunks are encoded in worker processes (``workers``: fresh
  interpreters over pipes, never forked, never importing the main module).
  Each worker rebuilds the tokenizer once, when it starts, from a file this
  process writes (its vocabulary, merges, special tokens and the
  constructor options of ``WORKER_OPTIONS``: its pattern and
  ``max_cached_pieces``; rebuilding GPT-2's is part of the start-up that
  ``make bench``'s ``encode_file`` rows time for 1 and 2 workers), and then
  receives only ``(path, start, end)`` per
  chunk: it reads its chunk itself, so this process never holds the text,
  and its pre-token cache stays warm from one chunk to the next. Chunks go
  to the workers in turn, and each sends back a NumPy array (2 bytes per id).
- **Bounded memory.** At most ``2 * workers`` chunks are in flight; this
  process writes each finished chunk, in order, to the ``.npy`` file and
  drops it. The header goes first with a length of 0 and is rewritten with
  the real length at the end (NumPy pads the header so that the length can
  grow to 21 digits in place). The parent's memory is a few chunks' ids
  whatever the file's size; a worker's is one chunk's text and pre-tokens
  (about 20x ``chunk_bytes``) plus its cache. Without ``out`` the ids are
  returned as one array, which needs room for them all (twice, briefly).
- **Nothing half-written looks finished.** The ``.npy`` file is written
  under a temporary name beside ``out`` and renamed only once complete; an
  error (a byte that is not UTF-8, a full disk, Ctrl-C) deletes it.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from collections.abc import Generator, Iterable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from numpy.lib import format as npy_format
from numpy.typing import DTypeLike, NDArray

from bpe_lab.bytelevel.progress import Bar, progress_bar, want_progress
from bpe_lab.bytelevel.train import PARALLEL_MIN_BYTES, chunk_bounds
from bpe_lab.bytelevel.workers import Worker, parallel_ok, serve
from bpe_lab.core.patterns import Pattern
from bpe_lab.core.symbols import check_int
from bpe_lab.core.textfile import check_file, decode_utf8

__all__ = ["ENCODE_CHUNK_BYTES", "WORKER_OPTIONS", "encode_file", "ids_dtype", "serve_encoding"]

#: Chunks of about 1 MB: a worker's memory stays small (about 20 times a
#: chunk), the last chunks keep both cores busy to the end, and the cost per
#: chunk (a read, a pickle of its ids) stays small beside its encoding.
ENCODE_CHUNK_BYTES = 1 << 20

#: An array of token ids, as ``encode_file`` returns it.
Ids = NDArray[np.unsignedinteger[Any]]
#: One chunk to encode: (path, start byte, end byte, dtype of the ids).
_Job = tuple[str, int, int, str]
#: The keyword options of a tokenizer's constructor that a worker's copy is
#: given too, read from the tokenizer's attributes of the same names.
WORKER_OPTIONS = ("pattern", "max_cached_pieces")


class FileEncoder(Protocol):
    """What ``encode_file`` needs of a tokenizer (``Tokenizer`` has it): its
    ``encode``, and what its constructor takes, to rebuild it in a worker
    (with those of ``WORKER_OPTIONS`` it has as attributes, such as
    ``max_cached_pieces``, passed as keywords), and its ``pattern``, which
    says where its text may be cut."""

    vocab: dict[int, bytes]
    merges: list[tuple[bytes, bytes]]
    special_tokens: list[str]
    pattern: Pattern

    def encode(self, text: str) -> list[int]: ...


def ids_dtype(largest_id: int, dtype: DTypeLike | None = None) -> np.dtype[Any]:
    """The dtype for ids up to ``largest_id``: ``dtype`` if it holds them
    (ValueError naming both if not), else the smallest of uint16 and uint32.

    >>> ids_dtype(50256), ids_dtype(100276)
    (dtype('uint16'), dtype('uint32'))
    >>> ids_dtype(100276, "uint16")
    Traceback (most recent call last):
    ...
    ValueError: dtype uint16 holds ids up to 65535, but this vocabulary has ids up to 100276; use uint32 ...
    """
    if dtype is None:
        for unsigned in (np.uint16, np.uint32, np.uint64):
            if largest_id <= np.iinfo(unsigned).max:
                return np.dtype(unsigned)
    chosen = np.dtype(dtype)
    if chosen.kind not in "ui":
        raise TypeError(f"dtype must be an integer type such as uint16 or uint32, got {chosen}")
    most = int(np.iinfo(chosen).max)
    if most < largest_id:
        wider = "uint32" if largest_id <= np.iinfo(np.uint32).max else "uint64"
        raise ValueError(
            f"dtype {chosen} holds ids up to {most}, but this vocabulary has ids up to {largest_id}; "
            f"use {wider} or leave dtype=None"
        )
    return chosen


def encode_file(
    tokenizer: FileEncoder,
    path: str | os.PathLike[str],
    out: str | os.PathLike[str] | None = None,
    *,
    workers: int | None = None,
    dtype: DTypeLike | None = None,
    chunk_bytes: int = ENCODE_CHUNK_BYTES,
    progress: bool | None = None,
) -> Ids:
    """The ids of the UTF-8 file at ``path``: ``Tokenizer.encode_file``.

    Equal to ``np.array(tokenizer.encode(text))`` for the file's text (its
    bytes decoded as UTF-8, line endings kept as they are). ``out``: write
    them there as a ``.npy`` file and return it memory-mapped, read-only;
    else return them in memory. ``workers``: processes (default: one below
    ``PARALLEL_MIN_BYTES``, else every core). ``chunk_bytes``: about how
    much text a worker encodes at a time (small values are for tests).
    """
    source = check_file(path)
    if workers is not None:
        workers = check_int(workers, "workers", minimum=1)
    chunk_bytes = check_int(chunk_bytes, "chunk_bytes", minimum=1)
    chosen = ids_dtype(max(tokenizer.vocab), dtype)
    target = None if out is None else _check_out(Path(out), source)
    bounds = chunk_bounds(source, tokenizer.special_tokens, chunk_bytes, pattern=tokenizer.pattern)
    jobs = [(str(source), start, end, chosen.str) for start, end in zip(bounds, bounds[1:]) if start < end]
    if workers is None:
        workers = 1 if bounds[-1] < PARALLEL_MIN_BYTES else (os.cpu_count() or 1)
    workers = max(1, min(workers, len(jobs), os.cpu_count() or 1)) if parallel_ok() else 1
    show = want_progress(progress, bounds[-1])
    with progress_bar(show, bounds[-1], f"encoding {source.name}", "B", unit_scale=True) as bar:
        with closing(_encoded_chunks(tokenizer, jobs, workers)) as chunks:  # closing stops the workers
            sized = _reporting(zip(jobs, chunks), bar)
            if target is not None:
                return _write_npy(target, sized, chosen)
            parts = list(sized)
    return np.concatenate(parts) if parts else np.empty(0, dtype=chosen)


def _check_out(target: Path, source: Path) -> Path:
    """Refuse an ``out`` that cannot be written before any work is done."""
    if target.is_dir():
        raise IsADirectoryError(f"out={str(target)!r} is a directory; name a file in it, such as {target / 'ids.npy'}")
    if not target.parent.is_dir():
        raise FileNotFoundError(f"cannot write {target}: the folder {target.parent} does not exist (create it first)")
    if target.exists() and target.resolve() == source.resolve():
        raise ValueError(f"out={str(target)!r} is the input file itself; write the ids to another file")
    return target


def _reporting(chunks: Iterable[tuple[_Job, Ids]], bar: Bar) -> Iterator[Ids]:
    """The chunks' ids, moving the progress bar by each chunk's bytes."""
    for (_, start, end, _), ids in chunks:
        yield ids
        bar.update(end - start)


# -- the workers ------------------------------------------------------------


def serve_encoding(payload: str) -> None:
    """What an encoding worker runs (``_worker_code``): rebuild the tokenizer
    from what ``_write_payload`` wrote, then encode chunks (``workers.serve``)."""
    with open(payload, "rb") as f:
        factory, vocab, merges, specials, options = pickle.load(f)
    tokenizer = factory(vocab, merges, specials, **options)
    serve(lambda job: _encode_chunk(tokenizer, job))


def _worker_code(payload: str) -> str:
    return f"from bpe_lab.bytelevel.encode_file import serve_encoding; serve_encoding({payload!r})"


def _write_payload(tokenizer: FileEncoder, folder: str) -> str:
    """Pickle what the tokenizer is made of into a file for the workers.

    Streamed to a file without a memo (``fast``: nothing in it refers to
    itself): the pickler's memo of 100,000 objects (GPT-2's vocabulary and
    merges) took 14 MB in memory, more than the ids of a 20 MB corpus.
    """
    path = os.path.join(folder, "tokenizer.pickle")
    with open(path, "wb") as f:
        pickler = pickle.Pickler(f, protocol=pickle.HIGHEST_PROTOCOL)
        pickler.fast = True
        options = {name: getattr(tokenizer, name) for name in WORKER_OPTIONS if hasattr(tokenizer, name)}
        pickler.dump((type(tokenizer), tokenizer.vocab, tokenizer.merges, tokenizer.special_tokens, options))
    return path


def _encode_chunk(tokenizer: FileEncoder, job: _Job) -> Ids:
    """Read one chunk, decode it (ValueError with the file's byte offset if it
    is not UTF-8) and encode it. O(chunk) time and memory."""
    path, start, end, dtype = job
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(end - start)
    ids = tokenizer.encode(decode_utf8(data, path, offset=start))
    array: Ids = np.fromiter(ids, dtype=np.dtype(dtype), count=len(ids))
    return array


def _encoded_chunks(tokenizer: FileEncoder, jobs: list[_Job], workers: int) -> Generator[Ids, None, None]:
    """Each job's ids, in file order: here, or in ``workers`` processes, job
    ``i`` to worker ``i % workers``, with at most two jobs per worker in
    flight (so that a slow consumer cannot make finished chunks pile up in
    memory, and no worker waits for its next job)."""
    if workers == 1:
        for job in jobs:
            yield _encode_chunk(tokenizer, job)
        return
    with tempfile.TemporaryDirectory(prefix="bpe_lab_") as folder:
        code = _worker_code(_write_payload(tokenizer, folder))
        pool = [Worker(code, "an encoding worker") for _ in range(workers)]
        try:
            for i, job in enumerate(jobs[: 2 * workers]):
                pool[i % workers].send(job)
            for i in range(len(jobs)):
                ids = pool[i % workers].receive()  # the first bad chunk raises first
                if i + 2 * workers < len(jobs):
                    pool[i % workers].send(jobs[i + 2 * workers])
                yield ids  # type: ignore[misc]
        finally:  # also on an error, Ctrl-C or a consumer that stops early
            for worker in pool:
                worker.close()


# -- the .npy file ----------------------------------------------------------


def _write_npy(target: Path, chunks: Iterable[Ids], dtype: np.dtype[Any]) -> Ids:
    """Stream ``chunks`` into a ``.npy`` file at ``target``, atomically."""
    temp = target.with_name(f".{target.name}.{os.getpid()}.part")
    header: dict[str, Any] = {"descr": npy_format.dtype_to_descr(dtype), "fortran_order": False, "shape": (0,)}
    try:
        with open(temp, "wb") as f:
            npy_format.write_array_header_1_0(f, header)  # O(1): rewritten with the length at the end
            data_start, count = f.tell(), 0
            for ids in chunks:
                f.write(ids.tobytes())  # tobytes: the raw array, whatever the file object
                count += len(ids)
            f.seek(0)
            header["shape"] = (count,)
            npy_format.write_array_header_1_0(f, header)
            if f.tell() != data_start:  # pragma: no cover - NumPy < 1.23 did not pad for growth
                raise RuntimeError("this NumPy writes .npy headers that cannot grow in place; upgrade NumPy")
        os.replace(temp, target)  # atomic: a half-written file never has the final name
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    if count == 0:  # an empty file cannot be memory-mapped
        empty: Ids = np.load(target)
        return empty
    mapped: Ids = np.load(target, mmap_mode="r")
    return mapped
