"""The steppers, driven headless through their Python API and button clicks.

Each test checks both the state (``.round``, ``.merges``,
``.highlighted_pair``) and what the rendered HTML shows, read through its
``data-*`` attributes, on the low/lower/newest/widest example of notebook 02
(the ``textbook_corpus`` fixture). Every expected value is worked by hand in
the comment beside it.
"""

from __future__ import annotations

import re
import string
import warnings
from html.parser import HTMLParser

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpe_lab.core.encode import encode_word, longest_match
from bpe_lab.core.train import train_trace
from bpe_lab.ui.blocks import pair_starts
from bpe_lab.ui.labels import LABELS, label, labels
from bpe_lab.ui.steps import encode_steps
from bpe_lab.ui.tokens import token_colour, tokens_html
from bpe_lab.ui.views import compression_round_html, encode_step_html, merge_round_html
from bpe_lab.ui.widgets import CompressionStepper, EncodeStepper, MergeStepper, show_tokens
from bpe_lab.variants.compression import decompress

# On the textbook corpus: (pair, count, number of pairs tied with it) per
# round, first-seen rule. Round 1: e s, s t and t </w> each occur 9 times
# (newest 6 + widest 3); e s is seen first.
FIRST = [(("e", "s"), 9, 2), (("es", "t"), 9, 1), (("est", "</w>"), 9, 0), (("l", "o"), 7, 1), (("lo", "w"), 7, 0)]
MERGES = [pair for pair, _, _ in FIRST]


class _Elements(HTMLParser):
    """Collects (tag, attributes, text, children) of every element, to query
    rendered HTML."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[dict] = []
        self._open: list[dict] = []

    @classmethod
    def parse(cls, html: str) -> list[dict]:
        """Every element of ``html``, in document order."""
        parser = cls()
        parser.feed(html)
        return parser.found

    def handle_starttag(self, tag, attrs):
        element = {"tag": tag, **{k: v or "" for k, v in attrs}, "text": "", "children": []}
        if self._open:
            self._open[-1]["children"].append(element)
        self.found.append(element)
        if tag not in {"br", "img", "input", "meta"}:
            self._open.append(element)

    def handle_endtag(self, tag):
        if self._open:
            self._open.pop()

    def handle_data(self, data):
        for element in self._open:
            element["text"] += data


def find(html: str, css_class: str) -> list[dict]:
    """Every element of ``html`` carrying ``css_class``."""
    parser = _Elements()
    parser.feed(html)
    return [e for e in parser.found if css_class in e.get("class", "").split()]


def one(html: str, css_class: str) -> dict:
    matches = find(html, css_class)
    assert len(matches) == 1, f"expected one .{css_class}, found {len(matches)}"
    return matches[0]


def within(element: dict, css_class: str) -> list[dict]:
    """Every element inside ``element`` carrying ``css_class``, in order."""
    found = []
    for child in element["children"]:
        if css_class in child.get("class", "").split():
            found.append(child)
        found.extend(within(child, css_class))
    return found


def pair_of(element: dict) -> tuple[str, str]:
    return element["data-left"], element["data-right"]


def rules(html: str) -> list[tuple[str, str, str]]:
    return [(*pair_of(li), li["data-rule"]) for li in find(html, "bpe-rule")]


# ---------------------------------------------------------------- MergeStepper


def test_merge_stepper_next_round_by_round(textbook_corpus):
    stepper = MergeStepper(textbook_corpus, num_merges=5)
    assert stepper.total == 5
    for number in range(6):
        html = stepper.html
        assert stepper.round == number
        assert stepper.merges == MERGES[:number]
        assert stepper.vocab_size == 11 + number  # 10 characters + </w>, then one symbol per merge
        assert one(html, "bpe-merge")["data-round"] == str(number)
        assert one(html, "bpe-counter")["text"] == f"Round {number} of 5"
        assert [pair_of(li) for li in find(html, "bpe-rule")] == MERGES[:number]
        assert [li["data-count"] for li in find(html, "bpe-rule")] == [str(c) for _, c, _ in FIRST[:number]]
        if number < 5:
            pair = MERGES[number]
            assert stepper.highlighted_pair == pair
            assert pair_of(one(html, "bpe-next")) == pair
            assert {pair_of(e) for e in find(html, "bpe-hl")} == {pair}
            assert pair_of(one(html, "bpe-winner")) == pair
        else:
            assert stepper.highlighted_pair is None
            assert not find(html, "bpe-hl") and not find(html, "bpe-next")
            assert "Training finished: 5 merges learned." in one(html, "bpe-done")["text"]
        stepper.next()


def test_every_occurrence_of_the_pair_is_highlighted(textbook_corpus):
    stepper = MergeStepper(textbook_corpus, num_merges=5)
    # (e, s) occurs once in newest and once in widest; the two chips keep a
    # real space between them, so the pair reads "e s" even without the style sheet
    assert [e["text"] for e in find(stepper.html, "bpe-hl")] == ["e s", "e s"]
    stepper.go(3)
    # (l, o) in low and lower; the symbol the previous merge made is tinted as new
    assert [e["text"] for e in find(stepper.html, "bpe-hl")] == ["l o", "l o"]
    corpus = one(stepper.html, "bpe-corpus")
    assert [e["text"] for e in find(stepper.html, "bpe-new")][:2] == ["est</w>", "est</w>"]
    assert corpus["text"].count("×\u00a0") == 4  # a no-break space: "× 3" never splits over two lines


def test_buttons_call_the_same_moves(textbook_corpus):
    stepper = MergeStepper(textbook_corpus, num_merges=5)
    assert stepper.prev_button.disabled and not stepper.next_button.disabled
    for _ in range(3):
        stepper.next_button.click()
    assert stepper.round == 3 and stepper.merges == MERGES[:3]
    assert stepper.highlighted_pair == ("l", "o")
    assert rules(stepper.html) == [(*pair, "first") for pair in MERGES[:3]]
    stepper.prev_button.click()
    assert stepper.round == 2 and pair_of(one(stepper.html, "bpe-next")) == ("est", "</w>")
    stepper.reset_button.click()
    assert stepper.round == 0 and stepper.merges == [] and stepper.prev_button.disabled
    for _ in range(9):  # clicks past the end change nothing
        stepper.next_button.click()
    assert stepper.round == 5 and stepper.next_button.disabled
    stepper.prev()
    stepper.prev()
    assert stepper.round == 3


def test_slider_play_and_speed_move_the_same_state(textbook_corpus):
    stepper = MergeStepper(textbook_corpus, num_merges=5)
    stepper.play.value = 2  # what a play tick does
    assert stepper.round == 2 and one(stepper.html, "bpe-merge")["data-round"] == "2"
    stepper.slider.value = 4
    assert stepper.play.value == 4 and stepper.highlighted_pair == ("lo", "w")
    stepper.round = 99
    assert stepper.round == 5
    stepper.speed.value = 300
    assert stepper.play.interval == 300
    stepper.play.playing = True
    stepper.reset()
    assert not stepper.play.playing and stepper.round == 0


def test_pair_table_marks_winner_ties_and_rule(textbook_corpus):
    html = MergeStepper(textbook_corpus, num_merges=5).html
    # Round 1, counted by hand: e s, s t, t </w> in newest (6) and widest (3);
    # w e in lower (2) and newest (6); l o, o w in low (5) and lower (2); ...
    # sorted by count, ties in the order the scan meets them, 12 of 14 shown.
    rows = [(*pair_of(r), int(r["data-count"])) for r in _all_rows(html)]
    assert rows == [
        ("e", "s", 9),
        ("s", "t", 9),
        ("t", "</w>", 9),
        ("w", "e", 8),
        ("l", "o", 7),
        ("o", "w", 7),
        ("n", "e", 6),
        ("e", "w", 6),
        ("w", "</w>", 5),
        ("w", "i", 3),
        ("i", "d", 3),
        ("d", "e", 3),
    ]
    assert "… +2" in html  # e r and r </w> (2 each, from lower) are hidden
    assert pair_of(one(html, "bpe-winner")) == ("e", "s")
    assert {pair_of(e) for e in find(html, "bpe-tied")} == {("s", "t"), ("t", "</w>")}
    note = one(html, "bpe-rule-note")
    assert note["data-rule"] == "first"
    assert note["text"] == "3 pairs tie at 9; the “first seen” rule picks (e, s)."


def _all_rows(html: str) -> list[dict]:
    parser = _Elements()
    parser.feed(html)
    return [e for e in parser.found if e["tag"] == "tr" and "data-count" in e]


def test_merge_list_records_ties_and_rule(textbook_corpus):
    stepper = MergeStepper(textbook_corpus, num_merges=5)
    stepper.go(5)
    items = find(stepper.html, "bpe-rule")
    assert [int(li["data-tied"]) for li in items] == [tied for _, _, tied in FIRST]
    assert "tie of 3, chosen by “first seen”" in items[0]["text"]
    assert "chosen by" not in items[2]["text"]


def test_no_tie_note(textbook_corpus):
    stepper = MergeStepper(textbook_corpus, num_merges=5)
    stepper.go(2)
    assert one(stepper.html, "bpe-rule-note")["text"] == "(est, </w>) is the most frequent pair (9); no tie to break."


def test_tie_break_selector_retrains_from_round_zero(textbook_corpus):
    stepper = MergeStepper(textbook_corpus, num_merges=5)
    stepper.go(3)
    stepper.tie_break_selector.value = "lexicographic"
    assert stepper.tie_break == "lexicographic" and stepper.round == 0
    assert stepper.highlighted_pair == ("t", "</w>")
    assert pair_of(one(stepper.html, "bpe-next")) == ("t", "</w>")
    assert one(stepper.html, "bpe-merge")["data-tie-break"] == "lexicographic"
    assert "the “greatest (lexicographic)” rule picks (t, </w>)" in one(stepper.html, "bpe-rule-note")["text"]
    stepper.next_button.click()
    assert rules(stepper.html) == [("t", "</w>", "lexicographic")]
    assert stepper.merges == [("t", "</w>")]  # of the three pairs tied at 9, the greatest string
    stepper.tie_break = "first"  # and back, from Python
    assert stepper.tie_break_selector.value == "first" and stepper.round == 0
    assert stepper.highlighted_pair == ("e", "s")


def test_text_input_and_early_end():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the view says training stopped early; no warning on top
        stepper = MergeStepper("low low lower", num_merges=50)
        stepper.go(99)
    assert stepper.word_freq == {"low": 2, "lower": 1}
    # l o, lo w, low </w> make "low</w>" one symbol; low e, lowe r, lower </w>
    # then do the same for "lower</w>": 6 merges, and no pair is left.
    assert stepper.trace.stopped_early
    assert stepper.round == stepper.total == 6
    assert stepper.merges == [("l", "o"), ("lo", "w"), ("low", "</w>"), ("low", "e"), ("lowe", "r"), ("lower", "</w>")]
    done = one(stepper.html, "bpe-done")["text"]
    assert done == "Training finished: 6 merges learned. Every word is a single symbol: no pair is left to merge."
    stepper.tie_break = "lexicographic"  # retraining is quiet too
    assert stepper.total == 6


def test_chinese_labels(textbook_corpus):
    stepper = MergeStepper(textbook_corpus, num_merges=5, lang="zh")
    assert stepper.next_button.description == "下一轮合并"
    assert stepper.prev_button.description == "上一轮"
    assert stepper.reset_button.description == "重置"
    stepper.next_button.click()
    html = stepper.html
    assert one(html, "bpe-merge")["lang"] == "zh"
    assert one(html, "bpe-counter")["text"] == "第 1 轮 / 共 5 轮"
    assert "语料" in html and "先出现者优先" in html
    assert "Round" not in html and "first seen" not in html


def test_displays_as_a_widget(textbook_corpus):
    stepper = MergeStepper(textbook_corpus, num_merges=5)
    stepper.next()
    bundle = stepper._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["text/html"] == stepper.html  # the static fallback shows the current view
    assert bundle["text/plain"] == repr(stepper) == "<MergeStepper: Round 1 of 5>"


def test_merge_round_html_shows_the_corpus_before_the_next_merge(textbook_corpus):
    html = merge_round_html(train_trace(textbook_corpus, 5), 2)
    # After e s and es t: "est" is one symbol; the next merge is est </w>.
    rows = find(html, "bpe-word")
    assert [[e["text"] for e in within(row, "bpe-sym")] for row in rows] == [
        ["l", "o", "w", "</w>"],
        ["l", "o", "w", "e", "r", "</w>"],
        ["n", "e", "w", "est", "</w>"],
        ["w", "i", "d", "est", "</w>"],
    ]
    assert [within(row, "bpe-freq")[0]["text"] for row in rows] == ["×\u00a05", "×\u00a02", "×\u00a06", "×\u00a03"]
    corpus = one(html, "bpe-corpus")
    assert [e["text"] for e in within(corpus, "bpe-hl")] == ["est </w>", "est </w>"]  # newest, widest
    assert [e["text"] for e in within(corpus, "bpe-new")] == ["est", "est"]  # made by the last merge
    assert one(html, "bpe-vocab")["data-vocab-size"] == "13"  # 10 letters + </w>, es, est
    assert "… +1" in html  # 13 pairs, 12 shown: r </w> (2) is hidden


def test_merge_round_html_checks_its_round(textbook_corpus):
    trace = train_trace(textbook_corpus, 5)
    with pytest.raises(IndexError, match="rounds 0..5"):
        merge_round_html(trace, 6)


def test_html_escapes_symbols():
    html = merge_round_html(train_trace({"a<b": 2}, 1, end_of_word="</w>"), 0)
    assert "a<b" not in html.replace("&lt;", "") and "&lt;/w&gt;" in html


def test_pair_starts_matches_merging():
    assert pair_starts(("a", "a", "a", "a"), ("a", "a")) == [0, 2]
    assert pair_starts(list(b"aaab"), tuple(b"aa")) == [0]


# ---------------------------------------------------------------- labels


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


@pytest.mark.parametrize("lang", sorted(LABELS))
def test_every_language_has_every_label_with_the_same_fields(lang):
    assert labels(lang).keys() == LABELS["en"].keys()
    for key, text in LABELS["en"].items():
        assert _fields(labels(lang)[key]) == _fields(text), key


def test_unknown_language_is_named(textbook_corpus):
    assert label("next_merge", "zh") == "下一轮合并"
    with pytest.raises(ValueError, match="'fr'.*'en', 'zh'"):
        MergeStepper(textbook_corpus, lang="fr")


# ---------------------------------------------------------------- EncodeStepper


def test_encode_stepper_replays_by_rank():
    stepper = EncodeStepper("lowest", MERGES)
    assert stepper.total == 5 and stepper.tokens == ["low", "est</w>"]
    expected = ["e s", "es t", "est </w>", "l o", "lo w"]
    for number, pair in enumerate(expected):
        assert stepper.round == number
        assert stepper.highlighted_pair == tuple(pair.split())
        html = stepper.html
        assert pair_of(one(html, "bpe-next")) == tuple(pair.split())
        assert pair_of(one(html, "bpe-winner")) == tuple(pair.split())
        assert one(html, "bpe-encode")["data-round"] == str(number)
        stepper.next_button.click()
    assert stepper.highlighted_pair is None and stepper.symbols == ["low", "est</w>"]
    assert one(stepper.html, "bpe-final")["data-tokens"] == "low est</w>"
    assert "No adjacent pair has a merge rule" in one(stepper.html, "bpe-done")["text"]
    assert one(stepper.html, "bpe-counter")["text"] == "Step 5 of 5"


@pytest.mark.parametrize(
    "lang, badge, mark",
    [
        ("en", "lowest rank, merged next: e s", "★ lowest rank, merged next"),
        ("zh", "序号最小，下一个合并：e s", "★ 序号最小，下一个合并"),
    ],
)
def test_encode_stepper_says_which_pair_merges_next_once(lang, badge, mark):
    """The badge read "lowest rank: merge: e s", two colons in a row."""
    html = EncodeStepper("lowest", MERGES, lang=lang).html
    assert " ".join(one(html, "bpe-next")["text"].split()) == badge
    assert [cell["text"] for cell in within(one(html, "bpe-winner"), "bpe-mark")] == [mark]


def test_encode_stepper_shows_ranks_and_no_rule():
    html = EncodeStepper("lowest", MERGES).html
    ranks = {pair_of(r): r["data-rank"] for r in _all_rank_rows(html)}
    assert ranks[("l", "o")] == "3" and ranks[("e", "s")] == "0" and ranks[("o", "w")] == ""
    assert "no rule" in html


def _all_rank_rows(html: str) -> list[dict]:
    parser = _Elements()
    parser.feed(html)
    return [e for e in parser.found if e["tag"] == "tr" and "data-rank" in e]


def test_encode_stepper_flags_longest_match_differences():
    merges = [("a", "b"), ("b", "c"), ("a", "bc")]
    stepper = EncodeStepper("abc", merges, end_of_word=None)
    assert stepper.tokens == ["ab", "c"] and stepper.longest == ["abc"]
    html = stepper.html
    assert one(html, "bpe-compare-panel")
    assert any(e.get("data-same") == "false" for e in find(html, "bpe-note"))
    assert {e["text"] for e in find(html, "bpe-diff")} == {"ab", "c", "abc"}
    same = EncodeStepper("lowest", MERGES).html
    assert any(e.get("data-same") == "true" for e in find(same, "bpe-note")) and not find(same, "bpe-diff")
    assert not find(EncodeStepper("lowest", MERGES, compare=False).html, "bpe-compare-panel")


# (word, final tokens, rank merged at each step) with MERGES, worked by hand:
# ranks are e s 0, es t 1, est </w> 2, l o 3, lo w 4.
ENCODINGS = [
    ("lowest", ["low", "est</w>"], [0, 1, 2, 3, 4]),
    ("newest", ["n", "e", "w", "est</w>"], [0, 1, 2]),
    ("lower", ["low", "e", "r", "</w>"], [3, 4]),
    # s e s s e s: both e s join at once (left to right, never overlapping);
    # no rule then applies to s es, es s or es </w>.
    ("sesses", ["s", "es", "s", "es", "</w>"], [0]),
    ("x", ["x", "</w>"], []),
]


@pytest.mark.parametrize("word, tokens, ranks", ENCODINGS)
def test_encode_steps_by_hand(word, tokens, ranks):
    steps = encode_steps(word, MERGES)
    assert [step.best_rank for step in steps] == [*ranks, None]
    assert list(steps[-1].symbols) == tokens
    assert encode_word(word, MERGES) == tokens  # and the encoder itself agrees


def test_encode_stepper_in_chinese():
    stepper = EncodeStepper("lowest", MERGES, lang="zh")
    stepper.go(5)
    assert "最终词元" in stepper.html and "与按序重放相同" in stepper.html
    html = encode_step_html(stepper.steps, 0, word="lowest", longest=longest_match("lowest", MERGES), lang="zh")
    assert html.count("bpe-compare-panel") == 1 and "贪心最长匹配" in html


# ---------------------------------------------------------------- CompressionStepper


def test_compression_stepper_round_by_round():
    stepper = CompressionStepper(b"aaabdaaabac")
    assert stepper.total == 3
    expected_pairs = [(97, 97), (0, 97), (1, 98)]
    expected_data = [b"aaabdaaabac", b"\x00abd\x00abac", b"\x01bd\x01bac", b"\x02d\x02ac"]
    for number in range(4):
        html = stepper.html
        assert stepper.data == expected_data[number]
        assert one(html, "bpe-compress")["data-round"] == str(number)
        assert one(html, "bpe-size")["data-length"] == str(len(expected_data[number]))
        assert len([e for e in _elements(html) if e["tag"] == "tr" and "data-code" in e]) == number
        if number < 3:
            assert stepper.highlighted_pair == expected_pairs[number]
            assert one(html, "bpe-next")["data-byte"] == str(number)
            assert len(find(html, "bpe-hl")) == 2
        else:
            assert stepper.highlighted_pair is None and "compression stops" in one(html, "bpe-done")["text"]
        stepper.next_button.click()
    assert stepper.table == {0: (97, 97), 1: (0, 97), 2: (1, 98)}
    assert decompress(stepper.packed) == b"aaabdaaabac"
    assert "aaab" in html  # the table shows what code 0x02 finally stands for


def _elements(html: str) -> list[dict]:
    parser = _Elements()
    parser.feed(html)
    return parser.found


def test_compression_stepper_takes_text_and_limits_rounds():
    stepper = CompressionStepper("abababab", max_rounds=1)
    assert stepper.original == b"abababab" and stepper.total == 1
    stepper.next()
    assert stepper.data == b"\x00\x00\x00\x00"
    assert "第 1 轮" in compression_round_html(stepper.states, stepper.packed, 1, lang="zh")


def test_compression_view_truncates_long_data():
    stepper = CompressionStepper(bytes(range(200)) * 3)
    assert "… +" in compression_round_html(stepper.states, stepper.packed, 0, max_bytes=50)


# ---------------------------------------------------------------- show_tokens


class FakeTokenizer:
    """Duck-typed like bpe_lab.Tokenizer: bytes vocab plus greedy encode."""

    def __init__(self) -> None:
        self.vocab = {i: bytes([i]) for i in range(256)}
        extra = [b"he", b"llo", b" w", "你".encode()[:2]]
        self.vocab.update({256 + i: token for i, token in enumerate(extra)})
        self._by_bytes = {v: k for k, v in self.vocab.items()}

    def encode(self, text: str) -> list[int]:
        data, ids, i = text.encode("utf-8"), [], 0
        while i < len(data):
            j = max(j for j in range(i + 1, min(len(data), i + 3) + 1) if data[i:j] in self._by_bytes)
            ids.append(self._by_bytes[data[i:j]])
            i = j
        return ids


def test_show_tokens_renders_ids_bytes_and_summary():
    tokenizer = FakeTokenizer()
    text = "hello world 你"
    html = show_tokens(text, tokenizer).data
    spans = find(html, "bpe-token")
    # he, llo, " w", then single bytes o r l d " ", then 你 (e4 bd a0) split
    # into the two-byte token 259 and the byte a0.
    ids = [256, 257, 258, 111, 114, 108, 100, 32, 259, 160]
    assert tokenizer.encode(text) == ids
    assert [int(s["data-id"]) for s in spans] == ids
    assert b"".join(bytes.fromhex(s["data-bytes"]) for s in spans) == text.encode("utf-8")
    assert [e["text"] for e in find(html, "bpe-token-text")][:3] == ["he", "llo", "␣w"]
    assert one(html, "bpe-badge")["text"] == f"{len(ids)} tokens · {len(text)} characters · 15 bytes"
    partial = [e["text"] for e in find(html, "bpe-partial")]
    assert partial == ["\\xe4\\xbd", "\\xa0"]  # a Chinese character split across two tokens
    colours = re.findall(r'class="bpe-token" [^>]*background: (rgba\([^)]*\))', html)
    assert colours == [token_colour(i) for i in range(len(ids))]
    assert all(a != b for a, b in zip(colours, colours[1:]))


def _css_hsl(hue: float, saturation: float, lightness: float) -> tuple[int, int, int]:
    """CSS Color 4's hsl() to rgb(), as its specification writes it."""
    a = saturation * min(lightness, 1 - lightness)

    def f(n: int) -> int:
        k = (n + hue / 30) % 12
        return round(255 * (lightness - a * max(-1, min(k - 3, 9 - k, 1))))

    return f(0), f(8), f(4)


@given(st.integers(min_value=0, max_value=10_000))
def test_token_colours_are_the_hues_in_a_form_the_sanitizer_keeps(index):
    """Each token's colour is hsl(golden-angle hue, 85%, 60%) at alpha .32,
    written as rgba(): JupyterLab's sanitizer drops hsla() from an
    untrusted notebook's saved outputs (tests/test_browser.py sees it)."""
    red, green, blue = _css_hsl(round(index * 137.508) % 360, 0.85, 0.60)
    assert token_colour(index) == f"rgba({red}, {green}, {blue}, .32)"


def test_tokens_html_options_and_errors():
    html = tokens_html("hi\n", FakeTokenizer(), show_bytes=False, lang="zh")
    assert not find(html, "bpe-token-bytes") and "↵" in html and "个词元" in html
    with pytest.raises(TypeError, match="encode"):
        tokens_html("hi", object())


def test_show_tokens_with_the_package_tokenizer():
    tokenizer_module = pytest.importorskip(
        "bpe_lab.bytelevel.tokenizer", reason="bpe_lab.bytelevel.tokenizer is not in this tree yet"
    )
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"he", 257: b"ll"}
    tokenizer = tokenizer_module.Tokenizer(vocab, [(b"h", b"e"), (b"l", b"l")], special_tokens=["<|endoftext|>"])
    text = "hello 你<|endoftext|>"
    spans = find(tokens_html(text, tokenizer), "bpe-token")
    assert [int(s["data-id"]) for s in spans] == tokenizer.encode(text)
    assert b"".join(bytes.fromhex(s["data-bytes"]) for s in spans) == text.encode("utf-8")
    assert spans[-1]["text"].startswith("<|endoftext|>")


# ---------------------------------------------------------------- without the style sheet

_BLOCKS = {"div", "p", "h3", "h4", "li", "tr", "table", "ol", "ul", "details", "summary"}


class _BareText(HTMLParser):
    """The text a browser shows when the ``<style>`` block and every
    ``style`` attribute are stripped (a forge's renderer): block elements
    start a new line, table cells are set apart, inline elements run on."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._in_style = False

    @classmethod
    def parse(cls, html: str) -> list[dict]:
        """Every element of ``html``, in document order."""
        parser = cls()
        parser.feed(html)
        return parser.found

    def handle_starttag(self, tag, attrs):
        self._in_style = tag == "style"
        if tag in _BLOCKS:
            self.parts.append("\n")
        elif tag in {"td", "th"}:
            self.parts.append(" | ")

    def handle_endtag(self, tag):
        if tag == "style":
            self._in_style = False
        elif tag in _BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data):
        if not self._in_style:
            self.parts.append(data)


def bare_text(html: str) -> list[str]:
    """The non-empty lines of ``html`` rendered without any CSS."""
    parser = _BareText()
    parser.feed(re.sub(r"<style>.*?</style>", "", html, flags=re.S))
    text = re.sub(r"[ \t\u00a0]+", " ", "".join(parser.parts))
    return [line.strip() for line in text.splitlines() if line.strip()]


def test_compression_view_reads_right_without_the_style_sheet():
    lines = bare_text(CompressionStepper("ababcababcab").html)
    # the two badges of the header are apart: not "Round 0 of 312 bytes"
    assert "Round 0 of 3 12 bytes of data + 0 table bytes = 100% of 12" in lines
    assert "a b a b c a b a b c a b" in lines  # the data as separate bytes


def test_merge_view_reads_right_without_the_style_sheet(textbook_corpus):
    stepper = MergeStepper(textbook_corpus, num_merges=5, tie_break="lexicographic")
    stepper.go(1)
    lines = bare_text(stepper.html)
    assert "Round 1 of 5 vocabulary size: 12 tie-break: greatest (lexicographic) merge next: s t</w>" in lines
    assert "n e w e s t</w> × 6" in lines  # the chips apart, and "× 6" after a space
    assert "t </w> → t</w> (9) tie of 3, chosen by “greatest (lexicographic)”" in lines


def test_token_view_reads_right_without_the_style_sheet():
    text = "hello world"
    lines = bare_text(tokens_html(text, FakeTokenizer()))
    assert lines[0] == "7 tokens · 11 characters · 11 bytes"  # he, llo, " w", o, r, l, d
    # each token, then its id, then its bytes, each set apart by a space
    assert lines[1].startswith("he 256 68 65 llo 257 6c 6c 6f ␣w 258 20 77 o 111 6f")


def test_every_layout_rule_is_also_inline(textbook_corpus):
    html = MergeStepper(textbook_corpus, num_merges=5).html
    for css_class in ("bpe-head", "bpe-grid", "bpe-panel", "bpe-badge", "bpe-syms", "bpe-sym", "bpe-hl", "bpe-freq"):
        for element in find(html, css_class):
            assert element.get("style"), f".{css_class} has no inline style"
    assert "white-space: nowrap" in one(html, "bpe-next")["style"]  # the badge never wraps
    assert "flex-wrap: wrap" in one(html, "bpe-grid")["style"]


def test_the_hidden_pairs_row_is_left_aligned_inline(textbook_corpus):
    """JupyterLab right-aligns table cells; untrusted, the sheet's
    ``text-align: left`` is gone, so the "… +2" row says it inline."""
    html = MergeStepper(textbook_corpus, num_merges=5).html
    more = [cell for cell in _Elements.parse(html) if cell["tag"] == "td" and cell["text"].startswith("… +")]
    assert len(more) == 1 and more[0]["colspan"] == "3"
    assert "text-align: left" in more[0]["style"]


# ---------------------------------------------------------------- compression: button and stopping rule


def test_compression_button_says_replacement_and_the_end_says_why():
    stepper = CompressionStepper(b"aaabdaaabac")
    assert stepper.next_button.description == "next replacement"
    assert CompressionStepper("ab", lang="zh").next_button.description == "下一次替换"
    stepper.go(stepper.total)
    assert stepper.stopped_by == "no_repeat"
    done = one(stepper.html, "bpe-done")
    assert done["data-stop"] == "no_repeat" and done["text"].startswith("No pair occurs twice any more")
    limited = CompressionStepper("abababab", max_rounds=1)
    limited.go(1)
    assert limited.stopped_by == "max_rounds"
    assert one(limited.html, "bpe-done")["text"] == "The limit of 1 rounds is reached: compression stops."
    # 255 distinct byte values leave one code: after one replacement none is free
    full = CompressionStepper(bytes(range(255)) + b"\x00\x01\x00\x01")
    full.go(full.total)
    assert full.total == 1 and full.stopped_by == "no_free_byte"
    assert "256 byte values" in one(full.html, "bpe-done")["text"]


# ---------------------------------------------------------------- the featured word of notebook 03


def test_nest_is_where_rank_replay_and_longest_match_differ(textbook_corpus):
    """Notebook 03 features ``nest`` with seven merges trained on the
    textbook corpus: (e, s), (es, t), (est, </w>), (l, o), (lo, w), then
    (n, e) 6 and (ne, w) 6. Rank replay joins e s first (rank 0) and ends
    with n est</w>; longest match takes ne, the longest entry that starts
    the word, and can never reach est</w>."""
    merges = train_trace(textbook_corpus, 7).merges
    assert merges[5:] == [("n", "e"), ("ne", "w")]
    stepper = EncodeStepper("nest", merges)
    assert stepper.tokens == ["n", "est</w>"] and stepper.longest == ["ne", "s", "t", "</w>"]
    html = stepper.html
    assert any(e.get("data-same") == "false" for e in find(html, "bpe-note"))
    assert "differs from rank replay" in html
