"""Every chapter's generators in one table: importing a chapter's module registers its tasks.

What this adds over ``generators`` (the table the chapters fill, empty
until they are imported): the table filled. ``generated`` and the tests
take ``GENERATORS`` from here, so no task's generator is missing because
nothing happened to import its chapter. ``CHAPTERS``: the modules, one per
chapter, in the course's order.

>>> sorted({grade_id[:2] for grade_id in GENERATORS}) == [f"{n:02}" for n in range(1, 11)]
True
"""

from __future__ import annotations

from bpe_lab.grading.cases import (
    bytelevel,
    capstone,
    complexity,
    compression,
    encoding,
    production,
    scale,
    training,
    variants,
    wild,
)
from bpe_lab.grading.cases.generators import GENERATORS

__all__ = ["CHAPTERS", "GENERATORS"]

CHAPTERS = (compression, training, encoding, complexity, bytelevel, variants, wild, scale, production, capstone)
