"""Chapter 10's checks: the capstone, a GPT-4-style tokenizer of the learner's own.

What this adds to ``runner``: the references of exercise 10, where the
learner puts the course together (special tokens cut out first, a
pre-tokenizer pattern given as a regex, byte-level training, rank replay,
a class with ``encode``, ``decode``, ``save`` and ``load``), and hints
that tell the usual mistakes apart:

- ``split_specials(text, special_tokens)``: ``core.pretokenize.split_special``
  (longest token first, each escaped, no empty ordinary piece);
- ``train(text, vocab_size, special_tokens, pattern)``: ``train_bytelevel``
  with ``pattern``, compared exactly, ids included (``trained`` runs it on a
  text; fewer merges than asked for only when no pair is left). A learner
  who cuts with GPT-2's pattern whatever ``pattern`` says is named, and so
  is one who lets merges cross a special token;
- ``MyTokenizer(vocab, merges, special_tokens, pattern)``: its ``encode``
  against ``bpe_lab.Tokenizer(..., pattern=pattern).encode`` and its
  ``decode`` against ``Tokenizer.decode``; the first tokenizer it is tried
  with is GPT-2's own (50,257 ids, ``gpt2_tokenizer``), so a class that
  passes gives GPT-2's ids, as tiktoken does;
- and its ``save`` and ``load``: ``reloaded`` saves a tokenizer, saves
  another one of the same class meanwhile, moves the first file and loads
  it, then encodes with what it loaded (a ``load`` that returns what was
  saved last, or that reads anything but the one file, fails). One task: a
  class is one answer cell, and each answer cell is one task's.

Why the class's check goes through ``my_tokenizer_results``: an instance
of the learner's class is not a value a grading kernel can send back, and
GPT-2's vocabulary is too large to send as an argument. So the helper
takes the class and a short spec of the tokenizer (``"gpt2"``, or the
small one's vocabulary, merges, special tokens and pattern), builds the
instance itself (GPT-2's from the package's shipped ranks,
``gpt2_model``), and returns only what its ``encode``, ``decode`` and a
``reloaded`` gave: plain data. The check judges that data, at home and,
on what a grading kernel's run of the same helper sent back, in the
grader (``visible``): a failing case costs the task there, decided in the
grader. ``tests/test_grading_capstone.py`` checks that it stays so.

``bpe_lab.bytelevel`` is imported inside the functions, as in ``bytelevel``.

>>> [piece for piece, _ in split_reference("a<|x|><|x|>b", ["<|x|>", "<|x|><|x|>"])]
['a', '<|x|><|x|>', 'b']
"""

from __future__ import annotations

import functools
import random
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import regex

from bpe_lab.core.corpora import DATA_DIR
from bpe_lab.core.patterns import CL100K_PATTERN, LLAMA3_PATTERN, O200K_PATTERN
from bpe_lab.core.pretokenize import GPT2_PATTERN, split_special
from bpe_lab.core.words import merge_symbols
from bpe_lab.grading.check.fresh import fresh_ids, in_a_notebook
from bpe_lab.grading.check.runner import NotWritten, call, compare, fail, passed, results, rng, run_cases, short

if TYPE_CHECKING:
    from bpe_lab.bytelevel.tokenizer import Tokenizer

__all__ = [
    "EOT",
    "CAPSTONE_PATTERNS",
    "split_reference",
    "check_split_specials",
    "trained",
    "LANGUAGES",
    "split_five_languages",
    "training_text",
    "check_train_with_pattern",
    "gpt2_model",
    "my_tokenizer_results",
    "check_my_tokenizer",
    "reloaded",
]

EOT = "<|endoftext|>"
Vocab = dict[int, bytes]
Merges = list[tuple[bytes, bytes]]

#: The patterns the capstone's cases cut with, as regexes (what the learner's code is given).
CAPSTONE_PATTERNS: dict[str, str] = {
    "gpt2": GPT2_PATTERN,
    "cl100k": CL100K_PATTERN,
    "o200k": O200K_PATTERN,
    "llama3": LLAMA3_PATTERN,
}


def _pattern_name(pattern: str) -> str:
    return next((name for name, known in CAPSTONE_PATTERNS.items() if known == pattern), "your pattern")


def _five_languages() -> str:
    return (DATA_DIR / "five_languages.txt").read_text(encoding="utf-8")


# ------------------------------------------------------------ task 1: special tokens


def split_reference(text: str, special_tokens: list[str]) -> list[tuple[str, bool]]:
    """What ``split_specials`` must return: ``split_special``'s parts, as a list of pairs."""
    return [(piece, special) for piece, special in split_special(text, special_tokens)]


#: (text, special tokens): where each mistake shows (a token inside a longer
#: one, regex metacharacters, tokens side by side, none at all, half a token)
_SPLIT_CASES: list[tuple[str, list[str]]] = [
    ("a<|endoftext|>b", [EOT]),
    ("<|a|><|a|><|a|>", ["<|a|>", "<|a|><|a|>"]),
    ("x [SEP] y|z [SEP]", ["[SEP]", "|"]),
    ("<|endoftext|><|endoftext|>", [EOT]),
    ("", [EOT]),
    ("no special token here", []),
    ("half <|endoftext and a <|pad|>.", [EOT, "<|pad|>"]),
    ("a.b*c", ["."]),
]


def _split_cases(generator: random.Random) -> list[tuple[str, list[str]]]:
    """The fixed cases, then stretches of the five languages with special tokens put in."""
    text = _five_languages().replace(EOT, "")
    cases = list(_SPLIT_CASES)
    for specials in ([EOT], [EOT, "<|pad|>"], ["<s>", "</s>", "<s></s>"]):
        parts = []
        for _ in range(generator.randint(2, 5)):
            start = generator.randrange(len(text) - 40)
            parts += [text[start : start + generator.randint(0, 40)], generator.choice(specials)]
        cases.append(("".join(parts[: generator.randint(2, len(parts))]), specials))
    return cases


def _split_hint(expected: list[tuple[str, bool]], got: Any, text: str, specials: list[str]) -> str:
    if not isinstance(got, list) or not all(isinstance(p, tuple) and len(p) == 2 for p in got):
        return ": return a list of (piece, is_special) pairs"
    if "".join(str(piece) for piece, _ in got) != text:
        return ": joining the pieces must give the text back: escape each token (regex.escape) and keep every character"
    if any(special and piece not in specials for piece, special in got):
        return ": a piece marked True is not one of the special tokens: a token is text, not a regex (regex.escape)"
    if any(piece == "" for piece, _ in got):
        return ": leave out empty ordinary pieces (between two special tokens, at the start or the end)"
    if sum(special for _, special in got) > sum(special for _, special in expected):
        return ": a longer special token that holds a shorter one wins: try the longest first"
    return ": each special token is one piece marked True, the text between them pieces marked False"


def check_split_specials(fn: Callable[[str, list[str]], list[tuple[str, bool]]]) -> None:
    """``fn(text, special_tokens) -> [(piece, is_special), ...]`` equal to
    ``split_special``: longest token first, no empty ordinary piece."""
    verdict = compare(lambda text, specials: split_reference(text, specials), _split_hint)
    run_cases("split_specials", fn, _split_cases(rng()), verdict, shown=lambda t, s: f"{short(t, 60)}, {s}")


# ------------------------------------------------------------ task 2: training


def trained(text: str, vocab_size: int, special_tokens: list[str], pattern: str) -> tuple[Vocab, Merges]:
    """``train_bytelevel(..., pattern=pattern)`` on ``text`` (written to a
    temporary file, removed at once): what ``train`` must return."""
    from bpe_lab.bytelevel.train import train_bytelevel

    with tempfile.TemporaryDirectory(prefix="bpe-lab-capstone-") as folder:
        path = Path(folder) / "text.txt"
        path.write_text(text, encoding="utf-8", newline="")
        return train_bytelevel(
            path, vocab_size, special_tokens, pattern=pattern, workers=1, progress=False, on_short="ignore"
        )


#: The languages of ``five_languages.txt``, in the file's order.
LANGUAGES = ("en", "zh", "de", "fr", "es")


def split_five_languages(train_lines: int = 25) -> tuple[str, dict[str, str]]:
    """``five_languages.txt`` cut in two: the first ``train_lines`` sentences
    of each language, the documents separated by ``<|endoftext|>`` as in the
    file (to train on), and the rest of each language (to measure on, text
    the tokenizer has never seen), by language code.

    >>> training, held_out = split_five_languages()
    >>> training.count(EOT), sorted(held_out), held_out["en"].count("\\n")
    (4, ['de', 'en', 'es', 'fr', 'zh'], 5)
    """
    documents = [doc.strip("\n").split("\n") for doc in _five_languages().split(EOT)]
    training = EOT.join("\n".join(doc[:train_lines]) + "\n" for doc in documents)
    return training, {lang: "\n".join(doc[train_lines:]) + "\n" for lang, doc in zip(LANGUAGES, documents)}


def training_text() -> str:
    """The capstone's training text (``split_five_languages``)."""
    return split_five_languages()[0]


_TRAIN_CASES: list[tuple[str, int, list[str], str]] = [
    ("I'LL pay 1234567 now; DON'T wait, I'll pay 7654321!", 268, [], CL100K_PATTERN),
    ("I'LL pay 1234567 now; DON'T wait, I'll pay 7654321!", 268, [], GPT2_PATTERN),
    ("abab cdcd", 258, [], CL100K_PATTERN),
    ("<|endoftext|>low low<|endoftext|>lower<|pad|> lowest<|endoftext|>", 266, [EOT, "<|pad|>"], CL100K_PATTERN),
    ("if x:\n    return  x\n\n\n    pass   \n", 262, [], CL100K_PATTERN),
    ("camelCase CamelCase HTTPServer parseJSON camelCase", 270, [], O200K_PATTERN),
    ("我们在屋顶上看星星。我们昨晚和朋友一起吃了晚饭。", 266, [EOT], LLAMA3_PATTERN),
    ("hello world", 257, [EOT], CL100K_PATTERN),
]


def _train_verdict(got: Any, text: str, size: int, specials: list[str], pattern: str) -> str | None:
    """None when ``got`` is ``trained``'s answer; else the first merge that
    differs (or the first wrong id) and what the difference suggests."""
    expected = trained(text, size, specials, pattern)
    if got == expected:
        return None
    if not (isinstance(got, tuple) and len(got) == 2 and isinstance(got[0], dict) and isinstance(got[1], list)):
        return f"return a tuple (vocab, merges): a dict id -> bytes and a list of pairs of bytes, got {short(got, 80)}"
    vocab, merges = got
    if merges == expected[1]:
        wrong = next((f"id {i}" for i, token in sorted(expected[0].items()) if vocab.get(i) != token), "extra ids")
        return (
            f"the merges are right, the vocabulary is not ({wrong}): ids 0-255 are the bytes, then the special "
            "tokens in the order given, then one id per merge, in merge order"
        )
    at = next((i for i, (a, b) in enumerate(zip(merges, expected[1])) if a != b), None)
    if at is None:
        head = f"expected {len(expected[1])} merges, got {len(merges)}"
    else:
        head = f"merge {at + 1}: expected {short(expected[1][at], 60)}, got {short(merges[at], 60)}"
    return head + _train_hint(expected, merges, at, text, size, specials, pattern)


def _train_hint(
    expected: tuple[Vocab, Merges],
    merges: list[Any],
    at: int | None,
    text: str,
    size: int,
    specials: list[str],
    pattern: str,
) -> str:
    if merges and pattern != GPT2_PATTERN and merges == trained(text, size, specials, GPT2_PATTERN)[1][: len(merges)]:
        return ": these are GPT-2's pattern's merges: cut with the pattern you are given, regex.findall(pattern, ...)"
    if merges and specials and merges == trained(text, size, [], pattern)[1][: len(merges)]:
        return ": these merges count the special tokens' text: cut them out first, and count only the text between"
    if at is None:
        return (
            f": vocab_size counts the 256 bytes and the special tokens too ({size} - 256 - {len(specials)} = "
            f"{size - 256 - len(specials)} merges at most); stop early only when no pair is left"
        )
    want, chosen = expected[1][at], merges[at]
    counts = _pair_counts(text, specials, pattern, expected[1][:at])
    wanted = counts.get(want, 0)
    if isinstance(chosen, tuple) and counts.get(chosen) == wanted:
        return (
            f": both occur {wanted} times at this point, and a tie goes to the lexicographically greater pair "
            f"of bytes ({short(want, 60)} > {short(chosen, 60)}: compare the pairs of bytes, as max does)"
        )
    return (
        f": at this point {short(want, 60)} occurs {wanted} times, {short(chosen, 60)} "
        f"{counts.get(chosen, 0) if isinstance(chosen, tuple) else 0}: count each pre-token's pairs times its count, "
        "and merge the most frequent pair everywhere"
    )


def _pair_counts(text: str, specials: list[str], pattern: str, merges: Merges) -> dict[tuple[bytes, bytes], int]:
    """The pair counts of ``text`` (special tokens cut out, cut with
    ``pattern``) once ``merges`` are made: what the next round chooses from."""
    words: dict[tuple[bytes, ...], int] = {}
    for part, special in split_special(text, specials):
        for piece in [] if special else regex.findall(pattern, part):
            word = tuple(bytes([b]) for b in piece.encode("utf-8"))
            words[word] = words.get(word, 0) + 1
    for pair in merges:
        joined: dict[tuple[bytes, ...], int] = {}
        for word, count in words.items():
            merged = merge_symbols(word, pair)
            joined[merged] = joined.get(merged, 0) + count
        words = joined
    counts: dict[tuple[bytes, bytes], int] = {}
    for word, count in words.items():
        for two in zip(word, word[1:]):
            counts[two] = counts.get(two, 0) + count
    return counts


def check_train_with_pattern(fn: Callable[..., tuple[Vocab, Merges]]) -> None:
    """``fn(text, vocab_size, special_tokens, pattern) -> (vocab, merges)``
    equal to ``train_bytelevel`` with ``pattern``: merges and ids exactly."""
    cases = [(training_text(), 400, [EOT], CL100K_PATTERN), *_TRAIN_CASES]
    run_cases(
        "train",
        fn,
        cases,
        _train_verdict,
        shown=lambda text, size, specials, pattern: f"{short(text, 40)}, {size}, {specials}, {_pattern_name(pattern)}",
        exercise="train_with_pattern",
    )


# ------------------------------------------------------------ task 3: the class


def _reference(vocab: Vocab, merges: Merges, specials: list[str], pattern: str) -> Tokenizer:
    from bpe_lab.bytelevel.tokenizer import Tokenizer

    return Tokenizer(vocab, merges, specials, pattern=pattern)


@functools.lru_cache(maxsize=1)
def _gpt2() -> Tokenizer:
    """GPT-2's tokenizer, made once per process (checking its 50,000 merges takes a moment)."""
    from bpe_lab.bytelevel.gpt2 import gpt2_tokenizer

    return gpt2_tokenizer()


#: Texts where encoding mistakes show: special tokens side by side, digits,
#: contractions in capitals, runs of spaces and new lines, several scripts.
_TEXTS = [
    "Hello world<|endoftext|>The start",
    "I'LL pay 1234567 now, DON'T wait",
    "<|endoftext|><|endoftext|>",
    "",
    "  indented\n\n    code()\r\n",
    "naïve café, 今天天气很好 🙂",
    "camelCase HTTPServer",
]


def _tokenizers(generator: random.Random) -> list[tuple[str, Tokenizer, str]]:
    """GPT-2's own, then small ones trained on the five languages with the
    other patterns: (what the case calls it, the reference, its pattern)."""
    made = [("GPT-2", _gpt2(), "gpt2")]
    text = training_text()
    for name, specials in (("cl100k", [EOT]), ("o200k", [EOT, "<|pad|>"]), ("llama3", [EOT, "<|a|>", "<|a|><|a|>"])):
        size = 256 + len(specials) + generator.randint(40, 120)
        vocab, merges = trained(text, size, specials, CAPSTONE_PATTERNS[name])
        made.append((f"{name}, {size} ids", _reference(vocab, merges, specials, CAPSTONE_PATTERNS[name]), name))
    return [(name, reference, CAPSTONE_PATTERNS[pattern]) for name, reference, pattern in made]


def _texts(generator: random.Random, specials: list[str]) -> list[str]:
    text = _five_languages()
    texts = list(_TEXTS)
    for _ in range(4):
        start = generator.randrange(len(text) - 80)
        texts.append(text[start : start + generator.randint(10, 80)] + generator.choice(specials))
    return texts


def _encode_hint(reference: Tokenizer, text: str, got: Any) -> str:
    if not isinstance(got, list) or not all(type(i) is int for i in got):
        return "return a list of int ids"
    special_ids = set(reference.special_ids.values())
    expected = reference.encode(text)
    if special_ids & set(expected) and not special_ids & set(got):
        return "cut the special tokens out first (your split_specials): each is one id, never bytes"
    if got == list(text.encode("utf-8")):
        return "no merge was applied: replay the merges by rank inside each pre-token"
    if reference.pattern.name != "gpt2" and got == _reference(
        reference.vocab, reference.merges, reference.special_tokens, GPT2_PATTERN
    ).encode(text):
        return "these are the ids of GPT-2's pattern: cut with self's pattern"
    return "cut with the pattern, then inside each piece join the pair of lowest rank first, again and again"


#: A line end after a full stop: one pre-token for cl100k, o200k and Llama 3
#: (their first merge here joins it), two for GPT-2: a tokenizer loaded
#: without its pattern shows here.
_PATTERN_SHOWS = "Fin.\n今天。\n"


@functools.lru_cache(maxsize=1)
def gpt2_model() -> tuple[Vocab, Merges]:
    """GPT-2's vocabulary (``<|endoftext|>`` as id 50256) and merges, from
    the package's shipped ranks (``bytelevel.gpt2``), made once per process.

    Why not ``gpt2_tokenizer``: in a grading kernel ``my_tokenizer_results``
    runs with the class's answers trapped, the ``Tokenizer``'s encoders and
    every rank replay among them; ``gpt2_vocab_and_merges`` replays nothing
    (it reads GPT-2's merges as shipped).
    """
    from bpe_lab.bytelevel.gpt2 import gpt2_vocab_and_merges

    vocab, merges = gpt2_vocab_and_merges()
    return {**vocab, len(vocab): EOT.encode("utf-8")}, list(merges)


#: What ``my_tokenizer_results`` returns: the ids of each text, the text of
#: each list of ids, and the ids of the reloaded tokenizer.
Results = tuple[list[Any], list[Any], Any]


def my_tokenizer_results(
    cls: Callable[..., Any], spec: Any, texts: list[str], ids: list[list[int]], saved: str
) -> Results:
    """An instance of the learner's class ``cls`` made from ``spec``
    (``"gpt2"``: GPT-2's own, ``gpt2_model``, its special token and
    pattern; else ``(vocab, merges, special_tokens, pattern)``, copied: it
    may keep them), and what it gives, as plain data: ``encode`` of each of
    ``texts``, ``decode`` of each of ``ids``, and ``reloaded(it, saved)``."""
    if spec == "gpt2":
        vocab, merges = gpt2_model()
        made = (dict(vocab), list(merges), [EOT], GPT2_PATTERN)
    elif isinstance(spec, tuple) and len(spec) == 4:
        made = (dict(spec[0]), list(spec[1]), list(spec[2]), spec[3])
    else:
        raise ValueError(
            f"a tokenizer's spec is 'gpt2' or (vocab, merges, special_tokens, pattern), got {short(spec, 80)}"
        )
    try:
        mine = cls(*made)
        encoded = [_method(mine, "encode")(text) for text in texts]
        decoded = [_method(mine, "decode")(these) for these in ids]
        return encoded, decoded, reloaded(mine, saved)
    except NotWritten:
        raise
    except NotImplementedError as err:
        raise NotWritten(_unwritten(cls, err)) from None


#: The methods the task asks for.
_METHODS = ("encode", "decode", "save", "load")


def _unwritten(cls: Any, err: NotImplementedError) -> str:
    """What raised ``err``: the innermost frame of the learner's code (not
    bpe_lab's), named ``MyTokenizer.save`` for one of the class's methods
    (the class alone for ``__init__``), by its own name for a function of
    theirs that a method called (``split_specials``)."""
    name = getattr(cls, "__name__", "MyTokenizer")
    package = str(Path(__file__).parents[2])
    theirs = [frame.name for frame in traceback.extract_tb(err.__traceback__) if not frame.filename.startswith(package)]
    if not theirs or theirs[-1] == "__init__":
        return name
    return f"{name}.{theirs[-1]}" if theirs[-1] in _METHODS else theirs[-1]


def _method(mine: Any, name: str) -> Callable[..., Any]:
    """``mine``'s method ``name``; NotImplementedError naming it when it has none."""
    found: Callable[..., Any] | None = getattr(mine, name, None)
    if not callable(found):
        raise NotWritten(f"{type(mine).__name__}.{name}")
    return found


def _one_per_case(got: Any, texts: int) -> bool:
    """Whether ``got`` has ``my_tokenizer_results``'s shape for ``texts`` texts: nothing left out."""
    return (
        isinstance(got, tuple)
        and len(got) == 3
        and isinstance(got[0], list)
        and isinstance(got[1], list)
        and (len(got[0]), len(got[1])) == (texts, 2 * texts)
    )


def _spec(name: str, reference: Tokenizer, pattern: str) -> Any:
    """What ``my_tokenizer_results`` is told to build: GPT-2's by its name, a small one in full."""
    if name == "GPT-2":
        return "gpt2"
    return (dict(reference.vocab), list(reference.merges), list(reference.special_tokens), pattern)


def check_my_tokenizer(fn: Callable[..., Any]) -> None:
    """``fn(vocab, merges, special_tokens, pattern)``, a class, whose
    ``encode(text)`` gives ``bpe_lab.Tokenizer``'s ids (GPT-2's own first),
    whose ``decode(ids)`` gives the text back (U+FFFD for a cut character),
    and whose ``save(path)`` and classmethod ``load(path)`` give back a
    tokenizer with the same ids, pattern and special tokens (``reloaded``);
    what it gives comes from ``my_tokenizer_results``."""
    generator = rng()
    cases = 0
    for name, reference, pattern in _tokenizers(generator):
        specials = reference.special_tokens
        where = f"MyTokenizer({name} vocab, merges, {specials}, {_pattern_name(pattern)})"
        texts = _texts(generator, specials)
        saved = "".join(_texts(generator, specials)[:5]) + _PATTERN_SHOWS
        ids = [reference.encode(text) for text in texts]
        cut = [these[:-1] + [0xE4] for these in ids]
        gave = call(
            results(my_tokenizer_results, fn, where),
            "MyTokenizer",
            _spec(name, reference, pattern),
            texts,
            [x for pair in zip(ids, cut) for x in pair],
            saved,
            exercise="my_tokenizer",
        )
        if not _one_per_case(gave, len(texts)):
            fail(
                where,
                f"{len(texts)} texts, but not one result per case came back from my_tokenizer_results "
                "(was check changed?)",
            )
        encoded, decoded, back = gave
        for text, these, got in zip(texts, ids, encoded):
            if got != these:
                fail(
                    f"{where}.encode({short(text, 60)})",
                    f"expected {short(these, 100)}, got {short(got, 100)}: {_encode_hint(reference, text, got)}",
                )
        for k, got in enumerate(decoded):
            these, text = [ids, cut][k % 2][k // 2], texts[k // 2]
            if got != reference.decode(these):
                shown = "encode's ids" if k % 2 == 0 else "encode's ids, the last one cut to a character's first byte"
                fail(
                    f"{where}.decode({shown} of {short(text, 40)})",
                    f"expected {reference.decode(these)!r}, "
                    f"got {short(got, 80)}: join the bytes of all the ids, then decode once, errors='replace'",
                )
        cases += len(texts)
        _check_reloaded(back, reference, name, saved)
        cases += 1
    passed("MyTokenizer", cases)


# ------------------------------------------------------------ task 3: save and load


def reloaded(tokenizer: Any, text: str) -> list[int]:
    """``tokenizer.save(path)``; another tokenizer of its class (the 256
    bytes, no merges) saved meanwhile; the first file moved to another
    folder alone, loaded with ``type(tokenizer).load``; the ids of ``text``
    by what was loaded. Everything lives in a temporary folder, removed at
    once.

    In a notebook (and a grading kernel) the load and the encoding run in
    a fresh interpreter that defines the class again from its cells
    (``fresh.fresh_ids``): a ``load`` that returns an object kept in
    memory finds nothing there. Outside IPython (a script, a test that
    ``exec``s the class) the class has no cell to run again, and it is
    loaded here."""
    kind = type(tokenizer)
    with tempfile.TemporaryDirectory(prefix="bpe-lab-saved-") as folder:
        first, other, moved = (Path(folder, part, "tokenizer") for part in "abc")
        for path in (first, other, moved):
            path.parent.mkdir()
        tokenizer.save(first)
        kind({i: bytes([i]) for i in range(256)}, [], [], GPT2_PATTERN).save(other)
        first.replace(moved)  # the one file: anything written beside it stays behind
        if in_a_notebook():
            return fresh_ids(kind, moved, text)
        return list(kind.load(moved).encode(text))


def _check_reloaded(got: Any, reference: Tokenizer, name: str, text: str) -> None:
    """``got`` (``reloaded`` of the learner's tokenizer on ``text``) is
    ``reference``'s ids, or a hint about what save or load lost."""
    expected = reference.encode(text)
    if got != expected:
        fail(
            f"MyTokenizer({name} vocab, ...): saved, moved, loaded, .encode({short(text, 40)})",
            f"expected {short(expected, 80)}, got {short(got, 80)}: save must write everything load needs "
            "(the vocabulary's bytes, the merges in order, the special tokens and the pattern) into that one "
            "file, and load must read it from the path it is given",
        )
