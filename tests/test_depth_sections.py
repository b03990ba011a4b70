"""The depth sections of notebooks 05 and 06 (issue 34): merges recovered
from ranks alone, new rows for a new token, a pipeline retrained, and the
"your turn" steps (parts_below_rank, mean_rows, word_spans)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pytest
from your_turn_support import audit_your_turn

from bpe_lab.bytelevel.gpt2 import GPT2_RANKS_PATH, gpt2_tokenizer, gpt2_vocab_and_merges, load_tiktoken_ranks
from bpe_lab.bytelevel.hf_pipeline import hf_tokenizer
from bpe_lab.bytelevel.hf_retrain import retrain
from bpe_lab.bytelevel.new_rows import add_rows
from bpe_lab.bytelevel.rank_split import parts_below_rank
from bpe_lab.core.corpora import parallel_sentences
from bpe_lab.grading.check import CheckFailed
from bpe_lab.grading.check.depth import (
    RANK_CASES,
    SPAN_TEXTS,
    check_mean_rows,
    check_parts_below_rank,
    check_word_spans,
    span_encodings,
    spans_of,
)

ROOT = Path(__file__).resolve().parent.parent


# ------------------------------------------------------------ parts_below_rank


def test_parts_below_rank_hand_worked_cases():
    expected = [[b"a", b"bc"], [b"ab", b"c"], [b"a", b"b"], [b"aa", b"a"], [b"ab", b"cd"], [b"b"]]
    assert [parts_below_rank(*case) for case in RANK_CASES] == expected


def test_parts_below_rank_recovers_every_gpt2_merge():
    ranks = load_tiktoken_ranks(GPT2_RANKS_PATH)
    by_rank = sorted(ranks, key=ranks.__getitem__)
    recovered = [tuple(parts_below_rank(token, ranks)) for token in by_rank[256:]]
    assert recovered == gpt2_vocab_and_merges()[1]
    assert recovered[:2] == [(b" ", b"t"), (b" ", b"a")] and len(recovered) == 50_000


@pytest.mark.parametrize(
    ("token", "ranks", "message"),
    [
        (b"", {b"a": 0}, "non-empty bytes"),
        ("ab", {b"a": 0}, "non-empty bytes"),
        (b"ab", {b"a": 0, b"b": 1}, "has no rank"),
        (b"ab", {b"a": 0, b"ab": 1}, "the byte 0x62"),
    ],
)
def test_parts_below_rank_refuses_bad_input(token, ranks, message):
    with pytest.raises(ValueError, match=message):
        parts_below_rank(token, ranks)


def parts_model(token: bytes, ranks: Mapping[bytes, int]) -> list[bytes]:
    parts = [bytes([b]) for b in token]
    while len(parts) > 1:
        joined = [(ranks.get(a + b, ranks[token]), i) for i, (a, b) in enumerate(zip(parts, parts[1:]))]
        rank, i = min(joined)
        if rank >= ranks[token]:
            break
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
    return parts


def leftmost_first(token, ranks):
    parts = [bytes([b]) for b in token]
    while True:
        for i in range(len(parts) - 1):
            if ranks.get(parts[i] + parts[i + 1], ranks[token]) < ranks[token]:
                parts[i : i + 2] = [parts[i] + parts[i + 1]]
                break
        else:
            return parts


def every_rank(token, ranks):
    parts = [bytes([b]) for b in token]
    while len(parts) > 1:
        rank, i = min((ranks.get(a + b, 1 << 30), i) for i, (a, b) in enumerate(zip(parts, parts[1:])))
        if rank == 1 << 30:
            break
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
    return parts


def test_check_parts_below_rank_passes_a_model_answer_and_names_mistakes(capsys):
    check_parts_below_rank(parts_model)
    assert capsys.readouterr().out == "✔ parts_below_rank agrees with bpe_lab on 61 cases\n"
    cases = [
        (leftmost_first, "not the leftmost joinable pair"),
        (every_rank, "the token's own rank (5) may not be used"),
        (lambda token, ranks: [token[:1], token[1:]], "the lowest rank"),
        (lambda token, ranks: list(token), "return a list of bytes objects"),
        (lambda token, ranks: [bytes([b]) for b in token], "keep joining"),
    ]
    for fn, fragment in cases:
        with pytest.raises(CheckFailed) as failure:
            check_parts_below_rank(fn)
        assert fragment in str(failure.value), str(failure.value)


# ------------------------------------------------------------ add_rows


def test_add_rows_appends_the_mean_and_keeps_the_old_rows():
    matrix = np.array([[1.0, 0.0, 2.0], [3.0, 2.0, 0.0], [2.0, 1.0, 1.0], [2.0, 5.0, 1.0]])
    grown = add_rows(matrix, 2)
    assert grown.tolist() == matrix.tolist() + [[2.0, 2.0, 1.0], [2.0, 2.0, 1.0]]
    assert add_rows(matrix, 0).tolist() == matrix.tolist() and grown is not matrix
    assert add_rows([[1, 2], [3, 4]], 1).tolist() == [[1.0, 2.0], [3.0, 4.0], [2.0, 3.0]]


def test_a_mean_row_never_takes_more_than_its_share():
    generator = np.random.default_rng(3)
    output, hidden = generator.normal(size=(7, 5)), generator.normal(size=(500, 5)) * 4
    logits = hidden @ add_rows(output, 1).T
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    assert probs[:, -1].max() <= 1 / 8


def mean_rows_model(matrix, count):
    return np.vstack([matrix] + [matrix.mean(axis=0)] * count)


def test_check_mean_rows_passes_a_model_answer_and_names_mistakes(capsys):
    check_mean_rows(mean_rows_model)
    assert capsys.readouterr().out == "✔ mean_rows agrees with bpe_lab on 5 cases\n"
    cases = [
        (lambda m, c: np.vstack([m] + [np.zeros(m.shape[1])] * c), "the new rows are zeros"),
        (lambda m, c: np.vstack([m] + [np.full(m.shape[1], m.mean())] * c), "matrix.mean(axis=0)"),
        (lambda m, c: np.tile(m.mean(axis=0), (c, 1)), "keep the old rows"),
        (lambda m, c: m, "2 old rows and 1 new make 3"),
        (lambda m, c: "rows", "return a matrix"),
    ]
    for fn, fragment in cases:
        with pytest.raises(CheckFailed) as failure:
            check_mean_rows(fn)
        assert fragment in str(failure.value), str(failure.value)


@pytest.mark.parametrize(
    ("matrix", "count", "error", "message"),
    [
        (np.zeros((0, 3)), 1, ValueError, "at least one row"),
        (np.zeros(3), 1, ValueError, "2-D"),
        (np.array([[1.0, np.nan]]), 1, ValueError, "NaN"),
        (np.array([["a", "b"]]), 1, ValueError, "real numbers"),
        (np.zeros((2, 2)), -1, ValueError, "count must be >= 0"),
        (np.zeros((2, 2)), 1.0, TypeError, "count must be an int"),
    ],
)
def test_add_rows_refuses_bad_input(matrix, count, error, message):
    with pytest.raises(error, match=message):
        add_rows(matrix, count)


# ------------------------------------------------------------ retrain


def test_retrain_keeps_gpt2_s_pipeline_and_learns_a_new_vocabulary():
    gpt2 = hf_tokenizer(gpt2_tokenizer())
    zh = parallel_sentences("zh")
    new = retrain(gpt2, zh[:24], 600)
    before, after = json.loads(gpt2.to_str()), json.loads(new.to_str())
    assert all(before[block] == after[block] for block in ("normalizer", "pre_tokenizer", "decoder"))
    assert new.get_vocab_size() == 600 and new.token_to_id("<|endoftext|>") == 0
    assert gpt2.token_to_id("<|endoftext|>") == 50256 and gpt2.get_vocab_size() == 50257  # left as it was
    assert all(new.decode(new.encode(s).ids) == s for s in zh[24:])
    assert sum(len(new.encode(s).ids) for s in zh[24:]) == 115 < sum(len(gpt2.encode(s).ids) for s in zh[24:]) == 136
    # every one of the 256 byte stand-ins is kept (initial_alphabet), though the corpus has far fewer bytes
    assert all(ch in after["model"]["vocab"] for ch in json.loads(gpt2.to_str())["model"]["vocab"] if len(ch) == 1)


def bert_like():
    from tokenizers import Tokenizer, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(
        ["low lower newest widest"] * 3, trainers.WordPieceTrainer(vocab_size=40, special_tokens=["[UNK]"])
    )
    tok.add_special_tokens(["[CLS]", "[SEP]"])  # after training: ids past the trained vocabulary
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
    )
    return tok


def test_retrain_gives_the_post_processor_the_special_tokens_new_ids():
    old = bert_like()
    new = retrain(old, ["tokens are fun", "more tokens"] * 5, 60)
    ids = new.encode("tokens").ids
    assert [new.id_to_token(i) for i in ids] == ["[CLS]", "tokens", "[SEP]"]
    assert ids[0] == new.token_to_id("[CLS]") == 1 != old.token_to_id("[CLS]")
    assert json.loads(new.to_str())["model"]["type"] == "WordPiece" and new.token_to_id("[UNK]") == 0


def test_retrain_refuses_what_it_does_not_handle():
    from tokenizers import Tokenizer, models

    with pytest.raises(ValueError, match="not Unigram"):
        retrain(Tokenizer(models.Unigram()), ["a b"], 10)
    with pytest.raises(ValueError, match="takes a tokenizers.Tokenizer, got Tokenizer"):
        retrain(gpt2_tokenizer(), ["a b"], 10)
    with pytest.raises(ValueError, match="vocab_size must be >= 1"):
        retrain(bert_like(), ["a b"], 0)


# ------------------------------------------------------------ word_spans


def word_spans_model(sequence_ids, word_ids, offsets):
    spans = {}
    for sentence, word, (start, end) in zip(sequence_ids, word_ids, offsets):
        if word is None:
            continue
        first, last = spans.get((sentence, word), (start, end))
        spans[(sentence, word)] = (min(first, start), max(last, end))
    return spans


def test_a_special_token_in_the_text_is_a_word_of_its_own():
    (encoding,) = [e for texts, e in zip(SPAN_TEXTS, span_encodings()) if texts == ("Hello world<|endoftext|>",)]
    assert encoding.tokens == ["Hello", "Ġworld", "<|endoftext|>"] and encoding.word_ids == [0, 1, 2]
    assert spans_of(encoding) == {(0, 0): (0, 5), (0, 1): (5, 11), (0, 2): (11, 24)}


def test_check_word_spans_passes_a_model_answer_and_names_mistakes(capsys):
    check_word_spans(word_spans_model)
    assert capsys.readouterr().out == "✔ word_spans agrees with bpe_lab on 5 cases\n"

    def by_word_only(sequence_ids, word_ids, offsets):
        return {w: span for (_, w), span in word_spans_model(sequence_ids, word_ids, offsets).items()}

    def last_token_only(sequence_ids, word_ids, offsets):
        return {(s, w): o for s, w, o in zip(sequence_ids, word_ids, offsets) if w is not None}

    cases = [
        (by_word_only, "word numbers start again at 0 in the second sentence"),
        (last_token_only, "word (0, 0) should span (0, 10)"),
        (lambda *args: list(word_spans_model(*args).items()), "return a dict"),
    ]
    for fn, fragment in cases:
        with pytest.raises(CheckFailed) as failure:
            check_word_spans(fn)
        assert fragment in str(failure.value), str(failure.value)


# ------------------------------------------------------------ the notebooks' cells


@pytest.mark.parametrize(
    ("chapter", "name", "model"),
    [
        ("05", "parts_below_rank", parts_model),
        ("05", "mean_rows", mean_rows_model),
        ("06", "word_spans", word_spans_model),
    ],
)
def test_the_depth_your_turn_says_not_yet_and_passes_a_model_answer(chapter, name, model, capsys):
    """As ``test_your_turn`` audits chapters 01-04, 07 and 08 (one audit,
    ``your_turn_support``)."""
    audit_your_turn(chapter, name, model, capsys, {"Mapping": Mapping, "np": np})
