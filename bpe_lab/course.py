"""The course as files a learner can open: find it, copy it, start JupyterLab.

What it adds over the notebooks in a clone: a learner who started from
``pip install bpe-lab`` (on Windows or macOS, with no ``make`` and no clone)
gets the same course. The wheel carries the notebooks and the exercises in
``bpe_lab/course/`` (``setup.py`` copies them in at build time); in a clone
they are read from the repository itself. ``bpe-lab lab [FOLDER]`` copies
them into a folder of the learner's, never overwriting a file that is
already there (it is the learner's work), and opens JupyterLab on it.

>>> sorted(p.name for p in course_files())[:2]
['00_why_subwords.ipynb', '01_compression_origins.ipynb']
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

__all__ = ["COURSE_FOLDERS", "course_root", "course_files", "copy_course", "open_lab"]

#: What a learner needs, relative to the course root.
COURSE_FOLDERS = ("notebooks", "exercises")
_PATTERNS = ("*.ipynb", "README.md")


def course_root() -> Path:
    """Where the course files are: inside the installed package (a wheel),
    else the repository this package was imported from (a clone)."""
    package = Path(__file__).resolve().parent
    for root in (package / "course", package.parent):
        if (root / "notebooks").is_dir() and any((root / "notebooks").glob("*.ipynb")):
            return root
    raise FileNotFoundError(
        f"the course notebooks are neither in {package / 'course'} nor in {package.parent / 'notebooks'}: "
        "reinstall bpe-lab from a wheel, or run from a clone of the repository"
    )


def course_files(folder: str = "notebooks") -> list[Path]:
    """The files of one course folder (``notebooks`` or ``exercises``)."""
    if folder not in COURSE_FOLDERS:
        raise ValueError(f"unknown course folder {folder!r}; choose one of {COURSE_FOLDERS}")
    source = course_root() / folder
    return sorted(p for pattern in _PATTERNS for p in source.glob(pattern))


def copy_course(destination: str | os.PathLike[str]) -> tuple[list[Path], list[Path]]:
    """Copy the course into ``destination`` (created if needed).

    Returns ``(copied, kept)``: the files written, and the files left alone
    because the destination already had them (a learner's edited notebook
    is never replaced). Raises NotADirectoryError if ``destination`` is a file.
    """
    target = Path(destination)
    if target.exists() and not target.is_dir():
        raise NotADirectoryError(f"{target} is a file; give a folder for the course")
    copied: list[Path] = []
    kept: list[Path] = []
    for folder in COURSE_FOLDERS:
        (target / folder).mkdir(parents=True, exist_ok=True)
        for source in course_files(folder):
            dest = target / folder / source.name
            if dest.exists():
                kept.append(dest)
                continue
            shutil.copyfile(source, dest)
            copied.append(dest)
    return copied, kept


def open_lab(folder: str | os.PathLike[str]) -> int:
    """Start JupyterLab in ``folder`` on the first notebook; its exit code."""
    root = Path(folder).resolve()
    args = [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={root}", "notebooks/00_why_subwords.ipynb"]
    if hasattr(os, "getuid") and os.getuid() == 0:
        args.insert(3, "--allow-root")
    return subprocess.call(args, cwd=root)
