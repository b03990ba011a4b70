"""The small HTML pieces every view is built from.

Over ``css``, which says how things look, this module says what they are:
a symbol chip, a row of chips with the pair about to merge boxed, a panel,
a header badge, a table, and the root element that carries the view's
``data-*`` attributes. ``views`` composes them into one view per stepper;
nothing here knows about training, encoding or compression.

Every function returns an HTML string and escapes the text it is given;
parameters called ``inner``, ``body``, ``rows``, ``head``, ``panels`` or
``attrs`` take HTML that is already escaped. Every element carries its
inline style from ``css.INLINE``, and neighbouring chips and badges are
separated by a real space, so a page that strips the style sheet (an
untrusted notebook, a forge) still reads "l o w </w> × 5", never "low</w>×5".

>>> sym("</w>", "bpe-new")[:31]
'<span class="bpe-sym bpe-new" s'
>>> pair_data(("e", "s"))
'data-left="e" data-right="s"'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape
from typing import TypeVar

from bpe_lab.core.symbols import Pair
from bpe_lab.ui.css import CSS, style

__all__ = [
    "pair_starts",
    "attr",
    "sym",
    "pair_data",
    "pair_text",
    "chips",
    "panel",
    "badge",
    "labelled",
    "table",
    "cell",
    "title",
    "view",
    "check_index",
]

#: A symbol: a string in training and encoding, a byte value in compression.
S = TypeVar("S")


def pair_starts(symbols: Sequence[S], pair: tuple[S, S]) -> list[int]:
    """Where ``pair`` starts in ``symbols``, scanning left to right and
    skipping an occurrence that overlaps the previous one: exactly the
    occurrences that ``merge_symbols`` (and ``bytes.replace``) join, so the
    highlight shows what the next step will merge.

    >>> pair_starts(("a", "a", "a", "b"), ("a", "a"))
    [0]
    """
    starts: list[int] = []
    i = 0
    while i + 1 < len(symbols):
        if symbols[i] == pair[0] and symbols[i + 1] == pair[1]:
            starts.append(i)
            i += 2
        else:
            i += 1
    return starts


def attr(value: object) -> str:
    """``value`` as the text of a quoted attribute."""
    return escape(str(value), quote=True)


def sym(text: str, extra: str = "") -> str:
    """One symbol as a chip; ``extra`` adds classes (``bpe-new``, ``bpe-diff``)."""
    return f'<span class="bpe-sym{" " + extra if extra else ""}"{style("sym")}>{escape(text)}</span>'


def pair_data(pair: Sequence[object]) -> str:
    """The ``data-left`` and ``data-right`` attributes that name a pair."""
    return f'data-left="{attr(pair[0])}" data-right="{attr(pair[1])}"'


def pair_text(pair: Pair) -> str:
    """A pair as the prose writes it: ``(e, s)``."""
    return escape(f"({pair[0]}, {pair[1]})")


def chips(
    symbols: Sequence[S],
    pair: tuple[S, S] | None = None,
    new: str | None = None,
    render: Callable[[S], str] | None = None,
) -> str:
    """Symbols as chips; each occurrence of ``pair`` is wrapped in one
    highlight box, and symbols equal to ``new`` (just merged) are tinted.
    ``render`` draws one symbol (bytes use it to draw byte values)."""
    draw = render or (lambda s: sym(str(s), "bpe-new" if new is not None and s == new else ""))
    starts = set(pair_starts(symbols, pair)) if pair else set()
    box = pair_data(pair) if pair else ""
    parts: list[str] = []
    i = 0
    while i < len(symbols):
        if i in starts:
            inner = draw(symbols[i]) + " " + draw(symbols[i + 1])
            parts.append(f'<span class="bpe-hl" {box}{style("hl")}>{inner}</span>')
            i += 2
        else:
            parts.append(draw(symbols[i]))
            i += 1
    return f'<span class="bpe-syms"{style("syms")}>{" ".join(parts)}</span>'


def panel(heading: str, body: str, cls: str = "", basis: int = 190) -> str:
    """A bordered box with a small heading; the grid lays panels side by
    side, each at least ``basis`` pixels wide, growing to share the row."""
    box = style("panel").removesuffix('"') + f'; flex: 1 1 {basis}px"'
    return f'<div class="bpe-panel {cls}"{box}><h4{style("heading")}>{escape(heading)}</h4>{body}</div>'


def badge(inner: str, cls: str = "", attrs: str = "") -> str:
    """A rounded label in the header; ``inner`` is HTML (escape text first)."""
    return f'<span class="bpe-badge {cls}" {attrs}{style("badge")}>{inner}</span> '


def labelled(name: str, inner: str, cls: str = "", attrs: str = "") -> str:
    """One line: a faint label, then chips."""
    name_html = f'<span class="bpe-freq"{style("freq")}>{escape(name)}</span>'
    return f'<div class="bpe-word {cls}" {attrs}{style("word")}>{name_html} {inner}</div>'


def table(headers: Sequence[str], rows: str, numeric: int | None = None) -> str:
    """A table; column ``numeric`` (an index) is right-aligned."""
    cells = "".join(
        f'<th class="{"bpe-num" if i == numeric else ""}"{style("num" if i == numeric else "cell")}>{escape(h)}</th>'
        for i, h in enumerate(headers)
    )
    return f"<table{style('table')}><tr>{cells}</tr>{rows}</table>"


def cell(inner: str, cls: str = "", numeric: bool = False) -> str:
    """One table cell; ``inner`` is HTML, ``numeric`` right-aligns it."""
    classes = " ".join(filter(None, ["bpe-num" if numeric else "", cls]))
    return f'<td class="{classes}"{style("num" if numeric else "cell")}>{inner}</td>'


def title(text: str) -> str:
    """The view's heading."""
    return f"<h3{style('title')}>{escape(text)}</h3> "


def view(kind: str, lang: str, number: int, total: int, head: str, panels: str, attrs: str = "") -> str:
    """The whole view: the style sheet, then a root element whose data
    attributes say which view and round this is, then header and panels."""
    return (
        f'{CSS}<div class="bpe-view bpe-{kind}" lang="{lang}" data-round="{number}" data-total="{total}" {attrs}'
        f'{style("view")}><div class="bpe-head"{style("head")}>{head}</div>'
        f'<div class="bpe-grid"{style("grid")}>{panels}</div></div>'
    )


def check_index(number: int, last: int, what: str) -> None:
    """Fail, naming the valid range, unless ``0 <= number <= last``.

    >>> check_index(6, 5, "round")
    Traceback (most recent call last):
    IndexError: round 6 does not exist; there are rounds 0..5
    """
    if not 0 <= number <= last:
        raise IndexError(f"{what} {number} does not exist; there are {what}s 0..{last}")
