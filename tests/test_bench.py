"""The benchmark runs end to end in a tiny quick mode (no timing assertions:
the numbers belong in the README, not in a test on a shared machine)."""

from pathlib import Path

import pytest

from bpe_lab.bench import Row, Sizes, format_table
from bpe_lab.bench_grading import bench_grading
from bpe_lab.cli import main

SOLUTIONS = Path(__file__).resolve().parent.parent / "solutions"

TINY = Sizes(
    corpus_bytes=200_000,
    textbook_bytes=20_000,
    fast_merges=50,
    textbook_merges=10,
    vocab_size=400,
    small_bytes=20_000,
    small_vocab=300,
    encode_bytes=20_000,
    growth_bytes=(100_000, 200_000),
)


def test_bench_command_prints_one_row_per_benchmark(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(Sizes, "quick", classmethod(lambda cls: TINY))
    assert main(["bench", "--quick", "--quiet", "--cache-dir", str(tmp_path)]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")][1:]
    assert [row.split(",")[0] for row in rows] == [
        "| textbook trainer",
        "| byte-level training",
        "| byte-level training",
        "| small case",
        "| encoding",
        "| encoding",
        "| encode_file",
        "| growth",
        "| growth",
        "| growth",
    ]
    assert "tiktoken" in rows[4] and "HF tokenizers" in rows[5]
    assert "encode_ordinary_batch" in rows[6] and "IDS DIFFER" not in rows[6]
    assert "HF tokenizers" in rows[7] and "size^" in rows[9]
    assert (
        "train_fast" in rows[0]
        and "train_bytelevel" in rows[1]
        and "HF tokenizers" in rows[1]
        and "one process" in rows[2]
    )


def test_table_numbers_the_notes():
    table = format_table([Row("a", "1 s", notes=["first", "second"]), Row("b", "2 s", notes=["third"])])
    assert "| a [1] [2] |" in table and "| b [3] |" in table and table.endswith("[3] third")


def test_grading_benchmark_grades_each_copy_as_a_student_of_its_own(capsys):
    main(["bench", "--grading", "2", "--assignment", "03_encoding", "--solutions", str(SOLUTIONS)])
    line = capsys.readouterr().out.strip()
    assert line.startswith("graded 2 solved submissions of 03_encoding in ")
    assert line.endswith("2 of 2 got full marks")


def test_grading_benchmark_refuses_what_it_cannot_grade(tmp_path):
    with pytest.raises(ValueError, match="at least 1, got 0"):
        bench_grading(0, SOLUTIONS)
    with pytest.raises(FileNotFoundError, match="no solution notebook"):
        bench_grading(1, tmp_path, "02_training")
