"""Tokenizer files: bpe_lab's own JSON, GPT-2's vocab.json + merges.txt, and a
listing for people.

A byte-level vocabulary is bytes, and bytes are not text, so both file formats
write each token with GPT-2's printable stand-in per byte (``byte_map.py``):
``" the"`` is stored as ``"Ġthe"``. That keeps the files valid UTF-8 JSON and
text, and keeps ours readable by anyone who knows GPT-2's.

- ``write_tokenizer_file`` / ``read_tokenizer_file``: one JSON file with the
  pre-tokenization pattern (its name in ``core.patterns.PATTERNS``, or null,
  and its regex), the vocabulary (id -> token), the merges in order, and the
  special tokens, one entry per line so that an error can name its line;
  beside it a ``.vocab`` listing with each token as text and the merge that
  made it. Version 1 files, written before tokenizers had a pattern, have no
  ``"pattern"`` and read as GPT-2's.
- ``read_gpt2_files`` / ``write_gpt2_files``: GPT-2's format, as used by
  OpenAI's release and HF tokenizers: ``vocab.json`` maps token -> id,
  ``merges.txt`` holds ``#version: 0.2`` then one ``left right`` per line.

Every reader reports a bad file by path and line number, and checks the
merges with ``vocab.MergeChecker`` as it reads them. This module reads and
writes plain data (vocabulary, merges, special tokens), so it sits below
``tokenizer.py``, whose ``save``, ``load`` and ``from_files`` call it.

>>> render_token(" the\\n".encode())
' the\\\\n'
>>> render_token("é".encode()[:1])
'\\\\xc3'
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from bpe_lab.bytelevel.byte_map import printable_to_token, token_to_printable
from bpe_lab.bytelevel.vocab import MergeChecker
from bpe_lab.core.patterns import PATTERNS, Pattern, resolve_pattern
from bpe_lab.core.textfile import read_text

__all__ = [
    "FORMAT",
    "PathLike",
    "Vocab",
    "Merges",
    "listing_path",
    "render_token",
    "write_tokenizer_file",
    "read_tokenizer_file",
    "read_gpt2_files",
    "write_gpt2_files",
]

#: A file name as the readers and writers take it.
PathLike = str | os.PathLike[str]
#: id -> token bytes.
Vocab = dict[int, bytes]
#: The merge list, in the order it was learned.
Merges = list[tuple[bytes, bytes]]

FORMAT = "bpe_lab.Tokenizer"
#: 2: the file records the pattern (1: it did not, and the pattern was GPT-2's).
VERSION = 2
_VERSIONS = (1, 2)


def listing_path(path: PathLike) -> Path:
    """Where the human-readable listing of the tokenizer at ``path`` goes."""
    return Path(path).with_suffix(".vocab")


def render_token(token: bytes) -> str:
    """A token as readable text: UTF-8 where it decodes, ``\\xNN`` for a byte
    that does not (half a character), and escapes for control characters."""
    text = token.decode("utf-8", "backslashreplace")
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


# ------------------------------------------------------------- bpe_lab JSON


def write_tokenizer_file(
    vocab: Mapping[int, bytes],
    merges: Sequence[tuple[bytes, bytes]],
    special_tokens: Sequence[str],
    path: PathLike,
    *,
    pattern: str | Pattern = "gpt2",
) -> None:
    """Write a tokenizer's data as JSON at ``path`` and its listing beside it."""
    path = Path(path)
    cutter = resolve_pattern(pattern)
    dump = _json_text
    vocab_lines = [f"  {dump(str(i))}: {dump(token_to_printable(t))}" for i, t in sorted(vocab.items())]
    merge_lines = [f"  [{dump(token_to_printable(a))}, {dump(token_to_printable(b))}]" for a, b in merges]
    lines = [
        "{",
        f'"format": {dump(FORMAT)},',
        f'"version": {VERSION},',
        f'"pattern": {dump({"name": cutter.name, "regex": cutter.regex})},',
        f'"special_tokens": {dump(list(special_tokens))},',
        '"vocab": {',
        ",\n".join(vocab_lines),
        "},",
        '"merges": [',
        ",\n".join(merge_lines),
        "]",
        "}",
    ]
    path.write_text("\n".join(line for line in lines if line) + "\n", encoding="utf-8")
    listing_path(path).write_text(_listing(vocab, merges, special_tokens, cutter), encoding="utf-8")


def _json_text(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def _listing(
    vocab: Mapping[int, bytes], merges: Sequence[tuple[bytes, bytes]], special_tokens: Sequence[str], pattern: Pattern
) -> str:
    made_by = {a + b: (a, b) for a, b in merges}
    special = {token.encode("utf-8") for token in special_tokens}
    lines = [
        f"# {len(vocab)} ids, {len(merges)} merges, special tokens {list(special_tokens)}",
        f"# pattern {pattern.name or 'of its own'}: {pattern.regex}",
        "# id<TAB>token<TAB>how it was made (tokens as text; \\xNN is a byte that is part of a character)",
    ]
    for token_id, token in sorted(vocab.items()):
        if token in special:
            origin = "special token"
        elif token in made_by:
            left, right = made_by[token]
            origin = f"[{render_token(left)}] + [{render_token(right)}]"
        else:
            origin = "byte" if len(token) == 1 else ""
        lines.append(f"{token_id}\t[{render_token(token)}]\t{origin}")
    return "\n".join(lines) + "\n"


def read_tokenizer_file(path: PathLike) -> tuple[Vocab, Merges, list[str], str]:
    """Read ``(vocab, merges, special_tokens, pattern)`` from a file written by
    ``write_tokenizer_file`` (``pattern``: a name of ``PATTERNS`` or a regex,
    ``"gpt2"`` for a version 1 file); a bad entry raises ValueError naming its line."""
    text = read_text(path)
    data = _parse_json(text, path)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f'{path} is not a bpe_lab tokenizer file (no "format": "{FORMAT}")')
    version = data.get("version")
    if isinstance(version, bool) or version not in _VERSIONS:
        raise ValueError(f"{path}: version {version!r} is not one this bpe_lab reads {_VERSIONS}")
    pattern = _read_pattern(data, version, path, text)
    for key, kind in (("vocab", dict), ("merges", list), ("special_tokens", list)):
        if not isinstance(data.get(key), kind):
            raise ValueError(f'{path}: "{key}" must be a JSON {"object" if kind is dict else "array"}')
    vocab: dict[int, bytes] = {}
    for key, value in data["vocab"].items():  # O(vocabulary size)
        try:
            if not (key.isdigit() and key.isascii()):
                raise ValueError(f"vocab id {key!r} is not a non-negative integer")
            vocab[int(key)] = _token(value)
        except ValueError as err:
            raise ValueError(_where(path, text, json.dumps(key, ensure_ascii=False) + ":") + str(err)) from None
    merges: Merges = []
    checker = MergeChecker({token: i for i, token in vocab.items()})
    for number, pair in enumerate(data["merges"]):  # O(number of merges)
        try:
            if not (isinstance(pair, list) and len(pair) == 2):
                raise ValueError(f"{pair!r} is not a pair of tokens")
            merge = (_token(pair[0]), _token(pair[1]))
            problem = checker.add(merge, f"merge {number}")
            if problem:
                raise ValueError(problem)
        except ValueError as err:
            # save_tokenizer writes one merge per line, right below '"merges": ['
            where = _where(path, text, '"merges"', after=number + 1)
            raise ValueError(f"{where}merge {number} {err}") from None
        merges.append(merge)
    specials = data["special_tokens"]
    if not all(isinstance(token, str) for token in specials):
        raise ValueError(_where(path, text, '"special_tokens"') + '"special_tokens" must be a list of strings')
    return vocab, merges, specials, pattern


def _read_pattern(data: dict[str, object], version: object, path: PathLike, text: str) -> str:
    """The pattern a tokenizer file records: its name if it has one, else its regex."""
    if version == 1:
        if "pattern" in data:
            raise ValueError(_where(path, text, '"pattern"') + 'a version 1 file has no "pattern" (write version 2)')
        return "gpt2"  # the only pattern there was
    where = _where(path, text, '"pattern"')
    entry = data.get("pattern")
    if not (isinstance(entry, dict) and set(entry) == {"name", "regex"} and isinstance(entry["regex"], str)):
        raise ValueError(f'{where}"pattern" must be {{"name": a name or null, "regex": a string}}, got {entry!r}')
    name, regex = entry["name"], entry["regex"]
    if name is None:
        spec = regex
    elif name in PATTERNS and PATTERNS[name] == regex:
        spec = name
    else:
        known = f"{name}'s regex is {PATTERNS[name]!r}" if name in PATTERNS else f"the names are {', '.join(PATTERNS)}"
        raise ValueError(
            f"{where}the pattern is named {name!r} but its regex is {regex!r}; {known} "
            "(a pattern of one's own has the name null)"
        )
    try:
        resolve_pattern(spec)
    except ValueError as err:
        raise ValueError(f"{where}{err}") from None
    return spec


# ------------------------------------------------------------- GPT-2 format


def read_gpt2_files(vocab_path: PathLike, merges_path: PathLike) -> tuple[Vocab, Merges]:
    """Read GPT-2's ``vocab.json`` and ``merges.txt`` into ids -> bytes and
    the merge list; any problem raises ValueError naming the file and line."""
    text = read_text(vocab_path)
    table = _parse_json(text, vocab_path)
    if not isinstance(table, dict):
        raise ValueError(f"{vocab_path}: expected a JSON object mapping token -> id")
    vocab: dict[int, bytes] = {}
    token_of: dict[int, str] = {}
    for key, token_id in table.items():  # O(vocabulary size)
        try:
            if isinstance(token_id, bool) or not isinstance(token_id, int) or token_id < 0:
                raise ValueError(f"token {key!r} has id {token_id!r}; ids must be non-negative integers")
            if token_id in vocab:
                raise ValueError(f"tokens {token_of[token_id]!r} and {key!r} both have id {token_id}")
            vocab[token_id] = _token(key)
        except ValueError as err:  # find the line only now: a search per entry would be O(V * file size)
            needles = (json.dumps(key, ensure_ascii=False) + ":", json.dumps(key) + ":")
            raise ValueError(_where(vocab_path, text, *needles) + str(err)) from None
        token_of[token_id] = key
    return vocab, _read_merges_txt(merges_path, {token: i for i, token in vocab.items()})


def _read_merges_txt(path: PathLike, id_of: Mapping[bytes, int]) -> Merges:
    merges: Merges = []
    checker = MergeChecker(id_of)
    for number, line in enumerate(read_text(path).split("\n"), start=1):  # O(lines)
        line = line.rstrip("\r")
        if not line or (number == 1 and line.startswith("#version")):
            continue
        where = f"{path}, line {number}: "
        parts = line.split(" ")
        if len(parts) != 2 or not all(parts):
            raise ValueError(f"{where}expected two tokens separated by one space, got {line!r}")
        try:
            pair = (_token(parts[0]), _token(parts[1]))
        except ValueError as err:
            raise ValueError(f"{where}{err}") from None
        problem = checker.add(pair, f"line {number}", shown=repr(line))
        if problem:
            raise ValueError(f"{where}merge {problem}")
        merges.append(pair)
    return merges


def write_gpt2_files(
    vocab: Mapping[int, bytes],
    merges: Sequence[tuple[bytes, bytes]],
    vocab_path: PathLike,
    merges_path: PathLike,
) -> None:
    """Write ``vocab`` and ``merges`` in GPT-2's format (readable by
    ``read_gpt2_files`` and by HF tokenizers' byte-level BPE)."""
    table = {token_to_printable(token): token_id for token_id, token in sorted(vocab.items())}
    Path(vocab_path).write_text(json.dumps(table, ensure_ascii=False) + "\n", encoding="utf-8")
    lines = ["#version: 0.2"] + [f"{token_to_printable(a)} {token_to_printable(b)}" for a, b in merges]
    Path(merges_path).write_text("\n".join(lines) + "\n", encoding="utf-8")


# ----------------------------------------------------------------- helpers


def _parse_json(text: str, path: PathLike) -> object:
    """``json.loads`` whose errors name the file and line, and which refuses
    a key given twice (plain json would silently keep the last one)."""

    def no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
        result: dict[str, object] = {}
        for key, value in pairs:
            if key in result:
                needle = json.dumps(key, ensure_ascii=False) + ":"
                second = text.find(needle, text.find(needle) + 1)
                line = f", line {_line_of(text, second)}" if second >= 0 else ""
                raise ValueError(f"{path}{line}: the key {key!r} appears twice")
            result[key] = value
        return result

    try:
        return json.loads(text, object_pairs_hook=no_duplicates)
    except json.JSONDecodeError as err:
        position, message = _json_error(text, err)
        line = _line_of(text, position)
        column = position - text.rfind("\n", 0, position)
        raise ValueError(f"{path}, line {line}: not valid JSON ({message}, column {column})") from None


def _json_error(text: str, err: json.JSONDecodeError) -> tuple[int, str]:
    """Where and what the JSON error is, the same on every Python version.

    Python 3.13's json reports a trailing comma (``[1, 2,]``) at the comma, as
    "Illegal trailing comma"; earlier versions report the ``]`` or ``}`` after
    it, as "Expecting value" or "Expecting property name". The comma is the
    mistake, so a closing bracket right after a comma is reported there on
    every version, with 3.13's words. Lines and columns are then computed
    from the position here, not taken from ``err``.
    """
    position = err.pos
    if position < len(text) and text[position] in "]}":
        before = len(text[:position].rstrip())
        if before and text[before - 1] == ",":
            kind = "array" if text[position] == "]" else "object"
            return before - 1, f"Illegal trailing comma before end of {kind}"
    return position, err.msg


def _line_of(text: str, position: int) -> int:
    """The 1-based line number of ``position`` in ``text``."""
    return text.count("\n", 0, position) + 1


def _where(path: PathLike, text: str, *needles: str, after: int = 0) -> str:
    """``"path, line N: "`` for the first of ``needles`` found in ``text``
    (``after`` lines below it), or ``"path: "`` if none is found."""
    for needle in needles:
        at = text.find(needle)
        if at >= 0:
            return f"{path}, line {_line_of(text, at) + after}: "
    return f"{path}: "


def _token(printable: object) -> bytes:
    if not isinstance(printable, str) or not printable:
        raise ValueError(f"token {printable!r} is not a non-empty string")
    return printable_to_token(printable)
