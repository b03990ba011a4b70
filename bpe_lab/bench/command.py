"""``bpe-lab bench`` (``make bench``): every benchmark in order, one table.

    bpe-lab bench            # the full run: minutes, the textbook trainer the longest row
    bpe-lab bench --quick    # small sizes: well under a minute (the test suite runs a smaller one)
    bpe-lab bench --grading 100   # instead: time the grader on 100 solved submissions
    bpe-lab bench --check    # instead: the tiktoken rows against a plain script's timing (exit 1 over 10 %)

The table's rows, in order (the README's benchmark table is this output):
the corpus and the machine; building GPT-2's tokenizer against building
tiktoken's Encoding; the textbook trainer against the incremental
one; byte-level training against HF tokenizers (workers, one process); the
small case; single-thread encoding against tiktoken and HF (from an empty
pre-token cache, and with a warm one); ``encode_file``
against tiktoken's batch, and the speed-up of 2 workers over 1; a row per
pre-tokenizer pattern and GPT-2's fast path; training as the corpus grows,
and the slopes.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from bpe_lab.bench.check import check_tiktoken
from bpe_lab.bench.corpus import corpus_row, read_head
from bpe_lab.bench.encoding import bench_encode_file, bench_encoding, construction_row
from bpe_lab.bench.grading import bench_grading
from bpe_lab.bench.growth import bench_growth
from bpe_lab.bench.pretokenizers import bench_pretokenizers
from bpe_lab.bench.sizes import FULL, Sizes
from bpe_lab.bench.table import Row, format_table
from bpe_lab.bench.training import bench_bytelevel_vs_hf, bench_small, bench_textbook_vs_fast
from bpe_lab.core.corpus_files import stdlib_corpus

__all__ = ["run_benchmarks", "add_bench_command"]


def run_benchmarks(
    sizes: Sizes = FULL, *, cache_dir: str | None = None, say: Callable[[str], object] = print
) -> list[Row]:
    """Every benchmark, in order; ``say`` reports progress between them."""
    say("building / reading the standard-library corpus ...")
    corpus = stdlib_corpus(cache_dir, sizes.corpus_bytes)
    rows = [corpus_row(corpus, f"this Python's standard library ({corpus.name})")]
    say("building GPT-2's tokenizer and tiktoken's Encoding ...")
    rows.append(construction_row(sizes))
    say("textbook vs incremental trainer ...")
    rows.append(bench_textbook_vs_fast(read_head(corpus, sizes.textbook_bytes), sizes))
    say("byte-level training vs HF tokenizers ...")
    rows.extend(bench_bytelevel_vs_hf(corpus, sizes))
    say("small case ...")
    rows.append(bench_small(sizes))
    say("encoding, one thread ...")
    rows.extend(bench_encoding(corpus, sizes))
    say(f"encode_file on {sizes.workers} workers and on 1 vs tiktoken on {sizes.workers} threads and on 1 ...")
    rows.extend(bench_encode_file(corpus, sizes))
    say("pre-tokenizing with each pattern ...")
    rows.extend(bench_pretokenizers(corpus, sizes))
    say("growth: training at each corpus size ...")
    rows.extend(bench_growth(sizes, cache_dir, say))
    return rows


def _run(args: argparse.Namespace) -> None:
    if args.grading is not None:
        print(bench_grading(args.grading, Path(args.solutions), args.assignment).line(args.assignment))
        return
    sizes = Sizes.quick() if args.quick else FULL
    if args.textbook_merges is not None:
        sizes = replace(sizes, textbook_merges=args.textbook_merges)
    if args.corpus_mb is not None:
        sizes = replace(sizes, corpus_bytes=int(args.corpus_mb * 1e6))
    say = (lambda message: print(message, file=sys.stderr)) if not args.quiet else (lambda message: None)
    if args.check:
        corpus = stdlib_corpus(args.cache_dir, sizes.corpus_bytes)
        rows, all_agree = check_tiktoken(corpus, sizes, say)
        print(format_table([corpus_row(corpus, f"this Python's standard library ({corpus.name})"), *rows]))
        if not all_agree:
            raise SystemExit(1)
        return
    print(format_table(run_benchmarks(sizes, cache_dir=args.cache_dir, say=say)))


def add_bench_command(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``bpe-lab bench`` (kept here so cli.py only wires it in)."""
    parser = subparsers.add_parser(
        "bench", help="time the trainers and encoders against the textbook code, HF tokenizers and tiktoken"
    )
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    parser.add_argument(
        "--textbook-merges",
        type=int,
        help="time the textbook trainer on only this many merges and extrapolate (default: all: the slowest row)",
    )
    parser.add_argument(
        "--corpus-mb", type=float, help="use only the first files of the standard library, about this many MB"
    )
    parser.add_argument(
        "--cache-dir", help="where to keep the corpus file (default: $BPE_LAB_CACHE or ~/.cache/bpe_lab)"
    )
    parser.add_argument("--quiet", action="store_true", help="print only the table")
    parser.add_argument(
        "--check",
        action="store_true",
        help="instead: time tiktoken's rows and a plain script (bench.plain) in turn; exit 1 if over 10%% apart",
    )
    parser.add_argument(
        "--grading", type=int, metavar="N", help="instead: time grading N solved submissions (bench.grading)"
    )
    parser.add_argument("--assignment", default="02_training", help="with --grading: which (default: %(default)s)")
    parser.add_argument("--solutions", default="solutions", help="with --grading: the solutions folder")
    parser.set_defaults(run=_run)
