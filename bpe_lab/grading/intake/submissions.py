"""Reading what was submitted: notebooks that may be anything, and the solutions.

What this adds over ``grader`` (which runs and scores): the careful
reading of files that may be anything. A file that is not JSON, not a
notebook, or has malformed cells is "not a readable notebook", never a
crash; an nbformat 3 notebook is read as version 4. Size is judged on
what will run: outputs and attachments are dropped on reading (the grader
never looks at them), so a 50 MB notebook of plots is graded, while a file
over ``MAX_FILE_MB`` or cells holding over ``MAX_SOURCE_MB`` of code and
text are refused with a reason. Which assignment a file answers, and whose
it is, is ``roster``'s question.

A submission is read and parsed once (``read_once``), when ``roster``
collects it: the notebook it gives (``Submitted``) is what tells its
assignment, what the grader runs and ``similar_answers`` compares, and the
bytes it read are what the generated cases' ``nonce`` digests, so that all
of them see the same file even if it changes while a class is graded.
"""

from __future__ import annotations

import hashlib
import io
import os
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bpe_lab.grading.notebook_format import nbformat

__all__ = [
    "PathLike",
    "MAX_FILE_MB",
    "MAX_SOURCE_MB",
    "Submitted",
    "nonce_of",
    "submission_nonce",
    "read_notebook",
    "read_once",
    "read_solutions",
    "notebook_files",
    "expand",
]

#: The largest file read at all, and the most code and text its cells may hold.
MAX_FILE_MB, MAX_SOURCE_MB = 64, 8

PathLike = str | os.PathLike[str]


def read_notebook(text: str) -> nbformat.NotebookNode:
    """Notebook text as a version 4 notebook (nbformat's warnings about what
    it repairs, such as duplicate cell ids, are not the grader's to print)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        notebook: nbformat.NotebookNode = nbformat.reads(text, as_version=4)  # type: ignore[no-untyped-call, unused-ignore]
    return notebook


@dataclass(frozen=True, eq=False)
class Submitted:
    """A submitted file, read once: its notebook without outputs (None when
    it is not one: ``error`` says why) and its ``nonce`` (``nonce_of`` the
    bytes read; "" when none could be read)."""

    notebook: nbformat.NotebookNode | None
    nonce: str = ""
    error: str = ""


def nonce_of(chunks: Iterable[bytes]) -> str:
    """What tells one submission from the next: the first 16 hex digits of
    the SHA-256 of the notebook file's bytes (another save is another
    submission; the same file graded again is the same one)."""
    digest = hashlib.sha256()
    for chunk in chunks:
        digest.update(chunk)
    return digest.hexdigest()[:16]


def submission_nonce(path: Path) -> str:
    """``nonce_of`` a file, read a block at a time (a file too large to grade has one too)."""
    with path.open("rb") as f:
        return nonce_of(iter(lambda: f.read(1 << 20), b""))


def read_once(path: Path) -> Submitted:
    """The submission read and parsed once, for every stage after intake;
    what cannot be read is said in ``error``, never raised."""
    try:
        if path.stat().st_size > MAX_FILE_MB << 20:
            return Submitted(None, submission_nonce(path), f"the file is larger than {MAX_FILE_MB} MB")
        data = path.read_bytes()
    except OSError as err:
        return Submitted(None, error=str(err))
    try:
        return Submitted(_notebook_of(data), nonce_of([data]))
    except ValueError as err:
        return Submitted(None, nonce_of([data]), str(err))


def _notebook_of(data: bytes) -> nbformat.NotebookNode:
    """A file's bytes as a notebook without outputs, or ValueError saying why
    it is not one (decoded as ``Path.read_text`` decodes: UTF-8, universal newlines)."""
    try:
        nb = read_notebook(io.TextIOWrapper(io.BytesIO(data), encoding="utf-8").read())
        cells = nb.cells
        if not isinstance(cells, list) or not all(
            isinstance(c, dict) and isinstance(c.get("source"), str) and c.get("cell_type") for c in cells
        ):
            raise ValueError("its cells are malformed")
    except Exception as err:  # noqa: BLE001 - any parse failure means "not a notebook"
        raise ValueError(f"not a readable notebook ({type(err).__name__}: {_cut(str(err), 150)})") from None
    for cell in cells:
        cell.pop("attachments", None)
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
    if sum(len(c["source"]) for c in cells) > MAX_SOURCE_MB << 20:
        raise ValueError(f"its cells hold more than {MAX_SOURCE_MB} MB of code and text")
    return nb


def read_solutions(solutions_dir: Path) -> dict[str, nbformat.NotebookNode]:
    paths = sorted(solutions_dir.glob("[0-9][0-9]_*.ipynb"))
    if not paths:
        raise ValueError(f"no solution notebooks in {solutions_dir}")
    return {p.stem: read_notebook(p.read_text(encoding="utf-8")) for p in paths}


def notebook_files(submissions: Sequence[PathLike]) -> list[tuple[Path, Path]]:
    """``(root, notebook)`` for each notebook: a file given is its own root's
    child; a folder is searched (checkpoints skipped) and is the root of what
    it holds, so that its layout can say whose each file is."""
    found: list[tuple[Path, Path]] = []
    for item in map(Path, submissions):
        if item.is_dir():
            notebooks = sorted(p for p in item.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
            found.extend((item, p) for p in notebooks)
        elif item.exists():
            found.append((item.parent, item))
        else:
            raise FileNotFoundError(f"no such submission: {item}")
    if not found:
        raise ValueError("no submissions to grade")
    return found


def expand(submissions: Sequence[PathLike]) -> list[Path]:
    """The notebooks in ``submissions`` (files, or folders searched)."""
    return [path for _, path in notebook_files(submissions)]


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
