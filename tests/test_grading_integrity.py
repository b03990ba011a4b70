"""No task can be passed by calling the package's own answer.

For every graded task of every solution notebook a delegating answer is
generated (its solution region replaced by a call to the matching package
function). In-process, every forbidden function of every task is read in
the package view of the run that decides its task (``kernel_package``; the
second, or the only one where the notebook's setup reaches none of the
task's answers): it has no body there. In real kernels, a covering set: every route a learner
might take (a direct import, an alias, ``importlib``, ``getattr``,
``sys.modules``, a reference captured in an earlier cell) reaches, in one
notebook, a different task of its chapter, the routes taken in turn; one
notebook per chapter with a delegation, two for chapters 02 and 05, so
that each of those meets all six: 8 notebooks (the kernel's package view has
no body to reach by any route; a notebook per route and chapter took 19,
three of them for chapters with nothing to delegate).
Each task scores 0 with the function named (or, where the kernel's package
has no such class at all, its constructor); the solutions keep full marks.
Submissions that undo the guard in their own kernel (restore ``__code__``,
copy the function, re-execute the module's source, reload it) still score
0: the run that decides the task has no answer to find. One grading run (two kernels at a
time) serves all; the solutions' is the test run's shared one
(``grading_support.shared``).
"""

from __future__ import annotations

import ast
import importlib.machinery
import importlib.util
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from grading_support import shared

import bpe_lab
from bpe_lab.grading import check
from bpe_lab.grading.authoring.release import BEGIN_SOLUTION, release_notebook
from bpe_lab.grading.check import CheckFailed
from bpe_lab.grading.check.answers import ANSWERS, CHAPTERS
from bpe_lab.grading.check.guard import Delegated, canonical, guard
from bpe_lab.grading.commands.grader import Limits, deciding_views, grade, load_tasks
from bpe_lab.grading.run.kernel_package import view

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
NAMES = sorted(p.stem for p in SOLUTIONS.glob("[0-9][0-9]_*.ipynb"))
LIMITS = Limits(cell_timeout=30, notebook_timeout=180, memory_mb=1536)

# answer cell -> (module, attribute, body with {f} for the reference to module.attribute)
DELEGATIONS = {
    "01_compression_most_frequent_pair_answer": (
        "bpe_lab.variants.compression",
        "compress",
        "r = {f}(data, max_rounds=1).rounds[0]\n    return (r.pair, r.count)",
    ),
    "01_compression_compress_answer": (
        "bpe_lab.variants.compression",
        "compress",
        "c = {f}(data)\n    return c.data, dict(c.table)",
    ),
    "01_compression_decompress_answer": (
        "bpe_lab.variants.compression",
        "decompress",
        "from bpe_lab.variants.compression import Compressed\n    return {f}(Compressed(packed, table, (), 0))",
    ),
    "02_training_count_pairs_answer": ("bpe_lab.core.train", "count_pairs", "return {f}(corpus)"),
    "02_training_merge_pair_answer": ("bpe_lab.core.words", "merge_symbols", "return {f}(symbols, pair)"),
    "02_training_train_answer": ("bpe_lab.core.train", "train_bpe", "return {f}(word_freq, num_merges)"),
    "02_training_first_mistake_answer": (
        "bpe_lab.grading.check.training",
        "find_first_mistake",
        "m = {f}(word_freq, trace)\n    return None if m is None else (m.round, m.expected_pair, m.expected_count)",
    ),
    "03_encoding_encode_word_answer": ("bpe_lab.core.encode", "encode_word", "return {f}(word, merges)"),
    "03_encoding_decode_answer": ("bpe_lab.core.encode", "decode_words", "return {f}(symbols)"),
    "04_complexity_pair_deltas_answer": (
        "bpe_lab.grading.check.complexity",
        "recount_deltas",
        "return {f}(symbols, pair)",
    ),
    "05_bytelevel_bytes_to_unicode_answer": ("bpe_lab.bytelevel.byte_map", "bytes_to_unicode", "return {f}()"),
    "05_bytelevel_encode_answer": (
        "bpe_lab.bytelevel.tokenizer",
        "Tokenizer",
        "return {f}(vocab, merges, special_tokens).encode(text)",
    ),
    "05_bytelevel_decode_answer": (
        "bpe_lab.bytelevel.tokenizer",
        "Tokenizer",
        "return {f}(vocab, merges, special_tokens).decode(ids)",
    ),
    "06_variants_longest_match_answer": ("bpe_lab.core.encode", "longest_match", "return {f}(word, merges)"),
    "06_variants_viterbi_answer": ("bpe_lab.variants.unigram", "viterbi", "return {f}(word, logprobs)[0]"),
    "06_variants_sp_decode_answer": ("bpe_lab.variants.sentencepiece", "sp_decode", "return {f}(symbols)"),
}
#: The one task without a package function to call: merge_and_update's only
#: shortcut is a full recount with count_pairs, which its notebook allows
#: (telling an incremental update from a recount needs exercise 04's
#: instrumentation, not this).
NO_PACKAGE_ANSWER = {"04_complexity_merge_and_update_answer"}

#: the path each delegation's message names (methods are patched on their class)
NAMED = {
    gid: f"{module}.{attr}" + {"encode_answer": ".encode", "decode_answer": ".decode"}.get(gid[13:], "")
    if attr == "Tokenizer"
    else canonical(f"{module}.{attr}")
    for gid, (module, attr, _) in DELEGATIONS.items()
}

ROUTES = ("import", "alias", "importlib", "getattr", "sys_modules", "captured")
#: the chapters in which every route is taken (a plain function, a cached one and a class's methods)
EVERY_ROUTE = ("02_training", "05_bytelevel")


def _routes(name: str) -> list[dict[str, str]]:
    """The delegating notebooks graded for chapter ``name``: each a route by
    grade_id, the routes taken in turn from the first, continued from one
    notebook to the next until all six are taken (in ``EVERY_ROUTE``)."""
    gids = [g for g in DELEGATIONS if g.startswith(name)]
    count = -(-len(ROUTES) // len(gids)) if name in EVERY_ROUTE else 1
    return [{g: ROUTES[(j * len(gids) + i) % len(ROUTES)] for i, g in enumerate(gids)} for j in range(count)]


#: (chapter, notebook number) -> {grade_id: route}: the delegating notebooks run in real kernels
MATRIX = {(name, j): routes for name in NAMES for j, routes in enumerate(_routes(name)) if routes}
#: delegations that construct a class first: where the kernel's package lacks it, its constructor is reached
CLASSES = {gid: f"{module}.{attr}" for gid, (module, attr, _) in DELEGATIONS.items() if attr[0].isupper()}


def _route(route: str, module: str, attr: str, key: str) -> tuple[str, str, str]:
    """(an earlier cell, the lines before the def, the expression) reaching module.attr."""
    if route == "import":
        return "", f"import {module}", f"{module}.{attr}"
    if route == "alias":
        return "", f"from {module} import {attr} as _reference", "_reference"
    if route == "importlib":
        return "", "import importlib", f"importlib.import_module({module!r}).{attr}"
    if route == "getattr":
        return "", f"import {module}", f"getattr({module}, {attr!r})"
    if route == "sys_modules":
        return "", f"import sys, {module}", f"sys.modules[{module!r}].{attr}"
    return f"import {module}\n_captured_{key} = {module}.{attr}", "", f"_captured_{key}"


def _solution(name: str) -> nbformat.NotebookNode:
    return nbformat.read(SOLUTIONS / f"{name}.ipynb", as_version=4)


def _delegating(name: str, routes: dict[str, str]) -> nbformat.NotebookNode:
    """The notebook solved, but every answer with a package function delegated
    to it, by the route ``routes`` gives for its grade_id."""
    solution = _solution(name)
    answers = {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in solution.cells
        if c.metadata.get("nbgrader", {}).get("solution")
    }
    nb = release_notebook(solution, name)
    cells = []
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        if gid in answers:
            cell.source = answers[gid]
        if gid in DELEGATIONS:
            module, attr, body = DELEGATIONS[gid]
            earlier, before, reference = _route(routes[gid], module, attr, gid[:2] + str(len(cells)))
            head = answers[gid].split(BEGIN_SOLUTION)[0].rstrip().rstrip("#").rstrip()
            cell.source = "\n".join(filter(None, [before, head, "    " + body.format(f=reference)]))
            if earlier:
                cells.append(nbformat.v4.new_code_cell(earlier))
        cells.append(cell)
    nb.cells = cells
    return nb


def _replace_answer(name: str, gid: str, source: str, earlier: str = "") -> nbformat.NotebookNode:
    solution = _solution(name)
    nb = release_notebook(solution, name)
    answers = {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in solution.cells
        if c.metadata.get("nbgrader", {}).get("solution")
    }
    for cell in nb.cells:
        cid = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        if cid in answers:
            cell.source = source if cid == gid else answers[cid]
    if earlier:
        first = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
        nb.cells.insert(first + 1, nbformat.v4.new_code_cell(earlier))
    return nb


# Submissions that undo the guard inside their own kernel (02_training, count_pairs).
COUNT = "02_training_count_pairs_answer"
UNDOING = {
    "restores_code": (
        "import bpe_lab.core.train\n_saved = bpe_lab.core.train.count_pairs.__code__",
        "import bpe_lab.core.train\n"
        "def count_pairs(corpus):\n"
        "    f = bpe_lab.core.train.count_pairs\n"
        "    f.__code__ = _saved\n"
        "    return f(corpus)",
    ),
    "copies_the_function": (
        "import types, bpe_lab\n"
        "_f = bpe_lab.count_pairs\n"
        "_copy = types.FunctionType(_f.__code__, _f.__globals__, 'copy', _f.__defaults__)",
        "def count_pairs(corpus):\n    return _copy(corpus)",
    ),
    "executes_the_module_source": (
        "import bpe_lab.core.train\n_ns = {'__name__': 'mine'}\n"
        "exec(compile(open(bpe_lab.core.train.__file__).read(), 'mine', 'exec'), _ns)",
        "def count_pairs(corpus):\n    return _ns['count_pairs'](corpus)",
    ),
    "reloads_the_module": (
        "",
        "import importlib, bpe_lab.core.train\n"
        "def count_pairs(corpus):\n"
        "    return importlib.reload(bpe_lab.core.train).count_pairs(corpus)",
    ),
    "catches_the_trap_and_forges": (
        "import bpe_lab.grading.check as _c\n"
        "for _n in dir(_c):\n"
        "    if _n.startswith('check_'):\n"
        "        setattr(_c, _n, lambda *a, **k: None)\n"
        "import contextlib, bpe_lab.grading.check.guard as _g\n"
        "_g.guard = lambda paths: contextlib.nullcontext([])",
        "import bpe_lab\ndef count_pairs(corpus):\n    return bpe_lab.count_pairs(corpus)",
    ),
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("delegating")
    files: dict[tuple[str, str], Path] = {}

    def add(key: tuple[str, str], nb: nbformat.NotebookNode, name: str) -> None:
        path = folder / "-".join(key) / f"{name}.ipynb"
        path.parent.mkdir()
        nbformat.write(nb, path)
        files[key] = path

    for (name, number), routes in MATRIX.items():
        add((name, str(number)), _delegating(name, routes), name)
    for key, (earlier, answer) in UNDOING.items():
        add((key, "02_training"), _replace_answer("02_training", COUNT, answer, earlier), "02_training")
    reports = grade(list(files.values()), solutions_dir=SOLUTIONS, limits=LIMITS, jobs=2)
    common = shared(tmp_path_factory, [f"solution-{name}" for name in NAMES]).reports
    solutions = {("solution", name): common[f"solution-{name}"] for name in NAMES}
    return {**solutions, **dict(zip(files, reports))}


def _task(report, gid: str):
    return next(t for t in report.tasks if t.grade_id == gid.removesuffix("_answer"))


def test_every_delegation_answers_a_graded_task():
    answers = {
        c.metadata["nbgrader"]["grade_id"]
        for name in NAMES
        for c in _solution(name).cells
        if c.metadata.get("nbgrader", {}).get("solution") and c.cell_type == "code"
    }
    assert set(DELEGATIONS) | NO_PACKAGE_ANSWER <= answers


@pytest.mark.parametrize("name", NAMES)
def test_solutions_keep_full_marks(graded, name):
    report = graded[("solution", name)]
    assert report.total + report.pending == report.max_total > 0, report.tasks


def test_the_kernels_take_every_route_in_two_chapters_and_every_delegation_once_at_least():
    for name in EVERY_ROUTE:
        assert {r for (n, _), routes in MATRIX.items() if n == name for r in routes.values()} == set(ROUTES)
    assert {g for routes in MATRIX.values() for g in routes} == set(DELEGATIONS)
    assert len(MATRIX) == len({g[:2] for g in DELEGATIONS}) + len(EVERY_ROUTE)  # 8, not one per route and chapter


@pytest.mark.parametrize(
    ("name", "number"), sorted(MATRIX), ids=[f"{n}-" + "-".join(MATRIX[n, j].values()) for n, j in sorted(MATRIX)]
)
def test_a_delegating_answer_scores_zero_and_names_the_function(graded, name, number):
    report = graded[(name, str(number))]
    for gid, route in MATRIX[name, number].items():
        task = _task(report, gid)
        assert task.points == 0, (gid, route, task)
        named = NAMED[gid] in task.message and "asks you to write" in task.message
        constructed = gid in CLASSES and f"{CLASSES[gid]}.__init__" in task.message and "does not have" in task.message
        assert named or constructed, (gid, route, task.message)
    if name == "04_complexity":  # merge_and_update calls the learner's pair_deltas, which delegates
        task = _task(report, "04_complexity_merge_and_update")
        assert task.points == 0 and "recount_deltas" in task.message and "another task" in task.message, task


@pytest.mark.parametrize("key", sorted(UNDOING))
def test_undoing_the_guard_in_the_kernel_still_scores_zero(graded, key):
    report = graded[(key, "02_training")]
    task = _task(report, COUNT)
    assert task.points == 0, task
    assert "bpe_lab.core.train.count_pairs" in task.message or "without bpe_lab's answers" in task.message, task
    assert _task(report, "02_training_merge_pair").points == 2


# ------------------------------------------------------------ in-process pieces


def test_every_forbidden_path_resolves_where_it_is_defined():
    for paths in ANSWERS.values():
        for path in paths:
            assert canonical(path) == path
    assert {n for names in CHAPTERS.values() for n in names} == set(ANSWERS)


def test_the_guard_catches_every_alias_and_puts_everything_back():
    import importlib
    from functools import partial

    from bpe_lab import count_pairs as alias

    corpus = {("a", "b"): 1}
    captured = bpe_lab.core.train.count_pairs
    routes = [
        lambda: alias(corpus),
        lambda: importlib.import_module("bpe_lab.core.train").count_pairs(corpus),
        lambda: getattr(bpe_lab, "count_pairs")(corpus),  # noqa: B009 - the route under test
        lambda: sys.modules["bpe_lab.core.train"].count_pairs(corpus),
        lambda: captured(corpus),
        lambda: partial(captured)(corpus),
    ]
    for route in routes:
        with guard(["bpe_lab.count_pairs"]) as reached:
            with pytest.raises(Delegated):
                route()
        assert reached == ["bpe_lab.count_pairs"]
    assert alias(corpus) == {("a", "b"): 1}


def test_the_guard_reaches_cached_functions_and_methods_and_records_a_swallowed_call():
    with guard(
        ["bpe_lab.bytelevel.byte_map.bytes_to_unicode", "bpe_lab.bytelevel.tokenizer.Tokenizer.decode"]
    ) as reached:
        try:
            bpe_lab.bytes_to_unicode()
        except BaseException:  # noqa: BLE001 - a learner who swallows it is still seen
            pass
        with pytest.raises(Delegated):
            bpe_lab.Tokenizer.byte_level().decode([104])
    assert reached == ["bpe_lab.bytelevel.byte_map.bytes_to_unicode", "bpe_lab.bytelevel.tokenizer.Tokenizer.decode"]
    assert bpe_lab.bytes_to_unicode()[32] == "Ġ" and bpe_lab.Tokenizer.byte_level().decode([104]) == "h"


def test_a_self_check_says_when_the_answer_is_the_packages():
    with pytest.raises(CheckFailed, match=r"count_pairs calls bpe_lab\.core\.train\.count_pairs, which this task"):
        check.check_count_pairs(lambda corpus: bpe_lab.count_pairs(corpus))
    with pytest.raises(CheckFailed, match=r"train reaches bpe_lab\.core\.train\.count_pairs"):
        check.check_train(lambda wf, n: [max(bpe_lab.count_pairs({tuple(w): 1 for w in wf}))] * n)


def test_each_task_forbids_its_notebooks_answers_less_what_it_allows():
    tasks = {t.grade_id: t for name in NAMES for t in load_tasks(_solution(name))}
    assert "bpe_lab.core.train.count_pairs" in tasks["02_training_train"].forbid
    assert "bpe_lab.core.train.count_pairs" not in tasks["04_complexity_pair_deltas"].forbid
    nb = _solution("02_training")
    test_cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "02_training_train")
    test_cell.metadata["bpe_lab"] = {"allow": ["count_pairs"]}
    train = next(t for t in load_tasks(nb) if t.grade_id == "02_training_train")
    assert "bpe_lab.core.train.count_pairs" not in train.forbid and "bpe_lab.core.train.train_bpe" in train.forbid


def test_the_stubbed_package_has_no_answer_to_find(tmp_path):
    roots = {("bpe_lab", "count_pairs"), ("bpe_lab", "Tokenizer"), ("bpe_lab", "merge_symbols")}
    stop = ["bpe_lab.core.train.count_pairs", "bpe_lab.bytelevel.tokenizer.Tokenizer.encode"]
    copy = view(roots, tmp_path, stop)[0]
    for pyc in copy.rglob("*.pyc"):  # each file's own, checked against its source: never the original's code
        source = pyc.parent.parent / f"{pyc.name.split('.')[0]}.py"
        assert pyc.read_bytes()[4:16] == (0b11).to_bytes(4, "little") + importlib.util.source_hash(source.read_bytes())
    code = (
        "import bpe_lab\n"
        f"assert bpe_lab.__file__.startswith({str(copy)!r})\n"
        "for call in (lambda: bpe_lab.count_pairs({}), lambda: bpe_lab.Tokenizer.byte_level().encode('a')):\n"
        "    try:\n        call()\n    except BaseException as err:\n        print(type(err).__name__)\n"
        "print(bpe_lab.merge_symbols(('a', 'b'), ('a', 'b')))"
    )
    env = {"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["Delegated", "Delegated", "('ab',)"]


#: The tasks their first run decides, with no second run: their notebook's setup reaches none of
#: their answers, so the first run's view has no body for them already (``_Grading.checked_again``).
DECIDED_IN_ONE_RUN = {
    "01_compression": {"most_frequent_pair", "compress", "decompress"},
    "02_training": {"count_pairs", "merge_pair", "train", "first_mistake"},
    "03_encoding": {"encode_word", "decode"},
    "04_complexity": {"pair_deltas", "merge_and_update", "build_index", "merge_indexed", "train_indexed"},
    "05_bytelevel": {"bytes_to_unicode", "encode", "decode"},
    "06_variants": {"longest_match", "viterbi", "sp_decode"},
}


@pytest.fixture(scope="module")
def deciding(tmp_path_factory) -> dict[str, tuple[Path, bool]]:
    """Per task, the package view of the run that decides it and whether
    that is a second run, as ``grade`` decides for a class of every chapter."""
    return deciding_views({name: _solution(name) for name in NAMES}, tmp_path_factory.mktemp("views"))


def test_a_task_whose_setup_reaches_none_of_its_answers_is_decided_by_its_first_run(deciding):
    one_run: dict[str, set[str]] = {}
    for grade_id, (_, again) in deciding.items():
        if not again:
            number, chapter, task = grade_id.split("_", 2)  # 04_complexity_merge_and_update
            one_run.setdefault(f"{number}_{chapter}", set()).add(task)
    assert one_run == DECIDED_IN_ONE_RUN


class _PycOnly(importlib.machinery.SourceFileLoader):
    """A loader that may only take a module's code from its pyc."""

    def source_to_code(self, data, path, *, _optimize=-1):  # type: ignore[override]
        raise AssertionError(f"{path}: compiled from its source, its pyc not used")


def test_every_module_of_every_deciding_view_compiles_and_is_imported_from_its_own_bytecode(deciding):
    """A view's files are written with a pyc each (``kernel_package``: a
    kernel writes no bytecode, and compiled every view again), checked
    against its source's hash, so a stub is never run from the original's
    code. Each compiles: a function whose body begins with a decorated one
    (``ui.plots._fonts``) was once stubbed into a SyntaxError."""
    folders = {folder for folder, _ in deciding.values()}
    for folder in folders:
        for path in folder.rglob("*.py"):
            source = path.read_bytes()
            compile(source, str(path), "exec", dont_inherit=True)
            pyc = Path(importlib.util.cache_from_source(str(path))).read_bytes()
            assert pyc[:16] == importlib.util.MAGIC_NUMBER + (0b11).to_bytes(4, "little") + importlib.util.source_hash(
                source
            ), path
            assert _PycOnly("view", str(path)).get_code("view").co_filename == str(path)
    assert len(folders) > 1


@pytest.mark.parametrize("name", NAMES)
def test_every_forbidden_function_has_no_body_in_the_run_that_decides_its_task(deciding, name):
    """Read, not imported: in the view of the run that decides a task (the
    second, without its forbidden set; the first, where its setup reaches
    none of its answers), every function of the set is one ``raise
    Delegated(ITS PATH)`` (a docstring aside). A function of another library
    (exercise 09's ``ByteLevelBPETokenizer``) is not in the view: only the
    first run's trap takes it away, and its task always has a second run."""
    tasks = [t for t in load_tasks(_solution(name)) if t.forbid and t.cases]
    assert tasks and all(t.grade_id in deciding for t in tasks)
    for task in tasks:
        folder, again = deciding[task.grade_id]
        others = {path for path in task.forbid if not path.startswith("bpe_lab.")}
        assert others <= {"tokenizers.implementations.byte_level_bpe.ByteLevelBPETokenizer.__init__"}, others
        assert again or not others, task.grade_id
        for path in sorted(set(task.forbid) - others):
            module, qualname = path, []
            while not (folder.parent / (module.replace(".", "/") + ".py")).exists():
                module, last = module.rsplit(".", 1)
                qualname.insert(0, last)
            tree = ast.parse((folder.parent / (module.replace(".", "/") + ".py")).read_text(encoding="utf-8"))
            node: ast.AST = tree
            for part in qualname:
                node = next(n for n in node.body if getattr(n, "name", None) == part)  # type: ignore[attr-defined]
            body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
            assert len(body) == 1 and isinstance(body[0], ast.Raise), (task.grade_id, path, ast.unparse(node)[:300])
            assert f"Delegated({path!r})" in ast.unparse(body[0]), (task.grade_id, path)


def test_a_generator_is_trapped_by_a_generator_of_its_own_kind():
    """Python 3.13 deprecates swapping __code__ across kinds: the trap of a
    generator function is a generator that fires on the first next()."""
    import warnings

    from bpe_lab.core import corpus_files
    from bpe_lab.grading.check.guard import Delegated, guard

    path = "bpe_lab.core.corpus_files.corpus_files"
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        with guard([path]) as reached:
            files = corpus_files.corpus_files("stdlib")
            with pytest.raises(Delegated):
                next(files)
    assert reached == [path]
    assert next(corpus_files.corpus_files("stdlib")).suffix in (".py", ".txt", ".rst")
