"""A Gradescope autograder from one solution notebook: ``bpe-lab gradescope``.

What this adds over ``grader`` (grading notebooks on the instructor's
machine): the same grading inside Gradescope. ``build_bundle(solution,
out)`` writes the zip Gradescope's "programming assignment" takes::

    setup.sh          installs Python, bubblewrap and this package (from the
                      bundle's own copy of its source, no index needed for it;
                      BPE_LAB_NO_APT=1 skips apt-get where both are there)
    run_autograder    grades $AUTOGRADER_ROOT/submission/*.ipynb
                      (root: /autograder unless AUTOGRADER_ROOT says otherwise)
    bundle.json       the assignment's name and the seeds' salt
    solutions/NAME.ipynb
    package/          pyproject.toml, setup.py, README.md and bpe_lab/: what
                      ``pip install`` builds (not the course notebooks, which
                      grading does not read)

``run_autograder`` calls ``bpe-lab gradescope --run``, which grades every
notebook in ``submission/`` as the bundle's assignment (the student is the
one in ``submission_metadata.json``, for the generated cases' seeds; a
notebook with another assignment's cells is reported, not graded) and
writes ``results/results.json``: the score, and one test per task with its
``name``, ``score``, ``max_score`` and ``output`` (the report's message,
which never shows a hidden test's expected value, and shows learner text
through ``terminal_text.shown``). A notebook in ``submission/`` is read only
if it is a regular file reached through no symbolic link
(``submissions.notebook_files``): a GitHub upload keeps links, and one to
``/autograder/source/solutions/`` scored the solution's marks; a link is
reported as "not a notebook file (a symbolic link)" and scores 0. A written answer is a
test worth 0 whose output says it awaits manual grading and quotes the
text: set up its points as a manual question on Gradescope. The kernels
run in the same sandbox as ``bpe-lab grade``'s (``jail``): they see nothing
of ``/autograder`` (not ``source/``, with the solution and the salt, not
``results/``). Where the container does not allow bubblewrap's user
namespaces, nothing is graded and the output says why and what to do,
unless the bundle was built with ``--no-sandbox``: then grading goes on
without the sandbox and every output says so.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bpe_lab.grading.commands.grader import Limits, Report, grade
from bpe_lab.grading.intake.submissions import PathLike, not_a_file, notebook_files, read_notebook
from bpe_lab.grading.run.jail import SandboxUnavailable, repository
from bpe_lab.grading.run.stubs import package_dir
from bpe_lab.grading.terminal_text import shown

__all__ = ["SETUP_SH", "RUN_AUTOGRADER", "build_bundle", "results_json", "run_gradescope", "add_gradescope_command"]

SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image.
set -euo pipefail
SOURCE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# BPE_LAB_NO_APT=1: the image has Python (3.10+, with pip) and bubblewrap already
if [ -z "${BPE_LAB_NO_APT:-}" ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-pip bubblewrap >/dev/null
fi
python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' || {
    echo "bpe_lab needs Python 3.10 or newer, this image has $(python3 -V 2>&1): choose Ubuntu 22.04 or newer" >&2
    exit 1
}
# bpe_lab from the bundle's own copy of its source, not from an index. Its build
# needs what pyproject.toml's build-system requires (setuptools): where this Python
# has that already, pip builds with it (nothing to download), else in an isolated
# build environment that it fills from the index.
ISOLATION=--no-build-isolation
python3 - "$SOURCE/package/pyproject.toml" <<'PY' 2>/dev/null || ISOLATION=
import sys
import tomllib
from importlib.metadata import version

from pip._vendor.packaging.requirements import Requirement

with open(sys.argv[1], "rb") as f:
    requires = [Requirement(r) for r in tomllib.load(f)["build-system"]["requires"]]
sys.exit(not all(version(r.name) in r.specifier for r in requires))
PY
# Ubuntu 23.04 and newer mark the system Python as externally managed (PEP 668):
# this image is the autograder's alone. An older pip ignores the variable.
PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install -q $ISOLATION "$SOURCE/package"
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for every submission: grade submission/*.ipynb into results/results.json.
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
cd "$ROOT"  # python3 -m puts the working directory first on sys.path: one without a bpe_lab
exec python3 -m bpe_lab.cli gradescope --run --root "$ROOT"
"""


def _add_tree(bundle: zipfile.ZipFile, folder: Path, prefix: str) -> None:
    for path in sorted(folder.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            bundle.write(path, f"{prefix}/{path.relative_to(folder).as_posix()}")


def _executable(bundle: zipfile.ZipFile, name: str, text: str) -> None:
    info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
    info.external_attr = 0o100755 << 16
    bundle.writestr(info, text)


def build_bundle(solution: PathLike, out: PathLike, *, salt: str = "", sandbox: bool = True) -> Path:
    """Write the autograder zip for one solution notebook; return its path.
    ``sandbox=False``: its kernels run without one (and every output says so)."""
    solution = Path(solution)
    if not solution.is_file():
        raise FileNotFoundError(f"no such solution notebook: {solution}")
    if not re.fullmatch(r"\d\d_\w+\.ipynb", solution.name):
        raise ValueError(f"{solution.name}: a solution notebook is named NN_name.ipynb")
    read_notebook(solution.read_text(encoding="utf-8"))
    home = package_dir()
    repo = repository(home)
    if repo is None or not (repo / "pyproject.toml").exists():
        raise ValueError("bpe-lab gradescope needs the package's source checkout (pyproject.toml beside bpe_lab/)")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as bundle:
        _executable(bundle, "setup.sh", SETUP_SH)
        _executable(bundle, "run_autograder", RUN_AUTOGRADER)
        bundle.writestr(
            "bundle.json", json.dumps({"assignment": solution.stem, "salt": salt, "sandbox": sandbox}, indent=1)
        )
        bundle.write(solution, f"solutions/{solution.name}")
        for name in ("pyproject.toml", "setup.py", "README.md"):  # setup.py: the build hook, where there is one
            if name != "setup.py" or (repo / name).exists():
                bundle.write(repo / name, f"package/{name}")
        _add_tree(bundle, home, "package/bpe_lab")
    return out


def _student(root: Path) -> str:
    """Who submitted, from Gradescope's submission_metadata.json (for the seeds)."""
    try:
        meta = json.loads((root / "submission_metadata.json").read_text(encoding="utf-8"))
        users = meta.get("users") or []
        return ",".join(str(u.get("id") or u.get("email") or u.get("name")) for u in users) or "submission"
    except (OSError, ValueError, AttributeError):
        return "submission"


def results_json(report: Report | None, others: Sequence[Report] = ()) -> dict[str, Any]:
    """Gradescope's results.json for the report graded (None: nothing to grade)."""
    if report is None:
        return {"score": 0, "output": "No notebook (.ipynb) was found in the submission.", "tests": []}
    tests = []
    for task in report.tasks:
        test: dict[str, Any] = {"name": task.grade_id, "visibility": "visible"}
        if task.pending:
            output = f"{shown(task.message)}: graded by hand.\n\n{shown(task.answer, lines=True)}"
            test.update(score=0, max_score=0, output=output)
        else:
            test.update(score=task.points, max_score=task.max_points, output=shown(task.message or "ok"))
        tests.append(test)
    notes = [report.error, report.note, report.sandbox]
    notes += [f"also submitted, not graded: {Path(r.submission).name} ({r.error or r.assignment})" for r in others]
    return {"score": report.total, "output": "\n".join(shown(note) for note in notes if note), "tests": tests}


def run_gradescope(root: PathLike) -> dict[str, Any]:
    """Grade ``root/submission`` with the bundle in ``root/source``; write and
    return ``root/results/results.json``."""
    root = Path(root)
    source = root / "source"
    config = json.loads((source / "bundle.json").read_text(encoding="utf-8"))
    # never through a link: one to source/solutions/ would score the solution (notebook_files)
    try:
        found = notebook_files([root / "submission"])
    except (OSError, ValueError):  # no submission folder, or nothing in it
        found = []
    notebooks = [f.path for f in found if not f.kind]
    reports = [
        Report(str(f.path), config["assignment"], error=not_a_file(f.kind, f.path.relative_to(f.root).as_posix()))
        for f in found
        if f.kind
    ]
    refused = ""
    if notebooks:
        student = _student(root)
        try:
            reports += grade(
                notebooks,
                solutions_dir=source / "solutions",
                limits=Limits(),
                assignment=config["assignment"],
                salt=config.get("salt", ""),
                hide=[source],
                sandbox=None if config.get("sandbox", True) else False,
            )
        except SandboxUnavailable as err:
            refused = f"Not graded: this autograder could not sandbox the notebook ({err}). Tell your instructor."
        for report in reports:
            report.student = student
    best = max(reports, key=lambda r: (not r.error, r.total), default=None)
    results = results_json(best, [r for r in reports if r is not best])
    if refused:
        results = {"score": 0, "output": refused, "tests": []}
    (root / "results").mkdir(parents=True, exist_ok=True)
    (root / "results" / "results.json").write_text(json.dumps(results, indent=1), encoding="utf-8")
    return results


def _run(args: argparse.Namespace) -> None:
    if args.inside:
        results = run_gradescope(args.root or os.environ.get("AUTOGRADER_ROOT", "/autograder"))
        print(f"score {results['score']:g}; wrote results/results.json", file=sys.stderr)
        return
    if not args.solution:
        raise ValueError("give the solution notebook to bundle (or --run inside Gradescope)")
    out = build_bundle(args.solution, args.out, salt=args.salt, sandbox=not args.no_sandbox)
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB): upload it as the assignment's autograder")


def add_gradescope_command(subparsers: Any) -> None:
    """Register ``bpe-lab gradescope`` (kept here so cli.py only wires it in)."""
    parser = subparsers.add_parser("gradescope", help="write a Gradescope autograder zip for one solution notebook")
    parser.add_argument("solution", nargs="?", help="the solution notebook, e.g. solutions/02_training.ipynb")
    parser.add_argument("--out", default="autograder.zip", help="the zip to write (default: %(default)s)")
    parser.add_argument("--salt", default=os.environ.get("BPE_LAB_SALT", ""), help="a secret for the cases' seeds")
    parser.add_argument(
        "--run", dest="inside", action="store_true", help="grade a submission inside Gradescope (run_autograder)"
    )
    parser.add_argument("--root", help="with --run: the autograder folder (default: $AUTOGRADER_ROOT or /autograder)")
    parser.add_argument(
        "--no-sandbox",
        action="store_true",
        help="grade without bubblewrap where Gradescope's container allows no user namespaces "
        "(a submission could then read the solution and the salt; every output says so)",
    )
    parser.set_defaults(run=_run)
