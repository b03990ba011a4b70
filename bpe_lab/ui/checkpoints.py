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
question, the options, and the answer behind a ``<details>`` element, which
opens with a click even in an untrusted notebook or on a forge.

>>> quiz = Quiz("2 + 2?", {"3": "one short", "4": "2 + 2 = 4", "5": "one over"}, answer="4")
>>> quiz.answer("5")
'Not quite. one over'
>>> quiz.answer(1), quiz.correct
('Correct. 2 + 2 = 4', True)
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

import ipywidgets as widgets

from bpe_lab.ui.css import CSS, style
from bpe_lab.ui.labels import labels

__all__ = ["Predict", "Quiz", "Numeric", "normalize"]

_BOX = "border: 1px solid rgba(128, 128, 128, .5); border-left: 4px solid #0ea5e9; border-radius: 6px; padding: 6px"
_COLOURS = {True: "#15803d", False: "#b91c1c", None: "inherit"}


def normalize(text: str) -> str:
    """How typed answers are compared: case, spaces, brackets, commas and
    quotes do not matter, so ``(e, s)``, ``e s`` and ``('e', 's')`` agree.

    >>> normalize("('E', 's')") == normalize(" e  s ")
    True
    """
    return re.sub(r"[\s(),'\"]+", " ", text).strip().casefold()


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

    # -- what subclasses say

    def _control(self) -> widgets.Widget:
        raise NotImplementedError

    def _value(self) -> object:
        """The answer the control holds now (None: nothing chosen)."""
        raise NotImplementedError

    def _judge(self, value: object) -> tuple[bool | None, str]:
        """(right?, the feedback) for one answer; None: not an answer."""
        raise NotImplementedError

    def _solution(self) -> str:
        """The answer and why, as plain text, for the reveal."""
        raise NotImplementedError

    # -- moves

    def answer(self, value: object) -> str:
        """Answer the question (an option's text or index, a number, a
        typed string); the feedback is returned and kept in ``.feedback``."""
        self.given = value
        self.correct, self.feedback = self._judge(value)
        self._render()
        return self.feedback

    def reveal(self) -> str:
        """Show the answer and why, without answering."""
        self.revealed = True
        self.feedback = self._solution()
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
        return f'<div{style("view")}><p style="margin: 4px 0">{badge}{escape(self.question)}</p></div>'

    def _feedback_html(self) -> str:
        if not self.feedback:
            return ""
        colour = _COLOURS[self.correct]
        return (
            f'<div class="bpe-feedback" role="status" aria-live="polite" data-state="{self.state}"'
            f' style="margin: 4px 0; color: {colour}; white-space: pre-wrap">{escape(self.feedback)}</div>'
        )

    def _render(self) -> None:
        self.feedback_view.value = self._feedback_html()

    @property
    def html(self) -> str:
        """The static form: question, options, the current feedback and the
        answer behind a ``<details>`` that opens without a kernel."""
        L = self.labels
        items = "".join(f"<li>{escape(option)}</li>" for option in self.options)
        options = f'<ol type="A" style="margin: 4px 0; padding-left: 28px">{items}</ol>' if items else ""
        hint = f'<p style="margin: 4px 0; opacity: .8">{escape(L["static_hint"])}</p>'
        solution = f'<div style="white-space: pre-wrap">{escape(self._solution())}</div>'
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


def _answer_is(L: Mapping[str, str], answer: str) -> str:
    """The "The answer: ANSWER." line, without a second full stop when the
    answer is a sentence of its own."""
    text = L["answer_is"].format(answer=answer)
    return text[:-1] if answer.endswith((".", "?", "!", "。", "？", "！")) else text


def _pick(options: Sequence[str], value: object) -> str | None:
    """The option ``value`` names: its text (compared with ``normalize``),
    or its index; None if it names none."""
    if isinstance(value, int) and not isinstance(value, bool):
        return options[value] if 0 <= value < len(options) else None
    wanted = normalize(str(value))
    return next((option for option in options if normalize(option) == wanted), None)


class Quiz(_Checkpoint):
    """Multiple choice: ``options`` maps each option's text to its
    explanation (for the right one: why it is right; for each wrong one:
    why it is wrong). A wrong answer shows its explanation and may be
    changed; the reveal shows the answer and every explanation."""

    kind = "quiz"

    def __init__(self, question: str, options: Mapping[str, str], answer: str, *, lang: str = "en") -> None:
        if answer not in options:
            raise ValueError(f"the answer {answer!r} is not one of the options {list(options)}")
        missing = [option for option, why in options.items() if not why.strip()]
        if missing:
            raise ValueError(f"every option needs an explanation; missing for {missing}")
        self.options = tuple(options)
        self.explanations = dict(options)
        self.right = answer
        super().__init__(question, lang=lang)

    def _control(self) -> widgets.Widget:
        return widgets.RadioButtons(options=list(self.options), value=None, layout=widgets.Layout(width="auto"))

    def _value(self) -> object:
        return getattr(self.control, "value", None)

    def _judge(self, value: object) -> tuple[bool | None, str]:
        option = _pick(self.options, value)
        if option is None:
            return None, self.labels["pick_one"]
        verdict = self.labels["correct" if option == self.right else "wrong"]
        return option == self.right, f"{verdict} {self.explanations[option]}"

    def _solution(self) -> str:
        L = self.labels
        lines = [_answer_is(L, self.right), L["why"] + self.explanations[self.right]]
        lines += [f"✗ {option}: {why}" for option, why in self.explanations.items() if option != self.right]
        return "\n".join(lines)


class Predict(_Checkpoint):
    """Predict, then reveal: the learner picks one of ``options`` or, with
    no options, types an answer (compared with ``normalize``; ``accept``
    lists other spellings that count). Any prediction reveals the answer
    and ``why``; ``notes`` may explain particular wrong predictions."""

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
    ) -> None:
        if options and answer not in options:
            raise ValueError(f"the answer {answer!r} is not one of the options {list(options)}")
        self.options = tuple(options)
        self.right, self.why = answer, why
        self.accepted = {normalize(a) for a in (answer, *accept)}
        self.notes = {normalize(k): v for k, v in (notes or {}).items()}
        super().__init__(question, lang=lang)

    def _control(self) -> widgets.Widget:
        if self.options:
            return widgets.RadioButtons(options=list(self.options), value=None, layout=widgets.Layout(width="auto"))
        box = widgets.Text(placeholder=self.labels["your_answer"], continuous_update=False)
        box.observe(lambda change: self.answer(change["new"]) if change["new"].strip() else None, names="value")
        return box

    def _value(self) -> object:
        return getattr(self.control, "value", None)

    def _judge(self, value: object) -> tuple[bool | None, str]:
        text = _pick(self.options, value) if self.options else str(value)
        if text is None:
            return None, self.labels["pick_one"]
        right = normalize(text) in self.accepted
        note = "" if right else self.notes.get(normalize(text), "")
        verdict = self.labels["correct" if right else "wrong"]
        return right, " ".join(filter(None, [verdict, note, self._solution()]))

    def _solution(self) -> str:
        L = self.labels
        return _answer_is(L, self.right) + " " + L["why"] + self.why


class Numeric(_Checkpoint):
    """A number, right within ``tolerance``; ``mistakes`` maps numbers a
    classic mistake gives to the explanation of that mistake."""

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
        super().__init__(question, lang=lang)

    def _control(self) -> widgets.Widget:
        box = widgets.Text(placeholder=self.labels["your_answer"], continuous_update=False)
        box.observe(lambda change: self.answer(change["new"]) if change["new"].strip() else None, names="value")
        return box

    def _value(self) -> object:
        return getattr(self.control, "value", None)

    def _close(self, number: float, target: float) -> bool:
        return math.isclose(number, target, abs_tol=self.tolerance + 1e-12)

    def _judge(self, value: object) -> tuple[bool | None, str]:
        try:
            number = float(str(value).replace(",", "").replace("_", "").strip())
        except ValueError:
            return None, self.labels["not_a_number"].format(text=value)
        if self._close(number, self.right):
            return True, f"{self.labels['correct']} {self._solution()}"
        note = next((why for wrong, why in self.mistakes.items() if self._close(number, wrong)), "")
        return False, " ".join(filter(None, [self.labels["wrong"], note, self.labels["try_again"]]))

    def _solution(self) -> str:
        L = self.labels
        within = " " + L["within"].format(tolerance=f"{self.tolerance:g}") if self.tolerance else ""
        shown = f"{self.right:g}{within}"
        return _answer_is(L, shown) + " " + L["why"] + self.why
