"""Which package functions answer which exercise.

What this adds over the chapter modules (which compare a learner's function
with the package's): the list of everything in ``bpe_lab`` that computes an
exercise's answer, so that a learner's function may not simply call it (and
one function of another library: exercise 09's ``ByteLevelBPETokenizer``). A
task's forbidden functions are its own answers and their close equivalents
(``encode_word``: also ``apply_merges``, ``encode_text``, the encoder
stepper's data); a solution's cell metadata can add to them
(``"bpe_lab": {"forbid": [...]}``) or take helpers out
(``"bpe_lab": {"allow": ["count_pairs"]}``).

Paths are where a function is defined (``bpe_lab.core.train.count_pairs``,
not ``bpe_lab.count_pairs``); ``tests/test_grading_integrity.py`` checks
that each one resolves.

>>> forbidden("count_pairs")
('bpe_lab.core.train.count_pairs',)
"""

from __future__ import annotations

__all__ = ["ANSWERS", "CHAPTERS", "forbidden", "chapter_forbidden"]

_TRAIN = "bpe_lab.core.train"
_ENCODE = "bpe_lab.core.encode"
_TOKENIZER = "bpe_lab.bytelevel.tokenizer.Tokenizer"
_ENCODERS = "bpe_lab.bytelevel.encoders"
_UNIGRAM = "bpe_lab.variants.unigram"

#: what trains a byte-level tokenizer, every layer down to the merge loop
#: (chapter 05's train_bytelevel, and the capstone's train with a pattern)
_TRAIN_BYTELEVEL = (
    "bpe_lab.bytelevel.train.train_bytelevel",
    "bpe_lab.bytelevel.train.count_pretokens",
    "bpe_lab.bytelevel.train._count_chunk",
    "bpe_lab.bytelevel.train.build_vocab",
    "bpe_lab.bytelevel.merge_learner.learn_bytelevel_merges",
    "bpe_lab.core.train_fast.learn_merges",
    "bpe_lab.core.train_fast.train_fast",
    "bpe_lab.core.train_fast._Trainer.merge",
    f"{_TRAIN}.train_bpe",
    f"{_TRAIN}.train_trace",
    f"{_TRAIN}._rounds",
    f"{_TRAIN}.pick_pair",
)

#: what encodes and decodes with a byte-level tokenizer (chapter 05's
#: encode_bytelevel and decode_bytelevel, and the capstone's class)
_ENCODE_BYTELEVEL = (
    f"{_TOKENIZER}.encode",
    f"{_TOKENIZER}.encode_ordinary",
    f"{_TOKENIZER}.encode_iterable",
    f"{_TOKENIZER}._encode_piece",
    f"{_ENCODERS}.replay_merges",
    f"{_ENCODERS}.scan_replay",
    f"{_ENCODERS}.heap_replay",
    f"{_ENCODERS}.scan_merges",
    f"{_ENCODERS}.heap_merges",
    f"{_ENCODERS}.byte_pair_encode",
    f"{_ENCODERS}.scan_merge_ids",
    f"{_ENCODERS}.heap_merge_ids",
)
_DECODE_BYTELEVEL = (f"{_TOKENIZER}.decode", f"{_TOKENIZER}.decode_bytes")

#: exercise (the name its check gives it) -> the package functions that compute it
ANSWERS: dict[str, tuple[str, ...]] = {
    # 01 compression
    "most_frequent_pair": (
        "bpe_lab.variants.compression._pair_counts",
        "bpe_lab.variants.compression.compress",
        "bpe_lab.grading.check.compression.first_round",
    ),
    "compress": ("bpe_lab.variants.compression.compress",),
    "decompress": ("bpe_lab.variants.compression.decompress",),
    # 02 training
    "count_pairs": (f"{_TRAIN}.count_pairs",),
    "merge_pair": ("bpe_lab.core.words.merge_symbols",),
    "train": (
        f"{_TRAIN}.train_bpe",
        f"{_TRAIN}.train_trace",
        f"{_TRAIN}._rounds",
        f"{_TRAIN}.pick_pair",
        "bpe_lab.core.train_fast.train_fast",
        "bpe_lab.core.train_fast.learn_merges",
    ),
    "first_mistake": ("bpe_lab.grading.check.training.find_first_mistake", f"{_TRAIN}.train_trace"),
    # 03 encoding
    "encode_word": (
        f"{_ENCODE}.encode_word",
        f"{_ENCODE}.apply_merges",
        f"{_ENCODE}.encode_text",
        f"{_ENCODE}.replay_symbols",
        "bpe_lab.ui.steps.encode_steps",
    ),
    "decode": (f"{_ENCODE}.decode_words",),
    # 04 complexity (the recount it is held to is chapter 02's, allowed here)
    "pair_deltas": ("bpe_lab.grading.check.complexity.recount_deltas",),
    "merge_and_update": ("bpe_lab.core.train_fast._Trainer.merge",),
    "build_index": ("bpe_lab.grading.check.complexity.index_words",),
    "merge_indexed": ("bpe_lab.grading.check.complexity.merge_in_index", "bpe_lab.core.train_fast._Trainer.merge"),
    "train_indexed": (
        "bpe_lab.core.train_fast.learn_merges",
        "bpe_lab.core.train_fast.train_fast",
        "bpe_lab.core.train_fast._Trainer.merge",
        "bpe_lab.bytelevel.merge_learner.learn_bytelevel_merges",
        f"{_TRAIN}.train_bpe",
        f"{_TRAIN}.train_trace",
        f"{_TRAIN}._rounds",
        f"{_TRAIN}.pick_pair",
    ),
    # 05 byte-level
    "bytes_to_unicode": ("bpe_lab.bytelevel.byte_map.bytes_to_unicode",),
    "encode_bytelevel": _ENCODE_BYTELEVEL,
    "decode_bytelevel": _DECODE_BYTELEVEL,
    "train_bytelevel": _TRAIN_BYTELEVEL,
    # 06 variants
    "longest_match": (f"{_ENCODE}.longest_match", "bpe_lab.variants.wordpiece.WordPiece.encode"),
    "viterbi": (
        f"{_UNIGRAM}.viterbi",
        f"{_UNIGRAM}.Unigram.segment",
        f"{_UNIGRAM}.Unigram.encode",
        f"{_UNIGRAM}.Unigram.nbest",
    ),
    "sp_decode": ("bpe_lab.variants.sentencepiece.sp_decode", f"{_ENCODE}.decode_words", f"{_UNIGRAM}.Unigram.decode"),
    # 07 in the wild (GPT2_PATTERN and the other patterns are strings, free to read; what cuts or counts is not)
    "pretokenize_digits": (
        "bpe_lab.grading.check.wild.digit_pieces",
        "bpe_lab.core.patterns.pretokenize_with",
        "bpe_lab.core.patterns.side_by_side",
        "bpe_lab.core.patterns._compiled",
    ),
    "pretokenize_zh": (
        "bpe_lab.grading.check.wild.zh_pieces",
        "bpe_lab.core.patterns.pretokenize_with",
        "bpe_lab.core.patterns._compiled",
        "bpe_lab.variants.quirks.is_han",
    ),
    "never_emitted": (
        "bpe_lab.grading.check.wild.unemitted_tokens",
        "bpe_lab.variants.quirks.token_uses",
        "bpe_lab.variants.quirks.rarely_used",
        "bpe_lab.variants.quirks._merged_ids",
        "bpe_lab.variants.quirks.token_strings",
    ),
    # 08 scale (CS336's boundaries differ from chunk_bounds's, which is forbidden all the same)
    "find_chunk_boundaries": (
        "bpe_lab.grading.check.scale.chunk_boundaries",
        "bpe_lab.bytelevel.train.chunk_bounds",
        "bpe_lab.bytelevel.train._next_cut",
        "bpe_lab.bytelevel.train._cut_points",
    ),
    "count_chunk": (
        "bpe_lab.grading.check.scale.chunk_counts",
        "bpe_lab.bytelevel.train._count_chunk",
        "bpe_lab.bytelevel.train.count_pretokens",
        "bpe_lab.bytelevel.train.train_bytelevel",
    ),
    "merge_counts": ("bpe_lab.grading.check.scale.merged_counts", "bpe_lab.bytelevel.train.count_pretokens"),
    # Tokenizer.encode stays allowed (the task encodes each settled part with it); what streams is the answer
    "encode_stream": (
        "bpe_lab.grading.check.scale.stream_ids",
        f"{_TOKENIZER}.encode_iterable",
        f"{_TOKENIZER}._id_lists",
        f"{_TOKENIZER}.encode_file",
        "bpe_lab.bytelevel.streaming.blocks",
        "bpe_lab.bytelevel.streaming.unsettled",
        "bpe_lab.bytelevel.streaming.last_safe_cut",
        "bpe_lab.bytelevel.encode_file.encode_file",
    ),
    # 09 production (the pipeline's blocks are tokenizers'; bpe_lab's builder and GPT-2's files are the answer,
    # and so is tokenizers' own ByteLevelBPETokenizer, which assembles the blocks itself: trapped in the
    # kernel's first run only, as a grading kernel's bpe_lab is the only package the grader can stub)
    "build_pipeline": (
        "bpe_lab.bytelevel.hf_pipeline.hf_tokenizer",
        "bpe_lab.bytelevel.files.write_gpt2_files",
        "tokenizers.implementations.byte_level_bpe.ByteLevelBPETokenizer.__init__",
        *_ENCODE_BYTELEVEL,  # a stand-in "pipeline" whose encode is the package's gives the right ids too
    ),
    "pair_processor": ("bpe_lab.grading.check.production.template_reference",),
    # 10 capstone (the patterns are strings, free to read, and so is what cuts with them: a regex's findall)
    "split_specials": (
        "bpe_lab.grading.check.capstone.split_reference",
        "bpe_lab.core.pretokenize.split_special",
        "bpe_lab.core.pretokenize.special_token_pattern",
        "bpe_lab.bytelevel.specials.SpecialTokens.to_encode",
    ),
    "train_with_pattern": (
        "bpe_lab.grading.check.capstone.trained",
        *_TRAIN_BYTELEVEL,
    ),
    "my_tokenizer": (
        *_ENCODE_BYTELEVEL,
        *_DECODE_BYTELEVEL,
        f"{_TOKENIZER}.save",
        f"{_TOKENIZER}.load",
        f"{_TOKENIZER}.from_files",
        "bpe_lab.bytelevel.files.write_tokenizer_file",
        "bpe_lab.bytelevel.files.read_tokenizer_file",
        "bpe_lab.bytelevel.files.write_gpt2_files",
        "bpe_lab.bytelevel.files.read_gpt2_files",
    ),
}

#: the exercises of each chapter's notebook: a learner writes all of them, so
#: none of them may call the package's answer to another
CHAPTERS: dict[str, tuple[str, ...]] = {
    "compression": ("most_frequent_pair", "compress", "decompress"),
    "training": ("count_pairs", "merge_pair", "train", "first_mistake"),
    "encoding": ("encode_word", "decode"),
    "complexity": ("pair_deltas", "merge_and_update", "build_index", "merge_indexed", "train_indexed"),
    "bytelevel": ("bytes_to_unicode", "encode_bytelevel", "decode_bytelevel", "train_bytelevel"),
    "variants": ("longest_match", "viterbi", "sp_decode"),
    "wild": ("pretokenize_digits", "pretokenize_zh", "never_emitted"),
    "scale": ("find_chunk_boundaries", "count_chunk", "merge_counts", "encode_stream"),
    "production": ("build_pipeline", "pair_processor"),
    "capstone": ("split_specials", "train_with_pattern", "my_tokenizer"),
}


def forbidden(*exercises: str) -> tuple[str, ...]:
    """The package functions that answer any of ``exercises``, without repeats."""
    return tuple(dict.fromkeys(path for name in exercises for path in ANSWERS[name]))


def chapter_forbidden(exercise: str) -> tuple[str, ...]:
    """What ``exercise``'s self-check guards: the answers to every exercise of
    its chapter (nothing for an exercise this module does not know)."""
    chapter = next((names for names in CHAPTERS.values() if exercise in names), ())
    return forbidden(*chapter)
