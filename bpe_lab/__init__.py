"""BPE Lab: Byte Pair Encoding from Gage's 1994 compression trick to the
byte-level BPE inside today's language models.

One module per idea of the course:

- ``compression``: Gage's byte-pair compression (notebook 01)
- ``pretokenize``: text -> words, GPT-2's regex, special tokens (00, 05)
- ``train``: the textbook trainer and its round-by-round trace (02)
- ``encode``: rank-replay encoding, decoding, longest match for contrast (03)
"""

from .compression import compress, decompress
from .encode import apply_merges, decode_words, encode_text, encode_word, longest_match, merge_ranks, vocabulary
from .mergefile import load_merges, save_merges
from .pretokenize import GPT2_PATTERN, gpt2_pretokenize, split_special, split_words, word_frequencies
from .textfile import read_text
from .train import Round, Trace, count_pairs, merge_symbols, pick_pair, train_bpe, train_trace, word_to_symbols

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
]
