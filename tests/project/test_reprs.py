"""Every object of the package can be shown, even one whose construction failed half-way.

A traceback shown with its locals (``pytest -l``, an error tracker, ``traceback`` with
``capture_locals=True``) calls ``repr`` on the ``self`` of the constructor that raised. A repr that
raises there replaces the user's error (a mistyped bucket, a refused password) with an
``AttributeError`` about the package's insides.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import traceback
from collections.abc import Callable

import pytest

import storeframes as sf
from storeframes._tracebacks import ENV_FULL_TRACEBACK
from tests._extras import importable
from tests._secrets import exposures

# classes built by hand (not dataclasses or tuples), whose constructors do work that can fail
_BUILT_BY_HAND = sorted(
    {
        (module.__name__, name): cls
        for info in pkgutil.walk_packages(sf.__path__, "storeframes.")
        if not info.name.endswith("__main__") and importable(info.name)
        for module in [importlib.import_module(info.name)]
        for name, cls in vars(module).items()
        if inspect.isclass(cls)
        and cls.__module__ == module.__name__
        and not inspect.isabstract(cls)
        and not dataclasses.is_dataclass(cls)
        and not issubclass(cls, (tuple, BaseException))
        and "__init__" in vars(cls)
        and next(k for k in cls.__mro__ if "__repr__" in vars(k)).__module__.startswith("storeframes.")
    }.items()
)


def test_the_classes_looked_at_include_those_a_failed_call_leaves_half_built():
    names = {name for (_, name), _ in _BUILT_BY_HAND}
    assert {"Client", "Cache", "LocalStore", "ObjectStore", "MemoryStore", "SharedLimiter", "FileLeases"} <= names


@pytest.mark.parametrize("cls", [cls for _, cls in _BUILT_BY_HAND], ids=[f"{m}.{n}" for (m, n), _ in _BUILT_BY_HAND])
def test_a_half_built_object_is_shown_not_raised(cls):
    half_built = object.__new__(cls)  # what a constructor that raised at its first line leaves behind
    shown = repr(half_built)
    assert (isinstance(shown, str) and cls.__name__ in shown) or shown == "'***'", shown


TOKEN = "sk-live-halfbuilt-0123456789"
SECRET_KEY = "the-secret-access-key-0123"
BAD_BUCKET = {"cache_dir": "s3://team-bucket/team", "storage_options": {"endpoint": "ftp://x", "secret": SECRET_KEY}}


def test_a_client_whose_bucket_cannot_be_built_formats_its_traceback_with_locals(monkeypatch):
    monkeypatch.setenv(ENV_FULL_TRACEBACK, "1")  # the refusal keeps every frame, the constructor's among them
    with pytest.raises(sf.ConfigurationError) as caught:
        sf.Client(TOKEN, **BAD_BUCKET)  # type: ignore[arg-type]
    formatted = "".join(traceback.TracebackException.from_exception(caught.value, capture_locals=True).format())
    assert "self = Client(not built)" in formatted and "ConfigurationError" in formatted


def _misconfigured() -> dict[str, Callable[[], object]]:
    return {
        "a bucket that cannot be built": lambda: sf.Client(TOKEN, **BAD_BUCKET),  # type: ignore[arg-type]
        "a rate limit that is not (requests, seconds)": lambda: sf.Client(TOKEN, rate_limit=(0, "x")),  # type: ignore[arg-type]
        "a plain-http base URL": lambda: sf.Client(TOKEN, base_url="http://example.com/api/public/store"),
        "an unknown coordinator": lambda: sf.Client(TOKEN, coordinator="memcached://x"),
        "a token with a newline inside": lambda: sf.Client(TOKEN[:8] + "\n" + TOKEN[8:]),
        "sf.configure with a bad bucket": lambda: sf.configure(api_key=TOKEN, **BAD_BUCKET),
        "sf.connect with a bad bucket": lambda: sf.connect(api_key=TOKEN, quiet=True, **BAD_BUCKET),
    }


@pytest.mark.parametrize("full", [False, True], ids=["cut", "every frame"])
@pytest.mark.parametrize("case", list(_misconfigured()))
def test_a_client_that_cannot_be_built_shows_neither_token_nor_storage_secret_in_any_frame(case, full, monkeypatch):
    if full:
        monkeypatch.setenv(ENV_FULL_TRACEBACK, "1")
    with pytest.raises(sf.ConfigurationError) as caught:
        _misconfigured()[case]()
    # every frame but the tests' own (whose lines name the token on purpose), with their locals
    assert not exposures(caught.value, TOKEN, TOKEN[:8], SECRET_KEY)
