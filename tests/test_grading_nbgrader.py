"""Real nbgrader grades the same notebooks: every solution gets full marks
on its autograded cells (its written answers wait for a person) and the
released, untouched notebook 0.

In a temporary course directory laid out as nbgrader wants it
(``source/ASSIGNMENT/``, ``release/``, ``submitted/STUDENT/ASSIGNMENT/``,
the gradebook in ``gradebook.db``), with a ``nbgrader_config.py`` that names
the kernel (nbgrader 0.9 asks for one), ``nbgrader generate_assignment`` and
``nbgrader autograde`` run on every solution notebook, in one Python
process (about 30 s). Deselect with ``-k 'not nbgrader'``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("nbgrader", reason="nbgrader is in the test extra: pip install -e '.[test]'")

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
    for student, notebook in (("solver", root / "source"), ("untouched", root / "release")):
        folder = root / "submitted" / student / name
        folder.mkdir(parents=True)
        shutil.copy(notebook / name / f"{name}.ipynb", folder)
        result = api.autograde(name, student, force=True)
        if not result["success"]:
            failures[f"{name}/{student}"] = result["log"][-3000:]
grades = {}
with Gradebook(f"sqlite:///{root}/gradebook.db") as gradebook:
    for name in names:
        for student in ("solver", "untouched"):
            try:
                nb = gradebook.find_submission_notebook(name, name, student)
            except Exception:
                continue
            grades[f"{name}/{student}"] = [
                [g.name, g.auto_score, g.max_score, g.needs_manual_grade] for g in nb.grades
            ]
print(json.dumps({"failures": failures, "grades": grades}))
"""


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    root = tmp_path_factory.mktemp("nbgrader_course")
    (root / "nbgrader_config.py").write_text(CONFIG.format(root=str(root)), encoding="utf-8")
    for name in NAMES:
        (root / "source" / name).mkdir(parents=True)
        (root / "source" / name / f"{name}.ipynb").write_bytes((SOLUTIONS / f"{name}.ipynb").read_bytes())
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
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_nbgrader_generates_and_autogrades_every_solution_notebook(course):
    assert course["failures"] == {}
    assert sorted(course["grades"]) == sorted(f"{n}/{s}" for n in NAMES for s in ("solver", "untouched"))


@pytest.mark.parametrize("name", NAMES)
def test_nbgrader_gives_a_solution_full_marks_and_the_released_notebook_0(course, name):
    solver, untouched = course["grades"][f"{name}/solver"], course["grades"][f"{name}/untouched"]
    auto = [g for g in solver if not g[3]]
    assert auto and all(score == top for _, score, top, _ in auto), solver
    assert all(score is None for _, score, _, manual in solver if manual)  # written answers: a person's
    assert all(score == 0 for _, score, _, _ in untouched), untouched
