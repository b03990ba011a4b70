"""Chapter 08's checks: safe chunk boundaries, one chunk's pre-token counts, merging them, encoding a stream.

What this adds to ``runner``: the references of the counting pipeline that
Stanford CS336's assignment 1 has learners write, and hints that recompute
the usual mistakes to recognise them:

- ``chunk_boundaries`` cuts ``data`` into about ``num_chunks`` pieces, only
  where a special token starts (CS336's ``find_chunk_boundaries``, searching
  the whole rest of the data, so that a token crossing a read window is not
  missed). It is *not* the package's ``bytelevel.train.chunk_bounds``, whose
  contract differs: that one aims at a chunk size, also cuts at safe spaces,
  and reads a file in windows. ``token_start_after`` is its rule for one
  guess, notebook 08's "your turn" (``check_next_token_start``);
- ``chunk_counts`` counts the GPT-2 pre-tokens of one chunk, special tokens
  cut out first and never counted;
- ``merged_counts`` adds the counts of all chunks, changing none of them;
- ``stream_ids`` encodes a file read a block at a time, yielding the ids of
  what more text cannot change (notebook 08's ``encode_iterable``, smaller:
  GPT-2's pattern, no special tokens). ``MeteredText`` is the file its check
  and the grader's hidden calls hand the learner's function: it records the
  largest read and the most bytes read but not yet given back as ids. The
  grader judges what the call sends back in its own process: the ids against
  ``Tokenizer.encode`` of the whole text, the figures against its own bounds
  (the block size, and ``held_limit``, computed in the grader). The ids
  cannot be forged more cheaply than computed (``tokenizer.encode(f.read())``
  is allowed, and right). The two figures are measured in the kernel, so
  they remain the kernel's word: they are read-only properties, but a
  submission that patches ``MeteredText`` (or its private counters) can
  report a bounded memory it did not keep. So the grader's last generated
  case, ``MeteredText.held_by(encode_stream, 4096)`` (which counts the same way
  at home), is decided by what the grader measures itself: the kernel's
  resident memory while the learner's function streams a text of some
  megabytes from a file (``run.measure``, ``cases.scale``).

Counting chunk by chunk and adding the counts gives the whole text's counts
exactly when no cut splits a pre-token or a special token:

>>> data = "low lower lowest<|endoftext|>low".encode()
>>> chunk_boundaries(data, 2, b"<|endoftext|>")
[0, 16, 32]
>>> parts = [data[a:b].decode() for a, b in zip([0, 16], [16, 32])]
>>> merged_counts([chunk_counts(p, ["<|endoftext|>"]) for p in parts]) == chunk_counts(data.decode(), ["<|endoftext|>"])
True
"""

from __future__ import annotations

import functools
import random
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from bpe_lab.core.pretokenize import gpt2_pretokenize, split_special
from bpe_lab.grading.check.runner import CheckFailed, call, compare, fail, passed, results, rng, run_cases, short

if TYPE_CHECKING:
    from bpe_lab.bytelevel.tokenizer import Tokenizer

__all__ = [
    "BLOCK",
    "LONG_TEXT",
    "long_text",
    "chunk_boundaries",
    "chunk_counts",
    "merged_counts",
    "check_find_chunk_boundaries",
    "check_count_chunk",
    "check_merge_counts",
    "MeteredText",
    "stream_ids",
    "stream_results",
    "streamed",
    "held_limit",
    "stream_tokenizer",
    "check_encode_stream",
    "token_start_after",
    "check_next_token_start",
]

ENDOFTEXT = "<|endoftext|>"
_EOT = ENDOFTEXT.encode()


# ------------------------------------------------------------ the references


def chunk_boundaries(data: bytes, num_chunks: int, special_token: bytes) -> list[int]:
    """``[0, ..., len(data)]``: boundary i (0 < i < num_chunks) is the start of
    the first ``special_token`` at or after the guess ``i * (len(data) //
    num_chunks)``, or ``len(data)`` when none follows; sorted, without
    repeats (several guesses may find the same token, so there can be fewer
    chunks than asked for). O(len(data)) in all: each search starts at its guess."""
    size = len(data) // num_chunks
    cuts = [0, len(data)]
    for i in range(1, num_chunks):
        found = data.find(special_token, i * size)
        cuts.append(len(data) if found == -1 else found)
    return sorted(set(cuts))


def chunk_counts(text: str, special_tokens: list[str]) -> Counter[str]:
    """How often each GPT-2 pre-token occurs in ``text``; the special tokens
    are cut out first (``split_special``) and are not counted."""
    counts: Counter[str] = Counter()
    for piece, special in split_special(text, special_tokens):
        if not special:
            counts.update(gpt2_pretokenize(piece))
    return counts


def merged_counts(counts: list[Counter[str]]) -> Counter[str]:
    """The sum of the chunks' counts, in a new Counter."""
    total: Counter[str] = Counter()
    for part in counts:
        total.update(part)
    return total


# ------------------------------------------------ task 1: chunk boundaries


def _docs() -> bytes:
    from bpe_lab.core.corpora import python_docs_topics

    return ENDOFTEXT.join(python_docs_topics().values()).encode("utf-8")


#: (data, num_chunks, special token): where the classic mistakes show
_BOUNDARY_CASES: list[tuple[bytes, int, bytes]] = [
    (b"low lower<|endoftext|>lowest<|endoftext|>low", 3, _EOT),  # guess 14 is inside a token: the next one
    (b"ab<|>cd<|>ef", 2, b"<|>"),  # the guess (6) is just before a token
    (b"0123456<|>9<|>", 2, b"<|>"),  # a token starts exactly at the guess (7)
    (b"one<|endoftext|>two<|endoftext|>three", 8, _EOT),  # many guesses find the same token
    (b"no special token here at all", 3, _EOT),  # nothing to cut at: one chunk
    (b"<|endoftext|>starts with one", 4, _EOT),
    (b"", 3, _EOT),
    (b"short", 1, _EOT),
    (b"a<|>b", 10, b"<|>"),  # more chunks than bytes
    ("今天<|endoftext|>天气<|endoftext|>很好".encode(), 3, _EOT),
    (b"a" * 8240 + _EOT + b"b" * 47, 2, _EOT),  # the token crosses the guess + 4096 read window
    (b"x<|a|>y<|b|>z" * 3, 4, b"<|b|>"),  # only the given special token counts
]


def _boundary_cases(generator: random.Random) -> list[tuple[bytes, int, bytes]]:
    docs = _docs()
    cases = list(_BOUNDARY_CASES)
    for _ in range(10):
        start = generator.randrange(len(docs) - 6000)
        cases.append((docs[start : start + generator.randint(200, 6000)], generator.randint(2, 12), _EOT))
    return cases


def check_find_chunk_boundaries(fn: Callable[[bytes, int, bytes], list[int]]) -> None:
    """``fn(data, num_chunks, special_token) -> boundaries`` equal to ``chunk_boundaries``."""
    verdict = compare(chunk_boundaries, _boundary_hint, expected_shown=lambda e: short(e, 100), got_limit=100)
    run_cases(
        "find_chunk_boundaries",
        fn,
        _boundary_cases(rng()),
        verdict,
        shown=lambda data, n, token: f"{short(data, 60)}, {n}, {token!r}",
    )


def _occurrences(data: bytes, token: bytes) -> list[int]:
    starts, at = [], data.find(token)
    while at != -1:
        starts.append(at)
        at = data.find(token, at + 1)
    return starts


def _variants(data: bytes, n: int, token: bytes) -> dict[str, list[int]]:
    """The boundaries the usual mistakes give, each with its hint."""
    size = len(data) // n
    guesses = [i * size for i in range(1, n)]

    def finish(cuts: list[int]) -> list[int]:
        return sorted(set([0, *cuts, len(data)]))

    def after(g: int) -> int:
        found = data.find(token, g)
        return len(data) if found == -1 else min(found + len(token), len(data))

    def backwards(g: int) -> int:
        return max(data.rfind(token, 0, g + len(token) - 1), 0)

    def skipping(g: int) -> int:
        found = data.find(token, g + 1)
        return len(data) if found == -1 else found

    return {
        "cut only where a special token starts: search forward from each guess with data.find(special_token, guess); "
        "a cut at the guess itself can split a word or a special token in two": finish(guesses),
        "cut at the start of the special token, not after it: the token then begins the next chunk, "
        "where the counting cuts it out": finish([after(g) for g in guesses]),
        "search forward from each guess (data.find(special_token, guess)), not backwards": finish(
            [backwards(g) for g in guesses]
        ),
        "a special token that starts exactly at the guess counts: search from the guess itself, not guess + 1": finish(
            [skipping(g) for g in guesses]
        ),
    }


def _boundary_hint(expected: list[int], got: object, data: bytes, n: int, token: bytes) -> str:
    if not isinstance(got, list) or not all(isinstance(b, int) and not isinstance(b, bool) for b in got):
        return ": return a list of int byte offsets"
    if -1 in got:
        return ": data.find returns -1 when no special token follows the guess; the boundary is then len(data)"
    if len(set(got)) < len(got):
        return (
            ": remove repeated boundaries (several guesses can find the same special token, "
            "and a repeat is an empty chunk): sorted(set(boundaries))"
        )
    if got != sorted(got):
        return ": return the boundaries sorted"
    if not got or got[0] != 0 or got[-1] != len(data):
        return f": the first boundary is 0 and the last len(data) = {len(data)}, so that the chunks cover all the data"
    for hint, boundaries in _variants(data, n, token).items():
        if got == boundaries and not set(got) <= set(expected):  # a variant explains a wrong cut, not a missing one
            return f": {hint}"
    return _where(expected, got, data, n, token)


def _where(expected: list[int], got: list[int], data: bytes, n: int, token: bytes) -> str:
    """What is wrong with the first boundary that should not be there, or the first one missing."""
    starts = _occurrences(data, token)
    for cut in got:
        if cut in expected:
            continue
        around = f"{data[max(cut - 8, 0) : cut]!r} | {data[cut : cut + 8]!r}"
        inside = next((s for s in starts if s < cut < s + len(token)), None)
        if inside is not None:
            return (
                f": byte {cut} is inside the special token that starts at byte {inside} ({around}); "
                "each chunk would hold half of it, and its halves would be counted as text"
            )
        if cut not in starts:
            return (
                f": byte {cut} is not where a special token starts ({around}); a cut there can split a word "
                "whose halves are then counted as two pre-tokens"
            )
        break
    size = len(data) // n
    missing = next(e for e in expected if e not in got)
    guess = max(i * size for i in range(n) if i * size <= missing)
    return (
        f": you skipped the special token at byte {missing}, the first at or after the guess {guess} "
        f"(i * (len(data) // num_chunks)); if you read the data in windows, a token can cross the end of one"
    )


# ------------------------------------------- notebook 08's "your turn": one cut moved forward


def token_start_after(data: bytes, guess: int, special_token: bytes) -> int:
    """The reference for ``next_token_start``: where the first
    ``special_token`` at or after ``guess`` starts, ``len(data)`` when none
    does (``chunk_boundaries``' rule for one guess)."""
    found = data.find(special_token, guess)
    return len(data) if found == -1 else found


#: (data, guess, special token), worked by hand: the guess inside a token (the next one counts), a token
#: exactly at the guess, none after it, one far beyond a 4096-byte read window, another special token first
NEXT_START_CASES: list[tuple[bytes, int, bytes]] = [
    (b"low lower<|endoftext|>lowest<|endoftext|>low", 4, _EOT),  # -> 9
    (b"low lower<|endoftext|>lowest<|endoftext|>low", 14, _EOT),  # inside the first token -> 28
    (b"0123456<|>9<|>", 7, b"<|>"),  # exactly at the guess -> 7
    (b"no special token here at all", 5, _EOT),  # none -> 28
    (b"<|endoftext|>starts with one", 0, _EOT),  # -> 0
    (b"a" * 8240 + _EOT + b"b" * 47, 4000, _EOT),  # beyond guess + 4096 -> 8240
    (b"x<|a|>y<|b|>z" * 3, 1, b"<|b|>"),  # only the given token -> 7
]


def _next_start_hint(expected: int, got: object, data: bytes, guess: int, token: bytes) -> str:
    if not isinstance(got, int) or isinstance(got, bool):
        return ": return one int, a byte offset into data"
    if got == -1:
        return ": data.find returns -1 when no special token follows the guess; return len(data) then"
    if got == guess:
        return ": move the guess forward to where a special token starts: data.find(special_token, guess)"
    if got == expected + len(token):
        return ": return where the special token starts, not where it ends: it then begins the next chunk"
    if got < guess:
        return ": search forward from the guess, not backwards"
    if expected == guess:
        return ": a special token that starts exactly at the guess counts: search from guess itself, not guess + 1"
    if expected - guess > 4096:
        return ": search all the rest of data (data.find(special_token, guess)), not a window after the guess"
    return ": the first special token at or after the guess starts there"


def check_next_token_start(fn: Callable[[bytes, int, bytes], int]) -> None:
    """``fn(data, guess, special_token) -> offset`` equal to ``token_start_after``."""
    generator, docs = rng(), _docs()
    cases = list(NEXT_START_CASES)
    for _ in range(12):
        start = generator.randrange(len(docs) - 6000)
        piece = docs[start : start + generator.randint(200, 6000)]
        cases.append((piece, generator.randrange(len(piece)), _EOT))
    verdict = compare(token_start_after, _next_start_hint, expected_shown=repr)
    run_cases(
        "next_token_start",
        fn,
        cases,
        verdict,
        shown=lambda data, guess, token: f"{short(data, 60)}, {guess}, {token!r}",
    )


# ------------------------------------------------ task 2: one chunk's counts


_COUNT_CASES: list[tuple[str, list[str]]] = [
    ("low lower lowest", [ENDOFTEXT]),
    ("the end<|endoftext|>The start", [ENDOFTEXT]),
    ("end<|endoftext|>start", [ENDOFTEXT]),
    ("<|endoftext|><|endoftext|>", [ENDOFTEXT]),
    ("", [ENDOFTEXT]),
    ("don't stop\n\n  indented", []),
    ("a<|endoftext|>b<|pad|>c<|pad|>", [ENDOFTEXT, "<|pad|>"]),
    ("naïve café, 今天天气很好 <|endoftext|> 🙂🙂", [ENDOFTEXT]),
    ("same same same<|endoftext|>same", [ENDOFTEXT]),
]


def _count_cases(generator: random.Random) -> list[tuple[str, list[str]]]:
    docs = _docs().decode("utf-8")
    starts = [generator.randrange(len(docs) - 3000) for _ in range(8)]
    return _COUNT_CASES + [(docs[s : s + generator.randint(100, 3000)], [ENDOFTEXT]) for s in starts]


def check_count_chunk(fn: Callable[[str, list[str]], Mapping[str, int]]) -> None:
    """``fn(text, special_tokens) -> {pre-token: count}`` equal to ``chunk_counts``."""
    verdict = compare(
        chunk_counts,
        _count_hint,
        same=lambda got, expected: isinstance(got, Mapping) and dict(got) == dict(expected),
        expected_shown=lambda e: short(dict(e), 100),
        got_limit=100,
    )
    run_cases("count_chunk", fn, _count_cases(rng()), verdict, shown=lambda text, specials: f"{text!r}, {specials!r}")


def _count_hint(expected: Counter[str], got: object, text: str, special_tokens: list[str]) -> str:
    if not isinstance(got, Mapping):
        return ": return a Counter (or dict) {pre-token: count}"
    got = dict(got)
    if got and all(isinstance(k, bytes) for k in got):
        return (
            ": the keys are the pre-tokens as strings, as gpt2_pretokenize gives them (the trainer encodes them later)"
        )
    if got == Counter(gpt2_pretokenize(text)):
        return (
            ": cut the special tokens out first (split_special): pre-tokenized, '<|endoftext|>' becomes "
            "'<|', 'endoftext', '|>', which would be counted and merged like text"
        )
    specials = {t: n for t, n in got.items() if t in special_tokens}
    if specials and {t: n for t, n in got.items() if t not in special_tokens} == expected:
        return (
            ": leave the special tokens themselves out of the counts: each is one id of its own, "
            "never merged, so the trainer must not see it as a pre-token"
        )
    deleted = text
    for token in special_tokens:
        deleted = deleted.replace(token, "")
    if got == Counter(gpt2_pretokenize(deleted)):
        return (
            ": deleting a special token glues its neighbours together ('end<|endoftext|>start' gives 'endstart'): "
            "split the text at it (split_special) and pre-tokenize each piece on its own"
        )
    if got == Counter(text.split()) or got == Counter(deleted.split()):
        return ": pre-tokenize with gpt2_pretokenize, not str.split: GPT-2's pattern keeps the space before a word"
    return ": cut out the special tokens with split_special, then count gpt2_pretokenize of each other piece"


# ------------------------------------------------ task 3: merging the counts


def _merge_cases(generator: random.Random) -> list[list[Counter[str]]]:
    docs = _docs().decode("utf-8")
    cases: list[list[Counter[str]]] = [
        [Counter({"low": 2, " lower": 1}), Counter({"low": 3, " newest": 6})],
        [Counter({"a": 1})],
        [],
        [Counter(), Counter({" the": 4}), Counter()],
        [Counter({"x": 1}), Counter({"x": 1}), Counter({"x": 1}), Counter({"y": 2})],
    ]
    for _ in range(4):
        start = generator.randrange(len(docs) - 4000)
        text = docs[start : start + 4000]
        cuts = sorted(generator.sample(range(1, len(text)), generator.randint(1, 6)))
        cases.append([chunk_counts(text[a:b], [ENDOFTEXT]) for a, b in zip([0, *cuts], [*cuts, len(text)])])
    return cases


def check_merge_counts(fn: Callable[[list[Counter[str]]], Mapping[str, int]]) -> None:
    """``fn(list_of_counters) -> Counter`` equal to ``merged_counts``, leaving
    the Counters it is given as they were."""
    cases = _merge_cases(rng())
    for counts in cases:
        given = [Counter(c) for c in counts]
        shown = f"merge_counts({short(counts, 100)})"
        try:
            got = call(fn, "merge_counts", given)
        except CheckFailed as err:
            if not counts and "raised" in str(err):
                fail(shown, f"{err}: a list of no Counters (an empty file) gives an empty Counter()")
            raise
        message = _merge_verdict(got, counts)
        if message is None and given != counts:
            message = (
                "you changed the Counters you were given (the first one now holds the total): another part of "
                "the program may still use them. Start a new one, total = Counter(), and add each to it"
            )
        if message is not None:
            fail(shown, message)
    passed("merge_counts", len(cases))


def _merge_verdict(got: Any, counts: list[Counter[str]]) -> str | None:
    expected = merged_counts(counts)
    if not isinstance(got, Mapping):
        return f"expected {short(dict(expected), 100)}, got {short(got, 100)}: return a Counter of the totals"
    if dict(got) == dict(expected):
        return None
    overwritten: dict[str, int] = {}
    for part in counts:
        overwritten.update(part)
    hint = ""
    if dict(got) == overwritten:
        hint = ": dict.update (and {**a, **b}) replaces a count with the later one; add them (Counter.update adds)"
    return f"expected {short(dict(expected), 100)}, got {short(dict(got), 100)}{hint}"


# ------------------------------------------------ task 4: encoding a file in bounded memory

#: How many characters past a pre-token's start GPT-2's pattern may look to
#: decide it (``'ll``, ``'re``, ``'ve``): ``bytelevel.streaming.REGEX_REACH``.
REACH = 3


class MeteredText:
    """A text file open for reading (``read(size)``, ``readline``, iteration)
    that records how it is read: ``largest_read``, the most characters one
    call handed over, and ``most_held``, the most bytes read but not yet given
    back as ids (``drain`` counts the ids as they come), seen at each read.

    The two figures are read-only, so that a function cannot simply reset
    them (``f.most_held = 0`` raises); but the object runs in the learner's
    kernel, so what it reports is the kernel's word all the same (see the
    module's docstring). The grader gets plain numbers and judges them itself.

    >>> f = MeteredText("low lower")
    >>> f.read(4), f.read(), f.largest_read, f.most_held
    ('low ', 'lower', 5, 4)
    """

    def __init__(self, text: str) -> None:
        self._text = text
        self._at = 0
        self._read = 0  # bytes handed over
        self._given = 0  # bytes the drained ids stand for
        self._largest = 0
        self._held = 0

    @property
    def largest_read(self) -> int:
        """The most characters one read handed over."""
        return self._largest

    @property
    def most_held(self) -> int:
        """The most bytes read but not yet given back as ids, at any read (and at the end of ``drain``)."""
        return self._held

    def _hand(self, end: int) -> str:
        self._held = max(self._held, self._read - self._given)
        piece = self._text[self._at : max(end, self._at)]
        self._at += len(piece)
        self._read += len(piece.encode("utf-8"))
        self._largest = max(self._largest, len(piece))
        return piece

    def read(self, size: int | None = -1) -> str:
        """At most ``size`` characters (all the rest when ``size`` is negative or None)."""
        whole = size is None or size < 0
        return self._hand(len(self._text) if whole else self._at + int(size or 0))

    def readline(self, size: int | None = -1) -> str:
        """The next line, its ``\\n`` kept (at most ``size`` characters)."""
        end = self._text.find("\n", self._at)
        end = len(self._text) if end == -1 else end + 1
        return self._hand(end if size is None or size < 0 else min(end, self._at + size))

    def __iter__(self) -> MeteredText:
        return self

    def __next__(self) -> str:
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    def drain(self, tokenizer: Tokenizer, ids: Iterable[int]) -> list[int]:
        """The ids, taken one at a time, each counted as given back."""
        out = []
        for i in ids:
            out.append(i)
            self._given += len(tokenizer.vocab.get(i, b"")) if isinstance(i, int) else 0
        self._held = max(self._held, self._read - self._given)
        return out

    @staticmethod
    def held_by(fn: Callable[[Any, Any, int], Iterable[int]], block_chars: int = 4096) -> str:
        """``"bounded"`` when ``fn(tokenizer, f, block_chars)`` encodes a long
        text (``LONG_TEXT`` copies of ``long_text``'s unit) reading at most
        ``block_chars`` characters at once and holding at most two blocks' bytes
        (4 a character) read but not yet given back as ids: a block and
        what is left of the one before (the grader's generated cases call
        this; it calls no answer of the task, so the guard lets it run).

        At home (and under nbgrader) the figure is this object's own count.
        A grading kernel's count is the kernel's word, so there the grader
        does not believe it: it samples the kernel's resident memory itself
        while the learner's function streams a text of some megabytes from a
        file (``run.measure``, ``cases.scale``), and this call stands for that
        measured verdict."""
        from bpe_lab.bytelevel.tokenizer import Tokenizer

        tokenizer, text = Tokenizer.byte_level(), long_text(LONG_TEXT)
        f = MeteredText(text)
        if not (isinstance(block_chars, int) and block_chars > 0):
            raise ValueError(f"held_by: block_chars must be a positive int, not {block_chars!r}")
        ids = f.drain(tokenizer, fn(tokenizer, f, block_chars))
        if ids != tokenizer.encode(text):
            return "wrong ids"
        if f.largest_read > block_chars:
            return f"read {f.largest_read} characters at once (at most {block_chars})"
        limit = 2 * 4 * block_chars
        return "bounded" if f.most_held <= limit else f"held {f.most_held} bytes (at most {limit})"


#: The block size the grader's measured case reads with (``MeteredText.held_by``'s default).
BLOCK = 4096
#: How many copies of ``long_text``'s unit ``MeteredText.held_by`` streams at home.
LONG_TEXT = 30


def long_text(copies: int) -> str:
    """``copies`` copies of 4,000 characters of the Python docs, a smiley and
    a newline (the smiley lies outside the Basic Multilingual Plane: Python
    keeps such a text at 4 bytes a character, so a copy of it held shows in
    memory).

    >>> len(long_text(2)), long_text(1)[-3:-1]
    (8006, ' 🙂')
    """
    if not (isinstance(copies, int) and copies >= 0):
        raise ValueError(f"long_text: copies must be an int of 0 or more, not {copies!r}")
    unit = _docs().decode("utf-8")[:4000] + " \U0001f642\n"
    return unit * copies


def stream_ids(tokenizer: Tokenizer, f: Any, block_chars: int) -> Iterator[int]:
    """The ids of ``tokenizer.encode(f.read())``, reading ``f`` ``block_chars``
    characters at a time and yielding each block's settled part before the
    next read: all but the last pre-token and any pre-token that starts in
    the last ``REACH`` characters (those may still change once more text
    comes), and never a part that ends in white space. That part is encoded
    on its own, so it is cut again without the text after it, and GPT-2's
    ``\\s+(?!\\S)`` cuts a run of white space at the end of a text otherwise
    than before a letter (``"\\n\\n"`` alone is one pre-token, before
    ``"except"`` two); a part that ends in anything else is cut on its own
    exactly as in the whole text (the pattern looks ahead only there, and
    never behind). A smaller ``encode_iterable``: GPT-2's pattern, no
    special tokens.

    >>> from bpe_lab.bytelevel.tokenizer import Tokenizer
    >>> list(stream_ids(Tokenizer.byte_level(), MeteredText("I'll go"), 2)) == list(b"I'll go")
    True
    """
    carry = ""
    while block := f.read(block_chars):
        text = carry + block
        cut = end = 0  # cut: where the settled part ends, after a pre-token that is not white space
        for piece in gpt2_pretokenize(text)[:-1]:
            if end >= len(text) - REACH:
                break
            end += len(piece)
            if not piece.isspace():
                cut = end
        yield from tokenizer.encode(text[:cut])
        carry = text[cut:]
    yield from tokenizer.encode(carry)


def streamed(tokenizer: Tokenizer, text: str, block_chars: int) -> tuple[list[int], int, int]:
    """What ``stream_ids`` does with ``text``: its ids, its largest read and
    the most bytes it held (the bound a learner's function is held to)."""
    f = MeteredText(text)
    ids = f.drain(tokenizer, stream_ids(tokenizer, f, block_chars))
    return ids, f.largest_read, f.most_held


def held_limit(tokenizer: Tokenizer, text: str, block_chars: int) -> int:
    """The most bytes a learner's function may hold, read but not yet given
    back as ids: what ``stream_ids`` holds, and room for one block more (4
    bytes a character at most), so that another safe rule passes too."""
    return streamed(tokenizer, text, block_chars)[2] + 4 * block_chars


@functools.cache
def stream_tokenizer() -> Tokenizer:
    """A small tokenizer (400 ids, no special tokens) trained on a slice of the
    docs, on contractions, so that ``'ll`` is a token: cut as ``'l``, ``l``
    at a block's end it comes out as other ids, and on blank lines before an
    indented word, so that ``"\\n\\n"`` is one: settled on its own before
    ``"except"``, it comes out as one id instead of two."""
    import tempfile
    from pathlib import Path

    from bpe_lab.bytelevel.tokenizer import Tokenizer
    from bpe_lab.bytelevel.train import train_bytelevel

    with tempfile.TemporaryDirectory(prefix="bpe-lab-") as folder:
        path = Path(folder) / "docs.txt"
        contractions = " I'll you'll we're they've it's don't" * 100 + "\n\n x" * 1000
        path.write_text(_docs().decode("utf-8").replace(ENDOFTEXT, "\n")[:60_000] + contractions, encoding="utf-8")
        return Tokenizer(*train_bytelevel(path, 400, [], workers=1, progress=False))


_STREAM_TEXTS = [
    ("I'll say it's done, they've gone", 1),  # every contraction is cut across blocks
    ("I'll say it's done, they've gone", 2),
    ("don't stop\n\n    indented()\n\n\n", 3),  # runs of white space across blocks
    ("f(func))\n\nexcept x", 3),  # "\n\n" settled before "except" is two pre-tokens, alone one
    ("naïve café 今天 🙂 x=1", 4),
    ("a" * 300 + " b", 16),  # one pre-token longer than many blocks
    ("", 8),
    ("short", 64),
]


def _stream_cases(generator: random.Random) -> list[tuple[str, int]]:
    docs = _docs().decode("utf-8").replace(ENDOFTEXT, "\n")
    cases = list(_STREAM_TEXTS)
    for _ in range(6):
        start = generator.randrange(len(docs) - 3000)
        cases.append((docs[start : start + generator.randint(500, 3000)], generator.choice([5, 16, 64, 200])))
    return cases


def stream_results(
    fn: Callable[[Tokenizer, Any, int], Iterable[int]], tokenizer: Tokenizer, text: str, block: int
) -> tuple[list[int], int, int]:
    """What ``fn(tokenizer, f, block)`` does with ``f = MeteredText(text)``, as
    plain data (what a grading kernel sends back): the ids it yields, its
    largest read and the most bytes it held. TypeError when ``fn`` gives
    something that is not ids."""
    f = MeteredText(text)
    got = fn(tokenizer, f, block)
    if isinstance(got, (str, bytes)) or not isinstance(got, Iterable):
        raise TypeError(f"return (or yield) the ids, got {short(got, 60)}")
    return f.drain(tokenizer, got), f.largest_read, f.most_held


def check_encode_stream(fn: Callable[[Tokenizer, Any, int], Iterable[int]]) -> None:
    """``fn(tokenizer, f, block_chars)`` yields ``tokenizer.encode`` of the
    whole of ``f``, reading at most ``block_chars`` characters at a time and
    holding no more than ``held_limit`` bytes it has not given back as ids
    (``stream_results``: in a grading kernel only its figures are the
    kernel's, and the grader measures the memory of a case of its own)."""
    tokenizer = stream_tokenizer()
    docs = _docs().decode("utf-8").replace(ENDOFTEXT, "\n")[:20_000]
    cases = [*_stream_cases(rng()), (docs, 64)]
    held = 0
    for text, block in cases:
        shown = f"encode_stream(tokenizer, {short(text, 50)}, {block})"
        got = call(results(stream_results, fn, shown), "encode_stream", tokenizer, text, block)
        if not (isinstance(got, tuple) and len(got) == 3 and isinstance(got[0], list)):
            fail(shown, f"not the ids and two figures came back from stream_results, but {short(got, 40)}")
        ids, largest, held = got
        message = _stream_verdict(tokenizer, text, block, ids, largest, held)
        if message is not None:
            fail(shown, message)
    passed("encode_stream", len(cases))
    print(
        f"  on {len(docs):,} characters of the docs ({len(docs.encode()):,} bytes) in blocks of 64, yours held at "
        f"most {held} bytes not yet encoded at once (stream_ids: {streamed(tokenizer, docs, 64)[2]})"
    )


def _stream_verdict(
    tokenizer: Tokenizer, text: str, block: int, ids: list[int], largest_read: int, most_held: int
) -> str | None:
    expected = tokenizer.encode(text)
    if largest_read > block:
        return (
            f"one read handed over {largest_read} characters: read at most block_chars ({block}) at a time, "
            "f.read(block_chars), never the whole file (nor a line, which can be as long as the file)"
        )
    if ids != expected:
        at = next((k for k, (a, b) in enumerate(zip(ids, expected)) if a != b), min(len(ids), len(expected)))
        where = len(b"".join(tokenizer.vocab[i] for i in expected[:at]).decode("utf-8", errors="replace"))
        return (
            f"the ids differ from tokenizer.encode(text) at id {at} (near {short(text[where : where + 12])}): a "
            "pre-token cut between two blocks is encoded in two halves; hold back the last pre-token, and any that "
            f"starts in the last {REACH} characters ('ll needs to see three), and encode them with the next block; "
            "and never end the part you encode in white space: encoded alone, '\\n\\n' is one pre-token, but "
            "two before anything but white space"
        )
    limit = held_limit(tokenizer, text, block)
    if most_held > limit:
        return (
            f"the ids are right, but at one read you held {most_held} bytes you had read and not yet given back "
            f"as ids (at most {limit} here): yield the ids of each block's settled part before reading the next "
            "block (a generator: yield from tokenizer.encode(...)), so that memory stays bounded whatever the file"
        )
    return None
