"""The benchmark's output: one row per case, a Markdown table with numbered notes.

>>> print(format_table([Row("a", "1 s", "2 s", faster(2.0, 1.0), notes=["why"])]))
| case | bpe_lab | reference | ratio | peak memory |
|---|---|---|---|---|
| a [1] | 1 s | 2 s | 2.00x faster |  |
<BLANKLINE>
[1] why
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Row", "format_table", "faster"]


@dataclass
class Row:
    """One line of the table: our figure, the reference's, and notes."""

    case: str
    ours: str
    reference: str = ""
    ratio: str = ""
    memory: str = ""
    notes: list[str] = field(default_factory=list)
    #: figures for a program to read (MB/s by contender), not printed: ``bench --check`` compares them
    figures: dict[str, float] = field(default_factory=dict)


def faster(theirs_seconds: float, ours_seconds: float) -> str:
    """``"1.25x faster"`` or ``"1.25x slower"``: ours against theirs."""
    ratio = theirs_seconds / ours_seconds
    return f"{ratio:.2f}x faster" if ratio >= 1 else f"{1 / ratio:.2f}x slower"


def format_table(rows: list[Row]) -> str:
    """A Markdown table (it pastes into the README) plus numbered notes."""
    header = ["case", "bpe_lab", "reference", "ratio", "peak memory"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    notes = []
    for row in rows:
        marks = ""
        for note in row.notes:
            notes.append(note)
            marks += f" [{len(notes)}]"
        lines.append(f"| {row.case}{marks} | {row.ours} | {row.reference} | {row.ratio} | {row.memory} |")
    lines += [""] + [f"[{i}] {note}" for i, note in enumerate(notes, 1)]
    return "\n".join(lines)
