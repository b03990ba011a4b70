"""Words as symbols: the primitives every trainer and encoder shares.

What this adds over ``symbols`` (markers and argument checks): the two
operations the whole textbook path is made of, below both the trainers
(``train``, ``train_fast``) and the encoders (``encode``), so that neither
imports the other:

- ``word_to_symbols``: a word -> its starting symbols (characters plus a
  word marker); ``corpus_from_word_freq`` does it for a whole
  word -> count table, with the checks a corpus must pass;
- ``merge_symbols``: join every occurrence of one pair, left to right;
- ``short_reason``: why training learned fewer merges than asked, from the
  words as training left them (one sentence for every trainer).

>>> word_to_symbols("low")
('l', 'o', 'w', '</w>')
>>> merge_symbols(word_to_symbols("low"), ("l", "o"))
('lo', 'w', '</w>')
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sized
from typing import TypeVar

from bpe_lab.core.symbols import END_OF_WORD, Corpus, check_int, check_markers

__all__ = ["word_to_symbols", "check_word", "corpus_from_word_freq", "merge_symbols", "short_reason"]

#: A symbol that joins with ``+``: ``str`` (textbook) or ``bytes`` (byte-level).
S = TypeVar("S", str, bytes)


def word_to_symbols(
    word: str,
    *,
    end_of_word: str | None = END_OF_WORD,
    start_of_word: str | None = None,
    glue_end_of_word: bool = False,
) -> tuple[str, ...]:
    """Split a word into its starting symbols: its characters, with the
    end-of-word marker appended (``</w>``, as in the code listing of Sennrich
    et al., 2016) and/or the start-of-word marker prepended (``▁``,
    SentencePiece style). ``glue_end_of_word=True`` joins the marker to the
    last character instead, as subword-nmt does since its version 0.2.

    >>> word_to_symbols("low", glue_end_of_word=True)
    ('l', 'o', 'w</w>')
    >>> word_to_symbols("low", end_of_word=None, start_of_word="▁")
    ('▁', 'l', 'o', 'w')
    """
    check_word(word, end_of_word, start_of_word)
    symbols = tuple(word)
    if start_of_word:
        symbols = (start_of_word,) + symbols
    if end_of_word and glue_end_of_word:
        symbols = symbols[:-1] + (symbols[-1] + end_of_word,)
    elif end_of_word:
        symbols = symbols + (end_of_word,)
    return symbols


def check_word(word: object, end_of_word: str | None, start_of_word: str | None) -> None:
    """A word must be a non-empty string without white space or a marker;
    else an error naming the word and what is wrong with it."""
    if not isinstance(word, str):
        raise TypeError(f"words must be strings, got {word!r}")
    if not word:
        raise ValueError("the corpus contains an empty word")
    if any(ch.isspace() for ch in word):
        raise ValueError(f"word {word!r} contains white space; split text into words first (word_frequencies)")
    for marker in (end_of_word, start_of_word):
        if marker and marker in word:
            raise ValueError(f"word {word!r} contains the word marker {marker!r}; choose another marker")


def corpus_from_word_freq(
    word_freq: Mapping[str, int],
    *,
    end_of_word: str | None = END_OF_WORD,
    start_of_word: str | None = None,
    glue_end_of_word: bool = False,
) -> Corpus:
    """Validate a word -> frequency table and split every word into symbols.

    Raises ValueError naming the problem: an empty corpus, a count that is not
    a positive integer, an empty word, a word with white space or a marker.

    >>> corpus_from_word_freq({"low": 5, "we": 2})
    {('l', 'o', 'w', '</w>'): 5, ('w', 'e', '</w>'): 2}
    """
    check_markers(end_of_word, start_of_word)
    if not isinstance(word_freq, Mapping):
        raise TypeError(f"word_freq must be a dict of word -> count, got {type(word_freq).__name__}")
    if not word_freq:
        raise ValueError("the corpus is empty: give at least one word with a positive count")
    corpus: Corpus = {}
    for word, freq in word_freq.items():
        if check_int(freq, f"the count of {word!r}", minimum=None) <= 0:
            raise ValueError(f"the count of {word!r} must be positive, got {freq}")
        symbols = word_to_symbols(
            word, end_of_word=end_of_word, start_of_word=start_of_word, glue_end_of_word=glue_end_of_word
        )
        corpus[symbols] = freq
    return corpus


def merge_symbols(symbols: tuple[S, ...], pair: tuple[S, S]) -> tuple[S, ...]:
    """Join every occurrence of ``pair`` in ``symbols``, scanning left to
    right; an occurrence that overlaps one already joined is skipped. The
    symbols are ``str`` (characters) or ``bytes`` (byte-level BPE).

    >>> merge_symbols(("a", "a", "a", "a"), ("a", "a"))
    ('aa', 'aa')
    >>> merge_symbols(("a", "a", "a"), ("a", "a"))
    ('aa', 'a')
    >>> merge_symbols((b"a", b"b", b"c"), (b"b", b"c"))
    (b'a', b'bc')
    """
    left, right = pair
    out: list[S] = []
    i = 0
    while i < len(symbols):
        if i + 1 < len(symbols) and symbols[i] == left and symbols[i + 1] == right:
            out.append(left + right)
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return tuple(out)


def short_reason(final: Iterable[Sized], min_frequency: int) -> str:
    """Why training stopped before ``num_merges``, from the words as it left
    them (each a sequence of symbols): every word is one symbol, or (with
    ``min_frequency`` above 1) no pair is frequent enough.

    >>> short_reason([("ab",), ("c",)], 1)
    'every word is now a single symbol'
    >>> short_reason([("a", "b")], 2)
    'no pair occurs min_frequency=2 times'
    """
    if any(len(symbols) > 1 for symbols in final):
        return f"no pair occurs min_frequency={min_frequency} times"
    return "every word is now a single symbol"
