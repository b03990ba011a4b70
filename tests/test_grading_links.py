"""A submission that is a symbolic link, or sits in a linked folder, is never read.

Git clones (GitHub Classroom, Gradescope's GitHub upload), ``tar`` and
``unzip`` keep links. Read through them, a link to ``solutions/`` scored the
solution's marks, a link to a classmate's notebook scored the classmate's
and made the classmate look like the copier in the similarity report, and
on Gradescope a link to the bundle's own solution scored 9/9. The grader
reads only regular files, opened from the folder given through no link
(``submissions.notebook_files``, ``submissions.read_once``); anything else
is one row worth 0 that says "not a notebook file (a symbolic link): PATH".

No kernel runs here: a link never reaches one, and the regular notebook
beside the links is run by a stand-in that records what it was given.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import zipfile
from pathlib import Path
from typing import Any

import nbformat
import pytest
from grading_support import SOLUTIONS, submission

from bpe_lab.cli import main
from bpe_lab.grading.commands.grader import grade
from bpe_lab.grading.commands.gradescope import run_gradescope
from bpe_lab.grading.intake.roster import collect
from bpe_lab.grading.intake.submissions import read_once, read_solutions

SOLUTION = SOLUTIONS / "03_encoding.ipynb"
#: What exercise 03 is worth: what a link to it would have scored.
WORTH = sum(
    c.metadata["nbgrader"].get("points", 0)
    for c in nbformat.read(SOLUTION, 4).cells
    if c.metadata.get("nbgrader", {}).get("grade")
)
LINK = "not a notebook file (a symbolic link)"


def _class(tmp_path: Path) -> Path:
    """A class folder: alice's own notebook (regular), and four links that
    read as notebooks: mallory's to the solution, bob's to alice's, carol's
    assignment folder linked to a folder outside holding one, dave's to a
    notebook outside the class folder."""
    root = tmp_path / "class"
    (root / "alice").mkdir(parents=True)
    nbformat.write(submission(), root / "alice" / "03_encoding.ipynb")
    outside = tmp_path / "outside"
    outside.mkdir()
    nbformat.write(nbformat.read(SOLUTION, 4), outside / "03_encoding.ipynb")
    for student in ("mallory", "bob", "carol", "dave"):
        (root / student).mkdir()
    (root / "mallory" / "03_encoding.ipynb").symlink_to(SOLUTION)
    (root / "bob" / "03_encoding.ipynb").symlink_to(Path("..") / "alice" / "03_encoding.ipynb")
    (root / "carol" / "03_encoding").symlink_to(outside, target_is_directory=True)
    (root / "dave" / "03_encoding.ipynb").symlink_to(outside / "03_encoding.ipynb")
    return root


#: By student: the path the report names (relative to the class folder).
LINKED = {
    "mallory": "mallory/03_encoding.ipynb",
    "bob": "bob/03_encoding.ipynb",
    "carol": "carol/03_encoding",
    "dave": "dave/03_encoding.ipynb",
}


def test_every_link_is_reported_as_one_and_never_read(tmp_path):
    subs = {s.student: s for s in collect([_class(tmp_path)], read_solutions(SOLUTIONS))}
    assert sorted(subs) == ["alice", "bob", "carol", "dave", "mallory"]
    assert subs["alice"].error == "" and subs["alice"].read is not None and subs["alice"].read.notebook is not None
    for student, where in LINKED.items():
        sub = subs[student]
        assert (sub.assignment, sub.error) == ("03_encoding", f"{LINK}: {where}"), student
        assert sub.read is not None and (sub.read.notebook, sub.read.nonce) == (None, ""), student  # no byte read


def _no_kernel(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The submissions the grader would run, which it now runs nowhere."""
    ran: list[str] = []

    async def no_kernel(path: Path, *args: Any, **kwargs: Any) -> tuple[dict[str, Any], str]:
        ran.append(path.parent.name)
        return {}, "no kernel in this test"

    monkeypatch.setattr("bpe_lab.grading.commands.grader._run_in_tempdir", no_kernel)
    return ran


def test_a_link_scores_zero_and_reaches_no_kernel(tmp_path, monkeypatch):
    ran = _no_kernel(monkeypatch)
    reports = {r.student: r for r in grade([_class(tmp_path)], solutions_dir=SOLUTIONS, sandbox=False)}
    assert set(ran) == {"alice"}  # only the regular file was run
    for student, where in LINKED.items():
        report = reports[student]
        assert (report.total, report.max_total, report.nonce) == (0, WORTH, ""), student
        assert report.error == f"{LINK}: {where}", student
        assert all(task.points == 0 and task.message == f"{LINK}: {where}" for task in report.tasks), student


def test_a_link_to_a_classmate_makes_no_copier_in_the_similarity_report(tmp_path, capsys):
    root = _class(tmp_path)
    args = ["grade", str(root), "--solutions", str(SOLUTIONS), "--similarity-only", "--json"]
    assert main(args) == 0
    found = json.loads(capsys.readouterr().out)["similarity"]
    pairs = [
        {flag["left"]["name"], flag["right"]["name"]} for flag in found["flags"] if flag["against"] == "submission"
    ]
    assert pairs == []  # alice is alone: bob's link, the solution's and dave's copy are not compared
    skipped = {Path(s["path"]).relative_to(root).as_posix(): s["reason"] for s in found["skipped"]}
    assert skipped == {where: f"{LINK}: {where}" for where in LINKED.values()}


def test_a_folder_made_a_link_after_the_walk_is_not_followed(tmp_path):
    """``read_once`` opens each folder from the root without following a
    link, so a folder swapped for one after ``notebook_files`` listed it is
    refused too (the file it reaches is a regular notebook)."""
    root = tmp_path / "class"
    (root / "eve").mkdir(parents=True)
    (root / "eve" / "03_encoding").symlink_to(SOLUTIONS, target_is_directory=True)
    read = read_once(root / "eve" / "03_encoding" / "03_encoding.ipynb", root)
    assert (read.notebook, read.nonce, read.error) == (None, "", f"{LINK}: eve/03_encoding/03_encoding.ipynb")


def test_a_pipe_named_as_a_notebook_is_reported_never_waited_on(tmp_path):
    """A named pipe would block the read for ever (no writer ever comes)."""
    pipe = tmp_path / "class" / "frank" / "03_encoding.ipynb"
    pipe.parent.mkdir(parents=True)
    os.mkfifo(pipe)
    done: list[Any] = []
    reader = threading.Thread(target=lambda: done.append(read_once(pipe, tmp_path / "class")), daemon=True)
    reader.start()
    reader.join(10)
    if reader.is_alive():  # a read that blocks on the pipe: a writer that opens and closes it lets it go
        with contextlib.suppress(OSError):
            os.close(os.open(pipe, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(10)
    assert done and done[0].error == "not a notebook file (a named pipe): frank/03_encoding.ipynb", done


def test_gradescope_reads_no_link_in_the_submission(tmp_path):
    """Gradescope's GitHub upload keeps links: one to the bundle's own
    solution and one to its folder score 0, each named, and no kernel runs."""
    bundle = tmp_path / "autograder.zip"
    assert main(["gradescope", str(SOLUTION), "--out", str(bundle)]) == 0
    root = tmp_path / "autograder"
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(root / "source")
    (root / "submission").mkdir()
    (root / "submission" / "03_encoding.ipynb").symlink_to(root / "source" / "solutions" / "03_encoding.ipynb")
    (root / "submission" / "work").symlink_to(root / "source" / "solutions", target_is_directory=True)
    result = run_gradescope(root)
    assert result["score"] == 0 and result["tests"] == []
    assert result["output"].splitlines() == [
        f"{LINK}: 03_encoding.ipynb",
        f"also submitted, not graded: work ({LINK}: work)",
    ]
    assert json.loads((root / "results" / "results.json").read_text(encoding="utf-8")) == result
