"""Chapter 07's checks: cl100k's digits in GPT-2's pattern, the Chinese range pattern fixed, tokens never emitted.

What this adds to ``runner``: references for three findings of notebook 07,
written here because the package's helpers there (``core.patterns``,
``variants.quirks``) would answer the tasks, and hints that tell the usual
mistakes apart by where the learner's cut first differs:

- ``digit_pieces``: GPT-2's pattern with cl100k's number branch
  ``\\p{N}{1,3}`` for its `` ?\\p{N}+`` (GPT-2's or cl100k's whole pattern,
  the space kept, groups from the right, ``\\d`` dropping ``²`` are named);
- ``zh_pieces``: the ``[\\u4e00-\\u9fa5]`` tutorial pattern with ``\\p{Han}+`` for one
  character of ``[\\u4e00-\\u9fa5]``, in both branches: with the range left
  in the second, "ok𠮷" is one piece (U+20BB7 is Han, outside the range);
- ``unemitted_tokens``: the merged tokens that encoding a text never emits,
  the glitch candidates (bytes or special tokens counted, ids or ``str``
  returned, the bytes looked for in the text: ``tribute`` is in it 271
  times, and never emitted).

``bpe_lab.bytelevel`` is imported inside the functions, as in ``bytelevel``.

>>> digit_pieces("I'LL pay 1234567 now")
['I', "'", 'LL', ' pay', ' ', '123', '456', '7', ' now']
>>> zh_pieces("ok𠮷野家 今天")
['ok', '𠮷野家', ' ', '今天']
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from itertools import accumulate
from pathlib import Path
from typing import TYPE_CHECKING, Any

import regex

from bpe_lab.core.corpora import python_docs
from bpe_lab.core.patterns import CL100K_PATTERN, ZH_RANGE_PATTERN, pretokenize_with
from bpe_lab.core.pretokenize import GPT2_PATTERN
from bpe_lab.grading.check.runner import compare, rng, run_cases, short
from bpe_lab.grading.check.variants import ZH_RANGE, han_words_learned

if TYPE_CHECKING:
    import random

    from bpe_lab.bytelevel.tokenizer import Tokenizer

__all__ = ["DIGITS_PATTERN", "digit_pieces", "check_pretokenize_digits", "ZH_PATTERN", "zh_pieces"]
__all__ += ["check_pretokenize_zh", "unemitted_tokens", "check_never_emitted"]
__all__ += ["number_groups", "check_split_number"]

Pretokenizer = Callable[[str], list[str]]

_GPT2_NUMBERS = r" ?\p{N}+"

#: GPT-2's pattern with cl100k's number branch (the reference of ``pretokenize_digits``).
DIGITS_PATTERN = GPT2_PATTERN.replace(_GPT2_NUMBERS, r"\p{N}{1,3}")

#: The ``[\u4e00-\u9fa5]`` tutorial pattern with ``\p{Han}`` for the range, and a run for one character.
ZH_PATTERN = r"\p{Han}+|[^\p{Han}\s]+|\s+"

_HAN, _NUMBER = regex.compile(r"\p{Han}"), regex.compile(r"\p{N}")


def _findall(pattern: str) -> Pretokenizer:
    compiled = regex.compile(pattern)
    return lambda text: list(compiled.findall(text))


_DIGITS, _ZH = _findall(DIGITS_PATTERN), _findall(ZH_PATTERN)


def digit_pieces(text: str) -> list[str]:
    """The pieces of ``DIGITS_PATTERN``: GPT-2's, but numbers in groups of one
    to three digits from the left, without the space before them."""
    return _DIGITS(text)


def zh_pieces(text: str) -> list[str]:
    """The pieces of ``ZH_PATTERN``: runs of Han characters, runs of other
    characters but white space, runs of white space."""
    return _ZH(text)


# ------------------------------------------------------------ what both pattern checks share


def _is(pattern: regex.Pattern[str], char: str) -> bool:
    return bool(pattern.fullmatch(char))


def _code(char: str) -> str:
    return f"{char!r} (U+{ord(char):04X})"


def _first_difference(expected: list[str], got: list[str]) -> tuple[int, bool]:
    """The offset of the first piece boundary that only one of two cuts of
    the same text has, and whether it is ``got``'s (a cut that should not be)."""
    mine, right = set(accumulate(map(len, got))), set(accumulate(map(len, expected)))
    at = min(mine ^ right)
    return at, at in mine


def _shape_hint(got: object, text: str, lost: Callable[[str], str]) -> str | None:
    """The hint for a result that is not a list of pieces joining back to
    ``text`` (``lost(char)`` says why a lost character may have been lost)."""
    if not (isinstance(got, list) and all(isinstance(p, str) for p in got)):
        return ": return a list of strings, the pieces"
    if "" in got:
        return ": a piece is empty: a branch of your pattern can match nothing ({0,3}, *); use {1,3}, +"
    joined = "".join(got)
    if joined == text:
        return None
    at = next((k for k, (a, b) in enumerate(zip(joined, text)) if a != b), min(len(joined), len(text)))
    if at >= len(text):
        return f": the pieces hold more than the text ({short(joined[at:], 40)} at offset {at})"
    return (
        f": the pieces must join back to the text, but {_code(text[at])} at offset {at} is lost "
        f"(regex.findall skips what no branch matches){lost(text[at])}"
    )


# ------------------------------------------------------------ 1. cl100k's digits in GPT-2's pattern

_DIGIT_TEXTS = ["I'LL pay 1234567 now", "12345 + 67890 = 80235", "1,234,567 or 1234567", "x  = 10000"]
_DIGIT_TEXTS += ["pi is 3.14159265358979", "abc123def4567", "  99 bottles\n\n", "it's 2024's best: 42"]
_DIGIT_TEXTS += ["x² + ½ = Ⅻ", "٣٤٥٦٧ and １２３４", "0", ""]


def _digit_text(generator: random.Random) -> str:
    parts = []
    for _ in range(generator.randint(1, 6)):
        if generator.random() < 0.55:
            parts.append("".join(generator.choice("0123456789") for _ in range(generator.randint(1, 10))))
        else:
            parts.append(generator.choice(["pay", "The", "x", "don't", "v", "(", "=", "$", "²", "٣٤"]))
        parts.append(generator.choice([" ", " ", "  ", "", ",", ".", "\n"]))
    return "".join(parts)


def _from_the_right(text: str) -> list[str]:
    """Numbers grouped by three from the right, as people write thousands."""
    out: list[str] = []
    for piece in _findall(GPT2_PATTERN.replace(_GPT2_NUMBERS, r"\p{N}+"))(text):
        if not regex.fullmatch(r"\p{N}+", piece):
            out.append(piece)
            continue
        head = len(piece) % 3
        out += ([piece[:head]] if head else []) + [piece[k : k + 3] for k in range(head, len(piece), 3)]
    return out


_DIGIT_MISTAKES: list[tuple[Pretokenizer, str]] = [
    (_findall(GPT2_PATTERN), r"that is GPT-2's pattern unchanged: cut a run of digits into groups of 1 to 3"),
    (
        _findall(GPT2_PATTERN.replace(_GPT2_NUMBERS, r" ?\p{N}{1,3}")),
        r"in cl100k a space before a number is a piece of its own (its number branch has no ' ?'): "
        r"' 2024' gives ' ', '202', '4', not ' 202', '4'",
    ),
    (
        _findall(CL100K_PATTERN),
        "that is cl100k's whole pattern: change only GPT-2's number branch and keep its other branches "
        """(its contractions are lower case only, so "I'LL" gives 'I', "'", 'LL')""",
    ),
    (
        _from_the_right,
        "the groups are counted from the left, as the regex takes up to three digits wherever it stands: "
        "'1234567' gives '123', '456', '7', not '1', '234', '567' as thousands are written",
    ),
    (
        _findall(GPT2_PATTERN.replace(_GPT2_NUMBERS, r"\p{N}")),
        r"a piece holds up to three digits, not one: \p{N}{1,3}",
    ),
]


def _lost_digit(char: str) -> str:
    if _is(_NUMBER, char) and not char.isdecimal():
        return (
            f": {char!r} is a number, as GPT-2's \\p{{N}} counts them, but not a decimal digit, "
            r"which is all \d matches: keep \p{N}"
        )
    if _is(_NUMBER, char):
        return r": the last group of a number may have one or two digits: \p{N}{1,3}, not \p{N}{3}"
    return ": keep GPT-2's other branches as they are"


def _digit_hint(expected: list[str], got: object, text: str) -> str:
    known = (": " + hint for wrong, hint in _DIGIT_MISTAKES if got == wrong(text))
    hint = _shape_hint(got, text, _lost_digit) or next(known, None)
    if hint is not None or not isinstance(got, list):
        return hint or ""
    at, extra = _first_difference(expected, got)
    before, after = text[at - 1], text[at]
    if _is(_NUMBER, before) and _is(_NUMBER, after):
        if extra:
            return (
                f": you cut between the digits {before!r} and {after!r} at offset {at}: count the groups from the left"
            )
        return f": a piece holds at most three digits, and you join {before!r} and {after!r} at offset {at}"
    if before == " " and _is(_NUMBER, after):
        return f": the space before {after!r} (offset {at}) is a piece of its own, as in cl100k"
    what = "cut between" if extra else "join"
    return (
        f": you {what} {before!r} and {after!r} at offset {at}, which GPT-2's pattern does not: "
        "change only its number branch"
    )


def check_pretokenize_digits(fn: Pretokenizer) -> None:
    """``fn(text) -> pieces``: GPT-2's pre-tokenizer, but with cl100k's
    digits (``DIGITS_PATTERN``), on fixed texts and seeded random ones."""
    generator = rng()
    texts = _DIGIT_TEXTS + [_digit_text(generator) for _ in range(20)]
    verdict = compare(digit_pieces, _digit_hint, expected_shown=repr)
    run_cases("pretokenize_digits", fn, [(t,) for t in texts], verdict, shown=lambda text: short(text, 40))


# ------------------------------------------------------------ 2. the tutorial's Chinese range pattern, fixed

#: Han characters outside U+4E00-U+9FA5 on purpose: 䶮 and 㐀 (Extension A), 豈 (a compatibility
#: ideograph), 𠮷 (U+20BB7, plane 2), 龦 (after U+9FA5), 〇 (Han, but a number, not a letter).
_ZH_TEXTS = [
    "刘䶮是南汉的皇帝。",
    "㐀㐁 and 豈更, 𠮷野家",
    "ok𠮷野 家",
    "一九八〇年, 2024年的龥龦",
    "abc，def。中文 text",
]
_ZH_TEXTS += ["我们\n\n他们  ", "々", ""]


def _range_hint(char: str) -> str:
    """What may be special about a Han character that was cut off or glued on."""
    if not _is(_HAN, char):
        return ""
    if not char.isalpha():
        return (
            rf" ({_code(char)} is Han, but a number, not a letter: neither \p{{L}} nor [\u4e00-\u9fa5] has it, "
            r"\p{Han} does)"
        )
    if not ZH_RANGE[0] <= ord(char) <= ZH_RANGE[1]:
        return (
            rf" ({_code(char)} is Han, but outside [\u4e00-\u9fa5]: only the script, \p{{Han}}, "
            "has every Han character)"
        )
    return ""


_ONE_BY_ONE = (
    ": match a run, \\p{Han}+, not one character: BPE never merges across pieces, so with one character a piece "
    "it can learn no token of two Han characters"
)


def _zh_hint(expected: list[str], got: object, text: str) -> str:
    hint = _shape_hint(got, text, _range_hint)
    if hint is not None or not isinstance(got, list):
        return hint or ""
    at, extra = _first_difference(expected, got)
    before, after = text[at - 1], text[at]
    han = _is(_HAN, before), _is(_HAN, after)
    if extra and all(han):
        return (
            f": {before!r} and {after!r} (offset {at}) are both Han characters, and a run of them is one piece"
            f"{_range_hint(after) or _range_hint(before) or _ONE_BY_ONE}"
        )
    if not extra and before.isspace() != after.isspace():
        return f": white space is a run of its own, \\s+, but you join {before!r} and {after!r} (offset {at})"
    if not extra and any(han) and not all(han):
        char = after if han[1] else before
        return (
            f": you join {before!r} and {after!r} (offset {at}), but a run of Han characters is a piece of its own: "
            rf"the branch for the other characters must stop at every Han character, [^\p{{Han}}\s]+"
            f"{_range_hint(char)}"
        )
    if extra and not any(han) and not (before.isspace() or after.isspace()):
        return (
            f": you cut between {before!r} and {after!r} (offset {at}): the pattern keeps a run of characters "
            r"that are neither Han nor white space in one piece, [^\p{Han}\s]+"
        )
    return f": white space is a run of its own, \\s+ (offset {at}, between {before!r} and {after!r})"


def check_pretokenize_zh(fn: Pretokenizer) -> None:
    """``fn(text) -> pieces``: the ``[\\u4e00-\\u9fa5]`` tutorial pattern with
    ``\\p{Han}+`` (``ZH_PATTERN``); then the Han words BPE learns with it."""
    from bpe_lab.core.corpora import parallel_sentences

    texts = parallel_sentences("zh") + _ZH_TEXTS
    verdict = compare(zh_pieces, _zh_hint, expected_shown=repr)
    run_cases("pretokenize_zh", fn, [(t,) for t in texts], verdict, shown=lambda text: short(text, 40))
    words = han_words_learned(fn, 100)
    with_range = han_words_learned(_findall(ZH_RANGE_PATTERN), 100)
    print(
        f"  with it, 100 merges on parallel_sentences('zh') learn {len(words)} tokens of 2+ Han characters "
        f"({', '.join(words[:6])}); with the [\\u4e00-\\u9fa5] pattern, {len(with_range)}"
    )


# ------------------------------------------------------------ 3. tokens that encoding never emits


def unemitted_tokens(tokenizer: Tokenizer, text: str) -> set[bytes]:
    """The tokens merges made (``a + b`` for each merge) that
    ``tokenizer.encode(text)`` never emits: candidates for under-trained
    tokens. The 256 bytes and the special tokens are not made by merges.

    >>> from bpe_lab.bytelevel.tokenizer import Tokenizer
    >>> vocab = {**{i: bytes([i]) for i in range(256)}, 256: b"aa", 257: b"aaaa"}
    >>> aa = Tokenizer(vocab, [(b"a", b"a"), (b"aa", b"aa")])
    >>> unemitted_tokens(aa, "aaaa aa"), unemitted_tokens(aa, "aaaa")
    (set(), {b'aa'})
    """
    emitted = {tokenizer.vocab[i] for i in tokenizer.encode(text)}
    return {a + b for a, b in tokenizer.merges} - emitted


def _trained(text: str, vocab_size: int, specials: list[str]) -> Tokenizer:
    from bpe_lab.bytelevel.tokenizer import Tokenizer
    from bpe_lab.bytelevel.train import train_bytelevel

    with tempfile.TemporaryDirectory(prefix="bpe-lab-") as folder:
        path = Path(folder) / "text.txt"
        path.write_text(text, encoding="utf-8")
        return Tokenizer(*train_bytelevel(path, vocab_size, specials), specials)


def _never_emitted_cases() -> list[tuple[Tokenizer, str]]:
    from bpe_lab.bytelevel.tokenizer import Tokenizer

    docs = _trained(python_docs("train"), 2000, ["<|endoftext|>"])
    a_s = _trained("aaaa aaaa aaaa aaa", 262, ["<|pad|>"])
    texts = [python_docs("train"), python_docs("heldout"), " contribute to an attribute", ""]
    bytes_only = Tokenizer.byte_level(["<|endoftext|>"])
    return [(docs, t) for t in texts] + [(a_s, "aaaa aaaa"), (a_s, "aa aaa aaaa"), (bytes_only, "abc")]


def _never_verdict(got: object, tokenizer: Tokenizer, text: str) -> str | None:
    """``compare``'s verdict, but with the sizes of the sets shown rather than
    the sets (which print in a different order on every run)."""
    expected = unemitted_tokens(tokenizer, text)
    if got == expected and isinstance(got, set):
        return None
    size = f"{len(got)} items" if isinstance(got, (set, frozenset, list, tuple, dict)) else short(got, 60)
    return f"expected {len(expected)} tokens, got {size}{_never_hint(expected, got, tokenizer, text)}"


def _never_hint(expected: set[bytes], got: object, tokenizer: Tokenizer, text: str) -> str:
    items = list(got) if isinstance(got, (set, frozenset, list, tuple)) else None
    if items is None:
        return ": return a set of bytes, the tokens"
    if items and all(isinstance(t, int) for t in items):
        return ": return the tokens as bytes (tokenizer.vocab[i]), not their ids"
    if items and all(isinstance(t, str) for t in items):
        return ": return the tokens as bytes, as tokenizer.vocab holds them, not str"
    if not isinstance(got, set):
        return ": return a set" + (" (these are the right tokens)" if set(items) == expected else "")
    return _which_token(expected, got, tokenizer, text)


def _which_token(expected: set[bytes], got: set[Any], tokenizer: Tokenizer, text: str) -> str:
    merged = ": only the tokens made by merges are candidates, a + b for each (a, b) in tokenizer.merges"
    extra, missing = sorted(got - expected, key=repr), sorted(expected - got, key=repr)
    specials = {s.encode("utf-8") for s in tokenizer.special_tokens}
    if special := next((t for t in extra if t in specials), None):
        return f": {short(special)} is a special token, which no merge made{merged}"
    if single := next((t for t in extra if isinstance(t, bytes) and len(t) == 1), None):
        return f": {short(single)} is one of the 256 single bytes, which no merge made{merged}"
    data = text.encode("utf-8")
    if inside := next((t for t in missing if t in data), None):
        return (
            f": {short(inside)} is in the text {data.count(inside)} times, yet encode(text) never emits it "
            "(its bytes end up in other tokens, as later merges absorb it): look among the ids "
            "tokenizer.encode(text) returns, not in the text"
        )
    if missing:
        return f": {short(missing[0])} is missing: tokenizer.encode(text) never emits it"
    uses = sum(tokenizer.vocab[i] == extra[0] for i in tokenizer.encode(text))
    return f": {short(extra[0])} is in yours, but tokenizer.encode(text) emits it {uses} times"


def check_never_emitted(fn: Callable[[Tokenizer, str], set[bytes]]) -> None:
    """``fn(tokenizer, text) -> tokens``: the merged tokens encoding ``text``
    never emits (``unemitted_tokens``); then how many those are for a small
    tokenizer on the text it was trained on."""
    cases = _never_emitted_cases()
    run_cases("never_emitted", fn, cases, _never_verdict, shown=lambda tok, text: f"{tok!r}, {short(text, 40)}")
    docs, train = cases[0]
    found = unemitted_tokens(docs, train)
    shortest = ", ".join(short(t, 30) for t in sorted(found, key=lambda t: (len(t), t))[:5])
    print(
        f"  a tokenizer of {len(docs)} ids trained on python_docs('train') never emits {len(found)} of its "
        f"{len(docs.merges)} merged tokens there, the shortest: {shortest}"
    )


# ------------------------------------------------- notebook 07's "your turn": cl100k's groups of digits


def number_groups(number: str) -> list[str]:
    """The reference for ``split_number``: how cl100k's pattern cuts a run of
    digits (``\\p{N}{1,3}``, so groups of three from the left)."""
    return pretokenize_with(number, "cl100k")


#: Worked by hand: '2024' -> '202', '4'; '80235' -> '802', '35' (notebook
#: 07's sum); seven digits -> 3, 3, 1; three or fewer stay whole; ``\p{N}``
#: digits of another script count as digits too.
NUMBER_CASES = ["2024", "80235", "1234567", "123", "42", "7", "1000000", "١٢٣٤٥"]


def check_split_number(fn: Callable[[str], list[str]]) -> None:
    """``fn(number) -> pieces``: a run of digits cut as cl100k cuts it, into
    groups of three from the left, the last group one to three digits."""
    generator = rng()
    randoms = ["".join(generator.choice("0123456789") for _ in range(generator.randint(1, 14))) for _ in range(20)]
    cases = [(number,) for number in NUMBER_CASES + randoms]
    run_cases("split_number", fn, cases, compare(number_groups, _split_number_hint, expected_shown=repr))


def _split_number_hint(expected: list[str], got: object, number: str) -> str:
    if not (isinstance(got, list) and all(isinstance(p, str) for p in got)):
        return ": return a list of strings, the groups"
    if "".join(got) != number:
        return ": the groups must join back to the number, every digit in order"
    if got == [number] and len(number) > 3:
        return ": that is GPT-2's rule (the whole run, \\p{N}+); cl100k cuts it into groups of at most three"
    head = len(number) % 3
    if got == ([number[:head]] if head else []) + [number[i : i + 3] for i in range(head, len(number), 3)]:
        return ": group from the left: the first group has three digits and the last what is left (2024 -> 202, 4)"
    if any(len(p) > 3 for p in got):
        return ": a group has at most three digits"
    return ": take three digits at a time from the left; only the last group may be shorter"
