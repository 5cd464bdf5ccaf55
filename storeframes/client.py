"""The client: HTTPS, the token header, the rate limit, retries, batching and credits.

This is the only module that speaks HTTP (through httpx). Every request goes through
:meth:`Client._send`: validated canonical parameters in, a checked envelope out, its
credits in the ledger. Requests of one call run on a small thread pool under one
shared :class:`~storeframes.limiter.SlidingWindowLimiter`; there is no asyncio, so the
client works inside a notebook's running event loop.
"""

from __future__ import annotations

import email.utils
import ipaddress
import json
import logging
import os
import threading
import time
import warnings
from collections.abc import Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx
import polars as pl
import tenacity

from . import catalog
from ._version import __version__
from .catalog import CostModel, Endpoint
from .errors import (
    ApiError,
    AppNotAvailableError,
    AuthenticationError,
    BudgetExceededError,
    ConfigurationError,
    EstimatesNotInPlanError,
    ForbiddenError,
    NotEnoughCreditsError,
    RateLimitError,
    ResponseShapeError,
    ServerError,
    ServiceValidationError,
    TransportError,
)
from .limiter import SlidingWindowLimiter

__all__ = ["LEDGER_SCHEMA", "Answer", "AppsUnavailableWarning", "Client", "Response"]

log = logging.getLogger("storeframes")

ENV_API_KEY = "STOREFRAMES_API_KEY"
ENV_BASE_URL = "STOREFRAMES_BASE_URL"
TOKEN_HEADER = "x-service-key"

LEDGER_SCHEMA = pl.Schema(
    {
        "time": pl.Datetime("us", "UTC"),
        "endpoint": pl.String,
        "params": pl.String,
        "cost": pl.Int64,
        "max_credit_cost": pl.Int64,
        "status": pl.Int32,
        "attempt": pl.Int32,
        "elapsed_ms": pl.Float64,
    }
)


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


@dataclass(frozen=True)
class Response:
    """One successful request: its canonical parameters, the result and the credits."""

    endpoint: str
    params: Mapping[str, str]
    result: Any
    cost: int
    max_credit_cost: int
    status: int
    fetched_at: datetime
    echo: Mapping[str, Any] = field(default_factory=dict)  # metadata.request.params as the service echoed them
    attempts: int = 1


@dataclass(frozen=True)
class Answer:
    """The merged answer of one call, which may have taken several requests.

    ``result`` is the service's ``result`` member; for app endpoints the per-request
    results are merged by app id. ``unavailable`` lists the app ids the service reported
    as not available in the requested country (they are absent from ``result``).
    """

    endpoint: str
    params: Mapping[str, str]
    result: Any
    responses: tuple[Response, ...]
    unavailable: tuple[str, ...] = ()

    @property
    def cost(self) -> int:
        """Credits charged for this answer."""
        return sum(r.cost for r in self.responses)

    @property
    def max_credit_cost(self) -> int:
        return sum(r.max_credit_cost for r in self.responses)

    @property
    def fetched_at(self) -> datetime | None:
        return min((r.fetched_at for r in self.responses), default=None)


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


class Client:
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

    >>> client = Client.sandbox()
    >>> answer = client.get("metadata", apps="284882215")
    >>> answer.cost
    11
    """

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
    ):
        self._api_key = _Secret(api_key if api_key is not None else os.environ.get(ENV_API_KEY, ""))
        base_url = base_url if base_url is not None else os.environ.get(ENV_BASE_URL) or None
        self.base_url = _check_base_url(base_url) if base_url else None
        if budget is not None and (not isinstance(budget, int) or budget < 0):
            raise ConfigurationError(f"budget must be a whole number of credits >= 0, got {budget!r}")
        self.budget = budget
        try:
            limit, window = rate_limit
        except (TypeError, ValueError):
            raise ConfigurationError(f"rate_limit must be (requests, seconds), got {rate_limit!r}") from None
        self.limiter = SlidingWindowLimiter(limit, window)
        if max_tries < 1:
            raise ConfigurationError(f"max_tries must be >= 1, got {max_tries!r}")
        self.max_tries = max_tries
        self.backoff = backoff
        self.max_workers = max_workers or 8
        self._own_http = http_client is None
        self._http = http_client or httpx.Client(timeout=timeout, follow_redirects=False)
        costs = {**catalog.DEFAULT_COSTS, **(cost_model or {})}
        unknown = set(costs) - set(catalog.ENDPOINTS)
        if unknown:
            raise ConfigurationError(
                f"cost_model names unknown endpoints {sorted(unknown)}; known: {list(catalog.ENDPOINTS)}"
            )
        self.endpoints: dict[str, Endpoint] = {
            name: ep.with_cost(costs[name]) for name, ep in catalog.ENDPOINTS.items()
        }
        self._lock = threading.Lock()
        self._ledger_rows: list[dict[str, Any]] = []
        self._spent = 0
        self._reserved = 0
        self._pool: ThreadPoolExecutor | None = None
        self.requests_sent = 0
        self.retries = 0
        self.sandbox_service: Any = None  # the in-process sandbox, for Client.sandbox()

    # -- construction helpers -------------------------------------------------

    @classmethod
    def sandbox(
        cls, *, budget: int | None = None, rate_limit: tuple[int, float] = (60, 10.0), **options: Any
    ) -> Client:
        """A client wired to an in-process sandbox service (no network, no token needed).

        ``options`` go to :class:`storeframes.sandbox.SandboxService` (``seed``,
        ``today``, ``rate_limit``, ``latency``, ``faults`` ...). The client's
        ``max_tries``, ``backoff``, ``max_workers`` and ``cost_model`` may be given too.
        """
        from .sandbox import SANDBOX_BASE_URL, SANDBOX_KEY, SandboxService, SandboxTransport

        client_options = {
            k: options.pop(k) for k in ("max_tries", "backoff", "max_workers", "cost_model", "timeout") if k in options
        }
        options.setdefault("rate_limit", rate_limit)
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
        client._own_http = True
        client.sandbox_service = service
        return client

    def __repr__(self) -> str:
        key = "set" if self._api_key else "missing"
        budget = f", budget={self.budget}" if self.budget is not None else ""
        return (
            f"Client(base_url={self.base_url!r}, api_key={key}, spent={self.spent}{budget}, "
            f"rate_limit=({self.limiter.limit}, {self.limiter.window}))"
        )

    def close(self) -> None:
        """Close the thread pool and the HTTP connections this client opened."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        if self._own_http:
            self._http.close()

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
    def ledger(self) -> pl.DataFrame:
        """One row per answer received: time (UTC), endpoint, canonical params (JSON),
        cost, max_credit_cost, status, attempt and elapsed_ms."""
        with self._lock:
            rows = list(self._ledger_rows)
        return pl.DataFrame(rows, schema=LEDGER_SCHEMA, orient="row") if rows else LEDGER_SCHEMA.to_frame()

    def estimate(self, endpoint: str, **params: Any) -> int:
        """The estimated maximum credits of a call, without sending anything."""
        ep = self.endpoints[catalog.endpoint(endpoint).name]
        canonical = catalog.validate(ep, params)
        return sum(ep.estimate(p) for p in self._requests_of(ep, canonical))

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
    ) -> None:
        row = {
            "time": datetime.now(UTC),
            "endpoint": ep.name,
            "params": json.dumps(dict(params), sort_keys=True),
            "cost": cost,
            "max_credit_cost": max_cost,
            "status": status,
            "attempt": attempt,
            "elapsed_ms": elapsed * 1000.0,
        }
        with self._lock:
            self._ledger_rows.append(row)

    # -- public fetching -------------------------------------------------------

    def get(self, endpoint: str, **params: Any) -> Answer:
        """Fetch one call's answer: validate, split into requests, send, merge.

        ``params`` are the endpoint's parameters (see :mod:`storeframes.catalog`);
        ``apps`` may be a list or a comma-separated string of any length.

        >>> Client.sandbox().get("search", keyword="photo editor").result["value"][:3]  # doctest: +SKIP
        ['1439034882', '932747118', '389801252']
        """
        return self.get_many(endpoint, [params])[0]

    def get_many(self, endpoint: str, calls: Sequence[Mapping[str, Any]]) -> list[Answer]:
        """Fetch several calls of one endpoint concurrently, under the rate limit.

        Every call is validated, and the whole set checked against the budget, before
        any request is sent. If a request fails for good, the requests not yet started
        are cancelled and the error is raised with ``error.partial`` holding the
        :class:`Response` objects that did succeed.
        """
        ep = self.endpoints[catalog.endpoint(endpoint).name]
        canonical = [catalog.validate(ep, call) for call in calls]
        plans = [self._requests_of(ep, params) for params in canonical]
        with self._lock:
            self._check_budget(ep, sum(ep.estimate(p) for plan in plans for p in plan))
        self._require_connection()

        call_of = [index for index, plan in enumerate(plans) for _ in plan]
        futures = self._start(ep, [request for plan in plans for request in plan])
        _, not_done = wait(futures, return_when=FIRST_EXCEPTION)
        failure = next((f.exception() for f in futures if f.done() and f.exception() is not None), None)
        if failure is not None:
            for future in not_done:
                future.cancel()
            wait(not_done)
            ok = [f for f in futures if f.done() and not f.cancelled() and f.exception() is None]
            failure.partial = [response for f in ok for response in f.result()[0]]  # type: ignore[attr-defined]
            raise failure

        grouped: list[tuple[list[Response], list[str]]] = [([], []) for _ in canonical]
        for index, future in zip(call_of, futures, strict=True):
            responses, unavailable = future.result()
            grouped[index][0].extend(responses)
            grouped[index][1].extend(unavailable)
        return [
            self._merge(ep, params, responses, sorted(unavailable))
            for params, (responses, unavailable) in zip(canonical, grouped, strict=True)
        ]

    # -- internals -------------------------------------------------------------

    def _requests_of(self, ep: Endpoint, params: Mapping[str, str]) -> list[dict[str, str]]:
        if ep.max_apps and params.get("apps"):
            return catalog.split_apps(params, ep.max_apps)
        return [dict(params)]

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

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.max_workers, thread_name_prefix="storeframes")
            return self._pool

    def _require_connection(self) -> None:
        if not self.base_url:
            raise ConfigurationError(f"no base URL: set ${ENV_BASE_URL} or pass base_url= (or use Client.sandbox())")
        if not self._api_key:
            raise ConfigurationError(f"no API token: set ${ENV_API_KEY} or pass api_key= (or use Client.sandbox())")

    def _merge(
        self, ep: Endpoint, params: Mapping[str, str], responses: list[Response], unavailable: list[str]
    ) -> Answer:
        if unavailable:
            warnings.warn(
                f"{len(unavailable)} app(s) not available in country {params.get('country')!r} "
                f"for {ep.name}, left out: {', '.join(unavailable)}",
                AppsUnavailableWarning,
                stacklevel=4,
            )
        if ep.takes_apps:
            result: Any = {}
            for response in responses:
                if not isinstance(response.result, dict):
                    raise ResponseShapeError(
                        f"expected an object keyed by app id, got {type(response.result).__name__}",
                        path="result",
                        endpoint=ep.name,
                    )
                result.update(response.result)
        else:
            result = responses[0].result if responses else None
        return Answer(ep.name, dict(params), result, tuple(responses), tuple(unavailable))

    def _fetch_isolating(self, ep: Endpoint, params: dict[str, str]) -> tuple[list[Response], list[str]]:
        """Send one request; when an app of it is not available, find which by halving."""
        try:
            return [self._send(ep, params)], []
        except AppNotAvailableError:
            apps = params["apps"].split(",") if ep.takes_apps else []
            if len(apps) <= 1:
                return [], apps
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
            fetched_at=datetime.now(UTC),
            echo=echo if isinstance(echo, dict) else {},
            attempts=attempt,
        )
