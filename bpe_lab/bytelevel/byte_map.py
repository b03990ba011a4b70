"""GPT-2's printable stand-in for every byte.

The first module of the byte-level chapter: what it adds over ``core``
(whose symbols are characters, always printable) is a way to write a token
made of arbitrary bytes as text, which ``files.py`` needs.

Byte-level BPE works on the 256 byte values, but GPT-2 stores its vocabulary
in ``vocab.json`` and ``merges.txt``: text files, one merge per line, the two
halves separated by a space. Raw bytes do not fit there. A token may hold a
space, a newline, a control byte, or half of a UTF-8 character, none of which
survives a JSON key or a space-separated line in a form you can read.

So GPT-2 gives each byte one visible Unicode character:

- the 188 bytes that are already printable Latin-1 characters (``!`` to ``~``,
  ``¡`` to ``¬``, ``®`` to ``ÿ``) stand for themselves;
- the other 68 (control bytes, the space, DEL, the no-break space, the soft
  hyphen, ...) get the characters from U+0100 upwards, in byte order.

The space (byte 32) is the 33rd of those 68, so it becomes U+0120 ``Ġ``.
That is why GPT-2's vocabulary is full of words like ``Ġthe``: ``" the"``.
The newline (byte 10) becomes ``Ċ``. The map is a bijection, so nothing is
lost, and a merge line ``Ġ t`` still splits on its one real space.

>>> bytes_to_unicode()[ord(" ")]
'Ġ'
>>> token_to_printable(" the\\n".encode())
'ĠtheĊ'
>>> printable_to_token('ĠtheĊ')
b' the\\n'
>>> token_to_printable("é".encode())   # two UTF-8 bytes, two stand-ins
'Ã©'
"""

from __future__ import annotations

from functools import cache

__all__ = ["bytes_to_unicode", "unicode_to_bytes", "token_to_printable", "printable_to_token"]


@cache
def bytes_to_unicode() -> dict[int, str]:
    """Map each byte value 0..255 to GPT-2's printable character for it.

    Built exactly as GPT-2's ``encoder.py`` builds it, so that ``vocab.json``
    and ``merges.txt`` files written by GPT-2 (and by HF tokenizers' byte-level
    BPE) read back to the same bytes. The dict is cached and shared: do not
    mutate it.
    """
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    mapping = {b: chr(b) for b in printable}
    next_char = 256
    for b in range(256):  # the 68 unprintable bytes, in byte order, get U+0100, U+0101, ...
        if b not in mapping:
            mapping[b] = chr(next_char)
            next_char += 1
    return dict(sorted(mapping.items()))


@cache
def unicode_to_bytes() -> dict[str, int]:
    """The inverse map: printable character -> byte value."""
    return {ch: b for b, ch in bytes_to_unicode().items()}


def token_to_printable(token: bytes) -> str:
    """Write a token's bytes as GPT-2's printable string, one character per byte."""
    table = bytes_to_unicode()
    return "".join(table[b] for b in token)


def printable_to_token(text: str) -> bytes:
    """Read GPT-2's printable string back into bytes.

    Raises ValueError naming the first character that no byte maps to (a
    ``vocab.json`` written by hand, or decoded with the wrong encoding).
    """
    table = unicode_to_bytes()
    try:
        return bytes(table[ch] for ch in text)
    except KeyError as err:
        ch = err.args[0]
        raise ValueError(
            f"{text!r} contains {ch!r} (U+{ord(ch):04X}), which is not one of GPT-2's 256 byte characters"
        ) from None
