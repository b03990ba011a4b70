"""Training a byte-level BPE vocabulary from a text file, the GPT-2 way.

Unlike the textbook trainer (characters plus ``</w>``), byte-level BPE works
on the UTF-8 bytes of the text, so its 256 single bytes already encode any
string and no word is ever out of vocabulary. What this module adds on top of
``train_fast.learn_merges`` is the path from a (possibly huge) file to the
``{pre-token bytes: count}`` table:

1. special tokens such as ``<|endoftext|>`` are cut out of the text first, so
   no merge ever crosses one (they get their own vocabulary entries);
2. the rest is cut into pre-tokens with GPT-2's pattern
   (``pretokenize.GPT2_PATTERN``), and BPE merges only inside a pre-token;
3. the file is read in chunks cut where cutting changes nothing (see
   ``chunk_bounds``), counted in parallel worker processes when it is large.

Where the memory goes, at vocabulary 10,000 on the 32 MB standard-library
corpus (101,095 distinct pre-tokens), the resident memory of this process
and its workers summed, sampled every 20 ms (``bench_runs.TreeMemory``):
counting, two workers of up to 60 MB each with 4 MB chunks (a chunk's list
of pre-tokens is ~15x its size), 170 MB in all; learning, the main process
grew from 111 MB to 190 MB: the Counter of strings (10 MB) and the corpus as
tuples of bytes (16 MB) stayed alive beside ``learn_merges``'s state, whose
pair index of one ``set`` per pair (41 MB at the start, 30 MB at the end)
and heap of nested tuples (~35 MB) were the largest parts. Peak 217 MB,
against 105 MB for HF tokenizers on one thread. Now: 1 MB chunks (workers
near 45 MB), the counts consumed into bytes keys (``_as_bytes``) and then
into ``merge_learner``'s compact state (arrays for the index, flat heap
entries), which is also 15% faster: peak 130 MB with 2 workers (set by the
counting phase), 107 MB in one process, at 1.8-1.9x HF's speed (bench).

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

import heapq
import multiprocessing
import os
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import BinaryIO

from bpe_lab.bytelevel.merge_learner import learn_bytelevel_merges
from bpe_lab.bytelevel.progress import progress_bar, want_progress
from bpe_lab.core.pretokenize import gpt2_pretokenize, special_token_pattern, split_special
from bpe_lab.core.symbols import ON_SHORT, OnShort, check_choice, check_int, report_short
from bpe_lab.core.textfile import check_file, decode_utf8

__all__ = ["train_bytelevel", "build_vocab", "chunk_bounds", "count_pretokens"]

Vocab = dict[int, bytes]
Merges = list[tuple[bytes, bytes]]

_BYTES = [bytes([b]) for b in range(256)]  # a shared bytes object per byte value

#: Aim for chunks of about this many bytes: big enough that process overhead
#: is small, small enough that a worker's memory stays bounded (a chunk's
#: list of pre-tokens takes roughly 15x the chunk's size). At 4 MB the two
#: counting workers reached 60 MB each and set the peak of the whole
#: training (170 MB of 173); at 1 MB they stay near 45 MB (25 of them the
#: interpreter) at the same speed, within the noise of 2 shared cores.
CHUNK_BYTES = 1 << 20
#: Below this size one process counts everything: starting workers would cost
#: more than it saves.
PARALLEL_MIN_BYTES = 8 << 20
_WINDOW = 1 << 16  # how far ahead a cut point is looked for, per read

#: How worker processes are started: never "fork". Forking a process that
#: runs threads (a notebook's kernel, tqdm's monitor, a BLAS pool) can copy a
#: lock that another thread holds into the child, which then deadlocks;
#: Python 3.12+ warns "This process is multi-threaded, use of fork() may lead
#: to deadlocks in the child", and 3.14 no longer forks by default.
#: "forkserver" (POSIX) forks the workers from a small server process that
#: has no threads; Windows has only "spawn". The price is one fresh import of
#: bpe_lab per worker, once per training. Measured on 2 cores, CPython 3.11,
#: 2 workers, 300 merges, stdlib source as the corpus, best of 5 (of 3):
#: 6 MB: fork 0.35 s, forkserver 0.37 s, spawn 0.40 s (one worker: 0.40 s);
#: 24 MB: fork 1.06 s, forkserver 1.06 s, spawn 1.09 s (one worker: 1.59 s).
#: A fixed 20-50 ms, which does not grow with the file: it does not matter.
START_METHOD = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"


def train_bytelevel(
    input_path: str | os.PathLike[str],
    vocab_size: int,
    special_tokens: Sequence[str],
    *,
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

    ``workers``: processes that count pre-tokens (default: one for inputs
    under ``PARALLEL_MIN_BYTES``, else up to ``os.cpu_count()``); the result
    never depends on it. Workers are started with ``START_METHOD``, which
    re-imports the main module in each: a script that trains with workers
    needs the usual ``if __name__ == "__main__":`` guard. ``progress``: show
    progress bars (default: on for large inputs in a terminal or notebook).

    Raises FileNotFoundError / IsADirectoryError for a bad path, ValueError
    for an empty or non-UTF-8 file (naming the byte offset), a ``vocab_size``
    too small to hold the bytes and special tokens, or duplicate special
    tokens, and TypeError for special tokens that are not strings.
    """
    specials = _check_special_tokens(special_tokens)
    num_merges = _check_vocab_size(vocab_size, len(specials))
    on_short = check_choice(on_short, "on_short", ON_SHORT)
    path = _check_file(input_path)
    size = path.stat().st_size
    show = want_progress(progress, size)
    counts = count_pretokens(path, specials, workers=workers, chunk_bytes=chunk_bytes, progress=show)
    merges = _learn(_as_bytes(counts), num_merges, show)
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


#: Before the white space of "X Y" or "X\nY", X and Y printable ASCII other
#: than space: GPT-2's pattern always starts a pre-token there (" Y..." or a
#: lone "\n") and always ends X's pre-token at X, whatever comes after.
_SAFE_SPACE = re.compile(rb"(?<=[!-~])(?=[ \n][!-~])")


def _cut_points(window: bytes, specials: re.Pattern[bytes] | None) -> Iterator[int]:
    """Positions in ``window`` where the file may be cut without changing
    any pre-token or special token: the start of a special token that no
    other occurrence straddles, or a safe space or newline (``_SAFE_SPACE``)
    that no special token straddles. Both kinds in order, found lazily: the
    caller takes the first one past where it wants to cut, and a set of every
    space in a 64 KB window (about 1.4 MB) is never built."""
    occurrences = [(m.start(), m.end(1)) for m in specials.finditer(window)] if specials else []
    spaces = (m.start() for m in _SAFE_SPACE.finditer(window))
    last = -1
    for cut in heapq.merge((start for start, _ in occurrences), spaces):  # O(k * c), k cuts, c occurrences
        if cut != last and not any(start < cut < end for start, end in occurrences):
            yield cut
        last = cut


def chunk_bounds(
    path: str | os.PathLike[str], special_tokens: Sequence[str], chunk_bytes: int = CHUNK_BYTES
) -> list[int]:
    """Byte offsets ``[0, c1, c2, ..., size]`` cutting the file into chunks of
    about ``chunk_bytes`` that can be counted independently.

    A cut must never split a special token, a pre-token or a UTF-8
    character, or counting chunk by chunk would differ from counting the
    whole text. Cuts are made only before a special token or at a safe
    space or newline (``_cut_points``); the file is read only in small windows around
    the wanted positions, so finding the bounds costs O(number of chunks *
    window), not a pass over a multi-GB file. A chunk grows past
    ``chunk_bytes`` when no safe cut is found (a file with no special token
    and no "X Y" or "X\nY" in plain ASCII is one chunk).
    """
    chunk_bytes = check_int(chunk_bytes, "chunk_bytes", minimum=1)
    specials = _overlap_pattern(special_tokens)
    longest = max((len(t.encode("utf-8")) for t in special_tokens), default=1)
    size = os.path.getsize(path)
    bounds = [0]
    with open(path, "rb") as f:
        wanted = chunk_bytes
        while wanted < size:
            cut = _next_cut(f, wanted, size, specials, longest)
            if cut is None:
                break
            bounds.append(cut)
            wanted = cut + chunk_bytes
    bounds.append(size)
    return bounds


def _next_cut(f: BinaryIO, wanted: int, size: int, specials: re.Pattern[bytes] | None, longest: int) -> int | None:
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
        for cut in _cut_points(window, specials):
            if wanted - start <= cut < min(limit, len(window)) and 0 < start + cut < size:
                return start + cut
        wanted += _WINDOW
    return None


# -- counting pre-tokens ---------------------------------------------------


def _count_chunk(job: tuple[str, int, int, tuple[str, ...]]) -> Counter[str]:
    """Count the pre-tokens of one chunk (run in a worker process).
    O(chunk) time; memory about 15x the chunk for its list of pre-tokens."""
    path, start, end, special_tokens = job
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(end - start)
    text = decode_utf8(data, path, offset=start)
    counts: Counter[str] = Counter()
    for piece, is_special in split_special(text, special_tokens):
        if not is_special:
            counts.update(gpt2_pretokenize(piece))  # Counter's C loop
    return counts


def count_pretokens(
    path: str | os.PathLike[str],
    special_tokens: Sequence[str],
    *,
    workers: int | None = None,
    chunk_bytes: int = CHUNK_BYTES,
    progress: bool = False,
) -> Counter[str]:
    """How often each GPT-2 pre-token occurs in the file, special tokens cut
    out first. Chunks are counted in ``workers`` processes (see
    ``train_bytelevel``); the total is the same whatever ``workers`` is."""
    if workers is not None:
        workers = check_int(workers, "workers", minimum=1)
    bounds = chunk_bounds(path, special_tokens, chunk_bytes)
    jobs = [(str(path), a, b, tuple(special_tokens)) for a, b in zip(bounds, bounds[1:])]
    if workers is None:
        workers = 1 if bounds[-1] < PARALLEL_MIN_BYTES else (os.cpu_count() or 1)
    workers = max(1, min(workers, len(jobs), os.cpu_count() or 1))
    total: Counter[str] = Counter()
    with progress_bar(progress, len(jobs), "counting pre-tokens", "chunk") as bar:
        if workers == 1:
            for job in jobs:
                total.update(_count_chunk(job))
                bar.update(1)
        else:
            with multiprocessing.get_context(START_METHOD).Pool(workers) as pool:
                for counts in pool.imap(_count_chunk, jobs):  # in order: the first bad chunk raises first
                    total.update(counts)
                    bar.update(1)
    return total


def _as_bytes(counts: Counter[str]) -> dict[bytes, int]:
    """The counts keyed by UTF-8 bytes, emptying ``counts`` on the way, so
    that the strings are freed as the bytes are made (never both in full)."""
    data: dict[bytes, int] = {}
    while counts:  # O(distinct pre-tokens)
        token, n = counts.popitem()
        data[token.encode("utf-8")] = n
    return data


def _learn(counts: dict[bytes, int], num_merges: int, show: bool) -> Merges:
    """``merge_learner``: ``train_fast``'s loop in less memory; it consumes ``counts``."""
    with progress_bar(show, num_merges, "learning merges", "merge") as bar:
        return learn_bytelevel_merges(counts, num_merges, progress=bar.update)
