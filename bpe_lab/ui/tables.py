"""Tables a learner reads: pandas DataFrames formatted for display.

Beside ``views`` (HTML) and ``plots`` (figures), this module formats the
package's DataFrames (``Trace.to_frame``, ``granularity_table``,
``vocab_curve``) for a notebook page. pandas shows a pair of strings
without quotes, so the pair of a comma and ``</w>`` reads ``(,, </w>)``; it
shows floats with six decimals and a missing value as ``None``.
``readable`` returns a copy in which every pair (or tuple of pairs) is
written with quotes, as Python writes it, floats are rounded, and a
missing value is a dash. The data itself is not changed: assert on the
frame, show ``readable(frame)``.

>>> import pandas as pd
>>> frame = pd.DataFrame({"pair": [(",", "</w>"), ("e", "s")], "share": [1 / 3, None], "next": [("e", "s"), None]})
>>> print(readable(frame).to_string(index=False))
         pair  share       next
(',', '</w>')  0.333 ('e', 's')
   ('e', 's')      —          —
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["readable", "show_value"]

MISSING = "—"


def show_value(value: object, digits: int = 3) -> object:
    """One cell as a learner should read it: tuples with quoted strings,
    floats rounded to ``digits`` decimals, None and NaN as a dash, the rest
    unchanged.

    >>> show_value(("e", "s")), show_value(0.123456), show_value(None), show_value(7)
    ("('e', 's')", 0.123, '—', 7)
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    if isinstance(value, tuple):
        return repr(value)
    if isinstance(value, float):
        return round(value, digits)
    return value


def readable(frame: pd.DataFrame, digits: int = 3) -> pd.DataFrame:
    """A copy of ``frame`` with every cell, and a tuple-valued index, passed
    through ``show_value``."""
    shown = frame.map(lambda value: show_value(value, digits))
    if not hasattr(frame.index, "levels") and any(isinstance(v, tuple) for v in frame.index):
        shown.index = [show_value(v, digits) for v in frame.index]
        shown.index.name = frame.index.name
    return shown
