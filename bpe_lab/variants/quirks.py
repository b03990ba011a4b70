"""What tokenization does to the text a model sees, measured.

Beside ``granularity`` (how long text gets at each granularity), this module
measures the side effects of one byte-level tokenizer that a model inherits
and cannot undo (notebook 07):

- **spelling**: a model sees token ids, not letters (``letters_by_token``);
- **digits**: where a number is cut depends on the number (``digit_shapes``);
- **white space**: a space is part of the next token, and runs of spaces may
  cost one token per space (``indentation_cost``, ``whitespace_tokens``);
- **under-trained tokens**: a merge adds a token that may almost never occur
  as a whole once later merges absorb it, so a model trained on the
  tokenized text barely sees it (``token_uses``, ``rarely_used``);
- **languages**: the same sentence costs different numbers of tokens
  (``language_costs``);
- **Unicode**: normal forms change the bytes and so the tokens
  (``normal_forms``), and a character range in a pattern misses the Han
  characters outside it (``han_coverage``).

>>> from bpe_lab.bytelevel.tokenizer import Tokenizer
>>> token_strings(Tokenizer.byte_level(), "hé")
['h', '\\\\xc3', '\\\\xa9']
>>> letters_by_token(Tokenizer.byte_level(), "err", "r")
[('e', 0), ('r', 1), ('r', 1)]
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import regex

from bpe_lab.bytelevel.tokenizer import Tokenizer

__all__ = [
    "token_strings",
    "letters_by_token",
    "digit_shapes",
    "indentation_cost",
    "whitespace_tokens",
    "TokenUse",
    "token_uses",
    "rarely_used",
    "built_from",
    "language_costs",
    "NORMAL_FORMS",
    "normal_forms",
    "HAN_REGIONS",
    "han_coverage",
    "is_han",
]


def token_strings(tokenizer: Tokenizer, text: str) -> list[str]:
    """Each token of ``text`` as text; a token that holds only part of a
    character shows its bytes as ``\\xNN``."""
    return [tokenizer.decode_bytes([i]).decode("utf-8", errors="backslashreplace") for i in tokenizer.encode(text)]


def letters_by_token(tokenizer: Tokenizer, text: str, letter: str) -> list[tuple[str, int]]:
    """``(token, how many times letter is in it)`` for each token of
    ``text``: counting letters means looking inside tokens, which a model
    given only the ids cannot do directly."""
    return [(token, token.count(letter)) for token in token_strings(tokenizer, text)]


def digit_shapes(tokenizer: Tokenizer, numbers: Iterable[int], *, prefix: str = " ") -> Counter[tuple[int, ...]]:
    """How many of ``numbers`` (written after ``prefix``) are cut into each
    shape: ``(2, 2)`` is two tokens of two digits each (the prefix is not
    counted). GPT-2's merges, learned from frequency, cut 4-digit numbers
    into several different shapes; a pattern with ``\\p{N}{1,3}`` fixes at
    least where the cuts may fall."""
    shapes: Counter[tuple[int, ...]] = Counter()
    for number in numbers:
        tokens = token_strings(tokenizer, f"{prefix}{number}")
        shapes[tuple(sum(ch.isdigit() for ch in token) for token in tokens if any(ch.isdigit() for ch in token))] += 1
    return shapes


def indentation_cost(tokenizer: Tokenizer, widths: Iterable[int], line: str = "return x") -> dict[int, int]:
    """``{width: tokens}`` for ``line`` indented by ``width`` spaces."""
    return {width: len(tokenizer.encode(" " * width + line)) for width in widths}


def whitespace_tokens(tokenizer: Tokenizer) -> list[bytes]:
    """The tokens made of white space only, shortest first."""
    specials = set(tokenizer.special_ids.values())
    found = [token for i, token in tokenizer.vocab.items() if token.isspace() and i not in specials]
    return sorted(found, key=lambda token: (len(token), token))


@dataclass(frozen=True)
class TokenUse:
    """How often one token was emitted when encoding two texts."""

    id: int
    token: bytes
    train: int
    heldout: int

    @property
    def text(self) -> str:
        return self.token.decode("utf-8", errors="backslashreplace")


def token_uses(tokenizer: Tokenizer, text: str) -> Counter[int]:
    """How many times each id is emitted when encoding ``text``."""
    return Counter(tokenizer.encode(text))


def rarely_used(tokenizer: Tokenizer, train_text: str, heldout_text: str, *, limit: int = 10) -> list[TokenUse]:
    """The merged tokens emitted least often when encoding ``train_text``
    (the text the merges were learned from), longest first among equals,
    with their uses on ``heldout_text``: the candidates for under-trained
    "glitch" tokens. A model trained on the tokenized text sees a token
    only where the tokenizer emits it; a token used 0 times never reaches
    the model's input, so its input embedding is never trained."""
    train, heldout = token_uses(tokenizer, train_text), token_uses(tokenizer, heldout_text)
    ranked = sorted(_merged_ids(tokenizer), key=lambda i: (train[i], -len(tokenizer.vocab[i]), i))
    return [TokenUse(i, tokenizer.vocab[i], train[i], heldout[i]) for i in ranked[:limit]]


def _merged_ids(tokenizer: Tokenizer) -> set[int]:
    id_of = {token: i for i, token in tokenizer.vocab.items()}
    return {id_of[a + b] for a, b in tokenizer.merges}


def built_from(tokenizer: Tokenizer, token: bytes) -> list[bytes]:
    """The tokens whose merge took ``token`` as one of its two parts, in
    merge order: where the occurrences of ``token`` went."""
    return [a + b for a, b in tokenizer.merges if token in (a, b)]


def language_costs(tokenizer: Tokenizer, sentences: Mapping[str, Sequence[str]]) -> dict[str, int]:
    """``{language: tokens}`` for parallel sentences (each encoded on its own,
    as a prompt would be). Divided by the English count, this is what Petrov
    et al. (2023) call the tokenization premium."""
    return {lang: sum(len(tokenizer.encode(s)) for s in lines) for lang, lines in sentences.items()}


#: The four Unicode normal forms (Unicode Standard Annex #15).
NORMAL_FORMS = ("NFC", "NFD", "NFKC", "NFKD")


def normal_forms(text: str) -> dict[str, str]:
    """``text`` in each of the four normal forms.

    >>> {form: len(s) for form, s in normal_forms("é").items()}
    {'NFC': 1, 'NFD': 2, 'NFKC': 1, 'NFKD': 2}
    """
    return {form: unicodedata.normalize(form, text) for form in NORMAL_FORMS}  # type: ignore[arg-type]


#: Where Han characters lie, for ``han_coverage`` (first match wins).
HAN_REGIONS: dict[str, tuple[int, int]] = {
    "U+9FA6-U+9FFF (the rest of the block)": (0x9FA6, 0x9FFF),
    "U+4E00-U+9FFF (CJK Unified Ideographs)": (0x4E00, 0x9FFF),
    "U+3400-U+4DBF (Extension A)": (0x3400, 0x4DBF),
    "U+F900-U+FAFF (Compatibility Ideographs)": (0xF900, 0xFAFF),
    "U+20000-U+2FFFF (plane 2: Extensions B-F, more compatibility)": (0x20000, 0x2FFFF),
    "U+30000-U+3FFFF (plane 3: Extensions G-H and later)": (0x30000, 0x3FFFF),
}

_HAN = regex.compile(r"\p{Han}")


def is_han(char: str) -> bool:
    """True for a character of the Han script (``\\p{Han}`` in ``regex``)."""
    return bool(_HAN.fullmatch(char))


def _every_code_point() -> str:
    """Every code point but the surrogates, in order, as one string."""
    return "".join(map(chr, range(0xD800))) + "".join(map(chr, range(0xE000, 0x110000)))


def han_coverage(low: int = 0x4E00, high: int = 0x9FA5) -> dict[str, int]:
    """How many Han-script code points (``\\p{Han}``, counted only where
    Python's ``unicodedata`` says the code point is assigned, so the count
    follows ``unicodedata.unidata_version``) lie inside ``[low, high]``, and
    how many outside it, by region. "other" is radicals, ``々``, ``〇`` and
    the like.

    >>> han_coverage()["inside the range"]
    20902
    """
    counts = Counter[str]()
    for match in _HAN.finditer(_every_code_point()):  # one scan in C, in code point order
        char = match.group()
        cp = ord(char)
        if unicodedata.category(char) == "Cn":
            continue
        if low <= cp <= high:
            counts["inside the range"] += 1
            continue
        region = next((name for name, (lo, hi) in HAN_REGIONS.items() if lo <= cp <= hi), "other")
        counts[region] += 1
    return {"inside the range": counts.pop("inside the range", 0), **dict(counts.most_common())}
