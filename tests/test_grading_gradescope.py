"""The Gradescope bundle grades like ``bpe-lab grade``.

``bpe-lab gradescope solutions/03_encoding.ipynb --out autograder.zip`` is
unpacked into temporary trees laid out like Gradescope's ``/autograder``
(``source/``, ``submission/``, ``results/``, ``submission_metadata.json``),
and ``run_autograder`` runs in each with ``AUTOGRADER_ROOT`` pointing there
and this virtualenv's ``python3`` first on PATH (``setup.sh``'s pip install
is not run: bpe_lab is installed already). A solution scores full marks,
the untouched exercise 0, and a submission that calls ``bpe_lab.encode_word``
0 on that task, naming it. The three run at once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from bpe_lab.cli import main
from bpe_lab.grading.release import release_notebook
from bpe_lab.grading.tasks import load_written

ROOT = Path(__file__).resolve().parent.parent
SOLUTION = ROOT / "solutions" / "03_encoding.ipynb"


def _delegating() -> nbformat.NotebookNode:
    solution = nbformat.read(SOLUTION, 4)
    nb = release_notebook(solution, "03_encoding")
    solved = {c.metadata["nbgrader"]["grade_id"]: c.source for c in solution.cells if "nbgrader" in c.metadata}
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid == "03_encoding_decode_answer":
            cell.source = solved[gid]
        if gid == "03_encoding_encode_word_answer":
            cell.source = "import bpe_lab\ndef encode_word(word, merges):\n    return bpe_lab.encode_word(word, merges)"
    return nb


SUBMISSIONS = {
    "solution": lambda: nbformat.read(SOLUTION, 4),
    "untouched": lambda: release_notebook(nbformat.read(SOLUTION, 4), "03_encoding"),
    "delegating": _delegating,
}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("gradescope")
    bundle = tmp / "autograder.zip"
    assert main(["gradescope", str(SOLUTION), "--out", str(bundle)]) == 0
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    runs = {}
    for key, make in SUBMISSIONS.items():
        root = tmp / key / "autograder"
        with zipfile.ZipFile(bundle) as archive:
            archive.extractall(root / "source")
        for name in ("run_autograder", "setup.sh"):  # zipfile does not restore the mode bits
            (root / "source" / name).chmod(0o755)
        (root / "submission").mkdir()
        nbformat.write(make(), root / "submission" / "my_notebook.ipynb")
        meta = {"users": [{"email": f"{key}@example.org", "id": f"{key}-1", "name": key}]}
        (root / "submission_metadata.json").write_text(json.dumps(meta), encoding="utf-8")
        runs[key] = subprocess.Popen(
            [str(root / "source" / "run_autograder")],
            env={**env, "AUTOGRADER_ROOT": str(root)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    found = {}
    for key, run in runs.items():
        out, err = run.communicate(timeout=300)
        assert run.returncode == 0, err[-3000:]
        found[key] = json.loads((tmp / key / "autograder" / "results" / "results.json").read_text())
    return found, bundle


def test_the_bundle_holds_what_gradescope_runs(results):
    names = set(zipfile.ZipFile(results[1]).namelist())
    assert {"setup.sh", "run_autograder", "bundle.json", "solutions/03_encoding.ipynb"} <= names
    assert {"package/pyproject.toml", "package/bpe_lab/__init__.py", "package/bpe_lab/data/python_docs.txt"} <= names
    assert not any("__pycache__" in n for n in names)
    setup = zipfile.ZipFile(results[1]).read("setup.sh").decode()
    assert "pip install" in setup and "$SOURCE/package" in setup


def _tests(result: dict) -> dict[str, dict]:
    return {t["name"]: t for t in result["tests"]}


def test_a_solution_scores_full_marks(results):
    result = results[0]["solution"]
    auto = [t for t in result["tests"] if t["max_score"]]
    assert result["score"] == sum(t["max_score"] for t in auto) == 5
    assert all({"name", "score", "max_score", "output"} <= set(t) for t in result["tests"])
    for written in load_written(nbformat.read(SOLUTION, 4)):
        test = _tests(result)[written.grade_id]
        assert test["max_score"] == 0 and "needs manual grading" in test["output"]


def test_the_untouched_exercise_scores_zero(results):
    result = results[0]["untouched"]
    assert result["score"] == 0 and "not written yet" in _tests(result)["03_encoding_encode_word"]["output"]


def test_a_delegating_submission_scores_zero_on_that_task(results):
    tests = _tests(results[0]["delegating"])
    assert tests["03_encoding_encode_word"]["score"] == 0
    assert "bpe_lab.core.encode.encode_word" in tests["03_encoding_encode_word"]["output"]
    assert tests["03_encoding_decode"]["score"] == 2


def test_bundling_refuses_what_is_not_a_solution_notebook(tmp_path, capsys):
    other = tmp_path / "notes.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), other)
    assert main(["gradescope", str(other), "--out", str(tmp_path / "a.zip")]) == 2
    assert "NN_name.ipynb" in capsys.readouterr().err
