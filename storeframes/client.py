"""The client: one facade that wires the parts together.

The client turns its options into its parts (cache, credits, rate window, wire) and its
:class:`~storeframes.fetch.settings.Settings`, and hands both to its
:class:`~storeframes.fetch.fetcher.Fetcher`. A call goes down the layers and comes back up,
never climbing back into the client:

1. :func:`storeframes.catalog.validate` turns arguments into canonical parameters
   (or refuses them before anything is spent);
2. :mod:`storeframes.engine` plans it against the cache's index: which cells cached
   entries serve, which requests fetch the rest;
3. the fetcher checks the budget (:mod:`storeframes.credits`) and sends the requests on a
   small thread pool, each through :class:`~storeframes.wire.Wire` under one shared
   rate limiter, keeping each answer in the :class:`~storeframes.Cache` as it arrives;
4. the engine says which entry or response provides which cells, and merges them into
   an :class:`~storeframes.Answer` (:meth:`Client.get`), or the
   :class:`~storeframes.fetch.pipeline.FrameMaker` turns the parts the fetcher gathered into
   a frame (the frame functions, declared in :mod:`storeframes.frames`).

There is no asyncio, so the client works inside a notebook's running event loop.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, TypeVar

import polars as pl

from . import engine
from ._tracebacks import user_facing
from .answers import Answer
from .cache import Cache, RefreshOption, open_cache
from .cache.stores import Store
from .catalog import CostModel, Freshness
from .coord import Coordinator, SharedLimiter, coordinator_for
from .credits import Credits
from .engine import Plan
from .errors import (
    CallWarnings,
    ConfigurationError,
    InvalidParameterError,
    cut,
    html_table,
    plural,
    shown_when_half_built,
)
from .fetch.fetcher import Fetcher
from .fetch.month_budget import MonthBudget
from .fetch.pipeline import FRAMES, FrameMaker, collector_paused
from .fetch.settings import Settings, settings_of, slot_hold, utc_now, workers_for
from .fetch.workers import Workers
from .frames import FrameFunctions, find_apps_search, plan_find_apps, resolve
from .ledger import spend_summary
from .wire import DEFAULT_DEADLINE, DEFAULT_MAX_BODY_BYTES, Secret, Wire, clean_token, shown_url
from .workspaces import Workspace, client_parts

if TYPE_CHECKING:
    from .wire.http import HttpClient

__all__ = ["Client"]

log = logging.getLogger("storeframes")

ENV_API_KEY = "STOREFRAMES_API_KEY"
ENV_BASE_URL = "STOREFRAMES_BASE_URL"

T = TypeVar("T")
R = TypeVar("R")


def _limiter(
    rate_limit: Any, key: Secret, base_url: str | None, coordinator: Coordinator, hold: float
) -> SharedLimiter:
    """The token's rate window, shared with every caller of the token that ``coordinator`` reaches."""
    try:
        limit, window = rate_limit
        return coordinator.limiter(key.reveal(), base_url, (limit, window), hold)
    except ConfigurationError:
        raise
    except (TypeError, ValueError) as exc:
        raise ConfigurationError(f"rate_limit must be (requests, seconds), got {rate_limit!r}: {exc}") from None


def _tail(text: str, most: int) -> str:
    """``text``, its start cut away when it is longer than ``most`` (a path's end says the most)."""
    return text if len(text) <= most else "…" + text[-(most - 1) :]


class _Setting:
    """An attribute of the client kept in its :class:`~storeframes.fetch.settings.Settings`, which its fetcher
    reads on every call: setting it replaces the settings with a copy holding the new value.
    On the class it is the settings' default (``Client.namespace`` is ``"service"``)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, client: Client | None, owner: type | None = None) -> Any:
        if client is None:
            return Settings.__dataclass_fields__[self.name].default
        return getattr(client.settings, self.name)

    def __set__(self, client: Client, value: Any) -> None:
        client.settings = replace(client.settings, **{self.name: value})


class Client(FrameFunctions):
    """A client of the service.

    Args:
        api_key: the token; defaults to ``$STOREFRAMES_API_KEY``. Sent only in the
            ``x-service-key`` header, never shown in a repr, message, log line or
            traceback. Whitespace around it (a newline read from a file) is dropped; a
            token with a control or non-ASCII character inside is refused at once
            (:class:`~storeframes.ConfigurationError`).
        base_url: the service's base address including ``/api/public/store``;
            defaults to ``$STOREFRAMES_BASE_URL``. Must be https (plain http only for
            ``localhost`` and loopback addresses, such as ``storeframes sandbox serve``).
            User info and query are masked wherever it is shown. Redirects are never
            followed (a 3xx is a :class:`~storeframes.RedirectError`), so the token goes
            nowhere else.
        budget: the most credits this client may spend; a request whose estimated
            maximum cost would pass it is refused before sending.
        rate_limit: ``(requests, seconds)`` of the strict sliding window, ``(60, 10.0)``.
            The window is the token's: every client of the same token and base URL that
            ``coordinator`` reaches counts against it, each admitting a request only when
            fewer than its own limit were sent within its own window.
        coordinator: who shares the token's rate window (and the leases): ``"machine"``
            (the default: every thread and process of this machine, through a file in
            ``$STOREFRAMES_STATE_DIR`` or the user's state directory), or a Redis URL
            (``redis://``, ``rediss://``, ``unix://``; the ``redis`` extra)
            for several machines, or a :class:`~storeframes.Coordinator`. Defaults to
            ``$STOREFRAMES_COORDINATOR``.
        max_workers: threads sending the requests of one call; by default the rate limit's
            requests (at least 8, at most 64), so a whole window leaves at once.
        http_client: an ``httpx2.Client`` or an ``httpx.Client`` to send with (its transport,
            proxies and timeouts are kept, its ``follow_redirects`` is not); the client adds
            the token per request.
        timeout: seconds for each network operation (connecting, each read) when no
            ``http_client`` is given.
        deadline: seconds one attempt may take in all, from sending to the last byte
            of the body (default 120; None for none); no network operation waits longer
            either. An attempt past it is a :class:`~storeframes.TransportError`, retried.
        max_body_bytes: the largest answer accepted (and kept answer read), in decoded bytes, counted as
            they arrive, so a compressed body never inflates past it (default 256 MB). A larger one is a
            :class:`~storeframes.ResponseTooLargeError`, not retried (a kept one is set aside, fetched again).
        max_tries: attempts per request for 429, 5xx, timeouts, the deadline, dropped
            connections and bodies that cannot be decoded.
        backoff: ``(first, most)`` seconds of the exponential backoff with full jitter.
            A ``Retry-After`` (on 429 and 503) is waited for up to ``max(most, 60)``
            seconds; a longer one fails at once, its ``retry_after`` set.
        cost_model: per endpoint name, a :class:`~storeframes.catalog.CostModel`
            replacing the default price list.
        cache_dir: the cache: a folder, or a bucket a team shares (``s3://bucket/prefix``; ``gs://``, ``az://`` too;
            the ``s3`` extra); defaults to ``$STOREFRAMES_CACHE_DIR``, else the user's cache
            directory; a :class:`~storeframes.cache.Cache` or :class:`~storeframes.Store` may be given, ``False``
            turns caching off. One that cannot keep answers is refused before a call pays for any.
        storage_options: settings of a bucket given as ``cache_dir`` (``aws_endpoint_url``, ``aws_region``,
            credentials ...); by default each cloud's environment variables (``AWS_ACCESS_KEY_ID``,
            ``AWS_SECRET_ACCESS_KEY``, ``AWS_REGION``, ``AWS_ENDPOINT_URL`` ...); never in a repr, message or traceback.
        offline: never open a connection; every cached answer serves, however old (as
            with ``refresh="never"``), and a call the cache cannot answer raises
            :class:`~storeframes.NotCachedError`. Defaults to ``$STOREFRAMES_OFFLINE``.
        refresh: ``"auto"`` (or False) serves fresh cached answers and fetches the rest,
            ``"always"`` (or True) fetches everything again, ``"never"`` serves only from the
            cache (whatever its age). Each call may override it.
        freshness: per endpoint name, a :class:`~storeframes.catalog.Freshness`
            replacing the default policy.
        clock: a callable returning the current UTC datetime (for replays and tests).
        progress: show a progress bar (``tqdm.auto``: a widget in notebooks, a line in a terminal) while a call
            sends requests: ``None`` (the default) when it sends more than :attr:`PROGRESS_AFTER`, ``True``
            whenever it sends, ``False`` never. ``$STOREFRAMES_PROGRESS=0`` turns it off by default.
        workspace: a workspace of ``storeframes.toml`` (a name or a :class:`~storeframes.workspaces.Workspace`)
            gives the token (from the variable it names), ``base_url``, ``cache_dir`` and a month budget that every
            caller of the workspace holds to: a call that could pass what the month left raises
            :class:`~storeframes.BudgetExceededError` naming the workspace, before anything is sent.

    The parts are attributes: :attr:`wire` (the request path), :attr:`credits` (budget
    and ledger), :attr:`cache`, :attr:`limiter`, and :attr:`fetcher`, which makes the calls
    with them, reading the client's :attr:`settings`. :func:`storeframes.sandbox.client`
    builds a client of the built-in sandbox.

    >>> from storeframes import sandbox
    >>> client = sandbox.client()
    >>> client.get("metadata", apps="3233849169").cost
    11
    >>> client.close()
    """

    PROGRESS_AFTER = 5
    """With ``progress=None``, a call sending more requests than this shows a progress bar."""

    refresh = _Setting()
    """The cache policy of a call that names none: ``"auto"``, ``"always"`` or ``"never"``."""

    offline = _Setting()
    """Never open a connection: every cached answer serves, and a call the cache cannot answer is refused."""

    progress = _Setting()
    """Show a progress bar: True whenever a call sends, False never, None when it sends many."""

    endpoints = _Setting()
    """The catalog's endpoints with this client's prices and freshness policies, by name."""

    offline_reason = _Setting()
    """Why an offline client sends nothing, as a :class:`NotCachedError` says it (``connect`` says more)."""

    namespace = _Setting()
    """Which service the cached answers come from: a cache folder keeps each one's apart."""

    @user_facing
    def __init__(
        self,
        api_key: str | None = None,
        *,
        base_url: str | None = None,
        budget: int | None = None,
        rate_limit: tuple[int, float] = (60, 10.0),
        coordinator: str | Coordinator | None = None,
        max_workers: int | None = None,
        http_client: HttpClient | None = None,
        timeout: float = 30.0,
        deadline: float | None = DEFAULT_DEADLINE,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        max_tries: int = 5,
        backoff: tuple[float, float] = (0.5, 30.0),
        cost_model: Mapping[str, CostModel] | None = None,
        cache_dir: str | os.PathLike[str] | Cache | Store | bool | None = None,
        storage_options: Mapping[str, str] | None = None,
        offline: bool | None = None,
        refresh: RefreshOption = "auto",
        freshness: Mapping[str, Freshness] | None = None,
        clock: Callable[[], datetime] | None = None,
        progress: bool | None = None,
        workspace: str | Workspace | None = None,
    ):
        # the token is held as a Secret from the first line: no local of a construction that fails shows it
        try:
            chosen, api_key, base_url, cache_dir = client_parts(workspace, api_key, base_url, cache_dir)
            key = Secret(clean_token(api_key if api_key is not None else os.environ.get(ENV_API_KEY, "")))
        finally:
            del api_key
        try:
            self.cache: Cache | None = open_cache(cache_dir, storage_options)
        finally:
            del storage_options  # no credential among this frame's locals when the cache cannot be opened
        ledger = None if self.cache is None else self.cache.ledger
        self.credits = Credits(budget, clock=clock or utc_now, sink=ledger)
        url = base_url if base_url is not None else os.environ.get(ENV_BASE_URL) or None
        self.coordinator = coordinator_for(coordinator)
        self.limiter = _limiter(rate_limit, key, url, self.coordinator, slot_hold(timeout, http_client, deadline))
        self.max_workers = workers_for(max_workers, self.limiter.limit)
        settings = settings_of(
            cost_model=cost_model,
            freshness=freshness,
            refresh=refresh,
            offline=offline,
            progress=progress,
            clock=clock,
            progress_after=self.PROGRESS_AFTER,
        )
        self.wire = Wire(
            key,
            url,
            limiter=self.limiter,
            http_client=http_client,
            timeout=timeout,
            max_tries=max_tries,
            backoff=backoff,
            deadline=deadline,
            max_body_bytes=max_body_bytes,
            clock=settings.clock,
            connections=self.max_workers,
        )
        if self.cache is not None:  # kept answers are read within the body cap (a shared Cache's only grows)
            shared = isinstance(cache_dir, Cache)
            self.cache.max_answer_bytes = max(self.cache.max_answer_bytes, max_body_bytes) if shared else max_body_bytes
        self.fetcher = Fetcher(
            settings,
            cache=self.cache,
            credits=self.credits,
            wire=self.wire,
            workers=Workers(self.max_workers),
            coordinator=self.coordinator,
        )
        """The steps of a call below the facade: plan, send, keep, serve (:mod:`storeframes.fetch`)."""
        self.credits.service = self.fetcher.namespace
        self.workspace: Workspace | None = chosen
        """The workspace the client is of (``Client(workspace="acme")``, ``sf.use``), or None."""
        self.fetcher.month = MonthBudget.of(self.fetcher, chosen)
        super().__init__(FrameMaker(self.fetcher))

    @property
    def settings(self) -> Settings:
        """What the client is set to (refresh, offline, progress, endpoints ...), as its fetcher reads it."""
        return self.fetcher.settings

    @settings.setter
    def settings(self, settings: Settings) -> None:
        self.fetcher.settings = settings

    def today(self) -> date:
        """Today's date (UTC) by the client's clock: what relative dates resolve against."""
        return self.fetcher.today()

    def _settings(self) -> list[tuple[str, Any]]:
        """What the client is, as (name, value) pairs for its reprs: never the token."""
        url = shown_url(self.base_url) if self.base_url else None
        budget = f" of a budget of {self.budget:,}" if self.budget is not None else ""
        state = ", ".join(name for name, on in (("offline", self.offline), ("closed", self.wire.closed)) if on)
        return [
            *([("workspace", repr(self.workspace.name))] if self.workspace is not None else []),
            ("base_url", cut(repr(url), 70)),
            ("api_key", "set" if self.wire.has_token else "missing"),
            ("spent", f"{plural(self.spent, 'credit')} spent{budget}"),
            ("rate_limit", f"({self.limiter.limit}, {self.limiter.window})"),
            ("cache", _tail(repr(self.cache.location), 40) if self.cache is not None else "off"),
            *([("state", state)] if state else []),
        ]

    @shown_when_half_built
    def __repr__(self) -> str:
        said = [value if name in ("spent", "state") else f"{name}={value}" for name, value in self._settings()]
        return f"Client({', '.join(said)})"

    def _repr_html_(self) -> str:
        rows = [*self._settings(), ("credits saved", self.saved), ("requests sent", self.requests_sent)]
        return html_table("storeframes Client", ("", "value"), rows)

    def close(self) -> None:
        """Close the thread pool and the HTTP connections this client opened, and tidy the ledger.

        Waits for the large frames the cache writes behind the calls (``cache.frames.flush()``). The
        session's ledger rows, kept in the cache one small file per request, are merged into a few files
        (see :mod:`storeframes.credits`). A closed client sends nothing more: a call that would is a
        :class:`~storeframes.ConfigurationError`
        ("this client is closed"); closing twice is harmless. In a child forked from the
        process that built it, closing leaves the parent's parts alone (:mod:`storeframes.coord.forking`).
        """
        self.fetcher.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @user_facing
    def estimate(self, endpoint: str, **params: Any) -> int:
        """The estimated maximum credits of a call, without sending anything (what the cache holds is free)."""
        return self.plan(endpoint, **params).estimate

    @property
    def base_url(self) -> str | None:
        """The service's base address."""
        return self.wire.base_url

    @property
    def budget(self) -> int | None:
        """The most credits this client may spend (None: no limit); it may be changed between calls."""
        return self.credits.budget

    @budget.setter
    def budget(self, budget: int | None) -> None:
        self.credits.budget = budget

    @property
    def spent(self) -> int:
        """Credits charged so far, as the service reported them (the sum of :attr:`ledger`'s ``cost``)."""
        return self.credits.spent

    @property
    def saved(self) -> int:
        """Credits the cache saved this client: what its cached answers originally cost."""
        return self.credits.saved

    @property
    def requests_sent(self) -> int:
        """Attempts sent to the service, retries included (:attr:`wire` counts them, and the ``retries``)."""
        return self.wire.requests_sent

    @property
    def retries(self) -> int:
        return self.wire.retries

    @property
    def ledger(self) -> pl.DataFrame:
        """One row per attempt sent and per answer served from the cache (:data:`~storeframes.LEDGER_SCHEMA`).

        An answer that was charged and then failed (a 5xx, a malformed body) is a row
        with its cost, and an attempt that got no answer (a timeout, a dropped
        connection) a row with ``status`` null and ``cost`` 0. An answer whose cost cannot be read
        (not a whole number >= 0, absurdly large) or a 200 cut short counts the request's estimate,
        on a row with ``cost_estimated``. :attr:`spent` is always the sum of ``cost``. Each row names its ``service`` (:attr:`namespace`). The rows
        of a request are kept in the cache folder as soon as it ends, before its answer
        is (cache hits at the end of the call); :meth:`spend` sums them across sessions.
        """
        return self.credits.ledger

    def watch(self, callback: Callable[[Mapping[str, Any]], None]) -> Callable[[], None]:
        """Call ``callback(row)`` with each new ledger row (its credits counted); returns a function that stops it.

        A request's rows come when it ends (every attempt, answered or not), a cache
        hit's as the call uses it. Callbacks run on the thread that received the
        answer; one that raises is logged.

        >>> stop = client.watch(lambda row: print(row["endpoint"], row["cost"]))  # doctest: +SKIP
        """
        return self.credits.watch(callback)

    @user_facing
    def spend(self, *, session: bool = False, service: str | None = None) -> pl.DataFrame:
        """Credits spent and saved by the cache, per service, UTC day and endpoint.

        Sums the ledger kept in the cache folder (every session that used it), or only
        this client's calls with ``session=True`` (or when caching is off). ``service``
        says whose credits: by default this client's :attr:`namespace` (``"service"``,
        the real service, for a :class:`Client`; ``"sandbox-<seed>"`` for a sandbox
        client), ``"all"`` every service, each on rows of its own (ledger rows of
        earlier versions are ``"unknown"``), or a name. Columns: service, day, endpoint, requests
        (answers received, errors and retries included), credits_spent, credits_estimated (a killed
        request's reservation among them), cache_hits, credits_saved.
        """
        if session or self.cache is None:
            ledger = self.ledger
        else:
            self.fetcher.flush()
            ledger = self.cache.ledger.read()
        if service is None:
            service = self.namespace
        if service != "all":
            ledger = ledger.filter(pl.col("service") == service)
        return spend_summary(ledger)

    @user_facing
    def plan(self, endpoint: str, *, refresh: RefreshOption | None = None, **params: Any) -> Plan:
        """What a call would send, what the cache already answers, and the estimated credits.

        Nothing is sent. ``endpoint`` and ``params`` are those of :meth:`get`, or the name
        of a frame function and its arguments (``"versions_frame"``, ``apps=...``).

        >>> client.plan("changes", apps=["284882215"], start_date="2026-10-01", end_date="2026-10-31")  # doctest: +SKIP
        Plan(changes: 1 request to send, at most 42 credits; 0 cached answers used, ...)
        """
        if endpoint == "find_apps":
            search, found = find_apps_search(params)
            return plan_find_apps(
                self.plan_many("search_frame", [search], refresh=refresh), self.endpoints["metadata"], found
            )
        return self.plan_many(endpoint, [params], refresh=refresh)

    @user_facing
    def plan_many(
        self, endpoint: str, calls: Sequence[Mapping[str, Any]], *, refresh: RefreshOption | None = None
    ) -> Plan:
        """:meth:`plan` for the calls of :meth:`get_many`."""
        spec = FRAMES.get(endpoint)
        endpoint, calls = resolve(endpoint, calls, today=self.today())
        with CallWarnings(), collector_paused():
            try:
                ep, _, plans, _ = self.fetcher.plan(endpoint, calls, refresh, load=False)
            except InvalidParameterError as exc:
                raise (spec.speak(exc) if spec else exc) from None
            return engine.summarize(ep, plans)

    @user_facing
    def get(self, endpoint: str, *, refresh: RefreshOption | None = None, **params: Any) -> Answer:
        """Fetch one call's answer: validate, consult the cache, send what is missing, merge.

        ``params`` are the endpoint's parameters (see :mod:`storeframes.catalog`);
        ``apps`` may be a list or a comma-separated string of any length. ``refresh``
        overrides the client's (``"auto"``, ``"always"`` or ``"never"``; True means
        ``"always"`` and False ``"auto"``).
        """
        return self.get_many(endpoint, [params], refresh=refresh)[0]

    @user_facing
    def get_many(
        self, endpoint: str, calls: Sequence[Mapping[str, Any]], *, refresh: RefreshOption | None = None
    ) -> list[Answer]:
        """Fetch several calls of one endpoint concurrently, under the rate limit.

        Every call is validated, the cache consulted, and the requests still needed
        checked against the budget, before any request is sent. The requests are
        planned over the cells all the calls miss, so a cell two calls need is asked
        for once, and a cell another thread, client or process is fetching at that
        moment is waited for, not asked for again (see :mod:`storeframes.coord.leases`).
        Each answer is kept in the cache as it arrives. If a request
        fails for good, the requests not yet started are cancelled and the error is
        raised with ``error.partial`` holding the :class:`Response` objects that did
        succeed (they are in the cache too, so calling again sends only the rest).
        """
        return self.fetcher.answers(endpoint, calls, refresh)

    def _frame(self, name: str, arguments: Mapping[str, Any], refresh: RefreshOption | None) -> pl.DataFrame:
        """A frame function's frame; the warnings of the call, its threads' too, given at the caller's line."""
        with CallWarnings():
            return super()._frame(name, arguments, refresh)

    def map(self, function: Callable[[T], R], items: Sequence[T]) -> Iterator[R]:
        """``function`` over ``items`` on the client's threads, results in order.

        Called from one of those threads (a frame function run by :meth:`map` itself),
        it runs in the caller's thread: a pool waiting on itself would never finish.
        """
        return self.fetcher.map(function, items)


def plan_requests(
    client: Client, endpoint: str, requests: Sequence[Mapping[str, str]], *, refresh: RefreshOption | None = None
) -> Plan:
    """:meth:`Client.plan_many` of requests of ``endpoint`` that are canonical already (as
    :func:`~storeframes.catalog.validate` returns them: a tracker's due calls), not validated again."""
    with CallWarnings(), collector_paused():
        ep, _, plans, _ = client.fetcher.plan(endpoint, requests, refresh, load=False, canonical=True)
        return engine.summarize(ep, plans)
