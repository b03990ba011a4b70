"""The ``bpe_lab`` a grading kernel sees is an allow-list (``kernel_package``).

Issue 18's finding 4: functions no task forbids computed the answers all
the same. Each route it names must have no body in the package view of
every task it answers (read from the view's closure, no kernel), the view
must still import and run what the notebook's setup uses, its ``check``
must decide nothing, and a covering set of real kernel runs shows a
delegating submission scoring 0 with the route named.
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import nbformat
import pytest
from grading_support import NO_OP_CHECKS, SOLUTIONS, SOLVED, exercise_with, grade_notebooks

from bpe_lab import count_pairs, merge_symbols
from bpe_lab.grading.authoring.tasks import load_tasks
from bpe_lab.grading.check import traced_corpus
from bpe_lab.grading.check.hidden import write_plain
from bpe_lab.grading.check.instruments import TracedWords
from bpe_lab.grading.run.kernel_package import notebook_roots, view
from bpe_lab.grading.run.probe import KERNEL
from bpe_lab.grading.run.reach import reached
from bpe_lab.grading.run.visible import encoded, literal, record, verdict

NOTEBOOKS = {p.stem: nbformat.read(p, as_version=4) for p in sorted(SOLUTIONS.glob("[0-9][0-9]_*.ipynb"))}

# (module, top-level name) of each route of finding 4 -> the tasks (grade_id) whose answer it computes
ROUTES = {
    ("bpe_lab.core.encode", "dropout_symbols"): [
        "02_training_merge_pair",
        "03_encoding_encode_word",
        "05_bytelevel_encode",
    ],
    ("bpe_lab.core.train_fast", "_Trainer"): ["02_training_train", "02_training_first_mistake"],
    ("bpe_lab.bytelevel.merge_learner", "_Learner"): ["05_bytelevel_train"],
    ("bpe_lab.grading.check.complexity", "index_words"): ["02_training_count_pairs"],
    ("bpe_lab.variants.unigram", "segmentation_probs"): ["06_variants_viterbi"],
}
CASES = [(route, gid) for route, gids in ROUTES.items() for gid in gids]


def _task(grade_id: str):
    notebook = NOTEBOOKS[next(n for n in NOTEBOOKS if grade_id.startswith(n))]
    return notebook, next(t for t in load_tasks(notebook) if t.grade_id == grade_id)


@pytest.mark.parametrize(("route", "grade_id"), CASES, ids=[f"{r[1]}-{g}" for r, g in CASES])
def test_every_named_route_has_no_body_where_its_task_is_checked_again(route, grade_id):
    notebook, task = _task(grade_id)
    assert route not in reached(notebook_roots(notebook), task.forbid)


@pytest.mark.parametrize("grade_id", ["02_training_train", "03_encoding_encode_word", "06_variants_viterbi"])
def test_where_the_setup_needs_nothing_of_it_the_first_run_has_no_route_either(grade_id):
    notebook, _ = _task(grade_id)
    kept = reached(notebook_roots(notebook))
    assert not kept & {route for route, gids in ROUTES.items() if grade_id in gids}


def test_the_roots_are_what_the_notebooks_name_and_allow():
    roots = {name: notebook_roots(nb) for name, nb in NOTEBOOKS.items()}
    assert {("bpe_lab", "count_pairs"), ("bpe_lab", "merge_symbols")} <= roots["04_complexity"]
    assert ("bpe_lab.grading.check.instruments", "measure_work") in roots["04_complexity"]
    assert {("bpe_lab.core.pretokenize", "gpt2_pretokenize"), ("bpe_lab", "train_bytelevel")} <= roots["05_bytelevel"]
    assert ("bpe_lab.bytelevel.train", "count_pretokens") in roots["05_bytelevel"]  # an ``allow`` of its metadata
    wild = {("bpe_lab", "Tokenizer"), ("bpe_lab", "train_bytelevel"), ("bpe_lab", "gpt2_tokenizer")}
    assert wild | {("bpe_lab.core.corpora", "python_docs")} <= roots["07_wild"]
    assert not {r for r in roots["02_training"] if r[0] in ("bpe_lab", "bpe_lab.core.train")}
    assert ("bpe_lab.grading.check", "work_growth") in roots["04_complexity"]  # ``check`` is the setup's


def test_a_task_whose_setup_uses_its_answer_loses_it_in_its_own_view_only():
    notebook, train = _task("05_bytelevel_train")
    _, encode = _task("05_bytelevel_encode")
    roots = notebook_roots(notebook)
    answer = ("bpe_lab.bytelevel.train", "train_bytelevel")
    assert answer in reached(roots) and answer in reached(roots, encode.forbid)
    assert answer not in reached(roots, train.forbid)
    assert ("bpe_lab.bytelevel.byte_map", "bytes_to_unicode") not in reached(roots)  # nothing there needs it


def _in_view(tmp_path: Path, name: str, code: str, forbid: tuple[str, ...] = (), real: tuple[str, ...] = ()) -> str:
    """Run ``code`` in a fresh interpreter whose only ``bpe_lab`` is the view."""
    view(notebook_roots(NOTEBOOKS[name]), tmp_path, forbid, real_checks=real)
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_view_runs_the_setup_and_names_what_it_does_not_hold(tmp_path):
    out = _in_view(
        tmp_path,
        "03_encoding",
        "import random, bpe_lab\n"
        f"assert bpe_lab.__file__.startswith({str(tmp_path)!r})\n"
        "print(bpe_lab.train_bpe({'low': 5, 'lower': 2}, 2))\n"
        "from bpe_lab.core.encode import dropout_symbols\n"
        "try:\n    dropout_symbols(('a', 'b'), {('a', 'b'): 0}, 0.0, random.Random(0))\n"
        "except BaseException as err:\n    print(type(err).__name__, err.path)\n"
        "for module in ('bpe_lab.grading.commands.grader', 'bpe_lab.grading.cases.generators', 'bpe_lab.cli'):\n"
        "    try:\n        __import__(module)\n    except ImportError as err:\n        print(err)\n",
    )
    assert out.splitlines() == [
        "[('l', 'o'), ('lo', 'w')]",
        "Delegated bpe_lab.core.encode.dropout_symbols",
        "bpe_lab.grading.commands is not available in a grading kernel",  # the stage's package, first
        "bpe_lab.grading.cases is not available in a grading kernel",
        "bpe_lab.cli is not available in a grading kernel",
    ]


def test_the_kernels_check_decides_nothing_and_keeps_the_helpers(tmp_path):
    out = _in_view(
        tmp_path,
        "06_variants",
        "from bpe_lab.grading import check\n"
        "print(check.check_viterbi(lambda *a: 1 / 0), check.check_train(None))\n"
        "hidden = check.HiddenCases(points=3)\n"
        "hidden.expect(lambda: 1, 1)\n"
        "print(hidden.score(), issubclass(check.CheckFailed, AssertionError))\n"
        "print(check.traced_corpus(2).plain())\n"
        "try:\n    check.find_first_mistake({'a': 1}, [])\n"
        "except BaseException as err:\n    print(type(err).__name__, err.path)\n",
    )
    assert out.splitlines() == [
        "None None",
        "0.0 True",
        str(traced_corpus(2).plain()),  # the helper is the package's own
        "Delegated bpe_lab.grading.check.training.find_first_mistake",
    ]


def test_a_check_whose_cases_cannot_be_sent_runs_for_real_in_the_first_run(tmp_path):
    out = _in_view(
        tmp_path,
        "04_complexity",
        "from bpe_lab.grading import check\n"
        "print(check.check_pair_deltas(lambda *a: None))\n"
        "try:\n    check.check_merge_indexed(lambda *a: None)\n"
        "except check.CheckFailed as err:\n    print(type(err).__name__)\n",
        real=("check_merge_indexed",),
    )
    assert out.split() == ["None", "CheckFailed"]


def test_the_results_helpers_run_in_the_view_with_the_tasks_answers_trapped(tmp_path):
    """What the grader sends for 10's class check: the helper builds GPT-2's
    vocabulary in the kernel (50,257 ids, 50,000 merges) without reaching
    an answer of the class, and sends back what the class gave."""
    _, task = _task("10_capstone_my_tokenizer")
    out = _in_view(
        tmp_path,
        "10_capstone",
        "from bpe_lab.grading import check\n"
        "from bpe_lab.grading.check.guard import guard\n"
        "class C:\n"
        "    def __init__(self, vocab, merges, specials, pattern):\n"
        "        self.sizes = [len(vocab), len(merges), len(specials)]\n"
        "    def encode(self, text):\n        return self.sizes\n"
        "    def decode(self, ids):\n        return str(ids)\n"
        "    def save(self, path):\n        open(path, 'w').write('x')\n"
        "    @classmethod\n    def load(cls, path):\n        return cls({}, [], [], '')\n"
        f"with guard({list(task.forbid)!r}) as reached:\n"
        "    print(check.my_tokenizer_results(C, 'gpt2', ['a'], [[1]], 'b'))\n"
        "print(reached)\n",
    )
    assert out.splitlines() == ["([[50257, 50000, 1]], ['[1]'], [0, 0, 0])", "[]"]


def test_a_stopped_answer_says_it_is_the_tasks_own(tmp_path):
    _, train = _task("05_bytelevel_train")
    out = _in_view(
        tmp_path,
        "05_bytelevel",
        "import bpe_lab\n"
        "try:\n    bpe_lab.train_bytelevel('x', 300, [])\n"
        "except BaseException as err:\n    print(err.own, err)\n",
        train.forbid,
    )
    assert (
        out.strip()
        == "True bpe_lab.bytelevel.train.train_bytelevel is not available here: this task asks you to write it"
    )


# ---------------------------------------------------------------- real kernels

_TRAIN_BY_LEARNER = """
from bpe_lab.bytelevel.merge_learner import _Learner
def train_bytelevel(path, vocab_size, special_tokens):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    counts = {}
    for part, special in split_special(text, special_tokens):
        if not special:
            for token in gpt2_pretokenize(part):
                b = token.encode("utf-8")
                counts[b] = counts.get(b, 0) + 1
    vocab = {b: bytes([b]) for b in range(256)}
    for token in special_tokens:
        vocab[len(vocab)] = token.encode("utf-8")
    n = vocab_size - len(vocab)
    learner = _Learner(counts, n)
    merges = []
    for _ in range(n):
        pair = learner.pop_best()
        if pair is None:
            break
        merges.append(learner.pair_of(pair))
        learner.merge(pair)
    for a, b in merges:
        vocab[len(vocab)] = a + b
    return vocab, merges
"""

_TRAIN_BY_TRAINER = """
from bpe_lab.core.train_fast import _Trainer
def train(word_freq, num_merges):
    trainer = _Trainer({tuple(w) + ("</w>",): c for w, c in word_freq.items()}, num_merges, "first")
    merges = []
    for _ in range(num_merges):
        pair = trainer.pop_best()
        if pair is None:
            break
        merges.append(trainer.pair_of(pair))
        trainer.merge(pair)
    return merges
"""

DELEGATING = {
    "02_training": {
        "02_training_count_pairs": (
            "def count_pairs(corpus):\n"
            "    from bpe_lab.grading.check.complexity import index_words\n"
            "    return index_words(list(corpus.items()))[0]\n"
        ),
        "02_training_merge_pair": (
            "import random\nfrom bpe_lab.core.encode import dropout_symbols\n"
            "def merge_pair(symbols, pair):\n"
            "    return tuple(dropout_symbols(symbols, {pair: 0}, 0.0, random.Random(0)))\n"
        ),
        "02_training_train": _TRAIN_BY_TRAINER,
    },
    "05_bytelevel": {"05_bytelevel_train": _TRAIN_BY_LEARNER},
    "06_variants": {
        "06_variants_viterbi": (
            "def viterbi(word, logprobs):\n"
            "    from bpe_lab.variants.unigram import segmentation_probs\n"
            "    return segmentation_probs(word, logprobs, top=1)[0][0]\n"
        )
    },
}
EXPECTED = {
    "02_training_count_pairs": "bpe_lab.grading.check.complexity.index_words",
    "02_training_merge_pair": "bpe_lab.core.encode.dropout_symbols",
    "02_training_train": "bpe_lab.core.train_fast._Trainer",
    "02_training_first_mistake": "bpe_lab.grading.check.complexity.index_words",  # through the learner's count_pairs
    "05_bytelevel_train": "bpe_lab.bytelevel.merge_learner._Learner",
    "06_variants_viterbi": "bpe_lab.variants.unigram.segmentation_probs",
}


# Finding 11: the self-checks made no-ops in the kernel, and an encode_word
# wrong on the visible check's first case ("lowest") but right on the hidden ones
_WRONG_ON_LOWEST = SOLVED["03_encoding_encode_word_answer"].replace(
    "    return symbols", "    return ['lowest</w>'] if word == 'lowest' else symbols"
)


def _gate_breaker() -> nbformat.NotebookNode:
    nb = exercise_with("03_encoding", {"03_encoding_encode_word": _WRONG_ON_LOWEST})
    nb.cells.insert(1, nbformat.v4.new_code_cell(NO_OP_CHECKS))
    return nb


@pytest.fixture(scope="module")
def delegated(tmp_path_factory):
    folder = tmp_path_factory.mktemp("delegating")
    notebooks = {name: exercise_with(name, answers) for name, answers in DELEGATING.items()}
    notebooks["03_encoding"] = _gate_breaker()
    reports = grade_notebooks(folder, notebooks)
    return {t.grade_id: t for report in reports.values() for t in report.tasks}


@pytest.mark.parametrize("grade_id", sorted(EXPECTED))
def test_a_submission_through_a_route_scores_zero_and_names_it(delegated, grade_id):
    result = delegated[grade_id]
    assert result.points == 0, result
    assert EXPECTED[grade_id] in result.message and "does not have" in result.message, result.message


def test_no_op_self_checks_do_not_open_the_gate_the_grader_runs_their_cases(delegated):
    result = delegated["03_encoding_encode_word"]
    assert result.points == 0, result
    textbook = "[('e', 's'), ('es', 't'), ('est', '</w>'), ('l', 'o'), ('lo', 'w'), ('n', 'e'), ('ne', 'w'), "
    textbook += "('new', 'est</w>'), ('low', '</w>'), ('w', 'i')]"
    assert result.message == (
        f"the self-check check.check_encode_word failed on case 1: encode_word('lowest', {textbook}) "
        "returned a wrong value: join the learned pair with the lowest rank first, then look again "
        "(run it in your notebook to see why)"
    )
    assert "'low', 'est</w>'" not in result.message  # the input, never the expected value
    assert delegated["03_encoding_decode"].points == 2


def test_the_tasks_it_did_not_delegate_keep_their_points(delegated):
    assert delegated["05_bytelevel_encode"].points == 3
    assert delegated["06_variants_sp_decode"].points == 2


# ---------------------------------------------------------- the grader's replay


@pytest.fixture(scope="module")
def recorded():
    notebook = NOTEBOOKS["03_encoding"]
    return record(notebook, load_tasks(notebook))


def _as_kernel(value) -> dict:
    out: list[str] = []
    write_plain(value, out, [0])
    return {"repr": "".join(out), "reached": []}


def test_the_solution_records_every_case_and_passes_its_replay(recorded):
    encode = recorded["03_encoding_encode_word"]
    assert encode.function == "encode_word" and encode.line == "check.check_encode_word(encode_word)"
    assert len(encode.sources()) == len(encode.calls) == 21  # 6 fixed words and 15 random ones
    first = "(('value', 'lowest'), ('value', [('e', 's'), "
    assert encode.sources()[0].startswith(f'encode_word(*{KERNEL}.arguments("{first}')
    assert verdict(encode, [_as_kernel(c.value) for c in encode.calls]) == ""


@pytest.mark.parametrize(
    ("result", "kind"),
    [
        ({"error": "ValueError: no merges", "reached": []}, "raised ValueError"),  # not the learner's text
        (
            {"unplain": "builtins.generator", "reached": []},
            "returned a builtins.generator, not plain data: return a list of symbols",
        ),
        (_as_kernel(("low", "est</w>")), "returned a tuple: wrong type: return a list of symbols"),
        (
            _as_kernel(["wider</w>"]),
            "returned a wrong value: join the learned pair with the lowest rank first, then look again",
        ),
    ],
)
def test_a_wrong_case_is_named_by_its_input_and_its_kind_of_mistake(recorded, result, kind):
    encode = recorded["03_encoding_encode_word"]
    results = [_as_kernel(c.value) for c in encode.calls]
    results[2] = result
    message = verdict(encode, results)
    assert message.startswith("the self-check check.check_encode_word failed on case 3: encode_word('wider', [")
    assert message.endswith(f"{kind} (run it in your notebook to see why)")


def test_not_implemented_and_a_report_of_the_wrong_length(recorded):
    decode = recorded["03_encoding_decode"]
    results = [{"error": "NotImplementedError", "reached": []}] * len(decode.calls)
    assert "failed on case 1: decode([" in verdict(decode, results)
    assert "raised NotImplementedError" in verdict(decode, results)
    assert verdict(decode, results[1:]).startswith("the self-check's cases did not report back")


def _kernel_results(visible, fn):
    """What a kernel would send back for ``visible``'s calls made on ``fn`` (here, in this process)."""
    from bpe_lab.grading import check

    namespace = {**visible.namespace, "check": check, visible.function: fn}
    results = []
    for source in visible.sources():
        out: list[str] = []
        write_plain(eval(source, namespace), out, [0])  # noqa: S307 - the grader's own call text
        results.append({"repr": "".join(out)})
    return results


def test_what_the_traced_words_recorded_in_the_kernel_is_judged_in_the_grader():
    notebook = NOTEBOOKS["04_complexity"]
    checks = record(notebook, load_tasks(notebook))
    merge, train = checks["04_complexity_merge_indexed"], checks["04_complexity_train_indexed"]
    solved = merge.namespace["merge_indexed"]

    def scanning(words, counts, index, pair):  # the right values, but it reads every word
        for _ in words:
            pass
        return solved(words, counts, index, pair)

    def recounting(words, num_merges):  # the right merges, recounting every word every round
        return _recount(dict(words), num_merges)

    assert verdict(merge, _kernel_results(merge, solved)) == ""
    assert verdict(train, _kernel_results(train, train.namespace["train_indexed"])) == ""
    why = verdict(merge, _kernel_results(merge, scanning))
    assert "failed on case 1: merge_indexed(check.TracedWords(" in why and "which does not contain" in why
    assert "pair count updates per word" in verdict(train, _kernel_results(train, recounting))


def _recount(corpus, num_merges):
    merges = []
    for _ in range(num_merges):
        counts = count_pairs(corpus)
        if not counts:
            break
        merges.append(max(counts, key=lambda p: (counts[p], p)))
        corpus = {merge_symbols(s, merges[-1]): f for s, f in corpus.items()}
    return merges


def test_a_check_is_judged_up_to_its_first_input_that_is_not_plain_data():
    notebook = NOTEBOOKS["04_complexity"]
    checks = record(notebook, load_tasks(notebook))
    merge, train = checks["04_complexity_merge_indexed"], checks["04_complexity_train_indexed"]
    # instrumented words are built in the kernel by the call's text, which sends back what they recorded
    assert len(merge.sources()) == len(merge.calls) and not merge.partial
    after = f"(lambda a: (merge_indexed(*a), {KERNEL}.states(a)))({KERNEL}.arguments("
    assert all(s.startswith(after) for s in merge.sources())
    assert train.sources()[-1].endswith(".arguments(\"(('traced_corpus', 400), ('value', 40))\"))")
    assert literal((TracedWords([(("a",), 1)]),)) == "(check.TracedWords([(('a',), 1)]),)"
    assert encoded((TracedWords([(("a",), 1)]),)) == "(('traced_words', [(('a',), 1)]),)"
    production = NOTEBOOKS["09_production"]  # a pipeline is not plain data: its check's results helper sends ids
    pipeline = record(production, load_tasks(production))["09_production_build_pipeline"]
    assert len(pipeline.sources()) == 3 and not pipeline.partial
    args = [call.args for call in pipeline.calls]
    assert all(a.startswith("(__import__('bpe_lab').Tokenizer({0: b'\\x00'") for a in args)
    data = [call.data for call in pipeline.calls]
    assert all(d is not None and d.startswith("(('tokenizer', {0: b'\\x00'") for d in data)
    helper = "'pipeline_results', build_pipeline"
    assert pipeline.sources() == tuple(f"{KERNEL}.through({helper}, {d!r})" for d in data)
    assert literal(([1], (2,), {3: b"x"})) == "([1], (2,), {3: b'x'})" and literal((object(),)) is None
    counters = literal(([Counter({"a": 2}), Counter()],))
    assert counters is not None and eval(counters) == ([Counter({"a": 2}), Counter()],)
    assert [type(c) for c in eval(counters)[0]] == [Counter, Counter]
