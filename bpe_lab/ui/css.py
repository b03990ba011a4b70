"""The one style sheet every view starts with, and the inline styles that
must survive without it.

Below ``blocks``: no Python logic, only the look, so the colours can be
changed without touching a view. Every rule is scoped under ``.bpe-view``
(or a ``bpe-`` class) so nothing leaks into the rest of a notebook. Colours
are translucent overlays on JupyterLab's theme variables (with a light
fallback after the comma), so the same sheet reads well in light and dark
themes; the amber highlight of the pair about to merge is the amber that
``plots`` uses for the winning bar.

JupyterLab (for an untrusted notebook) and a forge's renderer drop the
``<style>`` block of a saved output, so everything layout and legibility
depend on is also written inline, from ``INLINE``: flex and grid, gaps,
padding, borders in a grey that reads on light and dark themes, no-wrap
where a line must not break. Those values are plain (no theme variables,
which a sanitizer may reject); the sheet keeps the niceties (theme
colours, dark mode), and inline values win where both speak.
"""

__all__ = [
    "CSS",
    "CHECKPOINT_CSS",
    "FEEDBACK_COLOURS",
    "DARK_FEEDBACK_COLOURS",
    "INLINE",
    "FONT_STACK",
    "MONO_STACK",
    "style",
]

#: The theme's font, then common CJK and emoji fonts: Chinese text and emoji
#: show wherever one of them is installed.
FONT_STACK = (
    "system-ui, -apple-system, 'Segoe UI', 'Noto Sans', 'Noto Sans CJK SC', 'Source Han Sans SC', "
    "'PingFang SC', 'Microsoft YaHei', 'WenQuanYi Micro Hei', sans-serif, 'Noto Color Emoji', "
    "'Apple Color Emoji', 'Segoe UI Emoji'"
)
MONO_STACK = "ui-monospace, Menlo, Consolas, 'DejaVu Sans Mono', 'Noto Sans Mono CJK SC', monospace, 'Noto Color Emoji'"

_GREY = "rgba(128, 128, 128, .5)"  # a border that reads on white and on black
_AMBER = "rgba(245, 158, 11, .35)"

#: Element kind -> the inline style it always carries.
INLINE: dict[str, str] = {
    "view": f"font-family: {FONT_STACK}; font-size: 13px; line-height: 1.5; max-width: 1100px",
    "head": "display: flex; flex-wrap: wrap; gap: 6px 12px; align-items: center; margin: 0 0 10px",
    "title": "flex: 1 1 100%; font-size: 15px; font-weight: 600; margin: 4px 0 0",
    "badge": "display: inline-block; white-space: nowrap; padding: 1px 9px; border-radius: 10px; "
    f"border: 1px solid {_GREY}",
    # Panels share a row while each gets at least its flex-basis (blocks.panel):
    # at 1024 px with the file browser open the three training panels fit.
    "grid": "display: flex; flex-wrap: wrap; gap: 12px; align-items: flex-start",
    "panel": f"border: 1px solid {_GREY}; border-radius: 8px; padding: 8px 10px; min-width: 0; box-sizing: border-box; "
    "overflow-x: auto",
    "heading": "font-size: 12px; font-weight: 600; margin: 0 0 6px; text-transform: uppercase; letter-spacing: .04em",
    "word": "display: flex; flex-wrap: wrap; align-items: center; gap: 2px 10px; margin: 3px 0",
    "freq": "white-space: nowrap; opacity: .8",
    "syms": "display: inline-flex; flex-wrap: wrap; gap: 3px; align-items: center",
    "sym": f"display: inline-block; font-family: {MONO_STACK}; padding: 0 5px; border-radius: 4px; "
    f"border: 1px solid {_GREY}; white-space: pre",
    "hl": f"display: inline-flex; gap: 3px; padding: 2px; border-radius: 6px; background: {_AMBER}; "
    "outline: 2px solid #f59e0b",
    "table": "border-collapse: collapse; width: 100%",
    "cell": "text-align: left; padding: 2px 6px; white-space: nowrap",
    "num": "text-align: right; padding: 2px 6px; white-space: nowrap",
    "winner": f"background: {_AMBER}; font-weight: 600",
    "tied": "background: rgba(245, 158, 11, .12)",
    "mark": "font-size: 11px",
    "note": "margin: 8px 0 0",
    "done": "margin: 8px 0 0; font-weight: 600",
    "list": "margin: 0; padding-left: 26px",
    "rule": "margin: 3px 0",
    # A table row spanning every column, such as "… +2" under the pair
    # counts: JupyterLab right-aligns table cells unless told otherwise.
    "span_row": "text-align: left; padding: 2px 6px; font-size: 11px",
    # A code span in a checkpoint: JupyterLab tints <code> only inside a
    # rendered output, not inside a live widget, so the tint is inline.
    "code": "padding: 0 3px; border-radius: 3px; background: rgba(128, 128, 128, .18)",
    "row": "display: flex; flex-wrap: wrap; gap: 3px 1px; align-items: flex-start",
    "token": "display: inline-flex; flex-direction: column; align-items: center; border-radius: 4px; "
    "padding: 1px 2px; min-width: 14px; margin: 1px 0",
    "token_text": f"font-family: {MONO_STACK}; font-size: 14px; white-space: pre",
    "token_small": "font-size: 10px; opacity: .75",
}


def style(kind: str) -> str:
    """The ``style`` attribute of one element kind, with a leading space.

    >>> style("freq")
    ' style="white-space: nowrap; opacity: .8"'
    """
    return f' style="{INLINE[kind]}"'


#: A checkpoint's feedback colour, inline (light themes, and pages that drop
#: the style sheet), and in dark themes: each reaches WCAG AA (4.5:1) on its
#: background (#ffffff; JupyterLab dark #111111 and #212121), which
#: tests/test_checkpoints.py computes. No colour reaches 4.5:1 on both, so
#: the sheet overrides the inline colour in a dark theme.
FEEDBACK_COLOURS = {"correct": "#15803d", "wrong": "#b91c1c"}
DARK_FEEDBACK_COLOURS = {"correct": "#4ade80", "wrong": "#f87171"}

_DARK = "".join(
    f'.bpe-feedback[data-state="{state}"] {{ color: {colour} !important; }}'
    for state, colour in DARK_FEEDBACK_COLOURS.items()
)
#: The dark-theme feedback colours: JupyterLab's dark theme, or a page whose
#: reader prefers dark and that is not JupyterLab's light theme. Inside the
#: live widget too, which does not carry ``CSS``.
CHECKPOINT_CSS = (
    "<style>"
    + " ".join(f'body[data-jp-theme-light="false"] {rule}}}' for rule in _DARK.split("}")[:-1])
    + " @media (prefers-color-scheme: dark) { "
    + " ".join(f'body:not([data-jp-theme-light="true"]) {rule}}}' for rule in _DARK.split("}")[:-1])
    + " }"
    + " .bpe-checkpoint code { font-family: var(--jp-code-font-family, ui-monospace, Menlo, Consolas, monospace);"
    " white-space: pre-wrap; }" + "</style>"
)

#: Prepended to every view's HTML; a static page (nbviewer, a forge) shows
#: the views styled without any notebook extension.
CSS = """<style>
.bpe-view { font-family: var(--jp-ui-font-family, system-ui, sans-serif); font-size: 13px;
  color: var(--jp-content-font-color1, #1f2328); line-height: 1.5; max-width: 1100px; }
.bpe-view h3 { font-size: 15px; margin: 4px 0 8px; font-weight: 600; }
.bpe-view h4 { font-size: 12px; margin: 0 0 6px; font-weight: 600; text-transform: uppercase;
  letter-spacing: .04em; color: var(--jp-content-font-color2, #57606a); }
.bpe-head { display: flex; flex-wrap: wrap; gap: 8px 18px; align-items: baseline; margin-bottom: 10px; }
.bpe-badge { white-space: nowrap; padding: 1px 9px; border-radius: 10px; background: var(--jp-layout-color2, #eef1f4);
  border: 1px solid var(--jp-border-color2, #d0d7de); }
.bpe-grid { display: flex; flex-wrap: wrap; gap: 12px; align-items: flex-start; }
.bpe-panel { border: 1px solid var(--jp-border-color2, #d0d7de); border-radius: 8px; padding: 10px 12px;
  background: var(--jp-layout-color1, #fff); }
.bpe-word { display: flex; align-items: center; gap: 10px; margin: 3px 0; }
.bpe-freq { white-space: nowrap; color: var(--jp-content-font-color2, #57606a); font-variant-numeric: tabular-nums; }
.bpe-syms { display: inline-flex; flex-wrap: wrap; gap: 3px; align-items: center; }
.bpe-sym { font-family: var(--jp-code-font-family, ui-monospace, Menlo, Consolas, monospace); font-size: 13px;
  padding: 0 5px; border-radius: 4px; border: 1px solid var(--jp-border-color1, #afb8c1);
  background: var(--jp-layout-color2, #f6f8fa); white-space: pre; }
.bpe-sym.bpe-new { border-color: #0ea5e9; background: rgba(14, 165, 233, .18); }
.bpe-hl { display: inline-flex; gap: 3px; padding: 2px; border-radius: 6px;
  background: rgba(245, 158, 11, .35); outline: 2px solid #f59e0b; }
.bpe-hl .bpe-sym { background: transparent; border-color: #d97706; font-weight: 700; }
.bpe-view table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
.bpe-view th, .bpe-view td { text-align: left; padding: 2px 6px;
  border-bottom: 1px solid var(--jp-border-color3, #eaeef2); }
.bpe-view td.bpe-num, .bpe-view th.bpe-num { text-align: right; }
.bpe-view tr.bpe-winner td { background: rgba(245, 158, 11, .35); font-weight: 600; }
.bpe-view tr.bpe-tied td { background: rgba(245, 158, 11, .12); }
.bpe-mark { font-size: 11px; color: var(--jp-content-font-color2, #57606a); }
.bpe-note { margin: 8px 0 0; color: var(--jp-content-font-color2, #57606a); }
.bpe-merges { margin: 0; padding-left: 26px; }
.bpe-merges li { margin: 3px 0; }
.bpe-arrow { color: var(--jp-content-font-color2, #57606a); margin: 0 4px; }
.bpe-tie { font-size: 11px; color: #d97706; margin-left: 6px; }
.bpe-done { font-weight: 600; color: #15803d; }
body[data-jp-theme-light="false"] .bpe-done { color: #4ade80; }
.bpe-ws { opacity: .55; }
.bpe-diff { outline: 2px solid #e11d48; background: rgba(225, 29, 72, .15); }
.bpe-code { border-color: #8b5cf6; background: rgba(139, 92, 246, .2); font-size: 11px; }
.bpe-raw { color: var(--jp-content-font-color2, #57606a); font-size: 11px; }
.bpe-bytes { display: flex; flex-wrap: wrap; gap: 3px; }
.bpe-tokens-row { display: flex; flex-wrap: wrap; gap: 2px 1px; align-items: flex-start; }
.bpe-token { display: inline-flex; flex-direction: column; align-items: center; border-radius: 4px;
  padding: 1px 2px; min-width: 14px; }
.bpe-token-text { font-family: var(--jp-code-font-family, ui-monospace, Menlo, monospace); font-size: 14px;
  white-space: pre; }
.bpe-token-id { font-size: 10px; line-height: 1.2; color: var(--jp-content-font-color2, #57606a);
  font-variant-numeric: tabular-nums; }
.bpe-token-bytes { font-size: 9px; color: var(--jp-content-font-color3, #6e7781);
  font-family: var(--jp-code-font-family, ui-monospace, monospace); }
.bpe-partial { color: #d97706; }
</style>"""
