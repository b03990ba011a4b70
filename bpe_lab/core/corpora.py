"""Small real corpora that ship with BPE Lab, so the course runs offline and
gives the same numbers on every machine.

- ``python_docs``: the documentation topics of Python 3.11.7 (the text behind
  ``help("assert")``), about 465,000 characters of English technical prose,
  copied from the standard library's ``pydoc_data.topics`` under the PSF
  License (see ``data/python_docs.LICENSE.txt``). A copy, not an import,
  because every Python version ships a slightly different text.
- ``TEXTBOOK_CORPUS``: the word counts of Sennrich et al. (2016), the
  example every BPE course trains on first; read-only, so no caller can
  change another's input.
- ``parallel_sentences``: 30 everyday sentences written for BPE Lab in
  English, Chinese, German, French and Spanish, public domain (CC0).

>>> len(python_docs_topics())
79
>>> python_docs("heldout")[:16]
'   if __debug__:'
>>> parallel_sentences("zh")[0]
'今天天气很好。'
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from types import MappingProxyType

__all__ = ["TEXTBOOK_CORPUS", "DATA_DIR", "LANGUAGES", "python_docs_topics", "python_docs", "parallel_sentences"]

#: low/lower/newest/widest: the hand-worked example of notebooks 02-04. A
#: read-only mapping shared by every caller; ``dict(TEXTBOOK_CORPUS)`` is a
#: copy to change.
TEXTBOOK_CORPUS: Mapping[str, int] = MappingProxyType({"low": 5, "lower": 2, "newest": 6, "widest": 3})

#: Where the corpora (and their licences) live inside the package.
DATA_DIR = Path(__file__).parents[1] / "data"

#: The columns of ``parallel_sentences.tsv``, in order.
LANGUAGES = ("en", "zh", "de", "fr", "es")

_PARTS = ("all", "train", "heldout")


@cache
def _topics() -> tuple[tuple[str, str], ...]:
    text = (DATA_DIR / "python_docs.txt").read_text(encoding="utf-8")
    topics = []
    for block in text.split("@@ ")[1:]:
        name, _, body = block.partition("\n")
        topics.append((name, body.rstrip("\n")))
    return tuple(topics)


def python_docs_topics() -> dict[str, str]:
    """Topic name -> text, in name order."""
    return dict(_topics())


def python_docs(part: str = "all") -> str:
    """The documentation topics joined by blank lines.

    ``part`` is "all", "train" or "heldout": cutting the text at blank lines
    into paragraphs, every fifth paragraph (the 5th, 10th, ...) is held out,
    so a model trained on "train" can be tested on text it has never seen.
    """
    if part not in _PARTS:
        raise ValueError(f"unknown part {part!r}; choose one of {_PARTS}")
    text = "\n\n".join(body for _, body in _topics())
    if part == "all":
        return text
    paragraphs = [p for p in text.split("\n\n") if p.strip()]
    return "\n\n".join(p for i, p in enumerate(paragraphs) if (i % 5 == 4) == (part == "heldout"))


@cache
def _parallel() -> dict[str, tuple[str, ...]]:
    lines = (DATA_DIR / "parallel_sentences.tsv").read_text(encoding="utf-8").splitlines()
    rows = [line.split("\t") for line in lines if line and not line.startswith("#")]
    header, body = rows[0], rows[1:]
    if tuple(header) != LANGUAGES or any(len(row) != len(header) for row in body):
        raise ValueError("parallel_sentences.tsv is malformed: every row needs one sentence per language")
    return {lang: tuple(row[i] for row in body) for i, lang in enumerate(header)}


def parallel_sentences(lang: str) -> list[str]:
    """The 30 parallel sentences in one language (see ``LANGUAGES``); the
    i-th sentence means the same in every language."""
    sentences = _parallel()
    if lang not in sentences:
        raise ValueError(f"unknown language {lang!r}; choose one of {LANGUAGES}")
    return list(sentences[lang])
