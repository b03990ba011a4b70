"""WordPiece: training by score (pinned by hand and against the Hugging Face
course's own code) and longest-match encoding (against Hugging Face
``tokenizers.models.WordPiece`` on the same vocabulary)."""

from collections import defaultdict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, models, pre_tokenizers

from bpe_lab.core.corpora import python_docs
from bpe_lab.core.pretokenize import word_frequencies
from bpe_lab.variants.wordpiece import (
    WordPiece,
    join_pieces,
    train_wordpiece,
    wordpiece_alphabet,
    wordpiece_merges,
)

# The Hugging Face NLP course's example (chapter 6, "WordPiece tokenization").
HUG = {"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5}

# Worked by hand. Start: h ##u ##g (10), p ##u ##g (5), p ##u ##n (12), b ##u ##n (4), h ##u ##g ##s (5).
# Round 1: freq h 15, ##u 36, ##g 20, p 17, ##n 16, b 4, ##s 5. Every pair with ##u scores 1/36
#   (h ##u: 15/(15*36), ##u ##g: 20/(36*20), ...); ##g ##s scores 5/(20*5) = 1/20: merge -> ##gs.
# Round 2: ##g is 15 now; h ##u 15/(15*36), ##u ##g 15/(36*15), p ##u, ##u ##n, b ##u, ##u ##gs: all
#   exactly 1/36. A tie of six: the first met (hug's h ##u) wins -> hu.
# Round 3: hu 15, ##u 21, ##g 15, ##gs 5: hu ##g 10/225, p ##u 17/(17*21) = 1/21, ##u ##n 1/21,
#   b ##u 1/21, ##u ##g 5/315, hu ##gs 5/(15*5) = 1/15: the best -> hugs.
# Round 4: hu 10: hu ##g 10/(10*15) = 1/15 beats the 1/21s -> hug.
# Round 5: p ##u 17/(17*21), ##u ##g 5/(21*5), ##u ##n 16/(21*16), b ##u 4/(4*21): a tie at 1/21,
#   pug's p ##u is met first (hug is one piece now) -> pu.
# Round 6: pu 17, ##u 4, ##g 5, ##n 16: pu ##g 1/17, pu ##n 12/272, b ##u 4/16, ##u ##n 4/64 -> bu.
# Round 7: pu ##g 1/17, pu ##n 12/272, bu ##n 4/(4*16) = 1/16 -> bun.
# Round 8: pu ##g 5/(17*5) and pu ##n 12/(17*12): a tie at 1/17, pug first -> pug; round 9 -> pun.
HUG_MERGES = [
    ("##g", "##s"),
    ("h", "##u"),
    ("hu", "##gs"),
    ("hu", "##g"),
    ("p", "##u"),
    ("b", "##u"),
    ("bu", "##n"),
    ("pu", "##g"),
    ("pu", "##n"),
]


def test_the_hand_worked_example():
    assert wordpiece_alphabet(HUG) == ["##g", "##n", "##s", "##u", "b", "h", "p"]
    assert wordpiece_merges(HUG, 20) == HUG_MERGES  # 9 merges and every word is one piece
    wp = train_wordpiece(HUG, 12)
    assert list(wp.vocab) == ["[UNK]", "##g", "##n", "##s", "##u", "b", "h", "p", "##gs", "hu", "hugs", "hug"]
    assert wp.vocab["hug"] == 11
    assert wp.encode("hugs") == ["hugs"] and wp.encode("bun") == ["b", "##u", "##n"]


def test_the_tie_break_is_the_pair_met_first():
    # Round 2 is a six-way tie at 1/36: the word listed first decides it.
    reordered = {"pun": 12, "hug": 10, "pug": 5, "bun": 4, "hugs": 5}
    assert wordpiece_merges(HUG, 2)[1] == ("h", "##u")
    assert wordpiece_merges(reordered, 2)[1] == ("p", "##u")
    # Within a word, left to right: a ##b and ##b ##a both score 1/(1*1); the left one wins.
    assert wordpiece_merges({"aba": 1}, 1) == [("a", "##b")]


def test_joining_drops_the_inner_prefix():
    assert join_pieces("a", "##b") == "ab"
    assert join_pieces("##a", "##b") == "##ab"
    assert join_pieces("##a", "b") == "##ab"
    assert join_pieces("a", "b", "") == "ab"


def course_merges(word_freq, num_merges):
    """The Hugging Face course's training loop, as it teaches it: recount
    everything each round, take the first best score."""
    splits = {w: [c if i == 0 else f"##{c}" for i, c in enumerate(w)] for w in word_freq}
    merges = []
    while len(merges) < num_merges:
        letter_freqs, pair_freqs = defaultdict(int), defaultdict(int)
        for word, freq in word_freq.items():
            split = splits[word]
            if len(split) == 1:
                letter_freqs[split[0]] += freq
                continue
            for i in range(len(split) - 1):
                letter_freqs[split[i]] += freq
                pair_freqs[split[i], split[i + 1]] += freq
            letter_freqs[split[-1]] += freq
        if not pair_freqs:
            break
        best, best_score = None, None
        for pair, freq in pair_freqs.items():
            score = freq / (letter_freqs[pair[0]] * letter_freqs[pair[1]])
            if best_score is None or best_score < score:
                best, best_score = pair, score
        a, b = best
        for word in word_freq:
            split, i = splits[word], 0
            while i < len(split) - 1:
                if split[i] == a and split[i + 1] == b:
                    split = split[:i] + [a + b[2:] if b.startswith("##") else a + b] + split[i + 2 :]
                else:
                    i += 1
            splits[word] = split
        merges.append(best)
    return merges


words_st = st.dictionaries(st.text("abc#", min_size=1, max_size=6), st.integers(1, 9), min_size=1, max_size=8)


@given(words_st)
def test_incremental_training_equals_the_course_loop(word_freq):
    assert wordpiece_merges(word_freq, 40) == course_merges(word_freq, 40)


def test_training_on_real_text_equals_the_course_loop():
    freq = word_frequencies(" ".join(python_docs("train").split()[:1500]))
    assert wordpiece_merges(freq, 150) == course_merges(freq, 150)


def test_vocab_size_counts_unk_and_alphabet(textbook_corpus):
    wp = train_wordpiece(textbook_corpus, 20)
    assert len(wp) == 20 and wp.vocab["[UNK]"] == 0
    assert sorted(wp.vocab.values()) == list(range(20))
    with pytest.warns(UserWarning, match="only 7"):
        assert len(train_wordpiece({"ab": 1, "cd": 1}, 30)) == 7  # [UNK] a ##b c ##d ab cd
    assert len(train_wordpiece({"ab": 1}, 30, on_short="ignore")) == 4


def test_bad_training_input(textbook_corpus):
    with pytest.raises(ValueError, match="empty"):
        train_wordpiece({}, 10)
    with pytest.raises(ValueError, match="positive"):
        train_wordpiece({"low": 0}, 10)
    with pytest.raises(ValueError, match="positive"):
        train_wordpiece({"low": -2}, 10)
    with pytest.raises(ValueError, match="non-empty"):
        train_wordpiece({"": 2}, 10)
    with pytest.raises(ValueError, match="smaller than the alphabet"):
        train_wordpiece(textbook_corpus, 5)
    with pytest.raises(ValueError, match="only"):
        train_wordpiece({"ab": 1}, 30, on_short="raise")
    with pytest.raises(ValueError, match="on_short"):
        train_wordpiece({"ab": 1}, 30, on_short="loud")


def test_longest_match_and_unk():
    wp = WordPiece(["[UNK]", "un", "##aff", "##able", "##a", "u"])
    assert wp.encode("unaffable") == ["un", "##aff", "##able"]
    assert wp.encode("unaffablex") == ["[UNK]"]  # the whole word, not just the x
    assert wp.encode("") == []
    assert wp.encode("u") == ["u"]
    short = WordPiece(wp.vocab, max_input_chars_per_word=6)
    assert short.encode("unable") == ["un", "##able"]  # 6 characters: still encoded
    assert short.encode("unaable") == ["[UNK]"]  # 7: too long
    assert wp.decode(["un", "##able", "un"]) == "unable un"


def test_bad_wordpiece_input():
    with pytest.raises(ValueError, match="unk_token"):
        WordPiece(["a", "##b"])
    with pytest.raises(ValueError, match="twice"):
        WordPiece(["[UNK]", "a", "a"])
    with pytest.raises(ValueError, match="share an id"):
        WordPiece({"[UNK]": 0, "a": 0})
    with pytest.raises(TypeError):
        WordPiece("[UNK]")
    with pytest.raises(ValueError, match="max_input_chars_per_word"):
        WordPiece(["[UNK]"], max_input_chars_per_word=0)
    with pytest.raises(TypeError):
        WordPiece(["[UNK]"]).encode(None)


# ---- parity with Hugging Face tokenizers ----

MAX_CHARS = (100, 8)


@pytest.fixture(scope="module")
def docs_wordpiece():
    """A WordPiece vocabulary of 400 pieces trained on the first 3,000 words
    of the documentation's training part."""
    return train_wordpiece(word_frequencies(" ".join(python_docs("train").split()[:3000])), 400)


def hf_wordpiece(wp, max_chars):
    model = models.WordPiece(wp.vocab, unk_token="[UNK]", max_input_chars_per_word=max_chars)
    tokenizer = Tokenizer(model)
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return tokenizer


@pytest.mark.parametrize("max_chars", MAX_CHARS)
def test_same_tokens_and_ids_as_hugging_face_on_held_out_text(docs_wordpiece, max_chars):
    ours = WordPiece(docs_wordpiece.vocab, max_input_chars_per_word=max_chars)
    hf = hf_wordpiece(docs_wordpiece, max_chars)
    lines = python_docs("heldout").splitlines()
    assert sum(len(line.split()) for line in lines) > 13_000  # every held-out word
    for line in lines:
        encoding = hf.encode(line)
        assert ours.encode_text(line) == encoding.tokens, line
        assert ours.encode_ids(line) == encoding.ids, line
    pieces = ours.encode_text(python_docs("heldout"))
    assert 0 < pieces.count("[UNK]") < len(pieces) / 10  # the parity covered both cases


# Text of every kind, but not the four ASCII separators that Python splits on and Rust does not.
text_st = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x1c\x1d\x1e\x1f"), max_size=40)
word_st = st.text(st.sampled_from("aeinorstlcdu#ABé"), min_size=1, max_size=14)


@settings(max_examples=200)
@given(text=text_st)
def test_same_as_hugging_face_on_any_text(docs_wordpiece, text):
    hf = hf_wordpiece(docs_wordpiece, 100)
    assert docs_wordpiece.encode_text(text) == hf.encode(text).tokens


@settings(max_examples=300)
@given(word=word_st, max_chars=st.sampled_from(MAX_CHARS))
def test_same_as_hugging_face_word_by_word(docs_wordpiece, word, max_chars):
    ours = WordPiece(docs_wordpiece.vocab, max_input_chars_per_word=max_chars)
    model = models.WordPiece(docs_wordpiece.vocab, unk_token="[UNK]", max_input_chars_per_word=max_chars)
    assert [(p, ours.vocab[p]) for p in ours.encode(word)] == [(t.value, t.id) for t in model.tokenize(word)]
