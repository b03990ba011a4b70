"""How big each benchmark is: the full run's sizes, and ``--quick``'s.

>>> Sizes.quick().repeat, Sizes().workers
(1, 2)
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Sizes", "FULL"]

#: Growth corpora: 0 means everything the sources hold (about 140 MB).
_ALL = 0


@dataclass(frozen=True)
class Sizes:
    """How big each benchmark is; ``Sizes.quick()`` for a smoke run."""

    corpus_bytes: int | None = None  # None: the whole standard library (~30 MB)
    textbook_bytes: int = 1_000_000
    fast_merges: int = 2_000
    textbook_merges: int = 2_000  # fewer: timed on the first rounds and extrapolated
    vocab_size: int = 10_000
    small_bytes: int = 130_000
    small_vocab: int = 500
    encode_bytes: int | None = None  # None: the whole corpus, as encode_file's rows encode it
    pretokenize_bytes: int = 5_000_000
    repeat: int = 2  # best of: the training runs (a fresh process each) take turns this many times
    encode_repeat: int = 3  # best of: encoding and pre-tokenizing, ours and theirs taking turns
    workers: int = 2  # encode_file's processes, tiktoken's threads
    growth_bytes: tuple[int, ...] = (32_000_000, 128_000_000, _ALL)  # stdlib + site-packages

    @classmethod
    def quick(cls) -> Sizes:
        return cls(
            corpus_bytes=1_000_000,
            textbook_bytes=50_000,
            fast_merges=200,
            textbook_merges=20,
            vocab_size=1_000,
            encode_bytes=200_000,
            pretokenize_bytes=200_000,
            repeat=1,
            encode_repeat=2,
            growth_bytes=(250_000, 500_000, 1_000_000),
        )


#: The full run's sizes.
FULL = Sizes()
