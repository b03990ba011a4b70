"""Encoding text that arrives in pieces: what more text cannot change.

What this adds over ``tokenizer.py`` (``encode``: one whole string):
``Tokenizer.encode_iterable`` reads a file line by line, in fixed memory, and
must give exactly the ids of ``encode`` on the whole text. A pre-token at the
end of what has arrived may still change (``"wor"`` + ``"ld"``; ``"x'l"`` +
``"l"`` is ``'ll``; a run of spaces gives its last space to the next word),
so each block is encoded only up to where more text cannot reach, and the
rest is carried into the next block. Two rules say where that is:

- ``unsettled``, for the patterns that cut as GPT-2's does (``CUT_LIKE_GPT2``):
  the last pre-token and any that starts within ``REGEX_REACH`` characters
  of the end;
- ``last_safe_cut``, for every other pattern: all after the last safe cut
  of ``core.patterns.SAFE_CUTS`` (the cut ``chunk_bounds`` makes in a file,
  proved in ``core/patterns.py``).

``blocks`` gathers (or cuts) the lines into blocks of about the same size,
so that the work per block stays small whatever the line lengths.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

__all__ = ["REGEX_REACH", "CUT_LIKE_GPT2", "blocks", "last_safe_cut", "unsettled"]

#: How far past a pre-token's start GPT2_PATTERN may look to decide it: the
#: contractions ``'ll``, ``'re``, ``'ve`` need three characters.
REGEX_REACH = 3

#: The patterns that cut every text as GPT2_PATTERN does (``tests/test_patterns.py``
#: checks r50k against it), so that ``unsettled`` holds for them. The others
#: may change a piece further back (Llama 3's and o200k's ``\s*[\r\n]+``
#: cut ``"\n\n  "`` as ``"\n\n"``, ``"  "`` but take ``"\n\n  \n"`` whole;
#: o200k's ``don`` becomes ``don't``), so ``encode_iterable`` holds their
#: text back to the last safe cut (``core.patterns.SAFE_CUTS``) instead.
CUT_LIKE_GPT2 = ("gpt2", "r50k")


def blocks(lines: Iterable[str], block_chars: int) -> Iterator[str]:
    """The text of ``lines`` in blocks of about ``block_chars`` characters.

    Short lines are gathered, and a line longer than a block is cut into
    blocks too, so the work per block stays small whatever the line lengths.
    Any cut is safe: the tokenizer holds back whatever a cut may change.
    """
    buffer: list[str] = []
    size = 0
    for line in lines:  # O(total length)
        if not isinstance(line, str):
            raise TypeError(
                f"encode_iterable() needs str lines, got {type(line).__name__} (open the file in text mode)"
            )
        buffer.append(line)
        size += len(line)
        if size >= block_chars:
            text = "".join(buffer)
            buffer.clear()
            size = 0
            for start in range(0, len(text), block_chars):
                yield text[start : start + block_chars]
    if buffer:
        yield "".join(buffer)


def last_safe_cut(safe_cut: re.Pattern[str] | None, text: str, start: int, end: int) -> int:
    """The last position of ``text[start:end]`` where the pattern's safe cut
    allows a cut (``core.patterns.SAFE_CUTS``), or ``start`` if there is none."""
    last = start
    if safe_cut is not None:
        for match in safe_cut.finditer(text, start, end):  # O(end - start)
            last = match.start()
    return last


def unsettled(pieces: list[str]) -> tuple[int, int]:
    """How many pre-tokens at the end of ``pieces``, and how many characters,
    could still be cut differently once more text follows.

    The last pre-token can grow (``"wor"`` + ``"ld"``) or shrink (a run of white
    space gives its last space to the next word: ``"  "`` + ``"x"``). A
    pre-token that starts within ``REGEX_REACH`` characters of the end was
    decided without seeing three characters (``"'l"`` + ``"l"`` is ``'ll``, not
    ``'`` then ``ll``). Every earlier pre-token was decided by characters that
    are all present, so it stays as it is.

    >>> unsettled(["x", "'", "l"])
    (2, 2)
    >>> unsettled(["Hello", " world"])
    (1, 6)
    """
    if not pieces:
        return 0, 0
    count, chars = 1, len(pieces[-1])
    while count < len(pieces) and chars + len(pieces[-count - 1]) < REGEX_REACH:  # at most 3 steps
        count += 1
        chars += len(pieces[-count])
    return count, chars
