"""The pre-tokenization patterns of today's models, side by side.

What this adds over ``pretokenize`` (white space, and GPT-2's pattern as
GPT-2 released it): the regular expressions that later tokenizers cut text
with, copied character for character from the code that defines them, and
one function that cuts text with any of them. BPE never merges across a
piece, so the pattern decides what a token *can* be: whether `` 2024`` may
become one token (GPT-2: any run of digits is one piece) or at most three
digits at a time (cl100k, o200k, Llama 3), whether ``DON'T`` keeps its
contraction apart (cl100k's contractions ignore case; GPT-2's do not), and
whether a new line can end a word's piece.

Where each pattern comes from (``SOURCES`` says the same):

- ``R50K_PATTERN``: tiktoken, ``tiktoken_ext/openai_public.py``,
  ``r50k_pat_str``, used there for ``gpt2``, ``r50k_base``, ``p50k_base`` and
  ``p50k_edit``; its comment calls it equivalent to GPT-2's released pattern
  (``GPT2_PATTERN``), only faster (possessive quantifiers, ``\\s++$``).
- ``CL100K_PATTERN``, ``O200K_PATTERN``: the same file, ``cl100k_base()`` and
  ``o200k_base()`` (tiktoken 0.14.0; ``tests/test_patterns.py`` checks them
  against the installed copy). tiktoken's ``model.py`` maps ``gpt-4`` and
  ``gpt-3.5-turbo`` to cl100k_base and ``gpt-4o`` to o200k_base.
- ``LLAMA3_PATTERN``: Meta's ``llama3`` repository, ``llama/tokenizer.py``,
  ``Tokenizer.pat_str`` (commit e8f0267). It is character for character the
  cl100k pattern as tiktoken first published it (openai/tiktoken commit
  1f098ca); tiktoken has since rewritten cl100k's pattern in a faster form,
  so it no longer equals today's ``CL100K_PATTERN`` as a string. They cut
  text the same way but at its very end: today's has one more branch,
  ``\\s++$``, which takes the white space that ends a text as one piece
  (``"ok\\n  "``: ``ok``, ``\\n  ``), where Llama 3's cuts it after its
  last new line (``ok``, ``\\n``, ``  ``); ``tests/test_patterns.py`` pins
  both.
- ``ZH_RANGE_PATTERN``, ``JA_RANGE_PATTERN``: the "multi-language support"
  patterns of the Chinese BPE tutorial "BPE算法解析与实现：从理论到工程实践"
  (AI智能范式网, 2026-08-17), section 3.3: one character of the
  ``[\\u4e00-\\u9fa5]`` range per piece, the range common in Chinese BPE tutorials.

>>> pretokenize_with("I'LL pay 1234567 now", "gpt2")
['I', "'", 'LL', ' pay', ' 1234567', ' now']
>>> pretokenize_with("I'LL pay 1234567 now", "cl100k")
['I', "'LL", ' pay', ' ', '123', '456', '7', ' now']
>>> pretokenize_with("今天天气", ZH_RANGE_PATTERN)
['今', '天', '天', '气']

A tokenizer is given a pattern by name or as a regex; ``resolve_pattern``
checks it once and returns a ``Pattern``: its name, its regex, the function
that cuts text with it, and where a file may be cut (``safe_cut``, below).

>>> resolve_pattern("cl100k").name, resolve_pattern(CL100K_PATTERN).name
('cl100k', 'cl100k')
>>> resolve_pattern("gpt4")
Traceback (most recent call last):
...
ValueError: unknown pattern name 'gpt4'; the names are gpt2, r50k, cl100k, o200k, llama3 (or pass a regex)

Where a text may be cut
-----------------------

Training and ``encode_file`` cut a file into chunks and pre-tokenize each on
its own; that gives the pieces of the whole text only where no piece crosses
the cut. Take ``c`` with ``X = text[c-1]`` not white space and ``text[c]``
white space. If (1) no branch of the pattern can match ``X`` and then
``text[c]``, the cut at ``c`` is safe: no piece of the whole text holds both,
so one ends at ``c``. The right side is scanned as in the whole text because
none of these patterns looks behind (no look-behind, ``^`` or ``\\b``). On
the left, a match can only differ where it reaches the chunk's end: there a
quantifier stops because the text ends, where in the whole text it stops
because ``text[c]`` does not fit (1); and the only assertions that could hold
at the end and not before ``text[c]``, ``$`` of ``\\s++$`` and ``(?!\\S)`` of
``\\s+(?!\\S)``, come after white space, and ``X`` is not. So (1) decides,
and ``SAFE_CUTS`` says, per pattern, where it holds, in ASCII only (a byte of
``[!-~]`` is always a whole character, so the rule works on a file's bytes):

- **gpt2, r50k**: before a space or a new line between two printable ASCII
  characters ``X`` and ``Y``. No branch goes on from a character that is not
  white space into white space: the letters, digits and symbols branches stop
  at ``\\s``, a contraction ends in a letter, and the white-space branches
  hold only white space.
- **cl100k, llama3, o200k**: before a space between two printable ASCII
  characters, as above; but before a new line only after an ASCII letter or
  digit. Their symbols branch takes the new lines *after* a symbol
  (`` ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*+``; o200k's ``[\\r\\n/]*``), so ``".\\n"``
  is one piece; the letters, digits and contractions branches (o200k's
  ``'s`` suffix included) stop at a new line. No branch goes on into a space
  from a character that is not white space.
- **a regex of your own**: no safe place is known, so a file is cut only
  before special tokens (which always split a document).

``tests/test_bytelevel_train.py`` checks, for each pattern, with one worker
and two, that counting chunk by chunk equals counting the whole text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

import regex

from bpe_lab.core.pretokenize import GPT2_PATTERN, GPT2_SAFE_CUT, FastSplit, gpt2_pretokenize

__all__ = [
    "R50K_PATTERN",
    "CL100K_PATTERN",
    "O200K_PATTERN",
    "LLAMA3_PATTERN",
    "ZH_RANGE_PATTERN",
    "JA_RANGE_PATTERN",
    "PATTERNS",
    "SOURCES",
    "SAFE_CUTS",
    "ASCII_PATTERNS",
    "Pattern",
    "resolve_pattern",
    "pattern_named",
    "pretokenize_with",
    "side_by_side",
]

#: tiktoken's form of GPT-2's pattern: the same branches, possessive (``++``:
#: never give back what was matched), plus ``\s++$`` for white space that
#: ends the text.
R50K_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""

#: cl100k_base, branch by branch: contractions in any case (``(?i:...)``);
#: letters, after at most one character that is not a letter, digit or new
#: line (so ``$word`` and `` word`` are one piece each); one to three
#: digits; other symbols with the space before them and any new lines after
#: them; white space that ends the text; white space up to and including a
#: new line; white space not followed by a non-space; one white space.
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|"""
    r"""\s+(?!\S)|\s"""
)

#: o200k_base: as cl100k, but a word is an optional run of upper-case
#: letters (or marks, or letters of scripts without case) and then lower-case
#: ones, or the other way round, so ``camelCase`` splits at the capital and
#: ``'s`` stays on its word; ``/`` may follow a run of symbols, as new lines.
O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

#: Llama 3: cl100k's pattern as first published (greedy, not possessive).
LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|"
    r"\s+(?!\S)|\s+"
)

#: The Chinese tutorial's pattern: one character of U+4E00-U+9FA5 per
#: piece, or a run of anything else but white space, or a run of white space.
ZH_RANGE_PATTERN = r"""[\u4e00-\u9fa5]|[^\u4e00-\u9fa5\s]+|\s+"""

#: The same tutorial's Japanese pattern: the same, with hiragana
#: (U+3040-U+309F) and katakana (U+30A0-U+30FF) one character per piece too.
JA_RANGE_PATTERN = r"""[\u3040-\u309F\u30A0-\u30FF\u4e00-\u9fa5]|[^\u3040-\u309F\u30A0-\u30FF\u4e00-\u9fa5\s]+|\s+"""

#: The patterns by short name, oldest first.
PATTERNS: dict[str, str] = {
    "gpt2": GPT2_PATTERN,
    "r50k": R50K_PATTERN,
    "cl100k": CL100K_PATTERN,
    "o200k": O200K_PATTERN,
    "llama3": LLAMA3_PATTERN,
}

#: Where a text may be cut, per pattern: a regex (over ASCII, so that it
#: runs on bytes as well as on str) matching, with look-arounds only, the
#: positions where a cut splits no pre-token (the proofs: this module's
#: docstring). A name left out, or a regex of one's own, has none.
_CUT_AT_ANY_SINGLE_SPACE = GPT2_SAFE_CUT
_CUT_AT_SPACE_OR_AFTER_ALNUM_NEWLINE = r"(?<=[!-~])(?= [!-~])|(?<=[A-Za-z0-9])(?=\n[!-~])"
SAFE_CUTS: dict[str, str] = {
    "gpt2": _CUT_AT_ANY_SINGLE_SPACE,
    "r50k": _CUT_AT_ANY_SINGLE_SPACE,
    "cl100k": _CUT_AT_SPACE_OR_AFTER_ALNUM_NEWLINE,
    "o200k": _CUT_AT_SPACE_OR_AFTER_ALNUM_NEWLINE,
    "llama3": _CUT_AT_SPACE_OR_AFTER_ALNUM_NEWLINE,
}

#: Where each pattern is defined.
SOURCES: dict[str, str] = {
    "gpt2": "openai/gpt-2, src/encoder.py, Encoder.pat (less its <|endoftext|> branch, as tiktoken quotes it)",
    "r50k": "openai/tiktoken, tiktoken_ext/openai_public.py, r50k_pat_str",
    "cl100k": "openai/tiktoken, tiktoken_ext/openai_public.py, cl100k_base()",
    "o200k": "openai/tiktoken, tiktoken_ext/openai_public.py, o200k_base()",
    "llama3": "meta-llama/llama3, llama/tokenizer.py, Tokenizer.pat_str",
    "zh_range": "Chinese BPE tutorial 'BPE算法解析与实现：从理论到工程实践' (AI智能范式网, 2026), section 3.3",
    "ja_range": "Chinese BPE tutorial 'BPE算法解析与实现：从理论到工程实践' (AI智能范式网, 2026), section 3.3",
}


#: The same pieces as cl100k's, Llama 3's and o200k's patterns on ASCII text,
#: for Python's ``re`` (``FastSplit``; GPT-2's and r50k's is
#: ``pretokenize.GPT2_ASCII_PATTERN``). Within ASCII, ``\p{L}`` is exactly
#: ``[A-Za-z]``, ``\p{N}`` is ``[0-9]``, o200k's upper-case-like class
#: ``[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`` is ``[A-Z]`` and its lower-case-like
#: one ``[a-z]``, and ``\s`` (with ``re.ASCII``) is the same six characters as
#: in ``regex``. Three rewrites, each giving the same match at every position:
#:
#: - possessive quantifiers become greedy ones: each ends its branch, or is
#:   followed by what the run it took cannot give back (``[^\r\n\p{L}\p{N}]?+``
#:   before ``\p{L}``: handing back a character that is no letter never lets
#:   the letters match; ``\s++$``: a shorter run of white space is followed
#:   by white space, never by the end);
#: - cl100k's and Llama 3's letters branch goes first, its optional first
#:   character no longer an apostrophe, and an apostrophe before letters
#:   that are no contraction gets a branch of its own after the
#:   contractions: at a letter or another character the first branch finds
#:   what the old second one found, and at an apostrophe the branches are
#:   tried in the old order (words are most of the pieces, and the engine
#:   tries the branches in order);
#: - o200k's two letters branches become one: they share their optional
#:   first character (with or without it, both need a letter right after
#:   it), and after it ``[A-Z]*[a-z]+``, else ``[A-Z]+[a-z]*``, matches
#:   lower-case letters (``[a-z]+``) or capitals and the lower-case letters
#:   after them (``[A-Z]+[a-z]*``).
#:
#: A hypothesis test checks each against its pattern on ASCII text.
ASCII_PATTERNS: dict[str, str] = {
    "cl100k": (
        r"""[^\r\nA-Za-z0-9']?[A-Za-z]+|'(?i:[sdmt]|ll|ve|re)|'[A-Za-z]+|[0-9]{1,3}| ?[^\sA-Za-z0-9]+[\r\n]*|\s+$|"""
        r"""\s*[\r\n]|\s+(?!\S)|\s"""
    ),
    "o200k": (
        r"""[^\r\nA-Za-z0-9]?(?:[a-z]+|[A-Z]+[a-z]*)(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[0-9]{1,3}|"""
        r""" ?[^\sA-Za-z0-9]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
    ),
    "llama3": (
        r"""[^\r\nA-Za-z0-9']?[A-Za-z]+|'(?i:[sdmt]|ll|ve|re)|'[A-Za-z]+|[0-9]{1,3}| ?[^\sA-Za-z0-9]+[\r\n]*|"""
        r"""\s*[\r\n]+|\s+(?!\S)|\s+"""
    ),
}

#: What cuts text for each name: GPT-2's hand-made splitter for the two
#: patterns that cut alike, a ``FastSplit`` (``re`` on ASCII, ``regex``
#: around the rest, cut at ``SAFE_CUTS``) for the others.
_FAST_SPLITS: dict[str, Callable[[str], list[str]]] = {
    "gpt2": gpt2_pretokenize,
    "r50k": gpt2_pretokenize,
    **{name: FastSplit(form, PATTERNS[name], SAFE_CUTS[name]) for name, form in ASCII_PATTERNS.items()},
}


@dataclass(frozen=True)
class Pattern:
    """A pre-tokenization pattern, checked: what a tokenizer cuts text with.

    ``name``: its name in ``PATTERNS``, or None for a regex of one's own;
    ``regex``: the regular expression; ``safe_cut``: where a text may be cut
    without changing its pieces (``SAFE_CUTS``; None: nowhere known).
    ``split(text)`` cuts ``text`` into its pieces: for a named pattern
    faster forms of the same regex (``gpt2_pretokenize`` for GPT-2's and
    r50k's, a ``FastSplit`` with the pattern's ``ASCII_PATTERNS`` form for the
    others), for a regex of one's own ``regex``'s ``findall``. Made by
    ``resolve_pattern``.
    """

    name: str | None
    regex: str
    safe_cut: str | None
    split: Callable[[str], list[str]] = field(repr=False, compare=False)

    @property
    def spec(self) -> str:
        """What ``resolve_pattern`` takes to make this pattern again: the name, or the regex."""
        return self.name if self.name is not None else self.regex

    def __reduce__(self) -> tuple[Callable[[str], Pattern], tuple[str]]:
        # pickled as its spec (a worker process resolves it again): a
        # compiled regex's bound method is not worth pickling
        return resolve_pattern, (self.spec,)


#: A text every pattern fit for a tokenizer cuts into pieces that join to it
#: again: a pattern that drops a character here would lose text in encode.
_PROBE = "Hello World, it's DON'T 2024! x=1.5e-3;\n\t  y\r\n\u00a0é e\u0301 中文 ١٢٣ 👩\u200d💻 🎉  "

#: A word-like string that is not a name of PATTERNS: taken for a misspelt
#: name rather than for a regex that matches only itself.
_LOOKS_LIKE_A_NAME = regex.compile(r"[A-Za-z][A-Za-z0-9_]*")


def resolve_pattern(pattern: str | Pattern) -> Pattern:
    """The ``Pattern`` for a name of ``PATTERNS`` or a regex (a ``Pattern``
    is returned as it is). A regex equal to a named one gets its name.

    Raises TypeError for what is not a string, and ValueError, naming the
    pattern and listing the names, for a word that is not a name (``"gpt4"``),
    a regex that does not compile, has capturing groups (``findall`` would
    return only the groups; use ``(?:...)``) or drops or empties text (its
    pieces of a test text must join to that text: encode would lose what no
    branch matches).
    """
    if isinstance(pattern, Pattern):
        return pattern
    if not isinstance(pattern, str):
        raise TypeError(f"pattern must be a name ({_NAMES}) or a regex, got {type(pattern).__name__}")
    return _resolved(pattern)


_NAMES = ", ".join(PATTERNS)


@lru_cache(maxsize=64)
def _resolved(pattern: str) -> Pattern:
    for name, known in PATTERNS.items():
        if pattern in (name, known):
            return Pattern(name, known, SAFE_CUTS.get(name), _FAST_SPLITS[name])
    if not pattern or _LOOKS_LIKE_A_NAME.fullmatch(pattern):
        raise ValueError(f"unknown pattern name {pattern!r}; the names are {_NAMES} (or pass a regex)")
    try:
        compiled = _compiled(pattern)
    except regex.error as err:
        raise ValueError(f"the pattern {pattern!r} is not a valid regex ({err}); the names are {_NAMES}") from None
    if compiled.groups:
        raise ValueError(
            f"the pattern {pattern!r} has {compiled.groups} capturing group(s); write them (?:...) "
            "so that each match is one whole piece"
        )
    end = 0
    for match in compiled.finditer(_PROBE):  # O(len(_PROBE))
        if match.start() > end or match.end() == match.start():
            what = f"drops {_PROBE[end : match.start()]!r}" if match.start() > end else "matches an empty piece"
            raise ValueError(
                f"the pattern {pattern!r} {what} at character {end} of the test text {_PROBE!r}; "
                "every character must be matched by one of its branches, or encoding would lose text"
            )
        end = match.end()
    if end < len(_PROBE):
        raise ValueError(
            f"the pattern {pattern!r} drops {_PROBE[end:]!r} at character {end} of the test text {_PROBE!r}; "
            "every character must be matched by one of its branches, or encoding would lose text"
        )
    return Pattern(None, pattern, None, compiled.findall)


def pattern_named(pattern: str) -> str:
    """The pattern a short name of ``PATTERNS`` stands for; any other string
    is taken to be a pattern itself.

    >>> pattern_named("llama3") == LLAMA3_PATTERN
    True
    """
    if not isinstance(pattern, str) or not pattern:
        raise ValueError(f"a pattern must be a name of PATTERNS {sorted(PATTERNS)} or a regex, got {pattern!r}")
    return PATTERNS.get(pattern, pattern)


@lru_cache(maxsize=32)
def _compiled(pattern: str) -> regex.Pattern[str]:
    return regex.compile(pattern)


def pretokenize_with(text: str, pattern: str) -> list[str]:
    """Cut ``text`` into the pieces ``pattern`` (a name of ``PATTERNS`` or a
    regex) matches, with the ``regex`` module, as tiktoken does with its Rust
    regex engine. For these patterns joining the pieces gives ``text`` back:
    every character is matched by some branch."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    pieces: list[str] = _compiled(pattern_named(pattern)).findall(text)
    return pieces


def side_by_side(text: str, names: list[str] | None = None) -> dict[str, list[str]]:
    """``{name: pieces}`` for each pattern named (all of ``PATTERNS`` by default).

    >>> side_by_side("x  = 10000", ["gpt2", "o200k"])
    {'gpt2': ['x', ' ', ' =', ' 10000'], 'o200k': ['x', ' ', ' =', ' ', '100', '00']}
    """
    return {name: pretokenize_with(text, name) for name in (names or list(PATTERNS))}
