"""The examples in the package's docstrings run and print what they say."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import storeframes
from storeframes import defaults

MODULES = sorted(
    name for _, name, _ in pkgutil.walk_packages(storeframes.__path__, "storeframes.") if not name.endswith("__main__")
)


@pytest.fixture
def own_default_client():
    """Examples may configure the package's default client: put the previous one back after."""
    saved = defaults._client, defaults._owned
    defaults._client, defaults._owned = None, False
    yield
    if defaults._client is not None and defaults._owned and defaults._client is not saved[0]:
        defaults._client.close()
    defaults._client, defaults._owned = saved


@pytest.mark.parametrize("name", ["storeframes", *MODULES])
def test_docstring_examples(name, own_default_client):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
