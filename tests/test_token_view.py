"""The token view (``ui.tokens``): a token whose bytes are whole UTF-8
characters shows the characters; a token holding part of a character shows
its bytes, and the run of such tokens that spells a character shows that
character under the run. And the plots' labels: emoji are written as code
points, so matplotlib draws no box and warns of no missing glyph."""

from __future__ import annotations

import re
import warnings

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from bpe_lab.bytelevel.gpt2 import gpt2_tokenizer  # noqa: E402
from bpe_lab.bytelevel.tokenizer import Tokenizer  # noqa: E402
from bpe_lab.ui import plots  # noqa: E402
from bpe_lab.ui.tokens import tokens_html  # noqa: E402

LOW = "低".encode()  # e4 bd 8e


class Fixed:
    """A tokenizer whose encoding is given: the ids of ``vocab`` in order."""

    def __init__(self, pieces: list[bytes]) -> None:
        self.vocab = dict(enumerate(pieces))

    def encode(self, text: str) -> list[int]:
        assert b"".join(self.vocab.values()).decode() == text
        return list(self.vocab)


def texts(html: str) -> list[str]:
    return re.findall(r'<span class="bpe-token-text[^"]*"[^>]*>(.*?)</span> <sub', html)


def groups(html: str) -> list[str]:
    return re.findall(r'class="bpe-char-group" data-chars="([^"]*)"', html)


def test_a_whole_character_token_shows_the_character_not_bytes():
    html = tokens_html("低a", Fixed([LOW, b"a"]))
    assert texts(html) == ["低", "a"] and groups(html) == []
    assert "\\xe4" not in html and 'data-bytes="e4 bd 8e"' in html


def test_single_byte_tokens_show_bytes_and_the_character_they_spell():
    html = tokens_html("低", Tokenizer.byte_level())
    assert texts(html) == ["\\xe4", "\\xbd", "\\x8e"]
    assert html.count('class="bpe-token"') == 3 and groups(html) == ["低"]


def test_a_token_holding_parts_of_two_characters():
    text = "低你"  # e4 bd 8e | e4 bd a0, cut as e4 bd / 8e e4 / bd a0
    pieces = [LOW[:2], LOW[2:] + "你".encode()[:1], "你".encode()[1:]]
    html = tokens_html(text, Fixed(pieces))
    assert texts(html) == ["\\xe4\\xbd", "\\x8e\\xe4", "\\xbd\\xa0"] and groups(html) == ["低你"]


def test_mixed_text_groups_only_split_characters():
    html = tokens_html("a低 b", Fixed([b"a", LOW[:1], LOW[1:], b" b"]))
    assert groups(html) == ["低"]
    assert texts(html)[0] == "a" and texts(html)[-1] == '<span class="bpe-ws">␣</span>b'


def test_gpt2_chinese_and_emoji_read_as_characters():
    tok = gpt2_tokenizer()
    text = "你好 🙂"
    html = tokens_html(text, tok)
    whole = [t for t in texts(html) if not t.startswith("\\x")]
    shown = "".join(whole) + "".join(groups(html))
    # every character of the text is shown, as a token of its own or under its group
    assert all(ch in shown or ch == " " for ch in text)
    assert "🙂" in groups(html) or "🙂" in "".join(whole)


EMOJI_LABELS = ["🙂", "👩\u200d💻", "🇺🇳", "低", "en"]


def test_drawable_writes_undrawable_characters_as_code_points():
    assert plots.drawable("🙂 ok") == "U+1F642 ok"
    assert plots.drawable("en de") == "en de"
    assert plots.drawable("") == ""


@pytest.mark.parametrize("draw", ["premium", "pairs"])
def test_plots_of_emoji_labels_warn_of_no_missing_glyph(draw):
    import matplotlib.pyplot as plt

    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*[Gg]lyph.*missing")
        if draw == "premium":
            fig = plots.tokenization_premium({label: i + 1 for i, label in enumerate(EMOJI_LABELS)}, base="en")
        else:
            fig = plots.pair_counts({(label, "x"): i + 1 for i, label in enumerate(EMOJI_LABELS)})
        fig.canvas.draw()
    ticks = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert any(t.startswith("U+1F642") for t in ticks)
    plt.close(fig)
