"""Shared by the tokenizer tests: real text, a tiny reference trainer, and
tiktoken twins of bpe_lab tokenizers.

The reference trainer is the byte-level textbook loop (recount every pair
every round), independent of ``bpe_lab.bytelevel.train``, so the parity tests
do not depend on the trainer they might one day be used to check.
"""

from __future__ import annotations

import sysconfig
from collections import Counter
from functools import cache
from itertools import pairwise
from pathlib import Path

import tiktoken

from bpe_lab.bytelevel.tokenizer import Tokenizer
from bpe_lab.core.pretokenize import GPT2_PATTERN, gpt2_pretokenize, split_special

STDLIB = Path(sysconfig.get_paths()["stdlib"])
STDLIB_FILES = ["textwrap.py", "json/decoder.py", "string.py", "this.py", "email/header.py", "LICENSE.txt"]

SAMPLES = {
    "english": "The quick brown fox jumps over the lazy dog. It's 2024, isn't it? They'll say we've won.",
    "chinese": "自然语言处理是人工智能的一个分支。今天天气很好，我们去公园散步吧！",
    "emoji": "I ❤️ BPE 🎉🎉 👩‍👩‍👧 🇯🇵 done ✅",
    "code": 'def f(x):\n\tif x >= 10:  # check\n\t\treturn x ** 2\n\n\n    return {"a": [1, 2.5e-3]}\r\n',
    "whitespace": "a  b   c\n\n\n  d\t\t e \r\n\r\n   \n ",
    "combining": "e\u0301 \u0301alone \u0301\u0302\u0303 n\u0303o",
    "mixed scripts": "Привет мир! Γειά σου Κόσμε! مرحبا بالعالم! नमस्ते दुनिया",
    "contractions": "'s 't 're 've 'm 'll 'd 'S 'LL x'lly ''ll '''",
    "numbers": "3.14159 1,000,000 ０１２ ¼ ½ Ⅻ 2024-11-30",
}

#: Text with special tokens in it; tokenizers under test know these specials.
SPECIAL_SAMPLE = "Hello<|endoftext|> world<|endoftext|><|endoftext|>\n<|endoftext|>end"


def stdlib_text(name: str) -> str:
    return (STDLIB / name).read_text(encoding="utf-8")


@cache
def real_text() -> str:
    """A few standard-library files (code, docstrings, a licence) joined."""
    return "<|endoftext|>".join(stdlib_text(name) for name in STDLIB_FILES)


def _merge(symbols: tuple[bytes, ...], pair: tuple[bytes, bytes]) -> tuple[bytes, ...]:
    out, i = [], 0
    while i < len(symbols):
        if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == pair:
            out.append(pair[0] + pair[1])
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return tuple(out)


def reference_train(
    text: str, num_merges: int, special_tokens: list[str]
) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    """Byte-level BPE the slow, obvious way (GPT-2's convention, docs/api.md)."""
    words: Counter[str] = Counter()
    for piece, is_special in split_special(text, special_tokens):
        if not is_special:
            words.update(gpt2_pretokenize(piece))
    corpus = {tuple(bytes([b]) for b in word.encode("utf-8")): n for word, n in words.items()}
    merges: list[tuple[bytes, bytes]] = []
    for _ in range(num_merges):
        counts: Counter[tuple[bytes, bytes]] = Counter()
        for symbols, n in corpus.items():
            for pair in pairwise(symbols):
                counts[pair] += n
        if not counts:
            break
        best = max(counts, key=lambda pair: (counts[pair], pair))  # ties: the greater pair
        merges.append(best)
        corpus = {_merge(symbols, best): n for symbols, n in corpus.items()}
    vocab = {i: bytes([i]) for i in range(256)}
    for token in special_tokens:
        vocab[len(vocab)] = token.encode("utf-8")
    for left, right in merges:
        vocab[len(vocab)] = left + right
    return vocab, merges


@cache
def small_trained_tokenizer() -> Tokenizer:
    """300 merges learned from a mix of code, English, Chinese and emoji."""
    corpus = stdlib_text("textwrap.py")[:12000] + "<|endoftext|>" + "\n".join(SAMPLES.values()) * 3
    vocab, merges = reference_train(corpus, 300, ["<|endoftext|>"])
    return Tokenizer(vocab, merges, ["<|endoftext|>"])


def tiktoken_twin(tokenizer: Tokenizer) -> tiktoken.Encoding:
    """A tiktoken Encoding built from ``tokenizer``'s own vocabulary.

    tiktoken stores no merge list: each token's rank is its id, and a piece is
    merged by always joining the adjacent pair whose *join* has the lowest
    rank. For a vocabulary learned by BPE (ids in merge order) that gives the
    same result as replaying the merge list, which is what these tests check.
    """
    special_ids = set(tokenizer.special_ids.values())
    ranks = {token: i for i, token in tokenizer.vocab.items() if i not in special_ids}
    return tiktoken.Encoding(
        name=f"bpe_lab_twin_{id(tokenizer)}",
        pat_str=GPT2_PATTERN,
        mergeable_ranks=ranks,
        special_tokens=dict(tokenizer.special_ids),
    )
