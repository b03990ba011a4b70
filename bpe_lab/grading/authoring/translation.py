"""Gettext catalogs for the Chinese edition: extract, merge, apply.

The English notebooks stay the source. ``extract`` reads one and lists what a
learner reads in it: each paragraph of a markdown cell (split on blank lines,
never inside a fenced code block, so code spans, links and math stay whole),
and in code cells each ``# comment`` and each string literal a learner sees:
the question, explanations and notes of a checkpoint (``Predict``, ``Quiz``,
``Numeric``), what ``print`` prints, and plot titles and axis labels. Code,
identifiers, a checkpoint's options and answers, and the library's outputs are
left alone, so a Chinese checkpoint judges every option as its English twin.

Each entry's ``msgctxt`` is the notebook's name and the cell id (nbformat 4.5),
its ``msgid`` the English text. ``update_catalog`` merges the English into the
catalog ``bpe_lab/locale/zh_CN/LC_MESSAGES/notebooks.po``: a new paragraph is
an untranslated entry, a changed one a fuzzy entry that keeps the old
translation as its suggestion (``#| msgid`` holds the old English), a vanished
one obsolete. ``translate_notebook`` writes the Chinese notebook: the same
cells and code, markdown and those literals translated, ``metadata.bpe_lab.lang``
set to ``"zh"`` and, in a course notebook, one visible cell at the top,
``set_language("zh")``, so widgets and checkpoints speak Chinese with no
``lang=`` passed. ``glossary_problems`` checks the terms against
``bpe_lab/locale/zh_CN/glossary.tsv``.

An authoring stage beside ``release`` (which writes the Chinese exercises with
it); ``bpe_lab/translate.py`` is the command over it. It needs only polib.
"""

from __future__ import annotations

import ast
import copy
import difflib
import io
import re
import tokenize
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polib

__all__ = [
    "EDITIONS",
    "EXERCISE_EDITIONS",
    "CATALOG",
    "GLOSSARY",
    "EXCEPTIONS",
    "catalog_name",
    "LANG_CELL_ID",
    "Entry",
    "catalog_problems",
    "code_segments",
    "extract",
    "glossary_problems",
    "read_exceptions",
    "read_glossary",
    "paragraphs",
    "translate_notebook",
    "update_catalog",
]

LOCALE = Path(__file__).resolve().parents[2] / "locale"
CATALOG = LOCALE / "zh_CN" / "LC_MESSAGES" / "notebooks.po"
GLOSSARY = LOCALE / "zh_CN" / "glossary.tsv"
#: (context, term, reason): where a glossary term rightly stays English.
EXCEPTIONS = LOCALE / "zh_CN" / "glossary_exceptions.tsv"
#: English course notebooks and exercises (relative to the repository) that have a Chinese edition.
EDITIONS = ("notebooks/02_training.ipynb",)
EXERCISE_EDITIONS = ("exercises/02_training.ipynb",)
LANG_CELL_ID = "zh-language"
LANG_CELL = 'from bpe_lab.ui.labels import set_language\n\nset_language("zh")  # 本笔记本的控件与检查点使用中文'
#: Calls whose first positional string is a question a learner reads.
CHECKPOINTS = {"Predict", "Quiz", "Numeric"}
#: nbgrader's stub markers: the grader and the learner look for them, in English.
KEPT = {"YOUR CODE HERE", "YOUR ANSWER HERE"}
#: Keyword arguments whose strings (or dict values) a learner reads.
READ_KEYWORDS = {"why", "notes", "mistakes", "title", "xlabel", "ylabel", "label"}


def catalog_name(path: str) -> str:
    """The catalog's name for a notebook, from its path in the repository:
    a course notebook its stem, an exercise ``exercises/`` + its stem.

    >>> catalog_name("notebooks/02_training.ipynb"), catalog_name("exercises/02_training.ipynb")
    ('02_training', 'exercises/02_training')
    """
    folder, _, file = path.rpartition("/")
    if not file.endswith(".ipynb") or folder not in ("notebooks", "exercises"):
        raise ValueError(f"{path!r} is not notebooks/NAME.ipynb or exercises/NAME.ipynb")
    stem = file.removesuffix(".ipynb")
    return stem if folder == "notebooks" else f"{folder}/{stem}"


@dataclass(frozen=True)
class Entry:
    """One translatable text: where it is (``context``) and its English."""

    context: str
    text: str


def paragraphs(markdown: str) -> list[str]:
    """A markdown cell's paragraphs: split on blank lines, never inside a
    fenced code block.

    >>> paragraphs("# Title\\n\\nSome `code`.\\n\\n```\\na\\n\\nb\\n```")
    ['# Title', 'Some `code`.', '```\\na\\n\\nb\\n```']
    """
    found: list[str] = []
    current: list[str] = []
    fenced = False
    for line in markdown.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        if not line.strip() and not fenced:
            if current:
                found.append("\n".join(current).strip("\n"))
            current = []
        else:
            current.append(line)
    if current:
        found.append("\n".join(current).strip("\n"))
    return [p for p in found if p.strip()]


def _parsable(source: str) -> str:
    """The cell with IPython magics and shell lines blanked (lines kept)."""
    return "\n".join("" if re.match(r"\s*[%!]", line) else line for line in source.split("\n"))


def _offsets(source: str) -> list[int]:
    starts = [0]
    for line in source.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    return starts


def _read_strings(tree: ast.AST) -> Iterator[ast.expr]:
    """The string literals of a cell a learner reads (see the module)."""

    def strings(node: ast.expr | None) -> Iterator[ast.expr]:
        if isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            yield node
        elif isinstance(node, ast.Dict):
            for value in node.values:
                yield from strings(value)

    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        if name == "print":
            for arg in node.args:
                yield from strings(arg)
        elif name in CHECKPOINTS and node.args:
            yield from strings(node.args[0])
            if name == "Quiz" and len(node.args) > 1:  # its options dict: option -> explanation
                yield from strings(node.args[1])
        for keyword in node.keywords:
            if keyword.arg in READ_KEYWORDS:
                yield from strings(keyword.value)


def code_segments(source: str, where: str = "cell") -> list[tuple[int, int, str]]:
    """(start, end, text) of each translatable piece of a code cell, in order:
    a comment's text after ``# ``, a string literal's inside its quotes.

    >>> code_segments('print("hello world")  # greet')
    [(7, 18, 'hello world'), (24, 29, 'greet')]
    """
    parsable = _parsable(source)
    try:
        tree = ast.parse(parsable)
    except SyntaxError as error:
        raise ValueError(f"{where}: not Python, cannot extract its strings: {error}") from None
    starts = _offsets(source)
    lines = source.split("\n")

    def at(line: int, byte: int) -> int:  # ast's columns count UTF-8 bytes
        return starts[line - 1] + len(lines[line - 1].encode()[:byte].decode())

    found: list[tuple[int, int, str]] = []
    for node in _read_strings(tree):
        assert node.end_lineno is not None and node.end_col_offset is not None
        start, end = at(node.lineno, node.col_offset), at(node.end_lineno, node.end_col_offset)
        literal = source[start:end]
        match = re.fullmatch(r"([rRbBuUfF]*)('''|\"\"\"|'|\")(.*)\2", literal, re.S)
        if match is None:  # implicit concatenation: left as it is
            continue
        inner = match.group(3)
        if re.search(r"[A-Za-z]{2}", re.sub(r"\{[^{}]*\}", "", inner)):
            first = start + len(match.group(1)) + len(match.group(2))
            found.append((first, first + len(inner), inner))
    for token in tokenize.generate_tokens(io.StringIO(parsable).readline):
        if token.type == tokenize.COMMENT:
            text = token.string.lstrip("#").strip()
            if re.search(r"[A-Za-z]{2}", text):
                start = starts[token.start[0] - 1] + token.start[1]
                first = start + token.string.index(text)
                found.append((first, first + len(text), text))
    return sorted(found)


def _cells(notebook: dict[str, Any], name: str) -> Iterator[dict[str, Any]]:
    for index, cell in enumerate(notebook["cells"]):
        if "id" not in cell:
            raise ValueError(f"{name}: cell {index} has no id (nbformat 4.5 cell ids are the catalog's keys)")
        yield cell


def extract(notebook: dict[str, Any], name: str) -> list[Entry]:
    """Every translatable text of an English notebook, in reading order."""
    entries: list[Entry] = []
    for cell in _cells(notebook, name):
        source = "".join(cell["source"])
        context = f"{name}#{cell['id']}"
        if cell["cell_type"] == "markdown":
            texts = paragraphs(source)
        elif cell["cell_type"] == "code":
            texts = [text for _, _, text in code_segments(source, context)]
        else:
            texts = []
        for text in texts:
            if text in KEPT:
                continue
            entry = Entry(context, text)
            if entry not in entries:
                entries.append(entry)
    return entries


def update_catalog(catalog: polib.POFile, entries: Sequence[Entry], names: Sequence[str]) -> polib.POFile:
    """The catalog merged with the English: kept, new, fuzzy or obsolete
    entries (see the module); entries of notebooks not in ``names`` kept as
    they are. Returns a new catalog in the English reading order."""
    old = {(e.msgctxt, e.msgid): e for e in catalog if not e.obsolete}
    wanted = {(e.context, e.text) for e in entries}
    vanished = [e for key, e in old.items() if key not in wanted]
    merged = polib.POFile(wrapwidth=0)
    merged.metadata = dict(catalog.metadata) or {
        "Project-Id-Version": "bpe-lab",
        "Language": "zh_CN",
        "MIME-Version": "1.0",
        "Content-Type": "text/plain; charset=UTF-8",
        "Content-Transfer-Encoding": "8bit",
    }
    for entry in entries:
        kept = old.get((entry.context, entry.text))
        if kept is not None:
            merged.append(copy.copy(kept))
            continue
        new = polib.POEntry(msgctxt=entry.context, msgid=entry.text, msgstr="")
        rivals = [e for e in vanished if e.msgctxt == entry.context and e.msgstr]
        best = max(rivals, key=lambda e: difflib.SequenceMatcher(None, e.msgid, entry.text).ratio(), default=None)
        if best is not None and difflib.SequenceMatcher(None, best.msgid, entry.text).ratio() >= 0.5:
            vanished.remove(best)
            new.msgstr, new.previous_msgid, new.flags = best.msgstr, best.msgid, ["fuzzy"]
        merged.append(new)
    notebook_names = set(names)
    for entry in catalog:
        if str(entry.msgctxt).partition("#")[0] not in notebook_names and not entry.obsolete:
            merged.append(copy.copy(entry))
    for entry in [*vanished, *(e for e in catalog if e.obsolete)]:
        if str(entry.msgctxt).partition("#")[0] in notebook_names:
            gone = copy.copy(entry)
            gone.obsolete = True
            merged.append(gone)
    return merged


def catalog_problems(catalog: polib.POFile, entries: Sequence[Entry]) -> list[str]:
    """What keeps the catalog from translating ``entries`` fully: each one
    missing, untranslated or fuzzy, named with its context."""
    found = {(e.msgctxt, e.msgid): e for e in catalog if not e.obsolete}
    problems = []
    for entry in entries:
        got = found.get((entry.context, entry.text))
        if got is None:
            problems.append(f"{entry.context}: no entry for {entry.text[:60]!r}")
        elif "fuzzy" in got.flags:
            problems.append(f"{entry.context}: fuzzy (the English changed) {entry.text[:60]!r}")
        elif not got.msgstr.strip():
            problems.append(f"{entry.context}: untranslated {entry.text[:60]!r}")
    return problems


def read_glossary(path: Path = GLOSSARY) -> dict[str, tuple[str, ...]]:
    """English term -> its Chinese terms (``a / b`` in the file: either will do)."""
    terms: dict[str, tuple[str, ...]] = {}
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines or lines[0].split("\t")[:2] != ["english", "chinese"]:
        raise ValueError(f"{path}: the first line must be the header english<TAB>chinese<TAB>note")
    for number, line in enumerate(lines[1:], 2):
        fields = line.split("\t")
        if len(fields) != 3 or not fields[0].strip() or not fields[1].strip():
            raise ValueError(f"{path} line {number}: want english<TAB>chinese<TAB>note, got {line!r}")
        terms[fields[0].strip().lower()] = tuple(t.strip() for t in fields[1].split("/"))
    return terms


def read_exceptions(path: Path = EXCEPTIONS) -> set[tuple[str, str]]:
    """The (context, term) pairs where a glossary term may stay English; each needs a reason."""
    found = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines()[1:], 2):
        fields = line.split("\t")
        if len(fields) != 3 or not all(f.strip() for f in fields):
            raise ValueError(f"{path} line {number}: want context<TAB>term<TAB>reason, got {line!r}")
        found.add((fields[0], fields[1].lower()))
    return found


def _prose(text: str) -> str:
    """The words of a text outside code spans, HTML tags, link targets and placeholders."""
    text = re.sub(r"`[^`]*`|<[^>]*>|\]\([^)]*\)|\{[^{}]*\}", " ", text)
    return text


def glossary_problems(
    catalog: polib.POFile, glossary: dict[str, tuple[str, ...]], allowed: Collection[tuple[str, str]] = ()
) -> list[str]:
    """Each translated entry whose English uses a glossary term (a whole word,
    any case, plural and ``-s``/``-d`` forms too, outside code) while its
    Chinese lacks the glossary's term; ``allowed`` holds (context, term)
    exceptions."""
    problems = []
    for entry in catalog:
        if entry.obsolete or not entry.msgstr.strip():
            continue
        english = _prose(entry.msgid).lower()
        for term, chinese in glossary.items():
            if (str(entry.msgctxt), term) in allowed:
                continue
            if re.search(rf"(?<![\w-]){re.escape(term)}(s|es|d|r)?(?![\w-])", english):
                if not any(word in entry.msgstr for word in chinese):
                    problems.append(f"{entry.msgctxt}: {term!r} is not {' or '.join(chinese)} in {entry.msgstr[:50]!r}")
    return problems


def _lookup(catalog: polib.POFile) -> dict[tuple[str, str], str]:
    return {
        (str(e.msgctxt), e.msgid): e.msgstr
        for e in catalog
        if not e.obsolete and "fuzzy" not in e.flags and e.msgstr.strip()
    }


def _translated_code(source: str, context: str, table: dict[tuple[str, str], str]) -> str:
    for start, end, text in reversed(code_segments(source, context)):
        source = source[:start] + table.get((context, text), text) + source[end:]
    return source


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def translate_notebook(
    notebook: dict[str, Any], name: str, catalog: polib.POFile, *, language_cell: bool = True
) -> dict[str, Any]:
    """The Chinese notebook (outputs cleared): what has no translation stays
    English. ``language_cell=False`` (an exercise, whose cells the grader
    matches) adds no ``set_language`` cell."""
    table = _lookup(catalog)
    out = copy.deepcopy(notebook)
    out["metadata"].pop("widgets", None)
    out["metadata"].setdefault("bpe_lab", {})["lang"] = "zh"
    cells = []
    for cell in _cells(out, name):
        source = "".join(cell["source"])
        context = f"{name}#{cell['id']}"
        if cell["cell_type"] == "markdown":
            source = "\n\n".join(table.get((context, p), p) for p in paragraphs(source))
        elif cell["cell_type"] == "code":
            source = _translated_code(source, context, table)
            cell["outputs"], cell["execution_count"] = [], None
        cell["source"] = _lines(source)
        cells.append(cell)
    if not language_cell:
        out["cells"] = cells
        return out
    first_code = next((i for i, c in enumerate(cells) if c["cell_type"] == "code"), len(cells))
    language: dict[str, Any] = {
        "cell_type": "code",
        "execution_count": None,
        "id": LANG_CELL_ID,
        "metadata": {},
        "outputs": [],
        "source": _lines(LANG_CELL),
    }
    cells.insert(first_code, language)
    out["cells"] = cells
    return out
