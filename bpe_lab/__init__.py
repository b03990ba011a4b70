"""BPE Lab: Byte Pair Encoding from Gage's 1994 compression trick to the
byte-level BPE inside today's language models.

One module per idea of the course (the notebook that teaches it in brackets):

- ``compression``: Gage's byte-pair compression (01)
- ``pretokenize``: text -> words, GPT-2's regex, special tokens (00, 05)
- ``train``: the textbook trainer and its round-by-round trace (02)
- ``encode``: rank-replay encoding, decoding, longest match for contrast (03)
- ``mergefile``, ``textfile``: the merges file; UTF-8 errors that name the byte
- ``train_fast``: the incremental trainer, pair index + lazy max-heap (04;
  ``from bpe_lab.core.train_fast import train_fast``)
- ``bytelevel_encode``: O(n^2) rank replay vs linked list + heap (04)
- ``scaling``, ``bench``: timing curves and the benchmark (04; ``bpe-lab bench``)
- ``bytes_unicode``: GPT-2's printable byte <-> unicode map (05)
- ``bytelevel_train``: ``train_bytelevel``, streamed and parallel (05)
- ``tokenizer``, ``tokenizer_files``, ``pretrained``: the byte-level
  ``Tokenizer``, its files, and GPT-2's real ranks offline (05)
- ``granularity``, ``variants``, ``corpora``: characters vs words vs subwords,
  ``▁`` / WordPiece / Unigram, and the course's offline texts (00, 06)
- ``labels``, ``steps``, ``views``, ``widgets``, ``plots``: the steppers and
  figures (imported as submodules: ``from bpe_lab.ui.widgets import MergeStepper``)
- ``check``, ``release``, ``grader``, ``sandbox``: self-checks, exercise
  generation and grading (``bpe-lab release``, ``bpe-lab grade``)
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
from bpe_lab.core.train import (
    Round,
    Trace,
    count_pairs,
    merge_symbols,
    pick_pair,
    train_bpe,
    train_trace,
    word_to_symbols,
)
from bpe_lab.variants.compression import compress, decompress

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
]
