"""The loop every self-check shares: call, compare, explain, count.

The chapter modules next to this one say only what is particular to each
exercise: its cases, its reference and its hints. This module does the
rest, the same way for every check:

- ``call`` runs the learner's function on one case, with the package's
  answers to the chapter's exercises taken away (``guard``), and turns "not
  written yet" (``NotImplementedError``), a call to the package's answer and
  crashes into a ``CheckFailed`` hint; a function marked ``grader_side``
  (the grader's stand-in for a learner's function in a grading kernel,
  ``grading.run.visible``) is called unguarded: it computes nothing here;
- ``results`` is how a check calls a *results helper* (``helper(fn,
  *args)``: it calls the learner's ``fn`` and returns only plain data, where
  ``fn`` returns a thing the grader cannot receive: a pipeline, a class):
  the grader's stand-in answers such a call with the values a grading
  kernel's run of the same helper sent back, and the check judges them as
  it judges its own;
- ``run_cases`` calls the function on every case with fresh copies of the
  arguments, asks a verdict function whether the answer is right, raises
  ``CheckFailed("<case>: <message>")`` for the first wrong one, and prints
  the "agrees with bpe_lab on N cases" line when all agree;
- ``compare`` is the usual verdict: equal to the reference's answer, or
  "expected X, got Y" plus a hint that recognises the mistake;
- ``rng`` is seeded, so a check prints the same thing on every run (the
  solution notebooks are tested with their outputs compared).
- ``NotWritten`` names the part of a learner's class that is not written
  yet (``MyTokenizer.save``), for ``call``'s message; ``finish_first`` is
  what a cell after an exercise's tasks calls before it uses a name a task's
  cells make, so an unfinished task reads "finish task N first", not a
  ``NameError``.

>>> run_cases("double", lambda x: 2 * x, [(2,), (3,)], compare(lambda x: x + x))
✔ double agrees with bpe_lab on 2 cases
>>> run_cases("double", lambda x: x * x, [(2,), (3,)], compare(lambda x: x + x))
Traceback (most recent call last):
...
bpe_lab.grading.check.runner.CheckFailed: double(3): expected 6, got 9
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NoReturn

from bpe_lab.core.symbols import Corpus
from bpe_lab.core.words import corpus_from_word_freq
from bpe_lab.grading.check.answers import chapter_forbidden, forbidden
from bpe_lab.grading.check.guard import Delegated, delegation_message, guard

__all__ = [
    "SEED",
    "CheckFailed",
    "Why",
    "hint_of",
    "not_written",
    "NotWritten",
    "finish_first",
    "Verdict",
    "short",
    "call",
    "results",
    "fail",
    "passed",
    "rng",
    "run_cases",
    "compare",
    "random_word_freq",
    "split",
]

#: The seed of every check's random cases (the year of Sennrich et al.).
SEED = 2016

#: ``verdict(got, *args)``: None when ``got`` is right for the case ``args``,
#: else the message saying what is wrong.
Verdict = Callable[..., "str | None"]


class CheckFailed(AssertionError):
    """The learner's function disagrees with the package; the message is the hint.

    An AssertionError, so a failed check fails the notebook cell (and the
    graded task) like any failed ``assert``. In a notebook it shows as its
    one-line reason, without the traceback through bpe_lab that led to it.
    ``hint``: what it says about the mistake without the expected value
    ("" when nothing): the grader's feedback may show that much; ``case``:
    the case it names, when ``fail`` raised it (inputs only).
    """

    hint = ""
    case = ""

    def _render_traceback_(self) -> list[str]:
        """What IPython shows instead of the traceback."""
        return [f"\x1b[0;31mCheckFailed\x1b[0m: {self}"]


def short(value: object, limit: int = 160) -> str:
    """``repr(value)``, cut to ``limit`` characters with "..." at the end."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def call(fn: Callable[..., Any], name: str, *args: Any, exercise: str | None = None) -> Any:
    """Call the learner's function with the package's answers to the exercises
    of ``exercise``'s chapter (default: ``name``'s) guarded, turning "not
    written yet", a call to one of those answers and crashes into hints."""
    exercise = name if exercise is None else exercise
    called: list[str] = []
    try:
        if getattr(fn, "grader_side", False):  # the grader replays the kernel's values: nothing to guard here
            result = fn(*args)
        else:
            with guard(chapter_forbidden(exercise)) as reached:
                try:
                    result = fn(*args)
                finally:
                    called = list(reached)
    except Delegated:
        called = called or ["bpe_lab"]
    except NotImplementedError as err:
        raise CheckFailed(not_written(err.name if isinstance(err, NotWritten) else name)) from None
    except CheckFailed:
        raise
    except Exception as err:
        if not called:
            shown = ", ".join(short(a, 60) for a in args)
            detail = f": {err}" if str(err) else ""
            raise CheckFailed(f"{name}({shown}) raised {type(err).__name__}{detail}") from err
    if called:
        own = called[0] in forbidden(exercise)
        raise CheckFailed(delegation_message(name, called[0], own) + " (the grader gives 0 for this task)")
    return result


def results(helper: Callable[..., Any], fn: Callable[..., Any], label: str) -> Callable[..., Any]:
    """``helper(fn, *args)`` as a function of ``args``, for ``call``; where
    ``fn`` is the grader's stand-in (``grader_side``), its ``through``
    answers instead (``label``: how the grader's message names the call).

    >>> results(lambda fn, x: [fn(x)], abs, "abs")(-2)
    [2]
    """
    if not callable(helper):
        raise TypeError(f"results: the helper must be a function, got {helper!r}")
    through = getattr(fn, "through", None) if getattr(fn, "grader_side", False) else None
    if through is None:
        return lambda *args: helper(fn, *args)

    def replayed(*args: Any) -> Any:
        return through(helper, label, *args)

    replayed.grader_side = True  # type: ignore[attr-defined]
    return replayed


class Why(str):
    """A verdict's message whose ``hint`` is known apart from its "expected X, got Y"."""

    hint = ""


def hint_of(message: str) -> str:
    """What ``message`` says about the mistake without the expected value:
    a ``Why``'s hint, all of it when it names no expected value, else what
    follows "got Y: " (when that names none either)."""
    if isinstance(message, Why):
        return message.hint
    if "expected" not in message:
        return message
    tail = message.split(", got ", 1)[1] if ", got " in message else ""
    tail = tail.split(": ", 1)[1] if ": " in tail else ""
    return "" if "expected" in tail else tail


class NotWritten(NotImplementedError):
    """A ``NotImplementedError`` that names the part not written yet (a
    method of the learner's class), for ``call``'s message.

    >>> call(lambda: (_ for _ in ()).throw(NotWritten("Shape.area")), "Shape")
    Traceback (most recent call last):
    ...
    bpe_lab.grading.check.runner.CheckFailed: Shape.area is not written yet (it raises NotImplementedError): \
write its body in its cell, run that cell, then run this one again
    """

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise TypeError(f"NotWritten: name the part not written yet, got {name!r}")
        super().__init__(name)
        self.name = name


def not_written(name: str) -> str:
    """What a check says of a function that still raises ``NotImplementedError``."""
    return (
        f"{name} is not written yet (it raises NotImplementedError): write its body in its cell, "
        "run that cell, then run this one again"
    )


def finish_first(task: int, *names: str, namespace: Mapping[str, Any] | None = None) -> None:
    """Raise ``CheckFailed`` saying to finish task ``task`` first when one of
    ``names`` is not defined yet in ``namespace`` (default: the calling
    cell's globals, the notebook's): a cell after an exercise's tasks calls
    it before it uses what the task's cells make, so a learner who has not
    finished that task reads why instead of a ``NameError``.

    >>> finish_first(2, "vocab", "merges", namespace={"vocab": {}})
    Traceback (most recent call last):
    ...
    bpe_lab.grading.check.runner.CheckFailed: finish task 2 first: merges is made by its cells, ...
    """
    if not isinstance(task, int) or isinstance(task, bool) or task < 1:
        raise TypeError(f"finish_first: task is a task's number (1, 2, ...), got {task!r}")
    if not names or not all(isinstance(name, str) and name.isidentifier() for name in names):
        raise TypeError(f"finish_first: name the variables the task's cells make, got {names!r}")
    found = sys._getframe(1).f_globals if namespace is None else namespace
    missing = [name for name in names if name not in found]
    if missing:
        said = " and ".join(missing)
        raise CheckFailed(
            f"finish task {task} first: {said} {'is' if len(missing) == 1 else 'are'} made by its cells, and not "
            f"defined yet. Write task {task}'s answer, run its cells and the ones below it, then run this cell again"
        )


def fail(case: str, message: str) -> NoReturn:
    """Raise the ``CheckFailed`` that names the wrong ``case`` and says why."""
    err = CheckFailed(f"{case}: {message}")
    err.hint = hint_of(message)
    err.case = case
    raise err


def passed(name: str, cases: int) -> None:
    """The one line a check prints when every case agrees."""
    print(f"✔ {name} agrees with bpe_lab on {cases} cases")


def rng() -> random.Random:
    """Seeded, so a check prints the same thing every run (notebooks are tested)."""
    return random.Random(SEED)


def _fresh(value: Any) -> Any:
    """A shallow copy of a dict or list, so the learner's function cannot
    change the case that the reference and the message see."""
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, list):
        return list(value)
    return value


def _shown(*args: Any) -> str:
    return ", ".join(repr(a) for a in args)


def run_cases(
    name: str,
    fn: Callable[..., Any],
    cases: Iterable[tuple[Any, ...]],
    verdict: Verdict,
    *,
    shown: Callable[..., str] = _shown,
    count: int | None = None,
    exercise: str | None = None,
) -> None:
    """Call ``fn(*args)`` for each case ``args`` (dicts and lists copied);
    fail at the first case whose ``verdict(got, *args)`` is a message, naming
    it ``name(shown(*args))``; else print that all ``count`` cases (default:
    the number of cases) agree. ``exercise`` names the exercise in
    ``answers`` when it is not ``name``."""
    number = 0
    for args in cases:
        got = call(fn, name, *(_fresh(a) for a in args), exercise=exercise)
        message = verdict(got, *args)
        if message is not None:
            fail(f"{name}({shown(*args)})", message)
        number += 1
    passed(name, number if count is None else count)


def compare(
    reference: Callable[..., Any],
    hint: Callable[..., str] = lambda expected, got, *args: "",
    *,
    same: Callable[[Any, Any], bool] = lambda got, expected: bool(got == expected),
    expected_shown: Callable[[Any], str] = str,
    got_limit: int = 160,
) -> Verdict:
    """The usual verdict: right when ``same(got, reference(*args))``, else
    "expected X, got Y" followed by ``hint(expected, got, *args)`` (which
    starts with ": " when it says something)."""

    def verdict(got: Any, *args: Any) -> str | None:
        expected = reference(*args)
        if same(got, expected):
            return None
        said = hint(expected, got, *args)
        why = Why(f"expected {expected_shown(expected)}, got {short(got, got_limit)}{said}")
        why.hint = said.removeprefix(": ")
        return why

    return verdict


def random_word_freq(generator: random.Random, alphabet: str = "abcde") -> dict[str, int]:
    """A small random word -> frequency table over ``alphabet``."""
    # a dict, not a set: set order changes with the hash seed, and the cases must not
    words = dict.fromkeys(
        "".join(generator.choice(alphabet) for _ in range(generator.randint(1, 7)))
        for _ in range(generator.randint(2, 8))
    )
    return {w: generator.randint(1, 9) for w in words}


def split(word_freq: Mapping[str, int]) -> Corpus:
    """The word table split into characters plus ``</w>``, as training starts."""
    return corpus_from_word_freq(word_freq)
