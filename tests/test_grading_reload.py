"""Exercise 10's save and load, checked in a fresh interpreter (``check.fresh``).

A ``load`` that returns the object its ``save`` kept in memory, under a
random key written into the file, passed every check made in the saving
process, and the task scored 6/6. In a notebook, ``check.reloaded`` now
loads and encodes in a fresh interpreter that defines the class again from
its cells: the kept object is not there.
"""

from __future__ import annotations

import linecache
from pathlib import Path

import nbformat
import pytest
from grading_support import LIMITS, SOLUTIONS, exercise_with, needs_bwrap

from bpe_lab.core.pretokenize import GPT2_PATTERN
from bpe_lab.grading.authoring.tasks import nbgrader
from bpe_lab.grading.check.fresh import fresh_ids, fresh_source
from bpe_lab.grading.commands.grader import grade

SOLVED = {nbgrader(c).get("grade_id"): c.source for c in nbformat.read(SOLUTIONS / "10_capstone.ipynb", 4).cells}
CLASS = SOLVED["10_capstone_my_tokenizer_answer"]
_SAVE, _END = CLASS.index("    def save("), "        ### END SOLUTION"
#: The solution's class whose save keeps the tokenizer in memory under a random key, the one thing it writes.
KEPT_IN_MEMORY = (
    "import secrets\n_KEPT = {}\n\n"
    + CLASS[:_SAVE]
    + """    def save(self, path):
        key = secrets.token_hex(8)
        _KEPT[key] = self
        Path(path).write_text(key)

    @classmethod
    def load(cls, path):
        return _KEPT[Path(path).read_text()]
"""
    + CLASS[CLASS.index(_END, CLASS.index("    def load(")) + len(_END) :]
)


def _cells(*sources: str) -> dict[str, object]:
    """Run ``sources`` as IPython runs cells: each compiled from a name of its
    own that ``linecache`` holds (no file behind it); the namespace they made."""
    namespace: dict[str, object] = {"__name__": "__main__"}
    for number, source in enumerate(sources):
        name = f"<bpe-lab-test-cell-{number}-{id(namespace)}>"
        linecache.cache[name] = (len(source), None, source.splitlines(keepends=True), name)
        exec(compile(source, name, "exec"), namespace)  # noqa: S102 - the test's own cells
    return namespace


SETUP = "import json\nfrom pathlib import Path\nimport regex\n"


@pytest.mark.parametrize(("answer", "works"), [(CLASS, True), (KEPT_IN_MEMORY, False)], ids=["solution", "kept"])
def test_a_load_runs_in_a_fresh_interpreter_from_the_cells_alone(tmp_path, answer, works):
    space = _cells(SETUP, SOLVED["10_capstone_split_specials_answer"], answer)
    kind = space["MyTokenizer"]
    mine = kind({i: bytes([i]) for i in range(256)} | {256: b"ab", 257: b"<s>"}, [(b"a", b"b")], ["<s>"], GPT2_PATTERN)
    path = tmp_path / "saved"
    mine.save(path)
    assert kind.load(path).encode("abc<s>") == [256, 99, 257]  # in its own process, both answers load
    program = fresh_source(kind)
    assert program is not None and "import regex" in program and "def split_specials" in program
    if works:
        assert fresh_ids(kind, path, "abc<s>") == [256, 99, 257]
    else:
        with pytest.raises(RuntimeError, match=r"^MyTokenizer.load in a fresh interpreter \(the saved file alone\) "):
            fresh_ids(kind, path, "abc<s>")


def test_a_class_without_cells_is_not_loaded_in_a_fresh_interpreter():
    space: dict[str, object] = {}
    exec(SETUP + CLASS, space)  # noqa: S102 - compiled from "<string>": no cell to run again
    assert fresh_source(space["MyTokenizer"]) is None
    with pytest.raises(LookupError, match="MyTokenizer's cells were not found"):
        fresh_ids(space["MyTokenizer"], Path("nowhere"), "a")
    with pytest.raises(TypeError, match="kind must be a class, not str"):
        fresh_source("MyTokenizer")


@needs_bwrap
def test_a_load_of_what_was_kept_in_memory_scores_zero_graded(tmp_path):
    path = tmp_path / "kept" / "10_capstone.ipynb"
    path.parent.mkdir()
    nbformat.write(exercise_with("10_capstone", {"10_capstone_my_tokenizer": KEPT_IN_MEMORY}), path)
    (report,) = grade([path], solutions_dir=SOLUTIONS, limits=LIMITS, jobs=1)
    tasks = {t.grade_id: t for t in report.tasks}
    mine = tasks["10_capstone_my_tokenizer"]
    assert (mine.points, mine.max_points) == (0, 6), mine
    assert "in a fresh interpreter (the saved file alone) failed: KeyError" in mine.message, mine.message
    assert tasks["10_capstone_train"].points == tasks["10_capstone_train"].max_points == 4
