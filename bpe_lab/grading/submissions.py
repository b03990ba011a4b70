"""Reading what was submitted: notebooks, the assignment each answers, the solutions.

What this adds over ``grader`` (which runs and scores): the careful
reading of files that may be anything. A submission larger than 20 MB, not
JSON or with malformed cells is "not a readable notebook", never a crash;
which solution it answers comes from ``--assignment``, the notebook's
metadata (written by ``release``) or its file name.
"""

from __future__ import annotations

import os
from pathlib import Path

import nbformat

__all__ = ["PathLike", "read_notebook", "read_submission", "assignment_of", "read_solutions", "expand"]

_MAX_NOTEBOOK_BYTES = 20 << 20

PathLike = str | os.PathLike[str]


def read_notebook(text: str) -> nbformat.NotebookNode:
    """Notebook text as a version 4 notebook."""
    notebook: nbformat.NotebookNode = nbformat.reads(text, as_version=4)  # type: ignore[no-untyped-call, unused-ignore]
    return notebook


def read_submission(path: Path) -> nbformat.NotebookNode:
    """The submission as a notebook, or ValueError saying why it is not one."""
    if path.stat().st_size > _MAX_NOTEBOOK_BYTES:
        raise ValueError(f"the file is larger than {_MAX_NOTEBOOK_BYTES >> 20} MB")
    try:
        nb = read_notebook(path.read_text(encoding="utf-8"))
        cells = nb.cells
        if not isinstance(cells, list) or not all(
            isinstance(c.get("source"), str) and c.get("cell_type") for c in cells
        ):
            raise ValueError("its cells are malformed")
    except Exception as err:  # noqa: BLE001 - any parse failure means "not a notebook"
        raise ValueError(f"not a readable notebook ({type(err).__name__}: {_cut(str(err), 150)})") from None
    return nb


def assignment_of(path: Path, nb: nbformat.NotebookNode | None, known: list[str], override: str | None) -> str | None:
    """Which solution a submission answers: --assignment, the notebook's
    metadata (written by release), or a known name in the file name."""
    if override:
        return override
    meta = nb.metadata.get("bpe_lab", {}) if nb is not None else {}
    name = meta.get("assignment") if isinstance(meta, dict) else None
    if name in known:
        return str(name)
    return next((name for name in sorted(known, key=len, reverse=True) if name in path.name), None)


def read_solutions(solutions_dir: Path) -> dict[str, nbformat.NotebookNode]:
    paths = sorted(solutions_dir.glob("[0-9][0-9]_*.ipynb"))
    if not paths:
        raise ValueError(f"no solution notebooks in {solutions_dir}")
    return {p.stem: read_notebook(p.read_text(encoding="utf-8")) for p in paths}


def expand(submissions: list[PathLike]) -> list[Path]:
    paths: list[Path] = []
    for item in map(Path, submissions):
        if item.is_dir():
            paths.extend(sorted(p for p in item.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts))
        elif item.exists():
            paths.append(item)
        else:
            raise FileNotFoundError(f"no such submission: {item}")
    if not paths:
        raise ValueError("no submissions to grade")
    return paths


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
