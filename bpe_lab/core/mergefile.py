"""The merges file: the whole model of textbook BPE, as readable text.

One merge per line, the two symbols separated by a single space, in rank
order, under a ``#version`` header: the layout of subword-nmt's codes files,
whose header says how a word ends, as subword-nmt means it (its
``apply_bpe.py``, version 0.3.8 on PyPI, reads the header and nothing else to
decide):

- ``#version: 0.1``, or no header at all: ``</w>`` is a symbol of its own
  after the last character (``l o w </w>``), so merges such as
  ``est </w>`` end a word; ``train_bpe``'s default convention;
- ``#version: 0.2``: ``</w>`` is glued to the last character
  (``l o w</w>``), so merges such as ``s t</w>`` end a word and ``</w>`` is
  never a symbol alone; what subword-nmt's ``learn_bpe.py`` writes, and
  ``train_bpe(..., glue_end_of_word=True)``.

``save_merges`` writes the header of the convention it is told
(``glue_end_of_word``); ``read_merges`` returns the merges with the
convention the header names, and ``load_merges`` the merges alone. A file
from subword-nmt encodes as ``apply_bpe`` does when the words are the same:
subword-nmt cuts a line into words at ASCII spaces only, ``encode_text`` at
any white space (``str.split()``: also tabs, U+00A0 and U+3000;
``tests/test_subword_nmt.py``). subword-nmt reads only files whose
end-of-word marker is ``</w>`` and that have no start-of-word marker.
Symbols never contain white space, because words never do.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "codes.txt")
>>> save_merges([("s", "t</w>"), ("l", "o")], path, glue_end_of_word=True)
>>> open(path, encoding="utf-8").read()
'#version: 0.2\\ns t</w>\\nl o\\n'
>>> read_merges(path)
MergesFile(merges=[('s', 't</w>'), ('l', 'o')], glue_end_of_word=True)
>>> os.remove(path); os.rmdir(os.path.dirname(path))
"""

from __future__ import annotations

import os
import re
from bisect import bisect_left
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from bpe_lab.core.encode import merge_ranks
from bpe_lab.core.options import WordMarkers
from bpe_lab.core.symbols import END_OF_WORD, Pair
from bpe_lab.core.textfile import read_text

__all__ = ["save_merges", "load_merges", "read_merges", "MergesFile", "HEADERS", "HEADER"]

#: The header of each convention, keyed by ``glue_end_of_word``.
HEADERS = {False: "#version: 0.1", True: "#version: 0.2"}
#: The header subword-nmt's ``learn_bpe.py`` writes (the glued convention).
HEADER = HEADERS[True]

#: subword-nmt's header: ``#version:`` and a dotted number, trailing ``.0``s ignored.
_VERSION = re.compile(r"#version:\s+(\d+(?:\.\d+)*)\s*")
_GLUED_BY_VERSION = {(0, 1): False, (0, 2): True}
_CONVENTIONS = "0.1 ('</w>' a symbol of its own: 'est </w>') or 0.2 ('</w>' glued to the last character: 's t</w>')"


class MergesFile(NamedTuple):
    """What a merges file holds: the merges in rank order, and whether its
    header says ``</w>`` is glued to the last character (version 0.2)."""

    merges: list[Pair]
    glue_end_of_word: bool


def save_merges(
    merges: Sequence[Pair],
    path: str | os.PathLike[str],
    *,
    end_of_word: str | None = END_OF_WORD,
    start_of_word: str | None = None,
    glue_end_of_word: bool = False,
) -> None:
    """Write ``merges`` to ``path`` under the header of their convention:
    ``#version: 0.2`` with ``glue_end_of_word=True`` (``</w>`` glued to the
    last character, as subword-nmt learns), ``#version: 0.1`` without. The
    list is checked first, with the markers it was trained with, so a bad
    list is never saved."""
    markers = WordMarkers(end_of_word, start_of_word, glue_end_of_word)  # checks them
    try:
        merge_ranks(merges, end_of_word=end_of_word, start_of_word=start_of_word, glue_end_of_word=glue_end_of_word)
    except ValueError as err:
        if not glue_end_of_word and end_of_word and _valid(merges, WordMarkers(end_of_word, start_of_word, True)):
            raise ValueError(
                f"{err}; these merges glue {end_of_word!r} to the last character: "
                "save them with glue_end_of_word=True (their header is then #version: 0.2)"
            ) from None
        raise
    for rank, (a, b) in enumerate(merges):
        if any(ch.isspace() for ch in a + b):
            raise ValueError(f"merge {rank} {(a, b)!r} contains white space and cannot be saved")
        problem = _glued_problem(a, b, markers)
        if problem:
            raise ValueError(f"merge {rank} {(a, b)!r}: {problem}")
    lines = [HEADERS[glue_end_of_word]] + [f"{a} {b}" for a, b in merges]
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def read_merges(
    path: str | os.PathLike[str], *, end_of_word: str | None = END_OF_WORD, start_of_word: str | None = None
) -> MergesFile:
    """Read a merges file and the convention its header names (see the
    module docstring): ``#version: 0.2`` glues ``</w>`` to the last
    character; ``#version: 0.1`` or no header keeps it a symbol of its own.
    A malformed file raises ValueError naming the file, the line number and
    the line."""
    lines = read_text(path).splitlines()
    glued = False
    merges: list[Pair] = []
    numbers: list[int] = []
    for number, line in enumerate(lines, start=1):
        if number == 1 and line.startswith("#version"):
            glued = _read_header(line, path)
            continue
        if not line.strip():
            continue
        parts = line.split(" ")
        if len(parts) != 2 or not all(parts):
            raise ValueError(f"{path}, line {number}: expected two symbols separated by one space, got {line!r}")
        merges.append((parts[0], parts[1]))
        numbers.append(number)
    markers = WordMarkers(end_of_word, start_of_word, glued)
    if not _valid(merges, markers):
        # the first merge that breaks the list: the shortest prefix that fails
        bad = bisect_left(range(len(merges)), True, key=lambda k: not _valid(merges[: k + 1], markers))
        try:
            merge_ranks(merges[: bad + 1], end_of_word=end_of_word, start_of_word=start_of_word, glue_end_of_word=glued)
        except ValueError as err:
            hint = ""
            if not glued and end_of_word and _valid(merges, WordMarkers(end_of_word, start_of_word, True)):
                hint = f"; these merges glue {end_of_word!r} to the last character: "
                hint += f"the file's first line must be {HEADER!r}"
            raise ValueError(f"{path}, line {numbers[bad]}: {lines[numbers[bad] - 1]!r}: {err}{hint}") from None
    for merge, number in zip(merges, numbers):
        problem = _glued_problem(*merge, markers)
        if problem:
            raise ValueError(
                f"{path}, line {number}: {lines[number - 1]!r}: {problem}; "
                f"if the file holds the other convention, its first line must be {HEADERS[False]!r}"
            )
    return MergesFile(merges, glued)


def load_merges(
    path: str | os.PathLike[str],
    *,
    end_of_word: str | None = END_OF_WORD,
    start_of_word: str | None = None,
    glue_end_of_word: bool | None = None,
) -> list[Pair]:
    """The merges of a merges file (``read_merges`` without the convention).
    ``glue_end_of_word`` None takes the header's word; True or False is
    what the caller will encode with, and a header that says otherwise
    raises ValueError rather than let the merges be replayed wrongly."""
    if glue_end_of_word is not None and not isinstance(glue_end_of_word, bool):
        raise TypeError(f"glue_end_of_word must be True, False or None, got {glue_end_of_word!r}")
    merges, glued = read_merges(path, end_of_word=end_of_word, start_of_word=start_of_word)
    if glue_end_of_word is not None and glue_end_of_word != glued:
        raise ValueError(
            f"{path}, line 1: the header says glue_end_of_word={glued} "
            f"({HEADERS[glued]!r}{'' if glued else ' or none'}), but glue_end_of_word={glue_end_of_word} was asked for"
        )
    return merges


def _read_header(line: str, path: str | os.PathLike[str]) -> bool:
    """Whether the header ``line`` says ``</w>`` is glued (subword-nmt's reading of it)."""
    match = _VERSION.fullmatch(line)
    version = tuple(int(n) for n in match.group(1).split(".")) if match else ()
    while len(version) > 1 and version[-1] == 0:  # subword-nmt ignores trailing .0s
        version = version[:-1]
    if version not in _GLUED_BY_VERSION:
        raise ValueError(f"{path}, line 1: {line!r} is not a version header subword-nmt knows: {_CONVENTIONS}")
    return _GLUED_BY_VERSION[version]


def _valid(merges: Sequence[Pair], markers: WordMarkers) -> bool:
    try:
        merge_ranks(
            merges,
            end_of_word=markers.end_of_word,
            start_of_word=markers.start_of_word,
            glue_end_of_word=markers.glue_end_of_word,
        )
    except ValueError:
        return False
    return True


def _glued_problem(a: str, b: str, markers: WordMarkers) -> str | None:
    """Why the merge ``(a, b)`` cannot be in the glued convention, or None:
    there ``</w>`` is never a symbol alone (a file that says ``0.2`` above
    merges such as ``est </w>`` is one of the other convention)."""
    if markers.glue_end_of_word and markers.end_of_word in (a, b):
        return (
            f"{markers.end_of_word!r} is a symbol of its own, which the glued convention "
            f"({HEADERS[True]!r}, '</w>' joined to the last character) never has"
        )
    return None
