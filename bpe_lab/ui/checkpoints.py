"""Checkpoints: short questions a learner answers right after the idea they test.

Beside ``widgets``, whose steppers *show* an algorithm, this module *asks*
about it, in three kinds:

- ``Predict``: predict-then-reveal. The learner picks or types what they
  expect ("which pair merges next?"), then the reveal shows the truth and
  why, whatever they predicted.
- ``Quiz``: multiple choice, with an explanation for every wrong option, so
  a wrong pick teaches something; the learner may try again.
- ``Numeric``: a number, right within a tolerance; known wrong numbers (the
  count without word frequencies, say) get their own explanation.

Each is an ipywidgets box of real controls (radio buttons, a text box,
buttons), so it works from the keyboard (Tab, arrow keys, Enter) and the
mouse, and from Python the same way: ``quiz.answer("(e, s)")`` returns and
sets ``quiz.feedback`` (plain text) and ``quiz.correct``. Its strings come
from ``labels`` (``lang="zh"`` for Chinese; the question itself is the
author's). Saved into a notebook, it also carries a static form of its
current state, legible without the style sheet and without a kernel: the
question, the options lettered A, B, C in their own text (JupyterLab
numbers any ``<ol>`` 1, 2, 3 whatever its ``type``), and the answer behind
a ``<details>`` element, which opens with a click even in an untrusted
notebook or on a forge.

Why the judging is strict: options often differ only in spaces or quotes
(``['hello', '  world']`` against ``['hello', ' ', ' world']``), so an
option is chosen by its exact text or by its index in display order,
never after ``normalize``; only a typed ``Predict`` answer is normalised,
and a text that one of its ``notes`` calls wrong is never accepted. A
checkpoint that could judge a wrong option right, show two options alike,
or take a ``mistakes`` number for the answer fails when it is built
(``ValueError`` naming the option); judging never depends on ``lang``.

Why the order is shuffled: authors write the right option first. Options
are shown in an order drawn from a SHA-256 of the question and the options
(never Python's salted ``hash``), so it is the same in every run and saved
outputs stay stable; ``.options`` is that display order and ``answer(i)``
counts in it. Options that all read as numbers are sorted instead;
``shuffle=False`` keeps the author's order, ``shuffle=True`` forces a shuffle.

What is shown: Markdown code spans (`` `like this` ``) become ``<code>``
(tinted inline: a live widget gets no tint from JupyterLab),
everything else is escaped; white space that matters (a run of spaces, a
space at either end, tabs, newlines) is drawn as ``␣``, ``⇥`` and ``↵``
as the token views do, in the HTML and in the radio labels. The plain-text
``.feedback`` keeps the author's text as written, backticks included.

``audit_made()`` lists every checkpoint built in this process as plain data
(its kind, question, option count, the right option's display position,
and any problem found by judging every option in English and Chinese), for
a course-wide check after running each notebook.

>>> quiz = Quiz("2 + 2?", {"3": "one short", "4": "2 + 2 = 4", "5": "one over"}, answer="4")
>>> quiz.options  # numbers are kept sorted
('3', '4', '5')
>>> quiz.answer("5")
'Not quite. one over'
>>> quiz.answer(1), quiz.correct
('Correct. 2 + 2 = 4', True)
>>> Quiz("Pick the `ab` pair", {"a b": "yes", "b c": "no", "c d": "no"}, answer="a b").options
('c d', 'a b', 'b c')
>>> audit_made()[-1]["answer_position"]
1
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from html import escape
from typing import Any

import ipywidgets as widgets

from bpe_lab.ui.css import CHECKPOINT_CSS, CSS, FEEDBACK_COLOURS, style
from bpe_lab.ui.labels import LANGS, labels
from bpe_lab.ui.tokens import WHITESPACE_MARKS

__all__ = [
    "Predict",
    "Quiz",
    "Numeric",
    "normalize",
    "typed_number",
    "audit_made",
    "display_order",
    "rich",
    "plain",
    "option_letter",
]

_BOX = "border: 1px solid rgba(128, 128, 128, .5); border-left: 4px solid #0ea5e9; border-radius: 6px; padding: 6px"
#: The static form's option list: its letters are written in each item's
#: text, since JupyterLab numbers every ``<ol>`` 1, 2, 3 whatever its
#: ``type`` (and a forge may drop the attribute), so no marker is drawn.
_OPTION_LIST = "list-style: none; margin: 4px 0; padding-left: 12px"
_COLOURS = {True: FEEDBACK_COLOURS["correct"], False: FEEDBACK_COLOURS["wrong"], None: "inherit"}

#: How an explanation must not start: the verdict is the widget's to say
#: ("Correct. Right: ..." said it twice).
VERDICT_WORDS = {"en": ("right", "correct", "wrong"), "zh": ("对", "正确", "错")}

_MADE: list[dict[str, Any]] = []


def normalize(text: str) -> str:
    """How typed ``Predict`` answers are compared: case, spaces, brackets,
    commas and quotes do not matter, so ``(e, s)``, ``e s`` and
    ``('e', 's')`` agree. Never used for options.

    >>> normalize("('E', 's')") == normalize(" e  s ")
    True
    """
    return re.sub(r"[\s(),'\"]+", " ", text).strip().casefold()


# -- showing text: code spans and white space that matters

_CODE = re.compile(r"`([^`\n]+)`")
_INNER = r"\t|\n| {2,}"
_SIGNIFICANT = {
    (start, end): re.compile(_INNER + ("|^ +" if start else "") + ("| +$" if end else ""))
    for start in (False, True)
    for end in (False, True)
}


def _spaces(
    text: str, esc: Callable[[str], str], mark: Callable[[str], str], start: bool = True, end: bool = True
) -> str:
    """``text`` with each white-space character that matters replaced by
    ``mark(char)`` and the rest passed through ``esc``; spaces at its
    start (end) matter when it starts (ends) the whole text or a code span."""
    out, at = [], 0
    for found in _SIGNIFICANT[start, end].finditer(text):
        out.append(esc(text[at : found.start()]))
        out.extend(mark(char) for char in found.group())
        at = found.end()
    out.append(esc(text[at:]))
    return "".join(out)


def _shown(text: str, code: Callable[[str], str], esc: Callable[[str], str], mark: Callable[[str], str]) -> str:
    out, at = [], 0
    for found in _CODE.finditer(text):
        out.append(_spaces(text[at : found.start()], esc, mark, start=at == 0, end=False))
        out.append(code(_spaces(found.group(1), esc, mark)))
        at = found.end()
    out.append(_spaces(text[at:], esc, mark, start=at == 0, end=True))
    return "".join(out)


def rich(text: str) -> str:
    """``text`` as HTML: escaped, code spans as ``<code>``, white space that
    matters made visible.

    >>> rich("cut `a  b` <here>").replace(style("code"), "")
    'cut <code>a<span class="bpe-ws">␣</span><span class="bpe-ws">␣</span>b</code> &lt;here&gt;'
    """
    return _shown(
        text,
        lambda s: f"<code{style('code')}>{s}</code>",
        escape,
        lambda c: f'<span class="bpe-ws">{WHITESPACE_MARKS[c]}</span>',
    )


def plain(text: str) -> str:
    """``text`` as a radio label shows it: backticks dropped, white space
    that matters made visible.

    >>> plain("['hello', '  world']")
    "['hello', '␣␣world']"
    """
    return _shown(text, lambda s: s, lambda s: s, lambda c: WHITESPACE_MARKS[c])


def _rich_lines(text: str) -> str:
    return "\n".join(rich(line) for line in text.split("\n"))


def option_letter(index: int) -> str:
    """The letter the static form writes before the option at display
    position ``index``: A, B, C, ...

    >>> option_letter(0), option_letter(2)
    ('A', 'C')
    """
    if not 0 <= index < 26:
        raise IndexError(f"options are lettered A..Z; there is no letter for position {index}")
    return chr(ord("A") + index)


# -- order


def _number(text: str) -> float | None:
    try:
        return float(text.replace(",", "").replace("_", "").strip())
    except ValueError:
        return None


#: Fraction bars and minus signs a keyboard or an input method may type,
#: read as ``/`` and ``-`` (NFKC already maps full-width ``／`` and ``－``).
_TYPED_SIGNS = str.maketrans({"\u2044": "/", "\u2215": "/", "\u00f7": "/", "\u2212": "-", "\u2013": "-"})


def typed_number(text: str) -> float | str:
    """A ``Numeric`` answer as a learner types it: a decimal (``0.25``,
    ``1,000``, ``1e-3``) or one fraction (``27/8``, ``1 / 3``, ``−1/4``
    with a Unicode minus, full-width ``１／３``, ``½``, ``0.5/2``), as a
    float; when it is neither, the ``labels`` key saying why
    (``not_a_number``, ``not_a_fraction``, ``zero_denominator``).

    Only typed answers are read this way: an option of a ``Quiz`` that
    reads "1/2" is text, and sorts as text (``display_order``).

    >>> typed_number(" 27 / 8 "), typed_number("−1/4"), typed_number("½")
    (3.375, -0.25, 0.5)
    >>> typed_number("1/0"), typed_number("1/2/3"), typed_number("nine")
    ('zero_denominator', 'not_a_fraction', 'not_a_number')
    """
    plain = unicodedata.normalize("NFKC", text).translate(_TYPED_SIGNS).replace(",", "").replace("_", "")
    if "/" not in plain:
        number = _number(plain)
        return "not_a_number" if number is None else number
    try:
        over, under = (Fraction(side.strip()) for side in plain.split("/"))
    except ValueError:  # a side that is not a number, or more than one bar
        return "not_a_fraction"
    if under == 0:
        return "zero_denominator"
    return float(over / under)


def display_order(question: str, options: Sequence[str], shuffle: bool | None = None) -> list[int]:
    """The author's indices of ``options`` in display order: a permutation
    from SHA-256 of the question and the options (stable across runs and
    machines); numbers sorted when ``shuffle`` is None; as given when False."""
    indices = list(range(len(options)))
    if shuffle is False:
        return indices
    numbers = [_number(option) for option in options]
    if shuffle is None and all(n is not None for n in numbers):
        return sorted(indices, key=lambda i: (numbers[i], i))
    seed = hashlib.sha256("\x1f".join([question, *options]).encode()).digest()
    return sorted(indices, key=lambda i: hashlib.sha256(seed + options[i].encode()).digest())


def _check_options(options: Sequence[str]) -> None:
    if len(options) > 26:
        raise ValueError(f"at most 26 options (lettered A..Z); got {len(options)}")
    seen: dict[str, str] = {}
    for option in options:
        if not isinstance(option, str):
            raise TypeError(f"every option must be a str; got {option!r}")
        shown = plain(option)
        if shown in seen:
            same = "is given twice" if seen[shown] == option else f"displays like {seen[shown]!r} (as {shown!r})"
            raise ValueError(f"the option {option!r} {same}")
        seen[shown] = option


def _pick(options: Sequence[str], value: object) -> str | None:
    """The option ``value`` names: its exact text, or its index in display
    order; None if it names none."""
    if isinstance(value, int) and not isinstance(value, bool):
        return options[value] if 0 <= value < len(options) else None
    return value if isinstance(value, str) and value in options else None


def _option_trials(options: Sequence[str], right: str) -> list[tuple[str, object, bool]]:
    """Every option, by its text and by its display index, and whether it is right."""
    trials: list[tuple[str, object, bool]] = []
    for i, option in enumerate(options):
        trials += [(f"option {option!r}", option, option == right), (f"option {i} ({option!r})", i, option == right)]
    return trials


def _verdict_problems(texts: Mapping[str, str]) -> list[str]:
    """Explanations that start with a verdict of their own."""
    problems = []
    for where, text in texts.items():
        start = text.strip().casefold()
        for lang, words in VERDICT_WORDS.items():
            word = next((w for w in words if start.startswith(w)), None)
            if word is not None:
                problems.append(f"{where} starts with {word!r} ({lang}); the widget already says the verdict: {text!r}")
                break
    return problems


class _Checkpoint:
    """What every checkpoint shares: the question, the feedback, the reveal,
    the widget and its static form. Subclasses give ``_judge`` and
    ``_control`` (the input) and may add options to the static form."""

    kind = "checkpoint"
    options: tuple[str, ...] = ()

    def __init__(self, question: str, *, lang: str = "en") -> None:
        self.question = question
        self.lang = lang
        self.labels = labels(lang)
        self.correct: bool | None = None  # None: not answered yet
        self.feedback = ""
        self.given: object = None  # the learner's last answer
        self.revealed = False
        problems = self._judging_problems()
        if problems:
            raise ValueError(f"{type(self).__name__} {question!r}: " + "; ".join(problems))
        _MADE.append(self._audit(problems + _verdict_problems(self._explanations())))
        self.prompt = widgets.HTML(self._question_html())
        self.control = self._control()
        self.check_button = self._button(self.labels["check"], "primary")
        self.reveal_button = self._button(self.labels["reveal"], "")
        self.check_button.on_click(lambda _: self._check())
        self.reveal_button.on_click(lambda _: self.reveal())
        self.feedback_view = widgets.HTML()
        buttons = widgets.HBox([self.check_button, self.reveal_button])
        self.widget = widgets.VBox([self.prompt, self.control, buttons, self.feedback_view])
        self.widget.add_class("bpe-checkpoint")
        self._render()

    @staticmethod
    def _button(text: str, kind: str) -> widgets.Button:
        return widgets.Button(description=text, tooltip=text, button_style=kind, layout=widgets.Layout(width="auto"))

    def _radio(self) -> widgets.RadioButtons:
        """Radio buttons in display order, labelled as ``plain`` shows each
        option; the value is the option's text."""
        pairs = [(plain(option), option) for option in self.options]
        return widgets.RadioButtons(options=pairs, value=None, layout=widgets.Layout(width="auto"))

    # -- what subclasses say

    def _control(self) -> widgets.Widget:
        raise NotImplementedError

    def _value(self) -> object:
        """The answer the control holds now (None: nothing chosen)."""
        return getattr(self.control, "value", None)

    def _judge(self, value: object, L: Mapping[str, str]) -> tuple[bool | None, str]:
        """(right?, the feedback in the language of ``L``) for one answer;
        None: not an answer. Pure logic: no widget is touched."""
        raise NotImplementedError

    def _solution(self, L: Mapping[str, str]) -> str:
        """The answer and why, as plain text, for the reveal."""
        raise NotImplementedError

    def _trials(self) -> list[tuple[str, object, bool]]:
        """(what, answer, should it be right?) for the audit and validation."""
        raise NotImplementedError

    def _explanations(self) -> dict[str, str]:
        """Where -> every explanation text the author wrote."""
        raise NotImplementedError

    def _answer_position(self) -> int | None:
        return None

    # -- validation and audit

    def _judging_problems(self) -> list[str]:
        problems = []
        for lang in LANGS:
            L = labels(lang)
            for what, value, right in self._trials():
                verdict = self._judge(value, L)[0]
                if verdict is not right:
                    problems.append(f"{what} is judged {verdict} in lang={lang!r}, should be {right}")
        return problems

    def _audit(self, problems: list[str]) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "question": self.question,
            "options": len(self.options),
            "answer_position": self._answer_position(),
            "problems": problems,
        }

    # -- moves

    def answer(self, value: object) -> str:
        """Answer the question (an option's exact text or its index in
        display order, a number, a typed string); the feedback is returned
        and kept in ``.feedback``."""
        self.given = value
        self.correct, self.feedback = self._judge(value, self.labels)
        self._render()
        return self.feedback

    def reveal(self) -> str:
        """Show the answer and why, without answering."""
        self.revealed = True
        self.feedback = self._solution(self.labels)
        self._render()
        return self.feedback

    def _check(self) -> None:
        value = self._value()
        if value is None or value == "":
            key = "pick_one" if self.options else "type_number" if self.kind == "numeric" else "type_answer"
            self.feedback = self.labels[key]
            self._render()
        else:
            self.answer(value)

    # -- what is shown

    @property
    def state(self) -> str:
        """``unanswered``, ``correct``, ``wrong`` or ``revealed``."""
        if self.correct is True:
            return "correct"
        if self.correct is False:
            return "wrong"
        return "revealed" if self.revealed else "unanswered"

    def _question_html(self) -> str:
        L = self.labels
        kind = L["predict"] if self.kind == "predict" else L["checkpoint"]
        badge = f'<span class="bpe-badge"{style("badge")}>{escape(kind)}</span> '
        return f'<div{style("view")}><p style="margin: 4px 0">{badge}{rich(self.question)}</p></div>'

    def _feedback_html(self) -> str:
        if not self.feedback:
            return ""
        colour = _COLOURS[self.correct]
        return (
            f'{CHECKPOINT_CSS}<div class="bpe-feedback" role="status" aria-live="polite" data-state="{self.state}"'
            f' style="margin: 4px 0; color: {colour}; white-space: pre-wrap">{_rich_lines(self.feedback)}</div>'
        )

    def _render(self) -> None:
        self.feedback_view.value = self._feedback_html()

    @property
    def html(self) -> str:
        """The static form: question, options, the current feedback and the
        answer behind a ``<details>`` that opens without a kernel."""
        L = self.labels
        items = "".join(
            f'<li style="white-space: pre-wrap"><b>{option_letter(i)}.</b> {rich(option)}</li>'
            for i, option in enumerate(self.options)
        )
        options = f'<ol style="{_OPTION_LIST}">{items}</ol>' if items else ""
        hint = f'<p style="margin: 4px 0; opacity: .8">{escape(L["static_hint"])}</p>'
        solution = f'<div style="white-space: pre-wrap">{_rich_lines(self._solution(L))}</div>'
        details = f'<details style="margin: 4px 0"><summary>{escape(L["reveal"])}</summary>{solution}</details>'
        return (
            f'{CSS}<div class="bpe-view bpe-checkpoint" data-kind="{self.kind}" data-state="{self.state}"'
            f' lang="{self.lang}" style="{_BOX}">{self._question_html()}{options}{self._feedback_html()}'
            f"{hint}{details}</div>"
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.question}>"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        """The live widget, with the static form as ``text/html`` for pages
        without a kernel and for untrusted notebooks."""
        bundle: dict[str, Any] = self.widget._repr_mimebundle_(**kwargs)
        bundle["text/html"] = self.html
        bundle["text/plain"] = repr(self)
        return bundle


def audit_made() -> list[dict[str, Any]]:
    """Every checkpoint built in this process, oldest first, as plain data:
    ``{"kind", "question", "options": count, "answer_position": the right
    option's display index or None, "problems": [str, ...]}``. Problems come
    from judging every option (a Numeric's answer and mistakes; a typed
    Predict's answer, accepts and notes) in every language, and from
    explanations that start with a verdict ("Right: ...")."""
    return [{**entry, "problems": list(entry["problems"])} for entry in _MADE]


def _answer_is(L: Mapping[str, str], answer: str) -> str:
    """The "The answer: ANSWER." line, without a second full stop when the
    answer is a sentence of its own."""
    text = L["answer_is"].format(answer=answer)
    return text[:-1] if answer.endswith((".", "?", "!", "。", "？", "！")) else text


class Quiz(_Checkpoint):
    """Multiple choice: ``options`` maps each option's text to its
    explanation (for the right one: why it is right; for each wrong one:
    why it is wrong). A wrong answer shows its explanation and may be
    changed; the reveal shows the answer and every explanation. The
    options are shown shuffled (see the module); ``shuffle`` as in
    ``display_order``."""

    kind = "quiz"

    def __init__(
        self,
        question: str,
        options: Mapping[str, str],
        answer: str,
        *,
        lang: str = "en",
        shuffle: bool | None = None,
    ) -> None:
        _check_options(list(options))
        if answer not in options:
            raise ValueError(f"the answer {answer!r} is not one of the options {list(options)}")
        missing = [option for option, why in options.items() if not why.strip()]
        if missing:
            raise ValueError(f"every option needs an explanation; missing for {missing}")
        authored = list(options)
        self.options = tuple(authored[i] for i in display_order(question, authored, shuffle))
        self.explanations = dict(options)
        self.right = answer
        super().__init__(question, lang=lang)

    def _control(self) -> widgets.Widget:
        return self._radio()

    def _judge(self, value: object, L: Mapping[str, str]) -> tuple[bool | None, str]:
        option = _pick(self.options, value)
        if option is None:
            return None, L["pick_one"]
        verdict = L["correct" if option == self.right else "wrong"]
        return option == self.right, f"{verdict} {self.explanations[option]}"

    def _solution(self, L: Mapping[str, str]) -> str:
        lines = [_answer_is(L, self.right), L["why"] + self.explanations[self.right]]
        lines += [f"✗ {option}: {self.explanations[option]}" for option in self.options if option != self.right]
        return "\n".join(lines)

    def _trials(self) -> list[tuple[str, object, bool]]:
        return _option_trials(self.options, self.right)

    def _explanations(self) -> dict[str, str]:
        return {f"the explanation of {option!r}": why for option, why in self.explanations.items()}

    def _answer_position(self) -> int | None:
        return self.options.index(self.right)


class Predict(_Checkpoint):
    """Predict, then reveal: the learner picks one of ``options`` (shown
    shuffled, matched exactly, as in ``Quiz``) or, with no options, types an
    answer (compared with ``normalize``; ``accept`` lists other spellings
    that count). Any prediction reveals the answer and ``why``; ``notes``
    may explain particular wrong predictions (with options: keyed by the
    option's exact text), and a typed text a note explains is never right."""

    kind = "predict"

    def __init__(
        self,
        question: str,
        answer: str,
        *,
        why: str,
        options: Sequence[str] = (),
        accept: Sequence[str] = (),
        notes: Mapping[str, str] | None = None,
        lang: str = "en",
        shuffle: bool | None = None,
    ) -> None:
        notes = dict(notes or {})
        if options:
            _check_options(list(options))
            if answer not in options:
                raise ValueError(f"the answer {answer!r} is not one of the options {list(options)}")
            if accept:
                raise ValueError(f"accept {list(accept)} is for typed answers; with options only {answer!r} is right")
            stray = [key for key in notes if key not in options]
            if stray:
                raise ValueError(f"the notes {stray} name no option of {list(options)}")
            if answer in notes:
                raise ValueError(f"the answer {answer!r} has a note, as if it were wrong")
        else:
            accepted = {normalize(a): a for a in (answer, *accept)}
            clash = [key for key in notes if normalize(key) in accepted]
            if clash:
                raise ValueError(f"the notes {clash} explain a wrong answer that reads as the right one {answer!r}")
        authored = list(options)
        self.options = tuple(authored[i] for i in display_order(question, authored, shuffle))
        self.right, self.why = answer, why
        self.accept = tuple(accept)
        self.accepted = {normalize(a) for a in (answer, *accept)}
        self.raw_notes = notes
        self.notes = notes if options else {normalize(k): v for k, v in notes.items()}
        super().__init__(question, lang=lang)

    def _control(self) -> widgets.Widget:
        if self.options:
            return self._radio()
        box = widgets.Text(placeholder=self.labels["your_answer"], continuous_update=False)
        box.observe(lambda change: self.answer(change["new"]) if change["new"].strip() else None, names="value")
        return box

    def _judge(self, value: object, L: Mapping[str, str]) -> tuple[bool | None, str]:
        if self.options:
            text = _pick(self.options, value)
            if text is None:
                return None, L["pick_one"]
            right, key = text == self.right, text
        else:
            key = normalize(str(value))
            right = key in self.accepted and key not in self.notes
        note = "" if right else self.notes.get(key, "")
        verdict = L["correct" if right else "wrong"]
        return right, " ".join(filter(None, [verdict, note, self._solution(L)]))

    def _solution(self, L: Mapping[str, str]) -> str:
        return _answer_is(L, self.right) + " " + L["why"] + self.why

    def _trials(self) -> list[tuple[str, object, bool]]:
        if self.options:
            return _option_trials(self.options, self.right)
        right: list[tuple[str, object, bool]] = [(f"the accepted {a!r}", a, True) for a in (self.right, *self.accept)]
        return right + [(f"the noted {k!r}", k, False) for k in self.raw_notes]

    def _explanations(self) -> dict[str, str]:
        return {"why": self.why, **{f"the note on {k!r}": v for k, v in self.raw_notes.items()}}

    def _answer_position(self) -> int | None:
        return self.options.index(self.right) if self.options else None


class Numeric(_Checkpoint):
    """A number, right within ``tolerance``; ``mistakes`` maps numbers a
    classic mistake gives to the explanation of that mistake (a mistake
    within the tolerance of the answer is refused: it would be judged right)."""

    kind = "numeric"

    def __init__(
        self,
        question: str,
        answer: float,
        *,
        why: str,
        tolerance: float = 0.0,
        mistakes: Mapping[float, str] | None = None,
        lang: str = "en",
    ) -> None:
        if tolerance < 0:
            raise ValueError(f"tolerance must be >= 0, got {tolerance}")
        self.right, self.why, self.tolerance = answer, why, tolerance
        self.mistakes = dict(mistakes or {})
        near = [wrong for wrong in self.mistakes if self._close(wrong, answer)]
        if near:
            raise ValueError(f"the mistakes {near} are within ±{tolerance:g} of the answer {answer:g}: judged right")
        super().__init__(question, lang=lang)

    def _control(self) -> widgets.Widget:
        box = widgets.Text(placeholder=self.labels["your_answer"], continuous_update=False)
        box.observe(lambda change: self.answer(change["new"]) if change["new"].strip() else None, names="value")
        return box

    def _close(self, number: float, target: float) -> bool:
        return math.isclose(number, target, abs_tol=self.tolerance + 1e-12)

    def _judge(self, value: object, L: Mapping[str, str]) -> tuple[bool | None, str]:
        number = typed_number(str(value))
        if isinstance(number, str):
            return None, L[number].format(text=value)
        if self._close(number, self.right):
            return True, f"{L['correct']} {self._solution(L)}"
        note = next((why for wrong, why in self.mistakes.items() if self._close(number, wrong)), "")
        return False, " ".join(filter(None, [L["wrong"], note, L["try_again"]]))

    def _solution(self, L: Mapping[str, str]) -> str:
        within = " " + L["within"].format(tolerance=f"{self.tolerance:g}") if self.tolerance else ""
        shown = f"{self.right:g}{within}"
        return _answer_is(L, shown) + " " + L["why"] + self.why

    def _trials(self) -> list[tuple[str, object, bool]]:
        trials: list[tuple[str, object, bool]] = [(f"the answer {self.right!r}", str(self.right), True)]
        return trials + [(f"the mistake {wrong!r}", str(wrong), False) for wrong in self.mistakes]

    def _explanations(self) -> dict[str, str]:
        return {"why": self.why, **{f"the mistake {k!r}": v for k, v in self.mistakes.items()}}
