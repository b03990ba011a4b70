"""conftest.py's session-end check: a run fails when its tests leave entries
in the temp folder, names the test each appeared in (its own or a child
process's), and removes its own folder either way."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

LEAKY = """
import subprocess, sys, tempfile

def test_leaks_a_folder():
    tempfile.mkdtemp(prefix="bpe-lab-")

def test_cleans_up():
    with tempfile.TemporaryDirectory():
        pass

def test_a_child_leaks_a_file():
    subprocess.run([sys.executable, "-c", "import tempfile; tempfile.mkstemp(prefix='child-')"], check=True)
"""


def test_a_leak_fails_the_run_and_names_its_test(tmp_path):
    shutil.copyfile(Path(__file__).with_name("conftest.py"), tmp_path / "conftest.py")
    (tmp_path / "test_leaky.py").write_text(LEAKY, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:nbval", "test_leaky.py"],
        cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if k not in ("PYTEST_XDIST_WORKER", "BPE_LAB_SUITE_TMP")},
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 1, run.stdout + run.stderr  # every test passed: the leak alone fails it
    assert "3 passed" in run.stdout and "made 2 entries in its temp folder" in run.stdout
    lines = run.stdout.splitlines()
    assert any(line.startswith("  test_leaky.py::test_leaks_a_folder: bpe-lab-") for line in lines)
    assert any(line.startswith("  test_leaky.py::test_a_child_leaks_a_file: child-") for line in lines)
    assert "test_cleans_up" not in run.stdout
    folder = next(line for line in lines if "removed now, with " in line).split("removed now, with ")[1].split(")")[0]
    assert folder and not Path(folder).exists()
