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
- the measured cases' cells (``cases.complexity``, ``cases.scale``; the
  grader times or samples each from the host, ``run.measure``):
  ``measured_setup(kind, data)`` builds a case's inputs from plain data
  and keeps them here (in this module, not in the learner's namespace);
  each timed cell is a hidden call (``run_hidden``) of ``timed_merge``,
  ``timed_train`` or ``streamed``, which calls the learner's function the
  cell names on those inputs, and a chapter 04 timed cell is followed by
  ``reference_merge`` or ``reference_train``: the same code around a
  local answer of this module's own (the package's answers have no body
  in the kernel that grades them, ``run.stubs``); ``measured_cleanup()``
  frees it all. The code around each call is what the cells written as
  strings ran, no more: a few attribute lookups beside the call;
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
import gc
import hashlib
import heapq
import linecache
import os
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
    "measured_setup",
    "timed_merge",
    "reference_merge",
    "timed_train",
    "reference_train",
    "streamed",
    "measured_cleanup",
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


# ------------------------------------------------ measured cases: inputs kept here, the learner's call timed

Words = list[tuple[tuple[str, ...], int]]
Pair = tuple[str, str]
Indexed = tuple[Words, dict[Pair, int], dict[Pair, set[int]]]

#: What ``measured_setup`` built for the case being measured; emptied by ``measured_cleanup``.
_MEASURED: dict[str, Any] = {}
#: The two corpora a chapter 04 case times: the core alone, the core with the fillers.
CORPORA = ("small", "large")


def _indexed(words: Words) -> Indexed:
    """``words`` with the count of each pair and the set of the words it occurs in."""
    counts: dict[Pair, int] = {}
    index: dict[Pair, set[int]] = {}
    for i, (symbols, freq) in enumerate(words):
        for pair in zip(symbols, symbols[1:]):
            counts[pair] = counts.get(pair, 0) + freq
            index.setdefault(pair, set()).add(i)
    return words, counts, index


def _local_merge(words: Words, counts: dict[Pair, int], index: dict[Pair, set[int]], pair: Pair) -> set[Pair]:
    """The grader's local answer to ``merge_indexed`` (as ``check.complexity.merge_in_index``
    merges): only the words ``index[pair]`` names, counts and index corrected in place."""
    first, second = pair
    changed: set[Pair] = set()
    for i in sorted(index.get(pair, ())):
        symbols, freq = words[i]
        out: list[str] = []
        k = 0
        while k < len(symbols):
            if k + 1 < len(symbols) and symbols[k] == first and symbols[k + 1] == second:
                out.append(first + second)
                k += 2
            else:
                out.append(symbols[k])
                k += 1
        merged = tuple(out)
        before, after = list(zip(symbols, symbols[1:])), list(zip(merged, merged[1:]))
        for p in before:
            counts[p] -= freq
        for p in after:
            counts[p] = counts.get(p, 0) + freq
        changed.update(before, after)
        for p in set(before) - set(after):
            index[p].discard(i)
            if not index[p]:
                del index[p]
        for p in set(after) - set(before):
            index.setdefault(p, set()).add(i)
        words[i] = (merged, freq)
    for p in changed:
        if counts.get(p, 1) == 0:
            del counts[p]
    return changed


def _local_train(words: Words, num_merges: int) -> list[Pair]:
    """The grader's local answer to ``train_indexed``: an index and a heap, as the solution's."""
    words, counts, index = _indexed(list(words))
    heap = [(-count, pair) for pair, count in counts.items()]
    heapq.heapify(heap)
    merges: list[Pair] = []
    while heap and len(merges) < num_merges:
        negative, pair = heapq.heappop(heap)
        if counts.get(pair) != -negative:
            continue
        merges.append(pair)
        for changed in _local_merge(words, counts, index, pair):
            if changed in counts:
                heapq.heappush(heap, (-counts[changed], changed))
    return merges


def _field(data: Any, key: str, kind: type | tuple[type, ...]) -> Any:
    """``data[key]``, which must be a ``kind``."""
    if not isinstance(data, dict) or not isinstance(data.get(key), kind):
        raise TypeError(f"measured_setup: data must be a dict whose {key!r} is a {kind}, not {str(data)[:80]!r}")
    return data[key]


def _fillers(data: dict[str, Any]) -> Words:
    """``data["fillers"]`` words of two Han characters of their own (each pair counted once)."""
    side, count = _field(data, "side", int), _field(data, "fillers", int)
    return [((chr(0x4E00 + k % side), chr(0x4E00 + side + k // side)), 1) for k in range(count)]


def _copy(state: Indexed, core: dict[Pair, set[int]]) -> Indexed:
    """A copy of ``state`` for the reference's merges: only the sets of the
    ``core``'s pairs are copied (a local merge never reads a filler's, and
    copying 200,000 sets was most of the setup's time)."""
    words, counts, index = state
    return list(words), dict(counts), {**index, **{p: set(index[p]) for p in core}}


def measured_setup(kind: str, data: dict[str, Any]) -> None:
    """Build a measured case's inputs from ``data`` and keep them here (untimed):

    - ``"merge"``: ``{"core": WORDS, "side": N, "fillers": N, "pairs": [...],
      "keys": [...]}``: the core's words, indexed, alone (``small``) and with
      the fillers (``large``), the merges to make and the pairs whose counts
      and index a call sends back, and copies of both corpora for the
      reference's merges;
    - ``"train"``: ``{"core": WORDS, "side": N, "fillers": N}``: both corpora as lists;
    - ``"held"``: ``{"file": NAME, "unit": TEXT, "copies": N, "tail": {ID: BYTES},
      "merges": [...]}``: ``unit`` written ``copies`` times into ``file`` (in the
      kernel's folder), and the byte-level tokenizer of that vocabulary's tail.

    Chapter 04's inputs are frozen out of the garbage collector's reach
    (``gc.freeze``: a full collection's cost follows the objects the kernel
    holds), until ``measured_cleanup``.
    """
    if _MEASURED:  # a case whose cleanup never ran (its kernel is the same): its inputs go first
        measured_cleanup()
    if kind in ("merge", "train"):
        core = _field(data, "core", list)
        fillers = _fillers(data)
        if kind == "merge":
            small, large = _indexed(list(core)), _indexed(core + fillers)
            _MEASURED.update(
                small=small,
                large=large,
                size=len(core),
                pairs=tuple(_field(data, "pairs", list)),
                keys=tuple(_field(data, "keys", list)),
                # the reference's own copies: the merges change them
                reference_small=_copy(small, small[2]),
                reference_large=_copy(large, small[2]),
            )
        else:
            _MEASURED.update(small=list(core), large=core + fillers)
        del core, fillers
        _MEASURED["frozen"] = True
        gc.collect()
        gc.freeze()
        return
    if kind == "held":
        name, unit, copies = _field(data, "file", str), _field(data, "unit", str), _field(data, "copies", int)
        vocab = {**{i: bytes([i]) for i in range(256)}, **_field(data, "tail", dict)}
        tokenizer = built(("tokenizer", vocab, _field(data, "merges", list), []))
        with open(name, "w", encoding="utf-8") as file:
            for _ in range(copies):
                file.write(unit)
        _MEASURED.update(file=name, tokenizer=tokenizer)
        gc.collect()
        return
    raise ValueError(f"measured_setup: kind must be 'merge', 'train' or 'held', not {str(kind)[:40]!r}")


def _measured(function: str, key: str) -> Any:
    """What the setup kept under ``key`` (``small``, ``large``, ...)."""
    try:
        return _MEASURED[key]
    except (KeyError, TypeError):
        raise ValueError(f"{function}: no measured input {str(key)[:40]!r} (measured_setup first?)") from None


def _merges(
    merge: Callable[..., Any], state: Indexed, pairs: tuple[Pair, ...], keys: tuple[Pair, ...], size: int
) -> Any:
    """Each of ``pairs`` merged by ``merge``, the garbage collector off (as ``timeit``
    runs), and what the merges left: the core's words, the counts and index of ``keys``."""
    words, counts, index = state
    gc.disable()
    try:
        return (
            [merge(words, counts, index, p) for p in pairs],
            words[:size],
            {p: counts.get(p) for p in keys},
            {p: index.get(p) for p in keys},
        )
    finally:
        gc.enable()


def timed_merge(merge: Callable[..., Any], corpus: str) -> Any:
    """The learner's ``merge`` (``merge_indexed``) on the setup's ``corpus``
    (``"small"`` or ``"large"``): each of its merges, one call each, and what they left."""
    if corpus not in CORPORA:
        raise ValueError(f"timed_merge: corpus must be 'small' or 'large', not {str(corpus)[:40]!r}")
    state = _measured("timed_merge", corpus)
    return _merges(merge, state, _MEASURED["pairs"], _MEASURED["keys"], _MEASURED["size"])


def reference_merge(corpus: str) -> None:
    """``timed_merge`` with the grader's local merge, on its own copy of ``corpus``; its value dropped."""
    if corpus not in CORPORA:
        raise ValueError(f"reference_merge: corpus must be 'small' or 'large', not {str(corpus)[:40]!r}")
    state = _measured("reference_merge", "reference_" + corpus)
    _merges(_local_merge, state, _MEASURED["pairs"], _MEASURED["keys"], _MEASURED["size"])


def timed_train(train: Callable[..., Any], corpus: str, merges: int) -> Any:
    """The learner's ``train`` (``train_indexed``) on a copy of the setup's ``corpus``, for ``merges`` merges."""
    if corpus not in CORPORA or not isinstance(merges, int):
        raise ValueError(
            f"timed_train: corpus must be 'small' or 'large' and merges an int, not {corpus!r}, {merges!r}"
        )
    words = _measured("timed_train", corpus)
    gc.disable()
    try:
        return train(list(words), merges)
    finally:
        gc.enable()


def reference_train(corpus: str, merges: int) -> None:
    """``timed_train`` with the grader's local trainer (which copies the words itself); its value dropped."""
    if corpus not in CORPORA or not isinstance(merges, int):
        raise ValueError(
            f"reference_train: corpus must be 'small' or 'large' and merges an int, not {corpus!r}, {merges!r}"
        )
    words = _measured("reference_train", corpus)
    gc.disable()
    try:
        _local_train(words, merges)
    finally:
        gc.enable()


def streamed(encode: Callable[..., Any], block: int) -> tuple[int, str]:
    """The learner's ``encode`` (``encode_stream``) over the setup's file,
    ``block`` characters a read: how many ids it yielded and their SHA-256
    (4 little-endian bytes each), counted as they come (none is held)."""
    if not isinstance(block, int) or block < 1:
        raise ValueError(f"streamed: block must be a positive int, not {block!r}")
    tokenizer, name = _measured("streamed", "tokenizer"), _measured("streamed", "file")
    digest = hashlib.sha256()
    count = 0
    with open(name, encoding="utf-8") as file:
        for i in encode(tokenizer, file, block):
            digest.update(int.to_bytes(i, 4, "little"))
            count += 1
    return count, digest.hexdigest()


def measured_cleanup() -> None:
    """Free what ``measured_setup`` made, whatever the timed cells did: its
    file removed, the garbage collector back on (and unfrozen)."""
    name = _MEASURED.get("file")
    frozen = _MEASURED.get("frozen", False)
    _MEASURED.clear()
    if isinstance(name, str):
        try:
            os.remove(name)
        except OSError:
            pass
    if frozen:
        gc.enable()
        gc.unfreeze()
    gc.collect()


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
