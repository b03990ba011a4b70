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
02, ``encoding`` 03, ``complexity`` 04, with the ``instruments`` that count what a trainer
touches, ``bytelevel`` 05, ``variants`` 06, ``wild`` 07, ``scale`` 08, ``production`` 09, ``capstone`` 10).
``find_first_mistake`` is the reference for the "find the mistake" task.
``answers`` lists the package functions that answer each exercise, and
``guard`` takes them away while a learner's function runs (here, and in a
grading kernel): this package is the learner's side of grading, and imports
nothing of the instructor's stages beside it.
``HiddenCases`` (``hidden``) is what a test cell's hidden tests are written
with: it counts the cases right and makes the cell's value its score, so
real nbgrader gives the same partial credit as ``bpe-lab grade``.
"""

from __future__ import annotations

from bpe_lab.core.corpora import TEXTBOOK_CORPUS
from bpe_lab.grading.check.bytelevel import (
    check_bytes_to_unicode,
    check_decode_bytelevel,
    check_encode_bytelevel,
    check_train_bytelevel,
    text_file,
)
from bpe_lab.grading.check.capstone import (
    check_my_tokenizer,
    check_split_specials,
    check_train_with_pattern,
    my_tokenizer_results,
    reloaded,
    split_five_languages,
)
from bpe_lab.grading.check.complexity import (
    check_build_index,
    check_merge_and_update,
    check_merge_indexed,
    check_pair_deltas,
    check_train_indexed,
)
from bpe_lab.grading.check.compression import check_compress, check_decompress, check_most_frequent_pair
from bpe_lab.grading.check.encoding import check_decode, check_encode_word
from bpe_lab.grading.check.hidden import HiddenCases
from bpe_lab.grading.check.instruments import TracedWords, traced_corpus, work_growth
from bpe_lab.grading.check.production import (
    check_build_pipeline,
    check_pair_processor,
    pair_results,
    pipeline_results,
    templated,
    word_tokenizer,
)
from bpe_lab.grading.check.runner import CheckFailed, finish_first
from bpe_lab.grading.check.scale import (
    MeteredText,
    check_count_chunk,
    check_encode_stream,
    check_find_chunk_boundaries,
    check_merge_counts,
    stream_results,
)
from bpe_lab.grading.check.training import (
    Mistake,
    check_count_pairs,
    check_first_mistake,
    check_merge_pair,
    check_train,
    find_first_mistake,
)
from bpe_lab.grading.check.variants import (
    check_longest_match,
    check_sp_decode,
    check_viterbi,
    han_words_learned,
)
from bpe_lab.grading.check.wild import check_never_emitted, check_pretokenize_digits, check_pretokenize_zh

__all__ = [
    "CheckFailed",
    "finish_first",
    "HiddenCases",
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
    "check_build_index",
    "check_merge_indexed",
    "check_train_indexed",
    "work_growth",
    "TracedWords",
    "traced_corpus",
    "check_bytes_to_unicode",
    "check_train_bytelevel",
    "text_file",
    "check_encode_bytelevel",
    "check_decode_bytelevel",
    "check_longest_match",
    "check_viterbi",
    "check_sp_decode",
    "han_words_learned",
    "check_pretokenize_digits",
    "check_pretokenize_zh",
    "check_never_emitted",
    "check_find_chunk_boundaries",
    "check_count_chunk",
    "check_merge_counts",
    "check_encode_stream",
    "stream_results",
    "MeteredText",
    "check_build_pipeline",
    "pipeline_results",
    "check_pair_processor",
    "pair_results",
    "word_tokenizer",
    "templated",
    "check_split_specials",
    "check_train_with_pattern",
    "split_five_languages",
    "check_my_tokenizer",
    "my_tokenizer_results",
    "reloaded",
]
