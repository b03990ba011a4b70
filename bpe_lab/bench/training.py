"""Training benchmarks: the textbook trainer against the incremental one,
``train_bytelevel`` against Hugging Face ``tokenizers``, and the small case.

- ``core.train.train_bpe`` against ``core.train_fast.train_fast`` on ~1 MB of
  text (the textbook trainer is timed once: at 2,000 merges it takes
  minutes; ``--textbook-merges`` times fewer rounds and extrapolates);
- ``bytelevel.train.train_bytelevel`` (counting in worker processes, then
  in one) against HF tokenizers' trainer on one thread (and, in a note, on
  every core) at a 10,000-entry vocabulary on the standard-library corpus:
  each run in a fresh process, so that its peak memory is its own, the
  contenders taking turns ``Sizes.repeat`` times (``runs``);
- the small case: ~130 KB of English, vocabulary 500, first call and best
  of 3 (the target: under half a second).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from bpe_lab.bench.corpus import english_sample
from bpe_lab.bench.runs import Result, in_fresh_process, memory
from bpe_lab.bench.sizes import Sizes
from bpe_lab.bench.table import Row, faster
from bpe_lab.core.symbols import ENDOFTEXT
from bpe_lab.variants.scaling import best_time

__all__ = ["ONE_THREAD", "bench_textbook_vs_fast", "bench_bytelevel_vs_hf", "bench_small"]

#: HF tokenizers on one thread.
ONE_THREAD = {"RAYON_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}


def bench_textbook_vs_fast(text: str, sizes: Sizes) -> Row:
    """train_bpe vs train_fast on the white-space words of ``text``. The
    textbook trainer costs O(N) per round; if ``textbook_merges`` is below
    ``fast_merges`` it is timed on the first rounds only and scaled
    linearly, an over-estimate (its rounds get cheaper as words shrink),
    and the row says so."""
    from bpe_lab.core.pretokenize import word_frequencies
    from bpe_lab.core.train import train_bpe
    from bpe_lab.core.train_fast import train_fast

    word_freq = word_frequencies(text)
    n, k = sizes.fast_merges, min(sizes.textbook_merges, sizes.fast_merges)
    fast = best_time(lambda: train_fast(word_freq, n, on_short="ignore"), repeat=3)
    textbook = best_time(lambda: train_bpe(word_freq, k, on_short="ignore"), repeat=1)
    fast_k = best_time(lambda: train_fast(word_freq, k, on_short="ignore"), repeat=3) if k < n else fast
    case = f"textbook trainer, {n:,} merges, {len(text.encode()) / 1e6:.2f} MB, {len(word_freq):,} distinct words"
    row = Row(case, f"train_fast {fast:.2f} s")
    row.notes.append("train_fast best of 3, train_bpe one run (minutes at the full size)")
    if k == n:
        row.reference, row.ratio = f"train_bpe {textbook:.1f} s", f"{textbook / fast:,.0f}x faster"
        return row
    estimate = textbook * n / k
    row.reference, row.ratio = f"train_bpe ~{estimate:.0f} s (est.)", f"~{estimate / fast:,.0f}x faster (est.)"
    row.notes.append(
        f"train_bpe timed at {k} merges only "
        f"({textbook:.2f} s, {textbook / fast_k:.0f}x train_fast's {fast_k:.2f} s there) "
        f"and scaled by {n}/{k}: an over-estimate; a full run (no --quick or --textbook-merges) measures it"
    )
    return row


def _alternate_runs(path: Path, sizes: Sizes) -> dict[str, Result]:
    """The best run of each contender: ours with the default workers, ours
    in one process, and HF (or ``{"error": ...}``). They take turns, so that
    a burst of load from other processes hits all of them alike."""
    runs: dict[str, list[Result]] = {"workers": [], "one process": [], "hf": [], "hf all cores": []}
    for _ in range(sizes.repeat):
        runs["workers"].append(in_fresh_process("child_bytelevel", str(path), sizes.vocab_size, None))
        runs["one process"].append(in_fresh_process("child_bytelevel", str(path), sizes.vocab_size, 1))
        for name, env in (("hf", ONE_THREAD), ("hf all cores", None)):
            try:
                runs[name].append(in_fresh_process("child_hf", str(path), sizes.vocab_size, env=env))
            except RuntimeError as err:
                runs[name].append({"error": str(err).splitlines()[-1]})
    fastest = lambda run: run.get("seconds", float("inf"))  # noqa: E731
    return {name: min(results, key=fastest) for name, results in runs.items()}


def bench_bytelevel_vs_hf(path: Path, sizes: Sizes) -> list[Row]:
    """train_bytelevel (counting in worker processes, then in one process)
    vs HF tokenizers' trainer with one thread (and, in a note, on every
    core); best of ``sizes.repeat``, each run in a fresh process for its
    peak memory, resident (RSS) and proportional (PSS), see ``runs``."""
    best = _alternate_runs(path, sizes)
    size_mb = path.stat().st_size / 1e6
    rows = []
    for name, label in (("workers", f"counting in up to {os.cpu_count()} processes"), ("one process", "one process")):
        ours = best[name]
        row = Row(
            f"byte-level training, vocab {sizes.vocab_size:,}, {size_mb:.1f} MB, {label}",
            f"train_bytelevel {ours['seconds']:.2f} s",
        )
        row.memory = f"ours {memory(ours)}"
        rows.append(_versus_hf(row, ours, best["hf"]))
    rows[0].notes.append(
        f"best of {sizes.repeat}, the contenders taking turns, each run in a fresh process; peak memory of the "
        "process and all its workers together, sampled every 20 ms (bench.runs.TreeMemory): RSS, the resident "
        "memory summed (pages shared between processes counted in each), and PSS, the proportional memory "
        f"summed (shared pages split), the fairer of the two; HF does not cut {ENDOFTEXT} out and "
        "pre-tokenizes line by line, so its merges differ slightly"
    )
    every = best["hf all cores"]
    if "error" not in every:
        rows[0].notes.append(
            f"HF tokenizers on all {os.cpu_count()} cores: {every['seconds']:.2f} s, {memory(every)}; "
            f"train_bytelevel with workers: {best['workers']['seconds'] / every['seconds']:.2f}x its time"
        )
    return rows


def _versus_hf(row: Row, ours: Result, hf: Result) -> Row:
    if "error" in hf:
        row.notes.append(f"HF tokenizers skipped: {hf['error']}")
        return row
    row.reference = f"HF tokenizers, 1 thread {hf['seconds']:.2f} s"
    row.ratio = faster(hf["seconds"], ours["seconds"])
    row.memory += f"; HF {memory(hf)}"
    return row


def bench_small(sizes: Sizes) -> Row:
    """train_bytelevel on a little English: the first call (compiling the
    patterns included) and the best of 3 after it."""
    from bpe_lab.bytelevel.train import train_bytelevel

    text = english_sample(sizes.small_bytes)
    with tempfile.TemporaryDirectory(prefix="bpe-lab-bench-") as tmp:
        path = Path(tmp) / "english.txt"
        path.write_text(text, encoding="utf-8")
        train = lambda: train_bytelevel(path, sizes.small_vocab, [ENDOFTEXT], progress=False)  # noqa: E731
        first = best_time(train, repeat=1)  # includes compiling the patterns
        best = best_time(train, repeat=3)
    verdict = "target met" if first < 0.5 else "target missed"
    case = f"small case, {len(text.encode()) / 1e3:.0f} KB English, vocab {sizes.small_vocab}"
    return Row(case, f"train_bytelevel {first:.2f} s (first call), {best:.2f} s (best of 3)", "target < 0.5 s", verdict)
