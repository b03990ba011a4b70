"""A byte-level BPE tokenizer: text -> token ids -> text, GPT-2 style.

What it adds over ``core/encode.py`` (characters, ``</w>``): the symbols are UTF-8
bytes, so any string can be encoded and nothing is out of vocabulary; the text
is cut with a pre-tokenization regex first (GPT-2's, or the one ``pattern``
names: r50k, cl100k, o200k, Llama 3, or a regex of one's own), and merges
never cross a pre-token; special tokens such as ``<|endoftext|>`` are found
first and map to one id each, never split or merged, when the caller allows it.

Encoding, in three steps:

1. cut out the allowed special tokens, longest first (so ``<|a|><|a|>`` beats
   ``<|a|>``), after refusing any disallowed one (see ``Tokenizer``);
2. cut each ordinary stretch into pre-tokens with the pattern (for a named
   one, faster equivalents of it: Python's ``re`` on ASCII text and ``regex``
   around the rest; for a regex of one's own, the ``regex`` module, as
   ``core.patterns.Pattern.split`` says);
3. replay the merges by rank inside each pre-token (``encoders.py``).

Step 3 is the slow one in pure Python, but real text repeats itself: the
standard library's 8 million pre-tokens hold only about 100,000 distinct ones,
so each distinct one is encoded once and its ids are cached; a cache hit is
one dict lookup in C, and only a miss runs the rank replay. ``make bench``
measures where the time goes (its single-thread ``encode`` row, a fresh
tokenizer beside tiktoken's ``encode_ordinary`` on the same text: steps 1-2,
the hits, the misses, and the ratio to tiktoken). ``encode_file`` uses every
core.

>>> tok = Tokenizer.byte_level()   # 256 byte tokens, no merges
>>> tok.encode("hé!")
[104, 195, 169, 33]
>>> tok.decode([104, 195, 169, 33])
'hé!'
>>> tok.decode([104, 195])        # half a character decodes to U+FFFD
'h�'
>>> tok = Tokenizer.byte_level(["<|endoftext|>"])
>>> tok.encode("a<|endoftext|>")  # the tokenizer's own special tokens: allowed
[97, 256]
>>> len(tok.encode_ordinary("a<|endoftext|>"))  # plain text: 14 bytes, 14 ids
14
>>> tok.encode("a<|endoftext|>", allowed_special=set())
Traceback (most recent call last):
...
ValueError: the text contains the special token '<|endoftext|>' at character 1, which disallowed_special refuses. ...
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import reduce
from itertools import chain
from operator import iadd
from typing import TYPE_CHECKING, Any

import regex

from bpe_lab.bytelevel.encoders import MergeTable, byte_pair_encode
from bpe_lab.bytelevel.files import PathLike, read_gpt2_files, read_tokenizer_file, write_tokenizer_file
from bpe_lab.bytelevel.specials import AllowedSpecial, DisallowedSpecial, SpecialTokens
from bpe_lab.bytelevel.streaming import CUT_LIKE_GPT2, blocks, last_safe_cut, unsettled
from bpe_lab.bytelevel.vocab import check_token_ids, checked_merges, checked_vocab
from bpe_lab.core.patterns import Pattern, resolve_pattern
from bpe_lab.core.symbols import check_int

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import DTypeLike, NDArray

__all__ = ["Tokenizer"]

#: What a pickled Tokenizer leaves out and rebuilds when loaded: the cache
#: (it starts empty) and what its pattern gives.
_REBUILT_ON_LOAD = ("_cache", "pattern", "_split", "_by_reach", "_safe_cut")

#: Pre-tokens longer than this are encoded but not cached: they rarely come
#: back, and one megabyte-long run of spaces should not sit in memory.
_LONGEST_CACHED = 256


class _PieceCache(dict[str, tuple[int, ...]]):
    """pre-token -> tuple of ids; a miss encodes the pre-token and stores it.

    Being a ``dict`` with ``__missing__`` lets the hot loop be
    ``map(cache.__getitem__, pieces)``: a hit never leaves C. The cache is
    bounded so that encoding a huge file runs in fixed memory: when it is full
    it is emptied, and the frequent pre-tokens come back within a few lines.
    """

    def __init__(self, encode_piece: Callable[[str], tuple[int, ...]], max_size: int):
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
    """Byte-level BPE with a pre-tokenization pattern and special tokens.

    ``vocab`` maps each id to its bytes and must hold all 256 single bytes;
    ``merges`` is the merge list in the order it was learned, each merge a pair
    of byte strings that are single bytes or results of earlier merges, and
    whose join is in ``vocab`` (``vocab.py`` checks both). A special token that
    is not in ``vocab`` yet gets the next free id, in the order given.
    ``pattern`` is the pre-tokenizer, a name of ``core.patterns.PATTERNS``
    (``"gpt2"``, ``"r50k"``, ``"cl100k"``, ``"o200k"``, ``"llama3"``) or a regex
    (tiktoken's ``pat_str``, minbpe's ``pattern``); give it the one the merges
    were trained with. ``self.pattern`` is the ``Pattern`` (its ``name``, or
    None for a regex of one's own, and its ``regex``); ``save`` records both.
    ``max_cached_pieces`` bounds the pre-token cache (about 150 bytes per entry).

    Special tokens follow tiktoken's keywords with another default.
    ``encode(text)`` turns each special token this tokenizer was made with into
    its id (``allowed_special="all"``), as Stanford CS336's tests expect: a
    tokenizer made with ``special_tokens`` is mostly given training text, where
    ``<|endoftext|>`` separates documents on purpose. tiktoken's default is the
    opposite, ``allowed_special=set()``: text is often typed by users, and one
    who types ``<|endoftext|>`` must not be able to end the document or forge
    a chat template's markers (special-token injection), so finding one raises.
    Side by side, with GPT-2's tokenizer (``gpt2_tokenizer()``; tiktoken 0.14's
    ``gpt2`` encoding) and the typed text ``"Hi<|endoftext|>"``:

    - ``encode(text)``: here ``[17250, 50256]``, the user's text ends the
      document; in tiktoken ValueError;
    - ``encode(text, allowed_special=set())``: ValueError in both;
    - ``encode_ordinary(text)``: ``[17250, 27, 91, 437, 1659, 5239, 91, 29]``
      in both, the token as eight ordinary ids.

    For untrusted text, use ``encode_ordinary(text)`` (special tokens are
    encoded as ordinary text) or ``encode(text, allowed_special=set())`` (they
    raise ValueError, as in tiktoken); ``docs/api.md`` has the whole table.
    """

    def __init__(
        self,
        vocab: Mapping[int, bytes],
        merges: Sequence[tuple[bytes, bytes]],
        special_tokens: Sequence[str] | None = None,
        *,
        pattern: str | Pattern = "gpt2",
        max_cached_pieces: int = 200_000,
    ):
        self._use_pattern(resolve_pattern(pattern))  # raises for a bad name or regex
        self.vocab: dict[int, bytes] = checked_vocab(vocab)
        self._id_of: dict[bytes, int] = {token: i for i, token in self.vocab.items()}
        self.merges: list[tuple[bytes, bytes]] = checked_merges(merges, self._id_of)
        self._ranks = {pair: rank for rank, pair in enumerate(self.merges)}
        # The same merge list on ids, for encoders.byte_pair_encode.
        self._table = MergeTable.from_merges(self.merges, self._id_of)
        self._specials = SpecialTokens(special_tokens or [])  # checks them
        self.special_tokens: list[str] = self._specials.tokens
        self.special_ids: dict[str, int] = self._add_special_tokens()
        self.max_cached_pieces: int = check_int(max_cached_pieces, "max_cached_pieces", minimum=1)
        self._cache = _PieceCache(self._encode_piece, self.max_cached_pieces)

    def _use_pattern(self, pattern: Pattern) -> None:
        self.pattern: Pattern = pattern
        self._split = pattern.split
        # encode_iterable's rule for what more text cannot change (see _encode_settled)
        self._by_reach = pattern.name in CUT_LIKE_GPT2
        self._safe_cut = None if pattern.safe_cut is None else re.compile(pattern.safe_cut)

    def __getstate__(self) -> dict[str, Any]:
        """What pickling keeps: the checked tables as they are, the pattern by
        its name or regex, and not the pre-token cache. ``encode_file`` sends
        its workers a tokenizer so: loading it skips the checks and the
        building of the tables, three quarters of the time the constructor
        takes for GPT-2's (``make bench``'s ``encode_file`` rows time the
        start-up)."""
        state = {name: value for name, value in self.__dict__.items() if name not in _REBUILT_ON_LOAD}
        state["pattern"] = self.pattern.spec
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update({name: value for name, value in state.items() if name != "pattern"})
        self._use_pattern(resolve_pattern(state["pattern"]))
        self._cache = _PieceCache(self._encode_piece, self.max_cached_pieces)

    @classmethod
    def byte_level(cls, special_tokens: Sequence[str] | None = None, *, pattern: str | Pattern = "gpt2") -> Tokenizer:
        """The tokenizer before any training: id i is byte i, no merges."""
        return cls({i: bytes([i]) for i in range(256)}, [], special_tokens, pattern=pattern)

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
        byte encoders of ``encoders.py`` take (shared: do not mutate)."""
        return self._ranks

    def __len__(self) -> int:
        """The number of ids, special tokens included."""
        return len(self.vocab)

    def __repr__(self) -> str:
        """Sizes, special tokens, and the pattern when it is not GPT-2's (the default)."""
        pattern = "" if self.pattern.name == "gpt2" else f", pattern={self.pattern.name or self.pattern.regex!r}"
        return (
            f"Tokenizer({len(self.vocab)} ids, {len(self.merges)} merges, special_tokens={self.special_tokens!r}"
            f"{pattern})"
        )

    # ----------------------------------------------------------------- encode

    def encode(
        self, text: str, *, allowed_special: AllowedSpecial = "all", disallowed_special: DisallowedSpecial = "all"
    ) -> list[int]:
        """Token ids for ``text``, with tiktoken's keywords for special tokens.

        ``allowed_special``: the special tokens that become their id ("all":
        every one this tokenizer has). ``disallowed_special``: the ones whose
        presence in ``text`` raises ValueError ("all": every one not allowed).
        A special token in neither set is encoded as ordinary text. Naming a
        token this tokenizer does not have raises ValueError (``specials.py``).
        """
        if not isinstance(text, str):
            raise TypeError(f"encode() needs a str, got {type(text).__name__}")
        specials = self._specials.to_encode(text, allowed_special, disallowed_special)  # may raise
        ids, _ = self._encode_settled(text, final=True, specials=specials)
        return ids

    def encode_ordinary(self, text: str) -> list[int]:
        """Token ids for ``text`` with no special-token handling at all: a
        special token in it is encoded like any other text (tiktoken's
        ``encode_ordinary``). The safe choice for text typed by users."""
        if not isinstance(text, str):
            raise TypeError(f"encode_ordinary() needs a str, got {type(text).__name__}")
        ids, _ = self._encode_settled(text, final=True, specials=None)
        return ids

    def encode_iterable(
        self,
        iterable: Iterable[str],
        *,
        allowed_special: AllowedSpecial = "all",
        disallowed_special: DisallowedSpecial = "all",
        block_chars: int = 1 << 14,
    ) -> Iterator[int]:
        """Ids of the concatenated strings of ``iterable`` (the lines of a
        file opened in text mode), produced lazily in fixed memory.

        The result equals ``encode("".join(iterable), allowed_special=...,
        disallowed_special=...)``, with ``encode``'s keywords and defaults
        (every special token of this tokenizer becomes its id); a disallowed
        special token raises ValueError, naming its character in the whole
        text, when the stream reaches it (after the ids before it). Bad
        keywords raise at the call. Encoding line by line would differ:
        GPT-2's pattern glues a run of white space together across the newline
        (``"\\n\\n"`` is one token), a special token may be cut in half by a
        chunk boundary, and a contraction needs to see three characters. So
        lines are gathered (or cut) into blocks of about ``block_chars``
        characters; each block's *settled* part is encoded and the rest is
        carried into the next block: for GPT-2's and r50k's patterns the last
        pre-token, any pre-token starting in the last three characters and a
        possible beginning of a special token; for the other patterns all
        after the block's last safe cut (``core.patterns.SAFE_CUTS``; a
        regex of one's own has none, so its text is held back until a
        special token or the end). Memory: one block and its pre-tokens, the
        carry, the bounded pre-token cache, and the longest line ``iterable``
        hands over.
        """
        block_chars = check_int(block_chars, "block_chars", minimum=1)
        self._specials.to_encode("", allowed_special, disallowed_special)  # bad keywords raise now, not at next()
        # The generator hands over one list of ids per block and chain()
        # flattens them in C: a generator yielding each id itself spends
        # over a tenth of the encoding time just resuming its frame.
        return chain.from_iterable(self._id_lists(iterable, block_chars, allowed_special, disallowed_special))

    def encode_file(
        self,
        path: PathLike,
        out: PathLike | None = None,
        *,
        workers: int | None = None,
        dtype: DTypeLike | None = None,
        chunk_bytes: int = 1 << 20,
        progress: bool | None = None,
    ) -> NDArray[np.unsignedinteger[Any]]:
        """The ids of ``encode`` on a whole UTF-8 file, as a NumPy array (``uint16``
        if the vocabulary fits, else ``uint32``), encoded in ``workers`` processes;
        with ``out``, a ``.npy`` file written in bounded memory, returned mapped."""
        from bpe_lab.bytelevel.encode_file import encode_file  # NumPy is imported only when used

        return encode_file(self, path, out, workers=workers, dtype=dtype, chunk_bytes=chunk_bytes, progress=progress)

    def _id_lists(
        self, lines: Iterable[str], block_chars: int, allowed: AllowedSpecial, disallowed: DisallowedSpecial
    ) -> Iterator[list[int]]:
        """encode_iterable's work: the ids of each block, as one list."""
        carry = ""
        pending: list[str] = []
        size = 0
        offset = 0  # where carry starts in the whole text, for the error of a disallowed special token
        for block in blocks(lines, block_chars):  # O(total length): each character is scanned about twice
            pending.append(block)
            size += len(block)
            # Waiting for at least len(carry) new characters keeps the work
            # linear even when one pre-token (a megabyte of spaces) spans many blocks.
            if size >= len(carry):
                text = carry + "".join(pending)
                # the carry holds any unfinished special token, so one across blocks is seen whole here
                specials = self._specials.to_encode(text, allowed, disallowed, offset=offset)  # may raise
                ids, carry = self._encode_settled(text, final=False, specials=specials)
                offset += len(text) - len(carry)
                pending.clear()
                size = 0
                yield ids
        text = carry + "".join(pending)
        specials = self._specials.to_encode(text, allowed, disallowed, offset=offset)
        ids, _ = self._encode_settled(text, final=True, specials=specials)
        yield ids

    def _encode_settled(self, text: str, *, final: bool, specials: regex.Pattern[str] | None) -> tuple[list[int], str]:
        """Encode the part of ``text`` that more text could not change, with
        the special tokens ``specials`` finds (``final=False``: all of them).

        Returns the ids and the unsettled rest (``""`` when ``final``).
        """
        cut = len(text) if final else self._specials.unfinished(text)
        ids: list[int] = []
        start = 0
        if specials is not None:
            for match in specials.finditer(text):  # O(len(text))
                if match.end() > cut:  # a special token across the cut waits too
                    cut = min(cut, match.start())
                    break
                self._extend(ids, self._split(text[start : match.start()]))
                ids.append(self.special_ids[match.group()])
                start = match.end()
        if not final and not self._by_reach:  # hold back all after the last safe cut
            settled = last_safe_cut(self._safe_cut, text, start, cut)
            self._extend(ids, self._split(text[start:settled]))
            return ids, text[settled:]
        # a named pattern's split takes a fast path for ASCII text, so it is given
        # each stretch on its own: one non-ASCII character elsewhere does
        # not slow the others down (slicing is a fast copy).
        pieces = self._split(text[start:cut])
        if final:
            self._extend(ids, pieces)
            return ids, ""
        count, chars = unsettled(pieces)
        del pieces[len(pieces) - count :]
        self._extend(ids, pieces)
        return ids, text[cut - chars :]

    def _extend(self, ids: list[int], pieces: list[str]) -> None:
        # The hot loop: one C-level dict lookup per pre-token (O(number of
        # pre-tokens)); only a cache miss runs Python code (_encode_piece).
        # ``reduce(iadd)`` is ``ids += t`` for each tuple t, called from C:
        # measured faster than ``ids.extend(chain.from_iterable(...))`` (the
        # cache hits of ``make bench``'s encoding row).
        reduce(iadd, map(self._cache.__getitem__, pieces), ids)

    def _encode_piece(self, piece: str) -> tuple[int, ...]:
        """Ids of one pre-token, by rank replay over its bytes."""
        try:
            data = piece.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: encode it as U+FFFD, as tiktoken does
            data = piece.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode("utf-8")
        return tuple(byte_pair_encode(data, self._table))

    # ----------------------------------------------------------------- decode

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The bytes of ``ids`` joined: what ``decode`` turns into text.

        An id must be an integer: an ``int`` or a NumPy integer (what
        ``encode_file``'s array holds); a ``bool``, a float such as ``1.0`` or
        a string such as ``"1"`` raises TypeError, and an integer that is not
        an id ValueError, each naming its position and value.
        """
        # a NumPy array (encode_file's) turns into Python ints at C speed
        ids = ids.tolist() if hasattr(ids, "tolist") else list(ids)
        check_token_ids(ids)
        try:
            return b"".join(map(self.vocab.__getitem__, ids))
        except KeyError:
            for position, token_id in enumerate(ids):
                if token_id not in self.vocab:
                    raise ValueError(
                        f"unknown token id {token_id!r} at position {position}; {self._valid_ids()}"
                    ) from None
            raise

    def _valid_ids(self) -> str:
        """The valid ids for an error message, worked out at the first unknown
        id and kept (until the vocabulary's size changes): scanning every id
        for the smallest and the largest at each unknown id made a loop that
        decodes many of them cost O(vocabulary size) per id."""
        size = len(self.vocab)
        said: tuple[int, str] | None = getattr(self, "_ids_said", None)
        if said is None or said[0] != size:
            low, high = min(self.vocab), max(self.vocab)
            gaps = "" if high - low + 1 == size else f" ({size} ids, with gaps)"
            said = (size, f"the valid ids are {low} to {high}{gaps}")
            self._ids_said = said
        return said[1]

    def decode(self, ids: Iterable[int]) -> str:
        """Text of ``ids``. Bytes that are not valid UTF-8 (a sequence cut in the
        middle of a character) become U+FFFD, as in tiktoken and HF tokenizers."""
        return self.decode_bytes(ids).decode("utf-8", errors="replace")

    # ------------------------------------------------------------------ files

    def save(self, path: PathLike) -> None:
        """Write the tokenizer as JSON at ``path``, and a readable listing of
        the vocabulary beside it (same name, suffix ``.vocab``)."""
        write_tokenizer_file(self.vocab, self.merges, self.special_tokens, path, pattern=self.pattern)

    @classmethod
    def load(cls, path: PathLike) -> Tokenizer:
        """Read a tokenizer written by ``save``, its pattern included (a file
        written before tokenizers had a pattern is GPT-2's)."""
        vocab, merges, special_tokens, pattern = read_tokenizer_file(path)
        return cls(vocab, merges, special_tokens, pattern=pattern)

    @classmethod
    def from_files(
        cls,
        vocab_path: PathLike,
        merges_path: PathLike,
        special_tokens: Sequence[str] | None = None,
        *,
        pattern: str | Pattern = "gpt2",
    ) -> Tokenizer:
        """Read GPT-2's ``vocab.json`` + ``merges.txt`` (its printable byte map);
        the files hold no pattern, so give the one they were trained with."""
        vocab, merges = read_gpt2_files(vocab_path, merges_path)
        return cls(vocab, merges, special_tokens, pattern=pattern)
