"""Corpora too big to ship, built on this machine from files Python already has.

What it adds over ``corpora``, whose texts ship inside the package: a corpus
of tens of megabytes for the benchmark and the scaling chapter, made offline
from every ``.py``, ``.txt`` and ``.rst`` file of this Python's standard
library (real code and prose, no download), joined with ``<|endoftext|>``
the way GPT-2's training data separates documents. It is built once into a
cache file (``$BPE_LAB_CACHE`` or ``~/.cache/bpe_lab``) and never committed.
"""

from __future__ import annotations

import os
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from bpe_lab.core.symbols import ENDOFTEXT

__all__ = ["stdlib_corpus"]

_SUFFIXES = (".py", ".txt", ".rst")


def _stdlib_files() -> Iterator[Path]:
    root = Path(sysconfig.get_paths()["stdlib"])
    for path in sorted(root.rglob("*")):  # sorted: the same corpus on every run
        if (
            path.suffix in _SUFFIXES
            and "site-packages" not in path.parts
            and "dist-packages" not in path.parts
            and path.is_file()
        ):
            yield path


def stdlib_corpus(cache_dir: str | os.PathLike[str] | None = None, max_bytes: int | None = None) -> Path:
    """The standard-library corpus as a UTF-8 file (built once, then cached).

    Files that are not valid UTF-8 (a few test fixtures) are skipped. With
    ``max_bytes`` only the first files, up to about that size, are joined.
    """
    cache = Path(cache_dir or os.environ.get("BPE_LAB_CACHE") or Path.home() / ".cache" / "bpe_lab")
    version = "{}.{}.{}".format(*sys.version_info[:3])
    path = cache / f"stdlib-{version}-{max_bytes or 'all'}.txt"
    if path.exists():
        return path
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("wb", dir=cache, delete=False) as out:
        try:
            _write_corpus(out, max_bytes)
        except BaseException:
            os.unlink(out.name)
            raise
    os.replace(out.name, path)  # atomic: a half-built corpus is never used
    return path


def _write_corpus(out: IO[bytes], max_bytes: int | None) -> None:
    separator, size = ENDOFTEXT.encode(), 0
    for source in _stdlib_files():  # one file in memory at a time
        try:
            data = source.read_bytes()
            data.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        out.write(separator + data if size else data)
        size += len(data) + len(separator)
        if max_bytes and size >= max_bytes:
            break
