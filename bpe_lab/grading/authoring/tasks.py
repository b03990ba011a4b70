"""What a graded notebook holds: its tasks, their hidden tests and written answers.

What this adds over ``release`` (which strips the hidden tests out of a
solution): reading them back as data, for ``assembly`` to build the run
from a submission and for ``judge`` to score it.

- A task is an nbgrader test cell (``grade: true``, not a solution cell):
  its visible checks, its points, and its hidden tests.
- Hidden tests are CALL and LITERAL pairs, written in one of two forms:
  ``hidden.expect(lambda: CALL, LITERAL)`` lines between
  ``hidden = check.HiddenCases(points=N)`` and a last ``hidden.score()``
  (``check.hidden``: the cell's value is its score, so real nbgrader gives
  the same partial credit), or plain ``assert CALL == LITERAL`` lines (all
  or nothing under nbgrader). Either way the LITERAL is parsed here, in the
  grader process, never run, and the CALL is run in the submission's kernel
  with only its value's ``repr`` sent back (``probe``), so a submission
  that tampers with its kernel cannot fake a pass.
- A task's ``forbid``: the package functions its hidden calls may not reach
  (``guard``). They are the answers (``answers.ANSWERS``) to every check
  called in the notebook's test cells, or what a test cell declares in
  ``"bpe_lab": {"forbid": [...]}``, less its ``"bpe_lab": {"allow": [...]}``.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from bpe_lab.grading.authoring.release import BEGIN_HIDDEN, END_HIDDEN, released_source, strip_regions
from bpe_lab.grading.check.answers import ANSWERS, forbidden
from bpe_lab.grading.check.guard import canonical
from bpe_lab.grading.check.hidden import MAX_REPR
from bpe_lab.grading.notebook_format import nbformat
from bpe_lab.grading.parsing import parse

__all__ = [
    "MAX_REPR",
    "HiddenCase",
    "Task",
    "Written",
    "load_written",
    "written_answer",
    "nbgrader",
    "integrity",
    "SCORED_FORM",
    "read_hidden",
    "parse_hidden",
    "load_tasks",
]


@dataclass(frozen=True)
class HiddenCase:
    """One hidden case, ``hidden.expect(lambda: CALL, LITERAL)`` or
    ``assert CALL == LITERAL``: ``call`` is CALL's source, ``expected`` the
    literal's value; ``generated``: made for one submission by ``cases``,
    not written in the solution."""

    call: str
    expected: Any
    generated: bool = False


@dataclass(frozen=True)
class Task:
    """One graded test cell: its points, the checks the learner sees, and
    the hidden cases that only the grader runs. ``checked``: the calls of
    its visible check that the grader sends to the kernel (``visible``)."""

    grade_id: str
    points: float
    visible: str
    cases: tuple[HiddenCase, ...]
    name: str = ""
    forbid: tuple[str, ...] = ()
    own: tuple[str, ...] = ()
    checked: tuple[str, ...] = ()


def nbgrader(cell: nbformat.NotebookNode) -> dict[str, Any]:
    """A cell's nbgrader metadata ({} when it has none or it is malformed)."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta if isinstance(meta, dict) else {}


def integrity(cell: nbformat.NotebookNode) -> dict[str, list[str]]:
    """A test cell's ``"bpe_lab"`` metadata: its ``forbid`` and ``allow`` lists."""
    meta = cell.get("metadata", {}).get("bpe_lab", {})
    meta = meta if isinstance(meta, dict) else {}
    return {key: [str(p) for p in meta.get(key, [])] for key in ("forbid", "allow")}


_CHECK_CALL = re.compile(r"\bcheck\.check_(\w+)\s*\(")


def _own_answers(grade_id: str, visible: str, declared: list[str]) -> tuple[str, ...]:
    """The package functions that answer this task: declared, else those of its checks."""
    if declared:
        return tuple(dict.fromkeys(canonical(p) for p in declared))
    names = _CHECK_CALL.findall(visible)
    if not names or any(n not in ANSWERS for n in names):
        raise ValueError(
            f"{grade_id}: cannot tell which package functions answer it (checks: {names or 'none'}); "
            'declare them in the test cell\'s metadata: "bpe_lab": {"forbid": [...]}'
        )
    return forbidden(*names)


def _function_name(cases: tuple[HiddenCase, ...], defined: set[str]) -> str:
    """The learner's function the hidden calls test: of the functions the
    solution defines, the one they name most (called, or handed to a check:
    ``check.work_growth(train_indexed)``); else the name they call most
    (not ``set`` in ``sorted(set(...))``, nor ``Counter``)."""
    named: Counter[str] = Counter()
    called: Counter[str] = Counter()
    for case in cases:
        for node in ast.walk(parse(case.call, mode="eval")):
            if isinstance(node, ast.Name) and node.id in defined:
                named[node.id] += 1
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                called[node.func.id] += 1
    for names in (named, called):
        if names:
            return names.most_common(1)[0][0]
    return "your function"


def _defined(solution: nbformat.NotebookNode) -> set[str]:
    """The functions the solution's answer cells define."""
    names: set[str] = set()
    for cell in solution.cells:
        if cell.cell_type == "code" and nbgrader(cell).get("solution"):
            try:
                tree = parse(cell.source)
            except SyntaxError:
                continue
            names |= {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return names


def _hidden_block(source: str) -> tuple[str, bool]:
    """The hidden tests' source, and whether code follows them in the cell."""
    lines = source.splitlines()
    marks = [line.strip() for line in lines]
    if BEGIN_HIDDEN not in marks:
        return "", False
    start, end = marks.index(BEGIN_HIDDEN), marks.index(END_HIDDEN)
    after = any(mark and not mark.startswith("#") for mark in marks[end + 1 :])
    return "\n".join(lines[start + 1 : end]), after


#: The form of scored hidden tests (``check.hidden``), for error messages.
SCORED_FORM = "hidden = check.HiddenCases(points=N)\nhidden.expect(lambda: CALL, LITERAL)\n...\nhidden.score()"


def _case(block: str, call: ast.expr, literal: ast.expr, wrong: str) -> HiddenCase:
    """CALL's source as written (generators compare their calls with it) and LITERAL's value."""
    try:
        expected = ast.literal_eval(literal)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise ValueError(wrong) from None
    source = ast.get_source_segment(block, call)
    return HiddenCase(source if source is not None else ast.unparse(call), expected)


def _method(stmt: ast.stmt, name: str, method: str) -> list[ast.expr] | None:
    """The arguments if ``stmt`` is ``name.method(...)`` without keywords, else None."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and not call.keywords:
        if call.func.attr == method and isinstance(call.func.value, ast.Name) and call.func.value.id == name:
            return call.args
    return None


def _scored(block: str, body: list[ast.stmt]) -> tuple[float, tuple[HiddenCase, ...]]:
    """The points and the cases of a ``check.HiddenCases`` block (``SCORED_FORM``)."""
    first, last = body[0], body[-1]
    target = first.targets[0] if isinstance(first, ast.Assign) and len(first.targets) == 1 else None
    made = first.value if isinstance(first, ast.Assign) else None
    name = target.id if isinstance(target, ast.Name) else ""
    points: Any = None
    if name and isinstance(made, ast.Call) and not made.args and [k.arg for k in made.keywords] == ["points"]:
        points = ast.literal_eval(made.keywords[0].value) if isinstance(made.keywords[0].value, ast.Constant) else None
    if isinstance(points, bool) or not isinstance(points, (int, float)):
        raise ValueError(
            f"hidden tests must read\n{SCORED_FORM}\nor be `assert CALL == LITERAL` lines; got: {ast.unparse(first)}"
        )
    if len(body) < 2 or _method(last, name, "score") != []:
        raise ValueError(f"the hidden tests' last line must be `{name}.score()`: the cell's value is its score")
    cases = []
    for stmt in body[1:-1]:
        wrong = f"hidden tests must be `{name}.expect(lambda: CALL, LITERAL)` lines, got: {ast.unparse(stmt)}"
        args = _method(stmt, name, "expect") or []
        lam = args[0] if len(args) == 2 else None
        if not isinstance(lam, ast.Lambda) or ast.unparse(lam.args):  # a lambda without parameters
            raise ValueError(wrong)
        cases.append(_case(block, lam.body, args[1], wrong))
    return float(points), tuple(cases)


def _asserts(block: str, body: list[ast.stmt]) -> tuple[HiddenCase, ...]:
    """The cases of ``assert CALL == LITERAL`` lines."""
    cases = []
    for stmt in body:
        wrong = f"hidden tests must be `assert CALL == LITERAL` lines, got: {ast.unparse(stmt)}"
        test = stmt.test if isinstance(stmt, ast.Assert) else None
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
            raise ValueError(wrong)
        cases.append(_case(block, test.left, test.comparators[0], wrong))
    return tuple(cases)


def read_hidden(block: str) -> tuple[float | None, tuple[HiddenCase, ...]]:
    """The points a ``check.HiddenCases`` block scores out of (None for
    ``assert`` lines or no hidden tests), and its cases."""
    body = parse(block).body
    if not body or isinstance(body[0], ast.Assert):
        return None, _asserts(block, body)
    return _scored(block, body)


def parse_hidden(block: str) -> tuple[HiddenCase, ...]:
    r"""Hidden tests as data: the ``hidden.expect(lambda: CALL, LITERAL)``
    lines of a ``check.HiddenCases`` block, or ``assert CALL == LITERAL``
    lines, so the expected values are known without running submitted code.

    >>> parse_hidden("hidden = check.HiddenCases(points=2)\nhidden.expect(lambda: f(1), [2, 3])\nhidden.score()")
    (HiddenCase(call='f(1)', expected=[2, 3], generated=False),)
    >>> parse_hidden("assert f(1) == [2, 3]")
    (HiddenCase(call='f(1)', expected=[2, 3], generated=False),)
    """
    return read_hidden(block)[1]


def _hidden_cases(cell: nbformat.NotebookNode, grade_id: str, points: float) -> tuple[HiddenCase, ...]:
    """A test cell's hidden cases; a scored block must score out of the
    cell's points (nbgrader fails a cell worth more) and end the cell."""
    block, code_after = _hidden_block(cell.source)
    declared, cases = read_hidden(block)
    if declared is not None and declared != points:
        raise ValueError(f"{grade_id}: its hidden tests score out of {declared:g} points, its metadata {points:g}")
    if declared is not None and code_after:
        raise ValueError(f"{grade_id}: code after {END_HIDDEN!r} would replace the score as the cell's value")
    return cases


def load_tasks(solution: nbformat.NotebookNode) -> list[Task]:
    """The graded tasks of a solution notebook, in notebook order.

    Each task forbids the answers to every task of the notebook (the learner
    writes all of them), less what its metadata allows."""
    found = []
    for cell in solution.cells:
        meta = nbgrader(cell)
        if cell.cell_type == "code" and meta.get("grade") and not meta.get("solution"):
            gid, points = meta["grade_id"], float(meta.get("points", 0))
            visible = strip_regions(cell.source, BEGIN_HIDDEN, END_HIDDEN)
            cases = _hidden_cases(cell, gid, points)
            declared = integrity(cell)
            own = _own_answers(gid, visible, declared["forbid"])
            allow = {canonical(p) for p in declared["allow"]}
            found.append((gid, points, visible, cases, own, allow))
    every = tuple(dict.fromkeys(p for *_, own, _ in found for p in own))
    defined = _defined(solution)
    return [
        Task(
            gid, points, visible, cases, _function_name(cases, defined), tuple(p for p in every if p not in allow), own
        )
        for gid, points, visible, cases, own, allow in found
    ]


@dataclass(frozen=True)
class Written:
    """A manually graded cell: nbgrader ``grade`` and ``solution`` (a written
    answer in markdown, or code a person reads), or an nbgrader ``task``.
    ``stub`` is what the learner's copy starts with (``release``)."""

    grade_id: str
    points: float
    kind: str
    stub: str


def load_written(solution: nbformat.NotebookNode) -> list[Written]:
    """The manually graded cells of a solution notebook, in notebook order."""
    found = []
    for cell in solution.cells:
        meta = nbgrader(cell)
        if meta.get("grade_id") and (meta.get("grade") and meta.get("solution") or meta.get("task")):
            kind = "task" if meta.get("task") else str(cell.cell_type)
            found.append(Written(str(meta["grade_id"]), float(meta.get("points", 0)), kind, released_source(cell)))
    return found


def written_answer(submission: nbformat.NotebookNode, written: Written) -> str | None:
    """The learner's text in ``written``'s cell: None when the cell is gone,
    "" when it still holds what the exercise gave (nothing was written)."""
    for cell in submission.cells:
        if nbgrader(cell).get("grade_id") == written.grade_id:
            text = str(cell.get("source", ""))
            return "" if text.strip() in ("", written.stub.strip()) else text
    return None


# -------------------------------------------------- building the run
