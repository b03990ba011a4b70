"""The similarity report for a person: a summary, and the matched lines side by side.

What this adds over ``similar_answers`` (the flags as data): reading them.
``format_similarity`` is the few lines ``bpe-lab grade --similarity``
prints; ``similarity_markdown`` and ``similarity_html`` are the report
file (``--similarity-out``), each flag with its matched blocks, the two
sides' lines next to each other with their own line numbers (a cell's, or
the package file's). The text of submissions is the learner's: it is
escaped for HTML, fenced so that no line can end its Markdown block, and
kept out of the terminal summary, where only names and numbers go. Names,
paths and lines all go through ``terminal_text.shown`` (control
characters, escape sequences, bidi overrides shown escaped), in the
summary and in both report files.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from bpe_lab.grading.score.similar_answers import Flag, Side, Similarity
from bpe_lab.grading.score.similarity import Block
from bpe_lab.grading.terminal_text import shown

__all__ = ["format_similarity", "side_by_side", "similarity_markdown", "similarity_html", "write_similarity"]

#: Characters of each side's line shown in the text layout.
WIDTH = 60
_AGAINST = {"submission": "and", "package": "against the package's own answer", "solution": "against the model answer"}


def _plain(text: str) -> str:
    """A name from a file path on one line, control characters (a terminal's escapes) shown escaped."""
    return shown(text)


def _percent(score: float) -> str:
    return f"{100 * score:.0f}%"


def _lines(side: Side, span: tuple[int, int]) -> str:
    first, last = span[0] + side.first_line - 1, span[1] + side.first_line - 1
    return f"line {first}" if first == last else f"lines {first}-{last}"


def _headline(flag: Flag) -> str:
    where = "; ".join(f"{_lines(flag.left, b.left)} ~ {_lines(flag.right, b.right)}" for b in flag.blocks)
    return (
        f"{_plain(flag.cell)}: {_plain(flag.left.name)} ~ {_plain(flag.right.name)}, "
        f"{flag.measure} {_percent(flag.score)} ({flag.shared} fingerprints; {where})"
    )


def _settings(sim: Similarity) -> str:
    s = sim.settings
    return (
        f"winnowing (k-grams of {s.k} tokens, or words in a written answer, windows of {s.w}); "
        f"flagged at {_percent(s.threshold)} or more with at least "
        f"{s.min_shared} fingerprints in common; {sim.compared} answer cells compared"
    )


def format_similarity(sim: Similarity) -> str:
    """The summary ``bpe-lab grade --similarity`` prints: one line per flag."""
    lines = [f"similarity, for a person to read, never scored: {len(sim.flags)} flagged; {_settings(sim)}"]
    lines += [f"  {_headline(flag)}" for flag in sim.flags]
    lines += [f"  not compared (in full): {_plain(path)}: {_plain(reason)}" for path, reason in sim.skipped]
    return "\n".join(lines)


def _cut(line: str, width: int) -> str:
    line = shown(line.expandtabs(4))
    return line if len(line) <= width else line[: width - 1] + "…"


def side_by_side(left: Side, right: Side, block: Block, width: int = WIDTH) -> str:
    """The block's lines of ``left`` and ``right`` in two columns, each with
    its own line numbers.

    >>> a = Side("alice", "a.ipynb", "x = 1\\ny = 2")
    >>> b = Side("bob", "b.ipynb", "z = 3", first_line=10)
    >>> print(side_by_side(a, b, Block((1, 2), (1, 1), 1), width=8))
       1 x = 1    |   10 z = 3
       2 y = 2    |
    """
    mine = left.source.splitlines()[block.left[0] - 1 : block.left[1]]
    theirs = right.source.splitlines()[block.right[0] - 1 : block.right[1]]
    a, b = block.left[0] + left.first_line - 1, block.right[0] + right.first_line - 1
    rows = []
    for i in range(max(len(mine), len(theirs))):
        one = f"{a + i:>4} {_cut(mine[i], width):<{width}}" if i < len(mine) else " " * (width + 5)
        two = f"{b + i:>4} {_cut(theirs[i], width)}" if i < len(theirs) else ""
        rows.append(f"{one} | {two}".rstrip())
    return "\n".join(rows)


def _fence(text: str) -> str:
    """A backtick fence longer than any run of backticks in ``text``."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _markdown_name(text: str) -> str:
    return re.sub(r"([\\`*_\[\]<>#|!])", r"\\\1", _plain(text))


def similarity_markdown(sim: Similarity) -> str:
    """The report as Markdown: what was compared, then each flag with its
    blocks side by side in a fenced block."""
    out = [
        "# Similarity report",
        "",
        f"Answer cells compared by {_settings(sim)}. Starter code is not counted. A flag is for a person to "
        "read, never a score: two learners can write a short answer alike.",
        "",
    ]
    if not sim.flags:
        out += ["Nothing flagged.", ""]
    for n, flag in enumerate(sim.flags, start=1):
        left, right = _markdown_name(flag.left.name), _markdown_name(flag.right.name)
        out += [
            f"## {n}. {_markdown_name(flag.cell)}: {left} ~ {right}",
            "",
            f"{_markdown_name(flag.assignment)}: {left} ({_markdown_name(flag.left.path)}) "
            f"{_AGAINST[flag.against]} {right} ({_markdown_name(flag.right.path)}): "
            f"{flag.measure} {_percent(flag.score)}, {flag.shared} fingerprints in common.",
            "",
        ]
        for block in flag.blocks:
            text = side_by_side(flag.left, flag.right, block)
            fence = _fence(text)
            out += [f"{_lines(flag.left, block.left)} ~ {_lines(flag.right, block.right)}:", "", fence, text, fence, ""]
    if sim.skipped:
        out += (
            ["## Not compared (in full)", ""]
            + [f"- {_markdown_name(p)}: {_markdown_name(r)}" for p, r in sim.skipped]
            + [""]
        )
    return "\n".join(out)


def _html_head(side: Side, span: tuple[int, int]) -> str:
    return f"<th>{html.escape(_plain(side.name))} ({html.escape(_plain(side.path))}), {_lines(side, span)}</th>"


def _html_column(side: Side, span: tuple[int, int]) -> str:
    lines = side.source.splitlines()[span[0] - 1 : span[1]]
    numbered = "\n".join(f"{span[0] + side.first_line - 1 + i:>4}  {line}" for i, line in enumerate(lines))
    return f"<td><pre>{html.escape(shown(numbered, lines=True))}</pre></td>"


def similarity_html(sim: Similarity) -> str:
    """The report as a standalone HTML page: each block a two-column table."""
    e = html.escape
    out = [
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>Similarity report</title>',
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;width:100%}"
        "td,th{border:1px solid #ccc;vertical-align:top;padding:4px;text-align:left;width:50%}"
        "pre{margin:0;white-space:pre-wrap}</style></head><body>",
        "<h1>Similarity report</h1>",
        f"<p>Answer cells compared by {e(_settings(sim))}. Starter code is not counted. A flag is for a person "
        "to read, never a score: two learners can write a short answer alike.</p>",
    ]
    if not sim.flags:
        out.append("<p>Nothing flagged.</p>")
    for n, flag in enumerate(sim.flags, start=1):
        out += [
            f"<h2>{n}. {e(_plain(flag.cell))}: {e(_plain(flag.left.name))} ~ {e(_plain(flag.right.name))}</h2>",
            f"<p>{e(_plain(flag.assignment))}: {e(_plain(flag.left.name))} {e(_AGAINST[flag.against])} "
            f"{e(_plain(flag.right.name))}: {e(flag.measure)} "
            f"{_percent(flag.score)}, {flag.shared} fingerprints in common.</p>",
        ]
        for block in flag.blocks:
            out += [
                "<table><tr>",
                _html_head(flag.left, block.left) + _html_head(flag.right, block.right),
                "</tr><tr>",
                _html_column(flag.left, block.left) + _html_column(flag.right, block.right),
                "</tr></table>",
            ]
    if sim.skipped:
        out += ["<h2>Not compared (in full)</h2>", "<ul>"] + [
            f"<li>{e(_plain(p))}: {e(_plain(r))}</li>" for p, r in sim.skipped
        ]
        out.append("</ul>")
    out.append("</body></html>\n")
    return "\n".join(out)


def write_similarity(sim: Similarity, path: str | Path) -> Path:
    """Write the report to ``path``: HTML for ``.html`` or ``.htm``, Markdown otherwise."""
    target = Path(path)
    page = similarity_html(sim) if target.suffix.lower() in (".html", ".htm") else similarity_markdown(sim)
    target.write_text(page, encoding="utf-8")
    return target
