"""The learners' self-checks: the package's own functions pass them, and each
classic mistake fails with its own specific hint (pinned here, so a hint
cannot silently turn generic)."""

from __future__ import annotations

import pytest

from bpe_lab import (
    compress,
    count_pairs,
    decode_words,
    decompress,
    encode_word,
    longest_match,
    merge_symbols,
    train_bpe,
)
from bpe_lab.grading import check
from bpe_lab.grading.check import TEXTBOOK_CORPUS, CheckFailed, Mistake, find_first_mistake
from bpe_lab.variants.compression import Compressed

# ------------------------------------------------------------ references pass


def _compress(data):
    packed = compress(data)
    return packed.data, dict(packed.table)


def _first_mistake(word_freq, trace):
    m = find_first_mistake(word_freq, trace)
    return None if m is None else (m.round, m.expected_pair, m.expected_count)


def _merge_and_update(corpus, counts, pair):
    new = {merge_symbols(s, pair): f for s, f in corpus.items()}
    return new, count_pairs(new)


def _bytelevel_setup():
    from bpe_lab.bytelevel.train import train_bytelevel
    from bpe_lab.core.corpora import DATA_DIR

    special = ["<|endoftext|>"]
    vocab, merges = train_bytelevel(DATA_DIR / "python_docs.txt", 300, special)
    return vocab, merges, special


REFERENCES = {
    "most_frequent_pair": lambda: check.check_most_frequent_pair(
        lambda d: (compress(d, max_rounds=1).rounds[0].pair, compress(d, max_rounds=1).rounds[0].count)
    ),
    "compress": lambda: check.check_compress(_compress),
    "decompress": lambda: check.check_decompress(lambda data, table: decompress(Compressed(data, table, (), 0))),
    "count_pairs": lambda: check.check_count_pairs(count_pairs),
    "merge_pair": lambda: check.check_merge_pair(merge_symbols),
    "train": lambda: check.check_train(train_bpe),
    "first_mistake": lambda: check.check_first_mistake(_first_mistake),
    "encode_word": lambda: check.check_encode_word(encode_word),
    "decode": lambda: check.check_decode(decode_words),
    "pair_deltas": lambda: check.check_pair_deltas(check._deltas),
    "merge_and_update": lambda: check.check_merge_and_update(_merge_and_update),
    "longest_match": lambda: check.check_longest_match(longest_match),
}


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_the_package_passes_its_own_checks(name, capsys):
    REFERENCES[name]()
    assert capsys.readouterr().out.startswith(f"✔ {name} agrees with bpe_lab on ")


def test_the_byte_level_references_pass(capsys):
    from bpe_lab.bytelevel.byte_map import bytes_to_unicode
    from bpe_lab.bytelevel.tokenizer import Tokenizer
    from bpe_lab.variants.sentencepiece import sp_decode
    from bpe_lab.variants.unigram import viterbi

    vocab, merges, special = _bytelevel_setup()
    check.check_bytes_to_unicode(bytes_to_unicode)
    check.check_encode_bytelevel(lambda t, v, m, s: Tokenizer(v, m, s).encode(t), vocab, merges, special)
    check.check_decode_bytelevel(lambda ids, v: Tokenizer(v, merges, special).decode(ids), vocab, merges, special)
    check.check_viterbi(lambda word, logprobs: viterbi(word, logprobs)[0])
    check.check_sp_decode(sp_decode)
    assert capsys.readouterr().out.count("✔") == 5


def test_checks_print_the_same_thing_every_run(capsys):
    check.check_train(train_bpe)
    check.check_first_mistake(_first_mistake)
    first = capsys.readouterr().out
    check.check_train(train_bpe)
    check.check_first_mistake(_first_mistake)
    assert capsys.readouterr().out == first


# ------------------------------------------------------------ classic mistakes


def _unweighted(corpus):
    return count_pairs({symbols: 1 for symbols in corpus})


def _right_to_left(symbols, pair):
    out, i = list(symbols), len(symbols) - 2
    while i >= 0:
        if (out[i], out[i + 1]) == pair:
            out[i : i + 2] = [pair[0] + pair[1]]
        i -= 1
    return tuple(out)


def _by_string(symbols, pair):
    return tuple(" ".join(symbols).replace(" ".join(pair), "".join(pair)).split(" "))


def _no_marker_encode(word, merges):
    ranks = {p: r for r, p in enumerate(merges)}
    symbols = tuple(word)
    while len(symbols) > 1:
        best = min(zip(symbols, symbols[1:]), key=lambda p: ranks.get(p, len(ranks)))
        if best not in ranks:
            break
        symbols = merge_symbols(symbols, best)
    return list(symbols)


def _overlapping_gage(data):
    counts = {}
    for pair in zip(data, data[1:]):
        counts[pair] = counts.get(pair, 0) + 1
    best = max(counts.values())
    return next((p, c) for p, c in counts.items() if c == best)


def _forward_decompress(data, table):
    for code in table:
        data = data.replace(bytes([code]), bytes(table[code]))
    return data


def _stub(*args):
    raise NotImplementedError()


MISTAKES = [
    (
        check.check_count_pairs,
        _unweighted,
        "you counted each pair once per word: weight every occurrence by the word's frequency",
    ),
    (
        check.check_count_pairs,
        lambda c: (
            {p: n for p, n in count_pairs(c).items() if p[0] != p[1]}
            | {p: n - 1 for p, n in count_pairs(c).items() if p[0] == p[1]}
        ),
        "count overlapping occurrences too",
    ),
    (
        check.check_merge_pair,
        _right_to_left,
        "skip an occurrence that overlaps one already joined: ('a', 'a', 'a', 'a') becomes ('aa', 'aa')",
    ),
    (check.check_merge_pair, _by_string, "join only whole symbols"),
    (
        check.check_train,
        lambda wf, n: train_bpe(wf, n, tie_break="lexicographic"),
        "round 1: expected ('e', 's') with count 9, got ('t', '</w>') (count 9): ties go to the pair met first",
    ),
    (
        check.check_train,
        lambda wf, n: train_bpe(wf, n, end_of_word=None),
        "every word ends with the end-of-word marker '</w>'",
    ),
    (check.check_train, lambda wf, n: train_bpe(dict.fromkeys(wf, 1), n), "weight every pair by its word's frequency"),
    (check.check_encode_word, longest_match, "that is longest match; BPE replays the merges by rank"),
    (check.check_encode_word, _no_marker_encode, "the end-of-word marker is lost"),
    (check.check_decode, lambda s: "".join(s).replace("</w>", " "), "nothing after the last word"),
    (check.check_most_frequent_pair, _overlapping_gage, "count non-overlapping occurrences"),
    (check.check_decompress, _forward_decompress, "expand the newest code first"),
    (
        check.check_first_mistake,
        lambda wf, t: (lambda m: m and (m[0] - 1, m[1], m[2]))(_first_mistake(wf, t)),
        "number the rounds from 1",
    ),
    (check.check_longest_match, encode_word, "that is BPE's rank replay"),
    (check.check_train, _stub, "train is not written yet: replace `raise NotImplementedError()`"),
    (check.check_count_pairs, lambda c: 1 / 0, "raised ZeroDivisionError"),
]


@pytest.mark.parametrize(
    "run_check, wrong, hint", MISTAKES, ids=[f"{m[0].__name__}-{i}" for i, m in enumerate(MISTAKES)]
)
def test_a_classic_mistake_fails_with_its_hint(run_check, wrong, hint):
    with pytest.raises(CheckFailed) as failure:
        run_check(wrong)
    assert hint in str(failure.value)


def test_a_failed_check_is_an_assertion_error():
    assert issubclass(CheckFailed, AssertionError)


# ------------------------------------------------------------ find the mistake


def test_the_count_7_over_count_9_trace_is_wrong_in_round_3():
    published = [(("e", "s"), 9), (("es", "t"), 9), (("o", "w"), 7)]
    assert find_first_mistake(TEXTBOOK_CORPUS, published) == Mistake(3, ("est", "</w>"), 9, ("o", "w"), 7)


def test_a_trace_starting_with_l_o_is_wrong_in_round_1():
    assert find_first_mistake(TEXTBOOK_CORPUS, [(("l", "o"), 7)]) == Mistake(1, ("e", "s"), 9, ("l", "o"), 7)


def test_a_right_pair_with_a_wrong_count_is_a_mistake():
    mistake = find_first_mistake(TEXTBOOK_CORPUS, [(("e", "s"), 4)])
    assert mistake.round == 1 and "its count is 9, not 4" in str(mistake)


def test_a_right_trace_has_no_mistake_and_lists_are_accepted_as_pairs():
    trace = [([a, b], c) for (a, b), c in [(("e", "s"), 9), (("es", "t"), 9), (("est", "</w>"), 9)]]
    assert find_first_mistake(TEXTBOOK_CORPUS, trace) is None


def test_a_trace_longer_than_training_allows_is_a_mistake():
    mistake = find_first_mistake({"ab": 1}, [(("a", "b"), 1), (("ab", "</w>"), 1), (("x", "y"), 1)])
    assert mistake == Mistake(3, None, None, ("x", "y"), 1)


def test_the_lowest_encoding_that_loses_the_marker_is_caught():
    merges = train_bpe(TEXTBOOK_CORPUS, 10)
    assert encode_word("lowest", merges) == ["low", "est</w>"]
    with pytest.raises(CheckFailed, match=r"'lowest'.*\['low', 'est</w>'\], got \['low', 'est'\]"):
        check.check_encode_word(_no_marker_encode)
