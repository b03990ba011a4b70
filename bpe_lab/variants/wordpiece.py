"""WordPiece (BERT): a pair's score instead of its count, longest match instead of rank replay (notebook 06).

What it adds over ``core.train`` and ``core.encode``:

- **training** merges the pair with the best *score*
  ``freq(a b) / (freq(a) * freq(b))`` instead of the most frequent pair, which
  favours pairs whose parts rarely occur apart (the rule as the Hugging Face
  NLP course, chapter 6, teaches it; ``wordpiece_scores`` shows the first
  round on the ``</w>`` corpus of notebook 02);
- **word-inner pieces** carry the ``##`` prefix instead of the word end
  carrying ``</w>``: ``hugs`` starts as ``h ##u ##g ##s``; joining
  ``a`` + ``##b`` gives ``ab`` and ``##a`` + ``##b`` gives ``##ab``;
- **encoding** keeps only the vocabulary, not the merge order: from the
  left, take the longest piece in the vocabulary (``##``-prefixed after the
  first), as BERT and Hugging Face ``tokenizers`` do. A word that cannot be
  covered, or is longer than ``max_input_chars_per_word``, becomes one
  ``[UNK]`` as a whole.

>>> corpus = {"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5}
>>> wordpiece_merges(corpus, 3)
[('##g', '##s'), ('h', '##u'), ('hu', '##gs')]
>>> wp = train_wordpiece(corpus, 12)
>>> wp.encode("hugs"), wp.encode("pugs"), wp.encode("mug")
(['hugs'], ['p', '##u', '##gs'], ['[UNK]'])
>>> wp.encode_text("hug bugs")
['hug', 'b', '##u', '##gs']
>>> max(wordpiece_scores({"low": 5, "lower": 2, "newest": 6, "widest": 3}).items(), key=lambda item: item[1])
(('i', 'd'), 0.3333333333333333)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from fractions import Fraction
from itertools import islice

from bpe_lab.core.symbols import END_OF_WORD, ON_SHORT, OnShort, Pair, check_choice, check_int, report_short
from bpe_lab.core.train import count_pairs
from bpe_lab.core.words import corpus_from_word_freq

__all__ = ["WordPiece", "train_wordpiece", "wordpiece_merges", "wordpiece_alphabet", "wordpiece_scores"]

UNK = "[UNK]"
PREFIX = "##"


class WordPiece:
    """A WordPiece encoder: a vocabulary and greedy longest-match-first.

    ``vocab`` maps each piece to its id (or is a sequence of pieces, ids by
    position); it must hold ``unk_token``. The other arguments are keyword
    only, with BERT's defaults.

    >>> wp = WordPiece(["[UNK]", "un", "##aff", "##able", "##a"])
    >>> wp.encode("unaffable"), wp.encode("unfit"), wp.encode_ids("unaffable unable")
    (['un', '##aff', '##able'], ['[UNK]'], [1, 2, 3, 1, 3])
    >>> wp.decode(wp.encode_text("unaffable un"))
    'unaffable un'
    """

    def __init__(
        self,
        vocab: Mapping[str, int] | Sequence[str],
        *,
        unk_token: str = UNK,
        continuing_subword_prefix: str = PREFIX,
        max_input_chars_per_word: int = 100,
    ) -> None:
        if isinstance(vocab, str):
            raise TypeError("vocab must be a mapping piece -> id or a sequence of pieces, not a str")
        table = dict(vocab) if isinstance(vocab, Mapping) else {piece: i for i, piece in enumerate(vocab)}
        if isinstance(vocab, Sequence) and len(table) != len(vocab):
            raise ValueError("vocab lists a piece twice")
        for piece, i in table.items():
            if not isinstance(piece, str) or not piece:
                raise ValueError(f"every piece must be a non-empty str, got {piece!r}")
            check_int(i, f"the id of {piece!r}")
        if len(set(table.values())) != len(table):
            raise ValueError("two pieces of vocab share an id")
        if unk_token not in table:
            raise ValueError(f"unk_token {unk_token!r} is not in the vocabulary; add it (train_wordpiece does)")
        if not isinstance(continuing_subword_prefix, str):
            raise TypeError(f"continuing_subword_prefix must be a str, got {continuing_subword_prefix!r}")
        self.unk_token = unk_token
        self.continuing_subword_prefix = continuing_subword_prefix
        self.max_input_chars_per_word = check_int(max_input_chars_per_word, "max_input_chars_per_word", minimum=1)
        self._vocab = table
        # No piece covers more characters than its length: no need to try longer stretches.
        self._longest = max(len(piece) for piece in table)

    @property
    def vocab(self) -> dict[str, int]:
        """Piece -> id (a copy)."""
        return dict(self._vocab)

    def __len__(self) -> int:
        return len(self._vocab)

    def __repr__(self) -> str:
        return f"WordPiece(<{len(self._vocab)} pieces>, unk_token={self.unk_token!r})"

    def encode(self, word: str) -> list[str]:
        """The pieces of one word, greedy longest match first.

        From the left, try the longest stretch first and shorten it one
        character at a time until it (with ``##`` in front, after the first
        piece) is in the vocabulary. If some position has no piece at all,
        the *whole word* becomes ``[UNK]`` (not just that character), as in
        BERT. O(n * L) look-ups for n characters and the longest piece L.
        """
        if not isinstance(word, str):
            raise TypeError(f"word must be a str, got {type(word).__name__}")
        if len(word) > self.max_input_chars_per_word:
            return [self.unk_token]
        pieces: list[str] = []
        start = 0
        while start < len(word):
            for end in range(min(len(word), start + self._longest), start, -1):  # longest first
                piece = word[start:end] if start == 0 else self.continuing_subword_prefix + word[start:end]
                if piece in self._vocab:
                    break
            else:
                return [self.unk_token]
            pieces.append(piece)
            start = end
        return pieces

    def encode_text(self, text: str) -> list[str]:
        """Encode every white-space-separated word of ``text`` (Python's
        ``str.split()``; Hugging Face's ``WhitespaceSplit`` splits alike except
        on the ASCII separators U+001C-U+001F, which it keeps in words)."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        return [piece for word in text.split() for piece in self.encode(word)]

    def encode_ids(self, text: str) -> list[int]:
        """``encode_text`` as ids."""
        return [self._vocab[piece] for piece in self.encode_text(text)]

    def decode(self, pieces: Sequence[str]) -> str:
        """Join pieces: a ``##`` piece is glued to the one before it, any other
        starts a new word. ``[UNK]`` stays ``[UNK]``: WordPiece forgets what
        the unknown word was."""
        prefix = self.continuing_subword_prefix
        text = ""
        for piece in pieces:
            if prefix and piece.startswith(prefix) and text:
                text += piece[len(prefix) :]
            else:
                text += (" " if text else "") + piece
        return text


def _check_word_freq(word_freq: Mapping[str, int]) -> None:
    if not isinstance(word_freq, Mapping):
        raise TypeError(f"word_freq must be a mapping word -> count, got {type(word_freq).__name__}")
    if not word_freq:
        raise ValueError("word_freq is empty: there is nothing to train on")
    for word, freq in word_freq.items():
        if not isinstance(word, str) or not word:
            raise ValueError(f"every word must be a non-empty str, got {word!r}")
        if isinstance(freq, bool) or not isinstance(freq, int) or freq <= 0:
            raise ValueError(f"the count of {word!r} must be a positive int, got {freq!r}")


def _initial_split(word: str, prefix: str) -> list[str]:
    return [word[0]] + [prefix + ch for ch in word[1:]]


def wordpiece_alphabet(word_freq: Mapping[str, int], *, continuing_subword_prefix: str = PREFIX) -> list[str]:
    """The starting pieces, sorted: every first character as it is, every
    later character with ``##`` in front.

    >>> wordpiece_alphabet({"hug": 1, "bun": 1})
    ['##g', '##n', '##u', 'b', 'h']
    """
    _check_word_freq(word_freq)
    return sorted({piece for word in word_freq for piece in _initial_split(word, continuing_subword_prefix)})


def join_pieces(a: str, b: str, prefix: str = PREFIX) -> str:
    """The piece a merge of ``a`` and ``b`` makes: ``b`` loses its ``##``.

    >>> join_pieces("h", "##u"), join_pieces("##g", "##s")
    ('hu', '##gs')
    """
    return a + b[len(prefix) :] if prefix and b.startswith(prefix) else a + b


def _merge_rounds(word_freq: Mapping[str, int], prefix: str) -> Iterator[tuple[Pair, str]]:
    """Yield (pair, new piece) round by round, for as long as some word has
    two pieces left.

    Each round merges the pair with the greatest score
    ``freq(a b) / (freq(a) * freq(b))``, compared exactly (as fractions), so
    that equal scores are equal. Tie-break: the tied pair met *first* when
    scanning the words in the order of ``word_freq`` and each word left to
    right (the Hugging Face course's rule, and the textbook ``"first"``).

    Counts are kept up to date instead of recounted: a merge touches only the
    words that hold its pair (``where``), and only their pieces are
    recounted. A round costs O(P) to find the best of the P distinct pairs,
    plus the length of the words it rewrites (the course's version recounts
    the whole corpus, O(N), every round).
    """
    words = list(word_freq)
    freqs = [word_freq[w] for w in words]
    splits = [_initial_split(w, prefix) for w in words]
    units: dict[str, int] = {}  # piece -> weighted count
    pairs: dict[Pair, int] = {}  # adjacent pair -> weighted count
    where: dict[Pair, set[int]] = {}  # pair -> the indices of the words that hold it

    def account(k: int, sign: int) -> None:
        split, freq = splits[k], sign * freqs[k]
        for piece in split:
            units[piece] = units.get(piece, 0) + freq
        for pair in zip(split, split[1:]):
            pairs[pair] = pairs.get(pair, 0) + freq
            if sign > 0:
                where.setdefault(pair, set()).add(k)
            elif pairs[pair] == 0:
                del pairs[pair], where[pair]
            else:
                where[pair].discard(k)

    for k in range(len(words)):
        account(k, +1)
    while pairs:
        # O(P): the best float score, then the exact maximum among the pairs
        # within rounding of it, then the first met among exact ties.
        scores = {pair: n / (units[pair[0]] * units[pair[1]]) for pair, n in pairs.items()}
        top = max(scores.values())
        close = [pair for pair, s in scores.items() if s >= top * (1 - 1e-9)]
        exact = {pair: Fraction(pairs[pair], units[pair[0]] * units[pair[1]]) for pair in close}
        best_score = max(exact.values())
        tied = [pair for pair in close if exact[pair] == best_score]
        best = min(tied, key=lambda pair: _first_seen(pair, where[pair], splits))
        a, b = best
        new = join_pieces(a, b, prefix)
        for k in sorted(where[best]):
            account(k, -1)
            split, out, i = splits[k], [], 0
            while i < len(split):  # left to right, non-overlapping: "a a a" with (a, a) -> "aa a"
                if i + 1 < len(split) and split[i] == a and split[i + 1] == b:
                    out.append(new)
                    i += 2
                else:
                    out.append(split[i])
                    i += 1
            splits[k] = out
            account(k, +1)
        yield best, new


def _first_seen(pair: Pair, holders: set[int], splits: list[list[str]]) -> tuple[int, int]:
    k = min(holders)
    split = splits[k]
    return k, next(i for i in range(len(split) - 1) if (split[i], split[i + 1]) == pair)


def wordpiece_merges(
    word_freq: Mapping[str, int], num_merges: int, *, continuing_subword_prefix: str = PREFIX
) -> list[Pair]:
    """The first ``num_merges`` merges WordPiece training makes, in order
    (fewer if every word became one piece). ``train_wordpiece`` keeps only
    the pieces they make; this list shows how it got there."""
    check_int(num_merges, "num_merges")
    _check_word_freq(word_freq)
    rounds = _merge_rounds(word_freq, continuing_subword_prefix)
    return [pair for pair, _ in islice(rounds, num_merges)]


def train_wordpiece(
    word_freq: Mapping[str, int],
    vocab_size: int,
    *,
    unk_token: str = UNK,
    continuing_subword_prefix: str = PREFIX,
    max_input_chars_per_word: int = 100,
    on_short: OnShort = "warn",
) -> WordPiece:
    """Train a WordPiece vocabulary of ``vocab_size`` pieces: ``unk_token``
    (id 0), the sorted alphabet (``wordpiece_alphabet``), then one new piece
    per merge in the order they were made (a merge that makes a piece
    already there adds nothing). Stops early when every word is a single
    piece; ``on_short`` ("warn", "raise", "ignore") says so.

    Raises ValueError for an empty ``word_freq``, a non-positive count, or a
    ``vocab_size`` too small to hold ``unk_token`` and the alphabet.
    """
    check_int(vocab_size, "vocab_size")
    check_choice(on_short, "on_short", ON_SHORT)
    alphabet = wordpiece_alphabet(word_freq, continuing_subword_prefix=continuing_subword_prefix)
    pieces = [unk_token] + [p for p in alphabet if p != unk_token]
    if vocab_size < len(pieces):
        raise ValueError(
            f"vocab_size {vocab_size} is smaller than the alphabet: {len(alphabet)} starting pieces and {unk_token!r}"
        )
    known = set(pieces)
    rounds = _merge_rounds(word_freq, continuing_subword_prefix)
    while len(pieces) < vocab_size:
        new = next(rounds, None)
        if new is None:
            report_short(vocab_size, len(pieces), on_short, what="pieces", reason="every word is now a single piece")
            break
        if new[1] not in known:
            known.add(new[1])
            pieces.append(new[1])
    return WordPiece(
        pieces,
        unk_token=unk_token,
        continuing_subword_prefix=continuing_subword_prefix,
        max_input_chars_per_word=max_input_chars_per_word,
    )


def wordpiece_scores(word_freq: Mapping[str, int], *, end_of_word: str | None = END_OF_WORD) -> dict[Pair, float]:
    """WordPiece's first-round score of every adjacent pair on the textbook
    corpus (characters and ``</w>``, no ``##``),
    ``count(a b) / (count(a) * count(b))`` with every count weighted by word
    frequency, in the order the pairs are first met (BPE would rank them by
    ``count(a b)`` alone)."""
    corpus = corpus_from_word_freq(word_freq, end_of_word=end_of_word)
    singles: dict[str, int] = {}
    for symbols, freq in corpus.items():
        for symbol in symbols:
            singles[symbol] = singles.get(symbol, 0) + freq
    return {(a, b): n / (singles[a] * singles[b]) for (a, b), n in count_pairs(corpus).items()}
