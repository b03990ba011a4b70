"""The words every layer shares: word markers, the pair type, argument checks.

This is the bottom of the package: it imports nothing from ``bpe_lab``, and
every other module takes its markers and its argument checks from here, so
that ``</w>`` is spelled once and a bad ``num_merges`` gets the same message
from every trainer.

- ``END_OF_WORD`` (``</w>``) follows the last character of a word as a
  symbol of its own in the textbook trainer (the code listing of Sennrich et
  al., 2016; subword-nmt since 0.2 glues it to the last character instead,
  ``glue_end_of_word=True``), so ``est</w>`` at the end of ``newest``
  differs from ``est`` inside ``estate``;
- ``START_OF_WORD`` (``▁``, U+2581) is SentencePiece's marker, put in front
  of a word instead;
- ``ENDOFTEXT`` is GPT-2's document separator, a special token.

>>> check_int(5, "num_merges")
5
>>> check_int(True, "num_merges")
Traceback (most recent call last):
...
TypeError: num_merges must be an int, got True
>>> check_choice("best", "tie_break", TIE_BREAKS)
Traceback (most recent call last):
...
ValueError: unknown tie_break 'best'; choose one of ('first', 'lexicographic')
"""

from __future__ import annotations

import warnings
from typing import Literal, TypeVar

__all__ = [
    "END_OF_WORD",
    "START_OF_WORD",
    "ENDOFTEXT",
    "Pair",
    "Corpus",
    "TieBreak",
    "TIE_BREAKS",
    "OnShort",
    "ON_SHORT",
    "check_int",
    "check_choice",
    "check_markers",
    "report_short",
]

END_OF_WORD = "</w>"
START_OF_WORD = "\u2581"
ENDOFTEXT = "<|endoftext|>"

#: Two adjacent symbols of the textbook path; a merge is one of these.
Pair = tuple[str, str]
#: A corpus split into symbols: each word's symbols -> the word's count.
Corpus = dict[tuple[str, ...], int]

TieBreak = Literal["first", "lexicographic"]
#: "first": the tied pair met first when scanning the corpus in insertion order
#: (words in order, left to right in each word): the textbook rule.
#: "lexicographic": the greatest tied pair, comparing (left, right) as strings
#: (bytes, for byte-level BPE: GPT-2's and CS336's rule).
TIE_BREAKS: tuple[TieBreak, ...] = ("first", "lexicographic")

OnShort = Literal["warn", "raise", "ignore"]
#: What a trainer does when fewer merges are possible than were asked for
#: (every word became one symbol): warn (the default, for a learner at a
#: notebook), raise ValueError, or say nothing (the caller checks the length
#: of the result, or ``Trace.stopped_early``).
ON_SHORT: tuple[OnShort, ...] = ("warn", "raise", "ignore")

C = TypeVar("C", bound=str)


def check_int(value: object, name: str, *, minimum: int | None = 0) -> int:
    """``value`` if it is an int of at least ``minimum`` (None: any int),
    else an error naming the argument and the value. ``True`` is rejected:
    it is an ``int`` to Python, but never what a learner meant."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def check_choice(value: object, name: str, choices: tuple[C, ...]) -> C:
    """``value`` if it is one of ``choices``, else ValueError listing them."""
    for choice in choices:
        if value == choice:
            return choice
    raise ValueError(f"unknown {name} {value!r}; choose one of {choices}")


def check_markers(end_of_word: object, start_of_word: object) -> None:
    """Each word marker must be a non-empty string or None."""
    for name, marker in (("end_of_word", end_of_word), ("start_of_word", start_of_word)):
        if marker is not None and (not isinstance(marker, str) or not marker):
            raise ValueError(f"{name} must be a non-empty string or None, got {marker!r}")


def report_short(
    asked: int,
    learned: int,
    on_short: OnShort,
    *,
    what: str = "merges",
    reason: str = "every word is now a single symbol",
    stacklevel: int = 2,
) -> None:
    """Say, as ``on_short`` asks, that training learned fewer ``what`` than
    asked for, and ``reason`` why; shared by every trainer so the message has
    one shape whichever one a learner calls. Nothing happens when nothing is
    short. ``stacklevel`` is as for ``warnings.warn``, counted from the
    caller: 2 blames its caller."""
    if learned >= asked or on_short == "ignore":
        return
    message = f"asked for {asked} {what} but only {learned} were possible: {reason}"
    if on_short == "raise":
        raise ValueError(message)
    warnings.warn(message, stacklevel=stacklevel + 1)
