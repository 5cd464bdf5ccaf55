"""The request path: one request from start to end, and the only module that speaks HTTP.

:meth:`Wire.send` takes an endpoint of the catalog and canonical parameters and returns a
checked :class:`~storeframes.Response`, or raises the error of the
:mod:`~storeframes.errors` hierarchy that says what went wrong. On the way it:

- adds the token in the ``x-service-key`` header through an ``httpx.Auth`` flow, so the
  token is never a local variable or a header dict of any frame of a traceback;
- holds a slot of the rate limiter for the time of each attempt;
- retries 429, 5xx, timeouts, dropped connections and bodies cut short, with
  exponential backoff and full jitter, honouring ``Retry-After`` (``0`` is no hint);
- maps statuses and the error codes of the service to exceptions;
- checks the envelope (``result`` and ``metadata.request`` with integer ``cost`` and
  ``status``).

Every attempt, failed ones included, is reported to the caller's hook as a
:class:`~storeframes.answers.Attempt` with the cost its answer carried; the request path
never counts credits itself.
"""

from __future__ import annotations

import email.utils
import ipaddress
import json
import logging
import threading
import time
from collections.abc import Callable, Generator, Mapping
from datetime import UTC, datetime
from typing import Any

import httpx
import tenacity

from ._version import __version__
from .answers import Attempt, Response
from .catalog import Endpoint
from .errors import (
    ApiError,
    AppNotAvailableError,
    AuthenticationError,
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
from .window import Limiter

__all__ = ["TOKEN_HEADER", "Wire", "check_base_url"]

log = logging.getLogger("storeframes")

TOKEN_HEADER = "x-service-key"

Report = Callable[[Attempt], None]


class Secret:
    """Holds the token so that no repr, vars() dump or traceback local shows it."""

    __slots__ = ("_value",)

    def __init__(self, value: str):
        self._value = value

    def reveal(self) -> str:
        return self._value

    def scrub(self, text: str) -> str:
        """``text`` with every occurrence of the token replaced by ``***``."""
        return text.replace(self._value, "***") if self._value else text

    def __repr__(self) -> str:
        return "'***'"

    __str__ = __repr__

    def __bool__(self) -> bool:
        return bool(self._value)


class _TokenAuth(httpx.Auth):
    """Sets the token header on each request as httpx sends it."""

    def __init__(self, secret: Secret):
        self._secret = secret

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers[TOKEN_HEADER] = self._secret.reveal()
        yield request


def _is_loopback(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_base_url(base_url: str) -> str:
    """The base URL without a trailing slash; https only (plain http for loopback hosts)."""
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
    if code is not None and code in _ERRORS_BY_CODE:
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


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _request_meta(body: Any) -> Mapping[str, Any] | None:
    meta = body.get("metadata") if isinstance(body, dict) else None
    request = meta.get("request") if isinstance(meta, dict) else None
    return request if isinstance(request, dict) else None


class Wire:
    """Sends one request at a time (from any number of threads) to the service.

    Args:
        api_key: the token (a text; held in a :class:`Secret`).
        base_url: the service's base address, or None (then :meth:`send` refuses).
        limiter: the rate limiter every attempt takes a slot of.
        http_client: an ``httpx.Client`` to send with; one with ``timeout`` is made when None.
        max_tries: attempts per request for 429, 5xx, timeouts and dropped connections.
        backoff: ``(first, most)`` seconds of the exponential backoff with full jitter.
        clock: returns the current UTC datetime (a response's ``fetched_at``).
    """

    def __init__(
        self,
        api_key: str,
        base_url: str | None,
        *,
        limiter: Limiter,
        http_client: httpx.Client | None = None,
        timeout: float | httpx.Timeout | None = 30.0,
        max_tries: int = 5,
        backoff: tuple[float, float] = (0.5, 30.0),
        clock: Callable[[], datetime],
    ):
        if not isinstance(api_key, str):  # the value itself is never shown
            raise ConfigurationError(f"api_key must be the token as a text, got a {type(api_key).__name__}")
        self._secret = Secret(api_key)
        self._auth = _TokenAuth(self._secret)
        self.base_url = check_base_url(base_url) if base_url else None
        if not _whole(max_tries) or max_tries < 1:
            raise ConfigurationError(f"max_tries must be a whole number >= 1, got {max_tries!r}")
        if (
            not isinstance(backoff, (tuple, list))
            or len(backoff) != 2
            or not all(_number(b) and b >= 0 for b in backoff)
        ):
            raise ConfigurationError(f"backoff must be (first, most), two numbers of seconds >= 0, got {backoff!r}")
        seconds = timeout is None or isinstance(timeout, httpx.Timeout) or (_number(timeout) and timeout > 0)
        if http_client is None and not seconds:
            raise ConfigurationError(f"timeout must be seconds > 0 (or None for no limit), got {timeout!r}")
        self.limiter = limiter
        self.max_tries = max_tries
        self.backoff = (float(backoff[0]), float(backoff[1]))
        self.owns_http = http_client is None
        self.http = http_client or httpx.Client(timeout=timeout, follow_redirects=False)
        self._clock = clock
        self._lock = threading.Lock()
        self.requests_sent = 0
        self.retries = 0

    @property
    def has_token(self) -> bool:
        return bool(self._secret)

    def scrub(self, text: str) -> str:
        """``text`` with the token masked: for anything that is written down."""
        return self._secret.scrub(text)

    def close(self) -> None:
        """Close the HTTP connections, if this wire opened them."""
        if self.owns_http:
            self.http.close()

    def check_ready(self) -> None:
        """Raise :class:`~storeframes.ConfigurationError` unless a base URL and a token are set."""
        hint = "(or use storeframes.sandbox.client() / storeframes.configure(sandbox=True))"
        if not self.base_url:
            raise ConfigurationError(f"no base URL: set $STOREFRAMES_BASE_URL or pass base_url= {hint}")
        if not self._secret:
            raise ConfigurationError(f"no API token: set $STOREFRAMES_API_KEY or pass api_key= {hint}")

    # -- one request ---------------------------------------------------------------

    def send(self, ep: Endpoint, params: Mapping[str, str], *, report: Report) -> Response:
        """Send one request with retries; every attempt goes to ``report``."""
        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(self.max_tries),
            wait=self._wait,
            retry=tenacity.retry_if_exception(_retryable),
            reraise=True,
            before_sleep=self._before_retry,
        )
        for attempt in retrying:
            with attempt:
                response = self._attempt(ep, dict(params), attempt.retry_state.attempt_number, report)
        return response

    def _wait(self, state: tenacity.RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        hint = getattr(exc, "retry_after", None)
        if hint:
            return min(float(hint), max(self.backoff[1], 60.0))
        first, most = self.backoff
        return float(tenacity.wait_random_exponential(multiplier=first, max=most)(state))

    def _before_retry(self, state: tenacity.RetryCallState) -> None:
        with self._lock:
            self.retries += 1
        exc = state.outcome.exception() if state.outcome else None
        log.info("retrying after %s (attempt %d)", exc, state.attempt_number)

    def _attempt(self, ep: Endpoint, params: dict[str, str], attempt: int, report: Report) -> Response:
        url = f"{self.base_url}{ep.path}"
        headers = {"accept": "application/json", "user-agent": f"storeframes/{__version__}"}
        with self.limiter.slot():
            started = time.perf_counter()
            with self._lock:
                self.requests_sent += 1
            try:
                http_response = self.http.get(url, params=params, headers=headers, auth=self._auth)
                body_bytes = http_response.content
            except httpx.TransportError as exc:
                what = "timed out" if isinstance(exc, httpx.TimeoutException) else "connection failed"
                error = TransportError(f"{what} ({type(exc).__name__})", path=ep.path, attempts=attempt)
                report(Attempt(ep.name, params, None, 0, 0, attempt, time.perf_counter() - started, str(error)))
                raise error from None
            elapsed = time.perf_counter() - started
        return self._read(ep, params, http_response, body_bytes, attempt, elapsed, report)

    def _read(
        self,
        ep: Endpoint,
        params: dict[str, str],
        http_response: httpx.Response,
        body_bytes: bytes,
        attempt: int,
        elapsed: float,
        report: Report,
    ) -> Response:
        http_status = http_response.status_code
        try:
            body = json.loads(body_bytes) if body_bytes else None
        except ValueError:
            body = None
            if http_status == 200:
                report(Attempt(ep.name, params, http_status, 0, 0, attempt, elapsed, "incomplete body"))
                raise TransportError("incomplete body: not valid JSON", path=ep.path, attempts=attempt) from None
        meta = _request_meta(body)
        envelope_status = meta.get("status") if meta is not None else None
        status: int = http_status
        if http_status == 200 and isinstance(envelope_status, int) and not isinstance(envelope_status, bool):
            status = envelope_status
        cost = meta.get("cost", 0) if meta is not None else 0
        cost = cost if _whole(cost) else 0
        max_cost = meta.get("max_credit_cost", cost) if meta is not None else 0
        max_cost = max_cost if _whole(max_cost) else cost
        report(Attempt(ep.name, params, status, cost, max_cost, attempt, elapsed, None if status == 200 else "error"))
        log.debug("GET %s %s -> %s cost=%s (attempt %d)", ep.path, params, status, cost, attempt)
        if status != 200:
            raise self._error(ep, params, status, body, body_bytes, http_response.headers, attempt)
        return self._envelope(ep, params, body, cost, max_cost, attempt)

    def _error(
        self,
        ep: Endpoint,
        params: dict[str, str],
        status: int,
        body: Any,
        body_bytes: bytes,
        headers: httpx.Headers,
        attempt: int,
    ) -> ApiError:
        code, message = _error_details(body)
        text = message or (body_bytes[:200].decode("utf-8", "replace") if body is None else f"status {status}")
        cls = _error_class(status, code)
        kwargs: dict[str, Any] = {"code": code, "path": ep.path, "params": params, "attempts": attempt}
        if cls is RateLimitError:
            kwargs["retry_after"] = _retry_after(headers.get("retry-after"))
        if cls is AppNotAvailableError:
            kwargs["apps"] = params.get("apps", "").split(",")
        return cls(status, self.scrub(text), **kwargs)

    def _envelope(
        self, ep: Endpoint, params: dict[str, str], body: Any, cost: int, max_cost: int, attempt: int
    ) -> Response:
        if not isinstance(body, dict):
            raise ResponseShapeError(f"expected a JSON object, got {type(body).__name__}", path="$", endpoint=ep.name)
        for member in ("result", "metadata"):
            if member not in body:
                raise ResponseShapeError(f"member '{member}' is missing", path=member, endpoint=ep.name)
        meta = _request_meta(body)
        if meta is None:
            raise ResponseShapeError("member 'request' is missing", path="metadata.request", endpoint=ep.name)
        for member in ("cost", "status"):
            if not _whole(meta.get(member)):
                raise ResponseShapeError(
                    f"expected an integer, got {meta.get(member)!r}",
                    path=f"metadata.request.{member}",
                    endpoint=ep.name,
                )
        echo = meta.get("params")
        return Response(
            endpoint=ep.name,
            params=params,
            result=body["result"],
            cost=cost,
            max_credit_cost=max_cost,
            status=200,
            fetched_at=self._clock(),
            echo=echo if isinstance(echo, dict) else {},
            attempts=attempt,
        )
