"""Chapter 05's checks: GPT-2's byte map, byte-level training, encoding and decoding.

What this adds to ``runner``: texts where byte-level mistakes show (special
tokens, runs of spaces, characters of several bytes, tokens that cut a
character in half, ties), ``bpe_lab.bytelevel.tokenizer.Tokenizer`` and
``bpe_lab.train_bytelevel`` as the references, and hints that recompute the
wrong answer (no special tokens, no pre-tokenizing, another tie rule) to
recognise it. Training is compared the CS336 way: the merges as an exact
list, the vocabulary as a set of byte strings.

The ``bpe_lab.bytelevel`` modules are imported inside the checks, so that
the checks of chapters 01-04 keep working whatever happens to them.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from bpe_lab.grading.check.runner import compare, rng, run_cases, short

if TYPE_CHECKING:
    from pathlib import Path

    from bpe_lab.bytelevel.tokenizer import Tokenizer

__all__ = [
    "check_bytes_to_unicode",
    "check_train_bytelevel",
    "check_encode_bytelevel",
    "check_decode_bytelevel",
    "bytelevel_texts",
    "text_file",
]

Merges = list[tuple[bytes, bytes]]


def check_bytes_to_unicode(fn: Callable[[], dict[int, str]]) -> None:
    """``fn() -> {byte: character}``: GPT-2's printable stand-in for each byte."""
    run_cases("bytes_to_unicode", fn, [()], _byte_map_verdict, shown=lambda: "", count=256)


def _byte_map_verdict(got: Any) -> str | None:
    from bpe_lab.bytelevel.byte_map import bytes_to_unicode

    expected = bytes_to_unicode()
    if not isinstance(got, Mapping) or sorted(got) != list(range(256)):
        return "return a dict with one entry for every byte value 0..255"
    if len(set(got.values())) != 256:
        return "two bytes map to the same character: the map must be one-to-one, or decoding is ambiguous"
    for byte in range(256):
        if got[byte] != expected[byte]:
            return f"byte {byte}: expected {expected[byte]!r}, got {short(got[byte])}{_byte_hint(byte, expected)}"
    return None


def _byte_hint(byte: int, expected: dict[int, str]) -> str:
    if expected[byte] == chr(byte):
        return ": a printable byte ('!'..'~', '¡'..'¬', '®'..'ÿ') stands for itself, chr(byte)"
    return ": the other bytes get chr(256), chr(257), ... in byte order (so the space, byte 32, becomes 'Ġ')"


_BYTELEVEL_TEXTS = [
    "Hello world!",
    "the  end<|endoftext|>The start",
    "naïve café, 今天天气很好",
    "<|endoftext|><|endoftext|>",
    "",
    "don't stop\n\n  indented",
    "a<|endoftext|>b",
]


def bytelevel_texts(generator: random.Random) -> list[str]:
    """Fixed texts where the mistakes show, then stretches of the Python docs."""
    from bpe_lab.core.corpora import python_docs

    docs = python_docs()
    starts = [generator.randrange(len(docs) - 200) for _ in range(8)]
    return _BYTELEVEL_TEXTS + [docs[s : s + generator.randint(20, 200)] for s in starts]


def check_encode_bytelevel(
    fn: Callable[..., list[int]], vocab: dict[int, bytes], merges: Merges, special_tokens: list[str]
) -> None:
    """``fn(text, vocab, merges, special_tokens) -> ids`` equal to
    ``bpe_lab.Tokenizer(vocab, merges, special_tokens).encode(text)``."""
    from bpe_lab.bytelevel.tokenizer import Tokenizer

    reference = Tokenizer(vocab, merges, special_tokens)
    cases = [(text, vocab, merges, special_tokens) for text in bytelevel_texts(rng())]
    verdict = compare(
        lambda text, *_: reference.encode(text),
        lambda expected, got, text, *_: _bytelevel_hint(reference, text, expected, got),
        expected_shown=lambda expected: short(expected, 100),
        got_limit=100,
    )
    run_cases(
        "encode", fn, cases, verdict, shown=lambda text, *_: f"{short(text, 60)}, ...", exercise="encode_bytelevel"
    )


def _bytelevel_hint(reference: Tokenizer, text: str, expected: list[int], got: object) -> str:
    # type(...) is int, not isinstance: True would pass as an int here and then make decode raise
    if not isinstance(got, list) or not all(type(i) is int for i in got):
        return ": return a list of int ids"
    special_ids = set(reference.special_ids.values())
    if special_ids & set(expected) and not special_ids & set(got):
        return ": find special tokens first (split_special) and give each its own id; they are never split into bytes"
    if got == list(text.encode("utf-8")):
        return ": no merge was applied: replay the merges by rank inside each pre-token"
    if got == _without_pretokenizing(reference, text):
        return ": cut each stretch with gpt2_pretokenize first: merges never cross pre-token boundaries"
    if reference.decode(got) != text:
        return ": your ids do not even decode back to the text; look up each final token's bytes in the vocabulary"
    return (
        ": same text, different tokens: cut with gpt2_pretokenize, then join the lowest-rank pair first, "
        "inside each pre-token"
    )


def _without_pretokenizing(reference: Tokenizer, text: str) -> list[int]:
    """The ids a learner gets who merges across pre-tokens: rank replay over
    each whole stretch between special tokens."""
    from bpe_lab.bytelevel.encoders import replay_merges
    from bpe_lab.core.pretokenize import split_special

    id_of = {token: i for i, token in reference.vocab.items()}
    ids: list[int] = []
    for piece, special in split_special(text, reference.special_tokens):
        if special:
            ids.append(reference.special_ids[piece])
        else:
            ids.extend(id_of[t] for t in replay_merges(piece.encode("utf-8"), reference.pair_ranks))
    return ids


def check_decode_bytelevel(
    fn: Callable[[list[int], dict[int, bytes]], str],
    vocab: dict[int, bytes],
    merges: Merges,
    special_tokens: list[str],
) -> None:
    """``fn(ids, vocab) -> text`` equal to ``bpe_lab.Tokenizer.decode``,
    including ids that cut a character in half (they decode to U+FFFD)."""
    from bpe_lab.bytelevel.tokenizer import Tokenizer

    reference = Tokenizer(vocab, merges, special_tokens)
    id_lists = [reference.encode(t) for t in bytelevel_texts(rng())] + [
        [195],
        [104, 195, 169, 33],
        list("今".encode())[:2],
    ]
    verdict = compare(lambda ids, _: reference.decode(ids), _decode_hint, expected_shown=repr)
    cases = [(ids, vocab) for ids in id_lists]
    run_cases(
        "decode", fn, cases, verdict, shown=lambda ids, _: f"{short(ids, 80)}, vocab", exercise="decode_bytelevel"
    )


def _decode_hint(expected: str, got: object, *_: object) -> str:
    if isinstance(got, str) and "\ufffd" in got and got.replace("\ufffd", "") != expected.replace("\ufffd", ""):
        return ": join the bytes of all the ids first, then decode once: one character can span several tokens"
    return ": decode the joined bytes once, as UTF-8 with errors='replace'"


# ------------------------------------------------------------ training


#: (name, text, vocab_size, special tokens): the shipped corpus, then the
#: texts where each mistake shows (a tie, a special token that a trainer
#: which does not cut it out would merge into, runs of spaces, no merge)
_TRAIN_TEXTS: list[tuple[str, str | None, int, list[str]]] = [
    ("five_languages.txt", None, 300, ["<|endoftext|>"]),
    ("ties.txt", "abab cdcd", 258, []),
    (
        "specials.txt",
        "<|endoftext|>low low<|endoftext|>lower<|pad|> lowest<|endoftext|>",
        266,
        ["<|endoftext|>", "<|pad|>"],
    ),
    ("spaces.txt", "if x:\n    return  x\n\n\n    pass   \n", 262, []),
    ("no_merges.txt", "hello world", 257, ["<|endoftext|>"]),
    ("chinese.txt", "我们在屋顶上看星星。我们昨晚和朋友一起吃了晚饭。", 270, []),
]


def check_train_bytelevel(fn: Callable[..., tuple[dict[int, bytes], Merges]]) -> None:
    """``fn(path, vocab_size, special_tokens) -> (vocab, merges)`` with the
    merges of ``bpe_lab.train_bytelevel`` (an exact list) and its vocabulary
    (compared as a set of byte strings, as CS336 does)."""
    import tempfile
    from pathlib import Path

    from bpe_lab.core.corpora import DATA_DIR

    with tempfile.TemporaryDirectory() as folder:
        cases = []
        for name, text, size, specials in _TRAIN_TEXTS:
            path = DATA_DIR / name if text is None else Path(folder) / name
            if text is not None:
                path.write_text(text, encoding="utf-8")
            cases.append((path, size, specials))
        run_cases(
            "train_bytelevel",
            fn,
            cases,
            _train_verdict,
            shown=lambda path, size, specials: f"{Path(path).name!r}, {size}, {specials}",
        )


def _train_verdict(got: Any, path: Any, size: int, specials: list[str]) -> str | None:
    from bpe_lab.bytelevel.train import train_bytelevel

    vocab, merges = train_bytelevel(path, size, specials, on_short="ignore")
    if not (isinstance(got, tuple) and len(got) == 2 and isinstance(got[0], Mapping) and isinstance(got[1], list)):
        return f"return a tuple (vocab, merges): a dict id -> bytes and a list of pairs of bytes, got {short(got, 80)}"
    got_vocab, got_merges = dict(got[0]), [tuple(m) if isinstance(m, (tuple, list)) else m for m in got[1]]
    if not all(isinstance(m, tuple) and len(m) == 2 and all(isinstance(b, bytes) for b in m) for m in got_merges):
        return f"each merge is a pair of bytes objects, such as (b' ', b't'), got {short(got_merges[:3], 80)}"
    if got_merges != merges:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        return _merges_message(merges, got_merges, text, specials)
    if set(got_vocab.values()) != set(vocab.values()) or len(got_vocab) != len(vocab):
        return _vocab_message(vocab, got_vocab, specials)
    return None


def _merges_message(expected: Merges, got: Merges, text: str, specials: list[str]) -> str:
    rounds = next(
        (r for r, (a, b) in enumerate(zip(got, expected), start=1) if a != b), min(len(got), len(expected)) + 1
    )
    head = (
        f"merge {rounds}: expected {short(expected[rounds - 1], 60)}, got {short(got[rounds - 1], 60)}"
        if rounds <= min(len(got), len(expected))
        else f"expected {len(expected)} merges, got {len(got)}"
    )
    n = len(expected)
    if any(s.encode() in b"".join(m) for s in specials for m in got) or got == _variant(text, [], n):
        return head + (
            ": cut the special tokens out before counting (split_special): no merge may cross or include one"
        )
    if got == _variant(text, specials, n, pretokenize=False):
        return head + ": cut each piece with gpt2_pretokenize and count the pre-tokens: merges never cross them"
    if got in (_variant(text, specials, n, tie=lambda tied: tied[0]), _variant(text, specials, n, tie=min)):
        return head + ": ties go to the lexicographically greater pair of bytes: max(tied), comparing bytes"
    if len(got) != len(expected) and got[: len(expected)] == expected[: len(got)]:
        return head + (
            f": vocab_size counts the 256 bytes and the {len(specials)} special tokens, each in the vocabulary; "
            "the rest are merges (stop early only when no pair is left)"
        )
    return head + ": count each pre-token's pairs times its count, and merge the most frequent pair everywhere"


def _variant(
    text: str, specials: list[str], num_merges: int, *, pretokenize: bool = True, tie: Callable[..., Any] = max
) -> Merges:
    """The merges of a learner's mistake: specials left in (``specials=[]``),
    no pre-tokenizing, or another tie rule; a plain recount, for small texts."""
    from collections import Counter

    from bpe_lab.core.pretokenize import gpt2_pretokenize, split_special

    pieces = [p for p, special in split_special(text, specials) if not special]
    tokens = Counter(t for p in pieces for t in (gpt2_pretokenize(p) if pretokenize else [p]))
    words = {tuple(bytes([b]) for b in t.encode("utf-8")): c for t, c in tokens.items()}
    merges: Merges = []
    for _ in range(num_merges):
        counts: dict[tuple[bytes, bytes], int] = {}
        for symbols, count in words.items():
            for pair in zip(symbols, symbols[1:]):
                counts[pair] = counts.get(pair, 0) + count
        if not counts:
            break
        best = max(counts.values())
        pair = tie([p for p, c in counts.items() if c == best])
        merges.append(pair)
        words = {_join(symbols, pair): count for symbols, count in words.items()}
    return merges


def _join(symbols: tuple[bytes, ...], pair: tuple[bytes, bytes]) -> tuple[bytes, ...]:
    out: list[bytes] = []
    i = 0
    while i < len(symbols):
        if symbols[i : i + 2] == pair:
            out.append(pair[0] + pair[1])
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return tuple(out)


def _vocab_message(expected: dict[int, bytes], got: dict[int, bytes], specials: list[str]) -> str:
    have = set(got.values())
    missing = [t for t in expected.values() if t not in have]
    special = [t for t in missing if t in {s.encode() for s in specials}]
    if special:
        return f"the vocabulary lacks the special token {special[0]!r}: put each one's UTF-8 bytes after the 256 bytes"
    if any(len(t) == 1 for t in missing):
        return "the vocabulary starts with all 256 single bytes, b'\\x00' to b'\\xff', even those the text never uses"
    if missing:
        return f"the vocabulary lacks {missing[0]!r}: each merge adds one entry, its two byte strings joined"
    return (
        f"the vocabulary should have {len(expected)} entries (the 256 bytes, the special tokens, one per merge), "
        f"got {len(got)}"
    )


def text_file(text: str) -> Path:
    """``text`` written to a new UTF-8 file ``text.txt`` (for the hidden
    tests of ``train_bytelevel``, which reads a path). It lives in this
    process's folder under ``$TMPDIR/bpe-lab-text-UID/`` (``scratch``),
    removed when the process ends, or by the next process to write one if
    this one was killed: a kernel that runs the self-checks all day leaves
    nothing behind."""
    import tempfile
    from pathlib import Path

    from bpe_lab.grading.check.scratch import process_folder, release_at_exit

    if not _TEXT_FOLDER or not _TEXT_FOLDER[0].is_dir():
        _TEXT_FOLDER[:] = [release_at_exit(process_folder("bpe-lab-text"))]
    path = Path(tempfile.mkdtemp(dir=_TEXT_FOLDER[0])) / "text.txt"
    path.write_text(text, encoding="utf-8")
    return path


_TEXT_FOLDER: list[Path] = []  # this process's folder for text_file, once made
