"""subword-nmt's convention, checked against subword-nmt itself.

Since its version 0.2, Sennrich's subword-nmt glues ``</w>`` to the last
character of each word, breaks ties by taking the greatest pair
(``max(stats, key=lambda x: (stats[x], x))`` in ``learn_bpe.py``), stops when
the best pair occurs fewer than ``--min-frequency`` (default 2) times, and
prints ``@@`` after every piece that does not end a word (``apply_bpe.py``).
``train_bpe(..., glue_end_of_word=True, tie_break="lexicographic",
min_frequency=2)``, ``encode_text(..., glue_end_of_word=True)`` and
``mark_continuations`` must give the same merges and the same output.
Its codes files and bpe_lab's merges files are one format, read and written
in both conventions: ``#version: 0.2`` glues ``</w>``, ``#version: 0.1`` (or
no header) keeps it a symbol of its own, as ``apply_bpe.py`` reads them.

The parity holds for the same words, and the two cut text into words
differently: subword-nmt at ASCII spaces only (``line.strip('\\r\\n ').split(' ')``
in both scripts), bpe_lab at any white space (``str.split()``: also tabs,
U+00A0, U+3000 and the other Unicode spaces). ``test_words_end_at_different_characters``
shows the difference; the other tests use words without such characters.
Skipped when subword-nmt is not installed.
"""

import contextlib
import io
import random
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_lab import encode_word, load_merges, save_merges, train_bpe
from bpe_lab.cli import main
from bpe_lab.core import mergefile
from bpe_lab.core.corpora import python_docs
from bpe_lab.core.encode import encode_text, mark_continuations
from bpe_lab.core.mergefile import read_merges
from bpe_lab.core.pretokenize import split_words, word_frequencies

learn_bpe = pytest.importorskip("subword_nmt.learn_bpe")
apply_bpe = pytest.importorskip("subword_nmt.apply_bpe")


def snmt_merges(word_freq, num_merges, min_frequency=2):
    """subword-nmt's merges for a word -> count table (its ``--dict-input``)."""
    table = io.StringIO("".join(f"{word} {count}\n" for word, count in word_freq.items()))
    codes = io.StringIO()
    learn_bpe.learn_bpe(table, codes, num_merges, min_frequency=min_frequency, is_dict=True)
    lines = codes.getvalue().splitlines()
    assert lines[0] == "#version: 0.2"
    return [tuple(line.split(" ")) for line in lines[1:]]


def ours(word_freq, num_merges, min_frequency=2):
    return train_bpe(
        word_freq,
        num_merges,
        glue_end_of_word=True,
        tie_break="lexicographic",
        min_frequency=min_frequency,
        on_short="ignore",
    )


def snmt_segment(merges, text, dropout=0.0):
    codes = io.StringIO("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges))
    return apply_bpe.BPE(codes).segment(text, dropout=dropout)


def test_the_classic_corpus(textbook_corpus):
    merges = ours(textbook_corpus, 20)
    assert merges == snmt_merges(textbook_corpus, 20)
    # glued: the first merge joins s with t</w>, and there is no (est, </w>)
    assert merges[:4] == [("s", "t</w>"), ("e", "st</w>"), ("l", "o"), ("w", "est</w>")]
    assert len(merges) == 13  # then every word is one symbol
    text = "lowest newest newer low"
    assert " ".join(mark_continuations(encode_text(text, merges, glue_end_of_word=True))) == snmt_segment(merges, text)
    assert snmt_segment(merges, text) == "lo@@ west newest ne@@ wer low"


def test_min_frequency_stops_training():
    word_freq = {"abab": 1, "cd": 3, "ef": 1}
    assert ours(word_freq, 10) == snmt_merges(word_freq, 10) == [("c", "d</w>")]
    assert ours(word_freq, 10, min_frequency=1) == snmt_merges(word_freq, 10, min_frequency=1)


def test_the_python_documentation():
    docs = dict(list(word_frequencies(python_docs("train")).items())[:600])
    merges = ours(docs, 300)
    assert merges == snmt_merges(docs, 300)
    text = " ".join(list(word_frequencies(python_docs("heldout")))[:300])
    assert " ".join(mark_continuations(encode_text(text, merges, glue_end_of_word=True))) == snmt_segment(merges, text)


words = st.text(alphabet="abcd", min_size=1, max_size=9)
corpora = st.dictionaries(words, st.integers(min_value=1, max_value=6), min_size=1, max_size=10)


@settings(max_examples=150, deadline=None)
@given(corpora, st.integers(1, 30), st.integers(1, 3))
def test_random_corpora(word_freq, num_merges, min_frequency):
    if all(len(word) == 1 for word in word_freq):
        return  # subword-nmt calls max() on no pairs at all and fails
    merges = ours(word_freq, num_merges, min_frequency)
    assert merges == snmt_merges(word_freq, num_merges, min_frequency)
    if not merges:
        return  # apply_bpe cannot read a codes file without codes
    text = " ".join(word_freq)
    assert " ".join(mark_continuations(encode_text(text, merges, glue_end_of_word=True))) == snmt_segment(merges, text)


@settings(max_examples=100, deadline=None)
@given(corpora, st.integers(1, 20), words, st.sampled_from([0.1, 0.3, 0.6]), st.integers(0, 10**6))
def test_bpe_dropout_draws_as_apply_bpe_does(word_freq, num_merges, word, dropout, seed):
    merges = ours(word_freq, num_merges, 1)
    if not merges:
        return  # apply_bpe cannot read a codes file without codes
    pieces = encode_word(word, merges, glue_end_of_word=True, dropout=dropout, rng=random.Random(seed))
    random.seed(seed)  # apply_bpe draws from the random module itself
    assert " ".join(mark_continuations(pieces)) == snmt_segment(merges, word, dropout)


# ------------------------------------------------------ codes files, both ways


def snmt_learn_file(text, path, num_merges, min_frequency=2):
    """subword-nmt's learn_bpe on plain text, its codes written to ``path``."""
    with open(path, "w", encoding="utf-8") as codes:
        learn_bpe.learn_bpe(io.StringIO(text), codes, num_merges, min_frequency=min_frequency)


def snmt_apply_file(path, text):
    """subword-nmt's apply_bpe reading the codes file at ``path`` (its header included)."""
    with open(path, encoding="utf-8") as codes:
        return apply_bpe.BPE(codes).segment(text)


def ours_marked(text, merges, glued):
    return " ".join(mark_continuations(encode_text(text, merges, glue_end_of_word=glued)))


CLASSIC_TEXT = "low " * 5 + "lower " * 2 + "newest " * 6 + "widest " * 3


def test_subword_nmts_codes_file_loads_and_encodes_as_apply_bpe(tmp_path):
    codes = tmp_path / "codes.txt"
    snmt_learn_file(CLASSIC_TEXT, codes, 20)
    assert codes.read_text(encoding="utf-8").splitlines()[:3] == ["#version: 0.2", "s t</w>", "e st</w>"]
    merges, glued = read_merges(codes)
    assert glued is True
    assert merges == ours(word_frequencies(CLASSIC_TEXT), 20)
    assert load_merges(codes) == load_merges(codes, glue_end_of_word=True) == merges
    text = "lowest newest newer low the"
    assert ours_marked(text, merges, glued) == snmt_apply_file(codes, text) == "lo@@ west newest ne@@ wer low t@@ h@@ e"


def test_our_default_convention_is_saved_as_version_0_1_and_read_so_by_apply_bpe(tmp_path, textbook_corpus):
    merges = train_bpe(textbook_corpus, 5)
    assert merges == [("e", "s"), ("es", "t"), ("est", "</w>"), ("l", "o"), ("lo", "w")]
    path = tmp_path / "merges.txt"
    save_merges(merges, path)
    assert path.read_text(encoding="utf-8").splitlines()[0] == "#version: 0.1"
    # under "#version: 0.2" apply_bpe glued </w> and gave "low@@ es@@ t"
    assert snmt_apply_file(path, "lowest") == ours_marked("lowest", merges, False) == "low@@ est"


def test_our_glued_convention_is_saved_as_version_0_2_and_read_so_by_apply_bpe(tmp_path, textbook_corpus):
    merges = ours(textbook_corpus, 20)
    path = tmp_path / "codes.txt"
    save_merges(merges, path, glue_end_of_word=True)
    assert path.read_text(encoding="utf-8").splitlines()[:2] == ["#version: 0.2", "s t</w>"]
    assert read_merges(path) == (merges, True)
    text = "lowest newest newer low"
    assert snmt_apply_file(path, text) == ours_marked(text, merges, True) == "lo@@ west newest ne@@ wer low"


def test_bpe_lab_encode_reads_a_subword_nmt_codes_file(tmp_path, capsys):
    codes = tmp_path / "codes.txt"
    snmt_learn_file(CLASSIC_TEXT, codes, 10)
    capsys.readouterr()
    assert main(["encode", "--merges-file", str(codes), "lowest", "newer"]) == 0
    assert capsys.readouterr().out == "lo west</w> ne w e r</w>\n"
    assert main(["encode", "--merges-file", str(codes), "--format", "subword-nmt", "lowest", "newer"]) == 0
    assert capsys.readouterr().out == snmt_apply_file(codes, "lowest newer") + "\n" == "lo@@ west ne@@ w@@ e@@ r\n"


def test_a_codes_file_subword_nmt_learned_from_the_python_documentation(tmp_path):
    """Real text: the file that was refused at its third merge, ``th e</w>``."""
    codes = tmp_path / "codes.txt"
    snmt_learn_file(" ".join(python_docs("train").split()[:8000]), codes, 300)
    assert codes.read_text(encoding="utf-8").splitlines()[:4] == ["#version: 0.2", "t h", "i n", "th e</w>"]
    merges, glued = read_merges(codes)
    assert glued and len(merges) == 300
    heldout = " ".join(python_docs("heldout").split()[:3000])
    assert ours_marked(heldout, merges, True) == snmt_apply_file(codes, heldout)


@pytest.mark.parametrize(
    "flags, header, printed",
    [
        ([], "#version: 0.1", "low@@ est new@@ e@@ r"),
        (
            ["--glue-end-of-word", "--tie-break", "lexicographic", "--min-frequency", "2"],
            "#version: 0.2",
            "lo@@ west ne@@ w@@ e@@ r",
        ),
    ],
    ids=["default", "glued"],
)
def test_bpe_lab_train_writes_what_apply_bpe_reads(tmp_path, capsys, flags, header, printed):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(CLASSIC_TEXT, encoding="utf-8")
    out = tmp_path / "merges.txt"
    assert main(["train", str(corpus), "--merges", "10", "--out", str(out), *flags]) == 0
    assert out.read_text(encoding="utf-8").splitlines()[0] == header
    capsys.readouterr()
    assert main(["encode", "--merges-file", str(out), "--format", "subword-nmt", "lowest", "newer"]) == 0
    assert capsys.readouterr().out == snmt_apply_file(out, "lowest newer") + "\n" == printed + "\n"
    if flags:  # the glued file is subword-nmt's own, line for line
        snmt_learn_file(CLASSIC_TEXT, tmp_path / "codes.txt", 10)
        assert out.read_text(encoding="utf-8") == (tmp_path / "codes.txt").read_text(encoding="utf-8")


@contextlib.contextmanager
def scratch_file(name):
    with tempfile.TemporaryDirectory() as folder:
        yield Path(folder) / name


@settings(max_examples=100, deadline=None)
@given(corpora, st.integers(1, 30), st.integers(1, 3), st.lists(words, min_size=1, max_size=8))
def test_random_codes_files_from_subword_nmt_load_and_encode_as_apply_bpe(word_freq, num_merges, min_frequency, new):
    if all(len(word) == 1 for word in word_freq):
        return  # subword-nmt calls max() on no pairs at all and fails
    text = "\n".join(" ".join([word] * count) for word, count in word_freq.items())
    with scratch_file("codes.txt") as codes:
        snmt_learn_file(text, codes, num_merges, min_frequency)
        merges, glued = read_merges(codes)
        assert glued and merges == ours(word_freq, num_merges, min_frequency)
        if not merges:
            return  # apply_bpe cannot read a codes file without codes
        sample = " ".join([*word_freq, *new])
        assert ours_marked(sample, merges, True) == snmt_apply_file(codes, sample)


@settings(max_examples=100, deadline=None)
@given(corpora, st.integers(1, 30), st.booleans(), st.lists(words, min_size=1, max_size=8))
def test_random_merges_we_save_are_read_by_apply_bpe_as_we_encode(word_freq, num_merges, glued, new):
    merges = train_bpe(word_freq, num_merges, glue_end_of_word=glued, on_short="ignore")
    if not merges:
        return  # apply_bpe cannot read a codes file without codes
    with scratch_file("merges.txt") as path:
        save_merges(merges, path, glue_end_of_word=glued)
        assert read_merges(path) == (merges, glued)
        sample = " ".join([*word_freq, *new])
        assert snmt_apply_file(path, sample) == ours_marked(sample, merges, glued)


# ------------------------------------------------------ where a word ends


def test_words_end_at_different_characters(textbook_corpus):
    """bpe_lab's words end at any white space (``str.split()``); subword-nmt's
    at ASCII spaces only: a tab, U+00A0 and U+3000 stay inside its words."""
    merges = ours(textbook_corpus, 20)
    text = "low\u00a0lower\tnewest\u3000widest low"
    assert ours_marked(text, merges, True) == "low lower newest widest low"
    assert snmt_segment(merges, text) == "lo@@ w@@ \xa0@@ lo@@ we@@ r@@ \t@@ ne@@ we@@ s@@ t@@ \u3000@@ widest low"
    assert word_frequencies(text) == {"low": 2, "lower": 1, "newest": 1, "widest": 1}
    assert learn_bpe.get_vocabulary(io.StringIO(text + "\n")) == {"low\xa0lower\tnewest\u3000widest": 1, "low": 1}
    # with ASCII spaces alone, the words and the pieces are the same
    plain = text.replace("\u00a0", " ").replace("\t", " ").replace("\u3000", " ")
    assert ours_marked(plain, merges, True) == snmt_segment(merges, plain) == "low lower newest widest low"
    # and every docstring that claims parity with subword-nmt says so
    for claim in (encode_text, split_words, train_bpe, mergefile):
        assert "ASCII spaces only" in " ".join(claim.__doc__.split()), claim.__name__
