"""Hidden tests that score themselves: partial credit that real nbgrader sees.

What this adds over the ``check_*`` self-checks (which stop at the first
wrong case): a test cell's hidden cases, each counted, and the cell's score
as its value. nbgrader takes a test cell whose value is a number as that
many points (``nbgrader.utils.determine_grade``; an error or anything on
stderr is 0, a cell with no value full marks), so a cell written as ::

    check.check_encode_word(encode_word)          # the visible self-check
    ### BEGIN HIDDEN TESTS
    hidden = check.HiddenCases(points=3)          # the cell's nbgrader points
    hidden.expect(lambda: encode_word('abc', [('a', 'b')]), ['ab', 'c', '</w>'])
    hidden.expect(lambda: encode_word('bug', []), ['b', 'u', 'g', '</w>'])
    hidden.score()                                # last: the cell's value
    ### END HIDDEN TESTS

earns 3 points times the fraction of cases right, rounded to 0.01, under
nbgrader exactly as under ``bpe-lab grade`` (``judge``). The visible check
stays a gate in both: if it raises, the cell, and the task, is 0.

Each ``expect`` is one case: ``lambda: CALL`` and the value it must return,
written as a literal. ``bpe-lab grade`` never runs these lines:
``tasks.parse_hidden`` reads CALL and LITERAL from their source, the CALL
runs in the learner's kernel and its value is compared with LITERAL in the
grader's process. Here a case is right as ``judge`` has it: the value, made plain
as the grader's probe makes it (a ``Counter`` is a dict, an ``int``
subclass an int; a generator, a ``frozenset`` or an object is not plain
data and fails), is equal to the literal with the same types all the way
down (``[1]`` is not ``[1.0]``, ``(1,)`` is not ``[1]``). A case that
raises just fails; what it prints is swallowed.

nbgrader's feedback shows a cell's output, so nothing here says which case
failed or what was expected: one line with the count, and the score.

>>> hidden = HiddenCases(points=3)
>>> hidden.expect(lambda: sorted("cab"), ["a", "b", "c"])
>>> hidden.expect(lambda: len("cab"), 3.0)
>>> hidden.expect(lambda: 1 // 0, 0)
>>> hidden.score()
hidden tests: 1 of 3 right
1.0
"""

from __future__ import annotations

import ast
import contextlib
import io
import operator
from collections.abc import Callable
from typing import Any, cast

__all__ = ["MAX_REPR", "NotPlain", "TooLarge", "write_plain", "plain", "same", "HiddenCases"]

#: The longest text of a value that counts as plain: the probe sends no more.
MAX_REPR = 100_000


class NotPlain(Exception):
    """A value that bpe-lab's grader would not receive as plain data;
    ``kind``: the type that is not plain data, if that is why."""

    def __init__(self, why: str, kind: type | None = None) -> None:
        super().__init__(why)
        self.kind = kind


class TooLarge(NotPlain):
    """A value whose text passed ``MAX_REPR`` characters."""


def write_plain(value: Any, out: list[str], size: list[int], depth: int = 0) -> None:
    """Append ``value``'s text to ``out`` with the base classes' ``repr``
    (``size[0]``: the characters so far), or raise NotPlain (TooLarge past
    ``MAX_REPR``). The grader's probe writes a hidden call's value with it
    in the kernel (``probe``), and ``plain`` reads it back the same way."""

    def put(text: str) -> None:
        size[0] += len(text)
        if size[0] > MAX_REPR:
            raise TooLarge(f"over {MAX_REPR} characters")
        out.append(text)

    if depth > 60:
        raise NotPlain("nested more than 60 levels")
    if value is None or value is True or value is False:
        put(repr(value))
    elif isinstance(value, int):
        put(int.__repr__(value))
    elif isinstance(value, float):
        put(float.__repr__(value))
    elif isinstance(value, str):
        put(str.__repr__(value))
    elif isinstance(value, (bytes, bytearray)):
        put(bytes.__repr__(bytes(value)))
    elif isinstance(value, (list, tuple, set)):
        kind: Any = list if isinstance(value, list) else tuple if isinstance(value, tuple) else set
        if kind is set and not set.__len__(cast("set[Any]", value)):
            put("set()")
            return
        put({list: "[", tuple: "(", set: "{"}[kind])
        count = 0
        for item in kind.__iter__(value):  # the base class's items, whatever a subclass says
            if count:
                put(", ")
            write_plain(item, out, size, depth + 1)
            count += 1
        put({list: "]", tuple: ",)" if count == 1 else ")", set: "}"}[kind])
    elif isinstance(value, dict):
        put("{")
        for number, (key, item) in enumerate(dict.items(value)):
            if number:
                put(", ")
            write_plain(key, out, size, depth + 1)
            put(": ")
            write_plain(item, out, size, depth + 1)
        put("}")
    elif hasattr(type(value), "__index__"):
        put(int.__repr__(operator.index(value)))
    else:
        raise NotPlain(type(value).__qualname__, type(value))


def plain(value: Any) -> Any:
    """``value`` as bpe-lab's grader receives it: written with the base
    classes' ``repr`` and read back with ``ast.literal_eval``.

    >>> from collections import Counter
    >>> plain(Counter("aab")), plain(True), plain(bytearray(b"hi"))
    ({'a': 2, 'b': 1}, True, b'hi')
    >>> plain(x for x in "ab")
    Traceback (most recent call last):
    ...
    bpe_lab.grading.check.hidden.NotPlain: generator
    """
    out: list[str] = []
    write_plain(value, out, [0])
    try:
        return ast.literal_eval("".join(out))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise NotPlain("not a literal (nan, inf, an unhashable key)") from None


def _same_types(got: Any, expected: Any, depth: int = 0) -> bool:
    if type(got) is not type(expected) or depth > 100:
        return False
    if isinstance(got, (list, tuple)):
        return all(_same_types(a, b, depth + 1) for a, b in zip(got, expected))
    if isinstance(got, dict):
        return all(_same_types(v, expected[k], depth + 1) for k, v in got.items())
    return True


def same(got: Any, expected: Any) -> bool:
    """Equal, and of the same types all the way down (``1 == 1.0 == True``
    to Python, not to the grader).

    >>> same([1, (2, "a")], [1, (2, "a")]), same([1], [1.0]), same((1,), [1])
    (True, False, False)
    """
    return bool(got == expected) and _same_types(got, expected)


class HiddenCases:
    """A test cell's hidden cases: ``expect`` each, then ``score()`` last.

    ``points`` must be the cell's nbgrader points (``tasks.load_tasks``
    refuses a notebook where they differ): nbgrader fails a cell whose
    value is more than its points."""

    def __init__(self, *, points: float) -> None:
        if not points >= 0:
            raise ValueError(f"points must be a number >= 0, got {points!r}")
        self.points = points
        self.total = 0
        self.passed = 0

    def expect(self, call: Callable[[], Any], expected: Any) -> None:
        """Run ``call()`` and count it right if it returns ``expected``;
        an exception (not an interrupt: nbgrader's timeout) counts it wrong,
        and nothing it prints reaches the cell's output."""
        self.total += 1
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                value = plain(call())
        except KeyboardInterrupt:
            raise
        except BaseException:  # noqa: BLE001 - SystemExit too: a case that stops the kernel is a wrong case
            return
        self.passed += same(value, expected)

    def score(self) -> float:
        """Print how many cases were right; return the points they earn
        (the cell's value, which nbgrader reads as its score)."""
        print(f"hidden tests: {self.passed} of {self.total} right")
        return round(self.points * self.passed / self.total, 2) if self.total else float(self.points)
