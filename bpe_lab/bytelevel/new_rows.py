"""A new token in a trained model: one more row in the embedding matrix and in the output layer.

What this adds over ``specials`` and ``tokenizer`` (which give a new special
token the id ``len(vocab)``): what that id needs on the model's side. A
model of vocabulary V and width d holds a V x d input embedding and, to
score the next token, a V x d output layer (GPT-2 *ties* them: one matrix
does both). A new id V indexes neither until each gains a row.

``add_rows`` initialises the new rows as the mean of the old ones (the
choice argued by John Hewitt, "Initializing New Word Embeddings for
Pretrained Language Models", 2021): in the output layer, the new token's
logit is then the mean of the old logits for every hidden state h, so by
Jensen's inequality exp(mean) <= mean of exp, and its probability is at
most 1 / (V + 1), never more than an average token's. A random row of the
wrong scale could instead take most of the probability at once.

>>> import numpy as np
>>> add_rows(np.array([[1.0, 0.0], [3.0, 2.0]]), 1)
array([[1., 0.],
       [3., 2.],
       [2., 1.]])
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from bpe_lab.core.symbols import check_int

__all__ = ["add_rows"]


def add_rows(matrix: NDArray[Any], count: int) -> NDArray[np.float64]:
    """A copy of ``matrix`` (rows: tokens) with ``count`` rows appended, each
    the mean of the existing rows; the new rows' ids are ``len(matrix)``
    onwards, as a tokenizer numbers new special tokens.

    Raises ValueError for a matrix that is not 2-D with at least one row and
    one column of finite numbers, or a negative ``count``.
    """
    check_int(count, "count", minimum=0)
    array = np.asarray(matrix)
    if array.ndim != 2 or array.shape[0] == 0 or array.shape[1] == 0:
        raise ValueError(
            f"matrix must be 2-D with at least one row and column (tokens x width), got shape {array.shape}"
        )
    if not np.issubdtype(array.dtype, np.number) or np.issubdtype(array.dtype, np.complexfloating):
        raise ValueError(f"matrix must hold real numbers, got dtype {array.dtype}")
    if not np.isfinite(array).all():
        raise ValueError("matrix holds a NaN or an infinity")
    rows = np.asarray(array, dtype=np.float64)
    mean = rows.mean(axis=0)
    return np.vstack([rows, np.tile(mean, (count, 1))])
