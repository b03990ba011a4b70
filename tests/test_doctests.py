"""Every worked example in a docstring, and the README's taste of the API, is
run, so none can drift out of date."""

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

import bpe_lab

MODULES = sorted(m.name for m in pkgutil.walk_packages(bpe_lab.__path__, "bpe_lab."))
README = Path(__file__).resolve().parents[1] / "README.md"
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def test_every_layer_is_collected():
    layers = {name.split(".")[1] for name in MODULES if name.count(".") >= 2}
    assert layers == {"core", "bytelevel", "variants", "ui", "grading", "bench"}
    assert "bpe_lab.core.train" in MODULES and "bpe_lab.bytelevel.tokenizer" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=FLAGS)
    assert result.failed == 0


def test_readme_examples():
    result = doctest.testfile(str(README), module_relative=False, optionflags=FLAGS)
    assert result.attempted >= 4 and result.failed == 0
