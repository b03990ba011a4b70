"""A ``tokenizers`` pipeline retrained on a new corpus: transformers' ``train_new_from_iterator`` without transformers.

What this adds over ``hf_pipeline`` (the course's tokenizer assembled in
Hugging Face ``tokenizers``): keeping such a pipeline (normalizer,
pre-tokenizer, model type and its options, post-processor, decoder, special
tokens) and learning a new vocabulary for it from other text. transformers
does this in ``PreTrainedTokenizerFast.train_new_from_iterator``
(``src/transformers/tokenization_utils_fast.py``); ``retrain`` takes the same
steps on a bare ``tokenizers.Tokenizer``, since the course does not install
transformers:

1. read the tokenizer as JSON and take out its added tokens and its
   post-processor, which hold ids that are about to change;
2. empty the model's vocabulary (and a BPE model's merges), keeping its
   options, and build a tokenizer from that;
3. train it with the trainer of its model type, passing back the special
   tokens (so they get the first ids), a BPE model's
   ``continuing_subword_prefix`` and ``end_of_word_suffix``, and the 256
   byte stand-ins as initial alphabet when the pre-tokenizer is ByteLevel;
4. put the post-processor back with the special tokens' new ids.

Every id can change: it is a new vocabulary in the old pipeline, not more
training of the old one. Like transformers', only a ByteLevel pre-tokenizer
at the top level is recognised (not one inside a ``Sequence``), and only
BPE, WordPiece and WordLevel models are handled (Unigram needs its unknown
token carried over as well, which this does not do).

``tokenizers`` is imported inside the function, as in ``hf_pipeline``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from bpe_lab.core.symbols import check_int

__all__ = ["retrain"]

_EMPTIED = {"BPE": ("vocab", "merges"), "WordPiece": ("vocab",), "WordLevel": ("vocab",)}


def retrain(tokenizer: Any, texts: Iterable[str], vocab_size: int, **trainer_options: Any) -> Any:
    """A new ``tokenizers.Tokenizer`` with ``tokenizer``'s pipeline and a
    vocabulary of ``vocab_size`` entries (special tokens included) learned
    from ``texts``; ``trainer_options`` go to the trainer (``min_frequency``,
    ...). ``tokenizer`` is left as it was.

    Raises ValueError for a model type other than BPE, WordPiece and
    WordLevel, and for an argument that is not a ``tokenizers.Tokenizer``.
    """
    from tokenizers import AddedToken, pre_tokenizers, trainers
    from tokenizers import Tokenizer as HFTokenizer

    check_int(vocab_size, "vocab_size", minimum=1)
    if not isinstance(tokenizer, HFTokenizer):
        raise ValueError(f"retrain takes a tokenizers.Tokenizer, got {type(tokenizer).__name__}")
    data = json.loads(tokenizer.to_str())
    added, post = data.pop("added_tokens", None) or [], data.pop("post_processor", None)
    model = data["model"]
    kind = model["type"]
    if kind not in _EMPTIED:
        raise ValueError(f"retrain handles BPE, WordPiece and WordLevel models, not {kind}")
    for key in _EMPTIED[kind]:
        model[key] = {} if key == "vocab" else []
    fresh = HFTokenizer.from_str(json.dumps(data))
    options = dict(trainer_options)
    if kind == "BPE":
        for key in ("continuing_subword_prefix", "end_of_word_suffix"):
            if model.get(key) is not None:
                options.setdefault(key, model[key])
    if (data.get("pre_tokenizer") or {}).get("type") == "ByteLevel":
        options.setdefault("initial_alphabet", pre_tokenizers.ByteLevel.alphabet())
    specials = [
        AddedToken(
            token["content"],
            single_word=token.get("single_word", False),
            lstrip=token.get("lstrip", False),
            rstrip=token.get("rstrip", False),
            normalized=token.get("normalized", False),
            special=True,
        )
        for token in added
        if token.get("special")
    ]
    trainer_class = {"BPE": trainers.BpeTrainer, "WordPiece": trainers.WordPieceTrainer}.get(
        kind, trainers.WordLevelTrainer
    )
    options.setdefault("show_progress", False)
    fresh.train_from_iterator(texts, trainer_class(vocab_size=vocab_size, special_tokens=specials, **options))
    if post is None:
        return fresh
    for entry in (post.get("special_tokens") or {}).values():  # TemplateProcessing
        entry["ids"] = [fresh.token_to_id(token) for token in entry["tokens"]]
    for key in ("cls", "sep"):  # BertProcessing, RobertaProcessing
        if key in post:
            post[key] = [post[key][0], fresh.token_to_id(post[key][0])]
    trained = json.loads(fresh.to_str())
    trained["post_processor"] = post
    return HFTokenizer.from_str(json.dumps(trained))
