"""The learners' self-checks: a correct solution written independently of the
package passes each one, and each classic mistake fails with its own specific
hint (pinned here, so a hint cannot silently turn generic). The references
the checks compare with are pinned to values worked out by hand."""

from __future__ import annotations

import heapq
from collections import Counter

import nbformat
import pytest
import regex

from bpe_lab.core.corpora import DATA_DIR
from bpe_lab.core.encode import encode_word as package_encode_word
from bpe_lab.core.encode import longest_match as package_longest_match
from bpe_lab.core.pretokenize import gpt2_pretokenize, split_special
from bpe_lab.core.train import train_bpe
from bpe_lab.grading import check
from bpe_lab.grading.check import CheckFailed, Mistake, find_first_mistake
from bpe_lab.grading.check.complexity import recount_deltas
from bpe_lab.grading.check.compression import first_round
from bpe_lab.grading.check.instruments import TracedWords, measure_work
from bpe_lab.grading.check.runner import call, run_cases

# ------------------------------------------- solutions written from scratch
# What a learner writes: no bpe_lab function is used, so a check that passes
# them agrees with the exercise's statement, not only with its own reference.


def most_frequent_pair(data):
    best = None
    for pair in dict.fromkeys(zip(data, data[1:])):  # in order of first occurrence
        count = data.count(bytes(pair))  # bytes.count does not overlap
        if best is None or count > best[1]:
            best = (pair, count)
    return best


def compress(data):
    used, table = set(data), {}
    while len(data) > 1:
        pair, count = most_frequent_pair(data)
        free = next((b for b in range(256) if b not in used), None)
        if count < 2 or free is None:
            break
        used.add(free)
        table[free] = pair
        data = data.replace(bytes(pair), bytes([free]))
    return data, table


def decompress(data, table):
    for code in reversed(list(table)):
        data = data.replace(bytes([code]), bytes(table[code]))
    return data


def count_pairs(corpus):
    counts = {}
    for symbols, freq in corpus.items():
        for pair in zip(symbols, symbols[1:]):
            counts[pair] = counts.get(pair, 0) + freq
    return counts


def merge_pair(symbols, pair):
    out, i = [], 0
    while i < len(symbols):
        if tuple(symbols[i : i + 2]) == pair:
            out.append(pair[0] + pair[1])
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return tuple(out)


def _start(word_freq):
    return {tuple(word) + ("</w>",): freq for word, freq in word_freq.items()}


def train(word_freq, num_merges, *, lexicographic=False, end=("</w>",)):
    corpus, merges = {tuple(word) + end: freq for word, freq in word_freq.items()}, []
    for _ in range(num_merges):
        counts = count_pairs(corpus)
        if not counts:
            break
        # the first of the tied pairs met (or, the classic mistake, the greatest)
        pair = max(counts, key=lambda p: (counts[p], p)) if lexicographic else max(counts, key=counts.get)
        merges.append(pair)
        corpus = {merge_pair(s, pair): f for s, f in corpus.items()}
    return merges


def first_mistake(word_freq, trace):
    corpus = _start(word_freq)
    for number, (pair, count) in enumerate(trace, start=1):
        counts = count_pairs(corpus)
        if not counts:
            return (number, None, None)
        best = max(counts, key=counts.get)
        if (tuple(pair), count) != (best, counts[best]):
            return (number, best, counts[best])
        corpus = {merge_pair(s, best): f for s, f in corpus.items()}
    return None


def encode_word(word, merges):
    ranks = {pair: rank for rank, pair in enumerate(merges)}
    symbols = list(word) + ["</w>"]
    while True:
        ranked = [(ranks[p], i) for i, p in enumerate(zip(symbols, symbols[1:])) if p in ranks]
        if not ranked:
            return symbols
        _, i = min(ranked)
        symbols[i : i + 2] = [symbols[i] + symbols[i + 1]]


def decode(symbols):
    return "".join(symbols).replace("</w>", " ").removesuffix(" ")


def pair_deltas(symbols, pair):
    merged = merge_pair(symbols, pair)
    change = Counter(zip(merged, merged[1:]))
    change.subtract(Counter(zip(symbols, symbols[1:])))
    return {p: d for p, d in change.items() if d}


def merge_and_update(corpus, counts, pair):
    counts, merged_corpus = dict(counts), {}
    for symbols, freq in corpus.items():
        for p, d in pair_deltas(symbols, pair).items():
            counts[p] = counts.get(p, 0) + d * freq
            if counts[p] == 0:
                del counts[p]
        merged_corpus[merge_pair(symbols, pair)] = freq
    return merged_corpus, counts


def longest_match(word, merges):
    vocab = {a + b for a, b in merges}
    symbols, out, i = list(word) + ["</w>"], [], 0
    while i < len(symbols):
        j = next(j for j in range(len(symbols), i, -1) if j == i + 1 or "".join(symbols[i:j]) in vocab)
        out.append("".join(symbols[i:j]))
        i = j
    return out


def viterbi(word, logprobs):
    symbols = list(word) + ["</w>"]
    best = [(0.0, 0)] + [(float("-inf"), 0)] * len(symbols)
    for j in range(1, len(symbols) + 1):
        for i in range(j):
            piece = "".join(symbols[i:j])
            if piece in logprobs and best[i][0] + logprobs[piece] > best[j][0]:
                best[j] = (best[i][0] + logprobs[piece], i)
    pieces, j = [], len(symbols)
    while j:
        pieces.append("".join(symbols[best[j][1] : j]))
        j = best[j][1]
    return pieces[::-1]


def sp_decode(symbols):
    return "".join(symbols).replace("\u2581", " ").removeprefix(" ")


def bytes_to_unicode():
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    others = [b for b in range(256) if b not in printable]
    return {**{b: chr(b) for b in printable}, **{b: chr(256 + n) for n, b in enumerate(others)}}


def encode_bytelevel(text, vocab, merges, special_tokens):
    id_of = {token: i for i, token in vocab.items()}
    ranks = {pair: rank for rank, pair in enumerate(merges)}
    ids = []
    for piece, special in split_special(text, special_tokens):
        for word in [piece] if special else gpt2_pretokenize(piece):
            if special:
                ids.append(id_of[word.encode()])
                continue
            parts = [bytes([b]) for b in word.encode()]
            while True:
                ranked = [(ranks[p], i) for i, p in enumerate(zip(parts, parts[1:])) if p in ranks]
                if not ranked:
                    break
                _, i = min(ranked)
                parts[i : i + 2] = [parts[i] + parts[i + 1]]
            ids.extend(id_of[p] for p in parts)
    return ids


def decode_bytelevel(ids, vocab):
    return b"".join(vocab[i] for i in ids).decode("utf-8", errors="replace")


def build_index(words):
    counts, index = {}, {}
    for i, (symbols, freq) in enumerate(words):
        for a, b in zip(symbols, symbols[1:]):
            counts[a, b] = counts.get((a, b), 0) + freq
            index.setdefault((a, b), set()).add(i)
    return counts, index


def merge_indexed(words, counts, index, pair):
    changed = set()
    for i in sorted(index.get(pair, ())):
        symbols, freq = words[i]
        merged = merge_pair(symbols, pair)
        old, new = Counter(zip(symbols, symbols[1:])), Counter(zip(merged, merged[1:]))
        for p in old.keys() | new.keys():
            if new[p] != old[p]:
                counts[p] = counts.get(p, 0) + (new[p] - old[p]) * freq
                changed.add(p)
                if counts[p] == 0:
                    del counts[p]
            if p not in new:
                index[p].discard(i)
                if not index[p]:
                    del index[p]
            elif p not in old:
                index.setdefault(p, set()).add(i)
        words[i] = (merged, freq)
    return changed


def _heap_key(pair):
    return tuple(tuple(-ord(c) for c in symbol) + (1,) for symbol in pair)


def train_indexed(words, num_merges, *, lazy=True):
    counts, index = build_index(words)
    heap = [(-c, _heap_key(p), p) for p, c in counts.items()]
    heapq.heapify(heap)
    merges = []
    while heap and len(merges) < num_merges:
        negative, _, pair = heapq.heappop(heap)
        if lazy and counts.get(pair) != -negative:
            continue
        if pair not in counts:
            continue
        merges.append(pair)
        for p in merge_indexed(words, counts, index, pair):
            if p in counts:
                heapq.heappush(heap, (-counts[p], _heap_key(p), p))
    return merges


def train_bytelevel(path, vocab_size, special_tokens, *, tie=max, cut=True, pretokenize=True, base=256):
    text = open(path, encoding="utf-8").read()
    words = Counter()
    for piece, special in split_special(text, special_tokens if cut else []):
        if not special:
            for token in gpt2_pretokenize(piece) if pretokenize else [piece]:
                words[tuple(bytes([b]) for b in token.encode())] += 1
    vocab = {i: bytes([i]) for i in range(base)}
    vocab.update({base + k: s.encode() for k, s in enumerate(special_tokens)})
    merges = []
    while len(vocab) < vocab_size:
        counts = Counter()
        for word, n in words.items():
            for pair in zip(word, word[1:]):
                counts[pair] += n
        if not counts:
            break
        top = max(counts.values())
        pair = tie([p for p, n in counts.items() if n == top])
        merges.append(pair)
        vocab[len(vocab)] = pair[0] + pair[1]
        words = Counter({_join_bytes(w, pair): n for w, n in words.items()})
    return vocab, merges


def _join_bytes(word, pair):
    out, i = [], 0
    while i < len(word):
        if word[i : i + 2] == pair:
            out.append(pair[0] + pair[1])
            i += 2
        else:
            out.append(word[i])
            i += 1
    return tuple(out)


def han_pretokenize(text):
    return regex.findall(r"\p{Han}+|[^\S\n]*\n|\s+(?!\S)|\s+|[^\s\p{Han}]+", text)


@pytest.fixture(scope="module")
def bytelevel_setup():
    from bpe_lab.bytelevel.train import train_bytelevel

    special = ["<|endoftext|>"]
    vocab, merges = train_bytelevel(DATA_DIR / "python_docs.txt", 300, special)
    return vocab, merges, special


SOLVED = {
    "most_frequent_pair": (check.check_most_frequent_pair, most_frequent_pair),
    "compress": (check.check_compress, compress),
    "decompress": (check.check_decompress, decompress),
    "count_pairs": (check.check_count_pairs, count_pairs),
    "merge_pair": (check.check_merge_pair, merge_pair),
    "train": (check.check_train, train),
    "first_mistake": (check.check_first_mistake, first_mistake),
    "encode_word": (check.check_encode_word, encode_word),
    "decode": (check.check_decode, decode),
    "pair_deltas": (check.check_pair_deltas, pair_deltas),
    "merge_and_update": (check.check_merge_and_update, merge_and_update),
    "longest_match": (check.check_longest_match, longest_match),
    "viterbi": (check.check_viterbi, viterbi),
    "sp_decode": (check.check_sp_decode, sp_decode),
    "bytes_to_unicode": (check.check_bytes_to_unicode, bytes_to_unicode),
    "build_index": (check.check_build_index, build_index),
    "merge_indexed": (check.check_merge_indexed, merge_indexed),
    "train_indexed": (check.check_train_indexed, train_indexed),
    "train_bytelevel": (check.check_train_bytelevel, train_bytelevel),
}


@pytest.mark.parametrize("name", sorted(SOLVED))
def test_a_solution_written_from_scratch_passes(name, capsys):
    run_check, solution = SOLVED[name]
    run_check(solution)
    assert capsys.readouterr().out.startswith(f"✔ {name} agrees with bpe_lab on ")


def test_byte_level_solutions_written_from_scratch_pass(bytelevel_setup, capsys):
    vocab, merges, special = bytelevel_setup
    check.check_encode_bytelevel(encode_bytelevel, vocab, merges, special)
    check.check_decode_bytelevel(decode_bytelevel, vocab, merges, special)
    assert capsys.readouterr().out.splitlines() == [
        "✔ encode agrees with bpe_lab on 15 cases",
        "✔ decode agrees with bpe_lab on 18 cases",
    ]


def test_checks_print_the_same_thing_every_run(capsys):
    for _ in range(2):
        check.check_train(train)
        check.check_first_mistake(first_mistake)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4 and lines[:2] == lines[2:]


def test_checking_never_warns_about_its_own_short_training_runs(recwarn):
    check.check_train(train)
    check.check_first_mistake(first_mistake)
    check.check_encode_word(encode_word)
    check.check_viterbi(viterbi)
    assert [str(w.message) for w in recwarn] == []


# ---------------------------------------------- references, worked by hand


def test_gages_first_round_counts_runs_without_overlap():
    assert first_round(b"aaaa") == ((97, 97), 2)
    assert first_round(b"abababcab") == ((97, 98), 4)
    assert first_round(b"abc") is None  # no pair occurs twice


def test_merging_bc_in_abcbc_changes_five_pair_counts():
    # before: AB 1, BC 2, CB 1; after A BC BC: (A, BC) 1, (BC, BC) 1
    expected = {("A", "B"): -1, ("B", "C"): -2, ("C", "B"): -1, ("A", "BC"): 1, ("BC", "BC"): 1}
    assert recount_deltas(("A", "B", "C", "B", "C"), ("B", "C")) == expected


def test_merging_aa_in_aaaa_loses_three_and_gains_one():
    assert recount_deltas(("a", "a", "a", "a"), ("a", "a")) == {("a", "a"): -3, ("aa", "aa"): 1}
    assert recount_deltas(("l", "o", "w", "</w>"), ("e", "s")) == {}


def test_the_count_7_over_count_9_trace_is_wrong_in_round_3(textbook_corpus):
    published = [(("e", "s"), 9), (("es", "t"), 9), (("o", "w"), 7)]
    assert find_first_mistake(textbook_corpus, published) == Mistake(3, ("est", "</w>"), 9, ("o", "w"), 7)


def test_a_trace_starting_with_l_o_is_wrong_in_round_1(textbook_corpus):
    assert find_first_mistake(textbook_corpus, [(("l", "o"), 7)]) == Mistake(1, ("e", "s"), 9, ("l", "o"), 7)


def test_a_right_pair_with_a_wrong_count_is_a_mistake(textbook_corpus):
    mistake = find_first_mistake(textbook_corpus, [(("e", "s"), 4)])
    assert mistake.round == 1 and "its count is 9, not 4" in str(mistake)


def test_a_right_trace_has_no_mistake_and_lists_are_accepted_as_pairs(textbook_corpus):
    trace = [([a, b], c) for (a, b), c in [(("e", "s"), 9), (("es", "t"), 9), (("est", "</w>"), 9)]]
    assert find_first_mistake(textbook_corpus, trace) is None


def test_a_trace_longer_than_training_allows_is_a_mistake():
    mistake = find_first_mistake({"ab": 1}, [(("a", "b"), 1), (("ab", "</w>"), 1), (("x", "y"), 1)])
    assert mistake == Mistake(3, None, None, ("x", "y"), 1)
    assert str(mistake) == "round 3: no pair is left to merge, but the trace merges ('x', 'y')"


# ------------------------------------------------------------ classic mistakes


def _unweighted(corpus):
    return count_pairs(dict.fromkeys(corpus, 1))


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
    return _replay(list(word), merges)


def _replay(symbols, merges):
    ranks = {p: r for r, p in enumerate(merges)}
    while True:
        ranked = [(ranks[p], i) for i, p in enumerate(zip(symbols, symbols[1:])) if p in ranks]
        if not ranked:
            return symbols
        _, i = min(ranked)
        symbols[i : i + 2] = [symbols[i] + symbols[i + 1]]


def _overlapping_gage(data):
    counts = Counter(zip(data, data[1:]))
    return counts.most_common(1)[0]


def _forward_decompress(data, table):
    for code in table:
        data = data.replace(bytes([code]), bytes(table[code]))
    return data


def _lexicographic_train(word_freq, num_merges):
    return train(word_freq, num_merges, lexicographic=True)


def _greedy_viterbi(word, logprobs):
    """The longest piece in the model first, from the left."""
    symbols, vocab, out, i = list(word) + ["</w>"], logprobs, [], 0
    while i < len(symbols):
        j = next(j for j in range(len(symbols), i, -1) if "".join(symbols[i:j]) in vocab or j == i + 1)
        out.append("".join(symbols[i:j]))
        i = j
    return out


def _stub(*args):
    raise NotImplementedError()


def _keeps_zero_counts(corpus, counts, pair):
    merged, new_counts = merge_and_update(corpus, counts, pair)
    return merged, {**dict.fromkeys(counts, 0), **new_counts}


def _keeps_unchanged_pairs(symbols, pair):
    return {**dict.fromkeys(zip(symbols, symbols[1:]), 0), **pair_deltas(symbols, pair)}


def _next_free_code(data):
    packed, table = compress(data)
    return packed, {code + 1: pair for code, pair in table.items()}


MISTAKES = [
    (
        check.check_count_pairs,
        _unweighted,
        "you counted each pair once per word: weight every occurrence by the word's frequency",
    ),
    (
        check.check_count_pairs,
        lambda c: {p: n - (p[0] == p[1]) for p, n in count_pairs(c).items()},
        "count overlapping occurrences too",
    ),
    (
        check.check_merge_pair,
        _right_to_left,
        "merge_pair(('a', 'a', 'a'), ('a', 'a')): expected ('aa', 'a'), got ('a', 'aa'): scan left to right and "
        "skip an occurrence that overlaps one already joined: ('a', 'a', 'a', 'a') becomes ('aa', 'aa')",
    ),
    (check.check_merge_pair, _by_string, "join only whole symbols"),
    (check.check_merge_pair, lambda s, p: list(merge_pair(s, p)), "return a tuple, not a list"),
    (
        check.check_train,
        _lexicographic_train,
        "round 1: expected ('e', 's') with count 9, got ('t', '</w>') (count 9): ties go to the pair met first",
    ),
    (
        check.check_train,
        lambda wf, n: train(wf, n, end=()),
        "every word ends with the end-of-word marker '</w>'",
    ),
    (check.check_train, lambda wf, n: train(dict.fromkeys(wf, 1), n), "weight every pair by its word's frequency"),
    (check.check_train, lambda wf, n: train(wf, n)[:-1], "expected 10 merges, got 9"),
    (check.check_encode_word, package_longest_match, "that is longest match; BPE replays the merges by rank"),
    (check.check_encode_word, _no_marker_encode, "the end-of-word marker is lost"),
    (check.check_decode, lambda s: "".join(s).replace("</w>", " "), "nothing after the last word"),
    (check.check_most_frequent_pair, _overlapping_gage, "count non-overlapping occurrences"),
    (check.check_compress, _next_free_code, "use the smallest byte value that never occurred"),
    (check.check_decompress, _forward_decompress, "expand the newest code first"),
    (
        check.check_first_mistake,
        lambda wf, t: (lambda m: m and (m[0] - 1, m[1], m[2]))(first_mistake(wf, t)),
        "number the rounds from 1",
    ),
    (check.check_first_mistake, lambda wf, t: None, "return a tuple (round, correct_pair, correct_count)"),
    (check.check_pair_deltas, _keeps_unchanged_pairs, "leave out pairs whose count does not change"),
    (check.check_merge_and_update, _keeps_zero_counts, "delete pairs whose count drops to 0"),
    (check.check_longest_match, package_encode_word, "that is BPE's rank replay"),
    (check.check_viterbi, _greedy_viterbi, "try every cut position (dynamic programming), not a greedy choice"),
    (check.check_sp_decode, lambda s: "".join(s).replace("\u2581", " "), "drop only the one space put in front"),
    (check.check_bytes_to_unicode, lambda: {b: chr(b) for b in range(256)}, "byte 0: expected 'Ā', got '\\x00'"),
    (check.check_bytes_to_unicode, lambda: dict.fromkeys(range(256), "x"), "the map must be one-to-one"),
    (check.check_train, _stub, "train is not written yet (it raises NotImplementedError): write its body"),
    (check.check_count_pairs, lambda c: 1 / 0, "raised ZeroDivisionError: division by zero"),
]


@pytest.mark.parametrize(
    "run_check, wrong, hint", MISTAKES, ids=[f"{m[0].__name__}-{i}" for i, m in enumerate(MISTAKES)]
)
def test_a_classic_mistake_fails_with_its_hint(run_check, wrong, hint, capsys):
    with pytest.raises(CheckFailed) as failure:
        run_check(wrong)
    assert hint in str(failure.value)
    assert "agrees" not in capsys.readouterr().out


def test_a_failed_check_fails_a_plain_assert_handler():
    with pytest.raises(AssertionError):  # so a failed check fails the notebook cell and the graded task
        check.check_count_pairs(_unweighted)


def test_the_lowest_encoding_that_loses_the_marker_is_caught(textbook_corpus):
    merges = train_bpe(textbook_corpus, 10)
    assert encode_word("lowest", merges) == ["low", "est</w>"]
    with pytest.raises(CheckFailed, match=r"'lowest'.*\['low', 'est</w>'\], got \['low', 'est'\]"):
        check.check_encode_word(_no_marker_encode)


BYTELEVEL_MISTAKES = [
    (
        check.check_encode_bytelevel,
        lambda t, v, m, s: encode_bytelevel(t, v, m, []),
        "find special tokens first (split_special) and give each its own id",
    ),
    (check.check_encode_bytelevel, lambda t, v, m, s: list(t.encode()), "no merge was applied"),
    (
        check.check_encode_bytelevel,
        lambda t, v, m, s: encode_bytelevel(t.replace(" ", ""), v, m, s),
        "your ids do not even decode back to the text",
    ),
    (
        check.check_decode_bytelevel,
        lambda ids, v: "".join(v[i].decode("utf-8", errors="replace") for i in ids),
        "join the bytes of all the ids first, then decode once",
    ),
]


@pytest.mark.parametrize("run_check, wrong, hint", BYTELEVEL_MISTAKES)
def test_a_classic_byte_level_mistake_fails_with_its_hint(bytelevel_setup, run_check, wrong, hint):
    with pytest.raises(CheckFailed) as failure:
        run_check(wrong, *bytelevel_setup)
    assert hint in str(failure.value)


def _index_as_lists(words):
    counts, index = build_index(words)
    return counts, {p: sorted(ids) for p, ids in index.items()}


def _index_of_words(words):
    counts, index = build_index(words)
    return counts, {p: {words[i][0] for i in ids} for p, ids in index.items()}


def _scanning_merge(words, counts, index, pair):
    for i, (symbols, _) in enumerate(words):  # reads every word, not only index[pair]
        if pair in zip(symbols, symbols[1:]):
            index.setdefault(pair, set()).add(i)
    return merge_indexed(words, counts, index, pair)


def _copying_merge(words, counts, index, pair):
    words, counts, index = list(words), dict(counts), {p: set(ids) for p, ids in index.items()}
    merge_indexed(words, counts, index, pair)
    return words, counts, index


def _keeps_stale_ids(words, counts, index, pair):
    changed = set()
    for i in sorted(index.get(pair, ())):
        symbols, freq = words[i]
        merged = merge_pair(symbols, pair)
        for p, d in pair_deltas(symbols, pair).items():
            counts[p] = counts.get(p, 0) + d * freq
            changed.add(p)
            if counts[p] == 0:
                del counts[p]
        for p in zip(merged, merged[1:]):
            index.setdefault(p, set()).add(i)
        words[i] = (merged, freq)
    return changed


def _keeps_empty_sets(words, counts, index, pair):
    changed = merge_indexed(words, counts, index, pair)
    index.setdefault(pair, set())
    return changed


def _first_met_train(words, num_merges):
    corpus, merges = dict(words), []
    counts, index = build_index(list(corpus.items()))
    listed = list(corpus.items())
    while counts and len(merges) < num_merges:
        best = max(counts.values())
        pair = next(p for p, c in counts.items() if c == best)
        merges.append(pair)
        merge_indexed(listed, counts, index, pair)
    return merges


def _recount_train(words, num_merges):
    corpus, merges = list(words), []
    for _ in range(num_merges):
        counts = {}
        for symbols, freq in corpus:
            for p in zip(symbols, symbols[1:]):
                counts[p] = counts.get(p, 0) + freq
        if not counts:
            break
        pair = max(counts, key=lambda p: (counts[p], p))
        merges.append(pair)
        corpus = [(merge_pair(s, pair), f) for s, f in corpus]
    return merges


def _scanning_train(words, num_merges):
    corpus, merges = dict(words), []
    counts = count_pairs(corpus)
    while counts and len(merges) < num_merges:
        pair = max(counts, key=lambda p: (counts[p], p))
        merges.append(pair)
        corpus, counts = merge_and_update(corpus, counts, pair)  # looks at every word, every round
    return merges


NEW_MISTAKES = [
    (check.check_build_index, _index_as_lists, "make it a set, so a word that holds the pair twice is listed once"),
    (check.check_build_index, _index_of_words, "store word ids (positions in words), not the words"),
    (
        check.check_build_index,
        lambda words: build_index([(s, 1) for s, _ in words]),
        "weight each pair by its word's frequency",
    ),
    (check.check_merge_indexed, _scanning_merge, "which does not contain ('B', 'C'): loop over index[pair] only"),
    (check.check_merge_indexed, _copying_merge, "change words, counts and index in place"),
    (check.check_merge_indexed, _keeps_stale_ids, "no longer contains ('A', 'B'): remove 0 from index[('A', 'B')]"),
    (check.check_merge_indexed, _keeps_empty_sets, "is empty: delete a pair once no word holds it"),
    (
        check.check_merge_indexed,
        lambda *args: merge_indexed(*args) and None,
        "return the set of pairs whose count changed",
    ),
    (check.check_train_indexed, _first_met_train, "ties go to the greatest pair (max(tied))"),
    (check.check_train_indexed, _recount_train, "more pair count updates per word, even for words no merge touches"),
    (check.check_train_indexed, _scanning_train, "more symbol comparisons per word"),
    (
        check.check_train_indexed,
        lambda words, n: train_indexed(words, n, lazy=False),
        "skip a heap entry whose count is out of date (lazy deletion)",
    ),
    (
        check.check_train_bytelevel,
        lambda p, v, s: train_bytelevel(p, v, s, tie=min),
        "ties go to the lexicographically greater pair of bytes",
    ),
    (
        check.check_train_bytelevel,
        lambda p, v, s: train_bytelevel(p, v, s, tie=lambda tied: tied[0]),
        "ties go to the lexicographically greater pair of bytes",
    ),
    (
        check.check_train_bytelevel,
        lambda p, v, s: train_bytelevel(p, v, s, cut=False),
        "cut the special tokens out before counting (split_special)",
    ),
    (
        check.check_train_bytelevel,
        lambda p, v, s: train_bytelevel(p, v, s, pretokenize=False),
        "cut each piece with gpt2_pretokenize and count the pre-tokens",
    ),
    (
        check.check_train_bytelevel,
        lambda p, v, s: (
            lambda vocab, merges: ({k: t for k, t in vocab.items() if k < 256 or k >= 256 + len(s)}, merges)
        )(*train_bytelevel(p, v, s)),
        "lacks the special token b'<|endoftext|>'",
    ),
    (
        check.check_train_bytelevel,
        lambda p, v, s: train_bytelevel(p, v + len(s), s),
        "vocab_size counts the 256 bytes and the 1 special tokens, each in the vocabulary",
    ),
    (
        check.check_train_bytelevel,
        lambda p, v, s: (lambda vocab, merges: ({k: t for k, t in vocab.items() if k >= 128}, merges))(
            *train_bytelevel(p, v, s)
        ),
        "the vocabulary starts with all 256 single bytes",
    ),
    (
        check.check_train_bytelevel,
        lambda p, v, s: (
            lambda vocab, merges: (vocab, [(a.decode("latin-1"), b.decode("latin-1")) for a, b in merges])
        )(*train_bytelevel(p, v, s)),
        "each merge is a pair of bytes objects",
    ),
]


@pytest.mark.parametrize(
    "run_check, wrong, hint", NEW_MISTAKES, ids=[f"{m[0].__name__}-{i}" for i, m in enumerate(NEW_MISTAKES)]
)
def test_a_mistake_in_the_index_trainer_and_pretokenizer_tasks_fails_with_its_hint(run_check, wrong, hint, capsys):
    with pytest.raises(CheckFailed) as failure:
        run_check(wrong)
    assert hint in str(failure.value), str(failure.value)
    assert "agrees" not in capsys.readouterr().out


def test_the_work_of_a_local_trainer_does_not_grow_with_the_merges_and_a_recount_does():
    assert measure_work(train_indexed) == {"reads": 0.0, "arithmetic": 0.0, "comparisons": 0.0}
    assert check.work_growth(train_indexed) == "flat"
    assert measure_work(_recount_train)["arithmetic"] == 60.0  # 30 more rounds x 2 pairs per filler word
    assert measure_work(_scanning_train)["comparisons"] >= 30.0
    assert check.work_growth(_recount_train).startswith("grows")


def test_a_traced_corpus_records_reads_and_writes_and_keeps_its_ids():
    words = TracedWords([(("a", "b"), 1), (("c",), 2)])
    _ = words[1], list(words)
    words[0] = (("ab",), 1)
    assert words.read == [1, 0, 1] and words.written == [0]
    with pytest.raises(TypeError, match="keeps its word ids"):
        del words[0]


def test_the_seed_range_learns_no_han_word_and_han_runs_do():
    seed = r"[\u4e00-\u9fa5]|[A-Za-z]+|[0-9]+|\s+|[^\sA-Za-z0-9\u4e00-\u9fa5]"
    assert check.han_words_learned(lambda text: regex.findall(seed, text), 100) == []
    assert "我们" in check.han_words_learned(han_pretokenize, 100)


# ------------------------------------------------------------ the shared runner


def test_the_learner_cannot_change_a_case_by_mutating_its_arguments(capsys):
    def clears_then_counts(corpus):
        counts = count_pairs(corpus)
        corpus.clear()
        return counts

    check.check_count_pairs(clears_then_counts)
    assert "agrees" in capsys.readouterr().out


def test_the_runner_names_the_first_wrong_case_and_its_arguments():
    with pytest.raises(CheckFailed, match=r"^double\(3, 'x'\): wrong$"):
        run_cases(
            "double", lambda n, s: n * n, [(2, "x"), (3, "x")], lambda got, n, s: None if got == 2 * n else "wrong"
        )


def test_a_crash_names_the_call_and_the_error():
    with pytest.raises(CheckFailed, match=r"^f\(\[1, 2\]\) raised KeyError: 'k'$"):
        call(lambda xs: {}["k"], "f", [1, 2])


# ------------------------------------------- in a notebook: the reason, not a traceback


def test_a_failed_check_shows_only_its_one_line_reason_in_a_notebook():
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "from bpe_lab.grading import check\n"
            "def count_pairs(corpus):\n"
            "    return {p: 1 for s in corpus for p in zip(s, s[1:])}\n"
            "check.check_count_pairs(count_pairs)"
        ),
        nbformat.v4.new_code_cell(
            "import bpe_lab\ncheck.check_count_pairs(lambda corpus: bpe_lab.count_pairs(corpus))"
        ),
    ]
    NotebookClient(nb, timeout=60, allow_errors=True, kernel_name="python3").execute()
    for cell, reason in zip(nb.cells, ["expected 7, got 1", "calls bpe_lab.core.train.count_pairs"]):
        (error,) = [o for o in cell.outputs if o.output_type == "error"]
        assert error.ename == "CheckFailed"
        assert len(error.traceback) == 1 and reason in error.traceback[0], error.traceback
        assert "runner.py" not in "".join(error.traceback)


def test_a_trace_is_judged_by_its_stated_convention(textbook_corpus):
    # seed 004's code has no end-of-word marker: there (l, o) with 7 is right in round 3
    published = [(("e", "s"), 9), (("es", "t"), 9), (("l", "o"), 7)]
    wrong = find_first_mistake(textbook_corpus, published)
    assert wrong is not None and wrong.round == 3 and wrong.expected_pair == ("est", "</w>")
    assert find_first_mistake(textbook_corpus, published, end_of_word=None) is None
    # subword-nmt glues </w> and breaks ties to the greater pair: (s, t</w>) comes first
    glued = [(("s", "t</w>"), 9), (("e", "st</w>"), 9)]
    assert find_first_mistake(textbook_corpus, glued) is not None
    assert find_first_mistake(textbook_corpus, glued, tie_break="lexicographic", glue_end_of_word=True) is None
