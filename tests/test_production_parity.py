"""Chapter 09's pipeline: bpe_lab, Hugging Face tokenizers and tiktoken give the same ids.

The tokenizer is trained here on the course's Python documentation (as in the
notebook), then rebuilt block by block in ``tokenizers`` and as a
``tiktoken.Encoding`` by ``bpe_lab.bytelevel.hf_pipeline``; hypothesis draws
the texts. Offline: nothing is downloaded.
"""

from functools import cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizer_support import SAMPLES, SPECIAL_SAMPLE

from bpe_lab.bytelevel.hf_pipeline import hf_merges, hf_tokenizer, hf_train, onig_pattern, tiktoken_encoding
from bpe_lab.bytelevel.tokenizer import Tokenizer
from bpe_lab.bytelevel.train import train_bytelevel
from bpe_lab.core.corpora import python_docs_topics
from bpe_lab.core.patterns import PATTERNS, pretokenize_with

pytest.importorskip("tokenizers")
pytest.importorskip("tiktoken")

EOT = "<|endoftext|>"
PATTERN_NAMES = sorted(PATTERNS)


@cache
def trained(pattern: str) -> Tokenizer:
    import tempfile

    with tempfile.TemporaryDirectory(prefix="bpe-lab-parity-") as folder:
        path = Path(folder) / "docs.txt"
        topics = list(python_docs_topics().values())[:20]
        path.write_text(EOT.join(topics), encoding="utf-8", newline="")
        vocab, merges = train_bytelevel(path, 600, [EOT, "<|pad|>"], pattern=pattern)
    return Tokenizer(vocab, merges, [EOT, "<|pad|>"], pattern=pattern)


@cache
def three(pattern: str):
    tok = trained(pattern)
    return tok, hf_tokenizer(tok), tiktoken_encoding(tok)


#: text the pre-tokenizers disagree on most: digits, contractions in any case,
#: white space runs and new lines, letters of other scripts, emoji, symbols
PIECES = [
    "123456",
    "I'LL",
    "don't",
    " ",
    "  ",
    "\n",
    "\n\n  ",
    "\t",
    "\r\n",
    "é",
    "e\u0301",
    "今天",
    "🙂",
    "x=1;",
    "$",
    "α",
]
#: characters that Python's Unicode database (15.0 in 3.11) assigns: a code point assigned later is a letter
#: to one engine and unassigned to another (``regex`` knows U+3D000 as a letter, Oniguruma does not)
ASSIGNED = st.characters(exclude_categories=["Cn", "Cs"])
TEXT = st.lists(st.one_of(st.sampled_from(PIECES + [EOT, "<|pad|>"]), st.text(ASSIGNED, max_size=8)), max_size=12).map(
    "".join
)


@pytest.mark.parametrize("pattern", PATTERN_NAMES)
@settings(max_examples=60, deadline=None)
@given(text=TEXT)
def test_same_ids_in_all_three(pattern, text):
    tok, hf, enc = three(pattern)
    ids = tok.encode(text)
    assert hf.encode(text).ids == ids, f"{pattern}: tokenizers differs on {text!r}"
    assert enc.encode(text, allowed_special="all") == ids, f"{pattern}: tiktoken differs on {text!r}"
    assert hf.decode(ids, skip_special_tokens=False) == tok.decode(ids) == text


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_samples_and_special_tokens(name):
    tok, hf, enc = three("gpt2")
    for text in (SAMPLES[name], SPECIAL_SAMPLE):
        assert hf.encode(text).ids == tok.encode(text) == enc.encode(text, allowed_special="all")
    assert hf.token_to_id(EOT) == tok.special_ids[EOT] == enc.eot_token


@pytest.mark.parametrize("pattern", PATTERN_NAMES)
@settings(max_examples=80, deadline=None)
@given(text=TEXT)
def test_split_on_the_rewritten_pattern_cuts_as_regex_does(pattern, text):
    from tokenizers import Regex, pre_tokenizers

    split = pre_tokenizers.Split(Regex(onig_pattern(PATTERNS[pattern])), behavior="isolated")
    assert [p for p, _ in split.pre_tokenize_str(text)] == pretokenize_with(text, pattern)


def test_cl100k_as_written_keeps_digit_runs_whole_in_oniguruma():
    """Why ``onig_pattern`` exists: ``{1,3}+`` is not possessive in Oniguruma's default syntax
    (ONIG_SYNTAX_ONIGURUMA; its doc/RE: only in its Java and Perl syntaxes)."""
    from tokenizers import Regex, pre_tokenizers

    as_written = pre_tokenizers.Split(Regex(PATTERNS["cl100k"]), behavior="isolated")
    assert [p for p, _ in as_written.pre_tokenize_str("x 1234567")] == ["x", " ", "1234567"]
    assert pretokenize_with("x 1234567", "cl100k") == ["x", " ", "123", "456", "7"]


def test_hf_trainer_agrees_until_the_first_tie():
    """Fed the same documents, HF's trainer learns bpe_lab's merges in
    bpe_lab's order up to the first round where two pairs tie, which the two
    break differently."""
    tok = trained("gpt2")
    topics = list(python_docs_topics().values())[:20]
    _, theirs = hf_train(topics, 600, [EOT, "<|pad|>"])
    ours = tok.merges
    assert len(theirs) == len(ours)
    first = next(i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b)
    assert first > 20 and ours[:first] == theirs[:first]
    assert len(set(ours) & set(theirs)) > 0.9 * len(ours)


def test_hf_merges_reads_bytes_back():
    merges = [(b"\n", b"\n"), (b"\xc3", b"\xa9")]
    tok = Tokenizer({**{i: bytes([i]) for i in range(256)}, 256: b"\n\n", 257: b"\xc3\xa9"}, merges)
    hf = hf_tokenizer(tok)
    assert hf_merges(hf) == merges
    assert hf.encode("é\n\n").ids == tok.encode("é\n\n") == [257, 256]


def test_notebook_09_names_oniguruma_syntaxes_as_its_doc_re_does():
    """Issue 34 item 6: the notebook called Oniguruma's default syntax Ruby's
    and {n,m}+ possessive only in Java's. Oniguruma's doc/RE (v6.9.10): the
    default syntax is ONIG_SYNTAX_ONIGURUMA, and {n,m}+, {n,}+, {n}+ are
    possessive in ONIG_SYNTAX_JAVA and ONIG_SYNTAX_PERL only."""
    import nbformat

    notebook = nbformat.read(
        Path(__file__).resolve().parents[1] / "notebooks" / "09_from_bpe_lab_to_production.ipynb", as_version=4
    )
    text = "\n".join(cell.source for cell in notebook.cells)
    assert "Ruby" not in text and "only in its Java syntax" not in text
    assert "`ONIG_SYNTAX_ONIGURUMA`" in text and "only in its Java and Perl syntaxes" in text
    assert "https://github.com/kkos/oniguruma/blob/v6.9.10/doc/RE" in text
