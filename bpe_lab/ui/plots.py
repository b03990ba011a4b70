"""The course's plots, one function per picture.

Beside ``views``, which draws one step of an algorithm as HTML, this module
draws a whole run as a matplotlib figure: the pair counts of a round, the
vocabulary against sequence length, compression round by round, measured
scaling, tokens per character by language.

Each function takes the package's own results (a trace ``Round``, a
``Trace``, a ``Compressed``, timings, token counts), draws one matplotlib
chart and returns its ``Figure``. It never calls ``plt.show()``: a notebook
cell that ends with the call shows the figure once, a test reads the bars and
lines back, and ``ax=`` draws into a figure of your own (for side-by-side
panels). The numbers behind each plot come from a small function of their own
(``vocab_vs_tokens_points``, ``compression_ratios``, ``fit_slope``,
``tokens_per_char_ratios``) so they can be printed or checked without a
picture. Nothing random and no timestamps: the same input draws the same
figure.

Labels may be Chinese (notebooks 05 and 06, ``lang="zh"``). Matplotlib's
default font, DejaVu Sans, has no Chinese glyphs: it draws boxes and warns
once per missing glyph. So every plot here draws with ``font_family()``:
the common CJK fonts that are installed (Noto Sans CJK, Source Han Sans,
WenQuanYi, PingFang, Microsoft YaHei, SimHei, ...), then DejaVu Sans,
which matplotlib (3.6 and later) falls back through glyph by glyph.
``use_fonts()`` sets the same list for the notebook's own pandas plots.

Emoji are another matter: the only emoji fonts of most systems are colour
bitmap fonts (Noto Color Emoji), which matplotlib cannot draw, so an emoji
in a label would be a box and a "missing glyph" warning. ``drawable(label)``
writes every character that no font of ``font_family()`` can draw as its
code point (``🙂`` becomes ``U+1F642``); the plots here pass their labels
through it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from typing import ParamSpec, TypeVar

import matplotlib.pyplot as plt
import numpy as np
from matplotlib import font_manager, ticker
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from bpe_lab.core.symbols import END_OF_WORD, Corpus, Pair
from bpe_lab.core.train import Round, Trace
from bpe_lab.core.words import corpus_from_word_freq, merge_symbols
from bpe_lab.variants.compression import Compressed

__all__ = [
    "CJK_FONTS",
    "font_family",
    "use_fonts",
    "drawable",
    "pair_counts",
    "vocab_vs_tokens_points",
    "vocab_vs_tokens",
    "compression_ratios",
    "compression_ratio",
    "fit_slope",
    "plain_number",
    "timing_curves",
    "premium_ratios",
    "tokenization_premium",
]

WINNER, TIED, OTHER = "#f59e0b", "#fcd34d", "#94a3b8"  # the amber of the widgets' highlight

#: CJK fonts, most common first (Linux, then macOS, then Windows names).
CJK_FONTS = (
    "Noto Sans CJK SC",
    "Noto Sans CJK JP",
    "Source Han Sans SC",
    "Source Han Sans",
    "WenQuanYi Zen Hei",
    "WenQuanYi Micro Hei",
    "PingFang SC",
    "Hiragino Sans GB",
    "Microsoft YaHei",
    "SimHei",
    "Arial Unicode MS",
)
_CJK_FILES = re.compile(r"(notosanscjk|sourcehansans|wqy|pingfang|msyh|simhei|arialuni)", re.IGNORECASE)

P = ParamSpec("P")
R = TypeVar("R")


@functools.lru_cache(maxsize=1)
def font_family() -> tuple[str, ...]:
    """The installed fonts of ``CJK_FONTS``, in that order, then DejaVu Sans.

    Only installed fonts are listed: a missing one would make matplotlib log
    "font family not found" on every text. A CJK font installed after
    matplotlib built its font cache is not in that cache; it is looked for
    among the system's fonts and added.
    """
    known = {font.name for font in font_manager.fontManager.ttflist}
    if not known & set(CJK_FONTS):
        for path in font_manager.findSystemFonts():
            if _CJK_FILES.search(path):
                try:
                    font_manager.fontManager.addfont(path)
                except (OSError, RuntimeError, ValueError):  # a file FreeType cannot read
                    continue
        known = {font.name for font in font_manager.fontManager.ttflist}
    return (*[name for name in CJK_FONTS if name in known], "DejaVu Sans")


@functools.lru_cache(maxsize=1)
def _drawable_code_points() -> frozenset[int]:
    """Every code point some font of ``font_family()`` has a glyph for."""
    from matplotlib.ft2font import FT2Font

    points: set[int] = set()
    for name in font_family():
        path = font_manager.findfont(font_manager.FontProperties(family=name), fallback_to_default=False)
        points.update(FT2Font(path).get_charmap())
    return frozenset(points)


def drawable(label: str) -> str:
    """``label`` with each character no font of ``font_family()`` can draw
    (an emoji, most often) written as its code point, so no box is drawn.

    >>> drawable("ok 🙂")
    'ok U+1F642'
    """
    points = _drawable_code_points()
    return "".join(ch if ch.isspace() or ord(ch) in points else f"U+{ord(ch):04X}" for ch in label)


def use_fonts() -> None:
    """Make ``font_family()`` the default of every figure (for plots drawn
    with pandas or pyplot directly, outside this module)."""
    plt.rcParams["font.family"] = list(font_family())


def _fonts(plot: Callable[P, R]) -> Callable[P, R]:
    """Draw ``plot`` with ``font_family()``: every text it makes keeps it."""

    @functools.wraps(plot)
    def drawn(*args: P.args, **kwargs: P.kwargs) -> R:
        with plt.rc_context({"font.family": list(font_family())}):
            return plot(*args, **kwargs)

    return drawn


def _axes(ax: Axes | None, figsize: tuple[float, float] = (7, 3.6)) -> Axes:
    """The caller's axes, or new ones on a figure pyplot forgets at once.

    Closing it in pyplot means the notebook's inline backend will not draw it
    a second time at the end of the cell; the returned Figure still shows
    (once) when the cell ends with it, and tests leak no open figures.
    """
    if ax is not None:
        return ax
    fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    plt.close(fig)
    return ax


def _figure(ax: Axes) -> Figure:
    """The figure that holds ``ax`` (the whole figure, also when ``ax`` is
    in a subfigure), which is what every plot returns."""
    fig = ax.get_figure(root=True)
    if fig is None:
        raise ValueError("these axes belong to no figure")
    return fig


# ---------------------------------------------------------------- training


@_fonts
def pair_counts(counts: Round | Mapping[Pair, int], *, top: int = 15, ax: Axes | None = None) -> Figure:
    """Bar chart of a round's pair counts, most frequent first.

    Given a trace ``Round``, the winning pair is amber and the pairs tied
    with it pale amber, as in ``MergeStepper``; given a plain counts dict,
    all bars are grey.
    """
    rnd = counts if isinstance(counts, Round) else None
    table = counts.pair_counts if isinstance(counts, Round) else dict(counts)
    ranked = sorted(table.items(), key=lambda item: -item[1])[:top]  # stable: ties keep scan order
    colours = [WINNER if rnd and p == rnd.pair else TIED if rnd and p in rnd.ties else OTHER for p, _ in ranked]
    ax = _axes(ax)
    bars = ax.bar(range(len(ranked)), [c for _, c in ranked], color=colours)
    ax.bar_label(bars, fontsize=8)
    ax.set_xticks(range(len(ranked)), [drawable(f"{a} {b}") for (a, b), _ in ranked], rotation=45, ha="right")
    ax.set_ylabel("weighted count")
    ax.set_title(f"Round {rnd.number}: pair counts" if rnd else "Pair counts")
    ax.spines[["top", "right"]].set_visible(False)
    return _figure(ax)


def _corpora(
    source: Trace | Mapping[str, int], merges: Sequence[Pair] | None, end_of_word: str | None
) -> tuple[list[Corpus], int]:
    """The corpus before any merge and after each one, and the number of base symbols."""
    if isinstance(source, Trace):
        return [source.initial] + [r.corpus_after for r in source.rounds], len(source.base_symbols)
    if merges is None:
        raise TypeError("give the merges too when the first argument is a word -> frequency dict")
    corpora = [corpus_from_word_freq(source, end_of_word=end_of_word)]
    for pair in merges:
        corpora.append({merge_symbols(s, (pair[0], pair[1])): f for s, f in corpora[-1].items()})
    base = len({symbol for symbols in corpora[0] for symbol in symbols})
    return corpora, base


def vocab_vs_tokens_points(
    source: Trace | Mapping[str, int], merges: Sequence[Pair] | None = None, *, end_of_word: str | None = END_OF_WORD
) -> list[tuple[int, float]]:
    """(vocabulary size, average tokens per word) before any merge and after
    each one. The average is weighted by word frequency, so it is the
    corpus's token count over its word count.

    >>> vocab_vs_tokens_points({"low": 5, "lower": 2, "newest": 6, "widest": 3}, [("e", "s")])
    [(11, 5.9375), (12, 5.375)]
    """
    corpora, base = _corpora(source, merges, end_of_word)
    words = sum(corpora[0].values())
    return [(base + k, sum(len(s) * f for s, f in corpus.items()) / words) for k, corpus in enumerate(corpora)]


@_fonts
def vocab_vs_tokens(
    source: Trace | Mapping[str, int],
    merges: Sequence[Pair] | None = None,
    *,
    end_of_word: str | None = END_OF_WORD,
    ax: Axes | None = None,
) -> Figure:
    """The trade-off BPE tunes: each merge adds one vocabulary entry and
    shortens the encoded corpus. Give a ``Trace``, or a word -> frequency
    dict and its merges."""
    points = vocab_vs_tokens_points(source, merges, end_of_word=end_of_word)
    ax = _axes(ax)
    ax.plot([v for v, _ in points], [t for _, t in points], marker="o", color="#0ea5e9")
    ax.set_xlabel("vocabulary size")
    ax.set_ylabel("average tokens per word")
    ax.set_title("More merges: a larger vocabulary, shorter sequences")
    ax.grid(alpha=0.3)
    return _figure(ax)


# ---------------------------------------------------------------- compression


def compression_ratios(packed: Compressed) -> list[tuple[float, float]]:
    """Per round (0 = before any), (data only, data + table) sizes as a
    fraction of the original; the table costs 3 bytes per entry, as in
    ``Compressed.ratio``, whose value the last pair's second number equals."""
    n = packed.original_length or 1
    lengths = [packed.original_length] + [r.length for r in packed.rounds]
    return [(length / n, (length + 3 * k) / n) for k, length in enumerate(lengths)]


@_fonts
def compression_ratio(packed: Compressed, *, ax: Axes | None = None) -> Figure:
    """How Gage's compression shrinks the data round by round, and what the
    table costs back."""
    ratios = compression_ratios(packed)
    rounds = range(len(ratios))
    ax = _axes(ax)
    ax.plot(rounds, [d for d, _ in ratios], marker=".", color=OTHER, label="data only")
    ax.plot(rounds, [t for _, t in ratios], marker="o", color="#8b5cf6", label="data + table")
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle=":")
    ax.set_xlabel("round")
    ax.set_ylabel("size / original size")
    ax.set_title("Byte-pair compression, round by round")
    ax.legend(frameon=False)
    ax.grid(alpha=0.3)
    return _figure(ax)


# ---------------------------------------------------------------- complexity


def _positive(values: Sequence[float], name: str) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if array.ndim != 1 or len(array) < 2 or not np.all(array > 0):
        raise ValueError(f"{name} must be at least two positive numbers, got {list(values)!r}")
    return array


def fit_slope(sizes: Sequence[float], seconds: Sequence[float]) -> float:
    """The exponent k of time ≈ c·size^k: the least-squares slope of
    log(seconds) against log(size). About 1 means linear, about 2 quadratic.

    >>> round(fit_slope([10, 100, 1000], [1, 100, 10000]), 6)
    2.0
    """
    x, y = _positive(sizes, "sizes"), _positive(seconds, "seconds")
    if len(x) != len(y):
        raise ValueError(f"{len(x)} sizes but {len(y)} timings")
    slope, _ = np.polyfit(np.log(x), np.log(y), 1)
    return float(slope)


def plain_number(value: float) -> str:
    """A tick value as a learner reads it: ``0.3``, ``2,000``, ``0.0005``;
    never ``3 × 10⁻¹``.

    >>> [plain_number(v) for v in (0.3, 2000, 5e-4, 1e-7, 1e7)]
    ['0.3', '2,000', '0.0005', '0.0000001', '10,000,000']
    """
    if value >= 1 and float(value).is_integer():
        return f"{value:,.0f}"
    return np.format_float_positional(value, precision=12, trim="-")


class _PlainLogFormatter(ticker.LogFormatter):
    """matplotlib's choice of which log ticks get a label, written with
    ``plain_number``. On an axis that spans less than a decade (timings
    often do) only the minor ticks 2, 3, 4, 6 carry labels, and the default
    writes each as ``3 × 10⁻¹``."""

    def __call__(self, x: float, pos: int | None = None) -> str:
        return plain_number(x) if super().__call__(x, pos) else ""


def _plain_log_ticks(ax: Axes) -> None:
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(_PlainLogFormatter(labelOnlyBase=False))
        axis.set_minor_formatter(_PlainLogFormatter(labelOnlyBase=False, minor_thresholds=(1, 0.4)))


@_fonts
def timing_curves(timings: Mapping[str, tuple[Sequence[float], Sequence[float]]], *, ax: Axes | None = None) -> Figure:
    """Measured times on log-log axes, one series per name, each with its
    fitted power law dashed and its slope in the legend: on log-log axes
    O(n) is a line of slope 1 and O(n²) a line of slope 2. Tick labels
    are plain numbers (``plain_number``)."""
    ax = _axes(ax)
    for name, (sizes, seconds) in timings.items():
        slope = fit_slope(sizes, seconds)
        x, y = np.asarray(sizes, float), np.asarray(seconds, float)
        intercept = np.mean(np.log(y) - slope * np.log(x))
        (points,) = ax.loglog(x, y, marker="o", linestyle="none", label=f"{drawable(name)} (slope {slope:.2f})")
        ax.loglog(x, np.exp(intercept) * x**slope, linestyle="--", color=points.get_color(), linewidth=1)
    ax.set_xlabel("input size")
    ax.set_ylabel("seconds")
    ax.set_title("Measured scaling (log-log)")
    _plain_log_ticks(ax)
    ax.legend(frameon=False)
    ax.grid(alpha=0.3, which="both")
    return _figure(ax)


# ---------------------------------------------------------------- languages


def premium_ratios(tokens: Mapping[str, float], *, base: str = "en") -> dict[str, float]:
    """The tokenization premium (Petrov et al., 2023): how many tokens each
    language needs for the same content, relative to ``base``. ``tokens``
    maps a language to the token count of one parallel text (the same
    sentences in every language), so the ratio compares like with like;
    tokens per *character* would not, since a Chinese character carries
    about as much as an English word.

    >>> premium_ratios({"en": 20, "zh": 45, "de": 25})
    {'en': 1.0, 'zh': 2.25, 'de': 1.25}
    """
    if base not in tokens:
        raise ValueError(f"the base language {base!r} is not among {sorted(tokens)}")
    if tokens[base] <= 0 or any(n < 0 for n in tokens.values()):
        raise ValueError(f"token counts must be >= 0 and the base's > 0, got {dict(tokens)}")
    return {lang: n / tokens[base] for lang, n in tokens.items()}


@_fonts
def tokenization_premium(tokens: Mapping[str, float], *, base: str = "en", ax: Axes | None = None) -> Figure:
    """Bar chart of ``premium_ratios``: the same sentences cost some languages
    several times the tokens (and so the context, time and money) of ``base``."""
    ratios = premium_ratios(tokens, base=base)
    ax = _axes(ax, figsize=(max(4.0, 1.0 + 0.9 * len(ratios)), 3.6))
    bars = ax.bar([drawable(lang) for lang in ratios], list(ratios.values()), color="#0ea5e9")
    ax.bar_label(bars, fmt="%.2fx", fontsize=8)
    ax.axhline(1.0, color="#94a3b8", linewidth=1, linestyle="--")
    ax.set_ylabel(f"tokens relative to {base}")
    ax.set_title("Tokenization premium: the same sentences, by language")
    ax.set_ylim(0, max(ratios.values(), default=1) * 1.15 or 1)
    ax.spines[["top", "right"]].set_visible(False)
    return _figure(ax)
