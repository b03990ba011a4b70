"""The benchmark runs end to end in a tiny quick mode (no timing assertions:
the numbers belong in the README, not in a test on a shared machine), and
its parts do what the table says: contenders take turns, the corpus's
documents are counted and measured."""

import re
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
    cases = [re.sub(r"( \[\d+\])+$", "", row.split(" | ")[0].split(",")[0]) for row in rows]
    assert cases == [
        "| corpus: this Python's standard library (stdlib-" + cases[0].split("(stdlib-")[1],
        "| building GPT-2's tokenizer (ranks already read)",
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
    assert "Tokenizer(...)" in rows[1] and "tiktoken Encoding(...)" in rows[1]
    assert "tiktoken encode_ordinary" in rows[6] and "IDS DIFFER" not in rows[6]
    assert "warm cache" in rows[7] and "of tiktoken" in rows[7] and "IDS DIFFER" not in rows[7]
    assert "HF tokenizers" in rows[8]
    assert "encode_ordinary_batch" in rows[9] and "IDS DIFFER" not in rows[9]
    assert "speed-up of 2 workers over 1" in rows[10] and "of tiktoken's speed-up" in rows[10]
    patterns = [row.split("pattern ")[1].split(",")[0] for row in rows[11:16]]
    assert patterns == ["gpt2", "r50k", "cl100k", "o200k", "llama3"]
    assert "gpt2_pretokenize" in rows[16] and "PIECES DIFFER" not in rows[16]
    assert "HF tokenizers" in rows[17] and "size^" in rows[19]
    assert (
        "train_fast" in rows[2]
        and "train_bytelevel" in rows[3]
        and "HF tokenizers" in rows[3]
        and "one process" in rows[4]
    )


def test_bench_check_times_each_tiktoken_call_in_the_benchmark_and_in_the_plain_script(capsys, monkeypatch):
    monkeypatch.setattr(Sizes, "quick", classmethod(lambda cls: TINY))
    try:  # no timing assertion: whether they agree on a shared machine is the command's to say, not the test's
        main(["bench", "--check", "--quick", "--quiet"])
    except SystemExit as stop:
        assert stop.code == 1
    out = capsys.readouterr().out
    checks = [line.split(" | ") for line in out.splitlines() if line.startswith("| check: ")]
    assert [row[0] for row in checks] == [
        "| check: tiktoken encode_ordinary",
        "| check: tiktoken batch 2",
        "| check: tiktoken batch 1",
    ]
    for _, ours, plain, ratio, _ in checks:
        assert ours.startswith("benchmark ") and ours.endswith(" MB/s") and plain.startswith("plain script ")
        assert ratio.endswith("of the plain script: agree") or "DISAGREE (over 10%)" in ratio


def test_the_plain_script_refuses_what_it_cannot_time(capsys):
    from bpe_lab.bench.plain import main as plain_main

    with pytest.raises(SystemExit):
        plain_main(["corpus.txt", "--repeat", "0"])
    assert "--threads and --repeat must be at least 1, got 2 and 0" in capsys.readouterr().err


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
