"""A byte-level BPE tokenizer: text -> token ids -> text, GPT-2 style.

What it adds over ``encode.py`` (characters, ``</w>``): the symbols are UTF-8
bytes, so any string can be encoded and nothing is out of vocabulary; the text
is cut with GPT-2's pre-tokenization regex first, and merges never cross a
pre-token; special tokens such as ``<|endoftext|>`` are found first and map
to one id each, never split or merged.

Encoding, in three steps:

1. cut out special tokens, longest first (so ``<|a|><|a|>`` beats ``<|a|>``);
2. cut each ordinary stretch with ``GPT2_PATTERN`` into pre-tokens
   (``gpt2_pretokenize``, which runs faster equivalents of the pattern);
3. replay the merges by rank inside each pre-token (``bytelevel_encode``).

Step 3 is the slow one in pure Python, but real text repeats itself: the
standard library's 8 million pre-tokens hold only about 100,000 distinct ones.
So each distinct pre-token is encoded once and its ids are cached; after the
first few pages nearly every pre-token is a dictionary lookup, and the regex
of step 2 is what sets the speed.

>>> tok = Tokenizer.byte_level()   # 256 byte tokens, no merges
>>> tok.encode("hé!")
[104, 195, 169, 33]
>>> tok.decode([104, 195, 169, 33])
'hé!'
>>> tok.decode([104, 195])        # half a character decodes to U+FFFD
'h�'
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import chain

from bpe_lab.bytelevel.encoders import LONG_PIECE, heap_merges, scan_merge_ids
from bpe_lab.core.pretokenize import gpt2_pretokenize, special_token_pattern

__all__ = ["Tokenizer"]

#: How far past a pre-token's start GPT2_PATTERN may look to decide it: the
#: contractions ``'ll``, ``'re``, ``'ve`` need three characters.
_REGEX_REACH = 3


#: Pre-tokens longer than this are encoded but not cached: they rarely come
#: back, and one megabyte-long run of spaces should not sit in memory.
_LONGEST_CACHED = 256


class _PieceCache(dict):
    """pre-token -> tuple of ids; a miss encodes the pre-token and stores it.

    Being a ``dict`` with ``__missing__`` lets the hot loop be
    ``map(cache.__getitem__, pieces)``: a hit never leaves C. The cache is
    bounded so that encoding a huge file runs in fixed memory: when it is full
    it is emptied, and the frequent pre-tokens come back within a few lines.
    """

    def __init__(self, encode_piece, max_size: int):
        super().__init__()
        self.encode_piece = encode_piece
        self.max_size = max_size

    def __missing__(self, piece: str) -> tuple[int, ...]:
        ids = self.encode_piece(piece)
        if len(piece) <= _LONGEST_CACHED:
            if len(self) >= self.max_size:
                self.clear()
            self[piece] = ids
        return ids


class Tokenizer:
    """Byte-level BPE with GPT-2's pre-tokenization and special tokens.

    ``vocab`` maps each id to its bytes and must hold all 256 single bytes;
    ``merges`` is the merge list in the order it was learned, each merge a pair
    of byte strings that are single bytes or results of earlier merges, and
    whose join is in ``vocab``. A special token that is not in ``vocab`` yet
    gets the next free id, in the order given. ``max_cached_pieces`` bounds the
    pre-token cache (about 150 bytes per entry).
    """

    def __init__(
        self,
        vocab: Mapping[int, bytes],
        merges: Sequence[tuple[bytes, bytes]],
        special_tokens: Sequence[str] | None = None,
        *,
        max_cached_pieces: int = 200_000,
    ):
        self.vocab: dict[int, bytes] = _checked_vocab(vocab)
        self._id_of: dict[bytes, int] = {token: i for i, token in self.vocab.items()}
        self.merges: list[tuple[bytes, bytes]] = _checked_merges(merges, self._id_of)
        self._ranks = {pair: rank for rank, pair in enumerate(self.merges)}
        # The same merge table on ids, for the fast path of _encode_piece
        # (bytelevel_encode.scan_merge_ids): pair of ids -> rank, rank -> new id.
        id_of = self._id_of
        self._byte_ids = [id_of[bytes([b])] for b in range(256)]
        self._id_ranks = {(id_of[left], id_of[right]): rank for (left, right), rank in self._ranks.items()}
        self._merged_ids = [id_of[left + right] for left, right in self.merges]
        if isinstance(special_tokens, str):
            raise TypeError(f"special_tokens must be a list of strings, got the string {special_tokens!r}")
        self.special_tokens: list[str] = list(special_tokens or [])
        self._special_re = special_token_pattern(self.special_tokens)  # checks duplicates
        self.special_ids: dict[str, int] = self._add_special_tokens()
        # Every prefix of every special token: a block ending in one of them
        # may be the start of a special token that the next line completes.
        self._special_prefixes = {s[:k] for s in self.special_tokens for k in range(1, len(s) + 1)}
        self._longest_special = max(map(len, self.special_tokens), default=0)
        if max_cached_pieces < 1:
            raise ValueError(f"max_cached_pieces must be at least 1, got {max_cached_pieces}")
        self._cache = _PieceCache(self._encode_piece, max_cached_pieces)

    @classmethod
    def byte_level(cls, special_tokens: Sequence[str] | None = None) -> Tokenizer:
        """The tokenizer before any training: id i is byte i, no merges."""
        return cls({i: bytes([i]) for i in range(256)}, [], special_tokens)

    def _add_special_tokens(self) -> dict[str, int]:
        ids = {}
        next_id = max(self.vocab) + 1
        for token in self.special_tokens:
            data = token.encode("utf-8")
            if data not in self._id_of:
                self.vocab[next_id] = data
                self._id_of[data] = next_id
                next_id += 1
            ids[token] = self._id_of[data]
        return ids

    @property
    def pair_ranks(self) -> dict[tuple[bytes, bytes], int]:
        """The merges as a lookup table ``(left, right) -> rank``, the form the
        encoders of ``bytelevel_encode`` take (shared: do not mutate)."""
        return self._ranks

    def __len__(self) -> int:
        """The number of ids, special tokens included."""
        return len(self.vocab)

    def __repr__(self) -> str:
        return f"Tokenizer({len(self.vocab)} ids, {len(self.merges)} merges, special_tokens={self.special_tokens!r})"

    # ----------------------------------------------------------------- encode

    def encode(self, text: str) -> list[int]:
        """Token ids for ``text``; special tokens in it become their single id."""
        if not isinstance(text, str):
            raise TypeError(f"encode() needs a str, got {type(text).__name__}")
        ids, _ = self._encode_settled(text, final=True)
        return ids

    def encode_iterable(self, lines: Iterable[str], *, block_chars: int = 1 << 14) -> Iterator[int]:
        """Ids of the concatenated ``lines``, produced lazily in fixed memory.

        The result equals ``encode("".join(lines))``, which is not the same as
        encoding line by line: GPT-2's pattern glues a run of white space
        together across the newline (``"\\n\\n"`` is one token), a special token
        may be cut in half by a chunk boundary, and a contraction needs to see
        three characters. So lines are gathered (or cut) into blocks of about
        ``block_chars`` characters; each block's *settled* part is encoded and
        the rest (the last pre-token, any pre-token starting in the last three
        characters, a possible beginning of a special token) is carried into
        the next block. Memory: one block and its pre-tokens, the carry, the
        bounded pre-token cache, and the longest line ``lines`` hands over.
        """
        if block_chars < 1:
            raise ValueError(f"block_chars must be at least 1, got {block_chars}")
        # The generator hands over one list of ids per block and chain()
        # flattens them in C: a generator yielding each id itself spends
        # over a tenth of the encoding time just resuming its frame.
        return chain.from_iterable(self._id_lists(lines, block_chars))

    def _id_lists(self, lines: Iterable[str], block_chars: int) -> Iterator[list[int]]:
        """encode_iterable's work: the ids of each block, as one list."""
        carry = ""
        pending: list[str] = []
        size = 0
        for block in _blocks(lines, block_chars):  # O(total length): each character is scanned about twice
            pending.append(block)
            size += len(block)
            # Waiting for at least len(carry) new characters keeps the work
            # linear even when one pre-token (a megabyte of spaces) spans many blocks.
            if size >= len(carry):
                ids, carry = self._encode_settled(carry + "".join(pending), final=False)
                pending.clear()
                size = 0
                yield ids
        ids, _ = self._encode_settled(carry + "".join(pending), final=True)
        yield ids

    def _encode_settled(self, text: str, *, final: bool) -> tuple[list[int], str]:
        """Encode the part of ``text`` that more text could not change.

        Returns the ids and the unsettled rest (``""`` when ``final``).
        """
        cut = len(text) if final else self._special_cut(text)
        ids: list[int] = []
        start = 0
        if self._special_re is not None:
            for match in self._special_re.finditer(text):  # O(len(text))
                if match.end() > cut:  # a special token across the cut waits too
                    cut = min(cut, match.start())
                    break
                self._extend(ids, gpt2_pretokenize(text[start : match.start()]))
                ids.append(self.special_ids[match.group()])
                start = match.end()
        # gpt2_pretokenize takes a fast path for ASCII text, so it is given
        # each stretch on its own: one non-ASCII character elsewhere does
        # not slow the others down (slicing is a fast copy).
        pieces = gpt2_pretokenize(text[start:cut])
        if final:
            self._extend(ids, pieces)
            return ids, ""
        count, chars = _unsettled(pieces)
        del pieces[len(pieces) - count :]
        self._extend(ids, pieces)
        return ids, text[cut - chars :]

    def _special_cut(self, text: str) -> int:
        """Where the longest suffix of ``text`` that begins a special token
        starts (more text might complete it), or ``len(text)``."""
        for i in range(max(0, len(text) - self._longest_special + 1), len(text)):  # O(longest special)
            if text[i:] in self._special_prefixes:
                return i
        return len(text)

    def _extend(self, ids: list[int], pieces: list[str]) -> None:
        # The hot loop: one C-level dict lookup per pre-token (O(number of
        # pre-tokens)); only a cache miss runs Python code (_encode_piece).
        ids.extend(chain.from_iterable(map(self._cache.__getitem__, pieces)))

    def _encode_piece(self, piece: str) -> tuple[int, ...]:
        """Ids of one pre-token, by rank replay over its bytes."""
        try:
            data = piece.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: encode it as U+FFFD, as tiktoken does
            data = piece.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode("utf-8")
        if len(data) == 1:  # a single byte is its own token: nothing to merge
            return (self._byte_ids[data[0]],)
        if len(data) > LONG_PIECE:  # rare: the heap's O(n log n) pays off
            return tuple(map(self._id_of.__getitem__, heap_merges(data, self._ranks)))
        # The common case: scan_merges' steps done on ids, which makes a cache
        # miss about 15% cheaper (a cold-cache encode of the benchmark ~7% faster).
        return tuple(scan_merge_ids(list(map(self._byte_ids.__getitem__, data)), self._id_ranks, self._merged_ids))

    # ----------------------------------------------------------------- decode

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The bytes of ``ids`` joined: what ``decode`` turns into text."""
        ids = list(ids)
        try:
            return b"".join(map(self.vocab.__getitem__, ids))
        except (KeyError, TypeError):
            for position, token_id in enumerate(ids):
                try:
                    known = token_id in self.vocab
                except TypeError:  # unhashable, e.g. a list
                    known = False
                if not known:
                    raise ValueError(
                        f"unknown token id {token_id!r} at position {position}; "
                        f"this tokenizer has {len(self.vocab)} ids, the largest {max(self.vocab)}"
                    ) from None
            raise

    def decode(self, ids: Iterable[int]) -> str:
        """Text of ``ids``. Bytes that are not valid UTF-8 (a sequence cut in the
        middle of a character) become U+FFFD, as in tiktoken and HF tokenizers."""
        return self.decode_bytes(ids).decode("utf-8", errors="replace")

    # ------------------------------------------------------------------ files

    def save(self, path: str | os.PathLike) -> None:
        """Write the tokenizer as JSON at ``path``, and a readable listing of
        the vocabulary beside it (same name, suffix ``.vocab``)."""
        from bpe_lab.bytelevel.files import save_tokenizer

        save_tokenizer(self, path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> Tokenizer:
        """Read a tokenizer written by ``save``."""
        from bpe_lab.bytelevel.files import load_tokenizer

        return load_tokenizer(path, cls)

    @classmethod
    def from_files(
        cls, vocab_path: str | os.PathLike, merges_path: str | os.PathLike, special_tokens: Sequence[str] | None = None
    ) -> Tokenizer:
        """Read GPT-2's ``vocab.json`` + ``merges.txt`` (its printable byte map)."""
        from bpe_lab.bytelevel.files import read_gpt2_files

        vocab, merges = read_gpt2_files(vocab_path, merges_path)
        return cls(vocab, merges, special_tokens)


def _blocks(lines: Iterable[str], block_chars: int) -> Iterator[str]:
    """The text of ``lines`` in blocks of about ``block_chars`` characters.

    Short lines are gathered, and a line longer than a block is cut into
    blocks too, so the work per block stays small whatever the line lengths.
    Any cut is safe: ``_encode_settled`` holds back whatever a cut may change.
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


def _unsettled(pieces: list[str]) -> tuple[int, int]:
    """How many pre-tokens at the end of ``pieces``, and how many characters,
    could still be cut differently once more text follows.

    The last pre-token can grow (``"wor"`` + ``"ld"``) or shrink (a run of white
    space gives its last space to the next word: ``"  "`` + ``"x"``). A
    pre-token that starts within ``_REGEX_REACH`` characters of the end was
    decided without seeing three characters (``"'l"`` + ``"l"`` is ``'ll``, not
    ``'`` then ``ll``). Every earlier pre-token was decided by characters that
    are all present, so it stays as it is.

    >>> _unsettled(["x", "'", "l"])
    (2, 2)
    >>> _unsettled(["Hello", " world"])
    (1, 6)
    """
    if not pieces:
        return 0, 0
    count, chars = 1, len(pieces[-1])
    while count < len(pieces) and chars + len(pieces[-count - 1]) < _REGEX_REACH:  # at most 3 steps
        count += 1
        chars += len(pieces[-count])
    return count, chars


def _checked_vocab(vocab: Mapping[int, bytes]) -> dict[int, bytes]:
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
        pair = (pair[0], pair[1])
        if pair in self._seen:
            return f"{shown or repr(pair)} repeats {self._seen[pair]}"
        self._seen[pair] = label
        self._produced.add(pair[0] + pair[1])
        return None


def _checked_merges(merges: Sequence[tuple[bytes, bytes]], id_of: Mapping[bytes, int]) -> list[tuple[bytes, bytes]]:
    """The merges as a list of tuples, or ValueError naming the first bad one."""
    if isinstance(merges, (str, bytes)) or not isinstance(merges, Iterable):
        raise TypeError(f"merges must be a list of (bytes, bytes) pairs, got {type(merges).__name__}")
    checker = MergeChecker(id_of)
    checked: list[tuple[bytes, bytes]] = []
    for rank, pair in enumerate(merges):  # O(number of merges)
        problem = checker.add(pair, f"merge {rank}")
        if problem:
            raise ValueError(f"merge {rank} {problem}")
        checked.append((pair[0], pair[1]))
    return checked
