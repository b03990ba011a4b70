"""What the grading tests share: exercise 03 with its answers filled in,
a way to find the processes a submission left behind, and one grading of
every solution and every untouched exercise per test run (``shared``).

``shared``: the solutions and the released exercises are what several test
files grade (full marks, and 0 with a message per task), and grading them
in each file took a kernel run per notebook and forbidden set every time.
Each notebook is graded once per test run, by the first process that asks
for it, and only when one asks: a file that needs chapter 07's solution and
exercise grades those two, not all twenty, so a file run alone pays for
what it reads. The reports are left in the run's pytest temp folder (the
one every xdist worker's own is made in: pytest prunes it), a file per
notebook named by the digest of what they depend on (the solutions, the
package, the limits), each under a file lock of its own (taken in sorted
order, so two workers never wait on each other); another worker that asks
meanwhile waits for it, then reads it.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import os
import pickle
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from bpe_lab.grading.authoring.release import release_notebook
from bpe_lab.grading.authoring.tasks import HiddenCase, Task
from bpe_lab.grading.cases.generated import generated
from bpe_lab.grading.commands.grader import Limits, Report, TaskResult, grade
from bpe_lab.grading.run import jail

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
NAMES = sorted(p.stem for p in SOLUTIONS.glob("[0-9][0-9]_*.ipynb"))
ENCODE, DECODE = "03_encoding_encode_word", "03_encoding_decode"
SOLUTION = nbformat.read(SOLUTIONS / "03_encoding.ipynb", 4)
SOLVED = {c.metadata["nbgrader"]["grade_id"]: c.source for c in SOLUTION.cells if "nbgrader" in c.metadata}

#: What the helpers below grade within, unless told.
LIMITS = Limits(cell_timeout=60, notebook_timeout=180)

#: Issue 18's gate breaker, a cell a submission puts first: every self-check a no-op in the kernel,
#: the checks' failure made silent and the hidden cell's score forged. Whatever the kernel does to
#: ``check``, the grader judges the visible cases' values itself, so this must gain nothing.
NO_OP_CHECKS = """from bpe_lab.grading import check
from bpe_lab.grading.check import runner
for name in dir(check):
    if name.startswith("check_"):
        setattr(check, name, lambda *args, **kwargs: None)
runner.fail = lambda *args, **kwargs: None
check.HiddenCases.score = lambda self: float(self.points)
"""

#: Exercise 04's trainer done the textbook way: every word's pairs counted again in every round. Its
#: merges are right; its work is corpus x merges, which the grader measures (``cases.complexity``).
RECOUNTING_TRAINER = """
def train_indexed(words, num_merges):
    corpus, merges = dict(words), []
    for _ in range(num_merges):
        counts = count_pairs(corpus)
        if not counts:
            break
        best = max(counts, key=lambda p: (counts[p], p))
        merges.append(best)
        corpus = {merge_symbols(s, best): f for s, f in corpus.items()}
    return merges
"""

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


def grade_solution_exercise_and(
    tmp_path_factory: pytest.TempPathFactory, name: str, delegated: Mapping[str, tuple[str, str]]
) -> dict[str, Report]:
    """The solution and the untouched exercise (from ``shared``), and the
    exercise with ``delegated``'s answers (``{grade_id: (source, the function
    it delegates to)}``) graded, by the keys solution, exercise, delegating."""
    answers = {gid: source for gid, (source, _) in delegated.items()}
    graded = shared(tmp_path_factory, [f"solution-{name}", f"exercise-{name}"]).reports
    folder = tmp_path_factory.mktemp(name)
    delegating = _grade_written(folder, {"delegating": (name, exercise_with(name, answers))})
    return {"solution": graded[f"solution-{name}"], "exercise": graded[f"exercise-{name}"], **delegating}


def grade_notebooks(folder: Path, notebooks: Mapping[str, nbformat.NotebookNode]) -> dict[str, Report]:
    """``{assignment: notebook}`` graded in one run (two workers), as
    ``folder/ASSIGNMENT/ASSIGNMENT.ipynb``, by assignment."""
    return _grade_written(folder, {name: (name, nb) for name, nb in notebooks.items()})


def fixed_and_generated(task: Task) -> tuple[HiddenCase, ...]:
    """A task's fixed hidden cases and those generated for two students
    (alice and bob): what a gate test's answer must get right, so that its
    0 is the visible check's doing."""
    return (*task.cases, *generated(task, "alice", nonce="1"), *generated(task, "bob", nonce="2"))


def graded_with_no_op_checks(
    tmp_path_factory: pytest.TempPathFactory, name: str, answers: Mapping[str, str]
) -> dict[str, TaskResult]:
    """Exercise ``name`` with ``answers`` written in (``exercise_with``) and
    the gate breaker (``NO_OP_CHECKS``) as its first cell, graded: its tasks
    by grade_id."""
    nb = exercise_with(name, answers)
    nb.cells.insert(1, nbformat.v4.new_code_cell(NO_OP_CHECKS))
    (report,) = grade_notebooks(tmp_path_factory.mktemp("gate"), {name: nb}).values()
    return {t.grade_id: t for t in report.tasks}


def _grade_written(
    folder: Path,
    notebooks: Mapping[str, tuple[str, nbformat.NotebookNode]],
    limits: Limits = LIMITS,
) -> dict[str, Report]:
    """Each ``{key: (assignment, notebook)}`` written as ``folder/KEY/ASSIGNMENT.ipynb``,
    all graded in one run (two workers), by key."""
    paths = []
    for key, (name, nb) in notebooks.items():
        paths.append(folder / key / f"{name}.ipynb")
        paths[-1].parent.mkdir()
        nbformat.write(nb, paths[-1])
    graded = grade(paths, solutions_dir=SOLUTIONS, limits=limits, jobs=2)
    return dict(zip(notebooks, graded))


#: The shared grading's limits: generous, so that a busy machine times no solution out.
SHARED_LIMITS = Limits(cell_timeout=60, notebook_timeout=240, memory_mb=1536)


@dataclass(frozen=True)
class Shared:
    """Solutions and untouched exercises, each graded once per test run:
    ``reports`` by ``solution-NAME`` and ``exercise-NAME`` (the student's
    folder, hence the student); ``unchanged``: the solutions and the
    submissions were the same bytes after grading as before."""

    reports: dict[str, Report]
    unchanged: bool


#: Every key ``shared`` grades: a solution and its untouched exercise per notebook.
KEYS = tuple(f"{kind}-{name}" for name in NAMES for kind in ("solution", "exercise"))
_SHARED: dict[str, Shared] = {}  # by key, each holding that one report


def tree_digest(folder: Path) -> str:
    """Every file's path under ``folder`` and bytes, digested."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


@functools.cache
def _digest() -> str:
    """What the shared reports depend on: the solutions, the package, the limits."""
    return hashlib.sha256(
        f"{tree_digest(SOLUTIONS)} {tree_digest(ROOT / 'bpe_lab')} {SHARED_LIMITS!r}".encode()
    ).hexdigest()[:16]


def shared(tmp_path_factory: pytest.TempPathFactory, keys: Iterable[str] = KEYS) -> Shared:
    """The reports of ``keys`` (``solution-NAME``, ``exercise-NAME``; default
    every one), each graded once per test run (see the module's docstring)."""
    wanted = sorted(set(keys))
    unknown = [k for k in wanted if k not in KEYS]
    if unknown:
        raise ValueError(f"shared grades {', '.join(KEYS)}; not {', '.join(map(repr, unknown))}")
    missing = [k for k in wanted if k not in _SHARED]
    if missing:
        base = tmp_path_factory.getbasetemp()
        if os.environ.get("PYTEST_XDIST_WORKER"):  # each worker's folder is made in the run's
            base = base.parent
        found = {k: base / f"shared-{_digest()}-{k}.pickle" for k in missing}
        with contextlib.ExitStack() as locks:
            for key in missing:  # sorted: two processes asking for overlapping keys never deadlock
                locks.enter_context(_locked(found[key].with_suffix(".lock")))
            todo = [k for k in missing if not found[k].exists()]
            if todo:
                graded = _grade_shared(Path(tempfile.mkdtemp(prefix=f"shared-{_digest()}-", dir=base)), todo)
                for key in todo:
                    written = found[key].with_suffix(".part")
                    written.write_bytes(pickle.dumps(Shared({key: graded.reports[key]}, graded.unchanged)))
                    written.replace(found[key])
            for key in missing:
                _SHARED[key] = pickle.loads(found[key].read_bytes())
    return Shared(
        {k: _SHARED[k].reports[k] for k in wanted},
        all(_SHARED[k].unchanged for k in wanted),
    )


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        yield


def _grade_shared(folder: Path, keys: list[str]) -> Shared:
    paths: dict[str, Path] = {}
    for key in keys:
        kind, name = key.split("-", 1)
        solution = nbformat.read(SOLUTIONS / f"{name}.ipynb", as_version=4)
        paths[key] = folder / key / f"{name}.ipynb"
        paths[key].parent.mkdir(parents=True)
        nbformat.write(solution if kind == "solution" else release_notebook(solution, name), paths[key])
    before = (tree_digest(SOLUTIONS), tree_digest(folder))
    graded = grade(list(paths.values()), solutions_dir=SOLUTIONS, limits=SHARED_LIMITS, jobs=2)
    return Shared(dict(zip(paths, graded)), before == (tree_digest(SOLUTIONS), tree_digest(folder)))
