"""The Gradescope bundle installs, and grades like ``bpe-lab grade``.

``bpe-lab gradescope solutions/03_encoding.ipynb --out autograder.zip``
runs as on Gradescope: ``setup.sh`` first, in a Python laid out like
Gradescope's image before it: a fresh environment (``venv --without-pip``)
holding this virtualenv's third-party packages and pip, as hard links (an
image's own files, which the sandbox binds back in with the environment;
where links cannot be made, symbolic ones), and nothing of bpe_lab, so
``import bpe_lab`` fails there until ``setup.sh`` has installed the bundle's
copy of the source (``BPE_LAB_NO_APT=1``: no apt-get). Its build takes
setuptools from the environment where that one is recent enough for
pyproject.toml, and from the index otherwise, as on Gradescope.

Then the bundle is unpacked into temporary trees laid out like Gradescope's
``/autograder`` (``source/``, ``submission/``, ``results/``,
``submission_metadata.json``), and ``run_autograder`` runs in each with
``AUTOGRADER_ROOT`` pointing there and that environment first on PATH, so
with the installed copy. A solution scores full marks, the untouched
exercise 0, a submission that calls ``bpe_lab.encode_word`` 0 on that task,
naming it, and one that writes its own results.json is graded as if it had
not. The four run at once, once: each was graded twice, also with this
virtualenv's copy, which is not how Gradescope runs it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import nbformat
import pytest

from bpe_lab.cli import main
from bpe_lab.grading.authoring.release import release_notebook
from bpe_lab.grading.authoring.tasks import load_written
from bpe_lab.grading.run.jail import NO_SANDBOX, bwrap

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


#: finding 2 on Gradescope: a notebook wrote results/results.json (score 100 of 9) and made it immutable
FORGER = """
import glob, json, os
forged = json.dumps({"score": 100, "tests": []})
for target in ["/autograder/results/results.json", *glob.glob("/proc/*/cwd/results/results.json")]:
    try:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        open(target, "w").write(forged)
    except OSError:
        pass
"""


def _forging() -> nbformat.NotebookNode:
    nb = nbformat.read(SOLUTION, 4)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "03_encoding_encode_word_answer":
            cell.source = FORGER + cell.source
    return nb


SUBMISSIONS = {
    "solution": lambda: nbformat.read(SOLUTION, 4),
    "untouched": lambda: release_notebook(nbformat.read(SOLUTION, 4), "03_encoding"),
    "delegating": _delegating,
    "forging": _forging,
}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bundle") / "autograder.zip"
    assert main(["gradescope", str(SOLUTION), "--out", str(out)]) == 0
    return out


def _autograder_root(root: Path, bundle: Path, key: str | None = None) -> Path:
    """``root`` laid out like Gradescope's /autograder: the bundle in source/,
    and (for a key of SUBMISSIONS) that submission and its metadata."""
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(root / "source")
    for name in ("run_autograder", "setup.sh"):  # zipfile does not restore the mode bits
        (root / "source" / name).chmod(0o755)
    if key is not None:
        (root / "submission").mkdir()
        nbformat.write(SUBMISSIONS[key](), root / "submission" / "my_notebook.ipynb")
        meta = {"users": [{"email": f"{key}@example.org", "id": f"{key}-1", "name": key}]}
        (root / "submission_metadata.json").write_text(json.dumps(meta), encoding="utf-8")
    return root


def _run_autograders(roots: dict[str, Path], env: dict[str, str]) -> dict[str, dict]:
    """Run each root's run_autograder at once; their results.json by key."""
    runs = {
        key: subprocess.Popen(
            [str(root / "source" / "run_autograder")],
            env={**env, "AUTOGRADER_ROOT": str(root)},
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for key, root in roots.items()
    }
    found = {}
    for key, run in runs.items():
        out, err = run.communicate(timeout=300)
        assert run.returncode == 0, err[-3000:]
        found[key] = json.loads((roots[key] / "results" / "results.json").read_text())
    return found


@pytest.fixture(scope="module")
def results(installed, bundle):
    """Every submission's results.json, graded by the installed copy (``installed``), and the bundle."""
    return installed["results"], bundle


def test_the_bundle_holds_what_gradescope_runs(results):
    names = set(zipfile.ZipFile(results[1]).namelist())
    assert {"setup.sh", "run_autograder", "bundle.json", "solutions/03_encoding.ipynb"} <= names
    assert json.loads(zipfile.ZipFile(results[1]).read("bundle.json"))["sandbox"] is True
    assert {"package/pyproject.toml", "package/setup.py", "package/README.md"} <= names
    assert {"package/bpe_lab/__init__.py", "package/bpe_lab/data/python_docs.txt"} <= names
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


def test_a_notebook_cannot_write_its_own_results(results):
    result = results[0]["forging"]
    assert result["score"] == 5 and NO_SANDBOX not in result["output"], result


def test_the_untouched_exercise_scores_zero(results):
    result = results[0]["untouched"]
    assert result["score"] == 0 and "not written yet" in _tests(result)["03_encoding_encode_word"]["output"]


def test_a_delegating_submission_scores_zero_on_that_task(results):
    tests = _tests(results[0]["delegating"])
    assert tests["03_encoding_encode_word"]["score"] == 0
    assert "bpe_lab.core.encode.encode_word" in tests["03_encoding_encode_word"]["output"]
    assert tests["03_encoding_decode"]["score"] == 2


def _ours(name: str) -> bool:
    """Whether a site-packages entry is bpe_lab's own (its editable install)."""
    return name.lower().replace("-", "_").startswith(("bpe_lab", "__editable__"))


def _link(source: str, target: str) -> None:
    try:
        os.link(source, target, follow_symlinks=False)
    except OSError:  # another file system
        os.symlink(os.path.realpath(source), target)


def _image_python(where: Path) -> Path:
    """A fresh Python environment at ``where`` like Gradescope's image before
    setup.sh: this virtualenv's third-party packages and pip, not bpe_lab."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True, timeout=60)
    python = where / "bin" / "python3"
    ask = "import sysconfig; print(sysconfig.get_path('purelib'))"
    site = Path(subprocess.run([python, "-c", ask], capture_output=True, text=True, check=True).stdout.strip())
    ours = dict.fromkeys(Path(sysconfig.get_path(kind)) for kind in ("purelib", "platlib"))
    for entry in sorted(e for folder in ours for e in folder.iterdir()):
        if _ours(entry.name) or (entry.suffix == ".pth" and str(ROOT) in entry.read_text(errors="replace")):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.copytree(entry, site / entry.name, symlinks=True, copy_function=_link)
        else:
            _link(str(entry), str(site / entry.name))
    return python


@pytest.fixture(scope="module")
def installed(tmp_path_factory, bundle):
    """setup.sh run in a fresh image-like Python, then run_autograder with it on every submission."""
    tmp = tmp_path_factory.mktemp("gradescope-setup")
    python = _image_python(tmp / "image")
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    env["PATH"] = os.pathsep.join([str(python.parent), os.environ.get("PATH", "")])
    which = "import bpe_lab; print(bpe_lab.__file__)"
    before = subprocess.run([python, "-c", which], env=env, cwd=tmp, capture_output=True, text=True, timeout=60)
    source = _autograder_root(tmp / "autograder", bundle) / "source"
    setup = subprocess.run(
        [str(source / "setup.sh")],
        env={**env, "BPE_LAB_NO_APT": "1"},
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert setup.returncode == 0, setup.stderr[-3000:]
    after = subprocess.run([python, "-c", which], env=env, cwd=tmp, capture_output=True, text=True, timeout=60)
    roots = {key: _autograder_root(tmp / key / "autograder", bundle, key) for key in SUBMISSIONS}
    return {"python": python, "before": before, "after": after, "results": _run_autograders(roots, env)}


def test_before_setup_the_image_python_has_the_dependencies_but_not_bpe_lab(installed):
    assert installed["before"].returncode != 0
    assert "No module named 'bpe_lab'" in installed["before"].stderr
    check = "import importlib.util as u, sys; sys.exit(not all(map(u.find_spec, ['pip', 'ipykernel', 'nbclient'])))"
    assert subprocess.run([installed["python"], "-c", check], timeout=60).returncode == 0


def test_setup_sh_installs_the_bundles_copy_into_that_python(installed):
    image = installed["python"].parent.parent
    assert installed["after"].returncode == 0, installed["after"].stderr
    where = Path(installed["after"].stdout.strip()).resolve()
    assert image.resolve() in where.parents and ROOT not in where.parents
    command = image / "bin" / "bpe-lab"
    assert command.is_file() and os.access(command, os.X_OK)
    assert command.read_text().splitlines()[0].startswith(f"#!{image}")  # its shebang: that Python


def test_the_installed_copy_grades_a_solution_to_full_marks_and_the_exercise_to_zero(installed):
    solution, untouched = installed["results"]["solution"], installed["results"]["untouched"]
    assert solution["score"] == sum(t["max_score"] for t in solution["tests"]) == 5
    assert untouched["score"] == 0 and "not written yet" in _tests(untouched)["03_encoding_encode_word"]["output"]
    if bwrap() is not None:  # graded in the sandbox, with that Python bound back in
        assert NO_SANDBOX not in solution["output"] + untouched["output"]


def test_bundling_refuses_what_is_not_a_solution_notebook(tmp_path, capsys):
    other = tmp_path / "notes.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), other)
    assert main(["gradescope", str(other), "--out", str(tmp_path / "a.zip")]) == 2
    assert "NN_name.ipynb" in capsys.readouterr().err


def test_where_no_sandbox_can_be_made_nothing_is_graded_and_the_output_says_why(tmp_path, bundle, monkeypatch):
    from bpe_lab.grading.commands.gradescope import run_gradescope
    from bpe_lab.grading.run import jail

    monkeypatch.setattr(jail, "_trial", lambda: (None, "bubblewrap (bwrap) is not installed"))
    result = run_gradescope(_autograder_root(tmp_path / "autograder", bundle, "solution"))
    assert result["score"] == 0 and result["tests"] == []
    assert "Not graded" in result["output"] and "apt-get install bubblewrap" in result["output"], result
    written = json.loads((tmp_path / "autograder" / "results" / "results.json").read_text())
    assert written == result
