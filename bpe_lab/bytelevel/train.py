"""Training a byte-level BPE vocabulary from a text file, the GPT-2 way
(or with the pattern of a later model).

Unlike the textbook trainer (characters plus ``</w>``), byte-level BPE works
on the UTF-8 bytes of the text, so its 256 single bytes already encode any
string and no word is ever out of vocabulary. What this module adds on top of
``train_fast.learn_merges`` is the path from a (possibly huge) file to the
``{pre-token bytes: count}`` table:

1. special tokens such as ``<|endoftext|>`` are cut out of the text first, so
   no merge ever crosses one (they get their own vocabulary entries);
2. the rest is cut into pre-tokens with GPT-2's pattern
   (``pretokenize.GPT2_PATTERN``) or the one ``pattern`` names
   (``core.patterns``), and BPE merges only inside a pre-token;
3. the file is read in chunks cut where cutting changes nothing (see
   ``chunk_bounds``), counted in parallel worker processes when it is large.

Memory: the counting workers are fresh interpreters (``workers``), this
process counts a share of the chunks itself, and the merges are learned by
``merge_learner``, whose docstring says where the memory goes. ``make bench``
measures the peak (summed over the processes) beside HF tokenizers' in its
training rows.

Then the merges are learned with ties going to the lexicographically greater
pair of bytes (``tie_break="lexicographic"`` in ``core.symbols``). The
vocabulary is the 256 bytes (ids 0-255), then the special tokens in the order
given, then one entry per merge, ``vocab_size`` in all.

>>> import tempfile, os
>>> with tempfile.TemporaryDirectory() as tmp:
...     path = os.path.join(tmp, "corpus.txt")
...     with open(path, "w", encoding="utf-8") as f:
...         _ = f.write("low low<|endoftext|>lower")
...     vocab, merges = train_bytelevel(path, 259, ["<|endoftext|>"])
>>> merges
[(b'o', b'w'), (b'l', b'ow')]
>>> vocab[256], vocab[257], vocab[258]
(b'<|endoftext|>', b'ow', b'low')
"""

from __future__ import annotations

import contextlib
import heapq
import os
import queue
import re
import threading
from collections import Counter, deque
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import BinaryIO

from bpe_lab.bytelevel.merge_learner import learn_bytelevel_merges
from bpe_lab.bytelevel.progress import progress_bar, want_progress
from bpe_lab.bytelevel.workers import Worker, parallel_ok, serve
from bpe_lab.core.patterns import Pattern, resolve_pattern
from bpe_lab.core.pretokenize import special_token_pattern, split_special
from bpe_lab.core.symbols import ON_SHORT, OnShort, check_choice, check_int, report_short
from bpe_lab.core.textfile import check_file, decode_utf8

__all__ = ["train_bytelevel", "build_vocab", "chunk_bounds", "count_pretokens"]

Vocab = dict[int, bytes]
Merges = list[tuple[bytes, bytes]]

_BYTES = [bytes([b]) for b in range(256)]  # a shared bytes object per byte value

#: Chunks of about this many bytes: the cost per chunk (a pickle, adding up
#: its counts) stays small, and so do the processes (1 MB chunks made both
#: the workers and the peak larger, at the same speed; ``make bench``'s
#: training rows measure the peak).
CHUNK_BYTES = 1 << 18
#: Below this size one process counts everything: workers would cost more.
PARALLEL_MIN_BYTES = 8 << 20
_WINDOW = 1 << 16  # how far ahead a cut point is looked for, per read


def train_bytelevel(
    input_path: str | os.PathLike[str],
    vocab_size: int,
    special_tokens: Sequence[str],
    *,
    pattern: str | Pattern = "gpt2",
    workers: int | None = None,
    chunk_bytes: int = CHUNK_BYTES,
    progress: bool | None = None,
    on_short: OnShort = "warn",
) -> tuple[Vocab, Merges]:
    """Train a byte-level BPE vocabulary of ``vocab_size`` entries on a UTF-8 file.

    Returns ``(vocab, merges)``: ``vocab`` maps ids to bytes (256 single
    bytes, then ``special_tokens`` encoded as UTF-8, then one entry per merge)
    and ``merges`` lists the learned pairs in order. If fewer merges are
    possible than ``vocab_size`` asks for, training stops early and the
    vocabulary is smaller; ``on_short`` says whether that warns (the
    default), raises ValueError or passes silently ("ignore").

    ``pattern``: the pre-tokenizer, a name of ``core.patterns.PATTERNS``
    (``"gpt2"``, ``"r50k"``, ``"cl100k"``, ``"o200k"``, ``"llama3"``) or a
    regex; give the ``Tokenizer`` the same one. ``workers``: processes that count pre-tokens (default: one for inputs
    under ``PARALLEL_MIN_BYTES``, else ``os.cpu_count()``); the result
    never depends on it. This process is one of them; the others are fresh
    interpreters that import bpe_lab (not the main module: no ``__main__``
    guard is needed). ``progress``: show progress bars (default: on for
    large inputs in a terminal or notebook).

    Raises FileNotFoundError / IsADirectoryError for a bad path, ValueError
    for an empty or non-UTF-8 file (naming the byte offset), a ``vocab_size``
    too small to hold the bytes and special tokens, or duplicate special
    tokens, a ``pattern`` that is not a name nor a usable regex, and
    TypeError for special tokens that are not strings.
    """
    specials = _check_special_tokens(special_tokens)
    cutter = resolve_pattern(pattern)
    num_merges = _check_vocab_size(vocab_size, len(specials))
    on_short = check_choice(on_short, "on_short", ON_SHORT)
    path = _check_file(input_path)
    show = want_progress(progress, path.stat().st_size)
    counts = _count_bytes(path, specials, cutter, workers, chunk_bytes, show)
    with progress_bar(show, num_merges, "learning merges", "merge") as bar:  # it consumes the counts
        merges = learn_bytelevel_merges(counts, num_merges, progress=bar.update)
    report_short(num_merges, len(merges), on_short, what=f"merges (vocab_size={vocab_size})", stacklevel=2)
    return build_vocab(specials, merges), merges


def build_vocab(special_tokens: Sequence[str], merges: Merges) -> Vocab:
    """Ids 0-255 the single bytes, then the special tokens, then the merges."""
    vocab: Vocab = dict(enumerate(_BYTES))
    for token in special_tokens:
        vocab[len(vocab)] = token.encode("utf-8")
    for left, right in merges:
        vocab[len(vocab)] = left + right
    return vocab


# -- checking the arguments ------------------------------------------------


def _check_special_tokens(special_tokens: object) -> list[str]:
    if isinstance(special_tokens, (str, bytes)) or not isinstance(special_tokens, Sequence):
        raise TypeError(f"special_tokens must be a list of strings, got {special_tokens!r}")
    for token in special_tokens:
        if not isinstance(token, str):
            raise TypeError(f"special tokens must be strings, got {token!r} ({type(token).__name__})")
    special_token_pattern(special_tokens)  # raises ValueError for "" and for duplicates
    return list(special_tokens)


def _check_vocab_size(vocab_size: object, num_specials: int) -> int:
    """The number of merges ``vocab_size`` leaves room for."""
    vocab_size = check_int(vocab_size, "vocab_size", minimum=None)
    smallest = 256 + num_specials
    if vocab_size < smallest:
        raise ValueError(
            f"vocab_size={vocab_size} is too small: it must hold the 256 bytes and the "
            f"{num_specials} special token(s), so at least {smallest}"
        )
    return vocab_size - smallest


def _check_file(input_path: str | os.PathLike[str]) -> Path:
    path = check_file(input_path)
    if path.stat().st_size == 0:
        raise ValueError(f"{path} is empty: there is no text to train on")
    return path


# -- reading the file in safe chunks --------------------------------------


def _overlap_pattern(special_tokens: Sequence[str]) -> re.Pattern[bytes] | None:
    """Every occurrence of every special token, overlapping ones included:
    a lookahead matches at each start, with the longest token there."""
    if not special_tokens:
        return None
    ordered = sorted((t.encode("utf-8") for t in special_tokens), key=len, reverse=True)
    return re.compile(b"(?=(" + b"|".join(re.escape(t) for t in ordered) + b"))")


def _safe_cuts(pattern: Pattern) -> re.Pattern[bytes] | None:
    """The pattern's safe cuts (``core.patterns.SAFE_CUTS``: where no pre-token
    can be split, such as before the space of "X Y") as a bytes regex."""
    return None if pattern.safe_cut is None else re.compile(pattern.safe_cut.encode("ascii"))


def _cut_points(window: bytes, specials: re.Pattern[bytes] | None, safe: re.Pattern[bytes] | None) -> Iterator[int]:
    """Positions in ``window`` where the file may be cut without changing
    any pre-token or special token: the start of a special token that no
    other occurrence straddles, or a safe cut of the pattern (``safe``) that
    no special token straddles. Both kinds in order, found lazily: the
    caller takes the first one past where it wants to cut, and a set of every
    space in a 64 KB window (about 1.4 MB) is never built."""
    occurrences = [(m.start(), m.end(1)) for m in specials.finditer(window)] if specials else []
    spaces = (m.start() for m in safe.finditer(window)) if safe is not None else iter(())
    last = -1
    for cut in heapq.merge((start for start, _ in occurrences), spaces):  # O(k * c), k cuts, c occurrences
        if cut != last and not any(start < cut < end for start, end in occurrences):
            yield cut
        last = cut


def chunk_bounds(
    path: str | os.PathLike[str],
    special_tokens: Sequence[str],
    chunk_bytes: int = CHUNK_BYTES,
    *,
    pattern: str | Pattern = "gpt2",
) -> list[int]:
    """Byte offsets ``[0, c1, c2, ..., size]`` cutting the file into chunks of
    about ``chunk_bytes`` that can be counted independently.

    A cut must never split a special token, a pre-token or a UTF-8
    character, or counting chunk by chunk would differ from counting the
    whole text. Cuts are made only before a special token or at a safe
    cut of ``pattern`` (``core.patterns.SAFE_CUTS``: a space or newline
    between two printable ASCII characters, for the newer patterns a newline
    only after a letter or digit; a regex of one's own has none); the file
    is read only in small windows around the wanted positions, so finding
    the bounds costs O(number of chunks * window), not a pass over a
    multi-GB file. A chunk grows past ``chunk_bytes`` when no safe cut is
    found (a file with no special token and no "X Y" or "X\nY" in plain
    ASCII is one chunk).
    """
    chunk_bytes = check_int(chunk_bytes, "chunk_bytes", minimum=1)
    safe = _safe_cuts(resolve_pattern(pattern))
    specials = _overlap_pattern(special_tokens)
    longest = max((len(t.encode("utf-8")) for t in special_tokens), default=1)
    size = os.path.getsize(path)
    bounds = [0]
    with open(path, "rb") as f:
        wanted = chunk_bytes
        while wanted < size:
            cut = _next_cut(f, wanted, size, specials, safe, longest)
            if cut is None:
                break
            bounds.append(cut)
            wanted = cut + chunk_bytes
    bounds.append(size)
    return bounds


def _next_cut(
    f: BinaryIO,
    wanted: int,
    size: int,
    specials: re.Pattern[bytes] | None,
    safe: re.Pattern[bytes] | None,
    longest: int,
) -> int | None:
    """The first safe cut at or after ``wanted``, reading window by window
    (each window starts ``longest`` bytes early so that an occurrence
    straddling its start is seen, and ends ``longest`` bytes past the last
    position examined, so that one straddling a candidate is seen too)."""
    lead = longest
    while wanted < size:
        start = max(0, wanted - lead)
        f.seek(start)
        window = f.read(_WINDOW + 2 * lead)
        limit = wanted - start + _WINDOW  # candidates beyond this are left to the next window
        for cut in _cut_points(window, specials, safe):
            if wanted - start <= cut < min(limit, len(window)) and 0 < start + cut < size:
                return start + cut
        wanted += _WINDOW
    return None


# -- counting pre-tokens ---------------------------------------------------


_Job = tuple[str, int, int, tuple[str, ...], str]  # (path, start, end, special tokens, pattern's spec)


def _count_chunk(job: _Job) -> Counter[str]:
    """Count the pre-tokens of one chunk. O(chunk) time; memory a few times
    the chunk (its text, its pieces between special tokens, the Counter)."""
    path, start, end, special_tokens, pattern = job
    split = resolve_pattern(pattern).split  # cached: one regex compilation per process
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(end - start)
    text = decode_utf8(data, path, offset=start)
    counts: Counter[str] = Counter()
    for piece, is_special in split_special(text, special_tokens):
        if not is_special:
            counts.update(split(piece))  # Counter's C loop, one document's list at a time
    return counts


def _count_chunk_bytes(job: _Job) -> dict[bytes, int]:
    """One chunk's counts keyed by UTF-8 bytes, as a worker sends them back."""
    return {token.encode("utf-8"): n for token, n in _count_chunk(job).items()}


def serve_counting() -> None:
    """What a counting worker runs (``_WORKER_CODE``, see ``workers``)."""
    serve(_count_chunk_bytes)


_WORKER_CODE = "from bpe_lab.bytelevel.train import serve_counting; serve_counting()"
_Done = tuple[int, bool, object]  # (chunk index, True and its counts, or False and its error)


def _feed(worker: Worker, jobs: deque[tuple[int, _Job]], done: queue.SimpleQueue[_Done | None]) -> None:
    """(A thread per worker, waiting on its pipes.) Hand ``worker`` the next
    job until none is left and put each reply on ``done``; None when finished."""
    try:
        while jobs:
            index, job = jobs.popleft()  # atomic; IndexError if the main thread took the last one
            try:
                worker.send(job)
                done.put((index, True, worker.receive()))
            except Exception as err:  # the chunk's error, or the worker died: the caller stops
                done.put((index, False, err))
                return
    except IndexError:
        pass
    finally:
        done.put(None)


def _count_bytes(
    path: str | os.PathLike[str],
    special_tokens: Sequence[str],
    pattern: Pattern,
    workers: int | None,
    chunk_bytes: int,
    progress: bool,
) -> dict[bytes, int]:
    """``count_pretokens`` keyed by bytes. This process counts chunks too,
    beside ``workers - 1`` worker processes, and adds up their counts as they
    arrive (in any order: a sum); the first bad chunk in the file raises."""
    workers = None if workers is None else check_int(workers, "workers", minimum=1)
    bounds = chunk_bounds(path, special_tokens, chunk_bytes, pattern=pattern)
    specials, spec = tuple(special_tokens), pattern.spec
    jobs = deque((i, (str(path), a, b, specials, spec)) for i, (a, b) in enumerate(zip(bounds, bounds[1:])))
    if workers is None:
        workers = 1 if bounds[-1] < PARALLEL_MIN_BYTES else (os.cpu_count() or 1)
    workers = max(1, min(workers, len(jobs), os.cpu_count() or 1)) if parallel_ok() else 1
    total: dict[bytes, int] = {}
    errors: list[tuple[int, BaseException]] = []
    done: queue.SimpleQueue[_Done | None] = queue.SimpleQueue()
    helpers = [Worker(_WORKER_CODE, "a counting worker") for _ in range(workers - 1)]
    running = len(helpers)
    with progress_bar(progress, len(jobs), "counting pre-tokens", "chunk") as bar:

        def take(index: int, ok: bool, result: object) -> None:
            if not ok:
                errors.append((index, result))  # type: ignore[arg-type]
                return jobs.clear()  # every chunk before this one was handed out already
            get = total.get
            for token, n in result.items():  # type: ignore[attr-defined]  # O(distinct in the chunk)
                total[token] = get(token, 0) + n
            bar.update(1)

        try:
            for worker in helpers:
                threading.Thread(target=_feed, args=(worker, jobs, done), daemon=True).start()
            while jobs or running:
                with contextlib.suppress(IndexError):  # a worker may take the last job first
                    index, job = jobs.popleft()
                    try:
                        take(index, True, _count_chunk_bytes(job))
                    except Exception as err:
                        take(index, False, err)
                while running and (not jobs or not done.empty()):  # the replies so far; at the end, all
                    reply = done.get()
                    running -= reply is None
                    if reply is not None:
                        take(*reply)
        finally:  # also on an error or Ctrl-C: a worker exits after the chunk in hand
            jobs.clear()
            for worker in helpers:
                worker.close()
    if errors:
        raise min(errors, key=lambda error: error[0])[1]
    return total


def count_pretokens(
    path: str | os.PathLike[str],
    special_tokens: Sequence[str],
    *,
    pattern: str | Pattern = "gpt2",
    workers: int | None = None,
    chunk_bytes: int = CHUNK_BYTES,
    progress: bool = False,
) -> Counter[str]:
    """How often each pre-token of ``pattern`` (GPT-2's by default) occurs in
    the file, special tokens cut out first. Chunks are counted in ``workers``
    processes, this one included (see ``train_bytelevel``); the total is the
    same whatever ``workers`` is."""
    counts = _count_bytes(path, special_tokens, resolve_pattern(pattern), workers, chunk_bytes, progress)
    return Counter({token.decode("utf-8"): n for token, n in counts.items()})
