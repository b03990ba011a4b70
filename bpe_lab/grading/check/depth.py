"""Self-checks of the notebooks' depth sections (issue 34): the "your turn"
of notebook 05's section on recovering merges from ranks, and of notebook
06's section on what a fast tokenizer keeps track of, and of notebook 05's
section on a new special token in a trained model.

``check_parts_below_rank``: a learner's ``parts_below_rank(token, ranks)``
against ``bytelevel.rank_split.parts_below_rank`` on hand-worked tables
(where lowest rank and leftmost pair disagree, and where the token's own
rank must not be used) and on GPT-2's ranks.

``check_word_spans``: a learner's ``word_spans(sequence_ids, word_ids,
offsets)`` against ``tokenizers``' own ``Encoding.word_to_chars``, on
GPT-2's tokenizer built in ``tokenizers`` (``bytelevel.hf_pipeline``), for
pairs and single sentences, one with a special token (no word) among them.

``check_mean_rows``: a learner's ``mean_rows(matrix, count)`` against
``bytelevel.new_rows.add_rows`` on small matrices worked by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from bpe_lab.bytelevel.gpt2 import GPT2_RANKS_PATH, gpt2_tokenizer, load_tiktoken_ranks
from bpe_lab.bytelevel.hf_pipeline import hf_tokenizer
from bpe_lab.bytelevel.new_rows import add_rows
from bpe_lab.bytelevel.rank_split import parts_below_rank
from bpe_lab.grading.check.runner import compare, rng, run_cases, short

__all__ = [
    "RANK_CASES",
    "check_parts_below_rank",
    "SPAN_TEXTS",
    "spans_of",
    "check_word_spans",
    "ROW_CASES",
    "check_mean_rows",
]

_ABC = {b"a": 0, b"b": 1, b"c": 2}
#: Worked by hand: (token, ranks) -> parts. bc ranks below ab, so abc is a + bc;
#: with ab below bc, ab + c; aaa's two equal pairs join leftmost first; a token of one byte is itself.
RANK_CASES: list[tuple[bytes, dict[bytes, int]]] = [
    (b"abc", _ABC | {b"bc": 3, b"ab": 4, b"abc": 5}),
    (b"abc", _ABC | {b"ab": 3, b"bc": 4, b"abc": 5}),
    (b"ab", _ABC | {b"ab": 3}),
    (b"aaa", _ABC | {b"aa": 3, b"aaa": 4}),
    (b"abcd", _ABC | {b"d": 3, b"cd": 4, b"ab": 5, b"bc": 6, b"abcd": 7}),
    (b"b", _ABC),
]


def _cases() -> list[tuple[bytes, Mapping[bytes, int]]]:
    ranks = load_tiktoken_ranks(GPT2_RANKS_PATH)
    longer = sorted((t for t in ranks if len(t) > 1), key=ranks.__getitem__)
    generator = rng()
    sample = longer[:20] + generator.sample(longer, 30) + sorted(longer, key=len)[-5:]
    return [*RANK_CASES, *((token, ranks) for token in sample)]


def _shown(token: bytes, ranks: Mapping[bytes, int]) -> str:
    return f"{token!r}, {short(dict(ranks), 100) if len(ranks) < 20 else 'GPT-2 ranks'}"


def check_parts_below_rank(fn: Callable[[bytes, Mapping[bytes, int]], list[bytes]]) -> None:
    """``fn(token, ranks) -> parts``: BPE on the token's bytes with only the
    ranks below the token's own; for GPT-2's tokens, the merge that made it."""
    run_cases("parts_below_rank", fn, _cases(), compare(parts_below_rank, _hint), shown=_shown)


def _hint(expected: list[bytes], got: object, token: bytes, ranks: Mapping[bytes, int]) -> str:
    if not isinstance(got, list) or not all(isinstance(p, bytes) for p in got):
        return ": return a list of bytes objects, such as [b'a', b'bc']"
    if got == [token] and len(token) > 1:
        return f": the token's own rank ({ranks[token]}) may not be used: only joins ranked below it"
    if b"".join(got) != token:
        return ": the parts must join back to the token"
    if len(got) > len(expected):
        return ": keep joining while some adjacent pair's join ranks below the token"
    return ": join the pair whose joined bytes have the lowest rank, not the leftmost joinable pair"


#: The texts ``check_word_spans`` encodes: pairs, then single sentences
#: (a word cut into several tokens, digits, a lone special token, spaces).
SPAN_TEXTS: list[tuple[str, ...]] = [
    ("Tokenizers split words.", "Offsets point back to characters!"),
    ("lowest newest", "widest"),
    ("Hello world<|endoftext|>",),
    ("   indented  code: x = 12345",),
    ("naïve café, 低价 🙂",),
]

Spans = dict[tuple[int, int], tuple[int, int]]


@lru_cache(maxsize=1)
def span_encodings() -> list[Any]:
    """``SPAN_TEXTS`` encoded by GPT-2's tokenizer built in ``tokenizers`` (made once)."""
    hf = hf_tokenizer(gpt2_tokenizer())
    return [hf.encode(*texts) for texts in SPAN_TEXTS]


def spans_of(encoding: Any) -> Spans:
    """The reference: ``(sentence, word) -> (start, end)`` from the
    encoding's own ``word_to_chars``, for every word a token belongs to."""
    words = {(s, w) for s, w in zip(encoding.sequence_ids, encoding.word_ids) if w is not None}
    return {(s, w): tuple(encoding.word_to_chars(w, s)) for s, w in sorted(words)}


def check_word_spans(fn: Callable[[list[Any], list[Any], list[tuple[int, int]]], Spans]) -> None:
    """``fn(sequence_ids, word_ids, offsets) -> {(sentence, word): (start, end)}``:
    each word's characters, the union of its tokens' offsets."""
    cases = [(list(e.sequence_ids), list(e.word_ids), list(e.offsets)) for e in span_encodings()]
    references = {repr(case): spans_of(e) for case, e in zip(cases, span_encodings())}

    def reference(sequence_ids: list[Any], word_ids: list[Any], offsets: list[tuple[int, int]]) -> Spans:
        return references[repr((sequence_ids, word_ids, offsets))]

    def shown(sequence_ids: list[Any], word_ids: list[Any], offsets: list[tuple[int, int]]) -> str:
        return f"{sequence_ids}, {word_ids}, {short(offsets, 100)}"

    run_cases("word_spans", fn, cases, compare(reference, _span_hint), shown=shown)


def _span_hint(expected: Spans, got: object, sequence_ids: list[Any], word_ids: list[Any], offsets: object) -> str:
    if not isinstance(got, dict):
        return ": return a dict {(sentence, word): (start, end)}"
    if any(key[1] is None for key in got if isinstance(key, tuple) and len(key) == 2):
        return ": a token whose word is None (a special token) belongs to no word: leave it out"
    if set(got) == {w for w in word_ids if w is not None}:
        return ": key each word by (sentence, word): word numbers start again at 0 in the second sentence"
    if set(got) != set(expected):
        return f": the keys should be {sorted(expected)}"
    wrong = next(key for key in sorted(expected) if got[key] != expected[key])
    return f": word {wrong} should span {expected[wrong]}: the first token's start to the last token's end"


#: ``(matrix, count)``: rows and columns of different means, one row, no new row, several.
ROW_CASES: list[tuple[list[list[float]], int]] = [
    ([[1.0, 0.0], [3.0, 2.0]], 1),
    ([[1.0, 0.0, 2.0], [3.0, 2.0, 0.0], [2.0, 1.0, 1.0], [2.0, 5.0, 1.0]], 2),
    ([[0.5, -1.5, 4.0]], 3),
    ([[1.0, 2.0], [3.0, 6.0]], 0),
    ([[-2.0, 0.0, 7.0, 1.0], [4.0, 2.0, -1.0, 3.0], [1.0, 1.0, 0.0, 2.0]], 2),
]


def check_mean_rows(fn: Callable[[Any, int], Any]) -> None:
    """``fn(matrix, count) -> matrix``: ``count`` rows appended, each the mean
    of the existing rows (``add_rows``); compared as lists of floats."""
    import numpy as np

    cases = [(np.array(matrix), count) for matrix, count in ROW_CASES]

    def reference(matrix: Any, count: int) -> list[list[float]]:
        return [[float(x) for x in row] for row in add_rows(matrix, count).tolist()]

    def same(got: Any, expected: list[list[float]]) -> bool:
        try:
            rows = np.asarray(got, dtype=float)
        except (TypeError, ValueError):
            return False
        return rows.shape == (len(expected), len(expected[0])) and bool(np.allclose(rows, expected))

    def shown(matrix: Any, count: int) -> str:
        return f"{matrix.tolist()}, {count}"

    run_cases("mean_rows", fn, cases, compare(reference, _rows_hint, same=same), shown=shown)


def _rows_hint(expected: list[list[float]], got: object, matrix: Any, count: int) -> str:
    import numpy as np

    try:
        rows = np.asarray(got, dtype=float)
    except (TypeError, ValueError):
        return ": return a matrix (a NumPy array) of numbers"
    old = len(expected) - count
    if rows.ndim != 2 or rows.shape[1:] != (len(expected[0]),):
        return f": keep the width: every row has {len(expected[0])} numbers"
    if len(rows) == count:
        return ": keep the old rows and append the new ones below them (np.vstack)"
    if len(rows) != len(expected):
        return f": {old} old rows and {count} new make {len(expected)}"
    if count and np.allclose(rows[old:], 0):
        return ": the new rows are zeros; take the mean of the old rows (matrix.mean(axis=0))"
    return ": each new row is the mean over the rows, matrix.mean(axis=0), one number per column"
