"""A task's visible self-check, decided in the grader: its cases become the grader's own.

What this adds over ``check`` (the self-checks a learner runs, whose
verdict in a grading kernel would be the kernel's word: a submission can
replace ``check.check_X`` by a no-op) and ``probe`` (hidden calls run in
the kernel, values sent back as plain data): the same treatment for the
visible check's cases, so that a failing visible case still costs the
whole task whatever the kernel does to itself. In three steps:

1. ``record(solution, tasks)``, once per assignment: the solution's locked
   and answer cells run in the grader (the instructor's code, never a
   submission's), and each task's visible line (``check.check_X(NAME,
   ...)``) runs on a *recorder* standing for ``NAME``: the calls the
   check makes, in order, with the solution's value for each.
2. The calls whose arguments are plain data (``check.hidden.plain``, types
   kept) are sent to the kernel as probe cases
   ``NAME(*in_kernel.arguments(DATA))``, guarded like the hidden ones and
   called from the same cell as they are (``Visible.sources``): DATA is the
   text of plain data saying how to build each argument (``encoded``), read
   in the kernel with ``ast.literal_eval``, never run; the kernel sends back
   values.
3. ``verdict(visible, results)``: the real check runs again in the grader,
   with a stand-in for ``NAME`` that returns the kernel's value for each
   call (raises what the kernel's call raised). A ``CheckFailed`` fails the
   task, with a message naming the input and the kind of mistake (wrong
   value, wrong type, raised ``X``, not plain data), never the expected value.

Chapter 04's instrumented words (``check.instruments.TracedWords``) are
sent as the data that builds them in the kernel (``("traced_words", WORDS)``
for ``check.TracedWords(WORDS)``, ``("traced_corpus", N)`` for
``check.traced_corpus(N)``), and such a call sends back, with its value,
the state of every argument after it (``TracedWords.state``: the words and
the ids read and written, or the counts of operations; a dict or list as
it is): the stand-in writes that state into the grader's own arguments
(``TracedWords.restore``) before the check looks at them. So the visible
check's verdict (whether a merge touched only the words ``index[pair]``
names, whether a trainer's work grows with its merges) is decided here,
but on what the words recorded in the kernel, which a submission that
tampers with ``check.TracedWords`` can forge. Grading does not rest on it:
the hidden ``work_growth`` cases are measured by the grader itself
(``measure``: the CPU time of the kernel's process tree, read from the
host), which no count the kernel reports can change.

A byte-level ``Tokenizer`` with GPT-2's pattern (chapter 07's
``never_emitted``, 09's pipelines) is sent as its vocabulary, merges and
special tokens, from which the kernel builds it again.

Where the learner's function takes or returns what cannot be sent (08's
metered file, 09's pipeline and processor, 10's class), its check calls
it through a *results helper* (``check.runner.results``: ``helper(NAME,
*ARGS)`` calls it and returns only plain data: ids, tokens, what ``save``
and ``load`` gave back, a metered file's figures). The
recorder records that helper's call, with the solution's value; the kernel
runs ``check.HELPER(NAME, *ARGS)`` as a probe case
(``in_kernel.through(HELPER, NAME, DATA)``; the helper is in the
kernel's package: ``kernel_package.HELPERS``, or its test cell's ``allow``); the stand-in answers the
check's helper call with the kernel's value, and the check judges it as
it judges a learner's at home. So no self-check runs for real in a
grading kernel (10's GPT-2 vocabulary is named ``"gpt2"``, built by
the helper in the kernel, never sent).

What is not judged here: a call whose other arguments are not plain data
(a tokenizer of another kind or pattern; a small text file is sent as its text, a list of
``Counter``s as Counters) cannot be sent, so the check is judged up to its first
such call and passes from there (the hidden cases still decide the score);
the same when the check's calls stop matching the recorded ones. Otherwise what a
check sees of its arguments after the call (``merge_counts`` must leave
its Counters as they were) is not replayed: the stand-in changes nothing.
A check that times its function (none today) would time the stand-in.

>>> literal((("a", "b"), {("a", "b"): 1})), literal((b"x",)), literal((print,))
("(('a', 'b'), {('a', 'b'): 1})", "(b'x',)", None)
>>> encoded((("a", "b"), Counter(a=2)))
"(('value', ('a', 'b')), ('counter', {'a': 2}))"
"""

from __future__ import annotations

import ast
import contextlib
import copy
import io
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any

from bpe_lab.bytelevel.tokenizer import Tokenizer
from bpe_lab.grading import check as learner_check
from bpe_lab.grading.authoring.tasks import Task, nbgrader
from bpe_lab.grading.check.guard import Delegated
from bpe_lab.grading.check.hidden import MAX_REPR, NotPlain, same, write_plain
from bpe_lab.grading.check.instruments import TracedWords
from bpe_lab.grading.check.runner import CheckFailed, NotWritten
from bpe_lab.grading.notebook_format import nbformat
from bpe_lab.grading.parsing import parse
from bpe_lab.grading.run.probe import kernel_call

__all__ = ["Recorded", "Visible", "literal", "encoded", "check_line", "record", "verdict", "short_text"]


@dataclass(frozen=True)
class Recorded:
    """One call a self-check made: its arguments' literal (None when they are
    not plain data) and the solution's value (or what it raised); ``after``:
    it had traced words, so the kernel sends back its arguments' state too;
    ``data``: its arguments as the kernel gets them (``encoded``)."""

    args: str | None
    value: Any = None
    raised: BaseException | None = None
    after: bool = False
    shown: str = ""  # the arguments as a message shows them, when not their literal (a tokenizer's)
    helper: str = ""  # a results helper's name (``check.HELPER(NAME, *ARGS)``), "" for a call of NAME
    data: str | None = None


@dataclass
class Visible:
    """A task's visible check as the grader runs it: the check's ``line``,
    the learner's ``function`` it tests, the solution's namespace, and the
    calls it made on the solution."""

    grade_id: str
    line: str
    function: str
    namespace: dict[str, Any]
    calls: list[Recorded] = field(default_factory=list)

    @property
    def partial(self) -> bool:
        """Whether some of its calls cannot be sent (then the kernel runs the real check too)."""
        return len(self.sources()) < len(self.calls)

    @property
    def check(self) -> str:
        """The self-check's name: ``check_X``."""
        return self.line.split("(")[0].strip().removeprefix("check.")

    def sources(self) -> tuple[str, ...]:
        """The kernel's probe cases, one per call up to the first that is not
        plain: ``NAME(*in_kernel.arguments(DATA))``; the value and what each
        argument holds (or recorded) after the call for a call ``after``;
        ``in_kernel.through(HELPER, NAME, DATA)`` for a call through a
        results helper. DATA travels as one
        string: IPython tokenizes every cell in Python before it compiles it,
        at about a microsecond a character on Python 3.11, and chapter 07's
        self-check hands two tokenizers of a few thousand tokens each,
        700,000 characters of dicts and lists, which took the kernel longer
        to read as code than to run."""
        found = []
        for call in self.calls:
            if call.args is None or call.data is None:
                break
            built = kernel_call("arguments", repr(call.data))
            if call.helper:  # the learner's function handed to a results helper of ``check``
                found.append(kernel_call("through", repr(call.helper), self.function, repr(call.data)))
            elif call.after:
                found.append(f"(lambda a: ({self.function}(*a), {kernel_call('states', 'a')}))({built})")
            else:
                found.append(f"{self.function}(*{built})")
        return tuple(found)


#: The largest text file a check hands its function that is sent along.
MAX_FILE = 64 << 10

#: The longest text argument sent along (notebook 07's training text is 368,056 characters).
MAX_TEXT = 1 << 20


def _plain(value: Any) -> str | None:
    """``value`` as literal text that reads back as the same value of the same types, or None."""
    out: list[str] = []
    try:
        write_plain(value, out, [0])
        text = "".join(out)
        return text if same(ast.literal_eval(text), value) else None
    except (NotPlain, ValueError, SyntaxError, RecursionError, MemoryError, TypeError):
        return None


#: A part of ``_parts``: an argument as a message shows it (source text that
#: would rebuild it) and as the kernel gets it (the text of ``in_kernel.built``'s data).
_Part = tuple[str, str]


def literal(args: tuple[Any, ...]) -> str | None:
    """``args`` as the source of a tuple that would rebuild them, or None when
    the kernel cannot be sent them: plain data as literals, a small text file
    (``train_bytelevel``'s path) as ``check.text_file(TEXT)``. What a
    message shows of a call's arguments, and what tells two calls apart."""
    return _both(args)[0]


def encoded(args: tuple[Any, ...]) -> str | None:
    """``args`` as the kernel gets them, or None (where ``literal`` is None):
    the text of a tuple of plain data, one ``in_kernel.built`` part per
    argument, which the kernel reads with ``ast.literal_eval``."""
    return _both(args)[1]


def _both(args: tuple[Any, ...]) -> tuple[str, str] | tuple[None, None]:
    """``literal(args)`` and ``encoded(args)``, the arguments read once."""
    parts = _parts(args)
    if parts is None:
        return None, None
    return _tuple([shown for shown, _ in parts]), _tuple([data for _, data in parts])


def _tuple(items: list[str]) -> str:
    return f"({', '.join(items)}{',' if len(items) == 1 else ''})"


def _parts(args: tuple[Any, ...]) -> list[_Part] | None:
    """Each of ``args`` as shown and as sent (``_Part``), or None when one cannot be sent."""
    parts: list[_Part] = []
    for arg in args:
        if isinstance(arg, PurePath):
            try:
                if Path(arg).stat().st_size > MAX_FILE:
                    return None
                text = str.__repr__(Path(arg).read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError):
                return None
            parts.append((f"check.text_file({text})", f"('text_file', {text})"))
        elif type(arg) is str and len(arg) <= MAX_TEXT:  # longer than a plain value may be (a corpus)
            parts.append((str.__repr__(arg), f"('value', {str.__repr__(arg)})"))
        elif type(arg) is Tokenizer:
            if (made := _tokenizer(arg)) is None:
                return None
            parts.append(made)
        elif isinstance(arg, TracedWords):
            if arg.read or arg.written or (made := _traced(arg)) is None:
                return None
            parts.append(made)
        elif (part := _counters(arg)) is not None:
            parts.append(part)
        else:
            return None
    return parts


_TRACED_CORPUS = re.compile(r"check\.traced_corpus\((\d+)\)")


def _traced(words: TracedWords) -> _Part | None:
    """Traced words as what builds them afresh in a kernel: ``check.traced_corpus(N)``
    (its ``made``), or ``check.TracedWords(WORDS)`` with plain words."""
    if words.made:
        corpus = _TRACED_CORPUS.fullmatch(words.made)
        return (words.made, f"('traced_corpus', {int(corpus.group(1))})") if corpus else None
    plain = _plain(words.plain())
    return None if plain is None else (f"check.TracedWords({plain})", f"('traced_words', {plain})")


def _tokenizer(tokenizer: Tokenizer) -> _Part | None:
    """A byte-level tokenizer with GPT-2's pattern as its vocabulary, merges and
    special tokens (its vocabulary holds its special tokens already, with their ids)."""
    if tokenizer.pattern.name != "gpt2":
        return None
    vocab, merges = _plain(dict(tokenizer.vocab)), _plain(list(tokenizer.merges))
    specials = _plain(list(tokenizer.special_tokens))
    if vocab is None or merges is None or specials is None:
        return None
    inside = f"{vocab}, {merges}, {specials}"
    return f"__import__('bpe_lab').Tokenizer({inside})", f"('tokenizer', {inside})"


def _counters(value: Any) -> _Part | None:
    """Plain data, where a ``Counter`` (of plain data, in a list) is rebuilt as one."""
    if type(value) is Counter:
        inside = _plain(dict(value))
        return None if inside is None else (f"__import__('collections').Counter({inside})", f"('counter', {inside})")
    if type(value) is list and any(type(item) is Counter for item in value):
        items = [_counters(item) for item in value]
        if any(item is None for item in items):
            return None
        shown = ", ".join(item[0] for item in items if item is not None)
        data = ", ".join(item[1] for item in items if item is not None)
        return f"[{shown}]", f"('list', [{data}])"
    plain = _plain(value)
    return None if plain is None else (plain, f"('value', {plain})")


_CHECK_LINE = re.compile(r"^\s*check\.check_\w+\(\s*([A-Za-z_]\w*)\b")


def check_line(visible: str) -> tuple[str, str] | None:
    """The visible region's one ``check.check_X(NAME, ...)`` statement and NAME."""
    try:
        tree = parse(visible)
    except SyntaxError:
        return None
    for stmt in tree.body:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if isinstance(call, ast.Call) and call.args and isinstance(call.args[0], ast.Name):
            source = ast.get_source_segment(visible, stmt) or ""
            if _CHECK_LINE.match(source):
                return source, call.args[0].id
    return None


class _Beyond(BaseException):
    """The check went past what the grader can judge (not ``Exception``: the
    runner must not take it for the learner's function crashing)."""


class KernelRaised(Exception):
    """What a learner's call raised in the kernel, as its one line."""


@dataclass(frozen=True)
class _Opaque:
    """A kernel's value that was not plain data: equal to nothing."""

    kind: str

    def __eq__(self, other: object) -> bool:
        return False

    def __hash__(self) -> int:
        return 0


def _quietly(line: str, namespace: dict[str, Any]) -> None:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        exec(compile(line, "<visible check>", "exec"), namespace)  # noqa: S102 - the solution's own line


def _recorder(function: Callable[..., Any], calls: list[Recorded]) -> Callable[..., Any]:
    def recorder(*args: Any) -> Any:
        text, data = _both(args)
        after = any(isinstance(arg, TracedWords) for arg in args)
        shown = ", ".join(repr(a) if type(a) is Tokenizer else short_text(repr(a), 60) for a in args)
        shown = shown if any(type(a) is Tokenizer for a in args) else ""
        try:
            value = function(*args)
        except BaseException as err:
            calls.append(Recorded(text, raised=err, after=after, shown=shown, data=data))
            raise
        if shown and _plain(value) is None:  # a tokenizer sent, but no plain value to judge (09's pipeline)
            text = None
        calls.append(Recorded(text, value, after=after, shown=shown, data=data))
        return value

    def through(helper: Callable[..., Any], label: str, *args: Any) -> Any:
        name = getattr(helper, "__name__", "")
        if getattr(learner_check, name, None) is not helper:
            raise ValueError(f"the results helper {helper!r} is not check.{name}: a grading kernel could not call it")
        text, data = _both(args)
        try:
            value = helper(function, *args)
        except BaseException as err:
            calls.append(Recorded(text, raised=err, shown=label, helper=name, data=data))
            raise
        text = text if _plain(value) is not None else None
        calls.append(Recorded(text, value, shown=label, helper=name, data=data))
        return value

    recorder.grader_side = True  # type: ignore[attr-defined]
    recorder.through = through  # type: ignore[attr-defined]
    return recorder


def record(solution: nbformat.NotebookNode, tasks: list[Task]) -> dict[str, Visible]:
    """Run the solution's locked and answer cells in order (not its test
    cells, nor its ungraded ones) and, at each task's test cell, its visible
    check on the solution's function through a recorder; by grade_id."""
    lines = {t.grade_id: found for t in tasks if (found := check_line(t.visible))}
    namespace: dict[str, Any] = {"__name__": "__bpe_lab_solution__"}
    recorded: dict[str, Visible] = {}
    for cell in solution.cells:
        meta = nbgrader(cell)
        gid = str(meta.get("grade_id", ""))
        if cell.cell_type != "code" or not gid:
            continue
        if gid in lines:
            line, function = lines[gid]
            visible = Visible(gid, line, function, dict(namespace))
            try:
                _quietly(line, {**namespace, function: _recorder(namespace[function], visible.calls)})
            except (Exception, Delegated) as err:
                raise ValueError(f"{gid}: the solution fails its own self-check: {err}") from None
            recorded[gid] = visible
        elif meta.get("solution") or meta.get("locked") and not meta.get("grade"):
            try:
                _quietly(cell.source, namespace)
            except Exception as err:
                raise ValueError(f"{gid}: this cell of the solution fails in the grader: {err!r}") from None
    return recorded


def _value(result: Any) -> Any:
    """What a kernel's probe result stands for: the value, or its exception raised."""
    if not isinstance(result, dict):
        raise _Beyond
    if "repr" in result:
        text = str(result["repr"])
        if len(text) > MAX_REPR:
            raise _Beyond
        try:
            return ast.literal_eval(text)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return _Opaque("not plain data")
    if "error" in result:
        error = str(result["error"])
        unwritten = re.match(r"^NotWritten: ([\w.]{1,100})$", error)
        if unwritten:  # the check names the method not written yet (MyTokenizer.save)
            raise NotWritten(unwritten.group(1))
        if error.startswith("NotImplementedError"):
            raise NotImplementedError()
        delegated = re.match(r"^Delegated: (\S+) is not available", error)
        if delegated:
            raise Delegated(delegated.group(1))
        raise KernelRaised(error)
    return _Opaque(str(result.get("unplain", "a value too large")))


def _replayed(got: Any, args: tuple[Any, ...]) -> Any:
    """The value of a call that sent back its arguments' state, that state
    written into ``args`` (the grader's own); a value equal to nothing when
    the kernel's answer has not that shape."""
    if not (isinstance(got, tuple) and len(got) == 2 and isinstance(got[1], list) and len(got[1]) == len(args)):
        return _Opaque("not the call's value and state")
    value, states = got
    for arg, state in zip(args, states):
        try:
            if isinstance(arg, TracedWords):
                arg.restore(state)
            elif isinstance(arg, dict) and isinstance(state, dict):
                arg.clear()
                arg.update(state)
            elif isinstance(arg, list) and isinstance(state, list):
                arg[:] = state
        except (ValueError, TypeError):
            return _Opaque("not the call's value and state")
    return value


def _value_of(result: Any, call: Recorded) -> Any:
    """The value a kernel's result holds (without the arguments' state of a call that sent it)."""
    got = _value(result)
    return got[0] if call.after and isinstance(got, tuple) and len(got) == 2 else got


def _kind(result: Any, solved: Recorded) -> str:
    """The kind of mistake a kernel's result shows, never the expected value."""
    if isinstance(result, dict) and "error" in result:
        return f"raised {str(result['error']).split(':')[0][:80]}"
    if isinstance(result, dict) and "unplain" in result:
        return f"returned a {str(result['unplain'])[:80]}, not plain data"
    if isinstance(result, dict) and "too_large" in result:
        return "returned a value far longer than the answer"
    try:
        got = _value_of(result, solved)
    except BaseException:  # noqa: BLE001 - whatever it was, it is not the answer
        return "returned a wrong value"
    if type(got) is not type(solved.value):
        return f"returned a {type(got).__name__}: wrong type"
    return "returned a wrong value"


def verdict(visible: Visible, results: Any) -> str:
    """ "" when the visible check passes on the kernel's values (``results``:
    the probe's list, in the order of ``visible.sources()``), else why not."""
    sent = visible.sources()
    if not isinstance(results, list) or len(results) != len(sent):
        return "the self-check's cases did not report back (was the test cell tampered with?)"
    position = [0]

    def stand_in(*args: Any) -> Any:
        number = position[0]
        if number >= len(sent) or visible.calls[number].helper or literal(args) != visible.calls[number].args:
            raise _Beyond
        position[0] += 1
        got = _value(results[number])
        return _replayed(got, args) if visible.calls[number].after else got

    def through(helper: Callable[..., Any], label: str, *args: Any) -> Any:
        number = position[0]
        if number >= len(sent) or visible.calls[number].helper != getattr(helper, "__name__", ""):
            raise _Beyond
        if literal(args) != visible.calls[number].args:
            raise _Beyond
        position[0] += 1
        return _value(results[number])

    stand_in.grader_side = True  # type: ignore[attr-defined]
    stand_in.through = through  # type: ignore[attr-defined]
    namespace = {**copy.copy(visible.namespace), visible.function: stand_in}
    try:
        _quietly(visible.line, namespace)
    except _Beyond:
        return ""
    except (Exception, Delegated) as err:
        return _failure(visible, results, position[0], err)
    return ""


def _failure(visible: Visible, results: list[Any], done: int, err: BaseException) -> str:
    """The message for a failed visible check: its input, the kind of
    mistake and the check's hint when that names no expected value."""
    name = visible.line.split("(")[0].strip()
    text = str(err)
    if isinstance(err, CheckFailed) and (" calls bpe_lab." in text or " reaches bpe_lab." in text):
        return short_text(f"the self-check {name}: {text.split(' (the grader')[0]}", 300)
    hint = err.hint if isinstance(err, CheckFailed) else ""
    if isinstance(err, CheckFailed) and not hint and "is not written yet" in text:
        hint = text
    hint = f": {short_text(hint, 300)}" if hint else ""
    if done == 0:
        return f"the self-check {name} failed before calling {visible.function}{hint} (run it in your notebook)"
    call, result = visible.calls[done - 1], results[done - 1]
    shown = short_text(call.shown or (call.args or "()")[1:-1].rstrip(","), 160)
    if call.helper:  # the case the check names (its inputs), else the helper's call as the check labels it (shown)
        case = short_text(err.case if isinstance(err, CheckFailed) and err.case else call.shown, 200)
        if isinstance(result, dict) and "repr" in result and same(_value_of(result, call), call.value):
            return f"the self-check {name} failed after its cases ran{hint} (run it in your notebook to see why)"
        kind = "returned a wrong value" if isinstance(err, CheckFailed) and err.case else _kind(result, call)
        return f"the self-check {name} failed on case {done}: {case} {kind}{hint} (run it in your notebook to see why)"
    if isinstance(result, dict) and "repr" in result and same(_value_of(result, call), call.value):
        if call.after:  # the value is right, what the call did to its arguments is not
            return f"the self-check {name} failed on case {done}: {visible.function}({shown}){hint}"
        return f"the self-check {name} failed after its cases ran{hint} (run it in your notebook to see why)"
    return (
        f"the self-check {name} failed on case {done}: {visible.function}({shown}) {_kind(result, call)}{hint} "
        "(run it in your notebook to see why)"
    )


def short_text(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters with "..." at the end."""
    return text if len(text) <= limit else text[: limit - 3] + "..."
