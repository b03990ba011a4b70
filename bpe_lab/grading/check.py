"""Self-checks for the exercises: your function against the package's.

Each ``check_*`` function calls the learner's function on fixed cases (the
ones where the classic mistakes show) and on seeded random ones, compares it
with the reference in ``bpe_lab.variants.compression``, ``bpe_lab.core.train`` and
``bpe_lab.core.encode``, and either prints one line saying how many cases agree or
raises ``CheckFailed`` whose message names the first wrong case and says what
probably went wrong, for example::

    round 1: expected ('e', 's') with count 9, got ('t', '</w>') (count 9):
    ties go to the pair met first

The hints come from recognising the mistake, not from a generic diff: the
answer is recomputed the wrong way (without word-frequency weights, by
longest match, without ``</w>``, ...) and compared with what the learner got.

``find_first_mistake`` is the reference for the "find the mistake" task: it
replays a published round-by-round trace against the corpus and reports the
first round that is wrong.
"""

from __future__ import annotations

import random
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple, NoReturn

from bpe_lab.core.encode import decode_words, encode_text, encode_word, longest_match
from bpe_lab.core.symbols import END_OF_WORD, Pair
from bpe_lab.core.train import corpus_from_word_freq, count_pairs, merge_symbols, train_bpe, train_trace
from bpe_lab.variants.compression import Compressed, compress, decompress

__all__ = [
    "CheckFailed",
    "Mistake",
    "TEXTBOOK_CORPUS",
    "find_first_mistake",
    "check_most_frequent_pair",
    "check_compress",
    "check_decompress",
    "check_count_pairs",
    "check_merge_pair",
    "check_train",
    "check_first_mistake",
    "check_encode_word",
    "check_decode",
    "check_pair_deltas",
    "check_merge_and_update",
    "check_bytes_to_unicode",
    "check_encode_bytelevel",
    "check_decode_bytelevel",
    "check_longest_match",
    "check_viterbi",
    "check_sp_decode",
]

#: The corpus of Sennrich et al. (2016) that every chapter works through.
TEXTBOOK_CORPUS = {"low": 5, "lower": 2, "newest": 6, "widest": 3}

_SEED = 2016


class CheckFailed(AssertionError):
    """The learner's function disagrees with the package; the message is the hint.

    An AssertionError, so a failed check fails the notebook cell (and the
    graded task) like any failed ``assert``.
    """


# ---------------------------------------------------------------- helpers


def _short(value: object, limit: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _call(fn: Callable[..., Any], name: str, *args: Any) -> Any:
    """Call the learner's function, turning "not written yet" and crashes into hints."""
    try:
        return fn(*args)
    except NotImplementedError:
        raise CheckFailed(
            f"{name} is not written yet: replace `raise NotImplementedError()` in its cell with your code, "
            "run that cell, then run this one again"
        ) from None
    except CheckFailed:
        raise
    except Exception as err:
        shown = ", ".join(_short(a, 60) for a in args)
        detail = f": {err}" if str(err) else ""
        raise CheckFailed(f"{name}({shown}) raised {type(err).__name__}{detail}") from err


def _fail(case: str, message: str) -> NoReturn:
    raise CheckFailed(f"{case}: {message}")


def _passed(name: str, cases: int) -> None:
    print(f"✔ {name} agrees with bpe_lab on {cases} cases")


def _rng() -> random.Random:
    """Seeded, so a check prints the same thing every run (notebooks are tested)."""
    return random.Random(_SEED)


def _random_word_freq(rng: random.Random, alphabet: str = "abcde") -> dict[str, int]:
    # a dict, not a set: set order changes with the hash seed, and the cases must not
    words = dict.fromkeys(
        "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 7))) for _ in range(rng.randint(2, 8))
    )
    return {w: rng.randint(1, 9) for w in words}


def _split(word_freq: Mapping[str, int]) -> dict[tuple[str, ...], int]:
    return corpus_from_word_freq(word_freq)


# ------------------------------------------------- 01 Gage's compression


def _first_round(data: bytes) -> tuple[tuple[int, int], int] | None:
    rounds = compress(data, max_rounds=1).rounds
    return (rounds[0].pair, rounds[0].count) if rounds else None


def _compression_cases(rng: random.Random) -> Iterator[bytes]:
    yield from (b"abababcab", b"aaaa", b"abcdcdab", b"aaaaaaaa", b"the theme of the thesis")
    for _ in range(20):
        yield bytes(rng.choice(b"abcd") for _ in range(rng.randint(4, 40)))


def check_most_frequent_pair(fn: Callable[[bytes], tuple[tuple[int, int], int]]) -> None:
    """``fn(data) -> ((a, b), count)``: the pair with the most non-overlapping
    occurrences, ties to the pair that occurs first in the data."""
    cases = [d for d in _compression_cases(_rng()) if _first_round(d)]
    for data in cases:
        expected = _first_round(data)
        got = _call(fn, "most_frequent_pair", data)
        if got != expected:
            _fail(
                f"most_frequent_pair({data!r})",
                f"expected {expected}, got {_short(got)}{_pair_hint(data, expected, got)}",
            )
    _passed("most_frequent_pair", len(cases))


def _pair_hint(data: bytes, expected: tuple[tuple[int, int], int], got: object) -> str:
    if not (isinstance(got, tuple) and len(got) == 2 and isinstance(got[0], tuple)):
        return ": return a tuple ((a, b), count) with a and b byte values (ints)"
    (pair, count), (got_pair, got_count) = expected, got
    overlapping = sum(1 for p in zip(data, data[1:]) if p == tuple(got_pair))
    if got_pair == pair and got_count == overlapping != count:
        return (
            ": count non-overlapping occurrences: b'aaaa' holds b'aa' only twice side by side (bytes.count does this)"
        )
    if got_count == count:
        return ": ties go to the pair that occurs first in the data"
    return ""


def _compress_cases(rng: random.Random) -> list[bytes]:
    return [b"abababcab", b"aaaaaaaa", b"the theme of the thesis"] + [
        bytes(rng.choice(b"abc") for _ in range(rng.randint(2, 30))) for _ in range(15)
    ]


def check_compress(fn: Callable[[bytes], tuple[bytes, dict[int, tuple[int, int]]]]) -> None:
    """``fn(data) -> (packed, table)`` with ``table = {code: (a, b)}`` in the
    order the replacements were made, equal to ``bpe_lab.compress``."""
    cases = _compress_cases(_rng())
    for data in cases:
        ref = compress(data)
        got = _call(fn, "compress", data)
        if not (isinstance(got, tuple) and len(got) == 2 and isinstance(got[1], dict)):
            _fail(f"compress({data!r})", f"return a tuple (packed_bytes, table_dict), got {_short(got)}")
        packed, table = got
        hint = _table_hint(ref, list(table.items()))
        if hint:
            _fail(f"compress({data!r})", hint)
        if packed != ref.data:
            _fail(
                f"compress({data!r})",
                f"the table is right but the data is {_short(packed)}, expected {ref.data!r}: "
                "replace every non-overlapping occurrence, left to right (bytes.replace does this)",
            )
    _passed("compress", len(cases))


def _table_hint(ref: Compressed, got: list[tuple[int, tuple[int, int]]]) -> str | None:
    want = list(ref.table.items())
    for i, (expected, actual) in enumerate(zip(want, got), start=1):
        if expected == actual:
            continue
        (code, pair), (got_code, got_pair) = expected, actual
        if pair != got_pair:
            return f"replacement {i}: expected pair {pair} (count {ref.rounds[i - 1].count}), got {got_pair}: see most_frequent_pair"
        return (
            f"replacement {i}: expected code {code}, got {got_code}: use the smallest byte value that never "
            "occurred, neither in the data nor as an earlier code"
        )
    if len(got) > len(want):
        return f"expected {len(want)} replacements, got {len(got)}: stop when no pair occurs twice (a replacement would not pay for its table entry)"
    if len(got) < len(want):
        return f"expected {len(want)} replacements, got {len(got)}: keep going while some pair occurs at least twice and a byte value is free"
    return None


def check_decompress(fn: Callable[[bytes, dict[int, tuple[int, int]]], bytes]) -> None:
    """``fn(packed, table) -> data`` restores what ``bpe_lab.compress`` packed."""
    cases = _compress_cases(_rng())
    for data in cases:
        ref = compress(data)
        expected = decompress(ref)
        got = _call(fn, "decompress", ref.data, dict(ref.table))
        if got == expected:
            continue
        if not isinstance(got, (bytes, bytearray)):
            _fail(f"decompress({ref.data!r}, {ref.table})", f"return bytes, got {_short(got)}")
        hint = ""
        if any(code in got for code in ref.table):
            hint = (
                ": codes can stand for pairs that contain earlier codes, so expand the newest code first "
                "(walk the table in reverse)"
            )
        _fail(f"decompress({ref.data!r}, {ref.table})", f"expected {expected!r}, got {_short(bytes(got))}{hint}")
    _passed("decompress", len(cases))


# ----------------------------------------------------------- 02 training


def _corpus_cases(rng: random.Random) -> list[dict[tuple[str, ...], int]]:
    fixed = [_split(TEXTBOOK_CORPUS), {("a", "a", "a", "a"): 1, ("b", "a"): 2}]
    return fixed + [_split(_random_word_freq(rng)) for _ in range(15)]


def check_count_pairs(fn: Callable[[dict[tuple[str, ...], int]], dict[Pair, int]]) -> None:
    """``fn(corpus) -> {pair: count}``: every adjacent pair, weighted by the
    frequency of its word, overlapping occurrences included."""
    cases = _corpus_cases(_rng())
    for corpus in cases:
        expected = count_pairs(corpus)
        got = _call(fn, "count_pairs", dict(corpus))
        if not isinstance(got, Mapping):
            _fail(f"count_pairs({_short(corpus, 80)})", f"return a dict {{pair: count}}, got {_short(got)}")
        if dict(got) != expected:
            _fail(f"count_pairs({_short(corpus, 80)})", _count_hint(corpus, expected, dict(got)))
    _passed("count_pairs", len(cases))


def _count_hint(corpus: Mapping[tuple[str, ...], int], expected: dict[Pair, int], got: dict[Pair, int]) -> str:
    if got == count_pairs({symbols: 1 for symbols in corpus}):
        return (
            "you counted each pair once per word: weight every occurrence by the word's frequency "
            "(low appears 5 times, so its (l, o) adds 5)"
        )
    for pair, count in expected.items():
        if got.get(pair) != count:
            detail = f"pair {pair}: expected {count}, got {got.get(pair)}"
            if pair[0] == pair[1]:
                detail += (
                    ": count overlapping occurrences too, ('a', 'a', 'a', 'a') holds ('a', 'a') three times "
                    "(merging will join only two of them, but counting sees three)"
                )
            return detail
    extra = next(p for p in got if p not in expected)
    return f"pair {extra} does not occur in the corpus, but you counted it {got[extra]} times"


def check_merge_pair(fn: Callable[[tuple[str, ...], Pair], tuple[str, ...]]) -> None:
    """``fn(symbols, pair) -> symbols``: every non-overlapping occurrence of
    ``pair`` joined, left to right, whole symbols only."""
    fixed = [
        (("a", "a", "a", "a"), ("a", "a")),
        (("a", "a", "a"), ("a", "a")),
        (("x", "ab", "c"), ("b", "c")),
        (("l", "o", "w", "e", "r", "</w>"), ("e", "r")),
        (("n", "e", "w", "es", "t", "</w>"), ("es", "t")),
    ]
    rng = _rng()
    randoms = []
    for _ in range(20):
        symbols = tuple(rng.choice("ab") for _ in range(rng.randint(1, 8)))
        randoms.append((symbols, (rng.choice("ab"), rng.choice("ab"))))
    for symbols, pair in fixed + randoms:
        expected = merge_symbols(symbols, pair)
        got = _call(fn, "merge_pair", symbols, pair)
        if got != expected:
            _fail(
                f"merge_pair({symbols}, {pair})",
                f"expected {expected}, got {_short(got)}{_merge_hint(symbols, pair, got)}",
            )
    _passed("merge_pair", len(fixed) + len(randoms))


def _merge_hint(symbols: tuple[str, ...], pair: Pair, got: object) -> str:
    if isinstance(got, list) and tuple(got) == merge_symbols(symbols, pair):
        return ": return a tuple, not a list (tuples can be dict keys)"
    if "".join(map(str, got if isinstance(got, (list, tuple)) else [])) != "".join(symbols):
        return ": merging must keep every character, in order"
    if pair[0] + pair[1] not in "".join(symbols) or all(pair != p for p in zip(symbols, symbols[1:])):
        return ": join only whole symbols: ('x', 'ab', 'c') does not contain the pair ('b', 'c')"
    return (
        ": scan left to right and skip an occurrence that overlaps one already joined: "
        "('a', 'a', 'a', 'a') becomes ('aa', 'aa')"
    )


def _train_cases(rng: random.Random) -> list[tuple[dict[str, int], int]]:
    fixed = [(TEXTBOOK_CORPUS, 10), ({"aaaa": 3, "aa": 1}, 3), ({"aaa": 3, "aaaaa": 2}, 4)]
    return fixed + [(_random_word_freq(rng), rng.randint(1, 6)) for _ in range(12)]


def _quiet_trace(word_freq: Mapping[str, int], num_merges: int):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return train_trace(word_freq, num_merges)


def check_train(fn: Callable[[dict[str, int], int], list[Pair]]) -> None:
    """``fn(word_freq, num_merges) -> merges``, round by round equal to
    ``bpe_lab.train_bpe`` (``</w>`` at the end of every word, first-seen ties)."""
    cases = _train_cases(_rng())
    for word_freq, num_merges in cases:
        trace = _quiet_trace(word_freq, num_merges)
        got = _call(fn, "train", dict(word_freq), num_merges)
        hint = _trace_hint(trace, got)
        if hint:
            _fail(f"train({_short(word_freq, 80)}, {num_merges})", hint)
    _passed("train", len(cases))


def _trace_hint(trace, got: object) -> str | None:
    if not isinstance(got, list):
        return f"return a list of pairs, got {_short(got)}"
    for r, pair in zip(trace.rounds, got):
        if tuple(pair) != r.pair:
            return f"round {r.number}: expected {r.pair} with count {r.count}, got {_short(pair)}{_round_hint(trace, r, got)}"
    if len(got) != len(trace.rounds):
        return (
            f"expected {len(trace.rounds)} merges, got {len(got)}: learn num_merges merges, fewer only when "
            "every word has become a single symbol"
        )
    if any(not isinstance(p, tuple) for p in got):
        return "return each merge as a tuple (left, right)"
    return None


def _round_hint(trace, r, got: list) -> str:
    """Why round ``r`` went wrong, guessed from the learner's whole merge list."""
    pair = tuple(got[r.number - 1])
    count = r.pair_counts.get(pair)
    if pair in r.ties:
        return f" (count {count}): ties go to the pair met first (words in order, left to right in each word)"
    if END_OF_WORD in "".join(r.pair) and not any(END_OF_WORD in "".join(map(str, p)) for p in got):
        return ": every word ends with the end-of-word marker '</w>': start from list(word) + ['</w>']"
    if count is None and r.number == 1:
        return ": this pair does not occur in the corpus: split each word into its characters plus '</w>' and count those pairs"
    if count is None:
        return (
            ": this pair does not occur in the corpus at this round: check how you merge "
            "(every occurrence, left to right, whole symbols only)"
        )
    unweighted = count_pairs({symbols: 1 for symbols in trace.corpus_before(r.number)})
    if max(unweighted, key=unweighted.get) == pair:
        return f" (count {count}): weight every pair by its word's frequency"
    return f" (count {count}): take the most frequent pair"


class Mistake(NamedTuple):
    """The first wrong round of a published trace and what it should have been."""

    round: int
    expected_pair: Pair | None
    expected_count: int | None
    published_pair: Pair
    published_count: int

    def __str__(self) -> str:
        if self.expected_pair is None:
            return f"round {self.round}: no pair is left to merge, but the trace merges {self.published_pair}"
        if self.expected_pair == self.published_pair:
            return (
                f"round {self.round}: {self.published_pair} is right but its count is {self.expected_count}, "
                f"not {self.published_count}"
            )
        return (
            f"round {self.round}: the trace merges {self.published_pair} with count {self.published_count}, "
            f"but {self.expected_pair} has count {self.expected_count}"
        )


def find_first_mistake(
    word_freq: Mapping[str, int], trace: Sequence[tuple[Pair, int]], *, tie_break: str = "first"
) -> Mistake | None:
    """Replay a published trace ``[(pair, count), ...]`` against the corpus and
    return its first wrong round (wrong pair or wrong count), or None.

    Only the first mistake is meaningful: after it, the published corpus and
    the real one differ, so later rounds cannot be judged.

    >>> published = [(("e", "s"), 9), (("es", "t"), 9), (("o", "w"), 7)]
    >>> str(find_first_mistake(TEXTBOOK_CORPUS, published))
    "round 3: the trace merges ('o', 'w') with count 7, but ('est', '</w>') has count 9"
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rounds = train_trace(word_freq, len(trace), tie_break=tie_break).rounds
    for number, (pair, count) in enumerate(trace, start=1):
        pair = tuple(pair)
        if number > len(rounds):
            return Mistake(number, None, None, pair, count)
        r = rounds[number - 1]
        if (pair, count) != (r.pair, r.count):
            return Mistake(number, r.pair, r.count, pair, count)
    return None


#: Traces as published, with the mistakes found in tutorials on the web.
_PUBLISHED = [
    [(("e", "s"), 9), (("es", "t"), 9), (("o", "w"), 7)],
    [(("l", "o"), 7), (("lo", "w"), 7)],
    [(("e", "s"), 9), (("es", "t"), 9), (("est", "</w>"), 9), (("l", "o"), 7), (("lo", "w"), 7)],
    [(("e", "s"), 4), (("es", "t"), 2)],
    [(("e", "s"), 9), (("es", "t"), 9), (("est", "</w>"), 9), (("l", "o"), 7), (("lo", "w"), 6)],
]


def _mistake_cases(rng: random.Random) -> list[tuple[dict[str, int], list[tuple[Pair, int]]]]:
    cases = [(TEXTBOOK_CORPUS, trace) for trace in _PUBLISHED]
    odd_runs = {"aaa": 3, "aaaaa": 2}  # a right trace that only a correct merge confirms
    cases.append((odd_runs, [(r.pair, r.count) for r in _quiet_trace(odd_runs, 4).rounds]))
    for _ in range(10):
        word_freq = _random_word_freq(rng)
        trace = [(r.pair, r.count) for r in _quiet_trace(word_freq, 5).rounds]
        if trace and rng.random() < 0.7:
            i = rng.randrange(len(trace))
            trace[i] = (trace[i][0], trace[i][1] + rng.choice((-1, 1, 2)))
        cases.append((word_freq, trace))
    return cases


def check_first_mistake(fn: Callable[[dict[str, int], list[tuple[Pair, int]]], tuple[int, Pair, int] | None]) -> None:
    """``fn(word_freq, trace) -> (round, correct_pair, correct_count)`` for the
    first wrong round (numbered from 1), or None when the trace is right."""
    cases = _mistake_cases(_rng())
    for word_freq, trace in cases:
        mistake = find_first_mistake(word_freq, trace)
        expected = None if mistake is None else (mistake.round, mistake.expected_pair, mistake.expected_count)
        got = _call(fn, "first_mistake", dict(word_freq), list(trace))
        if got != expected:
            _fail(
                f"first_mistake({_short(word_freq, 60)}, {_short(trace, 100)})",
                f"expected {expected}, got {_short(got)}{_mistake_hint(mistake, got)}",
            )
    _passed("first_mistake", len(cases))


def _mistake_hint(mistake: Mistake | None, got: object) -> str:
    if mistake is None:
        return ": every round of this trace is right, so return None"
    if not isinstance(got, tuple) or len(got) != 3:
        return ": return a tuple (round, correct_pair, correct_count)"
    if got[0] == mistake.round - 1:
        return ": number the rounds from 1"
    if got[1] == mistake.published_pair and mistake.published_pair != mistake.expected_pair:
        return ": return the pair that should have been merged, not the published one"
    return ": compare pair and count in every round, and stop at the first difference"


# ----------------------------------------------------------- 03 encoding


def _encode_cases(rng: random.Random) -> list[tuple[str, list[Pair]]]:
    textbook = train_bpe(TEXTBOOK_CORPUS, 10)
    fixed = [(w, textbook) for w in ("lowest", "newer", "wider", "low", "xyz")]
    fixed.append(("abc", [("a", "b"), ("b", "c"), ("a", "bc")]))
    randoms = []
    for _ in range(15):
        word_freq = _random_word_freq(rng, "abc")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            merges = train_bpe(word_freq, rng.randint(1, 8))
        randoms.append(("".join(rng.choice("abc") for _ in range(rng.randint(1, 8))), merges))
    return fixed + randoms


def check_encode_word(fn: Callable[[str, list[Pair]], list[str]]) -> None:
    """``fn(word, merges) -> symbols``: rank replay, as ``bpe_lab.encode_word``."""
    cases = _encode_cases(_rng())
    for word, merges in cases:
        expected = encode_word(word, merges)
        got = _call(fn, "encode_word", word, list(merges))
        if got != expected:
            _fail(
                f"encode_word({word!r}, {_short(merges, 100)})",
                f"expected {expected}, got {_short(got)}{_encode_hint(word, merges, got)}",
            )
    _passed("encode_word", len(cases))


def _encode_hint(word: str, merges: list[Pair], got: object) -> str:
    if not isinstance(got, list):
        return ": return a list of symbols"
    if got == longest_match(word, merges):
        return (
            ": that is longest match; BPE replays the merges by rank: repeatedly join the adjacent pair "
            "that was learned earliest, until no learned pair is left"
        )
    if not any(END_OF_WORD in str(s) for s in got):
        return (
            ": the end-of-word marker is lost: start from list(word) + ['</w>'], so 'lowest' gives "
            "['low', 'est</w>'], not ['low', 'est']"
        )
    return ": join the learned pair with the lowest rank first, then look again"


def check_decode(fn: Callable[[list[str]], str]) -> None:
    """``fn(symbols) -> text``: as ``bpe_lab.decode_words``."""
    merges = train_bpe(TEXTBOOK_CORPUS, 10)
    texts = ["lowest", "low newest widest", "newer lower lowest", "x", "a bb ccc"]
    hint = ": each '</w>' ends a word: it becomes a space between words, and nothing after the last word"
    _check_decoder(fn, "decode", [encode_text(text, merges) for text in texts], decode_words, hint)


def _check_decoder(
    fn: Callable[[list[str]], str], name: str, cases: list[list[str]], reference: Callable[[list[str]], str], hint: str
) -> None:
    """Compare a learner's decoder with ``reference`` on each symbol list."""
    for symbols in cases:
        expected = reference(symbols)
        got = _call(fn, name, list(symbols))
        if got != expected:
            _fail(f"{name}({_short(symbols, 100)})", f"expected {expected!r}, got {_short(got)}{hint}")
    _passed(name, len(cases))


# ------------------------------------------------ 04 incremental counting


def _deltas(symbols: tuple[str, ...], pair: Pair) -> dict[Pair, int]:
    """Reference: recount the word before and after, keep what changed."""
    before, after = count_pairs({symbols: 1}), count_pairs({merge_symbols(symbols, pair): 1})
    changes = {p: after.get(p, 0) - before.get(p, 0) for p in {**before, **after}}
    return {p: d for p, d in changes.items() if d}


def check_pair_deltas(fn: Callable[[tuple[str, ...], Pair], dict[Pair, int]]) -> None:
    """``fn(symbols, pair) -> {pair: change}``: how merging ``pair`` in one word
    (frequency 1) changes its pair counts; unchanged pairs left out."""
    fixed = [
        (("A", "B", "C"), ("B", "C")),
        (("A", "B", "C", "B", "C"), ("B", "C")),
        (("a", "a", "a", "a"), ("a", "a")),
        (("a", "a", "a"), ("a", "a")),
        (("l", "o", "w", "</w>"), ("e", "s")),
    ]
    rng = _rng()
    randoms = [
        (tuple(rng.choice("ab") for _ in range(rng.randint(2, 8))), (rng.choice("ab"), rng.choice("ab")))
        for _ in range(20)
    ]
    for symbols, pair in fixed + randoms:
        expected = _deltas(symbols, pair)
        got = _call(fn, "pair_deltas", symbols, pair)
        if not isinstance(got, Mapping) or dict(got) != expected:
            hint = ""
            if isinstance(got, Mapping) and {p: d for p, d in got.items() if d} == expected:
                hint = ": leave out pairs whose count does not change"
            _fail(f"pair_deltas({symbols}, {pair})", f"expected {expected}, got {_short(got)}{hint}")
    _passed("pair_deltas", len(fixed) + len(randoms))


def check_merge_and_update(fn: Callable[..., tuple[dict[tuple[str, ...], int], dict[Pair, int]]]) -> None:
    """``fn(corpus, counts, pair) -> (corpus, counts)``: after the merge, the
    counts must equal a full recount of the merged corpus (no zero entries)."""
    cases = [(c, p) for c in _corpus_cases(_rng()) for p in list(count_pairs(c))[:3]]
    for corpus, pair in cases:
        expected_corpus = {merge_symbols(s, pair): f for s, f in corpus.items()}
        got = _call(fn, "merge_and_update", dict(corpus), count_pairs(corpus), pair)
        case = f"merge_and_update({_short(corpus, 60)}, ..., {pair})"
        if not (isinstance(got, tuple) and len(got) == 2):
            _fail(case, f"return a tuple (corpus, counts), got {_short(got)}")
        new_corpus, new_counts = got
        if dict(new_corpus) != expected_corpus:
            _fail(case, f"the merged corpus should be {_short(expected_corpus)}, got {_short(new_corpus)}")
        recount = count_pairs(expected_corpus)
        if dict(new_counts) != recount:
            _fail(case, _update_hint(recount, dict(new_counts)))
    _passed("merge_and_update", len(cases))


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


# ------------------------------------------------------- 05 byte-level BPE
# The byte-level modules are imported inside the checks, so that chapters
# 01-04 keep working whatever happens to them.


def check_bytes_to_unicode(fn: Callable[[], dict[int, str]]) -> None:
    """``fn() -> {byte: character}``: GPT-2's printable stand-in for each byte."""
    from bpe_lab.bytelevel.byte_map import bytes_to_unicode

    expected = bytes_to_unicode()
    got = _call(fn, "bytes_to_unicode")
    if not isinstance(got, Mapping) or sorted(got) != list(range(256)):
        _fail("bytes_to_unicode()", "return a dict with one entry for every byte value 0..255")
    if len(set(got.values())) != 256:
        _fail(
            "bytes_to_unicode()",
            "two bytes map to the same character: the map must be one-to-one, or decoding is ambiguous",
        )
    for byte in range(256):
        if got[byte] != expected[byte]:
            _fail(
                "bytes_to_unicode()",
                f"byte {byte}: expected {expected[byte]!r}, got {_short(got[byte])}{_byte_hint(byte, expected)}",
            )
    _passed("bytes_to_unicode", 256)


def _byte_hint(byte: int, expected: dict[int, str]) -> str:
    if expected[byte] == chr(byte):
        return ": a printable byte ('!'..'~', '¡'..'¬', '®'..'ÿ') stands for itself, chr(byte)"
    return ": the other bytes get chr(256), chr(257), ... in byte order (so the space, byte 32, becomes 'Ġ')"


_BYTELEVEL_TEXTS = [
    "Hello world!",
    "the  end<|endoftext|>The start",
    "naïve café, 今天天气很好",
    "<|endoftext|><|endoftext|>",
    "",
    "don't stop\n\n  indented",
    "a<|endoftext|>b",
]


def _bytelevel_texts(rng: random.Random) -> list[str]:
    from bpe_lab.core.corpora import python_docs

    docs = python_docs()
    starts = [rng.randrange(len(docs) - 200) for _ in range(8)]
    return _BYTELEVEL_TEXTS + [docs[s : s + rng.randint(20, 200)] for s in starts]


def check_encode_bytelevel(
    fn: Callable[..., list[int]], vocab: dict[int, bytes], merges: list[tuple[bytes, bytes]], special_tokens: list[str]
) -> None:
    """``fn(text, vocab, merges, special_tokens) -> ids`` equal to
    ``bpe_lab.Tokenizer(vocab, merges, special_tokens).encode(text)``."""
    from bpe_lab.bytelevel.tokenizer import Tokenizer

    reference = Tokenizer(vocab, merges, special_tokens)
    texts = _bytelevel_texts(_rng())
    for text in texts:
        expected = reference.encode(text)
        got = _call(fn, "encode", text, dict(vocab), list(merges), list(special_tokens))
        if got != expected:
            hint = _bytelevel_hint(reference, text, expected, got)
            _fail(f"encode({_short(text, 60)}, ...)", f"expected {_short(expected, 100)}, got {_short(got, 100)}{hint}")
    _passed("encode", len(texts))


def _bytelevel_hint(reference, text: str, expected: list[int], got: object) -> str:
    if not isinstance(got, list) or not all(isinstance(i, int) for i in got):
        return ": return a list of int ids"
    if set(reference.special_ids.values()) & set(expected) and not set(reference.special_ids.values()) & set(got):
        return ": find special tokens first (split_special) and give each its own id; they are never split into bytes"
    if got == list(text.encode("utf-8")):
        return ": no merge was applied: replay the merges by rank inside each pre-token"
    if got == _without_pretokenizing(reference, text):
        return ": cut each stretch with gpt2_pretokenize first: merges never cross pre-token boundaries"
    if reference.decode(got) != text:
        return ": your ids do not even decode back to the text; look up each final token's bytes in the vocabulary"
    return ": same text, different tokens: cut with gpt2_pretokenize, then join the lowest-rank pair first, inside each pre-token"


def _without_pretokenizing(reference, text: str) -> list[int]:
    """The ids a learner gets who merges across pre-tokens: rank replay over
    each whole stretch between special tokens."""
    from bpe_lab.bytelevel.encoders import replay_merges
    from bpe_lab.core.pretokenize import split_special

    id_of = {token: i for i, token in reference.vocab.items()}
    ids: list[int] = []
    for piece, special in split_special(text, reference.special_tokens):
        if special:
            ids.append(reference.special_ids[piece])
        else:
            ids.extend(id_of[t] for t in replay_merges(piece.encode("utf-8"), reference.pair_ranks))
    return ids


def check_decode_bytelevel(
    fn: Callable[[list[int], dict[int, bytes]], str],
    vocab: dict[int, bytes],
    merges: list[tuple[bytes, bytes]],
    special_tokens: list[str],
) -> None:
    """``fn(ids, vocab) -> text`` equal to ``bpe_lab.Tokenizer.decode``,
    including ids that cut a character in half (they decode to U+FFFD)."""
    from bpe_lab.bytelevel.tokenizer import Tokenizer

    reference = Tokenizer(vocab, merges, special_tokens)
    cases = [reference.encode(t) for t in _bytelevel_texts(_rng())] + [
        [195],
        [104, 195, 169, 33],
        list("今".encode())[:2],
    ]
    for ids in cases:
        expected = reference.decode(ids)
        got = _call(fn, "decode", list(ids), dict(vocab))
        if got != expected:
            hint = ": decode the joined bytes once, as UTF-8 with errors='replace'"
            if isinstance(got, str) and "\ufffd" in got and got.replace("\ufffd", "") != expected.replace("\ufffd", ""):
                hint = ": join the bytes of all the ids first, then decode once: one character can span several tokens"
            _fail(f"decode({_short(ids, 80)}, vocab)", f"expected {expected!r}, got {_short(got)}{hint}")
    _passed("decode", len(cases))


# --------------------------------------------------- 06 limits & variants


def check_longest_match(fn: Callable[[str, list[Pair]], list[str]]) -> None:
    """``fn(word, merges) -> symbols``: WordPiece's greedy longest match, as
    ``bpe_lab.longest_match``."""
    cases = _encode_cases(_rng())
    for word, merges in cases:
        expected = longest_match(word, merges)
        got = _call(fn, "longest_match", word, list(merges))
        if got != expected:
            hint = ": from the left, take the longest run of symbols whose join is in the vocabulary"
            if got == encode_word(word, merges) != expected:
                hint = ": that is BPE's rank replay; WordPiece ignores the merge order and takes the longest vocabulary entry"
            _fail(f"longest_match({word!r}, {_short(merges, 100)})", f"expected {expected}, got {_short(got)}{hint}")
    _passed("longest_match", len(cases))


def _unigram_cases(rng: random.Random) -> list[tuple[str, dict[str, float]]]:
    fixed_probs = {
        "low": -1.0,
        "est</w>": -1.0,
        "l": -3.0,
        "o": -3.0,
        "w": -3.0,
        "e": -3.0,
        "s": -3.0,
        "t": -3.0,
        "</w>": -3.0,
        "lowe": -1.5,
        "st</w>": -1.5,
    }
    cases = [("lowest", fixed_probs), ("low", fixed_probs)]
    for _ in range(12):
        word_freq = _random_word_freq(rng, "abc")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            merges = train_bpe(word_freq, rng.randint(2, 8))
        vocab = ["a", "b", "c", END_OF_WORD] + [a + b for a, b in merges]
        probs = {token: -round(rng.uniform(0.5, 6.0), 3) for token in vocab}
        cases.append(("".join(rng.choice("abc") for _ in range(rng.randint(1, 8))), probs))
    return cases


def check_viterbi(fn: Callable[[str, dict[str, float]], list[str]]) -> None:
    """``fn(word, logprobs) -> pieces``: the most probable segmentation of
    ``word + '</w>'`` under a unigram model, as ``bpe_lab.variants.subword.viterbi``."""
    from bpe_lab.variants.unigram import viterbi

    cases = _unigram_cases(_rng())
    for word, logprobs in cases:
        expected, best = viterbi(word, logprobs)
        got = _call(fn, "viterbi", word, dict(logprobs))
        if got != expected:
            hint = ""
            if isinstance(got, list) and all(p in logprobs for p in got) and "".join(got) == word + END_OF_WORD:
                hint = (
                    f": yours has log-probability {sum(logprobs[p] for p in got):.3f}, the best has {best:.3f}: "
                    "try every cut position (dynamic programming), not a greedy choice"
                )
            _fail(f"viterbi({word!r}, {_short(logprobs, 80)})", f"expected {expected}, got {_short(got)}{hint}")
    _passed("viterbi", len(cases))


def check_sp_decode(fn: Callable[[list[str]], str]) -> None:
    """``fn(symbols) -> text``: SentencePiece-style decoding, exact for any
    spacing, as ``bpe_lab.variants.subword.sp_decode``."""
    from bpe_lab.core.pretokenize import word_frequencies
    from bpe_lab.variants.sentencepiece import sp_decode, sp_encode, sp_words

    texts = ["Hello world", "Hello  world", " leading space", "two\nlines\tand a tab", "trailing  ", "a"]
    merges = train_bpe(word_frequencies(" ".join(texts), split=sp_words), 10, end_of_word=None)
    hint = ": every '▁' is a space; drop only the one space put in front of the text"
    _check_decoder(fn, "sp_decode", [sp_encode(text, merges) for text in texts], sp_decode, hint)
