"""The checkpoint widgets (Predict, Quiz, Numeric), driven headless: from
Python (``.answer``), through their controls and buttons as a click would,
in English and Chinese; their static form without a kernel or style sheet;
and ``tables.readable``."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from bpe_lab.core.train import train_trace
from bpe_lab.ui.checkpoints import Numeric, Predict, Quiz, audit_made, display_order, normalize
from bpe_lab.ui.css import CHECKPOINT_CSS, DARK_FEEDBACK_COLOURS, FEEDBACK_COLOURS, style
from bpe_lab.ui.tables import readable
from tests.test_widgets import bare_text, find, one

PAIRS = {
    "(e, s)": "(e, s), (s, t) and (t, </w>) tie at 9, and (e, s) is met first in newest.",
    "(s, t)": "(s, t) also has 9, but the first-seen rule meets (e, s) before it in newest.",
    "(l, o)": "(l, o) has only 7 (low 5 + lower 2); three pairs have 9.",
}


def quiz(lang: str = "en") -> Quiz:
    return Quiz("Which pair does round 1 merge?", PAIRS, answer="(e, s)", lang=lang)


def test_quiz_from_python():
    q = quiz()
    assert q.state == "unanswered" and q.feedback == "" and q.correct is None
    assert q.answer("(l, o)") == "Not quite. " + PAIRS["(l, o)"]
    assert q.correct is False and q.state == "wrong"
    assert q.answer("(e, s)") == "Correct. " + PAIRS["(e, s)"]
    assert q.correct is True and q.given == "(e, s)"
    assert q.options == ("(s, t)", "(e, s)", "(l, o)")  # shuffled, the same in every run
    assert q.answer(0).startswith("Not quite. (s, t) also has 9")  # by index in display order
    assert q.answer(1).startswith("Correct.")
    assert q.answer("(x, y)") == "Pick one answer, then check." and q.correct is None
    # an option is named by its exact text: nothing is normalised
    assert q.answer("('e', 's')") == "Pick one answer, then check." and q.correct is None
    assert q.answer("(e,s)") == "Pick one answer, then check." and q.answer(True).startswith("Pick")


def test_quiz_through_its_controls():
    q = quiz()
    q.check_button.click()  # nothing picked yet
    assert q.feedback == "Pick one answer, then check."
    q.control.value = "(s, t)"  # what a click on the radio button does
    q.check_button.click()
    assert q.correct is False
    assert one(q.feedback_view.value, "bpe-feedback")["data-state"] == "wrong"
    q.reveal_button.click()
    assert q.feedback.splitlines()[0] == "The answer: (e, s)."
    assert "✗ (l, o): (l, o) has only 7" in q.feedback


def test_quiz_needs_an_explanation_for_every_option():
    with pytest.raises(ValueError, match="not one of the options"):
        Quiz("?", PAIRS, answer="(t, </w>)")
    with pytest.raises(ValueError, match=r"missing for \['b'\]"):
        Quiz("?", {"a": "why a", "b": " "}, answer="a")


def test_predict_reveals_whatever_was_predicted(textbook_corpus):
    trace = train_trace(textbook_corpus, 4)
    truth = trace.rounds[3].pair  # the answer comes from the package, not typed in
    p = Predict(
        "After est</w>, which pair merges next?",
        f"({truth[0]}, {truth[1]})",
        why="l o has 7: low 5 + lower 2.",
        notes={"(o, w)": "o w also has 7, but l o is met first."},
    )
    assert p.answer("o w") == (
        "Not quite. o w also has 7, but l o is met first. The answer: (l, o). Why: l o has 7: low 5 + lower 2."
    )
    p.control.value = "l o"  # typing and pressing Enter
    assert p.correct is True and p.feedback.startswith("Correct. The answer: (l, o).")


def test_predict_with_options_and_in_chinese():
    p = Predict("下一个合并？", "(e, s)", why="先出现。", options=list(PAIRS), lang="zh")
    assert p.check_button.description == "检查" and p.reveal_button.description == "显示答案"
    assert p.answer(p.options.index("(l, o)")) == "不太对。 答案：(e, s)。 原因：先出现。"
    assert p.reveal() == "答案：(e, s)。 原因：先出现。" and p.correct is False


def test_numeric_tolerance_and_known_mistakes():
    n = Numeric(
        "What is the weighted count of (e, s) in round 1?",
        9,
        why="newest 6 + widest 3.",
        mistakes={2: "That counts each word once; weight each by its frequency."},
    )
    assert n.answer("2") == "Not quite. That counts each word once; weight each by its frequency. Try again."
    assert n.answer("nine") == "“nine” is not a number." and n.correct is None
    n.control.value = "9"  # typed, then Enter
    assert n.correct is True and n.feedback == "Correct. The answer: 9. Why: newest 6 + widest 3."
    share = Numeric("Share?", 0.17, why="111 of 667.", tolerance=0.01)
    assert share.answer("0.165") == "Correct. The answer: 0.17 (within ±0.01). Why: 111 of 667."
    assert share.answer("0.19").startswith("Not quite.")
    with pytest.raises(ValueError, match="tolerance"):
        Numeric("?", 1, why="", tolerance=-1)


@pytest.mark.parametrize("typed", ["27/8", "27 / 8", "27\t/\u20098 ", "\uff12\uff17\uff0f\uff18", "6.75/2"])
def test_numeric_takes_a_typed_fraction(typed):
    n = Numeric("Ratio?", 3.375, why="27 over 8.")
    assert n.answer(typed) == "Correct. The answer: 3.375. Why: 27 over 8." and n.correct is True


def test_numeric_takes_a_fraction_with_a_unicode_minus_and_judges_it_by_value():
    n = Numeric("Slope?", -1 / 3, why="down one in three.", tolerance=0.001, mistakes={1 / 3: "The sign."})
    assert n.answer("\u22121/3") == "Correct. The answer: -0.333333 (within ±0.001). Why: down one in three."
    assert n.answer("1 / 3") == "Not quite. The sign. Try again." and n.correct is False
    assert n.answer("-1/-3") == "Not quite. The sign. Try again."


@pytest.mark.parametrize(
    "typed, en, zh",
    [
        ("1/0", "“1/0” divides by 0: a fraction's lower number cannot be 0.", "“1/0”除以 0：分数的分母不能是 0。"),
        (
            "1/2/3",
            "“1/2/3” is not a fraction: write one number over another, like 27/8 or 0.5 / 3.",
            "“1/2/3”不是一个分数：请写成一个数除以另一个数，如 27/8 或 0.5 / 3。",
        ),
        (
            "one/3",
            "“one/3” is not a fraction: write one number over another, like 27/8 or 0.5 / 3.",
            "“one/3”不是一个分数：请写成一个数除以另一个数，如 27/8 或 0.5 / 3。",
        ),
        ("1//3", "“1//3” is not a fraction: write one number over another, like 27/8 or 0.5 / 3.", None),
    ],
)
def test_a_malformed_fraction_is_named_and_judged_neither_way(typed, en, zh):
    n = Numeric("Ratio?", 1 / 3, why="one of three.", tolerance=0.001)
    assert n.answer(typed) == en and n.correct is None
    if zh is not None:
        assert Numeric("比例？", 1 / 3, why="三分之一。", tolerance=0.001, lang="zh").answer(typed) == zh


def test_static_form_reads_right_without_kernel_or_style_sheet():
    q = quiz()
    bundle = q._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle and bundle["text/html"] == q.html
    lines = bare_text(q.html)
    # lettered in their own text: JupyterLab numbers every <ol> 1, 2, 3
    assert lines[:4] == ["Checkpoint Which pair does round 1 merge?", "A. (s, t)", "B. (e, s)", "C. (l, o)"]
    assert 'type="A"' not in q.html and "list-style: none" in q.html
    assert "reveal the answer" in lines and "The answer: (e, s)." in lines
    root = one(q.html, "bpe-checkpoint")
    assert root["data-kind"] == "quiz" and root["data-state"] == "unanswered"
    q.answer("(l, o)")  # the saved state shows what was answered
    assert one(q.html, "bpe-checkpoint")["data-state"] == "wrong"
    assert "Not quite. " + PAIRS["(l, o)"] in bare_text(q.html)
    assert find(quiz("zh").html, "bpe-badge")[0]["text"] == "检查点"


def test_static_form_letters_every_option_and_refuses_more_than_26():
    options = {f"option {n}": f"why {n}" for n in range(26)}
    q = Quiz("Many?", options, answer="option 0", shuffle=False)
    lines = bare_text(q.html)
    assert lines[1:27] == [f"{chr(65 + n)}. option {n}" for n in range(26)]
    with pytest.raises(ValueError, match="at most 26 options"):
        Quiz("Too many?", {**options, "option 26": "why"}, answer="option 0")


def unlettered(lines: list[str], start: str) -> list[str]:
    """The static form's options that begin with ``start``, without their
    letters (``A. ``, ``B. ``, ... in display order)."""
    lettered = [line for line in lines if line[1:3] == ". " and line[3:].startswith(start)]
    assert [line[0] for line in lettered] == [chr(65 + n) for n in range(len(lettered))]
    return [line[3:] for line in lettered]


def test_normalize():
    assert normalize("( e , s )") == normalize("'e' 's'") == "e s"


def test_readable_quotes_pairs_rounds_floats_and_dashes_none():
    frame = pd.DataFrame({"pair": [(",", "</w>")], "share": [0.1234567], "next": [None]}, index=[("a", "b")])
    shown = readable(frame)
    assert shown.loc["('a', 'b')", "pair"] == "(',', '</w>')"
    assert shown.iloc[0]["share"] == 0.123 and shown.iloc[0]["next"] == "—"
    assert frame.iloc[0]["pair"] == (",", "</w>")  # the data is unchanged


@pytest.mark.parametrize(
    ("lang", "answer", "shown"),
    [
        ("en", "It roughly doubles.", "The answer: It roughly doubles."),
        ("en", "Why not?", "The answer: Why not?"),
        ("en", "(e, s)", "The answer: (e, s)."),
        ("zh", "大约翻倍。", "答案：大约翻倍。"),
        ("zh", "(e, s)", "答案：(e, s)。"),
    ],
)
def test_an_answer_that_is_a_sentence_gets_one_full_stop(lang, answer, shown):
    q = Quiz("?", {answer: "because.", "other": "no."}, answer=answer, lang=lang)
    q.reveal_button.click()
    assert q.feedback.splitlines()[0] == shown


# ---------------------------------------------------------------- strict judging (issue 19)

HELLO = ["['hello', ' ', ' world']", "['hello', '  world']", "['hello ', ' world']", "['hello', '  ', 'world']"]


def hello_quiz(lang: str = "en") -> Quiz:
    """Notebook 05's question, whose four options all normalise alike."""
    return Quiz(
        "How does GPT-2's pattern cut 'hello  world' (two spaces)?",
        {option: f"explanation {i}" for i, option in enumerate(HELLO)},
        answer=HELLO[0],
        lang=lang,
    )


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_only_the_right_option_of_hello_world_is_right(lang):
    assert len({normalize(option) for option in HELLO}) == 1  # what used to judge all four right
    q = hello_quiz(lang)
    verdicts = {option: q._judge(option, q.labels)[0] for option in HELLO}
    assert verdicts == {HELLO[0]: True, HELLO[1]: False, HELLO[2]: False, HELLO[3]: False}
    assert [q._judge(i, q.labels)[0] for i in range(4)] == [option == HELLO[0] for option in q.options]
    entry = audit_made()[-1]
    assert entry == {
        "kind": "quiz",
        "question": q.question,
        "options": 4,
        "answer_position": q.options.index(HELLO[0]),
        "problems": [],
    }


def test_two_space_predict_from_notebook_06():
    options = [repr("low  lower"), repr("low lower"), repr("lowlower")]
    p = Predict("What comes back?", repr("low lower"), options=options, why="split on white space.")
    assert p.answer(repr("low  lower")).startswith("Not quite.") and p.correct is False
    assert p.answer(repr("low lower")).startswith("Correct.") and p.correct is True
    assert p.answer("low lower") == "Pick one answer, then check."  # not an option's exact text


def test_options_differing_only_in_white_space_render_differently():
    q = hello_quiz()
    labels = [label for label, _ in q.control.options]
    assert len(set(labels)) == 4
    assert "['hello', '␣␣world']" in labels and "['hello', '␣␣', 'world']" in labels
    items = unlettered(bare_text(q.html), "['hello")
    assert sorted(items) == sorted(labels)  # the static list shows the same marks
    assert 'hello<span class="bpe-ws">␣</span><span class="bpe-ws">␣</span>world' in q.prompt.value
    p = Predict("?", "a\tb", why=".", options=["a\tb", "a b", "a\nb"])
    assert sorted(label for label, _ in p.control.options) == ["a b", "a↵b", "a⇥b"]


def test_options_that_cannot_be_told_apart_are_refused():
    with pytest.raises(ValueError, match=r"the option 'a' is given twice"):
        Predict("?", "a", why=".", options=["a", "b", "a"])
    with pytest.raises(ValueError, match=r"the option '`x`' displays like 'x'"):
        Quiz("?", {"x": "one", "`x`": "two"}, answer="x")
    with pytest.raises(ValueError, match=r"the mistakes \[9.004\] are within ±0.01 of the answer 9"):
        Numeric("?", 9, why=".", tolerance=0.01, mistakes={9.004: "close", 3: "far"})
    with pytest.raises(ValueError, match=r"the notes \['E S'\] explain a wrong answer"):
        Predict("?", "(e, s)", why=".", notes={"E S": "no"})
    with pytest.raises(ValueError, match=r"the notes \['\(z\)'\] name no option"):
        Predict("?", "a", why=".", options=["a", "b"], notes={"(z)": "typo"})
    with pytest.raises(ValueError, match="has a note"):
        Predict("?", "a", why=".", options=["a", "b"], notes={"a": "no"})
    with pytest.raises(ValueError, match="accept"):
        Predict("?", "a", why=".", options=["a", "b"], accept=["A"])


def test_typed_predict_never_accepts_a_noted_text():
    p = Predict("?", "(l, o)", why="7.", accept=["lo"], notes={"(o, w)": "o w is met later."})
    assert p.answer("L O").startswith("Correct.") and p.answer("lo").startswith("Correct.")
    assert p.answer("o w").startswith("Not quite. o w is met later.")


def test_shuffle_is_fixed_sorted_for_numbers_and_can_be_turned_off():
    options = {"first": "a", "second": "b", "third": "c", "fourth": "d"}
    assert Quiz("Which?", options, answer="first").options == ("fourth", "second", "first", "third")
    assert Quiz("Which?", options, answer="first", shuffle=False).options == tuple(options)
    assert Predict("How many?", "3", why=".", options=["9", "3", "1", "2"]).options == ("1", "2", "3", "9")
    assert Predict("How many?", "3", why=".", options=["9", "3"], shuffle=False).options == ("9", "3")


def test_shuffle_is_the_same_in_another_process():
    import subprocess
    import sys

    code = (
        "from bpe_lab.ui.checkpoints import display_order\n"
        "print(display_order('Which?', ['first', 'second', 'third', 'fourth']))"
    )
    for seed in ("0", "1", "random"):
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, env={"PYTHONHASHSEED": seed}
        )
        assert out.stdout.strip() == "[3, 1, 0, 2]"


@given(
    st.lists(st.text(alphabet=" \t\n'(),ab`", max_size=6), min_size=2, max_size=5, unique=True),
    st.data(),
)
@settings(max_examples=40, deadline=None)
def test_exactly_one_option_is_right_in_both_languages(options, data):
    from bpe_lab.ui.checkpoints import plain

    assume(len({plain(option) for option in options}) == len(options))
    answer = data.draw(st.sampled_from(options))
    order = display_order("Q?", options)
    assert sorted(order) == list(range(len(options)))
    for lang in ("en", "zh"):
        q = Quiz("Q?", {option: "why." for option in options}, answer=answer, lang=lang)
        assert list(q.options) == [options[i] for i in order]
        right = [i for i in range(len(options)) if q._judge(i, q.labels)[0]]
        assert right == [q.options.index(answer)] == [audit_made()[-1]["answer_position"]]
        assert [option for option in options if q._judge(option, q.labels)[0]] == [answer]
        assert audit_made()[-1]["problems"] == []


def test_code_spans_render_and_everything_else_is_escaped():
    q = Quiz("Why can it not write `fills`?", {"`fills` <b>x</b>": "no `s` & co", "other": "`y`"}, answer="other")
    code = f"<code{style('code')}>"  # tinted inline: the live widget gets no tint from JupyterLab
    assert "background: rgba(" in code
    assert f"{code}fills</code>" in q.prompt.value and "`" not in q.prompt.value
    assert f"{code}fills</code> &lt;b&gt;x&lt;/b&gt;" in q.html
    q.answer("`fills` <b>x</b>")
    assert q.feedback == "Not quite. no `s` & co"  # plain text keeps the author's backticks
    assert f"no {code}s</code> &amp; co" in q.feedback_view.value
    assert dict((v, k) for k, v in q.control.options)["`fills` <b>x</b>"] == "fills <b>x</b>"


def test_the_audit_flags_explanations_that_say_the_verdict():
    Quiz("Audit?", {"a": "Right: because.", "b": "错了。"}, answer="a")
    problems = audit_made()[-1]["problems"]
    assert len(problems) == 2 and "starts with 'right' (en)" in problems[0] and "starts with '错' (zh)" in problems[1]
    Numeric("Audit 2?", 2, why="Correct: two.", mistakes={1: "one"})
    assert audit_made()[-1]["kind"] == "numeric" and audit_made()[-1]["answer_position"] is None
    assert "starts with 'correct'" in audit_made()[-1]["problems"][0]


def _luminance(colour: str) -> float:
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    """WCAG 2.x contrast ratio (https://www.w3.org/TR/WCAG21/#dfn-contrast-ratio)."""
    light, dark = sorted([_luminance(a), _luminance(b)], reverse=True)
    return (light + 0.05) / (dark + 0.05)


def test_contrast_formula():
    assert contrast("#000000", "#ffffff") == pytest.approx(21) and contrast("#777777", "#777777") == 1


@pytest.mark.parametrize("state", ["correct", "wrong"])
def test_feedback_colours_reach_wcag_aa_in_light_and_dark_themes(state):
    assert contrast(FEEDBACK_COLOURS[state], "#ffffff") >= 4.5
    for background in ("#111111", "#212121"):  # JupyterLab dark: --jp-layout-color0, --jp-layout-color1
        assert contrast(DARK_FEEDBACK_COLOURS[state], background) >= 4.5
    assert f'[data-state="{state}"] {{ color: {DARK_FEEDBACK_COLOURS[state]} !important; }}' in CHECKPOINT_CSS
    q = quiz()
    q.answer("(e, s)" if state == "correct" else "(l, o)")
    assert CHECKPOINT_CSS in q.feedback_view.value  # the live widget carries the dark override
    assert f"color: {FEEDBACK_COLOURS[state]}" in one(q.feedback_view.value, "bpe-feedback")["style"]
