"""The HTML of one step of each stepper, as pure functions.

Over ``steps``, which holds the data of every step, this module draws one
step as HTML, out of ``blocks``' chips, panels and badges: a training round
(``merge_round_html``), an encoding step (``encode_step_html``) and a
compression round (``compression_round_html``); ``tokens`` draws a
tokenized text the same way. Nothing here knows about ipywidgets:
``widgets`` only wires buttons to a state and puts the string on screen, so the same views
can be tested as text, shown with ``IPython.display.HTML`` or saved into a
page.

Every view carries machine-readable ``data-*`` attributes (the round, the
highlighted pair, each recorded rule), so tests, exercises and the browser
test read the state back without parsing prose.

>>> from bpe_lab.core.train import train_trace
>>> html = merge_round_html(train_trace({"low": 5, "lower": 2, "newest": 6, "widest": 3}, 5), 3)
>>> 'data-round="3"' in html, html.count('class="bpe-hl" data-left="l" data-right="o"')
(True, 2)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

from bpe_lab.core.encode import vocabulary
from bpe_lab.core.symbols import Pair
from bpe_lab.core.train import Round, Trace
from bpe_lab.ui.blocks import (
    attr,
    badge,
    cell,
    check_index,
    chips,
    labelled,
    pair_data,
    pair_text,
    panel,
    sym,
    table,
    title,
    view,
)
from bpe_lab.ui.css import style
from bpe_lab.ui.labels import labels
from bpe_lab.ui.steps import EncodeStep, compression_stop
from bpe_lab.variants.compression import Compressed, Replacement

__all__ = [
    "merge_round_html",
    "encode_step_html",
    "compression_round_html",
]

#: The labels of one language, from ``labels.labels``.
Labels = Mapping[str, str]

# ---------------------------------------------------------------- training


def _rule_name(tie_break: str, L: Labels) -> str:
    return L["rule_" + tie_break]


def _corpus_panel(corpus: Mapping[tuple[str, ...], int], pair: Pair | None, new: str | None, L: Labels) -> str:
    freq_style = style("freq")  # "× 3" with a no-break space: it never splits over two lines
    rows = "".join(
        f'<div class="bpe-word"{style("word")}>{chips(symbols, pair, new)} <span class="bpe-freq"{freq_style}>'
        f"×\u00a0{freq}</span></div>"
        for symbols, freq in corpus.items()
    )
    return panel(L["corpus"], f'<div class="bpe-corpus">{rows}</div>', "bpe-corpus-panel", basis=215)


def _pair_rows(rnd: Round, max_pairs: int, L: Labels) -> str:
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
        row_style = style("winner" if cls == "bpe-winner" else "tied") if cls else ""
        rows.append(
            f'<tr class="{cls}" {pair_data(pair)} data-count="{count}"{row_style}>{cell(chips(pair))}'
            f"{cell(str(count), numeric=True)}{cell(escape(mark), 'bpe-mark')}</tr>"
        )
    hidden = len(ranked) - len(rows)
    more = f'<tr><td colspan="3" class="bpe-mark"{style("span_row")}>… +{hidden}</td></tr>' if hidden else ""
    return "".join(rows) + more


def _tie_note(rnd: Round, tie_break: str, L: Labels) -> str:
    if not rnd.ties:
        return L["no_tie"].format(pair=pair_text(rnd.pair), count=rnd.count)
    rule = escape(_rule_name(tie_break, L))
    return L["tie_note"].format(n=len(rnd.ties) + 1, count=rnd.count, rule=rule, pair=pair_text(rnd.pair))


def _pair_panel(trace: Trace, number: int, max_pairs: int, L: Labels) -> str:
    if number >= len(trace.rounds):
        message = L["done"].format(n=len(trace.rounds))
        if trace.stopped_early:
            message += " " + L["exhausted"]
        return panel(L["pair_counts"], f'<p class="bpe-done"{style("done")}>{escape(message)}</p>')
    rnd = trace.rounds[number]
    counts = table([L["pair"], L["count"], L["mark"]], _pair_rows(rnd, max_pairs, L), numeric=1)
    rule = attr(trace.tie_break)
    note = _tie_note(rnd, trace.tie_break, L)
    note = f'<p class="bpe-note bpe-rule-note" data-rule="{rule}"{style("note")}>{note}</p>'
    return panel(L["pair_counts"], counts + note, "bpe-pairs-panel")


def _merge_item(rnd: Round, tie_break: str, L: Labels) -> str:
    """One learned rule: the pair, the new symbol, its count, and, if it won
    a tie, which rule chose it."""
    tie = ""
    if rnd.ties:
        chosen = L["chosen_by"].format(n=len(rnd.ties) + 1, rule=_rule_name(tie_break, L))
        tie = f' <span class="bpe-tie"{style("mark")}>{escape(chosen)}</span>'
    attrs = f'{pair_data(rnd.pair)} data-count="{rnd.count}" data-tied="{len(rnd.ties)}" data-rule="{attr(tie_break)}"'
    return (
        f'<li class="bpe-rule" {attrs}{style("rule")}>{chips(rnd.pair)} <span class="bpe-arrow">→</span> '
        f'{sym(rnd.new_symbol, "bpe-new")} <span class="bpe-freq"{style("freq")}>({rnd.count})</span>{tie}</li>'
    )


def _merges_panel(trace: Trace, number: int, L: Labels) -> str:
    items = "".join(_merge_item(r, trace.tie_break, L) for r in trace.rounds[:number])
    none = f'<p class="bpe-note"{style("note")}>{escape(L["none_yet"])}</p>'
    body = f'<ol class="bpe-merges"{style("list")}>{items}</ol>' if items else none
    return panel(L["merges"], body, "bpe-merges-panel", basis=150)


def _merge_head(trace: Trace, number: int, nxt: Pair | None, L: Labels) -> str:
    vocab = len(vocabulary(trace.merges[:number], trace.base_symbols))
    counter = escape(L["round_of"].format(round=number, total=len(trace.rounds)))
    rule = escape(_rule_name(trace.tie_break, L))
    head = (
        title(L["train_title"])
        + badge(counter, "bpe-counter")
        + badge(f"{L['vocab_size']}{L['colon']}{vocab}", "bpe-vocab", f'data-vocab-size="{vocab}"')
        + badge(f"{L['tie_break']}{L['colon']}{rule}")
    )
    return head + (badge(f"{L['winner']}{L['colon']}{chips(nxt)}", "bpe-next", pair_data(nxt)) if nxt else "")


def merge_round_html(trace: Trace, number: int = 0, *, lang: str = "en", max_pairs: int = 12) -> str:
    """The training view after ``number`` merges (0 = nothing merged yet).

    The corpus is shown as it is *before* merge ``number + 1``, with every
    occurrence of that merge's pair highlighted and the symbol made by the
    previous merge tinted; beside it the round's pair counts (winner and ties
    marked, and which tie-break rule decided) and the rules learned so far.
    """
    check_index(number, len(trace.rounds), "round")
    L = labels(lang)
    corpus = trace.initial if number == 0 else trace.rounds[number - 1].corpus_after
    nxt = trace.rounds[number].pair if number < len(trace.rounds) else None
    new = trace.rounds[number - 1].new_symbol if number else None
    panels = (
        _corpus_panel(corpus, nxt, new, L) + _pair_panel(trace, number, max_pairs, L) + _merges_panel(trace, number, L)
    )
    head = _merge_head(trace, number, nxt, L)
    return view("merge", lang, number, len(trace.rounds), head, panels, f'data-tie-break="{attr(trace.tie_break)}"')


# ---------------------------------------------------------------- encoding


def _rank_panel(step: EncodeStep, L: Labels) -> str:
    """Each distinct adjacent pair once, in the order met, with its rank."""
    rows = []
    for pair, rank in dict(step.pairs).items():
        best = pair == step.best
        shown = L["no_rule"] if rank is None else str(rank)
        rank_attr = "" if rank is None else rank
        rows.append(
            f'<tr class="{"bpe-winner" if best else ""}" {pair_data(pair)} data-rank="{rank_attr}"'
            f"{style('winner') if best else ''}>{cell(chips(pair))}{cell(escape(shown), numeric=True)}"
            f"{cell(escape('★ ' + L['lowest'] if best else ''), 'bpe-mark')}</tr>"
        )
    return panel(L["pairs_now"], table([L["pair"], L["rank"], L["mark"]], "".join(rows), numeric=1))


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
        chips.append(sym(token, "" if (start, start + len(token)) in theirs else "bpe-diff"))
        start += len(token)
    return f'<span class="bpe-syms"{style("syms")}>{" ".join(chips)}</span>'


def _compare_panel(replay: Sequence[str], longest: Sequence[str], L: Labels) -> str:
    """Rank replay's final tokens above greedy longest match's, with the
    tokens where they disagree outlined."""
    same = list(replay) == list(longest)
    verdict = escape(L["same"] if same else L["differs"])
    verdict = f'<p class="bpe-note" data-same="{str(same).lower()}"{style("note")}>{verdict}</p>'
    body = (
        labelled(L["rank_replay"], _outlined(replay, longest), attrs='data-role="replay"')
        + labelled(L["longest_match"], _outlined(longest, replay), attrs='data-role="longest"')
        + verdict
    )
    return panel(L["longest_match"], body, "bpe-compare-panel")


def _sequence_panel(step: EncodeStep, L: Labels) -> str:
    """Before the last step: the sequence with the pair to merge, and after
    it; on the last step: the final tokens."""
    if step.best:
        before = f'<div class="bpe-word bpe-sequence"{style("word")}>{chips(step.symbols, step.best)}</div>'
        after = labelled(L["after_merge"], chips(step.after, new=step.best[0] + step.best[1]))
        return panel(L["sequence"], before + after)
    tokens = f'data-tokens="{attr(" ".join(step.symbols))}"'
    final = f'<div class="bpe-word bpe-final" {tokens}{style("word")}>{chips(step.symbols)}</div>'
    return panel(L["final_tokens"], final + f'<p class="bpe-done"{style("done")}>{escape(L["no_pair_left"])}</p>')


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
    check_index(number, len(steps) - 1, "step")
    L = labels(lang)
    step, total = steps[number], len(steps) - 1
    head = title(L["encode_title"].format(word=word)) + badge(
        escape(L["step_of"].format(round=number, total=total)), "bpe-counter"
    )
    if step.best:
        head += badge(f"{L['lowest']}{L['colon']}{chips(step.best)}", "bpe-next", pair_data(step.best))
    panels = _sequence_panel(step, L) + (_rank_panel(step, L) if step.pairs else "")
    if longest is not None:
        panels += _compare_panel(steps[-1].symbols, longest, L)
    return view("encode", lang, number, total, head, panels)


# ---------------------------------------------------------------- compression


def _byte_cell(value: int, codes: Mapping[int, tuple[int, int]]) -> str:
    """A code byte as a violet hex chip, printable ASCII as itself, space as
    ␣, any other byte as faint hex."""
    if value in codes:
        return f'<span class="bpe-sym bpe-code" title="0x{value:02x}"{style("sym")}>{value:02x}</span>'
    if value == 32:
        return f'<span class="bpe-sym"{style("sym")}><span class="bpe-ws">␣</span></span>'
    if 32 < value < 127:
        return sym(chr(value))
    return f'<span class="bpe-sym bpe-raw"{style("sym")}>{value:02x}</span>'


def _byte_text(value: int, codes: Mapping[int, tuple[int, int]]) -> str:
    return f"0x{value:02x}" if value in codes or not 32 < value < 127 else chr(value)


def _expand(code: int, codes: Mapping[int, tuple[int, int]]) -> bytes:
    """What a code finally stands for, expanding nested codes."""
    out = b""
    for part in codes[code]:
        out += _expand(part, codes) if part in codes else bytes((part,))
    return out


def _printable(data: bytes) -> str:
    return "".join(chr(b) if 32 <= b < 127 else f"\\x{b:02x}" for b in data)


def _table_panel(codes: Mapping[int, tuple[int, int]], L: Labels) -> str:
    rows = "".join(
        f'<tr data-code="{code}">{cell(_byte_cell(code, codes))}'
        f"{cell(chips([a, b], render=lambda v: _byte_cell(v, codes)))}"
        f"{cell(escape(_printable(_expand(code, codes))))}</tr>"
        for code, (a, b) in codes.items()
    )
    none = f'<p class="bpe-note"{style("note")}>{escape(L["none_yet"])}</p>'
    body = table([L["code"], L["pair"], L["means"]], rows) if rows else none
    return panel(L["table"], body, "bpe-table-panel")


def _data_panel(
    data: bytes, nxt: Replacement | None, codes: Mapping[int, tuple[int, int]], max_bytes: int, stop: str, L: Labels
) -> str:
    """The data as byte chips (the next pair highlighted, at most
    ``max_bytes`` shown) and what the next round will do; after the last
    round, which stopping rule fired (``stop``, from ``steps.compression_stop``)."""
    cells = chips(list(data[:max_bytes]), nxt.pair if nxt else None, render=lambda v: _byte_cell(v, codes))
    more = f' <span class="bpe-mark"{style("mark")}>… +{len(data) - max_bytes}</span>' if len(data) > max_bytes else ""
    if nxt:
        pair = escape("(" + ", ".join(_byte_text(v, codes) for v in nxt.pair) + ")")
        note = L["replace_pair"].format(pair=pair, count=nxt.count, byte=f"0x{nxt.byte:02x}")
        note = f'<p class="bpe-note bpe-next" {pair_data(nxt.pair)} data-byte="{nxt.byte}"{style("note")}>{note}</p>'
    else:
        message = L["stop_" + stop].format(n=len(codes))
        note = f'<p class="bpe-done" data-stop="{attr(stop)}"{style("done")}>{escape(message)}</p>'
    return panel(L["data"], f'<div class="bpe-bytes"{style("syms")}>{cells}{more}</div>{note}', "bpe-data-panel")


def compression_round_html(
    states: Sequence[bytes],
    packed: Compressed,
    number: int = 0,
    *,
    lang: str = "en",
    max_bytes: int = 400,
    max_rounds: int | None = None,
) -> str:
    """The compression view after ``number`` rounds: the data (code bytes in
    violet) with every occurrence of the next pair highlighted, what that pair
    becomes, the table so far and the size against the original; after the
    last round, why compression stopped (give the ``max_rounds`` that
    ``compress`` was called with)."""
    check_index(number, len(states) - 1, "round")
    L = labels(lang)
    data, codes = states[number], dict(list(packed.table.items())[:number])
    nxt = packed.rounds[number] if number < len(packed.rounds) else None
    original = packed.original_length
    ratio = (len(data) + 3 * len(codes)) / original if original else 1.0
    size = L["size"].format(length=len(data), table=3 * len(codes), ratio=ratio, original=original)
    head = (
        title(L["compress_title"])
        + badge(escape(L["round_of"].format(round=number, total=len(states) - 1)), "bpe-counter")
        + badge(escape(size), "bpe-size", f'data-length="{len(data)}"')
    )
    stop = compression_stop(packed, max_rounds)
    panels = _data_panel(data, nxt, codes, max_bytes, stop, L) + _table_panel(codes, L)
    return view("compress", lang, number, len(states) - 1, head, panels)
