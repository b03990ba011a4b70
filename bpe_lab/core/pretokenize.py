"""Pre-tokenization: cut text into the pieces BPE may merge *inside*.

BPE never merges across a pre-token boundary. The textbook path splits on
white space and folds the words into a word -> frequency table (the input of
``train_bpe``). GPT-2 instead cuts with a regular expression that keeps a
leading space on each word and separates letters, digits and punctuation.
Special tokens such as ``<|endoftext|>`` are cut out first, so they never take
part in a merge.

>>> word_frequencies("low low lower")
{'low': 2, 'lower': 1}
>>> gpt2_pretokenize("Hello world, it's 2024!")
['Hello', ' world', ',', ' it', "'s", ' 2024', '!']
>>> split_special("a<|endoftext|>b", ["<|endoftext|>"])
[('a', False), ('<|endoftext|>', True), ('b', False)]
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

import regex

__all__ = [
    "GPT2_PATTERN",
    "GPT2_FAST_PATTERN",
    "GPT2_ASCII_PATTERN",
    "GPT2_SAFE_CUT",
    "ASCII_STRETCH",
    "split_words",
    "word_frequencies",
    "gpt2_pretokenize",
    "FastSplit",
    "special_token_pattern",
    "split_special",
]

#: GPT-2's pre-tokenization pattern, branch by branch:
#: English contractions; an optional space then letters; an optional space then
#: digits; an optional space then other symbols; white space not followed by
#: a non-space (so the last space before a word stays with the word); any
#: remaining white space.
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

#: The same splits as GPT2_PATTERN, found faster (measured on the standard
#: library's source; ``make bench``'s pre-tokenizer rows time it beside
#: GPT2_PATTERN and the other patterns). The regex engine tries the branches in order
#: at every position, so the one that matches most often (words) goes first.
#: Reordering is safe because, after the optional space, the branches start
#: with disjoint characters; the one exception is the apostrophe, which the
#: symbols branch also matches, so the contractions stay before it. The
#: contractions share their ``'``, and the last ``\s+`` becomes ``\s``: it is
#: only reached when the run of white space is one character long (a longer
#: run always has a prefix followed by white space). A test checks the
#: splits against GPT2_PATTERN and against tiktoken's version of it.
GPT2_FAST_PATTERN = r""" ?\p{L}+|'(?:[sdmt]|ll|ve|re)| ?[^\s\p{L}\p{N}]+| ?\p{N}+|\s+(?!\S)|\s"""

#: GPT2_FAST_PATTERN for text that is all ASCII, where ``\p{L}`` is exactly
#: ``[A-Za-z]``, ``\p{N}`` is ``[0-9]`` and ``\s`` (with ``re.ASCII``) is the
#: same six characters as in ``regex``. Without the Unicode properties, Python's
#: own ``re`` engine can run it, and does so faster than ``regex`` runs the
#: full pattern (the same rows time it); most text (and all of the benchmark's source code)
#: is ASCII. A test checks its splits against GPT2_PATTERN on ASCII text.
GPT2_ASCII_PATTERN = r""" ?[A-Za-z]+|'(?:[sdmt]|ll|ve|re)| ?[^\sA-Za-z0-9]+| ?[0-9]+|\s+(?!\S)|\s"""

#: Where GPT-2's pattern may cut a text without changing its pieces: before
#: a space or a new line between two printable ASCII characters (the proof:
#: ``core/patterns.py``, whose ``SAFE_CUTS`` names it for "gpt2" and "r50k").
GPT2_SAFE_CUT = r"(?<=[!-~])(?=[ \n][!-~])"
_NON_ASCII_RE = re.compile(r"[^\x00-\x7f]+")

#: ``gpt2_pretokenize`` gives a stretch of ASCII inside a text that is not all
#: ASCII to the fast engine only when it is at least this long: below it, the
#: calls that cut it out cost more than ``regex`` takes to run over it.
ASCII_STRETCH = 256


def _require_text(text: object, name: str = "text") -> str:
    if not isinstance(text, str):
        raise TypeError(f"{name} must be a str, got {type(text).__name__}")
    return text


def split_words(text: str) -> list[str]:
    """The textbook pre-tokenizer: words are runs of non-white-space, as
    ``str.split()`` sees it (also tabs, U+00A0 no-break space and U+3000
    ideographic space); subword-nmt's scripts split at ASCII spaces only, so
    ``word_frequencies`` and its ``learn_bpe`` count other words from such text."""
    return _require_text(text).split()


def word_frequencies(text: str | Iterable[str], *, split: Callable[[str], list[str]] = split_words) -> dict[str, int]:
    """Fold text (or an iterable of lines) into ``{word: count}``, words in
    order of first appearance, so the first-seen tie-break is reproducible.

    ``split`` cuts a line into words: white space by default (the textbook
    pre-tokenizer); notebook 00 splits punctuation off too
    (``granularity.words``) and notebook 06 cuts SentencePiece pieces
    (``sentencepiece.sp_words``).

    >>> word_frequencies("low low lower")
    {'low': 2, 'lower': 1}
    >>> word_frequencies(["a b.", "a"], split=lambda line: line.replace(".", " .").split())
    {'a': 2, 'b': 1, '.': 1}
    """
    lines = [text] if isinstance(text, str) else text
    counts: dict[str, int] = {}
    for line in lines:
        for word in split(_require_text(line, "each line")):
            counts[word] = counts.get(word, 0) + 1
    return counts


class FastSplit:
    """Cut text with a pattern, exactly as ``regex`` would, only faster.

    Three forms of one pattern: ``ascii_pattern``, equal to ``pattern`` on
    ASCII text and written without Unicode properties or possessive
    quantifiers, so that Python's own ``re`` runs it (faster than ``regex``
    runs the full pattern, and ``re`` has no possessive quantifiers before
    Python 3.11); ``pattern``, for text that is not ASCII; and ``safe_cut``,
    where a text may be cut without changing its pieces
    (``core.patterns.SAFE_CUTS``).

    ASCII text goes to ``re`` whole. A text with a few non-ASCII characters
    (a name with an accent in a source file) is not slowed down as a whole:
    only a window around each run of them, from the safe cut before it to
    the safe cut after it, goes to ``regex``, and the long ASCII stretches
    between the windows go to ``re``. The pieces are those of the whole text,
    because no piece crosses a safe cut. ``gpt2_pretokenize`` is GPT-2's;
    ``core.patterns`` makes those of cl100k, o200k and Llama 3.
    """

    __slots__ = ("ascii_pattern", "pattern", "safe_cut", "_ascii_re", "_regex", "_cut_re")

    def __init__(self, ascii_pattern: str, pattern: str, safe_cut: str) -> None:
        self.ascii_pattern, self.pattern, self.safe_cut = ascii_pattern, pattern, safe_cut
        self._ascii_re = re.compile(ascii_pattern, re.ASCII)
        self._regex = regex.compile(pattern)
        self._cut_re = re.compile(safe_cut)

    def __repr__(self) -> str:
        return f"FastSplit({self.ascii_pattern!r}, {self.pattern!r}, {self.safe_cut!r})"

    def __call__(self, text: str) -> list[str]:
        """The pieces of ``text``; joining them gives ``text`` back."""
        ascii_re = self._ascii_re
        # str.isascii() is O(1): CPython records, per string, whether it is ASCII.
        if _require_text(text).isascii():
            pieces: list[str] = ascii_re.findall(text)
            return pieces
        pieces = []
        start = 0  # text[:start] is cut; start is 0 or a safe cut
        while (found := _NON_ASCII_RE.search(text, start)) is not None:  # O(len(text)) over the whole loop
            end = found.end()  # the window takes in runs of non-ASCII with short ASCII stretches between them
            while (more := _NON_ASCII_RE.search(text, end)) is not None and more.start() - end < ASCII_STRETCH:
                end = more.end()
            window = start  # where the window starts: a safe cut
            if found.start() - start >= ASCII_STRETCH:
                window = self._extend_to_last_cut(pieces, text, start, found.start())
            cut = self._cut_re.search(text, end)
            start = len(text) if cut is None else cut.start()
            pieces += self._regex.findall(text, window, start)
        pieces += ascii_re.findall(text[start:])  # a slice of ASCII is a 1-byte string: re runs faster on it
        return pieces

    def _extend_to_last_cut(self, pieces: list[str], text: str, start: int, end: int) -> int:
        """Add the pieces of the ASCII ``text[start:end]`` (``start``: a safe cut)
        up to its last safe cut, found among the piece boundaries from the end
        (a safe cut is one: no piece crosses it); return where they stop."""
        head = self._ascii_re.findall(text[start:end])  # exact up to the last safe cut before end
        cut, kept = end, len(head)
        while kept:  # usually a step or two: a space between two words is a safe cut
            kept -= 1
            cut -= len(head[kept])
            if cut > start and self._cut_re.match(text, cut):  # the look-behind sees text[cut - 1]
                break
        else:
            cut = start
        del head[kept:]
        pieces += head
        return cut


_GPT2_SPLIT = FastSplit(GPT2_ASCII_PATTERN, GPT2_FAST_PATTERN, GPT2_SAFE_CUT)


def gpt2_pretokenize(text: str) -> list[str]:
    """Cut ``text`` with GPT-2's pattern; joining the pieces gives ``text`` back.

    A ``FastSplit``: ASCII text goes to Python's ``re`` with
    ``GPT2_ASCII_PATTERN``, about twice as fast as ``regex`` with the full
    pattern (``make bench``'s pre-tokenizer rows), and only windows around
    the non-ASCII runs of other text go to ``regex`` (``GPT2_FAST_PATTERN``).

    >>> gpt2_pretokenize("x = 1  # café\\nok")
    ['x', ' =', ' 1', ' ', ' #', ' café', '\\n', 'ok']
    """
    return _GPT2_SPLIT(text)


def special_token_pattern(special_tokens: Iterable[str]) -> regex.Pattern | None:
    """A pattern matching any special token, longest first, so that a token
    that contains another (``<|a|><|a|>`` vs ``<|a|>``) wins where both match.
    Returns None when there are no special tokens."""
    tokens = list(special_tokens)
    for token in tokens:
        if not isinstance(token, str) or not token:
            raise ValueError(f"special tokens must be non-empty strings, got {token!r}")
    if len(set(tokens)) != len(tokens):
        dupes = sorted({t for t in tokens if tokens.count(t) > 1})
        raise ValueError(f"duplicate special tokens: {dupes}")
    if not tokens:
        return None
    ordered = sorted(tokens, key=len, reverse=True)
    return regex.compile("|".join(regex.escape(t) for t in ordered))


def split_special(text: str, special_tokens: Iterable[str]) -> list[tuple[str, bool]]:
    """Split ``text`` into ``(piece, is_special)`` parts; ordinary pieces are
    never empty, and joining all pieces gives ``text`` back."""
    text = _require_text(text)
    pattern = special_token_pattern(special_tokens)
    if pattern is None:
        return [(text, False)] if text else []
    parts: list[tuple[str, bool]] = []
    start = 0
    for match in pattern.finditer(text):
        if match.start() > start:
            parts.append((text[start : match.start()], False))
        parts.append((match.group(), True))
        start = match.end()
    if start < len(text):
        parts.append((text[start:], False))
    return parts
