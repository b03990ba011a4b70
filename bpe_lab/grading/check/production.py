"""Chapter 09's checks: a ``tokenizers`` pipeline with a tokenizer's ids, a pair template.

What this adds to ``runner``: the references of exercise 09, and hints that
recognise the usual mistakes of assembling a Hugging Face pipeline:

- ``build_pipeline(tokenizer)`` must return a ``tokenizers.Tokenizer`` whose
  ``encode(text).ids`` are ``tokenizer.encode(text)`` (bpe_lab's): the
  tokens written in GPT-2's printable characters, ``ByteLevel`` with
  ``add_prefix_space=False``, the special tokens added with their ids. The
  reference is bpe_lab's own ``encode``; a wrong first id says which part
  is off (a prefix space, a byte's id, a special token cut into pieces).
  ``tokenizers.implementations.ByteLevelBPETokenizer`` assembles the same
  blocks, so it is one of the task's answers (``answers.ANSWERS``): the
  check's guard and the grader's first run trap it in the kernel (the
  grader's second run, whose ``bpe_lab`` has the answers without a body,
  cannot take away another library's class: there it is the kernel's word);
- ``pair_processor(tokenizer, bos, sep)`` must return a
  ``TemplateProcessing`` for ``bos $A`` and ``bos $A sep $B:1 sep:1``.
  ``word_tokenizer`` makes a small ``WordLevel`` tokenizer to try it on,
  and ``templated`` what it encodes; ``template_reference`` computes the
  same in plain Python (in the grader, which needs no ``tokenizers`` for it).

Why each check goes through a results helper: a pipeline and a processor
are not values a grading kernel can send back, so ``pipeline_results``
builds the learner's pipeline and returns only the ids it gives, and
``pair_results`` the tokens, ids and type ids the learner's processor
gives (``templated``). The check calls them through ``runner.results`` and
judges what they return: at home on the learner's function, in the grader
on what the same helper sent back from a grading kernel (``visible``), so
a failing visible case costs the task there too, decided in the grader.

``tokenizers`` is imported inside the functions, never when this module
loads: what a grading kernel may import is computed from the package's
module-level imports (``grading.run.distributions``), and exercise 09's kernel
gets ``tokenizers`` from its solution's metadata instead.

>>> template_reference(["<s>", "</s>"], "x y", "z")
(['<s>', 'x', 'y'], [3, 0, 1], ['<s>', 'x', 'y', '</s>', 'z', '</s>'], [3, 0, 1, 4, 2, 4], [0, 0, 0, 0, 1, 1])
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from bpe_lab.grading.check.runner import call, fail, passed, results, rng, short

if TYPE_CHECKING:
    from bpe_lab.bytelevel.tokenizer import Tokenizer

__all__ = [
    "PIPELINE_TEXTS",
    "word_tokenizer",
    "templated",
    "template_reference",
    "pipeline_results",
    "check_build_pipeline",
    "pair_results",
    "check_pair_processor",
]

EOT = "<|endoftext|>"

#: Texts where the usual mistakes show: a first word (a prefix space would
#: change it), runs of spaces and new lines, non-ASCII, special tokens.
PIPELINE_TEXTS = [
    "low lower lowest",
    "the end<|endoftext|>The start",
    "  indented\n\n    code()",
    "naïve café 今天 🙂",
    "<|endoftext|><|endoftext|>",
    "",
    "x=1; y = 2.5e-3\r\n",
    "<|pad|> and <|endoftext|>",
]


def _first_difference(got: list[int], expected: list[int], tokenizer: Tokenizer) -> str:
    """What the first wrong id suggests, in words."""
    at = next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b), min(len(got), len(expected)))
    specials = set(tokenizer.special_ids.values())
    if expected[at : at + 1] and expected[at] in specials:
        renumbered = _renumbered(got, expected, tokenizer)
        if renumbered:
            return renumbered
        return "a special token is cut into ordinary tokens: add the special tokens to the pipeline"
    if got[:1] and expected[:1] and at == 0 and len(got) > len(expected):
        return "more ids than bpe_lab from the first one on: is a space added before the text (add_prefix_space)?"
    if at < len(got) and got[at] not in tokenizer.vocab:
        return f"id {got[at]} is not in the tokenizer's vocabulary: give each token bpe_lab's id"
    if at < len(expected) and len(tokenizer.vocab[expected[at]]) == 1 and at < len(got):
        return "a single byte gets another id: write the vocabulary's keys in GPT-2's printable characters"
    return "the merges are replayed differently: are they in bpe_lab's order, in printable characters?"


def _renumbered(got: list[int], expected: list[int], tokenizer: Tokenizer) -> str | None:
    """What to say when the only wrong ids are special tokens' and each is
    one id (the token was added, under another id); None otherwise."""
    if len(got) != len(expected):
        return None
    names = {i: token for token, i in tokenizer.special_ids.items()}
    wrong = {(e, g) for e, g in zip(expected, got) if e != g}
    if not all(e in names for e, _ in wrong):
        return None
    e, g = min(wrong)
    return (
        f"{names[e]!r} is one token but got the new id {g}, not bpe_lab's {e}: add_special_tokens keeps the id of a "
        "token the model's vocab holds and numbers one it lacks anew. Put each special token in the vocab you give "
        f"models.BPE with bpe_lab's id ({names[e]!r}: {e}) before add_special_tokens"
    )


def _pipeline_tokenizers(generator: random.Random) -> list[Tokenizer]:
    """Small tokenizers trained on the course's documentation, with and without special tokens."""
    import tempfile
    from pathlib import Path

    from bpe_lab.bytelevel.tokenizer import Tokenizer
    from bpe_lab.bytelevel.train import train_bytelevel
    from bpe_lab.core.corpora import python_docs_topics

    topics = list(python_docs_topics().values())
    made = []
    for specials, size in (([EOT], 400), ([EOT, "<|pad|>"], 330), ([], 300)):
        start = generator.randrange(len(topics) - 3)
        with tempfile.TemporaryDirectory(prefix="bpe-lab-check-") as folder:
            path = Path(folder) / "docs.txt"
            path.write_text(EOT.join(topics[start : start + 3]), encoding="utf-8", newline="")
            vocab, merges = train_bytelevel(path, size, specials, workers=1, progress=False, on_short="ignore")
        made.append(Tokenizer(vocab, merges, specials))
    return made


def pipeline_results(fn: Callable[[Tokenizer], Any], tokenizer: Tokenizer, texts: list[str]) -> list[list[int]]:
    """The ids of each of ``texts`` by the pipeline ``fn(tokenizer)`` (plain
    data: what a grading kernel sends back); TypeError naming what ``fn``
    returned when it is not a pipeline, or when its ``ids`` are not a list
    of ints."""
    built = fn(tokenizer)
    if not callable(getattr(built, "encode", None)):
        raise TypeError(f"expected a tokenizers.Tokenizer, got {short(built, 80)}")
    found = []
    for text in texts:
        ids = getattr(built.encode(text), "ids", None)
        if not isinstance(ids, list) or not all(type(i) is int for i in ids):
            raise TypeError(f".encode({text!r}).ids is {short(ids, 60)}, not a list of ints")
        found.append(list(ids))
    return found


def check_build_pipeline(fn: Callable[[Tokenizer], Any]) -> None:
    """``fn(tokenizer) -> tokenizers.Tokenizer`` with ``tokenizer``'s ids on
    texts where the usual mistakes show, for three small trained tokenizers
    (``pipeline_results``)."""
    cases = 0
    for tokenizer in _pipeline_tokenizers(rng()):
        texts = [t for t in PIPELINE_TEXTS if "<|pad|>" not in t or "<|pad|>" in tokenizer.special_ids]
        pipeline = results(pipeline_results, fn, f"build_pipeline({tokenizer!r})")
        found = call(pipeline, "build_pipeline", tokenizer, texts)
        if not isinstance(found, list) or len(found) != len(texts):  # one list of ids per text, none left out
            said = f"{len(texts)} texts, but not one list of ids per text came back from pipeline_results"
            fail(f"build_pipeline({tokenizer!r})", f"{said} (was check changed?)")
        for text, got in zip(texts, found):
            expected = tokenizer.encode(text)
            if got != expected:
                why = _first_difference(got, expected, tokenizer)
                fail(f"build_pipeline({tokenizer!r}).encode({text!r}).ids", f"expected {expected}, got {got}: {why}")
            cases += 1
    passed("build_pipeline", cases)


# ------------------------------------------------ task 2: the pair template


def _word_ids(specials: list[str], words: list[str]) -> dict[str, int]:
    """The small vocabulary: the words, sorted, then the special tokens (so
    that their ids depend on the words: a processor that assumes them fails)."""
    vocab = {w: i for i, w in enumerate(sorted(set(words) - set(specials)))}
    for token in specials:
        vocab[token] = len(vocab)
    return vocab


def word_tokenizer(specials: list[str], text: str) -> Any:
    """A ``tokenizers`` ``WordLevel`` tokenizer of ``specials`` and the words
    of ``text`` (cut at white space), the special tokens added as such."""
    from tokenizers import Tokenizer as HFTokenizer
    from tokenizers import models, pre_tokenizers

    hf = HFTokenizer(models.WordLevel(_word_ids(specials, text.split()), unk_token=specials[0]))
    hf.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    hf.add_special_tokens(list(specials))
    return hf


def templated(hf: Any, processor: Any, a: str, b: str) -> tuple[list[str], list[int], list[str], list[int], list[int]]:
    """``hf`` with ``processor`` as its post-processor: the tokens and ids of
    ``a`` alone, and the tokens, ids and type ids of the pair ``(a, b)``."""
    hf.post_processor = processor
    one, two = hf.encode(a), hf.encode(a, b)
    return list(one.tokens), list(one.ids), list(two.tokens), list(two.ids), list(two.type_ids)


def template_reference(specials: list[str], a: str, b: str) -> tuple[Any, ...]:
    """What ``templated`` gives for a right ``pair_processor`` with ``bos,
    sep = specials[:2]``, on ``word_tokenizer(specials, a + " " + b)``."""
    bos, sep = specials[0], specials[1]
    ids = _word_ids(specials, (a + " " + b).split())
    single = [bos, *a.split()]
    pair = [bos, *a.split(), sep, *b.split(), sep]
    types = [0] * (len(a.split()) + 2) + [1] * (len(b.split()) + 1)
    return single, [ids[t] for t in single], pair, [ids[t] for t in pair], types


#: (special tokens, first sequence, second sequence): where the classic mistakes show
_TEMPLATE_CASES: list[tuple[list[str], str, str]] = [
    (["<s>", "</s>"], "x y", "z"),
    (["[CLS]", "[SEP]", "[PAD]"], "a b c", "d e"),  # ids of the special tokens are not 0 and 1 in every tokenizer
    (["<|bos|>", "<|sep|>", "<|pad|>"], "one", "two three four"),
    (["<s>", "</s>"], "same same", "same"),
]


def _hint(got: Any, expected: tuple[Any, ...]) -> str:
    if not isinstance(got, tuple) or len(got) != 5:
        return ""
    if got[0] != expected[0]:
        return "the single template is wrong: it is bos $A, without sep"
    if got[2] != expected[2]:
        return "the pair template is wrong: bos $A sep $B:1 sep:1"
    if got[4] != expected[4]:
        return "the type ids are wrong: the second sequence and its sep take type id 1 ($B:1 sep:1)"
    return "the special tokens' ids are wrong: look them up in the tokenizer (token_to_id)"


def pair_results(fn: Callable[[Any, str, str], Any], specials: list[str], a: str, b: str) -> tuple[Any, ...]:
    """``templated`` of the processor ``fn(tokenizer, bos, sep)`` (``bos, sep
    = specials[:2]``) on ``word_tokenizer(specials, a + " " + b)``: plain
    data, what a grading kernel sends back."""
    if len(specials) < 2:
        raise ValueError(f"pair_results needs two special tokens (bos, sep), got {specials!r}")
    hf = word_tokenizer(specials, a + " " + b)
    return templated(hf, fn(hf, specials[0], specials[1]), a, b)


def check_pair_processor(fn: Callable[[Any, str, str], Any]) -> None:
    """``fn(tokenizer, bos, sep) -> TemplateProcessing`` for ``bos $A`` and
    ``bos $A sep $B:1 sep:1``, on small WordLevel tokenizers (``pair_results``)."""
    for specials, a, b in _TEMPLATE_CASES:
        case = f"pair_processor(tokenizer of {specials}, {specials[0]!r}, {specials[1]!r}) on {a!r}, {b!r}"
        got = call(results(pair_results, fn, case), "pair_processor", specials, a, b)
        expected = template_reference(specials, a, b)
        if got != expected:
            fail(case, f"expected {expected}, got {got}: {_hint(got, expected)}")
    passed("pair_processor", len(_TEMPLATE_CASES))
