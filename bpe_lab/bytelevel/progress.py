"""Progress bars for the long jobs of byte-level BPE: a file's pre-tokens
counted, merges learned, a corpus encoded.

What this adds over the trainer and ``encode_file`` that use it: one rule for
when a bar is shown (a large input, in a terminal or a notebook) and a
stand-in that does nothing, so that the code that reports progress is the
same whether a bar is shown or not, and tqdm is imported only when it is.
"""

from __future__ import annotations

import sys
from typing import Protocol

__all__ = ["PROGRESS_MIN_BYTES", "Bar", "progress_bar", "want_progress"]

#: Show progress bars from this size on (terminal or notebook only).
PROGRESS_MIN_BYTES = 16 << 20


class Bar(Protocol):
    """What is used of a tqdm bar."""

    def __enter__(self) -> Bar: ...

    def __exit__(self, *exc: object) -> object: ...

    def update(self, n: int = 1) -> object: ...


class _NoBar:
    """Stands in for a disabled tqdm bar without importing tqdm (~70 ms,
    which matters when the whole small case should take well under 0.5 s)."""

    def __enter__(self) -> _NoBar:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def update(self, n: int = 1) -> None:
        return None


def want_progress(progress: bool | None, size: int) -> bool:
    """``progress`` if given; by default a bar for ``size`` bytes or more of
    input, when someone can see it (stderr is a terminal, or in a notebook)."""
    if progress is not None:
        return progress
    interactive = sys.stderr.isatty() or "ipykernel" in sys.modules
    return interactive and size >= PROGRESS_MIN_BYTES


def progress_bar(enabled: bool, total: int, desc: str, unit: str, *, unit_scale: bool = False) -> Bar:
    """A tqdm bar (a widget in a notebook), or a stand-in when not ``enabled``."""
    if not enabled:
        return _NoBar()
    from tqdm.auto import tqdm  # a terminal bar, or a widget in a notebook

    bar: Bar = tqdm(total=total, desc=desc, unit=unit, unit_scale=unit_scale, leave=False)
    return bar
