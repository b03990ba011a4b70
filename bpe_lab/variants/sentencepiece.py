"""Where the word boundary goes: SentencePiece's ``▁`` instead of ``</w>`` (notebook 06).

What it adds over ``core.train`` and ``core.encode``, which append ``</w>``
to each word and throw the spaces away: SentencePiece turns every space into
``▁`` (U+2581) and keeps it as an ordinary symbol at the *start* of the next
piece, so decoding gives the text back exactly, spaces and all. The merges
are learned by the same trainer, with ``end_of_word=None``.

>>> sp_pieces("Hello  world")
['▁Hello', '▁', '▁world']
>>> sp_decode(sp_encode("Hello  world", []))
'Hello  world'
"""

from __future__ import annotations

from collections.abc import Sequence

import regex

from bpe_lab.core.encode import merge_ranks, replay_symbols
from bpe_lab.core.symbols import START_OF_WORD, Pair

__all__ = ["SPACE", "sp_pieces", "sp_words", "sp_encode", "sp_decode"]

#: SentencePiece's word-start marker, which replaces every space.
SPACE = START_OF_WORD

# Every character Python's str.isspace() accepts (all lie below U+3001), so
# that pieces agree with the trainer's own white-space check.
_WHITE = regex.escape("".join(ch for ch in map(chr, range(0x3001)) if ch.isspace()))
# A piece: an optional ▁ and a run of other non-white-space characters; or a
# ▁ on its own (the second of two spaces); or one other white-space character.
_PIECE = regex.compile(f"▁?[^▁{_WHITE}]+|▁|[{_WHITE}]")


def sp_pieces(text: str) -> list[str]:
    r"""Cut text SentencePiece-style: every space becomes ``▁``, one ``▁`` is
    put in front of the text (so the first word looks like the others), and
    the text is cut before each ``▁``. Other white space (new lines, tabs)
    becomes pieces of its own. Joining the pieces and turning ``▁`` back
    into spaces gives ``" " + text``.

    >>> sp_pieces("a  b\nc")
    ['▁a', '▁', '▁b', '\n', 'c']
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if SPACE in text:
        raise ValueError(f"text contains {SPACE!r} itself, so its spaces could not be told apart from it")
    pieces: list[str] = _PIECE.findall(SPACE + text.replace(" ", SPACE))
    return pieces


def sp_words(text: str) -> list[str]:
    """The pieces of ``sp_pieces`` that BPE trains on: white space other than
    spaces is left out (it never merges). Count them with
    ``word_frequencies(text, split=sp_words)`` and train with
    ``end_of_word=None``: the ``▁`` inside the pieces already marks where
    words start.

    >>> from bpe_lab.core.pretokenize import word_frequencies
    >>> word_frequencies("low low  lower", split=sp_words)
    {'▁low': 2, '▁': 1, '▁lower': 1}
    """
    return [piece for piece in sp_pieces(text) if not piece.isspace()]


def sp_encode(text: str, merges: Sequence[Pair]) -> list[str]:
    """Encode text piece by piece with rank replay; white-space pieces stay
    as they are. Nothing of the text is dropped, so ``sp_decode`` restores it."""
    ranks = merge_ranks(merges, end_of_word=None)
    symbols: list[str] = []
    for piece in sp_pieces(text):
        symbols.extend([piece] if piece.isspace() else replay_symbols(tuple(piece), ranks))
    return symbols


def sp_decode(symbols: Sequence[str]) -> str:
    """Join symbols, turn every ``▁`` back into a space and drop the one
    space ``sp_pieces`` put in front: the exact original text."""
    if isinstance(symbols, str) or not all(isinstance(s, str) for s in symbols):
        raise TypeError("sp_decode() needs a list of symbol strings")
    text = "".join(symbols).replace(SPACE, " ")
    return text[1:] if text.startswith(" ") else text
