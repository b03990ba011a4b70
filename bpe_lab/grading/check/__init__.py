"""Self-checks for the exercises: your function against the package's.

Each ``check_*`` function calls the learner's function on fixed cases (the
ones where the classic mistakes show) and on seeded random ones, compares it
with the reference in ``bpe_lab.variants.compression``, ``bpe_lab.core.train``,
``bpe_lab.core.encode`` and the later layers, and either prints one line
saying how many cases agree or raises ``CheckFailed`` whose message names the
first wrong case and says what probably went wrong, for example::

    round 1: expected ('e', 's') with count 9, got ('t', '</w>') (count 9):
    ties go to the pair met first

The hints come from recognising the mistake, not from a generic diff: the
answer is recomputed the wrong way (without word-frequency weights, by
longest match, without ``</w>``, ...) and compared with what the learner got.

What this package adds over its modules: one namespace for the notebooks
(``from bpe_lab.grading import check; check.check_train(train)``). The loop
every check shares is in ``runner``; each chapter's cases, references and
hints are in a module of their own (``compression`` for 01, ``training``
02, ``encoding`` 03, ``complexity`` 04, ``bytelevel`` 05, ``variants`` 06).
``find_first_mistake`` is the reference for the "find the mistake" task.
"""

from __future__ import annotations

from bpe_lab.core.corpora import TEXTBOOK_CORPUS
from bpe_lab.grading.check.bytelevel import check_bytes_to_unicode, check_decode_bytelevel, check_encode_bytelevel
from bpe_lab.grading.check.complexity import check_merge_and_update, check_pair_deltas
from bpe_lab.grading.check.compression import check_compress, check_decompress, check_most_frequent_pair
from bpe_lab.grading.check.encoding import check_decode, check_encode_word
from bpe_lab.grading.check.runner import CheckFailed
from bpe_lab.grading.check.training import (
    Mistake,
    check_count_pairs,
    check_first_mistake,
    check_merge_pair,
    check_train,
    find_first_mistake,
)
from bpe_lab.grading.check.variants import check_longest_match, check_sp_decode, check_viterbi

__all__ = [
    "CheckFailed",
    "Mistake",
    "TEXTBOOK_CORPUS",
    "find_first_mistake",
    "check_most_frequent_pair",
    "check_compress",
    "check_decompress",
    "check_count_pairs",
    "check_merge_pair",
    "check_train",
    "check_first_mistake",
    "check_encode_word",
    "check_decode",
    "check_pair_deltas",
    "check_merge_and_update",
    "check_bytes_to_unicode",
    "check_encode_bytelevel",
    "check_decode_bytelevel",
    "check_longest_match",
    "check_viterbi",
    "check_sp_decode",
]
