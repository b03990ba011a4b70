"""The course as files a learner can open: find it, copy it, update it,
start JupyterLab.

What it adds over the notebooks in a clone: a learner who started from
``pip install bpe-lab`` (on Windows or macOS, with no ``make`` and no clone)
gets the same course. The wheel carries the notebooks and the exercises in
``bpe_lab/course/`` (``setup.py`` copies them in at build time); in a clone
they are read from the repository itself. ``bpe-lab lab [FOLDER]`` copies
them into a folder of the learner's, never overwriting a file that is
already there (it is the learner's work), and opens JupyterLab on the
first notebook. The course's start page, ``notebooks/README.md`` (the map,
how checkpoints, self-checks and exercises work), sits beside it in the
file browser: JupyterLab would open a ``.md`` given on its command line in
the text editor, links unclickable, so the first lesson is what opens.

Each copy records the sha256 of every file it wrote in a manifest inside
the folder (``.bpe-lab-course.json``, hidden from JupyterLab's file browser),
so that ``bpe-lab lab --update`` after a new wheel can tell the learner's
edits from the files they never touched:

- a file still as it was copied is replaced by the new version;
- a file the learner edited is kept, and named;
- a course file the folder never had is added;
- a file the learner deleted stays deleted, unless the new course changed it
  since it was copied (then it is restored: a fix they have not seen);
- a file present without a record (a folder copied before manifests
  existed) is kept unless it already equals the new version.

>>> sorted(p.name for p in course_files())[:2]
['00_why_subwords.ipynb', '01_compression_origins.ipynb']
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "COURSE_FOLDERS",
    "MANIFEST",
    "START_PAGE",
    "CourseCopy",
    "course_root",
    "course_files",
    "copy_course",
    "update_course",
    "lab_command",
    "open_lab",
]

#: What a learner needs, relative to the course root.
COURSE_FOLDERS = ("notebooks", "exercises")
_PATTERNS = ("*.ipynb", "README.md")
#: The record of what was copied, inside the copied folder.
MANIFEST = ".bpe-lab-course.json"
_MANIFEST_FORMAT = 1
#: The course's front door, relative to the course folder: its map and how it works.
START_PAGE = "notebooks/README.md"


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


@dataclass
class CourseCopy:
    """What one copy or update did, each list as paths inside the folder."""

    copied: list[Path] = field(default_factory=list)  #: written where there was no file: new course files
    updated: list[Path] = field(default_factory=list)  #: unchanged by the learner, replaced by the new version
    restored: list[Path] = field(default_factory=list)  #: deleted by the learner, changed by the course since
    kept: list[Path] = field(default_factory=list)  #: already there and left alone (the learner's work)
    edited: list[Path] = field(default_factory=list)  #: of ``kept``: changed by the learner since the copy
    unrecorded: list[Path] = field(default_factory=list)  #: of ``kept``: no record of what was copied
    deleted: list[Path] = field(default_factory=list)  #: deleted by the learner and left deleted


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _check_folder(target: Path) -> None:
    if target.exists() and not target.is_dir():
        raise NotADirectoryError(f"{target} is a file; give a folder for the course")
    for folder in COURSE_FOLDERS:
        if (target / folder).exists() and not (target / folder).is_dir():
            raise NotADirectoryError(f"{target / folder} is a file; the course needs a folder there")


def _read_manifest(target: Path) -> dict[str, str]:
    """The recorded sha256 of each copied file, by its path inside the
    folder ({} where there is no manifest); ValueError naming the manifest
    when it cannot be read or is not one of this layout."""
    path = target / MANIFEST
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"{path}: cannot read the course manifest ({err}); delete it to start a new record") from err
    if not isinstance(data, dict) or data.get("format") != _MANIFEST_FORMAT:
        raise ValueError(
            f"{path}: not a course manifest of format {_MANIFEST_FORMAT} (written by another bpe-lab?); "
            "delete it to start a new record"
        )
    if data.get("folders") != list(COURSE_FOLDERS) or not isinstance(data.get("files"), dict):
        raise ValueError(
            f"{path}: a manifest of another course layout (folders {data.get('folders')!r}, "
            f"this bpe-lab copies {list(COURSE_FOLDERS)}); delete it to start a new record"
        )
    files: dict[str, str] = data["files"]
    for name, digest in files.items():
        parts = name.split("/")
        bad_name = len(parts) != 2 or parts[0] not in COURSE_FOLDERS or parts[1] in ("", ".", "..")
        if bad_name or not (isinstance(digest, str) and len(digest) == 64):
            raise ValueError(f"{path}: entry {name!r}: {digest!r} is not a course file and its sha256")
    return files


def _write_manifest(target: Path, files: dict[str, str]) -> None:
    data = {"format": _MANIFEST_FORMAT, "folders": list(COURSE_FOLDERS), "files": dict(sorted(files.items()))}
    tmp = target / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    tmp.replace(target / MANIFEST)


def _sync(destination: str | os.PathLike[str], *, update: bool) -> CourseCopy:
    target = Path(destination)
    _check_folder(target)
    record = _read_manifest(target)
    done = CourseCopy()
    for folder in COURSE_FOLDERS:
        (target / folder).mkdir(parents=True, exist_ok=True)
        for source in course_files(folder):
            name = f"{folder}/{source.name}"
            dest = target / folder / source.name
            new = _sha256(source)
            copied = record.get(name)
            if dest.exists():
                mine = _sha256(dest)
                if mine == new:
                    record[name] = new  # already the course's version (recorded or not)
                    if not update:
                        done.kept.append(dest)
                    continue
                if update and copied == mine:
                    shutil.copyfile(source, dest)
                    record[name] = new
                    done.updated.append(dest)
                    continue
                done.kept.append(dest)
                if copied is None:
                    done.unrecorded.append(dest)
                elif copied != mine:
                    done.edited.append(dest)
            elif copied is not None and (not update or copied == new):
                done.deleted.append(dest)  # the learner's choice, and the course has nothing new in it
            else:
                shutil.copyfile(source, dest)
                record[name] = new
                (done.restored if copied is not None else done.copied).append(dest)
    _write_manifest(target, record)
    return done


def copy_course(destination: str | os.PathLike[str]) -> CourseCopy:
    """Copy the course into ``destination`` (created if needed), recording
    what it wrote in the manifest.

    A file already there is kept (a learner's edited notebook is never
    replaced), and a file the manifest records but the folder no longer has
    stays deleted. Raises NotADirectoryError if ``destination`` is a file,
    ValueError if its manifest cannot be read.
    """
    return _sync(destination, update=False)


def update_course(destination: str | os.PathLike[str]) -> CourseCopy:
    """Bring a copied course up to this bpe-lab's version: replace the files
    the learner never changed, keep the edited ones, add new course files,
    restore a deleted file only if the course changed it since it was copied
    (the module docstring has the rules)."""
    return _sync(destination, update=True)


def lab_command(
    folder: str | os.PathLike[str], *, port: int | None = None, browser: bool = True, extra: Sequence[str] = ()
) -> list[str]:
    """The command that starts JupyterLab in ``folder`` on the first
    notebook; ``extra`` is passed to JupyterLab as it is, after the options
    set here (so it wins)."""
    root = Path(folder).resolve()
    args = [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={root}"]
    if hasattr(os, "getuid") and os.getuid() == 0:
        args.append("--allow-root")
    if port is not None:
        args.append(f"--ServerApp.port={port}")
    if not browser:
        args.append("--no-browser")
    first = sorted((root / "notebooks").glob("*.ipynb"))
    return [*args, *extra, *(f"notebooks/{p.name}" for p in first[:1])]


def open_lab(
    folder: str | os.PathLike[str], *, port: int | None = None, browser: bool = True, extra: Sequence[str] = ()
) -> int:
    """Start JupyterLab in ``folder`` on the first notebook; its exit code."""
    return subprocess.call(lab_command(folder, port=port, browser=browser, extra=extra), cwd=Path(folder).resolve())
