"""Every worked example in a docstring is run, so none can drift out of date."""

import doctest
import importlib
import pkgutil

import pytest

import bpe_lab

MODULES = sorted(m.name for m in pkgutil.iter_modules(bpe_lab.__path__, "bpe_lab."))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
