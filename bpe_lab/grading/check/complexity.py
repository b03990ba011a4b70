"""Chapter 04's checks: updating pair counts after a merge instead of recounting.

What this adds to ``runner``: words where a merge changes its neighbours'
counts (``A B C B C``, runs of ``a``), ``recount_deltas``, the reference
that recounts a word before and after the merge, and the rule every
incremental update is held to: equal to a full recount, with no zero
entries. The corpora are chapter 02's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from bpe_lab.core.symbols import Corpus, Pair
from bpe_lab.core.train import count_pairs, merge_symbols
from bpe_lab.grading.check.runner import compare, rng, run_cases, short
from bpe_lab.grading.check.training import corpus_cases

__all__ = ["recount_deltas", "check_pair_deltas", "check_merge_and_update"]


def recount_deltas(symbols: tuple[str, ...], pair: Pair) -> dict[Pair, int]:
    """Reference: recount the word before and after, keep what changed.

    >>> recount_deltas(("A", "B", "C"), ("B", "C")) == {("A", "B"): -1, ("B", "C"): -1, ("A", "BC"): 1}
    True
    """
    before, after = count_pairs({symbols: 1}), count_pairs({merge_symbols(symbols, pair): 1})
    changes = {p: after.get(p, 0) - before.get(p, 0) for p in {**before, **after}}
    return {p: d for p, d in changes.items() if d}


def check_pair_deltas(fn: Callable[[tuple[str, ...], Pair], dict[Pair, int]]) -> None:
    """``fn(symbols, pair) -> {pair: change}``: how merging ``pair`` in one word
    (frequency 1) changes its pair counts; unchanged pairs left out."""
    fixed: list[tuple[tuple[str, ...], Pair]] = [
        (("A", "B", "C"), ("B", "C")),
        (("A", "B", "C", "B", "C"), ("B", "C")),
        (("a", "a", "a", "a"), ("a", "a")),
        (("a", "a", "a"), ("a", "a")),
        (("l", "o", "w", "</w>"), ("e", "s")),
    ]
    generator = rng()
    randoms = [
        (
            tuple(generator.choice("ab") for _ in range(generator.randint(2, 8))),
            (generator.choice("ab"), generator.choice("ab")),
        )
        for _ in range(20)
    ]
    verdict = compare(
        recount_deltas, _deltas_hint, same=lambda got, expected: isinstance(got, Mapping) and dict(got) == expected
    )
    run_cases("pair_deltas", fn, fixed + randoms, verdict)


def _deltas_hint(expected: dict[Pair, int], got: object, symbols: tuple[str, ...], pair: Pair) -> str:
    if isinstance(got, Mapping) and {p: d for p, d in got.items() if d} == expected:
        return ": leave out pairs whose count does not change"
    return ""


def check_merge_and_update(fn: Callable[..., tuple[Corpus, dict[Pair, int]]]) -> None:
    """``fn(corpus, counts, pair) -> (corpus, counts)``: after the merge, the
    counts must equal a full recount of the merged corpus (no zero entries)."""
    cases = [(c, count_pairs(c), p) for c in corpus_cases(rng()) for p in list(count_pairs(c))[:3]]
    run_cases(
        "merge_and_update",
        fn,
        cases,
        _update_verdict,
        shown=lambda corpus, counts, pair: f"{short(corpus, 60)}, ..., {pair}",
    )


def _update_verdict(got: Any, corpus: Corpus, counts: dict[Pair, int], pair: Pair) -> str | None:
    expected_corpus = {merge_symbols(s, pair): f for s, f in corpus.items()}
    if not (isinstance(got, tuple) and len(got) == 2):
        return f"return a tuple (corpus, counts), got {short(got)}"
    new_corpus, new_counts = got
    if dict(new_corpus) != expected_corpus:
        return f"the merged corpus should be {short(expected_corpus)}, got {short(new_corpus)}"
    recount = count_pairs(expected_corpus)
    if dict(new_counts) != recount:
        return _update_hint(recount, dict(new_counts))
    return None


def _update_hint(recount: dict[Pair, int], got: dict[Pair, int]) -> str:
    zeros = [p for p, c in got.items() if c == 0]
    if zeros:
        return f"delete pairs whose count drops to 0, such as {zeros[0]}"
    for pair in {**recount, **got}:
        if recount.get(pair) != got.get(pair):
            return (
                f"pair {pair}: a recount gives {recount.get(pair)}, your update gives {got.get(pair)}: "
                "add each changed word's pair_deltas times its frequency"
            )
    return "the counts differ from a recount"
