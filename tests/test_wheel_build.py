"""The instructor's wheel command, ``pip wheel --no-deps -w dist .`` (README),
leaves the source folder as it was and builds from what is there now: a
module deleted since an earlier build is not in the next wheel (setup.py
builds in a temporary folder of its own, never ``build/`` of the checkout)."""

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIP = shutil.ignore_patterns(".git", ".venv*", "__pycache__", "*.egg-info", "build", "dist", ".pytest_cache")


def _tree(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


def _build(source: Path, out: Path) -> set[str]:
    run = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out), "."],
        cwd=source, capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    (wheel,) = out.glob("bpe_lab-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    wheel.unlink()
    return names


def test_a_wheel_leaves_the_source_folder_clean_and_never_ships_a_deleted_module(tmp_path):
    source = tmp_path / "repo"
    shutil.copytree(ROOT, source, ignore=SKIP)
    stale = source / "build" / "lib" / "bpe_lab" / "stale_module.py"  # what an old setuptools build left
    stale.parent.mkdir(parents=True)
    stale.write_text("raise ImportError('a module deleted long ago')\n", encoding="utf-8")
    before = _tree(source)

    first = _build(source, tmp_path / "dist")
    assert "bpe_lab/variants/quirks.py" in first and "bpe_lab/course/notebooks/README.md" in first
    assert "bpe_lab/stale_module.py" not in first
    assert _tree(source) == before, f"the build added {sorted(_tree(source) - before)} to the source folder"

    (source / "bpe_lab" / "variants" / "quirks.py").unlink()
    second = _build(source, tmp_path / "dist")
    assert "bpe_lab/variants/quirks.py" not in second
    assert first - second == {"bpe_lab/variants/quirks.py"}
    assert _tree(source) == before - {"bpe_lab/variants/quirks.py"}
