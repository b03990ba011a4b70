"""The options every textbook trainer and encoder takes, checked once.

What this adds over ``symbols`` (the markers, the choices and the checks of
one argument): the six keywords that ``train_bpe``, ``train_trace``,
``train_fast`` and ``training_corpus`` all take, gathered in one frozen
``TrainOptions`` that is validated when it is made and then carried through
unchanged. The public functions keep their keyword arguments
(``train_bpe(corpus, 5, tie_break="lexicographic")``): ``TrainKeywords`` is
their type, and ``TrainOptions.from_keywords`` the one place they become
options, with the one set of defaults. Three of them say how a word becomes
its starting symbols, which encoding must do exactly as training did: they
are ``WordMarkers``, which the encoders of ``encode.py`` take and which
``TrainOptions`` checks its markers with.

>>> WordMarkers(glue_end_of_word=True).symbols("low")
('l', 'o', 'w</w>')

>>> TrainOptions(tie_break="lexicographic", min_frequency=2).min_frequency
2
>>> TrainOptions(min_frequency=0)
Traceback (most recent call last):
...
ValueError: min_frequency must be >= 1, got 0
>>> TrainOptions(glue_end_of_word=True, end_of_word=None)
Traceback (most recent call last):
...
ValueError: glue_end_of_word=True needs an end_of_word marker to glue
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TypedDict

from bpe_lab.core.symbols import (
    END_OF_WORD,
    ON_SHORT,
    TIE_BREAKS,
    OnShort,
    TieBreak,
    check_choice,
    check_int,
    check_markers,
)
from bpe_lab.core.words import word_to_symbols

__all__ = ["TrainOptions", "TrainKeywords", "WordMarkers"]


@dataclass(frozen=True)
class WordMarkers:
    """How a word becomes its starting symbols (``words.word_to_symbols``):
    the end-of-word marker (``</w>``) or None, the start-of-word marker
    (``▁``) or None, and whether ``</w>`` is glued to the last character
    (subword-nmt since 0.2). Checked when made: a bad value raises an error
    naming the option.
    """

    end_of_word: str | None = END_OF_WORD
    start_of_word: str | None = None
    glue_end_of_word: bool = False

    def __post_init__(self) -> None:
        check_markers(self.end_of_word, self.start_of_word)
        if not isinstance(self.glue_end_of_word, bool):
            raise TypeError(f"glue_end_of_word must be True or False, got {self.glue_end_of_word!r}")
        if self.glue_end_of_word and not self.end_of_word:
            raise ValueError("glue_end_of_word=True needs an end_of_word marker to glue")

    def symbols(self, word: str) -> tuple[str, ...]:
        """The starting symbols of ``word`` with these markers."""
        return word_to_symbols(
            word, end_of_word=self.end_of_word, start_of_word=self.start_of_word, glue_end_of_word=self.glue_end_of_word
        )


@dataclass(frozen=True)
class TrainOptions:
    """How a textbook trainer splits words and picks pairs.

    - ``tie_break``: "first" (the pair met first, the textbook rule) or
      "lexicographic" (the greatest pair), see ``symbols.TIE_BREAKS``;
    - ``end_of_word`` / ``start_of_word``: the word markers (``</w>``,
      ``▁``) or None;
    - ``on_short``: "warn", "raise" or "ignore" when fewer merges are
      possible than asked for (``symbols.ON_SHORT``);
    - ``glue_end_of_word``: join ``</w>`` to each word's last character
      (subword-nmt since 0.2) instead of keeping it a symbol of its own;
    - ``min_frequency``: stop once the best pair occurs fewer times.

    Every value is checked when the options are made; a bad one raises an
    error naming the option and the value.
    """

    tie_break: TieBreak = "first"
    end_of_word: str | None = END_OF_WORD
    start_of_word: str | None = None
    on_short: OnShort = "warn"
    glue_end_of_word: bool = False
    min_frequency: int = 1

    @classmethod
    def from_keywords(cls, keywords: TrainKeywords) -> TrainOptions:
        """The options a trainer's keywords give; a keyword that is not an
        option is named, with the ones there are.

        >>> TrainOptions.from_keywords({"tie_brake": "first"})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        TypeError: unknown option 'tie_brake'; the options are tie_break, end_of_word, ...
        """
        names = [f.name for f in fields(cls)]
        for name in keywords:
            if name not in names:
                raise TypeError(f"unknown option {name!r}; the options are {', '.join(names)}")
        return cls(**keywords)

    def __post_init__(self) -> None:
        check_choice(self.tie_break, "tie_break", TIE_BREAKS)
        WordMarkers(self.end_of_word, self.start_of_word, self.glue_end_of_word)  # the markers' checks, in one place
        check_choice(self.on_short, "on_short", ON_SHORT)
        check_int(self.min_frequency, "min_frequency", minimum=1)

    @property
    def markers(self) -> WordMarkers:
        """The options that say how a word becomes its symbols (checked when made)."""
        return WordMarkers(self.end_of_word, self.start_of_word, self.glue_end_of_word)


class TrainKeywords(TypedDict, total=False):
    """The keyword arguments of the trainers: the fields of ``TrainOptions``
    (their defaults and meaning are there)."""

    tie_break: TieBreak
    end_of_word: str | None
    start_of_word: str | None
    on_short: OnShort
    glue_end_of_word: bool
    min_frequency: int
