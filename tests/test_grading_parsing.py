"""The grader's parse survives a finaliser that parses (CPython gh-106905)."""

import ast
import gc
import sys

import pytest

from bpe_lab.grading.parsing import parse

SOURCE = "x = [" + "[1, (2, 3)], " * 400 + "]\n"


class _Parses:
    """Freed only by the garbage collector (it refers to itself); parses when freed."""

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        ast.parse("y = 2\n" * 20)


def _parse_beside_finalisers(parse_with) -> None:
    threshold = gc.get_threshold()
    gc.collect()
    gc.set_threshold(1)  # the collector runs at almost every allocation
    try:
        for _ in range(30):
            _Parses()
            tree = parse_with(SOURCE)
            assert len(tree.body[0].value.elts) == 400
    finally:
        gc.set_threshold(*threshold)
        gc.collect()


def test_a_finaliser_that_parses_never_breaks_the_graders_parse():
    _parse_beside_finalisers(parse)


@pytest.mark.skipif(sys.version_info[:3] != (3, 11, 7), reason="the bug is seen on CPython 3.11.7, this suite's main")
def test_the_same_with_plain_ast_parse_fails_on_3_11_7():
    """So the test above can fail: without the pause, 3.11.7 raises."""
    with pytest.raises(SystemError, match="recursion depth mismatch"):
        _parse_beside_finalisers(ast.parse)
