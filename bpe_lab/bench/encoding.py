"""Encoding benchmarks, GPT-2's ranks: ``Tokenizer`` against tiktoken and
Hugging Face ``tokenizers``, and ``encode_file`` on 1 and 2 workers against
tiktoken's batch encoder on 1 and 2 threads.

Every contender is timed best of ``Sizes.encode_repeat``, the contenders
taking turns (``timing``), each run from a fresh tokenizer built before the
clock starts, so that the pre-token cache a run fills cannot make the next
one faster. The ids are checked identical to tiktoken's (the row says
``IDS DIFFER`` otherwise).

- single thread: ``Tokenizer.encode`` on the corpus (all of it, or its
  first ``Sizes.encode_bytes``; the first 5 MB puts ours from an empty
  cache well below its figure on the whole corpus, because the misses'
  rank replay is paid once per distinct pre-token) against tiktoken's ``encode`` (special tokens allowed), and
  against HF's ``encode``, one document at a time; ours from an empty
  pre-token cache, and again with every pre-token already cached (a warm
  cache, which a long run is in for almost all of its text);
- a whole corpus: ``encode_file`` in ``Sizes.workers`` processes against
  tiktoken's ``encode_ordinary_batch`` on as many threads, given the
  documents between the ``<|endoftext|>`` separators (the separator's id
  goes between them, which is what ``encode_file`` does with the special
  token); and the speed-up of ``Sizes.workers`` workers over one, ours and
  tiktoken's, which says how many free cores the machine had.
"""

from __future__ import annotations

import importlib.util
import tempfile
from collections.abc import Callable
from functools import cache, partial
from pathlib import Path
from typing import Any

from bpe_lab.bench.corpus import CorpusShape, read_head
from bpe_lab.bench.sizes import Sizes
from bpe_lab.bench.table import Row, faster
from bpe_lab.bench.timing import Prepare, describe_repeat, interleaved
from bpe_lab.core.symbols import ENDOFTEXT

__all__ = ["bench_encoding", "bench_encode_file", "has_tiktoken", "tiktoken_gpt2"]


def has_tiktoken() -> bool:
    return importlib.util.find_spec("tiktoken") is not None


def tiktoken_gpt2() -> Any:
    """A new tiktoken Encoding for GPT-2's ranks and pattern, built from the
    package's own copy of the ranks (no download)."""
    import tiktoken

    from bpe_lab.core.pretokenize import GPT2_PATTERN

    ranks = _gpt2_ranks()
    return tiktoken.Encoding(
        name="bpe_lab_gpt2", pat_str=GPT2_PATTERN, mergeable_ranks=ranks, special_tokens={ENDOFTEXT: len(ranks)}
    )


@cache
def _gpt2_ranks() -> dict[bytes, int]:
    from bpe_lab.bytelevel.gpt2 import GPT2_RANKS_PATH, load_tiktoken_ranks

    return load_tiktoken_ranks(GPT2_RANKS_PATH)


def bench_encoding(path: Path, sizes: Sizes) -> list[Row]:
    """Single-thread encoding of the corpus (its first ``encode_bytes``, if set)."""
    from bpe_lab.bytelevel.gpt2 import gpt2_tokenizer

    text = read_head(path, sizes.encode_bytes)
    documents = text.split(ENDOFTEXT)
    megabytes = len(text.encode()) / 1e6
    shape = CorpusShape.of(documents)

    def fresh_ours() -> Callable[[], Any]:
        tokenizer = gpt2_tokenizer()
        return lambda: tokenizer.encode(text)

    def fresh_tiktoken() -> Callable[[], Any]:
        encoding = tiktoken_gpt2()
        return lambda: encoding.encode(text, allowed_special="all")

    def warm_ours() -> Callable[[], Any]:
        tokenizer = gpt2_tokenizer()
        tokenizer.encode(text)  # untimed: every pre-token of the text is in the cache now
        return lambda: tokenizer.encode(text)

    contenders: dict[str, Prepare] = {"ours": fresh_ours, "ours, warm cache": warm_ours}
    if has_tiktoken():
        contenders["tiktoken"] = fresh_tiktoken
    with tempfile.TemporaryDirectory(prefix="bpe-lab-bench-") as folder:
        make_hf = _hf_gpt2(Path(folder))
        if make_hf is not None:

            def fresh_hf() -> Callable[[], Any]:
                tokenizer = make_hf()
                return lambda: [tokenizer.encode(document).ids for document in documents]

            contenders["HF"] = fresh_hf
        timed = interleaved(contenders, sizes.encode_repeat)
    ours = timed["ours"]
    case = f"encoding, GPT-2 ranks, {megabytes:.1f} MB, {shape.documents:,} documents, one thread"
    row = Row(case, f"Tokenizer.encode {megabytes / ours.best:.1f} MB/s")
    row.notes.append(describe_repeat(timed) + f"; {shape.documents:,} documents of the corpus, {shape.sizes()}")
    if "tiktoken" not in timed:
        row.notes.append("tiktoken not installed")
        return [row]
    theirs = timed["tiktoken"]
    row.reference = f"tiktoken encode {megabytes / theirs.best:.1f} MB/s"
    row.ratio = f"{theirs.best / ours.best:.0%} of tiktoken" + _same(ours.result, theirs.result)
    warm = timed["ours, warm cache"]
    warm_row = Row(
        f"encoding, GPT-2 ranks, {megabytes:.1f} MB, one thread, warm cache",
        f"Tokenizer.encode {megabytes / warm.best:.1f} MB/s",
        row.reference,
        f"{theirs.best / warm.best:.0%} of tiktoken" + _same(warm.result, theirs.result),
    )
    warm_row.notes.append(
        "each run on a tokenizer that has encoded the same text once, untimed: every pre-token is a cache hit, "
        "as almost all are in a long run (a corpus of gigabytes repeats its pre-tokens); the row above starts "
        "each run from an empty cache"
    )
    rows = [row, warm_row]
    if "HF" in timed:
        hf_best = timed["HF"].best
        rows.append(
            Row(
                f"encoding, GPT-2 ranks, {megabytes:.1f} MB, HF one document at a time",
                f"Tokenizer.encode {megabytes / ours.best:.1f} MB/s",
                f"HF tokenizers encode {megabytes / hf_best:.1f} MB/s",
                faster(hf_best, ours.best),
            )
        )
    return rows


def _same(ours: list[int], theirs: list[int]) -> str:
    return "" if ours == theirs else " (IDS DIFFER)"


def _hf_gpt2(folder: Path) -> Callable[[], Any] | None:
    """A maker of HF tokenizers with GPT-2's files (written into ``folder``)."""
    try:
        import tokenizers
    except ImportError:
        return None
    from bpe_lab.bytelevel.files import write_gpt2_files
    from bpe_lab.bytelevel.gpt2 import gpt2_tokenizer

    gpt2 = gpt2_tokenizer()
    vocab_path, merges_path = folder / "vocab.json", folder / "merges.txt"
    write_gpt2_files(gpt2.vocab, gpt2.merges, vocab_path, merges_path)

    def make() -> Any:
        hf = tokenizers.Tokenizer(tokenizers.models.BPE.from_file(str(vocab_path), str(merges_path)))
        hf.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
        hf.add_special_tokens([ENDOFTEXT])
        return hf

    return make


def bench_encode_file(path: Path, sizes: Sizes) -> list[Row]:
    """encode_file on ``sizes.workers`` processes and on one, vs tiktoken's
    batch encoder on as many threads and on one: two rows, the speeds and
    the speed-ups."""
    from bpe_lab.bytelevel.gpt2 import gpt2_tokenizer

    megabytes, n = path.stat().st_size / 1e6, sizes.workers
    documents = read_head(path).split(ENDOFTEXT)

    def fresh_ours(workers: int) -> Callable[[], Any]:
        tokenizer = gpt2_tokenizer()
        return lambda: tokenizer.encode_file(path, workers=workers, progress=False)

    def fresh_tiktoken(threads: int) -> Callable[[], Any]:
        encoding = tiktoken_gpt2()
        return lambda: encoding.encode_ordinary_batch(documents, num_threads=threads)

    contenders: dict[str, Prepare] = {
        f"ours, {n} workers": partial(fresh_ours, n),
        "ours, 1 worker": partial(fresh_ours, 1),
    }
    if has_tiktoken():
        contenders |= {
            f"tiktoken, {n} threads": partial(fresh_tiktoken, n),
            "tiktoken, 1 thread": partial(fresh_tiktoken, 1),
        }
    timed = interleaved(contenders, sizes.encode_repeat)
    many, one = timed[f"ours, {n} workers"], timed["ours, 1 worker"]
    ids = many.result
    speed = Row(
        f"encode_file, GPT-2 ranks, {megabytes:.1f} MB, {len(documents):,} documents, {n} workers",
        f"encode_file {megabytes / many.best:.1f} MB/s",
        memory=f"ids: {ids.nbytes / 1e6:.0f} MB as {ids.dtype}",
    )
    speed.notes.append(
        describe_repeat(timed) + f"; encode_file reads the file and encodes in this process and in {n - 1} "
        "worker process(es) it starts, each building the tokenizer; tiktoken is given the documents already "
        "in memory"
    )
    speedup = Row(
        f"encode_file, speed-up of {n} workers over 1",
        f"{one.best / many.best:.2f}x ({megabytes / one.best:.1f} MB/s on 1 worker)",
    )
    speedup.notes.append(f"{n}x is the most {n} free cores can give; tiktoken's speed-up says how free they were")
    if f"tiktoken, {n} threads" not in timed:
        speed.notes.append("tiktoken not installed")
        return [speed, speedup]
    batch, single = timed[f"tiktoken, {n} threads"], timed["tiktoken, 1 thread"]
    separator = [len(_gpt2_ranks())]  # the id tiktoken_gpt2 gives ENDOFTEXT
    expected: list[int] = []
    for document in batch.result:
        expected += document + separator
    speed.reference = f"tiktoken encode_ordinary_batch, {n} threads {megabytes / batch.best:.1f} MB/s"
    speed.ratio = f"{batch.best / many.best:.0%} of tiktoken" + _same(ids.tolist(), expected[:-1])
    speedup.reference = f"tiktoken {single.best / batch.best:.2f}x ({megabytes / single.best:.1f} MB/s on 1 thread)"
    speedup.ratio = f"ours {one.best / many.best / (single.best / batch.best):.0%} of tiktoken's speed-up"
    return [speed, speedup]
