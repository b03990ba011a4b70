"""Exercise 04's traced corpus behaves like the list ``words`` is documented as.

A trainer may copy its input before it merges (``words = copy.deepcopy(words)``,
``words.copy()``): a correct one must keep full marks, at home and graded,
and one that recounts or scans its copy must still be seen
(``check.instruments.TracedWords``: a copy records with its original, and a
deep copy or a pickle keeps the traced frequencies and symbols).
"""

from __future__ import annotations

import copy
import heapq
import pickle

import nbformat
import pytest
from grading_support import LIMITS, RECOUNTING_TRAINER, SOLUTIONS, exercise_with, needs_bwrap

from bpe_lab.core.train import count_pairs
from bpe_lab.core.words import merge_symbols
from bpe_lab.grading import check
from bpe_lab.grading.authoring.tasks import nbgrader
from bpe_lab.grading.check.instruments import TracedWords, measure_work, traced_corpus
from bpe_lab.grading.commands.grader import grade

COPIES = {
    "deepcopy": copy.deepcopy,
    "copy method": lambda words: words.copy(),
    "pickle": lambda words: pickle.loads(pickle.dumps(words)),
    "sum": lambda words: words + [],
}


def _index(words):
    counts, index = {}, {}
    for i, (symbols, freq) in enumerate(words):
        for pair in zip(symbols, symbols[1:]):
            counts[pair] = counts.get(pair, 0) + freq
            index.setdefault(pair, set()).add(i)
    return counts, index


def _merge(words, counts, index, pair):
    """A local merge in place: only the words ``index[pair]`` lists."""
    start = {}
    for i in sorted(index.get(pair, ())):
        symbols, freq = words[i]
        merged = merge_symbols(symbols, pair)
        old, new = set(zip(symbols, symbols[1:])), set(zip(merged, merged[1:]))
        for p in old | new:
            start.setdefault(p, counts.get(p, 0))
        for p in zip(symbols, symbols[1:]):
            counts[p] -= freq
        for p in zip(merged, merged[1:]):
            counts[p] = counts.get(p, 0) + freq
        for p in old - new:
            index[p].discard(i)
            if not index[p]:
                del index[p]
        for p in new - old:
            index.setdefault(p, set()).add(i)
        words[i] = (merged, freq)
    for p in [p for p in start if counts.get(p) == 0]:
        del counts[p]
    return {p for p, was in start.items() if counts.get(p, 0) != was}


def _descending(pair):
    return tuple(tuple(-ord(c) for c in symbol) + (1,) for symbol in pair)


def _local(words, num_merges):
    """A local trainer (index, heap, lazy deletion) on the list it is given, which it changes."""
    counts, index = _index(words)
    heap = [(-count, _descending(pair), pair) for pair, count in counts.items()]
    heapq.heapify(heap)
    merges = []
    while heap and len(merges) < num_merges:
        negative, _, pair = heapq.heappop(heap)
        if counts.get(pair) != -negative:
            continue
        merges.append(pair)
        for changed in _merge(words, counts, index, pair):
            if changed in counts:
                heapq.heappush(heap, (-counts[changed], _descending(changed), changed))
    return merges


def _recounting(words, num_merges):
    """grading_support's recounting trainer, run here in-process."""
    namespace = {"count_pairs": count_pairs, "merge_symbols": merge_symbols}
    exec(RECOUNTING_TRAINER, namespace)
    return namespace["train_indexed"](words, num_merges)


@pytest.mark.parametrize("copied", COPIES.values(), ids=COPIES)
def test_a_trainer_that_copies_its_words_is_judged_on_its_copy(copied, capsys):
    check.check_train_indexed(lambda words, n: _local(copied(words), n))
    assert "train_indexed agrees with bpe_lab" in capsys.readouterr().out
    assert measure_work(lambda words, n: _local(copied(words), n)) == {
        "reads": 0.0,
        "arithmetic": 0.0,
        "comparisons": 0.0,
    }
    assert measure_work(lambda words, n: _recounting(copied(words), n))["arithmetic"] == 60.0
    assert check.work_growth(lambda words, n: _recounting(copied(words), n)).startswith("grows")


def test_a_copy_records_with_its_original_and_keeps_the_traced_objects():
    words = traced_corpus(2)
    for copied in (copy.deepcopy(words), words.copy(), pickle.loads(pickle.dumps(words))):
        assert type(copied) is TracedWords and copied == words.plain() and copied is not words
        *_, (symbols, freq) = copied  # a filler word: its symbols are traced too
        assert freq.tally is words.tally and symbols[0].tally is words.tally
    before = len(words.read)
    copied = copy.deepcopy(words)
    copied[3] = (("x",), 1)
    _ = copied[5]
    assert words.read[before + len(words) :] == [5] and words.written == [3]
    assert words[3] != (("x",), 1)  # the copy's own words: the original is unchanged


def test_a_merge_that_copies_its_words_still_reads_them_all():
    def copying(words, counts, index, pair):
        return _merge(copy.deepcopy(words), counts, index, pair)

    with pytest.raises(
        check.CheckFailed, match=r"you read word 2 \('A', 'B'\), which does not contain \('B', 'C'\): loop over"
    ):
        check.check_merge_indexed(copying)


@needs_bwrap
def test_a_trainer_that_copies_its_words_keeps_its_points_graded(tmp_path):
    """Today's grader gave it 0/2: the visible check's traced corpus had no
    ``copy`` and its frequencies could not be deep-copied."""
    solution = nbformat.read(SOLUTIONS / "04_complexity.ipynb", 4)
    (train,) = (c.source for c in solution.cells if nbgrader(c).get("grade_id") == "04_complexity_train_indexed_answer")
    assert "    words = list(words)\n" in train
    copying = train.replace("    words = list(words)\n", "    import copy\n    words = copy.deepcopy(words.copy())\n")
    path = tmp_path / "copying" / "04_complexity.ipynb"
    path.parent.mkdir()
    nbformat.write(exercise_with("04_complexity", {"04_complexity_train_indexed": copying}), path)
    (report,) = grade([path], solutions_dir=SOLUTIONS, limits=LIMITS, jobs=1)
    train_task = next(t for t in report.tasks if t.grade_id == "04_complexity_train_indexed")
    assert (train_task.points, train_task.max_points, train_task.message) == (2, 2, ""), train_task
