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
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from pathlib import Path

import nbformat

__all__ = [
    "PathLike",
    "MAX_FILE_MB",
    "MAX_SOURCE_MB",
    "read_notebook",
    "read_submission",
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


def read_submission(path: Path) -> nbformat.NotebookNode:
    """The submission as a notebook without outputs, or ValueError saying why it is not one."""
    if path.stat().st_size > MAX_FILE_MB << 20:
        raise ValueError(f"the file is larger than {MAX_FILE_MB} MB")
    try:
        nb = read_notebook(path.read_text(encoding="utf-8"))
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
