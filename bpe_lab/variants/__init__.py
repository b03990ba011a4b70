"""Layer 3, BPE's ancestors and neighbours, measured against it.

Built on ``core`` (and free to use ``bytelevel``), used by the interface and
the course machinery above:

- ``compression``: Gage's 1994 byte-pair compression, where BPE began (01);
- ``granularity``: characters vs words vs subwords, measured (00, 06);
- ``sentencepiece``: ``▁`` before a word instead of ``</w>`` after it (06);
- ``wordpiece``: a pair's score instead of its count, ``##`` and longest match (06);
- ``unigram``: a probability per token and Viterbi instead of rank replay (06);
- ``unigram_train``: seed vocabulary, EM and pruning behind ``train_unigram`` (06);
- ``scaling``: timing curves for the complexity chapter (04).
"""
