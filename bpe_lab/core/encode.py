"""Encoding and decoding with learned merges.

BPE encodes by *replaying* the merges by rank: split the word into symbols,
then repeatedly join the adjacent pair that was learned earliest, until no
learned pair is left. It is not a longest match against the vocabulary. With
the seven merges training learns from ``low / lower / newest / widest``
(notebook 03), the vocabulary holds ``ne``, yet ``nest`` encodes as
``n est</w>``: ``(e, s)`` has rank 0 and fires before ``(n, e)`` (rank 5)
can, and no rule joins ``n`` with ``est</w>``. Longest match takes ``ne``
first and is left with ``s t </w>``. A model's embeddings were trained on the
replayed segmentation, so a longest-match encoder would feed it token ids it
never saw in that context. ``longest_match`` is here only to show the
difference (it is how WordPiece encodes).

>>> merges = [("e", "s"), ("es", "t"), ("est", "</w>"), ("l", "o"), ("lo", "w")]
>>> encode_word("lowest", merges)
['low', 'est</w>']
>>> decode_words(["low", "est</w>"])
'lowest'
>>> seven = merges + [("n", "e"), ("ne", "w")]
>>> encode_word("nest", seven), longest_match("nest", seven)
(['n', 'est</w>'], ['ne', 's', 't', '</w>'])

subword-nmt's convention (``glue_end_of_word=True``: ``</w>`` joined to the
last character) and its output format (``mark_continuations``: ``@@`` after
every piece that does not end a word, the marker dropped), with the merges it
learns from the same corpus. The pieces are apply_bpe's for the same words,
but the words can differ: ``encode_text`` cuts at any white space
(``str.split()``: also tabs, U+00A0 and U+3000), subword-nmt at ASCII spaces
only (``tests/test_subword_nmt.py``):

>>> snmt = [("s", "t</w>"), ("e", "st</w>"), ("l", "o"), ("w", "est</w>")]
>>> encode_text("lowest low", snmt, glue_end_of_word=True)
['lo', 'west</w>', 'lo', 'w</w>']
>>> mark_continuations(encode_text("lowest low", snmt, glue_end_of_word=True))
['lo@@', 'west', 'lo@@', 'w']

BPE-dropout (Provilkov et al., 2020) skips each applicable merge with
probability ``dropout`` at every step, so the same word comes out segmented
in different ways (``dropout=0``, the default, is plain rank replay):

>>> [encode_word("lowest", merges, dropout=0.5, rng=seed) for seed in (5, 2)]
[['lo', 'w', 'est</w>'], ['lo', 'w', 'es', 't', '</w>']]
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from bpe_lab.core.options import WordMarkers
from bpe_lab.core.symbols import END_OF_WORD, Pair
from bpe_lab.core.words import merge_symbols

__all__ = [
    "merge_ranks",
    "vocabulary",
    "replay_symbols",
    "dropout_symbols",
    "encode_word",
    "apply_merges",
    "encode_text",
    "decode_words",
    "longest_match",
    "mark_continuations",
]


def merge_ranks(
    merges: Sequence[Pair],
    *,
    end_of_word: str | None = END_OF_WORD,
    start_of_word: str | None = None,
    glue_end_of_word: bool = False,
) -> dict[Pair, int]:
    """Check a merge list and map each pair to its rank (0 = learned first).

    Every merge must be a pair of non-empty strings whose parts are known when
    it is reached: a single character, a word marker, the result of an
    earlier merge, or (``glue_end_of_word``) a character with the end-of-word
    marker glued to it. A merge list that breaks this was not produced by
    training (or was reordered), and replaying it would silently do the
    wrong thing.
    """
    return _checked_ranks(merges, WordMarkers(end_of_word, start_of_word, glue_end_of_word))


def _checked_ranks(merges: Sequence[Pair], markers: WordMarkers) -> dict[Pair, int]:
    """``merge_ranks`` with the markers already checked: what every encoder
    here runs first, given the ``WordMarkers`` its keywords make."""
    end_of_word = markers.end_of_word
    known = {m for m in (end_of_word, markers.start_of_word) if m}
    ranks: dict[Pair, int] = {}
    for rank, merge in enumerate(merges):
        if not (isinstance(merge, (tuple, list)) and len(merge) == 2 and all(isinstance(s, str) and s for s in merge)):
            raise ValueError(f"merge {rank} is {merge!r}; each merge must be a pair of non-empty strings")
        pair = (merge[0], merge[1])
        for part in pair:
            glued = markers.glue_end_of_word and end_of_word and part.endswith(end_of_word)
            if len(part) > 1 and part not in known and not (glued and len(part) == len(end_of_word or "") + 1):
                raise ValueError(
                    f"merge {rank} {pair!r} uses the symbol {part!r}, which is not a single character, "
                    "a word marker, or the result of an earlier merge"
                )
        if pair in ranks:
            raise ValueError(f"merge {rank} {pair!r} repeats merge {ranks[pair]}")
        ranks[pair] = rank
        known.add(pair[0] + pair[1])
    return ranks


def vocabulary(merges: Sequence[Pair], base_symbols: Sequence[str] = ()) -> list[str]:
    """The base symbols followed by one new symbol per merge, in merge order
    (a symbol that two merges both produce is listed once)."""
    vocab = dict.fromkeys(base_symbols)
    vocab.update(dict.fromkeys(a + b for a, b in merges))
    return list(vocab)


def replay_symbols(symbols: tuple[str, ...], ranks: dict[Pair, int]) -> list[str]:
    """Rank replay on a word already split into symbols, with ``ranks`` from
    ``merge_ranks``: the step ``encode_word`` takes, for callers that check
    the merge list once and encode many words.

    >>> replay_symbols(("l", "o", "w"), {("l", "o"): 0, ("lo", "w"): 1})
    ['low']
    """
    # Each step scans all n-1 pairs for the lowest rank and joins it: at most
    # n-1 steps, so O(n^2) per word. Words are short, so this is fine; see
    # notebook 04 for the linked-list + heap version and for caching.
    while len(symbols) > 1:
        best = min(zip(symbols, symbols[1:]), key=lambda pair: ranks.get(pair, len(ranks)))
        if best not in ranks:
            break
        symbols = merge_symbols(symbols, best)
    return list(symbols)


def dropout_symbols(symbols: tuple[str, ...], ranks: dict[Pair, int], dropout: float, rng: random.Random) -> list[str]:
    """Rank replay with BPE-dropout (Provilkov et al., 2020): at every step
    each adjacent pair is kept with probability ``1 - dropout`` (one
    ``rng.random()`` per pair, left to right, kept if it exceeds
    ``dropout``); the lowest-ranked kept pair is joined wherever it was kept,
    left to right; the word is finished when no kept pair has a rule. The
    draws are the ones subword-nmt's ``apply_bpe --dropout`` makes, so with
    the same seed both give the same pieces (``tests/test_subword_nmt.py``).

    >>> dropout_symbols(("l", "o", "w"), {("l", "o"): 0, ("lo", "w"): 1}, 0.0, random.Random(0))
    ['low']
    """
    word = list(symbols)
    while len(word) > 1:
        kept = [
            (ranks[pair], i) for i, pair in enumerate(zip(word, word[1:])) if rng.random() > dropout and pair in ranks
        ]
        if not kept:
            break
        best = min(kept)[0]
        out: list[str] = []
        i = 0
        for rank, j in kept:
            if rank != best or j < i:  # j < i: overlaps the occurrence just joined (x x x -> xx x)
                continue
            out.extend(word[i:j])
            out.append(word[j] + word[j + 1])
            i = j + 2
        out.extend(word[i:])
        word = out
    return word


def _check_dropout(dropout: object) -> float:
    if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0 <= dropout <= 1:
        raise ValueError(f"dropout must be a probability between 0 and 1, got {dropout!r}")
    return float(dropout)


def encode_word(
    word: str,
    merges: Sequence[Pair],
    *,
    end_of_word: str | None = END_OF_WORD,
    start_of_word: str | None = None,
    glue_end_of_word: bool = False,
    dropout: float = 0.0,
    rng: random.Random | int | None = None,
) -> list[str]:
    """Encode one word by rank replay (see the module docstring).

    Characters never seen in training simply stay single symbols: the
    character base means every word can be encoded. ``glue_end_of_word``
    must be what training used. ``dropout`` > 0 is BPE-dropout
    (``dropout_symbols``), drawn from ``rng``: a ``random.Random``, a seed,
    or None for a fresh generator.
    """
    markers = WordMarkers(end_of_word, start_of_word, glue_end_of_word)
    ranks = _checked_ranks(merges, markers)
    symbols = markers.symbols(word)
    if _check_dropout(dropout):
        return dropout_symbols(symbols, ranks, dropout, rng if isinstance(rng, random.Random) else random.Random(rng))
    return replay_symbols(symbols, ranks)


def apply_merges(
    word: str,
    merges: Sequence[Pair],
    *,
    end_of_word: str | None = END_OF_WORD,
    start_of_word: str | None = None,
    glue_end_of_word: bool = False,
) -> list[str]:
    """Encode by applying every merge once, in order, to the whole word.

    This is what training did to the corpus, so for merges learned by training
    it gives the same result as rank replay; rank replay is preferred because
    it only looks at the pairs actually present (O(n^2) in the word length
    instead of O(number of merges)).
    """
    markers = WordMarkers(end_of_word, start_of_word, glue_end_of_word)
    _checked_ranks(merges, markers)
    symbols = markers.symbols(word)
    for pair in merges:
        symbols = merge_symbols(symbols, (pair[0], pair[1]))
    return list(symbols)


def encode_text(
    text: str,
    merges: Sequence[Pair],
    *,
    end_of_word: str | None = END_OF_WORD,
    start_of_word: str | None = None,
    glue_end_of_word: bool = False,
) -> list[str]:
    """Encode every white-space separated word of ``text``; the merge list is
    checked once, not once per word. Words end at any white space
    (``str.split()``: also tabs, U+00A0 and U+3000); subword-nmt's
    ``apply_bpe`` ends them at ASCII spaces only, so a text with other
    white space is cut into other words there."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    markers = WordMarkers(end_of_word, start_of_word, glue_end_of_word)
    ranks = _checked_ranks(merges, markers)
    symbols: list[str] = []
    for word in text.split():
        symbols.extend(replay_symbols(markers.symbols(word), ranks))
    return symbols


def decode_words(
    symbols: Sequence[str], *, end_of_word: str | None = END_OF_WORD, start_of_word: str | None = None
) -> str:
    """Join symbols back into text: each end-of-word marker (or each
    start-of-word marker, SentencePiece style) becomes a word boundary.

    >>> decode_words(["low</w>", "n", "e", "w", "est</w>"])
    'low newest'
    >>> decode_words(["▁low", "▁new", "est"], end_of_word=None, start_of_word="▁")
    'low newest'
    """
    WordMarkers(end_of_word, start_of_word)  # checks them
    if isinstance(symbols, str) or not all(isinstance(s, str) for s in symbols):
        raise TypeError("decode_words() needs a list of symbol strings")
    text = "".join(symbols)
    if end_of_word:
        words = text.split(end_of_word)
        if words and words[-1] == "":
            words.pop()
        text = " ".join(words)
    if start_of_word:
        text = text.replace(start_of_word, " ")
        if text.startswith(" "):
            text = text[1:]
    return text


def longest_match(
    word: str, merges: Sequence[Pair], *, end_of_word: str | None = END_OF_WORD, start_of_word: str | None = None
) -> list[str]:
    """Greedy longest match, the WordPiece way, for contrast only.

    From the left, take the longest run of starting symbols whose join is in
    the vocabulary (single symbols always are). O(n^2) lookups per word.
    """
    markers = WordMarkers(end_of_word, start_of_word)
    _checked_ranks(merges, markers)
    vocab = set(vocabulary(merges))
    symbols = markers.symbols(word)
    out: list[str] = []
    i = 0
    while i < len(symbols):
        j = len(symbols)
        while j > i + 1 and "".join(symbols[i:j]) not in vocab:
            j -= 1
        out.append("".join(symbols[i:j]))
        i = j
    return out


def mark_continuations(symbols: Sequence[str], *, end_of_word: str = END_OF_WORD, separator: str = "@@") -> list[str]:
    """The pieces as subword-nmt's ``apply_bpe`` prints them: the end-of-word
    marker dropped, and ``separator`` after every piece that does not end a
    word, so that ``" ".join(...)`` reads ``lo@@ west lo@@ w`` and
    ``.replace("@@ ", "")`` restores the words.

    >>> mark_continuations(["n", "e", "w", "est", "</w>", "low</w>"])
    ['n@@', 'e@@', 'w@@', 'est', 'low']
    """
    if isinstance(symbols, str) or not all(isinstance(s, str) for s in symbols):
        raise TypeError("mark_continuations() needs a list of symbol strings")
    if not end_of_word:
        raise ValueError("mark_continuations() needs the end-of-word marker that ends each word")
    out: list[str] = []
    for symbol in symbols:
        if not symbol.endswith(end_of_word):
            out.append(symbol + separator)
        elif symbol != end_of_word:
            out.append(symbol[: -len(end_of_word)])
        elif out and out[-1].endswith(separator):  # a lone </w>: the piece before it ended the word
            out[-1] = out[-1][: -len(separator)]
    return out
