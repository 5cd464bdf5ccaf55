"""The client: one facade that wires the parts together.

A call goes down the layers and comes back up:

1. :func:`storeframes.catalog.validate` turns arguments into canonical parameters
   (or refuses them before anything is spent);
2. :mod:`storeframes.engine` plans it against the cache's index: which cells cached
   entries serve, which requests fetch the rest;
3. the client checks the budget (:mod:`storeframes.credits`) and sends the requests on a
   small thread pool, each through :class:`~storeframes.wire.Wire` under one shared
   rate limiter, keeping each answer in the :class:`~storeframes.Cache` as it arrives;
4. the engine says which entry or response provides which cells, and merges them into
   an :class:`~storeframes.Answer` (:meth:`Client.get`), or the
   :class:`~storeframes.pipeline.FrameMaker` turns them into a frame (the frame
   functions, declared in :mod:`storeframes.frames`).

There is no asyncio, so the client works inside a notebook's running event loop.
"""

from __future__ import annotations

import logging
import os
import threading
import weakref
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import replace
from datetime import UTC, date, datetime
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

import polars as pl

from . import catalog, engine, planning
from .answers import Answer, Part, Response
from .cache import REFRESH_MODES, Cache, Refresh, RefreshOption, open_cache
from .catalog import CostModel, Endpoint, Freshness
from .coord import Coordinator, Leases, SharedLimiter, coordinator_for
from .credits import Credits
from .engine import CallPlan, Fetched, Plan
from .errors import (
    AnswerWarning,
    AppNotAvailableError,
    AppsUnavailableWarning,
    CallWarnings,
    ConfigurationError,
    InvalidParameterError,
    NotCachedError,
    StoreframesError,
    carry,
    cut,
    html_table,
    plural,
    warn,
)
from .frames import FrameFunctions, plan_find_apps, resolve
from .ledger import spend_summary
from .pipeline import FRAMES, CallParts, FrameMaker
from .wire import DEFAULT_DEADLINE, DEFAULT_MAX_BODY_BYTES, Wire, clean_token, shown_url

if TYPE_CHECKING:
    import httpx

__all__ = ["Client"]

log = logging.getLogger("storeframes")

ENV_API_KEY = "STOREFRAMES_API_KEY"
ENV_BASE_URL = "STOREFRAMES_BASE_URL"
ENV_OFFLINE = "STOREFRAMES_OFFLINE"
ENV_PROGRESS = "STOREFRAMES_PROGRESS"

T = TypeVar("T")
R = TypeVar("R")


def _env_flag(name: str) -> bool | None:
    """An environment switch: True for 1/true/yes/on, False for 0/false/no/off, None when unset or other."""
    value = os.environ.get(name, "").strip().lower()
    return True if value in ("1", "true", "yes", "on") else False if value in ("0", "false", "no", "off") else None


def _per_endpoint(option: str, defaults: Mapping[str, Any], overrides: Mapping[str, Any] | None) -> dict[str, Any]:
    """The defaults per endpoint name with the user's overrides; an unknown name is refused."""
    unknown = sorted(set(overrides or {}) - set(catalog.ENDPOINTS))
    if unknown:
        raise ConfigurationError(f"{option} names unknown endpoints {unknown}; known: {list(catalog.ENDPOINTS)}")
    return {**defaults, **(overrides or {})}


def _endpoints(
    cost_model: Mapping[str, CostModel] | None, freshness: Mapping[str, Freshness] | None
) -> dict[str, Endpoint]:
    """The catalog's endpoints with the user's prices and freshness policies."""
    costs = _per_endpoint("cost_model", catalog.DEFAULT_COSTS, cost_model)
    policies = _per_endpoint("freshness", catalog.DEFAULT_FRESHNESS, freshness)
    return {name: ep.with_cost(costs[name]).with_freshness(policies[name]) for name, ep in catalog.ENDPOINTS.items()}


def _limiter(
    rate_limit: Any, api_key: Any, base_url: str | None, coordinator: Coordinator, hold: float
) -> SharedLimiter:
    """The token's rate window, shared with every caller of the token that ``coordinator`` reaches."""
    token = api_key if isinstance(api_key, str) else ""  # Wire refuses a token that is not a text
    try:
        limit, window = rate_limit
        return coordinator.limiter(token, base_url, (limit, window), hold)
    except ConfigurationError:
        raise
    except (TypeError, ValueError) as exc:
        raise ConfigurationError(f"rate_limit must be (requests, seconds), got {rate_limit!r}: {exc}") from None


def _hold(timeout: Any, http_client: httpx.Client | None, deadline: Any = None) -> float:
    """The longest one attempt may hold a slot: its deadline and 5 s; without one, the HTTP timeout and
    5 s, or 60 s when it is not known."""
    if isinstance(deadline, (int, float)) and not isinstance(deadline, bool) and deadline > 0:
        return float(deadline) + 5.0  # an attempt ends by its deadline, however its body trickles
    if http_client is not None or isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        return 60.0
    return float(timeout) + 5.0


def _refresh_mode(refresh: Any) -> Refresh:
    """The cache policy ``refresh=`` asks for: a mode by its name, True for "always", False for "auto"."""
    if refresh is True or refresh is False:
        return "always" if refresh else "auto"
    if not isinstance(refresh, str) or refresh not in REFRESH_MODES:
        allowed = f"one of {', '.join(REFRESH_MODES)} (or True for always, False for auto)"
        raise InvalidParameterError("refresh", refresh, allowed)
    return refresh  # type: ignore[return-value]


MOST_DEFAULT_WORKERS = 64
"""The most threads a client sends with by default, whatever its rate limit."""


def default_workers(limit: int) -> int:
    """Threads enough to send a whole window at once: the rate limit (at least 8, at most 64).

    With fewer, the requests of a window leave in several round trips, and the spread
    carries into every later window (8 threads at 60 requests per 10 s and a third of a
    second's latency reach about 77 % of what the limit allows; 60 threads 96 %).
    """
    return min(max(8, limit), MOST_DEFAULT_WORKERS)


def _switches(max_workers: Any, offline: Any, progress: Any, limit: int) -> tuple[int, bool, bool | None]:
    """The checked ``max_workers``, ``offline`` and ``progress`` options, environment defaults applied."""
    if max_workers is not None and (
        not isinstance(max_workers, int) or isinstance(max_workers, bool) or max_workers < 1
    ):
        raise ConfigurationError(
            f"max_workers must be a whole number >= 1 (or None for the rate limit's requests, "
            f"{default_workers(limit)}), got {max_workers!r}"
        )
    if offline is not None and not isinstance(offline, bool):
        raise ConfigurationError(f"offline must be True, False or None (${ENV_OFFLINE}), got {offline!r}")
    if progress is None and _env_flag(ENV_PROGRESS) is False:
        progress = False
    if progress is not None and not isinstance(progress, bool):
        raise ConfigurationError(f"progress must be True, False or None (when many requests), got {progress!r}")
    workers = max_workers or default_workers(limit)
    return workers, _env_flag(ENV_OFFLINE) is True if offline is None else offline, progress


def _progress_bar(name: str, futures: Sequence[Future[Any]], spent: Callable[[], int]) -> Any:
    """A bar counting requests as they finish, with the credits spent so far (see :mod:`storeframes.progress`)."""
    from .progress import progress_bar

    return progress_bar(name, futures, spent)


Group = tuple[list[Fetched], dict[str, Any], bool]
"""What a group of requests gave: what it fetched, the leases others held, whether the cache had some of it."""


def _raise_first_failure(futures: Sequence[Future[Group]], not_done: Collection[Future[Group]]) -> None:
    """On a failed request, cancel those not started and raise its error with ``partial``: the responses received."""
    failure = next((f.exception() for f in futures if f.done() and f.exception() is not None), None)
    if failure is None:
        return
    for future in not_done:
        future.cancel()
    wait(not_done)
    if isinstance(failure, StoreframesError):
        ok = [f for f in futures if f.done() and not f.cancelled() and f.exception() is None]
        failure.partial = [response for f in ok for got in f.result()[0] for response in got[0]]
    raise failure


def _load(cache: Cache, plan: CallPlan, loaded: dict[str, Response]) -> bool:
    """Read the cached answers a plan uses; False when one was unreadable (it is set aside: plan again)."""
    for entry in plan.entries().values():
        if entry.id not in loaded:
            response = cache.load(entry)
            if response is None:
                return False
            loaded[entry.id] = response
    return True


_POOL_THREAD = threading.local()
"""In a client's pool threads, ``client`` refers (weakly) to that client."""


def _mark_pool_thread(client: Client) -> None:
    _POOL_THREAD.client = weakref.ref(client)


def _in_pool_of(client: Client) -> bool:
    """Whether this thread is one of ``client``'s pool threads."""
    ref = getattr(_POOL_THREAD, "client", None)
    return ref is not None and ref() is client


def _tail(text: str, most: int) -> str:
    """``text``, its start cut away when it is longer than ``most`` (a path's end says the most)."""
    return text if len(text) <= most else "…" + text[-(most - 1) :]


def _shown(ids: Sequence[str], most: int = 10) -> str:
    """App ids for a message: each quoted (escapes show control characters), at most ``most`` of them."""
    shown = ", ".join(repr(i[:200]) for i in ids[:most])
    return shown + (f" and {len(ids) - most} more" if len(ids) > most else "")


def _asked_only(ep: Endpoint, response: Response) -> tuple[Response | None, list[str]]:
    """``response`` holding only the apps it was asked for, and the apps asked for that it left out.

    Apps nobody asked for are dropped with an :class:`~storeframes.AnswerWarning`. The
    response's ``apps`` then name only the apps it answered, so the cache holds it as an
    answer for those; it is None when it answered none of them.
    """
    if ep.entity != "apps" or not isinstance(response.result, dict):
        return response, []
    asked = response.params["apps"].split(",")
    wanted = set(asked)
    strangers = [str(app) for app in response.result if app not in wanted]
    if strangers:
        warn(
            f"{ep.name} answered {plural(len(strangers), 'app')} nobody asked for, left out: {_shown(strangers)}",
            AnswerWarning,
        )
    answered = [app for app in asked if app in response.result]
    if len(answered) == len(asked) and not strangers:
        return response, []
    absent = [app for app in asked if app not in response.result]
    if not answered:
        return None, absent
    result = {app: response.result[app] for app in answered}
    changed = replace(response, params={**response.params, "apps": ",".join(answered)}, result=result, body=None)
    return changed, absent


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
            (``redis://``, ``rediss://``, ``unix://``; ``pip install "storeframes[redis]"``)
            for several machines, or a :class:`~storeframes.Coordinator`. Defaults to
            ``$STOREFRAMES_COORDINATOR``.
        max_workers: threads sending the requests of one call; by default the rate limit's
            requests (at least 8, at most 64), so a whole window leaves at once.
        http_client: an ``httpx.Client`` to send with (its transport, proxies and
            timeouts are kept, its ``follow_redirects`` is not); the client adds the
            token per request.
        timeout: seconds for each network operation (connecting, each read) when no
            ``http_client`` is given.
        deadline: seconds one attempt may take in all, from sending to the last byte
            of the body (default 120; None for none); no network operation waits longer
            either. An attempt past it is a :class:`~storeframes.TransportError`, retried.
        max_body_bytes: the largest answer accepted, in decoded bytes, counted as they
            arrive, so a compressed body never inflates past it (default 256 MB). A
            larger one is a :class:`~storeframes.ResponseTooLargeError`, not retried.
        max_tries: attempts per request for 429, 5xx, timeouts, the deadline, dropped
            connections and bodies that cannot be decoded.
        backoff: ``(first, most)`` seconds of the exponential backoff with full jitter.
            A ``Retry-After`` (on 429 and 503) is waited for up to ``max(most, 60)``
            seconds; a longer one fails at once, its ``retry_after`` set.
        cost_model: per endpoint name, a :class:`~storeframes.catalog.CostModel`
            replacing the default price list.
        cache_dir: the cache: a folder, or a bucket a team shares (``s3://bucket/prefix``;
            ``gs://`` and ``az://`` too; ``pip install "storeframes[s3]"``); defaults to
            ``$STOREFRAMES_CACHE_DIR``, else the user's cache directory. A
            :class:`~storeframes.cache.Cache` may be given; ``False`` turns caching off.
        storage_options: settings of a bucket given as ``cache_dir`` (``aws_endpoint_url``,
            ``aws_region``, credentials ...); by default each cloud's standard
            environment variables (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
            ``AWS_REGION``, ``AWS_ENDPOINT_URL`` ...). Never shown in a repr or message.
        offline: never open a connection; every cached answer serves, however old (as
            with ``refresh="never"``), and a call the cache cannot answer raises
            :class:`~storeframes.NotCachedError`. Defaults to ``$STOREFRAMES_OFFLINE``.
        refresh: ``"auto"`` (or False) serves fresh cached answers and fetches the rest,
            ``"always"`` (or True) fetches everything again, ``"never"`` serves only from the
            cache (whatever its age). Each call may override it.
        freshness: per endpoint name, a :class:`~storeframes.catalog.Freshness`
            replacing the default policy.
        clock: a callable returning the current UTC datetime (for replays and tests).
        progress: show a progress bar (``tqdm.auto``: a widget in notebooks, a line in a
            terminal) while a call sends requests: ``None`` (the default) when it sends
            more than :attr:`PROGRESS_AFTER`, ``True`` whenever it sends, ``False`` never.
            ``$STOREFRAMES_PROGRESS=0`` turns it off by default.

    The parts are attributes: :attr:`wire` (the request path), :attr:`credits` (budget
    and ledger), :attr:`cache` and :attr:`limiter`. :func:`storeframes.sandbox.client`
    builds a client of the built-in sandbox.

    >>> from storeframes import sandbox
    >>> client = sandbox.client()
    >>> client.get("metadata", apps="3233849169").cost
    11
    >>> client.close()
    """

    PROGRESS_AFTER = 5
    """With ``progress=None``, a call sending more requests than this shows a progress bar."""

    offline_reason = "offline"
    """Why an offline client sends nothing, as a :class:`NotCachedError` says it (``connect`` says more)."""

    namespace = "service"
    """Which service the cached answers come from: a cache folder keeps each one's apart."""

    def __init__(
        self,
        api_key: str | None = None,
        *,
        base_url: str | None = None,
        budget: int | None = None,
        rate_limit: tuple[int, float] = (60, 10.0),
        coordinator: str | Coordinator | None = None,
        max_workers: int | None = None,
        http_client: httpx.Client | None = None,
        timeout: float = 30.0,
        deadline: float | None = DEFAULT_DEADLINE,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        max_tries: int = 5,
        backoff: tuple[float, float] = (0.5, 30.0),
        cost_model: Mapping[str, CostModel] | None = None,
        cache_dir: str | os.PathLike[str] | Cache | bool | None = None,
        storage_options: Mapping[str, str] | None = None,
        offline: bool | None = None,
        refresh: RefreshOption = "auto",
        freshness: Mapping[str, Freshness] | None = None,
        clock: Callable[[], datetime] | None = None,
        progress: bool | None = None,
    ):
        super().__init__(FrameMaker(self))
        self._clock = clock
        self.cache: Cache | None = open_cache(cache_dir, storage_options)
        self.credits = Credits(budget, clock=self._now, service=lambda: self.namespace, sink=self.cache)
        key = clean_token(api_key if api_key is not None else os.environ.get(ENV_API_KEY, ""))
        url = base_url if base_url is not None else os.environ.get(ENV_BASE_URL) or None
        self.coordinator = coordinator_for(coordinator)
        self.limiter = _limiter(rate_limit, key, url, self.coordinator, _hold(timeout, http_client, deadline))
        self.max_workers, self.offline, self.progress = _switches(max_workers, offline, progress, self.limiter.limit)
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
            clock=self._now,
            connections=self.max_workers,
        )
        self.endpoints = _endpoints(cost_model, freshness)
        self.refresh = _refresh_mode(refresh)
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._lease_table: Leases | None = None

    def _now(self) -> datetime:
        return self._clock() if self._clock is not None else datetime.now(UTC)

    def today(self) -> date:
        """Today's date (UTC) by the client's clock: what relative dates resolve against."""
        return self._now().astimezone(UTC).date()

    def _settings(self) -> list[tuple[str, Any]]:
        """What the client is, as (name, value) pairs for its reprs: never the token."""
        url = shown_url(self.base_url) if self.base_url else None
        budget = f" of a budget of {self.budget:,}" if self.budget is not None else ""
        state = ", ".join(name for name, on in (("offline", self.offline), ("closed", self.wire.closed)) if on)
        return [
            ("base_url", cut(repr(url), 70)),
            ("api_key", "set" if self.wire.has_token else "missing"),
            ("spent", f"{plural(self.spent, 'credit')} spent{budget}"),
            ("rate_limit", f"({self.limiter.limit}, {self.limiter.window})"),
            ("cache", _tail(repr(self.cache.location), 40) if self.cache is not None else "off"),
            *([("state", state)] if state else []),
        ]

    def __repr__(self) -> str:
        said = [value if name in ("spent", "state") else f"{name}={value}" for name, value in self._settings()]
        return f"Client({', '.join(said)})"

    def _repr_html_(self) -> str:
        rows = [*self._settings(), ("credits saved", self.saved), ("requests sent", self.requests_sent)]
        return html_table("storeframes Client", ("", "value"), rows)

    def close(self) -> None:
        """Close the thread pool and the HTTP connections this client opened, and tidy the ledger.

        Waits for the large frames the cache writes behind the calls
        (:meth:`~storeframes.cache.Cache.write_frame`). The session's ledger rows, kept in
        the cache one small file per request, are merged into a few files (see
        :mod:`storeframes.credits`). A closed client sends
        nothing more: a call that would is a :class:`~storeframes.ConfigurationError`
        ("this client is closed"); closing twice is harmless.
        """
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        if self.cache is not None:
            self.cache.flush()  # the large frames written behind the calls
            self.credits.sink = self.cache
            self.credits.close()
        self.wire.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

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
        connection) a row with ``status`` null and ``cost`` 0. An answer whose cost cannot
        be read (not a whole number >= 0) counts the request's estimate, on a row with
        ``max_credit_cost`` null. :attr:`spent` is always the sum of ``cost``. Each row names its ``service`` (:attr:`namespace`). The rows
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

    def spend(self, *, session: bool = False, service: str | None = None) -> pl.DataFrame:
        """Credits spent and saved by the cache, per service, UTC day and endpoint.

        Sums the ledger kept in the cache folder (every session that used it), or only
        this client's calls with ``session=True`` (or when caching is off). ``service``
        says whose credits: by default this client's :attr:`namespace` (``"service"``,
        the real service, for a :class:`Client`; ``"sandbox-<seed>"`` for a sandbox
        client), ``"all"`` every service, each on rows of its own (ledger rows of
        earlier versions are ``"unknown"``), or a name. Columns: service, day, endpoint,
        requests (answers received, errors and retries included), credits_spent,
        cache_hits, credits_saved.
        """
        if session or self.cache is None:
            ledger = self.ledger
        else:
            self._flush()
            ledger = self.cache.read_ledger()
        if service is None:
            service = self.namespace
        if service != "all":
            ledger = ledger.filter(pl.col("service") == service)
        return spend_summary(ledger)

    def plan(self, endpoint: str, *, refresh: RefreshOption | None = None, **params: Any) -> Plan:
        """What a call would send, what the cache already answers, and the estimated credits.

        Nothing is sent. ``endpoint`` and ``params`` are those of :meth:`get`, or the name
        of a frame function and its arguments (``"versions_frame"``, ``apps=...``).

        >>> client.plan("changes", apps=["284882215"], start_date="2026-10-01", end_date="2026-10-31")  # doctest: +SKIP
        Plan(changes: 1 request to send, at most 42 credits; 0 cached answers used, ...)
        """
        if endpoint == "find_apps":
            return plan_find_apps(self, params, refresh=refresh)
        return self.plan_many(endpoint, [params], refresh=refresh)

    def plan_many(
        self, endpoint: str, calls: Sequence[Mapping[str, Any]], *, refresh: RefreshOption | None = None
    ) -> Plan:
        """:meth:`plan` for the calls of :meth:`get_many`."""
        spec = FRAMES.get(endpoint)
        endpoint, calls = resolve(endpoint, calls, today=self.today())
        with CallWarnings():
            try:
                ep, _, plans, _ = self._plan(endpoint, calls, refresh, load=False)
            except InvalidParameterError as exc:
                raise (spec.speak(exc) if spec else exc) from None
            return engine.summarize(ep, plans)

    def get(self, endpoint: str, *, refresh: RefreshOption | None = None, **params: Any) -> Answer:
        """Fetch one call's answer: validate, consult the cache, send what is missing, merge.

        ``params`` are the endpoint's parameters (see :mod:`storeframes.catalog`);
        ``apps`` may be a list or a comma-separated string of any length. ``refresh``
        overrides the client's (``"auto"``, ``"always"`` or ``"never"``; True means
        ``"always"`` and False ``"auto"``).
        """
        return self.get_many(endpoint, [params], refresh=refresh)[0]

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
        with CallWarnings():
            ep, mode, plans, loaded = self._plan(endpoint, calls, refresh, load=True)
            try:
                plans, pool = self._fetch(ep, mode, plans, loaded)
                answers, counted = [], set[int]()
                for plan in plans:
                    parts, unavailable = self._served(ep, plan, pool, loaded, counted)
                    answers.append(engine.compose(ep, plan.params, parts, unavailable))
                return answers
            finally:
                self._flush()

    def gather(
        self, endpoint: str, calls: Sequence[Mapping[str, Any]], refresh: RefreshOption | None
    ) -> tuple[Endpoint, list[CallParts]]:
        """Each call's canonical parameters and parts, fetching what the cache lacks: what frames build on.

        Cached parts name their entry only (``response`` None), so a frame already kept
        in the cache is read from Parquet and the raw answer is never decompressed.
        Calls that mean the same request are answered once.
        """
        with CallWarnings():
            ep, mode, plans, _ = self._plan(endpoint, calls, refresh, load=False)
            unique: dict[str, CallPlan] = {}
            for plan in plans:
                unique.setdefault(engine.key(plan.params), plan)
            try:
                plans, pool = self._fetch(ep, mode, list(unique.values()), None)
                counted = set[int]()
                return ep, [(plan.params, self._served(ep, plan, pool, {}, counted)[0]) for plan in plans]
            finally:
                self._flush()

    def _frame(self, name: str, arguments: Mapping[str, Any], refresh: RefreshOption | None) -> pl.DataFrame:
        """A frame function's frame; the warnings of the call, its threads' too, given at the caller's line."""
        with CallWarnings():
            return super()._frame(name, arguments, refresh)

    def map(self, function: Callable[[T], R], items: Sequence[T]) -> Iterator[R]:
        """``function`` over ``items`` on the client's threads, results in order.

        Called from one of those threads (a frame function run by :meth:`map` itself),
        it runs in the caller's thread: a pool waiting on itself would never finish.
        """
        if _in_pool_of(self):
            return iter([function(item) for item in items])
        return self._executor().map(carry(function), items)

    # -- the steps of a call -----------------------------------------------------------

    def _plan(
        self, endpoint: str, calls: Sequence[Mapping[str, Any]], refresh: RefreshOption | None, *, load: bool
    ) -> tuple[Endpoint, Refresh, list[CallPlan], dict[str, Response]]:
        """Validate every call, then plan each against the cache (reading its answers when ``load``)."""
        ep = self.endpoints[catalog.endpoint(endpoint).name]
        mode = _refresh_mode(self.refresh if refresh is None else refresh)
        if self.offline and mode == "auto":  # no fetching: every cached answer serves, however old
            mode = "never"
        canonical = [catalog.validate(ep, call, today=self.today()) for call in calls]
        loaded: dict[str, Response] = {}
        return ep, mode, self._plan_calls(ep, canonical, mode, loaded if load else None), loaded

    def _plan_calls(
        self,
        ep: Endpoint,
        calls: Sequence[dict[str, str]],
        mode: Refresh,
        loaded: dict[str, Response] | None,
        since: datetime | None = None,
    ) -> list[CallPlan]:
        """Plan calls against the cache, seen afresh; read the answers they use into ``loaded`` (unless None)."""
        if self.cache is not None:
            self.cache.sync(ep.name)
        plans: list[CallPlan] = []
        for params in calls:
            while True:
                plan = engine.plan_call(
                    ep, params, self.cache, service=self.namespace, now=self._now(), refresh=mode, since=since
                )
                if loaded is None or self.cache is None or _load(self.cache, plan, loaded):
                    break
            plans.append(plan)
        return plans

    def _fetch(
        self, ep: Endpoint, mode: Refresh, plans: list[CallPlan], loaded: dict[str, Response] | None
    ) -> tuple[list[CallPlan], engine.Pool]:
        """Get every cell the plans miss, each from one request, whoever sends it; returns the plans seen afresh.

        In rounds: each group of requests is sent under the leases of its apps or
        keywords, after a look at the cache (another caller may have just fetched
        them); a group whose leases another caller holds is not sent, and once the
        round's requests ended, those leases are waited for and what their holders
        fetched is used. Offline or over the budget nothing is sent. On a failure the
        requests not yet started are cancelled, and the error is raised with
        ``partial`` holding the responses received.
        """
        pool = engine.Pool(ep)
        cells = engine.missing(ep, plans)
        if not cells:
            return plans, pool
        requests = engine.requests_over(ep, plans, cells)
        estimate = sum(ep.estimate(r) for r in requests)
        if self.offline or mode == "never":
            raise NotCachedError(
                ep.name, requests, estimate, reason=self.offline_reason if self.offline else 'refresh="never"'
            )
        self.credits.check(ep.name, estimate)
        self.wire.check_ready()
        since = self._now() if mode == "always" else None
        for _ in range(1000):
            groups = engine.lease_groups(ep, self.namespace, requests)
            futures = self._start(partial(self._fetch_group, ep, mode=mode, since=since), groups)
            _, not_done = self._watch(ep, futures)
            _raise_first_failure(futures, not_done)
            replan, busy = False, {}
            for future in futures:
                fetched, waiting, found = future.result()
                for got in fetched:
                    pool.add(got, paid=True)
                busy.update(waiting)
                replan |= found
            leases = self._leases()
            for name, flight in busy.items():
                for got in leases.wait(name, flight):
                    pool.add(got, paid=False)
            if self.cache is not None and (replan or None in busy.values()):  # others kept them in the cache
                plans = self._plan_calls(ep, [p.params for p in plans], "never" if since else mode, loaded, since)
            cells = engine.missing(ep, plans, pool)
            if not cells:
                return plans, pool
            requests = engine.requests_over(ep, plans, cells)
        raise StoreframesError(f"{ep.name}: the cells other callers were fetching never arrived")

    def _watch(self, ep: Endpoint, futures: Sequence[Future[Group]]) -> tuple[Any, Any]:
        """Wait for the first failure or the end of all, with a progress bar when there are many."""
        show = self.progress is not False and len(futures) > (0 if self.progress else self.PROGRESS_AFTER)
        bar = _progress_bar(ep.name, futures, lambda: self.spent) if show else None
        try:
            return wait(futures, return_when=FIRST_EXCEPTION)
        finally:
            if bar is not None:
                bar.close()

    def _fetch_group(
        self, ep: Endpoint, group: tuple[list[str], list[dict[str, str]]], *, mode: Refresh, since: datetime | None
    ) -> Group:
        """Send a group of requests under its leases: what it fetched, the leases others held, and
        whether the cache already held some of its cells (the calls are then planned again)."""
        names, requests = group
        leases = self._leases()
        held, busy = leases.take(names)
        if busy:  # another caller is fetching some of it: wait for it after this round, holding nothing
            for lease in held.values():
                leases.release(lease)
            return [], busy, False
        fetched: list[Fetched] = []
        found = False
        try:
            for request in requests:
                todo = [request]
                if self.cache is not None:  # what another caller fetched before the leases were taken
                    self.cache.sync(ep.name)
                    plan = engine.plan_call(
                        ep,
                        request,
                        self.cache,
                        service=self.namespace,
                        now=self._now(),
                        refresh="never" if since else mode,
                        since=since,
                    )
                    found |= bool(plan.cached)
                    todo = plan.requests
                for params in todo:
                    fetched.append(self._fetch_one(ep, params))
        finally:
            for lease in held.values():
                leases.release(lease, fetched)
        return fetched, {}, found

    def _start(self, function: Callable[[T], Group], items: Sequence[T]) -> list[Future[Group]]:
        """Run ``function`` over ``items`` on the thread pool; a lone item (or any, from one of the pool's
        own threads) runs in the caller's thread."""
        if len(items) != 1 and not _in_pool_of(self):
            pool = self._executor()
            working = carry(function)  # its warnings are given in the caller's thread when the call ends
            return [pool.submit(working, item) for item in items]
        futures: list[Future[Group]] = []
        for item in items:
            future: Future[Group] = Future()
            try:
                future.set_result(function(item))
            except Exception as exc:
                future.set_exception(exc)
            futures.append(future)
        return futures

    def _fetch_one(self, ep: Endpoint, params: dict[str, str]) -> Fetched:
        """Send one request and keep its answer; when a country refuses an app of it, find which by halving.

        Only the apps asked for are kept: others in the answer are dropped with an
        :class:`~storeframes.AnswerWarning`, and apps the answer left out are not cached
        as answered (the call names them; the next one asks for them again).
        """
        try:
            response = self._send(ep, params)
        except AppNotAvailableError:
            if ep.entity != "apps":  # no app to leave out: the call cannot be answered
                raise
            halves = engine.halves(ep, params)
            if not halves:  # this one app: remembered as not available
                self._keep(Response(ep.name, dict(params), None, 0, 0, 422, self._now()), ep, available=False)
                return Fetched([], [(dict(params), params["apps"])])
            results = [self._fetch_one(ep, half) for half in halves]
            return Fetched(
                [r for got in results for r in got.responses],
                [a for got in results for a in got.refused],
                [a for got in results for a in got.absent],
            )
        asked, absent = _asked_only(ep, response)
        kept = [self._keep(asked, ep)] if asked is not None else []
        return Fetched(kept, [], [(dict(params), app) for app in absent])

    def _send(self, ep: Endpoint, params: dict[str, str]) -> Response:
        """One request through the wire, its estimate held against the budget until it ends.

        Settling counts every attempt's cost (a charged failure too) and keeps the
        request's ledger rows in the cache before the caller keeps the answer.
        """
        reservation = self.credits.reserve(ep.name, ep.estimate(params), tries=self.wire.max_tries)
        try:
            return self.wire.send(ep, params, report=reservation.attempt)
        finally:
            reservation.settle()

    def _keep(self, response: Response, ep: Endpoint, *, available: bool = True) -> Response:
        """Write an answer (or an app's unavailability) to the cache as soon as it is known; name its entry."""
        if self.cache is None:
            return response
        entry = self.cache.store(
            response,
            service=self.namespace,
            scope=planning.scope_of(ep, response.params),
            cells=planning.cells_of(ep, response.params),
            available=available,
            scrub=self.wire.scrub,
        )
        return replace(response, entry=entry.id) if entry is not None else response

    def _served(
        self, ep: Endpoint, plan: CallPlan, pool: engine.Pool, loaded: Mapping[str, Response], counted: set[int]
    ) -> tuple[list[Part], tuple[str, ...]]:
        """The parts of a call; its cache hits go to the ledger, the apps refused and the apps answers left
        out into a warning each."""
        parts, unavailable, hits = engine.parts_of(ep, plan, pool, loaded=loaded, counted=counted)
        for hit in hits:
            self.credits.record_hit(hit.endpoint, hit.params, hit.saved)
        scope = planning.scope_of(ep, plan.params)
        absent = list(dict.fromkeys(str(c[0]) for c in plan.cells if c not in plan.cached and pool.is_absent(scope, c)))
        if absent:
            warn(
                f"{ep.name} answered without {plural(len(absent), 'app')} it was asked for, left out and not cached "
                f"(asked for again next time): {_shown(absent)}",
                AnswerWarning,
            )
        if unavailable:
            warn(
                f"{plural(len(unavailable), 'app')} not available in country {plan.params.get('country')!r} "
                f"for {ep.name}, left out: {', '.join(unavailable)}",
                AppsUnavailableWarning,
            )
        return parts, unavailable

    def _flush(self) -> None:
        """Keep the call's cache hits, and any ledger row whose write failed, in the cache."""
        if self.cache is not None:
            self.credits.sink = self.cache
            self.credits.flush()

    def _leases(self) -> Leases:
        """The leases of this client's cache: one table for every client of the process that uses it."""
        if self._lease_table is None:
            self._lease_table = self.coordinator.leases(self.cache, self)
        return self._lease_table

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    self.max_workers, thread_name_prefix="storeframes", initializer=_mark_pool_thread, initargs=(self,)
                )
            return self._pool
