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
- **Workers.** Chunks are encoded in this process and in ``workers - 1``
  worker processes (fresh interpreters over pipes, never forked, never
  importing the main module). This process has its tokenizer already, so it
  starts encoding at once, while the workers start; each worker loads the
  tokenizer once, from a pickle this process writes (its checked tables, its
  pattern and ``max_cached_pieces``, not its cache: ``Tokenizer.__getstate__``;
  the start-up that ``make bench``'s ``encode_file`` rows time), and then
  receives only ``((path, start, end), out)`` per chunk: it reads its chunk
  itself, so the text never goes through a pipe, its pre-token cache stays
  warm from one chunk to the next, and it writes the chunk's ids raw to the
  file ``out`` in a temporary folder, replying with their count only (a
  reply of a megabyte would keep it waiting until this process, busy with a
  chunk of its own, read it).
  Chunks are handed out in file order, two to each worker at a time once
  it says it is ready, and this process takes the next one whenever no
  reply is waiting; a worker still starting when the last chunk is done
  is stopped rather than waited for (a small file is encoded here alone).
- **Bounded memory.** At most ``4 * workers`` chunks past the oldest
  unfinished one are started; this process writes each finished chunk, in
  order, to the ``.npy`` file and drops it. The header goes first with a
  length of 0 and is rewritten with the real length at the end (NumPy pads
  the header so that the length can grow to 21 digits in place). Each
  process's memory is one chunk's text and pre-tokens (about 20x
  ``chunk_bytes``) and its cache, and this process's also a few chunks' ids,
  whatever the file's size. Without ``out`` the ids are returned as one
  array, which needs room for them all (twice, briefly).
- **Nothing half-written looks finished.** The ``.npy`` file is written
  under a temporary name beside ``out`` and renamed only once complete; an
  error (a byte that is not UTF-8, a full disk, Ctrl-C) deletes it.
"""

from __future__ import annotations

import array
import os
import pickle
import queue
import sys
import tempfile
import threading
from collections import deque
from collections.abc import Generator, Iterable, Iterator
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from bpe_lab.bytelevel.progress import Bar, progress_bar, want_progress
from bpe_lab.bytelevel.train import PARALLEL_MIN_BYTES, chunk_bounds
from bpe_lab.bytelevel.workers import Worker, parallel_ok, serve
from bpe_lab.core.patterns import Pattern
from bpe_lab.core.symbols import check_int
from bpe_lab.core.textfile import check_file, decode_utf8

if TYPE_CHECKING:  # NumPy is imported by the functions that use it: a worker never does (see serve_encoding)
    import numpy as np
    from numpy.typing import DTypeLike, NDArray

    #: An array of token ids, as ``encode_file`` returns it.
    Ids = NDArray[np.unsignedinteger[Any]]

__all__ = ["ENCODE_CHUNK_BYTES", "encode_file", "ids_dtype", "serve_encoding"]

#: Chunks of about 1 MB: a worker's memory stays small (about 20 times a
#: chunk), the last chunks keep both cores busy to the end, and the cost per
#: chunk (a read, its ids written to a file and read back) stays small beside
#: its encoding.
ENCODE_CHUNK_BYTES = 1 << 20

#: How many chunks per process may be started past the oldest unfinished
#: one: enough for this process to go on while a worker is still starting
#: (a fresh interpreter loading the tokenizer takes a few chunks' time),
#: few enough that the ids waiting to be written stay small (about half a
#: chunk's bytes each, as uint16).
_AHEAD = 4

#: One chunk to encode: (path, start byte, end byte, dtype of the ids).
_Job = tuple[str, int, int, str]


class FileEncoder(Protocol):
    """What ``encode_file`` needs of a tokenizer (``Tokenizer`` has it): its
    ``encode``, its ``vocab`` (its largest id chooses the dtype), its special
    tokens and ``pattern``, which say where its text may be cut, and to be
    picklable, for the workers (``Tokenizer`` pickles its checked tables,
    its pattern and options, and not its cache)."""

    vocab: dict[int, bytes]
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
    import numpy as np

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
    import numpy as np

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
    """What an encoding worker runs (``_worker_code``): load the tokenizer
    that ``_write_payload`` pickled, say it is ready (a reply of None before
    any job), then encode chunks (``workers.serve``), writing each chunk's
    ids to the file the job names and replying with their count
    (``_encode_chunk_to``). It never imports NumPy, whose import took about
    as long as the rest of a worker's start (``bpe_lab`` and the tokenizer):
    the ids go to the file through the standard library's ``array``."""
    with open(payload, "rb") as f:
        tokenizer = pickle.load(f)
    pickle.dump((True, None), sys.stdout.buffer, protocol=pickle.HIGHEST_PROTOCOL)  # ready: jobs may come
    sys.stdout.buffer.flush()
    serve(lambda job: _encode_chunk_to(tokenizer, *job))


def _worker_code(payload: str) -> str:
    return f"from bpe_lab.bytelevel.encode_file import serve_encoding; serve_encoding({payload!r})"


def _write_payload(tokenizer: FileEncoder, folder: str) -> str:
    """Pickle the tokenizer into a file for the workers.

    Streamed to a file without a memo (``fast``: nothing in it refers to
    itself): the pickler's memo of 100,000 objects (GPT-2's vocabulary and
    merges) took 14 MB in memory, more than the ids of a 20 MB corpus.
    """
    path = os.path.join(folder, "tokenizer.pickle")
    with open(path, "wb") as f:
        pickler = pickle.Pickler(f, protocol=pickle.HIGHEST_PROTOCOL)
        pickler.fast = True
        pickler.dump(tokenizer)
    return path


def _chunk_ids(tokenizer: FileEncoder, job: _Job) -> list[int]:
    """Read one chunk, decode it (ValueError with the file's byte offset if it
    is not UTF-8) and encode it. O(chunk) time and memory."""
    path, start, end, _ = job
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(end - start)
    return tokenizer.encode(decode_utf8(data, path, offset=start))


def _encode_chunk(tokenizer: FileEncoder, job: _Job) -> Ids:
    """(Here.) ``_chunk_ids`` as an array of the job's dtype."""
    import numpy as np

    ids = _chunk_ids(tokenizer, job)
    encoded: Ids = np.fromiter(ids, dtype=np.dtype(job[3]), count=len(ids))
    return encoded


#: ``array``'s type code for each integer dtype's kind and size (``"u2"``:
#: ``"H"``), the first code of that size (built in reverse: the last write wins).
_TYPECODES: dict[str, str] = {
    f"{'u' if code.isupper() else 'i'}{array.array(code).itemsize}": code for code in reversed("BHILQbhilq")
}


def _raw_ids(ids: list[int], dtype: str) -> array.array[int]:
    """``ids`` laid out as NumPy lays out an array of ``dtype`` (a dtype's
    ``str``, such as ``"<u2"``): what ``np.fromfile`` reads back."""
    order, kind = dtype[0], dtype[1:]
    if kind not in _TYPECODES:
        raise ValueError(f"no array type code holds the dtype {dtype!r}; use uint16, uint32 or uint64")
    raw = array.array(_TYPECODES[kind], ids)
    if order in "<>" and order != {"little": "<", "big": ">"}[sys.byteorder]:
        raw.byteswap()
    return raw


def _encode_chunk_to(tokenizer: FileEncoder, job: _Job, out: str) -> int:
    """(In a worker.) ``_chunk_ids``, written raw to the file
    ``out``; returns how many. The reply through the pipe stays a few bytes,
    so a worker never waits for the parent to read a chunk's ids: the parent
    encodes chunks too, and would keep it waiting for as long as it takes."""
    ids = _chunk_ids(tokenizer, job)
    with open(out, "wb") as f:
        _raw_ids(ids, job[3]).tofile(f)
    return len(ids)


def _encoded_chunks(tokenizer: FileEncoder, jobs: list[_Job], workers: int) -> Generator[Ids, None, None]:
    """Each job's ids, in file order: here, or here and in ``workers - 1``
    processes (``_shared_work``)."""
    if workers == 1:
        for job in jobs:
            yield _encode_chunk(tokenizer, job)
        return
    with tempfile.TemporaryDirectory(prefix="bpe_lab_") as folder:
        code = _worker_code(_write_payload(tokenizer, folder))
        pool: list[Worker] = []
        readers: list[threading.Thread] = []
        replies: queue.SimpleQueue[tuple[int, bool, object]] = queue.SimpleQueue()
        ready: set[int] = set()
        try:
            for k in range(workers - 1):
                pool.append(Worker(code, "an encoding worker"))
                readers.append(threading.Thread(target=_read_replies, args=(k, pool[k], replies), daemon=True))
                readers[k].start()
            yield from _shared_work(tokenizer, jobs, pool, replies, folder, ready)
        finally:  # also on an error, Ctrl-C or a consumer that stops early
            for k, worker in enumerate(pool):
                if k not in ready:  # still starting, with no job: not worth waiting for
                    worker.process.terminate()
                worker.close()  # its reader then sees the pipe end, and stops
            for reader in readers:
                reader.join()


def _read_replies(k: int, worker: Worker, replies: queue.SimpleQueue[tuple[int, bool, object]]) -> None:
    """(A thread per worker.) Pass on worker ``k``'s replies as they come,
    ``(k, True, count)``; an error, or the pipe's end, as ``(k, False, error)``,
    the last."""
    while True:
        try:
            replies.put((k, True, worker.receive()))
        except BaseException as err:  # the job's error, or the worker died or was closed
            replies.put((k, False, err))
            return


def _shared_work(
    tokenizer: FileEncoder,
    jobs: list[_Job],
    pool: list[Worker],
    replies: queue.SimpleQueue[tuple[int, bool, object]],
    folder: str,
    ready: set[int],
) -> Iterator[Ids]:
    """Each job's ids, in file order, encoded by the workers of ``pool`` and
    by this process, which has its tokenizer already and starts at once,
    while the workers start (a fresh interpreter each, which loads the
    tokenizer).

    Jobs are handed out in file order: each worker, once it has said it is
    ready (adding itself to ``ready``), keeps two in hand (one to do, one
    waiting, so that it never waits for this process), and this process
    takes the next one itself whenever it has nothing to collect. A file
    that takes less time than a worker's start-up is encoded here alone.
    At most ``_AHEAD`` jobs per process past the oldest unfinished one are
    started, so finished chunks cannot pile up while a slow one holds the
    order (memory: that many chunks' ids). A worker's ids come back in a
    file of ``folder`` (``_encode_chunk_to``), read and deleted here.
    """
    import numpy as np

    window = _AHEAD * (len(pool) + 1)
    in_hand: list[deque[int]] = [deque() for _ in pool]
    finished: dict[int, tuple[bool, object]] = {}  # job -> (True, ids or count) or (False, its error)
    failed: set[int] = set()
    started = 0

    def collect(reply: tuple[int, bool, object]) -> None:
        k, ok, value = reply
        if k not in ready:  # its first reply: ready, or why it could not start
            if not ok:
                raise value  # type: ignore[misc]
            ready.add(k)
            return
        if not in_hand[k]:
            return  # a worker closed with nothing in hand
        finished[in_hand[k].popleft()] = (ok, value)
        if not ok:  # its reader has stopped: the worker is given no more jobs
            failed.add(k)
            for job in in_hand[k]:  # later than the failed one, so never reached
                finished[job] = (False, value)
            in_hand[k].clear()

    for done in range(len(jobs)):
        while done not in finished:
            for k, worker in enumerate(pool):
                while (
                    k in ready and k not in failed and len(in_hand[k]) < 2 and started < min(len(jobs), done + window)
                ):
                    worker.send((jobs[started], os.path.join(folder, f"{started}.ids")))
                    in_hand[k].append(started)
                    started += 1
            while True:  # what the workers finished meanwhile
                try:
                    collect(replies.get_nowait())
                except queue.Empty:
                    break
            if done in finished:
                break
            if started < min(len(jobs), done + window):  # nothing to collect yet: encode one here
                job, started = started, started + 1
                try:
                    finished[job] = (True, _encode_chunk(tokenizer, jobs[job]))
                except Exception as err:  # raised in file order, below
                    finished[job] = (False, err)
            else:
                collect(replies.get())  # wait for a worker
        ok, value = finished.pop(done)
        if not ok:
            raise value  # type: ignore[misc]
        if isinstance(value, int):  # a worker's count: its ids are in a file
            name = os.path.join(folder, f"{done}.ids")
            ids: Ids = np.fromfile(name, dtype=np.dtype(jobs[done][3]), count=value)
            os.unlink(name)
            yield ids
        else:
            yield value  # type: ignore[misc]


# -- the .npy file ----------------------------------------------------------


def _write_npy(target: Path, chunks: Iterable[Ids], dtype: np.dtype[Any]) -> Ids:
    """Stream ``chunks`` into a ``.npy`` file at ``target``, atomically."""
    import numpy as np
    from numpy.lib import format as npy_format

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
