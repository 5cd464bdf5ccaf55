"""The client: HTTPS, the token header, the rate limit, retries, batching and credits.

This is the only module that speaks HTTP (through httpx). Every request goes through
:meth:`Client._send`: validated canonical parameters in, a checked envelope out, its
credits in the ledger. Requests of one call run on a small thread pool under one
shared :class:`~storeframes.limiter.SlidingWindowLimiter`; there is no asyncio, so the
client works inside a notebook's running event loop.

Before sending, a call asks the :class:`~storeframes.cache.Cache` which of its cells
it already holds, and sends only the requests for the rest (see
:mod:`storeframes.planning`); each answer is kept in the cache as soon as it arrives.
"""

from __future__ import annotations

import email.utils
import ipaddress
import json
import logging
import os
import shutil
import tempfile
import threading
import time
import warnings
import weakref
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import httpx
import polars as pl
import tenacity
from tqdm.auto import tqdm

from . import catalog, frames, planning
from ._version import __version__
from .answers import Answer, Part, Response
from .cache import REFRESH_MODES, Cache, Entry, Refresh, default_cache_dir
from .catalog import CostModel, Endpoint, Freshness
from .errors import (
    ApiError,
    AppNotAvailableError,
    AuthenticationError,
    BudgetExceededError,
    ConfigurationError,
    EstimatesNotInPlanError,
    ForbiddenError,
    InvalidParameterError,
    NotCachedError,
    NotEnoughCreditsError,
    RateLimitError,
    ResponseShapeError,
    ServerError,
    ServiceValidationError,
    TransportError,
)
from .ledger import LEDGER_SCHEMA, spend_summary
from .limiter import SlidingWindowLimiter

__all__ = ["LEDGER_SCHEMA", "Answer", "AppsUnavailableWarning", "Client", "Plan", "Response"]

log = logging.getLogger("storeframes")

ENV_API_KEY = "STOREFRAMES_API_KEY"
ENV_BASE_URL = "STOREFRAMES_BASE_URL"
ENV_OFFLINE = "STOREFRAMES_OFFLINE"
ENV_PROGRESS = "STOREFRAMES_PROGRESS"
TOKEN_HEADER = "x-service-key"


class AppsUnavailableWarning(UserWarning):
    """Some apps of a call are not available in the requested country; the rest were fetched."""


class _Secret:
    """Holds the token so that no repr, vars() dump or traceback local shows it."""

    __slots__ = ("_value",)

    def __init__(self, value: str):
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "'***'"

    __str__ = __repr__

    def __bool__(self) -> bool:
        return bool(self._value)


def _is_loopback(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _check_base_url(base_url: str) -> str:
    try:
        url = httpx.URL(base_url)
    except Exception as exc:  # httpx raises InvalidURL and friends
        raise ConfigurationError(f"base_url {base_url!r} is not a URL: {exc}") from None
    if url.scheme == "http" and not _is_loopback(url.host):
        raise ConfigurationError(
            f"base_url {base_url!r} uses plain http; the service requires https "
            "(plain http is allowed only for loopback hosts such as the local sandbox)"
        )
    if url.scheme not in ("http", "https") or not url.host:
        raise ConfigurationError(f"base_url {base_url!r} must be an https:// URL")
    return base_url.rstrip("/")


def _retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header; None when absent, unreadable or 0 (no hint)."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = (when - datetime.now(UTC)).total_seconds()
    return seconds if seconds > 0 else None


_ERRORS_BY_CODE: Mapping[str, type[ApiError]] = {
    "UnknownTokenError": AuthenticationError,
    "NotEnoughCreditsError": NotEnoughCreditsError,
    "EstimatesNotInPlanError": EstimatesNotInPlanError,
    "AppNotAvailableError": AppNotAvailableError,
}


def _error_class(status: int, code: str | None) -> type[ApiError]:
    if code in _ERRORS_BY_CODE:
        return _ERRORS_BY_CODE[code]
    if status == 401:
        return AuthenticationError
    if status == 403:
        return ForbiddenError
    if status == 422:
        return ServiceValidationError
    if status == 429:
        return RateLimitError
    if status >= 500:
        return ServerError
    return ApiError


def _error_details(body: Any) -> tuple[str | None, str | None]:
    """The (code, message) of an error body, in any of the forms seen."""
    if not isinstance(body, dict):
        return None, None
    candidates = [body.get("error"), body]
    meta = body.get("metadata")
    if isinstance(meta, dict) and isinstance(meta.get("response"), dict):
        candidates.insert(1, meta["response"].get("error", meta["response"]))
    for cand in candidates:
        if isinstance(cand, dict) and (cand.get("code") or cand.get("message")):
            code = cand.get("code")
            message = cand.get("message")
            return (str(code) if code else None, str(message) if message else None)
        if isinstance(cand, str):
            return None, cand
    return None, None


def _retryable(exc: BaseException) -> bool:
    return isinstance(exc, (RateLimitError, ServerError, TransportError))


_LEDGER_CHUNK = 1000  # ledger rows per file in the cache folder


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


def _whole(value: Any) -> bool:
    """Whether ``value`` is a whole number (True and False are not)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: Any) -> bool:
    """Whether ``value`` is a real number (True and False are not)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _key(params: Mapping[str, str]) -> str:
    return json.dumps(dict(params), sort_keys=True)


@dataclass(frozen=True)
class _CallPlan:
    """One call: its cells, what the cache serves, and the requests for the rest."""

    params: dict[str, str]
    cells: list[planning.Cell]
    cached: dict[planning.Cell, Entry]
    loaded: dict[str, Response]
    requests: list[dict[str, str]]


@dataclass(frozen=True)
class _Piece:
    """The cells of a call one cached entry or fetched response gives (``response`` is None
    for a cached entry whose answer was not read)."""

    entry: Entry | None
    response: Response | None
    cells: frozenset[planning.Cell]
    whole: bool = True
    saved: int = 0


PLAN_SCHEMA = pl.Schema(
    {"endpoint": pl.String, "params": pl.String, "source": pl.String, "cells": pl.Int64, "credits": pl.Int64}
)


@dataclass(frozen=True)
class Plan:
    """What a call would do, worked out without sending anything.

    ``requests`` has one row per request to send (``source="send"``, ``credits`` its
    estimated maximum cost) and per cached answer the call would use
    (``source="cache"``, ``credits`` the original cost of the cells it serves).
    """

    endpoint: str
    requests: pl.DataFrame
    cells: int
    cached_cells: int

    @property
    def to_send(self) -> int:
        """How many requests the call would send."""
        return int((self.requests["source"] == "send").sum())

    @property
    def estimate(self) -> int:
        """The estimated maximum credits of the requests to send."""
        return int(self.requests.filter(pl.col("source") == "send")["credits"].sum())

    @property
    def saved(self) -> int:
        """Credits the cached answers stand for."""
        return int(self.requests.filter(pl.col("source") == "cache")["credits"].sum())

    @property
    def cached(self) -> bool:
        """Whether the cache answers the whole call."""
        return self.to_send == 0

    def __repr__(self) -> str:
        answers = int((self.requests["source"] == "cache").sum())
        return (
            f"Plan({self.endpoint}: {self.to_send} request(s) to send, at most {self.estimate} credits; "
            f"{answers} cached answer(s) used, saving {self.saved} credits; "
            f"{self.cached_cells} of {self.cells} cells cached)"
        )


class Client(frames.FrameMethods):
    """A client of the service.

    Args:
        api_key: the token; defaults to ``$STOREFRAMES_API_KEY``. Sent only in the
            ``x-service-key`` header, never shown in a repr, message or log line.
        base_url: the service's base address including ``/api/public/store``;
            defaults to ``$STOREFRAMES_BASE_URL``. Must be https (plain http only for
            loopback hosts, such as ``storeframes sandbox serve``).
        budget: the most credits this client may spend; a request whose estimated
            maximum cost would pass it is refused before sending.
        rate_limit: ``(requests, seconds)`` of the strict sliding window, ``(60, 10.0)``.
        max_workers: threads sending the requests of one call (default 8).
        http_client: an ``httpx.Client`` to send with (its transport, proxies and
            timeouts are kept); the client adds the token per request.
        timeout: seconds for each request when no ``http_client`` is given.
        max_tries: attempts per request for 429, 5xx, timeouts and dropped connections.
        backoff: ``(first, most)`` seconds of the exponential backoff with full jitter.
        cost_model: per endpoint name, a :class:`~storeframes.catalog.CostModel`
            replacing the default price list.
        cache_dir: the cache folder; defaults to ``$STOREFRAMES_CACHE_DIR``, else the
            user's cache directory. A :class:`~storeframes.cache.Cache` may be given;
            ``False`` turns caching off.
        offline: never open a connection; every cached answer serves, however old (as
            with ``refresh="never"``), and a call the cache cannot answer raises
            :class:`~storeframes.NotCachedError`. Defaults to ``$STOREFRAMES_OFFLINE``.
        refresh: ``"auto"`` serves fresh cached answers and fetches the rest,
            ``"always"`` fetches everything again, ``"never"`` serves only from the
            cache (whatever its age). Each call may override it.
        freshness: per endpoint name, a :class:`~storeframes.catalog.Freshness`
            replacing the default policy.
        clock: a callable returning the current UTC datetime (for replays and tests).
        progress: show a progress bar (``tqdm.auto``: a widget in notebooks, a line in a
            terminal) while a call sends requests: ``None`` (the default) when it sends
            more than :attr:`PROGRESS_AFTER`, ``True`` whenever it sends, ``False`` never.
            ``$STOREFRAMES_PROGRESS=0`` turns it off by default.

    >>> client = Client.sandbox()
    >>> answer = client.get("metadata", apps="3233849169")
    >>> answer.cost
    11
    >>> client.close()
    """

    PROGRESS_AFTER = 5
    """With ``progress=None``, a call sending more requests than this shows a progress bar."""

    def __init__(
        self,
        api_key: str | None = None,
        *,
        base_url: str | None = None,
        budget: int | None = None,
        rate_limit: tuple[int, float] = (60, 10.0),
        max_workers: int | None = None,
        http_client: httpx.Client | None = None,
        timeout: float = 30.0,
        max_tries: int = 5,
        backoff: tuple[float, float] = (0.5, 30.0),
        cost_model: Mapping[str, CostModel] | None = None,
        cache_dir: str | os.PathLike[str] | Cache | bool | None = None,
        offline: bool | None = None,
        refresh: Refresh = "auto",
        freshness: Mapping[str, Freshness] | None = None,
        clock: Any = None,
        progress: bool | None = None,
    ):
        if api_key is not None and not isinstance(api_key, str):  # the value itself is never shown
            raise ConfigurationError(f"api_key must be the token as a text, got a {type(api_key).__name__}")
        self._api_key = _Secret(api_key if api_key is not None else os.environ.get(ENV_API_KEY, ""))
        base_url = base_url if base_url is not None else os.environ.get(ENV_BASE_URL) or None
        self.base_url = _check_base_url(base_url) if base_url else None
        if budget is not None and (not _whole(budget) or budget < 0):
            raise ConfigurationError(f"budget must be a whole number of credits >= 0, got {budget!r}")
        self.budget = budget
        try:
            limit, window = rate_limit
        except (TypeError, ValueError):
            raise ConfigurationError(f"rate_limit must be (requests, seconds), got {rate_limit!r}") from None
        try:
            self.limiter = SlidingWindowLimiter(limit, window)
        except (TypeError, ValueError) as exc:
            raise ConfigurationError(f"rate_limit must be (requests, seconds), got {rate_limit!r}: {exc}") from None
        if not _whole(max_tries) or max_tries < 1:
            raise ConfigurationError(f"max_tries must be a whole number >= 1, got {max_tries!r}")
        self.max_tries = max_tries
        if (
            not isinstance(backoff, (tuple, list))
            or len(backoff) != 2
            or not all(_number(b) and b >= 0 for b in backoff)
        ):
            raise ConfigurationError(f"backoff must be (first, most), two numbers of seconds >= 0, got {backoff!r}")
        self.backoff = backoff
        if max_workers is not None and (not _whole(max_workers) or max_workers < 1):
            raise ConfigurationError(f"max_workers must be a whole number >= 1 (or None for 8), got {max_workers!r}")
        self.max_workers = max_workers or 8
        bad_timeout = not isinstance(timeout, httpx.Timeout) and (not _number(timeout) or timeout <= 0)
        if http_client is None and timeout is not None and bad_timeout:
            raise ConfigurationError(f"timeout must be seconds > 0 (or None for no limit), got {timeout!r}")
        if offline is not None and not isinstance(offline, bool):
            raise ConfigurationError(f"offline must be True, False or None (${ENV_OFFLINE}), got {offline!r}")
        self._own_http = http_client is None
        self._http = http_client or httpx.Client(timeout=timeout, follow_redirects=False)
        costs = _per_endpoint("cost_model", catalog.DEFAULT_COSTS, cost_model)
        policies = _per_endpoint("freshness", catalog.DEFAULT_FRESHNESS, freshness)
        self.endpoints: dict[str, Endpoint] = {
            name: ep.with_cost(costs[name]).with_freshness(policies[name]) for name, ep in catalog.ENDPOINTS.items()
        }
        self.refresh = self._refresh_mode(refresh)
        self.offline = _env_flag(ENV_OFFLINE) is True if offline is None else bool(offline)
        self.cache: Cache | None = self._open_cache(cache_dir)
        self._clock = clock
        self._service = "service"  # which service the cached answers come from
        self._lock = threading.Lock()
        self._ledger_rows: list[dict[str, Any]] = []
        self._ledger_flushed = 0
        self._flush_lock = threading.Lock()
        self._session = f"{datetime.now(UTC):%Y%m%dT%H%M%S%fZ}-{os.getpid()}-{os.urandom(3).hex()}"
        self._spent = 0
        self._saved = 0
        self._reserved = 0
        self._watchers: list[Callable[[Mapping[str, Any]], None]] = []
        self._sending = threading.local()  # rows of a request in flight, told to watchers once its credits count
        self._pool: ThreadPoolExecutor | None = None
        self.requests_sent = 0
        self.retries = 0
        self.sandbox_service: Any = None  # the in-process sandbox, for Client.sandbox()
        if progress is None and _env_flag(ENV_PROGRESS) is False:
            progress = False
        if progress is not None and not isinstance(progress, bool):
            raise ConfigurationError(f"progress must be True, False or None (when many requests), got {progress!r}")
        self.progress = progress
        self._scratch: weakref.finalize | None = None  # a sandbox's own cache folder, removed with it

    # -- construction helpers -------------------------------------------------

    @staticmethod
    def _refresh_mode(refresh: Any) -> Refresh:
        if refresh not in REFRESH_MODES:
            raise InvalidParameterError("refresh", refresh, f"one of {', '.join(REFRESH_MODES)}")
        return refresh  # type: ignore[no-any-return]

    @staticmethod
    def _open_cache(cache_dir: Any) -> Cache | None:
        if cache_dir is False:
            return None
        if isinstance(cache_dir, Cache):
            return cache_dir
        if cache_dir is None or cache_dir is True:
            return Cache(default_cache_dir())
        if isinstance(cache_dir, (str, os.PathLike)):
            return Cache(Path(cache_dir))
        raise ConfigurationError(f"cache_dir must be a folder path, a Cache or False, got {cache_dir!r}")

    def _now(self) -> datetime:
        return self._clock() if self._clock is not None else datetime.now(UTC)

    def _today(self) -> date:
        return self._now().astimezone(UTC).date()

    @classmethod
    def sandbox(
        cls, *, budget: int | None = None, rate_limit: tuple[int, float] = (60, 10.0), **options: Any
    ) -> Client:
        """A client wired to an in-process sandbox service (no network, no token needed).

        ``options`` go to :class:`storeframes.sandbox.SandboxService` (``seed``,
        ``today``, ``rate_limit``, ``latency``, ``faults`` ...). The client's
        ``max_tries``, ``backoff``, ``max_workers``, ``cost_model``, ``timeout``,
        ``cache_dir``, ``offline``, ``refresh``, ``freshness`` and ``clock`` may be given
        too. Unless ``cache_dir`` is given, the sandbox client caches in a temporary
        folder of its own, removed when the client is closed (``cache_dir=False`` turns
        caching off); in a shared folder its answers are kept apart from the real
        service's. Its clock is the sandbox's ``today``, so relative dates and freshness
        follow the sandbox.
        """
        from .sandbox import SANDBOX_BASE_URL, SANDBOX_KEY, SandboxService, SandboxTransport

        names = (
            "max_tries",
            "backoff",
            "max_workers",
            "cost_model",
            "timeout",
            "cache_dir",
            "offline",
            "refresh",
            "freshness",
            "clock",
            "progress",
        )
        client_options = {k: options.pop(k) for k in names if k in options}
        scratch = None
        if client_options.get("cache_dir") is None:
            scratch = tempfile.mkdtemp(prefix="storeframes-sandbox-")
            client_options["cache_dir"] = scratch
        options.setdefault("rate_limit", rate_limit)
        http = None
        try:
            service = SandboxService(**options)
            http = httpx.Client(transport=SandboxTransport(service), timeout=client_options.pop("timeout", 30.0))
            client = cls(
                SANDBOX_KEY,
                base_url=SANDBOX_BASE_URL,
                budget=budget,
                rate_limit=rate_limit,
                http_client=http,
                **client_options,
            )
        except BaseException:  # a refused option leaves no folder and no connection behind
            if http is not None:
                http.close()
            if scratch is not None:
                shutil.rmtree(scratch, ignore_errors=True)
            raise
        client._own_http = True
        client.sandbox_service = service
        if scratch is not None:  # removed on close(), or when the client is collected
            client._scratch = weakref.finalize(client, shutil.rmtree, scratch, ignore_errors=True)
        client._service = f"sandbox-{service.world.seed}"
        if client._clock is None:
            client._clock = service.now
        return client

    def __repr__(self) -> str:
        key = "set" if self._api_key else "missing"
        budget = f", budget={self.budget}" if self.budget is not None else ""
        cache = f"{str(self.cache.path)!r}" if self.cache is not None else "off"
        offline = ", offline" if self.offline else ""
        return (
            f"Client(base_url={self.base_url!r}, api_key={key}, spent={self.spent}{budget}, "
            f"rate_limit=({self.limiter.limit}, {self.limiter.window}), cache={cache}{offline})"
        )

    def close(self) -> None:
        """Close the thread pool and the HTTP connections this client opened."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        if self._own_http:
            self._http.close()
        if self._scratch is not None:
            self._scratch()
            self.cache = None

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- credits ----------------------------------------------------------------

    @property
    def spent(self) -> int:
        """Credits charged so far, as the service reported them."""
        return self._spent

    @property
    def saved(self) -> int:
        """Credits the cache saved this client: what its cached answers originally cost."""
        return self._saved

    def watch(self, callback: Callable[[Mapping[str, Any]], None]) -> Callable[[], None]:
        """Call ``callback(row)`` with each new ledger row; returns a function that stops it.

        ``row`` has the columns of :attr:`ledger` (``endpoint``, ``cost``, ``from_cache``,
        ``saved`` ...). Callbacks run on the thread that received the answer, after the
        credits are counted; an exception in one is logged and does not stop the call.
        The credit meter of :mod:`storeframes.widgets` updates itself this way.

        >>> stop = client.watch(lambda row: print(row["endpoint"], row["cost"]))  # doctest: +SKIP
        >>> client.metadata_frame("3233849169")  # doctest: +SKIP
        metadata 11
        >>> stop()  # doctest: +SKIP
        """
        if not callable(callback):
            raise ConfigurationError(f"watch() takes a callable, got {type(callback).__name__}")
        with self._lock:
            self._watchers.append(callback)

        def stop() -> None:
            with self._lock:
                if callback in self._watchers:
                    self._watchers.remove(callback)

        return stop

    @property
    def ledger(self) -> pl.DataFrame:
        """This client's ledger: one row per answer received or served from the cache.

        Columns (:data:`~storeframes.LEDGER_SCHEMA`): time (UTC), endpoint, canonical
        params (JSON), cost, max_credit_cost, status, attempt, elapsed_ms, from_cache
        and saved. The rows are also kept in the cache folder; :meth:`spend` sums them
        across sessions.
        """
        with self._lock:
            rows = list(self._ledger_rows)
        return self._ledger_frame(rows)

    @staticmethod
    def _ledger_frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
        return pl.DataFrame(rows, schema=LEDGER_SCHEMA, orient="row") if rows else pl.DataFrame(schema=LEDGER_SCHEMA)

    def _flush_ledger(self) -> None:
        """Write the session's new ledger rows to the cache folder, in files of up to 1000 rows."""
        if self.cache is None:
            return
        with self._flush_lock:  # one writer at a time, so a file never goes back to fewer rows
            with self._lock:
                rows = list(self._ledger_rows)
                first_chunk = self._ledger_flushed // _LEDGER_CHUNK
                self._ledger_flushed = len(rows)
            for chunk in range(first_chunk, (len(rows) + _LEDGER_CHUNK - 1) // _LEDGER_CHUNK):
                part = rows[chunk * _LEDGER_CHUNK : (chunk + 1) * _LEDGER_CHUNK]
                self.cache.write_ledger(f"{self._session}-{chunk:04d}", self._ledger_frame(part))

    def spend(self, *, session: bool = False) -> pl.DataFrame:
        """Credits spent and saved by the cache, per UTC day and endpoint.

        Sums the ledger kept in the cache folder (every session that used it), or only
        this client's calls with ``session=True`` (or when caching is off). Columns:
        day, endpoint, requests, credits_spent, cache_hits, credits_saved.

        >>> client.spend()  # doctest: +SKIP
        shape: (2, 6)
        day         endpoint  requests  credits_spent  cache_hits  credits_saved
        2026-11-21  changes   1         22             1           93
        2026-11-21  metadata  2         31             1           31
        """
        if session or self.cache is None:
            return spend_summary(self.ledger)
        self._flush_ledger()
        return spend_summary(self.cache.read_ledger())

    def estimate(self, endpoint: str, **params: Any) -> int:
        """The estimated maximum credits of a call, without sending anything.

        The cache is consulted: what it holds costs nothing (see :meth:`plan`).
        """
        return self.plan(endpoint, **params).estimate

    def plan(self, endpoint: str, *, refresh: Refresh | None = None, **params: Any) -> Plan:
        """What a call would send, what the cache already answers, and the estimated credits.

        Nothing is sent. ``endpoint`` and ``params`` are those of :meth:`get`, or the name
        of a frame function and its arguments (``"versions_frame"``, ``apps=...``).

        >>> client.plan("changes", apps=["284882215"], start_date="2026-10-01", end_date="2026-10-31")  # doctest: +SKIP
        Plan(changes: 1 request(s) to send, at most 42 credits; 0 cached answer(s) used, ...)
        >>> client.plan("metrics_frame", apps="284882215").estimate  # doctest: +SKIP
        220
        """
        return self.plan_many(endpoint, [params], refresh=refresh)

    def plan_many(self, endpoint: str, calls: Sequence[Mapping[str, Any]], *, refresh: Refresh | None = None) -> Plan:
        """:meth:`plan` for the calls of :meth:`get_many`."""
        spec = frames.FRAMES.get(endpoint)
        endpoint, calls = frames.resolve(endpoint, calls)
        try:
            ep, _, plans = self._plan_calls(endpoint, calls, refresh, load=False)
        except InvalidParameterError as exc:
            raise (spec.speak(exc) if spec else exc) from None
        rows: list[dict[str, Any]] = []
        for request in self._unique_requests(plans).values():
            rows.append(
                {
                    "endpoint": ep.name,
                    "params": _key(request),
                    "source": "send",
                    "cells": len(planning.cells_of(ep, request)),
                    "credits": ep.estimate(request),
                }
            )
        entries = {e.id: e for plan in plans for e in plan.cached.values() if e.available}
        used = Counter(e.id for plan in plans for e in plan.cached.values() if e.available)
        for entry_id, count in used.items():
            entry = entries[entry_id]
            rows.append(
                {
                    "endpoint": ep.name,
                    "params": _key(entry.params),
                    "source": "cache",
                    "cells": count,
                    "credits": entry.share(count),
                }
            )
        frame = pl.DataFrame(rows, schema=PLAN_SCHEMA, orient="row") if rows else pl.DataFrame(schema=PLAN_SCHEMA)
        return Plan(
            endpoint=ep.name,
            requests=frame,
            cells=sum(len(p.cells) for p in plans),
            cached_cells=sum(len(p.cached) for p in plans),
        )

    def _check_budget(self, ep: Endpoint, estimate: int) -> None:
        """Raise if ``estimate`` more credits could take the spending past the budget (hold the lock)."""
        if self.budget is not None and self._spent + self._reserved + estimate > self.budget:
            raise BudgetExceededError(
                spent=self._spent, reserved=self._reserved, estimate=estimate, budget=self.budget, endpoint=ep.name
            )

    def _reserve(self, ep: Endpoint, estimate: int) -> None:
        with self._lock:
            self._check_budget(ep, estimate)
            self._reserved += estimate

    def _settle(self, estimate: int, cost: int) -> None:
        with self._lock:
            self._reserved -= estimate
            self._spent += cost

    def _record(
        self,
        ep: Endpoint,
        params: Mapping[str, str],
        *,
        cost: int,
        max_cost: int,
        status: int,
        attempt: int,
        elapsed: float,
        from_cache: bool = False,
        saved: int = 0,
    ) -> None:
        row = {
            "time": self._now(),
            "endpoint": ep.name,
            "params": json.dumps(dict(params), sort_keys=True),
            "cost": cost,
            "max_credit_cost": max_cost,
            "status": status,
            "attempt": attempt,
            "elapsed_ms": elapsed * 1000.0,
            "from_cache": from_cache,
            "saved": saved,
        }
        with self._lock:
            self._ledger_rows.append(row)
            self._saved += saved
        pending = getattr(self._sending, "rows", None)
        if pending is not None:
            pending.append(row)
        else:
            self._notify([row])

    def _notify(self, rows: Sequence[Mapping[str, Any]]) -> None:
        with self._lock:
            watchers = list(self._watchers)
        for row in rows:
            for callback in watchers:
                try:
                    callback(row)
                except Exception:  # a display must never break a fetch
                    log.exception("a ledger watcher failed")

    def _record_hit(self, ep: Endpoint, entry: Entry, saved: int) -> None:
        self._record(
            ep, entry.params, cost=0, max_cost=0, status=200, attempt=0, elapsed=0.0, from_cache=True, saved=saved
        )

    # -- public fetching -------------------------------------------------------

    def get(self, endpoint: str, *, refresh: Refresh | None = None, **params: Any) -> Answer:
        """Fetch one call's answer: validate, consult the cache, send what is missing, merge.

        ``params`` are the endpoint's parameters (see :mod:`storeframes.catalog`);
        ``apps`` may be a list or a comma-separated string of any length. ``refresh``
        overrides the client's (``"auto"``, ``"always"`` or ``"never"``).

        >>> Client.sandbox().get("search", keyword="photo editor").result["value"][:3]  # doctest: +SKIP
        ['1439034882', '932747118', '389801252']
        """
        return self.get_many(endpoint, [params], refresh=refresh)[0]

    def get_many(
        self, endpoint: str, calls: Sequence[Mapping[str, Any]], *, refresh: Refresh | None = None
    ) -> list[Answer]:
        """Fetch several calls of one endpoint concurrently, under the rate limit.

        Every call is validated, the cache consulted, and the requests still needed
        checked against the budget, before any request is sent; a request two calls
        need is sent once. Each answer is kept in the cache as it arrives. If a request
        fails for good, the requests not yet started are cancelled and the error is
        raised with ``error.partial`` holding the :class:`Response` objects that did
        succeed (they are in the cache too, so calling again sends only the rest).
        """
        ep, mode, plans = self._plan_calls(endpoint, calls, refresh, load=True)
        try:
            fetched = self._fetch_planned(ep, mode, plans)
            return [self._compose(ep, plan, fetched) for plan in plans]
        finally:
            self._flush_ledger()

    def _gather(
        self, endpoint: str, calls: Sequence[Mapping[str, Any]], refresh: Refresh | None
    ) -> tuple[Endpoint, list[tuple[dict[str, str], list[_Piece]]]]:
        """Each call's canonical parameters and pieces, without reading cached answers: what the
        frame functions build on. Calls that mean the same request are answered once.

        Cached pieces name their entry only, so a frame already kept in the cache is read
        from Parquet and the raw answer is never decompressed.
        """
        ep, mode, plans = self._plan_calls(endpoint, calls, refresh, load=False)
        unique: dict[str, _CallPlan] = {}
        for plan in plans:
            unique.setdefault(_key(plan.params), plan)
        plans = list(unique.values())
        try:
            fetched = self._fetch_planned(ep, mode, plans)
            return ep, [(plan.params, self._pieces(ep, plan, fetched, stacklevel=5)[0]) for plan in plans]
        finally:
            self._flush_ledger()

    # -- internals -------------------------------------------------------------

    def _plan_calls(
        self, endpoint: str, calls: Sequence[Mapping[str, Any]], refresh: Refresh | None, *, load: bool
    ) -> tuple[Endpoint, Refresh, list[_CallPlan]]:
        """Validate every call, then look into the cache once for all of them."""
        ep = self.endpoints[catalog.endpoint(endpoint).name]
        mode = self._refresh_mode(self.refresh if refresh is None else refresh)
        if self.offline and mode == "auto":  # no fetching: every cached answer serves, however old
            mode = "never"
        canonical = [catalog.validate(ep, call, today=self._today()) for call in calls]
        if self.cache is not None:
            self.cache.sync(ep.name)
        return ep, mode, [self._plan_call(ep, params, mode, load=load) for params in canonical]

    def _plan_call(self, ep: Endpoint, params: dict[str, str], mode: Refresh, *, load: bool = True) -> _CallPlan:
        """Which cells of a call the cache serves (their answers loaded) and the requests for the rest."""
        cells = planning.cells_of(ep, params)
        cached: dict[planning.Cell, Entry] = {}
        loaded: dict[str, Response] = {}
        if self.cache is not None:
            scope = planning.scope_of(ep, params)
            while True:
                cached = self.cache.lookup(
                    ep, service=self._service, scope=scope, cells=cells, now=self._now(), refresh=mode, sync=False
                )
                if not load:
                    break
                pending = {e.id: e for e in cached.values() if e.available and e.id not in loaded}
                unreadable = False
                for entry in pending.values():
                    response = self.cache.load(entry)
                    if response is None:  # set aside by the cache: look again without it
                        unreadable = True
                        break
                    loaded[entry.id] = response
                if not unreadable:
                    break
        missing = [cell for cell in cells if cell not in cached]
        return _CallPlan(params, cells, cached, loaded, planning.requests_for(ep, params, missing))

    @staticmethod
    def _unique_requests(plans: Sequence[_CallPlan]) -> dict[str, dict[str, str]]:
        return {_key(request): request for plan in plans for request in plan.requests}

    def _fetch_planned(
        self, ep: Endpoint, mode: Refresh, plans: Sequence[_CallPlan]
    ) -> dict[str, tuple[list[Response], list[str]]]:
        """Send the requests the plans still need, once each, after the offline and budget checks."""
        requests = list(self._unique_requests(plans).values())
        if requests:
            estimate = sum(ep.estimate(r) for r in requests)
            if self.offline or mode == "never":
                reason = "offline" if self.offline else 'refresh="never"'
                raise NotCachedError(ep.name, requests, estimate, reason=reason)
            with self._lock:
                self._check_budget(ep, estimate)
            self._require_connection()
        return self._fetch_all(ep, requests)

    def _fetch_all(self, ep: Endpoint, requests: list[dict[str, str]]) -> dict[str, tuple[list[Response], list[str]]]:
        """Send the requests; on a failure cancel the rest and raise with ``error.partial``."""
        if not requests:
            return {}
        futures = self._start(ep, requests)
        bar = self._progress_bar(ep, futures)
        try:
            _, not_done = wait(futures, return_when=FIRST_EXCEPTION)
        finally:
            if bar is not None:
                bar.close()
        failure = next((f.exception() for f in futures if f.done() and f.exception() is not None), None)
        if failure is not None:
            for future in not_done:
                future.cancel()
            wait(not_done)
            ok = [f for f in futures if f.done() and not f.cancelled() and f.exception() is None]
            failure.partial = [response for f in ok for response in f.result()[0]]  # type: ignore[attr-defined]
            raise failure
        return {_key(request): future.result() for request, future in zip(requests, futures, strict=True)}

    def _pieces(
        self,
        ep: Endpoint,
        plan: _CallPlan,
        fetched: Mapping[str, tuple[list[Response], list[str]]],
        *,
        stacklevel: int,
    ) -> tuple[list[_Piece], tuple[str, ...]]:
        """Which cached entry or fetched response gives which cells of a call; hits go to the ledger.

        Apps the service reported as not available are named in one warning.
        """
        wanted = set(plan.cells)
        pieces: list[_Piece] = []
        unavailable: set[str] = set()
        by_entry: dict[str, list[planning.Cell]] = {}
        for cell, entry in plan.cached.items():
            if entry.available:
                by_entry.setdefault(entry.id, []).append(cell)
            elif cell[0] is not None:
                unavailable.add(cell[0])
        for entry_id, cells in by_entry.items():
            entry = plan.cached[cells[0]]
            saved = entry.share(len(cells))
            pieces.append(
                _Piece(entry, plan.loaded.get(entry_id), frozenset(cells), len(cells) == len(entry.cells), saved)
            )
            self._record_hit(ep, entry, saved)
        for request in plan.requests:
            responses, isolated = fetched[_key(request)]
            unavailable.update(isolated)
            for response in responses:
                covered = set(planning.cells_of(ep, response.params))
                mine = covered & wanted
                entry = self.cache.entry(response.entry) if self.cache is not None and response.entry else None
                pieces.append(_Piece(entry, response, frozenset(mine), len(mine) == len(covered)))
        pieces.sort(key=lambda p: min((c[0] or "", c[1] or "", c[2] or date.min) for c in p.cells))
        if unavailable:
            warnings.warn(
                f"{len(unavailable)} app(s) not available in country {plan.params.get('country')!r} "
                f"for {ep.name}, left out: {', '.join(sorted(unavailable))}",
                AppsUnavailableWarning,
                stacklevel=stacklevel,
            )
        return pieces, tuple(sorted(unavailable))

    def _compose(
        self, ep: Endpoint, plan: _CallPlan, fetched: Mapping[str, tuple[list[Response], list[str]]]
    ) -> Answer:
        """Merge a call's cached and fetched parts into its answer."""
        pieces, unavailable = self._pieces(ep, plan, fetched, stacklevel=5)
        parts = [Part(p.response, p.cells, p.whole, p.saved) for p in pieces if p.response is not None]
        result = planning.merge_result(ep, [(p.response.result, p.cells, p.whole) for p in parts]) if parts else None
        if result is None and ep.entity == "apps":
            result = {}
        return Answer(ep.name, dict(plan.params), result, tuple(p.response for p in parts), unavailable, tuple(parts))

    def _start(self, ep: Endpoint, requests: list[dict[str, str]]) -> list[Future[tuple[list[Response], list[str]]]]:
        """Start the requests on the thread pool; a lone request runs in the caller's thread."""
        if len(requests) != 1:
            pool = self._executor()
            return [pool.submit(self._fetch_isolating, ep, params) for params in requests]
        future: Future[tuple[list[Response], list[str]]] = Future()
        try:
            future.set_result(self._fetch_isolating(ep, requests[0]))
        except Exception as exc:
            future.set_exception(exc)
        return [future]

    def _progress_bar(self, ep: Endpoint, futures: Sequence[Future[Any]]) -> tqdm[Any] | None:
        """A bar counting the requests of a call as they finish, with the credits spent so far."""
        if self.progress is False or len(futures) <= (0 if self.progress else self.PROGRESS_AFTER):
            return None
        bar = tqdm(total=len(futures), desc=ep.name, unit="request", dynamic_ncols=True)

        def advance(future: Future[Any]) -> None:
            bar.set_postfix_str(f"{self.spent} credits spent", refresh=False)
            bar.update(1)

        for future in futures:
            future.add_done_callback(advance)
        return bar

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.max_workers, thread_name_prefix="storeframes")
            return self._pool

    def _require_connection(self) -> None:
        if not self.base_url:
            raise ConfigurationError(
                f"no base URL: set ${ENV_BASE_URL} or pass base_url= "
                "(or use Client.sandbox() / storeframes.configure(sandbox=True))"
            )
        if not self._api_key:
            raise ConfigurationError(
                f"no API token: set ${ENV_API_KEY} or pass api_key= "
                "(or use Client.sandbox() / storeframes.configure(sandbox=True))"
            )

    def _keep(self, ep: Endpoint, response: Response, *, available: bool = True) -> Response:
        """Write an answer (or an app's unavailability) to the cache as soon as it is known.

        Returns the response naming its cache entry, so frames built from it can be kept too.
        """
        if self.cache is None:
            return response
        entry = self.cache.store(
            response,
            service=self._service,
            scope=planning.scope_of(ep, response.params),
            cells=planning.cells_of(ep, response.params),
            available=available,
            scrub=self._scrub,
        )
        return replace(response, entry=entry.id) if entry is not None else response

    def _fetch_isolating(self, ep: Endpoint, params: dict[str, str]) -> tuple[list[Response], list[str]]:
        """Send one request and keep its answer; when an app of it is not available, find which by halving."""
        try:
            response = self._send(ep, params)
        except AppNotAvailableError:
            apps = params["apps"].split(",") if ep.takes_apps else []
            if len(apps) <= 1:
                if apps:
                    gone = Response(ep.name, dict(params), None, 0, 0, 422, self._now())
                    self._keep(ep, gone, available=False)
                return [], apps
        else:
            return [self._keep(ep, response)], []
        mid = len(apps) // 2
        left = self._fetch_isolating(ep, {**params, "apps": ",".join(apps[:mid])})
        right = self._fetch_isolating(ep, {**params, "apps": ",".join(apps[mid:])})
        return left[0] + right[0], left[1] + right[1]

    def _wait(self, state: tenacity.RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        hint = getattr(exc, "retry_after", None)
        if hint:
            return min(float(hint), max(self.backoff[1], 60.0))
        first, most = self.backoff
        return tenacity.wait_random_exponential(multiplier=first, max=most)(state)

    def _send(self, ep: Endpoint, params: dict[str, str]) -> Response:
        """One request with retries, under the limiter and the budget."""
        estimate = ep.estimate(params)
        self._reserve(ep, estimate)
        charged = 0
        self._sending.rows = []
        try:
            retrying = tenacity.Retrying(
                stop=tenacity.stop_after_attempt(self.max_tries),
                wait=self._wait,
                retry=tenacity.retry_if_exception(_retryable),
                reraise=True,
                before_sleep=self._before_retry,
            )
            for attempt in retrying:
                with attempt:
                    response = self._send_once(ep, params, attempt.retry_state.attempt_number)
            charged = response.cost
            return response
        finally:
            self._settle(estimate, charged)
            rows, self._sending.rows = self._sending.rows, None
            self._notify(rows)

    def _before_retry(self, state: tenacity.RetryCallState) -> None:
        with self._lock:
            self.retries += 1
        exc = state.outcome.exception() if state.outcome else None
        log.info("retrying after %s (attempt %d)", exc, state.attempt_number)

    def _send_once(self, ep: Endpoint, params: dict[str, str], attempt: int) -> Response:
        url = f"{self.base_url}{ep.path}"
        headers = {
            TOKEN_HEADER: self._api_key.reveal(),
            "accept": "application/json",
            "user-agent": f"storeframes/{__version__}",
        }
        with self.limiter.slot():
            started = time.perf_counter()
            with self._lock:
                self.requests_sent += 1
            try:
                http_response = self._http.get(url, params=params, headers=headers)
                body_bytes = http_response.content
            except httpx.TimeoutException as exc:
                raise TransportError(f"timed out ({type(exc).__name__})", path=ep.path, attempts=attempt) from None
            except httpx.TransportError as exc:
                raise TransportError(
                    f"connection failed ({type(exc).__name__})", path=ep.path, attempts=attempt
                ) from None
            elapsed = time.perf_counter() - started
        return self._read(ep, params, http_response.status_code, http_response.headers, body_bytes, attempt, elapsed)

    def _scrub(self, text: str) -> str:
        key = self._api_key.reveal()
        return text.replace(key, "***") if key else text

    def _read(
        self,
        ep: Endpoint,
        params: dict[str, str],
        http_status: int,
        headers: httpx.Headers,
        body_bytes: bytes,
        attempt: int,
        elapsed: float,
    ) -> Response:
        try:
            body = json.loads(body_bytes) if body_bytes else None
        except ValueError:
            body = None
            if http_status == 200:
                self._record(ep, params, cost=0, max_cost=0, status=http_status, attempt=attempt, elapsed=elapsed)
                raise TransportError("incomplete body: not valid JSON", path=ep.path, attempts=attempt) from None
        request_meta = (
            body.get("metadata", {}).get("request")
            if isinstance(body, dict) and isinstance(body.get("metadata"), dict)
            else None
        )
        envelope_status = request_meta.get("status") if isinstance(request_meta, dict) else None
        status = http_status if http_status != 200 else (envelope_status if isinstance(envelope_status, int) else 200)
        cost = request_meta.get("cost", 0) if isinstance(request_meta, dict) else 0
        max_cost = request_meta.get("max_credit_cost", cost) if isinstance(request_meta, dict) else 0
        cost = cost if isinstance(cost, int) else 0
        max_cost = max_cost if isinstance(max_cost, int) else cost
        self._record(ep, params, cost=cost, max_cost=max_cost, status=status, attempt=attempt, elapsed=elapsed)
        log.debug("GET %s %s -> %s cost=%s (attempt %d)", ep.path, params, status, cost, attempt)

        if status != 200:
            code, message = _error_details(body)
            message = self._scrub(
                message or (body_bytes[:200].decode("utf-8", "replace") if body is None else f"status {status}")
            )
            cls = _error_class(status, code)
            kwargs: dict[str, Any] = {"code": code, "path": ep.path, "params": params, "attempts": attempt}
            if cls is RateLimitError:
                kwargs["retry_after"] = _retry_after(headers.get("retry-after"))
            if cls is AppNotAvailableError:
                kwargs["apps"] = params.get("apps", "").split(",")
            raise cls(status, message, **kwargs)
        return self._check_envelope(ep, params, body, cost, max_cost, attempt)

    def _check_envelope(
        self, ep: Endpoint, params: dict[str, str], body: Any, cost: int, max_cost: int, attempt: int
    ) -> Response:
        if not isinstance(body, dict):
            raise ResponseShapeError(f"expected a JSON object, got {type(body).__name__}", path="$", endpoint=ep.name)
        for member in ("result", "metadata"):
            if member not in body:
                raise ResponseShapeError(f"member '{member}' is missing", path=member, endpoint=ep.name)
        request_meta = body["metadata"].get("request") if isinstance(body["metadata"], dict) else None
        if not isinstance(request_meta, dict):
            raise ResponseShapeError("member 'request' is missing", path="metadata.request", endpoint=ep.name)
        for member in ("cost", "status"):
            if not isinstance(request_meta.get(member), int):
                raise ResponseShapeError(
                    f"expected an integer, got {request_meta.get(member)!r}",
                    path=f"metadata.request.{member}",
                    endpoint=ep.name,
                )
        echo = request_meta.get("params")
        return Response(
            endpoint=ep.name,
            params=dict(params),
            result=body["result"],
            cost=cost,
            max_credit_cost=max_cost,
            status=200,
            fetched_at=self._now(),
            echo=echo if isinstance(echo, dict) else {},
            attempts=attempt,
        )
