"""The exceptions of storeframes: one small hierarchy under :class:`StoreframesError`.

Every exception carries what a user needs to act on it (status, error code, path,
parameters, retry-after) and never the API token: messages are built from the
request path and its query parameters, and the token travels only in a header.

::

    StoreframesError
    ├── ConfigurationError (ValueError)      no token, bad token, no base URL, plain-http URL, closed client
    ├── InvalidParameterError (ValueError)   refused before any request
    ├── BudgetExceededError                  refused before sending
    ├── NotCachedError                       offline (or refresh="never") and the cache misses
    ├── ResponseShapeError                   the body is not the documented envelope (or its cost is unreadable)
    ├── ResponseTooLargeError                the body passed ``max_body_bytes`` (never retried)
    ├── TransportError                       timeouts, the deadline, dropped connections, undecodable
    │                                        bodies, after retries
    └── ApiError                             the service answered with an error
        ├── RedirectError                    3xx: never followed (the token stays with base_url)
        ├── AuthenticationError              401
        ├── ForbiddenError                   403
        │   ├── NotEnoughCreditsError
        │   └── EstimatesNotInPlanError
        ├── ServiceValidationError           422
        │   └── AppNotAvailableError
        ├── RateLimitError                   429 (``retry_after``)
        └── ServerError                      5xx (``retry_after``)

    AppsUnavailableWarning (UserWarning)     some apps of a call are not sold in its country
    AnswerWarning (UserWarning)              an answer held apps nobody asked for, or left asked ones out
    CostWarning (UserWarning)                the service charged more than its own ``max_credit_cost``

Any of them that stops a call half-way carries ``partial``: the responses the call had
already received (they are in the cache too, so calling again sends only the rest).

Every warning of the package goes through :func:`~storeframes.call_warnings.warn`
(:mod:`storeframes.call_warnings`), which points it at the user's line.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from datetime import date
from typing import Any

# the package's warnings, taken from here by its modules as before (:mod:`storeframes.call_warnings`)
from .call_warnings import CallWarnings as CallWarnings
from .call_warnings import carry as carry
from .call_warnings import held_warnings as held_warnings
from .call_warnings import user_stacklevel as user_stacklevel
from .call_warnings import warn as warn

__all__ = [
    "AnswerWarning",
    "ApiError",
    "AppNotAvailableError",
    "AppsUnavailableWarning",
    "AuthenticationError",
    "BudgetExceededError",
    "CacheUnavailableError",
    "ConfigurationError",
    "CoordinationError",
    "CoordinationMismatchError",
    "CostWarning",
    "DigestNotKeptError",
    "EstimatesNotInPlanError",
    "ForbiddenError",
    "ForkedProcessError",
    "InvalidParameterError",
    "LakeError",
    "NoCacheError",
    "NotCachedError",
    "NotEnoughCreditsError",
    "RateLimitError",
    "RedirectError",
    "ResponseShapeError",
    "ResponseTooLargeError",
    "ServerError",
    "ServiceValidationError",
    "StoreframesError",
    "TransportError",
]


def plural(count: int, word: str, words: str | None = None) -> str:
    """``count`` and ``word``, in the plural unless it is one: ``"1 request"``, ``"3 apps"``, ``"1,200 credits"``.

    ``words`` is the plural where adding an ``s`` is wrong.
    """
    return f"{count:,} {word if count == 1 else words or word + 's'}"


def cut(text: str, most: int) -> str:
    """``text``, cut to ``most`` characters with an ellipsis when it is longer."""
    return text if len(text) <= most else text[: most - 1] + "…"


def shown_when_half_built(method: Callable[[Any], str]) -> Callable[[Any], str]:
    """A ``__repr__`` that names an object whose construction failed, instead of raising.

    A traceback shown with its locals (``pytest -l``, an error tracker, ``traceback`` with
    ``capture_locals=True``) calls ``repr`` on the ``self`` of a constructor that raised: a repr
    that raises there hides the first error behind an ``AttributeError``.
    """

    @functools.wraps(method)
    def shown(self: Any) -> str:
        try:
            return method(self)
        except AttributeError:
            return f"{type(self).__name__}(not built)"

    return shown


def html_table(caption: str, header: Sequence[str], rows: Sequence[Sequence[Any]], *, more: int = 0) -> str:
    """A small HTML table for a notebook: every text escaped, whole numbers with thousands separators.

    ``more`` says how many rows were left out (a last line names them).
    """
    from html import escape

    def cell(value: Any) -> str:
        if isinstance(value, int) and not isinstance(value, bool):
            return f'<td style="text-align:right">{value:,}</td>'
        return f"<td>{escape(str(value))}</td>"

    head = "".join(f"<th>{escape(name)}</th>" for name in header)
    body = "".join(f"<tr>{''.join(cell(v) for v in row)}</tr>" for row in rows)
    if more:
        body += f'<tr><td colspan="{len(header)}">… and {escape(plural(more, "more row", "more rows"))}</td></tr>'
    return f"<table><caption>{escape(caption)}</caption><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


class StoreframesError(Exception):
    """Base class of every error raised by storeframes.

    Attributes:
        partial: when the error stopped a call half-way, the
            :class:`~storeframes.Response` objects of the requests that had succeeded
            (they are in the cache too); empty otherwise.
    """

    partial: Sequence[Any] = ()


class AppsUnavailableWarning(UserWarning):
    """Some apps of a call are not available in the requested country; the rest were fetched."""


class AnswerWarning(UserWarning):
    """A successful answer was not quite what was asked: it held apps nobody asked for (left out of
    every frame and the cache), or left out apps that were asked for (not cached, so the next call
    asks for them again)."""


class CostWarning(UserWarning):
    """An answer reported a ``cost`` above its own ``max_credit_cost`` (it is counted as reported), or one
    past counting (above :data:`~storeframes.ledger.MOST_CREDITS`: the answer is kept, and the request's
    estimate is counted, marked ``cost_estimated``)."""


class ConfigurationError(StoreframesError, ValueError):
    """The client is not set up to send a request (no token, a token with a control or non-ASCII
    character, no base URL, plain http, or the client is closed)."""


class ForkedProcessError(ConfigurationError):
    """storeframes was called in a process forked (``os.fork``, or ``multiprocessing`` with the
    ``"fork"`` start method) from one that had already used it: polars' thread pool, the client's
    connections, threads and window do not survive a fork, so a call could pay and then hang.
    Refused before anything is sent; the message names the fix (the ``"spawn"`` or
    ``"forkserver"`` start method)."""


class CacheUnavailableError(StoreframesError):
    """The cache cannot be used: its folder or bucket cannot be created, read or written (a mistyped
    bucket, missing credentials, a read-only folder). Raised before any credit is spent, or, when the
    store fails in the middle of a call, after the requests in flight instead of paying on.

    Attributes:
        location: the cache's folder or address, for people (never with credentials).
        operation: what was tried, for example ``"write"``.
    """

    def __init__(self, message: str, *, location: str = "", operation: str = ""):
        self.location = location
        self.operation = operation
        super().__init__(message)


class NoCacheError(CacheUnavailableError):
    """A read of a cache (:func:`~storeframes.scan`, :func:`~storeframes.snapshots`, :func:`~storeframes.sql`,
    :func:`~storeframes.publish`'s source, ``storeframes mcp --cache-dir`` ...) found no cache there: the
    folder does not exist (or holds other things), the bucket prefix holds no storeframes cache. Never
    read as an empty cache, which a mistyped path would otherwise look like. The message names the
    place and how a cache is made.

    Attributes:
        location: the folder or address read, for people (never with credentials).
        operation: the read, for example ``"scan"``.
    """


class LakeError(StoreframesError):
    """A team table of a lake (:func:`~storeframes.publish`, :func:`~storeframes.read_table`) cannot be written or
    read: its bucket does not exist, no credentials were found or they were refused, the endpoint cannot be
    reached, its files cannot be read or written, or other publishers kept committing first. The message names
    the lake, the table and the cause in words (never a credential, never the storage library's own text).

    Attributes:
        lake: the lake's folder or address, for people (never with credentials).
        table: the table's name, for example ``"metrics"``.
        operation: what was tried, ``"publish"`` or ``"read_table"``.
    """

    def __init__(self, message: str, *, lake: str = "", table: str = "", operation: str = ""):
        self.lake = lake
        self.table = table
        self.operation = operation
        super().__init__(message)


class CoordinationError(StoreframesError):
    """The coordination of a team's members failed or disagrees: the shared rate window or the leases
    cannot be reached (Redis down, a wrong password, a damaged window file), or a member is configured
    differently from the rest of its team. The message names the setting to look at."""


class CoordinationMismatchError(CoordinationError):
    """A member is about to fetch into a shared cache whose team coordinates differently: another
    coordinator (Redis, or none), another Redis server. Raised before anything is sent, since the
    member's requests would count in a window of their own and its leases would be invisible to the
    team (the limit tripped, cells paid twice). Reading what is cached (offline) needs no agreement.

    Attributes:
        location: the cache's folder or address, for people (never with credentials).
        team: the team's coordination, as recorded in the cache (never a secret).
        member: this member's coordination, said the same way.
    """

    def __init__(self, message: str, *, location: str = "", team: str = "", member: str = ""):
        self.location = location
        self.team = team
        self.member = member
        super().__init__(message)


def shown_value(value: Any, most: int = 80) -> str:
    """``repr(value)`` for messages, cut in its middle to about ``most`` characters (a path keeps its file's name)."""
    text = repr(value)
    if len(text) <= most:
        return text
    size = f" ({len(value):,} characters)" if isinstance(value, (str, bytes)) else ""
    tail = (most - 10) // 2
    return f"{text[: most - 10 - tail]}...{text[-tail:]}{size}"


class InvalidParameterError(StoreframesError, ValueError):
    """A parameter was refused before any request was sent.

    Attributes:
        parameter: the parameter's name, for example ``"channel"``.
        value: the value that was given.
        allowed: a description of what is allowed.
    """

    def __init__(self, parameter: str, value: Any, allowed: str, *, endpoint: str | None = None):
        self.parameter = parameter
        self.value = value
        self.allowed = allowed
        self.endpoint = endpoint
        where = f" for {endpoint}" if endpoint else ""
        super().__init__(f"invalid {parameter}={shown_value(value)}{where}: {allowed}")


class NotCachedError(StoreframesError):
    """The cache cannot answer a call and the client may not fetch (offline or ``refresh="never"``).

    Attributes:
        endpoint: the endpoint's name.
        requests: the canonical parameters of each request that would be sent.
        estimate: their estimated maximum cost in credits.
    """

    def __init__(self, endpoint: str, requests: Sequence[Mapping[str, str]], estimate: int, *, reason: str):
        self.endpoint = endpoint
        self.requests = [dict(r) for r in requests]
        self.estimate = estimate
        shown = "\n".join(f"  {endpoint} {_query(r)}" for r in self.requests[:10])
        more = f"\n  ... and {len(self.requests) - 10} more" if len(self.requests) > 10 else ""
        super().__init__(
            f"{reason}: the cache lacks {plural(len(self.requests), 'request')} of {endpoint}, "
            f"estimated at most {plural(estimate, 'credit')}:\n{shown}{more}"
        )


class DigestNotKeptError(StoreframesError):
    """A tracker's cache keeps no digest of the day asked for: no run finished that day's work there.

    Attributes:
        tracker: the tracker's name.
        day: the day asked for.
        kept: the days whose digest the cache keeps.
    """

    def __init__(self, tracker: str, day: date, kept: Sequence[date], *, location: str):
        self.tracker = tracker
        self.day = day
        self.kept = list(kept)
        shown = ", ".join(str(d) for d in self.kept[-5:]) or "none"
        super().__init__(
            f"no digest of {day} is kept for tracker {tracker!r} in the cache at {location}: no run of that "
            f"day finished its work there (days with a digest, the last five: {shown}; a run keeps one when "
            f"the spec has [[alert]] rules or a [notify] digest); 'storeframes track digest SPEC --start {day}' "
            "renders one from what the cache keeps"
        )


def _query(params: Mapping[str, str]) -> str:
    return "&".join(f"{k}={v}" for k, v in params.items())


class BudgetExceededError(StoreframesError):
    """Sending the request could take the credits spent past the client's budget.

    ``attempts`` is 0 when nothing of the request was sent, else the attempts already sent
    (their credits, charged or maybe charged, are in ``spent``): another is not sent.
    """

    def __init__(
        self,
        *,
        spent: int,
        reserved: int,
        estimate: int,
        budget: int,
        endpoint: str,
        attempts: int = 0,
        whose: str | None = None,
    ):
        self.spent = spent
        self.reserved = reserved
        self.estimate = estimate
        self.budget = budget
        self.endpoint = endpoint
        self.attempts = attempts
        self.whose = whose or "the client's budget"
        """Whose budget it is, in words: ``"the client's budget"``, or a workspace's month budget
        (``"the month budget of workspace acme (2026-11)"``)."""
        self.left = max(0, budget - spent - reserved)
        """The credits left of that budget (what is reserved by requests in flight counted as spent)."""
        pending = f" (+{reserved:,} reserved by requests in flight)" if reserved else ""
        what, outcome = endpoint, "nothing was sent"
        if attempts:
            what = f"another attempt at {endpoint}"
            outcome = f"it is not tried again after {plural(attempts, 'attempt')} (counted in what was spent)"
        if whose is None:
            said = f"{spent:,} already spent{pending}, budget is {budget:,}"
        else:
            said = f"and {self.left:,} are left of {whose}: {spent:,} of {budget:,} spent{pending}"
        super().__init__(f"budget exceeded: {what} could cost up to {plural(estimate, 'credit')}, {said}; {outcome}")


class ResponseShapeError(StoreframesError):
    """A body does not have the documented shape; ``path`` names where it differs."""

    def __init__(self, message: str, *, path: str = "", endpoint: str | None = None):
        self.path = path
        self.endpoint = endpoint
        where = f" at {path}" if path else ""
        super().__init__(f"unexpected response shape{where}: {message}")


class ResponseTooLargeError(StoreframesError):
    """A body passed the client's ``max_body_bytes`` (decoded bytes, counted as they arrive).

    It is not retried: the same request would get the same body. ``limit`` is the cap in
    bytes; build the client with a larger ``max_body_bytes=`` to accept such a body.
    """

    def __init__(self, *, limit: int, path: str = "", announced: int | None = None):
        self.limit = limit
        self.path = path
        self.announced = announced
        size = f"announced {announced:,} bytes, " if announced is not None else ""
        super().__init__(
            f"the answer to {path} is larger than the client accepts ({size}the cap is {limit:,} bytes); "
            f"build the client with a larger max_body_bytes= to accept it"
        )


class TransportError(StoreframesError):
    """The request never got a complete answer (timeout, the deadline, dropped connection, a body
    that could not be decoded), after retries."""

    def __init__(self, message: str, *, path: str = "", attempts: int = 1):
        self.path = path
        self.attempts = attempts
        super().__init__(f"{message} ({path}, {attempts} attempt{'s' if attempts != 1 else ''})")


class ApiError(StoreframesError):
    """The service answered with an error status.

    Attributes:
        status: the HTTP (or envelope) status.
        code: the service's error code, for example ``"NotEnoughCreditsError"``, or None.
        message: the service's message, or a description of the status.
        path: the request path.
        params: the request's query parameters (never the token).
        attempts: how many times the request was sent.
    """

    def __init__(
        self,
        status: int,
        message: str,
        *,
        code: str | None = None,
        path: str = "",
        params: Mapping[str, Any] | None = None,
        attempts: int = 1,
    ):
        self.status = status
        self.code = code
        self.message = message
        self.path = path
        self.params = dict(params or {})
        self.attempts = attempts
        label = f"{status} {code}" if code else str(status)
        super().__init__(f"{label}: {message} ({path})")


class AuthenticationError(ApiError):
    """401: the token is missing or unknown."""


class ForbiddenError(ApiError):
    """403: the plan does not allow this request."""


class NotEnoughCreditsError(ForbiddenError):
    """403: the account has run out of credits."""


class EstimatesNotInPlanError(ForbiddenError):
    """403: downloads and revenues estimates are not part of the plan."""


class ServiceValidationError(ApiError):
    """422: the service refused the parameters."""


class AppNotAvailableError(ServiceValidationError):
    """422: an app of the request is not available in the requested country.

    ``apps`` lists the ids of the request that failed.
    """

    def __init__(self, *args: Any, apps: Sequence[str] = (), **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.apps = tuple(apps)


class RedirectError(ApiError):
    """3xx: the service answered with a redirect, which is never followed.

    Following it would send the token to wherever the redirect points, so no redirect is
    followed, even by an ``http_client`` built with ``follow_redirects=True``; it is not
    retried. ``location`` is the redirect's target as it may be shown (user info and query
    masked, see :func:`storeframes.wire.shown_url`), or None when the answer named none.
    """

    def __init__(self, *args: Any, location: str | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.location = location


class RateLimitError(ApiError):
    """429: too many requests; ``retry_after`` is the server's hint in seconds, or None.

    A hint longer than the client would wait fails at once (with ``retry_after`` set).
    """

    def __init__(self, *args: Any, retry_after: float | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.retry_after = retry_after


class ServerError(ApiError):
    """5xx: the service failed; ``retry_after`` is the server's hint in seconds (503), or None."""

    def __init__(self, *args: Any, retry_after: float | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.retry_after = retry_after
