"""``ast.parse`` that a finaliser cannot break, for every parse the grader makes.

CPython 3.11 before 3.11.8 keeps one AST recursion counter per interpreter
(CPython issue gh-106905). If the garbage collector runs while ``ast.parse``
turns its tree into Python objects, and a finaliser it calls parses too, the
outer parse fails with ``SystemError: AST constructor recursion depth
mismatch``. That happens in a grader: asyncio logs a kernel-polling task
that a finished grading left behind, and in 3.11 formatting the traceback
calls ``ast.parse``. So a later submission's grading failed for no fault of
its own (seen in CI on 3.11.7). The collector is paused for the length of one
parse, which is short: cell sources, case calls, the package's modules.

>>> type(parse("x = 1").body[0]).__name__
'Assign'
"""

from __future__ import annotations

import ast
import gc
from typing import Literal, overload

__all__ = ["parse"]


@overload
def parse(source: str | bytes, filename: str = ..., mode: Literal["exec"] = ...) -> ast.Module: ...
@overload
def parse(source: str | bytes, filename: str = ..., *, mode: Literal["eval"]) -> ast.Expression: ...
def parse(source: str | bytes, filename: str = "<unknown>", mode: str = "exec") -> ast.AST:
    """``ast.parse(source, filename, mode)`` with the garbage collector paused."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return ast.parse(source, filename, mode)
    finally:
        if enabled:
            gc.enable()
