"""The examples in the package's docstrings run and print what they say."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import storeframes
from tests._extras import importable

MODULES = sorted(
    name
    for _, name, _ in pkgutil.walk_packages(storeframes.__path__, "storeframes.")
    if not name.endswith("__main__") and importable(name)
)


@pytest.mark.parametrize("name", ["storeframes", *MODULES])
def test_docstring_examples(name, fresh_default):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
