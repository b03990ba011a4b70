"""Step through compression, training and encoding in JupyterLab.

Over ``views``, which draws one step as HTML, this module adds state and
controls: an ipywidgets box per algorithm whose buttons, play control and
slider move the current step and put that step's view on screen.

Each stepper holds a precomputed list of states (a ``Trace`` for training,
``steps.encode_steps`` for encoding, ``steps.compression_states`` for Gage's
compression) and one integer, the current round. The buttons, the play
control and the slider only move that integer; every move re-renders the view
with a pure function from ``views``. So the state is readable from Python
(``.round``, ``.merges``, ``.highlighted_pair``), an exercise or test can
drive it with ``.next()`` / ``.prev()`` / ``.reset()``, and ``button.click()``
goes through exactly the same path as a learner's click.

>>> stepper = MergeStepper({"low": 5, "lower": 2, "newest": 6, "widest": 3}, num_merges=5)
>>> stepper.highlighted_pair
('e', 's')
>>> stepper.next_button.click(); stepper.round, stepper.merges
(1, [('e', 's')])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import ipywidgets as widgets
from IPython.display import HTML

from bpe_lab.core.encode import longest_match, vocabulary
from bpe_lab.core.pretokenize import word_frequencies
from bpe_lab.core.symbols import END_OF_WORD, TIE_BREAKS, Pair, TieBreak
from bpe_lab.core.train import Trace, train_trace
from bpe_lab.ui.labels import labels
from bpe_lab.ui.steps import compression_states, compression_stop, encode_steps
from bpe_lab.ui.tokens import TokenizerLike, tokens_html
from bpe_lab.ui.views import compression_round_html, encode_step_html, merge_round_html
from bpe_lab.variants.compression import Compressed, compress

__all__ = ["MergeStepper", "EncodeStepper", "CompressionStepper", "show_tokens"]

#: Play-control speeds: label key -> milliseconds per step.
SPEEDS = {"slow": 1500, "normal": 800, "fast": 300}


_NARROW = {"description_width": "initial"}  # the label takes its own width, not a fixed column


def _layout(width: str) -> widgets.Layout:
    """A fresh layout per control: a layout is itself a widget, so sharing
    one between controls would resize them together."""
    return widgets.Layout(width=width, margin="2px 4px")


def _button(text: str, style: str = "") -> widgets.Button:
    return widgets.Button(description=text, tooltip=text, button_style=style, layout=_layout("auto"))


class _Stepper:
    """Navigation shared by every stepper: buttons, play, speed, slider.

    The slider's value *is* the current round; ``go`` sets it and the slider's
    observer re-renders, so a click, a play tick, a drag and a Python call
    all take the same path. Subclasses give ``_total`` and ``_html``.
    """

    _counter_key, _of_key = "round", "round_of"
    _next_key = "next_merge"  # the label of the forward button

    def __init__(self, lang: str) -> None:
        self.lang = lang
        self.labels = labels(lang)
        self.view = widgets.HTML()
        self._build_controls(self.labels)
        self._wire()
        self.widget = widgets.VBox([self.controls, self.view])
        self.widget.add_class("bpe-stepper")
        self._render()

    def _build_controls(self, L: dict[str, str]) -> None:
        self.prev_button = _button(L["previous"])
        self.next_button = _button(L[self._next_key], "primary")
        self.reset_button = _button(L["reset"])
        last = self._total()
        self.play = widgets.Play(
            value=0,
            min=0,
            max=last,
            interval=SPEEDS["normal"],
            show_repeat=False,
            tooltip=L["play"],
            layout=_layout("auto"),
        )
        speeds = [(L[key], ms) for key, ms in SPEEDS.items()]
        self.speed = widgets.Dropdown(
            options=speeds, value=SPEEDS["normal"], description=L["speed"], style=_NARROW, layout=_layout("150px")
        )
        self.slider = widgets.IntSlider(
            value=0, min=0, max=last, description=L[self._counter_key], style=_NARROW, layout=_layout("300px")
        )
        self.controls = widgets.HBox(
            [self.prev_button, self.next_button, self.reset_button, self.play, self.speed, self.slider],
            layout=widgets.Layout(flex_flow="row wrap", align_items="center"),
        )

    def _wire(self) -> None:
        """Every control moves the one slider value; only its observer renders."""
        widgets.link((self.play, "value"), (self.slider, "value"))
        widgets.link((self.speed, "value"), (self.play, "interval"))
        self.prev_button.on_click(lambda _: self.prev())
        self.next_button.on_click(lambda _: self.next())
        self.reset_button.on_click(lambda _: self.reset())
        self.slider.observe(lambda _: self._render(), names="value")

    # -- state

    @property
    def round(self) -> int:
        """How many steps have been taken (0 = the starting state)."""
        return int(self.slider.value)

    @round.setter
    def round(self, number: int) -> None:
        self.go(number)

    @property
    def total(self) -> int:
        """The last round; ``next()`` does nothing there."""
        return self._total()

    @property
    def html(self) -> str:
        """The HTML currently shown."""
        return str(self.view.value)

    # -- moves (the buttons call these)

    def go(self, number: int) -> None:
        """Jump to round ``number``, clamped to 0..total."""
        self.slider.value = max(0, min(int(number), self._total()))

    def next(self) -> None:
        """One step forward: merge (or replace) the highlighted pair."""
        self.go(self.round + 1)

    def prev(self) -> None:
        """One step back."""
        self.go(self.round - 1)

    def reset(self) -> None:
        """Stop playing and go back to the start."""
        self.play.playing = False
        self.go(0)

    # -- rendering

    def _set_total(self) -> None:
        """After the states changed: new bounds, and a re-render even if the
        round number itself stayed the same."""
        self.slider.max = self.play.max = self._total()
        self._render()

    def _render(self) -> None:
        self.view.value = self._html(self.round)
        self.prev_button.disabled = self.round == 0
        self.next_button.disabled = self.round >= self._total()

    def _total(self) -> int:
        raise NotImplementedError

    def _html(self, number: int) -> str:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.labels[self._of_key].format(round=self.round, total=self._total())}>"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        """Show the widget when a notebook cell ends with the stepper.

        The bundle also carries the current view as plain HTML, so a notebook
        saved with this output still shows the starting state where no kernel
        runs (a forge's or nbviewer's static page); JupyterLab prefers the
        live widget.
        """
        bundle: dict[str, Any] = self.widget._repr_mimebundle_(**kwargs)
        bundle["text/html"] = self.html
        bundle["text/plain"] = repr(self)
        return bundle


class MergeStepper(_Stepper):
    """Train BPE one merge at a time (notebook 02).

    ``word_freq_or_text`` is a word -> frequency dict, or text that is split
    on white space and counted. The view shows the corpus with every
    occurrence of the pair about to be merged highlighted, that round's pair
    counts (winner and ties marked, and which tie-break rule decided), the
    rules learned so far and the vocabulary size. Switching the tie-break
    selector retrains from round 0, so the two rules can be compared.
    """

    def __init__(
        self,
        word_freq_or_text: Mapping[str, int] | str,
        num_merges: int = 10,
        *,
        tie_break: TieBreak = "first",
        end_of_word: str | None = END_OF_WORD,
        lang: str = "en",
    ) -> None:
        if isinstance(word_freq_or_text, str):
            self.word_freq = word_frequencies(word_freq_or_text)
        else:
            self.word_freq = dict(word_freq_or_text)
        self.num_merges = num_merges
        self.end_of_word = end_of_word
        self.trace = self._train(tie_break)
        L = labels(lang)
        self.tie_break_selector = widgets.ToggleButtons(
            options=[(L["rule_" + rule], rule) for rule in TIE_BREAKS],
            value=tie_break,
            tooltips=[L["tie_break"]] * len(TIE_BREAKS),
            style={"button_width": "auto"},
        )
        super().__init__(lang)
        self.tie_break_selector.observe(lambda change: setattr(self, "tie_break", change["new"]), names="value")
        rule_row = widgets.HBox([widgets.Label(L["tie_break"] + L["colon"]), self.tie_break_selector])
        self.widget.children = (self.controls, rule_row, self.view)

    def _train(self, tie_break: TieBreak) -> Trace:
        # Running out of pairs early is shown in the view (the last round
        # adds "no pair is left to merge" when trace.stopped_early), so the
        # trainer's warning would only be noise here.
        return train_trace(
            self.word_freq, self.num_merges, tie_break=tie_break, end_of_word=self.end_of_word, on_short="ignore"
        )

    @property
    def tie_break(self) -> TieBreak:
        """The rule that picks among pairs tied for the highest count."""
        return self.trace.tie_break

    @tie_break.setter
    def tie_break(self, rule: TieBreak) -> None:
        """Retrain with another tie-break rule and start again at round 0."""
        if rule == self.trace.tie_break:
            return
        self.trace = self._train(rule)
        self.tie_break_selector.value = rule
        self.play.playing = False
        self.slider.value = 0
        self._set_total()

    @property
    def merges(self) -> list[Pair]:
        """The merge rules learned so far, in order."""
        return self.trace.merges[: self.round]

    @property
    def highlighted_pair(self) -> Pair | None:
        """The pair merged by the next step (None after the last round)."""
        rounds = self.trace.rounds
        return rounds[self.round].pair if self.round < len(rounds) else None

    @property
    def vocab_size(self) -> int:
        return len(vocabulary(self.merges, self.trace.base_symbols))

    def _total(self) -> int:
        return len(self.trace.rounds)

    def _html(self, number: int) -> str:
        return merge_round_html(self.trace, number, lang=self.lang)


class EncodeStepper(_Stepper):
    """Encode one word by rank replay, one merge at a time (notebook 03).

    Each step shows every adjacent pair with its rank (or "no rule") and
    merges the lowest-ranked one; the last step shows the final tokens. With
    ``compare=True`` greedy longest match is shown beside it, with the tokens
    where the two disagree outlined.
    """

    _counter_key, _of_key = "step", "step_of"

    def __init__(
        self,
        word: str,
        merges: Sequence[Pair],
        *,
        end_of_word: str | None = END_OF_WORD,
        start_of_word: str | None = None,
        compare: bool = True,
        lang: str = "en",
    ) -> None:
        self.word = word
        markers = {"end_of_word": end_of_word, "start_of_word": start_of_word}
        self.steps = encode_steps(word, merges, **markers)
        self.longest = longest_match(word, merges, **markers) if compare else None
        super().__init__(lang)

    @property
    def symbols(self) -> list[str]:
        """The sequence at the current step."""
        return list(self.steps[self.round].symbols)

    @property
    def highlighted_pair(self) -> Pair | None:
        """The lowest-ranked pair, merged by the next step (None when done)."""
        return self.steps[self.round].best

    @property
    def tokens(self) -> list[str]:
        """The final tokens (the same at every step)."""
        return list(self.steps[-1].symbols)

    def _total(self) -> int:
        return len(self.steps) - 1

    def _html(self, number: int) -> str:
        return encode_step_html(self.steps, number, word=self.word, longest=self.longest, lang=self.lang)


class CompressionStepper(_Stepper):
    """Gage's byte-pair compression, one replacement at a time (notebook 01).

    ``data`` is bytes (text is encoded as UTF-8 first). Each round shows the
    pair about to be replaced, highlighted wherever it occurs, the unused byte
    that replaces it, the shrinking data and the table so far; the last one
    says which stopping rule fired. Gage replaces pairs (he does not merge
    them), so the forward button says "next replacement".
    """

    _next_key = "next_replace"

    def __init__(self, data: bytes | str, *, max_rounds: int | None = None, lang: str = "en") -> None:
        self.max_rounds = max_rounds
        self.original = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        self.packed: Compressed = compress(self.original, max_rounds=max_rounds)
        self.states = compression_states(self.original, self.packed)
        super().__init__(lang)

    @property
    def data(self) -> bytes:
        """The data after the current round."""
        return self.states[self.round]

    @property
    def table(self) -> dict[int, tuple[int, int]]:
        """Code byte -> the pair it replaced, for the rounds taken so far."""
        return dict(list(self.packed.table.items())[: self.round])

    @property
    def highlighted_pair(self) -> tuple[int, int] | None:
        """The pair of byte values the next round replaces (None when done)."""
        rounds = self.packed.rounds
        return rounds[self.round].pair if self.round < len(rounds) else None

    def _total(self) -> int:
        return len(self.states) - 1

    def _html(self, number: int) -> str:
        return compression_round_html(self.states, self.packed, number, lang=self.lang, max_rounds=self.max_rounds)

    @property
    def stopped_by(self) -> str:
        """Which stopping rule ended compression: ``"no_repeat"``,
        ``"no_free_byte"`` or ``"max_rounds"`` (see ``steps.compression_stop``)."""
        return compression_stop(self.packed, self.max_rounds)


def show_tokens(text: str, tokenizer: TokenizerLike, *, lang: str = "en", show_bytes: bool = True) -> HTML:
    """Display ``text`` as coloured token spans with their ids and bytes.

    Works with any tokenizer that has ``.encode(text) -> list[int]`` and
    ``.vocab: dict[int, bytes]``. Returns an ``IPython.display.HTML``, so it
    shows when it ends a cell; its ``.data`` is the HTML string.
    """
    view = tokens_html(text, tokenizer, lang=lang, show_bytes=show_bytes)
    return HTML(view)  # type: ignore[no-untyped-call]  # IPython's HTML.__init__ has no annotations
