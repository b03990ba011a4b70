"""Who submitted what: students and assignments from the layouts instructors get.

What this adds over ``submissions`` (reading one file safely): a class.
``collect`` turns the files and folders given to ``bpe-lab grade`` into one
``Submission`` per notebook, with its student and its assignment:

- **the student**, from the first thing under the class root (the folder
  given to ``bpe-lab grade``): nbgrader's ``submitted/`` holds
  ``STUDENT/ASSIGNMENT/NAME.ipynb``; one folder per student
  (``submissions/STUDENT/*.ipynb``, an LMS folder name included); or a file
  at the top: an LMS download name, or the file name less the
  assignment's (``alice_03_encoding.ipynb``); a file given by itself is
  named by its parent folder where its name says nothing more.
- **who that is** (``Identity``, ``lms_identity``): Canvas's download
  names are ``name[_LATE]_userid_submissionid_file`` (``name`` is the
  student's sortable name, lower case, underscores included:
  ``sato_ken_1023_55023_02_training.ipynb`` is ``sato_ken``, user 1023,
  submission 55023; ``LATE`` is Canvas's marker of a late submission);
  Moodle's "download all submissions" names files, or folders holding
  them, ``Full Name_id_assignsubmission_file_…`` (the id is the
  assignment's participant identifier). The LMS id is the student's stable
  key: one student in the gradebook, however many files. A folder or file
  with no id is that student too when its name is the LMS name with the id
  (``sato_ken_1023``) or, for one student only, the LMS name itself.
  Nothing deeper counts: a notebook below the layout (mallory's
  ``mallory/03_encoding/bob/03_encoding/x.ipynb``) is reported as
  mallory's and not graded, never graded as bob's. Two submissions that
  would get the same student for the same assignment (the same file name in
  two folders, two Canvas uploads) are never merged: each is named by its
  path too, and the report says so.
- **the assignment**, from the evidence there is: the nbgrader ``grade_id``
  of its cells (each solution's are its own), the file and folder names,
  the notebook's metadata (``release`` writes it) and ``--assignment``. When
  they disagree (notebook 01's cells saved as ``03_encoding.ipynb``), or the
  name names two assignments and the cells cannot settle it, the submission
  is reported and not graded, never graded as the wrong one.

A symbolic link (to a notebook or a folder) or a ``*.ipynb`` that is not a
regular file is never read (``submissions.notebook_files``): it is one
row, its student's and the assignment its name tells, worth 0 and saying
"not a notebook file (a symbolic link): PATH". So a link to a classmate's
notebook scores nothing and compares with nothing in the similarity
report, and the classmate is not the copier there.

``collect_class`` is the one collecting of a ``bpe-lab grade`` run: the
solutions read and every submission read, parsed and told, once, in a
``Collection`` that the grader and ``similar_answers`` both take, so that
the similarity report compares the very notebooks that were graded.

>>> student_from_name("smithjane_12345_67890_02_training-1.ipynb", ["02_training"])
('smithjane_12345', '02_training-1.ipynb')
>>> lms_identity("sato_ken_LATE_1023_55023_02_training.ipynb")
Identity(name='sato_ken', user_id='1023', lms='canvas', submission_id='55023', late_marker=True)
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from bpe_lab.grading.authoring.tasks import nbgrader
from bpe_lab.grading.intake.submissions import (
    PathLike,
    Submitted,
    not_a_file,
    notebook_files,
    read_once,
    read_solutions,
)
from bpe_lab.grading.notebook_format import nbformat
from bpe_lab.grading.terminal_text import shown

__all__ = [
    "Identity",
    "lms_identity",
    "Submission",
    "Collection",
    "grade_ids",
    "student_from_name",
    "tell_assignment",
    "collect",
    "collect_class",
]

#: Canvas: ``name[_LATE]_userid_submissionid_file`` (a name has no space; it may hold underscores).
_CANVAS = re.compile(r"^(?P<name>[^\s_][^\s]*?)(?P<late>_LATE)?_(?P<id>\d+)_(?P<sub>\d+)_(?P<file>.+)$")
#: Moodle: ``Full Name_id_assignsubmission_file_…`` (a file, or a folder of the download-all zip).
_MOODLE = re.compile(r"^(?P<name>.+?)_(?P<id>\d+)_assignsubmission_[a-z]+_?(?P<file>.*)$")


@dataclass(frozen=True)
class Identity:
    """Who a submission is from: the ``name`` its LMS or folder gives, the
    LMS's ``user_id`` ("" when none: a folder per student), which ``lms``
    ("canvas", "moodle" or ""), Canvas's ``submission_id`` and its
    ``late_marker`` (the ``LATE`` in the file name)."""

    name: str
    user_id: str = ""
    lms: str = ""
    submission_id: str = ""
    late_marker: bool = False

    @property
    def key(self) -> str:
        """The gradebook's key: the LMS id, else the name."""
        return f"{self.lms}:{self.user_id}" if self.user_id else self.name


def lms_identity(name: str) -> Identity | None:
    """The ``Identity`` an LMS download name (a file's or a folder's) gives,
    or None when it is not one. Moodle's pattern is tried first: its names
    hold spaces, Canvas's never do."""
    if not isinstance(name, str):
        raise TypeError(f"lms_identity takes a file or folder name, got {name!r:.100}")
    found = _MOODLE.match(name)
    if found:
        return Identity(found["name"].strip(), found["id"], "moodle")
    found = _CANVAS.match(name)
    if found:
        return Identity(found["name"], found["id"], "canvas", found["sub"], bool(found["late"]))
    return None


@dataclass(frozen=True)
class Submission:
    """One notebook to grade: ``student`` (unique per assignment), its
    ``assignment`` (None when it cannot be told: ``error`` says why), a
    ``note`` for the report, and the file as ``collect`` read it (``read``:
    every later stage takes the notebook from there, never from the file);
    ``identity`` says who it is from (``Identity``), ``relative`` is its
    path under the class folder, ``mtime`` its modification time."""

    path: Path
    student: str
    assignment: str | None
    note: str = ""
    error: str = ""
    read: Submitted | None = field(default=None, compare=False, repr=False)
    identity: Identity | None = field(default=None, compare=False)
    relative: str = field(default="", compare=False)
    mtime: float = field(default=0.0, compare=False)


@dataclass(frozen=True)
class Collection:
    """A class collected once: the ``solutions`` by assignment (read from
    ``solutions_dir``) and one ``Submission`` per notebook (``collect``),
    each holding the file as it was read."""

    solutions_dir: Path
    solutions: dict[str, nbformat.NotebookNode]
    submissions: list[Submission]


def grade_ids(nb: nbformat.NotebookNode) -> set[str]:
    """The nbgrader grade_ids of a notebook's cells."""
    return {str(gid) for cell in nb.cells if (gid := nbgrader(cell).get("grade_id"))}


def student_from_name(name: str, known: list[str]) -> tuple[str, str]:
    """``(student, original file name)`` from an LMS download name, or
    ``("", name)`` when it is not one."""
    found = _MOODLE.match(name) or _CANVAS.match(name)
    if found:
        return f"{found['name'].strip().replace(' ', '_')}_{found['id']}", found["file"]
    return "", name


def _named(name: str, known: list[str]) -> list[str]:
    """The assignments a file name names (the longest ones, not their prefixes)."""
    found = [k for k in known if k in name]
    return [k for k in found if not any(k != other and k in other for other in found)]


def tell_assignment(
    nb: nbformat.NotebookNode | None, named: list[str], solutions: dict[str, set[str]], override: str | None
) -> tuple[str | None, str, str]:
    """``(assignment, note, error)`` for a notebook whose names name
    ``named``; ``solutions`` maps each assignment to its grade_ids."""
    ids = grade_ids(nb) if nb is not None else set()
    overlap = {name: len(ids & own) for name, own in solutions.items()}
    best = max(overlap.values(), default=0)
    holders = sorted(name for name, n in overlap.items() if n == best and best)
    content = holders[0] if len(holders) == 1 else None
    meta = nb.metadata.get("bpe_lab", {}) if nb is not None else {}
    declared = meta.get("assignment") if isinstance(meta, dict) else None
    if len(holders) > 1:
        return None, "", f"its cells belong to several assignments ({', '.join(holders)}): not graded"
    if override:
        if content and content != override:
            return None, "", f"--assignment is {override}, but its cells are {content}'s: not graded"
        return override, "", ""
    if content:
        if named and content not in named:
            return (
                None,
                "",
                (
                    f"its name says {' and '.join(named)}, but its cells are {content}'s: not graded "
                    "(rename it, or grade it with --assignment)"
                ),
            )
        note = (
            f"its name names {' and '.join(named)}; graded as {content}, whose cells it holds" if len(named) > 1 else ""
        )
        return content, note, ""
    if len(named) == 1:
        return named[0], "", ""
    if declared in solutions and (not named or declared in named):
        return str(declared), "", ""
    if len(named) > 1:
        return None, "", f"its name names {' and '.join(named)} and its cells do not tell which: not graded"
    return None, "", f"cannot tell which assignment this is (not one of {', '.join(solutions)}); use --assignment"


def _layout(path: Path, root: Path, known: list[str]) -> tuple[str, list[str], str]:
    """The student and the assignments that a file's place and name give,
    and why it is not graded ("" when it may be).

    The student is the first thing under the class root: the folder there
    (``STUDENT/…``) or the file (an LMS name, ``alice_03_encoding.ipynb``).
    What lies deeper than a layout goes is never read for a name, so a
    folder ``bob/03_encoding/`` inside mallory's submission makes no row
    for bob."""
    parts = path.relative_to(root).parts if path != root else (path.name,)
    top, original = student_from_name(parts[0], known)
    if len(parts) == 1:  # a file at the top: an LMS name, or the name less the assignment
        named = _named(Path(original).stem, known)
        if not top:
            top = Path(original).stem
            for name in named:
                top = top.replace(name, "")
            folder = path.parent.parent if path.parent.name in known else path.parent  # STUDENT/ASSIGNMENT/
            top = top.strip(" _-.") or folder.name or path.stem
        return top, named, ""
    student = top or parts[0]
    named = _named(Path(student_from_name(path.name, known)[1]).stem, known)
    if len(parts) == 2 and parts[0] in known:  # one folder per assignment: ASSIGNMENT/NAME.ipynb
        return _layout(path, root / parts[0], known)[0], [parts[0]], ""
    if len(parts) == 2:  # one folder per student: STUDENT/NAME.ipynb
        return student, named, ""
    if len(parts) == 3 and parts[1] in known:  # nbgrader: STUDENT/ASSIGNMENT/NAME.ipynb
        return student, [parts[1]], ""
    deep = shown("/".join(parts[1:-1]))  # folder names are the learner's
    return (
        student,
        named,
        f"it lies in {deep}/ inside {parts[0]}/, deeper than any layout goes (STUDENT/ASSIGNMENT/NAME.ipynb, "
        "STUDENT/NAME.ipynb, or NAME.ipynb at the top): not graded",
    )


def _identity(path: Path, root: Path, student: str, known: list[str]) -> Identity:
    """Who the file at ``path`` is from: the LMS name at the top of the
    class folder (a file's, a Moodle folder's; in a folder per assignment,
    the file's), else the ``student`` its layout gives."""
    parts = path.relative_to(root).parts if path != root else (path.name,)
    top = parts[1] if len(parts) == 2 and parts[0] in known else parts[0]
    return lms_identity(top) or Identity(student)


def _relative(path: Path, root: Path) -> str:
    """``path`` under the class folder, as a POSIX path ("" for the folder itself)."""
    return path.relative_to(root).as_posix() if path != root else path.name


def _mtime(path: Path) -> float:
    """The file's modification time (of a link itself: it is never followed); 0.0 when gone."""
    try:
        return os.lstat(path).st_mtime
    except OSError:
        return 0.0


def collect(
    inputs: Sequence[PathLike], solutions: dict[str, nbformat.NotebookNode], override: str | None = None
) -> list[Submission]:
    """One ``Submission`` per notebook in ``inputs`` (files, or folders
    searched for ``*.ipynb``), in order."""
    known = sorted(solutions)
    own = {name: grade_ids(nb) for name, nb in solutions.items()}
    found: list[Submission] = []
    for root, path, kind in notebook_files(inputs):
        student, named, deep = _layout(path, root, known)
        identity, relative, mtime = _identity(path, root, student, known), _relative(path, root), _mtime(path)
        if kind:  # a link, a pipe: reported (as its name's assignment, worth 0), never read
            unread = not_a_file(kind, path.relative_to(root).as_posix())
            assignment, _, error = tell_assignment(None, named, own, override)
            error = "; ".join(filter(None, [unread, error]))
            unread_one = Submitted(None, error=unread)
            found.append(
                Submission(
                    path,
                    student,
                    assignment,
                    error=error,
                    read=unread_one,
                    identity=identity,
                    relative=relative,
                    mtime=mtime,
                )
            )
            continue
        if deep:
            found.append(Submission(path, student, None, error=deep, identity=identity, relative=relative, mtime=mtime))
            continue
        read = read_once(path, root)  # the one read of this file: later stages take its notebook from here
        assignment, note, error = tell_assignment(read.notebook, named, own, override)
        if assignment is None and read.error:
            error = f"{read.error}; {error}"
        found.append(
            Submission(path, student, assignment, note, error, read, identity=identity, relative=relative, mtime=mtime)
        )
    return _apart(found)


def _apart(found: list[Submission]) -> list[Submission]:
    """Submissions that share a student and an assignment, each named by its path too."""
    groups: dict[tuple[str, str | None], list[int]] = defaultdict(list)
    for i, sub in enumerate(found):
        groups[(sub.student, sub.assignment)].append(i)
    for (student, assignment), members in groups.items():
        if len(members) < 2 or assignment is None:
            continue
        for i in members:
            sub = found[i]
            note = (
                f"{len(members)} submissions would be {student}'s for {assignment}: "
                f"graded apart, this one as {student} ({sub.path})"
            )
            found[i] = replace(sub, student=f"{student} ({sub.path})", note="; ".join(filter(None, [sub.note, note])))
    return found


def collect_class(
    inputs: Sequence[PathLike], solutions_dir: PathLike = "solutions", assignment: str | None = None
) -> Collection:
    """The solutions in ``solutions_dir`` and the submissions in ``inputs``
    (``collect``), every file read once; ``assignment`` (``--assignment``)
    must be one of the solutions'."""
    solutions = read_solutions(Path(solutions_dir))
    if assignment is not None and assignment not in solutions:
        raise ValueError(f"unknown assignment {assignment!r}; choose one of {', '.join(solutions)}")
    return Collection(Path(solutions_dir), solutions, collect(inputs, solutions, assignment))
