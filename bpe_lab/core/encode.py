"""Encoding and decoding with learned merges.

BPE encodes by *replaying* the merges by rank: split the word into symbols,
then repeatedly join the adjacent pair that was learned earliest, until no
learned pair is left. It is not a longest match against the vocabulary: with
merges ``(a,b), (b,c), (a,bc)`` the vocabulary holds ``abc``, yet ``abc``
encodes as ``ab c``, because ``(a,b)`` fires first and no rule joins
``ab`` with ``c``. A model's embeddings were trained on the replayed
segmentation, so a longest-match encoder would feed it token ids it never saw
in that context. ``longest_match`` is here only to show the difference (it is
how WordPiece encodes).

>>> merges = [("e", "s"), ("es", "t"), ("est", "</w>"), ("l", "o"), ("lo", "w")]
>>> encode_word("lowest", merges)
['low', 'est</w>']
>>> decode_words(["low", "est</w>"])
'lowest'
>>> encode_word("abc", [("a", "b"), ("b", "c"), ("a", "bc")], end_of_word=None)
['ab', 'c']
>>> longest_match("abc", [("a", "b"), ("b", "c"), ("a", "bc")], end_of_word=None)
['abc']
"""

from __future__ import annotations

from collections.abc import Sequence

from bpe_lab.core.symbols import END_OF_WORD, Pair, check_markers
from bpe_lab.core.train import merge_symbols, word_to_symbols

__all__ = [
    "merge_ranks",
    "vocabulary",
    "replay_symbols",
    "encode_word",
    "apply_merges",
    "encode_text",
    "decode_words",
    "longest_match",
]


def merge_ranks(
    merges: Sequence[Pair], *, end_of_word: str | None = END_OF_WORD, start_of_word: str | None = None
) -> dict[Pair, int]:
    """Check a merge list and map each pair to its rank (0 = learned first).

    Every merge must be a pair of non-empty strings whose parts are known when
    it is reached: a single character, a word marker, or the result of an
    earlier merge. A merge list that breaks this was not produced by training
    (or was reordered), and replaying it would silently do the wrong thing.
    """
    check_markers(end_of_word, start_of_word)
    known = {m for m in (end_of_word, start_of_word) if m}
    ranks: dict[Pair, int] = {}
    for rank, merge in enumerate(merges):
        if not (isinstance(merge, (tuple, list)) and len(merge) == 2 and all(isinstance(s, str) and s for s in merge)):
            raise ValueError(f"merge {rank} is {merge!r}; each merge must be a pair of non-empty strings")
        pair = (merge[0], merge[1])
        for part in pair:
            if len(part) > 1 and part not in known:
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


def encode_word(
    word: str, merges: Sequence[Pair], *, end_of_word: str | None = END_OF_WORD, start_of_word: str | None = None
) -> list[str]:
    """Encode one word by rank replay (see the module docstring).

    Characters never seen in training simply stay single symbols: the
    character base means every word can be encoded.
    """
    ranks = merge_ranks(merges, end_of_word=end_of_word, start_of_word=start_of_word)
    return replay_symbols(word_to_symbols(word, end_of_word=end_of_word, start_of_word=start_of_word), ranks)


def apply_merges(
    word: str, merges: Sequence[Pair], *, end_of_word: str | None = END_OF_WORD, start_of_word: str | None = None
) -> list[str]:
    """Encode by applying every merge once, in order, to the whole word.

    This is what training did to the corpus, so for merges learned by training
    it gives the same result as rank replay; rank replay is preferred because
    it only looks at the pairs actually present (O(n^2) in the word length
    instead of O(number of merges)).
    """
    merge_ranks(merges, end_of_word=end_of_word, start_of_word=start_of_word)
    symbols = word_to_symbols(word, end_of_word=end_of_word, start_of_word=start_of_word)
    for pair in merges:
        symbols = merge_symbols(symbols, (pair[0], pair[1]))
    return list(symbols)


def encode_text(
    text: str, merges: Sequence[Pair], *, end_of_word: str | None = END_OF_WORD, start_of_word: str | None = None
) -> list[str]:
    """Encode every white-space separated word of ``text``; the merge list is
    checked once, not once per word."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    ranks = merge_ranks(merges, end_of_word=end_of_word, start_of_word=start_of_word)
    symbols: list[str] = []
    for word in text.split():
        symbols.extend(
            replay_symbols(word_to_symbols(word, end_of_word=end_of_word, start_of_word=start_of_word), ranks)
        )
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
    check_markers(end_of_word, start_of_word)
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
    merge_ranks(merges, end_of_word=end_of_word, start_of_word=start_of_word)
    vocab = set(vocabulary(merges))
    symbols = word_to_symbols(word, end_of_word=end_of_word, start_of_word=start_of_word)
    out: list[str] = []
    i = 0
    while i < len(symbols):
        j = len(symbols)
        while j > i + 1 and "".join(symbols[i:j]) not in vocab:
            j -= 1
        out.append("".join(symbols[i:j]))
        i = j
    return out
