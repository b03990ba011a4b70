"""The generated cases of chapters 04-08's wrapped-call tasks (``cases/``): the
solutions pass them, the usual mistakes fail them, each student gets their
own and a re-grade the same, and each call fits its task.

A case is run the way the grader runs it, minus the kernel: its call goes
through ``probe_source`` (the task's forbidden functions guarded, the value
sent back as plain data) in a namespace where the solution's setup and
answer cells ran, and ``judge`` scores what came back.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import IPython.display
import nbformat
import pytest

from bpe_lab.grading.authoring.tasks import Task, load_tasks, nbgrader
from bpe_lab.grading.cases.chapters import GENERATORS
from bpe_lab.grading.cases.generated import generated, usable
from bpe_lab.grading.cases.generators import CASES_PER_TASK
from bpe_lab.grading.run.probe import probe_source
from bpe_lab.grading.run.sandbox import RESULT_MIME
from bpe_lab.grading.score.judge import judge

SOLUTIONS = Path(__file__).resolve().parent.parent / "solutions"
STUDENTS = ["alice", "bob", "carol", "dmitri", "eun-ji", "farah"]

EXPECTED = {
    "04_complexity_build_index",
    "04_complexity_merge_indexed",
    "04_complexity_train_indexed",
    "05_bytelevel_train",
    "07_wild_pretokenize_digits",
    "07_wild_pretokenize_zh",
    "07_wild_never_emitted",
    "08_scale_find_chunk_boundaries",
    "08_scale_count_chunk",
    "08_scale_merge_counts",
    "08_scale_encode_stream",
}


def _notebook(grade_id: str) -> nbformat.NotebookNode:
    (path,) = SOLUTIONS.glob(f"{grade_id[:2]}_*.ipynb")
    return nbformat.read(path, 4)


_TASKS: dict[str, Task] = {}
_SPACES: dict[str, dict[str, Any]] = {}


def _task(grade_id: str) -> Task:
    if grade_id not in _TASKS:
        _TASKS.update({t.grade_id: t for t in load_tasks(_notebook(grade_id))})
    return _TASKS[grade_id]


def _solution(grade_id: str) -> dict[str, Any]:
    """The namespace after the notebook's setup cell and its answer cells."""
    chapter = grade_id[:2]
    if chapter not in _SPACES:
        namespace: dict[str, Any] = {}
        for cell in _notebook(grade_id).cells:
            meta = nbgrader(cell)
            if cell.cell_type == "code" and (meta.get("solution") or str(meta.get("grade_id")).endswith("_setup")):
                exec(cell.source, namespace)  # noqa: S102 - the course's own solution
        _SPACES[chapter] = namespace
    return _SPACES[chapter]


def _run(task: Task, namespace: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    """How many of ``task``'s cases the functions in ``namespace`` pass, judged as the grader does."""
    published: list[dict[str, Any]] = []
    monkeypatch.setattr(IPython.display, "publish_display_data", published.append)
    exec(probe_source([c.call for c in task.cases], task.forbid), namespace)  # noqa: S102 - our own probe
    return judge(task, [published[-1][RESULT_MIME]])


def _with_cases(grade_id: str, student: str) -> Task:
    task = _task(grade_id)
    return Task(task.grade_id, task.points, "", generated(task, student), task.name, task.forbid, task.own)


def test_every_new_task_has_a_generator():
    assert EXPECTED <= set(GENERATORS)


@pytest.mark.parametrize("grade_id", sorted(EXPECTED))
def test_the_generator_fits_and_gives_each_student_their_own_cases(grade_id):
    task = _task(grade_id)
    assert usable(task) == "", usable(task)
    alice = generated(task, "alice")
    assert len(alice) == CASES_PER_TASK and all(c.generated for c in alice)
    assert generated(task, "alice") == alice
    assert [c.call for c in generated(task, "bob")] != [c.call for c in alice]
    assert [c.call for c in generated(task, "alice", salt="secret")] != [c.call for c in alice]
    assert not any(c.call in {f.call for f in task.cases} for c in alice)


def test_a_case_that_only_hands_the_function_on_says_nothing_about_how_it_is_called():
    task = _task("04_complexity_train_indexed")
    assert any("work_growth(train_indexed)" in c.call for c in task.cases) and usable(task) == ""
    handed_on = dataclasses.replace(task, cases=tuple(c for c in task.cases if "work_growth" in c.call))
    assert usable(handed_on) == "the fixed cases never call train_indexed"
    assert generated(handed_on, "alice") == ()


def test_a_generator_calls_the_learners_function_where_the_task_names_another():
    # a task's name is the name its fixed cases call most: set and Counter in these two
    train = dataclasses.replace(_task("05_bytelevel_train"), name="set")
    merge = dataclasses.replace(_task("08_scale_merge_counts"), name="Counter")
    assert usable(train) == usable(merge) == ""
    assert all("*train_bytelevel(check.text_file(" in c.call for c in generated(train, "alice"))
    assert all(c.call.startswith("(lambda cs: (merge_counts(cs), cs))(") for c in generated(merge, "alice"))


@pytest.mark.parametrize("grade_id", sorted(EXPECTED))
def test_the_solution_passes_every_generated_case(grade_id, monkeypatch):
    namespace = _solution(grade_id)
    for student in STUDENTS:
        task = _with_cases(grade_id, student)
        assert _run(task, dict(namespace), monkeypatch) == (CASES_PER_TASK, ""), student


# ------------------------------------------------------------ the usual mistakes

WRONG = {
    # each pair counted once per word, however often the word holds it
    "04_complexity_build_index": """
def build_index(words):
    counts, index = {}, {}
    for i, (symbols, freq) in enumerate(words):
        for pair in set(zip(symbols, symbols[1:])):
            counts[pair] = counts.get(pair, 0) + freq
            index.setdefault(pair, set()).add(i)
    return counts, index
""",
    # a word is added to its new pairs' sets, but never removed from the pairs it lost
    "04_complexity_merge_indexed": """
def merge_indexed(words, counts, index, pair):
    changed = set()
    for i in sorted(index.get(pair, ())):
        symbols, freq = words[i]
        merged = merge_symbols(symbols, pair)
        for p, d in pair_deltas(symbols, pair).items():
            counts[p] = counts.get(p, 0) + d * freq
            if counts[p] == 0:
                del counts[p]
            changed.add(p)
        for p in zip(merged, merged[1:]):
            index.setdefault(p, set()).add(i)
        words[i] = (merged, freq)
    return changed
""",
    # ties go to the smallest pair: the heap entry (-count, pair) without descending()
    "04_complexity_train_indexed": """
def train_indexed(words, num_merges):
    words = list(words)
    merges = []
    while len(merges) < num_merges:
        counts = count_pairs(dict(words))
        if not counts:
            break
        best = min(counts, key=lambda p: (-counts[p], p))
        merges.append(best)
        words = [(merge_symbols(s, best), f) for s, f in words]
    return merges
""",
    # ties go to the first pair met instead of the greatest
    "05_bytelevel_train": """
def train_bytelevel(path, vocab_size, special_tokens):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    words = Counter()
    for part, special in split_special(text, special_tokens):
        if not special:
            words.update(tuple(bytes([b]) for b in t.encode("utf-8")) for t in gpt2_pretokenize(part))
    vocab = {b: bytes([b]) for b in range(256)}
    for token in special_tokens:
        vocab[len(vocab)] = token.encode("utf-8")
    merges = []
    while len(vocab) < vocab_size:
        counts = Counter()
        for word, count in words.items():
            for pair in zip(word, word[1:]):
                counts[pair] += count
        if not counts:
            break
        best = max(counts, key=counts.get)
        merges.append(best)
        vocab[len(vocab)] = best[0] + best[1]
        words = Counter({merged(word, best): c for word, c in words.items()})
    return vocab, merges

def merged(word, pair):
    out, i = [], 0
    while i < len(word):
        if word[i : i + 2] == pair:
            out.append(pair[0] + pair[1])
            i += 2
        else:
            out.append(word[i])
            i += 1
    return tuple(out)

from collections import Counter
""",
    # the space before a number kept, as GPT-2 does
    "07_wild_pretokenize_digits": r"""
def pretokenize_digits(text):
    return regex.findall(GPT2_PATTERN.replace(r" ?\p{N}+", r" ?\p{N}{1,3}"), text)
""",
    # the range left in the second branch: "ok𠮷" is one piece
    "07_wild_pretokenize_zh": r"""
def pretokenize_zh(text):
    return regex.findall(r"\p{Han}+|[^\u4e00-\u9fa5\s]+|\s+", text)
""",
    # looks for the tokens' bytes in the text, not among the ids encode emits
    "07_wild_never_emitted": """
def never_emitted(tokenizer, text):
    return {a + b for a, b in tokenizer.merges if a + b not in text.encode("utf-8")}
""",
    # cuts after the special token, not where it starts
    "08_scale_find_chunk_boundaries": """
def find_chunk_boundaries(data, num_chunks, special_token):
    size = len(data) // num_chunks
    cuts = [0, len(data)]
    for i in range(1, num_chunks):
        found = data.find(special_token, i * size)
        cuts.append(len(data) if found == -1 else min(found + len(special_token), len(data)))
    return sorted(set(cuts))
""",
    # the special tokens deleted, which glues their neighbours together
    "08_scale_count_chunk": """
def count_chunk(text, special_tokens):
    for token in special_tokens:
        text = text.replace(token, "")
    return Counter(gpt2_pretokenize(text))
""",
    # each block encoded on its own: a pre-token cut between two blocks comes out in two halves
    "08_scale_encode_stream": """
def encode_stream(tokenizer, f, block_chars):
    while block := f.read(block_chars):
        yield from tokenizer.encode(block)
""",
    # the first Counter becomes the total
    "08_scale_merge_counts": """
def merge_counts(counts):
    if not counts:
        return Counter()
    total = counts[0]
    for part in counts[1:]:
        total.update(part)
    return total
""",
}

#: More mistakes, each of which the generated cases must catch too
MORE_WRONG = [
    (
        "08_scale_encode_stream",
        # read a block at a time, but every block kept until the end: the right ids, memory as large as the file
        """
def encode_stream(tokenizer, f, block_chars):
    parts = []
    while block := f.read(block_chars):
        parts.append(block)
    return tokenizer.encode("".join(parts))
""",
    ),
    (
        "08_scale_encode_stream",
        # the whole file in one read
        """
def encode_stream(tokenizer, f, block_chars):
    yield from tokenizer.encode(f.read())
""",
    ),
    (
        "08_scale_find_chunk_boundaries",
        # reads a window of 4096 bytes after each guess: misses a token further on
        """
def find_chunk_boundaries(data, num_chunks, special_token):
    size = len(data) // num_chunks
    cuts = [0, len(data)]
    for i in range(1, num_chunks):
        found = data.find(special_token, i * size, i * size + 4096)
        cuts.append(len(data) if found == -1 else found)
    return sorted(set(cuts))
""",
    ),
    (
        "08_scale_merge_counts",
        # dict.update replaces a count with the later one
        """
def merge_counts(counts):
    total = Counter()
    for part in counts:
        dict.update(total, part)
    return total
""",
    ),
    (
        "07_wild_never_emitted",
        # the whole vocabulary: the 256 bytes and the special tokens are candidates too
        """
def never_emitted(tokenizer, text):
    return set(tokenizer.vocab.values()) - {tokenizer.vocab[i] for i in tokenizer.encode(text)}
""",
    ),
]


@pytest.mark.parametrize(
    "grade_id, wrong", sorted(WRONG.items()) + MORE_WRONG, ids=[*sorted(WRONG), *(g for g, _ in MORE_WRONG)]
)
def test_a_usual_mistake_fails_some_generated_case(grade_id, wrong, monkeypatch):
    namespace = dict(_solution(grade_id))
    exec(wrong, namespace)  # noqa: S102 - a mistake written on purpose
    failed = [s for s in STUDENTS if _run(_with_cases(grade_id, s), dict(namespace), monkeypatch)[0] < CASES_PER_TASK]
    assert failed, f"{grade_id}: the mistake passes every generated case of {len(STUDENTS)} students"


_TEXT_FILE_CALLS = """
import json, sys
from bpe_lab import train_bytelevel
from bpe_lab.grading import check
for call in json.loads(sys.argv[1]):
    eval(call, {"check": check, "train_bytelevel": train_bytelevel})
check.text_file("the 07 notebook's training text")
folders = [p for p in check.text_file("x").parents if p.name.startswith("bpe-lab-text-")]
print(len(list(folders[0].rglob("text.txt"))))
"""


def test_every_call_of_text_file_leaves_the_temp_folder_as_it_was(tmp_path):
    """Finding 13: the hidden calls that write a file (05's fixed and generated
    cases, 07's cell) leave nothing once their process ends, and what a
    killed one left goes with the next."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    (tmp / "someone_elses.txt").write_text("kept")
    before = sorted(tmp.rglob("*"))
    (task,) = [t for t in load_tasks(nbformat.read(SOLUTIONS / "05_bytelevel.ipynb", 4)) if t.name == "train_bytelevel"]
    calls = [c.call for c in task.cases + generated(task, "alice") if "check.text_file(" in c.call]
    assert len(calls) >= 2 + CASES_PER_TASK
    env = {**os.environ, "TMPDIR": str(tmp)}
    killed = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from bpe_lab.grading import check; check.text_file('x'); print(1, flush=True); input()",
        ],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert killed.stdout.readline() == b"1\n"
    killed.kill()
    killed.wait()
    assert len(list(tmp.glob("bpe-lab-text-*/*/*/text.txt"))) == 1  # what a killed process leaves
    done = subprocess.run(
        [sys.executable, "-c", _TEXT_FILE_CALLS, json.dumps(calls)], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) == len(calls) + 2  # every file was there while the process ran, and only its own
    assert sorted(tmp.rglob("*")) == before
