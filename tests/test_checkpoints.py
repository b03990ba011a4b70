"""The checkpoint widgets (Predict, Quiz, Numeric), driven headless: from
Python (``.answer``), through their controls and buttons as a click would,
in English and Chinese; their static form without a kernel or style sheet;
and ``tables.readable``."""

from __future__ import annotations

import pandas as pd
import pytest

from bpe_lab.core.train import train_trace
from bpe_lab.ui.checkpoints import Numeric, Predict, Quiz, normalize
from bpe_lab.ui.tables import readable
from tests.test_widgets import bare_text, find, one

PAIRS = {
    "(e, s)": "Right: (e, s), (s, t) and (t, </w>) tie at 9, and (e, s) is met first in newest.",
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
    assert q.answer("('e', 's')") == "Correct. " + PAIRS["(e, s)"]  # typed answers are normalized
    assert q.correct is True and q.given == "('e', 's')"
    assert q.answer(1).startswith("Not quite. (s, t) also has 9")  # by index
    assert q.answer("(x, y)") == "Pick one answer, then check." and q.correct is None


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
    assert p.answer(2) == "不太对。 答案：(e, s)。 原因：先出现。"
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


def test_static_form_reads_right_without_kernel_or_style_sheet():
    q = quiz()
    bundle = q._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle and bundle["text/html"] == q.html
    lines = bare_text(q.html)
    assert lines[:4] == ["Checkpoint Which pair does round 1 merge?", "(e, s)", "(s, t)", "(l, o)"]
    assert "reveal the answer" in lines and "The answer: (e, s)." in lines
    root = one(q.html, "bpe-checkpoint")
    assert root["data-kind"] == "quiz" and root["data-state"] == "unanswered"
    q.answer("(l, o)")  # the saved state shows what was answered
    assert one(q.html, "bpe-checkpoint")["data-state"] == "wrong"
    assert "Not quite. " + PAIRS["(l, o)"] in bare_text(q.html)
    assert find(quiz("zh").html, "bpe-badge")[0]["text"] == "检查点"


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
