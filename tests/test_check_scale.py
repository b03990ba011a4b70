"""Chapter 08's self-checks and exercise: the references are pinned to cases
worked out by hand, a solution written from scratch passes each check, each
classic mistake fails with its own hint, and the grader gives the solution
full marks, the untouched exercise 0, and a submission that calls the
package's answer 0 on that task with the function named."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import nbformat
import pytest
from grading_support import (
    fixed_and_generated,
    grade_solution_exercise_and,
    graded_with_no_op_checks,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_lab.core.pretokenize import gpt2_pretokenize, split_special
from bpe_lab.grading import check
from bpe_lab.grading.authoring.tasks import load_tasks
from bpe_lab.grading.check import CheckFailed
from bpe_lab.grading.check.answers import CHAPTERS, forbidden
from bpe_lab.grading.check.guard import resolve
from bpe_lab.grading.check.scale import (
    MeteredText,
    chunk_boundaries,
    chunk_counts,
    held_limit,
    long_text,
    merged_counts,
    stream_ids,
    stream_tokenizer,
    streamed,
)

ROOT = Path(__file__).resolve().parent.parent
SOLUTION = ROOT / "solutions" / "08_scale.ipynb"
EOT = b"<|endoftext|>"

# ----------------------------------------------------------- the references


@pytest.mark.parametrize(
    ("data", "num_chunks", "token", "expected"),
    [
        (b"ab<|>cd<|>ef", 2, b"<|>", [0, 7, 12]),  # guess 6 -> the token at 7
        (b"0123456<|>9<|>", 2, b"<|>", [0, 7, 14]),  # a token exactly at the guess stays
        (b"low lower<|endoftext|>lowest<|endoftext|>low", 3, EOT, [0, 28, 44]),  # guess 14 is inside: next token
        (b"one<|endoftext|>two<|endoftext|>three", 8, EOT, [0, 19, 37]),  # seven guesses, one boundary
        (b"no special token", 3, EOT, [0, 16]),
        (b"", 3, EOT, [0]),
        (b"a<|>b", 10, b"<|>", [0, 1, 5]),  # more chunks than bytes: every guess is 0
        (b"a" * 8240 + EOT + b"b" * 47, 2, EOT, [0, 8240, 8300]),  # crosses the guess's first 4 KB
    ],
)
def test_chunk_boundaries_by_hand(data, num_chunks, token, expected):
    assert chunk_boundaries(data, num_chunks, token) == expected


def test_chunk_counts_and_merged_counts_by_hand():
    counts = chunk_counts("the end<|endoftext|>The start end", ["<|endoftext|>"])
    assert counts == {"the": 1, " end": 2, "The": 1, " start": 1}
    assert chunk_counts("<|a|><|a|>", ["<|a|>"]) == {}
    parts = [Counter({"a": 2}), Counter({"a": 1, "b": 3})]
    assert merged_counts(parts) == {"a": 3, "b": 3} and parts == [Counter({"a": 2}), Counter({"a": 1, "b": 3})]
    assert merged_counts([]) == Counter()


def test_counting_between_safe_boundaries_equals_counting_the_whole():
    from bpe_lab.core.corpora import python_docs_topics

    text = "<|endoftext|>".join(python_docs_topics().values())
    data = text.encode()
    for n in (1, 2, 7, 50):
        bounds = chunk_boundaries(data, n, EOT)
        parts = [chunk_counts(data[a:b].decode(), ["<|endoftext|>"]) for a, b in zip(bounds, bounds[1:])]
        assert merged_counts(parts) == chunk_counts(text, ["<|endoftext|>"])


# -------------------------------------------------- solutions from scratch


def find_chunk_boundaries(data, num_chunks, special_token):
    size = len(data) // num_chunks
    cuts = {0, len(data)}
    for i in range(1, num_chunks):
        at = data.find(special_token, i * size)
        cuts.add(len(data) if at < 0 else at)
    return sorted(cuts)


def count_chunk(text, special_tokens):
    counts = Counter()
    for piece, special in split_special(text, special_tokens):
        if not special:
            counts.update(gpt2_pretokenize(piece))
    return counts


def merge_counts(counts):
    return sum(counts, Counter())


def test_solutions_written_from_scratch_pass(capsys):
    check.check_find_chunk_boundaries(find_chunk_boundaries)
    check.check_count_chunk(count_chunk)
    check.check_merge_counts(merge_counts)
    assert capsys.readouterr().out.count("✔") == 3


# ------------------------------------------------------------- the mistakes


def _cut_at_guesses(data, n, token):
    size = len(data) // n
    return sorted({0, len(data), *(i * size for i in range(1, n))})


def _cut_after_token(data, n, token):
    return sorted({b + len(token) if 0 < b < len(data) else b for b in find_chunk_boundaries(data, n, token)})


def _no_dedup(data, n, token):
    size = len(data) // n
    found = [data.find(token, i * size) for i in range(1, n)]
    return [0, *(len(data) if f < 0 else f for f in found), len(data)]


def _minus_one(data, n, token):
    size = len(data) // n
    return sorted({0, len(data), *(data.find(token, i * size) for i in range(1, n))})


def _windowed(data, n, token):
    """CS336's handout example: reads 4 KB windows that do not overlap."""
    size = len(data) // n
    cuts = [i * size for i in range(n)] + [len(data)]
    for k in range(1, n):
        at = cuts[k]
        while True:
            window = data[at : at + 4096]
            if not window:
                cuts[k] = len(data)
                break
            found = window.find(token)
            if found != -1:
                cuts[k] = at + found
                break
            at += 4096
    return sorted(set(cuts))


def _from_next_byte(data, n, token):
    size = len(data) // n
    found = [data.find(token, i * size + 1) for i in range(1, n)]
    return sorted({0, len(data), *(len(data) if f < 0 else f for f in found)})


@pytest.mark.parametrize(
    ("mistake", "hint"),
    [
        (_cut_at_guesses, "cut only where a special token starts"),
        (_cut_after_token, "cut at the start of the special token, not after it"),
        (_no_dedup, "remove repeated boundaries"),
        (_minus_one, "data.find returns -1"),
        (_windowed, "you skipped the special token at byte 8240"),
        (_from_next_byte, "starts exactly at the guess counts"),
        (lambda data, n, token: (0, len(data)), "return a list of int byte offsets"),
        (lambda data, n, token: find_chunk_boundaries(data, n, token)[1:], "the first boundary is 0"),
        (lambda data, n, token: chunk_boundaries(data, n, token), "calls bpe_lab.grading.check.scale.chunk_boundaries"),
    ],
)
def test_each_boundary_mistake_has_its_hint(mistake, hint):
    with pytest.raises(CheckFailed, match=hint.replace("(", r"\(").replace(".", r"\.")):
        check.check_find_chunk_boundaries(mistake)


def test_a_cut_inside_a_word_or_a_token_is_named():
    def shifted(data, n, token):  # every boundary 3 bytes late: inside the token
        return sorted({b + 3 if 0 < b < len(data) else b for b in find_chunk_boundaries(data, n, token)})

    with pytest.raises(CheckFailed, match="is inside the special token that starts at byte"):
        check.check_find_chunk_boundaries(shifted)

    def early(data, n, token):  # every boundary 2 bytes early: inside the word before the token
        return sorted({b - 2 if 0 < b < len(data) else b for b in find_chunk_boundaries(data, n, token)})

    with pytest.raises(CheckFailed, match="is not where a special token starts"):
        check.check_find_chunk_boundaries(early)


def _count_with_specials(text, special_tokens):
    counts = Counter()
    for piece, special in split_special(text, special_tokens):
        counts.update([piece] if special else gpt2_pretokenize(piece))
    return counts


def _count_deleting(text, special_tokens):
    for token in special_tokens:
        text = text.replace(token, "")
    return Counter(gpt2_pretokenize(text))


@pytest.mark.parametrize(
    ("mistake", "hint"),
    [
        (lambda text, specials: Counter(gpt2_pretokenize(text)), "cut the special tokens out first"),
        (_count_with_specials, "leave the special tokens themselves out"),
        (_count_deleting, "deleting a special token glues its neighbours together"),
        (lambda text, specials: Counter(text.split()), "not str.split"),
        (lambda text, specials: gpt2_pretokenize(text), r"return a Counter \(or dict\)"),
        (lambda text, specials: Counter({k.encode(): v for k, v in count_chunk(text, specials).items()}), "as strings"),
        (lambda text, specials: chunk_counts(text, specials), "calls bpe_lab.grading.check.scale.chunk_counts"),
    ],
)
def test_each_count_mistake_has_its_hint(mistake, hint):
    with pytest.raises(CheckFailed, match=hint):
        check.check_count_chunk(mistake)


def _merge_in_place(counts):
    if not counts:
        return Counter()
    for part in counts[1:]:
        counts[0].update(part)
    return counts[0]


def _merge_overwriting(counts):
    total = {}
    for part in counts:
        total.update(part)
    return total


@pytest.mark.parametrize(
    ("mistake", "hint"),
    [
        (_merge_in_place, "you changed the Counters you were given"),
        (_merge_overwriting, "dict.update"),
        (lambda counts: sum(counts[1:], counts[0]), "an empty file"),
        (lambda counts: merged_counts(counts), "calls bpe_lab.grading.check.scale.merged_counts"),
    ],
)
def test_each_merge_mistake_has_its_hint(mistake, hint):
    with pytest.raises(CheckFailed, match=hint):
        check.check_merge_counts(mistake)


def test_the_package_counter_is_forbidden_and_every_path_resolves():
    paths = forbidden(*CHAPTERS["scale"])
    assert "bpe_lab.bytelevel.train.chunk_bounds" in paths and "bpe_lab.bytelevel.train.count_pretokens" in paths
    assert "bpe_lab.bytelevel.tokenizer.Tokenizer.encode_iterable" in paths
    assert "bpe_lab.bytelevel.tokenizer.Tokenizer.encode" not in paths  # the streaming task encodes with it
    for path in paths:
        resolve(path)


# ------------------------------------------------- task 4: encoding a file in bounded memory


def _tokenizer():
    return stream_tokenizer()


def test_the_metered_file_reads_like_a_file_and_counts_what_is_held():
    f = MeteredText("ab\ncd\n")
    assert (f.read(1), f.readline(), list(f), f.read(), f.read(5)) == ("a", "b\n", ["cd\n"], "", "")
    assert (f.largest_read, f.most_held) == (3, 6)  # nothing given back: all six bytes held at the end
    f = MeteredText("é" * 4)
    byte_level = __import__("bpe_lab").Tokenizer.byte_level()
    assert f.drain(byte_level, byte_level.encode(f.read(2))) == list("éé".encode())
    assert f.most_held == 0  # all given back before the next read
    f.read(2)
    assert (f.read(), f.largest_read, f.most_held) == ("", 2, 4)  # 2 characters, 4 bytes held at the last read
    with pytest.raises(AttributeError):
        f.most_held = 0  # type: ignore[misc]  # a function cannot simply reset what it held


@settings(max_examples=150, deadline=None)
@given(text=st.text(alphabet="al' \n\tI0é今🙂,", max_size=60), block=st.integers(1, 9))
def test_the_streamed_ids_are_those_of_the_whole_text(text, block):
    tokenizer = _tokenizer()
    ids, largest, held = streamed(tokenizer, text, block)
    assert ids == tokenizer.encode(text)
    assert largest <= block and held <= len(text.encode()) and held < held_limit(tokenizer, text, block)


def test_the_reference_holds_a_few_bytes_whatever_the_length():
    tokenizer = _tokenizer()
    text = "I'll say they've gone, don't wait.\n\n    x = 1\n" * 200
    assert streamed(tokenizer, text, 16)[2] == streamed(tokenizer, text[:500], 16)[2] < 30
    assert streamed(tokenizer, "a" * 1000 + " b", 16)[2] == 992  # one pre-token is held whole: 62 blocks of 16


def encode_stream(tokenizer, f, block_chars):
    carry = ""
    while True:
        block = f.read(block_chars)
        if not block:
            yield from tokenizer.encode(carry)
            return
        text = carry + block
        pieces = gpt2_pretokenize(text)
        cut, start = 0, 0
        for piece in pieces[:-1]:
            if start >= len(text) - 3:
                break
            start += len(piece)
            if not piece.isspace():  # alone, a part ending in "\n\n" would be cut otherwise
                cut = start
        yield from tokenizer.encode(text[:cut])
        carry = text[cut:]


def test_a_streaming_encoder_written_from_scratch_passes(capsys):
    check.check_encode_stream(encode_stream)
    out = capsys.readouterr().out
    assert "encode_stream agrees with bpe_lab on 15 cases" in out and "yours held at most" in out


def _blocks_alone(tokenizer, f, block):
    while part := f.read(block):
        yield from tokenizer.encode(part)


def _last_piece_only(tokenizer, f, block):
    carry = ""
    while part := f.read(block):
        text = carry + part
        cut = len(text) - len(gpt2_pretokenize(text)[-1])
        yield from tokenizer.encode(text[:cut])
        carry = text[cut:]
    yield from tokenizer.encode(carry)


def _settled_in_white_space(tokenizer, f, block):
    """The settled part may end in white space: encoded alone, its "\\n\\n" is one pre-token."""
    carry = ""
    while part := f.read(block):
        text = carry + part
        cut = 0
        for piece in gpt2_pretokenize(text)[:-1]:
            if cut >= len(text) - 3:
                break
            cut += len(piece)
        yield from tokenizer.encode(text[:cut])
        carry = text[cut:]
    yield from tokenizer.encode(carry)


def _kept_to_the_end(tokenizer, f, block):
    parts = []
    while part := f.read(block):
        parts.append(part)
    return tokenizer.encode("".join(parts))


@pytest.mark.parametrize(
    ("mistake", "hint"),
    [
        (lambda tok, f, block: tok.encode(f.read()), r"one read handed over 32 characters: read at most"),
        (lambda tok, f, block: (i for line in f for i in tok.encode(line)), "nor a line"),
        (_blocks_alone, r"differ from tokenizer\.encode\(text\) at id 1 .*hold back the last pre-token"),
        (_last_piece_only, r"at id 1 \(near \"'ll say.*starts in the last 3 characters"),
        (_settled_in_white_space, r"never end the part you encode in white space: encoded alone"),
        (_kept_to_the_end, r"the ids are right, but at one read you held 32 bytes .*\(at most 9 here\): yield"),
        (lambda tok, f, block: list(encode_stream(tok, f, block)), "you held 32 bytes"),
        (
            lambda tok, f, block: tok.encode_iterable(f),
            r"calls bpe_lab\.bytelevel\.tokenizer\.Tokenizer\.encode_iterable",
        ),
        (lambda tok, f, block: stream_ids(tok, f, block), r"calls bpe_lab\.grading\.check\.scale\.stream_ids"),
        (lambda tok, f, block: 3, "return \\(or yield\\) the ids"),
    ],
)
def test_each_streaming_mistake_has_its_hint(mistake, hint):
    with pytest.raises(CheckFailed, match=hint):
        check.check_encode_stream(mistake)


# ------------------------------------------------------------------ grading

DELEGATED = {
    "08_scale_find_chunk_boundaries": (
        "def find_chunk_boundaries(data, num_chunks, special_token):\n"
        "    from bpe_lab.grading.check.scale import chunk_boundaries\n"
        "    return chunk_boundaries(data, num_chunks, special_token)",
        "bpe_lab.grading.check.scale.chunk_boundaries",
    ),
    "08_scale_count_chunk": (
        "def count_chunk(text, special_tokens):\n"
        "    import os, tempfile\n"
        "    from bpe_lab.bytelevel.train import count_pretokens\n"
        "    with tempfile.TemporaryDirectory() as folder:\n"
        "        path = os.path.join(folder, 'chunk.txt')\n"
        "        with open(path, 'w', encoding='utf-8', newline='') as f:\n"
        "            f.write(text)\n"
        "        return count_pretokens(path, special_tokens) if text else Counter()",
        "bpe_lab.bytelevel.train.count_pretokens",
    ),
    "08_scale_merge_counts": (
        "import bpe_lab.grading.check.scale as _scale\n"
        "def merge_counts(counts):\n"
        "    return _scale.merged_counts(counts)",
        "bpe_lab.grading.check.scale.merged_counts",
    ),
    "08_scale_encode_stream": (
        "def encode_stream(tokenizer, f, block_chars):\n"
        "    lines = iter(lambda: f.read(block_chars), '')\n"
        "    return tokenizer.encode_iterable(lines, block_chars=block_chars)",
        "bpe_lab.bytelevel.tokenizer.Tokenizer.encode_iterable",
    ),
}


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    return grade_solution_exercise_and(tmp_path_factory, "08_scale", DELEGATED)


def test_the_solution_scores_full_marks_and_the_exercise_zero(reports):
    solution, exercise = reports["solution"], reports["exercise"]
    assert solution.total == 9 and solution.total + solution.pending == solution.max_total == 10, solution.tasks
    assert all(t.passed == t.cases > 1 for t in solution.tasks if not t.pending), solution.tasks
    assert exercise.total == 0, exercise.tasks  # the written answer, left as given, is 0 too


def test_a_delegating_submission_scores_zero_on_each_task_and_names_the_function(reports):
    tasks = {t.grade_id: t for t in reports["delegating"].tasks}
    for gid, (_, path) in DELEGATED.items():
        assert tasks[gid].points == 0, tasks[gid]
        assert path in tasks[gid].message, tasks[gid].message


def test_at_home_held_by_counts_what_a_stream_reads_and_holds():
    """``MeteredText.held_by``, the hidden case the grader measures itself:
    at home it answers from the metered file's own counts."""
    whole = "lambda t, f, b: iter(t.encode(f.read()))"
    assert MeteredText.held_by(lambda t, f, b: stream_ids(t, f, b)) == "bounded"
    assert MeteredText.held_by(eval(whole)) == "read 120090 characters at once (at most 4096)"  # noqa: S307 - ours

    def keeps(tokenizer, f, block):
        blocks = []
        while block_text := f.read(block):
            blocks.append(block_text)
        return iter(tokenizer.encode("".join(blocks)))

    assert MeteredText.held_by(keeps) == "held 120300 bytes (at most 32768)"
    assert MeteredText.held_by(lambda t, f, b: iter(t.encode(f.read(b)))) == "wrong ids"
    with pytest.raises(ValueError, match="held_by: block_chars must be a positive int, not 0"):
        MeteredText.held_by(lambda t, f, b: stream_ids(t, f, b), 0)


def test_the_long_text_is_copies_of_one_unit_held_at_four_bytes_a_character():
    unit = long_text(1)
    assert len(unit) == 4003 and long_text(3) == unit * 3 and long_text(0) == ""
    assert max(map(ord, unit)) > 0xFFFF  # outside the BMP: a str of it takes 4 bytes a character
    with pytest.raises(ValueError, match="long_text: copies must be an int of 0 or more, not -1"):
        long_text(-1)


# ------------------------------------------------------------------ the visible check, decided in the grader

_SOLUTION = nbformat.read(SOLUTION, as_version=4)
_SOLVED = {c.metadata["nbgrader"]["grade_id"]: c.source for c in _SOLUTION.cells if "nbgrader" in c.metadata}
_STREAM_ANSWER = _SOLVED["08_scale_encode_stream_answer"]
#: Right but for blocks of 64 characters, where one id too many comes out: the visible check's eighth
#: case ('short' in blocks of 64) and its last, never a hidden one's (blocks of 1 to 32, and 4096)
_LAST = "    yield from tokenizer.encode(carry)\n"
WRONG_ON_64 = _STREAM_ANSWER.replace(_LAST, _LAST + "    if block_chars == 64:\n        yield 0\n")


@pytest.fixture(scope="module")
def gate(tmp_path_factory):
    return graded_with_no_op_checks(tmp_path_factory, "08_scale", {"08_scale_encode_stream": WRONG_ON_64})


def test_an_answer_wrong_on_a_visible_case_scores_zero_though_the_kernel_made_the_check_a_no_op(gate):
    """Before, check_encode_stream ran for real in the kernel, where a no-op
    replaced it: full marks. Now the grader judges what
    ``check.stream_results`` sent back. The answer passes every hidden case
    and fails the check at home: the 0 is the visible case's doing."""
    assert _LAST in _STREAM_ANSWER
    namespace: dict[str, object] = {}
    exec(_SOLVED["08_scale_setup"], namespace)  # noqa: S102 - the solution's own setup
    exec(WRONG_ON_64, namespace)  # noqa: S102 - the test's own submission
    task = next(t for t in load_tasks(_SOLUTION) if t.grade_id == "08_scale_encode_stream")
    for case in fixed_and_generated(task):
        if "held_by" not in case.call:  # the measured case: a figure only the grader takes
            assert eval(case.call, namespace) == case.expected, case.call  # noqa: S307 - our own calls
    with pytest.raises(CheckFailed, match=r"^encode_stream\(tokenizer, 'short', 64\): the ids differ"):
        check.check_encode_stream(namespace["encode_stream"])
    stream = gate["08_scale_encode_stream"]
    assert stream.points == 0, gate
    assert stream.message.startswith(
        "the self-check check.check_encode_stream failed on case 8: encode_stream(tokenizer, 'short', 64) returned a "
        "wrong value: the ids differ"
    ), stream.message
