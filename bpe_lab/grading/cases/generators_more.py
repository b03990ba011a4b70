"""Generated cases for the tasks of chapters 04-08 whose hidden calls are not ``name(*literals)``.

What this adds over ``generators`` (whose calls are mostly a function on
literals): inputs for tasks whose fixed hidden cases wrap the call, and the
same wrapping for the generated ones, so that they are judged as the fixed
ones are:

- an update made in place comes back with its arguments,
  ``(lambda w, c, i: (merge_indexed(w, c, i, pair), w, c, i))(words, counts, index)``,
  and so does the list of Counters ``merge_counts`` must leave alone;
- a trainer that reads a file gets one written in the kernel by
  ``check.text_file(TEXT)`` (as the fixed cases do), and its vocabulary
  comes back as a size and a sorted set, its merges as an exact list (CS336);
- a Han pre-tokenizer is judged by ``check.han_cuts`` (each Han run whole)
  and by its pieces joining back to the text;
- a tokenizer is built in the call, ``Tokenizer({**{i: bytes([i]) ...}, 256:
  ...}, merges, specials)``, from a vocabulary trained here on a few words;
- long runs of one byte are written ``b'a' * 5000``, so that a token far past
  a read window keeps the call short.

The references are chapter 04's, 07's and 08's checks (``index_words``,
``merge_in_index``, ``digit_pieces``, ``unemitted_tokens``, ``chunk_boundaries``
...) and ``train_bytelevel``; they run here, in the grader, never in a kernel.
What a kernel-side instrument measures (``check.work_growth``, the reads of
``merge_indexed``) stays with the fixed cases: a value cannot show it.

>>> call = GENERATORS["04_complexity_merge_indexed"].source
>>> call("merge_indexed", ([(("a", "b"), 2)], {("a", "b"): 2}, {("a", "b"): {0}}, ("a", "b")))[:58]
"(lambda w, c, i: (merge_indexed(w, c, i, ('a', 'b')), w, c"
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import regex

from bpe_lab.core.corpora import python_docs
from bpe_lab.core.train_fast import learn_merges
from bpe_lab.grading.cases.generators import (
    CASES_PER_TASK,
    GENERATORS,
    Args,
    register,
    tokenizer_of,
    tokenizer_source,
    trained_on,
)
from bpe_lab.grading.check.complexity import index_words, merge_in_index
from bpe_lab.grading.check.scale import chunk_boundaries, chunk_counts, merged_counts
from bpe_lab.grading.check.variants import han_cuts
from bpe_lab.grading.check.wild import digit_pieces, unemitted_tokens, zh_pieces

__all__ = ["GENERATORS", "REGISTERED"]

Words = list[tuple[tuple[str, ...], int]]
_BEFORE = set(GENERATORS)
EOT = "<|endoftext|>"


def _draw(make: Callable[[], Args | None]) -> list[Args]:
    """``CASES_PER_TASK`` inputs from ``make`` (which returns None to skip one)."""
    out: list[Args] = []
    for _ in range(20 * CASES_PER_TASK):
        args = make()
        if args is not None:
            out.append(args)
        if len(out) == CASES_PER_TASK:
            break
    return out


def _mix(rng: random.Random, parts: list[str], seps: list[str], most: int = 6) -> str:
    """Up to ``most`` random parts, each followed by a random separator."""
    return "".join(rng.choice(parts) + rng.choice(seps) for _ in range(rng.randint(1, most)))


# ------------------------------------------------------------ 04 complexity


def _words(rng: random.Random) -> Words:
    """2-5 distinct words of symbols (runs of ``a`` repeat a pair), some ending in ``</w>``."""
    words: dict[tuple[str, ...], int] = {}
    for _ in range(rng.randint(2, 5)):
        symbols = tuple(rng.choice(["a", "a", "b", "c", "ab"]) for _ in range(rng.randint(1, 6)))
        words[symbols + (("</w>",) if rng.random() < 0.7 else ())] = rng.randint(1, 9)
    return list(words.items())


@register("04_complexity_build_index", index_words)
def _build_index_inputs(rng: random.Random) -> list[Args]:
    return _draw(lambda: (_words(rng),))


def _merge_indexed(words: Words, counts: dict[Any, int], index: dict[Any, set[int]], pair: Any) -> Args:
    """The changed pairs, then words, counts and index as the merge leaves them."""
    words, counts, index = list(words), dict(counts), {p: set(ids) for p, ids in index.items()}
    return merge_in_index(words, counts, index, pair), words, counts, index


def _merge_indexed_call(name: str, args: Args) -> str:
    words, counts, index, pair = args
    return f"(lambda w, c, i: ({name}(w, c, i, {pair!r}), w, c, i))({words!r}, {counts!r}, {index!r})"


@register("04_complexity_merge_indexed", _merge_indexed, _merge_indexed_call)
def _merge_indexed_inputs(rng: random.Random) -> list[Args]:
    def make() -> Args | None:
        words = _words(rng)
        counts, index = index_words(words)
        return (words, counts, index, rng.choice(sorted(counts))) if counts else None

    return _draw(make)


def _train_indexed(words: Words, num_merges: int) -> list[Any]:
    return learn_merges(dict(words), num_merges, tie_break="lexicographic")


@register("04_complexity_train_indexed", _train_indexed)
def _train_indexed_inputs(rng: random.Random) -> list[Args]:
    return _draw(lambda: (_words(rng), rng.randint(1, 12)))


# ------------------------------------------------------------ 05 byte-level training

_PIECES = ["low", "lower", "lowest", "ab", "abab", "the", "é", "今天", "天气", "aa", "x=1", "don't", "🙂"]
_SEPS = [" ", " ", "  ", "\n", ", ", "", "\n\n    "]
_SPECIAL_SETS: list[list[str]] = [[], [EOT], [EOT, "<|pad|>"]]


def _train_bytelevel(text: str, vocab_size: int, specials: list[str]) -> Args:
    """What the call sends back: the vocabulary's size and its sorted set of tokens, and the merges."""
    vocab, merges = trained_on(text, vocab_size, specials)
    return len(vocab), sorted(set(vocab.values())), merges


def _train_bytelevel_call(name: str, args: Args) -> str:
    text, size, specials = args
    return (
        f"(lambda v, m: (len(v), sorted(set(v.values())), m))(*{name}(check.text_file({text!r}), {size}, {specials!r}))"
    )


@register("05_bytelevel_train", _train_bytelevel, _train_bytelevel_call, name="train_bytelevel")
def _train_bytelevel_inputs(rng: random.Random) -> list[Args]:
    def make() -> Args | None:
        specials = rng.choice(_SPECIAL_SETS)
        text = _mix(rng, _PIECES + specials * 2, _SEPS, 10)
        size = 256 + len(specials) + rng.randint(2, 14)
        return (text, size, specials) if _train_bytelevel(text, size, specials)[0] == size else None

    return _draw(make)


# ------------------------------------------------------------ 06 and 07 pre-tokenizers

#: Han runs, several outside [\u4e00-\u9fa5]: 䶮 㐀 (Extension A), 豈 (compatibility), 𠮷 (plane 2),
#: 龦 (after U+9FA5), 〇 (a number), 々 (an iteration mark)
_HAN = ["今天", "天气很好", "我们", "刘䶮", "㐀㐁", "豈更", "𠮷野家", "龥龦", "一九八〇年", "人々", "好"]
_NOT_HAN = ["and", "ok", "abc", "2024", "GPT-2", "カタカナ", "🙂", "x", "的"]
_ZH_SEPS = ["", "", " ", "  ", "，", "。", ", ", "\n\n", "、", "\t"]


def _han_text(rng: random.Random) -> str:
    return _mix(rng, _HAN * 2 + _NOT_HAN, _ZH_SEPS, 8)


def _whole_runs(text: str) -> list[str]:
    return [str(piece) for piece in regex.findall(r"\p{Han}+|\P{Han}+", text)]


def _han_pretokenize(text: str) -> Args:
    """Each Han run whole, and the pieces join back to the text."""
    return han_cuts(_whole_runs, text), text


def _han_call(name: str, args: Args) -> str:
    return f"(lambda t: (check.han_cuts({name}, t), ''.join({name}(t))))({args[0]!r})"


@register("06_variants_han_pretokenize", _han_pretokenize, _han_call)
def _han_pretokenize_inputs(rng: random.Random) -> list[Args]:
    return _draw(lambda: (_han_text(rng),))


_NUMBERS = ["²", "½", "Ⅻ", "٣٤٥٦٧", "１２３４", "3.14159", "1,000,000"]
_WORDS = ["pay", "The", "x", "don't", "I'LL", "it's", "v", "(", "=", "$", "abc"]


def _digit_text(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(2, 7)):
        roll = rng.random()
        if roll < 0.5:
            parts.append("".join(rng.choice("0123456789") for _ in range(rng.randint(1, 11))))
        else:
            parts.append(rng.choice(_NUMBERS if roll < 0.6 else _WORDS))
        parts.append(rng.choice([" ", " ", "  ", "", ",", ".", "\n", " + "]))
    return "".join(parts)


@register("07_wild_pretokenize_digits", digit_pieces)
def _pretokenize_digits_inputs(rng: random.Random) -> list[Args]:
    return _draw(lambda: (_digit_text(rng),))


@register("07_wild_pretokenize_zh", zh_pieces)
def _pretokenize_zh_inputs(rng: random.Random) -> list[Args]:
    return _draw(lambda: (_han_text(rng),))


# ------------------------------------------------------------ 07 tokens never emitted

_A_WORDS = ["a", "aa", "aaa", "aaaa", "ab", "abab", "ba", "low", "lower", "lowest"]


def _never_emitted(tail: dict[int, bytes], merges: list[tuple[bytes, bytes]], specials: list[str], text: str) -> Any:
    return unemitted_tokens(tokenizer_of(tail, merges, specials), text)


def _never_emitted_call(name: str, args: Args) -> str:
    tail, merges, specials, text = args
    return f"{name}({tokenizer_source(tail, merges, specials)}, {text!r})"


@register("07_wild_never_emitted", _never_emitted, _never_emitted_call)
def _never_emitted_inputs(rng: random.Random) -> list[Args]:
    def make() -> Args:
        specials = rng.choice(_SPECIAL_SETS[:2])
        train = " ".join(rng.choice(_A_WORDS + specials) for _ in range(rng.randint(4, 10)))
        vocab, merges = trained_on(train, 256 + len(specials) + rng.randint(2, 8), specials)
        text = train if rng.random() < 0.4 else " ".join(rng.choice(_A_WORDS) for _ in range(rng.randint(1, 6)))
        return {i: t for i, t in vocab.items() if i >= 256}, merges, specials, text

    return _draw(make)


# ------------------------------------------------------------ 08 scale

_TOKENS = [b"<|endoftext|>", b"<|endoftext|>", b"<|b|>", b"<|>"]


def _bytes_source(data: bytes) -> str:
    """``data`` as a Python expression, a run of 16+ equal bytes written ``b'a' * n``."""
    parts, literal = [], b""
    for run in regex.finditer(rb"(?s)(.)\1*", data):
        chunk = run.group()
        if len(chunk) < 16:
            literal += chunk
            continue
        if literal:
            parts.append(repr(literal))
        parts.append(f"{bytes(chunk[:1])!r} * {len(chunk)}")
        literal = b""
    if literal or not parts:
        parts.append(repr(literal))
    return " + ".join(parts)


def _boundaries_call(name: str, args: Args) -> str:
    data, n, token = args
    return f"{name}({_bytes_source(data)}, {n!r}, {token!r})"


def _chunked_data(rng: random.Random, token: bytes, long: bool) -> bytes:
    """Bits of the docs and of Chinese between tokens (the given one, another,
    none); ``long``: with a run of 9000+ of one byte before a token, so that
    with 2 chunks the token lies past a read window of 4096 bytes after the guess."""
    docs = python_docs()
    parts = []
    for _ in range(rng.randint(1, 6)):
        start = rng.randrange(len(docs) - 60)
        text = docs[start : start + rng.randint(0, 50)] if rng.random() < 0.7 else rng.choice(["今天", "天气", "很好"])
        parts += [text.encode("utf-8"), rng.choice([token, token, b"<|a|>", b""])]
    if long:
        parts.insert(rng.randint(0, 2), bytes([rng.choice(b"ab")]) * rng.randint(9000, 13000) + token)
    return b"".join(parts)


@register("08_scale_find_chunk_boundaries", chunk_boundaries, _boundaries_call)
def _boundaries_inputs(rng: random.Random) -> list[Args]:
    def make() -> Args:
        token, long = rng.choice(_TOKENS), rng.random() < 0.3
        return _chunked_data(rng, token, long), 2 if long else rng.randint(1, 10), token

    return _draw(make)


_COUNT_WORDS = ["the", " end", "end", "start", "The", "low", " lower", "don't", "a", "b", "  indented", "naïve", "今天"]


def _count_chunk(text: str, special_tokens: list[str]) -> dict[str, int]:
    return dict(chunk_counts(text, special_tokens))


@register("08_scale_count_chunk", _count_chunk)
def _count_chunk_inputs(rng: random.Random) -> list[Args]:
    def make() -> Args:
        specials = rng.choice(_SPECIAL_SETS[1:] * 2 + _SPECIAL_SETS[:1])
        text = _mix(rng, _COUNT_WORDS + specials * 4, [" ", "", "", "\n\n", "  "], 9)
        return text, list(specials)

    return _draw(make)


_PRETOKENS = [" the", "low", " a", "x", "\n", " lower", "y"]


def _merge_counts(counts: list[dict[str, int]], given_back: bool = False) -> Any:
    """The total; ``given_back``: and the Counters as they were given (the
    call form that catches a first Counter made the total)."""
    from collections import Counter

    total = dict(merged_counts([Counter(c) for c in counts]))
    return (total, [dict(c) for c in counts]) if given_back else total


def _merge_counts_call(name: str, args: Args) -> str:
    counters = f"[{', '.join(f'Counter({c!r})' for c in args[0])}]"
    return f"(lambda cs: ({name}(cs), cs))({counters})" if args[1] else f"{name}({counters})"


@register("08_scale_merge_counts", _merge_counts, _merge_counts_call, name="merge_counts")
def _merge_counts_inputs(rng: random.Random) -> list[Args]:
    def counter() -> dict[str, int]:
        return {t: rng.randint(1, 9) for t in rng.sample(_PRETOKENS, rng.randint(0, 4))}

    return _draw(lambda: ([counter() for _ in range(rng.randint(1, 5))], True))


#: The grade_ids this module adds to ``GENERATORS``.
REGISTERED = tuple(g for g in GENERATORS if g not in _BEFORE)

import bpe_lab.grading.cases.generators_production  # noqa: E402, F401 - chapter 09's, not in REGISTERED
