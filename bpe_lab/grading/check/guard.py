"""Making the package's own answers unavailable while a learner's code runs.

What this adds over ``answers`` (which package functions answer which
exercise): taking them away for a moment. ``guard(paths)`` swaps the code
of each named function for a trap, and puts it back afterwards::

    with guard(["bpe_lab.core.train.count_pairs"]) as reached:
        learner_function(corpus)   # bpe_lab.count_pairs(...) now raises Delegated
    reached                        # ["bpe_lab.core.train.count_pairs"] if it was called

Why the *code* and not the name: every alias of a function (``from bpe_lab
import count_pairs as f``, ``importlib.import_module(...)``, ``getattr``,
``sys.modules[...]``, ``f = bpe_lab.count_pairs`` in an earlier cell, a bound
method ``tok.encode``, a ``functools.partial``) is the same function object,
so replacing ``function.__code__`` reaches all of them at once. Methods are
patched on their class; ``functools.cache`` wrappers have their cache
cleared and the function they wrap patched.

The trap records the call (even when the learner catches the exception) and
raises ``Delegated``, a ``BaseException`` so that ``except Exception`` does
not swallow it. This runs in the learner's kernel, so it is only the
kernel's word: the self-checks use it to warn, and the grader uses it to
*lower* a score and to name the function. Why a score cannot be *raised* by
undoing it is explained in ``grader``.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import types
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["Delegated", "resolve", "canonical", "guard", "delegation_message", "absent_message"]


class Delegated(BaseException):
    """A learner's code called a package function that its task asks it to
    write; ``path`` names that function (``bpe_lab.core.train.count_pairs``).
    ``own``: False when the function is only absent from the grading
    kernel's package (``kernel_package``), not an answer itself."""

    def __init__(self, path: str, own: bool = True) -> None:
        super().__init__(path)
        self.path = path
        self.own = own

    def __str__(self) -> str:
        if self.own:
            return f"{self.path} is not available here: this task asks you to write it"
        return f"{self.path} is not available here: a grading kernel has only what the notebook's setup uses"


#: Paths reached while a guard is active (one list per active guard).
_reached: list[list[str]] = []


def _reach(path: str) -> None:
    """Called by a trap: record ``path`` in every active guard, then raise."""
    for record in _reached:
        if path not in record:
            record.append(path)
    raise Delegated(path)


def resolve(path: str) -> tuple[Any, types.FunctionType, Any]:
    """``(owner, function, wrapper)`` for a dotted path such as
    ``bpe_lab.core.train.count_pairs`` or ``bpe_lab.Tokenizer.encode``:
    the module or class holding it, the plain Python function whose code a
    guard swaps, and the ``functools`` cache wrapper around it (or None)."""
    parts = path.split(".")
    owner: Any = None
    for split in range(len(parts) - 1, 0, -1):
        try:
            owner = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        rest = parts[split:]
        break
    else:
        raise ValueError(f"cannot import any module of {path!r}")
    value: Any = owner
    for name in rest:
        owner = value
        value = (vars(value) if isinstance(value, type) else {}).get(name, None) or getattr(value, name, None)
        if value is None:
            raise ValueError(f"{path!r}: {name!r} not found")
    if isinstance(value, (staticmethod, classmethod)):
        value = value.__func__
    if isinstance(value, property) and value.fget is not None:
        value = value.fget
    wrapper = value if hasattr(value, "cache_clear") and hasattr(value, "__wrapped__") else None
    function = value.__wrapped__ if wrapper is not None else value
    if not isinstance(function, types.FunctionType):
        raise ValueError(f"{path!r} is not a Python function (got {type(function).__name__})")
    return owner, function, wrapper


def canonical(path: str) -> str:
    """The path under which a function is defined: ``bpe_lab.count_pairs``
    -> ``bpe_lab.core.train.count_pairs``; a bare name is looked up in
    ``bpe_lab`` (``"count_pairs"``)."""
    function = resolve(path if "." in path else f"bpe_lab.{path}")[1]
    return f"{function.__module__}.{function.__qualname__}"


def _kind(code: types.CodeType) -> str:
    """What a function's code makes: a plain call, a generator, a coroutine or
    an async generator. The trap must be of the same kind (Python 3.13
    deprecates swapping ``__code__`` across kinds); a generator's trap then
    fires on the first ``next()``, where the real one would start its work."""
    if code.co_flags & inspect.CO_ASYNC_GENERATOR:
        return "asyncgen"
    if code.co_flags & inspect.CO_COROUTINE:
        return "coroutine"
    if code.co_flags & inspect.CO_GENERATOR:
        return "generator"
    return "plain"


_TRAP_SHAPES = {
    "plain": ("def", ""),
    "generator": ("def", "        yield\n"),
    "coroutine": ("async def", ""),
    "asyncgen": ("async def", "        yield\n"),
}


@functools.cache
def _trap_code(path: str, freevars: tuple[str, ...], kind: str = "plain") -> types.CodeType:
    """A code object that calls ``_reach(path)``, of the same ``kind`` and
    with the free variables of the function it replaces (``__code__`` must
    keep their number)."""
    names = ", ".join(freevars) or "None"
    keyword, tail = _TRAP_SHAPES[kind]
    source = (
        "def _outer():\n"
        f"    {' = '.join(freevars) + ' = None' if freevars else 'pass'}\n"
        f"    {keyword} trap(*args, **kwargs):\n"
        f"        ({names},)\n"
        f"        __import__('bpe_lab.grading.check.guard', fromlist=['_reach'])._reach({path!r})\n"
        f"{tail}"
        "    return trap\n"
    )
    namespace: dict[str, Any] = {}
    exec(compile(source, f"<bpe_lab guard: {path}>", "exec"), namespace)  # noqa: S102 - our own template
    code: types.CodeType = namespace["_outer"]().__code__
    if code.co_freevars != freevars:
        raise ValueError(f"cannot trap {path}: free variables {freevars} come out as {code.co_freevars}")
    return code


@contextmanager
def guard(paths: Iterable[str]) -> Iterator[list[str]]:
    """While inside, every function in ``paths`` raises ``Delegated`` when
    called; yields the list of the paths that were called, in order."""
    swapped: list[tuple[types.FunctionType, types.CodeType]] = []
    record: list[str] = []
    try:
        for path in dict.fromkeys(paths):
            _, function, wrapper = resolve(path)
            if wrapper is not None:
                wrapper.cache_clear()
            swapped.append((function, function.__code__))
            function.__code__ = _trap_code(path, function.__code__.co_freevars, _kind(function.__code__))
        _reached.append(record)
        yield record
    finally:
        if record in _reached:
            _reached.remove(record)
        for function, code in reversed(swapped):
            function.__code__ = code


def delegation_message(name: str, path: str, own: bool = True) -> str:
    """The one line that says a learner's function called the package's answer."""
    if own:
        return f"{name} calls {path}, which this task asks you to write: write it yourself"
    return (
        f"{name} reaches {path} (directly or through one of your functions), "
        "which another task of this notebook asks you to write: write it yourself"
    )


def absent_message(name: str, path: str) -> str:
    """The one line that says a learner's function reached what the grading
    kernel's package does not hold (``kernel_package``)."""
    return (
        f"{name} reaches {path}, which a grading kernel does not have (it has only what the "
        "notebook's setup uses): write it yourself"
    )
