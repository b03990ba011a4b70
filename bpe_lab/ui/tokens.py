"""A tokenized text as coloured spans: each token with its id and bytes.

Beside ``views``, which draws one step of a stepper, this module draws the
result of a whole byte-level encoding (notebook 05): one span per token,
its text (white space made visible, a token that is only part of a UTF-8
character shown as ``\\xNN`` escapes), its id and its byte values under it.
Tokens that each hold part of a character (a Chinese character split into
its 3 bytes by a tokenizer that never merged them) are grouped, and the
character(s) they spell together are shown under the group, so the reader
sees 低 and not only ``\\xe4 \\xbd \\x8e``.

Saved into a notebook, the spans must still read right where the style
sheet is stripped (an untrusted notebook, a forge): the layout is inline
(``css.INLINE``), the id and the bytes are ``<sub>`` elements set off by
real spaces, and tokens are separated by a space, so the bare text reads
"The 464 54 68 65 ␣low 1877 …", never "The46454 68 65␣low1877".

>>> class Bytes:
...     vocab = {i: bytes([i]) for i in range(256)}
...     def encode(self, text): return list(text.encode())
>>> tokens_html("hi", Bytes()).count('class="bpe-token"')
2
"""

from __future__ import annotations

import colorsys
from collections.abc import Mapping
from html import escape
from typing import Protocol

from bpe_lab.ui.css import CSS, style
from bpe_lab.ui.labels import labels

__all__ = ["TokenizerLike", "tokens_html", "token_colour"]


class TokenizerLike(Protocol):
    """What ``tokens_html`` needs: ids from text, and the bytes of each id."""

    vocab: dict[int, bytes]

    def encode(self, text: str) -> list[int]: ...


def _token_text(raw: bytes) -> tuple[str, bool]:
    """The token as text, or as ``\\xNN`` escapes when it is only part of a
    UTF-8 character (byte-level BPE may split a character between tokens)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return "".join(f"\\x{b:02x}" for b in raw), True
    return text, False


def _groups(raws: list[bytes]) -> list[tuple[int, int]]:
    """(start, end) runs of tokens to draw together: a token that decodes
    alone is a run of its own; a token holding part of a character starts a
    run that ends at the first token after which the run's bytes decode.

    >>> _groups([b"a", "低".encode()[:1], "低".encode()[1:], b"b"])
    [(0, 1), (1, 3), (3, 4)]
    """
    runs, start = [], 0
    while start < len(raws):
        end = start + 1
        if _token_text(raws[start])[1]:
            joined = raws[start]
            while end < len(raws) and _token_text(joined)[1]:
                joined += raws[end]
                end += 1
            if _token_text(joined)[1]:  # never completes (not from encoding a str): no group
                end = start + 1
        runs.append((start, end))
        start = end
    return runs


#: How white space is drawn wherever it matters (token views, checkpoint options).
WHITESPACE_MARKS = {" ": "␣", "\n": "↵", "\t": "⇥"}


def _visible(text: str) -> str:
    shown = escape(text)
    for char, mark in WHITESPACE_MARKS.items():  # make white space visible
        shown = shown.replace(char, f'<span class="bpe-ws">{mark}</span>')
    return shown


#: The group of tokens that spell one or more characters together, and its characters.
GROUP_STYLE = "display: inline-flex; flex-direction: column; align-items: center; border-bottom: 2px solid #d97706"
GROUP_ROW_STYLE = "display: inline-flex; gap: 1px"
GROUP_CHARS_STYLE = "font-size: 14px; line-height: 1.3"


def _group_span(spans: list[str], raw: bytes) -> str:
    chars = raw.decode("utf-8")
    return (
        f'<span class="bpe-char-group" data-chars="{escape(chars)}" style="{GROUP_STYLE}">'
        f'<span class="bpe-char-group-tokens" style="{GROUP_ROW_STYLE}">{" ".join(spans)}</span> '
        f'<span class="bpe-char-group-chars" style="{GROUP_CHARS_STYLE}">{_visible(chars)}</span></span>'
    )


def token_colour(index: int) -> str:
    """The background of the ``index``-th token: hues a golden angle apart
    (neighbours never share a colour), written as ``rgba()``. Not
    ``hsla()``: JupyterLab's sanitizer, which cleans the saved outputs of an
    untrusted notebook, accepts only hex, ``rgb()``, ``rgba()`` and named
    colours, and drops any other colour without a word.

    >>> token_colour(0), token_colour(1)
    ('rgba(240, 66, 66, .32)', 'rgba(66, 240, 118, .32)')
    """
    hue = round(index * 137.508) % 360
    red, green, blue = (round(255 * c) for c in colorsys.hls_to_rgb(hue / 360, 0.60, 0.85))
    return f"rgba({red}, {green}, {blue}, .32)"


def _token_span(index: int, token_id: int, raw: bytes, show_bytes: bool, names: Mapping[str, str]) -> str:
    text, partial = _token_text(raw)
    shown = _visible(text)
    hexes = " ".join(f"{b:02x}" for b in raw)
    small = style("token_small")
    byte_line = f' <sub class="bpe-token-bytes"{small}>{hexes}</sub>' if show_bytes else ""
    attrs = f'data-id="{token_id}" data-bytes="{hexes}" title="{names["token_id"]} {token_id} · {hexes}"'
    text_cls = "bpe-token-text bpe-partial" if partial else "bpe-token-text"
    token_style = INLINE_TOKEN.format(colour=token_colour(index))
    return (
        f'<span class="bpe-token" {attrs} style="{token_style}">'
        f'<span class="{text_cls}"{style("token_text")}>{shown}</span> '
        f'<sub class="bpe-token-id"{small}>{token_id}</sub>{byte_line}</span>'
    )


#: A token's inline style: the shared layout plus its own background colour.
INLINE_TOKEN = style("token").removeprefix(' style="').removesuffix('"') + "; background: {colour}"


def tokens_html(text: str, tokenizer: TokenizerLike, *, lang: str = "en", show_bytes: bool = True) -> str:
    """``text`` as coloured token spans, each with its id and byte values,
    for any tokenizer with ``.encode(text) -> list[int]`` and
    ``.vocab: dict[int, bytes]`` (such as ``bpe_lab.Tokenizer``)."""
    duck_typed = callable(getattr(tokenizer, "encode", None)) and isinstance(getattr(tokenizer, "vocab", None), Mapping)
    if not duck_typed:
        raise TypeError("tokenizer needs .encode(text) -> list[int] and .vocab: dict[int, bytes]")
    names = labels(lang)
    ids = list(tokenizer.encode(text))
    raws = [tokenizer.vocab[t] for t in ids]
    one = [_token_span(i, t, raw, show_bytes, names) for i, (t, raw) in enumerate(zip(ids, raws))]
    spans = " ".join(one[a] if b == a + 1 else _group_span(one[a:b], b"".join(raws[a:b])) for a, b in _groups(raws))
    summary = names["tokens_summary"].format(tokens=len(ids), chars=len(text), bytes=len(text.encode("utf-8")))
    return (
        f'{CSS}<div class="bpe-view bpe-tokens" lang="{lang}" data-count="{len(ids)}"{style("view")}>'
        f'<div class="bpe-head"{style("head")}><span class="bpe-badge"{style("badge")}>{escape(summary)}</span></div>'
        f'<div class="bpe-tokens-row"{style("row")}>{spans}</div></div>'
    )
