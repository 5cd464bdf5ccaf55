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

import inspect
import os
import threading
from collections.abc import Callable
from datetime import date
from typing import Any, Concatenate, ParamSpec, TypeVar

from .client import ENV_API_KEY, ENV_BASE_URL, Client
from .errors import ConfigurationError
from .wire import shown_url

__all__ = [
    "benchmarks_frame",
    "changes_frame",
    "configure",
    "connect",
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

    Give a :class:`Client`, or ``sandbox=True`` for :func:`storeframes.sandbox.client`, or the
    options of :class:`Client` (``api_key``, ``budget``, ``cache_dir`` ...). A default
    client built here before is closed.

    >>> sf.configure(budget=5_000, cache_dir="analysis-cache")  # doctest: +SKIP
    Client(base_url='https://...', api_key=set, spent=0, budget=5000, ...)
    """
    if client is not None and (sandbox or options):
        raise ConfigurationError("configure() takes a client, or sandbox=True and options, not both")
    if client is not None and not isinstance(client, Client):
        raise ConfigurationError(f"configure() takes a storeframes.Client, got {type(client).__name__}")
    if client is not None:
        chosen = client
    elif sandbox:
        from . import sandbox as fake

        chosen = fake.client(**options)
    else:
        chosen = Client(**options)
    return _install(chosen, owned=client is None)


def _install(chosen: Client, *, owned: bool) -> Client:
    """Make ``chosen`` the default client; close the previous one if it was built here."""
    global _client, _owned
    with _lock:
        previous, was_owned = _client, _owned
        _client, _owned = chosen, owned
    if previous is not None and was_owned and previous is not chosen:
        previous.close()
    return chosen


def connect(
    cache_dir: Any = None,
    *,
    live: bool | None = None,
    budget: int | None = None,
    sandbox_today: str | date | None = None,
    seed: int = 0,
    quiet: bool = False,
    **options: Any,
) -> Client:
    """The client of a notebook or script: the real service when a token is set, else the sandbox.

    With ``live=None`` the real service is used when ``$STOREFRAMES_API_KEY`` and
    ``$STOREFRAMES_BASE_URL`` are both set, else the built-in sandbox (a deterministic
    fake: no token, nothing billed); ``live=True`` insists on the real service and
    ``live=False`` on the sandbox. ``sandbox_today`` pins the sandbox's today, so a
    notebook shows the same days wherever and whenever it runs (the real service's today
    is always the real one). ``cache_dir`` is the cache folder: keep it beside the
    notebook and share both, and the notebook runs again anywhere, with no token,
    offline (``$STOREFRAMES_OFFLINE=1``). Other ``options`` go to :class:`Client`.

    The client becomes the default of the package functions (``sf.metadata_frame`` ...),
    and one line says which service, today and cache folder are used (``quiet=True``
    says nothing).

    >>> client = sf.connect("analysis-cache", budget=20_000, sandbox_today="2026-11-20")  # doctest: +SKIP
    storeframes: the sandbox (no STOREFRAMES_API_KEY set), a deterministic fake of the service: nothing is billed; today is 2026-11-20; cache: analysis-cache
    """
    has_token = bool(os.environ.get(ENV_API_KEY)) and bool(os.environ.get(ENV_BASE_URL))
    if live is True and not has_token and "api_key" not in options:
        raise ConfigurationError(
            f"live=True needs a token and the service's address: set {ENV_API_KEY} and {ENV_BASE_URL}"
        )
    use_live = has_token or "api_key" in options if live is None else live
    if use_live:
        client = Client(budget=budget, cache_dir=cache_dir, **options)
        where = f"the service at {shown_url(client.base_url) if client.base_url else None}"
    else:
        from . import sandbox
        from .catalog import parse_day

        today = None if sandbox_today is None else parse_day("sandbox_today", sandbox_today, endpoint="connect")
        if today is not None:
            options["today"] = today
        client = sandbox.client(budget=budget, seed=seed, cache_dir=cache_dir, **options)
        reason = "" if live is False else f" (no {ENV_API_KEY} set)"
        where = f"the sandbox{reason}, a deterministic fake of the service: nothing is billed"
    _install(client, owned=True)  # built here: closed when another default replaces it
    if not quiet:
        cache = "off" if client.cache is None else str(cache_dir) if cache_dir is not None else client.cache.location
        budget_text = f"; budget {client.budget:,} credits" if client.budget is not None else ""
        offline = "; offline: answers come from the cache only" if client.offline else ""
        print(f"storeframes: {where}; today is {client.today()}{budget_text}; cache: {cache}{offline}")
    return client


def default_client() -> Client:
    """The client the package-level functions use (built from the environment on first use)."""
    global _client, _owned
    with _lock:
        if _client is None:
            _client, _owned = Client(), True
        return _client


P = ParamSpec("P")
R = TypeVar("R")


def _on_default(method: Callable[Concatenate[Client, P], R]) -> Callable[P, R]:
    """The package-level twin of a client method: the same signature, called on the default client.

    Type checkers see the method's parameters and return type (:pep:`612`); ``help()``
    and IDEs see its signature and docstring.
    """

    def function(*args: P.args, **kwargs: P.kwargs) -> R:
        return method(default_client(), *args, **kwargs)

    signature = inspect.signature(method)
    function.__signature__ = signature.replace(parameters=list(signature.parameters.values())[1:])  # type: ignore[attr-defined]
    function.__name__ = function.__qualname__ = method.__name__
    function.__doc__ = method.__doc__
    function.__module__ = "storeframes"
    return function


metadata_frame = _on_default(Client.metadata_frame)
versions_frame = _on_default(Client.versions_frame)
screenshots_frame = _on_default(Client.screenshots_frame)
videos_frame = _on_default(Client.videos_frame)
in_app_purchases_frame = _on_default(Client.in_app_purchases_frame)
related_apps_frame = _on_default(Client.related_apps_frame)
permissions_frame = _on_default(Client.permissions_frame)
metrics_frame = _on_default(Client.metrics_frame)
changes_frame = _on_default(Client.changes_frame)
privacy_changes_frame = _on_default(Client.privacy_changes_frame)
screenshot_changes_frame = _on_default(Client.screenshot_changes_frame)
version_changes_frame = _on_default(Client.version_changes_frame)
search_frame = _on_default(Client.search_frame)
search_history_frame = _on_default(Client.search_history_frame)
benchmarks_frame = _on_default(Client.benchmarks_frame)
plan = _on_default(Client.plan)
