"""tiktoken timed in a plain script, the way its README shows it, to check
the benchmark's own tiktoken figures (``bpe-lab bench --check``).

Straight-line code, nothing shared with ``bench.encoding`` but the ranks'
loader: build one ``Encoding``, call it once, then time
``encode_ordinary`` once per document and ``encode_ordinary_batch`` on 1
and on N threads, best of ``--repeat``. It runs as a process of its own, so
nothing the benchmark did before (its workers, its memory) is in the room.

    python -m bpe_lab.bench.plain CORPUS --single-bytes 5000000 --threads 2 --repeat 3

prints one JSON object of MB/s: ``{"encode_ordinary": 19.7, "batch 1": 19.9,
"batch 2": 24.6}``.
"""

from __future__ import annotations

import argparse
import functools
import json
import time
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["main", "plain_figures"]

ENDOFTEXT = "<|endoftext|>"


def _best(call: Callable[[], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best


def _documents(path: str, num_bytes: int | None) -> tuple[list[str], float]:
    with open(path, "rb") as f:
        text = (f.read() if num_bytes is None else f.read(num_bytes)).decode("utf-8", errors="ignore")
    return text.split(ENDOFTEXT), len(text.encode()) / 1e6


def plain_figures(path: str, single_bytes: int | None, threads: int, repeat: int) -> dict[str, float]:
    """MB/s of tiktoken's calls: ``encode_ordinary`` per document on the first
    ``single_bytes`` of ``path`` (all of it for None), the batch on all of it,
    as the benchmark's rows encode them."""
    import tiktoken

    from bpe_lab.bytelevel.gpt2 import GPT2_RANKS_PATH, load_tiktoken_ranks
    from bpe_lab.core.pretokenize import GPT2_PATTERN

    ranks = load_tiktoken_ranks(GPT2_RANKS_PATH)
    enc = tiktoken.Encoding(
        name="plain_gpt2", pat_str=GPT2_PATTERN, mergeable_ranks=ranks, special_tokens={ENDOFTEXT: len(ranks)}
    )
    enc.encode_ordinary("Hello, world! A warm-up call.")
    documents, megabytes = _documents(path, single_bytes)
    figures = {"encode_ordinary": megabytes / _best(lambda: [enc.encode_ordinary(d) for d in documents], repeat)}
    documents, megabytes = _documents(path, None)
    for n in sorted({1, threads}):
        batch = functools.partial(enc.encode_ordinary_batch, documents, num_threads=n)
        figures[f"batch {n}"] = megabytes / _best(batch, repeat)
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", help="a UTF-8 text file, documents joined by <|endoftext|>")
    parser.add_argument(
        "--single-bytes", type=int, default=None, help="encode_ordinary on its first BYTES only (default: all)"
    )
    parser.add_argument("--threads", type=int, default=2, help="encode_ordinary_batch's num_threads (and 1)")
    parser.add_argument("--repeat", type=int, default=3, help="best of (default: %(default)s)")
    args = parser.parse_args(argv)
    if args.threads < 1 or args.repeat < 1:
        parser.error(f"--threads and --repeat must be at least 1, got {args.threads} and {args.repeat}")
    print(json.dumps(plain_figures(args.corpus, args.single_bytes, args.threads, args.repeat)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
