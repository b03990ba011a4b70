"""GPT-2's tokenizer, offline: the real thing, from a file shipped in the package.

What this adds over ``tokenizer.py`` (any vocabulary and merge list): GPT-2's
own, with ``<|endoftext|>`` (``core.symbols.ENDOFTEXT``) as id 50256.
OpenAI's GPT-2 vocabulary ships here as ``data/gpt2.tiktoken`` (MIT licence,
copied from the ``openai-whisper`` source distribution; see
``data/gpt2.tiktoken.LICENSE.txt``). That is tiktoken's format: one line per
token, ``<base64 of its bytes> <rank>``, and no merge list. A rank is enough
because in BPE every token after the 256 bytes *is* a merge, learned in rank
order: to find which two tokens a token was merged from, encode its bytes with
the merges recovered so far; exactly two pieces must be left, and they are
the merge. ``merges_from_ranks`` does that for any rank table; for GPT-2's
the result ships beside the ranks as ``data/gpt2.splits`` (byte i: the
length of the left part of the token of rank 256 + i; a test derives it
again), so that loading GPT-2 replays nothing: it is quicker, and a grading
kernel whose encoders are trapped as a task's answer can still build it
(``grading.check.capstone``).

>>> tok = gpt2_tokenizer()
>>> tok.encode("Hello world<|endoftext|>")
[15496, 995, 50256]
>>> tok.encode_ordinary("Hello world<|endoftext|>")   # text a user typed: no id 50256
[15496, 995, 27, 91, 437, 1659, 5239, 91, 29]
>>> tok.decode([15496, 995])
'Hello world'
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

from bpe_lab.bytelevel.encoders import scan_replay
from bpe_lab.bytelevel.tokenizer import Tokenizer
from bpe_lab.core.symbols import ENDOFTEXT
from bpe_lab.core.textfile import read_text

__all__ = [
    "GPT2_RANKS_PATH",
    "GPT2_SPLITS_PATH",
    "gpt2_tokenizer",
    "gpt2_vocab_and_merges",
    "load_tiktoken_ranks",
    "merges_from_ranks",
]

GPT2_RANKS_PATH = Path(__file__).parents[1] / "data" / "gpt2.tiktoken"
GPT2_SPLITS_PATH = Path(__file__).parents[1] / "data" / "gpt2.splits"


def load_tiktoken_ranks(path: str | os.PathLike[str]) -> dict[bytes, int]:
    """Read a ``.tiktoken`` file into ``{token bytes: rank}``.

    A malformed line raises ValueError with its line number.
    """
    ranks: dict[bytes, int] = {}
    for number, line in enumerate(read_text(path).splitlines(), start=1):  # O(lines)
        if not line:
            continue
        fields = line.split()
        try:
            if len(fields) != 2:
                raise ValueError("expected '<base64 token> <rank>'")
            token, rank = base64.b64decode(fields[0], validate=True), int(fields[1])
        except (ValueError, binascii.Error) as err:
            raise ValueError(f"{path}, line {number}: {err}: {line[:80]!r}") from None
        if token in ranks:
            raise ValueError(f"{path}, line {number}: token {token!r} already has rank {ranks[token]}")
        ranks[token] = rank
    return ranks


def merges_from_ranks(ranks: Mapping[bytes, int]) -> list[tuple[bytes, bytes]]:
    """The merge list hidden in a rank table.

    Ranks must be 0..n-1 with the 256 single bytes among them. Each longer
    token, in rank order, is encoded with the merges found so far; the two
    pieces left are its merge. O(sum over tokens of length^2); for GPT-2 it
    runs once, at the first ``gpt2_tokenizer()``. It calls the scan step
    itself (``scan_replay``), not a wrapper a grading kernel traps as an
    answer (``check.capstone.gpt2_model`` runs it there).

    >>> merges_from_ranks({bytes([b]): b for b in range(256)} | {b"ab": 256, b"abc": 257})
    [(b'a', b'b'), (b'ab', b'c')]
    """
    by_rank = sorted(ranks.items(), key=lambda item: item[1])
    if [rank for _, rank in by_rank] != list(range(len(by_rank))):
        raise ValueError("ranks must be the numbers 0..n-1, each used once")
    missing = [b for b in range(256) if bytes([b]) not in ranks]
    if missing:
        raise ValueError(f"ranks have no entry for the single byte 0x{missing[0]:02x}")
    pair_ranks: dict[tuple[bytes, bytes], int] = {}
    merges: list[tuple[bytes, bytes]] = []
    for token, rank in by_rank:  # one encode per token
        if len(token) == 1:
            continue
        parts = scan_replay([bytes([b]) for b in token], pair_ranks)
        if len(parts) != 2:
            raise ValueError(f"token {token!r} (rank {rank}) is not one merge of two earlier tokens: {parts!r}")
        pair_ranks[(parts[0], parts[1])] = len(merges)
        merges.append((parts[0], parts[1]))
    return merges


@lru_cache(maxsize=1)
def gpt2_vocab_and_merges() -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    """GPT-2's 50,256 ranked tokens as a vocabulary (id = rank) and its
    50,000 merges in rank order, read from the shipped ranks and splits;
    made once per process and shared, so copy before changing them.

    >>> vocab, merges = gpt2_vocab_and_merges()
    >>> len(vocab), merges[:2]
    (50256, [(b' ', b't'), (b' ', b'a')])
    """
    ranks = load_tiktoken_ranks(GPT2_RANKS_PATH)
    tokens = sorted(ranks, key=ranks.__getitem__)
    splits = GPT2_SPLITS_PATH.read_bytes()
    if len(splits) != len(tokens) - 256 or any(len(token) != 1 for token in tokens[:256]):
        raise ValueError(f"{GPT2_SPLITS_PATH}: {len(splits):,} splits for {len(tokens) - 256:,} merges")
    merges = []
    for rank, (token, cut) in enumerate(zip(tokens[256:], splits), start=256):
        if not 0 < cut < len(token):
            raise ValueError(
                f"{GPT2_SPLITS_PATH}, byte {rank - 256}: cuts the {len(token)}-byte token {token!r} at {cut}"
            )
        merges.append((token[:cut], token[cut:]))
    return {rank: token for rank, token in enumerate(tokens)}, merges


def gpt2_tokenizer() -> Tokenizer:
    """GPT-2's tokenizer: 50,257 ids, ``<|endoftext|>`` (``ENDOFTEXT``, its
    only special token) = 50256, one past the last rank; no network.

    Each call returns a new Tokenizer (with an empty pre-token cache); the
    files are read only on the first call. The constructor checks that each
    merge joins two earlier tokens (``vocab.checked_merges``), so a damaged
    splits file cannot pass for GPT-2.
    """
    vocab, merges = gpt2_vocab_and_merges()
    return Tokenizer(vocab, merges, [ENDOFTEXT])
