"""Benchmarks for chapter 08, BPE at scale: a corpus on every core, and growth.

What this adds over ``bench.py`` (one corpus, one process per contender):

- ``Tokenizer.encode_file`` in ``Sizes.workers`` processes against tiktoken's
  ``encode_ordinary_batch`` on as many threads, GPT-2's ranks, MB/s on the
  standard-library corpus, the ids checked identical (tiktoken is given the
  documents between the ``<|endoftext|>`` separators, and the separator's id
  between them, which is what ``encode_file`` does with the special token);
- growth: ``train_bytelevel`` and HF tokenizers' trainer (one thread) at
  each corpus size of ``Sizes.growth_bytes`` (standard library, then
  site-packages: 32 MB, 128 MB, everything, about 140 MB), time and peak
  memory of the process tree, and the log-log slope of each: 1 is linear,
  below 1 grows slower than the corpus.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from bpe_lab.bench_runs import Result, Row, Sizes, in_fresh_process
from bpe_lab.core.corpus_files import offline_corpus
from bpe_lab.core.symbols import ENDOFTEXT

__all__ = ["bench_encode_file", "bench_growth", "log_log_slope"]

#: HF tokenizers on one thread.
_ONE_THREAD = {"RAYON_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}


def log_log_slope(sizes: list[float], values: list[float]) -> float:
    """The slope of ``log(values)`` against ``log(sizes)`` (least squares):
    ``values ~ sizes ** slope``.

    >>> round(log_log_slope([1, 10, 100], [2, 20, 200]), 6)
    1.0
    """
    slope, _ = np.polyfit(np.log(sizes), np.log(values), 1)
    return float(slope)


def bench_encode_file(path: Path, sizes: Sizes) -> Row:
    """encode_file in ``sizes.workers`` processes (and in one, for the
    speed-up) vs tiktoken's batch encoder on as many threads."""
    from bpe_lab.bytelevel.gpt2 import GPT2_RANKS_PATH, gpt2_tokenizer, load_tiktoken_ranks
    from bpe_lab.core.pretokenize import GPT2_PATTERN

    megabytes = path.stat().st_size / 1e6
    start = time.perf_counter()
    ids = gpt2_tokenizer().encode_file(path, workers=sizes.workers, progress=False)
    ours_s = time.perf_counter() - start
    start = time.perf_counter()
    gpt2_tokenizer().encode_file(path, workers=1, progress=False)
    one_s = time.perf_counter() - start
    row = Row(
        f"encode_file, GPT-2 ranks, {megabytes:.1f} MB, {sizes.workers} workers",
        f"encode_file {megabytes / ours_s:.1f} MB/s ({megabytes / one_s:.1f} MB/s in one process)",
        memory=f"ids: {ids.nbytes / 1e6:.0f} MB as {ids.dtype}",
    )
    try:
        import tiktoken
    except ImportError:
        row.notes.append("tiktoken not installed")
        return row
    ranks = load_tiktoken_ranks(GPT2_RANKS_PATH)
    encoding = tiktoken.Encoding(
        name="bpe_lab_gpt2", pat_str=GPT2_PATTERN, mergeable_ranks=ranks, special_tokens={ENDOFTEXT: len(ranks)}
    )
    documents = path.read_bytes().decode("utf-8").split(ENDOFTEXT)
    start = time.perf_counter()
    batches = encoding.encode_ordinary_batch(documents, num_threads=sizes.workers)
    theirs_s = time.perf_counter() - start
    expected = []
    for document in batches:
        expected += document
        expected.append(len(ranks))
    identical = ids.tolist() == expected[:-1]
    row.reference = f"tiktoken encode_ordinary_batch, {sizes.workers} threads {megabytes / theirs_s:.1f} MB/s"
    row.ratio = f"{theirs_s / ours_s:.0%} of tiktoken" + ("" if identical else " (IDS DIFFER)")
    row.notes.append(
        f"ids identical to tiktoken's: {identical}; {len(documents):,} documents; "
        f"encode_file includes starting the workers and rebuilding the tokenizer in each"
    )
    return row


def bench_growth(sizes: Sizes, cache_dir: str | None, say: Callable[[str], object] = print) -> list[Row]:
    """Train at each size of ``sizes.growth_bytes``, ours and HF's, each in a
    fresh process; one row per size, and one for the slopes."""
    points: dict[str, list[tuple[float, Result]]] = {"ours": [], "hf": []}
    rows = []
    for max_bytes in sizes.growth_bytes:
        path = offline_corpus(max_bytes or None, sources=("stdlib", "site-packages"), cache=cache_dir)
        megabytes = path.stat().st_size / 1e6
        say(f"  growth: {megabytes:.0f} MB ...")
        ours = in_fresh_process("child_bytelevel", str(path), sizes.vocab_size, None)
        try:
            hf = in_fresh_process("child_hf", str(path), sizes.vocab_size, env=_ONE_THREAD)
        except RuntimeError as err:
            hf = {"error": str(err).splitlines()[-1]}
        points["ours"].append((megabytes, ours))
        row = Row(
            f"growth, vocab {sizes.vocab_size:,}, {megabytes:.1f} MB",
            f"train_bytelevel {ours['seconds']:.2f} s",
            memory=f"ours {ours['peak_mb']:.0f} MB RSS ({ours['pss_mb']:.0f} PSS)",
        )
        if "error" in hf:
            row.notes.append(f"HF tokenizers skipped: {hf['error']}")
        else:
            points["hf"].append((megabytes, hf))
            row.reference = f"HF tokenizers, 1 thread {hf['seconds']:.2f} s"
            ratio = hf["seconds"] / ours["seconds"]
            row.ratio = f"{ratio:.2f}x faster" if ratio >= 1 else f"{1 / ratio:.2f}x slower"
            row.memory += f"; HF {hf['peak_mb']:.0f} MB RSS ({hf['pss_mb']:.0f} PSS)"
        rows.append(row)
    rows.append(_slopes(points))
    return rows


def _slopes(points: dict[str, list[tuple[float, Result]]]) -> Row:
    def slopes(name: str) -> str:
        found = points[name]
        if len(found) < 2:
            return "n/a"
        megabytes = [mb for mb, _ in found]
        time_slope = log_log_slope(megabytes, [r["seconds"] for _, r in found])
        memory_slope = log_log_slope(megabytes, [r["peak_mb"] for _, r in found])
        return f"time ~ size^{time_slope:.2f}, memory ~ size^{memory_slope:.2f}"

    row = Row("growth, log-log slopes", f"ours: {slopes('ours')}", f"HF: {slopes('hf')}")
    row.notes.append("slope 1: grows like the corpus; a vocabulary of fixed size makes the merge loop grow slower")
    return row
