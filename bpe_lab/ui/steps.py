"""The data of every step the steppers show: no HTML, no widgets.

Over the algorithms, this module adds the states in between.
``encode.encode_word`` and ``compression.compress`` return only their end
result (training has ``train_trace`` for its rounds). A learner stepping
through them needs every state in between: for encoding, the adjacent pairs
with their ranks before each merge; for compression, the data after each
replacement. This module recomputes those states with the same primitives
(``merge_symbols``, ``bytes.replace``) so what a widget shows is exactly what
the algorithm did, and the tests check that the last state equals the
algorithm's own result. ``views`` draws one such state as HTML.

>>> merges = [("e", "s"), ("es", "t"), ("est", "</w>"), ("l", "o"), ("lo", "w")]
>>> [step.best for step in encode_steps("lowest", merges)]
[('e', 's'), ('es', 't'), ('est', '</w>'), ('l', 'o'), ('lo', 'w'), None]
>>> encode_steps("lowest", merges)[-1].symbols
('low', 'est</w>')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bpe_lab.core.encode import merge_ranks
from bpe_lab.core.symbols import END_OF_WORD, Pair
from bpe_lab.core.words import merge_symbols, word_to_symbols
from bpe_lab.variants.compression import Compressed, decompress

__all__ = ["EncodeStep", "encode_steps", "compression_states", "compression_stop"]


@dataclass(frozen=True)
class EncodeStep:
    """One state of rank replay: the symbols, every adjacent pair with its
    rank (None: no merge rule), and the lowest-ranked pair, which is merged
    next (None when no pair has a rule, i.e. encoding is finished)."""

    symbols: tuple[str, ...]
    pairs: tuple[tuple[Pair, int | None], ...]
    best: Pair | None

    @property
    def best_rank(self) -> int | None:
        return dict(self.pairs)[self.best] if self.best else None

    @property
    def after(self) -> tuple[str, ...]:
        """The symbols once ``best`` is merged (unchanged on the last step)."""
        return merge_symbols(self.symbols, self.best) if self.best else self.symbols


def _step(symbols: tuple[str, ...], ranks: dict[Pair, int]) -> EncodeStep:
    pairs = tuple((pair, ranks.get(pair)) for pair in zip(symbols, symbols[1:]))
    ranked = [(rank, pair) for pair, rank in pairs if rank is not None]
    best = min(ranked)[1] if ranked else None
    return EncodeStep(symbols, pairs, best)


def encode_steps(
    word: str,
    merges: Sequence[Pair],
    *,
    end_of_word: str | None = END_OF_WORD,
    start_of_word: str | None = None,
) -> list[EncodeStep]:
    """Every state of encoding ``word`` by rank replay, first to last.

    Each step joins every occurrence of the lowest-ranked pair, as
    ``encode.encode_word`` does; the last step has ``best is None`` and its
    symbols are the final tokens.
    """
    ranks = merge_ranks(merges, end_of_word=end_of_word, start_of_word=start_of_word)
    steps = [_step(word_to_symbols(word, end_of_word=end_of_word, start_of_word=start_of_word), ranks)]
    while steps[-1].best is not None:
        steps.append(_step(steps[-1].after, ranks))
    return steps


def compression_states(data: bytes, packed: Compressed) -> list[bytes]:
    """The data before the first round and after each round of ``packed``.

    Replays the table in order with ``bytes.replace`` (left to right, never
    overlapping), exactly as ``compress`` rewrote the data.

    >>> from bpe_lab.variants.compression import compress
    >>> compression_states(b"aaabdaaabac", compress(b"aaabdaaabac"))
    [b'aaabdaaabac', b'\\x00abd\\x00abac', b'\\x01bd\\x01bac', b'\\x02d\\x02ac']
    """
    states = [bytes(data)]
    for code, pair in packed.table.items():
        states.append(states[-1].replace(bytes(pair), bytes((code,))))
    if states[-1] != packed.data:
        raise ValueError("packed is not the compression of data")
    return states


def compression_stop(packed: Compressed, max_rounds: int | None = None) -> str:
    """Which of ``compress``'s three stopping rules ended ``packed``:
    ``"no_free_byte"`` (all 256 byte values are in the data or already
    codes), ``"max_rounds"`` (the limit it was called with) or
    ``"no_repeat"`` (no pair occurs twice any more). ``compress`` tests them
    in that order, and so does this.

    >>> from bpe_lab.variants.compression import compress
    >>> compression_stop(compress(b"aaabdaaabac")), compression_stop(compress(b"abab", max_rounds=1), 1)
    ('no_repeat', 'max_rounds')
    """
    used = len(set(decompress(packed))) + len(packed.table)  # the input's byte values, and the codes
    if used >= 256:
        return "no_free_byte"
    if max_rounds is not None and len(packed.rounds) >= max_rounds:
        return "max_rounds"
    return "no_repeat"
