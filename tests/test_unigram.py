"""Unigram LM: Viterbi against brute force, n-best, sampling against the
exact path probabilities, EM that never raises the loss, pruning, and
encoding equal to Hugging Face ``tokenizers.models.Unigram`` and to
sentencepiece's Unigram encoder given the same pieces and scores."""

import math
import random
import struct
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, models

from bpe_lab.core.corpora import python_docs
from bpe_lab.core.pretokenize import word_frequencies
from bpe_lab.variants.sentencepiece import SPACE
from bpe_lab.variants.unigram import (
    Unigram,
    build_lattice,
    forward_logprobs,
    segmentations,
    sp_normalize,
    viterbi,
)
from bpe_lab.variants.unigram_train import (
    corpus_loss,
    em_step,
    piece_losses,
    prune,
    seed_pieces,
    train_unigram,
    training_words,
)

TINY = {"▁": -2.0, "a": -1.5, "b": -2.5, "▁a": -2.0, "ab": -2.0, "▁ab": -4.5, "ba": -3.0, "aba": -4.0}


def brute_force(model, s):
    """Every segmentation of ``s`` with its score, best first (stable)."""
    options = segmentations(s, model.pieces, end_of_word=None, limit=20)
    return sorted(((seg, model.score(seg)) for seg in options), key=lambda item: -item[1])


# ---- Viterbi, n-best, sampling ----

piece_st = st.dictionaries(
    st.text("ab▁", min_size=2, max_size=4), st.integers(-40, -1).map(lambda n: n / 4), max_size=12
).map(lambda extra: {"▁": -2.0, "a": -2.25, "b": -3.0, **extra})


@settings(max_examples=300)
@given(pieces=piece_st, word=st.text("ab", max_size=9))
def test_viterbi_equals_brute_force(pieces, word):
    model = Unigram(pieces)
    s = sp_normalize(word)
    if not s:
        assert model.encode(word) == []
        return
    ranked = brute_force(model, s)
    best, score = model.segment(s)
    assert score == ranked[0][1]
    assert math.isclose(model.score(best), score)
    # Tie-break: the best path whose last piece starts earliest, then recursively for what is left.
    tied = [seg for seg, sc in ranked if sc == score]
    assert best == min(tied, key=lambda seg: [-len(p) for p in reversed(seg)])
    assert model.encode(word) == best


@settings(max_examples=200)
@given(pieces=piece_st, word=st.text("ab", min_size=1, max_size=8), n=st.integers(1, 12))
def test_nbest_equals_brute_force(pieces, word, n):
    model = Unigram(pieces)
    s = sp_normalize(word)
    ranked = brute_force(model, s)
    found = model.nbest(word, n)
    assert len(found) == min(n, len(ranked))
    assert [score for _, score in found] == [score for _, score in ranked[: len(found)]]
    assert len({tuple(seg) for seg, _ in found}) == len(found)
    assert all(model.score(seg) == score and "".join(seg) == s for seg, score in found)
    assert found[0][0] == model.encode(word)


@given(pieces=piece_st, word=st.text("ab▁", min_size=1, max_size=9))
def test_the_teaching_viterbi_agrees_with_the_model(pieces, word):
    # viterbi() is what the exercises check against; Unigram.segment is the model's own search.
    assert viterbi(word, pieces, end_of_word=None) == Unigram(pieces).segment(word)


def test_the_tie_break_is_the_earliest_start():
    model = Unigram({"▁": -1.0, "a": -1.0, "▁a": -2.0, "aa": -2.0})
    # ▁ + aa, ▁a + a, ▁ + a + a all score -3: the last piece that starts earliest (aa) wins.
    assert model.encode("aa") == ["▁", "aa"]
    assert model.nbest("aa", 3) == [(["▁", "aa"], -3.0), (["▁a", "a"], -3.0), (["▁", "a", "a"], -3.0)]


def exact_path_probs(model, s, alpha):
    weights = [(tuple(seg), math.exp(alpha * score)) for seg, score in brute_force(model, s)]
    total = sum(w for _, w in weights)
    return {seg: w / total for seg, w in weights}


@pytest.mark.parametrize("alpha", [1.0, 0.3, 0.0])
def test_sample_frequencies_approach_the_path_probabilities(alpha):
    model = Unigram(TINY)
    expected = exact_path_probs(model, sp_normalize("abab"), alpha)
    assert len(expected) >= 6
    rng = random.Random(2018)
    draws = 20_000
    seen = Counter(tuple(model.sample("abab", alpha=alpha, rng=rng)) for _ in range(draws))
    assert set(seen) <= set(expected)
    chi2 = sum((seen[seg] - draws * p) ** 2 / (draws * p) for seg, p in expected.items())
    # Pearson's statistic with len(expected) - 1 degrees of freedom: its 99.9% point is below 30 here.
    assert chi2 < 30, (chi2, seen, expected)
    if alpha == 0.0:
        assert all(math.isclose(p, 1 / len(expected)) for p in expected.values())


def test_sample_on_a_two_path_lattice_is_exact_in_the_limit():
    model = Unigram({"▁": math.log(0.5), "x": math.log(0.25), "▁x": math.log(0.25)})
    # ▁x: 0.25 against ▁ x: 0.125, so ▁x two times in three.
    draws = [model.sample("x", rng=seed) for seed in range(3000)]
    assert abs(draws.count(["▁x"]) / 3000 - 2 / 3) < 0.03
    assert model.sample("x", rng=5) == model.sample("x", rng=random.Random(5))
    assert model.sample("", rng=1) == []
    # A large alpha is (almost) Viterbi.
    assert all(model.sample("xx", alpha=50.0, rng=seed) == model.encode("xx") for seed in range(50))


def test_forward_sums_every_path():
    model = Unigram(TINY)
    s = sp_normalize("abab")
    lattice = build_lattice(s, model.pieces, model.longest)
    total = sum(math.exp(score) for _, score in brute_force(model, s))
    assert math.isclose(math.exp(forward_logprobs(lattice, model.pieces)[-1]), total)


def test_text_and_spaces_are_sentencepiece_style():
    model = Unigram(TINY)
    assert sp_normalize("ab  a ") == "▁ab▁▁a▁"
    assert model.encode("ab  a ") == ["▁", "ab", "▁", "▁a", "▁"]  # ▁ + ab (-4) beats ▁a + b and ▁ab (-4.5)
    assert model.decode(model.encode(" ab  a ")) == " ab  a "
    assert model.encode("") == [] and model.nbest("", 3) == [([], 0.0)]


def test_bad_input_at_encode_time():
    model = Unigram(TINY)
    with pytest.raises(ValueError, match="no piece covers 'c'"):
        model.encode("abc")
    with pytest.raises(ValueError, match="no piece covers 'é'"):
        model.sample("aé", rng=1)
    with pytest.raises(ValueError, match="contains"):
        model.encode("a▁b")
    with pytest.raises(TypeError):
        model.encode(None)
    with pytest.raises(ValueError, match="alpha"):
        model.sample("ab", alpha=-1.0)
    with pytest.raises(ValueError, match="n must be"):
        model.nbest("ab", 0)
    with pytest.raises(ValueError, match="non-empty"):
        Unigram({})
    with pytest.raises(ValueError, match="finite"):
        Unigram({"a": math.nan})
    with pytest.raises(ValueError, match="non-empty str"):
        Unigram({"": -1.0})


# ---- training ----


def test_em_never_raises_the_loss(textbook_corpus):
    for word_freq in (textbook_corpus, word_frequencies(" ".join(python_docs("train").split()[:800]))):
        words = training_words(word_freq)
        pieces = seed_pieces(words, 200)
        losses = []
        for _ in range(8):
            pieces, loss = em_step(words, pieces)
            losses.append(loss)
        losses.append(corpus_loss(words, pieces))
        assert all(later <= earlier * (1 + 1e-12) for earlier, later in zip(losses, losses[1:])), losses
        assert losses[-1] < losses[0]
        assert math.isclose(sum(math.exp(s) for s in pieces.values()), 1.0)


def test_piece_losses_are_the_exact_loss_increase(textbook_corpus):
    words = training_words(textbook_corpus)
    pieces, _ = em_step(words, seed_pieces(words, 40))
    base = corpus_loss(words, pieces)
    losses = piece_losses(words, pieces)
    assert set(losses) == {p for p in pieces if len(p) > 1}
    for piece, rise in losses.items():
        without = {p: s for p, s in pieces.items() if p != piece}
        assert math.isclose(rise, corpus_loss(words, without) - base, rel_tol=1e-9, abs_tol=1e-9), piece


def test_pruning_keeps_every_character(textbook_corpus):
    words = training_words(textbook_corpus)
    pieces = seed_pieces(words, 60)
    kept = prune(words, pieces, 12)
    assert len(kept) == 12
    assert {ch for w in words for ch in w} <= set(kept)
    assert all(kept[p] == pieces[p] for p in kept)
    assert len(prune(words, pieces, 5)) == 11  # only characters left: they stay


def test_training_words_put_the_marker_in_front():
    assert training_words({"low": 2, "▁low": 1, "▁": 3}) == {"▁low": 3, "▁": 3}


def test_train_unigram_on_the_textbook_corpus(textbook_corpus):
    model = train_unigram(textbook_corpus, 16)
    assert len(model) == 16
    assert set("▁lowernstid") <= set(model.pieces)
    assert max(model.pieces.values()) == next(iter(model.pieces.values()))  # most probable first
    assert train_unigram(textbook_corpus, 16).pieces == model.pieces  # deterministic
    for word in textbook_corpus:
        assert "".join(model.encode(word)) == SPACE + word
    assert model.decode(model.encode("lowest newer")) == "lowest newer"


def test_training_lowers_the_loss_below_characters_alone(textbook_corpus):
    words = training_words(textbook_corpus)
    chars = {ch for w in words for ch in w}
    char_model, _ = em_step(words, {ch: 0.0 for ch in chars})
    trained = train_unigram(textbook_corpus, 20).pieces
    assert corpus_loss(words, trained) < corpus_loss(words, char_model)


def test_bad_training_input(textbook_corpus):
    with pytest.raises(ValueError, match="empty"):
        train_unigram({}, 10)
    with pytest.raises(ValueError, match="smaller than the alphabet"):
        train_unigram(textbook_corpus, 10)  # 11 characters with ▁
    with pytest.raises(ValueError, match="positive"):
        train_unigram({"low": 0}, 10)
    with pytest.raises(ValueError, match="positive"):
        train_unigram({"low": -1}, 10)
    with pytest.raises(ValueError, match="white space"):
        train_unigram({"lo w": 1}, 10)
    with pytest.raises(ValueError, match="shrink"):
        train_unigram(textbook_corpus, 12, shrink=1.0)
    with pytest.warns(UserWarning, match="only 6"):
        assert len(train_unigram({"ab": 1}, 10)) == 6  # ▁ a b ▁a ab ▁ab
    with pytest.raises(ValueError, match="only 6"):
        train_unigram({"ab": 1}, 10, on_short="raise")


# ---- parity with Hugging Face tokenizers and sentencepiece ----


def _varint(n):
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | 0x80 if n else byte)
        if not n:
            return bytes(out)


def _field(number, wire_type, payload):
    return _varint(number << 3 | wire_type) + payload


def _message(number, body):
    return _field(number, 2, _varint(len(body)) + body)


def sentencepiece_model(pieces):
    """A serialized sentencepiece ``ModelProto``, written field by field
    (sentencepiece_model.proto): ``<unk>``, ``<s>``, ``</s>``, then the
    pieces with their scores; a UNIGRAM model; the identity normalizer that
    only adds the dummy ``▁`` prefix and turns spaces into ``▁``. Built by
    hand because ``sentencepiece_model_pb2`` needs protobuf, which is not a
    test dependency; the sentencepiece library itself parses it."""

    def piece(text, score, kind):  # kind: 1 normal, 2 unknown, 3 control
        return _message(
            1, _message(1, text.encode()) + _field(2, 5, struct.pack("<f", score)) + _field(3, 0, _varint(kind))
        )

    body = piece("<unk>", 0.0, 2) + piece("<s>", 0.0, 3) + piece("</s>", 0.0, 3)
    body += b"".join(piece(text, score, 1) for text, score in pieces.items())
    body += _message(2, _field(3, 0, _varint(1)) + _field(4, 0, _varint(len(pieces) + 3)))  # UNIGRAM, vocab_size
    # name, add_dummy_prefix=1, remove_extra_whitespaces=0 (escape_whitespaces keeps its default, on)
    body += _message(3, _message(1, b"identity") + _field(3, 0, _varint(1)) + _field(4, 0, _varint(0)))
    return body


@pytest.fixture(scope="module")
def docs_unigram():
    """A Unigram model of 400 pieces trained on the first 3,000 words of the
    documentation's training part, and the same with every score rounded to
    a multiple of 1/64: those add up exactly in sentencepiece's float32 as in
    float64, so both encoders face the same ties."""
    model = train_unigram(word_frequencies(" ".join(python_docs("train").split()[:3000])), 400)
    rounded = Unigram({piece: round(score * 64) / 64 for piece, score in model.pieces.items()})
    return model, rounded


def hugging_face(model):
    """Hugging Face's Unigram on the same pieces; it is given the string
    ``sp_normalize`` makes, so only the models are compared."""
    return Tokenizer(models.Unigram([("<unk>", 0.0)] + list(model.pieces.items()), unk_id=0))


def held_out_lines(model):
    """Held-out lines whose every character is a piece (the rest raise)."""
    return [line for line in python_docs("heldout").splitlines() if set(line) - {" "} <= set(model.pieces)]


def test_sentencepiece_reads_the_hand_built_model():
    import sentencepiece

    sp = sentencepiece.SentencePieceProcessor(model_proto=sentencepiece_model(TINY))
    assert sp.get_piece_size() == len(TINY) + 3
    assert [sp.id_to_piece(i) for i in range(3, sp.get_piece_size())] == list(TINY)
    assert sp.get_score(3) == TINY["▁"]


def test_same_pieces_as_sentencepiece_and_hugging_face_on_held_out_text(docs_unigram):
    import sentencepiece

    model, rounded = docs_unigram
    lines = held_out_lines(model)
    assert len(lines) > 1500 and sum(len(line.split()) for line in lines) > 9000
    sp = sentencepiece.SentencePieceProcessor(model_proto=sentencepiece_model(rounded.pieces))
    for ours, hf in ((model, hugging_face(model)), (rounded, hugging_face(rounded))):
        for line in lines:
            if line:
                assert ours.encode(line) == hf.encode(sp_normalize(line)).tokens, line
    for line in lines:
        assert rounded.encode(line) == sp.encode(line, out_type=str), line


@settings(max_examples=150)
@given(st.text(st.sampled_from("aeinorstlcdu_.( )"), max_size=40))
def test_same_as_sentencepiece_and_hugging_face_on_any_text(docs_unigram, text):
    import sentencepiece

    _, rounded = docs_unigram
    sp = sentencepiece.SentencePieceProcessor(model_proto=sentencepiece_model(rounded.pieces))
    assert rounded.encode(text) == sp.encode(text, out_type=str)
    if text:
        assert rounded.encode(text) == hugging_face(rounded).encode(sp_normalize(text)).tokens


def test_nbest_and_sample_on_real_text(docs_unigram):
    model, _ = docs_unigram
    for word in ("interpreter", "exception", "iterator", "__init__"):
        best = model.nbest(word, 8)
        assert best[0][0] == model.encode(word)
        assert [s for _, s in best] == sorted((s for _, s in best), reverse=True)
        samples = {tuple(model.sample(word, alpha=0.2, rng=seed)) for seed in range(30)}
        assert len(samples) > 1 and all("".join(s) == sp_normalize(word) for s in samples)
