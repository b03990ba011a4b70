"""Corpora too big to ship, built on this machine from files Python already has.

What it adds over ``corpora``, whose texts ship inside the package: corpora
of tens to hundreds of megabytes for the benchmark and the scaling chapter,
made offline from text that is already on disk (real code and prose, no
download), joined with ``<|endoftext|>`` the way GPT-2's training data
separates documents:

- ``"stdlib"``: every ``.py``, ``.txt`` and ``.rst`` file of this Python's
  standard library (about 32 MB for CPython 3.11);
- ``"site-packages"``: every ``.py``, ``.txt``, ``.rst`` and ``.md`` file of
  the installed packages (about 100 MB in the course's environment).

Files are taken in sorted order (the same corpus on every run), files that
are not UTF-8 are skipped, and a file whose bytes were already taken (the
same licence text in forty packages) is taken once. A corpus is built once
into a cache file (``$BPE_LAB_CACHE`` or ``~/.cache/bpe_lab``), written under
a temporary name and renamed, so a half-built file is never used, and never
committed. ``bpe-lab corpus`` builds one from the command line.
"""

from __future__ import annotations

import hashlib
import os
import sys
import sysconfig
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

from bpe_lab.core.symbols import ENDOFTEXT

__all__ = ["SOURCES", "cache_dir", "corpus_files", "offline_corpus", "stdlib_corpus"]

#: Where each source's files live and which suffixes count as text.
SOURCES = ("stdlib", "site-packages")
_SUFFIXES = {"stdlib": (".py", ".txt", ".rst"), "site-packages": (".py", ".txt", ".rst", ".md")}


def cache_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """``override``, else ``$BPE_LAB_CACHE``, else ``~/.cache/bpe_lab``."""
    return Path(override or os.environ.get("BPE_LAB_CACHE") or Path.home() / ".cache" / "bpe_lab")


def _roots(source: str) -> list[Path]:
    paths = sysconfig.get_paths()
    if source == "stdlib":
        return [Path(paths["stdlib"])]
    return sorted({Path(paths["purelib"]), Path(paths["platlib"])})


def corpus_files(source: str) -> Iterator[Path]:
    """The text files of one source, in sorted order."""
    if source not in SOURCES:
        raise ValueError(f"unknown corpus source {source!r}; choose from {SOURCES}")
    suffixes = _SUFFIXES[source]
    for root in _roots(source):
        for path in sorted(root.rglob("*")):
            inside_packages = "site-packages" in path.parts or "dist-packages" in path.parts
            if source == "stdlib" and inside_packages:
                continue  # installed packages are the other source
            if path.suffix in suffixes and path.is_file():
                yield path


def offline_corpus(
    max_bytes: int | None = None,
    *,
    sources: Iterable[str] = ("stdlib",),
    cache: str | os.PathLike[str] | None = None,
) -> Path:
    """A corpus file of at most about ``max_bytes`` (None: everything the
    sources hold), built once and then read from the cache. The file name
    says what it holds, for example ``stdlib+site-packages-3.11.7-128000000.txt``.
    """
    sources = tuple(sources)
    for source in sources:
        if source not in SOURCES:
            raise ValueError(f"unknown corpus source {source!r}; choose from {SOURCES}")
    if max_bytes is not None and (isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1):
        raise ValueError(f"max_bytes must be a positive int or None, got {max_bytes!r}")
    folder = cache_dir(cache)
    version = "{}.{}.{}".format(*sys.version_info[:3])
    path = folder / f"{'+'.join(sources)}-{version}-{max_bytes or 'all'}.txt"
    if path.exists():
        return path
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("wb", dir=folder, delete=False) as out:
        try:
            _write_corpus(out, (f for s in sources for f in corpus_files(s)), max_bytes)
        except BaseException:
            os.unlink(out.name)
            raise
    os.replace(out.name, path)  # atomic: a half-built corpus is never used
    return path


def stdlib_corpus(cache: str | os.PathLike[str] | None = None, max_bytes: int | None = None) -> Path:
    """The standard-library corpus (``offline_corpus(sources=("stdlib",))``)."""
    return offline_corpus(max_bytes, sources=("stdlib",), cache=cache)


def _write_corpus(out: IO[bytes], files: Iterable[Path], max_bytes: int | None) -> None:
    separator, size = ENDOFTEXT.encode(), 0
    seen: set[bytes] = set()
    for source in files:  # one file in memory at a time
        try:
            data = source.read_bytes()
            data.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        digest = hashlib.blake2b(data, digest_size=16).digest()
        if not data.strip() or digest in seen:
            continue
        seen.add(digest)
        out.write(separator + data if size else data)
        size += len(data) + len(separator)
        if max_bytes and size >= max_bytes:
            break
