"""The checks a byte-level vocabulary and merge list must pass, in one place.

What this adds over ``core/mergefile.py`` (which checks a textbook merges file
of characters): the rules of byte-level BPE, shared by every way a tokenizer
is made, the ``Tokenizer`` constructor and the file readers of ``files.py``:

- a vocabulary maps ids (non-negative ints) to non-empty, distinct byte
  strings and holds all 256 single bytes, so any text can be encoded;
- a merge joins two symbols that exist at that point (single bytes or results
  of earlier merges), its result is in the vocabulary, and no merge repeats;
- a token id to decode is an integer (``int`` or a NumPy integer, not a bool).

Each error names what is wrong and where (the merge's rank; the file readers
add the line).

>>> vocab = checked_vocab({i: bytes([i]) for i in range(256)} | {256: b"ab"})
>>> id_of = {token: i for i, token in vocab.items()}
>>> checked_merges([(b"a", b"b")], id_of)
[(b'a', b'b')]
>>> checked_merges([(b"ab", b"c")], id_of)
Traceback (most recent call last):
...
ValueError: merge 0 (b'ab', b'c'): the part b'ab' is neither a single byte nor the result of an earlier merge
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping, Sequence
from typing import cast

__all__ = ["checked_vocab", "merge_problem", "MergeChecker", "checked_merges", "check_token_ids"]


def checked_vocab(vocab: Mapping[int, bytes]) -> dict[int, bytes]:
    """A copy of ``vocab``, or ValueError naming what is wrong with it."""
    if not isinstance(vocab, Mapping):
        raise TypeError(f"vocab must be a dict of id -> bytes, got {type(vocab).__name__}")
    checked: dict[int, bytes] = {}
    first_id: dict[bytes, int] = {}
    for token_id, token in vocab.items():  # O(vocabulary size)
        if isinstance(token_id, bool) or not isinstance(token_id, int) or token_id < 0:
            raise ValueError(f"vocab id {token_id!r} is not a non-negative integer")
        if not isinstance(token, bytes) or not token:
            raise ValueError(f"vocab id {token_id} maps to {token!r}; tokens must be non-empty bytes")
        if token in first_id:
            raise ValueError(
                f"vocab ids {first_id[token]} and {token_id} both map to {token!r}; each token needs one id"
            )
        first_id[token] = token_id
        checked[token_id] = token
    missing = [b for b in range(256) if bytes([b]) not in first_id]
    if missing:
        raise ValueError(
            f"vocab has no token for {len(missing)} single byte(s), the first 0x{missing[0]:02x}; "
            "a byte-level vocabulary needs all 256 so that any text can be encoded"
        )
    return checked


def merge_problem(pair: object, id_of: Mapping[bytes, int], produced: set[bytes]) -> str | None:
    """Why ``pair`` cannot be the next merge, or None if it can.

    A merge joins two symbols that exist at that point (single bytes or
    results of earlier merges, all in the vocabulary) into a token that is in
    the vocabulary.
    """
    if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and all(isinstance(p, bytes) and p for p in pair)):
        return f"{pair!r} is not a pair of non-empty byte strings"
    left, right = pair
    for part in (left, right):
        if part not in id_of:
            return f"{(left, right)!r}: the part {part!r} is not in the vocabulary"
        if len(part) > 1 and part not in produced:
            return f"{(left, right)!r}: the part {part!r} is neither a single byte nor the result of an earlier merge"
    if left + right not in id_of:
        return f"{(left, right)!r}: the result {left + right!r} is not in the vocabulary"
    return None


class MergeChecker:
    """Checks a merge list one merge at a time, in order, as it is read.

    Shared by the constructor and the file readers, so every source of merges
    gets the same checks (``merge_problem`` plus "no merge twice"), and each
    caller only adds where the bad merge came from (a rank, a line).
    """

    def __init__(self, id_of: Mapping[bytes, int]):
        self._id_of = id_of
        self._produced: set[bytes] = set()
        self._seen: dict[tuple[bytes, bytes], str] = {}

    def add(self, pair: object, label: str, shown: str | None = None) -> str | None:
        """Accept ``pair`` as the next merge, or say why it cannot be. ``label``
        names it in a later "repeats" message; ``shown`` is how to quote it."""
        problem = merge_problem(pair, self._id_of, self._produced)
        if problem:
            return problem
        left, right = cast("tuple[bytes, bytes]", pair)  # merge_problem checked it
        if (left, right) in self._seen:
            return f"{shown or repr((left, right))} repeats {self._seen[left, right]}"
        self._seen[left, right] = label
        self._produced.add(left + right)
        return None


def checked_merges(merges: Sequence[tuple[bytes, bytes]], id_of: Mapping[bytes, int]) -> list[tuple[bytes, bytes]]:
    """The merges as a list of tuples, or ValueError naming the first bad one."""
    if isinstance(merges, (str, bytes)) or not isinstance(merges, Iterable):
        raise TypeError(f"merges must be a list of (bytes, bytes) pairs, got {type(merges).__name__}")
    checker = MergeChecker(id_of)
    checked: list[tuple[bytes, bytes]] = []
    for rank, pair in enumerate(merges):  # O(number of merges)
        problem = checker.add(pair, f"merge {rank}")
        if problem:
            raise ValueError(f"merge {rank} {problem}")
        checked.append((pair[0], pair[1]))  # a tuple even if given as a list
    return checked


def check_token_ids(ids: Sequence[object]) -> None:
    """TypeError at the first id that is not an integer (a NumPy integer is
    one, a bool is not, though Python counts it as one). O(len(ids)) in C:
    each distinct type is judged once, and positions are looked at only to
    name the first bad one."""
    kinds = set(map(type, ids))
    bad = {kind for kind in kinds if issubclass(kind, bool) or not issubclass(kind, numbers.Integral)}
    if not bad:
        return
    position = next(i for i, token_id in enumerate(ids) if type(token_id) in bad)
    token_id = ids[position]
    raise TypeError(f"token ids must be integers, got {token_id!r} ({type(token_id).__name__}) at position {position}")
