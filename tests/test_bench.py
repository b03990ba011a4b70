"""The benchmark runs end to end in a tiny quick mode (no timing assertions:
the numbers belong in the README, not in a test on a shared machine)."""

from bpe_lab.bench import Row, Sizes, format_table
from bpe_lab.cli import main

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
