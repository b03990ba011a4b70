"""Characters, words or subwords: measuring the trade-off BPE settles.

A tokenizer's *granularity* decides three numbers that pull against each
other (notebooks 00 and 06):

- **vocabulary size**: how many distinct tokens the model needs embeddings for;
- **tokens per word**: how long the sequences get;
- **unknown words**: how many words of new text contain a token the
  vocabulary lacks (and would become ``<unk>``).

Characters give a tiny vocabulary but long sequences; words give one token
per word but a huge vocabulary that still misses new words; BPE sits in
between, and its number of merges slides it from one end to the other. All
three are measured on word -> frequency tables, so a word that occurs 100
times counts 100 times.

>>> from bpe_lab.core.pretokenize import word_frequencies
>>> train = word_frequencies("low lower newest widest newest", split=words)
>>> test = word_frequencies("lowest newer", split=words)
>>> merges = [("e", "s"), ("es", "t"), ("est", "</w>"), ("l", "o"), ("lo", "w")]
>>> segment_words(test, merges)
{'lowest': ['low', 'est</w>'], 'newer': ['n', 'e', 'w', 'e', 'r', '</w>']}
>>> tokens_per_word(test, merges)
4.0
>>> unknown_rate(test, word_vocabulary(train))
1.0
>>> granularity_table(train, test, merges)["tokens per word"].tolist()
[6.5, 4.0, 1.0]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from bpe_lab.core.encode import merge_ranks, replay_symbols, vocabulary
from bpe_lab.core.pretokenize import gpt2_pretokenize
from bpe_lab.core.symbols import END_OF_WORD, Pair
from bpe_lab.core.words import corpus_from_word_freq

if TYPE_CHECKING:  # pandas is imported only when a table is asked for
    import pandas as pd

__all__ = [
    "words",
    "segment_words",
    "tokens_per_word",
    "word_vocabulary",
    "bpe_vocabulary",
    "unknown_rate",
    "granularity_table",
    "vocab_curve",
]


def words(text: str) -> list[str]:
    """Cut text into words the way GPT-2's pattern does, without the spaces:
    runs of letters, runs of digits and runs of other symbols are separate
    words, so ``"list."`` is ``list`` and ``.``, not a word of its own.
    Count them with ``word_frequencies(text, split=words)``.

    >>> words("Hello, world! It's 2024.")
    ['Hello', ',', 'world', '!', 'It', "'s", '2024', '.']
    """
    return [piece.strip() for piece in gpt2_pretokenize(text) if piece.strip()]


def segment_words(
    word_freq: Mapping[str, int], merges: Sequence[Pair], *, end_of_word: str | None = END_OF_WORD
) -> dict[str, list[str]]:
    """Each distinct word -> its BPE tokens (rank replay, as ``encode_word``),
    computed once per distinct word with the merge list checked once."""
    ranks = merge_ranks(merges, end_of_word=end_of_word)
    corpus = corpus_from_word_freq(word_freq, end_of_word=end_of_word)
    return {word: replay_symbols(symbols, ranks) for word, symbols in zip(word_freq, corpus)}


def tokens_per_word(
    word_freq: Mapping[str, int], merges: Sequence[Pair], *, end_of_word: str | None = END_OF_WORD
) -> float:
    """Average number of BPE tokens per running word (weighted by frequency).

    With no merges this is the character level: characters plus one
    end-of-word marker per word.
    """
    total = sum(word_freq.values())
    segmented = segment_words(word_freq, merges, end_of_word=end_of_word)
    return sum(len(segmented[w]) * n for w, n in word_freq.items()) / total


def word_vocabulary(word_freq: Mapping[str, int]) -> set[str]:
    """The word-level vocabulary: every distinct word seen in training."""
    return set(word_freq)


def bpe_vocabulary(
    word_freq: Mapping[str, int], merges: Sequence[Pair], *, end_of_word: str | None = END_OF_WORD
) -> set[str]:
    """Every character of the training words, the end-of-word marker, and
    one symbol per merge: the tokens a BPE model has embeddings for."""
    base = {ch for word in word_freq for ch in word}
    if end_of_word:
        base.add(end_of_word)
    return set(vocabulary(merges, sorted(base)))


def unknown_rate(
    word_freq: Mapping[str, int],
    vocab: set[str],
    merges: Sequence[Pair] | None = None,
    *,
    end_of_word: str | None = END_OF_WORD,
) -> float:
    """Share of running words that would need an ``<unk>`` token.

    Without ``merges`` words are the tokens (word level); with a merge list
    (possibly empty: character level) a word is unknown when one of its BPE
    tokens is missing from ``vocab``, which can only happen for a character
    never seen in training.
    """
    total = sum(word_freq.values())
    if merges is None:
        missing = sum(n for w, n in word_freq.items() if w not in vocab)
    else:
        segmented = segment_words(word_freq, merges, end_of_word=end_of_word)
        missing = sum(n for w, n in word_freq.items() if any(t not in vocab for t in segmented[w]))
    return missing / total


def granularity_table(
    train: Mapping[str, int], test: Mapping[str, int], merges: Sequence[Pair], *, end_of_word: str | None = END_OF_WORD
) -> pd.DataFrame:
    """A pandas DataFrame comparing character, BPE and word level: the
    vocabulary learned from ``train``, and tokens per word and unknown words
    measured on ``test`` (held-out text)."""
    import pandas as pd

    rows = []
    for name, level_merges in (("character", []), (f"BPE, {len(merges)} merges", list(merges))):
        vocab = bpe_vocabulary(train, level_merges, end_of_word=end_of_word)
        rows.append(
            {
                "granularity": name,
                "vocabulary size": len(vocab),
                "tokens per word": tokens_per_word(test, level_merges, end_of_word=end_of_word),
                "unknown words (%)": 100 * unknown_rate(test, vocab, level_merges, end_of_word=end_of_word),
            }
        )
    vocab = word_vocabulary(train)
    rows.append(
        {
            "granularity": "word",
            "vocabulary size": len(vocab),
            "tokens per word": 1.0,
            "unknown words (%)": 100 * unknown_rate(test, vocab),
        }
    )
    return pd.DataFrame(rows).set_index("granularity")


def vocab_curve(
    train: Mapping[str, int],
    test: Mapping[str, int],
    merges: Sequence[Pair],
    steps: Iterable[int],
    *,
    end_of_word: str | None = END_OF_WORD,
) -> pd.DataFrame:
    """Tokens per word on ``train`` and ``test`` after the first ``k`` merges,
    for each ``k`` in ``steps``: a pandas DataFrame with columns "merges",
    "vocabulary size", "train tokens per word", "test tokens per word".

    The first ``k`` merges of a longer run are exactly what training with
    ``k`` merges learns, so one training run gives the whole curve.
    """
    import pandas as pd

    rows = []
    for k in steps:
        if not 0 <= k <= len(merges):
            raise ValueError(f"step {k} is outside 0..{len(merges)} (the number of merges given)")
        prefix = list(merges[:k])
        rows.append(
            {
                "merges": k,
                "vocabulary size": len(bpe_vocabulary(train, prefix, end_of_word=end_of_word)),
                "train tokens per word": tokens_per_word(train, prefix, end_of_word=end_of_word),
                "test tokens per word": tokens_per_word(test, prefix, end_of_word=end_of_word),
            }
        )
    return pd.DataFrame(rows)
