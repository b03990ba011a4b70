"""Hidden cases that cannot be memorised: generated for each submission.

What this adds over ``tasks`` (the fixed hidden cases a solution writes):
more of them, different for every student and every submission, and the
same at every re-grade of one submission. A task's generator
(``generators``, one module per chapter, under its nbgrader ``grade_id``) makes random inputs,
corpora, words, merge lists, byte strings, texts, from a seed that
``seed_for`` derives from the student, the task, an optional course secret
(``salt``: without one, a student who reads this file could work out their
own inputs) and the submission's ``nonce`` (``submissions.nonce_of``: a digest
of the notebook file's bytes, recorded in the report and the gradebook). So
the inputs one submission met, copied out of its kernel and answered at
home, are not the inputs the next submission meets; a re-grade of the same
file meets the same ones, and ``bpe-lab grade --nonces`` gives a re-grade
the recorded nonces where the file itself was re-saved. The expected value of each is computed *here*,
in the grader process, by the package's reference; only the call, with its
inputs as literals, goes into the kernel's probe (``probe``). So a learner
who memorised the fixed cases, or hard-coded a table of answers, still
meets inputs they have never seen.

A generator is only used where it agrees with its task: it must call the
task's function (``Generator.function``) with as many arguments as the
fixed cases do (a fixed case that only hands the function to a checker,
``check.work_growth(train_indexed)``, says nothing about that), and its
reference must give each fixed case's expected value wherever the fixed
call's arguments are literals. A task whose definition changed (another
signature, another convention) keeps its fixed cases only, and
``tests/test_grading_cases.py`` says which generator stopped agreeing.

>>> task = Task("03_encoding_decode", 2, "", (HiddenCase("decode(['a</w>'])", "a"),), "decode")
>>> mine, again = generated(task, "alice"), generated(task, "alice")
>>> len(mine), mine == again, mine == generated(task, "bob")
(5, True, False)
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import random
from typing import Any

from bpe_lab.grading.authoring.tasks import HiddenCase, Task
from bpe_lab.grading.cases.chapters import GENERATORS  # the table, every chapter's module imported
from bpe_lab.grading.cases.generators import CASES_PER_TASK, Args
from bpe_lab.grading.parsing import parse

__all__ = ["seed_for", "usable", "generated", "with_generated"]


def seed_for(student: str, grade_id: str, salt: str = "", nonce: str = "") -> int:
    """The seed of one submission's cases for one task: the same at every re-grade of it."""
    digest = hashlib.sha256(f"{salt}\0{student}\0{grade_id}\0{nonce}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _arities(call: str, name: str) -> set[int]:
    """How many arguments ``call`` passes to ``name`` (each call of it; none
    where it only hands ``name`` on, as to a helper: ``check.f(name, ...)``)."""
    tree = parse(call, mode="eval")
    return {len(n.args) for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == name}


def _literal_args(call: str, name: str) -> Args | None:
    """The arguments of a fixed case ``name(LITERAL, ...)``, or None."""
    node = parse(call, mode="eval").body
    if not (isinstance(node, ast.Call) and getattr(node.func, "id", "") == name and not node.keywords):
        return None
    try:
        return tuple(ast.literal_eval(arg) for arg in node.args)
    except ValueError:
        return None


def _same(a: Any, b: Any) -> bool:
    return bool(a == b) and type(a) is type(b)


_USABLE: dict[str, str] = {}


def usable(task: Task) -> str:
    """ "" if the task's generator agrees with its fixed cases, else why not
    (worked out once per task definition)."""
    key = repr(task)
    if key not in _USABLE:
        _USABLE[key] = _fits(task)
    return _USABLE[key]


def _fits(task: Task) -> str:
    generator = GENERATORS.get(task.grade_id)
    if generator is None:
        return "no generator"
    if not task.cases:
        return "no fixed cases to check the generator against"
    try:
        sample = generator.inputs(random.Random(0))[:1]
    except Exception as err:  # noqa: BLE001 - a generator that fails does not fit
        return f"it fails: {type(err).__name__}: {err}"
    name = generator.function(task.name)
    wanted = set().union(*(_arities(c.call, name) for c in task.cases))
    made = set().union(*(_arities(generator.source(name, a), name) for a in sample))
    if not wanted:
        return f"the fixed cases never call {name}"
    if made != wanted:
        return f"it calls {name} with {sorted(made)} arguments, the fixed cases with {sorted(wanted)}"
    for case in task.cases:
        args = _literal_args(case.call, name)
        if args is not None:
            try:
                value = generator.reference(*args)
            except Exception as err:  # noqa: BLE001 - any failure means the generator does not fit
                return f"its reference fails on {case.call[:80]}: {type(err).__name__}: {err}"
            if not _same(value, case.expected):
                return f"its reference disagrees with the fixed case {case.call[:80]}"
    return ""


def generated(task: Task, student: str, salt: str = "", nonce: str = "") -> tuple[HiddenCase, ...]:
    """``CASES_PER_TASK`` cases for this student's submission ``nonce``, or
    () where the task has no generator that agrees with it."""
    if usable(task):
        return ()
    generator = GENERATORS[task.grade_id]
    name = generator.function(task.name)
    try:
        inputs = generator.inputs(random.Random(seed_for(student, task.grade_id, salt, nonce)))
        return tuple(
            HiddenCase(generator.source(name, args), generator.reference(*args), generated=True)
            for args in inputs[:CASES_PER_TASK]
        )
    except Exception:  # noqa: BLE001 - a generator's own bug must not stop grading: the fixed cases remain
        return ()


def with_generated(tasks: list[Task], student: str, salt: str = "", nonce: str = "") -> list[Task]:
    """The tasks with the generated cases of this student's submission ``nonce`` after the fixed ones."""
    return [dataclasses.replace(t, cases=t.cases + generated(t, student, salt, nonce)) for t in tasks]
