"""Which answers of a class look alike, and which look like the package's own.

What this adds over ``similarity`` (the fingerprints of one source, and how
two meet): a class. ``find_similar`` takes the submissions ``roster``
collected and, for each answer cell of each assignment (the solution's
cells marked ``solution: true``, code or a written answer, matched by
``grade_id`` as ``assembly`` matches them), compares

- every two submissions' cells, by the Jaccard index of their
  fingerprints (symmetric: a long cell and a short one sharing a line
  score low), through an index of which cells hold each fingerprint, so
  only pairs that share one are compared at all;
- every submission's cell with the package's answers to its task (the
  functions ``answers`` names, ``Task.own`` of the test cell that follows
  the answer cell) and with the solution notebook's own answer cell, by
  containment: the share of the learner's fingerprints found there (the
  package's function comes with its docstring and more, of which a copy
  may take only the body).

A pair is flagged at ``THRESHOLD`` or more with at least ``MIN_SHARED``
fingerprints in common.

The starter code of each cell (``release``'s exercise cell) is the base:
its k-grams are dropped from every side first, so an untouched exercise
shares nothing. A flag is evidence for a person to read (the matched lines
are in each ``Flag``; ``similarity_report`` lays them side by side), never a
score: a short task with one natural idiom (``count_pairs``' double loop)
can be written alike by two learners who never met.

Only notebook JSON is read (as ``roster.collect`` read it; ``bpe-lab grade
--similarity`` hands on the ``Collection`` it graded, so nothing is read
twice): no kernel runs, so
``bpe-lab grade --similarity-only`` needs no sandbox. A notebook that is not
one, or whose assignment cannot be told, is listed in ``skipped`` with the
reason, never a crash; so is a cell cut to its first ``MAX_CELL_CHARS``.
"""

from __future__ import annotations

import inspect
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from bpe_lab.grading.authoring.release import BEGIN_SOLUTION, END_SOLUTION, released_source
from bpe_lab.grading.authoring.tasks import load_tasks, nbgrader
from bpe_lab.grading.check.guard import resolve
from bpe_lab.grading.intake.roster import Collection, Submission, collect_class
from bpe_lab.grading.intake.submissions import PathLike, read_once
from bpe_lab.grading.notebook_format import nbformat
from bpe_lab.grading.run.stubs import package_dir
from bpe_lab.grading.score.similarity import Block, Fingerprints, K, W, base_hashes, compare, fingerprint

__all__ = [
    "THRESHOLD",
    "MIN_SHARED",
    "MAX_CELL_CHARS",
    "Settings",
    "Side",
    "Flag",
    "Similarity",
    "AnswerCell",
    "answer_cells",
    "find_similar",
    "similarity",
]

#: Flagged at or above: half the fingerprints in common. Independent
#: answers to the chapter 02 tasks (the tests') share under a tenth of
#: theirs with each other and under a fifth with the package or the model
#: answer; a copy with its names changed and its lines re-wrapped shares
#: all of them, and pasted package code is all contained.
THRESHOLD = 0.5
#: Fewer shared fingerprints than this (about three lines) are no evidence.
MIN_SHARED = 5
#: The most of one answer cell compared: a hundred times a long honest
#: answer; a cell of megabytes would cost the report minutes.
MAX_CELL_CHARS = 50_000

Against = Literal["submission", "package", "solution"]


@dataclass(frozen=True)
class Settings:
    """What a pair must reach to be flagged, and the winnowing's k and w."""

    threshold: float = THRESHOLD
    min_shared: int = MIN_SHARED
    k: int = K
    w: int = W

    def __post_init__(self) -> None:
        if not 0 < self.threshold <= 1:
            raise ValueError(f"the similarity threshold must be in (0, 1], got {self.threshold}")
        if self.min_shared < 1 or self.k < 1 or self.w < 1:
            raise ValueError(f"min_shared, k and w must be at least 1, got {self.min_shared}, {self.k}, {self.w}")


@dataclass(frozen=True)
class Side:
    """One side of a flag: ``name`` (the student; ``solution``; or the
    package function's path), where it is (``path``: the notebook, or the
    package file), its ``source``, and the line of that file its first
    line is (1 for a cell)."""

    name: str
    path: str
    source: str
    first_line: int = 1


@dataclass(frozen=True)
class Flag:
    """Two answers that look alike: in ``assignment``'s answer cell
    ``cell``, ``left`` (a submission) and ``right`` (another submission, the
    package or the solution, as ``against`` says), scored by ``measure``."""

    assignment: str
    cell: str
    against: Against
    left: Side
    right: Side
    measure: Literal["jaccard", "containment"]
    score: float
    shared: int
    blocks: tuple[Block, ...]

    def to_dict(self) -> dict[str, Any]:
        """The flag as JSON data, line numbers those of each side's file."""

        def lines(side: Side, span: tuple[int, int]) -> dict[str, Any]:
            text = side.source.splitlines()[span[0] - 1 : span[1]]
            return {"lines": [span[0] + side.first_line - 1, span[1] + side.first_line - 1], "text": text}

        return {
            "assignment": self.assignment,
            "cell": self.cell,
            "against": self.against,
            "left": {"name": self.left.name, "path": self.left.path},
            "right": {"name": self.right.name, "path": self.right.path},
            "measure": self.measure,
            "score": round(self.score, 3),
            "shared": self.shared,
            "blocks": [{"left": lines(self.left, b.left), "right": lines(self.right, b.right)} for b in self.blocks],
        }


@dataclass
class Similarity:
    """A class's flags, in a fixed order (assignment, its cells' order,
    submissions before the package and the solution, highest score first,
    then names), what was ``skipped`` (not compared, or not in full: a
    notebook that is not one, a cell over ``MAX_CELL_CHARS``) and why, and
    how many answer cells were compared."""

    flags: list[Flag]
    settings: Settings
    compared: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        s = self.settings
        return {
            "method": "winnowing",
            "settings": {"threshold": s.threshold, "min_shared": s.min_shared, "k": s.k, "w": s.w},
            "compared": self.compared,
            "flags": [f.to_dict() for f in self.flags],
            "skipped": [{"path": p, "reason": r} for p, r in self.skipped],
        }


@dataclass(frozen=True)
class AnswerCell:
    """One answer cell of a solution: its ``grade_id``, whether it is a
    written answer (``prose``: Markdown, compared word by word), its starter
    code's k-grams (``base``), and what it is compared with besides the
    class (``references``: the package's answers to its task, then the
    solution's own cell)."""

    grade_id: str
    prose: bool
    base: frozenset[int]
    references: tuple[tuple[Side, Fingerprints], ...]


def _package_side(path: str, settings: Settings, base: frozenset[int]) -> tuple[Side, Fingerprints] | None:
    """A package function's source as a side, or None when it has none to read."""
    try:
        function = resolve(path)[1]
        lines, first = inspect.getsourcelines(function)
        file = Path(inspect.getsourcefile(function) or "")
    except (ValueError, TypeError, OSError):
        return None
    source = "".join(lines)
    shown = file.relative_to(package_dir().parent) if file.is_relative_to(package_dir().parent) else file
    return Side(path, str(shown), source, first), fingerprint(source, settings.k, settings.w, base)


#: The solution's own markers, which the words of its written answers are read without.
_MARKERS = re.compile(rf"^[ \t]*(?:{re.escape(BEGIN_SOLUTION)}|{re.escape(END_SOLUTION)})[ \t]*$", re.MULTILINE)


def answer_cells(
    assignment: str, solution: nbformat.NotebookNode, settings: Settings | None = None
) -> list[AnswerCell]:
    """The answer cells of ``solution`` in order: its code cells marked
    ``solution: true``, each with the package's answers to the task whose
    test cell follows it, and its written answers (Markdown)."""
    settings = Settings() if settings is None else settings
    own = {task.grade_id: task.own for task in load_tasks(solution)}
    found: list[AnswerCell] = []
    waiting: list[AnswerCell] = []  # code cells, until their test cell says whose answers they are
    for cell in [*solution.cells, None]:
        meta = nbgrader(cell) if cell is not None else {}
        gid = str(meta.get("grade_id", ""))
        if cell is not None and meta.get("solution") and cell.cell_type in ("code", "markdown"):
            prose = cell.cell_type == "markdown"
            base = base_hashes(released_source(cell), settings.k, prose)
            model = Side("solution", f"{assignment} (solution)", str(cell.source))
            text = _MARKERS.sub("", model.source) if prose else model.source
            answer = AnswerCell(gid, prose, base, ((model, fingerprint(text, settings.k, settings.w, base, prose)),))
            (found if prose else waiting).append(answer)
        elif cell is None or gid in own:
            for answer in waiting:
                package = [_package_side(p, settings, answer.base) for p in own.get(gid, ())]
                found.append(replace(answer, references=(*filter(None, package), *answer.references)))
            waiting = []
    order = {str(nbgrader(c).get("grade_id", "")): i for i, c in enumerate(solution.cells)}
    return sorted(found, key=lambda a: order[a.grade_id])


def _answer(nb: nbformat.NotebookNode, grade_id: str) -> str | None:
    """The source of the submission's first cell with ``grade_id`` (as ``assembly`` runs it)."""
    return next((str(c.source) for c in nb.cells if nbgrader(c).get("grade_id") == grade_id), None)


def _pairs(
    assignment: str, cell: AnswerCell, learners: list[tuple[Side, Fingerprints]], settings: Settings
) -> list[Flag]:
    """Flags for the pairs of learners' cells that share enough fingerprints
    (counted through an index of the cells holding each one)."""
    holders: dict[int, list[int]] = defaultdict(list)
    for i, (_, prints) in enumerate(learners):
        for value in prints.places:
            holders[value].append(i)
    shared: Counter[tuple[int, int]] = Counter()
    for members in holders.values():
        shared.update((a, b) for n, a in enumerate(members) for b in members[n + 1 :])
    flags = []
    for (a, b), count in sorted(shared.items()):
        if count < settings.min_shared:
            continue
        match = compare(learners[a][1], learners[b][1])
        if match.jaccard >= settings.threshold:
            flags.append(
                Flag(
                    assignment,
                    cell.grade_id,
                    "submission",
                    learners[a][0],
                    learners[b][0],
                    "jaccard",
                    match.jaccard,
                    match.shared,
                    match.blocks,
                )
            )
    return flags


def _references(
    assignment: str, cell: AnswerCell, learners: list[tuple[Side, Fingerprints]], settings: Settings
) -> list[Flag]:
    """Flags for learners' cells that the package's answers or the solution contain."""
    flags = []
    for side, prints in learners:
        for reference, theirs in cell.references:
            match = compare(prints, theirs)
            if match.shared >= settings.min_shared and match.containment >= settings.threshold:
                against: Against = "solution" if reference.name == "solution" else "package"
                flags.append(
                    Flag(
                        assignment,
                        cell.grade_id,
                        against,
                        side,
                        reference,
                        "containment",
                        match.containment,
                        match.shared,
                        match.blocks,
                    )
                )
    return flags


def _learners(
    cell: AnswerCell,
    notebooks: list[tuple[Submission, nbformat.NotebookNode]],
    settings: Settings,
    skipped: list[tuple[str, str]],
) -> list[tuple[Side, Fingerprints]]:
    """Each learner's ``cell`` with its fingerprints, if it holds any beyond
    the starter code (a cell over ``MAX_CELL_CHARS`` cut, and said so)."""
    found = []
    for sub, nb in notebooks:
        source = _answer(nb, cell.grade_id)
        if source is None:
            continue
        if len(source) > MAX_CELL_CHARS:
            skipped.append(
                (
                    str(sub.path),
                    f"{cell.grade_id} holds {len(source):,} characters: only its first {MAX_CELL_CHARS:,} compared",
                )
            )
            source = source[:MAX_CELL_CHARS]
        prints = fingerprint(source, settings.k, settings.w, cell.base, cell.prose)
        if prints.places:
            found.append((Side(sub.student, str(sub.path), source), prints))
    return found


def find_similar(
    submissions: Sequence[Submission], solutions: dict[str, nbformat.NotebookNode], settings: Settings | None = None
) -> Similarity:
    """The flags of a class: ``submissions`` as ``roster.collect`` gives them,
    ``solutions`` by assignment name (``read_solutions``)."""
    settings = Settings() if settings is None else settings
    result = Similarity([], settings)
    readable: dict[str, list[tuple[Submission, nbformat.NotebookNode]]] = defaultdict(list)
    for sub in sorted(submissions, key=lambda s: (s.student, str(s.path))):
        if sub.assignment not in solutions:
            result.skipped.append((str(sub.path), sub.error or f"unknown assignment {sub.assignment!r}"))
            continue
        read = sub.read if sub.read is not None else read_once(sub.path)
        if read.notebook is None:
            result.skipped.append((str(sub.path), read.error))
        else:
            readable[sub.assignment].append((sub, read.notebook))
    for assignment in sorted(readable):
        for cell in answer_cells(assignment, solutions[assignment], settings):
            learners = _learners(cell, readable[assignment], settings, result.skipped)
            result.compared += len(learners)
            found = _pairs(assignment, cell, learners, settings) + _references(assignment, cell, learners, settings)
            result.flags += sorted(found, key=_rank)
    return result


def _rank(flag: Flag) -> tuple[int, float, str, str, str, str]:
    kinds = {"submission": 0, "package": 1, "solution": 2}
    return (kinds[flag.against], -flag.score, flag.left.name, flag.right.name, flag.left.path, flag.right.path)


def similarity(
    inputs: Sequence[PathLike] | Collection,
    *,
    solutions_dir: PathLike = "solutions",
    assignment: str | None = None,
    settings: Settings | None = None,
) -> Similarity:
    """``find_similar`` over the notebooks in ``inputs`` (files, or folders
    searched, as ``bpe-lab grade`` reads them), or over a class already
    collected (``roster.collect_class``: what was graded, no file read
    again; ``solutions_dir`` and ``assignment`` were its own)."""
    if isinstance(inputs, Collection):
        collection = inputs
    elif isinstance(inputs, (str, bytes)) or not isinstance(inputs, Sequence):
        raise TypeError(f"similarity takes a list of notebooks or folders, or a roster.Collection, got {inputs!r:.100}")
    else:
        collection = collect_class(inputs, solutions_dir, assignment)
    return find_similar(collection.submissions, collection.solutions, settings)
