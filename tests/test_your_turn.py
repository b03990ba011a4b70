"""The notebooks' "your turn" self-checks: each passes a model answer and
names the mistake in the typical wrong ones.

Notebooks 01-04 and 07 end a section with one small step of the idea it
taught (the exercise's task 1 is the graded whole): one pair replaced
(``replace_pair``, 01), one pair's weighted count (``pair_count``, 02), the
pair one step of rank replay joins (``lowest_ranked_pair``, 03), the heap's
lazy deletion (``pop_best``, 04), cl100k's groups of digits
(``split_number``, 07) and one chunk boundary moved to the next special
token (``next_token_start``, 08). The model answers below are what a learner might
write, not calls of the references; the references are pinned to
hand-worked values and to the package (``compress``, ``count_pairs``,
``encode_steps``, ``train_fast``'s heap order, cl100k's pattern).
"""

from __future__ import annotations

import heapq
import random
import re
from pathlib import Path

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from your_turn_support import audit_your_turn

from bpe_lab.core.corpora import TEXTBOOK_CORPUS
from bpe_lab.core.encode import merge_ranks
from bpe_lab.core.symbols import END_OF_WORD
from bpe_lab.core.train import count_pairs, train_bpe
from bpe_lab.core.words import corpus_from_word_freq
from bpe_lab.grading.check import CheckFailed
from bpe_lab.grading.check.complexity import check_pop_best, popped_best
from bpe_lab.grading.check.compression import REPLACE_CASES, check_replace_pair, replaced
from bpe_lab.grading.check.encoding import check_lowest_ranked_pair, lowest_ranked
from bpe_lab.grading.check.scale import NEXT_START_CASES, check_next_token_start, token_start_after
from bpe_lab.grading.check.training import check_pair_count
from bpe_lab.grading.check.wild import NUMBER_CASES, check_split_number, number_groups
from bpe_lab.ui.steps import encode_steps
from bpe_lab.variants.compression import compress


def fails(check, fn, *fragments: str) -> str:
    """The check's message for ``fn``, which must contain every fragment."""
    with pytest.raises(CheckFailed) as failure:
        check(fn)
    message = str(failure.value)
    for fragment in fragments:
        assert fragment in message, message
    return message


def raises_not_implemented(*args):
    raise NotImplementedError()


# ------------------------------------------------------------ 01: replace_pair


def replace_pair(data: bytes, pair: tuple[int, int], code: int) -> bytes:
    out, i = bytearray(), 0
    while i < len(data):
        if i + 1 < len(data) and (data[i], data[i + 1]) == pair:
            out.append(code)
            i += 2
        else:
            out.append(data[i])
            i += 1
    return bytes(out)


def test_replaced_is_pinned_to_hand_worked_cases_and_to_compress():
    expected = [b"\x00\x00c\x00\x00c\x00", b"\x00a", b"\x01\x01", b"ab\x02bc", b"abc", b"\x01c\x01c\x00"]
    assert [replaced(*case) for case in REPLACE_CASES] == expected
    generator = random.Random(1)
    for _ in range(200):
        data = bytes(generator.choice(b"abc") for _ in range(generator.randint(2, 30)))
        packed = compress(data, max_rounds=1)
        if packed.rounds:
            assert replaced(data, packed.rounds[0].pair, packed.rounds[0].byte) == packed.data


def test_replace_pair_check(capsys):
    check_replace_pair(replace_pair)
    assert capsys.readouterr().out.startswith("✔ replace_pair agrees with bpe_lab on 26 cases")
    fails(check_replace_pair, raises_not_implemented, "replace_pair is not written yet")

    def no_skip(data, pair, code):
        return bytes(code if (a, b) == pair else a for a, b in zip(data, data[1:] + b"\xff"))

    fails(
        check_replace_pair,
        no_skip,
        "replace_pair(b'ababcababcab', (97, 98), 0): expected b'\\x00\\x00c\\x00\\x00c\\x00', got b'\\x00b\\x00bc",
        "go on after both bytes of the pair",
    )
    fails(
        check_replace_pair,
        lambda data, pair, code: data.replace(bytes(pair), bytes([code]), 1),
        "replace_pair(b'ababcababcab', (97, 98), 0)",
        "replace every occurrence, not only the first",
    )
    fails(
        check_replace_pair,
        lambda data, pair, code: replaced(data[::-1], pair[::-1], code)[::-1],
        "replace_pair(b'aaa', (97, 97), 0): expected b'\\x00a', got b'a\\x00': scan from the left",
    )
    fails(check_replace_pair, lambda data, pair, code: list(replaced(data, pair, code)), "return bytes (bytes(")
    fails(check_replace_pair, lambda data, pair, code: data, "nothing was replaced")


# ------------------------------------------------------------ 02: pair_count


def pair_count(corpus: dict[tuple[str, ...], int], pair: tuple[str, str]) -> int:
    return sum(freq for symbols, freq in corpus.items() for p in zip(symbols, symbols[1:]) if p == pair)


def test_pair_count_check(capsys):
    textbook = corpus_from_word_freq(TEXTBOOK_CORPUS)
    assert [pair_count(textbook, p) for p in [("e", "s"), ("w", "e"), ("l", "o"), ("o", "l")]] == [9, 8, 7, 0]
    check_pair_count(pair_count)
    assert capsys.readouterr().out.startswith("✔ pair_count agrees with bpe_lab on 22 cases")
    fails(check_pair_count, raises_not_implemented, "pair_count is not written yet")
    fails(
        check_pair_count,
        lambda corpus, pair: sum(1 for s in corpus for p in zip(s, s[1:]) if p == pair),
        "('e', 's')): expected 9, got 2: weight each occurrence by its word's frequency",
    )
    fails(
        check_pair_count,
        lambda corpus, pair: sum(f for s, f in corpus.items() if pair in zip(s, s[1:])),
        "('a', 'a')): expected 3, got 1: count every occurrence in a word, overlapping ones too",
    )
    fails(
        check_pair_count,
        lambda corpus, pair: sum(f * "".join(s).count("".join(pair)) for s, f in corpus.items()),
        "('a', 'a')): expected 3, got 2: str.count skips overlapping occurrences",
    )

    def joined_overlapping(corpus, pair):
        text = "".join(pair)
        return sum(f * len(re.findall(f"(?={re.escape(text)})", "".join(s))) for s, f in corpus.items())

    fails(
        check_pair_count,
        joined_overlapping,
        "('b', 'c')): expected 0, got 4: count pairs of whole adjacent symbols",
    )
    fails(check_pair_count, lambda corpus, pair: str(pair_count(corpus, pair)), "return the count, an int")


@settings(max_examples=50, deadline=None)
@given(st.dictionaries(st.text("abc", min_size=1, max_size=6), st.integers(1, 9), min_size=1, max_size=6))
def test_pair_count_model_answer_is_one_entry_of_count_pairs(word_freq):
    corpus = corpus_from_word_freq(word_freq)
    for pair, count in count_pairs(corpus).items():
        assert pair_count(corpus, pair) == count


# ------------------------------------------------------------ 03: lowest_ranked_pair


def lowest_ranked_pair(symbols: list[str], ranks: dict[tuple[str, str], int]) -> tuple[str, str] | None:
    best = None
    for pair in zip(symbols, symbols[1:]):
        if pair in ranks and (best is None or ranks[pair] < ranks[best]):
            best = pair
    return best


def test_lowest_ranked_is_the_step_encode_steps_takes():
    merges = train_bpe(TEXTBOOK_CORPUS, 7)
    ranks = merge_ranks(merges)
    assert lowest_ranked(list("lowest") + [END_OF_WORD], ranks) == ("e", "s")
    assert lowest_ranked(["low", "est</w>"], ranks) is None
    assert lowest_ranked(["x", "ab", "c"], {("b", "c"): 0}) is None
    for word in ["lowest", "nest", "newer", "widow", "slowest", "xylophone"]:
        for step in encode_steps(word, merges):
            assert lowest_ranked(list(step.symbols), ranks) == step.best


def test_lowest_ranked_pair_check(capsys):
    check_lowest_ranked_pair(lowest_ranked_pair)
    assert capsys.readouterr().out.startswith("✔ lowest_ranked_pair agrees with bpe_lab on")
    fails(check_lowest_ranked_pair, raises_not_implemented, "lowest_ranked_pair is not written yet")

    def leftmost(symbols, ranks):
        return next((p for p in zip(symbols, symbols[1:]) if p in ranks), None)

    fails(
        check_lowest_ranked_pair,
        leftmost,
        "lowest_ranked_pair(['a', 'b', 'c', 'd'], {('a', 'b'): 1, ('b', 'c'): 2, ('c', 'd'): 0}): "
        "expected ('c', 'd'), got ('a', 'b'): rank decides, not position: ",
        "('a', 'b') comes first in the word but has rank 1",
    )

    def highest(symbols, ranks):
        ranked = [p for p in zip(symbols, symbols[1:]) if p in ranks]
        return max(ranked, key=ranks.get) if ranked else None

    fails(check_lowest_ranked_pair, highest, "expected ('c', 'd'), got ('b', 'c'): take the lowest rank")

    def in_the_text(symbols, ranks):
        text = "".join(symbols)
        found = [p for p in ranks if "".join(p) in text]
        return min(found, key=ranks.get) if found else None

    fails(
        check_lowest_ranked_pair,
        in_the_text,
        "lowest_ranked_pair(['l', 'o', 'w', 'es', 't', '</w>'], ",
        "expected ('es', 't'), got ('e', 's'): ('e', 's') is not two adjacent whole symbols here",
    )
    fails(
        check_lowest_ranked_pair,
        lambda symbols, ranks: lowest_ranked_pair(symbols, ranks) or (),
        "expected None, got (): no adjacent pair has a rank: return None",
    )
    fails(
        check_lowest_ranked_pair,
        lambda symbols, ranks: ranks.get(lowest_ranked_pair(symbols, ranks)),
        "expected ('c', 'd'), got 0: return the pair, not its rank",
    )


# ------------------------------------------------------------ 04: pop_best


def pop_best(heap: list[tuple[int, tuple[str, str]]], counts: dict[tuple[str, str], int]) -> tuple[str, str] | None:
    while heap:
        negated, pair = heapq.heappop(heap)
        if counts.get(pair, 0) == -negated:
            return pair
    return None


def test_popped_best_is_pinned_to_hand_worked_cases():
    we, lo = ("w", "e"), ("l", "o")
    heap = [(-8, we), (-7, lo), (-2, we)]
    assert popped_best(heap, {we: 2, lo: 7}) == (lo, [(-2, we)])
    assert heap == [(-8, we), (-7, lo), (-2, we)]  # the reference works on a copy
    assert popped_best([(-4, ("a", "b"))], {}) == (None, [])
    assert popped_best([(-3, ("a", "b")), (-3, ("b", "c"))], {("a", "b"): 3, ("b", "c"): 3})[0] == ("a", "b")


def test_pop_best_check(capsys):
    check_pop_best(pop_best)
    assert capsys.readouterr().out.startswith("✔ pop_best agrees with bpe_lab on 26 cases")
    fails(check_pop_best, raises_not_implemented, "pop_best is not written yet")
    fails(
        check_pop_best,
        lambda heap, counts: heapq.heappop(heap)[1] if heap else None,
        "pop_best([(-8, ('w', 'e')), (-7, ('l', 'o')), (-2, ('w', 'e'))], {('w', 'e'): 2, ('l', 'o'): 7}): "
        "expected ('l', 'o'), got ('w', 'e'): the top entry says ('w', 'e') has 8, but its count is now 2",
    )

    def membership_only(heap, counts):
        while heap:
            _, pair = heapq.heappop(heap)
            if pair in counts:
                return pair
        return None

    fails(
        check_pop_best, membership_only, "got ('w', 'e'): the top entry says ('w', 'e') has 8, but its count is now 2"
    )

    def without_popping(heap, counts):
        current = [(n, p) for n, p in heap if counts.get(p, 0) == -n]
        return min(current)[1] if current else None

    fails(
        check_pop_best,
        without_popping,
        "the pair is right, but the heap is left as [(-9, ('e', 's')), (-7, ('l', 'o'))], expected [(-7, ('l', 'o'))]",
        "heapq.heappop every entry you look at",
    )
    fails(
        check_pop_best,
        lambda heap, counts: heapq.heappop(heap) if heap else None,
        "expected ('e', 's'), got (-9, ('e', 's')): return the pair, not the heap entry",
    )


# ------------------------------------------------------------ 07: split_number


def split_number(number: str) -> list[str]:
    return [number[i : i + 3] for i in range(0, len(number), 3)]


def test_number_groups_are_cl100k_s_and_pinned():
    assert [number_groups(n) for n in NUMBER_CASES[:3]] == [["202", "4"], ["802", "35"], ["123", "456", "7"]]
    digits = regex.compile(r"\p{N}+")
    sentence = "12345 + 67890 = 80235, 1000000 and ١٢٣٤٥"
    from bpe_lab.core.patterns import pretokenize_with

    assert [p for p in pretokenize_with(sentence, "cl100k") if digits.fullmatch(p)] == [
        g for run in digits.findall(sentence) for g in number_groups(run)
    ]


def test_split_number_check(capsys):
    check_split_number(split_number)
    assert capsys.readouterr().out.startswith("✔ split_number agrees with bpe_lab on 28 cases")
    fails(check_split_number, raises_not_implemented, "split_number is not written yet")

    def from_the_right(number):
        head = len(number) % 3
        return ([number[:head]] if head else []) + [number[i : i + 3] for i in range(head, len(number), 3)]

    fails(
        check_split_number,
        from_the_right,
        "split_number('2024'): expected ['202', '4'], got ['2', '024']: group from the left",
    )
    fails(
        check_split_number,
        lambda number: [number],
        "split_number('2024'): expected ['202', '4'], got ['2024']: that is GPT-2's rule",
    )
    fails(
        check_split_number,
        lambda number: [number[i : i + 2] for i in range(0, len(number), 2)],
        "split_number('2024'): expected ['202', '4'], got ['20', '24']: take three digits at a time from the left",
    )
    fails(check_split_number, lambda number: number[:3], "return a list of strings")
    fails(check_split_number, lambda number: [number[:3]], "the groups must join back to the number")


# ------------------------------------------------------------ 08: next_token_start


def next_token_start(data: bytes, guess: int, special_token: bytes) -> int:
    at = data.find(special_token, guess)
    return len(data) if at < 0 else at


def test_token_start_after_is_pinned_to_hand_worked_cases_and_to_chunk_boundaries():
    assert [token_start_after(*case) for case in NEXT_START_CASES] == [9, 28, 7, 28, 0, 8240, 7]
    from bpe_lab.grading.check.scale import chunk_boundaries

    data = b"one<|endoftext|>two three<|endoftext|>four five six<|endoftext|>"
    size = len(data) // 4
    cuts = sorted({0, len(data), *(token_start_after(data, i * size, b"<|endoftext|>") for i in (1, 2, 3))})
    assert cuts == chunk_boundaries(data, 4, b"<|endoftext|>") == [0, 25, 51, 64]


def test_next_token_start_check(capsys):
    check_next_token_start(next_token_start)
    assert capsys.readouterr().out.startswith("✔ next_token_start agrees with bpe_lab on 19 cases")
    fails(check_next_token_start, raises_not_implemented, "next_token_start is not written yet")
    fails(check_next_token_start, lambda data, guess, token: data.find(token, guess), "got -1: data.find returns -1")
    fails(check_next_token_start, lambda data, guess, token: guess, "got 4: move the guess forward")

    def after_it(data, guess, token):
        at = data.find(token, guess)
        return len(data) if at < 0 else at + len(token)

    fails(check_next_token_start, after_it, "got 22: return where the special token starts, not where it ends")

    def skipping(data, guess, token):
        at = data.find(token, guess + 1)
        return len(data) if at < 0 else at

    fails(check_next_token_start, skipping, "expected 7, got 11: a special token that starts exactly at the guess")

    def in_a_window(data, guess, token):
        at = data.find(token, guess, guess + 4096)
        return len(data) if at < 0 else at

    fails(check_next_token_start, in_a_window, "expected 8240, got 8300: search all the rest of data")
    fails(check_next_token_start, lambda data, guess, token: str(guess), "return one int")


# ------------------------------------------------------------ the notebooks' cells

ROOT = Path(__file__).resolve().parent.parent
YOUR_TURNS = {
    "01": replace_pair,
    "02": pair_count,
    "03": lowest_ranked_pair,
    "04": pop_best,
    "07": split_number,
    "08": next_token_start,
}


@pytest.mark.parametrize("chapter", sorted(YOUR_TURNS))
def test_the_notebooks_your_turn_is_a_step_no_exercise_task_asks_for(chapter, capsys):
    """The committed cell is a checkpoint that says "not written yet"; with
    the model answer in place of its stub, the same cell passes; and the
    exercise of the chapter defines no function of that name."""
    model = YOUR_TURNS[chapter]
    audit_your_turn(chapter, model.__name__, model, capsys)
