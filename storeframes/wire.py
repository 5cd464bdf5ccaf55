"""The request path: one request from start to end, and the only module that speaks HTTP.

:meth:`Wire.send` takes an endpoint of the catalog and canonical parameters and returns a
checked :class:`~storeframes.Response`, or raises the error of the
:mod:`~storeframes.errors` hierarchy that says what went wrong. On the way it:

- adds the token in the ``x-service-key`` header through an ``httpx.Auth`` flow that
  masks it again (``***``) once the answer's headers arrived, so no frame of a traceback,
  no ``request.headers`` of a response and no chained exception shows it: the errors it
  raises carry no ``__context__`` (the httpx exception, whose frames hold the request as
  it was sent, is dropped);
- never follows a redirect, whatever the ``http_client`` says: a 3xx is a
  :class:`~storeframes.RedirectError` naming its target (user info and query masked);
- holds a slot of the rate limiter for the time of each attempt;
- streams the body, decoding gzip and deflate itself a piece at a time, and stops at the
  ``max_body_bytes`` cap (:class:`~storeframes.ResponseTooLargeError`, never retried) and
  at the per-attempt ``deadline`` (a :class:`~storeframes.TransportError`, retried);
- retries 429, 5xx, timeouts, the deadline, dropped connections, bodies cut short and
  bodies that cannot be decoded, with exponential backoff and full jitter, honouring
  ``Retry-After`` on 429 and 503 (``0`` is no hint; a hint longer than the client waits
  fails at once);
- maps statuses and the error codes of the service to exceptions;
- reads the JSON with non-finite numbers (``NaN``, ``Infinity``, ``1e999``) as null and
  lone surrogates (half an emoji) as U+FFFD, so every text can be written as UTF-8;
- checks the envelope (``result`` and ``metadata.request`` with a whole ``cost`` >= 0 and
  an integer ``status``).

Every attempt, failed ones included, is reported to the caller's hook as a
:class:`~storeframes.answers.Attempt` with the cost its answer carried (or
``cost_unknown`` when that cost could not be read); the request path never counts
credits itself.
"""

from __future__ import annotations

import email.utils
import functools
import ipaddress
import json
import logging
import math
import re
import sys
import threading
import time
import zlib
from collections.abc import Callable, Generator, Iterator, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeGuard
from urllib.parse import urlsplit, urlunsplit

from ._version import __version__
from .answers import Attempt, Response
from .bodies import parse_answer
from .catalog import Endpoint
from .coord.window import Limiter
from .errors import (
    ApiError,
    AppNotAvailableError,
    AuthenticationError,
    ConfigurationError,
    CostWarning,
    EstimatesNotInPlanError,
    ForbiddenError,
    InvalidParameterError,
    NotEnoughCreditsError,
    RateLimitError,
    RedirectError,
    ResponseShapeError,
    ResponseTooLargeError,
    ServerError,
    ServiceValidationError,
    TransportError,
    plural,
    warn,
)

if TYPE_CHECKING:  # imported when a client is first made: importing storeframes stays quick
    import httpx
    import tenacity

__all__ = [
    "DEFAULT_DEADLINE",
    "DEFAULT_MAX_BODY_BYTES",
    "TOKEN_HEADER",
    "Wire",
    "check_base_url",
    "clean_token",
    "parse_answer",
    "shown_url",
]

log = logging.getLogger("storeframes")

TOKEN_HEADER = "x-service-key"

DEFAULT_DEADLINE = 120.0
"""Seconds one attempt may take from sending to the last byte of the body (``deadline=``)."""

DEFAULT_MAX_BODY_BYTES = 256 * 1024 * 1024
"""The largest body accepted, in decoded bytes (``max_body_bytes=``): 256 MB, far above any answer."""

MASK = "***"

ENCODINGS = "gzip, deflate"
"""The ``Accept-Encoding`` sent: the codings the request path decodes itself, a piece at a time."""

_PIECE = 64 * 1024
"""The most bytes one step of decoding produces, so a compressed body never inflates past the cap."""

_MOST_CODINGS = 5
"""The most content codings one body may stack (``gzip, gzip, ...``), as urllib3 allows."""

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
        return text.replace(self._value, MASK) if self._value else text

    def __repr__(self) -> str:
        return "'***'"

    __str__ = __repr__

    def __bool__(self) -> bool:
        return bool(self._value)


@functools.cache
def _token_auth() -> Callable[[Secret], httpx.Auth]:
    """The auth flow class, made when first needed (with httpx)."""
    import httpx

    class _TokenAuth(httpx.Auth):
        """Sets the token header on a request as httpx sends it, and masks it once the request is done.

        httpx resumes the flow when the answer's headers arrived (or closes it when sending
        failed), so from then on the request that the response, the exception and httpx's own
        frames keep holds ``***``.
        """

        def __init__(self, secret: Secret):
            self._secret = secret

        def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
            request.headers[TOKEN_HEADER] = self._secret.reveal()
            try:
                yield request
            finally:
                request.headers[TOKEN_HEADER] = MASK

        def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
            yield from self.sync_auth_flow(request)

    return _TokenAuth


def clean_token(api_key: Any) -> str:
    """The token without the whitespace around it (as read from a file); refused if it cannot be sent.

    A token is sent in a header, which carries printable ASCII only: one with a control
    character (a newline, a tab, a NUL) or a non-ASCII character inside is a
    :class:`~storeframes.ConfigurationError` that says where, never what, it is.

    >>> clean_token("  sk-live-0123  \\n")
    'sk-live-0123'
    """
    if not isinstance(api_key, str):  # the value itself is never shown
        raise ConfigurationError(f"api_key must be the token as a text, got a {type(api_key).__name__}")
    token = api_key.strip()
    if token.isascii() and token.isprintable():
        return token
    position = next(i for i, c in enumerate(token) if not (c.isascii() and c.isprintable()))
    kind = "a control character" if token[position].isascii() else "a non-ASCII character"
    raise ConfigurationError(
        f"api_key holds {kind} at position {position + 1} of its {len(token)} (the token is not shown): "
        "a token is printable ASCII; check how it was copied or read"
    )


def shown_url(url: Any) -> str:
    """``url`` as it may be shown: user info and query masked, fragment left out.

    Every message, repr and line that shows a URL goes through here, so a password in a
    base URL (``https://user:pass@host/...``) or a signature in a query never is.

    >>> shown_url("https://user:secret@api.example.com/api/public/store?key=abc#top")
    'https://***@api.example.com/api/public/store?***'
    """
    text = str(url)
    try:
        parts = urlsplit(text)
    except ValueError:
        return "<a URL that cannot be read>"
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{MASK}@{netloc.rpartition('@')[2]}"
    shown = urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    return f"{shown}?{MASK}" if parts.query else shown


def _is_loopback(host: str) -> bool:
    """Whether ``host`` is ``localhost`` itself or a loopback address (never resolved: a name such
    as ``anything.localhost`` may point anywhere)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_base_url(base_url: str) -> str:
    """The base URL without a trailing slash; https only (plain http for ``localhost`` and loopback addresses)."""
    import httpx

    shown = shown_url(base_url)
    try:
        url = httpx.URL(base_url)
    except Exception as exc:  # httpx raises InvalidURL and friends
        reason = str(exc).replace(str(base_url), shown)
        raise ConfigurationError(f"base_url {shown!r} is not a URL: {shown_url(reason)}") from None
    if url.scheme == "http" and not _is_loopback(url.host):
        raise ConfigurationError(
            f"base_url {shown!r} uses plain http; the service requires https "
            "(plain http is allowed only for loopback hosts: localhost itself and loopback addresses such as "
            "127.0.0.1, as for the local sandbox)"
        )
    if url.scheme not in ("http", "https") or not url.host:
        raise ConfigurationError(f"base_url {shown!r} must be an https:// URL")
    return base_url.rstrip("/")


_DELAY = re.compile(r"^\s*\d+(\.\d+)?\s*$")


def _retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header; None when absent, unreadable, past or 0 (no hint).

    As urllib3 reads it: a number of seconds, or an HTTP date in any of its three forms
    (``Sun, 06 Nov 1994 08:49:37 GMT``, ``Sunday, 06-Nov-94 08:49:37 GMT`` and asctime's
    ``Sun Nov  6 08:49:37 1994``); a date without a zone is UTC.
    """
    if not value:
        return None
    if _DELAY.match(value):
        seconds = float(value)
    else:
        try:
            parsed = email.utils.parsedate_tz(value)
            if parsed is None:
                return None
            if parsed[9] is None:  # asctime names no zone: HTTP dates are UTC
                parsed = (*parsed[:9], 0)
            seconds = email.utils.mktime_tz(parsed) - time.time()
        except (TypeError, ValueError, OverflowError, IndexError):
            return None
    return seconds if 0 < seconds < math.inf else None


# -- reading a body -----------------------------------------------------------------------


class _Fault(Exception):
    """No complete answer within this attempt (the deadline, a body that cannot be decoded)."""


class _TooLarge(Exception):
    """The body of an answer of ``status`` passed the cap; ``announced`` is its Content-Length when that said so."""

    def __init__(self, status: int, announced: int | None = None):
        super().__init__(status, announced)
        self.status = status
        self.announced = announced


class _Inflate:
    """One gzip or deflate layer, producing at most :data:`_PIECE` bytes a step."""

    def __init__(self, coding: str):
        self.coding = coding
        self.members = 0
        self.raw = False  # deflate: zlib-wrapped first, raw when that fails (as httpx does)
        self._start()

    def _start(self) -> None:
        wbits = zlib.MAX_WBITS | 16 if self.coding == "gzip" else -zlib.MAX_WBITS if self.raw else zlib.MAX_WBITS
        self.inflater = zlib.decompressobj(wbits)
        self.fresh = True

    def feed(self, data: bytes) -> Iterator[bytes]:
        while True:
            try:
                out = self.inflater.decompress(data, _PIECE)
            except zlib.error:
                if self.coding == "deflate" and self.fresh and not self.raw:
                    self.raw = True
                    self._start()
                    continue
                if self.members:  # garbage after a whole gzip member: ignored, as urllib3 does
                    return
                raise
            self.fresh = False
            if out:
                yield out
            if self.inflater.eof:
                self.members += 1
                data = self.inflater.unused_data
                if not data or self.coding != "gzip":
                    return
                self._start()  # another gzip member follows
                continue
            data = self.inflater.unconsumed_tail
            if not data and len(out) < _PIECE:
                return

    def flush(self) -> Iterator[bytes]:
        yield from self.feed(b"")
        rest = self.inflater.flush()
        if rest:
            yield rest


def _layers(coding: str | None) -> list[_Inflate]:
    """The decoders of a ``Content-Encoding``, the last applied first."""
    names = [c.strip().lower() for c in (coding or "").split(",")]
    names = [c for c in names if c and c != "identity"]
    if len(names) > _MOST_CODINGS:
        raise _Fault(f"the body stacks {len(names)} content codings ({coding}); at most {_MOST_CODINGS} are read")
    for name in names:
        if name not in ("gzip", "x-gzip", "deflate"):
            raise _Fault(f"the body's Content-Encoding {name!r} was not asked for (only {ENCODINGS})")
    return [_Inflate("deflate" if name == "deflate" else "gzip") for name in reversed(names)]


def _through(layers: list[_Inflate], start: int, data: bytes) -> Iterator[bytes]:
    if start == len(layers):
        yield data
        return
    for piece in layers[start].feed(data):
        yield from _through(layers, start + 1, piece)


def _finish(layers: list[_Inflate]) -> Iterator[bytes]:
    for i, layer in enumerate(layers):
        for piece in layer.flush():
            yield from _through(layers, i + 1, piece)


_ERRORS_BY_CODE: Mapping[str, type[ApiError]] = {
    "UnknownTokenError": AuthenticationError,
    "NotEnoughCreditsError": NotEnoughCreditsError,
    "EstimatesNotInPlanError": EstimatesNotInPlanError,
    "AppNotAvailableError": AppNotAvailableError,
}


def _error_class(status: int, code: str | None) -> type[ApiError]:
    if code is not None and code in _ERRORS_BY_CODE:
        return _ERRORS_BY_CODE[code]
    if 300 <= status < 400:
        return RedirectError
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


def _whole(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _credits(value: Any) -> int | None:
    """A number of credits: a whole number >= 0 (``11.0`` is 11), else None."""
    if _whole(value):
        return value if value >= 0 else None
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    return None


_MISSING = object()


def _request_meta(body: Any) -> Mapping[str, Any] | None:
    meta = body.get("metadata") if isinstance(body, dict) else None
    request = meta.get("request") if isinstance(meta, dict) else None
    return request if isinstance(request, dict) else None


def _seconds(value: Any) -> bool:
    return _number(value) and 0 < value < math.inf


def _within(timeout: httpx.Timeout, deadline: float) -> httpx.Timeout:
    """``timeout`` with no part longer than ``deadline``: a read that gets nothing ends by then."""
    import httpx

    def bound(seconds: float | None) -> float:
        return deadline if seconds is None else min(seconds, deadline)

    return httpx.Timeout(
        connect=bound(timeout.connect), read=bound(timeout.read), write=bound(timeout.write), pool=bound(timeout.pool)
    )


def _what_failed(exc: httpx.HTTPError) -> str:
    import httpx

    name = type(exc).__name__
    if isinstance(exc, httpx.TimeoutException):
        return f"timed out ({name})"
    if isinstance(exc, httpx.DecodingError):
        return f"the body could not be decoded ({name})"
    return f"connection failed ({name})"


class Wire:
    """Sends one request at a time (from any number of threads) to the service.

    Args:
        api_key: the token (a text; whitespace around it is dropped, see :func:`clean_token`;
            held in a :class:`Secret`).
        base_url: the service's base address, or None (then :meth:`send` refuses).
        limiter: the rate limiter every attempt takes a slot of.
        http_client: an ``httpx.Client`` to send with; one with ``timeout`` is made when None.
            Its redirects are never followed (see :class:`~storeframes.RedirectError`).
        timeout: seconds for each network operation (connect, each read ...), when no
            ``http_client`` is given.
        max_tries: attempts per request for 429, 5xx, timeouts and dropped connections.
        backoff: ``(first, most)`` seconds of the exponential backoff with full jitter.
            A ``Retry-After`` of up to ``max(most, 60)`` seconds is waited for; a longer one
            fails at once (:attr:`longest_wait`).
        deadline: seconds one attempt may take in all, from sending to the body's last
            byte (:data:`DEFAULT_DEADLINE`; None for none). It is checked as the body
            arrives, and no single network operation waits longer than it either (the
            ``timeout`` parts are cut to it), so a server that trickles or stalls is left
            within about the deadline (at worst twice it, when a stall starts just
            before). Passing it is a :class:`~storeframes.TransportError`, retried.
        max_body_bytes: the largest body accepted, in decoded bytes, counted as they
            arrive (:data:`DEFAULT_MAX_BODY_BYTES`); a larger one is a
            :class:`~storeframes.ResponseTooLargeError`, not retried.
        clock: returns the current UTC datetime (a response's ``fetched_at``).
        connections: connections kept open between requests when no ``http_client`` is
            given (at least httpx's 20): as many as the threads sending, so each window
            reuses them instead of opening (and, on https, shaking hands) again.
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
        deadline: float | None = DEFAULT_DEADLINE,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        clock: Callable[[], datetime],
        connections: int = 20,
    ):
        self._secret = Secret(clean_token(api_key))
        self._auth = _token_auth()(self._secret)
        self.base_url = check_base_url(base_url) if base_url else None
        if not _whole(max_tries) or max_tries < 1:
            raise ConfigurationError(f"max_tries must be a whole number >= 1, got {max_tries!r}")
        if (
            not isinstance(backoff, (tuple, list))
            or len(backoff) != 2
            or not all(_number(b) and b >= 0 for b in backoff)
        ):
            raise ConfigurationError(f"backoff must be (first, most), two numbers of seconds >= 0, got {backoff!r}")
        import httpx

        seconds = timeout is None or isinstance(timeout, httpx.Timeout) or (_number(timeout) and timeout > 0)
        if http_client is None and not seconds:
            raise ConfigurationError(f"timeout must be seconds > 0 (or None for no limit), got {timeout!r}")
        if deadline is not None and not _seconds(deadline):
            raise ConfigurationError(
                f"deadline must be seconds > 0 for one attempt in all (or None for none), got {deadline!r}"
            )
        if not _whole(max_body_bytes) or max_body_bytes < 1:
            raise ConfigurationError(
                f"max_body_bytes must be a whole number of bytes >= 1 (default {DEFAULT_MAX_BODY_BYTES:,}), "
                f"got {max_body_bytes!r}"
            )
        self.limiter = limiter
        self.max_tries = max_tries
        self.backoff = (float(backoff[0]), float(backoff[1]))
        self.longest_wait = max(self.backoff[1], 60.0)
        """The longest ``Retry-After`` waited for; a longer one fails at once."""
        self.deadline = None if deadline is None else float(deadline)
        self.max_body_bytes = max_body_bytes
        self.owns_http = http_client is None
        kept = max(20, connections)
        self.http = http_client or httpx.Client(
            timeout=timeout,
            follow_redirects=False,
            limits=httpx.Limits(max_connections=max(100, kept), max_keepalive_connections=kept),
        )
        self._timeout: Any = httpx.USE_CLIENT_DEFAULT  # the client's own, unless the deadline is shorter
        if self.deadline is not None and _within(self.http.timeout, self.deadline) != self.http.timeout:
            self._timeout = _within(self.http.timeout, self.deadline)
        self._headers = {
            "accept": "application/json",
            "accept-encoding": ENCODINGS,
            "user-agent": f"storeframes/{__version__}",
        }
        self._clock = clock
        self._lock = threading.Lock()
        self.closed = False
        self.requests_sent = 0
        self.retries = 0

    @property
    def has_token(self) -> bool:
        return bool(self._secret)

    def scrub(self, text: str) -> str:
        """``text`` with the token masked: for anything that is written down."""
        return self._secret.scrub(text)

    def close(self) -> None:
        """Close the HTTP connections, if this wire opened them; nothing is sent afterwards."""
        self.closed = True
        if self.owns_http:
            self.http.close()

    def check_ready(self) -> None:
        """Raise :class:`~storeframes.ConfigurationError` unless open, with a base URL and a token."""
        if self.closed:
            raise ConfigurationError(
                "this client is closed: build a new Client to send requests (its cache still serves offline)"
            )
        if self.http.is_closed:
            raise ConfigurationError("the http_client is closed: give the Client an open httpx.Client")
        hint = "(or use storeframes.sandbox.client() / storeframes.configure(sandbox=True))"
        if not self.base_url:
            raise ConfigurationError(f"no base URL: set $STOREFRAMES_BASE_URL or pass base_url= {hint}")
        if not self._secret:
            raise ConfigurationError(f"no API token: set $STOREFRAMES_API_KEY or pass api_key= {hint}")

    # -- one request ---------------------------------------------------------------

    def send(self, ep: Endpoint, params: Mapping[str, str], *, report: Report) -> Response:
        """Send one request with retries; every attempt goes to ``report``."""
        import tenacity

        self.check_ready()
        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(self.max_tries),
            wait=self._wait,
            retry=tenacity.retry_if_exception(self._retryable),
            reraise=True,
            before_sleep=self._before_retry,
        )
        for attempt in retrying:
            with attempt:
                response = self._attempt(ep, dict(params), attempt.retry_state.attempt_number, report)
        return response

    def _retryable(self, exc: BaseException) -> bool:
        if isinstance(exc, (RateLimitError, ServerError)):
            return exc.retry_after is None or exc.retry_after <= self.longest_wait
        return isinstance(exc, TransportError)

    def _wait(self, state: tenacity.RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        hint = getattr(exc, "retry_after", None)
        if hint:
            return min(float(hint), self.longest_wait)
        import tenacity

        first, most = self.backoff
        return float(tenacity.wait_random_exponential(multiplier=first, max=most)(state))

    def _before_retry(self, state: tenacity.RetryCallState) -> None:
        with self._lock:
            self.retries += 1
        exc = state.outcome.exception() if state.outcome else None
        log.info("retrying after %s (attempt %d)", exc, state.attempt_number)

    def _attempt(self, ep: Endpoint, params: dict[str, str], attempt: int, report: Report) -> Response:
        """One attempt. Errors are raised outside any ``except`` block, so none carries the httpx
        exception (whose frames hold the request as it was sent) as its ``__context__``."""
        import httpx

        url = f"{self.base_url}{ep.path}"
        fault: str | None = None  # no complete answer: retried
        unsendable: str | None = None  # httpx cannot build the URL
        closed = False
        too_large: _TooLarge | None = None
        status, headers, body_bytes = 0, httpx.Headers(), b""
        with self.limiter.slot():
            started = time.perf_counter()
            with self._lock:
                self.requests_sent += 1
            try:
                status, headers, body_bytes = self._exchange(url, params, started)
            except httpx.HTTPError as exc:
                fault = _what_failed(exc)
            except _Fault as exc:
                fault = str(exc)
            except _TooLarge as exc:
                too_large = exc
            except httpx.InvalidURL as exc:
                unsendable = str(exc)[:200]
            except RuntimeError:  # httpx: "the client has been closed", by another thread meanwhile
                if not self.http.is_closed:
                    raise
                closed = True
            elapsed = time.perf_counter() - started
        if closed:
            self.check_ready()  # raises: says which was closed
        if unsendable is not None:
            raise InvalidParameterError(
                "params", params, f"parameters httpx can send in a URL ({unsendable})", endpoint=ep.name
            )
        if fault is not None:
            report(Attempt(ep.name, params, None, 0, 0, attempt, elapsed, fault))
            raise TransportError(fault, path=ep.path, attempts=attempt)
        if too_large is not None:
            status = too_large.status
            answered = status == 200  # an answer was sent, and maybe charged: its cost is unknown
            report(Attempt(ep.name, params, status, 0, 0, attempt, elapsed, "too large", cost_unknown=answered))
            raise ResponseTooLargeError(limit=self.max_body_bytes, path=ep.path, announced=too_large.announced)
        return self._read(ep, params, url, status, headers, body_bytes, attempt, elapsed, report)

    def _exchange(self, url: str, params: dict[str, str], started: float) -> tuple[int, httpx.Headers, bytes]:
        """Send the request and read its body: (status, headers, body), never following a redirect."""
        http = self.http
        request = http.build_request("GET", url, params=params, headers=self._headers, timeout=self._timeout)
        response = http.send(request, auth=self._auth, follow_redirects=False, stream=True)
        try:
            if 300 <= response.status_code < 400:  # never read, never followed
                return response.status_code, response.headers, b""
            return response.status_code, response.headers, self._body(response, started)
        finally:
            response.close()

    def _body(self, response: httpx.Response, started: float) -> bytes:
        """The decoded body, read as it arrives, within the cap and the deadline."""
        cap, status = self.max_body_bytes, response.status_code
        if response.is_stream_consumed:  # a transport that read it already (a mock, a replay)
            if len(response.content) > cap:
                raise _TooLarge(status)
            return response.content
        length = response.headers.get("content-length", "")
        if length.isdigit() and int(length) > cap:
            raise _TooLarge(status, int(length))
        coding = response.headers.get("content-encoding")
        layers = _layers(coding) if coding else []
        deadline = None if self.deadline is None else started + self.deadline
        parts: list[bytes] = []
        raw_size = size = 0
        try:
            for raw in response.iter_raw():
                raw_size += len(raw)
                if raw_size > cap:
                    raise _TooLarge(status)
                for piece in _through(layers, 0, raw) if layers else (raw,):
                    size += len(piece)
                    if size > cap:
                        raise _TooLarge(status)
                    parts.append(piece)
                if deadline is not None and time.perf_counter() > deadline:
                    raise _Fault(
                        f"no complete answer within the deadline of {self.deadline:g} s "
                        f"(deadline={self.deadline:g}; a client built with a larger deadline= waits longer)"
                    )
            for piece in _finish(layers):
                size += len(piece)
                if size > cap:
                    raise _TooLarge(status)
                parts.append(piece)
        except zlib.error as exc:
            raise _Fault(f"the body could not be decoded (Content-Encoding {coding}: {exc})") from None
        return b"".join(parts) if len(parts) != 1 else parts[0]

    def _read(
        self,
        ep: Endpoint,
        params: dict[str, str],
        url: str,
        http_status: int,
        headers: httpx.Headers,
        body_bytes: bytes,
        attempt: int,
        elapsed: float,
        report: Report,
    ) -> Response:
        body: Any = None
        unreadable: str | None = None
        if body_bytes:
            try:
                body = parse_answer(body_bytes)
            except json.JSONDecodeError:
                if http_status == 200:
                    unreadable = "incomplete"
            except RecursionError:
                unreadable = f"the body is nested deeper than Python reads (about {sys.getrecursionlimit():,} levels)"
            except ValueError as exc:
                unreadable = f"a number in the body cannot be read ({str(exc)[:120]})"
        if unreadable == "incomplete":
            report(Attempt(ep.name, params, http_status, 0, 0, attempt, elapsed, "incomplete body"))
            raise TransportError("incomplete body: not valid JSON", path=ep.path, attempts=attempt)
        if unreadable is not None and http_status == 200:  # answered, maybe charged, and its cost unreadable
            report(Attempt(ep.name, params, http_status, 0, 0, attempt, elapsed, "unreadable", cost_unknown=True))
            raise ResponseShapeError(unreadable, path="$", endpoint=ep.name)
        meta = _request_meta(body)
        envelope_status = meta.get("status") if meta is not None else None
        status: int = http_status
        if http_status == 200 and _whole(envelope_status):
            status = envelope_status
        given = meta.get("cost", _MISSING) if meta is not None else _MISSING
        cost = _credits(given)
        # an answer must say what it cost; an error may say nothing (it is free), but not nonsense
        cost_unknown = cost is None and (status == 200 or given is not _MISSING)
        max_given = meta.get("max_credit_cost") if meta is not None else None
        max_cost = _credits(max_given)
        report(
            Attempt(
                ep.name,
                params,
                status,
                cost or 0,
                max_cost if max_cost is not None else cost or 0,
                attempt,
                elapsed,
                None if status == 200 and not cost_unknown else "error",
                cost_unknown=cost_unknown,
            )
        )
        log.debug("GET %s %s -> %s cost=%s (attempt %d)", ep.path, params, status, cost, attempt)
        if cost_unknown and (status != 200 or meta is not None):
            shown = "nothing" if given is _MISSING else repr(given)[:80]
            raise ResponseShapeError(
                f"expected the credits charged, a whole number >= 0, got {shown} "
                "(the request's estimated cost is counted as spent)",
                path="metadata.request.cost",
                endpoint=ep.name,
            )
        if status != 200:
            raise self._error(ep, params, url, status, body, body_bytes, headers, attempt)
        response = self._envelope(ep, params, body, cost or 0, max_cost, attempt, body_bytes)
        if max_cost is not None and response.cost > max_cost:
            warn(
                f"{ep.name} was charged {plural(response.cost, 'credit')}, above the answer's own max_credit_cost "
                f"{max_cost:,}; the {plural(response.cost, 'credit')} reported are counted",
                CostWarning,
            )
        return response

    def _error(
        self,
        ep: Endpoint,
        params: dict[str, str],
        url: str,
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
        if cls is RedirectError:
            import httpx

            location = headers.get("location")
            try:
                target = shown_url(httpx.URL(url).join(location)) if location else None
            except Exception:  # an unreadable Location
                target = shown_url(location)
            kwargs["location"] = target
            text = (
                f"the service answered with a redirect to {target or 'nowhere'}, which is not followed "
                "(the token is never sent anywhere else): check base_url"
            )
        if cls in (RateLimitError, ServerError):
            retry_after = _retry_after(headers.get("retry-after"))
            kwargs["retry_after"] = retry_after
            if retry_after is not None and retry_after > self.longest_wait:
                text += (
                    f"; Retry-After asks to wait {retry_after:g} s, longer than this client waits "
                    f"({self.longest_wait:g} s), so it fails now"
                )
        if cls is AppNotAvailableError:
            kwargs["apps"] = params.get("apps", "").split(",")
        return cls(status, self.scrub(text), **kwargs)

    def _envelope(
        self,
        ep: Endpoint,
        params: dict[str, str],
        body: Any,
        cost: int,
        max_cost: int | None,
        attempt: int,
        body_bytes: bytes,
    ) -> Response:
        if not isinstance(body, dict):
            raise ResponseShapeError(f"expected a JSON object, got {type(body).__name__}", path="$", endpoint=ep.name)
        for member in ("result", "metadata"):
            if member not in body:
                raise ResponseShapeError(f"member '{member}' is missing", path=member, endpoint=ep.name)
        meta = _request_meta(body)
        if meta is None:
            raise ResponseShapeError("member 'request' is missing", path="metadata.request", endpoint=ep.name)
        if not _whole(meta.get("status")):
            raise ResponseShapeError(
                f"expected an integer, got {meta.get('status')!r}", path="metadata.request.status", endpoint=ep.name
            )
        echo = meta.get("params")
        return Response(
            endpoint=ep.name,
            params=params,
            result=body["result"],
            cost=cost,
            max_credit_cost=max_cost if max_cost is not None else cost,
            status=200,
            fetched_at=self._clock(),
            echo=echo if isinstance(echo, dict) else {},
            attempts=attempt,
            body=body_bytes,
        )
