"""What the grading tests that play a hostile student share: exercise 03
with its answers filled in, and a way to find the processes a submission
left behind."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import nbformat
import pytest

from bpe_lab.grading import jail
from bpe_lab.grading.grader import Limits, Report, grade
from bpe_lab.grading.release import release_notebook

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
ENCODE, DECODE = "03_encoding_encode_word", "03_encoding_decode"
SOLUTION = nbformat.read(SOLUTIONS / "03_encoding.ipynb", 4)
SOLVED = {c.metadata["nbgrader"]["grade_id"]: c.source for c in SOLUTION.cells if "nbgrader" in c.metadata}

#: skipped only where no sandbox can be made, saying why (jail.why_not: no bwrap, no user namespaces)
needs_bwrap = pytest.mark.skipif(jail.bwrap() is None, reason=jail.why_not() or "no sandbox")


def submission(encode: str | None = None) -> nbformat.NotebookNode:
    """Exercise 03 with both answers solved, encode_word's replaced by ``encode``."""
    nb = release_notebook(SOLUTION, "03_encoding")
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid in (f"{ENCODE}_answer", f"{DECODE}_answer"):
            cell.source = SOLVED[gid]
            if gid == f"{ENCODE}_answer" and encode is not None:
                cell.source = encode
    return nb


def running(mark: str) -> list[int]:
    """Processes whose command line holds ``mark``."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if mark.encode() in (entry / "cmdline").read_bytes() and int(entry.name) != os.getpid():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def exercise_with(name: str, answers: Mapping[str, str]) -> nbformat.NotebookNode:
    """Exercise ``name`` with every answer cell holding the solution's, but
    those in ``answers`` (keyed by grade_id without ``_answer``)."""
    solution = nbformat.read(SOLUTIONS / f"{name}.ipynb", as_version=4)
    solved = {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in solution.cells
        if c.metadata.get("nbgrader", {}).get("solution")
    }
    nb = release_notebook(solution, name)
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        if gid in solved:
            cell.source = answers.get(gid.removesuffix("_answer"), solved[gid])
    return nb


def grade_solution_exercise_and(folder: Path, name: str, answers: Mapping[str, str]) -> dict[str, Report]:
    """The solution, the untouched exercise and ``exercise_with(name,
    answers)``, graded in one run (two workers), by those three keys."""
    path = SOLUTIONS / f"{name}.ipynb"
    notebooks = {
        "solution": nbformat.read(path, as_version=4),
        "exercise": release_notebook(nbformat.read(path, as_version=4), name),
        "delegating": exercise_with(name, answers),
    }
    return _grade_written(folder, {key: (name, nb) for key, nb in notebooks.items()})


def grade_notebooks(folder: Path, notebooks: Mapping[str, nbformat.NotebookNode]) -> dict[str, Report]:
    """``{assignment: notebook}`` graded in one run (two workers), as
    ``folder/ASSIGNMENT/ASSIGNMENT.ipynb``, by assignment."""
    return _grade_written(folder, {name: (name, nb) for name, nb in notebooks.items()})


def _grade_written(folder: Path, notebooks: Mapping[str, tuple[str, nbformat.NotebookNode]]) -> dict[str, Report]:
    """Each ``{key: (assignment, notebook)}`` written as ``folder/KEY/ASSIGNMENT.ipynb``,
    all graded in one run (two workers), by key."""
    paths = []
    for key, (name, nb) in notebooks.items():
        paths.append(folder / key / f"{name}.ipynb")
        paths[-1].parent.mkdir()
        nbformat.write(nb, paths[-1])
    graded = grade(paths, solutions_dir=SOLUTIONS, limits=Limits(cell_timeout=60, notebook_timeout=180), jobs=2)
    return dict(zip(notebooks, graded))
