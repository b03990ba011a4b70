"""The tasks added for issue #10 grade what they teach, and cannot be passed
by calling the package.

- Exercise 04's pair index: a merge that scans every word instead of
  trusting ``index[pair]`` loses its points (its hidden test hands it a word
  that holds the pair but that the index does not list, and its visible
  check sees it read words the index does not name), and a trainer that
  recounts every round loses its points though its merges are right (the
  work it does per word grows with the number of merges). Both also make
  the in-kernel self-check a no-op: the grader decides those checks on
  what the kernel's traced words recorded (``visible``), so it changes nothing.
- Exercise 05's byte-level trainer and exercise 07's Chinese pre-tokenizer
  (exercise 06's until issue #20 kept it in 07 only): a wrong tie rule or a
  one-character pattern scores 0, and exercise 06 no longer grades one.
  Exercise 07's never-emitted tokens looked for in the text score 0 though
  the notebook patches its self-check away (the grader decides it).
- Every new task, answered by calling the package's own answer (imported
  under another name, or captured in an earlier cell), scores 0 and names
  the function; the solutions keep full marks on every auto-graded task.
  The routes are taken in turn, task after task (a covering set: both in
  chapter 04, one each in 05 and 06), so one delegating notebook per
  chapter: the kernel's package view has no answer to reach by either route.

One grading run (two kernels at a time) serves all the tests; the
solutions' is the test run's shared one (``grading_support.shared``).
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from grading_support import RECOUNTING_TRAINER, shared

from bpe_lab.grading.authoring.release import BEGIN_SOLUTION, release_notebook
from bpe_lab.grading.cases.chapters import GENERATORS
from bpe_lab.grading.check.answers import ANSWERS
from bpe_lab.grading.check.guard import canonical
from bpe_lab.grading.commands.grader import Limits, grade

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
LIMITS = Limits(cell_timeout=60, notebook_timeout=240, memory_mb=1536)
NAMES = ("04_complexity", "05_bytelevel")

# answer cell -> (module, attribute, body with {f} for the package's answer)
DELEGATIONS = {
    "04_complexity_build_index_answer": ("bpe_lab.grading.check.complexity", "index_words", "return {f}(words)"),
    "04_complexity_merge_indexed_answer": (
        "bpe_lab.grading.check.complexity",
        "merge_in_index",
        "return {f}(words, counts, index, pair)",
    ),
    "04_complexity_train_indexed_answer": (
        "bpe_lab.core.train_fast",
        "learn_merges",
        'return {f}(dict(words), num_merges, tie_break="lexicographic")',
    ),
    "05_bytelevel_train_answer": (
        "bpe_lab.bytelevel.train",
        "train_bytelevel",
        "return {f}(path, vocab_size, special_tokens)",
    ),
}
ROUTES = ("alias", "captured")
#: the route each delegation is taken by: in turn
ROUTE = {gid: ROUTES[i % len(ROUTES)] for i, gid in enumerate(DELEGATIONS)}

# wrong answers that call nothing forbidden: (notebook, answer cell, source)
WRONG = {
    "scanning_merge": (
        "04_complexity",
        "04_complexity_merge_indexed_answer",
        """
check.check_merge_indexed = lambda fn: None  # hostile: the self-check patched away in the kernel


def merge_indexed(words, counts, index, pair):
    changed = set()
    for i, (symbols, freq) in enumerate(words):  # a scan: every word, not index[pair]
        if pair not in zip(symbols, symbols[1:]):
            continue
        merged = merge_symbols(symbols, pair)
        for p, d in pair_deltas(symbols, pair).items():
            counts[p] = counts.get(p, 0) + d * freq
            changed.add(p)
            if counts[p] == 0:
                del counts[p]
        for p in set(zip(symbols, symbols[1:])) - set(zip(merged, merged[1:])):
            index.get(p, set()).discard(i)
            if p in index and not index[p]:
                del index[p]
        for p in set(zip(merged, merged[1:])) - set(zip(symbols, symbols[1:])):
            index.setdefault(p, set()).add(i)
        words[i] = (merged, freq)
    return changed""",
    ),
    "recounting_trainer": (
        "04_complexity",
        "04_complexity_train_indexed_answer",
        "\ncheck.check_train_indexed = lambda fn: None  # hostile: the self-check patched away in the kernel\n\n"
        + RECOUNTING_TRAINER,
    ),
    "first_met_ties": ("05_bytelevel", "05_bytelevel_train_answer", None),
    "one_character_pattern": (
        "07_wild",
        "07_wild_pretokenize_zh_answer",
        """
def pretokenize_zh(text):
    return regex.findall(ZH_RANGE_PATTERN, text)""",
    ),
}


#: more wrong answers in the same notebook as one of ``WRONG`` (no kernel run of their own): key -> {cell: source}
ALSO = {
    "one_character_pattern": {
        "07_wild_never_emitted_answer": """
check.check_never_emitted = lambda fn: None  # hostile: the self-check patched away in the kernel


def never_emitted(tokenizer, text):
    data = text.encode("utf-8")  # the bytes looked for in the text, not among the ids encode emits
    return {a + b for a, b in tokenizer.merges if a + b not in data}""",
    },
}


def _solution(name: str) -> nbformat.NotebookNode:
    return nbformat.read(SOLUTIONS / f"{name}.ipynb", as_version=4)


def _answers(name: str) -> dict[str, str]:
    return {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in _solution(name).cells
        if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")
    }


def _submission(name: str, replace: dict[str, str], earlier: dict[str, str] | None = None) -> nbformat.NotebookNode:
    """The exercise solved, but with ``replace``'s answer cells instead (and
    ``earlier``'s cells run just before them)."""
    nb = release_notebook(_solution(name), name)
    answers = {**_answers(name), **replace}
    cells = []
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        if cell.cell_type == "code" and gid in answers:
            cell.source = answers[gid]
            if earlier and gid in earlier:
                cells.append(nbformat.v4.new_code_cell(earlier[gid]))
        cells.append(cell)
    nb.cells = cells
    return nb


def _delegating(name: str) -> nbformat.NotebookNode:
    replace, earlier = {}, {}
    for gid, (module, attr, body) in DELEGATIONS.items():
        if not gid.startswith(name):
            continue
        head = _answers(name)[gid].split(BEGIN_SOLUTION)[0].rstrip().rstrip("#").rstrip()
        if ROUTE[gid] == "alias":
            before, reference = f"from {module} import {attr} as _reference", "_reference"
        else:
            earlier[gid] = f"import {module}\n_captured_{attr} = {module}.{attr}"
            before, reference = "", f"_captured_{attr}"
        replace[gid] = "\n".join(filter(None, [before, head, "    " + body.format(f=reference)]))
    return _submission(name, replace, earlier)


def _wrong(key: str) -> nbformat.NotebookNode:
    name, gid, source = WRONG[key]
    if source is None:  # the solution with first-met ties instead of the greater pair
        source = _answers(name)[gid].replace(
            "best = max(counts, key=lambda pair: (counts[pair], pair))",
            "best = next(p for p in counts if counts[p] == max(counts.values()))",
        )
        assert source != _answers(name)[gid]
    return _submission(name, {gid: source, **ALSO.get(key, {})})


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("new_tasks")
    notebooks = {("delegating", n): (n, _delegating(n)) for n in NAMES}
    notebooks |= {("wrong", key): (WRONG[key][0], _wrong(key)) for key in WRONG}
    paths = {}
    for key, (name, nb) in notebooks.items():
        path = folder / "-".join(key) / f"{name}.ipynb"
        path.parent.mkdir()
        nbformat.write(nb, path)
        paths[key] = path
    reports = grade(list(paths.values()), solutions_dir=SOLUTIONS, limits=LIMITS, jobs=2)
    common = shared(tmp_path_factory, [f"solution-{n}" for n in NAMES]).reports
    solutions = {("solution", n): common[f"solution-{n}"] for n in NAMES}
    return {**solutions, **dict(zip(paths, reports))}


def _task(report, gid: str):
    return next(t for t in report.tasks if t.grade_id == gid.removesuffix("_answer"))


@pytest.mark.parametrize("name", NAMES)
def test_the_solutions_keep_full_marks_on_every_auto_graded_task(graded, name):
    report = graded[("solution", name)]
    auto = [t for t in report.tasks if not t.grade_id.startswith(f"{name[:2]}_written_")]
    assert auto and all(t.points == t.max_points > 0 for t in auto), auto
    written = [t for t in report.tasks if t not in auto]
    assert len(written) == 1 and written[0].points == 0, written  # a person grades it
    for gid in DELEGATIONS:
        if gid.startswith(name):
            assert _task(report, gid).points > 0


def test_the_routes_are_taken_in_turn_each_at_least_once_and_both_in_chapter_04():
    assert set(ROUTE.values()) == set(ROUTES)
    assert {ROUTE[gid] for gid in DELEGATIONS if gid.startswith("04_")} == set(ROUTES)


@pytest.mark.parametrize("gid", sorted(DELEGATIONS), ids=[f"{g}-{ROUTE[g]}" for g in sorted(DELEGATIONS)])
def test_a_new_task_answered_by_the_package_scores_zero_and_names_it(graded, gid):
    module, attr, _ = DELEGATIONS[gid]
    task = _task(graded[("delegating", gid[: gid.index("_", 3)])], gid)
    assert task.points == 0, task
    assert canonical(f"{module}.{attr}") in task.message and "asks you to write" in task.message, task.message


def test_a_merge_that_scans_every_word_loses_its_points_to_the_word_the_index_does_not_list(graded):
    report = graded[("wrong", "scanning_merge")]
    task = _task(report, "04_complexity_merge_indexed")
    assert task.points == 0 and "does not contain" in task.message, task
    assert "the self-check check.check_merge_indexed failed on case 1" in task.message, task  # the grader's verdict
    assert _task(report, "04_complexity_build_index").points == 1


def test_a_trainer_that_recounts_gets_its_merges_right_and_still_scores_zero(graded):
    report = graded[("wrong", "recounting_trainer")]
    task = _task(report, "04_complexity_train_indexed")
    assert task.points == 0 and "pair count updates per word" in task.message, task
    assert "the self-check check.check_train_indexed failed on case" in task.message, task  # the grader's verdict
    assert _task(report, "04_complexity_merge_indexed").points == 3


def test_first_met_ties_in_the_byte_level_trainer_score_zero_with_the_tie_hint(graded):
    task = _task(graded[("wrong", "first_met_ties")], "05_bytelevel_train")
    assert task.points == 0 and "lexicographically greater pair of bytes" in task.message, task


def test_a_one_character_chinese_pattern_scores_zero_with_its_hint(graded):
    report = graded[("wrong", "one_character_pattern")]
    task = _task(report, "07_wild_pretokenize_zh")
    assert task.points == 0 and "are both Han characters" in task.message, task
    assert _task(report, "07_wild_pretokenize_digits").points == 3


def test_tokens_looked_for_in_the_text_score_zero_though_the_check_is_patched_away(graded):
    """Its self-check takes a ``Tokenizer``: the grader sends it as the source
    that builds it again, and decides the check on the values (``visible``)."""
    task = _task(graded[("wrong", "one_character_pattern")], "07_wild_never_emitted")
    assert task.points == 0, task
    assert "the self-check check.check_never_emitted failed on case 1: never_emitted(Tokenizer(2" in task.message
    assert "look among the ids tokenizer.encode(text) returns" in task.message, task


def test_the_chinese_pre_tokenizer_is_graded_in_07_only(tmp_path_factory):
    """Issue #20: exercise 06's task used the Han range that notebook 07
    introduces, and exercise 07's task 2 repeated it."""
    reports = shared(tmp_path_factory, ["solution-06_variants", "solution-07_wild"]).reports
    variants, wild = reports["solution-06_variants"], reports["solution-07_wild"]
    assert [(t.grade_id, t.points) for t in variants.tasks] == [
        ("06_variants_longest_match", 2),
        ("06_variants_viterbi", 3),
        ("06_variants_sp_decode", 2),
        ("06_written_unigram_sampling", 0),  # a person grades it
    ]
    assert variants.max_total == 9, variants
    zh = _task(wild, "07_wild_pretokenize_zh")
    assert zh.points == zh.max_points == 2, zh
    assert "06_variants_han_pretokenize" not in GENERATORS and "han_pretokenize" not in ANSWERS
