"""The course's byte-level tokenizer as Hugging Face ``tokenizers`` and tiktoken build it.

What this adds over ``tokenizer`` (bpe_lab's own ``Tokenizer``) and
``files`` (GPT-2's ``vocab.json`` and ``merges.txt``): the same vocabulary,
merges, pattern and special tokens assembled as the two production
libraries want them, so that chapter 09 can show that all three give the
same ids, and ``tests/test_production_parity.py`` can check it on random
text:

- ``hf_tokenizer``: a ``tokenizers.Tokenizer`` of blocks: no normalizer, a
  ``ByteLevel`` pre-tokenizer (GPT-2's pattern is built in) or a ``Split``
  on the pattern followed by ``ByteLevel(use_regex=False)``, a ``models.BPE``
  whose vocabulary and merges are written in GPT-2's printable characters
  (``byte_map``), the special tokens as added tokens with bpe_lab's ids, and a
  ``decoders.ByteLevel``;
- ``onig_pattern``: a pattern as the Oniguruma engine of ``tokenizers`` reads
  it the way the ``regex`` module does. Oniguruma's default syntax (``ONIG_SYNTAX_ONIGURUMA``)
  takes ``?+``, ``*+`` and ``++`` as possessive, but ``{1,3}+`` as ``{1,3}``
  repeated: cl100k's ``\\p{N}{1,3}+`` would keep any run of digits whole.
  Where nothing follows the bounded repeat in its branch (cl100k, o200k and
  Llama 3's digits), greedy and possessive match the same, so ``{n,m}+``
  becomes ``{n,m}``;
- ``tiktoken_encoding``: a ``tiktoken.Encoding`` whose ranks are the ids
  (tiktoken merges the adjacent pair whose join has the lowest rank, which is
  the merge order when ids follow it, as ``train_bytelevel``'s do);
- ``hf_train``: HF's ``BpeTrainer`` on documents, its merges read back as bytes.

``tokenizers`` and ``tiktoken`` are imported inside the functions, never when
this module loads: a grading kernel's allow-list of libraries is computed from
what the package imports at module level (``grading.run.distributions``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

import regex

from bpe_lab.bytelevel.byte_map import printable_to_token, token_to_printable
from bpe_lab.bytelevel.tokenizer import Tokenizer

__all__ = ["onig_pattern", "hf_tokenizer", "tiktoken_encoding", "hf_train", "hf_merges"]

#: ``{n,m}+``: possessive in the ``regex`` module, a repeated repeat in Oniguruma's default syntax.
_POSSESSIVE_BOUNDED = regex.compile(r"(\{\d+(?:,\d*)?\})\+")


def onig_pattern(pattern: str) -> str:
    r"""``pattern`` with each possessive bounded repeat ``{n,m}+`` written
    ``{n,m}``, which ``tokenizers``' Oniguruma reads as the ``regex`` module
    reads the original wherever nothing after the repeat can give back
    (the course's patterns; ``tests/test_production_parity.py`` checks them).

    >>> onig_pattern(r"\p{N}{1,3}+| ?\p{L}++")
    '\\p{N}{1,3}| ?\\p{L}++'
    """
    return str(_POSSESSIVE_BOUNDED.sub(r"\1", pattern))


def hf_tokenizer(tokenizer: Tokenizer) -> Any:
    """A ``tokenizers.Tokenizer`` that gives ``tokenizer``'s ids: the same
    vocabulary (ids included), merges, pattern and special tokens."""
    from tokenizers import AddedToken, Regex, decoders, models, pre_tokenizers
    from tokenizers import Tokenizer as HFTokenizer

    specials = tokenizer.special_ids
    vocab = {token_to_printable(t): i for i, t in tokenizer.vocab.items() if i not in specials.values()}
    vocab.update(specials)  # an added token's id is the model's id for its text
    merges = [(token_to_printable(a), token_to_printable(b)) for a, b in tokenizer.merges]
    hf = HFTokenizer(models.BPE(vocab, merges))
    if tokenizer.pattern.name == "gpt2":
        hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    else:
        hf.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(onig_pattern(tokenizer.pattern.regex)), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
    hf.decoder = decoders.ByteLevel()
    hf.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in tokenizer.special_tokens])
    return hf


def tiktoken_encoding(tokenizer: Tokenizer, name: str = "bpe_lab") -> Any:
    """A ``tiktoken.Encoding`` with ``tokenizer``'s pattern, its tokens'
    ids as ranks, and its special tokens."""
    import tiktoken

    specials = tokenizer.special_ids
    ranks = {t: i for i, t in tokenizer.vocab.items() if i not in specials.values()}
    return tiktoken.Encoding(name, pat_str=tokenizer.pattern.regex, mergeable_ranks=ranks, special_tokens=specials)


def hf_merges(hf: Any) -> list[tuple[bytes, bytes]]:
    """A ``tokenizers`` BPE model's merges, as pairs of bytes."""
    merges = json.loads(hf.to_str())["model"]["merges"]
    pairs = [m.split(" ") if isinstance(m, str) else m for m in merges]
    return [(printable_to_token(a), printable_to_token(b)) for a, b in pairs]


def hf_train(
    documents: Iterable[str], vocab_size: int, special_tokens: Sequence[str], *, min_frequency: int = 0
) -> tuple[Any, list[tuple[bytes, bytes]]]:
    """HF's ``BpeTrainer`` on ``documents`` (each pre-tokenized on its own,
    as ``train_bytelevel`` treats the text between special tokens), with
    GPT-2's byte-level pre-tokenizer and the 256 bytes as initial alphabet;
    the trained ``tokenizers.Tokenizer`` and its merges as bytes."""
    from tokenizers import Tokenizer as HFTokenizer
    from tokenizers import decoders, models, pre_tokenizers, trainers

    hf = HFTokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(special_tokens),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        min_frequency=min_frequency,
        show_progress=False,
    )
    hf.train_from_iterator(documents, trainer)
    return hf, hf_merges(hf)
