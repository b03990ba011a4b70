"""Build hook: put the course (notebooks, exercises) inside the wheel, and
build outside the source folder.

Everything else about the package is in pyproject.toml. The notebooks live
at the top of the repository, outside ``bpe_lab/``, so package data cannot
reach them; this copies them into ``bpe_lab/course/`` of the build, where
``bpe_lab.course`` finds them after ``pip install`` (``bpe-lab lab``).

setuptools would write ``build/`` and ``bpe_lab.egg-info/`` into the
checkout, and a ``build/lib`` left from an earlier build can put a module
deleted since into the next wheel. Every run of this file (pip runs it once
per build step, each in a process of its own) builds in a temporary folder
of its own instead, removed when the process ends, so ``pip wheel --no-deps
-w dist .`` adds only ``dist/`` to the source folder
(tests/test_wheel_build.py).
"""

import atexit
import shutil
import tempfile
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

COURSE = {"notebooks": ("*.ipynb", "*.md"), "exercises": ("*.ipynb", "README.md")}


class build_py_with_course(build_py):  # noqa: N801 - setuptools' naming
    def run(self) -> None:
        super().run()
        if self.editable_mode:  # an editable install reads the course from the repository
            return
        root = Path(__file__).resolve().parent
        for folder, patterns in COURSE.items():
            target = Path(self.build_lib) / "bpe_lab" / "course" / folder
            target.mkdir(parents=True, exist_ok=True)
            for pattern in patterns:
                for source in sorted((root / folder).glob(pattern)):
                    self.copy_file(str(source), str(target / source.name))


scratch = tempfile.mkdtemp(prefix="bpe-lab-build-")
atexit.register(shutil.rmtree, scratch, True)
setup(
    cmdclass={"build_py": build_py_with_course},
    options={"build": {"build_base": str(Path(scratch) / "build")}, "egg_info": {"egg_base": scratch}},
)
