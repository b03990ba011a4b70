"""Generated cases for chapter 02: counting pairs, merging, training, the first mistake.

What this adds over ``generators`` (the table and the shared inputs): the
inputs of chapter 02's four tasks and their references (``count_pairs``,
``merge_symbols``, ``train_bpe``, ``check.training.find_first_mistake`` on a
published trace with one round made wrong).

>>> import random
>>> from bpe_lab.grading.cases.generators import GENERATORS
>>> args = GENERATORS["02_training_train"].inputs(random.Random(1))[0]
>>> GENERATORS["02_training_train"].reference(*args) == __import__("bpe_lab").train_bpe(*args, on_short="ignore")
True
"""

from __future__ import annotations

import random
from typing import Any

from bpe_lab.core.train import count_pairs, train_bpe, train_trace
from bpe_lab.core.words import merge_symbols
from bpe_lab.grading.cases.generators import (
    Args,
    Pair,
    draw,
    random_corpus,
    random_symbols_and_pair,
    random_word_freq,
    register,
)
from bpe_lab.grading.check.training import find_first_mistake

__all__: list[str] = []  # it registers its generators, and exports nothing


@register("02_training_count_pairs", count_pairs)
def _count_pairs_inputs(rng: random.Random) -> list[Args]:
    return draw(lambda: (random_corpus(rng),))


@register("02_training_merge_pair", merge_symbols)
def _merge_pair_inputs(rng: random.Random) -> list[Args]:
    return draw(lambda: random_symbols_and_pair(rng))


def _train(word_freq: dict[str, int], num_merges: int) -> list[Pair]:
    return train_bpe(word_freq, num_merges, on_short="ignore")


@register("02_training_train", _train)
def _train_inputs(rng: random.Random) -> list[Args]:
    return draw(lambda: (random_word_freq(rng), rng.randint(1, 10)))


def _first_mistake(word_freq: dict[str, int], trace: list[tuple[Pair, int]]) -> Any:
    found = find_first_mistake(word_freq, trace)
    return None if found is None else (found.round, found.expected_pair, found.expected_count)


def _published(rng: random.Random) -> Args | None:
    word_freq = random_word_freq(rng)
    trace = [(r.pair, r.count) for r in train_trace(word_freq, rng.randint(2, 6), on_short="ignore").rounds]
    if not trace:
        return None
    if rng.random() < 0.75:  # one round published wrong: its count, or another pair of that round
        i = rng.randrange(len(trace))
        trace[i] = (trace[i][0], trace[i][1] + rng.choice((-1, 1, 2)))
    return word_freq, trace


@register("02_training_first_mistake", _first_mistake)
def _first_mistake_inputs(rng: random.Random) -> list[Args]:
    return draw(lambda: _published(rng))
