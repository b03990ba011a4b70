"""Cases the grader measures itself (``grading/run/measure.py``), run in real kernels.

Exercise 04's ``check.work_growth`` calls: in the kernel they count
operations on traced words, which a submission can forge; the grader
replaces their result with its own verdict from the kernel tree's CPU time
(``cases/complexity.py`` says what is timed, and why its margins hold).
The solution must pass on a loaded machine; a rescanning merge and a
recounting trainer whose values are right must fail, also when they forge
what the kernel's instruments report, and also when they pad the small
corpus's calls until the difference is nothing: each timed cell is held
against a local answer of the grader's, timed in the same kernel.

Exercise 08's last generated case, ``check.MeteredText.held_by(encode_stream,
4096)``: the metered
file's counts are the kernel's word; the grader samples the kernel tree's
resident memory while the learner's function streams a file of 3.6 million
characters (``cases/scale.py``). The solution must pass; reading the text
whole must fail, also as its bytes, and also when the metered file's
figures are forged.

These are the tests that assert on a measured decision (the product's own
decision is a measured one): the bound is 12 ticks of ``/proc``'s clock,
the solution's difference a few ticks, the wrong answers' many times the
bound (``cases.complexity``'s docstring has the figures).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import nbformat
import pytest
from grading_support import RECOUNTING_TRAINER, SOLUTIONS, exercise_with

from bpe_lab.grading.authoring.tasks import nbgrader
from bpe_lab.grading.cases.complexity import RATIO
from bpe_lab.grading.run.measure import decide, plan_of, planned, reference_cell
from bpe_lab.grading.run.probe import KERNEL, probe_source
from bpe_lab.grading.run.sandbox import Cell, Limits, Outcome, run_cells
from bpe_lab.grading.score.judge import judge

SOLUTION = nbformat.read(Path(__file__).resolve().parent.parent / "solutions" / "04_complexity.ipynb", 4)
ANSWERS = "\n\n".join(c.source for c in SOLUTION.cells if str(nbgrader(c).get("grade_id", "")).endswith("_answer"))
SETUP = "from bpe_lab import count_pairs, merge_symbols\nfrom bpe_lab.grading import check\n"
LIMITS = Limits(cell_timeout=120, notebook_timeout=600)
MERGE, TRAIN = "check.work_growth(merge_indexed, 'merge')", "check.work_growth(train_indexed)"

#: Visits every word, merges only the listed ones: the values are right, the work grows with the corpus.
RESCANNING_MERGE = """
_local_merge = merge_indexed
def merge_indexed(words, counts, index, pair):
    listed = index.get(pair, set())
    for i in range(len(words)):  # the cheapest scan there is: one set lookup per word
        if i in listed:
            pass
    return _local_merge(words, counts, index, pair)
"""

#: What a forger adds: the kernel's instruments report "flat" and record nothing.
FORGED = """
check.work_growth = lambda *args: "flat"
check.TracedWords.__iter__ = lambda self: iter(self._words)
check.TracedWords.__getitem__ = lambda self, i: self._words[i]
"""


@pytest.fixture
def one_try(monkeypatch):
    """A case over its bound measured once, not ``TRIES`` times: for the tests
    of what one measurement decides (measuring again has a test of its own).
    Their figures are far over (``beyond_load``) and measured once anyway on
    this machine; a faster one could bring one near the bound."""
    from bpe_lab.grading.run import sandbox

    monkeypatch.setattr(sandbox, "TRIES", 1)


def _measured(answers: str, call: str, tmp_path: Path) -> dict[str, object]:
    """The grader's result for the measured ``call`` after ``answers``."""
    workdir = tmp_path / "work"
    workdir.mkdir(exist_ok=True)
    cells = [Cell(SETUP), Cell(answers), Cell(probe_source([call], []), replay=False, results=True)]
    outcomes: list[Outcome] = asyncio.run(run_cells(cells, workdir, LIMITS))
    assert [o.status for o in outcomes] == ["ok", "ok", "ok"], outcomes
    (result,) = outcomes[2].results[0]
    return dict(result)


def test_a_work_growth_call_is_marked_with_its_plan():
    source = probe_source(["f(1)", MERGE, TRAIN], [])
    found = planned(source)
    assert [(slot, len(cells)) for slot, _, cells in found] == [(1, 4), (2, 8)]  # each followed by its reference
    merge, train = found[0][1], found[1][1]
    assert found[0][2][1] == reference_cell(merge.reference[0])
    assert merge.reference == (f"{KERNEL}.reference_merge('small')", f"{KERNEL}.reference_merge('large')")
    assert train.reference[3] == f"{KERNEL}.reference_train('small', 60)"
    assert [call for call, _, _ in merge.timed] == [
        f"{KERNEL}.timed_merge(merge_indexed, '{c}')" for c in ("small", "large")
    ]
    assert train.timed[1][0] == f"{KERNEL}.timed_train(train_indexed, 'small', 10)"
    assert merge.setup.startswith(f"{KERNEL}.measured_setup('merge', {{'core': [(('")
    assert merge.cleanup == train.cleanup == f"{KERNEL}.measured_cleanup()"
    assert [weight for _, weight, _ in merge.timed] == [-1, 1]
    assert [weight for _, weight, _ in train.timed] == [-1, 1, 1, -1]  # (L10 - S10) vs (L40 - S40)
    assert merge.size == "100 merges on the core's 166 words, alone and with 200,000 more"
    assert planned(probe_source(["f(1)", "check.work_growth(f, g)"], [])) == []


def test_the_verdict_weighs_the_cells_and_checks_every_value():
    plan = plan_of(TRAIN)
    assert plan is not None
    values = [[{"repr": repr(expected), "reached": []}] for _, _, expected in plan.timed]
    cells = [cell for value in values for cell in (value, None)]  # each followed by its reference's: no value
    references = [0.2, 0.0, 0.2, 0.0]

    def figures(*own):
        return [seconds for pair in zip(own, references) for seconds in pair]

    assert decide(plan, figures(0.5, 0.1, 0.61, 0.1), cells) == {"repr": "'flat'", "reached": []}
    assert decide(plan, figures(0.5, 0.1, 0.63, 0.1), cells)["measured"] == (
        "too slow: the work grew with the corpus times the merges (10 and 60 merges on 166 words, alone and with "
        "100,000 more)"
    )
    # padded: no difference, but the small corpus's cells take what the large one's do, 0.12 s more than allowed
    assert decide(plan, figures(0.6, 0.6, 0.6, 0.6), cells) == {
        "measured": f"too slow: more than {RATIO} times a local answer's time (10 and 60 merges on 166 words, alone "
        "and with 100,000 more)",
        "reached": [],
        "over": True,
    }
    assert decide(plan, figures(0.92, 0.12, 0.92, 0.12), cells) == {"repr": "'flat'", "reached": []}  # allowed
    wrong = [*cells[:6], [{"repr": "[]", "reached": ["bpe_lab.x"]}], None]
    assert decide(plan, [0] * 8, wrong) == {
        "measured": "returned a wrong value on 10 and 60 merges on 166 words, alone and with 100,000 more",
        "reached": ["bpe_lab.x"],
    }
    raised = [*cells[:2], [{"error": "ValueError: no", "reached": []}], *cells[3:]]
    assert decide(plan, [0] * 8, raised) == {"error": "ValueError: no", "reached": []}
    assert decide(plan, [0] * 8, cells[:7])["measured"].startswith("the measured calls on 10 and 60 merges")
    with pytest.raises(ValueError, match=r"decide: 4 figures \[0, 0, 0, 0\] for 8 timed cells"):
        decide(plan, [0, 0, 0, 0], values)


def test_the_solutions_merge_and_trainer_are_measured_flat(tmp_path):
    assert _measured(ANSWERS, MERGE, tmp_path) == {"repr": "'flat'", "reached": []}
    assert _measured(ANSWERS, TRAIN, tmp_path) == {"repr": "'flat'", "reached": []}


@pytest.mark.parametrize("forged", ["", FORGED])
def test_a_rescanning_merge_is_too_slow_even_when_it_forges_the_counts(tmp_path, forged, one_try):
    result = _measured(ANSWERS + RESCANNING_MERGE + forged, MERGE, tmp_path)
    assert result["measured"] == (
        "too slow: the work grew with the corpus (100 merges on the core's 166 words, alone and with 200,000 more)"
    )


def test_a_recounting_trainer_is_too_slow_even_when_it_forges_the_counts(tmp_path, one_try):
    result = _measured(ANSWERS + RECOUNTING_TRAINER + FORGED, TRAIN, tmp_path)
    assert str(result["measured"]).startswith("too slow: the work grew with the corpus times the merges (")


def test_feedback_names_the_size_and_the_mistake_not_the_expected_value():
    from bpe_lab.grading.authoring.tasks import HiddenCase, Task

    task = Task("04_complexity_train_indexed", 2, "", (HiddenCase(TRAIN, "flat"),), "train_indexed")
    slow = {"measured": "too slow: the work grew with the corpus times the merges (10 and 40 merges)", "reached": []}
    assert judge(task, [[slow]]) == (
        0,
        "0/1 hidden tests passed; hidden test 1: check.work_growth(train_indexed): too slow: the work grew with "
        "the corpus times the merges (10 and 40 merges)",
    )
    assert judge(task, [[{"repr": "'flat'", "reached": []}]]) == (1, "")


def test_a_measured_case_over_its_bound_costs_the_whole_task_a_wrong_value_only_its_case():
    from bpe_lab.grading.authoring.tasks import HiddenCase, Task

    cases = (HiddenCase("f(1)", 1), HiddenCase(TRAIN, "flat"), HiddenCase("f(2)", 2))
    task = Task("04_complexity_train_indexed", 3, "", cases, "train_indexed")
    right = {"repr": "1", "reached": []}, {"repr": "2", "reached": []}
    slow = {"measured": "too slow: the work grew with the corpus times the merges (10 and 60 merges)", "reached": []}
    passed, message = judge(task, [[right[0], {**slow, "over": True}, right[1]]])
    assert passed == 0 and message.startswith("hidden test 2: check.work_growth(train_indexed): too slow"), message
    assert message.endswith("; that is the work this task is about, so it costs the whole task"), message
    wrong = {"measured": "returned a wrong value on 10 and 60 merges", "reached": []}
    assert judge(task, [[right[0], wrong, right[1]]])[0] == 2


def test_at_home_work_growth_counts_the_reads_of_a_merge():
    """The learner's side stays: traced words name the words a merge read beyond ``index[pair]``."""
    from bpe_lab.grading.check.complexity import merge_in_index
    from bpe_lab.grading.check.instruments import work_growth

    def scanning(words, counts, index, pair):
        for _ in words:
            pass
        return merge_in_index(words, counts, index, pair)

    assert work_growth(merge_in_index, "merge") == "flat"
    assert work_growth(scanning, "merge") == "grows: it read 345 words that index[pair] does not list"
    with pytest.raises(ValueError, match="task must be 'train' or 'merge', not 'merges'"):
        work_growth(merge_in_index, "merges")


def test_a_merge_that_never_ends_on_the_large_corpus_fails_its_case_alone(tmp_path):
    """The timed cell times out: that case is "too slow", the kernel is
    restarted, and the cells after it still run. (The merge waits rather
    than spins: what is tested is the time limit, which a spinning loop
    meets the same way at five seconds of a core's time.)"""
    endless = (
        ANSWERS
        + "\nimport time\n_local = merge_indexed\n"
        + (
            "def merge_indexed(words, counts, index, pair):\n"
            "    while len(words) > 1000:\n"
            "        time.sleep(0.01)\n"
            "    return _local(words, counts, index, pair)\n"
        )
    )
    workdir = tmp_path / "work"
    workdir.mkdir()
    probe = Cell(probe_source(["1 + 1", MERGE], []), replay=False, results=True)
    cells = [Cell(SETUP), Cell(endless), probe, Cell("print(merge_indexed)")]
    outcomes = asyncio.run(run_cells(cells, workdir, Limits(cell_timeout=5, notebook_timeout=300)))
    assert [o.status for o in outcomes] == ["ok", "ok", "ok", "ok"], outcomes
    assert outcomes[2].results[0][0]["repr"] == "2"
    assert outcomes[2].results[0][1] == {
        "measured": "too slow: it ran past the time limit on 100 merges on the core's 166 words, alone and with "
        "200,000 more",
        "over": True,
    }


SCALE = nbformat.read(Path(__file__).resolve().parent.parent / "solutions" / "08_scale.ipynb", 4)
SCALE_SETUP, STREAM = (
    next(c.source for c in SCALE.cells if nbgrader(c).get("grade_id") == f"08_scale_{gid}")
    for gid in ("setup", "encode_stream_answer")
)
HELD = "check.MeteredText.held_by(encode_stream, 4096)"
HELD_SIZE = "a file of 3,602,700 characters read 4096 at a time"
WHOLE = "encode_stream = lambda t, f, b: iter(t.encode(f.read()))"
#: Reads the text whole, then streams it from memory a block at a time: only the copy held shows.
READ_WHOLE = (
    STREAM.replace("def encode_stream(", "def _stream(")
    + """
class _Held:
    def __init__(self, text):
        self.text, self.at = text, 0

    def read(self, size):
        piece = self.text[self.at : self.at + size]
        self.at += size
        return piece

def encode_stream(tokenizer, f, block_chars):
    yield from _stream(tokenizer, _Held(f.read()), block_chars)
"""
)
#: Reads the file whole as UTF-8 bytes (3.6 MB, less than the old bound of 4 MB), then streams them
#: a block at a time through a text wrapper of its own: only the bytes held show.
READ_BYTES = (
    STREAM.replace("def encode_stream(", "def _stream(")
    + """
import io

def encode_stream(tokenizer, f, block_chars):
    yield from _stream(tokenizer, io.TextIOWrapper(io.BytesIO(f.buffer.read()), encoding="utf-8"), block_chars)
"""
)
#: What a forger adds: the metered file reports small figures, and held_by "bounded".
FORGED_METER = """
check.MeteredText.largest_read = property(lambda self: 1)
check.MeteredText.most_held = property(lambda self: 0)
check.MeteredText.held_by = staticmethod(lambda *args: "bounded")
"""


def _held(answer: str, tmp_path: Path, times: int = 1) -> list[dict[str, object]]:
    """The grader's result for ``HELD`` after ``answer``, ``times`` times in one kernel."""
    workdir = tmp_path / "work"
    workdir.mkdir(exist_ok=True)
    probe = Cell(probe_source([HELD], []), replay=False, results=True)
    cells = [Cell(SCALE_SETUP), Cell(answer), *[probe] * times, Cell("import os; print(os.listdir())")]
    outcomes = asyncio.run(run_cells(cells, workdir, LIMITS))
    assert [o.status for o in outcomes] == ["ok"] * len(cells), outcomes
    assert not (workdir / "bpe-lab-measured.txt").exists()  # the cleanup removed it
    return [dict(o.results[0][0]) for o in outcomes[2:-1]]


def test_the_solutions_stream_is_measured_bounded_every_time(tmp_path):
    assert _held(STREAM, tmp_path, times=2) == [{"repr": "'bounded'", "reached": []}] * 2


@pytest.mark.parametrize(
    "answer",
    [WHOLE, WHOLE + FORGED_METER, READ_WHOLE + FORGED_METER, READ_BYTES + FORGED_METER],
    ids=["whole", "whole-forged", "read-whole-forged", "read-bytes-forged"],
)
def test_holding_the_whole_text_is_measured_even_when_the_meter_is_forged(tmp_path, answer, one_try):
    held = {"measured": f"held the whole text ({HELD_SIZE})", "reached": [], "over": True}
    assert _held(answer, tmp_path) == [held]


def test_a_stream_of_wrong_ids_is_a_wrong_value_whatever_its_memory(tmp_path):
    answer = (
        STREAM + "\n_right = encode_stream\nencode_stream = lambda t, f, b: (i for i in _right(t, f, b) if i != 32)"
    )
    assert _held(answer, tmp_path) == [{"measured": f"returned a wrong value on {HELD_SIZE}", "reached": []}]


def test_a_memory_verdict_is_the_peak_over_the_bound():
    from bpe_lab.grading.cases.scale import HELD_BOUND

    plan = plan_of(HELD)
    assert plan is not None and plan.kind == "memory" and plan.bound == HELD_BOUND == 1 << 20
    value = [[{"repr": repr(plan.timed[0][2]), "reached": []}]]
    assert decide(plan, [HELD_BOUND], value) == {"repr": "'bounded'", "reached": []}
    assert decide(plan, [HELD_BOUND + 1], value)["measured"] == f"held the whole text ({HELD_SIZE})"


def test_a_case_is_measured_once_in_the_run_without_answers_and_a_forger_still_loses_it(tmp_path, monkeypatch):
    """Graded, each measured case is measured once, in the run where the
    task's answers have no body to delegate to: for chapter 04, whose setup
    reaches none of them, the first and only one. A rescanning merge that
    forges the kernel's counts passes its visible check, and the
    measurement takes the whole task, as the visible check takes an honest
    rescanning merge's. The student's trainer, which merges with the
    solution's merge, keeps its points."""
    from bpe_lab.grading.commands.grader import grade
    from bpe_lab.grading.run import sandbox

    measured: list[str] = []
    real = sandbox._measured

    async def counted(kernel, plan, timed):
        measured.append(plan.size)
        return await real(kernel, plan, timed)

    monkeypatch.setattr(sandbox, "_measured", counted)
    solved = {nbgrader(c).get("grade_id"): c.source for c in SOLUTION.cells}
    forged_merge = solved["04_complexity_merge_indexed_answer"] + RESCANNING_MERGE + FORGED
    # with the rescanning merge, the trainer's 50 more merges on 100,000 more words would cost about
    # the bound: it would keep or lose its points by the machine's load (a fresh-clone run lost them)
    call = "in merge_indexed(words, counts, index, pair)"
    assert call in solved["04_complexity_train_indexed_answer"]
    own_train = solved["04_complexity_train_indexed_answer"].replace(
        call, call.replace("merge_indexed", "_local_merge")
    )
    path = tmp_path / "mallory" / "04_complexity.ipynb"
    path.parent.mkdir()
    answers = {"04_complexity_merge_indexed": forged_merge, "04_complexity_train_indexed": own_train}
    nb = exercise_with("04_complexity", answers)
    nbformat.write(nb, path)
    (report,) = grade([path], solutions_dir=SOLUTIONS, limits=LIMITS, jobs=1)
    tasks = {t.grade_id: t for t in report.tasks}
    merge, train = tasks["04_complexity_merge_indexed"], tasks["04_complexity_train_indexed"]
    assert merge.points == 0, merge
    assert "too slow: the work grew with the corpus (100 merges" in merge.message, merge.message
    assert merge.message.endswith("that is the work this task is about, so it costs the whole task"), merge.message
    assert train.points == train.max_points, train
    assert sorted(measured) == sorted({plan_of(MERGE).size, plan_of(TRAIN).size}), measured  # once each


def test_a_call_that_raised_in_the_kernel_is_not_measured(tmp_path, monkeypatch):
    """It failed by the kernel's own word (which costs it the case): the
    grader builds no corpus of 200,000 words for it, and the error stands."""
    from bpe_lab.grading.run import sandbox

    async def never(*args):
        raise AssertionError("measured a case whose call raised")

    monkeypatch.setattr(sandbox, "_measured", never)
    raising = ANSWERS + "\ndef merge_indexed(words, counts, index, pair):\n    raise NotImplementedError()\n"
    assert _measured(raising, MERGE, tmp_path) == {"error": "NotImplementedError", "reached": []}


def test_a_figure_over_its_bound_is_measured_again_and_the_first_within_it_stands(monkeypatch):
    """Load from other processes could inflate a figure: over the bound
    (which costs the whole task) the case is measured again, up to ``TRIES``
    times; an answer over it every time is over; a timeout (the kernel
    restarted) is not tried again, nor a figure too far over for load to
    explain (``beyond_load``: a rescanning merge's 0.45 s over 0.08 s)."""
    from bpe_lab.grading.run import sandbox
    from bpe_lab.grading.run.measure import TRIES

    plan = plan_of(MERGE)
    over = {"measured": "too slow", "reached": [], "over": True}
    flat = {"repr": "'flat'", "reached": []}

    class Kernel:
        async def run(self, source, results=False):
            return Outcome("ok")

    def measured(figures):
        calls = []

        async def timed(kernel, plan, cells):
            calls.append(cells)
            return figures[len(calls) - 1]

        monkeypatch.setattr(sandbox, "_timed", timed)
        return asyncio.run(sandbox._measured(Kernel(), plan, ["a", "r", "b", "r"])), len(calls)

    # CPU seconds of the small corpus's calls, its reference's, the large one's and its reference's
    near, far, padded = [0.09, 0.01, 0.25, 0.01], [0.08, 0.01, 0.53, 0.01], [0.7, 0.01, 0.7, 0.01]
    assert TRIES == 3
    assert measured([(flat, False, [0.09, 0.01, 0.08, 0.01])]) == ((flat, False), 1)
    assert measured([(over, False, near), (flat, False, [0.09, 0.01, 0.08, 0.01])]) == ((flat, False), 2)
    assert measured([(over, False, near)] * 3) == ((over, False), 3)
    assert measured([(over, True, [])]) == ((over, True), 1)
    assert measured([(over, False, far)] * 3) == ((over, False), 1)
    assert measured([(over, False, padded)] * 3) == ((over, False), 1)  # 0.7 s where 0.16 s is allowed


#: A rescanning merge padded to take as long on the core alone as with the fillers: the difference of
#: the two corpora is nothing, but each call takes a scan of 200,000 words the package's merge never does.
PADDED_MERGE = """
_local_merge = merge_indexed
def merge_indexed(words, counts, index, pair):
    listed = index.get(pair, set())
    for i in range(max(len(words), 200_166)):  # as long on the core alone as with the fillers
        if i in listed:
            pass
    return _local_merge(words, counts, index, pair)
"""

#: A recounting trainer padded the same way: on a small corpus it recounts 100,000 words of its own too
#: (each pair once, so never merged), so the small corpus's rounds cost what the large one's do.
PADDED_TRAINER = (
    RECOUNTING_TRAINER.replace("def train_indexed(", "def _recounting(")
    + """
_PAD = [((chr(0x3400 + k % 512), chr(0x3400 + 512 + k // 512)), 1) for k in range(100_000)]
def train_indexed(words, num_merges):
    return _recounting(list(words) + (_PAD if len(words) < 1000 else []), num_merges)
"""
)


@pytest.mark.parametrize(("answer", "call"), [(PADDED_MERGE, MERGE), (PADDED_TRAINER, TRAIN)], ids=["merge", "trainer"])
def test_a_scan_padded_on_the_small_corpus_is_too_slow_next_to_the_packages_own_answer(tmp_path, answer, call):
    """The difference of the two corpora alone is padded away (today's
    grader measured both "flat"); each timed cell is also held against the
    package's own answer timed in the same kernel on the same input
    (``Measured.reference``). The padding is as good as the machine's load
    lets it be: what is left of the difference may be over its bound too,
    which is then the verdict named first."""
    plan = plan_of(call)
    result = _measured(ANSWERS + answer + FORGED, call, tmp_path)
    assert result.pop("over") is True, result
    assert result in (
        {"measured": f"too slow: more than {RATIO} times a local answer's time ({plan.size})", "reached": []},
        {"measured": f"{plan.mistake} ({plan.size})", "reached": []},
    ), result
