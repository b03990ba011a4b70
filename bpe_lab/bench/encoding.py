"""Encoding benchmarks, GPT-2's ranks: ``Tokenizer`` against tiktoken and
Hugging Face ``tokenizers``, and ``encode_file`` on 1 and 2 workers against
tiktoken's batch encoder on 1 and 2 threads.

tiktoken is timed as its users run it (its README): one ``Encoding`` built
once, outside every timing, given one warm-up call, then
``encode_ordinary`` once per document, and ``encode_ordinary_batch`` with
``num_threads`` equal to the workers given to ``encode_file``. Building a
fresh ``Encoding`` for each run, as this benchmark once did, is not how it
is used (``bench/plain.py`` times the same calls in a straight-line script
of its own, in a process of its own, and ``bpe-lab bench --check`` compares
its figures with these).

bpe_lab is timed the same way, one ``encode_ordinary`` per document, from a
``Tokenizer`` built fresh before each run (so its pre-token cache starts
empty: the cold row) and from one that has encoded the same documents once,
untimed (the warm row: a long run's state). Building the ``Tokenizer`` is
timed apart, in its own row, beside building tiktoken's ``Encoding``.
Every contender is timed best of ``Sizes.encode_repeat``, the contenders
taking turns (``timing``). The ids are checked identical to tiktoken's (the
row says ``IDS DIFFER`` otherwise).

- single thread: ``Tokenizer.encode_ordinary`` per document, cold and
  warm, against tiktoken's ``encode_ordinary`` and HF's ``encode`` (one
  document at a time);
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

__all__ = [
    "bench_encoding",
    "bench_encode_file",
    "construction_row",
    "has_tiktoken",
    "tiktoken_gpt2",
    "warmed_tiktoken_gpt2",
]


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


def warmed_tiktoken_gpt2() -> Any:
    """tiktoken's Encoding for GPT-2, as its users hold it: built once, and
    given one call before any timing (its first call is not a user's
    typical one)."""
    encoding = tiktoken_gpt2()
    encoding.encode_ordinary("Hello, world! A warm-up call.")
    return encoding


def construction_row(sizes: Sizes) -> Row:
    """Building GPT-2's ``Tokenizer`` against building tiktoken's ``Encoding``
    (both from ranks already read), best of ``encode_repeat``: the cost the
    cold rows leave out of their timing."""
    from bpe_lab.bytelevel.gpt2 import gpt2_tokenizer

    gpt2_tokenizer()  # reads the files once, untimed, as tiktoken_gpt2's ranks are read once
    contenders: dict[str, Prepare] = {"ours": lambda: gpt2_tokenizer}
    if has_tiktoken():
        _gpt2_ranks()
        contenders["tiktoken"] = lambda: tiktoken_gpt2
    timed = interleaved(contenders, sizes.encode_repeat)
    row = Row("building GPT-2's tokenizer (ranks already read)", f"Tokenizer(...) {timed['ours'].best:.3f} s")
    if "tiktoken" in timed:
        row.reference = f"tiktoken Encoding(...) {timed['tiktoken'].best:.3f} s"
        row.ratio = faster(timed["tiktoken"].best, timed["ours"].best)
    row.notes.append(
        "paid once per process (and once per encode_file worker); the encoding rows time neither: "
        + describe_repeat(timed)
    )
    return row


def bench_encoding(path: Path, sizes: Sizes) -> list[Row]:
    """Single-thread encoding of the corpus (its first ``encode_bytes``, if
    set), one ``encode_ordinary`` call per document for every contender."""
    from bpe_lab.bytelevel.gpt2 import gpt2_tokenizer

    text = read_head(path, sizes.encode_bytes)
    documents = text.split(ENDOFTEXT)
    megabytes = len(text.encode()) / 1e6
    shape = CorpusShape.of(documents)

    def each(encode: Callable[[str], list[int]]) -> Callable[[], list[list[int]]]:
        return lambda: [encode(document) for document in documents]

    def cold_ours() -> Callable[[], Any]:
        return each(gpt2_tokenizer().encode_ordinary)

    def warm_ours() -> Callable[[], Any]:
        tokenizer = gpt2_tokenizer()
        each(tokenizer.encode_ordinary)()  # untimed: every pre-token of the text is in the cache now
        return each(tokenizer.encode_ordinary)

    contenders: dict[str, Prepare] = {"ours": cold_ours, "ours, warm cache": warm_ours}
    if has_tiktoken():
        encoding = warmed_tiktoken_gpt2()  # once, outside every timing
        contenders["tiktoken"] = lambda: each(encoding.encode_ordinary)
    with tempfile.TemporaryDirectory(prefix="bpe-lab-bench-") as folder:
        make_hf = _hf_gpt2(Path(folder))
        if make_hf is not None:
            hf = make_hf()
            hf.encode("Hello, world! A warm-up call.")

            contenders["HF"] = lambda: lambda: [hf.encode(document).ids for document in documents]
        timed = interleaved(contenders, sizes.encode_repeat)
    ours = timed["ours"]
    case = f"encoding, GPT-2 ranks, {megabytes:.1f} MB, {shape.documents:,} documents, one thread"
    row = Row(case, f"encode_ordinary {megabytes / ours.best:.1f} MB/s")
    row.notes.append(
        describe_repeat(timed) + f"; one call per document for each; ours from a Tokenizer built before each run "
        f"(an empty pre-token cache), tiktoken's and HF's built once and warmed up; {shape.sizes()}"
    )
    if "tiktoken" not in timed:
        row.notes.append("tiktoken not installed")
        return [row]
    theirs = timed["tiktoken"]
    row.reference = f"tiktoken encode_ordinary {megabytes / theirs.best:.1f} MB/s"
    row.figures["encode_ordinary"] = megabytes / theirs.best
    row.ratio = f"{theirs.best / ours.best:.0%} of tiktoken" + _same(ours.result, theirs.result)
    warm = timed["ours, warm cache"]
    warm_row = Row(
        f"encoding, GPT-2 ranks, {megabytes:.1f} MB, one thread, warm cache",
        f"encode_ordinary {megabytes / warm.best:.1f} MB/s",
        row.reference,
        f"{theirs.best / warm.best:.0%} of tiktoken" + _same(warm.result, theirs.result),
    )
    warm_row.notes.append(
        "each run on a tokenizer that has encoded the same documents once, untimed: every pre-token is a cache "
        "hit, as almost all are in a long run (a corpus of gigabytes repeats its pre-tokens)"
    )
    rows = [row, warm_row]
    if "HF" in timed:
        hf_best = timed["HF"].best
        rows.append(
            Row(
                f"encoding, GPT-2 ranks, {megabytes:.1f} MB, HF one document at a time",
                f"encode_ordinary {megabytes / ours.best:.1f} MB/s",
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

    def batch_tiktoken(encoding: Any, threads: int) -> Callable[[], Any]:
        return lambda: encoding.encode_ordinary_batch(documents, num_threads=threads)

    contenders: dict[str, Prepare] = {
        f"ours, {n} workers": partial(fresh_ours, n),
        "ours, 1 worker": partial(fresh_ours, 1),
    }
    if has_tiktoken():
        encoding = warmed_tiktoken_gpt2()  # once, outside every timing, as its users hold it
        contenders |= {
            f"tiktoken, {n} threads": partial(batch_tiktoken, encoding, n),
            "tiktoken, 1 thread": partial(batch_tiktoken, encoding, 1),
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
        "worker process(es) it starts, each building the tokenizer; tiktoken's Encoding is built once and "
        "warmed up, outside the timing, and is given the documents already in memory"
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
    speed.figures |= {f"batch {n}": megabytes / batch.best, "batch 1": megabytes / single.best}
    speed.ratio = f"{batch.best / many.best:.0%} of tiktoken" + _same(ids.tolist(), expected[:-1])
    speedup.reference = f"tiktoken {single.best / batch.best:.2f}x ({megabytes / single.best:.1f} MB/s on 1 thread)"
    speedup.ratio = f"ours {one.best / many.best / (single.best / batch.best):.0%} of tiktoken's speed-up"
    return [speed, speedup]
