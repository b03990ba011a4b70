"""Learner-derived text made safe to show: the one sanitiser of the grader's output.

Why: folder and file names, cell text and a kernel's exception messages
are the learner's, and the grader shows them to the instructor, in a
terminal, a gradebook, a feedback page, a similarity report. Printed raw,
``ESC [ 2 K`` erased the line that said 0/7 and left one saying 7/7, an
OSC 52 sequence set the instructor's clipboard, a carriage return or a
backspace overwrote what came before, and a bidi override (U+202E) or an
isolate (U+2066-2069) reordered a line so that it read otherwise than it
was. So every such string goes through ``shown`` before it leaves the
grader, and what could act on a terminal or reorder text is shown
*visibly escaped*, never dropped: the instructor sees that a name holds an
escape, and two names that differ only in one stay two.

What is escaped: every control character (C0, DEL and C1, U+009B CSI
among them; in ``lines=True`` text a newline and a tab stay, and a CRLF is
a newline), every format character (Unicode category Cf: the bidi
embeddings, overrides, isolates and marks, zero-width characters, the
BOM, tag characters), the line and paragraph separators U+2028 and
U+2029, and lone surrogates (a file name that was not UTF-8, decoded by
``os.fsdecode``: shown as the byte it stood for). A newline, a return and
a tab are shown as ``\\n``, ``\\r`` and ``\\t``, another character below
U+0100 as ``\\xNN``, any other as ``\\uNNNN`` or ``\\UNNNNNNNN``. The rest
(accents, CJK, emoji; a joined emoji shows its U+200D) is shown as it is.

>>> print(shown("alice\\x1b[2K\\r7/7\\u202e"))
alice\\x1b[2K\\r7/7\\u202e
>>> shown("x = 1\\r\\n\\ty = 2\\x07", lines=True)
'x = 1\\n\\ty = 2\\\\x07'
>>> shown("caf\\udce9")
'caf\\\\xe9'
"""

from __future__ import annotations

import regex

__all__ = ["shown"]

#: What ``shown`` escapes: control and format characters, line and paragraph separators, lone surrogates.
_UNSAFE = regex.compile(r"[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]")
#: The same, but for a newline and a tab (text of several lines).
_UNSAFE_IN_LINES = regex.compile(r"[[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]--[\n\t]]", regex.V1)

#: The controls shown as Python writes them.
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: regex.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # os.fsdecode's stand-in for a byte that was not UTF-8
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def shown(text: object, *, lines: bool = False) -> str:
    """``text`` (made a ``str``) with every character that could act on a
    terminal or reorder the text shown escaped; ``lines``: newlines and
    tabs stay (a CRLF becomes a newline), for text of several lines such as
    a cell's code."""
    value = str(text)
    escaped: str = _UNSAFE_IN_LINES.sub(_escape, value.replace("\r\n", "\n")) if lines else _UNSAFE.sub(_escape, value)
    return escaped
