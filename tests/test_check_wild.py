"""Chapter 07's self-checks and exercise: the references are pinned to cases
worked out by hand, a solution written from scratch passes each check, each
classic mistake fails with its own hint, and the grader gives the solution
full marks, the untouched exercise 0, and a submission that calls the
package's answer 0 on that task with the function named."""

from __future__ import annotations

from itertools import groupby
from pathlib import Path

import nbformat
import pytest
import regex
from grading_support import grade_solution_exercise_and

from bpe_lab.bytelevel.tokenizer import Tokenizer
from bpe_lab.core.patterns import CL100K_PATTERN, ZH_RANGE_PATTERN, pretokenize_with
from bpe_lab.core.pretokenize import GPT2_PATTERN
from bpe_lab.grading import check
from bpe_lab.grading.check import CheckFailed
from bpe_lab.grading.check.answers import CHAPTERS, chapter_forbidden, forbidden
from bpe_lab.grading.check.guard import resolve
from bpe_lab.grading.check.wild import DIGITS_PATTERN, ZH_PATTERN, digit_pieces, unemitted_tokens, zh_pieces
from bpe_lab.grading.commands.grader import load_tasks
from bpe_lab.variants import quirks

ROOT = Path(__file__).resolve().parent.parent
SOLUTION = ROOT / "solutions" / "07_wild.ipynb"
BYTES = {i: bytes([i]) for i in range(256)}

# ----------------------------------------------------------- the references


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1234567", ["123", "456", "7"]),  # from the left
        (" 2024", [" ", "202", "4"]),  # the space is a piece of its own
        ("x  = 10000", ["x", " ", " =", " ", "100", "00"]),
        ("I'LL don't", ["I", "'", "LL", " don", "'t"]),  # GPT-2's lower-case contractions stay
        ("x²½", ["x", "²½"]),  # numbers that are not decimal digits are \p{N} too
        ("v2.10", ["v", "2", ".", "10"]),
    ],
)
def test_digit_pieces_by_hand(text, expected):
    assert digit_pieces(text) == expected


def test_the_digit_pattern_is_gpt2s_with_cl100ks_number_branch():
    assert DIGITS_PATTERN.replace(r"\p{N}{1,3}", r" ?\p{N}+") == GPT2_PATTERN
    texts = ["it's 1234567 now", "12345 + 67890 = 80235", "a  99\n\n b"]
    # where contractions, case and new lines do not differ, cl100k cuts the same way
    assert [digit_pieces(t) for t in texts] == [pretokenize_with(t, "cl100k") for t in texts]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("今天天气", ["今天天气"]),
        ("ok𠮷野 家", ["ok", "𠮷野", " ", "家"]),  # U+20BB7 (plane 2) is Han
        ("㐀㐁豈", ["㐀㐁豈"]),  # Extension A and a compatibility ideograph
        ("一九八〇年", ["一九八〇年"]),  # 〇 is Han, though not a letter
        ("abc，def。中文", ["abc，def。", "中文"]),  # the range pattern's other run is kept
        ("  \n", ["  \n"]),
    ],
)
def test_zh_pieces_by_hand(text, expected):
    assert zh_pieces(text) == expected
    assert regex.findall(ZH_PATTERN, text) == expected


def test_unemitted_tokens_by_hand():
    aa = Tokenizer({**BYTES, 256: b"aa", 257: b"aaaa"}, [(b"a", b"a"), (b"aa", b"aa")], ["<|endoftext|>"])
    assert unemitted_tokens(aa, "aaaa") == {b"aa"}  # made by a merge, absorbed by the next
    assert unemitted_tokens(aa, "aaaa aaa") == set()
    assert unemitted_tokens(aa, "") == {b"aa", b"aaaa"}  # never a byte or a special token
    assert unemitted_tokens(Tokenizer.byte_level(), "abc") == set()


# -------------------------------------------------- solutions from scratch

GPT2_WITH_CL100K_DIGITS = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def pretokenize_digits(text):
    return regex.findall(GPT2_WITH_CL100K_DIGITS, text)


def pretokenize_zh(text):
    return regex.findall(r"\p{Han}+|[^\p{Han}\s]+|\s+", text)


def never_emitted(tokenizer, text):
    emitted = set(tokenizer.encode(text))
    id_of = {token: i for i, token in tokenizer.vocab.items()}
    return {a + b for a, b in tokenizer.merges if id_of[a + b] not in emitted}


def test_solutions_written_from_scratch_pass(capsys):
    check.check_pretokenize_digits(pretokenize_digits)
    check.check_pretokenize_zh(pretokenize_zh)
    check.check_never_emitted(never_emitted)
    out = capsys.readouterr().out
    assert out.count("✔") == 3
    assert r"with the [\u4e00-\u9fa5] pattern, 0" in out and "never emits 60 of its 1743 merged tokens" in out


def test_the_check_helpers_are_deterministic(capsys):
    check.check_never_emitted(never_emitted)
    check.check_pretokenize_zh(pretokenize_zh)
    first = capsys.readouterr().out
    check.check_never_emitted(never_emitted)
    check.check_pretokenize_zh(pretokenize_zh)
    assert capsys.readouterr().out == first


# ------------------------------------------------------------- the mistakes


def _findall(pattern):
    return lambda text: regex.findall(pattern, text)


def _from_the_right(text):
    out = []
    for piece in regex.findall(GPT2_PATTERN.replace(r" ?\p{N}+", r"\p{N}+"), text):
        if regex.fullmatch(r"\p{N}+", piece):
            head = len(piece) % 3
            out += ([piece[:head]] if head else []) + [piece[k : k + 3] for k in range(head, len(piece), 3)]
        else:
            out.append(piece)
    return out


def _gpt2_with(branch):
    return _findall(GPT2_PATTERN.replace(r" ?\p{N}+", branch))


def _not_written(text):
    raise NotImplementedError()


@pytest.mark.parametrize(
    ("mistake", "hint"),
    [
        (_findall(GPT2_PATTERN), "GPT-2's pattern unchanged"),
        (_gpt2_with(r" ?\p{N}{1,3}"), "a space before a number is a piece of its own"),
        (_findall(CL100K_PATTERN), "that is cl100k's whole pattern"),
        (_from_the_right, "the groups are counted from the left"),
        (_gpt2_with(r"\p{N}"), "up to three digits, not one"),
        (_gpt2_with(r"\d{1,3}"), r"'²' \(U\+00B2\) at offset 1 is lost .*not a decimal digit"),
        (_gpt2_with(r"\p{N}{3}"), r"the last group of a number may have one or two digits"),
        (_gpt2_with(r"\p{N}{1,4}"), r"a piece holds at most three digits, and you join '3' and '4'"),
        (_gpt2_with(r"\p{N}{1,2}"), r"you cut between the digits '2' and '3'"),
        (lambda text: tuple(pretokenize_digits(text)), "return a list of strings"),
        (lambda text: text.split(), r"' ' \(U\+0020\) at offset 4 is lost"),
        (
            lambda text: pretokenize_with(text, GPT2_WITH_CL100K_DIGITS),
            r"calls bpe_lab\.core\.patterns\.pretokenize_with",
        ),
        (lambda text: digit_pieces(text), r"calls bpe_lab\.grading\.check\.wild\.digit_pieces"),
        (_not_written, "is not written yet"),
    ],
)
def test_each_digit_mistake_has_its_hint(mistake, hint):
    with pytest.raises(CheckFailed, match=hint) as failed:
        check.check_pretokenize_digits(mistake)
    assert "\n" not in str(failed.value)  # one line


def _han_or_not(text):
    """Runs of one kind of character, told apart with the package's is_han."""
    kind = lambda ch: "han" if quirks.is_han(ch) else "space" if ch.isspace() else "other"  # noqa: E731
    return ["".join(run) for _, run in groupby(text, key=kind)]


@pytest.mark.parametrize(
    ("mistake", "hint"),
    [
        (
            _findall(ZH_RANGE_PATTERN),
            r"'今' and '天' \(offset 1\) are both Han characters.*match a run, \\p\{Han\}\+, not one",
        ),
        (
            _findall(r"[\u4e00-\u9fa5]+|[^\u4e00-\u9fa5\s]+|\s+"),
            r"'刘' and '䶮' \(offset 1\) are both Han.*U\+4DAE\) is Han, but outside",
        ),
        (
            _findall(r"\p{Han}+|[^\u4e00-\u9fa5\s]+|\s+"),  # the range left in the second branch
            r"you join 'k' and '𠮷'.*must stop at every Han character.*U\+20BB7\) is Han, but outside",
        ),
        (_findall(r"\p{Han}+|\S+|\s+"), r"you join .* must stop at every Han character"),
        (
            _findall(r"\p{Han}|[^\p{Han}\s]+|\s+"),
            r"are both Han characters.*not one character: BPE never merges across",
        ),
        (_findall(r"\p{L}+|[^\p{L}\s]+|\s+"), r"you join .* must stop at every Han character"),
        (_findall(r"\p{Lo}+|[^\p{Lo}\s]+|\s+"), r"'〇' \(U\+3007\) is Han, but a number, not a letter"),
        (
            _findall(r"\p{Han}+|[^\p{Han}\W]+|[^\w\s]+|\s+"),
            r"keeps a run of characters that are neither Han nor white space",
        ),
        (_findall(r"\p{Han}+|[^\p{Han}\s]+|\s"), r"white space is a run of its own"),
        (_findall(r" ?\p{Han}+|[^\p{Han}\s]+|\s+"), r"white space is a run of its own, \\s\+, but you join ' ' and"),
        (_findall(r"\p{Han}+|[^\p{Han}\s]+"), r"is lost"),
        (lambda text: list(text), "not one character"),
        (_han_or_not, r"calls bpe_lab\.variants\.quirks\.is_han"),
    ],
)
def test_each_zh_mistake_has_its_hint(mistake, hint):
    with pytest.raises(CheckFailed, match=hint) as failed:
        check.check_pretokenize_zh(mistake)
    assert "\n" not in str(failed.value)


def _ids_instead(tokenizer, text):
    unused = never_emitted(tokenizer, text)
    return {i for i, token in tokenizer.vocab.items() if token in unused}


def _counting_uses(tokenizer, text):
    uses, id_of = quirks.token_uses(tokenizer, text), {token: i for i, token in tokenizer.vocab.items()}
    return {a + b for a, b in tokenizer.merges if uses[id_of[a + b]] == 0}


def _merged(tokenizer):
    return {a + b for a, b in tokenizer.merges}


def _emitted(tokenizer, text):
    return {tokenizer.vocab[i] for i in tokenizer.encode(text)}


@pytest.mark.parametrize(
    ("mistake", "hint"),
    [
        (lambda tok, text: set(tok.vocab.values()) - _emitted(tok, text), "is a special token, which no merge made"),
        (
            lambda tok, text: (
                {t for i, t in tok.vocab.items() if i not in tok.special_ids.values()} - _emitted(tok, text)
            ),
            "is one of the 256 single bytes",
        ),
        (
            lambda tok, text: {t for t in _merged(tok) if t not in text.encode()},
            r"is in the text \d+ times, yet encode\(text\) never emits it \(its bytes end up in other tokens",
        ),
        (_ids_instead, "not their ids"),
        (lambda tok, text: {t.decode("utf-8", "replace") for t in never_emitted(tok, text)}, "not str"),
        (lambda tok, text: sorted(never_emitted(tok, text)), r"return a set \(these are the right tokens\)"),
        (lambda tok, text: len(never_emitted(tok, text)), "return a set of bytes"),
        (
            # "a token that is not in the text is no glitch"
            lambda tok, text: {t for t in never_emitted(tok, text) if t in text.encode()},
            r"is missing: tokenizer\.encode\(text\) never emits it",
        ),
        (
            lambda tok, text: _merged(tok) - {t for line in text.splitlines() for t in _emitted(tok, line)},
            r"b'\\n +' is in yours, but tokenizer\.encode\(text\) emits it \d+ times",
        ),
        (
            lambda tok, text: never_emitted(tok, text) | set(sorted(_merged(tok) & _emitted(tok, text))[:1]),
            r"is in yours, but tokenizer\.encode\(text\) emits it \d+ times",
        ),
        (_counting_uses, r"calls bpe_lab\.variants\.quirks\.token_uses"),
        (lambda tok, text: unemitted_tokens(tok, text), r"calls bpe_lab\.grading\.check\.wild\.unemitted_tokens"),
    ],
)
def test_each_never_emitted_mistake_has_its_hint(mistake, hint):
    with pytest.raises(CheckFailed, match=hint) as failed:
        check.check_never_emitted(mistake)
    assert "\n" not in str(failed.value)


def test_a_task_may_not_reach_another_tasks_answer():
    with pytest.raises(CheckFailed, match=r"pretokenize_zh reaches bpe_lab\.grading\.check\.wild\.digit_pieces"):
        check.check_pretokenize_zh(lambda text: zh_pieces(text) if digit_pieces("1") else [])


def test_the_chapters_answers_are_forbidden_and_every_path_resolves():
    paths = forbidden(*CHAPTERS["wild"])
    assert {"bpe_lab.core.patterns.pretokenize_with", "bpe_lab.variants.quirks.token_uses"} <= set(paths)
    assert set(chapter_forbidden("never_emitted")) == set(paths)
    for path in paths:
        resolve(path)
    # what the exercise's own cells use stays allowed: GPT2_PATTERN is a string, encode a method
    assert not any("pretokenize.gpt2" in p or "Tokenizer.encode" in p or "train_bytelevel" in p for p in paths)


def test_every_task_of_the_solution_forbids_the_notebooks_answers():
    tasks = load_tasks(nbformat.read(SOLUTION, as_version=4))
    assert [t.grade_id for t in tasks] == [
        "07_wild_pretokenize_digits",
        "07_wild_pretokenize_zh",
        "07_wild_never_emitted",
    ]
    assert [t.name for t in tasks] == ["pretokenize_digits", "pretokenize_zh", "never_emitted"]
    assert all(set(t.forbid) == set(forbidden(*CHAPTERS["wild"])) for t in tasks)


# ------------------------------------------------------------------ grading

DELEGATED = {
    "07_wild_pretokenize_digits": (
        "from bpe_lab.core.patterns import pretokenize_with\n"
        "def pretokenize_digits(text):\n"
        f"    return pretokenize_with(text, {GPT2_WITH_CL100K_DIGITS!r})",
        "bpe_lab.core.patterns.pretokenize_with",
    ),
    "07_wild_pretokenize_zh": (
        "from itertools import groupby\n"
        "from bpe_lab.variants import quirks\n"
        "def pretokenize_zh(text):\n"
        "    kind = lambda ch: 'han' if quirks.is_han(ch) else 'space' if ch.isspace() else 'other'\n"
        "    return [''.join(run) for _, run in groupby(text, key=kind)]",
        "bpe_lab.variants.quirks.is_han",
    ),
    "07_wild_never_emitted": (
        "import bpe_lab.variants.quirks as _quirks\n"
        "def never_emitted(tokenizer, text):\n"
        "    uses = _quirks.token_uses(tokenizer, text)\n"
        "    ids = {token: i for i, token in tokenizer.vocab.items()}\n"
        "    return {a + b for a, b in tokenizer.merges if uses[ids[a + b]] == 0}",
        "bpe_lab.variants.quirks.token_uses",
    ),
}


def test_the_delegating_answers_are_right_but_for_the_delegation():
    """So that their 0 below is the guard's doing, not a wrong value."""
    namespace: dict[str, object] = {}
    for source, _ in DELEGATED.values():
        exec(source, namespace)  # noqa: S102 - the test's own submissions
    texts = ["I'LL pay 1234567 now", "ok𠮷野 家 2024"]
    assert [namespace["pretokenize_digits"](t) for t in texts] == [digit_pieces(t) for t in texts]  # type: ignore[operator]
    assert [namespace["pretokenize_zh"](t) for t in texts] == [zh_pieces(t) for t in texts]  # type: ignore[operator]
    aa = Tokenizer({**BYTES, 256: b"aa", 257: b"aaaa"}, [(b"a", b"a"), (b"aa", b"aa")])
    assert namespace["never_emitted"](aa, "aaaa") == {b"aa"}  # type: ignore[operator]


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    return grade_solution_exercise_and(tmp_path_factory, "07_wild", DELEGATED)


def test_the_solution_scores_full_marks_and_the_exercise_zero(reports):
    solution, exercise = reports["solution"], reports["exercise"]
    auto = [t for t in solution.tasks if t.grade_id.startswith("07_wild_")]
    assert [(t.grade_id, t.points) for t in auto] == [
        ("07_wild_pretokenize_digits", 3),
        ("07_wild_pretokenize_zh", 2),
        ("07_wild_never_emitted", 2),
    ], solution.tasks
    assert all(t.points == t.max_points for t in auto)
    written = next(t for t in solution.tasks if t.grade_id == "07_written_strawberry")
    assert written.max_points == 1 and "strawberry" in written.answer
    assert exercise.total == 0, exercise.tasks  # the written answer, left as given, is 0 too


def test_a_delegating_submission_scores_zero_on_each_task_and_names_the_function(reports):
    tasks = {t.grade_id: t for t in reports["delegating"].tasks}
    for gid, (_, path) in DELEGATED.items():
        assert tasks[gid].points == 0, tasks[gid]
        assert path in tasks[gid].message, tasks[gid].message
