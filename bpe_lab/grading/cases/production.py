"""Generated cases for exercise 09: a ``tokenizers`` pipeline and a pair template.

What this adds over ``generators`` (the table and the shared inputs): the
two tasks of chapter 09, whose hidden calls build a tokenizer in the call
and send back only plain data:

- ``build_pipeline``: ``build_pipeline(Tokenizer({...}, merges, specials)).encode(TEXT).ids``,
  the vocabulary trained here on a few words (as for chapter 07's
  ``never_emitted``); the reference is bpe_lab's ``Tokenizer.encode``;
- ``pair_processor``: ``check.templated`` of the learner's processor on a
  small ``WordLevel`` tokenizer made in the kernel by ``check.word_tokenizer``;
  the reference, ``check.production.template_reference``, is plain Python:
  the grader needs no ``tokenizers`` to know the answer.

>>> source = GENERATORS["09_production_pair_processor"].source
>>> source("pair_processor", (["<s>", "</s>"], "x y", "z"))[:60]
"(lambda t: check.templated(t, pair_processor(t, '<s>', '</s>"
"""

from __future__ import annotations

import random
from typing import Any

from bpe_lab.grading.cases.generators import (
    CASES_PER_TASK,
    GENERATORS,
    Args,
    register,
    tokenizer_of,
    tokenizer_source,
    trained_on,
)
from bpe_lab.grading.check.production import template_reference

__all__ = ["GENERATORS"]

EOT = "<|endoftext|>"
_WORDS = ["low", "lower", "lowest", "the", " end", "naïve", "今天", "🙂", "x=1;", "  ", "\n", "don't", "ab", "abab"]
_SPECIALS: list[list[str]] = [[], [EOT], [EOT, "<|pad|>"]]


def _pipeline_ids(tail: dict[int, bytes], merges: list[tuple[bytes, bytes]], specials: list[str], text: str) -> Any:
    return tokenizer_of(tail, merges, specials).encode(text)


def _pipeline_call(name: str, args: Args) -> str:
    tail, merges, specials, text = args
    return f"{name}({tokenizer_source(tail, merges, specials)}).encode({text!r}).ids"


@register("09_production_build_pipeline", _pipeline_ids, _pipeline_call)
def _pipeline_inputs(rng: random.Random) -> list[Args]:
    out: list[Args] = []
    for _ in range(CASES_PER_TASK):
        specials = rng.choice(_SPECIALS)
        train = "".join(rng.choice(_WORDS + specials) + rng.choice([" ", "", "\n"]) for _ in range(rng.randint(4, 12)))
        vocab, merges = trained_on(train, 256 + len(specials) + rng.randint(2, 10), specials)
        text = "".join(rng.choice(_WORDS + specials) for _ in range(rng.randint(1, 6)))
        out.append(({i: t for i, t in vocab.items() if i >= 256}, merges, specials, text))
    return out


def _template_call(name: str, args: Args) -> str:
    specials, a, b = args
    made = f"check.word_tokenizer({specials!r}, {a + ' ' + b!r})"
    return f"(lambda t: check.templated(t, {name}(t, {specials[0]!r}, {specials[1]!r}), {a!r}, {b!r}))({made})"


_TOKENS = [["<s>", "</s>"], ["[CLS]", "[SEP]", "[PAD]"], ["<|bos|>", "<|sep|>"], ["<s>", "</s>", "<pad>"]]
_TEXT_WORDS = ["x", "y", "z", "low", "lower", "a", "b", "the", "end"]


@register("09_production_pair_processor", template_reference, _template_call)
def _template_inputs(rng: random.Random) -> list[Args]:
    def words() -> str:
        return " ".join(rng.choice(_TEXT_WORDS) for _ in range(rng.randint(1, 4)))

    return [(list(rng.choice(_TOKENS)), words(), words()) for _ in range(CASES_PER_TASK)]
