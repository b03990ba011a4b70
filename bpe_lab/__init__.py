"""BPE Lab: Byte Pair Encoding from Gage's 1994 compression trick to the
byte-level BPE inside today's language models.

The package is the course, in layers that import only downward (the
notebook that teaches each idea in brackets; CONTRIBUTING.md draws it):

- ``core``: textbook BPE on characters with ``</w>``: pre-tokenization and
  word counts (00), training round by round (02), encoding by rank replay
  (03), the incremental trainer (04), merges files, offline corpora;
- ``bytelevel``: UTF-8 bytes, GPT-2's byte map and pre-tokenizer, the
  encoders, ``train_bytelevel``, the ``Tokenizer`` and its files, GPT-2's
  real ranks offline (04, 05);
- ``variants``: Gage's compression (01), granularity (00, 06), SentencePiece's
  ``▁``, WordPiece and Unigram (06), timing curves (04);
- ``ui``: the steppers, token views and figures (``from bpe_lab.ui.widgets
  import MergeStepper``), in English and Chinese;
- ``grading``: the learner's self-checks (``from bpe_lab.grading import
  check``), exercise release and the grader (``bpe-lab release``,
  ``bpe-lab grade``);
- ``cli`` and ``bench``: the ``bpe-lab`` command and ``make bench``.

The names below are the stable public API: ``docs/api.md`` gives their
signatures and the CS336 seam.
"""

from bpe_lab.bytelevel.byte_map import bytes_to_unicode, unicode_to_bytes
from bpe_lab.bytelevel.gpt2 import gpt2_tokenizer
from bpe_lab.bytelevel.tokenizer import Tokenizer
from bpe_lab.bytelevel.train import train_bytelevel
from bpe_lab.core.encode import (
    apply_merges,
    decode_words,
    encode_text,
    encode_word,
    longest_match,
    merge_ranks,
    vocabulary,
)
from bpe_lab.core.mergefile import load_merges, save_merges
from bpe_lab.core.pretokenize import GPT2_PATTERN, gpt2_pretokenize, split_special, split_words, word_frequencies
from bpe_lab.core.textfile import read_text
from bpe_lab.core.train import Round, Trace, count_pairs, pick_pair, train_bpe, train_trace
from bpe_lab.core.words import merge_symbols, word_to_symbols
from bpe_lab.variants.compression import compress, decompress
from bpe_lab.variants.unigram import Unigram
from bpe_lab.variants.unigram_train import train_unigram
from bpe_lab.variants.wordpiece import WordPiece, train_wordpiece

__version__ = "0.1.0"

__all__ = [
    "compress",
    "decompress",
    "apply_merges",
    "decode_words",
    "encode_text",
    "encode_word",
    "longest_match",
    "merge_ranks",
    "vocabulary",
    "load_merges",
    "save_merges",
    "GPT2_PATTERN",
    "gpt2_pretokenize",
    "split_special",
    "split_words",
    "word_frequencies",
    "read_text",
    "Round",
    "Trace",
    "count_pairs",
    "merge_symbols",
    "pick_pair",
    "train_bpe",
    "train_trace",
    "word_to_symbols",
    "train_bytelevel",
    "bytes_to_unicode",
    "unicode_to_bytes",
    "Tokenizer",
    "gpt2_tokenizer",
    "WordPiece",
    "train_wordpiece",
    "Unigram",
    "train_unigram",
]
