"""The random inputs of each graded task, and the package's answer to them.

What this adds over the self-checks in ``check`` (which test a learner's
function on the cases its chapter fixes, seeded the same for everyone):
inputs drawn from a random generator that ``cases`` seeds for one student,
and for each input the *reference* that computes its expected value with
the package: ``count_pairs`` for count_pairs, ``train_bpe`` for train,
``Tokenizer.encode`` for byte-level encoding, and so on. A generator is
registered under its task's nbgrader ``grade_id`` (two chapters both have
a ``decode``); ``cases`` decides whether it still fits its task.

The inputs stay small (a few words, a few dozen bytes, a byte-level
vocabulary of about 300 entries), so that a failing case can be shown to
the learner whole and re-run by hand.

>>> import random
>>> args = GENERATORS["02_training_train"].inputs(random.Random(1))[0]
>>> GENERATORS["02_training_train"].reference(*args) == __import__("bpe_lab").train_bpe(*args, on_short="ignore")
True
"""

from __future__ import annotations

import random
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bpe_lab.bytelevel.byte_map import bytes_to_unicode
from bpe_lab.bytelevel.tokenizer import Tokenizer
from bpe_lab.bytelevel.train import train_bytelevel
from bpe_lab.core.corpora import python_docs
from bpe_lab.core.encode import decode_words, encode_word, longest_match
from bpe_lab.core.pretokenize import word_frequencies
from bpe_lab.core.train import count_pairs, train_bpe, train_trace
from bpe_lab.core.words import corpus_from_word_freq, merge_symbols
from bpe_lab.grading.check.complexity import recount_deltas
from bpe_lab.grading.check.compression import first_round
from bpe_lab.grading.check.training import find_first_mistake
from bpe_lab.variants.compression import Compressed, compress, decompress
from bpe_lab.variants.sentencepiece import sp_decode, sp_encode, sp_words
from bpe_lab.variants.unigram import viterbi

__all__ = ["CASES_PER_TASK", "Args", "Generator", "GENERATORS", "register"]

#: How many cases a generator makes for each submission.
CASES_PER_TASK = 5

Args = tuple[Any, ...]
Pair = tuple[str, str]
Corpus = dict[tuple[str, ...], int]
EOW = "</w>"


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


# ------------------------------------------------------------ shared inputs


def _words(rng: random.Random, alphabet: str = "abcde") -> dict[str, int]:
    """A small random word -> frequency table (a dict: its order is the seed's)."""
    words = dict.fromkeys(
        "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 7))) for _ in range(rng.randint(2, 8))
    )
    return {w: rng.randint(1, 9) for w in words}


def _merges(rng: random.Random, alphabet: str = "abc") -> list[tuple[str, str]]:
    return train_bpe(_words(rng, alphabet), rng.randint(1, 8), on_short="ignore")


def _word(rng: random.Random, alphabet: str = "abc") -> str:
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8)))


def _corpus(rng: random.Random, merges: int = 2) -> dict[tuple[str, ...], int]:
    """A training corpus part way through: characters plus ``</w>``, a few merges made."""
    corpus = dict(corpus_from_word_freq(_words(rng)))
    for _ in range(rng.randint(0, merges)):
        counts = count_pairs(corpus)
        if counts:
            pair = rng.choice(sorted(counts))
            corpus = {merge_symbols(s, pair): f for s, f in corpus.items()}
    return corpus


def _data(rng: random.Random, alphabet: bytes = b"abcd ") -> bytes:
    return bytes(rng.choice(alphabet) for _ in range(rng.randint(6, 40)))


def _cases(make: Callable[[], Args | None], n: int = CASES_PER_TASK) -> list[Args]:
    """``n`` inputs from ``make`` (which returns None to skip one)."""
    out: list[Args] = []
    for _ in range(20 * n):
        args = make()
        if args is not None:
            out.append(args)
        if len(out) == n:
            break
    return out


# ------------------------------------------------------------ 01 compression


@register("01_compression_most_frequent_pair", first_round)
def _most_frequent_pair(rng: random.Random) -> list[Args]:
    return _cases(lambda: (data,) if first_round(data := _data(rng)) is not None else None)


def _compress(data: bytes) -> tuple[bytes, dict[int, tuple[int, int]]]:
    packed = compress(data)
    return packed.data, dict(packed.table)


@register("01_compression_compress", _compress)
def _compress_inputs(rng: random.Random) -> list[Args]:
    return _cases(lambda: (_data(rng, rng.choice([b"ab", b"abc", b"abcd ", b"the s"])),))


def _decompress(packed: bytes, table: dict[int, tuple[int, int]]) -> bytes:
    return decompress(Compressed(packed, table, (), 0))


@register("01_compression_decompress", _decompress)
def _decompress_inputs(rng: random.Random) -> list[Args]:
    return _cases(lambda: _compress(_data(rng, rng.choice([b"ab", b"abc", b"abcd "]))))


# ------------------------------------------------------------ 02 training


@register("02_training_count_pairs", count_pairs)
def _count_pairs_inputs(rng: random.Random) -> list[Args]:
    return _cases(lambda: (_corpus(rng),))


def _symbols_and_pair(rng: random.Random) -> Args:
    symbols = tuple(rng.choice(["a", "a", "b", "ab", "c"]) for _ in range(rng.randint(2, 10))) + (EOW,)
    pairs = list(zip(symbols, symbols[1:]))
    pair = rng.choice(pairs) if rng.random() < 0.85 else (rng.choice("abc"), rng.choice("abc"))
    return symbols, pair


@register("02_training_merge_pair", merge_symbols)
def _merge_pair_inputs(rng: random.Random) -> list[Args]:
    return _cases(lambda: _symbols_and_pair(rng))


def _train(word_freq: dict[str, int], num_merges: int) -> list[Pair]:
    return train_bpe(word_freq, num_merges, on_short="ignore")


@register("02_training_train", _train)
def _train_inputs(rng: random.Random) -> list[Args]:
    return _cases(lambda: (_words(rng), rng.randint(1, 10)))


def _first_mistake(word_freq: dict[str, int], trace: list[tuple[Pair, int]]) -> Any:
    found = find_first_mistake(word_freq, trace)
    return None if found is None else (found.round, found.expected_pair, found.expected_count)


def _published(rng: random.Random) -> Args | None:
    word_freq = _words(rng)
    trace = [(r.pair, r.count) for r in train_trace(word_freq, rng.randint(2, 6), on_short="ignore").rounds]
    if not trace:
        return None
    if rng.random() < 0.75:  # one round published wrong: its count, or another pair of that round
        i = rng.randrange(len(trace))
        trace[i] = (trace[i][0], trace[i][1] + rng.choice((-1, 1, 2)))
    return word_freq, trace


@register("02_training_first_mistake", _first_mistake)
def _first_mistake_inputs(rng: random.Random) -> list[Args]:
    return _cases(lambda: _published(rng))


# ------------------------------------------------------------ 03 encoding


@register("03_encoding_encode_word", encode_word)
def _encode_word_inputs(rng: random.Random) -> list[Args]:
    return _cases(lambda: (_word(rng), _merges(rng)))


@register("03_encoding_decode", decode_words)
def _decode_inputs(rng: random.Random) -> list[Args]:
    def make() -> Args:
        merges = _merges(rng)
        return ([s for _ in range(rng.randint(1, 4)) for s in encode_word(_word(rng), merges)],)

    return _cases(make)


# ------------------------------------------------------------ 04 complexity


@register("04_complexity_pair_deltas", recount_deltas)
def _pair_deltas_inputs(rng: random.Random) -> list[Args]:
    return _cases(lambda: _symbols_and_pair(rng))


def _merge_and_update(corpus: Corpus, counts: dict[Pair, int], pair: Pair) -> tuple[Corpus, dict[Pair, int]]:
    """Merge ``pair`` everywhere and correct ``counts`` word by word."""
    counts, merged = dict(counts), {}
    for symbols, freq in corpus.items():
        if pair in zip(symbols, symbols[1:]):
            for p, change in recount_deltas(symbols, pair).items():
                counts[p] = counts.get(p, 0) + change * freq
                if counts[p] == 0:
                    del counts[p]
            symbols = merge_symbols(symbols, pair)
        merged[symbols] = freq
    return merged, counts


@register("04_complexity_merge_and_update", _merge_and_update)
def _merge_and_update_inputs(rng: random.Random) -> list[Args]:
    def make() -> Args | None:
        corpus = _corpus(rng)
        counts = count_pairs(corpus)
        return (corpus, counts, rng.choice(sorted(counts))) if counts else None

    return _cases(make)


# ------------------------------------------------------------ 05 byte-level


def _bytes_to_unicode(data: bytes) -> str:
    table = bytes_to_unicode()
    return "".join(table[b] for b in data)


@register("05_bytelevel_bytes_to_unicode", _bytes_to_unicode, lambda f, args: f'"".join({f}()[b] for b in {args[0]!r})')
def _bytes_to_unicode_inputs(rng: random.Random) -> list[Args]:
    return _cases(lambda: (bytes(rng.randrange(256) for _ in range(rng.randint(8, 24))),))


_SPECIALS = ["<|endoftext|>"]
_EXTRAS = ["für", " 🙂", "日本語", "  ", "\n\n", "naïve café", "<|endoftext|>", " don't", "x = f(1)"]


def _texts(rng: random.Random, n: int) -> list[str]:
    docs = python_docs()
    texts = []
    for _ in range(n):
        start = rng.randrange(len(docs) - 120)
        parts = [docs[start : start + rng.randint(15, 80)], rng.choice(_EXTRAS), docs[start + 200 : start + 230]]
        rng.shuffle(parts)
        texts.append("".join(parts))
    return texts


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


def _tiny_tokenizer(rng: random.Random) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    """A byte-level vocabulary of 257 + 12..30 entries trained on random text."""
    text = "".join(_texts(rng, 12))
    return trained_on(text, 257 + rng.randint(12, 30), _SPECIALS)


def _encode_bytelevel(text: str, vocab: dict[int, bytes], merges: list[Any], specials: list[str]) -> list[int]:
    return Tokenizer(vocab, merges, specials).encode(text)


@register("05_bytelevel_encode", _encode_bytelevel)
def _encode_bytelevel_inputs(rng: random.Random) -> list[Args]:
    vocab, merges = _tiny_tokenizer(rng)
    return [(text, vocab, merges, list(_SPECIALS)) for text in _texts(rng, CASES_PER_TASK)]


def _decode_bytelevel(ids: list[int], vocab: dict[int, bytes]) -> str:
    return Tokenizer(vocab, []).decode(ids)


@register("05_bytelevel_decode", _decode_bytelevel)
def _decode_bytelevel_inputs(rng: random.Random) -> list[Args]:
    vocab, merges = _tiny_tokenizer(rng)
    out: list[Args] = []
    for text in _texts(rng, CASES_PER_TASK):
        ids = _encode_bytelevel(text, vocab, merges, _SPECIALS)
        cut = rng.randrange(len(ids) + 1)  # a cut may fall inside a character: U+FFFD
        out.append((ids[:cut] + [rng.randrange(128, 256)] * (len(out) % 2), vocab))
    return out


# ------------------------------------------------------------ 06 variants


@register("06_variants_longest_match", longest_match)
def _longest_match_inputs(rng: random.Random) -> list[Args]:
    return _cases(lambda: (_word(rng), _merges(rng)))


def _viterbi(word: str, logprobs: dict[str, float]) -> list[str]:
    return viterbi(word, logprobs)[0]


def _unigram_case(rng: random.Random) -> Args:
    vocab = ["a", "b", "c", EOW] + [a + b for a, b in _merges(rng)]
    vocab += [t + EOW for t in vocab[4:] if rng.random() < 0.3]
    return _word(rng), {token: -round(rng.uniform(0.5, 6.0), 4) for token in dict.fromkeys(vocab)}


@register("06_variants_viterbi", _viterbi)
def _viterbi_inputs(rng: random.Random) -> list[Args]:
    return _cases(lambda: _unigram_case(rng))


def _sp_symbols(rng: random.Random) -> Args:
    from bpe_lab.core.train import train_bpe

    words = [_word(rng) for _ in range(rng.randint(1, 5))]
    text = "".join(w + rng.choice([" ", " ", "  ", "\n", "\t", " \n"]) for w in words)
    text = (" " if rng.random() < 0.3 else "") + text[: -1 if rng.random() < 0.5 else None]
    merges = train_bpe(word_frequencies(text, split=sp_words), rng.randint(1, 6), end_of_word=None, on_short="ignore")
    return (sp_encode(text, merges),)


@register("06_variants_sp_decode", sp_decode)
def _sp_decode_inputs(rng: random.Random) -> list[Args]:
    return _cases(lambda: _sp_symbols(rng))
