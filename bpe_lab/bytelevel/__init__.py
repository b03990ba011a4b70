"""Layer 2, byte-level BPE: the tokenizer inside GPT-2 and its successors.

What it adds over ``core`` (characters and ``</w>``): the symbols are UTF-8
bytes, so nothing is ever out of vocabulary; text is cut by GPT-2's
pre-tokenizer first; special tokens map to one id each. One module per step:

- ``byte_map``: GPT-2's printable stand-in for each of the 256 bytes;
- ``encoders``: rank replay inside one pre-token (the definition, the scan
  and the heap, and the one dispatch the Tokenizer uses);
- ``progress``: when to show a progress bar, and the bar;
- ``workers``: worker processes that are fresh interpreters over pipes;
- ``train``: ``train_bytelevel``, streamed over chunks and counted in
  worker processes; ``merge_learner``: its merges, in compact state;
- ``vocab``: the checks a vocabulary and a merge list must pass;
- ``specials``: which special tokens a text may contain, tiktoken-style;
- ``files``: the tokenizer's JSON and GPT-2's ``vocab.json``/``merges.txt``;
- ``tokenizer``: ``Tokenizer``: text -> ids -> text; ``streaming``: what
  ``encode_iterable`` may encode before more text arrives;
- ``encode_file``: a whole file to a NumPy array or ``.npy``, in parallel;
- ``gpt2``: GPT-2's real ranks, shipped with the package, offline.
"""
