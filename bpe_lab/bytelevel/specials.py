"""Special tokens in the text to encode: which become ids, which are refused.

What this adds over ``core/pretokenize.py`` (``special_token_pattern`` finds
every special token, longest first): tiktoken's two keywords, which say what
to do with each special token found in the text.

- ``allowed_special``: the special tokens that become their single id;
- ``disallowed_special``: the ones whose presence raises ValueError, because
  text typed by a user should never hold a control token (a user who types
  ``<|endoftext|>`` could end the document, or forge a chat template's
  markers: special-token injection);
- a special token in neither set is encoded as ordinary text, byte by byte.

Each takes ``"all"`` or a set. ``"all"`` for ``disallowed_special`` means
every special token not allowed, so ``allowed_special=set()`` alone refuses
them all (tiktoken's default). As in tiktoken, disallowed tokens are looked
for in the raw text, so one inside an allowed token (``<|a|>`` in
``<|a|><|a|>``) raises too: the safe reading when in doubt.

>>> specials = SpecialTokens(["<|endoftext|>", "<|pad|>"])
>>> specials.to_encode("a<|pad|>", "all", "all").findall("a<|pad|>")  # the tokens to encode as ids
['<|pad|>']
>>> specials.to_encode("a<|pad|>", {"<|endoftext|>"}, "all")
Traceback (most recent call last):
...
ValueError: the text contains the special token '<|pad|>' at character 1, which disallowed_special refuses. ...
>>> specials.to_encode("a<|pad|>", set(), ()) is None   # nothing special: all ordinary text
True
"""

from __future__ import annotations

from collections.abc import Collection, Sequence, Set
from typing import Literal

import regex

from bpe_lab.core.pretokenize import special_token_pattern

__all__ = ["AllowedSpecial", "DisallowedSpecial", "SpecialTokens"]

#: ``"all"`` or a set of the tokenizer's special tokens (tiktoken's types).
AllowedSpecial = Literal["all"] | Set[str]
DisallowedSpecial = Literal["all"] | Collection[str]


class SpecialTokens:
    """A tokenizer's special tokens, and the patterns that find them.

    ``tokens`` must be distinct, non-empty strings (ValueError otherwise).
    """

    def __init__(self, tokens: Sequence[str]):
        if isinstance(tokens, str):
            raise TypeError(f"special_tokens must be a list of strings, got the string {tokens!r}")
        self.tokens: list[str] = list(tokens)
        #: Finds every special token, longest first; None if there is none.
        self.pattern = special_token_pattern(self.tokens)  # checks duplicates and ""
        self.all = frozenset(self.tokens)
        # A pattern per subset of the tokens, made the first time it is asked for.
        self._patterns: dict[frozenset[str], regex.Pattern[str] | None] = {self.all: self.pattern}
        # Every prefix of every special token: text ending in one of them may
        # end with the start of a special token that more text completes.
        self._prefixes = {token[:k] for token in self.tokens for k in range(1, len(token) + 1)}
        self._longest = max(map(len, self.tokens), default=0)

    def to_encode(
        self, text: str, allowed_special: AllowedSpecial, disallowed_special: DisallowedSpecial, *, offset: int = 0
    ) -> regex.Pattern[str] | None:
        """The pattern of the special tokens to encode as ids in ``text``
        (None: none), after raising ValueError at the first disallowed one
        (named by its character, counted from ``offset``: where ``text``
        starts in a longer text streamed block by block)."""
        allowed = self._as_set(allowed_special, "allowed_special")
        if disallowed_special == "all":
            disallowed = self.all - allowed
        else:
            disallowed = self._as_set(disallowed_special, "disallowed_special")
        if disallowed:
            self._refuse(text, disallowed, offset)
        return self._pattern(allowed)

    def unfinished(self, text: str) -> int:
        """Where the longest suffix of ``text`` that begins a special token
        starts (more text might complete it), or ``len(text)``."""
        for i in range(max(0, len(text) - self._longest + 1), len(text)):  # O(longest special token)
            if text[i:] in self._prefixes:
                return i
        return len(text)

    def _as_set(self, value: object, name: str) -> frozenset[str]:
        """``value`` ("all" or a collection of special tokens) as a frozenset."""
        if value == "all":
            return self.all
        if isinstance(value, str) or not isinstance(value, Collection):
            shown = f"the string {value!r}" if isinstance(value, str) else type(value).__name__
            raise TypeError(f'{name} must be "all" or a set of special tokens, got {shown}')
        tokens = frozenset(value)
        unknown = sorted(map(repr, tokens - self.all))
        if unknown:
            raise ValueError(
                f"{name} names {', '.join(unknown)}, which this tokenizer does not have as a special token; "
                f"its special tokens are {self.tokens}"
            )
        return tokens

    def _pattern(self, tokens: frozenset[str]) -> regex.Pattern[str] | None:
        if tokens not in self._patterns:
            self._patterns[tokens] = special_token_pattern(sorted(tokens))
        return self._patterns[tokens]

    def _refuse(self, text: str, disallowed: frozenset[str], offset: int) -> None:
        """Raise ValueError, as tiktoken does, at the first disallowed special
        token in ``text``; O(len(text)) when there is none."""
        pattern = self._pattern(disallowed)
        match = pattern.search(text) if pattern is not None else None
        if match is None:
            return
        token = match.group()
        raise ValueError(
            f"the text contains the special token {token!r} at character {offset + match.start()}, which "
            f"disallowed_special refuses. To encode it as its id, pass allowed_special={{{token!r}}} "
            f'(or "all"); to encode it as ordinary text, use encode_ordinary(text) or pass '
            f"disallowed_special=() (text typed by a user should never become a special token)"
        )
