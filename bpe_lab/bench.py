"""Benchmarks for chapter 04: how fast is each BPE path, measured side by side.

One run prints one table of ratios, so every comparison is made on the same
machine under the same load (absolute seconds mean little on a shared
machine; ratios measured in the same run mean more):

- the textbook trainer (``core.train.train_bpe``) against the incremental
  one (``core.train_fast.train_fast``), on ~1 MB of text;
- ``bytelevel.train.train_bytelevel`` against Hugging Face ``tokenizers``
  (Rust, one thread) at a 10,000-entry vocabulary on a ~30 MB corpus, each
  in a fresh process so that its peak memory is its own;
- the small case: ~130 KB of English, vocabulary 500;
- encoding throughput of ``bytelevel.tokenizer.Tokenizer`` with GPT-2's
  ranks, against tiktoken and HF tokenizers;
- chapter 08's rows (``bench_scale``): ``encode_file`` on 2 workers against
  tiktoken's batch encoder on 2 threads, and training time and memory as the
  corpus grows to ~140 MB, with their log-log slopes.

How a contender is run and its memory measured (a fresh process, the peak
of its whole process tree) is ``bench_runs``.

The corpus is real text that needs no download (``core.corpus_files``):
this Python's standard library joined with ``<|endoftext|>``, built once
into a cache file.

    bpe-lab bench            # the full run: about 6 minutes, 2 of them the textbook trainer
    bpe-lab bench --quick    # small sizes: a few seconds (the test suite runs this)
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from bpe_lab.bench_grading import bench_grading
from bpe_lab.bench_runs import Result, Row, Sizes, in_fresh_process
from bpe_lab.bench_scale import bench_encode_file, bench_growth
from bpe_lab.core.corpora import python_docs
from bpe_lab.core.corpus_files import stdlib_corpus
from bpe_lab.core.symbols import ENDOFTEXT
from bpe_lab.variants.scaling import best_time

if TYPE_CHECKING:
    from bpe_lab.bytelevel.tokenizer import Tokenizer

__all__ = ["Row", "Sizes", "english_sample", "run_benchmarks", "format_table", "add_bench_command"]

#: HF tokenizers on one thread, as in bench_scale.
_ONE_THREAD = {"RAYON_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}


# -- corpora ---------------------------------------------------------------


def english_sample(num_bytes: int = 130_000) -> str:
    """About ``num_bytes`` of English prose: the start of the course's Python
    documentation corpus, cut at a character boundary."""
    return python_docs().encode("utf-8")[:num_bytes].decode("utf-8", errors="ignore")


# -- timing ----------------------------------------------------------------


# -- the benchmarks -----------------------------------------------------------


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
        for name, env in (("hf", _ONE_THREAD), ("hf all cores", None)):
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
    peak memory, resident (RSS) and proportional (PSS), see ``bench_runs``."""
    best = _alternate_runs(path, sizes)
    size_mb = path.stat().st_size / 1e6
    rows = []
    for name, label in (("workers", f"counting in up to {os.cpu_count()} processes"), ("one process", "one process")):
        ours = best[name]
        row = Row(
            f"byte-level training, vocab {sizes.vocab_size:,}, {size_mb:.1f} MB, {label}",
            f"train_bytelevel {ours['seconds']:.2f} s",
        )
        row.memory = f"ours {_memory(ours)}"
        rows.append(_versus_hf(row, ours, best["hf"]))
    rows[0].notes.append(
        f"best of {sizes.repeat}, each in a fresh process; peak memory of the process and all its workers "
        "together, sampled every 20 ms (bench_runs.TreeMemory): RSS, the resident memory summed (pages shared "
        "between processes counted in each), and PSS, the proportional memory summed (shared pages split), "
        f"the fairer of the two; HF does not cut {ENDOFTEXT} out and pre-tokenizes line by line, so its merges "
        "differ slightly"
    )
    every = best["hf all cores"]
    if "error" not in every:
        rows[0].notes.append(
            f"HF tokenizers on all {os.cpu_count()} cores: {every['seconds']:.2f} s, {_memory(every)}; "
            f"train_bytelevel with workers: {best['workers']['seconds'] / every['seconds']:.2f}x its time"
        )
    return rows


def _memory(run: Result) -> str:
    return f"{run['peak_mb']:.0f} MB RSS ({run['pss_mb']:.0f} PSS)"


def _versus_hf(row: Row, ours: Result, hf: Result) -> Row:
    if "error" in hf:
        row.notes.append(f"HF tokenizers skipped: {hf['error']}")
        return row
    row.reference = f"HF tokenizers, 1 thread {hf['seconds']:.2f} s"
    ratio = hf["seconds"] / ours["seconds"]
    row.ratio = f"{ratio:.2f}x faster" if ratio >= 1 else f"{1 / ratio:.2f}x slower"
    row.memory += f"; HF {_memory(hf)}"
    return row


def bench_small(sizes: Sizes) -> Row:
    from bpe_lab.bytelevel.train import train_bytelevel

    text = english_sample(sizes.small_bytes)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "english.txt"
        path.write_text(text, encoding="utf-8")
        train = lambda: train_bytelevel(path, sizes.small_vocab, [ENDOFTEXT], progress=False)  # noqa: E731
        first = best_time(train, repeat=1)  # includes compiling the patterns
        best = best_time(train, repeat=3)
    verdict = "target met" if first < 0.5 else "target missed"
    case = f"small case, {len(text.encode()) / 1e3:.0f} KB English, vocab {sizes.small_vocab}"
    return Row(case, f"train_bytelevel {first:.2f} s (first call), {best:.2f} s (best of 3)", "target < 0.5 s", verdict)


def bench_encoding(path: Path, sizes: Sizes) -> list[Row]:
    """Encoding throughput with GPT-2's ranks: bpe_lab's Tokenizer vs tiktoken
    (one thread). A hook for the encoder chapter: skipped, with a row that
    says why, when ``bpe_lab.bytelevel.tokenizer`` / ``bpe_lab.bytelevel.gpt2`` or tiktoken
    are not there."""
    try:
        from bpe_lab.bytelevel.gpt2 import GPT2_RANKS_PATH, gpt2_tokenizer, load_tiktoken_ranks
        from bpe_lab.core.pretokenize import GPT2_PATTERN
    except ImportError as err:
        return [Row("encoding, GPT-2 ranks", "skipped", notes=[f"no encoder yet ({err})"])]
    with open(path, "rb") as f:
        text = f.read(sizes.encode_bytes).decode("utf-8", errors="ignore")
    megabytes = len(text.encode()) / 1e6
    ours = gpt2_tokenizer()
    ours_s = best_time(lambda: ours.encode(text), repeat=1)
    row = Row(f"encoding, GPT-2 ranks, {megabytes:.1f} MB", f"Tokenizer.encode {megabytes / ours_s:.1f} MB/s")
    try:
        import tiktoken
    except ImportError:
        row.notes.append("tiktoken not installed")
        return [row]
    ranks = load_tiktoken_ranks(GPT2_RANKS_PATH)
    encoding = tiktoken.Encoding(
        name="bpe_lab_gpt2", pat_str=GPT2_PATTERN, mergeable_ranks=ranks, special_tokens={ENDOFTEXT: len(ranks)}
    )
    theirs_s = best_time(lambda: encoding.encode(text, allowed_special="all"), repeat=1)
    row.reference = f"tiktoken {megabytes / theirs_s:.1f} MB/s"
    row.ratio = f"{theirs_s / ours_s:.0%} of tiktoken"
    return [row] + _bench_hf_encoding(ours, text, ours_s)


def _bench_hf_encoding(ours: Tokenizer, text: str, ours_s: float) -> list[Row]:
    """HF tokenizers on the same text with the same GPT-2 files, one document
    at a time (``encode`` of one sequence runs on one thread)."""
    try:
        import tokenizers
    except ImportError:
        return []
    from bpe_lab.bytelevel.files import write_gpt2_files

    with tempfile.TemporaryDirectory() as folder:
        vocab_path, merges_path = Path(folder) / "vocab.json", Path(folder) / "merges.txt"
        write_gpt2_files(ours.vocab, ours.merges, vocab_path, merges_path)
        hf = tokenizers.Tokenizer(tokenizers.models.BPE.from_file(str(vocab_path), str(merges_path)))
    hf.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.add_special_tokens([ENDOFTEXT])
    documents = text.split(ENDOFTEXT)
    hf_s = best_time(lambda: [hf.encode(doc) for doc in documents], repeat=1)
    megabytes = len(text.encode()) / 1e6
    case = f"encoding, GPT-2 ranks, {megabytes:.1f} MB, {len(documents):,} documents"
    return [
        Row(
            case,
            f"Tokenizer.encode {megabytes / ours_s:.1f} MB/s",
            f"HF tokenizers {megabytes / hf_s:.1f} MB/s",
            f"{hf_s / ours_s:.1f}x faster",
        )
    ]


#: The full run's sizes.
FULL = Sizes()


def run_benchmarks(
    sizes: Sizes = FULL, *, cache_dir: str | None = None, say: Callable[[str], object] = print
) -> list[Row]:
    """Every benchmark, in order; ``say`` reports progress between them."""
    say("building / reading the standard-library corpus ...")
    corpus = stdlib_corpus(cache_dir, sizes.corpus_bytes)
    with open(corpus, "rb") as f:
        head = f.read(sizes.textbook_bytes).decode("utf-8", errors="ignore")
    say("byte-level training vs HF tokenizers ...")
    rows = bench_bytelevel_vs_hf(corpus, sizes)
    say("textbook vs incremental trainer ...")
    rows.insert(0, bench_textbook_vs_fast(head, sizes))
    say("small case ...")
    rows.append(bench_small(sizes))
    say("encoding ...")
    rows.extend(bench_encoding(corpus, sizes))
    say(f"encode_file with {sizes.workers} workers vs tiktoken with {sizes.workers} threads ...")
    rows.append(bench_encode_file(corpus, sizes))
    say("growth: training at each corpus size ...")
    rows.extend(bench_growth(sizes, cache_dir, say))
    return rows


def format_table(rows: list[Row]) -> str:
    """A Markdown table (it pastes into the README) plus numbered notes."""
    header = ["case", "bpe_lab", "reference", "ratio", "peak memory"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    notes = []
    for row in rows:
        marks = ""
        for note in row.notes:
            notes.append(note)
            marks += f" [{len(notes)}]"
        lines.append(f"| {row.case}{marks} | {row.ours} | {row.reference} | {row.ratio} | {row.memory} |")
    lines += [""] + [f"[{i}] {note}" for i, note in enumerate(notes, 1)]
    return "\n".join(lines)


# -- the command ---------------------------------------------------------


def _run(args: argparse.Namespace) -> None:
    if args.grading is not None:
        print(bench_grading(args.grading, Path(args.solutions), args.assignment).line(args.assignment))
        return
    sizes = Sizes.quick() if args.quick else Sizes()
    if args.textbook_merges is not None:
        sizes = replace(sizes, textbook_merges=args.textbook_merges)
    if args.corpus_mb is not None:
        sizes = replace(sizes, corpus_bytes=int(args.corpus_mb * 1e6))
    say = (lambda message: print(message, file=sys.stderr)) if not args.quiet else (lambda message: None)
    print(format_table(run_benchmarks(sizes, cache_dir=args.cache_dir, say=say)))


def add_bench_command(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``bpe-lab bench`` (kept here so cli.py only wires it in)."""
    parser = subparsers.add_parser(
        "bench", help="time the trainers and encoders against the textbook code, HF tokenizers and tiktoken"
    )
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run of a few seconds")
    parser.add_argument(
        "--textbook-merges",
        type=int,
        help="time the textbook trainer on only this many merges and extrapolate (default: all of them, ~2 min)",
    )
    parser.add_argument(
        "--corpus-mb", type=float, help="use only the first files of the standard library, about this many MB"
    )
    parser.add_argument(
        "--cache-dir", help="where to keep the corpus file (default: $BPE_LAB_CACHE or ~/.cache/bpe_lab)"
    )
    parser.add_argument("--quiet", action="store_true", help="print only the table")
    parser.add_argument(
        "--grading", type=int, metavar="N", help="instead: time grading N solved submissions (bench_grading)"
    )
    parser.add_argument("--assignment", default="02_training", help="with --grading: which (default: %(default)s)")
    parser.add_argument("--solutions", default="solutions", help="with --grading: the solutions folder")
    parser.set_defaults(run=_run)
