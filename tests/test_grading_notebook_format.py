"""The grader's one import of nbformat: without jsonschema's IRI grammars,
and nothing else changed (``bpe_lab.grading.notebook_format``).

Each case runs in a fresh interpreter, since what it is about happens once
per process, at the first import."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("rfc3987_syntax") is None,
    reason="rfc3987_syntax is not installed: there are no IRI grammars to leave out",
)


def _fresh(code: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def test_the_grader_starts_without_building_the_iri_grammars_and_leaves_them_importable():
    found = _fresh(
        "import json, sys\n"
        "import bpe_lab.grading.commands.grader\n"
        "import jsonschema\n"
        "before = 'rfc3987_syntax' in sys.modules\n"
        "iri = 'iri' in jsonschema.FormatChecker.checkers\n"
        "import rfc3987_syntax\n"
        "print(json.dumps([before, iri, rfc3987_syntax.is_valid_syntax('iri', 'https://example.org/ü')]))"
    )
    assert found == [False, False, True]


def test_nbformat_still_validates_what_it_reads():
    found = _fresh(
        "import json\n"
        "from bpe_lab.grading.notebook_format import nbformat\n"
        "nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('1')])\n"
        "nbformat.validate(nb)\n"
        "nb.cells[0]['cell_type'] = 'nonsense'\n"
        "try:\n"
        "    nbformat.validate(nb)\n"
        "    caught = ''\n"
        "except nbformat.ValidationError as err:\n"
        "    caught = type(err).__name__\n"
        "print(json.dumps(caught))"
    )
    assert found == "NotebookValidationError"


def test_where_jsonschema_came_first_nothing_changes():
    found = _fresh(
        "import json, sys\n"
        "import jsonschema\n"
        "from bpe_lab.grading.notebook_format import nbformat\n"
        "print(json.dumps(['rfc3987_syntax' in sys.modules, 'iri' in jsonschema.FormatChecker.checkers]))"
    )
    assert found == [True, True]
