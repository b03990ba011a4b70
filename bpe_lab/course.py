"""The course as files a learner can open: find it, copy it, update it,
start JupyterLab.

What it adds over the notebooks in a clone: a learner who started from
``pip install bpe-lab`` (on Windows or macOS, with no ``make`` and no clone)
gets the same course. The wheel carries the notebooks and the exercises in
``bpe_lab/course/`` (``setup.py`` copies them in at build time); in a clone
they are read from the repository itself. ``bpe-lab lab [FOLDER]`` copies
them into a folder of the learner's, never overwriting a file that is
already there (it is the learner's work), and opens JupyterLab on the
first notebook: JupyterLab's default URL is set to that notebook's
``lab/tree/`` page, so the URL JupyterLab prints (with ``--no-browser``, the
one a learner copies) opens it too, not the launcher. The course's start
page, ``notebooks/README.md`` (the map, how checkpoints, self-checks and
exercises work), sits beside it in the file browser and is linked from it.
JupyterLab opens a Markdown file in its text editor, links unclickable, and
its ``lab/tree/`` URLs take no viewer; so the session gets one setting
default (``LAB_SETTING_DEFAULTS``, through ``JUPYTER_CONFIG_PATH`` and a
``labconfig/default_setting_overrides.json`` that lives as long as
JupyterLab): Markdown opens in its rendered preview, from the file browser,
a link or a URL. It is a default: a learner's own setting wins, and "Open
With > Editor" still edits.

Each copy records what it wrote in a manifest inside the folder
(``.bpe-lab-course.json``, hidden from JupyterLab's file browser): the
sha256 of every file, and for a notebook the sha256 of its cells' types and
sources in order. ``bpe-lab lab --update`` after a new wheel can then tell
the learner's edits from the files they never touched or only *ran*
(JupyterLab autosaves outputs, execution counts and metadata into the file,
but a run changes no cell's source):

- a file still as it was copied, or a notebook whose cells' sources are, is
  replaced by the new version when the course changed its sources (the
  learner's outputs of it go, and the summary says which); when the course
  changed only outputs, the learner's run copy is kept;
- a file the learner edited (a notebook whose sources changed) is kept, and
  named;
- a course file the folder never had is added;
- a file the learner deleted stays deleted, unless the new course changed it
  since it was copied (then it is restored: a fix they have not seen);
- a file present without a record (a folder copied before manifests
  existed) is kept unless it already equals the new version.

A manifest written before sources were recorded has only the sha256s: a
notebook's copied sources are then read from the new course's file when the
course has not changed it, else from JupyterLab's checkpoint of it
(``.ipynb_checkpoints/``) when that is still the copied file; otherwise only
a byte-identical file counts as untouched.

The folder may be one someone else prepared: nothing is written through a
symbolic link (the folder, ``notebooks/``, ``exercises/``, each course file
and the manifest are refused, named, when they are links, before anything is
written), each file is written to a fresh temporary file beside it and moved
over it (``os.replace``), and the manifest keeps only entries that name a
file of this course (the others are dropped, and named).

>>> sorted(p.name for p in course_files())[:2]
['00_why_subwords.ipynb', '01_compression_origins.ipynb']
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import urllib.parse
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "COURSE_FOLDERS",
    "MANIFEST",
    "START_PAGE",
    "CourseCopy",
    "course_root",
    "course_files",
    "sources_digest",
    "copy_course",
    "update_course",
    "lab_command",
    "lab_environment",
    "LAB_SETTING_DEFAULTS",
    "FIRST_NOTEBOOK",
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
    cleared: list[Path] = field(default_factory=list)  #: of ``updated``: notebooks the learner had run (outputs gone)
    restored: list[Path] = field(default_factory=list)  #: deleted by the learner, changed by the course since
    kept: list[Path] = field(default_factory=list)  #: already there and left alone (the learner's work)
    edited: list[Path] = field(default_factory=list)  #: of ``kept``: changed by the learner since the copy
    unrecorded: list[Path] = field(default_factory=list)  #: of ``kept``: no record of what was copied
    deleted: list[Path] = field(default_factory=list)  #: deleted by the learner and left deleted
    dropped: list[str] = field(default_factory=list)  #: manifest entries naming no file of this course, dropped


@dataclass
class _Record:
    """The manifest's content: sha256 of each file, and of each notebook's sources."""

    files: dict[str, str] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)

    def set(self, name: str, sha: str, sources: str | None) -> None:
        self.files[name] = sha
        self.sources.pop(name, None)
        if sources is not None:
            self.sources[name] = sources


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sources_digest(data: bytes) -> str | None:
    """The sha256 of a notebook's cells, each as its type and its source, in
    order: what a learner writes, and what running a notebook (outputs,
    execution counts, metadata, cell ids) leaves alone. None when ``data``
    is not a notebook of that shape.

    >>> cell = {"cell_type": "code", "source": ["x = 1\\n", "x"], "outputs": [], "execution_count": None}
    >>> ran = {**cell, "source": "x = 1\\nx", "outputs": [{"output_type": "stream"}], "execution_count": 3}
    >>> as_bytes = lambda *cells: json.dumps({"cells": list(cells), "metadata": {}}).encode()
    >>> sources_digest(as_bytes(cell)) == sources_digest(as_bytes(ran))
    True
    >>> sources_digest(as_bytes(cell)) == sources_digest(as_bytes({**cell, "source": "x = 2"})), sources_digest(b"[]")
    (False, None)
    """
    try:
        notebook = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        return None
    key: list[list[str]] = []
    for cell in cells:
        source = cell.get("source", "") if isinstance(cell, dict) else None
        if isinstance(source, list) and all(isinstance(line, str) for line in source):
            source = "".join(source)
        if not (isinstance(source, str) and isinstance(cell.get("cell_type"), str)):
            return None
        key.append([cell["cell_type"], source])
    return _sha256(json.dumps(key, ensure_ascii=False).encode("utf-8"))


def _refuse_link(path: Path) -> None:
    if path.is_symlink():
        raise ValueError(
            f"{path} is a symbolic link (to {os.readlink(path)!r}): bpe-lab lab writes the course only into real "
            "files and folders; remove the link, or give the folder it points to"
        )


def _check_folder(target: Path, names: Sequence[str]) -> None:
    """Refuse a folder that is a file, or one with a symbolic link where the
    course would write (before anything is written)."""
    _refuse_link(target)
    if target.exists() and not target.is_dir():
        raise NotADirectoryError(f"{target} is a file; give a folder for the course")
    for folder in COURSE_FOLDERS:
        _refuse_link(target / folder)
        if (target / folder).exists() and not (target / folder).is_dir():
            raise NotADirectoryError(f"{target / folder} is a file; the course needs a folder there")
    for name in (MANIFEST, *names):
        _refuse_link(target / name)


def _write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a fresh file beside it (O_EXCL,
    never a name someone prepared) moved over it: a link at ``path`` would be
    replaced, never followed, and a reader never sees half a file."""
    handle, scratch = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(scratch, 0o666 & ~mask)  # as open() would have made it; mkstemp's is 0o600
        os.replace(scratch, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(scratch)
        raise


def _entries(path: Path, data: dict[str, object], key: str, names: Sequence[str], dropped: list[str]) -> dict[str, str]:
    entries = data.get(key, {})
    if not isinstance(entries, dict):
        raise ValueError(
            f"{path}: its {key!r} is not a mapping of course files to sha256s; delete it to start a new record"
        )
    kept: dict[str, str] = {}
    for name, digest in entries.items():
        if name not in names:
            if name not in dropped:
                dropped.append(name)
            continue
        if not (isinstance(digest, str) and len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)):
            raise ValueError(
                f"{path}: entry {name!r}: {digest!r} is not a sha256; delete the manifest to start a new record"
            )
        kept[name] = digest
    return kept


def _read_manifest(target: Path, names: Sequence[str], dropped: list[str]) -> _Record:
    """What the manifest records of the course files ``names`` (an empty
    record where there is none); an entry naming another file is left out
    and its name added to ``dropped``. ValueError naming the manifest when
    it cannot be read or is not one of this layout."""
    path = target / MANIFEST
    if not path.exists():
        return _Record()
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
    return _Record(_entries(path, data, "files", names, dropped), _entries(path, data, "sources", names, dropped))


def _write_manifest(target: Path, record: _Record) -> None:
    data = {
        "format": _MANIFEST_FORMAT,
        "folders": list(COURSE_FOLDERS),
        "files": dict(sorted(record.files.items())),
        "sources": dict(sorted(record.sources.items())),
    }
    _write(target / MANIFEST, (json.dumps(data, indent=1) + "\n").encode("utf-8"))


def _copied_sources(dest: Path, copied: str, source: Path, new: bytes) -> str | None:
    """The sources of the notebook once copied to ``dest`` (sha256 ``copied``),
    for a manifest that did not record them: the course's file when it is
    still that version, else JupyterLab's checkpoint of ``dest`` when that is
    still the copied file; None when neither is."""
    if _sha256(new) == copied:
        return sources_digest(new)
    checkpoint = dest.parent / ".ipynb_checkpoints" / f"{dest.stem}-checkpoint{dest.suffix}"
    if checkpoint.is_file() and not checkpoint.is_symlink():
        kept = checkpoint.read_bytes()
        if _sha256(kept) == copied:
            return sources_digest(kept)
    return None


def _sync(destination: str | os.PathLike[str], *, update: bool) -> CourseCopy:
    target = Path(destination)
    sources = {f"{folder}/{p.name}": p for folder in COURSE_FOLDERS for p in course_files(folder)}
    _check_folder(target, list(sources))
    done = CourseCopy()
    old = _read_manifest(target, list(sources), done.dropped)
    record = _Record(dict(old.files), dict(old.sources))
    for folder in COURSE_FOLDERS:
        (target / folder).mkdir(parents=True, exist_ok=True)
    for name, source in sources.items():
        dest = target / name
        new = source.read_bytes()
        new_sha = _sha256(new)
        notebook = source.suffix == ".ipynb"
        new_sources = sources_digest(new) if notebook else None
        copied = old.files.get(name)

        if not dest.exists():
            if copied is not None and (not update or copied == new_sha):
                done.deleted.append(dest)  # the learner's choice, and the course has nothing new in it
                continue
            _write(dest, new)
            record.set(name, new_sha, new_sources)
            (done.restored if copied is not None else done.copied).append(dest)
            continue
        mine = dest.read_bytes()
        mine_sha = _sha256(mine)
        if mine_sha == new_sha:
            record.set(name, new_sha, new_sources)  # already the course's version (recorded or not)
            if not update:
                done.kept.append(dest)
            continue
        mine_sources = sources_digest(mine) if notebook else None
        copied_sources = old.sources.get(name)
        if notebook and copied is not None and copied_sources is None:
            copied_sources = _copied_sources(dest, copied, source, new)
            if copied_sources is not None:
                record.sources[name] = copied_sources
        only_ran = mine_sources is not None and mine_sources == copied_sources
        untouched = copied is not None and (mine_sha == copied or only_ran)
        if update and untouched and copied != new_sha:
            if mine_sha != copied and mine_sources == new_sources:
                # the course changed only outputs: the learner's run is as good, and keeps their outputs
                record.set(name, new_sha, new_sources)
                done.kept.append(dest)
                continue
            _write(dest, new)
            record.set(name, new_sha, new_sources)
            done.updated.append(dest)
            if mine_sha != copied:
                done.cleared.append(dest)
            continue
        done.kept.append(dest)
        if copied is None:
            done.unrecorded.append(dest)
        elif not untouched:
            done.edited.append(dest)
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


#: JupyterLab setting defaults while the course runs (a Markdown file opens rendered).
LAB_SETTING_DEFAULTS = {"@jupyterlab/docmanager-extension:plugin": {"defaultViewers": {"markdown": "Markdown Preview"}}}
#: The notebook JupyterLab opens first, relative to the course folder.
FIRST_NOTEBOOK = "notebooks/00_why_subwords.ipynb"


def lab_command(
    folder: str | os.PathLike[str], *, port: int | None = None, browser: bool = True, extra: Sequence[str] = ()
) -> list[str]:
    """The command that starts JupyterLab in ``folder`` on the first
    notebook (its default URL: the one JupyterLab prints and opens);
    ``extra`` is passed to JupyterLab as it is, after the options set here
    (so it wins)."""
    root = Path(folder).resolve()
    args = [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={root}"]
    if hasattr(os, "getuid") and os.getuid() == 0:
        args.append("--allow-root")
    if port is not None:
        args.append(f"--ServerApp.port={port}")
    if not browser:
        args.append("--no-browser")
    first = FIRST_NOTEBOOK if (root / FIRST_NOTEBOOK).is_file() else None
    if first is None:  # a course of other notebooks (or the learner renamed 00): the first there is
        first = next((f"notebooks/{p.name}" for p in sorted((root / "notebooks").glob("*.ipynb"))), None)
    if first is not None:
        args.append(f"--LabApp.default_url=/lab/tree/{urllib.parse.quote(first)}")
    return [*args, *extra]


@contextlib.contextmanager
def lab_environment(environ: Mapping[str, str] | None = None) -> Iterator[dict[str, str]]:
    """``environ`` (default: this process's) with ``LAB_SETTING_DEFAULTS``
    on ``JUPYTER_CONFIG_PATH`` first, as a ``labconfig`` folder in a
    temporary folder removed when the block ends."""
    base = dict(os.environ if environ is None else environ)
    with tempfile.TemporaryDirectory(prefix="bpe-lab-settings-") as config:
        labconfig = Path(config) / "labconfig"
        labconfig.mkdir()
        (labconfig / "default_setting_overrides.json").write_text(json.dumps(LAB_SETTING_DEFAULTS), encoding="utf-8")
        paths = [config, *filter(None, [base.get("JUPYTER_CONFIG_PATH")])]
        yield {**base, "JUPYTER_CONFIG_PATH": os.pathsep.join(paths)}


def open_lab(
    folder: str | os.PathLike[str], *, port: int | None = None, browser: bool = True, extra: Sequence[str] = ()
) -> int:
    """Start JupyterLab in ``folder`` on the first notebook, Markdown
    rendered (``lab_environment``); its exit code."""
    with lab_environment() as env:
        command = lab_command(folder, port=port, browser=browser, extra=extra)
        return subprocess.call(command, cwd=Path(folder).resolve(), env=env)
