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

import contextlib
import inspect
import os
import threading
from collections.abc import Callable, Iterator
from datetime import date
from typing import Any, Concatenate, ParamSpec, TypeVar

from ._tracebacks import user_facing
from .cache import ENV_CACHE_DIR, open_cache, require_cache
from .client import ENV_API_KEY, ENV_BASE_URL, Client
from .engine import Plan
from .errors import ConfigurationError, InvalidParameterError, NoCacheError, StoreframesError
from .ledger import SERVICE
from .wire import shown_url
from .workspaces import ENV_WORKSPACE, Workspace
from .workspaces import workspace as named_workspace

__all__ = [
    "benchmarks_frame",
    "changes_frame",
    "configure",
    "connect",
    "default_client",
    "find_apps",
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
    "today",
    "use",
    "version_changes_frame",
    "versions_frame",
    "videos_frame",
]

_lock = threading.Lock()
_client: Client | None = None
_owned = False  # whether the default client was built here (and may be closed here)


@user_facing
def configure(client: Client | None = None, *, sandbox: bool = False, **options: Any) -> Client:
    """Set the client the package-level functions use, and return it.

    Give a :class:`Client`, or ``sandbox=True`` for :func:`storeframes.sandbox.client`, or the
    options of :class:`Client` (``api_key``, ``budget``, ``cache_dir`` ...). A default
    client built here before is closed.

    >>> sf.configure(budget=5_000, cache_dir="analysis-cache")  # doctest: +SKIP
    Client(base_url='https://...', api_key=set, 0 credits spent of a budget of 5,000, ...)
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
        with _secrets_dropped_on_failure(options):
            chosen = Client(**options)
    return _install(chosen, owned=client is None)


@contextlib.contextmanager
def _secrets_dropped_on_failure(options: dict[str, Any]) -> Iterator[None]:
    """When building a client fails, its token and storage options leave ``options``: no local of the
    frames a traceback shows (these functions' ``options``) holds them."""
    try:
        yield
    except BaseException:
        options.pop("api_key", None)
        options.pop("storage_options", None)
        raise


def _install(chosen: Client, *, owned: bool) -> Client:
    """Make ``chosen`` the default client; close the previous one if it was built here."""
    global _client, _owned
    with _lock:
        previous, was_owned = _client, _owned
        _client, _owned = chosen, owned
    if previous is not None and was_owned and previous is not chosen:
        previous.close()
    return chosen


@user_facing
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
    """The client of a notebook or script: the real service when a token is set, else what the cache holds.

    With ``live=None`` the real service is used when ``$STOREFRAMES_API_KEY`` and
    ``$STOREFRAMES_BASE_URL`` are both set. With no token, the cache folder decides: a
    folder holding the real service's answers (a colleague's, shared beside the notebook)
    serves them, offline, from the cache only (a call they do not answer raises
    :class:`~storeframes.NotCachedError`; sandbox answers are never mixed in, nothing is
    written but the ledger of the cache hits); a folder that is empty or holds sandbox
    answers gets the built-in sandbox (a deterministic fake: no token, nothing billed).
    ``live=True`` insists on the real service and ``live=False`` on the sandbox, which
    is refused for a folder of the real service's answers (give it a folder of its own).
    ``sandbox_today`` pins the sandbox's today, so a notebook shows the same days
    wherever and whenever it runs (the real service's today, and that of its answers
    served from a folder, is always the real one). ``cache_dir`` is the cache folder (or
    a bucket address; by default ``$STOREFRAMES_CACHE_DIR``, else the sandbox's own
    temporary folder): keep it beside the notebook and share both, and the notebook runs
    again anywhere, with no token. Other ``options`` go to :class:`Client`.

    The client becomes the default of the package functions (``sf.metadata_frame`` ...),
    and a few short lines say which service, today and cache folder are used (``quiet=True``
    says nothing): the service first, then today and the budget, then the cache, each short
    enough for a notebook's output, so that no line wraps in the middle of a date.

    >>> client = sf.connect("analysis-cache", budget=20_000, sandbox_today="2026-11-20")  # doctest: +SKIP
    storeframes: the sandbox (no STOREFRAMES_API_KEY set), a deterministic fake: nothing is billed
    today is 2026-11-20; budget 20,000 credits
    cache: analysis-cache
    """
    with _secrets_dropped_on_failure(options):
        return _connect(cache_dir, live, budget, sandbox_today, seed, quiet, options)


_OWN = ("cache_dir", "live", "budget", "sandbox_today", "seed", "quiet")


def _check_options(options: dict[str, Any], *, sandbox: bool) -> None:
    """Refuse an option neither :class:`Client` nor (for the sandbox) the sandbox service takes, by name only.

    Its value is never shown: a mistyped ``api_key`` would be a token.
    """
    known = {name for name in inspect.signature(Client.__init__).parameters if name not in ("self", "budget")}
    if sandbox:
        from .sandbox import SandboxService

        known |= {name for name in inspect.signature(SandboxService.__init__).parameters if name != "self"}
    known -= set(_OWN)
    for name in options:
        if name not in known:
            allowed = f"connect takes {', '.join(_OWN)} and these options of the client: {', '.join(sorted(known))}"
            raise InvalidParameterError("option", name, allowed, endpoint="connect")


def _connect(
    cache_dir: Any,
    live: bool | None,
    budget: int | None,
    sandbox_today: str | date | None,
    seed: int,
    quiet: bool,
    options: dict[str, Any],
) -> Client:
    client, where, real, shown_cache = connected(cache_dir, live, budget, sandbox_today, seed, options)
    _install(client, owned=True)  # built here: closed when another default replaces it
    if quiet:
        return client
    if real:  # the folder is named in ``where``; nothing is spent
        print(f"storeframes: {where}\ntoday is {client.today()}")
        return client
    cache = "off" if client.cache is None else str(shown_cache) if shown_cache is not None else client.cache.location
    budget_text = f"; budget {client.budget:,} credits" if client.budget is not None else ""
    offline = "; offline: answers come from the cache only" if client.offline else ""
    # a line a fact, each short: a notebook wraps a long line anywhere, a date too (2026-1 / 1-20)
    print(f"storeframes: {where}\ntoday is {client.today()}{budget_text}\ncache: {cache}{offline}")
    return client


def connected(
    cache_dir: Any,
    live: bool | None,
    budget: int | None,
    sandbox_today: str | date | None,
    seed: int,
    options: dict[str, Any],
) -> tuple[Client, str, bool, Any]:
    """:func:`connect`'s client, not made the default: ``(client, where in words, real answers offline, the
    cache as shown)``. For a server that holds a client of its own (``storeframes mcp``)."""
    has_token = bool(os.environ.get(ENV_API_KEY)) and bool(os.environ.get(ENV_BASE_URL))
    if live is True and not has_token and "api_key" not in options:
        raise ConfigurationError(
            f"live=True needs a token and the service's address: set {ENV_API_KEY} and {ENV_BASE_URL}"
        )
    use_live = has_token or "api_key" in options if live is None else live
    _check_options(options, sandbox=not use_live)
    real, shown_cache = False, cache_dir
    if not use_live:  # the sandbox, unless the folder holds the real service's answers
        cache_dir, shown_cache, real = _folder_without_token(cache_dir, live, options)
    if real:
        options["offline"] = True
        missing = ENV_BASE_URL if os.environ.get(ENV_API_KEY) else ENV_API_KEY
        client = Client(budget=budget, cache_dir=cache_dir, **options)
        client.offline_reason = (
            f"offline: the cache at {client.cache.location if client.cache else cache_dir} holds the real "
            f"service's answers, and fetching more needs a token (set {ENV_API_KEY} and {ENV_BASE_URL})"
        )
        where = (
            f"the real service's answers in {shown_cache} (no {missing} set): offline, served from the "
            "cache only; a request it lacks raises NotCachedError"
        )
    elif use_live:
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
        where = f"the sandbox{reason}, a deterministic fake: nothing is billed"
    return client, where, real, shown_cache


def _folder_without_token(cache_dir: Any, live: bool | None, options: dict[str, Any]) -> tuple[Any, Any, bool]:
    """``(cache_dir, shown, real)`` of a client with no token: ``real`` when its folder holds the real
    service's answers (refused with ``live=False``: the sandbox never writes beside them).

    The folder is ``cache_dir``, else ``$STOREFRAMES_CACHE_DIR`` (which the sandbox given no folder
    leaves alone: it keeps a temporary one). It is opened once, and given to the client as a
    :class:`~storeframes.Cache`, with its ``storage_options`` taken out of ``options``.
    """
    folder = cache_dir if cache_dir is not None else os.environ.get(ENV_CACHE_DIR) or None
    if folder is None or folder is False:
        return cache_dir, cache_dir, False
    given = cache_dir is not None
    opened = open_cache(folder, options.get("storage_options"))
    assert opened is not None
    real = opened.holds(SERVICE)
    if real and live is False:
        raise ConfigurationError(
            f"live=False asks for the sandbox, but the cache at {opened.location} holds the real service's "
            "answers, and sandbox answers are never written beside them: give the sandbox a cache_dir of its "
            "own (or leave out live=False to serve the real answers offline)"
        )
    if not (given or real):
        return cache_dir, cache_dir, False
    options.pop("storage_options", None)
    return opened, folder, real


@user_facing
def default_client() -> Client:
    """The client the package-level functions use (built from the environment on first use: the workspace
    ``$STOREFRAMES_WORKSPACE`` names, when set)."""
    global _client, _owned
    with _lock:
        if _client is None:
            _client, _owned = Client(workspace=os.environ.get(ENV_WORKSPACE, "").strip() or None), True
        return _client


@user_facing
def use(
    workspace: str | Workspace, *, config: str | os.PathLike[str] | None = None, quiet: bool = False, **options: Any
) -> Client:
    """Make a workspace of ``storeframes.toml`` the default of the package functions, and return its client.

    The workspace names its token's environment variable, the service, its cache and its month budget
    (``config`` is the file; by default ``./storeframes.toml``, else ``$STOREFRAMES_CONFIG``, else the user's
    config folder's). Its month budget holds for every caller of the workspace, on every machine of its cache.
    ``options`` go to :class:`Client` (``budget``, ``rate_limit`` ...). Three short lines say which workspace
    and service, which cache, and what the month spent (``quiet=True`` says nothing).

    >>> sf.use("acme")  # doctest: +SKIP
    storeframes: workspace acme (storeframes.toml): the service at https://.../api/public/store
    cache: acme-cache
    month 2026-11: 1,240 of 50,000 credits spent
    """
    chosen = named_workspace(workspace, config)
    with _secrets_dropped_on_failure(options):
        client = Client(workspace=chosen, **options)
    _install(client, owned=True)
    if not quiet:
        url = shown_url(client.base_url) if client.base_url else None
        where = client.cache.location if client.cache is not None else "off"
        print(
            f"storeframes: workspace {chosen.name} ({chosen.path}): the service at {url}\ncache: {where}\n{_month(client)}"
        )
    return client


def _month(client: Client) -> str:
    """What a workspace's month has spent, as :func:`use` says it: never a 0 read from a cache that is not there."""
    month = client.fetcher.month
    if month is None or client.cache is None:
        return "no month budget"
    day = client.today()
    try:
        require_cache(client.cache, what="the month's spend")
        spent = month.spent(day)
    except NoCacheError:
        return f"month {day:%Y-%m}: no cache there yet (its first answer makes it), budget {month.budget:,} credits"
    except StoreframesError as exc:
        return f"month {day:%Y-%m}: spend not known ({exc}), budget {month.budget:,} credits"
    return f"month {day:%Y-%m}: {spent:,} of {month.budget:,} credits spent"


P = ParamSpec("P")
R = TypeVar("R")


def _on_default(method: Callable[Concatenate[Client, P], R]) -> Callable[P, R]:
    """The package-level twin of a client method: the same signature, called on the default client.

    Type checkers see the method's parameters and return type (:pep:`612`); ``help()``
    and IDEs see its signature and docstring.
    """

    @user_facing
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
find_apps = _on_default(Client.find_apps)


@user_facing
def plan(endpoint: str, **params: Any) -> Plan:
    """What a call would send, what the cache already answers, and the estimated credits; nothing is sent.

    ``endpoint`` and ``params`` are those of :meth:`Client.get`, or the name of a frame
    function and its arguments (``"versions_frame"``, ``apps=...``), or ``"find_apps"``
    and the arguments of :func:`find_apps`: its search, and the metadata of ``top`` apps
    counted as sent (an upper bound: the apps are not known before the search runs).
    ``refresh=`` overrides the client's cache policy, as in the call.

    >>> sf.plan("search_history_frame", keywords=["meditation"], days=60).estimate  # doctest: +SKIP
    601
    >>> sf.plan("find_apps", term="meditation", top=10)  # doctest: +SKIP
    Plan(find_apps: 3 requests to send, at most 32 credits; ...)
    """
    return default_client().plan(endpoint, **params)


@user_facing
def today() -> date:
    """The service's today (UTC) for the default client: what ``days=`` and the default date ranges count
    back from; a sandbox's pinned today when the default client is a pinned sandbox.

    >>> sf.connect(sandbox_today="2026-11-20", quiet=True) and sf.today()  # doctest: +SKIP
    datetime.date(2026, 11, 20)
    """
    return default_client().today()
