"""The course copied out of the package: from a clone, and from a wheel a
learner would pip-install (bpe-lab lab)."""

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from bpe_lab.cli import main
from bpe_lab.course import copy_course, course_files, course_root

ROOT = Path(__file__).resolve().parents[1]


def test_a_clone_reads_the_course_from_the_repository():
    assert course_root() == ROOT
    names = [p.name for p in course_files("notebooks")]
    assert names[0] == "00_why_subwords.ipynb" and "README.md" in names
    assert {p.name for p in course_files("exercises")} >= {"01_compression.ipynb", "README.md"}
    with pytest.raises(ValueError, match="unknown course folder 'solutions'"):
        course_files("solutions")  # the instructor's files are never handed out


def test_copy_never_overwrites_the_learners_work(tmp_path):
    copied, kept = copy_course(tmp_path / "course")
    notebooks = sorted(p.name for p in (tmp_path / "course" / "notebooks").iterdir())
    assert notebooks == sorted(p.name for p in course_files("notebooks")) and kept == []
    mine = tmp_path / "course" / "exercises" / "02_training.ipynb"
    mine.write_text("my answers", encoding="utf-8")
    again, kept = copy_course(tmp_path / "course")
    assert again == [] and mine in kept and len(kept) == len(copied)
    assert mine.read_text(encoding="utf-8") == "my answers"


def test_lab_command_copies_and_refuses_a_file(tmp_path, capsys):
    assert main(["lab", str(tmp_path / "c"), "--no-open"]) == 0
    assert "course files into" in capsys.readouterr().out
    (tmp_path / "f").write_text("x")
    assert main(["lab", str(tmp_path / "f"), "--no-open"]) == 2
    assert "is a file" in capsys.readouterr().err


def test_a_wheel_carries_the_course_and_its_notebooks_run(tmp_path):
    wheels = tmp_path / "wheels"
    build = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(wheels)]
    subprocess.run([*build, str(ROOT)], check=True, capture_output=True)
    (wheel,) = wheels.glob("bpe_lab-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        assert "bpe_lab/course/notebooks/00_why_subwords.ipynb" in names
        assert "bpe_lab/course/exercises/02_training.ipynb" in names
        assert not any(n.startswith(("solutions/", "tests/", "bpe_lab/course/solutions")) for n in names)
        archive.extractall(tmp_path / "site")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    code = "import bpe_lab.course as c, sys; sys.exit(c.__file__.startswith(sys.argv[1]) and main(sys.argv[2:]))"
    code = "from bpe_lab.cli import main\n" + code
    where = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "site"), "lab", str(tmp_path / "learner"), "--no-open"],
        env=env, capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert where.returncode == 0, where.stderr
    copied = tmp_path / "learner" / "notebooks" / "00_why_subwords.ipynb"
    assert copied.read_bytes() == (ROOT / "notebooks" / "00_why_subwords.ipynb").read_bytes()
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval", "--nbval-current-env", str(copied)],
        env=env, capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:]
