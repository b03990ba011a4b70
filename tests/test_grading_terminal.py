"""The instructor's terminal: no learner-derived string acts on it.

A folder name printed raw showed "7/7" and hid the real 0/7 with an escape
sequence, another set the clipboard (OSC 52), a bidi override reorders a
line. Every learner-derived string the grader shows goes through one
sanitiser (``terminal_text.shown``), which shows such characters escaped,
never dropped; a gradebook cell that would start a formula gets a ``'``.
"""

from __future__ import annotations

import contextlib
import csv
import io

import nbformat
import pytest
import regex
from grading_support import SOLUTIONS, exercise_with, needs_bwrap

from bpe_lab.cli import main
from bpe_lab.grading.terminal_text import shown

#: ESC [ 2 K erases the line, a return goes back to its start, and what follows claims full marks
#: (with U+2215, a division slash: a folder name holds no "/");
#: OSC 52 sets the clipboard (to "rm -rf ~"); U+202E reverses what follows, U+2066 isolates it.
HOSTILE = "mallory\x1b[2K\r03_encoding: 5\u22155 \x1b]52;c;cm0gLXJmIH4=\x07\u202e\u2066x"
#: The same, as ``shown`` shows it.
HOSTILE_SHOWN = r"mallory\x1b[2K\r03_encoding: 5" + "\u2215" + r"5 \x1b]52;c;cm0gLXJmIH4=\x07\u202e\u2066x"
#: A flat file whose name a spreadsheet would run, and that is no notebook at all.
FORMULA = '=HYPERLINK("x.example")\x9b8m_03_encoding.ipynb'
#: What no output may hold: controls but a newline (and a tab), DEL, C1, format characters, separators.
RAW = regex.compile(r"[[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]--[\n\t]]", regex.V1)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("\x1b[2K\r7/7", r"\x1b[2K\r7/7"),
        ("\x1b]52;c;aGk=\x07", r"\x1b]52;c;aGk=\x07"),
        ("\x9b31m\x7f\x00", r"\x9b31m\x7f\x00"),
        ("a\u202eb\u2066c\u2069\u200f", r"a\u202eb\u2066c\u2069\u200f"),
        ("line\nnext\u2028\U000e0041", r"line\nnext\u2028\U000e0041"),
        ("caf\udce9", r"caf\xe9"),  # a file name that was not UTF-8, as os.fsdecode gives it
        ("naïve 文字 ok", "naïve 文字 ok"),
    ],
)
def test_shown_escapes_what_acts_on_a_terminal_and_keeps_the_rest(text, expected):
    assert shown(text) == expected


def test_shown_keeps_the_lines_of_text_of_several_lines():
    assert shown("x = 1\r\n\ty = '\x1b[2J'\r", lines=True) == "x = 1\n\ty = '\\x1b[2J'\\r"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """A class graded by ``bpe-lab grade`` with every output: mallory's
    folder named ``HOSTILE``, her exercise 03 untouched but for answers
    that raise with escapes in their message (0/7 and a written answer, in a kernel); a flat
    file named ``FORMULA`` that is not a notebook (0/7, no kernel). What
    was printed, and the folder the files were written in."""
    folder = tmp_path_factory.mktemp("terminal")
    root = folder / "class"
    (root / HOSTILE).mkdir(parents=True)
    raising = "raise ValueError('\\x1b[2K\\x1b]52;c;aGk=\\x07 \\u202e5/5')"
    nb = exercise_with("03_encoding", {"03_encoding_encode_word": raising, "03_encoding_decode": raising})
    nbformat.write(nb, root / HOSTILE / "03_encoding.ipynb")
    (root / FORMULA).write_text("not json", encoding="utf-8")
    args = ["grade", str(root), "--solutions", str(SOLUTIONS), "--workers", "1"]
    args += ["--out", str(folder / "book.csv"), "--feedback", str(folder / "feedback")]
    args += ["--similarity", "--similarity-out", str(folder / "similar.md")]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert main(args) == 0
    return out.getvalue(), err.getvalue(), folder


@needs_bwrap
def test_the_terminal_gets_no_raw_control_and_the_true_score(graded):
    out, err, _ = graded
    assert not RAW.findall(out) and not RAW.findall(err)
    firsts = [line for line in out.splitlines() if "/class/" in line and not line.startswith(" ")]
    assert [line.split("/class/", 1)[1] for line in firsts] == [
        f"{shown(FORMULA)} (03_encoding): 0/7",
        f"{HOSTILE_SHOWN}/03_encoding.ipynb (03_encoding): 0/7 (2 pending manual grading)",
    ]
    assert "ValueError" in out  # the kernel's message is there, its escapes are not


@needs_bwrap
def test_the_gradebook_has_no_raw_control_and_no_formula(graded):
    _, _, folder = graded
    text = (folder / "book.csv").read_text(encoding="utf-8")
    assert not RAW.findall(text.replace("\r\n", "\n"))  # RFC 4180's line ends are the file's, not a name's
    with open(folder / "book.csv", newline="", encoding="utf-8") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    assert sorted(rows) == sorted([HOSTILE_SHOWN, "'" + shown(FORMULA.removesuffix("_03_encoding.ipynb"))])
    assert [rows[s]["total"] for s in sorted(rows)] == ["0", "0"]


@needs_bwrap
def test_feedback_and_the_similarity_report_have_no_raw_control(graded):
    _, _, folder = graded
    pages = {p.name: p.read_text(encoding="utf-8") for p in (folder / "feedback").iterdir()}
    assert len(pages) == 2 and not any(RAW.findall(page) for page in pages.values())
    (mallory,) = [page for page in pages.values() if page.startswith("# Feedback for mallory")]
    assert mallory.splitlines()[:3] == [
        f"# Feedback for {HOSTILE_SHOWN}",
        "",
        "## 03_encoding: 0/7 (2 points awaiting manual grading)",
    ]
    assert not RAW.findall((folder / "similar.md").read_text(encoding="utf-8"))
