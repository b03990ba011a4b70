"""Real nbgrader grades the same notebooks: every solution gets full marks
on its autograded cells (its written answers wait for a person), the
released, untouched notebook 0, and a submission right on only some hidden
cases of a task the partial score that ``bpe-lab grade`` gives it too (the
test cells' ``check.HiddenCases`` make the score the cell's value).

In a temporary course directory laid out as nbgrader wants it
(``source/ASSIGNMENT/``, ``release/``, ``submitted/STUDENT/ASSIGNMENT/``,
the gradebook in ``gradebook.db``), with a ``nbgrader_config.py`` that names
the kernel (nbgrader 0.9 asks for one), ``nbgrader generate_assignment`` and
``nbgrader autograde`` run on every solution notebook, in one Python
process (about 30 s; the partial submissions add a few seconds, and grading
them with ``bpe-lab grade`` about 10 s). Deselect with ``-k 'not nbgrader'``.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from bpe_lab.grading.authoring.release import release_notebook
from bpe_lab.grading.authoring.tasks import Task, load_tasks
from bpe_lab.grading.cases import generated as cases
from bpe_lab.grading.commands.grader import grade

# found, not imported: nbgrader is used by the course's own process (COURSE), and importing it here
# (its server extensions: half a second) would cost every test process that collects this file
if importlib.util.find_spec("nbgrader") is None:
    pytest.skip("nbgrader is in the test extra: pip install -e '.[test]'", allow_module_level=True)

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
NAMES = sorted(p.stem for p in SOLUTIONS.glob("[0-9][0-9]_*.ipynb"))

CONFIG = """
c = get_config()
c.CourseDirectory.root = {root!r}
c.CourseDirectory.course_id = "bpe_lab"
c.CourseDirectory.db_url = "sqlite:///{root}/gradebook.db"
c.Execute.kernel_name = "python3"
c.Execute.timeout = 120
"""

COURSE = """
import json, shutil, sys
from pathlib import Path
import bpe_lab.grading.notebook_format  # nbformat imported as the grader does, before nbgrader imports it
from nbgrader.api import Gradebook
from nbgrader.apps import NbGraderAPI
from traitlets.config.loader import PyFileConfigLoader

root, names = Path(sys.argv[1]), sys.argv[2:]
api = NbGraderAPI(config=PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config())
failures = {}
for name in names:
    result = api.generate_assignment(name, force=True)
    if not result["success"]:
        failures[name] = result["log"][-3000:]
        continue
    students = (("solver", "source"), ("untouched", "release"), ("partial", "partial"), ("cheater", "cheat"))
    for student, given in students:
        notebook = root / given
        if not (notebook / name / f"{name}.ipynb").exists():
            continue
        folder = root / "submitted" / student / name
        folder.mkdir(parents=True)
        shutil.copy(notebook / name / f"{name}.ipynb", folder)
        result = api.autograde(name, student, force=True)
        if not result["success"]:
            failures[f"{name}/{student}"] = result["log"][-3000:]
grades = {}
with Gradebook(f"sqlite:///{root}/gradebook.db") as gradebook:
    for name in names:
        for student in ("solver", "untouched", "partial", "cheater"):
            try:
                nb = gradebook.find_submission_notebook(name, name, student)
            except Exception:
                continue
            grades[f"{name}/{student}"] = [
                [g.name, g.auto_score, g.max_score, g.needs_manual_grade] for g in nb.grades
            ]
print(json.dumps({"failures": failures, "grades": grades}))
"""


#: Submissions right on only some hidden cases of one task, by notebook: the
#: task and how many of its fixed cases (the first ones) stay right.
PARTIAL = {
    "01_compression": ("01_compression_compress", 1),  # 1 of 3: 0.67 of 2 points
    "03_encoding": ("03_encoding_encode_word", 3),  # 3 of 4: 2.25 of 3 points
}


def _task(name: str, grade_id: str) -> Task:
    solution = nbformat.read(SOLUTIONS / f"{name}.ipynb", as_version=4)
    return next(t for t in load_tasks(solution) if t.grade_id == grade_id)


def partial_submission(name: str) -> nbformat.NotebookNode:
    """The solution, with the task's function wrapped to return None for the
    arguments of its fixed hidden cases after the first ``right`` ones: it
    still passes the visible self-check (whose cases are other ones) and
    every other task, and is right on exactly ``right`` hidden cases."""
    grade_id, right = PARTIAL[name]
    task = _task(name, grade_id)
    wrong = sorted(
        repr(tuple(ast.literal_eval(a) for a in ast.parse(case.call, mode="eval").body.args))
        for case in task.cases[right:]
    )
    nb = nbformat.read(SOLUTIONS / f"{name}.ipynb", as_version=4)
    answer = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == f"{grade_id}_answer")
    answer.source += (
        f"\n\n\n_right_{task.name} = {task.name}\n\n\n"
        f"def {task.name}(*args):\n"
        f"    return None if repr(args) in {wrong!r} else _right_{task.name}(*args)\n"
    )
    return nb


@pytest.fixture(scope="module")
def partial_paths(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("partial")
    paths = {}
    for name in PARTIAL:
        (root / name).mkdir()
        paths[name] = root / name / f"{name}.ipynb"
        nbformat.write(partial_submission(name), paths[name])
    return paths


#: Finding 10 of issue 18: one unlocked cell that makes the self-checks
#: no-ops and every hidden block score full points, in the released 02
#: (every answer still ``raise NotImplementedError()``).
CHEAT = """
from bpe_lab.grading import check
for name in dir(check):
    if name.startswith("check_"):
        setattr(check, name, lambda *args, **kwargs: None)
check.HiddenCases.score = lambda self: float(self.points)
"""
CHEATED = "02_training"
_TASKS = ("count_pairs", "merge_pair", "train", "first_mistake")  # its autograded tasks; the written answer is 0


def cheating_submission() -> nbformat.NotebookNode:
    nb = release_notebook(nbformat.read(SOLUTIONS / f"{CHEATED}.ipynb", as_version=4), CHEATED)
    nb.cells.insert(1, nbformat.v4.new_code_cell(CHEAT))
    return nb


@pytest.fixture(scope="module")
def course(tmp_path_factory, partial_paths):
    root = tmp_path_factory.mktemp("nbgrader_course")
    (root / "nbgrader_config.py").write_text(CONFIG.format(root=str(root)), encoding="utf-8")
    for name in NAMES:
        (root / "source" / name).mkdir(parents=True)
        (root / "source" / name / f"{name}.ipynb").write_bytes((SOLUTIONS / f"{name}.ipynb").read_bytes())
    for name, path in partial_paths.items():
        (root / "partial" / name).mkdir(parents=True)
        (root / "partial" / name / f"{name}.ipynb").write_bytes(path.read_bytes())
    (root / "cheat" / CHEATED).mkdir(parents=True)
    nbformat.write(cheating_submission(), root / "cheat" / CHEATED / f"{CHEATED}.ipynb")
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    done = subprocess.run(
        [sys.executable, "-c", COURSE, str(root), *NAMES],
        cwd=root,
        env=env,  # nbgrader runs `alembic` from PATH
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    graded = json.loads(done.stdout.strip().splitlines()[-1])
    graded["root"] = str(root)
    return graded


def test_nbgrader_generates_and_autogrades_every_solution_notebook(course):
    assert course["failures"] == {}
    wanted = [f"{n}/{s}" for n in NAMES for s in ("solver", "untouched")] + [f"{n}/partial" for n in PARTIAL]
    wanted.append(f"{CHEATED}/cheater")
    assert sorted(course["grades"]) == sorted(wanted)


@pytest.mark.parametrize("name", NAMES)
def test_nbgrader_gives_a_solution_full_marks_and_the_released_notebook_0(course, name):
    solver, untouched = course["grades"][f"{name}/solver"], course["grades"][f"{name}/untouched"]
    auto = [g for g in solver if not g[3]]
    assert auto and all(score == top for _, score, top, _ in auto), solver
    assert all(score is None for _, score, _, manual in solver if manual)  # written answers: a person's
    assert all(score == 0 for _, score, _, _ in untouched), untouched


def _autograded(grades: list[list]) -> dict[str, float]:
    return {grade_id: score for grade_id, score, _, manual in grades if not manual}


@pytest.mark.parametrize("name", PARTIAL)
def test_nbgrader_gives_partial_credit_by_the_fraction_of_hidden_cases_right(course, name):
    grade_id, right = PARTIAL[name]
    task = _task(name, grade_id)
    assert 0 < right < len(task.cases)  # really partial: neither 0 nor full marks
    scores = _autograded(course["grades"][f"{name}/partial"])
    assert scores.pop(grade_id) == round(task.points * right / len(task.cases), 2)
    full = {t.grade_id: t.points for t in load_tasks(nbformat.read(SOLUTIONS / f"{name}.ipynb", as_version=4))}
    assert scores == {gid: points for gid, points in full.items() if gid != grade_id}  # the other tasks: full marks


def test_bpe_lab_grader_gives_the_same_scores_as_nbgrader_on_the_fixed_cases(course, partial_paths, monkeypatch):
    """Both graders, task by task, on the partial submissions. bpe-lab also
    runs cases generated for each student, which nbgrader never sees: they
    are left out here, so both judge the same fixed cases."""
    monkeypatch.setattr(cases, "generated", lambda *args, **kwargs: ())
    reports = grade(list(partial_paths.values()), solutions_dir=SOLUTIONS, workers=2)
    for name, report in zip(partial_paths, reports):
        grade_id, right = PARTIAL[name]
        ours = {t.grade_id: t.points for t in report.tasks if not t.pending}
        assert ours == _autograded(course["grades"][f"{name}/partial"]), report.tasks
        result = next(t for t in report.tasks if t.grade_id == grade_id)
        assert (result.passed, result.cases) == (right, len(_task(name, grade_id).cases)), result


def test_under_nbgrader_the_score_is_the_kernels_word_bpe_lab_grade_regrades_the_same_tree(course, tmp_path):
    """nbgrader takes a test cell's value as its score and runs the checks in
    the learner's own kernel, so one cell that patches ``check`` gets full
    marks with no answer written: nbgrader's design, the README says so.
    ``bpe-lab grade`` on the same ``submitted/`` tree judges in the grader
    process and gives it 0."""
    tasks = load_tasks(nbformat.read(SOLUTIONS / f"{CHEATED}.ipynb", as_version=4))
    fooled = {g: s for g, s in _autograded(course["grades"][f"{CHEATED}/cheater"]).items() if g.endswith(_TASKS)}
    assert fooled == {t.grade_id: t.points for t in tasks} and sum(fooled.values()) == 9  # the limit, documented
    given = Path(course["root"]) / "submitted" / "cheater" / CHEATED / f"{CHEATED}.ipynb"
    copied = tmp_path / "submitted" / "cheater" / CHEATED / given.name  # that student's part of the tree, as it is
    copied.parent.mkdir(parents=True)
    copied.write_bytes(given.read_bytes())
    (report,) = grade([tmp_path / "submitted"], solutions_dir=SOLUTIONS, workers=1)
    assert (report.student, report.assignment) == ("cheater", CHEATED)
    ids = {t.grade_id for t in tasks}
    assert set(fooled) == ids
    assert {t.grade_id: t.points for t in report.tasks if t.grade_id in ids} == dict.fromkeys(ids, 0)
    assert report.total == 0 and all("NotImplementedError" in t.message for t in report.tasks if t.grade_id in ids)
