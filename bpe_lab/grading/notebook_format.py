"""``nbformat`` without jsonschema's IRI grammars, for every stage that reads or writes notebooks.

nbformat validates notebooks with jsonschema. When jsonschema is first
imported it registers a checker for each string format it can check, and
for the ``iri`` and ``iri-reference`` formats it imports ``rfc3987_syntax``
(installed with ``jsonschema[format-nongpl]``, which Jupyter's packages ask
for), which builds a lark parser for each of its IRI rules while it is
imported: nine tenths of the CPU time of ``import nbformat`` (measured on
Python 3.11 with jsonschema 4.26 and rfc3987-syntax 1.1).
Every grader process paid it at start (``bpe-lab grade``, each Gradescope
run, each process of the test suite that grades), for formats that no
notebook schema names and that nbformat never checks (it validates without
a format checker). See python-jsonschema/jsonschema#1428.

So when this module is the first to import jsonschema in a process, it
imports nbformat with ``rfc3987_syntax`` made unimportable for that one
import, and importable again afterwards: jsonschema then simply has no IRI
checker, as where ``rfc3987_syntax`` is not installed. Where jsonschema is
already imported (a Jupyter server), nothing changes. The test suite loads
this module before its notebook plugin imports nbformat (``-p`` in
pyproject.toml's addopts).

>>> nbformat.v4.new_code_cell("1").cell_type
'code'
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import TYPE_CHECKING

__all__ = ["nbformat"]

_GRAMMARS = "rfc3987_syntax"


def _imported() -> ModuleType:
    """nbformat, jsonschema imported without ``_GRAMMARS`` if this is its first import."""
    first = "jsonschema" not in sys.modules and _GRAMMARS not in sys.modules
    if first:
        sys.modules[_GRAMMARS] = None  # type: ignore[assignment]  # "import rfc3987_syntax" raises ImportError
    try:
        import nbformat as module
    finally:
        if first and sys.modules.get(_GRAMMARS, 0) is None:
            del sys.modules[_GRAMMARS]
    return module


if TYPE_CHECKING:  # the module itself, as a type checker reads it
    import nbformat
else:
    nbformat = _imported()
