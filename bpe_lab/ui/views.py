"""HTML views of the algorithms' states, as pure functions.

Each function turns one state (a training round, an encoding step, a
compression round, a tokenized text) into an HTML string. Nothing here knows
about ipywidgets: ``widgets`` only wires buttons to a state and puts the
string on screen, so the same views can be tested as text, shown with
``IPython.display.HTML`` or saved into a page.

Every view carries machine-readable ``data-*`` attributes (the round, the
highlighted pair, each recorded rule), so tests, exercises and the browser
test read the state back without parsing prose. Colours are translucent
overlays on JupyterLab's theme variables, so they read well in light and dark
themes alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Protocol

from bpe_lab.core.encode import vocabulary
from bpe_lab.core.symbols import Pair
from bpe_lab.core.train import Round, Trace
from bpe_lab.ui.labels import labels
from bpe_lab.ui.steps import EncodeStep
from bpe_lab.variants.compression import Compressed

__all__ = [
    "CSS",
    "pair_starts",
    "merge_round_html",
    "encode_step_html",
    "compression_round_html",
    "tokens_html",
    "TokenizerLike",
]

CSS = """<style>
.bpe-view { font-family: var(--jp-ui-font-family, system-ui, sans-serif); font-size: 13px;
  color: var(--jp-content-font-color1, #1f2328); line-height: 1.5; max-width: 1100px; }
.bpe-view h3 { font-size: 15px; margin: 4px 0 8px; font-weight: 600; }
.bpe-view h4 { font-size: 12px; margin: 0 0 6px; font-weight: 600; text-transform: uppercase;
  letter-spacing: .04em; color: var(--jp-content-font-color2, #57606a); }
.bpe-head { display: flex; flex-wrap: wrap; gap: 8px 18px; align-items: baseline; margin-bottom: 10px; }
.bpe-badge { padding: 1px 9px; border-radius: 10px; background: var(--jp-layout-color2, #eef1f4);
  border: 1px solid var(--jp-border-color2, #d0d7de); }
.bpe-grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(250px, 1fr)); gap: 12px; align-items: start; }
.bpe-panel { border: 1px solid var(--jp-border-color2, #d0d7de); border-radius: 8px; padding: 10px 12px;
  background: var(--jp-layout-color1, #fff); }
.bpe-word { display: flex; align-items: center; gap: 10px; margin: 3px 0; }
.bpe-freq { color: var(--jp-content-font-color2, #57606a); font-variant-numeric: tabular-nums; }
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
.bpe-mark { font-size: 11px; color: var(--jp-content-font-color2, #57606a); white-space: nowrap; }
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
.bpe-token-id { font-size: 10px; color: var(--jp-content-font-color2, #57606a); font-variant-numeric: tabular-nums; }
.bpe-token-bytes { font-size: 9px; color: var(--jp-content-font-color3, #6e7781);
  font-family: var(--jp-code-font-family, ui-monospace, monospace); }
.bpe-partial { color: #d97706; }
</style>"""


# ---------------------------------------------------------------- building blocks


def pair_starts(symbols: Sequence, pair: tuple) -> list[int]:
    """Where ``pair`` starts in ``symbols``, scanning left to right and
    skipping an occurrence that overlaps the previous one: exactly the
    occurrences that ``merge_symbols`` (and ``bytes.replace``) join, so the
    highlight shows what the next step will merge.

    >>> pair_starts(("a", "a", "a", "b"), ("a", "a"))
    [0]
    """
    starts: list[int] = []
    i = 0
    while i + 1 < len(symbols):
        if symbols[i] == pair[0] and symbols[i + 1] == pair[1]:
            starts.append(i)
            i += 2
        else:
            i += 1
    return starts


def _attr(value: object) -> str:
    return escape(str(value), quote=True)


def _sym(text: str, extra: str = "") -> str:
    return f'<span class="bpe-sym{" " + extra if extra else ""}">{escape(text)}</span>'


def _pair_data(pair: Sequence) -> str:
    return f'data-left="{_attr(pair[0])}" data-right="{_attr(pair[1])}"'


def _pair_text(pair: Pair) -> str:
    return escape(f"({pair[0]}, {pair[1]})")


def _chips(symbols: Sequence, pair: tuple | None = None, new: str | None = None, render=None) -> str:
    """Symbols as chips; each occurrence of ``pair`` is wrapped in one
    highlight box, and symbols equal to ``new`` (just merged) are tinted.
    ``render`` draws one symbol (bytes use it to draw byte values)."""
    render = render or (lambda s: _sym(s, "bpe-new" if new is not None and s == new else ""))
    starts = set(pair_starts(symbols, pair)) if pair else set()
    parts: list[str] = []
    i = 0
    while i < len(symbols):
        if i in starts:
            inner = render(symbols[i]) + render(symbols[i + 1])
            parts.append(f'<span class="bpe-hl" {_pair_data(pair)}>{inner}</span>')
            i += 2
        else:
            parts.append(render(symbols[i]))
            i += 1
    return f'<span class="bpe-syms">{"".join(parts)}</span>'


def _panel(title: str, body: str, cls: str = "") -> str:
    return f'<div class="bpe-panel {cls}"><h4>{escape(title)}</h4>{body}</div>'


def _badge(inner: str, cls: str = "", attrs: str = "") -> str:
    """A rounded label in the header; ``inner`` is HTML (escape text first)."""
    return f'<span class="bpe-badge {cls}" {attrs}>{inner}</span>'


def _labelled(name: str, inner: str, cls: str = "", attrs: str = "") -> str:
    """One line: a faint label, then chips."""
    return f'<div class="bpe-word {cls}" {attrs}><span class="bpe-freq">{escape(name)}</span>{inner}</div>'


def _table(headers: Sequence[str], rows: str, numeric: int | None = None) -> str:
    """A table; column ``numeric`` (an index) is right-aligned."""
    cells = "".join(f"<th{' class=bpe-num' if i == numeric else ''}>{escape(h)}</th>" for i, h in enumerate(headers))
    return f"<table><tr>{cells}</tr>{rows}</table>"


def _view(kind: str, lang: str, number: int, total: int, head: str, panels: str, attrs: str = "") -> str:
    """The whole view: the style sheet, then a root element whose data
    attributes say which view and round this is, then header and panels."""
    return (
        f'{CSS}<div class="bpe-view bpe-{kind}" lang="{lang}" data-round="{number}" data-total="{total}" {attrs}>'
        f'<div class="bpe-head">{head}</div><div class="bpe-grid">{panels}</div></div>'
    )


def _title(text: str) -> str:
    return f"<h3>{escape(text)}</h3>"


def _check_index(number: int, last: int, what: str) -> None:
    if not 0 <= number <= last:
        raise IndexError(f"{what} {number} does not exist; there are {what}s 0..{last}")


# ---------------------------------------------------------------- training


def _rule_name(tie_break: str, L: Mapping[str, str]) -> str:
    return L["rule_" + tie_break]


def _corpus_panel(corpus: Mapping[tuple[str, ...], int], pair: Pair | None, new: str | None, L) -> str:
    rows = "".join(
        f'<div class="bpe-word">{_chips(symbols, pair, new)}<span class="bpe-freq">× {freq}</span></div>'
        for symbols, freq in corpus.items()
    )
    return _panel(L["corpus"], f'<div class="bpe-corpus">{rows}</div>', "bpe-corpus-panel")


def _pair_rows(rnd: Round, max_pairs: int, L) -> str:
    """Pairs sorted by count (ties keep scan order); the top ``max_pairs``
    plus every pair tied with the winner, so the tie is always visible."""
    ranked = sorted(rnd.pair_counts.items(), key=lambda item: -item[1])
    rows = []
    for i, (pair, count) in enumerate(ranked):
        if i >= max_pairs and count < rnd.count:
            break
        cls, mark = ("bpe-winner", "★ " + L["winner"]) if pair == rnd.pair else ("", "")
        if pair in rnd.ties:
            cls, mark = "bpe-tied", "= " + L["tied"]
        rows.append(
            f'<tr class="{cls}" {_pair_data(pair)} data-count="{count}"><td>{_chips(pair)}</td>'
            f'<td class="bpe-num">{count}</td><td class="bpe-mark">{escape(mark)}</td></tr>'
        )
    hidden = len(ranked) - len(rows)
    more = f'<tr><td colspan="3" class="bpe-mark">… +{hidden}</td></tr>' if hidden else ""
    return "".join(rows) + more


def _tie_note(rnd: Round, tie_break: str, L) -> str:
    if not rnd.ties:
        return L["no_tie"].format(pair=_pair_text(rnd.pair), count=rnd.count)
    rule = escape(_rule_name(tie_break, L))
    return L["tie_note"].format(n=len(rnd.ties) + 1, count=rnd.count, rule=rule, pair=_pair_text(rnd.pair))


def _pair_panel(trace: Trace, number: int, max_pairs: int, L) -> str:
    if number >= len(trace.rounds):
        message = L["done"].format(n=len(trace.rounds))
        if trace.requested > len(trace.rounds):
            message += " " + L["exhausted"]
        return _panel(L["pair_counts"], f'<p class="bpe-done">{escape(message)}</p>')
    rnd = trace.rounds[number]
    table = _table([L["pair"], L["count"], L["mark"]], _pair_rows(rnd, max_pairs, L), numeric=1)
    rule = _attr(trace.tie_break)
    note = f'<p class="bpe-note bpe-rule-note" data-rule="{rule}">{_tie_note(rnd, trace.tie_break, L)}</p>'
    return _panel(L["pair_counts"], table + note, "bpe-pairs-panel")


def _merge_item(rnd: Round, tie_break: str, L) -> str:
    """One learned rule: the pair, the new symbol, its count, and, if it won
    a tie, which rule chose it."""
    tie = ""
    if rnd.ties:
        chosen = L["chosen_by"].format(n=len(rnd.ties) + 1, rule=_rule_name(tie_break, L))
        tie = f'<span class="bpe-tie">{escape(chosen)}</span>'
    attrs = (
        f'{_pair_data(rnd.pair)} data-count="{rnd.count}" data-tied="{len(rnd.ties)}" data-rule="{_attr(tie_break)}"'
    )
    return (
        f'<li class="bpe-rule" {attrs}>{_chips(rnd.pair)}<span class="bpe-arrow">→</span>'
        f'{_sym(rnd.new_symbol, "bpe-new")} <span class="bpe-freq">({rnd.count})</span>{tie}</li>'
    )


def _merges_panel(trace: Trace, number: int, L) -> str:
    items = "".join(_merge_item(r, trace.tie_break, L) for r in trace.rounds[:number])
    body = f'<ol class="bpe-merges">{items}</ol>' if items else f'<p class="bpe-note">{L["none_yet"]}</p>'
    return _panel(L["merges"], body, "bpe-merges-panel")


def _merge_head(trace: Trace, number: int, nxt: Pair | None, L) -> str:
    vocab = len(vocabulary(trace.merges[:number], trace.base_symbols))
    counter = escape(L["round_of"].format(round=number, total=len(trace.rounds)))
    rule = escape(_rule_name(trace.tie_break, L))
    head = (
        _title(L["train_title"])
        + _badge(counter, "bpe-counter")
        + _badge(f"{L['vocab_size']}{L['colon']}{vocab}", "bpe-vocab", f'data-vocab-size="{vocab}"')
        + _badge(f"{L['tie_break']}{L['colon']}{rule}")
    )
    return head + (_badge(f"{L['winner']}{L['colon']}{_chips(nxt)}", "bpe-next", _pair_data(nxt)) if nxt else "")


def merge_round_html(trace: Trace, number: int = 0, *, lang: str = "en", max_pairs: int = 12) -> str:
    """The training view after ``number`` merges (0 = nothing merged yet).

    The corpus is shown as it is *before* merge ``number + 1``, with every
    occurrence of that merge's pair highlighted and the symbol made by the
    previous merge tinted; beside it the round's pair counts (winner and ties
    marked, and which tie-break rule decided) and the rules learned so far.
    """
    _check_index(number, len(trace.rounds), "round")
    L = labels(lang)
    corpus = trace.initial if number == 0 else trace.rounds[number - 1].corpus_after
    nxt = trace.rounds[number].pair if number < len(trace.rounds) else None
    new = trace.rounds[number - 1].new_symbol if number else None
    panels = (
        _corpus_panel(corpus, nxt, new, L) + _pair_panel(trace, number, max_pairs, L) + _merges_panel(trace, number, L)
    )
    head = _merge_head(trace, number, nxt, L)
    return _view("merge", lang, number, len(trace.rounds), head, panels, f'data-tie-break="{_attr(trace.tie_break)}"')


# ---------------------------------------------------------------- encoding


def _rank_panel(step: EncodeStep, L) -> str:
    """Each distinct adjacent pair once, in the order met, with its rank."""
    rows = []
    for pair, rank in dict(step.pairs).items():
        best = pair == step.best
        shown = L["no_rule"] if rank is None else str(rank)
        rows.append(
            f'<tr class="{"bpe-winner" if best else ""}" {_pair_data(pair)} data-rank="{"" if rank is None else rank}">'
            f'<td>{_chips(pair)}</td><td class="bpe-num">{escape(shown)}</td>'
            f'<td class="bpe-mark">{escape("★ " + L["lowest"] if best else "")}</td></tr>'
        )
    return _panel(L["pairs_now"], _table([L["pair"], L["rank"], L["mark"]], "".join(rows), numeric=1))


def _spans(tokens: Sequence[str]) -> set[tuple[int, int]]:
    """The (start, end) character offsets of each token."""
    spans, start = set(), 0
    for token in tokens:
        spans.add((start, start + len(token)))
        start += len(token)
    return spans


def _outlined(tokens: Sequence[str], other: Sequence[str]) -> str:
    """Chips for ``tokens``, outlining each one whose span ``other`` lacks."""
    theirs, start, chips = _spans(other), 0, []
    for token in tokens:
        chips.append(_sym(token, "" if (start, start + len(token)) in theirs else "bpe-diff"))
        start += len(token)
    return f'<span class="bpe-syms">{"".join(chips)}</span>'


def _compare_panel(replay: Sequence[str], longest: Sequence[str], L) -> str:
    """Rank replay's final tokens above greedy longest match's, with the
    tokens where they disagree outlined."""
    same = list(replay) == list(longest)
    verdict = f'<p class="bpe-note" data-same="{str(same).lower()}">{L["same"] if same else L["differs"]}</p>'
    body = (
        _labelled(L["rank_replay"], _outlined(replay, longest), attrs='data-role="replay"')
        + _labelled(L["longest_match"], _outlined(longest, replay), attrs='data-role="longest"')
        + verdict
    )
    return _panel(L["longest_match"], body, "bpe-compare-panel")


def _sequence_panel(step: EncodeStep, L) -> str:
    """Before the last step: the sequence with the pair to merge, and after
    it; on the last step: the final tokens."""
    if step.best:
        before = f'<div class="bpe-word bpe-sequence">{_chips(step.symbols, step.best)}</div>'
        after = _labelled(L["after_merge"], _chips(step.after, new=step.best[0] + step.best[1]))
        return _panel(L["sequence"], before + after)
    tokens = f'data-tokens="{_attr(" ".join(step.symbols))}"'
    final = f'<div class="bpe-word bpe-final" {tokens}>{_chips(step.symbols)}</div>'
    return _panel(L["final_tokens"], final + f'<p class="bpe-done">{escape(L["no_pair_left"])}</p>')


def encode_step_html(
    steps: Sequence[EncodeStep],
    number: int = 0,
    *,
    word: str = "",
    longest: Sequence[str] | None = None,
    lang: str = "en",
) -> str:
    """The encoding view at step ``number``: the sequence with its
    lowest-ranked pair highlighted, every adjacent pair with its rank (or
    "no rule"), the sequence after merging; the final tokens on the last
    step; and, if ``longest`` is given, greedy longest match beside it."""
    _check_index(number, len(steps) - 1, "step")
    L = labels(lang)
    step, total = steps[number], len(steps) - 1
    head = _title(L["encode_title"].format(word=word)) + _badge(
        escape(L["step_of"].format(round=number, total=total)), "bpe-counter"
    )
    if step.best:
        head += _badge(f"{L['lowest']}{L['colon']}{_chips(step.best)}", "bpe-next", _pair_data(step.best))
    panels = _sequence_panel(step, L) + (_rank_panel(step, L) if step.pairs else "")
    if longest is not None:
        panels += _compare_panel(steps[-1].symbols, longest, L)
    return _view("encode", lang, number, total, head, panels)


# ---------------------------------------------------------------- compression


def _byte_cell(value: int, codes: Mapping[int, tuple[int, int]]) -> str:
    """A code byte as a violet hex chip, printable ASCII as itself, space as
    ␣, any other byte as faint hex."""
    if value in codes:
        return f'<span class="bpe-sym bpe-code" title="0x{value:02x}">{value:02x}</span>'
    if value == 32:
        return '<span class="bpe-sym"><span class="bpe-ws">␣</span></span>'
    if 32 < value < 127:
        return _sym(chr(value))
    return f'<span class="bpe-sym bpe-raw">{value:02x}</span>'


def _byte_text(value: int, codes: Mapping) -> str:
    return f"0x{value:02x}" if value in codes or not 32 < value < 127 else chr(value)


def _expand(code: int, table: Mapping[int, tuple[int, int]]) -> bytes:
    """What a code finally stands for, expanding nested codes."""
    out = b""
    for part in table[code]:
        out += _expand(part, table) if part in table else bytes((part,))
    return out


def _printable(data: bytes) -> str:
    return "".join(chr(b) if 32 <= b < 127 else f"\\x{b:02x}" for b in data)


def _table_panel(table: Mapping[int, tuple[int, int]], L) -> str:
    rows = "".join(
        f'<tr data-code="{code}"><td>{_byte_cell(code, table)}</td>'
        f'<td><span class="bpe-syms">{_byte_cell(a, table)}{_byte_cell(b, table)}</span></td>'
        f"<td>{escape(_printable(_expand(code, table)))}</td></tr>"
        for code, (a, b) in table.items()
    )
    body = _table([L["code"], L["pair"], L["means"]], rows) if rows else f'<p class="bpe-note">{L["none_yet"]}</p>'
    return _panel(L["table"], body, "bpe-table-panel")


def _data_panel(data: bytes, nxt, table: Mapping[int, tuple[int, int]], max_bytes: int, L) -> str:
    """The data as byte chips (the next pair highlighted, at most
    ``max_bytes`` shown) and what the next round will do."""
    cells = _chips(list(data[:max_bytes]), nxt.pair if nxt else None, render=lambda v: _byte_cell(v, table))
    more = f'<span class="bpe-mark">… +{len(data) - max_bytes}</span>' if len(data) > max_bytes else ""
    if nxt:
        pair = escape("(" + ", ".join(_byte_text(v, table) for v in nxt.pair) + ")")
        note = L["replace_pair"].format(pair=pair, count=nxt.count, byte=f"0x{nxt.byte:02x}")
        note = f'<p class="bpe-note bpe-next" {_pair_data(nxt.pair)} data-byte="{nxt.byte}">{note}</p>'
    else:
        note = f'<p class="bpe-done">{escape(L["compress_done"])}</p>'
    return _panel(L["data"], f'<div class="bpe-bytes">{cells}{more}</div>{note}', "bpe-data-panel")


def compression_round_html(
    states: Sequence[bytes], packed: Compressed, number: int = 0, *, lang: str = "en", max_bytes: int = 400
) -> str:
    """The compression view after ``number`` rounds: the data (code bytes in
    violet) with every occurrence of the next pair highlighted, what that pair
    becomes, the table so far and the size against the original."""
    _check_index(number, len(states) - 1, "round")
    L = labels(lang)
    data, table = states[number], dict(list(packed.table.items())[:number])
    nxt = packed.rounds[number] if number < len(packed.rounds) else None
    original = packed.original_length
    ratio = (len(data) + 3 * len(table)) / original if original else 1.0
    size = L["size"].format(length=len(data), table=3 * len(table), ratio=ratio, original=original)
    head = (
        _title(L["compress_title"])
        + _badge(escape(L["round_of"].format(round=number, total=len(states) - 1)), "bpe-counter")
        + _badge(escape(size), "bpe-size", f'data-length="{len(data)}"')
    )
    panels = _data_panel(data, nxt, table, max_bytes, L) + _table_panel(table, L)
    return _view("compress", lang, number, len(states) - 1, head, panels)


# ---------------------------------------------------------------- byte-level tokens


class TokenizerLike(Protocol):
    """What ``tokens_html`` needs: ids from text, and the bytes of each id."""

    vocab: dict[int, bytes]

    def encode(self, text: str) -> list[int]: ...


def _token_text(raw: bytes) -> tuple[str, bool]:
    """The token as text, or as ``\\xNN`` escapes when it is only part of a
    UTF-8 character (byte-level BPE may split a character between tokens)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return "".join(f"\\x{b:02x}" for b in raw), True
    return text, False


def _token_span(index: int, token_id: int, raw: bytes, show_bytes: bool, L) -> str:
    hue = round(index * 137.508) % 360  # golden angle: neighbours never share a colour
    text, partial = _token_text(raw)
    shown = escape(text)
    for char, mark in ((" ", "␣"), ("\n", "↵"), ("\t", "⇥")):  # make white space visible
        shown = shown.replace(char, f'<span class="bpe-ws">{mark}</span>')
    hexes = " ".join(f"{b:02x}" for b in raw)
    byte_line = f'<span class="bpe-token-bytes">{hexes}</span>' if show_bytes else ""
    attrs = f'data-id="{token_id}" data-bytes="{hexes}" title="{L["token_id"]} {token_id} · {hexes}"'
    text_cls = "bpe-token-text bpe-partial" if partial else "bpe-token-text"
    return (
        f'<span class="bpe-token" {attrs} style="background: hsla({hue}, 85%, 60%, .32)">'
        f'<span class="{text_cls}">{shown}</span><span class="bpe-token-id">{token_id}</span>{byte_line}</span>'
    )


def tokens_html(text: str, tokenizer: TokenizerLike, *, lang: str = "en", show_bytes: bool = True) -> str:
    """``text`` as coloured token spans, each with its id and byte values,
    for any tokenizer with ``.encode(text) -> list[int]`` and
    ``.vocab: dict[int, bytes]`` (such as ``bpe_lab.Tokenizer``)."""
    duck_typed = callable(getattr(tokenizer, "encode", None)) and isinstance(getattr(tokenizer, "vocab", None), Mapping)
    if not duck_typed:
        raise TypeError("tokenizer needs .encode(text) -> list[int] and .vocab: dict[int, bytes]")
    L = labels(lang)
    ids = list(tokenizer.encode(text))
    spans = "".join(_token_span(i, t, tokenizer.vocab[t], show_bytes, L) for i, t in enumerate(ids))
    summary = L["tokens_summary"].format(tokens=len(ids), chars=len(text), bytes=len(text.encode("utf-8")))
    return (
        f'{CSS}<div class="bpe-view bpe-tokens" lang="{lang}" data-count="{len(ids)}">'
        f'<div class="bpe-head"><span class="bpe-badge">{escape(summary)}</span></div>'
        f'<div class="bpe-tokens-row">{spans}</div></div>'
    )
