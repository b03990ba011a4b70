"""Generated cases for exercise 10, the capstone: a GPT-4-style tokenizer of one's own.

What this adds over ``production`` (chapter 09): the three tasks
of chapter 10, whose inputs come with a pattern, drawn from GPT-2's,
cl100k's (GPT-4's), o200k's and Llama 3's (``check.capstone.CAPSTONE_PATTERNS``),
so that code which cuts with one pattern whatever it is given fails:

- ``split_specials(TEXT, SPECIALS)``: stretches of the five languages and
  special tokens, some inside others (``<s>``, ``<s></s>``) or with regex
  metacharacters (``[SEP]``, ``|``); the reference is ``split_special``;
- ``train(TEXT, SIZE, SPECIALS, PATTERN)``: a few sentences with digits,
  contractions and special tokens; the reference, ``check.capstone.trained``,
  is ``train_bytelevel`` with that pattern, compared exactly (ids too);
- the class, built in the call from a vocabulary trained here
  (``MyTokenizer({**{i: bytes([i]) ...}, 256: ...}, merges, specials,
  pattern)``): ``.encode(TEXT)`` against ``Tokenizer.encode`` with the
  same pattern, ``.decode(IDS)`` of ids that may cut a character, and
  ``check.reloaded(MyTokenizer(...), TEXT)``: saved, moved, loaded, and
  encoding with what was loaded gives ``Tokenizer.encode``'s ids.

>>> source = GENERATORS["10_capstone_my_tokenizer"].source
>>> source("MyTokenizer", ({256: b"ab"}, [(b"a", b"b")], [], "x", "reloaded", "abc"))[:45]
'check.reloaded(MyTokenizer({**{i: bytes([i]) '
"""

from __future__ import annotations

import random
from typing import Any

from bpe_lab.bytelevel.tokenizer import Tokenizer
from bpe_lab.core.corpora import DATA_DIR
from bpe_lab.grading.cases.generators import CASES_PER_TASK, GENERATORS, Args, register
from bpe_lab.grading.check.capstone import CAPSTONE_PATTERNS, split_reference, trained

__all__ = ["GENERATORS", "REGISTERED"]

_BEFORE = set(GENERATORS)
EOT = "<|endoftext|>"
_SPECIALS: list[list[str]] = [[], [EOT], [EOT, "<|pad|>"], ["<s>", "</s>", "<s></s>"], ["[SEP]", "|"]]
_EXTRAS = ["I'LL", "DON'T", " 2024", "1234567", "  ", "\n\n", "camelCase", "🙂", "x = f(1);", " naïve"]


def _sentences() -> list[str]:
    text = (DATA_DIR / "five_languages.txt").read_text(encoding="utf-8").replace(EOT, "")
    return [line for line in text.splitlines() if line]


def _text(rng: random.Random, specials: list[str], most: int = 6) -> str:
    """Up to ``most`` pieces: sentences of the five languages (or pieces of
    them), the extras, and the special tokens."""
    sentences = _sentences()
    parts = []
    for _ in range(rng.randint(1, most)):
        kind = rng.random()
        if kind < 0.4:
            sentence = rng.choice(sentences)
            start = rng.randrange(len(sentence))
            parts.append(sentence[start : start + rng.randint(1, 30)])
        elif kind < 0.7:
            parts.append(rng.choice(_EXTRAS))
        elif specials:
            parts.append(rng.choice(specials))
        else:
            parts.append(rng.choice([" ", "\n", "."]))
    return "".join(parts)


def _pattern(rng: random.Random) -> str:
    return CAPSTONE_PATTERNS[rng.choice(sorted(CAPSTONE_PATTERNS))]


# ------------------------------------------------------------ split_specials


@register("10_capstone_split_specials", split_reference)
def _split_inputs(rng: random.Random) -> list[Args]:
    out: list[Args] = []
    for _ in range(CASES_PER_TASK):
        specials = rng.choice(_SPECIALS[1:])
        out.append((_text(rng, specials, 8), list(specials)))
    return out


# ------------------------------------------------------------ train


def _training_text(rng: random.Random, specials: list[str]) -> str:
    sentences = _sentences()
    parts = [rng.choice(sentences + _EXTRAS) + rng.choice([" ", "\n", ""]) for _ in range(rng.randint(2, 6))]
    for _ in range(len(specials) and rng.randint(1, 3)):
        parts.insert(rng.randrange(len(parts) + 1), rng.choice(specials))
    return "".join(parts)


@register("10_capstone_train", trained)
def _train_inputs(rng: random.Random) -> list[Args]:
    out: list[Args] = []
    for _ in range(CASES_PER_TASK):
        specials = list(rng.choice(_SPECIALS[:3]))
        text = _training_text(rng, specials)
        size = 256 + len(specials) + rng.randint(3, 25)
        out.append((text, size, specials, _pattern(rng)))
    return out


# ------------------------------------------------------------ the class


def _tokenizer_source(name: str, tail: dict[int, bytes], merges: list[Any], specials: list[str], pattern: str) -> str:
    """The learner's class built in the call on the 256 bytes and ``tail``."""
    entries = "".join(f", {i}: {token!r}" for i, token in tail.items())
    return f"{name}({{**{{i: bytes([i]) for i in range(256)}}{entries}}}, {merges!r}, {specials!r}, {pattern!r})"


def _reference(tail: dict[int, bytes], merges: list[Any], specials: list[str], pattern: str) -> Tokenizer:
    return Tokenizer({**{i: bytes([i]) for i in range(256)}, **tail}, merges, specials, pattern=pattern)


def _trained_tokenizer(rng: random.Random) -> tuple[dict[int, bytes], list[Any], list[str], str]:
    """A vocabulary of the bytes, the special tokens and 8..30 merges, trained on a few sentences."""
    specials = list(rng.choice(_SPECIALS[1:3]))
    pattern = _pattern(rng)
    text = _training_text(rng, specials)
    vocab, merges = trained(text, 256 + len(specials) + rng.randint(8, 30), specials, pattern)
    return {i: t for i, t in vocab.items() if i >= 256}, merges, specials, pattern


def _use(tail: dict[int, bytes], merges: list[Any], specials: list[str], pattern: str, how: str, arg: Any) -> Any:
    """``how`` is encode (``arg``: a text), decode (``arg``: ids) or reloaded
    (``arg``: a text, encoded by the tokenizer saved and loaded again)."""
    reference = _reference(tail, merges, specials, pattern)
    return reference.decode(arg) if how == "decode" else reference.encode(arg)


def _use_call(name: str, args: Args) -> str:
    *made, how, arg = args
    if how == "reloaded":
        return f"check.reloaded({_tokenizer_source(name, *made)}, {arg!r})"
    return f"{_tokenizer_source(name, *made)}.{how}({arg!r})"


#: What each of the class's cases does, in order: ids, the text back from ids, ids after a save and a load.
_USES = ("encode", "encode", "decode", "reloaded", "reloaded")


@register("10_capstone_my_tokenizer", _use, _use_call, name="MyTokenizer")
def _tokenizer_inputs(rng: random.Random) -> list[Args]:
    out: list[Args] = []
    for how in _USES[:CASES_PER_TASK]:
        tail, merges, specials, pattern = _trained_tokenizer(rng)
        text = _text(rng, specials)
        if how == "decode":  # ids cut anywhere, a character's first byte perhaps left alone: U+FFFD
            ids = _reference(tail, merges, specials, pattern).encode(text)
            out.append((tail, merges, specials, pattern, how, ids[: rng.randint(0, len(ids))] + [0xE4]))
        else:
            out.append((tail, merges, specials, pattern, how, text))
    return out


#: The grade_ids this module adds to ``GENERATORS``.
REGISTERED = tuple(g for g in GENERATORS if g not in _BEFORE)
