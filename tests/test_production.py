"""Exercise 09: the checks of ``bpe_lab.grading.check.production``, its
generated cases, its kernel's one extra library, and grading it: the
solution scores full marks, the exercise as released 0, and a submission
that hands the task to ``tokenizers``' own ``ByteLevelBPETokenizer`` 0 (the
self-check names ``bpe_lab``'s ``hf_tokenizer`` too); its written answer is
left to a person."""

import random
from pathlib import Path

import nbformat
import pytest
from grading_support import (
    fixed_and_generated,
    grade_solution_exercise_and,
    graded_with_no_op_checks,
)

from bpe_lab.grading import check
from bpe_lab.grading.authoring.tasks import load_tasks
from bpe_lab.grading.cases.chapters import GENERATORS
from bpe_lab.grading.cases.generated import generated, usable
from bpe_lab.grading.check.answers import CHAPTERS, forbidden
from bpe_lab.grading.check.guard import resolve
from bpe_lab.grading.check.production import template_reference
from bpe_lab.grading.run import jail
from bpe_lab.grading.run.distributions import allowed, needs
from bpe_lab.grading.run.stubs import package_dir

pytest.importorskip("tokenizers")

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "solutions"
SOLUTION = nbformat.read(SOLUTIONS / "09_production.ipynb", as_version=4)


def solved() -> dict[str, object]:
    """The solution's setup and answer cells run here: its two functions."""
    namespace: dict[str, object] = {}
    for cell in SOLUTION.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and (meta.get("solution") or meta.get("locked") and not meta.get("grade")):
            exec(compile(cell.source, meta["grade_id"], "exec"), namespace)  # noqa: S102 - the solution's own cells
    return namespace


SOLVED = solved()


def test_the_solution_passes_its_checks(capsys):
    check.check_build_pipeline(SOLVED["build_pipeline"])
    check.check_pair_processor(SOLVED["pair_processor"])
    out = capsys.readouterr().out
    assert (
        "build_pipeline agrees with bpe_lab on 22 cases" in out
        and "pair_processor agrees with bpe_lab on 4 cases" in out
    )


def _pipeline(prefix_space=False, specials=True, printable=True):
    """The solution with one of the usual mistakes."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    from bpe_lab.bytelevel.byte_map import bytes_to_unicode

    table = bytes_to_unicode()

    def build(tok):
        def text(token):
            return "".join(table[b] for b in token) if printable else token.decode("latin-1")

        vocab = {text(t): i for i, t in tok.vocab.items() if i not in tok.special_ids.values()}
        vocab.update(tok.special_ids)
        hf = Tokenizer(models.BPE(vocab, [(text(a), text(b)) for a, b in tok.merges]))
        hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=prefix_space)
        hf.decoder = decoders.ByteLevel()
        if specials:
            hf.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in tok.special_tokens])
        return hf

    return build


@pytest.mark.parametrize(
    "mistake, hint",
    [
        (_pipeline(prefix_space=True), "add_prefix_space"),
        (_pipeline(specials=False), "add the special tokens"),
        (_pipeline(printable=False), "printable|vocabulary|merges"),
        (lambda tok: [1, 2, 3], "expected a tokenizers.Tokenizer"),
    ],
)
def test_each_pipeline_mistake_has_its_hint(mistake, hint):
    with pytest.raises(check.CheckFailed, match=hint):
        check.check_build_pipeline(mistake)


def _processor(single=True, types=True, ids=True):
    from tokenizers import processors

    def make(tokenizer, bos, sep):
        b = ":1" if types else ""
        return processors.TemplateProcessing(
            single=f"{bos} $A" if single else f"{bos} $A {sep}",
            pair=f"{bos} $A {sep} $B{b} {sep}{b}",
            special_tokens=[
                (bos, tokenizer.token_to_id(bos) if ids else 0),
                (sep, tokenizer.token_to_id(sep) if ids else 1),
            ],
        )

    return make


@pytest.mark.parametrize(
    "mistake, hint",
    [
        (_processor(single=False), "single template"),
        (_processor(types=False), "type ids"),
        (_processor(ids=False), "token_to_id"),
    ],
)
def test_each_template_mistake_has_its_hint(mistake, hint):
    with pytest.raises(check.CheckFailed, match=hint):
        check.check_pair_processor(mistake)


def test_notebook_09_leaves_the_pair_template_to_the_exercise():
    """Issue 34 item 11: notebook 09 showed task 2's answer (a pair template
    with ``$B:1`` and ``sep:1``) in a cell; it now shows a single template
    and only describes ``$B`` and ``:1``, as the other chapters take a
    smaller step than their exercise."""
    notebook = nbformat.read(ROOT / "notebooks" / "09_from_bpe_lab_to_production.ipynb", as_version=4)
    code = [cell.source for cell in notebook.cells if cell.cell_type == "code"]
    assert not any("$B" in source or "pair=" in source for source in code)
    assert any("TemplateProcessing(" in source and 'single="$A <|eot|>"' in source for source in code)


def test_template_reference_by_hand():
    assert template_reference(["[CLS]", "[SEP]", "[PAD]"], "a b", "c") == (
        ["[CLS]", "a", "b"],
        [3, 0, 1],
        ["[CLS]", "a", "b", "[SEP]", "c", "[SEP]"],
        [3, 0, 1, 4, 2, 4],
        [0, 0, 0, 0, 1, 1],
    )


def test_the_answers_are_forbidden_and_resolve():
    paths = forbidden(*CHAPTERS["production"])
    assert {"bpe_lab.bytelevel.hf_pipeline.hf_tokenizer", BYTE_LEVEL_BPE} <= set(paths)
    for path in paths:
        resolve(path)


def test_both_tasks_get_generated_cases_that_the_solution_answers():
    """The generators fit their tasks, and the solution's functions, run
    here on the generated calls, give the grader's expected values."""
    tasks = load_tasks(SOLUTION)
    assert [t.grade_id for t in tasks] == ["09_production_build_pipeline", "09_production_pair_processor"]
    namespace = {**SOLVED, "check": check}
    for task in tasks:
        assert task.grade_id in GENERATORS and usable(task) == "", usable(task)
        cases = generated(task, "alice", nonce="1")
        assert len(cases) == 5 and cases != generated(task, "bob", nonce="1")
        for case in (*task.cases, *cases):
            assert eval(case.call, namespace) == case.expected, case.call  # noqa: S307 - our own calls
    inputs = GENERATORS["09_production_build_pipeline"].inputs(random.Random(3))
    assert any(specials for *_, specials, _ in inputs) and any(not specials for *_, specials, _ in inputs)


def test_only_exercise_09s_kernel_may_import_tokenizers():
    assert needs(SOLUTION.metadata) == ("tokenizers",)
    for path in sorted(SOLUTIONS.glob("0[1-8]_*.ipynb")):
        assert needs(nbformat.read(path, as_version=4).metadata) == (), path.name
    assert needs({"bpe_lab": {"kernel_needs": "tokenizers"}}) == ()  # a string, not a list: nothing
    package = package_dir()
    plain = {entry.name for entries in allowed(package).values() for entry in entries}
    more = {entry.name for entries in allowed(package, ("tokenizers",)).values() for entry in entries}
    assert "tokenizers" not in plain and "tokenizers" in more and plain < more


# ------------------------------------------------------------------ grading

BYTE_LEVEL_BPE = "tokenizers.implementations.byte_level_bpe.ByteLevelBPETokenizer.__init__"

#: right ids, but from tokenizers' ready-made ByteLevelBPETokenizer, which the task forbids
BY_BYTE_LEVEL_BPE = """
def build_pipeline(tokenizer):
    from tokenizers.implementations import ByteLevelBPETokenizer
    printable = bytes_to_unicode()
    text = lambda token: "".join(printable[b] for b in token)
    vocab = {text(t): i for i, t in tokenizer.vocab.items() if i not in tokenizer.special_ids.values()}
    vocab.update(tokenizer.special_ids)
    merges = [(text(a), text(b)) for a, b in tokenizer.merges]
    hf = ByteLevelBPETokenizer(vocab, merges, add_prefix_space=False)
    hf.add_special_tokens(list(tokenizer.special_tokens))
    return hf._tokenizer
"""

DELEGATED = {"09_production_build_pipeline": (BY_BYTE_LEVEL_BPE, BYTE_LEVEL_BPE)}


def _unguarded(source: str) -> object:
    namespace: dict[str, object] = {**SOLVED}
    exec(source, namespace)  # noqa: S102 - the test's own submission
    return namespace["build_pipeline"]


def test_the_ready_made_pipeline_gives_the_right_ids_but_the_check_refuses_it():
    """So that its 0 below is the trap's doing, not a wrong id; the check
    names it, as it names bpe_lab's own builder."""
    course = SOLVED["course"]
    pipeline = _unguarded(BY_BYTE_LEVEL_BPE)(course)
    for text in check.production.PIPELINE_TEXTS:
        assert pipeline.encode(text).ids == course.encode(text), text  # type: ignore[attr-defined]
    with pytest.raises(check.CheckFailed, match="ByteLevelBPETokenizer"):
        check.check_build_pipeline(_unguarded(BY_BYTE_LEVEL_BPE))
    own = (
        "def build_pipeline(tokenizer):\n"
        "    from bpe_lab.bytelevel.hf_pipeline import hf_tokenizer\n"
        "    return hf_tokenizer(tokenizer)"
    )
    with pytest.raises(check.CheckFailed, match="bpe_lab.bytelevel.hf_pipeline.hf_tokenizer"):
        check.check_build_pipeline(_unguarded(own))
    stand_in = (  # no pipeline at all: an object whose encode is the package's Tokenizer.encode
        "from types import SimpleNamespace\n"
        "def build_pipeline(tokenizer):\n"
        "    return SimpleNamespace(encode=lambda text: SimpleNamespace(ids=tokenizer.encode(text)))"
    )
    assert all(_unguarded(stand_in)(course).encode(t).ids == course.encode(t) for t in check.production.PIPELINE_TEXTS)
    with pytest.raises(check.CheckFailed, match="bpe_lab.bytelevel.tokenizer.Tokenizer.encode"):
        check.check_build_pipeline(_unguarded(stand_in))


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    return grade_solution_exercise_and(tmp_path_factory, "09_production", DELEGATED)


def test_the_solution_scores_full_marks_and_the_exercise_zero(reports):
    solution, exercise = reports["solution"], reports["exercise"]
    assert solution.total == 5 and solution.max_total == 7 and solution.pending == 2, solution.tasks
    assert solution.sandbox == "" or jail.bwrap() is None  # sandboxed: tokenizers came from kernel_needs
    auto, (written,) = solution.tasks[:2], solution.tasks[2:]
    assert all(t.passed == t.cases > 5 for t in auto), solution.tasks
    assert written.grade_id == "09_written_same_tokens_other_ids" and written.pending and written.max_points == 2
    assert "embedding" in written.answer
    assert exercise.total == 0, exercise.tasks


def test_a_delegating_submission_scores_zero_and_names_the_function(reports):
    tasks = {t.grade_id: t for t in reports["delegating"].tasks}
    for gid, (_, path) in DELEGATED.items():
        assert tasks[gid].points == 0, tasks[gid]
        assert path in tasks[gid].message, tasks[gid].message
    assert tasks["09_production_pair_processor"].points == 2, tasks["09_production_pair_processor"]


# ------------------------------------------------------------------ the visible checks, decided in the grader


def _answer(task: str) -> str:
    return next(c.source for c in SOLUTION.cells if c.metadata.get("nbgrader", {}).get("grade_id") == f"{task}_answer")


#: Wrong (a space put before the text) only for a vocabulary of more than 290 ids: the visible check's
#: (300 to 400 ids), never a hidden case's (at most 268)
_NO_PREFIX = "pre_tokenizers.ByteLevel(add_prefix_space=False)"
WRONG_PIPELINE = _answer("09_production_build_pipeline").replace(
    _NO_PREFIX, "pre_tokenizers.ByteLevel(add_prefix_space=len(tokenizer.vocab) > 290)"
)
#: Wrong (sep after a single sequence) only where the words hold "same": the visible check's fourth case
_SINGLE = 'single=f"{bos} $A",'
WRONG_PROCESSOR = _answer("09_production_pair_processor").replace(
    _SINGLE, 'single=f"{bos} $A" + (f" {sep}" if tokenizer.token_to_id("same") is not None else ""),'
)


@pytest.fixture(scope="module")
def gate(tmp_path_factory):
    answers = {"09_production_build_pipeline": WRONG_PIPELINE, "09_production_pair_processor": WRONG_PROCESSOR}
    return graded_with_no_op_checks(tmp_path_factory, "09_production", answers)


def test_answers_wrong_on_visible_cases_score_zero_though_the_kernel_made_the_checks_no_ops(gate):
    """Before issue 18's fix these checks ran for real in the kernel, where
    a no-op replaced them: full marks. Now the grader judges what
    ``check.pipeline_results`` and ``check.pair_results`` sent back. The
    answers pass every hidden case and fail the checks at home: the 0 is
    the visible cases' doing."""
    assert _NO_PREFIX in _answer("09_production_build_pipeline") and _SINGLE in _answer("09_production_pair_processor")
    namespace: dict[str, object] = {**SOLVED, "check": check}
    exec(WRONG_PIPELINE + "\n" + WRONG_PROCESSOR, namespace)  # noqa: S102 - the test's own submission
    for task in load_tasks(SOLUTION):
        for case in fixed_and_generated(task):
            assert eval(case.call, namespace) == case.expected, case.call  # noqa: S307 - our own calls
    with pytest.raises(check.CheckFailed, match="add_prefix_space"):
        check.check_build_pipeline(namespace["build_pipeline"])
    with pytest.raises(check.CheckFailed, match=r"^pair_processor\(tokenizer of \['<s>', '</s>'\].* on 'same same'"):
        check.check_pair_processor(namespace["pair_processor"])
    pipeline, processor = gate["09_production_build_pipeline"], gate["09_production_pair_processor"]
    assert pipeline.points == 0 and processor.points == 0, gate
    assert pipeline.message == (
        "the self-check check.check_build_pipeline failed on case 1: build_pipeline(Tokenizer(400 ids, 143 merges, "
        "special_tokens=['<|endoftext|>'])).encode('low lower lowest').ids returned a wrong value: more ids than "
        "bpe_lab from the first one on: is a space added before the text (add_prefix_space)? "
        "(run it in your notebook to see why)"
    ), pipeline.message  # the hidden cases all right: no summary of them follows
    assert processor.message == (
        "the self-check check.check_pair_processor failed on case 4: pair_processor(tokenizer of ['<s>', '</s>'], "
        "'<s>', '</s>') on 'same same', 'same' returned a wrong value: the single template is wrong: it is bos $A, "
        "without sep (run it in your notebook to see why)"
    ), processor.message
