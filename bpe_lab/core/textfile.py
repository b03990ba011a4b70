"""Reading text files with errors a learner can act on.

A corpus that is not UTF-8 should fail loudly, at the byte that is wrong,
instead of being decoded into mojibake or silently skipped.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["read_text", "decode_utf8", "check_file"]


def decode_utf8(data: bytes, source: str = "data", offset: int = 0) -> str:
    """Decode ``data`` as UTF-8, or raise ValueError naming ``source`` and the
    byte offset (counted from ``offset``) of the first invalid byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        bad = data[err.start : err.start + 1].hex()
        raise ValueError(
            f"{source} is not valid UTF-8: byte 0x{bad} at offset {offset + err.start} ({err.reason})"
        ) from None


def check_file(path: str | os.PathLike[str]) -> Path:
    """``path`` as a Path, or FileNotFoundError / IsADirectoryError naming it."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no such file: {path}")
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a directory, not a text file")
    return path


def read_text(path: str | os.PathLike[str]) -> str:
    """The whole file as text; FileNotFoundError and ValueError name the file."""
    path = check_file(path)
    return decode_utf8(path.read_bytes(), str(path))
