"""Exercise 10, the capstone: the checks of ``bpe_lab.grading.check.capstone``,
their hints, its generated cases, the bytes-per-token table against
tiktoken, and grading it: the solution scores full marks (its written
answer pending), the exercise as released 0, and a submission that hands
each task to the package, or the tokenizer class to tiktoken, 0."""

import random
import re
import sys
from pathlib import Path

import nbformat
import pytest
import regex
from grading_support import (
    fixed_and_generated,
    grade_solution_exercise_and,
    graded_with_no_op_checks,
)
from tokenizer_support import tiktoken_twin

from bpe_lab.bytelevel.gpt2 import gpt2_tokenizer
from bpe_lab.bytelevel.tokenizer import Tokenizer
from bpe_lab.core.patterns import CL100K_PATTERN
from bpe_lab.core.pretokenize import GPT2_PATTERN
from bpe_lab.grading import check
from bpe_lab.grading.authoring.tasks import load_tasks
from bpe_lab.grading.cases.chapters import GENERATORS
from bpe_lab.grading.cases.generated import generated, usable
from bpe_lab.grading.check.answers import CHAPTERS, forbidden
from bpe_lab.grading.check.capstone import EOT, LANGUAGES, split_five_languages, trained
from bpe_lab.grading.check.guard import resolve
from bpe_lab.grading.check.hidden import write_plain
from bpe_lab.grading.run import jail
from bpe_lab.grading.run.probe import KERNEL
from bpe_lab.grading.run.visible import record, verdict

tiktoken = pytest.importorskip("tiktoken")

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = nbformat.read(ROOT / "solutions" / "10_capstone.ipynb", as_version=4)


def solved() -> dict[str, object]:
    """The solution's setup and answer cells run here: its functions and its class."""
    namespace: dict[str, object] = {"__name__": "capstone_solution"}
    for cell in SOLUTION.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and (meta.get("solution") or meta.get("locked") and not meta.get("grade")):
            exec(compile(cell.source, meta["grade_id"], "exec"), namespace)  # noqa: S102 - the solution's own cells
    return namespace


SOLVED = solved()
MyTokenizer = SOLVED["MyTokenizer"]


def test_the_tasks_and_their_points():
    tasks = load_tasks(SOLUTION)
    assert [(t.grade_id, t.points) for t in tasks] == [
        ("10_capstone_split_specials", 2),
        ("10_capstone_train", 4),
        ("10_capstone_my_tokenizer", 6),
    ]
    assert tasks[2].name == "MyTokenizer"
    assert {c.call.split("(")[0] for c in tasks[2].cases} == {"MyTokenizer", "check.reloaded"}  # encode, decode, saved
    for task in tasks:  # every task forbids every answer of the chapter
        assert set(task.forbid) == set(forbidden(*CHAPTERS["capstone"])), task.grade_id


def test_the_solution_passes_its_checks_and_the_grader_judges_every_case():
    """``record`` runs each self-check on the solution in this process (a
    failure raises). The grader judges every call itself, the class's too:
    one ``check.my_tokenizer_results`` call per tokenizer, GPT-2's named
    ``"gpt2"`` (its vocabulary is built in the kernel, never sent), so no
    check runs for real in a grading kernel (``visible``)."""
    visible = record(SOLUTION, load_tasks(SOLUTION))
    cases = {gid.removeprefix("10_capstone_"): len(v.sources()) for gid, v in visible.items()}
    assert cases == {"split_specials": 11, "train": 9, "my_tokenizer": 4}, cases
    assert not any(v.partial for v in visible.values())
    mine = visible["10_capstone_my_tokenizer"]
    args = [call.args for call in mine.calls]  # each call's arguments, as shown; sent as data (call.data)
    helper = "'my_tokenizer_results', MyTokenizer"
    assert mine.sources() == tuple(f"{KERNEL}.through({helper}, {c.data!r})" for c in mine.calls)
    assert args[0].startswith("('gpt2', ['Hello world<|endoftext|>")
    assert max(len(a) for a in args) < 20_000  # GPT-2's 50,257 tokens are not sent


def test_gpt2_model_is_gpt2_tokenizers_vocabulary_and_merges_without_the_class_answers():
    """What ``my_tokenizer_results`` builds for ``"gpt2"`` in a kernel whose
    class answers are trapped (``scan_merges`` among them): GPT-2's own."""
    from bpe_lab.grading.check.capstone import gpt2_model
    from bpe_lab.grading.check.guard import guard

    gpt2 = gpt2_tokenizer()
    gpt2_model.cache_clear()
    with guard(forbidden(*CHAPTERS["capstone"])) as reached:
        vocab, merges = gpt2_model()
    assert reached == []
    assert vocab == gpt2.vocab and merges == gpt2.merges and vocab[50256] == EOT.encode()


def _as_kernel(value) -> dict:
    out: list[str] = []
    write_plain(value, out, [0])
    return {"repr": "".join(out), "reached": []}


def test_the_grader_judges_what_the_kernel_sent_back_for_the_class():
    """The class check replayed on a kernel's values: the solution's pass,
    a text left out (a results helper changed in the kernel) or an error
    fails, named by the tokenizer, never the expected ids."""
    visible = record(SOLUTION, load_tasks(SOLUTION))["10_capstone_my_tokenizer"]
    returned = [_as_kernel(c.value) for c in visible.calls]
    assert verdict(visible, returned) == ""
    encoded, decoded, back = visible.calls[1].value
    case = "the self-check check.check_my_tokenizer failed on case 2: MyTokenizer(cl100k, 354 ids vocab, merges, "
    case += "['<|endoftext|>'], cl100k)"
    returned[1] = _as_kernel((encoded[:-1], decoded, back))
    assert verdict(visible, returned) == (
        f"{case} returned a wrong value: 11 texts, but not one result per case came back from my_tokenizer_results "
        "(was check changed?) (run it in your notebook to see why)"
    )
    returned[1] = {"error": "NotImplementedError", "reached": []}
    assert verdict(visible, returned).startswith(f"{case} raised NotImplementedError: MyTokenizer is not written yet")


def test_the_answers_are_forbidden_and_resolve():
    paths = forbidden(*CHAPTERS["capstone"])
    for path in ("bpe_lab.core.pretokenize.split_special", "bpe_lab.bytelevel.train.train_bytelevel"):
        assert path in paths
    assert (
        "bpe_lab.bytelevel.tokenizer.Tokenizer.encode" in paths
        and "bpe_lab.bytelevel.tokenizer.Tokenizer.save" in paths
    )
    for path in paths:
        resolve(path)


# ------------------------------------------------------------------ hints


def _split(longest=True, escape=True, empty=False):
    def split_specials(text, special_tokens):
        if not special_tokens:
            return [(text, False)] if text else []
        tokens = sorted(special_tokens, key=len, reverse=longest) if longest else list(special_tokens)
        found = regex.compile("|".join(regex.escape(t) if escape else t for t in tokens))
        parts, start = [], 0
        for match in found.finditer(text):
            if match.start() > start or empty:
                parts.append((text[start : match.start()], False))
            parts.append((match.group(), True))
            start = match.end()
        if start < len(text):
            parts.append((text[start:], False))
        return parts

    return split_specials


@pytest.mark.parametrize(
    "mistake, hint",
    [(_split(longest=False), "longest first"), (_split(escape=False), "regex.escape"), (_split(empty=True), "empty")],
)
def test_each_split_mistake_has_its_hint(mistake, hint):
    with pytest.raises(check.CheckFailed, match=hint):
        check.check_split_specials(mistake)


def _train(pattern=None, specials_in_vocab_last=False):
    right = SOLVED["train"]

    def train(text, vocab_size, special_tokens, pattern_given):
        vocab, merges = right(text, vocab_size, special_tokens, pattern or pattern_given)
        if specials_in_vocab_last:
            ordered = [t for i, t in sorted(vocab.items()) if t not in {s.encode() for s in special_tokens}]
            vocab = dict(enumerate(ordered + [s.encode() for s in special_tokens]))
        return vocab, merges

    return train


@pytest.mark.parametrize(
    "mistake, hint",
    [
        (_train(pattern=GPT2_PATTERN), "GPT-2's pattern"),
        (_train(specials_in_vocab_last=True), "the merges are right, the vocabulary is not"),
        (lambda text, size, specials, pattern: SOLVED["train"](text, size, [], pattern), "special tokens"),
    ],
)
def test_each_training_mistake_has_its_hint(mistake, hint):
    with pytest.raises(check.CheckFailed, match=hint):
        check.check_train_with_pattern(mistake)


class _GPT2Pattern(MyTokenizer):
    def __init__(self, vocab, merges, special_tokens, pattern):
        super().__init__(vocab, merges, special_tokens, GPT2_PATTERN)


class _NoSpecials(MyTokenizer):
    def __init__(self, vocab, merges, special_tokens, pattern):
        super().__init__(vocab, merges, [], pattern)


class _TokenByToken(MyTokenizer):
    def decode(self, ids):
        return "".join(self.vocab[i].decode("utf-8", errors="replace") for i in ids)


class _LastSaved(MyTokenizer):
    """A load that gives back whatever was saved last, never reading the file."""

    last = None

    def save(self, path):
        Path(path).write_text("saved", encoding="utf-8")
        type(self).last = self

    @classmethod
    def load(cls, path):
        return cls.last


class _PatternLost(MyTokenizer):
    @classmethod
    def load(cls, path):
        loaded = super().load(path)
        return cls(loaded.vocab, loaded.merges, loaded.special_tokens, GPT2_PATTERN)


@pytest.mark.parametrize(
    "mistake, hint",
    [
        (_NoSpecials, "cut the special tokens out first"),
        (_GPT2Pattern, "ids of GPT-2's pattern"),
        (_TokenByToken, "join the bytes of all the ids"),
    ],
)
def test_each_class_mistake_has_its_hint(mistake, hint):
    with pytest.raises(check.CheckFailed, match=hint):
        check.check_my_tokenizer(mistake)


@pytest.mark.parametrize("mistake", [_LastSaved, _PatternLost])
def test_a_load_that_does_not_read_what_was_saved_fails(mistake):
    with pytest.raises(check.CheckFailed, match="save must write everything load needs"):
        check.check_my_tokenizer(mistake)


# ------------------------------------------------------------------ generated cases


def test_every_task_gets_generated_cases_that_the_solution_answers():
    """The generators fit their tasks, differ per student, and the
    solution's code, run here on the generated calls, gives the grader's
    expected values (fixed cases too)."""
    tasks = load_tasks(SOLUTION)
    namespace = {**SOLVED, "check": check}
    for task in tasks:
        assert task.grade_id in GENERATORS and usable(task) == "", (task.grade_id, usable(task))
        cases = generated(task, "alice", nonce="1")
        assert len(cases) == 5 and cases != generated(task, "bob", nonce="1"), task.grade_id
        for case in (*task.cases, *cases):
            assert eval(case.call, namespace) == case.expected, case.call[:200]  # noqa: S307 - our own calls
    patterns = {args[3] for args in GENERATORS["10_capstone_train"].inputs(random.Random(5))}
    assert len(patterns) > 1  # not always cl100k: code that ignores its pattern fails


# ------------------------------------------------------------------ bytes per token


def _table(notebook: nbformat.NotebookNode) -> dict[str, tuple[int, float, float]]:
    """The committed output of the bytes-per-token cell: language -> (bytes, yours, GPT-2's)."""
    cell = next(c for c in notebook.cells if c.cell_type == "code" and "theirs = MyTokenizer(gpt2.vocab" in c.source)
    text = "".join(o.get("text", "") for o in cell.outputs)
    rows = re.findall(r"^(\w\w)\s+(\d+)\s+([\d.]+)\s+([\d.]+)$", text, flags=re.M)
    return {lang: (int(size), float(yours), float(theirs)) for lang, size, yours, theirs in rows}


def test_the_bytes_per_token_table_is_tiktokens():
    """The table the solution prints, recomputed with tiktoken as the oracle:
    GPT-2's ranks, and the tokenizer trained in the notebook (bpe_lab's
    trainer, cl100k's pattern), each an Encoding built offline. The learner's
    class gives the same ids as tiktoken, so the same figures."""
    training, held_out = split_five_languages()
    gpt2 = gpt2_tokenizer()
    theirs_oracle = tiktoken_twin(gpt2)
    vocab, merges = trained(training, 512, [EOT], CL100K_PATTERN)
    yours_oracle = tiktoken.Encoding(
        name="capstone_yours",
        pat_str=CL100K_PATTERN,
        mergeable_ranks={token: i for i, token in vocab.items() if token != EOT.encode()},
        special_tokens={EOT: 256},
    )
    mine = MyTokenizer(vocab, merges, [EOT], CL100K_PATTERN)
    theirs = MyTokenizer(gpt2.vocab, gpt2.merges, [EOT], GPT2_PATTERN)
    expected = {}
    for lang in LANGUAGES:
        text = held_out[lang]
        size = len(text.encode("utf-8"))
        assert mine.encode(text) == yours_oracle.encode(text), lang
        assert theirs.encode(text) == theirs_oracle.encode(text), lang
        yours, gpt2s = size / len(yours_oracle.encode(text)), size / len(theirs_oracle.encode(text))
        expected[lang] = (size, round(yours, 2), round(gpt2s, 2))
    assert _table(SOLUTION) == expected
    assert expected["en"][2] > 1.5 * max(
        expected[lang][2] for lang in ("zh", "de", "fr", "es")
    )  # what the answer explains


# ------------------------------------------------------------------ grading

#: a tokenizer class that is tiktoken's: right (checked here), but a grading kernel has no tiktoken
#: A class that hands its work to tiktoken where it can be imported, and to
#: the package's own rank replay where not (in a grading kernel): both are
#: right answers outside a grading kernel, and both are refused in one
TIKTOKEN_CLASS = """import pickle

import regex

from bpe_lab.bytelevel.encoders import scan_replay

try:
    import tiktoken
except ImportError:
    tiktoken = None


class MyTokenizer:
    def __init__(self, vocab, merges, special_tokens, pattern):
        self.specials = {s: next(i for i, t in vocab.items() if t == s.encode()) for s in special_tokens}
        ranks = {t: i for i, t in vocab.items() if i not in self.specials.values()}
        self.vocab, self.pattern, self.args = vocab, pattern, (vocab, merges, special_tokens, pattern)
        if tiktoken is not None:
            self.encoding = tiktoken.Encoding(
                "mine", pat_str=pattern, mergeable_ranks=ranks, special_tokens=self.specials
            )
        self.byte_ids = [ranks[bytes([b])] for b in range(256)]
        self.pair_ranks = {(ranks[a], ranks[b]): r for r, (a, b) in enumerate(merges)}
        self.merged = [ranks[a + b] for a, b in merges]

    def encode(self, text):
        if tiktoken is not None:
            return self.encoding.encode(text, allowed_special="all")
        ids, cut = [], "|".join(regex.escape(s) for s in sorted(self.specials, key=len, reverse=True))
        for part in regex.split(f"({cut})", text) if cut else [text]:
            if part in self.specials:
                ids.append(self.specials[part])
                continue
            for piece in regex.findall(self.pattern, part):
                ids += scan_replay([self.byte_ids[b] for b in piece.encode()], self.pair_ranks, self.merged)
        return ids

    def decode(self, ids):
        return b"".join(self.vocab[i] for i in ids).decode("utf-8", errors="replace")

    def save(self, path):
        with open(path, "wb") as f:
            pickle.dump(self.args, f)

    @classmethod
    def load(cls, path):
        with open(path, "rb") as f:
            return cls(*pickle.load(f))
"""

DELEGATED = {
    "10_capstone_split_specials": (
        "import bpe_lab\n"
        "def split_specials(text, special_tokens):\n"
        "    return bpe_lab.split_special(text, special_tokens)",
        "bpe_lab.core.pretokenize.split_special",
    ),
    "10_capstone_train": (
        "import bpe_lab\n"
        "def train(text, vocab_size, special_tokens, pattern):\n"
        "    path = check.text_file(text)\n"
        "    return bpe_lab.train_bytelevel(path, vocab_size, special_tokens, pattern=pattern)",
        "bpe_lab.bytelevel.train.train_bytelevel",
    ),
    "10_capstone_my_tokenizer": (TIKTOKEN_CLASS, "bpe_lab.bytelevel.encoders.scan_replay"),
}


@pytest.mark.parametrize("through", ["tiktoken", "scan_replay"])
def test_the_delegating_class_is_a_right_answer_outside_a_grading_kernel(monkeypatch, through):
    """So that its 0 below is the kernel's doing: here it gives bpe_lab's
    ids with GPT-2's merges and with the notebook's, and survives a save,
    through tiktoken and, where tiktoken cannot be imported, through the
    package's rank replay."""
    if through == "scan_replay":
        monkeypatch.setitem(sys.modules, "tiktoken", None)  # import tiktoken raises ImportError
    namespace: dict[str, object] = {}
    exec(TIKTOKEN_CLASS, namespace)  # noqa: S102 - the test's own code
    assert (namespace["tiktoken"] is None) == (through == "scan_replay")
    training, held_out = split_five_languages()
    gpt2 = gpt2_tokenizer()
    vocab, merges = trained(training, 512, [EOT], CL100K_PATTERN)
    for reference, pattern in (
        (gpt2, GPT2_PATTERN),
        (Tokenizer(vocab, merges, [EOT], pattern="cl100k"), CL100K_PATTERN),
    ):
        mine = namespace["MyTokenizer"](reference.vocab, reference.merges, [EOT], pattern)
        for text in [*held_out.values(), "I'LL pay 1234567<|endoftext|>"]:
            assert mine.encode(text) == reference.encode(text)
            assert check.reloaded(mine, text) == reference.encode(text)


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    return grade_solution_exercise_and(tmp_path_factory, "10_capstone", DELEGATED)


def test_the_solution_scores_full_marks_and_the_exercise_zero(reports):
    solution, exercise = reports["solution"], reports["exercise"]
    assert solution.total == 12 and solution.pending == 2 and solution.max_total == 14, solution.tasks
    graded = [t for t in solution.tasks if t.cases]
    assert len(graded) == 3 and all(t.passed == t.cases > 5 for t in graded), solution.tasks
    assert exercise.total == 0, exercise.tasks


def test_a_delegating_submission_scores_zero_and_names_what_it_called(reports):
    tasks = {t.grade_id: t for t in reports["delegating"].tasks}
    for gid, (_, path) in DELEGATED.items():
        if gid == "10_capstone_my_tokenizer" and reports["delegating"].sandbox:
            continue  # unconfined, a kernel may import tiktoken, which the machine has
        assert tasks[gid].points == 0, tasks[gid]
        assert path in tasks[gid].message, tasks[gid].message
    assert reports["delegating"].sandbox == "" or jail.bwrap() is None


# ------------------------------------------------------------------ the visible check, decided in the grader

#: Right on every hidden case (their vocabularies have a few hundred ids at most), wrong with GPT-2's:
#: the visible check's first case
_RIGHT = "        return ids\n\n    def _merge"
SOLVED_CLASS = next(
    c.source for c in SOLUTION.cells if c.metadata.get("nbgrader", {}).get("solution") and _RIGHT in c.source
)
WRONG_ON_GPT2 = SOLVED_CLASS.replace(_RIGHT, _RIGHT.replace("ids\n", "ids if len(self.vocab) < 5000 else ids[::-1]\n"))


def _wrong_on_gpt2() -> type:
    namespace = {**SOLVED}
    exec(WRONG_ON_GPT2, namespace)  # noqa: S102 - the test's own submission
    return namespace["MyTokenizer"]


@pytest.fixture(scope="module")
def gate(tmp_path_factory):
    return graded_with_no_op_checks(tmp_path_factory, "10_capstone", {"10_capstone_my_tokenizer": WRONG_ON_GPT2})


def test_a_class_wrong_on_the_visible_case_scores_zero_though_the_kernel_made_the_check_a_no_op(gate):
    """Before issue 18's fix the class check ran for real in the kernel,
    where a no-op replaced it: full marks. Now the grader judges what
    ``check.my_tokenizer_results`` sent back. The class passes every
    hidden case and fails the check at home: the 0 is the visible case's
    doing."""
    assert SOLVED_CLASS.count(_RIGHT) == 1
    task = next(t for t in load_tasks(SOLUTION) if t.grade_id == "10_capstone_my_tokenizer")
    namespace = {**SOLVED, "check": check, "MyTokenizer": _wrong_on_gpt2()}
    for case in fixed_and_generated(task):
        assert eval(case.call, namespace) == case.expected, case.call[:200]  # noqa: S307 - our own calls
    with pytest.raises(check.CheckFailed, match=r"^MyTokenizer\(GPT-2 vocab, .*\.encode\('Hello world"):
        check.check_my_tokenizer(_wrong_on_gpt2())
    result = gate["10_capstone_my_tokenizer"]
    assert result.points == 0, result
    assert result.message == (
        "the self-check check.check_my_tokenizer failed on case 1: MyTokenizer(GPT-2 vocab, merges, "
        "['<|endoftext|>'], gpt2).encode('Hello world<|endoftext|>The start') returned a wrong value: cut with "
        "the pattern, then inside each piece join the pair of lowest rank first, again and again "
        "(run it in your notebook to see why)"
    ), result.message  # the hidden cases all right: no summary of them follows
    assert "15496" not in result.message  # the input, never the expected ids
    assert gate["10_capstone_split_specials"].points == 2 and gate["10_capstone_train"].points == 4
