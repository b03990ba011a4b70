"""The course's plots: what they draw (bar heights, colours, points,
slopes), worked by hand on the textbook corpus, not merely that a figure
exists. Rendered with the Agg backend, no screen."""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from bpe_lab.core.train import train_trace  # noqa: E402
from bpe_lab.ui import plots  # noqa: E402
from bpe_lab.variants.compression import compress  # noqa: E402

MERGES = [("e", "s"), ("es", "t"), ("est", "</w>"), ("l", "o"), ("lo", "w")]


def heights(fig: Figure) -> list[float]:
    return [bar.get_height() for bar in fig.axes[0].patches]


def ticks(fig: Figure) -> list[str]:
    return [t.get_text() for t in fig.axes[0].get_xticklabels()]


def test_pair_counts_of_a_round_marks_winner_and_ties(textbook_corpus):
    fig = plots.pair_counts(train_trace(textbook_corpus, 5).rounds[0], top=5)
    assert isinstance(fig, Figure)
    # e s, s t, t </w>: newest 6 + widest 3; w e: lower 2 + newest 6; l o: low 5 + lower 2
    assert heights(fig) == [9, 9, 9, 8, 7]
    assert ticks(fig) == ["e s", "s t", "t </w>", "w e", "l o"]
    colours = [to_hex(bar.get_facecolor()) for bar in fig.axes[0].patches]
    amber, pale_amber, grey = "#f59e0b", "#fcd34d", "#94a3b8"  # the widgets' winner and tied rows
    assert colours == [amber, pale_amber, pale_amber, grey, grey]
    assert fig.axes[0].get_title() == "Round 1: pair counts"
    assert [t.get_text() for t in fig.axes[0].texts] == ["9", "9", "9", "8", "7"]


def test_pair_counts_of_a_dict_and_into_given_axes():
    fig, ax = plt.subplots()
    try:
        assert plots.pair_counts({("a", "b"): 2, ("b", "c"): 5}, ax=ax) is fig
        assert heights(fig) == [5, 2] and ticks(fig) == ["b c", "a b"]
    finally:
        plt.close(fig)


def test_axes_in_a_subfigure_return_the_whole_figure():
    fig = plt.figure()
    try:
        left, _ = fig.subfigures(1, 2)
        assert plots.pair_counts({("a", "b"): 2}, ax=left.subplots()) is fig
    finally:
        plt.close(fig)


def test_vocab_vs_tokens_points(textbook_corpus):
    # 16 words, 95 symbols with </w>; e s and es t each save 9 (newest 6 +
    # widest 3), est </w> 9, l o and lo w 7 each (low 5 + lower 2).
    expected = [(11, 95 / 16), (12, 86 / 16), (13, 77 / 16), (14, 68 / 16), (15, 61 / 16), (16, 54 / 16)]
    assert plots.vocab_vs_tokens_points(train_trace(textbook_corpus, 5)) == expected
    assert plots.vocab_vs_tokens_points(textbook_corpus, MERGES) == expected
    line = plots.vocab_vs_tokens(textbook_corpus, MERGES).axes[0].lines[0]
    assert [tuple(p) for p in line.get_xydata()] == expected
    with pytest.raises(TypeError, match="merges"):
        plots.vocab_vs_tokens_points(textbook_corpus)


def test_compression_ratio_per_round():
    packed = compress(b"aaabdaaabac")
    ratios = plots.compression_ratios(packed)
    assert ratios == [(1.0, 1.0), (9 / 11, 12 / 11), (7 / 11, 13 / 11), (5 / 11, 14 / 11)]
    assert ratios[-1][1] == pytest.approx(packed.ratio())
    data_only, with_table = plots.compression_ratio(packed).axes[0].lines[:2]
    assert list(data_only.get_ydata()) == [d for d, _ in ratios]
    assert list(with_table.get_ydata()) == [t for _, t in ratios]
    assert list(with_table.get_xdata()) == [0, 1, 2, 3]


def test_timing_curves_fit_slopes():
    sizes = [100, 200, 400, 800, 1600]
    timings = {"quadratic": (sizes, [3e-7 * n**2 for n in sizes]), "linear": (sizes, [2e-5 * n for n in sizes])}
    assert plots.fit_slope(*timings["quadratic"]) == pytest.approx(2.0)
    ax = plots.timing_curves(timings).axes[0]
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["quadratic (slope 2.00)", "linear (slope 1.00)"]
    fitted = ax.lines[1]  # the dashed power law through the quadratic points
    assert fitted.get_linestyle() == "--"
    assert list(fitted.get_ydata()) == pytest.approx([3e-7 * n**2 for n in sizes])


def _shown(axis) -> list[tuple[float, str]]:
    """The ticks a reader sees labelled on ``axis`` (inside the view, not
    empty): each one's position and its label."""
    low, high = sorted(axis.get_view_interval())
    locs = [*axis.get_majorticklocs(), *axis.get_minorticklocs()]
    labels = [*axis.get_ticklabels(), *axis.get_ticklabels(minor=True)]
    return [(loc, label.get_text()) for loc, label in zip(locs, labels) if label.get_text() and low <= loc <= high]


def _shown_ticks(axis) -> list[str]:
    """The tick labels a reader sees on ``axis``."""
    return [text for _, text in _shown(axis)]


def test_timing_curves_label_ticks_with_plain_numbers():
    """Timings that span less than a decade get labels on the minor ticks,
    which matplotlib writes as 2 × 10⁻¹; here they read 0.2, and sizes 2,000."""
    fig = plots.timing_curves({"fast": ([250, 500, 1000, 2000, 4000], [0.11, 0.1, 0.3, 0.5, 0.65])})
    fig.canvas.draw()
    ax = fig.axes[0]
    assert sorted(_shown_ticks(ax.yaxis), key=float) == ["0.1", "0.2", "0.3", "0.4", "0.6"]
    # Which minor ticks of the sizes (16x, more than a decade) get a label is
    # matplotlib's choice: 3.11 labels 300 ... 4,000, 3.10 (the last for
    # Python 3.10) only 1,000. Each label shown is the plain number at its tick.
    shown = _shown(ax.xaxis)
    assert "1,000" in [text for _, text in shown]
    assert set(_shown_ticks(ax.xaxis)) <= {"300", "400", "600", "1,000", "2,000", "3,000", "4,000"}
    assert all(float(text.replace(",", "")) == pytest.approx(loc) for loc, text in shown), shown


@given(st.floats(min_value=1e-9, max_value=1e12))
def test_plain_number_reads_back_as_the_value(value):
    shown = plots.plain_number(value)
    assert "e" not in shown and "×" not in shown
    assert float(shown.replace(",", "")) == pytest.approx(value, rel=1e-11, abs=1e-12)


@pytest.mark.parametrize("sizes, seconds", [([1], [1]), ([1, 2], [0, 1]), ([1, 2, 3], [1, 2])])
def test_fit_slope_rejects_bad_timings(sizes, seconds):
    with pytest.raises(ValueError):
        plots.fit_slope(sizes, seconds)


def test_tokenization_premium_is_tokens_relative_to_the_base_language():
    tokens = {"en": 40, "zh": 90, "de": 50}
    assert plots.premium_ratios(tokens) == {"en": 1.0, "zh": 2.25, "de": 1.25}
    assert plots.premium_ratios(tokens, base="de") == {"en": 0.8, "zh": 1.8, "de": 1.0}
    fig = plots.tokenization_premium(tokens)
    assert heights(fig) == [1.0, 2.25, 1.25] and ticks(fig) == ["en", "zh", "de"]
    with pytest.raises(ValueError, match="base language 'fr'"):
        plots.premium_ratios(tokens, base="fr")
    with pytest.raises(ValueError, match="the base's > 0"):
        plots.premium_ratios({"en": 0, "zh": 3})


def _png(fig: Figure) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


def test_plots_are_deterministic_and_leave_no_pyplot_figures(textbook_corpus):
    """The one test that compares a plot with itself: "the same input draws
    the same figure" (no randomness, no timestamps) is a claim about two
    runs, so two runs are its check."""
    before = plt.get_fignums()
    packed = compress(b"the cat sat on the mat")
    assert _png(plots.compression_ratio(packed)) == _png(plots.compression_ratio(packed))
    first_round = train_trace(textbook_corpus, 1).rounds[0]
    assert _png(plots.pair_counts(first_round)) == _png(plots.pair_counts(first_round))
    assert plt.get_fignums() == before


# ---------------------------------------------------------------- fonts


def test_font_family_puts_installed_cjk_fonts_before_dejavu():
    family = plots.font_family()
    assert family[-1] == "DejaVu Sans"
    assert list(family[:-1]) == [name for name in plots.CJK_FONTS if name in family]  # in CJK_FONTS' order


def test_chinese_labels_draw_without_a_missing_glyph_warning():
    if len(plots.font_family()) == 1:
        pytest.skip("no CJK font installed (apt-get install fonts-noto-cjk, as `make browser` does)")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Glyph ... missing from font(s) DejaVu Sans" would fail here
        fig = plots.pair_counts({("我", "们"): 3, ("早", "上"): 2, ("。", "</w>"): 5})
        fig.axes[0].set_title("本轮符号对计数")
        fig.savefig(io.BytesIO(), format="png")
        plots.tokenization_premium({"中文": 12, "English": 5}, base="English").savefig(io.BytesIO(), format="png")
    assert ticks(fig)[0] == "。 </w>"


def test_use_fonts_sets_the_default_for_other_plots():
    with plt.rc_context():
        plots.use_fonts()
        assert plt.rcParams["font.family"] == list(plots.font_family())
