"""The default client behind the package-level functions (``storeframes.metadata_frame`` ...).

It is built from the environment on first use (``$STOREFRAMES_API_KEY``,
``$STOREFRAMES_BASE_URL``, ``$STOREFRAMES_CACHE_DIR``, ``$STOREFRAMES_OFFLINE``), or set
with :func:`configure`:

>>> import storeframes as sf
>>> client = sf.configure(sandbox=True)      # the in-process sandbox, no token needed
>>> sf.metadata_frame("3233849169").height
1
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable
from typing import Any

from .client import Client
from .errors import ConfigurationError

__all__ = [
    "benchmarks_frame",
    "changes_frame",
    "configure",
    "default_client",
    "in_app_purchases_frame",
    "metadata_frame",
    "metrics_frame",
    "permissions_frame",
    "plan",
    "privacy_changes_frame",
    "related_apps_frame",
    "screenshot_changes_frame",
    "screenshots_frame",
    "search_frame",
    "search_history_frame",
    "version_changes_frame",
    "versions_frame",
    "videos_frame",
]

_lock = threading.Lock()
_client: Client | None = None
_owned = False  # whether the default client was built here (and may be closed here)


def configure(client: Client | None = None, *, sandbox: bool = False, **options: Any) -> Client:
    """Set the client the package-level functions use, and return it.

    Give a :class:`Client`, or ``sandbox=True`` for :meth:`Client.sandbox`, or the
    options of :class:`Client` (``api_key``, ``budget``, ``cache_dir`` ...). A default
    client built here before is closed.

    >>> sf.configure(budget=5_000, cache_dir="analysis-cache")  # doctest: +SKIP
    Client(base_url='https://...', api_key=set, spent=0, budget=5000, ...)
    """
    global _client, _owned
    if client is not None and (sandbox or options):
        raise ConfigurationError("configure() takes a client, or sandbox=True and options, not both")
    if client is not None and not isinstance(client, Client):
        raise ConfigurationError(f"configure() takes a storeframes.Client, got {type(client).__name__}")
    chosen = client if client is not None else Client.sandbox(**options) if sandbox else Client(**options)
    with _lock:
        previous, owned = _client, _owned
        _client, _owned = chosen, client is None
    if previous is not None and owned and previous is not chosen:
        previous.close()
    return chosen


def default_client() -> Client:
    """The client the package-level functions use (built from the environment on first use)."""
    global _client, _owned
    with _lock:
        if _client is None:
            _client, _owned = Client(), True
        return _client


def _delegate(name: str) -> Callable[..., Any]:
    """A package-level function calling the default client's method ``name``."""
    method = getattr(Client, name)

    @functools.wraps(method)
    def function(*args: Any, **kwargs: Any) -> Any:
        return getattr(default_client(), name)(*args, **kwargs)

    signature = inspect.signature(method)
    function.__signature__ = signature.replace(parameters=list(signature.parameters.values())[1:])  # type: ignore[attr-defined]
    function.__qualname__ = name
    function.__module__ = "storeframes"
    del function.__wrapped__  # type: ignore[attr-defined]
    return function


metadata_frame = _delegate("metadata_frame")
versions_frame = _delegate("versions_frame")
screenshots_frame = _delegate("screenshots_frame")
videos_frame = _delegate("videos_frame")
in_app_purchases_frame = _delegate("in_app_purchases_frame")
related_apps_frame = _delegate("related_apps_frame")
permissions_frame = _delegate("permissions_frame")
metrics_frame = _delegate("metrics_frame")
changes_frame = _delegate("changes_frame")
privacy_changes_frame = _delegate("privacy_changes_frame")
screenshot_changes_frame = _delegate("screenshot_changes_frame")
version_changes_frame = _delegate("version_changes_frame")
search_frame = _delegate("search_frame")
search_history_frame = _delegate("search_history_frame")
benchmarks_frame = _delegate("benchmarks_frame")
plan = _delegate("plan")
