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

Only regular files are read, and never through a symbolic link. Git
clones, ``tar`` and ``unzip`` keep links, and a submission that was a link
to ``solutions/`` (or to the Gradescope bundle's solution) scored full
marks with no code, one to a classmate's notebook scored theirs and made
the classmate look like the copier. So ``notebook_files`` walks a folder
by its directory entries, never into a linked folder, and reports a link
named ``*.ipynb``, a link to a folder, or an ``*.ipynb`` that is not a
regular file (a pipe would hang the read) as what it is; ``read_once``
opens each file from its root one folder at a time, ``O_NOFOLLOW`` on
every step, and reads the bytes once from that descriptor (a link put
there after the walk is refused too). What is not read is "not a notebook
file (a symbolic link): PATH", the path relative to the folder given.
"""

from __future__ import annotations

import errno
import hashlib
import io
import os
import stat
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from bpe_lab.grading.notebook_format import nbformat

__all__ = [
    "PathLike",
    "MAX_FILE_MB",
    "MAX_SOURCE_MB",
    "Submitted",
    "Found",
    "NotAFile",
    "not_a_file",
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


class NotAFile(OSError):
    """A path that is not a regular file, or is reached through a symbolic
    link: ``kind`` says what it is ("a symbolic link", "a named pipe")."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


def not_a_file(kind: str, where: str) -> str:
    """The report's words for a path that is not read: ``where`` relative to the folder given."""
    return f"not a notebook file ({kind}): {where}"


def _kind(mode: int) -> str:
    """What a file of ``mode`` is, in the report's words ("" for a regular file)."""
    kinds = [
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a named pipe"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a device"),
        (stat.S_ISBLK, "a device"),
    ]
    return "" if stat.S_ISREG(mode) else next((kind for test, kind in kinds if test(mode)), "not a regular file")


def _flag(name: str) -> int:
    """``os.NAME``, or 0 where the system has none (Windows, where
    ``bpe-lab`` imports this but grades nothing: it has no sandbox)."""
    return int(getattr(os, name, 0))


#: Opening a folder the instructor gave.
_ROOT_FLAGS = os.O_RDONLY | _flag("O_DIRECTORY") | _flag("O_CLOEXEC")
#: Opening a file to read: never through a link, never waiting on a pipe, never passed to a child.
_FILE_FLAGS = os.O_RDONLY | _flag("O_NOFOLLOW") | _flag("O_NONBLOCK") | _flag("O_CLOEXEC")
#: Opening a folder on the way to it: never through a link, and it must be a folder.
_FOLDER_FLAGS = _ROOT_FLAGS | _flag("O_NOFOLLOW")


def _open_at(name: str, folder: int, flags: int) -> int:
    """``name`` in the open ``folder`` opened with ``flags`` (which hold
    ``O_NOFOLLOW``); ``NotAFile`` when it is a symbolic link."""
    if name in ("", ".", "..") or "/" in name:
        raise NotAFile(f"a path step {name!r}")
    try:
        return os.open(name, flags, dir_fd=folder)
    except OSError as err:
        if err.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            with_link = _kind(os.lstat(name, dir_fd=folder).st_mode)
            if with_link:
                raise NotAFile(with_link) from None
        raise


def _open_below(root: Path, path: Path) -> int:
    """A descriptor of the regular file ``path``, opened from ``root`` one
    folder at a time with no link followed on the way (``root`` itself is
    the folder the instructor gave, and is followed)."""
    parts = path.relative_to(root).parts
    if not parts:
        raise NotAFile("a folder")
    folder = os.open(root, _ROOT_FLAGS)
    try:
        for part in parts[:-1]:
            inner = _open_at(part, folder, _FOLDER_FLAGS)
            os.close(folder)
            folder = inner
        fd = _open_at(parts[-1], folder, _FILE_FLAGS)
    finally:
        os.close(folder)
    kind = _kind(os.fstat(fd).st_mode)
    if kind:
        os.close(fd)
        raise NotAFile(kind)
    return fd


def read_once(path: Path, root: Path | None = None) -> Submitted:
    """The submission read and parsed once, for every stage after intake;
    what cannot be read is said in ``error``, never raised. The file is
    opened from ``root`` (the folder given, which holds it; by default its
    own folder) through no link (``_open_below``), and read from that
    descriptor alone."""
    root = path.parent if root is None else root
    try:
        fd = _open_below(root, path)
    except NotAFile as err:
        return Submitted(None, error=not_a_file(err.kind, path.relative_to(root).as_posix()))
    except (OSError, ValueError) as err:
        return Submitted(None, error=str(err))
    with os.fdopen(fd, "rb") as f:
        try:
            if os.fstat(f.fileno()).st_size > MAX_FILE_MB << 20:
                nonce = nonce_of(iter(lambda: f.read(1 << 20), b""))
                return Submitted(None, nonce, f"the file is larger than {MAX_FILE_MB} MB")
            data = f.read()
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


class Found(NamedTuple):
    """A notebook to grade: the ``root`` given (the class folder, or a
    file's own folder), its ``path`` there, and ``kind``: "" for a regular
    file, else what it is instead ("a symbolic link"), and then it is
    reported, never read."""

    root: Path
    path: Path
    kind: str = ""


#: The deepest folder searched (a tar can nest thousands; no layout goes past 3).
MAX_DEPTH = 32


def _walk(root: Path, folder: int, where: Path, depth: int = 0) -> Iterator[Found]:
    """What the open ``folder`` (``where``, under ``root``) holds to grade:
    regular ``*.ipynb`` files, and what is there instead (a link named so, a
    link to a folder, a pipe named so), never going through a link; the
    checkpoints Jupyter keeps are skipped, and a folder deeper than
    ``MAX_DEPTH`` is reported, not searched."""
    if depth > MAX_DEPTH:
        yield Found(root, where, f"a folder more than {MAX_DEPTH} deep")
        return
    with os.scandir(folder) as entries:
        named = sorted((entry.name, entry) for entry in entries)
    for name, entry in named:
        path = where / name
        try:
            found = _entry(root, folder, path, entry)
        except OSError as err:  # gone, or unreadable, since it was listed: said, never raised
            found = Found(root, path, f"a file that cannot be opened ({err.strerror or err})")
        if isinstance(found, Found):
            yield found
        elif found is not None:
            try:
                yield from _walk(root, found, path, depth + 1)
            finally:
                os.close(found)


def _entry(root: Path, folder: int, path: Path, entry: os.DirEntry[str]) -> Found | int | None:
    """One entry of the open ``folder``: a ``Found`` to grade or report, a
    sub-folder's open descriptor to walk, or None (nothing to grade)."""
    name = entry.name
    if entry.is_symlink():
        try:
            to_folder = stat.S_ISDIR(os.stat(name, dir_fd=folder).st_mode)
        except OSError:  # a link to nothing
            to_folder = False
        return Found(root, path, "a symbolic link") if to_folder or name.endswith(".ipynb") else None
    if entry.is_dir(follow_symlinks=False):
        if name == ".ipynb_checkpoints":
            return None
        try:
            return _open_at(name, folder, _FOLDER_FLAGS)
        except NotAFile as err:  # made a link since it was listed
            return Found(root, path, err.kind)
    if name.endswith(".ipynb"):
        return Found(root, path, _kind(entry.stat(follow_symlinks=False).st_mode))
    return None


def notebook_files(submissions: Sequence[PathLike]) -> list[Found]:
    """``Found(root, notebook, kind)`` for each notebook: a file given is
    its own root's child (a link given is reported as one); a folder given
    is followed if it is a link (it is the instructor's word), searched
    without following any link below it (``_walk``: checkpoints skipped),
    and is the root of what it holds, so that its layout can say whose each
    file is."""
    found: list[Found] = []
    for item in map(Path, submissions):
        if item.is_dir():
            folder = os.open(item, _ROOT_FLAGS)
            try:
                found.extend(_walk(item, folder, item))
            finally:
                os.close(folder)
        elif item.is_symlink() or item.exists():
            found.append(Found(item.parent, item, _kind(item.lstat().st_mode)))
        else:
            raise FileNotFoundError(f"no such submission: {item}")
    if not found:
        raise ValueError("no submissions to grade")
    return found


def expand(submissions: Sequence[PathLike]) -> list[Path]:
    """The notebooks in ``submissions`` (files, or folders searched), those
    that are not regular files too."""
    return [found.path for found in notebook_files(submissions)]


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
