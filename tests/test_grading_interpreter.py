"""As root, with bubblewrap, as CI runs the grader: the interpreter's path, and a sandbox that cannot start.

Issue 30's attack 9: started as ``../venv/bin/python -m bpe_lab.cli
grade``, every notebook scored 0: the venv was bound under two names
(``/x/tests/../.venv`` and ``/x/.venv``), bubblewrap failed on its
``lib64`` link made twice, and the report blamed the memory limit. The
grader now binds each prefix once by its real path, and tries the real
kernel command before the first kernel, refusing with bubblewrap's own
error.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from grading_support import ROOT, SOLUTIONS, needs_bwrap

from bpe_lab.grading.commands.grader import Limits, grade
from bpe_lab.grading.run import jail

pytestmark = needs_bwrap


def test_a_grade_started_by_a_relative_interpreter_path_scores_a_solution_full():
    here = ROOT / "tests"
    python = os.path.relpath(sys.executable, here)
    assert python.startswith(".."), python
    command = [python, "-m", "bpe_lab.cli", "grade", os.path.relpath(SOLUTIONS / "03_encoding.ipynb", here)]
    command += ["--solutions", os.path.relpath(SOLUTIONS, here), "--json", "--workers", "1"]
    done = subprocess.run(command, cwd=here, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    (report,) = json.loads(done.stdout)
    graded = {t["grade_id"]: (t["points"], t["message"]) for t in report["tasks"] if t["status"] == "graded"}
    assert graded == {"03_encoding_encode_word": (3.0, ""), "03_encoding_decode": (2.0, "")}, report


def test_a_sandbox_that_cannot_start_a_kernel_refuses_up_front_with_bubblewraps_error(monkeypatch, tmp_path):
    """A bind of a folder that is not there: no notebook is graded (and
    scored 0 with "is the memory limit too low?"); the grader refuses
    with what bubblewrap said."""
    command = jail.command
    missing = tmp_path / "not-there"

    def broken(*args, **kwargs):
        return [*command(*args, **kwargs), "--ro-bind", str(missing), "/opt/not-there"]

    monkeypatch.setattr(jail, "command", broken)
    with pytest.raises(jail.SandboxUnavailable) as refused:
        grade([SOLUTIONS / "03_encoding.ipynb"], solutions_dir=SOLUTIONS, limits=Limits(cell_timeout=60))
    said = str(refused.value)
    assert said.startswith("a sandboxed kernel cannot start here: bwrap: "), said
    assert f"{missing}: No such file or directory" in said, said
