"""What the grading tests that play a hostile student share: exercise 03
with its answers filled in, and a way to find the processes a submission
left behind."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest

from bpe_lab.grading import jail
from bpe_lab.grading.release import release_notebook

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
ENCODE, DECODE = "03_encoding_encode_word", "03_encoding_decode"
SOLUTION = nbformat.read(SOLUTIONS / "03_encoding.ipynb", 4)
SOLVED = {c.metadata["nbgrader"]["grade_id"]: c.source for c in SOLUTION.cells if "nbgrader" in c.metadata}

needs_bwrap = pytest.mark.skipif(
    jail.bwrap() is None, reason="bubblewrap (bwrap) is not installed or cannot run here: apt-get install bubblewrap"
)


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
