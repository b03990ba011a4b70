"""Layer 1, the textbook algorithms: characters, ``</w>``, word counts.

Everything here needs only the standard library and ``regex``; every other
layer builds on it, and it imports none of them. The data path, one module
per step:

- ``symbols``: the markers (``</w>``, ``▁``, ``<|endoftext|>``), the pair
  type and the argument checks every layer shares;
- ``textfile``: reading UTF-8, with errors that name the byte offset;
- ``pretokenize``: text -> words (white space, GPT-2's pattern, special
  tokens) and ``word_frequencies``;
- ``words``: a word -> its symbols, joining one pair (``merge_symbols``):
  the primitives below every trainer and encoder;
- ``options``: the trainers' keywords as one checked ``TrainOptions``;
- ``train``: the textbook trainer, recounting every round, and its ``Trace``;
- ``merge_update``: the incremental merge update, one word at a time, that
  both incremental trainers run on;
- ``train_fast``: the same merges from a pair index and a lazy heap;
- ``encode``: rank replay, decoding, longest match for contrast;
- ``mergefile``: the merges file, with errors that name the line;
- ``corpora``: the small offline texts the course trains on.
"""
