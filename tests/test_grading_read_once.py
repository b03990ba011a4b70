"""Each submission is read and parsed once along the grading path.

``roster.collect`` reads a file (``submissions.read_once``) to tell its
assignment; the grader runs that notebook and seeds its generated cases
with the digest of those same bytes, and ``similar_answers`` compares it,
none of them opening the file again; ``bpe-lab grade --similarity`` collects
the class once and hands that collection to both. A solution's visible
checks are recorded (its cells run) once per process for each text of it. The kernel is replaced here by a run
that reports nothing (every task then scores 0): what is counted is the
reading, not the grading, which tests/test_grader.py covers.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import nbformat
import pytest

from bpe_lab.cli import main
from bpe_lab.grading.commands import grader as grader_module
from bpe_lab.grading.commands.grader import grade, grade_collection
from bpe_lab.grading.intake import roster, submissions
from bpe_lab.grading.intake.roster import collect
from bpe_lab.grading.intake.submissions import nonce_of, read_once, read_solutions, submission_nonce
from bpe_lab.grading.score.similar_answers import find_similar, similarity

SOLUTIONS = Path(__file__).resolve().parent.parent / "solutions"


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Every file opened for reading through ``Path`` (``read_bytes``,
    ``read_text`` and ``open`` all go through ``Path.open``) or through
    ``os.open`` (``read_once`` opens a file from its folder's descriptor,
    never through a link), and every notebook text parsed."""
    seen: dict[str, Any] = {"read": [], "parsed": []}
    open_, os_open, parse = Path.open, os.open, submissions.read_notebook

    def counting_open(self: Path, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if "r" in mode:
            seen["read"].append(self.name)
        return open_(self, mode, *args, **kwargs)

    def counting_os_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if not flags & (os.O_DIRECTORY | os.O_WRONLY | os.O_RDWR):
            seen["read"].append(Path(path).name)
        return os_open(path, flags, *args, **kwargs)

    def counting_parse(text: str) -> nbformat.NotebookNode:
        seen["parsed"].append(text)
        return parse(text)

    monkeypatch.setattr(Path, "open", counting_open)
    monkeypatch.setattr(os, "open", counting_os_open)
    monkeypatch.setattr(submissions, "read_notebook", counting_parse)
    return seen


def _submission(tmp_path: Path, name: str = "alice.ipynb") -> Path:
    path = tmp_path / "class" / "alice" / name
    path.parent.mkdir(parents=True)
    nb = nbformat.read(SOLUTIONS / "03_encoding.ipynb", as_version=4)
    nb.cells.append(nbformat.v4.new_markdown_cell("alice's own"))  # not the solution's text
    nbformat.write(nb, path)
    return path


def _no_kernel(monkeypatch: pytest.MonkeyPatch) -> list[nbformat.NotebookNode]:
    """The notebooks the grader would run, which it now runs nowhere."""
    ran: list[nbformat.NotebookNode] = []

    async def no_kernel(
        where: Path, nb: nbformat.NotebookNode, *args: Any, **kwargs: Any
    ) -> tuple[dict[str, Any], str]:
        ran.append(nb)
        return {}, "no kernel in this test"

    monkeypatch.setattr("bpe_lab.grading.commands.grader._run_in_tempdir", no_kernel)
    return ran


def test_grading_reads_and_parses_a_submission_once(tmp_path, monkeypatch, counted):
    path = _submission(tmp_path)
    with open(path, encoding="utf-8") as f:  # the builtin, not the counted Path.open
        text = f.read()
    ran = _no_kernel(monkeypatch)
    (report,) = grade([tmp_path / "class"], solutions_dir=SOLUTIONS, sandbox=False)
    assert report.assignment == "03_encoding" and report.error == "" and ran
    assert counted["read"].count(path.name) == 1
    assert sum(parsed == text for parsed in counted["parsed"]) == 1
    assert report.nonce == hashlib.sha256(path.read_bytes()).hexdigest()[:16] == submission_nonce(path)


def test_similarity_takes_the_notebook_collect_read(tmp_path, counted):
    path = _submission(tmp_path)
    solutions = read_solutions(SOLUTIONS)
    subs = collect([tmp_path / "class"], solutions)
    found = find_similar(subs, solutions)
    assert found.compared > 0 and found.skipped == []
    assert counted["read"].count(path.name) == 1


def test_grade_with_similarity_collects_and_reads_the_class_once(tmp_path, monkeypatch, counted, capsys):
    """``bpe-lab grade --similarity``: one collecting (``roster.notebook_files``
    walks the class once), each submission and each solution read once, each
    submission parsed once, and the report compares what was graded."""
    path = _submission(tmp_path)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    ran = _no_kernel(monkeypatch)
    walks: list[object] = []
    walk = roster.notebook_files
    monkeypatch.setattr(roster, "notebook_files", lambda inputs: walks.append(inputs) or walk(inputs))
    args = ["grade", str(tmp_path / "class"), "--solutions", str(SOLUTIONS), "--no-sandbox", "--json"]
    assert main([*args, "--similarity", "--similarity-out", str(tmp_path / "similar.md")]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert [r["assignment"] for r in printed["reports"]] == ["03_encoding"] and ran
    assert printed["similarity"]["compared"] > 0 and printed["similarity"]["skipped"] == []
    assert len(walks) == 1
    assert counted["read"].count(path.name) == 1
    assert sum(parsed == text for parsed in counted["parsed"]) == 1
    solutions = sorted(p.name for p in SOLUTIONS.glob("[0-9][0-9]_*.ipynb"))
    assert sorted(name for name in counted["read"] if name in solutions) == solutions  # each once


def test_a_file_that_is_not_a_notebook_is_read_once_and_says_why(tmp_path, counted):
    path = tmp_path / "bob.ipynb"
    path.write_bytes(b"\xff not json")
    read = read_once(path)
    assert read.notebook is None and read.error.startswith("not a readable notebook (UnicodeDecodeError")
    assert read.nonce == nonce_of([b"\xff not json"]) == submission_nonce(path)
    missing = read_once(tmp_path / "nobody.ipynb")
    assert (missing.notebook, missing.nonce) == (None, "") and "No such file" in missing.error
    assert counted["read"].count(path.name) == 2  # read_once's read, and submission_nonce's own


def test_the_read_decodes_as_read_text_does(tmp_path):
    """Bytes read once are decoded as ``Path.read_text`` decoded them (UTF-8,
    universal newlines): a notebook saved with CRLF line ends is the same."""
    path = tmp_path / "crlf.ipynb"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 'naïve'\r\ny = 2")])
    path.write_bytes(nbformat.writes(nb).replace("\n", "\r\n").encode("utf-8"))
    read = read_once(path)
    assert read.notebook is not None
    assert (
        read.notebook.cells[0].source == nbformat.reads(path.read_text(encoding="utf-8"), as_version=4).cells[0].source
    )


def test_what_is_not_a_collection_is_refused_by_name(tmp_path):
    path = _submission(tmp_path)
    with pytest.raises(TypeError, match=r"roster.Collection \(roster.collect_class\), got \['alice.ipynb'\]"):
        grade_collection(["alice.ipynb"])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="or a roster.Collection, got 'class'"):
        similarity("class")
    with pytest.raises(ValueError, match="unknown assignment '99_nothing'; choose one of 01_compression"):
        roster.collect_class([path], SOLUTIONS, "99_nothing")
    collection = roster.collect_class([tmp_path / "class"], SOLUTIONS)
    assert [s.path for s in collection.submissions] == [path] and collection.solutions_dir == SOLUTIONS
    assert similarity(collection).compared == find_similar(collection.submissions, collection.solutions).compared > 0


def test_a_solution_is_read_for_grading_once_per_process_and_again_when_its_text_changes(tmp_path, monkeypatch):
    """Its visible checks are recorded by running its cells (``visible.record``):
    once for every grading in the process that meets the same text, again
    for a solution whose text differs, and the second grading's tasks
    are the first's."""
    recorded: list[str] = []
    record = grader_module.record

    def counting_record(solution: nbformat.NotebookNode, tasks: list[Any]) -> Any:
        recorded.append(solution.cells[-1].source)
        return record(solution, tasks)

    monkeypatch.setattr(grader_module, "record", counting_record)
    grader_module._read_solution_text.cache_clear()
    _no_kernel(monkeypatch)
    path = _submission(tmp_path)
    first = grade([path], solutions_dir=SOLUTIONS, sandbox=False)[0]
    second = grade([path], solutions_dir=SOLUTIONS, sandbox=False)[0]
    assert len(recorded) == 1 and [t.grade_id for t in first.tasks] == [t.grade_id for t in second.tasks]
    changed = tmp_path / "changed"
    changed.mkdir()
    nb = nbformat.read(SOLUTIONS / "03_encoding.ipynb", as_version=4)
    nb.cells.append(nbformat.v4.new_markdown_cell("an instructor's note"))
    nbformat.write(nb, changed / "03_encoding.ipynb")
    grade([path], solutions_dir=changed, sandbox=False)
    assert recorded[1:] == ["an instructor's note"]
