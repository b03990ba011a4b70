"""What the grader sends a kernel is data for module code, never code of its own.

Every cell the grader builds for a kernel (``probe``'s hidden and visible
cases, the measured cases' setup, timed, reference and cleanup cells) is
parsed here, for every solution, with every generated case of a student:
once the solution's own visible-check lines are set aside, each statement
is one call of a function of the kernel-side module ``run.in_kernel``,
whose arguments are literals and, for ``run_hidden``, lambdas each around
one hidden call (an expression of the solution's hidden tests or of a
generated case), around one of a visible check's calls in one of three
fixed shapes, its arguments sent as one string of data
(``in_kernel.arguments``), or around a measured case's timed call
(``TIMED``: the learner's function by name, then literals). No ``def``,
``class``, ``for``, ``try`` or ``import`` is built in a string; the module
itself is read by ruff and mypy with the rest of the package.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
from collections import Counter
from pathlib import Path
from typing import Any

import IPython.display
import nbformat
import pytest

from bpe_lab.grading.authoring.release import release_notebook
from bpe_lab.grading.authoring.tasks import Task, load_tasks
from bpe_lab.grading.cases.generated import with_generated
from bpe_lab.grading.run import in_kernel
from bpe_lab.grading.run.assembly import assemble
from bpe_lab.grading.run.kernel_package import notebook_roots, view
from bpe_lab.grading.run.measure import plan_of, planned
from bpe_lab.grading.run.probe import KERNEL, probe_source
from bpe_lab.grading.run.reach import WHOLE
from bpe_lab.grading.run.sandbox import RESULT_MIME
from bpe_lab.grading.run.visible import record

SOLUTIONS = Path(__file__).resolve().parent.parent / "solutions"
NAMES = sorted(p.stem for p in SOLUTIONS.glob("[0-9][0-9]_*.ipynb"))
MODULE = "bpe_lab.grading.run.in_kernel"


def _same(a: str, b: str) -> bool:
    return ast.dump(ast.parse(a, mode="eval").body) == ast.dump(ast.parse(b, mode="eval").body)


def _module_of(node: ast.expr) -> bool:
    """Whether ``node`` is ``__import__(MODULE, fromlist=[...])``."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "__import__"
        and [ast.literal_eval(a) for a in node.args] == [MODULE]
        and all(k.arg == "fromlist" and isinstance(ast.literal_eval(k.value), list) for k in node.keywords)
    )


def kernel_function(node: ast.AST) -> str | None:
    """The ``in_kernel`` function ``node`` calls, or None when it is anything else."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _module_of(node.func.value):
        return node.func.attr
    return None


def _literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError):
        return False
    return True


def problems(source: str, own: str, calls: list[str], names: set[str]) -> list[str]:
    """What in ``source`` (a cell the grader sends) is not a call of ``in_kernel``
    with data: ``own``, the solution's visible-check text, is set aside;
    ``calls``: the hidden calls a lambda may hold; ``names``: the learner
    functions a visible check's call may name."""
    found = []
    mine = [ast.dump(s) for s in ast.parse(own).body] if own else []
    for stmt in ast.parse(source).body:
        if ast.dump(stmt) in mine:
            mine.remove(ast.dump(stmt))
            continue
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        function = kernel_function(call) if call is not None else None
        if call is None or function not in in_kernel.__all__:
            found.append(f"not a call of in_kernel: {ast.unparse(stmt)[:120]}")
            continue
        if function == "forget_cell":
            found += [] if not call.args and not call.keywords else ["forget_cell takes no argument"]
            continue
        if function != "run_hidden" and not call.keywords and all(map(_literal, call.args)):
            continue  # a measured case's setup, cleanup or reference: data only
        if function != "run_hidden" or call.keywords or len(call.args) != 3:
            found.append(f"{function} sent with {ast.unparse(call)[:120]}")
            continue
        cases, *rest = call.args
        found += [f"not a literal: {ast.unparse(a)[:80]}" for a in rest if not _literal(a)]
        if not isinstance(cases, ast.List):
            found.append(f"run_hidden's cases are not a list: {ast.unparse(cases)[:80]}")
            continue
        for case in cases.elts:
            if not (isinstance(case, ast.Lambda) and not case.args.args):
                found.append(f"a case is not a lambda of no argument: {ast.unparse(case)[:80]}")
            elif _visible_shape(case.body, names) or _timed_shape(case.body, names):
                continue
            elif not any(_same(ast.unparse(case.body), c) for c in calls):
                found.append(f"a lambda holds what is no hidden call: {ast.unparse(case.body)[:120]}")
    return found


def _data(node: ast.expr) -> bool:
    """Whether ``node`` is one string of data for ``in_kernel.arguments`` (never run)."""
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
        return False
    return _literal(ast.parse(node.value, mode="eval").body)


def _visible_shape(node: ast.expr, names: set[str]) -> bool:
    """Whether ``node`` is a visible check's call as ``visible`` sends it:
    ``NAME(*K.arguments(DATA))``, ``(lambda a: (NAME(*a), K.states(a)))(K.arguments(DATA))``
    or ``K.through(HELPER, NAME, DATA)``."""

    def built(arg: ast.expr) -> bool:
        called = isinstance(arg, ast.Call) and kernel_function(arg) == "arguments"
        return called and len(arg.args) == 1 and _data(arg.args[0])  # type: ignore[attr-defined]

    def learner(arg: ast.expr) -> bool:
        return isinstance(arg, ast.Name) and arg.id in names

    if not isinstance(node, ast.Call) or node.keywords:
        return False
    if kernel_function(node) == "through":
        if len(node.args) != 3:
            return False
        helper, function, data = node.args
        return isinstance(helper, ast.Constant) and learner(function) and _data(data)
    if learner(node.func) and len(node.args) == 1 and isinstance(node.args[0], ast.Starred):
        return built(node.args[0].value)
    if isinstance(node.func, ast.Lambda) and len(node.args) == 1 and built(node.args[0]):
        return _after_body(node.func, names)
    return False


#: The in_kernel functions a measured case's timed cell calls, the learner's function first.
TIMED = {"timed_merge", "timed_train", "streamed"}


def _timed_shape(node: ast.expr, names: set[str]) -> bool:
    """Whether ``node`` is a measured case's timed call: ``K.TIMED(NAME, LITERALS...)``."""
    if not (isinstance(node, ast.Call) and kernel_function(node) in TIMED and not node.keywords and node.args):
        return False
    function, *data = node.args
    return isinstance(function, ast.Name) and function.id in names and all(map(_literal, data))


def _after_body(function: ast.Lambda, names: set[str]) -> bool:
    """Whether ``function`` is ``lambda a: (NAME(*a), K.states(a))``."""
    body = function.body
    if [a.arg for a in function.args.args] != ["a"] or not isinstance(body, ast.Tuple) or len(body.elts) != 2:
        return False
    call, state = body.elts
    return (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id in names
        and ast.unparse(call) == f"{call.func.id}(*a)"
        and kernel_function(state) == "states"
        and ast.unparse(state).endswith(".states(a)")
    )


@functools.cache
def _sent(name: str) -> list[tuple[str, str, str, list[str], set[str]]]:
    """Every cell the grader builds for ``name``'s untouched exercise, as
    (label, source, the solution's own text in it, hidden calls, learner functions)."""
    solution = nbformat.read(SOLUTIONS / f"{name}.ipynb", as_version=4)
    tasks = load_tasks(solution)
    visible = record(solution, tasks)
    checked = [dataclasses.replace(t, checked=v.sources()) if (v := visible.get(t.grade_id)) else t for t in tasks]
    graded = with_generated(checked, "alice", "salt", "nonce")
    by_id: dict[str, Task] = {t.grade_id: t for t in graded}
    names = {v.function for v in visible.values()}
    names |= {_measured_function(c.call) for t in graded for c in t.cases if plan_of(c.call)}
    cells = []
    for step in assemble(solution, release_notebook(solution, name), graded):
        if step.role != "test":
            continue
        task = by_id[step.grade_id]
        calls = [c.call for c in task.cases]  # a measured case's timed calls are not among them: parsed as calls
        for label, source in ((f"{step.grade_id} visible", step.visible), (step.grade_id, step.source)):
            if not source:
                continue
            cells.append((label, source, task.visible, calls, names))
            for slot, plan, timed in planned(source):
                every = [("setup", plan.setup), *(("timed", cell) for cell in timed), ("cleanup", plan.cleanup)]
                cells += [(f"{label} measured case {slot} {kind}", cell, "", calls, names) for kind, cell in every]
    return cells


def _measured_function(call: str) -> str:
    """The learner's function a measured hidden call names (its first argument)."""
    node = ast.parse(call, mode="eval").body
    assert isinstance(node, ast.Call) and isinstance(node.args[0], ast.Name), call
    return node.args[0].id


@pytest.mark.parametrize("name", NAMES)
def test_every_cell_sent_is_calls_of_the_kernel_module_with_data(name):
    cells = _sent(name)
    assert cells, f"{name}: no cell sent?"
    for label, source, own, calls, names in cells:
        assert problems(source, own, calls, names) == [], label
        tree = ast.parse(source)
        statements = (ast.FunctionDef, ast.ClassDef, ast.For, ast.While, ast.Try, ast.Import, ast.ImportFrom)
        own_tree = ast.parse(own) if own else ast.Module(body=[], type_ignores=[])
        built = [n for n in ast.walk(tree) if isinstance(n, statements)]
        assert len(built) == len([n for n in ast.walk(own_tree) if isinstance(n, statements)]), label


def test_the_sends_of_every_solution_hold_hidden_calls_and_measured_cells():
    """The parse above is not empty-handed: it sees hidden calls in lambdas
    and measured cases' timed cells."""
    cells = [cell for name in NAMES for cell in _sent(name)]
    measured = [label.rsplit(" ", 1)[1] for label, *_ in cells if " measured case " in label]
    assert Counter(measured) == {"setup": 3, "timed": 2 * 2 + 2 * 4 + 1, "cleanup": 3}  # 04's two plans, 08's one
    timed = [s for label, s, *_ in cells if label.endswith(" timed")]
    assert {f for s in timed for n in ast.walk(ast.parse(s)) if (f := kernel_function(n)) in TIMED} == TIMED
    lambdas = [n for _, source, *_ in cells for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Lambda)]
    assert len(lambdas) >= 100


def test_a_cell_with_code_of_its_own_is_refused():
    source = "def probe():\n    return f(1)\nprobe()\n"
    assert problems(source, "", ["f(1)"], set()) == [
        "not a call of in_kernel: def probe():\n    return f(1)",
        "not a call of in_kernel: probe()",
    ]
    sneaky = probe_source(["f(1)"], []).replace("lambda: (f(1))", "lambda: (exec('import os'))")
    assert problems(sneaky, "", ["f(1)"], set()) == ["a lambda holds what is no hidden call: exec('import os')"]
    visible = probe_source(["f(*" + KERNEL + ".arguments(\"(('value', 1),)\"))"], [])
    assert problems(visible, "", [], {"f"}) == []
    code = visible.replace("(('value', 1),)", "__import__('os')")
    refused = f"a lambda holds what is no hidden call: f(*{KERNEL}.arguments(\"__import__('os')\"))"
    assert problems(code, "", [], {"f"}) == [refused]


def test_the_kernel_module_is_whole_in_every_view_and_its_check_is_names_only(tmp_path):
    """The view's ``bpe_lab.grading.check`` (written by the grader) holds no
    code of its own: imports and ``check_X = _no_check``, what they name
    being module code (``in_kernel``), kept whole with it."""
    assert MODULE in WHOLE
    solution = nbformat.read(SOLUTIONS / "03_encoding.ipynb", as_version=4)
    copy, _ = view(notebook_roots(solution), tmp_path)
    assert (copy / "grading" / "run" / "in_kernel.py").read_bytes() == Path(in_kernel.__file__).read_bytes()
    tree = ast.parse((copy / "grading" / "check" / "__init__.py").read_text(encoding="utf-8"))
    docstring, *body = tree.body
    assert isinstance(docstring, ast.Expr) and isinstance(docstring.value, ast.Constant)
    aliases = [s for s in body if isinstance(s, ast.Assign)]
    assert all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in body if not isinstance(s, ast.Assign))
    assert {ast.unparse(s.value) for s in aliases} == {"_no_check"}
    assert {ast.unparse(t) for s in aliases for t in s.targets} >= {"check_encode_word", "check_decode"}


def test_the_probe_is_two_calls_that_run_each_call_guarded_and_forget_the_cell(monkeypatch):
    """The probe's cell is the module's forget_cell() and run_hidden(...), and
    keeps what the cell built in a string did: the cell out of linecache
    before any call, forbidden functions guarded, errors as one line."""
    published: list[dict[str, Any]] = []
    monkeypatch.setattr(IPython.display, "publish_display_data", published.append)
    import linecache

    source = probe_source(["f(2)", "g()", "1 / 0"], ["bpe_lab.core.train.count_pairs"])
    functions = [kernel_function(stmt.value) for stmt in ast.parse(source).body if isinstance(stmt, ast.Expr)]
    assert functions == ["forget_cell", "run_hidden"] and len(ast.parse(source).body) == 2
    filename = "<cell 7>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"f": lambda x: [x, (x,)], "g": lambda: __import__("bpe_lab").count_pairs({("a", "b"): 1})}
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - the grader's own cell
    assert filename not in linecache.cache
    assert published == [
        {
            RESULT_MIME: [
                {"repr": "[2, (2,)]", "reached": []},
                {
                    "error": "Delegated: bpe_lab.core.train.count_pairs is not available here: "
                    "this task asks you to write it",
                    "reached": ["bpe_lab.core.train.count_pairs"],
                },
                {"error": "ZeroDivisionError: division by zero", "reached": []},
            ]
        }
    ]
    assert set(namespace) == {"f", "g", "__builtins__"}  # the cell bound no name of its own


def test_a_visible_call_is_built_from_data_in_the_kernel():
    """The arguments travel as the text of plain data, read with ast.literal_eval: a Counter is built
    as one, a traced corpus is check.traced_corpus's, and code in the text is never run."""
    from bpe_lab.grading.check import TracedWords
    from bpe_lab.grading.run.visible import encoded

    sent = encoded(([Counter({"a": 2}), Counter()], "x"))
    assert sent == "(('list', [('counter', {'a': 2}), ('counter', {})]), ('value', 'x'))"
    assert in_kernel.arguments(sent) == ([Counter({"a": 2}), Counter()], "x")
    assert [type(c) for c in in_kernel.arguments(sent)[0]] == [Counter, Counter]
    corpus = in_kernel.arguments("(('traced_corpus', 2),)")
    (state,) = in_kernel.states(corpus)
    assert isinstance(corpus[0], TracedWords) and state == corpus[0].state() and isinstance(state, tuple)
    words = in_kernel.built(("traced_words", [(("a",), 1)]))
    assert isinstance(words, TracedWords) and words.plain() == [(("a",), 1)]
    with pytest.raises(ValueError, match="malformed node"):
        in_kernel.arguments("(__import__('os').system('true'),)")
    with pytest.raises(ValueError, match="check has no results helper 'os.system'"):
        in_kernel.through("os.system", print, "()")


def test_the_kernel_module_refuses_what_is_not_its_data():
    with pytest.raises(TypeError, match="cases must be a list of functions"):
        in_kernel.run_hidden("f(1)", [], RESULT_MIME)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="forbid must be a list of dotted paths"):
        in_kernel.run_hidden([], "bpe_lab.x", RESULT_MIME)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="cannot build an argument from"):
        in_kernel.built(("code", "print(1)"))
    assert in_kernel.built(("list", [("counter", {"a": 2}), ("value", b"x")])) == [Counter({"a": 2}), b"x"]


def test_the_measured_cells_run_the_module_on_its_own_inputs_and_leave_the_namespace_alone():
    """Chapter 04's plans, run here as the kernel runs them: the timed calls of
    the package's answers give the plan's values, a reference cell gives None,
    no name is bound in the cell's namespace, and the cleanup frees it all."""
    import gc

    from bpe_lab.core.train_fast import learn_merges
    from bpe_lab.grading.check.complexity import merge_in_index

    namespace: dict[str, Any] = {
        "merge_indexed": merge_in_index,
        "train_indexed": lambda words, n: learn_merges(dict(words), n, tie_break="lexicographic"),
    }
    for call in ("check.work_growth(merge_indexed, 'merge')", "check.work_growth(train_indexed)"):
        plan = plan_of(call)
        assert plan is not None
        exec(plan.setup, namespace)  # noqa: S102 - the grader's own cell
        assert gc.isenabled() and gc.get_freeze_count() > 0 and set(in_kernel._MEASURED) >= {"small", "large"}
        for (timed, _, expected), reference in zip(plan.timed, plan.reference, strict=True):
            assert ast.literal_eval(repr(eval(timed, namespace))) == expected  # noqa: S307
            assert eval(reference, namespace) is None  # noqa: S307
            assert gc.isenabled()
        exec(plan.cleanup, namespace)  # noqa: S102
        assert in_kernel._MEASURED == {} and gc.get_freeze_count() == 0 and gc.isenabled()
    assert set(namespace) == {"merge_indexed", "train_indexed", "__builtins__"}


def test_the_streamed_case_writes_its_file_counts_the_ids_and_removes_it(tmp_path, monkeypatch):
    import hashlib

    from bpe_lab.bytelevel.tokenizer import Tokenizer

    monkeypatch.chdir(tmp_path)
    tail, merges = {256: b"ab"}, [(b"a", b"b")]
    in_kernel.measured_setup("held", {"file": "f.txt", "unit": "abc😀", "copies": 3, "tail": tail, "merges": merges})
    assert (tmp_path / "f.txt").read_text(encoding="utf-8") == "abc😀" * 3
    ids = Tokenizer({**{i: bytes([i]) for i in range(256)}, **tail}, merges, []).encode("abc😀" * 3)
    assert ids[:2] == [256, 99]
    digest = hashlib.sha256(b"".join(i.to_bytes(4, "little") for i in ids)).hexdigest()
    assert in_kernel.streamed(lambda t, f, b: iter(t.encode(f.read())), 4096) == (len(ids), digest)
    in_kernel.measured_cleanup()
    assert not (tmp_path / "f.txt").exists() and in_kernel._MEASURED == {}


def test_the_measured_functions_refuse_what_is_not_their_data():
    with pytest.raises(ValueError, match="kind must be 'merge', 'train' or 'held', not 'code'"):
        in_kernel.measured_setup("code", {})
    with pytest.raises(TypeError, match="data must be a dict whose 'core' is a"):
        in_kernel.measured_setup("train", {"core": "print(1)"})
    with pytest.raises(ValueError, match=r"timed_merge: no measured input 'small' \(measured_setup first\?\)"):
        in_kernel.timed_merge(print, "small")
    with pytest.raises(ValueError, match="timed_train: corpus must be 'small' or 'large'"):
        in_kernel.timed_train(print, "words", 10)
    with pytest.raises(ValueError, match="streamed: block must be a positive int, not 0"):
        in_kernel.streamed(print, 0)
