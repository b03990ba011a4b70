"""The benchmark runs end to end in a tiny quick mode (no timing assertions:
the numbers belong in the README, not in a test on a shared machine), and
its parts do what the table says: contenders take turns, the corpus's
documents are counted and measured."""

import time
from pathlib import Path

import pytest

from bpe_lab.bench.corpus import CorpusShape
from bpe_lab.bench.grading import bench_grading
from bpe_lab.bench.sizes import Sizes
from bpe_lab.bench.table import Row, format_table
from bpe_lab.bench.timing import interleaved
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
    pretokenize_bytes=20_000,
    encode_repeat=1,
    growth_bytes=(100_000, 200_000),
)


def test_bench_command_prints_one_row_per_benchmark(capsys, monkeypatch):
    monkeypatch.setattr(Sizes, "quick", classmethod(lambda cls: TINY))
    # the default cache: its small corpora are built once, not on every run
    assert main(["bench", "--quick", "--quiet"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")][1:]
    cases = [row.split(" | ")[0].split(",")[0] for row in rows]
    assert cases == [
        "| corpus: this Python's standard library (stdlib-" + cases[0].split("(stdlib-")[1],
        "| textbook trainer",
        "| byte-level training",
        "| byte-level training",
        "| small case",
        "| encoding",
        "| encoding",
        "| encoding",
        "| encode_file",
        "| encode_file",
        *["| pre-tokenizing"] * 6,
        "| growth",
        "| growth",
        "| growth",
    ]
    assert "documents joined by <|endoftext|>" in rows[0] and "document sizes: median" in rows[0]
    assert "tiktoken" in rows[5] and "IDS DIFFER" not in rows[5]
    assert "warm cache" in rows[6] and "of tiktoken" in rows[6] and "IDS DIFFER" not in rows[6]
    assert "HF tokenizers" in rows[7]
    assert "encode_ordinary_batch" in rows[8] and "IDS DIFFER" not in rows[8]
    assert "speed-up of 2 workers over 1" in rows[9] and "of tiktoken's speed-up" in rows[9]
    patterns = [row.split("pattern ")[1].split(",")[0] for row in rows[10:15]]
    assert patterns == ["gpt2", "r50k", "cl100k", "o200k", "llama3"]
    assert "gpt2_pretokenize" in rows[15] and "PIECES DIFFER" not in rows[15]
    assert "HF tokenizers" in rows[16] and "size^" in rows[18]
    assert (
        "train_fast" in rows[1]
        and "train_bytelevel" in rows[2]
        and "HF tokenizers" in rows[2]
        and "one process" in rows[3]
    )


def test_contenders_take_turns_each_from_a_fresh_start():
    events = []

    def contender(name):
        def prepare():
            events.append(f"prepare {name}")
            return lambda: events.append(f"run {name}") or name

        return prepare

    timed = interleaved({"ours": contender("ours"), "theirs": contender("theirs")}, 2)
    assert events == ["prepare ours", "run ours", "prepare theirs", "run theirs"] * 2
    assert [len(t.seconds) for t in timed.values()] == [2, 2] and timed["theirs"].result == "theirs"
    assert [len(t.cpu_seconds) for t in timed.values()] == [2, 2]
    assert timed["ours"].best == min(timed["ours"].seconds)


def test_a_run_counts_the_cpu_time_of_its_threads_and_of_the_workers_it_waited_for():
    import subprocess
    import sys
    import threading

    def spin(seconds):
        end = time.process_time() + seconds
        while time.process_time() < end:
            pass

    def in_a_thread():
        thread = threading.Thread(target=spin, args=(0.2,))
        thread.start()
        thread.join()

    def in_a_child():
        code = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass"
        subprocess.run([sys.executable, "-c", code], check=True)

    timed = interleaved({"thread": lambda: in_a_thread, "child": lambda: in_a_child}, 1)
    assert timed["thread"].cpu_seconds[0] >= 0.2
    assert timed["child"].cpu_seconds[0] >= 0.3
    assert "CPU" in timed["child"].spread()
    with pytest.raises(ValueError, match="repeat must be at least 1, got 0"):
        interleaved({}, 0)


def test_corpus_shape_counts_documents_and_their_utf8_sizes():
    shape = CorpusShape.of(["a", "é" * 10, "abc", "x" * 100])  # 1, 20, 3 and 100 bytes
    assert (shape.documents, shape.total_bytes, shape.smallest_bytes) == (4, 124, 1)
    assert (shape.median_bytes, shape.p90_bytes, shape.largest_bytes) == (3, 100, 100)
    with pytest.raises(ValueError, match="at least one document"):
        CorpusShape.of([])


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
