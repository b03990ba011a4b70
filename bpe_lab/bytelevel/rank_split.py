"""A token's merge read from a rank table alone, the way tiktoken's ranks hide it.

What this adds over ``gpt2.merges_from_ranks`` (which replays the merges it
has recovered so far, as pairs): the same question answered with nothing
but the ranks of whole tokens, as tiktoken itself merges (the adjacent pair
whose *joined bytes* have the lowest rank) and as minbpe's ``recover_merges``
reads cl100k's ranks. A token of rank r was made by the last merge before
r, so BPE on its bytes with only the ranks below r stops one merge short:
at the two tokens it was made from. Notebook 05 recovers all 50,000 of
GPT-2's merges this way, and its "your turn" checks a learner's version
against ``parts_below_rank``.

>>> ranks = {b"a": 0, b"b": 1, b"c": 2, b"bc": 3, b"ab": 4, b"abc": 5}
>>> parts_below_rank(b"abc", ranks)   # bc (rank 3) before ab (rank 4); abc itself (5) not allowed
[b'a', b'bc']
>>> parts_below_rank(b"ab", ranks)
[b'a', b'b']
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["parts_below_rank"]


def parts_below_rank(token: bytes, ranks: Mapping[bytes, int]) -> list[bytes]:
    """BPE on ``token``'s bytes with only the ranks below ``ranks[token]``:
    repeatedly join the adjacent pair whose joined bytes have the lowest rank
    (the leftmost of equal ones), until no pair's join ranks below the
    token's own. For a token of more than one byte in a BPE rank table, two
    parts are left: its merge. O(n^2) for n bytes.

    Raises ValueError when ``token`` is empty or has no rank, or when one of
    its bytes has none (a rank table always ranks the 256 single bytes).
    """
    if not isinstance(token, bytes) or not token:
        raise ValueError(f"token must be non-empty bytes, got {token!r}")
    if token not in ranks:
        raise ValueError(f"token {token!r} has no rank")
    missing = [b for b in token if bytes([b]) not in ranks]
    if missing:
        raise ValueError(f"the byte 0x{missing[0]:02x} of {token!r} has no rank")
    limit, get = ranks[token], ranks.get
    parts = [bytes([b]) for b in token]
    while True:  # at most n - 1 joins, each after an O(n) scan
        best, at = limit, -1
        for i in range(len(parts) - 1):
            rank = get(parts[i] + parts[i + 1], limit)
            if rank < best:  # strictly lower: the leftmost of equal ranks stays
                best, at = rank, i
        if at < 0:
            return parts
        parts[at : at + 2] = [parts[at] + parts[at + 1]]
