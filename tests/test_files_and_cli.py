"""Merges files, UTF-8 errors and the bpe-lab command."""

import subprocess
import sys
from pathlib import Path

import pytest

from bpe_lab import load_merges, read_text, save_merges
from bpe_lab.cli import COMMAND_GROUPS, build_parser, main
from bpe_lab.core.mergefile import MergesFile, read_merges

MERGES = [("e", "s"), ("es", "t"), ("est", "</w>"), ("l", "o"), ("lo", "w")]


GLUED = [("s", "t</w>"), ("e", "st</w>"), ("l", "o"), ("w", "est</w>")]


def test_merges_file_round_trips(tmp_path):
    path = tmp_path / "merges.txt"
    save_merges(MERGES, path)
    assert path.read_text(encoding="utf-8").splitlines() == ["#version: 0.1", "e s", "es t", "est </w>", "l o", "lo w"]
    assert load_merges(path) == load_merges(path, glue_end_of_word=False) == MERGES
    assert read_merges(path) == MergesFile(MERGES, glue_end_of_word=False)


def test_glued_merges_file_round_trips(tmp_path):
    path = tmp_path / "codes.txt"
    save_merges(GLUED, path, glue_end_of_word=True)
    assert path.read_text(encoding="utf-8") == "#version: 0.2\ns t</w>\ne st</w>\nl o\nw est</w>\n"
    assert load_merges(path) == load_merges(path, glue_end_of_word=True) == GLUED
    assert read_merges(path) == MergesFile(GLUED, glue_end_of_word=True)


@pytest.mark.parametrize(
    "content, glued",
    [
        ("e s\nes t\nest </w>\n", False),  # no header: subword-nmt's version 0.1
        ("#version: 0.1\ne s\n", False),
        ("#version: 0.2\ns t</w>\n", True),
        ("#version: 0.2.0\ns t</w>\n", True),  # trailing .0s count for nothing, as in apply_bpe
    ],
)
def test_the_header_names_the_convention(tmp_path, content, glued):
    path = tmp_path / "merges.txt"
    path.write_text(content, encoding="utf-8")
    assert read_merges(path).glue_end_of_word is glued


def test_saving_glued_merges_needs_their_convention(tmp_path):
    path = tmp_path / "codes.txt"
    with pytest.raises(ValueError) as error:
        save_merges(GLUED, path)
    assert str(error.value) == (
        "merge 0 ('s', 't</w>') uses the symbol 't</w>', which is not a single character, a word marker, "
        "or the result of an earlier merge; these merges glue '</w>' to the last character: "
        "save them with glue_end_of_word=True (their header is then #version: 0.2)"
    )
    with pytest.raises(ValueError) as error:
        save_merges(MERGES, path, glue_end_of_word=True)
    assert str(error.value) == (
        "merge 2 ('est', '</w>'): '</w>' is a symbol of its own, which the glued convention "
        "('#version: 0.2', '</w>' joined to the last character) never has"
    )
    assert not path.exists()


@pytest.mark.parametrize(
    "content, message",
    [
        ("#version: 0.2\ns t</w>\nes\n", "line 3: expected two symbols separated by one space, got 'es'"),
        ("e s\nes  t\n", "line 2: expected two symbols separated by one space, got 'es  t'"),
        (
            "ab c\n",
            "line 1: 'ab c': merge 0 ('ab', 'c') uses the symbol 'ab', which is not a single character, "
            "a word marker, or the result of an earlier merge",
        ),
        (
            "#version: 0.1\n\ne s\nes t\nx yz\n",
            "line 5: 'x yz': merge 2 ('x', 'yz') uses the symbol 'yz', which is not a single character, "
            "a word marker, or the result of an earlier merge",
        ),
        (
            "s t</w>\nl o\n",
            "line 1: 's t</w>': merge 0 ('s', 't</w>') uses the symbol 't</w>', which is not a single character, "
            "a word marker, or the result of an earlier merge; these merges glue '</w>' to the last character: "
            "the file's first line must be '#version: 0.2'",
        ),
        (
            "#version: 0.2\ne s\nes t\nest </w>\n",  # what save_merges wrote above default merges before
            "line 4: 'est </w>': '</w>' is a symbol of its own, which the glued convention "
            "('#version: 0.2', '</w>' joined to the last character) never has; "
            "if the file holds the other convention, its first line must be '#version: 0.1'",
        ),
        (
            "#version: 0.3\ne s\n",
            "line 1: '#version: 0.3' is not a version header subword-nmt knows: 0.1 ('</w>' a symbol of its own: "
            "'est </w>') or 0.2 ('</w>' glued to the last character: 's t</w>')",
        ),
        (
            "#version 0.2\ne s\n",
            "line 1: '#version 0.2' is not a version header subword-nmt knows: 0.1 ('</w>' a symbol of its own: "
            "'est </w>') or 0.2 ('</w>' glued to the last character: 's t</w>')",
        ),
    ],
)
def test_malformed_merges_file_names_the_file_the_line_and_the_text(tmp_path, content, message):
    path = tmp_path / "merges.txt"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError) as error:
        load_merges(path)
    assert str(error.value) == f"{path}, {message}"


def test_load_merges_refuses_a_header_that_contradicts_the_caller(tmp_path):
    path = tmp_path / "codes.txt"
    path.write_text("#version: 0.2\ns t</w>\n", encoding="utf-8")
    with pytest.raises(ValueError) as error:
        load_merges(path, glue_end_of_word=False)
    assert str(error.value) == (
        f"{path}, line 1: the header says glue_end_of_word=True ('#version: 0.2'), "
        "but glue_end_of_word=False was asked for"
    )
    with pytest.raises(TypeError, match="glue_end_of_word must be True, False or None, got 'yes'"):
        load_merges(path, glue_end_of_word="yes")


def test_non_utf8_file_names_the_byte_offset(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("café au lait".encode("latin-1"))
    with pytest.raises(ValueError, match=r"not valid UTF-8: byte 0xe9 at offset 3"):
        read_text(path)
    with pytest.raises(FileNotFoundError, match="no such file"):
        read_text(tmp_path / "missing.txt")


def test_cannot_save_a_bad_merge_list(tmp_path):
    with pytest.raises(ValueError, match="uses the symbol"):
        save_merges([("ab", "c")], tmp_path / "m.txt")
    assert not (tmp_path / "m.txt").exists()


def test_cli_train_then_encode(tmp_path, capsys):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(("low " * 5 + "lower " * 2 + "newest " * 6 + "widest " * 3).strip(), encoding="utf-8")
    out = tmp_path / "merges.txt"
    assert main(["train", str(corpus), "--merges", "5", "--out", str(out)]) == 0
    assert load_merges(out) == MERGES
    assert "learned 5 merges from 4 distinct words" in capsys.readouterr().out
    assert main(["encode", "--merges-file", str(out), "lowest", "newer"]) == 0
    assert capsys.readouterr().out.split() == ["low", "est</w>", "n", "e", "w", "e", "r", "</w>"]


def test_cli_reports_errors_without_a_traceback(tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok \xff")
    assert main(["train", str(bad), "--merges", "3"]) == 2
    assert "error: " in capsys.readouterr().err
    empty = tmp_path / "empty.txt"
    empty.write_text("  \n")
    assert main(["train", str(empty), "--merges", "3"]) == 2
    assert "contains no words" in capsys.readouterr().err


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "bpe-lab"
    assert script.exists(), "pip install -e . should have installed the bpe-lab command"
    result = subprocess.run([str(script), "--help"], capture_output=True, text=True, check=True)
    assert "train" in result.stdout and "encode" in result.stdout


def test_cli_train_says_when_fewer_merges_were_possible(tmp_path, capsys):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("ab ab", encoding="utf-8")
    out = tmp_path / "merges.txt"
    assert main(["train", str(corpus), "--merges", "10", "--out", str(out)]) == 0
    assert load_merges(out) == [("a", "b"), ("ab", "</w>")]
    captured = capsys.readouterr()
    assert "learned 2 merges from 1 distinct words" in captured.out
    assert "asked for 10 merges but only 2 were possible" in captured.err


def test_help_groups_the_learners_commands_apart_from_the_instructors(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    learner, instructor = (out.index(title + ":\n") for title in COMMAND_GROUPS)
    assert learner < instructor
    learner_part, instructor_part = out[learner:instructor], out[instructor:]
    for name in ("lab", "train", "encode", "encode-file", "corpus"):
        assert f"\n  {name} " in learner_part and f"\n  {name} " not in instructor_part, name
    for name in ("release", "grade", "gradescope", "bench"):
        assert f"\n  {name} " in instructor_part and f"\n  {name} " not in learner_part, name
    assert "  lab          copy the course into a folder of yours and open it in JupyterLab\n" in learner_part
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    grouped = [name for names in COMMAND_GROUPS.values() for name in names]
    assert sorted(grouped) == sorted(sub.choices), "a command is in no group, or in two"
