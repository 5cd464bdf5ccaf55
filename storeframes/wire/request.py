"""One request from start to end: :class:`Wire`, the only module of the package that sends HTTP.

:meth:`Wire.send` takes an endpoint of the catalog and canonical parameters and returns a
checked :class:`~storeframes.Response`, or raises the error of the
:mod:`~storeframes.errors` hierarchy that says what went wrong (see :mod:`storeframes.wire`
for all it does on the way). The token's rules live in :mod:`~storeframes.wire.safety`, the
body's decoding in :mod:`~storeframes.wire.body` and the reading of an answer's envelope
and errors in :mod:`~storeframes.wire.envelope`; this module puts them together around
the HTTP library (through :mod:`~storeframes.wire.http`) and tenacity.
"""

from __future__ import annotations

import logging
import math
import threading
import time
import zlib
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .._version import __version__
from ..answers import Attempt, Response
from ..catalog import Endpoint
from ..coord.window import Limiter
from ..errors import (
    ApiError,
    AppNotAvailableError,
    ConfigurationError,
    CostWarning,
    InvalidParameterError,
    RateLimitError,
    RedirectError,
    ResponseShapeError,
    ResponseTooLargeError,
    ServerError,
    TransportError,
    plural,
    warn,
)
from ..flatteners.columnar import HistoryColumns
from ..json_bodies import DEFAULT_MAX_BODY_BYTES, parse_answer
from ..ledger import MOST_CREDITS
from .body import ENCODINGS, _Fault, _finish, _layers, _through, _TooLarge
from .envelope import (
    _MISSING,
    _credits,
    _error_class,
    _error_details,
    _number,
    _read_body,
    _request_meta,
    _retry_after,
    _whole,
)
from .faults import unanswered
from .safety import Secret, _token_auth, check_base_url, clean_token, guard_logs, shown_url, without_user_info

if TYPE_CHECKING:  # imported when a client is first made: importing storeframes stays quick
    from types import ModuleType

    import tenacity

    from .http import Headers, HttpClient, HTTPError, Request, Timeout
    from .http import Response as HttpResponse

__all__ = ["DEFAULT_DEADLINE", "DEFAULT_MAX_BODY_BYTES", "Report", "Wire", "keep_alive"]

log = logging.getLogger("storeframes")

DEFAULT_DEADLINE = 120.0
"""Seconds one attempt may take from sending to the last byte of the body (``deadline=``)."""


Report = Callable[[Attempt], None]

_MAY_HAVE_COST = "the answer may have been charged, so the request's estimate is counted as spent"


def _seconds(value: Any) -> bool:
    return _number(value) and 0 < value < math.inf


def _within(timeout: Timeout, deadline: float, lib: ModuleType) -> Timeout:
    """``timeout`` with no part longer than ``deadline``: a read that gets nothing ends by then."""

    def bound(seconds: float | None) -> float:
        return deadline if seconds is None else min(seconds, deadline)

    return lib.Timeout(
        connect=bound(timeout.connect), read=bound(timeout.read), write=bound(timeout.write), pool=bound(timeout.pool)
    )


def keep_alive(window: float) -> float:
    """Seconds an idle connection is kept open: a rate window and 5 s more (at least httpx's 5 s).

    A slot is used again a window after its answer's headers, so a connection kept this long
    is still open for the next window's request instead of costing it a new handshake.

    >>> keep_alive(10.0)
    15.0
    """
    return max(5.0, float(window) + 5.0)


def _what_failed(exc: HTTPError, lib: ModuleType) -> str:
    name = type(exc).__name__
    if isinstance(exc, lib.TimeoutException):
        return f"timed out ({name})"
    if isinstance(exc, lib.DecodingError):
        return f"the body could not be decoded ({name})"
    return unanswered(exc)


class Wire:
    """Sends one request at a time (from any number of threads) to the service.

    Args:
        api_key: the token (a text; whitespace around it is dropped, see :func:`clean_token`;
            held in a :class:`Secret`).
        base_url: the service's base address, or None (then :meth:`send` refuses).
        limiter: the rate limiter every attempt takes a slot of.
        http_client: an ``httpx2.Client`` or ``httpx.Client`` to send with (sent through its own library, see
            :func:`~storeframes.wire.http.library_of`); one with ``timeout`` is made when None.
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
            reuses them instead of opening (and, on https, shaking hands) again. An idle
            connection is kept :func:`keep_alive` seconds, past a whole rate window: httpx's
            5 s would close them all between windows of 10 s, and each request of the next
            window would hold its slot through a new handshake.
    """

    def __init__(
        self,
        api_key: str | Secret,
        base_url: str | None,
        *,
        limiter: Limiter,
        http_client: HttpClient | None = None,
        timeout: float | Timeout | None = 30.0,
        max_tries: int = 5,
        backoff: tuple[float, float] = (0.5, 30.0),
        deadline: float | None = DEFAULT_DEADLINE,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        clock: Callable[[], datetime],
        connections: int = 20,
    ):
        self._secret = api_key if isinstance(api_key, Secret) else Secret(clean_token(api_key))
        del api_key  # no local of a construction that fails below shows the token
        self.base_url = check_base_url(base_url) if base_url else None
        self._send_to: str | None = None
        basic: Secret | None = None
        if self.base_url:
            self._send_to, basic = without_user_info(self.base_url)
        guard_logs()
        if not _whole(max_tries) or max_tries < 1:
            raise ConfigurationError(f"max_tries must be a whole number >= 1, got {max_tries!r}")
        if (
            not isinstance(backoff, (tuple, list))
            or len(backoff) != 2
            or not all(_number(b) and b >= 0 for b in backoff)
        ):
            raise ConfigurationError(f"backoff must be (first, most), two numbers of seconds >= 0, got {backoff!r}")
        from .http import lib as in_use
        from .http import library_of

        lib: ModuleType = in_use if http_client is None else library_of(http_client)
        seconds = timeout is None or isinstance(timeout, lib.Timeout) or (_number(timeout) and timeout > 0)  # type: ignore[operator]
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
        self._lib = lib
        self._auth = _token_auth(lib)(self._secret, basic)
        self.http: HttpClient = http_client or lib.Client(
            timeout=timeout,
            follow_redirects=False,
            limits=lib.Limits(
                max_connections=max(100, kept),
                max_keepalive_connections=kept,
                keepalive_expiry=keep_alive(limiter.window),
            ),
        )
        self._timeout: Any = lib.USE_CLIENT_DEFAULT  # the client's own, unless the deadline is shorter
        if self.deadline is not None and _within(self.http.timeout, self.deadline, lib) != self.http.timeout:
            self._timeout = _within(self.http.timeout, self.deadline, lib)
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
            raise ConfigurationError("the http_client is closed: give the Client an open httpx2.Client or httpx.Client")
        hint = "(or use storeframes.sandbox.client() / storeframes.configure(sandbox=True))"
        if not self.base_url:
            raise ConfigurationError(f"no base URL: set $STOREFRAMES_BASE_URL or pass base_url= {hint}")
        if not self._secret:
            raise ConfigurationError(f"no API token: set $STOREFRAMES_API_KEY or pass api_key= {hint}")

    # -- one request ---------------------------------------------------------------

    def send(
        self,
        ep: Endpoint,
        params: Mapping[str, str],
        *,
        report: Report,
        before: Callable[[], None] | None = None,
    ) -> Response:
        """Send one request with retries; every attempt goes to ``report``.

        ``before`` is called right before each attempt is sent, once its slot of the window
        is held (the leases' fence: it raises when the caller may no longer send).
        """
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
                response = self._attempt(ep, dict(params), attempt.retry_state.attempt_number, report, before)
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

    def _attempt(
        self, ep: Endpoint, params: dict[str, str], attempt: int, report: Report, before: Callable[[], None] | None
    ) -> Response:
        """One attempt. Errors are raised outside any ``except`` block, so none carries the library's
        exception (whose frames hold the request as it was sent) as its ``__context__``."""
        lib = self._lib
        url = f"{self._send_to}{ep.path}"  # without user info: it goes as basic authentication, never logged
        fault: str | None = None  # no complete answer: retried
        unsendable: str | None = None  # the HTTP library cannot build the URL
        closed = False
        too_large: _TooLarge | None = None
        answered: list[int] = []  # the status, once the answer's headers arrived
        status, headers, body_bytes = 0, lib.Headers(), b""
        elapsed = 0.0
        try:  # built before the slot is taken: nothing but the sending between the grant and the send
            request = self.http.build_request("GET", url, params=params, headers=self._headers, timeout=self._timeout)
        except lib.InvalidURL as exc:
            unsendable = str(exc)[:200]
        if unsendable is None:
            limiter = self.limiter
            limiter.acquire()
            held = [True]

            def free() -> None:  # the slot is dated when the answer's headers arrive (or the attempt ends)
                if held:
                    held.clear()
                    limiter.release()

            try:
                if before is not None:
                    before()
                started = time.perf_counter()
                with self._lock:
                    self.requests_sent += 1
                try:
                    status, headers, body_bytes = self._exchange(request, started, answered, free)
                except lib.HTTPError as exc:
                    fault = _what_failed(exc, lib)
                except _Fault as exc:
                    fault = str(exc)
                except _TooLarge as exc:
                    too_large = exc
                except lib.InvalidURL as exc:
                    unsendable = str(exc)[:200]
                except RuntimeError:  # the library: "the client has been closed", by another thread meanwhile
                    if not self.http.is_closed:
                        raise
                    closed = True
                elapsed = time.perf_counter() - started
            finally:
                free()
        if closed:
            self.check_ready()  # raises: says which was closed
        if unsendable is not None:
            raise InvalidParameterError(
                "params", params, f"parameters the HTTP library can send in a URL ({unsendable})", endpoint=ep.name
            )
        if fault is not None:
            if answered == [200]:  # an answer began, and may have been charged: its estimate counts
                report(Attempt(ep.name, params, 200, 0, 0, attempt, elapsed, fault, cost_unknown=True, retried=True))
                fault = f"the answer was cut short: {fault}; {_MAY_HAVE_COST}"
            else:
                report(Attempt(ep.name, params, None, 0, 0, attempt, elapsed, fault, retried=True))
            raise TransportError(fault, path=ep.path, attempts=attempt)
        if too_large is not None:
            status = too_large.status
            charged = status == 200  # an answer was sent, and maybe charged: its cost is unknown
            report(Attempt(ep.name, params, status, 0, 0, attempt, elapsed, "too large", cost_unknown=charged))
            raise ResponseTooLargeError(limit=self.max_body_bytes, path=ep.path, announced=too_large.announced)
        return self._read(ep, params, url, status, headers, body_bytes, attempt, elapsed, report)

    def _exchange(
        self, request: Request, started: float, answered: list[int], free: Callable[[], None]
    ) -> tuple[int, Headers, bytes]:
        """Send the request and read its body: (status, headers, body), never following a redirect.

        The status goes to ``answered`` as soon as the headers arrive, so a body that never
        arrives whole is known to belong to an answer, maybe a charged one. ``free`` releases
        the request's slot of the rate window then: the service counted the request when it
        arrived, before it sent a header, so the slot is dated by the headers and not by the
        body's last byte (a large or slow body holds no slot)."""
        response = self.http.send(request, auth=self._auth, follow_redirects=False, stream=True)
        answered.append(response.status_code)
        free()
        try:
            if 300 <= response.status_code < 400:  # never read, never followed
                return response.status_code, response.headers, b""
            return response.status_code, response.headers, self._body(response, started)
        finally:
            response.close()

    def _body(self, response: HttpResponse, started: float) -> bytes:
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
        headers: Headers,
        body_bytes: bytes,
        attempt: int,
        elapsed: float,
        report: Report,
    ) -> Response:
        # a history in its usual form is read straight into columns: its result is parsed only if asked for
        body, unreadable, columns = _read_body(ep.name, http_status, body_bytes)
        if unreadable == "incomplete":  # a 200 that is not JSON or is JSON cut short: maybe charged
            report(
                Attempt(
                    ep.name, params, 200, 0, 0, attempt, elapsed, "incomplete body", cost_unknown=True, retried=True
                )
            )
            raise TransportError(f"incomplete body: not valid JSON; {_MAY_HAVE_COST}", path=ep.path, attempts=attempt)
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
        absurd = cost is not None and cost > MOST_CREDITS  # charged, but past counting: the estimate counts
        if absurd:
            cost = None
        # an answer must say what it cost; an error may say nothing (it is free), but not nonsense
        cost_unknown = cost is None and (status == 200 or given is not _MISSING)
        max_given = meta.get("max_credit_cost") if meta is not None else None
        max_cost = _credits(max_given)
        if max_cost is not None and max_cost > MOST_CREDITS:
            max_cost = None
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
        if absurd and status == 200:  # the answer was delivered and charged: kept, so it is not paid again
            estimate = ep.estimate(params)
            warn(
                f"{ep.name} reported a cost of {repr(given)[:80]} credits, more than any answer costs "
                f"(at most {MOST_CREDITS:,} are counted): the answer is kept, and its cost is counted as the "
                f"request's estimate, {plural(estimate, 'credit')}, marked cost_estimated in the ledger",
                CostWarning,
            )
            return self._envelope(ep, params, body, estimate, max_cost, attempt, body_bytes)
        if cost_unknown and (status != 200 or meta is not None):
            shown = "nothing" if given is _MISSING else repr(given)[:80]
            raise ResponseShapeError(
                f"expected the credits charged, a whole number >= 0, got {shown} "
                "(the request's estimated cost is counted as spent)",
                path="metadata.request.cost",
                endpoint=ep.name,
            )
        if status != 200:
            if columns is not None:  # an error says what it is in its result too
                body = parse_answer(body_bytes)
            raise self._error(ep, params, url, status, body, body_bytes, headers, attempt)
        response = self._envelope(ep, params, body, cost or 0, max_cost, attempt, body_bytes, columns)
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
        headers: Headers,
        attempt: int,
    ) -> ApiError:
        code, message = _error_details(body)
        text = message or (body_bytes[:200].decode("utf-8", "replace") if body is None else f"status {status}")
        cls = _error_class(status, code)
        kwargs: dict[str, Any] = {"code": code, "path": ep.path, "params": params, "attempts": attempt}
        if cls is RedirectError:
            location = headers.get("location")
            try:
                target = shown_url(self._lib.URL(url).join(location)) if location else None
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
        columns: HistoryColumns | None = None,
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
            columns=columns,
        )
