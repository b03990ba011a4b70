"""Generated cases: the table every chapter's module fills, and what the chapters share.

What this adds over the self-checks in ``check`` (which test a learner's
function on the cases its chapter fixes, seeded the same for everyone):
inputs drawn from a random generator that ``generated`` seeds for one
student, and for each input the *reference* that computes its expected
value with the package. A chapter's module (``compression``, ``training``,
``encoding``, ``complexity``, ``bytelevel``, ``variants``, ``wild``,
``scale``, ``production``: one per chapter, as in ``check``) registers a
``Generator`` per graded task here, under the task's nbgrader ``grade_id``
(two chapters both have a ``decode``); ``chapters`` imports them all, and
``generated`` decides whether each still fits its task. This module holds
the table and the random inputs more than one chapter draws: word
frequencies, merge lists, corpora part way through training, Han text,
byte-level vocabularies trained on a temporary file.

The inputs stay small (a few words, a few dozen bytes, a byte-level
vocabulary of about 300 entries), so that a failing case can be shown to
the learner whole and re-run by hand.

>>> import random
>>> cases = draw(lambda: (random_word(random.Random(1)),))
>>> len(cases) == CASES_PER_TASK, all(set(w) <= set("abc") for (w,) in cases)
(True, True)
"""

from __future__ import annotations

import random
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bpe_lab.bytelevel.tokenizer import Tokenizer
from bpe_lab.bytelevel.train import train_bytelevel
from bpe_lab.core.train import count_pairs, train_bpe
from bpe_lab.core.words import corpus_from_word_freq, merge_symbols

__all__ = [
    "CASES_PER_TASK",
    "Args",
    "Pair",
    "Corpus",
    "EOW",
    "EOT",
    "SPECIAL_SETS",
    "Generator",
    "GENERATORS",
    "register",
    "draw",
    "mix",
    "random_word_freq",
    "random_merges",
    "random_word",
    "random_corpus",
    "random_symbols_and_pair",
    "random_han_text",
    "trained_on",
    "tokenizer_of",
    "tokenizer_source",
    "Measured",
    "MEASURED",
    "KERNEL",
    "kernel_call",
]


#: How many cases a generator makes for each submission.
CASES_PER_TASK = 5

Args = tuple[Any, ...]
Pair = tuple[str, str]
Corpus = dict[tuple[str, ...], int]
EOW = "</w>"
EOT = "<|endoftext|>"
#: The special tokens a byte-level case trains with: none, one, two.
SPECIAL_SETS: list[list[str]] = [[], [EOT], [EOT, "<|pad|>"]]


@dataclass(frozen=True)
class Generator:
    """Random inputs for one task and the package's answer to them.
    ``call(name, args)`` writes the hidden call (default: ``name(*args)``);
    ``name``: the learner's function it calls, where that is not the task's
    ``name`` (the name its fixed cases call most: ``set`` in a task whose
    cases compare vocabularies as sets)."""

    inputs: Callable[[random.Random], list[Args]]
    reference: Callable[..., Any]
    call: Callable[[str, Args], str] | None = None
    name: str = ""

    def function(self, task_name: str) -> str:
        """The learner's function this generator's calls test."""
        return self.name or task_name

    def source(self, name: str, args: Args) -> str:
        if self.call is not None:
            return self.call(name, args)
        return f"{name}({', '.join(map(repr, args))})"


#: grade_id -> its generator
GENERATORS: dict[str, Generator] = {}


Inputs = Callable[[random.Random], list[Args]]


def register(
    grade_id: str, reference: Callable[..., Any], call: Callable[[str, Args], str] | None = None, name: str = ""
) -> Callable[[Inputs], Inputs]:
    """Decorator: the decorated function makes ``grade_id``'s inputs."""

    def add(inputs: Inputs) -> Inputs:
        GENERATORS[grade_id] = Generator(inputs, reference, call, name)
        return inputs

    return add


@dataclass(frozen=True)
class Measured:
    """A hidden case whose verdict the grader measures itself, around cells
    it runs in the kernel (``run.measure``), instead of taking a figure the
    kernel reports: ``setup`` (untimed) builds the inputs, each of ``timed``
    (one cell each) is a call, its weight in the difference, and the value
    it must give; ``cleanup`` (untimed) frees what ``setup`` made.

    ``kind``: ``"cpu"`` (the weighted sum of the timed cells' CPU seconds,
    the kernel's whole process tree, must stay under ``bound``) or
    ``"memory"`` (the tree's resident memory while each timed cell runs,
    over its level before the cell, must stay under ``bound`` bytes).
    ``size`` names the input as feedback shows it, ``mistake`` the kind of
    mistake going over the bound is, and ``passed`` is the value the case's
    call stands for when it passes (``'flat'``).

    ``reference`` (CPU only): for each timed cell, a call of the package's
    own answer on the same input, which the grader times in the same
    kernel right after it; each timed cell's seconds must also stay within
    ``ratio`` times its reference's plus ``bound``. A difference alone can
    be padded (work burnt on the small input to match the large one's);
    a padded cell is then slower than its reference allows."""

    kind: str
    setup: str
    timed: tuple[tuple[str, int, Any], ...]
    cleanup: str
    bound: float
    size: str
    mistake: str
    passed: Any
    reference: tuple[str, ...] = ()
    ratio: float = 0.0

    def __post_init__(self) -> None:
        if self.reference and (self.kind != "cpu" or len(self.reference) != len(self.timed) or self.ratio <= 0):
            raise ValueError(
                f"Measured: a reference needs kind 'cpu', one call per timed cell ({len(self.timed)}, not "
                f"{len(self.reference)}) and a ratio above 0 (not {self.ratio!r})"
            )


#: What makes a hidden call's measured plan: each planner gives the plan of
#: a call it knows (None for any other); a chapter's module adds its own.
MEASURED: list[Callable[[str], Measured | None]] = []

#: The kernel-side module (``run.in_kernel``) as a cell names it: an expression that binds no name in
#: the learner's namespace. A measured plan's cells, and the probe's, are calls of its functions.
KERNEL = "__import__('bpe_lab.grading.run.in_kernel', fromlist=['run_hidden'])"


def kernel_call(function: str, *args: str) -> str:
    """One expression: ``in_kernel.FUNCTION(ARGS)`` (``args``: source text).

    >>> kernel_call("forget_cell")
    "__import__('bpe_lab.grading.run.in_kernel', fromlist=['run_hidden']).forget_cell()"
    """
    if not function.isidentifier():
        raise ValueError(f"kernel_call: {function!r} is not a function's name")
    return f"{KERNEL}.{function}({', '.join(args)})"


# ------------------------------------------------------------ shared inputs


def draw(make: Callable[[], Args | None], n: int = CASES_PER_TASK) -> list[Args]:
    """``n`` inputs from ``make`` (which returns None to skip one)."""
    out: list[Args] = []
    for _ in range(20 * n):
        args = make()
        if args is not None:
            out.append(args)
        if len(out) == n:
            break
    return out


def mix(rng: random.Random, parts: list[str], seps: list[str], most: int = 6) -> str:
    """Up to ``most`` random parts, each followed by a random separator."""
    return "".join(rng.choice(parts) + rng.choice(seps) for _ in range(rng.randint(1, most)))


def random_word_freq(rng: random.Random, alphabet: str = "abcde") -> dict[str, int]:
    """A small random word -> frequency table (a dict: its order is the seed's)."""
    words = dict.fromkeys(
        "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 7))) for _ in range(rng.randint(2, 8))
    )
    return {w: rng.randint(1, 9) for w in words}


def random_merges(rng: random.Random, alphabet: str = "abc") -> list[tuple[str, str]]:
    return train_bpe(random_word_freq(rng, alphabet), rng.randint(1, 8), on_short="ignore")


def random_word(rng: random.Random, alphabet: str = "abc") -> str:
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8)))


def random_corpus(rng: random.Random, merges: int = 2) -> dict[tuple[str, ...], int]:
    """A training corpus part way through: characters plus ``</w>``, a few merges made."""
    corpus = dict(corpus_from_word_freq(random_word_freq(rng)))
    for _ in range(rng.randint(0, merges)):
        counts = count_pairs(corpus)
        if counts:
            pair = rng.choice(sorted(counts))
            corpus = {merge_symbols(s, pair): f for s, f in corpus.items()}
    return corpus


def random_symbols_and_pair(rng: random.Random) -> Args:
    symbols = tuple(rng.choice(["a", "a", "b", "ab", "c"]) for _ in range(rng.randint(2, 10))) + (EOW,)
    pairs = list(zip(symbols, symbols[1:]))
    pair = rng.choice(pairs) if rng.random() < 0.85 else (rng.choice("abc"), rng.choice("abc"))
    return symbols, pair


#: Han runs, several outside [\u4e00-\u9fa5]: 䶮 㐀 (Extension A), 豈 (compatibility), 𠮷 (plane 2),
#: 龦 (after U+9FA5), 〇 (a number), 々 (an iteration mark)
_HAN = ["今天", "天气很好", "我们", "刘䶮", "㐀㐁", "豈更", "𠮷野家", "龥龦", "一九八〇年", "人々", "好"]
_NOT_HAN = ["and", "ok", "abc", "2024", "GPT-2", "カタカナ", "🙂", "x", "的"]
_ZH_SEPS = ["", "", " ", "  ", "，", "。", ", ", "\n\n", "、", "\t"]


def random_han_text(rng: random.Random) -> str:
    return mix(rng, _HAN * 2 + _NOT_HAN, _ZH_SEPS, 8)


def trained_on(text: str, vocab_size: int, specials: list[str]) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    """``train_bytelevel`` on ``text`` (written to a temporary file, removed
    at once): the vocabulary and merges that generated cases are built on."""
    with tempfile.TemporaryDirectory(prefix="bpe-lab-cases-") as folder:
        path = Path(folder) / "text.txt"
        path.write_text(text, encoding="utf-8")
        return train_bytelevel(path, vocab_size, specials, workers=1, progress=False, on_short="ignore")


def tokenizer_of(tail: dict[int, bytes], merges: list[tuple[bytes, bytes]], specials: list[str]) -> Tokenizer:
    """The byte-level tokenizer whose vocabulary is the 256 bytes and ``tail``."""
    return Tokenizer({**{i: bytes([i]) for i in range(256)}, **tail}, merges, specials)


def tokenizer_source(tail: dict[int, bytes], merges: list[tuple[bytes, bytes]], specials: list[str]) -> str:
    """``tokenizer_of``'s tokenizer as the source a hidden call builds it with in the kernel."""
    entries = "".join(f", {i}: {token!r}" for i, token in tail.items())
    return f"Tokenizer({{**{{i: bytes([i]) for i in range(256)}}{entries}}}, {merges!r}, {specials!r})"
