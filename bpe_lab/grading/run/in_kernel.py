"""What a grading kernel runs for the grader: module code, called with data.

What this adds over ``launch`` (the kernel's first process, also run as a
file of the kernel's view): the code a grading kernel runs *between* the
learner's cells, which used to be Python assembled in strings by the
grader. It is a module of the kernel's ``bpe_lab`` kept whole there
(``reach.WHOLE``, with ``guard`` and ``hidden``, which it uses), so ruff
and mypy read it, and a cell the grader sends is only calls of its
functions with plain arguments (``probe`` and ``visible`` write those
cells; ``tests/test_grading_kernel_side.py`` parses every one of them):

- ``forget_cell()``: the calling cell's text taken out of ``linecache``
  (where IPython's compiler puts it for tracebacks and ``inspect``); a cell
  that holds hidden calls begins with it, before any call that could fail;
- ``run_hidden(cases, forbid, mime)``: each case (a ``lambda`` around one
  hidden call: the calls are the solution's expressions) called with
  ``forbid`` guarded, and what it gave published as one list of small
  dicts of display data of type ``mime`` (``probe`` says what each holds);
- ``arguments(data)``, ``states(values)`` and ``through(helper, function,
  data)``: what a visible self-check's call made on the solution needs to
  be made again on the learner's function (``visible.Visible.sources``):
  ``data`` is the text of plain data (read with ``ast.literal_eval``, never
  run) that says how to build each argument (``visible.encoded``): a value,
  a small text file, a byte-level tokenizer, ``Counter``s, chapter 04's
  traced words. The learner's function is called from the cell's own
  ``lambda``, as a hidden call is (``NAME(*arguments(DATA))``), or by the
  results helper of ``check`` that its self-check goes through;
- ``no_check`` and ``InertHiddenCases``: what the kernel's
  ``bpe_lab.grading.check`` (``kernel_package.KERNEL_CHECK``) has for each
  ``check_*`` and for ``HiddenCases``: they decide nothing there.

Everything here runs in the learner's kernel, so what it sends back is
the kernel's word: the grader believes it only where it costs points
(``judge``). Its bounds are for the grader's sake: a value's text stops at
``MAX_REPR`` characters (``write_plain``), a type's name at 200, an error's
line at 300, and a value is never passed to its own ``repr`` (a subclass's
``__repr__`` could lie, raise or hang).
"""

from __future__ import annotations

import ast
import linecache
import sys
from collections import Counter
from collections.abc import Callable
from typing import Any

from bpe_lab.grading.check.guard import guard
from bpe_lab.grading.check.hidden import NotPlain, TooLarge, write_plain

__all__ = [
    "MAX_TYPE",
    "MAX_ERROR",
    "forget_cell",
    "run_hidden",
    "result_of",
    "arguments",
    "states",
    "through",
    "built",
    "no_check",
    "InertHiddenCases",
]

#: The longest type name and error line a result carries.
MAX_TYPE, MAX_ERROR = 200, 300


def forget_cell() -> None:
    """Take the calling cell out of ``linecache`` (it is compiled by then;
    only tracebacks and ``inspect`` read it there)."""
    linecache.cache.pop(sys._getframe(1).f_code.co_filename, None)


def result_of(case: Callable[[], object], forbid: list[str]) -> dict[str, Any]:
    """What ``case()`` gave, with ``forbid`` guarded, as one small dict of
    plain data: ``repr``, ``unplain``, ``too_large`` or ``error``, and the
    forbidden functions it ``reached``."""
    reached: list[str] = []
    result: dict[str, Any]
    try:
        with guard(forbid) as reached:
            value = case()
        out: list[str] = []
        size = [0]
        try:
            write_plain(value, out, size)
            result = {"repr": "".join(out)}
        except TooLarge:
            result = {"too_large": size[0]}
        except NotPlain as why:
            kind = why.kind
            result = {"unplain": (f"{kind.__module__}.{kind.__qualname__}" if kind else str(why))[:MAX_TYPE]}
    except BaseException as err:  # noqa: BLE001 - whatever the learner's code raised is its result
        result = {"error": _error_line(err)}
    result["reached"] = [str(path) for path in reached]
    return result


def _error_line(err: BaseException) -> str:
    """``Name: message`` of ``err``, cut short; its name alone when its
    message cannot be had (a learner's exception whose ``__str__`` raises)."""
    try:
        text = str(err)
        return (type(err).__name__ + (": " + text if text else ""))[:MAX_ERROR]
    except BaseException:  # noqa: BLE001 - the name, whatever its __str__ does
        return type(err).__name__[:MAX_ERROR]


def run_hidden(cases: list[Callable[[], object]], forbid: list[str], mime: str) -> None:
    """Call each of ``cases`` with ``forbid`` guarded and publish the results
    (``result_of``), one list, as display data of type ``mime``."""
    from IPython.display import publish_display_data

    if not isinstance(cases, list) or not all(callable(case) for case in cases):
        raise TypeError(f"run_hidden: cases must be a list of functions of no argument, not {type(cases).__name__}")
    if not isinstance(forbid, list) or not all(isinstance(path, str) for path in forbid):
        raise TypeError("run_hidden: forbid must be a list of dotted paths (str)")
    results = [result_of(case, forbid) for case in cases]
    publish_display_data({mime: results})  # type: ignore[no-untyped-call, unused-ignore]


def built(part: Any) -> Any:
    """One argument of a visible call, built from its data (``visible.encoded``):
    ``("value", V)``, ``("text_file", TEXT)``, ``("tokenizer", VOCAB, MERGES,
    SPECIALS)``, ``("counter", DICT)``, ``("list", [PARTS])``, ``("traced_words",
    WORDS)`` or ``("traced_corpus", FILLERS)``.

    >>> built(("value", [1, 2])), built(("list", [("counter", {"a": 2}), ("value", 3)]))
    ([1, 2], [Counter({'a': 2}), 3])
    """
    kind = part[0] if isinstance(part, tuple) and part and isinstance(part[0], str) else None
    if kind == "value" and len(part) == 2:
        return part[1]
    if kind == "counter" and len(part) == 2 and isinstance(part[1], dict):
        return Counter(part[1])
    if kind == "list" and len(part) == 2 and isinstance(part[1], list):
        return [built(item) for item in part[1]]
    if kind == "tokenizer" and len(part) == 4:
        from bpe_lab.bytelevel.tokenizer import Tokenizer

        return Tokenizer(part[1], part[2], part[3])
    if kind in ("text_file", "traced_words", "traced_corpus") and len(part) == 2:
        from bpe_lab.grading import check

        makers: dict[str, Callable[[Any], Any]] = {
            "text_file": check.text_file,
            "traced_words": check.TracedWords,
            "traced_corpus": check.traced_corpus,
        }
        return makers[kind](part[1])
    raise ValueError(f"arguments: cannot build an argument from {str(part)[:80]!r}")


def arguments(data: str) -> tuple[Any, ...]:
    """The arguments ``data`` describes (the text of a tuple of ``built``'s
    parts, read with ``ast.literal_eval``), built.

    >>> arguments("(('value', 'ab'), ('counter', {'a': 2}))")
    ('ab', Counter({'a': 2}))
    """
    if not isinstance(data, str):
        raise TypeError(f"arguments: data must be the text of a tuple, not a {type(data).__name__}")
    parts = ast.literal_eval(data)
    if not isinstance(parts, tuple):
        raise TypeError(f"arguments: data must be the text of a tuple, not of a {type(parts).__name__}")
    return tuple(built(part) for part in parts)


def states(values: tuple[Any, ...]) -> list[Any]:
    """Each of ``values`` as it is after a call: traced words as what they
    recorded (``TracedWords.state``), anything else as it is."""
    from bpe_lab.grading import check

    return [value.state() if isinstance(value, check.TracedWords) else value for value in values]


def through(helper: str, function: Callable[..., Any], data: str) -> Any:
    """``check.HELPER(function, *arguments(data))``: a results helper of
    ``check`` (``check.runner.results``) calls the learner's function and
    returns plain data."""
    from bpe_lab.grading import check

    found = getattr(check, helper, None) if helper.isidentifier() and not helper.startswith("_") else None
    if not callable(found):
        raise ValueError(f"through: check has no results helper {helper[:80]!r}")
    return found(function, *arguments(data))


def no_check(*args: Any, **kwargs: Any) -> None:
    """A self-check in a grading kernel: it decides nothing (bpe-lab's grader
    runs its cases itself, calling the learner's function in this kernel
    with plain arguments and judging the values in its own process)."""
    return None


class InertHiddenCases:
    """``check.HiddenCases`` in a grading kernel: counts nothing, scores
    nothing (the grader reads hidden tests from the solution and never runs
    them as written)."""

    def __init__(self, *, points: float) -> None:
        self.points = points

    def expect(self, call: Any, expected: Any) -> None:
        """Nothing: the case is the grader's to run."""
        return None

    def score(self) -> float:
        """Nothing scored here."""
        return 0.0
