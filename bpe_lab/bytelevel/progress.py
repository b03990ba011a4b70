"""Progress bars for the long jobs of byte-level BPE: a file's pre-tokens
counted, merges learned, a corpus encoded.

What this adds over the trainer and ``encode_file`` that use it: one rule for
when a bar is shown (a large input, in a terminal or a notebook) and a
stand-in that does nothing, so that the code that reports progress is the
same whether a bar is shown or not, and tqdm is imported only when it is;
and, in a notebook, a bar whose saved form is its last state: tqdm's widget
is not saved with the notebook, only the text it showed when it appeared
(``0%``), so a notebook opened without running it would show every finished
bar at 0 %. ``_NotebookBar`` shows the widget while the work runs and then
replaces it, in the same output, by the finished bar as one line of text.
"""

from __future__ import annotations

import sys
from typing import Any, Protocol

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


class _NotebookBar:
    """tqdm's notebook widget while the work runs; when it ends, the same
    output holds the bar's last state as text (``learning merges: 100%|█…|
    1743/1743 [00:00<00:00, …]``), which is what the saved notebook keeps."""

    def __init__(self, tqdm_class: Any, **options: Any) -> None:
        from IPython import display as ipython_display

        show: Any = ipython_display.display  # untyped
        self._bar = tqdm_class(display=False, leave=True, **options)
        self._output = show(self._bar.container, display_id=True)

    def __enter__(self) -> _NotebookBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self._bar.close()
        final = self._bar.format_meter(**self._bar.format_dict)
        if self._output is not None:
            self._output.update({"text/plain": final}, raw=True)

    def update(self, n: int = 1) -> None:
        self._bar.update(n)


def want_progress(progress: bool | None, size: int) -> bool:
    """``progress`` if given; by default a bar for ``size`` bytes or more of
    input, when someone can see it (stderr is a terminal, or in a notebook)."""
    if progress is not None:
        return progress
    interactive = sys.stderr.isatty() or "ipykernel" in sys.modules
    return interactive and size >= PROGRESS_MIN_BYTES


def progress_bar(enabled: bool, total: int, desc: str, unit: str, *, unit_scale: bool = False) -> Bar:
    """A tqdm bar, or a stand-in when not ``enabled``: in a terminal a bar
    that clears its line when done; in a notebook a widget that leaves the
    finished bar behind as text (``_NotebookBar``)."""
    if not enabled:
        return _NoBar()
    from tqdm.auto import tqdm  # a terminal bar, or a widget in a notebook
    from tqdm.notebook import tqdm as notebook_tqdm

    options: dict[str, Any] = {"total": total, "desc": desc, "unit": unit, "unit_scale": unit_scale}
    if issubclass(tqdm, notebook_tqdm):
        return _NotebookBar(tqdm, **options)
    bar: Bar = tqdm(leave=False, **options)
    return bar
