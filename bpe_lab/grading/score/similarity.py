"""Winnowed fingerprints of code and prose, and where two sources share them.

What this adds over ``tokenize`` and ``hashlib``: document fingerprinting
as MOSS does it, for ``similar_answers`` to compare a class's answer cells
with one another and with the package's own (``similarity_report`` shows
the result). The method is winnowing (Schleimer, Wilkerson and Aiken,
"Winnowing: local algorithms for document fingerprinting", SIGMOD 2003):

1. ``normalise``: Python's ``tokenize``, with every identifier one
   placeholder ``V``, every string ``S`` and number ``N``; comments and
   white space dropped, keywords and operators kept. Renaming variables or
   re-wrapping lines changes nothing; different code is different. A
   written answer (Markdown) is read as its ``words`` instead.
2. ``kgram_hashes``: each run of ``k`` tokens hashed with BLAKE2b (stable
   across runs and machines, unlike Python's salted ``hash``).
3. ``winnow``: of each window of ``w`` consecutive hashes the minimum (the
   rightmost one on a tie), each chosen position once. Any run of ``w + k -
   1`` tokens two sources share gives both at least one common fingerprint;
   a run shorter than ``k`` never does.
4. ``fingerprint`` drops a *base*: every k-gram of the starter code each
   learner received (``base_hashes``; MOSS's ``-b``), so the given
   signature and ``raise NotImplementedError()`` match nothing.

``compare`` says how two sets of fingerprints meet: how many they share,
so their Jaccard index (shared over all distinct: symmetric) and the
containment of one in the other (the share of the left's found in the
right), and where: the ``Block`` s of lines, mapped back from token
positions to each source's own lines.

>>> [t.text for t in normalise("total = count + 1  # note")]
['V', '=', 'V', '+', 'N']
>>> winnow([77, 74, 42, 17, 98, 50, 17, 98, 8, 88, 67, 39, 77, 74, 42, 17, 98], 4)
[(17, 3), (17, 6), (8, 8), (39, 11), (17, 15)]
"""

from __future__ import annotations

import hashlib
import io
import keyword
import re
import tokenize
from collections import defaultdict
from dataclasses import dataclass

__all__ = [
    "K",
    "W",
    "Token",
    "normalise",
    "words",
    "kgram_hashes",
    "winnow",
    "Fingerprints",
    "fingerprint",
    "base_hashes",
    "Block",
    "Match",
    "compare",
]

#: Tokens per k-gram and k-grams per window: a shared run of ``K + W - 1 = 12``
#: tokens (about one line, ``out.append(pair[0] + pair[1])``) is always found,
#: one of fewer than 8 (``for V in V :``) never.
K, W = 8, 5

_IDENTIFIER, _STRING, _NUMBER = "V", "S", "N"
_DROPPED = {
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENCODING,
    tokenize.ENDMARKER,
}
#: Python 3.12's f-strings (3.14's t-strings) come as a start, parts and an end: one ``S``, like a string.
_OPENS, _CLOSES = {"FSTRING_START", "TSTRING_START"}, {"FSTRING_END", "TSTRING_END"}
#: What a cell ``tokenize`` refuses (an unclosed bracket or string, bad indentation) is cut into instead.
_ROUGH = re.compile(
    r"(?P<comment>#[^\n]*)|(?P<string>[rRbBuUfFtT]{0,2}(?:'[^'\n]*'?|\"[^\"\n]*\"?))|(?P<number>\d[\w.]*)|(?P<name>[^\W\d]\w*)"
    r"|(?P<op>\*\*=?|//=?|->|:=|[=!<>]=|<<=?|>>=?|[-+*/%&|^@]=|\S)"
)
#: The most places one hash is matched at on each side, so a cell that
#: repeats one line ten thousand times costs no more than a long one.
_MAX_PLACES = 16


@dataclass(frozen=True)
class Token:
    """One normalised token: its text (``V``, ``S``, ``N``, a keyword or an
    operator) and the line of the source it starts on (from 1)."""

    text: str
    line: int


def _word(text: str) -> str:
    return text if keyword.iskeyword(text) else _IDENTIFIER


def _rough(source: str) -> list[Token]:
    """Tokens of a cell that is not valid Python, cut by a regular expression."""
    found = []
    for number, line in enumerate(source.splitlines(), start=1):
        for part in _ROUGH.finditer(line):
            kind, text = part.lastgroup, part.group()
            if kind == "comment":
                continue
            shown = {"string": _STRING, "number": _NUMBER}.get(kind or "", text)
            found.append(Token(_word(text) if kind == "name" else shown, number))
    return found


def normalise(source: str) -> list[Token]:
    """The tokens of Python ``source`` with names, strings and numbers made
    placeholders and comments and layout dropped (the module docstring says
    why). A cell ``tokenize`` refuses is cut roughly instead, never an error.

    >>> [t.text for t in normalise("def f(x):\\n    return x * 2.5  # twice and a half")]
    ['def', 'V', '(', 'V', ')', ':', 'return', 'V', '*', 'N']
    """
    if not isinstance(source, str):
        raise TypeError(f"source must be str, got {type(source).__name__}")
    found: list[Token] = []
    depth = 0  # inside a 3.12 f-string
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            name = tokenize.tok_name[tok.type]
            if name in _OPENS:
                depth += 1
                if depth == 1:
                    found.append(Token(_STRING, tok.start[0]))
            elif name in _CLOSES:
                depth -= 1
            elif depth or tok.type in _DROPPED or not tok.string.strip():
                continue
            elif tok.type == tokenize.NAME:
                found.append(Token(_word(tok.string), tok.start[0]))
            elif tok.type == tokenize.STRING:
                found.append(Token(_STRING, tok.start[0]))
            elif tok.type == tokenize.NUMBER:
                found.append(Token(_NUMBER, tok.start[0]))
            else:
                found.append(Token(tok.string, tok.start[0]))
    except (tokenize.TokenError, SyntaxError):
        return _rough(source)
    return found


def words(text: str) -> list[Token]:
    """The words of a written answer (Markdown), case folded, markup and
    punctuation dropped: prose is compared word by word, since a reworded
    answer is the learner's own.

    >>> [t.text for t in words("**BPE** merges the *most* frequent pair.")]
    ['bpe', 'merges', 'the', 'most', 'frequent', 'pair']
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be str, got {type(text).__name__}")
    return [
        Token(found.group().casefold(), number)
        for number, line in enumerate(text.splitlines(), start=1)
        for found in re.finditer(r"[^\W_]+", line)
    ]


def kgram_hashes(tokens: list[Token], k: int = K) -> list[int]:
    """The hash of each run of ``k`` tokens, in order (64-bit BLAKE2b of the
    texts; none when there are fewer than ``k`` tokens)."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    texts = [t.text for t in tokens]
    return [
        int.from_bytes(hashlib.blake2b("\x1f".join(texts[i : i + k]).encode(), digest_size=8).digest(), "big")
        for i in range(len(texts) - k + 1)
    ]


def winnow(hashes: list[int], w: int = W) -> list[tuple[int, int]]:
    """``(hash, position)`` of the fingerprints that winnowing with windows
    of ``w`` selects: in each window its minimal hash, the rightmost on a
    tie, and each position once (consecutive windows often pick the same).
    Fewer than ``w`` hashes are one window. The example is the paper's
    (Figure 2: the 5-grams of "A do run run run, a do run run")."""
    if w < 1:
        raise ValueError(f"w must be at least 1, got {w}")
    chosen: list[tuple[int, int]] = []
    for start in range(max(1, len(hashes) - w + 1) if hashes else 0):
        window = hashes[start : start + w]
        low = min(window)
        place = start + max(i for i, h in enumerate(window) if h == low)
        if not chosen or chosen[-1][1] != place:
            chosen.append((low, place))
    return chosen


@dataclass(frozen=True)
class Fingerprints:
    """One source's fingerprints: ``places`` maps each hash to the token
    positions of the k-grams it was selected at; ``lines`` is each token's
    source line, so a k-gram maps back to the lines it spans."""

    places: dict[int, tuple[int, ...]]
    lines: tuple[int, ...]
    k: int
    w: int

    def span(self, first: int, last: int) -> tuple[int, int]:
        """The source lines of the k-grams at token positions ``first`` to ``last``."""
        return self.lines[first], self.lines[min(last + self.k - 1, len(self.lines) - 1)]


def base_hashes(source: str, k: int = K, prose: bool = False) -> frozenset[int]:
    """Every k-gram hash of ``source``: what is dropped from the cells that
    start from it (all of them, not only its fingerprints, so that no
    window of a learner's copy can select a k-gram of the starter code)."""
    return frozenset(kgram_hashes(words(source) if prose else normalise(source), k))


def fingerprint(
    source: str, k: int = K, w: int = W, base: frozenset[int] = frozenset(), prose: bool = False
) -> Fingerprints:
    """The winnowed fingerprints of ``source`` (Python, or with ``prose`` a
    written answer's ``words``) less any hash in ``base`` (``base_hashes``
    of the starter code)."""
    tokens = words(source) if prose else normalise(source)
    places: dict[int, list[int]] = defaultdict(list)
    for value, place in winnow(kgram_hashes(tokens, k), w):
        if value not in base and len(places[value]) < _MAX_PLACES:
            places[value].append(place)
    return Fingerprints({h: tuple(p) for h, p in places.items() if p}, tuple(t.line for t in tokens), k, w)


@dataclass(frozen=True)
class Block:
    """Lines of two sources that match: ``left`` and ``right`` are (first,
    last) line numbers, from 1, in each; ``fingerprints`` how many matched there."""

    left: tuple[int, int]
    right: tuple[int, int]
    fingerprints: int


@dataclass(frozen=True)
class Match:
    """How two sources' fingerprints meet: ``shared`` distinct hashes, of
    ``left_total`` and ``right_total``, and where (``blocks``, in the
    left's order)."""

    shared: int
    left_total: int
    right_total: int
    blocks: tuple[Block, ...]

    @property
    def jaccard(self) -> float:
        """Shared fingerprints over all distinct ones of both sides."""
        union = self.left_total + self.right_total - self.shared
        return self.shared / union if union else 0.0

    @property
    def containment(self) -> float:
        """The share of the left's fingerprints that the right has too."""
        return self.shared / self.left_total if self.left_total else 0.0


def compare(left: Fingerprints, right: Fingerprints) -> Match:
    """How much ``left`` and ``right`` share, and the blocks of lines where."""
    if (left.k, left.w) != (right.k, right.w):
        raise ValueError(f"fingerprints made with k, w = {left.k}, {left.w} and {right.k}, {right.w} do not compare")
    shared = left.places.keys() & right.places.keys()
    # a hash met at several places pairs them in order: a repeated line copied pairs copy with copy
    pairs = sorted(pair for value in shared for pair in zip(left.places[value], right.places[value]))
    return Match(len(shared), len(left.places), len(right.places), _blocks(pairs, left, right))


#: Runs (and blocks) a new match may extend: the latest few, so a cell of
#: scattered matches costs time linear in them, not quadratic.
_OPEN = 8


def _blocks(pairs: list[tuple[int, int]], left: Fingerprints, right: Fingerprints) -> tuple[Block, ...]:
    """Matched k-gram positions (in the left's order) chained into runs that
    advance on both sides (by at most a window and a k-gram: a copy selects
    a fingerprint at least once per window, a small edit skips one), each
    run the lines it spans; blocks that overlap on both sides are joined."""
    gap = left.w + left.k
    runs: list[list[tuple[int, int]]] = []
    for a, b in pairs:
        run = next((r for r in reversed(runs[-_OPEN:]) if 0 < a - r[-1][0] <= gap and 0 < b - r[-1][1] <= gap), None)
        if run is None:
            runs.append([(a, b)])
        else:
            run.append((a, b))
    spans = sorted(
        (left.span(run[0][0], run[-1][0]), right.span(min(b for _, b in run), max(b for _, b in run)), len(run))
        for run in runs
    )
    blocks: list[Block] = []
    for mine, theirs, count in spans:
        near = range(len(blocks) - 1, max(-1, len(blocks) - 1 - _OPEN), -1)
        same = next((i for i in near if _overlap(blocks[i].left, mine) and _overlap(blocks[i].right, theirs)), None)
        if same is None:
            blocks.append(Block(mine, theirs, count))
        else:
            old = blocks[same]
            blocks[same] = Block(_join(old.left, mine), _join(old.right, theirs), old.fingerprints + count)
    return tuple(sorted(blocks, key=lambda b: (b.left, b.right)))


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


def _join(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    return min(a[0], b[0]), max(a[1], b[1])
